"""The gradients of softmax and log_softmax of rows of float64 values, as ExactArrays that round
like the exact values into every format of at most ``bits`` bits, in every mode (private).

For a row ``x`` with largest finite entry ``m``, ``e_j = e**(x_j - m)``, ``S = sum_j e_j``,
``y = softmax(x) = e / S`` and an output gradient ``g``:

* softmax: ``dx_i = y_i (g_i - sum_j g_j y_j) = e_i (g_i S - T) / S**2``, ``T = sum_j g_j e_j``;
* log_softmax: ``dx_i = g_i - y_i G``, ``G = sum_j g_j`` (every entry of the row).

Each value is enclosed in interval arithmetic on MPFR, on the forward's machinery
(:mod:`._softmax`): ``e**(x_j - m)`` rounded down and its next number above, ``S``, ``T`` and
``G`` by MPFR's correctly rounded sums rounded down and up, the products, differences and
quotients outward, at a working precision ``W = P + 24`` that doubles for the rows left
undecided (Ziv's strategy) until each value's round-to-odd at ``P = bits + 2`` bits is decided.

Exact values (they would never decide, so they are found first)
--------------------------------------------------------------
By the Lindemann-Weierstrass theorem (Baker's form, see :mod:`._softmax`), a sum
``sum_k c_k e**(a_k)`` with distinct rationals ``a_k`` and rational ``c_k`` vanishes only when
every ``c_k`` is 0, and is rational only when it is ``c e**0``. Group the finite entries by
value ``a`` (``n_a`` entries, their gradients' mean ``mu_a``):

* softmax: ``g_i S - T = sum_a n_a (g_i - mu_a) e**a`` is 0 exactly when every group's mean
  equals ``g_i``. So ``dx_i = 0`` iff ``g_i = mu_a`` for every group (a "balanced" row, all
  means equal to ``r``, and ``g_i = r``). A nonzero ``dx_i`` is rational only in a row of one
  group: ``dx_i S**2 = e_i (g_i S - T)`` with ``dx_i = q`` rational gives
  ``q sum_{a,b} n_a n_b e**(a+b) = sum_a n_a (g_i - mu_a) e**(d_i + a)``; with two groups or
  more the term ``e**(2 a_min)`` (``e**0`` where ``d_i = a_min``) has the coefficient
  ``q n**2`` alone, so ``q = 0``. One group (every finite entry equal, ``k`` of them):
  ``dx_i = (g_i - mean g) / k``.
* log_softmax: ``g_i - y_i G`` is rational iff ``y_i G`` is: ``G = 0`` (then ``dx_i = g_i``),
  or ``y_i = 1/k`` rational (every finite entry equal: ``dx_i = g_i - G / k``).

An exact zero is +0, and -0 when rounding toward negative: the sign IEEE 754 gives an exact
zero sum (the gradient is a difference, ``g_i - r``, that cancels).

Special values
--------------
Rows whose forward value is NaN (a NaN entry, no entry above ``-inf``, two ``+inf`` entries)
have NaN gradients. A row with one ``+inf`` entry takes the forward's limit, ``y`` one there
and 0 elsewhere, and its gradient is the formula at that ``y`` (softmax: 0 everywhere;
log_softmax: ``g_p - G`` there, ``g_j`` elsewhere: the limits of the gradient). A NaN or
infinite ``g`` gives the formula evaluated in IEEE arithmetic on the exact ``y`` (every
``y_j > 0`` at a finite entry, exactly 0 at a ``-inf`` one): NaN or ±inf for every entry of
the row (``0 * inf`` is NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._mpfr import _W0, _W_MAX, _context, _decide_strict, _from_objects, _g, _Values
from ._softmax import _as_object, _exact_differences, _put_decided, _row_text

__all__ = ["GRADIENTS", "Gradient", "evaluate_backward", "row_kinds"]

_NAN = math.nan


def row_kinds(X: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Per row of ``(M, K)`` inputs: ``0`` regular (a finite maximum, no NaN or ``+inf``
    entry, every ``g`` finite), ``1`` special (every gradient NaN, ±inf or the one-``+inf``
    limit)."""
    with np.errstate(invalid="ignore"):
        bad = np.isnan(X).any(axis=1) | (X == np.inf).any(axis=1) | \
            ~np.isfinite(X).any(axis=1) | ~np.isfinite(G).all(axis=1)
    return bad.astype(np.int8)


