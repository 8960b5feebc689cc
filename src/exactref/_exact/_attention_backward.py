"""The gradients of scaled dot-product attention, each element the exact gradient of the exact
function, as ExactArrays rounding like it into every format of at most ``bits`` bits (private).

For one batch entry (``sigma`` the scale, ``A_i`` the keys row ``i`` takes part in, ``dO`` the
output's gradient)::

    P_ij  = e**s_ij / sum_{k in A_i} e**s_ik           (0 for j not in A_i)
    dV_jl = sum_i P_ij dO_il
    dP_ij = dO_i . v_j                                  (a rational: exact)
    D_i   = sum_j P_ij dP_ij                            (= sum_l dO_il O_il)
    dS_ij = P_ij (dP_ij - D_i)
    dQ_ie = sigma sum_j dS_ij k_je
    dK_je = sigma sum_i dS_ij q_ie

Operands shared by several batch entries (broadcast batch dimensions, GQA's key/value heads)
take the sum of their copies' gradients: more terms of the same exact sum (``owners``).

Two tiers, as the forward (:mod:`._attention`): float64 intervals for every element at once
(the forward's enclosure of ``P``, then ``dP``, ``D``, ``dS`` and the three products in
midpoint-radius form with Higham's bound), decided where an enclosure lies strictly between two
``bits + 2``-bit numbers; then MPFR interval arithmetic per element with Ziv's strategy.

Exact cases, found first (an exact value of few bits never decides by enclosures)
-------------------------------------------------------------------------------
Recognised, exactly (Fractions):

* a key no row lets in: ``dK_j = dV_j = 0``; a zero ``dO_il``, ``q_ie`` or ``k_je`` adds nothing;
* ``dS_ij = 0`` exactly when ``D_i`` is rational and equals ``dP_ij``: by the Lindemann-Weierstrass
  argument of the forward, ``D_i`` is algebraic exactly when every group of equal scores of the
  row has the same mean of ``dP``, and is that mean (a row of one key, ``dO_i = 0``, equal
  ``v_j``);
* a row whose scores are all equal: ``P_ij = 1/n``, so its ``dS`` and its terms are rational;
* ``dQ_ie = 0`` when ``k_je`` has one mean over every class of keys (equal score, equal ``dP``)
  with ``dS != 0`` (``sum_j dS_ij = 0``): e.g. a column of ``k`` constant over the row's keys;
* rows with the same keys, the same score differences (so the same ``P`` row) and, for ``dK``,
  the same ``dP`` differences (so the same ``dS`` row) are merged before anything else: their
  coefficients (``dO_il``, ``q_ie``) are summed exactly, so copies that cancel give 0.

An element with terms of several transcendental classes left is evaluated by Ziv's loop; one
still undecided at 512 bits is checked exactly as exponential polynomials (:func:`_symbolic`:
rational exactly when its numerator's and denominator's coefficients are proportional, by the
Lindemann-Weierstrass theorem), which finds e.g. two rows whose scores are swapped
(``P_1j + P_2j = 1``). Past the check's size (``2**14`` monomials) a rational value never
decides, and the loop raises an ArithmeticError naming the element at ``2**15`` bits: never a
guess. ``sigma = 1/sqrt(E)`` is irrational unless ``E`` is a square, so ``sigma r`` with a
nonzero rational ``r`` is irrational and decides.

Special values
--------------
A row whose forward output is NaN for the whole row (no key, a NaN or infinity in ``q_i`` or in a
key it reads, a NaN or ``+inf`` mask entry), or with a NaN or infinity in ``dO_i`` or in a value
row it reads, makes its ``dQ_i`` NaN and the ``dK_j``, ``dV_j`` of every key it reads NaN.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._attention import (
    _decide_float,
    _exact_dots,
    _exact_groups,
    _gamma,
    attention_chunk,
    enclose,
    scale_enclosure,
    score_exps,
)
from ._mpfr import _W0, _W_MAX, _context, _decide, _from_objects, _g, _round_fraction, _Values
from ._outward import down, up

__all__ = ["evaluate_attention_backward", "first_tier", "bad_rows"]

_FAST_BITS = 40


def _isqrt_exact(E):
    r = math.isqrt(E)
    return r if r * r == E else None


# ------------------------------------------------------------------------------- tier 1
def _mr_gemm(Alo, Ahi, B):
    """Enclosure of ``A @ B`` for ``A`` in ``[Alo, Ahi]`` (batched) and an exact float ``B``."""
    n = Alo.shape[-1]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        Am = 0.5 * Alo + 0.5 * Ahi
        rad = up(np.maximum(up(Ahi - Am), up(Am - Alo)))
        Ba = np.abs(B)
        mid = Am @ B
        r = up(up(up(_gamma(n + 2) * (np.abs(Am) @ Ba)) + up(rad @ Ba))
                * up(1 + 2 * _gamma(n + 2)) + (n + 2) * 1e-323)
        return down(mid - r), up(mid + r)


def _scale_iv(lo, hi, slo, shi):
    """``sigma * [lo, hi]`` for ``sigma in [slo, shi]`` (one sign), outward."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        c = [slo * lo, slo * hi, shi * lo, shi * hi]
        return down(np.minimum.reduce(c)), up(np.maximum.reduce(c))


