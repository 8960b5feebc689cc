"""An independent oracle for the gradients of softmax and log_softmax over the last axis.

It shares no code with exactref: the values are enclosed with **mpmath's interval arithmetic**
(``mpmath.iv``; exactref uses MPFR through gmpy2) at 200 bits and more, from the plain
formulas (not exactref's rearrangement)

* softmax: ``y_i = e**d_i / sum_j e**d_j``, ``dx_i = y_i (g_i - sum_j g_j y_j)``;
* log_softmax: ``dx_i = g_i - y_i G``, ``G = sum_j g_j`` exact (Fractions),

and the precision doubles until the enclosure lies inside one 62-bit cell, whose midpoint is
the proxy rounded by ``functions_oracle.round_exact`` (every format of at most 53 bits, every
mode). The exact cases are written here from the definitions (Fractions): a row of equal
finite entries (``y = 1/k``), a softmax row whose groups of equal entries have the same mean
gradient ``r`` (``dx_i = 0`` where ``g_i = r``), a log_softmax row with ``sum g = 0``
(``dx = g``); the ``-inf`` entries (``y = 0``). An exact zero is +0, -0 toward negative.
Specials: a NaN entry, no entry above ``-inf`` or two ``+inf`` entries give NaN; one ``+inf``
entry the one-hot limit; a non-finite ``g`` the formula in IEEE arithmetic on a positive
stand-in for ``y``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from functions_oracle import FAR, _far, _next_to, round_exact
from mpmath import iv

import exactref as er

NAN, INF = math.nan, math.inf
CELL = 62


def _ivq(q: Fraction):
    """An enclosure of the rational ``q``."""
    return iv.mpf(q.numerator) / iv.mpf(q.denominator)


def _ends(box):
    """The exact ends of an mpmath.iv interval as Fractions (from its raw mpf tuples)."""
    out = []
    for sign, man, exp, _ in box._mpi_:
        v = Fraction(int(man)) * (Fraction(2) ** int(exp) if exp >= 0 else
                                  Fraction(1, 2 ** int(-exp)))
        out.append(-v if sign else v)
    return out


def _magnitude(t) -> int:
    """``e`` with ``2**(e-1) <= |v| < 2**e`` of a raw nonzero mpf tuple."""
    return int(t[2]) + int(t[3])


def _cell(box):
    """The midpoint of the 62-bit cell holding the interval ``box`` (both ends strictly
    inside it), a far value beyond ``2**+-FAR``, or None."""
    ta, tb = box._mpi_
    if not (ta[1] and tb[1]) or ta[0] != tb[0]:  # an end zero, or of two signs
        return None
    sign = -1 if ta[0] else 1
    if min(_magnitude(ta), _magnitude(tb)) > FAR + 1:
        return _far(sign, True)
    if max(_magnitude(ta), _magnitude(tb)) < -FAR - 1:
        return _far(sign, False)
    L, H = sorted(abs(v) for v in _ends(box))
    E = L.numerator.bit_length() - L.denominator.bit_length()
    if L >= Fraction(2) ** E:
        E += 1  # 2**(E-1) <= L < 2**E
    width = Fraction(2) ** (E - CELL)
    k = L // width
    if not (k * width < L and H < (k + 1) * width):
        return None
    return sign * (k * width + width / 2)


def _enclose(fn):
    """Raise the precision until ``fn()`` (an mpmath.iv value) lies inside one cell."""
    old = iv.prec
    try:
        for prec in (200, 400, 800, 1600, 3200, 6400, 12800):
            iv.prec = prec
            got = _cell(fn())
            if got is not None:
                return got
    finally:
        iv.prec = old
    raise AssertionError("the oracle could not decide a value: an exact case it misses")


def _specials(op, x, g):
    K = len(x)
    if any(v != v for v in x):
        return [NAN] * K
    n_pinf = sum(1 for v in x if v == INF)
    if n_pinf > 1 or not any(v > -INF for v in x):
        return [NAN] * K
    if n_pinf == 1:
        y = [1.0 if v == INF else 0.0 for v in x]
    else:
        y = [0.5 if v > -INF else 0.0 for v in x]  # a positive stand-in
    if all(math.isfinite(v) for v in g):
        if n_pinf == 0:
            return None
        p = x.index(INF)
        if op == "softmax":
            return [0.0] * K
        out = [v for v in g]
        out[p] = -sum((Fraction(v) for j, v in enumerate(g) if j != p), Fraction(0))
        return out
    gs = [v * 2.0**-600 if math.isfinite(v) else v for v in g]  # no overflow of finite parts
    if op == "softmax":
        s = sum(a * b for a, b in zip(gs, y, strict=True))  # IEEE: any order, same special
        out = [yi * (gi - s) for gi, yi in zip(gs, y, strict=True)]
    else:
        s = sum(gs)
        out = [gi - yi * s for gi, yi in zip(gs, y, strict=True)]
    assert not any(math.isfinite(v) for v in out)
    return out


def row_grads(op, x, g):
    """Proxies (floats, Fractions, or 0.0 for an exact zero) of the gradient of one row."""
    sp = _specials(op, x, g)
    if sp is not None:
        return sp
    K = len(x)
    fin = [j for j in range(K) if math.isfinite(x[j])]
    m = max(x[j] for j in fin)
    d = {j: Fraction(x[j]) - Fraction(m) for j in fin}
    G = sum(map(Fraction, g), Fraction(0))
    out: list = [None] * K
    for j in range(K):
        if j not in d:
            out[j] = 0.0 if op == "softmax" else g[j]  # y_j = 0
    k = len(fin)
    if len({x[j] for j in fin}) == 1:  # y = 1/k on the finite entries
        mean = sum((Fraction(g[j]) for j in fin), Fraction(0)) / k
        for j in fin:
            out[j] = (Fraction(g[j]) - mean) / k if op == "softmax" else Fraction(g[j]) - G / k
        return out
    if op == "log_softmax" and G == 0:
        for j in fin:
            out[j] = g[j]
        return out
    r = None
    if op == "softmax":  # the groups' mean gradients
        groups: dict = {}
        for j in fin:
            groups.setdefault(x[j], []).append(Fraction(g[j]))
        means = {sum(v, Fraction(0)) / len(v) for v in groups.values()}
        if len(means) == 1:
            r = means.pop()

    groups: dict = {}  # equal entries share one enclosure (no dependency between copies)
    for j in fin:
        groups.setdefault(d[j], []).append(j)

    def ys():
        """``{d: y}`` per distinct difference."""
        es = {a: iv.exp(_ivq(a)) for a in groups}
        S = iv.mpf(0)
        for a, js in groups.items():
            S = S + len(js) * es[a]
        return {a: es[a] / S for a in groups}

    for i in fin:
        if op == "softmax":
            if r is not None and Fraction(g[i]) == r:
                out[i] = 0.0
                continue

            def val(i=i):  # y_i sum_j (g_i - g_j) y_j: exact coefficients, no cancellation
                y = ys()
                s = iv.mpf(0)
                for a, js in groups.items():
                    coef = sum((Fraction(g[i]) - Fraction(g[j]) for j in js), Fraction(0))
                    if coef:
                        s = s + _ivq(coef) * y[a]
                return y[d[i]] * s
            out[i] = _enclose(val)
        else:
            out[i] = _log_softmax_value(i, d, groups, g, G, ys)
    return out


def _log_softmax_value(i, d, groups, g, G, ys):
    """``g_i - y_i G`` as ``base + delta``: ``base = g_i``, ``delta = -y_i G``, or, where
    ``y_i > 1/2``, ``base = g_i - G``, ``delta = G sum_{j != i} y_j``; a delta far below
    every cell of a nonzero base is a step beside it (``1 - 1e-300`` needs no huge
    precision)."""
    old = iv.prec
    try:
        iv.prec = 200
        ta = ys()[d[i]]._mpi_[0]  # y_i >= 1/2 (a choice of form, not of value)
        top = not ta[0] and bool(ta[1]) and _magnitude(ta) >= 0
    finally:
        iv.prec = old
    base = Fraction(g[i]) - G if top else Fraction(g[i])

    def delta():
        y = ys()
        if top:
            rest = iv.mpf(0)
            for a, js in groups.items():
                n = len(js) - (a == d[i])
                if n:
                    rest = rest + n * y[a]
            return _ivq(G) * rest
        return -(y[d[i]] * _ivq(G))

    if base != 0:
        iv.prec = 200
        try:
            dv = delta()
        finally:
            iv.prec = old
        ta, tb = dv._mpi_
        eb = abs(base).numerator.bit_length() - abs(base).denominator.bit_length()
        if ta[0] == tb[0] and ta[1] and tb[1] and max(_magnitude(ta), _magnitude(tb)) < eb - 100:
            return _next_to(base, -1 if ta[0] else 1)
    return _enclose(lambda: _ivq(base) + delta())


def expected(op, X, Gr, fmt, mode):
    """The gradient of ``op`` over the last axis of ``X`` for ``Gr`` (float64 lists of rows),
    rounded once into ``fmt`` in ``mode``: a list of float64 rows."""
    fmt = er.dtype(fmt)
    mode = er.Rounding(mode) if not isinstance(mode, er.Rounding) else mode
    res = []
    for x, g in zip(X, Gr, strict=True):
        vals = row_grads(op, list(map(float, x)), list(map(float, g)))
        zero = [isinstance(v, (float, Fraction)) and v == 0 for v in vals]
        vals = [0.0 if z else v for v, z in zip(vals, zero, strict=True)]
        got = [float(v) for v in round_exact(vals, fmt, mode)]
        neg = mode is er.Rounding.TOWARD_NEGATIVE
        res.append([(-0.0 if neg else 0.0) if z else v for v, z in zip(got, zero, strict=True)])
    return res
