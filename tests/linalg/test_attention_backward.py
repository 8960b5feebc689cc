"""scaled_dot_product_attention.backward's rounded gradients against an independent mpmath
oracle (attention_backward_oracle.py: no exactref code), in every mode and float64, float32,
bfloat16, float16, on random and adversarial inputs (equal scores, -inf masked keys, causal,
huge scores, GQA, broadcast batches); the exact cases; its checks and errors."""

from __future__ import annotations

import math
import sys
import zlib
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

import exactref as er
from exactref._formats import FORMATS

sys.path.insert(0, str(Path(__file__).parent))
from attention_backward_oracle import gradients  # noqa: E402
from attention_oracle import MODES, round_value  # noqa: E402

FMTS = ("float64", "float32", "bfloat16", "float16")
BW = er.scaled_dot_product_attention.backward


def _np(x, dt):
    return np.asarray(er.asarray(x, dt).numpy(), dtype=np.float64)


def oracle(dt, Q, K, V, G, mask=None, causal=False, scale=None, gqa=1, prec=240):
    """The oracle's ``(dQ, dK, dV)`` as arrays of Fractions/mpfs of the operands' shapes:
    per batch entry of (B, H, ...) operands, GQA's shared heads summed."""
    Qn, Kn, Vn, Gn = (_np(a, dt) for a in (Q, K, V, G))
    B, H, L, E = Qn.shape
    S = Kn.shape[2]
    fm = None
    if mask is not None and mask.dtype != bool:
        fm = _np(mask, dt)
    dQ = np.empty(Qn.shape, object)
    dK = np.zeros(Kn.shape, object)
    dV = np.zeros(Vn.shape, object)
    dK[...] = Fraction(0)
    dV[...] = Fraction(0)
    for b in range(B):
        for hh in range(H):
            kh = hh // gqa
            if causal:
                al = [[j <= i for j in range(S)] for i in range(L)]
            elif mask is None:
                al = [[True] * S for _ in range(L)]
            elif mask.dtype == bool:
                m = np.broadcast_to(mask, (B, H, L, S))
                al = m[b, hh].tolist()
            else:
                m = np.broadcast_to(fm, (B, H, L, S))
                al = (m[b, hh] != -np.inf).tolist()
            fmr = None if fm is None else np.broadcast_to(fm, (B, H, L, S))[b, hh].tolist()
            q, k, v = Qn[b, hh].tolist(), Kn[b, kh].tolist(), Vn[b, kh].tolist()
            gq, gk, gv = gradients(q, k, v, Gn[b, hh].tolist(), al, fmr, scale, prec)
            dQ[b, hh] = np.array(gq, object)
            for j in range(S):
                for e in range(E):
                    dK[b, kh, j, e] = _add(dK[b, kh, j, e], gk[j][e])
                for e in range(Vn.shape[3]):
                    dV[b, kh, j, e] = _add(dV[b, kh, j, e], gv[j][e])
    return dQ, dK, dV


def _add(a, b):
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a + b
    import mpmath

    with mpmath.workprec(max(mpmath.mp.prec, 3000)):
        return _mpf(a) + _mpf(b)


def _mpf(t):
    return mpmath.mpf(t.numerator) / t.denominator if isinstance(t, Fraction) else t


def check(dt, Q, K, V, G, mask=None, causal=False, scale=None, gqa=1, modes=MODES):
    """Every gradient element in every mode against the oracle: the mismatches."""
    __tracebackhide__ = True
    f = FORMATS[dt]
    prec = 240
    want = oracle(dt, Q, K, V, G, mask, causal, scale, gqa, prec)
    ops = [er.asarray(a, dt) for a in (Q, K, V, G)]
    arg = mask if mask is None or mask.dtype == bool else er.asarray(mask, dt)
    bad = []
    for mode in modes:
        got = BW(*ops, attn_mask=arg, is_causal=causal, scale=scale, enable_gqa=gqa > 1,
                 rounding=mode)
        for name, w in zip(("grad_query", "grad_key", "grad_value"), want, strict=True):
            g = np.asarray(getattr(got, name).rounded.numpy(), dtype=np.float64)
            for idx in np.ndindex(w.shape):
                try:
                    r = _round(w[idx], f, mode, prec)
                except ValueError:  # too close to a boundary for 240 bits: 4000 bits
                    if prec == 240:
                        prec = 4000
                        want = oracle(dt, Q, K, V, G, mask, causal, scale, gqa, prec)
                        w = want[("grad_query", "grad_key", "grad_value").index(name)]
                    r = _round(w[idx], f, mode, prec)
                if not (r == g[idx] or (math.isnan(r) and math.isnan(g[idx]))):
                    bad.append((mode, name, idx, r, g[idx]))
    return bad


