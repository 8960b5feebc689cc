"""The slow, obviously correct scalar path: Python integers and Fractions.

This is the in-tree oracle for the vectorized rounding, and the fallback for the rare elements
the fast path flags (terms thousands of binades apart, sums whose sign it cannot settle). It
rounds one exact rational value into a format; nothing here knows about numpy arrays.

>>> from fractions import Fraction
>>> from exactref._formats import dtype
>>> from exactref._exact._rounding import Rounding
>>> round_scalar(Fraction(1, 3), False, dtype("float16"), Rounding.NEAREST_EVEN, "ieee")
(0.333251953125, True, False, False)
"""

from __future__ import annotations

from fractions import Fraction

from ._rounding import Rounding
from ._specials import (
    below_zero_values,
    overflow_scalar,
    rounds_to_nothing,
    special_values,
    zero_values,
)

__all__ = ["NAN", "round_scalar", "round_to_integer", "floor_log2"]

#: The exact value of a NaN element (a special marker; any other value is a Fraction).
NAN = "nan"


def floor_log2(a: Fraction) -> int:
    """The exponent ``e`` with ``2**e <= a < 2**(e+1)``, for ``a > 0``."""
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    # 2**e <= n/d  <=>  n >= d * 2**e
    if (n << max(-e, 0)) < (d << max(e, 0)):
        e -= 1
    return e


def _round_integer_part(scaled: Fraction, negative: bool, mode: Rounding, odd_ok: bool) -> int:
    """Round a non-negative rational magnitude to an integer under ``mode`` (sign ``negative``)."""
    ip = scaled.numerator // scaled.denominator
    rem = scaled - ip
    if rem == 0:
        return ip
    half = Fraction(1, 2)
    if mode is Rounding.NEAREST_EVEN:
        if rem > half or (rem == half and (ip % 2 == 1 or not odd_ok)):
            ip += 1
    elif mode is Rounding.NEAREST_AWAY:
        if rem >= half:
            ip += 1
    elif mode is Rounding.TOWARD_POSITIVE:
        ip += 0 if negative else 1
    elif mode is Rounding.TOWARD_NEGATIVE:
        ip += 1 if negative else 0
    elif mode is Rounding.ODD:
        ip |= 1
    return ip


def _round_one_bit_code(scaled: Fraction, k: int, mode: Rounding) -> int:
    """Round a magnitude to 0, 1 or 2 at one bit of precision by the parity of the codes
    (P3109's CodeIsEven): the lower neighbour is even where it is 0 or ``k`` (the quantum's
    exponent less emin, so its biased exponent less 1) is odd; ties go to the even code, and
    round-to-odd steps up from an even one."""
    ip = scaled.numerator // scaled.denominator
    rem = scaled - ip
    if rem == 0:
        return ip
    even = ip == 0 or k % 2 == 1
    if mode is Rounding.ODD:
        return ip + (1 if even else 0)
    half = Fraction(1, 2)
    return ip + (1 if rem > half or (rem == half and not even) else 0)


def round_to_integer(v: Fraction, mode: Rounding) -> int:
    """``v`` rounded to an integer under ``mode`` (round-to-odd makes an inexact result odd)."""
    negative = v < 0
    mag = _round_integer_part(abs(v), negative, mode, True)
    return -mag if negative else mag


def round_scalar(value, negzero: bool, fmt, mode: Rounding, rule: str):
    """Round one exact value into the float format ``fmt``.

    ``value`` is a Fraction, ``float('inf')``/``-inf``, or :data:`NAN`; ``negzero`` is the sign of
    an exact zero. Returns ``(result, inexact, overflow, underflow)`` with ``result`` a Python
    float holding the format's value (NaN for NaN; in a format without NaN, the marker of an
    undefined element: see :mod:`._specials`).
    """
    nan = float("nan")
    if value is NAN or isinstance(value, float):  # NaN or an infinity: encoded, not rounded
        return float(special_values(float(value), fmt, rule)), False, False, False
    v = Fraction(value)
    if v == 0:
        return float(zero_values(negzero, fmt)), False, False, False
    negative = v < 0
    if negative and not fmt.signed and not fmt.has_zero:
        return nan, False, False, False
    a = -v if negative else v
    p, emin = fmt.precision, fmt.emin
    e = floor_log2(a)
    q = max(e, emin) - (p - 1)
    scaled = a / (Fraction(2) ** q)
    # Note: with one significant bit (float8_e8m0fnu) no significand is even; ties go away
    # from zero, as ml_dtypes' casts do.
    if p == 1 and fmt.parity == "code" and mode in (Rounding.NEAREST_EVEN, Rounding.ODD):
        ip = _round_one_bit_code(scaled, q - emin, mode)
    else:
        ip = _round_integer_part(scaled, negative, mode, p > 1)
    inexact = scaled != ip
    underflow = inexact and e < emin
    if ip == 0:
        if not fmt.has_zero:
            return float(rounds_to_nothing((), fmt, mode)), True, False, True
        return float(zero_values(negative, fmt)), inexact, False, underflow
    if negative and not fmt.signed:  # below an unsigned format's range, which ends at 0
        return float(below_zero_values((), fmt, mode, rule)), True, True, underflow
    if ip == 2**p:
        ip, q = ip >> 1, q + 1
    qmax = fmt.emax - p + 1
    if q > qmax or (q == qmax and ip > fmt.max_mantissa):
        return overflow_scalar(negative, fmt, mode, rule), True, True, False
    result = float(Fraction(ip) * Fraction(2) ** q)
    return (-result if negative else result), inexact, False, underflow
