"""Cross-entropy losses of rows of float64 logits, as ExactArrays that round like the exact values
into every format of at most ``bits`` bits, in every mode (private).

Every form of ``cross_entropy`` (class indices or probabilities, label smoothing, weights,
reductions) is, per row ``r`` of logits ``x_r`` (its classes), a loss

    ``loss_r = -sum_c k_rc log_softmax(x_r)_c = a_r log S_r - b_r``

with rational coefficients ``k_rc`` (weights, targets, smoothing), ``m_r`` the row's largest
finite entry, ``d_rc = x_rc - m_r``, ``S_r = sum_c e**d_rc``, ``a_r = sum_c k_rc`` and
``b_r = sum_c k_rc d_rc``; and each output is ``(sum_{r in o} loss_r) / D_o`` (``D_o = 1``
but for the mean). The caller (``linalg/_cross_entropy.py``) gives ``a_r`` and ``b_r`` exactly
(Fractions) and the signs of the coefficients on the entries whose log-softmax is ``-inf``.

Exact values
------------
Rows with the same multiset of finite entries have the same ``S``: they are grouped and their
``a_r`` added, so an output is ``(Q + sum_g A_g log S_g) / D`` with distinct ``S_g > 1`` (a row
with one finite entry has ``S = 1``, ``log S = 0``) and rational ``Q``, ``A_g != 0``, ``D``.

* No group left: the value is the rational ``Q / D``, rounded exactly.
* Every ``A_g`` of one sign: the value is irrational (docs/cross_entropy.md, "Exact values":
  with ``t = e**(1/q)``, ``q`` a common denominator of every ``d``, a product of the ``S_g``'s
  powers is a Laurent polynomial in ``t`` with positive coefficients and at least two terms,
  which no single power ``t**k = e**(rational)`` equals, ``t`` being transcendental), so it
  lies strictly inside every enclosure and Ziv's loop ends.
* Both signs: the logarithms may cancel exactly (``2 log(1 + t) - log(1 + 2t + t**2) = 0``
  for rows ``[0, -1]`` twice and ``[0, -1, -1, -2]``, in units of ``1/q``): Ziv's loop runs to
  ``2**15`` bits and a value still undecided raises :class:`UndecidedLoss`.

Each ``log S_g`` is enclosed as ``log1p(T)`` (``T`` the sum of ``e**d`` below the maximum plus
one per other entry at the maximum: no cancellation) in MPFR interval arithmetic, one
exponential per distinct difference, at a working precision ``W = P + 24`` that doubles for
the outputs left undecided (Ziv's strategy) until the round-to-odd value at ``P = bits + 2``
bits is decided.

Specials (NaN propagates from any row that counts; a coefficient of 0 contributes 0, even on a
``-inf`` log-softmax: the ``0 log 0 = 0`` of cross-entropy): a row's loss is NaN when its
log-softmax is (a NaN entry, two ``+inf`` entries, no finite entry), ``+inf`` (``-inf``) when a
positive (negative) coefficient meets a ``-inf`` log-softmax, NaN when both do; outputs add
them by IEEE's rules and divide by ``D`` (``x / 0`` is ``±inf``, ``0 / 0`` NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._mpfr import (
    _W0,
    _W_MAX,
    _context,
    _decide,
    _decide_strict,
    _from_objects,
    _g,
    _round_fraction,
)

__all__ = ["LossRows", "evaluate_losses", "UndecidedLoss", "row_maxima"]

_NAN, _INF = math.nan, math.inf


class UndecidedLoss(ArithmeticError):
    """A loss whose logarithms carry coefficients of both signs stayed undecided at
    ``2**15`` bits: it may be exactly a P-bit number (the logarithms cancel)."""


@dataclass
class LossRows:
    """The losses' data, per row of ``X (R, C)``: ``a``, ``b`` (Fractions, see the module
    docstring; 0 for rows that do not count), ``counts`` whether the row counts (not an ignored
    target), ``pos``/``neg`` whether a positive/negative coefficient meets a ``-inf``
    log-softmax, ``owner`` the output the row belongs to; per output ``D`` (a Fraction)."""

    X: np.ndarray
    a: list
    b: list
    counts: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    owner: np.ndarray
    D: list


def row_maxima(X):
    """``(m, kind)`` per row: the largest finite entry (0.0 where none) and the row's kind:
    0 regular (a finite entry, no NaN, no ``+inf``), 1 one ``+inf`` entry and no NaN (its
    log-softmax ``+0`` there, ``-inf`` elsewhere), 2 NaN log-softmax (a NaN entry, two
    ``+inf``, or no finite entry)."""
    X = np.asarray(X, dtype=np.float64)
    R, C = X.shape
    fin = np.isfinite(X)
    with np.errstate(invalid="ignore"):
        m = np.where(fin, X, -np.inf).max(axis=1) if C else np.full(R, -np.inf)
    npinf = np.count_nonzero(X == _INF, axis=1)
    nan = np.isnan(X).any(axis=1)
    kind = np.where(nan | (npinf > 1), 2, np.where(npinf == 1, 1, 0))
    kind = np.where((kind == 0) & ~fin.any(axis=1), 2, kind)
    return np.where(np.isfinite(m), m, 0.0), kind


class _Exps:
    """``e**d`` enclosed at ``W`` bits, once per distinct difference ``d`` of a call: ``(lo,
    hi)``, ``lo`` rounded down, ``hi`` the next number above where ``lo`` is inexact."""

    def __init__(self):
        self.cache: dict = {}

    def pairs(self, W, ds):
        D = _context(W, "D")
        out = []
        for d in ds:
            key = (W, d)
            got = self.cache.get(key)
            if got is None:
                lo = D.exp(d)
                got = (lo, lo if lo.rc == 0 else D.next_above(lo))
                self.cache[key] = got
            out.append(got)
        return out


def _log_sum(D, U, W, ds, exps):
    """``log S`` enclosed at ``W`` bits: ``(lo, hi)``; ``ds`` the exact differences (floats or
    MPFR values) of the finite entries, 0 at the maximum."""
    below = [d for d in ds if d != 0]
    extra = len(ds) - len(below) - 1
    pairs = exps.pairs(W, below)
    los = [p[0] for p in pairs]
    his = [p[1] for p in pairs]
    tlo = D.fsum([extra] + los)
    thi = U.fsum([extra] + his)
    return D.log1p(tlo), U.log1p(thi)


def _differences(x, m):
    """The exact differences ``x_j - m`` of a row's finite entries: float64 where exact, else
    MPFR at 2200 bits (every float64 difference is exact there)."""
    fin = x[np.isfinite(x)]
    with np.errstate(over="ignore", invalid="ignore"):
        s = fin - m
        bb = s - fin
        err = (fin - (s - bb)) + (-m - bb)
    Z = _context(2200, "Z")
    return [float(v) if ok else Z.sub(float(f), float(m))
            for v, ok, f in zip(s.tolist(), (np.isfinite(s) & (err == 0)).tolist(),
                                fin.tolist(), strict=True)]


@dataclass
class _Output:
    """One output's exact form: ``(Q + sum_g A_g log S_g) / D``; ``groups`` a list of
    ``(A_g, ds_g)``."""

    Q: Fraction
    D: Fraction
    groups: list

    def enclose(self, W, exps):
        g = _g()
        D, U = _context(W, "D"), _context(W, "U")
        los, his = [], []
        for A, ds in self.groups:
            llo, lhi = _log_sum(D, U, W, ds, exps)
            q = g.mpq(A.numerator, A.denominator)
            if A > 0:
                los.append(D.mul(llo, q))
                his.append(U.mul(lhi, q))
            else:
                los.append(D.mul(lhi, q))
                his.append(U.mul(llo, q))
        Q = g.mpq(self.Q.numerator, self.Q.denominator)
        lo, hi = D.add(D.fsum(los), Q), U.add(U.fsum(his), Q)
        Dq = g.mpq(self.D.numerator, self.D.denominator)
        if self.D > 0:
            return D.div(lo, Dq), U.div(hi, Dq)
        return D.div(hi, Dq), U.div(lo, Dq)

    @property
    def irrational(self) -> bool:
        signs = {A > 0 for A, _ in self.groups}
        return len(signs) == 1


def _special_sum(nan, pos, neg):
    """IEEE's sum of the rows' special parts: NaN, ``±inf`` or None (finite)."""
    if nan or (pos and neg):
        return _NAN
    if pos:
        return _INF
    if neg:
        return -_INF
    return None


def _divide_special(v, D: Fraction):
    """``v / D`` for ``v`` NaN or ``±inf`` (``D = 0`` taken as +0, IEEE's division)."""
    if v != v:
        return v
    return v if D >= 0 else -v


def _row_text(x) -> str:
    items = x.tolist()
    if len(items) <= 8:
        return repr(items)
    return "[" + ", ".join(map(repr, items[:8])) + f", ... ({len(items)} entries)]"


def evaluate_losses(rows: LossRows, n_out: int, bits: int = 53):
    """The outputs (``n_out`` of them) of :class:`LossRows` as an ExactArray of shape
    ``(n_out,)`` rounding like the exact values into every format of at most ``bits`` bits in
    every mode.

    >>> from fractions import Fraction as F
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> X = np.array([[0.0, 0.0], [1.0, -np.inf]])
    >>> rows = LossRows(X, [F(1), F(1)], [F(0), F(0)], np.array([True, True]),
    ...                 np.zeros(2, bool), np.zeros(2, bool), np.array([0, 1]), [F(1), F(1)])
    >>> ex = evaluate_losses(rows, 2)
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()  # log 2, 0
    [0.6931471805599453, 0.0]
    """
    X = rows.X
    R = X.shape[0]
    P = bits + 2
    m, kind = row_maxima(X)
    Q = [Fraction(0)] * n_out
    nan = [False] * n_out
    pos = [False] * n_out
    neg = [False] * n_out
    groups: list = [{} for _ in range(n_out)]  # per output: key -> [A, ds]
    for r in range(R):
        if not rows.counts[r]:
            continue
        o = int(rows.owner[r])
        if kind[r] == 2:
            nan[o] = True
            continue
        pos[o] |= bool(rows.pos[r])
        neg[o] |= bool(rows.neg[r])
        if kind[r] == 1:  # the one +inf entry's log-softmax is 0: no finite part
            continue
        a, b = rows.a[r], rows.b[r]
        Q[o] -= b
        if a == 0:
            continue
        x = X[r]
        fin = np.sort(x[np.isfinite(x)])
        if fin.size == 1:  # log S = log 1 = 0
            continue
        key = fin.tobytes()
        got = groups[o].get(key)
        if got is None:
            groups[o][key] = [a, r]
        else:
            got[0] += a
    results: list = [None] * n_out
    todo = []
    for o in range(n_out):
        D = rows.D[o]
        sp = _special_sum(nan[o], pos[o], neg[o])
        if sp is not None:
            results[o] = _divide_special(sp, D)
            continue
        gs = [(A, r) for A, r in groups[o].values() if A != 0]
        if not gs:
            num = Q[o]
            if D == 0:
                results[o] = _NAN if num == 0 else math.copysign(_INF, num)
            elif num == 0:
                results[o] = 0.0
            else:
                results[o] = _round_fraction(num / D, P)
            continue
        if D == 0:  # a nonzero (irrational or undecided) numerator over 0
            out = _Output(Q[o], Fraction(1), [(A, _differences(X[r], m[r])) for A, r in gs])
            results[o] = ("sign", out)
            todo.append(o)
            continue
        results[o] = _Output(Q[o], D, [(A, _differences(X[r], m[r])) for A, r in gs])
        todo.append(o)
    exps = _Exps()
    for o in todo:
        item = results[o]
        sign_only = isinstance(item, tuple)
        out = item[1] if sign_only else item
        W = P + _W0
        while True:
            lo, hi = out.enclose(W, exps)
            if sign_only:
                got = (_INF if lo > 0 else -_INF) if (lo > 0 or hi < 0) else None
            elif out.irrational:
                got = _decide_strict(lo, hi, P)
            else:
                got = _decide(lo, hi, P)
            if got is not None:
                results[o] = got
                break
            W *= 2
            if W > _W_MAX:
                rows_text = "; ".join(_row_text(X[r]) for r in range(R)
                                      if rows.counts[r] and int(rows.owner[r]) == o)[:400]
                raise UndecidedLoss(
                    f"cross_entropy: output {o} is still undecided at {_W_MAX} bits: its "
                    f"logarithms carry coefficients of both signs (negative weights or "
                    f"targets) and may cancel exactly (rows {rows_text}). Use nonnegative "
                    f"weights and targets, or compute this loss in closed form")
    return _from_objects(results, P).exact((n_out,))
