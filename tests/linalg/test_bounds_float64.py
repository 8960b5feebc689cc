"""The rigorous float64 helpers of _exact/_outward.py (the long sums' bounds toolbox) against
exact Fractions, and the bounds that use them: covered for float64-compute simulations (gmpy2
at 53 bits) and as tight, in ulps, as float32's (the old blanket 2**-40 slack cost thousands of
float64 ulps)."""

from fractions import Fraction

import numpy as np
import pytest

from exactref._exact import (
    deflate,
    gamma_up,
    inflate,
    pow1m_dn,
    pow1p_m1_up,
    pow1p_up,
    slack_dn,
    slack_up,
)

U64 = 2.0**-53
UNITS = [2.0**-53, 2.0**-24, 2.0**-11, 2.0**-8, 3.0 * 2.0**-60]
KS = [0, 1, 2, 3, 7, 100, 8193, 9000, 2**20]


def _gamma(k, u):
    ku = k * Fraction(u)
    return ku / (1 - ku) if ku < 1 else None


@pytest.mark.parametrize("u", UNITS)
@pytest.mark.parametrize("k", KS)
def test_gamma_up_is_an_upper_bound(u, k):
    exact = _gamma(k, u)
    got = gamma_up(k, u)
    if exact is None:
        assert got == np.inf
        return
    assert Fraction(got) >= exact
    if k:  # and a tight one: a few float64 ulps, not 2**-40
        assert Fraction(got) <= exact * (1 + 8 * Fraction(U64))


@pytest.mark.parametrize("u", UNITS)
@pytest.mark.parametrize("k", [0, 1, 2, 3, 7, 100, 8193, 9000])
def test_pow1p_bounds_against_exact_powers(u, k):
    exact = (1 + Fraction(u)) ** k
    lo = (1 - Fraction(u)) ** k
    assert Fraction(pow1p_m1_up(u, k)) >= exact - 1
    assert Fraction(pow1p_up(u, k)) >= exact
    assert Fraction(pow1m_dn(u, k)) <= lo


def test_the_float64_power_it_replaces_is_unsound():
    # (1 + 2**-53)**k is 1 in float64 for every k: the old bounds counted on a 2**-40 slack,
    # which k u passes at k > 8192
    k = 9000
    assert (1 + U64) ** k == 1.0
    exact = (1 + Fraction(U64)) ** k
    assert Fraction(1.0 * (1 + 2.0**-40)) < exact  # the old factor with its slack: too small
    assert Fraction(pow1p_up(U64, k)) >= exact
    assert Fraction(inflate(3.0, pow1p_m1_up(U64, k))) >= 3 * exact
    assert Fraction(inflate(3.0, pow1p_m1_up(U64, k))) <= 3 * exact * (1 + 2 * Fraction(U64))  # an ulp or two


def test_pow1p_for_large_exponents_stays_finite():
    # k u past 1: e**(k u) - 1, not gamma's inf
    k, u = 3 * 2**24, 2.0**-24
    got = pow1p_m1_up(u, k)
    assert np.isfinite(got)
    assert Fraction(got) >= Fraction(np.expm1(3.0)) - 1  # e**3 - 1 > (1 + u)**k - 1
    assert got < 20.1


def test_arrays_and_margins():
    ks = np.array([0.0, 1.0, 5.0, 9000.0])
    g = gamma_up(ks, U64)
    assert g.shape == (4,) and g[0] == 0
    for k, v in zip(ks, g, strict=True):
        assert Fraction(float(v)) >= _gamma(int(k), U64)
    rng = np.random.default_rng(1)
    x = rng.random(50) * 10.0 ** rng.integers(-30, 30, 50)
    for ops in (1, 3, 12):
        hi, lo = slack_up(x, ops), slack_dn(x, ops)
        for xi, h, lw in zip(x, hi, lo, strict=True):
            f = Fraction(float(xi))
            # any value float64 could round to xi in ops operations: xi (1 +- U64)**(-ops)
            assert Fraction(float(h)) >= f / (1 - Fraction(U64)) ** ops
            assert Fraction(float(lw)) <= f / (1 + Fraction(U64)) ** ops
    d = 2.0**-70
    for xi in x[:10]:
        assert Fraction(float(inflate(xi, d))) >= Fraction(float(xi)) * (1 + Fraction(d))
        assert Fraction(float(deflate(xi, d))) <= Fraction(float(xi)) * (1 - Fraction(d))


# ------------------------------------------------- float64-compute simulations and tightness
gmpy2 = pytest.importorskip("gmpy2")


def _ctx():
    return gmpy2.context(precision=53, round=gmpy2.RoundToNearest, emin=-1073, emax=1024,
                         subnormalize=True)


