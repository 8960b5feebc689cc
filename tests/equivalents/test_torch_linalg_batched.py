"""exactref.equivalents.torch_linalg's bmm and baddbmm against PyTorch 2.13 on the CPU: every
dtype PyTorch's CPU bmm supports, PyTorch's own small loop (k * m * n < 400) and the BLAS path,
broadcast inputs, alphas and betas (0 included), random values and infinities and NaN; where
PyTorch raises, the equivalent raises too. Then the cases where PyTorch departs from
``linalg.gemm``'s semantics, pinned as test_torch_departures.py pins add's: exactref's op gives
the mathematical (BLAS) answer and does not cover PyTorch, the equivalent does. Last, the
audit's bmm and baddbmm groups.

Which kernel PyTorch runs depends on the CPU (MKL's code path, oneDNN's kernels): where a test
pins a path, it measures which one ran and accepts each path seen, and where PyTorch itself is
wrong on this machine (baddbmm with alpha=0 on the oneDNN path, see docs/linalg.md) it checks
the reference on the path other CPUs take and reports the finding as a skip."""

from __future__ import annotations

import contextlib
import functools
import math
import zlib

import numpy as np
import pytest
from torch_check import Sweep

import exactref as er
from exactref import linalg

torch = pytest.importorskip("torch")
etl = pytest.importorskip("exactref.equivalents.torch_linalg")

INF, NAN = math.inf, math.nan
FLOATS = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]
#: (b, m, k, n): PyTorch's own loop (k * m * n < 400) and the BLAS / addmm paths
SHAPES = [(2, 3, 4, 5), (3, 1, 60, 6), (2, 8, 48, 8), (1, 1, 500, 1)]


def _gen(*key):
    return torch.Generator().manual_seed(zlib.crc32(repr(key).encode()))


def _tensor(shape, dtype, g, specials=False):
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    x = x * 2.0 ** torch.randint(-8, 8, tuple(shape), generator=g).double()
    if dtype.is_complex:
        x = torch.complex(x, torch.randn(shape, generator=g, dtype=torch.float64))
    elif not dtype.is_floating_point:
        lo = 0 if dtype == torch.uint8 else -100
        x = torch.randint(lo, 100, tuple(shape), generator=g)
    x = x.to(dtype)
    if specials and x.numel() >= 3:
        flat = x.view(-1)
        idx = torch.randperm(flat.numel(), generator=g)[:3]
        flat[idx[0]], flat[idx[1]], flat[idx[2]] = NAN, INF, -INF
    return x


#: float16 and bfloat16 products of more than this many multiply-adds in all (b * m * k * n) run
#: oneDNN on CPUs it has kernels for (ATen's mkldnn ``checksize``)
ONEDNN_MIN = 16**3
HALVES = (torch.float16, torch.bfloat16)


@contextlib.contextmanager
def _onednn_disabled():
    """PyTorch without oneDNN: the kernels an AVX2 CPU runs for float16 and bfloat16."""
    old = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = old


#: The paths below were measured with torch 2.13.0+cpu on an Intel Xeon with AVX-512 (AVX-512
#: FP16 and BF16, AMX; torch.backends.cpu.get_cpu_capability() "AVX512", MKL 2024.2, oneDNN
#: v3.12), and with ATEN_CPU_CAPABILITY=avx2/default, ONEDNN_MAX_CPU_ISA=AVX2 and
#: MKL_ENABLE_INSTRUCTIONS=AVX2 there: float16 and bfloat16 BLAS-sized products "ignore beta"
#: on oneDNN's AVX-512 kernels and "sum" elsewhere; MKL "skips" float32, float64 and complex.
_MEASURED_ON = "torch 2.13.0, x86-64 AVX512 (and AVX2, DEFAULT emulated)"


