"""exactref.equivalents.torch's backward references against PyTorch's autograd: grad_x and
grad_y of ``x * y`` and ``torch.add(x, y, alpha=...)`` for broadcast shapes, same and mixed
dtypes, real and complex, random values with zeros of both signs; every element covered, with
PyTorch's dtypes and shapes."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

SHAPES = [((3, 1), (1, 4)), ((4,), (3, 4)), ((2, 3, 4), (4,)), ((), (3,)), ((5,), (5,)),
          ((1, 5), (5,)), ((6, 7), (6, 1)), ((1, 300), (64, 300))]
DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128",
          ("float16", "float32"), ("float32", "float64"), ("float32", "complex64"),
          ("bfloat16", "float16")]


def _rand(fmt, shape, rng):
    n = int(np.prod(shape)) if shape else 1
    v = rng.standard_normal(n) * 2.0 ** rng.integers(-3, 4, n)
    v[rng.random(n) < 0.1] = 0.0
    v[rng.random(n) < 0.05] = -0.0
    if fmt.kind == "complex":
        w = rng.standard_normal(n)
        w[rng.random(n) < 0.1] = -0.0
        z = np.empty(n, np.complex128)
        z.real, z.imag = v, w
        v = z
    return er.asarray(v.reshape(shape), fmt).torch()


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtypes", DTYPES, ids=str)
def test_backward_covered(dtypes, shapes):
    da, db = (dtypes, dtypes) if isinstance(dtypes, str) else dtypes
    fa, fb = er.dtype(da), er.dtype(db)
    rng = np.random.default_rng(zlib.crc32(repr((dtypes, shapes)).encode()))
    ops = [("mul", None), ("add", 1), ("add", 0.3), ("add", -2)]
    if "complex" in da + db:
        ops.append(("add", 0.5 - 1j))
    for op, alpha in ops:
        x = _rand(fa, shapes[0], rng).requires_grad_()
        y = _rand(fb, shapes[1], rng).requires_grad_()
        out = x * y if op == "mul" else torch.add(x, y, alpha=alpha)
        g = _rand(er.dtype(out.dtype), tuple(out.shape), rng)
        gx, gy = torch.autograd.grad(out, (x, y), g)
        if op == "mul":
            ref = ert.multiply_backward(x.detach(), y.detach(), g)
        else:
            ref = ert.add_backward(x.detach(), y.detach(), g, alpha=alpha)
        for name, r, t in (("grad_x", ref.grad_x, gx), ("grad_y", ref.grad_y, gy)):
            assert r.rounded.dtype is er.dtype(t.dtype), (op, name)
            assert tuple(r.rounded.shape) == tuple(t.shape), (op, name)
            cov = r.covers(t)
            assert cov.all(), f"{op} alpha={alpha} {name}: {cov.summary()}"


def test_scalar_operand_has_no_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (gx,) = torch.autograd.grad(x * 2.5, (x,), torch.ones(2))
    ref = ert.multiply_backward(x.detach(), 2.5, torch.ones(2))
    assert ref.grad_y is None and ref.grad_x.covers(gx).all()
    h = torch.tensor([1.0, 3.0], dtype=torch.float16, requires_grad=True)
    g = torch.tensor([0.1, 0.7], dtype=torch.float16)
    (gh,) = torch.autograd.grad(torch.add(h, 1.0, alpha=1 / 3) * (1 / 3), (h,), g)
    del gh  # a chain of two ops: checked by parts below
    (gy,) = torch.autograd.grad(torch.add(torch.zeros(2, dtype=torch.float16), h,
                                          alpha=1 / 3), (h,), g)
    assert ert.add_backward(torch.zeros(2, dtype=torch.float16), h.detach(), g,
                            alpha=1 / 3).grad_y.covers(gy).all()


def test_grad_shape_checked():
    with pytest.raises(ValueError, match="output's shape"):
        ert.multiply_backward(torch.ones(3), torch.ones(3), torch.ones(2))
