"""The exact core: exact values, exact sums of products, quotients and roots, correct rounding
(private).

Public names are re-exported by :mod:`exactref`; the pieces live in

* :mod:`._rounding`: the :class:`Rounding` modes and overflow rules;
* :mod:`._specials`: what NaN, infinities, zeros and overflow become in each format;
* :mod:`._scalar`: the slow, obviously correct scalar path (oracle and fallback);
* :mod:`._round`: vectorized correct rounding of exact values into any float format;
* :mod:`._engine`: operands, exact sums of products (:func:`sum_of_products`), ``ExactArray``;
* :mod:`._algebraic`: quotients and roots of such sums, decided by exact comparisons, and the
  integer part of exact values;
* :mod:`._longsum`: long exact sums (matmul, reductions) on BLAS;
* :mod:`._bands`: the numbers of a format within ``k`` ulps of an exact function value (the
  accuracy models of real libraries);
* :mod:`._complex_functions`: complex exp, log, sin, tanh, pow, ... through MPC, each part
  rounded to odd;
* :mod:`._mpfr`: the MPFR layer the function and row kernels share (round-to-odd values,
  interval arithmetic, Ziv's strategy);
* :mod:`._functions`: real functions (exp, tanh, erf, sigmoid, gelu, ...) as records
  (:class:`RealFunction`, an op's ``OpSpec.exact``), rounded to odd at two bits beyond the
  output by MPFR; tables for the formats of at most 16 bits, cached on disk (:mod:`._fncache`);
* :mod:`._derivatives`: their derivatives and pow's partials (an op's ``OpSpec.derivative``);
* :mod:`._values`: the scalar value types :class:`FloatValue` and :class:`ComplexValue`.

Other packages import these names from here, not from the private modules.
"""

from ._algebraic import decide, integral, isqrt_scaled, quotient, root, signs
from ._bands import EXTRA_BITS as BAND_EXTRA_BITS
from ._bands import OPEN_ULPS as BAND_OPEN_ULPS
from ._bands import band_ends, lane_candidates, normwise_ends, ulp, ulp_of
from ._complex_functions import COMPLEX, ComplexFunction, evaluate_complex, mpc_function
from ._derivatives import DERIVATIVES, POW_PARTIALS, Derivative, Partials, root_derivative
from ._derivatives import gradient as function_gradient
from ._derivatives import partial as function_partial
from ._engine import ExactArray, ExactPart, sum_of_products, two_product, two_sum
from ._engine import _round_float_to_integer as round_float_to_integer
from ._fncache import patterns as table_patterns
from ._functions import COMPOSITIONS, RealFunction, function_table, mpfr_function
from ._functions import evaluate as function_values
from ._jit import jit, map_chunks  # compiled hot paths (numba where installed)
from ._longsum import (
    from_integers,
    int_matmul_exact,
    int_rowsum_exact,
    int_rowsums,
    matmul_exact,
    matmul_operand,
    prefix_exact,
    put_specials,
    rowsum_exact,
)
from ._mpfr import FAR as MPFR_FAR
from ._mpfr import W0 as ZIV_W0
from ._mpfr import W_MAX as ZIV_W_MAX
from ._mpfr import Interval as MpfrInterval
from ._mpfr import Near as NearValue
from ._mpfr import (
    OddValues,
    decide_odd,
    decide_odd_strict,
    far_value,
    from_binaries,
    from_objects,
    gmpy2_module,
    put_mpfr,
    round_fraction_odd,
    unique_rows,
    ziv,
)
from ._mpfr import context as mpfr_context
from ._round import fast_eligible, round_float64
from ._rounding import (
    FLOAT_OVERFLOW,
    INT_OVERFLOW,
    Rounding,
    resolve_modes,
    resolve_overflow,
    resolve_rounding,
)
from ._scalar import NAN, round_scalar, round_to_integer
from ._specials import (
    UNDEFINED_PLACEHOLDER,
    fill_undefined,
    integer_overflow,
    special_values,
    undefined,
)
from ._stochastic import MAX_WIDTH as STOCHASTIC_MAX_WIDTH
from ._stochastic import neighbours as stochastic_neighbours
from ._stochastic import split_fraction as stochastic_split
from ._values import ComplexValue, FloatValue
from ._workers import set_workers, workers

