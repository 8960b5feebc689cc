"""Stochastic rounding of exact values: the two neighbours, the exact probability, the r-bit rule.

The model, for a nonzero finite exact value ``v`` and a float format of precision ``p``:

* ``q = 2**(max(e, emin) - p + 1)`` is the quantum of the format at ``|v|`` (``e`` the exponent
  of ``|v|``'s leading bit; no upper exponent limit, so values past the largest finite one have
  a quantum too), ``K = floor(|v| / q)`` and the discarded part is ``|v| - K q``;
* the neighbours are ``down = K q`` and ``up = (K + 1) q`` (toward and away from zero, with
  ``v``'s sign); ``|v| = K q`` (a value the format holds) has the one neighbour ``down``;
* **with r random bits** (PTX's ``cvt.rs``: the random bits are added to the discarded bits and
  the sum is truncated, section 9.7.9.21 of the PTX ISA): ``D = floor((|v| - K q) 2**r / q)``
  is the discarded part truncated to its first r bits, the random bits aligned just below the
  last kept bit (what lies below them is dropped, as the hardware drops a float32 source's
  discarded bits past its 8 random bits into e4m3), and the result is ``up``
  exactly where ``D + bits >= 2**r`` (the carry out of the r-bit addition);
  without bits, ``up`` has probability ``D / 2**r``, exactly;
* **ideal** (no width): ``up`` has probability ``(|v| - K q) / q``.

A chosen magnitude above the largest finite value overflows as under round-to-nearest
(``"ieee"``: an infinity, NaN in a format without one; ``"saturate"``: the largest finite value,
PTX's ``.satfinite``; ``"nan"``: NaN). NaN, infinities and exact zeros are encoded as the format
says and never round. Everything here is exact arithmetic on the exact value: a float64
(one per element) scales by powers of two; the engine's two-part values ``c1 + c2`` and a sign
take TwoSum and exact floors (:func:`_floor_sum`); the slow path's Fractions take Python
integers.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._engine import two_sum
from ._rounding import Rounding
from ._specials import overflow_values, special_values, zero_values

__all__ = ["MAX_WIDTH", "Neighbours", "neighbours", "split_fraction"]

#: The widest random-bit count: ``D + bits`` stays below 2**63 (int64).
MAX_WIDTH = 62


class Neighbours:
    """Per element (flat float64 arrays of the format's values): ``down`` and ``up``,
    ``num`` (int64: ``D``, the numerator of the probability of ``up`` over ``2**width``; None
    for the ideal model), ``prob`` (float64: the probability of ``up``; exact for widths up to
    53, and for the ideal model where the ratio is a float64: a sum or product's value, not a
    quotient's, which is known to ``2**(p - 52)``), ``width``."""

    def __init__(self, down, up, num, prob, width):
        self.down, self.up, self.num, self.prob, self.width = down, up, num, prob, width

    def choose(self, bits):
        """The r-bit rule: ``up`` where ``D + bits >= 2**width`` (flat int64 bits)."""
        carry = self.num + bits >= (np.int64(1) << np.int64(self.width))
        return np.where(carry, self.up, self.down)


def neighbours(ex, fmt, rule: str, width: int | None) -> Neighbours:
    """The stochastic-rounding neighbours of the exact values ``ex`` (an ExactArray) in the
    float format ``fmt`` under overflow rule ``rule``, with ``width`` random bits (None: ideal).
    """
    n = ex.size
    down = np.zeros(n)
    up = np.zeros(n)
    num = np.zeros(n, dtype=np.int64) if width is not None else None
    prob = np.zeros(n)
    inexact = np.zeros(n, dtype=bool)
    special = (ex.special != 0) | np.isnan(ex.special)
    if special.any():
        down[special] = up[special] = special_values(ex.special[special], fmt, rule)
    zero = ex.zero & ~special
    if zero.any():
        z = zero_values(ex.negative_zero(Rounding.NEAREST_EVEN)[zero], fmt)
        down[zero] = up[zero] = z
    regular = ~special & ~zero
    hard = np.zeros(n, dtype=bool)
    if ex.hard:
        hard[np.fromiter(ex.hard, dtype=np.int64, count=len(ex.hard))] = True
    neg = np.zeros(n, dtype=bool)
    K = np.zeros(n)
    qe = np.zeros(n, dtype=np.int64)
    lanes = (
        (regular & ~hard & (ex.c2 == 0) & (ex.r == 0) & (ex.E == 0), _split_float64),
        (regular & ~hard & ((ex.c2 != 0) | (ex.r != 0) | (ex.E != 0)), _split_pairs),
    )
    for mask, split in lanes:
        idx = np.flatnonzero(mask)
        if idx.size:
            parts = (ex.c1[idx], ex.c2[idx], ex.r[idx], ex.E[idx])
            neg[idx], K[idx], qe[idx], d, prob[idx], inexact[idx] = split(*parts, fmt, width)
            if num is not None:
                num[idx] = d
    for i in np.flatnonzero(hard & regular):  # the slow path's Fractions
        s, k, e, frac = split_fraction(ex.hard[int(i)], fmt, width)
        neg[i], K[i], qe[i] = s, float(k), e
        inexact[i] = frac != 0 if width is None else split_fraction(
            ex.hard[int(i)], fmt, None)[3] != 0
        if num is not None:
            num[i] = int(frac * 2 ** width)
        prob[i] = float(frac)
    idx = np.flatnonzero(regular)
    if idx.size:
        q = qe[idx].astype(np.int32)
        with np.errstate(over="ignore"):
            lo = np.ldexp(K[idx], q)
            hi = np.ldexp(K[idx] + 1.0, q)
        # a value the format holds, or (r bits) whose discarded part is below them: one value
        hold = (num[idx] == 0) if num is not None else ~inexact[idx]
        hi = np.where(hold, lo, hi)
        down[idx] = _encode(lo, neg[idx], fmt, rule)
        up[idx] = _encode(hi, neg[idx], fmt, rule)
    return Neighbours(down, up, num, prob, width)


def _encode(mag, neg, fmt, rule):
    """Signed values of the format from magnitudes ``mag`` (multiples of the quantum): an
    overflow as round-to-nearest gives it, a zero with the value's sign."""
    over = mag > fmt.max_finite
    out = np.where(neg, -mag, mag)
    if over.any():
        out = np.where(over, overflow_values(neg, fmt, Rounding.NEAREST_EVEN, rule), out)
    z = mag == 0
    if z.any():
        out = np.where(z, zero_values(neg, fmt), out)
    return out


def _split_float64(c1, c2, r, E, fmt, width):
    """``(negative, K, quantum exponent, D, probability, inexact)`` of exact float64 values
    ``c1`` (nonzero, finite): power-of-two scalings and floors, every step exact."""
    p, emin = fmt.precision, fmt.emin
    a = np.abs(c1)
    _, ex = np.frexp(a)
    qe = np.maximum(ex.astype(np.int64) - 1, emin) - (p - 1)
    A = np.ldexp(a, (-qe).astype(np.int32))  # exact: |v| / q < 2**p
    K = np.floor(A)
    F = A - K  # exact: the discarded part over q, in [0, 1)
    if width is None:
        return c1 < 0, K, qe, None, F, F != 0
    D = np.floor(np.ldexp(F, width))  # exact: the first `width` discarded bits
    return c1 < 0, K, qe, D.astype(np.int64), np.ldexp(D, -width), F != 0


def _floor_sum(x, y, rr):
    """``floor(x + y + rr * tiny)`` as int64, exactly, for floats whose sum is below 2**62 and a
    sign ``rr`` of a rest smaller than half an ulp of ``y`` (of ``x`` where ``y`` is 0).

    With ``s + e = x + y`` (TwoSum): a non-integral ``s`` lies an ulp of ``s`` or more from any
    integer and ``|e| + tiny`` less, so the floor is ``floor(s)``; an integral ``s`` adds
    ``floor(e + tiny)``, which is ``floor(e)``, one less where ``e`` is integral and the rest
    negative (``e`` and the integers are multiples of ``y``'s ulp, which the rest stays below).
    """
    s, e = two_sum(x, y)
    fs = np.floor(s)
    fe = np.floor(e)
    below = (fe == e) & (rr < 0)
    whole = fs.astype(np.int64) + fe.astype(np.int64) - below.astype(np.int64)
    return np.where(fs == s, whole, fs.astype(np.int64))


def _split_pairs(c1, c2, r, E, fmt, width):
    """:func:`_split_float64` for values ``(c1 + c2 + r) * 2**E`` (the engine's form; ``r``
    the sign of a rest below half an ulp of ``c2``, or of ``c1`` where ``c2`` is 0), vectorized:
    TwoSum and power-of-two scalings, every step exact."""
    p, emin = fmt.precision, fmt.emin
    neg = c1 < 0
    sgn = np.where(neg, -1.0, 1.0)
    a1, a2 = np.abs(c1), c2 * sgn
    rr = r.astype(np.int64) * np.where(neg, -1, 1)
    t, err = two_sum(a1, a2)  # the magnitude's leading bit: t's, one lower below a power of 2
    m, ex = np.frexp(t)
    lower = (m == 0.5) & ((err < 0) | ((err == 0) & (rr < 0)))
    e = ex.astype(np.int64) - 1 - lower + E.astype(np.int64)
    qe = np.maximum(e, emin) - (p - 1)
    sh = np.clip(E.astype(np.int64) - qe, -2100, 2100).astype(np.int32)
    with np.errstate(under="ignore"):
        A1 = np.ldexp(a1, sh)  # |v| / q = A1 + A2 + rest, below 2**p
        A2 = np.ldexp(a2, sh)
    lost = (A2 == 0) & (a2 != 0)  # c2 past float64's range at this scale: only its sign counts
    rr = np.where(lost, np.sign(a2).astype(np.int64), rr)
    _check_known(c1, c2, r, E, qe, fmt, width)
    K = _floor_sum(A1, A2, rr)
    f1 = A1 - K  # exact: a multiple of A1's ulp below 2 in magnitude
    s, e2 = two_sum(f1, A2)
    inexact = (s != 0) | (e2 != 0) | (rr != 0) | ((A1 == 0) & (a1 != 0))  # or past float64
    if width is None:
        F = np.minimum(np.maximum(s, 0.0), 1.0 - 2.0**-53)  # the nearest float64 of F
        return neg, K.astype(np.float64), qe, None, F, inexact
    with np.errstate(under="ignore"):
        D = _floor_sum(np.ldexp(f1, width), np.ldexp(A2, width), rr)
    return neg, K.astype(np.float64), qe, D, np.ldexp(D.astype(np.float64), -width), inexact


def split_fraction(v: Fraction, fmt, width):
    """``(negative, K, quantum exponent, probability)`` of a nonzero Fraction ``v``: with a
    width, the probability is ``D / 2**width``; without, the discarded part over the quantum."""
    a = abs(v)
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(-e, 0)) < (d << max(e, 0)):  # a < 2**e
        e -= 1
    qe = max(e, fmt.emin) - (fmt.precision - 1)
    scaled = a / Fraction(2) ** qe
    K = scaled.numerator // scaled.denominator
    frac = scaled - K
    if width is not None:
        D = (frac.numerator << width) // frac.denominator
        frac = Fraction(D, 2 ** width)
    return v < 0, K, qe, frac


def _check_known(c1, c2, r, E, qe, fmt, width):
    """A value known as ``c1 + c2`` plus the sign of a rest below half an ulp of ``c2`` (of
    ``c1`` where ``c2`` is 0: a quotient or root decided to float64) truncates like the exact
    value at every position down to that ulp. A finer position, ``2**(qe - width)``, reads bits
    the engine did not keep: refused."""
    if width is None:
        return
    known = np.spacing(np.where(c2 != 0, np.abs(c2), np.abs(c1)))
    _, ke = np.frexp(known)
    bad = (r != 0) & (qe - width < ke.astype(np.int64) - 1 + E.astype(np.int64))
    if bad.any():
        raise ValueError(
            f"stochastic rounding with {width} random bits into {fmt.name} reads bits of this "
            f"operation's exact value below those the engine settles for it (a quotient or "
            f"root is decided to float64); pass a smaller random_bits_width (at most "
            f"{max(1, 53 - fmt.precision)})")
