"""The accumulation orders (linalg._orders): the grammar, the depths, and the proof of the
default ``order="library"``: every cited library's order, run step by step (NumPy's own
``np.sum``; PyTorch's CPU cascade_sum and a Triton tl.sum tree re-implemented with numpy float32
arithmetic, IEEE round to nearest even; ``torch.sum`` itself where torch is installed), is
covered by ``er.sum``'s default, and the bug classes outside it are caught."""

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref.linalg._orders import (
    ORDER_GRAMMAR,
    TORCH_CPU_VARIANTS,
    FloatAlgebra,
    _cascade_depth_fast,
    _Depths,
    _np_pairwise,
    library_depth,
    numpy_depth,
    parse_order,
    torch_cascade_sum,
    torch_cpu_depth,
    torch_cuda_depth,
    torch_cuda_sum,
    triton_depth,
    triton_tree_sum,
)

# the adversarial rows cancel: their checks are weak (and say so); here they prove coverage
pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")

F32, F16, BF16 = np.float32, np.float16, ml_dtypes.bfloat16
SIZES = (2, 7, 8, 9, 31, 100, 127, 128, 129, 257, 1000, 1024, 3001)


# ------------------------------------------------------------------------------- grammar
@pytest.mark.parametrize("text, canon, depth", [
    ("any", "any", 1023), ("sequential", "sequential", 1023), ("pairwise", "pairwise", 10),
    ("blocked(32)", "blocked(32)", 31 + 5), (" blocked( 1000 ) ", "blocked(1000)", 999 + 1),
    ("split_k(4)", "split_k(4)", 255 + 3), ("tree(2)", "tree(2)", 10), ("tree(32)", "tree(32)",
                                                                      62),
    ("tree(4)", "tree(4)", 15), ("library", "library", 36)])
def test_the_grammar_and_each_orders_depth(text, canon, depth):
    o = parse_order(text)
    assert o == canon and o.depth(1024) == depth
    assert o.depth(1) == 0


def test_the_depths_by_hand():
    # a term of a blocked(b) sum passes its block (b - 1) and the pairwise tree of the blocks
    assert parse_order("blocked(8)").depth(9) == 7 + 1
    # split_k(s): a slice of ceil(k / s) in sequence, then s partials in any order
    assert parse_order("split_k(3)").depth(10) == 3 + 2
    # tree(f): f - 1 additions at each of ceil(log_f k) levels
    assert parse_order("tree(3)").depth(27) == 6 and parse_order("tree(3)").depth(28) == 8
    # sequential: term l (1-based) passes k - max(l, 2) + 1
    assert parse_order("sequential").depths(4).tolist() == [3, 3, 2, 1]
    # NumPy's pairwise_sum: 8 accumulators of 16, a 3-level tree, no rest
    assert _np_pairwise(128) == 15 + 3 and _np_pairwise(127) == 14 + 3 + 7
    assert _np_pairwise(7) == 6  # res = -0.0 plus seven terms: the first addition is exact


@pytest.mark.parametrize("bad", ["random", "blocked", "blocked(0)", "tree(1)", "split_k(-2)",
                                 "pairwise(2)", 3, None, "Library"])
def test_a_bad_order_is_refused_with_the_grammar(bad):
    with pytest.raises(ValueError, match=r"expected 'library'"):
        parse_order(bad)
    x = np.ones((2, 8), F32)
    with pytest.raises(ValueError, match=r"'split_k\(s\)'"):
        er.sum(x, axis=1, order=bad)


def test_the_orders_reach_every_long_sum():
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(F32)
    for order in ("blocked(8)", "split_k(4)", "tree(4)", "library"):
        for r in (er.sum(x, axis=1, order=order), er.mean(x, dim=1, order=order),
                  er.var(x, dim=1, order=order), er.matmul(x, x.T, order=order)):
            assert r.covers(r.rounded).all()
            assert r.details["order"] == order