__all__ = ["BAND_EXTRA_BITS", "BAND_OPEN_ULPS", "ComplexValue", "DERIVATIVES", "ExactArray", "FLOAT_OVERFLOW",
           "FloatValue", "INT_OVERFLOW", "NAN", "Rounding", "band_ends", "decide", "evaluate_complex",
           "fast_eligible", "function_gradient", "function_table", "function_values",
           "int_matmul_exact", "normwise_ends",
           "int_rowsum_exact", "integral", "matmul_exact", "matmul_operand", "quotient",
           "resolve_modes", "resolve_overflow", "resolve_rounding", "root", "round_float64", "round_scalar",
           "round_to_integer", "rowsum_exact", "signs", "special_values", "sum_of_products",
           "table_patterns", "two_product", "two_sum", "ulp_of"]

# The operand machinery, overflow, the ulp and stochastic rounding's neighbours (issue 20)
__all__ += ["ExactPart", "STOCHASTIC_MAX_WIDTH", "UNDEFINED_PLACEHOLDER", "fill_undefined",
            "integer_overflow", "isqrt_scaled", "stochastic_neighbours", "stochastic_split", "ulp",
            "undefined", "lane_candidates"]
# the real functions' records (an op's OpSpec.exact / .derivative) and the MPFR layer
# (exact round-to-odd values, intervals, Ziv) the function and row kernels share
__all__ += ["COMPLEX", "COMPOSITIONS", "ComplexFunction", "Derivative", "MPFR_FAR", "MpfrInterval",
            "NearValue", "OddValues", "POW_PARTIALS", "Partials", "RealFunction", "ZIV_W0",
            "ZIV_W_MAX", "decide_odd", "decide_odd_strict", "far_value", "from_binaries",
            "from_objects", "function_partial", "gmpy2_module", "mpc_function", "mpfr_context",
            "mpfr_function", "put_mpfr", "root_derivative", "round_fraction_odd", "unique_rows",
            "ziv"]

# the long sums' exact integers and prefix sums (linalg's reductions and norms read them)
__all__ += ["int_rowsums", "prefix_exact", "put_specials", "round_float_to_integer"]

# the row kernels (softmax family, cross-entropy, attention and their backward passes), read
# by exactref.linalg, and the outward float64 toolbox (every rigorous float64 bound)
from ._attention import attention_chunk, enclose_blocks, evaluate_attention  # noqa: E402
from ._attention_backward import evaluate_attention_backward, first_tier  # noqa: E402
from ._cross_entropy import LossRows, evaluate_losses, row_maxima  # noqa: E402
from ._outward import (  # noqa: E402
    MARGIN,
    U64,
    compose_up,
    deflate,
    down,
    gamma_up,
    inflate,
    margin_up,
    pow1m_dn,
    pow1p_m1_up,
    pow1p_up,
    slack_dn,
    slack_up,
    up,
)
from ._softmax import (  # noqa: E402
    LOG_SOFTMAX,
    LOGSUMEXP,
    SOFTMAX,
    LongRow,
    Normalization,
    RowExps,
    evaluate_rows,
)
from ._softmax_backward import evaluate_backward, row_kinds  # noqa: E402

__all__ += ["LOGSUMEXP", "LOG_SOFTMAX", "LongRow", "LossRows", "Normalization", "RowExps",
            "SOFTMAX", "attention_chunk", "enclose_blocks", "evaluate_attention",
            "evaluate_attention_backward", "evaluate_backward", "evaluate_losses",
            "evaluate_rows", "first_tier", "from_integers", "row_kinds", "row_maxima"]
__all__ += ["MARGIN", "U64", "compose_up", "deflate", "down", "gamma_up", "inflate", "margin_up",
            "pow1m_dn", "pow1p_m1_up", "pow1p_up", "slack_dn", "slack_up", "up"]
# the process pool of the exact kernels (exactref.set_workers, exactref.workers)
__all__ += ["set_workers", "workers"]
# the compiled hot paths' decorator and threads (numba lazily, numpy twins without it)
__all__ += ["jit", "map_chunks"]
