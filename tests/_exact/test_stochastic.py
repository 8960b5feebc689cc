"""Stochastic rounding against an independent integer model, written here from PTX's rule.

PTX ISA 9.7.9.21 (``cvt``, rounding modifier ``.rs``): the result "is rounded in the direction
toward zero or away from zero based on the carry out of the integer addition of the supplied
random bits (rbits) to the truncated off (discarded) bits of mantissa from the input". The model
below applies that to the exact value with Python integers and Fractions only (no exactref
code): the quantum ``q`` of the format at ``|v|``, ``K = floor(|v| / q)``, the first ``r``
discarded bits ``D = floor((|v| - K q) 2**r / q)``, up exactly when ``D + bits >= 2**r``; an
overflowing magnitude as round-to-nearest gives it (saturate: the largest finite value). The
formats' parameters come from ml_dtypes' and numpy's finfo, their specials from the table below.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er

# name: (finfo source, has inf, has nan, has -0)
FORMATS = {
    "float64": (np.float64, True, True, True),
    "float32": (np.float32, True, True, True),
    "float16": (np.float16, True, True, True),
    "bfloat16": (ml_dtypes.bfloat16, True, True, True),
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, False, True, True),
    "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, False, True, False),
    "float8_e5m2": (ml_dtypes.float8_e5m2, True, True, True),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, False, True, False),
    "float8_e4m3b11fnuz": (ml_dtypes.float8_e4m3b11fnuz, False, True, False),
    "float8_e3m4": (ml_dtypes.float8_e3m4, True, True, True),
    "float8_e4m3": (ml_dtypes.float8_e4m3, True, True, True),
    "float6_e2m3fn": (ml_dtypes.float6_e2m3fn, False, False, True),
    "float6_e3m2fn": (ml_dtypes.float6_e3m2fn, False, False, True),
    "float4_e2m1fn": (ml_dtypes.float4_e2m1fn, False, False, True),
}
SMALL = [n for n in FORMATS if np.dtype(FORMATS[n][0]).itemsize == 1]


class Fmt:
    def __init__(self, name):
        t, self.inf, self.nan, self.negzero = FORMATS[name]
        fi = ml_dtypes.finfo(t) if t not in (np.float64, np.float32, np.float16) else np.finfo(t)
        self.name, self.dtype = name, t
        self.p = int(fi.nmant) + 1
        self.emin = int(fi.minexp)
        self.max = Fraction(float(fi.max))

    def rules(self):
        return ["ieee", "saturate"] + (["nan"] if self.nan else [])


def split(v: Fraction, f: Fmt, r):
    """``(negative, K, q, D, discarded / q)`` of a nonzero exact value."""
    a = abs(v)
    e = 0
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    q = Fraction(2) ** (max(e, f.emin) - f.p + 1)
    K = math.floor(a / q)
    frac = (a - K * q) / q
    D = math.floor(frac * 2**r) if r is not None else None
    return v < 0, K, q, D, frac


def encode(neg, mag: Fraction, f: Fmt, rule):
    if mag > f.max:
        if rule == "saturate" or (rule == "ieee" and not f.inf and not f.nan):
            out = float(f.max)
        elif rule == "ieee" and f.inf:
            out = math.inf
        else:
            return math.nan
        return -out if neg else out
    if mag == 0:
        return -0.0 if neg and f.negzero else 0.0
    return -float(mag) if neg else float(mag)


def model(v: Fraction, f: Fmt, rule, r, bits):
    """The results for every random number in ``bits`` (a numpy int array)."""
    neg, K, q, D, _ = split(v, f, r)
    down, up = encode(neg, K * q, f, rule), encode(neg, (K + 1) * q, f, rule)
    return np.where(D + np.asarray(bits, dtype=np.int64) >= 2**r, up, down)


def same(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def values_of(f: Fmt):
    """Every finite non-negative value of a format, ascending (float64)."""
    bits = np.arange(256, dtype=np.uint8).view(f.dtype).astype(np.float64)
    v = np.unique(bits[np.isfinite(bits) & (bits >= 0)])
    return v


def sweep_points(f: Fmt, sub=5):
    """Points between consecutive values (``2**sub`` per gap), past the largest one, below the
    smallest subnormal, and far beyond the range; both signs (exact in float64)."""
    v = values_of(f)
    gaps = np.diff(v)
    j = np.arange(2**sub) / 2**sub
    pts = (v[:-1, None] + gaps[:, None] * j[None, :]).reshape(-1)
    top_gap = gaps[-1]
    beyond = v[-1] + top_gap * np.arange(1, 3 * 2**sub) / 2**sub
    tiny = v[1] * np.arange(1, 2**sub) / 2**sub
    pts = np.concatenate([pts, [v[-1]], beyond, tiny, [1e30, 2.0**-300]])
    return np.concatenate([pts, -pts])


@pytest.mark.slow  # 42 CPU s for its 10 formats (issue 19: the default run within 15 minutes)
@pytest.mark.parametrize("name", SMALL)
def test_small_formats_every_gap_every_random_number(name):
    """Exhaustive for the 8-bit (and 6-, 4-bit) formats: 32 points in every gap and past the
    range, 4 random bits (one discarded bit beyond them is dropped), every random number and
    every overflow rule, bit for bit; the probabilities exact."""
    f = Fmt(name)
    x = sweep_points(f)
    r = 4
    bits = np.arange(2**r)
    for rule in f.rules():
        xs = np.repeat(x, bits.size)
        bs = np.tile(bits, x.size).astype(np.uint8)
        res = er.cast(er.asarray(xs, "float64"), name, rounding="stochastic", random_bits=bs,
                      random_bits_width=r, overflow=rule)
        got = res.rounded.numpy().astype(np.float64)
        want = np.concatenate([model(Fraction(float(v)), f, rule, r, bits) if v != 0 else
                               np.full(bits.size, -0.0 if math.copysign(1, v) < 0 and
                                       f.negzero else 0.0) for v in x])
        bad = np.flatnonzero(~same(got, want))
        assert bad.size == 0, (name, rule, xs[bad[:5]], bs[bad[:5]], got[bad[:5]], want[bad[:5]])
        ideal = er.cast(er.asarray(x, "float64"), name, rounding="stochastic", overflow=rule)
        rbit = er.cast(er.asarray(x, "float64"), name, rounding="stochastic", overflow=rule,
                       random_bits_width=r)
        for i, v in enumerate(x):
            if v == 0:
                continue
            neg, K, q, D, frac = split(Fraction(float(v)), f, r)
            assert ideal.probability_fraction(i) == frac, (v, frac)
            assert ideal.probability[i] == float(frac)
            assert rbit.numerator[i] == D and rbit.probability_fraction(i) == Fraction(D, 2**r)
            down, up = encode(neg, K * q, f, rule), encode(neg, (K + 1) * q, f, rule)
            assert same(ideal.down.numpy().astype(float)[i], down), (v, rule)
            if frac:
                assert same(ideal.up.numpy().astype(float)[i], up), (v, rule)


def _random_values(rng, n, fmt_dtype):
    """Random bit patterns of a 16-bit format (subnormals, the largest values, zeros) as
    float64, NaN and infinities dropped."""
    with np.errstate(invalid="ignore"):  # NaN patterns
        raw = rng.integers(0, 2**16, n, dtype=np.uint16).view(fmt_dtype).astype(np.float64)
    return raw[np.isfinite(raw)]


@pytest.mark.parametrize("name,width", [("bfloat16", 16), ("float16", 13), ("float16", 16)])
@pytest.mark.parametrize("op", ["add", "multiply"])
def test_sixteen_bit_pairs(name, width, op):
    """Sums and products of random pairs of 16-bit values (every exponent, subnormals and
    overflow included), rounded with random bits into the same format: bit for bit."""
    rng = np.random.default_rng(14 + width)
    f = Fmt(name)
    x = _random_values(rng, 3000, f.dtype)
    y = _random_values(rng, x.size, f.dtype)[: x.size]
    x = x[: y.size]
    if op == "multiply":  # products of similar magnitude: round rather than overflow
        y = np.ldexp(np.frexp(y)[0], rng.integers(-3, 4, y.size))
    bits = rng.integers(0, 2**width, x.size)
    res = getattr(er, op)(er.asarray(x, name), er.asarray(y, name), rounding="stochastic",
                          random_bits=bits, random_bits_width=width)
    got = res.rounded.numpy().astype(np.float64)
    for i in range(x.size):
        v = Fraction(x[i]) + Fraction(y[i]) if op == "add" else Fraction(x[i]) * Fraction(y[i])
        if v == 0:
            continue
        want = model(v, f, "ieee", width, bits[i : i + 1])[0]
        assert same(got[i], want), (x[i], y[i], bits[i], got[i], want)


@pytest.mark.parametrize("name,width", [("float32", 16), ("float32", 32), ("float64", 8)])
def test_wide_formats_random(name, width):
    """float32 and float64 results of exact sums that no float64 holds (the engine's two-part
    values and Fractions), and casts from float64, with random bits: bit for bit."""
    rng = np.random.default_rng(width)
    f = Fmt(name)
    n = 400
    x = rng.standard_normal(n) * 2.0 ** rng.integers(-140, 140, n)
    y = x * rng.standard_normal(n) * 2.0 ** rng.integers(-60, 0, n)
    bits = rng.integers(0, 2**width, n).astype(np.uint64)
    res = er.add(x, y, dtype=name, rounding="stochastic", random_bits=bits,
                 random_bits_width=width)
    got = res.rounded.numpy().astype(np.float64)
    for i in range(n):
        want = model(Fraction(x[i]) + Fraction(y[i]), f, "ieee", width, bits[i: i + 1])[0]
        assert same(got[i], want), (x[i], y[i], int(bits[i]), got[i], want)
    if name == "float32":
        res = er.cast(x, name, rounding="stochastic", random_bits=bits, random_bits_width=width)
        got = res.rounded.numpy().astype(np.float64)
        for i in range(n):
            want = model(Fraction(x[i]), f, "ieee", width, bits[i: i + 1])[0]
            assert same(got[i], want), (x[i], int(bits[i]), got[i], want)


def test_ideal_probability_is_the_exact_ratio():
    """Without a width, the probability of ``up`` is the discarded part over the quantum,
    exactly, also where the exact value is longer than a float64 (1 + 2**-60 + 2**-100)."""
    x = np.array([1.0, 1.0 + 2.0**-9, 3.0, -1.0])
    y = np.array([2.0**-60, 2.0**-100, 2.0**-200, -(2.0**-9)])
    res = er.add(x, y, dtype="bfloat16", rounding="stochastic")
    for i in range(4):
        v = Fraction(x[i]) + Fraction(y[i])
        *_, frac = split(v, Fmt("bfloat16"), None)
        assert res.probability_fraction(i) == frac
    assert res.probability_fraction(1) == Fraction(1, 4) + Fraction(2**7, 2**100)
    assert res.down.tolist() == [1.0, 1.0, 3.0, -1.0]
    assert res.up.tolist() == [1.0078125, 1.0078125, 3.015625, -1.0078125]
    assert res.rounded.tolist() == [1.0, 1.0, 3.0, -1.0]


def test_signed_zeros_specials_and_exact_values_never_round():
    x = er.asarray([1.0, -0.0, 0.0, np.inf, np.nan, 0.5, -2.0**-20], "float32")
    y = er.asarray([-1.0, -0.0, -0.0, 1.0, 1.0, 0.25, 0.0], "float32")
    res = er.add(x, y, dtype="float8_e4m3fn", rounding="stochastic")
    want = [0.0, -0.0, 0.0, np.nan, np.nan, 0.75, -0.0]
    assert same(res.down.numpy().astype(float), want).all()
    assert res.probability[:6].tolist() == [0.0] * 6
    assert res.up.numpy().astype(float)[6] == -(2.0**-9)  # the smallest subnormal, negative
    bits = er.add(x, y, dtype="float8_e4m3fn", rounding="stochastic",
                  random_bits=np.full(7, 255, np.uint8))
    assert same(bits.rounded.numpy().astype(float)[:6], want[:6]).all()


def test_overflow_follows_the_rule():
    """Past the largest finite value: ieee rounds up to inf (NaN in e4m3fn, which has none),
    saturate gives the largest value (PTX's .satfinite: |x| > MAX_NORM gives MAX_NORM)."""
    x = np.array([65504.0 + 8, 65504.0 + 31, 1e6])
    for rule, up in (("ieee", np.inf), ("saturate", 65504.0)):
        r = er.cast(x, "float16", rounding="stochastic", overflow=rule)
        assert r.down.tolist() == [65504.0, 65504.0, up]
        assert r.up.tolist() == [up, up, up]
        assert r.probability.tolist()[:2] == [0.25, 31 / 32]
    r = er.cast(np.array([460.0]), "float8_e4m3fn", rounding="stochastic", overflow="ieee")
    assert r.down.tolist() == [448.0] and np.isnan(r.up.numpy().astype(float)[0])


def test_covers_accepts_exactly_the_neighbours():
    res = er.cast(np.array([1 + 2.0**-9, 2.0, -(2.0**-140)]), "bfloat16", rounding="stochastic")
    assert res.covers(er.asarray([1.0, 2.0, -0.0], "bfloat16")).all()
    assert res.covers(er.asarray([1.0078125, 2.0, -(2.0**-133)], "bfloat16")).all()
    cov = res.covers(np.array([1.00390625, 2.0078125, 0.0]))  # between; not exact; +0
    assert cov.tolist() == [False, False, False]
    assert res.tolerance().tolist() == [2.0**-7, 0.0, 2.0**-133]
    given = er.cast(np.array([1 + 2.0**-9]), "bfloat16", rounding="stochastic",
                    random_bits=np.array([0xC000], np.uint16))
    assert given.rounded.tolist() == [1.0078125]  # 0x4000 + 0xC000: a carry
    assert given.covers(np.array([1.0078125])).all()
    assert not given.covers(np.array([1.0])).all()
    assert given.tolerance().tolist() == [0.0]


def test_r_bit_model_drops_the_bits_below():
    """A discarded part below the random bits never rounds up: one neighbour only."""
    r = er.cast(np.array([1 + 2.0**-30]), "bfloat16", rounding="stochastic",
                random_bits_width=16)
    assert r.probability.tolist() == [0.0] and r.numerator.tolist() == [0]
    assert not r.covers(np.array([1.0078125])).all()
    ideal = er.cast(np.array([1 + 2.0**-30]), "bfloat16", rounding="stochastic")
    assert ideal.probability.tolist() == [2.0**-23]


def test_matmul_and_elementwise_ops():
    a = np.array([[1.0, 2.0**-12, 3.0], [0.5, 0.25, -2.0**-30]])
    b = np.array([[1.0, -1.0], [1.0, 2.0**-5], [2.0**-20, 1.0]])
    bits = np.array([[7, 200], [255, 0]], np.uint8)
    res = er.matmul(a, b, dtype="bfloat16", rounding="stochastic", random_bits=bits)
    f = Fmt("bfloat16")
    for i in range(2):
        for j in range(2):
            v = sum(Fraction(a[i, k]) * Fraction(b[k, j]) for k in range(3))
            want = model(v, f, "ieee", 8, bits[i, j: j + 1])[0] if v else 0.0
            assert same(res.rounded.numpy().astype(float)[i, j], want)
    q = er.divide(np.array([1.0, 2.0]), np.array([3.0, 3.0]), dtype="bfloat16",
                  rounding="stochastic", random_bits=np.array([0, 0xFFFF], np.uint16))
    want = [model(Fraction(1, 3), f, "ieee", 16, [0])[0],
            model(Fraction(2, 3), f, "ieee", 16, [0xFFFF])[0]]
    assert q.rounded.tolist() == want
    s = er.sqrt(np.array([2.0]), dtype="float16", rounding="stochastic")
    assert s.down.tolist()[0] < math.sqrt(2) < s.up.tolist()[0]


def test_errors():
    x = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="broadcast"):
        er.cast(x, "bfloat16", rounding="stochastic", random_bits=np.zeros(3, np.uint16))
    with pytest.raises(ValueError, match="integers"):
        er.cast(x, "bfloat16", rounding="stochastic", random_bits=np.zeros(2))
    with pytest.raises(ValueError, match="random_bits_width"):
        er.cast(x, "bfloat16", rounding="stochastic", random_bits=np.zeros(2, np.int32))
    with pytest.raises(ValueError, match=r"\[0, 2\*\*4\)"):
        er.cast(x, "bfloat16", rounding="stochastic", random_bits=np.array([3, 16], np.uint8),
                random_bits_width=4)
    with pytest.raises(ValueError, match="from 1 to 62"):
        er.cast(x, "bfloat16", rounding="stochastic", random_bits_width=63)
    with pytest.raises(ValueError, match="go with rounding='stochastic'"):
        er.add(x, x, random_bits=np.zeros(2, np.uint16))
    with pytest.raises(ValueError, match="real float formats"):
        er.add(np.array([1, 2]), np.array([3, 4]), rounding="stochastic")
    with pytest.raises(ValueError, match="real float formats"):
        er.cast(x, "float8_e8m0fnu", rounding="stochastic")
    with pytest.raises(ValueError, match="real float formats"):
        er.add(x + 1j, x, rounding="stochastic")
    with pytest.raises(ValueError, match="compute="):
        er.add(x, x, dtype="bfloat16", rounding="stochastic", compute="float32")
    with pytest.raises(ValueError, match="exact value"):
        er.exp(x, dtype="bfloat16", rounding="stochastic")
    with pytest.raises(ValueError, match="smaller"):  # a quotient is settled to float64 only
        er.divide(np.array([1.0]), np.array([3.0]), dtype="float32", rounding="stochastic",
                  random_bits_width=40)
    with pytest.raises(ValueError, match="elementwise ops"):
        er.asarray([1.0], "bfloat16", rounding="stochastic")


