"""The reductions' tolerance models are sound and they catch: implementations simulated step by
step (sequential, pairwise, blocked with SIMD lanes, random order, two-pass, Welford, Chan's
merges; numpy's IEEE float32/float64 arithmetic for round-to-nearest, MPFR through
``mpfr_oracle.Rounder`` for the directed modes) inside each model are covered; implementations
outside it (bfloat16 accumulation where float32 is declared, the one-pass textbook variance)
are not."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from mpfr_oracle import FMTS, Rounder

import exactref as er

# simulations of the models on cancelling data are weak checks on purpose
pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")

F32, F64, BF16 = np.float32, np.float64, ml_dtypes.bfloat16


# --------------------------------------------------------------------------- simulations
def seq_sum(x, acc):
    """Left-to-right sums of each row of ``x`` in dtype ``acc`` (every step rounded)."""
    s = np.zeros(x.shape[0], acc)
    for j in range(x.shape[1]):
        s = (s.astype(F64) + x[:, j].astype(F64)).astype(acc) if acc is BF16 else \
            (s + x[:, j].astype(acc)).astype(acc)
    return s


def pairwise_sum(x, acc):
    x = x.astype(acc)
    while x.shape[1] > 1:
        if x.shape[1] % 2:
            x = np.concatenate([x, np.zeros((x.shape[0], 1), acc)], axis=1)
        x = (x[:, 0::2].astype(F64) + x[:, 1::2].astype(F64)).astype(acc) if acc is BF16 \
            else (x[:, 0::2] + x[:, 1::2]).astype(acc)
    return x[:, 0]


def blocked_sum(x, acc, block=16, lanes=4):
    """SIMD-style: ``lanes`` interleaved partial sums within each block of ``block`` values,
    the lanes added, then the blocks' sums added left to right."""
    sums = []
    for b0 in range(0, x.shape[1], block):
        part = x[:, b0:b0 + block]
        lane = [seq_sum(part[:, j::lanes], acc) for j in range(min(lanes, part.shape[1]))]
        sums.append(pairwise_sum(np.stack(lane, axis=1), acc))
    return seq_sum(np.stack(sums, axis=1), acc)


def two_pass(x, acc, summer=seq_sum, correction=1):
    n = x.shape[1]
    m = (summer(x, acc) / acc(n)).astype(acc)
    d = (x.astype(acc) - m[:, None]).astype(acc)
    q = (d * d).astype(acc)
    return (summer(q, acc) / acc(n - correction)).astype(acc)


def welford(x, acc, order=None, correction=1, recip=False):
    """torch's WelfordOps.reduce, one element at a time (``order``: a permutation;
    ``recip``: the update multiplies by the rounded ``1 / k`` instead of dividing)."""
    m, n = x.shape
    mean = np.zeros(m, acc)
    m2 = np.zeros(m, acc)
    for k, j in enumerate(range(n) if order is None else order, 1):
        v = x[:, j].astype(acc)
        delta = (v - mean).astype(acc)
        step = (delta * acc(1 / k)).astype(acc) if recip else (delta / acc(k)).astype(acc)
        mean = (mean + step).astype(acc)
        m2 = (m2 + (delta * (v - mean).astype(acc)).astype(acc)).astype(acc)
    return (m2 / acc(n - correction)).astype(acc)


def welford_chunks(x, acc, parts):
    """Welford over chunks, merged by Chan's combine (torch's WelfordOps.combine)."""
    m, n = x.shape
    edges = np.linspace(0, n, parts + 1).astype(int)
    stats = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        mean = np.zeros(m, acc)
        m2 = np.zeros(m, acc)
        for k, j in enumerate(range(a, b), 1):
            v = x[:, j].astype(acc)
            delta = (v - mean).astype(acc)
            mean = (mean + (delta / acc(k)).astype(acc)).astype(acc)
            m2 = (m2 + (delta * (v - mean).astype(acc)).astype(acc)).astype(acc)
        stats.append((mean, m2, acc(b - a)))
    mean, m2, cnt = stats[0]
    for mb, m2b, nb in stats[1:]:
        delta = (mb - mean).astype(acc)
        tot = acc(cnt + nb)
        frac = acc(nb / tot)
        mean = (mean + (delta * frac).astype(acc)).astype(acc)
        m2 = (m2 + m2b + (((delta * delta).astype(acc) * cnt).astype(acc) * frac)).astype(acc)
        cnt = tot
    return (m2 / acc(n - 1)).astype(acc)


