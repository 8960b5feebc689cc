"""PyTorch equivalents of torch.nn.functional.linear, conv1d and conv2d on CPU (PyTorch 2.13,
measured on an AVX512 AMD EPYC, ``torch.backends.cpu.get_cpu_capability() == "AVX512"``).

* **Kernels** (``torch._C._select_conv_backend``): float32 and bfloat16 convolutions run
  oneDNN (``Mkldnn``: direct or im2col + GEMM, any order); float64 and float16 run PyTorch's
  ``Slow2d`` (im2col + a BLAS GEMM, ``output`` initialised with the bias); depthwise, strided
  and 1-D alike. ``linear`` is ``addmm(bias, x, weight.T)`` on the flattened input (BLAS for
  float32/float64; oneDNN or PyTorch's GEMM for the half formats).
* **Accumulation**: float16 and bfloat16 accumulate in float32 and round once, the bias
  included (measured: a bias that brings the float32 sum to a tie rounds as the exact value
  does; a sum rounded to the dtype before the bias would not). float32 and float64 accumulate
  in their own format. The order is free: ``order="any"``, bias first or last.
* **Padding and specials**: the padding is zeros. Where an infinite or NaN weight meets a
  padded position, ``Slow2d`` multiplies the zero (``0 * inf``: NaN), but oneDNN skips padded
  positions and returns the sum of the in-bounds terms (``48`` where ``Slow2d`` gives NaN).
  float64 always runs ``Slow2d``; float32 runs oneDNN where PyTorch's ``use_mkldnn`` heuristic
  picks it (a batch of more than one, ``groups > 1``, a kernel above 3x3, a stride or
  dilation, or more than 20480 input elements: one small 3x3 image runs ``Slow2d``); bfloat16
  runs oneDNN on this CPU, ``Slow2d`` on CPUs without its bfloat16 kernels; float16 runs
  ``Slow2d`` here, oneDNN on CPUs with AVX512-FP16. The references of float32, float16 and
  bfloat16 allow both; float64's only NaN.
* **Subnormal inputs, bfloat16**: oneDNN's bfloat16 kernels multiply with AVX512_BF16's
  ``VDPBF16PS``, which treats subnormal inputs as zero (Intel's SDM: it does not consult
  MXCSR; denormal inputs are zero, denormal outputs flushed). Measured: a conv2d of inputs
  ``2**-133`` (subnormal in bfloat16) with weights ``2**10`` gives 0 where the exact sum is the
  normal number ``1.35e-35``; an infinite weight times ``2**-133`` gives NaN; linear layers do
  the same where oneDNN runs them (64 x 64, not 4 x 64 x 8). The bfloat16 references allow the
  sum with the inputs' subnormals flushed to zero of their sign (the bias keeps its own: it is
  added in float32). float32 and float16 keep subnormals.
* **Not modelled**: integer and complex dtypes (PyTorch has CPU kernels for int32, int64 and
  complex convolutions and linear layers; exactref's ``linear`` and ``conv`` are real float
  ops, so these raise NotImplementedError), ``padding_mode`` other than zeros (a
  ``torch.nn.Conv2d`` option that pads before calling conv2d), and Winograd or FFT algorithms
  (none was seen: every output measured, random and adversarial, was covered by the
  any-order model; a Winograd kernel's error is not bounded by it).

>>> import torch
>>> import exactref.equivalents.torch_linalg as etl
>>> x = torch.randn(2, 16, 9, 9, dtype=torch.bfloat16)
>>> w = torch.randn(32, 16, 3, 3, dtype=torch.bfloat16)
>>> b = torch.randn(32, dtype=torch.bfloat16)
>>> out = torch.nn.functional.conv2d(x, w, b, stride=2, padding=1)
>>> etl.conv2d(x, w, b, stride=2, padding=1).covers(out).all()
True
"""

from __future__ import annotations

import numpy as np

from .. import linalg
from .._array import Array
from .._formats import FORMATS
from ..linalg import BoundResult
from ..ops import op_names
from ._common import operand
from ._torch_records import contract, data

_HALF = ("float16", "bfloat16")


def _compute(fmt):
    return FORMATS["float32"] if fmt.name in _HALF else None


