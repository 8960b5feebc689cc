"""An independent oracle for the arithmetic family (subtract, fma, addcmul, divide, floor_divide,
remainder, fmod, reciprocal, addcdiv, sqrt, rsqrt, abs, negative, the selections, comparisons and
cast). It shares no code with exactref: exactref is imported only for ``er.Rounding`` and the
formats' metadata (precision, exponent range, which specials a format has).

**Exact values.** An exact value is a Python float for NaN, ±inf and a zero whose sign is known,
:data:`SUMZERO` for an exact zero that IEEE 754's sum rule signs (+0, or -0 rounding toward
-inf: §6.3), or a nonzero ``gmpy2.mpq`` (a GMP rational: exact, and faster than Fraction). The
special-value rules of each op are written here from IEEE 754-2019 (§5.4, §6.2, §6.3, §9.2,
§9.6), C99 (F.9.7.1 fmod, G.6.4.2 csqrt, F.9.4.3 hypot) and the ops' docstrings. An irrational
square root is represented by its value rounded to odd at 120+ bits (``math.isqrt``): by the
round-to-odd theorem, rounding that rational into any format of at most 118 bits in any mode
equals rounding the square root itself.

**Rounding.** :func:`rnd_one` rounds one exact value with MPFR (the test suites' shared
``mpfr_rounding``, through ``arith_oracle.rnd``: specials, zeros, overflow rules). :class:`Table`
rounds whole arrays into a format of at most 16 bits by looking the value up among every finite
value of the format (its bit patterns read by ml_dtypes): the two neighbours, the midpoint and the
significand's parity decide every mode. An exact value reaches the table as ``a = RD53(v)`` and a
sticky bit (``v > a``), computed with Python integers; every value and midpoint of such a format
is a float64, so ``v >= T`` exactly when ``a >= T``. The table is checked against MPFR in the
tests. :func:`int_round` rounds float64 values to integers in every mode, vectorized, checked
against ``mpfr_rounding.round_to_int``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
import numpy as np
from arith_oracle import rnd as _rnd_mpfr
from gmpy2 import mpq

import exactref as er
from exactref._formats import FORMATS
from mpfr_rounding import overflow_value, pick_neighbour

R = er.Rounding
MODES = list(R)
NAN = math.nan
INF = math.inf


class _SumZero:
    """An exact zero whose sign IEEE 754's sum rule gives: +0, or -0 rounding toward -inf."""

    def __repr__(self):
        return "SUMZERO"


SUMZERO = _SumZero()
MPQ = type(mpq(0))


# ============================================================================ exact values
def ex(v):
    """The exact value of a number (float, int, Fraction, numpy scalar): a float for zeros and
    specials, else a nonzero mpq."""
    if isinstance(v, (_SumZero, MPQ)):
        return v
    if isinstance(v, Fraction):
        return mpq(v.numerator, v.denominator) if v else 0.0
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return mpq(int(v)) if v else 0.0
    f = float(v)
    if f == 0 or not math.isfinite(f):
        return f
    return mpq(f)


def is_nan(v) -> bool:
    return isinstance(v, float) and v != v


def is_inf(v) -> bool:
    return isinstance(v, float) and math.isinf(v)


def is_zero(v) -> bool:
    return v is SUMZERO or (isinstance(v, float) and v == 0)


def is_finite_nonzero(v) -> bool:
    return not isinstance(v, (float, _SumZero))


def negative(v) -> bool:
    """The sign bit (a SUMZERO counts as +0; NaN's sign is not asked)."""
    if v is SUMZERO:
        return False
    if isinstance(v, float):
        return math.copysign(1.0, v) < 0
    return v < 0


def resolve(v, mode):
    """A SUMZERO made +0 or -0 for ``mode``; anything else unchanged."""
    if v is SUMZERO:
        return -0.0 if mode is R.TOWARD_NEGATIVE else 0.0
    return v


def signed_zero(neg: bool) -> float:
    return -0.0 if neg else 0.0


def signed_inf(neg: bool) -> float:
    return -INF if neg else INF


def mul(*factors):
    """The exact product, IEEE 754 §7.2: NaN with a NaN factor or with both a zero and an
    infinity; otherwise an infinity (or zero) with the exclusive-or of the signs."""
    assert not any(f is SUMZERO for f in factors), "resolve a sum-rule zero first"
    if any(is_nan(f) for f in factors):
        return NAN
    has_inf = any(is_inf(f) for f in factors)
    has_zero = any(is_zero(f) for f in factors)
    if has_inf and has_zero:
        return NAN
    neg = sum(negative(f) for f in factors) % 2 == 1
    if has_inf:
        return signed_inf(neg)
    if has_zero:
        return signed_zero(neg)
    p = mpq(1)
    for f in factors:
        p *= f
    return p


