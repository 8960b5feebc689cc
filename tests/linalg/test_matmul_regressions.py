"""Pinned cases that once went wrong."""

import numpy as np

import exactref as er


def test_largest_float64_splits_without_overflow():
    # a digit rounded up to 2**beta at the top of float64's range overflowed on the way back
    big = np.finfo(np.float64).max
    x = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 1.0]])
    y = np.array([[big, 1.0], [big, 1.0], [1.0, 1.0]])
    got = er.matmul(x, y).rounded.tolist()
    assert got == [[float("inf"), 3.0], [1.0, 1.0]]
    toward_zero = er.matmul(x, y, rounding="toward_zero").rounded.tolist()
    assert toward_zero == [[big, 3.0], [1.0, 1.0]]
