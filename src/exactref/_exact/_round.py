"""Vectorized correct rounding of exact values into any float format, in every mode.

The exact value of an element reaches this module as ``(c1 + c2 + r) * 2**E``: two float64
numbers ``c1 != 0`` and ``c2`` with ``|c2| <= 2 ulp(c1)``, the sign ``r`` of a remainder no larger
than half an ulp of ``c2`` (or 0 when there is none), and an integer scale ``E``, so no value
overflows or underflows in float64 on its way here.

Rounding needs only the leading bits and the sign of what is left, so the first step folds the
value into one integer ``N`` of 55 to 57 bits rounded to odd (its last bit is set when anything
below it is not zero): ``|value| = N * 2**Q`` up to that sticky bit. With at least two bits
more than any target format (float64 included), rounding ``N`` to the target's quantum in any
mode gives the same result as rounding the exact value (the round-to-odd theorem). The second
step is integer arithmetic on ``N``: shift to the target quantum (subnormals included), decide
the increment from the mode, carry, and compare with the largest finite value.

Every step is a whole-array numpy operation; nothing loops over elements.
"""

from __future__ import annotations

import numpy as np

from ._rounding import Rounding
from ._specials import below_zero_values, overflow_values, rounds_to_nothing, special_values

__all__ = ["round_regular", "round_float64", "fast_eligible", "odd_fold"]

_TWO55 = np.int64(1) << np.int64(55)
_TWO56 = np.int64(1) << np.int64(56)


def round_regular(c1, c2, r, E, fmt, mode: Rounding, rule: str):
    """Round nonzero finite exact values ``(c1 + c2 + r) * 2**E`` into float format ``fmt``.

    All arguments are 1-D arrays of one length (``r`` and ``E`` may be scalars). Returns float64
    ``values`` holding the format's results (signed zeros, infinities and NaN included) and the
    boolean arrays ``inexact``, ``overflow``, ``underflow``.
    """
    p, emin = fmt.precision, fmt.emin
    m, eh = np.frexp(c1)
    negative = m < 0
    M = (np.abs(m) * 2.0**53).astype(np.int64)  # exact: 53-bit significand in [2**52, 2**53)
    flip = np.where(negative, -1.0, 1.0)
    # 8 * c2 / ulp-unit of M, exactly: a float in [-16, 16] (signs taken on the magnitude)
    f8 = np.ldexp(c2 * flip, (56 - eh).astype(np.int32))
    rr = np.asarray(r, dtype=np.int64) * np.where(negative, -1, 1)
    # a c2 so far below c1 that the scaling underflows still carries its sign as the sticky
    lost = (f8 == 0) & (c2 != 0)
    if lost.any():
        rr = np.where(lost, np.sign(c2 * flip).astype(np.int64), rr)
    fl = np.floor(f8)
    frac_sticky = f8 != fl
    # an integral f8 with a negative remainder below it: one step down, inexact
    down = (~frac_sticky) & (rr < 0)
    N = (M << 3) + fl.astype(np.int64) - down.astype(np.int64)
    sticky = frac_sticky | (rr != 0)
    N |= sticky.astype(np.int64)  # round to odd: the sticky bit
    Q = eh.astype(np.int64) - 56 + np.asarray(E, dtype=np.int64)
    L = 55 + (N >= _TWO55).astype(np.int64) + (N >= _TWO56).astype(np.int64)
    ev = Q + L - 1  # exponent of the leading bit of the exact value
    q = np.maximum(ev, emin) - (p - 1)
    s = np.minimum(q - Q, 62)  # at least 2 by construction; 62 keeps every bit as sticky
    one = np.int64(1)
    ip = N >> s
    rem = N & ((one << s) - one)
    half = one << (s - one)
    inexact = rem != 0
    code_parity = p == 1 and fmt.parity == "code" and mode in (Rounding.NEAREST_EVEN, Rounding.ODD)
    if code_parity:
        # P3109's CodeIsEven with one bit: the lower neighbour's code is even where it is 0 or
        # its biased exponent q + 1 - emin is even
        lower_even = (ip == 0) | (((q - emin) & one) == one)
        inc = inexact & lower_even if mode is Rounding.ODD else \
            (rem > half) | ((rem == half) & ~lower_even)
    elif mode is Rounding.NEAREST_EVEN and p > 1:
        inc = (rem > half) | ((rem == half) & ((ip & one) == one))
    elif mode.is_nearest:
        # Note: NEAREST_EVEN with one significant bit (float8_e8m0fnu) has no even
        # significand; ties go away from zero there, as ml_dtypes' casts do.
        inc = rem >= half
    elif mode is Rounding.TOWARD_POSITIVE:
        inc = inexact & ~negative
    elif mode is Rounding.TOWARD_NEGATIVE:
        inc = inexact & negative
    else:
        inc = np.zeros(ip.shape, dtype=bool)
    ip = ip + inc.astype(np.int64)
    if mode is Rounding.ODD and not code_parity:
        ip |= inexact.astype(np.int64)
    carry = ip == (one << p)
    ip = np.where(carry, ip >> one, ip)
    q = q + carry.astype(np.int64)
    qmax = fmt.emax - p + 1
    overflow = (q > qmax) | ((q == qmax) & (ip > fmt.max_mantissa))
    underflow = inexact & (ev < emin)
    inexact = inexact | overflow  # IEEE: an overflow is inexact
    qc = np.where(overflow, 0, np.maximum(q, -1100)).astype(np.int32)
    mag = np.ldexp(ip.astype(np.float64), qc)
    values = np.where(negative, -mag, mag)
    if overflow.any():
        values = np.where(overflow, overflow_values(negative, fmt, mode, rule), values)
    zero = ip == 0
    if zero.any():
        if not fmt.has_zero:
            values = np.where(zero, rounds_to_nothing(zero.shape, fmt, mode), values)
        elif not fmt.has_negzero:
            values = np.where(zero, 0.0, values)
    if not fmt.signed and fmt.has_zero:
        # the finite range ends at 0: a negative value that does not round to 0 overflows
        below = negative & ~zero
        if below.any():
            values = np.where(below, below_zero_values(below.shape, fmt, mode, rule), values)
            overflow, inexact = overflow | below, inexact | below
    elif not fmt.signed:
        # a negative value has no encoding: NaN, and no rounding took place
        values = np.where(negative, np.nan, values)
        keep = ~negative
        inexact, overflow, underflow = inexact & keep, overflow & keep, underflow & keep
    return values, inexact, overflow, underflow


