"""er.quantize_linear / er.dequantize_linear against an independent oracle (Python Fractions),
exhaustively over float16 and bfloat16 inputs, with hypothesis for float32/float64; the
contract's covers against simulated kernels (double-rounded ones accepted, wrong ones
refused); ONNX Runtime's QuantizeLinear-23 live where it is installed."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import exactref as er

INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
              "uint16": (0, 65535), "int32": (-2**31, 2**31 - 1), "int4": (-8, 7),
              "uint4": (0, 15)}
# precision p (with the implicit bit), smallest normal exponent, largest finite value, and
# whether the format has -0
FLOATS = {"float8_e4m3fn": (4, -6, 448.0, True), "float8_e4m3fnuz": (4, -7, 240.0, False),
          "float8_e5m2": (3, -14, 57344.0, True), "float8_e5m2fnuz": (3, -15, 57344.0, False),
          "float4_e2m1fn": (2, 0, 6.0, True), "float16": (11, -14, 65504.0, True),
          "float32": (24, -126, float(np.finfo(np.float32).max), True)}
MODES = ("nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative")


# ----------------------------------------------------------------------------- the oracle
def round_int(q: Fraction, mode: str) -> int:
    fl = q.numerator // q.denominator
    rest = q - fl
    if mode == "toward_negative":
        return fl
    if mode == "toward_positive":
        return fl if rest == 0 else fl + 1
    if mode == "toward_zero":
        return fl if (q >= 0 or rest == 0) else fl + 1
    half = Fraction(1, 2)
    if rest < half:
        return fl
    if rest > half:
        return fl + 1
    if mode == "nearest_even":
        return fl if fl % 2 == 0 else fl + 1
    return fl + 1 if q > 0 else fl  # nearest_away


def oracle_code(x: float, s: float, zp: int, fmt: str, mode: str = "nearest_even"):
    """The code ONNX's formula gives with exact arithmetic; None where any code is allowed."""
    lo, hi = INT_RANGES[fmt]
    if math.isnan(x):
        return None
    if math.isinf(x):
        return hi if x > 0 else lo
    n = round_int(Fraction(x) / Fraction(s), mode)
    return min(max(n + zp, lo), hi)


def round_float(q: Fraction, fmt: str):
    """``q`` rounded to nearest even into ``fmt`` with an unbounded exponent (IEEE 754's
    overflow test): the value as a Fraction, or None on overflow."""
    p, emin, fmax, _ = FLOATS[fmt]
    if q == 0:
        return Fraction(0)
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - (p - 1))
    n = round_int(a / quantum, "nearest_even")
    v = n * quantum
    if v > Fraction(fmax):
        return None
    return v if q > 0 else -v


def oracle_float(x: float, s: float, fmt: str, saturate: bool = True) -> set:
    """The values ONNX allows (ONNX's saturation table, written from the spec's text)."""
    _, _, fmax, negzero = FLOATS[fmt]
    fnuz = fmt.endswith("fnuz")
    if math.isnan(x):
        return {"nan"} if fmt != "float4_e2m1fn" else {"any"}
    if math.isinf(x):
        sign = 1.0 if x > 0 else -1.0
        if fmt == "float4_e2m1fn":
            return {sign * fmax}
        if saturate:
            return {"nan", sign * fmax} if fnuz else {sign * fmax}  # table: NaN; reference: max
        return {sign * math.inf} if fmt == "float8_e5m2" else {"nan"}
    q = Fraction(x) / Fraction(s)
    v = round_float(q, fmt)
    neg = x < 0 or (x == 0 and math.copysign(1, x) < 0)
    if v is None:
        if saturate or fmt == "float4_e2m1fn":
            return {math.copysign(fmax, -1 if neg else 1)}
        return {math.copysign(math.inf, -1 if neg else 1)} if fmt == "float8_e5m2" else {"nan"}
    if v == 0:
        return {-0.0 if (neg and negzero) else 0.0}
    return {float(v)}


def same(a: float, b) -> bool:
    if b == "nan":
        return math.isnan(a)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def every(fmt: str) -> np.ndarray:
    bits = np.arange(2**16, dtype=np.uint16)
    dt = np.float16 if fmt == "float16" else ml_dtypes.bfloat16
    return bits.view(dt)