@functools.cache
def _zero_alpha_path(dtype, b, m, k, n, onednn=True):
    """What torch.baddbmm(input, batch1, batch2, alpha=0, beta=0.5) does with the product at
    this size on this machine (``onednn=False``: with oneDNN disabled), measured: "sums" it
    (PyTorch's own loop, its addmm kernel: 0 * inf is NaN), "skips" it (MKL: 0.5 * input, the
    BLAS answer), or "ignores beta" (the oneDNN path of torch 2.13: input unscaled; with
    beta=0, uninitialised memory); on a path not measured before (another CPU's kernels), the
    reason to skip, starting "unmeasured"."""
    x = torch.ones(b, m, k, dtype=dtype)
    x[:, :, 0] = INF
    c = torch.full((b, m, n), 2.0, dtype=dtype)
    with contextlib.nullcontext() if onednn else _onednn_disabled():
        out = torch.baddbmm(c, x, torch.ones(b, k, n, dtype=dtype), alpha=0, beta=0.5)
    for path, value in (("sums", NAN), ("skips", 1.0), ("ignores beta", 2.0)):
        if torch.equal(out.isnan(), torch.full_like(out, math.isnan(value), dtype=torch.bool)) \
                and (math.isnan(value) or (out == value).all()):
            return path
    return (f"unmeasured: baddbmm alpha=0 {str(dtype)[6:]} {(b, m, k, n)}"
            f"{'' if onednn else ' (oneDNN disabled)'} takes a kernel path not measured before "
            f"(measured: {_MEASURED_ON}; this CPU: torch {torch.__version__}, capability "
            f"{torch.backends.cpu.get_cpu_capability()}): input 2, product NaN gave "
            f"{out.flatten()[:8].tolist()}; measure it and add it to _zero_alpha_path")


def _onednn_bug(dtype, shape):
    """The finding reported where baddbmm's oneDNN path ignores beta (docs/linalg.md)."""
    return (f"torch bug on this CPU (torch {torch.__version__}, CPU capability "
            f"{torch.backends.cpu.get_cpu_capability()}): baddbmm alpha=0 {str(dtype)[6:]} "
            f"{tuple(shape)} (b*m*k*n > {ONEDNN_MIN}: oneDNN) returns before applying beta: input "
            f"unscaled for beta != 0, uninitialised memory (different on every call) for beta=0. "
            f"exactref's equivalent rightly does not cover it; checked with oneDNN disabled")


def _scalars(fmt):
    if fmt.is_integer:
        return [(1, 1), (2, -1), (0, 3), (3, 0), (2.7, -1)]
    pairs = [(1, 1), (0.5, -1.5), (0, 1), (1, 0), (0, 0), (-3, 1 / 3)]
    if fmt.kind == "complex":
        pairs += [(0.5 - 2j, 1j), (1j, 0)]
    return pairs


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_bmm_and_baddbmm_covered(dtype):
    fmt = er.dtype(dtype)
    td = getattr(torch, dtype)
    sweep, unknown = Sweep(), Sweep()  # unknown: alpha=0 on a path not measured before
    torch_bug, unmeasured = [], []
    for b, m, k, n in SHAPES:
        g = _gen(dtype, b, m, k, n)
        x, y = _tensor((b, m, k), td, g), _tensor((b, k, n), td, g)
        sweep.check(f"bmm {(b, m, k, n)}", lambda x=x, y=y: torch.bmm(x, y),
                    lambda x=x, y=y: etl.bmm(x, y))
        path = _zero_alpha_path(td, b, m, k, n) if fmt.kind == "float" else "sums"
        ignores_beta = path == "ignores beta"
        if path.startswith("unmeasured"):
            unmeasured.append(path)
        for specials in ([False, True] if fmt.kind == "float" else [False]):
            for alpha, beta in _scalars(fmt):
                # where oneDNN ignores beta, only beta=1 comes out right: check the rest on
                # the kernels other CPUs run, and report torch's bug
                bug = ignores_beta and alpha == 0 and beta != 1
                for cshape in [(b, m, n), (n,), (m, 1)]:
                    x = _tensor((b, m, k), td, g, specials)
                    y = _tensor((b, k, n), td, g, specials)
                    c = _tensor(cshape, td, g, specials)
                    label = (f"baddbmm {(b, m, k, n)} input {cshape} alpha={alpha} beta={beta} "
                             f"specials={specials}")
                    if bug:
                        torch_bug.append((b, m, k, n))
                        label += " (oneDNN disabled)"

                    def run(x=x, y=y, c=c, al=alpha, be=beta, bug=bug):
                        with _onednn_disabled() if bug else contextlib.nullcontext():
                            return torch.baddbmm(c, x, y, alpha=al, beta=be)

                    into = unknown if alpha == 0 and path.startswith("unmeasured") else sweep
                    into.check(label, run, lambda x=x, y=y, c=c, al=alpha, be=beta: etl.baddbmm(
                        c, x, y, alpha=al, beta=be))
    sweep.assert_ok()
    assert sweep.checked >= 40
    if unknown.failures:  # the equivalent does not model this CPU's path: say so, not fail
        pytest.skip(f"{unmeasured[0]}; the equivalent does not cover it: "
                    f"{unknown.failures[0]} ({len(unknown.failures)} of "
                    f"{unknown.checked} alpha=0 checks; the other {sweep.checked} passed)")
    if torch_bug:
        pytest.skip(f"{_onednn_bug(td, torch_bug[0])} ({len(torch_bug)} of {sweep.checked} "
                    f"checks; all passed)")


