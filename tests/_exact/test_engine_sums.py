"""The exact engine: sums of products, exact per element, rounded once.

Every case computes the exact sum with Fractions and rounds it with this file's own oracle,
written from the format definition (the two neighbours of the exact value at the quantum
``2**(max(e, emin) - p + 1)``, the mode's choice between them, the overflow rule), never with
exactref's rounding code. Operands are float64 arrays, int64/uint64 arrays near 2**63 and 2**64,
and exact scalars with more than 53 significant bits; sums cancel, tie, and span more than 1000
binades (the engine's slow path).
"""

from __future__ import annotations

import functools
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exactref as er
from exactref._exact import ExactPart, resolve_overflow, sum_of_products
from exactref._formats import FORMATS
from mpfr_rounding import overflow_value, round_to_int

R = er.Rounding
MODES = list(R)
TARGETS = [FORMATS[n] for n in ("float64", "float32", "bfloat16", "float8_e4m3fn",
                                "float8_e8m0fnu")]
NAN = "nan"


def _fid(f):
    return f.name


def _mid(m):
    return m.value


# --------------------------------------------------------------------- the Fraction oracle
def _floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if a >= Fraction(2) ** e else e - 1


def oracle(value, zero_negative, fmt, mode, rule):
    """``(result, inexact, overflow, underflow)`` of rounding an exact value once into ``fmt``.

    ``value``: a Fraction, ±inf or NAN; ``zero_negative``: the sign of an exact zero.
    """
    if value is NAN:
        return math.nan, False, False, False
    if isinstance(value, float):
        if value < 0 and not fmt.signed:
            return math.nan, False, False, False
        if fmt.has_inf:
            return value, False, False, False
        if fmt.has_nan and rule != "saturate":
            return math.nan, False, False, False
        return math.copysign(fmt.max_finite, value), False, False, False
    if value == 0:
        if not fmt.has_zero:
            return math.nan, False, False, False
        return (-0.0 if zero_negative and fmt.has_negzero else 0.0), False, False, False
    negative = value < 0
    if negative and not fmt.signed:
        return math.nan, False, False, False
    a = abs(value)
    quantum = Fraction(2) ** (max(_floor_log2(a), fmt.emin) - fmt.precision + 1)
    n = a // quantum  # the lower neighbour is n * quantum; n's parity is the last bit
    lo, hi = n * quantum, (n + 1) * quantum
    rem = a - lo
    if rem == 0:
        mag = a
    else:
        half = quantum / 2
        if mode is R.NEAREST_EVEN:
            away = rem > half or (rem == half and (n % 2 == 1 or fmt.precision == 1))
        elif mode is R.NEAREST_AWAY:
            away = rem >= half
        elif mode is R.TOWARD_ZERO:
            away = False
        elif mode is R.TOWARD_POSITIVE:
            away = not negative
        elif mode is R.TOWARD_NEGATIVE:
            away = negative
        else:
            away = n % 2 == 0
        mag = hi if away else lo
    inexact = rem != 0
    underflow = inexact and a < Fraction(2) ** fmt.emin
    if mag > Fraction(fmt.max_finite):
        over = overflow_value(fmt.max_finite, fmt.has_inf, fmt.has_nan, negative, mode, rule)
        return over, True, True, False
    if mag == 0:
        if not fmt.has_zero:
            nan_side = mode in (R.TOWARD_ZERO, R.TOWARD_NEGATIVE)
            return (math.nan if nan_side else fmt.smallest_subnormal), True, False, underflow
        return (-0.0 if negative and fmt.has_negzero else 0.0), True, False, underflow
    return (-float(mag) if negative else float(mag)), inexact, False, underflow


def test_oracle_self_check():
    """The oracle against a few values worked out by hand."""
    f32, bf = FORMATS["float32"], FORMATS["bfloat16"]
    assert oracle(1 + Fraction(1, 2**24), False, f32, R.NEAREST_EVEN, "ieee") == (
        1.0, True, False, False)
    assert oracle(1 + Fraction(1, 2**24), False, f32, R.ODD, "ieee")[0] == 1 + 2.0**-23
    assert oracle(Fraction(3, 2**134), False, bf, R.NEAREST_EVEN, "ieee") == (
        2.0**-132, True, False, True)
    assert oracle(Fraction(2**128), False, bf, R.TOWARD_ZERO, "ieee") == (
        float.fromhex("0x1.fep+127"), True, True, False)


