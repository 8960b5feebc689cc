"""mean, var, std and cumsum: every rounded element agrees with an independent oracle (Python
Fractions and integers, rounded once by MPFR through ``mpfr_oracle``: no exactref code) on
random and adversarial data, in every rounding mode and float format; the dim/axis spellings
and the errors."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from mpfr_oracle import FMTS, expected, mpfr_round, same

import exactref as er

MODES = list(er.Rounding)
FLOATS = ["float64", "float32", "bfloat16", "float16"]
SPREAD = {"float64": 200, "float32": 40, "bfloat16": 40, "float16": 4}


# ------------------------------------------------------------------------------- oracle
def _fr(v: float) -> Fraction:
    return Fraction(v)


def _nonfinite(row):
    """IEEE's sum of the non-finite values of a row (NaN, ±inf), or None."""
    bad = [v for v in row if not math.isfinite(v)]
    if not bad:
        return None
    if any(math.isnan(v) for v in bad) or (math.inf in bad and -math.inf in bad):
        return math.nan
    return bad[0]


def _zero_negative(row, mode) -> bool:
    """IEEE's sign of an exact-zero sum: -0 when every term is -0, the sum rule otherwise."""
    if row and all(v == 0 and math.copysign(1, v) < 0 for v in row):
        return True
    if all(v == 0 and math.copysign(1, v) > 0 for v in row):
        return False
    return mode is er.Rounding.TOWARD_NEGATIVE


def oracle_mean(row, fmt, mode):
    f = FMTS[fmt]
    if not row:
        return math.nan
    bad = _nonfinite(row)
    if bad is not None:
        return expected(bad, False, f, mode)
    v = sum(map(_fr, row), Fraction(0)) / len(row)
    return expected(v, _zero_negative(row, mode), f, mode)


def _m2(row):
    n = len(row)
    mu = sum(map(_fr, row), Fraction(0)) / n
    return sum(((_fr(v) - mu) ** 2 for v in row), Fraction(0))


def oracle_var(row, fmt, mode, correction=1, root=False):
    f = FMTS[fmt]
    n = len(row)
    if n == 0 or _nonfinite(row) is not None:
        return math.nan
    m2 = _m2(row)
    d = n - Fraction(correction)
    if d <= 0:
        return math.inf if m2 else math.nan
    v = m2 / d
    if not root or v == 0:
        return expected(v, False, f, mode)
    return expected(_sqrt_odd(v), False, f, mode)


def _sqrt_odd(v: Fraction) -> Fraction:
    """sqrt(v) rounded to odd at 200+ bits (rounds like sqrt(v) into every format of at most
    198 bits in every mode)."""
    s = 400
    k = math.isqrt(v.numerator * 4**s // v.denominator)
    exact = k * k * v.denominator == v.numerator * 4**s
    w = 2 * k + (0 if exact else 1)
    return Fraction(w, 2 ** (s + 1))


def oracle_cumsum(row, fmt, mode):
    out = []
    for j in range(1, len(row) + 1):
        pre = row[:j]
        bad = _nonfinite(pre)
        if bad is not None:
            out.append(expected(bad, False, FMTS[fmt], mode))
            continue
        v = sum(map(_fr, pre), Fraction(0))
        out.append(expected(v, _zero_negative(pre, mode), FMTS[fmt], mode))
    return out


def test_sqrt_oracle_is_exact_on_squares_and_midpoints():
    assert _sqrt_odd(Fraction(9, 4)) == Fraction(3, 2)
    mid = Fraction(2**53 + 1, 2**53)  # a float64 midpoint: its square is not a float64
    assert mpfr_round(_sqrt_odd(mid * mid), FMTS["float64"], er.Rounding.NEAREST_EVEN) == 1


# ----------------------------------------------------------------------------------- data
def _rows(kind, fmt, m, k, rng):
    s = SPREAD[fmt]
    x = rng.standard_normal((m, k))
    if kind == "wide":
        x *= 2.0 ** rng.integers(-s, s + 1, size=x.shape)
    elif kind == "offset":  # a large mean, a tiny spread: heavy cancellation in n Q - S**2
        x = 3.0 + x * 2.0 ** -(er.dtype(fmt).precision // 2)
    elif kind == "equal":  # every row constant: variance exactly 0 (0.1: n * 0.1 inexact)
        x = np.repeat(x[:, :1], k, axis=1)
        x[0] = 0.1
    elif kind == "cancel" and k >= 3:  # the sum cancels exactly but for tiny terms
        x[:, 1] = -x[:, 0]
        x[:, 2] *= 2.0**-s
    return er.asarray(x, fmt).numpy().astype(np.float64)


KINDS = ["random", "wide", "offset", "equal", "cancel"]


def _check(got, want, label):
    got = np.asarray(got, dtype=np.float64).reshape(-1).tolist()
    want = np.asarray(want, dtype=np.float64).reshape(-1).tolist()
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want, strict=True)) if not same(g, w)]
    assert not bad, (label, bad[:5])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", FLOATS)
