"""Tier 3: hand-written bit-level cases, one expected result per rounding mode.

Each case names a format, an exact input and six expected results, in the order

    nearest_even, nearest_away, toward_zero, toward_positive, toward_negative, odd

written ``"<hex float> <flags>"`` with flags ``i`` (inexact), ``o`` (overflow), ``u``
(underflow). An input is a float64 hex string (tried as a numpy float64 array, the vectorized
path, and as a Python float, the scalar path), a tuple of hex strings (their exact sum, through
``sum_of_products``) or a Fraction (the scalar path). Every expected value was worked out by hand
from the format's definition; the comments say how.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exactref._exact import ExactPart, resolve_overflow, sum_of_products
from exactref._formats import FORMATS

R = er.Rounding
MODES = [R.NEAREST_EVEN, R.NEAREST_AWAY, R.TOWARD_ZERO, R.TOWARD_POSITIVE, R.TOWARD_NEGATIVE,
         R.ODD]


@dataclass(frozen=True)
class Case:
    fmt: str
    x: object  # hex string, tuple of hex strings (an exact sum) or Fraction
    want: tuple  # six "<hex> <flags>" strings, in MODES order
    why: str
    rule: str | None = None


def case(fmt, x, ne, na, tz, tp, tn, odd, why, rule=None):
    return Case(fmt, x, (ne, na, tz, tp, tn, odd), why, rule)


def same(fmt, x, v, why, rule=None):
    """A case whose result is ``v`` in every mode (exact values, specials)."""
    return Case(fmt, x, (v,) * 6, why, rule)


F32MAX = "0x1.fffffep+127"
F64MAX = "0x1.fffffffffffffp+1023"

CASES = [
    # ------------------------------------------------------------------ float32 (p = 24)
    case("float32", "0x1.000001p+0", "0x1p+0 i", "0x1.000002p+0 i", "0x1p+0 i",
         "0x1.000002p+0 i", "0x1p+0 i", "0x1.000002p+0 i", "tie above 1 (even below)"),
    case("float32", "0x1.000003p+0", "0x1.000004p+0 i", "0x1.000004p+0 i", "0x1.000002p+0 i",
         "0x1.000004p+0 i", "0x1.000002p+0 i", "0x1.000002p+0 i", "tie, odd below"),
    case("float32", "-0x1.000001p+0", "-0x1p+0 i", "-0x1.000002p+0 i", "-0x1p+0 i", "-0x1p+0 i",
         "-0x1.000002p+0 i", "-0x1.000002p+0 i", "negative tie"),
    case("float32", "0x1.0000010000001p+0", "0x1.000002p+0 i", "0x1.000002p+0 i", "0x1p+0 i",
         "0x1.000002p+0 i", "0x1p+0 i", "0x1.000002p+0 i", "one float64 ulp above the tie"),
    case("float32", "0x1.000000fffffffp+0", "0x1p+0 i", "0x1p+0 i", "0x1p+0 i",
         "0x1.000002p+0 i", "0x1p+0 i", "0x1.000002p+0 i", "one float64 ulp below the tie"),
    case("float32", "0x1.fffffffp+0", "0x1p+1 i", "0x1p+1 i", "0x1.fffffep+0 i", "0x1p+1 i",
         "0x1.fffffep+0 i", "0x1.fffffep+0 i", "past the tie below 2: carries to 2"),
    same("float32", "0x1.fffffep+0", "0x1.fffffep+0", "exact"),
    case("float32", "0x1p-150", "0x0p+0 iu", "0x1p-149 iu", "0x0p+0 iu", "0x1p-149 iu",
         "0x0p+0 iu", "0x1p-149 iu", "half the smallest subnormal: 0 is even"),
    case("float32", "-0x1p-150", "-0x0p+0 iu", "-0x1p-149 iu", "-0x0p+0 iu", "-0x0p+0 iu",
         "-0x1p-149 iu", "-0x1p-149 iu", "minus half the smallest subnormal"),
    case("float32", "0x1.8p-149", "0x1p-148 iu", "0x1p-148 iu", "0x1p-149 iu", "0x1p-148 iu",
         "0x1p-149 iu", "0x1p-149 iu", "1.5 subnormal units: tie, odd below"),
    case("float32", "0x1.0000000000001p-150", "0x1p-149 iu", "0x1p-149 iu", "0x0p+0 iu",
         "0x1p-149 iu", "0x0p+0 iu", "0x1p-149 iu", "just above half the smallest subnormal"),
    case("float32", "0x1.fffffffffffffp-151", "0x0p+0 iu", "0x0p+0 iu", "0x0p+0 iu",
         "0x1p-149 iu", "0x0p+0 iu", "0x1p-149 iu", "just below half the smallest subnormal"),
    case("float32", "0x1p-1074", "0x0p+0 iu", "0x0p+0 iu", "0x0p+0 iu", "0x1p-149 iu",
         "0x0p+0 iu", "0x1p-149 iu", "float64's smallest subnormal"),
    case("float32", "0x1.fffffep-127", "0x1p-126 iu", "0x1p-126 iu", "0x1.fffffcp-127 iu",
         "0x1p-126 iu", "0x1.fffffcp-127 iu", "0x1.fffffcp-127 iu",
         "tie just below the smallest normal: tiny before rounding, so underflow"),
    same("float32", "0x1.fffffcp-127", "0x1.fffffcp-127", "the largest subnormal, exact"),
    same("float32", "0x1p-149", "0x1p-149", "the smallest subnormal, exact"),
    case("float32", "0x1.ffffffp+127", "inf io", "inf io", F32MAX + " i", "inf io",
         F32MAX + " i", F32MAX + " i", "max + ulp/2: max is odd, the tie overflows"),
    case("float32", "0x1.fffffefffffffp+127", F32MAX + " i", F32MAX + " i", F32MAX + " i",
         "inf io", F32MAX + " i", F32MAX + " i", "just below the overflow threshold"),
    case("float32", "-0x1.ffffffp+127", "-inf io", "-inf io", "-" + F32MAX + " i",
         "-" + F32MAX + " i", "-inf io", "-" + F32MAX + " i", "minus the overflow threshold"),
    case("float32", "0x1p+128", "inf io", "inf io", F32MAX + " io", "inf io", F32MAX + " io",
         F32MAX + " io", "2**128: past the range in every mode"),
    case("float32", F64MAX, "inf io", "inf io", F32MAX + " io", "inf io", F32MAX + " io",
         F32MAX + " io", "float64's largest value"),
    case("float32", "-" + F64MAX, "-inf io", "-inf io", "-" + F32MAX + " io",
         "-" + F32MAX + " io", "-inf io", "-" + F32MAX + " io", "minus float64's largest"),
    same("float32", F32MAX, F32MAX, "the largest finite value, exact"),
    same("float32", "0x0p+0", "0x0p+0", "+0"),
    same("float32", "-0x0p+0", "-0x0p+0", "-0"),
    same("float32", "inf", "inf", "inf"),
    same("float32", "-inf", "-inf", "-inf"),
    same("float32", "nan", "nan", "NaN"),
    case("float32", Fraction(2**24 + 1), "0x1p+24 i", "0x1.000002p+24 i", "0x1p+24 i",
         "0x1.000002p+24 i", "0x1p+24 i", "0x1.000002p+24 i", "the integer 2**24 + 1: a tie"),
    case("float32", Fraction(2**100 + 1), "0x1p+100 i", "0x1p+100 i", "0x1p+100 i",
         "0x1.000002p+100 i", "0x1p+100 i", "0x1.000002p+100 i", "a 101-bit integer"),
    case("float32", Fraction(2**2000), "inf io", "inf io", F32MAX + " io", "inf io",
         F32MAX + " io", F32MAX + " io", "a huge integer"),
    case("float32", 1 + Fraction(1, 2**24) - Fraction(1, 2**3000), "0x1p+0 i", "0x1p+0 i",
         "0x1p+0 i", "0x1.000002p+0 i", "0x1p+0 i", "0x1.000002p+0 i",
         "a tie broken 3000 binades down"),
    # ------------------------------------------------------------------ float64 (p = 53)
    case("float64", ("0x1p+0", "0x1p-53"), "0x1p+0 i", "0x1.0000000000001p+0 i", "0x1p+0 i",
         "0x1.0000000000001p+0 i", "0x1p+0 i", "0x1.0000000000001p+0 i", "1 + 2**-53: a tie"),
    case("float64", ("0x1.0000000000001p+0", "0x1p-53"), "0x1.0000000000002p+0 i",
         "0x1.0000000000002p+0 i", "0x1.0000000000001p+0 i", "0x1.0000000000002p+0 i",
         "0x1.0000000000001p+0 i", "0x1.0000000000001p+0 i", "tie, odd below"),
    case("float64", ("0x1p+0", "0x1p-53", "0x1p-1074"), "0x1.0000000000001p+0 i",
         "0x1.0000000000001p+0 i", "0x1p+0 i", "0x1.0000000000001p+0 i", "0x1p+0 i",
         "0x1.0000000000001p+0 i", "a tie broken 1074 binades down (slow path)"),
    case("float64", ("0x1p+0", "0x1p-53", "-0x1p-1074"), "0x1p+0 i", "0x1p+0 i", "0x1p+0 i",
         "0x1.0000000000001p+0 i", "0x1p+0 i", "0x1.0000000000001p+0 i",
         "a tie broken downward 1074 binades down"),
    case("float64", ("0x1.7e43c8800759cp+996", "0x1.56e1fc2f8f359p-997"),
         "0x1.7e43c8800759cp+996 i", "0x1.7e43c8800759cp+996 i", "0x1.7e43c8800759cp+996 i",
         "0x1.7e43c8800759dp+996 i", "0x1.7e43c8800759cp+996 i", "0x1.7e43c8800759dp+996 i",
         "1e300 + 1e-300: 1993 binades apart"),
    case("float64", ("0x1.7e43c8800759cp+996", "-0x1.56e1fc2f8f359p-997"),
         "0x1.7e43c8800759cp+996 i", "0x1.7e43c8800759cp+996 i", "0x1.7e43c8800759bp+996 i",
         "0x1.7e43c8800759cp+996 i", "0x1.7e43c8800759bp+996 i", "0x1.7e43c8800759bp+996 i",
         "1e300 - 1e-300"),
    case("float64", ("0x1p+1000", "0x1p-1000"), "0x1p+1000 i", "0x1p+1000 i", "0x1p+1000 i",
         "0x1.0000000000001p+1000 i", "0x1p+1000 i", "0x1.0000000000001p+1000 i",
         "2**1000 + 2**-1000: 2000 binades apart"),
    case("float64", ("0x1p+1000", "-0x1p-1000"), "0x1p+1000 i", "0x1p+1000 i",
         "0x1.fffffffffffffp+999 i", "0x1p+1000 i", "0x1.fffffffffffffp+999 i",
         "0x1.fffffffffffffp+999 i", "2**1000 - 2**-1000: across the binade below"),
    case("float64", ("-0x1p+1000", "0x1p-1000"), "-0x1p+1000 i", "-0x1p+1000 i",
         "-0x1.fffffffffffffp+999 i", "-0x1.fffffffffffffp+999 i", "-0x1p+1000 i",
         "-0x1.fffffffffffffp+999 i", "-2**1000 + 2**-1000"),
    case("float64", (F64MAX, "0x1p+970"), "inf io", "inf io", F64MAX + " i", "inf io",
         F64MAX + " i", F64MAX + " i", "max + ulp/2: max is odd, the tie overflows"),
    case("float64", (F64MAX, "0x1.fffffffffffffp+969"), F64MAX + " i", F64MAX + " i",
         F64MAX + " i", "inf io", F64MAX + " i", F64MAX + " i", "just below the threshold"),
    case("float64", Fraction(3, 2**1075), "0x1p-1073 iu", "0x1p-1073 iu", "0x1p-1074 iu",
         "0x1p-1073 iu", "0x1p-1074 iu", "0x1p-1074 iu", "1.5 subnormal units"),
    case("float64", Fraction(1, 2**1075), "0x0p+0 iu", "0x1p-1074 iu", "0x0p+0 iu",
         "0x1p-1074 iu", "0x0p+0 iu", "0x1p-1074 iu", "half the smallest subnormal"),
    case("float64", -Fraction(1, 2**1075), "-0x0p+0 iu", "-0x1p-1074 iu", "-0x0p+0 iu",
         "-0x0p+0 iu", "-0x1p-1074 iu", "-0x1p-1074 iu", "minus half the smallest subnormal"),
    case("float64", Fraction(2**53 + 1), "0x1p+53 i", "0x1.0000000000001p+53 i", "0x1p+53 i",
         "0x1.0000000000001p+53 i", "0x1p+53 i", "0x1.0000000000001p+53 i", "2**53 + 1"),
    case("float64", Fraction(2**80 + 1, 2**20), "0x1p+60 i", "0x1p+60 i", "0x1p+60 i",
         "0x1.0000000000001p+60 i", "0x1p+60 i", "0x1.0000000000001p+60 i",
         "(2**80 + 1) / 2**20: 81 significant bits"),
    case("float64", ("0x1p+0", "-0x1p+0"), "0x0p+0", "0x0p+0", "0x0p+0", "0x0p+0", "-0x0p+0",
         "0x0p+0", "1 - 1: +0, but -0 rounding toward negative"),
    case("float64", ("0x1.7e43c8800759cp+996", "-0x1.7e43c8800759cp+996"), "0x0p+0", "0x0p+0",
         "0x0p+0", "0x0p+0", "-0x0p+0", "0x0p+0", "1e300 - 1e300"),
    same("float64", ("-0x0p+0", "-0x0p+0"), "-0x0p+0", "-0 + -0 is -0 in every mode"),
    same("float64", ("0x0p+0", "0x0p+0"), "0x0p+0", "+0 + +0 is +0 in every mode"),
    case("float64", ("0x0p+0", "-0x0p+0"), "0x0p+0", "0x0p+0", "0x0p+0", "0x0p+0", "-0x0p+0",
         "0x0p+0", "+0 + -0: the sum rule"),
    case("float64", ("-0x0p+0", "0x0p+0"), "0x0p+0", "0x0p+0", "0x0p+0", "0x0p+0", "-0x0p+0",
         "0x0p+0", "-0 + +0: the sum rule"),
    same("float64", ("inf", "-inf"), "nan", "inf - inf"),
    same("float64", ("inf", "0x1p+0"), "inf", "inf + 1"),
    same("float64", ("-inf", "0x1p+1000"), "-inf", "-inf + 2**1000"),
    same("float64", ("nan", "0x1p+0"), "nan", "NaN + 1"),
    # ------------------------------------------------------------------ float16 (p = 11)
    case("float16", "0x1.0020000001p+0", "0x1.004p+0 i", "0x1.004p+0 i", "0x1p+0 i",
         "0x1.004p+0 i", "0x1p+0 i", "0x1.004p+0 i",
         "the double-rounding trap: just above a tie (torch's float64 cast gives 1.0)"),
    case("float16", "0x1.002p+0", "0x1p+0 i", "0x1.004p+0 i", "0x1p+0 i", "0x1.004p+0 i",
         "0x1p+0 i", "0x1.004p+0 i", "tie above 1"),
    case("float16", "0x1.003ffffffffffp+0", "0x1.004p+0 i", "0x1.004p+0 i", "0x1p+0 i",
         "0x1.004p+0 i", "0x1p+0 i", "0x1.004p+0 i", "past the tie: 0x3C01, as numpy gives"),
    case("float16", "0x1.001ffffffffffp+0", "0x1p+0 i", "0x1p+0 i", "0x1p+0 i", "0x1.004p+0 i",
         "0x1p+0 i", "0x1.004p+0 i", "just below the tie"),
    case("float16", "0x1.ffep+15", "inf io", "inf io", "0x1.ffcp+15 i", "inf io",
         "0x1.ffcp+15 i", "0x1.ffcp+15 i", "65520: max + ulp/2"),
    case("float16", "0x1.ffdfffffffffp+15", "0x1.ffcp+15 i", "0x1.ffcp+15 i", "0x1.ffcp+15 i",
         "inf io", "0x1.ffcp+15 i", "0x1.ffcp+15 i", "just below 65520"),
    case("float16", "0x1p-25", "0x0p+0 iu", "0x1p-24 iu", "0x0p+0 iu", "0x1p-24 iu",
         "0x0p+0 iu", "0x1p-24 iu", "half the smallest subnormal 2**-24"),
    case("float16", "0x1.ffcp-15", "0x1p-14 iu", "0x1p-14 iu", "0x1.ff8p-15 iu", "0x1p-14 iu",
         "0x1.ff8p-15 iu", "0x1.ff8p-15 iu", "tie below the smallest normal"),
    # ----------------------------------------------------------------- bfloat16 (p = 8)
    case("bfloat16", "0x1.0100000001p+0", "0x1.02p+0 i", "0x1.02p+0 i", "0x1p+0 i",
         "0x1.02p+0 i", "0x1p+0 i", "0x1.02p+0 i",
         "the double-rounding trap: just above a tie (ml_dtypes and torch give 1.0)"),
    case("bfloat16", "0x1.01p+0", "0x1p+0 i", "0x1.02p+0 i", "0x1p+0 i", "0x1.02p+0 i",
         "0x1p+0 i", "0x1.02p+0 i", "tie above 1"),
    case("bfloat16", "0x1.03p+0", "0x1.04p+0 i", "0x1.04p+0 i", "0x1.02p+0 i", "0x1.04p+0 i",
         "0x1.02p+0 i", "0x1.02p+0 i", "tie, odd below"),
    case("bfloat16", "-0x1.00fffffffffffp+0", "-0x1p+0 i", "-0x1p+0 i", "-0x1p+0 i",
         "-0x1p+0 i", "-0x1.02p+0 i", "-0x1.02p+0 i", "just below a negative tie"),
    case("bfloat16", "0x1.ffp+127", "inf io", "inf io", "0x1.fep+127 i", "inf io",
         "0x1.fep+127 i", "0x1.fep+127 i", "max + ulp/2"),
    case("bfloat16", "0x1p-134", "0x0p+0 iu", "0x1p-133 iu", "0x0p+0 iu", "0x1p-133 iu",
         "0x0p+0 iu", "0x1p-133 iu", "half the smallest subnormal 2**-133"),
    case("bfloat16", "-0x1.8p-133", "-0x1p-132 iu", "-0x1p-132 iu", "-0x1p-133 iu",
         "-0x1p-133 iu", "-0x1p-132 iu", "-0x1p-133 iu", "minus 1.5 subnormal units"),
    # ------------------------------------------------- float8_e4m3fn (p = 4, max 448, no inf)
    case("float8_e4m3fn", "0x1.dp+8", "0x1.cp+8 i", "nan io", "0x1.cp+8 i", "nan io",
         "0x1.cp+8 i", "0x1.cp+8 io",
         "464 = 448 + ulp/2: 448 is even (1.110), the odd neighbour 480 does not exist; the "
         "default (IEEE's rule) sends odd's overflow to max, as toward zero"),
    case("float8_e4m3fn", "0x1.dp+8", "0x1.cp+8 i", "nan io", "0x1.cp+8 i", "nan io",
         "0x1.cp+8 i", "nan io", "464 with every overflow NaN", rule="nan"),
    case("float8_e4m3fn", "0x1.dp+8", "0x1.cp+8 i", "0x1.cp+8 io", "0x1.cp+8 i",
         "0x1.cp+8 io", "0x1.cp+8 i", "0x1.cp+8 io", "464, saturating", rule="saturate"),
    case("float8_e4m3fn", "-0x1.dp+8", "-0x1.cp+8 i", "nan io", "-0x1.cp+8 i", "-0x1.cp+8 i",
         "nan io", "-0x1.cp+8 io", "-464"),
    case("float8_e4m3fn", "0x1.c2p+8", "0x1.cp+8 i", "0x1.cp+8 i", "0x1.cp+8 i", "nan io",
         "0x1.cp+8 i", "0x1.cp+8 io", "450: truncation gives the even 448, so odd overflows"),
    case("float8_e4m3fn", "0x1.2a05f2p+33", "nan io", "nan io", "0x1.cp+8 io", "nan io",
         "0x1.cp+8 io", "0x1.cp+8 io",
         "1e10: NaN where IEEE 754 gives inf, max toward zero (issue 10's example)"),
    case("float8_e4m3fn", "-0x1.2a05f2p+33", "nan io", "nan io", "-0x1.cp+8 io",
         "-0x1.cp+8 io", "nan io", "-0x1.cp+8 io", "-1e10: -max toward +inf"),
    same("float8_e4m3fn", "0x1.2a05f2p+33", "nan io", "1e10, every overflow NaN", "nan"),
    same("float8_e4m3fn", "0x1.2a05f2p+33", "0x1.cp+8 io", "1e10 saturates", "saturate"),
    same("float8_e4m3fn", "inf", "nan", "inf: no infinity, so NaN"),
    same("float8_e4m3fn", "-inf", "-0x1.cp+8", "-inf saturates to -max", "saturate"),
    same("float8_e4m3fn", "-0x0p+0", "-0x0p+0", "-0 exists"),
    case("float8_e4m3fn", "0x1p-10", "0x0p+0 iu", "0x1p-9 iu", "0x0p+0 iu", "0x1p-9 iu",
         "0x0p+0 iu", "0x1p-9 iu", "half the smallest subnormal 2**-9"),
    # --------------------------------------------------------- fnuz formats: no -0
    same("float8_e4m3fnuz", "-0x0p+0", "0x0p+0", "-0 becomes +0"),
    case("float8_e4m3fnuz", "-0x1p-12", "0x0p+0 iu", "0x0p+0 iu", "0x0p+0 iu", "0x0p+0 iu",
         "-0x1p-10 iu", "-0x1p-10 iu", "a tiny negative value rounds to +0 or -2**-10"),
    case("float8_e4m3fnuz", "0x1.fp+7", "nan io", "nan io", "0x1.ep+7 i", "nan io",
         "0x1.ep+7 i", "0x1.ep+7 i", "248 = 240 + ulp/2 (240 = 1.111 is odd)"),
    case("float8_e5m2fnuz", "0x1.ep+15", "nan io", "nan io", "0x1.cp+15 i", "nan io",
         "0x1.cp+15 i", "0x1.cp+15 i", "61440 = 57344 + ulp/2"),
    same("float8_e5m2fnuz", "-0x0p+0", "0x0p+0", "-0 becomes +0"),
    case("float8_e4m3b11fnuz", "0x1.fp+4", "nan io", "nan io", "0x1.ep+4 i", "nan io",
         "0x1.ep+4 i", "0x1.ep+4 i", "31 = 30 + ulp/2"),
    same("float8_e4m3b11fnuz", "-0x0p+0", "0x0p+0", "-0 becomes +0"),
    # ------------------------------------------------------- IEEE-like float8 formats
    case("float8_e5m2", "0x1.ep+15", "inf io", "inf io", "0x1.cp+15 i", "inf io",
         "0x1.cp+15 i", "0x1.cp+15 i", "61440 = 57344 + ulp/2"),
    case("float8_e5m2", "0x1.2p+0", "0x1p+0 i", "0x1.4p+0 i", "0x1p+0 i", "0x1.4p+0 i",
         "0x1p+0 i", "0x1.4p+0 i", "1.125: tie between 1 and 1.25 (p = 3)"),
    case("float8_e4m3", "0x1.fp+7", "inf io", "inf io", "0x1.ep+7 i", "inf io",
         "0x1.ep+7 i", "0x1.ep+7 i", "248 = 240 + ulp/2"),
    case("float8_e3m4", "0x1.f8p+3", "inf io", "inf io", "0x1.fp+3 i", "inf io",
         "0x1.fp+3 i", "0x1.fp+3 i", "15.75 = 15.5 + ulp/2"),
    case("float8_e3m4", "0x1p-7", "0x0p+0 iu", "0x1p-6 iu", "0x0p+0 iu", "0x1p-6 iu",
         "0x0p+0 iu", "0x1p-6 iu", "half the smallest subnormal 2**-6"),
    # --------------------------------- float8_e8m0fnu (powers of two, no zero, no sign)
    case("float8_e8m0fnu", "0x1.8p+1", "0x1p+2 i", "0x1p+2 i", "0x1p+1 i", "0x1p+2 i",
         "0x1p+1 i", "0x1p+1 i", "3: ties go away from zero; odd is truncation"),
    case("float8_e8m0fnu", "0x1.7ffffffffffffp+1", "0x1p+1 i", "0x1p+1 i", "0x1p+1 i",
         "0x1p+2 i", "0x1p+1 i", "0x1p+1 i", "just below 3"),
    case("float8_e8m0fnu", "0x1p-128", "0x1p-127 iu", "0x1p-127 iu", "nan iu", "0x1p-127 iu",
         "nan iu", "0x1p-127 iu", "2**-128: below the smallest value 2**-127"),
    case("float8_e8m0fnu", "0x1p-200", "0x1p-127 iu", "0x1p-127 iu", "nan iu", "0x1p-127 iu",
         "nan iu", "0x1p-127 iu", "far below 2**-127: still 2**-127 in the nearest modes"),
    case("float8_e8m0fnu", "0x1.8p+127", "nan io", "nan io", "0x1p+127 i", "nan io",
         "0x1p+127 i", "0x1p+127 i", "1.5 * 2**127 overflows (NaN) where it rounds up"),
    same("float8_e8m0fnu", "0x1p+127", "0x1p+127", "the largest value, exact"),
    same("float8_e8m0fnu", "0x1p-127", "0x1p-127", "the smallest value, exact"),
    same("float8_e8m0fnu", "0x0p+0", "nan", "zero has no encoding"),
    same("float8_e8m0fnu", "-0x1p+0", "nan", "negative values have no encoding"),
    same("float8_e8m0fnu", "inf", "nan", "inf"),
    # ------------------- IEEE P3109 (interim report v4.0): "even" is the code's parity, no -0
    # binary8p1se: powers of two, bias 64, so 2**k has code k + 64 (even where k is even)
    case("binary8p1se", "0x1.8p+1", "0x1p+2 i", "0x1p+2 i", "0x1p+1 i", "0x1p+2 i",
         "0x1p+1 i", "0x1p+1 i", "3: the tie goes to 4 (code 0x42); 2 (0x41) is odd already"),
    case("binary8p1se", "0x1.8p+0", "0x1p+0 i", "0x1p+1 i", "0x1p+0 i", "0x1p+1 i",
         "0x1p+0 i", "0x1p+1 i", "1.5: 1 (0x40) is even, so odd steps up to 2"),
    case("binary8p1se", "0x1p-64", "0x0p+0 iu", "0x1p-63 iu", "0x0p+0 iu", "0x1p-63 iu",
         "0x0p+0 iu", "0x1p-63 iu", "half the smallest value: the tie goes to code 0"),
    case("binary8p1se", "0x1.8p+62", "0x1p+62 i", "inf io", "0x1p+62 i", "inf io",
         "0x1p+62 i", "inf io", "1.5 max: max's code 0x7E is even; odd overflows to +inf"),
    case("binary8p1se", "-0x1p-70", "0x0p+0 iu", "0x0p+0 iu", "0x0p+0 iu", "0x0p+0 iu",
         "-0x1p-63 iu", "-0x1p-63 iu", "no -0: a negative value rounding to 0 is +0"),
    # binary8p4se: max 224 = 0x7E (S = 14, even); 232 lies halfway to 240
    case("binary8p4se", "0x1.dp+7", "0x1.cp+7 i", "inf io", "0x1.cp+7 i", "inf io",
         "0x1.cp+7 i", "inf io", "232: odd rounds to S = 15 past max: SatNone gives +inf"),
    # binary8p4sf: max 240 = 0x7F (S = 15, odd); SatNone saturates in a finite format
    case("binary8p4sf", "0x1.fp+7", "0x1.ep+7 io", "0x1.ep+7 io", "0x1.ep+7 i",
         "0x1.ep+7 io", "0x1.ep+7 i", "0x1.ep+7 i", "248 = max + ulp/2: saturates, no NaN"),
    same("binary8p4sf", "inf", "0x1.ep+7", "inf saturates under SatNone ('ieee')"),
    same("binary8p4sf", "inf", "nan", "inf is NaN under 'nan'", rule="nan"),
    # binary8p4ue: max 53248 = 0xFD (S = 13, odd), +inf 0xFE; the range ends at 0 below
    case("binary8p4ue", "0x1.bp+15", "inf io", "inf io", "0x1.ap+15 i", "inf io",
         "0x1.ap+15 i", "0x1.ap+15 i", "halfway past max: even goes up (+inf), odd stays"),
    case("binary8p4ue", "-0x1p+0", "nan io", "nan io", "0x0p+0 io", "0x0p+0 io", "nan io",
         "nan io", "below the range: 0 toward zero and +inf, else NaN (SatNone)"),
    same("binary8p4ue", "-0x1p+0", "0x0p+0 io", "saturates to 0 (SatPropagate)",
         rule="saturate"),
    same("binary8p4ue", "-inf", "nan", "-inf: NaN under SatNone"),
    same("binary8p4ue", "-inf", "0x0p+0", "-inf: 0 under SatPropagate", rule="saturate"),
    # ------------------------------- float6 / float4: no inf, no NaN, overflow saturates
    case("float6_e2m3fn", "0x1.fp+2", "0x1.ep+2 io", "0x1.ep+2 io", "0x1.ep+2 i",
         "0x1.ep+2 io", "0x1.ep+2 i", "0x1.ep+2 i", "7.75 = 7.5 + ulp/2 (7.5 is odd)"),
    case("float6_e2m3fn", "0x1p-4", "0x0p+0 iu", "0x1p-3 iu", "0x0p+0 iu", "0x1p-3 iu",
         "0x0p+0 iu", "0x1p-3 iu", "half the smallest subnormal 2**-3"),
    same("float6_e2m3fn", "-inf", "-0x1.ep+2", "-inf becomes -max"),
    case("float6_e3m2fn", "0x1.ep+4", "0x1.cp+4 io", "0x1.cp+4 io", "0x1.cp+4 i",
         "0x1.cp+4 io", "0x1.cp+4 i", "0x1.cp+4 i", "30 = 28 + ulp/2"),
    case("float4_e2m1fn", "0x1p-2", "0x0p+0 iu", "0x1p-1 iu", "0x0p+0 iu", "0x1p-1 iu",
         "0x0p+0 iu", "0x1p-1 iu", "0.25: tie between 0 and 0.5"),
    case("float4_e2m1fn", "0x1.4p+1", "0x1p+1 i", "0x1.8p+1 i", "0x1p+1 i", "0x1.8p+1 i",
         "0x1p+1 i", "0x1.8p+1 i", "2.5: tie between 2 (even) and 3"),
    case("float4_e2m1fn", "0x1.4p+2", "0x1p+2 i", "0x1.8p+2 i", "0x1p+2 i", "0x1.8p+2 i",
         "0x1p+2 i", "0x1.8p+2 i", "5: tie between 4 (even) and 6"),
    case("float4_e2m1fn", "0x1.cp+2", "0x1.8p+2 io", "0x1.8p+2 io", "0x1.8p+2 i",
         "0x1.8p+2 io", "0x1.8p+2 i", "0x1.8p+2 i", "7 = 6 + ulp/2: saturates"),
    case("float4_e2m1fn", "-0x1.cp+2", "-0x1.8p+2 io", "-0x1.8p+2 io", "-0x1.8p+2 i",
         "-0x1.8p+2 i", "-0x1.8p+2 io", "-0x1.8p+2 i", "-7"),
    same("float4_e2m1fn", "-0x0p+0", "-0x0p+0", "-0 exists"),
    same("float4_e2m1fn", "inf", "0x1.8p+2", "inf becomes max"),
]


def _label(why):
    text = why.split(":")[0].replace("**", "^").replace("+", " plus ")
    text = re.sub(r"(^|[ ^(])-", r"\1 minus ", text).replace("^", "e")
    words = "".join(ch if ch.isalnum() or ch == "." else " " for ch in text).split()
    return "_".join(words)[:48]


def _params():
    out = []
    for c in CASES:
        for mode, want in zip(MODES, c.want, strict=True):
            label = _label(c.why)
            rule = f"-{c.rule}" if c.rule else ""
            out.append(pytest.param(c, mode, want, id=f"{c.fmt}-{mode.value}{rule}-{label}"))
    return out


def _parse(want: str):
    text, _, flags = want.partition(" ")
    return float.fromhex(text), tuple(f in flags for f in "iou")


def _same(got: float, want: float) -> bool:
    if np.isnan(want) or np.isnan(got):
        return bool(np.isnan(want) and np.isnan(got))
    return got == want and np.signbit(got) == np.signbit(want)


def _check(c, mode, got, flags, want, path):
    __tracebackhide__ = True
    wv, wf = _parse(want)
    gf = tuple(bool(f) for f in flags)
    if not _same(float(got), wv) or gf != wf:
        x = c.x if isinstance(c.x, str) else repr(c.x)
        names = ("inexact", "overflow", "underflow")
        pytest.fail(f"{path}: {x} into {c.fmt} ({mode.value}, overflow={c.rule!r}; {c.why}): "
                    f"expected {wv.hex()} {[n for n, f in zip(names, wf, strict=True) if f]}, "
                    f"got {float(got).hex()} {[n for n, f in zip(names, gf, strict=True) if f]}",
                    pytrace=False)


@pytest.mark.parametrize(("c", "mode", "want"), _params())
def test_pinned(c, mode, want):
    fmt = FORMATS[c.fmt]
    if isinstance(c.x, tuple):  # an exact sum through the engine
        xs = [float.fromhex(t) for t in c.x]
        ex = sum_of_products([(ExactPart.from_float64(np.array([x])),) for x in xs], (1,))
        got, *flags = ex.round(fmt, mode, resolve_overflow(c.rule, fmt))
        _check(c, mode, got[0], [f[0] for f in flags], want, "sum_of_products")
        return
    if isinstance(c.x, str):
        x = float.fromhex(c.x)
        r = er.round_to(np.array([x]), fmt, rounding=mode, overflow=c.rule)
        _check(c, mode, r.array.numpy().astype(np.float64)[0],
               (r.inexact[0], r.overflow[0], r.underflow[0]), want, "er.round_to(numpy float64)")
        values = [x]
    else:
        values = [c.x]
    r = er.round_to(values, fmt, rounding=mode, overflow=c.rule)
    _check(c, mode, r.array.numpy().astype(np.float64)[0],
           (r.inexact[0], r.overflow[0], r.underflow[0]), want, "er.round_to(Python value)")


# ------------------------------------------------------------------------- other pins
@pytest.mark.parametrize("fmt", [f for f in FORMATS.values() if f.kind == "float"
                                 and not f.has_nan], ids=lambda f: f.name)
@pytest.mark.parametrize("path", ["numpy", "python", "engine"])
def test_nan_into_format_without_nan(fmt, path):
    """An undefined element (the placeholder +0, flagged), not an error of the whole call."""
    if path == "engine":  # 0 * inf: NaN, the undefined marker, beside a regular element
        ex = sum_of_products([(ExactPart.from_float64(np.array([0.0, 1.0])),
                               ExactPart.from_float64(np.array([np.inf, 1.0])))], (2,))
        values = ex.round(fmt, R.NEAREST_EVEN, "saturate")[0]
        assert np.isnan(values[0]) and values[1] == 1.0
        return
    r = er.round_to(np.array([np.nan, 1.0]) if path == "numpy" else [float("nan"), 1.0], fmt)
    assert r.undefined.tolist() == [True, False]
    assert r.array.codes().tolist()[0] == 0 and r.array.tolist() == [0.0, 1.0]


def test_numpy_agrees_on_the_float16_trap():
    """numpy's float64 -> float16 cast rounds once; it agrees with exactref on the trap."""
    x = np.array([float.fromhex("0x1.0020000001p+0"), float.fromhex("0x1.003ffffffffffp+0")])
    assert x.astype(np.float16).tolist() == er.asarray(x, "float16").tolist() == [
        float.fromhex("0x1.004p+0")] * 2


def test_scalar_and_vector_paths_agree_on_every_pin():
    """The same float64 pins through a multi-element array (one call, mixed lanes)."""
    for fmt_name in sorted({c.fmt for c in CASES}):
        fmt = FORMATS[fmt_name]
        cases = [c for c in CASES if c.fmt == fmt_name and isinstance(c.x, str) and c.rule is None
                 and (fmt.has_nan or c.x != "nan")]
        x = np.array([float.fromhex(c.x) for c in cases])
        for k, mode in enumerate(MODES):
            r = er.round_to(x, fmt, rounding=mode)
            got = r.array.numpy().astype(np.float64)
            for i, c in enumerate(cases):
                _check(c, mode, got[i], (r.inexact[i], r.overflow[i], r.underflow[i]), c.want[k],
                       "er.round_to(numpy float64, all pins at once)")
