"""Tier 2: exact values rounded once, checked against MPFR (gmpy2), with hypothesis.

Each input's exact value is computed with Fractions (sums of products of float64 values, Python
ints of any size, binary Fractions with huge or tiny exponents, int64/uint64 arrays); MPFR rounds
that rational once (``mpfr_set_q``) in a context of the target's precision, its minimum exponent,
``subnormalize=True`` and an unbounded maximum exponent, so IEEE 754's overflow test ("the result
rounded as if the exponent range were unbounded exceeds the largest finite value") is a plain
comparison with ``max_finite``. MPFR's RNDN, RNDZ, RNDU and RNDD give four modes; ties-away comes
from the exact midpoint of the RNDD and RNDU results, and round-to-odd from RNDZ, stepping away
from zero when the result is inexact and its last significand bit is 0.

Values are compared bit for bit (zeros by sign, NaN with NaN), and so are the three flags.
Python values (lists of ints and Fractions) take exactref's scalar path; numpy arrays and
``sum_of_products`` take the vectorized paths.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import exactref as er
from exactref._exact import ExactPart, resolve_overflow, sum_of_products
from exactref._formats import FORMATS
from mpfr_rounding import mpfr_round as _mpfr_round
from mpfr_rounding import overflow_value

R = er.Rounding
MODES = list(R)
# Note: the P3109 formats round by the report's rules (code parity, SatNone), which this IEEE
# oracle does not model; tests/test_formats_p3109.py holds them to the report's own oracle
FLOATS = [f for f in FORMATS.values() if f.kind == "float" and f.encoding == "native"]
WIDE = [FORMATS["float64"], FORMATS["float32"]]
SMALL = [f for f in FLOATS if f.bits <= 16]
NAN = "nan"


def _fid(f):
    return f.name


def _mid(m):
    return m.value


# ------------------------------------------------------------------------------- the oracle
def mpfr_round(v: Fraction, fmt, mode) -> Fraction:
    """``v != 0`` rounded once into ``fmt``'s precision and exponent floor (no ceiling)."""
    return _mpfr_round(v, fmt.precision, fmt.emin, mode)


def expected(value, zero_negative, fmt, mode, rule):
    """``(float64 result, inexact, overflow, underflow)`` for an exact value.

    ``value``: a Fraction, ±inf or NAN; ``zero_negative``: the sign of an exact zero.
    """
    if value is NAN:
        return math.nan, False, False, False
    if isinstance(value, float):  # an infinity
        negative = value < 0
        if negative and not fmt.signed:
            return math.nan, False, False, False
        if fmt.has_inf:
            return value, False, False, False
        if fmt.has_nan and rule != "saturate":
            return math.nan, False, False, False
        return (-fmt.max_finite if negative else fmt.max_finite), False, False, False
    if value == 0:
        if not fmt.has_zero:
            return math.nan, False, False, False
        return (-0.0 if zero_negative and fmt.has_negzero else 0.0), False, False, False
    negative = value < 0
    if negative and not fmt.signed:
        return math.nan, False, False, False
    r = mpfr_round(value, fmt, mode)
    inexact = r != value
    underflow = inexact and abs(value) < Fraction(2) ** fmt.emin
    if abs(r) > Fraction(fmt.max_finite):
        over = overflow_value(fmt.max_finite, fmt.has_inf, fmt.has_nan, negative, mode, rule)
        return over, True, True, False
    if r == 0:
        if not fmt.has_zero:  # float8_e8m0fnu: the smallest value, or NaN with no value below
            fill = math.nan if mode in (R.TOWARD_ZERO, R.TOWARD_NEGATIVE) else \
                fmt.smallest_subnormal
            return fill, True, False, underflow
        return (-0.0 if negative and fmt.has_negzero else 0.0), inexact, False, underflow
    return float(r), inexact, False, underflow