def _merge(a, b, acc):
    """Chan's merge of two Welford states (mean, m2, count), as torch's WelfordOps.combine."""
    (ma, m2a, na), (mb, m2b, nb) = a, b
    delta = (mb - ma).astype(acc)
    tot = acc(na + nb)
    frac = acc(nb / tot)
    mean = (ma + (delta * frac).astype(acc)).astype(acc)
    m2 = ((m2a + m2b).astype(acc) + (((delta * delta).astype(acc) * acc(na)).astype(acc)
                                      * frac).astype(acc)).astype(acc)
    return mean, m2, na + nb


def chan_tree(x, acc, rng):
    """Single-element states merged in a random tree (random pairs, random sides)."""
    m, n = x.shape
    states = [(x[:, j].astype(acc), np.zeros(m, acc), 1) for j in range(n)]
    while len(states) > 1:
        i, j = sorted(rng.choice(len(states), 2, replace=False).tolist())
        b = states.pop(j)
        a = states.pop(i)
        states.append(_merge(a, b, acc) if rng.random() < 0.5 else _merge(b, a, acc))
    return (states[0][1] / acc(n - 1)).astype(acc)


def textbook(x, acc):
    """The one-pass formula (sum x**2 - (sum x)**2 / n) / (n - 1): wrong under cancellation."""
    n = x.shape[1]
    s = seq_sum(x, acc)
    q = seq_sum((x.astype(acc) * x.astype(acc)).astype(acc), acc)
    return ((q - (s * s).astype(acc) / acc(n)).astype(acc) / acc(n - 1)).astype(acc)


def _data(kind, rng, m=8, k=200, fmt="float32"):
    x = rng.standard_normal((m, k))
    if kind == "wide":
        x *= 2.0 ** rng.integers(-12, 12, size=x.shape)
    elif kind == "offset":  # mean far from zero: the condition number of var is large
        x = 100.0 + x * 0.01
    elif kind == "positive":
        x = np.abs(x) + 1
    return er.asarray(x, fmt).numpy()


def _covered(ref, out, label):
    cov = ref.covers(np.asarray(out).astype(F64).astype(ref.rounded.numpy().dtype))
    assert cov.all(), (label, cov.summary())


# ---------------------------------------------------------------------------------- mean
@pytest.mark.parametrize("kind", ["random", "wide", "offset", "positive"])
def test_mean_float32_implementations_covered(kind):
    rng = np.random.default_rng(abs(hash(("mean", kind))) % 2**32)
    x = _data(kind, rng)
    n = x.shape[1]
    ref = er.mean(x, dim=1)
    sims = {
        "sequential / n": (seq_sum(x, F32) / F32(n)).astype(F32),
        "pairwise * (1/n)": (pairwise_sum(x, F32) * F32(1 / n)).astype(F32),
        "numpy": x.mean(axis=1, dtype=F32),
        "float64": x.astype(F64).mean(axis=1),
        "random order": seq_sum(x[:, rng.permutation(n)], F32) / F32(n),
        "blocked": (blocked_sum(x, F32) / F32(n)).astype(F32),
    }
    for name, out in sims.items():
        _covered(ref, out, name)
    _covered(er.mean(x, dim=1, order="sequential"), sims["sequential / n"], "declared")
    _covered(er.mean(x, dim=1, order="pairwise"), sims["pairwise * (1/n)"], "declared")


def test_bfloat16_mean_float32_accumulation_covered_bfloat16_caught():
    rng = np.random.default_rng(11)
    x = (np.abs(rng.standard_normal((16, 512))) + 1).astype(BF16)
    ref = er.mean(x, dim=1)  # compute float32, as torch's opmath
    good = (seq_sum(x, F32) / F32(512)).astype(BF16)
    _covered(ref, good, "float32 accumulation")
    _covered(ref, (pairwise_sum(x, F32) / F32(512)).astype(BF16), "pairwise")
    bad = (seq_sum(x, BF16).astype(F32) / F32(512)).astype(BF16)  # bfloat16 accumulation
    assert not ref.covers(bad).any()
    # declaring bfloat16 accumulation covers it: 511 u >= 1, no bound
    # (in sequence: the default "library" order's depth is far below 511)
    assert er.mean(x, dim=1, compute="bfloat16", order="sequential").covers(bad).all()


