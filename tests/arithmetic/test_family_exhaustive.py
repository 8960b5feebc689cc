"""Every value (and every pair of values) of the small formats through the arithmetic family's ops,
in every rounding mode, against the independent oracle (``family_oracle``).

* 8-, 6- and 4-bit float formats: every value through sqrt, rsqrt, reciprocal, abs and negative,
  and cast into every format (every mode and overflow rule); every pair through divide (true,
  trunc, floor), floor_divide, remainder, fmod, subtract (alpha 1 and -0.75), maximum, minimum,
  fmax, fmin and the six comparisons; every pair with a third operand drawn from all values
  through fma, addcmul, addcdiv (value 1 and another) and clamp; divide, subtract, fma and
  reciprocal under the overflow rules saturate and nan; ``dtype=`` another format.
* float16 and bfloat16: every value through the unary ops and cast into every format; binary
  and ternary ops on all pairs of a structured sample (every binade, subnormals, specials),
  every value against a set of divisors (floor and remainder ties), and triples built to land
  on ties and one step beside them (fma, addcmul, addcdiv, subtract, remainder); ``dtype=``.
* 8- and 16-bit integer formats (and the sub-byte ones, and bool): every value cast into every
  format.

By default: every pair of float8_e4m3fn and the 6- and 4-bit formats, 1024 pairs of the other
8-bit formats, the ternary ops on a sample, the ops whose results are operands (maximum, abs...)
in one mode, the 16-bit samples small, float16 cast into every format in three modes, and the
overflow rules and ``dtype=`` sweeps on one format each. ``--run-slow`` runs all of it: every
pair of every small format in every mode, about 1100 values (1.2 million pairs) of float16 and
bfloat16, every 16-bit value cast into every format in every mode.

The operands are of one format and the result is that format (the op's own promotion).
Results are compared bit for bit, NaN with NaN. Formats without NaN (float6, float4) cannot
hold a NaN result: exactref raises there (checked in ``test_family_pinned``), so those
elements are left out of their sweeps.
"""
from __future__ import annotations

import functools
import math
import zlib

import family_oracle as F
import numpy as np
import pytest
from gmpy2 import mpq

import exactref as er
from exactref._formats import FORMATS
from mpfr_rounding import round_to_int