def _operands(name, x, weight, bias, x_label):
    X, W = operand(x, x_label), operand(weight, "weight")
    B = operand(bias, "bias") if bias is not None else None
    for o in (X, W, B):
        if o is not None and o.is_scalar:
            raise TypeError(f"{name}(): argument '{o.label}' must be Tensor, not "
                            f"{type(o.scalar).__name__} (PyTorch's error); pass a tensor")
    fmt = X.array.dtype
    if W.array.dtype is not fmt or (B is not None and B.array.dtype is not fmt):
        names = [(o.label, o.array.dtype.name) for o in (X, W, B) if o is not None]
        raise TypeError(f"{name}: expected every operand to have one dtype, got "
                        f"{', '.join(f'{n} {d}' for n, d in names)} (PyTorch raises: Input "
                        f"type and weight type should be the same); convert them")
    if fmt.kind != "float":
        raise NotImplementedError(
            f"{name}: PyTorch 2.13 has a CPU kernel for {fmt.name}, but exactref models {name} "
            f"for real float dtypes only (float64, float32, float16, bfloat16)")
    return X.array, W.array, (B.array if B is not None else None), fmt


def linear(input, weight, bias=None):  # noqa: A002
    """torch.nn.functional.linear(input, weight, bias) on CPU: each element the exact
    ``input @ weight.T + bias`` rounded once, covering any accumulation order in the dtype
    (float32 for float16 and bfloat16), the bias first or last."""
    x, w, b, fmt = _operands("linear", input, weight, bias, "input")

    def run(x, w):
        return linalg.linear(x, w, b, compute=_compute(fmt), **contract(linear))

    return _flushed_inputs(run, x, w, fmt, linear.__name__)


