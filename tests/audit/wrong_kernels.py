"""Kernels for the audit's own tests: one correct, one deliberately wrong."""

import ml_dtypes
import numpy as np


def add_bf16_truncating(x, y):
    """bfloat16 add that truncates the float32 sum instead of rounding it to nearest."""
    s = (np.asarray(x).astype(np.float32) + np.asarray(y).astype(np.float32))
    bits = s.view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32).astype(ml_dtypes.bfloat16)


def add_bf16_correct(x, y):
    """bfloat16 add through float32 (correct: the double rounding is innocuous)."""
    s = np.asarray(x).astype(np.float32) + np.asarray(y).astype(np.float32)
    return s.astype(ml_dtypes.bfloat16)


def divide_by_reciprocal(x, y):
    """float32 division as x * (1/y): two roundings, a wrong divide."""
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    with np.errstate(all="ignore"):
        return x * (np.float32(1) / y)


def returns_none(x, y):
    """A kernel that forgets to return."""


def wrong_shape(x, y):
    """A kernel that returns one element."""
    return np.asarray(x)[:1] + np.asarray(y)[:1]