R = er.Rounding
MODES = list(R)
SMALL = F.FLOATS_SMALL
HALF = F.FLOATS_16
#: small formats whose every pair runs by default (the rest: a sample by default)
DEFAULT_ALL = {"float8_e4m3fn", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"}
SAMPLE = 1024
SLOW = pytest.mark.slow


def _mid(m):
    return m.value


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _small_params():
    out = []
    for f in SMALL:
        if f.name in DEFAULT_ALL:
            out.append(pytest.param(f, "all", id=f"{f.name}-all"))
        else:
            out.append(pytest.param(f, "sample", id=f"{f.name}-sample"))
            out.append(pytest.param(f, "all", id=f"{f.name}-all", marks=pytest.mark.slow))
    return out


# ------------------------------------------------------------------------------- the ops
def _div(how):
    return lambda x, y, **kw: er.divide(x, y, rounding_mode=how, **kw)


BINARY = {
    "divide": (_div(None), F.divide),
    "divide_trunc": (_div("trunc"), lambda x, y: F.divide(x, y, "trunc")),
    "divide_floor": (_div("floor"), lambda x, y: F.divide(x, y, "floor")),
    "floor_divide": (er.floor_divide, lambda x, y: F.divide(x, y, "floor")),
    "remainder": (er.remainder, F.remainder),
    "fmod": (er.fmod, F.fmod),
    "subtract": (er.subtract, F.subtract),
    "subtract_alpha": (lambda x, y, **kw: er.subtract(x, y, alpha=-0.75, **kw),
                       lambda x, y: F.subtract(x, y, -0.75)),
    "maximum": (er.maximum, F.maximum),
    "minimum": (er.minimum, F.minimum),
    "fmax": (er.fmax, F.fmax),
    "fmin": (er.fmin, F.fmin),
}

# (x, y, z): fma(x, y, z); addcmul(input=z, x, y); addcdiv(input=z, x, y); clamp(x, min=y, max=z)
TERNARY = {
    "fma": (er.fma, F.fma),
    "addcmul": (lambda x, y, z, **kw: er.addcmul(z, x, y, **kw),
                lambda x, y, z: F.addcmul(z, x, y)),
    "addcmul_value": (lambda x, y, z, **kw: er.addcmul(z, x, y, value=3, **kw),
                      lambda x, y, z: F.addcmul(z, x, y, 3)),
    "addcdiv": (lambda x, y, z, **kw: er.addcdiv(z, x, y, **kw),
                lambda x, y, z: F.addcdiv(z, x, y)),
    "addcdiv_value": (lambda x, y, z, **kw: er.addcdiv(z, x, y, value=-0.5, **kw),
                      lambda x, y, z: F.addcdiv(z, x, y, -0.5)),
    "clamp": (lambda x, y, z, **kw: er.clamp(x, y, z, **kw), F.clamp),
}

UNARY = {
    "sqrt": (er.sqrt, F.sqrt),
    "rsqrt": (er.rsqrt, F.rsqrt),
    "reciprocal": (er.reciprocal, F.reciprocal),
    "abs": (er.abs, F.abs_),
    "negative": (er.negative, F.negate),
}


#: ops whose results are operands (or their negations): no rounding, so by default one mode
EXACT_OPS = {"maximum", "minimum", "fmax", "fmin", "abs", "negative", "clamp"}


def _op_modes(ops):
    """``(op, mode)`` parameters: every mode, but only nearest-even by default for EXACT_OPS."""
    return [pytest.param(op, m, id=f"{op}-{m.value}",
                         marks=[SLOW] if op in EXACT_OPS and m is not R.NEAREST_EVEN else [])
            for op in ops for m in MODES]


# ------------------------------------------------------------------------------ operands
@functools.cache
def _grid(name: str, size: str):
    """Pairs ``(x, y)`` of a small format (float64 arrays): every pair, or a seeded sample;
    and a third operand drawn from every value."""
    fmt = FORMATS[name]
    vals = F.all_values(fmt)
    n = vals.size
    x, y = np.repeat(vals, n), np.tile(vals, n)
    rng = np.random.default_rng(_seed(name, "grid"))
    if size == "sample":
        pick = rng.choice(x.size, size=min(SAMPLE, x.size), replace=False)
        x, y = x[pick], y[pick]
    z = vals[rng.integers(0, n, size=x.size)]
    return x, y, z


def _patterns(fmt, exponents, mantissas, rng, extra):
    """Values of a float format from bit patterns: every sign, the given exponent fields and
    mantissa fields, plus ``extra`` random mantissas per binade."""
    mbits = fmt.precision - 1
    ebits = fmt.bits - 1 - mbits
    out = []
    for s in (0, 1):
        for e in exponents:
            ms = set(m for m in mantissas if 0 <= m < 1 << mbits)
            ms.update(int(v) for v in rng.integers(0, 1 << mbits, size=extra))
            for m in sorted(ms):
                out.append((s << (fmt.bits - 1)) | (e << mbits) | m)
    raw = np.array(sorted(set(out)), dtype=np.uint16)
    with np.errstate(invalid="ignore"):
        vals = raw.view(fmt.np_dtype).astype(np.float64)
    assert ebits > 0
    nan = np.isnan(vals)
    return np.concatenate([vals[~nan], [np.nan] if nan.any() else []])


@functools.cache
def _sample16(name: str, size: str):
    """A structured sample of float16 or bfloat16: every binade of float16 (bfloat16: the 16
    lowest and highest and every 8th between), subnormals, infinities and NaN; mantissas 0, 1,
    the middle, the top two, and random ones."""
    fmt = FORMATS[name]
    mbits = fmt.precision - 1
    emax_field = (1 << (fmt.bits - 1 - mbits)) - 1
    rng = np.random.default_rng(_seed(name, size, "sample16"))
    if name == "float16":
        exps = list(range(emax_field + 1))
    else:
        exps = sorted(set(range(16)) | set(range(emax_field - 15, emax_field + 1)) |
                      set(range(0, emax_field + 1, 8 if size == "full" else 24)))
    if size == "quick":
        exps = exps[::3] + [0, 1, emax_field - 1, emax_field]
    mants = [0, 1, 1 << (mbits - 1), (1 << mbits) - 2, (1 << mbits) - 1]
    if size == "quick":
        mants = [0, 1, (1 << mbits) - 1]
    extra = 0 if size == "quick" else 13 if name == "float16" else 4  # about 1100 values
    return _patterns(fmt, sorted(set(exps)), mants, rng, extra)


@functools.cache
def _pairs16(name: str, size: str):
    vals = _sample16(name, size)
    n = vals.size
    x, y = np.repeat(vals, n), np.tile(vals, n)
    rng = np.random.default_rng(_seed(name, size, "z16"))
    z = vals[rng.integers(0, n, size=x.size)]
    return x, y, z


def _finite_values(fmt):
    v = F.all_values(fmt)
    return v[np.isfinite(v)]


def _quantum(v, fmt):
    """The spacing of ``fmt``'s values in the binade of each ``|v|`` (at least the subnormal
    spacing)."""
    a = np.abs(v)
    _, e2 = np.frexp(np.where(a == 0, 1.0, a))
    return np.ldexp(1.0, np.maximum(e2 - 1, fmt.emin) - fmt.precision + 1)


def _representable(v, fmt):
    vals = _finite_values(fmt)
    return np.isin(v, vals) & np.isfinite(v)


@functools.cache
def _divisor_pairs16(name: str, size: str):
    """Every finite value against divisors whose quotients' integer parts land on the format's
    midpoints (odd significands of one bit more): floor_divide, remainder and fmod ties."""
    fmt = FORMATS[name]
    vals = _finite_values(fmt)
    if size == "quick":
        vals = vals[np.random.default_rng(_seed(name, "div")).choice(vals.size, 1000,
                                                                      replace=False)]
    divs = np.array([3.0, -3.0, 5.0, 7.0, 0.75, -1.25, 3 * 2.0**-20, 2.0**-12 * 5])
    divs = divs[_representable(divs, fmt)]
    x, y = np.repeat(vals, divs.size), np.tile(divs, vals.size)
    return x, y


@functools.cache
def _tie_triples16(name: str, size: str):
    """``(x, y, z)`` with ``x * y = m * q / 2`` for ``q`` the quantum of ``z``'s binade and
    ``m`` odd (a tie of ``z + x y``), ``m`` one step beside an odd integer (just off a tie), or
    ``m = 1/2`` (a tie at the binade below a power of two); ``y`` a power of two, both signs."""
    fmt = FORMATS[name]
    rng = np.random.default_rng(_seed(name, size, "ties"))
    n = 4000 if size == "quick" else 60000
    vals = _finite_values(fmt)
    vals = vals[(vals != 0) & (np.abs(vals) < fmt.max_finite / 4)]
    z = vals[rng.integers(0, vals.size, size=n)]
    z[: n // 8] = np.ldexp(1.0, rng.integers(fmt.emin, fmt.emax - 2, size=n // 8)) * \
        rng.choice([-1.0, 1.0], size=n // 8)
    step = 2.0 ** (1 - fmt.precision)
    ms = np.array([1.0, 3.0, 5.0, 0.5, 1 + step, 1 - step / 2, 3 + 3 * step, 7.0, 2 - step])
    m = ms[rng.integers(0, ms.size, size=n)] * rng.choice([-1.0, 1.0], size=n)
    b = rng.integers(-4, 5, size=n)
    y = np.ldexp(1.0, b) * rng.choice([-1.0, 1.0], size=n)
    x = m * _quantum(z, fmt) / 2 / y
    ok = _representable(x, fmt) & _representable(y, fmt)
    return x[ok], y[ok], z[ok]


# -------------------------------------------------------------------------------- checks
def check(out_fmt, encoded, call, mode, cols, what, rule=None):
    """Round the oracle's values into ``out_fmt`` and compare with exactref's ``rounded``.
    ``call(keep)`` runs exactref on the kept elements (those whose result the format holds)."""
    __tracebackhide__ = True
    a, sticky, sumzero = encoded
    keep = np.ones(a.size, dtype=bool) if out_fmt.has_nan else ~np.isnan(a)
    want = F.table(out_fmt).round(a[keep], sticky[keep], mode, rule, sumzero[keep])
    res = call(keep)
    assert res.rounded.dtype is out_fmt, (res.rounded.dtype, out_fmt)
    got = res.rounded._wide().astype(np.float64).reshape(-1)
    kept = [np.asarray(c)[keep] for c in cols]
    F.assert_same(got, want, lambda k: tuple(float(c[k]) for c in kept),
                  f"{what} in {out_fmt.name}, {mode.value}")


def _arrays(fmt, cols, keep):
    return [er.asarray(np.asarray(c)[keep], fmt) for c in cols]


# ------------------------------------------------------------------- oracle self-checks
@pytest.mark.parametrize("size", [pytest.param(60, id="quick"),
                                  pytest.param(600, id="full", marks=SLOW)])
@pytest.mark.parametrize("fmt", SMALL + HALF, ids=lambda f: f.name)
def test_table_rounding_matches_mpfr(fmt, size):
    """The table rounder against MPFR (``mpfr_rounding`` through ``arith_oracle.rnd``) on every
    midpoint, values just beside them and beside every value, overflow and underflow edges,
    specials, in every mode and overflow rule."""
    rng = np.random.default_rng(_seed(fmt.name, "table"))
    T = F.table(fmt).values
    pick = rng.choice(T.size - 1, size=min(T.size - 1, size), replace=False)
    vals = []
    for i in pick:
        lo, hi = mpq(float(T[i])), mpq(float(T[i + 1]))
        gap = hi - lo
        for t in (mpq(1, 2), mpq(1, 2) + mpq(1, 2**40), mpq(1, 2) - mpq(1, 2**40),
                  mpq(1, 2**30), 1 - mpq(1, 2**30), mpq(1, 3), mpq(0)):
            v = lo + gap * t
            if v != 0:
                vals.append(v)
    big, tiny = mpq(fmt.max_finite), mpq(fmt.smallest_subnormal)
    vals += [big * k for k in (mpq(2), mpq(3, 2), 1 + mpq(1, 2**20), mpq(10**30))]
    vals += [tiny * k for k in (mpq(1, 2), mpq(1, 3), mpq(1, 2**30), mpq(3, 2), mpq(2, 3))]
    vals += [-v for v in vals]
    vals += [0.0, -0.0, math.inf, -math.inf, F.SUMZERO] + ([math.nan] if fmt.has_nan else [])
    rules = ["ieee", "saturate"] + (["nan"] if fmt.has_nan else [])
    for mode in MODES:
        for rule in rules:
            got = F.table(fmt).round_exact(vals, mode, rule)
            for v, g in zip(vals, got, strict=True):
                if not fmt.signed and isinstance(v, float) and v == -math.inf:
                    # arith_oracle saturates -inf to -max, which float8_e8m0fnu cannot hold: an
                    # unsigned format has no negative encoding (NaN), as for every negative value
                    assert math.isnan(g)
                    continue
                w = F.rnd_one(v, fmt, mode, rule)
                assert F.same(g, w), (fmt.name, mode, rule, v, g, w)


def test_int_round_matches_mpfr_rounding():
    """The vectorized integer rounding against ``mpfr_rounding.round_to_int``."""
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, -0.75, 3.0, -3.0, 1e17, -2.0**60 - 2**8,
                  0.49999999999999994, 4503599627370495.5, -4503599627370495.5, 7.999])
    for mode in MODES:
        got = F.int_round(v, mode)
        want = [round_to_int(mpq(float(t)), mode) for t in v]
        assert [int(g) for g in got] == want, mode


# ----------------------------------------------------------------------- small formats
@pytest.mark.parametrize("op,mode", _op_modes(list(UNARY)))
@pytest.mark.parametrize("fmt", SMALL + HALF, ids=lambda f: f.name)
def test_unary_every_value(fmt, op, mode):
    """Every value of every format of at most 16 bits."""
    x = F.all_values(fmt)
    enc = _unary_encoded(fmt.name, op)
    er_fn = UNARY[op][0]
    check(fmt, enc, lambda keep: er_fn(er.asarray(x[keep], fmt), rounding=mode), mode, (x,), op)


@functools.lru_cache(maxsize=16)
def _unary_encoded(name, op):
    return F.encode_map(UNARY[op][1], F.all_values(FORMATS[name]))


NARROWER = {"float16": ["float8_e4m3fn", "float8_e5m2", "bfloat16"],
            "bfloat16": ["float8_e5m2", "float16"],
            "float8_e5m2": ["float4_e2m1fn", "float8_e4m3fn"],
            "float8_e4m3fn": ["float6_e3m2fn"]}


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("op", ["sqrt", "rsqrt", "reciprocal", "abs"])
@pytest.mark.parametrize("src,dst", [pytest.param(s, d, id=f"{s}-{d}", marks=[] if (s, d) in {
    ("float16", "float8_e4m3fn"), ("float8_e5m2", "float4_e2m1fn"),
    ("float8_e4m3fn", "float6_e3m2fn")} else [SLOW]) for s, ds in NARROWER.items() for d in ds])
def test_unary_with_dtype(src, dst, op, mode):
    """``dtype=`` another float format: the exact value rounded once into it."""
    fmt, out = FORMATS[src], FORMATS[dst]
    x = F.all_values(fmt)
    enc = _unary_encoded(src, op)
    er_fn = UNARY[op][0]
    check(out, enc, lambda keep: er_fn(er.asarray(x[keep], fmt), dtype=out, rounding=mode),
          mode, (x,), f"{op}(dtype={dst})")


@pytest.mark.parametrize("op,mode", _op_modes(list(BINARY)))
@pytest.mark.parametrize("fmt,size", _small_params())
def test_binary_small(fmt, size, op, mode):
    x, y, _ = _grid(fmt.name, size)
    enc = _binary_encoded(fmt.name, size, op)
    er_fn = BINARY[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, (x, y), keep), rounding=mode), mode,
          (x, y), op)


