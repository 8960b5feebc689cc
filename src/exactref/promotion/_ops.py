"""Operation names, their number of operands, and the families that promotion rules are written for.

Every spelling (torch's ``sub``, numpy's ``subtract``, Python's ``-``) resolves to one canonical
name; rules are written per family:

======================  ==============================================================  =====
family                  canonical names                                                 arity
======================  ==============================================================  =====
``add``                 add                                                             2
``sub``                 sub                                                             2
``mul``                 mul                                                             2
``div``                 div (true division)                                             2
``floor_divide``        floor_divide                                                    2
``remainder``           remainder (the sign of the divisor, Python's ``%``)             2
``fmod``                fmod (the sign of the dividend, C's ``fmod``)                   2
``pow``                 pow                                                             2
``equality``            eq, ne                                                          2
``ordering``            lt, le, gt, ge                                                  2
``bitwise``             bitwise_and, bitwise_or, bitwise_xor                            2
``logical``             logical_and, logical_or, logical_xor                            2
``extremum``            maximum, minimum (NaN propagates)                               2
``fextremum``           fmax, fmin (NaN is ignored)                                     2
``float_function2``     atan2 (a real function of two operands: each policy's float     2
                        rule for two inputs; hypot and copysign would join it)
``root``                sqrt, rsqrt (``1 / sqrt(x)``)                                   1
                        and, by alias of ``sqrt``, the real functions (exp, log, tanh,
                        sigmoid, gelu, ...: :data:`FUNCTION_ALIASES`)
``reciprocal``          reciprocal                                                      1
``abs``                 abs (complex -> its real component format)                      1
``negative``            negative                                                        1
``addcmul``             addcmul (``input + t1 * t2``, torch)                            3
``addcdiv``             addcdiv (``input + t1 / t2``, torch)                            3
``clamp``               clamp (``x``, ``min``, ``max``; one bound may be left out)      2-3
``fma``                 fma (``x * y + z``: the dtype of mul, then add)                 3
``conversion``          cast (``x``, the target dtype: the target, whatever ``x`` is)   2
``reduction``           sum (bool and integers into the policy's accumulator integer,  1
                        int64 in torch, uint64 for numpy's unsigned; floats keep theirs;
                        cumsum too)
``float_reduction``     mean (floats keep their format; bool and integers: the policy's 1
                        float, float64 in numpy, raised in torch; var and std too)
======================  ==============================================================  =====

The ops of :mod:`exactref.ops` name their promotion op in their record (``OpSpec.promotion``);
a real function that is not listed here is fed to this table when its record is registered
(:func:`add_function`), so a new function needs no edit here.

Binary ops fold any number of operands (``result_type(a, b, c, op="add")`` is the promotion of
the three, as the libraries' n-ary ``result_type`` is), except the functions of two arguments
(:data:`BINARY_FUNCTIONS`: ``atan2(y, x)``); unary, ternary and those ops take exactly their
operands, and a call with another number raises ``TypeError``.

Note: ``max`` and ``min`` are not aliases of ``maximum`` and ``minimum``: in every library they
name reductions (``torch.max(x)``, ``np.max(x)``), whose dtype rules differ.

>>> canonical_op("subtract"), canonical_op("**"), family("greater_equal")
('sub', 'pow', 'ordering')
>>> canonical_op("clip"), canonical_op("absolute"), canonical_op("neg"), arity("fma")
('clamp', 'abs', 'negative', (3, 3))
>>> canonical_op("arctan2"), family("atan2"), arity("atan2")
('atan2', 'float_function2', (2, 2))
"""

from __future__ import annotations

import difflib

__all__ = ["canonical_op", "family", "arity", "check_arity", "add_function", "OPS", "ARITY",
           "COMPARISONS", "UNARY", "TERNARY", "BINARY_FUNCTIONS", "FUNCTION_ALIASES",
           "FUNCTION_RULES"]

#: canonical name -> family
OPS = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "div", "floor_divide": "floor_divide",
    "remainder": "remainder", "fmod": "fmod", "pow": "pow",
    "eq": "equality", "ne": "equality",
    "lt": "ordering", "le": "ordering", "gt": "ordering", "ge": "ordering",
    "bitwise_and": "bitwise", "bitwise_or": "bitwise", "bitwise_xor": "bitwise",
    "logical_and": "logical", "logical_or": "logical", "logical_xor": "logical",
    "maximum": "extremum", "minimum": "extremum", "fmax": "fextremum", "fmin": "fextremum",
    "atan2": "float_function2",
    "sqrt": "root", "rsqrt": "root", "reciprocal": "reciprocal", "abs": "abs",
    "negative": "negative",
    "addcmul": "addcmul", "addcdiv": "addcdiv", "clamp": "clamp", "fma": "fma",
    "cast": "conversion", "sum": "reduction", "mean": "float_reduction",
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
    "absolute": "abs", "neg": "negative", "clip": "clamp", "arctan2": "atan2",
    "astype": "cast", "cumsum": "sum", "var": "mean", "std": "mean",
}