def test_mean_var_std_every_mode(fmt, kind):
    rng = np.random.default_rng(abs(hash((fmt, kind, "mvs"))) % 2**32)
    for k in (1, 3, 7, 8):
        x = _rows(kind, fmt, 4, k, rng)
        a = er.asarray(x, fmt)
        rows = [list(map(float, r)) for r in x]
        for mode in MODES:
            _check(er.mean(a, dim=1, rounding=mode).rounded.numpy(),
                   [oracle_mean(r, fmt, mode) for r in rows], ("mean", k, mode))
            for corr in (0, 1):
                _check(er.var(a, dim=1, correction=corr, rounding=mode).rounded.numpy(),
                       [oracle_var(r, fmt, mode, corr) for r in rows], ("var", k, corr, mode))
                _check(er.std(a, dim=1, correction=corr, rounding=mode).rounded.numpy(),
                       [oracle_var(r, fmt, mode, corr, root=True) for r in rows],
                       ("std", k, corr, mode))


@pytest.mark.parametrize("fmt", FLOATS)
def test_cumsum_every_mode(fmt):
    rng = np.random.default_rng(abs(hash((fmt, "cumsum"))) % 2**32)
    for kind in ("random", "wide", "cancel"):
        x = _rows(kind, fmt, 3, 9, rng)
        x[2, 3] = -x[2, 0] - x[2, 1] - x[2, 2] if fmt == "float64" else x[2, 3]
        a = er.asarray(x, fmt)
        for mode in MODES:
            got = er.cumsum(a, 1, rounding=mode).rounded.numpy()
            want = [oracle_cumsum(list(map(float, r)), fmt, mode) for r in x]
            _check(got, want, (kind, mode))


def test_specials_and_signs():
    inf, nan = math.inf, math.nan
    x = np.array([[1.0, inf, 2.0], [inf, -inf, 1.0], [nan, 1.0, 1.0], [-0.0, -0.0, -0.0],
                  [0.0, -0.0, 0.0], [1.0, -1.0, 0.0]])
    for mode in MODES:
        rows = [list(map(float, r)) for r in x]
        _check(er.mean(x, dim=1, rounding=mode).rounded.numpy(),
               [oracle_mean(r, "float64", mode) for r in rows], ("mean", mode))
        _check(er.var(x, dim=1, rounding=mode).rounded.numpy(),
               [oracle_var(r, "float64", mode) for r in rows], ("var", mode))
        _check(er.cumsum(x, 1, rounding=mode).rounded.numpy(),
               [oracle_cumsum(r, "float64", mode) for r in rows], ("cumsum", mode))
    assert math.isnan(er.mean(np.zeros((2, 0)), dim=1).rounded.tolist()[0])


def test_correction_at_or_past_n_is_torchs_inf_or_nan():
    x = np.array([[1.0, 2.0], [3.0, 3.0]])
    for corr in (2, 3, 5):
        got = er.var(x, dim=1, correction=corr).rounded.tolist()
        assert got[0] == math.inf and math.isnan(got[1])
        assert er.std(x, dim=1, correction=corr).rounded.tolist()[0] == math.inf
    one = er.var(np.array([[4.0]]), dim=1).rounded.tolist()  # n = 1, correction 1: 0 / 0
    assert math.isnan(one[0][0] if isinstance(one[0], list) else one[0])
    # a fractional correction is exact: M2 / (n - 1/2)
    x = np.array([1.0, 2.0, 4.0])
    assert er.var(x, correction=0.5).rounded.tolist() == float(_m2([1.0, 2.0, 4.0]) / Fraction(5, 2))


