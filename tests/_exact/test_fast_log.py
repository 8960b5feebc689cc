"""The enclosures of the log family and erf/gelu (exactref._exact._fast_log): every enclosure
holds MPFR's value at 256 bits (every float16 and bfloat16 pattern, random float32 over every
binade, the binades' edges, float32 subnormals, random float64), the lane's values are the MPFR
path's bit for bit, the compiled twin is the numpy one, and few elements are left undecided."""

from __future__ import annotations

import functools

import gmpy2
import numpy as np
import pytest

from exactref._exact import _enclose, _fast_log, _functions, _jit
from exactref._exact._mpfr import _Values

#: The functions (RealFunction names) enclosed here.
NAMES = ["log", "log2", "log10", "log1p", "erf", "gelu", "gelu_tanh", "logit"]
NATIVE = {"log", "log2", "log10", "log1p", "erf"}


def _record(name):
    comp = getattr(_functions.COMPOSITIONS, name, None)
    return comp if comp is not None else _functions.mpfr_function(name)


@functools.cache
def _inputs(full: bool = False):
    """Every float16 and bfloat16 pattern (every 7th unless ``full``), random float32 over
    every binade (2e4; 5e3), float32 subnormals, the binades' edges, random float64 (1e4;
    2e3)."""
    with np.errstate(invalid="ignore"):  # the signalling NaNs among the patterns
        return _patterns(1 if full else 7, 4 if full else 1)


def _patterns(step, more):
    rng = np.random.default_rng(2026)
    f16 = np.arange(0, 1 << 16, step, dtype=np.uint16).view(np.float16).astype(np.float64)
    bf16 = (np.arange(0, 1 << 16, step, dtype=np.uint32) << 16).view(np.float32)
    bf16 = bf16.astype(np.float64)
    f32 = rng.integers(0, 1 << 32, 5000 * more, dtype=np.uint64).astype(np.uint32)
    f32 = f32.view(np.float32).astype(np.float64)  # every binade alike (NaNs among them)
    sub = (rng.integers(1, 1 << 23, 500, dtype=np.uint32)).view(np.float32).astype(np.float64)
    edges = 2.0 ** np.arange(-149, 128, dtype=np.float64)
    edges = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
    edges = np.concatenate([edges, edges.astype(np.float32).astype(np.float64) - 1,
                            1 - edges, [2.0**-149, 1.0 + 2.0**-23, 1.0 - 2.0**-24]])
    f64 = rng.integers(0, 1 << 63, 2500 * more, dtype=np.int64).view(np.float64)
    f64 = np.concatenate([f64[::2], -f64[1::2], rng.standard_normal(500 * more) * 4])
    x = np.concatenate([f16, bf16, f32, sub, -sub, edges, -edges, f64])
    return x[~np.isnan(x) | (np.arange(x.size) < 1)]  # one NaN is enough


_CTX = gmpy2.context(precision=256)
_CTX600 = gmpy2.context(precision=600)


def _exact(name, v):
    """The function's value at the float ``v`` to 256 bits (the compositions' formulas)."""
    x = gmpy2.mpfr(v)
    c = _CTX
    if name in ("gelu", "gelu_tanh") and gmpy2.is_infinite(x):
        return x if x > 0 else -gmpy2.mpfr(0)  # its limits (the record's specials)
    if name == "logit":
        if not 0 <= x <= 1:
            return gmpy2.nan()
        if x == 0 or x == 1:
            return gmpy2.inf(-1 if x == 0 else 1)
        return c.log(c.div(x, c.sub(1, x)))
    if name == "gelu":
        return c.div(c.mul(x, c.erfc(c.div(-x, c.sqrt(2)))), 2)
    if name == "gelu_tanh":  # x sigmoid(z) = x / (1 + exp(-z)), 1 - sigmoid(z) down to 2**-420
        c = _CTX600
        z = c.mul(c.sqrt(c.div(8, c.const_pi())),
                  c.add(x, c.mul(c.div(44715, 10**6), c.mul(x, c.mul(x, x)))))
        return c.div(x, c.add(1, c.exp(c.minus(z))))
    return getattr(c, name)(x)


@pytest.mark.parametrize("name", NAMES)
def test_the_enclosure_holds_the_value(name):
    _holds(name, _inputs())


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_enclosure_holds_the_value_everywhere(name):
    _holds(name, _inputs(full=True))


def _holds(name, x):
    got = _enclose.enclosure(name)(x, 26, None)
    lo, hi = got.lo, got.hi
    ok = np.ones(x.size, bool) if got.ok is None else got.ok
    rest = np.zeros(x.size, np.int8) if got.rest is None else got.rest
    assert ok.mean() > 0.99
    for i in np.flatnonzero(ok).tolist():
        v = _exact(name, x[i])
        a, b = lo[i], hi[i]
        if gmpy2.is_nan(v):
            assert a != a and b != b, (x[i], a, b)
        elif a == b:
            if rest[i] == 0 and v != a:  # a value settled in its cell: the round-to-odd value
                assert _odd_at(name, x[i], v, 26) == a, (x[i], a, v)
            elif rest[i] == 0:
                assert v != 0 or np.signbit(a) == gmpy2.is_signed(v), (x[i], a, v)
            else:
                assert (v - a) * rest[i] >= 0 and abs(v - a) < abs(a) * 2.0**-34, (x[i], a, v)
        elif max(abs(a), abs(b)) <= 2.0**-1000:  # held as an underflow (±2**-1100)
            assert abs(v) < gmpy2.mpfr(2) ** -1100, (x[i], a, b, v)
            assert (a < 0) == (v < 0 or gmpy2.is_signed(v)), (x[i], a, b, v)
        else:
            assert gmpy2.mpfr(a) <= v <= gmpy2.mpfr(b), (x[i], a, b, v)
            assert (a > 0) == (b > 0) and a != 0 and b != 0