def f64(a) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # ml_dtypes warns casting its NaNs
        return np.asarray(a).astype(np.float64)


# ----------------------------------------------------------------------------- exhaustive: integers
SCALES = [1.0, 2.0**-3, 2.0**4, 0.1, 3.0, 0.7, 2.0**-14 * 3]


@pytest.mark.parametrize("xfmt", ["float16", "bfloat16"])
@pytest.mark.parametrize("scale", SCALES)
def test_every_half_input_into_every_integer_format(xfmt, scale):
    x = every(xfmt)
    s = np.float32(scale)
    xs = f64(x)
    fs = float(s)
    finite = ~np.isnan(xs)
    n = np.array([round_int(Fraction(float(v)) / Fraction(fs), "nearest_even")
                  if np.isfinite(v) else 0 for v in xs], dtype=object)
    for fmt, (lo, hi) in INT_RANGES.items():
        for zp in sorted({lo, 0 if lo < 0 else 3, hi}):
            r = er.quantize_linear(x, s, np.asarray(zp, dtype=er.dtype(fmt).np_dtype),
                                   divide="exact")
            got = np.asarray(r.rounded.numpy(), dtype=np.int64)
            want = np.array([min(max(int(k) + zp, lo), hi) for k in n], dtype=np.int64)
            want = np.where(np.isposinf(xs), hi, np.where(np.isneginf(xs), lo, want))
            bad = np.flatnonzero(finite & (got != want))
            assert not bad.size, (fmt, zp, xs[bad[:5]], got[bad[:5]], want[bad[:5]])
            # NaN: every code covered, and only there is the tolerance the whole range
            if (~finite).any():
                assert r.covers(np.where(finite, got, lo).astype(got.dtype)).all()
                assert r.covers(np.where(finite, got, hi).astype(got.dtype)).all()
            # a correct code is covered, a code one off is not (where it stays in range)
            off = np.clip(got + 1, lo, hi)
            moved = finite & (off != got)
            cov = r.covers(off.astype(got.dtype)).tolist()
            assert not np.asarray(cov)[moved].any()
    # float16/bfloat16 inputs, float32 scales: the float64 quotient decides every element whose
    # quotient is below 2**26 (the module's argument); beyond it exact rationals may be asked
    with np.errstate(invalid="ignore"):  # signalling NaNs among the patterns
        small = x[np.abs(f64(x) / float(s)) < 2**26]
    r = er.quantize_linear(small, s, np.int32(0), divide="exact")
    assert r.details["escalated"] == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scale", [0.5, 0.1, 3.0])
def test_every_float16_input_in_every_rounding_mode(mode, scale):
    x = every("float16")
    xs = f64(x)
    r = er.quantize_linear(x, np.float16(scale), np.int16(7), rounding=mode, divide="exact")
    got = np.asarray(r.rounded.numpy(), dtype=np.int64)
    for i in range(0, xs.size, 7):  # every 7th pattern: every binade, both signs
        want = oracle_code(float(xs[i]), float(np.float16(scale)), 7, "int16", mode)
        if want is not None:
            assert got[i] == want, (mode, xs[i], got[i], want)


def test_odd_rounding_is_refused_for_integer_codes():
    with pytest.raises(ValueError, match="no meaning for integer codes"):
        er.quantize_linear([1.0], 1.0, rounding="odd")


# ----------------------------------------------------------------------------- exhaustive: floats
@pytest.mark.parametrize("fmt", [f for f in FLOATS if f.startswith(("float8", "float4"))])
@pytest.mark.parametrize("xfmt,scale", [("float16", 1.0), ("float16", 0.3),
                                        ("bfloat16", 2.0**-5), ("bfloat16", 3.0)])
