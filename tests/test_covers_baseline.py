"""``Result.covers(actual, baseline=..., factor=...)``: the comparative check (FlashAttention's
methodology with the exact value as the reference). Sound: an output within ``factor`` times
the baseline's error of the exact value, plus half an ulp, always passes (checked against
mpmath's exact values); an output well past it is caught."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import exactref as er

mpmath.mp.prec = 200


def _ulp32(v: float) -> float:
    e = math.frexp(abs(v))[1] - 1 if v else -126
    return 2.0 ** (max(e, -126) - 23)


def _exact_errors(values, xs):
    """|v - exp(x)| in ulps of float32 at the exact value, by mpmath."""
    out = []
    for v, x in zip(values.tolist(), xs.tolist(), strict=True):
        f = mpmath.exp(mpmath.mpf(x))
        out.append(float(abs(mpmath.mpf(v) - f) / _ulp32(float(f))))
    return np.array(out)


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0])
def test_every_output_meeting_the_definition_passes(factor):
    rng = np.random.default_rng(int(factor * 10))
    x = rng.uniform(-20, 20, 400).astype(np.float32)
    r = er.exp(er.asarray(x, "float32"))
    base = np.exp(x)  # numpy's float32 exp: a couple of ulps off in places
    for steps in (-3, -2, -1, 1, 2, 3):
        a = base.copy()
        for _ in range(abs(steps)):
            a = np.nextafter(a, np.float32(np.inf if steps > 0 else -np.inf))
        ea, eb = _exact_errors(a, x), _exact_errors(base, x)
        meets = ea <= factor * eb + 0.5
        cov = np.asarray(r.covers(a, baseline=base, factor=factor))
        assert cov[meets].all(), (factor, steps)  # sound: never rejects a valid output


def test_outputs_well_past_the_baseline_are_caught():
    x = np.linspace(-5, 5, 301).astype(np.float32)
    r = er.exp(er.asarray(x, "float32"))
    exact = r.rounded.numpy()
    a = exact.copy()
    for _ in range(8):  # 8 ulps off where the baseline is the correct rounding
        a = np.nextafter(a, np.float32(np.inf))
    cov = r.covers(a, baseline=exact, factor=2.0)
    assert not cov.any()
    assert cov.worst_ulps > 0 and "not covered" in cov.summary()
    assert r.covers(exact, baseline=exact).all()


def test_nan_and_infinities():
    r = er.exp(er.asarray([1.0, 1000.0, np.nan], "float32"))  # e, inf, nan
    e = r.rounded.tolist()[0]
    assert r.covers([np.nan, np.inf, np.nan], baseline=[np.nan, np.inf, np.nan]).tolist() == \
        [True, True, True]  # no worse than the baseline
    assert r.covers([np.nan, np.inf, np.nan], baseline=[e, np.inf, np.nan]).tolist() == \
        [False, True, True]
    assert r.covers([e, 3e38, 0.0], baseline=[e, np.inf, np.nan]).tolist() == \
        [True, False, False]


def test_directed_modes_give_the_reference_a_whole_ulp():
    x = er.asarray([0.3], "float32")

    def up(v, k):
        for _ in range(k):
            v = np.nextafter(v, np.float32(np.inf))
        return v

    # slack (factor + 1) * 1 + 1/2 = 3.5 ulps at factor 2 with a perfect baseline
    r = er.exp(x, rounding="toward_zero")
    assert r.covers(up(r.rounded.numpy(), 3), baseline=r.rounded).all()
    n = er.exp(x)  # nearest: (factor + 1) / 2 + 1/2 = 2 ulps
    assert n.covers(up(n.rounded.numpy(), 2), baseline=n.rounded).all()
    assert not n.covers(up(n.rounded.numpy(), 3), baseline=n.rounded).any()


def test_bad_arguments():
    r = er.exp([1.0, 2.0])
    with pytest.raises(ValueError, match="factor"):
        r.covers([1.0, 2.0], baseline=[1.0, 2.0], factor=-1)
    with pytest.raises(ValueError, match="shape"):
        r.covers([1.0, 2.0], baseline=[1.0])
    a = er.any_of(er.exp([1.0]), er.exp([1.0], accuracy=2))
    assert a.covers([2.718281828459045], baseline=[2.718281828459045]).all()


def test_assert_covers_takes_the_baseline():
    from exactref.testing import assert_covers

    r = er.exp(er.asarray([1.0, 2.0], "bfloat16"))
    assert_covers(er.asarray([2.71875, 7.375], "bfloat16"), r,
                  baseline=er.asarray([2.703125, 7.375], "bfloat16"))
    with pytest.raises(AssertionError, match="not covered|outside"):
        assert_covers(er.asarray([2.78125, 7.375], "bfloat16"), r,
                      baseline=er.asarray([2.71875, 7.375], "bfloat16"))
    with pytest.raises(ValueError, match="slack"):
        assert_covers(r.rounded, r, baseline=r.rounded, ulps=1)
