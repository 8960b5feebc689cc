"""Exact long sums: matrix products and reductions, exactly, on BLAS.

The engine's :func:`~._engine.sum_of_products` stacks every piece of every term, which is right
for the few terms of add and multiply and wrong for the K terms of a matmul element. This
module computes K-term sums exactly with error-free matrix products (the Ozaki scheme) and hands
the result to the same rounding step, as an :class:`~._engine.ExactArray`.

Splitting (per row of ``A``, per column of ``B``)
--------------------------------------------------
Row ``i`` of ``A`` has its largest exponent ``ea[i]`` (``|a| < 2**ea``). Its *digits* are integer
matrices: ``D0 = rint(a * 2**(beta - ea))``, then the rest ``a - D0 * 2**(ea - beta)`` (exact)
gives ``D1`` on the grid ``2**(ea - 2 beta)``, and so on until nothing is left; ``|D0| <= 2**beta``
and ``|Dp| <= 2**(beta - 1)`` after. The digits are integers held in float64, so a product
``DA[p] @ DB[q]`` of ``k``-long rows is a sum of integers below ``k * 2**(2 beta)``: BLAS computes
it exactly, in any order, when that stays below 2**53. All products with ``p + q = t`` share one
grid and are added into level ``L[t]`` (exact while ``cnt * k * 2**(2 beta) <= 2**52``), and the
exact value of an element is ``sum_t L[t] * 2**(ea + eb - beta * (t + 2))``.

The digits live in integer units, never in scaled floats, so no exponent spread (not even
2**-1074 beside 2**1023 in one row) loses a bit; a wide spread only costs more digits.

Distillation
------------
The levels overlap; one carry pass from the lowest level up (``c = rint(L[t] / 2**beta)``,
``L[t] -= c * 2**beta``, ``L[t-1] += c``, all exact) leaves every level below the first a signed
digit with ``|L[t]| <= 2**(beta - 1)``, so the first nonzero level decides the sign and a window
of ``ceil(110 / beta) + 1`` levels from it decides the leading 106 bits. The window's pieces are
distilled with the engine's TwoSum cascades (``_leading``) into ``c1``, ``c2`` and the sign of the
rest, which is the window's remainder or, where that is zero, the sign of the first nonzero
level below the window. An element whose distillation does not settle (none in practice) takes
the exact path: the Fraction of its levels.

Integer operands take the same splitting in 16-bit limbs and Python integers for the total.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._engine import ExactArray, _leading

__all__ = ["matmul_exact", "rowsum_exact", "int_matmul_exact", "int_rowsum_exact",
           "choose_beta", "split_digits"]

_NEG = -(1 << 40)  # an exponent below every float64 exponent (for masked maxima)
_POS = 1 << 40
_WINDOW_BITS = 110  # leading bits the distillation window must hold (c1 and c2: 106)


# ------------------------------------------------------------------------------- splitting
def _top_low(x, axis):
    """Per line along ``axis``: the largest frexp exponent of a nonzero element (``|x| <
    2**top``) and the smallest; ``top = low = 0`` for an all-zero line."""
    _, e = np.frexp(x)
    nz = x != 0
    e = e.astype(np.int64)
    top = np.max(np.where(nz, e, _NEG), axis=axis, keepdims=True)
    low = np.min(np.where(nz, e, _POS), axis=axis, keepdims=True)
    empty = top == _NEG
    return np.where(empty, 0, top), np.where(empty, 0, low), empty


def choose_beta(k: int, cnt: int, products: bool = True) -> int:
    """Digit width: sums of ``k`` products of digits, ``cnt`` pairs per level, stay below 2**52
    (so that a level plus a carry stays below 2**53). Without products (reductions), sums of
    ``k`` digits below 2**52."""
    lg = math.ceil(math.log2(max(k * cnt, 1)))
    if products:
        return max((52 - lg) // 2, 1)
    return max(52 - lg - 1, 1)


def _scale(rest, sh):
    """``rest * 2**sh`` (exact where the result is normal) and the step back ``d * 2**-sh``:
    a multiplication by a power of two where both powers are normal floats, else ldexp."""
    lo, hi = int(sh.min()), int(sh.max())
    if -1000 < lo and hi < 1000:
        f = np.exp2(sh.astype(np.float64))
        return rest * f, lambda d: d * (1.0 / f)  # 1 / 2**sh: exact
    return np.ldexp(rest, sh), lambda d: np.ldexp(d, -sh)


def split_digits(x, top, beta: int, count: int):
    """``count`` integer digit arrays of ``x`` (float64, finite) on the grids
    ``2**(top - beta * (p + 1))`` (``top`` broadcasts against ``x``); their weighted sum is ``x``
    when ``beta * count`` covers the exponent spread plus the precision."""
    digits = []
    rest = np.array(x, dtype=np.float64, copy=True)
    for p in range(count):
        sh = (beta * (p + 1) - top).astype(np.int32)
        scaled, back = _scale(rest, sh)
        # Note: truncation, not rint: a digit that rounded up to 2**beta at the top of the
        # range (float64's largest values) would overflow on the way back. |d| < 2**beta.
        d = np.trunc(scaled)
        rest -= back(d)  # exact: see the module notes
        digits.append(d)
    return digits, rest


def _bits(top, low, empty, precision):
    """Bits a line needs from its top: spread of exponents plus the precision."""
    b = np.where(empty, 0, top - low + precision)
    return int(b.max()) if b.size else 0


# ---------------------------------------------------------------------------- distillation
def _carry(levels, beta: int):
    """Normalize the levels (a list, highest first) in place: every level but the first ends
    with ``|L| <= 2**(beta - 1)``. Exact while each level stays below 2**52 in magnitude."""
    scale, inv = float(2.0**beta), float(2.0**-beta)
    for t in range(len(levels) - 1, 0, -1):
        c = np.rint(levels[t] * inv)
        levels[t] -= c * scale
        levels[t - 1] += c


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
    depth = window.shape[0]
    P = np.empty((depth, n))
    for j in range(depth):  # smallest first: the cascades carry upward
        P[depth - 1 - j] = np.ldexp(window[j], -beta * j) if j else window[j]
    c1, c2, r, ok = _leading(P)
    r = np.where(r == 0, beyond, r).astype(np.int8)
    E = base - beta * tstar
    zero = ~has
    special = np.zeros(n)
    ex = ExactArray(shape, c1, c2, r, E.astype(np.int64), special, zero,
                    np.zeros(n, np.int8), {})
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


def _zero_signs(ex, A, B, flat_index_shape):
    """For exact-zero elements: -1 where every product is a zero of negative sign (IEEE's sum
    of -0s is -0), else 0 (the sum rule: +0, -0 toward -inf)."""
    zi = np.flatnonzero(ex.zero)
    if not zi.size:
        return
    bidx, i, j = np.unravel_index(zi, flat_index_shape)
    sign = np.zeros(zi.size, np.int8)
    for start in range(0, zi.size, 4096):
        s = slice(start, start + 4096)
        ra = A[bidx[s], i[s], :]
        cb = B[bidx[s], :, j[s]]
        prod_zero = (ra == 0) | (cb == 0)
        neg = np.signbit(ra) != np.signbit(cb)
        allneg = (prod_zero & neg).all(axis=1) & (ra.shape[1] > 0)
        sign[s] = np.where(allneg, -1, 0)
    ex.zsign[zi] = sign


# ------------------------------------------------------------------------------- products
def _as3(x, batch):
    return x.reshape((batch,) + x.shape[-2:])


def matmul_exact(A, B, precision_a: int = 53, precision_b: int = 53,
                 block: int = 1 << 22) -> ExactArray:
    """The exact ``A @ B`` of float64 arrays ``(..., m, k)`` and ``(..., k, n)`` (batch dims
    already broadcast to one shape), as an ExactArray of shape ``(..., m, n)``.

    ``precision_a``, ``precision_b``: significand bits of the inputs' format (53 for float64,
    24 for float32, ...): fewer bits mean fewer digits. ``block`` bounds the elements of one
    pass (columns of ``B`` are taken in blocks so the levels stay small).
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
    if k == 0 or total == 0:
        z = np.zeros(total)
        ex = ExactArray(out_shape, z, z.copy(), np.zeros(total, np.int8),
                        np.zeros(total, np.int64), z.copy(), np.ones(total, bool),
                        np.zeros(total, np.int8), {})
    else:
        ta, la, ea_ = _top_low(A3, axis=2)  # (b, m, 1)
        tb, lb, eb_ = _top_low(B3, axis=1)  # (b, 1, n)
        ex = _matmul_levels(A3, B3, ta, tb, _bits(ta, la, ea_, precision_a),
                            _bits(tb, lb, eb_, precision_b), out_shape, block)
        _zero_signs(ex, A3, B3, (batch, m, n))
    if special is not None:
        sp = special != 0
        sp |= np.isnan(special)
        ex.special = np.where(sp, special, 0.0)
        ex.zero &= ~sp
        for i in np.flatnonzero(sp):
            ex.hard.pop(int(i), None)
    return ex


