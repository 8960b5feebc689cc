"""softmax, log_softmax and logsumexp against an independent mpmath oracle, bit for bit, in
every rounding mode: random rows and the adversarial ones (huge logits, all-equal rows, -inf
masks, rows of one element, +inf and NaN entries, terms far below the others, logsumexp near
0), float64, float32, bfloat16 and float16; the dims and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from softmax_oracle import expected

import exactref as er
from exactref._exact import _softmax as kernel

OPS = ("softmax", "log_softmax", "logsumexp")
FMTS = ("float64", "float32", "bfloat16", "float16")
MODES = list(er.Rounding)
INF = np.inf


def _same(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def _check(op, rows, fmt, mode):
    x = er.asarray(rows, fmt)
    xv = np.asarray(x.numpy()).astype(np.float64)
    want = expected(op, xv, er.dtype(fmt), mode)
    got = getattr(er, op)(x, dim=-1, rounding=mode).rounded.numpy().astype(np.float64)
    ok = _same(want, got)
    assert ok.all(), (op, fmt, mode, xv[np.nonzero(~ok)[0]] if xv.ndim > 1 else xv,
                      want[~ok], got[~ok])


def _adversarial(fmt):
    big = float(er.dtype(fmt).max_finite)
    tiny = float(er.dtype(fmt).smallest_subnormal)
    return [
        [1.0, 2.0, 3.0, 4.0],
        [3.0, 3.0, 3.0, 3.0],                 # 1/4: exact
        [3.0, 3.0, 3.0, -INF],                # 1/3 and an exact 0
        [-INF, 5.0, -INF, -INF],              # one finite entry: logsumexp 5 exactly
        [-INF, -INF, -INF, -INF],             # NaN; logsumexp -inf
        [INF, 1.0, 2.0, -INF],                # the limit: 1 at +inf
        [INF, INF, 1.0, 2.0],                 # no limit: NaN
        [np.nan, 1.0, 2.0, 3.0],              # NaN propagates
        [big, -big, 0.0, big],                # huge logits: terms far below the others
        [-big, -big, -big, -big + big / 4],
        [0.0, -0.0, tiny, -tiny],             # all within a subnormal of each other
        [-0.69140625, -0.69140625, -30.0, -60.0],  # logsumexp near 0 (cancellation)
        [0.0, -big, -big, -big],              # 1 - tiny, log1p(tiny)
        [100.0, 99.0, -100.0, 50.0],
    ]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name.lower())
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("op", OPS)
def test_adversarial_rows(op, fmt, mode):
    _check(op, _adversarial(fmt), fmt, mode)


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("op", OPS)
def test_random_rows(op, fmt):
    rng = np.random.default_rng(hash((op, fmt)) % 2**32)
    rows = rng.normal(size=(12, 9)) * rng.choice([0.1, 3.0, 30.0], size=(12, 1))
    rows[3, 2:] = -INF  # a causal mask
    rows[5, :] = rows[5, 0]  # an all-equal row
    for mode in MODES:
        _check(op, rows, fmt, mode)


@pytest.mark.parametrize("op", OPS)
def test_rows_of_one_element(op):
    rows = [[2.5], [-INF], [INF], [np.nan], [-0.0]]
    for fmt in ("float32", "bfloat16"):
        for mode in MODES:
            _check(op, rows, fmt, mode)


@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_exact_cases_have_no_step(op):
    """Exact values are exact: toward +inf gives them, not their successor."""
    x = er.asarray([[7.0, 7.0, 7.0, 7.0], [7.0, -INF, -INF, -INF]], "float32")
    r = getattr(er, op)(x, dim=1, rounding="toward_positive").rounded.tolist()
    if op == "softmax":
        assert r == [[0.25] * 4, [1.0, 0.0, 0.0, 0.0]]
    else:
        assert r[1] == [0.0, -INF, -INF, -INF] and -np.log(4.0) < r[0][0] < -np.log(4.0) + 2**-22
    lse = er.logsumexp(x, dim=1, rounding="toward_positive").rounded.tolist()
    assert lse[1] == 7.0 and lse[0] > 7.0


def test_dims_keepdim_and_spellings():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(2, 3, 4)).astype(np.float32)
    x = er.asarray(data, "float32")
    a = er.softmax(x, dim=1).rounded.numpy()
    b = er.softmax(x, axis=1).rounded.numpy()
    moved = er.softmax(np.moveaxis(data, 1, -1), dim=-1).rounded.numpy()
    assert np.array_equal(a, b) and np.array_equal(a, np.moveaxis(moved, -1, 1))
    lse = er.logsumexp(x, dim=(0, 2), keepdim=True)
    assert lse.rounded.shape == (1, 3, 1)
    flat = er.logsumexp(np.moveaxis(data, 1, 0).reshape(3, -1), dim=1).rounded.numpy()
    assert np.array_equal(lse.rounded.numpy().reshape(-1), flat)
    assert er.logsumexp(x, axis=-1, keepdims=True).rounded.shape == (2, 3, 1)
    assert er.logsumexp(x).rounded.shape == ()  # every dim, as scipy's axis=None
    assert er.softmax(er.asarray(2.0, "float32"), dim=0).rounded.tolist() == 1.0
    assert er.logsumexp(er.asarray(np.zeros((2, 0)), "float32"), dim=1).rounded.tolist() == \
        [-INF, -INF]
    assert er.logsumexp(np.array([1, 2], np.int64), dim=0).rounded.dtype.name == "float32"
    h = er.softmax(er.asarray([[1.0, 2.0]], "float16"), dim=1, dtype="float32")
    assert h.rounded.dtype.name == "float32"


def test_errors():
    x = er.asarray(np.zeros((2, 3)), "float32")
    with pytest.raises(ValueError, match="out of range"):
        er.softmax(x, dim=2)
    with pytest.raises(ValueError, match="disagree"):
        er.log_softmax(x, dim=0, axis=1)
    with pytest.raises(ValueError, match="needs the dimension"):
        er.softmax(x)
    with pytest.raises(ValueError, match="integers"):
        er.softmax(np.array([1, 2]), dim=0)
    with pytest.raises(ValueError, match="order=.*expected 'library'"):
        er.softmax(x, dim=1, order="diagonal")  # the long sums' grammar, quoted
    with pytest.raises(ValueError, match="preset"):
        er.softmax(x, dim=1, accuracy="nope")


def test_ziv_cap_names_the_row(monkeypatch):
    """A row that never decides is an exact case the argument missed: said loudly."""
    monkeypatch.setattr(kernel, "_decide_strict", lambda *a: None)
    with pytest.raises(AssertionError, match=r"softmax of the row \[1.0, 2.0\]"):
        kernel.evaluate_rows(np.array([[1.0, 2.0]]), "softmax")


def test_duplicate_rows_share_work():
    rows = np.tile(np.array([[0.5, -1.25, 3.0]]), (50, 1))
    ex = kernel.evaluate_rows(rows, "softmax")
    v = ex.round(er.dtype("float32"), er.Rounding.NEAREST_EVEN, "ieee")[0].reshape(50, 3)
    assert (v == v[0]).all()


def test_docs_table_is_the_registry():
    import pathlib

    from exactref import ops

    docs = pathlib.Path(__file__).resolve().parents[2] / "docs" / "softmax.md"
    assert ops.markdown_table("normalizations") in docs.read_text()


@pytest.mark.parametrize("fmt", ("float8_e4m3fn", "float8_e5m2", "float6_e3m2fn",
                                 "float4_e2m1fn", "float8_e4m3fnuz"))
@pytest.mark.parametrize("op", OPS)
def test_narrow_formats(op, fmt):
    """The 8-, 6- and 4-bit formats (finite rows: most have no infinities), every mode."""
    rng = np.random.default_rng(abs(hash((op, fmt))) % 2**32)
    rows = rng.normal(size=(6, 5)) * 2
    for mode in MODES:
        _check(op, rows, fmt, mode)


@pytest.mark.parametrize("op", OPS)
def test_undecided_rows_are_redone_at_twice_the_precision(op, monkeypatch):
    """A first pass at P bits decides little: the rows left are redone at 2P, 4P, ... (Ziv's
    strategy), with the same values as the usual first pass at P + 24."""
    rng = np.random.default_rng(31)
    rows = rng.normal(size=(20, 6)) * 4
    rows[3, 2:] = -INF
    want = {fmt: getattr(er, op)(er.asarray(rows, fmt), dim=1).rounded.numpy()
            for fmt in ("float32", "float64")}
    monkeypatch.setattr(kernel, "_W0", 0)
    for fmt in ("float32", "float64"):
        got = getattr(er, op)(er.asarray(rows, fmt), dim=1).rounded.numpy()
        assert _same(want[fmt], got).all()


def test_differences_not_exact_in_float64():
    """x_j - m rounds in float64 (an exponent spread beyond 53 bits): MPFR's exact difference."""
    rows = [[1.0, 2.0**-80, 3.0, -(2.0**-70)], [1e300, -1e300, 2.0**-60, 1e299]]
    for op in OPS:
        for mode in MODES:
            _check(op, rows, "float64", mode)


