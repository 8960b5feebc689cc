"""The tolerance model of softmax, log_softmax and logsumexp, proved by simulation: the
max-subtracted algorithm computed step by step (``simulate.py``: every operation rounded in
its format, the exponential and logarithm anywhere within ``k`` ulps), in every summation
order the model allows, with the division or a reciprocal, bfloat16 inputs computed in float32
and stored in every mode, and the online softmax with random blocks, is always covered; an
implementation outside the model (a bfloat16 accumulator where float32 is declared, no max
subtraction, the wrong formula) is caught."""

from __future__ import annotations

import numpy as np
import pytest
import simulate as sim

import exactref as er

OPS = ("softmax", "log_softmax", "logsumexp")
F32 = np.dtype(np.float32)


def _data(rng, M, K, scale, mask=True):
    x = rng.normal(size=(M, K)) * scale
    if mask:
        x[0, K // 2:] = -np.inf  # a causal mask
        x[1, :] = x[1, 0]  # all equal
        x[2, 1:] = x[2, 1:] - 80  # one dominant entry, the rest far below
    return x


def _covered(result, actual):
    cov = result.covers(np.asarray(actual, np.float64))
    return cov


@pytest.mark.parametrize("order", ["sequential", "pairwise", "random", "blocked"])
@pytest.mark.parametrize("op", OPS)
def test_float32_orders_and_exp_errors_are_covered(op, order):
    rng = np.random.default_rng(abs(hash((op, order))) % 2**32)
    x = _data(rng, 8, 48, rng.choice([1.0, 8.0])).astype(np.float32)
    for k in (0.5, 1.0, 2.5):
        for reciprocal in (False, True):
            got = sim.standard(op, x, F32, k, order, rng, reciprocal=reciprocal)
            r = getattr(er, op)(x, dim=1, accuracy=k)
            cov = _covered(r, got)
            assert cov.all(), (k, reciprocal, cov.summary())


def test_pairwise_declared_covers_pairwise():
    rng = np.random.default_rng(7)
    x = _data(rng, 8, 64, 4.0).astype(np.float32)
    for op in OPS:
        got = sim.standard(op, x, F32, 1.0, "pairwise", rng)
        assert er.__getattr__(op)(x, dim=1, accuracy="sleef_u10",
                                  order="pairwise").covers(got).all()


@pytest.mark.parametrize("mode", list(er.Rounding), ids=lambda m: m.name.lower())
def test_bfloat16_inputs_float32_compute_stored_in_every_mode(mode):
    rng = np.random.default_rng(11)
    xb = er.asarray(_data(rng, 6, 40, 6.0), "bfloat16")
    x32 = np.asarray(xb.numpy()).astype(np.float32)
    for op in OPS:
        got = sim.standard(op, x32, F32, 1.0, "random", rng)
        stored = er.asarray(got.astype(np.float64), "bfloat16", rounding=mode)
        r = getattr(er, op)(xb, dim=1, rounding=mode, accuracy="sleef_u10")
        assert r.covers(stored).all(), (op, r.covers(stored).summary())


def test_float64_covered():
    rng = np.random.default_rng(5)
    x = _data(rng, 4, 24, 10.0)
    for op in OPS:
        got = sim.standard(op, x, np.dtype(np.float64), 1.0, "random", rng)
        assert getattr(er, op)(x, dim=1, accuracy=1.0).covers(got).all()


def test_online_softmax_covered_by_its_blocks():
    rng = np.random.default_rng(13)
    for _trial in range(4):
        x = _data(rng, 6, 64, 5.0, mask=False).astype(np.float32)
        x[:, :16] -= 30  # the maximum arrives late: every block rescales
        nb = int(rng.integers(2, 9))
        got = sim.online(x, F32, 1.0, rng, nb)
        r = er.softmax(x, dim=1, accuracy=1.0, blocks=nb)
        assert r.covers(got).all(), (nb, r.covers(got).summary())


# ------------------------------------------------------------------ outside the model: caught
def test_bfloat16_accumulation_is_caught():
    rng = np.random.default_rng(17)
    xb = er.asarray(rng.normal(size=(4, 512)), "bfloat16")
    got = sim.standard("softmax", np.asarray(xb.numpy()), sim.BF16, 1.0, "sequential", rng)
    r = er.softmax(xb, dim=1, accuracy="sleef_u10")  # declared: float32 compute
    cov = r.covers(got.astype(np.float64))
    assert not cov.all()
    assert cov.worst_ulps > 4
    # the same implementation is inside a model that declares it (its sequential order too)
    assert er.softmax(xb, dim=1, compute="bfloat16", accuracy=1.0, order="sequential").covers(
        got.astype(np.float64)).all()


def test_no_max_subtraction_is_caught():
    rng = np.random.default_rng(19)
    x = (rng.normal(size=(4, 16)) * 3 + 90).astype(np.float32)  # e**90 overflows float32
    for op in OPS:
        got = sim.standard(op, x, F32, 0.5, "sequential", rng, subtract_max=False)
        assert not getattr(er, op)(x, dim=1, accuracy=4.0).covers(got).any()


def test_wrong_formulas_are_caught():
    rng = np.random.default_rng(23)
    x = rng.normal(size=(4, 16)).astype(np.float32)
    with np.errstate(over="ignore"):
        e = np.exp2(x - x.max(axis=1, keepdims=True))  # exp2 for exp
    wrong = e / e.sum(axis=1, keepdims=True)
    assert not er.softmax(x, dim=1, accuracy=4.0).covers(wrong).any()
    # log_softmax as x - logsumexp(x), the logsumexp rounded at |x| ~ 1000: the cancellation
    # costs hundreds of ulps
    y = (x + 1000).astype(np.float32)
    lse = sim.standard("logsumexp", y, F32, 0.5, "sequential", rng)
    naive = y - lse[:, None]
    cov = er.log_softmax(y, dim=1, accuracy=1.0).covers(naive)
    assert not cov.all() and cov.worst_ulps > 16


def test_the_bound_is_not_loose_by_orders_of_magnitude():
    """The any-order bound on a sum of K positive terms grows like K u: for K = 48 the
    softmax tolerance stays below ~2 (K + 4) ulps, and the logsumexp's a few ulps."""
    rng = np.random.default_rng(29)
    x = rng.normal(size=(8, 48)).astype(np.float32)
    assert er.softmax(x, dim=1, accuracy=1.0).tolerance_ulps().max() <= 2 * (48 + 4)
    assert er.logsumexp(x, dim=1, accuracy=1.0).tolerance_ulps().max() <= 8
