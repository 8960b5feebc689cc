"""The real functions' shared evaluation (:mod:`.functions` declares the ops on it): the exact
value from an op's record (``OpSpec.exact``), the accuracy band's models (``accuracy=``,
:mod:`._accuracy`), the table lane of the formats of at most 16 bits, the float32 lane
(:func:`wide_lane`: the reference and the band's ends in one compiled pass per element after
the exact value, bit for bit the general path's), and pow's integer powers.

>>> import exactref as er
>>> er.exp(er.asarray([1.0], "float32"), accuracy=2).models
('exact', 'within 2 ulps in float32: lowest', 'within 2 ulps in float32: highest')
"""

from __future__ import annotations

import numbers
from dataclasses import replace

import numpy as np

from .._exact import (
    BAND_EXTRA_BITS,
    ExactArray,
    band_ends,
    evaluate_complex,
    function_table,
    lane_candidates,
    normwise_ends,
    table_patterns,
    ulp_of,
)
from .._exact import function_values as evaluate
from ..ops import get_op
from ._accuracy import ACCURACY_PRESETS, Within
from ._elementwise import FUSED, Model, OpTypeError

__all__ = ["MODELS", "call_bits", "complex_value", "documented_models", "int_powers", "lane",
           "negate", "value"]


# ------------------------------------------------------------------------------ the kernel
def call_bits(ctx) -> int:
    """The widest precision the call rounds the exact value into (output, compute format); an
    accuracy band in the compute format needs :data:`BAND_EXTRA_BITS` more there."""
    bits = max(ctx.out.component.precision, ctx.c.component.precision)
    if not ctx.accuracy.correct:
        bits = max(bits, ctx.c.component.precision + BAND_EXTRA_BITS - 2)
    return bits


# ------------------------------------------------------------------- the accuracy models
def _ends(ctx, exact: list, x: np.ndarray):
    """Per part, ``(lowest, highest)`` numbers of the compute format within the call's accuracy
    of the exact values (float64, flat), computed once per call.

    A complex result's error is normwise, as complex libraries state it: each part within ``k``
    ulps of the modulus ``|f|``, either sign (:func:`~exactref._exact.normwise_ends`)."""
    memo = getattr(exact[0], "_band_memo", None)
    key = (ctx.c.name, ctx.accuracy.name, ctx.rule)
    if memo is not None and memo[0] == key:
        return memo[1]
    c = ctx.c.component
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if len(exact) == 1:
        ulps = ctx.accuracy.ulps(x, lambda: ulp_of(exact[0], c))
        ends = [band_ends(exact[0], c, ulps, ctx.rule)]
    else:
        ends = normwise_ends(exact, c, ctx.accuracy.ulps(x, None), call_bits(ctx) + 2, ctx.rule)
    exact[0]._band_memo = (key, ends)
    return ends


def _band(side: int):
    """The model of the lowest (``side`` 0) or highest (1) result of an implementation within
    the call's accuracy in the compute format (per part: the corner of the part's ends)."""

    def derive(ctx, exact, *parts):
        x = ctx.flat(parts[0][0])
        return [ctx.values(e[side].reshape(ctx.shape)) for e in _ends(ctx, exact, x)]

    return derive


def _inaccurate(ctx) -> bool:
    return not ctx.accuracy.correct


#: A function's modelled implementations: correctly rounded in the compute format, and (with
#: ``accuracy=``) the ends of the numbers within the declared error there.
MODELS = (FUSED,
          Model("within {a} in {c}: lowest", applies=_inaccurate, derive=_band(0)),
          Model("within {a} in {c}: highest", applies=_inaccurate, derive=_band(1)))


def documented_models(models: tuple, documented) -> tuple:
    """A function record's models (``OpSpec.models``) with its accuracy band's two
    (:data:`MODELS`' ``within {a} in {c}: ...``) carrying ``documented``, the libraries'
    documented errors of the function (:class:`~._accuracy.Within`: the same models, which the
    driver runs; the presets read their bounds)."""
    band = {m.name for m in MODELS[1:]}
    return tuple(Within(m, documented) if isinstance(m, Model) and m in band else m
                 for m in models)


