"""Real functions (exp, log, tanh, erf, sigmoid, gelu, ...) at float64 inputs, as ExactArrays
that round like the exact function values into every format of at most 53 bits, in every mode.

The exact value of ``exp(x)`` is irrational for every float ``x != 0``, so, as for quotients and
roots, the engine never holds it: it holds a value that rounds the same way. That value is the
exact value **rounded to odd at P = bits + 2 bits** (55 for every format of at most 53 bits): by
the round-to-odd theorem, rounding it into any format of at most ``P - 2`` bits in any mode gives
the correct rounding of the exact value. Round-to-odd is truncation (round toward zero) with the
last bit set when anything was cut off.

How each value is obtained
--------------------------
* **MPFR's functions** (``exp``, ``exp2``, ``expm1``, ``log``, ``log2``, ``log10``, ``log1p``,
  ``sin``, ``cos``, ``tan``, ``sinh``, ``cosh``, ``tanh``, ``asin``, ``acos``, ``atan``,
  ``atan2``, ``erf``, ``erfc``, ``pow``) are correctly rounded in every mode, and return the
  ternary value (the sign of ``result - exact``; 0 exactly when the result is exact). One call at
  P bits rounding toward zero gives the truncation and whether it is exact, so the round-to-odd
  value is that truncation with its last bit set when the ternary value is not 0. MPFR runs
  Ziv's strategy inside: no loop is needed here. Exact cases come out exact by MPFR's own
  detection (``exp(0) = 1``, ``log2(2**k) = k``, ``log10(1000) = 3``, ``pow(4, 0.5) = 2``, ...).
* **Compositions** (``sigmoid``, ``silu``, ``gelu`` with erf or with tanh, ``softplus``,
  ``logit``, ``mish``) are evaluated in interval arithmetic on MPFR: every step rounded down
  for the lower end and up for the upper end (monotonicity decides which end of an argument
  feeds which), at a working precision W. When both ends truncate to the same P-bit number and
  neither is exact, the exact value lies strictly inside that cell and its round-to-odd value is
  decided; otherwise W doubles (Ziv's strategy). Exact values of the compositions
  (``sigmoid(0) = 1/2``, ``logit(1/2) = 0``, zeros at 0) are known in closed form and never
  reach the loop. Where the value is ``x`` (or 1) minus a relative amount below ``2**-(P+8)``
  (the tails of sigmoid, silu, gelu, softplus, mish), the value is written as ``x`` and the
  sign of the rest, which rounds exactly as the value does, without evaluating the tiny rest.
* Values beyond ``2**±1100`` round like any value beyond them into every format of at most 53
  bits (an overflow, or a value below half the smallest subnormal), so they are held as
  ``±2**±1100``: MPFR's own overflow and underflow never decide a rounding.

Special values follow IEEE 754-2019 §9.2 and C99 Annex F (F.9) for the functions they name, as
MPFR implements them: signed zeros kept by odd functions (``sin(-0) = -0``), ``exp(-inf) = +0``,
``log(±0) = -inf``, ``log(-1) = NaN``, ``tanh(±inf) = ±1``, ``atan2`` and ``pow``'s tables
(``pow(x, ±0) = 1`` even for a NaN ``x``, ``pow(-8, 1/3) = NaN``). The compositions take their
limits: ``sigmoid(-inf) = +0``, ``silu(-inf) = gelu(-inf) = mish(-inf) = -0``, ``logit(0) =
-inf``, NaN outside their domain; the ops' docstrings list them.

Tables
------
For an input format of at most 16 bits, :func:`function_table` holds the round-to-odd values at
55 bits of every bit pattern, built once per function (and parameters) and kept in memory and in
a user cache directory (:func:`cache_dir`; ``EXACTREF_CACHE_DIR`` overrides it), stamped with
exactref's version and the table layout: a file from another version is rebuilt. Evaluating an
array of such a format is then a lookup.

Processes
---------
Everything here runs in the calling process: no pool, no thread is started behind the user's
back. Only where the user asks (``exactref.set_workers(n)``, ``with exactref.workers(n):``, an
``executor=`` of theirs, or ``EXACTREF_WORKERS``) are evaluations of at least
:data:`PARALLEL_MIN` distinct inputs, and table builds, cut into chunks for worker processes,
with the same values bit for bit: :mod:`._workers`.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
import threading
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import _workers
from ._engine import ExactArray
from ._workers import PARALLEL_MIN

__all__ = ["FUNCTIONS", "RealFunction", "evaluate", "function_table", "cache_dir",
           "table_formats", "FunctionTable", "PARALLEL_MIN", "DERIVATIVES",
           "gradient", "partial", "PARTIALS"]

#: The precision of the tables: round-to-odd at 55 bits serves every format of at most 53 bits.
TABLE_PRECISION = 55
#: The layout of the cached tables; bump it when the kernel or the layout changes.
TABLE_LAYOUT = 1

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


def _from_binaries(bins, P: int) -> _Values:
    """Parse ``gmpy2.to_binary`` of MPFR results at ``P <= 63`` bits rounded toward zero, each
    with its ternary value, into round-to-odd values.

    gmpy2's binary format (``gmpy2_binary.c``): byte 1 holds the flags (bit 0 a regular number,
    bit 1 the sign, bit 2 64-bit lengths, bits 3-4 the special kind: 0 zero, 1 NaN, 2 inf,
    bit 5 a negative exponent, bit 6 8-byte limbs), byte 2 the ternary value (0, 1: > 0,
    2: < 0), then the precision, the exponent's magnitude and the limbs, little-endian. A
    regular value of at most 64 bits with 32-bit lengths and 8-byte limbs takes 20 bytes; any
    other layout is read with ``as_mantissa_exp`` instead.
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
        other = np.concatenate([np.flatnonzero(lens != 20), reg[~std]])
    else:
        other = np.flatnonzero(lens != 20)
    if other.size:
        g = _g()
        for i in other.tolist():
            _put_mpfr(out, i, g.from_binary(bins[i]), P)
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


def _from_objects(results, P: int) -> _Values:
    """Per-element results of the compositions (MPFR values at ``P`` bits rounded toward zero
    with their ternary values, exact floats, or :class:`_Near`) as values."""
    g = _g()
    n = len(results)
    out = _Values.empty(n, max(P, 53))
    mp = [i for i, v in enumerate(results) if not isinstance(v, (float, _Near))]
    if mp:
        parsed = _from_binaries([g.to_binary(results[i]) for i in mp], P)
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


# ================================================================== the compositions
# Each composition: ``scalar(x, P, params)`` for a finite float ``x`` gives an MPFR value (round-
# to-odd at P bits, via _decide), an exact float, or a _Near; the specials (NaN, ±inf) are
# tabled in ``specials``.

