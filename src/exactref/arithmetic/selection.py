"""Selections: ``abs``, ``negative``, ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``clamp``.

Each result is one of the operands (in the output format, which holds it: the operands are
first converted as PyTorch converts them), its negation, or NaN: no arithmetic, so the value is
exact and the tolerance 0 (unless ``dtype`` names a narrower format, which rounds once). The
complex ``abs`` is the exception: ``sqrt(re^2 + im^2)``, the engine's root of a sum of products,
rounded once.

Orderings follow IEEE 754-2019 (§9.6): ``maximum``/``minimum`` propagate NaN and order -0 below
+0; ``fmax``/``fmin`` (maximumNumber/minimumNumber) ignore a NaN operand and order the zeros the
same way. ``clamp(x, min, max)`` is ``minimum(maximum(x, min), max)``, as PyTorch defines it (so
``min > max`` gives ``max``, and a NaN bound gives NaN).

>>> import exactref as er
>>> er.maximum([0.0, -0.0, float("nan")], [-0.0, 0.0, 1.0]).rounded.tolist()
[0.0, 0.0, nan]
>>> er.fmax([float("nan"), 2.0], [1.0, float("nan")]).rounded.tolist()
[1.0, 2.0]
>>> er.clamp([-2.0, 0.5, 9.0], min=0.0, max=1.0).rounded.tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

import numpy as np

from .._formats import dtype as resolve_dtype
from .._operands import output_format
from ..ops import Counterpart, Counterparts, names_of
from ._elementwise import elementwise
from ._formulas import square_sum

__all__ = [*names_of(__name__)]

_REAL = ("bool", "int", "uint", "float")


# ----------------------------------------------------------------------------- helpers
def _flat(ctx, X):
    """The values of an operand's real part, broadcast and flattened (float64, or Python
    integers for integer formats)."""
    return ctx.flat(X[0])


def _select(ctx, x, y, larger: bool, nan_wins: bool):
    """IEEE 754-2019's maximum (``larger``) or minimum of ``x`` and ``y`` (flat arrays):
    NaN propagates (``nan_wins``) or is ignored; -0 orders below +0."""
    if x.dtype == object or y.dtype == object:  # Python integers
        return np.where(x >= y, x, y) if larger else np.where(x <= y, x, y)
    with np.errstate(invalid="ignore"):
        tie = x == y  # equal values, or zeros of either sign
        if larger:
            pick_x = (x > y) | (tie & ~np.signbit(x))
        else:
            pick_x = (x < y) | (tie & np.signbit(x))
        out = np.where(pick_x, x, y)
        xn, yn = np.isnan(x), np.isnan(y)
        if nan_wins:
            return np.where(xn | yn, np.nan, out)
        return np.where(xn, y, np.where(yn, x, out))


def _values(ctx, data):
    return ctx.values(np.asarray(data).reshape(ctx.shape))


# --------------------------------------------------------------------------------- abs
def _abs_format(ops, params, dtype, policy):
    """The output of abs: the operand's format, or its component for a complex operand (the
    modulus is real); ``dtype`` names another of that kind."""
    promoted, _ = output_format(ops, "abs", None, policy)
    if promoted.kind == "complex":
        promoted = promoted.component
    if dtype is None:
        return promoted, promoted
    out = resolve_dtype(dtype)
    if out.kind != promoted.kind:
        raise ValueError(f"dtype={out.name} is not of the result's kind: abs of these operands "
                         f"is {promoted.name}; name a {promoted.kind} format")
    return promoted, out


@elementwise("abs", ("x",), kernel="selection", promotion="abs",
             summary="the absolute value (complex: the modulus, rounded once)",
             counterparts=Counterparts(Counterpart("torch.abs", data={"model": "modulus"}),
                                       Counterpart("np.abs", data={"model": "modulus"}),
                                       Counterpart("jnp.abs", data={"model": "modulus"})),
             out_format=_abs_format, cast_operands=False, loop="common")
def abs(ctx, X):  # noqa: A001 - the op's name
    """Elementwise ``|x|``: exact for real formats (``abs(-0) = +0``; integers wrap where
    ``-int_min`` overflows, as two's complement does, unless ``overflow`` says otherwise). A
    complex operand gives its modulus ``sqrt(re^2 + im^2)`` in the component format, the exact
    value rounded once, with C99's ``hypot`` specials: an infinite part gives +inf even beside
    a NaN.

    >>> import exactref as er
    >>> er.abs(er.asarray([3 + 4j, 1 + 1j], "complex64")).rounded.tolist()
    [5.0, 1.4142135381698608]
    """
    if X[1] is not None and ctx.operands[0].is_complex:
        ex = ctx.root(square_sum(X))
        re, im = ctx.flat(X[0]), ctx.flat(X[1])
        inf = np.isinf(re) | np.isinf(im)
        ex.special[inf] = np.inf
        ex.zero[inf] = False
        return [ex]
    x = _flat(ctx, X)
    if x.dtype == object:
        return [_values(ctx, np.array([v if v >= 0 else -v for v in x], dtype=object))]
    return [_values(ctx, np.abs(x))]


@elementwise("negative", ("x",), kernel="selection", promotion="negative", summary="-x",
             counterparts=Counterparts(Counterpart("torch.neg", data={"model": "negation"}),
                                       Counterpart("np.negative", data={"model": "negation"}),
                                       Counterpart("jnp.negative", data={"model": "negation"})),
             kinds=("int", "uint", "float", "complex"))
def negative(ctx, X):
    """Elementwise ``-x``: exact (``-(+0) = -0``); integers wrap where the negation leaves the
    format (``-int_min``, or any nonzero unsigned value) unless ``overflow`` says otherwise; bool
    operands raise, as in PyTorch.

    >>> import exactref as er
    >>> er.negative(er.asarray([0.0, -1.5], "bfloat16")).rounded.tolist()
    [-0.0, 1.5]
    """
    out = []
    for p in X[: ctx.nparts]:
        x = ctx.flat(p)
        out.append(_values(ctx, -x if x.dtype != object else np.array([-v for v in x],
                                                                        dtype=object)))
    return out


# ------------------------------------------------------------------ maximum, minimum, ...
def _binary_select(larger: bool, nan_wins: bool):
    def exact(ctx, X, Y):
        return [_values(ctx, _select(ctx, _flat(ctx, X), _flat(ctx, Y), larger, nan_wins))]
    return exact


_ORDER = "NaN propagates; -0 orders below +0 (IEEE 754-2019 §9.6)"
_NUMBER = "a NaN operand is ignored; -0 orders below +0 (IEEE 754-2019 §9.6)"

def _extremum(name: str, larger: bool, propagates: bool):
    """maximum, minimum (NaN propagates), fmax and fmin (a NaN operand is ignored): one
    declaration; numpy's counterpart is the extremum model, jax's the same or its NaN-ignoring
    one."""
    which = "larger" if larger else "smaller"
    jax_model = "extremum" if propagates else "nan_ignoring"
    return elementwise(
        name, ("x", "y"), kernel="selection", promotion=name,
        summary=f"the {which} of x and y; " + (_ORDER if propagates else _NUMBER),
        counterparts=Counterparts(
            Counterpart(f"torch.{name}", data={"model": "extremum" if propagates else "maxnum"}),
            Counterpart(f"np.{name}", data={"model": "extremum", "larger": larger,
                                            "propagates": propagates}),
            Counterpart(f"jnp.{name}", data={"model": jax_model, "larger": larger})),
        kinds=_REAL)(_binary_select(larger, propagates))


maximum = _extremum("maximum", True, True)
maximum.__doc__ = f"""Elementwise larger of ``x`` and ``y``, exactly: {_ORDER}.

    PyTorch 2.13 on the CPU returns either zero for ``maximum(0., -0.)`` depending on operand order
    and code path; ``exactref.equivalents.torch.maximum`` models that.

    >>> import exactref as er
    >>> er.maximum([-0.0], [0.0]).rounded.value(0)
    FloatValue(0.0)
    """

minimum = _extremum("minimum", False, True)
minimum.__doc__ = f"""Elementwise smaller of ``x`` and ``y``, exactly: {_ORDER}.

    >>> import exactref as er
    >>> er.minimum([0.0, 3], [-0.0, float("nan")]).rounded.tolist()
    [-0.0, nan]
    """

fmax = _extremum("fmax", True, False)
fmax.__doc__ = f"""Elementwise larger of ``x`` and ``y``, exactly: {_NUMBER} (both NaN: NaN).

    >>> import exactref as er
    >>> er.fmax([float("nan"), -0.0], [1.0, 0.0]).rounded.tolist()
    [1.0, 0.0]
    """

fmin = _extremum("fmin", False, False)
fmin.__doc__ = f"""Elementwise smaller of ``x`` and ``y``, exactly: {_NUMBER} (both NaN: NaN).

    >>> import exactref as er
    >>> er.fmin([float("nan"), -0.0], [1.0, 0.0]).rounded.tolist()
    [1.0, -0.0]
    """


# ------------------------------------------------------------------------------- clamp
@elementwise("clamp", ("x", "min", "max"), kernel="selection", promotion="clamp",
             summary="minimum(maximum(x, min), max), as torch.clamp",
             counterparts=Counterparts(
                 Counterpart("torch.clamp", data={"model": "clamp", "lower": "maximum",
                                                  "upper": "minimum"}),
                 Counterpart("np.clip", data={"model": "clip", "lower": "maximum",
                                              "upper": "minimum"}),
                 Counterpart("jnp.clip", data={"model": "clip", "lower": "maximum",
                                               "upper": "minimum"})), kinds=_REAL,
             optional=("min", "max"), checked_scalars="wrap")
def clamp(ctx, X, LO, HI):
    """Elementwise ``minimum(maximum(x, min), max)``, exactly, as ``torch.clamp`` defines it:
    ``min`` and ``max`` are arrays (broadcast) or scalars, either may be None (not both); NaN in
    ``x`` or in a bound gives NaN; ``min > max`` gives ``max``; -0 orders below +0.

    >>> import exactref as er
    >>> er.clamp(er.asarray([-0.0, 3.0], "float32"), 0.0, 2.0).rounded.tolist()
    [0.0, 2.0]
    """
    v = _flat(ctx, X)
    if LO[0] is not None:
        v = _select(ctx, v, _flat(ctx, LO), True, True)
    if HI[0] is not None:
        v = _select(ctx, v, _flat(ctx, HI), False, True)
    return [_values(ctx, v)]

