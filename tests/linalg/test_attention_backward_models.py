"""scaled_dot_product_attention.backward's tolerance, proved by simulation: PyTorch's CPU backward
kernels computed step by step (numpy's IEEE float32/float64 arithmetic, bfloat16 and float16
through ml_dtypes, exp and log drawn at random within k ulps by tests/softmax/simulate.py: no
exactref code) are covered; implementations outside the model (``dP`` accumulated in bfloat16
where float32 is declared, the ``D`` term left out) are caught."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import exactref as er

sys.path.insert(0, str(Path(__file__).parents[1] / "softmax"))
sys.path.insert(0, str(Path(__file__).parent))
from simulate import within  # noqa: E402
from test_attention_models import _dot, _pv, standard  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
BW = er.scaled_dot_product_attention.backward


def _rowsum(x, c, rng):
    acc = np.zeros(x.shape[0], c)
    for j in rng.permutation(x.shape[1]):
        acc = (acc + x[:, j]).astype(c)
    return acc


def backward(q, k, v, dO, c, rng, scale, kind, out, stored=None, k_ulps=1.0, dp_acc=None,
             no_D=False):
    """One head's gradients ``(dQ, dK, dV)`` in ``out``, as PyTorch's CPU kernels compute them
    (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp, ``cpu_flash_attention_backward``):

    * ``"flash"``: ``lse = m + LOG(l)`` and the output ``O`` (stored in ``out``) from the
      forward; ``P = EXP(R(scale (q . k) - lse))`` recomputed (stored into ``stored``),
      ``D_i = sum_l dO_il O_il``, ``dS = P (dP - D)`` (stored), ``dQ = R(scale) dS k``,
      ``dK = R(scale) dS^T q``;
    * ``"math"``: q and k each times ``R(sqrt(scale))``, the softmax's ``P``,
      ``D_i = sum_j P_ij dP_ij``, the gradients times ``R(sqrt(scale))`` again.

    Every sum in a random order in ``c`` (``dp_acc``: ``dP``'s accumulator)."""
    q, k, v, dO = (np.asarray(a).astype(c) for a in (q, k, v, dO))
    sc = c.type(scale)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if kind == "math":
            r = c.type(math.sqrt(scale))
            q, k = (q * r).astype(c), (k * r).astype(c)
            s = _dot(q, k, c, rng, "random")
        else:
            s = (_dot(q, k, c, rng, "random") * sc).astype(c)
        m = s.max(axis=1, keepdims=True)
        e = within("exp", (s - m).astype(c), k_ulps, c, rng)
        ell = _rowsum(e, c, rng)
        dP = _dot(dO, v, dp_acc or c, rng, "random").astype(c)
        if kind == "flash":
            lse = (m[:, 0] + within("log", ell, k_ulps, c, rng)).astype(c)
            out_o = standard(q, k, v, c, rng, k_ulps, scale, stored=stored).astype(out)
            P = within("exp", (s - lse[:, None]).astype(c), k_ulps, c, rng)
            D = _rowsum((dO * out_o.astype(c)).astype(c), c, rng)
        else:
            P = (e / ell[:, None]).astype(c)
            D = _rowsum((P * dP).astype(c), c, rng)
        if no_D:
            D = np.zeros_like(D)
        dS = (P * (dP - D[:, None]).astype(c)).astype(c)
        if stored is not None:
            P, dS = P.astype(stored).astype(c), dS.astype(stored).astype(c)
        dV = _pv(P.T, dO, c, rng)
        if kind == "math":
            dQ, dK = (_pv(dS, k, c, rng) * r).astype(c), (_pv(dS.T, q, c, rng) * r).astype(c)
        else:
            dQ, dK = (_pv(dS, k, c, rng) * sc).astype(c), (_pv(dS.T, q, c, rng) * sc).astype(c)
    return dQ.astype(out), dK.astype(out), dV.astype(out)


def _heads(Q, K, V, G, *args, **kw):
    B, H = Q.shape[:2]
    res = [np.empty(Q.shape, kw["out"]), np.empty(K.shape, kw["out"]),
           np.empty(V.shape, kw["out"])]
    for b in range(B):
        for h in range(H):
            for x, g in zip(res, backward(Q[b, h], K[b, h], V[b, h], G[b, h], *args, **kw),
                            strict=True):
                x[b, h] = g
    return res


def _data(rng, fmt, shape, spread=1.0):
    B, H, L, S, E, Ev = shape
    Q = (rng.standard_normal((B, H, L, E)) * spread).astype(fmt)
    K = rng.standard_normal((B, H, S, E)).astype(fmt)
    V = rng.standard_normal((B, H, S, Ev)).astype(fmt)
    G = rng.standard_normal((B, H, L, Ev)).astype(fmt)
    return Q, K, V, G


NAMES = ("grad_query", "grad_key", "grad_value")
CASES = [(BF16, F32, 1.0), (BF16, F32, 4.0), (F16, F32, 2.0), (F32, F32, 1.0), (F32, F32, 6.0),
         (F64, F64, 2.0)]


@pytest.mark.parametrize("fmt,c,spread", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_flash_and_math_are_covered(fmt, c, spread):
    rng = np.random.default_rng(int(spread * 10) + fmt.itemsize)
    Q, K, V, G = _data(rng, fmt, (1, 2, 5, 12, 4, 4), spread)
    scale = 0.5  # 1/sqrt(E)
    stored = fmt if fmt != c else None
    r = BW(Q, K, V, G, exp_accuracy=1)
    for kind in ("flash", "math"):
        got = _heads(Q, K, V, G, c, rng, scale, kind, out=fmt, stored=stored)
        for name, g in zip(NAMES, got, strict=True):
            cov = getattr(r, name).covers(g)
            assert cov.all(), (kind, name, cov.worst_index, cov.worst_ulps)


def test_causal_is_covered():
    rng = np.random.default_rng(7)
    Q, K, V, G = _data(rng, BF16, (1, 1, 6, 6, 4, 4), 2.0)
    r = BW(Q, K, V, G, is_causal=True, exp_accuracy=1)
    dQ = np.zeros((1, 1, 6, 4), BF16)
    dK = np.zeros((6, 4), np.float32)
    dV = np.zeros((6, 4), np.float32)
    for i in range(6):  # row i sees keys 0..i; the rows' terms are added in float32
        gq, gk, gv = backward(Q[0, 0, i:i + 1], K[0, 0, :i + 1], V[0, 0, :i + 1],
                              G[0, 0, i:i + 1], F32, rng, 0.5, "math", out=F32, stored=BF16)
        dQ[0, 0, i] = gq[0].astype(BF16)
        dK[:i + 1] = (dK[:i + 1] + gk).astype(np.float32)
        dV[:i + 1] = (dV[:i + 1] + gv).astype(np.float32)
    assert r.grad_query.covers(dQ).all()
    assert r.grad_key.covers(dK.astype(BF16)[None, None]).all()
    assert r.grad_value.covers(dV.astype(BF16)[None, None]).all()


def test_bf16_dp_accumulation_is_caught():
    rng = np.random.default_rng(11)
    Q, K, V, G = _data(rng, BF16, (1, 1, 4, 8, 4, 64))
    V = (np.abs(V.astype(np.float32)) + 1).astype(BF16)  # dP without cancellation
    G = (np.abs(G.astype(np.float32)) + 1).astype(BF16)
    r = BW(Q, K, V, G, exp_accuracy=1)
    bad = _heads(Q, K, V, G, F32, rng, 0.5, "flash", out=BF16, stored=BF16, dp_acc=BF16)
    assert not all(getattr(r, n).covers(g).all() for n, g in zip(NAMES, bad, strict=True))
    good = _heads(Q, K, V, G, F32, rng, 0.5, "flash", out=BF16, stored=BF16)
    assert all(getattr(r, n).covers(g).all() for n, g in zip(NAMES, good, strict=True))


def test_missing_d_term_is_caught():
    rng = np.random.default_rng(12)
    Q, K, V, G = _data(rng, F32, (1, 1, 4, 6, 4, 4))
    r = BW(Q, K, V, G, exp_accuracy=1)
    bad = _heads(Q, K, V, G, F32, rng, 0.5, "math", out=F32, no_D=True)
    assert not r.grad_query.covers(bad[0]).all()
    assert not r.grad_key.covers(bad[1]).all()


def test_median_tolerance_in_ulps():
    """The bound is loose (Higham's worst cases, every step's): its half-width's median is near
    a thousand ulps in float32 and ten in bfloat16 on random data (docs/attention.md,
    "Backward"), where the simulated kernels' median error is 2 ulps (bfloat16: 0)."""
    rng = np.random.default_rng(3)
    for fmt, most in ((F32, 2048), (BF16, 16)):
        Q, K, V, G = _data(rng, fmt, (1, 2, 8, 16, 8, 8))
        r = BW(Q, K, V, G, exp_accuracy=1)
        for name in NAMES:
            res = getattr(r, name)
            lo, hi = res._bounds()[0][:2]
            x = np.asarray(res.rounded.numpy(), np.float64)
            ulp = np.abs(np.asarray(np.spacing(np.abs(x).astype(fmt)), np.float64))
            med = float(np.median(np.maximum(hi - x, x - lo) / ulp))
            assert med <= most, (fmt, name, med)