# --------------------------------------------------------------------------- float64 fast path
_EXP_MASK = np.uint64(0x7FF0000000000000)


def fast_eligible(fmt) -> bool:
    """True for float formats the float64 fast path serves (every one but float64 itself,
    float8_e8m0fnu and P3109's unsigned formats, whose missing sign takes the general path, and
    binary8p1se/sf, whose ties read the code's parity)."""
    return fmt.kind == "float" and 1 < fmt.precision <= 51 and fmt.has_zero and fmt.signed


_CHUNK = 1 << 15  # elements per block: the temporaries of a block stay in cache


def round_float64(x, fmt, mode: Rounding, rule: str, flags: bool = True):
    """Round exact float64 values ``x`` (any shape; NaN and ±inf allowed) into ``fmt``.

    For formats with ``fast_eligible(fmt)``: whole-array arithmetic with no per-element
    branches. The quantum of each element, ``q = 2**(max(e, emin) - p + 1)``, comes from the
    exponent bits of ``x``; ``x / q`` is exact, the mode is an integer rounding of it (rint,
    floor, ceil, trunc, plus a tie or parity fix for ties-away and round-to-odd), and ``k * q``
    is exact again. Values need no intermediate format, so nothing rounds twice. Also correct
    for ``x`` rounded to odd in float64 from a wider exact value (53 >= p + 2 bits). The work
    runs in blocks whose temporaries stay in cache.

    Returns float64 values of the format and the flags ``(inexact, overflow, underflow)``
    (``None`` each when ``flags`` is false). A NaN stays NaN, in a format without NaN too,
    where it marks an undefined element (:mod:`._specials`).
    """
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape  # before flattening: () stays ()
    x = np.ascontiguousarray(x.reshape(-1))
    n = x.size
    native = _NATIVE.get(fmt.name)
    if native is not None and mode is Rounding.NEAREST_EVEN and rule == "ieee" and not flags:
        # numpy's casts from float64 to float32 and float16 are single correct roundings
        with np.errstate(over="ignore"):
            return x.astype(native).astype(np.float64).reshape(shape), None, None, None
    values = np.empty(n)
    inexact = np.empty(n, dtype=bool) if flags else None
    underflow = np.empty(n, dtype=bool) if flags else None
    overflow = np.zeros(n, dtype=bool)
    any_over = False
    finite_all = True
    for start in range(0, n, _CHUNK):
        sl = slice(start, min(start + _CHUNK, n))
        with np.errstate(over="ignore"):  # k * q past float64's range: an overflow, flagged
            fin, over = _round_block(x[sl], values[sl], inexact[sl] if flags else None,
                                     underflow[sl] if flags else None, overflow[sl], fmt, mode)
        finite_all &= fin
        any_over |= over
    if not fmt.has_negzero:
        values += 0.0  # -0 becomes +0
    if any_over:
        values = np.where(overflow, overflow_values(np.signbit(x), fmt, mode, rule), values)
        if flags:
            inexact |= overflow
    if not finite_all:
        finite = np.isfinite(x)
        values = np.where(finite, values, special_values(np.where(finite, 0.0, x), fmt, rule))
        overflow &= finite
        if flags:
            inexact &= finite
            underflow &= finite
    values = values.reshape(shape)
    if not flags:
        return values, None, None, None
    return values, inexact.reshape(shape), overflow.reshape(shape), underflow.reshape(shape)