# ----------------------------------------------------------------------- exact sums (IEEE)
class Op:
    """An engine operand together with the exact values of its elements."""

    def __init__(self, operand, values, text):
        self.operand = operand
        self.values = values  # list of Fraction / float (inf, nan) per element, or one scalar
        self.text = text

    def at(self, i):
        return self.values if not isinstance(self.values, list) else self.values[i]


def f64(x, text="f64"):
    x = np.asarray(x, dtype=np.float64)
    return Op(ExactPart.from_float64(x), [float(v) for v in x], text)


def ints(x, text="int"):
    x = np.asarray(x)
    return Op(ExactPart.from_integers(x), [int(v) for v in x], text)


def scalar(v, text=None):
    return Op(ExactPart.from_scalar(v), v, text or repr(v))


def _ieee_value(v):
    """``(kind, value)`` of one factor: ('nan'|'inf'|'zero'|'fin', signed value)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan", v
        if math.isinf(v):
            return "inf", v
        if v == 0:
            return "zero", math.copysign(1.0, v)
    if v == 0:
        return "zero", 1.0
    return "fin", Fraction(v)


def exact_element(terms, i):
    """IEEE's exact sum of element ``i``: (Fraction | ±inf | NAN, zero sign class)."""
    prods = []
    for term in terms:
        kinds = [_ieee_value(op.at(i)) for op in term]
        if any(k == "nan" for k, _ in kinds):
            return NAN, 0
        neg = sum(v < 0 for _, v in kinds) % 2 == 1
        if any(k == "inf" for k, _ in kinds):
            if any(k == "zero" for k, _ in kinds):
                return NAN, 0
            prods.append(("inf", neg))
        elif any(k == "zero" for k, _ in kinds):
            prods.append(("zero", neg))
        else:
            prods.append(("fin", math.prod((v for _, v in kinds), start=Fraction(1))))
    infs = {neg for k, neg in prods if k == "inf"}
    if len(infs) == 2:
        return NAN, 0
    if infs:
        return (-math.inf if infs.pop() else math.inf), 0
    total = sum((v for k, v in prods if k == "fin"), Fraction(0))
    if total != 0:
        return total, 0
    if all(k == "zero" for k, _ in prods):
        signs = {neg for _, neg in prods}
        if signs == {True}:
            return Fraction(0), -1
        if signs == {False}:
            return Fraction(0), 1
    return Fraction(0), 0


def _same(got, want):
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def check_sum(terms, n, fmt, mode, rule=None, computed=None):
    """Round ``sum_of_products`` of ``terms`` once and compare every element with the oracle.

    ``computed``: the ``(exact values, ExactArray)`` of these terms, when already at hand.
    """
    __tracebackhide__ = True
    rule = resolve_overflow(rule, fmt)
    if computed is None:
        exact = [exact_element(terms, i) for i in range(n)]
        ex = sum_of_products([tuple(op.operand for op in t) for t in terms], (n,))
    else:
        exact, ex = computed
    if not fmt.has_nan and any(v is NAN for v, _ in exact):
        pytest.skip("NaN results in a format without NaN: see test_rounding_pinned")
    got, ine, ovf, unf = ex.round(fmt, mode, rule)
    bad = []
    for i, (v, z) in enumerate(exact):
        zero_negative = z < 0 or (z == 0 and mode is R.TOWARD_NEGATIVE)
        want = oracle(v, zero_negative, fmt, mode, rule)
        g = (float(got[i]), bool(ine[i]), bool(ovf[i]), bool(unf[i]))
        if not _same(g[0], want[0]) or g[1:] != want[1:]:
            text = " + ".join("*".join(_show(op.at(i)) for op in t) for t in terms)
            bad.append(f"  element {i}: {text} = {_show(v)} into {fmt.name} ({mode.value}, "
                       f"{rule}): expected {float(want[0]).hex()} {want[1:]}, got "
                       f"{g[0].hex()} {g[1:]}")
    if bad:
        pytest.fail(f"{len(bad)} of {n} elements differ from the Fraction oracle "
                    f"(flags: inexact, overflow, underflow):\n" + "\n".join(bad[:6]),
                    pytrace=False)
    return ex, exact