def _tier1(Q, K, V, G, allowed, fm, scale_ends, enc):
    """Float64 enclosures ``{name: (lo, hi)}`` of P, dP, D, dS and the per-batch-entry
    products ``dQ (B, L, E)``, ``dK (B, S, E)``, ``dV (B, S, Ev)`` (before the owners' sums)."""
    Ev = V.shape[2]
    S = K.shape[1]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        plo = np.where(allowed, enc.p_lo, 0.0)
        phi = np.where(allowed, enc.p_hi, 0.0)
        Vt = np.swapaxes(V, 1, 2)
        Dm = G @ Vt
        err = up(up(_gamma(Ev + 2) * (np.abs(G) @ np.abs(Vt))) + Ev * 1e-323)
        dPlo, dPhi = down(Dm - err), up(Dm + err)
        # D = sum_j P_ij dP_ij (P >= 0), intersected with sum_l dO_il O_il
        a = np.where(dPlo >= 0, plo * dPlo, phi * dPlo)
        b = np.where(dPhi >= 0, phi * dPhi, plo * dPhi)
        a, b = np.where(allowed, down(a), 0.0), np.where(allowed, up(b), 0.0)
        gS = _gamma(S + 2)
        Dlo = down(a.sum(axis=2) - up(gS * np.abs(a).sum(axis=2)) - S * 1e-323)
        Dhi = up(b.sum(axis=2) + up(gS * np.abs(b).sum(axis=2)) + S * 1e-323)
        olo, ohi = enc.out_lo, enc.out_hi
        c = np.where(G >= 0, G * olo, G * ohi)
        d = np.where(G >= 0, G * ohi, G * olo)
        gE = _gamma(Ev + 2)
        D2lo = down(down(c).sum(axis=2) - up(gE * np.abs(down(c)).sum(axis=2)) - Ev * 1e-323)
        D2hi = up(up(d).sum(axis=2) + up(gE * np.abs(up(d)).sum(axis=2)) + Ev * 1e-323)
        ok2 = np.isfinite(D2lo) & np.isfinite(D2hi) & (D2lo <= D2hi)
        Dlo = np.where(ok2, np.maximum(Dlo, D2lo), Dlo)
        Dhi = np.where(ok2, np.minimum(Dhi, D2hi), Dhi)
        Xlo = down(dPlo - Dhi[..., None])
        Xhi = up(dPhi - Dlo[..., None])
        Slo = np.where(Xlo >= 0, plo * Xlo, phi * Xlo)
        Shi = np.where(Xhi >= 0, phi * Xhi, plo * Xhi)
        Slo, Shi = np.where(allowed, down(Slo), 0.0), np.where(allowed, up(Shi), 0.0)
        dVlo, dVhi = _mr_gemm(np.swapaxes(plo, 1, 2), np.swapaxes(phi, 1, 2), G)
        qlo, qhi = _mr_gemm(Slo, Shi, K)
        klo, khi = _mr_gemm(np.swapaxes(Slo, 1, 2), np.swapaxes(Shi, 1, 2), Q)
        qlo, qhi = _scale_iv(qlo, qhi, *scale_ends)
        klo, khi = _scale_iv(klo, khi, *scale_ends)
    return {"P": (plo, phi), "dP": (dPlo, dPhi), "D": (Dlo, Dhi), "X": (Xlo, Xhi),
            "dS": (Slo, Shi), "dQ": (qlo, qhi), "dK": (klo, khi), "dV": (dVlo, dVhi)}


