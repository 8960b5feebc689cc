"""``assert_stochastic``: a correct sampler passes, a biased one fails, at the stated rate.

Measured (seeds fixed below, alpha = 1e-6, 10**6 draws): a sampler whose probability of
rounding up is off by 2**-8 (absolute) is rejected in 200 of 200 repetitions on four elements
with probabilities 0.125 to 0.75, and in 499 of 500 on one element at p = 0.5 (a shift of 7.8
standard deviations against a threshold near 5.0). A relative bias, p (1 + 2**-8), is rejected
in 197 of 200 on the four elements (by the pooled test: 7.4 standard deviations) but in only
about 12% on one element at p = 0.5 (3.9 standard deviations). Correct samplers fail in 45 of
2000 repetitions at alpha = 0.05 (0.0225) and about 10% at alpha = 0.2: below alpha, as the
module's docstring proves, and conservative by about a factor of two.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import exactref as er
from exactref.testing import assert_stochastic
from exactref.testing._stochastic import binomial_log_tail_bound, stochastic_decision


def _result():
    """Four rounding elements (probabilities 1/8, 1/4, 1/2, 3/4), one exact, one zero."""
    x = np.array([1 + 2.0**-10, 1 + 2.0**-9, 1 + 2.0**-8, -(1 + 3 * 2.0**-9), 2.0, -0.0])
    return er.cast(x, "bfloat16", rounding="stochastic")


def _draws(res, n, rng, bias=0.0):
    p = np.asarray(res.probability)
    u = rng.random((n, *p.shape))
    up = u < np.clip(p + np.where((p > 0) & (p < 1), bias, 0.0), 0, 1)
    return np.where(up, res.up.numpy().astype(np.float64), res.down.numpy().astype(np.float64))


def test_probabilities_of_the_fixture():
    res = _result()
    assert res.probability.tolist() == [0.125, 0.25, 0.5, 0.75, 0.0, 0.0]


def test_accepts_a_correct_sampler():
    res = _result()
    rng = np.random.default_rng(2026)
    assert_stochastic(_draws(res, 10**6, rng), res)
    assert_stochastic(er.asarray(_draws(res, 1000, rng), "bfloat16"), res)  # an er.Array


def test_rejects_a_bias_of_one_part_in_256_with_a_million_draws():
    res = _result()
    rng = np.random.default_rng(7)
    with pytest.raises(AssertionError, match="biased"):
        assert_stochastic(_draws(res, 10**6, rng, bias=2.0**-8), res)
    with pytest.raises(AssertionError, match="biased"):
        assert_stochastic(_draws(res, 10**6, rng, bias=-(2.0**-8)), res)


def test_power_and_false_alarm_rate_on_counts():
    """The decision on binomial counts (what a Bernoulli sampler's counts are): the power at a
    bias of 2**-8 with 10**6 draws, and the false-alarm rate at alpha = 0.05."""
    rng = np.random.default_rng(11)
    p = np.array([0.125, 0.25, 0.5, 0.75])
    n = 10**6
    rejected = sum(_rejects(rng.binomial(n, p + 2.0**-8), n, p, 1e-6) for _ in range(200))
    assert rejected == 200  # measured: 200 of 200
    relative = sum(_rejects(rng.binomial(n, p * (1 + 2.0**-8)), n, p, 1e-6) for _ in range(200))
    assert relative >= 180  # measured: 197 of 200, by the pooled test
    half = np.array([0.5])
    single = sum(_rejects(rng.binomial(n, half * (1 + 2.0**-8)), n, half, 1e-6)
                 for _ in range(200))
    assert single <= 60  # one element alone: measured 0.12 of 500 (3.9 sd against about 5)
    alarms = sum(_rejects(rng.binomial(n, p), n, p, 0.05) for _ in range(2000))
    assert alarms <= 100 + 3 * math.sqrt(100)  # at most alpha: measured 45 of 2000 (0.0225)
    loose = sum(_rejects(rng.binomial(n, p), n, p, 0.2) for _ in range(1000))
    assert loose >= 40  # not vacuous: measured 0.10 at alpha = 0.2


def _rejects(counts, n, p, alpha):
    bad, _, pooled = stochastic_decision(counts, n, p, alpha)
    return bool(bad.size) or pooled < alpha / 2


def test_false_alarm_rate_of_the_full_check():
    """A smaller empirical check of assert_stochastic itself: correct samplers, 200 times, at
    alpha = 0.1: at most 20 failures are expected, and the bound makes them rarer."""
    res = _result()
    rng = np.random.default_rng(5)
    fails = 0
    for _ in range(200):
        try:
            assert_stochastic(_draws(res, 2000, rng), res, alpha=0.1)
        except AssertionError:
            fails += 1
    assert fails <= 20 + 3 * math.sqrt(20)


def test_tail_bound_is_an_upper_bound():
    """Against exact tails in Fractions-free integer arithmetic (math.comb) at n = 400."""
    n, p = 400, 0.3
    pmf = [math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(n + 1)]
    ks = np.arange(n + 1)
    bounds = binomial_log_tail_bound(ks, n, np.full(ks.size, p))
    for k in range(n + 1):
        tail = sum(pmf[k:]) if k > n * p else sum(pmf[: k + 1])
        exact = min(1.0, 2 * tail)
        assert math.log(exact) <= bounds[k] + 1e-12, k
        if abs(k - n * p) > 40:  # far out, the bound is within a factor of 2 of the tail
            assert bounds[k] <= math.log(exact) + math.log(2), k


def test_pooled_test_sees_a_bias_shared_by_many_elements():
    """200 elements biased by 2**-8, 10**4 draws: no element alone shows it, the sum does."""
    x = np.full(200, 1 + 2.0**-8)  # probability 1/2 into bfloat16
    res = er.cast(x, "bfloat16", rounding="stochastic")
    rng = np.random.default_rng(3)
    draws = _draws(res, 10**4, rng, bias=2.0**-8)
    with pytest.raises(AssertionError, match="over the 200 rounding elements"):
        assert_stochastic(draws, res)


def test_a_value_that_is_no_neighbour_fails_at_once():
    res = _result()
    draws = _draws(res, 100, np.random.default_rng(1))
    draws[17, 2] = 1.001953125  # between the neighbours 1.0 and 1.0078125
    with pytest.raises(AssertionError, match=r"draw 17 at element \(2,\)"):
        assert_stochastic(draws, res)
    draws = _draws(res, 100, np.random.default_rng(1))
    draws[3, 4] = 2.015625  # the exact value 2.0 never rounds
    with pytest.raises(AssertionError, match=r"draw 3 at element \(4,\)"):
        assert_stochastic(draws, res)
    draws = _draws(res, 100, np.random.default_rng(1))
    draws[5, 5] = 0.0  # the exact -0 keeps its sign
    with pytest.raises(AssertionError, match=r"draw 5 at element \(5,\)"):
        assert_stochastic(draws, res)


def test_arguments():
    res = _result()
    with pytest.raises(ValueError, match="n_draws"):
        assert_stochastic(np.zeros((10, 5)), res)
    with pytest.raises(TypeError, match="rounding='stochastic'"):
        assert_stochastic(np.zeros((10, 1)), er.add(np.array([1.0]), np.array([1.0])))
    with pytest.raises(ValueError, match="alpha"):
        assert_stochastic(_draws(res, 10, np.random.default_rng(0)), res, alpha=0)


def test_zero_draws_are_refused_and_an_empty_result_passes():
    """Issue 19: 0 samples gave numpy's "cannot reshape array of size 0"; they are refused with
    what to pass (a test with no draw cannot fail). An empty result with draws has nothing to
    test and passes."""
    res = _result()
    with pytest.raises(ValueError, match=r"samples hold 0 draws \(shape \(0, 6\)\).*at least "
                                         r"one"):
        assert_stochastic(np.zeros((0,) + tuple(res.rounded.shape)), res)
    empty = er.cast(er.asarray(np.zeros(0), "float32"), "bfloat16", rounding="stochastic")
    assert_stochastic(np.zeros((10, 0)), empty)
    with pytest.raises(ValueError, match="0 draws"):
        assert_stochastic(np.zeros((0, 0)), empty)