def _ieee_row(fn, x, g):
    """The gradients of a row that is not regular (a list of floats and Fractions; exact
    zeros as ``0.0``). ``y`` stands in by ``1`` (positive, or the one ``+inf`` entry's limit)
    and ``0`` (a ``-inf`` entry, or beside the ``+inf``); finite gradients stand in by 0 to
    find the specials, then an all-finite outcome is computed exactly."""
    K = x.size
    if np.isnan(x).any():
        return [_NAN] * K
    pinf = x == np.inf
    if np.count_nonzero(pinf) > 1 or not (np.isfinite(x) | pinf).any():
        return [_NAN] * K
    yv = (pinf if pinf.any() else np.isfinite(x)).astype(np.float64)
    gs = np.where(np.isfinite(g), 0.0, g)
    with np.errstate(invalid="ignore", over="ignore"):
        out = fn.ieee(gs, yv)
    if not np.isfinite(out).all():  # any non-finite g: every entry NaN or ±inf
        return [float(v) for v in out.tolist()]
    # one +inf entry, finite g: the limit y = one-hot
    return fn.limit(g, int(np.flatnonzero(pinf)[0]))


def _softmax_limit(g, p):
    return [0.0] * g.size


def _log_softmax_limit(g, p):
    vals = [float(v) for v in g.tolist()]
    vals[p] = -sum((Fraction(v) for j, v in enumerate(vals) if j != p), Fraction(0))
    return vals


def _exact_sum(vals) -> Fraction:
    return sum(map(Fraction, vals), Fraction(0))


def _softmax_exact(x, g, fin):
    """``(values, numeric)``: the exact values of a regular softmax row (``None`` where
    irrational) and whether any is left."""
    K = x.size
    vals: list = [0.0] * K  # -inf entries: y = 0 exactly, dx = 0
    xf, gf = x[fin], g[fin]
    idx = np.flatnonzero(fin)
    if np.all(xf == xf[0]):  # one group: dx_i = (g_i - mean) / k
        k = xf.size
        mean = _exact_sum(gf.tolist()) / k
        for i, gi in zip(idx.tolist(), gf.tolist(), strict=True):
            q = (Fraction(gi) - mean) / k
            vals[i] = 0.0 if q == 0 else q
        return vals, False
    r = _balanced(xf, gf)
    for i, gi in zip(idx.tolist(), gf.tolist(), strict=True):
        vals[i] = 0.0 if (r is not None and Fraction(gi) == r) else None
    return vals, any(v is None for v in vals)


