"""The function ops' default accuracy, ``"mainstream"``: per function and compute format the
largest bound the mainstream libraries document (glibc, SLEEF u10, CUDA, numpy) or the
function's torch and numpy counterparts declare. What such libraries return is covered; a
kernel a few ulps beyond every one of them, or computing another function, is caught."""

from __future__ import annotations

import numpy as np
import pytest

import exactref as er
from exactref.arithmetic._accuracy import MAINSTREAM, mainstream_sources

F32 = np.float32
RNG = np.random.default_rng(21)


def _steps(v: np.ndarray, k: int) -> np.ndarray:
    """``v`` moved ``k`` ulps up (float32), by nextafter."""
    out = v.copy()
    for _ in range(k):
        out = np.nextafter(out, np.float32(np.inf))
    return out


def test_the_default_is_mainstream_and_the_reference_is_unchanged():
    x = er.asarray(RNG.uniform(-5, 5, 500), "float32")
    r, c = er.exp(x), er.exp(x, accuracy="correct")
    assert r.details["accuracy"].name == "mainstream"
    assert np.array_equal(r.rounded.numpy(), c.rounded.numpy())  # bit for bit
    assert r.covers(c.rounded).all()  # a correctly rounded exp is covered
    b = er.exp(er.asarray([0.5], "bfloat16"))  # the table lane records it too
    assert b.details["accuracy"].name == "mainstream"


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sin", "erf", "atan"])
@pytest.mark.parametrize("fmt", ["float32", "float64"])
def test_the_bound_is_the_largest_source(name, fmt):
    sources = mainstream_sources(name, fmt)
    assert set(MAINSTREAM) & set(sources)
    assert er.ACCURACY_PRESETS["mainstream"].bound(name, fmt) == max(sources.values())
    # no narrower than any mainstream library: its band contains each one's
    x = er.asarray(RNG.uniform(0.1, 3, 400), fmt)
    f = getattr(er, name)
    r = f(x)
    for preset in MAINSTREAM:
        if er.ACCURACY_PRESETS[preset].bound(name, fmt) is None:
            continue
        lib = f(x, accuracy=preset)
        assert r.covers(lib.lowest).all() and r.covers(lib.highest).all(), preset


def test_a_sleef_u10_tanh_is_covered_by_default():
    """SLEEF's ``tanhf_u10`` (1.0001 ulps from the exact value): every value its bound admits
    is covered, at both ends of the band; ``accuracy="correct"`` rejects them."""
    x = er.asarray(np.concatenate([RNG.uniform(-9, 9, 3000), RNG.uniform(-1e-3, 1e-3, 500)]),
                   "float32")
    sleef = er.tanh(x, accuracy="sleef_u10")
    assert er.tanh(x).covers(sleef.lowest).all()
    assert er.tanh(x).covers(sleef.highest).all()
    assert not er.tanh(x, accuracy="correct").covers(sleef.highest).all()


def test_an_exp_4_ulps_off_is_caught_by_default():
    """4 ulps from the correctly rounded float32 ``exp`` is more than 3.5 from the exact value
    (the mainstream bound, numpy's float32 SIMD exp): caught on every element."""
    x = RNG.uniform(-80, 80, 5000).astype(np.float32)
    r = er.exp(x)
    ref = r.rounded.numpy()
    for k in (4, -4):
        off = _steps(ref, k) if k > 0 else -_steps(-ref, -k)
        assert not r.covers(off).any(), k
    assert r.covers(_steps(ref, 3)).mask.mean() > 0.3  # 3 ulps off: inside 3.5 sometimes


def test_a_tanh_formula_gelu_is_caught_by_default():
    """A float32 GELU computed with the tanh approximation (numpy, step by step in float32;
    about 1e-3 relative from the erf GELU at worst) is caught: the derived bound (2 ulps plus
    9.5 2**-24 |x|) is far narrower than the formulas' difference."""
    x = RNG.uniform(-6, 6, 20000).astype(np.float32)
    c = np.float32(np.sqrt(2 / np.pi))
    approx = np.float32(0.5) * x * (np.float32(1) + np.tanh(c * (x + np.float32(0.044715) * x**3)))
    r = er.gelu(x)
    assert r.details["accuracy"].name == "mainstream"
    assert r.covers(approx).uncovered > 10000


