"""The real functions against an independent oracle (mpmath, ``functions_oracle``), bit for bit,
in all six rounding modes.

* every format of at most 8 bits: every value (default);
* bfloat16 and float16: every value (``--run-slow``; ``exp`` in both and ``gelu`` in bfloat16
  by default), and 2048 values of each by default;
* float32: 10**4 inputs per function by default (10**5 with ``--run-slow``), float64: 10**3
  (10**4): random bit patterns (every binade) and values where each function is interesting;
  the op to nearest, and the kernel's exact values rounded in all six modes;
* the two-operand functions (``atan2``, ``pow``) on every pair of the 4- and 6-bit formats (8-bit
  with ``--run-slow``) and on samples with C99's special cases;
* the hardest cases: the inputs of bfloat16 and float16 whose values lie nearest a rounding
  boundary, found by an exhaustive search with the oracle (:func:`functions_oracle.hardest`)
  and pinned below.
"""

from __future__ import annotations

import math
import zlib

import functions_oracle as oracle
import numpy as np
import pytest
from arith_oracle import rnd as rnd_mpfr
from family_oracle import FLOATS_SMALL, all_values, assert_same

import exactref as er
from exactref._exact import function_values as evaluate
from kernel_records import function

R = er.Rounding
MODES = list(R)


@pytest.fixture(autouse=True)
def _fresh_oracle_cache():
    yield
    oracle._CACHE.clear()


class Fn:
    """One function under test: the op and its parameters, the oracle's function and its
    parameters, the kernel's name and parameters (None: the op does more than the kernel), and
    the range of inputs where it is interesting."""

    def __init__(self, id, op, oname=None, params=None, oparams=None, kernel=None,
                 kparams=None, lo=-10.0, hi=10.0):
        self.id, self.op, self.oname = id, op, oname or op
        self.params, self.oparams = params or {}, oparams or {}
        self.kernel = kernel if kernel is not None else self.oname
        self.kparams = kparams
        self.lo, self.hi = lo, hi

    def __repr__(self):
        return self.id

    def rounded(self, x, fmt, mode, dtype=None):
        arr = x if isinstance(x, er.Array) else er.asarray(x, fmt)
        r = getattr(er, self.op)(arr, rounding=mode, dtype=dtype, **self.params)
        return r.rounded.numpy().astype(np.float64)


UNARY = [
    Fn("exp", "exp", lo=-110, hi=90), Fn("exp2", "exp2", lo=-160, hi=130),
    Fn("expm1", "expm1", lo=-20, hi=90), Fn("log", "log", lo=0, hi=4),
    Fn("log2", "log2", lo=0, hi=4), Fn("log10", "log10", lo=0, hi=4),
    Fn("log1p", "log1p", lo=-1, hi=4), Fn("sin", "sin"), Fn("cos", "cos"), Fn("tan", "tan"),
    Fn("sinh", "sinh", lo=-90, hi=90), Fn("cosh", "cosh", lo=-90, hi=90),
    Fn("tanh", "tanh"), Fn("asin", "asin", lo=-1, hi=1), Fn("acos", "acos", lo=-1, hi=1),
    Fn("atan", "atan", lo=-5, hi=5), Fn("erf", "erf", lo=-6, hi=6),
    Fn("erfc", "erfc", lo=-6, hi=12), Fn("sigmoid", "sigmoid", lo=-20, hi=40),
    Fn("silu", "silu", lo=-20, hi=40), Fn("gelu", "gelu", lo=-12, hi=12),
    Fn("gelu_tanh", "gelu", "gelu_tanh", params={"approximate": "tanh"}, lo=-12, hi=12),
    Fn("mish", "mish", lo=-20, hi=40), Fn("softplus", "softplus", lo=-20, hi=40,
                                            kparams={"beta": 1.0, "threshold": 20.0}),
    Fn("softplus_beta2", "softplus", params={"beta": 2.0, "threshold": 5.0},
       oparams={"beta": 2.0, "threshold": 5.0}, kparams={"beta": 2.0, "threshold": 5.0},
       lo=-20, hi=10),
    Fn("logit", "logit", lo=0, hi=1),
    Fn("logit_eps", "logit", params={"eps": 0.125}, oparams={"eps": 0.125}, kernel="", lo=0,
       hi=1),
]
BY_ID = {f.id: f for f in UNARY}


