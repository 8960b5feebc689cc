"""``softmax``, ``log_softmax`` and ``logsumexp`` over a dimension: each output element the exact
value rounded once, with a tolerance that bounds the declared implementations.

The exact values come from :mod:`exactref._exact._softmax` (MPFR interval arithmetic with Ziv's
strategy; the exact cases found first by the Lindemann-Weierstrass theorem). The tolerance
model is the max-subtracted algorithm, derived in docs/softmax.md ("The tolerance model"):

1. ``m = max_j x_j``; ``t_j = x_j - m`` rounded in the compute format ``c``;
2. ``e_j = EXP(t_j)``, within ``k`` ulps of ``c`` of ``e**t_j`` (``exp_accuracy``);
3. ``s = sum_j e_j`` accumulated in ``c`` in any order (``order="pairwise"``: a tree of depth
   ``ceil(log2 K)``);
4. softmax: ``e_i / s`` correctly rounded in ``c``, or ``e_i * (1 / s)`` (two roundings);
   logsumexp: ``LOG(s) + m``; log_softmax: ``t_i - LOG(s)``, the logarithm within ``k'`` ulps
   (``log_accuracy``), each operation rounded in ``c``;
5. the result stored into the output format in the call's rounding mode.

Every step is bounded outward in float64 from MPFR's enclosures of ``e**(x_j - m)``; the
ends are rounded into ``c`` and then into the output format (both monotone), as the long
sums' intervals are (:func:`._bounds.interval`).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .._array import Array, assemble
from .._array import asarray as _asarray
from .._exact import (
    LOG_SOFTMAX,
    LOGSUMEXP,
    SOFTMAX,
    LongRow,
    Rounding,
    RowExps,
    deflate,
    down,
    evaluate_rows,
    gamma_up,
    inflate,
    pow1p_m1_up,
    resolve_modes,
    slack_up,
    up,
)
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._operands import compute_format, prepare
from ..arithmetic import resolve_accuracy
from ..ops import get_op, names_of
from ._bounds import _NE, DEFAULT_ORDER, F64, BoundResult, _chain, _round
from ._orders import ORDER_GRAMMAR, ORDER_NAMES, parse_order
from ._reductions import _spelling, reduction_axes, row_policy

__all__ = [*names_of(__name__), "ORDERS", "SPECIALS"]

#: the key of an absolute accuracy bound (``{"abs": a, "on": (lo, hi)}``: CUDA's ``__logf``)
_ABS_BOUND = "abs"
#: the summation orders the model bounds: the long sums' grammar (:data:`ORDER_GRAMMAR`),
#: ``"library"`` the default (:func:`term_depths`)
ORDERS = ORDER_NAMES
#: PyTorch CPU's float vector widths (``Vectorized<float>::size()``): NEON 4, AVX2 and the
#: 256-bit default 8, AVX-512 16
_TORCH_LANES = (4, 8, 16)


def term_depths(order, K: int, lastdim: bool = True) -> np.ndarray:
    """Per term of a row's sum of ``K`` exponentials (``(K,)`` ints), the most accumulator
    roundings it passes in ``order`` (docs/softmax.md, "The summation order"). ``"library"``
    is the most, per position, of the long sums' ``"library"`` depth (NumPy's pairwise sum,
    scipy's and jax's softmax; PyTorch's ``cascade_sum``, its logsumexp; PyTorch CUDA's and
    Triton's tree reductions: :func:`~exactref.linalg._orders.library_depth`, every term)
    and of PyTorch CPU's softmax kernels (aten/src/ATen/native/cpu/SoftMaxKernel.cpp): over
    the last dimension ``vec::reduce_all`` / ``map_reduce_all`` sum ``W`` lanes in sequence
    (element ``i`` in lane ``i % W``, position ``q = i // W`` of the lane's ``c`` elements:
    ``c - max(q, 1)`` additions, the masked tail in its lanes), then ``log2 W`` levels of
    ``vec_reduce_all``; the 16-bit kernels add the ``K % W`` tail to the scalar sum after
    (``K % W`` more); over another dimension ``_vec_softmax`` / ``_vec_log_softmax`` add the
    elements in sequence along it (term ``l``, 1-based: ``K - max(l, 2) + 1``).

    >>> d = term_depths("library", 1024)  # NEON's 4 lanes of 256: the first terms
    >>> [int(v) for v in d[[0, 1, 4, 1020, 1023]]], int(term_depths("pairwise", 1024).max())
    ([257, 257, 257, 36, 36], 10)
    """
    return _term_depths(str(parse_order(order)), int(K), bool(lastdim))


@functools.lru_cache(maxsize=8)
def _term_depths(o: str, K: int, lastdim: bool) -> np.ndarray:
    """:func:`term_depths`, cached (read-only): a long row's depths are held once."""
    d = _depths_of(parse_order(o), K, lastdim)
    d.setflags(write=False)
    return d


