"""float32, float64, complex64 and complex128: the arithmetic family's ``rounded`` against MPFR
(through ``family_oracle``: exact values with Python integers and GMP rationals, IEEE 754's and
C99's special cases written from the standards, MPFR rounding), in every rounding mode.

Hypothesis draws any value of the format, values ``ldexp(m, e)`` over the whole exponent range,
and operands built to land on the hard cases: ties of ``z + x y`` (fma, addcmul, subtract,
addcdiv) and one step beside them, quotients near integers and beyond ``2**53`` (floor_divide,
remainder, fmod), quotients and products near the largest finite value, subnormal quotients and
roots of subnormals. ``@example`` pins the cases the brief names: huge exponent gaps, signed
zeros, infinities and NaN, division by zero, remainder's and fmod's special cases, complex
specials (C99 Annex G). Example values are written as expressions of the format's constants
(``"max"``, ``"tiny"``, ``"eps"``...), so one example serves float32 and float64.
"""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import family_oracle as F
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import exactref as er
from exactref._formats import FORMATS

R = er.Rounding
MODES = list(R)
REAL = [FORMATS["float32"], FORMATS["float64"]]
CPLX = [FORMATS["complex64"], FORMATS["complex128"]]
N = 8  # the most rows per example


def _fid(f):
    return f.name


def _mid(m):
    return m.value


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


# ------------------------------------------------------------------ values of a format
def _consts(fmt):
    f = fmt.component
    return {"max": Fraction(f.max_finite), "tiny": Fraction(f.smallest_subnormal),
            "minnorm": Fraction(f.smallest_normal), "eps": Fraction(2) ** (1 - f.precision),
            "ulpmax": Fraction(2) ** (f.emax - f.precision + 1),
            "Fraction": Fraction, "inf": math.inf, "nan": math.nan}


def val(fmt, v) -> float:
    """A value of the format: a float (rounded to nearest into it), or an expression of its
    constants evaluated exactly, which the format must hold."""
    f = fmt.component
    if isinstance(v, str):
        x = eval(v, {"__builtins__": {}}, _consts(f))  # noqa: S307 - test data only
        if isinstance(x, float):
            return val(f, x)
        out = float(x) if f.bits == 64 else float(np.float32(float(x)))
        assert Fraction(out) == x, f"{v} is not a {f.name} value"
        return out
    if f.bits == 64:
        return float(v)
    with np.errstate(over="ignore", under="ignore"):
        return float(np.float32(v))


def rows_of(fmt, rows):
    return [tuple(val(fmt, v) for v in row) for row in rows]


def _np(fmt):
    return np.float64 if fmt.component.bits == 64 else np.float32


def arr(fmt, col):
    return er.asarray(np.array(col, dtype=_np(fmt)), fmt)


def carr(fmt, col):
    """A complex array from (re, im) pairs, parts assembled as given (no ``1j * inf``)."""
    comp = np.complex128 if fmt.bits == 128 else np.complex64
    out = np.empty(len(col), dtype=comp)
    out.real = [a for a, _ in col]
    out.imag = [b for _, b in col]
    return er.asarray(out, fmt)


def floats(fmt):
    """Any value of the format, values over the whole exponent range, and its edges."""
    f = fmt.component
    p = f.precision
    width = 64 if f.bits == 64 else 32
    lo_e, hi_e = f.emin - p - 2, f.emax - p + 1
    edges = [0.0, -0.0, 1.0, -1.0, f.max_finite, -f.max_finite, f.smallest_subnormal,
             -f.smallest_subnormal, f.smallest_normal, math.inf, -math.inf, math.nan,
             2 * f.smallest_subnormal, f.smallest_normal - f.smallest_subnormal, 3.0, 0.5]
    return st.one_of(
        st.floats(width=width),
        st.sampled_from(edges),
        st.builds(lambda m, e: val(f, math.ldexp(m, e)), st.integers(-(2**p) + 1, 2**p - 1),
                  st.integers(lo_e, hi_e)),
    )


def finite(fmt):
    return floats(fmt).filter(math.isfinite)


def _quantum(v: float, f) -> float:
    e = math.frexp(abs(v))[1] - 1 if v != 0 else f.emin
    return math.ldexp(1.0, max(e, f.emin) - f.precision + 1)


def _holds(f, v) -> bool:
    return math.isfinite(v) and val(f, v) == v