def _check(fn: Fn, x, fmt, modes=MODES):
    """``er.<op>`` of ``x`` (values of ``fmt``) against the oracle, in ``modes``."""
    fmt = er.dtype(fmt)
    x = np.asarray(x, dtype=np.float64)
    vals = oracle.exacts(fn.oname, x, **fn.oparams)
    if not fmt.has_nan:  # a NaN value raises in a format without NaN: checked elsewhere
        keep = np.array([not (isinstance(v, float) and v != v) for v in vals], dtype=bool)
        x, vals = x[keep], [v for v, k in zip(vals, keep, strict=True) if k]
    arr = er.asarray(x, fmt)
    for mode in modes:
        want = oracle.round_exact(vals, fmt, mode)
        got = fn.rounded(arr, fmt, mode)
        assert_same(got, want, x, f"{fn.id} of {fmt.name} rounded {mode.value}")


# ----------------------------------------------------------------------- small formats
@pytest.mark.parametrize("fmt", [f.name for f in FLOATS_SMALL])
@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_every_value_of_the_small_formats(fn, fmt):
    _check(fn, all_values(fmt), fmt)


def test_a_nan_value_in_a_format_without_nan_is_undefined():
    r = er.log(er.asarray([-1.0, 1.0], "float6_e2m3fn"))
    assert r.undefined.tolist() == [True, False] and r.rounded.tolist() == [0.0, 0.0]


# ------------------------------------------------------------------------ 16-bit formats
_DEFAULT_EXHAUSTIVE = [("exp", "bfloat16"), ("exp", "float16"), ("gelu", "bfloat16")]


@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_16_bit_samples(fn, fmt):
    x = all_values(fmt)
    pick = np.random.default_rng(zlib.crc32(f"{fn.id}:{fmt}".encode())).choice(x.size, 2048, replace=False)
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5]
    _check(fn, np.concatenate([x[pick], special]), fmt)


@pytest.mark.slow  # 25 CPU s for its 3 (issue 19: test_16_bit_samples holds them by default)
@pytest.mark.parametrize("fn,fmt", _DEFAULT_EXHAUSTIVE)
def test_every_16_bit_value_default(fn, fmt):
    _check(BY_ID[fn], all_values(fmt), fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_every_16_bit_value(fn, fmt):
    if (fn.id, fmt) in _DEFAULT_EXHAUSTIVE:
        pytest.skip("in the default run")
    _check(fn, all_values(fmt), fmt)


# ------------------------------------------------------------------- float32, float64
def _samples(fn: Fn, n: int, dtype, seed: int):
    """``n`` inputs: two fifths random bit patterns (every binade, both signs), the rest
    uniform where the function is interesting, and the special values."""
    rng = np.random.default_rng(seed)
    k = n * 2 // 5
    if dtype == np.float32:
        bits = rng.integers(0, 2**32, k, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        bits = rng.integers(0, 2**64, k, dtype=np.uint64).view(np.float64)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns
        wide = bits.astype(np.float64)
    wide[np.isnan(wide)] = np.nan  # quiet NaNs only (a signalling one warns in casts)
    near = rng.uniform(fn.lo, fn.hi, n - k)
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, -2.0])
    return np.concatenate([wide, near, edge]).astype(dtype)


def _check_wide(fn: Fn, n: int, dtype, seed: int):
    fmt = er.dtype(np.dtype(dtype).name)
    x = _samples(fn, n, dtype, seed)
    vals = oracle.exacts(fn.oname, x, **fn.oparams)
    wants = {mode: oracle.round_exact(vals, fmt, mode) for mode in MODES}
    mode = R.NEAREST_EVEN  # the op, as a user calls it
    assert_same(fn.rounded(x, fmt, mode), wants[mode], x,
                f"{fn.id} of {fmt.name} rounded {mode.value}")
    if not fn.kernel:
        return
    # the kernel's exact values, at the precision the op asks for, in every mode
    ex = evaluate(function(fn.kernel), x.astype(np.float64), bits=fmt.precision, params=fn.kparams)
    for mode in MODES:
        got = ex.round(fmt, mode, "ieee")[0]
        assert_same(got, wants[mode], x, f"{fn.kernel} kernel of {fmt.name} rounded "
                                          f"{mode.value}")


