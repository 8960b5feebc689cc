"""An independent oracle for the gradients of scaled dot-product attention: mpmath at 240 bits
and Fractions, sharing no code with exactref.

One batch entry (lists of floats): ``P = softmax(s)`` per row, ``dV = P^T dO``, ``dP = dO V^T``,
``D_i = sum_j P_ij dP_ij``, ``dS = P (dP - D)``, ``dQ = sigma dS K``, ``dK = sigma dS^T Q``.
Exact values are found with Fractions where this oracle can prove them:

* a row whose scores are all equal (compared exactly: Fractions, or the pair ``(q . k, mask)``
  for an irrational ``1/sqrt(E)``): ``P = 1/n``, rational;
* ``D_i`` rational when every group of equal scores has one mean of ``dP`` (Lindemann-
  Weierstrass), so ``dS_ij = 0`` where ``dP_ij`` equals it; otherwise ``dS_ij`` is evaluated as
  ``P_ij sum_k P_ik (dP_ij - dP_ik)`` with the differences exact (``dP_ij - D_i`` would cancel
  far below 240 bits when one weight dominates);
* ``dQ_ie = 0`` when ``k_je`` is constant over the keys with ``dS_ij != 0`` (the ``dS`` row
  sums to zero).

An mpmath sum that cancels to below ``2**(60 - prec)`` of its terms raises ValueError (an exact case the
oracle does not know: the test must not build one)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

PREC = 240


def _is_square(n):
    r = math.isqrt(n)
    return r * r == n


def _row(q, keys, fm, scale, E):
    """Per row: (P list: Fraction or mpf, groups)."""
    dots = [sum((Fraction(a) * Fraction(b) for a, b in zip(q, k, strict=True)), Fraction(0))
            for k in keys]
    if scale is None and not _is_square(E):
        groups = [(d, Fraction(m)) for d, m in zip(dots, fm, strict=True)]
        sig = mpmath.mpf(1) / mpmath.sqrt(E)
    else:
        sc = Fraction(scale) if scale is not None else Fraction(1, math.isqrt(E))
        groups = [sc * d + Fraction(m) for d, m in zip(dots, fm, strict=True)]
        sig = mpmath.mpf(sc.numerator) / sc.denominator
    n = len(keys)
    if len(set(groups)) == 1:
        return [Fraction(1, n)] * n, groups
    s = [sig * mpmath.mpf(d.numerator) / d.denominator + mpmath.mpf(m)
         for d, m in zip(dots, fm, strict=True)]
    mx = max(s)
    e = [mpmath.exp(x - mx) for x in s]
    tot = mpmath.fsum(e)
    return [x / tot for x in e], groups


def _sum(terms, prec=PREC):
    """Fraction when every term is, else an mpf (ValueError when it cancels)."""
    if all(isinstance(t, Fraction) for t in terms):
        return sum(terms, Fraction(0))
    mags = [abs(mpmath.mpf(t.numerator) / t.denominator) if isinstance(t, Fraction) else abs(t)
            for t in terms]
    val = mpmath.fsum(mpmath.mpf(t.numerator) / t.denominator if isinstance(t, Fraction) else t
                      for t in terms)
    if abs(val) <= mpmath.mpf(2) ** (60 - mpmath.mp.prec) * mpmath.fsum(mags):
        raise ValueError("the oracle's sum cancels: an exact case it does not know")
    return val


def _times(x, y):
    if isinstance(x, Fraction) and isinstance(y, Fraction):
        return x * y
    if isinstance(x, Fraction) and x == 0 or isinstance(y, Fraction) and y == 0:
        return Fraction(0)
    return _mpf(x) * _mpf(y)


def _mpf(t):
    return mpmath.mpf(t.numerator) / t.denominator if isinstance(t, Fraction) else t


def gradients(Q, K, V, G, allowed, fmask, scale, prec=PREC):
    """``(dQ, dK, dV)`` of one batch entry as nested lists of Fractions or mpfs; ``allowed``
    ``[i][j]`` bools (keys behind a ``-inf`` mask already False), ``fmask`` ``[i][j]`` floats or
    None; ``prec`` the working precision (bits)."""
    L, E = len(Q), len(Q[0])
    S, Ev = len(K), len(V[0])
    sig = None
    with mpmath.workprec(prec):
        if scale is None and not _is_square(E):
            sig = mpmath.mpf(1) / mpmath.sqrt(E)
        else:
            sig = Fraction(scale) if scale is not None else Fraction(1, math.isqrt(E))
        P = [[Fraction(0)] * S for _ in range(L)]
        dS = [[Fraction(0)] * S for _ in range(L)]
        for i in range(L):
            keys = [j for j in range(S) if allowed[i][j]]
            if not keys:
                continue
            fm = [0.0 if fmask is None else fmask[i][j] for j in keys]
            p, groups = _row(Q[i], [K[j] for j in keys], fm, scale, E)
            dP = [sum((Fraction(a) * Fraction(b) for a, b in zip(G[i], V[j], strict=True)),
                      Fraction(0)) for j in keys]
            sums, cnt = {}, {}
            for gk, x in zip(groups, dP, strict=True):
                sums[gk] = sums.get(gk, Fraction(0)) + x
                cnt[gk] = cnt.get(gk, 0) + 1
            means = {sums[a] / cnt[a] for a in sums}
            D = means.pop() if len(means) == 1 else None
            for pos, j in enumerate(keys):
                P[i][j] = p[pos]
                if D is not None and dP[pos] == D:
                    dS[i][j] = Fraction(0)
                else:  # P_j sum_k P_k (dP_j - dP_k): no cancellation of D against dP_j
                    dS[i][j] = _times(p[pos], _sum([_times(p[k], dP[pos] - dP[k])
                                                    for k in range(len(keys))]))

        def scaled(x):
            if isinstance(x, Fraction) and (x == 0 or isinstance(sig, Fraction)):
                return x * sig if isinstance(sig, Fraction) else x
            return _times(x, sig) if isinstance(sig, Fraction) else (
                mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else x) * sig

        dV = [[_sum([_times(P[i][j], Fraction(G[i][col])) for i in range(L)])
               for col in range(Ev)] for j in range(S)]
        dK = [[scaled(_sum([_times(dS[i][j], Fraction(Q[i][col])) for i in range(L)]))
               for col in range(E)] for j in range(S)]
        dQ = []
        for i in range(L):
            live = [j for j in range(S) if not (isinstance(dS[i][j], Fraction)
                                                and dS[i][j] == 0)]
            row = []
            for col in range(E):
                if len({K[j][col] for j in live}) <= 1:
                    row.append(Fraction(0))
                else:
                    row.append(scaled(_sum([_times(dS[i][j], Fraction(K[j][col]))
                                            for j in live])))
            dQ.append(row)
    return dQ, dK, dV
