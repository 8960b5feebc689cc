"""Hand-written bit-level cases of the arithmetic family in every rounding mode, regressions of
the bugs the oracle found, and the errors of the ops.

The expected values were derived by hand (the comments say how) and agree with MPFR.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import exactref as er

R = er.Rounding
NE, NA, RZ, RU, RD, RO = (R.NEAREST_EVEN, R.NEAREST_AWAY, R.TOWARD_ZERO, R.TOWARD_POSITIVE,
                          R.TOWARD_NEGATIVE, R.ODD)
MODES = [NE, NA, RZ, RU, RD, RO]
MAX64 = float.fromhex("0x1.fffffffffffffp+1023")  # 1.7976931348623157e308
TINY64 = float.fromhex("0x1p-1074")  # 5e-324


def h(s: str) -> float:
    return float.fromhex(s)


def bits(result, index=0) -> str:
    v = result.rounded._wide().reshape(-1)[index]
    return float(v).hex()


def per_mode(fn, want: dict):
    """``fn(mode)`` gives a Result; ``want`` maps each mode to the expected value's hex."""
    __tracebackhide__ = True
    got = {m: bits(fn(m)) for m in MODES}
    exp = {m: h(want[m]).hex() for m in MODES}
    assert got == exp


# ------------------------------------------------------------------ bit-level, per mode
def test_divide_one_third_float32():
    """1/3 = 1.010101...b * 2**-2: the 23 fraction bits kept end in 0 (0x1.555554p-2, even),
    and the rest is 2/3 of an ulp: nearest rounds up, odd sets the last bit (the same value)."""
    x, y = np.float32([1.0]), np.float32([3.0])
    per_mode(lambda m: er.divide(x, y, rounding=m), {
        NE: "0x1.555556p-2", NA: "0x1.555556p-2", RZ: "0x1.555554p-2", RU: "0x1.555556p-2",
        RD: "0x1.555554p-2", RO: "0x1.555556p-2"})


def test_sqrt_two_float32():
    """sqrt(2) = 0x1.6a09e667f3bcc9p+0: the 23 fraction bits kept (0x1.6a09e6p+0) end in 1, and
    the rest (0.0011..b of an ulp) is below half: every mode but toward +inf truncates."""
    x = np.float32([2.0])
    per_mode(lambda m: er.sqrt(x, rounding=m), {
        NE: "0x1.6a09e6p+0", NA: "0x1.6a09e6p+0", RZ: "0x1.6a09e6p+0", RU: "0x1.6a09e8p+0",
        RD: "0x1.6a09e6p+0", RO: "0x1.6a09e6p+0"})


def test_rsqrt_two_float16():
    """1/sqrt(2) = 0x1.6a09e6..p-1 into 11 bits: 0x1.6a0p-1 (fraction 0110101000b, last bit 0)
    and 0x1.6a4p-1; the rest 0x0.09e6 is below half."""
    x = er.asarray([2.0], "float16")
    per_mode(lambda m: er.rsqrt(x, rounding=m), {
        NE: "0x1.6a0p-1", NA: "0x1.6a0p-1", RZ: "0x1.6a0p-1", RU: "0x1.6a4p-1", RD: "0x1.6a0p-1",
        RO: "0x1.6a4p-1"})


def test_reciprocal_three_bfloat16():
    """1/3 into 8 bits: 0x1.54p-2 (fraction 0101010b) or 0x1.56p-2, the rest 0x0.0155.. above
    half of the 0x0.02 step: nearest rounds up; truncation ends in 0: odd steps up."""
    x = er.asarray([3.0], "bfloat16")
    per_mode(lambda m: er.reciprocal(x, rounding=m), {
        NE: "0x1.56p-2", NA: "0x1.56p-2", RZ: "0x1.54p-2", RU: "0x1.56p-2", RD: "0x1.54p-2",
        RO: "0x1.56p-2"})


def test_floor_divide_tie_float16():
    """floor(6148 / 3) = 2049, halfway between float16's 2048 and 2050 (spacing 2 there): ties
    to even give 2048 (fraction 0), away 2050; odd takes 2050 (fraction ...01)."""
    x, y = er.asarray([6148.0], "float16"), er.asarray([3.0], "float16")
    per_mode(lambda m: er.floor_divide(x, y, rounding=m), {
        NE: "0x1p+11", NA: "0x1.004p+11", RZ: "0x1p+11", RU: "0x1.004p+11", RD: "0x1p+11",
        RO: "0x1.004p+11"})


