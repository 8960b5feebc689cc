"""Backward of divide, reciprocal, sqrt, rsqrt, abs, negative, maximum, minimum, fmax, fmin and
clamp: each gradient one exact value rounded once.

1. **Oracle**: every element against an independent exact computation (Fractions, with IEEE
   754's specials; MPFR rounding via gmpy2; square roots of rationals rounded with integer square
   roots and a sticky bit; the complex square root in MPC at 2000 bits), for broadcast operands,
   signed zeros, infinities, NaN and ties, in float64, float32, bfloat16 and float16, in three
   rounding modes. The oracle implements PyTorch's formulas (derivatives.yaml) from scratch.
2. **PyTorch autograd, float64**: where PyTorch computes the same value with one rounding (the
   selections, negative, real abs, divide's grad_x) its gradient equals the reference bit for
   bit, signs of zero and NaN included. Elsewhere it rounds every step; each step is modelled
   with exactref ops (each correctly rounded, as PyTorch's float64 CPU division and
   multiplication are; its ``sqrt`` is faithful only: SLEEF's AVX512 ``sqrt_u05`` misses the
   correctly rounded value about once in 80), PyTorch's gradient is one of the modelled values,
   and those lie within the error budget of their roundings from the once-rounded reference.
3. **PyTorch's rules pinned**: ties of maximum/minimum (halved), of fmax/fmin (to x), clamp at
   its boundaries and with ``min >= max``, abs at ±0 and NaN, and rounding_mode's zeros.
"""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from arith_oracle import exact, mul, rnd, same, total
from arith_pools import real_pool

import exactref as er

torch = pytest.importorskip("torch")

R = er.Rounding
NAN, INF = math.nan, math.inf
DTYPES = ["float64", "float32", "bfloat16", "float16"]
MODES = [R.NEAREST_EVEN, R.TOWARD_ZERO, R.TOWARD_NEGATIVE]
BINARY_SHAPES = [((3, 1), (1, 4)), ((4,), (3, 4)), ((6,), (6,)), ((1, 5), (5,)), ((2, 3), (2, 1))]
ALL_OPS = ["divide", "reciprocal", "sqrt", "rsqrt", "abs", "negative", "maximum", "minimum",
           "fmax", "fmin", "clamp"]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


# ============================================================================ the oracle
def _shadow(v) -> float:
    """A finite nonzero Fraction as ±1.0; zeros and specials as themselves."""
    return (1.0 if v > 0 else -1.0) if isinstance(v, Fraction) else v


def div(a, b):
    """The exact quotient with IEEE 754's specials and sign of zero."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a / b
    with np.errstate(all="ignore"):
        return float(np.float64(_shadow(a)) / np.float64(_shadow(b)))


class Root:
    """The irrational value ``sign * sqrt(square)`` (``square`` a positive Fraction)."""

    def __init__(self, square: Fraction, sign: int):
        self.square, self.sign = square, sign


def rnd_root(v: Root, fmt, mode) -> float:
    """``sign * sqrt(Q)`` rounded once: ``m = isqrt(Q 4**K)`` on a grid ``2**-K`` finer than
    every rounding boundary of ``fmt`` near the value; if ``m**2`` is not ``Q 4**K`` the value
    lies strictly inside ``(m, m+1) 2**-K``, which holds no boundary, so ``(m + 1/2) 2**-K``
    rounds like it."""
    Q = v.square
    e = (Q.numerator.bit_length() - Q.denominator.bit_length()) // 2
    K = er.dtype(fmt).component.precision + 8 - e
    X = Q * Fraction(4) ** K
    m = math.isqrt(X.numerator // X.denominator)
    approx = Fraction(m) if m * m == X else Fraction(2 * m + 1, 2)
    return rnd(v.sign * approx / Fraction(2) ** K, fmt, mode)


def rnd_any(v, fmt, mode) -> float:
    return rnd_root(v, fmt, mode) if isinstance(v, Root) else rnd(v, fmt, mode)


def _copies(o_shape, out_shape):
    """For each element of an operand broadcast to ``out_shape``: its output indices."""
    lead = len(out_shape) - len(o_shape)
    groups = {}
    for idx in np.ndindex(*out_shape):
        own = tuple(0 if n == 1 else i for i, n in zip(idx[lead:], o_shape, strict=True))
        groups.setdefault(own, []).append(idx)
    return groups


def oracle_gradient(term, o_shape, out_shape, mode):
    """Per element of the operand (C order): its copies' exact terms summed as PyTorch's sums
    do (from +0), or, for one copy of an operand with the output's dimensions, the term itself.
    ``term(out_index)`` gives one copy's exact value (or a Root)."""
    single = len(o_shape) == len(out_shape) and all(
        a == b for a, b in zip(o_shape, out_shape, strict=True))
    groups = _copies(o_shape, out_shape)
    out = []
    for own in np.ndindex(*o_shape):
        terms = [term(i) for i in groups.get(own, [])]
        if single:
            out.append(terms[0])
        else:
            out.append(total([0.0] + terms, mode))
    return out


def _e(arr, idx):
    """The exact value of element ``idx`` of a float64 numpy array broadcast to the output."""
    return exact(float(arr[idx]))


def _b(values, shape, out_shape):
    return np.broadcast_to(np.asarray(values, dtype=np.float64).reshape(shape), out_shape)


# ------------------------------------------------------------- per-op oracle terms (real)
def divide_terms(x, y, g):
    return (lambda i: div(_e(g, i), _e(y, i)),
            lambda i: div(mul(-_e(g, i), _e(x, i)), mul(_e(y, i), _e(y, i))))


def reciprocal_term(x, g):
    return lambda i: div(-_e(g, i), mul(_e(x, i), _e(x, i)))


def sqrt_term(x, g):
    """``g / (2 sqrt(x))``: a Root for finite positive x and finite nonzero g; PyTorch's IEEE
    evaluation on the specials otherwise."""
    def term(i):
        gv, xv = float(g[i]), float(x[i])
        if math.isfinite(gv) and gv != 0 and math.isfinite(xv) and xv > 0:
            return Root(Fraction(gv) ** 2 / (4 * Fraction(xv)), 1 if gv > 0 else -1)
        with np.errstate(all="ignore"):
            return float(np.float64(gv) / (2 * np.sqrt(np.float64(xv))))
    return term


