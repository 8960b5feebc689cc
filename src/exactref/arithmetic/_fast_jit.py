"""The compiled twins of the fast lane's directed blocks (:mod:`._fast`): one pass per element
computing the nearest-even result, its exact error, and the one-ulp step of the mode.

Each loop performs, element by element, the very float operations of its numpy twin in
``_fast`` (``_add_block``, ``_multiply_block``, ``_multiply64_block`` and ``_adjust``), in the
same order, with numba's default IEEE semantics (no ``fastmath``: no reassociation, no
contraction into FMA), so the values are the same bit for bit (NaN payloads apart); the tests
run both. Bit patterns are read and written with scalar views (``np.float32(s).view(np.int32)``),
as the twin's array views. The step is branch-free (the mode's flags are loop invariants), so
the loops vectorize.

Mode codes (``MODES``): 1 ties away, 2 toward zero, 3 toward +inf, 4 toward -inf, 5 odd.
Each loop writes into ``hard`` whether the exact engine must round the element (the twin's
``hard``).
"""

from __future__ import annotations

import numpy as np

from .._exact import Rounding, jit

__all__ = ["MODES", "loops"]

MODES = {Rounding.NEAREST_AWAY: 1, Rounding.TOWARD_ZERO: 2, Rounding.TOWARD_POSITIVE: 3,
         Rounding.TOWARD_NEGATIVE: 4, Rounding.ODD: 5}


def loops():
    """``{(op, dtype): loop}`` compiled (op ``"add"`` or ``"multiply"``, dtype float32 or
    float64), or None where compiled paths do not run (numba absent, or ``EXACTREF_NUMBA=0``)."""
    global _step_c
    step = _step.compiled()
    if step is None:
        return None
    _step_c = step  # the loops call the compiled step (numba reads globals when compiling)
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    return {("add", f32): _add32.compiled(), ("add", f64): _add64.compiled(),
            ("multiply", f32): _mul32.compiled(), ("multiply", f64): _mul64.compiled()}


_step_c = None  # the compiled _step, once loops() ran


@jit(inline="always")
def _step(k, e, tie, m1, m2, m3, m4, m5):  # pragma: no cover - compiled (numba)
    """The integer step (-1, 0 or 1) of ``k``, the bit pattern of the nearest-even ``s``, to
    the rounding of ``s + e`` in the mode whose flag ``m1`` ... ``m5`` is 1 (``_adjust``'s
    rules, branch-free; ``tie``: ``2 |e|`` is the gap to the neighbour away from zero)."""
    inexact = np.int32(e != 0)
    neg = np.int32(k < 0)
    eneg = np.int32(e < 0)
    farther = inexact * np.int32(eneg == neg)
    one = np.int32(1)
    r = m4 * inexact * eneg * (neg + neg - one)  # toward -inf
    r += m3 * inexact * (one - eneg) * (one - neg - neg)  # toward +inf
    r -= m2 * (inexact - farther)  # toward zero
    r += m1 * farther * np.int32(tie)  # ties away
    odd = m5 * inexact * (one - np.int32(k & 1))  # round to odd: an inexact even value
    r += odd * (farther + farther - one)
    return r


@jit
def _add32(a, b, negate, mode, out, hard):  # pragma: no cover - compiled (numba)
    """float32 ``a + b`` (``a - b`` with ``negate``) rounded in ``mode``, TwoSum deciding.
    Toward -inf it rounds ``-((-a) + (-b))`` toward +inf, the same value (its zero sum is -0
    unless both terms are +0, as IEEE 754 says of the sum toward -inf, with no fix-up)."""
    g = np.float32(-1.0) if mode == 4 else np.float32(1.0)  # exact negations
    gb = -g if negate else g
    mode = 3 if mode == 4 else mode
    m1, m2, m3, m5 = (np.int32(mode == 1), np.int32(mode == 2), np.int32(mode == 3),
                      np.int32(mode == 5))
    m4 = np.int32(0)
    for i in range(a.size):
        x = g * a[i]
        y = gb * b[i]
        s = x + y
        bb = s - x
        e = s - bb
        e = x - e
        bb = y - bb
        e = e + bb
        fin = e - e == 0  # e finite (an overflow anywhere makes it infinite or NaN)
        hard[i] = np.int32(not fin) & (np.int32(s - s == 0) | (np.int32(x - x == 0) &
                                                              np.int32(y - y == 0)))
        e = e if fin else np.float32(0)
        k = np.float32(s).view(np.int32)
        tie = np.float32(2) * abs(e) == abs(np.int32(k + 1).view(np.float32) - s)
        k = k + _step_c(k, e, tie, m1, m2, m3, m4, m5)
        out[i] = g * np.int32(k).view(np.float32)


