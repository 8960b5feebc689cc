"""er.linear: every element the exact ``sum_l x[i, l] * w[o, l] + b[o]`` rounded once, against
an oracle that shares no code with exactref (Python integers and MPFR, ``mpfr_oracle``), in
every format and mode, on random and adversarial data; its errors; its tolerance models against
implementations simulated step by step (sequential with the bias first or last, pairwise,
blocked, bfloat16 inputs with float32 accumulation, MPFR directed modes) and one outside them
(bfloat16 accumulation where float32 is declared)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from mpfr_oracle import FMTS, Rounder, round_terms, same

import exactref as er

R = er.Rounding
F32, F64, BF16 = np.float32, np.float64, ml_dtypes.bfloat16
MODES = [m for m in R if m is not R.ODD]
FORMATS = ["float64", "float32", "bfloat16", "float16", "float8_e4m3fn"]


def _vals(fmt, shape, rng, scale=1.0):
    return er.asarray(rng.standard_normal(shape) * scale, fmt).numpy()


def _oracle_linear(x, w, b, fmt, mode):
    """Direct loops: one exact sum per output element (bias as a one-factor term)."""
    x2 = x.reshape(-1, x.shape[-1])
    w2 = w.reshape(-1, w.shape[-1])
    out = np.empty((x2.shape[0], w2.shape[0]))
    for i in range(x2.shape[0]):
        for o in range(w2.shape[0]):
            terms = [(float(x2[i, j]), float(w2[o, j])) for j in range(x2.shape[1])]
            if b is not None:
                terms.append((float(np.broadcast_to(b, (w2.shape[0],))[o]),))
            out[i, o] = round_terms(terms, FMTS[fmt], mode)
    return out.reshape(x.shape[:-1] + ((w.shape[0],) if w.ndim == 2 else ()))


def _check(res, want):
    got = res.rounded.numpy().astype(F64).reshape(-1)
    for g, v in zip(got, want.reshape(-1), strict=True):
        assert same(float(g), float(v)), (g, v)


# ---------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", FORMATS)
def test_random_matches_oracle(fmt, mode):
    rng = np.random.default_rng([3, FORMATS.index(fmt), MODES.index(mode)])
    x = _vals(fmt, (2, 3, 7), rng)
    w = _vals(fmt, (4, 7), rng)
    b = _vals(fmt, (4,), rng)
    _check(er.linear(x, w, b, rounding=mode), _oracle_linear(x, w, b, fmt, mode))
    _check(er.linear(x, w, rounding=mode), _oracle_linear(x, w, None, fmt, mode))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "float64"])
def test_adversarial_matches_oracle(fmt, mode):
    """Cancellation (the bias cancels the products), magnitudes near overflow and underflow,
    signed zeros, infinities and NaN."""
    f = er.dtype(fmt)
    big, tiny = f.max_finite, f.smallest_subnormal
    x = np.array([[1e4, 1.0, -1e4, 2.0**-20],
                  [big / 2, big / 2, 0.0, 0.0],
                  [tiny, tiny, -tiny, 1.0],
                  [-0.0, -0.0, -0.0, -0.0],
                  [np.inf, 1.0, 0.0, 0.0],
                  [np.nan, 0.0, 0.0, 0.0]])
    w = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 0.5, 2.0], [0.0, 0.0, 0.0, 0.0]])
    b = np.array([-1.0, 0.0, -0.0])
    x, w, b = (er.asarray(v, fmt).numpy() for v in (x, w, b))
    with np.errstate(all="ignore"):
        want = _oracle_linear(x, w, b, fmt, mode)
        _check(er.linear(x, w, b, rounding=mode), want)


def test_vector_weight_and_scalar_bias():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    r = er.linear(x, np.array([1.0, -1.0]), np.array(0.5))
    assert r.rounded.shape == (2,) and r.rounded.tolist() == [-0.5, -0.5]
    assert er.linear(np.array([1.0, 2.0]), np.ones((3, 2))).rounded.shape == (3,)


def test_bias_is_one_exact_term():
    # 1 + 2**-30 - 1 with the bias: float32 would lose the 2**-30 in any order that adds the
    # bias last after rounding; the exact value keeps it
    x = er.asarray([[1.0, 2.0**-30]], "float32")
    w = er.asarray([[1.0, 1.0]], "float32")
    r = er.linear(x, w, er.asarray([-1.0], "float32"))
    assert r.rounded.tolist() == [[2.0**-30]]


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("args, match", [
    ((np.ones((2, 3)), np.ones((4, 5))), r"weight's last dimension \(5\) must equal x's "
                                         r"in_features \(3\)"),
    ((np.ones((2, 3)), np.ones((4, 3, 1))), "weight must be 1-D"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.ones(5)), r"bias of shape \(5,\) does not "
                                                      r"broadcast"),
    ((np.float64(2.0), np.ones((4, 3))), r"x has shape \(\)"),
    ((np.ones((2, 3), np.int32), np.ones((4, 3), np.int32)), "real floating formats"),
])
def test_errors(args, match):
    with pytest.raises(ValueError, match=match):
        er.linear(*args)


def test_bad_bias_at():
    with pytest.raises(ValueError, match="bias_at='middle'"):
        er.linear(np.ones((1, 2)), np.ones((1, 2)), bias_at="middle")


# ------------------------------------------------------------------------------- models
def _bf16_data(rng, rows=6, k=64, out=5, cancel=False):
    x = rng.standard_normal((rows, k))
    w = rng.standard_normal((out, k))
    if cancel:
        x[:, k // 2:] = -x[:, :k // 2]
        w[:, k // 2:] = w[:, :k // 2] * (1 + 2.0**-6)
    b = rng.standard_normal(out) * 4
    return (er.asarray(v, "bfloat16").numpy() for v in (x, w, b))


def _sim(x, w, b, acc, order, bias_at, round_out=BF16):
    """A linear layer accumulated in ``acc`` (numpy arithmetic: IEEE round to nearest), the
    products in the term order ``order`` (a permutation of range(k)), the bias first or last,
    then rounded once into the output format."""
    P = x.astype(F64)[:, None, :] * w.astype(F64)[None, :, :]  # exact for bfloat16 inputs
    s = np.broadcast_to(b.astype(acc), P.shape[:2]).copy() if bias_at == "start" else \
        np.zeros(P.shape[:2], acc)
    for j in order:
        s = (s.astype(F64) + P[:, :, j].astype(acc).astype(F64)).astype(acc)
    if bias_at == "end":
        s = (s.astype(F64) + b.astype(F64)).astype(acc)
    return s.astype(round_out)


def _blocked(x, w, b, acc, block):
    """im2col-free blocked GEMM: partial sums of ``block`` products each (sequential), the
    partials added in order, the bias at the end."""
    P = x.astype(F64)[:, None, :] * w.astype(F64)[None, :, :]
    k = P.shape[-1]
    total = np.zeros(P.shape[:2], acc)
    for s0 in range(0, k, block):
        part = np.zeros(P.shape[:2], acc)
        for j in range(s0, min(s0 + block, k)):
            part = (part.astype(F64) + P[:, :, j]).astype(acc)
        total = (total.astype(F64) + part.astype(F64)).astype(acc)
    return (total.astype(F64) + b.astype(F64)).astype(acc).astype(BF16)


@pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")
@pytest.mark.parametrize("cancel", [False, True], ids=["random", "cancel"])
def test_bf16_float32_accumulation_covered(cancel):
    rng = np.random.default_rng(int(cancel))
    x, w, b = _bf16_data(rng, cancel=cancel)
    k = x.shape[1]
    ref = er.linear(x, w, b)
    seq = {at: er.linear(x, w, b, order="sequential", bias_at=at) for at in ("start", "end")}
    pw = er.linear(x, w, b, order="pairwise")
    fwd = list(range(k))
    for at in ("start", "end"):
        out = _sim(x, w, b, F32, fwd, at)
        assert ref.covers(out).all() and seq[at].covers(out).all()
        assert er.linear(x, w, b, order="sequential").covers(out).all()  # either placement
        for _ in range(3):
            assert ref.covers(_sim(x, w, b, F32, rng.permutation(k), at)).all()
    for block in (8, 16, 24):
        assert ref.covers(_blocked(x, w, b, F32, block)).all()
    # pairwise tree, bias added at the end
    P = (x.astype(F64)[:, None, :] * w.astype(F64)[None, :, :]).astype(F32)
    while P.shape[-1] > 1:
        P = (P[..., 0::2] + P[..., 1::2]).astype(F32)
    out = (P[..., 0] + b.astype(F32)).astype(F32).astype(BF16)
    assert pw.covers(out).all() and ref.covers(out).all()
    # the float32 result itself, if the kernel kept it (dtype=float32 output)
    assert er.linear(x, w, b, dtype="float32", order="sequential", bias_at="end").covers(
        _sim(x, w, b, F32, fwd, "end", round_out=F32)).all()


@pytest.mark.parametrize("mode", [R.TOWARD_POSITIVE, R.TOWARD_NEGATIVE, R.TOWARD_ZERO],
                         ids=lambda m: m.value)
def test_directed_accumulation_covered(mode):
    """Sequential float32 accumulation with every step rounded in ``mode`` (MPFR), then the
    output rounded in ``mode``: covered by the same mode's model."""
    rng = np.random.default_rng(7)
    x = er.asarray(rng.standard_normal((3, 24)), "float32").numpy()
    w = er.asarray(rng.standard_normal((2, 24)), "float32").numpy()
    b = er.asarray(rng.standard_normal(2), "float32").numpy()
    rd = Rounder(FMTS["float32"], mode)
    out = np.empty((3, 2))
    for i in range(3):
        for o in range(2):
            s = float(b[o])  # bias as the initial value
            for j in range(24):
                s = rd.fma(float(x[i, j]), float(w[o, j]), s)
            out[i, o] = s
    out = out.astype(F32)
    ref = er.linear(x, w, b, rounding=mode)
    assert ref.covers(out).all()
    assert er.linear(x, w, b, rounding=mode, order="sequential", bias_at="start",
                     fused=True).covers(out).all()


