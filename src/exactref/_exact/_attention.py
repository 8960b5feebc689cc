"""Scaled dot-product attention of float64 operands, as an ExactArray that rounds like the exact
value into every format of at most ``bits`` bits, in every mode (private).

For a query row ``q_i``, keys ``k_j`` and values ``v_j`` (the keys a mask lets in: ``j in A_i``),
with ``sigma`` the scale and ``mask_ij`` a float mask's entry (0 without one)::

    s_ij = sigma * (q_i . k_j) + mask_ij
    out_il = sum_{j in A_i} e**s_ij v_jl / sum_{j in A_i} e**s_ij

``sigma`` is an exact real: ``1/sqrt(E)`` (irrational unless ``E`` is a perfect square) when the
caller gives none, else the float given, exactly.

Two tiers
---------
1. **float64, every element at once** (outputs of at most 40 bits), a batch entry's block of
   rows at a time (:func:`_row_blocks`): the dot products by GEMMs that the operands' quanta
   prove exact (:meth:`_Entry._quanta`, :meth:`_Entry._split_dots`; else Higham's bound
   ``gamma_E |q| |k|``), the scale enclosed from MPFR, the shifted scores ``t_ij`` exact or
   within ``tau_ij``, the exponentials by :func:`exp_mid` (within ``2**-51 v + 2**-1074``), the
   sums ``sum e [v | 1]`` by split GEMMs that are exact (:func:`_weighted_sums`), the quotient
   outward. Each output's round-to-odd value at ``P = bits + 2`` bits is decided where the
   enclosure lies strictly between two ``P``-bit numbers.
2. **MPFR, per row, Ziv's strategy**: the elements left (every one for outputs wider than 40
   bits) take the row's exact dot products (one GEMM where proven exact, else Python
   integers), the exact cases below, then interval arithmetic on MPFR at ``W = P + 24`` bits,
   doubling until decided.

Exact values (they would never decide, so they are found first)
--------------------------------------------------------------
The scores are algebraic (``sigma`` is ``1/sqrt(E)`` or a float, the dot products and masks
are rationals). Group the row's scores by value ``a`` and let ``n_a`` be the count and ``V_a``
the sum of ``v_jl`` over the group. By the Lindemann-Weierstrass theorem (Baker's form: for
distinct algebraic ``a_1 .. a_n`` the numbers ``e**a_1 .. e**a_n`` are linearly independent
over the algebraic numbers), ``out = r`` for an algebraic ``r`` means
``sum_a (V_a - r n_a) e**a = 0``, so ``V_a = r n_a`` for every group: **the output is algebraic
(and then rational) exactly when every group has the same mean of ``v_jl``**, and is that mean.
This holds for a row of one key (``out = v_j``), a row whose scores are all equal (the mean of
the ``v_j``), a column of ``v`` constant over the keys, and a zero output. Every other output is
transcendental, strictly inside its enclosures, and Ziv's loop ends; one still undecided at
``2**15`` bits raises an AssertionError naming it.

Equal scores are decided exactly: with an irrational ``sigma``, ``sigma d_j + m_j = sigma d_k +
m_k`` forces ``d_j = d_k`` and ``m_j = m_k`` (rationals); with a float ``sigma``, Fractions.

Special rows
------------
A row no key takes part in (every mask entry False or ``-inf``) is NaN (``0/0``; PyTorch 2.13
gives 0, see ``exactref.equivalents.torch``). A NaN or infinity in the query row or in a key that
takes part, a NaN or ``+inf`` mask entry: the row is NaN (the scores have no finite value). A
``v_jl`` that is NaN, or ``+inf`` and ``-inf`` both, makes ``out_il`` NaN; one infinity (of one
sign) makes it that infinity (every weight is positive).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ._mpfr import _context, _from_objects, _g, _round_fraction, _Values, _ziv_strict
from ._outward import MARGIN, U64, down, margin_up, up

__all__ = ["evaluate_attention", "enclose", "enclose_blocks", "exp_enclosure", "exp_mid", "Enclosure",
           "attention_chunk"]

_NAN, _INF = math.nan, math.inf
#: outputs of at most this many bits are decided by the float64 tier
_FAST_BITS = 40


# ------------------------------------------------------------------- a rigorous vectorized exp
_LN2_HI = float.fromhex("0x1.62e42fee00000p-1")  # fdlibm's ln2_hi (33 bits): k ln2_hi/64 exact
_LN2_LO = float.fromhex("0x1.a39ef35793c76p-33")  # ln2 - ln2_hi, to 2**-86
_INV64 = 64.0 / math.log(2.0)
_TAYLOR = [1.0 / math.factorial(n) for n in range(7)]
_REL = 2.0 ** -51  # exp_mid's relative error bound (3.2 units of 2**-53 proven, see exp_mid)
_TINY = 5e-324  # 2**-1074


@functools.cache
def _exp_table():
    """``2**(j/64)``, ``j = 0 .. 63``, each correctly rounded to float64 (MPFR)."""
    g = _g()
    ctx = g.context(precision=53, round=g.RoundToNearest)
    return np.array([float(ctx.exp2(g.mpfr(j) / 64)) for j in range(64)])


def _pow2_array(n):
    """``2.0**n`` for int64 ``n`` in ``[-1022, 1023]``, from the bits."""
    return ((n + 1023) << 52).view(np.float64)


def exp_mid(x):
    """float64 ``v`` with ``|e**x - v| <= 2**-51 v + 2**-1074`` for float64 ``x <= 709``
    (``-inf`` too).

    ``x = (64 n + j) ln2/64 + r`` with ``k = 64 n + j = rint(x 64/ln2)``: ``|k| < 2**17``, so
    ``k ln2_hi/64`` is exact (``ln2_hi`` has 33 bits) and ``r = (x - k ln2_hi/64) - k ln2_lo/64``
    is within ``0.0111 u + 2**-75`` of ``x - k ln2/64`` (``u = 2**-53``; ``|r| <= 0.00542``).
    ``e**r`` by its Taylor polynomial of degree 6 (remainder ``< 2**-64``) in Horner's form:
    Higham's (5.3) gives ``sum_i gamma_{2i+1} |r|**i / i! <= 1.017 u``, over ``e**r >= 0.9945``
    ``1.023 u`` relative (the coefficients ``1/i!``, ``i >= 3``, rounded: ``u |r|**3/6``).
    ``2**(j/64)`` from a table correctly rounded (``u``), the product (``u``), then the exact
    scaling by ``2**n`` (two steps below ``2**-1000``; a subnormal result rounds once, within
    ``2**-1075``): ``3.06 u < 3.2 u`` relative, and ``|e**x - v| <= 3.2 u v + 2**-1074``, inside
    ``2**-51 v + 2**-1074``. ``x < -745.2``: ``v`` is 0 or ``2**-1074``, within ``2**-1074``.
    """
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape
    x = np.maximum(x.reshape(-1), -746.0)
    k = np.multiply(x, _INV64)
    np.rint(k, out=k)
    r = np.multiply(k, -_LN2_HI / 64)
    r += x
    np.multiply(k, _LN2_LO / 64, out=x)  # x (a new array) is no longer needed
    r -= x
    p = np.multiply(r, _TAYLOR[6])
    p += _TAYLOR[5]
    for c in _TAYLOR[4::-1]:  # Horner: p = p r + 1/i!
        p *= r
        p += c
    ki = k.astype(np.int64)
    p *= _exp_table().take(ki & 63, mode="wrap")
    ki >>= 6
    if ki.size and ki.min() < -1022:
        lo = np.maximum(ki, -1000)
        p *= _pow2_array(lo)
        ki -= lo
    p *= _pow2_array(ki)
    return p.reshape(shape)


def exp_enclosure(x):
    """``(lo, hi)`` float64 arrays with ``lo <= e**x <= hi`` for float64 ``x <= 709``: the
    enclosure ``v -+ (2**-51 v + 2**-1074)`` of :func:`exp_mid`, rounded outward."""
    v = exp_mid(x)
    with np.errstate(over="ignore", under="ignore"):
        rad = up(v * _REL) + _TINY
        return np.maximum(down(v - rad), 0.0), up(v + rad)


def _gamma(n):
    """Higham's ``gamma_n = n u / (1 - n u)`` rounded up, with the blanket margin (the
    enclosures' older bound, kept bit for bit)."""
    return margin_up(up(n * U64 / (1.0 - n * U64)))


