"""Enclosures (:mod:`._enclose`) of the log family: ``log``, ``log2``, ``log10``, ``log1p``.

Each ``enclose(x, P, params)`` takes any float64 1-D array and returns, per element, an
interval ``[lo, hi]`` holding the exact value, a point (the exact value is a float64: the
specials, ``log(1) = 0``, ``log2(2**k) = k``, ``log10(10**k) = k``), or ``ok`` False (left to
MPFR). Only IEEE 754 float64 ``+ - * /``, comparisons and ``frexp`` are used (no libm): every
step's rounding error is bounded below with the standard model ``fl(a op b) = (a op b)(1 + d)``,
``|d| <= u = 2**-53``, and summed. The derivations are also in ``docs/enclosures_log.md``.

The core: ``log(m)`` for ``m`` in ``[c, 2c)``, ``c = fl(sqrt(1/2))``
---------------------------------------------------------------------
``frexp`` writes a positive finite ``x`` (subnormals included) as ``m 2**e``, ``m`` in
``[1/2, 1)``; where ``m < c`` take ``2m`` and ``e - 1``: now ``m`` lies in ``[c, 2c)``, exactly,
and ``|e| <= 1074``. ``f = m - 1`` is exact (Sterbenz: ``1/2 <= m <= 2``). ``log(m) = 2
atanh(s)``, ``s = f / (m + 1)``, ``|s| <= 0.1716``; the computed ``s`` is off by at most
``(2u + u**2) / (1 - u) < 2.0001u`` relative, which moves ``atanh`` by at most ``1/(1 - s**2)
<= 1.0303`` times that: ``2.07u``. ``atanh(s) = s q(z)``, ``z = s**2 <= 0.02944``, ``q(z) =
sum z**k / (2k + 1)``, taken to ``k = 9`` by Horner in float64: the omitted tail is at most
``z**10 / 21 / (1 - z) < 2**-55``, i.e. ``0.25u`` relative (``q >= 1``); Horner on nonnegative
coefficients and ``z >= 0`` errs by at most ``gamma_18 < 18.01u`` relative, the rounded
coefficients ``fl(1/(2k+1))`` add ``u``, and the rounding of ``z`` (``5u`` in ``z``) moves ``q``
by at most ``z q'(z) / q <= 0.0101`` times that (``0.05u``); ``2s`` is exact and ``(2s) q``
rounds once (``u``). So ``lm``, the computed ``log(m)``, is within **23u** relative of ``log(m)``,
and ``|log(m)| <= 0.34658``. Where ``m = 1`` (``x`` a power of two), ``lm = 0`` exactly.

log, log2, log10
----------------
``log(x) = e ln2 + log(m)``, with ``ln2 = L_hi + L_lo + dL``: ``L_hi`` has 42 significant bits,
so ``e L_hi`` is exact; ``|L_lo| < 2**-44`` and ``|dL| <= u |L_lo|``. Computed: ``t = fl(fl(e
L_lo) + lm)``, ``y = fl(e L_hi + t)``. For ``e = 0``, ``y = lm`` (error 23u). For ``|e| >= 1``,
``|log x| >= 0.693|e| - 0.3466 >= max(0.3466, 0.3466 |e|)``, hence ``|lm| <= |log x|``, ``|e
L_lo| < 2**-42 |log x|``, and the error is at most ``(23 + 1 + 1 + 2**-40)u |log x|`` (the
roundings of ``t`` and ``y`` and of ``e L_lo``, ``e dL`` far below): **25.1u**.

``log2(x) = e + log(m) / ln2``: ``t = fl(lm * fl(1/ln2))`` (``23u + 2u``), ``y = fl(e + t)``;
``|log(m) / ln2| <= 0.5 <= |log2 x|`` for ``e != 0``: **26.1u**. Where ``m = 1``, ``y = e``
exactly: the point ``log2(2**k) = k``.

``log10(x) = e log10(2) + log(m) log10(e)``, ``log10(2)`` split as ``ln2`` (42 bits, ``|lo| <
2**-45``), ``log10(e) = fl(1/ln10)``: ``t = fl(fl(e G_lo) + fl(lm * fl(log10 e)))``, ``y = fl(e
G_hi + t)``; ``|lm log10 e| <= 0.1506 <= |log10 x|`` for ``e != 0``: **27.1u**. Where ``x =
10**k`` (``0 <= k <= 22``, the powers of ten that are float64 numbers; no other float has a
rational ``log10``), the point ``k``.

log1p
-----
For ``x`` in ``[-0.29, 0.41]`` (``1 + x`` in ``[0.71, 1.41]`` inside ``[c, 2c)``): ``log1p(x) = 2
atanh(s)``, ``s = x / (2 + x)``, the same core with ``s`` off by ``2.0001u``: **23u**. Elsewhere
(``x > 0.41`` or ``-1 < x < -0.29``): ``v = fl(1 + x)`` and its rounding error ``c`` (``v + c = 1
+ x`` exactly, by TwoSum: six exact-error float64 operations), ``log1p(x) = log(v) + log(1 +
c/v)``, ``|c / v| <= u``, and ``log(1 + d) = d`` within ``d**2 <= 2**-106``: ``y = fl(e L_hi +
fl(fl(fl(e L_lo) + lm) + fl(c / v)))``; here ``|log1p x| >= 0.3425``, so ``|lm| <= 1.012
|log1p x|`` and the error is at most ``(23 * 1.012 + 3.1)u``: **26.4u**. ``|x| < 2**-960`` is
left to MPFR (the value would be near float64's subnormals).

Every bound above is below ``32u = 2**-48`` (:data:`EPS`): the enclosure is ``y -+ |y| (2**-48 +
2**-51)`` (:func:`._enclose.from_relative`; the error is relative to the exact value, and ``2**-51``
covers that and the two roundings of forming the ends). The tests check ``lo <= f(x) <= hi``
against MPFR at 256 bits, and the decided values against the MPFR path bit for bit.

Each enclosure has a compiled twin (numba, :mod:`._jit`): one loop doing the same float64
operations in the same order per element, so ``lo`` and ``hi`` are identical.

>>> import numpy as np
>>> got = enclose_log(np.array([1.0, 2.0, -1.0, 0.0]), 26, None)
>>> bool(got.lo[1] < 0.6931471805599453 < got.hi[1]), got.lo[[0, 3]].tolist()
(True, [0.0, -inf])
"""