def _show(v):
    if isinstance(v, float):
        return v.hex()
    if isinstance(v, int):
        return str(v)
    if v is NAN:
        return "nan"
    if v.denominator == 1:
        return str(v.numerator)
    return f"Fraction({v.numerator}, 2**{v.denominator.bit_length() - 1})"


# ------------------------------------------------------------------------ random operands
def _rand_f64(rng, n, style):
    sig = rng.integers(2**52, 2**53, size=n).astype(np.float64)
    if style == "short":  # few significant bits: exact cancellations and ties are likely
        sig = rng.integers(1, 16, size=n).astype(np.float64)
    sign = rng.choice([-1.0, 1.0], size=n)
    if style == "wide":
        e = rng.integers(-1120, 970, size=n)
    elif style == "far":
        e = rng.choice([-1050, -600, 0, 600, 940], size=n) + rng.integers(-3, 4, size=n)
    else:
        e = rng.integers(-30, 30, size=n)
    return np.ldexp(sign * sig, e)  # subnormal results keep their bits only when exact


_SCALARS = [3**40, -(3**40), Fraction(2**80 + 1, 2**20), Fraction(-(2**80) - 1, 2**20),
            Fraction(1, 2**1100), -Fraction(3, 2**1200), 2**200 + 1, 0.1, -3, 7, 2**63 + 1,
            Fraction(2**60 - 1, 2**70)]


def _random_op(rng, n):
    kind = rng.choice(["f64", "f64", "f64", "int64", "uint64", "scalar"])
    if kind == "f64":
        style = str(rng.choice(["narrow", "short", "wide", "far"]))
        return f64(_rand_f64(rng, n, style), f"f64[{style}]")  # exact, whatever ldexp did
    if kind == "int64":
        base = rng.choice([0, 2**62, 2**63 - 1, -(2**63), 2**53])
        d = rng.integers(-(2**20), 2**20, size=n)
        x = np.array([max(min(int(base) + int(v), 2**63 - 1), -(2**63)) for v in d], np.int64)
        x = np.where(x == -(2**63), x, x * rng.choice([-1, 1], size=n))
        return ints(x, "int64")
    if kind == "uint64":
        base = rng.choice([2**64 - 1, 2**63, 2**53 + 1, 0])
        d = rng.integers(0, 2**20, size=n)
        x = np.array([max(min(int(base) - int(v), 2**64 - 1), 0) for v in d], np.uint64)
        return ints(x, "uint64")
    v = _SCALARS[int(rng.integers(len(_SCALARS)))]
    return scalar(v)


def random_terms(rng, n):
    """1-5 terms of 1-3 random operands, plus adversarial structure: a term and its negation
    (cancellation), and a term that puts part of another an exact half step away."""
    terms = []
    for _ in range(int(rng.integers(1, 5))):
        terms.append([_random_op(rng, n) for _ in range(int(rng.integers(1, 4)))])
    if rng.random() < 0.4:  # cancel a term exactly: its product negated, as its own term
        t = terms[int(rng.integers(len(terms)))]
        first = t[0]
        if isinstance(first.values, list) and first.text.startswith("f64"):
            neg = f64([-v for v in first.values], "-" + first.text)
            terms.append([neg, *t[1:]])
    rng.shuffle(terms)
    return terms


SEEDS = st.integers(0, 2**64 - 1)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
@settings(max_examples=8)
@given(seed=SEEDS)
def test_random_sums_of_products(fmt, mode, seed):
    rng = np.random.default_rng(seed)
    n = 32
    check_sum(random_terms(rng, n), n, fmt, mode)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
