"""The attention model's tolerance, proved by simulation: implementations computed step by step
(numpy's IEEE float32/float64 arithmetic, bfloat16 through ml_dtypes, the exponential drawn at
random within ``k`` ulps by tests/softmax/simulate.py: no exactref code) are covered; the
implementations outside the model (a bfloat16 accumulator where float32 is declared, no max
subtraction, the wrong scale) are caught."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import exactref as er

sys.path.insert(0, str(Path(__file__).parents[1] / "softmax"))
from simulate import within  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)


def _dot(a, b, c, rng, order):
    """Rows of ``a (L, E)`` times rows of ``b (S, E)`` accumulated in ``c``: products rounded,
    then summed sequentially in a random order or pairwise."""
    prods = (a[:, None, :].astype(c) * b[None, :, :].astype(c)).astype(c)  # (L, S, E)
    E = a.shape[1]
    if order == "pairwise":
        cols = [prods[..., e] for e in range(E)]
        while len(cols) > 1:
            nxt = [(cols[i] + cols[i + 1]).astype(c) for i in range(0, len(cols) - 1, 2)]
            if len(cols) % 2:
                nxt.append(cols[-1])
            cols = nxt
        return cols[0]
    acc = np.zeros(prods.shape[:2], c)
    for e in rng.permutation(E):
        acc = (acc + prods[..., e]).astype(c)
    return acc


def _pv(p, v, c, rng):
    """``p (L, S) @ v (S, Ev)`` accumulated in ``c`` in a random order."""
    acc = np.zeros((p.shape[0], v.shape[1]), c)
    for j in rng.permutation(p.shape[1]):
        acc = (acc + (p[:, j:j + 1].astype(c) * v[j:j + 1, :].astype(c)).astype(c)).astype(c)
    return acc


def standard(q, k, v, c, rng, k_ulps, scale, stored=None, subtract_max=True, acc=None,
             order="random", presplit=False):
    """One head: scores in ``c`` (``presplit``: q and k times sqrt(scale) first, as torch's
    math kernel), max-subtracted softmax, the weights (stored into ``stored``), P V in ``acc``
    (default ``c``)."""
    acc = c if acc is None else acc
    sc = c.type(scale)
    if presplit:
        r = c.type(math.sqrt(scale))
        s = _dot((q.astype(c) * r).astype(c), (k.astype(c) * r).astype(c), c, rng, order)
    else:
        s = (_dot(q, k, c, rng, order) * sc).astype(c)
    m = s.max(axis=1, keepdims=True) if subtract_max else np.zeros((s.shape[0], 1), c)
    with np.errstate(over="ignore", invalid="ignore"):
        e = within("exp", (s - m).astype(c), k_ulps, c, rng)
        tot = np.zeros(s.shape[0], c)
        for j in rng.permutation(s.shape[1]):
            tot = (tot + e[:, j]).astype(c)
        p = (e / tot[:, None]).astype(c)
    if stored is not None:
        p = p.astype(stored)
    return _pv(p, v, acc, rng)


def online(q, k, v, c, rng, k_ulps, scale, nblocks, stored=None):
    """FlashAttention's forward for one head: random key blocks, running max ``m``, sum ``l``
    and output ``O`` rescaled by EXP(m_old - m_new), the block's weights (stored into
    ``stored``) times V accumulated in ``c``, one division at the end."""
    S = k.shape[0]
    cuts = np.sort(rng.choice(np.arange(1, S), size=nblocks - 1, replace=False))
    L = q.shape[0]
    m = np.full((L, 1), -np.inf, c)
    ell = np.zeros((L, 1), c)
    acc_o = np.zeros((L, v.shape[1]), c)
    sc = c.type(scale)
    for idx in np.split(np.arange(S), cuts):
        s = (_dot(q, k[idx], c, rng, "random") * sc).astype(c)
        mn = np.maximum(m, s.max(axis=1, keepdims=True))
        with np.errstate(invalid="ignore"):
            a = within("exp", (m - mn).astype(c), k_ulps, c, rng)
            e = within("exp", (s - mn).astype(c), k_ulps, c, rng)
        bsum = np.zeros((L, 1), c)
        for j in range(e.shape[1]):
            bsum = (bsum + e[:, j:j + 1]).astype(c)
        ell = ((ell * a).astype(c) + bsum).astype(c)
        pe = e if stored is None else e.astype(stored)
        acc_o = ((acc_o * a).astype(c) + _pv(pe, v[idx], c, rng)).astype(c)
        m = mn
    return (acc_o / ell).astype(c)


def _heads(fn, Q, K, V, out, *args, **kw):
    B, H = Q.shape[:2]
    res = np.empty(Q.shape[:3] + (V.shape[-1],), out)
    for b in range(B):
        for h in range(H):
            res[b, h] = fn(Q[b, h], K[b, h], V[b, h], *args, **kw).astype(out)
    return res


def _data(rng, fmt, shape, spread=1.0):
    B, H, L, S, E, Ev = shape
    Q = (rng.standard_normal((B, H, L, E)) * spread).astype(fmt)
    K = rng.standard_normal((B, H, S, E)).astype(fmt)
    V = rng.standard_normal((B, H, S, Ev)).astype(fmt)
    return Q, K, V


CASES = [  # (format, compute, spread)
    (BF16, F32, 1.0), (BF16, F32, 6.0), (F16, F32, 2.0), (F32, F32, 1.0), (F32, F32, 8.0),
]


@pytest.mark.parametrize("fmt,c,spread", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_standard_and_online_are_covered(fmt, c, spread):
    rng = np.random.default_rng(int(spread * 10) + fmt.itemsize)
    shape = (1, 2, 6, 24, 8, 3)
    Q, K, V = _data(rng, fmt, shape, spread)
    scale = 1.0 / math.sqrt(shape[4])
    stored = fmt if fmt != c else None
    r_std = er.scaled_dot_product_attention(Q, K, V, accuracy=1, stored=stored)
    r_onl = er.scaled_dot_product_attention(Q, K, V, accuracy=1, blocks=5, stored=stored)
    for _trial in range(2):
        for order, presplit in (("random", False), ("pairwise", True)):
            out = _heads(standard, Q, K, V, fmt, c, rng, 1.0, scale, stored=stored,
                         order=order, presplit=presplit)
            cov = r_std.covers(out)
            assert cov.all(), (order, cov.worst_index, cov.worst_ulps)
        nb = int(rng.integers(2, 6))
        out = _heads(online, Q, K, V, fmt, c, rng, 1.0, scale, nb, stored=stored)
        cov = r_onl.covers(out)
        assert cov.all(), (nb, cov.worst_index, cov.worst_ulps)


def test_causal_and_masked_are_covered():
    rng = np.random.default_rng(7)
    Q, K, V = _data(rng, BF16, (1, 1, 8, 8, 8, 2), 3.0)
    r = er.scaled_dot_product_attention(Q, K, V, is_causal=True, accuracy=1, stored="bfloat16")
    out = np.empty((1, 1, 8, 2), BF16)
    for i in range(8):  # row i sees keys 0..i: the same algorithm on the prefix
        out[0, 0, i:i + 1] = standard(Q[0, 0, i:i + 1], K[0, 0, :i + 1], V[0, 0, :i + 1], F32,
                                      rng, 1.0, 1 / math.sqrt(8), stored=BF16).astype(BF16)
    assert r.covers(out).all()


def test_bf16_accumulation_is_caught():
    rng = np.random.default_rng(11)
    Q, K, V = _data(rng, BF16, (1, 1, 4, 128, 16, 8))
    V = (np.abs(V.astype(np.float32)) + 1).astype(BF16)  # no cancellation: a plain error
    scale = 0.25
    r = er.scaled_dot_product_attention(Q, K, V, accuracy=1, stored="bfloat16")
    bad = _heads(standard, Q, K, V, BF16, F32, rng, 1.0, scale, stored=BF16, acc=BF16)
    assert not r.covers(bad).all()
    ok = er.scaled_dot_product_attention(Q, K, V, accuracy=1, compute="bfloat16")
    assert ok.covers(bad).all()  # declared: covered


def test_no_max_subtraction_is_caught():
    rng = np.random.default_rng(12)
    Q, K, V = _data(rng, F32, (1, 1, 3, 8, 4, 2))
    Q = (Q * 200).astype(F32)  # scores near 100..400: e**s overflows float32
    r = er.scaled_dot_product_attention(Q, K, V, accuracy=1)
    bad = _heads(standard, Q, K, V, F32, F32, rng, 1.0, 0.5, subtract_max=False)
    assert np.isnan(bad).any()
    assert not r.covers(bad).all()


def test_wrong_scale_is_caught():
    rng = np.random.default_rng(13)
    Q, K, V = _data(rng, F32, (1, 1, 4, 16, 16, 4), 2.0)
    r = er.scaled_dot_product_attention(Q, K, V, accuracy=1)
    bad = _heads(standard, Q, K, V, F32, F32, rng, 1.0, 1 / 16)  # 1/E for 1/sqrt(E)
    assert not r.covers(bad).all()
    good = _heads(standard, Q, K, V, F32, F32, rng, 1.0, 1 / 4)
    assert r.covers(good).all()
