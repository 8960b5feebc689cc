"""gemm.backward beyond 2-D: batch dimensions broadcast as in matmul, each gradient element one
exact sum rounded once (the copies broadcasting made of an operand are more terms of the same
sum), grad_c summed over the copies of c, conj(alpha) and conj(beta) for complex operands.
Checked element by element against an exact Fraction oracle in every rounding mode, and
against PyTorch's autograd in float64 (covered)."""

from __future__ import annotations

import itertools
import zlib
from fractions import Fraction

import numpy as np
import pytest
from linalg_oracle import rounded, same

import exactref as er
from exactref import linalg

# These tests check that the models cover simulated implementations on cancelling data:
# weak checks on purpose (exactref.WeakCheckWarning says so to users).
pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")

MODES = list(er.Rounding)

# (a, b, c) shapes of gemm(a, b, c) after op(): broadcast batches of both operands and of c
CASES = [
    ((2, 3, 4), (2, 4, 5), (2, 3, 5)),  # equal batches, full c
    ((2, 3, 4), (4, 5), (5,)),  # b shared by the batch, c a row
    ((3, 4), (2, 1, 4, 2), (1, 3, 1)),  # a shared by a 2-D batch, c a column
    ((2, 1, 3, 4), (1, 3, 4, 2), (3, 2)),  # both broadcast against each other
    ((1, 3, 4), (2, 4, 2), (2, 1, 1)),  # a batch of size 1, broadcast
]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _values(shape, fmt, rng, spread=30):
    """Values of ``fmt`` with a wide spread of exponents and some exact cancellation."""
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread + 1, size=shape)
    flat = x.reshape(-1)
    if flat.size >= 4:
        flat[1] = -flat[0]  # cancels exactly in some sums
    return er.asarray(x, fmt).numpy().astype(np.float64)


def _swap(x, flag):
    return np.swapaxes(x, -1, -2) if flag and x.ndim >= 2 else x


def _src_index(t, full_batch, own_batch):
    """The index into an operand of batch shape ``own_batch`` that broadcasting copied to the
    full batch index ``t``."""
    off = len(full_batch) - len(own_batch)
    return tuple(0 if own_batch[d] == 1 else t[off + d] for d in range(len(own_batch)))


def _zeros(shape):
    out = np.empty(shape, dtype=object)
    for i in np.ndindex(*shape):
        out[i] = Fraction(0)
    return out


def exact_grads(a, b, g, c, alpha, beta, ta, tb):
    """grad_a, grad_b, grad_c of ``alpha * op(a) @ op(b) + beta * c`` (real, at least 2-D), as
    object arrays of Fractions in the operands' shapes."""
    A, B = _swap(a, ta), _swap(b, tb)
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    m, k, n = A.shape[-2], A.shape[-1], B.shape[-1]
    ga, gb = _zeros(A.shape), _zeros(B.shape)
    gc = _zeros(c.shape)
    G = np.broadcast_to(g, batch + (m, n))
    full_c = (1,) * (len(batch) + 2 - c.ndim) + c.shape
    for t in np.ndindex(*batch) if batch else [()]:
        ia = _src_index(t, batch, A.shape[:-2])
        ib = _src_index(t, batch, B.shape[:-2])
        for i, l_, j in itertools.product(range(m), range(k), range(n)):
            gv = Fraction(float(G[t + (i, j)]))
            ga[ia + (i, l_)] += gv * Fraction(float(B[ib + (l_, j)]))
            gb[ib + (l_, j)] += Fraction(float(A[ia + (i, l_)])) * gv
        for i, j in itertools.product(range(m), range(n)):
            src = _src_index(t + (i, j), batch + (m, n), full_c)[len(full_c) - c.ndim:]
            gc[src] += Fraction(float(G[t + (i, j)]))
    fa, fb = Fraction(alpha), Fraction(beta)
    ga = _swap(ga * fa, ta)
    gb = _swap(gb * fa, tb)
    return ga, gb, gc * fb