def _odd(v, P):
    """The round-to-odd value of the MPFR number ``v`` at ``P`` bits, as a float."""
    t = gmpy2.context(precision=P, round=gmpy2.RoundToZero).plus(v)
    if t == v:
        return float(t)
    m, e = t.as_mantissa_exp()
    m, e = int(m), int(e)
    k = P - abs(m).bit_length()
    m, e = m << k, e - k
    m = m | 1 if m > 0 else -((-m) | 1)
    return float(gmpy2.mpfr(m) * gmpy2.mpfr(2) ** e)


def _odd_at(name, x, v, P):
    """The round-to-odd value at ``P`` bits of the function at ``x``: MPFR's own (its ternary
    value) for its functions, else of the 256-bit value ``v``."""
    if name in NATIVE:
        y = getattr(gmpy2.context(precision=P, round=gmpy2.RoundToZero), name)(gmpy2.mpfr(x))
        if y.rc == 0:
            return float(y)
        v = y + y * 2.0**-(P + 4)  # inside the same cell, not on its ends
    return _odd(v, P)


def _values_equal(a: _Values, b: _Values, x):
    for field in ("mant", "e", "r", "special", "zero", "zsign"):
        u, v = getattr(a, field), getattr(b, field)
        bad = np.flatnonzero(~((u == v) | (np.isnan(u) & np.isnan(v))))
        assert bad.size == 0, (field, x[bad[:5]], u[bad[:5]], v[bad[:5]])


@pytest.mark.parametrize("bits", [8, 11, 24, 31])
@pytest.mark.parametrize("name", NAMES)
def test_the_lane_is_the_mpfr_path_bit_for_bit(name, bits):
    rng = np.random.default_rng(bits)
    x = _inputs()
    x = np.concatenate([x[rng.integers(0, x.size, 3000)],
                        rng.standard_normal(500).astype(np.float32),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 1000.0, 0.5]])
    x = x.astype(np.float64)
    fn = _record(name)
    ref = _functions._evaluate_values(fn, [x], bits + 2, None)
    ex = _functions.evaluate(fn, x, bits=bits)
    ref_ex = ref.exact(x.shape)
    for field in ("c1", "c2", "r", "E", "special", "zero", "zsign"):
        np.testing.assert_array_equal(getattr(ex, field), getattr(ref_ex, field), err_msg=field)
    # and the lane itself, before the ExactArray
    fast = _enclose.evaluate_enclosed(fn, x, bits + 2, None,
                                      lambda xs: _functions._evaluate_values(fn, [xs],
                                                                             bits + 2, None))
    _values_equal(fast, ref, x)


@pytest.mark.skipif(not _jit.enabled(), reason="numba is not installed (the 'fast' extra)")
@pytest.mark.parametrize("name", NAMES)
def test_the_compiled_twin_is_the_numpy_one(monkeypatch, name):
    x = _inputs()
    compiled = _enclose.enclosure(name)(x, 26, None)
    monkeypatch.setenv("EXACTREF_NUMBA", "0")
    plain = _enclose.enclosure(name)(x, 26, None)
    for field in ("lo", "hi", "rest", "ok"):
        a, b = getattr(compiled, field), getattr(plain, field)
        if a is None or b is None:
            assert a is None and b is None
            continue
        np.testing.assert_array_equal(a, b, err_msg=field)


@pytest.mark.parametrize("P", [26, 33])
@pytest.mark.parametrize("name", NAMES)
def test_few_are_left_undecided(name, P):
    rng = np.random.default_rng(P)
    x = rng.integers(0, 1 << 32, 100000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        x = x.view(np.float32).astype(np.float64)
    x = x[np.isfinite(x)]
    got = _enclose.enclosure(name)(x, P, None)
    ok = np.ones(x.size, bool) if got.ok is None else got.ok
    point = got.lo == got.hi
    _, _, decided = _enclose.decide(got.lo, got.hi, P)
    nan = np.isnan(got.lo)
    left = ok & ~point & ~decided & ~nan | ~ok
    assert left.mean() < (1e-3 if P == 26 else 4e-3), left.mean()


def test_the_constants_are_what_they_say():
    ctx = gmpy2.context(precision=200)
    ln2, lg2 = ctx.log(2), ctx.log10(2)
    # |L_lo| < 2**-44 and |L - L_hi - L_lo| <= 2**-53 |L_lo| (the module's derivation)
    for L, hi_part, lo_part in ((ln2, _fast_log._LN2_HI, _fast_log._LN2_LO),
                                (lg2, _fast_log._LG2_HI, _fast_log._LG2_LO)):
        assert abs(lo_part) < 2.0**-44
        assert abs(ctx.sub(ctx.sub(L, hi_part), lo_part)) <= 2.0**-53 * abs(lo_part)
    for hi_part in (_fast_log._LN2_HI, _fast_log._LG2_HI):
        m = abs(int(gmpy2.mpfr(hi_part).as_mantissa_exp()[0]))
        assert (m // (m & -m)).bit_length() <= 42  # e * hi is exact for |e| <= 2**11
    assert _fast_log._INV_LN2 == float(1 / ln2)
    assert _fast_log._INV_LN10 == float(1 / ctx.log(10))
    assert _fast_log._C == float(ctx.sqrt(0.5))