# ------------------------------------------------------------------------------- tier 1
class Enclosure:
    """The float64 tier's enclosures, kept for the tolerance models: ``allowed (B, L, S)``,
    the scores' ends ``s_lo, s_hi``, the weights' ends ``p_lo, p_hi`` (``e**s_ij / sum_j``),
    ``out_lo, out_hi (B, L, Ev)``, ``ok (B, L)`` the rows the tier could enclose (finite),
    ``d`` the dot products (float64 GEMM) and ``G`` the GEMM of ``|q| |k|``."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _scale_ends(scale, E):
    """``(lo, hi)`` float64 ends of the scale: the float given, or ``1/sqrt(E)``."""
    if scale is not None:
        return float(scale), float(scale)
    D, U = _context(53, "D"), _context(53, "U")
    return float(D.rec_sqrt(E)), float(U.rec_sqrt(E))


def _quantum(X, axis):
    """Per slice along ``axis``, the exponent ``b`` of the lowest set bit of the nonzero
    entries (finite float64): each entry is an integer times ``2**b`` (``2**20`` where all are
    zero)."""
    m, e = np.frexp(X)
    M = (m * 2.0 ** 53).astype(np.int64)  # exact: m has at most 53 bits
    _, tz = np.frexp((M & -M).astype(np.float64))  # the lowest set bit, 2**(tz - 1)
    return np.where(M != 0, e.astype(np.int64) + tz - 54, 1 << 20).min(axis=axis, initial=1 << 20)


def _norms_up(X):
    """Upper bounds of the rows' 2-norms (``sqrt(sum x**2)``: ``gamma_{n+2}`` and the root)."""
    with np.errstate(over="ignore"):
        return np.sqrt(np.einsum("...ij,...ij->...i", X, X)) * (1 + 2 * _gamma(X.shape[-1] + 4))


