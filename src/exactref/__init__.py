"""exactref: exact, once-rounded references for numerical kernels, and honest tolerances.

>>> import exactref as er
>>> er.asarray([0.1, 0.5], "bfloat16").tolist()
[0.10009765625, 0.5]
"""

from ._array import Array, Rounded, asarray, round_to
from ._exact import Rounding
from ._exact._values import ComplexValue, FloatValue
from ._formats import FORMATS, Format, dtype

__version__ = "0.1.0"

__all__ = ["Array", "ComplexValue", "FORMATS", "FloatValue", "Format", "Rounded", "Rounding",
           "asarray", "dtype", "round_to"]
