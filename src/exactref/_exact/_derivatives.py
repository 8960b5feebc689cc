"""Derivatives of the real functions, exact: ``grad * f'(x)`` rounded once, and pow's partial
derivatives summed over the copies broadcasting made of an operand (private).

A derivative is a record, :class:`Derivative` (``OpSpec.derivative`` of its op; the
derivatives of the kernel's functions are :data:`DERIVATIVES`' attributes, pow's partials
:data:`POW_PARTIALS`); :func:`gradient` and :func:`partial` take the record, not a name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from ._engine import ExactArray
from ._functions import _gelu_tanh_z, _sigmoid_iv, _tail_threshold
from ._mpfr import (
    _W0,
    _W_MAX,
    _context,
    _decide,
    _far,
    _from_objects,
    _g,
    _Iv,
    _Near,
    _round_fraction,
    _unique_rows,
    _ziv,
)

__all__ = ["DERIVATIVES", "POW_PARTIALS", "Derivative", "Partials", "gradient", "partial",
           "root_derivative"]

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

    return Derivative(special, exact, enclose, near=near)


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

    return Derivative(special, den=_den_logit, mask=mask)


@dataclass(frozen=True)
class Derivative:
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
_LOG = _sp({"inf": 0.0, "-inf": -0.0, "0": _INF, "-0": -_INF})
_GELU_ERF = Derivative(_nan_at_infinities, _at_zero(Fraction(1, 2)), _h_gelu,
                       near=_above(lambda P: math.sqrt(2 * _tail_threshold(P)) + 1),
                       tiny=_negligible_below(-110.0))
_GELU_TANH = Derivative(_nan_at_infinities, _at_zero(Fraction(1, 2)), _h_gelu_tanh,
                        near=_above(lambda P: max(25.0, _tail_threshold(P) / 1.2)),
                        tiny=_negligible_below(-50.0))
_TANH_FORMULA = "tanh"  # gelu's approximate= value that picks the tanh formula


def _gelu_derivative(params):
    """gelu's derivative for ``approximate``: the erf formula's, or the tanh formula's."""
    return _GELU_TANH if params.get("approximate") == _TANH_FORMULA else _GELU_ERF


#: The derivatives of the kernel's functions, each a record (``OpSpec.derivative`` of its op).
DERIVATIVES = SimpleNamespace(
    exp=Derivative(_sp({"inf": _INF, "-inf": 0.0}), _at_zero(1), _h_exp),
    expm1=Derivative(_sp({"inf": _INF, "-inf": 0.0}), _at_zero(1), _h_exp),
    exp2=Derivative(_sp({"inf": _INF, "-inf": 0.0}), None, _h_exp2),
    log=Derivative(_LOG, den=lambda x: x),
    log2=Derivative(_LOG, None, _h_log_base(2)),
    log10=Derivative(_LOG, None, _h_log_base(10)),
    log1p=Derivative(_sp({"inf": 0.0, "-inf": -0.0}), den=_den_log1p),
    sin=Derivative(_sp({"inf": _NAN, "-inf": _NAN}), _at_zero(1), _h_cos),
    cos=Derivative(_sp({"inf": _NAN, "-inf": _NAN, "0": -0.0, "-0": 0.0}), None, _h_minus_sin),
    tan=Derivative(_sp({"inf": _NAN, "-inf": _NAN}), _at_zero(1), _h_sec2),
    sinh=Derivative(_sp({"inf": _INF, "-inf": _INF}), _at_zero(1), _h_cosh),
    cosh=Derivative(_sp({"inf": _INF, "-inf": -_INF, "0": 0.0, "-0": -0.0}), None, _h_sinh),
    tanh=Derivative(_sp({"inf": 0.0, "-inf": 0.0}), _at_zero(1), _h_sech2),
    sigmoid=Derivative(_sp({"inf": 0.0, "-inf": 0.0}), _at_zero(Fraction(1, 4)), _h_sigmoid),
    erf=Derivative(_sp({"inf": 0.0, "-inf": 0.0}), None, _h_erf),
    erfc=Derivative(_sp({"inf": -0.0, "-inf": -0.0}), None, _h_erfc),
    asin=Derivative(lambda x: _asin_special(x, 1.0), _at_zero(1), _h_asin),
    acos=Derivative(lambda x: _asin_special(x, -1.0), _at_zero(-1), _h_acos),
    atan=Derivative(_sp({"inf": 0.0, "-inf": 0.0}), den=_den_atan),
    silu=Derivative(_nan_at_infinities, _at_zero(Fraction(1, 2)), _h_silu,
                    near=_above(lambda P: 2 * _tail_threshold(P)),
                    tiny=_negligible_below(-1600.0)),
    mish=Derivative(_nan_at_infinities, _at_zero(Fraction(3, 5)), _h_mish,
                    near=_above(lambda P: _tail_threshold(P) / 2 + 8),
                    tiny=_negligible_below(-1600.0)),
    gelu=Derivative(bind=_gelu_derivative),
    softplus=Derivative(bind=_softplus_derivative),
    logit=Derivative(bind=_logit_derivative),
)


