"""The exact path of the row-root normalizations (``layer_norm``, ``group_norm``, ``rms_norm``,
``l2_normalize``): each element the exact value ``A / sqrt(D) + B`` decided once (see
:mod:`._norms` for the derivation), in float64 or double-double where an enclosure settles it,
by exact integer square roots otherwise.

Which normalization a row takes is data, a :class:`RowRoot` (the op record's ``exact``): per
row of ``n`` elements with the exact sums ``S = sum x`` and ``Q = sum x**2``,

* :data:`CENTERED` (layer and group norm): ``a = n x - S``, ``D = n Q - S**2 + n**2 eps``;
* :data:`SCALED` (rms norm): ``a = n x``, ``D = n Q + n**2 eps``;
* :data:`CLAMPED` (l2_normalize, ``x / max(||x||, eps)``): ``a = x``, ``D = max(Q, eps**2)``;

and ``y = a w / sqrt(D) + b``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._exact import ExactArray, from_integers
from .._formats import Format
from ._reductions import _int_rowsquares, _int_rowsums

__all__ = ["RowRoot", "CENTERED", "SCALED", "CLAMPED", "exact_values"]

_BITS = 113  # round-to-odd width of the exact path (>= 53 + 2)


@dataclass(frozen=True)
class RowRoot:
    """A row-root normalization's exact form (module docstring): ``centered`` (``a = n x - S``)
    or not; ``clamp``: the norm clamped at ``eps`` (``a = x``, ``D = max(Q, eps**2)``) rather
    than ``eps`` added to the mean square (``a = n x``); ``text`` what it computes."""

    centered: bool
    clamp: bool
    text: str

    def scale(self, n: int) -> int:
        """The integer factor of ``x`` in ``a`` (non-centered forms): ``n``, or 1 clamped."""
        return 1 if self.clamp else n

    def denominator(self, n: int, vs, es, vq, eq, en: int, ee_exp: int):
        """``(D, e)``: ``D 2**e`` for a row's exact ``S = vs 2**es``, ``Q = vq 2**eq`` and
        ``eps = en 2**-ee_exp``."""
        if self.clamp:  # max(Q, eps**2)
            lo = min(eq, -2 * ee_exp)
            return max(vq << (eq - lo), (en * en) << (-2 * ee_exp - lo)), lo
        lo = min(eq, 2 * es, -ee_exp)
        v = n * (vq << (eq - lo))
        if self.centered:
            v -= (vs * vs) << (2 * es - lo)
        v += (n * n * en) << (-ee_exp - lo)
        return v, lo


#: layer and group norm: ``(n x - S) / sqrt(n Q - S**2 + n**2 eps)``
CENTERED = RowRoot(True, False, "(x - mean) / sqrt(var + eps)")
#: rms norm: ``n x / sqrt(n Q + n**2 eps)``
SCALED = RowRoot(False, False, "x / sqrt(mean(x**2) + eps)")
#: l2_normalize: ``x / sqrt(max(Q, eps**2))``
CLAMPED = RowRoot(False, True, "x / max(sqrt(sum(x**2)), eps)")


# ------------------------------------------------------------------------- the exact path
def _dyadic(v: float):
    """``(m, e)`` Python ints with ``v == m * 2**e`` (finite ``v``)."""
    if v == 0:
        return 0, 0
    m, e = math.frexp(v)
    return int(math.ldexp(m, 53)), e - 53


def _odd_element(a, ea, d, ed, b, eb):
    """``y = a 2**ea / sqrt(d 2**ed) + b 2**eb`` (ints, ``d > 0``) as ``(W, e)``: ``y`` exactly
    where it has at most ``_BITS + 1`` bits at the scale found, else rounded to odd at
    ``_BITS + 1`` bits or more (``W`` odd, ``|W| >= 2**_BITS``); ``(0, 0)`` for an exact 0."""
    if ed & 1:
        d, ed = d << 1, ed - 1
    h = ed // 2
    if a == 0:
        return (b, eb) if b else (0, 0)
    top = a.bit_length() + ea - h - (d.bit_length() - 1) // 2
    if b:
        top = max(top, b.bit_length() + eb)
    s = _BITS + 4 - top
    a2 = a * a
    for _ in range(200):
        if b:
            s = max(s, -eb)
        m = ea - h + s
        if m >= 0:
            q, rem = divmod(a2 << (2 * m), d)
        else:
            q, rem = divmod(a2, d << (-2 * m))
        k = math.isqrt(q)
        pin = rem != 0 or k * k != q  # |a| 2**m / sqrt(d) is not an integer
        F = k if a > 0 else -(k + pin)  # floor(P 2**s)
        if b:
            F += b << (eb + s)
        # y 2**s in [F, F + 1), equal to F where not pin
        if not pin:
            return F, -s
        T = F if F >= 0 else -F - 1  # floor(|y| 2**s)
        if T.bit_length() >= _BITS + 1:
            sign = 1 if F >= 0 else -1
            return sign * (2 * T + 1), -s - 1
        s += _BITS + 8 - T.bit_length()
    raise ArithmeticError("exactref: a normalization did not converge (an exactref bug); "
                          "please report the inputs")


# ------------------------------------------------------------------------------- rows
class _Rows:
    """A batch of normalized slices: ``X (M, n)`` float64 data, per-element weights ``W`` and
    biases ``B`` (float64, broadcastable to ``X``, or None), ``eps`` (a Fraction), ``kind``
    the :class:`RowRoot` they take."""

    def __init__(self, X, W, B, eps: Fraction, kind: RowRoot, precision: int):
        self.X, self.W, self.B = X, W, B
        self.eps = eps
        self.kind = kind
        self.centered = kind.centered
        self.prec = precision
        self.M, self.n = X.shape
        self.scale = kind.scale(self.n)  # the factor of x in a (non-centered)

    def full(self, v, fill):
        return np.broadcast_to(np.asarray(fill if v is None else v, dtype=np.float64),
                               self.X.shape)


def _row_integers(rows: _Rows):
    """Per row: ``(S, eS)``, ``(D, eD)`` (Python ints: ``S 2**eS`` the exact sum, ``D 2**eD``
    as in the module docstring) for the finite rows; ``Q``'s too."""
    X = rows.X
    fin = np.isfinite(X).all(axis=1)
    Xf = np.where(np.isfinite(X), X, 0.0)
    VS, eS = _int_rowsums(Xf)
    VQ, eQ = _int_rowsquares(Xf, rows.prec)
    n = rows.n
    en, ee = rows.eps.numerator, rows.eps.denominator
    ee_exp = ee.bit_length() - 1  # eps is dyadic: its denominator a power of two
    Dl, eD = [], []
    for vs, es, vq, eq in zip(VS, eS, VQ, eQ, strict=True):
        v, lo = rows.kind.denominator(n, int(vs), int(es), int(vq), int(eq), en, ee_exp)
        Dl.append(v)
        eD.append(lo)
    return fin, VS, eS, Dl, eD, VQ, eQ


