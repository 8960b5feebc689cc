"""The PyTorch equivalents of the real functions: they cover what torch's CPU kernels compute
(every function and dtype, the vectorized body, its scalar tail and strided tensors), each
departure from the mathematical answer is pinned (PyTorch gives it, ``er.<fn>`` does not
cover it, the equivalent does), and the models are not vacuous (a kernel a little worse than
the declared accuracy is caught)."""

from __future__ import annotations

import contextlib
import math
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")
ert = pytest.importorskip("exactref.equivalents.torch")
_TF = pytest.importorskip("exactref.equivalents._torch_functions")
KERNELS, GELU_PATHS = _TF.KERNELS, _TF.GELU_FLOAT32_PATHS

h = float.fromhex
INF = math.inf
DTYPES = ("float64", "float32", "float16", "bfloat16")
UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc", "sigmoid", "silu", "mish",
         "gelu", "gelu_tanh", "softplus", "logit")


def torch_call(name):
    """The torch function of a row (gelu_tanh: gelu with approximate="tanh")."""
    if name == "gelu_tanh":
        return lambda x: F.gelu(x, approximate="tanh")
    if name in ("silu", "mish", "gelu", "softplus"):
        return getattr(F, name)
    return getattr(torch, name)


def equivalent(name):
    if name == "gelu_tanh":
        return lambda x: ert.gelu(x, approximate="tanh")
    return getattr(ert, name)


