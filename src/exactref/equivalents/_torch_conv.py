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
  padded position, ``Slow2d`` (float64 always; float32 and float16 small problems: one input
  channel of 3x3, say) multiplies the zero (``0 * inf``: NaN), but oneDNN's kernels (float32
  and bfloat16 at real sizes: 8 channels and up, measured) skip padded positions and return the
  sum of the in-bounds terms (``14.31`` where ``Slow2d`` gives NaN). The references of float32,
  float16 and bfloat16 allow both (float16 runs oneDNN too on CPUs with AVX512-FP16); float64's
  only NaN.
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

from .._array import Array
from .._formats import FORMATS
from ..linalg import _conv
from ..linalg._bounds import BoundResult
from ._common import operand

__all__ = ["linear", "conv1d", "conv2d"]

_HALF = ("float16", "bfloat16")
#: the dtypes oneDNN convolves on CPU (it skips padded positions)
_SKIPS = ("float32", "float16", "bfloat16")


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
    r = _conv.linear(x, w, b, compute=_compute(fmt), order="any")
    return r


def _conv_eq(name, nd, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    x, w, b, fmt = _operands(name, input, weight, bias, "input")
    fn = _conv.conv1d if nd == 1 else _conv.conv2d
    r = fn(x, w, b, stride, padding, dilation, groups, compute=_compute(fmt), order="any")
    if fmt.name in _SKIPS:
        return _skipped_padding(r, nd, x, w, b, stride, padding, dilation, groups, fmt)
    return r


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


# ----------------------------------------------------------- padding skipped (oneDNN bf16)
def _skipped_padding(r, nd, x: Array, w: Array, b, stride, padding, dilation, groups, fmt):
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
        sub = _conv.linear(Array(xs.astype(fmt.np_dtype), fmt), Array(ws.astype(fmt.np_dtype),
                           fmt), Array(bias.astype(fmt.np_dtype), fmt) if bias is not None
                           else None, compute=_compute(fmt), order="any")
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
