"""An oracle for the gradients of layer norm and rms norm that shares no code with exactref:
Python Fractions for every rational quantity, the textbook formulas

* ``dx_i = (1/sigma) (gh_i - mean(gh) - xhat_i mean(gh xhat))`` (layer norm; ``gh = g w``,
  ``xhat = (x - mu) / sigma``, ``sigma = sqrt(var + eps)``), ``dx_i = (1/r) (gh_i - x_i
  mean(gh x) / r**2)`` (rms norm, ``r = sqrt(mean(x**2) + eps)``), each written as ``C sqrt(R)``
  with rational ``C`` and ``R``;
* ``dw_j = sum_n g_nj xhat_nj`` (a sum of ``c_n / sqrt(R_n)``), ``db_j = sum_n g_nj``;

enclosed with mpmath's interval arithmetic at 256 bits and more until both ends round alike
(rounded by MPFR through ``mpfr_oracle``). A value whose ends do not agree at 4096 bits is
taken to be rational: the oracle then groups the square roots by rows whose ``R`` differ by a
rational square factor and checks that every irrational group cancels."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
from mpfr_oracle import FMTS, expected

_MAX_BITS = 4096


def _rsqrt_rational(v: Fraction):
    p, q = v.numerator, v.denominator
    rp, rq = math.isqrt(p), math.isqrt(q)
    return Fraction(rp, rq) if rp * rp == p and rq * rq == q else None


def _frac(raw) -> Fraction:
    """A raw mpmath value ``(sign, man, exp, bc)`` (an interval's end) as a Fraction."""
    sign, man, exp, _ = raw
    assert man or exp == 0, "an infinite enclosure"
    return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)


def _decide(enclose, fmt, mode):
    """Round the value that ``enclose(ctx)`` encloses (an mpmath interval), or None."""
    bits = 256
    while bits <= _MAX_BITS:
        ctx = mpmath.iv
        ctx.prec = bits
        v = enclose(ctx)
        lo, hi = _frac(v._mpi_[0]), _frac(v._mpi_[1])
        if lo != 0 and hi != 0 and (lo > 0) == (hi > 0):
            a, b = expected(lo, False, fmt, mode), expected(hi, False, fmt, mode)
            if a == b:
                return a
        bits *= 2
    return None


def _ivfrac(ctx, q: Fraction):
    return ctx.mpf(q.numerator) / ctx.mpf(q.denominator)


def _row_stats(xs, gs, ws, eps, centered):
    n = len(xs)
    gh = [g * w for g, w in zip(gs, ws, strict=True)]
    if centered:
        mu = sum(xs, Fraction(0)) / n
        R = sum(((x - mu) ** 2 for x in xs), Fraction(0)) / n + eps
    else:
        mu = Fraction(0)
        R = sum((x * x for x in xs), Fraction(0)) / n + eps
    return gh, mu, R


def _round_c_root(C: Fraction, R: Fraction, fmt, mode):
    """``C sqrt(R)`` rounded (``R > 0``)."""
    if C == 0:
        return 0.0
    root = _rsqrt_rational(R)
    if root is not None:
        return expected(C * root, False, fmt, mode)
    got = _decide(lambda ctx: _ivfrac(ctx, C) * ctx.sqrt(_ivfrac(ctx, R)), fmt, mode)
    assert got is not None, "an irrational dx did not decide"
    return got


def grad_x(row, grow, w, eps, centered, fmt_name, mode):
    """``dx`` of one row (lists of floats; ``w`` None for no weight), rounded; None where the
    exact value is not finite (``var + eps == 0``)."""
    fmt = FMTS[fmt_name]
    xs = [Fraction(v) for v in row]
    gs = [Fraction(v) for v in grow]
    ws = [Fraction(v) for v in w] if w is not None else [Fraction(1)] * len(xs)
    n = len(xs)
    eps = Fraction(eps)
    gh, mu, R = _row_stats(xs, gs, ws, eps, centered)
    if R == 0:
        return [None] * n
    out = []
    if centered:
        mgh = sum(gh, Fraction(0)) / n
        m2 = sum((g * (x - mu) for g, x in zip(gh, xs, strict=True)), Fraction(0)) / n
        for g, x in zip(gh, xs, strict=True):
            # (1/sigma)(g - mgh) - (x - mu) m2 / sigma**3, 1/sigma = sqrt(R) / R
            C = (g - mgh) / R - (x - mu) * m2 / (R * R)
            out.append(_round_c_root(C, R, fmt, mode))
    else:
        m2 = sum((g * x for g, x in zip(gh, xs, strict=True)), Fraction(0)) / n
        for g, x in zip(gh, xs, strict=True):
            C = g / R - x * m2 / (R * R)
            out.append(_round_c_root(C, R, fmt, mode))
    return out


def grad_w(rows, grows, eps, centered, fmt_name, mode, targets=None):
    """``dw_j`` for every column (lists of rows of floats), rounded; or, with ``targets`` (a
    list of lists of ``(row, column)``), the sum of ``g xhat`` over each target's elements
    (group norm's channels)."""
    fmt = FMTS[fmt_name]
    eps = Fraction(eps)
    M, n = len(rows), len(rows[0])
    coefs = []  # per row: R, and per column the coefficient c with term c / sqrt(R)
    for row, grow in zip(rows, grows, strict=True):
        xs = [Fraction(v) for v in row]
        gs = [Fraction(v) for v in grow]
        _, mu, R = _row_stats(xs, gs, [Fraction(1)] * n, eps, centered)
        coefs.append((R, [g * (x - mu) for g, x in zip(gs, xs, strict=True)]))
    if targets is None:
        targets = [[(r, j) for r in range(M)] for j in range(n)]
    out = []
    for target in targets:
        terms = [(coefs[r][0], coefs[r][1][j]) for r, j in target if coefs[r][1][j] != 0]
        if not terms:
            out.append(0.0)
            continue

        def enclose(ctx, terms=terms):
            s = ctx.mpf(0)
            for R, c in terms:
                s += _ivfrac(ctx, c) / ctx.sqrt(_ivfrac(ctx, R))
            return s

        got = _decide(enclose, fmt, mode)
        if got is None:
            got = _rational_sum(terms, fmt, mode)
        out.append(got)
    del M
    return out


def _rational_sum(terms, fmt, mode):
    """The value of ``sum c / sqrt(R)`` that must be rational: group by square class
    (``R / R_q`` the square of a rational), check the irrational groups cancel."""
    groups = []  # [R_q, coefficient of 1 / sqrt(R_q)]
    for R, c in terms:
        for g in groups:
            k = _rsqrt_rational(R / g[0])
            if k is not None:  # 1 / sqrt(R) = 1 / (k sqrt(R_q))
                g[1] += c / k
                break
        else:
            groups.append([R, c])
    total = Fraction(0)
    for R, c in groups:
        root = _rsqrt_rational(R)
        if root is None:
            assert c == 0, "an undecided weight gradient is irrational (oracle bug)"
        else:
            total += c / root
    return 0.0 if total == 0 else expected(total, False, fmt, mode)


def grad_b(grows, fmt_name, mode):
    fmt = FMTS[fmt_name]
    out = []
    for j in range(len(grows[0])):
        s = sum((Fraction(r[j]) for r in grows), Fraction(0))
        out.append(0.0 if s == 0 else expected(s, False, fmt, mode))
    return out