_NATIVE = {"float32": np.float32, "float16": np.float16}


def _round_block(x, out, inexact, underflow, overflow, fmt, mode):
    """One block of :func:`round_float64`, in place; returns (all finite, any overflow)."""
    p, emin = fmt.precision, fmt.emin
    finite = bool(np.isfinite(x).all())
    xs = x if finite else np.where(np.isfinite(x), x, 0.0)
    q = np.bitwise_and(xs.view(np.uint64), _EXP_MASK).view(np.float64)  # 2**floor(log2|x|)
    np.maximum(q, 2.0**emin, out=q)
    q *= 2.0 ** (1 - p)
    y = np.divide(xs, q)  # exact: a power-of-two scaling
    if mode is Rounding.NEAREST_EVEN:
        np.rint(y, out=out)
    elif mode is Rounding.TOWARD_NEGATIVE:
        np.floor(y, out=out)
    elif mode is Rounding.TOWARD_POSITIVE:
        np.ceil(y, out=out)
    elif mode is Rounding.TOWARD_ZERO:
        np.trunc(y, out=out)
    elif mode is Rounding.NEAREST_AWAY:
        k = np.rint(y)
        s = np.sign(y)
        # a tie that went to the even neighbour nearer zero goes away from zero instead
        np.copysign(k + s * ((y - k) * s == 0.5), y, out=out)
    else:  # ODD: truncate, then make an inexact result odd
        k = np.trunc(y)
        half = k * 0.5
        np.copysign(k + np.sign(y) * ((y != k) & (half == np.trunc(half))), y, out=out)
    out *= q
    if inexact is not None:
        np.not_equal(out, xs, out=inexact)
        np.less(np.abs(xs, out=y), 2.0**emin, out=underflow)
        underflow &= inexact
    np.greater(np.abs(out, out=y), fmt.max_finite, out=overflow)
    return finite, bool(overflow.any())


def odd_fold(c1, c2, r):
    """``c1 + c2 + r`` rounded to odd in float64, for an exact pair ``c1 = fl(c1 + c2)``.

    Requires ``|c2|`` at most half the gap from ``c1`` to its neighbour on ``c2``'s side (true
    of TwoSum and TwoProduct outputs) and ``r`` (a sign) only where ``c2 != 0``. Rounding the
    result into any format of at most 51 bits is then the correct rounding of the exact value.
    """
    direction = np.sign(c2) + (c2 == 0) * r
    odd = (c1.view(np.uint64) & np.uint64(1)).astype(bool)
    # step |c1| one ulp toward the exact value where it is even and inexact
    step = (direction != 0) & ~odd
    toward = np.where(np.signbit(c1) == (direction < 0), 1, -1).astype(np.int64)
    bits = c1.view(np.int64) + step * toward
    return bits.view(np.float64)
