"""Exact row sums by the compiled superaccumulator (:mod:`._superacc`), in the forms the long
sums hand on: :class:`~._engine.ExactArray` rows for :func:`~._longsum.rowsum_exact` and
Python integers for :func:`~._longsum.int_rowsums`. Exact, so the same values as the numpy
paths there (digits, ExtractVector); those call in here where :func:`superacc_rows` says so.
"""

from __future__ import annotations

import numpy as np

from . import _superacc
from ._engine import ExactArray
from ._longsum import _finish, _zero_signs_rows, put_specials

__all__ = ["superacc_rows", "rowsum_superacc", "int_rowsums_superacc", "from_chunks"]

_SUPERACC_ROW = 128  # rows at least this long take the compiled superaccumulator (measured:
# at 64 it is as fast as the digits, at 256 four times faster, at 512 five) ...
_SUPERACC_MIN = 1 << 16  # ... in sums of this many elements at least: below, the digits take
# a few milliseconds, less than loading numba (about a second, once per process)


def superacc_rows(m: int, k: int) -> bool:
    """Whether exact row sums of ``m`` rows of ``k`` take the compiled superaccumulator."""
    return m > 0 and k >= _SUPERACC_ROW and m * k >= _SUPERACC_MIN and _superacc.available()


def rowsum_superacc(X, m, k) -> ExactArray:
    """:func:`rowsum_exact` by the compiled superaccumulator (:mod:`._superacc`), row by row:
    exact, so the same values as the numpy paths; one pass over the data, specials included."""
    small, special, low = _superacc.exact_chunks(X)
    ex = from_chunks(small, low)
    _zero_signs_rows(ex, X, k)
    if special.any() or np.isnan(special).any():
        put_specials(ex, special)
    return ex


def from_chunks(small, low) -> ExactArray:
    """An ExactArray of the superaccumulator's rows (``sum_j small[r, j] 2**(32 j + low)``),
    vectorized: negative rows negated digit by digit (two's complement, exact), the magnitudes'
    32-bit digits taken as levels (highest first, ``beta = 32``) by :func:`_finish`, the signs
    put back (rounding is symmetric: ``c1``, ``c2`` and ``r`` change sign together)."""
    m, C = small.shape
    d = small  # modified in place (the caller's scratch)
    neg = d[:, -1] < 0
    used = np.flatnonzero(d.any(axis=0))
    bottom = int(used[0]) if used.size else 0  # below it every row's chunks are 0
    if neg.any():  # -V = (-top - 1) 2**(32 (C-1)) + sum (2**32 - 1 - d_j) 2**(32 j) + 1, from
        # the bottom chunk up (below it the digits and the +1's carry cancel: zeros)
        dn = d[neg, bottom:]
        dn[:, :-1] = 0xFFFFFFFF - dn[:, :-1]
        dn[:, -1] = -dn[:, -1] - 1
        dn[:, 0] += 1
        for c in range(dn.shape[1] - 1):
            carry = dn[:, c] >> 32
            if not carry.any():
                break
            dn[:, c] -= carry << 32
            dn[:, c + 1] += carry
        d[neg, bottom:] = dn
        used = np.flatnonzero(d.any(axis=0))
    top = int(used[-1]) if used.size else 0  # the chunks some row needs: two or three, often
    levels = [d[:, j].astype(np.float64) for j in range(top, bottom - 1, -1)]  # exact: < 2**32
    base = np.full(m, low + 32 * top, np.int64)
    ex = _finish(levels, base, 32, (m,))
    flip = np.where(neg, -1.0, 1.0)
    ex.c1 *= flip
    ex.c2 *= flip
    ex.r = (ex.r * flip).astype(np.int8)
    for i in list(ex.hard):
        if neg[i]:
            ex.hard[i] = -ex.hard[i]
    return ex


def int_rowsums_superacc(X):
    """:func:`~._longsum.int_rowsums` by the superaccumulator: ``(V, e)``, Python ints (an
    object array, each odd or 0) and an int64 array."""
    sums = _superacc.exact_sums(X)
    V = np.empty(len(sums), dtype=object)
    V[:] = [v for v, _, _ in sums]
    return V, np.array([e for _, e, _ in sums], dtype=np.int64)