def tie_triples(fmt):
    """``(x, y, z)`` with ``x y = m q / 2`` (``q`` the quantum of ``z``'s binade, ``y`` a power of
    two): ``m`` odd (a tie of ``z + x y``), ``1/2`` (a tie below a power of two), or one step from
    an odd integer (just off a tie)."""
    f = fmt.component
    p = f.precision
    step = 2.0 ** (1 - p)
    ms = [1.0, 3.0, 5.0, 0.5, 1 + step, 1 - step / 2, 3 + 2 * step, 3 - 2 * step, 2 - step]

    def build(z, m, b, sx, sy):
        y = math.ldexp(sy, b)
        x = sx * m * _quantum(z, f) / 2 / y
        return (val(f, x), val(f, y), z)

    z = st.one_of(finite(fmt).filter(lambda v: v != 0 and abs(v) < f.max_finite / 8),
                  st.builds(lambda e, s: math.ldexp(s, e), st.integers(f.emin, f.emax - 4),
                            st.sampled_from([-1.0, 1.0])))
    return st.builds(build, z, st.sampled_from(ms), st.integers(-8, 8),
                     st.sampled_from([-1.0, 1.0]), st.sampled_from([-1.0, 1.0])).filter(
        lambda t: all(_holds(f, v) for v in t))


def near_integer_pairs(fmt):
    """``(x, y)`` with ``x / y`` within a few ulps of an integer ``k``, up to ``2**70``."""
    f = fmt.component
    npt = _np(f)

    def build(y, k, d):
        with np.errstate(over="ignore"):
            x = npt(k) * npt(y)
        for _ in range(abs(d)):
            x = np.nextafter(x, npt(math.copysign(math.inf, d)))
        return (float(x), y)

    y = finite(fmt).filter(lambda v: v != 0 and 2.0**-60 < abs(v) < 2.0**60)
    k = st.one_of(st.integers(-(2**12), 2**12), st.integers(-(2**70), 2**70),
                  st.sampled_from([2**53, 2**53 + 1, 2**24 + 1, -(2**53) - 1, 2**54 - 1]))
    return st.builds(build, y, k, st.integers(-3, 3)).filter(lambda t: math.isfinite(t[0]))


# ------------------------------------------------------------------------ assertions
def check_real(fmt, got, exact, rows, what, mode, rule=None):
    __tracebackhide__ = True
    want = [F.rnd_one(v, fmt, mode, rule) for v in exact]
    F.assert_same(got.rounded._wide().astype(np.float64), np.array(want), rows,
                  f"{what} in {fmt.name}, {mode.value}")


def _rows(strategy):
    return st.lists(strategy, min_size=1, max_size=N)


#: a couple of drawn examples per test by default (the pinned ``@example`` cases always run);
#: ``--run-slow`` draws many more
SIZES = [pytest.param("quick", id="quick"), pytest.param("full", id="full",
                                                          marks=pytest.mark.slow)]


def hyp(size, full=40):
    return settings(max_examples=2 if size == "quick" else full)


# ------------------------------------------------------------------------------ divide
HOWS = [None, "trunc", "floor"]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("how", HOWS, ids=str)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_divide(fmt, how, mode, size):
    @hyp(size, 30)
    @given(data=st.data())
    @example(data=[("1", "3"), ("-1", "3"), ("1", "-0.0"), ("-0.0", "0.0"), ("0.0", "-0.0"),
                   ("inf", "-0.0"), ("-inf", "inf"), ("nan", "1"), ("1", "nan"), ("-1", "inf"),
                   ("1", "-inf"), ("-0.0", "-3"), ("inf", "3"), ("-inf", "0.0")])
    # quotients just above and below the largest finite value, and overflowing ones
    @example(data=[("max", "1-eps/2"), ("max", "1+eps"), ("-max", "1-eps/2"), ("max", "0.5"),
                   ("max", "tiny"), ("-max", "minnorm"), ("max-ulpmax", "1-eps/2"),
                   ("max", "-(1-eps/2)")])
    # subnormal quotients, exponent gaps, quotients beyond 2**53 and near integers
    @example(data=[("tiny", "3"), ("minnorm", "1+eps"), ("tiny", "max"), ("minnorm", "-max"),
                   ("3*tiny", "2"), ("5*tiny", "-4"), ("tiny*7", "8"), ("Fraction(1, 2**100)", "1"),
                   ("2/eps+2", "1"), ("2**20*(1/eps+1)", "3"), ("-(2/eps) - 2", "2"), ("7", "2"),
                   ("-7", "2"), ("7.5", "-2.5"), ("max", "3"), ("1-eps/2", "1")])
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(st.one_of(
            st.tuples(floats(fmt), floats(fmt)), near_integer_pairs(fmt))))
        x, y = [a for a, _ in rows], [b for _, b in rows]
        got = er.divide(arr(fmt, x), arr(fmt, y), rounding_mode=how, rounding=mode)
        check_real(fmt, got, [F.divide(a, b, how) for a, b in rows], rows, f"divide({how})", mode)
        if how == "floor":
            got = er.floor_divide(arr(fmt, x), arr(fmt, y), rounding=mode)
            check_real(fmt, got, [F.divide(a, b, how) for a, b in rows], rows, "floor_divide",
                       mode)

    run()