def _standard(models) -> bool:
    """Whether a record's models (past ``"exact"``) are :data:`MODELS`, the ones the table lane
    computes: the same names running the same code."""
    return len(models) == len(MODELS) + 1 and all(
        a == b and (a.fn, a.applies, a.derive) == (b.fn, b.applies, b.derive)
        for a, b in zip(models[1:], MODELS, strict=True))


def value(ctx, *operands):
    """The exact values of the op's function (its record's ``exact``, for the call's
    parameters) at the operands (one ExactArray per part)."""
    if ctx.out.kind == "complex":
        return complex_value(ctx, *operands)
    if ctx.out.kind != "float":
        raise OpTypeError(f"{ctx.name} has no {ctx.out.name} result: its operands promote to an "
                          f"integer format; pass dtype= a float format or convert them first")
    fn, params = get_op(ctx.name).exact.kernel(ctx.params)
    args = [ctx.flat(X[0]).reshape(ctx.shape) for X in operands]
    return [evaluate(fn, *args, bits=call_bits(ctx), params=params,
                     formats=[ctx.promoted.component])]


def complex_value(ctx, *operands):
    """The exact parts of the op's complex function at the operands: ``[real, imaginary]``."""
    if ctx.accuracy.name in ACCURACY_PRESETS and not ctx.accuracy.correct:
        raise ValueError(f"accuracy={ctx.accuracy.name!r}: the presets document real "
                         f"functions; for a complex {ctx.name} pass a number of ulps (each "
                         f"part within that many ulps of the modulus)")
    n = int(np.prod(ctx.shape, dtype=np.int64))
    args = []
    for X in operands:
        for part in X[:2]:
            args.append((np.zeros(n) if part is None else ctx.flat(part)).reshape(ctx.shape))
    return list(evaluate_complex(get_op(ctx.name).exact.complex, *args, bits=call_bits(ctx)))


# --------------------------------------------------------------------- the table lane
_ROUNDED: dict = {}


#: A row of candidates (each of the output's itemsize) read as one element: one gather.
def _row(itemsize: int, k: int) -> np.dtype:
    return np.dtype((np.void, itemsize * k))


