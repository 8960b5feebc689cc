"""The MPFR layer every function kernel shares: exact round-to-odd values per element, interval
arithmetic on MPFR with outward roundings, and Ziv's strategy (raise the working precision until
both ends of an enclosure truncate to one P-bit number) (private).

The real functions (:mod:`._functions`), their derivatives (:mod:`._derivatives`), the complex
functions (:mod:`._complex_functions`) and the row kernels (softmax, attention, cross-entropy)
hold their values as :class:`_Values` (structure of arrays: a signed mantissa of ``L`` bits, an
exponent, the sign of a tiny rest, specials and signed zeros) and decide them with
:func:`_decide` / :func:`_decide_strict` on :class:`_Iv` enclosures. Values beyond ``2**±1100``
round like any value beyond them into every format of at most 53 bits, so they are held as
``±2**±1100`` (:func:`_far`).

Other packages read these through :mod:`exactref._exact`'s face (``MpfrInterval``,
``OddValues``, ``decide_odd``, ``ziv``, ...).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._engine import ExactArray

__all__ = ["FAR", "W0", "W_MAX", "Interval", "Near", "OddValues", "context", "decide_odd",
           "decide_odd_strict", "far_value", "from_binaries", "from_objects", "gmpy2_module",
           "put_mpfr", "round_fraction_odd", "unique_rows", "ziv"]

_FAR = 1100        # values below 2**-1100 (above 2**1100) round alike into <= 53 bits
_W0 = 24            # guard bits of the first working precision of the compositions
_W_MAX = 1 << 15    # a composition undecided at this precision is an exact case we missed


def _g():
    import gmpy2  # a core dependency, imported on first use so that `import exactref` is light

    return gmpy2


@functools.cache
def _far(sign: int, huge: bool):
    """``sign * 2**(±1100)`` as an exact MPFR value: it rounds like every value beyond it (an
    overflow in every format of at most 53 bits) or below it (under half of every format's
    smallest subnormal)."""
    g = _g()
    return g.mul_2exp(g.mpfr(sign), _FAR if huge else -_FAR)


@functools.cache
def _context(prec: int, rnd: str):
    """An MPFR context of ``prec`` bits rounding ``"Z"`` (toward zero), ``"D"`` (down) or
    ``"U"`` (up), with MPFR's default exponent range (about 2**±2**30: no float64 input
    overflows an intermediate result of the compositions before its tail is taken)."""
    g = _g()
    mode = {"Z": g.RoundToZero, "D": g.RoundDown, "U": g.RoundUp}[rnd]
    return g.context(precision=prec, round=mode)


# ===================================================================== values per element
class _Near:
    """A value ``base`` (a float64) plus a rest of sign ``r`` far below every rounding gap of
    ``base`` (relative size below ``2**-(P+8)``)."""

    __slots__ = ("base", "r")

    def __init__(self, base: float, r: int):
        self.base, self.r = base, r


@dataclass
class _Values:
    """Per element, structure of arrays: a regular value ``(mant + r * tiny) * 2**e`` with
    ``mant`` a signed integer of exactly ``L = max(P, 53)`` bits, or a special (NaN, ±inf) or an
    exact zero of sign ``zsign``."""

    mant: np.ndarray     # int64, signed; 0 where not regular
    e: np.ndarray        # int64
    r: np.ndarray        # int8
    special: np.ndarray  # float64: NaN or ±inf where special, else 0
    zero: np.ndarray     # bool
    zsign: np.ndarray    # int8
    L: int               # the bit length of every regular |mant|

    @classmethod
    def empty(cls, n: int, L: int) -> _Values:
        return cls(np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int8),
                   np.zeros(n), np.zeros(n, bool), np.ones(n, np.int8), L)

    def take(self, idx) -> _Values:
        return _Values(self.mant[idx], self.e[idx], self.r[idx], self.special[idx],
                       self.zero[idx], self.zsign[idx], self.L)

    def put(self, idx, other: _Values) -> None:
        for name in ("mant", "e", "r", "special", "zero", "zsign"):
            getattr(self, name)[idx] = getattr(other, name)

    def exact(self, shape) -> ExactArray:
        """The ExactArray of these values: ``c1 + c2`` the mantissa split at 53 bits."""
        shift = self.L - 53
        if shift == 0:  # the mantissas are float64 integers: c1 itself, c2 zero
            r = self.r
            if r.any():
                r = np.where(self.mant < 0, -r, r).astype(np.int8)
            return ExactArray.regular(shape, self.mant.astype(np.float64), None, r, self.e,
                                      zero=self.zero, zsign=self.zsign, special=self.special)
        a = np.abs(self.mant)
        regular = a != 0
        if shift > 0:
            low = a & np.int64((1 << shift) - 1)
            hi = a - low
        else:
            low, hi = np.zeros_like(a), a
        sign = np.where(self.mant < 0, -1.0, 1.0)
        c1 = np.where(regular, sign * hi.astype(np.float64), 0.0)
        c2 = np.where(regular, sign * low.astype(np.float64), 0.0)
        r = np.where(regular, self.r * np.where(self.mant < 0, -1, 1), 0).astype(np.int8)
        return ExactArray.regular(shape, c1, c2, r, self.e, zero=self.zero, zsign=self.zsign,
                                  special=self.special)


def _from_binaries(bins, P: int, hold_far: bool = False) -> _Values:
    """Parse ``gmpy2.to_binary`` of MPFR results at ``P <= 63`` bits rounded toward zero, each
    with its ternary value, into round-to-odd values.

    gmpy2's binary format (``gmpy2_binary.c``): byte 1 holds the flags (bit 0 a regular number,
    bit 1 the sign, bit 2 64-bit lengths, bits 3-4 the special kind: 0 zero, 1 NaN, 2 inf,
    bit 5 a negative exponent, bit 6 8-byte limbs), byte 2 the ternary value (0, 1: > 0,
    2: < 0), then the precision, the exponent's magnitude and the limbs, little-endian. A
    regular value of at most 64 bits with 32-bit lengths and 8-byte limbs takes 20 bytes; any
    other layout is read with ``as_mantissa_exp`` instead.

    ``hold_far`` (for calls of at most 51 bits, ``P <= 53``): an inexact value beyond
    ``2**1000`` in magnitude (below ``2**-1000``) is held as ``±2**±1100``, as the enclosure
    lane's :func:`~._enclose.decide` holds it; so is an exact one beyond float64's range (at
    least ``2**1024``, below ``2**-1074``: ``exp2(2000)``), which no float64 point holds. Each
    overflows (underflows) in every format of at most 51 bits either way, exactly or not as
    before (the held value is an exact power of two too), and both lanes give the same values
    bit for bit.
    """
    n = len(bins)
    L = max(P, 53)
    out = _Values.empty(n, L)
    lens = np.fromiter(map(len, bins), dtype=np.int64, count=n)
    reg = np.flatnonzero(lens == 20)
    if reg.size:
        buf = np.frombuffer(b"".join([bins[i] for i in reg.tolist()]), dtype=np.uint8)
        buf = buf.reshape(-1, 20)
        flags = buf[:, 1]
        std = ((flags & 0x45) == 0x41)  # regular, 32-bit lengths, 8-byte limbs
        rc = buf[:, 2]
        expmag = np.ascontiguousarray(buf[:, 8:12]).view("<u4").reshape(-1).astype(np.int64)
        limb = np.ascontiguousarray(buf[:, 12:20]).view("<u8").reshape(-1)
        N = (limb >> np.uint64(64 - P)).astype(np.int64)
        N |= (rc != 0).astype(np.int64)  # round to odd: the sticky bit
        e = np.where(flags & 0x20, -expmag, expmag) - P  # value = N * 2**e
        if L > P:
            N <<= np.int64(L - P)
            e -= L - P
        N = np.where(flags & 0x02, -N, N)
        good = reg[std]
        out.mant[good], out.e[good] = N[std], e[std]
        if hold_far:
            top = e + L - 1  # |value| in [2**top, 2**(top + 1))
            far = std & (((rc != 0) & ((top >= 1000) | (top < -1000)))
                         | ((rc == 0) & ((top >= 1024) | (top < -1074))))
            if far.any():
                idx = reg[far]
                sign = np.where(N[far] < 0, -1, 1).astype(np.int64)
                out.mant[idx] = sign << np.int64(L - 1)
                out.e[idx] = np.where(e[far] > 0, _FAR, -_FAR) - (L - 1)
        other = np.concatenate([np.flatnonzero(lens != 20), reg[~std]])
    else:
        other = np.flatnonzero(lens != 20)
    if other.size:
        g = _g()
        for i in other.tolist():
            y = g.from_binary(bins[i])
            _put_mpfr(out, i, y, P)
            E = g.get_exp(y) if g.is_regular(y) else 0  # |y| in [2**(E-1), 2**E)
            if hold_far and ((y.rc != 0 and not -1000 < E < 1001)
                             or (y.rc == 0 and not -1074 < E < 1025)):
                _put_far(out, i, 1 if y > 0 else -1, huge=E > 0)
    return out


def _put_mpfr(out: _Values, i: int, y, P: int, rc: int | None = None) -> None:
    """One MPFR result (rounded toward zero at ``P`` bits, with its ternary value: ``y.rc``, or
    ``rc`` for a part of a complex result) into ``out[i]``, the slow way (specials, zeros, and
    any layout the fast parse does not read)."""
    g = _g()
    rc = y.rc if rc is None else rc
    if g.is_nan(y):
        out.special[i] = math.nan
    elif g.is_infinite(y):
        if rc == 0:
            out.special[i] = math.inf if y > 0 else -math.inf
        else:
            _put_far(out, i, 1 if y > 0 else -1, huge=True)
    elif g.is_zero(y):
        if rc == 0:
            out.zero[i] = True
            out.zsign[i] = -1 if g.is_signed(y) else 1
        else:  # underflow below MPFR's range: a nonzero value of the zero's sign
            _put_far(out, i, -1 if g.is_signed(y) else 1, huge=False)
    else:
        m, e = y.as_mantissa_exp()
        m, e = int(m), int(e)
        k = P - abs(m).bit_length()  # as_mantissa_exp may drop trailing zeros
        m, e = m << k, e - k
        if rc != 0:
            m = m | 1 if m > 0 else -((-m) | 1)
        L = out.L
        out.mant[i], out.e[i] = m << (L - P), e - (L - P)


def _put_float(out: _Values, i: int, x: float, r: int = 0) -> None:
    """A nonzero finite float64 ``x`` (plus a tiny rest of sign ``r``) into ``out[i]``."""
    m, e = math.frexp(x)
    L = out.L
    out.mant[i] = int(m * 2.0**53) << (L - 53)
    out.e[i] = e - L
    out.r[i] = r


def _put_far(out: _Values, i: int, sign: int, huge: bool) -> None:
    """``sign * 2**(±1100)`` into ``out[i]`` (see :func:`_far`)."""
    L = out.L
    out.mant[i] = sign << (L - 1)
    out.e[i] = (_FAR if huge else -_FAR) - (L - 1)


def _from_objects(results, P: int, hold_far: bool = False) -> _Values:
    """Per-element results of the compositions (MPFR values at ``P`` bits rounded toward zero
    with their ternary values, exact floats, or :class:`_Near`) as values."""
    g = _g()
    n = len(results)
    out = _Values.empty(n, max(P, 53))
    mp = [i for i, v in enumerate(results) if not isinstance(v, (float, _Near))]
    if mp:
        parsed = _from_binaries([g.to_binary(results[i]) for i in mp], P, hold_far)
        out.put(np.array(mp, dtype=np.int64), parsed)
    for i, v in enumerate(results):
        if isinstance(v, _Near):
            _put_float(out, i, v.base, v.r)
        elif isinstance(v, float):
            if v != v or math.isinf(v):
                out.special[i] = v
            elif v == 0:
                out.zero[i] = True
                out.zsign[i] = -1 if math.copysign(1.0, v) < 0 else 1
            else:
                _put_float(out, i, v)
    return out


# ============================================================== interval arithmetic on MPFR
class _Iv:
    """Interval arithmetic at working precision ``W``: ``(lo, hi)`` pairs of MPFR values, each
    operation rounded outward. ``exact`` stays True while every operation was exact."""

    def __init__(self, W: int):
        self.D, self.U = _context(W, "D"), _context(W, "U")

    def point(self, x):
        return (x, x)

    def add(self, a, b):
        return (self.D.add(a[0], b[0]), self.U.add(a[1], b[1]))

    def sub(self, a, b):
        return (self.D.sub(a[0], b[1]), self.U.sub(a[1], b[0]))

    def neg(self, a):
        # Note: not ``-a[1]``: gmpy2's unary minus rounds to the thread's context precision
        return (self.D.minus(a[1]), self.U.minus(a[0]))

    def mul(self, a, b):
        D, U = self.D, self.U
        if a[0] >= 0 and b[0] >= 0:
            return (D.mul(a[0], b[0]), U.mul(a[1], b[1]))
        los = [D.mul(p, q) for p in a for q in b]
        his = [U.mul(p, q) for p in a for q in b]
        return (min(los), max(his))

    def div(self, a, b):
        """``a / b`` for ``b`` of one sign, 0 excluded."""
        D, U = self.D, self.U
        if a[0] >= 0 and b[0] > 0:
            return (D.div(a[0], b[1]), U.div(a[1], b[0]))
        los = [D.div(p, q) for p in a for q in b]
        his = [U.div(p, q) for p in a for q in b]
        return (min(los), max(his))

    def inc(self, name, a):
        """An increasing function of MPFR's (correctly rounded: outward at each end)."""
        return (getattr(self.D, name)(a[0]), getattr(self.U, name)(a[1]))

    def dec(self, name, a):
        """A decreasing function of MPFR's."""
        return (getattr(self.D, name)(a[1]), getattr(self.U, name)(a[0]))

    def const(self, text: str):
        """A decimal constant (``"0.044715"``), exactly: a rational, which every operation
        with it takes exactly before its one rounding."""
        q = _g().mpq(text)
        return (q, q)

    def pi(self):
        return (self.D.const_pi(), self.U.const_pi())


