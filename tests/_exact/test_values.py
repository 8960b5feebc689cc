"""FloatValue and ComplexValue: exact scalar values, their classification, conversions, order."""

from __future__ import annotations

import math
import pickle
from decimal import Decimal
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import exactref as er
from exactref import ComplexValue, FloatValue

FINITE = st.floats(allow_nan=False, allow_infinity=False)
BINARY = st.builds(lambda m, k: Fraction(m) * Fraction(2) ** k, st.integers(-(2**130), 2**130),
                   st.integers(-1300, 1300))


def _parse_hex(text: str) -> Fraction:
    """An exact reading of a C99 hex float (any number of digits), independent of float.fromhex."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    assert body.startswith("0x"), text
    mant, _, exp = body[2:].partition("p")
    whole, _, frac = mant.partition(".")
    digits = int(whole + frac, 16)
    return sign * Fraction(digits) * Fraction(2) ** (int(exp) - 4 * len(frac))


# ---------------------------------------------------------------------------- construction
@pytest.mark.parametrize(("value", "fraction", "negative"), [
    (0, Fraction(0), False),
    (True, Fraction(1), False),
    (-7, Fraction(-7), True),
    (2**2000 + 1, Fraction(2**2000 + 1), False),
    (0.1, Fraction(0.1), False),
    (-0.0, Fraction(0), True),
    (5e-324, Fraction(1, 2**1074), False),
    (Fraction(-3, 8), Fraction(-3, 8), True),
    (Fraction(1, 2**5000), Fraction(1, 2**5000), False),
    (np.float32(0.1), Fraction(float(np.float32(0.1))), False),
    (np.float16(-0.0), Fraction(0), True),
    (ml_dtypes.bfloat16(0.1), Fraction(float.fromhex("0x1.9ap-4")), False),
    (np.array(448, ml_dtypes.float8_e4m3fn)[()], Fraction(448), False),
    (np.int64(2**62 + 1), Fraction(2**62 + 1), False),
    (np.uint64(2**64 - 1), Fraction(2**64 - 1), False),
    (np.int8(-128), Fraction(-128), True),
    ("0x1.8p+1", Fraction(3), False),
    ("-0x0p+0", Fraction(0), True),
    (" -0x1p-1074 ", -Fraction(1, 2**1074), True),
], ids=repr)
def test_exact_construction(value, fraction, negative):
    v = FloatValue(value)
    assert v.to_fraction() == fraction
    assert type(v.to_fraction()) is Fraction
    assert v.negative is negative
    assert v.is_finite and not v.is_nan and not v.is_inf
    assert v.is_zero is (fraction == 0)
    assert FloatValue(v) == v and FloatValue(v).negative is negative
    assert v.as_integer_ratio() == (fraction.numerator, fraction.denominator)


@pytest.mark.parametrize(("value", "nan", "inf", "negative"), [
    (math.inf, False, True, False), (-math.inf, False, True, True),
    (math.nan, True, False, False), (-math.nan, True, False, True),
    ("inf", False, True, False), ("-inf", False, True, True), ("nan", True, False, False),
    (np.float32(-np.inf), False, True, True), (ml_dtypes.bfloat16(np.nan), True, False, False),
], ids=repr)
def test_specials(value, nan, inf, negative):
    v = FloatValue(value)
    assert (v.is_nan, v.is_inf, v.negative, v.is_zero, v.is_finite) == (nan, inf, negative,
                                                                      False, False)
    with pytest.raises(ValueError, match="no exact rational value"):
        v.to_fraction()
    assert math.isnan(float(v)) if nan else float(v) == (-math.inf if negative else math.inf)


@pytest.mark.parametrize("value", [Fraction(1, 3), Fraction(1, 10), Fraction(-5, 6)], ids=str)
def test_non_binary_fraction_raises(value):
    with pytest.raises(ValueError, match="not a binary fraction"):
        FloatValue(value)
    with pytest.raises(ValueError, match="not a binary fraction"):
        ComplexValue(1, value)


@pytest.mark.parametrize("value", ["0.1", Decimal("0.1"), Decimal("1e-400")], ids=repr)
def test_non_binary_text_and_decimals_raise(value):
    """0.1 written in decimal is no binary value; like Fraction(1, 10) it must not be rounded
    silently (exact decimal spellings such as '0.5' are fine)."""
    with pytest.raises(ValueError, match="not a binary"):
        FloatValue(value)


def test_exact_decimal_text():
    assert FloatValue("0.5").to_fraction() == Fraction(1, 2)
    assert FloatValue(Decimal("-0.75")).to_fraction() == Fraction(-3, 4)


@pytest.mark.parametrize(("value", "error"), [
    (1 + 2j, TypeError), (np.complex64(1), TypeError), (None, TypeError), ([1.0], TypeError),
    ("one", ValueError), ("0x", ValueError),
], ids=repr)
def test_bad_inputs(value, error):
    with pytest.raises(error):
        FloatValue(value)


# ------------------------------------------------------------------------------ conversions
@given(FINITE)
@example(-0.0)
@example(5e-324)
@example(1.7976931348623157e308)
def test_float_round_trip(x):
    v = FloatValue(x)
    assert float(v) == x and math.copysign(1, float(v)) == math.copysign(1, x)
    assert v.to_fraction() == Fraction(x)
    assert _parse_hex(v.hex()) == Fraction(x)
    assert float.fromhex(v.hex()) == x
    assert v.hex().startswith("-") == (math.copysign(1, x) < 0)


@given(BINARY)
@example(Fraction(2**60 + 1))
@example(Fraction(2**1100))
@example(-Fraction(3, 2**1200))
def test_hex_is_exact(f):
    v = FloatValue(f)
    assert _parse_hex(v.hex()) == f
    # the hex digits are minimal: no trailing zero digit after the point
    mant = v.hex().split("p")[0]
    assert "." not in mant or not mant.endswith("0")


@given(BINARY)
@example(Fraction(2**60 + 1))
@example(Fraction(2**1100))
@example(Fraction(1, 2**1100))
def test_hex_text_round_trips_exactly(f):
    """FloatValue(v.hex()) is v, however many digits the hex needs."""
    v = FloatValue(f)
    assert FloatValue(v.hex()).to_fraction() == f


@given(BINARY)
@example(Fraction(2**60 + 1))
@example(Fraction(2**1100))
@example(-Fraction(2**1100))
@example(Fraction(1, 2**1100))
def test_repr_evaluates_back(f):
    v = FloatValue(f)
    text = repr(v)
    assert text.startswith("FloatValue(")
    back = eval(text, {"FloatValue": FloatValue})  # noqa: S307 - our own repr
    assert back.to_fraction() == f


@given(BINARY)
def test_float_is_nearest_even(f):
    """float(v) is Python's correctly rounded float(Fraction), with inf past the range."""
    try:
        want = float(f)
    except OverflowError:
        want = math.inf if f > 0 else -math.inf
    assert float(FloatValue(f)) == want


