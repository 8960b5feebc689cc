"""Scaled dot-product attention of float64 operands, as an ExactArray that rounds like the exact
value into every format of at most ``bits`` bits, in every mode (private).

For a query row ``q_i``, keys ``k_j`` and values ``v_j`` (the keys a mask lets in: ``j in A_i``),
with ``sigma`` the scale and ``mask_ij`` a float mask's entry (0 without one)::

    s_ij = sigma * (q_i . k_j) + mask_ij
    out_il = sum_{j in A_i} e**s_ij v_jl / sum_{j in A_i} e**s_ij

``sigma`` is an exact real: ``1/sqrt(E)`` (irrational unless ``E`` is a power of 4) when the
caller gives none, else the float given, exactly.

Two tiers
---------
1. **float64 intervals, every element at once** (outputs of at most 40 bits): the dot products
   by one GEMM with Higham's bound ``gamma_E |q| |k|``, the scale enclosed from MPFR, the
   exponentials by a rigorous vectorized ``exp`` (:func:`exp_enclosure`: Cody-Waite reduction
   and a Taylor polynomial, widened by ``2**-44`` relative), their sum and ``sum e v`` by GEMMs
   in midpoint-radius form with Higham's bound, the quotient outward. Each output's round-to-odd
   value at ``P = bits + 2`` bits is decided where the enclosure lies strictly between two
   ``P``-bit numbers.
2. **MPFR, per row, Ziv's strategy**: the elements left (every one for outputs wider than 40
   bits) take the row's exact dot products (Python integers), the exact cases below, then
   interval arithmetic on MPFR at ``W = P + 24`` bits, doubling until decided.

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

import math
from fractions import Fraction

import numpy as np

from ._functions import _W0, _W_MAX, _context, _from_objects, _g, _round_fraction, _Values
from ._softmax import _decide_strict

__all__ = ["evaluate_attention", "enclose", "exp_enclosure", "Enclosure"]

_NAN, _INF = math.nan, math.inf
#: outputs of at most this many bits are decided by the float64 tier
_FAST_BITS = 40
_REL = 2.0 ** -44  # the vectorized exp's relative enclosure (see exp_enclosure)


def _dn(v):
    return np.nextafter(v, -np.inf)


def _up(v):
    return np.nextafter(v, np.inf)


# ------------------------------------------------------------------- a rigorous vectorized exp
_LN2_HI = float.fromhex("0x1.62e42fee00000p-1")  # fdlibm's ln2_hi: k * ln2_hi exact, |k| < 2**20
_LN2_LO = float.fromhex("0x1.a39ef35793c76p-33")  # ln2 - ln2_hi, to 2**-86
_INV_N = [1.0 / math.factorial(n) for n in range(18)]


def exp_enclosure(x):
    """``(lo, hi)`` float64 arrays with ``lo <= e**x <= hi`` for float64 ``x <= 709``.

    ``x = k ln2 + r``, ``k = rint(x / ln2)``, ``r = (x - k ln2_hi) - k ln2_lo``: ``|r| <= 0.3466 +
    2**-40`` and ``r``'s error at most ``2**-53`` (two roundings of results below 0.35, ``k ln2_lo``
    to ``2**-60``, ``ln2``'s tail ``|k| 2**-86``): a relative ``2**-52`` on ``e**r``. ``e**r`` by the
    Taylor polynomial of degree 17 (remainder ``< 2**-78``) in Horner's form: at most
    ``gamma_35 e**|r| / e**r <= 35 * 2**-53 * 2.01 < 2**-46`` relative (coefficients rounded, each
    multiplication and addition rounded, Higham (5.3)). ``ldexp`` by ``k`` is exact unless the
    result is subnormal (then within ``2**-1075``). So ``lo = p (1 - 2**-44) 2**k - 2**-1074``
    and ``hi = p (1 + 2**-44) 2**k + 2**-1074``, rounded outward; ``x < -745.2``: ``[0, 2**-1074]``.
    """
    x = np.asarray(x, dtype=np.float64)
    far = x < -745.2
    xs = np.where(far, 0.0, x)
    k = np.rint(xs * (1.0 / math.log(2.0)))
    r = (xs - k * _LN2_HI) - k * _LN2_LO
    p = np.full(xs.shape, _INV_N[17])
    for c in reversed(_INV_N[:17]):
        p = p * r + c
    ki = k.astype(np.int64)
    with np.errstate(over="ignore", under="ignore"):
        lo = _dn(np.ldexp(_dn(p * (1.0 - _REL)), ki) - 5e-324)
        hi = _up(np.ldexp(_up(p * (1.0 + _REL)), ki) + 5e-324)
    lo = np.where(far, 0.0, np.maximum(lo, 0.0))
    hi = np.where(far, 5e-324, hi)
    return lo, hi


def _gamma(n):
    u = 2.0 ** -53
    return _up(n * u / (1.0 - n * u)) * (1 + 2.0 ** -40)


# ------------------------------------------------------------------------------- tier 1
class Enclosure:
    """The float64 tier's enclosures, kept for the tolerance models: ``allowed (B, L, S)``,
    the scores' ends ``s_lo, s_hi``, the weights' ends ``p_lo, p_hi`` (``e**s_ij / sum_j``),
    ``out_lo, out_hi (B, L, Ev)``, ``ok (B, L)`` the rows the tier could enclose (finite)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _scale_ends(scale, E):
    """``(lo, hi)`` float64 ends of the scale: the float given, or ``1/sqrt(E)``."""
    if scale is not None:
        return float(scale), float(scale)
    D, U = _context(53, "D"), _context(53, "U")
    return float(D.rec_sqrt(E)), float(U.rec_sqrt(E))