def rsqrt_term(x, g):
    """``-g / (2 x sqrt(x))``; specials as ``-0.5 * g * (1/sqrt(x))**3`` in IEEE."""
    def term(i):
        gv, xv = float(g[i]), float(x[i])
        if math.isfinite(gv) and gv != 0 and math.isfinite(xv) and xv > 0:
            return Root(Fraction(gv) ** 2 / (4 * Fraction(xv) ** 3), -1 if gv > 0 else 1)
        with np.errstate(all="ignore"):
            return float(-0.5 * np.float64(gv) * (1 / np.sqrt(np.float64(xv))) ** 3)
    return term


def abs_term(x, g):
    """``g * sgn(x)``, PyTorch's sgn: ±1, and +0 at ±0 and at NaN."""
    def term(i):
        xv = float(x[i])
        s = Fraction(1) if xv > 0 else Fraction(-1) if xv < 0 else 0.0
        return mul(_e(g, i), s)
    return term


def negative_term(g):
    return lambda i: -_e(g, i)  # a zero or special is a float: its sign flips too


def masked(keep, coef, g):
    """``g * coef`` where ``keep(i)``, +0 elsewhere (PyTorch's masked_fill / where)."""
    return lambda i: mul(_e(g, i), coef(i)) if keep(i) else 0.0


def _lt(a, b):
    return a < b  # Python float comparisons: exact, NaN unordered


def minmax_terms(op, x, y, g):
    """derivatives.yaml: ``where(x == y, g / 2, g).masked_fill_(x < y, 0)`` (maximum, x);
    fmax: ``g.masked_fill(!(x >= y | isnan(y)), 0)``."""
    half = Fraction(1, 2)

    def X(i):
        return float(x[i])

    def Y(i):
        return float(y[i])

    def coef(i):
        return half if X(i) == Y(i) else Fraction(1)

    if op == "maximum":
        return (masked(lambda i: not _lt(X(i), Y(i)), coef, g),
                masked(lambda i: not _lt(Y(i), X(i)), coef, g))
    if op == "minimum":
        return (masked(lambda i: not _lt(Y(i), X(i)), coef, g),
                masked(lambda i: not _lt(X(i), Y(i)), coef, g))
    one = lambda i: Fraction(1)  # noqa: E731
    if op == "fmax":
        to_x = lambda i: X(i) >= Y(i) or math.isnan(Y(i))  # noqa: E731
    else:
        to_x = lambda i: X(i) <= Y(i) or math.isnan(Y(i))  # noqa: E731
    return masked(to_x, one, g), masked(lambda i: not to_x(i), one, g)


def clamp_terms(x, lo, hi, g):
    """clamp_backward / clamp_backward_min_max (bounds None when absent)."""
    def v(a, i):
        return float(a[i]) if isinstance(a, np.ndarray) else float(a)

    def to_x(i):
        return (lo is None or v(x, i) >= v(lo, i)) and (hi is None or v(x, i) <= v(hi, i))

    def to_lo(i):
        return v(x, i) < v(lo, i) and (hi is None or v(lo, i) < v(hi, i))

    def to_hi(i):
        return v(x, i) > v(hi, i) or (lo is not None and v(hi, i) < v(lo, i))

    one = lambda i: Fraction(1)  # noqa: E731
    return masked(to_x, one, g), masked(to_lo, one, g), masked(to_hi, one, g)


# ------------------------------------------------------------------------- values
def _values(fmt, shape, rng, *, special=0.15):
    """Values of ``fmt`` (float64): random bit patterns with the format's specials mixed in."""
    n = int(np.prod(shape)) if shape else 1
    pool = real_pool(er.dtype(fmt), 64, rng)
    rand = real_pool(er.dtype(fmt), 64 + n, rng)[64:]
    pick = np.where(rng.random(n) < special, pool[rng.integers(0, pool.size, n)], rand)
    return pick.reshape(shape)


def _moderate(fmt, shape, rng, lo=-6, hi=6):
    """Finite nonzero values of ``fmt``, exponents in [lo, hi], with some signed zeros."""
    n = int(np.prod(shape)) if shape else 1
    v = rng.standard_normal(n) * 2.0 ** rng.integers(lo, hi, n)
    v = er.asarray(v, fmt).numpy().astype(np.float64)
    return v.reshape(shape)


def _er(values, fmt):
    return er.asarray(np.asarray(values, dtype=np.float64), fmt)


def _got(a: er.Array):
    """Flat float64 values of an er.Array's parts."""
    w = np.asarray(a.numpy())
    if np.iscomplexobj(w):
        w = w.astype(np.complex128).reshape(-1)
        return [w.real.copy(), w.imag.copy()]
    return [w.astype(np.float64).reshape(-1)]


def _check(result_array, expected, fmt, mode, what):
    """Every element of ``result_array`` (an er.Array) equals the oracle's value rounded once
    (bit for bit: signs of zero, NaN)."""
    __tracebackhide__ = True
    got = _got(result_array)[0]
    want = [rnd_any(v, fmt, mode) for v in expected]
    bad = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if not same(a, b)]
    assert not bad, (f"{what}: {len(bad)} of {len(want)} differ, first at {bad[0]}: got "
                     f"{got[bad[0]]!r}, oracle {want[bad[0]]!r}")