@pytest.mark.parametrize("saturate", [True, False])
def test_every_half_input_into_the_float_formats(fmt, xfmt, scale, saturate):
    x = every(xfmt)[::3] if xfmt == "bfloat16" else every(xfmt)
    s = np.float32(scale)
    r = er.quantize_linear(x, s, dtype=fmt, saturate=saturate, divide="exact")
    got = f64(r.rounded.numpy())
    lo, hi = r.lowest, r.highest
    for i, v in enumerate(f64(x)):
        allowed = oracle_float(float(v), float(s), fmt, saturate)
        if "any" in allowed:
            assert r.undefined[i]
            continue
        assert any(same(got[i], a) for a in allowed), (v, got[i], allowed)
        finite = [a for a in allowed if a != "nan"]
        if finite:  # the candidates span exactly the allowed values
            assert lo[i] == min(finite) and hi[i] == max(finite), (v, lo[i], hi[i], allowed)


def test_float_outputs_need_a_zero_zero_point_and_keep_signed_zeros():
    with pytest.raises(ValueError, match="zero point must be 0"):
        er.quantize_linear([1.0], np.float32(1.0), np.asarray([1.0], ml_dtypes.float8_e4m3fn))
    r = er.quantize_linear(np.float32([-0.0, -1e-30]), np.float32(1.0), dtype="float8_e4m3fn")
    assert np.signbit(r.rounded.numpy().astype(np.float64)).all()
    assert not r.covers(np.zeros(2, ml_dtypes.float8_e4m3fn)).any()  # +0 is not the result


# ----------------------------------------------------------------------------- hypothesis
def _check_against_oracle(x, s, zp, fmt, mode="nearest_even"):
    lo, hi = INT_RANGES[fmt]
    zp = min(max(zp, lo), hi)
    r = er.quantize_linear(np.float64([x]), np.float64([s]) if False else np.float64(s),
                           np.asarray(zp, er.dtype(fmt).np_dtype), rounding=mode,
                           divide="exact")
    want = oracle_code(x, s, zp, fmt, mode)
    got = int(np.asarray(r.rounded.numpy(), dtype=np.int64)[0])
    if want is None:
        assert r.covers(np.asarray([lo], er.dtype(fmt).np_dtype)).all()
        assert r.covers(np.asarray([hi], er.dtype(fmt).np_dtype)).all()
    else:
        assert got == want, (x, s, zp, fmt, got, want)
        assert r.tolerance().numpy()[0] == 0


finite64 = st.floats(allow_nan=True, allow_infinity=True)
scales64 = st.floats(min_value=5e-324, max_value=1e300, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(finite64, scales64, st.integers(-200, 70000), st.sampled_from(sorted(INT_RANGES)),
       st.sampled_from(MODES))
@example(2.5, 1.0, 0, "int8", "nearest_even")                     # exact tie to even
@example(3.5, 1.0, 0, "int8", "nearest_even")
@example(-2.5, 1.0, 0, "int8", "nearest_away")
@example(0.15, 0.1, 0, "int8", "nearest_even")                     # 1.4999999... (inexact .1)
@example(0.75, 0.5, 0, "uint8", "nearest_even")                    # 1.5 -> 2
@example(127.5, 1.0, 0, "int8", "nearest_even")                    # saturation edge
@example(-128.5, 1.0, 0, "int8", "nearest_even")
@example(255.49999999999997, 1.0, 0, "uint8", "nearest_even")
@example(-0.0, 1.0, 0, "int8", "nearest_even")                     # signed zero
@example(-0.4, 1.0, 3, "uint4", "toward_zero")
@example(5e-324, 5e-324, 0, "int8", "nearest_even")                # subnormal over subnormal
@example(7.5e-324, 5e-324, 0, "int8", "nearest_even")             # 1.5 exactly (subnormals)
@example(1e300, 1e-300, 0, "int32", "nearest_even")                # huge quotient
@example(float("inf"), 1.0, 5, "int16", "nearest_even")
@example(float("-inf"), 2.0, 5, "uint16", "nearest_even")
@example(float("nan"), 1.0, 5, "int8", "nearest_even")
@example(2.0**31 - 0.5, 1.0, 0, "int32", "nearest_even")
@example((2.0**40 + 1) * 3, 3.0, 0, "int32", "nearest_even")
def test_float64_inputs_against_the_oracle(x, s, zp, fmt, mode):
    _check_against_oracle(x, s, zp, fmt, mode)


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32), st.floats(width=32, min_value=1.401298464324817e-45, max_value=3.0000000054977558e+38),
       st.sampled_from(["int8", "uint8", "int32", "int4"]))