from __future__ import annotations

import math

import numpy as np

from . import _enclose, _jit
from ._enclose import Enclosed, encloses

__all__ = ["EPS", "enclose_log", "enclose_log2", "enclose_log10", "enclose_log1p"]

#: The relative error bound of every enclosure of this module (the largest derived is 26.4u).
EPS = 2.0**-48
_SLACK = EPS + 2.0**-51  # from_relative's: the bound plus the roundings of forming the ends

_C = float.fromhex("0x1.6a09e667f3bcdp-1")        # fl(sqrt(1/2))
_LN2_HI = float.fromhex("0x1.62e42fefa3800p-1")   # ln 2, 42 significant bits
_LN2_LO = float.fromhex("0x1.ef35793c76730p-45")  # fl(ln 2 - _LN2_HI)
_LG2_HI = float.fromhex("0x1.34413509f7800p-2")   # log10(2), 42 bits
_LG2_LO = float.fromhex("0x1.fef311f12b358p-46")  # fl(log10(2) - _LG2_HI)
_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")  # fl(1 / ln 2)
_INV_LN10 = float.fromhex("0x1.bcb7b1526e50ep-2")  # fl(1 / ln 10) = fl(log10(e))
#: q(z) = sum z**k / (2k + 1), k = 0..9 (Horner from the last)
_Q = tuple(1.0 / (2 * k + 1) for k in range(10))
#: The float64 powers of ten, 10**0 .. 10**22 (exact)
_POW10 = np.array([10.0**k for k in range(23)])
_TINY_IN = 2.0**-960

# the kinds of the shared loop
_LOG, _LOG2, _LOG10, _LOG1P = 0, 1, 2, 3


# ========================================================================= numpy twin
def _atanh2(s):
    """``2 atanh(s)`` for ``|s| <= 0.1716`` (within 21u + the error of ``s`` times 1.03)."""
    z = s * s
    q = _Q[-1]
    for c in _Q[-2::-1]:
        q = c + z * q
    return (2.0 * s) * q