def _tail_threshold(P: int) -> float:
    """``t`` with ``exp(-t) < 2**-(P+8)``: beyond it, ``1 - sigmoid(t)`` and its kin are far
    below every rounding gap at P bits."""
    return (P + 9) * math.log(2.0)


def _sigmoid_iv(iv, x, params):
    X = iv.point(x)
    if x >= 0:  # 1 / (1 + exp(-x))
        e = iv.inc("exp", iv.neg(X))
        return iv.div(iv.point(1), iv.add(iv.point(1), e))
    e = iv.inc("exp", X)  # exp(x) / (1 + exp(x)): no cancellation for x < 0
    return iv.div(e, iv.add(iv.point(1), e))


def _sigmoid(x, P, params):
    if x == 0:
        return 0.5
    if x > _tail_threshold(P):
        return _Near(1.0, -1)
    return _ziv(_sigmoid_iv, (x,), P, params)


def _silu_iv(iv, x, params):
    return iv.mul(iv.point(x), _sigmoid_iv(iv, x, params))


def _silu(x, P, params):
    if x == 0:
        return x  # ±0
    if x > _tail_threshold(P):
        return _Near(x, -1)  # x * (1 - t), t < 2**-(P+8)
    return _ziv(_silu_iv, (x,), P, params)


def _gelu_iv(iv, x, params):
    """``(x / 2) * erfc(-x / sqrt(2))`` (no cancellation on either side)."""
    s2 = iv.inc("sqrt", iv.point(2))
    y = iv.div(iv.neg(iv.point(x)), s2)
    # Note: not ``x / 2`` in float64, which rounds where it is subnormal; halving in MPFR is exact
    return iv.mul(iv.mul(iv.point(x), iv.dec("erfc", y)), iv.point(0.5))


def _gelu(x, P, params):
    if x == 0:
        return x
    # erfc(z) <= exp(-z**2) for z >= 0, so 1 - gelu(x) / x = erfc(x/sqrt2)/2 < exp(-x**2 / 2)
    if x > math.sqrt(2 * _tail_threshold(P)):
        return _Near(x, -1)
    return _ziv(_gelu_iv, (x,), P, params)


def _gelu_tanh_z(iv, x):
    """``2 * sqrt(2/pi) * (x + 0.044715 x**3)``, enclosed."""
    X = iv.point(x)
    c = iv.inc("sqrt", iv.div(iv.point(8), iv.pi()))  # 2 sqrt(2/pi) = sqrt(8/pi)
    cube = iv.mul(iv.mul(X, X), X)
    inner = iv.add(X, iv.mul(iv.const("0.044715"), cube))
    return iv.mul(c, inner)


def _gelu_tanh_iv(iv, x, params):
    """``0.5 x (1 + tanh(u)) = x * sigmoid(2u)``, ``u = sqrt(2/pi) (x + 0.044715 x**3)``."""
    z = _gelu_tanh_z(iv, x)  # 2u, of x's sign
    if x > 0:
        s = iv.div(iv.point(1), iv.add(iv.point(1), iv.inc("exp", iv.neg(z))))
    else:
        e = iv.inc("exp", z)
        s = iv.div(e, iv.add(iv.point(1), e))
    return iv.mul(iv.point(x), s)


def _gelu_tanh(x, P, params):
    if x == 0:
        return x
    # 2u >= sqrt(8/pi) x > 1.59 x for x > 0: 1 - sigmoid(2u) < exp(-1.59 x)
    if x > _tail_threshold(P) / 1.59:
        return _Near(x, -1)
    return _ziv(_gelu_tanh_iv, (x,), P, params)


def _softplus_iv(iv, x, params):
    """``log1p(exp(beta x)) / beta``; ``beta x`` is exact at the working precision (>= 106)."""
    beta = params["beta"]
    u = _context(256, "Z").mul(x, beta)  # exact: two 53-bit factors
    lp = iv.inc("log1p", iv.inc("exp", iv.point(u)))
    return iv.div(lp, iv.point(beta))


def _softplus(x, P, params):
    beta, threshold = params["beta"], params["threshold"]
    u = Fraction(x) * Fraction(beta)
    if u > Fraction(threshold):
        return x  # torch returns the input where beta * x > threshold
    if u > 64:  # log1p(exp(u)) = u + log1p(exp(-u)), the rest below exp(-64) u**-1 relative
        # x + log1p(exp(-u)) / beta: the rest has x's sign (beta's), so it adds to |x|
        return _Near(x, 1)
    return _ziv(_softplus_iv, (x,), P, params)


def _logit_iv(iv, x, params):
    """``log(x) - log1p(-x)`` (each end outward)."""
    return iv.sub(iv.inc("log", iv.point(x)), iv.inc("log1p", iv.point(-x)))


def _logit(x, P, params):
    if x == 0.5:
        return 0.0
    if x == 0:
        return -math.inf
    if x == 1:
        return math.inf
    if not 0 < x < 1:
        return math.nan
    return _ziv(_logit_iv, (x,), P, params)


def _mish_iv(iv, x, params):
    """``x * tanh(log1p(e**x)) = x * g``, ``g = u(u + 2) / (u**2 + 2u + 2)``, ``u = e**x``
    (increasing in u); for x > 0, ``g = 1 - 2 / (u**2 + 2u + 2)``."""
    X = iv.point(x)
    u = iv.inc("exp", X)
    two = iv.point(2)
    w = iv.add(iv.add(iv.mul(u, u), iv.mul(two, u)), two)
    if x > 0:
        gv = iv.sub(iv.point(1), iv.div(two, w))
    else:
        gv = iv.div(iv.mul(u, iv.add(u, two)), w)
    return iv.mul(X, gv)


def _mish(x, P, params):
    if x == 0:
        return x
    if x > _tail_threshold(P) / 2 + 1:  # 1 - g = 2 / w < 2 e**(-2x)
        return _Near(x, -1)
    return _ziv(_mish_iv, (x,), P, params)


# ===================================================================== the registry
@dataclass(frozen=True)
class RealFunction:
    """A real function of the kernel: ``native`` names MPFR's (a method of gmpy2's context),
    else ``scalar(x, P, params)`` evaluates one finite input and ``specials`` gives the value
    (a float) at NaN, ±inf (keys ``"nan"``, ``"inf"``, ``"-inf"``). ``arity`` 1 or 2."""

    name: str
    native: str | None = None
    scalar: object = None
    specials: object = None
    arity: int = 1
    params: tuple = ()
    check: object = None  # params -> params, validated (raises ValueError)

    def key(self, params=None) -> str:
        """The table's name: the function and its parameters (``softplus-beta=1.0-...``)."""
        if not self.params:
            return self.name
        return "-".join([self.name] + [f"{k}={params[k]!r}" for k in self.params])


def _specials_of(nan=math.nan, pinf=math.nan, ninf=math.nan):
    return {"nan": nan, "inf": pinf, "-inf": ninf}


