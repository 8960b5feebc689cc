"""A fast lane for float32 add and multiply, exact by IEEE 754's own guarantees.

It serves the common case: both operands float32 arrays (no scalars, no chained Results), the
output float32 with its own overflow rule and compute format, and add's ``alpha`` 1 or -1. Then
every modelled implementation is the single rounding, so the reference is all there is.

* Nearest-even: numpy's float32 ``+`` and ``*`` are IEEE 754 operations, each the exact result
  rounded once to nearest even, signs of zero and overflow included: the reference itself.
* The other modes start from that result ``s`` and ask on which side of it the exact value
  lies. For add, the error of ``fl(a + b)`` is exactly representable and Knuth's TwoSum
  computes it in float32 (error-free as long as nothing overflows); for multiply, ``a * b`` is
  exact in float64 (24 + 24 bits), so its float64 difference from ``s`` has the exact sign.
  Toward -inf, +inf or zero, ``s`` steps one ulp (``nextafter``) where it lies on the wrong
  side; ties-away steps on exact ties (the error is half the gap to the neighbour); round-to-odd
  takes the odd one of the two neighbours of an inexact value. An exact zero sum is -0 toward
  -inf unless both terms are +0, as IEEE 754 says.
* Elements where float32 overflowed from finite operands, or TwoSum's intermediate did, go to
  the exact engine (the slow path), which applies the overflow rule.

Like the exact engine, this assumes numpy's float arithmetic runs in IEEE 754 round-to-nearest
without flushing subnormals to zero (numpy's default).
"""

from __future__ import annotations

import numpy as np

from .._exact import ExactPart, Rounding, quotient, root, sum_of_products

__all__ = ["sum_lane", "multiply_lane", "divide_lane", "sqrt_lane", "add32", "multiply32",
           "divide32", "sqrt32"]

_INF = np.float32(np.inf)


def _minus_one(a) -> bool:
    """Whether an engine operand is the scalar -1."""
    if a is None or isinstance(a, str) or a.f64 is None:
        return False
    v = np.asarray(a.f64)
    return v.size == 1 and float(v.reshape(-1)[0]) == -1.0


def _served(ctx) -> bool:
    """Whether the fast lane serves this call: float32 arrays (no scalars, no chained
    Results) into float32, with float32's own compute format and overflow rule."""
    out, c = ctx.out, ctx.c
    if out.name != "float32" or c is not out or ctx.rule != "ieee":
        return False
    return all(o is not None and o.kind == "array" and o.result is None and
               o.array.dtype is out for o in ctx.operands)


def _result(ctx, values, models):
    from .._array import Array
    from .._result import Result

    values = np.asarray(values, dtype=np.float32)
    return Result(Array(values, ctx.out), [[values]], op=ctx.name, models=models,
                  details={"promoted": ctx.promoted, "compute": ctx.c, "rounding": ctx.mode,
                           "overflow": ctx.rule})


def sqrt_lane(ctx):
    """The fast lane's Result for ``sqrt`` in ``ctx``, or None where it does not serve."""
    if not _served(ctx):
        return None
    return _result(ctx, sqrt32(ctx.operands[0].array.numpy(), ctx.mode), ["exact"])


def divide_lane(ctx):
    """The fast lane's Result for true division in ``ctx``, or None."""
    if not _served(ctx) or ctx.params.get("rounding_mode") is not None:
        return None
    X, Y = ctx.operands
    return _result(ctx, divide32(X.array.numpy(), Y.array.numpy(), ctx.mode), ["exact"])


def multiply_lane(ctx):
    """The fast lane's Result for ``multiply`` in ``ctx``, or None."""
    if not _served(ctx):
        return None
    X, Y = ctx.operands
    return _result(ctx, multiply32(X.array.numpy(), Y.array.numpy(), ctx.mode),
                   ["exact", f"fused in {ctx.c.name}"])


def sum_lane(ctx):
    """The fast lane's Result for ``x + alpha * y`` with alpha ±1 (add, subtract), or None."""
    if not _served(ctx):
        return None
    A = ctx.params["A"]
    X, Y = ctx.operands
    a, b = X.array.numpy(), Y.array.numpy()
    if A[1] is not None:
        return None
    if _minus_one(A[0]):
        b = np.negative(b)
    elif not isinstance(A[0], str):  # the ONE marker is a string
        return None
    return _result(ctx, add32(a, b, ctx.mode), ["exact", f"fused in {ctx.c.name}"])