def _owner_sum(lo, hi, owners):
    """Sum the copies (``owners (n, copies)`` indices into the batch) of enclosures, outward."""
    if owners.shape[1] == 1:
        return lo[owners[:, 0]], hi[owners[:, 0]]
    with np.errstate(over="ignore", invalid="ignore"):
        C = owners.shape[1]
        slo, shi = lo[owners].sum(axis=1), hi[owners].sum(axis=1)
        g = _gamma(C + 2)
        alo = np.abs(lo[owners]).sum(axis=1)
        ahi = np.abs(hi[owners]).sum(axis=1)
        return down(slo - up(g * alo) - C * 1e-323), up(shi + up(g * ahi) + C * 1e-323)


# ----------------------------------------------------------------------- exact row data
class _Row:
    """One row's exact data: its keys, score groups, ``dP`` (Fractions), rational ``D`` (or
    None), zero ``dS``, the single-group flag and its signatures."""

    def __init__(self, q, Kr, Vr, g, fm, keys, rational):
        self.keys = keys
        dots, emin = _exact_dots(q, Kr)
        self.dots, self.emin = dots, emin
        self.fm = fm
        groups = _exact_groups(dots, emin, fm, rational)
        self.single = len(set(groups)) == 1
        pd, pe = _exact_dots(g, Vr)
        two = Fraction(2) ** pe
        self.dP = [Fraction(x) * two for x in pd]
        self.dPi, self.dPe = pd, pe
        sums, cnt = {}, {}
        for gk, x in zip(groups, self.dP, strict=True):
            sums[gk] = sums.get(gk, 0) + x
            cnt[gk] = cnt.get(gk, 0) + 1
        means = {sums[a] / cnt[a] for a in sums}
        self.D = means.pop() if len(means) == 1 else None
        self.dSzero = [self.D is not None and x == self.D for x in self.dP]
        n = len(keys)
        self.dSrat = ([(x - self.D) / n for x in self.dP] if self.single else None)
        # signatures: the same keys and score differences give the same P row
        t = Fraction(2) ** emin
        if rational is None:
            sd = tuple((Fraction(d - dots[0]) * t, Fraction(f) - Fraction(fm[0]))
                       for d, f in zip(dots, fm, strict=True))
        else:
            r = Fraction(rational)
            s = [r * d * t + Fraction(f) for d, f in zip(dots, fm, strict=True)]
            sd = tuple(x - s[0] for x in s)
        if rational is None:  # the scores themselves, exactly: (d, m) or sigma d + m
            self.skeys = [(Fraction(d) * t, Fraction(f)) for d, f in zip(dots, fm, strict=True)]
        else:
            self.skeys = list(s)
        self.psig = (tuple(keys), sd)
        self.ssig = (self.psig, tuple(x - self.dP[0] for x in self.dP))
        self.classes = {}  # key index -> class id: equal score group and equal dP
        for idx, (gk, x) in enumerate(zip(groups, self.dP, strict=True)):
            self.classes[idx] = (gk, x)
        self.pos = {j: idx for idx, j in enumerate(keys)}


def _rowiv(row, scale, E, W):
    """MPFR enclosures at ``W`` bits of the row's ``P_j`` and ``dS_j`` (lists of pairs)."""
    g = _g()
    D, U = _context(W, "D"), _context(W, "U")
    sg = scale_enclosure(D, U, scale, E)
    shi, elo, ehi, Slo, Shi = score_exps(D, U, sg, row.dots, row.fm, row.emin)
    c = max(shi)
    P = [(D.div(a, Shi), U.div(b, Slo)) for a, b in zip(elo, ehi, strict=True)]
    # D - dP_j as sum_k P_k (dP_k - c) - (dP_j - c), c = dP at the largest score (exact
    # integer differences): a dominant weight's term vanishes, so dP_j - D does not cancel to
    # e**-(score gap) against a working precision of W bits
    piv = row.dPi[shi.index(c)]
    dd = [(D.mul_2exp(g.mpz(x - piv), row.dPe), U.mul_2exp(g.mpz(x - piv), row.dPe))
          for x in row.dPi]
    Dlo = D.fsum([D.mul(p[0] if x[0] >= 0 else p[1], x[0]) for p, x in zip(P, dd, strict=True)])
    Dhi = U.fsum([U.mul(p[1] if x[1] >= 0 else p[0], x[1]) for p, x in zip(P, dd, strict=True)])
    dS = []
    for p, x, z in zip(P, dd, row.dSzero, strict=True):
        if z:
            dS.append(None)
            continue
        a, b = D.sub(x[0], Dhi), U.sub(x[1], Dlo)
        dS.append((D.mul(p[0] if a >= 0 else p[1], a), U.mul(p[1] if b >= 0 else p[0], b)))
    return P, dS, sg


