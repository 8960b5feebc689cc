"""An oracle for long sums that shares no code with exactref's engine or rounding.

Exact values are dyadic sums computed with Python integers (IEEE 754's specials and zero signs
handled as the standard says: ``0 * inf`` and ``inf - inf`` are NaN, a sum of -0s is -0, a sum of
+0s is +0 in every mode, an exact cancellation or a mix of zeros +0, -0 toward -inf). MPFR (gmpy2) rounds them once, in a context of the target's
precision, its minimum exponent, ``subnormalize=True`` and an unbounded maximum exponent, so
IEEE 754's overflow test is a plain comparison with the largest finite value. MPFR's RNDN, RNDZ,
RNDU and RNDD give four modes; ties-away is decided from the RNDD and RNDU results and their exact
midpoint, round-to-odd from RNDZ, stepping away from zero when inexact with an even last bit (the
idea of ``tests/_exact/test_rounding_mpfr.py``).

The format parameters are written out here, not read from exactref (``test_oracle_formats``
compares them with ``exactref.FORMATS``). ``Rounder`` rounds one step of a simulated
implementation with the same oracle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import exactref as er
from mpfr_rounding import mpfr_round as _mpfr_round
from mpfr_rounding import overflow_value

R = er.Rounding
NAN = "nan"  # an exact NaN


@dataclass(frozen=True)
class Fmt:
    """A binary float format: precision ``p`` (with the hidden bit), exponent range, largest
    finite value, infinities, NaN, and the default overflow rule."""

    name: str
    p: int
    emin: int
    emax: int
    max_finite: float
    has_inf: bool
    rule: str

    @property
    def smallest_subnormal(self) -> float:
        return math.ldexp(1.0, self.emin - self.p + 1)


FMTS = {f.name: f for f in [
    Fmt("float64", 53, -1022, 1023, 1.7976931348623157e308, True, "ieee"),
    Fmt("float32", 24, -126, 127, 3.4028234663852886e38, True, "ieee"),
    Fmt("bfloat16", 8, -126, 127, 3.3895313892515355e38, True, "ieee"),
    Fmt("float16", 11, -14, 15, 65504.0, True, "ieee"),
    Fmt("float8_e4m3fn", 4, -6, 8, 448.0, False, "ieee"),
    Fmt("float8_e5m2", 3, -14, 15, 57344.0, True, "ieee"),
]}

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1), "uint8": (0, 2**8 - 1),
}


# ---------------------------------------------------------------------------- exact values
def dyadic(x) -> tuple[int, int]:
    """``(n, e)`` with ``x == n * 2**e`` exactly, for a finite float, int or binary Fraction."""
    if isinstance(x, int):
        return x, 0
    n, d = x.as_integer_ratio()
    e = d.bit_length() - 1
    assert d == 1 << e, f"{x!r} is not dyadic"
    return n, -e


def to_fraction(n: int, e: int) -> Fraction:
    return Fraction(n << e) if e >= 0 else Fraction(n, 1 << -e)


def exact_sum(terms):
    """The exact value of ``sum(prod(term))`` under IEEE 754: ``(value, zero_class)``.

    ``terms``: tuples of factors (floats, with specials, or exact ints and Fractions). ``value``
    is a Fraction, ±inf or NAN; ``zero_class`` the sign rule of an exact zero (-1: every term a
    -0, +1: every term a +0, 0: a cancellation or a mix)."""
    infs, zeros, fins = set(), set(), []
    for term in terms:
        if any(isinstance(f, float) and math.isnan(f) for f in term):
            return NAN, 0
        neg = sum(math.copysign(1.0, float(f)) < 0 if isinstance(f, float) else f < 0
                  for f in term) % 2
        sign = -1 if neg else 1
        has_inf = any(isinstance(f, float) and math.isinf(f) for f in term)
        has_zero = any(f == 0 for f in term)
        if has_inf and has_zero:
            return NAN, 0
        if has_inf:
            infs.add(sign)
        elif has_zero:
            zeros.add(sign)
        else:
            n, e = 1, 0
            for f in term:
                fn, fe = dyadic(f)
                n, e = n * fn, e + fe
            fins.append((n, e))
    if len(infs) == 2:
        return NAN, 0
    if infs:
        return (math.inf if infs.pop() > 0 else -math.inf), 0
    if fins:
        low = min(e for _, e in fins)
        total = 0
        for n, e in fins:
            total += n << (e - low)
        if total:
            return to_fraction(total, low), 0
        return Fraction(0), 0
    if zeros == {-1}:
        return Fraction(0), -1
    if zeros == {1}:
        return Fraction(0), 1
    return Fraction(0), 0  # -0 + +0: an exact zero sum of opposite signs


def zero_is_negative(zero_class: int, mode) -> bool:
    return zero_class < 0 or (zero_class == 0 and mode is R.TOWARD_NEGATIVE)


# -------------------------------------------------------------------------------- rounding
def mpfr_round(v: Fraction, fmt: Fmt, mode) -> Fraction:
    """``v != 0`` rounded once into ``fmt``'s precision and exponent floor (no ceiling)."""
    return _mpfr_round(v, fmt.p, fmt.emin, mode)