def test_functions_no_library_documents_stay_correctly_rounded():
    for name in ("mish", "softplus", "logit"):
        r = getattr(er, name)(er.asarray([0.25], "float32"))
        assert r.models == ("exact",), name
        assert r.details["accuracy"].correct and r.details["accuracy"].name == "mainstream"
    z = er.exp(np.complex64([1 + 1j]))  # complex: the presets document real functions
    assert z.details["accuracy"].correct
    with pytest.raises(ValueError, match="complex"):
        er.exp(np.complex64([1 + 1j]), accuracy="glibc")


def test_the_default_can_be_narrowed_and_widened():
    x = er.asarray(RNG.uniform(-5, 5, 200), "float32")
    assert er.exp(x, accuracy="correct").models == ("exact",)
    wide = er.exp(x, accuracy="glibc_libmvec")
    assert (wide.tolerance_ulps() >= er.exp(x).tolerance_ulps()).all()
    with pytest.raises(ValueError, match="mainstream"):
        er.exp(x, accuracy="mainstrem")


def test_torch_cpu_functions_are_covered_by_default():
    torch = pytest.importorskip("torch")
    x = np.concatenate([RNG.uniform(-10, 10, 4000), RNG.uniform(-1e-2, 1e-2, 500)])
    for name in ("exp", "tanh", "sin", "log1p", "erf", "atan"):
        v = np.abs(x) if name == "log1p" else x
        for dt, tdt in (("float32", torch.float32), ("float64", torch.float64),
                        ("bfloat16", torch.bfloat16), ("float16", torch.float16)):
            if name == "erf" and dt in ("bfloat16", "float16"):
                continue  # Abramowitz and Stegun 7.1.26: an absolute error (docs/functions.md)
            xs = er.asarray(v, dt)
            t = getattr(torch, name)(torch.from_numpy(xs.numpy().astype(np.float64)).to(tdt))
            cov = getattr(er, name)(xs).covers(t)
            assert cov.all(), (name, dt, cov.uncovered)


def test_numpy_functions_are_covered_by_default():
    """numpy's own loops on this machine (SIMD float32 exp and log: up to 2.5 and 3.8 ulps
    measured by numpy; libm in float64; ml_dtypes' bfloat16 loops call glibc's float
    functions)."""
    import ml_dtypes

    x = np.concatenate([RNG.uniform(-20, 20, 4000), RNG.uniform(-1e-3, 1e-3, 500)])
    for name, ufunc in (("exp", np.exp), ("log", np.log), ("tanh", np.tanh), ("sin", np.sin),
                        ("expm1", np.expm1), ("atan", np.arctan), ("cbrt", np.cbrt)):
        v = np.abs(x) + 1e-3 if name == "log" else x
        for dt in (np.float32, np.float64, ml_dtypes.bfloat16):
            xs = v.astype(dt)
            with np.errstate(all="ignore"):
                actual = ufunc(xs)
            cov = getattr(er, name)(xs).covers(actual)
            assert cov.all(), (name, dt, cov.uncovered)
    xs = x.astype(np.float32)  # the false alarms the old default ("correct") raised
    assert er.exp(xs, accuracy="correct").covers(np.exp(xs)).uncovered > 100


# ------------------------------------------------- sigmoid and silu: the libraries' formula
def _exp_off(x: np.ndarray, k: int) -> np.ndarray:
    """float32 ``exp(x)`` correctly rounded, then moved ``k`` ulps (an exp within ``|k| + 1/2``
    ulps of the exact value: CUDA's expf is within 2.5)."""
    e = er.exp(x, accuracy="correct").rounded.numpy()
    for _ in range(abs(k)):
        e = np.nextafter(e, np.float32(np.inf if k > 0 else 0))
    return e


def _wide_inputs() -> np.ndarray:
    return np.concatenate([RNG.uniform(-10, 10, 3000), RNG.uniform(-120, 120, 2000),
                           RNG.uniform(-1e-3, 1e-3, 300), [-88.8, -89.5, -104.0, 88.8]]
                          ).astype(np.float32)


