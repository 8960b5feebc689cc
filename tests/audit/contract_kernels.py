"""Kernels for the contract tests (tests/audit/test_contract_*.py): what real libraries do
that exactref's defaults do not assume, written with numpy so that each is exactly known."""

import ml_dtypes
import numpy as np


def _ftz(v):
    """Subnormals of v's own format flushed to zero (signs kept): DAZ on the way in, FTZ on
    the way out, as TensorFlow's CPU kernels set MXCSR (and XLA's GPU kernels do)."""
    v = np.asarray(v)
    if v.dtype.kind != "f" and v.dtype != ml_dtypes.bfloat16:
        return v
    tiny = ml_dtypes.finfo(v.dtype).smallest_normal if v.dtype == ml_dtypes.bfloat16 else \
        np.finfo(v.dtype).smallest_normal
    wide = v.astype(np.float64)
    return np.where((wide != 0) & (np.abs(wide) < float(tiny)), np.copysign(0.0, wide),
                    wide).astype(v.dtype)


def _same(x, y):
    """Both operands in x's format (the audit's same-format groups)."""
    return np.asarray(x), np.asarray(y).astype(np.asarray(x).dtype)


def add_tf(x, y):
    """float32 add with DAZ and FTZ: subnormal inputs read as zeros, subnormal sums flushed."""
    x, y = _same(x, y)
    return _ftz(_ftz(x) + _ftz(y))


def multiply_tf(x, y):
    """float32 multiply with DAZ and FTZ."""
    x, y = _same(x, y)
    with np.errstate(all="ignore"):
        return _ftz(_ftz(x) * _ftz(y))


def exp_tf(x):
    """exp with DAZ and FTZ: numpy's float32 exp (within the mainstream bound), flushed."""
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return _ftz(np.exp(_ftz(x).astype(np.float64)).astype(x.dtype))


def sum_tf(x, axis=-1):
    """A sum over the last axis with DAZ and FTZ: flushed inputs, a float64 sum rounded once,
    flushed output."""
    x = np.asarray(x)
    return _ftz(_ftz(x).astype(np.float64).sum(axis=axis).astype(x.dtype))


def sum_bf16(x, axis=-1):
    """A sum accumulated in bfloat16, left to right: right under compute='bfloat16', a bug
    where the audit's default (float32 accumulation for the half formats) holds."""
    x = np.moveaxis(np.asarray(x), axis, -1)
    acc = np.zeros(x.shape[:-1], dtype=ml_dtypes.bfloat16)
    for k in range(x.shape[-1]):
        acc = (acc.astype(np.float32) + x[..., k].astype(np.float32)).astype(ml_dtypes.bfloat16)
    return acc.astype(x.dtype)


def softmax_row_bug(x, axis=-1):
    """A correct softmax except in the rows whose first element is negative: their largest
    output is two floats too large (a bug that depends on the row's contents, so that the row
    alone reproduces it)."""
    x = np.asarray(x)
    w = x.astype(np.float64)
    e = np.exp(w - w.max(axis=axis, keepdims=True))
    out = (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)
    for r in range(x.shape[0]):
        if w[r, 0] < 0:
            j = int(np.argmax(w[r]))
            for _ in range(2):
                out[r, j] = np.nextafter(out[r, j], np.asarray(np.inf, out.dtype))
    return out


def layer_norm_row_bug(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """A float64 layer norm, correct except that the last row's variance is unbiased (n - 1):
    the bug shows in that row only."""
    x = np.asarray(x)
    w = x.astype(np.float64)
    mean = w.mean(axis=-1, keepdims=True)
    var = ((w - mean) ** 2).mean(axis=-1, keepdims=True)
    flat = var.reshape(-1)
    n = w.shape[-1]
    if n > 1:
        flat[-1] = flat[-1] * n / (n - 1)
    y = (w - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * np.asarray(weight, np.float64)
    if bias is not None:
        y = y + np.asarray(bias, np.float64)
    return y.astype(x.dtype)


def matmul_f16_products(a, b):
    """A float32 matmul whose products are rounded to float16 before a float64 sum: wrong in
    every element, so one row of a and one column of b reproduce it."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(all="ignore"):
        prods = (a[:, :, None].astype(np.float16) * b[None, :, :].astype(np.float16))
    return prods.astype(np.float64).sum(axis=1).astype(a.dtype)
