"""softmax, log_softmax and logsumexp in chunks of rows and, for rows longer than a chunk, in
blocks along the row (``linalg/_softmax.py``'s ``_CHUNK``, ``_SUM_BLOCK``;
``_exact/_softmax.LongRow``): the rounded values and the tolerance are the same bit for bit
as one unchunked call, for several shapes, dims, formats, rounding modes and models (online
blocks, PyTorch's stored half-format steps), rows with +-inf, NaN, equal entries and huge
spreads; the call's memory stays within 4x the input's bytes beside its output."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import exactref as er
import exactref.equivalents.torch as ert
from exactref._exact import _softmax as kernel
from exactref.linalg import _softmax as sm

INF, NAN = np.inf, np.nan
OPS = ("softmax", "log_softmax", "logsumexp")
UNCHUNKED = 1 << 40


def _rows():
    rng = np.random.default_rng(7)
    special = np.array([
        [1.0, INF, 2.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],  # one +inf
        [INF, 0.0, INF, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],  # two: NaN
        [0.0, 0.0, 0.0, 0.0, 0.0, -INF, 0.0, 0.0, 0.0, 0.0, 0.0],  # equal entries, a mask
        [5.0, -INF, -INF, -INF, -INF, -INF, -INF, -INF, -INF, -INF, -INF],  # one finite
        [NAN, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
        [-INF] * 11,
        [1e300, -1e300, 0.0, 3.0, 700.0, -700.0, 1.0, 2.0, 1e-300, -5e-324, 4.0],  # spread
        [-2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.0],  # near-equal
        [1.0, 1.0 + 2**-52, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 - 2**-53],
    ])
    return {
        "float64 specials": special,
        "float32 random": rng.standard_normal((7, 13)).astype(np.float32),
        "bfloat16 3-d": (rng.standard_normal((3, 4, 11)) * 40).astype("bfloat16"),
        "float16": (rng.standard_normal((5, 9)) * 6).astype(np.float16),
    }


def _call(fn, x, **kw):
    r = fn(x, **kw)
    return (np.asarray(r.rounded.numpy(), dtype=np.float64), r.lowest, r.highest,
            r.tolerance().numpy())


def _assert_same(want, got, what):
    for name, a, b in zip(("rounded", "lowest", "highest", "tolerance"), want, got,
                          strict=True):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        same = (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))
        assert a.shape == b.shape and same.all(), (what, name, a[~same], b[~same])


def _compare(monkeypatch, fn, x, chunks, sum_block, **kw):
    monkeypatch.setattr(sm, "_SUM_BLOCK", sum_block)
    monkeypatch.setattr(sm, "_CHUNK", UNCHUNKED)
    want = _call(fn, x, **kw)
    for chunk in chunks:
        monkeypatch.setattr(sm, "_CHUNK", chunk)
        _assert_same(want, _call(fn, x, **kw), (chunk, sum_block, kw))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", list(_rows()))
def test_chunked_equals_unchunked(monkeypatch, op, name):
    """Chunks of 1, 5 and 9 elements (blocks along every row, block sums of 4 columns) and of
    20 and 40 (several rows a chunk) give the unchunked call's bits."""
    x = _rows()[name]
    fn = getattr(er, op)
    for kw in ({"dim": -1}, {"dim": -1, "rounding": "toward_zero"},
               {"dim": -1, "rounding": "toward_positive", "blocks": 3},
               {"dim": -1, "order": "pairwise", "exp_accuracy": 2, "log_accuracy": 3}):
        if op == "softmax":
            kw.pop("log_accuracy", None)
        _compare(monkeypatch, fn, x, (1, 5, 9, 20, 40), 4, **kw)


@pytest.mark.parametrize("op", OPS)
def test_chunked_other_dims(monkeypatch, op):
    """A dim that is not the last, and a tuple of dims, move the axes last per chunk."""
    x = _rows()["bfloat16 3-d"]
    fn = getattr(er, op)
    _compare(monkeypatch, fn, x, (3, 7, 50), 2, dim=1)
    _compare(monkeypatch, fn, x, (3, 7, 50), 8, dim=(0, 2), rounding="toward_negative")


def test_long_rows_under_the_default_sum_block(monkeypatch):
    """Rows longer than a chunk but within one sum block: one block along the row, the
    default sums (numpy's own over the row, as before chunking)."""
    x = _rows()["float32 random"]
    for op in OPS:
        _compare(monkeypatch, getattr(er, op), x, (2, 6), sm._SUM_BLOCK, dim=-1)


@pytest.mark.parametrize("op", ("softmax", "log_softmax", "logsumexp"))
def test_chunked_torch_equivalents(monkeypatch, op):
    """PyTorch's modelled kernels (bfloat16 and float16 steps stored in the format, the
    scalar tail across a dim that is not the last, NaN rows at +inf) chunk the same."""
    fn = getattr(ert, op)
    for x in (_rows()["bfloat16 3-d"], _rows()["float16"], _rows()["float64 specials"]):
        for dim in (-1, 0):
            monkeypatch.setattr(sm, "_SUM_BLOCK", 4)
            monkeypatch.setattr(sm, "_CHUNK", UNCHUNKED)
            want = _call(fn, x, dim=dim)
            for chunk in (1, 5, 16):
                monkeypatch.setattr(sm, "_CHUNK", chunk)
                _assert_same(want, _call(fn, x, dim=dim), (op, x.dtype, dim, chunk))


