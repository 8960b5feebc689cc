"""er.asarray, er.round_to and er.Array: every source, every format, the views out, the errors."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref._formats import FORMATS
from mpfr_rounding import round_to_int

R = er.Rounding
MODES = list(R)
FLOATS = [f for f in FORMATS.values() if f.kind == "float"]
INTS = [f for f in FORMATS.values() if f.kind in ("int", "uint")]
TORCH_FORMATS = [f for f in FORMATS.values() if f.torch_name]


def _fid(f):
    return f.name


def _mid(m):
    return m.value


def sample(fmt, n=200, seed=0):
    """Values of ``fmt`` as a numpy array of its dtype: every pattern of the narrow floats, a
    spread of the wide ones with the extremes, integers with their limits."""
    rng = np.random.default_rng(seed)
    if fmt.kind == "float" and fmt.bits <= 16:
        pats = np.arange(2**fmt.bits, dtype=np.uint8 if fmt.itemsize == 1 else np.uint16)
        if fmt.bits == 16:
            pats = pats[:: 2**16 // n]
        x = pats.view(fmt.np_dtype).copy()
        with np.errstate(invalid="ignore"):
            nan = np.isnan(x.astype(np.float32))
        x[nan] = np.nan  # quiet NaNs (signalling ones: see test_rounding_exhaustive)
        return x
    if fmt.kind == "float":
        big = np.array([fmt.max_finite, -fmt.max_finite, fmt.smallest_subnormal, -0.0, 0.0,
                        np.inf, -np.inf, np.nan, fmt.smallest_normal], np.float64)
        return np.concatenate([big, rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
                               ]).astype(fmt.np_dtype)
    if fmt.kind == "complex":
        wide = sample(fmt.component, n, seed).astype(np.float64)
        z = np.empty(wide.shape, np.complex128)
        z.real, z.imag = wide, wide[::-1]
        with np.errstate(invalid="ignore"):
            return z.astype(fmt.np_dtype)
    if fmt.kind == "bool":
        return np.array([True, False, True], bool)
    lo, hi = fmt.int_min, fmt.int_max
    vals = [lo, hi, 0, 1, lo + 1, hi - 1]
    if fmt.bits < 64:
        vals += rng.integers(lo, hi, n, endpoint=True).tolist()
    else:
        vals += [lo + (hi - lo) * k // 97 for k in range(97)]
    return np.array(vals, dtype=fmt.np_dtype)


def same_bits(a, b):
    """Equal arrays of one dtype, NaN with NaN (payloads aside), zeros by sign."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind in "biu" or a.dtype == bool or a.dtype.itemsize == 0:
        return bool(np.array_equal(a, b))
    wide = np.complex128 if a.dtype.kind == "c" or "complex" in a.dtype.name else np.float64
    with np.errstate(invalid="ignore"):
        x, y = a.astype(wide), b.astype(wide)
    parts = [(x.real, y.real), (x.imag, y.imag)] if wide is np.complex128 else [(x, y)]
    return all(bool(np.all((np.isnan(p) & np.isnan(q)) | ((p == q) & (np.signbit(p) ==
                                                                        np.signbit(q)))))
               for p, q in parts)


# --------------------------------------------------------------------------- numpy sources
@pytest.mark.parametrize("fmt", [f for f in FORMATS.values() if f.encoding == "native"], ids=_fid)
def test_numpy_source_keeps_its_format(fmt):
    x = sample(fmt)
    a = er.asarray(x)
    assert isinstance(a, er.Array) and a.dtype is fmt
    assert a.numpy().dtype == fmt.np_dtype and same_bits(a.numpy(), x)
    assert a.shape == x.shape and a.ndim == 1 and a.size == x.size and len(a) == len(x)
    r = er.round_to(x, fmt)
    assert not r.inexact.any() and not r.overflow.any() and not r.underflow.any()


@pytest.mark.parametrize("fmt", [f for f in FORMATS.values() if f.kind != "complex"], ids=_fid)
def test_widening_is_exact(fmt):
    """Every value of a real format is exact in float64 (and in complex128)."""
    x = sample(fmt)
    if fmt.kind == "float" and not fmt.has_nan:
        x = x[~np.isnan(x.astype(np.float64))]
    want = x.astype(np.float64) if fmt.bits < 64 or fmt.kind == "float" else None
    target = "float64"
    if want is None:  # 64-bit integers need more than 53 bits: compare the exact integers
        got = er.asarray(x, "float64").tolist()
        assert got == [float(int(v)) for v in x]
        return
    r = er.round_to(x, target)
    assert same_bits(r.array.numpy(), want) and not r.inexact.any()
    assert same_bits(er.asarray(x, "complex128").numpy().real, want)