def _softplus_specials(params):
    beta = params["beta"]
    # +inf: beta > 0 gives beta x = inf > threshold, the input; beta < 0: log1p(0) / beta = -0
    return _specials_of(pinf=math.inf if beta > 0 else -0.0,
                        ninf=0.0 if beta > 0 else -math.inf)


def _softplus_check(params):
    beta, threshold = float(params["beta"]), float(params["threshold"])
    if not (math.isfinite(beta) and beta != 0) or threshold != threshold:
        raise ValueError(f"softplus needs a finite nonzero beta and a threshold that is not NaN; "
                         f"got beta={params['beta']!r}, threshold={params['threshold']!r}")
    return {"beta": beta, "threshold": threshold}


FUNCTIONS = {f.name: f for f in (
    RealFunction("exp", "exp"), RealFunction("exp2", "exp2"), RealFunction("expm1", "expm1"),
    RealFunction("log", "log"), RealFunction("log2", "log2"), RealFunction("log10", "log10"),
    RealFunction("log1p", "log1p"),
    RealFunction("sin", "sin"), RealFunction("cos", "cos"), RealFunction("tan", "tan"),
    RealFunction("sinh", "sinh"), RealFunction("cosh", "cosh"), RealFunction("tanh", "tanh"),
    RealFunction("asin", "asin"), RealFunction("acos", "acos"), RealFunction("atan", "atan"),
    RealFunction("erf", "erf"), RealFunction("erfc", "erfc"),
    RealFunction("atan2", "atan2", arity=2), RealFunction("pow", "pow", arity=2),
    RealFunction("sigmoid", scalar=_sigmoid, specials=_specials_of(pinf=1.0, ninf=0.0)),
    RealFunction("silu", scalar=_silu, specials=_specials_of(pinf=math.inf, ninf=-0.0)),
    RealFunction("gelu", scalar=_gelu, specials=_specials_of(pinf=math.inf, ninf=-0.0)),
    RealFunction("gelu_tanh", scalar=_gelu_tanh,
                 specials=_specials_of(pinf=math.inf, ninf=-0.0)),
    RealFunction("softplus", scalar=_softplus, specials=_softplus_specials,
                 params=("beta", "threshold"), check=_softplus_check),
    RealFunction("logit", scalar=_logit, specials=_specials_of()),
    RealFunction("mish", scalar=_mish, specials=_specials_of(pinf=math.inf, ninf=-0.0)),
)}


def _function(name) -> RealFunction:
    try:
        return FUNCTIONS[name]
    except KeyError:
        raise ValueError(f"unknown function {name!r}; the kernel has "
                         f"{', '.join(FUNCTIONS)}") from None


# ===================================================================== evaluation
def _evaluate_values(fn: RealFunction, args, P: int, params) -> _Values:
    """Values of ``fn`` at flat float64 arrays ``args`` (one per operand, equal lengths),
    every element computed (no deduplication)."""
    if fn.native is not None:
        g = _g()
        f = getattr(_context(P, "Z"), fn.native)
        tob = g.to_binary
        if fn.arity == 1:
            bins = [tob(f(v)) for v in args[0].tolist()]
        else:
            bins = [tob(f(a, b)) for a, b in zip(args[0].tolist(), args[1].tolist(),
                                                   strict=True)]
        return _from_binaries(bins, P)
    x = args[0]
    specials = fn.specials(params) if callable(fn.specials) else fn.specials
    results = []
    scalar = fn.scalar
    for v in x.tolist():
        if v != v:
            results.append(specials["nan"])
        elif math.isinf(v):
            results.append(specials["inf" if v > 0 else "-inf"])
        else:
            results.append(scalar(v, P, params))
    return _from_objects(results, P)


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


def _check_params(fn: RealFunction, params) -> dict:
    params = dict(params or {})
    missing = [p for p in fn.params if p not in params]
    if missing:
        raise ValueError(f"{fn.name} needs the parameters {', '.join(missing)}")
    params = {k: params[k] for k in fn.params}
    return fn.check(params) if fn.check is not None else params


def evaluate(name: str, *args, bits: int = 53, params=None, formats=None) -> ExactArray:
    """``name`` at float64 inputs (arrays broadcast together) as an :class:`ExactArray` that
    rounds like the exact value into every format of at most ``bits`` bits (53: every format)
    in every rounding mode.

    ``formats``: the exactref formats the operands' values come from (one per operand, or
    None); a unary function of a format of at most 16 bits is answered from its table.

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = evaluate("exp", np.array([0.0, 1.0, -np.inf]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [1.0, 2.718281828459045, 0.0]
    >>> ex.round(FORMATS["float32"], Rounding.TOWARD_ZERO, "ieee")[0].tolist()
    [1.0, 2.7182817459106445, 0.0]
    """
    fn = _function(name)
    if len(args) != fn.arity:
        raise TypeError(f"{name} takes {fn.arity} operand{'s' * (fn.arity > 1)}, got "
                        f"{len(args)}")
    if not 1 <= bits <= 61:
        raise ValueError(f"bits={bits}: the kernel serves formats of 1 to 61 bits")
    params = _check_params(fn, params)
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
    shape = arrays[0].shape
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    n = flat[0].size
    if n == 0:
        return ExactArray.regular(shape, np.zeros(0))
    fmt = formats[0] if formats and fn.arity == 1 else None
    if fmt is not None and fmt in table_formats() and bits <= TABLE_PRECISION - 2:
        values = _lookup(fn, params, fmt, flat[0])
        if values is not None:
            return values.exact(shape)
    P = bits + 2
    uniq, inv = _unique_rows(flat)
    values = _parallel_values(fn, uniq, P, params)
    return values.take(inv).exact(shape)


# ====================================================================== derivatives
# ``grad * f'(x)``, the exact value (a gradient rounded once). ``f'`` is a function value (exp
# for exp, cos for sin, sech**2 for tanh) enclosed by MPFR's directed roundings at the exact
# point ``x``, or ``1 / d(x)`` with ``d`` exact (log, log1p, atan): then ``grad / d`` is one
# correctly rounded MPFR division. Special values are those of PyTorch's formulas evaluated in
# IEEE arithmetic (``grad * exp(x)`` is ``grad * inf`` at ``x = +inf``, ``grad / x`` is
# ``±inf`` at ``x = ±0``).

def _pair(D, U, name, x):
    return (getattr(D, name)(x), getattr(U, name)(x))


def _h_exp(iv, x):
    return _pair(iv.D, iv.U, "exp", x)


def _h_exp2(iv, x):
    return iv.mul((iv.D.const_log2(), iv.U.const_log2()), _pair(iv.D, iv.U, "exp2", x))


