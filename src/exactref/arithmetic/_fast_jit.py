"""The compiled twins of the fast lane's directed blocks (:mod:`._fast`): one pass per element
computing the nearest-even result, its exact error and the one-ulp step of the mode.

Each loop performs, element by element, the very float operations of its numpy twin in
``_fast`` (``_add_block``, ``_multiply_block``, ``_multiply64_block`` and ``_adjust``), in the
same order, with numba's default IEEE semantics (no ``fastmath``: no reassociation, no
contraction into FMA), so the values are the same bit for bit (NaN payloads apart); the tests
run both. Where the twin reads the bit pattern of ``s`` through an integer view, the loop
writes ``s`` into ``out`` and reads it back through ``bits``, the integer view of the same
memory (numba does not mark array data ``noalias``).

The one place the loops compute differently is ties-away's gap to the neighbour away from
zero: the twin reads it from the bit pattern one step up; the loop forms the same power of two
from the exponent field (``2**(max(E, 1) - bias - p + 1)``, infinite past the largest finite
value), the value the twin's subtraction gives exactly.

Mode codes (``MODES``): 1 ties away, 2 toward zero, 3 toward +inf, 4 toward -inf, 5 odd.
Each loop marks in ``hard`` the elements the exact engine must round (the twin's ``hard``).
"""

from __future__ import annotations

import math

import numpy as np

from .._exact import Rounding, jit

__all__ = ["MODES", "loops"]

MODES = {Rounding.NEAREST_AWAY: 1, Rounding.TOWARD_ZERO: 2, Rounding.TOWARD_POSITIVE: 3,
         Rounding.TOWARD_NEGATIVE: 4, Rounding.ODD: 5}


def loops():
    """``(add_loop, multiply32_loop, multiply64_loop)`` compiled, or None where compiled paths
    do not run (numba absent, or ``EXACTREF_NUMBA=0``)."""
    global _step_c
    step = _step.compiled()
    if step is None:
        return None
    _step_c = step  # the loops call the compiled step (numba reads globals when compiling)
    return add_loop.compiled(), multiply32_loop.compiled(), multiply64_loop.compiled()


_step_c = None  # the compiled _step, once loops() ran


@jit
def _step(bits, e, mode, p, bias, sign_bit, inf_bits):  # pragma: no cover - compiled
    """The integer step (-1, 0 or 1) of ``bits``, the pattern of the nearest-even ``s``, to
    the rounding in ``mode`` of ``s + e`` (``_adjust``'s rules)."""
    if e == 0:
        return 0
    neg = bits < 0
    eneg = e < 0
    if mode == 4:
        if not eneg:
            return 0
        return 1 if neg else -1
    if mode == 3:
        if eneg:
            return 0
        return -1 if neg else 1
    farther = eneg == neg
    if mode == 2:
        return 0 if farther else -1
    if mode == 1:
        if not farther:
            return 0
        mag = bits & ~sign_bit  # the magnitude's pattern
        if mag + 1 >= inf_bits:
            return 0  # the neighbour away from zero is infinite: no tie
        ex = max(mag >> (p - 1), 1)
        gap = math.ldexp(1.0, ex - bias - (p - 1))
        return 1 if 2.0 * abs(e) == gap else 0
    if bits & 1:
        return 0
    return 1 if farther else -1


@jit
def add_loop(a, b, negate, mode, p, bias, sign_bit, inf_bits, out, bits,
             hard):  # pragma: no cover - compiled (numba)
    """``a + b`` (``a - b`` with ``negate``) rounded in ``mode``, TwoSum's error deciding."""
    nh = 0
    for i in range(a.size):
        x = a[i]
        y = -b[i] if negate else b[i]
        s = x + y
        bb = s - x
        e = s - bb
        e = x - e
        bb = y - bb
        e = e + bb
        out[i] = s
        if not e - e == 0:  # e infinite or NaN (so s too, or an intermediate overflowed)
            if s - s == 0 or (x - x == 0 and y - y == 0):
                hard[i] = True
                nh += 1
            continue
        k = bits[i]
        k = k + _step_c(k, e, mode, p, bias, sign_bit, inf_bits)
        if mode == 4 and k == 0 and not (x == 0 and y == 0 and math.copysign(1.0, x) > 0
                                         and math.copysign(1.0, y) > 0):
            k = sign_bit  # an exact zero sum is -0 toward -inf, unless both terms are +0
        bits[i] = k
    return nh


@jit
def multiply32_loop(a, b, mode, out, bits, hard):  # pragma: no cover - compiled (numba)
    """float32 ``a * b`` rounded in ``mode``, the exact float64 product deciding."""
    nh = 0
    inf_bits = np.int32(0x7F800000)
    sign_bit = np.int32(-(2**31))
    for i in range(a.size):
        prod = np.float64(a[i]) * np.float64(b[i])
        s = np.float32(prod)
        d = prod - np.float64(s)
        out[i] = s
        if not s - s == 0:  # s infinite or NaN
            if d == d:  # an overflow of finite operands
                hard[i] = True
                nh += 1
            continue
        k = bits[i]
        bits[i] = k + _step_c(k, d, mode, 24, 127, sign_bit, inf_bits)
    return nh


@jit
def multiply64_loop(a, b, mode, out, bits, hard):  # pragma: no cover - compiled (numba)
    """float64 ``a * b`` rounded in ``mode``, Dekker's TwoProduct deciding."""
    nh = 0
    inf_bits = np.int64(0x7FF0000000000000)
    sign_bit = np.int64(-(2**63))
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
        out[i] = s
        if not (x - x == 0 and y - y == 0 and x != 0 and y != 0):
            continue  # a zero, infinite or NaN operand: s is exact
        ax, ay, az = abs(x), abs(y), abs(s)
        if not (ax >= 2.0**-1022 and ax <= 2.0**995 and ay >= 2.0**-1022 and ay <= 2.0**995
                and az >= 2.0**-968 and az <= 2.0**1020):
            hard[i] = True
            nh += 1
            continue
        k = bits[i]
        bits[i] = k + _step_c(k, e, mode, 53, 1023, sign_bit, inf_bits)
    return nh