def _two_pass_var(row):
    with _ctx():
        s = gmpy2.mpfr(0)
        for v in row:
            s = s + gmpy2.mpfr(float(v))
        m = s / len(row)
        acc = gmpy2.mpfr(0)
        for v in row:
            d = gmpy2.mpfr(float(v)) - m
            acc = acc + d * d
        return float(acc / len(row))


def _welford_var(row):
    with _ctx():
        mean = gmpy2.mpfr(0)
        m2 = gmpy2.mpfr(0)
        for k, v in enumerate(row, 1):
            x = gmpy2.mpfr(float(v))
            delta = x - mean
            mean = mean + delta / k
            m2 = m2 + delta * (x - mean)
        return float(m2 / len(row))


@pytest.mark.parametrize("algorithm,sim", [("two-pass", _two_pass_var),
                                           ("welford", _welford_var)])
def test_float64_var_simulation_is_covered_past_8192(algorithm, sim):
    import exactref as er
    rng = np.random.default_rng(7)
    # n past 8192, where (1 + 2**-53)**n passed the old 2**-40 slack; an offset mean makes
    # every step round
    x = 1e3 + rng.standard_normal((2, 9000))
    r = er.var(x, 1, correction=0, compute="float64", algorithm=algorithm)
    actual = np.array([sim(row) for row in x])
    assert r.covers(actual).all()


def _median_ulps(result):
    return float(np.median(np.asarray(result.tolerance_ulps(), dtype=float)))


def _pairs():
    import exactref as er
    rng = np.random.default_rng(0)
    x4, x256 = rng.standard_normal((8, 4)), rng.standard_normal((4, 256))
    return {
        "var two-pass n=4": lambda c: er.var(x4.astype(c), 1, correction=0, compute=c,
                                             algorithm="two-pass"),
        "var any n=256": lambda c: er.var(x256.astype(c), 1, correction=0, compute=c),
    }


@pytest.mark.parametrize("name", list(_pairs()))
def test_float64_tolerance_is_within_4x_of_float32_in_ulps(name):
    # the old bounds: thousands of float64 ulps (17,592 for var on (8, 4)), whatever n
    f = _pairs()[name]
    t64, t32 = _median_ulps(f("float64")), _median_ulps(f("float32"))
    assert t64 <= 4 * max(t32, 1.0), (t64, t32)


def _two_pass_layer_norm(row):
    with _ctx():
        s = gmpy2.mpfr(0)
        for v in row:
            s = s + gmpy2.mpfr(float(v))
        m = s / len(row)
        acc = gmpy2.mpfr(0)
        for v in row:
            d = gmpy2.mpfr(float(v)) - m
            acc = acc + d * d
        rstd = 1 / gmpy2.sqrt(acc / len(row))
        return [float((gmpy2.mpfr(float(v)) - m) * rstd) for v in row]


def test_float64_layer_norm_simulation_is_covered_past_8192():
    import exactref as er
    rng = np.random.default_rng(8)
    n = 9000
    x = 1e3 + rng.standard_normal((2, n))
    r = er.layer_norm(x, (n,), algorithm="two-pass", compute="float64", eps=0.0)
    actual = np.array([_two_pass_layer_norm(row) for row in x])
    assert r.covers(actual).all()
    # as sharp, in ulps, as float32's on the same data (a mean of 1e3 costs both alike)
    r32 = er.layer_norm(x.astype(np.float32), (n,), algorithm="two-pass", compute="float32",
                        eps=0.0)
    assert _median_ulps(r) <= 4 * _median_ulps(r32)


def _more_pairs():
    import exactref as er
    rng = np.random.default_rng(0)
    x16 = rng.standard_normal((8, 16))
    g16 = rng.standard_normal((8, 16))
    q, k, v = (rng.standard_normal((1, 2, 8, 16)) for _ in range(3))
    return {
        "layer_norm two-pass n=16": lambda c: er.layer_norm(
            x16.astype(c), (16,), algorithm="two-pass", compute=c, eps=0.0),
        "layer_norm backward dx n=16": lambda c: er.layer_norm.backward(
            x16.astype(c), g16.astype(c), 16, eps=0.0, compute=c).grad_x,
        "scaled_dot_product_attention": lambda c: er.scaled_dot_product_attention(
            q.astype(c), k.astype(c), v.astype(c), compute=c),
    }


@pytest.mark.parametrize("name", list(_more_pairs()))
def test_float64_norm_and_attention_tolerance_within_4x_of_float32(name):
    f = _more_pairs()[name]
    t64, t32 = _median_ulps(f("float64")), _median_ulps(f("float32"))
    assert t64 <= 4 * max(t32, 1.0), (t64, t32)
