"""An independent oracle for the real functions (exp, log, tanh, sigmoid, gelu, erf, ...).

It shares no code with exactref: the function values come from **mpmath** (exactref uses MPFR
through gmpy2), the special values and exact cases are written here from C99 Annex F (F.9), IEEE
754-2019 §9.2 and the definitions, and rounding is the test suites' own (``family_oracle``'s
table for formats of at most 16 bits and ``arith_oracle.rnd`` through MPFR for float64; a
vectorized float32 rounding written here, checked against MPFR in the tests). exactref is
imported only for the formats' metadata and ``er.Rounding``.

**Exact values.** :func:`exact` gives, per input, a Python float for NaN, ±inf and exact zeros,
or a Fraction ``q`` that rounds like the function value into every format of at most 60 bits in
every mode: an exact value where the function value is rational (``exp(0) = 1``, ``log2(8) =
3``, ``pow(4, 0.5) = 2``, ``sigmoid(0) = 1/2``), else the midpoint of the 62-bit cell (between
consecutive numbers of 62 significant bits) that holds the value. The cell comes from mpmath at
256 bits, and is accepted only when the approximation lies at least ``2**-(prec-32)`` (relative)
inside it; otherwise the precision doubles, and an undecided value fails loudly. A value that
is ``base + delta`` with ``base`` a float and ``delta`` tiny (``tanh(20) = 1 - 2/(e**40+1)``,
``gelu(10) = 10 - ...``) is evaluated as such, so that no precision has to cover the gap; values
beyond ``2**±1100`` are held as ``±2**±1100`` (they round alike into every format here).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from arith_oracle import rnd as _rnd_mpfr
from family_oracle import NAN, Table, rd53, table
from mpmath import mpf

import exactref as er
from mpfr_rounding import overflow_value, pick_neighbour

R = er.Rounding
MODES = list(R)
INF = math.inf
PREC = 256
CELL = 62  # bits of the cells the proxies stand in
FAR = 1100

# ============================================================================ the values
_CACHE: dict = {}


def _is_int(v: float) -> bool:
    return math.isfinite(v) and v == math.floor(v)


def _is_odd_int(v: float) -> bool:
    return _is_int(v) and abs(v) < 2**53 and int(v) % 2 == 1


class _Sum:
    """``base + delta``: ``base`` a Fraction (exact), ``delta`` an mpf function of the working
    precision (recomputed when the precision grows)."""

    def __init__(self, base, delta):
        self.base, self.delta = Fraction(base), delta


def _far(sign: int, huge: bool) -> Fraction:
    return sign * (Fraction(2) ** FAR if huge else Fraction(1, 2**FAR))


def _next_to(base, sign: int) -> Fraction:
    """A value just beside ``base`` (a nonzero float or Fraction), on ``sign``'s side, far
    inside the 62-bit cell next to it: it rounds like ``base + delta`` for every ``delta`` of
    that sign below ``|base| 2**-80``."""
    b = Fraction(base)
    eb = abs(b).numerator.bit_length() - abs(b).denominator.bit_length()
    return b + sign * Fraction(2) ** (eb - 90)


def _cell_midpoint(v: mpf, prec: int):
    """The midpoint of the 62-bit cell holding ``v`` (a nonzero mpf within ``|v| 2**-prec`` of
    the function value), or None when the value may lie in another cell (or on an edge)."""
    V = Fraction(*v.as_integer_ratio()) if hasattr(v, "as_integer_ratio") else Fraction(
        int(v.man) * (-1 if v < 0 else 1)) * Fraction(2) ** int(v.exp)
    a = abs(V)
    E = a.numerator.bit_length() - a.denominator.bit_length()  # 2**(E-1) <= a < 2**(E+1)
    if a >= Fraction(2) ** E:
        E += 1  # now 2**(E-1) <= a < 2**E
    width = Fraction(2) ** (E - CELL)
    k = a // width
    lo, hi = k * width, (k + 1) * width
    err = a / 2**prec
    if a - lo <= err or hi - a <= err:
        return None
    mid = lo + width / 2
    return -mid if V < 0 else mid


def _resolve(s: _Sum):
    """The proxy Fraction of ``base + delta`` (see the module's docstring)."""
    base = s.base
    prec = PREC
    while prec <= 4096:
        with mpmath.workprec(prec + 20):
            d = s.delta()
            if d == 0:
                raise AssertionError("the oracle got an exact zero delta: declare the exact case")
            lost = 0
            if base != 0:
                eb = abs(base).numerator.bit_length() - abs(base).denominator.bit_length()
                if abs(d) < mpf(2) ** (eb - 80):  # far below every 62-bit gap of base
                    step = Fraction(2) ** (eb - 90)
                    return base + step if d > 0 else base - step
                v = mpf(base.numerator) / base.denominator + d
                # cancellation: the sum's relative error grows by the bits it lost
                lost = max(eb, mpmath.frexp(d)[1]) - mpmath.frexp(v)[1] if v else prec
            else:
                v = d
            if v == 0:
                raise AssertionError("cancellation to zero in the oracle")
            e = mpmath.frexp(v)[1]
            if e > FAR:
                return _far(1 if v > 0 else -1, True)
            if e < -FAR:
                return _far(1 if v > 0 else -1, False)
            got = _cell_midpoint(v, prec - max(lost, 0)) if prec - lost > CELL + 8 else None
        if got is not None:
            return got
        prec *= 2
    raise AssertionError(f"the oracle cannot decide the rounding of {s.base} + delta: an exact "
                         f"case it does not know?")


def _m(x) -> mpf:
    return mpf(x)


# --------------------------------------------------------------------- per function
def _exp(x):
    if x != x:
        return NAN
    if x == 0:
        return Fraction(1)
    if math.isinf(x):
        return INF if x > 0 else 0.0
    if abs(x) > 770:  # e**770 > 2**1110
        return _far(1, x > 0)
    return _Sum(0, lambda: mpmath.exp(_m(x)))


def _exp2(x):
    if x != x:
        return NAN
    if math.isinf(x):
        return INF if x > 0 else 0.0
    if _is_int(x):
        k = int(x)
        if abs(k) > FAR:
            return _far(1, k > 0)
        return Fraction(2) ** k
    return _Sum(0, lambda: mpmath.power(2, _m(x)))


def _expm1(x):
    if x != x:
        return NAN
    if x == 0:
        return x
    if math.isinf(x):
        return INF if x > 0 else Fraction(-1)
    if x > 770:
        return _far(1, True)
    if x < -770:
        return _next_to(-1, 1)
    if x < -1:  # e**x - 1 = -1 + e**x
        return _Sum(-1, lambda: mpmath.exp(_m(x)))
    return _Sum(0, lambda: mpmath.expm1(_m(x)))


def _log_common(x, exact_at, value):
    if x != x or x < 0:
        return NAN
    if x == 0:
        return -INF
    if math.isinf(x):
        return INF
    k = exact_at(x)
    if k is not None:
        return Fraction(k) if k else 0.0
    return _Sum(0, value)


def _log(x):
    return _log_common(x, lambda v: 0 if v == 1 else None, lambda: mpmath.log(_m(x)))


def _log2(x):
    def exact_at(v):
        m, e = math.frexp(v)
        return e - 1 if m == 0.5 else None

    return _log_common(x, exact_at, lambda: mpmath.log(_m(x), 2))


def _log10(x):
    def exact_at(v):
        f = Fraction(v)
        if f.denominator != 1:
            return None
        n, k = f.numerator, 0
        while n % 10 == 0:
            n //= 10
            k += 1
        return k if n == 1 else None

    return _log_common(x, exact_at, lambda: mpmath.log10(_m(x)))


def _log1p(x):
    if x != x or x < -1:
        return NAN
    if x == -1:
        return -INF
    if x == 0:
        return x
    if math.isinf(x):
        return INF
    return _Sum(0, lambda: mpmath.log1p(_m(x)))


def _odd_zero(fn, inf_value=NAN):
    """An odd function with ``f(±0) = ±0``."""

    def f(x):
        if x != x:
            return NAN
        if x == 0:
            return x
        if math.isinf(x):
            return inf_value(x) if callable(inf_value) else inf_value
        return _Sum(0, lambda: fn(_m(x)))

    return f


def _cos(x):
    if x != x or math.isinf(x):
        return NAN
    if x == 0:
        return Fraction(1)
    return _Sum(0, lambda: mpmath.cos(_m(x)))


def _cosh(x):
    if x != x:
        return NAN
    if math.isinf(x) or abs(x) > 770:
        return INF if math.isinf(x) else _far(1, True)
    if x == 0:
        return Fraction(1)
    return _Sum(0, lambda: mpmath.cosh(_m(x)))


def _tanh(x):
    if x != x:
        return NAN
    if x == 0:
        return x
    if math.isinf(x):
        return Fraction(1 if x > 0 else -1)
    if abs(x) < 1:
        return _Sum(0, lambda: mpmath.tanh(_m(x)))
    s = 1 if x > 0 else -1
    if abs(x) > 400:  # 1 - tanh|x| < 2 e**-800
        return _next_to(s, -s)
    # tanh(x) = s (1 - 2 / (e**(2|x|) + 1))
    return _Sum(s, lambda: -s * 2 / (mpmath.exp(2 * abs(_m(x))) + 1))


def _asin(x):
    if x != x or abs(x) > 1:
        return NAN
    if x == 0:
        return x
    return _Sum(0, lambda: mpmath.asin(_m(x)))


def _acos(x):
    if x != x or abs(x) > 1:
        return NAN
    if x == 1:
        return 0.0
    return _Sum(0, lambda: mpmath.acos(_m(x)))


def _atan(x):
    if x != x:
        return NAN
    if x == 0:
        return x
    if math.isinf(x):
        return _Sum(0, lambda: mpmath.pi / 2 if x > 0 else -mpmath.pi / 2)
    return _Sum(0, lambda: mpmath.atan(_m(x)))


def _erf(x):
    if x != x:
        return NAN
    if x == 0:
        return x
    if math.isinf(x):
        return Fraction(1 if x > 0 else -1)
    if abs(x) < 1:
        return _Sum(0, lambda: mpmath.erf(_m(x)))
    s = 1 if x > 0 else -1
    if abs(x) > 30:  # erfc(z) < e**-(z**2)
        return _next_to(s, -s)
    return _Sum(s, lambda: -s * mpmath.erfc(abs(_m(x))))


def _erfc(x):
    if x != x:
        return NAN
    if x == 0:
        return Fraction(1)
    if math.isinf(x):
        return 0.0 if x > 0 else Fraction(2)
    if x > 40:
        return _far(1, False)
    if x < -30:
        return _next_to(2, -1)
    if x < 0:  # 2 - erfc(|x|)
        return _Sum(2, lambda: -mpmath.erfc(-_m(x)))
    return _Sum(0, lambda: mpmath.erfc(_m(x)))


def _sigmoid(x):
    if x != x:
        return NAN
    if x == 0:
        return Fraction(1, 2)
    if math.isinf(x):
        return Fraction(1) if x > 0 else 0.0
    if abs(x) > 770:
        return _next_to(1, -1) if x > 0 else _far(1, False)
    if x > 0:  # 1 - 1 / (1 + e**x)
        return _Sum(1, lambda: -1 / (1 + mpmath.exp(_m(x))))
    return _Sum(0, lambda: 1 / (1 + mpmath.exp(-_m(x))))


def _x_times(x, one_minus, small):
    """``x * s(x)`` where ``s -> 1`` for large x: ``x - x * one_minus()`` for x > 0, else
    ``x * small()``."""
    if x > 0:
        return _Sum(x, lambda: -_m(x) * one_minus())
    return _Sum(0, lambda: _m(x) * small())


def _limits(x, f, tail=770.0):
    """NaN, ±0, ±inf of ``x * s(x)`` (s -> 1 at +inf, 0 at -inf, fast), its tails beyond
    ``±tail`` (``x`` minus a tiny amount, a tiny negative value), else ``f(x)``."""
    if x != x:
        return NAN
    if x == 0:
        return x
    if math.isinf(x):
        return INF if x > 0 else -0.0
    if x > tail:
        return _next_to(x, -1)
    if x < -tail:
        return _far(-1, False)
    return f(x)


def _silu(x):
    return _limits(x, lambda v: _x_times(v, lambda: 1 / (1 + mpmath.exp(_m(v))),
                                         lambda: 1 / (1 + mpmath.exp(-_m(v)))))


def _gelu(x):
    # x Phi(x), Phi(x) = erfc(-x / sqrt(2)) / 2; 1 - Phi(x) = erfc(x / sqrt(2)) / 2
    return _limits(x, lambda v: _x_times(
        v, lambda: mpmath.erfc(_m(v) / mpmath.sqrt(2)) / 2,
        lambda: mpmath.erfc(-_m(v) / mpmath.sqrt(2)) / 2), tail=60.0)


def _gelu_tanh(x):
    # 0.5 x (1 + tanh(z)) = x / (1 + e**(-2z)), z = sqrt(2/pi) (x + 0.044715 x**3)
    def z(v):
        t = _m(v)
        return mpmath.sqrt(2 / mpmath.pi) * (t + mpf(44715) / 1000000 * t**3)

    return _limits(x, lambda v: _x_times(v, lambda: 1 / (1 + mpmath.exp(2 * z(v))),
                                         lambda: 1 / (1 + mpmath.exp(-2 * z(v)))), tail=30.0)


def _mish(x):
    # tanh(log(1 + u)) = ((1+u)**2 - 1) / ((1+u)**2 + 1), u = e**x
    def one_minus(v):
        u = mpmath.exp(_m(v))
        return 2 / ((1 + u) ** 2 + 1)

    def small(v):
        u = mpmath.exp(_m(v))
        return u * (u + 2) / ((1 + u) ** 2 + 1)

    return _limits(x, lambda v: _x_times(v, lambda: one_minus(v), lambda: small(v)))


def _softplus(x, beta=1.0, threshold=20.0):
    if x != x:
        return NAN
    u = None if math.isinf(x) else Fraction(x) * Fraction(beta)
    if math.isinf(x):
        if (x > 0) == (beta > 0):  # beta x = +inf > threshold: the input
            return x
        return 0.0 if beta > 0 else -0.0
    if u > Fraction(threshold):
        return Fraction(x) if x else x
    mb = mpf(beta)
    if u < -770:  # log1p(e**u) / beta: below 2**-1100 in magnitude
        return _far(1 if beta > 0 else -1, False)
    if u > 0:  # (u + log1p(e**-u)) / beta = x + log1p(e**-u) / beta
        return _Sum(x, lambda: mpmath.log1p(mpmath.exp(-_m(x) * mb)) / mb)
    return _Sum(0, lambda: mpmath.log1p(mpmath.exp(_m(x) * mb)) / mb)


def _logit(x, eps=None):
    if x != x:
        return NAN
    if eps is not None:  # clamp into [eps, 1 - eps]; logit(1 - eps) = -logit(eps)
        if x < eps:
            x = eps
        elif x == INF or (x < INF and Fraction(x) > 1 - Fraction(eps)):
            v = _logit(eps)
            return _Sum(-v.base, lambda: -v.delta()) if isinstance(v, _Sum) else -v
    if x < 0 or x > 1:
        return NAN
    if x == 0:
        return -INF
    if x == 1:
        return INF
    if x == 0.5:
        return 0.0
    if not 0.25 <= x <= 0.75:  # log(x) - log1p(-x): no cancellation out there
        return _Sum(0, lambda: mpmath.log(_m(x)) - mpmath.log1p(-_m(x)))
    f = Fraction(x)
    r = (2 * f - 1) / (1 - f)  # logit(x) = log1p((2x - 1) / (1 - x)), exactly
    return _Sum(0, lambda: mpmath.log1p(mpf(r.numerator) / r.denominator))


def _atan2(y, x):
    if y != y or x != x:
        return NAN
    sy = -1 if math.copysign(1.0, y) < 0 else 1
    if y == 0:
        if x > 0 or (x == 0 and math.copysign(1.0, x) > 0):
            return y  # ±0
        return _Sum(0, lambda: sy * +mpmath.pi)
    if math.isinf(y):
        if x == INF:
            return _Sum(0, lambda: sy * mpmath.pi / 4)
        if x == -INF:
            return _Sum(0, lambda: sy * 3 * mpmath.pi / 4)
        return _Sum(0, lambda: sy * mpmath.pi / 2)
    if x == 0:
        return _Sum(0, lambda: sy * mpmath.pi / 2)
    if x == INF:
        return math.copysign(0.0, y)
    if x == -INF:
        return _Sum(0, lambda: sy * +mpmath.pi)
    return _Sum(0, lambda: mpmath.atan2(_m(y), _m(x)))


def _pow(x, y):
    # C99 F.9.4.4
    if y == 0:
        return Fraction(1)
    if x == 1:
        return Fraction(1)
    if x != x or y != y:
        return NAN
    odd = _is_odd_int(y)
    if x == 0:
        neg = math.copysign(1.0, x) < 0 and odd
        if y < 0:
            return -INF if neg else INF
        return -0.0 if neg else 0.0
    if x == -1 and math.isinf(y):
        return Fraction(1)
    if y == -INF:
        return INF if abs(x) < 1 else 0.0
    if y == INF:
        return 0.0 if abs(x) < 1 else INF
    if x == -INF:
        if y < 0:
            return -0.0 if odd else 0.0
        return -INF if odd else INF
    if x == INF:
        return 0.0 if y < 0 else INF
    if x < 0 and not _is_int(y):
        return NAN
    sign = -1 if (x < 0 and odd) else 1
    ax = abs(x)
    fx = Fraction(ax)
    if _is_int(y):
        k = int(y)
        m, e = math.frexp(ax)
        if m == 0.5:  # a power of two: exactly 2**(k (e - 1))
            p = k * (e - 1)
            return sign * (_far(1, p > 0) if abs(p) > FAR else Fraction(2) ** p)
        size = (fx.numerator.bit_length() + fx.denominator.bit_length()) * abs(k)
        if size <= 20000:
            v = fx**k
            vb = v.numerator.bit_length() - v.denominator.bit_length()
            if abs(vb) > FAR:
                return _far(sign, vb > 0)
            return sign * v
        return _Sum(0, lambda: sign * mpmath.power(_m(ax), k))
    # y = m / 2**j: x**y is rational when x is an exact 2**j-th power
    fy = Fraction(y)
    j = fy.denominator.bit_length() - 1
    if j <= 8 and abs(fy.numerator) <= 64:
        root = _exact_root(fx, 2**j)
        if root is not None:
            return sign * root ** fy.numerator
    return _Sum(0, lambda: sign * mpmath.power(_m(ax), _m(y)))


def _exact_root(q: Fraction, n: int):
    """The rational ``n``-th root of ``q > 0``, or None."""
    out = []
    for v in (q.numerator, q.denominator):
        r = round(v ** (1.0 / n)) if v < 2**1000 else None
        if r is None:
            return None
        found = None
        for c in (r - 1, r, r + 1):
            if c > 0 and c**n == v:
                found = c
        if found is None:
            return None
        out.append(found)
    return Fraction(out[0], out[1])


FUNCTIONS = {
    "exp": _exp, "exp2": _exp2, "expm1": _expm1, "log": _log, "log2": _log2, "log10": _log10,
    "log1p": _log1p,
    "sin": _odd_zero(mpmath.sin), "cos": _cos, "tan": _odd_zero(mpmath.tan),
    "sinh": _odd_zero(mpmath.sinh, lambda x: x), "cosh": _cosh, "tanh": _tanh,
    "asin": _asin, "acos": _acos, "atan": _atan, "erf": _erf, "erfc": _erfc,
    "sigmoid": _sigmoid, "silu": _silu, "gelu": _gelu, "gelu_tanh": _gelu_tanh, "mish": _mish,
    "softplus": _softplus, "logit": _logit, "atan2": _atan2, "pow": _pow,
}
BINARY = ("atan2", "pow")


def exact(name: str, *args, **params):
    """The function value at float inputs as the oracle holds it: a float (NaN, ±inf, an exact
    zero) or a Fraction that rounds like it into every format of at most 60 bits."""
    key = (name, tuple(float(a).hex() for a in args), tuple(sorted(params.items())))  # ±0
    hit = _CACHE.get(key)
    if hit is None:
        with mpmath.workprec(PREC):
            v = FUNCTIONS[name](*args, **params)
        if isinstance(v, _Sum):
            v = _resolve(v)
        elif isinstance(v, Fraction) and v == 0:
            v = 0.0
        hit = _CACHE[key] = v
    return hit


def exacts(name: str, *arrays, **params) -> list:
    cols = [np.asarray(a, dtype=np.float64).reshape(-1).tolist() for a in arrays]
    return [exact(name, *row, **params) for row in zip(*cols, strict=True)]


# ============================================================================ rounding
def _clamp32(v):
    """A Fraction beyond 2**±900 as ±2**±900: the same rounding into formats of at most 32
    bits (whose ranges end far inside), and within :func:`family_oracle.rd53`'s range."""
    if not isinstance(v, Fraction):
        return v
    b = abs(v).numerator.bit_length() - abs(v).denominator.bit_length()
    if b > 900:
        return Fraction(2) ** 900 * (1 if v > 0 else -1)
    if b < -900:
        return Fraction(1, 2**900) * (1 if v > 0 else -1)
    return v


def encode(values):
    """``(a, sticky)``: ``a = RD53(v)`` and whether ``v > a`` (values clamped for <= 32 bits)."""
    n = len(values)
    a = np.empty(n)
    sticky = np.zeros(n, dtype=bool)
    for k, v in enumerate(values):
        v = _clamp32(v)
        if isinstance(v, float):
            a[k] = v
        else:
            a[k], sticky[k] = rd53(v)
    return a, sticky


def round_float32(a, sticky, mode, rule="ieee"):
    """Values given as ``a = RD53(v)`` and ``sticky`` rounded once into float32 in ``mode``:
    every float32 and every midpoint of two is a float64, so ``v >= T`` exactly when ``a >=
    T``. The neighbours come from numpy's float32 cast and ``nextafter``."""
    a = np.asarray(a, dtype=np.float64)
    sticky = np.asarray(sticky, dtype=bool)
    big = float(np.finfo(np.float32).max)
    beyond = 2.0**128
    out = np.full(a.shape, np.nan)
    special = np.isnan(a) | np.isinf(a)
    out = np.where(np.isinf(a), a, out)
    zero = a == 0
    out = np.where(zero, a, out)
    fin = ~(special | zero)
    af = np.where(fin, a, 1.0)
    st = sticky & fin
    with np.errstate(over="ignore"):
        c = af.astype(np.float32)
        lo32 = np.where(c.astype(np.float64) > af, np.nextafter(c, np.float32(-np.inf)), c)
        hi32 = np.nextafter(lo32, np.float32(np.inf))
    lo = lo32.astype(np.float64)
    hi = hi32.astype(np.float64)
    lo = np.where(lo == -np.inf, -beyond, lo)
    hi = np.where(hi == np.inf, beyond, hi)
    lo_odd = (lo32.view(np.uint32) & 1).astype(bool) & (lo != 0) & (np.abs(lo) != beyond)
    hi_odd = (hi32.view(np.uint32) & 1).astype(bool) & (hi != 0) & (np.abs(hi) != beyond)
    pos = af > 0
    r = pick_neighbour(af, lo, hi, lo_odd, hi_odd, st, mode)
    over = np.abs(r) > big
    ov_pos = overflow_value(big, True, True, False, mode, rule)
    ov_neg = overflow_value(big, True, True, True, mode, rule)
    r = np.where(over, np.where(pos, ov_pos, ov_neg), r)
    r = np.where(~over & (r == 0), np.where(pos, 0.0, -0.0), r)
    return np.where(fin, r, out)


def round_exact(values, fmt, mode, rule=None) -> np.ndarray:
    """Oracle values (from :func:`exact`) rounded once into a real float format."""
    fmt = er.dtype(fmt)
    if fmt.bits <= 16:
        a, sticky = encode(values)
        return table(fmt).round(a, sticky, mode, rule)
    if fmt.name == "float32":
        a, sticky = encode(values)
        return round_float32(a, sticky, mode, rule or "ieee")
    return np.array([_rnd64(v, fmt, mode, rule) for v in values], dtype=np.float64)


def _rnd64(v, fmt, mode, rule):
    if isinstance(v, float):
        return v if v == v else NAN
    return _rnd_mpfr(v, fmt, mode, rule)


def expected(name, fmt, mode, *arrays, rule=None, **params) -> np.ndarray:
    """The function at the inputs, rounded once into ``fmt`` in ``mode``: float64 values."""
    return round_exact(exacts(name, *arrays, **params), fmt, mode, rule)


# ============================================================================ hardness
def hardness(values, fmt) -> np.ndarray:
    """Per value, the distance (in ulps of ``fmt``, a format of at most 16 bits) from the
    function value to the nearest rounding boundary of any mode: a value of the format (the
    directed modes' boundaries) or a midpoint of two (the nearest modes'). Exact values of the
    format, specials and values outside its finite range get inf."""
    tb: Table = table(fmt)
    T = tb.values
    out = np.full(len(values), np.inf)
    for k, v in enumerate(values):
        if not isinstance(v, Fraction):
            continue
        v = _clamp32(v)
        fv = float(v)
        i = int(np.searchsorted(T, fv, side="right")) - 1
        if i < 0 or i + 1 >= T.size:
            continue
        lo, hi = Fraction(float(T[i])), Fraction(float(T[i + 1]))
        if v == lo:
            continue  # exact in the format: not a hard case
        gap = hi - lo
        mid = (lo + hi) / 2
        d = min(abs(v - lo), abs(v - hi), abs(v - mid)) / gap
        out[k] = float(d)
    return out


def hardest(name: str, fmt, k: int = 3, floor: float = 2.0**-24, **params) -> list:
    """The ``k`` inputs of a format of at most 16 bits whose function values lie nearest a
    rounding boundary of the format (see :func:`hardness`), among those at least ``floor`` ulps
    away (nearer ones are the asymptotic regimes, ``sin(x) = x - x**3/6`` for tiny x, ``tanh(x)
    = 1 - ...`` for large x), and the nearest of those: ``[(x, distance in ulps), ...]``."""
    from family_oracle import all_values

    x = all_values(er.dtype(fmt))
    d = hardness(exacts(name, x, **params), fmt)
    order = np.argsort(d, kind="stable")
    trivial = [int(i) for i in order if d[i] < floor][:1]
    real = [int(i) for i in order if floor <= d[i] < np.inf][:k]
    return [(float(x[i]), float(d[i])) for i in trivial + real]


# ============================================================================ derivatives
def _deriv(name: str, x: float):
    """``f'(x)`` as PyTorch's backward formula gives it at the specials (a float: ±0, ±inf,
    NaN), a Fraction where it is rational, else a function of mpmath's working precision."""
    m = lambda: _m(x)  # noqa: E731
    if x != x:
        return NAN
    inf = math.isinf(x)
    pos = x > 0
    neg0 = x == 0 and math.copysign(1.0, x) < 0
    if name in ("exp", "expm1", "exp2"):
        if inf:
            return INF if pos else 0.0
        if x < -800:
            return _far(1, False)
        if name == "exp2":
            return lambda: mpmath.log(2) * mpmath.power(2, m())
        return Fraction(1) if x == 0 else (lambda: mpmath.exp(m()))
    if name in ("log", "log2", "log10"):
        if inf:
            return 0.0 if pos else -0.0
        if x == 0:
            return -INF if neg0 else INF
        if name == "log":
            return 1 / Fraction(x)
        base = 2 if name == "log2" else 10
        return lambda: 1 / (m() * mpmath.log(base))
    if name == "log1p":
        if inf:
            return 0.0 if pos else -0.0
        if x == -1:
            return INF
        return 1 / (1 + Fraction(x))
    if name in ("sin", "cos", "tan"):
        if inf:
            return NAN
        if name == "sin":
            return Fraction(1) if x == 0 else (lambda: mpmath.cos(m()))
        if name == "cos":
            return (0.0 if neg0 else -0.0) if x == 0 else (lambda: -mpmath.sin(m()))
        return Fraction(1) if x == 0 else (lambda: 1 / mpmath.cos(m()) ** 2)
    if name == "sinh":
        if inf:
            return INF
        return Fraction(1) if x == 0 else (lambda: mpmath.cosh(m()))
    if name == "cosh":
        if inf:
            return INF if pos else -INF
        return x if x == 0 else (lambda: mpmath.sinh(m()))
    if name in ("tanh", "sigmoid", "erf", "erfc"):
        sign = -1 if name == "erfc" else 1
        if inf or abs(x) > 800:
            return (0.0 if sign > 0 else -0.0) if inf else _far(sign, False)
        if name == "tanh":
            return Fraction(1) if x == 0 else (lambda: 1 / mpmath.cosh(m()) ** 2)
        if name == "sigmoid":
            e = lambda: mpmath.exp(-abs(m()))  # noqa: E731
            return Fraction(1, 4) if x == 0 else (lambda: e() / (1 + e()) ** 2)
        return lambda: sign * 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-m() ** 2)
    if name in ("asin", "acos"):
        sign = 1 if name == "asin" else -1
        if inf or abs(x) > 1:
            return NAN
        if abs(x) == 1:
            return sign * INF
        return Fraction(sign) if x == 0 else (lambda: sign / mpmath.sqrt(1 - m() ** 2))
    if name == "atan":
        if inf:
            return 0.0
        return 1 / (1 + Fraction(x) ** 2)
    raise KeyError(name)