def test_oracle_self_check():
    """The MPFR oracle against values worked out by hand (float32: p = 24, emin = -126)."""
    f32, e8 = FORMATS["float32"], FORMATS["float8_e8m0fnu"]
    tie = 1 + Fraction(1, 2**24)
    up = 1 + Fraction(1, 2**23)
    assert [mpfr_round(tie, f32, m) for m in MODES] == [1, up, 1, up, 1, up]
    assert [mpfr_round(-tie, f32, m) for m in MODES] == [-1, -up, -1, -1, -up, -up]
    half_sub = Fraction(1, 2**150)
    assert [mpfr_round(half_sub, f32, m) for m in MODES] == [0, 2 * half_sub, 0, 2 * half_sub,
                                                             0, 2 * half_sub]
    assert expected(Fraction(2**128), False, f32, R.TOWARD_ZERO, "ieee") == (
        f32.max_finite, True, True, False)
    assert [mpfr_round(Fraction(3), e8, m) for m in MODES] == [4, 4, 2, 4, 2, 2]
    assert expected(Fraction(1, 2**200), False, e8, R.NEAREST_EVEN, "nan")[0] == 2.0**-127


# ----------------------------------------------------------------------- exact sums (IEEE)
def exact_sum(row):
    """The exact value of ``sum(prod(term))`` with IEEE 754's specials: Fraction, ±inf or NAN,
    and the sign class of an exact zero (-1 negative, +1 positive, 0 the sum rule)."""
    prods = []
    for term in row:
        if any(math.isnan(f) for f in term):
            return NAN, 0
        sign = -1 if sum(math.copysign(1, f) < 0 for f in term) % 2 else 1
        if any(math.isinf(f) for f in term):
            if any(f == 0 for f in term):
                return NAN, 0
            prods.append(("inf", sign))
        elif any(f == 0 for f in term):
            prods.append(("zero", sign))
        else:
            prods.append(("fin", math.prod((Fraction(f) for f in term), start=Fraction(1))))
    infs = {s for k, s in prods if k == "inf"}
    if len(infs) == 2:
        return NAN, 0
    if infs:
        return (math.inf if infs.pop() > 0 else -math.inf), 0
    total = sum((v for k, v in prods if k == "fin"), Fraction(0))
    if total != 0:
        return total, 0
    if all(k == "zero" for k, _ in prods):
        signs = {s for _, s in prods}
        if signs == {-1}:
            return Fraction(0), -1
        if signs == {1}:
            return Fraction(0), 1
    return Fraction(0), 0


def _zero_negative(zclass, mode):
    return zclass < 0 or (zclass == 0 and mode is R.TOWARD_NEGATIVE)


# ---------------------------------------------------------------------------- assertions
def _same(got: float, want: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def check(fmt, mode, rule, call, inputs, wants, got, flags):
    """Compare one call's results with the oracle's, element by element."""
    __tracebackhide__ = True
    bad = []
    names = ("inexact", "overflow", "underflow")
    for i, (x, w) in enumerate(zip(inputs, wants, strict=True)):
        g = (float(got[i]), bool(flags[0][i]), bool(flags[1][i]), bool(flags[2][i]))
        if not _same(g[0], w[0]) or g[1:] != tuple(w[1:]):
            fw = [n for n, f in zip(names, w[1:], strict=True) if f]
            fg = [n for n, f in zip(names, g[1:], strict=True) if f]
            bad.append(f"  {call}({x}, {fmt.name!r}, rounding={mode.value!r}, overflow={rule!r})"
                       f": expected {float(w[0]).hex()} {fw}, got {g[0].hex()} {fg}")
    if bad:
        pytest.fail(f"{len(bad)} of {len(wants)} elements differ from MPFR:\n"
                    + "\n".join(bad[:8]), pytrace=False)


def _row_text(row):
    return " + ".join("*".join(f.hex() for f in term) for term in row)


def check_rows(fmt, mode, rows):
    """``sum_of_products`` of the rows (grouped by shape) rounded once, against MPFR."""
    __tracebackhide__ = True
    rule = resolve_overflow(None, fmt)
    groups = {}
    for row in rows:
        groups.setdefault(tuple(len(t) for t in row), []).append(row)
    for shape, grp in groups.items():
        exact = [exact_sum(row) for row in grp]
        if not fmt.has_nan:
            keep = [i for i, (v, _) in enumerate(exact) if v is not NAN]
            grp, exact = [grp[i] for i in keep], [exact[i] for i in keep]
            if not grp:
                continue
        n = len(grp)
        terms = []
        for t, k in enumerate(shape):
            terms.append(tuple(
                ExactPart.from_float64(np.array([row[t][f] for row in grp], dtype=np.float64))
                for f in range(k)))
        ex = sum_of_products(terms, (n,))
        got, ine, ovf, unf = ex.round(fmt, mode, rule)
        wants = [expected(v, _zero_negative(z, mode), fmt, mode, rule) for v, z in exact]
        check(fmt, mode, rule, "sum_of_products", [_row_text(r) for r in grp], wants, got,
              (ine, ovf, unf))


# ----------------------------------------------------------------------------- strategies
ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e300, -1e-300, 2.0**-1074, 2.0**1000, 2.0**-1000,
                     1.7976931348623157e308, 2.0**-1022, 65504.0, 3.4028234663852886e38]),
    st.builds(lambda m, e: math.ldexp(m, e), st.integers(-(2**53), 2**53),
              st.integers(-1130, 970)),
)