@example(float(np.float32(1.5) * np.float32(3.0)), 3.0, "int8")
@example(1.401298464324817e-45, 1.401298464324817e-45, "int8")
@example(float(np.float32(2**24 + 2)) / 2, 0.25, "int32")
def test_float32_inputs_against_the_oracle(x, s, fmt):
    _check_against_oracle(float(np.float32(x)), float(np.float32(s)), 0, fmt)
    r = er.quantize_linear(np.float32([x]), np.float32(s), dtype=fmt, divide="exact")
    if abs(float(np.float32(x)) / float(np.float32(s))) < 2**26:
        assert r.details["escalated"] == 0


def test_escalation_decides_what_float64_cannot():
    # x / s within float64's error of a half-integer, not float32 operands: exact rationals
    x = np.float64([0.5 + 2.0**-53 * 3, 1.5 - 2.0**-52, 2.5])
    s = np.float64(1.0 + 2.0**-52)
    r = er.quantize_linear(x, s, np.int8(0), divide="exact")
    want = [oracle_code(float(v), float(s), 0, "int8") for v in x]
    assert r.rounded.tolist() == want


# ----------------------------------------------------------------------------- the contract
def _simulate(x32, s32, zp, lo, hi, how):
    """Kernels step by step in numpy float32 (ONNX Runtime's MLAS, PyTorch's, wrong ones)."""
    with np.errstate(over="ignore"):
        q = x32 / s32                              # float32 division, correctly rounded
        qr = x32 * (np.float32(1.0) / s32)         # PyTorch: x * (1 / scale) in float32
    q64 = q.astype(np.float64)
    if how == "mlas":
        return np.clip(np.rint(q64) + zp, lo, hi)
    if how == "torch":
        return np.clip(np.rint(qr.astype(np.float64)) + zp, lo, hi)
    if how == "trunc":
        return np.clip(np.trunc(q64) + zp, lo, hi)
    if how == "half_away":
        return np.clip(np.copysign(np.floor(np.abs(q64) + 0.5), q64) + zp, lo, hi)
    if how == "off_by_one":
        return np.clip(np.rint(q64) + zp + 1, lo, hi)
    if how == "zp_after_saturation":
        return np.clip(np.clip(np.rint(q64), lo, hi) + zp, -2**31, 2**31)
    raise AssertionError(how)