def _round(x, f, mode, prec=240):
    """The oracle's value rounded into ``f``; a value far below the smallest subnormal rounds as
    a quarter of it (of its sign) in every mode."""
    tiny = Fraction(2) ** (f.emin - f.precision - 1)
    if not isinstance(x, (Fraction, float)) and x != 0 and abs(x) < mpmath.ldexp(
            1, f.emin - f.precision - 1):
        x = tiny if x > 0 else -tiny
    return round_value(x, f.precision, f.emin, f.max_finite, mode, prec)


def _rand(rng, *shape, s=1.0):
    return rng.standard_normal(shape) * s


CASES = {
    "random": lambda rng: dict(Q=_rand(rng, 1, 2, 3, 3), K=_rand(rng, 1, 2, 4, 3),
                               V=_rand(rng, 1, 2, 4, 2), G=_rand(rng, 1, 2, 3, 2)),
    "scale": lambda rng: dict(Q=_rand(rng, 1, 1, 3, 4), K=_rand(rng, 1, 1, 3, 4),
                              V=_rand(rng, 1, 1, 3, 2), G=_rand(rng, 1, 1, 3, 2), scale=0.375),
    "causal": lambda rng: dict(Q=_rand(rng, 1, 1, 4, 2), K=_rand(rng, 1, 1, 4, 2),
                               V=_rand(rng, 1, 1, 4, 3), G=_rand(rng, 1, 1, 4, 3), causal=True),
    "huge": lambda rng: dict(Q=_rand(rng, 1, 1, 2, 3, s=30), K=_rand(rng, 1, 1, 3, 3, s=30),
                             V=_rand(rng, 1, 1, 3, 2), G=_rand(rng, 1, 1, 2, 2)),
    "inf_mask": lambda rng: dict(
        Q=_rand(rng, 1, 1, 3, 2), K=_rand(rng, 1, 1, 3, 2), V=_rand(rng, 1, 1, 3, 2),
        G=_rand(rng, 1, 1, 3, 2),
        mask=np.array([[0.0, -np.inf, 0.5], [-np.inf, -np.inf, 0.0], [1.0, 0.0, -2.0]])),
    "bool_mask": lambda rng: dict(
        Q=_rand(rng, 1, 1, 3, 2), K=_rand(rng, 1, 1, 3, 2), V=_rand(rng, 1, 1, 3, 2),
        G=_rand(rng, 1, 1, 3, 2), mask=np.array([[True, False, True], [False, True, False],
                                                 [True, True, True]])),
    # row 0: all scores equal (q = 0): P = 1/3, every term rational; row 1: equal values
    # v (dP equal: dS = 0); row 2: a zero gradient row
    "equal": lambda rng: dict(
        Q=np.array([[[[0.0, 0.0], [1.0, -0.5], [0.25, 2.0]]]]),
        K=np.array([[[[1.0, 2.0], [-1.0, 0.5], [0.75, 0.75]]]]),
        V=np.array([[[[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]]]),
        G=np.array([[[[1.0, 0.5], [0.0, 0.0], [0.0, 0.0]]]])),
    # k's first column constant: dQ[:, :, 0] is exactly 0
    "constant_k": lambda rng: dict(
        Q=_rand(rng, 1, 1, 2, 2), K=np.array([[[[0.5, 1.0], [0.5, -1.0], [0.5, 0.25]]]]),
        V=_rand(rng, 1, 1, 3, 2), G=_rand(rng, 1, 1, 2, 2)),
    # E = 9: scale 1/3, rational but not dyadic; the float mask makes the scores 9/3 + 0 and
    # 6/3 + 1 equal (every row: P = 1/2)
    "square_E": lambda rng: dict(
        Q=np.ones((1, 1, 2, 9)), K=np.array([[[[1.0] * 9, [1.0] * 6 + [0.0] * 3]]]),
        V=np.array([[[[1.0, 2.0], [2.0, 0.5]]]]), G=np.array([[[[1.0, 0.0], [0.25, 1.0]]]]),
        mask=np.array([[0.0, 1.0], [0.0, 1.0]])),
    # score gaps of 9e4: weights near e**-39087, and dP_j - D of a dominant key as small
    "score_gap": lambda rng: dict(
        Q=np.array([[[[300.0, 0.0], [1.0, 2.0]]]]),
        K=np.array([[[[300.0, 0.0], [0.0, 0.5], [-300.0, 1.0]]]]),
        V=np.array([[[[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]]]]),
        G=np.array([[[[1.0, 0.5], [2.0, 3.0]]]]), scale=1.0),
    "gqa": lambda rng: dict(Q=_rand(rng, 1, 4, 2, 2), K=_rand(rng, 1, 2, 3, 2),
                            V=_rand(rng, 1, 2, 3, 2), G=_rand(rng, 1, 4, 2, 2), gqa=2),
}


@pytest.mark.parametrize("dt", FMTS)
@pytest.mark.parametrize("case", list(CASES))
def test_oracle(case, dt):
    rng = np.random.default_rng(zlib.crc32(f"{case}-{dt}".encode()))
    kw = CASES[case](rng)
    modes = MODES if dt in ("bfloat16", "float32") or case in ("random", "equal") else \
        ("nearest_even", "toward_negative")
    assert check(dt, modes=modes, **kw) == []


@pytest.mark.parametrize("dt", ("float8_e5m2", "float8_e4m3fn"))
@pytest.mark.parametrize("case", ("random", "equal", "causal", "gqa"))
def test_oracle_8bit(case, dt):
    rng = np.random.default_rng(zlib.crc32(f"{case}-{dt}".encode()))
    assert check(dt, modes=("nearest_even", "toward_zero", "toward_positive"),
                 **CASES[case](rng)) == []


def test_exact_cases_are_exact():
    kw = CASES["equal"](None)
    g = BW(*(er.asarray(kw[n], "float64") for n in "QKVG"))
    dq = g.grad_query.rounded.numpy()
    assert (dq[0, 0, 1] == 0).all() and (dq[0, 0, 2] == 0).all()  # dS rows zero
    kw = CASES["constant_k"](np.random.default_rng(1))
    g = BW(*(er.asarray(kw[n], "float32") for n in "QKVG"), rounding="toward_positive")
    assert (g.grad_query.rounded.numpy()[..., 0] == 0).all()


def test_masked_keys_exact_zero():
    rng = np.random.default_rng(3)
    q, k, v, gr = (_rand(rng, 1, 1, 2, 2) for _ in range(4))
    mask = np.array([[True, False], [True, False]])
    g = BW(*(er.asarray(a, "float32") for a in (q, k, v, gr)), attn_mask=mask)
    assert (g.grad_key.rounded.numpy()[0, 0, 1] == 0).all()
    assert (g.grad_value.rounded.numpy()[0, 0, 1] == 0).all()


def test_swapped_rows_cancel_merge():
    """Two identical rows with opposite q_ie coefficients... merged exactly: rows 0 and 1 have
    the same scores, dP; their dK terms q_0e + q_1e cancel where q's column sums to zero."""
    q = np.array([[[[1.0, 0.0], [1.0, 0.0]]]])
    k = np.array([[[[1.0, 0.5], [-0.5, 2.0]]]])
    v = np.array([[[[1.0], [2.0]]]])
    gr = np.array([[[[1.0], [1.0]]]])
    g = BW(*(er.asarray(a, "float64") for a in (q, k, v, gr)), scale=1.0)
    assert (g.grad_key.rounded.numpy()[..., 1] == 0).all()
    assert check("float64", q, k, v, gr, scale=1.0, modes=("nearest_even",)) == []


def _cyclic(n):
    """Row ``i`` scores key ``j`` by ``a[(j - i) % n]`` (q one-hot, k circulant): every row
    has the same weights, permuted, so ``sum_i P_ij = 1``: with ``dO`` all ones,
    ``grad_value`` is exactly 1 though each term is transcendental."""
    a = [0.5 * t - 1.0 for t in range(n)]
    q = np.eye(n)[None, None]
    k = np.array([[a[(j - i) % n] for i in range(n)] for j in range(n)])[None, None]
    v = np.arange(1.0, n + 1)[None, None, :, None]
    return q, k, v, np.ones((1, 1, n, 1))


def test_exact_case_of_several_rows_is_recognised():
    """Swapped and cyclic scores: the exponential polynomials' check (Lindemann-Weierstrass)
    proves grad_value = 1, where Ziv's loop alone would never decide."""
    q = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    v = np.array([[[1.0], [2.0]]])
    gr = np.array([[[1.0], [1.0]]])
    for dt in ("float32", "float64"):
        g = BW(*(er.asarray(a, dt) for a in (q, q, v, gr)), rounding="toward_negative")
        assert g.grad_value.rounded.numpy().tolist() == [[[1.0], [1.0]]]
    # swapped scores and opposite dP differences: dS_10 = -dS_00, and q's column 2 equal in
    # both rows, so grad_key[:, 2] = 0 exactly (sigma = 1/sqrt(3): only 0 can be exact)
    q = np.array([[[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]])
    k = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    g = BW(*(er.asarray(a, "float32") for a in (q, k, v, np.array([[[1.0], [-1.0]]]))),
           rounding="toward_negative")
    dk = g.grad_key.rounded.numpy()
    assert (dk[..., 2] == 0).all() and (dk[..., :2] != 0).all()
    ops = _cyclic(4)
    g = BW(*(er.asarray(a, "bfloat16") for a in ops), scale=1.0, rounding="toward_zero")
    assert (g.grad_value.rounded.numpy() == 1).all()


def test_unrecognised_exact_case_raises():
    """Eight cyclic rows of eight keys: the check's common denominator has 8**8 monomials, past
    its limit (docs/attention.md, "Backward"): a clear error at the Ziv cap, never a guess."""
    with pytest.raises(ArithmeticError, match=r"grad_value at \(batch entry 0.*row 0, column 0"):
        BW(*(er.asarray(a, "float32") for a in _cyclic(8)), scale=1.0)


def test_broadcast_batch_sums_copies():
    rng = np.random.default_rng(5)
    q = _rand(rng, 2, 3, 2)
    k, v = _rand(rng, 1, 3, 2), _rand(rng, 1, 3, 2)
    gr = _rand(rng, 2, 3, 2)
    g = BW(*(er.asarray(a, "float32") for a in (q, k, v, gr)))
    assert g.grad_key.rounded.shape == (1, 3, 2)
    # the copies' sum against the oracle: the same per batch entry, added exactly
    ks = np.broadcast_to(k, (2, 3, 2))
    vs = np.broadcast_to(v, (2, 3, 2))
    w = oracle("float32", q[:, None], ks[:, None], vs[:, None], gr[:, None])
    f = FORMATS["float32"]
    tot = _add(w[1][0, 0, 0, 0], w[1][1, 0, 0, 0])
    assert _round(tot, f, "nearest_even") == \
        g.grad_key.rounded.numpy()[0, 0, 0]


def test_nan_rows():
    q = np.array([[[1.0, np.nan], [1.0, 0.0]]])
    k = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    v = np.array([[[1.0], [2.0]]])
    gr = np.array([[[1.0], [1.0]]])
    g = BW(*(er.asarray(a, "float32") for a in (q, k, v, gr)))
    assert np.isnan(g.grad_query.rounded.numpy()[0, 0]).all()
    assert not np.isnan(g.grad_query.rounded.numpy()[0, 1]).any()
    assert np.isnan(g.grad_key.rounded.numpy()).all()  # both keys read by the NaN row
    assert g.grad_key.covers(g.grad_key.rounded).all()


def test_errors():
    a = er.asarray(np.ones((1, 2, 2)), "float32")
    with pytest.raises(ValueError, match="grad must have the output's shape"):
        BW(a, a, a, er.asarray(np.ones((1, 2, 3)), "float32"))
    with pytest.raises(ValueError, match="dropout_p"):
        BW(a, a, a, a, dropout_p=0.1)
    with pytest.raises(ValueError, match="one format"):
        BW(a, er.asarray(np.ones((1, 2, 2)), "float64"), a, a)
    assert er.scaled_dot_product_attention.spec.backward is BW


def test_covers_itself_every_format():
    rng = np.random.default_rng(9)
    ops = [_rand(rng, 1, 2, 3, 3), _rand(rng, 1, 2, 4, 3), _rand(rng, 1, 2, 4, 3),
           _rand(rng, 1, 2, 3, 3)]
    for dt in FMTS:
        g = BW(*(er.asarray(x, dt) for x in ops), is_causal=True)
        for name in ("grad_query", "grad_key", "grad_value"):
            assert getattr(g, name).covers(getattr(g, name).rounded).all()


def test_chunked_and_whole_agree(monkeypatch):
    """The first tier and the model run in chunks of the batch (their (B, L, S) temporaries):
    one batch entry a chunk gives the same gradients and tolerances."""
    from exactref._exact import _attention_backward as ex
    from exactref.linalg import _attention_backward as lin

    rng = np.random.default_rng(21)
    ops = [er.asarray(_rand(rng, 2, 2, 3, 4), "bfloat16"),
           er.asarray(_rand(rng, 2, 1, 5, 4), "bfloat16"),
           er.asarray(_rand(rng, 2, 1, 5, 4), "bfloat16"),
           er.asarray(_rand(rng, 2, 2, 3, 4), "bfloat16")]
    whole = BW(*ops, enable_gqa=True, is_causal=True)
    monkeypatch.setattr(ex, "attention_chunk", lambda L, S: 1)
    monkeypatch.setattr(lin, "attention_chunk", lambda L, S: 1)
    parts = BW(*ops, enable_gqa=True, is_causal=True)
    for name in ("grad_query", "grad_key", "grad_value"):
        a, b = getattr(whole, name), getattr(parts, name)
        assert np.array_equal(a.rounded.numpy(), b.rounded.numpy())
        for x, y in zip(a._bounds()[0][:3], b._bounds()[0][:3], strict=True):
            assert np.array_equal(x, y)