def test_bf16_accumulation_caught():
    """bfloat16 accumulation where float32 is declared: 1 + 64 * 2**-9 is 1.125 exactly; a
    bfloat16 accumulator stays at 1 (each 2**-9 is a quarter of its ulp)."""
    x = np.full((1, 65), 2.0**-9)
    x[0, 0] = 1.0
    x = er.asarray(x, "bfloat16").numpy()
    w = er.asarray(np.ones((1, 65)), "bfloat16").numpy()
    b = er.asarray([0.0], "bfloat16").numpy()
    ref = er.linear(x, w, b)
    assert ref.rounded.tolist() == [[1.125]]
    wrong = _sim(x, w, b, BF16, range(65), "start")
    assert wrong.astype(F64).tolist() == [[1.0]]
    assert not ref.covers(wrong).all()
    assert ref.covers(_sim(x, w, b, F32, range(65), "start")).all()


def test_bias_placement_widens_only_as_declared():
    """``bias_at=None`` allows both placements: its interval holds each one's, and a bias of
    the products' size makes the sequential bounds differ (first: k roundings on the bias;
    last: one more rounding on every product)."""
    rng = np.random.default_rng(5)
    x = er.asarray(rng.random((4, 16)), "float32").numpy()
    w = er.asarray(rng.random((3, 16)), "float32").numpy()
    b = er.asarray(rng.random(3) * 16, "float32").numpy()
    tol = {at: er.linear(x, w, b, order="sequential", bias_at=at).tolerance().numpy()
           for at in ("start", "end", None)}
    assert (tol[None] >= tol["start"]).all() and (tol[None] >= tol["end"]).all()
    assert not np.array_equal(tol["start"], tol["end"])
    assert (er.linear(x, w, b).tolerance().numpy() >= tol[None]).all()