@functools.lru_cache(maxsize=16)
def _binary_encoded(name, size, op):
    x, y, _ = _grid(name, size) if name not in ("float16", "bfloat16") else _pairs16(name, size)
    return F.encode_map(BINARY[op][1], x, y)


def _sample_params():
    out = []
    for f in SMALL:
        if f.bits <= 6:
            out.append(pytest.param(f, "all", id=f"{f.name}-all"))
            continue
        out.append(pytest.param(f, "sample", id=f"{f.name}-sample"))
        out.append(pytest.param(f, "all", id=f"{f.name}-all", marks=SLOW))
    return out


@pytest.mark.parametrize("op,mode", _op_modes(list(TERNARY)))
@pytest.mark.parametrize("fmt,size", _sample_params())
def test_ternary_small(fmt, size, op, mode):
    """Every pair ``(x, y)`` with a third operand drawn from every value."""
    x, y, z = _grid(fmt.name, size)
    enc = _ternary_encoded(fmt.name, size, op)
    er_fn = TERNARY[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, (x, y, z), keep), rounding=mode), mode,
          (x, y, z), op)


@functools.lru_cache(maxsize=16)
def _ternary_encoded(name, size, op):
    x, y, z = _grid(name, size) if name not in ("float16", "bfloat16") else _pairs16(name, size)
    return F.encode_map(TERNARY[op][1], x, y, z)