def test_errors_mirror_pytorch():
    f = torch.ones(2, 3, 4)
    g = torch.ones(2, 4, 5)
    c = torch.ones(2, 3, 5)
    cases = {
        "bmm 2-D": ((f[0], g[0]), None),
        "bmm batch sizes": ((f, g[:1]), None),
        "bmm k": ((f, torch.ones(2, 3, 5)), None),
        "bmm dtypes": ((f, g.double()), None),
        "bmm bool": ((f.bool(), g.bool()), None),
        "bmm uint16": ((f.to(torch.uint16), g.to(torch.uint16)), None),
        "bmm float8": ((f.to(torch.float8_e4m3fn), g.to(torch.float8_e4m3fn)), None),
        "bmm bool BLAS-sized": ((torch.ones(2, 10, 100).bool(), torch.ones(2, 100, 10).bool()),
                                None),
        "baddbmm input dtype": ((c.double(), f, g), {}),
        "baddbmm 0-d input dtype": ((torch.tensor(1.0, dtype=torch.float64), f, g), {}),
        "baddbmm Python scalar input": ((1.0, f, g), {}),
        "baddbmm 4-D input": ((torch.ones(1, 2, 3, 5), f, g), {}),
        "baddbmm input shape": ((torch.ones(3, 3, 5), f, g), {}),
        "baddbmm 2-D batch2": ((c, f, g[0]), {}),
        "float32 alpha overflow": ((c, f, g), {"alpha": 1e300}),
        "float32 alpha just past the largest float": ((c, f, g), {"alpha": 3.4028235e38}),
        "float16 beta past float32": ((c.half(), f.half(), g.half()), {"beta": 1e39}),
        "float32 complex alpha": ((c, f, g), {"alpha": 1j}),
        "complex64 alpha overflow": ((c.cfloat(), f.cfloat(), g.cfloat()), {"alpha": 1e300j}),
        "int8 alpha 300": ((c.to(torch.int8), f.to(torch.int8), g.to(torch.int8)),
                           {"alpha": 300}),
        "int8 alpha 127.9": ((c.to(torch.int8), f.to(torch.int8), g.to(torch.int8)),
                             {"alpha": 127.9}),
        "uint8 alpha -2.7": ((c.byte(), f.byte(), g.byte()), {"alpha": -2.7}),
        "int8 alpha nan": ((c.to(torch.int8), f.to(torch.int8), g.to(torch.int8)),
                           {"alpha": NAN}),
        "int alpha past uint64": ((c, f, g), {"alpha": 2**64}),
    }
    sweep = Sweep()
    for label, (args, kwargs) in cases.items():
        if kwargs is None:
            sweep.check(label, lambda a=args: torch.bmm(*a), lambda a=args: etl.bmm(*a))
        else:
            sweep.check(label, lambda a=args, k=kwargs: torch.baddbmm(*a, **k),
                        lambda a=args, k=kwargs: etl.baddbmm(*a, **k))
    sweep.assert_ok()
    assert sweep.both_raise == len(cases) and sweep.checked == 0
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        etl.bmm(f.bool(), g.bool())
    with pytest.raises(TypeError, match="same dtype"):
        etl.bmm(f, g.double())


