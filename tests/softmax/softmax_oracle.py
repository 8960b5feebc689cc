"""An independent oracle for softmax, log_softmax and logsumexp over the last axis.

It shares no code with exactref: the values come from **mpmath** (exactref uses MPFR through
gmpy2) at 300 bits and more, the special rows and exact cases are written here from the
definitions, and the proxies and their rounding are ``functions_oracle``'s (a Fraction in the
middle of the 62-bit cell holding the value, decided with a margin; ``base + delta`` evaluated
as such, so a softmax of ``1 - 1e-300`` or a logsumexp of ``m + tiny`` needs no huge
precision).

Per row with ``c`` entries equal to its largest finite entry ``m`` and ``T = sum of
e**(x_j - m)`` over the finite entries below ``m``:

* ``softmax_i = e**(x_i - m) / (c + T)``; at the largest entries ``1/c - T / (c (c + T))``;
* ``logsumexp = m + log(c) + log1p(T / c)``;
* ``log_softmax_i = (x_i - m) - log(c) - log1p(T / c)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from functions_oracle import _cell_midpoint, _resolve, _Sum, round_exact
from mpmath import mpf

NAN, INF = math.nan, math.inf


def _specials(op, row):
    if any(v != v for v in row):
        return [NAN] * (1 if op == "logsumexp" else len(row))
    n_pinf = sum(1 for v in row if v == INF)
    if n_pinf:
        if op == "logsumexp":
            return [INF]
        if n_pinf > 1:
            return [NAN] * len(row)
        if op == "softmax":
            return [1.0 if v == INF else 0.0 for v in row]
        return [0.0 if v == INF else -INF for v in row]
    if not any(math.isfinite(v) for v in row):
        return [-INF] if op == "logsumexp" else [NAN] * len(row)
    return None


def _bits(q: Fraction) -> int:
    """The significant bits of a dyadic rational."""
    n = abs(q.numerator)
    return (n >> ((n & -n).bit_length() - 1)).bit_length() if n else 0


def _resolve_plus(base: Fraction, delta):
    """The proxy of ``base + delta()``. Where ``base`` has more bits than the 62-bit cells
    (``x_i - m`` of far-apart float64 values), it lies strictly inside a cell (at least
    ``2**-2100`` of it away from the edges), and a ``delta`` below that cannot move it: the
    sum is evaluated at 2400 bits, where ``base`` is exact."""
    if _bits(base) <= 62:
        return _resolve(_Sum(base, delta))
    with mpmath.workprec(2400):
        v = mpf(base.numerator) / base.denominator + delta()
        got = _cell_midpoint(v, 2300)
    assert got is not None, "a long base on a cell's edge"
    return got


def row_values(op, row):
    """Proxies (floats or Fractions) of ``op`` over one row (a list of floats)."""
    sp = _specials(op, row)
    if sp is not None:
        return sp
    fin = [v for v in row if math.isfinite(v)]
    m = max(fin)
    c = sum(1 for v in fin if v == m)
    below = [Fraction(v) - Fraction(m) for v in fin if v != m]  # exact differences

    def T():
        return mpmath.fsum(mpmath.exp(mpf(d.numerator) / d.denominator) for d in below)

    def log_s():  # log(c + T), without cancellation
        return mpmath.log(c) + mpmath.log1p(T() / c)

    if op == "logsumexp":
        if len(fin) == 1:
            return [m]
        return [_resolve_plus(Fraction(m), log_s)]
    out = []
    for v in row:
        if not math.isfinite(v):
            out.append(0.0 if op == "softmax" else -INF)
            continue
        d = Fraction(v) - Fraction(m)
        if op == "softmax":
            if not below:
                out.append(Fraction(1, c))
            elif d == 0:
                out.append(_resolve(_Sum(Fraction(1, c), lambda: -T() / (c * (c + T())))))
            else:
                def val(d=d):
                    return mpmath.exp(mpf(d.numerator) / d.denominator) / (c + T())
                out.append(_resolve(_Sum(0, val)))
        else:
            if len(fin) == 1:
                out.append(0.0)
            else:
                out.append(_resolve_plus(d, lambda: -log_s()))
    return out


def expected(op, X, fmt, mode, rule=None):
    """``op`` over the last axis of ``X`` (float64 values of ``fmt``), rounded once into
    ``fmt`` in ``mode``: float64 values of the output's shape."""
    X = np.asarray(X, dtype=np.float64)
    rows = X.reshape(-1, X.shape[-1]) if X.ndim else X.reshape(1, 1)
    with mpmath.workprec(300):
        vals = [v for r in rows.tolist() for v in row_values(op, r)]
    out = round_exact(vals, fmt, mode, rule)
    shape = X.shape[:-1] if op == "logsumexp" else X.shape
    return np.asarray(out, dtype=np.float64).reshape(shape)
