"""PyTorch's CPU autograd of layer_norm, rms_norm and group_norm against exactref.equivalents.torch's
backward references: every gradient element covered, in PyTorch's dtypes and shapes, for
every float dtype, with and without weight and bias, mixed bfloat16 data with float32
parameters, offset means, constant rows and n = 1."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")
F = torch.nn.functional

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
SHAPES = [((8, 64), (64,)), ((3, 7), (7,)), ((2, 3, 16), (3, 16)), ((5, 1), (1,)),
          ((4, 300), (300,))]


def _data(shape, dtype, rng, kind):
    v = rng.standard_normal(shape)
    if kind == "offset":
        v = 100 + 0.01 * v
    elif kind == "constant":
        v = np.broadcast_to(v.reshape(-1)[:1], shape).copy()
    elif kind == "wide":
        v = v * np.exp2(rng.integers(-6, 6, shape))
    return torch.from_numpy(v).to(dtype)


def _check(ref, names, grads, what):
    for name, t in zip(names, grads, strict=True):
        r = getattr(ref, name)
        assert r.rounded.dtype is er.dtype(t.dtype), (what, name)
        assert tuple(r.rounded.shape) == tuple(t.shape), (what, name)
        cov = r.covers(t)
        assert cov.all(), f"{what} {name}: {cov.summary()}"


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(map(str, s[0])))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("kind", ["random", "offset", "constant", "wide"])
def test_layer_norm_autograd_covered(dtype, shapes, kind):
    shape, ns = shapes
    rng = np.random.default_rng(zlib.crc32(repr((str(dtype), shapes, kind)).encode()))
    x = _data(shape, dtype, rng, kind).requires_grad_()
    g = torch.from_numpy(rng.standard_normal(shape)).to(dtype)
    for pdt in ((dtype, torch.float32) if dtype == torch.bfloat16 else (dtype,)):
        w = torch.from_numpy(rng.uniform(0.5, 2, ns)).to(pdt).requires_grad_()
        b = torch.from_numpy(rng.standard_normal(ns)).to(pdt).requires_grad_()
        y = F.layer_norm(x, ns, w, b)
        grads = torch.autograd.grad(y, (x, w, b), g)
        ref = ert.layer_norm.backward(x.detach(), g, ns, w.detach(), b.detach())
        _check(ref, ("grad_x", "grad_weight", "grad_bias"), grads, (kind, pdt))
    (gx,) = torch.autograd.grad(F.layer_norm(x, ns), (x,), g)
    _check(ert.layer_norm.backward(x.detach(), g, ns), ("grad_x",), (gx,), (kind, "no w"))


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(map(str, s[0])))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("kind", ["random", "constant", "wide"])
def test_rms_norm_autograd_covered(dtype, shapes, kind):
    shape, ns = shapes
    rng = np.random.default_rng(zlib.crc32(repr((str(dtype), shapes, kind, 1)).encode()))
    x = _data(shape, dtype, rng, kind).requires_grad_()
    g = torch.from_numpy(rng.standard_normal(shape)).to(dtype)
    w = torch.from_numpy(rng.uniform(0.5, 2, ns)).to(dtype).requires_grad_()
    gx, gw = torch.autograd.grad(F.rms_norm(x, ns, w), (x, w), g)
    _check(ert.rms_norm.backward(x.detach(), g, ns, w.detach()), ("grad_x", "grad_weight"),
           (gx, gw), kind)
    (gx,) = torch.autograd.grad(F.rms_norm(x, ns, eps=1e-6), (x,), g)
    _check(ert.rms_norm.backward(x.detach(), g, ns, eps=1e-6), ("grad_x",), (gx,), kind)


@pytest.mark.parametrize("shape,groups", [((3, 8, 5, 4), 4), ((2, 6, 7), 3), ((4, 4), 2),
                                          ((2, 32, 4, 4), 8)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("kind", ["random", "offset", "constant"])
def test_group_norm_autograd_covered(dtype, shape, groups, kind):
    rng = np.random.default_rng(zlib.crc32(repr((str(dtype), shape, kind, 2)).encode()))
    x = _data(shape, dtype, rng, kind).requires_grad_()
    g = torch.from_numpy(rng.standard_normal(shape)).to(dtype)
    C = shape[1]
    for pdt in ((dtype, torch.float32) if dtype == torch.bfloat16 else (dtype,)):
        w = torch.from_numpy(rng.uniform(0.5, 2, C)).to(pdt).requires_grad_()
        b = torch.from_numpy(rng.standard_normal(C)).to(pdt).requires_grad_()
        grads = torch.autograd.grad(F.group_norm(x, groups, w, b), (x, w, b), g)
        ref = ert.group_norm.backward(x.detach(), g, groups, w.detach(), b.detach())
        _check(ref, ("grad_x", "grad_weight", "grad_bias"), grads, (kind, pdt))


def test_tolerance_is_tight_for_float32_on_ordinary_rows():
    """The model's width where nothing cancels: a few hundred ulps at most for grad_x of
    float32 rms norm (the saved rstd's band and the dx = gh r - x r**3 mean(gh x) sum)."""
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal((8, 64))).float()
    g = torch.from_numpy(rng.standard_normal((8, 64))).float()
    ref = ert.rms_norm.backward(x, g, (64,))
    assert float(np.median(ref.grad_x.tolerance_ulps())) < 200