def _balanced(xf, gf):
    """The common mean ``r`` of the gradients' groups (entries of equal ``x``), or None
    where two groups' means differ."""
    order = np.argsort(xf, kind="stable")
    xs, gs = xf[order], gf[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    if starts.size == xs.size:  # every group one entry: balanced iff every g is equal
        return Fraction(float(gs[0])) if np.all(gs == gs[0]) else None
    counts = np.diff(np.r_[starts, xs.size])
    with np.errstate(over="ignore", invalid="ignore"):
        means = np.add.reduceat(gs, starts) / counts
        spread = np.max(means) - np.min(means)
        scale = np.max(np.abs(gs)) * xs.size * 2.0**-48
    if np.isfinite(spread) and spread > scale:  # far apart: not balanced, surely
        return None
    bounds = np.r_[starts, xs.size].tolist()
    r = None
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        mu = _exact_sum(gs[a:b].tolist()) / (b - a)
        if r is None:
            r = mu
        elif mu != r:
            return None
    return r


def _log_softmax_exact(x, g, fin):
    K = x.size
    vals: list = [None] * K
    for j in np.flatnonzero(~fin).tolist():  # y_j = 0: dx_j = g_j
        vals[j] = float(g[j])
    try:
        Gf = math.fsum(g.tolist())  # correctly rounded: 0 iff the exact sum is
    except OverflowError:
        Gf = float(_exact_sum(g.tolist()))
    xf = x[fin]
    idx = np.flatnonzero(fin).tolist()
    if Gf == 0:
        for i in idx:
            vals[i] = float(g[i])
    elif np.all(xf == xf[0]):
        Gk = _exact_sum(g.tolist()) / xf.size
        for i in idx:
            q = Fraction(float(g[i])) - Gk
            vals[i] = 0.0 if q == 0 else q
    return vals, any(v is None for v in vals)


class _Row:
    """One regular row left to the interval evaluation: its exact differences ``ds``, the
    finite entries' gradients, all the row's gradients, the positions to evaluate."""

    def __init__(self, r, x, g, fin, todo):
        self.r = r
        self.cols = np.flatnonzero(fin)
        self.todo = todo  # positions (in the row) of the values to decide
        m = float(np.max(x[fin]))
        s, ok = _exact_differences(x[fin], np.full(self.cols.size, m))
        Z = _context(2200, "Z")
        self.ds = [float(v) if good else Z.sub(float(xv), m)
                   for v, good, xv in zip(s.tolist(), ok.tolist(), x[fin].tolist(),
                                          strict=True)]
        self.gf = g[fin].tolist()
        self.gall = g.tolist()
        self.where = {int(c): k for k, c in enumerate(self.cols.tolist())}


class _ExpCache:
    """``e**d`` at ``W`` bits, rounded down and the next number above (exact at ``d = 0``),
    once per distinct difference."""

    def __init__(self, W):
        self.D = _context(W, "D")
        self.memo = {}

    def pair(self, d):
        got = self.memo.get(d)
        if got is None:
            lo = self.D.exp(d)
            got = (lo, lo if lo.rc == 0 else self.D.next_above(lo))
            self.memo[d] = got
        return got


def _grouped_ends(fn, row: _Row, W, cache: _ExpCache):
    """The retries' enclosures: the numerator as ``sum_a c_a e**a`` over the distinct
    differences ``a`` with exact rational coefficients (softmax: ``c_a = n_a g_i - sum_{j in a}
    g_j``; log_softmax: ``n_a g_i - [a = d_i] G``), so the terms that cancel exactly (the
    maximum's group, ``e**0 = 1``, against ``T``) are gone before any rounding, and a row whose
    other terms are astronomically small decides: softmax ``e_i N / S**2``, log_softmax
    ``N / S``."""
    g2 = _g()
    D, U = _context(W, "D"), _context(W, "U")
    groups: dict = {}
    for k, d in enumerate(row.ds):
        groups.setdefault(d, []).append(k)
    keys = list(groups)
    pairs = {a: cache.pair(a) for a in keys}
    n = {a: len(groups[a]) for a in keys}
    gsum = {a: sum((Fraction(row.gf[k]) for k in groups[a]), Fraction(0)) for a in keys}
    Slo = D.fsum([D.mul(n[a], pairs[a][0]) for a in keys])
    Shi = U.fsum([U.mul(n[a], pairs[a][1]) for a in keys])
    G = sum(map(Fraction, row.gall), Fraction(0))
    los, his = [], []
    for i in row.todo:
        k = row.where[i]
        gi, di = Fraction(row.gf[k]), row.ds[k]
        tl, th = [], []
        for a in keys:
            c = n[a] * gi - fn.coefficient(gsum[a], G, a == di)
            if c == 0:
                continue
            q = g2.mpq(c.numerator, c.denominator)
            lo, hi = pairs[a]
            tl.append(D.mul(q, lo if c > 0 else hi))
            th.append(U.mul(q, hi if c > 0 else lo))
        nlo, nhi = D.fsum(tl) if tl else g2.mpfr(0), U.fsum(th) if th else g2.mpfr(0)
        lo, hi = fn.finish(D, U, nlo, nhi, pairs[di], Slo, Shi)
        los.append(lo)
        his.append(hi)
    return los, his


def _softmax_finish(D, U, nlo, nhi, e, Slo, Shi):
    """``e_i N / S**2``, outward."""
    elo, ehi = e
    plo = D.mul(elo if nlo >= 0 else ehi, nlo)
    phi = U.mul(ehi if nhi >= 0 else elo, nhi)
    S2lo, S2hi = D.mul(Slo, Slo), U.mul(Shi, Shi)
    return D.div(plo, S2hi if plo >= 0 else S2lo), U.div(phi, S2lo if phi >= 0 else S2hi)


def _log_softmax_finish(D, U, nlo, nhi, e, Slo, Shi):
    """``N / S``, outward."""
    return D.div(nlo, Shi if nlo >= 0 else Slo), U.div(nhi, Slo if nhi >= 0 else Shi)


def _ends(fn, row: _Row, W, cache: _ExpCache):
    """Lower and upper ends of the row's values at ``row.todo``, at ``W`` bits."""
    D, U = _context(W, "D"), _context(W, "U")
    pairs = [cache.pair(d) for d in row.ds]
    elo = [p[0] for p in pairs]
    ehi = [p[1] for p in pairs]
    return fn.ends(D, U, row, elo, ehi, D.fsum(elo), U.fsum(ehi))


def _softmax_ends(D, U, row, elo, ehi, Slo, Shi):
    """``e_i (g_i S - T) / S**2``, ``T = sum_j g_j e_j``."""
    gf = row.gf
    Tlo = D.fsum([D.mul(gj, lo if gj >= 0 else hi) for gj, lo, hi in zip(gf, elo, ehi,
                                                                           strict=True)])
    Thi = U.fsum([U.mul(gj, hi if gj >= 0 else lo) for gj, lo, hi in zip(gf, elo, ehi,
                                                                           strict=True)])
    los, his = [], []
    for i in row.todo:
        k = row.where[i]
        gi = gf[k]
        if gi >= 0:
            alo, ahi = D.mul(gi, Slo), U.mul(gi, Shi)
        else:
            alo, ahi = D.mul(gi, Shi), U.mul(gi, Slo)
        lo, hi = _softmax_finish(D, U, D.sub(alo, Thi), U.sub(ahi, Tlo), (elo[k], ehi[k]),
                                 Slo, Shi)
        los.append(lo)
        his.append(hi)
    return los, his


def _log_softmax_ends(D, U, row, elo, ehi, Slo, Shi):
    """``g_i - (e_i / S) G``."""
    Glo, Ghi = D.fsum(row.gall), U.fsum(row.gall)
    los, his = [], []
    for i in row.todo:
        k = row.where[i]
        ylo, yhi = D.div(elo[k], Shi), U.div(ehi[k], Slo)
        qlo = D.mul(yhi if Glo < 0 else ylo, Glo)  # y_i G, outward
        qhi = U.mul(yhi if Ghi >= 0 else ylo, Ghi)
        gi = row.gall[i]
        los.append(D.sub(gi, qhi))
        his.append(U.sub(gi, qlo))
    return los, his


@dataclass(frozen=True)
class Gradient:
    """One op's gradient, declared: ``ieee(g, y)`` the formula on stand-ins (the specials),
    ``limit(g, p)`` the values at the one-``+inf`` limit, ``exact(x, g, fin)`` the closed
    forms of a regular row (values, None where irrational; whether any is left), ``ends`` the
    first pass's enclosures, ``coefficient(sum of the group's g, G, own group)`` the part
    subtracted from ``n_a g_i`` in the retries' numerator, ``finish`` its last steps."""

    name: str
    ieee: object
    limit: object
    exact: object
    ends: object
    coefficient: object
    finish: object


GRADIENTS = {n.name: n for n in (
    Gradient("softmax", lambda g, y: y * (g - np.sum(g * y)), _softmax_limit,
             lambda x, g, fin: _softmax_exact(x, g, fin), _softmax_ends,
             lambda gsum, G, own: gsum, _softmax_finish),
    Gradient("log_softmax", lambda g, y: g - y * np.sum(g), _log_softmax_limit,
             lambda x, g, fin: _log_softmax_exact(x, g, fin), _log_softmax_ends,
             lambda gsum, G, own: G if own else 0, _log_softmax_finish),
)}


def _decide_nonzero(lo, hi, P):
    """:func:`._mpfr._decide_strict` of a value known to be irrational (so nonzero): an
    enclosure ``[0, 0]`` (every coefficient zero: an exact case the argument missed) stays
    undecided, and reaches the Ziv cap's error."""
    if lo == 0 and hi == 0:
        return None
    return _decide_strict(lo, hi, P)


def evaluate_backward(X, G, op: str, bits: int = 53):
    """The gradient of ``op`` (``"softmax"`` or ``"log_softmax"``) over the rows of float64
    ``X (M, K)`` for the output gradient ``G (M, K)``, as an ExactArray of shape ``(M, K)``
    that rounds like the exact values into every format of at most ``bits`` bits in every mode.

    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = evaluate_backward(np.array([[0.0, 1.0], [2.0, 2.0]]),
    ...                        np.array([[1.0, 0.0], [3.0, 1.0]]), "softmax")
    >>> ex.round(FORMATS["float32"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [0.1966119259595871, -0.1966119259595871, 0.5, -0.5]
    """
    try:
        fn = GRADIENTS[op]
    except KeyError:
        raise ValueError(f"unknown op {op!r}; expected one of {', '.join(GRADIENTS)}") from None
    X = np.asarray(X, dtype=np.float64)
    G = np.asarray(G, dtype=np.float64)
    M, K = X.shape
    P = bits + 2
    L = max(P, 53)
    values = _Values.empty(M * K, L)
    slow_idx, slow_obj = [], []
    zeros = []
    kinds = row_kinds(X, G)
    rows: list[_Row] = []
    for r in range(M):
        x, g = X[r], G[r]
        if kinds[r]:
            vals, numeric = _ieee_row(fn, x, g), False
        else:
            vals, numeric = fn.exact(x, g, np.isfinite(x))
        todo = []
        for j, v in enumerate(vals):
            if v is None:
                todo.append(j)
            elif v == 0:
                zeros.append(r * K + j)
            else:
                slow_idx.append(r * K + j)
                slow_obj.append(_as_object(v, P))
        if numeric:
            rows.append(_Row(r, x, g, np.isfinite(x), todo))
    if zeros:  # exact zeros: IEEE's sign of an exact zero sum (-0 toward negative)
        z = np.array(zeros, dtype=np.int64)
        values.zero[z] = True
        values.zsign[z] = 0
    W = P + _W0
    if rows:
        cache = _ExpCache(W)
        all_lo, all_hi, pos, owner = [], [], [], []
        for a, row in enumerate(rows):
            los, his = _ends(fn, row, W, cache)
            all_lo.extend(los)
            all_hi.extend(his)
            pos.extend(row.r * K + j for j in row.todo)
            owner.extend([a] * len(los))
        pos = np.array(pos, dtype=np.int64)
        owner = np.array(owner, dtype=np.int64)
        decided = _put_decided(values, pos, all_lo, all_hi, W, P, L)
        retry: dict[int, list] = {}
        for i in np.flatnonzero(~decided).tolist():
            got = _decide_nonzero(all_lo[i], all_hi[i], P)
            if got is None:
                retry.setdefault(int(owner[i]), []).append(int(pos[i]) % K)
            else:
                slow_idx.append(int(pos[i]))
                slow_obj.append(got)
        for a, left in sorted(retry.items()):  # Ziv: what is left, at twice the precision
            row = rows[a]
            row.todo = left
            Ww = 2 * W
            while left:
                if Ww > _W_MAX:
                    raise AssertionError(
                        f"exactref could not decide {op}.backward of the row "
                        f"{_row_text(X[row.r])} with gradients {_row_text(G[row.r])} with "
                        f"{_W_MAX} bits: an exact case the Lindemann-Weierstrass argument "
                        f"missed; please report it")
                los, his = _grouped_ends(fn, row, Ww, _ExpCache(Ww))
                still = []
                for j, lo, hi in zip(left, los, his, strict=True):
                    got = _decide_nonzero(lo, hi, P)
                    if got is None:
                        still.append(j)
                    else:
                        slow_idx.append(row.r * K + j)
                        slow_obj.append(got)
                left = row.todo = still
                Ww *= 2
    if slow_idx:
        values.put(np.array(slow_idx, dtype=np.int64), _from_objects(slow_obj, P))
    return values.exact((M, K))
