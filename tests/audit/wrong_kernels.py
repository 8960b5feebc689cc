"""Kernels for the audit's own tests: correct ones, and ones wrong in known ways."""

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


# ------------------------------------------------------------------ kernels of known error
#: the operands of every call of the kernels below, for the tests' own oracle
CALLS: list = []


def _sum_rounded_once(x, y):
    """float16/float32 add, correctly rounded: the float64 sum rounded once more is innocuous
    (53 >= 2 * 24 + 2 bits); the result dtype is numpy's (float16 + float32: float32)."""
    x, y = np.asarray(x), np.asarray(y)
    CALLS.append((x, y))
    with np.errstate(all="ignore"):
        return (x.astype(np.float64) + y.astype(np.float64)).astype(np.result_type(x, y))


def add_exact(x, y):
    """float16/float32 add, correctly rounded: every output is the exact rounding."""
    return _sum_rounded_once(x, y)


def add_one_ulp_away(x, y):
    """The correctly rounded sum moved one float away from zero: exactly 1 ulp (the gap above
    |rounded|) off on every finite output; the largest finite one becomes an infinity; NaN
    and infinities stay."""
    s = _sum_rounded_once(x, y)
    return np.nextafter(s, np.copysign(np.inf, s).astype(s.dtype))


def add_nan(x, y):
    """Every output NaN."""
    s = _sum_rounded_once(x, y)
    return np.full_like(s, np.nan)


def _exp_nudged(x, steps):
    """float32 exp correctly rounded (float64 exp rounded once: float64's exp is within an ulp
    of 2**-53 relative, far below float32's half ulp except at ties, which float32 exp never
    meets) and then moved ``steps`` floats up: an implementation exactly ``steps`` ulps past the
    correct rounding (exact zeros and infinities kept)."""
    x = np.asarray(x)
    y = np.exp(x.astype(np.float64)).astype(np.float32)
    moved = np.isfinite(y) & (y != 0)  # zeros and infinities stay exact, as in every library
    for _ in range(steps):
        y = np.where(moved, np.nextafter(y, np.float32(np.inf)), y)
    return y.astype(x.dtype)


def exp_one_ulp_up(x):
    return _exp_nudged(x, 1)


def exp_three_ulps_up(x):
    return _exp_nudged(x, 3)


# ------------------------------------------- kernels right everywhere but one hard region
def exp_correct(x):
    """float32 exp correctly rounded (``_exp_nudged`` without a nudge)."""
    return _exp_nudged(x, 0)


def exp_overflows_early(x):
    """float32 exp correctly rounded except that it gives inf from x = 88.7 on, about 3000 ulps
    before the real edge ln(FLT_MAX) = 88.72284 (an overflow test against a rounded
    constant)."""
    x = np.asarray(x)
    return np.where(x >= np.float32(88.7), np.float32(np.inf), _exp_nudged(x, 0)).astype(x.dtype)


def _sigmoid(x):
    """float32 sigmoid correctly rounded: the float64 formula (a few float64 ulps off) rounded
    once into float32, innocuous but at ties float32 sigmoid almost never meets."""
    x = np.asarray(x)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def sigmoid_correct(x):
    return _sigmoid(x).astype(np.asarray(x).dtype)


def sigmoid_flushed(x):
    """float32 sigmoid correctly rounded except 0 for x < -80 (where the result is below
    2**-115: a tail cut short), so wrong on (-103.97, -80), where the result is not 0."""
    x = np.asarray(x)
    return np.where(x < -80, 0.0, _sigmoid(x)).astype(x.dtype)


def mxfp8_e4m3_floor(x):
    """An MXFP8 (E4M3) quantizer written from the OCP MX v1.0 text with numpy alone: a block's
    scale is 2**(floor(log2 amax) - 8), clamped into E8M0's range, NaN for a block holding a
    NaN or an infinity; elements divided by it, saturated at 448, rounded to nearest even."""
    x = np.asarray(x).astype(np.float64)
    r, c = x.shape
    b = x.reshape(r, c // 32, 32)
    amax = np.max(np.abs(b), axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(amax)) - 8
    e = np.clip(np.where(np.isfinite(e), e, -127), -127, 127)
    scale = np.where(np.isfinite(amax), 2.0 ** e, np.nan)
    with np.errstate(invalid="ignore"):
        q = np.clip(b / scale, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    return q.astype(np.float64).reshape(r, c), scale[..., 0]


def mxfp8_e4m3_scale_twice(x):
    """The quantizer above with every scale one power of two too large (its codes halved)."""
    q, s = mxfp8_e4m3_floor(x)
    return q, s * 2


# ------------------------------------------------------------- kernels that fail to run
def raises_runtime(*args, **kwargs):
    """A kernel with a bug of its own: it raises whatever it is given."""
    raise RuntimeError("boom: the kernel's own bug")


def raises_type_error(x, y):
    """A kernel that raises a TypeError unrelated to formats (a bug inside it)."""
    raise TypeError("unsupported operand type(s) for +: 'Tensor' and 'NoneType'")


def add_float32_only(x, y):
    """A kernel with no implementation but float32's, which it says with a TypeError that
    names the dtype."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != np.float32 or y.dtype != np.float32:
        raise TypeError(f"add_float32_only: no kernel for {x.dtype.name} and {y.dtype.name}")
    return x + y


def softmax_torch_style(x, dim=-1):
    """A softmax written as PyTorch spells it: ``dim``, where the audit passes ``axis``."""
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return (e / e.sum(axis=dim, keepdims=True)).astype(np.float32)


def add_hangs_on_float32(x, y):
    """A kernel that never returns for float32 operands (it waits on an event never set)."""
    x, y = np.asarray(x), np.asarray(y)
    if np.float32 in (x.dtype, y.dtype):
        HANG.wait()
    return _sum_rounded_once(x, y)


HANG = __import__("threading").Event()


def add_interrupted(x, y):
    """A kernel during which the user presses Ctrl-C (the second call)."""
    CALLS.append(None)
    if len(CALLS) >= 2:
        raise KeyboardInterrupt
    return _sum_rounded_once(x, y)


def add_negative_zero(x, y):
    """float32 add, correctly rounded except that an exact zero sum is -0 (IEEE: +0 under
    round to nearest, for x + (-x))."""
    s = _sum_rounded_once(x, y)
    return np.where(s == 0, -s.dtype.type(0), s).astype(s.dtype)


NOT_A_FUNCTION = 3
