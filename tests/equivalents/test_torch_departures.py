"""Where PyTorch departs from the mathematical answer, pinned: exactref's ops give the
mathematical answer (and so do not cover PyTorch there), the equivalent models PyTorch and
covers it. If a PyTorch release changes one of these, the test says which."""

from __future__ import annotations

import math

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

INF = math.inf


def c64(*values):
    z = np.empty(len(values), np.complex128)
    z.real = [complex(v).real for v in values]
    z.imag = [complex(v).imag for v in values]
    return torch.from_numpy(z).to(torch.complex64)


def _parts(t):
    v = complex(t.reshape(-1)[0].item())
    return v.real, v.imag


def _pinned(torch_out, math_ref, equivalent, want_torch, want_math):
    """PyTorch gives ``want_torch``, exactref ``want_math``; the equivalent covers PyTorch."""
    got = _parts(torch_out)
    assert _same(got, want_torch), f"PyTorch now gives {got}, not {want_torch}"
    ref = math_ref.rounded.value(0)
    assert _same((float(ref.real), float(ref.imag)), want_math)
    assert not math_ref.covers(torch_out).all()
    assert equivalent.covers(torch_out).all()


def _same(a, b):
    return all((math.isnan(x) and math.isnan(y)) or (x == y and math.copysign(1, x) ==
                                                    math.copysign(1, y))
               for x, y in zip(a, b, strict=True))


def test_alpha_one_multiplies_y_out():
    """(1+1j) + (inf+1j): PyTorch computes 1 * (inf+1j) as a complex product, whose imaginary
    part 1*1 + 0*inf is NaN."""
    x, y = c64(1 + 1j), c64(complex(INF, 1))
    _pinned(torch.add(x, y), er.add(x, y), ert.add(x, y), (INF, math.nan), (INF, 2.0))


def test_complex_alpha_multiplies_y_out():
    """The spec page's example: add(1+1j, inf+1j, alpha=1j) is infj; PyTorch nan+infj."""
    x, y = c64(1 + 1j), c64(complex(INF, 1))
    _pinned(torch.add(x, y, alpha=1j), er.add(x, y, alpha=1j), ert.add(x, y, alpha=1j),
            (math.nan, INF), (0.0, INF))


def test_zero_part_of_alpha_adds_a_signed_zero():
    """(-0+1j) + (-0-1j): the real part is -0 + -0 = -0 mathematically; PyTorch adds
    1 * -0 - 0 * -1 = +0 to it, so +0."""
    x, y = c64(complex(-0.0, 1)), c64(complex(-0.0, -1))
    _pinned(torch.add(x, y), er.add(x, y), ert.add(x, y), (0.0, 0.0), (-0.0, 0.0))


def test_real_scalar_becomes_complex():
    """(inf+1j) * 2.0: PyTorch wraps 2.0 as 2+0j, and 1*... + inf*0 is NaN; exactref takes the
    real scalar exactly, with no imaginary part: inf+2j."""
    x = c64(complex(INF, 1))
    _pinned(x * 2.0, er.multiply(x, 2.0), ert.multiply(x, 2.0), (INF, math.nan), (INF, 2.0))


def test_real_alpha_with_complex_tensors():
    """alpha=2 with complex tensors: PyTorch multiplies y by 2+0j: inf*0 in the imaginary
    part of (1+infj) * (2+0j)'s real part gives NaN: (1*2 - inf*0)."""
    x, y = c64(0j), c64(complex(1, INF))
    _pinned(torch.add(x, y, alpha=2), er.add(x, y, alpha=2), ert.add(x, y, alpha=2),
            (math.nan, INF), (2.0, INF))


def test_float8_e4m3fn_saturates():
    """float8_e4m3fn has no infinity: PyTorch saturates to 448, ml_dtypes (and exactref's
    default) gives NaN."""
    x = torch.tensor([20.0, -30.0], dtype=torch.float32).to(torch.float8_e4m3fn)
    y = torch.tensor([30.0, 20.0], dtype=torch.float32).to(torch.float8_e4m3fn)
    out = x * y
    assert out.float().tolist() == [448.0, -448.0]
    assert math.isnan(er.multiply(x, y).rounded.tolist()[0])
    assert not er.multiply(x, y).covers(out).all()
    assert ert.multiply(x, y).covers(out).all()
    assert er.multiply(x, y, overflow="saturate").covers(out).all()


def test_wider_operand_cast_rounds_twice():
    """A float64 0-d tensor beside a float16 tensor is cast to float16 through float32:
    1 + 2**-11 + 2**-40 becomes 1.0 (exactref rounds once: 1 + 2**-10)."""
    v = 1 + 2**-11 + 2**-40
    x = torch.zeros(2, dtype=torch.float16)
    y = torch.tensor(v, dtype=torch.float64)
    out = x + y
    assert out.tolist() == [1.0, 1.0]
    assert er.add(x, y).rounded.tolist() == [1.0009765625] * 2
    assert not er.add(x, y).covers(out).all()
    assert ert.add(x, y).covers(out).all()


def test_alpha_rounds_twice():
    """alpha is converted to float16 through float32: 1 + 2**-11 + 2**-40 becomes 1.0, so
    0 + alpha * 3 is 3; exactref takes alpha exactly: 3 + 3 * 2**-11 + ... rounds to 3 + 2**-9
    (every modelled implementation agrees)."""
    alpha = 1 + 2**-11 + 2**-40
    x = torch.zeros(3, dtype=torch.float16)
    y = torch.full((3,), 3.0, dtype=torch.float16)
    out = torch.add(x, y, alpha=alpha)
    assert out.tolist() == [3.0] * 3
    assert er.add(x, y, alpha=alpha).rounded.tolist() == [3 + 2**-9] * 3
    assert not er.add(x, y, alpha=alpha).covers(out).all()
    assert ert.add(x, y, alpha=alpha).covers(out).all()


def test_backward_sums_stored_products():
    """PyTorch's backward rounds each product to the dtype, then sums the copies in float32:
    the exact sum rounded once (er.multiply.backward) need not cover it; the equivalent does."""
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((1, 64)), dtype=torch.float16, requires_grad=True)
    y = torch.tensor(rng.standard_normal((256, 64)), dtype=torch.float16, requires_grad=True)
    g = torch.tensor(rng.standard_normal((256, 64)), dtype=torch.float16)
    gx, _ = torch.autograd.grad(x * y, (x, y), g)
    exact = er.multiply.backward(x.detach(), y.detach(), g).grad_x
    assert not exact.covers(gx).all()
    assert ert.multiply_backward(x.detach(), y.detach(), g).grad_x.covers(gx).all()
