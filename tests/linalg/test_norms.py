"""layer_norm, rms_norm and group_norm: every rounded element agrees with an independent
oracle (``norm_oracle``: Fractions and isqrt, rounded by MPFR; no exactref code) on random
and adversarial rows, every float format of 16 bits or more and every rounding mode; exact
cases, special values and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from norm_oracle import normalized
from norm_oracle import same as _same

import exactref as er

MODES = list(er.Rounding)
FLOATS = ["float64", "float32", "bfloat16", "float16"]


def _cast(a, fmt):
    return np.asarray(er.asarray(np.asarray(a, np.float64), fmt).numpy()).astype(np.float64)


def _rows(rng, fmt, n):
    """Random, offset, wide, constant and cancelling rows of ``n`` elements, as ``fmt``."""
    big = 1e3 if fmt == "float16" else 1e8
    rows = [rng.standard_normal(n), 3.0 + 0.01 * rng.standard_normal(n),
            np.exp2(rng.integers(-8, 8, n)) * rng.standard_normal(n),
            np.full(n, 1.5), np.where(np.arange(n) % 2 == 0, big, -big) + rng.integers(0, 3, n)]
    return _cast(np.array(rows), fmt)



@pytest.mark.parametrize("fmt", FLOATS)
@pytest.mark.parametrize("n", [1, 3, 8])
def test_layer_and_rms_norm_every_mode(fmt, n):
    rng = np.random.default_rng(n)
    X = _rows(rng, fmt, n)
    w = _cast(rng.uniform(0.5, 2, n), fmt)
    b = _cast(rng.standard_normal(n), fmt)
    a = er.asarray(X, fmt)
    for mode in MODES:
        for eps in (1e-5, 0.0, 0.25):
            got = er.layer_norm(a, n, w, b, eps=eps, rounding=mode).rounded.numpy()
            want = [normalized(list(r), list(w), list(b), eps, True, fmt, mode) for r in X]
            _same(got, sum(want, []))
        got = er.rms_norm(a, (n,), w, eps=1e-6, rounding=mode).rounded.numpy()
        want = [normalized(list(r), list(w), None, 1e-6, False, fmt, mode) for r in X]
        _same(got, sum(want, []))


@pytest.mark.parametrize("fmt", ["float32", "bfloat16"])
def test_group_norm_every_mode(fmt):
    rng = np.random.default_rng(7)
    x = _cast(rng.standard_normal((2, 4, 3)) + 5, fmt)
    w = _cast(rng.uniform(0.5, 2, 4), fmt)
    b = _cast(rng.standard_normal(4), fmt)
    for mode in MODES:
        got = er.group_norm(er.asarray(x, fmt), 2, w, b, rounding=mode).rounded.numpy()
        want = []
        for s in range(2):
            for g in range(2):
                row = list(x[s, 2 * g:2 * g + 2].reshape(-1))
                ww = [w[2 * g + c // 3] for c in range(6)]
                bb = [b[2 * g + c // 3] for c in range(6)]
                want.append(normalized(row, ww, bb, 1e-5, True, fmt, mode))
        _same(got.reshape(-1), sum(want, []))


def test_exact_cases():
    # var + eps = 1/4 + 3/4 = 1: y = x - mu exactly
    r = er.layer_norm(er.asarray([[0.0, 1.0]], "float32"), 2, eps=0.75)
    assert r.rounded.tolist() == [[-0.5, 0.5]]
    assert float(np.max(np.asarray(er.layer_norm([[0.0, 1.0]], 2, eps=0.75,
                                                 rounding="toward_zero").rounded))) == 0.5
    # a constant row: y = b exactly, in every mode and format
    for fmt in FLOATS:
        for mode in MODES:
            y = er.layer_norm(er.asarray([[3.0, 3.0, 3.0]], fmt), 3, bias=[0.1, -2.0, 0.0],
                              rounding=mode).rounded.numpy().astype(np.float64)
            assert y[0, 1:].tolist() == [-2.0, 0.0]
            assert y[0, 0] == float(er.asarray([0.1], fmt, rounding=mode).numpy()[0])
    # a bias of another format is exact: the float64 0.1 rounded once into bfloat16
    y = er.layer_norm(er.asarray([[3.0, 3.0]], "bfloat16"), 2, bias=np.array([0.1, 0.1]))
    assert y.rounded.tolist()[0][0] == float(_cast([0.1], "bfloat16")[0])
    # rms of a row of zeros is 0; with eps = 0 it is 0 / 0
    assert er.rms_norm([[0.0, 0.0]], 2).rounded.tolist() == [[0.0, 0.0]]
    assert all(math.isnan(v) for v in er.rms_norm([[0.0, 0.0]], 2, eps=0.0).rounded.tolist()[0])
    # huge values: no overflow inside (float32 kernels overflow their sum of squares here)
    y = er.layer_norm(er.asarray([[1e30, -1e30]], "float32"), 2).rounded.tolist()
    assert y == [[1.0, -1.0]]


def test_rms_norm_default_eps():
    # eps=None: the compute type's machine epsilon (PyTorch 2.13: float32's for bfloat16)
    x = er.asarray([[1e-4, 0.0, 0.0, 0.0]], "bfloat16")
    got = er.rms_norm(x, 4).rounded.tolist()[0][0]
    v = float(_cast([1e-4], "bfloat16")[0])
    assert got == float(_cast([v / math.sqrt(v * v / 4 + 2.0**-23)], "bfloat16")[0])
    y = er.rms_norm(np.array([[1e-9, 0.0]]), 2).rounded.tolist()[0][0]
    assert y == pytest.approx(1e-9 / math.sqrt(1e-18 / 2 + 2.0**-52), rel=1e-15)


def test_special_values():
    inf, nan = math.inf, math.nan
    X = np.array([[1.0, inf, 2.0, 3.0], [1.0, nan, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
    ln = er.layer_norm(X, 4).rounded.numpy()
    assert np.isnan(ln[:2]).all() and np.isfinite(ln[2]).all()
    rms = er.rms_norm(X, 4).rounded.numpy()  # PyTorch: rsqrt(inf) = 0, inf * 0 = NaN
    assert rms[0].tolist()[0] == 0.0 and math.isnan(rms[0, 1]) and np.isnan(rms[1]).all()
    w = np.array([1.0, inf, 0.0, 1.0])
    b = np.array([0.0, 0.0, inf, -inf])
    y = er.layer_norm(X[2:], 4, w, b).rounded.tolist()[0]
    assert y[1:] == [-inf, inf, -inf] and y[0] == pytest.approx(-1.5 / math.sqrt(1.25 + 1e-5), rel=1e-15)
    r = er.layer_norm(X, 4)
    assert r.covers(r.rounded).all()


def test_errors():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"normalized_shape=\[4\] does not match"):
        er.layer_norm(x, 4)
    with pytest.raises(ValueError, match="weight has shape"):
        er.layer_norm(x, 3, weight=np.ones(2))
    with pytest.raises(ValueError, match="eps=-1.0 is negative"):
        er.rms_norm(x, 3, eps=-1.0)
    with pytest.raises(ValueError, match="num_groups=2 does not divide the 3 channels"):
        er.group_norm(x, 2)
    with pytest.raises(ValueError, match="algorithm="):
        er.layer_norm(x, 3, algorithm="textbook")
    with pytest.raises(ValueError, match="needs a real floating x"):
        er.layer_norm(np.zeros((2, 3), np.int32), 3)


def test_the_default_is_two_pass_and_tight():
    """layer_norm's default algorithm is two-pass (NORM_ALGORITHM): on float32 (4, 1024) normal
    rows its median tolerance is within the issue's 64 ulps, and no loose-check warning fires;
    the Welford/Chan trees (algorithm='stable') are declared, and looser."""
    import warnings

    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 1024)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = er.layer_norm(x, 1024)
        assert ref.covers(ref.rounded).all()
    assert ref.details["algorithm"] == "two-pass"
    assert float(np.median(ref.tolerance_ulps())) <= 64
    loose = er.layer_norm(x, 1024, algorithm="stable")
    assert float(np.median(loose.tolerance_ulps())) > 4 * float(np.median(ref.tolerance_ulps()))


def _oracle_check(X, w, b, eps, fmt, centered=True):
    a = er.asarray(np.asarray(X, np.float64), fmt)
    Xd = np.asarray(a.numpy()).astype(np.float64)
    n = Xd.shape[-1]
    wl = None if w is None else [float(v) for v in w]
    bl = None if b is None else [float(v) for v in b]
    for mode in MODES:
        if centered:
            got = er.layer_norm(a, n, w, b, eps=eps, rounding=mode).rounded.numpy()
        else:
            got = er.rms_norm(a, n, w, eps=eps, rounding=mode).rounded.numpy()
        want = [normalized(list(r), wl, bl, eps, centered, fmt, mode) for r in Xd]
        _same(got, sum(want, []))


def test_edges_against_the_oracle():
    rng = np.random.default_rng(3)
    for centered in (True, False):  # huge, subnormal and far-apart float64 data
        _oracle_check([[2.0**1000, -2.0**1000, 3 * 2.0**999]], None, None, 1e-5, "float64",
                      centered)
        _oracle_check([[2.0**-1070, 2.0**-1074, 0.0, 3 * 2.0**-1072]], None, None, 0.0,
                      "float64", centered)
        _oracle_check([[1e300, 1.0, -1e-300, 5.0]], None, None, 1e-5, "float64", centered)
    _oracle_check([[1e-45, 3e-45, 0.0, 1e-40]], None, None, 0.0, "float32")
    x = np.array([[0.0, 1.0, 2.0, 7.0]])
    cancel = -(x[0] - 2.5) / np.sqrt(np.var(x) + 1e-5)  # a bias that cancels the value
    for fmt in ("float64", "float32", "bfloat16"):
        _oracle_check(x, np.ones(4), cancel, 1e-5, fmt)
    _oracle_check(x, [0.0, 1.0, -0.0, 2.0], [0.5, 0.0, 0.0, 1.0], 1e-5, "float16")
    for fmt in ("float8_e4m3fn", "float8_e5m2"):
        _oracle_check(rng.standard_normal((3, 8)), rng.uniform(0.5, 2, 8),
                      rng.standard_normal(8), 1e-5, fmt)
    _oracle_check(rng.standard_normal((3, 8)), None, None, 1e10, "float32")
    X = rng.standard_normal((4, 16)) * np.exp2(rng.integers(-60, 60, (4, 16)))
    _oracle_check(X, rng.standard_normal(16), 1e-10 * rng.standard_normal(16), 1e-5, "float64")
    _oracle_check(X, None, None, 1e-5, "float32")
    # overflow of the output in every mode
    _oracle_check([[0.0, 1.0, 2.0]], [1e308, -1e308, 1e308], None, 0.0, "float64")
    _oracle_check([[0.0, 1.0, 2.0]], [6e4, -65504.0, 65504.0], [0.0, 0.0, 65504.0], 0.0,
                  "float16")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FLOATS)
def test_random_rows_sweep(fmt):
    rng = np.random.default_rng(11)
    for n in (2, 5, 16, 33):
        span = 4 if fmt == "float16" else 20  # float16 holds no more than 65504
        X = rng.standard_normal((6, n)) * np.exp2(rng.integers(-span, span, (6, 1)))
        X += rng.integers(-3, 4, (6, 1)) * np.abs(X).max()
        w = rng.uniform(-2, 2, n)
        b = rng.standard_normal(n)
        _oracle_check(X, w, b, float(rng.choice([0.0, 1e-5, 1e-3])), fmt)
        _oracle_check(X, w, None, 1e-6, fmt, centered=False)


@pytest.mark.parametrize("fmt", ["float64", "float32", "bfloat16"])
def test_fast_paths_agree_with_the_integer_path(fmt, monkeypatch):
    """The float64 and double-double enclosures decide like the integer path (itself checked
    against the oracle above) on every element of wider batches, in every mode."""
    from exactref.linalg import _norms_exact

    rng = np.random.default_rng(12)
    X = rng.standard_normal((48, 40)) * np.exp2(rng.integers(-30, 30, (48, 1)))
    X[::3] += 7 * np.abs(X[::3]).max(axis=1, keepdims=True)  # offset rows
    w, b = rng.uniform(-2, 2, 40), rng.standard_normal(40)
    a = er.asarray(X, fmt)
    fast = {m: (er.layer_norm(a, 40, w, b, rounding=m).rounded.numpy(),
                er.rms_norm(a, 40, w, eps=1e-4, rounding=m).rounded.numpy()) for m in MODES}
    none = lambda rows, VS, eS, Dl, eD, todo, ex: np.zeros(todo.shape, bool)  # noqa: E731
    monkeypatch.setattr(_norms_exact, "_fast", none)
    monkeypatch.setattr(_norms_exact, "_fast_dd", none)
    for m in MODES:
        slow = (er.layer_norm(a, 40, w, b, rounding=m).rounded.numpy(),
                er.rms_norm(a, 40, w, eps=1e-4, rounding=m).rounded.numpy())
        for f, s in zip(fast[m], slow, strict=True):
            assert np.array_equal(f.astype(np.float64), s.astype(np.float64)), m


def test_normalized_shape_of_several_dimensions():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((4, 3, 8)).astype(np.float32)
    w, b = rng.standard_normal((3, 8)), rng.standard_normal((3, 8))
    got = er.layer_norm(x, (3, 8), w, b).rounded.numpy()
    flat = er.layer_norm(x.reshape(4, 24), 24, w.reshape(24), b.reshape(24)).rounded.numpy()
    assert np.array_equal(got.reshape(4, 24), flat)
    got = er.rms_norm(x, [3, 8], w).rounded.numpy()
    assert np.array_equal(got.reshape(4, 24), er.rms_norm(x.reshape(4, 24), 24,
                                                          w.reshape(24)).rounded.numpy())
    with pytest.raises(ValueError, match="expected x's last 2 dimension"):
        er.layer_norm(x, (8, 3))


# ----------------------------------------------------------------------- chunks of rows
def _norm_calls(x, rng):
    w = rng.standard_normal(x.shape[-1:]).astype(x.dtype)
    b = rng.standard_normal(x.shape[-1:]).astype(x.dtype)
    for kw in ({}, {"rounding": "toward_zero", "algorithm": "two-pass", "order": "pairwise"},
               {"rounding": "toward_positive", "compute": "float64", "fused": False}):
        rms = {k: v for k, v in kw.items() if k != "algorithm"}
        yield lambda kw=kw: er.layer_norm(x, (x.shape[-1],), weight=w, bias=b, **kw)
        yield lambda kw=kw: er.layer_norm(x, x.shape[-2:], **kw)
        yield lambda kw=rms: er.rms_norm(x, (x.shape[-1],), weight=w, **kw)
        yield lambda kw=kw: er.group_norm(
            x, 2, weight=np.arange(x.shape[1]).astype(x.dtype),
            bias=np.ones(x.shape[1], x.dtype), **kw)
        yield lambda kw=kw: er.group_norm(x, x.shape[1], **kw)


@pytest.mark.parametrize("name", ["float32", "specials", "bfloat16", "float16"])
def test_chunked_rows_equal_unchunked(monkeypatch, name):
    """Chunks of one row (and of a few) give the unchunked call's rounded values and
    tolerance bit for bit: the exact path per chunk, the bounds per chunk from the rows'
    integer sums and reductions taken for every row at once (their float64 brackets depend
    on the grid the rows share)."""
    from exactref.linalg import _norms

    rng = np.random.default_rng(2)
    special = np.array([[1.0, np.inf, 2.0, 3.0], [0, 0, 0, 0], [5, 5, 5, 5.0000001],
                        [np.nan, 1, 2, 3], [1e300, -1e300, 0, 3],
                        [1e-310, 2e-310, 0, -1e-320]]).reshape(6, 4, 1).repeat(5, axis=2)
    x = {"float32": rng.standard_normal((6, 4, 5)).astype(np.float32), "specials": special,
         "bfloat16": (rng.standard_normal((6, 4, 5)) * 30).astype("bfloat16"),
         "float16": (rng.standard_normal((6, 4, 5)) * 5 + 100).astype(np.float16)}[name]
    for call in _norm_calls(x, rng):
        monkeypatch.setattr(_norms, "_CHUNK", 1 << 40)
        r = call()
        want = (np.asarray(r.rounded.numpy(), np.float64), r.lowest, r.highest)
        for chunk in (1, 7, 45):
            monkeypatch.setattr(_norms, "_CHUNK", chunk)
            r = call()
            got = (np.asarray(r.rounded.numpy(), np.float64), r.lowest, r.highest)
            for a, b in zip(want, got, strict=True):
                assert np.array_equal(a, b, equal_nan=True), (name, chunk)
                assert np.array_equal(np.signbit(a), np.signbit(b)), (name, chunk)


def test_chunked_call_memory(monkeypatch):
    """layer_norm of 256 rows of 128 float32 in chunks of 1024 elements: the call's peak
    allocation beside its output stays within 4x the input's bytes plus a chunk's working
    set (unchunked, the float64 rows, the integer sums and the exact values of every row
    were held at once: about 25x)."""
    import tracemalloc

    from exactref.linalg import _norms

    monkeypatch.setattr(_norms, "_CHUNK", 1024)
    x = np.random.default_rng(3).standard_normal((256, 128)).astype(np.float32)
    kw = {"algorithm": "two-pass", "order": "pairwise"}  # declared: a strong check
    er.layer_norm(x[:2], (128,), **kw)  # warm: imports outside the measurement
    tracemalloc.start()
    try:
        r = er.layer_norm(x, (128,), **kw)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held <= 1.25 * x.nbytes + (1 << 16), (held, x.nbytes)  # rounded, special flags
    assert peak - held <= 4 * x.nbytes + (1 << 20), (peak, held, x.nbytes)
    assert r.covers(r.rounded).all()


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float64"])
def test_dtype_is_the_output_format(fmt):
    """``dtype=`` as on the elementwise ops: the exact value of x's own numbers rounded once
    into ``dtype`` (the oracle on float32 data), the tolerance around it."""
    rng = np.random.default_rng(5)
    X = _rows(rng, "float32", 6)
    a = er.asarray(X, "float32")
    for mode in (er.Rounding.NEAREST_EVEN, er.Rounding.TOWARD_ZERO):
        # the default model, declared (a 6-element float64 check is loose by default)
        r = er.layer_norm(a, 6, eps=1e-5, dtype=fmt, rounding=mode, algorithm="stable")
        assert r.rounded.dtype.name == fmt
        _same(r.rounded.numpy(), sum((normalized(list(row), None, None, 1e-5, True, fmt, mode)
                                      for row in X), []))
        assert r.covers(r.rounded.numpy()).all()
        r = er.rms_norm(a, 6, eps=1e-6, dtype=fmt, rounding=mode)
        _same(r.rounded.numpy(), sum((normalized(list(row), None, None, 1e-6, False, fmt, mode)
                                      for row in X), []))
    wide = er.group_norm(er.asarray(X.reshape(5, 3, 2), "float32"), 3, dtype="float64")
    assert np.array_equal(wide.rounded.numpy(), er.group_norm(
        er.asarray(X.reshape(5, 3, 2), "float64"), 3).rounded.numpy(), equal_nan=True)
    with pytest.raises(ValueError, match="dtype='int8' is not a real floating format"):
        er.layer_norm(a, 6, dtype="int8")


@pytest.mark.parametrize("mode", list(er.Rounding))
def test_rms_norm_keeps_the_sign_of_a_zero(mode):
    """rms norm is ``x * rsqrt(mean(x**2) + eps) * w``: a zero x gives a zero of the sign of
    ``x * w`` in every mode (torch's product gives the same), with or without a weight."""
    x = np.array([[-0.0, 3.0], [0.0, -4.0], [-0.0, 0.0]], np.float32)
    w = np.array([-1.0, 1.0], np.float32)
    plain = er.rms_norm(x, (2,), rounding=mode).rounded.numpy()
    weighted = er.rms_norm(x, (2,), weight=w, rounding=mode).rounded.numpy()
    assert np.signbit(plain[:, 0]).tolist() == [True, False, True]
    assert np.signbit(plain[2, 1]) == np.False_
    assert np.signbit(weighted[:, 0]).tolist() == [False, True, False]
