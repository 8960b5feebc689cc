"""The fast covers of a Result that is its reference alone (``_result._covers_reference``)
against the general path, field by field.

A fast lane's Result holds one candidate, the very array ``rounded`` holds; ``covers`` then
compares bit patterns (or float64 values) instead of bounds, and computes the distances, the
actual values and the bounds only when asked. The general path runs on the same Result with a
copy of the candidate (not the same object: ``_reference_only`` is False). Every Coverage
field must be identical: mask, distances, actual values, bounds, undefined, masked, the counts,
the worst element, the summary and the findings; arrays bit for bit (NaN with NaN, signs of
zero).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import exactref as er
from exactref._array import Array
from exactref._formats import FORMATS
from exactref._result import Result

NATIVE = [f for f in FORMATS.values() if f.kind == "float" and f.encoding == "native"]


def _same(a, b) -> bool:
    """Arrays equal bit for bit (NaN with NaN, signs of zero), of one shape and dtype."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "b":
        return bool((a == b).all())
    with np.errstate(invalid="ignore"):
        same = ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
    return bool(same.all())


def _pair(values: np.ndarray, fmt):
    """``(fast, general)``: one Result twice, as a fast lane builds it (the candidate is the
    rounded array itself) and with a copy of the candidate (the general path)."""
    fast = Result(Array(values, fmt), [[values]], op="add", models=["exact"],
                  details={"rounding": er.Rounding.NEAREST_EVEN})
    general = Result(Array(values, fmt), [[values.copy()]], op="add", models=["exact"],
                     details={"rounding": er.Rounding.NEAREST_EVEN})
    assert fast._reference_only() and not general._reference_only()
    return fast, general


def _check(fast: Result, general: Result, actual):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither may warn
        a, b = fast.covers(actual), general.covers(actual)
    assert "_fill" in a.__dict__  # deferred: nothing beyond the mask computed yet
    assert _same(a.mask, b.mask)
    assert a.uncovered == b.uncovered and a.all() == b.all() and a.any() == b.any()
    assert a.worst_index == b.worst_index and a.worst_ulps == b.worst_ulps
    for name in ("_dist", "_actual", "_lo", "_hi", "undefined", "masked", "not_rounded"):
        assert _same(getattr(a, name), getattr(b, name)), name
    assert a.summary() == b.summary() and repr(a) == repr(b)
    assert a.findings == b.findings and a.format is b.format
    assert a.tolerance_stats == b.tolerance_stats
    assert _same(fast.tolerance().numpy(), general.tolerance().numpy())
    assert _same(fast.tolerance_ulps(), general.tolerance_ulps())
    if a.mask.size:
        i = a.worst_index or tuple(0 for _ in a.shape)
        for u, v in zip(a.interval(i), b.interval(i), strict=True):
            assert _same(u, v)
    return a


def _values(fmt, rng, n=400):
    """Values of ``fmt``: random codes over every binade, signed zeros, the extremes, and
    NaN and infinities where the format has them."""
    codes = rng.integers(0, 2**fmt.bits, n, dtype=np.uint64)
    v = fmt.decode(codes.astype(f"u{fmt.itemsize}"))
    extra = [0.0, -0.0, fmt.max_finite, -fmt.max_finite, fmt.smallest_subnormal,
             -fmt.smallest_subnormal]
    if fmt.has_inf:
        extra += [np.inf, -np.inf]
    if fmt.has_nan:
        extra += [np.nan]
    extra = [e for e in extra if _holds(fmt, e)]
    v = np.concatenate([np.asarray(v, dtype=np.float64), extra])
    if not fmt.has_nan:
        v = v[~np.isnan(v)]
    return np.asarray(v, dtype=np.float64).astype(fmt.np_dtype)


def _holds(fmt, value) -> bool:
    try:
        fmt.encode(np.array([value]))
    except ValueError:
        return False
    return True


def _perturbed(values, fmt, rng):
    """Actual outputs near ``values`` in ``fmt``: equal, one code off, signs of zero flipped,
    NaN, infinities, other values."""
    codes = fmt.encode(values).astype(np.int64)
    step = rng.integers(-2, 3, codes.size) * (rng.random(codes.size) < 0.3)
    moved = np.clip(codes + step, 0, 2**fmt.bits - 1).astype(f"u{fmt.itemsize}")
    out = np.asarray(fmt.decode(moved), dtype=np.float64)
    out = np.where(np.isnan(out) & ~fmt.has_nan, 0.0, out)
    zero = np.asarray(values, dtype=np.float64) == 0
    flip = zero & (rng.random(codes.size) < 0.5)
    out = np.where(flip, -np.asarray(values, dtype=np.float64), out)
    return out.astype(fmt.np_dtype)


