"""Integer division and remainders, integer true division, and comparisons across formats,
against Python's exact integer and rational arithmetic.

* ``divide(rounding_mode="floor" | "trunc")``, ``floor_divide``, ``remainder`` (the divisor's
  sign, Python's ``%``) and ``fmod`` (the dividend's sign, C's) of every integer format, int8 to
  int64 and uint8 to uint64 (and the sub-byte ones): every pair of edge values (``int_min``,
  ``int_min + 1``, -1, 0, 1, ``int_max``...) and random ones, every pair of int8 and uint8;
  under the overflow rules wrap, saturate and error (``int_min // -1`` is the one quotient that
  leaves the format); ``dtype=`` a narrower integer format; division by zero raises
  ZeroDivisionError naming the element.
* integer true division: float32 (the torch policy's default float), each operand first rounded
  once to float32 (as PyTorch converts it), then the quotient rounded once, in every mode.
* the six comparisons between formats compared as given (no promotion cast): int64 against
  float32 and float64, uint64 against float64, int32 against float16... around ``2**24``,
  ``2**53``, ``2**63`` and ``2**64``, with NaN, ±0 and ±inf; complex equality.
"""

from __future__ import annotations

import itertools
import math
import zlib

import family_oracle as F
import numpy as np
import pytest

import exactref as er
from exactref._formats import FORMATS

R = er.Rounding
MODES = list(R)
INTS = [f for f in FORMATS.values() if f.kind in ("int", "uint")]
RULES = ["wrap", "saturate", "error"]


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _values(fmt, n_random=24):
    lo, hi = fmt.int_min, fmt.int_max
    edges = {lo, lo + 1, lo + 2, -1, 0, 1, 2, 3, 7, hi // 2, hi // 2 + 1, hi - 1, hi, -(hi // 3),
             lo // 2, 2**31 - 1, 2**31, -(2**31), 2**53 + 1, -(2**53) - 1, 2**32 + 7}
    rng = np.random.default_rng(_seed(fmt.name))
    edges |= {int(rng.integers(lo, hi, endpoint=True, dtype=np.int64 if hi < 2**63 else
                               np.uint64)) for _ in range(n_random)}
    return sorted(v for v in edges if lo <= v <= hi)


def _array(values, fmt):
    data = np.array(values, dtype=np.int64 if fmt.bits < 64 or fmt.kind == "int" else np.uint64)
    return er.asarray(data if fmt.bits >= 8 else data, fmt)


def _floor(a, b):
    return a // b


def _trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _mod(a, b):
    return a % b


def _fmod(a, b):
    return a - b * _trunc(a, b)


OPS = {
    "divide_floor": (lambda x, y, **kw: er.divide(x, y, rounding_mode="floor", **kw), _floor),
    "divide_trunc": (lambda x, y, **kw: er.divide(x, y, rounding_mode="trunc", **kw), _trunc),
    "floor_divide": (er.floor_divide, _floor),
    "remainder": (er.remainder, _mod),
    "fmod": (er.fmod, _fmod),
}


def _pairs(fmt):
    if fmt.bits <= 8:  # every pair
        vals = list(range(fmt.int_min, fmt.int_max + 1))
    else:
        vals = _values(fmt)
    pairs = [(a, b) for a, b in itertools.product(vals, vals) if b != 0]
    return [a for a, _ in pairs], [b for _, b in pairs]


def _expect(values, fmt, rule):
    """Exact integers into ``fmt`` by ``rule``: a list, or None where ``error`` raises."""
    out = F.int_overflow(values, fmt, rule)
    return None if any(v is None for v in out) else out


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("fmt", INTS, ids=lambda f: f.name)
def test_integer_division(fmt, op, rule):
    x, y = _pairs(fmt)
    er_fn, fn = OPS[op]
    exact = [fn(a, b) for a, b in zip(x, y, strict=True)]
    want = _expect(exact, fmt, rule)
    xa, ya = _array(x, fmt), _array(y, fmt)
    if want is None:
        with pytest.raises(OverflowError, match="outside"):
            er_fn(xa, ya, overflow=rule)
        return
    got = er_fn(xa, ya, overflow=rule).rounded
    assert got.dtype is fmt
    g = [int(v) for v in got._wide().tolist()]
    bad = [k for k in range(len(x)) if g[k] != want[k]]
    assert not bad, [(op, x[k], y[k], g[k], want[k]) for k in bad[:8]]
    # integers are exact: the tolerance is 0 and the mode plays no part
    assert er_fn(xa, ya, overflow=rule, rounding=R.TOWARD_POSITIVE).rounded._wide().tolist() == \
        got._wide().tolist()


@pytest.mark.parametrize("fmt", [f for f in INTS if f.kind == "int"], ids=lambda f: f.name)
def test_int_min_over_minus_one(fmt):
    """The one integer quotient that overflows: ``int_min / -1 = int_max + 1`` (wraps to
    int_min, saturates to int_max, or raises naming the element); its remainder is 0."""
    x, y = _array([fmt.int_min, fmt.int_max], fmt), _array([-1, -1], fmt)
    for op in ("divide_floor", "divide_trunc", "floor_divide"):
        er_fn = OPS[op][0]
        assert er_fn(x, y).rounded._wide().tolist() == [fmt.int_min, -fmt.int_max]
        assert er_fn(x, y, overflow="saturate").rounded._wide().tolist() == [fmt.int_max,
                                                                            -fmt.int_max]
        with pytest.raises(OverflowError, match=r"element \(0,\)"):
            er_fn(x, y, overflow="error")
    assert er.remainder(x, y, overflow="error").rounded._wide().tolist() == [0, 0]
    assert er.fmod(x, y, overflow="error").rounded._wide().tolist() == [0, 0]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("fmt", [FORMATS[n] for n in ("int8", "uint16", "int64", "uint64")],
                         ids=lambda f: f.name)
def test_integer_division_by_zero(fmt, op):
    """An integer division by zero raises ZeroDivisionError naming the (first) element."""
    er_fn = OPS[op][0]
    x, y = _array([[7, 1], [2, 3]], fmt), _array([[1, 2], [0, 0]], fmt)
    with pytest.raises(ZeroDivisionError, match=r"element \(1, 0\).*2 elements"):
        er_fn(x, y)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("src,dst", [("int16", "int8"), ("int64", "int16"), ("uint64", "uint8"),
                                     ("int32", "uint8")])
def test_integer_division_narrower_dtype(src, dst, op, rule):
    """``dtype=`` a narrower integer format: the exact integer result wrapped, saturated or
    refused there."""
    s, d = FORMATS[src], FORMATS[dst]
    vals = _values(s, 8)
    x = [a for a in vals for _ in vals]
    y = [b for _ in vals for b in vals]
    keep = [k for k in range(len(x)) if y[k] != 0]
    x, y = [x[k] for k in keep], [y[k] for k in keep]
    er_fn, fn = OPS[op]
    want = _expect([fn(a, b) for a, b in zip(x, y, strict=True)], d, rule)
    xa, ya = _array(x, s), _array(y, s)
    try:
        res = er_fn(xa, ya, dtype=d, overflow=rule)
    except ValueError as e:  # a dtype the op refuses must say why
        pytest.fail(f"dtype={dst} refused: {e}")
    except OverflowError:
        assert want is None
        return
    assert want is not None
    assert res.rounded.dtype is d
    assert [int(v) for v in res.rounded._wide().tolist()] == want


# ------------------------------------------------------------------- integer true division
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", [FORMATS[n] for n in ("int8", "int32", "int64", "uint64")],
                         ids=lambda f: f.name)