def test_rounding_enum_is_unchanged():
    assert len(list(er.Rounding)) == 6
    assert "stochastic" not in {r.value for r in er.Rounding}


@pytest.mark.parametrize("name,width", [("bfloat16", 16), ("float16", 13), ("float32", 24),
                                        ("float8_e4m3fn", 8)])
def test_engine_forms_quotients_and_far_pieces(name, width):
    """The engine's other forms: fma with pieces past 2**±450 (scaled values), quotients
    (a float64 and the sign of the rest), results far below the subnormals; with bits, with a
    width and ideal, against the model (the ideal probability: the nearest float64)."""
    rng = np.random.default_rng(width + len(name))
    f = Fmt(name)
    n = 300
    x = rng.standard_normal(n) * 2.0 ** rng.integers(400, 700, n)
    y = rng.standard_normal(n) * 2.0 ** -rng.integers(400, 700, n)
    z = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 10, n)
    bits = rng.integers(0, 2**width, n)
    exact = [Fraction(x[i]) * Fraction(y[i]) + Fraction(z[i]) for i in range(n)]
    quot = [Fraction(z[i]) / Fraction(3 + i % 7) for i in range(n)]
    d = np.array([3.0 + i % 7 for i in range(n)])
    # a quotient is known to float64's precision: its ideal probability to 2**(p - 53)
    for res_of, values, slack in ((lambda **k: er.fma(x, y, z, dtype=name, **k), exact, 0.0),
                                  (lambda **k: er.divide(z, d, dtype=name, **k), quot,
                                   2.0 ** (f.p - 52))):
        got = res_of(rounding="stochastic", random_bits=bits, random_bits_width=width,
                     overflow="saturate")
        wide = res_of(rounding="stochastic", random_bits_width=width, overflow="saturate")
        ideal = res_of(rounding="stochastic", overflow="saturate")
        g = got.rounded.numpy().astype(np.float64)
        for i, v in enumerate(values):
            want = model(v, f, "saturate", width, bits[i: i + 1])[0]
            assert same(g[i], want), (i, v, int(bits[i]), g[i], want)
            *_, D, frac = split(v, f, width)
            assert wide.numerator[i] == D, (i, v)
            assert abs(ideal.probability[i] - float(frac)) <= slack, (i, v)
    tiny = er.multiply(np.array([2.0**-600, -(2.0**-600)]), np.array([2.0**-600, 2.0**-600]),
                       dtype=name, rounding="stochastic")
    assert same(tiny.down.numpy().astype(float), [0.0, -0.0 if f.negzero else 0.0]).all()
    qmin = f.emin - f.p + 1
    p_tiny = float(Fraction(2) ** (-1200 - qmin))  # 0.0 where float64 cannot hold it
    assert tiny.probability.tolist() == [p_tiny, p_tiny]
    assert np.abs(tiny.up.numpy().astype(float)).tolist() == [2.0**qmin] * 2  # it may round up


def test_ptx_spelling_and_chained_results():
    """``"rs"`` is PTX's name; an earlier Result enters with its rounded values."""
    x = er.asarray([1.0, 3.0], "float32")
    first = er.add(x, er.asarray([2.0**-9, 2.0**-30], "float32"))  # float32 values
    a = er.cast(first, "bfloat16", rounding="rs")
    b = er.cast(first.rounded, "bfloat16", rounding="stochastic")
    assert a.probability.tolist() == b.probability.tolist() == [0.25, 0.0]
    assert a.up.tolist() == [1.0078125, 3.0]