def minus(v):
    """``-v`` (negate: flips the sign of zeros and infinities)."""
    if v is SUMZERO:
        raise ValueError("negating a SUMZERO needs the mode; negate the terms instead")
    return -v


def ieee_sum(terms):
    """The exact sum of exact values with IEEE 754's rules (§6.3): NaN with a NaN term or
    infinities of both signs; an exact zero sum of terms that are not all zeros is SUMZERO; a sum
    of zeros only is -0 when they are all -0, else SUMZERO when signs are mixed, else +0."""
    if any(is_nan(t) for t in terms):
        return NAN
    infs = {negative(t) for t in terms if is_inf(t)}
    if len(infs) == 2:
        return NAN
    if infs:
        return signed_inf(infs.pop())
    assert not any(t is SUMZERO for t in terms), "resolve a sum-rule zero before adding it"
    nonzero = [t for t in terms if is_finite_nonzero(t)]
    if nonzero:
        s = sum(nonzero, mpq(0))
        return s if s != 0 else SUMZERO
    negs = [negative(t) for t in terms]
    if all(negs):
        return -0.0
    if not any(negs):
        return 0.0
    return SUMZERO


def ieee_div(n, d):
    """The exact quotient with IEEE 754's rules (§7.2, §7.3): NaN for NaN, 0/0 and inf/inf;
    a signed infinity for inf/finite and nonzero/0; a signed zero for 0/nonzero and
    finite/inf."""
    assert n is not SUMZERO and d is not SUMZERO, "resolve a sum-rule zero first"
    if is_nan(n) or is_nan(d):
        return NAN
    neg = negative(n) != negative(d)
    if is_inf(n):
        return NAN if is_inf(d) else signed_inf(neg)
    if is_inf(d):
        return signed_zero(neg)
    if is_zero(d):
        return NAN if is_zero(n) else signed_inf(neg)
    if is_zero(n):
        return signed_zero(neg)
    return n / d


