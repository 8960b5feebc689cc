"""The IEEE P3109 formats as the interim report writes them, in Python integers and Fractions.

Written from the text of "IEEE Working Group P3109 Interim Report on Binary Floating-point
Formats for Machine Learning", version 4.0 (26 June 2026, github.com/P3109/Public): 3.1 (the
bias), 4.7.2 (DecodeAux), 4.7.3 (Project), 4.7.4 (RoundToPrecision) and 4.7.5 (Saturate). It
shares no code with exactref; the tests compare exactref's table, codes and roundings with it.

Values are Fractions, or the floats ``inf``, ``-inf`` and ``nan`` (the report's closed extended
reals have one NaN and no -0).
"""

from __future__ import annotations

import math
from fractions import Fraction

from exactref import Rounding as R

__all__ = ["NAN", "INF", "bias", "decode", "values", "max_finite", "round_to_precision",
           "saturate", "project", "formats"]

NAN = float("nan")
INF = float("inf")
K = 8

#: Every 8-bit format: (precision, signed, extended) for the report's Binary8p{P}{s|u}{e|f}.
formats = [(p, s, e) for s in (True, False) for p in range(1, K if s else K + 1)
           for e in (True, False)]


def name(p, signed, extended) -> str:
    return f"binary8p{p}{'s' if signed else 'u'}{'e' if extended else 'f'}"


def bias(p, signed) -> int:
    """3.1: B = 2**(K-P-1) for signed formats, 2**(K-P) for unsigned ones."""
    return 2 ** (K - p - 1) if signed else 2 ** (K - p)


def decode(x: int, p: int, signed: bool, extended: bool):
    """4.7.2 DecodeAux: the datum of code ``x``."""
    if signed and x == 2 ** (K - 1):
        return NAN
    if not signed and x == 2**K - 1:
        return NAN
    if signed and extended and x == 2 ** (K - 1) - 1:
        return INF
    if signed and extended and x == 2**K - 1:
        return -INF
    if not signed and extended and x == 2**K - 2:
        return INF
    if signed and 2 ** (K - 1) < x < 2**K:
        return -decode(x - 2 ** (K - 1), p, signed, extended)
    t = x % 2 ** (p - 1)  # trailing significand
    eb = x // 2 ** (p - 1)  # biased exponent
    b = bias(p, signed)
    if eb == 0:
        return (0 + Fraction(t, 2 ** (p - 1))) * Fraction(2) ** (1 - b)
    return (1 + Fraction(t, 2 ** (p - 1))) * Fraction(2) ** (eb - b)


def values(p, signed, extended) -> list:
    """The datum of every code, 0 to 255."""
    return [decode(x, p, signed, extended) for x in range(2**K)]


def max_finite(p, signed, extended) -> Fraction:
    return max(v for v in values(p, signed, extended) if isinstance(v, Fraction))


def _floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if Fraction(2) ** e <= a else e - 1


def round_to_precision(x, p: int, b: int, mode: R):
    """4.7.4 RoundToPrecision (no exponent ceiling): ``x`` rounded to ``p`` bits, exponent
    floor ``1 - b``; ties and round-to-odd read CodeIsEven."""
    if not isinstance(x, Fraction) or x == 0:
        return x
    q = max(_floor_log2(abs(x)), 1 - b) - p + 1
    s = abs(x) / Fraction(2) ** q
    sf = s.numerator // s.denominator
    d = s - sf
    code_is_even = sf % 2 == 0 if p > 1 else (sf == 0 or (q + b) % 2 == 0)
    away = {
        R.TOWARD_ZERO: False,
        R.TOWARD_POSITIVE: d > 0 and x > 0,
        R.TOWARD_NEGATIVE: d > 0 and x < 0,
        R.NEAREST_AWAY: d >= Fraction(1, 2),
        R.NEAREST_EVEN: d > Fraction(1, 2) or (d == Fraction(1, 2) and not code_is_even),
        R.ODD: d > 0 and code_is_even,
    }[mode]
    return (1 if x > 0 else -1) * (sf + int(away)) * Fraction(2) ** q


def saturate(sat: str, mode: R, x, signed: bool, extended: bool, lo, hi):
    """4.7.5 Saturate, its rules in the report's order (the first that applies)."""
    if isinstance(x, float) and math.isnan(x):
        return NAN
    if not isinstance(x, float) and lo <= x <= hi:
        return x
    pinf, minf = x == INF, x == -INF
    if sat == "SatFinite":
        return hi if pinf or x > hi else lo
    if pinf:
        return INF if extended else hi
    if minf:
        if signed and extended:
            return -INF
        return NAN if sat == "SatNone" and not signed else lo
    if sat == "SatPropagate":
        return lo if x < lo else hi
    assert sat == "SatNone"
    if mode is R.ODD and x > hi and not signed and extended:
        return hi
    if mode in (R.TOWARD_ZERO, R.TOWARD_NEGATIVE) and x > hi:
        return hi
    if mode in (R.TOWARD_ZERO, R.TOWARD_POSITIVE) and x < lo:
        return lo
    if x < lo:
        return -INF if signed and extended else (NAN if not signed else lo)
    return INF if extended else hi


def project(x, p: int, signed: bool, extended: bool, mode: R, sat: str):
    """4.7.3 Project: round to precision, then saturate (``x`` a Fraction, ±inf or NaN)."""
    if isinstance(x, float) and math.isnan(x):
        return NAN
    hi = max_finite_cached(p, signed, extended)
    lo = -hi if signed else Fraction(0)
    r = round_to_precision(x, p, bias(p, signed), mode)
    return saturate(sat, mode, r, signed, extended, lo, hi)


_MAX = {}


def max_finite_cached(p, signed, extended) -> Fraction:
    key = (p, signed, extended)
    if key not in _MAX:
        _MAX[key] = max_finite(p, signed, extended)
    return _MAX[key]
