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