# ========================================================================= 1. the oracle
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", DTYPES)
def test_divide_oracle(fmt, mode):
    rng = _rng("divide", fmt, mode)
    for xs, ys in BINARY_SHAPES:
        out = np.broadcast_shapes(xs, ys)
        x, y, g = _values(fmt, xs, rng), _values(fmt, ys, rng), _values(fmt, out, rng)
        # a -0 quotient: its own sign as one copy, +0 (or -0 toward -inf) as a sum from +0
        x.reshape(-1)[0], g.reshape(-1)[0], y.reshape(-1)[0] = 0.0, 1.0, 3.0
        res = er.divide.backward(_er(x, fmt), _er(y, fmt), _er(g, fmt), rounding=mode)
        tx, ty = divide_terms(_b(x, xs, out), _b(y, ys, out), _b(g, out, out))
        _check(res.rounded.grad_x, oracle_gradient(tx, xs, out, mode), fmt, mode,
               f"grad_x {xs}x{ys}")
        _check(res.rounded.grad_y, oracle_gradient(ty, ys, out, mode), fmt, mode,
               f"grad_y {xs}x{ys}")


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", DTYPES)
def test_divide_many_copies_oracle(fmt, mode):
    """Long sums of quotients (40 copies), exact cancellations, sums of zeros of both signs
    and of +0 only, an infinity among finite copies, and a scalar divisor."""
    rng = _rng("divide-many", fmt, mode)
    x = _moderate(fmt, (1, 6), rng)
    y = _moderate(fmt, (40, 1), rng)
    g = _moderate(fmt, (40, 6), rng)
    g[:, 2] = np.where(np.arange(40) % 2, 1.0, -1.0)  # grad_x[2]: sum of ±1/y_k
    y[20:, 0] = y[:20, 0]  # pairs of copies: 1/y_k - 1/y_k cancels in column 2
    g[20:, 2] = -g[:20, 2]
    g[:, 3] = np.where(np.arange(40) % 3, 0.0, -0.0)  # zeros of both signs: -0 toward -inf
    g[:, 4] = 0.0 * np.sign(y[:, 0])  # zero quotients g / y of y's signs
    g[:, 5] = 0.0
    g[7, 5] = INF  # zeros and one infinite copy: an infinity
    res = er.divide.backward(_er(x, fmt), _er(y, fmt), _er(g, fmt), rounding=mode)
    tx, ty = divide_terms(_b(x, (1, 6), (40, 6)), _b(y, (40, 1), (40, 6)), g)
    want_x = oracle_gradient(tx, (1, 6), (40, 6), mode)
    assert want_x[2] == 0  # an exact cancellation: +0, or -0 toward -inf
    _check(res.rounded.grad_x, want_x, fmt, mode, "grad_x")
    _check(res.rounded.grad_y, oracle_gradient(ty, (40, 1), (40, 6), mode), fmt, mode, "grad_y")
    # every copy +0 (g = +0 over y > 0): +0 in every mode
    pos = np.abs(y)
    plus = er.divide.backward(_er(x, fmt), _er(pos, fmt), _er(np.zeros((40, 6)), fmt),
                              rounding=mode).rounded.grad_x.numpy().astype(np.float64)
    assert (plus == 0).all() and not np.signbit(plus).any()
    only = er.divide.backward(_er(x, fmt), 3.0, _er(x, fmt), rounding=mode)
    assert only.grad_y is None and only.rounded.grad_y is None


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", DTYPES)
@pytest.mark.parametrize("op", ["reciprocal", "sqrt", "rsqrt", "abs", "negative"])
def test_unary_oracle(op, fmt, mode):
    rng = _rng(op, fmt, mode)
    n = 160
    x, g = _values(fmt, (n,), rng), _values(fmt, (n,), rng)
    if op in ("sqrt", "rsqrt"):
        f = er.dtype(fmt).component
        # adversarial: powers of four (exact roots) beside subnormal gradients, so the exact
        # value is a tie or lands in the subnormal range; and perfect squares
        x[:24] = np.array([4.0, 16.0, 0.25, 1.0, 64.0, 1 / 16, 2.0, 9.0] * 3)
        g[:24] = np.concatenate([f.smallest_subnormal * np.arange(2, 10),
                                 f.smallest_normal * np.array([1, 3, 5, 7, 1.5, 2.5, 3, 6]),
                                 np.array([1.0, 3.0, -5.0, 7.0, -1.0, 0.1, 2.0, 3.0])])
        x[24:40] = np.abs(x[24:40])
        x, g = (er.asarray(v, fmt).numpy().astype(np.float64) for v in (x, g))
    term = {"reciprocal": reciprocal_term, "sqrt": sqrt_term, "rsqrt": rsqrt_term,
            "abs": abs_term}.get(op)
    term = term(x, g) if term else negative_term(g)
    res = getattr(er, op).backward(_er(x, fmt), _er(g, fmt), rounding=mode)
    _check(res.rounded, oracle_gradient(term, (n,), (n,), mode), fmt, mode, op)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", DTYPES)
@pytest.mark.parametrize("op", ["maximum", "minimum", "fmax", "fmin"])
def test_minmax_oracle(op, fmt, mode):
    rng = _rng(op, fmt, mode)
    for xs, ys in BINARY_SHAPES:
        out = np.broadcast_shapes(xs, ys)
        x, y, g = _values(fmt, xs, rng), _values(fmt, ys, rng), _values(fmt, out, rng)
        # ties: y repeats values of x (zeros of both signs among them)
        flat = y.reshape(-1)
        flat[::2] = rng.choice(np.concatenate([x.reshape(-1), [0.0, -0.0, NAN]]),
                               flat[::2].size)
        res = getattr(er, op).backward(_er(x, fmt), _er(y, fmt), _er(g, fmt), rounding=mode)
        tx, ty = minmax_terms(op, _b(x, xs, out), _b(y, ys, out), _b(g, out, out))
        _check(res.rounded.grad_x, oracle_gradient(tx, xs, out, mode), fmt, mode,
               f"grad_x {xs}x{ys}")
        _check(res.rounded.grad_y, oracle_gradient(ty, ys, out, mode), fmt, mode,
               f"grad_y {xs}x{ys}")


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", DTYPES)
def test_clamp_oracle(fmt, mode):
    rng = _rng("clamp", fmt, mode)
    pool = np.array([-1.0, -0.0, 0.0, 0.5, 1.0, 2.0, NAN, INF, -INF])
    for shapes in [((12,), (12,), (12,)), ((4, 3), (4, 1), (1, 3)), ((2, 5), (5,), None),
                   ((6,), None, (6,)), ((3, 4), 0.5, 1.0), ((7,), -0.0, None)]:
        xs = shapes[0]
        x = rng.choice(pool, xs) if rng.random() < 0.5 else _values(fmt, xs, rng)
        x.reshape(-1)[:4] = [0.0, -0.0, 1.0, 0.5]  # on the boundaries
        bounds = []
        for s in shapes[1:]:
            bounds.append(s if s is None or isinstance(s, float) else rng.choice(pool, s))
        lo, hi = bounds
        arrays = [b if b is None or isinstance(b, float) else _er(b, fmt) for b in bounds]
        out = np.broadcast_shapes(xs, *[b.shape for b in bounds if isinstance(b, np.ndarray)])
        g = _values(fmt, out, rng)
        res = er.clamp.backward(_er(x, fmt), *arrays, _er(g, fmt), rounding=mode)
        blo = lo if not isinstance(lo, np.ndarray) else _b(lo, lo.shape, out)
        bhi = hi if not isinstance(hi, np.ndarray) else _b(hi, hi.shape, out)
        tx, tlo, thi = clamp_terms(_b(x, xs, out), blo, bhi, _b(g, out, out))
        _check(res.rounded.grad_x, oracle_gradient(tx, xs, out, mode), fmt, mode, f"x {shapes}")
        for b, t, r in ((lo, tlo, res.grad_min), (hi, thi, res.grad_max)):
            if isinstance(b, np.ndarray):
                _check(r.rounded, oracle_gradient(t, b.shape, out, mode), fmt, mode,
                       f"bound {shapes}")
            else:
                assert r is None


