"""The long-sum tolerance is sound: simulated implementations (sequential, pairwise, random
order, float32 accumulation, bfloat16 products, float64 accumulation) are covered; torch's CPU
matmul, addmm and sum are covered by their equivalents. Also: how tight the bound is."""

from __future__ import annotations

import numpy as np
import pytest

import exactref as er
from exactref import linalg

# These tests check that the models cover simulated implementations on cancelling data:
# weak checks on purpose (exactref.WeakCheckWarning says so to users).
pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")

F32 = np.float32


def _terms(A, B):
    """Products per element as float64 (exact for float32 inputs): shape (k, m, n)."""
    return np.einsum("ik,kj->kij", A.astype(np.float64), B.astype(np.float64))


def _seq(P, acc):
    s = np.zeros(P.shape[1:], dtype=acc)
    for t in P.astype(acc):
        s = (s + t).astype(acc)
    return s


def _pairwise(P, acc):
    P = P.astype(acc)
    while P.shape[0] > 1:
        if P.shape[0] % 2:
            P = np.concatenate([P, np.zeros((1,) + P.shape[1:], acc)])
        P = (P[0::2] + P[1::2]).astype(acc)
    return P[0]


def _data(kind, rng, m=6, k=200, n=5):
    A = rng.standard_normal((m, k))
    B = rng.standard_normal((k, n))
    if kind == "wide":
        A *= 2.0 ** rng.integers(-30, 30, size=A.shape)
    if kind == "cancel":
        A[:, k // 2:] = -A[:, :k // 2] * (1 + 2.0**-20)
        B[k // 2:] = B[:k // 2]
    return A.astype(F32), B.astype(F32)


@pytest.mark.parametrize("kind", ["random", "wide", "cancel"])
def test_float32_implementations_covered(kind):
    rng = np.random.default_rng(abs(hash(kind)) % 2**32)
    A, B = _data(kind, rng)
    P = _terms(A, B)
    ref = linalg.matmul(A, B)
    seq_ref = linalg.matmul(A, B, order="sequential")
    pw_ref = linalg.matmul(A, B, order="pairwise")
    # products rounded to float32, then summed in float32
    Pr = P.astype(F32)
    sims = {"sequential": _seq(Pr, F32), "pairwise": _pairwise(Pr, F32),
            "float64 accumulation": P.sum(axis=0).astype(F32), "sgemm": A @ B}
    for _ in range(3):
        sims[f"random order {_}"] = _seq(Pr[rng.permutation(P.shape[0])], F32)
    for name, out in sims.items():
        cov = ref.covers(out)
        assert cov.all(), (name, cov.summary())
    assert seq_ref.covers(sims["sequential"]).all()
    assert pw_ref.covers(sims["pairwise"]).all()


def test_bfloat16_products_float32_accumulation_covered():
    import ml_dtypes

    rng = np.random.default_rng(0)
    A, B = _data("random", rng)
    P = _terms(A, B)
    Pb = er.asarray(P, "bfloat16").numpy().astype(F32)  # each product rounded once to bf16
    r = linalg.matmul(A, B, fused=False, products="bfloat16")
    assert r.covers(_seq(Pb, F32)).all()
    assert r.covers(_pairwise(Pb, F32)).all()
    # bfloat16 inputs, output bfloat16: accumulation in float32, one rounding at the end
    a, b = A.astype(ml_dtypes.bfloat16), B.astype(ml_dtypes.bfloat16)
    rb = linalg.matmul(a, b)
    Pab = _terms(a.astype(F32), b.astype(F32)).astype(F32)  # exact in float32
    assert rb.covers(_seq(Pab, F32).astype(ml_dtypes.bfloat16)).all()
    assert rb.covers(_pairwise(Pab, F32).astype(ml_dtypes.bfloat16)).all()


def test_sum_implementations_covered():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 3000)) * 2.0 ** rng.integers(-20, 20, size=(4, 3000)))
    x = x.astype(F32)
    r = linalg.sum(x, axis=1)
    assert r.covers(np.sum(x, axis=1)).all()
    assert r.covers(_seq(x.T, F32)).all()
    assert r.covers(_pairwise(x.T, F32)).all()
    assert linalg.sum(x, axis=1, order="sequential").covers(_seq(x.T, F32)).all()


def test_bound_is_tight_and_grows_with_k():
    """The any-order bound is within a small factor of the worst simulated error."""
    rng = np.random.default_rng(1)
    ratios = []
    for k in (16, 256, 4096):
        A = np.abs(rng.standard_normal((4, k))).astype(F32)  # no cancellation: worst case
        B = np.abs(rng.standard_normal((k, 4))).astype(F32)
        r = linalg.matmul(A, B)
        tol = r.tolerance().numpy()
        seq = _seq(_terms(A, B).astype(F32), F32)
        err = np.abs(seq.astype(np.float64) - r.rounded.numpy().astype(np.float64))
        assert (err <= tol).all()
        ratios.append(float(tol.mean() / max(err.mean(), 1e-30)))
    assert tol.mean() > 0 and ratios[-1] > 1


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_torch_matmul_and_sum_covered(dtype):
    torch = pytest.importorskip("torch")
    import exactref.equivalents.torch_linalg as etl

    g = torch.Generator().manual_seed(0)
    td = getattr(torch, dtype)
    for kind in ("random", "wide"):
        a = torch.randn(16, 300, generator=g, dtype=torch.float64)
        b = torch.randn(300, 8, generator=g, dtype=torch.float64)
        if kind == "wide":
            a = a * 2.0 ** torch.randint(-8, 8, a.shape, generator=g).double()
        a, b = a.to(td), b.to(td)
        cov = etl.matmul(a, b).covers(torch.matmul(a, b))
        assert cov.all(), cov.summary()
        c = torch.randn(16, 8, generator=g, dtype=torch.float64).to(td)
        out = torch.addmm(c, a, b, beta=0.5, alpha=-1.5)
        assert etl.addmm(c, a, b, beta=0.5, alpha=-1.5).covers(out).all()
        x = torch.randn(50, 2000, generator=g, dtype=torch.float64).to(td)
        assert etl.sum(x, 1).covers(torch.sum(x, 1)).all()
        assert etl.sum(x).covers(torch.sum(x)).all()
    ab = torch.randn(3, 4, 40, generator=g).to(td)
    bb = torch.randn(40, 5, generator=g).to(td)
    assert etl.matmul(ab, bb).covers(torch.matmul(ab, bb)).all()


def test_torch_integer_matmul_exact():
    torch = pytest.importorskip("torch")
    import exactref.equivalents.torch_linalg as etl

    a = torch.randint(-1000, 1000, (5, 30), dtype=torch.int64) * 2**40
    b = torch.randint(-1000, 1000, (30, 3), dtype=torch.int64)
    assert etl.matmul(a, b).covers(torch.matmul(a, b)).all()
    assert etl.sum(a, 1).covers(torch.sum(a, 1)).all()