def _near_halves(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    s = np.float32(rng.uniform(0.01, 3.0))
    k = rng.integers(-60, 60, n).astype(np.float64) + 0.5
    x = (k * float(s)).astype(np.float32)          # quotients within float32 error of halves
    x = np.nextafter(x, np.where(rng.integers(0, 2, n) == 1, np.inf, -np.inf)).astype(np.float32)
    return np.concatenate([x, (k * float(s)).astype(np.float32)]), s


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_covers_accepts_the_declared_kernels_and_only_them(seed):
    x, s = _near_halves(seed=seed)
    lo, hi = INT_RANGES["int8"]
    zp = 3
    args = (x, s, np.int8(zp))
    mlas = _simulate(x, s, zp, lo, hi, "mlas").astype(np.int8)
    torch_like = _simulate(x, s, zp, lo, hi, "torch").astype(np.int8)
    default = er.quantize_linear(*args)  # the scale's format: float32, divide="correct"
    assert default.details["compute"] == "float32"
    assert default.covers(mlas).all()
    exact = er.quantize_linear(*args, divide="exact")
    recip = er.quantize_linear(*args, divide="reciprocal")
    both = er.quantize_linear(*args, divide="any")
    assert recip.covers(torch_like).all() and both.covers(torch_like).all()
    assert both.covers(mlas).all()
    # the double roundings do move codes here, so the narrower contracts refuse them
    assert not exact.covers(mlas).all()
    assert not default.covers(torch_like).all() or not recip.covers(mlas).all()
    # where a candidate differs from the exact code, it differs by one code
    diff = np.abs(mlas.astype(int) - exact.rounded.numpy().astype(int))
    assert diff.max() == 1
    for wrong in ("trunc", "half_away", "off_by_one"):
        out = _simulate(x, s, zp, lo, hi, wrong).astype(np.int8)
        assert not both.covers(out).all(), wrong


def test_zero_point_added_before_saturation_is_required():
    x = np.float32([300.0, -300.0, 100.0])
    r = er.quantize_linear(x, np.float32(1.0), np.uint8(200), divide="any")
    wrong = _simulate(x, np.float32(1.0), 200, 0, 255, "zp_after_saturation")
    assert r.rounded.tolist() == [255, 0, 255]
    assert not r.covers(np.clip(wrong, 0, 255).astype(np.uint8)).all()


def test_covers_double_rounding_in_float16_precision():
    # precision float16: the quotient rounded into float16 first (ONNX-23's precision)
    x = np.float32(np.arange(1, 2000) * 0.3 + 0.15)
    s = np.float16(0.3)
    q16 = (x.astype(np.float64) / float(s)).astype(np.float16)  # fl16(fl64(q)): see below
    r = er.quantize_linear(x, s, np.int16(0), divide="any")
    assert r.details["compute"] == "float16"
    exact16 = er.quantize_linear(x, s, np.int16(0), divide="exact")
    # fl64 then fl16 may round twice; keep the elements where it is the single rounding
    single = np.array([float(np.float16(v)) for v in q16.astype(np.float64)])
    assert np.mean(r.covers(np.clip(np.rint(single), -32768, 32767).astype(np.int16)).tolist()) > 0.99
    assert exact16.tolerance().numpy().max() == 0


# ----------------------------------------------------------------------------- granularity, errors
def test_per_axis_and_blocked_scales_match_the_broadcast_oracle():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 7, 5)).astype(np.float32) * 40
    s_axis = rng.uniform(0.05, 2, 7).astype(np.float32)
    z_axis = rng.integers(-20, 20, 7).astype(np.int8)
    r = er.quantize_linear(x, s_axis, z_axis, axis=1, divide="exact")
    want = np.vectorize(lambda v, s, z: oracle_code(float(v), float(s), int(z), "int8"))(
        x, s_axis[None, :, None], z_axis[None, :, None])
    assert (r.rounded.numpy() == want).all()
    sb = rng.uniform(0.05, 2, (4, 7, 2)).astype(np.float32)  # ceil(5 / 3) = 2 blocks
    zb = rng.integers(0, 30, (4, 7, 2)).astype(np.uint8)
    r = er.quantize_linear(x, sb, zb, axis=-1, block_size=3, divide="exact")
    idx = np.arange(5) // 3
    want = np.vectorize(lambda v, s, z: oracle_code(float(v), float(s), int(z), "uint8"))(
        x, sb[..., idx], zb[..., idx])
    assert (r.rounded.numpy() == want).all()


@pytest.mark.parametrize("scale,match", [
    (0.0, "positive and finite; found 0.0"), (-1.0, "positive and finite; found -1.0"),
    (float("nan"), "positive and finite; found nan"), (float("inf"), "positive and finite")])
def test_bad_scales_say_what_was_expected(scale, match):
    with pytest.raises(ValueError, match=match):
        er.quantize_linear([1.0, 2.0], np.float32(scale))
    with pytest.raises(ValueError, match=match):
        er.dequantize_linear(np.uint8([1, 2]), np.float32(scale))


def test_bad_shapes_zero_points_and_formats():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="has 2 entries but the input has 3 along axis 1"):
        er.quantize_linear(x, np.float32([1, 1]))
    with pytest.raises(ValueError, match=r"expected shape \(2, 2\)"):
        er.quantize_linear(x, np.ones((2, 3), np.float32), axis=1, block_size=2)
    with pytest.raises(ValueError, match="zero point 300 is not a uint8 value"):
        er.quantize_linear(x, np.float32(1), [300])
    with pytest.raises(ValueError, match="ONNX requires them equal"):
        er.quantize_linear(x, np.float32(1), np.int8(0), dtype="uint8")
    with pytest.raises(ValueError, match="not a linear quantization format"):
        er.quantize_linear(x, np.float32(1), dtype="float32")
    with pytest.raises(ValueError, match="unknown"):
        er.quantize_linear(x, np.float32(1), dtype="int7")
    with pytest.raises(ValueError, match="divide='fast'; expected one of"):
        er.quantize_linear(x, np.float32(1), divide="fast")
    assert er.quantize_linear(x, np.float32(1)).rounded.dtype.name == "uint8"  # ONNX default