def test_long_row_passes_in_order():
    """LongRow's values need its first pass; both passes give evaluate_rows' bits."""
    x = np.array([3.0, -1.0, 2.0, 2.0, -INF, 0.5, 7.0])
    row = kernel.LongRow(x, "log_softmax", 53, block=3)
    with pytest.raises(RuntimeError, match="first pass"):
        next(row.values())
    want_ex, want_exps = kernel.evaluate_rows(x[None], "log_softmax", 53, want_exps=True)
    lo = np.concatenate([b[2] for b in row.exps()])
    hi = np.concatenate([b[3] for b in row.exps()])
    assert np.array_equal(lo, want_exps.lo[0]) and np.array_equal(hi, want_exps.hi[0])
    f64 = er.dtype("float64")
    for mode in er.Rounding:
        got = np.concatenate([b[2].round(f64, mode, "ieee")[0] for b in row.values()])
        want = want_ex.round(f64, mode, "ieee")[0]
        assert np.array_equal(got, want, equal_nan=True), mode


def test_memory_of_one_long_row(monkeypatch):
    """A row of 2**15 float32 entries in chunks of 512: the call's peak allocation beside its
    output (the rounded values and the stored ends of the tolerance) stays within 4x the
    input's bytes plus a chunk's working set (the unchunked kernel needed about 180x)."""
    monkeypatch.setattr(sm, "_CHUNK", 512)
    monkeypatch.setattr(sm, "_SUM_BLOCK", 512)
    x = np.random.default_rng(3).standard_normal((1, 1 << 15)).astype(np.float32)
    er.softmax(x[:, :600], dim=-1)  # warm: imports and contexts outside the measurement
    er.softmax(x, dim=-1)  # and the order's depths and gammas for this row (cached, read-only)
    tracemalloc.start()
    try:
        r = er.softmax(x, dim=-1)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # held: the rounded values (1x) and the ends (float32 lo and hi, the NaN flags: 2.25x)
    assert held <= 3.25 * x.nbytes + (1 << 16), (held, x.nbytes)
    assert peak - held <= 4 * x.nbytes + (1 << 20), (peak, held, x.nbytes)
    with pytest.warns(er.WeakCheckWarning, match="order='pairwise' gives"):  # the loose default
        assert r.covers(r.rounded).all()


@pytest.mark.parametrize("op", OPS)
def test_long_rows_undecided_take_ziv(monkeypatch, op):
    """With no guard bits the first pass decides little: a long row's undecided values are
    redone with the row's sums at twice the precision, and round as the usual call's."""
    rng = np.random.default_rng(31)
    rows = rng.normal(size=(4, 12)) * 4
    rows[3, 2:] = -INF
    rows[2, 1:5] = rows[2, 0]
    want = {fmt: getattr(er, op)(er.asarray(rows, fmt), dim=1).rounded.numpy()
            for fmt in ("float32", "float64")}
    monkeypatch.setattr(kernel, "_W0", 0)
    monkeypatch.setattr(sm, "_CHUNK", 5)
    monkeypatch.setattr(sm, "_SUM_BLOCK", 4)
    for fmt in ("float32", "float64"):
        got = getattr(er, op)(er.asarray(rows, fmt), dim=1).rounded.numpy()
        assert np.array_equal(np.asarray(want[fmt], np.float64), np.asarray(got, np.float64),
                              equal_nan=True), fmt


@pytest.mark.parametrize("op", ("softmax", "log_softmax"))
def test_backward_chunked_equals_unchunked(monkeypatch, op):
    """The gradients' exact values a chunk of rows at a time: the same rounded values and
    tolerance (er's and PyTorch's modelled backward) as one unchunked call."""
    rng = np.random.default_rng(11)
    ours, theirs = getattr(er, op).backward, getattr(ert, op).backward
    for name, x in _rows().items():
        if name == "float64 specials":  # without the row of spread 1e300: its exact
            x = np.delete(x, 6, axis=0)  # gradient is undecided (a kernel bug, not chunks')
        g = rng.standard_normal(x.shape).astype(x.dtype)
        calls = {"er dim -1": lambda x=x, g=g: ours(x, g, dim=-1),
                 "er dim 0": lambda x=x, g=g: ours(x, g, dim=0, rounding="toward_zero"),
                 "torch": lambda x=x, g=g: theirs(x, g, -1)}
        for what, call in calls.items():
            monkeypatch.setattr(sm, "_CHUNK", UNCHUNKED)
            want = _call(lambda _x, call=call: call().grad_x, x)
            for chunk in (1, 12, 30):
                monkeypatch.setattr(sm, "_CHUNK", chunk)
                got = _call(lambda _x, call=call: call().grad_x, x)
                _assert_same(want, got, (op, name, what, chunk))