def test_remainder_of_a_tiny_negative_float32():
    """remainder(-2**-30, 1) = 1 - 2**-30 (the divisor's sign): 1 to nearest, 1 - 2**-24 toward
    zero or -inf (and odd: 0x1.fffffep-1 ends in a 1 bit)."""
    x, y = np.float32([-(2.0**-30)]), np.float32([1.0])
    per_mode(lambda m: er.remainder(x, y, rounding=m), {
        NE: "0x1p+0", NA: "0x1p+0", RZ: "0x1.fffffep-1", RU: "0x1p+0", RD: "0x1.fffffep-1",
        RO: "0x1.fffffep-1"})


def test_subnormal_quotient_float32():
    """3 * 2**-149 / 4 = 0.75 * 2**-149: above the midpoint between 0 and the smallest value."""
    x, y = np.float32([3 * 2.0**-149]), np.float32([4.0])
    per_mode(lambda m: er.divide(x, y, rounding=m), {
        NE: "0x1p-149", NA: "0x1p-149", RZ: "0x0p+0", RU: "0x1p-149", RD: "0x0p+0",
        RO: "0x1p-149"})


def test_addcmul_value_bfloat16():
    """1 + 0.1 * 1 * 1 with 0.1 taken exactly (float64's 0x1.999999999999ap-4): 1.1 between
    0x1.18p+0 and 0x1.1ap+0, above their midpoint."""
    one = er.asarray([1.0], "bfloat16")
    per_mode(lambda m: er.addcmul(one, one, one, value=0.1, rounding=m), {
        NE: "0x1.1ap+0", NA: "0x1.1ap+0", RZ: "0x1.18p+0", RU: "0x1.1ap+0", RD: "0x1.18p+0",
        RO: "0x1.1ap+0"})


def test_fma_single_rounding_float32():
    """(1 + 2**-12)**2 - 1 = 2**-11 + 2**-24 exactly (an unfused product would lose 2**-24)."""
    x = np.float32([1 + 2.0**-12])
    for m in MODES:
        assert bits(er.fma(x, x, np.float32([-1.0]), rounding=m)) == "0x1.0008000000000p-11"


def test_cast_once_not_through_float32():
    """1 + 2**-8 + 2**-40 into bfloat16: above the midpoint 1 + 2**-8, so 1 + 2**-7 to nearest;
    through float32 it would become the midpoint and round to even, 1."""
    x = np.array([1 + 2.0**-8 + 2.0**-40])
    per_mode(lambda m: er.cast(x, "bfloat16", rounding=m), {
        NE: "0x1.02p+0", NA: "0x1.02p+0", RZ: "0x1p+0", RU: "0x1.02p+0", RD: "0x1p+0",
        RO: "0x1.02p+0"})


def test_cast_tie_into_e8m0():
    """3 lies halfway between 2 and 4 in float8_e8m0fnu, whose values have a one-bit
    significand: no even one, so nearest-even ties go away (as the shared MPFR oracle does), and
    round-to-odd keeps the truncation (every value is odd)."""
    x = np.array([3.0])
    per_mode(lambda m: er.cast(x, "float8_e8m0fnu", rounding=m), {
        NE: "0x1p+2", NA: "0x1p+2", RZ: "0x1p+1", RU: "0x1p+2", RD: "0x1p+1", RO: "0x1p+1"})