@pytest.mark.parametrize("fmt", NATIVE, ids=lambda f: f.name)
def test_fast_covers_equal_the_general_path(fmt):
    rng = np.random.default_rng(fmt.bits * 7 + len(fmt.name))
    values = _values(fmt, rng)
    fast, general = _pair(values, fmt)
    _check(fast, general, values)  # all covered
    _check(fast, general, values.copy())
    cov = _check(fast, general, _perturbed(values, fmt, rng))
    assert 0 < cov.uncovered < values.size  # the test can fail both ways
    # an actual in float64 (another format than the reference's): compared in float64
    _check(fast, general, _perturbed(values, fmt, rng).astype(np.float64))
    _check(fast, general, values.astype(np.float64).tolist())
    # a masked array: the hidden elements are covered
    act = _perturbed(values, fmt, rng)
    _check(fast, general, np.ma.masked_array(act, mask=rng.random(act.size) < 0.5))


def test_nan_inf_and_zero_rules():
    f32 = FORMATS["float32"]
    ref = np.float32([np.nan, np.nan, np.inf, -np.inf, 0.0, -0.0, 0.0, 1.0, np.inf, 1.0])
    act = np.float32([np.nan, 1.0, np.inf, np.inf, -0.0, -0.0, 0.0, np.nan, 3e38, -1.0])
    fast, general = _pair(ref, f32)
    cov = _check(fast, general, act)
    assert cov.mask.tolist() == [True, False, True, False, False, True, True, False, False,
                                 False]
    # a NaN of another payload is a NaN
    other = np.array([0x7FC00001], np.uint32).view(np.float32)
    _check(*_pair(np.float32([np.nan]), f32), other)


@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 3, 5)])
def test_shapes_and_strides(shape):
    rng = np.random.default_rng(len(shape))
    f64 = FORMATS["float64"]
    values = rng.standard_normal(shape)
    values = np.asarray(values, dtype=np.float64)
    fast, general = _pair(values, f64)
    act = np.where(rng.random(shape) < 0.5, values, np.nextafter(values, np.inf))
    _check(fast, general, np.asarray(act))
    if len(shape) >= 2:  # a strided actual (a transpose's transpose, a slice)
        wide = np.zeros((shape[0], 2 * shape[1], *shape[2:]))
        wide[:, ::2] = act
        _check(fast, general, wide[:, ::2])
        _check(fast, general, np.ascontiguousarray(act.T).T)


def test_errors_are_the_general_paths():
    f32 = FORMATS["float32"]
    fast, general = _pair(np.float32([1.0, 2.0]), f32)
    for bad, exc in (([1.0, 2.0, 3.0], ValueError), (np.float32([[1.0, 2.0]]), ValueError),
                     (np.complex64([1.0, 2.0]), TypeError)):
        with pytest.raises(exc) as e1:
            fast.covers(bad)
        with pytest.raises(exc) as e2:
            general.covers(bad)
        assert str(e1.value) == str(e2.value)


def test_the_actual_is_kept_as_checked():
    """The report reads the actual as it was when checked, though the user's array changes."""
    f32 = FORMATS["float32"]
    fast, general = _pair(np.float32([1.0, 2.0]), f32)
    act = np.float32([1.0, 3.0])
    a, b = fast.covers(act), general.covers(act)
    act[1] = 2.0
    assert a.summary() == b.summary() and "actual 3.0" in a.summary()


def test_lanes_results_take_the_fast_path():
    """er.add and er.multiply of float32 (and float64) arrays build Results that are their
    reference alone; their covers agree with the general path's, also through AnyOf and the
    pytest helpers that read the Coverage's fields."""
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal(300).astype(dtype)
        y = rng.standard_normal(300).astype(dtype)
        for r in (er.add(x, y), er.multiply(x, y, rounding="toward_zero")):
            assert r._reference_only()
            values = r.rounded.numpy()
            general = Result(r.rounded, [[values.copy()]], op=r.op, models=r.models,
                             details=r.details)
            act = np.where(rng.random(300) < 0.1, np.nextafter(values, dtype(0)), values)
            _check(r, general, act)
            u, v = er.any_of(r, r).covers(act), er.any_of(general, general).covers(act)
            assert _same(u.mask, v.mask) and _same(u._dist, v._dist) and \
                u.summary() == v.summary()


def test_a_deferred_coverage_pickles_and_copies():
    import copy
    import pickle

    f32 = FORMATS["float32"]
    fast, general = _pair(np.float32([1.0, 2.0, np.nan]), f32)
    act = np.float32([1.0, 3.0, np.nan])
    for clone in (pickle.loads(pickle.dumps(fast.covers(act))), copy.copy(fast.covers(act))):
        b = general.covers(act)
        assert _same(clone.mask, b.mask) and _same(clone._dist, b._dist)
        assert _same(clone._actual, b._actual) and clone.summary() == b.summary()