@pytest.mark.parametrize("value", [0.1, -2.7, 2.5, 1 + 2**-11 + 2**-40, 1e5, -1, 2**63, True,
                                   2 + 0j, INF, 3.4028234663852886e38])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8",
                                   "complex64"])
def test_blas_scalar_is_what_baddbmm_reads(dtype, value):
    """alpha * 1 computed by PyTorch's own loop is alpha as the kernel reads it (for float16,
    the result is that value rounded to float16: alpha itself stays a float32)."""
    td = getattr(torch, dtype)
    one = torch.ones(1, 1, 1, dtype=td)
    try:
        out = torch.baddbmm(torch.zeros(1, 1, 1, dtype=td), one, one, alpha=value)
    except (RuntimeError, OverflowError):
        with pytest.raises((ValueError, OverflowError)):
            etl.blas_scalar(value, dtype)
        return
    got = etl.blas_scalar(value, dtype)
    fmt = er.dtype(dtype)
    want = out.item()
    assert etl.baddbmm(torch.zeros(1, 1, 1, dtype=td), one, one, alpha=value).covers(out).all()
    if fmt.kind == "complex" and not math.isfinite(abs(value)):
        return  # inf * (1+0j) by the textbook formula: inf+nanj
    if fmt.is_integer:
        assert got == want
    elif dtype == "float16":
        assert er.asarray(float(got), "float16").tolist() in ([want], want)
        assert float(got) == float(np.float32(float(complex(value).real)))
    else:
        assert complex(got) == complex(want)