# ------------------------------------------------------------------------------ var, std
@pytest.mark.parametrize("kind", ["random", "wide", "offset", "positive"])
def test_var_float32_implementations_covered(kind):
    rng = np.random.default_rng(abs(hash(("var", kind))) % 2**32)
    x = _data(kind, rng)
    n = x.shape[1]
    ref = er.var(x, dim=1)
    sims = {
        "two-pass sequential": two_pass(x, F32),
        "two-pass pairwise": two_pass(x, F32, pairwise_sum),
        "two-pass blocked": two_pass(x, F32, blocked_sum),
        "welford": welford(x, F32),
        "welford random order": welford(x, F32, rng.permutation(n)),
        "welford float64": welford(x, F64),
        "welford times 1/k": welford(x, F32, recip=True),
        "numpy": x.var(axis=1, ddof=1, dtype=F32),
    }
    for name, out in sims.items():
        _covered(ref, out, name)
    _covered(er.var(x, dim=1, algorithm="two-pass"), sims["two-pass sequential"], "2p")
    _covered(er.var(x, dim=1, algorithm="two-pass", order="pairwise"),
             sims["two-pass pairwise"], "2p pairwise")
    _covered(er.var(x, dim=1, algorithm="welford"), sims["welford random order"], "welford")
    seq = er.var(x, dim=1, order="sequential")  # both algorithms, left to right
    _covered(seq, sims["two-pass sequential"], "2p in order")
    _covered(seq, sims["welford"], "welford in order")
    for name in ("welford", "welford times 1/k"):
        _covered(er.var(x, dim=1, algorithm="welford", order="sequential"), sims[name],
                 (name, "declared in order"))
    _covered(er.std(x, dim=1, algorithm="two-pass", order="sequential"),
             np.sqrt(sims["two-pass sequential"]).astype(F32), "std 2p in order")
    s = er.std(x, dim=1)
    _covered(s, np.sqrt(sims["welford"]).astype(F32), "std welford")
    _covered(s, np.sqrt(sims["two-pass sequential"]).astype(F32), "std two-pass")


def test_var_bfloat16_float32_accumulation_covered_bfloat16_caught():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((16, 256)) + 4).astype(BF16)
    ref = er.var(x, dim=1)
    for name, out in {"welford": welford(x, F32), "two-pass": two_pass(x, F32)}.items():
        _covered(ref, out.astype(BF16), name)
    bad = two_pass(x, BF16)  # every step in bfloat16
    assert not ref.covers(bad).any()
    bad_w = welford(x, BF16)
    assert ref.covers(bad_w).mask.mean() < 0.5


def test_textbook_formula_caught_where_it_cancels():
    rng = np.random.default_rng(3)
    x = _data("offset", rng, m=16, k=256)  # mean 100, spread 0.01: n Q - S**2 cancels
    ref = er.var(x, dim=1)
    assert not ref.covers(textbook(x, F32)).any()
    assert ref.covers(two_pass(x, F32)).all()


def test_zero_variance_rows():
    x = np.full((3, 7), 0.1, F32)
    x[1] = 3.0
    ref = er.var(x, dim=1)
    assert ref.rounded.tolist() == [0.0, 0.0, 0.0]
    _covered(ref, two_pass(x, F32), "two-pass")  # 7 * 0.1 is inexact: a tiny positive value
    _covered(ref, welford(x, F32), "welford")
    assert ref.tolerance().numpy().max() < 1e-9  # only rounding noise of the mean allowed
    assert not ref.covers(np.array([0.0, 0.0, 1e-3], F32)).all()


def test_welford_with_chans_combine_under_the_default():
    """The default ("any": two-pass or Welford) does not promise merged states, but covers
    them on ordinary data (algorithm="chan" is the proof: test_chan_merged_welford_covered)."""
    rng = np.random.default_rng(8)
    x = _data("offset", rng)
    _covered(er.var(x, dim=1), welford_chunks(x, F32, 4), "chan")