def _h_log_base(base):
    def h(iv, x):  # 1 / (x ln(base))
        ln = (iv.D.log(base), iv.U.log(base))
        return iv.div(iv.point(1), iv.mul(iv.point(x), ln))
    return h


def _h_cos(iv, x):
    return _pair(iv.D, iv.U, "cos", x)


def _h_minus_sin(iv, x):
    return iv.neg(_pair(iv.D, iv.U, "sin", x))


def _h_sec2(iv, x):
    s = _pair(iv.D, iv.U, "sec", x)  # of one sign: cos(x) != 0 at a float x
    return iv.mul(s, s) if s[0] > 0 else iv.mul(iv.neg(s), iv.neg(s))


def _h_cosh(iv, x):
    return _pair(iv.D, iv.U, "cosh", x)


def _h_sinh(iv, x):
    return _pair(iv.D, iv.U, "sinh", x)


def _h_sech2(iv, x):
    s = _pair(iv.D, iv.U, "sech", x)  # sech > 0
    return iv.mul(s, s)


def _h_sigmoid(iv, x):
    return iv.mul(_sigmoid_iv(iv, x, None), _sigmoid_iv(iv, -x, None))


def _h_erf(iv, x):
    """``2 / sqrt(pi) * exp(-x**2)`` (``x**2`` exact at the working precision's 2 x 53 bits)."""
    mx2 = _context(128, "Z").mul(-x, x)  # -x**2, exact
    c = iv.div(iv.point(2), iv.inc("sqrt", iv.pi()))
    return iv.mul(c, iv.inc("exp", iv.point(mx2)))


def _h_erfc(iv, x):
    return iv.neg(_h_erf(iv, x))


def _h_asin(iv, x):
    """``1 / sqrt(1 - x**2)``, ``1 - x**2`` exact (at most 2 x 1075 bits)."""
    d = _context(4400, "Z").sub(1, _context(128, "Z").mul(x, x))
    return (iv.D.rec_sqrt(d), iv.U.rec_sqrt(d))


def _h_acos(iv, x):
    return iv.neg(_h_asin(iv, x))


def _h_silu(iv, x):
    """``s(x) (1 + x s(-x))``, ``s`` the sigmoid (each factor without cancellation)."""
    s, sm = _sigmoid_iv(iv, x, None), _sigmoid_iv(iv, -x, None)
    return iv.mul(s, iv.add(iv.point(1), iv.mul(iv.point(x), sm)))


def _h_mish(iv, x):
    """``tanh(sp) + x sech(sp)**2 s(x) = g + 4 x u (1 + u) / w**2``, ``u = e**x``, ``w = u**2 +
    2u + 2``, ``g = u (u + 2) / w`` (``1 - 2 / w`` for x > 0), ``sp`` the softplus."""
    X, one, two = iv.point(x), iv.point(1), iv.point(2)
    u = iv.inc("exp", X)
    w = iv.add(iv.add(iv.mul(u, u), iv.mul(two, u)), two)
    g = iv.sub(one, iv.div(two, w)) if x > 0 else iv.div(iv.mul(u, iv.add(u, two)), w)
    rest = iv.div(iv.mul(iv.mul(iv.point(4), X), iv.mul(u, iv.add(one, u))), iv.mul(w, w))
    return iv.add(g, rest)


def _minus_half_square(x):
    """``-x**2 / 2``, exact (106 bits)."""
    return _context(128, "Z").mul(_context(128, "Z").mul(-x, x), 0.5)


def _h_gelu(iv, x):
    """``Phi(x) + x phi(x) = erfc(-x / sqrt2) / 2 + x e**(-x**2/2) / sqrt(2 pi)``."""
    X = iv.point(x)
    y = iv.div(iv.neg(X), iv.inc("sqrt", iv.point(2)))
    phi_cdf = iv.mul(iv.dec("erfc", y), iv.point(0.5))
    e = iv.inc("exp", iv.point(_minus_half_square(x)))
    c = iv.inc("sqrt", iv.mul(iv.point(2), iv.pi()))
    return iv.add(phi_cdf, iv.div(iv.mul(X, e), c))


def _sigmoid_of(iv, Z):
    """``1 / (1 + e**-z)`` of an interval (increasing; no cancellation at either end)."""
    e = iv.inc("exp", iv.neg(Z))
    return iv.div(iv.point(1), iv.add(iv.point(1), e))


def _h_gelu_tanh(iv, x):
    """``s(z) (1 + x s(-z) c)``: ``z = 2u`` (see :func:`_gelu_tanh_iv`), ``c = dz/dx =
    sqrt(8/pi) (1 + 0.134145 x**2)`` (3 x 0.044715, exact): ``0.5 (1 + tanh u) = s(z)`` and
    ``0.5 x (1 - tanh(u)**2) du/dx = x s(z) s(-z) c``."""
    z = _gelu_tanh_z(iv, x)
    x2 = iv.point(_context(128, "Z").mul(x, x))
    c = iv.mul(iv.inc("sqrt", iv.div(iv.point(8), iv.pi())),
               iv.add(iv.point(1), iv.mul(iv.const("0.134145"), x2)))
    s, sm = _sigmoid_of(iv, z), _sigmoid_of(iv, iv.neg(z))
    return iv.mul(s, iv.add(iv.point(1), iv.mul(iv.mul(iv.point(x), sm), c)))


def _nan_at_infinities(x):
    """PyTorch's formulas of silu, gelu and mish give NaN at ±inf (``inf * 0``) and NaN."""
    return _NAN if (x != x or math.isinf(x)) else None


def _above(bound):
    """``near``: ``f'(x) = 1 + tiny`` (positive) for ``x > bound(P)``."""
    return lambda x, P: 1 if x > bound(P) else None


def _negligible_below(bound):
    """``tiny``: ``f'(x)`` is negative and below ``2**-2200`` in magnitude for ``x < bound``,
    so ``g f'(x)`` lies below ``2**-1100`` for every float64 ``g`` (silu: ``|f'| < e**x (2 +
    2|x|)``; gelu: ``|x| e**(-x**2/2)``; the tanh gelu: ``e**z (1 + |x|**3)``, ``z <
    -1.59|x|``)."""
    return lambda x: -1 if x < bound else None


def _softplus_derivative(params):
    """``s(beta x)`` (PyTorch: ``z / (z + 1)``, ``z = e**(beta x)``), 1 where ``beta x >
    threshold``: the product exact, as in the forward."""
    beta, threshold = params["beta"], params["threshold"]

    def special(x):
        if x != x:
            return _NAN
        if math.isinf(x) and (x > 0) != (beta > 0):  # beta x = -inf: g * 0
            return 0.0
        return None

    def exact(x):
        if math.isinf(x):
            return Fraction(1)  # beta x = +inf > threshold
        u = Fraction(x) * Fraction(beta)
        if u > Fraction(threshold):
            return Fraction(1)
        return Fraction(1, 2) if u == 0 else None

    def enclose(iv, x):
        return _sigmoid_iv(iv, _context(256, "Z").mul(x, beta), None)  # beta x exact

    def near(x, P):
        return -1 if Fraction(x) * Fraction(beta) > _tail_threshold(P) else None

    return _Derivative(special, exact, enclose, near=near)