def test_array_api():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = er.asarray(x, "bfloat16")
    assert (a.shape, a.ndim, a.size, len(a)) == ((2, 3), 2, 6, 2)
    assert a[1].tolist() == [3.0, 4.0, 5.0] and a[1].dtype is FORMATS["bfloat16"]
    assert a[1, 2].shape == () and a[1, 2].value() == 5
    assert np.asarray(a).dtype == ml_dtypes.bfloat16
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    view = a.numpy()
    with pytest.raises(ValueError):
        view[0, 0] = 1
    assert er.asarray(a, "float32").numpy().tolist() == x.tolist()
    assert er.asarray(a).dtype is FORMATS["bfloat16"]
    r = er.round_to(x * 0.1, "float16")
    assert r.inexact.shape == r.overflow.shape == r.underflow.shape == (2, 3)
    assert r.inexact.dtype == bool


# ---------------------------------------------------------------------------- Python values
def test_python_inference():
    assert er.asarray([1, 2]).dtype is FORMATS["int64"]
    assert er.asarray([1, 2.5]).dtype is FORMATS["float64"]
    assert er.asarray([True, False]).dtype is FORMATS["bool"]
    assert er.asarray([1 + 2j, 3]).dtype is FORMATS["complex128"]
    assert er.asarray([[1.5], [2.0]]).shape == (2, 1)
    assert er.asarray(1.5, "bfloat16").shape == ()
    assert er.asarray(Fraction(3, 8)).dtype is FORMATS["float64"]


def test_python_ints_past_int64_are_not_wrapped_silently():
    """With no dtype given, a Python int past int64 must not wrap to 0 unasked (numpy refuses
    it too); asking for int64 with overflow='wrap' is how to wrap."""
    with pytest.raises((OverflowError, ValueError, TypeError)):
        er.asarray([2**70])
    assert er.asarray([2**70 + 5], "int64", overflow="wrap").tolist() == [5]


@pytest.mark.parametrize(("values", "fmt", "want"), [
    ([2**53 + 1], "float64", [2.0**53]),
    ([2**53 + 3], "float64", [2.0**53 + 4]),
    ([2**24 + 1], "float32", [2.0**24]),
    ([2**100 + 2**76], "float32", [2.0**100]),  # a tie, even below
    ([2**100 + 2**76 + 1], "float32", [2.0**100 + 2**77]),  # 101 bits: just above the tie
    ([-(2**100) - 2**76 - 1], "float32", [-(2.0**100 + 2**77)]),
    ([Fraction(1, 2**1075) + Fraction(1, 2**1200)], "float64", [5e-324]),
    ([1 + Fraction(1, 2**8) + Fraction(1, 2**900)], "bfloat16", [float.fromhex("0x1.02p+0")]),
    ([er.FloatValue(2**60 + 1)], "float32", [2.0**60]),
    ([er.ComplexValue(1 + Fraction(1, 2**11), Fraction(3, 2**12))], "complex32",
     [complex(1, 3 / 4096)]),
    ([0.1, -0.0], "float8_e4m3fn", [0.1015625, -0.0]),
    ([np.float32(0.1)], "bfloat16", [0.10009765625]),
    ([np.int64(2**62 + 1)], "float32", [2.0**62]),
])
def test_python_values_round_once(values, fmt, want):
    got = er.asarray(values, fmt).tolist()
    assert got == want
    assert [math.copysign(1, g.real) for g in got] == [math.copysign(1, w.real) for w in want]


def test_int64_arrays_round_once():
    x = np.array([2**53 + 1, 2**63 - 1, -(2**63), 2**24 + 1], np.int64)
    assert er.asarray(x, "float32").tolist() == [2.0**53, 2.0**63, -(2.0**63), 2.0**24]
    assert er.asarray(x, "float64").tolist() == [2.0**53, 2.0**63, -(2.0**63), 2.0**24 + 1]
    u = np.array([2**64 - 1, 2**63 + 2**39, 2**63 + 2**39 + 1], np.uint64)
    assert er.asarray(u, "float32").tolist() == [2.0**64, 2.0**63, 2.0**63 + 2**40]