# ----------------------------------------------------------------------- remainder, fmod
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_remainder_fmod(fmt, mode, size):
    @hyp(size, 36)
    @given(data=st.data())
    # y = ±inf, x = ±0, zero results' signs, NaN, y = ±0, x = ±inf
    @example(data=[("1", "inf"), ("-1", "inf"), ("1", "-inf"), ("-1", "-inf"), ("0.0", "inf"),
                   ("-0.0", "inf"), ("0.0", "-inf"), ("-0.0", "-inf"), ("-0.0", "3"),
                   ("0.0", "-3"), ("6", "-3"), ("-6", "3"), ("-6", "-3"), ("6", "3"),
                   ("1", "0.0"), ("1", "-0.0"), ("inf", "3"), ("-inf", "inf"), ("nan", "1"),
                   ("1", "nan"), ("-0.0", "0.0"), ("max", "inf"), ("-tiny", "inf")])
    # a tiny dividend of the other sign: x + y rounds (to y); quotients beyond 2**53
    @example(data=[("-tiny", "1"), ("tiny", "-1"), ("-eps/4", "1"), ("-eps/4*(1+eps)", "1"),
                   ("-eps/4*(1-eps)", "1"), ("-tiny", "max"), ("max", "tiny"),
                   ("max", "3*tiny"), ("-max", "3*tiny"), ("2**20*(1/eps+1)", "3"),
                   ("-(2**20)*(1/eps+1)", "3"), ("max", "-(1+eps)"), ("minnorm", "-tiny*3"),
                   ("5.5", "-2"), ("-1", "3")])
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(st.one_of(
            st.tuples(floats(fmt), floats(fmt)), near_integer_pairs(fmt))))
        x, y = arr(fmt, [a for a, _ in rows]), arr(fmt, [b for _, b in rows])
        check_real(fmt, er.remainder(x, y, rounding=mode), [F.remainder(a, b) for a, b in rows],
                   rows, "remainder", mode)
        check_real(fmt, er.fmod(x, y, rounding=mode), [F.fmod(a, b) for a, b in rows], rows, "fmod",
                   mode)

    run()


# ------------------------------------------------------------------------------- unary
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_reciprocal_sqrt_rsqrt(fmt, mode, size):
    """Roots and reciprocals of subnormals (reciprocals overflow), of the largest value, signed
    zeros, infinities, NaN, negative values."""
    @hyp(size, 45)
    @given(data=st.data())
    @example(data=[("tiny",), ("3*tiny",), ("2*tiny",), ("minnorm",), ("minnorm-tiny",), ("max",),
                   ("-0.0",), ("0.0",), ("inf",), ("-inf",), ("nan",), ("-tiny",), ("2",),
                   ("1-eps/2",), ("1+eps",), ("4",), ("Fraction(1, 4)",), ("-1",)])
    @example(data=[("tiny*5",), ("tiny*7",), ("tiny*(2**20+1)",), ("max-ulpmax",),
                   ("Fraction(9, 4)",), ("2**100",), ("Fraction(1, 2**100)",), ("3",)])
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(
            st.tuples(floats(fmt))))
        x = arr(fmt, [a for a, in rows])
        for name, fn in (("reciprocal", F.reciprocal), ("sqrt", F.sqrt), ("rsqrt", F.rsqrt)):
            got = getattr(er, name)(x, rounding=mode)
            check_real(fmt, got, [fn(a) for a, in rows], rows, name, mode)

    run()


# ---------------------------------------------------------------------- sums of products
ALPHAS = [1, -1, 3, 0.1, -2.5, Fraction(1, 3 * 2**10) * 3, 2.0**-60, 1e10, -0.0, 0.0]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_subtract(fmt, mode, size):
    @hyp(size, 36)
    @given(data=st.data(), alpha=st.sampled_from(ALPHAS))
    @example(data=[("1", "1"), ("-0.0", "0.0"), ("0.0", "0.0"), ("-0.0", "-0.0"), ("inf", "inf"),
                   ("inf", "-inf"), ("nan", "0.0"), ("1e300", "-1e-300"), ("1e-300", "1e300"),
                   ("max", "-max"), ("max", "-ulpmax/2"), ("1", "eps/2"), ("1", "-eps/4"),
                   ("1", "eps/2*(1+eps)")], alpha=1)
    @example(data=[("0.0", "5"), ("-0.0", "5"), ("0.0", "-0.0"), ("1", "1")], alpha=-0.0)
    def run(data, alpha):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(st.one_of(
            st.tuples(floats(fmt), floats(fmt)),
            tie_triples(fmt).map(lambda t: (t[2], -t[0] * t[1])).filter(
                lambda t: _holds(fmt, t[1])))))
        x, y = arr(fmt, [a for a, _ in rows]), arr(fmt, [b for _, b in rows])
        got = er.subtract(x, y, alpha=alpha, rounding=mode)
        check_real(fmt, got, [F.subtract(a, b, alpha) for a, b in rows], rows,
                   f"subtract(alpha={alpha!r})", mode)

    run()