def _matmul_levels(A3, B3, ta, tb, bits_a, bits_b, out_shape, block):
    batch, m, k = A3.shape
    n = B3.shape[2]
    cnt = 1
    while True:
        beta = choose_beta(k, cnt)
        sa = max(math.ceil(bits_a / beta), 1)
        sb = max(math.ceil(bits_b / beta), 1)
        need = min(sa, sb)
        if need <= cnt:
            break
        cnt = need
    DA, _ = split_digits(A3, ta, beta, sa)
    nb = max(1, min(n, block // max(batch * m, 1)))
    T = sa + sb - 1
    c1 = np.empty((batch, m, n))
    c2 = np.empty((batch, m, n))
    r = np.empty((batch, m, n), np.int8)
    E = np.empty((batch, m, n), np.int64)
    zero = np.empty((batch, m, n), bool)
    hard = {}
    for j0 in range(0, n, nb):
        js = slice(j0, min(n, j0 + nb))
        DB, _ = split_digits(B3[:, :, js], tb[:, :, js], beta, sb)
        levels = []
        for t in range(T):
            acc = None
            for p in range(max(0, t - sb + 1), min(sa, t + 1)):
                prod = np.matmul(DA[p], DB[t - p])
                if acc is None:
                    acc = prod
                else:
                    acc += prod
            levels.append(acc)
        _carry(levels, beta)
        sub = (batch, m, js.stop - js.start)
        base = (ta + tb[:, :, js] - 2 * beta).reshape(-1)
        ex = _finish([lv.reshape(-1) for lv in levels], base, beta, sub)
        c1[:, :, js] = ex.c1.reshape(sub)
        c2[:, :, js] = ex.c2.reshape(sub)
        r[:, :, js] = ex.r.reshape(sub)
        E[:, :, js] = ex.E.reshape(sub)
        zero[:, :, js] = ex.zero.reshape(sub)
        for i, v in ex.hard.items():
            b_, i_, j_ = np.unravel_index(i, sub)
            hard[int(np.ravel_multi_index((b_, i_, j_ + j0), (batch, m, n)))] = v
    total = batch * m * n
    return ExactArray(out_shape, c1.reshape(-1), c2.reshape(-1), r.reshape(-1), E.reshape(-1),
                      np.zeros(total), zero.reshape(-1), np.zeros(total, np.int8), hard)


# ----------------------------------------------------------------------------- reductions
def rowsum_exact(X, precision: int = 53, chunk: int = 1 << 16) -> ExactArray:
    """The exact sum of each row of float64 ``X`` (shape ``(m, k)``), as an ExactArray of shape
    ``(m,)``. Digits on per-row grids, summed by numpy in float64 (exact: integers below 2**52),
    ``chunk`` columns at a time so each pass stays in cache."""
    X = np.asarray(X, dtype=np.float64)
    m, k = X.shape
    special = None
    with np.errstate(invalid="ignore", over="ignore"):
        finite = bool(np.isfinite(X.sum()))  # inf or NaN anywhere (or an overflow) shows
    if not finite and not np.isfinite(X).all():
        with np.errstate(invalid="ignore"):
            s = np.where(np.isfinite(X), 0.0, X).sum(axis=1)  # inf - inf: NaN
        special = s
        X = np.where(np.isfinite(X), X, 0.0)
    if m == 0:
        z = np.zeros(0)
        return ExactArray((0,), z, z, np.zeros(0, np.int8), np.zeros(0, np.int64), z,
                          np.zeros(0, bool), np.zeros(0, np.int8), {})
    # the top exponent per row; digits are taken until nothing is left (no spread scan)
    _, top = np.frexp(np.abs(X).max(axis=1, keepdims=True) if k else np.zeros((m, 1)))
    top = top.astype(np.int64)
    ck = min(k, chunk) if k else 1
    beta = choose_beta(k, 1, products=False)  # the first level collects every chunk
    levels = [np.zeros(m)]
    for c0 in range(0, k, ck):
        rest = np.array(X[:, c0:c0 + ck], dtype=np.float64, copy=True)
        p = 0
        while True:
            sh = (beta * (p + 1) - top).astype(np.int32)
            scaled, back = _scale(rest, sh)
            d = np.rint(scaled)
            rest -= back(d)  # exact: see split_digits
            if p == len(levels):
                levels.append(np.zeros(m))
            # level p is on the grid 2**(top - beta (p + 1)); each chunk's sums are exact
            # integers below 2**52, kept there by the carry
            levels[p] += d.sum(axis=1)
            p += 1
            if not rest.any():
                break
        _carry(levels, beta)
    base = (top - beta).reshape(-1)
    # levels[p] * 2**(top - beta (p + 1)) = levels[p] * 2**(base - beta p)
    ex = _finish(levels, base, beta, (m,))
    # IEEE zero signs: -0 only when every term is -0
    zi = np.flatnonzero(ex.zero)
    if zi.size:
        Xz = X[zi]
        allneg = (np.signbit(Xz) & (Xz == 0)).all(axis=1) & (k > 0)
        ex.zsign[zi] = np.where(allneg, -1, 0)
    if special is not None:
        sp = (special != 0) | np.isnan(special)
        ex.special = np.where(sp, special, 0.0)
        ex.zero &= ~sp
        for i in np.flatnonzero(sp):
            ex.hard.pop(int(i), None)
    return ex


# ------------------------------------------------------------------------------- integers
def _int_limbs(x):
    """Signed 16-bit limbs (int64 arrays, lowest first) of an integer array of any width up to
    64 bits: ``x == sum(l_p << 16 p)``, ``|l_p| <= 2**15``."""
    v = x.astype(object)
    limbs = []
    for _ in range(5):  # |x| < 2**64: five signed limbs hold it
        lo = (v + (1 << 15)) % (1 << 16) - (1 << 15)
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
    """The exact ``A @ B`` (float64, batch dims broadcast) as an engine Operand whose
    components are the normalized levels (exact), for sums that combine it with other terms
    (gemm's alpha and beta * C), and the ExactArray of it (signs, zeros, specials)."""
    from ._engine import Operand

    ex = matmul_exact(A, B, precision_a, precision_b)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    batch = int(np.prod(A.shape[:-2], dtype=np.int64))
    A3 = np.where(np.isfinite(A), A, 0.0).reshape((batch,) + A.shape[-2:])
    B3 = np.where(np.isfinite(B), B, 0.0).reshape((batch,) + B.shape[-2:])
    k = A3.shape[2]
    n = ex.size
    comps = []
    if k and n:
        ta, la, ea_ = _top_low(A3, axis=2)
        tb, lb, eb_ = _top_low(B3, axis=1)
        bits_a, bits_b = _bits(ta, la, ea_, precision_a), _bits(tb, lb, eb_, precision_b)
        cnt = 1
        while True:
            beta = choose_beta(k, cnt)
            sa = max(math.ceil(bits_a / beta), 1)
            sb = max(math.ceil(bits_b / beta), 1)
            if min(sa, sb) <= cnt:
                break
            cnt = min(sa, sb)
        DA, _ = split_digits(A3, ta, beta, sa)
        DB, _ = split_digits(B3, tb, beta, sb)
        levels = []
        for t in range(sa + sb - 1):
            acc = None
            for p in range(max(0, t - sb + 1), min(sa, t + 1)):
                prod = np.matmul(DA[p], DB[t - p])
                acc = prod if acc is None else acc + prod
            levels.append(acc)
        _carry(levels, beta)
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
    return Operand(comps, shadow), ex
