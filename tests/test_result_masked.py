"""``covers`` of a numpy masked array (issue 19): the mask was silently ignored, so a masked
element holding anything failed the check, and the Coverage never said a mask was there. Now the
hidden elements are not checked (covered whatever they hold), ``Coverage.masked`` marks them and
the summary counts them; the visible ones are checked as before."""

from __future__ import annotations

import numpy as np

import exactref as er
from exactref.testing import assert_covers


def _ref():
    return er.add(np.float32([1, 2, 3]), np.float32([1, 2, 3]))


def test_masked_elements_are_not_checked_and_are_reported():
    actual = np.ma.masked_array(np.float32([2, 99, 6]), mask=[False, True, False])
    cov = _ref().covers(actual)
    assert cov.all() and cov.masked.tolist() == [False, True, False]
    assert "1 element masked (not checked)" in cov.summary()
    assert_covers(actual, _ref())


def test_the_visible_elements_are_still_checked():
    actual = np.ma.masked_array(np.float32([2, 99, 7]), mask=[False, True, False])
    cov = _ref().covers(actual)
    assert cov.tolist() == [True, True, False] and cov.worst_index == (2,)
    assert "masked" in cov.summary()
    # a mask of nothing is a plain array; a plain array has no masked elements
    plain = _ref().covers(np.ma.masked_array(np.float32([2, 4, 7])))
    assert plain.tolist() == [True, True, False] and not plain.masked.any()
    assert "masked" not in _ref().covers(np.float32([2, 4, 6])).summary()


def test_any_of_and_stochastic_results_honour_the_mask():
    actual = np.ma.masked_array(np.float32([2, 99, 6]), mask=[False, True, False])
    assert er.any_of(_ref(), _ref()).covers(actual).masked.tolist() == [False, True, False]
    r = er.cast(er.asarray([1 + 2.0**-9, 1.0], "float32"), "bfloat16", rounding="stochastic")
    cov = r.covers(np.ma.masked_array([5.0, 1.0], mask=[True, False]))
    assert cov.all() and cov.masked.tolist() == [True, False]
    assert not r.covers(np.ma.masked_array([5.0, 1.0], mask=[False, False])).all()


def test_the_comparative_check_and_slack_keep_the_mask():
    r = er.exp(er.asarray([1.0, 2.0], "bfloat16"))
    actual = np.ma.masked_array([2.71875, 99.0], mask=[False, True])
    cov = r.covers(actual, baseline=[2.703125, 7.375])
    assert cov.all() and cov.masked.tolist() == [False, True]
    base = np.ma.masked_array([2.703125, 0.0], mask=[False, True])
    assert r.covers([2.71875, 99.0], baseline=base).masked.tolist() == [False, True]
    assert not r.covers([2.71875, 99.0], baseline=[2.703125, 7.375]).all()
    from exactref.testing import _with_slack  # the rebuilt Coverage of assert_covers(ulps=)

    ref = _ref()
    masked = np.ma.masked_array(np.float32([2, 99, 6]), mask=[False, True, False])
    out = _with_slack(ref.covers(masked), ref, masked, (1.0, 0.0, 0.0))
    assert out.masked.tolist() == [False, True, False] and "masked" in out.summary()
