"""The test suites' rounding oracle: a nonzero Fraction rounded once by MPFR (gmpy2), in every
mode of ``exactref.Rounding``, into a precision and an exponent floor (subnormals; no ceiling:
overflow is each suite's own business). It shares no code with exactref.

Nearest-away and round-to-odd, which MPFR lacks, come from two directed roundings; a format of
one bit (float8_e8m0fnu) has no even significand, so its nearest-even ties go away from zero.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import gmpy2

from exactref import Rounding as R

__all__ = ["mpfr_round", "overflow_value", "round_to_int", "pick_neighbour"]


@functools.cache
def _context(p, emin, rnd):
    """An MPFR context of ``p`` bits whose smallest positive value is ``2**(emin - p + 1)``."""
    return gmpy2.context(precision=p, emin=emin - p + 2, emax=gmpy2.get_emax_max(),
                         subnormalize=True, round=rnd)


def _mpfr(v: Fraction, p: int, emin: int, rnd) -> Fraction:
    x = gmpy2.mpfr(gmpy2.mpq(v.numerator, v.denominator), context=_context(p, emin, rnd))
    n, d = x.as_integer_ratio()
    return Fraction(int(n), int(d))


def _is_odd(r: Fraction, p: int, emin: int) -> bool:
    """Whether the last significand bit of the format value ``|r|`` is 1 (0 counts as even)."""
    a = abs(r)
    if a == 0:
        return False
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = max(e, emin) - p + 1  # the quantum of a's binade
    sig = a / Fraction(2) ** q
    assert sig.denominator == 1, (r, p, emin)
    return sig.numerator % 2 == 1


def mpfr_round(v: Fraction, p: int, emin: int, mode) -> Fraction:
    """``v != 0`` rounded once to ``p`` bits with exponent floor ``emin`` (no ceiling)."""
    if mode is R.TOWARD_ZERO:
        return _mpfr(v, p, emin, gmpy2.RoundToZero)
    if mode is R.TOWARD_POSITIVE:
        return _mpfr(v, p, emin, gmpy2.RoundUp)
    if mode is R.TOWARD_NEGATIVE:
        return _mpfr(v, p, emin, gmpy2.RoundDown)
    if mode is R.NEAREST_EVEN and p > 1:
        return _mpfr(v, p, emin, gmpy2.RoundToNearest)
    if mode in (R.NEAREST_EVEN, R.NEAREST_AWAY):
        lo, hi = _mpfr(v, p, emin, gmpy2.RoundDown), _mpfr(v, p, emin, gmpy2.RoundUp)
        if lo == hi:
            return lo
        mid = (lo + hi) / 2
        if v == mid:
            return hi if v > 0 else lo
        return hi if v > mid else lo
    assert mode is R.ODD
    z = _mpfr(v, p, emin, gmpy2.RoundToZero)
    if z == v or _is_odd(z, p, emin):
        return z
    return _mpfr(v, p, emin, gmpy2.RoundUp if v > 0 else gmpy2.RoundDown)


def overflow_value(max_finite: float, has_inf: bool, has_nan: bool, negative: bool, mode,
                   rule: str) -> float:
    """The result of a value that rounds past ``max_finite``: ``saturate`` clamps, ``nan``
    gives NaN, and ``ieee`` goes to infinity where the mode rounds away from the finite range
    (to NaN without infinities, to the largest value without either), else to the largest."""
    import math

    big = -max_finite if negative else max_finite
    if rule == "saturate":
        return big
    if rule == "nan":
        return math.nan
    to_inf = mode in (R.NEAREST_EVEN, R.NEAREST_AWAY) or (
        mode is R.TOWARD_POSITIVE and not negative) or (mode is R.TOWARD_NEGATIVE and negative)
    if not to_inf:
        return big
    if has_inf:
        return -math.inf if negative else math.inf
    return math.nan if has_nan else big


def round_to_int(v: Fraction, mode) -> int:
    """``v`` rounded once to an integer in ``mode`` (exact, Python integers)."""
    fl = v.numerator // v.denominator
    frac = v - fl
    if frac == 0 or mode is R.TOWARD_NEGATIVE:
        return fl
    if mode is R.TOWARD_POSITIVE:
        return fl + 1
    if mode is R.TOWARD_ZERO:
        return fl if v > 0 else fl + 1
    if mode is R.ODD:
        return fl if fl % 2 else fl + 1
    if frac != Fraction(1, 2):
        return fl + (frac > Fraction(1, 2))
    if mode is R.NEAREST_AWAY:
        return fl + 1 if v > 0 else fl
    return fl + fl % 2  # ties to even


def pick_neighbour(v, lo, hi, lo_odd, hi_odd, sticky, mode, one_bit: bool = False):
    """Vectorized: values ``v`` (float64 arrays, each with a ``sticky`` rest of its sign below
    it) rounded in ``mode`` to one of the format's neighbours ``lo <= v <= hi`` (``lo_odd``,
    ``hi_odd``: their last significand bits). The midpoint ``(lo + hi) / 2`` must be exact in
    float64. ``one_bit``: a format of one significant bit, whose nearest-even ties go away."""
    import numpy as np

    hit = (lo == v) & ~sticky
    pos = v > 0
    if mode is R.TOWARD_NEGATIVE:
        r = lo
    elif mode is R.TOWARD_POSITIVE:
        r = hi
    elif mode is R.TOWARD_ZERO:
        r = np.where(pos, lo, hi)
    elif mode is R.ODD:
        tz_odd = np.where(pos, lo_odd, hi_odd)
        r = np.where(pos, np.where(tz_odd, lo, hi), np.where(tz_odd, hi, lo))
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            m = (lo + hi) / 2
        above = (v > m) | ((v == m) & sticky)
        tie = (v == m) & ~sticky
        if mode is R.NEAREST_AWAY or one_bit:
            tie_val = np.where(pos, hi, lo)
        else:
            tie_val = np.where(lo_odd, hi, lo)
        r = np.where(tie, tie_val, np.where(above, hi, lo))
    return np.where(hit, v, r)
