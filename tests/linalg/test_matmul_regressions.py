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


def test_errors_say_what_was_found_and_how_to_fix_it():
    import pytest

    from exactref import linalg

    cases = [
        (lambda: linalg.matmul(np.ones((2, 3, 4)), np.ones((5, 4, 2))),
         r"\(2,\).*\(5,\).*do not broadcast.*reshape one of them"),
        (lambda: linalg.gemm(np.ones((2, 3)), np.ones((3, 4)), np.ones((3, 4))),
         r"c of shape \(3, 4\).*\(2, 4\).*reshape c, or pass beta=0"),
        (lambda: linalg.sum(1.5), r"got a scalar.*np.asarray\(\[x\]\)"),
        (lambda: linalg.sum(np.ones(3), dtype="complex128"),
         r"dtype=complex128 is not of x's kind \(float64\); pass a float dtype"),
        (lambda: linalg.sum(np.ones((2, 3)), axis=(0, 0)),
         r"axis=\(0, 0\).*\(2, 3\).*\[-2, 2\) and not repeat"),
        (lambda: linalg.matmul.backward(np.ones((2, 3)), np.ones((3, 4)), np.ones(4)),
         r"\(2, 4\), got \(4,\); broadcast it first"),
        (lambda: linalg.gemm.backward(np.ones((2, 3)), np.ones((3, 4)), np.ones((4,))),
         r"\(2, 4\), got \(4,\); broadcast it first"),
    ]
    for call, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            call()
