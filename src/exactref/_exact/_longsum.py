"""Exact long sums: matrix products and reductions, exactly, on BLAS.

The engine's :func:`~._engine.sum_of_products` stacks every piece of every term, which is right
for the few terms of add and multiply and wrong for the K terms of a matmul element. This
module computes K-term sums exactly with error-free matrix products (the Ozaki scheme) and hands
the result to the same rounding step, as an :class:`~._engine.ExactArray`.

Splitting (per row of ``A``, per column of ``B``)
--------------------------------------------------
Row ``i`` of ``A`` has its largest exponent ``ea[i]`` (``|a| < 2**ea``). Its *digits* are integer
matrices: ``D0 = trunc(a * 2**(beta - ea))``, then the rest ``a - D0 * 2**(ea - beta)`` (exact)
gives ``D1`` on the grid ``2**(ea - 2 beta)``, and so on until nothing is left; ``|Dp| < 2**beta``.
The digits are integers held in float64, so a product ``DA[p] @ DB[q]`` of ``k``-long rows is a
sum of integers below ``k * 2**(2 beta)``: BLAS computes it exactly, in any order, when that
stays below 2**53. All products with ``p + q = t`` share one grid and are added into level
``L[t]`` (exact while ``cnt * k * 2**(2 beta) <= 2**52``, ``cnt`` the products per level), and
the exact value of an element is ``sum_t L[t] * 2**(ea + eb - beta * (t + 2))``.

A line needs ``ceil((spread + precision) / beta)`` digits, its spread the gap between its
largest and smallest exponents. Rows (and columns) are grouped by the digits they need and each
group pair takes only its own GEMMs (:func:`_digit_plan` picks ``beta`` to minimize the work), so
one row holding a tiny value does not make every row pay for the extra digit: random float32
matrices at ``k = 512`` take 4 GEMMs, where one digit count for all would take 9.

The digits live in integer units, never in scaled floats, so no exponent spread (not even
2**-1074 beside 2**1023 in one row) loses a bit; a wide spread only costs more digits.

Distillation
------------
The levels overlap; one carry pass from the lowest level up (``c = rint(L[t] / 2**beta)``,
``L[t] -= c * 2**beta``, ``L[t-1] += c``, all exact) leaves every level below the first a signed
digit with ``|L[t]| <= 2**(beta - 1)``, so the first nonzero level decides the sign and a window
of ``ceil(110 / beta) + 1`` levels from it decides the leading 106 bits. Groups of
``53 // beta`` normalized levels are each one exact float64 integer (:func:`_packed`), and the
pieces are distilled with the engine's TwoSum cascades (``_leading``) into ``c1``, ``c2`` and the
sign of the rest, which is the window's remainder or, where that is zero, the sign of the first
nonzero level below the window. An element whose distillation does not settle (none in
practice) takes the exact path: the Fraction of its levels. Levels are formed and distilled
in column chunks of about 32k elements, so the passes over them stay in cache.

Reductions
----------
A few long rows (``er.sum`` of a vector) take Rump, Ogita and Oishi's ExtractVector
(:func:`_row_extract`): each level takes 37 bits of every element of a cache-sized chunk with two
float64 additions, the chunk's sum of them is exact in any order, and the level sums add up as
Python integers. Many rows take the digits above with plain float64 sums. Where numba runs,
rows of 128 elements or more in sums of 2**16 or more take the compiled superaccumulator
instead (:mod:`._superacc`, through :mod:`._fastsums`): exact as well, so the same values, in
one pass over the data.

Integer operands take the same splitting in 16-bit limbs and Python integers for the total.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._formats import FORMATS
from ._engine import ExactArray, _leading
from ._specials import integer_overflow

__all__ = ["matmul_exact", "rowsum_exact", "int_matmul_exact", "int_rowsum_exact",
           "choose_beta", "split_digits", "from_integers", "int_rowsums", "prefix_exact"]

_NEG = -(1 << 40)  # an exponent below every float64 exponent (for masked maxima)
_POS = 1 << 40
_WINDOW_BITS = 110  # leading bits the distillation window must hold (c1 and c2: 106)


# ------------------------------------------------------------------------------- splitting
def _top_low(x, axis):
    """Per line along ``axis``: the largest frexp exponent of a nonzero element (``|x| <
    2**top``) and the smallest; ``top = low = 0`` for an all-zero line."""
    ax = np.abs(x)
    mx = ax.max(axis=axis, keepdims=True)
    mn = np.min(ax, axis=axis, keepdims=True, where=ax > 0, initial=np.inf)
    empty = mx == 0
    top = np.frexp(mx)[1].astype(np.int64)
    low = np.frexp(np.where(empty, 1.0, mn))[1].astype(np.int64)
    return np.where(empty, 0, top), np.where(empty, 0, low), empty


def choose_beta(k: int, cnt: int, products: bool = True) -> int:
    """Digit width: sums of ``k`` products of digits, ``cnt`` pairs per level, stay below 2**52
    (so that a level plus a carry stays below 2**53). Without products (reductions), sums of
    ``k`` digits below 2**52."""
    lg = math.ceil(math.log2(max(k * cnt, 1)))
    if products:
        return max((52 - lg) // 2, 1)
    return max(52 - lg - 1, 1)


def _take_digit(rest, sh, tmp=None):
    """One digit of ``rest`` on the grids ``2**-sh``, in place: ``d = trunc(rest * 2**sh)`` and
    ``rest -= d * 2**-sh`` (exact). A multiplication by a power of two where both powers are
    normal floats, else ldexp. Truncation, not rint: a digit rounded up to ``2**beta`` next to
    float64's largest values would overflow on the way back (inf - inf). ``tmp``: scratch of
    ``rest``'s shape."""
    if -1000 < int(sh.min()) and int(sh.max()) < 1000:
        f = np.exp2(sh.astype(np.float64))
        d = np.multiply(rest, f)
        np.trunc(d, out=d)
        back = np.multiply(d, 1.0 / f, out=tmp)  # exact: 1 / 2**sh is a power of two
    else:
        d = np.trunc(np.ldexp(rest, sh))
        back = np.ldexp(d, -sh)
    rest -= back
    return d