def test_sum_of_squares_past_the_range_is_exact():
    big = 2.0**1000
    x = np.array([big, -big, big, -big])  # x**2 overflows float64; the variance does not
    want = float(_m2(list(x)) / 4) if _m2(list(x)) / 4 < 2**1024 else math.inf
    assert er.var(x, correction=0).rounded.tolist() == want == math.inf  # 2**2000
    y = np.array([2.0**600, -(2.0**600)]) * 1.5
    assert er.std(y, correction=0).rounded.tolist() == 1.5 * 2.0**600  # sqrt(M2 / 2) exactly
    t = np.array([2.0**-1074, 0.0, 2.0**-1074 * 3])  # subnormals: exact, squares far below
    for mode in MODES:
        _check(er.mean(t, rounding=mode).rounded.numpy(),
               [oracle_mean(list(t), "float64", mode)], ("subnormal mean", mode))
    _check(er.var(t.reshape(1, 3), dim=1, rounding="toward_positive").rounded.numpy(),
           [oracle_var(list(t), "float64", er.Rounding.TOWARD_POSITIVE)], "subnormal var")


def test_huge_cancellation_is_exact():
    x = np.array([1e16, 1.0, -1e16, 3.0, 1e-300], dtype=np.float64)
    assert er.mean(x).rounded.tolist() == float((Fraction(4) + Fraction(1e-300)) / 5)
    got = er.var(x).rounded.tolist()
    want = oracle_var(list(x), "float64", er.Rounding.NEAREST_EVEN)
    assert got == want


@pytest.mark.parametrize("shape,dims", [((2, 3, 4), (0, 2)), ((2, 3, 4), -1), ((5,), None),
                                        ((2, 3), ()), ((3, 1, 2), (1,))])
def test_batched_dims_agree_with_numpy_layout(shape, dims):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape)
    ax = dims if dims != () else None  # torch's dim=() reduces every dimension
    want = np.mean(x, axis=ax, keepdims=True)
    r = er.mean(x, dim=dims, keepdim=True)
    assert r.rounded.shape == want.shape
    assert np.allclose(r.rounded.numpy(), want, rtol=1e-14, atol=0)
    v = er.var(x, axis=dims, keepdims=False, correction=0)  # numpy's axis=() reduces none
    assert v.rounded.shape == np.var(x, axis=dims).shape
    assert np.allclose(v.rounded.numpy(), np.var(x, axis=dims), rtol=1e-12, atol=0)
    assert er.sum(x, dim=dims).rounded.shape == np.sum(x, axis=ax).shape
    assert er.sum(x, axis=dims).rounded.shape == np.sum(x, axis=dims).shape


def test_both_spellings_on_every_reduction():
    x = np.arange(12.0).reshape(3, 4)
    for f in (er.sum, er.mean, er.var, er.std):
        a = f(x, dim=1, keepdim=True).rounded.numpy()
        b = f(x, axis=1, keepdims=True).rounded.numpy()
        c = f(x, axis=1, dim=1, keepdims=True, keepdim=True).rounded.numpy()
        assert a.shape == (3, 1) and (a == b).all() and (a == c).all(), f.__name__
        with pytest.raises(ValueError, match="axis=0 and dim=1 disagree"):
            f(x, axis=0, dim=1)
        with pytest.raises(ValueError, match="keepdims=True and keepdim=False disagree"):
            f(x, dim=1, keepdims=True, keepdim=False)
    assert (er.cumsum(x, axis=0).rounded.numpy() == er.cumsum(x, dim=0).rounded.numpy()).all()
    with pytest.raises(ValueError, match="disagree"):
        er.cumsum(x, axis=0, dim=1)
    assert er.cumsum(x).rounded.shape == (12,)  # None: the flattened array, as numpy
    for f in (er.var, er.std):  # numpy's ddof is torch's correction
        assert (f(x, axis=1, ddof=0).rounded.numpy() == f(x, dim=1, correction=0).rounded
                .numpy()).all()
        with pytest.raises(ValueError, match="correction=2 and ddof=0 are both given.*pass "
                                             "only one of them"):
            f(x, correction=2, ddof=0)


@pytest.mark.parametrize("f", [er.var, er.std], ids=lambda f: f.__name__)
@pytest.mark.parametrize("correction, ddof", [(1, 0), (0, 1), (1, 1), (0, 0)])
def test_correction_and_ddof_together_are_refused(f, correction, ddof):
    """Issue 19: ``var(x, dim=1, ddof=0, correction=1)`` silently used ddof (correction=1 was
    taken for the default); both spellings at once are refused by name, whatever the values."""
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match=rf"{f.__name__}: correction={correction} and "
                                         rf"ddof={ddof} are both given"):
        f(x, dim=1, ddof=ddof, correction=correction)
    assert f(x, dim=1).rounded.tolist() == f(x, dim=1, correction=1).rounded.tolist()