def inputs(name, dtype, n, seed=0):
    """Values where ``name`` is interesting: random bit patterns (every binade), moderate
    values, the function's own edges (overflow of exp and sinh, the tails of sigmoid and gelu,
    near the zeros of sin, near 1 for asin and logit), and the specials."""
    rng = np.random.default_rng([seed, len(name), sum(map(ord, name + dtype))])
    fmt = er.dtype(dtype)
    lnmax = math.log(fmt.max_finite)
    special = [0.0, -0.0, INF, -INF, math.nan, 1.0, -1.0, 0.5, fmt.smallest_subnormal,
               -fmt.smallest_subnormal, fmt.max_finite, -fmt.max_finite]
    edges = {"exp": [lnmax, -lnmax, -lnmax - 16], "expm1": [lnmax, -20.0],
             "exp2": [127.9, 1023.9, -149.5], "sinh": [lnmax + 0.69, 88.6, 709.5],
             "cosh": [lnmax + 0.69, 88.6, 709.5], "sin": [math.pi, 1e4 * math.pi],
             "cos": [math.pi / 2, 3 * math.pi / 2], "tan": [math.pi / 2, 1.5707963],
             "asin": [1 - 2.0 ** -fmt.precision, -1.0], "acos": [1 - 2.0 ** -fmt.precision],
             "log1p": [-1 + 2.0 ** -fmt.precision, fmt.smallest_normal * 1.3],
             "sigmoid": [-90.0, -88.7, -103.0, -709.0, -745.0], "silu": [-90.0, -88.7],
             "mish": [-90.0, -20.0], "gelu": [-5.0, -10.0, -4.0, 2.7e38],
             "gelu_tanh": [-5.0, -10.0, 2.7e38], "softplus": [20.0, -90.0, -720.0],
             "logit": [0.5 - 2.0 ** -25, 1e-7, 1 - 2.0 ** -24]}.get(name, [])
    k = n // 3
    with np.errstate(all="ignore"):
        if fmt.bits == 16:
            bits = rng.integers(0, 2**16, k).astype(np.uint16)
        elif fmt.bits == 32:
            bits = rng.integers(0, 2**32, k, dtype=np.int64).astype(np.uint32)
        else:
            bits = rng.integers(0, 2**63, k, dtype=np.int64).astype(np.uint64) * np.uint64(2)
        pattern = bits.view(fmt.np_dtype).astype(np.float64)
        moderate = rng.standard_normal(k) * np.exp2(rng.integers(-8, 5, k))
        if name == "logit":
            moderate = rng.uniform(0, 1, k)
        near = np.repeat(np.array(edges or [1.0]), max(1, (n - 2 * k) // max(1, len(edges))))
        near = near * (1 + rng.integers(-8, 9, near.size) * 2.0 ** -fmt.precision)
        vals = np.concatenate([special, pattern, moderate, near])
        return er.asarray(vals, fmt, overflow="ieee").numpy()


def _tensor(values, dtype):
    t = torch.from_numpy(np.asarray(values).astype(np.float64)).to(torch.float32)
    return t.to(getattr(torch, dtype)) if dtype != "float64" else torch.from_numpy(
        np.asarray(values).astype(np.float64))


@contextlib.contextmanager
def _onednn(enabled):
    old = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = enabled
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = old


def _paths(fn, t):
    """The outputs of ``fn`` on the contiguous tensor (padded to 64 k + 3: a tail), the same
    with oneDNN disabled (ATen's kernel, which CPUs without oneDNN's run: gelu) and on a
    stride-2 view of it (the scalar loop of cpu_kernel_vec)."""
    n = t.numel()
    pad = (-(n - 3)) % 64
    full = torch.cat([t, t[:pad]]) if pad else t
    contiguous = fn(full)[:n]
    with _onednn(False):
        aten = fn(full)[:n]
    wide = torch.zeros(2 * n, dtype=t.dtype)
    wide[::2] = t
    strided = fn(wide[::2])
    return contiguous, aten, strided


def _check(name, dtype, n, seed=0):
    x = _tensor(inputs(name, dtype, n, seed), dtype)
    ref = equivalent(name)(x)
    for out in _paths(torch_call(name), x):
        cov = ref.covers(out)
        assert cov.all(), cov.summary()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_covers_torch(name, dtype):
    _check(name, dtype, 240)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_covers_torch_sweep(name, dtype):
    """Every value of the 16-bit formats, 3 * 10**4 values of float32 and float64."""
    if dtype in ("float16", "bfloat16"):
        fmt = er.dtype(dtype)
        with np.errstate(invalid="ignore"):
            vals = np.arange(2**16, dtype=np.uint16).view(fmt.np_dtype).astype(np.float64)
        x = _tensor(vals, dtype)
        ref = equivalent(name)(x)
        for out in _paths(torch_call(name), x):
            assert ref.covers(out).all()
        return
    _check(name, dtype, 30000, seed=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ("atan2", "pow"))
def test_covers_torch_binary(name, dtype):
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    n = 300
    a = rng.standard_normal(n) * np.exp2(rng.integers(-10, 10, n))
    b = rng.standard_normal(n) * np.exp2(rng.integers(-6, 6, n))
    if name == "pow":
        a = np.abs(a)
        b[: n // 4] = rng.integers(-8, 9, n // 4)
        a[n // 4: n // 2] = -a[n // 4: n // 2]
        b[n // 4: n // 2] = rng.integers(-5, 6, n // 4)
    a[:6] = [0.0, -0.0, INF, -INF, 1.0, math.nan]
    b[:6] = [0.0, 1.0, -INF, 2.0, math.nan, 0.0]
    x, y = _tensor(a, dtype), _tensor(b, dtype)
    ref = getattr(ert, name)(x, y)
    fn = getattr(torch, name)
    for out in (fn(torch.cat([x, x[:61]]), torch.cat([y, y[:61]]))[:n], fn(x[::2], y[::2])):
        got = ref if out.numel() == n else getattr(ert, name)(x[::2], y[::2])
        cov = got.covers(out)
        assert cov.all(), cov.summary()


def test_pow_scalar_exponents():
    x = _tensor(np.linspace(0.1, 50, 97), "float32")
    for e in (2, 3, 0.5, -0.5, -1, -2, 1.7, -1.3):
        assert ert.pow(x, e).covers(torch.pow(x, e)).all(), e
    # the scalar loop raises to the double exponent: the tail of the contiguous loop
    fifty = torch.full((97,), 50.0)
    out = torch.pow(fifty, 1.7)
    assert out[0].item() == h("0x1.828fdcp+9") and out[96].item() == h("0x1.828fd6p+9")
    assert ert.pow(fifty, 1.7).covers(out).all()
    # 3: x * x * x, each product rounded into bfloat16
    b = torch.tensor([h("0x1.9cp+13")], dtype=torch.bfloat16)
    _pinned(lambda t: torch.pow(t, 3), lambda t: ert.pow(t, 3), lambda t: er.pow(t, 3.0), b,
            h("0x1.0cp+41"), h("0x1.0ap+41"))
    # 1 and 0: a copy and ones, in every dtype (float8 has no pow kernel)
    f8 = torch.tensor([1.5, -3.0]).to(torch.float8_e4m3fn)
    assert ert.pow(f8, True).covers(torch.pow(f8, True)).all()
    assert ert.pow(f8, 0).covers(torch.pow(f8, 0)).all()


def test_integer_pow_wraps():
    a = torch.tensor([2, 3, -2, 100, 7, 0], dtype=torch.int8)
    b = torch.tensor([3, 2, 5, 3, -1, 0], dtype=torch.int8)
    assert ert.pow(a, b).covers(torch.pow(a, b)).all()  # 100**3 wraps; 7**-1 is 0
    assert ert.pow(a, 3).covers(torch.pow(a, 3)).all()
    with pytest.raises(ValueError, match="negative integer"):
        ert.pow(a, -1)


def test_integer_inputs_promote_to_float32():
    i = torch.arange(-5, 60)
    ref = ert.exp(i)
    assert ref.rounded.dtype.name == "float32"
    assert ref.covers(torch.exp(i)).all()
    assert ert.sigmoid(i).covers(torch.sigmoid(i)).all()


def test_parameters():
    x = _tensor(np.linspace(-30, 30, 131), "float32")
    for beta, threshold in ((1, 20), (2.0, 5.0), (0.5, 3)):
        ref = ert.softplus(x, beta, threshold)
        assert ref.covers(F.softplus(x, beta, threshold)).all()
    p = _tensor(np.linspace(-0.1, 1.1, 131), "float32")
    for eps in (None, 1e-6, 0.25):
        assert ert.logit(p, eps).covers(torch.logit(p, eps)).all()
    b = p.to(torch.bfloat16)
    assert ert.logit(b, 1e-3).covers(torch.logit(b, 1e-3)).all()
    with pytest.raises(ValueError, match="approximate"):
        ert.gelu(x, approximate="erf")


# ------------------------------------------------------------------ departures, pinned
def _pinned(fn, equivalent_fn, math_fn, x, want_torch, want_math):
    """PyTorch gives ``want_torch`` (vectorized loop: 67 copies), exactref's op
    ``want_math``; the op does not cover PyTorch, the equivalent does."""
    xs = x.repeat(67)
    out = fn(xs)[:1]
    got = out.item()
    assert (math.isnan(got) and math.isnan(want_torch)) or got == want_torch, \
        f"PyTorch now gives {got!r}, not {want_torch!r}"
    ref = math_fn(x)
    assert ref.rounded.tolist()[0] == want_math
    assert not ref.covers(out).all()
    assert equivalent_fn(x).covers(out).all()


def _correct_sigmoid(x):
    return er.sigmoid(x, accuracy="correct")


def _correct_gelu(x):
    return er.gelu(x, accuracy="correct")


def test_sigmoid_is_zero_where_exp_overflows():
    # 1 / (1 + exp(90)): exp overflows, though sigmoid(-90) is a float32 subnormal
    x = torch.tensor([-90.0])
    _pinned(torch.sigmoid, ert.sigmoid, _correct_sigmoid, x, 0.0, 8.194008692231508e-40)
    # the op's default (mainstream: the formula's absolute term where exp overflows) covers it
    assert er.sigmoid(x).covers(torch.sigmoid(x.repeat(67))[:1]).all()


def test_silu_mish_gelu_of_minus_infinity_are_nan():
    x = torch.tensor([-INF])
    for fn, eq, op in ((F.silu, ert.silu, er.silu), (F.mish, ert.mish, er.mish),
                       (F.gelu, ert.gelu, er.gelu)):
        _pinned(fn, eq, op, x, math.nan, -0.0)


# ------------------------------------------ gelu's float32 kernels: which one runs is the CPU's
_GELU_PROBE = [h(k) for k in next(iter(GELU_PATHS.values())).measured]


def _gelu_path(out):
    """The name of the kernel whose measured outputs at the probe inputs are ``out`` (a list
    of floats), else None."""
    got = [v.hex() for v in out]
    for name, path in GELU_PATHS.items():
        if got == [float.fromhex(v).hex() for v in path.measured.values()]:
            return name
    return None


def _unmeasured(what, out):
    return (f"{what}: a kernel not measured before on this CPU (torch {torch.__version__}, "
            f"capability {torch.backends.cpu.get_cpu_capability()}, ONEDNN_MAX_CPU_ISA="
            f"{os.environ.get('ONEDNN_MAX_CPU_ISA', '')!r}): gelu at {_GELU_PROBE} gave "
            f"{[v.hex() for v in out]}; measure it and add it to "
            f"exactref.equivalents._torch_functions.GELU_FLOAT32_PATHS")


def _here_gelu_path(onednn=True):
    with _onednn(onednn):
        out = F.gelu(torch.tensor(_GELU_PROBE).repeat(67))[: len(_GELU_PROBE)].tolist()
    return _gelu_path(out), out


@pytest.mark.parametrize("onednn", [True, False], ids=["onednn", "aten"])
def test_gelu_float32_departures_on_this_cpu(onednn):
    # every kernel's erf is a polynomial: gelu(-5) is 17 % (oneDNN's AVX-512 minimax), 4 %
    # (Abramowitz and Stegun 7.1.26: oneDNN on AVX2 and SSE4.1, ATen's Vectorized<float>)
    # off the exact -1.4333e-6 (rounded: -0x1.80bb0ap-20); oneDNN's AVX-512 kernel computes
    # (x * (1 + erf)) * 0.5, inf for x > max / 2; its AVX2 kernel fma(erf, S, S) with S = x / 2
    # gives +0 at -0
    name, out = _here_gelu_path(onednn)
    if name is None:
        pytest.skip(_unmeasured("oneDNN enabled" if onednn else "oneDNN disabled", out))
    pinned = {h(k): h(v) for k, v in GELU_PATHS[name].measured.items()}
    with _onednn(onednn):
        _pinned(F.gelu, ert.gelu, _correct_gelu, torch.tensor([-5.0]), pinned[-5.0],
                -1.433257807548216e-06)
        # the op's default (mainstream: 2 ulps plus 9.5 2**-24 |x|, the formula's cancellation)
        assert er.gelu(torch.tensor([-5.0])).covers(F.gelu(torch.tensor([-5.0]).repeat(67))[:1]).all()
        x = torch.tensor([2.7e38])
        if pinned[h("0x1.9640380000000p+127")] == INF:
            _pinned(F.gelu, ert.gelu, _correct_gelu, x, INF, 2.7000000455127994e+38)
        else:
            assert er.gelu(x).covers(F.gelu(x.repeat(67))[:1]).all()
        z = torch.tensor([-0.0, -1e-45, -10.0]).repeat(67)
        out = F.gelu(z)
        assert bool(torch.signbit(out[0])) == (pinned[-0.0] == 0 and math.copysign(1, pinned[
            -0.0]) < 0)
        assert ert.gelu(z).covers(out).all()
        if not torch.signbit(out[0]):  # +0 where the exact value is -0
            assert not er.gelu(z[:3]).covers(out[:3]).all()


#: A child process: the float32 gelu of the values in argv[1] under its environment (one
#: kernel), saved to argv[2] with the probe's outputs and the CPU capability
_GELU_CHILD = """
import sys, numpy as np, torch, torch.nn.functional as F
torch.backends.mkldnn.enabled = sys.argv[3] == "1"
x = torch.from_numpy(np.load(sys.argv[1]))
n = x.numel()
probe = torch.tensor([float.fromhex(v) for v in sys.argv[4].split(",")]).repeat(67)
out = F.gelu(torch.cat([x, x[: (-(n - 3)) % 64]]))[:n]
np.savez(sys.argv[2], out=out.numpy(), probe=F.gelu(probe)[: len(sys.argv[4].split(","))],
         capability=torch.backends.cpu.get_cpu_capability())
"""


#: the kernels a plain process runs (oneDNN's best for this CPU, ATen's with oneDNN disabled)
#: are checked in this process by test_covers_torch; their child processes only with --run-slow
_IN_PROCESS = ("onednn-avx512", "aten-vectorized")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _IN_PROCESS
                                  else n for n in GELU_PATHS])
def test_gelu_float32_every_kernel_covered(name, tmp_path):
    """Each modelled kernel, run in a child process under the environment that selects it
    (where this CPU has its instructions), is covered by the equivalent on gelu's hard
    inputs, every binade and the specials; where this CPU runs another kernel under that
    environment the test says which, and skips."""
    path = GELU_PATHS[name]
    vals = np.concatenate([inputs("gelu", "float32", 1200), np.linspace(-6, 6, 2401),
                           -np.geomspace(1e-45, 1e-30, 60)]).astype(np.float32)
    np.save(tmp_path / "x.npy", vals)
    env = {k: v for k, v in os.environ.items() if k not in ("ONEDNN_MAX_CPU_ISA",
                                                            "ATEN_CPU_CAPABILITY")}
    env.update(path.env)
    subprocess.run([sys.executable, "-c", _GELU_CHILD, str(tmp_path / "x.npy"),
                    str(tmp_path / "out.npz"), "1" if path.onednn else "0",
                    ",".join(path.measured)], env=env, check=True, timeout=300)
    got = np.load(tmp_path / "out.npz")
    probe = got["probe"].astype(np.float64).tolist()
    ran = _gelu_path(probe)
    if ran is None:
        pytest.skip(_unmeasured(f"{name} under {path.env}", probe))
    if ran != name and not (name.startswith("aten") and ran.startswith("aten")):
        pytest.skip(f"this CPU runs {ran}, not {name}, under {path.env} (capability "
                    f"{got['capability']}): it lacks the instructions; {ran} is checked too")
    cov = ert.gelu(torch.from_numpy(vals)).covers(torch.from_numpy(got["out"]))
    assert cov.all(), f"{name}: {cov.summary()}"


def test_bfloat16_erf_polynomial_cancels():
    # bfloat16 erf runs Vectorized<float>::erf (A&S 7.1.26 on AVX2 and AVX-512): erf(2**-126)
    # is 0 (1 - r t exp(-x**2) cancels); the DEFAULT capability's std::erf gets it right
    b = torch.tensor([2.0 ** -126], dtype=torch.bfloat16)
    cap = _x86_capability()
    exact = 1.3224311446750734e-38
    if cap in ("AVX2", "AVX512"):
        _pinned(torch.erf, ert.erf, er.erf, b, 0.0, exact)
    elif cap == "DEFAULT":
        out = torch.erf(b.repeat(67))[:1]
        assert out.item() == exact and er.erf(b).covers(out).all()
        assert ert.erf(b).covers(out).all()
    else:
        pytest.skip(f"torch's CPU capability {cap}: bfloat16 erf not measured there")


def test_logit_cancels_near_one_half():
    # 1 - x rounds to 0.5, so x / (1 - x) is 1 - 2**-24: log gives -2**-24, not -2**-23
    x = torch.tensor([h("0x1.fffffep-2")])
    _pinned(torch.logit, ert.logit, er.logit, x, -(2.0 ** -24), -(2.0 ** -23))


def _x86_capability():
    """torch's CPU capability, with "DEFAULT" only on x86-64 (aarch64's DEFAULT build runs
    NEON and SLEEF: reported as "aarch64 DEFAULT", not measured)."""
    cap = torch.backends.cpu.get_cpu_capability()
    if cap == "DEFAULT" and platform.machine() not in ("x86_64", "AMD64"):
        return f"{platform.machine()} DEFAULT"
    return cap


def _sleef(fn, equivalent_fn, *xs):
    """Whether torch's vectorized loops call SLEEF on this CPU: its AVX2 and AVX-512
    capabilities do (vec256, vec512: measured on both); DEFAULT's Vectorized<T> calls the C
    library per lane (measured: none of SLEEF's departures), where the equivalent must still
    cover torch's output, checked here before returning False. Other capabilities (aarch64's
    NEON and SVE SLEEF) are not measured: skip."""
    cap = _x86_capability()
    if cap in ("AVX2", "AVX512"):
        return True
    if cap != "DEFAULT":
        pytest.skip(f"torch's CPU capability {cap}: its SLEEF functions are not measured")
    out = fn(*[x.repeat(67) for x in xs])[:1]
    assert equivalent_fn(*xs).covers(out).all()
    return False


def test_sleef_sinh_overflows_beyond_its_domain():
    x = torch.tensor([88.9])
    if _sleef(torch.sinh, ert.sinh, x):
        _pinned(torch.sinh, ert.sinh, er.sinh, x, INF, 2.0311879944805776e+38)


def test_sleef_pow_float64_overflows_early():
    x = torch.tensor([h("0x1.58eae0128c441p+0")], dtype=torch.float64)
    y = torch.tensor([2380.8004751216477], dtype=torch.float64)
    if not _sleef(torch.pow, ert.pow, x, y):
        return
    out = torch.pow(x.repeat(67), y.repeat(67))[:1]
    assert out.item() == INF
    assert er.pow(x, y).rounded.tolist() == [1.7976931348621329e+308]
    assert not er.pow(x, y).covers(out).all()
    assert ert.pow(x, y).covers(out).all()


def test_sleef_log1p_subnormal_is_one_ulp_and_a_hair():
    x = torch.tensor([-h("0x0.581c7f6f8ed41p-1022")], dtype=torch.float64)
    if not _sleef(torch.log1p, ert.log1p, x):
        return
    out = torch.log1p(x)
    assert out.item() == -h("0x0.581c7f6f8ed40p-1022")  # the exact value is just below -x
    assert not er.log1p(x, accuracy=1.0).covers(out).all()
    assert ert.log1p(x).covers(out).all()


def test_bfloat16_subnormal_results_flushed():
    # sigmoid, silu and gelu store bfloat16 with denormals flushed (measured)
    b = torch.tensor([-90.0], dtype=torch.bfloat16)
    _pinned(torch.sigmoid, ert.sigmoid, _correct_sigmoid, b, 0.0, 8.265194654219209e-40)


def test_glibc_scalar_loop_is_less_accurate():
    # strided tensors run std::sinh (glibc 2.36's sinhf: 1.75 ulps here); the vectorized
    # loop (SLEEF) gives the correctly rounded value
    x = torch.tensor([-h("0x1.98d0e8p-1")] * 2)
    strided = torch.sinh(x[::2])
    assert strided.item() == -h("0x1.c5a99p-1")
    assert er.sinh(x[:1]).rounded.tolist() == [-h("0x1.c5a98cp-1")]
    assert not er.sinh(x[:1], accuracy=1.0).covers(strided).all()
    assert ert.sinh(x[:1]).covers(strided).all()


# ---------------------------------------------------------------- the models are not vacuous
def _ulp_steps(t, k):
    """``t`` moved ``k`` representable numbers up."""
    out = t.clone()
    for _ in range(k):
        out = torch.nextafter(out, torch.full_like(out, INF))
    return out


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("name", ("exp", "log", "sin", "tanh", "erf", "exp2", "log1p", "atan",
                                  "sinh"))
def test_a_worse_kernel_is_caught(name, dtype):
    """torch's output is covered; moved by the declared accuracy plus the measured error (so
    that every moved value is beyond the accuracy from the exact value), it is not: a kernel
    with about twice the error is caught everywhere."""
    rng = np.random.default_rng(3)
    vals = rng.uniform(0.1, 3.0, 500) * rng.choice([-1, 1], 500)
    if name in ("log", "log1p"):
        vals = np.abs(vals)
    x = _tensor(vals, dtype)
    out = getattr(torch, name)(x)
    ref = getattr(ert, name)(x)
    assert ref.covers(out).all()
    acc = KERNELS[name].accuracy[dtype]
    worse = _ulp_steps(out, math.ceil(acc + KERNELS[name].measured[dtype]))
    assert not ref.covers(worse).mask.any()


@pytest.mark.parametrize(("name", "steps"), [("sigmoid", 4), ("silu", 4), ("mish", 8),
                                            ("gelu_tanh", 8), ("softplus", 4), ("gelu", 32)])
def test_a_worse_formula_is_caught(name, steps):
    """The formulas' intervals are a few ulps wide on moderate inputs (gelu's float32 erf, an
    absolute error of 2**-20, about 12): a kernel ``steps`` ulps off is caught everywhere."""
    x = _tensor(np.linspace(0.25, 3.0, 200), "float32")
    out = torch_call(name)(x)
    ref = equivalent(name)(x)
    assert ref.covers(out).all()
    assert not ref.covers(_ulp_steps(out, steps)).mask.any()
