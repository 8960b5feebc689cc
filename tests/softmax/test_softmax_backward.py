"""softmax.backward and log_softmax.backward against an independent oracle (mpmath's interval
arithmetic, ``backward_oracle.py``), bit for bit, in every rounding mode and float64, float32,
bfloat16, float16 (and the float8 formats on random rows): random rows and adversarial ones
(huge logits, equal rows, ``-inf`` masks, one-element rows, all-equal and zero gradients,
balanced groups, ``+inf``/NaN entries and gradients); the dims, the arguments' errors and the
registry record."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from backward_oracle import expected

import exactref as er
from exactref._exact import _softmax_backward as kernel

OPS = ("softmax", "log_softmax")
FMTS = ("float64", "float32", "bfloat16", "float16")
MODES = list(er.Rounding)
INF, NAN = np.inf, np.nan


def _same(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def _check(op, X, G, fmt, mode):
    x, g = er.asarray(X, fmt), er.asarray(G, fmt)
    xv = np.asarray(x.numpy()).astype(np.float64)
    gv = np.asarray(g.numpy()).astype(np.float64)
    want = np.asarray(expected(op, xv.tolist(), gv.tolist(), fmt, mode))
    got = getattr(er, op).backward(x, g, dim=-1, rounding=mode).rounded.grad_x
    got = got.numpy().astype(np.float64)
    ok = _same(want, got)
    bad = np.nonzero(~ok)[0]
    assert ok.all(), (op, fmt, mode, xv[bad], gv[bad], want[~ok], got[~ok])


def _adversarial(fmt):
    big = float(er.dtype(fmt).max_finite)
    tiny = float(er.dtype(fmt).smallest_subnormal)
    rows = [  # (x, g)
        ([1.0, 2.0, 3.0, 4.0], [1.0, -2.0, 0.5, 3.0]),
        ([3.0, 3.0, 3.0, 3.0], [1.0, 2.0, 3.0, 7.0]),       # y = 1/4: rational gradients
        ([3.0, 3.0, 3.0, -INF], [1.0, 2.0, 4.0, 9.0]),      # 1/3, and a masked entry
        ([-INF, 5.0, -INF, -INF], [2.0, 3.0, -1.0, 0.5]),   # one finite entry
        ([1.0, 2.0, 3.0, 4.0], [0.75, 0.75, 0.75, 0.75]),   # g all equal: softmax's are 0
        ([1.0, 2.0, 3.0, 4.0], [0.0, 0.0, -0.0, 0.0]),      # g zero
        ([1.0, 1.0, 2.0, 2.0], [1.0, 3.0, 4.0, 0.0]),       # balanced groups: mean 2
        ([1.0, 1.0, 2.0, 5.0], [1.0, 3.0, 2.0, 2.0]),       # balanced, one g_i = r
        ([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0, -2.0]),     # sum g = 0: log_softmax's = g
        ([big, -big, big, big], [1.0, 2.0, 3.0, -1.0]),     # huge logits: e**-2big terms
        ([0.0, -big, -big, -big], [1.0, 2.0, -3.0, 0.5]),   # y = 1 - tiny
        ([100.0, 99.0, -100.0, 50.0], [1.0, 1.0, 1.0, 1.0]),
        ([0.0, -0.0, tiny, -tiny], [1.0, 2.0, 3.0, 5.0]),
        ([2.0, 1.0, 0.0, -1.0], [1e3, -1e3, 2.0, 0.25]),
        ([INF, 1.0, 2.0, -INF], [1.0, 2.0, 3.0, 4.0]),      # the one-hot limit
        ([INF, INF, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]),       # NaN
        ([NAN, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]),
        ([-INF, -INF, -INF, -INF], [1.0, 2.0, 3.0, 4.0]),
        ([1.0, 2.0, 3.0, -INF], [INF, 2.0, 3.0, 4.0]),      # g inf: inf, NaN
        ([1.0, 2.0, 3.0, -INF], [1.0, 2.0, 3.0, INF]),      # g inf at y = 0: 0 * inf
        ([1.0, 2.0, 3.0, 4.0], [INF, -INF, 3.0, 4.0]),
        ([1.0, 2.0, 3.0, 4.0], [NAN, 2.0, 3.0, 4.0]),
        ([INF, 1.0, 2.0, 3.0], [1.0, INF, 3.0, 4.0]),
    ]
    return [r[0] for r in rows], [r[1] for r in rows]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name.lower())
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("op", OPS)
def test_adversarial_rows(op, fmt, mode):
    X, G = _adversarial(fmt)
    _check(op, X, G, fmt, mode)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name.lower())
@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("op", OPS)
def test_random_rows(op, fmt, mode):
    rng = np.random.default_rng(zlib.crc32(f"{op}{fmt}{mode.name}".encode()))
    X = rng.standard_normal((6, 7)) * 2.0 ** rng.integers(-2, 4, (6, 1))
    X[1, 2] = -INF
    X[2, :3] = X[2, 3]  # repeated logits
    G = rng.standard_normal((6, 7))
    G[3] = G[3, 0]       # g all equal
    G[4, ::2] = 0.0
    _check(op, X, G, fmt, mode)


def test_one_element_rows():
    x = er.asarray([[3.0], [-INF]], "float32")
    g = er.asarray([[2.5], [1.0]], "float32")
    sm = er.softmax.backward(x, g, dim=1).rounded.grad_x.tolist()
    ls = er.log_softmax.backward(x, g, dim=1).rounded.grad_x.tolist()
    assert sm[0] == [0.0] and np.isnan(sm[1][0])
    assert ls[0] == [0.0] and np.isnan(ls[1][0])  # 2.5 - 1 * 2.5


def test_other_dims_and_spellings():
    rng = np.random.default_rng(5)
    x = er.asarray(rng.standard_normal((3, 4, 5)), "float32")
    g = er.asarray(rng.standard_normal((3, 4, 5)), "float32")
    for op in OPS:
        fn = getattr(er, op).backward
        a = fn(x, g, dim=1).rounded.grad_x.numpy()
        b = fn(x, g, axis=1).rounded.grad_x.numpy()
        xt = er.asarray(np.moveaxis(x.numpy(), 1, -1), "float32")
        gt = er.asarray(np.moveaxis(g.numpy(), 1, -1), "float32")
        c = np.moveaxis(fn(xt, gt, dim=-1).rounded.grad_x.numpy(), -1, 1)
        assert _same(a, b).all() and _same(a, c).all()
        d = fn(x, g, dim=(1, 2)).rounded.grad_x.numpy()  # two dims normalized together
        flat = fn(er.asarray(x.numpy().reshape(3, 20), "float32"),
                  er.asarray(g.numpy().reshape(3, 20), "float32"), dim=1)
        assert _same(d.reshape(3, 20), flat.rounded.grad_x.numpy()).all()


def test_dtype_converts_x_first():
    x = er.asarray([[1.0, 2.0, 3.0]], "float64")
    g = er.asarray([[1.0, 0.0, 0.0]], "bfloat16")
    r = er.softmax.backward(x, g, dim=1, dtype="bfloat16")
    assert r.rounded.grad_x.dtype is er.dtype("bfloat16")
    want = er.softmax.backward(er.asarray(x, "bfloat16"), g, dim=1).rounded.grad_x
    assert r.rounded.grad_x.tolist() == want.tolist()


def test_errors():
    x = er.asarray([[1.0, 2.0]], "float32")
    with pytest.raises(ValueError, match="output's shape"):
        er.softmax.backward(x, er.asarray([1.0, 2.0], "float32"), dim=1)
    with pytest.raises(ValueError, match="dim="):
        er.softmax.backward(x, x)
    with pytest.raises(TypeError, match="real floating"):
        er.log_softmax.backward(x, np.array([[1, 2]], dtype=np.int32), dim=1)
    with pytest.raises(ValueError, match="forward="):
        er.softmax.backward(x, x, dim=1, forward="stored")
    with pytest.raises(ValueError, match="order="):
        er.softmax.backward(x, x, dim=1, order="sorted")
    with pytest.raises(ValueError, match="unknown op"):
        kernel.evaluate_backward(np.zeros((1, 1)), np.zeros((1, 1)), "logsumexp")


def test_registry_records_the_backward():
    assert er.ops.get_op("softmax").backward is er.softmax.backward
    assert er.ops.get_op("log_softmax").backward is er.log_softmax.backward


def test_ziv_cap_names_the_row(monkeypatch):
    """A value that never decides (an exact case the argument missed) raises, naming the row."""
    monkeypatch.setattr(kernel, "_softmax_exact", lambda x, g, fin: ([None] * x.size, True))
    with pytest.raises(AssertionError, match="could not decide softmax.backward"):
        kernel.evaluate_backward(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0]]), "softmax")


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name.lower())
@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("op", OPS)
def test_float8_rows(op, fmt, mode):
    rng = np.random.default_rng(zlib.crc32(f"{op}{fmt}{mode.name}".encode()))
    X = rng.standard_normal((5, 6)) * 3
    X[0, 1] = -INF
    X[1] = 1.5
    G = rng.standard_normal((5, 6)) * 2
    G[2] = 0.5
    _check(op, X, G, fmt, mode)