def test_signed_zeros():
    """Zero signs: sqrt(-0) = -0, rsqrt(-0) = -inf, 1/-0 = -inf, subtract(1, 1) = -0 toward
    -inf only, fmod keeps the dividend's sign, remainder takes the divisor's, trunc(-0.5) = -0,
    floor(-0 / 5) = -0, minimum(0, -0) = -0, maximum(-0, 0) = +0, abs(-0) = +0."""
    z = np.array([-0.0])
    assert bits(er.sqrt(z)) == "-0x0.0p+0"
    assert er.rsqrt(z).rounded.tolist() == [-math.inf]
    assert er.reciprocal(z).rounded.tolist() == [-math.inf]
    assert bits(er.subtract([1.0], [1.0], rounding=RD)) == "-0x0.0p+0"
    assert bits(er.subtract([1.0], [1.0], rounding=RU)) == "0x0.0p+0"
    assert bits(er.fmod([-6.0, 6.0], [3.0, -3.0]), 0) == "-0x0.0p+0"
    assert bits(er.fmod([-6.0, 6.0], [3.0, -3.0]), 1) == "0x0.0p+0"
    assert bits(er.remainder([-6.0, 6.0], [3.0, -3.0]), 0) == "0x0.0p+0"
    assert bits(er.remainder([-6.0, 6.0], [3.0, -3.0]), 1) == "-0x0.0p+0"
    assert bits(er.divide([-0.5], [1.0], rounding_mode="trunc")) == "-0x0.0p+0"
    assert bits(er.floor_divide([-0.0], [5.0])) == "-0x0.0p+0"
    assert bits(er.minimum([0.0], [-0.0])) == "-0x0.0p+0"
    assert bits(er.maximum([-0.0], [0.0])) == "0x0.0p+0"
    assert bits(er.abs(z)) == "0x0.0p+0"
    assert bits(er.fma([0.0], [-5.0], [0.0])) == "0x0.0p+0"  # -0 + +0
    assert bits(er.fma([0.0], [-5.0], [-0.0])) == "-0x0.0p+0"  # -0 + -0


def test_remainder_and_fmod_specials():
    """y = ±inf: fmod gives x; remainder gives x where the signs agree, else y (Python's and
    NumPy's %); a zero x over an infinite y takes the divisor's sign in remainder. y = ±0 and
    x = ±inf give NaN."""
    inf = math.inf
    x = [1.0, -1.0, 1.0, -0.0, 0.0, 5.0, inf]
    y = [inf, inf, -inf, inf, -inf, 0.0, 2.0]
    assert er.fmod(x, y).rounded.tolist()[:3] == [1.0, -1.0, 1.0]
    rem = er.remainder(x, y).rounded._wide()
    assert rem[:3].tolist() == [1.0, inf, -inf]
    assert [float(v).hex() for v in rem[3:5]] == ["0x0.0p+0", "-0x0.0p+0"]
    assert np.isnan(rem[5:]).all() and np.isnan(er.fmod(x, y).rounded._wide()[5:]).all()


def test_complex_sqrt_specials():
    """C99 G.6.4.2: sqrt(x ± inf i) = +inf ± inf i (x NaN too), sqrt(-inf + y i) = +0 + inf i,
    sqrt(+inf + y i) = +inf + 0i with y's sign, sqrt(-4 - 0i) = +0 - 2i."""
    z = np.empty(5, dtype=np.complex128)
    z.real = [math.nan, -math.inf, math.inf, -4.0, 4.0]
    z.imag = [-math.inf, 2.0, -2.0, -0.0, -0.0]
    got = er.sqrt(z).rounded._wide()
    assert got.real.tolist() == [math.inf, 0.0, math.inf, 0.0, 2.0]
    assert got.imag.tolist() == [-math.inf, math.inf, -0.0, -2.0, -0.0]
    assert [math.copysign(1, v) for v in got.imag[2:]] == [-1, -1, -1]


# ------------------------------------------------------------------- regressions (fixed)
def test_floor_and_trunc_of_huge_quotients():
    """Once wrong: the integer part of a quotient beyond 2**54 was taken to be its float64
    approximation whenever the rest was positive, but the rest (up to half an ulp there) holds
    integers. MAX / (1 + 2**-52) = 0x1.ffffffffffffd8..p+1023: its floor lies strictly between
    0x1.ffffffffffffdp+1023 and ...ep+1023, so toward +inf it is the upper one."""
    x, y = np.array([MAX64, 14943215266087.0]), np.array([1 + 2.0**-52, -0.000732421875])
    for how in ("floor", "trunc"):
        up = er.divide(x, y, rounding_mode=how, rounding=RU).rounded._wide()
        down = er.divide(x, y, rounding_mode=how, rounding=RD).rounded._wide()
        assert up[0] == h("0x1.ffffffffffffep+1023") and down[0] == h("0x1.ffffffffffffdp+1023")
    # -2.04e16: trunc is above (toward zero) the exact quotient, floor below it
    assert er.divide(x, y, rounding_mode="trunc", rounding=RD).rounded._wide()[1] == \
        h("-0x1.21efc0ce18956p+54")
    assert er.divide(x, y, rounding_mode="trunc", rounding=RU).rounded._wide()[1] == \
        h("-0x1.21efc0ce18955p+54")
    assert er.floor_divide(np.array([1.0]), np.array([1.8711811717997587e-290]),
                           rounding=RO).rounded._wide()[0] == h("0x1.5ef7f7fd9bde9p+962")


