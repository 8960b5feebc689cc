"""An oracle for layer/rms/group norm that shares no code with exactref: Python Fractions for
the mean, the variance (two-pass on exact values) and every product, ``math.isqrt`` enclosures
of the square root refined until both ends round alike (MPFR rounds them, through
``mpfr_oracle``), exact rationals where ``var + eps`` is the square of a rational."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from mpfr_oracle import FMTS, expected


def _sqrt_rational(v: Fraction):
    p, q = v.numerator, v.denominator
    rp, rq = math.isqrt(p), math.isqrt(q)
    if rp * rp == p and rq * rq == q:
        return Fraction(rp, rq)
    return None


def normalized(row, w, b, eps, centered, fmt_name, mode):
    """Each element of ``row`` (floats) normalized, times ``w``, plus ``b`` (lists of floats or
    None), rounded once into ``fmt_name`` in ``mode``; exact zeros compare without sign."""
    fmt = FMTS[fmt_name]
    xs = [Fraction(v) for v in row]
    n = len(xs)
    if centered:
        mu = sum(xs, Fraction(0)) / n
        v = sum(((x - mu) ** 2 for x in xs), Fraction(0)) / n + Fraction(eps)
    else:
        mu = Fraction(0)
        v = sum((x * x for x in xs), Fraction(0)) / n + Fraction(eps)
    out = []
    root = _sqrt_rational(v) if v > 0 else None
    for i, x in enumerate(xs):
        a = (x - mu) * (Fraction(w[i]) if w is not None else 1)
        bb = Fraction(b[i]) if b is not None else Fraction(0)
        if v == 0:
            out.append(math.nan if a == 0 else None)
            continue
        if a == 0 or root is not None:
            y = bb if a == 0 else a / root + bb
            out.append(expected(y, False, fmt, mode))
            continue
        # 80 bits of sqrt(v) beyond its leading one, whatever its magnitude
        k = 80 + max(0, (v.denominator.bit_length() - v.numerator.bit_length()) // 2 + 2)
        while True:
            s = math.isqrt(v.numerator * 4**k // v.denominator)
            lo, hi = Fraction(s, 2**k), Fraction(s + 1, 2**k)  # lo <= sqrt(v) < hi
            ends = sorted([a / lo + bb, a / hi + bb])
            r0 = expected(ends[0], False, fmt, mode) if ends[0] != 0 else None
            r1 = expected(ends[1], False, fmt, mode) if ends[1] != 0 else None
            if r0 is not None and r0 == r1:
                out.append(r0)
                break
            k *= 2
            assert k < 20000, "oracle did not converge"
    return out


def same(got, want):
    """Each element of ``got`` equals the oracle's ``want`` (None: not checked; NaN: any NaN)."""
    for g, w in zip(np.asarray(got, np.float64).reshape(-1).tolist(), want, strict=True):
        if w is None:
            continue
        if math.isnan(w):
            assert math.isnan(g), (g, w)
        else:
            assert g == w, (g, w)