FMA_EXAMPLES = [
    # zero signs: x*y exact zero plus ±0, x*y = -z exactly
    ("0.0", "5", "-0.0"), ("-0.0", "5", "-0.0"), ("-0.0", "5", "0.0"), ("1", "-1", "1"),
    ("2", "3", "-6"),
    # specials: 0 * inf + NaN is NaN, inf - inf, NaN
    ("0.0", "inf", "nan"), ("inf", "1", "-inf"), ("inf", "-2", "-inf"), ("nan", "0.0", "1"),
    ("1", "1", "inf"), ("max", "2", "-inf"),
    # exponent gaps: |z| tiny against x*y huge, and the other way
    ("1e300", "1e300", "tiny"), ("1e300", "1e-300", "-tiny"), ("tiny", "tiny", "1"),
    ("tiny", "-tiny", "1"), ("tiny", "tiny", "-max"), ("max", "max", "-max"),
    ("1e-300", "1e-300", "-1e-300"), ("max", "1+eps", "-max"), ("max", "1-eps/2", "ulpmax/4"),
    # ties of z + x*y and one step beside them
    ("1+eps", "1-eps", "-1"), ("1+eps", "1+eps", "-1"), ("eps/2", "1", "1"),
    ("eps/2", "1+eps", "1"), ("eps/2", "1-eps/2", "1"), ("-eps/4", "1", "1"),
    ("3*eps/2", "1", "1"), ("max", "1", "ulpmax/2"), ("minnorm", "0.5", "tiny*3"),
]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_fma(fmt, mode, size):
    @hyp(size, 36)
    @given(data=st.data())
    @example(data=FMA_EXAMPLES)
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(st.one_of(
            st.tuples(floats(fmt), floats(fmt), floats(fmt)), tie_triples(fmt))))
        x, y, z = (arr(fmt, [r[k] for r in rows]) for k in range(3))
        got = er.fma(x, y, z, rounding=mode)
        check_real(fmt, got, [F.fma(*r) for r in rows], rows, "fma", mode)

    run()


VALUES = [1, 3, -0.5, 0.1, 2.0**-70, -(3**30), 0, -0.0]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_addcmul(fmt, mode, size):
    @hyp(size, 36)
    @given(data=st.data(), value=st.sampled_from(VALUES))
    @example(data=[(c, a, b) for a, b, c in FMA_EXAMPLES], value=1)
    @example(data=[(c, a, b) for a, b, c in FMA_EXAMPLES], value=0.1)
    @example(data=[("1", "0.0", "inf"), ("-0.0", "0.0", "5"), ("-0.0", "-0.0", "5")], value=0)
    def run(data, value):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(st.one_of(
            st.tuples(floats(fmt), floats(fmt), floats(fmt)),
            tie_triples(fmt).map(lambda t: (t[2], t[0], t[1])))))
        i, a, b = (arr(fmt, [r[k] for r in rows]) for k in range(3))
        got = er.addcmul(i, a, b, value=value, rounding=mode)
        check_real(fmt, got, [F.addcmul(*r, value) for r in rows], rows, f"addcmul({value!r})",
                   mode)

    run()


ADDCDIV_EXAMPLES = [
    # (input, tensor1, tensor2)
    ("1", "1", "3"), ("1", "-3", "3"), ("-0.0", "0.0", "5"), ("-0.0", "-0.0", "5"),
    ("0.0", "-0.0", "5"), ("1", "1", "0.0"), ("1", "-1", "-0.0"), ("1", "0.0", "0.0"),
    ("inf", "1", "0.0"), ("-inf", "1", "0.0"), ("1", "inf", "inf"), ("1", "1", "inf"),
    ("-0.0", "1", "inf"), ("nan", "1", "2"), ("1", "nan", "2"), ("inf", "1", "3"),
    ("1", "eps", "2"), ("1", "eps*3", "6"), ("1", "eps/2", "1+eps"), ("1", "max", "tiny"),
    ("-max", "max", "1-eps/2"), ("tiny", "tiny", "3"), ("1e300", "1e-300", "1e300"),
    ("tiny", "1e300", "1e-300"),
    # an infinite input beside a finite quotient that float64 cannot hold (once NaN)
    ("inf", "1", "-tiny"), ("-inf", "tiny", "max"), ("inf", "max", "tiny"), ("nan", "max", "tiny"),
]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_addcdiv(fmt, mode, size):
    @hyp(size, 36)
    @given(data=st.data(), value=st.sampled_from(VALUES))
    @example(data=ADDCDIV_EXAMPLES, value=1)
    @example(data=ADDCDIV_EXAMPLES, value=-0.5)
    @example(data=ADDCDIV_EXAMPLES, value=0)
    def run(data, value):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(st.one_of(
            st.tuples(floats(fmt), floats(fmt), floats(fmt)),
            tie_triples(fmt).map(lambda t: (t[2], t[0] * t[1] * t[1], t[1])).filter(
                lambda t: _holds(fmt, t[1])))))
        i, a, b = (arr(fmt, [r[k] for r in rows]) for k in range(3))
        got = er.addcdiv(i, a, b, value=value, rounding=mode)
        check_real(fmt, got, [F.addcdiv(*r, value) for r in rows], rows, f"addcdiv({value!r})",
                   mode)

    run()