@pytest.mark.parametrize("k", [-2, 0, 2])
def test_the_formula_sigmoid_and_silu_are_covered_by_default(k):
    """``1 / (1 + exp(-x))`` and ``x / (1 + exp(-x))``, ``x * sigmoid(x)``, simulated in numpy
    float32 (each step correctly rounded) with the exp ``k`` ulps off its correct rounding:
    within the derived bound (docs/functions.md), exp overflow at x < -88.72 included."""
    x = _wide_inputs()
    with np.errstate(over="ignore", divide="ignore"):
        t = _exp_off(-x, k)
        s = np.float32(1) + t
        sig = np.float32(1) / s
        silu_div, silu_mul = x / s, x * sig
    assert er.sigmoid(x).covers(sig).all()
    assert er.silu(x).covers(silu_div).all() and er.silu(x).covers(silu_mul).all()
    if k:
        assert not er.sigmoid(x, accuracy="correct").covers(sig).all()


def test_torch_sigmoid_and_silu_are_covered_by_default():
    torch = pytest.importorskip("torch")
    x = np.concatenate([_wide_inputs(), RNG.uniform(-800, 800, 1000)])
    F = torch.nn.functional
    for name, f in (("sigmoid", torch.sigmoid), ("silu", F.silu)):
        for dt, tdt in (("float32", torch.float32), ("float64", torch.float64),
                        ("bfloat16", torch.bfloat16), ("float16", torch.float16)):
            xs = er.asarray(x, dt)
            t = f(torch.from_numpy(xs.numpy().astype(np.float64)).to(tdt))
            cov = getattr(er, name)(xs).covers(t)
            assert cov.all(), (name, dt, cov)


def test_wrong_sigmoids_are_caught_by_default():
    x = RNG.uniform(-10, 10, 4000).astype(np.float32)
    r = er.sigmoid(x)
    ref = r.rounded.numpy()
    assert not r.covers(_steps(ref, 8)).any()  # 8 ulps off: beyond the 7-ulp bound
    import ml_dtypes

    b = x.astype(ml_dtypes.bfloat16)  # computed in bfloat16 throughout, stored as float32
    one = ml_dtypes.bfloat16(1)
    in_bf16 = (one / (one + np.exp(-b))).astype(np.float32)
    assert r.covers(in_bf16).uncovered > 3000


# ------------------------------------------------------------- gelu: the libraries' formula
def _erf32(z: np.ndarray) -> np.ndarray:
    return er.erf(z, accuracy="correct").rounded.numpy()


@pytest.mark.parametrize("off", [-1.0, 0.0, 1.0])
def test_the_formula_gelu_is_covered_by_default(off):
    """``(x * 0.5) * (1 + erf(x * M_SQRT1_2))`` in numpy float32 with the erf off by 2**-20
    absolute (the polynomial erfs' declared bound), and oneDNN's ``(x * (1 + erf)) * 0.5``:
    covered, the cancellation at negative x included."""
    x = np.concatenate([RNG.uniform(-10, 10, 4000), RNG.uniform(-1e-3, 1e-3, 300)]).astype(F32)
    z = x * F32(np.sqrt(0.5))
    e = np.clip(_erf32(z).astype(np.float64) + off * 2.0**-20, -1, 1).astype(F32)
    s = F32(1) + e
    assert er.gelu(x).covers((x * F32(0.5)) * s).all()
    assert er.gelu(x).covers((x * s) * F32(0.5)).all()
    if off:
        assert not er.gelu(x, accuracy="correct").covers((x * F32(0.5)) * s).all()
        e = np.clip(_erf32(z).astype(np.float64) + off * 2.0**-16, -1, 1).astype(F32)
        assert er.gelu(x).covers((x * F32(0.5)) * (F32(1) + e)).uncovered > 1000  # 16x worse


def test_torch_gelu_is_covered_by_default():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = np.concatenate([RNG.uniform(-10, 10, 4000), RNG.uniform(-1e-3, 1e-3, 300),
                        RNG.uniform(-40, 40, 1000)])
    for approximate in ("none", "tanh"):
        for dt, tdt in (("float32", torch.float32), ("float64", torch.float64),
                        ("bfloat16", torch.bfloat16), ("float16", torch.float16)):
            xs = er.asarray(x, dt)
            t = torch.from_numpy(xs.numpy().astype(np.float64)).to(tdt)
            r = er.gelu(xs, approximate=approximate)
            assert r.covers(F.gelu(t, approximate=approximate)).all(), (approximate, dt)
            strided = F.gelu(t[::2], approximate=approximate)  # ATen's kernel, not oneDNN's
            half = er.gelu(er.asarray(xs.numpy()[::2], dt), approximate=approximate)
            assert half.covers(strided).all(), (approximate, dt)