@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_float32(fn):
    _check_wide(fn, 10**4, np.float32, 32)


@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_float64(fn):
    _check_wide(fn, 10**3, np.float64, 64)


@pytest.mark.slow
@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_float32_more(fn):
    _check_wide(fn, 10**5, np.float32, 320)


@pytest.mark.slow
@pytest.mark.parametrize("fn", UNARY, ids=repr)
def test_float64_more(fn):
    _check_wide(fn, 10**4, np.float64, 640)


@pytest.mark.parametrize("fn", [BY_ID[i] for i in ("exp", "tanh", "gelu", "logit", "erfc")],
                         ids=repr)
def test_one_evaluation_serves_every_narrower_format(fn):
    """The kernel's values at 53 bits round correctly into every format, not only float64."""
    x = _samples(fn, 2000, np.float32, 7).astype(np.float64)
    vals = oracle.exacts(fn.oname, x, **fn.oparams)
    ex = evaluate(function(fn.kernel), x, params=fn.kparams)
    for name in ("float64", "float32", "bfloat16", "float16", "float8_e4m3fn"):
        fmt = er.dtype(name)
        for mode in MODES:
            want = oracle.round_exact(vals, fmt, mode)
            assert_same(ex.round(fmt, mode, fmt.default_overflow)[0], want, x,
                        f"{fn.kernel} at 53 bits into {name}, {mode.value}")


# ---------------------------------------------------------------- two operands
def _pairs_of(fmt):
    v = all_values(er.dtype(fmt))
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def _check_binary(op, x, y, fmt, modes=MODES):
    fmt = er.dtype(fmt)
    vals = oracle.exacts(op, x, y)
    if not fmt.has_nan:
        keep = np.array([not (isinstance(v, float) and v != v) for v in vals], dtype=bool)
        x, y, vals = x[keep], y[keep], [v for v, k in zip(vals, keep, strict=True) if k]
    X, Y = er.asarray(x, fmt), er.asarray(y, fmt)
    for mode in modes:
        want = oracle.round_exact(vals, fmt, mode)
        got = getattr(er, op)(X, Y, rounding=mode).rounded.numpy().astype(np.float64)
        assert_same(got, want, lambda k: (x[k], y[k]), f"{op} of {fmt.name}, {mode.value}")


@pytest.mark.parametrize("fmt", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"])
@pytest.mark.parametrize("op", ["atan2", "pow"])
def test_binary_every_pair_of_small_formats(op, fmt):
    _check_binary(op, *_pairs_of(fmt), fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["float8_e5m2", "float8_e4m3fn"])
@pytest.mark.parametrize("op", ["atan2", "pow"])
def test_binary_every_pair_of_8_bit_formats(op, fmt):
    _check_binary(op, *_pairs_of(fmt), fmt)


_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
                     -3.0, 0.25, 1e-30, -1e30, 1.5, -1.5])