_CHUNK = 1 << 14  # elements per block: a block's temporaries stay in cache


def _blocks(a, b, fn, mode):
    """``fn(a_block, b_block, mode)`` over cache-sized blocks of the broadcast operands, and
    the exact engine for the elements ``fn`` marks hard. A float32 array of the broadcast
    shape."""
    a, b = np.broadcast_arrays(a, b)
    shape = a.shape
    a = np.ascontiguousarray(a).reshape(-1)
    b = np.ascontiguousarray(b).reshape(-1)
    out = np.empty(a.size, dtype=np.float32)
    hard = []
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        for start in range(0, a.size, _CHUNK):
            sl = slice(start, start + _CHUNK)
            values, h = fn(a[sl], b[sl], mode)
            out[sl] = values
            if h is not None:
                hard.append(np.flatnonzero(h) + start)
    if hard:
        idx = np.concatenate(hard)
        if idx.size:
            out[idx] = _exact(a[idx], b[idx], fn.__name__, mode)
    return out.reshape(shape)


def add32(a: np.ndarray, b: np.ndarray, mode: Rounding) -> np.ndarray:
    """``a + b`` (float32 arrays, broadcast) rounded once in ``mode``: a float32 array."""
    if mode is Rounding.NEAREST_EVEN:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.add(a, b)
    return _blocks(a, b, _add_block, mode)


def multiply32(a: np.ndarray, b: np.ndarray, mode: Rounding) -> np.ndarray:
    """``a * b`` (float32 arrays, broadcast) rounded once in ``mode``: a float32 array."""
    if mode is Rounding.NEAREST_EVEN:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return np.multiply(a, b)
    return _blocks(a, b, _multiply_block, mode)


def divide32(a: np.ndarray, b: np.ndarray, mode: Rounding) -> np.ndarray:
    """``a / b`` (float32 arrays, broadcast) rounded once in ``mode``: a float32 array."""
    if mode is Rounding.NEAREST_EVEN:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
            return np.divide(a, b)
    return _blocks(a, b, _divide_block, mode)


def sqrt32(a: np.ndarray, mode: Rounding) -> np.ndarray:
    """``sqrt(a)`` (a float32 array) rounded once in ``mode``: a float32 array."""
    if mode is Rounding.NEAREST_EVEN:
        with np.errstate(invalid="ignore"):
            return np.sqrt(a)
    return _blocks(a, np.float32(0), _sqrt_block, mode)


def _divide_block(a, b, mode):
    # IEEE division is correctly rounded; the remainder a - q*b is exact in float64 (q*b has
    # 48 bits, and it lies within a factor 2 of a: Sterbenz), so its sign is the error's
    q = np.divide(a, b)
    d = np.subtract(a, np.multiply(q, b, dtype=np.float64), dtype=np.float64)
    np.multiply(d, np.sign(b), out=d)  # the error's sign (not its size: a remainder)
    _no_ties(d, mode)
    hard = None
    tiny = np.abs(q) < np.float32(2.0**-126)
    if not np.isfinite(d).all() or tiny.any():
        fin = np.isfinite(a) & np.isfinite(b) & (b != 0)
        # an overflowed or underflowed quotient of finite operands: the exact engine
        hard = fin & (~np.isfinite(q) | (tiny & (a != 0)))
        d = np.where(np.isfinite(d) & ~hard, d, 0.0)
    return _adjust(q, d, mode).view(np.float32), hard


def _sqrt_block(a, b, mode):
    # IEEE sqrt is correctly rounded; a - s*s is exact in float64 (Sterbenz again)
    s = np.sqrt(a)
    d = np.subtract(a, np.multiply(s, s, dtype=np.float64), dtype=np.float64)
    _no_ties(d, mode)
    hard = None
    sub = (a > 0) & (a < np.float32(2.0**-126))
    if sub.any():  # sqrt of a subnormal is normal, but s*s may lose bits: the engine
        hard = sub
    d = np.where(np.isfinite(d), d, 0.0)
    return _adjust(s, d, mode).view(np.float32), hard