def _den_logit(x):
    """``x (1 - x)``, exact (``1 - x`` of at most 1075 bits)."""
    return _context(2200, "Z").mul(x, _context(2200, "Z").sub(1, x))


def _logit_derivative(params):
    """``1 / (x (1 - x))`` as PyTorch's ``grad / (x * (1 - x))`` (derivatives.yaml, and its
    vectorized CPU kernel): without ``eps``, NaN outside [0, 1] and ``±inf`` at ±0 and 1 (IEEE's
    division by ``x (1 - x) = ±0``); with ``eps``, +0 whatever ``grad`` is unless ``eps <= x <= 1
    - eps`` (exactly: ``1 - eps`` is not rounded; NaN is masked too). Note: the kernel's scalar
    path, taken for a few elements, gives ``grad * inf`` at -0 and NaN at a masked NaN."""
    eps = params.get("eps")

    def special(x):
        if x != x or x < 0 or x > 1:
            return _NAN
        if x == 0:
            return math.copysign(_INF, x)
        return _INF if x == 1 else None

    mask = None
    if eps is not None:
        e = Fraction(eps)

        def mask(x):
            return not (x == x and eps <= x and (x != _INF and Fraction(x) <= 1 - e))

    return _Derivative(special, den=_den_logit, mask=mask)


@dataclass(frozen=True)
class _Derivative:
    """``f'`` of a function: ``special(x)`` its value (a float: ±0, ±inf, NaN) where PyTorch's
    formula gives a special or a zero, ``exact(x)`` a Fraction where it is rational (None
    else), and either ``enclose(iv, x)`` (a function value) or ``den(x)`` (``f' = 1 / den``,
    ``den`` exact). ``near(x, P)``: ``r`` where ``f'(x) = 1 + r t`` with ``0 < t <
    2**-(P+8)`` (the tails, where the interval would need ever more bits), else None;
    ``tiny(x)``: the sign of ``f'(x)`` where it is below ``2**-2200`` (every ``g f'(x)`` then
    rounds like ``±2**-1100``), else None; ``mask(x)``: where PyTorch's formula gives +0 whatever ``grad`` is; ``bind(params)``: the
    derivative of a function with parameters (softplus's beta, logit's eps)."""

    special: object = None
    exact: object = None
    enclose: object = None
    den: object = None
    near: object = None
    mask: object = None
    bind: object = None
    tiny: object = None


def _sp(table):
    """``special(x)`` from ``{"nan": .., "inf": .., "-inf": .., "0": .., "-0": ..}`` (missing:
    not special)."""
    def special(x):
        if x != x:
            return table.get("nan", math.nan)
        if math.isinf(x):
            return table.get("inf" if x > 0 else "-inf")
        if x == 0:
            return table.get("-0" if math.copysign(1.0, x) < 0 else "0")
        return None
    return special


def _at_zero(value):
    return lambda x: Fraction(value) if x == 0 else None


def _den_log1p(x):
    return _context(2200, "Z").add(1, x)  # exact


def _den_atan(x):
    return _context(4400, "Z").add(1, _context(128, "Z").mul(x, x))  # exact


_INF, _NAN = math.inf, math.nan
DERIVATIVES = {
    "exp": _Derivative(_sp({"inf": _INF, "-inf": 0.0}), _at_zero(1), _h_exp),
    "expm1": _Derivative(_sp({"inf": _INF, "-inf": 0.0}), _at_zero(1), _h_exp),
    "exp2": _Derivative(_sp({"inf": _INF, "-inf": 0.0}), None, _h_exp2),
    "log": _Derivative(_sp({"inf": 0.0, "-inf": -0.0, "0": _INF, "-0": -_INF}),
                       den=lambda x: x),
    "log2": _Derivative(_sp({"inf": 0.0, "-inf": -0.0, "0": _INF, "-0": -_INF}), None,
                        _h_log_base(2)),
    "log10": _Derivative(_sp({"inf": 0.0, "-inf": -0.0, "0": _INF, "-0": -_INF}), None,
                         _h_log_base(10)),
    "log1p": _Derivative(_sp({"inf": 0.0, "-inf": -0.0}), den=_den_log1p),
    "sin": _Derivative(_sp({"inf": _NAN, "-inf": _NAN}), _at_zero(1), _h_cos),
    "cos": _Derivative(_sp({"inf": _NAN, "-inf": _NAN, "0": -0.0, "-0": 0.0}), None,
                       _h_minus_sin),
    "tan": _Derivative(_sp({"inf": _NAN, "-inf": _NAN}), _at_zero(1), _h_sec2),
    "sinh": _Derivative(_sp({"inf": _INF, "-inf": _INF}), _at_zero(1), _h_cosh),
    "cosh": _Derivative(_sp({"inf": _INF, "-inf": -_INF, "0": 0.0, "-0": -0.0}), None,
                        _h_sinh),
    "tanh": _Derivative(_sp({"inf": 0.0, "-inf": 0.0}), _at_zero(1), _h_sech2),
    "sigmoid": _Derivative(_sp({"inf": 0.0, "-inf": 0.0}), _at_zero(Fraction(1, 4)),
                           _h_sigmoid),
    "erf": _Derivative(_sp({"inf": 0.0, "-inf": 0.0}), None, _h_erf),
    "erfc": _Derivative(_sp({"inf": -0.0, "-inf": -0.0}), None, _h_erfc),
    "asin": _Derivative(lambda x: _asin_special(x, 1.0), _at_zero(1), _h_asin),
    "acos": _Derivative(lambda x: _asin_special(x, -1.0), _at_zero(-1), _h_acos),
    "atan": _Derivative(_sp({"inf": 0.0, "-inf": 0.0}), den=_den_atan),
    "silu": _Derivative(_nan_at_infinities, _at_zero(Fraction(1, 2)), _h_silu,
                        near=_above(lambda P: 2 * _tail_threshold(P)),
                        tiny=_negligible_below(-1600.0)),
    "mish": _Derivative(_nan_at_infinities, _at_zero(Fraction(3, 5)), _h_mish,
                        near=_above(lambda P: _tail_threshold(P) / 2 + 8),
                        tiny=_negligible_below(-1600.0)),
    "gelu": _Derivative(_nan_at_infinities, _at_zero(Fraction(1, 2)), _h_gelu,
                        near=_above(lambda P: math.sqrt(2 * _tail_threshold(P)) + 1),
                        tiny=_negligible_below(-110.0)),
    "gelu_tanh": _Derivative(_nan_at_infinities, _at_zero(Fraction(1, 2)), _h_gelu_tanh,
                             near=_above(lambda P: max(25.0, _tail_threshold(P) / 1.2)),
                             tiny=_negligible_below(-50.0)),
    "softplus": _Derivative(bind=_softplus_derivative),
    "logit": _Derivative(bind=_logit_derivative),
}


