"""The NumPy equivalents of the real functions: they cover what NumPy's loops compute (float64,
float32, float16 and ml_dtypes' floats; contiguous and strided arrays), NumPy's float32 SIMD
functions are pinned where they are not correctly rounded, and the models are not vacuous."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import exactref as er
import exactref.equivalents.numpy as ern
from exactref.equivalents._numpy_functions import KERNELS

h = float.fromhex
INF = math.inf
UFUNC = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
         "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
         "cosh": np.cosh, "tanh": np.tanh}
DTYPES = ("float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float6_e2m3fn")


def inputs(name, dtype, n, seed=0):
    """Random bit patterns (every binade), moderate values and the specials, in ``dtype``."""
    fmt = er.dtype(dtype)
    rng = np.random.default_rng([seed, sum(map(ord, name + dtype))])
    with np.errstate(all="ignore"):
        if fmt.bits <= 16:
            vals = np.arange(2 ** fmt.bits, dtype=np.uint16 if fmt.bits > 8 else np.uint8)
            vals = vals.view(fmt.np_dtype).astype(np.float64)
            vals = vals[rng.permutation(vals.size)[:n]]
        else:
            raw = rng.integers(0, 2**63, n // 2, dtype=np.int64).astype(np.uint64)
            raw = raw * np.uint64(2) if fmt.bits == 64 else (raw >> np.uint64(32)).astype(
                np.uint32)
            vals = np.concatenate([raw.view(fmt.np_dtype).astype(np.float64),
                                   rng.standard_normal(n // 2) * np.exp2(
                                       rng.integers(-8, 7, n // 2))])
        special = [0.0, -0.0, 1.0, -1.0, 0.5]
        if fmt.component.has_inf:
            special += [INF, -INF]
        if fmt.component.has_nan:
            special += [math.nan]
        vals = np.concatenate([special, vals])
        return er.asarray(vals, fmt, overflow="saturate" if not fmt.component.has_nan
                          else None).numpy()


def _paths(fn, *xs):
    """Contiguous (67 elements and more: SIMD body and tail) and stride-2 outputs."""
    contiguous = fn(*xs)
    strided = fn(*[np.repeat(x, 2)[::2] for x in xs])
    return contiguous, strided


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UFUNC))
def test_covers_numpy(name, dtype):
    x = inputs(name, dtype, 300)
    ref = getattr(ern, name)(x)
    with np.errstate(all="ignore"):
        outs = _paths(UFUNC[name], x)
    for out in outs:
        cov = ref.covers(out)
        assert cov.all(), cov.summary()


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ("float64", "float32", "float16", "bfloat16"))
@pytest.mark.parametrize("name", sorted(UFUNC))
def test_covers_numpy_sweep(name, dtype):
    x = inputs(name, dtype, 30000, seed=1)
    ref = getattr(ern, name)(x)
    with np.errstate(all="ignore"):
        for out in _paths(UFUNC[name], x):
            assert ref.covers(out).all()


@pytest.mark.parametrize("dtype", ("float64", "float32", "float16", "bfloat16"))
@pytest.mark.parametrize(("name", "ufunc"), [("atan2", np.arctan2), ("pow", np.power)])
def test_covers_numpy_binary(name, ufunc, dtype):
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    n = 300
    a = rng.standard_normal(n) * np.exp2(rng.integers(-10, 10, n))
    b = rng.standard_normal(n) * np.exp2(rng.integers(-6, 6, n))
    if name == "pow":
        a = np.abs(a)
        b[: n // 4] = rng.integers(-8, 9, n // 4)
    a[:6] = [0.0, -0.0, INF, -INF, 1.0, math.nan]
    b[:6] = [0.0, 1.0, -INF, 2.0, math.nan, 0.0]
    fmt = er.dtype(dtype)
    x, y = (er.asarray(v, fmt).numpy() for v in (a, b))
    ref = getattr(ern, name)(x, y)
    with np.errstate(all="ignore"):
        for out in _paths(ufunc, x, y):
            assert ref.covers(out).all()


def test_integers_promote_as_numpy():
    i8 = np.arange(-20, 20, dtype=np.int8)
    ref = ern.exp(i8)
    assert ref.rounded.dtype.name == "float16"
    with np.errstate(over="ignore"):  # exp(12) and beyond overflow float16
        assert ref.covers(np.exp(i8)).all()
    i32 = np.arange(-20, 20, dtype=np.int32)
    assert ern.sin(i32).rounded.dtype.name == "float64"
    assert ern.sin(i32).covers(np.sin(i32)).all()


def test_integer_power_wraps_and_refuses_negative_exponents():
    x = np.array([2, 3, -2, 100, 7], np.int8)
    y = np.array([3, 2, 5, 3, 1], np.int8)
    assert ern.pow(x, y).covers(np.power(x, y)).all()
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(x, -y)
    with pytest.raises(ValueError, match="negative integer powers"):
        ern.pow(x, -y)


def test_float32_simd_is_not_correctly_rounded():
    # numpy's AVX-512 float32 exp: two ulps below the correctly rounded value (the numpy
    # preset: 3 ulps beyond it)
    x = np.array([h("0x1.0dedeep+0")] * 67, np.float32)
    out = np.exp(x)[:1]
    assert out[0].item() == h("0x1.6f6586p+1")
    assert er.exp(x[:1]).rounded.tolist() == [h("0x1.6f658ap+1")]
    assert not er.exp(x[:1], accuracy=1.0).covers(out).all()
    assert ern.exp(x[:1]).covers(out).all()


def test_ml_dtypes_nan_becomes_a_zero():
    # float6 has no NaN: ml_dtypes stores the C library's NaN as a zero of its sign
    x = np.array([-0.5, 2.0], ml_dtypes.float6_e2m3fn)
    with np.errstate(all="ignore"):
        out = np.log10(x)
    assert out.astype(np.float64).tolist() == [0.0, 0.25]
    assert ern.log10(x).covers(out).all()


def _steps(a, k):
    out = a.copy()
    for _ in range(k):
        out = np.nextafter(out, np.array(np.inf, dtype=out.dtype))
    return out


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("name", ("exp", "log", "sin", "tanh", "atan", "cosh"))
def test_a_worse_kernel_is_caught(name, dtype):
    """numpy's output is covered; moved by its declared accuracy plus its measured error (so
    that every moved value is beyond the accuracy from the exact value), it is not: a kernel
    with about twice numpy's error is caught everywhere."""
    rng = np.random.default_rng(5)
    x = (rng.uniform(0.1, 3.0, 500)).astype(dtype)
    out = UFUNC[name](x)
    ref = getattr(ern, name)(x)
    assert ref.covers(out).all()
    declared = KERNELS[name].accuracy[dtype]
    assert declared == "numpy" or declared["ulps"] >= 1.5  # glibc's sin/cos: + 2**-92 absolute
    acc = er.ACCURACY_PRESETS["numpy"].bound(name, dtype) + 0.5  # counted from the rounded
    measured = KERNELS[name].measured[dtype]
    assert not ref.covers(_steps(out, math.ceil(acc + measured))).mask.any()


@pytest.mark.parametrize("name, x", [("cos", "0x1.36bf9a50c044p+1008"),
                                     ("cos", "0x1.c54e136ed249p+170"),
                                     ("sin", "-0x1.9681fb504915fp+772")])
def test_glibc_sin_cos_of_huge_arguments_near_zeros(name, x):
    """numpy's float64 sin/cos (glibc 2.36) of huge arguments near a zero of the function are
    off by about 2**-97 absolute: a thousand ulps of the tiny result, past the numpy preset;
    the equivalent declares 1.5 ulps plus 2**-92."""
    v = np.array([float.fromhex(x)])
    out = getattr(np, name)(v)
    assert not getattr(er, name)(v, accuracy="numpy").covers(out).all()
    assert getattr(ern, name)(v).covers(out).all()
    assert abs(float(out[0]) - float(getattr(er, name)(v).rounded.tolist()[0])) < 2.0 ** -92
