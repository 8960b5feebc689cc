"""Kernels for the exhaustive sweep's tests: numpy's own, and ones wrong at known inputs."""

import numpy as np

#: the float16 input at which exp_off_by_4 is wrong (1.0), and the pair of float8_e5m2 codes
#: at which multiply_off is
BAD_FLOAT16 = 0x3C00
BAD_PAIR = (0x3E, 0x41)


def exp_off_by_4(x):
    """numpy's float16 exp, moved 4 floats up at x = 1.0."""
    out = np.exp(x)
    bad = np.asarray(x).view(np.uint16) == BAD_FLOAT16
    moved = out.view(np.uint16) + np.uint16(4)
    return np.where(bad, moved.view(np.float16), out)


def exp_one_up(x):
    """numpy's float16 exp moved one float up everywhere."""
    return np.nextafter(np.exp(x), np.float16(np.inf))


def exp_raises(x):
    """numpy's exp, raising where an input is 2.0."""
    if (np.asarray(x).view(np.uint16) == 0x4000).any():
        raise ValueError("no exp of 2 today")
    return np.exp(x)


def exp_float32_out(x):
    """exp computed in float32 and not rounded back: the wrong output format."""
    return np.exp(np.asarray(x).astype(np.float32))


def multiply_off(x, y):
    """float8_e5m2 multiply through float32 (correct), one ulp off at BAD_PAIR."""
    out = (np.asarray(x).astype(np.float32) * np.asarray(y).astype(np.float32)).astype(x.dtype)
    bad = (np.asarray(x).view(np.uint8) == BAD_PAIR[0]) & (np.asarray(y).view(np.uint8)
                                                          == BAD_PAIR[1])
    moved = out.view(np.uint8) + np.uint8(1)
    return np.where(bad, moved.view(x.dtype), out)


def exp8_off(x):
    """float8_e5m2 exp through float32, one ulp up at the inputs whose code is a multiple
    of 7."""
    out = np.exp(np.asarray(x).astype(np.float32)).astype(x.dtype)
    bad = np.asarray(x).view(np.uint8) % 7 == 0
    return np.where(bad, (out.view(np.uint8) + np.uint8(1)).view(x.dtype), out)
