"""Operation names, and the families that promotion rules are written for.

Every spelling (torch's ``sub``, numpy's ``subtract``, Python's ``-``) resolves to one canonical
name; rules are written per family:

======================  ==============================================================
family                  canonical names
======================  ==============================================================
``add``                 add
``sub``                 sub
``mul``                 mul
``div``                 div (true division)
``floor_divide``        floor_divide
``remainder``           remainder
``pow``                 pow
``equality``            eq, ne
``ordering``            lt, le, gt, ge
``bitwise``             bitwise_and, bitwise_or, bitwise_xor
``logical``             logical_and, logical_or, logical_xor
======================  ==============================================================

>>> canonical_op("subtract"), canonical_op("**"), family("greater_equal")
('sub', 'pow', 'ordering')
"""

from __future__ import annotations

import difflib

__all__ = ["canonical_op", "family", "OPS", "COMPARISONS"]

#: canonical name -> family
OPS = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "div", "floor_divide": "floor_divide",
    "remainder": "remainder", "pow": "pow",
    "eq": "equality", "ne": "equality",
    "lt": "ordering", "le": "ordering", "gt": "ordering", "ge": "ordering",
    "bitwise_and": "bitwise", "bitwise_or": "bitwise", "bitwise_xor": "bitwise",
    "logical_and": "logical", "logical_or": "logical", "logical_xor": "logical",
}

_ALIASES = {
    "+": "add", "-": "sub", "subtract": "sub", "*": "mul", "multiply": "mul",
    "/": "div", "divide": "div", "true_divide": "div", "truediv": "div",
    "//": "floor_divide", "floordiv": "floor_divide", "%": "remainder", "mod": "remainder",
    "**": "pow", "power": "pow",
    "==": "eq", "equal": "eq", "!=": "ne", "not_equal": "ne",
    "<": "lt", "less": "lt", "<=": "le", "less_equal": "le",
    ">": "gt", "greater": "gt", ">=": "ge", "greater_equal": "ge",
    "&": "bitwise_and", "and_": "bitwise_and", "|": "bitwise_or", "or_": "bitwise_or",
    "^": "bitwise_xor", "xor": "bitwise_xor",
}

#: families whose output is bool whatever the inputs
COMPARISONS = ("equality", "ordering", "logical")


def canonical_op(op: str | None) -> str | None:
    """The canonical name of an operation (``None`` stays ``None``: plain promotion).

    A trailing underscore (torch's in-place spelling, ``add_``) is accepted and dropped.

    >>> canonical_op("mutliply")
    Traceback (most recent call last):
    ...
    ValueError: unknown operation 'mutliply'; close matches: multiply. Known: add, sub, mul, div, floor_divide, remainder, pow, eq, ne, lt, le, gt, ge, bitwise_and, bitwise_or, bitwise_xor, logical_and, logical_or, logical_xor (or None for plain promotion).
    """
    if op is None:
        return None
    key = str(op).strip().lower()
    if key.endswith("_") and (key[:-1] in OPS or key[:-1] in _ALIASES):
        key = key[:-1]
    if key in OPS:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(OPS) + [a for a in _ALIASES if a.isalpha()], 3)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise ValueError(f"unknown operation {op!r}{hint}. Known: {', '.join(OPS)} "
                     f"(or None for plain promotion).")


def family(op: str | None) -> str | None:
    """The rule family of an operation name (any spelling)."""
    name = canonical_op(op)
    return None if name is None else OPS[name]