# ----------------------------------------------------------------- what PyTorch computes
@pytest.mark.parametrize("shape", [(1, 1, 300, 1), (2, 4, 300, 4), (3, 2, 50, 3)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_halves_accumulate_in_float32(dtype, shape):
    """1 + (k - 1) tiny values, each half an ulp of 1: accumulated in the dtype the sum stays
    1; in float32 it is the exact value rounded once, at every size and in both paths."""
    b, m, k, n = shape
    td = getattr(torch, dtype)
    tiny = 2.0 ** -er.dtype(dtype).precision
    x = torch.full((b, m, k), tiny, dtype=td)
    x[..., 0] = 1
    y = torch.ones(b, k, n, dtype=td)
    for out, ref in ((torch.bmm(x, y), etl.bmm(x, y)),
                     (torch.baddbmm(torch.zeros(b, m, n, dtype=td), x, y, beta=0.5),
                      etl.baddbmm(torch.zeros(b, m, n, dtype=td), x, y, beta=0.5))):
        exact = er.asarray([1 + (k - 1) * tiny], dtype).tolist()[0]
        assert out.flatten().tolist() == [exact] * (b * m * n)
        assert ref.covers(out).all()
        assert not ref.covers(torch.ones_like(out)).any()  # what dtype accumulation gives


def test_beta_zero_ignores_nan_input():
    g = _gen("beta0")
    for b, m, k, n in SHAPES:
        for td in (torch.float32, torch.float16, torch.complex64):
            x, y = _tensor((b, m, k), td, g), _tensor((b, k, n), td, g)
            c = torch.full((b, m, n), NAN, dtype=td)
            out = torch.baddbmm(c, x, y, beta=0)
            assert not out.isnan().any()
            assert etl.baddbmm(c, x, y, beta=0).covers(out).all()
            assert linalg.gemm(x, y, c, beta=0).covers(out).all()  # BLAS semantics agree


def test_empty_contraction_and_empty_outputs():
    c = torch.full((2, 3, 5), 3.0)
    x, y = torch.ones(2, 3, 0), torch.ones(2, 0, 5)
    for beta in (2, 0, 1 / 3):
        out = torch.baddbmm(c, x, y, beta=beta)
        ref = etl.baddbmm(c, x, y, beta=beta)
        assert ref.covers(out).all() and ref.rounded.shape == (2, 3, 5)
    assert etl.bmm(x, y).rounded.tolist() == torch.bmm(x, y).tolist()
    empty = etl.bmm(torch.ones(0, 3, 4), torch.ones(0, 4, 5))
    assert empty.rounded.shape == (0, 3, 5)
    assert etl.baddbmm(torch.ones(5), torch.ones(2, 0, 4), torch.ones(2, 4, 5)).rounded.shape \
        == (2, 0, 5)


def test_integer_results_wrap_exactly():
    x = torch.full((2, 10, 100), 100, dtype=torch.int8)
    y = torch.full((2, 100, 10), 100, dtype=torch.int8)
    c = torch.full((2, 10, 10), 7, dtype=torch.int8)
    out = torch.baddbmm(c, x, y, alpha=3, beta=-1)
    want = (3 * 100 * 100 * 100 - 7 + 128) % 256 - 128
    assert out.flatten().tolist() == [want] * 200
    ref = etl.baddbmm(c, x, y, alpha=3, beta=-1)
    assert ref.rounded.tolist() == out.tolist()
    assert not ref.covers(out + 1).any()


# ------------------------------------------------- where PyTorch departs from BLAS gemm
def _pinned(out, math_ref, equivalent, mask):
    """At the elements of ``mask``, exactref's gemm does not cover PyTorch and the equivalent
    does; everywhere, the equivalent covers PyTorch."""
    assert not np.asarray(math_ref.covers(out).mask)[mask].any()
    assert np.asarray(math_ref.covers(out).mask)[~mask].all()
    assert equivalent.covers(out).all()


def _poisoned(dtype, b, m, k, n):
    """batch1 with an infinity in row 0 of every batch element; batch2 and input finite."""
    g = _gen("poison", str(dtype), b, m, k, n)
    x, y = _tensor((b, m, k), dtype, g), _tensor((b, k, n), dtype, g)
    x[:, 0, 1] = INF
    return x, y, _tensor((b, m, n), dtype, g)


@pytest.mark.parametrize("dtype,shape", [
    (torch.float32, (2, 3, 4, 5)), (torch.float64, (2, 3, 4, 5)),  # PyTorch's own loop
    (torch.float16, (2, 3, 4, 5)), (torch.float16, (2, 8, 48, 8)),  # the halves: any size
    (torch.bfloat16, (2, 8, 48, 8)), (torch.complex64, (2, 3, 4, 5))],
    ids=["float32-small", "float64-small", "float16-small", "float16-large", "bfloat16-large",
         "complex64-small"])
def test_zero_alpha_still_sums_the_product(dtype, shape):
    """alpha == 0: BLAS (and linalg.gemm) does not compute the product; PyTorch's own loops
    and its addmm kernel compute it and multiply by 0, so an infinite product gives NaN
    (0 * inf). float16 and bfloat16 products of more than 4096 multiply-adds in all may run
    oneDNN instead (on AVX512 CPUs), which skips the product: the equivalent allows both paths
    there, and only there."""
    x, y, c = _poisoned(dtype, *shape)
    ref = etl.baddbmm(c, x, y, alpha=0, beta=0.5)
    row0 = np.zeros((shape[0], shape[1], shape[3]), bool)
    row0[:, 0, :] = True
    nan = complex(NAN, NAN) if dtype.is_complex else NAN
    summed = torch.where(torch.from_numpy(row0), nan, c * 0.5)  # PyTorch's own kernels
    either = dtype in HALVES and math.prod(shape) > ONEDNN_MIN
    # what the equivalent allows in row 0: NaN, and 0.5 * input (the product skipped) only
    # where oneDNN may run; never input unscaled (oneDNN's bug)
    assert ref.covers(summed).all()
    skipped = np.asarray(ref.covers(c * 0.5).mask)[row0]
    assert skipped.all() if either else not skipped.any()
    assert not np.asarray(ref.covers(c).mask)[row0 & (c != 0).numpy()].any()

    path = _zero_alpha_path(dtype, *shape)
    if path.startswith("unmeasured"):
        pytest.skip(path)
    out = torch.baddbmm(c, x, y, alpha=0, beta=0.5)
    bug = path == "ignores beta"
    if bug:  # torch 2.13's oneDNN path (AVX512): input unscaled, which the equivalent refuses
        assert either and torch.equal(out, c)
        assert not np.asarray(ref.covers(out).mask)[(c != 0).numpy()].any()
        path = _zero_alpha_path(dtype, *shape, onednn=False)  # what AVX2 CPUs run
        if path.startswith("unmeasured"):
            pytest.skip(path)
        with _onednn_disabled():
            out = torch.baddbmm(c, x, y, alpha=0, beta=0.5)
    if path == "sums":  # PyTorch's own loop, its addmm kernel
        assert out[:, 0].isnan().all() and not out[:, 1:].isnan().any()
        _pinned(out, linalg.gemm(x, y, c, alpha=0, beta=0.5), ref, row0)
    else:  # the product skipped, as BLAS does: only where oneDNN may run
        assert path == "skips" and either
        assert torch.equal(out, c * 0.5)
        assert linalg.gemm(x, y, c, alpha=0, beta=0.5).covers(out).all()
        assert ref.covers(out).all()
    if bug:
        pytest.skip(_onednn_bug(dtype, shape))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
def test_zero_alpha_skips_the_product_in_mkl(dtype):
    """The same with BLAS-sized float32, float64 and complex products: MKL skips it, as
    linalg.gemm does, and the equivalent does not allow NaN there."""
    x, y, c = _poisoned(dtype, 2, 8, 48, 8)
    out = torch.baddbmm(c, x, y, alpha=0, beta=0.5)
    assert not out.isnan().any()
    assert linalg.gemm(x, y, c, alpha=0, beta=0.5).covers(out).all()
    ref = etl.baddbmm(c, x, y, alpha=0, beta=0.5)
    assert ref.covers(out).all()
    assert not ref.covers(torch.full_like(out, NAN)).mask[:, 0].any()


def test_scaled_subnormal_times_infinity_is_nan_in_mkl():
    """alpha=0.5, a term 5e-324 * inf: mathematically -inf or inf. MKL gives NaN, as if it
    scaled 5e-324 by 0.5 first (0), on AVX2 and on an AVX512 AMD EPYC (measured); on a Xeon
    with AVX-512 FP16 and AMX it gives inf (issue 11). The equivalent allows both there, and
    NaN only there. PyTorch's own loop (a small problem) gives inf."""
    x = torch.full((1, 8, 48), 0.25, dtype=torch.float64)
    y = torch.full((1, 48, 8), 0.5, dtype=torch.float64)
    x[0, 0, 5], y[0, 5, 0] = 5e-324, INF
    c = torch.zeros(1, 8, 8, dtype=torch.float64)
    mask = np.zeros((1, 8, 8), bool)
    mask[0, 0, 0] = True
    ref, exact = etl.baddbmm(c, x, y, alpha=0.5), linalg.gemm(x, y, c, alpha=0.5)
    with_nan = exact.rounded.torch().clone()
    assert with_nan[0, 0, 0].item() == INF
    with_nan[0, 0, 0] = NAN
    assert ref.covers(exact.rounded.torch()).all()
    _pinned(with_nan, exact, ref, mask)
    assert not ref.covers(torch.full_like(c, NAN)).mask[0, :, 1:].any()  # no infinity read
    out = torch.baddbmm(c, x, y, alpha=0.5)
    if math.isnan(out[0, 0, 0].item()):  # MKL, AVX2 and AMD EPYC
        _pinned(out, exact, ref, mask)
    else:  # MKL on a Xeon with AVX-512 FP16 and AMX: the exact answer
        assert out[0, 0, 0].item() == INF
        assert exact.covers(out).all() and ref.covers(out).all()
    small = torch.baddbmm(c[:, :1, :1], x[:, :1], y[:, :, :1], alpha=0.5)
    assert small.item() == INF
    assert etl.baddbmm(c[:, :1, :1], x[:, :1], y[:, :, :1], alpha=0.5).covers(small).all()


def test_complex128_infinity_is_nan_in_mkl():
    """A complex128 product with an infinite operand: the exact sum is infinite. MKL gives
    nan+nanj, in bmm and in matmul alike, on AVX2 and on an AVX512 AMD EPYC (measured); on a
    Xeon with AVX-512 FP16 and AMX it gives infinite parts (issue 11). The equivalent allows
    both."""
    g = _gen("c128")
    x = torch.randn(1, 8, 48, generator=g, dtype=torch.complex128)
    y = torch.randn(1, 48, 8, generator=g, dtype=torch.complex128)
    x[0, 1, 27] = complex(INF, 0.875)
    mask = np.zeros((1, 8, 8), bool)
    mask[0, 1, :] = True
    ref, exact = etl.bmm(x, y), linalg.matmul(x, y)
    assert not np.isnan(exact.rounded.numpy()[0, 1]).any()
    with_nan = exact.rounded.torch().clone()
    with_nan[0, 1] = complex(NAN, NAN)
    assert ref.covers(exact.rounded.torch()).all()
    _pinned(with_nan, exact, ref, mask)
    out = torch.bmm(x, y)
    if out[0, 1].isnan().all():  # MKL, AVX2 and AMD EPYC
        _pinned(out, exact, ref, mask)
    else:  # MKL on a Xeon with AVX-512 FP16 and AMX: infinite parts
        assert not out[0, 1].isfinite().any() and ref.covers(out).all()
    out2 = torch.matmul(x[0], y[0])
    assert etl.matmul(x[0], y[0]).covers(out2).all()
    if out2[1].isnan().all():  # MKL, AVX2 and AMD EPYC: a departure from the exact sum
        assert not linalg.matmul(x[0], y[0]).covers(out2).all()


def test_sum_overflows_before_alpha_scales_it():
    """bfloat16: 2 * max overflows the float32 accumulator before alpha=0.25 brings it back
    into range; PyTorch gives inf. The bound's overflow check counts the partial sums formed
    before alpha scales them, so linalg.gemm (accumulating in float32 or in bfloat16) covers
    it too, while the reference stays the exact value rounded once."""
    big = float(er.dtype("bfloat16").max_finite)
    x = torch.tensor([[[big, big]]], dtype=torch.bfloat16)
    y = torch.ones(1, 2, 1, dtype=torch.bfloat16)
    c = torch.zeros(1, 1, 1, dtype=torch.bfloat16)
    out = torch.baddbmm(c, x, y, alpha=0.25)
    assert out.item() == INF
    for compute in (None, "float32"):
        assert linalg.gemm(x, y, c, alpha=0.25, compute=compute).covers(out).all()
    assert etl.baddbmm(c, x, y, alpha=0.25).covers(out).all()
    assert etl.baddbmm(c, x, y, alpha=0.25).rounded.tolist() == [[[big / 2]]]
    # with alpha = 1 the exact sum itself overflows bfloat16's range only past 2 * max: a
    # value that stays in range after alpha is not allowed to overflow when alpha >= 1
    small = torch.tensor([[[big / 4, big / 4]]], dtype=torch.bfloat16)
    assert not linalg.gemm(small, y, c, alpha=1.5).covers(torch.full_like(out, INF)).all()


def test_integer_alpha_is_truncated():
    """A float alpha for an integer dtype: PyTorch truncates it (2.7 -> 2); linalg.gemm takes
    alpha exactly and so refuses a non-integral one."""
    x = torch.ones(2, 3, 4, dtype=torch.int8)
    y = torch.ones(2, 4, 5, dtype=torch.int8)
    c = torch.ones(2, 3, 5, dtype=torch.int8)
    out = torch.baddbmm(c, x, y, alpha=2.7, beta=-1.5)  # 2 * 4 - 1
    assert out.flatten().tolist() == [7] * 30
    assert etl.baddbmm(c, x, y, alpha=2.7, beta=-1.5).covers(out).all()
    with pytest.raises(ValueError, match="not an integer"):
        linalg.gemm(x, y, c, alpha=2.7, beta=-1.5)


# ---------------------------------------------------------------------------------- audit
def test_audit_bmm_and_baddbmm_pass():
    from exactref.audit import AuditConfig, run_audit

    r = run_audit(AuditConfig(target="torch", ops=("bmm", "baddbmm"),
                              dtypes=("float32", "bfloat16", "complex64", "int32", "bool",
                                      "uint16")))
    status = {g.key: g.status for g in r.groups}
    assert status["bmm float32[4,8,48] float32[4,48,8]"] == "pass"
    assert status["baddbmm bfloat16[8] bfloat16[4,8,48] bfloat16[4,48,8] alpha=0.5 beta=-1.5"] == "pass"
    assert status["baddbmm int32[3,4,5] int32[3,4,6] int32[3,6,5] alpha=3 beta=0"] == "pass"
    assert status["bmm uint16[4,8,48] uint16[4,48,8]"] == "unsupported"
    assert not any(k.startswith("bmm bool") for k in status)  # no long sums of bool
    assert r.failed == 0 and r.passed == 4 + 4 * 2
    assert all(g.cases > 0 for g in r.groups if g.status == "pass")


def test_audit_cli_matmul_sum_baddbmm(capsys):
    from exactref.cli import main

    rc = main(["audit", "torch", "--ops", "matmul,sum,baddbmm", "--dtypes",
               "float32,bfloat16,int32", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert ("baddbmm  float32[3,4,5], float32[3,4,6], float32[3,6,5], alpha=-2.0, beta=0 "
            "-> float32") in out
    assert out.splitlines()[-1] == "12 passed, 0 failed"


def test_audit_failure_reports_the_element_and_a_reproducer(monkeypatch):
    """A wrong baddbmm (one element off) fails its group; the reproducer reruns that element on
    the slices of the operands it reads, and its reference is the group's exact rounding."""
    from exactref.audit import AuditConfig, _targets, run_audit

    run = _targets.TorchTarget.run

    def wrong(self, op, operands, params):
        out = run(self, op, operands, params)
        if op == "baddbmm":
            out = out.clone()
            out[1, 2, 3] = out[1, 2, 3] * 1.5 + 1
        return out

    monkeypatch.setattr(_targets.TorchTarget, "run", wrong)
    r = run_audit(AuditConfig(target="torch", ops=("baddbmm",), dtypes=("float64",)))
    fails = [g for g in r.groups if g.status == "fail"]
    assert len(fails) == 2 and all(g.uncovered == 1 for g in fails)
    big = next(g for g in fails if "[4,8,48]" in g.key)
    assert big.worst["index"] == [1, 2, 3]
    assert (big.worst["x"], big.worst["y"]) == ("x[1, 2, :]", "y[1, :, 3]")
    ns: dict = {}
    with pytest.raises(SystemExit) as done:  # it reruns torch's own (correct) kernel: covered
        exec(big.worst["reproducer"], ns)
    assert done.value.code in (0, None)
    assert ns["x"].shape == (1, 1, 48) and ns["input"].shape == (1, 1, 1)
    assert float(ns["ref"].rounded.numpy().reshape(-1)[0]) == float.fromhex(
        big.worst["expected"])
