"""Backward of ``layer_norm`` and ``rms_norm``: every gradient element the exact derivative of
the exact function, rounded once, with a tolerance that bounds PyTorch's CPU backward
(derivations: docs/normalizations.md, "Backward").

Exact values. Per row of ``n`` elements, with ``gh = grad * weight`` (an exact product), the
exact integer sums ``S = sum x``, ``Sg = sum gh``, ``Sgx = sum gh x`` and the forward's ``D``
(:mod:`._norms`: ``n**2 (var + eps)``, or ``n Q + n**2 eps`` for rms norm):

* layer norm: ``dx_i = A_i / sqrt(D**3)`` with ``A_i = (n gh_i - Sg) D - (n x_i - S) T`` and
  ``T = n Sgx - S Sg``; rms norm: ``A_i = n (gh_i D - n x_i Sgx)``. ``A_i`` and ``D`` are
  dyadic, so each element is the forward's ``A / sqrt(D) + B`` kernel
  (:func:`~._norms._odd_element`): exact integer square roots, rounded to odd at 113 bits.
* ``dweight_j = sum_r a_rj / sqrt(D_r)`` over the rows ``r`` (``a = grad (n x - S)``, or
  ``grad n x``): a sum of square roots of different rationals. Rows whose ``D`` are in one
  square class (``D_r D_q`` a perfect square: an integer ``isqrt`` test) are combined:
  ``1 / sqrt(D_r) = sqrt(D_q) / isqrt(D_r D_q)``, so the column is ``R + sum_G c_G
  sqrt(d_G)`` with rational ``R``, ``c_G`` and square-free-distinct ``d_G``. Square roots of
  distinct square classes are linearly independent over the rationals (Besicovitch), so the
  sum is rational exactly where every ``c_G`` is 0 (then ``R`` is rounded), and otherwise
  irrational: integer enclosures ``floor(|c| sqrt(d) 2**s) = isqrt(c**2 d 4**s)`` at a scale
  raised until the rounding to odd is decided (Ziv) always terminate.
* ``dbias_j = sum_r grad_rj``: an exact long sum (:func:`~exactref._exact.rowsum_exact`).

Where the data and the output have at most 24 bits, ``dx`` and the weight's gradient are
first decided in float64 (:func:`_fast_dx`, :func:`_fast_dw`: rigorous enclosures from the
rows' sums rounded into float64; where one lies inside a cell between numbers of ``p + 2``
bits, the cell's midpoint rounds like the exact value in every mode); the rest, and float64
outputs, take the integer path, a few big-integer operations an element (about 10
microseconds; docs/normalizations.md).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._array import Array
from .._exact import (
    Rounding,
    deflate,
    down,
    from_integers,
    gamma_up,
    inflate,
    margin_up,
    pow1p_m1_up,
    resolve_modes,
    resolve_overflow,
    rowsum_exact,
    slack_up,
    up,
)
from .._formats import Format
from .._formats import dtype as resolve_dtype
from .._operands import to_array
from .._result import Gradients
from ._bounds import _NE, DEFAULT_ORDER, BoundResult, _chain
from ._norms import (
    _affine,
    _eps,
    _float_array,
    _mean_var_ends,
    _mul,
    _normalized_shape,
    _resolve_model,
    _rnd,
    _rows_of,
    _rsqrt_ends,
    _square_mean_ends,
    backward_keywords,
    group_norm,
    layer_norm,
    rms_norm,
)
from ._norms_exact import (
    _BITS,
    CENTERED,
    SCALED,
    _odd_element,
    _row_integers,
    _Rows,
    decide_cells,
)
from ._rowsums import grad_array

__all__ = ["layer_norm_backward", "rms_norm_backward", "group_norm_backward"]

_TN, _TP = Rounding.TOWARD_NEGATIVE, Rounding.TOWARD_POSITIVE


# ----------------------------------------------------------------------- dyadic integers
def _mant(v):
    """``(m, e)`` int64 arrays with ``v == m * 2**e`` (finite float64 ``v``)."""
    f, e = np.frexp(np.asarray(v, dtype=np.float64))
    return (f * 2.0**53).astype(np.int64), (e - 53).astype(np.int64)


def _dsum(ms, es):
    """The exact sum of ``m * 2**e`` (Python ints) as ``(V, e)``."""
    lo = min(es) if es else 0
    return sum(m << (e - lo) for m, e in zip(ms, es, strict=True)), lo


def _dadd(a, ea, b, eb):
    lo = min(ea, eb)
    return (a << (ea - lo)) + (b << (eb - lo)), lo


def _frac_odd(q: Fraction):
    """``q`` as ``(W, e)``: exact, or rounded to odd with at least ``_BITS + 2`` bits."""
    if q == 0:
        return 0, 0
    sign = 1 if q > 0 else -1
    p, d = abs(q.numerator), q.denominator
    s = _BITS + 2 - (p.bit_length() - d.bit_length())
    T, rem = divmod(p << s, d) if s >= 0 else divmod(p, d << -s)
    if rem == 0:
        return sign * T, -s
    return sign * (2 * T + 1), -s - 1


def _floor_root(c: Fraction, d: int, s: int):
    """``floor(c sqrt(d) 2**s)`` and whether it is exact (``c != 0``, ``d > 0``)."""
    p, q = abs(c.numerator), c.denominator
    num = p * p * d
    if s >= 0:
        num <<= 2 * s
        den = q * q
    else:
        den = (q * q) << (-2 * s)
    t, rem = divmod(num, den)
    k = math.isqrt(t)
    exact = rem == 0 and k * k == t
    if c > 0:
        return k, exact
    return -k - (0 if exact else 1), exact


def _ziv(rat: Fraction, irr):
    """``rat + sum c sqrt(d)`` over ``irr`` (pairs, ``d`` not a perfect square, distinct
    square classes) as ``(W, e)``: exact where the sum is rational, else rounded to odd."""
    irr = [(c, d) for c, d in irr if c != 0]
    if not irr:
        return _frac_odd(rat)
    tops = [c.numerator.bit_length() - c.denominator.bit_length() + d.bit_length() // 2
            for c, d in irr]
    if rat:
        tops.append(rat.numerator.bit_length() - rat.denominator.bit_length())
    s = _BITS + 16 - max(tops)
    for _ in range(400):
        L, K = 0, len(irr)
        for c, d in irr:
            f, _ = _floor_root(c, d, s)
            L += f
        if rat:
            num = rat.numerator << s if s >= 0 else rat.numerator
            den = rat.denominator if s >= 0 else rat.denominator << -s
            f, rem = divmod(num, den)
            L += f
            K += rem != 0
        hi = L + K  # the sum times 2**s lies in (L, hi): at least one term is irrational
        if L >= 0 or hi <= 0:
            lo_, hi_ = (L, hi) if L >= 0 else (-hi, -L)
            j = max(hi_.bit_length() - (_BITS + 2), 0)
            T = lo_ >> j
            if T == (hi_ - 1) >> j and T.bit_length() >= _BITS + 1:
                W = 2 * T + 1
                return (W if L >= 0 else -W), j - s - 1
        s += 48
    raise ArithmeticError("exactref: a normalization's weight gradient did not converge (an "
                          "exactref bug); please report the inputs")


# ------------------------------------------------------------------------ the exact values
class _Pass:
    """A backward pass over rows: ``X``, ``G`` (float64, ``(M, n)``), ``W`` (``(n,)`` or
    None), the forward's row integers, and the per-row exact sums of ``gh`` and ``gh x``."""

    def __init__(self, X, G, W, eps: Fraction, centered: bool, prec: int):
        self.X, self.G, self.W, self.eps, self.centered = X, G, W, eps, centered
        self.M, self.n = X.shape
        Wf = np.broadcast_to(np.ones(self.n) if W is None else W, X.shape)
        self.fin = (np.isfinite(X).all(axis=1) & np.isfinite(G).all(axis=1)
                    & np.isfinite(Wf).all(axis=1))
        Xf = np.where(self.fin[:, None], X, 0.0)
        Gf = np.where(self.fin[:, None], G, 0.0)
        self.rows = _Rows(Xf, None, None, eps, CENTERED if centered else SCALED, prec)
        _, self.VS, self.eS, self.Dl, self.eD, self.VQ, self.eQ = _row_integers(self.rows)
        self.mx, self.ex = _mant(Xf)
        self.mg, self.eg = _mant(Gf)
        mw, ew = _mant(np.where(np.isfinite(Wf), Wf, 0.0))
        self.mw, self.ew = mw, ew
        self.Sg, self.Sgx = [], []
        for i in range(self.M):
            mg = self.mg[i].tolist()
            eg = self.eg[i].tolist()
            mh = [a * b for a, b in zip(mg, mw[i].tolist(), strict=True)]
            eh = [a + b for a, b in zip(eg, ew[i].tolist(), strict=True)]
            self.Sg.append(_dsum(mh, eh))
            self.Sgx.append(_dsum([a * b for a, b in zip(mh, self.mx[i].tolist(),
                                                          strict=True)],
                                  [a + b for a, b in zip(eh, self.ex[i].tolist(),
                                                         strict=True)]))
        self.Wf = Wf

    def dx_pairs(self, skip=None):
        """``(W, e)`` per element of the rows (module docstring), ``None`` where NaN; ``(0,
        0)`` where ``skip`` (flat, decided by :func:`_fast_dx`)."""
        n = self.n
        skip = np.zeros(self.M * n, bool) if skip is None else skip
        out = []
        for i in range(self.M):
            mw, ew = self.mw[i].tolist(), self.ew[i].tolist()
            D, eD = self.Dl[i], int(self.eD[i])
            if not self.fin[i] or D <= 0:
                out.extend([None] * n)
                continue
            sg, esg = self.Sg[i]
            sgx, esgx = self.Sgx[i]
            S, eS = int(self.VS[i]), int(self.eS[i])
            D3, eD3 = D * D * D, 3 * eD
            mx, ex = self.mx[i].tolist(), self.ex[i].tolist()
            mg, eg = self.mg[i].tolist(), self.eg[i].tolist()
            if self.centered:
                T, eT = _dadd(n * sgx, esgx, -S * sg, eS + esg)
            for j in range(n):
                if skip[i * n + j]:
                    out.append((0, 0))
                    continue
                gh, egh = mg[j] * mw[j], eg[j] + ew[j]
                if self.centered:
                    a1, e1 = _dadd(n * gh, egh, -sg, esg)
                    a2, e2 = _dadd(n * mx[j], ex[j], -S, eS)
                    A, eA = _dadd(a1 * D, e1 + eD, -a2 * T, e2 + eT)
                else:
                    A, eA = _dadd(gh * D, egh + eD, -n * mx[j] * sgx, ex[j] + esgx)
                    A *= n
                out.append(_odd_element(A, eA, D3, eD3, 0, 0) if A else (0, 0))
        return out

    def dw_pairs(self, targets=None, skip=None):
        """``(W, e)`` per element of the weight's gradient (module docstring): per column of
        the rows, or per ``(rows, columns)`` of ``targets`` (group norm's channels); ``(0,
        0)`` where ``skip`` (decided by :func:`_fast_dw`)."""
        n = self.n
        if targets is None:
            targets = [(range(self.M), (j,)) for j in range(n)]
        if not self.fin.all() or any(d <= 0 for d in self.Dl):
            return [None] * len(targets)
        if skip is not None:
            targets = [((), ()) if sk else t for t, sk in zip(targets, skip, strict=True)]
        # square classes of the rows' D (even exponents: sqrt(2**e) is a power of two)
        norm = []
        for d, e in zip(self.Dl, self.eD, strict=True):
            e = int(e)
            if e & 1:
                d, e = d << 1, e - 1
            norm.append((d, e // 2))
        groups = []  # [d_q, is_square, [(row, k_r, half exponent)]]
        buckets = {}  # a necessary condition for one class first (_class_key)
        for r, (d, h) in enumerate(norm):
            bucket = buckets.setdefault(_class_key(d), [])
            for g in bucket:
                P = d * g[0]
                k = math.isqrt(P)
                if k * k == P:
                    g[2].append((r, k, h))
                    break
            else:
                q = math.isqrt(d)
                groups.append([d, q * q == d, [(r, d, h)]])
                bucket.append(groups[-1])
        # a_rj = g (n x - S) (layer) or g n x (rms), as m 2**e
        group_of = {r: (gi, k, h) for gi, g in enumerate(groups) for r, k, h in g[2]}
        out = []
        for rows, cols in targets:
            rat = Fraction(0)
            irr = []
            coef = [Fraction(0)] * len(groups)
            for r in rows:
                gi, k, h = group_of[r]
                for j in cols:
                    mg = int(self.mg[r, j])
                    if mg == 0:
                        continue
                    if self.centered:
                        a, ea = _dadd(n * int(self.mx[r, j]), int(self.ex[r, j]),
                                      -int(self.VS[r]), int(self.eS[r]))
                    else:
                        a, ea = n * int(self.mx[r, j]), int(self.ex[r, j])
                    a *= mg
                    ea += int(self.eg[r, j]) - h
                    coef[gi] += Fraction(a << ea, k) if ea >= 0 else Fraction(a, k << -ea)
            for (d_q, square, _), c in zip(groups, coef, strict=True):
                if c == 0:
                    continue
                if square:
                    rat += c * math.isqrt(d_q)
                else:
                    irr.append((c, d_q))
            out.append(_ziv(rat, irr))
        return out


# ------------------------------------------------------------------------ the fast path
def _fast_dx(ps: _Pass, K: int):
    """Decide ``dx`` in float64 where the data (x, grad, weight) have at most 24 bits and the
    output at most 24 (``K = p + 2``): ``dx = (t1 D - t2 T) F`` with ``t1 = n gh - Sg``, ``t2
    = n x - S`` (``gh`` exact in float64), the row's ``D``, ``T``, ``Sg``, ``S`` rounded into
    float64 and ``F = 1 / (D sqrt(D))``, each step's error bounded (relative ``u = 2**-53``
    per rounding); where the enclosure lies inside one cell between numbers of ``K`` bits, the
    cell's midpoint rounds like ``dx`` in every mode. Returns ``(decided, midpoints)`` flat."""
    M, n = ps.M, ps.n
    N = M * n
    no = np.zeros(N, bool), np.zeros(N)
    X, G, W = ps.rows.X, ps.G, np.asarray(ps.Wf, dtype=np.float64)
    with np.errstate(all="ignore"):
        for v in (X, G, W):
            if not (v.astype(np.float32) == v).all():
                return no
        rowv = np.full((M, 5), np.nan)  # D, T, Sg, S as float64; F
        for i in range(M):
            if not ps.fin[i] or ps.Dl[i] <= 0:
                continue
            try:
                S = int(ps.VS[i]), int(ps.eS[i])
                Sg, Sgx = ps.Sg[i], ps.Sgx[i]
                if ps.centered:
                    T = _dadd(n * Sgx[0], Sgx[1], -S[0] * Sg[0], S[1] + Sg[1])
                else:
                    T = Sgx
                vals = [math.ldexp(float(v), e) if v else 0.0 for v, e in
                        ((ps.Dl[i], int(ps.eD[i])), T, Sg, S)]
            except OverflowError:
                continue
            rowv[i, :4] = vals
        Df, Tf, Sgf, Sf = (rowv[:, k:k + 1] for k in range(4))
        F = 1.0 / (Df * np.sqrt(Df))
        u = 2.0**-53
        gh = G * W  # exact: 48 bits at most
        if ps.centered:
            a1, a2 = n * gh, n * X
            t1, t2 = a1 - Sgf, a2 - Sf
            e1 = 2.01 * u * (np.abs(a1) + np.abs(Sgf))
            e2 = 2.01 * u * (np.abs(a2) + np.abs(Sf))
            p1, p2 = t1 * Df, t2 * Tf
            A = p1 - p2
            EA = ((e1 + 2.01 * u * np.abs(t1)) * np.abs(Df) + (e2 + 2.01 * u * np.abs(t2))
                  * np.abs(Tf) + u * (np.abs(p1) + np.abs(p2)) + u * np.abs(A))
        else:  # n (gh D - n x Sgx)
            p1, p2 = gh * Df, (n * X) * Tf
            A = n * (p1 - p2)
            EA = (n * (4.02 * u * (np.abs(p1) + np.abs(p2)) + u * np.abs(p1 - p2))
                  + u * np.abs(A))
        y = A * F
        err = margin_up(EA * F * 1.01 + 6.02 * u * np.abs(y)) + 2.0**-1000
        # no product or row value near the subnormals (relative error bounds hold)
        rows_ok = ((Df > 2.0**-500) & (Df < 2.0**500) & (np.abs(Tf) < 2.0**500)
                   & ((Tf == 0) | (np.abs(Tf) > 2.0**-600)) & (np.abs(Sgf) < 2.0**900)
                   & (np.abs(Sf) < 2.0**900) & ((Sgf == 0) | (np.abs(Sgf) > 2.0**-900))
                   & ((Sf == 0) | (np.abs(Sf) > 2.0**-900)))
        ok, z = decide_cells(y, err, K)
        ok &= np.isfinite(EA) & np.isfinite(F) & (F > 0) & rows_ok
    return ok.reshape(N), np.where(ok, z, 0.0).reshape(N)


def _row_floats(ps: _Pass):
    """Per row, float64 ``D``, ``S`` (NaN where out of range or not finite)."""
    D, S = np.full((ps.M, 1), np.nan), np.full((ps.M, 1), np.nan)
    for i in range(ps.M):
        if ps.fin[i] and ps.Dl[i] > 0:
            try:
                D[i] = math.ldexp(float(ps.Dl[i]), int(ps.eD[i]))
                S[i] = math.ldexp(float(int(ps.VS[i])), int(ps.eS[i]))
            except OverflowError:
                pass
    return D, S


def _fast_dw(ps: _Pass, K: int):
    """Decide the weight's gradient per column in float64 (data of at most 24 bits, outputs
    of at most 24, ``K = p + 2``): terms ``g t2 F`` with ``t2 = n x - S`` (or ``n x``) and
    ``F = 1 / sqrt(D)`` per row, each within a bounded relative error (``u = 2**-53`` per
    rounding), summed by numpy with ``|error| <= M u sum |term|``; the cell's midpoint where
    the enclosure decides. Returns ``(decided, midpoints)`` per column."""
    M, n = ps.M, ps.n
    X, G = ps.rows.X, ps.G
    no = np.zeros(n, bool), np.zeros(n)
    if not ps.fin.all() or not ((X.astype(np.float32) == X).all()
                                and (G.astype(np.float32) == G).all()):
        return no
    Df, Sf = _row_floats(ps)
    u = 2.0**-53
    with np.errstate(all="ignore"):
        if not ((Df > 2.0**-500) & (Df < 2.0**500) & (np.abs(Sf) < 2.0**900)
                & ((Sf == 0) | (np.abs(Sf) > 2.0**-900))).all():
            return no
        F = 1.0 / np.sqrt(Df)  # within 2.5 u of D**-1/2 (D's rounding, sqrt, division)
        if ps.centered:
            a2 = n * X
            t2 = a2 - Sf
            e2 = 2.01 * u * (np.abs(a2) + np.abs(Sf)) + u * np.abs(t2)
            term = (G * t2) * F
            et = np.abs(G) * e2 * F * 1.01 + 5.02 * u * np.abs(term)
        else:
            term = (G * (n * X)) * F
            et = 6.02 * u * np.abs(term)
        y = term.sum(axis=0)
        mag = np.abs(term).sum(axis=0)
        err = margin_up(et.sum(axis=0) + (M + 1) * u * mag) + 2.0**-1000
    return decide_cells(y, err, K)


_PRIMES = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67)


def _class_key(d: int):
    """A key equal for every ``d > 0`` of one square class (``d d'`` a square): the parity
    of each small prime's exponent, and for the primes not dividing ``d`` its quadratic
    character (Euler's criterion); two squares of one class share both."""
    v = (d & -d).bit_length() - 1
    d >>= v
    key = [v & 1]
    for p in _PRIMES:
        e = 0
        while d % p == 0:
            d //= p
            e += 1
        key.append(-1 if e & 1 else pow(d % p, (p - 1) // 2, p))
    return tuple(key)


def _assemble_pairs(pairs, shape, out: Format, mode, rule, fast=None):
    """Round ``(W, e)`` pairs (None: NaN) into ``out``; ``fast``: ``(mask, values)``, the
    elements decided in float64 (a cell's midpoint, which rounds like the exact value)."""
    N = len(pairs)
    nan = np.array([p is None for p in pairs], bool)
    ex = from_integers([(0, 0) if p is None else p for p in pairs], (N,))
    ex.special = np.where(nan, np.nan, 0.0)
    if fast is not None:
        ok, z = fast
        ex.c1[ok], ex.c2[ok], ex.r[ok], ex.E[ok], ex.zero[ok] = z[ok], 0.0, 0, 0, False
    values = ex.round(out.component, mode, rule)[0]
    return to_array([values], out, shape)


# ----------------------------------------------------------------------- interval steps
class _Steps:
    """Outward float64 intervals of values computed in ``c`` with rounding ``mode``: ``r``
    rounds (every rounding is monotone), ``maybe`` is a product an FMA may leave unrounded
    (the hull of both)."""

    def __init__(self, c: Format, mode: Rounding):
        self.c, self.mode = c, mode
        p = c.component.precision
        self.u = 2.0**-p if mode.is_nearest else 2.0**(1 - p)
        self.eta = c.component.smallest_subnormal

    def r(self, iv):
        return _rnd(iv[0], self.c, self.mode), _rnd(iv[1], self.c, self.mode)

    def maybe(self, iv):
        lo, hi = self.r(iv)
        return np.fmin(lo, iv[0]), np.fmax(hi, iv[1])

    @staticmethod
    def mul(a, b):
        return _mul(a[0], a[1], b[0], b[1])

    @staticmethod
    def add(a, b):
        with np.errstate(invalid="ignore", over="ignore"):
            return down(a[0] + b[0]), up(a[1] + b[1])

    @staticmethod
    def neg(a):
        return -a[1], -a[0]

    @staticmethod
    def mag(a):
        return np.fmax(np.abs(a[0]), np.abs(a[1]))


def _bracket(pairs):
    """Outward float64 ``(lo, hi)`` of the values ``V * 2**e`` (Python ints)."""
    lo, hi = np.empty(len(pairs)), np.empty(len(pairs))
    for i, (v, e) in enumerate(pairs):
        q = Fraction(v) * Fraction(2) ** e if e >= -1100 or v else Fraction(0)
        f = float(q) if abs(q) < 2**1000 else math.copysign(math.inf, v)
        lo[i], hi[i] = (f, f) if Fraction(f) == q or not math.isfinite(f) else (down(f), up(f))
    return lo, hi


def _abs_rowsum(*arrays):
    """Upper bounds of ``sum |prod arrays|`` along the last axis."""
    with np.errstate(over="ignore"):
        p = np.abs(arrays[0])
        for a in arrays[1:]:
            p = p * np.abs(a)
        # products of up to 3 factors, a sum of the last axis: the slack policy of _bounds
        return slack_up(p.sum(axis=-1), p.shape[-1] + len(arrays))


def _forward_band(ps: _Pass, arr_rows, model, stats: Format):
    """The saved mean ``m`` and rstd ``a`` per row (the forward model's values, stored in
    ``stats``): ``(mlo, mhi), (alo, ahi)``."""
    rows = ps.rows
    with np.errstate(over="ignore", invalid="ignore"):
        if ps.centered:
            mlo, mhi, vlo, vhi = _mean_var_ends(rows, arr_rows, model, ps.VS, ps.eS)
        else:
            vlo, vhi = _square_mean_ends(rows, model, ps.VQ, ps.eQ)
            mlo = mhi = np.zeros(ps.M)
        alo, ahi = _rsqrt_ends(vlo, vhi, ps.eps, model)
    if stats.component.precision < model.compute.component.precision:
        mlo, alo = _rnd(mlo, stats, _TN), _rnd(alo, stats, _TN)
        mhi, ahi = _rnd(mhi, stats, _TP), _rnd(ahi, stats, _TP)
    return (mlo[:, None], mhi[:, None]), (alo[:, None], ahi[:, None])


def _sum_ends(terms, k, st: _Steps, acc: Format | None = None):
    """Ends of a sum of ``k`` terms (intervals ``(lo, hi)`` summed over axis 0 or the last
    axis as given) in any order: each addition rounded in ``st.c`` (and then stored in
    ``acc`` where given): ``|error| <= gamma_k(u_eff) sum |t|``."""
    lo, hi, mag = terms
    u = st.u
    if acc is not None:
        pa = acc.component.precision
        ua = 2.0**-pa if st.mode.is_nearest else 2.0**(1 - pa)
        u = slack_up(u + ua + u * ua, 3)  # (1 + u)(1 + ua) - 1, without forming 1 + u
    coef = float(gamma_up(max(k, 1), u))
    eta = st.eta if acc is None else max(st.eta, acc.component.smallest_subnormal)
    big = st.c.component.max_finite if acc is None else min(st.c.component.max_finite,
                                                            acc.component.max_finite)
    with np.errstate(over="ignore", invalid="ignore"):
        E = slack_up(coef * mag + 2 * (k + 1) * eta, 4)
        # a term or partial sum may overflow (then inf - inf): the whole line, NaN allowed
        over = ~(mag * (1 + coef) * (1 + 2 * u) <= big)
        return np.where(over, -np.inf, down(lo - E)), np.where(over, np.inf, up(hi + E))


# -------------------------------------------------------------- PyTorch's layer norm model
def _layer_dx_ends(ps: _Pass, m, a, st: _Steps, group=None):
    """``dx = a gh + b x + c`` of ``LayerNormBackwardKernelImplInternal`` (docs); ``group``
    (a :class:`_Groups`): ``GroupNormInputBackward``'s ``c1 dy + c2 x + c3`` with ``c1 = R(a
    w)``, its sums nested (over the ``P`` positions of a channel, then the ``D`` channels
    times the weight: each term at most ``P + D + 2`` roundings deep)."""
    n = ps.n
    k = n if group is None else min(n + 3, group.P + group.D + 2)
    X, G, W = ps.rows.X, np.where(ps.fin[:, None], ps.G, 0.0), ps.W
    u, eta = st.u, st.eta
    with np.errstate(over="ignore", invalid="ignore"):
        sg = _bracket(ps.Sg)
        sgx = _bracket(ps.Sgx)
        absg = _abs_rowsum(G, ps.Wf)
        absgx = _abs_rowsum(G, ps.Wf, X)
        # db = sum R(dy w); ds = sum R(R(dy w) x) (or R(R(dy x) w)): two roundings a term
        db = _sum_ends((sg[0], sg[1], inflate(absg, u)), k, st)
        # (1 + u)**2 (1 + 2 u) <= (1 + u)**4, not formed in float64 (1 + 2**-53 is 1)
        ds = _sum_ends((sgx[0], sgx[1], inflate(absgx, pow1p_m1_up(u, 4))), k, st)
        db = (db[0][:, None], db[1][:, None])
        ds = (ds[0][:, None], ds[1][:, None])
        one_n = (_rnd(down(np.array(1.0 / n)), st.c, _TN), _rnd(up(np.array(1.0 / n)),
                                                                 st.c, _TP))
        # b = R(R(R(R(R(db m) - ds) a) a) a) scale)
        t = st.r(st.add(st.maybe(st.mul(db, m)), st.neg(ds)))
        for _ in range(3):
            t = st.r(st.mul(t, a))
        b = st.r(st.mul(t, one_n))
        # c = R(R(-b m) - R(R(db a) scale)): either product may be fused
        q = st.maybe(st.mul(st.r(st.mul(db, a)), one_n))
        # P1 = R(R(a dy) w) (maybe fused into the additions)
        if group is not None and W is not None:  # c1 = R(a w), then c1 dy
            p1 = st.mul(st.r(st.mul(a, (W, W))), (G, G))
        else:
            p1 = st.mul(a, (G, G))
            if W is not None:
                p1 = st.mul(st.r(p1), (W, W))
        p1 = st.maybe(p1)
        # b x + c = b (x - m) - q + errors: b and m are one value each in both places
        xm = (down(X - m[1]), up(X - m[0]))
        v = st.mul(b, xm)
        z = st.add(st.add(p1, v), st.neg(q))
        bm, mm, qm, pm = st.mag(b), st.mag(m), st.mag(q), st.mag(p1)
        ax = np.abs(X)
        err = u * (bm * ax + 2 * (1 + u) * bm * mm + qm + (pm + bm * ax * (1 + u)) * (1 + u))
        # 15 float64 operations (a (1 + u) that float64 makes 1 is one of their roundings)
        err = up(inflate(slack_up(err, 16), 4 * u) + 8 * eta)
        return down(z[0] - err), up(z[1] + err)


def _layer_dw_ends(ps: _Pass, m, a, st: _Steps, acc: Format):
    """``dgamma_j = sum_r dy (R(a x + R(-a m)))`` in row buffers of ``acc``."""
    X, G = ps.rows.X, np.where(ps.fin[:, None], ps.G, 0.0)
    u, eta = st.u, st.eta
    with np.errstate(over="ignore", invalid="ignore"):
        xm = (down(X - m[1]), up(X - m[0]))
        h = st.mul(a, xm)  # a (x - m), then the roundings of R(-a m), R(a x) and their sum
        am, mm = st.mag(a), st.mag(m)
        err = u * (am * mm + am * np.abs(X)) + u * (st.mag(h) + u * am * (mm + np.abs(X)))
        err = up(inflate(slack_up(err, 10), 4 * u) + 4 * eta)
        h = (down(h[0] - err), up(h[1] + err))
        t = st.maybe(st.mul((G, G), h))
        return _sum_ends(_col_sums(t, st), ps.M, st, acc)


def _fsum(v):
    """``math.fsum`` (the exact sum rounded once), NaN where the ends are not finite."""
    try:
        return math.fsum(v)
    except (OverflowError, ValueError):
        return math.nan


def _col_sums(t, st: _Steps):
    """``(sum lo, sum hi, sum |t|)`` over the rows of the term intervals ``t``: the exact sums
    of the ends rounded once outward (``math.fsum``), the magnitudes' bounded above."""
    with np.errstate(over="ignore", invalid="ignore"):
        lo = down(np.array([_fsum(c) for c in t[0].T]))
        hi = up(np.array([_fsum(c) for c in t[1].T]))
        return lo, hi, slack_up(st.mag(t).sum(axis=0), t[0].shape[0] + 1)


def _col_ends(ps: _Pass, st: _Steps, acc: Format | None):
    """``dbias_j = sum_r dy_rj`` accumulated in ``acc`` buffers (or in ``st.c``)."""
    G = np.where(ps.fin[:, None], ps.G, 0.0)
    s = np.array([_fsum(col) for col in G.T])
    lo, hi = down(s), up(s)
    return _sum_ends((lo, hi, _abs_rowsum(G.T)), ps.M, st, acc)


def _channel_sums(ps: _Pass, C: int, P: int, st: _Steps):
    """Per sample and channel, the ends of ``ds = sum dy x`` and ``db = sum dy`` over the
    ``P`` positions (``ComputeInternalGradients``: any order in the compute format), shape
    ``(Nb, C)``; the exact sums by ``math.fsum`` of error-free products."""
    from .._exact import two_product

    Nb = ps.M * ps.n // (C * P)
    X = ps.rows.X.reshape(Nb, C, P)
    G = np.where(ps.fin[:, None], ps.G, 0.0).reshape(Nb, C, P)
    with np.errstate(over="ignore", invalid="ignore"):
        hi, lo = two_product(G, X)
        both = np.concatenate([hi, lo], axis=-1).reshape(Nb * C, 2 * P)
        sx = np.array([_fsum(r) for r in both]).reshape(Nb, C)
        sd = np.array([_fsum(r) for r in G.reshape(Nb * C, P)]).reshape(Nb, C)
        tiny = 4 * P * st.eta  # products below the subnormals of float64 (two_product)
        ds = _sum_ends((down(sx - 2.0**-1000), up(sx + 2.0**-1000),
                        _abs_rowsum(G, X) * (1 + st.u) + tiny), P + 1, st)
        db = _sum_ends((down(sd), up(sd), _abs_rowsum(G)), P, st)
    return ds, db


def _group_dw_ends(ps: _Pass, m, a, st: _Steps, C: int, G: int, P: int):
    """``GammaBackward``: ``dgamma_c = sum_n R(R(ds - R(db m)) a)`` (FMA either) in the
    compute format; ``m``, ``a`` per (sample, group)."""
    ds, db = _channel_sums(ps, C, P, st)
    Nb = ds[0].shape[0]
    D = C // G
    # m, a of shape (Nb * G, 1) -> per (sample, channel)
    mc = tuple(np.repeat(v.reshape(Nb, G), D, axis=1) for v in m)
    ac = tuple(np.repeat(v.reshape(Nb, G), D, axis=1) for v in a)
    with np.errstate(over="ignore", invalid="ignore"):
        t = st.r(st.add(ds, st.neg(st.maybe(st.mul(db, mc)))))
        t = st.maybe(st.mul(t, ac))
        return _sum_ends(_col_sums(t, st), Nb, st)


def _group_db_ends(ps: _Pass, st: _Steps, C: int, P: int):
    """``BetaBackward``: ``dbeta_c = sum_n db[n, c]``: every ``dy`` of the channel, nested
    sums in the compute format (any order in each): each term at most ``P - 1 + Nb``
    roundings deep."""
    Nb = ps.M * ps.n // (C * P)
    G = np.where(ps.fin[:, None], ps.G, 0.0).reshape(Nb, C, P)
    cols = np.transpose(G, (1, 0, 2)).reshape(C, Nb * P)
    s = np.array([_fsum(c) for c in cols])
    return _sum_ends((down(s), up(s), _abs_rowsum(cols)), min(Nb * P, P + Nb), st)


# ------------------------------------------------------------ PyTorch's rms norm model
def _rms_dx_ends(ps: _Pass, r, st: _Steps):
    """The autograd of ``x * rsqrt(mean(x**2) + eps) * w`` (docs)."""
    n = ps.n
    X, G, W = ps.rows.X, np.where(ps.fin[:, None], ps.G, 0.0), ps.W
    u = st.u
    with np.errstate(over="ignore", invalid="ignore"):
        gh = (G, G) if W is None else st.r(st.mul((G, G), (W, W)))
        t1 = st.r(st.mul(gh, r))
        sgx = _bracket(ps.Sgx)
        absgx = _abs_rowsum(G, ps.Wf, X)
        sr = _sum_ends((sgx[0], sgx[1], inflate(absgx, pow1p_m1_up(u, 4))), n, st)
        sr = (sr[0][:, None], sr[1][:, None])
        r3 = st.mul(st.mul(r, r), r)
        p3 = (deflate(r3[0], 3.01 * u), inflate(r3[1], 3.01 * u))
        gv = st.r(st.mul(st.r((-0.5 * sr[1], -0.5 * sr[0])), st.r(p3)))
        gm = st.r((down(gv[0] / n), up(gv[1] / n)))
        t2 = st.r(st.mul(gm, (2 * X, 2 * X)))
        return st.add(t1, t2)


def _rms_dw_ends(ps: _Pass, r, st: _Steps):
    """``dw_j = sum_r R(g R(x r))`` in the compute format."""
    X, G = ps.rows.X, np.where(ps.fin[:, None], ps.G, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        y = st.r(st.mul((X, X), r))
        t = st.r(st.mul((G, G), y))
        return _sum_ends(_col_sums(t, st), ps.M, st)


# ---------------------------------------------------------------------------- the passes
def _result(op, rounded, ends, c: Format, mode, rule, nan_mask, models, details):
    """A BoundResult of ``rounded`` whose covered outputs are ``R_out(R_c(ends))``."""
    out = rounded.dtype
    shape = tuple(rounded.shape)

    def bounds():
        lo, hi = ends()
        lo = np.broadcast_to(lo, shape).astype(np.float64)
        hi = np.broadcast_to(hi, shape).astype(np.float64)
        # an end at an infinity is an overflow the model allows: a NaN may follow (inf - inf)
        nan = ~(np.isfinite(lo) & np.isfinite(hi))
        lo = _chain(lo, c, out.component, mode, mode, nan, -np.inf, rule)
        hi = _chain(hi, c, out.component, mode, mode, nan, np.inf, rule)
        free = np.broadcast_to(nan_mask, shape)
        lo = np.where(free, -np.inf, lo)
        hi = np.where(free, np.inf, hi)
        return [(lo, hi, nan | free)]

    return BoundResult(rounded, bounds, op=op, models=models,
                       details=dict(details, order_declared=True))


class _Groups:
    """group norm's layout: ``x`` of shape ``(Nb, C, *)``, ``G`` groups of ``D = C / G``
    channels of ``P`` positions; a row is one (sample, group)."""

    def __init__(self, op, shape, num_groups):
        if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
            raise TypeError(f"{op}: num_groups={num_groups!r} is not an int")
        if len(shape) < 2:
            raise ValueError(f"{op}: x has shape {list(shape)}; expected (N, C, *) with at "
                             f"least 2 dimensions")
        self.G, self.C = int(num_groups), shape[1]
        if self.G <= 0 or self.C % self.G:
            raise ValueError(f"{op}: num_groups={self.G} does not divide the {self.C} "
                             f"channels of x (shape {list(shape)}); expected a positive "
                             f"divisor of {self.C}")
        self.Nb, self.D = shape[0], self.C // self.G
        self.P = int(np.prod(shape[2:], dtype=np.int64))
        self.n = self.D * self.P

    def per_row(self, v):
        """A per-channel vector as ``(Nb * G, n)`` rows."""
        g = np.repeat(v.reshape(self.G, self.D), self.P, axis=1)
        return np.tile(g, (self.Nb, 1))

    def targets(self):
        """Per channel: the rows and the columns of its elements."""
        return [(range(c // self.D, self.Nb * self.G, self.G),
                 range((c % self.D) * self.P, (c % self.D + 1) * self.P))
                for c in range(self.C)]

    def channel_rows(self, v):
        """``(C, Nb * P)``: every element of each channel (rows of shape ``(Nb * G, n)``)."""
        return np.transpose(v.reshape(self.Nb, self.C, self.P), (1, 0, 2)).reshape(
            self.C, self.Nb * self.P)


def _backward(op, x, grad, normalized_shape, weight, bias, eps, centered, rounding, overflow,
              compute, order, algorithm, rsqrt, stats, accumulate, groups=None):
    arr = _float_array(op, x, "x")
    gl = None if groups is None else _Groups(op, tuple(arr.shape), groups)
    if gl is None:
        ns = _normalized_shape(op, normalized_shape, arr.shape)
        n = int(np.prod(ns, dtype=np.int64))
    else:
        ns, n = (gl.C,), gl.n
    G = grad_array(op, grad, arr.shape)
    e = _eps(op, eps)
    W, warr = _affine(op, weight, ns, "weight")
    B, barr = _affine(op, bias, ns, "bias")
    out = arr.dtype
    mode, rule = resolve_modes(rounding, overflow, out)
    model = _resolve_model(op, out, compute, order, algorithm, rsqrt, None, True, "centered",
                           mode)
    c = model.compute
    sfmt = c if stats is None else resolve_dtype(stats)
    afmt = None if accumulate is None else resolve_dtype(accumulate)
    X = _rows_of(arr, n)
    Gr = _rows_of(G, n)
    M = X.shape[0]
    if M * n == 0:
        raise ValueError(f"{op}.backward: x has no elements (shape {list(arr.shape)}); pass "
                         f"a non-empty x")
    Wr = None if W is None else W.reshape(n) if gl is None else gl.per_row(W)
    ps = _Pass(X, Gr, Wr, e, centered, out.component.precision)
    st = _Steps(c, mode)
    data = np.asarray(arr.numpy()).reshape(M, n)
    arr_rows = Array(np.where(ps.fin[:, None], data, 0).astype(data.dtype), out)
    band = {}

    def fwd():
        if not band:
            band["v"] = _forward_band(ps, arr_rows, model, sfmt)
        return band["v"]

    bad_rows = ~ps.fin[:, None] | np.array([d <= 0 for d in ps.Dl])[:, None]
    name = ("layer norm's CPU kernel" if gl is None else "group norm's CPU kernel") \
        if centered else "rms norm's autograd"
    models = [f"exact value rounded once into {out.name}",
              f"PyTorch's {name} in {c.name}, any summation order; mean and rstd from "
              f"{model.describe(centered, out)}, stored in {sfmt.name}"]
    details = {"rounding": mode, "overflow": rule, "n": n, "compute": c, "order": model.order,
               "algorithm": model.algorithm, "rsqrt": model.rsqrt, "stats": sfmt,
               "accumulate": afmt, "eps": e}
    fast = _fast_dx(ps, out.component.precision + 2) if out.component.precision <= 24 \
        else None
    rx = _assemble_pairs(ps.dx_pairs(None if fast is None else fast[0]), arr.shape, out, mode,
                         rule, fast)

    def dx_ends():
        m, a = fwd()
        if centered:
            lo, hi = _layer_dx_ends(ps, m, a, st, gl)
        else:
            lo, hi = _rms_dx_ends(ps, a, st)
        return lo.reshape(arr.shape), hi.reshape(arr.shape)

    bad_x = np.broadcast_to(bad_rows, (M, n)).reshape(arr.shape)
    grads = {"grad_x": _result(f"{op}.backward", rx, dx_ends, c, mode, rule, bad_x, models,
                               details)}
    bad = np.broadcast_to(bad_rows, (M, n))
    bad_cols = (bad.any(axis=0) if gl is None else gl.channel_rows(bad).any(axis=1)).reshape(ns)
    if W is not None:
        wfmt = warr.dtype
        wmode, wrule = mode, resolve_overflow(overflow, wfmt)
        fw = _fast_dw(ps, wfmt.component.precision + 2) \
            if gl is None and wfmt.component.precision <= 24 else None
        rw = _assemble_pairs(ps.dw_pairs(None if gl is None else gl.targets(),
                                         None if fw is None else fw[0]), ns, wfmt, wmode,
                             wrule, fw)

        def dw_ends():
            m, a = fwd()
            if gl is not None:
                lo, hi = _group_dw_ends(ps, m, a, st, gl.C, gl.G, gl.P)
            elif centered:
                lo, hi = _layer_dw_ends(ps, m, a, st, afmt)
            else:
                lo, hi = _rms_dw_ends(ps, a, st)
            return lo.reshape(ns), hi.reshape(ns)

        grads["grad_weight"] = _result(f"{op}.backward", rw, dw_ends, c, wmode, wrule,
                                       bad_cols, models, details)
    if B is not None:
        bfmt = barr.dtype
        brule = resolve_overflow(overflow, bfmt)
        Gf = np.where(ps.fin[:, None], Gr, np.nan)
        ex = rowsum_exact(np.ascontiguousarray(Gf.T if gl is None else gl.channel_rows(Gf)))
        vals = ex.round(bfmt.component, mode, brule)[0]
        rb = to_array([vals], bfmt, ns)

        def db_ends():
            lo, hi = _col_ends(ps, st, afmt) if gl is None else _group_db_ends(ps, st, gl.C,
                                                                                 gl.P)
            return lo.reshape(ns), hi.reshape(ns)

        grads["grad_bias"] = _result(f"{op}.backward", rb, db_ends, c, mode, brule, bad_cols,
                                     models, details)
    return Gradients(**grads)


def layer_norm_backward(x, grad, normalized_shape, weight=None, bias=None, eps=1e-5, *,
                        rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
                        algorithm="any", rsqrt=None, stats=None, accumulate=None, dtype=None,
                        policy="torch"):
    """Gradients of :func:`layer_norm` for the output gradient ``grad``: ``grad_x`` (x's shape
    and format), ``grad_weight`` and ``grad_bias`` (where given, in their formats), each
    element the exact derivative of the exact function, rounded once.

    The tolerance bounds PyTorch's CPU kernel (``dx = a dy w + b x + c`` from the sums ``ds``,
    ``db`` of the row, docs/normalizations.md "Backward"), computing in ``compute``, its sums
    in any order, with the saved mean and rstd of the forward model (``algorithm``,
    ``rsqrt``) stored in ``stats`` (default ``compute``; PyTorch stores them in x's format
    for float16 and bfloat16 unless the weight is float32), and the weight's and bias's
    gradients accumulated over the rows in ``accumulate`` buffers (PyTorch: x's format).

    >>> import exactref as er
    >>> g = er.layer_norm.backward([[1.0, 3.0]], [[1.0, 0.0]], 2, weight=[1.0, 1.0],
    ...                            bias=[0.0, 0.0], eps=0.0)
    >>> g.grad_x.rounded.tolist(), g.grad_weight.rounded.tolist(), g.grad_bias.rounded.tolist()
    ([[0.0, 0.0]], [-1.0, 0.0], [1.0, 0.0])
    """
    backward_keywords("layer_norm.backward", dtype, policy)
    return _backward("layer_norm", x, grad, normalized_shape, weight, bias, eps, True,
                     rounding, overflow, compute, order, algorithm, rsqrt, stats, accumulate)


def rms_norm_backward(x, grad, normalized_shape, weight=None, eps=None, *, rounding=_NE,
                      overflow=None, compute=None, order=DEFAULT_ORDER, rsqrt=None, dtype=None,
                      policy="torch"):
    """Gradients of :func:`rms_norm`: ``grad_x`` and ``grad_weight`` (where given), each the
    exact derivative rounded once; the tolerance bounds PyTorch's autograd of its composite
    ``x * rsqrt(mean(x**2) + eps) * w`` in ``compute`` (docs/normalizations.md, "Backward").

    >>> import exactref as er
    >>> g = er.rms_norm.backward([[3.0, 4.0]], [[1.0, 1.0]], 2, weight=[1.0, 1.0], eps=0.0)
    >>> g.grad_x.rounded.tolist()     # (1/r)(g - x mean(g x) / r**2), r**2 = 12.5
    [[0.04525483399593904, -0.03394112549695428]]
    >>> g.grad_weight.rounded.tolist()  # x / r
    [0.848528137423857, 1.131370849898476]
    """
    backward_keywords("rms_norm.backward", dtype, policy)
    if eps is None:
        from .._operands import compute_format

        arr = _float_array("rms_norm", x, "x")
        eps = 2.0 ** (1 - compute_format(arr.dtype, None).component.precision)
    return _backward("rms_norm", x, grad, normalized_shape, weight, None, eps, False,
                     rounding, overflow, compute, order, "any", rsqrt, None, None)


def group_norm_backward(x, grad, num_groups, weight=None, bias=None, eps=1e-5, *,
                        rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
                        algorithm="any", rsqrt=None, stats=None, dtype=None, policy="torch"):
    """Gradients of :func:`group_norm`: ``grad_x``, and ``grad_weight``, ``grad_bias`` (per
    channel, where given), each the exact derivative rounded once; the tolerance bounds
    PyTorch's CPU kernel (``GroupNormBackwardKernelImplInternal``: per-channel sums ``ds``,
    ``db`` in the compute format, ``dx = c1 dy + c2 x + c3``, ``dgamma = sum (ds - db m) a``;
    docs/normalizations.md, "Backward"), the saved statistics stored in ``stats``.

    >>> import exactref as er
    >>> g = er.group_norm.backward([[[1.0], [3.0]]], [[[1.0], [0.0]]], 1, weight=[1.0, 2.0],
    ...                            bias=[0.0, 0.0], eps=0.0)
    >>> g.grad_x.rounded.tolist(), g.grad_weight.rounded.tolist(), g.grad_bias.rounded.tolist()
    ([[[0.0], [0.0]]], [-1.0, 0.0], [1.0, 0.0])
    """
    backward_keywords("group_norm.backward", dtype, policy)
    return _backward("group_norm", x, grad, None, weight, bias, eps, True, rounding, overflow,
                     compute, order, algorithm, rsqrt, stats, None, groups=num_groups)


layer_norm.backward = layer_norm_backward
group_norm.backward = group_norm_backward
rms_norm.backward = rms_norm_backward