def _ivsum(terms, W):
    """Sum of enclosures times exact rationals (``[(pair, Fraction)]``), outward."""
    D, U = _context(W, "D"), _context(W, "U")
    lo = D.fsum([D.mul(p[0] if c >= 0 else p[1], _mpq(c)) for p, c in terms])
    hi = U.fsum([U.mul(p[1] if c >= 0 else p[0], _mpq(c)) for p, c in terms])
    return lo, hi


# ------------------------------------------------------------ the symbolic exactness check
_SYMBOLIC_TERMS = 1 << 14  # the most monomials the common denominator may expand to
_SYMBOLIC_W = 512          # Ziv's precision from which an undecided element is tried


def _kadd(a, b):
    return (a[0] + b[0], a[1] + b[1]) if isinstance(a, tuple) else a + b


def _pmul(p, q):
    """The product of two exponential polynomials ``{exponent: coefficient}``."""
    out = {}
    for ka, ca in p.items():
        for kb, cb in q.items():
            k = _kadd(ka, kb)
            out[k] = out.get(k, 0) + ca * cb
    return {k: v for k, v in out.items() if v}


def _symbolic(name, terms, exact):
    """Whether an element is rational, decided exactly: its value (a Fraction, before the
    scale), False when it is not rational, None when too large to expand.

    The element is ``N / Den`` with ``Den = prod_rows Z**m`` (``Z = sum_k e**s_k``, ``m = 1`` for
    ``dV``, 2 for ``dQ`` and ``dK``: ``dS_j = e**s_j (dP_j Z - sum_k e**s_k dP_k) / Z**2``), ``N``
    and ``Den`` exponential polynomials with rational coefficients whose exponents are sums of
    scores (algebraic numbers, compared exactly). By the Lindemann-Weierstrass theorem (Baker's
    form) ``N - a Den = 0`` for an algebraic ``a`` only if every coefficient vanishes: then ``a``
    is the ratio of any monomial's coefficients, a rational."""
    m = 1 if name == "dV" else 2
    rows = {}
    for row, _, _ in terms:
        rows.setdefault(id(row), row)
    size = 1
    for row in rows.values():
        size *= len(row.keys) ** m
    if size * len(terms) > _SYMBOLIC_TERMS:
        return None
    Z, Zm = {}, {}
    for rid, row in rows.items():
        z = {}
        for k in row.skeys:
            z[k] = z.get(k, 0) + 1
        Z[rid] = z
        Zm[rid] = z if m == 1 else _pmul(z, z)
    den = None
    for zp in Zm.values():
        den = zp if den is None else _pmul(den, zp)
    num = {k: exact * v for k, v in den.items()} if exact else {}
    for row, idx, c in terms:
        rid = id(row)
        if m == 1:
            t = {row.skeys[idx]: Fraction(c)}
        else:
            inner = {k: v * row.dP[idx] for k, v in Z[rid].items()}
            for k2, sk in enumerate(row.skeys):
                inner[sk] = inner.get(sk, 0) - row.dP[k2]
            t = _pmul({row.skeys[idx]: Fraction(c)}, {k: v for k, v in inner.items() if v})
        for rid2, zp in Zm.items():
            if rid2 != rid:
                t = _pmul(t, zp)
        for k, v in t.items():
            num[k] = num.get(k, 0) + v
    key = next(iter(den))
    r = Fraction(num.get(key, 0)) / den[key]
    if all(num.get(k, 0) == r * den.get(k, 0) for k in set(num) | set(den)):
        return r
    return False


def _decide_nonzero(lo, hi, P):
    if not (lo > 0 or hi < 0):
        return None
    return _decide(lo, hi, P)


