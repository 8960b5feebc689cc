"""softmax and log_softmax backward against PyTorch's autograd on CPU: the equivalents
(``exactref.equivalents.torch.softmax.backward``) cover every element of torch's gradients in
float64, float32, bfloat16 and float16, over the last dimension and another, on random rows
and adversarial ones (equal rows, ``-inf`` masks, g zero or all equal, large logits); torch's
NaN for a row with a ``+inf`` entry; er's own model covers torch's float32 and float64."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

FMTS = ["float64", "float32", "bfloat16", "float16"]
OPS = ["softmax", "log_softmax"]


def _rows(fmt, rng, shape):
    x = rng.standard_normal(shape) * 4
    g = rng.standard_normal(shape)
    x[0, 0] = -np.inf                    # a mask
    x[1] = 2.5                           # an equal row
    g[2] = 0.0                           # g zero
    g[3] = 0.75                          # g all equal
    x[4] *= 30                           # large logits
    return er.asarray(x, fmt).torch(), er.asarray(g, fmt).torch()


def _torch_grad(op, x, g, dim):
    x = x.clone().requires_grad_()
    (gx,) = torch.autograd.grad(getattr(torch, op)(x, dim), x, g)
    return gx


@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("op", OPS)
def test_equivalent_covers_torch(op, fmt, dim):
    rng = np.random.default_rng(zlib.crc32(f"{op}{fmt}{dim}".encode()))
    shape = (8, 40) if dim == -1 else (40, 8)
    x, g = _rows(fmt, rng, (8, 40))
    if dim == 0:
        x, g = x.T.contiguous(), g.T.contiguous()
    assert tuple(x.shape) == shape
    got = _torch_grad(op, x, g, dim)
    ref = getattr(ert, op).backward(x, g, dim)
    assert ref.rounded.grad_x.dtype is er.dtype(got.dtype)
    cov = ref.covers(got)
    assert cov.all(), f"{op} {fmt} dim={dim}: {cov.summary()}"
    if er.dtype(fmt).bits <= 16:  # a tight check: most elements allow at most one ulp
        assert np.median(ref.grad_x.tolerance_ulps()) <= 1
    # able to fail: softmax's formula without the y factor, log_softmax's without exp
    y = getattr(torch, op)(x, dim)
    s = (g * y).sum(dim, keepdim=True) if op == "softmax" else g.sum(dim, keepdim=True)
    wrong = g - s if op == "softmax" else g - y * s
    assert not ref.covers(wrong).all()


@pytest.mark.parametrize("op", OPS)
def test_torch_gives_nan_for_an_inf_row(op):
    x = torch.tensor([[1.0, float("inf"), 2.0], [1.0, 2.0, 3.0]])
    g = torch.tensor([[1.0, 2.0, 3.0], [1.0, 0.0, 0.0]])
    got = _torch_grad(op, x, g, 1)
    assert torch.isnan(got[0]).all()
    assert getattr(ert, op).backward(x, g, 1).covers(got).all()
    # er gives the limit: softmax 0, log_softmax g_p - sum(g) at the +inf entry, g elsewhere
    want = [0.0, 0.0, 0.0] if op == "softmax" else [1.0, -4.0, 3.0]
    assert getattr(er, op).backward(x, g, dim=1).rounded.grad_x.tolist()[0] == want


@pytest.mark.parametrize("fmt", ["float64", "float32"])
@pytest.mark.parametrize("op", OPS)
def test_own_model_covers_torch(op, fmt):
    """torch's float32 and float64 kernels are the model's implementations (SLEEF's exp)."""
    rng = np.random.default_rng(zlib.crc32(f"own{op}{fmt}".encode()))
    x, g = _rows(fmt, rng, (8, 40))
    got = _torch_grad(op, x, g, 1)
    cov = getattr(er, op).backward(x, g, dim=1, accuracy="sleef_u10").covers(got)
    assert cov.all(), cov.summary()
