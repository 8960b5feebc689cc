"""``er.divide(..., divide=)``: a reciprocal-then-multiply division (``x * R(1/y)``, OpenVINO's
float32 Divide, GPU fast paths) is its own model. Simulated in numpy float32 arithmetic (IEEE,
correctly rounded per step) on random and edge inputs: covered under ``"reciprocal"`` and
``"any"``, caught by the default ``"correct"`` where it differs from the correctly rounded
quotient."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import exactref as er

F32 = np.float32


def _operands(n: int = 4000):
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(F32)
    b = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(F32)
    tiny = np.finfo(F32).smallest_subnormal
    edge_b = np.array([tiny, -tiny, 3 * tiny, 2.0**-127, 2.0**-126 * 0.75,  # 1/b overflows
                       2.0**127, 3e38, -3e38,                                 # 1/b subnormal
                       0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, 7.0, 1.0], F32)
    edge_a = np.array([1.0, -1e-30, 5.0, 1e-38, 0.0, 3.0, 1e38, 1.0,
                       1.0, 1.0, 2.0, 0.0, 1.0, 5.0, 1e-45, np.inf], F32)
    return np.concatenate([a, edge_a]), np.concatenate([b, edge_b])


def _reciprocal_multiply(a, b):
    with np.errstate(all="ignore"):
        return a * (F32(1) / b)


def test_a_reciprocal_multiply_divide_is_covered_under_reciprocal_only():
    a, b = _operands()
    actual = _reciprocal_multiply(a, b)
    with np.errstate(all="ignore"):
        differ = ~((actual == a / b) | (np.isnan(actual) & np.isnan(a / b)))
    assert differ.sum() > 500  # about a fifth of random quotients
    for declared in ("reciprocal", "any"):
        cov = er.divide(a, b, divide=declared).covers(actual)
        assert cov.all(), (declared, cov)
    cov = er.divide(a, b).covers(actual)
    np.testing.assert_array_equal(~cov.mask, differ)  # caught exactly where it differs


def test_the_correctly_rounded_quotient_stays_covered_and_the_reference_is_unchanged():
    a, b = _operands()
    with np.errstate(all="ignore"):
        q = a / b
    for declared in ("correct", "reciprocal", "any"):
        r = er.divide(a, b, divide=declared)
        assert r.covers(q).all(), declared
        np.testing.assert_array_equal(r.rounded.numpy(), q)  # bit for bit


def test_half_formats_reciprocal_in_float32_then_stored():
    """bfloat16 operands, computed in float32 (opmath) as ``x * (1/y)``, stored once."""
    a, b = _operands(2000)
    ab, bb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    with np.errstate(all="ignore"):
        actual = _reciprocal_multiply(ab.astype(F32), bb.astype(F32)).astype(
            ml_dtypes.bfloat16)
    assert er.divide(ab, bb, divide="reciprocal").covers(actual).all()
    assert er.divide(ab, bb, divide="any").covers(actual).all()
    with np.errstate(all="ignore"):
        ah, bh = a.astype(np.float16), b.astype(np.float16)
        actual = _reciprocal_multiply(ah.astype(F32), bh.astype(F32)).astype(np.float16)
    assert er.divide(ah, bh, divide="reciprocal").covers(actual).all()


def test_only_the_declared_model_runs():
    x, y = er.asarray([1.0], "bfloat16"), er.asarray([3.0], "bfloat16")
    assert er.divide(x, y).models == ("exact", "fused in float32")
    assert er.divide(x, y, divide="reciprocal").models == (
        "exact", "reciprocal then multiply in float32")
    assert er.divide(x, y, divide="any").models == (
        "exact", "fused in float32", "reciprocal then multiply in float32")
    # float64 operands: a reciprocal-multiply float64 division, simulated in float64
    a, b = np.float64([5.0, 10.0]), np.float64([3.0, 7.0])
    rm = a * (1.0 / b)
    assert not er.divide(a, b).covers(rm).all()
    assert er.divide(a, b, divide="reciprocal").covers(rm).all()


def test_bad_values_are_refused_with_the_list():
    with pytest.raises(ValueError, match="expected one of 'correct', 'reciprocal', 'any'"):
        er.divide([1.0], [3.0], divide="fast")
    with pytest.raises(ValueError, match="rounding_mode='floor'"):
        er.divide([1.0], [3.0], divide="reciprocal", rounding_mode="floor")
    with pytest.raises(ValueError, match="complex"):
        er.divide(np.complex64([1 + 1j]), np.complex64([2 + 1j]), divide="reciprocal")
    with pytest.raises(TypeError, match="divide"):
        er.multiply([1.0], [3.0], divide="reciprocal")


def test_the_contract_dimension_reaches_divide():
    a, b = np.float32([5.0, 10.0]), np.float32([3.0, 7.0])
    rm = _reciprocal_multiply(a, b)
    assert er.divide(a, b, contract=er.Contract(divide="reciprocal")).covers(rm).all()
    with er.use_contract(er.Contract(divide="any")):
        assert er.divide(a, b).covers(rm).all()
    assert not er.divide(a, b).covers(rm).all()