def _decide(lo, hi, P: int):
    """The round-to-odd value at ``P`` bits of a value known to lie in ``[lo, hi]`` (and to be
    nonzero), or None when the interval straddles a P-bit number."""
    g = _g()
    tiny, huge = _far(1, False), _far(1, True)
    if lo >= 0 and hi <= tiny:
        return tiny
    if hi <= 0 and lo >= -tiny:
        return -tiny
    if lo >= huge:
        return huge
    if hi <= -huge:
        return -huge
    if g.is_infinite(lo) or g.is_infinite(hi) or g.is_nan(lo) or g.is_nan(hi):
        return None
    Z = _context(P, "Z")
    a, b = Z.plus(lo), Z.plus(hi)
    if a.rc != 0 and b.rc != 0 and a == b:
        return a
    return None



def _decide_strict(lo, hi, P):
    """:func:`_decide` for a value known to lie strictly inside ``(lo, hi)`` (an
    irrational value between two rationals): an end that is a P-bit number decides as the
    values just inside it truncate. None where undecided."""
    got = _decide(lo, hi, P)
    if got is not None:
        return got
    g = _g()
    if g.is_zero(lo) or g.is_zero(hi) or (lo < 0) != (hi < 0) or not (
            g.is_finite(lo) and g.is_finite(hi)):
        return None
    Z = _context(P, "Z")
    a, b = Z.plus(lo), Z.plus(hi)  # truncations toward zero
    a_in, b_in = a.rc != 0, b.rc != 0
    positive = lo > 0
    if not a_in:  # values just above lo
        a, a_in = (a if positive else Z.next_above(a)), True
    if not b_in:  # values just below hi
        b, b_in = (Z.next_below(b) if positive else b), True
    if not (a_in and b_in and a == b):
        return None
    # a P-bit truncation with the sticky bit: a plus a tiny amount away from zero, truncated
    tiny = g.mul_2exp(g.mpfr(1 if positive else -1), g.get_exp(a) - P - 8)
    return Z.add(a, tiny)