@pytest.mark.parametrize("fmt,size", _small_params())
def test_comparisons_small(fmt, size):
    """Every pair, the six comparisons (bool results, exact)."""
    x, y, _ = _grid(fmt.name, size)
    xa, ya = er.asarray(x, fmt), er.asarray(y, fmt)
    orders = [F.compare(a, b) for a, b in zip(x.tolist(), y.tolist(), strict=True)]
    for name, test in F.COMPARISONS.items():
        got = getattr(er, name)(xa, ya).rounded
        assert got.dtype.name == "bool"
        want = np.array([test(o) for o in orders])
        bad = np.flatnonzero(got.numpy() != want)
        assert bad.size == 0, [(name, x[k], y[k], bool(got.numpy()[k])) for k in bad[:8]]


QUICK_MODES = {R.NEAREST_EVEN, R.TOWARD_ZERO, R.TOWARD_POSITIVE}


def _modes_quick():
    return [pytest.param(m, id=m.value, marks=[] if m in QUICK_MODES else [SLOW]) for m in MODES]


def _formats_quick(names, default):
    return [pytest.param(FORMATS[n], id=n, marks=[] if n in default else [SLOW]) for n in names]


@pytest.mark.parametrize("mode", _modes_quick())
@pytest.mark.parametrize("rule", ["saturate", "nan"])
@pytest.mark.parametrize("op", ["divide", "subtract_alpha", "fma", "reciprocal"])
@pytest.mark.parametrize("fmt", _formats_quick(("float8_e4m3fn", "float8_e5m2",
                                                "float8_e4m3fnuz", "float8_e8m0fnu"),
                                               {"float8_e4m3fn"}))
