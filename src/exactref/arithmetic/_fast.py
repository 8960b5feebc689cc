"""A fast lane for float32 and float64 add, subtract and multiply (float32 divide and sqrt),
exact by IEEE 754's own guarantees.

It serves the common case: the operands float arrays (no scalars, no chained Results) whose
values the output format holds, the output float32 or float64 with its own overflow rule and
compute format, and add's ``alpha`` 1 or -1. Then every modelled implementation is the single
rounding, so the reference is all there is (the Result holds one candidate, ``rounded`` itself:
``Result.covers`` takes its fast path).

* Nearest-even: numpy's ``+`` and ``*`` are IEEE 754 operations, each the exact result
  rounded once to nearest even, signs of zero and overflow included: the reference itself.
* The other modes start from that result ``s`` and ask on which side of it the exact value
  lies, from the exact error ``e = a + b - s`` or ``a * b - s``:

  - add: Knuth's TwoSum computes the error of ``fl(a + b)`` exactly in the operands' own format
    (six operations, no branch), whatever the operands' exponents, subnormals included, as
    long as nothing overflows; an intermediate overflow makes ``e`` infinite or NaN (no
    operation of TwoSum turns an infinity back into a finite value), so it is seen.
  - float32 multiply: ``a * b`` is exact in float64 (24 + 24 bits, exponents within float64's
    normal range), so its float64 difference from ``s`` is the exact error (Sterbenz: ``s`` is
    within a factor 2 of it).
  - float64 multiply: Dekker's TwoProduct with Veltkamp's split (``C = 2**27 + 1``; no FMA in
    numpy). The split of a normal ``|a| <= 2**995`` is exact (``C * a`` does not overflow, and
    the low half's last bit is ``ulp(a) >= 2**-1074``), the halves have 26 and 27 bits, so each
    partial product is exact; Dekker's sum of them is exact when every intermediate is a
    multiple of ``2**-1074`` (the last bit of the exact product, ``ulp(a) ulp(b) =
    2**(Ea + Eb - 104)``, needs ``Ea + Eb >= -970``, which ``|s| >= 2**-968`` ensures as ``|s| <
    2**(Ea + Eb + 2)``) and nothing overflows (``|s| <= 2**1020``). So the lane serves finite
    nonzero operands with ``2**-1022 <= |a|, |b| <= 2**995`` and ``2**-968 <= |s| <= 2**1020``,
    a zero, infinite or NaN operand (the product is then exact: ``e = 0``), and sends the rest
    (products near the ends of the range, subnormal operands) to the exact engine.

  Toward -inf, +inf or zero, ``s`` steps one ulp (an integer step of its bit pattern) where it
  lies on the wrong side; ties-away steps on exact ties (the error is half the gap to the
  neighbour away from zero); round-to-odd takes the odd one of the two neighbours of an
  inexact value. An exact zero sum is -0 toward -inf unless both terms are +0, as IEEE 754
  says.
* Elements where the result overflowed from finite operands, or TwoSum's intermediate did, or
  Dekker's conditions fail, go to the exact engine (the slow path), which applies the overflow
  rule.

Blocks of ``_CHUNK`` elements keep the temporaries in cache; where numba is installed, one
compiled pass per block replaces the numpy operations (:mod:`._fast_jit`, the same float
operations in the same order, checked against the numpy twin by the tests).

Like the exact engine, this assumes numpy's float arithmetic runs in IEEE 754 round-to-nearest
without flushing subnormals to zero (numpy's default).
"""

from __future__ import annotations

import numpy as np

from .._exact import ExactPart, Rounding, map_chunks, quotient, root, sum_of_products
from . import _fast_jit

__all__ = ["sum_lane", "multiply_lane", "divide_lane", "sqrt_lane", "add32", "multiply32",
           "divide32", "sqrt32", "add_values", "multiply_values"]

#: The integer views of the lane's float dtypes.
_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _minus_one(a) -> bool:
    """Whether an engine operand is the scalar -1."""
    if a is None or isinstance(a, str) or a.f64 is None:
        return False
    v = np.asarray(a.f64)
    return v.size == 1 and float(v.reshape(-1)[0]) == -1.0


def _held(fmt, out) -> bool:
    """Whether every value of the float format ``fmt`` is a value of ``out`` (its precision
    and exponent range within ``out``'s): its operands are taken exactly by a cast."""
    return fmt is out or (fmt.kind == "float" and fmt.encoding == "native" and
                          fmt.precision <= out.precision and fmt.emax <= out.emax and
                          fmt.emin - fmt.precision >= out.emin - out.precision)


def _served(ctx, formats=("float32",)) -> bool:
    """Whether the fast lane serves this call: float arrays (no scalars, no chained Results)
    that the output holds, into one of ``formats``, with the output's own compute format and
    overflow rule."""
    out, c = ctx.out, ctx.c
    if out.name not in formats or c is not out or ctx.rule != "ieee":
        return False
    return all(o is not None and o.kind == "array" and o.result is None and
               _held(o.array.dtype, out) for o in ctx.operands)