def expected(value, zero_negative: bool, fmt: Fmt, mode, rule: str | None = None) -> float:
    """The exact ``value`` (Fraction, ±inf or NAN) rounded once into ``fmt`` under ``rule``
    (default: the format's); ``zero_negative``: the sign of an exact zero."""
    rule = fmt.rule if rule is None else rule
    if value is NAN:
        return math.nan
    if isinstance(value, float):  # an infinity
        if fmt.has_inf:
            return value
        if rule == "saturate":
            return -fmt.max_finite if value < 0 else fmt.max_finite
        return math.nan
    if value == 0:
        return -0.0 if zero_negative else 0.0
    r = mpfr_round(value, fmt, mode)
    if abs(r) > Fraction(fmt.max_finite):
        return overflow_value(fmt.max_finite, fmt.has_inf, True, value < 0, mode, rule)
    if r == 0:
        return -0.0 if value < 0 else 0.0
    return float(r)


def round_terms(terms, fmt: Fmt, mode, rule: str | None = None) -> float:
    """The exact IEEE sum of products ``terms`` rounded once into ``fmt``."""
    v, z = exact_sum(terms)
    return expected(v, zero_is_negative(z, mode), fmt, mode, rule)


def wrap(v: int, name: str, rule: str = "wrap") -> int:
    """The exact integer ``v`` into integer format ``name`` (wrapping or saturating)."""
    lo, hi = INT_RANGES[name]
    if rule == "saturate":
        return min(max(v, lo), hi)
    return (v - lo) % (hi - lo + 1) + lo


def same(got: float, want: float) -> bool:
    """Bit-equal up to NaN payloads: zeros by sign, NaN with NaN."""
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


# ------------------------------------------------------------------- simulated arithmetic
class Rounder:
    """One rounding of a simulated implementation: an exact value into ``fmt`` in ``mode``
    (IEEE overflow: ±inf or the largest finite value; NaN where the format has no infinity).
    Values are Python floats; specials propagate as IEEE arithmetic does."""

    def __init__(self, fmt: Fmt, mode):
        self.fmt, self.mode = fmt, mode

    def __call__(self, v) -> float:
        if isinstance(v, float):
            if not math.isfinite(v):
                return v if self.fmt.has_inf or math.isnan(v) else math.nan
            v = Fraction(v)
        if v == 0:
            return 0.0
        return expected(v, False, self.fmt, self.mode, "ieee")

    def add(self, x: float, y: float) -> float:
        if not (math.isfinite(x) and math.isfinite(y)):
            return self(x + y)
        return self(Fraction(x) + Fraction(y))

    def mul(self, x: float, y: float) -> float:
        if not (math.isfinite(x) and math.isfinite(y)):
            return self(x * y)
        return self(Fraction(x) * Fraction(y))

    def fma(self, x: float, y: float, z: float) -> float:
        """``x * y + z`` rounded once."""
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            return self(x * y + z)
        return self(Fraction(x) * Fraction(y) + Fraction(z))