def _floor(q) -> int:
    return int(q.numerator // q.denominator)


def integral(q, how: str):
    """``floor`` or ``trunc`` of an exact value (IEEE 754 roundToIntegral, §5.9): specials stay,
    zeros keep their sign, a zero result takes the value's sign (``trunc(-0.5) = -0``)."""
    if not is_finite_nonzero(q):
        return q
    if how == "floor" or q > 0:
        k = _floor(q)
    else:
        k = -_floor(-q)
    if k == 0:
        return signed_zero(q < 0)
    return mpq(k)


# ============================================================================ the ops
def divide(x, y, how=None):
    """``x / y`` exactly (IEEE 754 division); ``how`` ``"floor"`` or ``"trunc"``: its integer
    part, exactly (the docstring: the exact quotient rounded to an integer first)."""
    q = ieee_div(ex(x), ex(y))
    return q if how is None else integral(q, how)


def reciprocal(x):
    """``1 / x``: ``1/±0 = ±inf``, ``1/±inf = ±0``."""
    return ieee_div(mpq(1), ex(x))


def remainder(x, y):
    """``x - y * floor(x / y)`` (Python's and NumPy's ``%``; the docstring): the divisor's sign.
    NaN for a NaN operand, ``y = ±0`` or an infinite ``x``; for an infinite ``y``, ``x`` where
    the signs agree and ``y`` where they differ (the limit of ``x - y floor(x/y)``: ``y + x``);
    an exact zero takes the divisor's sign."""
    x, y = ex(x), ex(y)
    if is_nan(x) or is_nan(y) or is_zero(y) or is_inf(x):
        return NAN
    if is_zero(x):
        return signed_zero(negative(y))
    if is_inf(y):
        return x if negative(x) == negative(y) else y
    r = x - y * _floor(x / y)
    return r if r != 0 else signed_zero(negative(y))


def fmod(x, y):
    """``x - y * trunc(x / y)`` (C99 F.9.7.1): the dividend's sign, a zero result keeps it. NaN
    for a NaN operand, ``y = ±0`` or an infinite ``x``; ``fmod(x, ±inf) = x`` for finite ``x``."""
    x, y = ex(x), ex(y)
    if is_nan(x) or is_nan(y) or is_zero(y) or is_inf(x):
        return NAN
    if is_zero(x) or is_inf(y):
        return x
    q = x / y
    t = _floor(q) if q > 0 else -_floor(-q)
    r = x - y * t
    return r if r != 0 else signed_zero(negative(x))


def odd_sqrt(v, bits: int = 120):
    """``sqrt(v)`` of a positive rational: exact when it is rational, else rounded to odd at
    ``bits`` or more significant bits (``math.isqrt``)."""
    n, d = int(v.numerator), int(v.denominator)
    m = n * d  # sqrt(n/d) = sqrt(n d) / d
    k = max(0, (2 * bits - m.bit_length()) // 2 + 1)
    m <<= 2 * k
    s = math.isqrt(m)
    if s * s != m:
        s |= 1  # sqrt(m) lies strictly between s and s + 1: round to odd
    return mpq(s, d << k)


def sqrt(x):
    """IEEE 754 squareRoot (§5.4.1): ``sqrt(±0) = ±0``, ``sqrt(+inf) = +inf``, NaN below zero."""
    x = ex(x)
    if is_nan(x) or (negative(x) and not is_zero(x)):
        return NAN
    if is_zero(x) or is_inf(x):
        return x
    return odd_sqrt(x)


def rsqrt(x):
    """IEEE 754 rSqrt (§9.2.1): ``rSqrt(±0) = ±inf``, ``rSqrt(+inf) = +0``, NaN below zero."""
    x = ex(x)
    if is_nan(x) or (negative(x) and not is_zero(x)):
        return NAN
    if is_zero(x):
        return signed_inf(negative(x))
    if is_inf(x):
        return 0.0
    return odd_sqrt(1 / x)


def subtract(x, y, alpha=1):
    """``x - alpha * y`` with one rounding: the docstring's "same sum as add with -alpha", the
    IEEE sum of ``x`` and ``(-alpha) * y`` (``-alpha`` as Python negates it: an integer 0 stays
    +0, a float 0.0 becomes -0.0)."""
    return ieee_sum([ex(x), mul(ex(-alpha), ex(y))])


def fma(x, y, z):
    """IEEE 754 fusedMultiplyAdd (§5.4.1): ``x * y + z`` exactly; ``0 * inf + z`` is NaN even for
    a NaN ``z``; an exact zero takes the sum rule's sign with ``x * y`` an exact product."""
    return ieee_sum([mul(ex(x), ex(y)), ex(z)])


def addcmul(i, t1, t2, value=1):
    """``input + value * tensor1 * tensor2``, exactly: an IEEE product of three factors, then the
    IEEE sum."""
    return ieee_sum([ex(i), mul(ex(value), ex(t1), ex(t2))])


def addcdiv(i, t1, t2, value=1):
    """``input + value * tensor1 / tensor2`` (the docstring): for finite operands and a nonzero
    ``tensor2`` the exact value; a zero result takes IEEE's sum rule for ``input + p`` with
    ``p = value * tensor1 / tensor2`` (a zero ``p`` has the product's sign). Otherwise IEEE
    arithmetic on ``input + value * (tensor1 / tensor2)``, whose steps are exact there."""
    i, t1, t2, v = ex(i), ex(t1), ex(t2), ex(value)
    q = ieee_div(t1, t2)
    return ieee_sum([i, mul(v, q)])


def abs_(x):
    """``|x|``: ``abs(-0) = +0``, NaN stays NaN."""
    x = ex(x)
    return NAN if is_nan(x) else abs(x)


def negate(x):
    """``-x``: ``-(+0) = -0``."""
    x = ex(x)
    return NAN if is_nan(x) else minus(x)


def _order(x, y) -> int:
    """-1, 0, 1: ``x`` below, equal to (-0 == +0), above ``y`` (neither NaN)."""
    if is_inf(x) or is_inf(y):
        fx = float(x) if is_inf(x) else (0.0 if is_zero(x) else (1.0 if x > 0 else -1.0))
        fy = float(y) if is_inf(y) else (0.0 if is_zero(y) else (1.0 if y > 0 else -1.0))
        return (fx > fy) - (fx < fy)
    vx = mpq(0) if is_zero(x) else x
    vy = mpq(0) if is_zero(y) else y
    return (vx > vy) - (vx < vy)


def _select(x, y, larger: bool, nan_wins: bool):
    """IEEE 754-2019 §9.6 maximum/minimum (``nan_wins``) or maximumNumber/minimumNumber: -0
    orders below +0."""
    x, y = ex(x), ex(y)
    if is_nan(x) or is_nan(y):
        if nan_wins or (is_nan(x) and is_nan(y)):
            return NAN
        return y if is_nan(x) else x
    o = _order(x, y)
    if o == 0 and is_zero(x) and is_zero(y):
        xneg = negative(x)
        if larger:
            return x if not xneg else y
        return x if xneg else y
    if o == 0:
        return x
    return x if (o > 0) == larger else y


def maximum(x, y):
    return _select(x, y, True, True)


def minimum(x, y):
    return _select(x, y, False, True)


def fmax(x, y):
    return _select(x, y, True, False)


def fmin(x, y):
    return _select(x, y, False, False)


def clamp(x, lo=None, hi=None):
    """``minimum(maximum(x, lo), hi)`` (torch.clamp's definition)."""
    v = ex(x)
    if lo is not None:
        v = maximum(v, lo)
    if hi is not None:
        v = minimum(v, hi)
    return v


def compare(x, y):
    """The exact order of two numbers of any formats: -1, 0, 1, or None when unordered (NaN).
    Python ints are exact; floats are taken exactly (mpq)."""
    x, y = ex(x), ex(y)
    if is_nan(x) or is_nan(y):
        return None
    return _order(x, y)


COMPARISONS = {
    "equal": lambda o: o == 0,
    "not_equal": lambda o: o != 0,  # None (unordered) != 0: True
    "less": lambda o: o is not None and o < 0,
    "less_equal": lambda o: o is not None and o <= 0,
    "greater": lambda o: o is not None and o > 0,
    "greater_equal": lambda o: o is not None and o >= 0,
}


# ============================================================================ rounding
def rnd_one(v, fmt, mode=R.NEAREST_EVEN, rule=None) -> float:
    """One exact value rounded once into a float format with MPFR (``arith_oracle.rnd``)."""
    v = resolve(v, mode)
    fmt = er.dtype(fmt)
    if not fmt.signed and not is_nan(v) and not is_zero(v) and negative(v):
        return NAN  # an unsigned format (float8_e8m0fnu) has no negative encoding, -inf included
    if isinstance(v, MPQ):
        v = Fraction(int(v.numerator), int(v.denominator))
    return _rnd_mpfr(v, fmt, mode, rule)


def rd53(v):
    """``(a, sticky)``: ``a`` the largest float64 ``<= v`` with 53 significant bits (exact
    Python-integer division), ``sticky`` whether ``v > a``. ``v``: a nonzero rational within
    float64's normal range."""
    n, d = int(v.numerator), int(v.denominator)
    e = abs(n).bit_length() - d.bit_length()  # 2**(e-1) < |v| < 2**(e+1)
    for k in (52 - e, 53 - e):  # the scale that puts |v| * 2**k in [2**52, 2**53)
        num, den = (n << k, d) if k >= 0 else (n, d << -k)
        s, rem = divmod(num, den)  # floor: toward -inf for negative values too
        if abs(s) >= 2**52:
            break
    assert 2**52 <= abs(s) <= 2**53, (v, s)
    a = math.ldexp(float(s), -k)
    assert abs(a) >= 2.0**-1000, "rd53 needs values within float64's normal range"
    return a, rem != 0


def encode_map(fn, *cols):
    """:func:`encode` of ``fn`` applied to each row of the columns (streamed: no list of exact
    values is kept)."""
    n = len(cols[0])
    a = np.empty(n)
    sticky = np.zeros(n, dtype=bool)
    sumzero = np.zeros(n, dtype=bool)
    rows = zip(*[c.tolist() if isinstance(c, np.ndarray) else c for c in cols], strict=True)
    for k, args in enumerate(rows):
        v = fn(*args)
        if v is SUMZERO:
            a[k] = 0.0
            sumzero[k] = True
        elif isinstance(v, float):
            a[k] = v
        else:
            a[k], sticky[k] = rd53(v)
    return a, sticky, sumzero


def encode(values):
    """Arrays ``(a, sticky, sumzero)`` of exact values, for :meth:`Table.round`."""
    n = len(values)
    a = np.empty(n)
    sticky = np.zeros(n, dtype=bool)
    sumzero = np.zeros(n, dtype=bool)
    for k, v in enumerate(values):
        if v is SUMZERO:
            a[k] = 0.0
            sumzero[k] = True
        elif isinstance(v, float):
            a[k] = v
        else:
            a[k], sticky[k] = rd53(v)
    return a, sticky, sumzero


def _bit_patterns(fmt) -> np.ndarray:
    """Every value of a float format of at most 16 bits, as float64 (ml_dtypes' widening casts
    are exact)."""
    n = 1 << fmt.bits
    raw = np.arange(n, dtype=np.uint16 if fmt.bits > 8 else np.uint8)
    with np.errstate(invalid="ignore"):
        return raw.view(fmt.np_dtype).astype(np.float64)


def _odd_significand(t, fmt) -> np.ndarray:
    """Whether the last significand bit of each value is 1 (zero is even)."""
    a = np.abs(t)
    _, e2 = np.frexp(np.where(a == 0, 1.0, a))
    q = np.maximum(e2 - 1, fmt.emin) - fmt.precision + 1  # the quantum of each binade
    sig = np.ldexp(a, -q)
    assert np.all(sig == np.floor(sig)), fmt.name
    return (a != 0) & (np.fmod(sig, 2.0) == 1.0)


class Table:
    """Rounding into a float format of at most 16 bits by lookup among all its values.

    The sorted finite values, with a zero (real or, for a format without one, virtual) and one
    more value beyond each end of the finite range (the next value a wider exponent range would
    have: reaching it is an overflow), as MPFR's unbounded-exponent rounding sees them.
    """

    def __init__(self, fmt):
        fmt = er.dtype(fmt)
        assert fmt.kind == "float" and fmt.bits <= 16, fmt.name
        self.fmt = fmt
        vals = _bit_patterns(fmt)
        fin = np.unique(np.concatenate([vals[np.isfinite(vals)], [0.0]]))
        fin = np.where(fin == 0, 0.0, fin)
        top = float(fin.max())
        assert top == fmt.max_finite, (fmt.name, top, fmt.max_finite)
        e = math.frexp(top)[1] - 1
        beyond = top + 2.0 ** (e - fmt.precision + 1)
        ends = [beyond, -beyond] if fmt.signed else [beyond]
        self.values = np.unique(np.concatenate([fin, ends]))
        self.odd = _odd_significand(self.values, fmt)
        # every finite value has at most `precision` significant bits above the subnormal floor
        _odd_significand(vals[np.isfinite(vals)], fmt)
        self.has_zero = bool(np.any(vals == 0))

    def round(self, a, sticky, mode, rule=None, sumzero=None):
        """Exact values given as ``a = RD53(v)`` and ``sticky`` (``v > a``), or specials and
        zeros in ``a``, rounded once in ``mode`` with overflow ``rule``: float64 results."""
        fmt = self.fmt
        rule = rule or fmt.default_overflow
        a = np.asarray(a, dtype=np.float64).copy()
        sticky = np.asarray(sticky, dtype=bool)
        if sumzero is not None:
            a[np.asarray(sumzero)] = -0.0 if mode is R.TOWARD_NEGATIVE else 0.0
        out = np.full(a.shape, np.nan)
        nan = np.isnan(a)
        inf = np.isinf(a)
        zero = a == 0
        neg = np.signbit(a)
        big = fmt.max_finite
        # exact infinities: kept, or NaN, or the largest value (no mode applies: not rounded)
        if fmt.has_inf:
            inf_val = a
        elif fmt.has_nan and rule != "saturate":
            inf_val = np.full(a.shape, np.nan)
        else:
            inf_val = np.where(neg, -big, big)
        out = np.where(inf, inf_val, out)
        # exact zeros
        if fmt.has_zero:
            zero_val = np.where(neg & fmt.has_negzero, -0.0, 0.0)
        else:
            zero_val = np.full(a.shape, np.nan)
        out = np.where(zero, zero_val, out)
        # finite nonzero values
        fin = ~(nan | inf | zero)
        T, odd = self.values, self.odd
        af = np.where(fin, a, 1.0)
        st = sticky & fin
        i = np.searchsorted(T, af, side="right") - 1  # T[i] <= v
        n = T.size
        lo_i, hi_i = np.clip(i, 0, n - 1), np.clip(i + 1, 0, n - 1)
        lo = np.where(i >= 0, T[lo_i], -np.inf)
        hi = np.where(i + 1 < n, T[hi_i], np.inf)
        lo_odd = np.where(i >= 0, odd[lo_i], False)
        hi_odd = np.where(i + 1 < n, odd[hi_i], False)
        pos = af > 0
        r = pick_neighbour(af, lo, hi, lo_odd, hi_odd, st, mode, fmt.precision == 1)
        with np.errstate(invalid="ignore"):
            over = np.abs(r) > big
        ov_pos = overflow_value(big, fmt.has_inf, fmt.has_nan, False, mode, rule)
        ov_neg = overflow_value(big, fmt.has_inf, fmt.has_nan, True, mode, rule)
        r = np.where(over, np.where(pos, ov_pos, ov_neg), r)
        to_zero = ~over & (r == 0)
        if fmt.has_zero:
            zval = np.where(~pos & fmt.has_negzero, -0.0, 0.0)
        else:  # no zero: the smallest value, or NaN where the mode needs a value below it
            zval = np.full(a.shape, NAN if mode in (R.TOWARD_ZERO, R.TOWARD_NEGATIVE) else
                           fmt.smallest_subnormal)
        r = np.where(to_zero, zval, r)
        out = np.where(fin, r, out)
        if not fmt.signed:  # float8_e8m0fnu: no negative value has an encoding
            out = np.where(~nan & neg & ~zero, np.nan, out)
        return out

    def round_exact(self, values, mode, rule=None):
        """Exact values (as the op functions give them) rounded once: float64 results."""
        a, sticky, sumzero = encode(values)
        return self.round(a, sticky, mode, rule, sumzero)


_TABLES: dict = {}


def table(fmt) -> Table:
    fmt = er.dtype(fmt)
    if fmt.name not in _TABLES:
        _TABLES[fmt.name] = Table(fmt)
    return _TABLES[fmt.name]


def round_values(values, fmt, mode, rule=None) -> np.ndarray:
    """Exact values rounded once into a real float format: the table for formats of at most 16
    bits, MPFR element by element above."""
    fmt = er.dtype(fmt)
    if fmt.bits <= 16:
        return table(fmt).round_exact(values, mode, rule)
    return np.array([rnd_one(v, fmt, mode, rule) for v in values], dtype=np.float64)


# ------------------------------------------------------------------------------ integers
def int_round(v, mode) -> np.ndarray:
    """Finite float64 values rounded to integers (float64 results: exact, they are integers
    already past 2**52) in every mode, from the definitions."""
    v = np.asarray(v, dtype=np.float64)
    fl = np.floor(v)
    frac = v - fl  # exact
    inexact = frac != 0
    if mode is R.TOWARD_NEGATIVE:
        return fl
    if mode is R.TOWARD_POSITIVE:
        return np.where(inexact, fl + 1, fl)
    if mode is R.TOWARD_ZERO:
        return np.where(inexact & (v < 0), fl + 1, fl)
    if mode is R.ODD:
        return np.where(inexact & (np.fmod(fl, 2) == 0), fl + 1, fl)
    up = (frac > 0.5) | ((frac == 0.5) & ((v > 0) if mode is R.NEAREST_AWAY else
                                          (np.fmod(fl, 2) != 0)))
    return np.where(up, fl + 1, fl)


def int_overflow(k, fmt, rule):
    """Exact integers (a list of Python ints) into an integer format: ``wrap`` (two's
    complement, modulo 2**bits), ``saturate`` (clamped) or ``error`` (None where it raises)."""
    lo, hi = fmt.int_min, fmt.int_max
    span = 1 << fmt.bits
    out = []
    for v in k:
        if lo <= v <= hi:
            out.append(v)
        elif rule == "saturate":
            out.append(min(max(v, lo), hi))
        elif rule == "wrap":
            out.append((v - lo) % span + lo)
        else:
            out.append(None)
    return out


# ============================================================================ complex
_CTX = {}


def _ctx(prec, rnd):
    key = (prec, rnd)
    if key not in _CTX:
        _CTX[key] = gmpy2.context(precision=prec, round=rnd)
    return _CTX[key]


def _mpfr_exact(v: float):
    return gmpy2.mpfr(v, 64)  # every float64 exactly


def csqrt_bounds(a: float, b: float, prec: int = 300):
    """Lower and upper bounds (mpq) of the parts ``(u, |v|)`` of the principal square root of a
    finite ``a + bi`` with ``b != 0``: ``u = sqrt((|z| + |a|) / 2)`` for ``a >= 0`` and
    ``|v| = |b| / (2 u)``, the two swapped for ``a < 0`` (no cancellation), each evaluated by MPFR
    at ``prec`` bits with every step rounded down (lower bound) or up (upper bound)."""
    A, B = _mpfr_exact(abs(a)), _mpfr_exact(abs(b))

    def big(rnd):  # sqrt((|z| + |a|) / 2), monotone in every step
        c = _ctx(prec, rnd)
        z = c.sqrt(c.add(c.mul(A, A), c.mul(B, B)))
        return c.sqrt(c.div(c.add(z, A), 2))

    big_lo, big_hi = big(gmpy2.RoundDown), big(gmpy2.RoundUp)
    cd, cu = _ctx(prec, gmpy2.RoundDown), _ctx(prec, gmpy2.RoundUp)
    small_lo = cd.div(B, cd.mul(big_hi, 2))
    small_hi = cu.div(B, cu.mul(big_lo, 2))

    def q(m):
        n, d = m.as_integer_ratio()
        return mpq(int(n), int(d))

    big_b = (q(big_lo), q(big_hi))
    small_b = (q(small_lo), q(small_hi))
    return (big_b, small_b) if a >= 0 else (small_b, big_b)


def rnd_bounds(lo, hi, fmt, mode, negate=False):
    """A value known to lie in ``[lo, hi]`` (positive mpq) rounded once, or None where the two
    ends round apart (the caller tightens the bounds)."""
    if negate:
        lo, hi = -hi, -lo
    r1, r2 = rnd_one(lo, fmt, mode), rnd_one(hi, fmt, mode)
    return r1 if same(r1, r2) else None


def csqrt(a: float, b: float, fmt, mode):
    """The principal square root of ``a + bi``, each part rounded once into the component
    ``fmt``: C99 G.6.4.2's special cases, then ``sqrt(conj z) = conj sqrt(z)`` (the imaginary
    part takes ``b``'s sign, zeros included), the real part >= 0. Returns ``(re, im)`` floats;
    an imaginary part that C99 leaves unsigned (``-inf + NaN i``) is ``None`` for its sign."""
    neg_b = math.copysign(1.0, b) < 0
    if math.isinf(b):
        return INF, b
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a) and a > 0:
            return INF, NAN  # +inf + NaN i
        if math.isinf(a) and a < 0:
            return NAN, None  # NaN ± inf i (the sign is unspecified)
        return NAN, NAN
    if math.isinf(a):
        if a > 0:
            return INF, signed_zero(neg_b)
        return 0.0, signed_inf(neg_b)
    if b == 0:
        if a == 0:
            return 0.0, b
        if a > 0:
            return rnd_one(odd_sqrt(mpq(a)), fmt, mode), b
        root = odd_sqrt(mpq(-a))
        return 0.0, rnd_one(-root if neg_b else root, fmt, mode)
    # b != 0: u and v are irrational or exact; bounds that round apart are tightened (|b|
    # thousands of binades below |a| moves u by a relative 2**-4000)
    for prec in (300, 1500, 6000, 24000):
        (ulo, uhi), (vlo, vhi) = csqrt_bounds(a, b, prec)
        re = rnd_bounds(ulo, uhi, fmt, mode)
        im = rnd_bounds(vlo, vhi, fmt, mode, negate=neg_b)
        if re is not None and im is not None:
            return re, im
    raise AssertionError(f"oracle undecided: csqrt({a!r}, {b!r}) at {prec} bits")


def cabs(a: float, b: float):
    """The modulus ``sqrt(a^2 + b^2)`` exactly (C99 F.9.4.3 hypot: an infinite part gives +inf
    even beside a NaN; otherwise NaN propagates)."""
    if math.isinf(a) or math.isinf(b):
        return INF
    if math.isnan(a) or math.isnan(b):
        return NAN
    s = mpq(a) ** 2 + mpq(b) ** 2
    return 0.0 if s == 0 else odd_sqrt(s)


def cdiv_parts(x: complex, y: complex):
    """The exact parts of ``x / y`` for a finite nonzero ``y``: ``x * conj(y) / |y|^2``, each
    numerator an IEEE sum of exact products (its zero: SUMZERO or a signed zero), the
    denominator positive."""
    a, b, c, d = (ex(v) for v in (x.real, x.imag, y.real, y.imag))
    den = ieee_sum([mul(c, c), mul(d, d)])
    assert is_finite_nonzero(den)
    re = ieee_sum([mul(a, c), mul(b, d)])
    im = ieee_sum([mul(b, c), minus(mul(a, d))])
    return _over_positive(re, den), _over_positive(im, den)


def cdiv_ieee(x: complex, y: complex, mode):
    """``x / y`` with every special: each part of ``x * conj(y) / |y|^2`` evaluated with IEEE
    754's rules on exact values in ``mode``, then, where both parts are NaN, C99's recovery (Annex
    G.5.1, the example ``_Cdivd``): a nonzero over a zero is ``copysign(inf, c) * (a + bi)``; an
    infinite over a finite value ``inf * (a' c + b' d) + inf * (b' c - a' d) i``; a finite value
    over an infinite one ``0 * (a c' + b d') + 0 * (b c' - a d') i``, with ``a'`` (``c'``...) the
    part's infinity as ±1 and anything else as ±0 (IEEE float64 arithmetic, as C evaluates it).
    Returns exact parts (floats or mpq)."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    A, B, C, D = (ex(v) for v in (a, b, c, d))
    den = ieee_sum([mul(C, C), mul(D, D)])
    nre = ieee_sum([mul(A, C), mul(B, D)])
    nim = ieee_sum([mul(B, C), minus(mul(A, D))])
    re, im = (ieee_div(resolve(n, mode), den) for n in (nre, nim))
    if not (is_nan(re) and is_nan(im)):
        return re, im
    with np.errstate(all="ignore"):
        a, b, c, d = (np.float64(v) for v in (a, b, c, d))
        if c == 0 and d == 0 and not (np.isnan(a) and np.isnan(b)):
            k = np.copysign(np.inf, c)
            return ex(float(k * a)), ex(float(k * b))
        if (np.isinf(a) or np.isinf(b)) and np.isfinite(c) and np.isfinite(d):
            a1 = np.copysign(1.0 if np.isinf(a) else 0.0, a)
            b1 = np.copysign(1.0 if np.isinf(b) else 0.0, b)
            return (ex(float(np.inf * (a1 * c + b1 * d))),
                    ex(float(np.inf * (b1 * c - a1 * d))))
        if (np.isinf(c) or np.isinf(d)) and np.isfinite(a) and np.isfinite(b):
            c1 = np.copysign(1.0 if np.isinf(c) else 0.0, c)
            d1 = np.copysign(1.0 if np.isinf(d) else 0.0, d)
            return ex(float(0.0 * (a * c1 + b * d1))), ex(float(0.0 * (b * c1 - a * d1)))
    return re, im


def _over_positive(n, den):
    if n is SUMZERO or is_zero(n):
        return n  # a zero over a positive value keeps its sign (rule)
    return ieee_div(n, den)


# ============================================================================ comparisons
def same(a: float, b: float) -> bool:
    """Bitwise equality of two float64 values, NaN equal to NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def same_array(got, want) -> np.ndarray:
    """Elementwise bitwise equality of float64 arrays, NaN equal to NaN."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    return ((got == want) & (np.signbit(got) == np.signbit(want))) | (
        np.isnan(got) & np.isnan(want))


def assert_same(got, want, inputs, what: str):
    """Bit-for-bit comparison of float64 results (NaN equals NaN), with the inputs of the first
    differences in the message."""
    __tracebackhide__ = True
    ok = same_array(got, want)
    if not ok.all():
        import pytest

        bad = np.flatnonzero(~np.asarray(ok).reshape(-1))
        g = np.asarray(got, dtype=np.float64).reshape(-1)
        w = np.asarray(want, dtype=np.float64).reshape(-1)
        lines = [f"  {what} at {inputs(int(k)) if callable(inputs) else inputs[int(k)]}: "
                 f"oracle {w[k]!r} ({float(w[k]).hex()}), exactref {g[k]!r} ({float(g[k]).hex()})"
                 for k in bad[:12]]
        pytest.fail(f"{bad.size} of {ok.size} elements differ from the oracle:\n" +
                    "\n".join(lines), pytrace=False)


def all_values(fmt) -> np.ndarray:
    """Every value of a real float format of at most 16 bits (float64), quiet NaNs once."""
    vals = _bit_patterns(er.dtype(fmt))
    keep = ~np.isnan(vals)
    out = vals[keep]
    if np.isnan(vals).any():
        out = np.concatenate([out, [np.nan]])
    return out


# Note: not the P3109 formats (the report's rules, tests/test_formats_p3109.py)
FLOATS_SMALL = [f for f in FORMATS.values() if f.kind == "float" and f.bits <= 8
                and f.encoding == "native"]
FLOATS_16 = [FORMATS["float16"], FORMATS["bfloat16"]]