@jit
def _add64(a, b, negate, mode, out, hard):  # pragma: no cover - compiled (numba)
    """float64 ``a + b`` (``a - b`` with ``negate``) rounded in ``mode``, TwoSum deciding.
    Toward -inf it rounds ``-((-a) + (-b))`` toward +inf, the same value (its zero sum is -0
    unless both terms are +0, as IEEE 754 says of the sum toward -inf, with no fix-up)."""
    g = np.float64(-1.0) if mode == 4 else np.float64(1.0)  # exact negations
    gb = -g if negate else g
    mode = 3 if mode == 4 else mode
    m1, m2, m3, m5 = (np.int32(mode == 1), np.int32(mode == 2), np.int32(mode == 3),
                      np.int32(mode == 5))
    m4 = np.int32(0)
    for i in range(a.size):
        x = g * a[i]
        y = gb * b[i]
        s = x + y
        bb = s - x
        e = s - bb
        e = x - e
        bb = y - bb
        e = e + bb
        fin = e - e == 0  # e finite (an overflow anywhere makes it infinite or NaN)
        hard[i] = np.int32(not fin) & (np.int32(s - s == 0) | (np.int32(x - x == 0) &
                                                              np.int32(y - y == 0)))
        e = e if fin else np.float64(0)
        k = np.float64(s).view(np.int64)
        tie = 2.0 * abs(e) == abs(np.int64(k + 1).view(np.float64) - s)
        k = k + _step_c(k, e, tie, m1, m2, m3, m4, m5)
        out[i] = g * np.int64(k).view(np.float64)


@jit
def _mul32(a, b, negate, mode, out, hard):  # pragma: no cover - compiled (numba)
    """float32 ``a * b`` rounded in ``mode``, the exact float64 product deciding."""
    m1, m2, m3, m4, m5 = (np.int32(mode == 1), np.int32(mode == 2), np.int32(mode == 3),
                          np.int32(mode == 4), np.int32(mode == 5))
    for i in range(a.size):
        p = np.float64(a[i]) * np.float64(b[i])
        s = np.float32(p)
        d = p - np.float64(s)
        fin = s - s == 0
        h = (not fin) & (d == d)  # an overflow of finite operands
        hard[i] = h
        d = d if fin else 0.0
        k = np.float32(s).view(np.int32)
        tie = 2.0 * abs(d) == np.float64(abs(np.int32(k + 1).view(np.float32) - s))
        k = k + _step_c(k, d, tie, m1, m2, m3, m4, m5)
        out[i] = np.int32(k).view(np.float32)


@jit
def _mul64(a, b, negate, mode, out, hard):  # pragma: no cover - compiled (numba)
    """float64 ``a * b`` rounded in ``mode``, Dekker's TwoProduct deciding where its
    conditions hold (``_fast``'s module docstring), the engine elsewhere."""
    m1, m2, m3, m4, m5 = (np.int32(mode == 1), np.int32(mode == 2), np.int32(mode == 3),
                          np.int32(mode == 4), np.int32(mode == 5))
    split = 134217729.0  # 2**27 + 1
    for i in range(a.size):
        x = a[i]
        y = b[i]
        s = x * y
        t = x * split
        ah = t - (t - x)
        al = x - ah
        t = y * split
        bh = t - (t - y)
        bl = y - bh
        e = ah * bh
        e = e - s
        e = e + ah * bl
        e = e + al * bh
        e = e + al * bl
        ax, ay, az = abs(x), abs(y), abs(s)
        fin = (x - x == 0) & (y - y == 0) & (x != 0) & (y != 0)
        safe = (ax >= 2.0**-1022) & (ax <= 2.0**995) & (ay >= 2.0**-1022) & (ay <= 2.0**995)
        safe = safe & (az >= 2.0**-968) & (az <= 2.0**1020)
        h = fin & (not safe)
        hard[i] = h
        e = e if fin & safe else 0.0  # a zero, infinite or NaN operand: s is exact
        k = np.float64(s).view(np.int64)
        tie = 2.0 * abs(e) == abs(np.int64(k + 1).view(np.float64) - s)
        k = k + _step_c(k, e, tie, m1, m2, m3, m4, m5)
        out[i] = np.int64(k).view(np.float64)