@pytest.mark.parametrize("order", ["sequential", "any"])
def test_bound_nearly_attained(order):
    """1 followed by k terms just under half an ulp of 1: sequential float32 accumulation
    rounds every step down to 1 and loses ``0.996 k`` of 2**-24, within a few percent of the
    bound: a bound half as large would not cover it (the test notices a loosened model)."""
    k = 100
    t = 2.0**-24 * (1 - 2.0**-8)
    x = np.array([[1.0] + [t] * k], F32)
    w = np.ones((1, k + 1), F32)
    sim = np.array([[1.0]], F32)
    s = F32(0)
    for v in x[0]:
        s = F32(s + v)
    assert s == 1.0
    r = er.linear(x, w, order=order)
    assert r.covers(sim).all()
    err = float(r.rounded.numpy()[0, 0]) - 1.0
    assert err > 0 and float(r.tolerance().numpy()[0, 0]) < 1.1 * err


# ------------------------------------------------------------------------ blocked order
def test_blocked_roundings_reduce_to_sequential():
    from exactref.linalg._conv import blocked_roundings

    k = 37
    seq = k - np.maximum(np.arange(1, k + 1), 2) + 1
    assert blocked_roundings(k, k)[0].tolist() == seq.tolist()
    assert blocked_roundings(k, 1)[0].tolist() == seq.tolist()
    # blocks of 4, 4, 2: inside, the first two terms share the first rounding (3, 3, 2, 1 /
    # 3, 3, 2, 1 / 1, 1); the block sums then pass through 2, 2 and 1 more
    d, nb = blocked_roundings(10, 4)
    assert nb == 3
    assert d.tolist() == [3 + 2, 3 + 2, 2 + 2, 1 + 2, 3 + 2, 3 + 2, 2 + 2, 1 + 2, 1 + 1, 1 + 1]
    rng = np.random.default_rng(9)
    x = er.asarray(rng.standard_normal((3, 37)), "float32").numpy()
    w = er.asarray(rng.standard_normal((2, 37)), "float32").numpy()
    assert np.array_equal(er.linear(x, w, order="blocked", block=37).tolerance().numpy(),
                          er.linear(x, w, order="sequential").tolerance().numpy())


