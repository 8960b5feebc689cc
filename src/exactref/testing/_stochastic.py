"""``assert_stochastic``: many draws of a stochastic-rounding kernel against the exact probabilities.

The test, for ``n`` draws and the exact probability ``p`` of rounding up at each element that
rounds (``0 < p < 1``), with a stated false-alarm rate ``alpha``:

1. **values**: every draw is one of the element's neighbours of positive probability (else the
   kernel is wrong whatever the statistics say: fail at once, naming the draw and the element);
2. **per element**: the count ``k`` of draws that rounded up has an exact two-sided binomial
   p-value at most ``2 * P(X >= k)`` (``k`` above the mean) or ``2 * P(X <= k)`` (below), and
   each tail is bounded from above without approximation: the terms of a binomial tail beyond
   ``k`` fall at least geometrically (their ratio ``(n - j) p / ((j + 1)(1 - p))`` decreases in
   ``j``), so ``P(X >= k) <= pmf(k) / (1 - rho_k)``; ``pmf(k)`` is computed in logarithms with
   ``math.lgamma`` and a margin of ``64 eps`` times the terms' magnitude, far above the rounding
   of float64 and of lgamma. The element fails when that bound is below ``alpha / (2 m)``
   (Bonferroni over the ``m`` tested elements);
3. **pooled**: ``S = sum_i (k_i - n p_i)`` over the tested elements, a sum of independent
   centred terms bounded by 1, fails when Bernstein's inequality
   ``P(|S| >= t) <= 2 exp(-t**2 / (2 (V + t / 3)))``, ``V = n sum_i p_i (1 - p_i)``, gives a
   bound below ``alpha / 2``: it sees a small bias shared by many elements.

Every rejection needs a bound on the true tail below its threshold, and the thresholds add up to
``alpha``, so a correct sampler fails with probability at most ``alpha`` (union bound); the
bounds are conservative, so the real rate is lower. Elements with ``p`` 0 (a value the format
holds, or a discarded part below the random bits) accept only their one value.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["assert_stochastic", "binomial_log_tail_bound", "stochastic_decision"]


def binomial_log_tail_bound(k, n: int, p) -> np.ndarray:
    """Per element, an upper bound of ``log`` of the two-sided p-value ``2 * tail`` of ``k``
    successes in ``n`` draws of probability ``p`` (arrays; 0 where ``k`` is at the mean)."""
    k = np.asarray(k, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    out = np.zeros(k.shape)
    lg = np.frompyfunc(math.lgamma, 1, 1)
    ln1 = math.lgamma(n + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        logp, logq = np.log(p), np.log1p(-p)
        logpmf = ln1 - lg(k + 1).astype(np.float64) - lg(n - k + 1).astype(np.float64) \
            + k * logp + (n - k) * logq
        size = ln1 + np.abs(k * logp) + np.abs((n - k) * logq) + 1.0
        logpmf = logpmf + 64 * np.finfo(np.float64).eps * size
        upper = (n - k) / (k + 1) * (p / (1 - p))  # ratio of the upper tail's terms
        lower = k / (n - k + 1) * ((1 - p) / p)  # ratio of the lower tail's terms
        above = k > n * p
        ratio = np.where(above, upper, lower)
        bound = logpmf - np.log1p(-ratio) + math.log(2)
    ok = ratio < 1
    out = np.where(ok, np.minimum(bound, 0.0), 0.0)
    return out


def stochastic_decision(counts, n: int, p, alpha: float):
    """The two tests on counts of up-roundings (``counts``, ``p``: 1-D over the tested
    elements). Returns ``(failing element positions, log bounds, pooled bound)``."""
    counts = np.asarray(counts, dtype=np.int64)
    p = np.asarray(p, dtype=np.float64)
    m = counts.size
    if m == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0), 1.0
    logb = binomial_log_tail_bound(counts, n, p)
    bad = np.flatnonzero(logb < math.log(alpha / (2 * m)))
    dev = abs(int(counts.sum()) - n * math.fsum(p.tolist()))
    dev = max(dev - 1e-9 * n * m, 0.0)  # the float sum's error, to the sampler's benefit
    var = n * math.fsum((p * (1 - p)).tolist())
    pooled = min(1.0, 2 * math.exp(-dev * dev / (2 * (var + dev / 3)))) if var + dev > 0 else 1.0
    return bad, logb, pooled


def assert_stochastic(samples, result, *, alpha: float = 1e-6) -> None:
    """Fail unless ``samples`` could come from the stochastic rounding ``result`` describes.

    ``samples``: the outputs of ``n`` draws of the kernel, shape ``(n, *result.shape)`` (numpy,
    torch or jax arrays, er.Arrays, lists). ``result``: a
    :class:`~exactref._stochastic.StochasticResult` (``er.add(..., rounding="stochastic")``
    without random bits). ``alpha``: the false-alarm rate, the probability that a correct
    sampler fails (see the module for the tests and why the rate holds).

    >>> import numpy as np, exactref as er
    >>> r = er.cast(er.asarray([1 + 2.0**-9], "float32"), "bfloat16", rounding="stochastic")
    >>> rng = np.random.default_rng(1)
    >>> draws = np.where(rng.random((10000, 1)) < 0.25, 1.0078125, 1.0)
    >>> assert_stochastic(draws, r)  # 1/4 up: passes
    >>> biased = np.where(rng.random((10000, 1)) < 0.3, 1.0078125, 1.0)
    >>> assert_stochastic(biased, r)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: stochastic rounding is biased at 1 of 1 elements (false-alarm rate 1e-06, ...
    """
    __tracebackhide__ = True
    from .._array import asarray
    from .._stochastic import same_values

    if not hasattr(result, "probability"):
        raise TypeError(f"assert_stochastic(samples, result) needs the Result of an op with "
                        f"rounding='stochastic'; got {type(result).__name__}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r}: a false-alarm rate in (0, 1)")
    shape = tuple(result.rounded.shape)
    data = getattr(samples, "rounded", samples)
    arr = data if isinstance(data, np.ndarray) and data.dtype.kind == "f" else None
    s = np.asarray(arr if arr is not None else asarray(data)._wide(), dtype=np.float64)
    if s.ndim != len(shape) + 1 or tuple(s.shape[1:]) != shape:
        raise ValueError(f"samples have shape {tuple(s.shape)}; expected (n_draws, *{shape}): "
                         f"one output of the kernel per draw, stacked on a first axis")
    n = s.shape[0]
    if n == 0:
        raise ValueError(f"samples hold 0 draws (shape {tuple(s.shape)}); assert_stochastic "
                         f"needs draws of the kernel to test, at least one (a few thousand "
                         f"to see a bias of a percent): stack them on a first axis")
    size = int(np.prod(shape, dtype=np.int64))
    down = np.asarray(result.down._wide(), np.float64)
    up = np.asarray(result.up._wide(), np.float64)
    prob = np.asarray(result.probability, np.float64)
    up_ok = prob > 0
    is_down = same_values(s, down[None])
    is_up = same_values(s, up[None]) & up_ok[None]
    fine = is_down | is_up
    if not fine.all():
        where = np.unravel_index(int(np.argmin(fine.reshape(-1))), s.shape)
        draw, elem = int(where[0]), tuple(int(i) for i in where[1:])
        allowed = [float(down[elem])] + ([float(up[elem])] if up_ok[elem] and
                                         not same_values(up[elem], down[elem]) else [])
        raise AssertionError(
            f"draw {draw} at element {elem} is {float(s[where])!r}, not a value stochastic "
            f"rounding can give there: {' or '.join(map(repr, allowed))} (exact probability "
            f"of {float(up[elem])!r}: {float(prob[elem])!r})")
    tested = (prob > 0) & (prob < 1) & ~same_values(down, up)
    idx = np.flatnonzero(tested.reshape(-1))
    counts = (is_up & ~is_down).reshape(n, size)[:, idx].sum(axis=0)
    p = prob.reshape(-1)[idx]
    bad, logb, pooled = stochastic_decision(counts, n, p, alpha)
    if bad.size:
        j = int(bad[np.argmin(logb[bad])])
        elem = tuple(int(i) for i in np.unravel_index(int(idx[j]), shape)) if shape else ()
        raise AssertionError(
            f"stochastic rounding is biased at {bad.size} of {idx.size} elements (false-alarm "
            f"rate {alpha:g}, {alpha / 2:g} over the elements, Bonferroni); worst at {elem}: "
            f"{int(counts[j])} of {n} draws rounded up to {float(up.reshape(-1)[idx[j]])!r}, "
            f"frequency {counts[j] / n:.6g}, exact probability {float(p[j])!r}; two-sided "
            f"p-value at most {math.exp(logb[j]):.3g} < {alpha / (2 * idx.size):.3g}")
    if pooled < alpha / 2:
        raise AssertionError(
            f"stochastic rounding is biased over the {idx.size} rounding elements: "
            f"{int(counts.sum())} of {n * idx.size} draws rounded up, expected "
            f"{n * float(p.sum()):.6g}; Bernstein bound of the pooled p-value {pooled:.3g} < "
            f"{alpha / 2:g} (false-alarm rate {alpha:g})")