# -------------------------------------------------------------------------- selections
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_selections(fmt, size):
    """maximum, minimum, fmax, fmin, clamp (both bounds, and each alone), abs, negative:
    exact, so one mode is enough."""
    @hyp(size, 75)
    @given(data=st.data())
    @example(data=[("0.0", "-0.0", "nan"), ("-0.0", "0.0", "-0.0"), ("nan", "1", "2"),
                   ("1", "nan", "0.0"), ("nan", "nan", "1"), ("inf", "-inf", "max"),
                   ("-inf", "tiny", "-tiny"), ("3", "2", "1"), ("-0.0", "-0.0", "0.0")])
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(
            st.tuples(floats(fmt), floats(fmt), floats(fmt))))
        x, y, z = (arr(fmt, [r[k] for r in rows]) for k in range(3))
        mode = R.NEAREST_EVEN
        for name, fn in (("maximum", F.maximum), ("minimum", F.minimum), ("fmax", F.fmax),
                         ("fmin", F.fmin)):
            check_real(fmt, getattr(er, name)(x, y), [fn(a, b) for a, b, _ in rows], rows, name,
                       mode)
        check_real(fmt, er.clamp(x, y, z), [F.clamp(*r) for r in rows], rows, "clamp", mode)
        check_real(fmt, er.clamp(x, min=y), [F.clamp(a, b) for a, b, _ in rows], rows, "clamp(min)",
                   mode)
        check_real(fmt, er.clamp(x, max=z), [F.clamp(a, None, c) for a, _, c in rows], rows,
                   "clamp(max)", mode)
        check_real(fmt, er.abs(x), [F.abs_(a) for a, _, _ in rows], rows, "abs", mode)
        check_real(fmt, er.negative(x), [F.negate(a) for a, _, _ in rows], rows, "negative", mode)

    run()


@pytest.mark.parametrize("fmt", REAL, ids=_fid)
def test_clamp_scalar_bounds(fmt):
    """Scalar bounds, taken exactly: a float64 bound beside float32 operands is first rounded
    into the promoted format (the torch policy's), as PyTorch converts it."""
    x = arr(fmt, [-2.0, 0.5, 9.0, math.nan, -0.0])
    got = er.clamp(x, min=0.0, max=1.0).rounded._wide().astype(np.float64)
    F.assert_same(got, np.array([0.0, 0.5, 1.0, math.nan, 0.0]), list(range(5)), "clamp")


