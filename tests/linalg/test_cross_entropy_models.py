"""cross_entropy's tolerance model proved by simulation (cross_entropy_simulate.py, gmpy2, no
exactref code): implementations inside the declared model are covered, in float32, float64
and bfloat16/float16 computed in float32, sums sequential, pairwise, shuffled, the
exponential and logarithm within the declared ulps; PyTorch's bfloat16 kernel (log_softmax
stored in bfloat16, the nll summed in bfloat16 by its cascade) by its private model; and
implementations outside the model are caught."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import exactref as er
from exactref.linalg import _cross_entropy as _ce

sys.path.insert(0, str(Path(__file__).parent))
import cross_entropy_simulate as sim_mod  # noqa: E402
from cross_entropy_simulate import Impl, cross_entropy  # noqa: E402

REDUCTIONS = ("none", "mean", "sum")


def _data(rng, N, C, dt, scale=3.0):
    x = np.asarray(er.asarray(rng.standard_normal((N, C)) * scale, dt).numpy(), np.float64)
    y = rng.integers(0, C, N)
    y[rng.random(N) < 0.1] = -100
    w = np.asarray(er.asarray(rng.uniform(0.25, 2.0, C), dt).numpy(), np.float64)
    return x, y, w


def _result(x, y, w, dt, red, eps, **kw):
    return er.cross_entropy(er.asarray(x, dt), er.asarray(y, "int64"),
                            None if w is None else er.asarray(w, dt), reduction=red,
                            label_smoothing=eps, **kw)


def _covered(res, sims):
    return res.covers(np.asarray(sims, np.float64).reshape(res.rounded.shape)).all()


CASES = [  # (dtype, compute, sum orders, ulps, accuracy declared)
    ("float32", "float32", ("sequential", "pairwise", "shuffled"), 0, None),
    ("float64", "float64", ("sequential", "shuffled"), 0, None),
    ("bfloat16", "float32", ("sequential", "shuffled"), 0, None),
    ("float16", "float32", ("pairwise",), 0, None),
    ("float32", "float32", ("shuffled",), 2, 2.5),
]


@pytest.mark.parametrize(("dt", "compute", "orders", "ulps", "acc"), CASES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_inside_model_covered(dt, compute, orders, ulps, acc, red, eps):
    rng = np.random.default_rng([17, len(dt), len(red), int(eps * 10), ulps])
    x, y, w = _data(rng, 24, 11, dt)
    for wt in (None, w):
        res = _result(x, y, wt, dt, red, eps, accuracy=acc)
        for order in orders:
            im = Impl(compute=compute, order=order, nll_order=order, ulps=ulps, out=dt)
            sim = cross_entropy(x, y, wt, red, eps, im, rng)
            assert _covered(res, sim), (order, sim, res.rounded.tolist())


@pytest.mark.parametrize("order", ["pairwise", "sequential"])
def test_order_declared(order):
    """order="pairwise" covers a tree, "sequential" a loop in index order (term i meets
    n - i roundings); each is tighter than any order on a long batch."""
    rng = np.random.default_rng(5)
    x, y, w = _data(rng, 512, 8, "float32")
    anyo = _result(x, y, None, "float32", "sum", 0.0, order="any")
    for eps, wt in ((0.0, None), (0.1, w)):
        res = _result(x, y, wt, "float32", "sum", eps, order=order)
        sim = cross_entropy(x, y, wt, "sum", eps, Impl(order=order, nll_order=order))
        assert _covered(res, sim)
    assert _result(x, y, None, "float32", "sum", 0.0, order=order).tolerance_ulps() < \
        anyo.tolerance_ulps()


def _torch_bf16(x, y, w, red, eps, **kw):
    return _ce._run(er.asarray(x, "bfloat16"), er.asarray(y, "int64"),
                    None if w is None else er.asarray(w, "bfloat16"), -100, red, eps,
                    "nearest_even", None, None, None, "sleef_u10", "glibc", "any",
                    stored="bfloat16", lsm_steps=("s", "l"), nll_order="cascade",
                    nll_accumulate="bfloat16")


TORCH = Impl(compute="float32", stored="bfloat16", lsm_steps=True, nll_acc="bfloat16",
             nll_order="cascade", out="bfloat16")


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_torch_bf16_way_covered(red, eps):
    """log_softmax in float32 stored in bfloat16 (with its sum and log), the nll summed in
    bfloat16 by torch's cascade: covered by the model the equivalent declares."""
    rng = np.random.default_rng([23, len(red), int(eps * 10)])
    x, y, w = _data(rng, 300, 10, "bfloat16")
    for wt in (None, w):
        res = _torch_bf16(x, y, wt, red, eps)
        sim = cross_entropy(x, y, wt, red, eps, TORCH, rng)
        assert _covered(res, sim), (sim, res.rounded.tolist())