def _asin_special(x, sign):
    """``sign / sqrt(1 - x**2)``: NaN beyond [-1, 1] (and at NaN, ±inf), ``sign * inf`` at
    ±1."""
    if x != x or abs(x) > 1:
        return _NAN
    if abs(x) == 1:
        return sign * _INF
    return None


def _positive(d: _Derivative, x: float, P: int) -> bool:
    """The sign of ``f'(x)``, nonzero at a float ``x`` where it has no exact value: its
    enclosure, refined until it excludes 0."""
    if d.near is not None and d.near(x, P) is not None:
        return True
    if d.tiny is not None and d.tiny(x) is not None:
        return d.tiny(x) > 0
    W = P + _W0
    while W <= _W_MAX:
        lo, hi = d.enclose(_Iv(W), x)
        if lo >= 0 and hi > 0:
            return True
        if hi <= 0 and lo < 0:
            return False
        W *= 2
    raise RuntimeError(  # pragma: no cover - a zero of f' at a float, which none has
        f"exactref could not decide the sign of a derivative at {x!r}; please report it")


def _gradient_scalar(d: _Derivative, g: float, x: float, P: int):
    """``g * f'(x)`` for one element: an exact float, an MPFR value rounded to odd at P bits
    (toward zero with its ternary value), as the compositions give them."""
    if d.mask is not None and d.mask(x):
        return 0.0  # PyTorch's +0, whatever grad is
    sp = d.special(x) if d.special is not None else None
    if g != g:
        return _NAN
    if sp is not None:  # IEEE: g times a special or a signed zero
        gs = g if (g == 0 or math.isinf(g)) else math.copysign(1.0, g)
        with np.errstate(invalid="ignore"):
            return float(np.float64(gs) * np.float64(sp))
    if d.den is not None:
        den = d.den(x)
        if den == 0 or g == 0 or math.isinf(g):
            with np.errstate(invalid="ignore", divide="ignore"):
                return float(np.float64(g) / np.float64(float(den)))
        return _context(P, "Z").div(g, den)
    h = d.exact(x) if d.exact is not None else None
    if g == 0 or math.isinf(g):  # the sign of f'(x) decides
        positive = h > 0 if h is not None else _positive(d, x, P)
        return g * (1.0 if positive else -1.0)
    if h is not None:  # one rounding of the exact product (h may be 3/5: not dyadic)
        return _round_fraction(Fraction(g) * h, P)
    r = d.tiny(x) if d.tiny is not None else None
    if r is not None:
        return _far(r if g > 0 else -r, False)
    r = d.near(x, P) if d.near is not None else None
    if r is not None:  # g (1 + r t): g, and the rest's sign relative to |g| (as _Values read it)
        return _Near(g, r)
    return _ziv(_scaled_iv, (g, x), P, d)


def _scaled_iv(iv, g, x, d):
    return iv.mul(iv.point(g), d.enclose(iv, x))


def gradient(name: str, grad, x, *, bits: int = 53, params=None) -> ExactArray:
    """``grad * f'(x)`` for the function ``name`` (see :data:`DERIVATIVES`; ``params`` those of
    softplus and logit), exact, as an ExactArray that rounds like it into every format of at
    most ``bits`` bits: the gradient of one element, rounded once.

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = gradient("tanh", np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [1.0, 0.8399486832280522]
    >>> ex = gradient("silu", np.array([1.0, 1.0]), np.array([0.0, 1.0]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [0.5, 0.9276705118714867]
    """
    if name not in DERIVATIVES:
        raise ValueError(f"no derivative of {name!r} in the kernel; it has "
                         f"{', '.join(DERIVATIVES)}")
    d = DERIVATIVES[name]
    if d.bind is not None:
        d = d.bind(dict(params or {}))
    g, xv = np.broadcast_arrays(np.asarray(grad, dtype=np.float64),
                                np.asarray(x, dtype=np.float64))
    shape = g.shape
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (g, xv)]
    if flat[0].size == 0:
        return ExactArray.regular(shape, np.zeros(0))
    P = bits + 2
    uniq, inv = _unique_rows(flat)
    results = [_gradient_scalar(d, a, b, P) for a, b in zip(uniq[0].tolist(),
                                                             uniq[1].tolist(), strict=True)]
    return _from_objects(results, P).take(inv).exact(shape)


# ------------------------------------------------------------------ two operands (pow)
# A partial derivative of a function of two operands is summed over the copies broadcasting
# made of its operand. Each copy's term is a float (a special, a zero, or an exact float), a
# Fraction (exact), or a :class:`_Term` (irrational, or exact only at some precision). The sum
# is enclosed at a working precision W that doubles until it decides its round-to-odd value
# (Ziv's strategy, as for one value); terms MPFR finds exact at W join the exact part.

class _Term:
    """A term ``coef * F``: ``coef`` an exact Fraction, ``F`` irrational or exact only at some
    precision, ``factor(iv)`` an interval holding ``F`` at ``iv``'s precision, ``exact(W)``
    ``F`` as a Fraction where MPFR computes it exactly at W bits (else None), ``key`` which
    ``F`` it is: terms of one key are one term, their coefficients summed exactly (so copies
    whose gradients cancel, ``g`` and ``-g`` at one point, cancel exactly)."""

    __slots__ = ("coef", "factor", "exact", "key")

    def __init__(self, coef, factor, exact=None, key=None):
        self.coef, self.factor, self.exact, self.key = coef, factor, exact, key

    def enclose(self, iv):
        g = _g()
        num, den = g.mpz(self.coef.numerator), g.mpz(self.coef.denominator)
        return iv.mul((iv.D.div(num, den), iv.U.div(num, den)), self.factor(iv))


def _merged(terms) -> list:
    """Terms of one key merged (their coefficients summed), zero coefficients dropped."""
    by_key: dict = {}
    for t in terms:
        k = t.key if t.key is not None else id(t)
        if k in by_key:
            by_key[k] = _Term(by_key[k].coef + t.coef, t.factor, t.exact, t.key)
        else:
            by_key[k] = t
    return [t for t in by_key.values() if t.coef != 0]


def _is_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y)