def _tier1(Q, K, V, allowed, fmask, scale):
    B, L, E = Q.shape
    S = K.shape[1]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        Dm = Q @ np.swapaxes(K, 1, 2)
        G = np.abs(Q) @ np.swapaxes(np.abs(K), 1, 2)
        err = _up(_up(_gamma(E + 2) * G) + E * 1e-323)
        dlo, dhi = _dn(Dm - err), _up(Dm + err)
        slo_, shi_ = _scale_ends(scale, E)
        if slo_ >= 0:
            slo = np.where(dlo >= 0, _dn(slo_ * dlo), _dn(shi_ * dlo))
            shi = np.where(dhi >= 0, _up(shi_ * dhi), _up(slo_ * dhi))
        else:  # a negative float scale, exact
            slo, shi = _dn(slo_ * dhi), _up(slo_ * dlo)
        if fmask is not None:
            fm = np.where(allowed, fmask, 0.0)
            slo, shi = _dn(slo + fm), _up(shi + fm)
        ok = np.all(np.isfinite(slo) & np.isfinite(shi) | ~allowed, axis=2)
        ok &= allowed.any(axis=2)
        c = np.max(np.where(allowed & np.isfinite(shi), shi, -np.inf), axis=2, keepdims=True,
                   initial=-np.inf)
        c = np.where(np.isfinite(c), c, 0.0)
        tlo = np.where(allowed, _dn(slo - c), 0.0)
        thi = np.where(allowed, np.minimum(_up(shi - c), 1.0), 0.0)
        tlo = np.where(np.isfinite(tlo), tlo, -1e300)
        thi = np.where(np.isfinite(thi), thi, 0.0)
        elo, _ = exp_enclosure(tlo)
        _, ehi = exp_enclosure(thi)
        elo = np.where(allowed, elo, 0.0)
        ehi = np.where(allowed, ehi, 0.0)
        gS = _gamma(S + 2)
        Slo = _dn(_dn(elo.sum(axis=2)) * _dn(1 - gS))
        Shi = _up(_up(ehi.sum(axis=2)) * _up(1 + gS))
        Slo = np.where(Slo > 0, Slo, np.nan)
        Vf = np.where(np.isfinite(V), V, 0.0)
        Va = np.abs(Vf)
        Em = 0.5 * (elo + ehi)
        rad = _up(np.maximum(_up(ehi - Em), _up(Em - elo)))
        Nm = Em @ Vf
        A = Em @ Va
        R = rad @ Va
        Nr = _up(_up(_up(gS * A) + R) * _up(1 + 2 * gS) + S * 1e-323)
        Nlo, Nhi = _dn(Nm - Nr), _up(Nm + Nr)
        Sl, Sh = Slo[..., None], Shi[..., None]
        olo = _dn(np.where(Nlo >= 0, Nlo / Sh, Nlo / Sl))
        ohi = _up(np.where(Nhi >= 0, Nhi / Sl, Nhi / Sh))
        plo = _dn(elo / Sh)
        phi = _up(ehi / Sl)
    ok &= np.all(np.isfinite(olo) & np.isfinite(ohi), axis=2) | ~np.isfinite(V).all(axis=(1, 2))[
        :, None]
    return Enclosure(allowed=allowed, s_lo=slo, s_hi=shi, p_lo=plo, p_hi=phi, out_lo=olo,
                     out_hi=ohi, ok=ok, d=Dm, G=G)


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


