"""The elementwise ops of exactref: each one declaration on the exact engine.

``exactref.arithmetic.basic`` holds the sums of products (add, subtract, multiply, fma,
addcmul); ``division`` the quotients (divide, floor_divide, remainder, fmod, reciprocal,
addcdiv); ``roots`` sqrt and rsqrt; ``selection`` abs, negative, maximum, minimum, fmax, fmin,
clamp; ``comparison`` equal ... greater_equal; ``conversion`` cast; ``functions`` the real functions
(exp, log, tanh, sigmoid, gelu, erf, ...). Every op is registered in
:mod:`exactref.ops`, and is ``exactref.<name>``.
"""

# Each module's ops (its __all__, the names the registry says it declares).
from ..ops import names_of
from .basic import *  # noqa: F403
from .comparison import *  # noqa: F403
from .conversion import *  # noqa: F403
from .division import *  # noqa: F403
from .functions import *  # noqa: F403
from .roots import *  # noqa: F403
from .selection import *  # noqa: F403

__all__ = [*names_of(__name__)]  # every op of the arithmetic modules

from . import _backward  # noqa: E402, F401  (attaches er.<op>.backward to the ops above)

# What other packages use of arithmetic besides the ops (its face): the accuracy presets of the
# real functions, and the complex formulas on operand parts (linalg's alpha * A @ B).
from ._accuracy import ACCURACY_PRESETS, Preset, resolve_accuracy  # noqa: E402
from ._formulas import mul_parts  # noqa: E402

__all__ += ["ACCURACY_PRESETS", "Preset", "mul_parts", "resolve_accuracy"]