def exact_values(rows: _Rows, out: Format):
    """The exact values of every element, as an ExactArray of shape ``(M * n,)``."""
    M, n = rows.M, rows.n
    N = M * n
    X = rows.X
    fin, VS, eS, Dl, eD, _, _ = _row_integers(rows)
    W = rows.full(rows.W, 1.0)
    B = rows.full(rows.B, 0.0)
    ex = ExactArray.regular((N,), np.zeros(N), zsign=np.zeros(N, np.int8))
    special = np.zeros((M, n))
    # non-finite data (measured on PyTorch): layer/group norm make the whole row NaN; rms norm
    # (Q = inf, rsqrt(inf) = 0) makes finite elements 0 * w + b and the others NaN; NaN: NaN
    nanrow = np.isnan(X).any(axis=1)
    infrow = ~fin & ~nanrow
    with np.errstate(invalid="ignore"):
        if rows.centered:
            special[~fin] = np.nan
        else:
            special[nanrow] = np.nan
            special[infrow] = np.where(np.isfinite(X[infrow]), 0.0, np.nan)
    D0 = np.array([d == 0 for d in Dl], bool)  # 0 / 0: a constant row with eps = 0
    special[D0 & fin] = np.nan
    # the sign of the normalized value (exact): n x - S, or x
    zero_a = np.zeros((M, n), bool)
    zero_a[infrow] = np.isfinite(X[infrow])
    if rows.centered:  # a constant row: n x - S = 0 for every element
        with np.errstate(invalid="ignore"):
            const = fin & (X.max(axis=1, initial=-np.inf) == X.min(axis=1, initial=np.inf))
        zero_a[const] = True
    # elements whose normalized value is 0 (a constant row, x == mean, rms of zeros): y = b
    if not rows.centered:
        zero_a |= (X == 0) & fin[:, None]
    nonfin_wb = ~(np.isfinite(W) & np.isfinite(B))
    if nonfin_wb.any():
        with np.errstate(invalid="ignore"):
            # IEEE on a weight or bias that is not finite: sign(normalized) * w + b
            spec_wb = _normalized_sign(rows, VS, eS, fin) * W + B
        special = np.where(nonfin_wb & (special == 0) & ~np.isnan(special), spec_wb, special)
    is_sp = (special != 0) | np.isnan(special)
    ex.special = special.reshape(-1).copy()
    # y = b exactly where the normalized value is 0
    zb = (zero_a & ~is_sp).reshape(-1)
    bflat = B.reshape(-1)
    ex.c1[zb] = bflat[zb]
    ex.zero[zb] = bflat[zb] == 0
    ex.c1[ex.zero] = 0.0
    if not rows.centered:  # x / norm * w (+ b): a zero x keeps its sign through the product
        zx = zb & ex.zero
        neg = (np.signbit(X) ^ np.signbit(W)).reshape(-1)[zx]
        if rows.B is None:
            ex.zsign[zx] = np.where(neg, -1, 1)
        else:  # (+-0) + (+-0): IEEE's sum of two zeros (0: the mode decides, as IEEE says)
            nb = np.signbit(bflat)[zx]
            ex.zsign[zx] = np.where(neg & nb, -1, np.where(~neg & ~nb, 1, 0))
    todo = ~is_sp.reshape(-1) & ~zb
    done = np.zeros(N, bool)
    rows.K = out.component.precision + 2  # the cells: numbers of p + 2 bits
    if out.component.precision <= 24 and todo.any():
        done = _fast(rows, VS, eS, Dl, eD, todo, ex)
    elif todo.any():
        done = _fast_dd(rows, VS, eS, Dl, eD, todo, ex)
    slow = np.flatnonzero(todo & ~done)
    if slow.size:
        pairs = []
        Wf, Bf, Xf = W.reshape(-1), bflat, X.reshape(-1)
        for j in slow.tolist():
            i = j // n
            a, ea = _dyadic(float(Xf[j]))
            if rows.centered:
                a, ea = _sub(n * a, ea, int(VS[i]), int(eS[i]))
            else:
                a *= rows.scale
            mw, ew = _dyadic(float(Wf[j]))
            b, eb = _dyadic(float(Bf[j]))
            pairs.append(_odd_element(a * mw, ea + ew, Dl[i], eD[i], b, eb))
        part = from_integers(pairs, (len(pairs),))
        for name in ("c1", "c2", "r", "E", "zero", "zsign"):
            getattr(ex, name)[slow] = getattr(part, name)
    return ex


