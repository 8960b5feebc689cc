"""An independent oracle for the arithmetic tests: exact IEEE arithmetic on Python values, and
MPFR (gmpy2) rounding into any exactref float format.

Values are Python floats for the specials and zeros (``-0.0``, ``0.0``, ``±inf``, NaN) and
Fractions for every finite nonzero value, so a product or sum is exact and keeps IEEE 754's
rules for specials and signs of zero. :func:`rnd` rounds once: MPFR in a context of the
format's precision, its minimum exponent, ``subnormalize=True`` and an unbounded maximum
exponent, so IEEE 754's overflow test is a plain comparison with ``max_finite``. MPFR's RNDN,
RNDZ, RNDU and RNDD give four modes; ties-away comes from the midpoint of the RNDD and RNDU
results, and round-to-odd from RNDZ, stepping away from zero when the result is inexact and its
last bit is 0. Nothing here calls exactref's rounding.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import exactref as er
from mpfr_rounding import mpfr_round as _mpfr_round
from mpfr_rounding import overflow_value

R = er.Rounding
NAN = math.nan


# ----------------------------------------------------------------------------- values
def exact(v):
    """An exact value from a Python/numpy number: Fraction, or a float for zeros and specials."""
    if isinstance(v, Fraction):
        return v if v != 0 else 0.0
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):  # any int, exactly
        return Fraction(int(v)) if v != 0 else 0.0
    f = float(v)
    if f == 0 or not math.isfinite(f):
        return f
    return Fraction(f)


def is_special(v) -> bool:
    return isinstance(v, float)


def is_zero(v) -> bool:
    return isinstance(v, float) and v == 0


def negative(v) -> bool:
    if isinstance(v, Fraction):
        return v < 0
    return math.copysign(1.0, v) < 0


def mul(a, b):
    """The exact product ``a * b`` with IEEE 754's specials and sign of zero."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a * b
    fa = (-1.0 if a < 0 else 1.0) if isinstance(a, Fraction) else a
    fb = (-1.0 if b < 0 else 1.0) if isinstance(b, Fraction) else b
    return fa * fb  # ±0, ±inf or NaN, with IEEE's sign rules (finite operands stand in as ±1)


def add(a, b, mode=R.NEAREST_EVEN):
    """The exact sum ``a + b``; an exact zero sum of nonzero terms is +0 (-0 toward -inf)."""
    if isinstance(a, float) and not math.isfinite(a) or isinstance(b, float) and not \
            math.isfinite(b):
        fa = a if isinstance(a, float) else 0.0
        fb = b if isinstance(b, float) else 0.0
        return fa + fb
    if is_zero(a) and is_zero(b):
        if negative(a) and negative(b):
            return -0.0
        if negative(a) != negative(b):
            return -0.0 if mode is R.TOWARD_NEGATIVE else 0.0
        return 0.0
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    s = a + b
    if s == 0:
        return -0.0 if mode is R.TOWARD_NEGATIVE else 0.0
    return s


def neg(a):
    return -a


def total(terms, mode=R.NEAREST_EVEN):
    """The exact sum of several exact terms with IEEE 754's rules for specials and zeros: a sum
    of zeros is -0 when every zero is negative (toward -inf: when any is), and an exact zero
    with a nonzero term among the terms is +0 (-0 toward -inf)."""
    if not terms:
        return 0.0
    specials = [t for t in terms if isinstance(t, float) and not t == 0]
    if specials:
        s = 0.0
        for t in specials:
            s += t
        return s
    nonzero = [t for t in terms if isinstance(t, Fraction)]
    s = sum(nonzero, Fraction(0))
    if s != 0:
        return s
    if nonzero:
        return -0.0 if mode is R.TOWARD_NEGATIVE else 0.0
    negs = [negative(t) for t in terms]
    if all(negs) or (mode is R.TOWARD_NEGATIVE and any(negs)):
        return -0.0
    return 0.0


# ---------------------------------------------------------------------------- rounding
def mpfr_round(v: Fraction, fmt, mode) -> Fraction:
    """A nonzero Fraction rounded once to ``fmt``'s precision and exponent floor (no ceiling)."""
    return _mpfr_round(v, fmt.precision, fmt.emin, mode)


def rnd(v, fmt, mode=R.NEAREST_EVEN, rule=None) -> float:
    """The exact value ``v`` rounded once into ``fmt`` (a float64 holding the format's value).

    ``rule``: the overflow rule, by default the format's own. A zero of a format without -0 is
    +0; a NaN or an infinity a format cannot hold follows the rule as ml_dtypes' casts do.
    """
    fmt = er.dtype(fmt)
    rule = rule or fmt.default_overflow
    if isinstance(v, float):
        if math.isnan(v):
            return NAN
        if math.isinf(v):
            if fmt.has_inf:
                return v
            if fmt.has_nan and rule != "saturate":
                return NAN
            return -fmt.max_finite if v < 0 else fmt.max_finite
        if not fmt.has_zero:  # float8_e8m0fnu: no zero
            return NAN
        return v if fmt.has_negzero else 0.0
    is_neg = v < 0
    if is_neg and not fmt.signed:  # float8_e8m0fnu: no negative values
        return NAN
    r = mpfr_round(v, fmt, mode)
    if abs(r) > Fraction(fmt.max_finite):
        return overflow_value(fmt.max_finite, fmt.has_inf, fmt.has_nan, is_neg, mode, rule)
    if r == 0:
        if not fmt.has_zero:  # the smallest value, or NaN with no value below (ml_dtypes)
            return NAN if mode in (R.TOWARD_ZERO, R.TOWARD_NEGATIVE) else fmt.smallest_subnormal
        return -0.0 if is_neg and fmt.has_negzero else 0.0
    return float(r)


def fmt_value(v, fmt, mode=R.NEAREST_EVEN, rule=None):
    """:func:`rnd`, returned as an exact value (for the next step of a simulation)."""
    return exact(rnd(v, fmt, mode, rule))


# ------------------------------------------------------------------------- comparison
def same(a: float, b: float) -> bool:
    """Bitwise equality of two float64 values, with NaN equal to NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