@pytest.mark.parametrize("mode", [R.NEAREST_EVEN, R.TOWARD_ZERO, R.TOWARD_POSITIVE],
                         ids=lambda m: m.value)
def test_quotient_sums_on_a_boundary(mode):
    """Inexact quotients whose sum is a float (1/3 + 2/3 = 1, k copies of 3 / 3k): the sum is
    exact, not near (toward zero, 0.999... would be wrong); and a sum of four quotients."""
    x = er.asarray([[1.0]], "float64")
    y = er.asarray([3.0, 3.0, 5.0, 5.0 / 3], "float64")  # 5/3 rounds: 1/(5/3) is not 3/5
    g = er.asarray([[1.0, 2.0, -1.0, 1.0]], "float64")
    got = er.divide.backward(x, y, g, rounding=mode).rounded.grad_x.tolist()[0][0]
    want = Fraction(1, 3) + Fraction(2, 3) - Fraction(1, 5) + 1 / Fraction(5.0 / 3)
    assert got == rnd(want, er.dtype("float64"), mode)
    # sums on a float (1/3 + 7/6 = 1.5) and on a midpoint (1/3 + 2/3 + 3 2**-53, whose even
    # neighbour is above): the rounded terms' floors lie just below them
    for ys, gs, want in (([3.0, 6.0], [1.0, 7.0], Fraction(3, 2)),
                         ([3.0, 3.0, 1.0], [1.0, 2.0, 3 * 2.0**-53], 1 + Fraction(3, 2**53))):
        s = er.divide.backward(x, er.asarray(ys, "float64"), er.asarray([gs], "float64"),
                               rounding=mode)
        assert s.rounded.grad_x.tolist()[0][0] == rnd(want, er.dtype("float64"), mode)
    for k in (2, 3, 7, 64):
        y = er.asarray(np.full(k, 3.0 * k), "float32")  # k copies of 1/(3k): exactly 1/3 ...
        g = er.asarray(np.full((1, k), 1.0), "float32")
        s = er.divide.backward(er.asarray([[1.0]], "float32"), y, g, rounding=mode)
        assert s.rounded.grad_x.tolist()[0][0] == rnd(Fraction(1, 3), er.dtype("float32"), mode)
        g = er.asarray(np.full((1, k), 3.0), "float32")  # ... and exactly 1
        s = er.divide.backward(er.asarray([[1.0]], "float32"), y, g, rounding=mode)
        assert s.rounded.grad_x.tolist()[0][0] == 1.0


def test_mixed_formats_round_once():
    """float16 x and float32 y: the output and grad are float32, each gradient is rounded
    once into its own operand's format (PyTorch rounds into float32 first, then casts)."""
    rng = _rng("mixed")
    x = _values("float16", (3, 1), rng)
    y = _values("float32", (1, 4), rng)
    g = _values("float32", (3, 4), rng)
    for mode in MODES:
        res = er.divide.backward(_er(x, "float16"), _er(y, "float32"), _er(g, "float32"),
                                 rounding=mode)
        assert res.rounded.grad_x.dtype is er.dtype("float16")
        tx, ty = divide_terms(_b(x, (3, 1), (3, 4)), _b(y, (1, 4), (3, 4)), g)
        _check(res.rounded.grad_x, oracle_gradient(tx, (3, 1), (3, 4), mode), "float16", mode,
               "grad_x")
        _check(res.rounded.grad_y, oracle_gradient(ty, (1, 4), (3, 4), mode), "float32", mode,
               "grad_y")


# ---------------------------------------------------------------------- complex oracle
def _cvalues(shape, rng, fmt="complex128"):
    part = er.dtype(fmt).component.name
    re, im = _moderate(part, shape, rng), _moderate(part, shape, rng)
    z = np.empty(shape, np.complex128)
    z.real, z.imag = re, im
    return z


def _cf(z):
    return Fraction(float(z.real)), Fraction(float(z.imag))


def _cmul(a, b):
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