def _no_ties(residual, mode):
    """A residual gives the error's sign only, which is all the directed modes and round to odd
    read; ties-away reads the error's size too, but a quotient or square root of floats is never
    a midpoint of normal float32 neighbours (the lanes send subnormal results to the engine), so
    there ties-away is the nearest-even result: the residual is cleared."""
    if mode is Rounding.NEAREST_AWAY:
        residual[...] = 0.0


def _add_block(a, b, mode):
    s = np.add(a, b)
    # TwoSum, in place: e = (a - (s - (s - a))) + (b - (s - a)), the exact error of s
    bb = np.subtract(s, a)
    e = np.subtract(s, bb)
    np.subtract(a, e, out=e)
    np.subtract(b, bb, out=bb)
    np.add(e, bb, out=e)
    hard = None
    if not (np.isfinite(e).all() and np.isfinite(s).all()):
        finite = np.isfinite(s)
        hard = (finite & ~np.isfinite(e)) | (~finite & np.isfinite(a) & np.isfinite(b))
        e = np.where(np.isfinite(e), e, np.float32(0))
    i = _adjust(s, e, mode)
    if mode is Rounding.TOWARD_NEGATIVE and not s.all():
        # an exact zero sum is -0 toward -inf, unless both terms are +0
        fix = (s.view(np.int32) == 0) & ((a.view(np.int32) | b.view(np.int32)) != 0)
        i |= fix * np.int32(-(2**31))
    return i.view(np.float32), hard


def _multiply_block(a, b, mode):
    p = np.multiply(a, b, dtype=np.float64)  # exact
    s = p.astype(np.float32)  # the exact product rounded once to nearest even
    d = np.subtract(p, s, out=p)  # its sign is exact (NaN where p is not finite)
    hard = None
    if not np.isfinite(s).all():
        hard = np.isinf(s) & ~np.isnan(d)
        d = np.where(np.isnan(d), 0.0, d)
    return _adjust(s, d, mode).view(np.float32), hard


def _adjust(s, err, mode):
    """The int32 view of the rounding, in ``mode``, of the exact value ``s + err`` (``err``
    of any float dtype, finite, smaller than half an ulp of ``s``) from its nearest-even
    rounding ``s`` (float32).

    Steps are integer steps of the bit pattern: adding 1 to a float32's int32 view moves it one
    ulp away from zero, subtracting 1 one ulp toward zero, whatever its sign. A nearest-even
    zero has the exact value's sign, so the exact value is never on its other side."""
    i = s.view(np.int32)
    neg = i < 0
    eneg = np.signbit(err)
    inexact = err != 0
    if mode is Rounding.TOWARD_NEGATIVE:
        return i + (inexact & eneg & neg) - (inexact & eneg & ~neg)
    if mode is Rounding.TOWARD_POSITIVE:
        return i + (inexact & ~eneg & ~neg) - (inexact & ~eneg & neg)
    farther = inexact & (eneg == neg)  # the exact value is farther from zero than s
    if mode is Rounding.TOWARD_ZERO:
        return i - (inexact & ~farther)
    if mode is Rounding.NEAREST_AWAY:
        gap = (i + 1).view(np.float32)  # the neighbour away from zero
        np.subtract(gap, s, out=gap)
        np.abs(gap, out=gap)  # exact: a power of two (inf past the largest finite value)
        half = np.abs(err)
        half *= 2
        return i + (farther & (half == gap))
    # round to odd: an inexact even value steps toward the exact value
    step = inexact & ((i & 1) == 0)
    return i + (step & farther) - (step & ~farther)


#: The slow path of each lane's block: the exact value through the engine.
_EXACT = {"_add_block": lambda oa, ob: sum_of_products([(oa,), (ob,)], (oa.f64.size,)),
          "_multiply_block": lambda oa, ob: sum_of_products([(oa, ob)], (oa.f64.size,)),
          "_divide_block": lambda oa, ob: quotient([(oa,)], [(ob,)], (oa.f64.size,)),
          "_sqrt_block": lambda oa, ob: root([(oa,)], (oa.f64.size,))}


def _exact(a, b, block, mode):
    """The slow path: the op of ``block`` (its name) on float32 values through the exact
    engine."""
    from .._formats import FORMATS

    oa = ExactPart.from_float64(np.asarray(a, dtype=np.float64))
    ob = ExactPart.from_float64(np.asarray(b, dtype=np.float64))
    ex = _EXACT[block](oa, ob)
    return ex.round(FORMATS["float32"], mode, "ieee")[0].astype(np.float32)