def test_the_default_is_library_and_undeclared():
    x = np.ones((2, 8), F32)
    r = er.sum(x, axis=1)
    assert r.details["order"] == "library" and not r.details["order_declared"]
    assert er.sum(x, axis=1, order="library").details["order_declared"]


def test_library_is_the_most_of_the_cited_depths():
    for k in SIZES + (4096, 65536, 10**6):
        d = library_depth(k)
        assert d == min(k - 1, max(numpy_depth(k), torch_cpu_depth(k), torch_cuda_depth(k),
                                   triton_depth(k)))
        assert d <= k - 1
    # where each library sets it (docs/reductions.md): below 8 terms every order is a chain
    assert library_depth(7) == 6
    assert library_depth(1024) == 36 and triton_depth(1024) == 36


@pytest.mark.parametrize("k", list(range(1, 200)) + [511, 512, 513, 1023, 1024, 4096, 5000])
def test_the_fast_cascade_depth_is_the_simulations(k):
    for w, p in TORCH_CPU_VARIANTS:
        assert int(torch_cascade_sum(_Depths(k), k, w, p)) == _cascade_depth_fast(k, w, p)


@pytest.mark.parametrize("k", [2, 5, 31, 32, 33, 100, 1024, 1500])
def test_the_triton_depth_is_the_simulations(k):
    B = 1 << (k - 1).bit_length()
    sims = [int(triton_tree_sum(_Depths(k), k, w)) for w in (1, 2, 4, 8, 16, 32)
            if B <= 32 * w * 32]  # at most 32 elements a thread (TRITON_PER_THREAD)
    assert max(sims) <= triton_depth(k)  # the depth counts the padding's additions
    if k == B:
        assert max(sims) == triton_depth(k)


# ------------------------------------------------------------------- rows to sum over
def _rows(k, rng):
    """Random and adversarial rows of length k (float64 values exact in float16)."""
    rows = [rng.standard_normal(k), np.abs(rng.standard_normal(k)),
            rng.standard_normal(k) * 2.0 ** rng.integers(-10, 10, k)]
    big = np.zeros(k)
    big[0] = 1.0
    big[1:] = 2.0**-12  # a chain's running sum swallows the small terms
    rows.append(big)
    canc = rng.standard_normal(k)
    canc[: k // 2] *= 1000.0
    canc[k // 2: 2 * (k // 2)] = -canc[: k // 2]  # cancelling halves
    rows.append(rng.permutation(canc))
    return np.array([r.astype(F16).astype(np.float64) for r in rows])


def _covered(res, actual, what):
    cov = res.covers(actual)
    assert cov.all(), f"{what}: {cov}"


@pytest.mark.parametrize("k", SIZES)
def test_numpys_own_sum_is_covered(k):
    X = _rows(k, np.random.default_rng(k))
    for fmt in (F32, F16):
        x = X.astype(fmt)
        _covered(er.sum(x, axis=1), x.sum(axis=1), f"np.sum {fmt.__name__} k={k}")
        _covered(er.mean(x, dim=1), x.mean(axis=1), f"np.mean {fmt.__name__} k={k}")


def test_numpys_buffered_sum_is_covered():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 20000)).astype(F16)
    _covered(er.sum(x, axis=1, dtype="float32"), x.sum(axis=1, dtype=F32), "buffered")


def _cascade(row, fmt, width, pairs):
    alg = FloatAlgebra(row.astype(fmt).astype(F32))
    return F32(torch_cascade_sum(alg, row.size, width, pairs))


@pytest.mark.parametrize("k", SIZES)
def test_torchs_cpu_cascade_is_covered(k):
    X = _rows(k, np.random.default_rng(100 + k))
    x32 = X.astype(F32)
    res = er.sum(x32, axis=1)
    for width, pairs in TORCH_CPU_VARIANTS:
        if pairs is not None:
            continue
        got = np.array([_cascade(r, F32, width, None) for r in x32])
        _covered(res, got, f"cascade width {width} k={k}")
    for fmt, pairs in ((BF16, "halves"), (F16, "neighbours")):
        xs = X.astype(fmt)
        res = er.sum(xs, axis=1)
        got = np.array([_cascade(r, fmt, 8, pairs) for r in X]).astype(fmt)
        _covered(res, got, f"cascade {pairs} k={k}")


