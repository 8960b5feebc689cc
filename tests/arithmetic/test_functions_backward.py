"""Backward of the real functions: ``grad * f'(x)``, exact and rounded once, against the
oracle (``functions_oracle.exact_grad``: mpmath, PyTorch's formulas at the specials) in every
rounding mode."""

from __future__ import annotations

import math
from fractions import Fraction

import family_oracle as fo
import functions_oracle as oracle
import mpmath
import numpy as np
import pytest
from family_oracle import SUMZERO, all_values, assert_same
from mpmath import mpf

import exactref as er
from exactref._exact import POW_PARTIALS
from exactref._exact import function_gradient as gradient
from exactref._exact import function_partial as partial
from kernel_records import derivative

R = er.Rounding
MODES = list(R)
#: the derivatives functions_oracle knows (the compositions' are below, with their own oracle)
def _oracle_knows(name: str) -> bool:
    try:
        oracle.exact_grads(name, np.ones(1), np.full(1, 0.5))
    except KeyError:
        return False  # a function whose derivative its own test file checks (cbrt)
    return True


NAMES = sorted(s.name for s in er.ops.select(family="functions") if s.derivative is not None
               and s.arity == 1 and s.exact.native is not None and _oracle_knows(s.name))


@pytest.fixture(autouse=True)
def _fresh_oracle_cache():
    yield
    oracle._CACHE.clear()


def _grads_of(fmt):
    """Gradient values of a format: ±1, ±0, a few others, inf and NaN where it has them."""
    fmt = er.dtype(fmt)
    vals = [1.0, -0.5, 0.0, -0.0, 3.0, -1.5, 0.25]
    if fmt.has_inf:
        vals.append(np.inf)
    if fmt.has_nan:
        vals.append(np.nan)
    return np.array(vals)


def _check(name, x, g, fmt):
    """The op in two modes; the kernel's exact values (at the format's precision) in all six."""
    fmt = er.dtype(fmt)
    vals = oracle.exact_grads(name, g, x)
    if not fmt.has_nan:
        keep = np.array([not (isinstance(v, float) and v != v) for v in vals], dtype=bool)
        x, g, vals = x[keep], g[keep], [v for v, k in zip(vals, keep, strict=True) if k]
    X, G = er.asarray(x, fmt), er.asarray(g, fmt)
    wants = {mode: oracle.round_exact(vals, fmt, mode) for mode in MODES}
    for mode in (R.NEAREST_EVEN, R.TOWARD_NEGATIVE):
        got = getattr(er, name).backward(X, G, rounding=mode).grad_x.rounded
        assert_same(got.numpy().astype(np.float64), wants[mode], lambda k: (x[k], g[k]),
                    f"{name}.backward in {fmt.name}, {mode.value}")
    ex = gradient(derivative(name), g, x, bits=fmt.precision)
    for mode in MODES:
        assert_same(ex.round(fmt, mode, fmt.default_overflow)[0], wants[mode],
                    lambda k: (x[k], g[k]), f"{name} gradient kernel, {mode.value}")


