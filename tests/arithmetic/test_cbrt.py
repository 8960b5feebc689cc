"""cbrt, the worked example of a new function (issue 20): one declaration in
``exactref.arithmetic.functions`` (MPFR's ``cbrt``, numpy's counterpart with its contract, jax's
without), one catalog line, and this file. Checked against MPFR's cube root (gmpy2) rounded once
by the suites' oracle: every float16 and bfloat16 value in every rounding mode, samples and
hypothesis for float32 and float64, the special values; numpy's own output is covered by the
record's numpy contract; the derivative ``1 / (3 cbrt(x)**2)`` against an exact oracle."""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from family_oracle import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import exactref as er
from mpfr_rounding import mpfr_round

R = er.Rounding
MODES = list(R)
_CTX = gmpy2.context(precision=256, round=gmpy2.RoundToZero)


def _oracle_cbrt(x: float) -> Fraction | float:
    """cbrt(x) for a finite nonzero float as a Fraction that rounds like the exact root in every
    mode into every format of at most 200 bits (the 256-bit truncation, nudged into the open
    interval above it where the root is irrational); specials and zeros as floats."""
    if x != x or math.isinf(x) or x == 0:
        return x
    t = _CTX.cbrt(gmpy2.mpfr(x))
    v = Fraction(*t.as_integer_ratio())
    if t.rc == 0:
        return v
    tiny = Fraction(2) ** (gmpy2.get_exp(t) - 300)
    return v + tiny if v > 0 else v - tiny


def _oracle(xs, fmt, mode) -> np.ndarray:
    comp = er.dtype(fmt).component
    out = []
    for x in np.asarray(xs, dtype=np.float64).tolist():
        v = _oracle_cbrt(x)
        out.append(v if isinstance(v, float) else float(mpfr_round(v, comp.precision,
                                                                   comp.emin, mode)))
    return np.array(out)


def _values(fmt) -> np.ndarray:
    """Every value of a 16-bit format, NaN patterns included."""
    dt = er.dtype(fmt).np_dtype
    with np.errstate(invalid="ignore"):
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt)


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_every_16_bit_value_in_every_mode(fmt):
    x = _values(fmt)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        wide = x.astype(np.float64)
    for mode in MODES:
        got = er.cbrt(er.asarray(x, fmt), rounding=mode).rounded.numpy().astype(np.float64)
        assert_same(got, _oracle(wide, fmt, mode), wide, f"cbrt of {fmt}, {mode.value}")


def _samples(dtype, n, seed):
    rng = np.random.default_rng(seed)
    bits = 64 if dtype == np.float64 else 32
    raw = rng.integers(0, 2**bits, n, dtype=np.uint64)
    x = raw.view(np.float64) if bits == 64 else raw.astype(np.uint32).view(np.float32)
    info = np.finfo(dtype)
    edge = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 8.0, -27.0, 0.125, 2.0**-3 * 27,
            float(info.smallest_subnormal), -float(info.smallest_subnormal),
            float(info.smallest_normal), float(info.max), -float(info.max)]
    with np.errstate(invalid="ignore"):
        return np.concatenate([x[~np.isnan(x)], rng.uniform(-10, 10, n // 4).astype(dtype),
                               np.array(edge, dtype=dtype)])


@pytest.mark.parametrize("fmt,dtype", [("float32", np.float32), ("float64", np.float64)])
def test_samples_in_every_mode(fmt, dtype):
    x = _samples(dtype, 1500, 11)
    wide = x.astype(np.float64)
    for mode in MODES:
        got = er.cbrt(x, rounding=mode).rounded.numpy().astype(np.float64)
        assert_same(got, _oracle(wide, fmt, mode), wide, f"cbrt of {fmt}, {mode.value}")


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(MODES))
def test_float64_by_hypothesis(x, mode):
    got = er.cbrt(np.float64([x]), rounding=mode).rounded.numpy().astype(np.float64)
    assert_same(got, _oracle([x], "float64", mode), [x], f"cbrt({x!r}), {mode.value}")


def test_specials_exact_cubes_and_subnormals():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -8.0, 27.0, 0.125, 5e-324])
    got = er.cbrt(x).rounded.numpy()
    assert [math.copysign(1.0, v) for v in got[:2]] == [1.0, -1.0]
    assert got[2:4].tolist() == [np.inf, -np.inf] and np.isnan(got[4])
    assert got[5:8].tolist() == [-2.0, 3.0, 0.5]
    assert got[8] == float(mpfr_round(_oracle_cbrt(5e-324), 53, -1022, R.NEAREST_EVEN))
    for mode in MODES:  # an exact root is exact in every mode
        assert er.cbrt([-8.0], rounding=mode).rounded.tolist() == [-2.0]


def test_the_record_is_the_declaration():
    """One record says everything: its function (MPFR's cbrt), derivative, counterparts with
    numpy's contract, and the docs' table row."""
    spec = er.ops.get_op("cbrt")
    assert spec.function is er.cbrt and spec.family == "functions"
    assert spec.exact.native == "cbrt" and spec.exact.complex is None
    assert spec.counterparts.get("torch") is None
    assert spec.counterparts.get("numpy") == "np.cbrt"
    assert spec.counterparts.of("numpy").contract is not None
    assert spec.counterparts.get("jax") == "jnp.cbrt"
    assert spec.counterparts.of("jax").contract is None
    assert "| `cbrt(x)` |" in er.ops.markdown_table("functions")
    r = er.cbrt(np.float32([2.0]))
    assert r.op == "cbrt" and r.covers(np.float32([1.2599211])).all()


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float8_e4m3fn", "float32", "float64"])
def test_numpys_cbrt_is_covered_by_its_declared_contract(fmt):
    import exactref.equivalents.numpy as ern

    dt = er.dtype(fmt).np_dtype
    if er.dtype(fmt).bits <= 16:
        x = _values(fmt) if er.dtype(fmt).bits == 16 else \
            np.arange(256, dtype=np.uint8).view(dt)
    else:
        x = _samples(dt.type, 4000, 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        actual = np.cbrt(x)
    cov = ern.cbrt(x).covers(actual)
    assert cov.all(), (fmt, cov)


def _f32(v: Fraction) -> float:
    return float(mpfr_round(v, 24, -126, R.NEAREST_EVEN))


def test_the_derivative():
    """``grad / (3 cbrt(x)**2)``, exact and rounded once: rational at cubes, ``+inf`` at ±0 (a
    gradient of either sign gives its infinity), ``+0`` at ±inf."""
    x = er.asarray([8.0, -8.0, 0.0, -0.0, np.inf, 2.0, -0.125], "float32")
    g = er.asarray([1.0, 3.0, 1.0, -1.0, 1.0, 1.0, 1.0], "float32")
    got = er.cbrt.backward(x, g).grad_x.rounded.tolist()
    assert got[:5] == [_f32(Fraction(1, 12)), 0.25, np.inf, -np.inf, 0.0]
    with gmpy2.context(precision=400):
        c = gmpy2.cbrt(gmpy2.mpfr(2))
        d = 1 / (3 * c * c)  # irrational: 400 bits decide its rounding to 24
    assert got[5] == _f32(Fraction(*d.as_integer_ratio()))
    assert got[6] == _f32(Fraction(4, 3))
    assert er.ops.get_op("cbrt").backward is not None