@pytest.mark.parametrize("k", SIZES)
def test_a_triton_tree_is_covered(k):
    X = _rows(k, np.random.default_rng(200 + k)).astype(F32)
    res = er.sum(X, axis=1)
    for w in (1, 4):
        got = np.array([triton_tree_sum(FloatAlgebra(r), k, w) for r in X])
        _covered(res, got, f"triton warps {w} k={k}")


@pytest.mark.parametrize("k", [7, 128, 1000, 1024, 3001, 40000])
def test_torch_sum_itself_is_covered(k):
    torch = pytest.importorskip("torch")
    X = _rows(k, np.random.default_rng(300 + k))
    for fmt, tdt in ((F32, torch.float32), (F16, torch.float16), (BF16, torch.bfloat16)):
        x = X.astype(fmt)
        got = torch.tensor(X, dtype=torch.float64).to(tdt).sum(dim=1).to(torch.float64).numpy()
        _covered(er.sum(x, axis=1), got.astype(fmt), f"torch.sum {fmt} k={k}")
        got = torch.tensor(X, dtype=torch.float64).to(tdt).mean(dim=1).to(torch.float64).numpy()
        _covered(er.mean(x, dim=1), got.astype(fmt), f"torch.mean {fmt} k={k}")


# ---------------------------------------------------------------------- caught bugs
def _seq(row, acc):
    s = acc(0)
    for v in row:
        s = acc(F32(s) + F32(v)) if acc is not F32 else F32(s + F32(v))
    return F32(s)


def test_a_half_format_accumulator_is_caught():
    rng = np.random.default_rng(7)
    x = (np.abs(rng.standard_normal((8, 1024))) + 0.5).astype(F32)
    res = er.sum(x, axis=1)
    for acc in (BF16, F16):
        bad = np.array([_seq(r, acc) for r in x], F32)
        assert not res.covers(bad).any(), acc
        # a pairwise sum in that format is caught too
        alg = FloatAlgebra(x[0].astype(acc).astype(F32))
        alg.add = lambda a, b, acc=acc: (np.asarray(a, F32) + np.asarray(b, F32)).astype(
            acc).astype(F32)
        bad = F32(torch_cascade_sum(alg, 1024, 8, None))
        assert not res.covers(np.r_[bad, x.sum(axis=1)[1:]]).all()


def test_a_dropped_term_is_caught():
    rng = np.random.default_rng(8)
    x = (np.abs(rng.standard_normal((8, 1000))) + 0.5).astype(F32)
    res = er.sum(x, axis=1)
    assert not res.covers(x[:, 1:].sum(axis=1)).any()
    assert not res.covers(x[:, :-1].sum(axis=1)).any()


def test_a_sequential_chain_is_caught_by_the_default_and_covered_where_declared():
    # the running sum of 1 and 1023 terms of 2**-25 stays 1 (each addition a tie to even):
    # NumPy's strided reductions (np.sum(x, axis=0)) do this; declare order="sequential"
    x = np.full((1, 1024), 2.0**-25, F32)
    x[0, 0] = 1.0
    chain = np.array([_seq(x[0], F32)])
    assert chain[0] == 1.0
    assert not er.sum(x, axis=1).covers(chain).all()
    assert er.sum(x, axis=1, order="sequential").covers(chain).all()
    assert er.sum(x, axis=1, order="any").covers(chain).all()
    xt = np.ascontiguousarray(np.repeat(x.T, 4, axis=1))  # (1024, 4), C order
    got = xt.sum(axis=0)  # numpy's own: along axis 0 the rows are added in sequence
    assert (got == 1.0).all()
    # the default over axes that are not the fast ones includes that sequence (term by term
    # the larger of the libraries' depth and the chain's); declared "library" does not
    r = er.sum(xt, axis=0)
    assert r.covers(got).all() and not r.details["order_declared"]
    assert not er.sum(xt, axis=0, order="library").covers(got).any()
    assert er.sum(xt, axis=0, order="sequential").covers(got).all()
    assert er.mean(xt, dim=0).covers(xt.mean(axis=0)).all()
    # a trailing axis of size 1 keeps the reduction contiguous: the libraries' depth
    assert not er.sum(x.T, axis=0).covers(x.T.sum(axis=0)[:1] * 0 + chain).all()