# -------------------------------------------------------------------------------- cumsum
def seq_cumsum(x, acc, out):
    s = np.zeros(x.shape[0], acc)
    res = np.empty(x.shape, out)
    for j in range(x.shape[1]):
        s = (s.astype(F64) + x[:, j].astype(F64)).astype(acc) if acc is BF16 else \
            (s + x[:, j].astype(acc)).astype(acc)
        res[:, j] = s.astype(out)
    return res


def scan_cumsum(x, acc):
    """Hillis-Steele parallel scan in ``acc`` (each prefix summed in a tree of its own)."""
    y = x.astype(acc)
    shift = 1
    while shift < y.shape[1]:
        z = y.copy()
        z[:, shift:] = (y[:, shift:] + y[:, :-shift]).astype(acc)
        y = z
        shift *= 2
    return y


@pytest.mark.parametrize("kind", ["random", "wide", "positive"])
def test_cumsum_implementations_covered(kind):
    rng = np.random.default_rng(abs(hash(("cumsum", kind))) % 2**32)
    x = _data(kind, rng, k=300)
    seq = seq_cumsum(x, F32, F32)
    _covered(er.cumsum(x, 1, order="sequential"), seq, "sequential")
    _covered(er.cumsum(x, 1), seq, "sequential under any")
    _covered(er.cumsum(x, 1), scan_cumsum(x, F32), "scan")
    _covered(er.cumsum(x, 1), np.cumsum(x, axis=1), "numpy")
    torch_like = seq_cumsum(x, F64, F32)  # torch's CPU float32 cumsum accumulates in double
    _covered(er.cumsum(x, 1, compute="float64", order="sequential"), torch_like, "float64")


def test_cumsum_sequential_bound_is_tighter_than_any_and_catches_a_scan():
    rng = np.random.default_rng(4)
    x = _data("positive", rng, m=4, k=2000)
    seq = er.cumsum(x, 1, order="sequential")
    anyo = er.cumsum(x, 1)
    assert (seq.tolerance().numpy() <= anyo.tolerance().numpy()).all()
    assert np.median(anyo.tolerance_ulps()[:, -1]) > 1.5 * np.median(seq.tolerance_ulps()[:, -1])


def test_bfloat16_cumsum_float32_accumulation_covered_bfloat16_caught():
    x = np.full((2, 600), 2.0**-8, BF16)
    x[:, 0] = 1
    ref = er.cumsum(x, 1, order="sequential")
    _covered(ref, seq_cumsum(x, F32, BF16), "float32")
    bad = seq_cumsum(x, BF16, BF16)  # stuck at 1 + ...: bfloat16 absorbs 2**-8 at 2
    assert not ref.covers(bad).all()


# ------------------------------------------------------------------- directed roundings
def _rsim(rows, fmt, mode, algo):
    """A simulation with every step rounded by MPFR in ``mode``."""
    rd = Rounder(FMTS[fmt], mode)
    out = []
    for row in rows:
        n = len(row)
        if algo == "mean":
            s = 0.0
            for v in row:
                s = rd.add(s, v)
            out.append(rd(__import__("fractions").Fraction(s) / n))
        elif algo == "two-pass":
            from fractions import Fraction
            s = 0.0
            for v in row:
                s = rd.add(s, v)
            m = rd(Fraction(s) / n)
            q = 0.0
            for v in row:
                d = rd.add(v, -m)
                q = rd.add(q, rd.mul(d, d))
            out.append(rd(Fraction(q) / (n - 1)))
        elif algo == "welford":
            from fractions import Fraction
            mean = m2 = 0.0
            for k, v in enumerate(row, 1):
                delta = rd.add(v, -mean)
                mean = rd.add(mean, rd(Fraction(delta) / k))
                m2 = rd.add(m2, rd.mul(delta, rd.add(v, -mean)))
            out.append(rd(Fraction(m2) / (n - 1)))
        else:  # cumsum
            s, pre = 0.0, []
            for v in row:
                s = rd.add(s, v)
                pre.append(s)
            out.append(pre)
    return np.array(out)


@pytest.mark.parametrize("mode", ["toward_positive", "toward_negative", "toward_zero",
                                  "nearest_away"])