def _log_m(v):
    """``(lm, e)``: ``v = m 2**e`` with ``m`` in ``[c, 2c)`` and ``lm`` the computed
    ``log(m)`` (float64 ``e``)."""
    m, e = np.frexp(v)
    low = m < _C
    m = np.where(low, m * 2.0, m)
    e = (e - low).astype(np.float64)
    f = m - 1.0
    return _atanh2(f / (m + 1.0)), e, f == 0.0


def _enclose_numpy(x, kind):
    n = x.size
    lo = np.empty(n)
    hi = np.empty(n)
    ok = np.ones(n, bool)
    with np.errstate(all="ignore"):
        if kind == _LOG1P:
            direct = (x >= -0.29) & (x <= 0.41)
            regular = (x > -1.0) & (x < np.inf) & (np.abs(x) >= _TINY_IN)
            ok &= ~((x != 0) & (np.abs(x) < _TINY_IN))
            xs = np.where(regular, x, 1.0)
            # TwoSum: v + c = 1 + x exactly
            v = 1.0 + xs
            bb = v - xs
            aa = v - bb
            c = (xs - aa) + (1.0 - bb)
            lm, e, _ = _log_m(np.where(direct, 1.0, v))
            s = xs / (2.0 + xs)
            y_direct = _atanh2(s)
            t = (e * _LN2_LO + lm) + c / v
            y = np.where(direct, y_direct, e * _LN2_HI + t)
            exact = np.zeros(n, bool)
        else:
            regular = (x > 0.0) & (x < np.inf)
            xs = np.where(regular, x, 1.0)
            lm, e, unit = _log_m(xs)
            if kind == _LOG:
                y = e * _LN2_HI + (e * _LN2_LO + lm)
                exact = xs == 1.0
            elif kind == _LOG2:
                y = e + lm * _INV_LN2
                exact = unit
            else:
                y = e * _LG2_HI + (e * _LG2_LO + lm * _INV_LN10)
                k = np.searchsorted(_POW10, xs)
                exact = _POW10[np.minimum(k, _POW10.size - 1)] == xs
                y = np.where(exact, k.astype(np.float64), y)
        d = np.abs(y) * _SLACK
        lo[:] = np.where(exact, y, y - d)
        hi[:] = np.where(exact, y, y + d)
        sp = _specials(x, kind)
        lo[:] = np.where(regular, lo, sp)
        hi[:] = np.where(regular, hi, sp)
    return Enclosed(lo, hi, ok=ok)


def _specials(x, kind):
    """The values where the input is not regular (NaN, the domain's ends, outside it)."""
    if kind == _LOG1P:
        return np.where(x == -1.0, -np.inf, np.where(x < -1.0, np.nan, x))  # ±0, +inf, NaN
    return np.where(x == 0.0, -np.inf, np.where(x == np.inf, np.inf, np.nan))


# ====================================================================== compiled twin
@_jit.jit
def _loop(x, kind, lo, hi, ok):  # pragma: no cover - compiled (numba)
    """The numpy twin's operations, per element."""
    for i in range(x.size):
        xi = x[i]
        if kind == 3:
            if not (xi > -1.0 and xi < math.inf and abs(xi) >= _TINY_IN):
                if xi == -1.0:
                    sp = -math.inf
                elif xi < -1.0:
                    sp = math.nan
                else:
                    sp = xi
                    if xi != 0.0 and abs(xi) < _TINY_IN:
                        ok[i] = False
                lo[i] = sp
                hi[i] = sp
                continue
        elif not (xi > 0.0 and xi < math.inf):
            if xi == 0.0:
                sp = -math.inf
            elif xi == math.inf:
                sp = math.inf
            else:
                sp = math.nan
            lo[i] = sp
            hi[i] = sp
            continue
        direct = kind == 3 and xi >= -0.29 and xi <= 0.41
        v = xi
        c = 0.0
        if kind == 3:
            v = 1.0 + xi
            bb = v - xi
            aa = v - bb
            c = (xi - aa) + (1.0 - bb)
            if direct:
                v = 1.0
        m, ei = math.frexp(v)
        if m < _C:
            m = m * 2.0
            ei -= 1
        e = float(ei)
        f = m - 1.0
        s = f / (m + 1.0)
        if direct:
            s = xi / (2.0 + xi)
        z = s * s
        q = _Q[9]
        for j in range(8, -1, -1):
            q = _Q[j] + z * q
        lm = (2.0 * s) * q
        exact = False
        if kind == 0:
            y = e * _LN2_HI + (e * _LN2_LO + lm)
            exact = xi == 1.0
        elif kind == 1:
            y = e + lm * _INV_LN2
            exact = f == 0.0
        elif kind == 2:
            y = e * _LG2_HI + (e * _LG2_LO + lm * _INV_LN10)
            for k in range(23):
                if _POW10[k] == xi:
                    y = float(k)
                    exact = True
        else:
            if direct:
                y = lm
            else:
                y = e * _LN2_HI + ((e * _LN2_LO + lm) + c / v)
        if exact:
            lo[i] = y
            hi[i] = y
        else:
            d = abs(y) * _SLACK
            lo[i] = y - d
            hi[i] = y + d