@settings(max_examples=8)
@given(seed=SEEDS)
def test_ties_near_the_target(fmt, mode, seed):
    """``t + h + tiny``: ``t`` a value of the format, ``h`` half its ulp, ``tiny`` signed and
    up to 1200 binades lower (or zero), as three float64 terms or products."""
    rnd = random.Random(seed)
    n = 32
    p, emin, emax = fmt.precision, fmt.emin, min(fmt.emax, 900)
    t, h, tiny = [], [], []
    for _ in range(n):
        e = rnd.choice([rnd.randint(max(emin, -1000), emax), emin, emax, emin - 1])
        q = max(e, emin) - p + 1
        sig = rnd.randint(0, 2**p - 1) if e <= emin else rnd.randint(2 ** (p - 1), 2**p - 1)
        sign = rnd.choice([1, -1])
        t.append(math.ldexp(sign * sig, q) if q >= -1074 else 0.0)
        h.append(math.ldexp(sign * rnd.choice([1, -1, 0]), q - 1) if q - 1 >= -1074 else 0.0)
        k = q - 1 - rnd.choice([1, 2, 30, 60, 500, 1200])
        tiny.append(math.ldexp(rnd.choice([1, -1, 0]), max(k, -1074)))
    check_sum([[f64(t)], [f64(h)], [f64(tiny)]], n, fmt, mode)


# ------------------------------------------------------------------------ adversarial sums
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
def test_gaps_over_1000_binades(fmt, mode):
    """Terms more than 1000 binades apart take the slow path; the small one still decides."""
    big = [1e300, 2.0**1000, -(2.0**1000), 1.0, 1.0, 1.0 + 2.0**-52, 2.0**-1000, 0.5, 3.0]
    small = [1e-300, 2.0**-1000, 2.0**-1000, 2.0**-1074, -(2.0**-1074), -(2.0**-1074),
             2.0**1000, -(2.0**-1060), 2.0**-1074]
    half = [0.0, 0.0, 0.0, 2.0**-53, 2.0**-24, 2.0**-53, 0.0, 2.0**-25, 0.0]
    check_sum([[f64(big)], [f64(small)], [f64(half)]], len(big), fmt, mode)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
def test_wide_integers_and_long_scalars(fmt, mode):
    """int64/uint64 near 2**63 and 2**64, times scalars with more than 53 significant bits.

    (Zeros are left to test_integer_zero_signs.)"""
    i64 = ints(np.array([2**63 - 1, -(2**63), 2**63 - 2**10, 2**53 + 1, -(2**53 + 1), 3,
                         2**62 + 1, -1], np.int64))
    u64 = ints(np.array([2**64 - 1, 2**63 + 3, 2**63 + 1, 2**64 - 2**11, 2**53 + 3, 5,
                         2**64 - 2**40 - 1, 2], np.uint64))
    n = 8
    for s in (3**40, Fraction(2**80 + 1, 2**20), -(2**70) - 1,
              Fraction(-1, 2**1100), 2**2000 + 1, 0.1):
        sc = scalar(s)
        check_sum([[i64, sc]], n, fmt, mode)
        check_sum([[u64, sc], [i64]], n, fmt, mode)
    check_sum([[i64], [u64]], n, fmt, mode)
    check_sum([[i64, u64]], n, fmt, mode)
    check_sum([[u64, u64, i64]], n, fmt, mode)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
def test_long_sums(fmt, mode):
    """K = 301 terms: random magnitudes, cancelling pairs and a tiny decider."""
    terms, n, computed = _long_sum()
    check_sum(terms, n, fmt, mode, computed=computed)


@functools.cache
def _long_sum():
    rng = np.random.default_rng(7)
    n = 16
    terms = []
    for k in range(150):
        x = _rand_f64(rng, n, "narrow" if k % 3 else "far")
        terms.append([f64(x)])
        terms.append([f64(-x)] if k % 2 else [f64(_rand_f64(rng, n, "short"))])
    terms.append([f64(np.ldexp(np.ones(n), -1070))])
    exact = [exact_element(terms, i) for i in range(n)]
    ex = sum_of_products([tuple(op.operand for op in t) for t in terms], (n,))
    return terms, n, (exact, ex)


