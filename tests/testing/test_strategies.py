"""``exactref.testing.strategies``: every value drawn is a value of its format (checked bit for bit
against ml_dtypes' own casts), the arguments are honoured, and the edge values are reached."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import exactref as er
from exactref.testing import strategies as xst
from exactref.testing.strategies import _Grid

ALL = list(er.FORMATS.values())
FLOATS = [f for f in ALL if f.kind == "float"]
COMPLEX = [f for f in ALL if f.kind == "complex"]
INTEGERS = [f for f in ALL if f.is_integer]
ids = {"ids": lambda f: f.name}

# a few examples, each drawing many values: hypothesis' cost per example dominates
FEW = settings(max_examples=6, derandomize=True)


def _bits(v: float) -> int:
    return int(np.float64(v).view(np.uint64))


def _same(a: float, b: float) -> bool:
    """Bit-equal, or both NaN (a NaN's payload is not a value)."""
    return (math.isnan(a) and math.isnan(b)) or _bits(a) == _bits(b)


def _rank(v: float):
    """hypothesis' order for bounds: -0.0 below 0.0."""
    return (v, math.copysign(1, v))


def _round_trip(values, f):
    """The values cast into ``f`` by numpy/ml_dtypes and back: unchanged for values of ``f``."""
    if f.kind == "complex":
        wide = np.array(values, dtype=np.complex128)
        back = wide.astype(f.np_dtype).astype(np.complex128)
        return [complex(z) for z in back]
    if f.encoding != "native":  # P3109: no numpy dtype; encode raises for a value it lacks
        return f.decode(f.encode(values)).tolist()
    return np.array(values, dtype=np.float64).astype(f.np_dtype).astype(np.float64).tolist()


# ------------------------------------------------------------------------------ exactness
def _key(v: float):
    return "nan" if math.isnan(v) else (v, math.copysign(1, v))


def _edges(f):
    """What ``values(f)`` must reach: zeros, extremes, subnormals, infinities, NaN."""
    comp = f.component
    want = {"max": comp.max_finite, "min normal": comp.smallest_normal}
    if comp.signed:
        want["-max"] = -comp.max_finite
    if comp.has_zero:
        want["0"] = 0.0
    if comp.has_negzero:
        want["-0"] = -0.0
    if comp.precision > 1:
        want["min subnormal"] = comp.smallest_subnormal
        want["max subnormal"] = comp.smallest_normal - comp.smallest_subnormal
    if comp.has_inf:
        want["inf"] = math.inf
        if comp.signed:  # P3109's unsigned extended formats have +inf only
            want["-inf"] = -math.inf
    if comp.has_nan:
        want["nan"] = math.nan
    return want


@pytest.mark.parametrize("f", FLOATS + COMPLEX, **ids)
def test_values_are_exact_and_reach_the_edges(f):
    """Every value drawn survives ml_dtypes' cast into the format and back bit for bit (so the
    format holds it), and 400 draws reach every edge value the format has."""
    seen = set()

    @settings(max_examples=10, derandomize=True)
    @given(st.lists(xst.values(f), min_size=40, max_size=40))
    def check(drawn):
        back = _round_trip(drawn, f)
        for v, w in zip(drawn, back, strict=True):
            assert type(v) is (complex if f.kind == "complex" else float)
            parts = [(v.real, w.real), (v.imag, w.imag)] if f.kind == "complex" else [(v, w)]
            for a, b in parts:
                assert _same(a, b), (v, w)
                seen.add(_key(a))

    check()
    missing = [name for name, v in _edges(f).items() if _key(v) not in seen]
    assert not missing, f"{f.name}: never drew {missing}"


@pytest.mark.parametrize("f", INTEGERS, **ids)
def test_integer_values_are_in_range_and_reach_both_ends(f):
    seen = set()

    @settings(max_examples=6, derandomize=True)
    @given(st.lists(xst.values(f), min_size=30, max_size=30))
    def check(drawn):
        for v in drawn:
            assert type(v) is (bool if f.kind == "bool" else int)
            assert f.int_min <= v <= f.int_max
        cast = np.array(drawn, dtype=object).astype(f.np_dtype).astype(object).tolist()
        assert cast == drawn
        seen.update(drawn)

    check()
    assert {f.int_min, f.int_max, 0} <= seen


@pytest.mark.parametrize("f", [f for f in FLOATS if f.name not in ("float32", "float64")], **ids)
def test_the_index_grid_lists_every_finite_value(f):
    """The signed-index map behind ``values`` is the format's value set, exhaustively: every
    bit pattern of the format (at most 16 bits) decoded by ml_dtypes."""
    if f.encoding != "native":  # P3109: every code decoded by the report's rules
        wide = f.decode(np.arange(2**f.bits))
    elif f.bits >= 8:
        codes = np.arange(2**f.bits, dtype=np.uint16 if f.bits > 8 else np.uint8)
        with np.errstate(invalid="ignore"):
            wide = codes.view(f.np_dtype).astype(np.float64)
    else:  # float6/float4 take a byte per value: every value is a cast of a multiple of the
        # smallest subnormal's half, up to past the largest value
        step = f.smallest_subnormal / 2
        wide = np.arange(-2 * f.max_finite, 2 * f.max_finite + step, step)
        wide = wide.astype(f.np_dtype).astype(np.float64)
    positive = sorted({float(v) for v in wide if np.isfinite(v) and v >= 0})
    grid = _Grid(f)
    first = 0 if f.has_zero else 1
    assert [grid.value(k) for k in range(first, grid.top + 1)] == positive
    assert grid.value(grid.top) == f.max_finite


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_the_index_grid_of_wide_formats_steps_one_ulp(name):
    f = er.dtype(name)
    grid = _Grid(f)
    dt = np.float32 if name == "float32" else np.float64
    ks = [0, 1, 2, grid.h - 1, grid.h, grid.h + 1, 12345678, grid.top - 1, grid.top]
    for k in ks:
        assert grid.value(k + 1 if k < grid.top else k) >= grid.value(k)
        if k < grid.top:
            assert grid.value(k + 1) == float(np.nextafter(dt(grid.value(k)), dt(np.inf)))
    assert grid.value(1) == f.smallest_subnormal and grid.value(grid.h) == f.smallest_normal
    assert grid.value(grid.top) == f.max_finite and grid.floor(1.0) == grid.lower(1.0, False)


# ------------------------------------------------------------------------------ arguments
@pytest.mark.parametrize("f", FLOATS, **ids)
@FEW
@given(data=st.data())
def test_bounds_and_flags_are_honoured(f, data):
    finite = xst.values(f, allow_nan=False, allow_infinity=False)
    a, b = sorted(data.draw(st.tuples(finite, finite)), key=_rank)
    excl_lo, excl_hi = data.draw(st.booleans()), data.draw(st.booleans())
    sub = data.draw(st.sampled_from([None, False] + ([True] if f.precision > 1 else [])))
    try:
        strategy = xst.values(f, min_value=a, max_value=b, exclude_min=excl_lo,
                              exclude_max=excl_hi, allow_subnormal=sub)
        drawn = data.draw(st.lists(strategy, min_size=10, max_size=10))
    except InvalidArgument:  # nothing lies strictly between, or only subnormals do
        return
    for v in drawn:
        assert not math.isnan(v) and not math.isinf(v)
        assert (_rank(a) < _rank(v) if excl_lo else _rank(a) <= _rank(v)), (a, v)
        assert (_rank(v) < _rank(b) if excl_hi else _rank(v) <= _rank(b)), (v, b)
        if sub is False:
            assert v == 0 or abs(v) >= f.smallest_normal
        assert _same(v, _round_trip([v], f)[0])


def test_bounds_the_format_cannot_hold_are_rounded_inward():
    seen = set()

    @settings(max_examples=40, derandomize=True)
    @given(xst.values("float8_e4m3fn", min_value=0.3, max_value=0.7))
    def collect(v):
        seen.add(v)

    collect()
    assert min(seen) == 0.3125 and max(seen) == 0.6875  # 0x1.4p-2 and 0x1.6p-1


def test_zero_bounds_follow_hypothesis_order_of_signed_zeros():
    drawn = []

    @settings(max_examples=30, derandomize=True)
    @given(xst.values("bfloat16", min_value=0.0, max_value=1.0),
           xst.values("bfloat16", min_value=-1.0, max_value=-0.0))
    def collect(nonneg, nonpos):
        drawn.append((nonneg, nonpos))

    collect()
    assert all(math.copysign(1, p) > 0 for p, _ in drawn)
    assert all(math.copysign(1, n) < 0 for _, n in drawn)


def test_formats_without_negative_zero_never_draw_it():
    drawn = []

    @settings(max_examples=30, derandomize=True)
    @given(st.lists(xst.values("float8_e5m2fnuz"), min_size=20, max_size=20))
    def collect(vs):
        drawn.extend(vs)

    collect()
    assert 0.0 in drawn and all(math.copysign(1, v) > 0 for v in drawn if v == 0)


@pytest.mark.parametrize("call, message", [
    (lambda: xst.values("float4_e2m1fn", allow_nan=True), "float4_e2m1fn has no NaN"),
    (lambda: xst.values("float8_e4m3fn", allow_infinity=True), "has no infinity"),
    (lambda: xst.values("float8_e8m0fnu", allow_subnormal=True), "has no subnormal"),
    (lambda: xst.values("bfloat16", min_value=1.0, allow_nan=True), "cannot be combined"),
    (lambda: xst.values("bfloat16", min_value=2.0, max_value=1.0), "greater than"),
    (lambda: xst.values("float8_e4m3fn", min_value=0.3, max_value=0.31), "no float8_e4m3fn"),
    (lambda: xst.values("int8", min_value=200), "no int8 value"),
    (lambda: xst.values("int8", allow_nan=True), "integer format"),
    (lambda: xst.formats("floating"), "expected None or one or more of"),
], ids=["nan", "inf", "subnormal", "nan-bounds", "order", "empty", "int-range", "int-nan",
        "kind"])
def test_invalid_arguments_name_the_problem(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()


# ------------------------------------------------------------------------------ arrays
@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fnuz", "float4_e2m1fn", "complex32",
                                  "int4", "uint64", "bool", "float64"])