def _ziv(enclose, args, P: int, params):
    """Raise the working precision until ``enclose(iv, *args, params)`` decides."""
    W = P + _W0
    while W <= _W_MAX:
        lo, hi = enclose(_Iv(W), *args, params)
        got = _decide(lo, hi, P)
        if got is not None:
            return got
        W *= 2
    raise RuntimeError(  # pragma: no cover - an exact case the closed forms missed
        f"exactref could not decide the rounding of a function at {args!r} with {_W_MAX} bits; "
        f"this is an exact case exactref does not know: please report it")


def _ziv_strict(items, P: int, ends, what):
    """Ziv's strategy on several values at once: ``ends(D, U, items)`` yields each item's
    enclosure ``(lo, hi)`` in the contexts ``D`` (down) and ``U`` (up) of a working precision,
    ``P + W0`` bits and then twice as many for the items left undecided (:func:`_decide_strict`
    at ``P`` bits), until every item is decided: ``{item: decided value}``. Past ``W_MAX`` bits
    an ``AssertionError``: an exact case the Lindemann-Weierstrass argument missed (``what()``:
    what could not be decided)."""
    out = {}
    W = P + _W0
    while items:
        if W > _W_MAX:
            raise AssertionError(
                f"exactref could not decide {what()} with {_W_MAX} bits: an exact case the "
                f"Lindemann-Weierstrass argument missed; please report it")
        D, U = _context(W, "D"), _context(W, "U")
        left = []
        for item, (lo, hi) in zip(items, ends(D, U, items), strict=True):
            got = _decide_strict(lo, hi, P)
            if got is None:
                left.append(item)
            else:
                out[item] = got
        items = left
        W *= 2
    return out