# ----------------------------------------------------------------------------- dequantize
def _round_to(q: Fraction, fmt: str) -> float:
    v = round_float(q, fmt)
    return math.copysign(math.inf, q) if v is None else float(v)


@pytest.mark.parametrize("xfmt", ["int8", "uint8", "int16", "int32", "int4"])
@pytest.mark.parametrize("out", ["float32", "float16"])
def test_dequantize_against_the_oracle(xfmt, out):
    lo, hi = INT_RANGES[xfmt]
    rng = np.random.default_rng(7)
    codes = np.concatenate([[lo, hi, 0], rng.integers(lo, hi, 500, endpoint=True)])
    if xfmt == "int32":
        codes = np.concatenate([codes, 2**24 + np.arange(1, 40), -(2**25) - np.arange(40)])
    x = np.asarray(codes, er.dtype(xfmt).np_dtype)
    for s in (np.float32(0.1), np.float32(3.0), np.float32(2.0**-20)):
        zp = 0 if xfmt == "int32" else min(max(5, lo), hi)
        zpa = None if xfmt == "int32" else np.asarray(zp, er.dtype(xfmt).np_dtype)
        r = er.dequantize_linear(x, s, zpa, dtype=out)
        want = [_round_to((int(c) - zp) * Fraction(float(s)), out) for c in codes]
        assert r.rounded.numpy().astype(np.float64).tolist() == want, (xfmt, out, s)
        # the modelled kernel: (x - zp) converted into the output format, then the product
        with np.errstate(over="ignore"):
            dc = np.asarray(codes - zp, np.float64).astype(er.dtype(out).np_dtype)
        model = (dc.astype(np.float64) * float(np.asarray(s, er.dtype(out).np_dtype)))
        model = np.array([_round_to(Fraction(v), out) if np.isfinite(v) else v
                          for v in model])  # the product is exact in float64 here
        assert r.covers(model.astype(er.dtype(out).np_dtype)).all()


def test_dequantize_int32_double_rounding_is_the_declared_freedom():
    codes = np.int32([2**24 + 1, 2**24 + 3, 2**25 + 5])
    s = np.float32(1.0 + 2.0**-23)
    r = er.dequantize_linear(codes, s)
    naive = (codes.astype(np.float32) * s)  # convert first, multiply in float32
    assert r.covers(naive).all()
    assert (naive != r.rounded.numpy()).any()  # the conversion did round twice
    assert not r.covers(np.nextafter(r.rounded.numpy(), np.float32(np.inf))).all()


def test_dequantize_float8_codes():
    x = np.asarray([448.0, -0.5, 2.0**-9], ml_dtypes.float8_e4m3fn)
    r = er.dequantize_linear(x, np.float32(0.1))
    want = [float(np.float32(Fraction(float(v)) * Fraction(float(np.float32(0.1)))))
            for v in x.astype(np.float64)]
    assert r.rounded.tolist() == want