def test_overflow_rules_small(fmt, op, rule, mode):
    """The non-default overflow rules on every pair (every value for reciprocal)."""
    if op == "reciprocal":
        x = F.all_values(fmt)
        enc = _unary_encoded(fmt.name, op)
        check(fmt, enc, lambda keep: er.reciprocal(er.asarray(x[keep], fmt), rounding=mode,
                                                   overflow=rule), mode, (x,), op, rule)
        return
    x, y, z = _grid(fmt.name, "all")
    if op == "fma":
        enc = _ternary_encoded(fmt.name, "all", op)
        check(fmt, enc, lambda keep: er.fma(*_arrays(fmt, (x, y, z), keep), rounding=mode,
                                            overflow=rule), mode, (x, y, z), op, rule)
        return
    enc = _binary_encoded(fmt.name, "all", op)
    er_fn = BINARY[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, (x, y), keep), rounding=mode,
                                       overflow=rule), mode, (x, y), op, rule)


@pytest.mark.parametrize("mode", _modes_quick())
@pytest.mark.parametrize("op", ["divide", "fma", "remainder", "subtract_alpha"])
@pytest.mark.parametrize("src,dst", [("float8_e5m2", "float4_e2m1fn"),
                                     pytest.param("float8_e5m2", "float8_e4m3fn", marks=SLOW),
                                     pytest.param("float8_e4m3fn", "float6_e3m2fn", marks=SLOW)])
