"""Quotients and roots: exact values that are not sums, decided by exact comparisons.

A quotient ``N / D`` of two sums of products, a square root ``sqrt(S)`` or its reciprocal
``1 / sqrt(S)`` is (almost always) not a finite sum of float64 pieces, so the engine cannot
distil it. Rounding does not need the value itself, though: it needs the float64 ``t`` nearest
the value ``v`` and the sign of ``v - t`` (or the fact that ``v`` is the midpoint next to ``t``).
Both come from exact comparisons of ``v`` with candidates ``c``, each a sum of products the
engine evaluates exactly:

* quotient: ``sign(v - c) = sign(N - c * D) * sign(D)``;
* root: ``sign(sqrt(S) - c) = sign(S - c * c)`` for ``c > 0``;
* reciprocal root: ``sign(1 / sqrt(S) - c) = sign(1 - c * c * S)`` for ``c > 0``.

:func:`decide` starts from a float64 approximation (one or two ulps off), compares ``v`` with
it and with the midpoint on ``v``'s side, and steps one ulp until ``t`` is the nearest float64.
The result is the engine's exact form ``(c1, c2, r) * 2**E`` with ``c1 = t``, ``c2`` the midpoint
offset where ``v`` is exactly a midpoint (else 0) and ``r = sign(v - t)``; it rounds like ``v``
into every format of at most 53 bits in every mode, since no boundary of such a format (a value
or a midpoint of at most 54 bits) lies strictly between ``v`` and ``t + r * tiny``.

Fast paths need no comparison at all: for single float64 operands, the quotient ``q = fl(n/d)``
and the root ``s = fl(sqrt(m))`` are correctly rounded, and their residuals ``n - q * d`` and
``m - s * s`` are representable (Boldo and Daumas, "Representable correcting terms for possibly
underflowing floating point operations", 2003), so TwoProduct gives their signs exactly. Neither
a quotient nor a square root of binary floats can be a midpoint of float64 neighbours (a midpoint
has an odd significand of 54 bits, whose square or product with a float needs more than 53).

The slow path for the rare elements the vectorized paths leave (pieces thousands of binades
apart, approximations too far off): exact Fractions for quotients (a quotient of rationals is
rational), and integer square roots (``math.isqrt``) for a better starting point of a root.

>>> import numpy as np
>>> from exactref._exact import ExactPart
>>> one, three = ExactPart.from_float64(np.array([1.0])), ExactPart.from_float64(np.array([3.0]))
>>> q = quotient([(one,)], [(three,)], (1,))
>>> float(q.c1[0]) * 2.0 ** int(q.E[0]) == 1 / 3, int(q.r[0])  # 1/3 lies above fl(1/3)
(True, 1)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._engine import ExactArray, ExactPart, sum_of_products, term_fraction, two_product

__all__ = ["quotient", "root", "integral", "decide", "signs", "exact_fraction", "isqrt_scaled"]

_MAX_STEPS = 6  # ulp steps from an approximation before the slow path takes over


# ------------------------------------------------------------------------------- helpers
def signs(ex: ExactArray) -> np.ndarray:
    """The exact sign (-1, 0, 1) of every finite element of ``ex`` (int8)."""
    regular = ~ex.zero & (ex.special == 0)  # NaN != 0: specials are left at 0
    if ex.hard:  # their c1 is a placeholder (NaN): their signs come from the Fractions below
        regular[np.fromiter(ex.hard, dtype=np.int64, count=len(ex.hard))] = False
    s = np.sign(np.where(regular, ex.c1, 0.0)).astype(np.int8)
    for i, v in ex.hard.items():
        s[i] = (v > 0) - (v < 0)
    return s


def _flat(terms, shape):
    n = int(np.prod(shape, dtype=np.int64))
    flat = [tuple(op.broadcast(shape) for op in t) for t in terms]
    return flat, n


def _take(flat_terms, idx):
    return [tuple(op.take(idx) for op in t) for t in flat_terms]


def exact_fraction(flat_terms, j: int) -> Fraction:
    """The exact value of element ``j`` of flattened finite terms (slow)."""
    return term_fraction(flat_terms, j)


def _normal(t, E):
    """``(m, E')`` with ``m * 2**E' == t * 2**E`` and ``1 <= |m| < 2``."""
    m, e = np.frexp(t)
    return m * 2.0, (np.asarray(E, dtype=np.int64) + e.astype(np.int64) - 1)


def _candidate(parts, E, negate=False):
    """An engine ExactPart for ``sum(parts) * 2**E`` (``parts``: float64 arrays)."""
    sign = -1.0 if negate else 1.0
    comps = [(sign * p, E) for p in parts]
    return ExactPart(comps, np.sign(sign * parts[0]).astype(np.float64))


# ------------------------------------------------------------------------------- decide
def decide(t, E, compare, *, fallback=None):
    """The exact form of values ``v`` from approximations ``t * 2**E`` (float64 ``t`` finite,
    nonzero) and an exact comparison.

    ``compare(idx, parts, E)`` returns, for the elements ``idx``, the exact sign of ``v - c``
    where ``c = sum(parts) * 2**E``. ``fallback(idx)`` returns better approximations
    ``(t, E)`` for elements ``t`` is too far from (or None: then they raise). Returns ``(c1, c2,
    r, E)`` arrays (``c1`` normalized to ``1 <= |c1| < 2``).
    """
    t, E = _normal(np.array(t, dtype=np.float64), E)
    n = t.size
    c2 = np.zeros(n)
    r = np.zeros(n, dtype=np.int8)
    todo = np.arange(n)
    refined = False
    while todo.size:
        for _ in range(_MAX_STEPS):
            if not todo.size:
                break
            tt, EE = t[todo], E[todo]
            s0 = compare(todo, [tt], EE)
            a = np.abs(tt)
            # half the gap to the neighbour away from zero, and toward zero (smaller at 1)
            away = np.full(a.shape, 2.0**-53)
            toward = np.where(a == 1.0, 2.0**-54, 2.0**-53)
            # the midpoint on v's side of t, as a signed offset
            off = np.where(s0 > 0, np.where(tt > 0, away, toward),
                           -np.where(tt > 0, toward, away))
            side = s0 != 0
            sm = np.zeros(todo.size, dtype=np.int8)
            if side.any():
                sm[side] = compare(todo[side], [tt[side], off[side]], EE[side])
            # settled: v == t, or v strictly inside t's half gap, or exactly at its midpoint
            inside = side & (sm * s0 < 0)
            at_mid = side & (sm == 0)
            done = ~side | inside | at_mid
            idx = todo[done]
            r[idx] = np.where(at_mid[done], 0, s0[done])
            c2[idx] = np.where(at_mid[done], off[done], 0.0)
            move = todo[~done]
            if move.size:
                step = np.nextafter(t[move], np.where(s0[~done] > 0, np.inf, -np.inf))
                t[move], E[move] = _normal(step, E[move])
            todo = move
        if todo.size:
            if fallback is None or refined:
                raise ArithmeticError("exactref: an approximation did not converge (an "
                                      "exactref bug); please report the inputs")
            tt, EE = fallback(todo)
            t[todo], E[todo] = _normal(np.asarray(tt, dtype=np.float64), EE)
            refined = True
    return t, c2, r, E


# ------------------------------------------------------------------------------ quotient
def _ieee_quotient(N: ExactArray, D: ExactArray, n: int):
    """IEEE 754's specials and zeros of N / D: ``(special, zero, zsign, regular)``."""
    ns = np.where(N.zero, 0.0, np.where(N.special != 0, N.special, np.sign(N.c1)))
    ns = np.where(np.isnan(N.special), np.nan, ns)
    for i, v in N.hard.items():
        ns[i] = 1.0 if v > 0 else -1.0
    ds = np.where(D.zero, 0.0, np.where(D.special != 0, D.special, np.sign(D.c1)))
    ds = np.where(np.isnan(D.special), np.nan, ds)
    for i, v in D.hard.items():
        ds[i] = 1.0 if v > 0 else -1.0
    # the sign of a zero: IEEE's sum rule (zsign 0) counts as +0 here
    nneg = np.where(N.zero, N.zsign < 0, ns < 0)
    dneg = np.where(D.zero, D.zsign < 0, ds < 0)
    neg = nneg != dneg
    with np.errstate(invalid="ignore", divide="ignore"):
        nan = np.isnan(ns) | np.isnan(ds) | (np.isinf(ns) & np.isinf(ds)) | (
            N.zero & D.zero)
        inf = ~nan & (np.isinf(ns) | (D.zero & ~N.zero))
    zero = ~nan & ~inf & (N.zero | np.isinf(ds))
    special = np.where(nan, np.nan, np.where(inf, np.where(neg, -np.inf, np.inf), 0.0))
    zsign = np.where(neg, -1, 1).astype(np.int8)
    # a sum-rule zero over a positive value keeps the sum rule (-0 rounding toward -inf), as
    # IEEE arithmetic on N / D gives it: the parts of a complex quotient over |y|**2
    zsign[N.zero & (N.zsign == 0) & (ds > 0)] = 0
    regular = ~nan & ~inf & ~zero
    return special, zero, zsign, regular


def quotient(num_terms, den_terms, shape) -> ExactArray:
    """The exact value of ``N / D`` per element, ``N`` and ``D`` sums of products (terms as
    :func:`~exactref._exact.sum_of_products` takes them), with IEEE 754's special values and
    signs of zero (a zero ``N`` whose sign IEEE's sum rule decides keeps that rule over a
    positive ``D``; over a negative ``D``, and a zero ``D`` of that kind, it counts as +0)."""
    shape = tuple(shape)
    N = sum_of_products(num_terms, shape)
    D = sum_of_products(den_terms, shape)
    n = N.size
    special, zero, zsign, regular = _ieee_quotient(N, D, n)
    out = ExactArray.regular(shape, np.zeros(n), special=special, zero=zero, zsign=zsign)
    idx = np.flatnonzero(regular)
    if not idx.size:
        return out
    fn, _ = _flat(num_terms, shape)
    fd, _ = _flat(den_terms, shape)
    hard = np.array([i in N.hard or i in D.hard for i in idx], dtype=bool)
    for i in idx[hard]:
        i = int(i)
        out.hard[i] = exact_fraction(fn, i) / exact_fraction(fd, i)
    idx = idx[~hard]
    if not idx.size:
        return out
    single = _single(num_terms) and _single(den_terms)
    if single:
        nv = fn[0][0].f64[idx]
        dv = fd[0][0].f64[idx]
        c1, c2, r, E = _fast_quotient(nv, dv)
    else:
        mn, en = np.frexp(N.c1[idx])
        md, ed = np.frexp(D.c1[idx])
        t = mn / md
        E0 = N.E[idx] + en - D.E[idx] - ed
        dsign = np.sign(D.c1[idx]).astype(np.int8)
        sub_n, sub_d = _take(fn, idx), _take(fd, idx)

        def compare(j, parts, EE):
            c = _candidate(parts, EE, negate=True)
            terms = _take(sub_n, j) + [(c,) + t for t in _take(sub_d, j)]
            return signs(sum_of_products(terms, (j.size,))) * dsign[j]

        def fallback(j):
            q = [exact_fraction(sub_n, int(k)) / exact_fraction(sub_d, int(k)) for k in j]
            return _approximate(q)

        c1, c2, r, E = decide(t, E0, compare, fallback=fallback)
    out.c1[idx], out.c2[idx], out.r[idx], out.E[idx] = c1, c2, r, E
    return out


def _single(terms) -> bool:
    """Whether the sum is one operand that float64 holds (the fast paths' case)."""
    return len(terms) == 1 and len(terms[0]) == 1 and terms[0][0].f64 is not None


def _fast_quotient(n, d):
    """``n / d`` (float64, finite, nonzero) in exact form: ``fl(n/d)`` of the scaled
    significands and the sign of the representable remainder."""
    mn, en = np.frexp(n)
    md, ed = np.frexp(d)
    q = mn / md  # correctly rounded, in (1/2, 2): no overflow, no underflow
    p, e = two_product(q, md)
    rem = (mn - p) - e  # exact (Sterbenz, then a representable result)
    r = (np.sign(rem) * np.sign(md)).astype(np.int8)
    return q, np.zeros(q.shape), r, (en - ed).astype(np.int64)


def _approximate(values):
    """``(t, E)`` float64 approximations (correctly rounded) of nonzero Fractions."""
    t = np.empty(len(values))
    E = np.empty(len(values), dtype=np.int64)
    for k, v in enumerate(values):
        a = abs(v)
        e = a.numerator.bit_length() - a.denominator.bit_length()
        m = a / Fraction(2) ** e  # in [1/2, 2)
        t[k] = float(m) if v > 0 else -float(m)
        E[k] = e
    return t, E


# ---------------------------------------------------------------------------------- roots
def root(terms, shape, *, reciprocal: bool = False) -> ExactArray:
    """The exact value of ``sqrt(S)`` (``1 / sqrt(S)`` with ``reciprocal``) per element, ``S``
    a sum of products, with IEEE 754's specials: sqrt(-0) = -0, sqrt(+inf) = +inf, NaN below
    zero; rSqrt(±0) = ±inf, rSqrt(+inf) = +0."""
    shape = tuple(shape)
    S = sum_of_products(terms, shape)
    n = S.size
    ss = signs_with_specials(S)
    nan = np.isnan(ss) | (ss < 0)
    inf = ss == np.inf
    if reciprocal:
        special = np.where(nan, np.nan, np.where(S.zero, np.where(S.zsign < 0, -np.inf, np.inf),
                                                 0.0))
        zero = inf
        zsign = np.ones(n, np.int8)
    else:
        special = np.where(nan, np.nan, np.where(inf, np.inf, 0.0))
        zero = S.zero.copy()
        zsign = S.zsign.copy()  # sqrt(-0) = -0; IEEE's sum rule stays the sum rule
    out = ExactArray.regular(shape, np.zeros(n), special=special, zero=zero, zsign=zsign)
    regular = ~nan & ~inf & ~S.zero
    idx = np.flatnonzero(regular)
    if not idx.size:
        return out
    flat, _ = _flat(terms, shape)
    sub = _take(flat, idx)
    if _single(terms) and not reciprocal:
        c1, c2, r, E = _fast_sqrt(flat[0][0].f64[idx])
    else:
        m, e = np.frexp(S.c1[idx])
        tot = S.E[idx] + e
        odd = (tot & 1).astype(bool)
        m = np.where(odd, m * 2.0, m)
        half = (tot - odd) // 2  # S ~ m * 4**half
        t = np.sqrt(m)
        if reciprocal:
            t, E0 = 1.0 / t, -half
        else:
            E0 = half
        hard = np.array([int(i) in S.hard for i in idx], dtype=bool) if S.hard else None
        if hard is not None and hard.any():
            # a sum of pieces thousands of binades apart is a Fraction (its c1 a placeholder):
            # start from its integer square root (|1e300 + 1e-300i| was once 0)
            t[hard], E0[hard] = _root_approximation([S.hard[int(i)] for i in idx[hard]],
                                                    reciprocal)
        one = ExactPart.from_float64(np.ones(idx.size))

        def compare(j, parts, EE):
            c = _candidate(parts, EE)
            nc = _candidate(parts, EE, negate=True)
            if reciprocal:  # sign(1 - c*c*S)
                tm = [(one.take(j),)] + [(nc, c) + t for t in _take(sub, j)]
            else:  # sign(S - c*c)
                tm = _take(sub, j) + [(nc, c)]
            return signs(sum_of_products(tm, (j.size,)))

        def fallback(j):
            vals = [exact_fraction(sub, int(k)) for k in j]
            return _root_approximation(vals, reciprocal)

        c1, c2, r, E = decide(t, E0, compare, fallback=fallback)
    out.c1[idx], out.c2[idx], out.r[idx], out.E[idx] = c1, c2, r, E
    return out


def signs_with_specials(ex: ExactArray) -> np.ndarray:
    """float64 signs of every element: ±1, 0 (either zero), ±inf or NaN."""
    s = signs(ex).astype(np.float64)
    sp = (ex.special != 0) | np.isnan(ex.special)
    return np.where(sp, ex.special, s)


def _fast_sqrt(x):
    """``sqrt(x)`` (float64, finite, positive) in exact form."""
    m, e = np.frexp(x)
    odd = (e & 1).astype(bool)
    m = np.where(odd, m * 2.0, m)  # in [1/2, 2), exponent even
    half = ((e - odd) // 2).astype(np.int64)
    s = np.sqrt(m)
    p, err = two_product(s, s)
    rem = (m - p) - err  # exact
    return s, np.zeros(s.shape), np.sign(rem).astype(np.int8), half


def isqrt_scaled(q: Fraction, bits: int) -> tuple[int, int]:
    """``(s, h)``: ``s = floor(sqrt(q * 4**h))``, an integer of about ``bits / 2`` bits, for a
    positive Fraction ``q`` (so ``s / 2**h`` is ``sqrt(q)`` rounded down at that precision)."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    shift = bits - e
    shift += shift & 1
    s = math.isqrt(q.numerator * 2**shift // q.denominator if shift >= 0 else
                   q.numerator // (q.denominator * 2**-shift))
    return s, shift // 2


def _root_approximation(values, reciprocal):
    """Float64 approximations of ``sqrt(v)`` (or ``1/sqrt(v)``) of positive Fractions, from
    integer square roots of 130 bits."""
    t = np.empty(len(values))
    E = np.empty(len(values), dtype=np.int64)
    for k, v in enumerate(values):
        s, half = isqrt_scaled(v, 260)
        a = Fraction(s) / Fraction(2) ** half
        if reciprocal:
            a = 1 / a
        ea = a.numerator.bit_length() - a.denominator.bit_length()
        t[k] = float(a / Fraction(2) ** ea)
        E[k] = ea
    return t, E


# ------------------------------------------------------------------------------ integral
def integral(ex: ExactArray, how: str, exact=None) -> ExactArray:
    """The integer part of every element: ``how`` is ``"floor"`` or ``"trunc"``. Exact
    integers (as an ExactArray); infinities and NaN stay, a zero keeps its sign, and a zero
    result takes the value's sign (``trunc(-0.5)`` is -0, ``floor(0.5)`` +0).

    ``exact(i)``: the exact Fraction of flat element ``i``. Beyond ``2**54`` the rest ``r`` of
    an inexact element (up to half an ulp of ``c1``, as :func:`decide` leaves it) may hold
    integers, so its integer part is computed from ``exact`` there; without it, the rest is
    taken to be below 1."""
    n = ex.size
    out = ExactArray.regular(ex.shape, np.zeros(n), special=ex.special.copy(),
                             zero=ex.zero.copy(), zsign=ex.zsign.copy())
    regular = ~ex.zero & (ex.special == 0) & ~np.isnan(ex.special)
    if ex.hard:
        regular[np.fromiter(ex.hard, dtype=np.int64, count=len(ex.hard))] = False
    for i, v in ex.hard.items():
        _set_integer(out, i, _int_part(v, how), v < 0)
    idx = np.flatnonzero(regular)
    if not idx.size:
        return out
    c1, c2, r, E = ex.c1[idx], ex.c2[idx], ex.r[idx].astype(np.int64), ex.E[idx]
    neg = c1 < 0
    flip = np.where(neg, -1.0, 1.0)
    a1, a2, ar = c1 * flip, c2 * flip, r * flip.astype(np.int64)  # the magnitude
    _, e1 = np.frexp(a1)
    lead = E + e1  # 2**(lead - 1) <= |c1| * 2**E < 2**lead
    # floor of the magnitude: exact for magnitudes in [1/2, 2**52); below, 0 and inexact;
    # above, Fractions
    big = lead > 52
    tiny = lead < 0
    sh = np.where(tiny | big, 0, E).astype(np.int32)
    with np.errstate(under="ignore"):
        w1 = np.ldexp(a1, sh)
        w2 = np.ldexp(a2, sh)
    lost = (w2 == 0) & (a2 != 0)  # c2 below float64's range: only its sign matters
    ar = np.where(lost, np.sign(a2).astype(np.int64), np.where(w2 != 0, 0, ar))
    fl = np.floor(w1)
    s, err = _two_sum(w1 - fl, w2)
    k = np.floor(s)
    below = (s == k) & ((err < 0) | ((err == 0) & (ar < 0)))
    mag = np.where(tiny, 0.0, fl + k - below)  # floor(|v|)
    frac = tiny | (s != k) | (err != 0) | (ar != 0)  # |v| is not an integer
    if how == "floor":
        # floor(v) = -ceil(|v|) for negative v
        val = np.where(neg, -(mag + frac), mag)
    else:
        val = np.where(neg, -mag, mag)
    zero = val == 0
    res_c1 = np.where(zero, 0.0, val)
    out.c1[idx] = res_c1
    out.zero[idx] = zero
    out.zsign[idx] = np.where(neg, -1, 1)
    for j in np.flatnonzero(big):
        i = int(idx[j])
        if r[j] != 0 and lead[j] > 54 and exact is not None:
            # Note: the rest may exceed 1 here (max / (1 + 2**-52) is 0x1.ffffffffffffd8p+1023;
            # its floor lies strictly between the float64 neighbours, not on the lower one)
            _set_integer(out, i, _int_part(exact(i), how), c1[j] < 0)
            continue
        v = (Fraction(float(c1[j])) + Fraction(float(c2[j]))) * Fraction(2) ** int(E[j])
        k = _int_part(v, how)
        if k == v and r[j] != 0:  # the exact value is just past the integer v
            if how == "floor" and r[j] < 0:
                k -= 1
            elif how == "trunc" and (r[j] > 0) != (v > 0):
                k -= 1 if v > 0 else -1
        _set_integer(out, i, k, c1[j] < 0)
    return out


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _int_part(v: Fraction, how: str) -> int:
    if how == "floor":
        return v.numerator // v.denominator
    return int(v)  # toward zero


def _set_integer(out: ExactArray, i: int, k: int, negative: bool):
    """Element ``i`` of ``out`` set to the exact integer ``k`` (a zero takes ``negative``)."""
    out.special[i] = 0.0
    if k == 0:
        out.zero[i] = True
        out.zsign[i] = -1 if negative else 1
        out.hard.pop(i, None)
        return
    out.zero[i] = False
    if abs(k) < 2**53:
        out.c1[i], out.c2[i], out.r[i], out.E[i] = float(k), 0.0, 0, 0
        out.hard.pop(i, None)
    else:
        out.hard[i] = Fraction(k)