_SHAPES = [tuple(s) for n in (1, 2, 3) for s in np.ndindex(*([2] * n))]
_ROW = {s: st.tuples(*[st.tuples(*[ANY_FLOAT] * (k + 1)) for k in s]) for s in _SHAPES}
random_rows = st.sampled_from(_SHAPES).flatmap(
    lambda s: st.lists(_ROW[s], min_size=1, max_size=8))
random_rows.__doc__ = "Rows of one shape: 1-3 terms, each a product of 1-2 float64 values."


def _factor(m: int, k: int):
    """``m * 2**k`` as a product of two float64 values (|m| < 2**53, -2074 <= k <= 1983)."""
    k1 = min(max(k, -1000), 960)
    return (math.ldexp(float(m), k1), math.ldexp(1.0, k - k1))


_FLOOR_K, _CEIL_K = -2074, 1983


def designed_value(fmt, rnd):
    """An exact value near a value of ``fmt``, as terms ``(m, k)`` (value ``m * 2**k``).

    A value of the format (or one past its range), plus half an ulp and/or a part 1 to 1300
    binades lower, or a random part below the ulp. ``rnd`` is a ``random.Random`` seeded by
    hypothesis.
    """
    p, emin, emax = fmt.precision, fmt.emin, fmt.emax
    top = 2**p - 1
    if rnd.random() < 0.3:
        e = rnd.choice([emin - p, emin - 1, emin, emin + 1, emax, emax + 1])
    else:
        e = rnd.randint(emin - p - 1, emax + 1)
    if rnd.random() < 0.3:
        sig = rnd.choice([0, 1, 2, top, top - 1, 2 ** (p - 1), 2 ** (p - 1) + 1,
                          2 ** (p - 1) - 1, fmt.max_mantissa])
    else:
        sig = rnd.randint(0, top)
    sign, d, d2 = (rnd.choice([1, -1]) for _ in range(3))
    kind = rnd.choice(["none", "half", "half_tiny", "half_tiny", "tiny", "random"])
    q = max(e, emin) - p + 1
    j = rnd.randint(1, 70) if rnd.random() < 0.5 else rnd.randint(1, 1300)
    j = min(j, q - 1 - _FLOOR_K)
    terms = [(sign * sig, q)]
    if kind in ("half", "half_tiny"):
        terms.append((d * sign, q - 1))
    if kind in ("tiny", "half_tiny"):
        terms.append((d2 * sign, q - 1 - j))
    if kind == "random":
        m = rnd.randint(1, 2**53 - 1)
        terms.append((d * sign * m, q - 1 - min(j, 60) - 53 + m.bit_length()))
    return [(mm, max(min(k, _CEIL_K), _FLOOR_K)) for mm, k in terms]


def designed_rows(fmt, rnd, n=24):
    """``n`` rows ``((f1, f2), (f1, f2), (f1, f2))``: three exact products, zero-padded."""
    rows = []
    for _ in range(n):
        terms = designed_value(fmt, rnd)
        terms = terms + [(0, 0)] * (3 - len(terms))
        rows.append(tuple(_factor(m, k) for m, k in terms))
    return rows