def _binary_samples(n, dtype, seed):
    rng = np.random.default_rng(seed)
    a, b = np.meshgrid(_SPECIAL, _SPECIAL, indexing="ij")  # C99's table, every pair
    x = np.concatenate([a.reshape(-1), rng.uniform(0, 10, n), -rng.uniform(0, 10, n // 4),
                        rng.standard_normal(n) * 100, 2.0 ** rng.integers(-60, 60, n // 4)])
    y = np.concatenate([b.reshape(-1), rng.uniform(-10, 10, n),
                        rng.integers(-20, 20, n // 4).astype(float), rng.integers(-8, 8, n) / 4,
                        rng.integers(-40, 40, n // 4) / 2])
    return x.astype(dtype), y.astype(dtype)


@pytest.mark.parametrize("fmt", ["float32", "float64"])
@pytest.mark.parametrize("op", ["atan2", "pow"])
def test_binary_samples(op, fmt):
    dtype = np.float32 if fmt == "float32" else np.float64
    n = 10**4 if fmt == "float32" else 10**3
    x, y = _binary_samples(n // 2, dtype, 5)
    _check_binary(op, x.astype(np.float64), y.astype(np.float64), fmt,
                  modes=MODES if fmt == "float64" else (R.NEAREST_EVEN, R.TOWARD_POSITIVE))
    if fmt == "float32":  # the kernel once, every mode
        vals = oracle.exacts(op, x, y)
        ex = evaluate(function(op), x.astype(np.float64), y.astype(np.float64), bits=24)
        for mode in MODES:
            assert_same(ex.round(er.dtype(fmt), mode, "ieee")[0],
                        oracle.round_exact(vals, er.dtype(fmt), mode),
                        lambda k: (x[k], y[k]), f"{op} kernel, {mode.value}")


# ------------------------------------------------------------------ the hardest cases
#: Per function and 16-bit format, from ``functions_oracle.hardest(name, fmt)`` (an exhaustive
#: search): the input nearest a rounding boundary in the function's asymptotic regime (where
#: the value is within 2**-24 ulps of x, 1 or 0), then the three nearest outside it, with their
#: distances in ulps of the format. Re-derived by ``test_the_pinned_cases_are_the_hardest``.
HARDEST = {
    "exp:bfloat16": [
        ("-0x1.3800000000000p+9", 1.29e-231), ("0x1.0000000000000p-31", 5.96e-08),
        ("-0x1.0200000000000p-32", 6.01e-08), ("0x1.0200000000000p-31", 6.01e-08),
    ],
    "exp2:bfloat16": [
        ("-0x1.0c00000000000p+7", 0.0), ("-0x1.3a00000000000p+7", 5.96e-08),
        ("-0x1.7200000000000p-32", 5.97e-08), ("0x1.7200000000000p-31", 5.97e-08),
    ],
    "expm1:bfloat16": [
        ("-0x1.bc00000000000p+5", 2.07e-25), ("0x1.0000000000000p-30", 5.96e-08),
        ("-0x1.6c00000000000p-31", 6.03e-08), ("0x1.6c00000000000p-31", 6.03e-08),
    ],
    "log:bfloat16": [
        ("0x1.ee00000000000p-50", 3.82e-06), ("0x1.d800000000000p-53", 3.89e-06),
        ("0x1.4600000000000p+7", 6.43e-06),
    ],
    "log2:bfloat16": [
        ("0x1.4c00000000000p-64", 0.000158), ("0x1.4c00000000000p-63", 0.000158),
        ("0x1.4c00000000000p-62", 0.000158),
    ],
    "log10:bfloat16": [
        ("0x1.3200000000000p+34", 2.1e-05), ("0x1.e200000000000p+73", 2.59e-05),
        ("0x1.9200000000000p+13", 3.3e-05),
    ],
    "log1p:bfloat16": [
        ("0x1.0000000000000p-133", 1.08e-19), ("-0x1.0000000000000p-30", 5.96e-08),
        ("0x1.6c00000000000p-31", 6.03e-08), ("-0x1.6c00000000000p-31", 6.03e-08),
    ],
    "sin:bfloat16": [
        ("0x1.0000000000000p-133", 1.08e-19), ("0x1.7200000000000p-15", 6e-08),
        ("-0x1.7200000000000p-15", 6e-08), ("0x1.7400000000000p-15", 6.1e-08),
    ],
    "cos:bfloat16": [
        ("0x1.0000000000000p-133", 1.39e-17), ("0x1.6c00000000000p-16", 6.03e-08),
        ("-0x1.6c00000000000p-16", 6.03e-08), ("0x1.6e00000000000p-16", 6.09e-08),
    ],
    "tan:bfloat16": [
        ("0x1.0000000000000p-133", 2.17e-19), ("0x1.d200000000000p-16", 5.99e-08),
        ("-0x1.d200000000000p-16", 5.99e-08), ("0x1.2600000000000p-15", 6.02e-08),
    ],
    "sinh:bfloat16": [
        ("0x1.0000000000000p-133", 2.17e-19), ("0x1.7200000000000p-15", 6e-08),
        ("-0x1.7200000000000p-15", 6e-08), ("0x1.7400000000000p-15", 6.1e-08),
    ],
    "cosh:bfloat16": [
        ("0x1.0000000000000p-133", 2.78e-17), ("0x1.0000000000000p-15", 5.96e-08),
        ("-0x1.0000000000000p-15", 5.96e-08), ("0x1.0200000000000p-15", 6.05e-08),
    ],
    "tanh:bfloat16": [
        ("0x1.c200000000000p+4", 1.03e-25), ("0x1.d200000000000p-16", 5.99e-08),
        ("-0x1.d200000000000p-16", 5.99e-08), ("0x1.2600000000000p-15", 6.02e-08),
    ],
    "asin:bfloat16": [
        ("0x1.0000000000000p-133", 2.17e-19), ("0x1.7200000000000p-15", 6e-08),
        ("-0x1.7200000000000p-15", 6e-08), ("0x1.7400000000000p-15", 6.1e-08),
    ],
    "acos:bfloat16": [
        ("-0x1.f800000000000p-6", 5.11e-05), ("0x1.fc00000000000p-12", 8.19e-05),
        ("-0x1.b800000000000p-6", 0.000157),
    ],
    "atan:bfloat16": [
        ("0x1.0000000000000p-133", 1.08e-19), ("0x1.d200000000000p-16", 5.99e-08),
        ("-0x1.d200000000000p-16", 5.99e-08), ("0x1.2600000000000p-15", 6.02e-08),
    ],
    "erf:bfloat16": [
        ("0x1.d200000000000p+2", 1.03e-25), ("0x1.1e00000000000p+2", 6.71e-08),
        ("-0x1.1e00000000000p+2", 6.71e-08), ("0x1.1c00000000000p+2", 8.92e-08),
    ],
    "erfc:bfloat16": [
        ("0x1.9000000000000p+4", 1.29e-231), ("0x1.c600000000000p-33", 5.96e-08),
        ("-0x1.c600000000000p-32", 5.96e-08), ("0x1.c800000000000p-33", 5.99e-08),
    ],
    "sigmoid:bfloat16": [
        ("-0x1.3800000000000p+9", 1.29e-231), ("0x1.0200000000000p-30", 6.01e-08),
        ("-0x1.0200000000000p-31", 6.01e-08), ("0x1.0400000000000p-30", 6.05e-08),
    ],
    "silu:bfloat16": [
        ("-0x1.3c00000000000p+9", 1.29e-231), ("0x1.6c00000000000p-31", 6.03e-08),
        ("-0x1.6c00000000000p-31", 6.03e-08), ("0x1.0200000000000p-30", 6.05e-08),
    ],
    "gelu:bfloat16": [
        ("-0x1.1c00000000000p+5", 1.29e-231), ("0x1.9600000000000p-32", 5.98e-08),
        ("-0x1.9600000000000p-32", 5.98e-08), ("0x1.2000000000000p-31", 6.02e-08),
    ],
    "gelu_tanh:bfloat16": [
        ("-0x1.4600000000000p+4", 1.29e-231), ("0x1.9600000000000p-32", 5.98e-08),
        ("-0x1.9600000000000p-32", 5.98e-08), ("0x1.2000000000000p-31", 6.02e-08),
    ],
    "mish:bfloat16": [
        ("-0x1.3c00000000000p+9", 1.29e-231), ("-0x1.4000000000000p-31", 5.96e-08),
        ("0x1.6800000000000p+3", 6.09e-08), ("0x1.cc00000000000p-31", 6.16e-08),
    ],
    "softplus:bfloat16": [
        ("-0x1.3800000000000p+9", 1.29e-231), ("0x1.2a00000000000p+4", 6.52e-08),
        ("0x1.2800000000000p+4", 7.39e-08), ("-0x1.b200000000000p+6", 8.24e-08),
    ],
    "logit:bfloat16": [
        ("0x1.ca00000000000p-20", 2.65e-06), ("0x1.ee00000000000p-50", 3.82e-06),
        ("0x1.d800000000000p-53", 3.89e-06),
    ],
    "exp:float16": [
        ("-0x1.3800000000000p+9", 1.98e-264), ("-0x1.0a00000000000p+5", 6.09e-08),
        ("-0x1.09c0000000000p+5", 6.28e-08), ("-0x1.0980000000000p+5", 6.48e-08),
    ],
    "exp2:float16": [
        ("-0x1.9000000000000p+4", 0.0), ("-0x1.8000000000000p+5", 5.96e-08),
        ("-0x1.7fc0000000000p+5", 6.09e-08), ("-0x1.7f80000000000p+5", 6.22e-08),
    ],
    "expm1:float16": [
        ("-0x1.bbc0000000000p+5", 1.65e-24), ("-0x1.8400000000000p+4", 6.02e-08),
        ("-0x1.83c0000000000p+4", 6.12e-08), ("-0x1.8380000000000p+4", 6.21e-08),
    ],
    "log:float16": [
        ("0x1.d500000000000p+9", 1.31e-05), ("0x1.17c0000000000p-3", 1.77e-05),
        ("0x1.4c40000000000p+1", 2.42e-05),
    ],
    "log2:float16": [
        ("0x1.2240000000000p-2", 8.9e-05), ("0x1.2240000000000p+1", 8.9e-05),
        ("0x1.a8c0000000000p-14", 0.000178),
    ],
    "log10:float16": [
        ("0x1.f840000000000p+6", 1.12e-05), ("0x1.e3c0000000000p-3", 2.07e-05),
        ("0x1.fe00000000000p-3", 2.17e-05),
    ],
    "log1p:float16": [
        ("0x1.0000000000000p-24", 2.98e-08), ("0x1.0000000000000p-23", 1.19e-07),
        ("-0x1.0000000000000p-23", 1.19e-07), ("0x1.8000000000000p-23", 2.68e-07),
    ],
    "sin:float16": [
        ("0x1.0000000000000p-24", 5.92e-16), ("0x1.d200000000000p-16", 5.99e-08),
        ("-0x1.d200000000000p-16", 5.99e-08), ("0x1.d300000000000p-16", 6.03e-08),
    ],
    "cos:float16": [
        ("0x1.0000000000000p-24", 3.64e-12), ("0x1.0200000000000p-17", 6.05e-08),
        ("-0x1.0200000000000p-17", 6.05e-08), ("0x1.0400000000000p-17", 6.15e-08),
    ],
    "tan:float16": [
        ("0x1.0000000000000p-24", 1.18e-15), ("0x1.7200000000000p-16", 6e-08),
        ("-0x1.7200000000000p-16", 6e-08), ("0x1.7300000000000p-16", 6.05e-08),
    ],
    "sinh:float16": [
        ("0x1.0000000000000p-24", 5.92e-16), ("0x1.d200000000000p-16", 5.99e-08),
        ("-0x1.d200000000000p-16", 5.99e-08), ("0x1.d300000000000p-16", 6.03e-08),
    ],
    "cosh:float16": [
        ("0x1.0000000000000p-24", 1.82e-12), ("0x1.6c00000000000p-17", 6.03e-08),
        ("-0x1.6c00000000000p-17", 6.03e-08), ("0x1.6e00000000000p-17", 6.09e-08),
    ],
    "tanh:float16": [
        ("0x1.c140000000000p+4", 8.27e-25), ("0x1.8f40000000000p+3", 5.96e-08),
        ("-0x1.8f40000000000p+3", 5.96e-08), ("0x1.7200000000000p-16", 6e-08),
    ],
    "asin:float16": [
        ("0x1.0000000000000p-24", 5.92e-16), ("0x1.d200000000000p-16", 5.99e-08),
        ("-0x1.d200000000000p-16", 5.99e-08), ("0x1.d300000000000p-16", 6.03e-08),
    ],
    "acos:float16": [
        ("-0x1.2bc0000000000p-4", 1.19e-05), ("-0x1.2c00000000000p-18", 1.63e-05),
        ("-0x1.1d00000000000p-1", 2.09e-05),
    ],
    "atan:float16": [
        ("0x1.0000000000000p-24", 1.18e-15), ("0x1.7200000000000p-16", 6e-08),
        ("-0x1.7200000000000p-16", 6e-08), ("0x1.7300000000000p-16", 6.05e-08),
    ],
    "erf:float16": [
        ("0x1.d180000000000p+2", 8.27e-25), ("0x1.2cc0000000000p+2", 6.18e-08),
        ("-0x1.2cc0000000000p+2", 6.18e-08), ("0x1.2c80000000000p+2", 6.42e-08),
    ],
    "erfc:float16": [
        ("0x1.8e80000000000p+4", 1.98e-264), ("-0x1.2840000000000p+2", 6.04e-08),
        ("0x1.6400000000000p+2", 6.12e-08), ("-0x1.2800000000000p+2", 6.27e-08),
    ],
    "sigmoid:float16": [
        ("-0x1.3800000000000p+9", 1.98e-264), ("0x1.8400000000000p+4", 6.02e-08),
        ("-0x1.0a00000000000p+5", 6.09e-08), ("0x1.83c0000000000p+4", 6.12e-08),
    ],
    "silu:float16": [
        ("-0x1.3b40000000000p+9", 1.98e-264), ("0x1.7f80000000000p+4", 5.97e-08),
        ("-0x1.2700000000000p+5", 5.98e-08), ("0x1.7f40000000000p+4", 6.07e-08),
    ],
    "gelu:float16": [
        ("-0x1.1a80000000000p+5", 1.98e-264), ("0x1.a100000000000p+2", 6.04e-08),
        ("-0x1.0140000000000p+3", 6.1e-08), ("0x1.a0c0000000000p+2", 6.19e-08),
    ],
    "gelu_tanh:float16": [
        ("-0x1.4480000000000p+4", 1.98e-264), ("0x1.78c0000000000p+2", 5.98e-08),
        ("-0x1.bd80000000000p+2", 6.18e-08), ("0x1.7880000000000p+2", 6.19e-08),
    ],
    "mish:float16": [
        ("-0x1.3b40000000000p+9", 1.98e-264), ("-0x1.2700000000000p+5", 5.98e-08),
        ("0x1.8b00000000000p+3", 6e-08), ("0x1.8ac0000000000p+3", 6.09e-08),
    ],
    "softplus:float16": [
        ("-0x1.3800000000000p+9", 1.98e-264), ("-0x1.0a00000000000p+5", 6.09e-08),
        ("-0x1.09c0000000000p+5", 6.28e-08), ("-0x1.0980000000000p+5", 6.48e-08),
    ],
    "logit:float16": [
        ("0x1.2140000000000p-11", 2.22e-05), ("0x1.5d00000000000p-5", 4.28e-05),
        ("0x1.6ac0000000000p-11", 5.54e-05),
    ],
}


def _hard_params():
    out = []
    for key, cases in HARDEST.items():
        fid, fmt = key.split(":")
        for xhex, dist in cases:
            out.append(pytest.param(fid, fmt, xhex, dist, id=f"{fid}-{fmt}-{xhex}"))
    return out


@pytest.mark.parametrize("fid,fmt,xhex,dist", _hard_params())
def test_hardest_cases(fid, fmt, xhex, dist):
    """The op in the format to nearest; the kernel's values at 53 bits into the format and
    into float32, in every mode."""
    fn = BY_ID[fid]
    x = np.array([float.fromhex(xhex)])
    vals = oracle.exacts(fn.oname, x, **fn.oparams)
    F = er.dtype(fmt)
    assert_same(fn.rounded(x, F, R.NEAREST_EVEN), oracle.round_exact(vals, F, R.NEAREST_EVEN),
                x, f"{fid} of {fmt}")
    ex = evaluate(function(fn.kernel), x, params=fn.kparams)
    for name in (fmt, "float32"):
        F = er.dtype(name)
        for mode in MODES:
            assert_same(ex.round(F, mode, "ieee")[0], oracle.round_exact(vals, F, mode), x,
                        f"{fid} at 53 bits into {name}, {mode.value}")


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(HARDEST) or ["none"])
def test_the_pinned_cases_are_the_hardest(key):
    if key == "none":
        pytest.skip("no pinned cases")
    fid, fmt = key.split(":")
    fn = BY_ID[fid]
    found = oracle.hardest(fn.oname, fmt, 3, **fn.oparams)
    assert [x.hex() for x, _ in found] == [x for x, _ in HARDEST[key]]


# ------------------------------------------------------------------ the oracle itself
def test_the_oracles_float32_rounding_is_mpfrs():
    """``functions_oracle.round_float32`` (vectorized) against MPFR, value by value."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-45, 39, 300),
                        [3.4028235677973366e38, 3.4028235e38 * 1.0000001, 1e-45, 7e-46,
                         1.401298464324817e-45 * 1.5, -2.0**-149 * 0.5]])
    from fractions import Fraction

    vals = [Fraction(float(v)) + Fraction(float(v)) / 2**60 for v in x]
    vals += [Fraction(float(np.float32(v))) for v in x[:50] if np.float32(v) != 0]  # exact
    a, sticky = oracle.encode(vals)
    f32 = er.dtype("float32")
    for mode in MODES:
        got = oracle.round_float32(a, sticky, mode)
        want = np.array([rnd_mpfr(v, f32, mode) for v in vals])
        assert_same(got, want, vals, f"float32 rounding {mode.value}")