def _rounded_tables(fn, params, ctx):
    """Per bit pattern of the input format, the candidates in the output format, as rows:
    the reference, then (where the compute format differs) the exact value rounded in the
    compute format and stored. Also which patterns have a NaN value."""
    fmt, out, c = ctx.promoted, ctx.out, ctx.c
    # the op's name too: a preset's bound is the op record's (two ops may share a function)
    key = (ctx.name, fn.name, tuple(sorted((params or {}).items())), fmt.name, out.name, c.name,
           ctx.mode, ctx.rule, ctx.accuracy.name)
    hit = _ROUNDED.get(key)
    if hit is not None:
        return hit
    exact = function_table(fn, fmt, params).exact()
    n = exact.size
    nan = np.isnan(exact.special)
    keep = np.flatnonzero(~nan)
    sub = ExactArray.regular((keep.size,), exact.c1[keep], exact.c2[keep], exact.r[keep],
                             exact.E[keep], zero=exact.zero[keep], zsign=exact.zsign[keep],
                             special=exact.special[keep])
    tctx = replace(ctx, shape=(keep.size,))
    cands = [tctx.round([sub])[0]]
    if c is not out:  # fused in the compute format, then stored
        via = [tctx.values(v) for v in tctx.round([sub], c)]
        cands.append(tctx.round(via)[0])
    if not ctx.accuracy.correct:  # the ends of the accuracy band, stored
        x = table_patterns(fmt)[1][keep]  # the table's inputs: every pattern of the storage
        for end in _ends(tctx, [sub], x)[0]:
            cands.append(tctx.round([tctx.values(end)])[0])
    rows = np.zeros((n, len(cands)), dtype=out.np_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        for j, v in enumerate(cands):
            col = np.full(n, np.nan if out.has_nan else 0.0)
            col[keep] = v
            rows[:, j] = col.astype(out.np_dtype)
    packed = np.ascontiguousarray(rows).view(_row(out.np_dtype.itemsize, len(cands)))
    hit = (packed.reshape(-1), len(cands), nan)
    _ROUNDED[key] = hit
    return hit


def lane(ctx):
    """A fast lane for a unary function of one float array: of at most 16 bits, every
    candidate looked up per bit pattern, in one gather (the rounded tables are built once per
    kind of call: function, formats, mode, overflow rule); wider, :func:`wide_lane`."""
    if len(ctx.operands) != 1:
        return None
    o, fmt, out = ctx.operands[0], ctx.promoted, ctx.out
    if o is None or o.kind != "array" or o.result is not None or o.array.dtype is not fmt \
            or fmt.kind != "float" or out.kind != "float" or fmt.encoding != "native":
        return None
    spec = get_op(ctx.name)
    if not _standard(spec.models):  # other models than the tables': the general path runs them
        return None
    if fmt.bits > 16:
        return wide_lane(ctx, spec)
    if not ctx.accuracy.correct and ctx.c.component.precision + BAND_EXTRA_BITS > 55:
        return None  # the table's precision does not decide a band this wide
    fn, params = spec.exact.kernel(ctx.params)
    packed, k, nan = _rounded_tables(fn, params, ctx)
    raw = o.array.numpy()
    pat = raw.reshape(-1).view(np.uint16 if raw.itemsize == 2 else np.uint8)
    if not out.has_nan and nan[pat].any():
        return None  # a NaN the output cannot hold: the general path marks it undefined
    rows = packed[pat].view(out.np_dtype).reshape(raw.shape + (k,))
    from .._array import Array
    from .._result import Result

    models = ["exact"] + ([f"fused in {ctx.c.name}"] if ctx.c is not out else [])
    if not ctx.accuracy.correct:
        models += [m.name.format(c=ctx.c.name, a=ctx.accuracy.label) for m in MODELS[1:]]
    return Result(Array(rows[..., 0], out), [[rows[..., j] for j in range(k)]],
                  op=ctx.name, models=models,
                  details={"promoted": ctx.promoted, "compute": ctx.c, "rounding": ctx.mode,
                           "overflow": ctx.rule, "accuracy": ctx.accuracy})


# ---------------------------------------------------------------------- the wide lane
#: Elements per chunk of the wide lane: the exact values and the candidates of a chunk stay
#: in cache (the general path's chunk, so the kernel sees the same calls).
_LANE_CHUNK = 1 << 16


def _result(ctx, rounded, cands) -> object:
    """The Result of a lane: the same models, candidates' values and details as the general
    path's (the candidates of a compute format that is the output: the reference and the
    band's ends)."""
    from .._array import Array
    from .._result import Result

    models = ["exact"] + ([f"fused in {ctx.c.name}"] if ctx.c is not ctx.out else [])
    if not ctx.accuracy.correct:
        models += [m.name.format(c=ctx.c.name, a=ctx.accuracy.label) for m in MODELS[1:]]
    return Result(Array(rounded, ctx.out), [cands], op=ctx.name, models=models,
                  details={"promoted": ctx.promoted, "compute": ctx.c, "rounding": ctx.mode,
                           "overflow": ctx.rule, "accuracy": ctx.accuracy})


def wide_lane(ctx, spec=None):
    """The lane of a unary function of one float32 array computed in float32 (the output and
    the compute format): the exact values chunk by chunk (the kernel's, as the general path
    asks for them), then the reference and the band's ends in one pass per element
    (:func:`~exactref._exact.lane_candidates`, compiled where numba runs): bit for bit the
    general path's values, none of its per-model arrays. None (the general path runs) for
    other formats, a compute format other than the output, the odd rounding, an overflow rule
    other than ``"ieee"``."""
    out, c, acc = ctx.out, ctx.c, ctx.accuracy
    if c is not out or lane_candidates(ExactArray.regular((0,), np.zeros(0)), out.component,
                                       ctx.mode, ctx.rule, None if acc.correct else 1.0) is None:
        return None
    spec = spec or get_op(ctx.name)
    fn, params = spec.exact.kernel(ctx.params)
    raw = ctx.operands[0].array.numpy()
    flat = raw.reshape(-1)
    n = flat.size
    bits, fmts = call_bits(ctx), [ctx.promoted.component]
    comp = out.component
    ref = np.empty(n, np.float32)
    lo = hi = None
    if not acc.correct:
        lo, hi = np.empty(n, np.float32), np.empty(n, np.float32)
    fixed = acc.correct or isinstance(acc.bound, numbers.Real)
    k = None if acc.correct else (acc.ulps(np.zeros(1), None)[0] if fixed else None)
    for s in range(0, n, _LANE_CHUNK):
        with np.errstate(invalid="ignore"):  # a signalling NaN reads as NaN
            xs = flat[s:s + _LANE_CHUNK].astype(np.float64)  # in cache (no fresh pages)
        ex = evaluate(fn, xs, bits=bits, params=params, formats=fmts)
        ulps = k if fixed else (lambda ulp_values, xs=xs: acc.ulps(xs, ulp_values))
        sl = slice(s, s + xs.size)
        into = (ref[sl],) if lo is None else (ref[sl], lo[sl], hi[sl])
        if lane_candidates(ex, comp, ctx.mode, ctx.rule, ulps, into) is None:
            return None  # values the lane does not hold (none of the kernel's)
    shape = raw.shape
    cands = [ref.reshape(shape)] + ([] if lo is None else [lo.reshape(shape),
                                                           hi.reshape(shape)])
    return _result(ctx, ref.reshape(shape), cands)


# ------------------------------------------------------------------ logit's clamp, pow's integers
def negate(ex: ExactArray, mask) -> ExactArray:
    """``ex`` with the elements of ``mask`` negated, in place."""
    for name in ("c1", "c2", "special"):
        a = getattr(ex, name)
        a[mask] = -a[mask]
    ex.r[mask] = -ex.r[mask]
    ex.zsign[mask] = -ex.zsign[mask]
    return ex


def int_powers(ctx, X, Y) -> np.ndarray:
    """The integer powers of ``pow`` (Python integers, an object array of the output's shape):
    PyTorch's values, or a proxy that every overflow rule reduces alike."""
    x, y = ctx.flat(X[0]), ctx.flat(Y[0])
    if ctx.operands[1] is not None and ctx.operands[1].kind == "scalar" and (y < 0).any():
        raise ValueError(f"pow: a negative integer exponent ({int(y[0])}) given as a scalar has "
                         f"no integer power (PyTorch: 'Integers to negative integer powers are "
                         f"not allowed'); pass the exponent as an array for PyTorch's tensor "
                         f"rule (0 for |x| > 1), or a float exponent (pow(x, -1.0))")
    fmt, bits = ctx.out, ctx.out.bits
    out = np.empty(x.size, dtype=object)
    out[:] = [_int_power(int(a), int(b), bits) for a, b in zip(x.tolist(), y.tolist(),
                                                               strict=True)]
    if ctx.rule == "error":  # name the power, not a proxy
        bad = np.flatnonzero([not fmt.int_min <= v <= fmt.int_max for v in out.tolist()])
        if bad.size:
            i = int(bad[0])
            base = f"({int(x[i])})" if x[i] < 0 else f"{int(x[i])}"
            raise OverflowError(
                f"pow: element {ctx.index(i)} is {base}**{int(y[i])}, outside "
                f"{fmt.name}'s range [{fmt.int_min}, {fmt.int_max}]; pass overflow='wrap' or "
                f"'saturate', or choose a wider format")
    return out.reshape(ctx.shape)


def _int_power(a: int, b: int, bits: int) -> int:
    """``a**b`` for integers as PyTorch's ``powi``: a negative ``b`` gives 1 for ``a = 1``,
    ``(-1)**b`` for ``a = -1`` and 0 otherwise. A power far beyond every format of ``bits``
    bits (``|a|**b >= 2**(4 bits)``) is not computed: its residue modulo ``2**bits`` (what
    wrapping keeps) plus ``±2**(bits + 2)`` (what saturation and errors read: beyond the range,
    of the power's sign). The overflow rule itself is the engine's (``integer_overflow``, when
    the powers become the output's values)."""
    if b < 0:
        if a == 1:
            return 1
        return (-1 if b % 2 else 1) if a == -1 else 0
    if abs(a) <= 1 or b * (abs(a).bit_length() - 1) <= 4 * bits:
        return a**b
    residue = pow(a, b, 1 << bits)
    return residue - (1 << (bits + 2)) if (a < 0 and b % 2) else residue + (1 << (bits + 2))