@pytest.mark.parametrize("op", ["layer", "rms", "group"])
def test_overflow_in_the_compute_type_covered(op):
    """float32 rows near the largest finite value: the sums overflow in float32 and torch's
    gradients are NaN; the model's intervals reach the infinities there and allow NaN."""
    x = torch.tensor([[3e38, -3e38, 1e38, 2.0]])
    g = torch.tensor([[1.0, 2.0, -1.0, 0.5]])
    w = torch.ones(4, requires_grad=True)
    xx = x.clone().requires_grad_()
    if op == "layer":
        y, ref = F.layer_norm(xx, (4,), w), ert.layer_norm.backward(x, g, (4,), w.detach())
    elif op == "rms":
        y, ref = F.rms_norm(xx, (4,), w), ert.rms_norm.backward(x, g, (4,), w.detach())
    else:
        xx = x.reshape(1, 4, 1).clone().requires_grad_()
        g = g.reshape(1, 4, 1)
        y = F.group_norm(xx, 2, w)
        ref = ert.group_norm.backward(x.reshape(1, 4, 1), g, 2, w.detach())
    gx, gw = torch.autograd.grad(y, (xx, w), g)
    assert torch.isnan(gx).any() or torch.isnan(gw).any()
    _check(ref, ("grad_x", "grad_weight"), (gx, gw), op)
    assert np.isfinite(ref.grad_x.rounded.numpy()).all()  # the exact gradient is finite


def _sweep(seed):
    """One random case: op, dtype, shape, data scale and offset, weight and bias or not."""
    rng = np.random.default_rng(seed)
    op = ["layer", "rms", "group"][seed % 3]
    dtype = DTYPES[int(rng.integers(0, 4))]
    nd = int(rng.integers(2, 4))
    shape = tuple(int(v) for v in rng.integers(1, 9, nd))
    if op == "group":
        shape = (shape[0], 2 * shape[1]) + shape[2:]
    v = rng.standard_normal(shape) * 2.0 ** int(rng.integers(-4, 5))
    v = v + float(rng.choice([0.0, 1.0, 50.0]))
    x = torch.from_numpy(v).to(dtype).requires_grad_()
    g = torch.from_numpy(rng.standard_normal(shape)).to(dtype)
    ns = shape[1:] if op != "group" else None
    pshape = ns if op != "group" else (shape[1],)
    w = torch.from_numpy(rng.uniform(0.25, 4, pshape)).to(dtype).requires_grad_()
    b = torch.from_numpy(rng.standard_normal(pshape)).to(dtype).requires_grad_()
    if op == "layer":
        y, ref = F.layer_norm(x, ns, w, b), ert.layer_norm.backward(x.detach(), g, ns,
                                                                    w.detach(), b.detach())
        names, ins = ("grad_x", "grad_weight", "grad_bias"), (x, w, b)
    elif op == "rms":
        y, ref = F.rms_norm(x, ns, w), ert.rms_norm.backward(x.detach(), g, ns, w.detach())
        names, ins = ("grad_x", "grad_weight"), (x, w)
    else:
        y = F.group_norm(x, 2, w, b)
        ref = ert.group_norm.backward(x.detach(), g, 2, w.detach(), b.detach())
        names, ins = ("grad_x", "grad_weight", "grad_bias"), (x, w, b)
    _check(ref, names, torch.autograd.grad(y, ins, g), (seed, op, dtype, shape))


@pytest.mark.parametrize("seed", range(12))
def test_random_cases_covered(seed):
    _sweep(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12, 300))
def test_random_cases_covered_sweep(seed):
    _sweep(seed)