def root_derivative(n: int) -> Derivative:
    """The derivative of an odd root ``x**(1/n)`` (cbrt: ``root_derivative(3)``), ``1 / (n
    root(x)**(n - 1))``: rational where the root is (MPFR finds it exactly at 128 bits: the
    rational root of a float has at most 53 bits), else enclosed by MPFR's directed roots.
    Specials as the formula ``grad / (n root(x)**(n - 1))`` gives them in IEEE arithmetic:
    ``+inf`` at ±0 (``grad / +0``), ``+0`` at ±inf, NaN at NaN."""
    if n < 3 or n % 2 == 0:
        raise ValueError(f"root_derivative({n}): an odd root of degree 3 or more (sqrt and "
                         f"rsqrt are the root kernel's)")

    def exact(x):
        r = _context(128, "Z").rootn(x, n)
        if r.rc != 0:
            return None
        return Fraction(1, n) / Fraction(*r.as_integer_ratio()) ** (n - 1)

    def enclose(iv, x):
        r = (iv.D.rootn(x, n), iv.U.rootn(x, n))  # increasing
        power = r
        for _ in range(n - 2):
            power = iv.mul(power, r)
        return iv.div(iv.point(1), iv.mul(iv.point(n), power))

    return Derivative(_sp({"inf": 0.0, "-inf": 0.0, "0": _INF, "-0": _INF}), exact, enclose)


def _asin_special(x, sign):
    """``sign / sqrt(1 - x**2)``: NaN beyond [-1, 1] (and at NaN, ±inf), ``sign * inf`` at
    ±1."""
    if x != x or abs(x) > 1:
        return _NAN
    if abs(x) == 1:
        return sign * _INF
    return None


def _positive(d: Derivative, x: float, P: int) -> bool:
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


def _gradient_scalar(d: Derivative, g: float, x: float, P: int):
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


def gradient(d, grad, x, *, bits: int = 53, params=None) -> ExactArray:
    """``grad * f'(x)`` for the derivative record ``d`` (an op's ``OpSpec.derivative``, see
    :data:`DERIVATIVES`; ``params`` the op's, where ``d`` binds them: gelu's approximate,
    softplus's beta and threshold, logit's eps), exact, as an ExactArray that rounds like it into every format of at
    most ``bits`` bits: the gradient of one element, rounded once.

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = gradient(DERIVATIVES.tanh, np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [1.0, 0.8399486832280522]
    >>> ex = gradient(DERIVATIVES.silu, np.array([1.0, 1.0]), np.array([0.0, 1.0]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [0.5, 0.9276705118714867]
    """
    if not isinstance(d, Derivative):
        raise ValueError(f"{d!r} is not a derivative record: pass the op's "
                         f"(exactref.ops.get_op(name).derivative)")
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
@dataclass(frozen=True)
class Partials:
    """The partial derivatives of a function of two operands, by operand name: each
    ``term(g, x, y)`` gives one copy's term (a float, a Fraction or a :class:`_Term`)."""

    x: object
    y: object


#: pow's partial derivatives (``OpSpec.derivative`` of pow).
POW_PARTIALS = Partials(x=_pow_grad_x, y=_pow_grad_y)

_SUM_ZERO = object()  # an exact zero whose sign is IEEE's sum rule (zsign 0)



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


def partial(partials: Partials, wrt: str, grad, x, y, *, bits: int = 53, copies=None,
            single: bool = True) -> ExactArray:
    """The partial derivative of a function of two operands (its :class:`Partials`)
    with respect to operand ``wrt``, times ``grad``, at flat arrays of the output's size,
    summed over ``copies`` (an index array (operand size, K) of the output positions of each
    operand element; None: one copy each, in order), exact, as an ExactArray that rounds like
    the sum into every format of at most ``bits`` bits. ``single``: the operand has the
    output's dimensions (a lone term keeps its sign of zero).

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = partial(POW_PARTIALS, "x", np.ones(2), np.array([2.0, 4.0]), np.array([3.0, 0.5]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [12.0, 0.25]
    """
    term_of = getattr(partials, wrt)
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