@pytest.mark.parametrize("mode", [R.NEAREST_EVEN, R.TOWARD_NEGATIVE], ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", ["complex128", "complex64"])
def test_complex_quotients_oracle(fmt, mode):
    """divide's ``g y / |y|^2`` and ``-g conj(x) y^2 / |y|^4`` and reciprocal's ``-g x^2 /
    |x|^4``, per part exact rationals (finite operands), summed over copies."""
    rng = _rng("cquot", fmt, mode)
    comp = er.dtype(fmt).component
    xs, ys, out = (3, 1), (1, 4), (3, 4)
    x, y, g = _cvalues(xs, rng, fmt), _cvalues(ys, rng, fmt), _cvalues(out, rng, fmt)
    x.reshape(-1)[0] = complex(2.0, 0.0)  # a real-valued element: zero imaginary parts
    res = er.divide.backward(er.asarray(x, fmt), er.asarray(y, fmt), er.asarray(g, fmt),
                             rounding=mode)
    X, Y, G = (np.broadcast_to(v, out) for v in (x, y, g))

    def q_x(i):
        gy = _cmul(_cf(G[i]), _cf(Y[i]))
        d = _cf(Y[i])[0] ** 2 + _cf(Y[i])[1] ** 2
        return gy[0] / d, gy[1] / d

    def q_y(i):
        xr, xi = _cf(X[i])
        gc = _cmul((-_cf(G[i])[0], -_cf(G[i])[1]), (xr, -xi))
        num = _cmul(_cmul(gc, _cf(Y[i])), _cf(Y[i]))
        d = (_cf(Y[i])[0] ** 2 + _cf(Y[i])[1] ** 2) ** 2
        return num[0] / d, num[1] / d

    for arr, q, shape in ((res.rounded.grad_x, q_x, xs), (res.rounded.grad_y, q_y, ys)):
        got = _got(arr)
        for part in (0, 1):
            want = oracle_gradient(lambda i, q=q, part=part: exact(q(i)[part]), shape, out, mode)
            wr = [rnd(v, comp, mode) for v in want]
            assert all(same(a, b) for a, b in zip(got[part], wr, strict=True)), (part, got, wr)
    r = er.reciprocal.backward(er.asarray(x, fmt), er.asarray(g[:, :1], fmt), rounding=mode)
    for part, got in enumerate(_got(r.rounded)):
        for i, z in enumerate(x.reshape(-1)):
            num = _cmul(_cmul((-_cf(g[i, 0])[0], -_cf(g[i, 0])[1]), _cf(z)), _cf(z))
            d = (_cf(z)[0] ** 2 + _cf(z)[1] ** 2) ** 2
            assert same(got[i], rnd(exact(num[part] / d), comp, mode)), (i, part)


@pytest.mark.parametrize("mode", [R.NEAREST_EVEN, R.TOWARD_ZERO], ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", ["complex128", "complex64"])
def test_complex_abs_oracle(fmt, mode):
    """``g x / |x|``: each part ``sign(g re) sqrt(g^2 re^2 / (re^2 + im^2))``; at 0, ``g *
    (+0)`` and +0; non-finite x, NaN parts."""
    rng = _rng("cabs", fmt, mode)
    comp = er.dtype(fmt).component
    n = 60
    x = _cvalues((n,), rng, fmt)
    x[:8] = [3 + 4j, complex(5, 0), complex(-0.0, 2), complex(2, -0.0), 1 + 1j, 0j,
             complex(INF, 1), complex(NAN, 0)]
    g = _moderate(comp.name, (n,), rng)
    g[5] = -1.0
    if fmt == "complex128":  # far apart parts: the approximations' scaling, subnormal results
        x[8:13] = [complex(1e-300, 1e300), complex(5e-324, 1.0), complex(1e308, 1e308),
                   complex(-1e308, 5e-324), complex(3e-320, -2e-320)]
        g[8:13] = [1.0, -3.0, 1e-300, 1e300, 2.0]
    got = _got(er.abs.backward(er.asarray(x, fmt), _er(g, comp.name), rounding=mode).rounded)
    for i in range(n):
        for part, p in enumerate((x[i].real, x[i].imag)):
            if not (math.isfinite(x[i].real) and math.isfinite(x[i].imag)):
                want = NAN
            elif x[i] == 0:
                want = g[i] * 0.0 if part == 0 else 0.0
            elif p == 0:
                want = g[i] * p  # the zero part: the product's sign
            else:
                sq = (Fraction(float(g[i])) * Fraction(float(p))) ** 2 / (
                    Fraction(float(x[i].real)) ** 2 + Fraction(float(x[i].imag)) ** 2)
                want = rnd_root(Root(sq, int(np.sign(g[i]) * np.sign(p))), comp, mode)
            assert same(got[part][i], want), (i, part, x[i], g[i], got[part][i], want)


def _csqrt_oracle(z: complex, g: complex):
    """``g / (2 conj(sqrt(z)))`` in MPC at 2000 bits: exact where the value is dyadic of fewer
    bits (the square roots then are), else far below every rounding boundary of 53 bits. A
    part under 2**-1500 of the value is an exact zero (``u = v`` when ``re(z) = 0``)."""
    with gmpy2.context(gmpy2.get_context(), precision=2000):
        s = gmpy2.sqrt(gmpy2.mpc(gmpy2.mpfr(z.real), gmpy2.mpfr(z.imag)))
        u, v = s.real, s.imag
        gr, gi = gmpy2.mpfr(g.real), gmpy2.mpfr(g.imag)
        d = 2 * (u * u + v * v)
        parts = [(gr * u - gi * v) / d, (gr * v + gi * u) / d]
        big = max(abs(p) for p in parts)
        return [Fraction(*map(int, p.as_integer_ratio())) if abs(p) > big * gmpy2.exp2(-1500)
                else None for p in parts]


@pytest.mark.parametrize("fmt", ["complex128", "complex64"])
def test_complex_sqrt_oracle(fmt):
    rng = _rng("csqrt", fmt)
    comp = er.dtype(fmt).component
    n = 40
    x, g = _cvalues((n,), rng, fmt), _cvalues((n,), rng, fmt)
    x[:8] = [3 + 4j, 4 + 0j, complex(-4, 0), complex(-4, -0.0), 2j, complex(0, -2), 5 + 12j,
             complex(2, 0)]
    g[:8] = [1 + 0j, 1 + 1j, 1 + 0j, 2 + 1j, 1 + 1j, 1 - 1j, 3 + 0j, 1 + 0j]
    if fmt == "complex128":  # far apart parts and magnitudes, subnormal and huge results
        x[8:16] = [complex(1e-300, 1e300), complex(5e-324, 1.0), complex(1e308, 1e308),
                   complex(-1e308, 5e-324), complex(3e-320, -2e-320), complex(1.0, 1e-200),
                   complex(-1.0, 1e-200), complex(-1.0, -1e-300)]
        g[8:16] = [complex(1e300, 1e-300), 1 + 1j, complex(1e-308, 1e308),
                   complex(5e-324, 5e-324), 1 - 1j, 3 + 2j, complex(1, 1e200),
                   complex(1e-300, 1)]
    x, g = (er.asarray(v, fmt).numpy().astype(np.complex128) for v in (x, g))
    for mode in (R.NEAREST_EVEN, R.TOWARD_NEGATIVE, R.TOWARD_POSITIVE):
        got = _got(er.sqrt.backward(er.asarray(x, fmt), er.asarray(g, fmt),
                                    rounding=mode).rounded)
        for i in range(n):
            for part, v in enumerate(_csqrt_oracle(complex(x[i]), complex(g[i]))):
                want = (-0.0 if mode is R.TOWARD_NEGATIVE else 0.0) if v is None else rnd(
                    v, comp, mode)
                assert same(got[part][i], want), (mode, i, part, x[i], g[i], got[part][i],
                                                  want)
    specials = er.sqrt.backward(er.asarray([0j, complex(INF, 1)], fmt),
                                er.asarray([1 + 0j, 1 + 0j], fmt)).rounded.numpy()
    assert np.isnan(specials.real).all() and np.isnan(specials.imag).all()


# ============================================================ 2. PyTorch autograd, float64
def _autograd(fn, tensors, grad):
    ts = [t.detach().clone().requires_grad_() for t in tensors]
    return torch.autograd.grad(fn(*ts), ts, grad)


def _bits_equal(ref: er.Array, t) -> np.ndarray:
    """Per element: the same float64 bits (NaN equal to NaN)."""
    a = np.asarray(ref.numpy(), dtype=np.float64).reshape(-1)
    b = t.detach().to(torch.float64).numpy().reshape(-1)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def _f64_with_specials(shape, rng):
    v = _moderate("float64", shape, rng, -30, 30).reshape(-1)
    k = v.size
    v[rng.random(k) < 0.08] = 0.0
    v[rng.random(k) < 0.08] = -0.0
    v[rng.random(k) < 0.04] = INF
    v[rng.random(k) < 0.04] = -INF
    v[rng.random(k) < 0.04] = NAN
    return torch.tensor(v.reshape(shape))


_SAME_MATH = {
    "negative": (1, torch.neg), "abs": (1, torch.abs), "maximum": (2, torch.maximum),
    "minimum": (2, torch.minimum), "fmax": (2, torch.fmax), "fmin": (2, torch.fmin),
    "divide_x": (2, torch.div),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", list(_SAME_MATH))
def test_torch_same_math_bit_for_bit(op, dtype):
    """One rounding (or none) in PyTorch too: its gradient is the reference, bit for bit,
    specials and signs of zero included (float32 too: PyTorch's float32 division is IEEE's;
    its float16 and bfloat16 ones divide in float32 first)."""
    rng = _rng("torch-same", op, dtype)
    arity, fn = _SAME_MATH[op]
    n = 400
    ts = [_f64_with_specials((n,), rng).to(getattr(torch, dtype)) for _ in range(arity)]
    if arity == 2 and op != "divide_x":
        ts[1][::3] = ts[0][::3]  # ties
    g = _f64_with_specials((n,), rng).to(ts[0].dtype)
    grads = _autograd(fn, ts, g)
    name = op.removesuffix("_x")
    ref = getattr(er, name).backward(*[t.numpy() for t in ts], g.numpy())
    pairs = [(ref.rounded.grad_x, grads[0])]
    if arity == 2 and op != "divide_x":
        pairs.append((ref.rounded.grad_y, grads[1]))
    for r, t in pairs:
        ok = _bits_equal(r, t)
        assert ok.all(), [(ts[0][i].item(), g[i].item(), t[i].item()) for i in
                          np.flatnonzero(~ok)[:5]]


def test_torch_clamp_bit_for_bit():
    rng = _rng("torch-clamp")
    n = 300
    pool = torch.tensor([-1.0, -0.0, 0.0, 0.5, 1.0, 2.0, NAN])
    x = pool[torch.tensor(rng.integers(0, 7, n))]
    lo = pool[torch.tensor(rng.integers(0, 7, n))]
    hi = pool[torch.tensor(rng.integers(0, 7, n))]
    g = _f64_with_specials((n,), rng)
    gx, glo, ghi = _autograd(torch.clamp, [x, lo, hi], g)
    ref = er.clamp.backward(x.numpy(), lo.numpy(), hi.numpy(), g.numpy())
    for r, t in ((ref.rounded.grad_x, gx), (ref.grad_min.rounded, glo),
                 (ref.grad_max.rounded, ghi)):
        assert _bits_equal(r, t).all()
    for lo_s, hi_s in ((0.0, 1.0), (None, 0.5), (-0.0, None), (1.0, 0.0)):
        (gx,) = _autograd(lambda t, a=lo_s, b=hi_s: torch.clamp(t, a, b), [x], g)
        ref = er.clamp.backward(x.numpy(), lo_s, hi_s, g.numpy())
        assert _bits_equal(ref.rounded, gx).all(), (lo_s, hi_s)


def _models_cover(models, t) -> np.ndarray:
    return er.any_of(*models).covers(t).mask.reshape(-1)


def _ulp_distance(ref: er.Array, t) -> np.ndarray:
    """|PyTorch - reference| in units of u |reference| (u = 2**-53), over finite normal
    references."""
    a = np.asarray(ref.numpy(), dtype=np.float64).reshape(-1)
    b = t.detach().numpy().reshape(-1)
    ok = np.isfinite(a) & (np.abs(a) >= 2.0**-1000) & (np.abs(a) <= 2.0**1000)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, np.abs(b - a) / (np.abs(a) * 2.0**-53), 0.0)


# The roundings PyTorch does beyond the reference, as steps (each correctly rounded, except
# sqrt: faithful), and the relative error they can add, in units of u = 2**-53 (to first order;
# a faithful sqrt errs by less than 2u, an error in r counts three times in r**3), plus the
# reference's own rounding u.
def _model_divide_y(x, y, g):
    """``-(g * ((x / y) / y))``: three roundings; budget 3u + u."""
    q = er.divide(er.divide(x, y).rounded, y).rounded
    return [er.negative(er.multiply(g, q).rounded)]


def _model_reciprocal(x, g):
    """``-(g * (r * r))``, ``r = 1/x``: r (u), r*r (2u + u), g * (u): 4u + u."""
    r = er.reciprocal(x).rounded
    return [er.negative(er.multiply(g, er.multiply(r, r).rounded).rounded)]


def _model_sqrt(x, g):
    """``g / (2 s)``, ``s`` either float64 neighbour of sqrt(x): 2u + u, + u."""
    return [er.divide(g, er.multiply(er.sqrt(x, rounding=m).rounded, 2).rounded)
            for m in (R.TOWARD_NEGATIVE, R.TOWARD_POSITIVE)]


def _model_rsqrt(x, g):
    """``(-0.5 g) * ((r * r) * r)``, ``r = 1 / s`` (s faithful) or ``rsqrt`` rounded either
    way: r (3u), r**3 (9u + 2u), the product (u): 12u + u."""
    rs = [er.divide(1.0, er.sqrt(x, rounding=m).rounded).rounded
          for m in (R.TOWARD_NEGATIVE, R.TOWARD_POSITIVE)]
    rs += [er.rsqrt(x, rounding=m).rounded for m in (R.TOWARD_NEGATIVE, R.TOWARD_POSITIVE)]
    h = er.multiply(g, -0.5).rounded
    return [er.multiply(h, er.multiply(er.multiply(r, r).rounded, r).rounded) for r in rs]


_MODELLED = {
    "divide_y": (torch.div, _model_divide_y, 4),
    "reciprocal": (torch.reciprocal, _model_reciprocal, 5),
    "sqrt": (torch.sqrt, _model_sqrt, 4),
    "rsqrt": (torch.rsqrt, _model_rsqrt, 13),
}


@pytest.mark.parametrize("op", list(_MODELLED))
def test_torch_modelled_roundings(op):
    """PyTorch's float64 gradient is one of the modelled step-by-step values (specials
    included), and it lies within the budget of its extra roundings from the reference."""
    fn, model, budget = _MODELLED[op]
    rng = _rng("torch-model", op)
    n = 2000
    arity = 2 if op == "divide_y" else 1
    ts = [_f64_with_specials((n,), rng) for _ in range(arity)]
    if op in ("sqrt", "rsqrt"):
        ts[0][: n // 2] = ts[0][: n // 2].abs()
    g = _f64_with_specials((n,), rng)
    got = _autograd(fn, ts, g)[-1]
    arrays = [er.asarray(t.numpy(), "float64") for t in ts]
    garr = er.asarray(g.numpy(), "float64")
    models = model(*arrays, garr)
    covered = _models_cover(models, got)
    assert covered.all(), [(ts[0][i].item(), g[i].item(), got[i].item()) for i in
                           np.flatnonzero(~covered)[:5]]
    name = op.removesuffix("_y")
    ref = getattr(er, name).backward(*arrays, garr).rounded
    ref = ref.grad_y if op == "divide_y" else ref
    dist = _ulp_distance(ref, got)
    assert dist.max() <= budget, dist.max()
    # and the extra roundings do show: PyTorch is not always the once-rounded value
    assert not _bits_equal(ref, got).all()


@pytest.mark.parametrize("shapes", [((3, 1), (1, 64)), ((64,), (5, 64)), ((1, 50), (40, 50))],
                         ids=str)
def test_torch_broadcast_sums(shapes):
    """PyTorch sums the copies' rounded values (``sum_to_size``): within ``(k - 1) u sum |t|``
    of their exact sum (t: its per-copy values, the same math as the reference's terms for
    grad_x and maximum) plus the reference's own rounding."""
    rng = _rng("torch-bcast", shapes)
    xs, ys = shapes
    x = torch.tensor(_moderate("float64", xs, rng, -20, 20))
    y = torch.tensor(_moderate("float64", ys, rng, -20, 20))
    y.reshape(-1)[::4] = x.reshape(-1)[0]  # ties for maximum
    out = torch.broadcast_shapes(x.shape, y.shape)
    g = torch.tensor(_moderate("float64", tuple(out), rng, -20, 20))
    for name, fn, per_copy in (
            ("divide", torch.div, lambda X, Y: g / Y),
            ("maximum", torch.maximum,
             lambda X, Y: torch.where(X == Y, g / 2, g).masked_fill(X < Y, 0))):
        gx = _autograd(fn, [x, y], g)[0]
        terms = per_copy(x.expand(out), y.expand(out))
        lead = len(out) - len(xs)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(xs) if n == 1 and
                                          out[lead + i] != 1)
        k = int(np.prod([out[a] for a in axes]))
        mag = terms.abs().sum(dim=axes).reshape(xs).numpy()
        ref = getattr(er, name).backward(x.numpy(), y.numpy(), g.numpy()).rounded.grad_x
        r = np.asarray(ref.numpy(), dtype=np.float64)
        u = 2.0**-53
        # the copies' values rounded (u each, divide only), their sum's k - 1 roundings
        bound = k * u * mag * (1 + 1e-9) + u * np.abs(r)
        assert (np.abs(gx.numpy() - r) <= bound).all(), name


# Complex arithmetic: PyTorch divides with a scaled (Smith-like) algorithm and multiplies by the
# textbook formula, so its parts' errors are bounded normwise: |torch - ref| <= budget u |ref|.
# Budgets from the steps: a complex division errs by at most about 5u normwise, a product
# sqrt(5) u, a faithful complex sqrt 2u, hypot and the real divisions u each; plus the
# reference's own u (per part: at most sqrt(2) u normwise).
_COMPLEX = {
    "divide": (lambda x, y: x / y, 2, (7, 16)),
    "reciprocal": (torch.reciprocal, 1, (14,)),
    "sqrt": (torch.sqrt, 1, (10,)),
    "abs": (torch.abs, 1, (6,)),
    "negative": (torch.neg, 1, (0,)),
}


@pytest.mark.parametrize("op", list(_COMPLEX))
def test_torch_complex128_within_budget(op):
    fn, arity, budgets = _COMPLEX[op]
    rng = _rng("torch-complex", op)
    n = 150 if op == "sqrt" else 600
    ts = [torch.tensor(_cvalues((n,), rng)) for _ in range(arity)]
    g = torch.tensor(_moderate("float64", (n,), rng) if op == "abs" else _cvalues((n,), rng))
    grads = _autograd(fn, ts, g)
    ref = getattr(er, op).backward(*[t.numpy() for t in ts], g.numpy())
    refs = [ref.rounded.grad_x] + ([ref.rounded.grad_y] if arity == 2 else [])
    for r, t, budget in zip(refs, grads, budgets, strict=True):
        a = np.asarray(r.numpy(), dtype=np.complex128)
        err = np.abs(t.numpy() - a) / (np.abs(a) * 2.0**-53)
        assert err.max() <= budget, (op, err.max())


# ============================================================ 3. PyTorch's rules, pinned
def _pin(er_grad: er.Array, torch_grad, expected):
    """The reference equals PyTorch and the values written out (bits, signs included)."""
    __tracebackhide__ = True
    assert _bits_equal(er_grad, torch_grad).all(), (er_grad.tolist(), torch_grad.tolist())
    want = torch.tensor(expected, dtype=torch.float64)
    assert _bits_equal(er_grad, want).all(), (er_grad.tolist(), expected)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_pinned_maximum_minimum_ties_are_halved(dtype):
    """derivatives.yaml: ``where(x == y, grad / 2, grad)``: equal values (-0 and +0 too) share
    the gradient; a NaN gives both operands the whole gradient."""
    td = getattr(torch, dtype)
    x = torch.tensor([1.0, 0.0, -0.0, NAN, 1.0, 3.0, 2.0], dtype=td)
    y = torch.tensor([1.0, -0.0, 0.0, 1.0, NAN, 2.0, 3.0], dtype=td)
    g = torch.tensor([1.0, -2.0, 4.0, 1.0, 1.0, 1.0, 1.0], dtype=td)
    for op, ex, ey in (("maximum", [0.5, -1.0, 2.0, 1.0, 1.0, 1.0, 0.0],
                        [0.5, -1.0, 2.0, 1.0, 1.0, 0.0, 1.0]),
                       ("minimum", [0.5, -1.0, 2.0, 1.0, 1.0, 0.0, 1.0],
                        [0.5, -1.0, 2.0, 1.0, 1.0, 1.0, 0.0])):
        gx, gy = _autograd(getattr(torch, op), [x, y], g)
        ref = getattr(er, op).backward(x, y, g).rounded
        _pin(ref.grad_x, gx, ex)
        _pin(ref.grad_y, gy, ey)


def test_pinned_fmax_fmin_ties_go_to_x():
    """fmax/fmin do not halve: ``x`` takes a tie whole, and a NaN ``y``; ``y`` a NaN ``x``."""
    x = torch.tensor([1.0, 0.0, NAN, 1.0, NAN, 2.0], dtype=torch.float64)
    y = torch.tensor([1.0, -0.0, 1.0, NAN, NAN, 3.0], dtype=torch.float64)
    g = torch.ones(6, dtype=torch.float64)
    for op, ex, ey in (("fmax", [1, 1, 0, 1, 1, 0], [0, 0, 1, 0, 0, 1]),
                       ("fmin", [1, 1, 0, 1, 1, 1], [0, 0, 1, 0, 0, 0])):
        gx, gy = _autograd(getattr(torch, op), [x, y], g)
        ref = getattr(er, op).backward(x, y, g).rounded
        _pin(ref.grad_x, gx, [float(v) for v in ex])
        _pin(ref.grad_y, gy, [float(v) for v in ey])


def test_pinned_clamp_boundaries():
    """x gets the gradient on both boundaries (inclusive); min where x < min < max; max where
    x > max or max < min; with min == max and x below, nobody; a NaN anywhere, +0."""
    x = torch.tensor([0.0, 1.0, 0.5, -1.0, 2.0, 0.0, 2.0, 0.5, NAN, 0.5, -0.0],
                     dtype=torch.float64)
    lo = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, NAN, 0.0],
                      dtype=torch.float64)
    hi = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
                      dtype=torch.float64)
    g = -torch.ones(11, dtype=torch.float64)
    gx, glo, ghi = _autograd(torch.clamp, [x, lo, hi], g)
    ref = er.clamp.backward(x, lo, hi, g)
    _pin(ref.rounded.grad_x, gx, [-1.0, -1.0, -1.0, 0, 0, 0, 0, 0, 0, 0, -1.0])
    _pin(ref.grad_min.rounded, glo, [0, 0, 0, -1.0, 0, 0, 0, 0, 0, 0, 0])
    _pin(ref.grad_max.rounded, ghi, [0, 0, 0, 0, -1.0, 0, -1.0, -1.0, 0, 0, 0])
    assert ref.grad_y is ref.grad_min


