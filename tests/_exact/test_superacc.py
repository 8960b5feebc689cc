"""The compiled superaccumulator (``_exact._superacc``): exact sums, checked against Fractions
and ``math.fsum``, the compiled kernel against its Python twin, every cutting of the input
against every other, and ``rowsum_exact`` / ``er.sum`` by the kernel against the numpy paths
(ExtractVector and the digits), rounding for rounding."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exactref._exact import _fastsums, _jit, _superacc, int_rowsums, rowsum_exact
from exactref._formats import FORMATS

needs_numba = pytest.mark.skipif(not _jit.enabled(),
                                 reason="numba is not installed (the 'fast' extra)")
R = er.Rounding


def exact(x) -> Fraction:
    """The exact sum of the finite elements, from Fractions."""
    return sum((Fraction(float(v)) for v in np.asarray(x).reshape(-1) if math.isfinite(v)),
               Fraction(0))


def value(res) -> Fraction:
    V, e, _ = res
    return Fraction(V) * Fraction(2) ** e


def ieee_special(x) -> float:
    with np.errstate(invalid="ignore"):
        s = float(np.where(np.isfinite(x), 0.0, x).astype(np.float64).sum())
    return s


def same_special(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _binades(rng, n, lo=-1074, hi=1023):
    """Every binade of float64 (and subnormals): random significands and signs."""
    e = rng.integers(lo, hi + 1, n)
    m = rng.uniform(1, 2, n) * rng.choice([-1.0, 1.0], n)
    return np.ldexp(m, e)


def cases():
    rng = np.random.default_rng(2026)
    big = np.finfo(np.float64).max
    tiny = 5e-324
    yield "cancellation", np.array([1e308, 1.0, -1e308, 2.0**-1074, -1.0, 3e-320] * 700)
    yield "binades", _binades(rng, 6000)
    yield "every-binade-edge", np.concatenate([np.ldexp(1.0, np.arange(-1074, 1024)),
                                               -np.ldexp(1.5, np.arange(-1074, 1023))])
    yield "subnormals", _binades(rng, 5000, -1074, -1020)
    yield "zeros-and-subnormals", np.concatenate([np.zeros(5000), -np.zeros(5000),
                                                  np.full(3, tiny), [-tiny]])
    # partial sums past float64's largest value, the exact sum finite
    yield "overflowing-partials", np.array([big] * 3000 + [-big] * 2999 + [-1e292])
    # one exponent many times: the bins spill (2**63) again and again
    yield "spills", np.full(20000, 1.9999999999999998) * np.resize([1.0, 1.0, 1.0, -1.0], 20000)
    yield "random-normal", rng.standard_normal(10000)
    x = rng.standard_normal(9000) * 1e10
    yield "sum-to-zero", np.concatenate([x, -x[::-1]])
    for special in (np.inf, -np.inf, np.nan):
        y = _binades(rng, 5000, -100, 100)
        y[rng.integers(0, 5000, 3)] = special
        yield f"with-{special}", y
    y = rng.standard_normal(5000)
    y[10], y[4000] = np.inf, -np.inf
    yield "inf-minus-inf", y


CASES = list(cases())


@pytest.mark.parametrize("name,x", CASES, ids=[c[0] for c in CASES])
def test_exact_sum_is_the_fraction_sum(name, x):
    res = _superacc.exact_sum(x)
    assert value(res) == exact(x)
    assert same_special(res[2], ieee_special(x))
    if np.isfinite(x).all() and abs(value(res)) < 2**1023 and name not in (
            "overflowing-partials", "every-binade-edge"):  # fsum: intermediate overflow
        assert float(value(res)) == math.fsum(x)  # fsum: correctly rounded


@needs_numba
@pytest.mark.parametrize("name,x", CASES[:6] + CASES[-2:], ids=[c[0] for c in CASES[:6] +
                                                                CASES[-2:]])
def test_compiled_kernel_matches_its_python_twin(name, x):
    x = x[:3000]
    assert _superacc.exact_sum(x)[:2] == _superacc.exact_sum(x, kernel="python")[:2]
    a, b = _superacc.exact_sum(x)[2], _superacc.exact_sum(x, kernel="python")[2]
    assert same_special(a, b)


@pytest.mark.parametrize("task", [1, 3, 4096, 4097, 10**6])
def test_the_value_never_depends_on_the_cutting(task):
    rng = np.random.default_rng(7)
    x = np.concatenate([_binades(rng, 3000), np.zeros(100), [np.finfo(float).max] * 5,
                        [-np.finfo(float).max] * 5])
    rng.shuffle(x)
    ref = exact(x)
    kernel = None if _jit.enabled() else "python"
    if task <= 3:  # an accumulator per element or three: the merge does everything
        x = x[:1500] if kernel is None else x[:150]
        ref = exact(x)
    assert value(_superacc.exact_sum(x, kernel=kernel, task=task)) == ref


@needs_numba
def test_threads_and_long_inputs(monkeypatch):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(3 * 2**20 + 5) * np.exp2(rng.integers(-30, 30, 3 * 2**20 + 5))
    monkeypatch.setenv("EXACTREF_THREADS", "1")
    one = _superacc.exact_sum(x)
    monkeypatch.setenv("EXACTREF_THREADS", "3")
    assert _superacc.exact_sum(x)[:2] == one[:2]
    assert _superacc.exact_sum(x, task=12345)[:2] == one[:2]
    assert float(value(one)) == math.fsum(x)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_narrow_inputs(dtype):
    rng = np.random.default_rng(3)
    fi = np.finfo(dtype)
    w = 100 if dtype == "float32" else 10
    x = np.concatenate([
        rng.standard_normal(3000) * np.exp2(rng.integers(-w, w, 3000)),
        [float(fi.max)] * 300, [-float(fi.max)] * 299, [float(fi.smallest_subnormal)] * 7,
        np.zeros(50), -np.zeros(50)]).astype(dtype)
    res = _superacc.exact_sum(x)
    assert value(res) == exact(x)
    assert res[2] == 0.0
    if _jit.enabled():
        assert _superacc.exact_sum(x[:2000], kernel="python")[:2] == _superacc.exact_sum(
            x[:2000])[:2]
    y = x.copy()
    y[5] = np.inf
    y[7] = -np.inf
    assert math.isnan(_superacc.exact_sum(y)[2])
    y[7] = 1
    assert _superacc.exact_sum(y)[2] == math.inf


def test_empty_and_bad_input():
    assert _superacc.exact_sum(np.zeros(0)) == (0, 0, 0.0)
    with pytest.raises(ValueError, match="float64, float32 or float16"):
        _superacc.exact_sum(np.arange(3))
    with pytest.raises(ValueError, match="kernel="):
        _superacc.exact_sum(np.zeros(3), kernel="cuda")
    with pytest.raises(ValueError, match="task="):
        _superacc.exact_sum(np.zeros(3), task=0)


def _rows():
    """Rows of every kind at once: short (the flush visits the row's exponents) and long
    (every exponent), zeros only, specials in some rows only, huge and tiny."""
    rng = np.random.default_rng(13)
    X = _binades(rng, 6 * 20000, -1074, 1023).reshape(6, 20000)
    X[1] = 0.0
    X[1, 5] = -0.0
    X[2, 7] = np.nan
    X[3, 100], X[3, 200] = np.inf, -np.inf
    X[4, 3] = -np.inf
    X[5] = rng.standard_normal(20000)
    return X


@pytest.mark.parametrize("k", [1, 5, 4096, 20000])
def test_exact_sums_row_by_row(k):
    X = _rows()[:, :k].copy()
    if k < 20000:
        X[2, 0], X[3, 0], X[4, 0] = np.nan, np.inf, -np.inf
    X = X if k <= 4096 or _jit.enabled() else X[:, :3000]
    kernel = None if _jit.enabled() else "python"
    sums = _superacc.exact_sums(X, kernel=kernel)
    for i in range(X.shape[0]):
        assert value(sums[i]) == exact(X[i])
        assert same_special(sums[i][2], ieee_special(X[i]))
        assert sums[i][0] % 2 == 1 or sums[i][:2] == (0, 0)  # canonical: V odd
    if _jit.enabled() and k <= 4096:
        twin = _superacc.exact_sums(X, kernel="python")
        assert [t[:2] for t in twin] == [t[:2] for t in sums]
    assert [t[:2] for t in _superacc.exact_sums(X, kernel=kernel, task=3 if k < 100 else 4097)
            ] == [t[:2] for t in sums]
    with pytest.raises(ValueError, match="2-D"):
        _superacc.exact_sums(X[0])


@needs_numba
def test_int_rowsums_by_the_kernel_are_the_digits_values(monkeypatch):
    rng = np.random.default_rng(17)
    X = _binades(rng, 100 * 700, -300, 300).reshape(100, 700)
    X[3] = 0.0
    assert _fastsums.superacc_rows(*X.shape)
    V, e = int_rowsums(X)
    monkeypatch.setenv("EXACTREF_NUMBA", "0")
    V0, e0 = int_rowsums(X)
    for i in range(X.shape[0]):
        assert Fraction(int(V[i])) * Fraction(2) ** int(e[i]) == \
            Fraction(int(V0[i])) * Fraction(2) ** int(e0[i]) == exact(X[i])


# ----------------------------------------------------- through rowsum_exact and er.sum
def _fields(ex, modes=(R.NEAREST_EVEN, R.TOWARD_NEGATIVE, R.TOWARD_POSITIVE, R.ODD)):
    out = []
    for fmt in ("float64", "float32", "bfloat16"):
        for mode in modes:
            vals = ex.round(FORMATS[fmt], mode, "saturate" if fmt == "bfloat16" else "ieee")[0]
            out.append(np.asarray(vals).view(np.uint64).tolist())
    return out


ROWS = [
    ("long-normal", lambda rng: rng.standard_normal((2, 70000))),
    ("mid-rows", lambda rng: _binades(rng, 14 * 5000, -200, 200).reshape(14, 5000)),
    ("cancel-to-zero", lambda rng: np.tile(np.array([1e300, -1e300, 0.0, -0.0]), (3, 6000))),
    ("negative-zeros", lambda rng: -np.zeros((2, 40000))),
    ("specials", lambda rng: np.where(rng.random((3, 25000)) < 0.001,
                                      rng.choice([np.inf, -np.inf, np.nan], (3, 25000)),
                                      rng.standard_normal((3, 25000)))),
    ("float32", lambda rng: (rng.standard_normal((2, 80000)) * 1e3).astype(np.float32)),
    # negative rows whose low chunks are zero where another row's are not: the two's
    # complement's carry runs up through them
    ("negative-carries", lambda rng: np.stack([
        np.full(30000, -1.0), np.full(30000, 2.0**-1000), np.full(30000, -3 * 2.0**-1070),
        np.resize([-2.0**600, 2.0**-1074], 30000)])),
]


@needs_numba
@pytest.mark.parametrize("name,make", ROWS, ids=[r[0] for r in ROWS])
def test_rowsum_exact_by_the_kernel_rounds_as_the_numpy_paths(name, make, monkeypatch):
    X = make(np.random.default_rng(5))
    assert _fastsums.superacc_rows(*X.shape)
    fast = rowsum_exact(X)
    monkeypatch.setenv("EXACTREF_NUMBA", "0")  # the numpy paths
    slow = rowsum_exact(X)
    assert _fields(fast) == _fields(slow)
    assert fast.zero.tolist() == slow.zero.tolist()
    assert fast.zsign[fast.zero].tolist() == slow.zsign[slow.zero].tolist()
    np.testing.assert_array_equal(fast.special, slow.special)
    for i in range(X.shape[0]):
        if not fast.r[i] and not slow.r[i]:  # a sticky rest: element() is a stand-in
            assert fast.element(i) == slow.element(i)


@needs_numba
def test_er_sum_is_bit_for_bit_the_numpy_path(monkeypatch):
    rng = np.random.default_rng(9)
    x = rng.standard_normal(200000) * np.exp2(rng.integers(-40, 40, 200000))
    for dt in ("float64", "float32"):
        xs = x.astype(dt)
        fast = [er.sum(xs, rounding=m).rounded.tolist() for m in R]
        monkeypatch.setenv("EXACTREF_NUMBA", "0")
        slow = [er.sum(xs, rounding=m).rounded.tolist() for m in R]
        monkeypatch.delenv("EXACTREF_NUMBA")
        assert fast == slow
    assert er.sum(x).rounded.tolist() == math.fsum(x)