@pytest.mark.parametrize(("value", "text"), [
    (1.5, "FloatValue(1.5)"), (-0.0, "FloatValue(-0.0)"), (math.inf, "FloatValue(inf)"),
    (-math.inf, "FloatValue(-inf)"), (math.nan, "FloatValue(nan)"),
    (2**60 + 1, "FloatValue('0x1.000000000000001p+60')"),
])
def test_repr(value, text):
    assert repr(FloatValue(value)) == text


def test_hex_examples():
    assert FloatValue(1.5).hex() == "0x1.8p+0"
    assert FloatValue(-0.0).hex() == "-0x0p+0"
    assert FloatValue(0.0).hex() == "0x0p+0"
    assert FloatValue(math.inf).hex() == "inf" and FloatValue(-math.inf).hex() == "-inf"
    assert FloatValue(math.nan).hex() == "nan"
    assert FloatValue(5e-324).hex() == "0x1p-1074"
    assert FloatValue(2**60 + 1).hex() == "0x1.000000000000001p+60"


# ----------------------------------------------------------------------- order and equality
SPECIAL = [FloatValue(x) for x in (math.inf, -math.inf, math.nan, 0.0, -0.0)]


@given(BINARY, BINARY)
def test_order_is_exact(a, b):
    x, y = FloatValue(a), FloatValue(b)
    assert (x < y, x <= y, x > y, x >= y, x == y, x != y) == (a < b, a <= b, a > b, a >= b,
                                                              a == b, a != b)
    assert (x < b, x == b) == (a < b, a == b)  # against plain Fractions too
    if a == b:
        assert hash(x) == hash(y) == hash(a)