#: Empty inputs and empty reductions, each with its torch 2.13 result (shape, values).
_EMPTY = [((0,), 0), ((0, 5), 0), ((5, 0), 1), ((0, 5), 1), ((5, 0), 0), ((0, 5), None),
          ((2, 0, 3), (0, 2))]


@pytest.mark.parametrize("fmt", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape, dim", _EMPTY, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "cumsum"])
def test_empty_inputs_give_what_torch_gives(op, shape, dim, fmt):
    """Issue 19: ``cumsum(np.zeros(0, np.float32), dim=0)`` raised numpy's "cannot reshape
    array of size 0" and var with algorithm='chan' "zero-size array to reduction operation
    maximum". torch 2.13: an empty sum is +0, an empty mean, var or std NaN (its 0 / 0), an
    empty cumsum empty; every tolerance and covers() work on them."""
    torch = pytest.importorskip("torch")
    if op == "cumsum" and not isinstance(dim, int):
        return
    x = np.zeros(shape, fmt)
    kw = {} if dim is None else {"dim": dim}
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")  # torch: degrees of freedom <= 0
        want = getattr(torch, op)(torch.from_numpy(x), **kw).numpy()
    algorithms = ["any", "two-pass", "welford", "chan"] if op in ("var", "std") else [None]
    for alg in algorithms:
        r = getattr(er, op)(x, **kw, **({} if alg is None else {"algorithm": alg}))
        got = r.rounded.numpy()
        assert got.shape == want.shape and got.dtype == want.dtype, (alg, got.shape)
        assert np.array_equal(got, want, equal_nan=True) and not np.signbit(got).any(), alg
        assert r.tolerance().shape == want.shape
        assert r.covers(want).all(), alg


def test_empty_integer_sums_and_prefix_sums():
    torch = pytest.importorskip("torch")
    x = np.zeros((0, 5), np.int32)
    assert er.sum(x, dim=0).rounded.tolist() == torch.sum(torch.from_numpy(x), 0).tolist()
    got = er.cumsum(x, dim=0).rounded
    assert got.shape == (0, 5) and got.dtype.name == "int64"


@pytest.mark.parametrize("dtype", ["uint8", "int16", "bool", "float16"])
def test_reductions_take_a_policy_for_their_result_format(dtype):
    """Issue 19: ``policy=`` was a TypeError for every op but the elementwise ones. Under the
    numpy policy the result formats are numpy 2's (sum of uint8 is uint64, the mean of ints
    float64); torch's stay the default; another policy is refused by name."""
    x = (np.arange(12) % 3).reshape(3, 4).astype(dtype)
    for op in ("sum", "cumsum"):
        got = getattr(er, op)(x, 1, policy="numpy").rounded
        assert got.dtype.name == getattr(np, op)(x, axis=1).dtype.name, op
        assert got.numpy().tolist() == getattr(np, op)(x, axis=1).tolist(), op
        torch_fmt = "int64" if dtype != "float16" else "float16"
        assert getattr(er, op)(x, 1).rounded.dtype.name == torch_fmt, op
        with pytest.raises(ValueError, match=rf"{op}: policy='jax' is not modelled for "
                                             r"reductions.*'torch' or 'numpy'.*dtype="):
            getattr(er, op)(x, 1, policy="jax")
    for op in ("mean", "var", "std"):
        kw = {} if op == "mean" else {"ddof": 1}
        got = getattr(er, op)(x, axis=1, policy="numpy", **kw).rounded
        want = getattr(np, op)(x, axis=1, **kw)
        assert got.dtype.name == want.dtype.name, op
        assert np.allclose(got.numpy().astype(np.float64), want, rtol=1e-3), op
        if dtype != "float16":  # torch's mean of integers: could not infer output dtype
            with pytest.raises(ValueError, match="real floating"):
                getattr(er, op)(x, axis=1)
        with pytest.raises(ValueError, match=rf"{op}: policy='array_api' is not modelled"):
            getattr(er, op)(x, axis=1, policy="array_api")


def test_bad_arguments_say_what_to_do():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"out of range.*\[-2, 1\]"):
        er.mean(x, dim=2)
    with pytest.raises(ValueError, match="correction=-1.*>= 0"):
        er.var(x, correction=-1)
    with pytest.raises(TypeError, match="not a number"):
        er.var(x, correction="1")
    with pytest.raises(ValueError, match="names an axis twice"):
        er.var(x, dim=(1, -1))
    with pytest.raises(ValueError, match="pass dtype='float32'"):
        er.mean(np.ones(3, np.int32))
    assert er.mean(np.ones(3, np.int32), dtype="float32").rounded.tolist() == 1.0
    with pytest.raises(ValueError, match="algorithm="):
        er.var(x, algorithm="textbook")
    with pytest.raises(ValueError, match="order="):
        er.cumsum(x, 1, order="pairwise")
    with pytest.raises(TypeError, match="not an integer"):
        er.cumsum(x, (0, 1))