def _conv_eq(name, nd, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    x, w, b, fmt = _operands(name, input, weight, bias, "input")
    fn = linalg.conv1d if nd == 1 else linalg.conv2d

    def run(x, w):
        # (the padded taps as the zeros; the dtypes oneDNN skips them for are widened below)
        r = fn(x, w, b, stride, padding, dilation, groups, compute=_compute(fmt),
               padding_taps="zeros", **contract(name))
        # the dtypes oneDNN convolves on CPU: it skips the padded positions
        if fmt.name in data(name, "skips_padding", ()):
            return _skipped_padding(r, nd, x, w, b, stride, padding, dilation, groups, fmt,
                                    contract(name))
        return r

    return _flushed_inputs(run, x, w, fmt, name)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """torch.nn.functional.conv1d on CPU (zero padding): the exact sums rounded once, any
    order, float32 accumulation for the half formats. For float32, float16 and bfloat16, an
    infinite or NaN weight that meets the padding may give NaN (``Slow2d``: ``0 * inf``) or
    the sum of the in-bounds terms (oneDNN skips the padding); for float64, NaN."""
    return _conv_eq("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """torch.nn.functional.conv2d on CPU (zero padding): as :func:`conv1d`, in two
    dimensions."""
    return _conv_eq("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# --------------------------------------------------- subnormal inputs flushed (oneDNN bf16)
def _flush(arr: Array):
    """``arr`` with its subnormal values replaced by zeros of their sign, or None if it has
    none."""
    v = np.asarray(arr.numpy()).astype(np.float64)
    sub = (v != 0) & (np.abs(v) < arr.dtype.component.smallest_normal)
    if not sub.any():
        return None
    v = np.where(sub, np.copysign(0.0, v), v)
    return Array(v.astype(arr.dtype.np_dtype), arr.dtype)


def _flushed_inputs(run, x: Array, w: Array, fmt, op):
    """``run(x, w)``; for bfloat16 also ``run`` of the operands with their subnormals flushed
    to zero, both allowed: oneDNN's bfloat16 kernels multiply with AVX512_BF16's VDPBF16PS,
    which treats subnormal inputs as zero (an infinite weight times a flushed subnormal input
    is NaN). The bias is added in float32 and keeps its subnormals. (The dtypes: the record's
    ``subnormals_as_zero`` for ``op``.)"""
    r = run(x, w)
    if fmt.name not in data(op, "subnormals_as_zero", ()):
        return r
    fx, fw = _flush(x), _flush(w)
    if fx is None and fw is None:
        return r
    alt = run(fx if fx is not None else x, fw if fw is not None else w)

    def bounds():
        out = []
        for (lo, hi, nan, *_), (lo2, hi2, nan2, *_) in zip(r._bounds(), alt._bounds(),
                                                           strict=True):
            out.append((np.fmin(lo, lo2), np.fmax(hi, hi2), nan | nan2, r.terms_sum))
        return out

    res = BoundResult(r.rounded, bounds, op=r.op,
                      models=tuple(r.models) + ("oneDNN bfloat16: subnormal inputs treated as "
                                                "zero (VDPBF16PS)",), details=r.details)
    res.inputs = r.inputs
    return res


# ------------------------------------------------------------- padding skipped (oneDNN)
def _skipped_padding(r, nd, x: Array, w: Array, b, stride, padding, dilation, groups, fmt,
                     model):
    """``r`` widened where a non-finite weight meets a padded position: there oneDNN's kernels
    return the exact sum of the in-bounds terms (rounded as any in-model sum), and the
    explicit zeros of the other kernels give NaN; both are allowed."""
    wv = np.asarray(w.numpy()).astype(np.float64)
    bad_w = ~np.isfinite(wv)
    if not bad_w.any():
        return r
    details = r.details
    pads = details["padding"]
    if not any(p for pair in pads for p in pair):
        return r
    xv = np.asarray(x.numpy()).astype(np.float64)
    batched = xv.ndim == nd + 2
    if not batched:
        xv = xv[None]
    if nd == 1:  # as 2-D of height 1
        xv, wv, bad_w = xv[:, :, None], wv[:, :, None], bad_w[:, :, None]
    st = (1,) * (2 - nd) + tuple(details["stride"])
    dl = (1,) * (2 - nd) + tuple(details["dilation"])
    pd = [(0, 0)] * (2 - nd) + [tuple(p) for p in pads]
    n, cin, h, wd = xv.shape
    cout, cg, kh, kw = wv.shape
    ng = cout // groups
    inside = np.pad(np.ones((h, wd), bool), pd)  # in-bounds positions of the padded plane
    shape = tuple(r.rounded.shape) if batched else (1,) + tuple(r.rounded.shape)
    oh, ow = (1, shape[-1]) if nd == 1 else shape[-2:]
    xp = np.pad(xv, [(0, 0), (0, 0)] + pd)
    bv = np.asarray(b.numpy()).astype(np.float64) if b is not None else None
    hits = []
    for o in range(cout):
        kk = np.argwhere(bad_w[o].any(axis=0))  # (kh, kw) of a non-finite weight
        if not len(kk):
            continue
        g = o // ng
        for i in range(oh):
            for j in range(ow):
                rows = i * st[0] + kk[:, 0] * dl[0]
                cols = j * st[1] + kk[:, 1] * dl[1]
                if inside[rows, cols].all():
                    continue
                a_ = np.arange(kh)[:, None] * dl[0] + i * st[0]
                e_ = np.arange(kw)[None, :] * dl[1] + j * st[1]
                keep = inside[a_, e_]  # (kh, kw)
                xs = xp[:, g * cg:(g + 1) * cg, a_, e_][:, :, keep]  # (n, cg, m)
                ws = wv[o][:, keep]  # (cg, m)
                hits.append((o, i, j, xs.reshape(n, -1), ws.reshape(1, -1)))
    if not hits:
        return r
    lo_s, hi_s, at = [], [], []
    for o, i, j, xs, ws in hits:
        bias = bv[o:o + 1] if bv is not None else None
        sub = linalg.linear(Array(xs.astype(fmt.np_dtype), fmt), Array(ws.astype(fmt.np_dtype),
                           fmt), Array(bias.astype(fmt.np_dtype), fmt) if bias is not None
                           else None, compute=_compute(fmt), **model)
        lo, hi, *_ = sub._bounds()[0]
        lo_s.append(lo[:, 0])
        hi_s.append(hi[:, 0])
        at.append((o, i, j))
    base = r._bounds

    def bounds():
        out = []
        for lo, hi, nan, *_ in base():
            lo, hi, nan = (np.array(v).reshape(shape if nd == 2 else shape[:2] + (1,)
                                               + shape[2:]) for v in (lo, hi, nan))
            for (o, i, j), l_, h_ in zip(at, lo_s, hi_s, strict=True):
                lo[:, o, i, j] = np.fmin(lo[:, o, i, j], l_)
                hi[:, o, i, j] = np.fmax(hi[:, o, i, j], h_)
                nan[:, o, i, j] = True
            out.append(tuple(v.reshape(r.rounded.shape) for v in (lo, hi, nan))
                       + (r.terms_sum,))
        return out

    res = BoundResult(r.rounded, bounds, op=r.op,
                      models=tuple(r.models) + ("oneDNN: an infinite or NaN weight that meets "
                                                "the padding is skipped",),
                      details=r.details)
    res.inputs = r.inputs
    return res

__all__ = [n for n in op_names() if n in globals()]