@pytest.mark.parametrize("fmt", ["float64", "float32"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_batched_gradients_are_exact_in_every_mode(case, fmt):
    sa, sb, sc = CASES[case]
    f = er.dtype(fmt)
    for ta, tb in ((False, False), (True, False), (False, True), (True, True)):
        rng = _rng(case, fmt, ta, tb)
        a = _values(_swap(np.empty(sa), ta).shape, fmt, rng)
        b = _values(_swap(np.empty(sb), tb).shape, fmt, rng)
        c = _values(sc, fmt, rng)
        out = np.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
        g = _values(out, fmt, rng)
        alpha, beta = 0.1, -3.0
        want = exact_grads(a, b, g, c, alpha, beta, ta, tb)
        A, B, C, G = (er.asarray(v, fmt) for v in (a, b, c, g))
        for mode in MODES:
            got = linalg.gemm.backward(A, B, G, C, alpha=alpha, beta=beta, trans_a=ta,
                                       trans_b=tb, rounding=mode)
            for name, w, src in zip(("grad_a", "grad_b", "grad_c"), want, (a, b, c),
                                    strict=True):
                r = getattr(got, name).rounded
                assert r.dtype is f and r.shape == src.shape, (name, r.shape)
                vals = r.numpy().astype(np.float64)
                for i in np.ndindex(*src.shape):
                    assert same(vals[i], rounded(w[i], f, mode)), (name, mode, ta, tb, i)


def test_copies_are_one_sum_not_rounded_per_copy():
    """b is shared by two batch elements: its gradient is one exact sum over both copies.
    Copy 0 contributes 1 + 2**-53 (alone: rounds to 1), copy 1 another 2**-53: the exact
    gradient 1 + 2**-52 is a float64, which rounding each copy first would lose."""
    a = np.array([[[1.0], [2.0**-53]], [[2.0**-53], [0.0]]])  # (2, 2, 1)
    b = np.array([[1.0]])  # (1, 1)
    g = np.ones((2, 2, 1))
    for alpha in (1, 3):
        got = linalg.gemm.backward(a, b, g, alpha=alpha).grad_b.rounded.tolist()
        assert got[0] == [alpha * (1 + 2.0**-52)]
        per_copy = alpha * (float(1 + 2.0**-53) + 2.0**-53)
        assert got[0] != [per_copy]
    # grad_c: c of shape (1,) collects all four output elements in one sum
    c = np.zeros(1)
    g = np.array([[[1.0], [2.0**-53]], [[2.0**-53], [0.0]]])
    gc = linalg.gemm.backward(a, b, g, c, beta=1).grad_c.rounded.tolist()
    assert gc == [1 + 2.0**-52]


def test_complex_alpha_and_beta_are_conjugated():
    rng = _rng("complex")
    a = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))  # shared by the batch
    c = rng.standard_normal((2,)) + 1j * rng.standard_normal((2,))
    g = rng.standard_normal((2, 3, 2)) + 1j * rng.standard_normal((2, 3, 2))
    alpha, beta = 0.5 - 2j, 3j
    grads = linalg.gemm.backward(a, b, g, c, alpha=alpha, beta=beta)

    def fc(z):
        return Fraction(z.real), Fraction(z.imag)

    def mul(x, y):
        return x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]

    def check(got, want):
        assert got.real == float(want[0]) and got.imag == float(want[1]), (got, want)

    ca, cb = fc(np.conj(alpha)), fc(np.conj(beta))
    ga = grads.grad_a.rounded.numpy()
    for t, i, l_ in np.ndindex(2, 3, 4):  # conj(alpha) * sum_j g[t, i, j] * conj(b[l, j])
        s = [Fraction(0), Fraction(0)]
        for j in range(2):
            p = mul(fc(g[t, i, j]), fc(np.conj(b[l_, j])))
            s = [s[0] + p[0], s[1] + p[1]]
        check(ga[t, i, l_], mul(ca, s))
    gb = grads.grad_b.rounded.numpy()
    for l_, j in np.ndindex(4, 2):  # one sum over both batch copies
        s = [Fraction(0), Fraction(0)]
        for t, i in np.ndindex(2, 3):
            p = mul(fc(np.conj(a[t, i, l_])), fc(g[t, i, j]))
            s = [s[0] + p[0], s[1] + p[1]]
        check(gb[l_, j], mul(ca, s))
    gc = grads.grad_c.rounded.numpy()
    for j in range(2):
        s = [Fraction(0), Fraction(0)]
        for t, i in np.ndindex(2, 3):
            p = fc(g[t, i, j])
            s = [s[0] + p[0], s[1] + p[1]]
        check(gc[j], mul(cb, s))