def test_modulus_of_far_apart_parts():
    """Once wrong: |1e300 + 1e-300i| was 0 (and raised a RuntimeWarning): the squared modulus
    is a sum of pieces 2000 binades apart, held as a Fraction, and the root started from its
    placeholder (NaN). Toward +inf the exact modulus lies above 1e300, and |MAX + 1i| overflows."""
    z = np.empty(3, dtype=np.complex128)
    z.real, z.imag = [1e300, MAX64, 1e-300], [1e-300, 1.0, -1e300]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert er.abs(z).rounded.tolist() == [1e300, MAX64, 1e300]
        up = er.abs(z, rounding=RU).rounded._wide()
    assert up[0] == np.nextafter(1e300, math.inf) and up[1] == math.inf


def test_complex_quotient_zero_parts_toward_negative():
    """Once +0: a part of a complex quotient whose numerator x*conj(y) cancels exactly takes
    IEEE's sum rule, -0 rounding toward -inf (as every other exact sum in exactref)."""
    x = np.array([1 + 1j, complex(-0.0, 0.0)])
    y = np.array([1 - 1j, 2 + 0j])
    down = er.divide(x, y, rounding=RD).rounded._wide()
    assert [math.copysign(1, v) for v in down.real] == [-1, -1]
    near = er.divide(x, y).rounded._wide()
    assert [math.copysign(1, v) for v in near.real] == [1, 1]


def test_addcdiv_infinite_input_beside_a_huge_quotient():
    """Once NaN: with an infinite input, ``tensor1 / tensor2`` was evaluated in float64, where
    1 / -2**-1074 overflows to -inf (and inf + -inf is NaN) and 2**-1074 / 1e300 underflows to
    0 (inf * 0 is NaN); the exact values are finite and nonzero, so the result is the input.
    A ``value`` past float64's range (10**400) no longer raises OverflowError."""
    i = np.array([math.inf, math.inf, -math.inf])
    t1 = np.array([1.0, TINY64, TINY64])
    t2 = np.array([-TINY64, 1e300, 1e300])
    assert er.addcdiv(i, t1, t2).rounded.tolist() == [math.inf, math.inf, -math.inf]
    assert er.addcdiv(i[1:], t1[1:], t2[1:], value=math.inf).rounded._wide()[0] == math.inf
    assert math.isnan(er.addcdiv(i[2:], t1[2:], t2[2:], value=math.inf).rounded._wide()[0])
    got = er.addcdiv([1.0, math.inf], [1.0, 1.0], [3.0, 0.0], value=-(10**400)).rounded._wide()
    assert got[0] == -math.inf and math.isnan(got[1])  # inf + (-huge) * (1 / 0): inf - inf
    got = er.addcdiv([1.0, 0.0], [1.0, 1.0], [3.0, 0.0], value=10**400).rounded.tolist()
    assert got == [math.inf, math.inf]


# -------------------------------------------------- a rest the engine once dropped
# Found by the oracle: when every element had E == 0 and c2 == 0, ExactArray's float64 shortcut
# returned c1 and dropped the rest r of an inexact quotient or root, so rounding into any
# format but float64 treated the value as exact. Fixed in _engine.ExactArray._as_odd_float64.
def test_addcdiv_rest_of_a_single_element():
    """1 + 2**-60 / 3 lies above 1: toward +inf float32 gives 1 + 2**-23 (exactref gave 1)."""
    got = er.addcdiv(np.float32([1.0]), np.float32([2.0**-60]), np.float32([3.0]), rounding=RU)
    assert bits(got) == "0x1.0000020000000p+0"


def test_complex_sqrt_rest_of_a_single_element():
    """sqrt(1 + 2**-30 i) has real part sqrt((|z| + 1) / 2), just above 1: toward +inf
    complex64 gives 1 + 2**-23 (exactref gave 1)."""
    got = er.sqrt(np.array([complex(1, 2.0**-30)], dtype=np.complex64), rounding=RU)
    assert got.rounded._wide().real[0] == 1 + 2.0**-23


