"""The enclosure mechanism (exactref._exact._enclose): decide() against MPFR's round-to-odd,
its numpy and compiled twins against each other, and the driver with a test enclosure (numpy's
float64 exp with a generous error bound) against the MPFR path, bit for bit."""

from __future__ import annotations

import math

import gmpy2
import numpy as np
import pytest

from exactref._exact import _enclose, _functions, _jit
from exactref._exact._mpfr import _Values


def _odd(v: float, P: int):
    """MPFR's round-to-odd of the float64 ``v`` at P bits, as a Fraction."""
    from fractions import Fraction

    ctx = gmpy2.context(precision=P, round=gmpy2.RoundToZero)
    y = ctx.plus(gmpy2.mpfr(v, 64))
    m, e = y.as_mantissa_exp()
    m, e = int(m), int(e)
    k = P - abs(m).bit_length()
    m, e = m << k, e - k
    if gmpy2.mpfr(v, 64) != y:
        m = m | 1 if m > 0 else -((-m) | 1)
    return Fraction(m) * Fraction(2) ** e


def _intervals(rng, n):
    """Enclosures of every kind: narrow, straddling a P-bit number, ends on the grid, crossing
    zero, beyond 2**±1000, NaN."""
    c = rng.standard_normal(n) * np.exp2(rng.integers(-60, 60, n))
    w = np.abs(c) * np.exp2(-rng.integers(20, 60, n).astype(float))
    lo, hi = c - w, c + w
    lo[:50], hi[:50] = 1.0, 1.0 + 2.0**-40          # an end on the grid
    lo[50:60], hi[50:60] = -1e-3, 1e-3               # crossing zero
    lo[60:70], hi[60:70] = 2.0**1001, 2.0**1003      # overflow
    lo[70:80], hi[70:80] = -(2.0**-1003), -(2.0**-1001)
    lo[80:90], hi[80:90] = np.nan, np.nan
    return lo, hi


@pytest.mark.parametrize("P", [11, 26, 33, 53])
def test_decide_is_mpfr_round_to_odd_of_every_point(P):
    rng = np.random.default_rng(P)
    lo, hi = _intervals(rng, 4000)
    mant, e, ok = _enclose.decide(lo, hi, P)
    assert 0 < ok.sum() < ok.size
    for i in np.flatnonzero(ok).tolist():
        got = mant[i] * gmpy2.mpfr(2) ** int(e[i])
        if abs(lo[i]) >= 2.0**1000 or abs(hi[i]) <= 2.0**-1000:
            assert abs(int(e[i])) > 1000
            continue
        assert abs(int(mant[i])).bit_length() == 53
        # both ends, and a point inside, round to odd to the decided value
        for v in (lo[i], hi[i], (lo[i] + hi[i]) / 2):
            assert _odd(v, P) == got, (i, lo[i], hi[i])
    # an undecided one holds a P-bit number (its ends truncate apart, or one is on the grid)
    # or is not served
    for i in np.flatnonzero(~ok)[:300].tolist():
        a, b = lo[i], hi[i]
        if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 <= b \
                or min(abs(a), abs(b)) < 2.0**-1000 or max(abs(a), abs(b)) > 2.0**1000:
            continue
        ta, tb = _trunc(a, P), _trunc(b, P)
        assert ta != tb or ta == gmpy2.mpfr(a, 64) or tb == gmpy2.mpfr(b, 64), (a, b)


def _trunc(v: float, P: int):
    return gmpy2.context(precision=P, round=gmpy2.RoundToZero).plus(gmpy2.mpfr(v, 64))


@pytest.mark.skipif(not _jit.enabled(), reason="numba is not installed (the 'fast' extra)")
def test_decide_compiled_twin_is_the_numpy_one(monkeypatch):
    rng = np.random.default_rng(1)
    lo, hi = _intervals(rng, 20000)
    for P in (11, 26, 53):
        compiled = _enclose.decide(lo, hi, P)
        monkeypatch.setenv("EXACTREF_NUMBA", "0")
        plain = _enclose.decide(lo, hi, P)
        monkeypatch.delenv("EXACTREF_NUMBA")
        for a, b in zip(compiled, plain, strict=True):
            np.testing.assert_array_equal(a, b)


def _test_exp(x, P, params):
    """A test enclosure: numpy's float64 exp, trusted to 2**-40 relative (it is within one
    float64 ulp); specials and out-of-range inputs as points or left to MPFR."""
    with np.errstate(over="ignore", under="ignore"):
        y = np.exp(x)
    lo, hi = _enclose.from_relative(y, 2.0**-40)
    ok = np.abs(x) < 700
    lo = np.where(np.isnan(x) | np.isinf(x), y, lo)
    hi = np.where(np.isnan(x) | np.isinf(x), y, hi)
    return _enclose.Enclosed(lo, hi, ok=ok | ~np.isfinite(x))