def test_integer_batched_gradients_are_exact():
    rng = _rng("int")
    a = rng.integers(-1000, 1000, (3, 2, 5)).astype(np.int32)
    b = rng.integers(-1000, 1000, (5, 4)).astype(np.int32)
    g = rng.integers(-1000, 1000, (3, 2, 4)).astype(np.int32)
    grads = linalg.gemm.backward(a, b, g, alpha=3)
    ao, bo, go = (x.astype(object) for x in (a, b, g))
    assert grads.grad_b.rounded.tolist() == (3 * np.einsum("tik,tij->kj", ao, go)).tolist()
    assert grads.grad_a.rounded.tolist() == (3 * np.einsum("tij,kj->tik", go, bo)).tolist()
    assert grads.grad_a.rounded.dtype.name == "int32"


def test_shapes_vectors_and_errors():
    rng = _rng("shapes")
    v = rng.standard_normal(4)
    bm = rng.standard_normal((2, 4, 3))
    r = linalg.gemm.backward(v, bm, rng.standard_normal((2, 3)))  # 1-D a, batched b
    assert r.grad_a.rounded.shape == (4,) and r.grad_b.rounded.shape == (2, 4, 3)
    assert r.grad_c is None
    r = linalg.gemm.backward(rng.standard_normal((2, 5, 4)), v, rng.standard_normal((2, 5)),
                             2.5)
    assert r.grad_b.rounded.shape == (4,) and r.grad_c is None  # a scalar c has no gradient
    # trans_a on a batch: the gradient comes back in a's own layout
    a = rng.standard_normal((2, 4, 3))  # op(a) is (2, 3, 4)
    r = linalg.gemm.backward(a, rng.standard_normal((4, 5)), rng.standard_normal((2, 3, 5)),
                             trans_a=True, dtype="float32")
    assert r.grad_a.rounded.shape == (2, 4, 3) and r.grad_a.rounded.dtype.name == "float32"
    with pytest.raises(ValueError, match=r"output's shape \(2, 3, 5\)"):
        linalg.gemm.backward(a, np.ones((4, 5)), np.ones((3, 5)), trans_a=True)
    with pytest.raises(ValueError, match="batch"):
        linalg.gemm.backward(np.ones((2, 3, 4)), np.ones((3, 4, 5)), np.ones((2, 3, 5)))


def test_tolerance_and_covers_keep_the_operand_layout():
    """The bounds are rearranged with the values: a float32 gradient with compute float32
    covers a float32 sequential sum, and its tolerance has the operand's shape."""
    rng = _rng("tol")
    a = rng.standard_normal((3, 6, 50)).astype(np.float32)  # used transposed: op(a) (3, 50, 6)
    b = rng.standard_normal((6, 2)).astype(np.float32)
    g = rng.standard_normal((3, 50, 2)).astype(np.float32)
    r = linalg.gemm.backward(a, b, g, trans_a=True, alpha=0.5, compute="float32")
    ga = r.grad_a
    assert np.asarray(ga.tolerance()).shape == (3, 6, 50)
    # what a float32 implementation computes: each element a sum of 2 products in float32
    sim = (np.float32(0.5) * np.einsum("tij,kj->tik", g, b)).astype(np.float32)
    sim = np.swapaxes(sim, -1, -2)
    assert ga.covers(sim).all()
    off = ga.rounded.numpy().astype(np.float64) * (1 + 2.0**-10)  # 8000 ulps away: not covered
    assert not ga.covers(off.astype(np.float32)).all()


# --------------------------------------------------------------------- PyTorch autograd
TORCH_CASES = CASES + [((4,), (2, 4, 5), (1, 5)), ((2, 3, 4), (4,), (2, 3))]


