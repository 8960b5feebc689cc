"""Formats without NaN (float6_e2m3fn, float6_e3m2fn, float4_e2m1fn): an exact NaN is an
undefined element, marked by NaN in every rounding path's float64 values, never an error of the
whole call (_exact/_specials.py, the one place; docs/arithmetic.md, "Formats without NaN")."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from exactref._exact import ExactArray, ExactPart, Rounding, sum_of_products
from exactref._exact._round import round_float64
from exactref._exact._scalar import NAN, round_scalar
from exactref._exact._specials import (
    UNDEFINED_PLACEHOLDER,
    fill_undefined,
    special_values,
    undefined,
)
from exactref._formats import FORMATS

NANLESS = [f for f in FORMATS.values() if f.kind == "float" and not f.has_nan]
RULES = ("ieee", "saturate")  # overflow="nan" is refused in these formats


def test_the_formats_without_nan_are_the_float6_and_float4_ones():
    assert sorted(f.name for f in NANLESS) == ["float4_e2m1fn", "float6_e2m3fn",
                                               "float6_e3m2fn"]


@pytest.mark.parametrize("fmt", NANLESS, ids=lambda f: f.name)
@pytest.mark.parametrize("rule", RULES)
def test_special_values_mark_nan_undefined(fmt, rule):
    v = special_values(np.array([np.nan, -np.nan, np.inf, -np.inf]), fmt, rule)
    assert np.isnan(v[:2]).all()
    assert v[2:].tolist() == [fmt.max_finite, -fmt.max_finite]  # no infinity: saturates
    assert undefined(v, fmt).tolist() == [True, True, False, False]
    filled = fill_undefined(v, fmt)
    assert filled[:2].tolist() == [UNDEFINED_PLACEHOLDER] * 2
    assert not np.signbit(filled[:2]).any()  # +0, whatever the NaN's sign


def test_undefined_is_false_in_formats_with_nan():
    for fmt in FORMATS.values():
        if fmt.kind in ("float", "complex") and fmt.component.has_nan:
            assert not undefined(np.array([np.nan, 1.0]), fmt).any(), fmt.name
    assert not undefined(np.array([1, 2]), FORMATS["int8"]).any()


def _mixed(values):
    """An ExactArray of Fractions and NaN markers (the slow path's elements)."""
    return ExactArray.of_values((len(values),), values)


VALUES = [Fraction(1, 3), NAN, Fraction(-7), Fraction(0), Fraction(5, 2), NAN,
          Fraction(3, 1024)]


@pytest.mark.parametrize("fmt", NANLESS, ids=lambda f: f.name)
@pytest.mark.parametrize("mode", list(Rounding), ids=lambda m: m.value)
@pytest.mark.parametrize("rule", RULES)
def test_every_rounding_path_marks_nan_and_rounds_the_rest(fmt, mode, rule):
    """The engine's general path (hard elements: round_scalar, specials: special_values), its
    regular elements (round_regular), the float64 fast path (round_float64) and the scalar
    oracle agree: NaN where the exact value is NaN, the oracle's rounding elsewhere."""
    want = [round_scalar(v, False, fmt, mode, rule)[0] for v in VALUES]
    nan = [v is NAN for v in VALUES]
    assert [w != w for w in want] == nan  # the oracle itself marks them
    got_slow = _mixed(VALUES).round(fmt, mode, rule)[0]
    # the same values as float64 operands: no hard elements, the fast path where eligible
    x = np.array([np.nan if v is NAN else float(v) for v in VALUES])
    ex = sum_of_products([(ExactPart.from_float64(x),)], x.shape)
    got_engine = ex.round(fmt, mode, rule)[0]
    got_fast = round_float64(x, fmt, mode, rule)[0]
    for got in (got_slow, got_engine, got_fast):
        assert np.isnan(got).tolist() == nan
        keep = ~np.array(nan)
        assert np.asarray(got)[keep].tolist() == np.asarray(want)[keep].tolist()
        assert undefined(got, fmt).tolist() == nan


def test_round_regular_elements_beside_nan_markers():
    """A hard element forces the general path: its regular elements go through round_regular,
    its NaN through special_values, in one call."""
    fmt = FORMATS["float6_e3m2fn"]
    ex = ExactArray.regular((3,), np.array([0.3, 0.0, 17.0]),
                            special=np.array([0.0, np.nan, 0.0]),
                            hard={2: Fraction(10**30)})
    values, inexact, overflow, _ = ex.round(fmt, Rounding.NEAREST_EVEN, "saturate")
    assert np.isnan(values[1])
    assert values[0] == round_scalar(Fraction(0.3), False, fmt, Rounding.NEAREST_EVEN,
                                     "saturate")[0]
    assert values[2] == 28.0 and overflow[2] and not overflow[1] and not inexact[1]