def test_binary_with_dtype_small(src, dst, op, mode):
    """Every pair, ``dtype=`` another float format: one rounding into it."""
    fmt, out = FORMATS[src], FORMATS[dst]
    x, y, z = _grid(src, "all")
    if op == "fma":
        enc = _ternary_encoded(src, "all", op)
        cols = (x, y, z)
        er_fn = er.fma
    else:
        enc = _binary_encoded(src, "all", op)
        cols = (x, y)
        er_fn = BINARY[op][0]
    check(out, enc, lambda keep: er_fn(*_arrays(fmt, cols, keep), dtype=out, rounding=mode),
          mode, cols, f"{op}(dtype={dst})")


# ------------------------------------------------------------------------------- casts
CAST_SOURCES = SMALL + HALF + [f for f in FORMATS.values() if f.kind in ("int", "uint", "bool")
                               and f.bits <= 16]
TARGETS = [f for f in FORMATS.values() if f.encoding == "native"]  # P3109: test_formats_p3109


def _source_values(fmt):
    if fmt.kind == "bool":
        return np.array([False, True])
    if fmt.kind in ("int", "uint"):
        return np.arange(fmt.int_min, fmt.int_max + 1, dtype=np.int64)
    return F.all_values(fmt)


def _cast_params():
    """Sources of at most 8 bits by default; the 16-bit ones (65536 values into 34 formats in
    six modes) with ``--run-slow``, float16 also by default in three modes."""
    out = []
    for s in CAST_SOURCES:
        if s.bits < 16:
            out.append(pytest.param(s, "all", id=s.name))
            continue
        out.append(pytest.param(s, "all", id=s.name, marks=SLOW))
        if s.name == "float16":
            out.append(pytest.param(s, "quick", id=f"{s.name}-quick"))
    return out


def _expect_cast(v, src, dst, mode, rule):
    """The oracle's cast: ``(values, raises)``; values float64 (or ints, bools), or the error
    class exactref must raise."""
    vf = v.astype(np.float64)
    if dst.kind == "bool":
        with np.errstate(invalid="ignore"):
            return (vf != 0) | np.isnan(vf), None
    if dst.kind in ("int", "uint"):
        rule = rule or dst.default_overflow
        if np.isnan(vf).any() or (np.isinf(vf).any() and rule != "saturate"):
            return None, ValueError
        fin = np.isfinite(vf)
        k = np.where(fin, F.int_round(np.where(fin, vf, 0.0), mode), 0.0)
        ints = [int(t) if f else (dst.int_max if s > 0 else dst.int_min)
                for t, f, s in zip(k.tolist(), fin.tolist(), vf.tolist(), strict=True)]
        if src.kind in ("int", "uint", "bool"):
            ints = [int(t) for t in v.tolist()]
        out = F.int_overflow(ints, dst, rule)
        if any(t is None for t in out):
            return None, OverflowError
        return out, None
    comp = dst.component
    if comp.bits <= 16:
        re = F.table(comp).round(vf, np.zeros(vf.size, dtype=bool), mode, rule)
    else:  # float32 and float64 hold every value of these sources
        re = vf
    if dst.kind == "complex":
        c = np.empty(re.size, dtype=np.complex128)
        c.real, c.imag = re, 0.0
        return c, None
    return re, None


@pytest.mark.parametrize("src,size", _cast_params())
def test_cast_every_value(src, size):
    """Every value of the source into every format, in every mode (and every overflow rule
    of the target for the sources of at most 8 bits)."""
    v = _source_values(src)
    modes = MODES if size == "all" else [R.NEAREST_EVEN, R.TOWARD_ZERO, R.ODD]
    for dst in TARGETS:
        if src.bits == 16 and src.kind == "float" and dst.kind in ("int", "uint", "bool"):
            continue  # test_cast_half_to_integers
        rules = [None]
        if src.bits <= 8:
            comp = dst.component
            if comp.kind == "float":
                rules += ["saturate", "nan"] if comp.has_nan else ["saturate"]
            elif comp.kind != "bool":
                rules += ["wrap", "saturate", "error"]
        for mode in modes:
            for rule in rules:
                _check_cast(v, src, dst, mode, rule)