def test_bf16_accumulation_caught():
    """The nll summed in bfloat16 where float32 is declared (the default model): caught; the
    exact mean is ~2.6, the bfloat16 running sum stalls once its ulp passes the terms."""
    rng = np.random.default_rng(29)
    x, y, _ = _data(rng, 2048, 10, "bfloat16")
    res = _result(x, y, None, "bfloat16", "mean", 0.0)
    bad = cross_entropy(x, y, None, "mean", 0.0,
                        Impl(nll_acc="bfloat16", out="bfloat16"))
    assert not _covered(res, bad)
    # and torch's own order of bfloat16 sums is covered only by its declared model
    sim = cross_entropy(x, y, None, "mean", 0.0, TORCH, rng)
    assert _covered(_torch_bf16(x, y, None, "mean", 0.0), sim)


def test_lsm_stored_in_bf16_caught():
    """log_softmax stored in bfloat16 where float32 is declared: 2**-9 relative, thousands of
    float32 ulps."""
    rng = np.random.default_rng(31)
    x, y, _ = _data(rng, 16, 12, "float32")
    for red in REDUCTIONS:
        res = _result(x, y, None, "float32", red, 0.0)
        bad = cross_entropy(x, y, None, red, 0.0, Impl(stored="bfloat16", out="float32"))
        assert not _covered(res, bad), red


def test_no_max_subtraction_caught():
    """exp(x) without the max subtracted overflows float32 at logits near 90: inf - inf."""
    rng = np.random.default_rng(37)
    x, y, _ = _data(rng, 8, 6, "float32")
    x = x + 90.0
    res = _result(x, y, None, "float32", "none", 0.0)
    bad = cross_entropy(x, y, None, "none", 0.0, Impl(max_sub=False))
    assert not _covered(res, bad)
    good = cross_entropy(x, y, None, "none", 0.0, Impl())
    assert _covered(res, good)


def test_exp_outside_declared_accuracy_caught():
    """An exponential 64 ulps off where correct rounding is declared."""
    rng = np.random.default_rng(41)
    x, y, _ = _data(rng, 32, 6, "float32", scale=1.0)
    res = _result(x, y, None, "float32", "none", 0.0)
    bad = cross_entropy(x, y, None, "none", 0.0, Impl(ulps=64), rng)
    assert not _covered(res, bad)
    assert _covered(_result(x, y, None, "float32", "none", 0.0, accuracy=64.5), bad)


@pytest.mark.parametrize("mode", ["toward_positive", "toward_negative", "toward_zero"])
def test_directed_modes_covered(mode):
    """Every operation of the implementation rounded in a directed mode (u = 2**(1 - p)),
    the output too: covered by the call in that mode."""
    rng = np.random.default_rng([43, len(mode)])
    x, y, w = _data(rng, 20, 7, "float32")
    sim_mod.MODE[0] = mode
    try:
        for red in REDUCTIONS:
            res = _result(x, y, w, "float32", red, 0.1, rounding=mode)
            sim = cross_entropy(x, y, w, red, 0.1, Impl(order="shuffled"), rng)
            assert _covered(res, sim), (red, sim, res.rounded.tolist())
    finally:
        sim_mod.MODE[0] = "nearest_even"