def test_pinned_clamp_scalar_bound_is_compared_exactly():
    """PyTorch compares a Python-scalar bound after rounding it to x's dtype; exactref compares
    the values as given (the departure the clamp backward's docstring names)."""
    x = torch.tensor([0.1], dtype=torch.float16)  # 0.0999755859375 < 0.1
    (gx,) = _autograd(lambda t: torch.clamp(t, min=0.1), [x], torch.ones(1, dtype=x.dtype))
    assert gx.item() == 1.0  # PyTorch: 0.1 rounds to x's value, so x >= min
    assert er.clamp.backward(x, 0.1, None, torch.ones(1, dtype=x.dtype)).rounded.tolist() == [0]


def test_pinned_abs_subgradient():
    """``grad * sgn(x)``: sgn(±0) = +0, so the gradient at 0 is grad * (+0) (NaN for an
    infinite grad); PyTorch's sgn(NaN) is 0, not NaN."""
    x = torch.tensor([0.0, -0.0, 0.0, -0.0, NAN, NAN, INF, -2.0], dtype=torch.float64)
    g = torch.tensor([1.0, 1.0, -1.0, INF, 1.0, -3.0, 2.0, -0.0], dtype=torch.float64)
    (gx,) = _autograd(torch.abs, [x], g)
    _pin(er.abs.backward(x, g).rounded, gx, [0.0, 0.0, -0.0, NAN, 0.0, -0.0, 2.0, 0.0])