def test_integer_true_division(fmt, mode):
    """Integers divide into float32: each operand rounded to nearest-even into float32 first
    (2**24 + 1 becomes 2**24), then the quotient rounded once in the mode; x / 0 is a signed
    infinity (0 / 0 NaN), as float division."""
    vals = _values(fmt, 10)
    x = [a for a in vals for _ in vals]
    y = [b for _ in vals for b in vals]
    f32 = FORMATS["float32"]
    got = er.divide(_array(x, fmt), _array(y, fmt), rounding=mode).rounded
    assert got.dtype is f32
    want = []
    for a, b in zip(x, y, strict=True):
        a32 = F.rnd_one(F.ex(a), f32, R.NEAREST_EVEN)
        b32 = F.rnd_one(F.ex(b), f32, R.NEAREST_EVEN)
        want.append(F.rnd_one(F.divide(a32, b32), f32, mode))
    F.assert_same(got._wide().astype(np.float64), np.array(want), list(zip(x, y, strict=True)),
                  f"divide {fmt.name} -> float32, {mode.value}")


# ----------------------------------------------------------------------------- comparisons
def _edge_values(fmt):
    """Values of a format around the integers where float formats lose precision."""
    if fmt.kind in ("int", "uint"):
        cands = [0, 1, -1, 2**24, 2**24 + 1, 2**24 - 1, 2**53, 2**53 + 1, 2**53 - 1, 2**63 - 1,
                 -(2**63), 2**63, 2**64 - 1, 2**31, 65504, 65505, 3, -(2**24) - 1, 255, 256,
                 -128, 127, 448, 449]
        return sorted(v for v in set(cands) if fmt.int_min <= v <= fmt.int_max)
    f = fmt.component
    cands = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.0**24, 2.0**24 + 2,
             2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, -(2.0**63), 0.5, 2.5, 65504.0, 65536.0,
             -(2.0**24), 1.7e38, 256.0, 448.0, 3.0, 2.0**31, 1.0 + 2.0**-20]
    out = []
    for v in cands:
        if math.isnan(v):
            if f.has_nan:
                out.append(v)
            continue
        if not f.has_inf and math.isinf(v):
            continue
        with np.errstate(over="ignore"):
            w = float(np.array([v]).astype(f.np_dtype).astype(np.float64)[0])
        if w == v or (w != w and v != v):
            out.append(v)
    return out