# One drawn seed per example: generation stays cheap (hypothesis' own randoms() costs a draw per
# call), and a failure prints the exact inputs that differ, whatever the seed shrank to.
RANDOMS = st.integers(0, 2**64 - 1).map(random.Random)


# ------------------------------------------------------------------------- engine: sums
_F64MAX = 1.7976931348623157e308
_F32MAX = 3.4028234663852886e38


# Pinned rows, tried first in every format and mode.
PINNED_ROWS = [
    # ties, and one ulp (of the tie-breaking term) either side, in float64 and float32
    [((1.0,), (2.0**-53,)), ((1.0 + 2.0**-52,), (2.0**-53,)), ((1.0,), (-(2.0**-54),)),
     ((-1.0,), (-(2.0**-53),)), ((1.0,), (2.0**-53 + 2.0**-105,)),
     ((1.0,), (2.0**-53 - 2.0**-106,)), ((1.0,), (2.0**-24,)),
     ((1.0 + 2.0**-23,), (2.0**-24,)), ((1.0,), (2.0**-24 + 2.0**-76,)),
     ((1.0,), (2.0**-24 - 2.0**-77,)), ((-(1.0 + 2.0**-23),), (-(2.0**-24),))],
    # subnormal boundaries: half the smallest subnormal, the smallest normal minus a little
    [((2.0**-1074, 0.5),), ((2.0**-1074, 0.75),), ((2.0**-1074, 0.25),),
     ((2.0**-1074, -0.5),), ((2.0**-1074, 1.5),), ((2.0**-1022, 1.0 - 2.0**-53),),
     ((2.0**-1022, 1.0 - 2.0**-54),), ((2.0**-149, 0.5),), ((2.0**-149, 1.5),),
     ((2.0**-126, 1.0 - 2.0**-25),), ((2.0**-126, 1.0 - 2.0**-24),),
     ((2.0**-1074, 2.0**-1074),)],
    # the largest finite value and its rounding boundary max + ulp/2
    [((_F64MAX,), (2.0**970,)), ((_F64MAX,), (2.0**970 - 2.0**917,)),
     ((-_F64MAX,), (-(2.0**970),)), ((_F64MAX,), (2.0**969,)), ((_F64MAX,), (0.0,)),
     ((_F32MAX,), (2.0**103,)), ((_F32MAX,), (2.0**103 - 2.0**50,)),
     ((-_F32MAX,), (-(2.0**103),)), ((_F32MAX,), (2.0**102,)),
     ((_F64MAX,), (_F64MAX,))],
    # signed zeros, cancellation to an exact zero, IEEE specials
    [((-0.0,), (-0.0,)), ((0.0,), (-0.0,)), ((0.0,), (0.0,)), ((1.0,), (-1.0,)),
     ((-1e300,), (1e300,)), ((np.inf,), (-np.inf,)), ((np.inf,), (1.0,)),
     ((-np.inf,), (-np.inf,)), ((np.nan,), (1.0,))],
    [((0.0, np.inf),), ((-0.0, 5.0),), ((-0.0, -0.0),), ((np.inf, -2.0),),
     ((1e-300, 1e-300),), ((1e300, 1e300),), ((-1e-300, 1e-300),)],
    [((0.1, 0.1), (-0.1, 0.1)), ((-0.0, 2.0), (0.0, -3.0)), ((-0.0, 2.0), (-0.0, 3.0)),
     ((1e300, 1e-300), (-1e300, 1e-300))],
    # terms 2000 binades apart: the small one decides the directed modes (the slow path)
    [((1e300,), (1e-300,)), ((2.0**1000,), (2.0**-1000,)), ((2.0**1000,), (-(2.0**-1000),)),
     ((-(2.0**1000),), (2.0**-1000,)), ((1.0,), (2.0**-1074,)),
     ((1.0 + 2.0**-52,), (-(2.0**-1074),)), ((2.0**-1000,), (2.0**1000,))],
    [((1.0,), (2.0**-53,), (2.0**-1074,)), ((1.0,), (2.0**-53,), (-(2.0**-1074),)),
     ((1.0,), (2.0**-24,), (-(2.0**-1074),)), ((2.0**1000,), (2.0**947,), (-(2.0**-1000),))],
]