def test_pinned_divide_rounding_modes_have_zero_gradients():
    x = torch.tensor([[7.0], [-7.5]], dtype=torch.float64)
    y = torch.tensor([2.0, NAN, 0.0], dtype=torch.float64)
    g = torch.full((2, 3), NAN, dtype=torch.float64)
    for mode in ("floor", "trunc"):
        gx, gy = _autograd(lambda a, b, m=mode: torch.div(a, b, rounding_mode=m), [x, y], g)
        ref = er.divide.backward(x, y, g, rounding_mode=mode).rounded
        _pin(ref.grad_x, gx, [[0.0], [0.0]])
        _pin(ref.grad_y, gy, [0.0, 0.0, 0.0])


def test_pinned_specials_of_quotients_and_roots():
    """PyTorch's IEEE specials: sqrt and rsqrt at ±0, +inf and below zero; divide and
    reciprocal by zeros and infinities (the formulas' specials match PyTorch's steps)."""
    x = torch.tensor([0.0, -0.0, INF, -1.0, 4.0, 4.0, 0.0], dtype=torch.float64)
    g = torch.tensor([1.0, 1.0, 1.0, 1.0, -0.0, INF, 0.0], dtype=torch.float64)
    for op, want in (("sqrt", [INF, -INF, 0.0, NAN, -0.0, INF, NAN]),
                     ("rsqrt", [-INF, INF, -0.0, NAN, 0.0, -INF, NAN]),
                     ("reciprocal", [-INF, -INF, -0.0, -1.0, 0.0, -INF, NAN])):
        (gx,) = _autograd(getattr(torch, op), [x], g)
        _pin(getattr(er, op).backward(x, g).rounded, gx, want)
    a = torch.tensor([1.0, 0.0, 1.0, INF, 0.0], dtype=torch.float64)
    b = torch.tensor([0.0, 0.0, INF, INF, -0.0], dtype=torch.float64)
    ones = torch.ones(5, dtype=torch.float64)
    gx, gy = _autograd(torch.div, [a, b], ones)
    ref = er.divide.backward(a, b, ones).rounded
    _pin(ref.grad_x, gx, [INF, INF, 0.0, 0.0, -INF])
    _pin(ref.grad_y, gy, [-INF, NAN, -0.0, NAN, NAN])


