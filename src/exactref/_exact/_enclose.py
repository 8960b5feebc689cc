"""Vectorized rigorous evaluation of the real functions: decide from a float64 enclosure, MPFR
only where undecided.

For a call whose widest format has at most 51 bits (float32, bfloat16, float16 and every
narrower format, and the accuracy bands of float32), :func:`~._functions.evaluate` needs the
exact value rounded to odd at ``P = bits + 2 <= 53`` bits. An **enclosure** of a function (registered
by :func:`encloses`) computes, for a whole chunk of inputs with float64
arithmetic only, numbers ``lo <= f(x) <= hi`` whose error bounds are derived in that module
(argument reduction, polynomial or series truncation, and every float64 rounding, each bound
written down). :func:`decide` then settles every element whose enclosure lies strictly inside
one cell between consecutive ``P``-bit numbers: there the round-to-odd value is that cell's
odd end (the truncation with its last bit set), whatever the exact value is. The rest (the
elements near a ``P``-bit number, a fraction of about ``(hi - lo) / ulp_P``, around 2**-20 for
float32) goes to MPFR, as before: the values are bit for bit MPFR's.

An enclosure returns :class:`Enclosed` arrays, per element one of:

* ``lo < hi``: the exact value lies in ``[lo, hi]`` (same sign, nonzero); :func:`decide`
  settles it or sends it on. Both ends beyond ``2**1000`` in magnitude (or both below
  ``2**-1000``, nonzero) is an overflow (underflow) in every format of at most 51 bits: held
  as ``±2**±1100``, as the MPFR path holds them;
* ``lo < hi`` may also be a **witness** of the value's cell: two numbers strictly inside the
  open cell between consecutive ``P``-bit numbers that holds the value, where the module proves
  the value lies in that cell (``_fast_exp``'s compositions at tiny inputs, where the value is
  a ``P``-bit number plus a rest too small for a float64 to express): :func:`decide` reads
  only the cell;
* ``lo == hi`` and ``rest == 0``: the exact value is the float64 ``lo`` (``±0``, ``±inf``,
  NaN, or a finite number such as ``sigmoid(0) = 1/2``);
* ``lo == hi`` and ``rest = ±1``: the value is ``lo`` plus a rest of that sign far below every
  rounding gap at ``P`` bits (relative size below ``2**-(P+8)``: the tails of sigmoid, silu,
  gelu, ...), which rounds exactly as the value does; for MPFR's own functions (exp at tiny x,
  tanh near ±1), where ``lo`` is a ``P``-bit number, it is written as its round-to-odd value at
  ``P`` bits, the MPFR path's form;
* ``ok`` False: not served (MPFR evaluates it).

>>> import numpy as np
>>> lo = np.array([1.0 + 2**-30, 1.0 - 2**-60, -3.5 - 2**-29])
>>> hi = np.array([1.0 + 2**-29, 1.0 + 2**-60, -3.5 - 2**-30])
>>> mant, e, ok = decide(lo, hi, 26)
>>> ok.tolist()   # the second straddles 1, a 26-bit number
[True, False, True]
>>> (mant[ok] * 2.0 ** e[ok]).tolist()   # the cells' odd ends: 1 + 2**-25, -(3.5 + 2**-24)
[1.0000000298023224, -3.5000000596046448]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _jit

__all__ = ["Enclosed", "ENCLOSURES", "CHUNK", "decide", "enclosure", "encloses",
           "evaluate_enclosed", "from_relative"]

#: Inputs per chunk: an enclosure's temporaries stay in cache.
CHUNK = 1 << 14
#: Beyond these magnitudes an enclosed value overflows (underflows) every format of at most 51
#: bits; it is held as ``±2**±FAR`` (``_mpfr.FAR``).
_HUGE, _TINY = 2.0**1000, 2.0**-1000
_FAR = 1100


@dataclass
class Enclosed:
    """An enclosure's answer for a chunk: see the module's docstring. ``rest`` and ``ok``
    default to zeros and all True."""

    lo: np.ndarray
    hi: np.ndarray
    rest: np.ndarray | None = None
    ok: np.ndarray | None = None


def from_relative(y, eps) -> tuple[np.ndarray, np.ndarray]:
    """``[lo, hi]`` enclosing every value within relative error ``eps`` (a float or an array,
    below 2**-20) of the float64 ``y``: ``y -+ |y| * eps'`` with ``eps' = eps + 2**-51``, which
    covers the two roundings of forming the ends (each at most ``2**-53`` relative)."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, not served
        d = np.abs(y) * (np.asarray(eps, dtype=np.float64) + 2.0**-51)
        return y - d, y + d


