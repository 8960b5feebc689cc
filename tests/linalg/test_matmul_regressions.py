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


def test_row_sums_next_to_float64s_largest_values_end():
    """The digits of a row sum rounded up to 2**beta next to float64's largest values, which
    overflowed on the way back: inf - inf, and the loop that takes digits until nothing is
    left never ended (found by `exactref audit torch --ops sum --dtypes float64 --seed 1`)."""
    big = np.finfo(np.float64).max
    rows = np.array([[big * 0.99, big * 0.99, -big * 0.99, 3.0],
                     [big, -big, 5e-324, 0.0],
                     [-big, 1.0, big, -1.0]])
    got = er.sum(rows, axis=1).rounded.tolist()
    assert got == [big * 0.99, 5e-324, 0.0]
    up = er.sum(rows, axis=1, rounding="toward_positive").rounded.tolist()
    assert up == [np.nextafter(big * 0.99, np.inf), 5e-324, 0.0]