def _values_equal(a: _Values, b: _Values):
    for name in ("mant", "e", "r", "special", "zero", "zsign"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("bits", [11, 24, 31])
def test_driver_is_bit_for_bit_the_mpfr_path(monkeypatch, bits):
    rng = np.random.default_rng(bits)
    x = np.concatenate([(rng.standard_normal(3000) * 30).astype(np.float32),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, 88.7, -103.9, 800, -800]])
    x = x.astype(np.float64)
    P = bits + 2
    fn = _functions.mpfr_function("exp")
    _enclose.enclosure("exp")  # the modules' own registered first, then replaced for the test
    monkeypatch.setitem(_enclose.ENCLOSURES, "exp", _test_exp)
    calls = []

    def slow(xs):
        calls.append(xs.size)
        return _functions._evaluate_values(fn, [xs], P, None)

    fast = _enclose.evaluate_enclosed(fn, x, P, None, slow)
    ref = _functions._evaluate_values(fn, [x], P, None)
    _values_equal(fast, ref)
    assert 0 < sum(calls) < x.size // 10  # the exact cases (x = 0) and a few near the grid
    # evaluate() takes the lane: the same ExactArray as the MPFR path
    ex = _functions.evaluate(fn, x, bits=bits)
    ref_ex = ref.exact(x.shape)
    for name in ("c1", "c2", "r", "E", "special", "zero", "zsign"):
        np.testing.assert_array_equal(getattr(ex, name), getattr(ref_ex, name))


def _enclosed_mix(rng, n):
    """Enclosures of every kind, points with and without rests among them."""
    lo, hi = _intervals(rng, n)
    kinds = rng.integers(0, 4, n)
    pts = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 3.0, 2.0**-1030,
                           1.0 + 2.0**-52, 2.0**1001, -(2.0**-1001)],
                          (rng.standard_normal(64)).astype(np.float32)])
    v = rng.choice(pts, n)
    lo = np.where(kinds == 0, v, lo)
    hi = np.where(kinds == 0, v, hi)
    rest = np.where(kinds == 0, rng.integers(-1, 2, n), 0).astype(np.int8)
    ok = rng.random(n) > 0.05
    return _enclose.Enclosed(lo, hi, rest, ok)


def _settled(got, P, odd_rest):
    out = _Values.empty(got.lo.size, 53)
    left = _enclose._settle(got, P, out, 0, odd_rest)
    return out, left


@pytest.mark.skipif(not _jit.enabled(), reason="numba is not installed (the 'fast' extra)")
@pytest.mark.parametrize("odd_rest", [False, True])
def test_settle_compiled_twin_is_the_numpy_one(monkeypatch, odd_rest):
    rng = np.random.default_rng(7)
    got = _enclosed_mix(rng, 20000)
    for P in (11, 26, 33, 53):
        a, la = _settled(got, P, odd_rest)
        monkeypatch.setenv("EXACTREF_NUMBA", "0")
        b, lb = _settled(got, P, odd_rest)
        monkeypatch.delenv("EXACTREF_NUMBA")
        np.testing.assert_array_equal(la, lb)
        keep = np.ones(got.lo.size, bool)
        keep[la] = False  # undecided elements hold nothing in particular
        for name in ("mant", "e", "r", "special", "zero", "zsign"):
            np.testing.assert_array_equal(getattr(a, name)[keep], getattr(b, name)[keep],
                                          err_msg=name)


@pytest.mark.parametrize("P", [10, 13, 26, 33])
def test_a_point_with_a_rest_of_an_mpfr_function_is_its_round_to_odd_value(P):
    """exp at tiny x is 1 plus a rest of x's sign: as a point with a rest the lane writes
    MPFR's round-to-odd value (``odd_rest``), bit for bit the MPFR path's."""
    fn = _functions.mpfr_function("exp")
    x = np.array([2.0**-60, -(2.0**-60), 2.0**-80, -(2.0**-70), 1e-30, -1e-25])
    got = _enclose.Enclosed(np.ones(x.size), np.ones(x.size), np.sign(x).astype(np.int8))
    out, left = _settled(got, P, True)
    assert left.size == 0
    _values_equal(out, _functions._evaluate_values(fn, [x], P, None))


def test_calls_of_at_most_51_bits_hold_far_values_as_the_lane_does():
    fn = _functions.mpfr_function("exp")
    x = np.array([700.0, 800.0, -700.0, -800.0, 10.0])
    held = _functions._evaluate_values(fn, [x], 26, None)
    assert (held.e[:4] == np.array([1100, 1100, -1100, -1100]) - 52).all()
    assert abs(int(held.e[4])) < 100
    # the cells decide gives those enclosures: the same values
    lo = np.array([2.0**1009, 2.0**1020, 2.0**-1011, 2.0**-1050, 22026.0])
    mant, e, ok = _enclose.decide(lo, lo * (1 + 2.0**-40), 26)
    assert ok[:4].all()
    np.testing.assert_array_equal(mant[:4], held.mant[:4])
    np.testing.assert_array_equal(e[:4], held.e[:4])
    # float64's calls (P = 55) keep MPFR's values
    wide = _functions._evaluate_values(fn, [x], 55, None)
    assert abs(int(wide.e[0]) + 55) < 1100 and int(wide.e[1]) + 55 > 1100