# =================================================================== the ops' records
@pytest.mark.parametrize("op", ALL_OPS)
def test_backward_registered(op):
    fn = getattr(er, op)
    assert er.ops.get_op(op).backward is fn.backward
    assert fn.backward.__doc__


def test_errors_name_the_remedy():
    f32 = er.asarray([1.0, 2.0], "float32")
    with pytest.raises(ValueError, match=r"output's shape \(2,\)"):
        er.divide.backward(f32, f32, er.asarray([1.0], "float32"))
    with pytest.raises(TypeError, match="float and complex arrays"):
        er.sqrt.backward(er.asarray([4, 9], "int32"), f32)
    with pytest.raises(TypeError, match="grad is int32"):
        er.sqrt.backward(f32, er.asarray([1, 1], "int32"))
    with pytest.raises(er.arithmetic._elementwise.OpTypeError, match="complex"):
        er.rsqrt.backward(er.asarray([1j], "complex64"), er.asarray([1j], "complex64"))
    with pytest.raises(ValueError, match="rounding_mode"):
        er.divide.backward(f32, f32, f32, rounding_mode="round")
    # an integer operand, like a scalar, takes no gradient; the other still does
    g = er.divide.backward(f32, er.asarray([2, 4], "int32"), f32)
    assert g.grad_y is None and g.rounded.tolist() == [0.5, 0.5]