# ------------------------------------------------------------- IEEE specials and zero signs
ZERO_ROWS = [
    ([-0.0], [-0.0], "-0 + -0: -0 in every mode"),
    ([0.0], [-0.0], "+0 + -0: the sum rule"),
    ([-0.0], [0.0], "-0 + +0: the sum rule"),
    ([0.0], [0.0], "+0 + +0"),
    ([1.0], [-1.0], "1 - 1: +0, -0 rounding toward negative"),
    ([-1e300], [1e300], "cancellation of large values"),
    ([2.0**-1074], [-(2.0**-1074)], "cancellation of subnormals"),
]


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
def test_zero_signs(fmt, mode):
    a = f64([r[0][0] for r in ZERO_ROWS])
    b = f64([r[1][0] for r in ZERO_ROWS])
    check_sum([[a], [b]], len(ZERO_ROWS), fmt, mode)
    # as products: (-0 * 5) + (0 * -3) is -0 + -0; (0 * -5) + (0 * 3) is -0 + +0
    x = f64([-0.0, 0.0, 1e300, 2.0**600])
    y = f64([5.0, -5.0, 1e300, 2.0**600])
    u = f64([0.0, 0.0, -1e300, 2.0**600])
    v = f64([-3.0, 3.0, 1e300, -(2.0**600)])
    check_sum([[x, y], [u, v]], 4, fmt, mode)
    # four terms cancelling across 2000 binades (the slow path)
    check_sum([[f64([1e300])], [f64([1e-300])], [f64([-1e300])], [f64([-1e-300])]], 1, fmt,
              mode)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
def test_integer_zero_signs(fmt, mode):
    """Integer operands hold +0; the exact zero's sign is IEEE's, as for float operands:
    ``0 * -5`` is -0 (as int 0 times float -5.0 gives), and ``1 - 1`` is a cancellation."""
    i0 = ints(np.array([0, 0, 0], np.int64))
    check_sum([[i0, scalar(-5)]], 3, fmt, mode)
    check_sum([[i0, ints(np.array([-5, 5, -(2**63)], np.int64))]], 3, fmt, mode)
    check_sum([[i0, f64([-5.0, 5.0, -1e300])]], 3, fmt, mode)
    check_sum([[ints(np.array([1, 0, 5], np.int64))], [ints(np.array([-1, 0, -5], np.int64))]],
              3, fmt, mode)
    check_sum([[ints(np.array([1, 2**63 - 1], np.int64))],
               [ints(np.array([-1, -(2**63 - 1)], np.int64))]], 2, fmt, mode)
    check_sum([[ints(np.array([3, 0], np.int16))], [ints(np.array([-3, 0], np.int16))]], 2,
              fmt, mode)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", TARGETS, ids=_fid)
def test_specials(fmt, mode):
    inf, nan = math.inf, math.nan
    x = f64([0.0, inf, inf, -inf, nan, inf, 1e300, -0.0, inf, 2.0])
    y = f64([inf, -2.0, 1.0, -1.0, 0.0, 0.0, 1e300, -inf, 1.0, 3.0])
    z = f64([1.0, 1.0, -inf, -inf, 1.0, 1.0, inf, 0.0, 1e308, -inf])
    check_sum([[x, y], [z]], 10, fmt, mode)
    check_sum([[x], [y], [z]], 10, fmt, mode)
    s = scalar(inf, "inf")
    check_sum([[f64([1.0, 0.0, -1.0, -0.0, 2.0**-1074]), s]], 5, fmt, mode)
    check_sum([[f64([1.0, -1.0, 2.0**1000]), scalar(-inf, "-inf")], [f64([inf, inf, -inf])]],
              3, fmt, mode)


# ------------------------------------------------------------------ the exact representation
@settings(max_examples=25)
@given(seed=SEEDS)
def test_elements_round_like_the_exact_value(seed):
    """``ExactArray.element(i)`` is the exact sum, or a representative that rounds like it into
    every format and mode; ``zero`` marks exact zeros."""
    rng = np.random.default_rng(seed)
    n = 16
    terms = random_terms(rng, n)
    ex = sum_of_products([tuple(op.operand for op in t) for t in terms], (n,))
    for i in range(n):
        v, _ = exact_element(terms, i)
        e = ex.element(i)
        if v is NAN:
            assert e is NAN or (isinstance(e, float) and math.isnan(e)), (i, e)
            continue
        if isinstance(v, float):
            assert e == v, (i, e, v)
            continue
        assert bool(ex.zero[i]) == (v == 0), (i, v)
        if v == 0:
            continue
        for fmt in (FORMATS["float64"], FORMATS["float32"], FORMATS["float16"]):
            for mode in MODES:
                assert oracle(e, False, fmt, mode, "ieee") == oracle(v, False, fmt, mode,
                                                                     "ieee"), (i, v, e, fmt)


