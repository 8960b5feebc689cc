"""exactref: exact, once-rounded references for numerical kernels, and honest tolerances.

>>> import exactref as er
>>> er.asarray([0.1, 0.5], "bfloat16").tolist()
[0.10009765625, 0.5]
"""

from ._array import Array, Rounded, asarray, round_to
from ._exact import Rounding
from ._exact._values import ComplexValue, FloatValue
from ._formats import FORMATS, Format, dtype
from ._result import AnyOf, Coverage, Result, any_of
from .arithmetic import add, multiply
from .promotion import PromotionError, Scalar, can_cast, promote_types, result_type

__version__ = "0.1.0"

__all__ = ["AnyOf", "Array", "ComplexValue", "Coverage", "FORMATS", "FloatValue", "Format",
           "PromotionError", "Result", "Rounded", "Rounding", "Scalar", "add", "any_of",
           "asarray", "can_cast", "dtype", "multiply", "promote_types", "result_type",
           "round_to"]