def test_directed_modes_simulated_with_mpfr(mode):
    rng = np.random.default_rng(abs(hash(mode)) % 2**32)
    x = _data("offset", rng, m=3, k=40, fmt="bfloat16").astype(F64)
    rows = [list(map(float, r)) for r in x]
    m = er.Rounding(mode)
    _covered(er.mean(x.astype(BF16), dim=1, rounding=mode, compute="bfloat16"),
             _rsim(rows, "bfloat16", m, "mean"), "mean")
    for algo in ("two-pass", "welford"):
        for order in ("any", "sequential"):
            _covered(er.var(x.astype(BF16), dim=1, rounding=mode, compute="bfloat16",
                            algorithm=algo, order=order), _rsim(rows, "bfloat16", m, algo),
                     (algo, order))
    _covered(er.cumsum(x.astype(BF16), 1, rounding=mode, compute="bfloat16",
                       order="sequential"), _rsim(rows, "bfloat16", m, "cumsum"), "cumsum")


def test_inputs_wider_than_the_compute_format_covered():
    """float32 data in a bfloat16 model: each value is rounded into bfloat16 first."""
    rng = np.random.default_rng(12)
    x = _data("offset", rng, m=6, k=40)
    xb = x.astype(BF16)  # rounded on entry
    for algo, out in (("two-pass", two_pass(xb, BF16)), ("welford", welford(xb, BF16))):
        for order in ("any", "sequential"):
            ref = er.var(x, dim=1, compute="bfloat16", algorithm=algo, order=order)
            _covered(ref, out.astype(F32), (algo, order))
    _covered(er.mean(x, dim=1, compute="bfloat16"),
             (seq_sum(xb, BF16).astype(F32) / F32(40)).astype(BF16).astype(F32), "mean")
    _covered(er.cumsum(x, 1, compute="bfloat16", order="sequential"),
             seq_cumsum(xb, BF16, F32), "cumsum")


@pytest.mark.parametrize("kind", ["random", "offset", "wide"])
def test_chan_merged_welford_covered(kind):
    """Welford states merged by Chan's formula (torch's WelfordOps.combine, GPU and Triton
    reductions): chunkings, and random trees of single-element states merged either way."""
    rng = np.random.default_rng(abs(hash(("chan", kind))) % 2**32)
    x = _data(kind, rng, m=6, k=300)
    # any tree (the default order bounds the libraries' trees' depth; these go deeper)
    ref = er.var(x, dim=1, algorithm="chan", order="any")
    for parts in (2, 3, 8, 37, 300):
        _covered(ref, welford_chunks(x, F32, parts), ("chunks", parts))
    _covered(ref, welford(x, F32), "plain Welford is a chain of merges")
    for t in range(3):
        _covered(ref, chan_tree(x, F32, rng), ("random tree", t))
    xb = x.astype(BF16)
    _covered(er.var(xb, dim=1, algorithm="chan", order="any"),
             welford_chunks(xb, F32, 7).astype(BF16), "bfloat16 data, float32 states")
    if kind != "offset":  # (offset data are constant in bfloat16: variance 0 either way)
        assert not er.var(xb, dim=1, algorithm="chan", order="any").covers(
            welford_chunks(xb, BF16, 7)).all()  # bfloat16 states: caught


def test_weak_checks_warn_until_the_model_is_declared():
    import warnings

    rng = np.random.default_rng(21)
    x = _data("offset", rng, m=8, k=512)
    ref = er.var(x, dim=1)
    with pytest.warns(er.WeakCheckWarning, match="algorithm="):
        assert ref.covers(ref.rounded).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.WeakCheckWarning)
        assert er.var(x, dim=1, algorithm="two-pass").covers(ref.rounded).all()
        assert er.var(x, dim=1, order="pairwise").covers(ref.rounded).all()
        small = _data("random", rng, m=8, k=16)
        assert er.var(small, dim=1).covers(er.var(small, dim=1).rounded).all()  # a few ulps
    c = _data("random", rng, m=8, k=4096) * np.float32(1e-3) + np.float32(0)
    c[:, ::2] = -c[:, 1::2]  # every row cancels to ~0: the long sums' criterion
    c[:, 0] += np.float32(1e-7)
    m = er.mean(c, dim=1)
    with pytest.warns(er.WeakCheckWarning, match="mean: a weak check"):
        m.covers(m.rounded)
