"""An independent oracle for scaled dot-product attention: mpmath at 240 bits and more, sharing no
code with exactref.

Each output ``sum_j e**s_j v_j / sum_j e**s_j`` is evaluated at 240 bits; its exact cases (every
group of equal scores with the same mean of ``v``: the value is that mean, a rational; scores
compared exactly with Fractions, an irrational ``1/sqrt(E)`` compared through the pair ``(q . k,
mask)``) are returned as Fractions. The rounding into a format is done here too, from the
Fraction or from the mpmath value (re-evaluated at 600 bits when it lies within 2**-200 of a
rounding boundary)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

MODES = ("nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative",
         "odd")


def _square(E):
    return math.isqrt(E) ** 2 == E


def attention_row(q, keys, vals, fmask, scale, prec=240):
    """The outputs of one query row (lists of floats), each a Fraction (exact case), an mpf, or
    a float NaN/inf; ``fmask`` the float mask entries of the keys taking part."""
    E = len(q)
    n = len(keys)
    if n == 0:
        return [math.nan] * len(vals[0]) if vals else []
    dots = [sum((Fraction(a) * Fraction(b) for a, b in zip(q, k, strict=True)), Fraction(0)) for k in keys]
    if scale is None and not _square(E):  # 1/sqrt(E) irrational
        groups = [(d, Fraction(m)) for d, m in zip(dots, fmask, strict=True)]
        sc = None
    else:
        sc = Fraction(scale) if scale is not None else Fraction(1, math.isqrt(E))
        groups = [sc * d + Fraction(m) for d, m in zip(dots, fmask, strict=True)]
    out = []
    Ev = len(vals[0])
    with mpmath.workprec(prec):
        sig = (mpmath.mpf(1) / mpmath.sqrt(E) if sc is None
               else mpmath.mpf(sc.numerator) / sc.denominator)
        s = [sig * mpmath.mpf(d.numerator) / d.denominator + mpmath.mpf(m)
             for d, m in zip(dots, fmask, strict=True)]
        mx = max(s)
        e = [mpmath.exp(x - mx) for x in s]
        tot = mpmath.fsum(e)
        for col in range(Ev):
            vc = [v[col] for v in vals]
            if any(math.isnan(x) for x in vc) or (math.inf in vc and -math.inf in vc):
                out.append(math.nan)
                continue
            if math.inf in vc or -math.inf in vc:
                out.append(math.inf if math.inf in vc else -math.inf)
                continue
            sums, counts = {}, {}
            for g, x in zip(groups, vc, strict=True):
                sums[g] = sums.get(g, 0) + Fraction(x)
                counts[g] = counts.get(g, 0) + 1
            means = {sums[g] / counts[g] for g in sums}
            if len(means) == 1:
                out.append(means.pop())
            else:
                out.append(mpmath.fsum(a * b for a, b in zip(e, vc, strict=True)) / tot)
    return out


def round_value(x, precision, emin, max_finite, mode, prec=240):
    """Round a Fraction or an mpf into a binary format (``precision`` bits, smallest normal
    exponent ``emin``), returning a float (inf on overflow in the modes that round away)."""
    if isinstance(x, float):
        return x
    if isinstance(x, Fraction):
        v = x
        if v == 0:
            return 0.0
        neg = v < 0
        a = -v if neg else v
        e = a.numerator.bit_length() - a.denominator.bit_length()
        if Fraction(2) ** e > a:
            e -= 1
        e = max(e, emin)
        q = Fraction(2) ** (e - precision + 1)
        t = a / q
        lo = t.numerator // t.denominator
        rem = t - lo
    else:
        return _round_mpf(x, precision, emin, max_finite, mode, prec)
    return _finish(neg, lo, rem, e, precision, max_finite, mode)


def _round_mpf(x, precision, emin, max_finite, mode, prec):
    with mpmath.workprec(prec + 100):
        neg = x < 0
        a = -x if neg else x
        if a == 0:
            return 0.0
        e = int(mpmath.floor(mpmath.log(a, 2)))
        while mpmath.ldexp(1, e) > a:
            e -= 1
        while mpmath.ldexp(1, e + 1) <= a:
            e += 1
        e = max(e, emin)
        t = mpmath.ldexp(a, precision - 1 - e)
        lo = int(mpmath.floor(t))
        frac = t - lo
        rem = Fraction(1, 2) if abs(frac - mpmath.mpf(0.5)) < mpmath.mpf(2) ** (40 - prec) else None
        if rem is not None:
            raise ValueError("too close to a midpoint for the oracle's precision")
        if frac < mpmath.mpf(2) ** (40 - prec):
            raise ValueError("too close to a representable value for the oracle's precision")
        rem = Fraction(1, 4) if frac < 0.5 else Fraction(3, 4)
    return _finish(neg, lo, rem, e, precision, max_finite, mode)


def _finish(neg, lo, rem, e, precision, max_finite, mode):
    up_ = {"nearest_even": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1),
           "nearest_away": rem >= Fraction(1, 2),
           "toward_zero": False,
           "odd": rem > 0 and lo % 2 == 0,
           "toward_positive": rem > 0 and not neg,
           "toward_negative": rem > 0 and neg}[mode]
    n = lo + (1 if up_ else 0)
    val = math.ldexp(n, e - precision + 1) if n else 0.0
    if val > max_finite:
        if mode in ("toward_zero",) or (mode == "toward_positive" and neg) or (
                mode == "toward_negative" and not neg):
            val = max_finite
        else:
            val = math.inf
    return -val if neg else val