# ----------------------------------------------------------------------------- var, std
def test_the_libraries_variances_are_covered_by_the_default():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 1024)).astype(F32)
    _covered(er.var(x, dim=1, correction=0), x.var(axis=1), "np.var")
    _covered(er.std(x, dim=1, correction=0), x.std(axis=1), "np.std")
    torch = pytest.importorskip("torch")
    t = torch.tensor(x)
    _covered(er.var(x, dim=1), t.var(dim=1).numpy(), "torch.var")
    _covered(er.std(x, dim=1), t.std(dim=1).numpy(), "torch.std")


def _one_pass(x):
    n = F32(x.shape[1])
    S = x.sum(axis=1, dtype=F32)
    Q = (x * x).sum(axis=1, dtype=F32)
    return ((Q - S * S / n) / (n - 1)).astype(F32)


def test_a_one_pass_variance_is_caught_unless_declared():
    rng = np.random.default_rng(11)
    x = (1e4 + rng.standard_normal((8, 1024))).astype(F32)
    one = _one_pass(x)
    assert not er.var(x, dim=1).covers(one).any()
    assert er.var(x, dim=1, algorithm="one-pass").covers(one).all()
    assert er.var(x, dim=1, algorithm="any").covers(one).all()
    with np.errstate(invalid="ignore"):
        assert er.std(x, dim=1, algorithm="one-pass").covers(np.sqrt(one)).all()
    # mean 1000, std 0.01: the one-pass results are 0 or negative. The two-pass bound
    # catches them all, the default some: Chan's worst-case bound for float32 Welford states
    # whose means are near 1000 allows a variance near 0 there (docs/reductions.md)
    x = (1000 + 0.01 * rng.standard_normal((8, 1024))).astype(F32)
    one = _one_pass(x)
    assert (one <= 0.13).all()
    assert not er.var(x, dim=1, algorithm="two-pass").covers(one).any()
    assert not er.var(x, dim=1).covers(one).all()
    assert not er.var(x, dim=1).covers(one).mask[one < 0].any()
    assert er.var(x, dim=1, algorithm="one-pass").covers(one).all()
    with pytest.raises(ValueError, match="'one-pass'"):
        er.var(x, dim=1, algorithm="textbook")


def test_the_grammar_constant_names_every_order():
    for word in ("'library'", "'any'", "'sequential'", "'pairwise'", "'blocked(b)'",
                 "'split_k(s)'", "'tree(f)'"):
        assert word in ORDER_GRAMMAR


def test_the_weak_check_says_what_a_declared_order_gives():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((16, 1024)).astype(F32)
    b = rng.standard_normal((1024, 16)).astype(F32)
    r = er.matmul(a, b)
    med = float(np.median(er.matmul(a, b, order="pairwise").tolerance_ulps()))
    text = r.weak_check()
    assert f"order='pairwise' gives median {med:.4g} ulp" in text
    assert "up to 1023 roundings a term over k=1024" in text
    assert er.matmul(a, b, order="library").weak_check() is None  # declared: no warning
    v = er.var(a, dim=1)
    med = float(np.median(er.var(a, dim=1, algorithm="two-pass").tolerance_ulps()))
    assert med <= 48  # (29 on the (4, 1024) rows of docs/reductions.md)
    assert f"algorithm='two-pass' gives median {med:.4g} ulp" in v.weak_check()
    assert er.var(a, dim=1, algorithm="stable").weak_check() is None