def _run(x, kind, P):
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    f = _loop.compiled()
    if f is None:
        got = _enclose_numpy(x, kind)
    else:
        got = Enclosed(np.empty(x.size), np.empty(x.size), ok=np.ones(x.size, bool))
        f(x, kind, got.lo, got.hi, got.ok)
    if kind == _LOG1P:  # log1p(x) < x for every x != 0 in the domain
        with np.errstate(invalid="ignore"):
            below = np.where((x != 0) & (x > -1) & (x < np.inf), x, np.nan)
        _tighten(got, None, below, P)
    return got


def _tighten(got: Enclosed, above, below, P: int) -> None:
    """Where the exact value is known to exceed the float64 ``above`` (to lie below ``below``;
    arrays, NaN where nothing is known) and the enclosure reaches it: the enclosure cut there,
    or the round-to-odd value itself where the cut enclosure settles it.

    The value ``v`` lies strictly between ``lo`` and ``b = below`` (``lo < v < b``); no float64
    may lie in ``(v, b)``, so the cut is ``b' = nextafter(b, -inf)``, which need not hold
    ``v``. Yet where :func:`._enclose.decide` settles ``[lo, b']`` (both in one open cell ``(g1,
    g2)`` between consecutive P-bit numbers), ``g2`` is a float64 above ``b'``, so ``g2 >= b >
    v > lo > g1``: ``v`` lies in that cell and its round-to-odd value is decide's; it is
    returned as a point (``lo == hi``, no rest), exactly the fields the MPFR path writes.
    Elsewhere the enclosure becomes ``[lo, min(hi, b)]`` (and alike for ``above``)."""
    lo, hi = got.lo, got.hi
    with np.errstate(invalid="ignore"):
        cut_hi = np.zeros(lo.size, bool) if below is None else (lo < hi) & (hi >= below)
        cut_lo = np.zeros(lo.size, bool) if above is None else (lo < hi) & (lo <= above)
    idx = np.flatnonzero(cut_hi | cut_lo)
    if not idx.size:
        return
    a, b = lo[idx], hi[idx]
    if below is not None:
        bb = below[idx]
        b = np.where(cut_hi[idx], np.nextafter(bb, -np.inf), b)
    if above is not None:
        aa = above[idx]
        a = np.where(cut_lo[idx], np.nextafter(aa, np.inf), a)
    mant, e, dec = _enclose.decide(a, b, P)
    r = np.ldexp(mant.astype(np.float64), e.astype(np.int32))
    if below is not None:
        hi[idx] = np.where(cut_hi[idx], np.minimum(hi[idx], bb), hi[idx])
    if above is not None:
        lo[idx] = np.where(cut_lo[idx], np.maximum(lo[idx], aa), lo[idx])
    lo[idx] = np.where(dec, r, lo[idx])
    hi[idx] = np.where(dec, r, hi[idx])


@encloses("log")
def enclose_log(x, P, params):
    """The enclosure of ``log`` (see the module's docstring)."""
    return _run(x, _LOG, P)


@encloses("log2")
def enclose_log2(x, P, params):
    """The enclosure of ``log2``."""
    return _run(x, _LOG2, P)


@encloses("log10")
def enclose_log10(x, P, params):
    """The enclosure of ``log10``."""
    return _run(x, _LOG10, P)


@encloses("log1p")
def enclose_log1p(x, P, params):
    """The enclosure of ``log1p``."""
    return _run(x, _LOG1P, P)
