"""Stochastic rounding of exact values: the two neighbours, the exact probability, the r-bit rule.

The model, for a nonzero finite exact value ``v`` and a float format of precision ``p``:

* ``q = 2**(max(e, emin) - p + 1)`` is the quantum of the format at ``|v|`` (``e`` the exponent
  of ``|v|``'s leading bit; no upper exponent limit, so values past the largest finite one have
  a quantum too), ``K = floor(|v| / q)`` and the discarded part is ``|v| - K q``;
* the neighbours are ``down = K q`` and ``up = (K + 1) q`` (toward and away from zero, with
  ``v``'s sign); ``|v| = K q`` (a value the format holds) has the one neighbour ``down``;
* **with r random bits** (PTX's ``cvt.rs``: the random bits are added to the discarded bits and
  the sum is truncated, section 9.7.9.21 of the PTX ISA): ``D = floor((|v| - K q) 2**r / q)``
  is the discarded part truncated to its first r bits (what is below them is dropped, as the
  hardware drops nothing only because its source has no more bits), and the result is ``up``
  exactly where ``D + bits >= 2**r`` (the carry out of the r-bit addition);
  without bits, ``up`` has probability ``D / 2**r``, exactly;
* **ideal** (no width): ``up`` has probability ``(|v| - K q) / q``.

A chosen magnitude above the largest finite value overflows as under round-to-nearest
(``"ieee"``: an infinity, NaN in a format without one; ``"saturate"``: the largest finite value,
PTX's ``.satfinite``; ``"nan"``: NaN). NaN, infinities and exact zeros are encoded as the format
says and never round. Everything here is integer arithmetic on the exact value: the float64
lane (one float64 per element) scales by powers of two, which is exact; other elements take
Python integers.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._rounding import Rounding
from ._specials import overflow_values, special_values, zero_values

__all__ = ["MAX_WIDTH", "Neighbours", "neighbours"]

#: The widest random-bit count: ``D + bits`` stays below 2**63 (int64).
MAX_WIDTH = 62


class Neighbours:
    """Per element (flat float64 arrays of the format's values): ``down`` and ``up``,
    ``num`` (int64: ``D``, the numerator of the probability of ``up`` over ``2**width``; None
    for the ideal model), ``prob`` (float64: the probability of ``up``; exact for widths up to
    53, and for the ideal model where the exact value is a float64; else the nearest float64),
    ``width``."""

    def __init__(self, down, up, num, prob, width):
        self.down, self.up, self.num, self.prob, self.width = down, up, num, prob, width

    def choose(self, bits):
        """The r-bit rule: ``up`` where ``D + bits >= 2**width`` (flat int64 bits)."""
        carry = self.num + bits >= (np.int64(1) << np.int64(self.width))
        return np.where(carry, self.up, self.down)

    def exact_probability(self, i: int, ex=None, fmt=None) -> Fraction:
        """The probability of ``up`` at flat index ``i`` as a Fraction."""
        if self.num is not None:
            return Fraction(int(self.num[i]), 2 ** self.width)
        if self.down[i] == self.up[i] or ex is None:
            return Fraction(self.prob[i])
        v = ex.element(i)
        _, _, _, frac = _split_fraction(v, fmt, None)
        return frac


def neighbours(ex, fmt, rule: str, width: int | None) -> Neighbours:
    """The stochastic-rounding neighbours of the exact values ``ex`` (an ExactArray) in the
    float format ``fmt`` under overflow rule ``rule``, with ``width`` random bits (None: ideal).
    """
    n = ex.size
    down = np.zeros(n)
    up = np.zeros(n)
    num = np.zeros(n, dtype=np.int64) if width is not None else None
    prob = np.zeros(n)
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
    fast = regular & ~hard & (ex.c2 == 0) & (ex.r == 0) & (ex.E == 0)
    neg = np.zeros(n, dtype=bool)
    K = np.zeros(n)
    qe = np.zeros(n, dtype=np.int64)
    idx = np.flatnonzero(fast)
    if idx.size:
        neg[idx], K[idx], qe[idx], d, p_ = _split_float64(ex.c1[idx], fmt, width)
        prob[idx] = p_
        if num is not None:
            num[idx] = d
    for i in np.flatnonzero(regular & ~fast):
        v = ex.element(int(i))
        s, k, e, frac = _split_fraction(v, fmt, width)
        _check_known(ex, int(i), e, fmt, width)
        neg[i], K[i], qe[i] = s, float(k), e
        if num is not None:
            num[i] = int(frac * 2 ** width)
            prob[i] = float(Fraction(int(num[i]), 2 ** width))
        else:
            prob[i] = float(frac)
    idx = np.flatnonzero(regular)
    if idx.size:
        q = qe[idx].astype(np.int32)
        lo = np.ldexp(K[idx], q)
        with np.errstate(over="ignore"):
            hi = np.ldexp(K[idx] + 1.0, q)
        # exact values: an exact value the format holds has one neighbour
        exact = (num[idx] == 0) if num is not None else (prob[idx] == 0)
        hi = np.where(exact, lo, hi)
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


def _split_float64(c1, fmt, width):
    """``(negative, K, quantum exponent, D, probability)`` of exact float64 values ``c1``
    (nonzero, finite): power-of-two scalings and floors, every step exact."""
    p, emin = fmt.precision, fmt.emin
    a = np.abs(c1)
    _, ex = np.frexp(a)
    qe = np.maximum(ex.astype(np.int64) - 1, emin) - (p - 1)
    A = np.ldexp(a, (-qe).astype(np.int32))  # exact: |v| / q < 2**(p + 1)
    K = np.floor(A)
    F = A - K  # exact: the discarded part over q, in [0, 1)
    if width is None:
        return c1 < 0, K, qe, None, F
    D = np.floor(np.ldexp(F, width))  # exact: the first `width` discarded bits
    return c1 < 0, K, qe, D.astype(np.int64), np.ldexp(D, -width)


def _split_fraction(v: Fraction, fmt, width):
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


def _check_known(ex, i: int, qe: int, fmt, width):
    """An element known as ``c1 + c2`` plus the sign of a remainder below half an ulp of ``c2``
    (of ``c1`` where ``c2`` is 0: a quotient or root decided to float64) truncates like the
    exact value at every position down to that ulp (the surrogate ``ExactArray.element`` sits
    on the remainder's side of ``c1 + c2`` within it). A finer position, ``2**(qe - width)``,
    reads bits the engine did not keep: refused."""
    if width is None or i in ex.hard or ex.r[i] == 0:
        return
    c1, c2 = float(ex.c1[i]), float(ex.c2[i])
    _, e = np.frexp(np.spacing(abs(c2) if c2 != 0 else abs(c1)))
    if qe - width < int(e) - 1 + int(ex.E[i]):
        raise ValueError(
            f"stochastic rounding with {width} random bits into {fmt.name} reads bits of this "
            f"operation's exact value below the {fmt.precision + width} the engine settles "
            f"for it (a quotient or root is decided to float64); pass a smaller "
            f"random_bits_width (at most {max(1, 53 - fmt.precision)})")