def test_float64_into_bfloat16_without_double_rounding():
    x = np.array([float.fromhex("0x1.0100000001p+0"), float.fromhex("0x1.00fffffffffffp+0")])
    assert er.asarray(x, "bfloat16").tolist() == [float.fromhex("0x1.02p+0"), 1.0]


# -------------------------------------------------------------------------- integer targets
def _int_oracle(v: Fraction, fmt, mode, rule):
    k = round_to_int(v, mode)
    frac = v - v.numerator // v.denominator
    over = not fmt.int_min <= k <= fmt.int_max
    if over and rule == "saturate":
        k = fmt.int_min if k < 0 else fmt.int_max
    elif over:
        k = (k - fmt.int_min) % (fmt.int_max - fmt.int_min + 1) + fmt.int_min
    return k, frac != 0, over


@pytest.mark.parametrize("rule", ["wrap", "saturate"])
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", INTS, ids=_fid)
def test_float64_into_integers(fmt, mode, rule):
    lim = [float(fmt.int_min), float(fmt.int_max), 2.0**fmt.bits]
    x = np.array([0.5, -0.5, 1.5, 2.5, -1.5, -2.5, 0.25, -0.75, 3.0, -0.0, 1e30, -1e30,
                  2.0**62, 2.0**63, -(2.0**63), 2.0**64, 2.0**63 - 1024, 2.0**52 + 0.5,
                  *lim, *(v + 0.5 for v in lim), *(v - 0.5 for v in lim), 2.0**-1074])
    r = er.round_to(x, fmt, rounding=mode, overflow=rule)
    got = r.array.tolist()
    for i, v in enumerate(x):
        want = _int_oracle(Fraction(float(v)), fmt, mode, rule)
        assert (got[i], bool(r.inexact[i]), bool(r.overflow[i])) == want, (float(v).hex(), want)
    assert r.array.dtype is fmt


@pytest.mark.parametrize("fmt", INTS, ids=_fid)
def test_integer_overflow_error_names_index_and_value(fmt):
    x = np.array([[0.0, float(min(fmt.int_max, 2**24))], [2.0**70 + 2.0**20, 3.0]])
    with pytest.raises(OverflowError, match=r"element \(1, 0\) is 1180591620717412352000 "
                                            r"\(exactly\), outside " + fmt.name):
        er.asarray(x, fmt, overflow="error")
    with pytest.raises(OverflowError, match=r"element \(0,\) is " + str(fmt.int_max + 1)):
        er.asarray([fmt.int_max + 1], fmt, overflow="error")


@pytest.mark.parametrize("fmt", INTS, ids=_fid)
def test_nan_and_inf_into_integers(fmt):
    with pytest.raises(ValueError, match=r"element \(1,\) is NaN"):
        er.asarray(np.array([1.0, np.nan]), fmt)
    with pytest.raises(ValueError, match="an infinity"):
        er.asarray(np.array([np.inf]), fmt)
    r = er.round_to(np.array([np.inf, -np.inf]), fmt, overflow="saturate")
    assert r.array.tolist() == [fmt.int_max, fmt.int_min] and r.overflow.all()


@pytest.mark.parametrize("src", INTS, ids=_fid)
@pytest.mark.parametrize("dst", INTS, ids=_fid)
def test_integer_to_integer_wraps_like_numpy(src, dst):
    x = sample(src)
    got = er.asarray(x, dst).tolist()
    span = dst.int_max - dst.int_min + 1
    want = [(int(v) - dst.int_min) % span + dst.int_min for v in x.astype(object)
            .tolist()] if src.bits >= 8 else [(int(v) - dst.int_min) % span + dst.int_min
                                              for v in x.astype(np.int64).tolist()]
    assert got == want
    sat = er.asarray(x, dst, overflow="saturate").tolist()
    assert sat == [min(max(int(v), dst.int_min), dst.int_max)
                   for v in x.astype(np.int64 if src.bits < 8 else object).tolist()]


def test_bool_target():
    assert er.asarray([0.0, -0.0, 1.5, np.nan, -3], "bool").tolist() == [False, False, True,
                                                                          True, True]


