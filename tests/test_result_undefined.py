"""Result.undefined: an exact NaN in a format without NaN (float6, float4) is a per-element
outcome, not a failure of the whole call: the other elements are rounded as ever, ``rounded``
holds the placeholder +0 there, ``covers`` accepts any value there, and the coverage summary
counts those elements (docs/arithmetic.md, "Formats without NaN")."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exactref._exact import Rounding
from exactref._exact._scalar import round_scalar
from exactref._formats import FORMATS

FP4 = "float4_e2m1fn"
NANLESS = ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"]


def _all_values(name):
    """Every value of a small format (by its codes)."""
    fmt = FORMATS[name]
    codes = np.arange(2**fmt.bits, dtype=np.uint8)
    return np.unique(fmt.decode(codes))


def test_zero_by_zero_among_other_elements_in_float4():
    xs = [1.0, 0.0, 3.0, -2.0, 6.0, -0.5]
    ys = [2.0, 0.0, 0.5, 3.0, -4.0, 0.0]
    r = er.divide(er.asarray(xs, FP4), er.asarray(ys, FP4))
    # the others: the oracle's rounding of the exact quotient (x / 0 is a signed infinity,
    # which float4 saturates)
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if i == 1:
            continue
        if y == 0:
            want = -6.0 if (x < 0) != np.signbit(y) else 6.0
        else:
            want = round_scalar(Fraction(x) / Fraction(y), False, FORMATS[FP4],
                                Rounding.NEAREST_EVEN, "saturate")[0]
        assert r.rounded.tolist()[i] == want, i
    assert r.undefined.tolist() == [False, True, False, False, False, False]
    assert r.undefined.dtype == bool and r.undefined.shape == (6,)
    assert r.rounded.tolist()[1] == 0.0 and not np.signbit(r.rounded.tolist()[1])
    good = r.rounded.tolist()
    for v in _all_values(FP4):  # any value is as good as any other there
        got = list(good)
        got[1] = float(v)
        cov = r.covers(np.array(got, np.float32).astype(FORMATS[FP4].np_dtype))
        assert cov.all(), v
    cov = r.covers(good)
    assert cov.undefined.tolist() == r.undefined.tolist()
    assert "no NaN in float4_e2m1fn: 1 element undefined" in cov.summary()
    assert cov.tolerance_stats == (0.0, 0.0)  # over the defined elements
    assert np.isinf(np.asarray(r.tolerance())[1]) and np.isinf(r.tolerance_ulps()[1])
    # the other elements are still checked
    wrong = list(good)
    wrong[0] = 1.0
    cov = r.covers(wrong)
    assert cov.mask.tolist() == [False, True, True, True, True, True]
    assert "1 of 6 elements not covered" in cov.summary()
    assert "1 element undefined" in cov.summary()


@pytest.mark.parametrize("fmt", ["float6_e2m3fn", "float6_e3m2fn"])
def test_sqrt_of_minus_one_in_float6(fmt):
    r = er.sqrt(er.asarray([-1.0, 4.0, 2.0, -0.0], fmt))
    assert r.undefined.tolist() == [True, False, False, False]
    want = round_scalar(Fraction(2), False, FORMATS[fmt], Rounding.NEAREST_EVEN,
                        "saturate")[0]
    assert r.rounded.tolist()[1:] == [2.0, er.asarray([2**0.5], fmt).tolist()[0], -0.0]
    assert r.rounded.tolist()[1] == want
    assert r.covers([7.5 if fmt == "float6_e2m3fn" else 28.0, 2.0,
                     r.rounded.tolist()[2], -0.0]).all()
    assert not r.covers([0.0, 2.0, r.rounded.tolist()[2], 0.0]).all()  # -0 kept its sign


def test_functions_of_nan_from_a_float32_operand():
    """exp(NaN) and log(-1) of float32 operands into float6 (dtype=): the function path."""
    x = np.float32([np.nan, 1.0, -1.0, 0.0])
    r = er.exp(x, dtype="float6_e3m2fn")
    assert r.undefined.tolist() == [True, False, False, False]
    assert r.rounded.tolist()[1:] == er.asarray(np.exp(np.float64([1.0, -1.0, 0.0])),
                                                "float6_e3m2fn").tolist()
    r = er.log(x, dtype="float6_e2m3fn")
    assert r.undefined.tolist() == [True, False, True, False]
    assert r.rounded.tolist()[3] == -7.5  # log(0) = -inf saturates
    assert r.covers([1.0, 0.0, -3.0, -7.5]).all()
    # an accuracy band (not correctly rounded): its ends are undefined there too
    r = er.log(x, dtype="float6_e2m3fn", accuracy=4)
    assert r.undefined.tolist() == [True, False, True, False]


def test_a_small_input_format_takes_the_general_path():
    """log of float6 values (the fast lane's tables) with a NaN result: the lane steps aside
    and the general path marks it."""
    r = er.log(er.asarray([-1.0, 1.0, 0.5], "float6_e2m3fn"))
    assert r.undefined.tolist() == [True, False, False]
    assert r.rounded.tolist()[1:] == [0.0, er.asarray([np.log(0.5)], "float6_e2m3fn").tolist()[0]]


def test_long_sums_and_casts():
    a = np.float32([[np.inf, -np.inf], [1.0, 2.0]])
    b = np.float32([[1.0], [1.0]])
    r = er.matmul(a, b, dtype="float6_e3m2fn")
    assert r.undefined.tolist() == [[True], [False]]
    assert r.rounded.tolist() == [[0.0], [3.0]]
    assert r.covers([[-28.0], [3.0]]).all()
    r = er.sum(a, dim=1, dtype="float6_e3m2fn")
    assert r.undefined.tolist() == [True, False]
    # a modelled implementation's NaN counts too: a float32 accumulator may overflow to
    # inf - inf on this row (the exact sum, 3e38, saturates to 28)
    r = er.matmul(np.float32([[3e38, 3e38, -3e38]]), np.float32([[1.0], [1.0], [1.0]]),
                  dtype="float6_e3m2fn")
    assert r.rounded.tolist() == [[28.0]] and r.undefined.tolist() == [[True]]
    assert "NaN, exact or modelled" in r.covers([[0.0]]).summary()
    r = er.var(er.asarray([[1.0], [2.0]], "float6_e3m2fn"), dim=1, correction=1)  # 0 / 0
    assert r.undefined.tolist() == [True, True]
    r = er.cast(np.float32([np.nan, 1.5, -np.nan]), FP4)
    assert r.undefined.tolist() == [True, False, True]
    assert r.rounded.codes().tolist() == [0, 3, 0]  # +0, whatever the NaN's sign
    assert "2 elements undefined" in r.covers([1.0, 1.5, -6.0]).summary()


def test_inf_minus_inf_in_add():
    r = er.add(np.float32([np.inf, 1.0]), np.float32([-np.inf, 2.0]), dtype=FP4)
    assert r.undefined.tolist() == [True, False]
    assert r.rounded.tolist() == [0.0, 3.0]


def test_formats_with_nan_have_no_undefined_elements():
    for fmt in ("float8_e4m3fn", "float16", "float8_e8m0fnu", "bfloat16"):
        r = er.divide(np.float32([0.0, 1.0]), np.float32([0.0, 2.0]), dtype=fmt)
        assert not r.undefined.any(), fmt
        assert np.isnan(r.rounded.tolist()[0])
        assert not r.covers([1.0, 0.5]).mask[0]  # NaN is the result there: a value is wrong
    r = er.add(np.int8([1, 2]), np.int8([3, 4]))
    assert r.undefined.tolist() == [False, False]
    r = er.add(np.complex64([np.nan]), np.complex64([1.0]))
    assert r.undefined.tolist() == [False]


def test_comparative_and_any_of_and_stochastic():
    x, y = er.asarray([0.0, 3.0], FP4), er.asarray([0.0, 2.0], FP4)
    r = er.divide(x, y)
    cov = r.covers([4.0, 1.5], baseline=[-6.0, 1.5])
    assert cov.all() and cov.undefined.tolist() == [True, False]
    both = er.any_of(r, er.divide(x, y, rounding="toward_zero"))
    assert both.undefined.tolist() == [True, False]
    cov = both.covers([4.0, 1.5])
    assert cov.all() and "1 element undefined" in cov.summary()
    s = er.divide(x, y, rounding="stochastic", random_bits=np.uint32([7, 9]))
    assert s.undefined.tolist() == [True, False]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert s.covers([2.0, 1.5]).all()


@pytest.mark.parametrize("fmt", NANLESS)
def test_undefined_is_read_only(fmt):
    r = er.sqrt(er.asarray([-1.0], fmt))
    with pytest.raises(ValueError):
        r.undefined[0] = False


def test_assert_covers_with_slack_keeps_the_undefined_mask():
    """assert_covers(ulps=...) rebuilds the Coverage with its slack: the undefined elements
    stay marked (and covered)."""
    from exactref.testing import _with_slack, assert_covers

    r = er.divide(er.asarray([1.0, 0.0], FP4), er.asarray([2.0, 0.0], FP4))
    assert_covers([0.5, 3.0], r, ulps=1)
    cov = _with_slack(r.covers([0.5, 3.0]), r, [0.5, 3.0], (1.0, 0.0, 0.0))
    assert cov.undefined.tolist() == [False, True] and cov.all()
    assert "1 element undefined" in cov.summary()