@settings(max_examples=8, derandomize=True)
@given(data=st.data())
def test_arrays_hold_exactly_the_values_drawn(name, data):
    f = er.dtype(name)
    v = data.draw(xst.values(f))
    a = data.draw(xst.arrays(f, (2, 3), elements=st.just(v)))
    assert isinstance(a, er.Array) and a.dtype is f and a.shape == (2, 3)
    for w in np.ravel(np.array(a.tolist(), dtype=object)):
        if f.kind == "complex":
            assert _same(w.real, v.real) and _same(w.imag, v.imag)
        elif f.kind == "float":
            assert _same(w, v)
        else:
            assert w == v


@settings(max_examples=10, derandomize=True)
@given(xst.arrays("float8_e5m2", st.tuples(st.integers(0, 3), st.integers(1, 4)),
                  allow_nan=False, allow_infinity=False))
def test_arrays_take_a_shape_strategy_and_value_arguments(a):
    assert a.ndim == 2 and a.dtype.name == "float8_e5m2"
    assert np.isfinite(np.asarray(a.tolist(), dtype=np.float64)).all()


def test_arrays_refuse_elements_with_value_arguments():
    with pytest.raises(InvalidArgument, match="either elements or allow_nan"):
        xst.arrays("bfloat16", 3, elements=st.just(1.0), allow_nan=False)


# ------------------------------------------------------------------------------ formats
@pytest.mark.parametrize("kind, expected", [
    (None, {f.name for f in ALL}),
    ("float", {f.name for f in FLOATS}),
    ("integer", {f.name for f in ALL if f.kind in ("int", "uint")}),
    (("complex", "bool"), {f.name for f in COMPLEX} | {"bool"}),
])
def test_formats_draw_every_format_of_the_kind(kind, expected):
    seen = set()

    @settings(max_examples=150, derandomize=True)
    @given(xst.formats(kind))
    def collect(f):
        seen.add(f.name)

    collect()
    assert seen == expected