# ================================================================== deciding round-to-odd
def decide(lo, hi, P: int):
    """Per element of the enclosures ``[lo, hi]`` (float64 arrays, ``lo < hi``): ``(mant, e,
    ok)``, where ``ok`` the round-to-odd value at ``P <= 53`` bits of every number in the
    enclosure is ``mant * 2**e`` (``mant`` signed, of exactly 53 bits), else (the enclosure
    holds a ``P``-bit number, crosses zero, or is not finite) ``ok`` False. Enclosures beyond
    ``2**±1000`` give ``±2**±1100``."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    if not 1 <= P <= 53:
        raise ValueError(f"decide: P={P}, expected 1 to 53 bits")
    f = _decide_loop.compiled()
    mant = np.zeros(lo.shape, np.int64)
    e = np.zeros(lo.shape, np.int64)
    ok = np.zeros(lo.shape, bool)
    if f is not None:
        f(np.ascontiguousarray(lo).reshape(-1).view(np.int64),
          np.ascontiguousarray(hi).reshape(-1).view(np.int64), P, mant.reshape(-1),
          e.reshape(-1), ok.reshape(-1))
        return mant, e, ok
    pos, neg = lo > 0, hi < 0
    a = np.where(pos, lo, -hi)  # the end nearer zero, as a magnitude
    b = np.where(pos, hi, -lo)
    sign = np.where(pos, 1, -1)
    with np.errstate(invalid="ignore"):
        both = (pos | neg) & (a <= b)
        huge = both & (a >= _HUGE) & (a <= np.inf)
        tiny = both & (b <= _TINY)
        mid = both & (a >= _TINY) & (b <= _HUGE) & ~tiny & ~huge
    ma, ea = np.frexp(np.where(mid, a, 1.0))
    mb, eb = np.frexp(np.where(mid, b, 1.0))
    sa = np.ldexp(ma, P)
    Ma = np.floor(sa)
    Mb = np.floor(np.ldexp(mb, P))
    cell = mid & (ea == eb) & (Ma == Mb) & (sa > Ma)
    M = (Ma + (np.fmod(Ma, 2.0) == 0)).astype(np.int64) << np.int64(53 - P)
    mant[:] = np.where(cell, sign * M, 0)
    e[:] = np.where(cell, ea.astype(np.int64) - 53, 0)
    top = sign.astype(np.int64) << np.int64(52)
    mant[:] = np.where(huge | tiny, top, mant)
    e[:] = np.where(huge, _FAR - 52, np.where(tiny, -_FAR - 52, e))
    ok[:] = cell | huge | tiny
    return mant, e, ok


_FRAC = (1 << 52) - 1
_TINY_BITS = int(np.float64(_TINY).view(np.int64))
_HUGE_BITS = int(np.float64(_HUGE).view(np.int64))
_INF_BITS = 0x7FF0000000000000


@_jit.jit
def _decide_one(a, b, s, P, mant, e, i):  # pragma: no cover - compiled (numba)
    """The cell of the magnitudes ``a <= b`` (float64 bit patterns, of sign ``s``) at ``P``
    bits into ``mant[i], e[i]``; False where undecided. Bit patterns order like the values for
    non-negative floats: ``b <= TINY`` is ``|hi| <= 2**-1000``."""
    if a > _INF_BITS or b > _INF_BITS or a > b:  # NaN, or not an interval
        return False
    if b <= _TINY_BITS:
        mant[i] = s << 52
        e[i] = -_FAR - 52
        return True
    if a >= _HUGE_BITS:
        mant[i] = s << 52
        e[i] = _FAR - 52
        return True
    if a < _TINY_BITS or b > _HUGE_BITS:
        return False
    sh = 53 - P
    # the same exponent and top P bits (one compare of the patterns), a strictly above the
    # truncation (some of its low 53 - P bits set)
    if (a >> sh) != (b >> sh) or (a & ((1 << sh) - 1)) == 0:
        return False
    M = (((a & _FRAC) | (1 << 52)) >> sh) | 1
    mant[i] = s * (M << sh)
    e[i] = ((a >> 52) - 1023) + 1 - 53
    return True


@_jit.jit(needs=("_decide_one",))
def _decide_loop(lo, hi, P, mant, e, ok):  # pragma: no cover - compiled (numba)
    """:func:`decide`'s compiled twin, on the bit patterns of ``lo`` and ``hi``
    (``_decide_one`` bound to its dispatcher when this compiles)."""
    for i in range(lo.size):
        a0, b0 = lo[i], hi[i]
        if a0 > 0 and b0 > 0:  # both positive (bit patterns of non-negative floats)
            ok[i] = _decide_one(a0, b0, 1, P, mant, e, i)
        elif a0 < 0 and b0 < 0:  # both have the sign bit: magnitudes |hi| <= |lo|
            ma, mb = b0 & 0x7FFFFFFFFFFFFFFF, a0 & 0x7FFFFFFFFFFFFFFF
            if ma != 0:
                ok[i] = _decide_one(ma, mb, -1, P, mant, e, i)


@_jit.jit(needs=("_decide_one",))
def _settle_loop(lo, hi, rest, ok, P, odd_rest, mant, e, r, special, zero, zsign,
                 left):  # pragma: no cover - compiled (numba)
    """:func:`_settle_numpy`'s compiled twin, on the bit patterns of ``lo`` and ``hi``: every
    element decided, a point, or marked in ``left``."""
    sh = 53 - P
    for i in range(lo.size):
        mant[i] = 0
        e[i] = 0
        r[i] = 0
        special[i] = 0.0
        zero[i] = False
        zsign[i] = 1
        left[i] = True
        if not ok[i]:
            continue
        a0, b0 = lo[i], hi[i]
        mag = a0 & 0x7FFFFFFFFFFFFFFF
        s = -1 if a0 < 0 else 1
        if a0 == b0 or (mag > _INF_BITS and (b0 & 0x7FFFFFFFFFFFFFFF) > _INF_BITS):
            if mag >= _INF_BITS:  # NaN or ±inf
                special[i] = np.int64(a0).view(np.float64)
                left[i] = False
            elif mag == 0:
                zero[i] = True
                zsign[i] = s
                left[i] = False
            elif (mag >> 52) == 0:  # a subnormal point: MPFR
                continue
            elif rest[i] != 0 and odd_rest:
                # the value is the point plus a rest (magnitude side rest * s): its round-to-
                # odd cell is that of the float next to the point on that side, where the
                # point is a P-bit number
                if (mag & ((1 << sh) - 1)) != 0:
                    continue
                m = mag + 1 if rest[i] * s > 0 else mag - 1
                left[i] = not _decide_one(m, m, s, P, mant, e, i)
            else:
                mant[i] = s * ((mag & _FRAC) | (1 << 52))
                e[i] = (mag >> 52) - 1023 - 52
                r[i] = rest[i] * s
                left[i] = False
            continue
        if a0 > 0 and b0 > 0:
            left[i] = not _decide_one(a0, b0, 1, P, mant, e, i)
        elif a0 < 0 and b0 < 0:
            ma, mb = b0 & 0x7FFFFFFFFFFFFFFF, a0 & 0x7FFFFFFFFFFFFFFF
            if ma != 0:
                left[i] = not _decide_one(ma, mb, -1, P, mant, e, i)


# ====================================================================== the driver
#: The enclosures, by :class:`~._functions.RealFunction` name: ``enclose(x, P, params) ->
#: Enclosed | None`` (None: these parameters are not served), each registered by
#: :func:`encloses` in :mod:`._fast_exp` (exp and its kin) or :mod:`._fast_log` (log, erf and
#: theirs), which are imported on first use.
ENCLOSURES: dict = {}
_LOADED = []


def encloses(name: str):
    """Register the decorated ``enclose(x, P, params)`` as the enclosure of the function
    ``name`` (a :class:`~._functions.RealFunction`'s name)."""

    def register(f):
        if name in ENCLOSURES:
            raise ValueError(f"two enclosures of {name!r}: {ENCLOSURES[name]!r} and {f!r}")
        ENCLOSURES[name] = f
        return f

    return register


def enclosure(name: str):
    """The enclosure of the function ``name``, or None (MPFR evaluates every element)."""
    if not _LOADED:
        from . import _fast_exp, _fast_log  # noqa: F401  (they register their enclosures)

        _LOADED.append(True)
    return ENCLOSURES.get(name)


def evaluate_enclosed(fn, x, P: int, params, slow):
    """The values (:class:`~._mpfr._Values`) of the unary function ``fn`` (its record) at the
    flat float64 array ``x``, round-to-odd at ``P <= 53`` bits: enclosed and decided in chunks
    of :data:`CHUNK`, the undecided elements by ``slow(xs)`` (MPFR's values of ``xs``). None
    where ``fn`` has no enclosure for ``params``."""
    from ._mpfr import _Values

    enclose = enclosure(fn.name)
    if enclose is None or P > 53:
        return None
    n = x.size
    out = _Values.empty(n, 53)
    pending = []
    for s in range(0, n, CHUNK):
        xs = x[s:s + CHUNK]
        got = enclose(xs, P, params)
        if got is None:
            return None
        left = _settle(got, P, out, s, fn.native is not None)
        if left.size:
            pending.append(left + s)
    if pending:
        idx = np.concatenate(pending)
        out.put(idx, slow(np.ascontiguousarray(x[idx])))
    return out


def _settle(got: Enclosed, P: int, out, s: int, odd_rest: bool) -> np.ndarray:
    """Write the decided elements of one chunk's enclosures into ``out`` from index ``s``;
    return the chunk's undecided indices. ``odd_rest``: a point with a rest is written as its
    round-to-odd value at ``P`` bits (MPFR's own functions: the form their values take on the
    MPFR path), else as the point and the rest's sign (the compositions' ``_Near``)."""
    lo = np.ascontiguousarray(got.lo, dtype=np.float64)
    hi = np.ascontiguousarray(got.hi, dtype=np.float64)
    m = lo.size
    ok = np.ones(m, bool) if got.ok is None else np.ascontiguousarray(got.ok, bool)
    rest = np.zeros(m, np.int8) if got.rest is None else np.ascontiguousarray(got.rest,
                                                                              np.int8)
    sl = slice(s, s + m)
    f = _settle_loop.compiled()
    if f is not None:
        left = np.empty(m, bool)
        f(lo.view(np.int64), hi.view(np.int64), rest, ok, P, odd_rest, out.mant[sl],
          out.e[sl], out.r[sl], out.special[sl], out.zero[sl], out.zsign[sl], left)
        return np.flatnonzero(left)
    return _settle_numpy(lo, hi, rest, ok, P, odd_rest, out, sl)


def _settle_numpy(lo, hi, rest, ok, P, odd_rest, out, sl) -> np.ndarray:
    """:func:`_settle` in numpy."""
    point = ok & ((lo == hi) | (np.isnan(lo) & np.isnan(hi)))
    with np.errstate(invalid="ignore"):
        subnormal = point & (np.abs(lo) < 2.0**-1022) & (lo != 0)
    point &= ~subnormal
    conv = point & (rest != 0) & np.isfinite(lo) & (lo != 0) if odd_rest else None
    skip = point | subnormal | ~ok  # points are no enclosures; subnormal points go to MPFR
    a, b = np.where(skip, np.nan, lo), np.where(skip, np.nan, hi)
    if conv is not None and conv.any():
        # the float next to the point on the rest's side, where the point is a P-bit number
        mag = np.abs(np.where(conv, lo, 1.0)).view(np.int64)
        grid = (mag & np.int64((1 << (53 - P)) - 1)) == 0
        side = np.where(rest.astype(np.int64) * np.where(lo < 0, -1, 1) > 0, 1, -1)
        nxt = (mag + side).view(np.float64) * np.where(lo < 0, -1.0, 1.0)
        use = conv & grid
        a = np.where(use, nxt, a)
        b = np.where(use, nxt, b)
        point &= ~conv
    mant, e, decided = decide(a, b, P)
    out.mant[sl] = mant
    out.e[sl] = e
    out.r[sl] = 0
    out.special[sl] = 0.0
    out.zero[sl] = False
    out.zsign[sl] = 1
    if point.any():
        v = np.where(point, lo, 0.0)
        special = point & ~np.isfinite(v)
        zero = point & (v == 0)
        regular = point & ~special & ~zero
        fm, fe = np.frexp(np.where(regular, v, 1.0))
        out.mant[sl] = np.where(regular, (fm * 2.0**53).astype(np.int64), out.mant[sl])
        out.e[sl] = np.where(regular, fe.astype(np.int64) - 53, out.e[sl])
        # the rest's sign relative to the magnitude (the form _Values holds)
        out.r[sl] = np.where(regular, rest * np.where(v < 0, -1, 1), 0).astype(np.int8)
        out.special[sl] = np.where(special, v, 0.0)
        out.zero[sl] = zero
        out.zsign[sl] = np.where(zero & np.signbit(v), -1, 1).astype(np.int8)
        decided = decided | point
    return np.flatnonzero(~decided)