# ----------------------------------------------------------------------------- ONNX Runtime
def _ort_quantize(x, s, zp):
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    zt = helper.np_dtype_to_tensor_dtype(zp.dtype)
    graph = helper.make_graph(
        [node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", zt, list(x.shape))],
        initializer=[numpy_helper.from_array(np.asarray(s, np.float32), "s"),
                     numpy_helper.from_array(np.asarray(zp), "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("zp", [np.uint8(128), np.int8(-3)])
def test_onnxruntime_quantize_linear_is_covered_by_its_contract(zp):
    """ONNX Runtime's CPU kernel (MLAS ``MlasQuantizeLinear``: ``x / scale`` in float32, then
    ``cvtps2dq``, round to nearest even, the zero point added, clamped): the contract
    ``compute="float32", divide="correct"`` (the default for a float32 scale)."""
    x, s = _near_halves(n=3000, seed=5)
    x = np.concatenate([x, np.float32([np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0])])
    y = _ort_quantize(x, s, zp)
    r = er.quantize_linear(x, s, zp)
    cov = r.covers(y)
    assert cov.all(), cov.summary()


# ----------------------------------------------------------------------------- the record, docs
def test_records_docs_and_contract_layer():
    import pathlib

    for name in ("quantize_linear", "dequantize_linear"):
        spec = er.ops.get_op(name)
        assert spec.family == "quantize" and name in er.__all__
        assert getattr(er, name) is spec.function and spec.function.spec is spec
    doc = pathlib.Path(__file__).parents[2] / "docs" / "block_formats.md"
    assert er.ops.markdown_table("quantize") in doc.read_text(), (
        "paste exactref.ops.markdown_table('quantize') into docs/block_formats.md")
    # the contract's fields reach the op as its keywords (a Contract, or the ambient one)
    x, s = _near_halves(n=2000, seed=9)
    mlas = _simulate(x, s, 0, -128, 127, "mlas").astype(np.int8)
    exact = er.quantize_linear(x, s, np.int8(0), divide="exact")
    assert not exact.covers(mlas).all()
    assert exact.under(divide="correct").covers(mlas).all()
    with er.use_contract(er.Contract(divide="exact")):
        assert not er.quantize_linear(x, s, np.int8(0)).covers(mlas).all()
    r = er.quantize_linear(x, s, np.int8(0), contract=er.Contract(compute="float32"))
    assert r.covers(mlas).all() and r.contract.compute == "float32"


# ----------------------------------------------------------------------------- the audit
_CODE_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "int4": (-8, 7)}


def _per_element(x, p, axis, block_size):
    p = np.asarray(p, np.float32)
    if p.ndim == 0:
        return p
    if block_size:
        return np.repeat(p, block_size, axis=axis).take(range(x.shape[axis]), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    return p.reshape(shape)


def mlas_kernel(x, scale, zero_point, dtype, axis=1, block_size=0, rint=np.rint):
    """ONNX Runtime's MLAS, simulated: x / scale in float32, rint, + zero point, clamp."""
    q = np.asarray(x, np.float32) / _per_element(x, scale, axis, block_size)
    if dtype.startswith("float"):
        from onnx.numpy_helper import saturate_cast

        return saturate_cast(q.astype(np.float32), getattr(ml_dtypes, dtype))
    z = _per_element(x, np.asarray(zero_point).astype(np.float32), axis, block_size)
    out = np.clip(np.nan_to_num(rint(q.astype(np.float64)), nan=0.0) + z, *_CODE_RANGE[dtype])
    return out.astype(er.dtype(dtype).np_dtype)


def truncating_kernel(x, scale, zero_point, dtype, axis=1, block_size=0):
    return mlas_kernel(x, scale, zero_point, dtype, axis, block_size, rint=np.trunc)


def test_audit_of_a_custom_quantizer():
    from exactref.audit import AuditConfig, run_audit

    cfg = dict(ops=("quantize_linear",), op_name="quantize_linear", dtypes=("float32",),
               samples=128, timeout=0)
    good = run_audit(AuditConfig(target=f"{__name__}:mlas_kernel", **cfg))
    assert good.groups and all(g.status == "pass" for g in good.groups), \
        [(g.key, g.message) for g in good.groups if g.status != "pass"]
    # every granularity and code format was drawn, with positive scales (else no Result)
    assert {g.params["data"] for g in good.groups} == {"tensor", "axis", "blocked"}
    bad = run_audit(AuditConfig(target=f"{__name__}:truncating_kernel", **cfg))
    failed = [g for g in bad.groups if g.status == "fail"]
    assert failed and all(g.params["codes"] != "float8_e4m3fn" for g in failed)
    assert "reproducer" in failed[0].worst and failed[0].worst["ulps"] >= 1
    # under divide="exact" the float32 quotient's double roundings are findings too
    strict = run_audit(AuditConfig(target=f"{__name__}:mlas_kernel",
                                   contract=er.Contract(divide="exact"), **cfg))
    assert all(g.contract.get("divide") == "exact" for g in strict.groups)