def _operand(o, out) -> np.ndarray:
    """An operand's values in the output's numpy dtype (exact: :func:`_held`)."""
    a = o.array.numpy()
    return a if o.array.dtype is out else a.astype(out.np_dtype)


def _result(ctx, values, models):
    from .._array import Array
    from .._result import Result

    values = np.asarray(values, dtype=ctx.out.np_dtype)
    return Result(Array(values, ctx.out), [[values]], op=ctx.name, models=models,
                  details={"promoted": ctx.promoted, "compute": ctx.c, "rounding": ctx.mode,
                           "overflow": ctx.rule})


def sqrt_lane(ctx):
    """The fast lane's Result for ``sqrt`` in ``ctx``, or None where it does not serve."""
    if not _served(ctx):
        return None
    return _result(ctx, sqrt32(_operand(ctx.operands[0], ctx.out), ctx.mode), ["exact"])


def divide_lane(ctx):
    """The fast lane's Result for true division in ``ctx``, or None."""
    if not _served(ctx) or ctx.params.get("rounding_mode") is not None:
        return None
    X, Y = ctx.operands
    return _result(ctx, divide32(_operand(X, ctx.out), _operand(Y, ctx.out), ctx.mode),
                   ["exact"])


_WIDE = ("float32", "float64")  # the formats of the add and multiply lanes


def multiply_lane(ctx):
    """The fast lane's Result for ``multiply`` in ``ctx``, or None."""
    if not _served(ctx, _WIDE):
        return None
    X, Y = ctx.operands
    return _result(ctx, multiply_values(_operand(X, ctx.out), _operand(Y, ctx.out), ctx.mode),
                   ["exact", f"fused in {ctx.c.name}"])


def sum_lane(ctx):
    """The fast lane's Result for ``x + alpha * y`` with alpha ±1 (add, subtract), or None."""
    if not _served(ctx, _WIDE):
        return None
    A = ctx.params["A"]
    if A[1] is not None:
        return None
    if _minus_one(A[0]):
        negate = True
    elif isinstance(A[0], str):  # the ONE marker is a string
        negate = False
    else:
        return None
    X, Y = ctx.operands
    a, b = _operand(X, ctx.out), _operand(Y, ctx.out)
    return _result(ctx, add_values(a, b, ctx.mode, negate=negate),
                   ["exact", f"fused in {ctx.c.name}"])


_CHUNK = 1 << 14  # elements per block: a block's temporaries stay in cache


def _blocks(a, b, fn, mode):
    """``fn(a_block, b_block, mode)`` over cache-sized blocks of the broadcast operands, and
    the exact engine for the elements ``fn`` marks hard. An array of the operands' dtype and
    the broadcast shape."""
    a, b = np.broadcast_arrays(a, b)
    shape = a.shape
    a = np.ascontiguousarray(a).reshape(-1)
    b = np.ascontiguousarray(b).reshape(-1)
    out = np.empty(a.size, dtype=a.dtype)
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


def _compiled(a, b, block, mode, negate=False):
    """The compiled twin of ``_blocks(a, b, block, mode)`` (negating ``b`` first with
    ``negate``), or None where compiled paths do not run, or for fewer elements than one
    block (the numpy twin is as quick there, and numba is not even imported)."""
    if int(np.prod(np.broadcast_shapes(np.shape(a), np.shape(b)))) < _CHUNK:
        return None
    loops = _fast_jit.loops()
    if loops is None:
        return None
    a, b = np.broadcast_arrays(a, b)
    shape = a.shape
    a = np.ascontiguousarray(a).reshape(-1)
    b = np.ascontiguousarray(b).reshape(-1)
    out = np.empty(a.size, dtype=a.dtype)
    loop = loops["add" if block is _add_block else "multiply", a.dtype]
    code = _fast_jit.MODES[mode]
    found = []  # the hard elements' indices, chunk by chunk (list.append is atomic)

    def run(start, stop):
        hard = np.empty(stop - start, dtype=bool)  # a chunk's flags stay in cache
        loop(a[start:stop], b[start:stop], negate, code, out[start:stop], hard)
        if hard.any():
            found.append(np.flatnonzero(hard) + start)

    map_chunks(run, a.size, _CHUNK_JIT)
    if found:
        idx = np.concatenate(found)
        bb = -b[idx] if negate else b[idx]
        out[idx] = _exact(a[idx], bb, block.__name__, mode)
    return out.reshape(shape)


_CHUNK_JIT = 1 << 16  # elements per compiled call (and per thread's task)


def add_values(a: np.ndarray, b: np.ndarray, mode: Rounding, negate: bool = False
               ) -> np.ndarray:
    """``a + b`` (or ``a - b`` with ``negate``; float32 or float64 arrays of one dtype,
    broadcast) rounded once in ``mode``: an array of their dtype."""
    if mode is Rounding.NEAREST_EVEN:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.subtract(a, b) if negate else np.add(a, b)
    out = _compiled(a, b, _add_block, mode, negate)
    if out is not None:
        return out
    if negate:
        b = np.negative(b)
    return _blocks(a, b, _add_block, mode)