#: The real functions promote as ``sqrt`` does in every policy (an integer or bool operand
#: becomes the default float; a float keeps its format): torch's unary float ops, numpy's
#: ufuncs (whose loops are sqrt's: ``np.exp(int8)`` is float16) and jax's ``to_inexact``; a
#: function of two arguments as ``atan2`` (``float_function2``): torch and jax promote it as
#: true division, but numpy's ``arctan2`` has float loops only (``np.arctan2(int8, int8)`` is
#: float16, where ``np.divide`` gives float64). By number of operands:
FUNCTION_RULES = {1: "sqrt", 2: "atan2"}

#: The real functions known before their records load (the names ``result_type(op=...)``
#: accepts in a fresh process, and the libraries' other spellings of them). A function op
#: need not be listed: its record's registration adds it (:func:`add_function`).
FUNCTION_ALIASES = {
    **{f: "sqrt" for f in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh",
        "cosh", "tanh", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "erf", "erfc",
        "sigmoid", "expit", "silu", "gelu", "softplus", "logit", "mish")},
}
_ALIASES.update(FUNCTION_ALIASES)


def add_function(name: str, operands: int = 1) -> str:
    """Make ``name`` (a real function of ``operands`` arguments) an operation that promotes as
    the real functions do (:data:`FUNCTION_RULES`); the op registry calls it when a function's
    record is registered. Returns the canonical op it resolves to.

    >>> add_function("cbrt"), canonical_op("cbrt")
    ('sqrt', 'sqrt')
    """
    key = str(name).strip().lower()
    if key in OPS or key in _ALIASES:
        return canonical_op(key)
    if operands not in FUNCTION_RULES:
        raise ValueError(f"a real function of {operands} operands has no promotion rule; "
                         f"known: {', '.join(map(str, FUNCTION_RULES))} operands")
    _ALIASES[key] = FUNCTION_RULES[operands]
    return _ALIASES[key]


#: Unary and ternary families (every other family is binary).
UNARY = ("root", "reciprocal", "abs", "negative", "reduction", "float_reduction")
TERNARY = ("addcmul", "addcdiv", "clamp", "fma")

#: Binary families that take exactly two operands (a function of two arguments does not fold:
#: the libraries' atan2 takes two).
BINARY_FUNCTIONS = ("float_function2", "conversion")

#: family -> (fewest, most) operands; None: any number from one (binary ops fold).
ARITY = {**{f: (1, 1) for f in UNARY}, **{f: (3, 3) for f in TERNARY}, "clamp": (2, 3),
         **{f: (2, 2) for f in BINARY_FUNCTIONS}}
_OPERAND_NAMES = {"float_function2": "y, x", "conversion": "x, dtype", "reduction": "x",
                  "float_reduction": "x", "root": "x", "reciprocal": "x", "abs": "x",
                  "negative": "x",
                  "addcmul": "input, tensor1, tensor2", "addcdiv": "input, tensor1, tensor2",
                  "clamp": "x, min[, max]", "fma": "x, y, z"}

#: families whose output is bool whatever the inputs
COMPARISONS = ("equality", "ordering", "logical")


def canonical_op(op: str | None) -> str | None:
    """The canonical name of an operation (``None`` stays ``None``: plain promotion).

    A trailing underscore (torch's in-place spelling, ``add_``) is accepted and dropped.

    >>> canonical_op("mutliply")
    Traceback (most recent call last):
    ...
    ValueError: unknown operation 'mutliply'; close matches: multiply. Known: add, sub, mul, div, floor_divide, remainder, fmod, pow, eq, ne, lt, le, gt, ge, bitwise_and, bitwise_or, bitwise_xor, logical_and, logical_or, logical_xor, maximum, minimum, fmax, fmin, atan2, sqrt, rsqrt, reciprocal, abs, negative, addcmul, addcdiv, clamp, fma, cast, sum, mean (or None for plain promotion).
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


def arity(op: str | None) -> tuple | None:
    """``(fewest, most)`` operands of an operation; ``None`` where any number folds."""
    name = canonical_op(op)
    return None if name is None else ARITY.get(OPS[name])


def check_arity(op: str | None, operands: list) -> None:
    """Raise ``TypeError`` when a unary or ternary operation gets another number of operands.

    >>> check_arity("sqrt", ["int8[3]", "float32[3]"])
    Traceback (most recent call last):
    ...
    TypeError: sqrt takes 1 operand (x), got 2: int8[3], float32[3]
    """
    bounds = arity(op)
    if bounds is None:
        return
    lo, hi = bounds
    if lo <= len(operands) <= hi:
        return
    name = canonical_op(op)
    want = f"{lo}" if lo == hi else f"{lo} or {hi}"
    labels = ", ".join(getattr(o, "label", None) or str(o) for o in operands)
    raise TypeError(f"{name} takes {want} operand{'s' * (hi > 1)} ({_OPERAND_NAMES[OPS[name]]}), "
                    f"got {len(operands)}" + (f": {labels}" if labels else ""))