# ------------------------------------------------------------------------------- casts
NARROW = [f for f in FORMATS.values() if f.kind == "float" and f.bits < 64
          and f.encoding == "native"]  # P3109: tests/test_formats_p3109.py


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("dst", NARROW, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_cast_float64_into_every_float(dst, mode, size):
    """float64 values into every narrower float format, once rounded (no double rounding
    through float32), every overflow rule."""
    @hyp(size, 30)
    @given(xs=_rows(floats(FORMATS["float64"])), rule=st.sampled_from([None, "saturate", "nan"]))
    @example(xs=[1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-24, 1 + 2.0**-24 + 2.0**-52, 2.0**-149 / 2,
                 2.0**-149 * 0.75, 3.4028235677973366e38, 65520.0, 65519.99, -65520.0, 1e-300,
                 -1e-300, -0.0, math.inf, 1 - 2.0**-54], rule=None)
    def run(xs, rule):
        if rule == "nan" and not dst.has_nan:
            rule = "saturate"
        f64 = FORMATS["float64"]
        if not dst.has_nan:
            xs = [v for v in xs if not math.isnan(v)] or [1.0]
        got = er.cast(arr(f64, xs), dst, rounding=mode, overflow=rule)
        check_real(dst, got, [F.ex(v) for v in xs], [(v,) for v in xs], f"cast({rule})", mode, rule)

    run()


INT_TARGETS = [f for f in FORMATS.values() if f.kind in ("int", "uint") and f.bits >= 8]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("dst", INT_TARGETS, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_cast_float64_into_integers(dst, mode, size):
    """Finite float64 values (any magnitude: beyond 2**64 too) into every integer format, once
    rounded to an integer in the mode (``mpfr_rounding.round_to_int``), then wrapped, saturated
    or refused."""
    from mpfr_rounding import round_to_int

    f64 = FORMATS["float64"]

    @hyp(size, 30)
    @given(xs=_rows(finite(f64)), rule=st.sampled_from(["wrap", "saturate", "error"]))
    @example(xs=[2.5, -2.5, 0.5, -0.5, 1.5, 255.5, -128.5, 2.0**63, -(2.0**63), 2.0**64 - 2048,
                 2.0**64, 1e30, -1e30, 4503599627370495.5, -0.0, 5e-324], rule="wrap")
    @example(xs=[127.5, -128.5, 255.49999999999997, 2.0**63 - 512, -(2.0**63) - 2048],
             rule="saturate")
    def run(xs, rule):
        ints = [round_to_int(Fraction(v), mode) for v in xs]
        want = F.int_overflow(ints, dst, rule)
        xa = arr(f64, xs)
        if any(w is None for w in want):
            with pytest.raises(OverflowError, match="outside"):
                er.cast(xa, dst, rounding=mode, overflow=rule)
            return
        got = [int(v) for v in er.cast(xa, dst, rounding=mode, overflow=rule).rounded.tolist()]
        assert got == want, [(v, g, w) for v, g, w in zip(xs, got, want, strict=True) if g != w]

    run()


# ------------------------------------------------------------------- overflow rules
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("rule", ["ieee", "saturate", "nan"])
@pytest.mark.parametrize("fmt", REAL, ids=_fid)
def test_overflow_edges(fmt, rule, mode):
    """Results just above and below the largest finite value (and the midpoint past it), for
    every op that can overflow, every mode and overflow rule."""
    pairs = rows_of(fmt, [("max", "1-eps/2"), ("max", "1+eps"), ("-max", "1-eps/2"),
                          ("max", "1-eps"), ("max-ulpmax", "1-eps/2"), ("max", "0.5"),
                          ("-max", "-0.5"), ("max", "tiny"), ("1", "tiny"), ("-1", "tiny"),
                          ("max", "max"), ("max", "-1")])
    x, y = arr(fmt, [a for a, _ in pairs]), arr(fmt, [b for _, b in pairs])
    kw = {"rounding": mode, "overflow": rule}
    check_real(fmt, er.divide(x, y, **kw), [F.divide(a, b) for a, b in pairs], pairs, "divide",
               mode, rule)
    check_real(fmt, er.divide(x, y, rounding_mode="floor", **kw),
               [F.divide(a, b, "floor") for a, b in pairs], pairs, "divide(floor)", mode, rule)
    check_real(fmt, er.reciprocal(y, **kw), [F.reciprocal(b) for _, b in pairs], pairs,
               "reciprocal", mode, rule)
    check_real(fmt, er.rsqrt(y, **kw), [F.rsqrt(b) for _, b in pairs], pairs, "rsqrt", mode,
               rule)
    half_ulp = val(fmt, "ulpmax/2")
    triples = rows_of(fmt, [("max", "1", "ulpmax/2"), ("max", "1", "ulpmax/2*(1-eps/2)"),
                            ("max", "-1", "-ulpmax/2*(1+eps)"), ("max", "1+eps", "-max*eps"),
                            ("max", "2", "-max"), ("max", "0.5", "max-ulpmax"),
                            ("-max", "1", "-ulpmax"), ("max", "1", "ulpmax/4")])
    a, b, c = (arr(fmt, [t[k] for t in triples]) for k in range(3))
    check_real(fmt, er.fma(a, b, c, **kw), [F.fma(*t) for t in triples], triples, "fma", mode,
               rule)
    check_real(fmt, er.addcmul(c, a, b, **kw), [F.addcmul(t[2], t[0], t[1]) for t in triples],
               triples, "addcmul", mode, rule)
    check_real(fmt, er.addcdiv(c, a, er.asarray(np.ones(len(triples)), fmt), **kw),
               [F.addcdiv(t[2], t[0], 1.0) for t in triples], triples, "addcdiv", mode, rule)
    check_real(fmt, er.subtract(a, c, alpha=-1, **kw),
               [F.subtract(t[0], t[2], -1) for t in triples], triples, "subtract", mode, rule)
    check_real(fmt, er.remainder(arr(fmt, [-half_ulp]), arr(fmt, [val(fmt, "max")]), **kw),
               [F.remainder(-half_ulp, val(fmt, "max"))], [(-half_ulp,)], "remainder", mode,
               rule)


# -------------------------------------------------------------------------- complex
def cfloats(fmt):
    return floats(fmt.component)


def _check_parts(fmt, got, want_re, want_im, rows, what, mode, any_sign_im=None):
    __tracebackhide__ = True
    g = got.rounded._wide()
    F.assert_same(g.real.astype(np.float64), np.array(want_re), rows,
                  f"{what} (real) in {fmt.name}, {mode.value}")
    # None: an infinity whose sign C99 leaves unspecified
    im = np.array([w if w is not None else math.copysign(math.inf, v)
                   for w, v in zip(want_im, g.imag.tolist(), strict=True)], dtype=np.float64)
    F.assert_same(g.imag.astype(np.float64), im, rows,
                  f"{what} (imag) in {fmt.name}, {mode.value}")


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", CPLX, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_complex_sqrt(fmt, mode, size):
    """The principal square root, each part rounded once (the oracle: MPFR at 300 bits with
    lower and upper bounds that must round alike); ``-inf + NaN i`` takes either sign of its
    imaginary infinity (C99 leaves it unspecified)."""
    @hyp(size, 45)
    @given(data=st.data())
    # C99 G.6.4.2's specials, by both signs of the imaginary part
    @example(data=[("0.0", "0.0"), ("-0.0", "0.0"), ("0.0", "-0.0"), ("-0.0", "-0.0"),
                   ("1", "inf"), ("nan", "inf"), ("-inf", "-inf"), ("1", "nan"), ("-inf", "2"),
                   ("-inf", "-2"), ("inf", "2"), ("inf", "-2"), ("-inf", "nan"), ("inf", "nan"),
                   ("nan", "3"), ("nan", "nan"), ("-4", "0.0"), ("-4", "-0.0"), ("4", "-0.0"),
                   ("3", "4"), ("-3", "4"), ("-3", "-4"), ("inf", "inf"), ("-inf", "0.0")])
    # cancellation (|b| tiny against a < 0), extremes, subnormal parts
    @example(data=[("-max", "tiny"), ("max", "tiny"), ("-1", "tiny"), ("1", "-tiny"),
                   ("max", "max"), ("-max", "-max"), ("tiny", "tiny"), ("-tiny", "tiny"),
                   ("0.0", "tiny"), ("0.0", "2"), ("-0.0", "-2"), ("minnorm", "-max"),
                   ("1e-300", "1e300"), ("-1e300", "1e-300"), ("2", "1e-20"), ("-2", "-1e-20")])
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(
            st.tuples(cfloats(fmt), cfloats(fmt))))
        got = er.sqrt(carr(fmt, rows), rounding=mode)
        want = [F.csqrt(a, b, fmt.component, mode) for a, b in rows]
        _check_parts(fmt, got, [w[0] for w in want], [w[1] for w in want], rows, "sqrt", mode)

    run()


def _nonzero(fmt):
    return st.tuples(cfloats(fmt).filter(math.isfinite), cfloats(fmt).filter(math.isfinite)).filter(
        lambda t: t[0] != 0 or t[1] != 0)


def _cfinite(fmt):
    return st.tuples(cfloats(fmt).filter(math.isfinite), cfloats(fmt).filter(math.isfinite))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", CPLX, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_complex_divide(fmt, mode, size):
    """Finite operands, nonzero divisors: each part is the exact quotient of ``x * conj(y)`` by
    ``|y|^2``, rounded once (an exact zero part takes the sign IEEE's rules give the formula in
    the mode)."""
    @hyp(size, 45)
    @given(data=st.data())
    @example(data=[(("1", "1"), ("1", "-1")), (("0.0", "0.0"), ("1", "1")),
                   (("-0.0", "0.0"), ("2", "0.0")), (("0.0", "-0.0"), ("-2", "-0.0")),
                   (("1", "2"), ("3", "4")), (("1", "0.0"), ("0.0", "1")),
                   (("max", "max"), ("tiny", "tiny")), (("tiny", "0.0"), ("max", "max")),
                   (("1e300", "1e-300"), ("1e-300", "1e300")), (("max", "max"), ("max", "max")),
                   (("1", "1"), ("1", "1")), (("1", "eps"), ("1", "-eps")),
                   (("3", "tiny"), ("tiny", "3")), (("-1", "1"), ("max", "-tiny"))])
    def run(data):
        if isinstance(data, list):
            rows = [(rows_of(fmt, [x])[0], rows_of(fmt, [y])[0]) for x, y in data]
            # float64 examples (1e300) that complex64 cannot hold finitely are left out
            rows = [(x, y) for x, y in rows if all(map(math.isfinite, x + y)) and any(y)]
        else:
            rows = data.draw(_rows(st.tuples(_cfinite(fmt), _nonzero(fmt))))
        x = carr(fmt, [r[0] for r in rows])
        y = carr(fmt, [r[1] for r in rows])
        got = er.divide(x, y, rounding=mode)
        comp = fmt.component
        parts = [F.cdiv_parts(complex(*a), complex(*b)) for a, b in rows]
        _check_parts(fmt, got, [F.rnd_one(p[0], comp, mode) for p in parts],
                     [F.rnd_one(p[1], comp, mode) for p in parts], rows, "divide", mode)
        # the reciprocal: (1 + 0i) / y, the same formula (the zero part read too, as C99 does)
        got = er.reciprocal(y, rounding=mode)
        recips = [F.cdiv_parts(1 + 0j, complex(*b)) for _, b in rows]
        _check_parts(fmt, got, [F.rnd_one(p[0], comp, mode) for p in recips],
                     [F.rnd_one(p[1], comp, mode) for p in recips], rows, "reciprocal", mode)

    run()


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", CPLX, ids=_fid)
def test_complex_divide_specials(fmt, mode):
    """Every pair of operands whose parts are 0, -0, 1, -2, ±inf or NaN, divide and reciprocal:
    the formula's IEEE specials in the mode, and C99's recovery where both parts are NaN
    (``(1 + 1i) / 0 = inf + inf i``, ``inf / (1 + 1i) = inf - inf i``, ``1 / (inf + 0i) = 0``);
    the reciprocal is ``(1 + 0i) / y``."""
    parts = [0.0, -0.0, 1.0, -2.0, math.inf, -math.inf, math.nan]
    vals = [(p, q) for p in parts for q in parts]
    x = [v for v in vals for _ in vals]
    y = [w for _ in vals for w in vals]
    rows = list(zip(x, y, strict=True))
    comp = fmt.component
    got = er.divide(carr(fmt, x), carr(fmt, y), rounding=mode)
    want = [F.cdiv_ieee(complex(*a), complex(*b), mode) for a, b in rows]
    _check_parts(fmt, got, [F.rnd_one(w[0], comp, mode) for w in want],
                 [F.rnd_one(w[1], comp, mode) for w in want], rows, "divide", mode)
    got = er.reciprocal(carr(fmt, vals), rounding=mode)
    want = [F.cdiv_ieee(1 + 0j, complex(*b), mode) for b in vals]
    _check_parts(fmt, got, [F.rnd_one(w[0], comp, mode) for w in want],
                 [F.rnd_one(w[1], comp, mode) for w in want], vals, "reciprocal", mode)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", CPLX, ids=_fid)
@pytest.mark.parametrize("size", SIZES)
def test_complex_abs(fmt, mode, size):
    """The modulus rounded once into the component format (C99 hypot's specials)."""
    @hyp(size, 45)
    @given(data=st.data())
    @example(data=[("3", "4"), ("1", "1"), ("inf", "nan"), ("nan", "-inf"), ("nan", "1"),
                   ("-0.0", "0.0"), ("max", "max"), ("tiny", "tiny"), ("-tiny", "0.0"),
                   ("1e300", "1e-300"), ("max", "1"), ("minnorm", "tiny"), ("-inf", "1")])
    def run(data):
        rows = rows_of(fmt, data) if isinstance(data, list) else data.draw(_rows(
            st.tuples(cfloats(fmt), cfloats(fmt))))
        got = er.abs(carr(fmt, rows), rounding=mode)
        assert got.rounded.dtype is fmt.component
        check_real(fmt.component, got, [F.cabs(a, b) for a, b in rows], rows, "abs", mode)

    run()


HALF_CPLX = [FORMATS["complex32"], FORMATS["bcomplex32"]]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", HALF_CPLX, ids=_fid)
def test_complex_half_formats(fmt, mode):
    """complex32 and bcomplex32 (float16 and bfloat16 parts): sqrt, divide, reciprocal and abs
    of random values of the parts' format (every binade), with specials for sqrt and abs."""
    comp = fmt.component
    rng = np.random.default_rng(_seed(fmt.name, mode.value))
    vals = F.all_values(comp)
    fin = vals[np.isfinite(vals)]
    n = 160
    a, b, c, d = (fin[rng.integers(0, fin.size, size=n)] for _ in range(4))
    sp = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -4.0]
    a = np.concatenate([a, np.repeat(sp, len(sp))])
    b = np.concatenate([b, np.tile(sp, len(sp))])

    def cx(re, im):
        out = np.empty(len(re), dtype=np.complex128)
        out.real, out.imag = re, im
        return er.asarray(out, fmt)

    rows = list(zip(a.tolist(), b.tolist(), strict=True))
    got = er.sqrt(cx(a, b), rounding=mode)
    want = [F.csqrt(p, q, comp, mode) for p, q in rows]
    _check_parts(fmt, got, [w[0] for w in want], [w[1] for w in want], rows, "sqrt", mode)
    got = er.abs(cx(a, b), rounding=mode)
    check_real(comp, got, [F.cabs(p, q) for p, q in rows], rows, "abs", mode)
    # finite operands, nonzero divisors
    keep = (c != 0) | (d != 0)
    xa, xb, yc, yd = a[:n][keep], b[:n][keep], c[keep], d[keep]
    x, y = cx(xa, xb), cx(yc, yd)
    rows = [((p, q), (r, s)) for p, q, r, s in zip(xa.tolist(), xb.tolist(), yc.tolist(),
                                                     yd.tolist(), strict=True)]
    got = er.divide(x, y, rounding=mode)
    want = [F.cdiv_ieee(complex(*p), complex(*q), mode) for p, q in rows]
    _check_parts(fmt, got, [F.rnd_one(w[0], comp, mode) for w in want],
                 [F.rnd_one(w[1], comp, mode) for w in want], rows, "divide", mode)
    got = er.reciprocal(y, rounding=mode)
    want = [F.cdiv_ieee(1 + 0j, complex(*q), mode) for _, q in rows]
    _check_parts(fmt, got, [F.rnd_one(w[0], comp, mode) for w in want],
                 [F.rnd_one(w[1], comp, mode) for w in want], rows, "reciprocal", mode)