def pinned(fmt):
    """The pinned rows as explicit examples: all of them for the 32/64-bit targets; the signed
    zeros, specials, cancellations and 2000-binade sums for the narrow formats."""
    rows_list = PINNED_ROWS if fmt.bits >= 32 else PINNED_ROWS[3:7]

    def decorate(test):
        for rows in reversed(rows_list):
            test = example(rows=rows)(test)
        return test

    return decorate


_SCALE = []


@pytest.fixture(autouse=True)
def _hypothesis_scale(request):
    """``--run-slow`` runs ten times the examples."""
    _SCALE[:] = [10 if request.config.getoption("--run-slow") else 1]


def budget(fmt, wide, small):
    """Examples per format and mode: the 32/64-bit targets get the most."""
    return (wide if fmt.bits >= 32 else small) * (_SCALE[0] if _SCALE else 1)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", WIDE + SMALL, ids=_fid)
def test_sum_of_products_random(fmt, mode):
    """Any float64 values (specials too) in sums of 1-3 products, and the pinned rows."""

    @settings(max_examples=budget(fmt, 20, 3))
    @given(rows=random_rows)
    @pinned(fmt)
    def run(rows):
        check_rows(fmt, mode, rows)

    run()


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", WIDE + SMALL, ids=_fid)
def test_sum_of_products_near_ties(fmt, mode):
    """Values of the format plus half an ulp, plus or minus a part up to 1300 binades lower."""

    @settings(max_examples=budget(fmt, 20, 3))
    @given(rnd=RANDOMS)
    def run(rnd):
        check_rows(fmt, mode, designed_rows(fmt, rnd))

    run()


# ---------------------------------------------------------------------- round_to: float64
def _exact_float(x: float):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return x
    return Fraction(x)


def _float64(v: Fraction):
    """``v`` as a float64 where one holds it exactly, else None."""
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if x == v else None


def _designed_fraction(terms):
    return sum((Fraction(m) * Fraction(2) ** k for m, k in terms), Fraction(0))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", [FORMATS["float32"]], ids=_fid)
def test_round_to_float64_arrays(fmt, mode):
    """Float64 arrays are exact inputs: any float64 value, and designed ties of the format.

    (Into the formats of 16 bits or fewer, test_rounding_exhaustive sweeps every point.)"""
    designed = RANDOMS.map(lambda rnd: [
        x for x in (_float64(_designed_fraction(designed_value(fmt, rnd))) for _ in range(24))
        if x is not None])

    @settings(max_examples=budget(fmt, 20, 3))
    @given(xs=st.lists(ANY_FLOAT, min_size=1, max_size=16), extra=designed)
    @example(xs=[_F64MAX, -_F64MAX, 2.0**1023, _F32MAX, 2.0**128 - 2.0**103,
                 2.0**128 - 2.0**104, -(2.0**128 - 2.0**104)], extra=[])
    @example(xs=[2.0**-150, 2.0**-150 + 2.0**-200, -(2.0**-150), 2.0**-149 * 1.5, 2.0**-1074,
                 -0.0, 0.0, np.inf, -np.inf, np.nan, 2.0**-126 - 2.0**-150], extra=[])
    def run(xs, extra):
        xs = xs + extra
        if not fmt.has_nan:
            xs = [x for x in xs if not math.isnan(x)]
            if not xs:
                return
        rule = resolve_overflow(None, fmt)
        r = er.round_to(np.array(xs, dtype=np.float64), fmt, rounding=mode)
        wants = [expected(_exact_float(x), math.copysign(1, x) < 0, fmt, mode, rule)
                 for x in xs]
        check(fmt, mode, rule, "er.round_to", [x.hex() for x in xs], wants,
              r.array.numpy().astype(np.float64), (r.inexact, r.overflow, r.underflow))

    run()