def exact_grad(name: str, g: float, x: float):
    """``g * f'(x)`` as :func:`exact` holds values (PyTorch's formula at the specials: IEEE
    products and quotients of them)."""
    key = ("grad:" + name, (float(g).hex(), float(x).hex()), ())
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    with mpmath.workprec(PREC):
        h = _deriv(name, x)
        if g != g:
            v = NAN
        elif isinstance(h, float):
            gs = g if (g == 0 or math.isinf(g)) else math.copysign(1.0, g)
            v = gs * h
        elif g == 0 or math.isinf(g):
            positive = (h > 0) if isinstance(h, Fraction) else (h() > 0)
            v = g * (1.0 if positive else -1.0)
        elif isinstance(h, Fraction):
            v = Fraction(g) * h
            b = abs(v).numerator.bit_length() - abs(v).denominator.bit_length()
            if abs(b) > FAR:
                v = _far(1 if v > 0 else -1, b > 0)
        else:
            v = _Sum(0, lambda: _m(g) * h())
    if isinstance(v, _Sum):
        v = _resolve(v)
    _CACHE[key] = v
    return v


def exact_grads(name: str, g, x) -> list:
    gs = np.asarray(g, dtype=np.float64).reshape(-1).tolist()
    xs = np.asarray(x, dtype=np.float64).reshape(-1).tolist()
    return [exact_grad(name, a, b) for a, b in zip(gs, xs, strict=True)]
