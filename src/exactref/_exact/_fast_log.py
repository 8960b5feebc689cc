"""Enclosures (:mod:`._enclose`) of the log family (``log``, ``log2``, ``log10``, ``log1p``), of
``erf``, ``gelu`` (its erf formula), ``gelu_tanh`` and of ``logit`` (:func:`enclose_logit`).

Each ``enclose(x, P, params)`` takes any float64 1-D array and returns, per element, an
interval ``[lo, hi]`` holding the exact value, a point (the exact value is a float64: the
specials, ``log(1) = 0``, ``log2(2**k) = k``, ``log10(10**k) = k``; or, where the value is
proven to lie inside one cell between consecutive ``P``-bit numbers yet too near its end for a
float64 interval to say so, that cell's round-to-odd value itself, :func:`_tighten`; or the
MPFR path's tails, ``x`` with a rest), or ``ok`` False (left to MPFR). Only IEEE 754 float64 ``+ - * /``, comparisons and ``frexp`` are used (no libm): every
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

erf, gelu (erf formula), gelu_tanh
----------------------------------
The building blocks, each bound derived in ``docs/enclosures_log.md``:

* **Exact squares**: ``x**2 = h + l`` exactly (Dekker's product with Veltkamp's split).
* **exp(-A)**, ``A = h + l >= 0`` a double-double, ``h <= 1100``: ``k = floor(h/ln2 + 1/2)``
  (``|k| < 2**11``, so ``k L_hi`` is exact), ``r = (k L_hi - h) + (k L_lo - l)``, ``|r| <=
  0.35``, off by at most ``0.71u`` (three roundings of quantities below 0.35 and ``2**-42``);
  ``exp(r)`` by its Taylor polynomial of degree 13 in Horner's form: ``gamma_26 + u`` (rounded
  coefficients) times ``p(|r|) / exp(r) <= e**0.7 = 2.014``, plus the truncation ``0.35**14 /
  14! * 2.014 < 0.09u``: ``exp(-A) = q 2**-k`` within **57u**.
* **erf's positive series** for ``0 < z < 1.5``: ``erf(z) = (2/sqrt pi) z exp(-z**2) S``, ``S =
  sum t_n``, ``t_n = t_(n-1) w / (2n+1)``, ``w = 2 fl(z**2)``: each ``t_n`` within ``2n u``
  (two roundings a step), the positive sum within ``N u`` more; ``w`` off by ``u`` moves ``S``
  by at most ``(w/2) u <= 2.25u`` (``w S'(w) <= (w/2) S``); the sum stops at the first ``N`` with
  ``t_N <= 2**-56 S`` and ratio ``w/(2N+3) <= 1/2``, so the rest is below ``t_N``
  (``0.13u``); with ``exp`` (57u), the constant and three products: within **(67 + 3N)u**.
* **erfc's continued fraction** for ``z >= 1.5``: ``erfc(z) = exp(-z**2) F(z) / sqrt(pi)``,
  ``F(z) = 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + ...))))`` (Laplace). Its partial numerators and
  denominators are positive, so consecutive convergents bracket ``F`` (an S-fraction; it
  converges for ``z > 0``): the convergents at ``K`` and ``K + 1`` levels (``K = min(120,
  floor(250 / z**2) + 8)``) are computed by Wallis's forward recurrence ``A_n = z A_(n-1) +
  c_n A_(n-2)`` (``B`` alike) of positive terms (each step adds at most ``2u`` to the relative
  error; the quotient ``A/B`` within ``(4K + 5)u``), and their gap is added to the bound:
  within ``|C_K - C_(K+1)| / C_K + (4K + 75)u`` (with exp, the constant, the products).
  ``F``'s relative sensitivity to ``z`` is below 1 (``z F'/F = -2z / (z + sqrt(z**2 + 2))``
  at worst, by the bounds ``1/(z + sqrt(z**2 + 2)) < F sqrt(pi)/2 <= 1/(z + sqrt(z**2 +
  4/pi))``).
* ``erf(x)``: the series below 1.5; ``1 - erfc`` from 1.5 on (``erfc(1.5) < 0.034``: no
  cancellation); where ``x**2 >= 0.7 (P + 1)``, ``erfc(|x|) <= exp(-x**2) < 2**-(P+1)``: the
  enclosure ``[1 - 2**-(P+1), 1]``, cut at 1 below (see :func:`_tighten`).
* ``gelu(x) = (x/2) erfc(-x/sqrt 2)``: ``z = fl(|x| fl(1/sqrt 2))`` (within ``2.0001u``, which
  moves ``erf(z)`` and ``F(z)`` by at most that, their sensitivities being at most 1), but
  ``exp(-x**2/2)`` from the exact square of ``x``. ``x > 0``: ``(x/2)(1 + erf z)``; ``x < 0``:
  ``(x/2)(1 - erf z)`` below ``z = 1.5`` (the cancellation is in the bound: ``erf``'s absolute
  error over ``erfc``, at most ``30`` times ``erf``'s relative one) and ``(x/2) erfc(z)`` by
  the continued fraction from 1.5 on, down to ``x = -37`` (``|gelu| > 2**-990``). Below
  ``-39.25``, ``|gelu(x)| <= exp(-x**2/2) / sqrt(2 pi) < 2**-1111``: the enclosure is both ends
  below ``2**-1000`` (held as ``-2**-1100``, as the MPFR path holds it); between, MPFR. Beyond
  the MPFR path's tail (``x > sqrt(2 (P + 9) ln 2)``) the point ``x`` with a rest below, as
  that path writes it. ``x/2 < gelu(x)``, and ``gelu(x) < x`` for ``x > 0``: the enclosures
  are cut there (:func:`_tighten`; the values next to ``x/2`` for small ``|x|``, next to ``x``
  near the tail).
* ``gelu_tanh(x) = x sigmoid(z)``, ``z = sqrt(8/pi)(x + 0.044715 x**3)``: ``z`` in
  double-double (the constants as double-double pairs, within ``u**2``; every low part's
  rounding is ``u`` of a quantity ``u`` times smaller: ``z`` within ``2**-100 |z|``), so
  ``exp(-|z|)`` is within ``57u + 2**-90``; ``x > 0``: ``x / (1 + e)``, ``x < 0``: ``x e / (1 +
  e)`` (``sigmoid``'s relative sensitivity to ``e`` is at most 1; three roundings): within
  **62u**. Where ``e**-z < 2**-1009`` (``z > 700``) the value is ``x`` within ``2**-1000``
  relative. Below ``x = -22``, ``|x| e**z < 2**-1142`` (held as ``-2**-1100``); ``[-22, -20)``
  is left to MPFR; the tail and the cuts at ``x/2`` and ``x`` as gelu's.

Every erf/gelu bound is carried per element (it depends on the terms taken) into ``[y - d,
y + d]`` with ``d`` inflated by ``2**-40`` of itself and ``2**-51 |y|`` (the roundings of
forming the bound and the ends, :func:`_ends`).

Every log-family bound above is below ``32u = 2**-48`` (:data:`EPS`): the enclosure is ``y -+ |y| (2**-48 +
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

__all__ = ["EPS", "enclose_log", "enclose_log2", "enclose_log10", "enclose_log1p", "enclose_erf",
           "enclose_gelu", "enclose_gelu_tanh", "enclose_logit"]

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


def _run(x, kind, P, cut=True):
    """The enclosure of the kind's function at ``x`` (``cut``: with log1p's cut at ``x``)."""
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    f = _loop.compiled()
    if f is None:
        got = _enclose_numpy(x, kind)
    else:
        got = Enclosed(np.empty(x.size), np.empty(x.size), ok=np.ones(x.size, bool))
        f(x, kind, got.lo, got.hi, got.ok)
    if kind == _LOG1P and cut:  # log1p(x) < x for every x != 0 in the domain
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


# ====================================================================== erf and gelu
# The derivations: the module's docstring ("erf, gelu") and docs/enclosures_log.md.
_U = 2.0**-53
_SPLIT = 134217729.0                                 # 2**27 + 1 (Veltkamp)
_TWO_OVER_SQRTPI = float.fromhex("0x1.20dd750429b6dp+0")   # fl(2 / sqrt(pi))
_INV_SQRTPI = float.fromhex("0x1.20dd750429b6dp-1")        # fl(1 / sqrt(pi))
_INV_SQRT2 = float.fromhex("0x1.6a09e667f3bcdp-1")         # fl(1 / sqrt(2))
#: exp(r) = sum r**i / i!, i = 0..13 (Horner from the last)
_EXPC = tuple(1.0 / math.factorial(i) for i in range(14))
_NMAX = 48    # the positive series' most terms (z < 1.5 needs at most 30)
_KMAX = 120   # the continued fraction's most levels (z >= 1.5 needs at most 93)
_Z_SERIES = 1.5  # below: erf's positive series; at and above: erfc's continued fraction
_GELU_FAR = -39.25  # below: |gelu(x)| < 2**-1100 (held as -2**-1100, as MPFR's path)
_GELU_LOW = -37.0   # [_GELU_FAR, _GELU_LOW): near 2**-1000..2**-1100, left to MPFR
_ERF, _GELU = 0, 1


def _two_square(a):
    """``(h, lw)``, ``h + lw = a * a`` exactly (Dekker's product, Veltkamp's split; ``|a| <
    2**490``)."""
    c = _SPLIT * a
    a1 = c - (c - a)
    a2 = a - a1
    h = a * a
    return h, (((a1 * a1 - h) + a1 * a2) + a2 * a1) + a2 * a2


def _exp_neg(h, lw):
    """``(q, k)`` with ``exp(-(h + lw)) = q 2**-k`` within 57u relative, for ``0 <= h <= 1100``,
    ``|lw| <= u h``."""
    k = np.floor(h * _INV_LN2 + 0.5)
    r = (k * _LN2_HI - h) + (k * _LN2_LO - lw)
    q = _EXPC[-1]
    for c in _EXPC[-2::-1]:
        q = c + r * q
    return q, k


def _erf_series(z):
    """``(y, eps)``: ``erf(z)`` for ``0 <= z < 1.5`` (``z >= 2**-960``) within ``eps`` relative,
    by ``erf(z) = 2z/sqrt(pi) exp(-z**2) sum (2z**2)**n / (2n+1)!!`` (positive terms); ``eps`` is
    NaN where the series did not settle within :data:`_NMAX` terms."""
    h, lw = _two_square(z)
    q, k = _exp_neg(h, lw)
    w = 2.0 * h
    t = np.ones_like(z)
    s = np.ones_like(z)
    nt = np.zeros_like(z)
    active = np.ones(z.shape, bool)
    for n in range(1, _NMAX + 1):
        t = np.where(active, (t * w) / (2 * n + 1), t)
        s = np.where(active, s + t, s)
        nt = np.where(active, float(n), nt)
        active &= ~((t <= 2.0**-56 * s) & (w <= 0.5 * (2 * n + 3)))
        if not active.any():  # the settled elements change no more
            break
    y = np.ldexp((z * (q * s)) * _TWO_OVER_SQRTPI, -k.astype(np.int32))
    eps = np.where(active, np.nan, (67.0 + 3.0 * nt) * _U)
    return y, eps


def _erfc_cf(z, h, lw):
    """``(y, eps)``: ``erfc(z)`` for ``z >= 1.5``, within ``eps`` relative, as ``exp(-(h + lw))
    F(z) / sqrt(pi)``, ``F`` by the continued fraction ``1/(z + (1/2)/(z + 1/(z + (3/2)/(z +
    ...))))`` cut at levels ``K`` and ``K + 1``, which bracket it; ``h + lw`` is ``z**2``
    (exactly: the caller's)."""
    kk = np.minimum(float(_KMAX), np.floor(250.0 / (z * z)) + 8.0)
    # Wallis's forward recurrence: the n-th convergent is A_n / B_n, A_n = z A_(n-1) + c_n
    # A_(n-2) (B alike), c_1 = 1, c_n = (n-1)/2; K levels are the convergent n = K + 1
    a2, a1 = np.ones_like(z), np.zeros_like(z)
    b2, b1 = np.zeros_like(z), np.ones_like(z)
    top = int(kk.max()) + 2 if kk.size else 0  # beyond every element's n nothing moves
    for n in range(1, top + 1):
        c = 1.0 if n == 1 else 0.5 * (n - 1)
        an = z * a1 + c * a2
        bn = z * b1 + c * b2
        m = n <= kk + 2.0
        a2, a1 = np.where(m, a1, a2), np.where(m, an, a1)
        b2, b1 = np.where(m, b1, b2), np.where(m, bn, b1)
    c1 = a2 / b2
    c2 = a1 / b1
    q, k = _exp_neg(h, lw)
    y = np.ldexp((q * c1) * _INV_SQRTPI, -k.astype(np.int32))
    eps = np.abs(c1 - c2) / c1 + (4.0 * kk + 75.0) * _U
    return y, eps


def _ends(y, d):
    """``[y - d', y + d']``, ``d' = d (1 + 2**-40) + |y| 2**-51``: covers the roundings of
    forming ``d`` (a few, each <= u relative) and of the ends (``<= 2**-52 |y|``)."""
    dd = d * (1.0 + 2.0**-40) + np.abs(y) * 2.0**-51
    return y - dd, y + dd


def _erf_numpy(x, kind, P, thr):
    n = x.size
    lo = np.empty(n)
    hi = np.empty(n)
    ok = np.ones(n, bool)
    rest = np.zeros(n, np.int8)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        fin = np.isfinite(x) & (ax >= _TINY_IN)
        if kind == _GELU:
            fin &= (x >= _GELU_LOW) & (x <= thr)
            z = np.where(fin, ax * _INV_SQRT2, 1.0)
            h, lw = _two_square(np.where(fin, ax, 1.0))
            h, lw = 0.5 * h, 0.5 * lw   # exactly x**2 / 2
        else:
            z = np.where(fin, ax, 1.0)
            h, lw = _two_square(z)
        series = z < _Z_SERIES
        ys, es, yc, ec = (np.full(n, 0.5) for _ in range(4))
        i = np.flatnonzero(fin & series)  # each element takes one of the two ways
        ys[i], es[i] = _erf_series(z[i])
        i = np.flatnonzero(fin & ~series)
        yc[i], ec[i] = _erfc_cf(z[i], h[i], lw[i])
        if kind == _ERF:
            one = 1.0 - yc
            y = np.where(series, ys, one)
            d = np.where(series, np.abs(ys) * es, yc * ec + _U * one)
            y = np.where(x < 0, -y, y)
        else:
            zs = 2.0001 * _U  # z = fl(|x| / sqrt 2): erf and F move by at most that
            pos = x > 0
            half = x * 0.5
            # x > 0: (x/2)(1 + erf(z)); x < 0: (x/2) erfc(z)
            one_s = 1.0 + ys
            one_c = 2.0 - yc
            ec_s = 1.0 - ys
            y_pos = half * np.where(series, one_s, one_c)
            e_pos = np.where(series, es + zs + 3.0 * _U, yc * (ec + zs) + 3.0 * _U)
            y_neg = half * np.where(series, ec_s, yc)
            e_neg = np.where(series, (ys * es + _U * ec_s + _U) / ec_s * (1.0 + 2.0**-40)
                             + 2.0 * _U, ec + zs + 2.0 * _U)
            y = np.where(pos, y_pos, y_neg)
            d = np.abs(y) * np.where(pos, e_pos, e_neg)
        a, b = _ends(y, d)
        good = fin & np.isfinite(d)
        lo[:] = np.where(good, a, np.nan)
        hi[:] = np.where(good, b, np.nan)
        ok &= good
    _erf_edges(x, kind, P, thr, lo, hi, ok, rest)
    return Enclosed(lo, hi, rest, ok)


def _erf_edges(x, kind, P, thr, lo, hi, ok, rest):
    """The points and the ends of the range (shared by both twins): specials, zeros, erf's
    values within 2**-(P+1) of ±1, gelu's tail and underflow."""
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        zero = x == 0
        nan = np.isnan(x)
        inf = np.isinf(x)
        tiny = (ax < _TINY_IN) & ~zero
        if kind == _ERF:
            near1 = (x * x >= (P + 1) * 0.7) & ~inf & ~nan  # erfc(|x|) <= exp(-x**2) < 2**-(P+1)
            sgn = np.where(x < 0, -1.0, 1.0)
            lo[near1] = np.where(x[near1] > 0, 1.0 - 2.0 ** -(P + 1), -1.0)
            hi[near1] = np.where(x[near1] > 0, 1.0, -1.0 + 2.0 ** -(P + 1))
            ok[near1] = True
            sp = np.where(nan, np.nan, np.where(inf, sgn, x))
        else:
            tail = (x > thr) & ~inf
            lo[tail] = x[tail]
            hi[tail] = x[tail]
            rest[tail] = -1
            ok[tail] = True
            far = x < _GELU_FAR
            lo[far & ~inf] = -(2.0**-1001)  # both ends below 2**-1000: held as -2**-1100
            hi[far & ~inf] = -(2.0**-1074)
            ok[far] = True
            ok[(x >= _GELU_FAR) & (x < _GELU_LOW)] = False
            sp = np.where(nan, np.nan, np.where(x == np.inf, np.inf,
                                                np.where(x == -np.inf, -0.0, x)))
        point = nan | inf | zero | tiny
        lo[point] = sp[point]
        hi[point] = sp[point]
        ok[tiny] = False
        ok[nan | inf | zero] = True


@_jit.jit(error_model="numpy")  # a quotient by 0 (huge z, overwritten later) is inf, as numpy's
def _erf_loop(x, kind, thr, lo, hi, ok):  # pragma: no cover - compiled (numba)
    """:func:`_erf_numpy`'s operations per element (before :func:`_erf_edges`)."""

    def exp_neg(h, lw):
        k = math.floor(h * _INV_LN2 + 0.5)
        r = (k * _LN2_HI - h) + (k * _LN2_LO - lw)
        q = _EXPC[13]
        for j in range(12, -1, -1):
            q = _EXPC[j] + r * q
        return q, k

    def two_square(a):
        c = _SPLIT * a
        a1 = c - (c - a)
        a2 = a - a1
        h = a * a
        return h, (((a1 * a1 - h) + a1 * a2) + a2 * a1) + a2 * a2

    for i in range(x.size):
        xi = x[i]
        ax = abs(xi)
        fin = ax < math.inf and ax >= _TINY_IN
        if kind == 1:
            fin = fin and xi >= _GELU_LOW and xi <= thr
        if not fin:
            lo[i] = math.nan
            hi[i] = math.nan
            ok[i] = False
            continue
        if kind == 1:
            z = ax * _INV_SQRT2
            h, lw = two_square(ax)
            h, lw = 0.5 * h, 0.5 * lw
        else:
            z = ax
            h, lw = two_square(z)
        ys = es = yc = ec = 0.0
        series = z < _Z_SERIES
        if series:
            hs, ls = two_square(z)
            q, k = exp_neg(hs, ls)
            w = 2.0 * hs
            t = 1.0
            s = 1.0
            nt = 0.0
            active = True
            for n in range(1, _NMAX + 1):
                if active:
                    t = (t * w) / (2 * n + 1)
                    s = s + t
                    nt = float(n)
                    if t <= 2.0**-56 * s and w <= 0.5 * (2 * n + 3):
                        active = False
            ys = math.ldexp((z * (q * s)) * _TWO_OVER_SQRTPI, -int(k))
            es = math.nan if active else (67.0 + 3.0 * nt) * _U
        else:
            kk = min(float(_KMAX), math.floor(250.0 / (z * z)) + 8.0)
            a2, a1, b2, b1 = 1.0, 0.0, 0.0, 1.0
            for n in range(1, int(kk) + 3):
                c = 1.0 if n == 1 else 0.5 * (n - 1)
                an = z * a1 + c * a2
                bn = z * b1 + c * b2
                a2, a1 = a1, an
                b2, b1 = b1, bn
            c1 = a2 / b2
            c2 = a1 / b1
            q, k = exp_neg(h, lw)
            yc = math.ldexp((q * c1) * _INV_SQRTPI, -int(k))
            ec = abs(c1 - c2) / c1 + (4.0 * kk + 75.0) * _U
        if kind == 0:
            if series:
                y = ys
                d = abs(ys) * es
            else:
                one = 1.0 - yc
                y = one
                d = yc * ec + _U * one
            if xi < 0:
                y = -y
        else:
            zs = 2.0001 * _U
            half = xi * 0.5
            if xi > 0:
                if series:
                    y = half * (1.0 + ys)
                    e = es + zs + 3.0 * _U
                else:
                    y = half * (2.0 - yc)
                    e = yc * (ec + zs) + 3.0 * _U
            else:
                if series:
                    ec_s = 1.0 - ys
                    y = half * ec_s
                    e = (ys * es + _U * ec_s + _U) / ec_s * (1.0 + 2.0**-40) + 2.0 * _U
                else:
                    y = half * yc
                    e = ec + zs + 2.0 * _U
            d = abs(y) * e
        dd = d * (1.0 + 2.0**-40) + abs(y) * 2.0**-51
        if d < math.inf:
            lo[i] = y - dd
            hi[i] = y + dd
        else:
            lo[i] = math.nan
            hi[i] = math.nan
            ok[i] = False


def _run_erf(x, kind, P):
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    thr = _gelu_tail(P) if kind == _GELU else math.inf
    f = _erf_loop.compiled()
    if f is None:
        got = _erf_numpy(x, kind, P, thr)
    else:
        n = x.size
        got = Enclosed(np.empty(n), np.empty(n), np.zeros(n, np.int8), np.ones(n, bool))
        f(x, kind, thr, got.lo, got.hi, got.ok)
        _erf_edges(x, kind, P, thr, got.lo, got.hi, got.ok, got.rest)
    with np.errstate(invalid="ignore"):
        reg = np.isfinite(x) & (x != 0)
        if kind == _ERF:  # -1 < erf(x) < 1
            _tighten(got, np.where(reg & (x < 0), -1.0, np.nan),
                     np.where(reg & (x > 0), 1.0, np.nan), P)
        else:  # x/2 < gelu(x), and gelu(x) < x for x > 0
            _tighten(got, np.where(reg, x * 0.5, np.nan),
                     np.where(reg & (x > 0), x, np.nan), P)
    return got


def _gelu_tail(P: int) -> float:
    """Beyond it the MPFR path writes gelu(x) as ``x`` and a rest below (``_functions._gelu``)."""
    from ._functions import _tail_threshold

    return math.sqrt(2 * _tail_threshold(P))


@encloses("erf")
def enclose_erf(x, P, params):
    """The enclosure of ``erf``."""
    return _run_erf(x, _ERF, P)


@encloses("gelu")
def enclose_gelu(x, P, params):
    """The enclosure of gelu's erf formula, ``(x/2) erfc(-x/sqrt 2)``."""
    return _run_erf(x, _GELU, P)


# ========================================================================== gelu_tanh
_A_HI = float.fromhex("0x1.6e4e26d4801f7p-5")     # 0.044715 = _A_HI + _A_LO (within u**2 a)
_A_LO = float.fromhex("0x1.441355475a31ap-59")
_S8PI_HI = float.fromhex("0x1.9884533d43651p+0")  # sqrt(8/pi) = _S8PI_HI + _S8PI_LO
_S8PI_LO = float.fromhex("-0x1.cbc0d30ebfd15p-54")
_TANH_FAR = -22.0   # below: |gelu_tanh(x)| < 2**-1142 (held as -2**-1100, as MPFR's path)
_TANH_LOW = -20.0   # [_TANH_FAR, _TANH_LOW): left to MPFR
_TANH_EPS = 62.0 * _U


def _two_prod(a, b):
    """``(p, e)``, ``p + e = a * b`` exactly (Dekker; ``|a|, |b| < 2**995``)."""
    c = _SPLIT * a
    a1 = c - (c - a)
    a2 = a - a1
    c = _SPLIT * b
    b1 = c - (c - b)
    b2 = b - b1
    p = a * b
    return p, (((a1 * b1 - p) + a1 * b2) + a2 * b1) + a2 * b2


def _tanh_z(x):
    """``z = sqrt(8/pi) (x + 0.044715 x**3)`` as a double-double ``(zh, zl)``, within
    ``2**-100 |z|``."""
    sh, sl = _two_square(x)
    ch, cl = _two_prod(x, sh)
    cl = cl + x * sl                      # x**3
    ph, pl = _two_prod(_A_HI, ch)
    pl = pl + (_A_HI * cl + _A_LO * ch)   # 0.044715 x**3
    ih = x + ph                           # TwoSum
    bb = ih - x
    aa = ih - bb
    il = ((x - aa) + (ph - bb)) + pl      # x + 0.044715 x**3
    zh, zl = _two_prod(_S8PI_HI, ih)
    zl = zl + (_S8PI_HI * il + _S8PI_LO * ih)
    return zh, zl


def _gelu_tanh_numpy(x, P, thr):
    n = x.size
    lo = np.full(n, np.nan)
    hi = np.full(n, np.nan)
    ok = np.zeros(n, bool)
    with np.errstate(all="ignore"):
        fin = (np.abs(x) >= _TINY_IN) & (x >= _TANH_LOW) & (x <= thr)
        i = np.flatnonzero(fin)
        xs = x[i]
        zh, zl = _tanh_z(xs)
        pos = xs > 0
        far = pos & (zh > 700.0)           # exp(-z) < 2**-1009: gelu_tanh(x) = x (1 - t)
        h = np.where(pos, np.where(far, 0.0, zh), -zh)
        lw = np.where(pos, np.where(far, 0.0, zl), -zl)
        q, k = _exp_neg(h, lw)
        e = np.ldexp(q, -k.astype(np.int32))
        # x > 0: x / (1 + e**-z); x < 0: x e**z / (1 + e**z)
        y = np.where(pos, xs / (1.0 + e), (xs * e) / (1.0 + e))
        y = np.where(far, xs, y)
        d = np.abs(y) * np.where(far, 2.0**-60, _TANH_EPS)
        lo[i], hi[i] = _ends(y, d)
        ok[i] = True
    return lo, hi, ok


@_jit.jit
def _gelu_tanh_loop(x, thr, lo, hi, ok):  # pragma: no cover - compiled (numba)
    """:func:`_gelu_tanh_numpy`'s operations per element."""

    def two_prod(a, b):
        c = _SPLIT * a
        a1 = c - (c - a)
        a2 = a - a1
        c = _SPLIT * b
        b1 = c - (c - b)
        b2 = b - b1
        p = a * b
        return p, (((a1 * b1 - p) + a1 * b2) + a2 * b1) + a2 * b2

    for i in range(x.size):
        xi = x[i]
        if not (abs(xi) >= _TINY_IN and xi >= _TANH_LOW and xi <= thr):
            lo[i] = math.nan
            hi[i] = math.nan
            ok[i] = False
            continue
        c = _SPLIT * xi
        a1 = c - (c - xi)
        a2 = xi - a1
        sh = xi * xi
        sl = (((a1 * a1 - sh) + a1 * a2) + a2 * a1) + a2 * a2
        ch, cl = two_prod(xi, sh)
        cl = cl + xi * sl
        ph, pl = two_prod(_A_HI, ch)
        pl = pl + (_A_HI * cl + _A_LO * ch)
        ih = xi + ph
        bb = ih - xi
        aa = ih - bb
        il = ((xi - aa) + (ph - bb)) + pl
        zh, zl = two_prod(_S8PI_HI, ih)
        zl = zl + (_S8PI_HI * il + _S8PI_LO * ih)
        pos = xi > 0
        far = pos and zh > 700.0
        if pos:
            h, lw = (0.0, 0.0) if far else (zh, zl)
        else:
            h, lw = -zh, -zl
        k = math.floor(h * _INV_LN2 + 0.5)
        r = (k * _LN2_HI - h) + (k * _LN2_LO - lw)
        q = _EXPC[13]
        for j in range(12, -1, -1):
            q = _EXPC[j] + r * q
        e = math.ldexp(q, -int(k))
        if far:
            y = xi
            d = abs(y) * 2.0**-60
        else:
            y = xi / (1.0 + e) if pos else (xi * e) / (1.0 + e)
            d = abs(y) * _TANH_EPS
        dd = d * (1.0 + 2.0**-40) + abs(y) * 2.0**-51
        lo[i] = y - dd
        hi[i] = y + dd
        ok[i] = True


@encloses("gelu_tanh")
def enclose_gelu_tanh(x, P, params):
    """The enclosure of gelu's tanh formula, ``x sigmoid(2 sqrt(2/pi) (x + 0.044715 x**3))``."""
    from ._functions import _tail_threshold

    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    thr = _tail_threshold(P) / 1.59  # the MPFR path's tail (``_functions._gelu_tanh``)
    f = _gelu_tanh_loop.compiled()
    if f is None:
        lo, hi, ok = _gelu_tanh_numpy(x, P, thr)
    else:
        lo, hi, ok = np.empty(x.size), np.empty(x.size), np.ones(x.size, bool)
        f(x, thr, lo, hi, ok)
    got = Enclosed(lo, hi, np.zeros(x.size, np.int8), ok)
    with np.errstate(invalid="ignore"):
        tail = (x > thr) & (x < np.inf)
        got.lo[tail] = got.hi[tail] = x[tail]
        got.rest[tail] = -1
        far = (x < _TANH_FAR) & (x > -np.inf)
        got.lo[far], got.hi[far] = -(2.0**-1001), -(2.0**-1074)  # held as -2**-1100
        sp = np.isnan(x) | np.isinf(x) | (x == 0)
        got.lo[sp] = got.hi[sp] = np.where(x[sp] == -np.inf, -0.0, x[sp])
        got.ok[tail | far | sp] = True
        reg = np.isfinite(x) & (x != 0)
        _tighten(got, np.where(reg, x * 0.5, np.nan), np.where(reg & (x > 0), x, np.nan), P)
    return got


# ============================================================================== logit
@encloses("logit")
def enclose_logit(x, P, params):
    """The enclosure of ``logit(x) = log(x / (1 - x))``, composed of the log family's (both
    twins alike), in interval arithmetic:

    * ``1/4 <= x <= 3/4``: ``logit(x) = log1p(t)``, ``t = (2x - 1) / (1 - x)``; ``2x - 1`` is
      exact (Sterbenz), ``1 - x`` and the quotient round: ``t_c`` within ``2.0001u |t|``, so
      ``t`` lies in ``[t_c -+ 2**-51 |t_c|]`` (those ends rounded to nearest stay outside
      ``3u |t_c|``); ``log1p`` increases: ``[lo(log1p(t_lo)), hi(log1p(t_hi))]``. And
      ``logit(x) = 2 atanh(2x - 1)`` lies beyond ``2(2x - 1)`` (exact), on its side: the cut
      (:func:`_tighten`) for ``x`` next to 1/2.
    * elsewhere ``log(x) - log1p(-x)`` (``|logit x| >= 1.0986``: no cancellation):
      ``[lo1 - hi2, hi1 - lo2]``, each end rounded and then moved out by ``2**-51`` of itself.
    * ``logit(1/2) = 0``, ``logit(0) = -inf``, ``logit(1) = inf``, NaN outside ``[0, 1]``
      (the MPFR path's ``_functions._logit``); ``0 < x < 2**-960`` is left to MPFR.
    """
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    n = x.size
    lo = np.full(n, np.nan)
    hi = np.full(n, np.nan)
    ok = np.ones(n, bool)
    with np.errstate(all="ignore"):
        inside = (x > 0) & (x < 1) & (x != 0.5)
        mid = inside & (x >= 0.25) & (x <= 0.75)
        out = inside & ~mid
        i = np.flatnonzero(mid)
        xm = x[i]
        t = (2.0 * xm - 1.0) / (1.0 - xm)
        step = np.abs(t) * 2.0**-51
        a = _run(t - step, _LOG1P, P, cut=False)
        b = _run(t + step, _LOG1P, P, cut=False)
        lo[i], hi[i] = a.lo, b.hi
        ok[i] = a.ok & b.ok
        i = np.flatnonzero(out)
        xo = x[i]
        a = _run(xo, _LOG, P)
        b = _run(-xo, _LOG1P, P, cut=False)
        lo1 = a.lo - b.hi
        hi1 = a.hi - b.lo
        lo[i] = lo1 - np.abs(lo1) * 2.0**-51
        hi[i] = hi1 + np.abs(hi1) * 2.0**-51
        ok[i] = a.ok & b.ok
        sp = ~inside
        lo[sp] = hi[sp] = np.where(x[sp] == 0.5, 0.0, np.where(
            x[sp] == 0, -np.inf, np.where(x[sp] == 1, np.inf, np.nan)))
        ok[inside & (x < _TINY_IN)] = False
        got = Enclosed(lo, hi, ok=ok)
        d = 2.0 * (2.0 * x - 1.0)
        _tighten(got, np.where(mid & (x > 0.5), d, np.nan), np.where(mid & (x < 0.5), d, np.nan),
                 P)
    return got