def _exact_dots(q, Kr):
    """The exact dot products ``q . k_j`` (finite float64) as ``(ints, exponent)``."""
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
    (a float), or None for an irrational one."""
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
    g = _g()
    dots, emin = _exact_dots(q, Kr)
    rational = scale if scale is not None else (2.0 ** -((E.bit_length() - 1) // 2)
                                                if _pow4(E) else None)
    keys = _exact_groups(dots, emin, fm, rational)
    out = {}
    todo = []
    for col in cols:
        r = _exact_value(keys, Vr[:, col].tolist())
        if r is not None:
            out[col] = 0.0 if r == 0 else _round_fraction(r, P)
        else:
            todo.append(col)
    W = P + _W0
    while todo:
        if W > _W_MAX:
            raise AssertionError(
                f"exactref could not decide attention of the query {q.tolist()!r} with {_W_MAX} "
                f"bits: an exact case the Lindemann-Weierstrass argument missed; please report it")
        D, U = _context(W, "D"), _context(W, "U")
        if scale is None:
            sg = (D.rec_sqrt(E), U.rec_sqrt(E))
        else:
            sg = (g.mpfr(scale), g.mpfr(scale))
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
        Slo, Shi = D.fsum(elo), U.fsum(ehi)
        left = []
        for col in todo:
            vs = Vr[:, col].tolist()
            nlo = D.fsum([D.mul(a if v >= 0 else b, v) for a, b, v in zip(elo, ehi, vs, strict=True)])
            nhi = U.fsum([U.mul(b if v >= 0 else a, v) for a, b, v in zip(elo, ehi, vs, strict=True)])
            lo = D.div(nlo, Shi if nlo >= 0 else Slo)
            hi = U.div(nhi, Slo if nhi >= 0 else Shi)
            got = _decide_strict(lo, hi, P)
            if got is None:
                left.append(col)
            else:
                out[col] = got
        todo = left
        W *= 2
    return out


def _pow4(E):
    return E > 0 and (E & (E - 1)) == 0 and (E.bit_length() - 1) % 2 == 0


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
    step = _chunk(L, S)
    for b0 in range(0, B, step):
        b1 = min(B, b0 + step)
        pr = _prepared(Q[b0:b1], K[b0:b1], V[b0:b1], allowed[b0:b1],
                       None if fmask is None else fmask[b0:b1])
        enc = _tier1(pr.Qs, pr.Ks, V[b0:b1], pr.allowed, pr.fm, scale)
        base = b0 * L * Ev
        n = (b1 - b0) * L * Ev
        flat_special = pr.is_special.reshape(-1)
        at = base + np.flatnonzero(flat_special)
        values.special[at] = pr.special.reshape(-1)[flat_special]
        decided = np.zeros(n, bool)
        if P <= _FAST_BITS:
            dec, N, e = _decide_float(enc.out_lo, enc.out_hi, P)
            dec = (dec & enc.ok[..., None] & ~pr.is_special).reshape(-1)
            L_ = values.L
            at = base + np.flatnonzero(dec)
            values.mant[at] = N.reshape(-1)[dec] << np.int64(L_ - P)
            values.e[at] = e.reshape(-1)[dec] - (L_ - P)
            decided = dec
        if keep is not None and b0 == 0 and b1 == B:
            keep.append(enc)
        del enc
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


def _chunk(L, S):
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
        row_nan = qbad | (allowed & kbad[:, None, :]).any(axis=2) | ~allowed.any(axis=2)
        if fmask is not None:
            row_nan |= (allowed & (np.isnan(fmask) | (fmask == np.inf))).any(axis=2)
        a = allowed.astype(np.int64)
        cnt_nan = a @ np.isnan(V).astype(np.int64)
        cnt_pos = a @ (V == np.inf).astype(np.int64)
        cnt_neg = a @ (V == -np.inf).astype(np.int64)
    special = np.where((cnt_nan > 0) | ((cnt_pos > 0) & (cnt_neg > 0)), _NAN,
                       np.where(cnt_pos > 0, _INF, np.where(cnt_neg > 0, -_INF, 0.0)))
    special = np.where(row_nan[..., None], _NAN, special)
    is_special = row_nan[..., None] | (cnt_nan + cnt_pos + cnt_neg > 0)
    ok = allowed & ~row_nan[..., None]
    return _Prepared(allowed=ok, fm=None if fmask is None else np.where(ok, fmask, 0.0),
                     Qs=np.where(row_nan[..., None], 0.0, Q),
                     Ks=np.where(np.isfinite(K), K, 0.0), special=special,
                     is_special=is_special)


def enclose(Q, K, V, allowed, fmask=None, scale=None) -> Enclosure:
    """The first tier's float64 enclosures (:class:`Enclosure`) of a batch (the tolerance
    models read them; call it on chunks of the batch: its temporaries are ``(B, L, S)``)."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    pr = _prepared(Q, K, V, allowed, fmask)
    return _tier1(pr.Qs, pr.Ks, V, pr.allowed, pr.fm, scale)