def test_complex_abs_rest_of_a_single_element():
    """|1 + 2**-26 i| = sqrt(1 + 2**-52), just above 1: round-to-odd into float32 gives
    1 + 2**-23 (exactref gave 1)."""
    got = er.abs(np.array([complex(1, 2.0**-26)], dtype=np.complex64), rounding=RO)
    assert got.rounded._wide()[0] == 1 + 2.0**-23


def test_engine_shortcut_needs_every_exponent_zero():
    """The same values beside an element with another exponent take the general path and
    round correctly (which the hypothesis sweeps rely on)."""
    got = er.addcdiv(np.float32([1.0, 1000.0]), np.float32([2.0**-60, 1.0]),
                     np.float32([3.0, 3.0]), rounding=RU)
    assert bits(got) == "0x1.0000020000000p+0"


# ---------------------------------------------------------------------------- errors
def test_nan_results_in_formats_without_nan_are_undefined():
    """float6 and float4 have no NaN: an exact NaN result is an undefined element (the
    placeholder +0, Result.undefined), not an error of the whole call."""
    for fmt in ("float4_e2m1fn", "float6_e3m2fn", "float6_e2m3fn"):
        for r in (er.sqrt(er.asarray([-1.0, 1.0], fmt)),
                  er.divide(er.asarray([0.0, 1.0], fmt), er.asarray([0.0, 1.0], fmt)),
                  er.fmod(er.asarray([1.0, 1.0], fmt), er.asarray([0.0, 1.0], fmt))):
            assert r.undefined.tolist() == [True, False], (fmt, r.op)
            assert r.rounded.tolist()[0] == 0.0 and r.covers([0.5, r.rounded.tolist()[1]]).all()
        # an infinity saturates there (1 / 0 is the largest value)
        assert er.reciprocal(er.asarray([0.0, -0.0], fmt)).rounded.tolist()[0] > 0


def test_cast_errors():
    """NaN has no integer value; an infinity has none unless saturating; a value outside the
    range with overflow='error' raises OverflowError naming the element."""
    with pytest.raises(ValueError, match="NaN"):
        er.cast(np.array([1.0, math.nan]), "int8")
    with pytest.raises(ValueError, match="NaN"):
        er.cast(np.array([math.nan]), "int8", overflow="saturate")
    with pytest.raises(ValueError, match="infinity"):
        er.cast(np.array([math.inf]), "uint16")
    assert er.cast(np.array([math.inf, -math.inf]), "int16",
                   overflow="saturate").rounded.tolist() == [32767, -32768]
    with pytest.raises(OverflowError, match=r"element \(1,\)"):
        er.cast(np.array([3.0, 300.0]), "int8", overflow="error")
    with pytest.raises(ValueError, match="no NaN"):
        er.cast(np.array([1.0]), "float4_e2m1fn", overflow="nan")
    with pytest.raises(TypeError, match="imaginary"):
        er.cast(np.array([1 + 1j]), "float32")


def test_op_kind_errors():
    """Integer operands of addcdiv, complex ones of rsqrt and of divide's rounding modes."""
    with pytest.raises(TypeError):
        er.addcdiv(np.array([1]), np.array([1]), np.array([2]))
    with pytest.raises(TypeError):
        er.rsqrt(np.array([1 + 1j]))
    with pytest.raises(TypeError, match="rounding_mode"):
        er.divide(np.array([1 + 1j]), np.array([1 + 0j]), rounding_mode="floor")
    with pytest.raises(ValueError, match="rounding_mode"):
        er.divide([1.0], [2.0], rounding_mode="round")


def test_the_float32_lanes_ties_away_read_no_tie_from_a_remainder():
    """(1.5 + 2**-22) / 1.5 = 1 + (4/3) 2**-23: ties-away is the nearest, 1 + 2**-23. The
    float32 lane once read the remainder a - q*b (half an ulp here) as the error itself and
    stepped to 1 + 2**-22 (found by test_family_mpfr with hypothesis seed 27)."""
    x = np.float32([1.5 + 2.0**-22])
    got = er.divide(x, np.float32([1.5]), rounding="nearest_away")
    assert bits(got) == "0x1.0000020000000p+0"
    # a square root's residual a - s*s is no error either: sqrt(1 + 3 * 2**-23) in float32
    y = np.float32([1 + 3 * 2.0**-23])
    assert er.sqrt(y, rounding="nearest_away").rounded.tolist() == \
        er.sqrt(y, rounding="nearest_even").rounded.tolist()