def split_digits(x, top, beta: int, count: int):
    """``count`` integer digit arrays of ``x`` (float64, finite) on the grids
    ``2**(top - beta * (p + 1))`` (``top`` broadcasts against ``x``); their weighted sum is ``x``
    when ``beta * count`` covers the exponent spread plus the precision."""
    digits = []
    rest = np.array(x, dtype=np.float64, copy=True)
    tmp = np.empty_like(rest)
    for p in range(count):
        sh = (beta * (p + 1) - top).astype(np.int32)
        digits.append(_take_digit(rest, sh, tmp))  # |d| < 2**beta
    return digits, rest


def _line_bits(top, low, empty, precision):
    """Bits each line (a row of ``A``, a column of ``B``) needs: the maximum over the batch."""
    b = np.where(empty, 0, top - low + precision)
    return b.max(axis=0).reshape(-1).astype(np.int64)


def _bits(top, low, empty, precision):
    """Bits a line needs from its top: spread of exponents plus the precision."""
    b = np.where(empty, 0, top - low + precision)
    return int(b.max()) if b.size else 0


# ---------------------------------------------------------------------------- distillation
def _carry(levels, beta: int):
    """Normalize the levels (a list, highest first) in place: every level but the first ends
    with ``|L| <= 2**(beta - 1)``. Exact while each level stays below 2**52 in magnitude."""
    scale, inv = float(2.0**beta), float(2.0**-beta)
    if len(levels) < 2:
        return
    c = np.empty_like(levels[0])
    x = np.empty_like(levels[0])
    for t in range(len(levels) - 1, 0, -1):
        np.multiply(levels[t], inv, out=x)  # exact: a power of two, integers >= 1
        np.rint(x, out=c)
        np.subtract(x, c, out=x)  # exact: the fraction of x
        np.multiply(x, scale, out=levels[t])
        levels[t - 1] += c


