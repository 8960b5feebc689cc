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
* :mod:`._functions`: real functions (exp, tanh, erf, sigmoid, gelu, ...) and their
  derivatives, rounded to odd at two bits beyond the output by MPFR; tables for the formats of
  at most 16 bits, cached on disk;
* :mod:`._values`: the scalar value types :class:`FloatValue` and :class:`ComplexValue`.

Other packages import these names from here, not from the private modules.
"""

from ._algebraic import decide, integral, quotient, root, signs
from ._bands import EXTRA_BITS as BAND_EXTRA_BITS
from ._bands import OPEN_ULPS as BAND_OPEN_ULPS
from ._bands import band_ends, normwise_ends, ulp_of
from ._complex_functions import COMPLEX_FUNCTIONS, evaluate_complex
from ._engine import ExactArray, Operand, sum_of_products, two_product, two_sum
from ._functions import DERIVATIVES, FUNCTIONS, function_table
from ._functions import _patterns as table_patterns
from ._functions import evaluate as function_values
from ._functions import gradient as function_gradient
from ._longsum import (
    int_matmul_exact,
    int_rowsum_exact,
    matmul_exact,
    matmul_operand,
    rowsum_exact,
)
from ._round import fast_eligible, round_float64
from ._rounding import FLOAT_OVERFLOW, INT_OVERFLOW, Rounding, resolve_overflow, resolve_rounding
from ._scalar import NAN, round_scalar, round_to_integer
from ._specials import special_values
from ._values import ComplexValue, FloatValue

__all__ = ["BAND_EXTRA_BITS", "BAND_OPEN_ULPS", "COMPLEX_FUNCTIONS", "ComplexValue", "DERIVATIVES", "ExactArray", "FLOAT_OVERFLOW", "FUNCTIONS",
           "FloatValue", "INT_OVERFLOW", "NAN", "Operand", "Rounding", "band_ends", "decide", "evaluate_complex",
           "fast_eligible", "function_gradient", "function_table", "function_values",
           "int_matmul_exact", "normwise_ends",
           "int_rowsum_exact", "integral", "matmul_exact", "matmul_operand", "quotient",
           "resolve_overflow", "resolve_rounding", "root", "round_float64", "round_scalar",
           "round_to_integer", "rowsum_exact", "signs", "special_values", "sum_of_products",
           "table_patterns", "two_product", "two_sum", "ulp_of"]
