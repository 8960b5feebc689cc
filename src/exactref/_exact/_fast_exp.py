"""Enclosures (:mod:`._enclose`) of the exp family: exp, exp2, expm1, tanh, sinh, cosh,
sigmoid, silu, softplus and mish, from float64 ``+ - * /``, ``floor`` and exact scalings by
powers of two only (no libm), each with a proven relative error bound.

Notation: ``u = 2**-53`` (``|fl(a op b) - a op b| <= u |a op b|`` for results in the normal
range, where every intermediate of a served lane is), ``gamma_n = n u / (1 - n u)``. The
derivations step by step, and the measured undecided fractions, are in
``docs/enclosures_exp.md``; the summary:

**The exp core** (``expk``, ``|x| <= 800``): ``k = floor(fl(fl(x INV_LN2) + 0.5))``, ``r =
fl(fl(x - k LN2_HI) - fl(k LN2_LO))``; ``LN2_HI`` has 42 bits, so ``k LN2_HI`` is exact for
``|k| < 2**11``, and ``|ln2 - LN2_HI - LN2_LO| < 2**-102``. The computed ``k`` is within ``0.5 +
2**-40`` of ``x / ln2``, so ``|r| <= rho = 0.3467`` and ``|r - (x - k ln2)| < 0.7 u``. ``p`` is
Horner's evaluation of the degree-12 Taylor polynomial of ``e**r`` (coefficients ``fl(1/i!)``):
truncation (Lagrange) ``rho**13/13! e**rho``, relative to ``e**r >= e**-rho``: ``< 2**-51.4``;
rounding ``(gamma_24 + u) e**rho / e**-rho < 50.3 u``. So ``e**x = 2**k p (1 + eta)``, ``|eta|
< 54.1 u <= E1 = 2**-47 = 64 u``; ``2**k p`` is ``p * POW2[k]``, exact where it is normal.

Per function (``a = |x|``, ``Y`` the core's value, bounds in units of ``u``, each rounded up to
the ``EPS_*`` constant's power of two):

* **exp** ``E1``; **exp2** ``k = floor(x + 0.5)``, ``r = fl((x - k) LN2)`` (``x - k`` exact):
  ``E1``; integers are exact points ``2**k``;
* **expm1** ``x q(x)`` for ``a <= 0.3466`` (``q`` the degree-12 Taylor polynomial of
  ``(e**x - 1)/x``): ``< 37``; else ``fl(Y - 1)``: ``3.414 * 64 + 1 < 2**-45``;
* **tanh** (odd) ``-m/(2 + m)``, ``m = expm1(-2a)`` by the series for ``a <= 0.17325``: ``< 46``;
  ``(1 - Y)/(1 + Y)``, ``Y = e**-2a``: ``(2.415 + 0.415) * 64 + 3 < 2**-45``; for ``a >= 1``
  also ``1 - t``, ``t = 2Y/(1 + Y)`` (``< 74 <= 2**-46``), the ends moved out by ``2**-53``
  (which covers the rounding of ``1 - t`` in ``[0.5, 1]``): decided up to ``1 - tanh ~
  2**-51``;
* **sinh** (odd) ``(E + E/(1 + E))/2``, ``E = expm1(a)`` for ``a <= 0.3466`` (``< 36``); ``(Y -
  1/Y)/2``: ``65 coth(0.3466) + 1 < 196 < 2**-45``; **cosh** ``1 + E**2/(2(1 + E))``: ``< 5``
  (``2**-49``); ``(Y + 1/Y)/2``: ``< 66`` (``2**-46``);
* **sigmoid** ``1/(1 + Y)`` or ``Y/(1 + Y)``, ``Y = e**-a``: ``<= 98`` (``2**-46``); **silu**
  ``x`` times it: ``<= 99``; **mish** ``x g``, ``g = 1 - 2/w`` (``x > 0``) or ``u(u + 2)/w``,
  ``w = u**2 + 2u + 2``, ``u = e**x``: ``< 169`` (``2**-45``);
* **softplus** (``beta`` in ``[2**-8, 2**8]``): ``v = fl(beta x)``, ``(max(v, 0) + log1p(e**-|v|))
  / beta``, ``log1p(z) = 2 atanh(s)``, ``s = z/(2 + z) <= 1/3``, 16 terms of the series (``<
  107``); the rounding of ``v`` moves the value by at most ``|v| u`` relative (``sigmoid(v) <=
  softplus(v)``): ``< 173`` (``2**-45``) for ``|v| <= 64``, ``< (109 + |v|)`` (``2**-43``) for
  ``-700 <= v < -64``. ``fl(beta x)`` compares with ``threshold`` and 64 as ``beta x`` does unless equal
  (then MPFR).

An enclosure is ``y -+ |y| (EPS + 2**-51)`` (:func:`~._enclose.from_relative`'s formula, the
``2**-51`` covering the two roundings of the ends). Specials and exact cases are points
(``exp(±0) = 1``, ``exp2(k) = 2**k``, ``tanh(-0) = -0``, ``sigmoid(0) = 1/2``, ...); the tails
where the MPFR path answers ``_Near(base, r)`` (sigmoid, silu, softplus, mish) are points with
a rest.

**The tails and the far ranges** (derived in ``docs/enclosures_exp.md``; every cut checked at
300 bits for each ``P <= 53`` by the tests). The core serves ``|x| <= CORE = 708`` (``|k| <=
1021``: ``2**k p`` normal); values it gives beyond ``2**±1000`` are held far by decide, as by
the MPFR path (calls of at most 51 bits). Beyond, far enclosures ``[2**1001, MAX]`` (for
``[2**1001, inf)``) and ``[2**-1074, 2**-1001]`` (for ``(0, 2**-1001]``), of the value's sign:
exp, expm1, sinh, cosh above 708, exp below -708, exp2's non-integers beyond ±1020, sigmoid,
silu, mish below -708, softplus for ``fl(beta x) < -700``, the odd functions at ``|x| <
2**-1002``. MPFR's own functions' tails are points with a rest below ``2**-(P+8)`` relative,
which the lane writes as the round-to-odd value (MPFR's form) where the point is a ``P``-bit
number: exp and exp2 at ``|x| < 2**-(P+9)`` (1, rest of ``x``'s sign); expm1 at ``|x| <
2**-(P+8)`` (``x``, rest +) and ``x < -(P+9) ln2`` (-1, rest +); tanh at ``|x| <
2**-ceil((P+8)/2)`` (``x``, rest toward zero) and ``|x| > (P+10) ln2 / 2`` (±1, rest toward
zero); sinh there (``x``, rest of ``x``'s sign), cosh (1, rest +). The compositions' tiny
tails (their MPFR path gives a regular value, not a ``_Near``) are **witnesses**
(``cell_ends``): where ``p`` is a ``P``-bit number and the rest (of known side) stays inside
the cell next to ``p``, two floats 1 to 4 steps from ``p`` on that side lie in that cell too,
and decide settles them as it (``P <= 50``): sigmoid (``p = 1/2`` for ``|x| < 2**-(P+9)``,
``p = 1/2 + x/4`` for ``|x| < 2**-11`` and ``P <= 36``), silu (``p = x/2``), mish (``p =
3x/5``, where exact). Not served (MPFR): exp2 at the integers beyond ±1022 (exact powers of
two no float64 holds), the float64 inputs between ``2**-1002`` and ``2**-990`` of the
functions whose value is about ``x``, and ``beta x`` on a branch's edge in softplus.

Each function is one kernel written once (:func:`_build`): with ``np.where`` on whole chunks
(the numpy twin) and, compiled by numba, per element (the compiled twin): the same float64
operations in the same order, so their ``lo``/``hi`` are identical (tested).

>>> import numpy as np
>>> got = ENCLOSE_EXP(np.array([1.0, 0.0, -np.inf]), 26, None)
>>> bool(got.lo[0] < np.e < got.hi[0]), got.lo[1:].tolist(), got.hi[1:].tolist()
(True, [1.0, 0.0], [1.0, 0.0])
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from . import _jit
from ._enclose import Enclosed, encloses

__all__ = ["ENCLOSE_EXP", "E1"]

U = 2.0**-53
#: The exp core's relative error bound (54.1 u, rounded up).
E1 = 2.0**-47
INV_LN2 = float.fromhex("0x1.71547652b82fep+0")
LN2_HI = float.fromhex("0x1.62e42fefa3800p-1")   # 42 bits: k * LN2_HI exact for |k| < 2**11
LN2_LO = float.fromhex("0x1.ef35793c76730p-45")  # |ln2 - LN2_HI - LN2_LO| < 2**-102
LN2 = float.fromhex("0x1.62e42fefa39efp-1")      # ln2 rounded to nearest
RHO = 0.3466                                     # the series' range (< the bound rho = 0.3467)
#: ``fl(1/i!)``, i = 0..12 (e**r) and ``fl(1/(i+1)!)`` (expm1(x)/x).
C_EXP = tuple(float(Fraction(1, math.factorial(i))) for i in range(13))
C_EM1 = tuple(float(Fraction(1, math.factorial(i + 1))) for i in range(13))
#: ``fl(1/(2i+1))``, i = 0..15: 2 atanh(s) / (2s) in powers of s**2.
C_ATANH = tuple(float(Fraction(1, 2 * i + 1)) for i in range(16))
W = 2.0**-51  # from_relative's allowance for the two roundings of the ends
EPS_EXP = E1 + W
EPS_EM1S = 2.0**-47 + W
EPS_EM1 = 2.0**-45 + W
EPS_TANH = 2.0**-45 + W
EPS_T = 2.0**-46 + W
EPS_SIG = 2.0**-46 + W
EPS_SP = 2.0**-45 + W
EPS_SINH = 2.0**-45 + W
EPS_COSHS = 2.0**-49 + W
EPS_COSH = 2.0**-46 + W
EPS_MISH = 2.0**-45 + W
EPS_SP_FAR = 2.0**-43 + W
TINY_ARG = 2.0**-990   # below: the odd functions' values leave the normal range: MPFR
FAR_LO, FAR_HI = 2.0**-1074, 2.0**-1001  # (0, 2**-1001]: held as 2**-1100 by decide
BIG_LO, BIG_HI = 2.0**1001, 1.7976931348623157e308  # [2**1001, inf): held as 2**1100
NEAR0 = 2.0**-1002     # |x| below: the odd functions' values are below 2**-1001: far
CORE = 708.0           # the core's range: k = floor(x / ln2 + 1/2) within +-1021, 2**k p normal
INF, NAN = math.inf, math.nan


def _build(sel, ldexp, wrap):
    """The kernels, built from ``sel(c, a, b)`` (``np.where``, or ``a if c else b``),
    ``ldexp(y, k)`` (``k`` a float holding an integer) and ``wrap`` (identity, or numba's
    ``njit``). Each kernel ``(x, t0, t1, t2) -> (lo, hi, rest, ok)`` (floats; ``ok`` 1 or 0)."""
    cexp, cem1, catanh = C_EXP[::-1], C_EM1[::-1], C_ATANH[::-1]

    def poly_exp(r):  # Horner, highest coefficient first
        p = cexp[0]
        for i in range(1, 13):
            p = p * r + cexp[i]
        return p

    poly_exp = wrap(poly_exp)

    def expk(x):  # e**x = 2**k p (1 + eta), |x| <= 800
        k = np.floor(x * INV_LN2 + 0.5)
        r = (x - k * LN2_HI) - k * LN2_LO
        return ldexp(poly_exp(r), k)

    expk = wrap(expk)

    def em1_or_exp(small, x):
        """expm1(x) = x q(x) by its series where ``small`` (``|x| <= RHO``), else e**x by the
        core: one Horner over the coefficients of the branch each lane takes."""
        k = np.floor(x * INV_LN2 + 0.5)
        t = sel(small, x, (x - k * LN2_HI) - k * LN2_LO)
        p = sel(small, cem1[0], cexp[0])
        for i in range(1, 13):
            p = p * t + sel(small, cem1[i], cexp[i])
        return sel(small, x * p, ldexp(p, sel(small, 0.0, k)))

    em1_or_exp = wrap(em1_or_exp)

    def log1p_small(z):  # log1p(z), 0 < z <= 1: 2 atanh(z / (2 + z))
        s = z / (2.0 + z)
        w = s * s
        q = catanh[0]
        for i in range(1, 16):
            q = q * w + catanh[i]
        return (2.0 * s) * q

    log1p_small = wrap(log1p_small)

    def ends(y, eps):
        d = np.abs(y) * eps
        return y - d, y + d

    ends = wrap(ends)

    def far_ends(x, top, bottom, lo, hi):
        """``[lo, hi]``, or the far enclosures of a positive value: ``[2**1001, inf)`` for
        ``x > top``, ``(0, 2**-1001]`` for ``x < bottom`` (``x`` finite)."""
        up, down = (x > top) & (x < INF), (x < bottom) & (x > -INF)
        return (sel(up, BIG_LO, sel(down, FAR_LO, lo)), sel(up, BIG_HI, sel(down, FAR_HI, hi)))

    far_ends = wrap(far_ends)

    def near_grid(p, split):
        """Whether the float64 ``p`` is a ``P``-bit number (``split = 2**(53-P) + 1``:
        Veltkamp's splitting rounds ``p`` to ``P`` bits, exactly for ``|p| < 2**900``)."""
        c = p * split
        return (c - (c - p)) == p

    near_grid = wrap(near_grid)

    def cell_ends(p, side, split, rel):
        """The tail ``p`` plus a rest of sign ``side`` (value terms) below ``0.55 rel |p|``
        (``2**-50 <= rel <= 2**-(P+8)``, ``P <= 50``; ``p`` normal, within ``2**+-999``; the
        rounding of ``p + side |p| rel`` is at most ``2**-53 |p| < 0.45 rel |p|``):
        ``[p, p + side |p| rel]`` (ordered), an enclosure, where ``p`` is no ``P``-bit number;
        where it is one, ``p + side |p| 2**-52`` and ``p + side |p| 2**-51``, two floats 1 to 2
        and 2 to 4 float64 steps from ``p`` on that side, strictly inside the cell next to
        ``p`` there (it spans at least 8 steps), which holds the value: a **witness** of the
        value's cell, which decide settles as that cell."""
        on = near_grid(p, split)
        m = np.abs(p)
        a = sel(on, p + side * (m * 2.0**-52), p)
        b = sel(on, p + side * (m * 2.0**-51), p + side * (m * rel))
        return sel(a < b, a, b), sel(a < b, b, a)

    cell_ends = wrap(cell_ends)

    def k_exp(x, t0, t1, t2):  # t0: the tail 2**-(P+9)
        a = np.abs(x)
        served = (a <= CORE) & (a >= t0)
        lo, hi = ends(expk(sel(served, x, 0.0)), EPS_EXP)
        lo, hi = far_ends(x, CORE, -CORE, lo, hi)
        tail = (a < t0) & (x != 0.0)  # 1 plus a rest of x's sign below 2**-(P+8)
        point = (x == 0.0) | (x != x) | (a == INF) | tail
        pv = sel((x == 0.0) | tail, 1.0, sel(x > 0.0, INF, sel(x < 0.0, 0.0, NAN)))
        return (sel(point, pv, lo), sel(point, pv, hi), (1.0 * tail) * (2.0 * (x > 0.0) - 1.0),
                sel(a < INF, 1.0, sel(point, 1.0, 0.0)))

    def k_exp2(x, t0, t1, t2):  # t0: the tail 2**-(P+9)
        a = np.abs(x)
        inr = (x >= -1022.0) & (x <= 1023.0)  # 2**k normal for the integers k
        xs = sel(inr, x, 0.0)
        k = np.floor(xs + 0.5)
        y = ldexp(poly_exp((xs - k) * LN2), k)  # exactly 2**k where x = k
        lo, hi = ends(y, EPS_EXP)
        integer = np.floor(x) == x
        # exact powers beyond float64 (2**k, k >= 1024 or k <= -1075): held far, as the MPFR
        # path holds them for calls of at most 51 bits (_mpfr._from_binaries' hold_far); the
        # subnormal ones (-1074 <= k <= -1023) are MPFR's
        big = integer & ((x >= 1024.0) | (x <= -1075.0))
        lo, hi = far_ends(sel(integer & np.logical_not(big), 0.0, x), 1020.0, -1020.0, lo, hi)
        tail = (a < t0) & (x != 0.0)
        ipoint = inr & integer
        point = ipoint | (x != x) | (a == INF) | tail
        pv = sel(ipoint, y, sel(tail, 1.0, sel(x > 0.0, INF, sel(x < 0.0, 0.0, NAN))))
        served = (a < INF) & np.logical_not(integer & np.logical_not(inr | big))
        return (sel(point, pv, lo), sel(point, pv, hi), (1.0 * tail) * (2.0 * (x > 0.0) - 1.0),
                sel(served | point, 1.0, 0.0))

    def k_expm1(x, t0, t1, t2):  # t0: the tiny tail 2**-(P+8); t1: -(P+9) ln2; t2: split
        a = np.abs(x)
        small = a <= RHO
        inr = (x >= -50.0) & (x <= CORE)
        y = em1_or_exp(small, sel(inr, x, 1.0))
        lo, hi = ends(sel(small, y, y - 1.0), sel(small, EPS_EM1S, EPS_EM1))
        lo, hi = far_ends(x, CORE, -INF, lo, hi)
        tiny = (a < NEAR0) & (x != 0.0)  # |expm1(x)| < |x|(1 + |x|): below 2**-1001
        lo, hi = sel(tiny & (x < 0.0), -FAR_HI, sel(tiny, FAR_LO, lo)), \
            sel(tiny & (x < 0.0), -FAR_LO, sel(tiny, FAR_HI, hi))
        # x + x**2/2 + ...: x plus a positive rest below 2**-(P+8) relative; -1 + e**x
        low = (a < t0) & (a >= TINY_ARG) & near_grid(x, t2)  # (elsewhere the series)
        neg = (x < t1) & (x > -INF)
        served = (inr & (a >= TINY_ARG)) | (x > CORE) | tiny
        point = (x == 0.0) | (x != x) | (a == INF) | low | neg
        pv = sel((x == 0.0) | low, x, sel(x > 0.0, INF, sel(x < 0.0, -1.0, NAN)))
        return (sel(point, pv, lo), sel(point, pv, hi), sel(low | neg, 1.0, 0.0),
                sel(served | point, 1.0, 0.0))

    def k_tanh(x, t0, t1, t2):  # t0: tiny tail 2**-ceil((P+8)/2); t1: (P+10) ln2/2; t2: split
        a = np.abs(x)
        small = a <= 0.17325  # 2a <= RHO
        served = (a >= TINY_ARG) & (a <= 22.0)
        m = em1_or_exp(small, -2.0 * sel(served, a, 1.0))  # expm1(-2a), or e**-2a
        Y = m
        y = sel(small, -m, 1.0 - Y) / sel(small, 2.0 + m, 1.0 + Y)
        lo, hi = ends(y, EPS_TANH)
        # a >= 1: 1 - t, t = 2Y / (1 + Y) <= 0.24, each end moved out by 2**-53 (>= the
        # rounding of 1 - t, at most 2**-54 in [0.5, 1]): decides up to 1 - tanh ~ 2**-51
        tlo, thi = ends((2.0 * Y) / (1.0 + Y), EPS_T)
        big = a >= 1.0
        lo, hi = sel(big, (1.0 - thi) - U, lo), sel(big, (1.0 - tlo) + U, hi)
        neg = x < 0.0
        lo, hi = sel(neg, -hi, lo), sel(neg, -lo, hi)
        tiny = (a < NEAR0) & (x != 0.0)  # |tanh x| < |x|: below 2**-1001
        lo, hi = sel(tiny & neg, -FAR_HI, sel(tiny, FAR_LO, lo)), \
            sel(tiny & neg, -FAR_LO, sel(tiny, FAR_HI, hi))
        # x - x**3/3 + ...: x plus a rest toward zero; +-1 minus 2 e**-2a (1 - ...)
        low = (a < t0) & (a >= TINY_ARG) & near_grid(x, t2)  # (elsewhere the series)
        high = (a > t1) & (a < INF)
        point = (x == 0.0) | (x != x) | (a == INF) | low | high
        pv = sel((x == 0.0) | low, x, sel(x > 0.0, 1.0, sel(x < 0.0, -1.0, NAN)))
        return (sel(point, pv, lo), sel(point, pv, hi), (1.0 * (low | high)) * (1.0 - 2.0 * (x > 0.0)),
                sel(served | tiny | point, 1.0, 0.0))

    def k_sigmoid(x, t0, t1, t2):  # t0: the tail threshold at P; t1, t2: see _witness
        a = np.abs(x)
        served = (x != 0.0) & (x <= t0) & (x >= -CORE)
        Y = expk(-sel(served, a, 1.0))
        den = 1.0 + Y
        lo, hi = ends(sel(x > 0.0, 1.0 / den, Y / den), EPS_SIG)
        # |x| < 2**-(P+9): 1/2 + tanh(x/2)/2, a rest of x's sign below |x|/2 relative
        wlo, whi = cell_ends(0.5, (2.0 * (x > 0.0) - 1.0), t2, 2.0**-50)  # (1/2: a P-bit number)
        small = a < t1
        lo, hi = sel(small, wlo, lo), sel(small, whi, hi)
        # |x| < 2**-11, P <= 36: p - x**3/48 + ..., p = 1/2 + x/4; where p is exact (p - 1/2
        # is, by Sterbenz) and a P-bit number, the rest (of sign -x, below |x|**3/24 <
        # 2**-37.5 relative) stays in the cell next to p (at least 2**-37 relative): a witness
        p = 0.5 + 0.25 * x
        pw = (a < 2.0**-11) & (t1 >= 2.0**-45) & (p - 0.5 == 0.25 * x) & near_grid(p, t2)
        plo, phi = cell_ends(p, (1.0 - 2.0 * (x > 0.0)), t2, 2.0**-50)
        lo, hi = sel(pw & np.logical_not(small), plo, lo), sel(pw & np.logical_not(small), phi, hi)
        far = x < -CORE  # sigmoid(x) < e**x < 2**-1021 (and -inf: its point below)
        lo, hi = sel(far, FAR_LO, lo), sel(far, FAR_HI, hi)
        tail = (x > t0) & (x < INF)
        point = (x == 0.0) | (x != x) | (a == INF) | tail
        pv = sel(x == 0.0, 0.5, sel(x > 0.0, 1.0, sel(x < 0.0, 0.0, NAN)))
        return (sel(point, pv, lo), sel(point, pv, hi), sel(tail, -1.0, 0.0),
                sel(served | far | point, 1.0, 0.0))

    def k_silu(x, t0, t1, t2):  # t0: the tail threshold at P; t1, t2: see _witness
        a = np.abs(x)
        served = (a >= TINY_ARG) & (x <= t0) & (x >= -CORE)
        Y = expk(-sel(served, a, 1.0))
        den = 1.0 + Y
        xs = sel(served, x, 1.0)
        lo, hi = ends(xs * sel(x > 0.0, 1.0 / den, Y / den), EPS_SIG)
        # |x| < 2**-(P+9): x/2 + x**2/4 - ...: x/2 plus a positive rest below 0.51 |x| relative
        wlo, whi = cell_ends(0.5 * xs, 1.0, t2, sel(a > 2.0**-50, a, 2.0**-50))
        small = a < t1
        lo, hi = sel(small, wlo, lo), sel(small, whi, hi)
        far = x < -CORE  # |x| e**x < e**-701 < 2**-1000
        lo, hi = sel(far, -FAR_HI, lo), sel(far, -FAR_LO, hi)
        tail = (x > t0) & (x < INF)
        point = (x == 0.0) | (x != x) | (a == INF) | tail
        pv = sel(x == 0.0, x, sel(x > 0.0, x, sel(x < 0.0, -0.0, NAN)))
        return (sel(point, pv, lo), sel(point, pv, hi), sel(tail, -1.0, 0.0),
                sel(served | far | point, 1.0, 0.0))

    def k_softplus(x, beta, thr, t2):  # beta in [2**-8, 2**8]
        v = x * beta  # fl(beta x): its comparisons with thr and 64 are exact unless equal
        ident = v > thr
        edge = (v == thr) | ((v == 64.0) & np.logical_not(ident))
        near = (v > 64.0) & np.logical_not(ident)
        mid = (v >= -700.0) & (v <= 64.0) & np.logical_not(ident | edge)
        vs = sel(mid, v, 0.0)
        z = expk(-np.abs(vs))
        f = sel(vs > 0.0, vs + log1p_small(z), log1p_small(z)) / beta
        lo, hi = ends(f, sel(vs < -64.0, EPS_SP_FAR, EPS_SP))
        finite = np.abs(x) < INF
        point = ((ident | near) & finite) | np.logical_not(finite)
        pv = sel(finite, x, sel(x > 0.0, INF, sel(x < 0.0, 0.0, NAN)))
        # v < -700: softplus(x) < e**v / beta <= 2**8 e**-700 < 2**-1000
        far = (v < -700.0) & finite
        lo, hi = sel(far, FAR_LO, lo), sel(far, FAR_HI, hi)
        rest = sel(near & finite, 1.0, 0.0)
        ok = sel((mid & finite) | far | point, 1.0, 0.0)
        return sel(point, pv, lo), sel(point, pv, hi), rest, ok

    def k_sinh(x, t0, t1, t2):  # t0: the tiny tail 2**-ceil((P+8)/2); t1: split
        a = np.abs(x)
        small = a <= RHO
        served = (a >= TINY_ARG) & (a <= CORE)
        # e**a - e**-a = E + E / (1 + E), E = expm1(a): no cancellation; or e**a
        E = em1_or_exp(small, sel(served, a, 1.0))
        Y = E
        y = sel(small, E + E / (1.0 + E), Y - 1.0 / Y) * 0.5
        lo, hi = ends(y, EPS_SINH)
        lo, hi = far_ends(a, CORE, -INF, lo, hi)
        tiny = (a < NEAR0) & (x != 0.0)  # |sinh x| < 2 |x|: below 2**-1001
        lo, hi = sel(tiny, FAR_LO, lo), sel(tiny, FAR_HI, hi)
        neg = x < 0.0
        lo, hi = sel(neg, -hi, lo), sel(neg, -lo, hi)
        # x + x**3/6 + ...: a rest of x's sign (where x is a P-bit number; else the series)
        low = (a < t0) & (a >= TINY_ARG) & near_grid(x, t1)
        point = (x == 0.0) | (x != x) | (a == INF) | low
        return (sel(point, x, lo), sel(point, x, hi), (1.0 * low) * (2.0 * (x > 0.0) - 1.0),
                sel(served | tiny | (a < INF) & (a > CORE) | point, 1.0, 0.0))

    def k_cosh(x, t0, t1, t2):  # t0: the tiny tail 2**-ceil((P+8)/2)
        a = np.abs(x)
        small = a <= RHO
        served = (a <= CORE) & (a >= t0)
        E = em1_or_exp(small, sel(served, a, 1.0))  # cosh a - 1 = E**2 / (2 (1 + E)); or e**a
        Y = E
        ys = 1.0 + (E * E) / (2.0 * (1.0 + E))
        yl = (Y + 1.0 / Y) * 0.5
        lo, hi = ends(sel(small, ys, yl), sel(small, EPS_COSHS, EPS_COSH))
        lo, hi = far_ends(a, CORE, -INF, lo, hi)
        low = (a < t0) & (x != 0.0)  # 1 + x**2/2 + ...: 1 plus a positive rest
        point = (x == 0.0) | (x != x) | (a == INF) | low
        pv = sel((x == 0.0) | low, 1.0, a)
        return (sel(point, pv, lo), sel(point, pv, hi), sel(low, 1.0, 0.0),
                sel((a < INF) | point, 1.0, 0.0))

    def k_mish(x, t0, t1, t2):  # t0: the tail threshold at P, halved, plus 1; t1, t2: _witness
        a = np.abs(x)
        served = (a >= TINY_ARG) & (x <= t0) & (x >= -CORE)
        xs = sel(served, x, 1.0)
        u = expk(xs)
        w = (u * u + 2.0 * u) + 2.0
        g = sel(xs > 0.0, 1.0 - 2.0 / w, (u * (u + 2.0)) / w)
        lo, hi = ends(xs * g, EPS_MISH)
        # |x| < 2**-(P+9): 3x/5 + 8x**2/25 + ... (tanh(ln 2) = 3/5, sech(ln 2)**2 = 16/25):
        # where 3x/5 is a P-bit number (3x exact, p = fl(3x/5) of at most 50 bits, so 5p is
        # exact and equal to 3x), a positive rest below 0.54 |x| relative; elsewhere the core
        t = 3.0 * xs
        p = t / 5.0
        wlo, whi = cell_ends(p, 1.0, t2, sel(a > 2.0**-50, a, 2.0**-50))
        small = (a < t1) & (t - 2.0 * xs == xs) & near_grid(p, t2) & (5.0 * p == t)
        lo, hi = sel(small, wlo, lo), sel(small, whi, hi)
        far = x < -CORE  # |x| g < 1.5 |x| e**x < 2**-1000
        lo, hi = sel(far, -FAR_HI, lo), sel(far, -FAR_LO, hi)
        tail = (x > t0) & (x < INF)
        point = (x == 0.0) | (x != x) | (a == INF) | tail
        pv = sel(x == 0.0, x, sel(x > 0.0, x, sel(x < 0.0, -0.0, NAN)))
        return (sel(point, pv, lo), sel(point, pv, hi), sel(tail, -1.0, 0.0),
                sel(served | far | point, 1.0, 0.0))

    return SimpleNamespace(sinh=wrap(k_sinh), cosh=wrap(k_cosh), mish=wrap(k_mish),
                           exp=wrap(k_exp), exp2=wrap(k_exp2), expm1=wrap(k_expm1),
                           tanh=wrap(k_tanh), sigmoid=wrap(k_sigmoid), silu=wrap(k_silu),
                           softplus=wrap(k_softplus))


#: ``2**j``, j = -1022..1023: ``y * POW2[k + 1022]`` is ``ldexp(y, k)``, exact where the product
#: is normal (every served lane; the index is clamped for the others). Faster than numba's
#: ``math.ldexp`` (a libm call) by a factor of ten.
POW2 = np.ldexp(1.0, np.arange(-1022, 1024))


def _np_ldexp(y, k):
    return y * POW2[np.clip(np.asarray(k).astype(np.int64), -1022, 1023) + 1022]


@functools.cache
def _numpy_kernels():
    return _build(np.where, _np_ldexp, lambda f: f)


@functools.cache
def _compiled_kernels():
    """The kernels and their loops compiled by numba (first use only; never at import)."""
    nb = _jit._numba()
    # error_model "numpy": no zero-division check per "/" (no lane divides by zero; the check
    # is a branch per division that keeps the loop from being vectorized)
    njit = nb.njit(nogil=True, error_model="numpy")

    @nb.njit(inline="always")
    def sel(c, a, b):  # pragma: no cover - compiled
        return a if c else b

    pow2 = POW2

    @nb.njit(inline="always")
    def ldexp(y, k):  # pragma: no cover - compiled
        return y * pow2[min(max(int(k), -1022), 1023) + 1022]

    kernels = _build(sel, ldexp, njit)
    return SimpleNamespace(**{name: _loop(nb, k) for name, k in vars(kernels).items()})


def _loop(nb, kern):
    def loop(x, t0, t1, t2, lo, hi, rest, ok):  # pragma: no cover - compiled
        for i in range(x.size):
            a, b, c, d = kern(x[i], t0, t1, t2)
            lo[i] = a
            hi[i] = b
            rest[i] = c  # (float64: a conversion to int8 here keeps the loop from vectorizing)
            ok[i] = d != 0.0

    return nb.njit(nogil=True, error_model="numpy")(loop)


def _run(name: str, x, t0=0.0, t1=0.0, t2=0.0) -> Enclosed:
    """The kernel ``name`` over the float64 array ``x``: compiled where numba runs, else the
    numpy twin."""
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    if _jit.enabled():
        lo, hi = np.empty(x.size), np.empty(x.size)
        rest, ok = np.empty(x.size), np.empty(x.size, bool)
        getattr(_compiled_kernels(), name)(x, float(t0), float(t1), float(t2), lo, hi, rest, ok)
        return Enclosed(lo, hi, rest.astype(np.int8), ok)
    with np.errstate(all="ignore"):  # the lanes not taken may overflow; never selected
        got = getattr(_numpy_kernels(), name)(x, t0, t1, t2)
    lo, hi, rest, ok = (np.broadcast_to(np.asarray(g, np.float64), x.shape) for g in got)
    return Enclosed(np.array(lo), np.array(hi), rest.astype(np.int8), ok != 0)


def _tail(P: int) -> float:
    from ._functions import _tail_threshold  # the MPFR path's own threshold

    return _tail_threshold(P)


# ================================================================ the registered enclosures
def _split(P: int) -> float:
    """Veltkamp's splitter ``2**(53-P) + 1`` (``near_grid``: is a float64 a P-bit number?)."""
    return 2.0 ** (53 - P) + 1.0


def _small(P: int) -> float:
    """``2**-ceil((P+8)/2)``: below it, ``x**2 < 2**-(P+8)`` (the tails of tanh, sinh, cosh)."""
    return 2.0 ** -((P + 9) // 2)  # (P + 9) // 2 = ceil((P + 8) / 2)


@encloses("exp")
def ENCLOSE_EXP(x, P, params):
    """exp: the core, ``E1`` (see the module's docstring)."""
    return _run("exp", x, 2.0 ** -(P + 9))


@encloses("exp2")
def _enclose_exp2(x, P, params):
    return _run("exp2", x, 2.0 ** -(P + 9))


@encloses("expm1")
def _enclose_expm1(x, P, params):
    return _run("expm1", x, 2.0 ** -(P + 8), -(P + 9) * LN2, _split(P))


@encloses("tanh")
def _enclose_tanh(x, P, params):
    return _run("tanh", x, _small(P), (P + 10) * LN2 / 2, _split(P))


def _witness(P: int) -> tuple[float, float]:
    """The compositions' tails at tiny ``x`` (sigmoid, silu, mish): ``(t1, t2)``, the threshold
    ``2**-(P+9)`` (0: none, for ``P > 50``, where a cell spans too few float64 steps for a
    witness) and Veltkamp's splitter ``2**(53-P) + 1``."""
    return (2.0 ** -(P + 9) if P <= 50 else 0.0), _split(P)


@encloses("sigmoid")
def _enclose_sigmoid(x, P, params):
    return _run("sigmoid", x, _tail(P), *_witness(P))


@encloses("silu")
def _enclose_silu(x, P, params):
    return _run("silu", x, _tail(P), *_witness(P))


@encloses("softplus")
def _enclose_softplus(x, P, params):
    """softplus for ``beta`` in ``[2**-8, 2**8]`` (other parameters: None, MPFR)."""
    beta, threshold = float(params["beta"]), float(params["threshold"])
    if not 2.0**-8 <= beta <= 2.0**8 or threshold != threshold:
        return None
    return _run("softplus", x, beta, threshold)


@encloses("sinh")
def _enclose_sinh(x, P, params):
    return _run("sinh", x, _small(P), _split(P))


@encloses("cosh")
def _enclose_cosh(x, P, params):
    return _run("cosh", x, _small(P))


@encloses("mish")
def _enclose_mish(x, P, params):
    return _run("mish", x, _tail(P) / 2 + 1, *_witness(P))