def _unique_rows(args):
    """Distinct operand tuples (by bit pattern: -0 and +0 differ) and the inverse index."""
    bits = [np.ascontiguousarray(a, dtype=np.float64).view(np.uint64) for a in args]
    if len(bits) == 1:
        u, inv = np.unique(bits[0], return_inverse=True)
        return [u.view(np.float64)], inv.reshape(-1)
    stacked = np.stack(bits, axis=1)
    u, inv = np.unique(stacked, axis=0, return_inverse=True)
    return [np.ascontiguousarray(u[:, k]).view(np.float64) for k in range(len(bits))], \
        inv.reshape(-1)



def _round_fraction(v: Fraction, P: int):
    """A nonzero Fraction rounded to odd at P bits (an MPFR value; ``±2**±1100`` beyond)."""
    a = abs(v)
    b = a.numerator.bit_length() - a.denominator.bit_length()
    sign = 1 if v > 0 else -1
    if b > _FAR:
        return _far(sign, True)
    if b < -_FAR:
        return _far(sign, False)
    g = _g()
    return _context(P, "Z").div(g.mpz(v.numerator), g.mpz(v.denominator))



# ------------------------------------------------------------------ the public names (the face)
FAR, W0, W_MAX = _FAR, _W0, _W_MAX
gmpy2_module, far_value, context = _g, _far, _context
Near, OddValues, Interval = _Near, _Values, _Iv
from_binaries, from_objects, put_mpfr = _from_binaries, _from_objects, _put_mpfr
decide_odd, decide_odd_strict, ziv = _decide, _decide_strict, _ziv
round_fraction_odd, unique_rows = _round_fraction, _unique_rows
