"""An independent oracle for cross_entropy: Python Fractions and mpmath (at 300 bits and more),
sharing no code with exactref (the rounding is attention_oracle's ``round_value``).

Straight from torch's definition: per row, ``log_softmax_c = x_c - m - log(sum_j e**(x_j - m))``
(its special rows written here: NaN for a NaN entry, two ``+inf`` entries or none finite; one
``+inf`` entry: 0 there, ``-inf`` elsewhere), the row's loss ``-sum_c k_c log_softmax_c`` with
``k_c = (1 - eps) w_y [c = y] + eps w_c / C`` (class indices) or ``w_c ((1 - eps) t_c +
eps / C)`` (probabilities), a coefficient of 0 contributing 0 whatever it meets, and the
reductions: the sum, and the mean over the counted targets' weights (the number of rows for
probabilities). A value is a Fraction when no logarithm is left after rows with the same
sorted finite entries are merged, else an mpmath number."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from attention_oracle import round_value

NAN, INF = math.nan, math.inf


def _rows(a):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1])


def _row_loss(x, k):
    """``(special, Q, (key, a))``: a row's loss as a special value (or None) and, when finite,
    ``a log S - Q``-style parts: the Fraction ``-sum k_c (x_c - m)`` and ``(key, a)`` with
    ``a = sum k_c`` and key the sorted finite entries (which fix ``S``)."""
    xs = list(x)
    if any(v != v for v in xs):
        return NAN, None, None
    n_pinf = sum(1 for v in xs if v == INF)
    finite = [v for v in xs if math.isfinite(v)]
    if n_pinf > 1 or (n_pinf == 0 and not finite):
        return NAN, None, None
    if n_pinf == 1:
        lsm_inf = [v != INF for v in xs]  # -inf everywhere but at the +inf entry
    else:
        lsm_inf = [v == -INF for v in xs]
    signs = {(kc > 0) for kc, bad in zip(k, lsm_inf, strict=True) if bad and kc != 0}
    if len(signs) == 2:
        return NAN, None, None
    if signs:
        return (INF if True in signs else -INF), None, None
    if n_pinf == 1:
        return None, Fraction(0), None
    m = max(finite)
    q = sum((kc * (Fraction(v) - Fraction(m)) for kc, v in zip(k, xs, strict=True)
             if kc != 0 and math.isfinite(v)), Fraction(0))
    a = sum(k, Fraction(0))
    return None, -q, (tuple(sorted(finite)), a)


def _log_s(key, prec):
    """``log S = log1p(T)``, ``T`` the terms below the maximum plus one per other entry at the
    maximum (no cancellation: a term of e**-10000 survives)."""
    with mpmath.workprec(prec):
        m = max(key)
        below = [mpmath.exp(mpmath.mpf(v) - m) for v in key if v != m]
        extra = sum(1 for v in key if v == m) - 1
        return mpmath.log1p(mpmath.fsum(below) + extra)


def losses(x, target, weight=None, ignore_index=-100, reduction="mean", eps=0.0):
    """The exact outputs (a list: one per sample and position for ``"none"``, else one) as
    ``(Fraction or special float, groups)`` pairs: the value is ``F + sum_g A_g log S_g``
    divided by ``D``; returned as a callable of the precision where logarithms remain."""
    X = _rows(x)
    R, C = X.shape
    eps = Fraction(eps)
    w = [Fraction(1)] * C if weight is None else [Fraction(float(v)) for v in weight]
    probs = np.shape(target) == np.shape(x)
    if probs:
        T = _rows(target)
    else:
        y = np.asarray(target).reshape(-1)
    parts = []  # per row: (counted, special, F, (key, a), weight of the target)
    for r in range(R):
        if probs:
            k = [w[c] * ((1 - eps) * Fraction(float(T[r, c])) + eps / C) for c in range(C)]
            wt = Fraction(1)
        else:
            yr = int(y[r])
            if yr == ignore_index:
                parts.append((False, None, Fraction(0), None, Fraction(0)))
                continue
            k = [(1 - eps) * w[c] * (1 if c == yr else 0) + eps * w[c] / C for c in range(C)]
            wt = w[yr]
        parts.append((True, *_row_loss(X[r], k), wt))
    if reduction == "none":
        outs = [[p] for p in parts]
        dens = [Fraction(1)] * R
    else:
        outs = [parts]
        if reduction == "sum":
            dens = [Fraction(1)]
        elif probs:
            dens = [Fraction(R)]
        else:
            dens = [sum((p[4] for p in parts if p[0]), Fraction(0))]
    return [_combine(o, d) for o, d in zip(outs, dens, strict=True)]


def _combine(rows, D):
    specials = [p[1] for p in rows if p[0] and p[1] is not None]
    if any(s != s for s in specials) or (INF in specials and -INF in specials):
        return NAN
    if specials:
        s = specials[0]
        return s if D >= 0 else -s
    F = sum((p[2] for p in rows if p[0]), Fraction(0))
    groups = {}
    for p in rows:
        if p[0] and p[3] is not None and len(p[3][0]) > 1:
            groups[p[3][0]] = groups.get(p[3][0], Fraction(0)) + p[3][1]
    groups = {g: a for g, a in groups.items() if a != 0}
    if not groups:
        if D == 0:
            return NAN if F == 0 else math.copysign(INF, F)
        return F / D

    def value(prec, split=False):
        with mpmath.workprec(prec):
            tot = mpmath.fsum(mpmath.mpf(a.numerator) / a.denominator * _log_s(g, prec)
                              for g, a in groups.items())
            if split:  # the rational part and the logarithms' part, each over D
                return F / D, tot * D.denominator / D.numerator
            num = tot + mpmath.mpf(F.numerator) / F.denominator
            if D == 0:
                return INF if num > 0 else -INF
            return num * D.denominator / D.numerator

    return value


def rounded(values, fmt, mode):
    """The oracle's values rounded into ``fmt`` (an exactref Format, for its metadata) in
    ``mode``: float64 values; an mpmath value too close to a boundary is recomputed at twice
    the precision."""
    out = []
    for v in values:
        if isinstance(v, float):
            out.append(v)
            continue
        if isinstance(v, Fraction):
            out.append(round_value(v, fmt.precision, fmt.emin, fmt.max_finite, mode))
            continue
        prec = 300
        while True:
            x = v(prec)
            if isinstance(x, float):
                out.append(x)
                break
            try:
                out.append(round_value(x, fmt.precision, fmt.emin, fmt.max_finite,
                                       mode, prec))
                break
            except ValueError:
                prec *= 2
            if prec > 1200:  # a rational plus a tiny logarithm (e**-10000): the rational
                # nudged by far less than any rounding gap, with the tiny part's sign
                q, t = v(300, split=True)
                assert q != 0 and abs(t) < abs(mpmath.mpf(q.numerator) / q.denominator) \
                    * mpmath.mpf(2) ** -1000, "the oracle did not converge"
                nudged = q + (1 if t > 0 else -1) * abs(q) / 2**1000
                out.append(round_value(nudged, fmt.precision, fmt.emin, fmt.max_finite, mode))
                break
    return np.array(out, dtype=np.float64)
