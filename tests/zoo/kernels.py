"""The zoo: correct and buggy kernels over every op family, the measure of issue 21.

Each :class:`Case` is one implementation of one op on one input: numpy (IEEE correctly rounded
float32/float16 arithmetic; bfloat16 through ml_dtypes, each bfloat16 step computed in float32,
which is exact enough: 24 >= 2 * 8 + 2 bits, so one float32 operation then one rounding to
bfloat16 is the correctly rounded bfloat16 operation) written the way mainstream libraries
write it, or torch's own kernel where torch is installed. A case is **correct** (what a library
ships) or a **bug** (described in ``bug``, from a few ulps to gross). ``contract`` holds the
options a careful user would declare for that kernel (passed as ``er.Contract(**contract)``
where the Contract has landed, else as the op's keywords); ``golden`` the same op evaluated in
float64 for the ``torch.testing.assert_close`` rule; ``opinfo`` the op's OpInfo tolerance
override where torch's ``common_methods_invocations.py`` has one.

``tests/zoo/test_zoo.py`` runs the measure; ``docs/zoo.md`` holds the table.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)
E5M2 = np.dtype(ml_dtypes.float8_e5m2)
DTYPES = {"bfloat16": BF16, "float16": F16, "float32": F32}
SHAPE = (4, 256)

# OpInfo tolerance overrides, torch/testing/_internal/common_methods_invocations.py (torch 2.x):
#   nn.functional.layer_norm: toleranceOverride({float32: tol(atol=1e-05, rtol=1e-03)}),
#       'TestCommon', 'test_numpy_refs'
#   nn.functional.group_norm: toleranceOverride({float32: tol(atol=5e-05, rtol=3e-03)}),
#       'TestDecomp', 'test_comprehensive', device_type='cpu'
#   matmul: toleranceOverride({float32: tol(atol=0, rtol=1e-5)}), 'TestCommon',
#       'test_noncontiguous_samples', device_type='cpu' (used for linear too)
#   nn.functional.scaled_dot_product_attention: toleranceOverride({float32: tol(atol=5e-05,
#       rtol=5e-6)}), 'TestCommon'
#   nn.functional.conv2d: toleranceOverride({float16: tol(atol=5e-3, rtol=1e-3)}),
#       'TestInductorOpInfo', 'test_comprehensive'
#   tanh: precisionOverride({bfloat16: 1e-2}); sigmoid: precisionOverride({float16: 1e-2,
#       bfloat16: 1e-2}); log: precisionOverride({bfloat16: 5e-2}) (the atol of the
#       TestUnaryUfuncs reference tests)
# (rtol, atol) per (op, dtype). common_utils.TestCase.assertEqual passes them as rtol_override
# and atol_override, and the pair takes max(default, override) of each (common_utils.py,
# TensorOrArrayPair: self.rtol = max(self.rtol, rtol_override)); ``opinfo_tolerance`` does
# the same. The other ops' OpInfos override nothing for these dtypes (their reference tests
# run at assert_close's defaults, the (b) column).
OPINFO = {("layer_norm", "float32"): (1e-3, 1e-5), ("group_norm", "float32"): (3e-3, 5e-5),
          ("matmul", "float32"): (1e-5, 0.0), ("linear", "float32"): (1e-5, 0.0),
          ("scaled_dot_product_attention", "float32"): (5e-6, 5e-5),
          ("conv2d", "float16"): (1e-3, 5e-3), ("tanh", "bfloat16"): (0.0, 1e-2),
          ("sigmoid", "float16"): (0.0, 1e-2), ("sigmoid", "bfloat16"): (0.0, 1e-2),
          ("log", "bfloat16"): (0.0, 5e-2)}


@dataclass(frozen=True)
class Case:
    """One kernel on one input. ``inputs()`` -> (args, kwargs) of the ``er.<op>`` call (numpy
    arrays in the case's dtype); ``kernel(*args, **kwargs)`` the implementation's output (for
    ``quantize``: ``(codes, scales)``); ``golden(*args64, **kwargs)`` the op in float64 on the
    same inputs (arrays converted to float64)."""

    name: str
    group: str  # the zoo's own grouping (arithmetic, functions, quantize, linalg, norms, ...)
    op: str
    dtype: str
    correct: bool
    kernel: Callable[..., Any]
    golden: Callable[..., Any]
    inputs: Callable[[], tuple]
    contract: dict = field(default_factory=dict)
    bug: str = ""
    torch: bool = False
    xfail: dict = field(default_factory=dict)  # check -> reason (a default not landed yet)

    @property
    def family(self) -> str:
        """The op's family in the registry (one of ``er.ops.FAMILIES``)."""
        import exactref as er
        return er.ops.get_op(self.op).family

    @property
    def opinfo(self):
        return OPINFO.get((self.op, self.dtype))


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def to64(v):
    if isinstance(v, np.ndarray) and v.dtype.kind == "f" or \
            isinstance(v, np.ndarray) and v.dtype in (BF16, E4M3, E5M2):
        return v.astype(np.float64)
    return v


# ---------------------------------------------------------------- helpers the kernels share
def up(x):
    """Operands to float32 opmath (exact for every half and float8 format)."""
    return np.asarray(x).astype(np.float32)


def rnd(x, dt):
    return np.asarray(x).astype(dt)


def seq_sum(x, dt, axis=-1):
    """Left-to-right sum along ``axis``, every partial rounded to ``dt`` (float32 arithmetic
    then one rounding: the correctly rounded ``dt`` addition)."""
    x = np.moveaxis(np.asarray(x), axis, -1)
    acc = np.zeros(x.shape[:-1], dtype=np.float32)
    for j in range(x.shape[-1]):
        acc = (acc + x[..., j].astype(np.float32)).astype(dt).astype(np.float32)
    return acc.astype(dt)


def trunc_bf16(x32):
    """float32 -> bfloat16 by dropping the low 16 bits: round toward zero."""
    b = np.ascontiguousarray(x32, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return b.view(np.float32).astype(BF16)


def erf64(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu64(x):
    return 0.5 * x * (1.0 + erf64(x / math.sqrt(2.0)))


def softmax64(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax64(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def layer_norm64(x, shape, w=None, b=None, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    y = (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def rms_norm64(x, shape, w=None, eps=None):
    eps = np.finfo(np.float32).eps if eps is None else eps
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y if w is None else y * w


def group_norm64(x, g, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    xs = x.reshape(n, g, -1)
    m = xs.mean(-1, keepdims=True)
    y = ((xs - m) / np.sqrt(((xs - m) ** 2).mean(-1, keepdims=True) + eps)).reshape(x.shape)
    shp = (1, c) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(shp)) + (0 if b is None else b.reshape(shp))


def sdpa64(q, k, v, scale=None):
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return softmax64(q @ np.swapaxes(k, -1, -2) * s) @ v


def ce64(x, t):
    return float(-(log_softmax64(x)[np.arange(x.shape[0]), t]).mean())


def conv1d64(x, w, b=None, stride=1, padding=0):
    n, c, L = x.shape
    o, _, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    lo = (xp.shape[-1] - k) // stride + 1
    cols = np.stack([xp[:, :, i * stride:i * stride + k] for i in range(lo)], axis=1)
    y = np.einsum("nlck,ock->nol", cols, w)
    return y if b is None else y + b[None, :, None]


def conv2d64(x, w, b=None, stride=1, padding=0):
    n, c, hh, ww = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    ho, wo = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    y = np.zeros((n, o, ho, wo))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + ho, j:j + wo], w[:, :, i, j])
    return y if b is None else y + b[None, :, None, None]


# ---------------------------------------------------------------- torch adapters
def tt(a):
    import torch
    if not isinstance(a, np.ndarray):
        return a
    if a.dtype == BF16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


def tn(t, dt):
    return t.detach().float().numpy().astype(dt) if t.dtype != _torch_f64() else t.numpy()


def _torch_f64():
    import torch
    return torch.float64


def torch_kernel(fn_path, dtname, **rename):
    """A kernel calling torch's ``fn_path`` (e.g. "nn.functional.layer_norm") on the inputs
    (``rename``: exactref's keyword -> torch's, e.g. ``axis="dim"``)."""
    def kernel(*args, **kwargs):
        import torch
        fn = torch
        for part in fn_path.split("."):
            fn = getattr(fn, part)
        kwargs = {rename.get(k, k): v for k, v in kwargs.items()}
        out = fn(*[tt(a) for a in args], **kwargs)
        return tn(out, DTYPES.get(dtname, F32))
    return kernel


# ---------------------------------------------------------------- inputs
def normal(name, dt, shape=SHAPE, scale=1.0, loc=0.0):
    return (rng_for(name).standard_normal(shape) * scale + loc).astype(DTYPES[dt])


def unary(name, dt, lo=None, hi=None, scale=1.0):
    def make():
        if lo is not None:
            x = rng_for(name).uniform(lo, hi, SHAPE).astype(DTYPES[dt])
        else:
            x = normal(name, dt, scale=scale)
        return (x,), {}
    return make


def binary(name, dt, positive_y=False):
    def make():
        r = rng_for(name)
        x = r.standard_normal(SHAPE).astype(DTYPES[dt])
        y = r.standard_normal(SHAPE)
        y = (np.abs(y) + 0.5 if positive_y else y).astype(DTYPES[dt])
        return (x, y), {}
    return make


def ternary(name, dt):
    def make():
        r = rng_for(name)
        return tuple(r.standard_normal(SHAPE).astype(DTYPES[dt]) for _ in range(3)), {}
    return make


def rows(name, dt, loc=0.0, scale=1.0, **kw):
    return lambda: ((normal(name, dt, loc=loc, scale=scale),), dict(kw))


# ---------------------------------------------------------------- the kernels
def ew(f, dt_compute=np.float32):
    """An elementwise kernel in float32 opmath: operands up, ``f``, one rounding to the input's
    format (torch's CPU and CUDA kernels for half formats, numpy's own float32 loops)."""
    def kernel(*args):
        return rnd(f(*[up(a).astype(dt_compute) for a in args]), args[0].dtype)
    return kernel


def gelu_erf32(x):
    xe = x.astype(np.float64)
    return gelu64(xe).astype(np.float32)  # a correctly rounded erf-GELU in float32 (Sleef u10)


def gelu_tanh32(x):
    x = x.astype(np.float32)
    return (np.float32(0.5) * x * (np.float32(1) + np.tanh(np.float32(math.sqrt(2 / math.pi)) *
                                                         (x + np.float32(0.044715) * x ** 3))))


def exp_4ulp(x):
    y = np.exp(x.astype(np.float32))
    bad = np.zeros(y.shape, dtype=bool)
    bad.flat[::7] = True  # every seventh element 4 ulps too large
    return np.where(bad, (y.view(np.int32) + 4).view(np.float32), y)


def tanh_formula16(x):
    """tanh as 1 - 2 / (exp(2x) + 1) in float16 arithmetic: cancellation near 0."""
    x = x.astype(np.float16)
    return (np.float16(1) - np.float16(2) / (np.exp(np.float16(2) * x) + np.float16(1)))


def sigmoid_bf16_steps(x):
    """1 / (1 + exp(-x)) with every step rounded to bfloat16."""
    b = lambda v: v.astype(BF16).astype(np.float32)  # noqa: E731
    e = b(np.exp(-up(x)))
    return (np.float32(1) / b(np.float32(1) + e)).astype(BF16)


def log_half(x):
    """float32 log computed in float16."""
    return np.log(x.astype(np.float16)).astype(np.float32)


def div_recip(x, y):
    return (x * (np.float32(1) / y)).astype(np.float32)


def fma_exact(x, y, z):
    """A hardware fma: the exact x*y+z rounded once (gmpy2's MPFR with the format's
    precision and exponent range)."""
    import gmpy2
    dt = np.asarray(x).dtype
    fi = ml_dtypes.finfo(dt) if dt == BF16 else np.finfo(dt)
    ctx = gmpy2.context(precision=fi.nmant + 1, emin=fi.minexp - fi.nmant + 1, emax=fi.maxexp,
                        subnormalize=True)
    xs, ys, zs = (np.asarray(v, dtype=np.float64).ravel() for v in (x, y, z))
    out = np.empty(xs.size)
    for i in range(xs.size):
        out[i] = float(ctx.fma(gmpy2.mpfr(xs[i]), gmpy2.mpfr(ys[i]), gmpy2.mpfr(zs[i])))
    return out.reshape(np.shape(x)).astype(dt)


def fma_unfused(x, y, z):
    dt = np.asarray(x).dtype
    return (rnd(up(x) * up(y), dt).astype(np.float32) + up(z)).astype(dt)


# casts
def cast_rne(x, to):
    return up(x).astype(np.dtype(getattr(ml_dtypes, to, None) or to))


def cast_trunc_bf16(x, to):
    return trunc_bf16(up(x))


def cast_via_f16(x, to):
    return up(x).astype(np.float16).astype(np.float32).astype(BF16)


def cast_trunc_e5m2(x, to):
    """float32 -> float8_e5m2 keeping the top 8 bits of its float16: round toward zero."""
    h = np.ascontiguousarray(up(x).astype(np.float16)).view(np.uint16) & np.uint16(0xFF00)
    return h.view(np.float16).astype(E5M2)


def mx_floor(x, fmt, rounding="rne"):
    """OCP MX v1.0 section 6.3 for mxfp8_e4m3 (block 32): shared_exp = floor(log2 amax) - 8,
    elements x / 2**shared_exp rounded to nearest E4M3 and clamped to +-448."""
    xb = up(x).astype(np.float64).reshape(-1, 32)
    amax = np.abs(xb).max(axis=1)
    e = np.floor(np.log2(amax)) - 8
    if fmt == "rceil":  # cuBLAS / cuDNN: the smallest power of two with amax / X <= 448
        e = np.ceil(np.log2(amax / 448.0))
    s = np.exp2(e)
    v = np.clip(xb / s[:, None], -448, 448)
    if rounding == "trunc":  # the element cast rounds toward zero: one code down where RNE went up
        c = np.abs(v).astype(E4M3).astype(np.float64)
        c = np.where(c > np.abs(v), (np.abs(v).astype(E4M3).view(np.uint8) - 1).view(E4M3)
                     .astype(np.float64), c)
        codes = np.sign(v) * c
    else:
        codes = v.astype(E4M3).astype(np.float64)
    return codes.reshape(np.shape(x)), s.reshape(np.shape(x)[:-1] + (-1,))


# reductions (rows along the last axis)
def sum_f32acc(x, axis=-1):
    return np.sum(up(x), axis=axis).astype(x.dtype)


def sum_seq_native(x, axis=-1):
    return seq_sum(x, x.dtype, axis)


def mean_f32acc(x, dim=-1):
    return (np.sum(up(x), axis=dim) / np.float32(x.shape[dim])).astype(x.dtype)


def mean_native(x, dim=-1):
    s = seq_sum(x, x.dtype, dim).astype(np.float32)
    return (s / np.float32(x.shape[dim])).astype(x.dtype)


def var_two_pass(x, dim=-1, correction=0):
    a = up(x)
    m = np.mean(a, axis=dim, keepdims=True)
    return (np.sum((a - m) ** 2, axis=dim) / np.float32(a.shape[dim] - correction)).astype(x.dtype)


def welford32(a):
    """Welford's update, sequential, in float32 (torch's CPU WelfordOps): (mean, m2) per row."""
    mean = np.zeros(a.shape[:-1], np.float32)
    m2 = np.zeros(a.shape[:-1], np.float32)
    for j in range(a.shape[-1]):
        d = a[..., j] - mean
        mean = mean + d / np.float32(j + 1)
        m2 = m2 + d * (a[..., j] - mean)
    return mean, m2


def var_welford(x, dim=-1, correction=0):
    _, m2 = welford32(up(x))
    return (m2 / np.float32(x.shape[-1] - correction)).astype(x.dtype)


def var_one_pass(x, dim=-1, correction=0):
    a = up(x)
    n = np.float32(a.shape[-1])
    m = np.sum(a, axis=-1) / n
    return ((np.sum(a * a, axis=-1) / n - m * m) * n / (n - correction)).astype(x.dtype)


def var_unbiased(x, dim=-1, correction=0):
    return var_two_pass(x, dim, correction=1)


# linalg
def mm_f32acc(a, b):
    return (up(a) @ up(b)).astype(a.dtype)


def mm_native_seq(a, b):
    """Products and every partial sum rounded to the operands' half format, k in order."""
    dt = a.dtype
    a32, b32 = up(a), up(b)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1]):
        p = rnd(a32[:, k:k + 1] * b32[k:k + 1, :], dt).astype(np.float32)
        acc = rnd(acc + p, dt).astype(np.float32)
    return acc.astype(dt)


def mm_bf16_products(a, b):
    """Products rounded to bfloat16 before a float32 accumulation."""
    p = rnd(up(a)[:, :, None] * up(b)[None, :, :], BF16).astype(np.float32)
    return p.sum(axis=1).astype(a.dtype)


def linear_f32(x, w, b=None):
    y = up(x) @ up(w).T
    return (y if b is None else y + up(b)).astype(x.dtype)


def linear_no_bias(x, w, b=None):
    return linear_f32(x, w)


def conv1d_f32(x, w, b=None, stride=1, padding=0, drop_tap=False):
    a, k = up(x), up(w)
    if drop_tap:
        k = k.copy()
        k[..., -1] = 0
    y = conv1d64(a, k, None if b is None else up(b), stride, padding)  # float32 einsum
    return y.astype(np.float32).astype(x.dtype)


def conv1d_drop_tap(x, w, b=None, stride=1, padding=0):
    return conv1d_f32(x, w, b, stride, padding, drop_tap=True)


def conv2d_f32(x, w, b=None, stride=1, padding=0):
    """im2col then a float32 GEMM (numpy's BLAS), one rounding to the input's format."""
    n, c, hh, ww = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(up(x), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    ho, wo = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    cols = np.stack([xp[:, :, i:i + ho, j:j + wo] for i in range(kh) for j in range(kw)], 2)
    cols = cols.reshape(n, c * kh * kw, ho * wo)
    y = np.einsum("ok,nkp->nop", up(w).reshape(o, -1), cols, optimize=True)
    y = y.reshape(n, o, ho, wo)
    return (y if b is None else y + up(b)[None, :, None, None]).astype(x.dtype)


def conv2d_native(x, w, b=None, stride=1, padding=0):
    """Each tap's product summed into a half-format accumulator (tap-major order)."""
    dt = x.dtype
    xp = np.pad(up(x), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    o, c, kh, kw = w.shape
    ho, wo = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    acc = np.zeros((x.shape[0], o, ho, wo), np.float32)
    w32 = up(w)
    for ci in range(c):
        for i in range(kh):
            for j in range(kw):
                p = xp[:, None, ci, i:i + ho, j:j + wo] * w32[None, :, ci, i, j, None, None]
                acc = rnd(acc + rnd(p, dt).astype(np.float32), dt).astype(np.float32)
    return acc.astype(dt)


# softmax family (rows along the last axis)
def softmax_f32(x, dim=-1):
    a = up(x)
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def softmax_no_max(x, dim=-1):
    e = np.exp(up(x))
    with np.errstate(invalid="ignore"):
        return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)


def softmax_native(x, dim=-1):
    """exp and the row sum in the input's half format."""
    dt = x.dtype
    a = up(x)
    e = rnd(np.exp(rnd(a - a.max(axis=-1, keepdims=True), dt).astype(np.float32)), dt)
    s = seq_sum(e, dt).astype(np.float32)
    return (e.astype(np.float32) / s[..., None]).astype(dt)


def log_softmax_f32(x, dim=-1):
    a = up(x)
    s = a - a.max(axis=-1, keepdims=True)
    return (s - np.log(np.exp(s).sum(axis=-1, keepdims=True))).astype(x.dtype)


def log_of_softmax(x, dim=-1):
    with np.errstate(divide="ignore"):
        return np.log(softmax_f32(x).astype(np.float32)).astype(x.dtype)


# norms
def ln_two_pass(x, shape, w=None, b=None, eps=1e-5, var=None, eps_out=False):
    """torch's CPU/CUDA layer norm for half inputs: float32 opmath, mean then centred
    variance (two passes), x_hat * w + b, one rounding to the input's format."""
    a = up(x)
    m = a.mean(axis=-1, keepdims=True)
    v = ((a - m) ** 2).mean(axis=-1, keepdims=True) if var is None else var(a)
    if eps_out:
        y = (a - m) / (np.sqrt(v) + np.float32(eps))
    else:
        y = (a - m) / np.sqrt(v + np.float32(eps))
    if w is not None:
        y = y * up(w)
    if b is not None:
        y = y + up(b)
    return y.astype(x.dtype)


def ln_welford(x, shape, w=None, b=None, eps=1e-5):
    a = up(x)
    mean, m2 = welford32(a)
    rstd = np.float32(1) / np.sqrt(m2 / np.float32(a.shape[-1]) + np.float32(eps))
    y = (a - mean[..., None]) * rstd[..., None]
    y = y if w is None else y * up(w)
    return (y if b is None else y + up(b)).astype(x.dtype)


def ln_unbiased(x, shape, w=None, b=None, eps=1e-5):
    n = x.shape[-1]
    return ln_two_pass(x, shape, w, b, eps, var=lambda a: ((a - a.mean(-1, keepdims=True)) ** 2)
                       .sum(-1, keepdims=True) / np.float32(n - 1))


def ln_eps_outside(x, shape, w=None, b=None, eps=1e-5):
    return ln_two_pass(x, shape, w, b, eps, eps_out=True)


def ln_one_pass(x, shape, w=None, b=None, eps=1e-5):
    return ln_two_pass(x, shape, w, b, eps, var=lambda a: np.maximum(
        (a * a).mean(-1, keepdims=True) - a.mean(-1, keepdims=True) ** 2, 0))


def ln_forgets_affine(x, shape, w=None, b=None, eps=1e-5):
    return ln_two_pass(x, shape, None, None, eps)


def ln_native_var(x, shape, w=None, b=None, eps=1e-5):
    """Mean and variance accumulated in the input's half format."""
    dt = x.dtype
    n = np.float32(x.shape[-1])
    return ln_two_pass(x, shape, w, b, eps, var=lambda a: (
        seq_sum(rnd((a - (seq_sum(a, dt).astype(np.float32) / n)[..., None]) ** 2, dt), dt)
        .astype(np.float32) / n)[..., None])


def rms_f32(x, shape, w=None, eps=None):
    a = up(x)
    e = np.float32(np.finfo(np.float32).eps if eps is None else eps)
    y = a / np.sqrt((a * a).mean(-1, keepdims=True) + e)
    return (y if w is None else y * up(w)).astype(x.dtype)


def rms_native(x, shape, w=None, eps=None):
    """Square, sum and scale in the input's half format."""
    dt = x.dtype
    a = up(x)
    e = np.float32(np.finfo(np.float32).eps if eps is None else eps)
    ms = seq_sum(rnd(a * a, dt), dt).astype(np.float32) / np.float32(a.shape[-1])
    r = rnd(np.float32(1) / np.sqrt(rnd(ms + e, dt).astype(np.float32)), dt).astype(np.float32)
    y = rnd(a * r[..., None], dt).astype(np.float32)
    return (y if w is None else y * up(w)).astype(dt)


def gn_two_pass(x, g, w=None, b=None, eps=1e-5, correction=0):
    a = up(x)
    n, c = a.shape[:2]
    xs = a.reshape(n, g, -1)
    m = xs.mean(-1, keepdims=True)
    v = ((xs - m) ** 2).sum(-1, keepdims=True) / np.float32(xs.shape[-1] - correction)
    y = ((xs - m) / np.sqrt(v + np.float32(eps))).reshape(a.shape)
    shp = (1, c) + (1,) * (a.ndim - 2)
    y = y if w is None else y * up(w).reshape(shp)
    return (y if b is None else y + up(b).reshape(shp)).astype(x.dtype)


def gn_unbiased(x, g, w=None, b=None, eps=1e-5):
    return gn_two_pass(x, g, w, b, eps, correction=1)


# attention and losses
def sdpa_f32(q, k, v, scale=None, missing_scale=False):
    s = np.float32(1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    sc = up(q) @ np.swapaxes(up(k), -1, -2)
    sc = sc if missing_scale else sc * s
    return (softmax_f32(sc) @ up(v)).astype(q.dtype)


def sdpa_no_scale(q, k, v):
    return sdpa_f32(q, k, v, missing_scale=True)


def sdpa_half_scores(q, k, v):
    """Scores accumulated in the half format (a float16 QK^T)."""
    dt = q.dtype
    sc = mm_native_seq(q[0], k[0].T).astype(np.float32)[None] * np.float32(1 / math.sqrt(
        q.shape[-1]))
    return (softmax_f32(sc) @ up(v)).astype(dt)


def ce_lse(x, t):
    a = up(x)
    m = a.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(a - m).sum(-1)) + m[:, 0]
    return np.asarray((lse - a[np.arange(a.shape[0]), t]).mean(), dtype=x.dtype)


def ce_no_shift(x, t):
    a = up(x)
    with np.errstate(over="ignore", invalid="ignore"):
        lse = np.log(np.exp(a).sum(-1))
    return np.asarray((lse - a[np.arange(a.shape[0]), t]).mean(), dtype=x.dtype)


def ce_sum(x, t):
    return np.asarray(ce_lse(x, t).astype(np.float32) * np.float32(x.shape[0]), dtype=x.dtype)


def tf32(a):
    """float32 -> TF32 (10 explicit mantissa bits, round to nearest even), as tensor cores
    read float32 operands under torch.backends.cuda.matmul.allow_tf32."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000
    return b.astype(np.uint32).view(np.float32)


def mm_tf32(a, b):
    return tf32(a) @ tf32(b)


def rms_eps_outside(x, shape, w=None, eps=None):
    a = up(x)
    e = np.float32(np.finfo(np.float32).eps if eps is None else eps)
    y = a / (np.sqrt((a * a).mean(-1, keepdims=True)) + e)
    return (y if w is None else y * up(w)).astype(x.dtype)


def ln_wrong_eps(x, shape, w=None, b=None, eps=1e-5):
    return ln_two_pass(x, shape, w, b, eps / 10)