def _c99_pow(x: float, e) -> float:
    """C99's ``pow`` (F.9.4.4) where the base or the exponent is special (a zero, an infinity,
    NaN) or the base is negative and the exponent not an integer: ``e`` is exact (a Fraction,
    or ±inf, NaN); only its sign, integrality and parity count there. (numpy's power departs
    from C99 at ``(-inf)**0.5`` and ``(-0)**0.5``.)"""
    if e == 0 or x == 1:
        return 1.0
    if x != x or e != e:
        return _NAN
    if math.isinf(e):
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (e > 0) else _INF
    odd = e.denominator == 1 and e.numerator % 2 == 1
    if x == 0:
        neg = math.copysign(1.0, x) < 0 and odd
        return (-0.0 if neg else 0.0) if e > 0 else (-_INF if neg else _INF)
    if math.isinf(x):
        neg = x < 0 and odd
        return (-_INF if neg else _INF) if e > 0 else (-0.0 if neg else 0.0)
    return _NAN  # a negative finite base, a non-integer exponent


def _pow_grad_x(g: float, x: float, y: float):
    """``g * y * x**(y - 1)``, PyTorch's ``pow_backward_self``: +0 where ``y == 0``, whatever
    ``g`` is; its formula in IEEE arithmetic where ``x`` or ``y`` is special, or ``x < 0`` with
    ``y`` not an integer (NaN)."""
    if y == 0:
        return 0.0
    if g != g:
        return _NAN
    regular = math.isfinite(x) and math.isfinite(y) and x != 0 and (x > 0 or _is_integer(y))
    if not regular:  # y - 1 exact: (-0)**(y - 1) for y = 2**-30 is +inf, not -inf
        p = _c99_pow(x, Fraction(y) - 1 if math.isfinite(y) else y)
        with np.errstate(all="ignore"):
            return float(np.float64(g) * (np.float64(y) * np.float64(p)))
    negative = (y < 0) != (x < 0 and _is_integer(y) and (abs(y) >= 2.0**53 or int(y) % 2 == 0))
    if g == 0 or math.isinf(g):
        return g * (-1.0 if negative else 1.0)
    ym1 = _context(2200, "Z").sub(y, 1)  # exact
    one_minus_y = _context(2200, "Z").sub(1, y)

    def factor(iv):
        return (iv.D.pow(x, ym1), iv.U.pow(x, ym1))

    def exact(W):
        """``x**(y-1)`` is rational only as a dyadic or the reciprocal of one (``9**-0.5 =
        1/3``): MPFR computes one of them exactly at W bits, or W is too small yet."""
        gm, Z = _g(), _context(W, "Z")
        for k in (1, -1):
            p = Z.pow(x, ym1 if k == 1 else one_minus_y)
            if p.rc == 0 and not gm.is_zero(p) and gm.is_finite(p):
                return Fraction(*p.as_integer_ratio()) ** k
        return None

    return _Term(Fraction(g) * Fraction(y), factor, exact, ("x", x, y))


def _pow_grad_y(g: float, x: float, y: float):
    """``g * x**y * log(x)``, PyTorch's ``pow_backward_exponent``: ``g * 0`` where ``x == 0``
    and ``y >= 0``; its formula in IEEE arithmetic where ``x`` or ``y`` is special, ``x <= 0``
    (NaN below 0) or ``x == 1`` (``g * 0``). Elsewhere irrational (``log(x)`` is
    transcendental and ``x**y`` algebraic)."""
    if g != g:
        return _NAN
    regular = math.isfinite(x) and math.isfinite(y) and x > 0 and x != 1
    if not regular:
        with np.errstate(all="ignore"):
            X = np.float64(x)
            h = np.float64(0.0) if (x == 0 and y >= 0) else np.float64(
                _c99_pow(x, Fraction(y) if math.isfinite(y) else y)) * np.log(X)
            return float(np.float64(g) * h)
    if g == 0 or math.isinf(g):
        return g * (1.0 if x > 1 else -1.0)

    def factor(iv):
        return iv.mul((iv.D.pow(x, y), iv.U.pow(x, y)), iv.inc("log", iv.point(x)))

    return _Term(Fraction(g), factor, None, ("y", x, y))


#: The partial derivatives of the functions of two operands, by operand name.
PARTIALS = {"pow": {"x": _pow_grad_x, "y": _pow_grad_y}}

_SUM_ZERO = object()  # an exact zero whose sign is IEEE's sum rule (zsign 0)


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


def _sum_terms(terms, P: int, single: bool):
    """The sum of one element's terms (IEEE's rules for NaN and infinities; an exact zero is
    the term's own where ``single``, else +0 when every term is +0 and IEEE's sum rule
    otherwise, as a sum that starts from +0), as :func:`_from_objects` takes values."""
    floats = [t for t in terms if isinstance(t, float)]
    if any(t != t for t in floats):
        return _NAN
    pinf, ninf = _INF in floats, -_INF in floats
    if pinf or ninf:
        return _NAN if (pinf and ninf) else (_INF if pinf else -_INF)
    exact = sum((Fraction(t) for t in floats if t != 0), Fraction(0))
    exact += sum((t for t in terms if isinstance(t, Fraction)), Fraction(0))
    irr = _merged([t for t in terms if isinstance(t, _Term)])
    W = P + _W0
    while W <= _W_MAX:
        rest = []
        for t in irr:
            e = t.exact(W) if t.exact is not None else None
            if e is None:
                rest.append(t)
            else:
                exact += t.coef * e
        irr = rest
        if not irr:
            if exact != 0:
                return _round_fraction(exact, P)
            if single and len(terms) == 1 and isinstance(terms[0], float):
                return terms[0]
            plus = all(isinstance(t, float) and math.copysign(1.0, t) > 0 for t in terms)
            return 0.0 if plus else _SUM_ZERO
        iv = _Iv(W)
        num, den = _g().mpz(exact.numerator), _g().mpz(exact.denominator)
        lo, hi = iv.D.div(num, den), iv.U.div(num, den)
        for t in irr:
            a, b = t.enclose(iv)
            lo, hi = iv.D.add(lo, a), iv.U.add(hi, b)
        if (len(irr) == 1 and exact == 0) or lo > 0 or hi < 0:  # a nonzero sum
            got = _decide(lo, hi, P)
            if got is not None:
                return got
        W *= 2
    raise RuntimeError(
        "exactref could not decide the rounding of a sum of gradient terms with "
        f"{_W_MAX} bits: their irrational parts cancel exactly, which exactref does not "
        "detect; please report it (a broadcast operand with fewer copies avoids it)")