def _cast_inputs(v, src, dst, rule):
    """The source values the target can take: a format without NaN cannot take NaN; an integer
    format takes no NaN, and infinities only when saturating (both raise otherwise:
    test_family_pinned)."""
    if src.kind != "float":
        return v
    comp = dst.component
    if comp.kind == "float" and not comp.has_nan:
        return v[~np.isnan(v)]
    if comp.kind in ("int", "uint"):
        return v[np.isfinite(v) | (np.isinf(v) & (rule == "saturate"))]
    return v


def _check_cast(v, src, dst, mode, rule):
    __tracebackhide__ = True
    v = _cast_inputs(v, src, dst, rule)
    xa = er.asarray(v, src)
    want, raises = _expect_cast(v, src, dst, mode, rule)
    if raises is not None:
        with pytest.raises(raises):
            er.cast(xa, dst, rounding=mode, overflow=rule)
        return
    got = er.cast(xa, dst, rounding=mode, overflow=rule).rounded
    assert got.dtype is dst
    what = f"cast {src.name} -> {dst.name} ({mode.value}, {rule})"
    if dst.kind in ("int", "uint", "bool"):
        g = [int(t) for t in got._wide().tolist()] if dst.kind != "bool" else \
            got.numpy().tolist()
        w = list(want) if dst.kind != "bool" else [bool(t) for t in want]
        bad = [k for k in range(len(w)) if g[k] != w[k]]
        assert not bad, [(what, v[k], g[k], w[k]) for k in bad[:8]]
        return
    g = got._wide()
    if dst.kind == "complex":
        F.assert_same(g.real, np.asarray(want).real, list(v), what + " (real)")
        F.assert_same(g.imag, np.asarray(want).imag, list(v), what + " (imag)")
        return
    F.assert_same(g.astype(np.float64), want, list(v), what)


@pytest.mark.parametrize("rule", [None, pytest.param("wrap", marks=SLOW),
                                  pytest.param("saturate", marks=SLOW),
                                  pytest.param("error", marks=SLOW)])
@pytest.mark.parametrize("src", [pytest.param(FORMATS["float16"], id="float16"),
                                 pytest.param(FORMATS["bfloat16"], id="bfloat16", marks=SLOW)])
def test_cast_half_to_integers(src, rule):
    """Every finite float16/bfloat16 value into every integer format and bool, every mode."""
    v = F.all_values(src)
    for dst in [f for f in FORMATS.values() if f.kind in ("int", "uint", "bool")]:
        for mode in MODES if dst.kind != "bool" else [R.NEAREST_EVEN]:
            _check_cast(v, src, dst, mode, rule if dst.kind != "bool" else None)


# ----------------------------------------------------------------------- 16-bit formats
SIZES16 = [pytest.param("quick", id="quick"),
           pytest.param("full", id="full", marks=pytest.mark.slow)]


@pytest.mark.parametrize("op,mode", _op_modes(list(BINARY)))
@pytest.mark.parametrize("size", SIZES16)
@pytest.mark.parametrize("fmt", HALF, ids=lambda f: f.name)
def test_binary_half_sample(fmt, size, op, mode):
    """All pairs of a structured sample (every binade, subnormals, specials)."""
    x, y, _ = _pairs16(fmt.name, size)
    enc = _binary_encoded(fmt.name, size, op)
    er_fn = BINARY[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, (x, y), keep), rounding=mode), mode,
          (x, y), op)


@pytest.mark.parametrize("op,mode", _op_modes(list(TERNARY)))
@pytest.mark.parametrize("size", SIZES16)
@pytest.mark.parametrize("fmt", HALF, ids=lambda f: f.name)
def test_ternary_half_sample(fmt, size, op, mode):
    x, y, z = _pairs16(fmt.name, size)
    enc = _ternary_encoded(fmt.name, size, op)
    er_fn = TERNARY[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, (x, y, z), keep), rounding=mode), mode,
          (x, y, z), op)


@functools.lru_cache(maxsize=16)
def _divisor_encoded(name, size, op):
    x, y = _divisor_pairs16(name, size)
    return F.encode_map(BINARY[op][1], x, y)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("op", ["floor_divide", "divide_trunc", "remainder", "fmod", "divide"])
@pytest.mark.parametrize("size", SIZES16)
@pytest.mark.parametrize("fmt", HALF, ids=lambda f: f.name)
def test_divisors_half(fmt, size, op, mode):
    """Every finite value (by default 1000 of them) over divisors 3, 5, 7, 0.75, ...: integer
    parts on the format's midpoints, remainders near the divisor."""
    x, y = _divisor_pairs16(fmt.name, size)
    enc = _divisor_encoded(fmt.name, size, op)
    er_fn = BINARY[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, (x, y), keep), rounding=mode), mode,
          (x, y), op)