# -------------------------------------------------------------------------- complex targets
def _directed_f32(x: np.ndarray, mode):
    """float64 -> float32 in a mode, from float32's two neighbours (normal range only)."""
    f = x.astype(np.float32)  # nearest-even, one rounding
    lo = np.where(f.astype(np.float64) > x, np.nextafter(f, np.float32(-np.inf)), f)
    hi = np.where(f.astype(np.float64) < x, np.nextafter(f, np.float32(np.inf)), f)
    if mode is R.TOWARD_POSITIVE:
        return hi
    if mode is R.TOWARD_NEGATIVE:
        return lo
    if mode is R.TOWARD_ZERO:
        return np.where(x >= 0, lo, hi)
    if mode is R.ODD:
        odd = (lo.view(np.uint32) & 1).astype(bool)  # of two neighbours, one is odd
        return np.where(odd, lo, hi)
    if mode is R.NEAREST_AWAY:
        mid = (lo.astype(np.float64) + hi.astype(np.float64)) / 2
        tie = (x == mid) & (lo != hi)
        return np.where(tie, np.where(x >= 0, hi, lo), f)
    return f


@pytest.mark.parametrize("mode", MODES, ids=_mid)
def test_complex128_into_complex64(mode):
    rng = np.random.default_rng(3)
    re = rng.standard_normal(300) * 2.0 ** rng.integers(-60, 60, 300)
    im = rng.standard_normal(300)
    ties = np.float32(rng.standard_normal(50)).astype(np.float64) * (1 + 2.0**-24)
    re = np.concatenate([re, ties, -ties])
    im = np.concatenate([im, -ties, ties])
    z = re + 1j * im
    r = er.round_to(z, "complex64", rounding=mode)
    got = r.array.numpy()
    assert got.dtype == np.complex64
    assert same_bits(got.real, _directed_f32(re, mode))
    assert same_bits(got.imag, _directed_f32(im, mode))
    want_inexact = (got.real.astype(np.float64) != re) | (got.imag.astype(np.float64) != im)
    assert np.array_equal(r.inexact, want_inexact)


def test_complex128_into_complex32_nearest_even_matches_numpy():
    rng = np.random.default_rng(4)
    re = rng.standard_normal(500) * 2.0 ** rng.integers(-30, 18, 500)
    im = rng.standard_normal(500) * 2.0 ** rng.integers(-30, 18, 500)
    got = er.asarray(re + 1j * im, "complex32").numpy().view(np.float16).reshape(-1, 2)
    with np.errstate(over="ignore"):  # past 65504: numpy's cast gives inf, as IEEE does
        want_re, want_im = re.astype(np.float16), im.astype(np.float16)
    assert same_bits(got[:, 0], want_re)
    assert same_bits(got[:, 1], want_im)


def test_real_into_complex_and_back():
    a = er.asarray(np.array([1.5, -0.0], np.float32), "complex64")
    assert a.tolist() == [1.5 + 0j, -0.0 + 0j] and a.dtype is FORMATS["complex64"]
    with pytest.raises(TypeError, match="imaginary part"):
        er.asarray(np.array([1 + 1j]), "float32")
    with pytest.raises(TypeError, match="imaginary part"):
        er.asarray([1 + 1j], "float32")


# ---------------------------------------------------------------------------- tolist, value
@pytest.mark.parametrize("fmt", list(FORMATS.values()), ids=_fid)
def test_tolist_and_value_types(fmt):
    x = sample(fmt)[:12]
    if fmt.kind == "float" and not fmt.has_nan:
        x = x[~np.isnan(x.astype(np.float64))]
    a = er.asarray(x)
    py = a.tolist()
    kind = {"float": float, "complex": complex, "bool": bool, "int": int, "uint": int}[fmt.kind]
    assert all(type(v) is kind for v in py)
    v = a.value(0)
    want_type = {"float": er.FloatValue, "complex": er.ComplexValue, "bool": bool, "int": int,
                 "uint": int}[fmt.kind]
    assert type(v) is want_type
    for i in range(len(x)):
        v = a.value(i)
        if fmt.kind == "float":
            w = float(x[i])
            assert v.is_nan if math.isnan(w) else (float(v) == w and v.negative ==
                                                   (math.copysign(1, w) < 0))
        elif fmt.kind == "complex":
            assert complex(v) == complex(x[i]) or v.is_nan
        else:
            assert v == py[i]
    with pytest.raises(IndexError):
        a.value()