def _depths_of(o, K: int, lastdim: bool) -> np.ndarray:
    if K <= 1:
        return np.zeros(max(K, 0), dtype=np.int64)
    if o != "library":
        return np.asarray(o.depths(K), dtype=np.int64)
    i = np.arange(K)
    d = np.full(K, o.depth(K), dtype=np.int64)
    if not lastdim:
        return np.maximum(d, K - np.maximum(i + 1, 2) + 1)
    for W in _TORCH_LANES:
        tree = W.bit_length() - 1
        j, q = i % W, i // W
        c = (K - j + W - 1) // W  # the lane's elements (the masked tail in the first lanes)
        d = np.maximum(d, c - np.maximum(q, 1) + tree)
        body = (K // W) * W  # the 16-bit kernels: the lanes hold K // W each, then the tail
        if body:
            lane = np.where(i < body, K // W - np.maximum(q, 1) + tree + K % W, 0)
            tail = np.where(i >= body, K - np.maximum(i, body + 1) + 1, 0)
            d = np.maximum(d, np.maximum(lane, tail))
    return np.minimum(d, K - 1)


# ----------------------------------------------------------------------------- operands
def _input(op, x, dtype, int_ok):
    """``(array, output format)``: x converted into ``dtype`` first where given (as torch's
    ``dtype=``); integers and bool give float32 for logsumexp (torch's default float) and
    need ``dtype=`` for softmax and log_softmax (torch raises)."""
    X = prepare(x, "x")
    if X.kind != "array":
        raise ValueError(f"{op} needs an array; got a scalar (pass np.asarray([x]))")
    arr = X.array
    fmt = arr.dtype
    if dtype is not None:
        out = resolve_dtype(dtype)
    elif fmt.kind in ("int", "uint", "bool") and int_ok:
        out = FORMATS["float32"]
    else:
        out = fmt
    if fmt.kind == "complex":  # a dtype= would only drop the imaginary part
        raise ValueError(f"{op}: x is {fmt.name}; {op} is defined here for real inputs only "
                         f"(torch 2.13 has no complex CPU softmax or log_softmax, and its "
                         f"complex logsumexp is not modelled), and converting with dtype= would "
                         f"drop the imaginary part: pass x.real or abs(x) if that is what you "
                         f"mean")
    if fmt.kind not in ("float", "int", "uint", "bool") or (
            fmt.kind != "float" and dtype is None and not int_ok):
        raise ValueError(f"{op}: x is {fmt.name}; {op} needs a real floating input (torch "
                         f"raises for integers); pass dtype='float32' to convert it")
    if out.kind != "float":
        raise ValueError(f"{op}: the output format is {out.name}; {op} is defined for real "
                         f"floating formats; pass dtype='float32' (or another float format)")
    if out is not fmt:
        arr = _asarray(arr, out)  # converted once into the output format, as torch does
    return arr, out


def _dims(op, dim, axis, shape, required):
    ax, _ = _spelling(op, axis, dim, None, None)
    if ax is None and required:
        raise ValueError(f"{op} needs the dimension to normalize over: dim=... (torch) or "
                         f"axis=... (numpy/jax), e.g. dim=-1")
    return reduction_axes(op, ax, shape)


def _rows(data: np.ndarray, axes):
    """``(rows (M, K) float64, keep, perm)``: :func:`_row_source`'s rows as a float64 copy."""
    src, perm = _row_source(data, axes)
    return src.astype(np.float64), perm[:data.ndim - len(axes)], perm


#: the elements of one chunk of rows: the exact kernel holds a chunk's MPFR values at once
#: (about 1 KB an element), the model its float64 bounds; a row longer than this goes by
#: blocks along it (:func:`_long_row`). Private: the tests force small chunks to check that
#: chunking changes no bit.
_CHUNK = 1 << 15
#: the model's float64 row sums add blocks of this many columns, then the blocks' sums: the
#: same sums whether a row is whole in a chunk or split along its length (private)
_SUM_BLOCK = 1 << 15


def _row_source(data: np.ndarray, axes):
    """``(rows (M, K) in the input's own dtype, perm)``: the axes moved last and flattened (a
    view where they already are last: no float64 copy of the whole input)."""
    keep = [d for d in range(data.ndim) if d not in axes]
    perm = keep + list(axes)
    K = int(np.prod([data.shape[d] for d in axes], dtype=np.int64))
    M = int(np.prod([data.shape[d] for d in keep], dtype=np.int64))
    return np.ascontiguousarray(np.transpose(data, perm)).reshape(M, K), perm


def _chunks(M: int, K: int):
    """``(r0, r1)`` row ranges of at most :data:`_CHUNK` elements (one row where it is
    longer)."""
    step = max(_CHUNK // max(K, 1), 1)
    return [(r, min(r + step, M)) for r in range(0, M, step)]


def _row_sum(v: np.ndarray) -> np.ndarray:
    """Per row of ``v (M, K)``, its float64 sum: numpy's (pairwise) within blocks of
    :data:`_SUM_BLOCK` columns, then of the blocks' sums (any order is bounded by the model's
    slack; this one does not depend on the chunks)."""
    K = v.shape[1]
    if K <= _SUM_BLOCK:
        return v.sum(axis=1)
    parts = [v[:, s:s + _SUM_BLOCK].sum(axis=1) for s in range(0, K, _SUM_BLOCK)]
    return np.stack(parts, axis=1).sum(axis=1)


class _Ends:
    """The model's ends of every output element, filled chunk by chunk: float32 while every
    end is a float32 number (proven per chunk by the round trip: output formats of at most
    24 bits), float64 from the first that is not."""

    def __init__(self, n: int):
        self.lo = np.zeros(n, np.float32)
        self.hi = np.zeros(n, np.float32)
        self.nan = np.zeros(n, bool)

    def put(self, at, lo, hi, nan):
        for name, v in (("lo", lo), ("hi", hi)):
            cur = getattr(self, name)
            if cur.dtype == np.float32:
                with np.errstate(over="ignore", invalid="ignore"):
                    held = np.array_equal(v.astype(np.float32), v, equal_nan=True)
                if not held:
                    cur = cur.astype(np.float64)
                    setattr(self, name, cur)
            cur[at] = v
        self.nan[at] = nan


def _long_row(op, x, bits, args):
    """One row too long for a chunk, by blocks of columns (:class:`LongRow`): the model's row
    totals from a first pass over the exponentials' bounds, then per block ``(slice, rounded
    values, lo, hi, nan)`` of its elements (logsumexp: one block, the row's value)."""
    c, ea, la, order, out, mode, rule, in_prec, blocks, h, steps = args
    K = x.size
    block = K if K <= _SUM_BLOCK else _SUM_BLOCK * max(_CHUNK // _SUM_BLOCK, 1)
    row = LongRow(x, op, bits, block)
    m, reg = np.array([row.m]), np.array([row.regular])
    sums, n, kmax, top = [], 0, 0.0, 0.0
    g = _term_gammas(order, K, c, mode, blocks)
    for s, e, lo, hi in row.exps():
        Xb = np.asarray(x[s:e], dtype=np.float64)[None]
        pre = _prelude(Xb, RowExps(m, lo[None], hi[None], reg), c, ea, mode, in_prec, blocks,
                       h, steps)
        wt = None if g is None else _weighted(pre.shi_t, g[s:e])
        for a in range(0, e - s, _SUM_BLOCK):  # the sums as _row_sum forms them
            sums.append((pre.slo_t[:, a:a + _SUM_BLOCK].sum(axis=1),
                         pre.shi_t[:, a:a + _SUM_BLOCK].sum(axis=1),
                         None if wt is None else wt[:, a:a + _SUM_BLOCK].sum(axis=1)))
        n += int(pre.fin.sum())
        kmax = max(kmax, float(np.max(np.where(pre.fin, pre.k_exp, 0.0))))
        top = max(top, float(np.max(pre.slo_t)))
    if len(sums) == 1:
        slo, shi, wsum = sums[0]
    else:
        slo = np.stack([v[0] for v in sums], axis=1).sum(axis=1)
        shi = np.stack([v[1] for v in sums], axis=1).sum(axis=1)
        wsum = None if g is None else np.stack([v[2] for v in sums], axis=1).sum(axis=1)
    totals = (np.array([n]), np.array([kmax]), slo, shi, np.array([top]), wsum)
    comp = out.component
    for s, e, ex, lo, hi in row.values():
        vals = ex.round(comp, mode, rule)[0]
        Xb = np.asarray(x[s:e], dtype=np.float64)[None] if row.fn.per_element else \
            np.zeros((1, 0))
        rex = RowExps(m, lo[None], hi[None], reg)
        lo_, hi_, nan = _model_ends(op, Xb, rex, ex, c, ea, la, order, out, mode, rule,
                                    in_prec, blocks, h, steps, totals=totals, K=K)
        yield slice(s, e), vals, lo_, hi_, nan


def _unrows(values: np.ndarray, shape, perm):
    """The inverse of :func:`_rows` for per-element values."""
    moved = values.reshape([shape[d] for d in perm])
    return np.transpose(moved, np.argsort(perm))


def _accuracies(accuracy, exp_accuracy, log_accuracy, c: Format, uses_log):
    ea = resolve_accuracy(exp_accuracy if exp_accuracy is not None else accuracy, "exp", c)
    la = None
    if uses_log:
        la = resolve_accuracy(log_accuracy if log_accuracy is not None else accuracy, "log", c)
    return ea, la


#: the values of the rows holding an infinity or a NaN: "limits" (the exact value's limit) or
#: "formula" (the max-subtracted formula evaluated in IEEE arithmetic: ONNX's Softmax spec,
#: TensorFlow's kernels)
SPECIALS = ("limits", "formula")


def check_specials(op, specials):
    """Refuse a ``specials=`` that is not one of :data:`SPECIALS`, with the list."""
    if not isinstance(specials, str) or specials not in SPECIALS:
        raise ValueError(f"{op}: specials={specials!r}; expected one of "
                         f"{', '.join(map(repr, SPECIALS))} (\"limits\": the exact value's "
                         f"limit; \"formula\": the max-subtracted formula in IEEE arithmetic, "
                         f"NaN for a row holding NaN or +inf or only -inf)")


def formula_nan_rows(rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows (M, K)``: True where the max-subtracted formula in IEEE arithmetic
    gives NaN for every output (docs/softmax.md, "Special values"). With ``m = max_j x_j``:
    a NaN entry makes ``e_j`` (and ``m``, where max propagates it) NaN, so the sum is; a
    ``+inf`` entry makes ``m = +inf`` and its own ``x_j - m = inf - inf`` NaN; a row of only
    ``-inf`` has ``m = -inf`` and every ``x_j - m = -inf - (-inf)`` NaN. A NaN sum makes every
    ``e_i / s``, ``t_i - log(s)`` and ``log(s) + m`` NaN. Other rows (finite, or ``-inf``
    entries beside a finite maximum: ``e_j = exp(-inf) = 0``, ``t_j - log(s) = -inf``) give
    what the limits give."""
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], bool)
    with np.errstate(invalid="ignore"):
        return (np.isnan(rows).any(axis=1) | (rows == np.inf).any(axis=1)
                | (rows == -np.inf).all(axis=1))


def _check_order(order):
    """The parsed order (a str); a bad one refused with the grammar."""
    try:
        return parse_order(order)
    except ValueError:
        raise ValueError(f"order={order!r}: the softmax model bounds the sum of exponentials "
                         f"in one of the long sums' orders; expected {ORDER_GRAMMAR}") from None


# ------------------------------------------------------------------------------- the ops
def softmax(x, dim=None, dtype=None, *, axis=None, rounding=_NE, overflow=None, compute=None,
            accuracy=None, exp_accuracy=None, order=DEFAULT_ORDER, blocks=None, specials="limits",
            policy="torch"):
    """``e**x_i / sum_j e**x_j`` over ``dim`` (torch.softmax; ``axis`` as numpy/jax; a tuple
    normalizes over several dimensions at once), each element the exact value rounded once.

    ``dtype`` converts ``x`` first (as torch). The tolerance covers the max-subtracted
    algorithm computed in ``compute`` (default: float32 for the half formats), the
    exponential within ``exp_accuracy`` (or ``accuracy``: ulps or a preset, as
    ``er.exp(accuracy=)``; default correctly rounded) of the compute format, the sum in any
    order (``order="pairwise"``: a tree), the quotient rounded once or as ``e_i * (1/s)``.
    ``blocks=n``: an online softmax (FlashAttention's) of at most ``n`` blocks instead, the
    running sum rescaled by ``EXP(m_old - m_new)`` at each new maximum. ``specials``: the
    values of rows holding an infinity or a NaN: ``"limits"`` (the exact value's limit, the
    default) or ``"formula"`` (the max-subtracted formula in IEEE arithmetic, as ONNX's and
    TensorFlow's kernels give it: NaN for a row holding NaN or ``+inf``, or every entry
    ``-inf``; :data:`SPECIALS`).

    >>> import exactref as er
    >>> r = er.softmax(er.asarray([[1.0, 2.0, 3.0], [5.0, 5.0, -float("inf")]], "bfloat16"),
    ...                dim=-1)
    >>> r.rounded.tolist()
    [[0.08984375, 0.2451171875, 0.6640625], [0.5, 0.5, 0.0]]
    """
    row_policy("softmax", policy)
    return _run("softmax", x, dim, axis, dtype, False, rounding, overflow, compute, accuracy,
                exp_accuracy, None, order, blocks, specials=specials)


def log_softmax(x, dim=None, dtype=None, *, axis=None, rounding=_NE, overflow=None,
                compute=None, accuracy=None, exp_accuracy=None, log_accuracy=None,
                order=DEFAULT_ORDER, blocks=None, specials="limits", policy="torch"):
    """``x_i - log(sum_j e**x_j)`` over ``dim`` (torch.log_softmax), each element the exact
    value rounded once; options as :func:`softmax`, ``log_accuracy`` the logarithm's.

    >>> import exactref as er
    >>> er.log_softmax(er.asarray([[0.0, 0.0], [7.0, -float("inf")]], "float32"),
    ...                dim=1).rounded.tolist()
    [[-0.6931471824645996, -0.6931471824645996], [0.0, -inf]]
    """
    row_policy("log_softmax", policy)
    return _run("log_softmax", x, dim, axis, dtype, False, rounding, overflow, compute,
                accuracy, exp_accuracy, log_accuracy, order, blocks, specials=specials)


def logsumexp(x, dim=None, keepdim=None, *, axis=None, keepdims=None, dtype=None,
              rounding=_NE, overflow=None, compute=None, accuracy=None, exp_accuracy=None,
              log_accuracy=None, order=DEFAULT_ORDER, blocks=None, specials="limits",
              policy="torch"):
    """``log(sum_j e**x_j)`` over ``dim`` (torch.logsumexp; ``axis``/``keepdims`` as
    scipy/jax; None: every dimension), each element the exact value rounded once; options as
    :func:`softmax`. Integer inputs give float32, as torch.

    >>> import exactref as er
    >>> er.logsumexp(er.asarray([[1.0, 2.0, 3.0], [4.0, -float("inf"), -float("inf")]],
    ...                          "float32"), dim=1).rounded.tolist()
    [3.4076058864593506, 4.0]
    """
    row_policy("logsumexp", policy)
    _, kd = _spelling("logsumexp", axis, dim, keepdims, keepdim)
    return _run("logsumexp", x, dim, axis, dtype, kd, rounding, overflow, compute, accuracy,
                exp_accuracy, log_accuracy, order, blocks, specials=specials)


def _run(op, x, dim, axis, dtype, keepdims, rounding, overflow, compute, accuracy,
         exp_accuracy, log_accuracy, order, blocks, stored=None, steps=(), specials="limits"):
    fn, model = _declared(op)
    check_specials(op, specials)
    # a reduction (logsumexp) takes integers (float32) and every dim by default, as torch
    arr, out = _input(op, x, dtype, int_ok=not fn.per_element)
    axes = _dims(op, dim, axis, arr.shape, required=fn.per_element)
    mode, rule = resolve_modes(rounding, overflow, out)
    declared = order is not DEFAULT_ORDER
    order = row_order(order, arr.ndim == 0 or tuple(axes) == (arr.ndim - 1,))
    if blocks is not None and not (isinstance(blocks, numbers.Integral) and blocks >= 1):
        raise ValueError(f"blocks={blocks!r}: the online model's number of blocks is an "
                         f"integer >= 1 (None: the standard max-subtracted algorithm)")
    c = compute_format(out, compute)
    ea, la = _accuracies(accuracy, exp_accuracy, log_accuracy, c, model.uses_log)
    data = np.asarray(arr.numpy())
    if arr.ndim == 0:
        data = data.reshape(1)
        axes = (0,)
    src, perm = _row_source(data, axes)
    M, K = src.shape
    keep = perm[:data.ndim - len(axes)]
    bits = max(out.precision, c.precision)
    comp = out.component
    in_prec = arr.dtype.precision
    h = None if stored is None else resolve_dtype(stored)
    n_out = K if fn.per_element else 1
    flat = np.empty(M * n_out, dtype=out.np_dtype)  # the rounded values, row by row
    ends = _Ends(M * n_out)  # the model's ends, computed with each chunk's exponentials
    args = (c, ea, la, order, out, mode, rule, in_prec, blocks, h, steps)
    for r0, r1 in _chunks(M, K):
        if K > _CHUNK:  # one long row, by blocks along it
            for at, vals, lo, hi, nan in _long_row(op, src[r0], bits, args):
                at = slice(r0 * n_out + at.start, r0 * n_out + at.stop)
                flat[at] = assemble(out, [vals])
                ends.put(at, lo, hi, nan)
            continue
        X = src[r0:r1].astype(np.float64)
        exact, rexps = evaluate_rows(X, op, bits, want_exps=True)
        at = slice(r0 * n_out, r1 * n_out)
        flat[at] = assemble(out, [exact.round(comp, mode, rule)[0]])
        ends.put(at, *_model_ends(op, X, rexps, exact, *args))
        del X, exact, rexps
    if specials == "formula":  # the formula's NaN rows replace the limits (docs/softmax.md)
        bad = np.repeat(formula_nan_rows(src), n_out)
        flat[bad] = np.nan
        ends.put(bad, np.full(int(bad.sum()), np.nan), np.full(int(bad.sum()), np.nan), True)
    if not fn.per_element:
        kd_shape = tuple(1 if d in axes else data.shape[d] for d in range(data.ndim))
        shape = kd_shape if keepdims else tuple(data.shape[d] for d in keep)
        if arr.ndim == 0:
            shape = ()

        def place(v):
            return np.asarray(v).reshape(shape)
    else:
        shape = tuple(arr.shape)

        def place(v):
            return _unrows(np.asarray(v).reshape(M, K), data.shape, perm).reshape(shape)

    rounded = Array(np.ascontiguousarray(place(flat)).reshape(shape), out)
    del flat

    def bounds():
        lo, hi = ends.lo.astype(np.float64), ends.hi.astype(np.float64)
        return [(place(lo), place(hi), place(ends.nan))]

    described = (f"max subtracted in {c.name}, exp within {ea.label} in {c.name}, summed in "
                 f"{order} order")
    if blocks is not None:
        described = f"online in at most {blocks} blocks, " + described
    if stored is not None and steps:
        described += f", {', '.join(sorted(steps))} stored in {resolve_dtype(stored).name}"
    if la is not None:
        described += f", log within {la.label}"
    described += ", " + model.text
    if specials == "formula":
        described += ("; rows holding NaN or +inf, or only -inf: NaN, by the formula in IEEE "
                      "arithmetic")
    models = [f"exact value rounded once into {out.name}",
              f"{described}, then rounded into {out.name}"]
    details = {"rounding": mode, "overflow": rule, "compute": c, "order": order, "k": K,
               "blocks": blocks, "specials": specials,
               "exp_accuracy": ea.name, "order_declared": declared}
    if la is not None:
        details["log_accuracy"] = la.name
    result = _RowsResult(rounded, bounds, op=op, models=models, details=details)
    result.inputs = {"x": arr}

    def again(o):  # the same call under another order (the weak check's "tighter" numbers)
        return _run(op, x, dim, axis, dtype, keepdims, rounding, overflow, compute, accuracy,
                    exp_accuracy, log_accuracy, o, blocks, stored, steps, specials)
    result._with_order = again
    return result


#: a row op's default check is called loose (:class:`exactref.WeakCheckWarning`) where its
#: median tolerance exceeds this many ulps of the output format (issue 21's bar)
LOOSE_ULPS = 64


class _RowsResult(BoundResult):
    _tighter = None

    def _tighter_median(self) -> float:
        """The median tolerance with ``order="pairwise"`` (computed once)."""
        if self._tighter is None:
            u = np.asarray(self._with_order("pairwise").tolerance_ulps(), dtype=np.float64)
            u = u[np.isfinite(u)]
            self._tighter = float(np.median(u)) if u.size else 0.0
        return self._tighter

    def tighter_text(self) -> str:
        return f"order='pairwise' gives median {self._tighter_median():.4g} ulp; "


    """softmax's, log_softmax's and logsumexp's Result: with the default order (``"library"``,
    which holds PyTorch CPU's lane-sequential sums: up to ``K / 4 + 1`` roundings a term), a
    median tolerance above :data:`LOOSE_ULPS` ulps says so, and what ``order="pairwise"``
    gives (computed)."""

    def weak_check(self):
        if self.details.get("order_declared", True) or self.rounded.size == 0:
            return None
        ulps = np.asarray(self.tolerance_ulps(), dtype=np.float64)
        ulps = ulps[np.isfinite(ulps)]
        med = float(np.median(ulps)) if ulps.size else 0.0
        if med <= LOOSE_ULPS or self._tighter_median() > med / 2:
            return None  # not loose, or no order tightens it (short rows, the online model)
        k = self.details.get("k")
        return (f"{self.op}: a loose check: the median tolerance is {med:.4g} "
                f"ulp of {self.rounded.dtype.name} with the default order (order='library': "
                f"up to {int(term_depths('library', k).max())} roundings a term of the sum over "
                f"k={k}, PyTorch CPU's lane-by-lane sums on 4-lane NEON). Tighten it: declare "
                f"the kernel's order ({self.tighter_text()}order='blocked(b)', 'tree(f)', "
                f"...) or use the library's equivalents (exactref.equivalents; docs/softmax.md, "
                f"'The summation order')")


# ------------------------------------------------------------------------ the model's ends
def _exp_factor(a, sign):
    """Rigorous float64 bounds of ``e**(sign * a)`` for ``a >= 0``, rounded outward: ``1 - a``
    below ``e**-a`` and ``1 + a + a**2`` above ``e**a`` for ``a <= 1`` (a few roundings: tight
    for float64 results); ``(1 - a/n)**n`` and ``(1 - a/n)**-n`` (``n = 1024``) beyond."""
    n_log = 10
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if sign < 0:
            small = np.maximum(down(1.0 - a), 0.0)
            v = np.maximum(down(1.0 - up(a / 1024.0)), 0.0)
            for _ in range(n_log):
                v = down(v * v)
            return np.where(a <= 1, small, v)
        small = up(up(1.0 + a) + up(a * a))
        base = down(1.0 - up(a / 1024.0))
        v = np.where(base > 0, up(1.0 / np.where(base > 0, base, 1.0)), np.inf)
        for _ in range(n_log):
            v = up(v * v)
        return np.where(a <= 1, small, v)


def _ulps_of(acc, x):
    """Per element, the accuracy's bound in ulps at arguments ``x`` (the correct rounding:
    half an ulp)."""
    if acc.correct:
        return np.full(np.shape(x), 0.5)
    return acc.ulps(np.asarray(x, dtype=np.float64), _no_ulp)


def _no_ulp():  # pragma: no cover - exp's presets have no absolute bounds
    raise ValueError("an absolute error bound is not supported for the exponential here")


def _prelude(X, rexps, c: Format, ea, mode, in_prec, blocks, stored, steps):
    """The model's per-element steps up to the terms of the sum (a namespace): what
    :func:`_model_ends` and the row totals of a long row (:func:`_long_row`) read."""
    steps = frozenset(steps)
    if stored is None:
        steps = frozenset()
    h = stored.component if stored is not None else None

    def keep(v, step):  # an intermediate stored into h (rounding to nearest is monotone)
        if step not in steps:
            return v
        fv = np.isfinite(v)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(fv, _round(np.where(fv, v, 0.0), h, _NE), v)

    p = c.precision
    u = 2.0 ** -p if mode.is_nearest else 2.0 ** (1 - p)
    eta = c.smallest_subnormal
    M, K = X.shape
    regular = rexps.regular
    m = np.where(regular, rexps.m, 0.0)[:, None]
    fin = np.isfinite(X) & regular[:, None]
    Xf = np.where(fin, X, 0.0)
    mf = np.broadcast_to(m, X.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        d = Xf - mf
        dlo, dhi = down(d), np.minimum(up(d), 0.0)
        dmag = np.abs(dlo)
        # the argument t_j = R_c(x_j - m) (inputs wider than c read rounded first)
        wide = up(u * (1 + u) * up(np.abs(Xf) + np.abs(mf))) if in_prec > p else 0.0
        a = up(up(up(u * dmag) + 2 * eta) + wide)
        # online: the term's argument x_j - m_b, then the rescalings' m_b - m_b', each rounded:
        # together at most 2 u |d_j| (every m_b lies between x_j and m), plus their underflow
        r = 0 if blocks is None else blocks - 1
        a_s = up(up(up(2 * u * dmag) + (2 + 2 * r) * eta) + wide) if r else a
        if "t" in steps:  # x - m stored into h: one more rounding of the argument
            uh = 2.0 ** -h.precision
            a = up(up(a + up(uh * up(dmag * (1 + 4 * u)))) + h.smallest_subnormal)
            a_s = a if not r else a_s
    flo = np.where(fin, rexps.lo, 0.0)
    fhi = np.where(fin, rexps.hi, 0.0)
    k_exp = _ulps_of(ea, dlo)
    eps = up(up(2 * k_exp * u) / (1 - u / 2))
    with np.errstate(over="ignore", invalid="ignore"):
        tlo = down(flo * _exp_factor(a, -1))
        thi = up(fhi * _exp_factor(a, +1))
        # far below: e**t_j <= e**(d_j (1 - u) + a') < 5e-324 when d_j + a_j < -1500
        thi = np.where(up(dhi + a) < -1500, 5e-324, thi)
        elo = np.maximum(down(deflate(tlo, eps) - up(k_exp * eta)), 0.0)
        ehi = up(inflate(thi, eps) + up(k_exp * eta))
    # EXP(0) = 1 exactly (C99 F.10.3.1): the entries equal to the maximum, t = x - m = 0
    one = fin & (d == 0)
    elo = keep(np.where(one, 1.0, np.where(fin, elo, 0.0)), "e")
    ehi = keep(np.where(one, 1.0, np.where(fin, ehi, 0.0)), "e")
    slo_t, shi_t = elo, ehi  # the terms of the computed sum
    if r:  # each of r rescalings multiplies a term by EXP(m_b - m_b') (1 + eps), rounded
        with np.errstate(over="ignore", invalid="ignore"):
            # (1 + eps)**(1 + r) (1 + u)**r - 1, its two factors' small parts apart (in
            # float64, 1 + 2**-53 is 1); slack_up: 3 operations of float64's
            e1, e2 = pow1p_m1_up(eps, 1 + r), pow1p_m1_up(u, r)
            eps_s = slack_up(e1 + e2 + e1 * e2, 3)
            slo_t = np.maximum(deflate(down(flo * _exp_factor(a_s, -1)), eps_s), 0.0)
            shi_t = inflate(up(fhi * _exp_factor(a_s, +1)), eps_s)
            shi_t = np.where(up(dhi + a_s) < -1500, 5e-324, shi_t)
        slo_t = np.where(one, 1.0, np.where(fin, slo_t, 0.0))
        shi_t = np.where(one, 1.0, np.where(fin, shi_t, 0.0))
    return SimpleNamespace(steps=steps, keep=keep, u=u, eta=eta, p=p, regular=regular, m=m,
                           fin=fin, dlo=dlo, dhi=dhi, a=a, elo=elo, ehi=ehi, one=one,
                           slo_t=slo_t, shi_t=shi_t, k_exp=k_exp, r=r, flo=flo)


def _totals(pre, g=None):
    """Per row: ``(n, kmax, sum lo, sum hi, top, weighted)``: the finite entries' count, the
    largest exp accuracy in ulps, the float64 sums of the terms' ends (:func:`_row_sum`), the
    largest lower end of a term, and ``sum_l g_l thi_l`` for the per-term gammas ``g``
    (:func:`_term_gammas`; None without them)."""
    K = pre.fin.shape[1]
    M = pre.fin.shape[0]
    n = pre.fin.sum(axis=1)
    kmax = np.max(np.where(pre.fin, pre.k_exp, 0.0), axis=1) if K else np.zeros(M)
    top = np.max(pre.slo_t, axis=1) if K else np.zeros(M)
    wsum = None if g is None else _row_sum(_weighted(pre.shi_t, g))
    return n, kmax, _row_sum(pre.slo_t), _row_sum(pre.shi_t), top, wsum


def _weighted(shi_t, g):
    """``g_l thi_l`` per term, rounded up (the float64 sum's own rounding: the slack of
    :func:`_sum_gamma`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return up(shi_t * g[None, :])


def _model_ends(op, X, rexps, exact, c: Format, ea, la, order, out, mode, rule, in_prec,
                blocks=None, stored=None, steps=(), totals=None, K=None):
    """``(lo, hi, nan)`` flat float64 arrays: the outputs of the modelled implementations.
    ``stored``: a format the intermediates named in ``steps`` are rounded into (to nearest):
    ``"t"`` (``x - m``), ``"e"`` (the exponentials), ``"s"`` (the sum), ``"l"`` (its log):
    PyTorch's half-format kernels; ``"en"``: softmax's numerator ``e_i`` stored or not (the
    sum reads it unstored: PyTorch's scalar tail across a dimension that is not the last).
    ``totals``: the rows' totals (:func:`_totals`) where ``X`` is a block of columns of
    longer rows (``K`` columns in all), else they are ``X``'s own."""
    pre = _prelude(X, rexps, c, ea, mode, in_prec, blocks, stored, steps)
    steps, keep, u, eta, p = pre.steps, pre.keep, pre.u, pre.eta, pre.p
    regular, m, fin, dlo, dhi, a = pre.regular, pre.m, pre.fin, pre.dlo, pre.dhi, pre.a
    elo, ehi, one, r = pre.elo, pre.ehi, pre.one, pre.r
    K = X.shape[1] if K is None else K
    g = _term_gammas(order, K, c, mode, pre.r)
    n, kmax, ssum_lo, ssum_hi, top, wsum = _totals(pre, g) if totals is None else totals
    slack = (K + 2) * 2.0 ** -52  # the float64 sums' own rounding
    # the rescalings' underflow: an absolute amount per rescaling of the running sum
    absr = up(r * (n * (kmax + 1) + 1) * 2 * eta)
    with np.errstate(over="ignore", invalid="ignore"):
        Slo = np.maximum(down(down(ssum_lo * (1 - slack)) - absr), 0.0)
        Shi = up(up(ssum_hi * (1 + slack)) + absr)
    gam = _sum_gamma(order, n, K, u, wsum, Slo, slack, r)
    with np.errstate(over="ignore", invalid="ignore"):
        # the computed sum s lies in [sig_lo, sig_hi]; a sum of terms >= 0 is never below its
        # largest term, whatever the order and the rounding (gamma may be unbounded)
        sig_lo = keep(np.maximum(deflate(Slo, gam), top), "s")
        sig_hi = keep(inflate(Shi, gam), "s")
    exact_v = exact.round(F64, Rounding.NEAREST_EVEN, "ieee")[0]
    T = _Terms(X=X, fin=fin, one=one, regular=regular, m=m, dlo=dlo, dhi=dhi, a=a, elo=elo,
               ehi=ehi, Slo=Slo, Shi=Shi, gam=gam, sig_lo=sig_lo, sig_hi=sig_hi, r=r, u=u,
               eta=eta, p=p, c=c, la=la, in_prec=in_prec, steps=steps, keep=keep)
    vlo, vhi, special = _declared(op)[1].finish(T)
    nan = np.zeros(vlo.shape, bool)
    comp = out.component
    lo = _chain(vlo, c, comp, mode, mode, nan, -np.inf, rule)
    hi = _chain(vhi, c, comp, mode, mode, nan, np.inf, rule)
    lo = np.where(special, exact_v, lo)
    hi = np.where(special, exact_v, hi)
    nan = np.where(special, np.isnan(exact_v), nan)
    return lo, hi, nan


class _RowOrder(str):
    """A parsed order that knows whether the row is the array's last dimension (PyTorch CPU's
    softmax kernels sum a last dimension by lanes and another in sequence: :func:`term_depths`)."""

    lastdim = True


def row_order(order, lastdim: bool) -> _RowOrder:
    o = _RowOrder(_check_order(order))
    o.lastdim = bool(lastdim)
    return o


def _term_gammas(order, K, c: Format, mode, r):
    """Per term, ``gamma_{d_l}`` of its depth in ``order`` (:func:`term_depths`), or None where
    the model takes one bound for every term (any order, pairwise, the online model)."""
    o = parse_order(order)
    if o in ("any", "pairwise") or r or K <= 1:
        return None
    return _gammas(str(o), int(K), bool(getattr(order, "lastdim", True)), c.precision,
                   bool(mode.is_nearest))


@functools.lru_cache(maxsize=8)
def _gammas(o: str, K: int, lastdim: bool, p: int, nearest: bool) -> np.ndarray:
    u = 2.0 ** -p if nearest else 2.0 ** (1 - p)
    g = up(gamma_up(term_depths(o, K, lastdim), u))
    g.setflags(write=False)
    return g


def _sum_gamma(order, n, K, u, wsum, Slo, slack, r=0):
    """Per row, ``g`` with ``|s - S| <= g S`` for the computed sum ``s`` of the terms (their
    exact sum ``S >= Slo``): ``gamma_{n-1}`` in any order (``n`` the row's nonzero terms: an
    addition of an exact zero is exact), ``gamma_{ceil(log2 K)}`` pairwise; another order's
    per-term depths ``d_l`` (:func:`term_depths`) give ``|s - S| <= sum_l gamma_{d_l} t_l <=
    (sum_l gamma_{d_l} thi_l / Slo) S`` (Higham, *Accuracy and Stability*, (4.3); ``wsum`` the
    float64 sum, ``slack`` its rounding), never above the any-order bound."""
    M = len(Slo)
    anyg = up(gamma_up(np.maximum(n - 1, 0), u))
    if parse_order(order) == "pairwise" and wsum is None and not r:
        depth = np.ceil(np.log2(np.maximum(K, 1)))
        return np.broadcast_to(up(gamma_up(depth, u)), (M,))
    if wsum is None:
        return np.broadcast_to(anyg, (M,))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        w = up(wsum * (1 + slack))
        eff = np.where(Slo > 0, up(w / np.where(Slo > 0, Slo, 1.0)), np.inf)
    return np.minimum(anyg, eff)


@dataclass
class _Terms:
    """What the model's last steps read (float64 bounds per row or element; see
    :func:`_model_ends`)."""

    X: np.ndarray
    fin: np.ndarray
    one: np.ndarray
    regular: np.ndarray
    m: np.ndarray
    dlo: np.ndarray
    dhi: np.ndarray
    a: np.ndarray
    elo: np.ndarray
    ehi: np.ndarray
    Slo: np.ndarray
    Shi: np.ndarray
    gam: np.ndarray
    sig_lo: np.ndarray
    sig_hi: np.ndarray
    r: int
    u: float
    eta: float
    p: int
    c: Format
    la: object
    in_prec: int
    steps: frozenset
    keep: object


def _softmax_finish(T: _Terms):
    """``e_i / s`` rounded once, or ``e_i * (1 / s)``."""
    X, u, gam, keep, steps = T.X, T.u, T.gam, T.keep, T.steps
    elo, ehi, Slo, Shi = T.elo, T.ehi, T.Slo, T.Shi
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        g = gam[:, None]
        nlo, nhi = elo, ehi  # the numerator
        if "en" in steps:
            nlo = np.minimum(elo, keep(elo, "en"))
            nhi = np.maximum(ehi, keep(ehi, "en"))
        separate = bool(T.r) or "en" in steps  # the numerator is not the sum's term
        if separate:
            den_hi = np.broadcast_to(inflate(Shi, gam)[:, None], X.shape)
            den_lo = np.broadcast_to(deflate(Slo, gam)[:, None], X.shape)
        else:  # e_i / (e_i + rest) grows with e_i: its ends take the rest's other end
            Rhi = up(Shi[:, None] - ehi)  # the other terms' sum, at most
            Rlo = np.maximum(down(Slo[:, None] - elo), 0.0)
            den_hi = inflate(up(elo + Rhi), g)
            den_lo = deflate(down(ehi + Rlo), g)
        qlo = down(deflate(nlo, u) / den_hi)
        qhi = up(inflate(nhi, u) / den_lo)
        if not separate:  # e_i / s <= 1: the sum holds e_i
            qhi = np.where(den_lo > 0, np.minimum(qhi, up(1 + u)), up(1 + u))
        else:
            qhi = np.where(den_lo > 0, qhi, np.inf)
    qlo = np.where(T.fin, qlo, 0.0)
    qhi = np.where(T.fin, qhi, 0.0)
    special = ~np.broadcast_to(T.regular[:, None], X.shape).reshape(-1)
    return qlo.reshape(-1), qhi.reshape(-1), special


def _logs(T: _Terms):
    llo, lhi = _log_ends(T.sig_lo, T.sig_hi, T.la, T.c, T.u, T.eta)
    return T.keep(llo, "l"), T.keep(lhi, "l")


def _logsumexp_finish(T: _Terms):
    """``LOG(s) + m``."""
    llo, lhi = _logs(T)
    m, u = T.m[:, 0], T.u
    with np.errstate(over="ignore", invalid="ignore"):
        mlo, mhi = m, m
        if T.in_prec > T.p:  # m read rounded into c
            w = up(u * np.abs(m)) + T.eta
            mlo, mhi = down(mlo - w), up(mhi + w)
        vlo = down(llo + mlo)
        vhi = up(lhi + mhi)
    return vlo, vhi, ~T.regular


def _log_softmax_finish(T: _Terms):
    """``(x_i - m) - LOG(s)``."""
    llo, lhi = _logs(T)
    with np.errstate(over="ignore", invalid="ignore"):
        t_lo = T.keep(down(T.dlo - T.a), "t")
        t_hi = T.keep(np.minimum(up(T.dhi + T.a), 0.0), "t")
        t_lo = np.where(T.one, 0.0, t_lo)  # x - m = 0 exactly at the maximum
        t_hi = np.where(T.one, 0.0, t_hi)
        vlo = down(t_lo - lhi[:, None])
        vhi = up(t_hi - llo[:, None])
    vlo = np.where(T.fin, vlo, -np.inf).reshape(-1)
    vhi = np.where(T.fin, vhi, -np.inf).reshape(-1)
    return vlo, vhi, ~np.broadcast_to(T.regular[:, None], T.X.shape).reshape(-1)


@dataclass(frozen=True)
class _Model:
    """The op's last steps in the model: ``finish(terms) -> (lo, hi, special)`` before the
    rounding into the compute and output formats, whether it takes a logarithm, and what it
    does (for the models' names)."""

    finish: object
    uses_log: bool
    text: str


#: each op's model, by its exact kernel entry (the records hold them: ``exact``, ``models``)
_MODELS = {
    SOFTMAX: _Model(_softmax_finish, False, "divided (or times the reciprocal)"),
    LOG_SOFTMAX: _Model(_log_softmax_finish, True, "x - m - LOG(s)"),
    LOGSUMEXP: _Model(_logsumexp_finish, True, "LOG(s) + m"),
}


def _declared(op):
    """``(exact kernel entry, model)`` of the op ``op``, from its registry record."""
    spec = get_op(op)
    return spec.exact, spec.models[0]


def _log_ends(s_lo, s_hi, la, c: Format, u, eta):
    """float64 bounds of ``LOG(s)`` for ``s`` in ``[s_lo, s_hi]`` (per row): the exact
    logarithm's ends (MPFR, rounded outward) widened by the log's accuracy in ulps of ``c``."""
    import gmpy2

    D = gmpy2.context(precision=53, round=gmpy2.RoundDown)
    U = gmpy2.context(precision=53, round=gmpy2.RoundUp)
    lo = np.array([float(D.log(v)) if v > 0 else -math.inf for v in s_lo.tolist()])
    hi = np.array([float(U.log(v)) for v in s_hi.tolist()])
    big = np.maximum(np.abs(lo), np.abs(hi))
    b = la.bound
    if la.correct:
        k = np.full(lo.shape, 0.5)
    elif isinstance(b, numbers.Real):
        k = np.full(lo.shape, float(b) + la.offset)
    elif _ABS_BOUND in b:  # an absolute bound on [lo, hi] (CUDA's __logf), else ulps
        a0, a1 = b["on"]
        inside = (s_lo >= a0) & (s_hi <= a1)
        other = np.inf if b.get("else_ulps") is None else float(b["else_ulps"]) + la.offset
        with np.errstate(divide="ignore", invalid="ignore"):
            ulp = np.maximum(up(2 * u * big), eta)
            k = np.where(inside, up(b[_ABS_BOUND] / ulp) + 1.0, other)
    else:
        k = la.ulps(big, _no_ulp)
    with np.errstate(over="ignore", invalid="ignore"):
        w = up(k * np.maximum(up(up(2 * u * big) / (1 - u / 2)), eta))
        # never the wrong sign: LOG(s) >= 0 for s >= 1, <= 0 for s <= 1 (LOG(1) = +0)
        return np.where(s_lo >= 1, np.maximum(down(lo - w), 0.0), down(lo - w)), \
            np.where(s_hi <= 1, np.minimum(up(hi + w), 0.0), up(hi + w))


# ----------------------------------------------------------------------------- registry
def _register() -> None:
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register
    from ._softmax_backward import BACKWARD  # er.softmax.backward, er.log_softmax.backward

    # torch 2.13's CPU kernels (equivalents.torch reads these): the exponential's and the
    # logarithm's accuracy (by layout: a "lastdim" kernel, where nothing follows the reduced
    # dimension, or another), the steps float16 and bfloat16 store in their format, and the
    # backward's accuracies (keyword dicts: "exp" and "log" name the steps, not the ops)
    _TORCH_ROWS_BACKWARD = dict(exp={"lastdim": "sleef_u10", "other": "glibc"}, log="glibc")
    for fn, exact, summary, params, cp in (
            (logsumexp, LOGSUMEXP, "log(sum(e**x)) over dims, rounded once",
             (Param("dim", None), Param("keepdim", False)),
             Counterparts(Counterpart(
                 "torch.logsumexp", contract={"order": "any"},
                 data=dict(exp="glibc", log="glibc", stored_steps=("t", "e", "s", "l"))),
                          "scipy.special.logsumexp", "jax.scipy.special.logsumexp")),
            (softmax, SOFTMAX, "e**x_i / sum(e**x) over dim, rounded once",
             (Param("dim", None), Param("dtype", None)),
             Counterparts(Counterpart(
                 "torch.softmax", contract={"order": "any"},
                 data=dict(exp={"lastdim": "sleef_u10", "other": "glibc"}, log=None,
                           stored_steps={"lastdim": (), "other": ("en",)},
                           backward=_TORCH_ROWS_BACKWARD)),
                          "scipy.special.softmax", "jax.nn.softmax")),
            (log_softmax, LOG_SOFTMAX, "x_i - log(sum(e**x)) over dim, rounded once",
             (Param("dim", None), Param("dtype", None)),
             Counterparts(Counterpart(
                 "torch.log_softmax", contract={"order": "any"},
                 data=dict(exp="sleef_u10", log="glibc",
                           stored_steps={"lastdim": ("s", "l"), "other": ()},
                           backward=_TORCH_ROWS_BACKWARD)),
                          "scipy.special.log_softmax", "jax.nn.log_softmax"))):
        fn.backward = BACKWARD.get(exact)  # er.softmax.backward, er.log_softmax.backward
        fn.spec = register(OpSpec(
            name=fn.__name__, operands=("x",), kernel="row exponential", promotion="exp",
            function=fn, summary=summary, params=params, exact=exact,
            # the max-subtracted algorithm, exp within k ulps, any summation order
            models=(_MODELS[exact],),
            counterparts=cp, kinds=("bool", "int", "uint", "float") if fn is logsumexp
            else ("float",), family="normalizations", backward=fn.backward,
            # the audit's groups: along the last axis of an (8, 48) operand of a real float
            # format (exactref.audit's "matrices" builder)
            audit=AuditPlan(data={"operands": ((8, 48),), "params": {"axis": -1},
                                  "kinds": ("float",)})))


_register()