# ----------------------------------------------------------------------------- driver
class _Problem:
    """The operands of one call (float64 ``(B, ...)`` arrays, the batch already broadcast), the
    owners of each operand's elements, the scale."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def bad_rows(Q, K, V, G, reads, fmask):
    """``(B, L)`` bool: the query rows whose gradients are NaN (module docstring, "Special
    values"); ``reads`` the keys each row takes part with (``-inf`` mask entries excluded)."""
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(Q).all(axis=2) | ~reads.any(axis=2)
        bad |= (reads & ~np.isfinite(K).all(axis=2)[:, None, :]).any(axis=2)
        bad |= (reads & ~np.isfinite(V).all(axis=2)[:, None, :]).any(axis=2)
        bad |= ~np.isfinite(G).all(axis=2)
        if fmask is not None:
            bad |= (reads & (np.isnan(fmask) | (fmask == np.inf))).any(axis=2)
    return bad


def first_tier(Q, K, V, G, reads, fmask, bad, scale):
    """The first tier on a chunk of the batch: ``(t1, enc)``, the float64 enclosures of ``P``,
    ``dP``, ``D``, ``dP - D`` (``"X"``), ``dS`` and the per-entry products ``dQ``, ``dK``,
    ``dV`` (a dict of ``(lo, hi)``), and the forward's :class:`._attention.Enclosure` (its
    temporaries are ``(B, L, S)``: call it on chunks)."""
    E = Q.shape[2]
    ok = reads & ~bad[..., None]
    okf = None if fmask is None else np.where(ok, fmask, 0.0)
    Qs = np.where(bad[..., None], 0.0, Q)
    Ks = np.where(np.isfinite(K), K, 0.0)
    Vs = np.where(np.isfinite(V), V, 0.0)
    Gs = np.where(bad[..., None], 0.0, G)
    enc = enclose(Qs, Ks, Vs, ok, okf, scale)
    if scale is None:
        D_, U_ = _context(53, "D"), _context(53, "U")
        ends = (float(D_.rec_sqrt(E)), float(U_.rec_sqrt(E)))
    else:
        ends = (float(scale), float(scale))
    return _tier1(Qs, Ks, Vs, Gs, ok, okf, ends, enc), enc


def evaluate_attention_backward(Q, K, V, G, allowed, fmask=None, scale=None, bits: int = 53,
                                owners=None, keep: list | None = None):
    """The exact gradients ``(dQ, dK, dV)`` as ExactArrays of the owners' shapes, rounding like
    the exact values into every format of at most ``bits`` bits in every mode.

    ``Q (B, L, E)``, ``K (B, S, E)``, ``V (B, S, Ev)``, ``G (B, L, Ev)`` (the output's gradient),
    ``allowed (B, L, S)``, ``fmask`` as :func:`._attention.evaluate_attention`; ``owners`` a dict
    ``{"q": ..., "k": ..., "v": ...}`` of ``(n_operand_batch, copies)`` index arrays into ``B``
    (the batch entries each operand's batch entry was copied to; default: none shared). The
    first tier runs in chunks of the batch; a list ``keep`` receives a dict: ``own`` (the
    owner-summed enclosures of each gradient), ``bad`` (:func:`bad_rows`), ``reads`` and
    ``chunk`` (:func:`first_tier`'s result when the batch is one chunk, else None).

    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> Q = np.array([[[1.0, 0.0]]]); K = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> V = np.array([[[1.0], [0.0]]]); G = np.array([[[1.0]]])
    >>> dq, dk, dv = evaluate_attention_backward(Q, K, V, G, np.ones((1, 1, 2), bool), scale=1.0)
    >>> dv.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()  # e/(e+1), 1/(e+1)
    [0.7310585786300049, 0.2689414213699951]
    """
    Q, K, V, G = (np.asarray(a, dtype=np.float64) for a in (Q, K, V, G))
    B, L, E = Q.shape
    S, Ev = V.shape[1:]
    if owners is None:
        ident = np.arange(B).reshape(B, 1)
        owners = {"q": ident, "k": ident, "v": ident}
    P = bits + 2
    allowed = np.asarray(allowed, bool)
    fm = None if fmask is None else np.asarray(fmask, dtype=np.float64)
    reads = allowed if fm is None else allowed & (fm != -np.inf)
    bad = bad_rows(Q, K, V, G, reads, fm)
    nan_key = (reads & bad[..., None]).any(axis=1)  # (B, S): keys a bad row reads
    shapes = {"dQ": (B, L, E), "dK": (B, S, E), "dV": (B, S, Ev)}
    prods = {n: (np.empty(sh), np.empty(sh)) for n, sh in shapes.items()}
    step = attention_chunk(L, S)
    chunk = None
    for b0 in range(0, B, step):
        sl = slice(b0, min(B, b0 + step))
        t1, enc = first_tier(Q[sl], K[sl], V[sl], G[sl], reads[sl],
                             None if fm is None else fm[sl], bad[sl], scale)
        for n in shapes:
            prods[n][0][sl], prods[n][1][sl] = t1[n]
        if b0 == 0 and sl.stop == B:
            chunk = (t1, enc)
        del t1, enc
    rat = None
    if scale is None:
        r = _isqrt_exact(E)
        rat = None if r is None else Fraction(1, r)
    else:
        rat = Fraction(scale)
    pb = _Problem(Q=np.where(bad[..., None], 0.0, Q), K=K, V=V, G=G,
                  ok=reads & ~bad[..., None], fm=fm, scale=scale, rat=rat, E=E, P=P,
                  owners=owners, rows={})
    out, own_ends = [], {}
    for name, nanmask in (("dQ", bad), ("dK", nan_key), ("dV", nan_key)):
        own = owners[name[1].lower()]
        lo, hi = _owner_sum(*prods[name], own)
        own_ends[name] = (lo, hi)
        nanv = nanmask[own].any(axis=1)  # (n, rows)
        shape = lo.shape
        n = lo.size
        values = _Values.empty(n, max(P, 53))
        nan_flat = np.broadcast_to(nanv[..., None], shape).reshape(-1)
        values.special[nan_flat] = np.nan
        decided = nan_flat.copy()
        if P <= _FAST_BITS:
            dec, N, e = _decide_float(lo, hi, P)
            dec = dec.reshape(-1) & ~nan_flat
            L_ = values.L
            at = np.flatnonzero(dec)
            values.mant[at] = N.reshape(-1)[dec] << np.int64(L_ - P)
            values.e[at] = e.reshape(-1)[dec] - (L_ - P)
            decided |= dec
        left = np.flatnonzero(~decided)
        if left.size:
            objs = _tier2(pb, name, np.unravel_index(left, shape))
            values.put(left, _from_objects(objs, P))
        out.append(values.exact(shape))
    if keep is not None:
        keep.append({"own": own_ends, "bad": bad, "reads": reads, "chunk": chunk})
    return tuple(out)


def _row(pb, b, i):
    key = (b, i)
    row = pb.rows.get(key)
    if row is None:
        keys = np.flatnonzero(pb.ok[b, i]).tolist()
        fmr = [0.0] * len(keys) if pb.fm is None else pb.fm[b, i, keys].tolist()
        row = _Row(pb.Q[b, i], pb.K[b, keys], pb.V[b, keys], pb.G[b, i], fmr, keys, pb.rat)
        pb.rows[key] = row
    return row


def _terms(pb, name, o, r, col):
    """One element's transcendental terms ``[(row, key position, coefficient)]`` after the
    exact merges, and its rational part (a Fraction, before the scale): the element is exact
    when no term is left."""
    own = pb.owners[name[1].lower()][o]
    L = pb.Q.shape[1]
    if name == "dQ":
        terms, exact = [], Fraction(0)
        for b in own.tolist():
            row = _row(pb, b, r)
            if not row.keys:
                continue
            cls = {}
            for idx, j in enumerate(row.keys):
                if row.dSzero[idx]:
                    continue
                c = row.classes[idx]
                s, n = cls.get(c, (Fraction(0), 0))
                cls[c] = (s + Fraction(float(pb.K[b, j, col])), n + 1)
            if not cls:
                continue
            if row.single:
                exact += sum(row.dSrat[idx] * Fraction(float(pb.K[b, j, col]))
                             for idx, j in enumerate(row.keys))
                continue
            if len({s / n for s, n in cls.values()}) == 1:
                continue
            terms += [(row, idx, float(pb.K[b, j, col])) for idx, j in enumerate(row.keys)
                      if not row.dSzero[idx] and pb.K[b, j, col] != 0]
        return terms, exact
    merged = {}
    for b in own.tolist():
        for i in range(L):
            if not pb.ok[b, i, r]:
                continue
            row = _row(pb, b, i)
            idx = row.pos[r]
            if name == "dV":
                c = float(pb.G[b, i, col])
                sig = row.psig
            else:
                if row.dSzero[idx]:
                    continue
                c = float(pb.Q[b, i, col])
                sig = (row.ssig, idx)
            if c == 0:
                continue
            if name == "dV":
                sig = (sig, idx)
            ent = merged.get(sig)
            merged[sig] = (row, idx, (ent[2] if ent else Fraction(0)) + Fraction(c))
    terms, exact = [], Fraction(0)
    for row, idx, c in merged.values():
        if c == 0:
            continue
        if row.single:
            exact += c * (Fraction(1, len(row.keys)) if name == "dV" else row.dSrat[idx])
        else:
            terms.append((row, idx, c))
    return terms, exact


def _tier2(pb, name, index):
    """Values for :func:`_from_objects` of the elements ``index`` (a tuple of arrays) of the
    gradient ``name``: the exact ones, then Ziv on MPFR."""
    g = _g()
    out = [None] * len(index[0])
    todo = []
    for n, (o, r, col) in enumerate(zip(*(a.tolist() for a in index), strict=True)):
        terms, exact = _terms(pb, name, o, r, col)
        if not terms and (name == "dV" or exact == 0 or pb.rat is not None):
            v = exact if name == "dV" or exact == 0 else exact * pb.rat
            out[n] = 0.0 if v == 0 else _round_fraction(v, pb.P)
        else:
            todo.append((n, terms, exact, (o, r, col)))
    W = pb.P + _W0
    while todo:
        if W > _W_MAX:
            n, _, _, where = todo[0]
            grad = {"dQ": "grad_query", "dK": "grad_key", "dV": "grad_value"}[name]
            raise ArithmeticError(
                f"scaled_dot_product_attention.backward: exactref could not decide {grad} at "
                f"(batch entry {where[0]} of the operand's flattened batch, row {where[1]}, "
                f"column {where[2]}) with {_W_MAX} bits: an exact case (a rational gradient "
                f"made of several rows' transcendental weights, such as two rows whose "
                f"scores are swapped) that exactref does not recognise, and it never returns "
                f"a guess; please report it with the operands")
        if _SYMBOLIC_W <= W < 2 * _SYMBOLIC_W:  # once: the exact cases of several rows
            left = []
            for item in todo:
                n, terms, exact, _ = item
                r = _symbolic(name, terms, exact)
                if r is not False and r is not None and (name == "dV" or r == 0
                                                          or pb.rat is not None):
                    v = r if name == "dV" or r == 0 else r * pb.rat
                    out[n] = 0.0 if v == 0 else _round_fraction(v, pb.P)
                else:
                    left.append(item)
            todo = left
        ivs = {}
        D, U = _context(W, "D"), _context(W, "U")
        left = []
        for n, terms, exact, where in todo:
            pairs = []
            sg = None
            for row, idx, c in terms:
                got = ivs.get(id(row))
                if got is None:
                    got = ivs[id(row)] = _rowiv(row, pb.scale, pb.E, W)
                Pv, dS, sg = got
                pairs.append(((Pv if name == "dV" else dS)[idx], Fraction(c)))
            lo, hi = _ivsum(pairs, W) if pairs else (g.mpfr(0), g.mpfr(0))
            if exact:  # the rational part (before the scale)
                lo = D.add(lo, _mpq(exact))
                hi = U.add(hi, _mpq(exact))
            if name != "dV":
                if sg is None:
                    sg = ((D.rec_sqrt(pb.E), U.rec_sqrt(pb.E)) if pb.scale is None else
                          (g.mpfr(pb.scale), g.mpfr(pb.scale)))
                cl = [D.mul(a, b) for a in sg for b in (lo, hi)]
                ch = [U.mul(a, b) for a in sg for b in (lo, hi)]
                lo, hi = min(cl), max(ch)
            got = _decide_nonzero(lo, hi, pb.P)
            if got is None:
                left.append((n, terms, exact, where))
            else:
                out[n] = got
        todo = left
        W *= 2
    return out


def _mpq(x):
    return _g().mpq(x.numerator, x.denominator)

