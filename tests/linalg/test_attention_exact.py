"""scaled_dot_product_attention's rounded values against an independent mpmath oracle
(attention_oracle.py: no exactref code), in every mode and float64/float32/bfloat16/float16, on
random and adversarial inputs; its signature's checks and errors."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import exactref as er
from exactref._formats import FORMATS

sys.path.insert(0, str(Path(__file__).parent))
from attention_oracle import MODES, attention_row, round_value  # noqa: E402

FMTS = ("float64", "float32", "bfloat16", "float16")


def _allowed(mask, causal, b, i, S):
    if causal:
        return [j for j in range(S) if j <= i], None
    if mask is None:
        return list(range(S)), None
    if mask.dtype == bool:
        return [j for j in range(S) if mask[b, i, j]], None
    keep = [j for j in range(S) if mask[b, i, j] != -np.inf]
    return keep, [float(mask[b, i, j]) for j in keep]


def check(dt, Q, K, V, mask=None, causal=False, scale=None, modes=MODES):
    """Compare every output in every mode with the oracle; returns the mismatches."""
    __tracebackhide__ = True
    f = FORMATS[dt]
    Qa, Ka, Va = (er.asarray(a, dt) for a in (Q, K, V))
    Qn, Kn, Vn = (np.asarray(a.numpy(), dtype=np.float64) for a in (Qa, Ka, Va))
    B, L, E = Qn.shape
    S, Ev = Vn.shape[1:]
    m = None
    if mask is not None:
        m = mask if mask.dtype == bool else np.asarray(er.asarray(mask, dt).numpy(), np.float64)
    rows = {}
    for b in range(B):
        for i in range(L):
            keep, fm = _allowed(m, causal, b, i, S)
            if not keep:
                rows[b, i] = [math.nan] * Ev
                continue
            rows[b, i] = (Qn[b, i].tolist(), [Kn[b, j].tolist() for j in keep],
                          [Vn[b, j].tolist() for j in keep],
                          fm if fm is not None else [0.0] * len(keep), scale)
    bad = []
    for mode in modes:
        arg = mask if mask is None or mask.dtype == bool else er.asarray(mask, dt)
        got = er.scaled_dot_product_attention(Qa, Ka, Va, attn_mask=arg, is_causal=causal,
                                              scale=scale, rounding=mode)
        got = np.asarray(got.rounded.numpy(), dtype=np.float64)
        for (b, i), args in rows.items():
            for col in range(Ev):
                want = _oracle(args, col, f, mode)
                g = got[b, i, col]
                if not (want == g or (math.isnan(want) and math.isnan(g))):
                    bad.append((mode, b, i, col, want, g))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"


def _oracle(args, col, f, mode):
    """The oracle's rounded output, its precision raised where a value lies too close to a
    rounding boundary (a float plus a tiny amount: one key far above the others)."""
    if isinstance(args, list):
        return args[col]
    for prec in (240, 1500, 6000):
        x = attention_row(*args, prec=prec)[col]
        try:
            return round_value(x, f.precision, f.emin, f.max_finite, mode, prec)
        except ValueError:
            continue
    raise AssertionError(f"the oracle could not round {args!r}")


def _rand(rng, shape, scale=1.0):
    return rng.standard_normal(shape) * scale


@pytest.mark.parametrize("dt", FMTS)
def test_random(dt):
    rng = np.random.default_rng(1)
    n = 2 if dt == "float64" else 3
    Q, K, V = _rand(rng, (n, 3, 5)), _rand(rng, (n, 6, 5)), _rand(rng, (n, 6, 3))
    check(dt, Q, K, V)


@pytest.mark.parametrize("dt", FMTS)
def test_huge_logits_and_scale(dt):
    rng = np.random.default_rng(2)
    big = 30.0 if dt in ("float16",) else 200.0
    Q, K, V = _rand(rng, (2, 3, 4), big), _rand(rng, (2, 5, 4), 3.0), _rand(rng, (2, 5, 2))
    check(dt, Q, K, V, modes=("nearest_even", "toward_negative", "odd"))
    check(dt, Q, K, V, scale=0.3, modes=("nearest_even", "toward_zero"))


@pytest.mark.parametrize("dt", FMTS)
def test_causal_and_masks(dt):
    rng = np.random.default_rng(3)
    Q, K, V = _rand(rng, (2, 4, 3)), _rand(rng, (2, 4, 3)), _rand(rng, (2, 4, 2))
    check(dt, Q, K, V, causal=True)
    bm = rng.random((2, 4, 4)) < 0.6
    bm[0, 1] = False  # a fully masked row: NaN
    bm[1, 2] = [False, True, False, False]  # one key: that v row exactly
    check(dt, Q, K, V, mask=bm)
    fmask = np.where(rng.random((2, 4, 4)) < 0.3, -np.inf, rng.standard_normal((2, 4, 4)))
    check(dt, Q, K, V, mask=fmask, modes=("nearest_even", "toward_positive"))


@pytest.mark.parametrize("dt", FMTS)
def test_exact_cases(dt):
    rng = np.random.default_rng(4)
    V = _rand(rng, (1, 5, 3))
    V[0, :, 1] = 0.75  # a constant column: 0.75 exactly
    V[0, :, 2] = [1.0, -1.0, 2.0, -2.0, 0.0]  # mean 0 where the scores are equal
    Qz = np.zeros((1, 2, 4))  # every score equal: the mean of the v rows
    K = _rand(rng, (1, 5, 4))
    check(dt, Qz, K, V)
    # equal scores by symmetry: two keys equal, and the rest masked
    K2 = K.copy()
    K2[0, 1] = K2[0, 0]
    Q = _rand(rng, (1, 2, 4))
    bm = np.zeros((1, 2, 5), bool)
    bm[0, :, :2] = True
    check(dt, Q, K2, V, mask=bm)
    # the mean of 3 values: 1/3 rounds in every mode
    V3 = np.array([[[1.0], [0.0], [0.0]]])
    check(dt, np.zeros((1, 1, 2)), _rand(rng, (1, 3, 2)), V3)
    # E a power of 4: the scale 1/2 is rational; scores equal through it
    K4 = np.array([[[1.0, 0, 0, 0], [0.5, 0, 0, 0]]])
    check(dt, np.array([[[1.0, 0, 0, 0]]]), K4, np.array([[[1.0], [1.0]]]))
    # E = 9, a perfect square but no power of 4: the scale 1/3 is rational but no float, and a
    # float mask makes 9/3 + 0 and 6/3 + 1 equal (it raised an AssertionError: the scale was
    # taken as irrational, so the equal scores were never grouped)
    K9 = np.array([[[1.0] * 9, [1.0] * 6 + [0.0] * 3, [0.0] * 9]])
    V9 = np.array([[[1.0, 2.0], [2.0, 0.5], [1.0, 1.0]]])
    mask9 = np.array([[[0.0, 1.0, -np.inf], [0.0, 1.0, 0.0]]])
    check(dt, np.ones((1, 2, 9)), K9, V9, mask=mask9)


@pytest.mark.parametrize("dt", ("float32", "bfloat16"))
def test_specials(dt):
    Q = np.array([[[1.0, 2.0], [np.nan, 0.0], [1.0, 1.0]]])
    K = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    V = np.array([[[np.inf, 1.0], [2.0, np.nan]]])
    r = er.scaled_dot_product_attention(er.asarray(Q, dt), er.asarray(K, dt), er.asarray(V, dt))
    got = np.asarray(r.rounded.numpy(), np.float64)
    assert got[0, 0, 0] == np.inf and np.isnan(got[0, 0, 1])
    assert np.isnan(got[0, 1]).all()


def test_gqa_and_broadcast():
    rng = np.random.default_rng(5)
    Q = rng.standard_normal((1, 4, 3, 4)).astype(np.float32)
    K = rng.standard_normal((1, 2, 5, 4)).astype(np.float32)
    V = rng.standard_normal((1, 2, 5, 2)).astype(np.float32)
    r = er.scaled_dot_product_attention(Q, K, V, enable_gqa=True)
    r2 = er.scaled_dot_product_attention(Q, np.repeat(K, 2, axis=1), np.repeat(V, 2, axis=1))
    assert r.rounded.numpy().tobytes() == r2.rounded.numpy().tobytes()
    # torch's repeat_interleave: query head h reads key head h // 2
    one = er.scaled_dot_product_attention(Q[:, 1:2], K[:, 0:1], V[:, 0:1])
    assert np.array_equal(r.rounded.numpy()[:, 1:2], one.rounded.numpy())


def test_errors():
    q = np.zeros((2, 3, 4), np.float32)
    k = np.zeros((2, 5, 4), np.float32)
    v = np.zeros((2, 5, 2), np.float32)
    sdpa = er.scaled_dot_product_attention
    with pytest.raises(ValueError, match="last dimension"):
        sdpa(q, np.zeros((2, 5, 3), np.float32), v)
    with pytest.raises(ValueError, match="one value row per key"):
        sdpa(q, k, np.zeros((2, 4, 2), np.float32))
    with pytest.raises(ValueError, match="does not broadcast"):
        sdpa(q, k, v, attn_mask=np.ones((4, 5), bool))
    with pytest.raises(ValueError, match="dropout"):
        sdpa(q, k, v, dropout_p=0.1)
    with pytest.raises(ValueError, match="not both"):
        sdpa(q, k, v, attn_mask=np.ones((3, 5), bool), is_causal=True)
    with pytest.raises(ValueError, match="dividing"):
        sdpa(np.zeros((1, 3, 2, 4), np.float32), np.zeros((1, 2, 5, 4), np.float32),
             np.zeros((1, 2, 5, 2), np.float32), enable_gqa=True)
    with pytest.raises(ValueError, match="one format"):
        sdpa(q, k, v.astype(np.float64))
    with pytest.raises(ValueError, match="do not broadcast"):
        sdpa(np.zeros((1, 4, 3, 4), np.float32), np.zeros((1, 2, 5, 4), np.float32),
             np.zeros((1, 2, 5, 2), np.float32))


def test_docs_table_is_the_registry():
    docs = Path(__file__).resolve().parents[2] / "docs" / "attention.md"
    assert er.ops.markdown_table("attention") in docs.read_text()


def test_exp_enclosure_holds():
    """The first tier's vectorized exponential encloses e**x (mpmath at 200 bits), near 0,
    across the range and into the subnormals."""
    import mpmath

    from exactref._exact._attention import exp_enclosure

    rng = np.random.default_rng(6)
    x = np.concatenate([-rng.exponential(40.0, 3000), rng.uniform(-1, 1, 1000),
                        rng.uniform(-746, -700, 300), [0.0, -0.0, -745.1, -708.4, 1.0, 5e-324]])
    lo, hi = exp_enclosure(x)
    with mpmath.workprec(200):
        for a, b, c in zip(x.tolist(), lo.tolist(), hi.tolist(), strict=True):
            e = mpmath.exp(mpmath.mpf(a))
            assert mpmath.mpf(b) <= e <= mpmath.mpf(c), (a, b, c)
            if e > 1e-300:
                assert c - b <= e * 2.0 ** -42, (a, b, c)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_random_sweep(seed):
    rng = np.random.default_rng(100 + seed)
    dt = FMTS[seed % 4]
    L, S, E, Ev = (int(v) for v in rng.integers(1, 7, 4))
    spread = float(rng.choice([0.5, 2.0, 20.0]))
    Q, K, V = _rand(rng, (2, L, E), spread), _rand(rng, (2, S, E)), _rand(rng, (2, S, Ev))
    mask = rng.random((2, L, S)) < 0.7 if seed % 3 == 0 else None
    check(dt, Q, K, V, mask=mask, causal=seed % 3 == 1 and L <= S,
          scale=None if seed % 2 else float(rng.uniform(0.1, 2)))


def test_chunks_agree(monkeypatch):
    """The batch is processed in chunks (bounded memory) and the first tier in blocks of
    rows: one entry per chunk and one row per block give the same values and tolerance."""
    import exactref._exact._attention as xa

    rng = np.random.default_rng(8)
    Q, K, V = (rng.standard_normal((3, 2, 5, 4)).astype(np.float32) for _ in range(3))
    m = rng.random((3, 2, 5, 5)) < 0.6
    whole = er.scaled_dot_product_attention(Q, K, V, attn_mask=m)
    monkeypatch.setattr(xa, "attention_chunk", lambda L, S: 1)
    monkeypatch.setattr(xa, "_BLOCK", 1)
    parts = er.scaled_dot_product_attention(Q, K, V, attn_mask=m)
    assert whole.rounded.numpy().tobytes() == parts.rounded.numpy().tobytes()
    assert np.array_equal(whole.tolerance_ulps(), parts.tolerance_ulps(), equal_nan=True)


def test_empty_shapes():
    z = np.zeros
    r = er.scaled_dot_product_attention(z((1, 3, 4), np.float32), z((1, 0, 4), np.float32),
                                        z((1, 0, 2), np.float32))
    assert np.isnan(np.asarray(r.rounded.numpy(), np.float64)).all()  # no key: NaN
    assert r.tolerance_ulps().shape == (1, 3, 2)
    r = er.scaled_dot_product_attention(z((1, 0, 4), np.float32), z((1, 2, 4), np.float32),
                                        z((1, 2, 2), np.float32))
    assert r.rounded.shape == (1, 0, 2) and r.tolerance_ulps().shape == (1, 0, 2)


def test_dtype_is_the_output_format():
    """``dtype=`` as on the elementwise ops: the exact value of the operands' own numbers
    rounded once into it (the same value as from the numbers held in that format), the
    compute format never narrower than the operands."""
    rng = np.random.default_rng(8)
    q, k, v = (er.asarray(rng.standard_normal((2, 3, 4)), "float32") for _ in range(3))
    sdpa = er.scaled_dot_product_attention
    wide = sdpa(q, k, v, dtype="float64")
    same = sdpa(*(er.asarray(t.numpy().astype(np.float64), "float64") for t in (q, k, v)))
    assert wide.rounded.dtype.name == "float64"
    assert np.array_equal(wide.rounded.numpy(), same.rounded.numpy())
    narrow = sdpa(q, k, v, dtype="bfloat16")
    assert narrow.rounded.dtype.name == "bfloat16"
    assert narrow.covers(narrow.rounded.numpy()).all()
    with pytest.raises(ValueError, match="narrower than the operands"):
        sdpa(q, k, v, dtype="bfloat16", compute="bfloat16")
    with pytest.raises(ValueError, match="not a real floating format"):
        sdpa(q, k, v, dtype="int32")
