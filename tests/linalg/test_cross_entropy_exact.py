"""cross_entropy's rounded values against an independent oracle (cross_entropy_oracle.py:
Fractions and mpmath, no exactref code) in every mode and float64/float32/bfloat16/float16:
class indices and probabilities, weights, ignore_index, label smoothing, every reduction,
(C,), (N, C) and (N, C, d) inputs; the special rows and exact cases; the errors."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import exactref as er
from exactref._exact._cross_entropy import UndecidedLoss
from exactref._formats import FORMATS

sys.path.insert(0, str(Path(__file__).parent))
from attention_oracle import MODES  # noqa: E402
from cross_entropy_oracle import losses, rounded  # noqa: E402

FMTS = ("float64", "float32", "bfloat16", "float16")
NINF = -np.inf


def _same(a, b):
    a, b = np.asarray(a, np.float64).reshape(-1), np.asarray(b, np.float64).reshape(-1)
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def check(dt, x, target, weight=None, modes=MODES, **kw):
    """er.cross_entropy against the oracle in every mode (exact zeros compare without sign)."""
    __tracebackhide__ = True
    f = FORMATS[dt]
    xa = er.asarray(x, dt)
    xn = np.asarray(xa.numpy(), dtype=np.float64)
    probs = np.shape(target) == np.shape(x)
    ta = er.asarray(target, dt) if probs else er.asarray(np.asarray(target), "int64")
    tn = np.asarray(ta.numpy(), dtype=np.float64) if probs else np.asarray(target)
    wa = None if weight is None else er.asarray(weight, dt)
    wn = None if wa is None else np.asarray(wa.numpy(), dtype=np.float64)
    ex = losses(xn, tn, wn, kw.get("ignore_index", -100), kw.get("reduction", "mean"),
                kw.get("label_smoothing", 0.0))
    for mode in modes:
        got = er.cross_entropy(xa, ta, wa, rounding=mode, **kw).rounded
        want = rounded(ex, f, mode)
        g = np.asarray(got.numpy(), dtype=np.float64)
        assert _same(g, want), (dt, mode, kw, g.tolist(), want.tolist())


@pytest.mark.parametrize("dt", FMTS)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_indices_random(dt, reduction):
    rng = np.random.default_rng([3, FMTS.index(dt), len(reduction)])
    x = rng.standard_normal((6, 5)) * 3
    y = rng.integers(0, 5, 6)
    y[2] = -100
    check(dt, x, y, reduction=reduction)
    check(dt, x, y, rng.uniform(0.25, 2, 5), reduction=reduction, modes=MODES[:3])


@pytest.mark.parametrize("dt", FMTS)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_label_smoothing(dt, reduction):
    rng = np.random.default_rng([5, FMTS.index(dt), len(reduction)])
    x = rng.standard_normal((5, 4)) * 2
    y = rng.integers(0, 4, 5)
    y[0] = 7
    check(dt, x, y, reduction=reduction, label_smoothing=0.1, ignore_index=7)
    check(dt, x, y, rng.uniform(0.5, 1.5, 4), reduction=reduction, label_smoothing=0.25,
          ignore_index=7, modes=MODES[::2])


@pytest.mark.parametrize("dt", FMTS)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_probabilities(dt, reduction):
    rng = np.random.default_rng([7, FMTS.index(dt), len(reduction)])
    x = rng.standard_normal((4, 6)) * 2
    t = rng.dirichlet(np.ones(6), 4)
    check(dt, x, t, reduction=reduction)
    check(dt, x, t, rng.uniform(0.5, 1.5, 6), reduction=reduction, label_smoothing=0.2,
          modes=MODES[1::2])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_shapes(reduction):
    """(C,) with a scalar target, (N, C, d1, d2) with (N, d1, d2) targets or probabilities."""
    rng = np.random.default_rng(11)
    check("float32", rng.standard_normal(7), np.array(3), reduction=reduction)
    x = rng.standard_normal((2, 3, 2, 2))
    check("float32", x, rng.integers(0, 3, (2, 2, 2)), reduction=reduction,
          label_smoothing=0.05)
    t = np.moveaxis(rng.dirichlet(np.ones(3), (2, 2, 2)), -1, 1)
    check("bfloat16", x, t, reduction=reduction)
    r = er.cross_entropy(er.asarray(x, "float32"), er.asarray(
        rng.integers(0, 3, (2, 2, 2)), "int64"), reduction=reduction)
    assert r.rounded.shape == ((2, 2, 2) if reduction == "none" else ())


@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_adversarial(dt):
    """Huge logits, all-equal rows (log C), one finite entry, -inf masks."""
    x = np.array([[1e4, -1e4, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0], [5.0, NINF, NINF, NINF],
                  [0.5, NINF, -0.5, 1.5], [-60.0, 60.0, 59.0, 58.0]])
    y = np.array([1, 0, 0, 2, 0])
    for red in ("none", "mean", "sum"):
        check(dt, x, y, reduction=red, modes=MODES[:3])
    check(dt, x[1:], np.array([2, 0, 3, 1]), reduction="none", label_smoothing=0.1)


def _ce(x, y, **kw):
    return er.cross_entropy(er.asarray(x, "float32"), er.asarray(np.asarray(y), "int64"), **kw)


def test_specials():
    x = np.array([[5.0, NINF], [1.0, 2.0], [np.nan, 0.0], [np.inf, 0.0], [NINF, NINF]])
    v = _ce(x, [1, 1, -100, 0, -100], reduction="none").rounded.tolist()
    assert v[0] == math.inf and v[2] == 0.0 and v[3] == 0.0 and v[4] == 0.0
    # a row with one +inf: log_softmax 0 there, -inf elsewhere
    assert _ce(x[3:4], [1], reduction="none").rounded.tolist() == [math.inf]
    # NaN rows that count, two +inf, no finite entry: NaN
    for row in ([np.nan, 0.0], [np.inf, np.inf], [NINF, NINF]):
        assert math.isnan(_ce(np.array([row]), [0]).rounded.tolist())
    # a weight of 0 on a -inf log-softmax contributes 0 (torch: 0 * inf = NaN)
    r = er.cross_entropy(er.asarray(x[:2], "float32"), er.asarray([1, 1], "int64"),
                         er.asarray([1.0, 0.0], "float32"), reduction="none")
    assert r.rounded.tolist() == [0.0, 0.0]
    # every target ignored, or the weights sum to 0: the mean is 0/0 = NaN; sum 0
    assert math.isnan(_ce(x[:2], [-100, -100]).rounded.tolist())
    assert _ce(x[:2], [-100, -100], reduction="sum").rounded.tolist() == 0.0
    assert math.isnan(_ce(np.zeros((0, 3)), np.zeros(0, np.int64)).rounded.tolist())
    # a nonzero sum over weights summing to 0: -inf, as IEEE's division (torch too)
    r = er.cross_entropy(er.asarray(x[:2], "float32"), er.asarray([0, 1], "int64"),
                         er.asarray([1.0, -1.0], "float32"))
    assert r.rounded.tolist() == -math.inf
    # inf - inf across rows: NaN
    r = er.cross_entropy(er.asarray([[5.0, NINF], [NINF, 5.0]], "float32"),
                         er.asarray([1, 0], "int64"), er.asarray([-1.0, 1.0], "float32"),
                         reduction="sum")
    assert math.isnan(r.rounded.tolist())


def test_exact_cases():
    """Rational losses are exact: one finite entry, logarithms that cancel between rows with
    the same entries, zero weights."""
    # rows with one finite entry: 0, whatever the entry
    assert _ce(np.array([[7.25, NINF, NINF]]), [0], reduction="sum",
               rounding="toward_positive").rounded.tolist() == 0.0
    # label smoothing on a one-entry row with the -inf entries weighted 0
    r = er.cross_entropy(er.asarray([[3.0, NINF, NINF]], "float32"), er.asarray([0], "int64"),
                         er.asarray([1.0, 0.0, 0.0], "float32"), label_smoothing=0.5,
                         reduction="sum", rounding="toward_positive")
    assert r.rounded.tolist() == 0.0
    # the same row with weights +1 and -1: log S cancels, leaving the rational 1 (x_0 - x_1)
    x = np.array([[0.0, -1.0], [0.0, -1.0]])
    w = er.asarray([1.0, -1.0], "float32")
    for mode in MODES:
        r = er.cross_entropy(er.asarray(x, "float32"), er.asarray([0, 1], "int64"), w,
                             reduction="sum", rounding=mode)
        assert r.rounded.tolist() == -1.0
    # probabilities on a one-entry row: a rational (-t . (x - m))
    r = er.cross_entropy(er.asarray([[2.0, NINF]], "float32"),
                         er.asarray([[1.0, 0.0]], "float32"), reduction="sum")
    assert r.rounded.tolist() == 0.0


def test_undecidable_cancellation_raises():
    """2 log(1 + e**-1) - log((1 + e**-1)**2) = 0 across rows of different entries: the value
    is exactly -1, which no enclosure decides; a clear error, not a hang or a wrong value."""
    x = np.array([[0.0, -1.0, NINF, NINF], [0.0, -1.0, NINF, NINF], [0.0, -1.0, -1.0, -2.0]])
    w = er.asarray([1.0, -1.0, 0.0, 0.0], "float64")
    with pytest.raises(UndecidedLoss, match="coefficients of both signs"):
        er.cross_entropy(er.asarray(x, "float64"), er.asarray([0, 0, 1], "int64"), w,
                         reduction="sum")


@pytest.mark.parametrize(("kw", "match"), [
    ({"reduction": "avg"}, "reduction='avg'"),
    ({"order": "blocked"}, "order='blocked'"),
    ({"label_smoothing": 1.5}, "between 0.0 and 1.0"),
    ({"ignore_index": 1.5}, "ignore_index=1.5; expected an integer"),
    ({"target": [0, 3]}, "out of bounds"),
    ({"target": [[0, 1]]}, "need shape"),
    ({"weight": [1.0, 2.0]}, "shape \\(3,\\)"),
    ({"input": [[1, 2, 3], [4, 5, 6]]}, "real floating"),
])
def test_errors(kw, match):
    args = {"input": er.asarray(np.zeros((2, 3)), "float32"), "target": [0, 1]}
    args.update(kw)
    if not isinstance(args["input"], er.Array):
        args["input"] = er.asarray(np.asarray(args["input"]), "int64")
    args["target"] = er.asarray(np.asarray(args["target"]), "int64")
    if "weight" in args:
        args["weight"] = er.asarray(args["weight"], "float32")
    with pytest.raises(ValueError, match=match):
        er.cross_entropy(**args)


def test_probabilities_errors():
    x = er.asarray(np.zeros((2, 3)), "float32")
    with pytest.raises(ValueError, match="not supported for class probabilities"):
        er.cross_entropy(x, er.asarray(np.ones((2, 3)) / 3, "float32"), ignore_index=0)
    with pytest.raises(ValueError, match="must be floating"):
        er.cross_entropy(x, er.asarray(np.ones((2, 3), np.int64), "int64"))


@pytest.mark.parametrize("dt", ["float8_e4m3fn", "float8_e5m2"])
def test_eight_bit_formats(dt):
    rng = np.random.default_rng([13, len(dt)])
    x = rng.standard_normal((6, 4)) * 2
    y = rng.integers(0, 4, 6)
    for red in ("none", "mean"):
        check(dt, x, y, reduction=red, label_smoothing=0.1)
    r = er.cross_entropy(er.asarray(x, dt), er.asarray(y, "int64"))
    assert r.covers(r.rounded).all() and r.rounded.dtype.name == dt


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_random_sweep(seed):
    """Larger random shapes and forms against the oracle, every format and mode."""
    rng = np.random.default_rng([101, seed])
    dt = FMTS[seed % 4]
    N, C = int(rng.integers(8, 40)), int(rng.integers(2, 60))
    x = rng.standard_normal((N, C)) * float(rng.choice([0.5, 3.0, 30.0]))
    x[rng.random((N, C)) < 0.05] = NINF
    eps = float(rng.choice([0.0, 0.05, 0.3]))
    w = rng.uniform(0.1, 2.0, C) if seed % 2 else None
    for red in ("none", "mean", "sum"):
        if seed % 3 == 2:
            check(dt, x, rng.dirichlet(np.ones(C), N), w, reduction=red, label_smoothing=eps)
        else:
            y = rng.integers(0, C, N)
            y[rng.random(N) < 0.1] = -100
            check(dt, x, y, w, reduction=red, label_smoothing=eps)


def test_dtype_is_the_output_format():
    """``dtype=`` as on the elementwise ops: the exact loss of the logits' own numbers rounded
    once into it."""
    rng = np.random.default_rng(9)
    x = er.asarray(rng.standard_normal((5, 7)), "float32")
    t = er.asarray(rng.integers(0, 7, 5), "int64")
    for reduction in ("none", "mean", "sum"):
        wide = er.cross_entropy(x, t, reduction=reduction, dtype="float64")
        same = er.cross_entropy(er.asarray(x.numpy().astype(np.float64), "float64"), t,
                                reduction=reduction)
        assert wide.rounded.dtype.name == "float64"
        assert np.array_equal(wide.rounded.numpy(), same.rounded.numpy())
        narrow = er.cross_entropy(x, t, reduction=reduction, dtype="float16")
        assert narrow.rounded.dtype.name == "float16"
        assert narrow.covers(narrow.rounded.numpy()).all()