def test_value_is_exact_for_wide_integers():
    a = er.asarray(np.array([2**63 - 1, -(2**63)], np.int64))
    assert a.value(0) == 2**63 - 1 and a.tolist() == [2**63 - 1, -(2**63)]
    u = er.asarray(np.array([2**64 - 1], np.uint64))
    assert u.value(0) == 2**64 - 1


def test_repr():
    assert repr(er.asarray([0.1, 2.0**-30, 300.0], "float8_e4m3fn")) == \
        "exactref.Array([0.1015625, 0.0, 288.0], dtype=float8_e4m3fn)"
    assert repr(er.asarray(1.5, "bfloat16")) == "exactref.Array(1.5, dtype=bfloat16)"
    assert repr(er.asarray([1, 2], "int4")) == "exactref.Array([1, 2], dtype=int4)"
    long = repr(er.asarray(np.arange(1000.0), "float32"))
    assert long.startswith("exactref.Array([") and long.endswith("dtype=float32)")
    assert "..." in long and len(long) < 400


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: er.asarray(["a"]), TypeError, "element 0 is 'a' of type str"),
    (lambda: er.asarray([None]), TypeError, "expected numbers"),
    (lambda: er.asarray(np.array(["a"])), TypeError, "hold no numbers"),
    (lambda: er.asarray([[1, 2], [3]]), (TypeError, ValueError), None),
    (lambda: er.asarray([Fraction(1, 3)], "float32"), ValueError, "not a binary fraction"),
    (lambda: er.asarray([1.0], "float32", overflow="wrap"), ValueError, "does not apply"),
    (lambda: er.asarray([1.0], "int32", overflow="ieee"), ValueError, "does not apply"),
    (lambda: er.asarray([1.0], "float6_e2m3fn", overflow="nan"), ValueError, "has no NaN"),
    (lambda: er.asarray([np.nan], "float4_e2m1fn"), ValueError, "NaN"),
    (lambda: er.asarray([1.0], "float32", rounding="sideways"), ValueError, "rounding mode"),
    (lambda: er.asarray([1.0], "float7"), ValueError, "unknown format"),
    (lambda: er.Array(np.zeros(2), "float32"), TypeError, "does not match format float32"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_rounding_mode_spellings():
    x = [1 + 2.0**-30]
    for spec, want in [("toward_positive", 1 + 2.0**-10), ("TOWARD_POSITIVE", 1 + 2.0**-10),
                       ("ru", 1 + 2.0**-10), ("rd", 1.0), (R.ODD, 1 + 2.0**-10),
                       ("nearest_away", 1.0)]:
        assert er.asarray(x, "float16", rounding=spec).tolist() == [want], spec


# -------------------------------------------------------------------------------- torch
def _torch():
    return pytest.importorskip("torch")


def _make_tensor(make):
    """Build a tensor with torch's own warnings silenced (complex32 warns that it is
    experimental); exactref's calls stay under the warnings-are-errors rule."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make()


@pytest.mark.parametrize("fmt", TORCH_FORMATS, ids=_fid)
def test_torch_round_trip(fmt):
    t = _torch()
    x = sample(fmt)
    a = er.asarray(x)
    tensor = a.torch()
    assert tensor.dtype == getattr(t, fmt.torch_name) and tuple(tensor.shape) == x.shape
    back = er.asarray(tensor)
    assert back.dtype is fmt and same_bits(back.numpy(), x)
    if fmt.kind == "float":
        assert same_bits(_make_tensor(lambda: tensor.to(t.float64)).numpy(), x.astype(np.float64))
    elif fmt.kind in ("int", "uint") and fmt.bits <= 32:
        assert _make_tensor(lambda: tensor.to(t.int64)).tolist() == x.astype(np.int64).tolist()


@pytest.mark.parametrize("fmt", [f for f in TORCH_FORMATS if f.kind in ("float", "complex")],
                         ids=_fid)
def test_torch_source_rounds_once(fmt):
    """A torch float64 tensor rounds like the same numpy array, into every torch format."""
    t = _torch()
    x = np.array([float.fromhex("0x1.0100000001p+0"), float.fromhex("0x1.0020000001p+0"), 0.1,
                  -3.75, 2.0**-20, -0.0])
    want = er.asarray(x, fmt)
    got = er.asarray(t.from_numpy(x), fmt)
    assert got.dtype is fmt and same_bits(got.numpy(), want.numpy())


def test_torch_views_and_devices():
    t = _torch()
    x = t.arange(12, dtype=t.float32).reshape(3, 4)
    assert er.asarray(x.T, "bfloat16").tolist() == x.T.tolist()  # not contiguous
    assert er.asarray(x.requires_grad_(True)).tolist() == x.tolist()
    z = t.tensor([1 + 2j, -3 - 0.5j], dtype=t.complex64)
    assert er.asarray(z.conj()).tolist() == [1 - 2j, -3 + 0.5j]
    assert er.asarray(t.neg(z.conj())).tolist() == [-1 + 2j, 3 - 0.5j]
    assert er.asarray(z.conj().imag).tolist() == [-2.0, 0.5]
    assert er.asarray(t.tensor(2.5, dtype=t.float16)).shape == ()
    assert er.asarray(t.tensor([True, False])).dtype is FORMATS["bool"]


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                  "float8_e5m2fnuz", "float8_e8m0fnu", "bfloat16", "float16",
                                  "complex32", "uint16", "uint32", "uint64"])
def test_torch_tensors_of_narrow_formats(name):
    t = _torch()
    fmt = FORMATS[name]
    x = sample(fmt)
    tensor = _make_tensor(lambda: er.asarray(x).torch())  # built outside the check below
    got = er.asarray(tensor)
    assert got.dtype is fmt and same_bits(got.numpy(), x)
    assert tensor.dtype == getattr(t, fmt.torch_name)


def test_complex32_to_torch_does_not_warn():
    """Array.torch() for complex32 must not leak torch's 'experimental' UserWarning."""
    _torch()
    er.asarray([1.5 + 2j], "complex32").torch()


def test_torch_has_no_format():
    _torch()
    with pytest.raises(TypeError, match="PyTorch has no int4 dtype"):
        er.asarray([3], "int4").torch()


# ---------------------------------------------------------------------------------- jax
def test_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.array([1.5, 0.1, -2.0], dtype=jnp.bfloat16)
    a = er.asarray(x)
    assert a.dtype is FORMATS["bfloat16"] and a.tolist() == [1.5, 0.10009765625, -2.0]
    y = jnp.array([0.1, 448.0], dtype=jnp.float32)
    assert er.asarray(y, "float8_e4m3fn").tolist() == [0.1015625, 448.0]
    assert er.asarray(jnp.array([3, -4], dtype=jnp.int8), "float4_e2m1fn").tolist() == [3.0,
                                                                                       -4.0]


# ------------------------------------------------------------- formats without NaN
@pytest.mark.parametrize("name", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"])
@pytest.mark.parametrize("source", ["python", "float32", "float64", "bfloat16"])
def test_round_to_flags_nan_undefined_in_formats_without_nan(name, source):
    """A NaN into float6/float4 is undefined (the placeholder +0, flagged), not an error of
    the whole call; the other elements round as ever (the fast path and the engine's)."""
    vals = [1.25, math.nan, -math.nan, 100.0, -0.3]
    src = vals if source == "python" else er.asarray(vals, source)
    r = er.round_to(src, name)
    assert r.undefined.tolist() == [False, True, True, False, False]
    got = r.array.tolist()
    assert got[1:3] == [0.0, 0.0] and not np.signbit(got[1:3]).any()
    want = er.round_to([v for v in (src.tolist() if source != "python" else vals)
                        if v == v], name)
    assert [got[0], *got[3:]] == want.array.tolist()
    assert not r.inexact[1:3].any() and not r.overflow[1:3].any()
    assert not r.underflow[1:3].any()


def test_round_to_undefined_is_false_elsewhere():
    for name in ("float32", "float8_e4m3fn", "int8", "bool", "float4_e2m1fn"):
        r = er.round_to([1.0, 0.0], name)
        assert r.undefined.tolist() == [False, False], name
    r = er.round_to(np.float32([np.nan]), "float8_e4m3fn")
    assert r.undefined.tolist() == [False] and math.isnan(r.array.tolist()[0])


def test_asarray_of_nan_into_a_format_without_nan_names_the_element():
    with pytest.raises(ValueError) as err:
        er.asarray(np.float32([[1.0, 2.0], [np.nan, np.nan]]), "float4_e2m1fn")
    msg = str(err.value)
    assert "element (1, 0) is NaN" in msg and "float4_e2m1fn has no NaN" in msg
    assert "2 such elements" in msg and "er.round_to" in msg and ".undefined" in msg
