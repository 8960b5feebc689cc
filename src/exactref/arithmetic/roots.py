"""Roots: ``sqrt`` and ``rsqrt``, the exact value rounded once.

The engine's root kernel decides each rounding by exact comparisons of candidate squares with
the operand (``sign(x - c*c)``; for ``1/sqrt(x)``, ``sign(1 - c*c*x)``). The complex square root
is the principal branch: ``sqrt(a + bi) = u + vi`` with ``u = sqrt((|z| + a) / 2) >= 0`` and
``v = sign(b) sqrt((|z| - a) / 2)``; each part is decided by exact comparisons too (``u > c``
exactly when ``2c^2 - a < 0`` or ``b^2 + 4ac^2 - 4c^4 > 0``), so no part is ever rounded twice.

>>> import exactref as er
>>> er.sqrt(er.asarray([2.0, -0.0, 4.0], "float32")).rounded.tolist()
[1.4142135381698608, -0.0, 2.0]
>>> er.rsqrt(er.asarray([4.0, 0.0], "bfloat16")).rounded.tolist()
[0.5, inf]
>>> er.sqrt(er.asarray([-4.0 + 0j, 3.0 + 4j], "complex64")).rounded.tolist()
[2j, (2+1j)]
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._exact import ExactArray, ExactPart, decide, signs, sum_of_products
from ..ops import Counterpart, Counterparts, names_of
from . import _fast
from ._elementwise import FUSED, Model, elementwise
from ._formulas import Part

__all__ = [*names_of(__name__)]


def _sqrt_then_reciprocal(ctx, X):
    """``1 / sqrt(x)`` as two operations (PyTorch's CPU ``rsqrt``), each rounded in the compute
    format."""
    s = ctx.store([ctx.root(Part([(X[0],)]))])
    return [ctx.quotient(Part([(ExactPart.from_scalar(1.0),)]), Part([(s[0],)]))]


@elementwise("sqrt", ("x",), kernel="root", promotion="sqrt",
             summary="the square root, rounded once (complex: the principal branch)",
             counterparts=Counterparts("torch.sqrt",
                                       Counterpart("np.sqrt", data={"model": "root"}),
                                       Counterpart("jnp.sqrt", data={"model": "root"})),
             fast=_fast.sqrt_lane)
def sqrt(ctx, X):
    """Elementwise square root, the exact value rounded once (integers give the policy's
    default float). IEEE 754's specials: ``sqrt(-0) = -0``, ``sqrt(+inf) = +inf``, NaN below
    zero. A complex operand takes the principal branch, each part exact and rounded once, with
    C99 Annex G's specials: ``sqrt(x ± inf i) = +inf ± inf i`` even for a NaN ``x``,
    ``sqrt(-inf + yi) = +0 + inf i``, ``sqrt(+inf + yi) = +inf + 0i`` (the zero with ``y``'s sign),
    and the imaginary part's sign follows ``b``'s, zeros included.

    >>> import exactref as er
    >>> er.sqrt([2.0], rounding="toward_zero").rounded.value(0).hex()
    '0x1.6a09e667f3bccp+0'
    """
    if ctx.complex_out:
        return _complex_sqrt(ctx, X)
    return [ctx.root(Part([(X[0],)]))]


@elementwise("rsqrt", ("x",), kernel="root", promotion="rsqrt",
             summary="1 / sqrt(x), rounded once",
             models=(FUSED, Model("sqrt rounded in {c}, then 1 / it in {c}",
                                  _sqrt_then_reciprocal)),
             counterparts=Counterparts(
                 "torch.rsqrt", None, Counterpart("jax.lax.rsqrt", data={"model": "inverse_root"})),
             kinds=("bool", "int", "uint", "float"))
def rsqrt(ctx, X):
    """Elementwise ``1 / sqrt(x)``, the exact value rounded once (IEEE 754's rSqrt): ``rsqrt(±0)
    = ±inf``, ``rsqrt(+inf) = +0``, NaN below zero. Its tolerance also covers the square root and
    the reciprocal rounded one after the other in the compute format, as PyTorch's CPU kernel
    computes them. Complex operands are not supported yet (compute ``sqrt`` then
    ``reciprocal``).

    >>> import exactref as er
    >>> er.rsqrt(er.asarray([2.0], "float32")).rounded.tolist()
    [0.7071067690849304]
    """
    return [ctx.root(Part([(X[0],)]), reciprocal=True)]


# ------------------------------------------------------------------------ complex sqrt
def _complex_sqrt(ctx, X):
    a = ctx.flat(X[0]) if X[0] is not None else np.zeros(int(np.prod(ctx.shape)))
    b = ctx.flat(X[1]) if X[1] is not None else np.zeros_like(a)
    n = a.size
    re = ExactArray.regular(ctx.shape, np.zeros(n))
    im = ExactArray.regular(ctx.shape, np.zeros(n))
    finite = np.isfinite(a) & np.isfinite(b)
    # C99 G.6.4.2: specials, by the first row that applies
    with np.errstate(invalid="ignore"):
        rs, is_ = _annex_g(a, b)
    sp = ~finite
    re.special[sp], im.special[sp] = np.where(rs[sp] == 0, 0.0, rs[sp]), np.where(
        is_[sp] == 0, 0.0, is_[sp])
    for part, vals in ((re, rs), (im, is_)):
        z = sp & (vals == 0)
        part.zero[z] = True
        part.zsign[z] = np.where(np.signbit(vals[z]), -1, 1)
    # zeros of finite operands: sqrt(±0 ± 0i) = +0 ± 0i; a real axis: one part is zero
    bz = finite & (b == 0)
    re.zero[bz & (a <= 0)] = True  # +0
    im.zero[bz & (a >= 0)] = True
    im.zsign[bz & (a >= 0)] = np.where(np.signbit(b[bz & (a >= 0)]), -1, 1)
    pos = np.flatnonzero(bz & (a > 0))
    neg = np.flatnonzero(bz & (a < 0))
    for idx, src, part, sgn in ((pos, a, re, None), (neg, -a, im, b)):
        if idx.size:
            ex = ctx.root(Part([(ExactPart.from_float64(_scatter(src, idx, n, ctx.shape)),)]))
            s = np.ones(idx.size) if sgn is None else np.where(np.signbit(sgn[idx]), -1.0, 1.0)
            _set(part, idx, ex, s)
    gen = np.flatnonzero(finite & (b != 0))
    if gen.size:
        ga, gb = a[gen], b[gen]
        with np.errstate(all="ignore"):
            approx = np.sqrt(ga + 1j * gb)  # libm's csqrt: within a few ulps
        for part, t, sign_a, s in ((re, np.abs(approx.real), 1.0, np.ones(gen.size)),
                                   (im, np.abs(approx.imag), -1.0,
                                    np.where(np.signbit(gb), -1.0, 1.0))):
            c1, c2, r, E = _decide_part(ga * sign_a, gb, t)
            part.c1[gen], part.c2[gen], part.r[gen], part.E[gen] = c1 * s, c2 * s, r * s, E
    return [re, im]


def _scatter(src, idx, n, shape):
    out = np.ones(n)
    out[idx] = src[idx]
    return out.reshape(shape)


def _set(part: ExactArray, idx, ex: ExactArray, s):
    part.c1[idx], part.c2[idx] = ex.c1[idx] * s, ex.c2[idx] * s
    part.r[idx], part.E[idx] = (ex.r[idx] * s).astype(np.int8), ex.E[idx]


def _annex_g(a, b):
    """The parts of ``sqrt(a + bi)`` for non-finite operands (C99 G.6.4.2)."""
    nan = np.nan
    inf = np.inf
    re = np.full(a.shape, nan)
    im = np.full(a.shape, nan)
    binf = np.isinf(b)
    re = np.where(binf, inf, re)
    im = np.where(binf, b, im)
    rest = ~binf
    ninf = rest & np.isneginf(a)
    pinf = rest & np.isposinf(a)
    fin_b = np.isfinite(b)
    re = np.where(ninf & fin_b, 0.0, re)
    im = np.where(ninf & fin_b, np.copysign(inf, b), im)
    im = np.where(ninf & np.isnan(b), inf, im)  # the sign is unspecified: +inf
    re = np.where(pinf, inf, re)
    im = np.where(pinf & fin_b, np.copysign(0.0, b), im)
    return re, im


def _decide_part(a, b, t):
    """The exact form of ``sqrt((|z| + a) / 2)`` (``z = a + bi``, ``b != 0``) from approximations
    ``t > 0``: ``u > c`` exactly when ``2c^2 - a < 0`` or ``b^2 + 4ac^2 - 4c^4 > 0``."""
    n = a.size
    A = ExactPart.from_float64(a)
    B = ExactPart.from_float64(b)
    two, four, mfour = (ExactPart.from_float64(np.full(n, v)) for v in (2.0, 4.0, -4.0))

    def compare(j, parts, E):
        c = ExactPart([(p, E) for p in parts], np.ones(j.size))
        aj, bj = A.take(j), B.take(j)
        first = sum_of_products([(two.take(j), c, c), (_neg(aj),)], (j.size,))
        s1 = signs(first)
        poly = sum_of_products([(bj, bj), (four.take(j), aj, c, c),
                                (mfour.take(j), c, c, c, c)], (j.size,))
        s2 = signs(poly)
        return np.where(s1 <= 0, 1, s2).astype(np.int8)

    def fallback(j):
        return _isqrt_approximation(a[j], b[j])

    with np.errstate(all="ignore"):
        m, e = np.frexp(t)
    e = e.astype(np.int64)
    bad = np.flatnonzero(~(np.isfinite(t) & (t > 0)))  # under- or overflowed in float64
    if bad.size:
        m[bad], e[bad] = fallback(bad)
    return decide(m, e, compare, fallback=fallback)


def _neg(op: ExactPart) -> ExactPart:
    return ExactPart.from_float64(-op.f64)


def _isqrt_approximation(a, b):
    """``sqrt((|z| + a) / 2)`` to about 100 bits with integer square roots (slow path)."""
    t = np.empty(a.size)
    E = np.empty(a.size, dtype=np.int64)
    for k in range(a.size):
        fa, fb = Fraction(float(a[k])), Fraction(float(b[k]))
        m2 = fa * fa + fb * fb
        z = _frac_sqrt(m2)
        # |z| + a cancels when a < 0: u = |b| / (2 sqrt((|z| - a) / 2)) there
        if fa >= 0:
            u = _frac_sqrt((z + fa) / 2)
        else:
            u = abs(fb) / (2 * _frac_sqrt((z - fa) / 2))
        eu = u.numerator.bit_length() - u.denominator.bit_length()
        t[k] = float(u / Fraction(2) ** eu)
        E[k] = eu
    return t, E


def _frac_sqrt(v: Fraction) -> Fraction:
    """``sqrt(v)`` to about 120 significant bits (a Fraction, below the exact value)."""
    e = v.numerator.bit_length() - v.denominator.bit_length()
    shift = 240 - e
    shift += shift & 1
    num = v.numerator << shift if shift >= 0 else v.numerator
    den = v.denominator if shift >= 0 else v.denominator << -shift
    return Fraction(math.isqrt(num // den)) / Fraction(2) ** (shift // 2)