def _cuda_widths(k):
    """The block widths setReduceConfig can give a row of k (no split across warps)."""
    top = min(1 << (k.bit_length() - 1), 512)
    bx = min(top, 32)
    out = []
    while bx <= top:
        v = -(-k // bx)  # a narrower block is 512 / bx rows high: a split across them
        if v < 256 and (bx == top or v < 16 * (512 // bx)):
            out.append(bx)
        bx *= 2
    return out


@pytest.mark.parametrize("k", [2, 7, 32, 100, 1000, 1024, 4096, 8191])
def test_a_torch_cuda_reduction_is_covered(k):
    for bx in _cuda_widths(k):
        assert int(torch_cuda_sum(_Depths(k), k, bx)) <= torch_cuda_depth(k)
    X = _rows(k, np.random.default_rng(400 + k)).astype(F32)
    res = er.sum(X, axis=1)
    for bx in _cuda_widths(k)[:2]:
        got = np.array([torch_cuda_sum(FloatAlgebra(r), k, bx) for r in X])
        _covered(res, got, f"cuda block_x {bx} k={k}")


def _welford_cuda_var(row, block_x=32):
    """PyTorch CUDA's var of a float32 row (WelfordOps in float32): lane t of block_x keeps
    vt0 = 4 Welford states fed elements t + (4 j + i) block_x in turn (Welford's update), merges
    them in sequence with Chan's formula, then the lanes merge in the warp-shuffle tree."""
    k = row.size

    def update(s, x):
        mean, m2, n = s
        n = F32(n + 1)
        delta = F32(x - mean)
        mean = F32(mean + F32(delta / n))
        return (mean, F32(m2 + F32(delta * F32(x - mean))), n)

    def combine(a, b):
        if a[2] == 0:
            return b
        if b[2] == 0:
            return a
        delta = F32(b[0] - a[0])
        n = F32(a[2] + b[2])
        nb_over_n = F32(b[2] / n)
        return (F32(a[0] + F32(delta * nb_over_n)),
                F32(F32(a[1] + b[1]) + F32(F32(F32(delta * delta) * a[2]) * nb_over_n)), n)

    empty = (F32(0), F32(0), F32(0))
    lanes = []
    for t in range(block_x):
        acc = [empty] * 4
        idx = t
        while idx < k:
            for i in range(4):
                at = idx + i * block_x
                if at < k:
                    acc[i] = update(acc[i], row[at])
            idx += 4 * block_x
        s = acc[0]
        for i in range(1, 4):
            s = combine(s, acc[i])
        lanes.append(s)
    offset = 1
    while offset < block_x:
        lanes = [combine(lanes[i], lanes[i + offset]) if i + offset < block_x else lanes[i]
                 for i in range(block_x)]
        offset <<= 1
    mean, m2, n = lanes[0]
    return F32(m2 / F32(n - 1))


@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_a_welford_chan_cuda_variance_is_covered_by_the_default(offset):
    rng = np.random.default_rng(13)
    x = (offset + rng.standard_normal((4, 1024))).astype(F32)
    res = er.var(x, dim=1)
    for bx in (32, 128):
        got = np.array([_welford_cuda_var(r, bx) for r in x])
        _covered(res, got, f"Welford/Chan block_x {bx}")


def test_the_cascade_bound_of_long_rows_holds_and_grows():
    from exactref.linalg._orders import _cascade_bound, _cascade_depth
    sizes = list(range(1, 600)) + sorted({int(s) for s in np.geomspace(600, 2e6, 120)})
    assert all(_cascade_bound(s) >= _cascade_depth(s) for s in sizes)
    b = [_cascade_bound(s) for s in sizes]
    assert b == sorted(b)
    assert library_depth(10**8) <= 10**8 - 1  # long rows: bounded without simulating