# ------------------------------------------------------------- round_to: Python exact values
BIG_INTS = st.one_of(
    st.integers(-(2**300), 2**300),
    st.builds(lambda m, k, d: (m << k) + d, st.integers(-(2**60), 2**60), st.integers(0, 1100),
              st.integers(-3, 3)),
)
BINARY_FRACTIONS = st.builds(lambda m, k: Fraction(m) * Fraction(2) ** k,
                             st.integers(-(2**200), 2**200), st.integers(-3500, 3000))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", WIDE + SMALL, ids=_fid)
def test_round_to_python_values(fmt, mode):
    """Python ints of any size and binary Fractions (the scalar path) against MPFR."""
    designed = RANDOMS.map(lambda rnd: [_designed_fraction(designed_value(fmt, rnd))
                                        for _ in range(24)])

    @settings(max_examples=budget(fmt, 15, 2))
    @given(values=st.lists(st.one_of(BIG_INTS, BINARY_FRACTIONS), min_size=1, max_size=12),
           extra=designed)
    @example(values=[2**53 + 1, 2**54 + 2, 2**53 + 3, -(2**53 + 1), 2**100 + 1,
                     2**1024 - 2**970, 2**1024 - 2**970 - 1, 2**1024, 3**700, 2**24 + 1,
                     2**128 - 2**103, 0, -(2**2000)], extra=[])
    @example(values=[Fraction(1, 2**1075), Fraction(3, 2**1076),
                     Fraction(1, 2**1075) + Fraction(1, 2**3000), Fraction(-1, 2**1075),
                     Fraction(1, 2**150), 1 + Fraction(1, 2**5000),
                     1 + Fraction(1, 2**53) + Fraction(1, 2**5000),
                     -(1 + Fraction(1, 2**53) - Fraction(1, 2**5000)), Fraction(0),
                     Fraction(2**80 + 1, 2**20), 1 + Fraction(1, 2**24) - Fraction(1, 2**4000)],
             extra=[])
    def run(values, extra):
        values = values + extra
        rule = resolve_overflow(None, fmt)
        r = er.round_to(values, fmt, rounding=mode)
        wants = [expected(Fraction(v), False, fmt, mode, rule) for v in values]
        check(fmt, mode, rule, "er.round_to", [repr(v) for v in values], wants,
              r.array.numpy().astype(np.float64), (r.inexact, r.overflow, r.underflow))

    run()


# ------------------------------------------------------------- round_to: int64 and uint64
def _near_pow2_ints(lo, hi):
    return st.builds(lambda k, d: min(max((1 << k) + d, lo), hi), st.integers(0, 64),
                     st.integers(-(2**12), 2**12)) | st.builds(
        lambda m, k: min(max(m << k, lo), hi), st.integers(-(2**25), 2**25), st.integers(0, 40))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", WIDE + SMALL, ids=_fid)
@pytest.mark.parametrize("src", ["int64", "uint64"])
def test_round_to_wide_integer_arrays(src, fmt, mode):
    """int64 and uint64 arrays (two float64 components each) round once from the integer."""
    info = np.iinfo(src)
    lo, hi = int(info.min), int(info.max)
    pinned_ints = [lo, hi, hi - 1, (hi >> 11) << 11, ((hi >> 40) << 40) | (1 << 39),
                   ((hi >> 40) << 40) | ((1 << 39) + 1), 2**53 + 1, 2**24 + 1, 0, 1]

    @settings(max_examples=budget(fmt, 8, 2))
    @given(ints=st.lists(st.integers(lo, hi) | _near_pow2_ints(lo, hi), min_size=1,
                         max_size=16))
    def run(ints):
        ints = ints + pinned_ints
        rule = resolve_overflow(None, fmt)
        r = er.round_to(np.array(ints, dtype=src), fmt, rounding=mode)
        wants = [expected(Fraction(v), False, fmt, mode, rule) for v in ints]
        check(fmt, mode, rule, f"er.round_to(np.{src}", [str(v) for v in ints], wants,
              r.array.numpy().astype(np.float64), (r.inexact, r.overflow, r.underflow))

    run()