@given(BINARY)
def test_order_with_specials(a):
    x = FloatValue(a)
    inf, ninf, nan = FloatValue(math.inf), FloatValue(-math.inf), FloatValue(math.nan)
    assert ninf < x < inf
    assert not (x < nan or x > nan or x == nan or x <= nan or x >= nan)
    assert x != nan


def test_ieee_equality_details():
    assert FloatValue(0.0) == FloatValue(-0.0)
    assert hash(FloatValue(0.0)) == hash(FloatValue(-0.0))
    nan = FloatValue(math.nan)
    assert nan != nan and not (nan == nan)
    assert FloatValue(0.5) == 0.5 and FloatValue(3) == 3 and FloatValue(0.5) < Fraction(2, 3)
    assert FloatValue(2**64 + 1) > 2**64
    assert {FloatValue(0.5): 1}[0.5] == 1  # equal values hash alike
    assert sorted([FloatValue(3), FloatValue(-0.0), FloatValue(-math.inf), FloatValue(5e-324)]) \
        == [-math.inf, 0.0, 5e-324, 3]


def test_neg_and_abs():
    assert (-FloatValue(0.0)).negative and not (-FloatValue(-0.0)).negative
    assert (-FloatValue(1.5)).to_fraction() == Fraction(-3, 2)
    assert (-FloatValue(math.inf)).negative and (-FloatValue(math.nan)).is_nan
    assert not abs(FloatValue(-math.inf)).negative and abs(FloatValue(-2)).to_fraction() == 2
    assert not abs(FloatValue(-0.0)).negative


def test_pickle_and_copy():
    for x in (1.5, -0.0, math.inf, 2**100 + 1):
        v = FloatValue(x)
        w = pickle.loads(pickle.dumps(v))
        assert w == v and w.negative == v.negative and w.hex() == v.hex()


# ----------------------------------------------------------------------------- ComplexValue
def test_complex_construction():
    z = ComplexValue(1.5, -0.0)
    assert z.real == FloatValue(1.5) and z.imag.is_zero and z.imag.negative
    assert complex(z) == complex(1.5, -0.0)
    assert math.copysign(1, complex(z).imag) == -1
    assert ComplexValue(1 + 2j).imag == 2
    assert ComplexValue(np.complex64(0.1 + 0.2j)).real == FloatValue(np.float32(0.1))
    assert ComplexValue(z) == z and ComplexValue(3).imag.is_zero
    assert ComplexValue(FloatValue(2**60 + 1), Fraction(-1, 2**2000)).imag.to_fraction() == \
        Fraction(-1, 2**2000)


def test_complex_classification():
    assert ComplexValue(1, math.nan).is_nan and not ComplexValue(1, 2).is_nan
    assert ComplexValue(math.inf, 0).is_inf and ComplexValue(-0.0, 0.0).is_zero
    assert not ComplexValue(0, 1).is_zero


def test_complex_equality_and_hash():
    z = ComplexValue(1.5, 0)
    assert z == 1.5 and z == complex(1.5, 0) and z == FloatValue(1.5)
    assert z != ComplexValue(1.5, 1) and ComplexValue(1, math.nan) != ComplexValue(1, math.nan)
    # equal values must hash alike (Python's rule for ==), as complex(1.5) and 1.5 do
    assert hash(z) == hash(1.5) == hash(complex(1.5, 0)) == hash(FloatValue(1.5))
    assert {ComplexValue(2, 0): "x"}.get(2) == "x"


def test_complex_immutable_and_helpers():
    z = ComplexValue(1.5, -2)
    with pytest.raises(AttributeError):
        z.real = FloatValue(0)
    assert z.conjugate() == ComplexValue(1.5, 2)
    assert z.hex() == "(0x1.8p+0, -0x1p+1)"
    assert repr(z) == "ComplexValue(FloatValue(1.5), FloatValue(-2.0))"


def test_public_names():
    assert er.FloatValue is FloatValue and er.ComplexValue is ComplexValue
