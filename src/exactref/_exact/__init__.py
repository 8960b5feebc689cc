"""The exact core: exact values, exact sums of products, correct rounding (private).

Public names are re-exported by :mod:`exactref`; the pieces live in

* :mod:`._rounding`: the :class:`Rounding` modes and overflow rules;
* :mod:`._scalar`: the slow, obviously correct scalar path (oracle and fallback);
* :mod:`._round`: vectorized correct rounding of exact values into any float format;
* :mod:`._engine`: operands, exact sums of products (:func:`sum_of_products`), ``ExactArray``;
* :mod:`._values`: the scalar value types :class:`FloatValue` and :class:`ComplexValue`.
"""

from ._engine import ExactArray, Operand, sum_of_products
from ._rounding import Rounding, resolve_overflow, resolve_rounding

__all__ = ["ExactArray", "Operand", "Rounding", "resolve_overflow", "resolve_rounding",
           "sum_of_products"]