def _packed(window, beta: int):
    """The window's levels as float64 pieces for the distillation, smallest first: the first
    level alone, then groups of ``53 // beta`` normalized levels, each group one exact integer
    (``|L| <= 2**(beta - 1)`` per level keeps a group of ``g`` levels below ``2**(beta g)``),
    so the TwoSum cascades see a half or a third as many pieces."""
    depth = window.shape[0]
    g = max(53 // beta, 1)
    step = float(2.0**beta)
    pieces = [window[0]]
    j = 1
    while j < depth:
        hi = min(depth, j + g)
        acc = window[j]
        for i in range(j + 1, hi):
            acc = acc * step + window[i]  # exact: integers below 2**53
        pieces.append(np.ldexp(acc, -beta * (hi - 1)))
        j = hi
    return np.stack(pieces[::-1])


def _finish(levels, base, beta: int, shape):
    """An ExactArray of ``shape`` from normalized levels (each flat float64 integers, highest
    first) worth ``sum_t L[t] * 2**(base - beta * t)``. Special values, zero signs: filled by the
    caller."""
    n = base.size
    T = len(levels) - 1
    W = min(T, math.ceil(_WINDOW_BITS / beta) + 1)
    L = np.stack(levels) if levels else np.zeros((1, n))
    nz = L != 0
    has = nz.any(axis=0)
    if T <= W:
        tstar = np.zeros(n, dtype=np.int64)
        window = L
        beyond = np.zeros(n, dtype=np.int8)
    else:
        tstar = np.argmax(nz, axis=0).astype(np.int64)
        rows = tstar[None, :] + np.arange(W + 1)[:, None]
        inside = rows <= T
        window = np.where(inside, np.take_along_axis(L, np.minimum(rows, T), axis=0), 0.0)
        # the sign of the first nonzero level after the window
        after = nz & (np.arange(T + 1)[:, None] > (tstar + W)[None, :])
        first = np.argmax(after, axis=0)
        beyond = np.where(after.any(axis=0),
                          np.sign(L[first, np.arange(n)]), 0).astype(np.int8)
    c1, c2, r, ok = _leading(_packed(window, beta))
    r = np.where(r == 0, beyond, r).astype(np.int8)
    E = base - beta * tstar
    zero = ~has
    ex = ExactArray.regular(shape, c1, c2, r, E, zero=zero, zsign=np.zeros(n, np.int8))
    bad = np.flatnonzero(has & ~ok)
    for i in bad:  # the exact path: never seen in tests, kept for soundness
        i = int(i)
        v = sum((Fraction(int(L[t, i])) * Fraction(2) ** int(base[i] - beta * t)
                 for t in range(T + 1)), Fraction(0))
        if v == 0:
            ex.zero[i] = True
        else:
            ex.hard[i] = v
    return ex


# ------------------------------------------------------------------------- special values
def _ind(x):
    """Indicator matrices (float64) of x's classes: nan, +inf, -inf, zero, >0 finite, <0 finite."""
    f = np.float64
    return {"nan": np.isnan(x).astype(f), "pinf": (x == np.inf).astype(f),
            "ninf": (x == -np.inf).astype(f), "zero": (x == 0).astype(f),
            "pos": ((x > 0) & np.isfinite(x)).astype(f),
            "neg": ((x < 0) & np.isfinite(x)).astype(f)}


def _specials(A, B):
    """Per element of ``A @ B``: NaN, +inf, -inf where IEEE arithmetic of the exact products
    gives them (0 * inf and inf - inf are NaN), else 0. Exact counts on BLAS."""
    a, b = _ind(A), _ind(B)
    ones_b = np.ones(B.shape[:-2] + (B.shape[-2], 1))
    ones_a = np.ones(A.shape[:-2] + (1, A.shape[-1]))
    ainf, binf = a["pinf"] + a["ninf"], b["pinf"] + b["ninf"]
    nan = (a["nan"] @ ones_b) + (ones_a @ b["nan"]) + ainf @ b["zero"] + a["zero"] @ binf
    bp, bn = b["pos"] + b["pinf"], b["neg"] + b["ninf"]
    pinf = a["pinf"] @ bp + a["ninf"] @ bn + a["pos"] @ b["pinf"] + a["neg"] @ b["ninf"]
    ninf = a["pinf"] @ bn + a["ninf"] @ bp + a["pos"] @ b["ninf"] + a["neg"] @ b["pinf"]
    nan = (nan > 0) | ((pinf > 0) & (ninf > 0))
    return np.where(nan, np.nan, np.where(pinf > 0, np.inf, np.where(ninf > 0, -np.inf, 0.0)))


_ZERO_GEMM = 1 << 14  # exact zeros past which their signs come from GEMM counts


def _zero_signs_gemm(A, B):
    """Per element of ``A @ B`` (3-D, finite), the zero-sign rule of :func:`_zero_signs` from
    exact counts on indicator matrices: with ``z`` "is zero", ``n`` "sign bit set" and
    ``nz = 1 - z``, a product is -0 iff ``(za or zb) and (na xor nb)``, which expands into
    sums of products of an A-side and a B-side indicator, each one GEMM (counts below 2**53:
    exact)."""
    f = np.float64
    k = A.shape[-1]
    na, nb = np.signbit(A).astype(f), np.signbit(B).astype(f)
    nza, nzb = (A != 0).astype(f), (B != 0).astype(f)
    nza_na, nzb_nb = nza * na, nzb * nb
    negzero = (na.sum(axis=-1, keepdims=True) + nb.sum(axis=-2, keepdims=True)
               - 2 * (na @ nb) - nza_na @ nzb - nza @ nzb_nb + 2 * (nza_na @ nzb_nb))
    zeros = k - nza @ nzb  # products that are zeros, of either sign
    return np.where(negzero == k, -1, np.where(zeros - negzero == k, 1, 0)).astype(np.int8)


def _zero_signs(ex, A, B, flat_index_shape):
    """For exact-zero elements, IEEE's sign of the sum: -1 where every product is a zero of
    negative sign (-0 + -0 is -0), +1 where every product is +0 (and for an empty sum), else 0
    (mixed zeros and cancellations: +0, -0 toward -inf)."""
    zi = np.flatnonzero(ex.zero)
    if not zi.size:
        return
    if A.shape[-1] == 0:
        ex.zsign[zi] = 1
        return
    if zi.size > _ZERO_GEMM:  # many exact zeros: count zero products on BLAS, not by gathering
        ex.zsign[zi] = _zero_signs_gemm(A, B).reshape(-1)[zi]
        return
    bidx, i, j = np.unravel_index(zi, flat_index_shape)
    sign = np.zeros(zi.size, np.int8)
    for start in range(0, zi.size, 4096):
        s = slice(start, start + 4096)
        ra = A[bidx[s], i[s], :]
        cb = B[bidx[s], :, j[s]]
        prod_zero = (ra == 0) | (cb == 0)
        neg = np.signbit(ra) != np.signbit(cb)
        allneg = (prod_zero & neg).all(axis=1)
        allpos = (prod_zero & ~neg).all(axis=1)
        sign[s] = np.where(allneg, -1, np.where(allpos, 1, 0))
    ex.zsign[zi] = sign


# ------------------------------------------------------------------------------- products
def _as3(x, batch):
    return x.reshape((batch,) + x.shape[-2:])


def matmul_exact(A, B, precision_a: int = 53, precision_b: int = 53,
                 block: int = 1 << 15, truncate: bool = True) -> ExactArray:
    """The exact ``A @ B`` of float64 arrays ``(..., m, k)`` and ``(..., k, n)`` (batch dims
    already broadcast to one shape), as an ExactArray of shape ``(..., m, n)``.

    ``precision_a``, ``precision_b``: significand bits of the inputs' format (53 for float64,
    24 for float32, ...): fewer bits mean fewer digits. ``block`` bounds the elements of one
    pass (columns of ``B`` are taken in blocks so the levels stay small). ``truncate``: lines
    wider than ``_KEEP_BITS`` keep their leading digits and a rigorous bound of the rest, and
    elements that bound cannot settle are recomputed exactly (see :func:`_matmul_levels`); the
    result then rounds exactly as the exact value does, but ``element()`` of a settled element
    is a value within the same 58-bit round-to-odd cell, not the exact value.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    out_shape = A.shape[:-1] + B.shape[-1:]
    batch = int(np.prod(A.shape[:-2], dtype=np.int64))
    A3, B3 = _as3(A, batch), _as3(B, batch)
    m, k = A3.shape[1:]
    n = B3.shape[2]
    total = batch * m * n
    special = None
    if not (np.isfinite(A3).all() and np.isfinite(B3).all()):
        special = _specials(A3, B3).reshape(-1)
        A3 = np.where(np.isfinite(A3), A3, 0.0)
        B3 = np.where(np.isfinite(B3), B3, 0.0)
    if k == 0 or total == 0:  # empty sums: +0 in every mode
        ex = ExactArray.zeros(out_shape)
    else:
        ta, la, ea_ = _top_low(A3, axis=2)  # (b, m, 1)
        tb, lb, eb_ = _top_low(B3, axis=1)  # (b, 1, n)
        ex = _matmul_levels(A3, B3, ta, tb, _line_bits(ta, la, ea_, precision_a),
                            _line_bits(tb, lb, eb_, precision_b), out_shape, block,
                            truncate)
        _zero_signs(ex, A3, B3, (batch, m, n))
    if special is not None:
        sp = special != 0
        sp |= np.isnan(special)
        ex.special = np.where(sp, special, 0.0)
        ex.zero &= ~sp
        for i in np.flatnonzero(sp):
            ex.hard.pop(int(i), None)
    return ex


def _digit_plan(k, bits_a, bits_b):
    """Choose the digit width for ``k``-long products: the ``beta`` (one per level count
    ``cnt``) that minimizes the GEMM work ``sum(digits of rows) * sum(digits of columns)``.
    Rows and columns then take only the digits they need, so a few lines with a wide exponent
    spread do not make every line pay for their extra digits."""
    best = None
    top = max(int(bits_a.max(initial=1)), int(bits_b.max(initial=1)), 1)
    for cnt in range(1, 65):
        beta = choose_beta(k, cnt)
        sa = np.maximum(-(-bits_a // beta), 1)
        sb = np.maximum(-(-bits_b // beta), 1)
        ua, na = np.unique(sa, return_counts=True)
        ub, nb = np.unique(sb, return_counts=True)
        work = np.outer(ua * na, ub * nb)
        # a group pair whose lines need more than cnt digits each takes digits of its own
        # (narrower), counted here as half as much work again
        work = np.where(np.minimum.outer(ua, ub) > cnt, 1.5 * work, work)
        cost = float(work.sum())
        if best is None or cost < best[0]:
            best = (cost, cnt, beta, sa, sb)
        if beta * cnt >= top + beta:  # more levels per product cannot help any more
            break
    return best[1:]


def _groups(counts):
    """``(count, index)`` per distinct digit count; the index is a slice where it can be."""
    out = []
    for c in np.unique(counts):
        idx = np.flatnonzero(counts == c)
        if idx.size == counts.size:
            idx = slice(None)
        elif idx[-1] - idx[0] + 1 == idx.size:
            idx = slice(int(idx[0]), int(idx[-1]) + 1)
        out.append((int(c), idx))
    return out


def _pick(idx, size):
    """``np.arange(size)[idx]`` for an index that is a slice or an array."""
    return np.arange(size)[idx] if isinstance(idx, slice) else idx


def _at(ri, cj):
    """An index ``(:, rows, cols)`` into a ``(batch, m, n)`` array for slices or arrays."""
    if isinstance(ri, slice) or isinstance(cj, slice):
        return (slice(None), ri, cj)
    return (slice(None), ri[:, None], cj[None, :])


_KEEP_BITS = 100  # bits of a wide line kept as digits; the rest is bounded (see below)
_RECOMPUTE = 1 / 64  # undecided share of a chunk past which the chunk is recomputed exactly


def _levels(DA, DB, beta, sa, sb):
    """The normalized levels (highest first) of ``sum DA[p] @ DB[q] 2**(-beta (p + q))``: the
    digit products on one grid added up, then carried."""
    levels = []
    tmp = None
    for t in range(sa + sb - 1):
        acc = None
        for p in range(max(0, t - sb + 1), min(sa, t + 1)):
            if acc is None:
                acc = np.matmul(DA[p], DB[t - p])
            else:
                if tmp is None:
                    tmp = np.empty_like(acc)
                np.matmul(DA[p], DB[t - p], out=tmp)
                acc += tmp
        levels.append(acc)
    _carry(levels, beta)
    return levels


def _chunk_levels(DA, DB, beta, sa, sb, base, sub):
    """ExactArray of the digit products ``sum DA[p] @ DB[q] 2**(-beta (p + q))``."""
    levels = _levels(DA, DB, beta, sa, sb)
    return _finish([lv.reshape(-1) for lv in levels], base, beta, sub)


def _abs_gemm_up(X, Y, k):
    """An upper bound of ``|X| @ |Y|`` (nonnegative GEMM: relative error below
    ``(k + 1) 2**-53``, plus what products lose to underflow)."""
    with np.errstate(over="ignore"):
        s = np.matmul(np.abs(X), np.abs(Y))
        return s * (1 + (k + 2) * 2.0**-52) + k * 2.0**-1073


def _decided(ex, rho):
    """Where every value within ``rho`` (absolute) of ``ex``'s value rounds to odd at 58 bits
    as ``ex``'s value does: then rounding into any format of at most 53 bits, in any mode
    (round-to-odd theorem), and the float64 ends of tolerance intervals agree as well."""
    c1 = ex.c1
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        # a 59-bit grid: finer than the 58-bit one in both binades next to c1 (below a
        # power of two the cells are half as wide as above it): conservative
        g = np.spacing(np.abs(c1)) * (1 / 64)
        t = ex.c2 / g  # exact: g is a power of two
        rs = np.ldexp(rho, np.clip(-ex.E, -2000, 2000).astype(np.int32))
        w = rs / g * (1 + 2.0**-50) + 2.0**-40  # margin: the sticky rest and the rounding
        ok = (np.floor(t - w) == np.floor(t + w)) & np.isfinite(w) & (c1 != 0)
    return ok | (rho == 0)


def _matmul_levels(A3, B3, ta, tb, bits_a, bits_b, out_shape, block, truncate=True):
    """The exact product from digits, block by block: rows grouped by the digits they need,
    columns likewise, each group pair's levels normalized and distilled in cache-sized
    column chunks. ``bits_a`` per row, ``bits_b`` per column (maxima over the batch).

    With ``truncate``, a line needing more than ``_KEEP_BITS`` bits keeps only the digits that
    cover them; the dropped rests ``RA``, ``RB`` are bounded per element by
    ``|RA| @ |B| + (|A| + |RA|) @ |RB|`` (rigorous, on BLAS), and an element whose value is
    settled within that bound (:func:`_decided`) keeps it: the ExactArray then rounds exactly
    as the exact value does into every format and mode. The others are recomputed exactly:
    the whole chunk when many (and then the group pair's remaining chunks directly, without
    the truncated attempt: heavy cancellation tends to hold for a whole matrix), else element
    by element."""
    batch, m, k = A3.shape
    n = B3.shape[2]
    plan_a, plan_b = bits_a, bits_b
    if truncate:
        plan_a, plan_b = np.minimum(bits_a, _KEEP_BITS), np.minimum(bits_b, _KEEP_BITS)
    cnt, beta, sa_rows, sb_cols = _digit_plan(k, plan_a, plan_b)
    c1 = np.empty((batch, m, n))
    c2 = np.empty((batch, m, n))
    r = np.empty((batch, m, n), np.int8)
    E = np.empty((batch, m, n), np.int64)
    zero = np.empty((batch, m, n), bool)
    hard = {}
    undecided = []
    col_groups = _groups(sb_cols)
    digits_b = {}  # (column group, beta, count): digits of those columns, split once

    def b_digits(g, cj, bb, cnt_b):
        if (g, bb, cnt_b) not in digits_b:
            d, rest = split_digits(B3[:, :, cj], tb[:, :, cj], bb, cnt_b)
            digits_b[g, bb, cnt_b] = (d, rest if rest.any() else None)
        return digits_b[g, bb, cnt_b]

    for sa, ri in _groups(sa_rows):
        rows = _pick(ri, m)
        Ab, tab = A3[:, ri], ta[:, ri]
        digits_a = {}

        def a_digits(bb, cnt_a, Ab=Ab, tab=tab, digits_a=digits_a):
            if (bb, cnt_a) not in digits_a:
                d, rest = split_digits(Ab, tab, bb, cnt_a)
                digits_a[bb, cnt_a] = (d, rest if rest.any() else None)
            return digits_a[bb, cnt_a]

        for g, (sb, cj) in enumerate(col_groups):
            cols = _pick(cj, n)
            b_beta = beta
            if min(sa, sb) > cnt:  # both need more digits than the plan's levels allow
                b_beta, b_sa, b_sb = _uniform_digits(k, int(plan_a[rows].max()),
                                                     int(plan_b[cols].max()))
            else:
                b_sa, b_sb = sa, sb
            DA, RA = a_digits(b_beta, b_sa)
            DBg, RBg = b_digits(g, cj, b_beta, b_sb)
            full = None  # exact digits for this group pair, made when needed
            exact_only = False  # set once a chunk was mostly unsettled (heavy cancellation)
            nb = max(1, min(cols.size, block // max(batch * rows.size, 1)))
            j0 = 0
            while j0 < cols.size:
                if exact_only:  # the rest of this group pair as its first chunk went: exact,
                    # in wider chunks (GEMMs of a few columns run below BLAS's speed)
                    step = min(cols.size - j0, 8 * nb)
                    cc = cols[j0:j0 + step]
                    cs = (slice(int(cc[0]), int(cc[-1]) + 1) if cc[-1] - cc[0] + 1 == cc.size
                          else cc)
                    sub = (batch, rows.size, cc.size)
                    fb, fa, fbb, FDA, FDB = full
                    fbase = (tab + tb[:, :, cs] - 2 * fb).reshape(-1)
                    ex = _chunk_levels(FDA, [d[:, :, j0:j0 + step] for d in FDB], fb, fa,
                                       fbb, fbase, sub)
                    _scatter(ex, ri, cs, rows, cc, sub, (c1, c2, r, E, zero), hard, (batch, m, n))
                    j0 += step
                    continue
                cc = cols[j0:j0 + nb]
                cs = slice(int(cc[0]), int(cc[-1]) + 1) if cc[-1] - cc[0] + 1 == cc.size else cc
                sub = (batch, rows.size, cc.size)
                base = (tab + tb[:, :, cs] - 2 * b_beta).reshape(-1)
                ex = _chunk_levels(DA, [d[:, :, j0:j0 + nb] for d in DBg], b_beta, b_sa, b_sb,
                                   base, sub)
                if RA is not None or RBg is not None:
                    rho = 0.0
                    Bc = B3[:, :, cs]
                    if RA is not None:
                        rho = _abs_gemm_up(RA, Bc, k)
                    if RBg is not None:
                        Aup = np.abs(Ab) + (np.abs(RA) if RA is not None else 0.0)
                        rho = rho + _abs_gemm_up(Aup, RBg[:, :, j0:j0 + nb], k)
                    rho = np.asarray(rho).reshape(-1) * (1 + 2.0**-52)
                    und = ~_decided(ex, rho)
                    for i in ex.hard:  # the Fraction of the kept digits is not the value
                        und[i] = True
                    if und.mean() > _RECOMPUTE:  # many: the chunk, exactly
                        if full is None:
                            fb, fa, fbb = _uniform_digits(k, int(bits_a[rows].max()),
                                                          int(bits_b[cols].max()))
                            full = (fb, fa, fbb, split_digits(Ab, tab, fb, fa)[0],
                                    split_digits(B3[:, :, cj], tb[:, :, cj], fb, fbb)[0])
                        fb, fa, fbb, FDA, FDB = full
                        fbase = (tab + tb[:, :, cs] - 2 * fb).reshape(-1)
                        ex = _chunk_levels(FDA, [d[:, :, j0:j0 + nb] for d in FDB], fb, fa,
                                           fbb, fbase, sub)
                        exact_only = True
                    elif und.any():  # few: element by element, after the loop
                        b_, i_, j_ = np.unravel_index(np.flatnonzero(und), sub)
                        undecided.append(np.ravel_multi_index((b_, rows[i_], cc[j_]),
                                                              (batch, m, n)))
                _scatter(ex, ri, cs, rows, cc, sub, (c1, c2, r, E, zero), hard, (batch, m, n))
                j0 += nb
    total = batch * m * n
    out = ExactArray.regular(out_shape, c1, c2, r, E, zero=zero, zsign=np.zeros(total, np.int8),
                             hard=hard)
    if undecided:
        _refine(out, A3, B3, np.concatenate(undecided), (batch, m, n))
    return out


def _scatter(ex, ri, cs, rows, cc, sub, fields, hard, shape3):
    """Write a chunk's ExactArray into the output's fields at rows ``ri``, columns ``cs``."""
    at = _at(ri, cs)
    c1, c2, r, E, zero = fields
    c1[at] = ex.c1.reshape(sub)
    c2[at] = ex.c2.reshape(sub)
    r[at] = ex.r.reshape(sub)
    E[at] = ex.E.reshape(sub)
    zero[at] = ex.zero.reshape(sub)
    for i, v in ex.hard.items():
        b_, i_, j_ = np.unravel_index(i, sub)
        hard[int(np.ravel_multi_index((b_, rows[i_], cc[j_]), shape3))] = v


def _refine(ex, A3, B3, idx, shape3, chunk: int = 2048):
    """Replace elements ``idx`` of ``ex`` by their exact values: one dot product each, on the
    digits (vectorized over the elements, exact: integer sums below 2**52)."""
    for s0 in range(0, idx.size, chunk):
        ii = idx[s0:s0 + chunk]
        b_, i_, j_ = np.unravel_index(ii, shape3)
        redone = set(ii.tolist())
        ex.hard = {key: v for key, v in ex.hard.items() if key not in redone}
        sub = _dot_exact(A3[b_, i_, :], B3[b_, :, j_])
        ex.c1[ii], ex.c2[ii], ex.r[ii], ex.E[ii] = sub.c1, sub.c2, sub.r, sub.E
        ex.zero[ii] = sub.zero
        for i, v in sub.hard.items():
            ex.hard[int(ii[i])] = v


def _dot_exact(a, b) -> ExactArray:
    """Exact row-by-row dot products of finite float64 ``a`` and ``b`` (both ``(u, k)``)."""
    u, k = a.shape
    ta, la, ea_ = _top_low(a, axis=1)
    tb, lb, eb_ = _top_low(b, axis=1)
    beta, sa, sb = _uniform_digits(k, _bits(ta, la, ea_, 53), _bits(tb, lb, eb_, 53))
    DA, _ = split_digits(a, ta, beta, sa)
    DB, _ = split_digits(b, tb, beta, sb)
    levels = []
    for t in range(sa + sb - 1):
        acc = np.zeros(u)
        for p in range(max(0, t - sb + 1), min(sa, t + 1)):
            acc += np.einsum("uk,uk->u", DA[p], DB[t - p])  # exact: integers below 2**52
        levels.append(acc)
    _carry(levels, beta)
    return _finish(levels, (ta + tb - 2 * beta).reshape(-1), beta, (u,))


def _uniform_digits(k, bits_a, bits_b):
    """``(beta, sa, sb)``: one digit width and count for every row and column (the levels hold
    ``min(sa, sb)`` products each)."""
    cnt = 1
    while True:
        beta = choose_beta(k, cnt)
        sa = max(math.ceil(bits_a / beta), 1)
        sb = max(math.ceil(bits_b / beta), 1)
        need = min(sa, sb)
        if need <= cnt:
            return beta, sa, sb
        cnt = need


# ----------------------------------------------------------------------------- reductions
_EXTRACT_CHUNK = 1 << 15  # elements of one extraction pass (in cache)
_EXTRACT_M = 16  # 2**M >= chunk + 2: a level's sum over a chunk is exact
_EXTRACT_BITS = 53 - _EXTRACT_M  # bits one extraction level takes
_LONG_ROW = 1 << 16  # rows at least this long (and few) take the extraction path


def _row_extract(x, wide: bool):
    """The exact sum of one finite row ``x`` (float64, float32 or float16) as ``(V, e)``, the
    value ``V * 2**e`` with Python integers, or None when its exponent spread is too wide for
    one scaling (``wide``: the data may have one, i.e. it is float64).

    Rump, Ogita and Oishi's ExtractVector, chunk by chunk: with the row scaled below 1 and
    ``sigma = 2**k``, ``q = fl((sigma + x) - sigma)`` takes the bits of every ``x`` down to
    ``2**(k - 53)``, ``x - q`` is exact, and the float64 sum of a chunk's ``q`` is exact in any
    order (they share the grid and their total stays below ``sigma``). Each level takes 37 bits;
    the levels' chunk sums are exact integers in their grid units, added as Python integers.
    """
    hi = float(np.max(x))
    lo = float(np.min(x))
    amax = max(abs(hi), abs(lo))
    if amax == 0:
        return 0, 0
    top = math.frexp(amax)[1]  # |x| < 2**top
    if wide:
        mn = float(np.min(np.abs(x), where=x != 0, initial=np.inf))
        if top - math.frexp(mn)[1] > 1000:
            return None
    # scaling by 2**-top is exact: the lowest bit stays above 2**-1074
    s1 = np.float64(math.ldexp(1.0, -top) if -top < 1024 else 2.0**1000)
    s2 = None if -top < 1024 else np.float64(math.ldexp(1.0, -top - 1000))
    C = _EXTRACT_CHUNK
    buf = np.empty(min(C, x.size))
    q = np.empty_like(buf)
    acc = []
    for c0 in range(0, x.size, C):
        n = min(C, x.size - c0)
        b, qq = buf[:n], q[:n]
        np.multiply(x[c0:c0 + n], s1, out=b)
        if s2 is not None:
            b *= s2
        level = 0
        while True:
            kp = _EXTRACT_M - _EXTRACT_BITS * level  # |b| <= 2**(kp - M): sigma = 2**kp
            sigma = math.ldexp(1.0, kp)
            np.add(b, sigma, out=qq)
            qq -= sigma
            b -= qq  # exact
            tau = float(qq.sum())  # exact: a multiple of 2**(kp - 53) below 2**kp
            if level == len(acc):
                acc.append(0)
            acc[level] += int(math.ldexp(tau, 53 - kp))
            level += 1
            if not b.any():
                break
    P = len(acc)
    V = 0
    for v in acc:
        V = (V << _EXTRACT_BITS) + v
    # level p's unit is 2**(kp - 53) of the scaled row
    return V, _EXTRACT_M - _EXTRACT_BITS * (P - 1) - 53 + top


def from_integers(vals, shape) -> ExactArray:
    """An ExactArray of ``(V, e)`` pairs (values ``V * 2**e``, Python integers)."""
    n = len(vals)
    c1, c2 = np.zeros(n), np.zeros(n)
    r = np.zeros(n, np.int8)
    E = np.zeros(n, np.int64)
    zero = np.zeros(n, bool)
    for i, (V, e) in enumerate(vals):
        if V == 0:
            zero[i] = True
            continue
        sh = max(abs(V).bit_length() - 110, 0)
        qv = V >> sh  # floor: V = qv * 2**sh + rem, 0 <= rem < 2**sh
        rem = V - (qv << sh)
        a = float(qv)  # nearest-even, exact in range: qv has at most 110 bits
        d = qv - int(a)
        b = float(d)
        rest = d - int(b)
        c1[i], c2[i], E[i] = a, b, sh + e
        # the rest beyond c1 + c2: an integer (at least 1 in magnitude) or the fraction rem
        r[i] = (rest > 0) - (rest < 0) if rest else int(rem > 0)
    return ExactArray.regular(shape, c1, c2, r, E, zero=zero, zsign=np.zeros(n, np.int8))


def rowsum_exact(X, precision: int = 53, chunk: int = 1 << 16) -> ExactArray:
    """The exact sum of each row of ``X`` (float64, float32 or float16, shape ``(m, k)``), as
    an ExactArray of shape ``(m,)``. A few long rows take ExtractVector (:func:`_row_extract`);
    otherwise digits on per-row grids, summed by numpy in float64 (exact: integers below
    2**52), ``chunk`` columns at a time so each pass stays in cache."""
    X = np.asarray(X)
    if X.dtype not in (np.float64, np.float32, np.float16):
        X = X.astype(np.float64)
    m, k = X.shape
    from . import _fastsums  # compiled where numba runs: the same values

    if _fastsums.superacc_rows(m, k):
        return _fastsums.rowsum_superacc(X, m, k)
    special = None
    with np.errstate(invalid="ignore", over="ignore"):
        finite = bool(np.isfinite(X.sum()))  # inf or NaN anywhere (or an overflow) shows
    if not finite and not np.isfinite(X).all():
        with np.errstate(invalid="ignore"):
            s = np.where(np.isfinite(X), 0.0, X).sum(axis=1)  # inf - inf: NaN
        special = s
        X = np.where(np.isfinite(X), X, 0.0)
    if m == 0:
        return ExactArray.zeros((0,), zsign=0)
    ex = None
    if m <= 16 and k >= _LONG_ROW:
        wide = X.dtype == np.float64 and precision > 24  # narrower formats: spread < 300
        vals = [_row_extract(X[i], wide) for i in range(m)]
        if all(v is not None for v in vals):
            ex = from_integers(vals, (m,))
    if ex is None:
        ex = _rowsum_digits(X.astype(np.float64, copy=False), m, k, chunk)
    _zero_signs_rows(ex, X, k)
    if special is not None:
        put_specials(ex, special)
    return ex


def _zero_signs_rows(ex, X, k) -> None:
    """IEEE zero signs of exact-zero row sums, in place: -0 when every term is -0, +0 in every
    mode when every term is +0 (or there is none), else the sum rule."""
    zi = np.flatnonzero(ex.zero)
    if zi.size:
        Xz = X[zi]
        allneg = (np.signbit(Xz) & (Xz == 0)).all(axis=1) & (k > 0)
        allpos = (~np.signbit(Xz) & (Xz == 0)).all(axis=1)
        ex.zsign[zi] = np.where(allneg, -1, np.where(allpos, 1, 0))


def put_specials(ex: ExactArray, special) -> None:
    """Store the IEEE sums of the non-finite terms (``special``: NaN, +-inf, or 0 where every
    term is finite) as ``ex``'s special values, in place: those elements are neither zeros nor
    hard."""
    sp = (special != 0) | np.isnan(special)
    ex.special = np.where(sp, special, 0.0)
    ex.zero &= ~sp
    for i in np.flatnonzero(sp):
        ex.hard.pop(int(i), None)


def digit_stream(rest, top, beta: int):
    """Take finite float64 ``rest`` (rows; modified in place) apart into digits on per-row
    grids: yields ``(p, d)``, the digits of level ``p`` on the grid ``2**(top - beta (p + 1))``
    (``top`` the rows' top exponents, a column), until nothing is left."""
    p = 0
    while True:
        if p * beta > 2200:  # every float64 bit lies within 2**1024 .. 2**-1074
            raise RuntimeError("exact row sum: digits did not exhaust the data (a bug)")
        yield p, _take_digit(rest, (beta * (p + 1) - top).astype(np.int32))
        p += 1
        if not rest.any():
            return


def rowsum_levels(X, chunk: int = 1 << 16):
    """The exact row sums of finite float64 ``X (m, k)`` as carried digit levels: ``(levels,
    top, beta)`` with ``sum(X[i]) = sum_p levels[p][i] * 2**(top[i] - beta (p + 1))``, each
    level an exact float64 integer. ``chunk`` columns at a time, so each pass stays in cache."""
    m, k = X.shape
    # the top exponent per row; digits are taken until nothing is left (no spread scan)
    _, top = np.frexp(np.abs(X).max(axis=1, keepdims=True) if k else np.zeros((m, 1)))
    top = top.astype(np.int64)
    ck = min(k, chunk) if k else 1
    beta = choose_beta(k, 1, products=False)  # the first level collects every chunk
    levels = [np.zeros(m)]
    for c0 in range(0, k, ck):
        rest = np.array(X[:, c0:c0 + ck], dtype=np.float64, copy=True)
        for p, d in digit_stream(rest, top, beta):
            if p == len(levels):
                levels.append(np.zeros(m))
            # each chunk's sums are exact integers below 2**52, kept there by the carry
            levels[p] += d.sum(axis=1)
        _carry(levels, beta)
    return levels, top.reshape(-1), beta


def int_rowsums(X, chunk: int = 1 << 16):
    """Exact row sums of finite float64 ``X (m, k)`` as ``(V, e)``: Python ints (an object
    array) and an int64 array with ``sum(X[i]) == V[i] * 2**e[i]``. The digits on per-row
    grids of :func:`rowsum_levels` (each level an exact float64 integer), assembled per row."""
    m, k = X.shape
    if m == 0:
        return np.zeros(0, dtype=object), np.zeros(0, np.int64)
    from . import _fastsums  # compiled where numba runs: the same values

    if _fastsums.superacc_rows(m, k):
        return _fastsums.int_rowsums_superacc(X)
    levels, top, beta = rowsum_levels(X, chunk)
    T = len(levels)
    V = np.zeros(m, dtype=object)
    for p, lv in enumerate(levels):  # level p on the grid 2**(top - beta (p + 1))
        V = V + lv.astype(np.int64).astype(object) * (1 << (beta * (T - 1 - p)))
    return V, (top - beta * T)


def prefix_exact(X, block: int = 1 << 20) -> ExactArray:
    """Every prefix sum of every row of float64 ``X (m, k)`` exactly, as one ExactArray of
    ``m * k`` elements (blocks of rows of about ``block`` elements each): the running sums
    of cumsum, with IEEE's zero signs and special values."""
    m, k = X.shape
    n = m * k
    out = ExactArray.regular((n,), np.zeros(n))
    if n == 0:
        return out
    rows = max(1, block // max(k, 1))
    for r0 in range(0, m, rows):
        part = _prefix_block(X[r0:r0 + rows])
        sl = slice(r0 * k, min(m, r0 + rows) * k)
        for name in ("c1", "c2", "r", "E", "special", "zero", "zsign"):
            getattr(out, name)[sl] = getattr(part, name)
        out.hard.update({i + r0 * k: v for i, v in part.hard.items()})
    return out


def _prefix_block(X) -> ExactArray:
    """Each row split into integer digits on its own grid (``beta`` bits, so that running sums
    of ``k`` digits stay below 2**52: exact), the running sums of each digit array taken by
    ``np.cumsum``, and every prefix's levels distilled (:func:`_finish`)."""
    m, k = X.shape
    n = m * k
    special = None
    if not np.isfinite(X).all():
        with np.errstate(invalid="ignore"):
            special = np.cumsum(np.where(np.isfinite(X), 0.0, X), axis=1).reshape(-1)
        X = np.where(np.isfinite(X), X, 0.0)
    _, top = np.frexp(np.abs(X).max(axis=1, keepdims=True))
    top = top.astype(np.int64)
    beta = choose_beta(k, 1, products=False)
    rest = np.array(X, copy=True)
    # each level's running sums are exact: |sum| < k 2**beta <= 2**52
    levels = [np.cumsum(d, axis=1).reshape(-1) for _, d in digit_stream(rest, top, beta)]
    _carry(levels, beta)
    base = np.repeat((top - beta).reshape(-1), k)
    ex = _finish(levels, base, beta, (n,))
    zi = np.flatnonzero(ex.zero)
    if zi.size:  # IEEE's zero signs of each prefix: all -0 so far, all +0, or the sum rule
        negz = np.cumsum(~((X == 0) & np.signbit(X)), axis=1).reshape(-1) == 0
        posz = np.cumsum(~((X == 0) & ~np.signbit(X)), axis=1).reshape(-1) == 0
        ex.zsign[zi] = np.where(negz[zi], -1, np.where(posz[zi], 1, 0))
    if special is not None:
        put_specials(ex, special)
    return ex


def _rowsum_digits(X, m, k, chunk):
    """Exact row sums of finite float64 ``X`` from digits on per-row grids."""
    levels, top, beta = rowsum_levels(X, chunk)
    # levels[p] * 2**(top - beta (p + 1)) = levels[p] * 2**(base - beta p)
    return _finish(levels, top - beta, beta, (m,))


# ------------------------------------------------------------------------------- integers
def _int_limbs(x):
    """Signed 16-bit limbs (int64 arrays, lowest first) of an integer array of any width up to
    64 bits: ``x == sum(l_p << 16 p)``, ``|l_p| <= 2**15``."""
    v = x.astype(object)
    limbs = []
    for _ in range(5):  # |x| < 2**64: five signed limbs hold it
        lo = integer_overflow(v, FORMATS["int16"], "wrap")  # the signed residue mod 2**16
        limbs.append(np.asarray(lo, dtype=np.int64))
        v = (v - lo) // (1 << 16)
    return limbs


def int_matmul_exact(A, B):
    """The exact ``A @ B`` of integer arrays (batch dims broadcast), as an int64 array when
    every element fits int64 and no intermediate could overflow, else as Python ints (object)."""
    A = np.asarray(A)
    B = np.asarray(B)
    k = A.shape[-1]
    if A.size == 0 or B.size == 0:
        return np.zeros(A.shape[:-1] + B.shape[-1:], dtype=np.int64)
    amax = int(np.abs(A.astype(object)).max()) if A.size else 0
    bmax = int(np.abs(B.astype(object)).max()) if B.size else 0
    if amax * bmax * max(k, 1) < 2**53:
        return np.rint(np.matmul(A.astype(np.float64), B.astype(np.float64))).astype(np.int64)
    la, lb = _int_limbs(A), _int_limbs(B)
    la = [v.astype(np.float64) for v in la]
    lb = [v.astype(np.float64) for v in lb]
    kc = max(1, 2**53 // (2**30 * len(la)))  # limb products below 2**30, sums below 2**53
    total = None
    for p, a in enumerate(la):
        for q, b in enumerate(lb):
            acc = None
            for c0 in range(0, k, kc):
                part = np.rint(np.matmul(a[..., c0:c0 + kc], b[..., c0:c0 + kc, :]))
                part = part.astype(np.int64).astype(object)
                acc = part if acc is None else acc + part
            term = acc * (1 << (16 * (p + q)))
            total = term if total is None else total + term
    return total


def int_rowsum_exact(X):
    """Exact row sums of an integer array ``(m, k)``: Python ints (object) or int64."""
    X = np.asarray(X)
    k = X.shape[1] if X.ndim == 2 else 0
    mx = int(np.abs(X.astype(object)).max()) if X.size else 0
    if mx * max(k, 1) < 2**62:
        return X.astype(np.int64).sum(axis=1)
    return X.astype(object).sum(axis=1)


# ------------------------------------------------------------------ exact levels as operands
def matmul_operand(A, B, precision_a: int = 53, precision_b: int = 53):
    """The exact ``A @ B`` (float64, batch dims broadcast) as an engine ExactPart, for sums that
    combine it with other terms (gemm's alpha and beta * C), and the ExactArray of it. The
    components are ``c1`` and ``c2`` where those hold every value exactly, else the normalized
    levels."""
    from ._engine import ExactPart

    ex = matmul_exact(A, B, precision_a, precision_b, truncate=False)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    batch = int(np.prod(A.shape[:-2], dtype=np.int64))
    A3 = np.where(np.isfinite(A), A, 0.0).reshape((batch,) + A.shape[-2:])
    B3 = np.where(np.isfinite(B), B, 0.0).reshape((batch,) + B.shape[-2:])
    k = A3.shape[2]
    n = ex.size
    comps = []
    if k and n and not ex.hard and not ex.r.any():
        # every value is exactly (c1 + c2) * 2**E (no rest: float32 data at moderate k)
        live = ~ex.zero & (ex.special == 0)
        for c in (ex.c1, ex.c2):
            m_, e_ = np.frexp(np.where(live, c, 0.0))
            comps.append((m_, e_.astype(np.int64) + ex.E))
    elif k and n:
        ta, la, ea_ = _top_low(A3, axis=2)
        tb, lb, eb_ = _top_low(B3, axis=1)
        beta, sa, sb = _uniform_digits(k, _bits(ta, la, ea_, precision_a),
                                       _bits(tb, lb, eb_, precision_b))
        DA, _ = split_digits(A3, ta, beta, sa)
        DB, _ = split_digits(B3, tb, beta, sb)
        levels = _levels(DA, DB, beta, sa, sb)
        base = (ta + tb - 2 * beta).reshape(-1)
        for t, lv in enumerate(levels):
            m_, e_ = np.frexp(lv.reshape(-1))
            comps.append((m_, e_.astype(np.int64) + base - beta * t))
    if not comps:
        comps = [(np.zeros(n), np.zeros(n, np.int64))]
    sign = np.sign(ex.c1)
    zero_val = np.where(ex.zsign < 0, -0.0, 0.0)
    shadow = np.where(ex.zero, zero_val, sign)
    sp = (ex.special != 0) | np.isnan(ex.special)
    shadow = np.where(sp, ex.special, shadow)
    for i, v in ex.hard.items():
        shadow[i] = 1.0 if v > 0 else -1.0
    return ExactPart(comps, shadow), ex