@pytest.mark.parametrize("fmt", ["float8_e5m2", "float6_e3m2fn",
                                 pytest.param("float8_e4m3fn", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", NAMES)
def test_every_value_of_small_formats(name, fmt):
    xs = all_values(fmt)
    gs = _grads_of(fmt)
    x, g = (a.reshape(-1) for a in np.meshgrid(xs, gs, indexing="ij"))
    _check(name, x, g, fmt)


@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_samples(name):
    rng = np.random.default_rng(13)
    xs = all_values("bfloat16")
    x = xs[rng.choice(xs.size, 400, replace=False)]
    g = er.asarray(rng.standard_normal(400) * 4.0, "bfloat16").numpy().astype(np.float64)
    _check(name, x, g, "bfloat16")


@pytest.mark.parametrize("name", NAMES)
def test_float32_samples(name):
    rng = np.random.default_rng(17)
    n = 600
    with np.errstate(invalid="ignore"):
        bits = rng.integers(0, 2**32, n // 2, dtype=np.uint64).astype(np.uint32) \
            .view(np.float32).astype(np.float64)
    bits[np.isnan(bits)] = np.nan
    x = np.concatenate([bits, rng.uniform(-4, 4, n // 2)]).astype(np.float32)
    g = (rng.standard_normal(x.size) * 10.0 ** rng.integers(-3, 4, x.size)).astype(np.float32)
    _check(name, x.astype(np.float64), g.astype(np.float64), "float32")


def test_the_records_name_their_backward():
    for name in NAMES + ["silu", "mish", "gelu", "softplus", "logit", "atan2", "pow"]:
        spec = er.ops.get_op(name)
        assert spec.backward is getattr(er, name).backward, name
        assert spec.family == "functions"
    assert all(spec.backward is not None for spec in er.ops.all_ops()
               if spec.family == "functions")


def test_backward_examples():
    x = er.asarray([0.0, 1.0, 0.0], "float32")
    g = er.asarray([1.0, 1.0, -0.0], "float32")
    assert er.sigmoid.backward(x, g).grad_x.rounded.tolist() == [0.25, 0.1966119259595871, -0.0]
    got = er.log.backward(x, g).grad_x.rounded.tolist()  # grad / x: -0 / +0 is NaN
    assert got[:2] == [np.inf, 1.0] and np.isnan(got[2])
    with pytest.raises(TypeError, match="no operand takes a gradient"):
        er.exp.backward(np.array([1, 2]), er.asarray([1.0, 1.0], "float32"))


# ====================================================================================
# silu, mish, gelu (both formulas), softplus, logit, atan2 and pow: an oracle of their own
# (mpmath at 256 bits and more, Fractions; PyTorch's formulas at the specials, measured on
# torch 2.13's CPU kernels), the values rounded by functions_oracle's rounding.
INF, NAN = float("inf"), float("nan")
GUARD = 128  # extra mpmath bits inside each derivative: cancellation near f' = 0 is covered


def _sig(t):
    return 1 / (1 + mpmath.exp(-t))


def _u_terms(x):
    u = mpmath.exp(mpf(x))
    return u, (1 + u) ** 2 + 1


def _gelu_rest(x):
    """``gelu'(x) - 1 = x phi(x) - Phi(-x)``; beyond x = 40 its bound ``x phi(x)`` (the rest
    lies in ``[phi(x) (x - 1/x), x phi(x)]``, by the Mills ratio: far below 2**-1000, where the
    oracle reads only its sign), as mpmath's erfc loses its accuracy out there."""
    t = mpf(x)
    phi = mpmath.exp(-t**2 / 2) / mpmath.sqrt(2 * mpmath.pi)
    return t * phi if x > 40 else t * phi - mpmath.erfc(t / mpmath.sqrt(2)) / 2


def _gtanh_z_c(x):
    t = mpf(x)
    k = mpmath.sqrt(2 / mpmath.pi)
    return 2 * k * (t + mpf(44715) / 10**6 * t**3), 2 * k * (1 + 3 * mpf(44715) / 10**6 * t**2)


# per function: f'(x) and f'(x) - 1 (for x > 1, without cancellation), as mpmath expressions
COMPOSITES = {
    "silu": (lambda x: _sig(mpf(x)) * (1 + mpf(x) * _sig(-mpf(x))),
             lambda x: _sig(-mpf(x)) * (mpf(x) * _sig(mpf(x)) - 1), Fraction(1, 2)),
    "mish": (lambda x: (lambda u, w: u * (u + 2) / w + 4 * mpf(x) * u * (1 + u) / w**2)(
        *_u_terms(x)),
             lambda x: (lambda u, w: -2 / w + 4 * mpf(x) * u * (1 + u) / w**2)(*_u_terms(x)),
             Fraction(3, 5)),
    "gelu": (lambda x: mpmath.erfc(-mpf(x) / mpmath.sqrt(2)) / 2
             + mpf(x) * mpmath.exp(-mpf(x) ** 2 / 2) / mpmath.sqrt(2 * mpmath.pi),
             lambda x: _gelu_rest(x), Fraction(1, 2)),
    "gelu_tanh": (lambda x: (lambda z, c: _sig(z) * (1 + mpf(x) * _sig(-z) * c))(
        *_gtanh_z_c(x)),
                  lambda x: (lambda z, c: _sig(-z) * (mpf(x) * _sig(z) * c - 1))(
                      *_gtanh_z_c(x)), Fraction(1, 2)),
}


def _exactly(h):
    """``h()`` at the working precision plus :data:`GUARD` bits."""
    def value():
        with mpmath.workprec(mpmath.mp.prec + GUARD):
            return +h()
    return value


def _times(g: float, h):
    """``g * h`` as the oracle holds values: an IEEE product where either is special, a
    Fraction or a resolved proxy otherwise (``h``: a float special, a Fraction, a function of
    mpmath's precision, or ``("one plus", rest)`` for ``1 + rest()``)."""
    if g != g:
        return NAN
    if isinstance(h, float):
        gs = g if (g == 0 or math.isinf(g)) else math.copysign(1.0, g)
        with np.errstate(invalid="ignore"):
            return float(np.float64(gs) * np.float64(h))
    if isinstance(h, Fraction):
        if g == 0 or math.isinf(g):
            return g * (1.0 if h > 0 else -1.0)
        v = Fraction(g) * h
        b = abs(v).numerator.bit_length() - abs(v).denominator.bit_length()
        return oracle._far(1 if v > 0 else -1, b > 0) if abs(b) > oracle.FAR else v
    with mpmath.workprec(oracle.PREC):
        if isinstance(h, tuple):  # 1 + rest
            rest = _exactly(h[1])
            if g == 0 or math.isinf(g):
                return g * 1.0
            return oracle._resolve(oracle._Sum(g, lambda: mpf(g) * rest()))
        hv = _exactly(h)
        if g == 0 or math.isinf(g):
            return g * (1.0 if hv() > 0 else -1.0)
        return oracle._resolve(oracle._Sum(0, lambda: mpf(g) * hv()))


def composite_grad(name, g, x):
    """silu, mish, gelu, gelu_tanh: PyTorch gives NaN at ±inf (``inf * 0`` in its formulas)."""
    full, minus_one, at_zero = COMPOSITES[name]
    if x != x or math.isinf(x) or g != g:
        return NAN
    if x == 0:
        return _times(g, at_zero)
    if x < -2000:  # |f'(x)| < e**x (2 + 2|x|) < 2**-2800 (gelu's smaller): g f' below 2**-1700
        return -g if (g == 0 or math.isinf(g)) else oracle._far(
            -1 if g > 0 else 1, False)
    if x > 1:
        return _times(g, ("one plus", lambda: minus_one(x)))
    return _times(g, lambda: full(x))


def softplus_grad(g, x, beta=1.0, threshold=20.0):
    """``sigmoid(beta x)``, 1 where ``beta x > threshold`` (PyTorch's softplus_backward)."""
    if x != x:
        return NAN
    if math.isinf(x):
        return _times(g, Fraction(1)) if (x > 0) == (beta > 0) else _times(g, 0.0)
    u = Fraction(x) * Fraction(beta)
    if u > Fraction(threshold):
        return _times(g, Fraction(1))
    if u == 0:
        return _times(g, Fraction(1, 2))
    if u > 1:
        return _times(g, ("one plus", lambda: -_sig(-mpf(u.numerator) / u.denominator)))
    return _times(g, lambda: _sig(mpf(u.numerator) / u.denominator))


def logit_grad(g, x, eps=None):
    """PyTorch's ``grad / (x * (1 - x))`` (derivatives.yaml; its vectorized CPU kernel): without
    eps NaN outside [0, 1] and an IEEE division by ±0 at ±0 and 1; with eps +0 (whatever g is)
    unless ``eps <= x <= 1 - eps`` (so at NaN too)."""
    if eps is not None and not (eps <= x <= 1 and Fraction(x) <= 1 - Fraction(eps)):
        return 0.0
    if x != x or x < 0 or x > 1:
        return NAN
    if x in (0.0, 1.0):  # x (1 - x) is x's zero at 0, +0 at 1
        return _times(g, -INF if math.copysign(1.0, x) < 0 else INF)
    den = Fraction(x) * (1 - Fraction(x))
    if g == 0 or math.isinf(g):
        return _times(g, Fraction(1))
    return _times(g, 1 / den)


def _c99_pow(x: float, e):
    """C99's pow (F.9.4.4) at a special base or exponent, ``e`` exact (a Fraction, or ±inf,
    NaN): a float."""
    if e == 0 or x == 1:
        return 1.0
    if x != x or e != e:
        return NAN
    odd = isinstance(e, Fraction) and e.denominator == 1 and e.numerator % 2 == 1
    if math.isinf(e):
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (e > 0) else INF
    if x == 0:
        neg = math.copysign(1.0, x) < 0 and odd
        return (-0.0 if neg else 0.0) if e > 0 else (-INF if neg else INF)
    if math.isinf(x):
        neg = x < 0 and odd
        return (-INF if neg else INF) if e > 0 else (-0.0 if neg else 0.0)
    assert x < 0 and e.denominator != 1
    return NAN


def _far_or(log2_magnitude: float, sign: int, value):
    """``value()`` unless the magnitude is far beyond 2**±1100 (then the oracle's proxy)."""
    if log2_magnitude > 1200:
        return oracle._far(sign, True)
    if log2_magnitude < -1200:
        return oracle._far(sign, False)
    return value()


def pow_grad_x(g, x, y):
    """``g * y * x**(y - 1)`` (PyTorch's pow_backward_self: +0 where y == 0)."""
    if y == 0:
        return 0.0
    if g != g:
        return NAN
    integer = math.isfinite(y) and y == math.floor(y)
    if not (math.isfinite(x) and math.isfinite(y) and x != 0 and (x > 0 or integer)):
        e = Fraction(y) - 1 if math.isfinite(y) else y
        return fo.mul(fo.ex(g), fo.mul(fo.ex(y), fo.ex(_c99_pow(x, e))))
    e = Fraction(y) - 1
    sign = (-1 if y < 0 else 1) * (-1 if (x < 0 and e.denominator == 1 and e.numerator % 2)
                                   else 1)
    if g == 0 or math.isinf(g):
        return g * sign
    size = math.log2(abs(g)) + math.log2(abs(y)) + float(e) * math.log2(abs(x))

    def value():
        fx = Fraction(x)
        m, k = math.frexp(abs(x))
        exact = None
        if e.denominator == 1:
            exact = fx ** e.numerator
        elif m == 0.5 and ((k - 1) * e).denominator == 1:
            exact = Fraction(2) ** int((k - 1) * e)
        else:
            j = e.denominator.bit_length() - 1
            if e.denominator == 1 << j and j <= 8:
                root = oracle._exact_root(fx, 1 << j)
                if root is not None:
                    exact = root ** e.numerator
        if exact is not None:
            return Fraction(g) * Fraction(y) * exact
        return ("irrational", lambda: mpf(g) * mpf(y) * mpmath.power(
            mpf(x), mpf(e.numerator) / e.denominator))

    return _far_or(size, sign * (1 if g > 0 else -1), value)


def pow_grad_y(g, x, y):
    """``g * x**y * log(x)`` (PyTorch's pow_backward_exponent: ``g * 0`` where x == 0 and
    y >= 0)."""
    if g != g:
        return NAN
    if not (math.isfinite(x) and math.isfinite(y) and x > 0 and x != 1):
        if x == 0 and y >= 0:
            h = 0.0
        elif x != x or x < 0:  # log(x) is NaN
            h = NAN
        else:
            log = NAN if (x != x or x < 0) else (-INF if x == 0 else (
                INF if x == INF else (0.0 if x == 1 else (1.0 if x > 1 else -1.0))))
            h = fo.mul(fo.ex(_c99_pow(x, Fraction(y) if math.isfinite(y) else y)), log)
        return fo.mul(fo.ex(g), h)
    sign = 1 if x > 1 else -1
    if g == 0 or math.isinf(g):
        return g * sign
    size = (math.log2(abs(g)) + y * math.log2(x) + math.log2(abs(math.log(x)))
            if abs(y * math.log2(x)) < 1e6 else y * math.log2(x))

    def value():
        return ("irrational", lambda: mpf(g) * mpmath.power(mpf(x), mpf(y)) * mpmath.log(mpf(x)))

    return _far_or(size, sign * (1 if g > 0 else -1), value)


def grad_sum(terms, single=True):
    """The oracle's value of a sum of gradient terms (from :func:`pow_grad_x`,
    :func:`pow_grad_y`: specials, exact rationals, ``("irrational", value)``) as PyTorch sums
    the copies of a broadcast operand: from +0 (IEEE's rules for the specials and for a zero
    sum); a single copy of an operand with the output's dimensions is its term."""
    if single and len(terms) == 1 and not isinstance(terms[0], tuple):
        return _plain(terms[0])
    plain = [t for t in terms if not isinstance(t, tuple)]
    irr = [t[1] for t in terms if isinstance(t, tuple)]
    if any(isinstance(t, float) and (t != t or math.isinf(t)) for t in plain) or not irr:
        return _plain(fo.ieee_sum([0.0] + [fo.ex(t) if isinstance(t, Fraction) else t
                                           for t in plain]))
    base = sum((Fraction(t) for t in plain if not isinstance(t, float)), Fraction(0))
    with mpmath.workprec(oracle.PREC):
        return oracle._resolve(oracle._Sum(base, _exactly(lambda: mpmath.fsum(f() for f in irr))))


def atan2_grads(g, y, x):
    """``(grad_y, grad_x) = (g x, -g y) / (x**2 + y**2)``, PyTorch's formula on the exact
    values (``1 / (x**2 + y**2)`` infinite at 0, zero at an infinite operand)."""
    if g != g or x != x or y != y:
        return NAN, NAN
    if math.isinf(x) or math.isinf(y):
        recip = 0.0
    elif x == 0 and y == 0:
        recip = INF
    else:
        recip = fo.ex(1 / (Fraction(x) ** 2 + Fraction(y) ** 2))
    return (fo.mul(fo.ex(g), fo.ex(x), recip), fo.mul(fo.ex(g), fo.minus(fo.ex(y)), recip))


def _plain(v):
    """A family_oracle value (mpq) as functions_oracle rounds them (Fraction)."""
    if isinstance(v, float) or v is SUMZERO or isinstance(v, Fraction):
        return v
    return Fraction(int(v.numerator), int(v.denominator))


def _round_all(vals, fmt, mode):
    vals = [fo.resolve(v, mode) if v is SUMZERO else _plain(v) for v in vals]
    return oracle.round_exact(vals, fmt, mode)


# ------------------------------------------------------------------------- unary: the cases
#: (id, op, the op's parameters, the kernel's name and parameters, the oracle)
UNARY = [
    ("silu", "silu", {}, ("silu", None), lambda g, x: composite_grad("silu", g, x)),
    ("mish", "mish", {}, ("mish", None), lambda g, x: composite_grad("mish", g, x)),
    ("gelu", "gelu", {}, ("gelu", None), lambda g, x: composite_grad("gelu", g, x)),
    ("gelu_tanh", "gelu", {"approximate": "tanh"}, ("gelu_tanh", None),
     lambda g, x: composite_grad("gelu_tanh", g, x)),
    ("softplus", "softplus", {}, ("softplus", {"beta": 1.0, "threshold": 20.0}), softplus_grad),
    ("softplus-beta2-t5", "softplus", {"beta": 2.0, "threshold": 5.0},
     ("softplus", {"beta": 2.0, "threshold": 5.0}),
     lambda g, x: softplus_grad(g, x, 2.0, 5.0)),
    ("softplus-beta-0.5-t60", "softplus", {"beta": -0.5, "threshold": 60.0},
     ("softplus", {"beta": -0.5, "threshold": 60.0}),
     lambda g, x: softplus_grad(g, x, -0.5, 60.0)),
    ("logit", "logit", {}, ("logit", {"eps": None}), logit_grad),
    ("logit-eps0.25", "logit", {"eps": 0.25}, ("logit", {"eps": 0.25}),
     lambda g, x: logit_grad(g, x, 0.25)),
    ("logit-eps0", "logit", {"eps": 0.0}, ("logit", {"eps": 0.0}),
     lambda g, x: logit_grad(g, x, 0.0)),
]
UNARY_IDS = [case[0] for case in UNARY]


def _check_unary(case, x, g, fmt, modes=(R.NEAREST_EVEN, R.TOWARD_NEGATIVE)):
    """``er.<op>.backward`` in ``modes`` and the kernel in all six, against the oracle."""
    _, op, params, (kname, kparams), grad_of = case
    fmt = er.dtype(fmt)
    vals = [grad_of(a, b) for a, b in zip(g.tolist(), x.tolist(), strict=True)]
    if not fmt.has_nan:
        keep = np.array([not (isinstance(v, float) and v != v) for v in vals], dtype=bool)
        x, g, vals = x[keep], g[keep], [v for v, k in zip(vals, keep, strict=True) if k]
    X, G = er.asarray(x, fmt), er.asarray(g, fmt)
    wants = {mode: _round_all(vals, fmt, mode) for mode in MODES}
    for mode in modes:
        got = getattr(er, op).backward(X, G, rounding=mode, **params).grad_x.rounded
        assert_same(got.numpy().astype(np.float64), wants[mode], lambda k: (x[k], g[k]),
                    f"{case[0]}.backward in {fmt.name}, {mode.value}")
    ex = gradient(derivative(kname), g, x, bits=fmt.precision, params=kparams)
    for mode in MODES:
        assert_same(ex.round(fmt, mode, fmt.default_overflow)[0], wants[mode],
                    lambda k: (x[k], g[k]), f"{case[0]} gradient kernel, {mode.value}")


@pytest.mark.parametrize("case", UNARY, ids=UNARY_IDS)
def test_compositions_every_value_of_float8_e5m2(case):
    xs = all_values("float8_e5m2")
    x, g = (a.reshape(-1) for a in np.meshgrid(xs, _grads_of("float8_e5m2"), indexing="ij"))
    _check_unary(case, x, g, "float8_e5m2")


def _interesting(case, fmt, rng, n):
    """Random values of ``fmt`` (every binade), the regions where each derivative turns (its
    zero near -1.2, the tails), and the specials."""
    fmt = er.dtype(fmt)
    spread = rng.standard_normal(n) * 2.0 ** rng.integers(-12, 7, n)
    near = np.concatenate([rng.uniform(-1.4, -0.6, n // 4), rng.uniform(5, 60, n // 8),
                           rng.uniform(0, 1, n // 4), [-0.0, 0.0, 1.0, 0.5, 0.25, 0.75, INF,
                                                       -INF, NAN, 19.999, 20.0, 20.5, 2.5]])
    x = er.asarray(np.concatenate([spread, near]), fmt).numpy().astype(np.float64)
    g = er.asarray(rng.standard_normal(x.size) * 4.0, fmt).numpy().astype(np.float64)
    return x, g


@pytest.mark.parametrize("case", UNARY, ids=UNARY_IDS)
def test_compositions_bfloat16_float32_float64_samples(case):
    rng = np.random.default_rng(len(case[0]))
    for fmt, n in (("bfloat16", 120), ("float32", 120), ("float64", 48)):
        x, g = _interesting(case, fmt, rng, n)
        _check_unary(case, x, g, fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", UNARY, ids=UNARY_IDS)
def test_compositions_every_value_of_16_bit_formats(case, fmt):
    xs = all_values(fmt)
    for gv in (1.0, -0.375):
        _check_unary(case, xs, np.full(xs.size, gv), fmt, modes=(R.NEAREST_EVEN,))


def test_composition_derivatives_at_their_tails_and_zeros():
    """The tails hold ``g`` and the sign of the rest (1 + tiny), the zeros of f' (silu's
    minimum near -1.278) need more bits: both against the oracle in float64, all modes."""
    x = np.array([-1.2784645427610738, -1.2784645427610737, -0.7517916243920, 30.0, 44.0,
                  100.0, 1e10, 1e300, -1e300, 2.0**-1074])
    for case in UNARY[:4]:
        _check_unary(case, x, np.ones(x.size), "float64", modes=tuple(MODES))


def test_composition_backward_parameters_are_checked():
    x, g = er.asarray([0.5], "float32"), er.asarray([1.0], "float32")
    with pytest.raises(ValueError, match="approximate"):
        er.gelu.backward(x, g, approximate="erf")
    with pytest.raises(ValueError, match="eps"):
        er.logit.backward(x, g, eps=0.75)
    with pytest.raises(ValueError, match="beta"):
        er.softplus.backward(x, g, beta=0.0)
    with pytest.raises(TypeError, match="takes beta=, threshold="):
        er.softplus.backward(x, g, alpha=2.0)
    with pytest.raises(TypeError, match="takes no parameters"):
        er.silu.backward(x, g, beta=2.0)


# ------------------------------------------------------------------------ pow and atan2
def _binary_expected(which, g, x, y, fmt, shapes=None):
    """Per mode, the oracle's gradients of pow (``which`` "x" or "y") rounded once into
    ``fmt``; ``shapes``: the operand's and the output's, for sums over broadcast copies."""
    term = pow_grad_x if which == "x" else pow_grad_y
    terms = [term(a, b, c) for a, b, c in zip(g.tolist(), x.tolist(), y.tolist(), strict=True)]
    if shapes is None:
        vals = [grad_sum([t]) for t in terms]
    else:
        o_shape, out_shape = shapes
        idx = np.broadcast_to(np.arange(int(np.prod(o_shape))).reshape(o_shape),
                              out_shape).reshape(-1)
        single = len(o_shape) == len(out_shape) and o_shape == out_shape
        vals = [grad_sum([terms[j] for j in np.flatnonzero(idx == i)], single)
                for i in range(int(np.prod(o_shape)))]
    return {mode: _round_all(vals, fmt, mode) for mode in MODES}


def _check_pow(x, y, g, fmt, modes=(R.NEAREST_EVEN, R.TOWARD_POSITIVE)):
    fmt = er.dtype(fmt)
    expected = {which: _binary_expected(which, g, x, y, fmt) for which in ("x", "y")}
    if not fmt.has_nan:  # a NaN gradient has no value there: those pairs are left out
        keep = ~(np.isnan(expected["x"][R.NEAREST_EVEN]) | np.isnan(expected["y"][R.NEAREST_EVEN]))
        x, y, g = x[keep], y[keep], g[keep]
        expected = {w: {m: v[keep] for m, v in e.items()} for w, e in expected.items()}
    X, Y, G = (er.asarray(a, fmt) for a in (x, y, g))
    for which in ("x", "y"):
        wants = expected[which]
        for mode in modes:
            res = er.pow.backward(X, Y, G, rounding=mode)
            got = (res.grad_x if which == "x" else res.grad_y).rounded
            assert_same(got.numpy().astype(np.float64), wants[mode],
                        lambda k: (x[k], y[k], g[k]), f"pow.backward grad_{which} in "
                        f"{fmt.name}, {mode.value}")
        ex = partial(POW_PARTIALS, which, g, x, y, bits=fmt.precision)
        for mode in MODES:
            assert_same(ex.round(fmt, mode, fmt.default_overflow)[0], wants[mode],
                        lambda k: (x[k], y[k], g[k]), f"pow partial {which}, {mode.value}")


SPECIALS = [-INF, -3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, INF, NAN]


def test_pow_backward_specials_as_torch():
    """C99's special bases and exponents, with grads 1, -0.5, 0, inf and NaN: PyTorch's
    formulas in IEEE arithmetic (the table was measured on torch 2.13's CPU autograd)."""
    x, y, g = (a.reshape(-1) for a in np.meshgrid(SPECIALS, SPECIALS,
                                                  [1.0, -0.5, 0.0, INF, NAN], indexing="ij"))
    _check_pow(x, y, g, "float32")


def test_pow_backward_pins_torch_special_values():
    """A few entries of the table measured on torch 2.13 (float64 autograd), pinned."""
    x = er.asarray([-0.0, -0.0, 0.0, -2.0, 0.5, 1.0, float("nan"), -float("inf")], "float64")
    y = er.asarray([-2.0, 2.0, float("inf"), 0.5, float("inf"), float("nan"), 1.0, 1.0],
                   "float64")
    r = er.pow.backward(x, y, er.asarray([1.0] * 8, "float64")).rounded
    assert r.grad_x.tolist()[:2] == [INF, -0.0]
    assert np.isnan(r.grad_x.tolist()[2]) and np.isnan(r.grad_x.tolist()[3])
    assert r.grad_x.tolist()[6:] == [1.0, 1.0]  # y * pow(x, 0) = 1 even at NaN and -inf
    assert r.grad_y.tolist()[:3] == [-INF, 0.0, 0.0]  # x == 0 and y >= 0: grad * 0
    assert r.grad_y.tolist()[4:6] == [-0.0, 0.0]  # 0 * log(0.5); 1 * log(1)


def test_pow_backward_every_pair_of_float6_e3m2fn():
    xs = all_values("float6_e3m2fn")
    x, y = (a.reshape(-1) for a in np.meshgrid(xs, xs, indexing="ij"))
    rng = np.random.default_rng(5)
    g = rng.choice(all_values("float6_e3m2fn"), x.size)
    _check_pow(x, y, g, "float6_e3m2fn")


def _pow_samples(fmt, rng, n):
    """Positive bases of every binade and exponents of every size (overflow, underflow,
    exact powers), negative bases with integer exponents, and 4**(k/2)-style exact cases."""
    fmt = er.dtype(fmt)
    x = np.concatenate([np.abs(rng.standard_normal(n)) * 2.0 ** rng.integers(-20, 20, n),
                        -rng.integers(1, 9, n // 4).astype(float), [4.0, 9.0, 16.0, 0.25]])
    y = np.concatenate([rng.standard_normal(n) * 2.0 ** rng.integers(-6, 6, n),
                        rng.integers(-6, 7, n // 4).astype(float), [1.5, 0.5, -0.75, 2.5]])
    x, y = (er.asarray(a, fmt).numpy().astype(np.float64) for a in (x, y))
    g = er.asarray(rng.standard_normal(x.size), fmt).numpy().astype(np.float64)
    return x, y, g


def test_pow_backward_float32_float64_samples():
    rng = np.random.default_rng(23)
    for fmt, n in (("bfloat16", 120), ("float32", 120), ("float64", 40)):
        _check_pow(*_pow_samples(fmt, rng, n), fmt)


def test_pow_backward_sums_over_broadcast_copies():
    """``x`` of shape (3, 1) and ``y`` of shape (1, 4): each gradient the exact sum of its
    copies' terms, rounded once (the terms' sum cancels in part: grads of both signs)."""
    rng = np.random.default_rng(29)
    fmt = er.dtype("float32")
    x = er.asarray(np.abs(rng.standard_normal((3, 1))) * 3 + 0.1, fmt)
    y = er.asarray(rng.standard_normal((1, 4)) * 2, fmt)
    g = er.asarray(rng.standard_normal((3, 4)), fmt)
    xf, yf, gf = (np.broadcast_to(a.numpy().astype(np.float64), (3, 4)).reshape(-1)
                  for a in (x, y, g))
    for mode in (R.NEAREST_EVEN, R.TOWARD_NEGATIVE):
        res = er.pow.backward(x, y, g, rounding=mode)
        for which, o_shape, got in (("x", (3, 1), res.grad_x), ("y", (1, 4), res.grad_y)):
            want = _binary_expected(which, gf, xf, yf, fmt, (o_shape, (3, 4)))[mode]
            assert got.rounded.shape == o_shape
            assert_same(got.rounded.numpy().astype(np.float64).reshape(-1), want,
                        lambda k: k, f"pow grad_{which} summed, {mode.value}")


def test_pow_backward_exact_cancellation_of_copies():
    """Copies whose terms cancel exactly give an exact zero, +0 in nearest and -0 toward -inf
    (IEEE's sum rule, as a sum from +0): rational terms (``4**-0.5``) and irrational ones
    (``2**-0.5``: the copies' coefficients at one point are summed before any rounding)."""
    x = er.asarray([[4.0], [2.0]], "float32")
    y = er.asarray([[0.5, 0.5]], "float32")
    g = er.asarray([[1.0, -1.0], [2.0, -2.0]], "float32")
    for mode, zero in ((R.NEAREST_EVEN, "+"), (R.TOWARD_NEGATIVE, "-")):
        gx = er.pow.backward(x, y, g, rounding=mode).grad_x.rounded.numpy()
        assert (gx == 0).all() and (np.signbit(gx).all() if zero == "-" else
                                    not np.signbit(gx).any())


def test_atan2_backward_every_pair_and_specials():
    xs = np.concatenate([all_values("float6_e2m3fn"), SPECIALS])
    y, x = (a.reshape(-1) for a in np.meshgrid(xs, xs, indexing="ij"))
    rng = np.random.default_rng(31)
    g = rng.choice(np.array([1.0, -0.5, 3.0, 0.0, INF, NAN]), x.size)
    Y, X, G = (er.asarray(a, "float32") for a in (y, x, g))
    vals = [atan2_grads(a, b, c) for a, b, c in zip(g.tolist(), y.tolist(), x.tolist(),
                                                    strict=True)]
    for mode in (R.NEAREST_EVEN, R.TOWARD_ZERO):
        res = er.atan2.backward(Y, X, G, rounding=mode)
        for k, (name, got) in enumerate((("grad_y", res.grad_y), ("grad_x", res.grad_x))):
            want = _round_all([_plain(v[k]) for v in vals], "float32", mode)
            assert_same(got.rounded.numpy().astype(np.float64), want,
                        lambda i: (y[i], x[i], g[i]), f"atan2.backward {name}, {mode.value}")


def test_atan2_backward_broadcast_and_mixed_formats():
    """``y`` float16 of shape (2, 1), ``x`` float32 of shape (3,): each gradient in its own
    operand's format and shape, the copies summed exactly and rounded once."""
    y = er.asarray([[0.5], [-3.0]], "float16")
    x = er.asarray([1.0, -2.0, 0.25], "float32")
    g = er.asarray([[1.0, 2.0, -1.0], [0.5, 0.5, 0.5]], "float32")
    res = er.atan2.backward(y, x, g)
    assert res.grad_y.rounded.dtype is er.dtype("float16")
    assert res.grad_x.rounded.shape == (3,)
    yf, xf, gf = (np.broadcast_to(a.numpy().astype(np.float64), (2, 3)) for a in (y, x, g))
    for (name, got, axis, fmt) in (("grad_y", res.grad_y, 1, "float16"),
                                   ("grad_x", res.grad_x, 0, "float32")):
        k = 0 if name == "grad_y" else 1
        terms = [atan2_grads(a, b, c)[k] for a, b, c in
                 zip(gf.reshape(-1), yf.reshape(-1), xf.reshape(-1), strict=True)]
        terms = np.array(terms, dtype=object).reshape(2, 3)
        sums = [_plain(fo.ieee_sum([0.0] + list(row)))
                for row in (terms if axis == 1 else terms.T)]
        want = _round_all(sums, fmt, R.NEAREST_EVEN)
        assert_same(got.rounded.numpy().astype(np.float64).reshape(-1), want, lambda i: i,
                    f"atan2 {name} summed")


def test_pow_of_integer_exponent_is_the_exact_product():
    """``pow(x, 3)`` is ``x * x * x`` exactly, rounded once (MPFR's pow is correctly
    rounded): random float32 ``x`` of every binade, every mode, against Fractions."""
    rng = np.random.default_rng(37)
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(400) * 2.0 ** rng.integers(-50, 50, 400)).astype(np.float32)
    x = x.astype(np.float64)
    vals = [Fraction(v) ** 3 if v else v**3 for v in x.tolist()]
    for mode in MODES:
        got = er.pow(er.asarray(x, "float32"), 3.0, rounding=mode).rounded
        assert_same(got.numpy().astype(np.float64), oracle.round_exact(vals, "float32", mode),
                    lambda k: x[k], f"pow(x, 3) in float32, {mode.value}")


# ------------------------------------------------------------------------- integer pow
def _wrap(v: int, fmt) -> int:
    span = fmt.int_max - fmt.int_min + 1
    return (v - fmt.int_min) % span + fmt.int_min


def _torch_int_pow(a: int, b: int) -> int:
    """PyTorch's integer power of a tensor exponent, unbounded: negative exponents give 1 for
    a base of 1, ±1 for -1 and 0 otherwise (0 included)."""
    if b >= 0:
        return a**b
    return 1 if a == 1 else ((-1) ** (-b) if a == -1 else 0)


@pytest.mark.parametrize("fmt", ["int8", "uint8", "int16", "int32", "int64", "uint64"])
def test_integer_pow_wraps_saturates_and_raises(fmt):
    fmt = er.dtype(fmt)
    rng = np.random.default_rng(fmt.bits)
    lo = max(fmt.int_min, -40)
    x = rng.integers(lo, 41, 300)
    y = rng.integers(-3 if fmt.int_min < 0 else 0, 70, 300)
    x[:6], y[:6] = [0, 1, -1 if fmt.int_min < 0 else 1, 2, 0, 3], [0, 0, 5, 1, 7, 0]
    exact = [_torch_int_pow(int(a), int(b)) for a, b in zip(x, y, strict=True)]
    X, Y = er.asarray(x, fmt), er.asarray(y, fmt)
    assert er.pow(X, Y).rounded.tolist() == [_wrap(v, fmt) for v in exact]
    sat = [min(max(v, fmt.int_min), fmt.int_max) for v in exact]
    assert er.pow(X, Y, overflow="saturate").rounded.tolist() == sat
    bad = [i for i, v in enumerate(exact) if not fmt.int_min <= v <= fmt.int_max]
    if bad:
        with pytest.raises(OverflowError, match=rf"element \({bad[0]},\) is .*\*\*{y[bad[0]]}"):
            er.pow(X, Y, overflow="error")


def test_integer_pow_of_huge_exponents_wraps_exactly():
    """Powers far beyond the format are never computed: their residue mod 2**64 (Python's
    three-argument pow) wraps as the exact power would."""
    x = er.asarray([3, -3, 2, -2, 7], "int64")
    y = er.asarray([2**62 + 1, 2**62 + 1, 100, 101, 10**18], "int64")
    want = [_wrap(pow(a, b, 2**64), er.dtype("int64")) for a, b in
            zip([3, -3, 2, -2, 7], [2**62 + 1, 2**62 + 1, 100, 101, 10**18], strict=True)]
    assert er.pow(x, y).rounded.tolist() == want
    assert er.pow(x, y, overflow="saturate").rounded.tolist() == [
        2**63 - 1, -2**63, 2**63 - 1, -2**63, 2**63 - 1]


def test_integer_pow_errors():
    x = er.asarray([2, 3], "int32")
    with pytest.raises(ValueError, match="negative integer exponent"):
        er.pow(x, -1)
    with pytest.raises(TypeError, match="no bool result"):
        er.pow(er.asarray([True], "bool"), er.asarray([True], "bool"))
    assert er.pow(x, er.asarray([-1, -2], "int32")).rounded.tolist() == [0, 0]
    assert er.pow(x, 2.0).rounded.dtype is er.dtype("float32")  # a float exponent: floats


def test_integer_operands_are_read_in_the_gradients_format():
    """An integer base takes no gradient and is read as PyTorch reads it, converted into the
    gradient's format first: 2**40 + 1 is 2**40 in float32 (atan2's operands alike)."""
    x = er.asarray([3, 2**40 + 1], "int64")
    y = er.asarray([1.5, 0.5], "float32")
    g = er.asarray([1.0, -2.0], "float32")
    r = er.pow.backward(x, y, g)
    assert r.grad_x is None
    want = _round_all([grad_sum([pow_grad_y(1.0, 3.0, 1.5)]),
                       grad_sum([pow_grad_y(-2.0, 2.0**40, 0.5)])], "float32", R.NEAREST_EVEN)
    assert_same(r.grad_y.rounded.numpy().astype(np.float64), want, lambda k: k, "pow grad_y")
    a = er.atan2.backward(er.asarray([2**30 + 1], "int64"), er.asarray([2.0], "float32"),
                          er.asarray([1.0], "float32"))
    assert a.grad_y is None
    want = _round_all([_plain(atan2_grads(1.0, 2.0**30, 2.0)[1])], "float32", R.NEAREST_EVEN)
    assert a.grad_x.rounded.tolist() == want.tolist()
    with pytest.raises(TypeError, match="no operand takes a gradient"):
        er.pow.backward(er.asarray([2], "int32"), er.asarray([2], "int32"),
                        er.asarray([1.0], "float32"))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
def test_pow_and_atan2_backward_every_pair_of_8_bit_formats(fmt):
    xs = all_values(fmt)
    x, y = (a.reshape(-1) for a in np.meshgrid(xs, xs, indexing="ij"))
    g = np.random.default_rng(47).choice(xs[np.isfinite(xs)], x.size)
    _check_pow(x, y, g, fmt, modes=(R.NEAREST_EVEN,))
    vals = [atan2_grads(a, b, c) for a, b, c in zip(g.tolist(), y.tolist(), x.tolist(),
                                                    strict=True)]
    res = er.atan2.backward(*(er.asarray(a, fmt) for a in (y, x, g)))
    for k, got in enumerate((res.grad_y, res.grad_x)):
        want = _round_all([_plain(v[k]) for v in vals], fmt, R.NEAREST_EVEN)
        keep = ~np.isnan(want) if not er.dtype(fmt).has_nan else slice(None)
        assert_same(got.rounded.numpy().astype(np.float64)[keep], want[keep],
                    lambda i: i, f"atan2.backward in {fmt}")


def test_complex_operands_are_refused_by_the_backward():
    z = er.asarray([1 + 1j], "complex64")
    for backward, args in ((er.exp.backward, (z, z)), (er.pow.backward, (z, z, z)),
                           (er.atan2.backward, (er.asarray([1.0], "float32"), z, z))):
        with pytest.raises(TypeError, match="complex"):
            backward(*args)