def test_divisor_pairs_hit_ties():
    """A guard on the data: the divisor sweep holds floor quotients on float16 midpoints."""
    x, y = _divisor_pairs16("float16", "quick")
    fmt = FORMATS["float16"]
    hits = 0
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        q = F.divide(a, b, "floor")
        if F.is_finite_nonzero(q):
            up = F.rnd_one(q, fmt, R.TOWARD_POSITIVE)
            down = F.rnd_one(q, fmt, R.TOWARD_NEGATIVE)
            if math.isfinite(up) and math.isfinite(down):
                hits += up != down and q == (mpq(up) + mpq(down)) / 2
    assert hits > 50


TIE_OPS = {
    "fma": (er.fma, F.fma, lambda x, y, z: (x, y, z)),
    "addcmul": (er.addcmul, F.addcmul, lambda x, y, z: (z, x, y)),
    "addcdiv": (er.addcdiv, F.addcdiv, lambda x, y, z: (z, x * y * y, y)),
    "addcdiv_value": (lambda i, a, b, **kw: er.addcdiv(i, a, b, value=2, **kw),
                      lambda i, a, b: F.addcdiv(i, a, b, 2), lambda x, y, z: (z, x * y * y / 2, y)),
    "subtract": (er.subtract, F.subtract, lambda x, y, z: (z, -x * y)),
    "remainder": (er.remainder, F.remainder,
                  lambda x, y, z: (-np.abs(x * y) * np.sign(z), z)),
}


@functools.lru_cache(maxsize=16)
def _tie_encoded(name, size, op):
    cols = _tie_cols(name, size, op)
    return F.encode_map(TIE_OPS[op][1], *cols)


@functools.cache
def _tie_cols(name, size, op):
    fmt = FORMATS[name]
    x, y, z = _tie_triples16(name, size)
    cols = TIE_OPS[op][2](x, y, z)
    ok = np.logical_and.reduce([_representable(np.asarray(c, dtype=np.float64), fmt)
                                for c in cols])
    return tuple(np.asarray(c, dtype=np.float64)[ok] for c in cols)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("op", list(TIE_OPS))
@pytest.mark.parametrize("size", SIZES16)
@pytest.mark.parametrize("fmt", HALF, ids=lambda f: f.name)
def test_ties_half(fmt, size, op, mode):
    """Exact values on the format's midpoints and one step beside them: ``z + x y`` (fma,
    addcmul), ``z + (x y^2) / y`` (addcdiv), ``z - (-x y)`` (subtract), remainders that add the
    divisor to a half-quantum (remainder)."""
    cols = _tie_cols(fmt.name, size, op)
    assert cols[0].size > (200 if size == "quick" else 5000)
    enc = _tie_encoded(fmt.name, size, op)
    er_fn = TIE_OPS[op][0]
    check(fmt, enc, lambda keep: er_fn(*_arrays(fmt, cols, keep), rounding=mode), mode, cols,
          op)


def test_tie_triples_hit_ties():
    """A guard on the data: most tie triples are exact midpoints of float16."""
    x, y, z = _tie_triples16("float16", "quick")
    fmt = FORMATS["float16"]
    ties = 0
    for a, b, c in zip(x.tolist(), y.tolist(), z.tolist(), strict=True):
        v = F.fma(a, b, c)
        if F.is_finite_nonzero(v):
            up = F.rnd_one(v, fmt, R.TOWARD_POSITIVE)
            down = F.rnd_one(v, fmt, R.TOWARD_NEGATIVE)
            ties += up != down and v == (mpq(up) + mpq(down)) / 2
    assert ties > x.size // 4


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("op", ["divide", "fma", "addcdiv", "remainder"])
@pytest.mark.parametrize("dst", ["float8_e4m3fn", "float8_e5m2"])
def test_half_with_dtype(dst, op, mode):
    """float16 operands (the sample), ``dtype=`` a float8 format: one rounding into it."""
    fmt, out = FORMATS["float16"], FORMATS[dst]
    x, y, z = _pairs16("float16", "quick")
    if op in TERNARY:
        enc = _ternary_encoded("float16", "quick", op)
        cols, er_fn = (x, y, z), TERNARY[op][0]
    else:
        enc = _binary_encoded("float16", "quick", op)
        cols, er_fn = (x, y), BINARY[op][0]
    check(out, enc, lambda keep: er_fn(*_arrays(fmt, cols, keep), dtype=out, rounding=mode),
          mode, cols, f"{op}(dtype={dst})")