def test_blocked_bound_nearly_attained():
    """1 then 199 terms of 2**-26 (1 - 2**-8), in blocks of 4: each block of small terms sums
    exactly to just under half an ulp of 1, and every addition to 1 rounds down, losing 49.75
    ulps of 2**-24; the blocked bound (52 roundings for the first term) covers it within 3%,
    where the sequential bound allows 199."""
    t = 2.0**-26 * (1 - 2.0**-8)
    x = np.array([[1.0] + [t] * 199], F32)
    w = np.ones((1, 200), F32)
    s = F32(0)
    for b0 in range(0, 200, 4):
        part = F32(0)
        for v in x[0, b0:b0 + 4]:
            part = F32(part + v)
        s = F32(s + part)
    assert s == 1.0
    r = er.linear(x, w, order="blocked", block=4)
    assert r.covers(np.array([[s]], F32)).all()
    err = float(r.rounded.numpy()[0, 0]) - 1.0
    tol = float(r.tolerance().numpy()[0, 0])
    assert err > 0 and tol < 1.1 * err
    assert float(er.linear(x, w, order="sequential").tolerance().numpy()[0, 0]) > 3 * tol
    assert "blocked order (blocks of 4" in r.models[1] and r.details["order"] == "blocked"


@pytest.mark.parametrize("kw, match", [
    (dict(order="blocked"), "order='blocked' needs block="),
    (dict(order="blocked", block=0), "block=0"),
    (dict(block=8), "pass order='blocked' with it"),
])
def test_blocked_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        er.linear(np.ones((1, 4)), np.ones((2, 4)), **kw)