@pytest.mark.parametrize("complex_", [False, True], ids=["float64", "complex128"])
def test_covers_torch_autograd_float64(complex_):
    torch = pytest.importorskip("torch")
    dt = torch.complex128 if complex_ else torch.float64
    alpha, beta = (0.3 - 1.5j, 2 + 0.5j) if complex_ else (0.3, -2.5)
    checked = 0
    for case, (sa, sb, sc) in enumerate(TORCH_CASES):
        for ta, tb in ((False, False), (True, True), (True, False)):
            rng = _rng("torch", case, ta, tb, complex_)

            def t(shape, flag, rng=rng):
                x = rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)
                if complex_:
                    x = x + 1j * rng.standard_normal(shape)
                x = _swap(x, flag)
                return torch.tensor(np.ascontiguousarray(x), dtype=dt, requires_grad=True)

            a, b, c = t(sa, ta), t(sb, tb), t(sc, False)
            opa = a.transpose(-1, -2) if ta and a.ndim >= 2 else a
            opb = b.transpose(-1, -2) if tb and b.ndim >= 2 else b
            out = alpha * torch.matmul(opa, opb) + beta * c
            g = torch.tensor(rng.standard_normal(tuple(out.shape)), dtype=dt)
            grads = torch.autograd.grad(out, (a, b, c), g)
            ref = linalg.gemm.backward(a.detach(), b.detach(), g, c.detach(), alpha=alpha,
                                       beta=beta, trans_a=ta, trans_b=tb)
            for name, tg in zip(("grad_a", "grad_b", "grad_c"), grads, strict=True):
                r = getattr(ref, name)
                assert tuple(r.rounded.shape) == tuple(tg.shape), (name, case)
                cov = r.covers(tg)
                assert cov.all(), f"{name} case {case} ta={ta} tb={tb}: {cov.summary()}"
                checked += 1
    assert checked == 3 * 3 * len(TORCH_CASES)


def test_covers_torch_baddbmm_autograd():
    """torch.baddbmm's own backward (equal batches, an input broadcast from (n,) and (m, 1))."""
    torch = pytest.importorskip("torch")
    for shape_c in [(5,), (3, 1), (2, 3, 5)]:
        rng = _rng("baddbmm", shape_c)
        a = torch.tensor(rng.standard_normal((2, 3, 40)), requires_grad=True,
                         dtype=torch.float64)
        b = torch.tensor(rng.standard_normal((2, 40, 5)), requires_grad=True,
                         dtype=torch.float64)
        c = torch.tensor(rng.standard_normal(shape_c), requires_grad=True, dtype=torch.float64)
        out = torch.baddbmm(c, a, b, alpha=-0.7, beta=1 / 3)
        g = torch.tensor(rng.standard_normal((2, 3, 5)))
        grads = torch.autograd.grad(out, (a, b, c), g)
        ref = linalg.gemm.backward(a.detach(), b.detach(), g, c.detach(), alpha=-0.7,
                                   beta=1 / 3)
        for name, tg in zip(("grad_a", "grad_b", "grad_c"), grads, strict=True):
            cov = getattr(ref, name).covers(tg)
            assert cov.all(), f"{name} {shape_c}: {cov.summary()}"
        # and the reference is not so loose that it covers everything: one ulp per element
        # of a gradient summed from 40 terms is far outside a float64 bound near 1e-14
        off = grads[0] * (1 + 2.0**-20)
        assert not ref.grad_a.covers(off).all()


def test_rounded_holds_every_gradient_by_its_operand_name():
    """``.rounded`` of a backward pass with three gradients holds all three (it held two)."""
    a = er.asarray([[1.0, 2.0]], "float32")
    b = er.asarray([[3.0], [4.0]], "float32")
    c = er.asarray([[0.5]], "float32")
    g = er.asarray([[1.0]], "float32")
    r = er.gemm.backward(a, b, g, c, beta=2)
    assert r.rounded.grad_c.tolist() == r.grad_c.rounded.tolist() == [[2.0]]
    assert r.rounded.tolist() == [[[3.0, 4.0]], [[1.0], [2.0]], [[2.0]]]
    with pytest.raises(AttributeError, match="3 gradients: use .grad_a, .grad_b, .grad_c"):
        r.rounded.dtype  # noqa: B018
    q = er.asarray(np.arange(8.0).reshape(1, 2, 4) / 8, "float32")
    att = er.scaled_dot_product_attention.backward(q, q, q, er.asarray(np.ones((1, 2, 4)),
                                                                       "float32"))
    for name in ("grad_query", "grad_key", "grad_value"):
        assert getattr(att.rounded, name).tolist() == getattr(att, name).rounded.tolist()
