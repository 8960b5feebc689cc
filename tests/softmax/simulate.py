"""Implementations of softmax, log_softmax and logsumexp simulated step by step, each operation
rounded to nearest in its format by numpy's IEEE arithmetic (float32, float64) or by
``ml_dtypes``' bfloat16 (exact IEEE results of bfloat16 operands computed in float32 and
rounded once: float32 holds every product and sum of two bfloat16 values' rounding boundary),
and the exponential and logarithm picked at random among the numbers of the format within
``k`` ulps of the exact value (gmpy2 at 160 bits). Independent of exactref.
"""

from __future__ import annotations

import gmpy2
import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
_CTX = gmpy2.context(precision=160)


def _info(dt):
    if dt == BF16:
        return 8, -126
    fi = np.finfo(dt)
    return fi.nmant + 1, fi.minexp


def _bf16_step(v, sign):
    bits = np.asarray(v, BF16).view(np.uint16).astype(np.int32)
    neg = bits >= 0x8000
    mag = bits & 0x7FFF
    step = np.where(neg, -sign, sign)
    new = np.where((mag == 0) & (step < 0), 0x8001, np.where(neg, 0x8000 | (mag + step),
                                                            mag + step))
    return new.astype(np.uint16).view(BF16)


def _grid(c, dt, steps):
    """The numbers of ``dt`` within ``steps`` steps of ``c`` (arrays of c's shape)."""
    out = [c]
    up, dn = c, c
    for _ in range(steps):
        if dt == BF16:
            up, dn = _bf16_step(up, +1), _bf16_step(dn, -1)
        else:
            up, dn = np.nextafter(up, dt.type(np.inf)), np.nextafter(dn, dt.type(-np.inf))
        out.extend([up, dn])
    return out


def within(fn, args, k, dt, rng):
    """``fn`` (``"exp"`` or ``"log"``) at ``args`` (values of ``dt``), each result a random
    number of ``dt`` within ``k`` ulps of the exact value (``k = 0.5``: correctly rounded)."""
    args = np.asarray(args, dt)
    flat = args.astype(np.float64).reshape(-1)
    p, emin = _info(dt)
    exact = [getattr(_CTX, fn)(v) for v in flat.tolist()]
    approx = np.array([float(e) for e in exact])
    with np.errstate(over="ignore"):
        c = approx.astype(dt)
    cands = _grid(c, dt, int(np.ceil(k)) + 1)
    out = np.empty(flat.shape, dt)
    for i, f in enumerate(exact):
        if gmpy2.is_infinite(f) or gmpy2.is_nan(f) or f == 0 or f == 1:
            out[i] = dt.type(float(f))  # exact values are exact: exp(0) = 1, log(1) = 0
            continue
        e = gmpy2.get_exp(f) - 1  # 2**e <= |f| < 2**(e+1)
        ulp = gmpy2.mpfr(2) ** (max(e, emin) - p + 1)
        ok = [cc[i] for cc in cands if np.isfinite(float(cc[i])) and
              abs(_CTX.sub(gmpy2.mpfr(float(cc[i])), f)) <= k * ulp and
              (float(cc[i]) >= 0) == (f > 0)]  # never the wrong sign
        out[i] = ok[rng.integers(len(ok))] if ok else c[i]  # none: an overflow, inf
    return out.reshape(args.shape)


def add(a, b, dt):
    if dt == BF16:
        return (a.astype(np.float32) + b.astype(np.float32)).astype(BF16)
    return a + b


def row_sum(e, dt, order, rng):
    """Sums of the rows of ``e`` in ``dt``: ``"sequential"``, ``"pairwise"``, ``"random"`` (a
    random permutation, then sequential) or ``"blocked"`` (random blocks summed, then added)."""
    M, K = e.shape
    if order == "random":
        e = e[:, rng.permutation(K)]
        order = "sequential"
    if order == "sequential":
        s = np.zeros(M, dt)
        for j in range(K):
            s = add(s, e[:, j], dt)
        return s
    if order == "pairwise":
        cols = [e[:, j] for j in range(K)]
        while len(cols) > 1:
            nxt = [add(cols[i], cols[i + 1], dt) for i in range(0, len(cols) - 1, 2)]
            if len(cols) % 2:
                nxt.append(cols[-1])
            cols = nxt
        return cols[0] if cols else np.zeros(M, dt)
    cuts = np.sort(rng.choice(np.arange(1, K), size=min(3, K - 1), replace=False))
    parts = [row_sum(b, dt, "sequential", rng) for b in np.split(e, cuts, axis=1)]
    s = parts[0]
    for q in parts[1:]:
        s = add(s, q, dt)
    return s


def standard(op, x, dt, k, order, rng, reciprocal=False, subtract_max=True, log_k=None):
    """The max-subtracted algorithm over the last axis of ``x`` (values of ``dt``): returns
    the values in ``dt``."""
    x = np.asarray(x, dt)
    m = x.max(axis=1, keepdims=True) if subtract_max else np.zeros((x.shape[0], 1), dt)
    with np.errstate(invalid="ignore", over="ignore"):
        t = (x.astype(np.float32) - m.astype(np.float32)).astype(dt) if dt == BF16 else x - m
    e = within("exp", t, k, dt, rng)
    s = row_sum(e, dt, order, rng)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if op == "softmax":
            if reciprocal:
                inv = _div(np.ones_like(s), s, dt)
                return _mul(e, inv[:, None], dt)
            return _div(e, s[:, None], dt)
        lg = within("log", s, log_k if log_k is not None else k, dt, rng)
        if op == "logsumexp":
            return add(lg, m[:, 0], dt)
        return add(t, -lg[:, None], dt)


def _div(a, b, dt):
    if dt == BF16:
        return (a.astype(np.float32) / b.astype(np.float32)).astype(BF16)
    return a / b


def _mul(a, b, dt):
    if dt == BF16:
        return (a.astype(np.float32) * b.astype(np.float32)).astype(BF16)
    return a * b


def online(x, dt, k, rng, nblocks):
    """Online softmax (FlashAttention's running max and sum): random blocks, the running sum
    rescaled by EXP(m_old - m_new) at each block, the result EXP(x_i - m) / l."""
    x = np.asarray(x, dt)
    M, K = x.shape
    cuts = np.sort(rng.choice(np.arange(1, K), size=nblocks - 1, replace=False))
    m = np.full(M, -np.inf, dt)
    ssum = np.zeros(M, dt)
    for blk in np.split(x, cuts, axis=1):
        mn = np.maximum(m, blk.max(axis=1))
        with np.errstate(invalid="ignore"):
            alpha = within("exp", m - mn, k, dt, rng)
            e = within("exp", blk - mn[:, None], k, dt, rng)
        ssum = ssum * alpha + row_sum(e, dt, "sequential", rng)
        m = mn
    e = within("exp", x - m[:, None], k, dt, rng)
    return e / ssum[:, None]


# ------------------------------------------------------------ kernels for the audit's tests
def np_softmax(x, axis=-1):
    """The max-subtracted softmax in float32 numpy: inside the model."""
    x = np.asarray(x, np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_softmax_exp2(x, axis=-1):
    """exp2 for exp: the wrong formula."""
    x = np.asarray(x, np.float32)
    e = np.exp2(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