def _sub(a, ea, b, eb):
    """``a 2**ea - b 2**eb`` as ``(m, e)``."""
    lo = min(ea, eb)
    return (a << (ea - lo)) - (b << (eb - lo)), lo


def _normalized_sign(rows: _Rows, VS, eS, fin):
    """The exact sign of each element's normalized value (``n x - S``, or ``x``); 0 where the
    row is not finite."""
    X = rows.X
    if not rows.centered:
        return np.where(fin[:, None], np.sign(X), 0.0)
    out = np.zeros(X.shape)
    n = rows.n
    for i in np.flatnonzero(fin):
        mu = Fraction(int(VS[i])) * Fraction(2) ** int(eS[i]) / n
        lo = float(mu)
        # x > mu where x > float(mu) or (x == float(mu) and mu < x exactly)
        row = X[i]
        s = np.sign(row - lo)
        eq = row == lo
        if eq.any():
            s[eq] = (lo > mu) - (lo < mu)
        out[i] = s
    return out


# ----------------------------------------------------------------------- the fast path
def _row_factors(rows: _Rows, VS, eS, Dl, eD, dd: bool):
    """Per row: the mean as a double-double ``mu_hi + mu_lo`` (within ``2**-104 |mu|``), and
    ``sqrt(D) / s`` correctly rounded (``dd`` False) or ``s / sqrt(D)`` as a double-double
    within ``2**-104`` of it (``dd`` True), from the integers; NaN where out of range."""
    M, n = rows.M, rows.n
    s = n if rows.centered else rows.scale  # sqrt(D) / s: the factor of the centered x or x
    mu_hi = np.zeros(M)
    mu_lo = np.zeros(M)
    f_hi = np.full(M, np.nan)
    f_lo = np.zeros(M)
    for i in range(M):
        d = Dl[i]
        if d <= 0:
            continue
        try:
            if dd:  # R = isqrt(n**2 4**k / D) with >= 110 bits: n / sqrt(D) in [R, R + 1)
                dv, ev = d, int(eD[i])
                if ev & 1:
                    dv, ev = dv << 1, ev - 1
                k = 114 + dv.bit_length() // 2 - s.bit_length()
                R = math.isqrt(((s * s) << (2 * k)) // dv)
                hi = float(R)
                e = -k - ev // 2
                f_hi[i] = math.ldexp(hi, e)
                f_lo[i] = math.ldexp(float(R - int(hi)), e)
                ok = 2.0**-900 < f_hi[i] < 2.0**900
            else:
                sh = max(d.bit_length() - 64, 0)
                v = math.ldexp((d >> sh) / (s * s), int(eD[i]) + sh)
                f_hi[i] = math.sqrt(v)
                ok = 2.0**-1000 < v < 2.0**1000
            if rows.centered:
                vs, es = int(VS[i]), int(eS[i])
                k = max(0, 112 - (abs(vs).bit_length() - n.bit_length()))
                q = (vs << k) // n  # floor: within 2**-k (relative 2**-110)
                hi = float(q)
                mu_hi[i] = math.ldexp(hi, es - k)
                mu_lo[i] = math.ldexp(float(q - int(hi)), es - k)
                ok &= hi == 0 or 2.0**-900 < abs(mu_hi[i]) < 2.0**900
            if not ok:
                f_hi[i] = np.nan
        except (OverflowError, ValueError):
            f_hi[i] = np.nan
    return mu_hi, mu_lo, f_hi, f_lo


def _fast(rows: _Rows, VS, eS, Dl, eD, todo, ex) -> np.ndarray:
    """Decide elements in float64 (module docstring); returns the mask of those decided and
    writes their cell midpoints into ``ex``."""
    M, n = rows.M, rows.n
    X = rows.X
    mu_hi, mu_lo, sig, _ = _row_factors(rows, VS, eS, Dl, eD, False)
    u = 2.0**-53
    W = rows.full(rows.W, 1.0)
    B = rows.full(rows.B, 0.0)
    ok = np.zeros((M, n), bool)
    z = np.zeros((M, n))
    step = max(1, (1 << 15) // max(n, 1))  # blocks of rows that stay in cache
    for r0 in range(0, M, step):
        sl = slice(r0, r0 + step)
        ok[sl], z[sl] = _fast_block(X[sl], W[sl], B[sl], mu_hi[sl], mu_lo[sl], sig[sl],
                                    rows.centered, rows.K, u)
    ok = ok.reshape(-1) & todo
    ex.c1[ok] = z.reshape(-1)[ok]
    return ok


def _fast_block(X, W, B, mu_hi, mu_lo, sig, centered, K, u):
    """``(decided, cell midpoints)`` of a block of rows (see :func:`_fast`)."""
    with np.errstate(all="ignore"):
        if centered:
            s = X - mu_hi[:, None]
            bb = s - X
            e = (X - (s - bb)) + (-mu_hi[:, None] - bb)  # TwoSum: s + e = x - mu_hi
            t = e - mu_lo[:, None]
            d = s + t
            ed = u * np.abs(d) + u * np.abs(t) + 2.0**-100 * np.abs(mu_hi)[:, None]
        else:
            d = X
            ed = 0.0
        sg = sig[:, None]
        pr = (d / sg) * W
        y = pr + B
        err = (2.0**-48 * np.abs(pr) + 1.01 * ed * np.abs(W) / sg + 2.0**-52 * np.abs(y)
               + 2.0**-1000)
    return decide_cells(y, err, K)


def decide_cells(y, err, K):
    """``(decided, midpoints)``: where ``[y - err, y + err]`` lies inside one cell between
    consecutive numbers of ``K`` bits (away from 0, the subnormals and overflow)."""
    with np.errstate(all="ignore"):
        L, H = np.nextafter(y - err, -np.inf), np.nextafter(y + err, np.inf)
        ok = (np.isfinite(L) & np.isfinite(H) & np.isfinite(err) & (np.abs(y) > 2.0**-900)
              & (np.abs(y) < 2.0**900) & (np.sign(L) == np.sign(H)) & (L != 0))
        aL, aH = np.abs(L), np.abs(H)
        _, eL = np.frexp(aL)
        _, eH = np.frexp(aH)
        ok &= eL == eH
        fL, fH = np.ldexp(aL, K - eL), np.ldexp(aH, K - eH)
        cL, cH = np.floor(fL), np.floor(fH)
        ok &= (cL == cH) & (cL != fL) & (cH != fH)
        z = np.sign(y) * np.ldexp(cL + 0.5, eL - K)
    return ok, np.where(ok, z, 0.0)


def _fast_dd(rows: _Rows, VS, eS, Dl, eD, todo, ex) -> np.ndarray:
    """Decide the elements of a float64 output in double-double arithmetic: an enclosure of
    relative width about ``2**-100``, cells of 55 bits (docs/normalizations.md); writes
    ``c1 + c2`` (the cell's midpoint) into ``ex``, returns the mask of those decided."""
    M, n = rows.M, rows.n
    mu_hi, mu_lo, inv_hi, inv_lo = _row_factors(rows, VS, eS, Dl, eD, True)
    W = rows.full(rows.W, 1.0)
    B = rows.full(rows.B, 0.0)
    ok = np.zeros((M, n), bool)
    c1 = np.zeros((M, n))
    c2 = np.zeros((M, n))
    step = max(1, (1 << 14) // max(n, 1))
    for r0 in range(0, M, step):
        sl = slice(r0, r0 + step)
        ok[sl], c1[sl], c2[sl] = _dd_block(rows.X[sl], W[sl], B[sl], mu_hi[sl, None],
                                           mu_lo[sl, None], inv_hi[sl, None], inv_lo[sl, None],
                                           rows.centered)
    ok = ok.reshape(-1) & todo
    ex.c1[ok] = c1.reshape(-1)[ok]
    ex.c2[ok] = c2.reshape(-1)[ok]
    return ok


def _dd_block(X, W, B, mu_hi, mu_lo, inv_hi, inv_lo, centered):
    """``(decided, c1, c2)`` of a block of rows: ``y = (x - mu) w inv + b`` in double-double
    with the bound ``err`` (each term several times what the roundings need: ``e = 2**-53``;
    the products' and the reciprocal's errors are at most ``2**-101 |q1|``)."""
    from .._exact import two_product, two_sum

    e = 2.0**-53
    with np.errstate(all="ignore"):
        if centered:
            s, t = two_sum(X, -mu_hi)
            t1, t2 = two_sum(t, -mu_lo)
            dh, dl = two_sum(s, t1)
            dl = dl + t2
            ed = 2 * e * (np.abs(dl) + np.abs(t2)) + 2.0**-100 * np.abs(mu_hi)
        else:
            dh, dl, ed = X, np.zeros_like(X), 0.0
        p1, p2 = two_product(dh, W)
        p2 = p2 + dl * W
        q1, q2 = two_product(p1, inv_hi)
        q2 = q2 + (p1 * inv_lo + p2 * inv_hi)
        y1, s2 = two_sum(q1, B)
        t3 = s2 + q2  # its rounding: at most e |t3| (renormalizing below moves no error)
        y1, y2 = two_sum(y1, t3)
        err = (2.0**-97 * np.abs(q1) + 2 * ed * np.abs(W) * inv_hi + 4 * e * np.abs(q2)
               + 2 * e * np.abs(t3) + 2.0**-1000)
        m, E = np.frexp(np.abs(y1))
        q = np.ldexp(1.0, E - 55)  # the quantum of numbers of 55 bits in y1's binade
        fL = np.nextafter((y2 - err) / q, -np.inf)
        fH = np.nextafter((y2 + err) / q, np.inf)
        cL, cH = np.floor(fL), np.floor(fH)
        big = np.abs(X) + np.abs(W) + np.abs(p1) + np.abs(q1) + np.abs(B) + inv_hi
        ok = (np.isfinite(big) & (big < 2.0**900) & (np.abs(y1) > 2.0**-900) & (m != 0.5)
              & (err < q) & (cL == cH) & (cL != fL) & (cH != fH))
        mid = (cL + 0.5) * q
    return ok, y1, mid