def multiply_values(a: np.ndarray, b: np.ndarray, mode: Rounding) -> np.ndarray:
    """``a * b`` (float32 or float64 arrays of one dtype, broadcast) rounded once in
    ``mode``: an array of their dtype."""
    if mode is Rounding.NEAREST_EVEN:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return np.multiply(a, b)
    block = _multiply_block if a.dtype == np.float32 else _multiply64_block
    out = _compiled(a, b, block, mode)
    return _blocks(a, b, block, mode) if out is None else out


def add32(a: np.ndarray, b: np.ndarray, mode: Rounding) -> np.ndarray:
    """``a + b`` (float32 arrays, broadcast) rounded once in ``mode``: a float32 array."""
    return add_values(a, b, mode)


def multiply32(a: np.ndarray, b: np.ndarray, mode: Rounding) -> np.ndarray:
    """``a * b`` (float32 arrays, broadcast) rounded once in ``mode``: a float32 array."""
    return multiply_values(a, b, mode)


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
        e = np.where(np.isfinite(e), e, e.dtype.type(0))
    i = _adjust(s, e, mode)
    if mode is Rounding.TOWARD_NEGATIVE and not s.all():
        # an exact zero sum is -0 toward -inf, unless both terms are +0
        iv = _INT[s.dtype]
        fix = (s.view(iv) == 0) & ((a.view(iv) | b.view(iv)) != 0)
        i |= fix * np.iinfo(iv).min
    return i.view(s.dtype), hard


def _multiply_block(a, b, mode):
    p = np.multiply(a, b, dtype=np.float64)  # exact
    s = p.astype(np.float32)  # the exact product rounded once to nearest even
    d = np.subtract(p, s, out=p)  # its sign is exact (NaN where p is not finite)
    hard = None
    if not np.isfinite(s).all():
        hard = np.isinf(s) & ~np.isnan(d)
        d = np.where(np.isnan(d), 0.0, d)
    return _adjust(s, d, mode).view(np.float32), hard


_SPLIT = 2.0**27 + 1  # Veltkamp's splitter for float64


def _multiply64_block(a, b, mode):
    s = np.multiply(a, b)
    # Dekker's TwoProduct: s + e == a * b exactly where the conditions of the module hold
    t = np.multiply(a, _SPLIT)
    ah = np.subtract(t, np.subtract(t, a))
    al = np.subtract(a, ah)
    np.multiply(b, _SPLIT, out=t)
    bh = np.subtract(t, np.subtract(t, b))
    bl = np.subtract(b, bh, out=t)
    e = np.multiply(ah, bh)
    np.subtract(e, s, out=e)
    e += np.multiply(ah, bl, out=ah)
    e += np.multiply(al, bh, out=bh)
    e += np.multiply(al, bl, out=al)
    aa, ab, aS = np.abs(a), np.abs(b), np.abs(s)
    fin = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
    safe = (aa >= 2.0**-1022) & (aa <= 2.0**995) & (ab >= 2.0**-1022) & (ab <= 2.0**995)
    safe &= (aS >= 2.0**-968) & (aS <= 2.0**1020)
    hard = fin & ~safe
    e = np.where(fin & safe, e, 0.0)  # a zero, infinite or NaN operand: s is exact
    return _adjust(s, e, mode).view(np.float64), hard if hard.any() else None


def _adjust(s, err, mode):
    """The integer view of the rounding, in ``mode``, of the exact value ``s + err`` (``err``
    of any float dtype, finite, smaller than half an ulp of ``s``) from its nearest-even
    rounding ``s`` (float32 or float64).

    Steps are integer steps of the bit pattern: adding 1 to a float's integer view moves it one
    ulp away from zero, subtracting 1 one ulp toward zero, whatever its sign. A nearest-even
    zero has the exact value's sign, so the exact value is never on its other side."""
    i = s.view(_INT[s.dtype])
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
        gap = (i + 1).view(s.dtype)  # the neighbour away from zero
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
          "_multiply64_block": lambda oa, ob: sum_of_products([(oa, ob)], (oa.f64.size,)),
          "_divide_block": lambda oa, ob: quotient([(oa,)], [(ob,)], (oa.f64.size,)),
          "_sqrt_block": lambda oa, ob: root([(oa,)], (oa.f64.size,))}


def _exact(a, b, block, mode):
    """The slow path: the op of ``block`` (its name) on float32 or float64 values (their
    dtype is the output's) through the exact engine."""
    from .._formats import dtype as resolve_dtype

    fmt = resolve_dtype(a.dtype)
    oa = ExactPart.from_float64(np.asarray(a, dtype=np.float64))
    ob = ExactPart.from_float64(np.asarray(b, dtype=np.float64))
    ex = _EXACT[block](oa, ob)
    return ex.round(fmt, mode, "ieee")[0].astype(a.dtype)
