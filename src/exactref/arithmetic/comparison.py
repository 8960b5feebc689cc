"""Comparisons: ``equal``, ``not_equal``, ``less``, ``less_equal``, ``greater``,
``greater_equal`` on exact values.

The operands are compared as given, exactly: no operand is converted to a common format first,
so ``int64 16777217 == float32 16777216.0`` is False here. PyTorch promotes first (both become
float32, and the comparison is True there): ``exactref.equivalents.torch`` models that. The
result is bool, and exact: the sign of ``x - y``, which the engine computes exactly (an int64
beside a float64, say). NaN compares unequal to everything, itself included (only
``not_equal`` is True); -0 equals +0; complex operands compare equal when both parts do and have
no order.

>>> import exactref as er
>>> er.equal(er.asarray([16777217], "int64"), er.asarray([16777216.0], "float32")).rounded.tolist()
[False]
>>> er.less([1.0, float("nan"), -0.0], [2.0, 1.0, 0.0]).rounded.tolist()
[True, False, False]
"""

from __future__ import annotations

import numpy as np

from .._formats import FORMATS
from .._operands import output_format
from ..ops import Counterpart, Counterparts, names_of
from ._elementwise import elementwise
from ._formulas import Part, neg

__all__ = [*names_of(__name__)]

_BOOL = FORMATS["bool"]


def _bool_format(op):
    def out_format(ops, params, dtype, policy):
        output_format(ops, op, None, policy)  # the policy's own errors (complex ordering)
        if dtype is not None and dtype not in ("bool", _BOOL):
            raise ValueError(f"a comparison's result is bool; dtype={dtype!r} cannot apply "
                             f"(convert the result with er.cast)")
        return _BOOL, _BOOL
    return out_format


def _difference_sign(ctx, x, y):
    """Per part, the exact sign of ``x - y`` as float64 (-1, 0, 1; NaN where either part is
    NaN; 0 for equal infinities, whose difference is NaN as a sum)."""
    from .._exact import signs

    out = []
    for p in range(2 if (x[1] is not None or y[1] is not None) else 1):
        xp = x[p] if x[p] is not None else None
        yp = y[p] if y[p] is not None else None
        terms = [t for t in ((xp,), (neg(yp),)) if t[0] is not None]
        ex = ctx.sop([Part(terms)])[0]
        s = signs(ex).astype(np.float64)
        sp = (ex.special != 0) | np.isnan(ex.special)
        s = np.where(sp, np.sign(ex.special), s)  # inf - finite: the infinity's sign
        # inf - inf (the same infinity) is NaN in the sum but equal as values
        xs, ys = _shadow(ctx, xp), _shadow(ctx, yp)
        same_inf = np.isinf(xs) & (xs == ys)
        s = np.where(same_inf, 0.0, s)
        s = np.where(np.isnan(xs) | np.isnan(ys), np.nan, s)
        out.append(s)
    return out


def _shadow(ctx, op):
    n = int(np.prod(ctx.shape, dtype=np.int64))
    if op is None:
        return np.zeros(n)
    return np.broadcast_to(op.shadow, ctx.shape).reshape(n).astype(np.float64)


def _declare(name, promotion, test, summary, torch, numpy, jax, ordered):
    equal_at_zero = bool(test(np.float64(0.0)))  # equal, not not_equal: true where x == y

    def exact(ctx, X, Y):
        signs = _difference_sign(ctx, X, Y)
        if len(signs) == 2:  # complex: equal when both parts are
            with np.errstate(invalid="ignore"):
                eq = (signs[0] == 0) & (signs[1] == 0)
            result = eq if equal_at_zero else ~eq
        else:
            with np.errstate(invalid="ignore"):
                result = test(signs[0])
        return [ctx.values(np.asarray(result, dtype=bool).reshape(ctx.shape))]

    exact.__doc__ = f"""Elementwise ``{summary}`` on the exact values of ``x`` and ``y`` (bool).

    The operands are compared as given, without a common format; NaN is unordered. See
    :mod:`exactref.arithmetic.comparison`.
    """
    kinds = ("bool", "int", "uint", "float") + (() if ordered else ("complex",))
    return elementwise(name, ("x", "y"), kernel="comparison", promotion=promotion,
                       summary=summary + ", exactly", cast_operands=False,
                       out_format=_bool_format(promotion), kinds=kinds,
                       counterparts=Counterparts(
                           Counterpart(torch, data={"model": "comparison"}),
                           Counterpart(numpy, data={"model": "comparison"}),
                           Counterpart(jax, data={"model": "comparison"})), models=(),
                       loop="common")(exact)


equal = _declare("equal", "eq", lambda s: s == 0, "x == y", "torch.eq", "np.equal", "jnp.equal",
                 False)
not_equal = _declare("not_equal", "ne", lambda s: ~(s == 0), "x != y", "torch.ne",
                     "np.not_equal", "jnp.not_equal", False)
less = _declare("less", "lt", lambda s: s < 0, "x < y", "torch.lt", "np.less", "jnp.less", True)
less_equal = _declare("less_equal", "le", lambda s: s <= 0, "x <= y", "torch.le", "np.less_equal",
                      "jnp.less_equal", True)
greater = _declare("greater", "gt", lambda s: s > 0, "x > y", "torch.gt", "np.greater",
                   "jnp.greater", True)
greater_equal = _declare("greater_equal", "ge", lambda s: s >= 0, "x >= y", "torch.ge",
                         "np.greater_equal", "jnp.greater_equal", True)
