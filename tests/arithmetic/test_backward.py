"""er.add.backward and er.multiply.backward against PyTorch's autograd, and the spec's rules for
signs of zero in gradients.

With operands and gradients whose products and sums are exact in the dtype (halves, ones and
twos, a few copies), every correct implementation gives the one exact answer, so exactref's
gradients must equal PyTorch's bit for bit, signs of zero included: a one-copy element of an
operand with the output's number of dimensions is a single product and takes its IEEE sign;
every other element is a sum, which starts from +0 (-0 toward -inf, exactref only).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")

SHAPES = [((3, 1), (1, 4)), ((4,), (3, 4)), ((2, 3, 2), (2,)), ((5,), (5,)), ((1, 5), (5,)),
          ((2, 3), (2, 1)), ((), (3,)), ((3,), ())]
REAL = ["float32", "float64", "float16", "bfloat16"]
VALUES = np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0])


def _exactish(fmt, shape, rng):
    """Values whose products and small sums are exact in every dtype here."""
    n = int(np.prod(shape)) if shape else 1
    v = VALUES[rng.integers(0, len(VALUES), n)]
    if er.dtype(fmt).kind == "complex":
        w = VALUES[rng.integers(0, len(VALUES), n)]
        z = np.empty(n, dtype=np.complex128)
        z.real, z.imag = v, w
        v = z
    return er.asarray(v.reshape(shape), fmt).torch()


def _bits(t):
    """A tensor as (value, sign) pairs per part, for a bit-for-bit comparison."""
    a = t.detach()
    if a.is_complex():
        a = torch.view_as_real(a.to(torch.complex128))
    a = a.to(torch.float64)
    return list(zip(a.reshape(-1).tolist(), torch.signbit(a).reshape(-1).tolist(),
                    strict=True))


def _same(er_array, t, signs=True):
    a, b = _bits(er_array.torch()), _bits(t)
    if not signs:
        return [v for v, _ in a] == [v for v, _ in b]
    return a == b


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", REAL + ["complex64"])
@pytest.mark.parametrize("op,alpha", [("mul", None), ("add", 1), ("add", -2), ("add", 0.5)])
def test_backward_equals_autograd(dtype, shapes, op, alpha):
    rng = np.random.default_rng(zlib.crc32(repr((dtype, shapes, op, alpha)).encode()))
    # PyTorch multiplies a complex gradient by alpha in complex arithmetic (alpha + 0j), so a
    # zero part's sign may differ there (test_complex_gradient_times_real_alpha pins it)
    signs = not (dtype.startswith("complex") and op == "add" and alpha != 1)
    for _ in range(4):
        x = _exactish(dtype, shapes[0], rng).requires_grad_()
        y = _exactish(dtype, shapes[1], rng).requires_grad_()
        out = x * y if op == "mul" else torch.add(x, y, alpha=alpha)
        g = _exactish(dtype, tuple(out.shape), rng)
        gx, gy = torch.autograd.grad(out, (x, y), g)
        if op == "mul":
            ref = er.multiply.backward(x.detach(), y.detach(), g)
        else:
            ref = er.add.backward(x.detach(), y.detach(), g, alpha=alpha)
        assert ref.rounded.grad_x.dtype is er.dtype(dtype)
        assert tuple(ref.rounded.grad_x.shape) == tuple(x.shape)
        assert tuple(ref.rounded.grad_y.shape) == tuple(y.shape)
        assert _same(ref.rounded.grad_x, gx), (x, y, g, gx, ref.rounded.grad_x)
        assert _same(ref.rounded.grad_y, gy, signs), (x, y, g, gy, ref.rounded.grad_y)
        assert ref.grad_x.covers(gx).all()
        assert ref.grad_y.covers(gy).all() or not signs


def _f32(v):
    return er.asarray(v, "float32")


def _neg(arr, *index):
    return arr.value(index).negative


def test_one_copy_takes_the_products_sign():
    """x and y of the output's shape: each gradient element is one product, -0 * 1 is -0."""
    x, y = _f32([1.0, -1.0]), _f32([-0.0, 0.0])
    g = _f32([1.0, 1.0])
    r = er.multiply.backward(x, y, g).rounded
    assert [_neg(r.grad_x, i) for i in range(2)] == [True, False]  # g * y: -0, +0
    r = er.add.backward(x, y, _f32([-0.0, 0.0])).rounded
    assert [_neg(r.grad_x, i) for i in range(2)] == [True, False]  # grad itself
    assert [_neg(r.grad_y, i) for i in range(2)] == [True, False]


