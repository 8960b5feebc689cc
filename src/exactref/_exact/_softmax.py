"""Softmax, log-softmax and logsumexp of rows of float64 values, as ExactArrays that round like the
exact values into every format of at most ``bits`` bits, in every mode (private).

For a row ``x`` with largest finite entry ``m`` and ``S = sum_j e**(x_j - m)``:

* ``softmax_i = e**(x_i - m) / S``;
* ``logsumexp = m + log(S) = m + log1p(T)``, ``T = S - 1`` (the entries equal to ``m``
  contribute exactly 1 each: no cancellation in ``S - 1``);
* ``log_softmax_i = (x_i - m) - log(S)``: both terms are <= 0, no cancellation.

Each value is enclosed in interval arithmetic on MPFR (:class:`._functions._Iv`'s contexts):
``e**(x_j - m)`` rounded down, its upper end the next number above where MPFR says the result
was inexact (one exponential per distinct ``x_j - m``, shared by every row that has it and by
every output of a row), ``S``'s ends by MPFR's correctly rounded sums (``fsum``) rounded down
and up, quotients and logarithms outward, at a working precision ``W = P + 24`` that doubles
(for the rows left undecided, Ziv's strategy) until each value's round-to-odd at ``P = bits + 2``
bits is decided (:func:`._functions._decide`). The differences ``x_j - m`` are exact: float64
where TwoSum says so, else in MPFR at 2200 bits.

Exact values (they would never decide, so they are found first)
--------------------------------------------------------------
By the Lindemann-Weierstrass theorem (Baker's form: for distinct algebraic ``a_1 .. a_n`` the
numbers ``e**a_1 .. e**a_n`` are linearly independent over the algebraic numbers), a sum
``sum_k c_k e**(a_k)`` with distinct rationals ``a_k`` and nonzero rational ``c_k`` is never 0
and, unless it is the single term ``c e**0``, never rational. Group the row's finite entries by
value (the ``-inf`` entries contribute nothing: ``e**-inf = 0``):

* ``softmax_i = 1 / sum_j e**(x_j - x_i)``: the sum has the term ``n_0 e**0`` (the entries equal
  to ``x_i``) and a term ``n_a e**a`` (``n_a >= 1``) for every other value: it is rational only
  when no finite entry differs from ``x_i``, and then it is ``1/k``, ``k`` the number of finite
  entries. The ``-inf`` entries' values are exactly ``+0``.
* ``logsumexp = r`` rational would mean ``e**r - sum_a n_a e**a = 0``: impossible unless the
  terms cancel, that is ``r`` is the only value and its count is 1: the row has exactly one
  entry above ``-inf``, and logsumexp is that entry.
* ``log_softmax_i = x_i - logsumexp`` is rational exactly when logsumexp is: one finite entry,
  whose value is ``0`` (``+0``); the ``-inf`` entries give ``-inf``.

Every other value is irrational and Ziv's loop ends; a row still undecided at ``2**15`` bits is
an exact case this argument missed, and raises an AssertionError naming it.

Special rows (NaN propagates; see docs/softmax.md for PyTorch's, which differ where its formula
gives NaN by accident):

* a NaN entry: every output NaN;
* every entry ``-inf`` (or no entry): softmax and log_softmax NaN (0/0: no limit), logsumexp
  ``-inf`` (``log 0``);
* ``+inf`` entries: logsumexp ``+inf``; softmax and log_softmax take their limit where it
  exists: one ``+inf`` entry gives 1 (log_softmax ``+0``) there and ``+0`` (``-inf``)
  elsewhere; two or more ``+inf`` entries have no limit (it depends on how they grow): NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._functions import _W0, _W_MAX, _context, _decide, _from_objects, _g, _round_fraction

__all__ = ["OPS", "RowExps", "evaluate_rows"]

OPS = ("softmax", "log_softmax", "logsumexp")
_NAN, _INF = math.nan, math.inf


@dataclass
class RowExps:
    """What the tolerance models read, per row of ``(M, K)`` inputs: ``m`` the largest finite
    entry (``-inf`` where none), ``lo``/``hi`` float64 bounds of ``e**(x_j - m)`` (0 for
    ``-inf`` entries; NaN in rows that are special: a NaN or ``+inf`` entry, or no finite
    one), ``regular`` the rows that are not special."""

    m: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    regular: np.ndarray


def _unique_rows(X):
    """Distinct rows (by bit pattern) and the inverse index."""
    M, K = X.shape
    if M <= 1 or K == 0:
        return X, np.arange(M)
    v = np.ascontiguousarray(X).view(np.dtype((np.void, 8 * K))).reshape(M)
    _, first, inv = np.unique(v, return_index=True, return_inverse=True)
    return X[first], inv.reshape(-1)


def _exact_differences(x, m):
    """``x - m`` per element (1-D float64 arrays, finite): float64 where exact (TwoSum's error
    is 0), else None (the caller takes MPFR's exact difference)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = x - m
        bb = s - x
        err = (x - (s - bb)) + (-m - bb)
    return s, np.isfinite(s) & (err == 0)


class _Exps:
    """``e**d`` enclosed at ``W`` bits for the distinct exact differences ``d``: ``lo`` rounded
    down, ``hi`` the next number above where ``lo`` is inexact."""

    def __init__(self, W):
        self.W = W
        self.D, self.U = _context(W, "D"), _context(W, "U")

    def pair(self, d):
        lo = self.D.exp(d)
        return lo, (lo if lo.rc == 0 else self.D.next_above(lo))


def _row_values(op, W, P, m, ds, elo, ehi, count_max):
    """One row's values at working precision ``W`` (a list; None where undecided): ``ds`` the
    exact differences ``x_j - m`` of the finite entries, ``elo``/``ehi`` their exponentials'
    ends, ``count_max`` how many equal ``m``."""
    D, U = _context(W, "D"), _context(W, "U")
    # every value here is irrational, so it lies strictly inside its enclosure: an end that is
    # a P-bit number (1/S of a row whose other terms are far below, m + log1p(tiny)) decides
    if op == "softmax":
        slo, shi = D.fsum(elo), U.fsum(ehi)
        return [_decide_strict(D.div(a, shi), U.div(b, slo), P)
                for a, b in zip(elo, ehi, strict=True)]
    rest = [i for i, d in enumerate(ds) if d != 0]
    extra = count_max - 1  # the other entries equal to m: exactly 1 each
    tlo = D.fsum([extra] + [elo[i] for i in rest])
    thi = U.fsum([extra] + [ehi[i] for i in rest])
    llo, lhi = D.log1p(tlo), U.log1p(thi)  # log S, S = 1 + T
    if op == "logsumexp":
        return [_decide_strict(D.add(m, llo), U.add(m, lhi), P)]
    return [_decide_strict(D.sub(d, lhi), U.sub(d, llo), P) for d in ds]


def _decide_strict(lo, hi, P):
    """:func:`._functions._decide` for a value known to lie strictly inside ``(lo, hi)`` (an
    irrational value between two rationals): an end that is a P-bit number decides as the
    values just inside it truncate."""
    got = _decide(lo, hi, P)
    if got is not None:
        return got
    g = _g()
    if g.is_zero(lo) or g.is_zero(hi) or (lo < 0) != (hi < 0) or not (
            g.is_finite(lo) and g.is_finite(hi)):
        return None
    Z = _context(P, "Z")
    a, b = Z.plus(lo), Z.plus(hi)  # truncations toward zero
    a_in, b_in = a.rc != 0, b.rc != 0
    positive = lo > 0
    if not a_in:  # values just above lo
        a, a_in = (a if positive else Z.next_above(a)), True
    if not b_in:  # values just below hi
        b, b_in = (Z.next_below(b) if positive else b), True
    if not (a_in and b_in and a == b):
        return None
    # a P-bit truncation with the sticky bit: a plus a tiny amount away from zero, truncated
    tiny = g.mul_2exp(g.mpfr(1 if positive else -1), g.get_exp(a) - P - 8)
    return Z.add(a, tiny)


def _special_row(op, x):
    """The values of a row with a NaN or +inf entry or no finite one (a list of floats), else
    None."""
    K = x.size
    if np.isnan(x).any():
        return [_NAN] * (1 if op == "logsumexp" else K)
    pinf = x == _INF
    if pinf.any():
        if op == "logsumexp":
            return [_INF]
        if np.count_nonzero(pinf) > 1:
            return [_NAN] * K  # no limit
        if op == "softmax":
            return [1.0 if p else 0.0 for p in pinf.tolist()]
        return [0.0 if p else -_INF for p in pinf.tolist()]
    if not np.isfinite(x).any():  # every entry -inf, or none
        return [-_INF] if op == "logsumexp" else [_NAN] * K
    return None


def _exact_row(op, x, m):
    """The values of a row whose results are rational (see the module's docstring), else
    None: values for the finite entries only (``-inf`` entries are placed by the caller)."""
    fin = x[np.isfinite(x)]
    k = fin.size
    if op == "softmax":
        if np.all(fin == m):
            return [Fraction(1, k)] * k
        return None
    if k == 1:
        return [float(m)] if op == "logsumexp" else [0.0]
    return None


def evaluate_rows(X, op: str, bits: int = 53, want_exps: bool = False):
    """``op`` (``"softmax"``, ``"log_softmax"``: one value per element; ``"logsumexp"``: one per
    row) of the rows of float64 ``X (M, K)`` as an ExactArray of shape ``(M, K)`` or ``(M,)``
    that rounds like the exact values into every format of at most ``bits`` bits in every
    mode; with ``want_exps``, also the :class:`RowExps` the tolerance models read.

    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = evaluate_rows(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -np.inf]]), "softmax")
    >>> ex.round(FORMATS["float32"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [0.0900305733084678..., 0.2447284758090973, 0.6652409434318542, 0.5, 0.5, 0.0]
    """
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; expected one of {', '.join(OPS)}")
    X = np.asarray(X, dtype=np.float64)
    M, K = X.shape
    P = bits + 2
    per_row = op != "logsumexp"
    Xu, inv = _unique_rows(X)
    Mu = Xu.shape[0]
    with np.errstate(invalid="ignore"):
        fin = np.isfinite(Xu)
        mu = np.where(fin, Xu, -np.inf).max(axis=1) if K else np.full(Mu, -np.inf)
    results: list = [None] * Mu  # per distinct row: list of values (finite entries or all)
    full = [False] * Mu  # whether results[r] covers every entry (special rows)
    todo = []
    for r in range(Mu):
        x = Xu[r]
        sp = _special_row(op, x)
        if sp is not None:
            results[r], full[r] = sp, True
            continue
        ex = _exact_row(op, x, mu[r])
        if ex is not None:
            results[r] = ex
        else:
            todo.append(r)
    # the exact differences x_j - m of the rows left, and one exponential per distinct one
    exps_lo = np.full((Mu, K), np.nan)
    exps_hi = np.full((Mu, K), np.nan)
    regular = np.array([not f for f in full], dtype=bool)
    ds_rows, e_rows = {}, {}
    if todo:
        rows = np.array(todo)
        Xt = Xu[rows]
        mt = np.broadcast_to(mu[rows][:, None], Xt.shape)
        ft = np.isfinite(Xt)
        s, ok = _exact_differences(np.where(ft, Xt, 0.0), np.where(ft, mt, 0.0))
        ok &= ft
        W = P + _W0
        ex = _Exps(W)
        distinct, where = np.unique(s[ok], return_inverse=True)
        pairs = [ex.pair(d) for d in distinct.tolist()]
        Z = _context(2200, "Z")
        flat_pos = np.flatnonzero(ok.reshape(-1)).tolist()
        owner = dict(zip(flat_pos, where.reshape(-1).tolist(), strict=True))
        svals = s.reshape(-1)
        for a, r in enumerate(todo):
            x = Xu[r]
            m = float(mu[r])
            ds, elo, ehi = [], [], []
            for j in np.flatnonzero(ft[a]).tolist():
                q = owner.get(a * K + j)
                if q is not None:
                    ds.append(float(svals[a * K + j]))
                    lo, hi = pairs[q]
                else:  # x_j - m not exact in float64
                    d = Z.sub(float(x[j]), m)
                    ds.append(d)
                    lo, hi = ex.pair(d)
                elo.append(lo)
                ehi.append(hi)
            ds_rows[r], e_rows[r] = ds, (elo, ehi)
        if want_exps:
            for a, r in enumerate(todo):
                elo, ehi = e_rows[r]
                cols = np.flatnonzero(ft[a])
                lo = np.array([float(v) for v in elo])
                hi = np.array([float(v) for v in ehi])
                exps_lo[r] = 0.0
                exps_hi[r] = 0.0
                exps_lo[r, cols] = np.maximum(np.nextafter(lo, -np.inf), 0.0)
                exps_hi[r, cols] = np.nextafter(hi, np.inf)
        for r in todo:
            x = Xu[r]
            ds = ds_rows[r]
            count_max = sum(1 for d in ds if d == 0)
            elo, ehi = e_rows[r]
            W = P + _W0
            while True:
                vals = _row_values(op, W, P, float(mu[r]), ds, elo, ehi, count_max)
                if all(v is not None for v in vals):
                    results[r] = vals
                    break
                W *= 2
                if W > _W_MAX:
                    raise AssertionError(
                        f"exactref could not decide {op} of the row {x.tolist()!r} with "
                        f"{_W_MAX} bits: an exact case the Lindemann-Weierstrass argument "
                        f"missed; please report it")
                ex = _Exps(W)
                pairs_w = [ex.pair(d) for d in ds]
                elo, ehi = [p[0] for p in pairs_w], [p[1] for p in pairs_w]
    if want_exps:
        for r in range(Mu):
            if results[r] is not None and not full[r] and r not in e_rows:
                x = Xu[r]  # an exact row: exp(0) = 1 at the max, the rest to compute
                _exact_exps(x, mu[r], exps_lo, exps_hi, r, P)
    # assemble: per distinct row, a value per output position
    n_out = K if per_row else 1
    flat = []
    for r in range(Mu):
        vals = results[r]
        if full[r] or not per_row:
            row = list(vals)
        else:
            row = []
            it = iter(vals)
            ninf = 0.0 if op == "softmax" else -_INF
            for v in Xu[r].tolist():
                row.append(next(it) if math.isfinite(v) else ninf)
        flat.extend(_as_object(v, P) for v in row)
    values = _from_objects(flat, P)
    idx = (inv[:, None] * n_out + np.arange(n_out)[None, :]).reshape(-1)
    exact = values.take(idx).exact((M, K) if per_row else (M,))
    if not want_exps:
        return exact
    return exact, RowExps(mu[inv], exps_lo[inv], exps_hi[inv], regular[inv])


def _exact_exps(x, m, lo_out, hi_out, r, P):
    """float64 bounds of ``e**(x_j - m)`` for a row answered in closed form."""
    W = P + _W0
    ex = _Exps(W)
    Z = _context(2200, "Z")
    lo_out[r] = 0.0
    hi_out[r] = 0.0
    for j, v in enumerate(x.tolist()):
        if math.isfinite(v):
            a, b = ex.pair(Z.sub(v, float(m)))
            lo_out[r, j] = max(float(np.nextafter(float(a), -np.inf)), 0.0)
            hi_out[r, j] = float(np.nextafter(float(b), np.inf))


def _as_object(v, P):
    """A value as :func:`._functions._from_objects` takes it."""
    if isinstance(v, Fraction):
        return _round_fraction(v, P)
    return v