def partial(name: str, wrt: str, grad, x, y, *, bits: int = 53, copies=None,
            single: bool = True) -> ExactArray:
    """The partial derivative of the function ``name`` of two operands (:data:`PARTIALS`)
    with respect to operand ``wrt``, times ``grad``, at flat arrays of the output's size,
    summed over ``copies`` (an index array (operand size, K) of the output positions of each
    operand element; None: one copy each, in order), exact, as an ExactArray that rounds like
    the sum into every format of at most ``bits`` bits. ``single``: the operand has the
    output's dimensions (a lone term keeps its sign of zero).

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = partial("pow", "x", np.ones(2), np.array([2.0, 4.0]), np.array([3.0, 0.5]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [12.0, 0.25]
    """
    term_of = PARTIALS[name][wrt]
    flat = [np.asarray(a, dtype=np.float64).reshape(-1) for a in (grad, x, y)]
    n = flat[0].size
    if copies is None:
        copies = np.arange(n).reshape(n, 1)
    size, k = copies.shape
    P = bits + 2
    if n == 0 or size == 0 or k == 0:  # no copies: the empty sum, +0
        return ExactArray.zeros((size,))
    uniq, inv = _unique_rows(flat)
    terms_u = [term_of(a, b, c) for a, b, c in zip(*(u.tolist() for u in uniq), strict=True)]
    if k == 1:
        results = [_sum_terms([t], P, single) for t in terms_u]
        idx = inv[copies[:, 0]]
    else:
        results = [_sum_terms([terms_u[j] for j in inv[row].tolist()], P, single)
                   for row in copies]
        idx = np.arange(size)
    sum_zero = np.array([r is _SUM_ZERO for r in results], dtype=bool)
    values = _from_objects([0.0 if r is _SUM_ZERO else r for r in results], P)
    values.zsign[sum_zero] = 0
    return values.take(idx).exact((size,))


# ==================================================================== over processes
def _parallel_values(fn: RealFunction, args, P: int, params) -> _Values:
    """:func:`_evaluate_values`, in this process unless the user asked for worker processes
    (:mod:`._workers`: ``set_workers``, ``with workers(...)``, ``EXACTREF_WORKERS``); then in
    chunks over them when there are at least :data:`PARALLEL_MIN` inputs, bit for bit the
    same values."""
    return _workers.shared(fn.name, args, P, params)


# ========================================================================== tables
def cache_dir() -> str:
    """The directory of exactref's cached function tables: ``EXACTREF_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/exactref``, else ``~/.cache/exactref``."""
    env = os.environ.get("EXACTREF_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "exactref")


def _version() -> str:
    from .. import __version__

    return f"{__version__}-layout{TABLE_LAYOUT}"


def table_formats() -> tuple:
    """The formats answered from tables: every float format of at most 16 bits with a numpy
    dtype (the P3109 formats, held as float64, are evaluated)."""
    from .._formats import FORMATS

    return tuple(f for f in FORMATS.values() if f.kind == "float" and f.bits <= 16
                 and f.encoding == "native")


def _patterns(fmt):
    """Every bit pattern of ``fmt``'s storage (uint8 or uint16) and its value (float64)."""
    raw_t = np.uint16 if fmt.np_dtype.itemsize == 2 else np.uint8
    raw = np.arange(1 << (8 * fmt.np_dtype.itemsize), dtype=np.int64).astype(raw_t)
    with np.errstate(invalid="ignore", over="ignore"):
        return raw, raw.view(fmt.np_dtype).astype(np.float64)


@dataclass
class FunctionTable:
    """The round-to-odd values at 55 bits of one function at every bit pattern of a format:
    ``values`` (per pattern), the ``key`` (function and parameters) and the format."""

    key: str
    fmt: object
    values: _Values

    def lookup(self, patterns) -> _Values:
        return self.values.take(patterns.astype(np.int64))

    def exact(self) -> ExactArray:
        """Every pattern's value as an ExactArray (pattern order)."""
        return self.values.exact((self.values.mant.size,))


_TABLES: dict = {}
_LOCK = threading.Lock()


def function_table(name: str, fmt, params=None, *, disk: bool | None = None) -> FunctionTable:
    """The table of ``name`` over every bit pattern of ``fmt`` (a float format of at most 16
    bits): from memory, else the cache directory, else built (and saved there). ``disk``: read
    and write the cache directory (default: for functions without parameters, or with their
    default ones; a table of other parameters is kept in memory only)."""
    from .._formats import dtype as resolve

    fn = _function(name)
    fmt = resolve(fmt)
    if fmt.kind != "float" or fmt.bits > 16:
        raise ValueError(f"tables are built for float formats of at most 16 bits, not "
                         f"{fmt.name}")
    if fn.arity != 1:
        raise ValueError(f"{name} takes two operands: it has no table")
    params = _check_params(fn, params)
    key = fn.key(params)
    with _LOCK:
        hit = _TABLES.get((key, fmt.name))
    if hit is not None:
        return hit
    if disk is None:
        disk = not params or params == {"beta": 1.0, "threshold": 20.0}
    table = _load(key, fmt) if disk else None
    if table is None:
        raw, x = _patterns(fmt)
        uniq, inv = _unique_rows([x])
        values = _parallel_values(fn, uniq, TABLE_PRECISION, params).take(inv)
        table = FunctionTable(key, fmt, values)
        if disk:
            _save(table)
    with _LOCK:
        _TABLES[(key, fmt.name)] = table
    return table


def _path(key: str, fmt) -> str:
    safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in key)
    return os.path.join(cache_dir(), "functions", _version(), f"{safe}.{fmt.name}.npz")


def _load(key: str, fmt) -> FunctionTable | None:
    path = _path(key, fmt)
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["version"]) != _version() or str(z["key"]) != key or \
                    str(z["format"]) != fmt.name:
                return None
            v = _Values(z["mant"], z["e"].astype(np.int64), z["r"], z["special"], z["zero"],
                        z["zsign"], int(z["L"]))
    except (OSError, KeyError, ValueError):
        return None  # missing, unreadable or from another layout: rebuilt
    if v.mant.size != 1 << (8 * fmt.np_dtype.itemsize):
        return None
    return FunctionTable(key, fmt, v)


def _save(table: FunctionTable) -> None:
    """Write atomically (a temporary file renamed), so concurrent writers never leave a torn
    file; a cache directory that cannot be written is skipped silently."""
    path = _path(table.key, table.fmt)
    v = table.values
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, version=_version(), key=table.key, format=table.fmt.name,
                                mant=v.mant, e=v.e.astype(np.int32), r=v.r,
                                special=v.special, zero=v.zero, zsign=v.zsign, L=v.L)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _lookup(fn: RealFunction, params, fmt, x) -> _Values | None:
    """Values of ``fn`` at ``x`` (float64 values of ``fmt``) from the table, or None where
    some value is not one of the format's (then the caller evaluates)."""
    raw_t = np.uint16 if fmt.np_dtype.itemsize == 2 else np.uint8
    with np.errstate(invalid="ignore", over="ignore"):
        stored = x.astype(fmt.np_dtype)
        back = stored.astype(np.float64)
    same = (back == x) & (np.signbit(back) == np.signbit(x)) | (np.isnan(back) & np.isnan(x))
    if not same.all():
        return None
    table = function_table(fn.name, fmt, params)
    return table.lookup(stored.view(raw_t))