def test_summed_elements_start_from_plus_zero():
    """Broadcast copies, or dimensions broadcasting adds in front: a sum, +0 from -0s."""
    col, row = _f32([[1.0], [2.0]]), _f32([-0.0, -0.0, -0.0])
    g = _f32([[1.0] * 3] * 2)
    r = er.multiply.backward(col, row, g).rounded
    assert r.grad_x.tolist() == [[0.0], [0.0]]
    assert not _neg(r.grad_x, 0, 0) and not _neg(r.grad_x, 1, 0)
    # one copy but fewer dimensions: PyTorch sums the leading dimension, so +0
    x, y = _f32([-0.0, 1.0]), _f32([[1.0, -0.0]])
    r = er.multiply.backward(x, y, _f32([[1.0, 1.0]])).rounded
    assert not _neg(r.grad_x, 0) and not _neg(r.grad_x, 1)
    # toward -inf, an exact zero sum is -0
    r = er.multiply.backward(col, row, g, rounding="toward_negative").rounded
    assert _neg(r.grad_x, 0, 0)


def test_scalar_operand_gets_no_gradient():
    g = er.multiply.backward(_f32([1.0, 2.0]), 3.0, _f32([1.0, 1.0]))
    assert g.rounded.grad_y is None and g.grad_y is None
    assert g.rounded.tolist() == [3.0, 3.0]
    g = er.add.backward(2.5, _f32([1.0, 2.0]), _f32([1.0, -1.0]), alpha=3)
    assert g.rounded.grad_x is None and g.rounded.tolist() == [3.0, -3.0]


def test_grad_must_have_the_output_shape():
    with pytest.raises(ValueError, match=r"output's shape \(2, 3\)"):
        er.multiply.backward(_f32([[1.0], [2.0]]), _f32([1.0, 2.0, 3.0]), _f32([1.0, 1.0]))


def test_gradient_sums_round_once():
    """Many copies: the sum of the products is exact, rounded once (PyTorch may differ)."""
    x = er.asarray([[1.0]], "float16")
    y = er.asarray([2048.0] + [1.0] * 8, "float16")
    g = er.asarray([[1.0] * 9], "float16")
    # 2048 + 8 ones: exact 2056, a float16 value (PyTorch's half sum also holds it)
    assert er.multiply.backward(x, y, g).rounded.grad_x.tolist() == [[2056.0]]
    y = er.asarray([2048.0] + [0.5] * 2, "float16")
    # 2048 + 0.5 + 0.5 = 2049: a tie in float16, to even 2048; one rounding, not two
    assert er.multiply.backward(x, y, er.asarray([[1.0] * 3], "float16")).rounded \
        .grad_x.tolist() == [[2048.0]]


def test_complex_alpha_zero_part_departure():
    """The spec's example: alpha=2, a gradient 1-0j gives grad_y 2-0j; PyTorch's 2+0j."""
    x = er.asarray([0j], "complex64")
    g = er.asarray(np.array([complex(1.0, -0.0)]), "complex64")
    r = er.add.backward(x, x, g, alpha=2).rounded.grad_y
    assert r.value(0).imag.negative
    xt = torch.zeros(1, dtype=torch.complex64, requires_grad=True)
    yt = torch.zeros(1, dtype=torch.complex64, requires_grad=True)
    (gy,) = torch.autograd.grad(torch.add(xt, yt, alpha=2), (yt,), g.torch())
    assert not torch.signbit(torch.view_as_real(gy))[0, 1]  # PyTorch: 2+0j


def test_complex_gradient_times_real_alpha():
    """PyTorch's add backward computes grad * alpha as a complex product (alpha becomes
    alpha + 0j), so grad 2-0j times alpha=0.5 has the imaginary part 2*0 + -0*0.5 = +0 in
    PyTorch; exactref's coefficient rule gives -0*0.5 = -0 (the mathematical answer)."""
    g = er.asarray(np.array([complex(2.0, -0.0)]), "complex64")
    x = er.asarray([0j], "complex64")
    r = er.add.backward(x, x, g, alpha=0.5).rounded.grad_y
    assert r.tolist() == [(1 + 0j)] and r.value(0).imag.negative
    xt = torch.zeros(1, dtype=torch.complex64, requires_grad=True)
    yt = torch.zeros(1, dtype=torch.complex64, requires_grad=True)
    (gy,) = torch.autograd.grad(torch.add(xt, yt, alpha=0.5), (yt,), g.torch())
    assert not torch.signbit(torch.view_as_real(gy))[0, 1]
    import exactref.equivalents.torch as ert

    assert ert.add_backward(xt.detach(), yt.detach(), g.torch(), alpha=0.5).grad_y.covers(
        gy).all()