# ------------------------------------------------------------------ hypothesis, and a sweep
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from exactref.testing import strategies as ers  # noqa: E402


@settings(max_examples=60)
@given(rows=ers.arrays("float32", st.tuples(st.integers(1, 3), st.integers(1, 6)),
                       allow_nan=False),
       op=st.sampled_from(OPS), mode=st.sampled_from(MODES))
@example(rows=er.asarray([[3.4028234663852886e38, -3.4028234663852886e38]], "float32"),
         op="log_softmax", mode=er.Rounding.TOWARD_ZERO)
@example(rows=er.asarray([[1e-45, 0.0, -0.0]], "float32"), op="softmax",
         mode=er.Rounding.TOWARD_POSITIVE)
def test_float32_rows_hypothesis(rows, op, mode):
    _check(op, np.asarray(rows.numpy()).astype(np.float64), "float32", mode)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ("bfloat16", "float16"))
@pytest.mark.parametrize("op", OPS)
def test_every_pair_with_zero(op, fmt):
    """Rows ``[0, v]`` for every finite value ``v`` of the format, in every mode."""
    f = er.dtype(fmt)
    with np.errstate(invalid="ignore"):
        raw = np.arange(1 << 16, dtype=np.uint16).view(f.np_dtype).astype(np.float64)
    v = raw[np.isfinite(raw)]
    rows = np.stack([np.zeros_like(v), v], axis=1)
    for mode in MODES:
        _check(op, rows, fmt, mode)