# --------------------------------------------------------------------- into integer formats
INT_TARGETS = [FORMATS[n] for n in ("int8", "uint8", "int32", "int64", "uint64")]


def int_oracle(v: Fraction, fmt, mode, rule):
    """``(int result, inexact, overflow)`` of rounding ``v`` to an integer of ``fmt``."""
    k = round_to_int(v, mode)
    frac = v - v.numerator // v.denominator
    over = not fmt.int_min <= k <= fmt.int_max
    if over and rule == "saturate":
        k = fmt.int_min if k < 0 else fmt.int_max
    elif over:
        span = fmt.int_max - fmt.int_min + 1
        k = (k - fmt.int_min) % span + fmt.int_min
    return k, frac != 0, over


@pytest.mark.parametrize("rule", ["wrap", "saturate"])
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", INT_TARGETS, ids=_fid)
@settings(max_examples=6)
@given(seed=SEEDS)
def test_round_into_integer_formats(fmt, mode, rule, seed):
    rnd = random.Random(seed)
    n = 24
    top = fmt.bits + 2
    xs, ys = [], []
    for _ in range(n):
        m = rnd.randint(-(2**top), 2**top)
        xs.append(math.ldexp(m, -rnd.choice([0, 1, 2, 5])))  # halves, quarters, ...
        ys.append(rnd.choice([0.0, 0.5, -0.5, 2.0**-60, -(2.0**-60), 0.25]))
    xs += [2.0**63, -(2.0**63), 2.0**64, 2.0**63 - 1024, 0.5, -0.5, 1.5, 2.5, -2.5, 1e30]
    ys += [0.0, -0.5, -(2.0**-60), 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    n = len(xs)
    ex = sum_of_products([(ExactPart.from_float64(np.array(xs)),),
                          (ExactPart.from_float64(np.array(ys)),)], (n,))
    got, ine, ovf, _ = ex.round(fmt, mode, rule)
    bad = []
    for i in range(n):
        v = Fraction(xs[i]) + Fraction(ys[i])
        want = int_oracle(v, fmt, mode, rule)
        g = (int(got[i]), bool(ine[i]), bool(ovf[i]))
        if g != want:
            bad.append(f"  {xs[i].hex()} + {ys[i].hex()} into {fmt.name} ({mode.value}, {rule}):"
                       f" expected {want}, got {g}")
    if bad:
        pytest.fail(f"{len(bad)} of {n} differ (value, inexact, overflow):\n" + "\n".join(bad[:6]),
                    pytrace=False)


@pytest.mark.parametrize("fmt", INT_TARGETS, ids=_fid)
def test_integer_overflow_error_names_the_element(fmt):
    ex = sum_of_products([(ExactPart.from_float64(np.array([[1.0, 2.0**70]])),)], (1, 2))
    with pytest.raises(OverflowError, match=r"\(0, 1\).*1180591620717411303424"):
        ex.round(fmt, R.NEAREST_EVEN, "error")


def test_special_values_round_as_the_scalar_path():
    """The vectorized rounding of NaN and ±inf agrees with round_scalar in every float format,
    mode and overflow rule (NaN stays NaN in both, in formats without NaN too: the marker of
    an undefined element)."""
    from exactref._exact._engine import special_values
    from exactref._exact._scalar import NAN, round_scalar
    from exactref._formats import FORMATS

    for fmt in FORMATS.values():
        if fmt.kind != "float":
            continue
        for rule in ("ieee", "saturate", "nan"):
            for mode in er.Rounding:
                for v in (float("inf"), float("-inf"), NAN):
                    x = np.array([np.nan if v is NAN else v])
                    # a NaN is NaN in every format: in one without NaN, the undefined marker
                    want = round_scalar(v, False, fmt, mode, rule)[0]
                    got = special_values(x, fmt, rule)[0]
                    assert got == want or (got != got and want != want), (fmt.name, rule, v)
