"""er.cast's default overflow rule: what each format's real casts do, their union where they
differ (float8_e4m3fn: ml_dtypes' NaN and torch's saturation; float8_e5m2: IEEE's infinity and
PTX's ``.satfinite``); ``overflow=`` narrows the check to one rule."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref.arithmetic.conversion import CAST_OVERFLOW

FP8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


def _inputs(fmt: str) -> np.ndarray:
    """float32 values across the format's range, past its largest value, and the specials."""
    top = float(er.dtype(fmt).max_finite)
    rng = np.random.default_rng(7)
    vals = np.concatenate([
        rng.uniform(-top, top, 400), top * rng.uniform(1.0, 1.2, 200),
        -top * rng.uniform(1.0, 1.2, 200), [top * 4, -top * 4, 1e30, -3e38, np.inf, -np.inf,
                                            np.nan, 0.0]])
    if fmt == "float8_e8m0fnu":
        vals = np.abs(vals[np.isfinite(vals)]) + 2.0 ** -100  # unsigned, no zero
        vals = np.concatenate([vals, [3e38, np.inf]])
    with np.errstate(over="ignore"):  # past float32's range: +-inf, as intended
        return vals.astype(np.float32)


def _ml(x: np.ndarray, fmt: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        return x.astype(getattr(ml_dtypes, fmt)).astype(np.float64)


@pytest.mark.parametrize("fmt", FP8)
def test_ml_dtypes_casts_are_covered_by_default(fmt):
    x = _inputs(fmt)
    r = er.cast(x, fmt)
    cov = r.covers(_ml(x, fmt))
    assert cov.all(), cov


@pytest.mark.parametrize("fmt", FP8)
def test_torch_casts_are_covered_by_default(fmt):
    torch = pytest.importorskip("torch")
    dt = getattr(torch, fmt, None)
    if dt is None:
        pytest.skip(f"torch has no {fmt}")
    x = _inputs(fmt)
    t = torch.from_numpy(x).to(dt).to(torch.float64).numpy()
    cov = er.cast(x, fmt).covers(t)
    assert cov.all(), cov


def test_torch_saturates_into_e4m3fn_and_ml_dtypes_gives_nan():
    """The measurement the default rests on (torch 2.13: c10's fp8e4m3fn_from_fp32_value)."""
    x = np.float32([1e4, np.inf, -1e4, 500.0])
    assert np.isnan(_ml(x, "float8_e4m3fn")).all()
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x).to(torch.float8_e4m3fn).to(torch.float32).tolist()
    assert t == [448.0, 448.0, -448.0, 448.0]


def test_a_named_rule_narrows_the_check():
    x = np.float32([1e4, -1e4, 300.0])
    sat = [448.0, -448.0, 288.0]
    nan = [np.nan, np.nan, 288.0]
    assert er.cast(x, "float8_e4m3fn").covers(sat).all()
    assert er.cast(x, "float8_e4m3fn").covers(nan).all()
    assert er.cast(x, "float8_e4m3fn", overflow="saturate").covers(sat).all()
    assert er.cast(x, "float8_e4m3fn", overflow="saturate").covers(nan).uncovered == 2
    assert er.cast(x, "float8_e4m3fn", overflow="nan").covers(sat).uncovered == 2
    y = np.float32([1e6, 6e4])
    assert er.cast(y, "float8_e5m2").covers([57344.0, 57344.0]).all()  # PTX .satfinite
    assert er.cast(y, "float8_e5m2").covers([np.inf, 57344.0]).all()   # IEEE (torch)
    assert er.cast(y, "float8_e5m2", overflow="ieee").covers([57344.0, 57344.0]).uncovered == 1


def test_the_reference_is_unchanged_and_the_rules_are_recorded():
    x = np.float32([1e4, 300.0, np.nan])
    r = er.cast(x, "float8_e4m3fn")
    old = er.cast(x, "float8_e4m3fn", overflow="ieee")
    assert np.array_equal(r.rounded.numpy(), old.rounded.numpy(), equal_nan=True)
    assert r.details["overflow_rules"] == tuple(rule for rule, _ in CAST_OVERFLOW[
        "float8_e4m3fn"])
    assert er.cast(x, "float16").models == ("exact",)  # formats whose casts agree: one rule


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
def test_wrong_casts_are_still_caught(fmt):
    """Truncation (round toward zero) and overflow to zero are caught by the default."""
    x = _inputs(fmt)
    r = er.cast(x, fmt)
    trunc = er.cast(x, fmt, rounding="toward_zero", overflow="saturate").rounded.numpy()
    assert r.covers(trunc).uncovered > 50
    zero = np.where(np.abs(x) > float(er.dtype(fmt).max_finite) * 1.1, 0.0, _ml(x, fmt))
    assert r.covers(zero).uncovered > 50