PAIRS = [("int64", "float32"), ("int64", "float64"), ("uint64", "float64"), ("uint64", "float32"),
         ("int32", "float16"), ("int16", "bfloat16"), ("uint8", "float16"), ("int64", "int64"),
         ("int16", "int64"), ("float32", "float64"), ("float16", "bfloat16"),
         ("int8", "float16"), ("bool", "float32"), ("float64", "float64")]


def _arr(values, fmt):
    if fmt.kind == "bool":
        return er.asarray(np.array(values, dtype=bool), fmt)
    if fmt.kind in ("int", "uint"):
        return er.asarray(np.array(values, dtype=fmt.np_dtype), fmt)
    return er.asarray(np.array(values, dtype=np.float64), fmt)


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_comparisons_across_formats(a, b):
    """Every pair of edge values, both orders: the exact order of the values as given."""
    fa, fb = FORMATS[a], FORMATS[b]
    va = _edge_values(fa) if fa.kind != "bool" else [False, True]
    vb = _edge_values(fb)
    for (f1, v1), (f2, v2) in (((fa, va), (fb, vb)), ((fb, vb), (fa, va))):
        x = [p for p in v1 for _ in v2]
        y = [q for _ in v1 for q in v2]
        xa, ya = _arr(x, f1), _arr(y, f2)
        orders = [F.compare(p, q) for p, q in zip(x, y, strict=True)]
        for name, test in F.COMPARISONS.items():
            try:
                got = getattr(er, name)(xa, ya).rounded
            except er.PromotionError:  # the policy's own refusals (float8 with others)
                pytest.skip(f"the torch policy refuses {f1.name} with {f2.name}")
            assert got.dtype.name == "bool"
            want = [test(o) for o in orders]
            g = got.numpy().tolist()
            bad = [k for k in range(len(x)) if g[k] != want[k]]
            assert not bad, [(name, f1.name, x[k], f2.name, y[k], g[k]) for k in bad[:8]]


def test_comparison_no_promotion_cast():
    """The documented contrast with PyTorch: 16777217 (int64) is not 16777216.0 (float32), and
    2**63 - 1 (int64) is below 2**63 (float64), though a cast to float would make them equal."""
    x = er.asarray(np.array([2**24 + 1, 2**63 - 1, 2**53 + 1], dtype=np.int64), "int64")
    y32 = er.asarray(np.array([2.0**24, 2.0**63, 2.0**53], dtype=np.float32), "float32")
    y64 = er.asarray(np.array([2.0**24, 2.0**63, 2.0**53]), "float64")
    assert er.equal(x, y32).rounded.tolist() == [False, False, False]
    assert er.greater(x, y32).rounded.tolist() == [True, False, True]
    assert er.less(x, y64).rounded.tolist() == [False, True, False]
    u = er.asarray(np.array([2**64 - 1], dtype=np.uint64), "uint64")
    assert er.less(u, er.asarray([2.0**64], "float64")).rounded.tolist() == [True]
    assert er.not_equal(u, er.asarray([2.0**64], "float32")).rounded.tolist() == [True]


@pytest.mark.parametrize("fmt", [FORMATS["complex64"], FORMATS["complex128"]],
                         ids=lambda f: f.name)
def test_complex_equality(fmt):
    """Complex values are equal when both parts are (NaN in either part: unequal; -0 == +0);
    against a real operand the imaginary part must be zero."""
    parts = [0.0, -0.0, 1.0, math.nan, math.inf, 2.0**-149]
    vals = [(p, q) for p in parts for q in parts]
    n = len(vals)
    x = [vals[i] for i in range(n) for _ in range(n)]
    y = [vals[j] for _ in range(n) for j in range(n)]

    def carr(col):
        out = np.empty(len(col), dtype=fmt.np_dtype)
        out.real = [a for a, _ in col]
        out.imag = [b for _, b in col]
        return er.asarray(out, fmt)

    want_eq = [F.compare(a[0], b[0]) == 0 and F.compare(a[1], b[1]) == 0
               for a, b in zip(x, y, strict=True)]
    assert er.equal(carr(x), carr(y)).rounded.tolist() == want_eq
    assert er.not_equal(carr(x), carr(y)).rounded.tolist() == [not w for w in want_eq]
    real = er.asarray(np.array([a for a, _ in y]), "float64")
    want = [F.compare(a[0], b[0]) == 0 and F.compare(a[1], 0.0) == 0
            for a, b in zip(x, y, strict=True)]
    assert er.equal(carr(x), real).rounded.tolist() == want