class _Sums:
    """One batch entry's values ``[V | 1]`` (finite ``v``, then the column of ones that sums the
    exponentials) and the split the exact GEMMs use (see :func:`_weighted_sums`)."""

    def __init__(self, V):
        S, Ev = V.shape
        self.S = S
        self.Va = np.empty((S, Ev + 1))
        self.Va[:, :Ev] = V
        self.Va[:, Ev] = 1.0
        self.abs = np.abs(self.Va)
        gS = _gamma(S + 2)
        self.gS = gS
        self.vabs = up(self.abs.sum(axis=0) * (1 + 2 * gS))  # sum_j |v_jl|, up
        beta = _quantum(self.Va, 0)
        _, ev = np.frexp(self.vabs)  # vabs < 2**ev
        live = self.vabs > 0
        k = int(np.min(np.where(live, 52 + beta - ev, 52), initial=52))
        k = min(k, 52)
        levels = 0 if k < 1 else min(3, -(-24 // k))
        bmin = int(np.min(np.where(live, beta, 1 << 20), initial=1 << 20))
        while levels and bmin - levels * k < -1074:
            levels -= 1
        self.k, self.levels = k, levels


def _weighted_sums(W, sums, rad=None):
    """``(N, Nr)``: ``N (l, Ev + 1)`` within ``Nr`` of ``sum_j w_ij [v_jl | 1]`` for the true
    weights ``w`` with ``|w - W| <= rad`` (``rad`` None: ``2**-51 W + 2**-1074``), ``0 <= W <= 1.5``
    (every ``W`` here is at most ``1 + 2**-40``: the exponentials of ``t <= 0``).

    The GEMMs are exact where they can be: ``W`` is split (Rump, Ogita and Oishi's
    ExtractScalar, SIAM J. Sci. Comput. 31(1), 2008, Lemma 3.3: ``q = fl(fl(p + s) - s)`` with
    ``s = 2**(53 - k)``, ``|p| <= s``, leaves ``p - q`` exact, ``q`` a multiple of ``2**-k`` and
    ``|p - q| <= 2**-k``) into ``levels`` parts of quantum ``2**-k``, ``2**-2k``, ... and a rest.
    Each part is an integer times ``2**-(i k)`` of size at most ``2 * 2**-((i-1) k)`` (the
    first: ``1.5 + 2**-k``); column
    ``l`` of ``[V | 1]`` is integers times ``2**b_l``; with ``2 sum_j |v_jl| <= 2**(53 + b_l - k)``
    every product and every partial sum of the GEMM, in any order, is an integer of at most 53
    bits times ``2**(b_l - i k) >= 2**-1074``: exact. The rest's GEMM is within ``gamma_S
    2**-(levels k) sum_j |v_jl|`` (Higham (3.4)), the parts' sum within ``gamma_{levels+1}``
    of the sum of their sizes."""
    S = sums.S
    gS = sums.gS
    A = W @ sums.abs  # sum_j W |v|: the radius's term
    rest = W.copy() if sums.levels else W
    parts = []
    for i in range(1, sums.levels + 1):
        s = 2.0 ** (53 - i * sums.k)
        hi = rest + s
        hi -= s
        rest -= hi
        parts.append(hi @ sums.Va)
    parts.append(rest @ sums.Va)
    N = parts[0]
    size = np.abs(parts[0])
    for P_ in parts[1:]:
        N = N + P_
        size += np.abs(P_)
    with np.errstate(over="ignore", under="ignore"):
        if sums.levels:
            rest_err = gS * 2.0 ** (-sums.levels * sums.k) * sums.vabs
        else:
            rest_err = gS * A * (1 + 2 * gS)
        if rad is None:
            rterm = _REL * A * (1 + 2 * gS) + _TINY * sums.vabs
        else:
            rterm = (rad @ sums.abs) * (1 + 2 * gS)
        Nr = _gamma(len(parts) + 1) * size + rest_err + rterm + (S + 4) * 4 * _TINY
        Nr = up(Nr * (1 + 2.0 ** -48))
    return N, Nr


class _Entry:
    """One batch entry's operands, their quanta and norms (the exactness conditions)."""

    def __init__(self, q, k, V, allowed, fm, sig):
        self.q, self.k, self.allowed, self.fm = q, k, allowed, fm
        self.all = allowed.all()
        self.sums = _Sums(V)
        self.sig = sig
        lo, hi = sig
        self.sign = -1.0 if hi < 0 else 1.0
        self.s_lo, self.s_hi = (-hi, -lo) if hi < 0 else (lo, hi)  # |sigma|'s ends
        m, e = math.frexp(self.s_lo)
        self.pow2 = e - 1 if (self.s_lo == self.s_hi and m == 0.5) else None
        self._quanta()
        self.exact = fm is None and self.s_lo > 0 and self._exact_differences()

    def _quanta(self):
        """Which dot products are exact: ``q_i . k_j`` is a sum of integers times ``2**(a_i +
        b_j)`` (``a_i``, ``b_j`` the quanta of the rows of ``q`` and ``k``), each partial sum at
        most ``|q_i| |k_j|`` (Cauchy-Schwarz); when that is at most ``2**(51 + a_i + b_j)``
        and the unit not below ``2**-1074``, every step of the GEMM, in any order, is exact.
        ``rq_i |k_j| 2**-b_j <= 2**51`` with ``rq_i = |q_i| 2**-a_i``."""
        q, k = self.q, self.k
        self.a, self.b = _quantum(q, 1), _quantum(k, 1)
        self.nq, self.nk = _norms_up(q), _norms_up(k)
        with np.errstate(over="ignore", under="ignore"):
            rq = np.ldexp(self.nq, -np.minimum(self.a, 1100))
            rk = np.ldexp(self.nk, -np.minimum(self.b, 1100))
        bmin = int(self.b.min(initial=1 << 20))
        rq[self.a + min(bmin, 1100) < -1074] = np.inf  # a unit could be subnormal
        self.rq, self.rk = rq, rk
        self.d_exact = float(rq.max(initial=0.0)) * float(rk.max(initial=0.0)) <= 2.0 ** 51

    def _split_dots(self, rows, levels=4):
        """``(D, err)``: the dot products of rows ``rows`` within ``err`` (``(l, S)``), by
        GEMMs made exact (float32 data, whose 48-bit products do not sum exactly): each row of
        ``q`` is split (ExtractScalar, as :func:`_weighted_sums`) into parts of quantum
        ``2**alpha_i``, ``alpha_i`` the least with ``|part_i| R <= 2**(51 + alpha_i)`` (``R =
        max_j |k_j| 2**-b_j``), so each part's GEMM is exact as in :meth:`_quanta`; the rest's
        within ``gamma_{E+2} |rest_i| max_j |k_j|``. The parts' sum, ``m`` additions, is within
        ``m u (|D| + sum_{l >= 2} |part_l| max |k|)``. None where no part can be exact."""
        q, k = self.q[rows], self.k
        E = q.shape[1]
        R = float(self.rk.max(initial=0.0))
        nk = float(self.nk.max(initial=0.0))
        bmin = int(self.b.min(initial=1 << 20))
        if not (1.0 <= R < 2.0 ** 900) or bmin >= 1 << 20:
            return None
        u_ = 2.0 ** -53
        parts, rest, tail = [], q, np.zeros(q.shape[0])
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for _ in range(levels):
                nr = _norms_up(rest)
                if not nr.any():
                    break
                bound = nr * R * (1 + 2.0 ** -50)
                if not np.isfinite(bound).all():
                    break
                _, e = np.frexp(bound)  # nr R < 2**e
                alpha = np.where(nr > 0, e.astype(np.int64) - 50, 0)
                if not (-1074 - min(bmin, 0) <= int(alpha.min()) and -1000 <= int(alpha.min()) + 53
                        and int(alpha.max()) + 53 <= 1000):
                    break
                sig = _pow2_array(alpha + 53)[:, None]  # |rest| <= nr <= 2**(alpha + 53)
                hi = rest + sig
                hi -= sig
                if not (np.ldexp(_norms_up(hi) * R * (1 + 2.0 ** -50), -(51 + alpha))
                        <= 1.0).all():
                    break
                if parts:
                    tail += _norms_up(hi)
                parts.append(hi)
                rest = rest - hi
            if not parts:
                return None
            D = parts[0] @ k.T
            for hi in parts[1:]:
                D += hi @ k.T
            nr = _norms_up(rest)
            m = len(parts)
            if nr.any():
                D += rest @ k.T
                m += 1
                tail += nr
            row = up(margin_up(m * u_ * up(tail * nk) + _gamma(E + 2) * up(nr * nk)))
            err = np.abs(D)
            err *= margin_up((m - 1) * u_)
            err += (row + E * 2 * _TINY)[:, None]
        return D, err

    def _exact_differences(self):
        """True when every dot product ``q_i . k_j`` and every difference ``d_ij - d_ij'`` is
        exact in float64 (in any order): the products are integers times ``2**(a_i + b)``
        (``a_i`` the quantum of row ``i``, ``b`` the smallest of the keys'), their partial sums
        and the differences at most ``2 |q_i| max_j |k_j|`` (Cauchy-Schwarz) ``<= 2**(52 +
        a_i + b)``, and the unit ``2**(a_i + b)`` not below ``2**-1074``."""
        a = self.a
        b = int(self.b.min(initial=1 << 20))
        if b >= 1 << 20:
            return True  # every key zero: every dot product is 0
        nq, nk = self.nq, float(self.nk.max(initial=0.0))
        live = a < 1 << 20
        if not live.any():
            return True
        a = a[live]
        with np.errstate(over="ignore", under="ignore"):
            ok = np.ldexp(2 * nq[live] * nk, -np.minimum(52 + a + b, 1100)) <= 1.0
        unit = int(a.min()) + b  # the smallest unit of a dot product
        if self.pow2 is not None and unit + self.pow2 < -1074:
            self.pow2 = None  # 2**m (d - d') could be subnormal: rounded, as any scale
        return bool(ok.all()) and unit >= -1074

    def scores(self, rows, want_all):
        """Rows ``rows`` of the shifted scores: ``(t, tau, extra)``, ``t_ij`` a float64 and
        ``tau_ij`` (None: 0) with ``|t_ij - (s_ij - c_i)| <= tau_ij`` for a common ``c_i`` per
        row (the softmax does not see it), ``-inf`` for the keys left out; ``extra`` the
        scores' ends, ``d`` and ``G`` when ``want_all``."""
        q, k = self.q[rows], self.k
        al = None if self.all else self.allowed[rows]
        u = 2.0 ** -53
        split = None if self.exact or self.d_exact else self._split_dots(rows)
        D = q @ k.T if split is None else split[0]
        extra = {}
        G = None
        if want_all or not (self.exact or self.d_exact or split is not None):
            G = np.abs(q) @ np.abs(k).T
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            if self.exact:
                if want_all:
                    extra["d"] = D.copy()
                    a, b = self.sign * self.s_lo * D, self.sign * self.s_hi * D
                    if self.pow2 is not None:  # exact
                        extra["s_lo"], extra["s_hi"] = a, b
                    else:
                        extra["s_lo"] = down(np.minimum(a, b) - 2 * _TINY)
                        extra["s_hi"] = up(np.maximum(a, b) + 2 * _TINY)
                    extra["G"] = G
                if self.sign < 0:
                    np.negative(D, out=D)
                if al is not None:
                    np.copyto(D, -np.inf, where=~al)
                c = D.max(axis=1, keepdims=True, initial=-np.inf)
                c[~np.isfinite(c)] = 0.0
                D -= c  # exact (the differences are)
                D *= self.s_lo
                t, tau = D, None
                if self.pow2 is None:  # |sigma| D rounded once, sigma within its ends
                    cf = margin_up(u + (self.s_hi - self.s_lo) / self.s_lo)
                    tau = np.multiply(t, -cf)
                    tau += 2 * _TINY
                    if al is not None:
                        tau[~al] = 0.0
                return t, tau, extra
            # general: the dot products within gamma_{E+2} G, the scale's ends, the mask added
            E = q.shape[1]
            P = D * (self.sign * self.s_lo)
            cf1 = ((self.s_hi - self.s_lo) / self.s_lo if self.s_lo > 0 else 0.0) + u
            tau_s = np.abs(P)
            tau_s *= cf1
            if split is not None:  # the split GEMMs' sum (_split_dots)
                errD = split[1]
                errD *= self.s_hi
                tau_s += errD
            elif not self.d_exact:  # the dot products not proven exact: within gamma_{E+2} G
                errD = up(_gamma(E + 2) * G) + E * 2 * _TINY
                errD[np.multiply.outer(self.rq[rows], self.rk) <= 2.0 ** 51] = 0.0
                tau_s += self.s_hi * errD
            if self.fm is not None:
                P += self.fm[rows]
                tau_s += np.abs(P) * u
            tau_s *= 1 + MARGIN
            tau_s += 4 * _TINY
            if want_all:
                extra.update(d=D, G=G, s_lo=down(P - tau_s), s_hi=up(P + tau_s))
            if al is not None:
                np.copyto(P, -np.inf, where=~al)
            c = P.max(axis=1, keepdims=True, initial=-np.inf)
            c[~np.isfinite(c)] = 0.0
            P -= c
            tau = np.abs(P) * u
            tau += tau_s
            tau *= 1 + MARGIN
            if al is not None:
                tau[~al] = 0.0
            return P, tau, extra


def _rows_out(ent, rows, want_all):
    """The first tier on rows ``rows`` of one batch entry: ``(olo, ohi, ok, extra)``."""
    t, tau, extra = ent.scores(rows, want_all)
    Ev = ent.sums.Va.shape[1] - 1
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        ok = np.ones(t.shape[0], bool)
        bad = np.isnan(t) | (t == np.inf)  # scores beyond float64: the row is not enclosed
        if tau is not None:
            bad |= ~np.isfinite(tau)
        bad = bad.any(axis=1)
        if bad.any():
            ok &= ~bad
            t[bad] = -np.inf
            if tau is not None:
                tau[bad] = 0.0
        W = exp_mid(t)
        if not ent.all:
            W[~ent.allowed[rows]] = 0.0
        rad = None
        if tau is not None:
            big = (tau > 0.01).any(axis=1)
            wide = (t[big], tau[big]) if big.any() else None
            if wide is not None:
                np.minimum(tau, 0.01, out=tau)
            # |e**(t + d) - W| <= W (2**-51 + 1.0101 tau) + 2**-1073 for |d| <= tau <= 0.01
            rad = np.multiply(tau, 1.02)
            rad += _REL
            rad *= W
            rad *= 1 + 2.0 ** -48
            rad += 2 * _TINY
            if wide is not None:  # rows with a score error above 0.01
                W[big], rad[big] = _wide(*wide)
        N, Nr = _weighted_sums(W, ent.sums, rad)
        Nlo, Nhi = down(N - Nr), up(N + Nr)
        Slo, Shi = Nlo[:, Ev:], Nhi[:, Ev:]
        ok &= Slo[:, 0] > 0
        Sl = np.where(Slo > 0, Slo, np.nan)
        Nlo, Nhi = Nlo[:, :Ev], Nhi[:, :Ev]
        olo = down(np.where(Nlo >= 0, Nlo / Shi, Nlo / Sl))
        ohi = up(np.where(Nhi >= 0, Nhi / Sl, Nhi / Shi))
        ok &= np.all(np.isfinite(olo) & np.isfinite(ohi), axis=1)
        if want_all:
            # the weights' ends (W -+ r) / S: one reciprocal per row, and two roundings to
            # nearest covered by 2**-49 (W * 2**-51 is exact for a normal result; the bound's
            # 2**-1074 matters only for a subnormal W, where 4 * 2**-1074 covers it)
            if rad is None:
                r = W * _REL
                r += 4 * _TINY
            else:
                r = rad
            lo = np.subtract(W, r)
            lo *= down(down(1.0 / Shi) * (1 - 2.0 ** -49))
            lo -= _TINY  # a subnormal product's rounding
            extra["p_lo"] = np.maximum(lo, 0.0, out=lo)
            hi = np.add(W, r)
            hi *= up(up(1.0 / Sl) * (1 + 2.0 ** -49))
            hi += _TINY
            extra["p_hi"] = np.minimum(hi, 1.0, out=hi)
            if bad.any():  # what is known without the scores: a weight lies in [0, 1]
                extra["p_lo"][bad], extra["p_hi"][bad] = 0.0, 1.0
        olo[bad], ohi[bad] = -np.inf, np.inf
    return olo, ohi, ok, extra


def _wide(t, tau, u=2.0 ** -52):
    """``(W, rad)`` of ``e**(t + d - m)``, ``|d| <= tau``, for rows whose score errors exceed
    0.01 (``m`` each row's largest ``tau``: a common shift, so no upper end passes ``e**0``),
    from :func:`exp_enclosure` of the ends."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        fin = np.isfinite(t)
        ts = np.where(fin, t - tau.max(axis=1, keepdims=True), -np.inf)
        tt = np.where(fin, up(tau + up(np.abs(ts) * u) + 2 * _TINY), 0.0)
        lo = exp_enclosure(np.where(fin, down(ts - tt), -np.inf))[0]
        hi = exp_enclosure(np.where(fin, up(ts + tt), -np.inf))[1]
        W = 0.5 * (lo + hi)
        rad = up(np.maximum(up(hi - W), up(W - lo)))
        W[~fin], rad[~fin] = 0.0, 0.0
    return W, rad


_BLOCK = 1 << 17  # scores per block of rows: the (rows, S) temporaries stay in the cache


def _row_blocks(Q, K, V, allowed, fm, scale, want_all):
    """The first tier over one chunk, a batch entry's block of rows at a time: yields ``(b,
    rows, olo, ohi, ok, extra)`` (``extra``: the block's scores' ends, weights' ends, ``d`` and
    ``G`` when ``want_all``)."""
    B, L, E = Q.shape
    S = K.shape[1]
    sig = _scale_ends(scale, E)
    Vf = np.where(np.isfinite(V), V, 0.0)
    step = max(1, _BLOCK // max(S, 1))
    for b in range(B):
        ent = _Entry(Q[b], K[b], Vf[b], allowed[b], None if fm is None else fm[b], sig)
        for i0 in range(0, L, step):
            rows = slice(i0, min(L, i0 + step))
            lo, hi, ok, extra = _rows_out(ent, rows, want_all)
            ok &= allowed[b, rows].any(axis=1)
            yield b, rows, lo, hi, ok, extra


def _tier1_parts(Q, K, V, allowed, fm, scale, want_all):
    B, L, E = Q.shape
    S = K.shape[1]
    Ev = V.shape[2]
    olo = np.empty((B, L, Ev))
    ohi = np.empty((B, L, Ev))
    ok = np.empty((B, L), bool)
    full = {}
    if want_all:
        full = {n: np.empty((B, L, S)) for n in ("s_lo", "s_hi", "p_lo", "p_hi", "d", "G")}
    for b, rows, lo, hi, okr, extra in _row_blocks(Q, K, V, allowed, fm, scale, want_all):
        olo[b, rows], ohi[b, rows], ok[b, rows] = lo, hi, okr
        for n, arr in extra.items():
            full[n][b, rows] = arr
    return olo, ohi, ok, full


def _tier1(Q, K, V, allowed, fmask, scale):
    """The first tier's :class:`Enclosure` of a chunk of the batch (every field)."""
    olo, ohi, ok, full = _tier1_parts(Q, K, V, allowed, fmask, scale, True)
    return Enclosure(allowed=allowed, out_lo=olo, out_hi=ohi, ok=ok, **full)


def _decide_float(lo, hi, P):
    """Vectorized round-to-odd at ``P`` bits of values strictly inside ``[lo, hi]`` (float64):
    ``(decided, mant, e)`` with ``value ~ mant * 2**e`` (``mant`` odd, ``P`` bits, signed)."""
    with np.errstate(invalid="ignore", over="ignore"):
        ml, el = np.frexp(np.abs(lo))
        mh, eh = np.frexp(np.abs(hi))
        sl, sh = ml * 2.0 ** P, mh * 2.0 ** P
        tl, th = np.floor(sl), np.floor(sh)
        same_sign = ((lo > 0) & (hi > 0)) | ((lo < 0) & (hi < 0))
        decided = (same_sign & (el == eh) & (tl == th) & (tl != sl) & (th != sh)
                   & np.isfinite(lo) & np.isfinite(hi) & (np.abs(el) < 1000))
        N = np.where(decided, tl, 0).astype(np.int64) | 1
    return decided, np.where(lo < 0, -N, N), el.astype(np.int64) - P


# ------------------------------------------------------------------------------- tier 2
def _int_parts(x):
    """float64 array -> (int64 mantissas of 53 bits, exponents) with ``x = m * 2**e``."""
    m, e = np.frexp(x)
    return (m * 2.0 ** 53).astype(np.int64), e.astype(np.int64) - 53


def _dots_from_gemm(q, Kr):
    """:func:`_exact_dots` by one float64 GEMM when the quanta prove every dot product exact
    (as :meth:`_Entry._quanta`, with the keys' smallest quantum), else None."""
    S = Kr.shape[0]
    a = int(_quantum(q[None], 1)[0])
    b = _quantum(Kr, 1)
    if a >= 1 << 20 or not (b < 1 << 20).any():
        return [0] * S, 0
    bmin = int(b.min())
    emin = a + bmin
    if emin < -1074:
        return None
    with np.errstate(over="ignore", under="ignore"):
        bound = float(_norms_up(q[None])[0]) * float(_norms_up(Kr).max())
        if not np.ldexp(bound, -min(51 + emin, 1100)) <= 1.0:
            return None
        D = Kr @ q  # exact: each a multiple of 2**emin
    m, e = np.frexp(D)
    M = (m * 2.0 ** 53).astype(np.int64).tolist()
    sh = (e.astype(np.int64) - 53 - emin).tolist()
    return [x << t if t >= 0 else x >> -t for x, t in zip(M, sh, strict=True)], emin


def _exact_dots(q, Kr):
    """The exact dot products ``q . k_j`` (finite float64) as ``(ints, exponent)``."""
    fast = _dots_from_gemm(q, Kr) if Kr.shape[0] else None
    if fast is not None:
        return fast
    mq, eq = _int_parts(q)
    mk, ek = _int_parts(Kr)
    nzq = mq != 0
    tot = eq[None, :] + ek
    live = nzq[None, :] & (mk != 0)
    if not live.any():
        return [0] * Kr.shape[0], 0
    emin = int(tot[live].min())
    sh = (tot - emin).tolist()
    mql, mkl, lv = mq.tolist(), mk.tolist(), live.tolist()
    out = []
    for j in range(Kr.shape[0]):
        acc = 0
        row, shj, lj = mkl[j], sh[j], lv[j]
        for e in range(len(mql)):
            if lj[e]:
                acc += (mql[e] * row[e]) << shj[e]
        out.append(acc)
    return out, emin


def _exact_groups(dots, emin, fm, scale):
    """One hashable key per key, equal exactly where the scores are: ``scale`` a rational scale
    (a float or a Fraction), or None for an irrational one."""
    if scale is not None and scale != 0 and not any(fm):  # no mask: d alone decides
        return list(dots)
    if scale is None:  # sigma irrational: sigma d + m = sigma d' + m' iff d = d' and m = m'
        return [(d, f) for d, f in zip(dots, fm, strict=True)]
    s = Fraction(scale)
    two = Fraction(2) ** emin
    return [s * d * two + Fraction(f) for d, f in zip(dots, fm, strict=True)]


def _exact_value(keys, vcol):
    """The output if every score group has the same mean of ``v`` (a Fraction), else None."""
    first = vcol[0]
    if all(v == first for v in vcol):  # one value: it is every group's mean
        return Fraction(first)
    if len(set(keys)) == len(keys):  # every group one key: their values differ
        return None
    sums, counts = {}, {}
    for key, v in zip(keys, vcol, strict=True):
        sums[key] = sums.get(key, 0) + Fraction(v)
        counts[key] = counts.get(key, 0) + 1
    means = {sums[a] / counts[a] for a in sums}
    return means.pop() if len(means) == 1 else None


def _row_tier2(q, Kr, Vr, fm, scale, E, cols, P):
    """Values (objects for :func:`_from_objects`) of the columns ``cols`` of one row with
    finite scores: the exact ones, then Ziv on MPFR."""
    dots, emin = _exact_dots(q, Kr)
    keys = _exact_groups(dots, emin, fm, _rational_scale(scale, E))
    out = {}
    todo = []
    for col in cols:
        r = _exact_value(keys, Vr[:, col].tolist())
        if r is not None:
            out[col] = 0.0 if r == 0 else _round_fraction(r, P)
        else:
            todo.append(col)

    def ends(D, U, todo):  # the columns' values enclosed at the contexts' precision
        sg = scale_enclosure(D, U, scale, E)
        _, elo, ehi, Slo, Shi = score_exps(D, U, sg, dots, fm, emin)
        for col in todo:
            vs = Vr[:, col].tolist()
            nlo = D.fsum([D.mul(a if v >= 0 else b, v) for a, b, v in zip(elo, ehi, vs, strict=True)])
            nhi = U.fsum([U.mul(b if v >= 0 else a, v) for a, b, v in zip(elo, ehi, vs, strict=True)])
            yield D.div(nlo, Shi if nlo >= 0 else Slo), U.div(nhi, Slo if nhi >= 0 else Shi)

    out.update(_ziv_strict(todo, P, ends, lambda: f"attention of the query {q.tolist()!r}"))
    return out


def score_exps(D, U, sg, dots, fm, emin):
    """A row's scores ``s_j = sigma d_j 2**emin + f_j`` enclosed in the contexts ``D`` (down)
    and ``U`` (up) for ``sigma`` in ``sg``, and their exponentials ``e**(s_j - c)`` at the
    largest upper end ``c``: ``(upper ends, elo, ehi, sum's lower end, sum's upper end)``."""
    g = _g()
    slo, shi = [], []
    for d, f in zip(dots, fm, strict=True):
        dl = D.mul_2exp(g.mpz(d), emin)
        dh = U.mul_2exp(g.mpz(d), emin)
        cands_lo = [D.mul(sg[0], dl), D.mul(sg[1], dl), D.mul(sg[0], dh), D.mul(sg[1], dh)]
        cands_hi = [U.mul(sg[0], dl), U.mul(sg[1], dl), U.mul(sg[0], dh), U.mul(sg[1], dh)]
        slo.append(D.add(min(cands_lo), f))
        shi.append(U.add(max(cands_hi), f))
    c = max(shi)
    elo = [D.exp(D.sub(a, c)) for a in slo]
    ehi = [U.exp(U.sub(b, c)) for b in shi]
    return shi, elo, ehi, D.fsum(elo), U.fsum(ehi)


def scale_enclosure(D, U, scale, E):
    """MPFR ends ``(lo, hi)`` of the scale in the contexts ``D`` (down) and ``U`` (up): the
    float given, or ``1/sqrt(E)`` rounded each way."""
    if scale is None:
        return D.rec_sqrt(E), U.rec_sqrt(E)
    g = _g()
    return g.mpfr(scale), g.mpfr(scale)


def _rational_scale(scale, E):
    """``sigma`` as a Fraction where it is rational: a given scale (a float, exact), or
    ``1/sqrt(E)`` for a perfect square ``E`` (``1/3`` for ``E = 9``: not a float, so a float
    mask can make ``sigma d + m`` equal across keys only in exact arithmetic); None where
    ``1/sqrt(E)`` is irrational."""
    if scale is not None:
        return Fraction(scale)
    r = math.isqrt(E)
    return Fraction(1, r) if r * r == E else None


# ------------------------------------------------------------------------------- driver
def evaluate_attention(Q, K, V, allowed, fmask=None, scale=None, bits: int = 53,
                       keep: list | None = None):
    """Attention of float64 ``Q (B, L, E)``, ``K (B, S, E)``, ``V (B, S, Ev)`` with the keys
    ``allowed (B, L, S)`` (bool) and a float mask ``fmask (B, L, S)`` added to the scores (or
    None), ``scale`` a float or None (the real ``1/sqrt(E)``): an ExactArray of shape
    ``(B, L, Ev)`` rounding like the exact values into every format of at most ``bits`` bits in
    every mode (in chunks of the batch; :func:`enclose` gives the float64 tier's
    enclosures; a list ``keep`` receives them when the batch is one chunk).

    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> Q = np.array([[[1.0, 0.0]]]); K = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> V = np.array([[[1.0], [0.0]]])
    >>> ex = evaluate_attention(Q, K, V, np.ones((1, 1, 2), bool), bits=24)
    >>> ex.round(FORMATS["float32"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()  # 1/(1+e**-1/sqrt2)
    [0.6697615385055542]
    """
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    B, L, E = Q.shape
    S, Ev = V.shape[1:]
    P = bits + 2
    values = _Values.empty(B * L * Ev, max(P, 53))
    idx, objs = [], []
    step = attention_chunk(L, S)
    for b0 in range(0, B, step):
        b1 = min(B, b0 + step)
        pr = _prepared(Q[b0:b1], K[b0:b1], V[b0:b1], allowed[b0:b1],
                       None if fmask is None else fmask[b0:b1])
        whole = keep is not None and b0 == 0 and b1 == B
        if P <= _FAST_BITS or whole:
            olo, ohi, ok, full = _tier1_parts(pr.Qs, pr.Ks, V[b0:b1], pr.allowed, pr.fm,
                                              scale, whole)
        if whole:  # the model reads them: not computed again
            keep.append(Enclosure(allowed=pr.allowed, out_lo=olo, out_hi=ohi, ok=ok, **full))
        full = None
        base = b0 * L * Ev
        n = (b1 - b0) * L * Ev
        flat_special = pr.is_special.reshape(-1)
        at = base + np.flatnonzero(flat_special)
        values.special[at] = pr.special.reshape(-1)[flat_special]
        decided = np.zeros(n, bool)
        if P <= _FAST_BITS:
            dec, N, e = _decide_float(olo, ohi, P)
            dec = (dec & ok[..., None] & ~pr.is_special).reshape(-1)
            L_ = values.L
            at = base + np.flatnonzero(dec)
            values.mant[at] = N.reshape(-1)[dec] << np.int64(L_ - P)
            values.e[at] = e.reshape(-1)[dec] - (L_ - P)
            decided = dec
        left = np.flatnonzero(~decided & ~flat_special)
        rows = {}
        b_, i_, l_ = np.unravel_index(left, (b1 - b0, L, Ev))
        for b, i, col in zip(b_.tolist(), i_.tolist(), l_.tolist(), strict=True):
            rows.setdefault((b, i), []).append(col)
        for (b, i), cols in rows.items():
            keys = np.flatnonzero(pr.allowed[b, i])
            fmr = [0.0] * len(keys) if pr.fm is None else pr.fm[b, i, keys].tolist()
            got = _row_tier2(Q[b0 + b, i], K[b0 + b, keys], V[b0 + b, keys], fmr, scale, E,
                             cols, P)
            for col, v in got.items():
                idx.append(((b0 + b) * L + i) * Ev + col)
                objs.append(v)
    if idx:
        values.put(np.array(idx, dtype=np.int64), _from_objects(objs, P))
    return values.exact((B, L, Ev))


def attention_chunk(L, S):
    """Batch entries per chunk: the first tier's (L, S) temporaries stay near 2**22 elements."""
    return max(1, (1 << 22) // max(L * S, 1))


class _Prepared:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _prepared(Q, K, V, allowed, fmask):
    """The special rows and columns, and the operands the first tier reads (specials zeroed,
    keys behind a ``-inf`` mask left out)."""
    allowed = np.asarray(allowed, dtype=bool)
    if fmask is not None:
        fmask = np.asarray(fmask, dtype=np.float64)
        allowed = allowed & (fmask != -np.inf)
    with np.errstate(invalid="ignore"):
        qbad = ~np.isfinite(Q).all(axis=2)  # (B, L)
        kbad = ~np.isfinite(K).all(axis=2)  # (B, S)
        row_nan = qbad | ~allowed.any(axis=2)
        if kbad.any():
            row_nan |= (allowed & kbad[:, None, :]).any(axis=2)
        if fmask is not None:
            row_nan |= (allowed & (np.isnan(fmask) | (fmask == np.inf))).any(axis=2)
        B, L = row_nan.shape
        cnt_nan = cnt_pos = cnt_neg = np.zeros((B, L, V.shape[2]), np.int64)
        if not np.isfinite(V).all():  # how many keys of each row bring each kind
            a = allowed.astype(np.int64)
            cnt_nan = a @ np.isnan(V).astype(np.int64)
            cnt_pos = a @ (V == np.inf).astype(np.int64)
            cnt_neg = a @ (V == -np.inf).astype(np.int64)
    special = np.where((cnt_nan > 0) | ((cnt_pos > 0) & (cnt_neg > 0)), _NAN,
                       np.where(cnt_pos > 0, _INF, np.where(cnt_neg > 0, -_INF, 0.0)))
    special = np.where(row_nan[..., None], _NAN, special)
    is_special = row_nan[..., None] | (cnt_nan + cnt_pos + cnt_neg > 0)
    ok = allowed & ~row_nan[..., None] if row_nan.any() else allowed
    return _Prepared(allowed=ok, fm=None if fmask is None else np.where(ok, fmask, 0.0),
                     Qs=np.where(row_nan[..., None], 0.0, Q) if row_nan.any() else Q,
                     Ks=np.where(np.isfinite(K), K, 0.0) if kbad.any() else K, special=special,
                     is_special=is_special)


def enclose(Q, K, V, allowed, fmask=None, scale=None) -> Enclosure:
    """The first tier's float64 enclosures (:class:`Enclosure`) of a batch (the tolerance
    models read them; call it on chunks of the batch: its temporaries are ``(B, L, S)``)."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    pr = _prepared(Q, K, V, allowed, fmask)
    return _tier1(pr.Qs, pr.Ks, V, pr.allowed, pr.fm, scale)


def enclose_blocks(Q, K, V, allowed, fmask=None, scale=None):
    """The first tier's enclosures a block at a time: yields ``(b, rows, enc)``, ``enc`` an
    :class:`Enclosure` of batch entry ``b``'s rows ``rows`` (arrays of shape ``(1, l, S)`` and
    ``(1, l, Ev)``): the tolerance models read them without ``(B, L, S)`` arrays."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    B, L = Q.shape[:2]
    step = attention_chunk(L, K.shape[1])
    for b0 in range(0, B, step):
        sl = slice(b0, min(B, b0 + step))
        pr = _prepared(Q[sl], K[sl], V[sl], allowed[sl], None if fmask is None else fmask[sl])
        for b, rows, lo, hi, ok, extra in _row_blocks(pr.Qs, pr.Ks, V[sl], pr.allowed, pr.fm,
                                                      scale, True):
            yield b0 + b, rows, Enclosure(
                allowed=pr.allowed[b:b + 1, rows], out_lo=lo[None], out_hi=hi[None],
                ok=ok[None], **{n: a[None] for n, a in extra.items()})
