"""The elementwise ops of exactref: each one declaration on the exact engine.

``exactref.arithmetic.basic`` holds the sums of products (add, subtract, multiply, fma,
addcmul); ``division`` the quotients (divide, floor_divide, remainder, fmod, reciprocal,
addcdiv); ``roots`` sqrt and rsqrt; ``selection`` abs, negative, maximum, minimum, fmax, fmin,
clamp; ``comparison`` equal ... greater_equal; ``conversion`` cast; ``functions`` the real functions
(exp, log, tanh, sigmoid, gelu, erf, ...). Every op is registered in
:mod:`exactref.ops`, and is ``exactref.<name>``.
"""

from .basic import add, addcmul, fma, multiply, subtract
from .comparison import equal, greater, greater_equal, less, less_equal, not_equal
from .conversion import cast
from .division import addcdiv, divide, floor_divide, fmod, reciprocal, remainder
from .functions import (
    acos,
    asin,
    atan,
    atan2,
    cos,
    cosh,
    erf,
    erfc,
    exp,
    exp2,
    expm1,
    gelu,
    log,
    log1p,
    log2,
    log10,
    logit,
    mish,
    pow,  # noqa: A004
    sigmoid,
    silu,
    sin,
    sinh,
    softplus,
    tan,
    tanh,
)
from .roots import rsqrt, sqrt
from .selection import abs, clamp, fmax, fmin, maximum, minimum, negative  # noqa: A004

__all__ = ["abs", "add", "addcdiv", "addcmul", "cast", "clamp", "divide", "equal",
           "floor_divide", "fma", "fmax", "fmin", "fmod", "greater", "greater_equal", "less",
           "less_equal", "maximum", "minimum", "multiply", "negative", "not_equal",
           "reciprocal", "remainder", "rsqrt", "sqrt", "subtract",
           "acos", "asin", "atan", "atan2", "cos", "cosh", "erf", "erfc", "exp", "exp2", "expm1",
           "gelu", "log", "log1p", "log2", "log10", "logit", "mish", "pow", "sigmoid", "silu",
           "sin", "sinh", "softplus", "tan", "tanh"]

from . import _backward  # noqa: E402, F401  (attaches er.<op>.backward to the ops above)
