"""The exact engine: exact sums of products, held per element, rounded once.

Every operation of exactref is written as a sum of K terms, each a product of operands:
multiply is one term ``x * y``, add the two terms ``x * 1 + y * alpha``, a complex product two
two-term sums, a gradient a sum over broadcast copies. :func:`sum_of_products` computes that sum
exactly for every element and returns an :class:`ExactArray`, which :meth:`ExactArray.round`
rounds once into any format.

How the fast path stays exact
-----------------------------
* Each operand is an :class:`ExactPart`: float64 components ``m * 2**e`` (one for most formats,
  two for int64 and uint64, as many as needed for a long Python int or Fraction), kept as
  separate significands and integer exponents, so nothing overflows or underflows.
* A product of components is split into two float64 pieces with Dekker's TwoProduct, exactly.
* Per element, the pieces are scaled by the largest exponent; an element whose nonzero pieces
  lie more than 1000 binades apart is flagged for the slow path (its small pieces would underflow).
* The pieces are distilled with cascades of TwoSum (error-free, so the exact sum never
  changes) until the leading piece ``c1``, the next ``c2`` and the sign of the rest are settled,
  which is all that rounding needs. Elements whose rest cannot be settled by a rigorous error
  bound go to the slow path.
* The slow path (:mod:`._scalar`, Python Fractions) computes flagged elements from the operands'
  exact values. It is also the in-tree oracle the tests use.

IEEE special values follow from a float64 shadow computation on signs: each operand's element is
replaced by ``±1`` (finite, nonzero), ``±0``, ``±inf`` or NaN, and products and sums of these give
NaN for ``0 * inf`` and ``inf - inf``, the sign of an infinity, and the sign of a zero product.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._round import fast_eligible, odd_fold, round_float64, round_regular
from ._rounding import Rounding
from ._scalar import NAN, round_scalar, round_to_integer
from ._specials import integer_overflow, special_values, zero_values

__all__ = ["ExactPart", "ExactArray", "sum_of_products", "term_fraction", "two_sum", "two_product"]

_SPLITTER = float(2**27 + 1)
_GAP_LIMIT = 1000  # binades between pieces beyond which an element takes the slow path


# ------------------------------------------------------------------------ error-free transforms
def two_sum(a, b):
    """``s + e == a + b`` exactly, ``s = fl(a + b)`` (Knuth's TwoSum; no branches)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a):
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_product(a, b):
    """``p + e == a * b`` exactly for significands in a safe range (Dekker's TwoProduct)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


# ------------------------------------------------------------------------------ operands
def _fraction_components(v: Fraction):
    """Split a dyadic rational into float64 components ``[(m, e), ...]`` with ``v == sum m*2**e``."""
    if v == 0:
        return [(0.0, 0)]
    den = v.denominator
    if den & (den - 1):
        raise ValueError(
            f"{v} is not a binary fraction: its denominator {den} is not a power of two, so no "
            f"binary format holds it exactly; round it first (for example with float())"
        )
    k = den.bit_length() - 1
    sign = -1 if v < 0 else 1
    n = abs(v.numerator)
    comps = []
    while n:
        shift = max(n.bit_length() - 53, 0)
        chunk = n >> shift
        n -= chunk << shift
        m, e = np.frexp(float(chunk))  # chunk < 2**53: exact
        comps.append((sign * float(m), int(e) + shift - k))
    return comps


class ExactPart:
    """One exact part (real or imaginary) of an operand of the engine, broadcastable to the
    output shape (the engine's view of an operand; :class:`exactref._operands.Opnd` is the ops'
    view, :class:`exactref.promotion.Operand` the promotion's).

    ``comps`` is a list of ``(m, e)`` pairs of arrays (or scalars) whose finite value is
    ``sum(m * 2**e)``; ``shadow`` is the float64 sign shadow (±1, ±0, ±inf, NaN); ``f64`` holds
    the values themselves where one float64 holds every element exactly (else None). For float64
    data the components and shadow are derived on first use: the fast lane needs only ``f64``.
    """

    ints = None  # the integer values, where the operand came from integers
    in_range = False  # every finite nonzero value within 2**±450 (see from_float64)

    def __init__(self, comps, shadow, f64=None):
        self._comps = comps
        self._shadow = shadow
        self.f64 = f64

    @property
    def comps(self):
        if self._comps is None:
            x = self.f64
            m, e = np.frexp(np.where(np.isfinite(x), x, 0.0))
            self._comps = [(m, e.astype(np.int64))]
        return self._comps

    @property
    def shadow(self):
        if self._shadow is None:
            x = self.f64
            self._shadow = np.where(np.isfinite(x), np.where(x == 0, x, np.sign(x)), x)
        return self._shadow

    @classmethod
    def from_float64(cls, x, *, in_range: bool = False) -> ExactPart:
        """Float64 values. ``in_range``: every finite nonzero value is known to lie within
        2**±450 (true of every format narrower than float64), which spares the fast lane its
        range check."""
        op = cls(None, None, np.asarray(x, dtype=np.float64))
        op.in_range = in_range
        return op

    @classmethod
    def from_integers(cls, x) -> ExactPart:
        """An integer array of any width (int64 and uint64 take two components)."""
        x = np.asarray(x)
        if x.dtype.itemsize < 8 or x.dtype.kind == "b":
            op = cls.from_float64(x.astype(np.float64))
            op.ints = x
            return op
        # np.asarray: a 0-d object array's operations give Python ints
        hi = np.asarray(x >> 32).astype(np.float64)
        lo = np.asarray(x & np.array(0xFFFFFFFF, dtype=x.dtype)).astype(np.float64)
        mh, eh = np.frexp(hi)
        ml, el = np.frexp(lo)
        shadow = np.asarray(np.sign(x)).astype(np.float64)
        op = cls([(mh, eh.astype(np.int64) + 32), (ml, el.astype(np.int64))], shadow)
        op.ints = x
        return op

    @classmethod
    def from_scalar(cls, v) -> ExactPart:
        """A Python int or float, a dyadic Fraction, or a special float (inf, NaN)."""
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf")) or v == 0):
            return cls([(np.float64(0.0), np.int64(0))], np.float64(v), np.float64(v))
        frac = Fraction(v)
        if frac.denominator == 1 and not isinstance(v, float):
            op = cls._from_fraction(frac)
            op.ints = int(frac)
            return op
        return cls._from_fraction(frac)

    @classmethod
    def _from_fraction(cls, frac: Fraction) -> ExactPart:
        if frac == 0:
            return cls([(np.float64(0.0), np.int64(0))], np.float64(0.0), np.float64(0.0))
        comps = [(np.float64(m), np.int64(e)) for m, e in _fraction_components(frac)]
        f64 = None
        if len(comps) == 1 and abs(frac) < 2.0**1000 and abs(frac) > 2.0**-1000:
            f64 = np.float64(frac)  # exact: one component in float64's normal range
        op = cls(comps, np.float64(1.0 if frac > 0 else -1.0), f64)
        op.in_range = 2.0**-450 <= abs(frac) <= 2.0**450
        return op

    def broadcast(self, shape) -> ExactPart:
        """This operand broadcast to ``shape`` and flattened."""
        n = int(np.prod(shape, dtype=np.int64))

        def flat(a):
            return np.broadcast_to(a, shape).reshape(n)

        if self._comps is None:  # derived lazily from f64
            out = ExactPart(None, None, flat(self.f64))
            out.in_range = self.in_range
        else:
            comps = [(flat(m), flat(e)) for m, e in self.comps]
            f64 = flat(self.f64) if self.f64 is not None else None
            out = ExactPart(comps, flat(self.shadow), f64)
        if self.ints is not None:
            out.ints = flat(self.ints) if isinstance(self.ints, np.ndarray) else self.ints
        return out

    def take(self, idx) -> ExactPart:
        """The elements ``idx`` of a flattened operand."""
        if self._comps is None:
            out = ExactPart(None, None, self.f64[idx])
            out.in_range = self.in_range
        else:
            comps = [(m[idx], e[idx]) for m, e in self.comps]
            f64 = self.f64[idx] if self.f64 is not None else None
            out = ExactPart(comps, self.shadow[idx], f64)
        if self.ints is not None:
            out.ints = self.ints[idx] if isinstance(self.ints, np.ndarray) else self.ints
        return out

    def exact(self, i: int) -> Fraction:
        """The exact value of finite element ``i`` of a flattened operand."""
        return sum((Fraction(float(m[i])) * Fraction(2) ** int(e[i]) for m, e in self.comps),
                   Fraction(0))


# ---------------------------------------------------------------------------- exact arrays
class ExactArray:
    """Exact values per element, in the form rounding consumes.

    Regular elements hold ``(c1 + c2 + r) * 2**E`` (see :mod:`._round`). ``special`` holds NaN or
    ±inf where the exact result is not finite (0 elsewhere); ``zero`` marks exact zeros, whose
    sign is ``zsign``: -1 (negative in every mode), +1 (positive in every mode) or 0 (IEEE's
    sum rule: -0 when rounding toward negative, +0 otherwise). ``hard`` maps flat indices of
    elements computed by the slow path to their exact Fractions.
    """

    def __init__(self, shape, *, c1, c2, r, E, special, zero, zsign, hard):
        self.shape = tuple(shape)
        self.c1, self.c2, self.r, self.E = c1, c2, r, E
        self.special, self.zero, self.zsign = special, zero, zsign
        self.hard = hard

    # --------------------------------------------------------------------- constructors
    @classmethod
    def empty(cls, shape) -> ExactArray:
        """Uninitialised storage for a kernel that writes every element (E = 0, no hard
        elements, zsign +1)."""
        n = int(np.prod(shape, dtype=np.int64))
        return cls(shape, c1=np.empty(n), c2=np.empty(n), r=np.empty(n, np.int8),
                   E=np.zeros(n, np.int64), special=np.empty(n), zero=np.empty(n, bool),
                   zsign=np.ones(n, np.int8), hard={})

    @classmethod
    def regular(cls, shape, c1, c2=None, r=None, E=None, *, zero=None, zsign=None,
                special=None, hard=None) -> ExactArray:
        """Values ``(c1 + c2 + r) * 2**E`` (1-D arrays of the flat size): ``c2``, ``r`` and
        ``E`` default to 0; ``zero`` marks exact zeros (signs ``zsign``, default +1),
        ``special`` NaN/±inf elements, ``hard`` ``{flat index: Fraction}``."""
        n = int(np.prod(shape, dtype=np.int64))
        c1 = np.asarray(c1, dtype=np.float64).reshape(n)

        def arr(v, dt, fill=0):
            return np.full(n, fill, dt) if v is None else np.asarray(v, dtype=dt).reshape(n)

        return cls(shape, c1=c1, c2=arr(c2, np.float64), r=arr(r, np.int8), E=arr(E, np.int64),
                   special=arr(special, np.float64), zero=arr(zero, bool),
                   zsign=arr(zsign, np.int8, 1), hard=dict(hard or {}))

    @classmethod
    def zeros(cls, shape, zsign: int = 1) -> ExactArray:
        """Exact zeros: ``zsign`` +1 (+0 in every mode), -1 (-0) or 0 (IEEE's sum rule)."""
        n = int(np.prod(shape, dtype=np.int64))
        return cls.regular(shape, np.zeros(n), zero=np.ones(n, bool),
                           zsign=np.full(n, zsign, np.int8))

    @classmethod
    def of_values(cls, shape, values, negzero=None) -> ExactArray:
        """Per-element exact values (slow): Fractions, ±inf floats or :data:`NAN`;
        ``negzero[i]`` is the sign of a zero element (default +0)."""
        n = len(values)
        special = np.zeros(n)
        zero = np.zeros(n, dtype=bool)
        zsign = np.ones(n, dtype=np.int8)
        hard = {}
        for i, v in enumerate(values):
            if v is NAN:
                special[i] = np.nan
            elif isinstance(v, float):
                special[i] = v
            elif v == 0:
                zero[i] = True
                zsign[i] = -1 if negzero is not None and negzero[i] else 1
            else:
                hard[i] = Fraction(v)
        return cls.regular(shape, np.zeros(n), special=special, zero=zero, zsign=zsign,
                           hard=hard)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def put(self, mask, other: ExactArray) -> ExactArray:
        """Elements where ``mask`` (flat, boolean) taken from ``other`` (same size), in place."""
        mask = np.asarray(mask, dtype=bool).reshape(-1)
        for name in ("c1", "c2", "r", "E", "special", "zero", "zsign"):
            getattr(self, name)[mask] = getattr(other, name)[mask]
        self.hard = {i: v for i, v in self.hard.items() if not mask[i]}
        self.hard.update({i: v for i, v in other.hard.items() if mask[i]})
        return self

    def negative_zero(self, mode: Rounding):
        """Where an exact zero element is negative under ``mode``."""
        neg = self.zsign < 0
        if mode is Rounding.TOWARD_NEGATIVE:
            neg = neg | (self.zsign == 0)
        return neg & self.zero

    def element(self, i):
        """Element ``i`` as a Fraction, ``±inf`` float or NaN marker (slow).

        A regular element with a sticky remainder is represented by a value a quarter of
        ``ulp(c2)`` from ``c1 + c2`` on the remainder's side: it rounds like the exact value into
        every format, but it is not the exact value.
        """
        if i in self.hard:
            return self.hard[i]
        s = self.special[i]
        if s != 0 or s != s:
            return NAN if s != s else float(s)
        if self.zero[i]:
            return Fraction(0)
        c1, c2, r = float(self.c1[i]), float(self.c2[i]), int(self.r[i])
        v = Fraction(c1) + Fraction(c2)
        if r:
            v += r * Fraction(float(np.spacing(abs(c2)))) / 4
        return v * Fraction(2) ** int(self.E[i])

    # ------------------------------------------------------------------------- rounding
    def round(self, fmt, mode: Rounding, rule: str):
        """Round every element once into float or integer format ``fmt`` (not complex).

        Returns ``(values, inexact, overflow, underflow)``: ``values`` is float64 for float
        formats (the format's values) and an object or int array for integer formats. An exact
        NaN is NaN in every float format: in one without NaN (float6, float4) it marks an
        undefined element, which the Result reports (``_specials.undefined``), not an error.

        >>> from exactref._formats import FORMATS
        >>> ex = ExactArray.of_values((3,), [Fraction(1, 3), NAN, Fraction(-7)])
        >>> ex.round(FORMATS["float4_e2m1fn"], Rounding.NEAREST_EVEN, "saturate")[0].tolist()
        [0.5, nan, -6.0]
        """
        if fmt.is_integer:
            return self._round_integer(fmt, mode, rule)
        if fast_eligible(fmt) and not self.hard:
            return round_float64(self.as_odd_float64(mode), fmt, mode, rule)
        n = self.size
        values = np.zeros(n, dtype=np.float64)
        inexact = np.zeros(n, dtype=bool)
        overflow = np.zeros(n, dtype=bool)
        underflow = np.zeros(n, dtype=bool)
        regular = ~self.zero & (self.special == 0)
        if self.hard:
            hard_idx = np.fromiter(self.hard.keys(), dtype=np.int64, count=len(self.hard))
            regular[hard_idx] = False
        idx = np.flatnonzero(regular)
        if idx.size:
            v, ine, ov, un = round_regular(self.c1[idx], self.c2[idx], self.r[idx], self.E[idx],
                                           fmt, mode, rule)
            values[idx], inexact[idx], overflow[idx], underflow[idx] = v, ine, ov, un
        zero = self.zero
        if zero.any():
            values = np.where(zero, zero_values(self.negative_zero(mode), fmt), values)
        sp = np.flatnonzero(self.special != 0)  # NaN != 0 too
        if sp.size:
            values[sp] = special_values(self.special[sp], fmt, rule)
        for i, v in self.hard.items():
            values[i], inexact[i], overflow[i], underflow[i] = round_scalar(v, False, fmt, mode,
                                                                            rule)
        return values, inexact, overflow, underflow

    def as_odd_float64(self, mode: Rounding):
        # special and zero elements hold placeholders (NaN from inf * 0, say) until
        # _merge_specials puts their values in place: no warning is due for them
        with np.errstate(invalid="ignore", over="ignore", under="ignore"):
            return self._as_odd_float64(mode)

    def _as_odd_float64(self, mode: Rounding):
        """Every element as one float64 that rounds like the exact value into formats of at most
        51 bits: the value rounded to odd, with specials and signed zeros in place. Values beyond
        float64's normal range become ±2**±1000, which round as they do into those formats.
        """
        if not self.E.any():
            if self.c2.any() or self.r.any():  # a sticky rest alone is inexact too
                c1, c2 = two_sum(self.c1, self.c2)  # |c2| at most half the gap next to c1
                x = odd_fold(c1, c2, self.r)
            else:
                x = self.c1.copy()
            return self._merge_specials(x, mode)
        c1, c2 = two_sum(self.c1, self.c2)
        with np.errstate(over="ignore", under="ignore"):
            ro = odd_fold(c1, c2, self.r)
            _, ex = np.frexp(ro)
            total = ex + self.E
            scaled = np.ldexp(ro, np.clip(self.E, -2000, 2000).astype(np.int32))
        hi, lo = total > 1020, total < -1000
        if hi.any() or lo.any():
            sign = np.where(np.signbit(ro), -1.0, 1.0)
            scaled = np.where(hi, sign * 2.0**1000, np.where(lo, sign * 2.0**-1000, scaled))
        return self._merge_specials(scaled, mode)

    def _merge_specials(self, x, mode):
        """``x`` with exact zeros (signed for ``mode``) and specials put in place."""
        if self.zero.any():
            x = np.where(self.zero, np.where(self.negative_zero(mode), -0.0, 0.0), x)
        special = self.special != 0
        special |= np.isnan(self.special)
        if special.any():
            x = np.where(special, self.special, x)
        return x

    def _round_integer(self, fmt, mode, rule):
        n = self.size
        out = np.zeros(n, dtype=fmt.np_dtype)
        inexact = np.zeros(n, dtype=bool)
        overflow = np.zeros(n, dtype=bool)
        first_bad = None  # overflow="error" names the first offending element
        if fmt.kind == "bool":  # every nonzero value is True (NaN and infinities included)
            return ~self.zero, inexact, overflow, np.zeros(n, dtype=bool)
        slow = ~self.zero
        fast = slow & (self.special == 0) & (self.c2 == 0) & (self.r == 0)
        if self.hard:
            fast[np.fromiter(self.hard, dtype=np.int64, count=len(self.hard))] = False
        _, ev = np.frexp(self.c1)
        fast &= (ev + self.E) < 62
        idx = np.flatnonzero(fast)
        if idx.size:
            a = np.ldexp(self.c1[idx], np.maximum(self.E[idx], -1100).astype(np.int32))
            k, ine = _round_float_to_integer(a, mode)
            inexact[idx] = ine
            lo, hi = fmt.int_min, fmt.int_max
            big = (k < lo) | (k > hi)
            if big.any():
                overflow[idx] = big
                if rule == "error":
                    first_bad = int(idx[np.flatnonzero(big)[0]])
                if rule == "saturate":
                    k = integer_overflow(k, fmt, "saturate")
                elif fmt.bits < 64:
                    k = integer_overflow(k, fmt, "wrap")
            if fmt.name == "uint64":
                out[idx] = k.astype(np.uint64)  # two's complement: the wrap of a negative
            else:
                out[idx] = k
            slow[idx] = False
        for i in np.flatnonzero(slow):
            i = int(i)
            v = self.element(i)
            if fmt.kind == "bool":
                out[i] = bool(v != 0) if v is not NAN else True
                continue
            if v is NAN or isinstance(v, float):
                what = "NaN" if v is NAN else "an infinity"
                if v is NAN or rule != "saturate":
                    where = tuple(int(w) for w in np.unravel_index(i, self.shape))
                    raise ValueError(
                        f"element {where} is {what}, which {fmt.name} cannot hold; replace it "
                        f"first (for example with numpy.nan_to_num) or pass overflow='saturate' "
                        f"for infinities")
                out[i] = fmt.int_min if v < 0 else fmt.int_max
                overflow[i] = True
                continue
            k = round_to_integer(v, mode)
            inexact[i] = k != v
            if fmt.int_min <= k <= fmt.int_max:
                out[i] = k
                continue
            overflow[i] = True
            if rule == "error":
                if first_bad is None or i < first_bad:
                    first_bad = i
                continue
            if rule != "saturate" and self.r[i] and abs(v) >= 2**100 and i not in self.hard:
                raise OverflowError(
                    f"element {i} is about {float(v):g}: too large to wrap exactly into "
                    f"{fmt.name}; pass overflow='saturate' or 'error'")
            out[i] = integer_overflow(k, fmt, rule)  # wrap: two's complement
        if first_bad is not None:
            self._raise_int_overflow(first_bad, self.element(first_bad), fmt)
        return out, inexact, overflow, np.zeros(n, dtype=bool)

    def _raise_int_overflow(self, i, v, fmt):
        where = tuple(int(w) for w in np.unravel_index(i, self.shape))
        raise OverflowError(
            f"element {where} is {v} (exactly), outside {fmt.name}'s range "
            f"[{fmt.int_min}, {fmt.int_max}]; pass overflow='wrap' or 'saturate', or choose a "
            f"wider format")


def _round_float_to_integer(a, mode: Rounding):
    """Integers (int64) nearest ``a`` (float64, |a| < 2**62) under ``mode``, and inexactness."""
    t = np.trunc(a)
    frac = a - t  # exact
    away = np.sign(a)
    if mode is Rounding.NEAREST_EVEN:
        k = np.rint(a)
    elif mode is Rounding.NEAREST_AWAY:
        k = t + away * (np.abs(frac) >= 0.5)
    elif mode is Rounding.TOWARD_ZERO:
        k = t
    elif mode is Rounding.TOWARD_POSITIVE:
        k = np.ceil(a)
    elif mode is Rounding.TOWARD_NEGATIVE:
        k = np.floor(a)
    else:  # ODD
        k = t + away * ((frac != 0) & (np.fmod(t, 2) == 0))
    return k.astype(np.int64), frac != 0


# ------------------------------------------------------------------------- sums of products
def _product_pieces(factors):
    """Pieces ``(val, exp)`` whose sum is the exact product of the factors' components."""
    pieces = [(m, e) for m, e in factors[0].comps]
    for f in factors[1:]:
        new = []
        for pm, pe in pieces:
            for m, e in f.comps:
                p, q = two_product(pm, m)
                new.append((p, pe + e))
                new.append((q, pe + e))
        # renormalize significands so later products stay in range
        pieces = []
        for v, e in new:
            mm, ee = np.frexp(v)
            pieces.append((mm, e + ee))
    return pieces


def _distill(P, passes):
    """Cascades of TwoSum over the rows of ``P``; the last row ends up as the float sum."""
    for _ in range(passes):
        for i in range(1, P.shape[0]):
            P[i], P[i - 1] = two_sum(P[i - 1], P[i])
    return P


def _leading(P):
    """``(c1, c2, r, ok)`` from pieces ``P`` (rows; the exact sum is their sum)."""
    n = P.shape[0]
    if n == 1:
        z = np.zeros_like(P[0])
        return P[0].copy(), z, np.zeros(P.shape[1], dtype=np.int8), np.ones(P.shape[1], bool)
    if n == 2:
        s, e = two_sum(P[0], P[1])
        return s, e, np.zeros(P.shape[1], dtype=np.int8), np.ones(P.shape[1], bool)
    _distill(P, 2)
    c1 = P[-1]
    _distill(P[:-1], 2)
    c2 = P[-2]
    tail = P[:-2]
    t = tail.sum(axis=0)
    nonzero = (tail != 0).sum(axis=0)
    # the float sum of k nonzero terms is within (k - 1) 2**-52 sum|terms|: exact for k = 1
    bound = (np.maximum(nonzero - 1, 0) * 2.0**-52) * np.abs(tail).sum(axis=0)
    tail_zero = nonzero == 0
    sp1 = np.spacing(np.abs(c1))
    sp2 = np.spacing(np.abs(c2))
    settled = (np.abs(t) > bound) & (c2 != 0) & (np.abs(t) + bound <= sp2 / 2)
    ok = ((c1 != 0) & (np.abs(c2) <= 2 * sp1) & (tail_zero | settled)) | (
        (c1 == 0) & (c2 == 0) & tail_zero)
    r = np.where(tail_zero, 0, np.sign(t)).astype(np.int8)
    return c1, c2, r, ok


def sum_of_products(terms, shape) -> ExactArray:
    """The exact value of ``sum(prod(term))`` per element of ``shape``.

    ``terms`` is a list of tuples of :class:`ExactPart` (each broadcastable to ``shape``); a term
    with one operand is that operand. Returns an :class:`ExactArray` of ``shape``.

    >>> import numpy as np
    >>> x = ExactPart.from_float64(np.array([1.0, 1e300, -0.0]))
    >>> y = ExactPart.from_float64(np.array([2.0**-60, -1e-300, -0.0]))
    >>> ex = sum_of_products([(x,), (y,)], (3,))
    >>> ex.element(0) == 1 + Fraction(1, 2**60), ex.element(1) == Fraction(1e300) - Fraction(1e-300)
    (True, True)
    >>> int(ex.zsign[2])  # -0 + -0 is -0 in every mode
    -1
    """
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    terms = [tuple(t) if isinstance(t, (tuple, list)) else (t,) for t in terms]
    flat_terms = [tuple(op.broadcast(shape) for op in t) for t in terms]
    if all(op.ints is not None for t in flat_terms for op in t):
        return _integer_sum(flat_terms, shape, n)
    fast = all(op.f64 is not None for t in flat_terms for op in t) and all(
        len(t) <= 2 for t in flat_terms)
    # the fast lane writes every element; the general lane only its own
    ex = ExactArray.empty(shape) if fast else ExactArray.regular(shape, np.zeros(n))
    if fast:
        rest = []
        for start in range(0, n, _BLOCK):
            idx = slice(start, min(start + _BLOCK, n))
            rest.append(_fast_lane(flat_terms, idx, ex) + start)
        rest = np.concatenate(rest) if rest else np.zeros(0, np.int64)
    else:
        rest = np.arange(n)
    if rest.size:
        _general(flat_terms, rest, ex)
    return ex


def _small_integer_sum(flat_terms, shape, n) -> ExactArray:
    """:func:`_integer_sum` for sums whose magnitudes stay below 2**53: float64 is exact."""
    total = np.zeros(n)
    all_zero = np.ones(n, dtype=bool)
    all_neg = np.ones(n, dtype=bool)
    any_neg = np.zeros(n, dtype=bool)
    for t in flat_terms:
        prod = np.ones(n)
        for op in t:
            v = op.ints
            prod = prod * (np.asarray(v, dtype=np.float64) if isinstance(v, np.ndarray)
                           else float(v))
        total += prod
        zt = prod == 0
        neg = np.signbit(prod)  # IEEE's sign of the product, as the Python-int path has it
        all_zero &= zt
        all_neg &= neg
        any_neg |= neg & zt
    zero = total == 0
    zsign = np.where(all_zero & all_neg, -1, np.where(all_zero & ~any_neg, 1, 0))
    return ExactArray.regular(shape, np.where(zero, 0.0, total), zero=zero, zsign=zsign)


def _magnitude_bound(flat_terms) -> float:
    """An upper bound of ``sum |prod|`` over every element (inf where unknown)."""
    bound = 0.0
    for t in flat_terms:
        prod = 1.0
        for op in t:
            v = op.ints
            if isinstance(v, np.ndarray):
                if v.dtype == object or v.dtype.itemsize > 4:
                    return np.inf
                m = float(np.max(np.abs(v.astype(np.int64)))) if v.size else 0.0
            else:
                m = float(abs(int(v)))
            prod *= m
        bound += prod
    return bound


def _integer_sum(flat_terms, shape, n) -> ExactArray:
    """Exact sums of products of integers: in float64 where every partial sum is an integer
    below 2**53 (exact there), else in Python integers (no bit is ever lost)."""
    if _magnitude_bound(flat_terms) < 2.0**53:
        return _small_integer_sum(flat_terms, shape, n)
    total = np.zeros(n, dtype=object)
    all_zero = np.ones(n, dtype=bool)
    all_neg = np.ones(n, dtype=bool)
    any_neg = np.zeros(n, dtype=bool)
    for t in flat_terms:
        prod = np.ones(n, dtype=object)
        neg = np.zeros(n, dtype=bool)  # the sign of the product, an integer 0 being +0
        for op in t:
            v = op.ints
            prod = prod * (np.asarray(v, dtype=object) if isinstance(v, np.ndarray) else int(v))
            neg ^= np.broadcast_to(np.asarray(v) < 0, (n,))
        total = total + prod
        zt = np.array([p == 0 for p in prod], dtype=bool)
        all_zero &= zt
        all_neg &= neg
        any_neg |= neg & zt
    small = np.array([abs(int(v)) < 2**53 for v in total], dtype=bool)
    c1 = np.where(small, total, 0).astype(np.float64)
    zero = c1 == 0
    zero &= small
    # signs of zero as IEEE gives them for the same values in floats: zero products of one
    # sign keep it; mixed signs and cancellations follow the sum rule (zsign 0)
    zsign = np.where(all_zero & all_neg, -1, np.where(all_zero & ~any_neg, 1, 0))
    hard = {int(i): Fraction(int(total[i])) for i in np.flatnonzero(~small)}
    return ExactArray.regular(shape, c1, zero=zero, zsign=zsign, hard=hard)


_BLOCK = 1 << 15
_SAFE_LO, _SAFE_HI = 2.0**-450, 2.0**450


def _fast_lane(flat_terms, idx, ex):
    """Exact sums for the block ``idx`` straight from float64 operands; returns the (block
    relative) indices it leaves to :func:`_general`.

    Safe elements have every factor zero, non-finite, or between 2**-450 and 2**450 in
    magnitude: no product or sum of them overflows or underflows in float64, so plain IEEE
    arithmetic gives the specials and signs of zero, TwoProduct and TwoSum are exact, and no
    scaling is needed (E = 0).
    """
    safe = None
    pieces = []
    naive = None
    all_zero = None
    with np.errstate(invalid="ignore", over="ignore"):
        for t in flat_terms:
            vs = [op.f64[idx] for op in t]
            for op, v in zip(t, vs, strict=True):
                if op.in_range:
                    continue
                a = np.abs(v)
                ok = ((a >= _SAFE_LO) & (a <= _SAFE_HI)) | (a == 0) | ~np.isfinite(a)
                safe = ok if safe is None else safe & ok
            if len(vs) == 1:
                prod = vs[0]
                pieces.append(prod)
            else:
                prod, err = two_product(vs[0], vs[1])
                pieces += [prod, err]
            naive = prod if naive is None else naive + prod
            zt = prod == 0
            sb = np.signbit(prod)
            if all_zero is None:
                all_zero, all_neg, any_neg = zt, sb, sb
            else:
                all_zero, all_neg, any_neg = all_zero & zt, all_neg & sb, any_neg | sb
    if safe is None:  # every operand known to be in range
        safe = np.ones(naive.shape, dtype=bool)
    special = ~np.isfinite(naive) & safe
    zero = all_zero & ~special & safe
    ex.special[idx] = np.where(special, naive, 0.0)
    # zeros of one sign keep it in every mode; mixed signs follow IEEE's sum rule (zsign 0)
    ex.zsign[idx] = np.where(all_neg, -1, np.where(any_neg, 0, 1))
    rest = np.flatnonzero(~safe)
    # distil every element of the block (specials and zeros are masked out by their flags)
    with np.errstate(invalid="ignore", over="ignore"):
        P = np.stack([np.broadcast_to(pc, naive.shape) for pc in pieces])
        c1, c2, r, ok = _leading(P)
    ex.c1[idx], ex.c2[idx], ex.r[idx] = c1, c2, r
    regular = safe & ~special & ~zero
    cancel = regular & ok & (c1 == 0)  # the pieces cancel exactly
    if cancel.any():
        zero |= cancel
        ex.zsign[idx] = np.where(cancel, 0, ex.zsign[idx])
    ex.zero[idx] = zero
    failed = regular & ~ok
    if failed.any():
        rest = np.union1d(rest, np.flatnonzero(failed))
    return rest


def term_fraction(flat_terms, j: int) -> Fraction:
    """The exact value of element ``j`` of flattened terms of finite operands (slow)."""
    v = Fraction(0)
    for t in flat_terms:
        prod = Fraction(1)
        for op in t:
            prod *= op.exact(j)
        v += prod
    return v


def _general(flat_terms, idx, ex):
    """Exact sums for the elements ``idx`` (flat indices): scaled pieces, distillation, and the
    Fraction fallback for what distillation cannot settle."""
    n = idx.size
    flat_terms = [tuple(op.take(idx) for op in t) for t in flat_terms]
    # --- IEEE specials and signs of zero, from the float64 sign shadow
    with np.errstate(invalid="ignore"):
        shadows = []
        for t in flat_terms:
            s = t[0].shadow
            for op in t[1:]:
                s = s * op.shadow
            shadows.append(np.broadcast_to(np.asarray(s, dtype=np.float64), (n,)))
        S = np.stack(shadows) if shadows else np.zeros((1, n))
        special = np.where(np.isfinite(S), 0.0, S).sum(axis=0)
    is_special = ~np.isfinite(special)
    all_zero = ~(S != 0).any(axis=0)
    negz = np.signbit(S).all(axis=0)
    posz = (~np.signbit(S)).all(axis=0)
    zsign = np.where(negz, -1, np.where(posz, 1, 0)).astype(np.int8)
    zero = all_zero & ~is_special
    active = ~is_special & ~all_zero
    ex.special[idx] = np.where(is_special, special, 0.0)
    # --- pieces of every term; each element scaled by its largest exponent
    vals, exps = [], []
    for t in flat_terms:
        for v, e in _product_pieces(t):
            vals.append(np.broadcast_to(v, (n,)))
            exps.append(np.broadcast_to(e, (n,)))
    V = np.stack(vals)
    X = np.stack(exps).astype(np.int64)
    _, vexp = np.frexp(V)
    nonzero = V != 0
    lead = np.where(nonzero, X + vexp, np.iinfo(np.int64).min // 4)
    top = lead.max(axis=0)
    far = ((top[None, :] - lead > _GAP_LIMIT) & nonzero).any(axis=0)
    rel = np.where(nonzero & ~far[None, :], X - top[None, :], 0)
    P = np.ldexp(V, np.clip(rel, -1100, 64).astype(np.int32))
    slow = active & far
    todo = np.flatnonzero(active & ~far)
    for passes in (0, 4):
        if not todo.size:
            break
        Pt = P[:, todo].copy()
        if passes:
            _distill(Pt, passes)
        cc1, cc2, rr, ok = _leading(Pt)
        done = todo[ok]
        gi = idx[done]
        ex.c1[gi], ex.c2[gi], ex.r[gi], ex.E[gi] = cc1[ok], cc2[ok], rr[ok], top[done]
        cancel = done[cc1[ok] == 0]  # the pieces cancel exactly
        zero[cancel] = True
        zsign[cancel] = 0
        todo = todo[~ok]
    slow[todo] = True
    for j in np.flatnonzero(slow):
        j = int(j)
        v = term_fraction(flat_terms, j)
        if v == 0:
            zero[j] = True
            zsign[j] = 0
        else:
            ex.hard[int(idx[j])] = v
    ex.zero[idx] = zero
    ex.zsign[idx] = zsign