def test_integer_cumsum_is_exact_int64():
    x = np.array([[2**62, 2**62, -(2**62)], [1, 2, 3]], dtype=np.int64)
    r = er.cumsum(x, 1)
    assert r.rounded.dtype.name == "int64"
    assert r.rounded.tolist()[1] == [1, 3, 6]
    assert r.rounded.tolist()[0][1] == -(2**63)  # wraps, as int64 arithmetic does
    assert er.cumsum(np.array([True, True]), 0).rounded.tolist() == [1, 2]


def test_registry_records():
    for name in ("mean", "var", "std", "cumsum"):
        spec = er.ops.get_op(name)
        assert spec.function is getattr(er, name)
        assert spec.counterparts.torch == f"torch.{name}"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FLOATS + ["float8_e4m3fn", "float8_e5m2"])
def test_sweep_every_mode_many_lengths(fmt):
    """Random lengths 1..40 and kinds, every mode (``--run-slow``)."""
    rng = np.random.default_rng(abs(hash((fmt, "sweep"))) % 2**32)
    spread = SPREAD.get(fmt, 2)
    for trial in range(30):
        k = int(rng.integers(1, 41))
        x = rng.standard_normal((3, k)) * 2.0 ** rng.integers(-spread, spread + 1, (3, k))
        if trial % 3 == 1:
            x = np.repeat(x[:, :1], k, axis=1)
        a = er.asarray(x, fmt)
        x = a.numpy().astype(np.float64)
        rows = [list(map(float, r)) for r in x]
        for mode in MODES:
            _check(er.mean(a, dim=1, rounding=mode).rounded.numpy(),
                   [oracle_mean(r, fmt, mode) for r in rows], ("mean", k, mode))
            _check(er.var(a, dim=1, rounding=mode).rounded.numpy(),
                   [oracle_var(r, fmt, mode) for r in rows], ("var", k, mode))
            _check(er.std(a, dim=1, correction=0, rounding=mode).rounded.numpy(),
                   [oracle_var(r, fmt, mode, 0, root=True) for r in rows], ("std", k, mode))
            _check(er.cumsum(a, 1, rounding=mode).rounded.numpy(),
                   [oracle_cumsum(r, fmt, mode) for r in rows], ("cumsum", k, mode))


def test_exact_ties_in_every_mode():
    """Means and variances that are exactly midpoints of the output format, and a root that is
    exactly a float: the modes must tell them apart."""
    a = 1 + 2.0**-23
    rows = np.array([[a, a, 1 - 2.0**-24]], np.float32)  # mean 1 + 2**-24: a float32 tie
    assert Fraction(sum(map(Fraction, map(float, rows[0])))) / 3 == 1 + Fraction(1, 2**24)
    for mode in MODES:
        _check(er.mean(rows, dim=1, rounding=mode).rounded.numpy(),
               [oracle_mean(list(map(float, rows[0])), "float32", mode)], ("tie mean", mode))
    want = {"nearest_even": 1.0, "nearest_away": a, "toward_zero": 1.0, "toward_positive": a}
    for mode, w in want.items():
        assert er.mean(rows, dim=1, rounding=mode).rounded.tolist() == [w], mode
    v = np.array([[0.0, 3.0, 4.0 * 2.0**0, 1.0]])  # M2 = 9.0 + ... exact small values
    for mode in MODES:
        for corr in (0, 1, 2):
            _check(er.std(v, dim=1, correction=corr, rounding=mode).rounded.numpy(),
                   [oracle_var(list(v[0]), "float64", mode, corr, root=True)], ("std", mode))
    sq = np.array([[1.0, 3.0]])  # var (correction 0) 1, std exactly 1: no rounding at all
    assert er.std(sq, dim=1, correction=0, rounding="toward_negative").rounded.tolist() == [1.0]
    assert er.std(sq, dim=1, correction=0, rounding="toward_positive").rounded.tolist() == [1.0]
