"""The function lane (``_function_kernel.wide_lane``, ``_exact.lane_candidates``): the float32
reference and accuracy band computed in one pass per element, bit for bit the general path.

Two levels: the kernel against ``ExactArray.round`` and ``band_ends`` on exact values of every
kind (every binade, float32 subnormals, midpoints and float32 numbers with a tiny rest, the
overflow edge, values held beyond ``2**+-1000``, zeros, NaN, infinities, bounds from 0 to
unbounded), compiled and numpy twins alike; and each function op's Result through the lane
against the general path (the lane switched off), every candidate and ``covers`` verdict."""

from __future__ import annotations

import numpy as np
import pytest

import exactref as er
from exactref._exact import ExactArray, Rounding, _bands, _jit, band_ends, lane_candidates
from exactref._formats import FORMATS
from exactref.arithmetic import _function_kernel as K

F32 = FORMATS["float32"]
MODES = [Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO,
         Rounding.TOWARD_POSITIVE, Rounding.TOWARD_NEGATIVE]


def _values(rng, n=6000) -> ExactArray:
    """Kernel-like exact values (53-bit integer mantissas at a scale, rests, specials)."""
    mant = rng.integers(2**52, 2**53, n, dtype=np.int64) | 1
    E = rng.integers(-200, 140, n) - 52
    rest = np.zeros(n, np.int64)
    # float32 numbers, midpoints and the overflow edge, with and without a tiny rest
    k = 1500
    with np.errstate(over="ignore"):
        f = (rng.standard_normal(k) * np.exp2(rng.integers(-150, 129, k))).astype(np.float32)
    f = f[np.isfinite(f) & (f != 0)].astype(np.float64)
    f[:40] = np.float64(np.finfo(np.float32).max)
    f[40:60] = 2.0**128 - 2.0**103  # max + half an ulp: the overflow midpoint
    f[60:80] = 2.0**-150            # half the smallest subnormal
    f[80:100] = 2.0**-149 * 1.5     # a subnormal midpoint
    mid = f.copy()
    mid[100::2] = f[100::2] * (1 + 2.0**-24)  # midpoints between float32 numbers (most)
    fm, fe = np.frexp(mid)
    j = np.arange(mid.size)
    mant[j] = np.round(fm * 2.0**53).astype(np.int64)
    E[j] = fe - 53
    rest[j] = rng.integers(-1, 2, j.size)
    # far values (as the enclosures hold overflow and underflow), exact small integers
    E[1500:1530] = 1100 - 52
    E[1530:1560] = -1100 - 52
    rest[1540:1560] = rng.choice([-1, 1], 20)
    mant[1560:1600] = (1 << 52) + rng.integers(0, 1 << 20, 40) * (1 << 32)  # short mantissas
    sign = rng.choice([-1, 1], n)
    c1 = (sign * mant).astype(np.float64)
    r = (rest * sign).astype(np.int8)
    zero = np.zeros(n, bool)
    zsign = np.ones(n, np.int8)
    special = np.zeros(n)
    zero[1600:1620] = True
    zsign[1600:1610] = -1
    special[1620:1630] = np.nan
    special[1630:1640] = np.inf
    special[1640:1650] = -np.inf
    c1[1600:1650] = 0.0
    r[1600:1650] = 0
    c2 = np.zeros(n)
    c1[1650:1660] -= 2.0 * sign[1650:1660]  # a split mantissa: c1 + c2 (the general path)
    c2[1650:1660] = 2.0 * sign[1650:1660]
    return ExactArray.regular((n,), c1, c2, r, E, zero=zero, zsign=zsign, special=special)


def _ulps(rng, n):
    u = rng.choice([0.5, 1.0, 2.5, 3.5, 1e3, 2.0**30, 2.0**39.9, _bands.OPEN_ULPS], n)
    u[:200] = rng.uniform(0.5, 9.0, 200)
    return u


def _same(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float64).astype(np.float32)
    return np.array_equal(a.view(np.int32), b.view(np.int32))


def _runners():
    yield "numpy", _bands._lane_numpy
    if _jit.enabled():
        yield "numba", _bands._lane_runner()


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_kernel_is_round_and_band_ends(mode, monkeypatch):
    rng = np.random.default_rng(7)
    ex = _values(rng)
    ulps = _ulps(rng, ex.size)
    want_ref = ex.round(F32, mode, "ieee")[0]
    want_lo, want_hi = band_ends(ex, F32, ulps, "ieee")
    for name, run in _runners():
        monkeypatch.setattr(_bands, "_lane_runner", lambda run=run: run)
        ref, lo, hi = lane_candidates(ex, F32, mode, "ieee", ulps)
        bad = np.flatnonzero(ref.view(np.int32) !=
                             want_ref.astype(np.float32).view(np.int32))
        assert not bad.size, (name, bad[:5], ref[bad[:5]], want_ref[bad[:5]])
        assert _same(lo, want_lo), (name, np.flatnonzero(lo != want_lo)[:5])
        assert _same(hi, want_hi), (name, np.flatnonzero(hi != want_hi)[:5])
        # a scalar bound, and the ulp-dependent form (a callable) as the presets pass it
        ref2, lo2, hi2 = lane_candidates(ex, F32, mode, "ieee", 2.5)
        w_lo, w_hi = band_ends(ex, F32, 2.5, "ieee")
        assert _same(ref2, want_ref) and _same(lo2, w_lo) and _same(hi2, w_hi), name
        want_u = _bands.ulp_of(ex, F32)
        seen = []

        def bound(ulp_values, seen=seen, want_u=want_u):
            u = ulp_values()
            seen.append(np.array_equal(u, want_u, equal_nan=True))
            return np.nan_to_num(1.0 + 2.0**-126 / u, nan=_bands.OPEN_ULPS)

        _, lo3, hi3 = lane_candidates(ex, F32, mode, "ieee", bound)
        w_lo, w_hi = band_ends(ex, F32, np.nan_to_num(1.0 + 2.0**-126 / want_u,
                                                      nan=_bands.OPEN_ULPS), "ieee")
        assert seen == [True] and _same(lo3, w_lo) and _same(hi3, w_hi), name


def test_kernel_twins_agree_and_refuse_what_they_do_not_serve():
    rng = np.random.default_rng(8)
    ex = _values(rng, 3000)
    assert lane_candidates(ex, FORMATS["float64"], MODES[0], "ieee") is None
    assert lane_candidates(ex, F32, Rounding.ODD, "ieee") is None
    assert lane_candidates(ex, F32, MODES[0], "saturate") is None
    if not _jit.enabled():
        pytest.skip("numba is not installed (the `fast` extra): no compiled twin to compare")
    ulps = _ulps(rng, ex.size)
    outs = []
    for run in (_bands._lane_numpy, _bands._lane_runner()):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_bands, "_lane_runner", lambda run=run: run)
            got = lane_candidates(ex, F32, MODES[0], "ieee", ulps)
            u = []
            lane_candidates(ex, F32, MODES[3], "ieee", lambda f, u=u: u.append(f()) or 1.0)
            outs.append((*got, u[0]))
    for a, b in zip(*outs, strict=True):
        assert np.array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))
    slow = np.zeros(ex.size, bool)  # some elements take the general functions
    _bands._lane_runner()(ex.c1, ex.c2, ex.r, ex.E, ex.zero, ex.zsign, ex.special,
                          np.zeros(1, np.int64), 0, False, False, np.zeros(ex.size, np.float32),
                          np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0), slow)
    assert 0 < slow.sum() < ex.size


# ------------------------------------------------------------------ the ops, end to end
def _inputs(n=1200, seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 8, n))).astype(np.float32)
    f32 = np.finfo(np.float32)
    x[:24] = [0.0, -0.0, np.inf, -np.inf, np.nan, f32.tiny, -f32.tiny, 1e-45, -1e-45,
              f32.max, -f32.max, 88.72283, 88.72284, -103.97, -87.33655, 1.0, -1.0, 0.5,
              2.0**-20, -(2.0**-20), 10.0, -10.0, 30.0, -30.0]
    x[24:60] = rng.uniform(80, 120, 36) * rng.choice([-1, 1], 36)
    x[60:80] = np.float32(1e-40) * rng.uniform(-1, 1, 20)
    x[80:82] = np.array([0x7F800001, 0xFFC00001], np.uint32).view(np.float32)  # NaN payloads
    return x


OPS = ["exp", "log", "tanh", "sigmoid", "gelu", "erf", "silu"]
ACCURACIES = ["correct", "mainstream", 2, "cuda_intrinsics", "glibc", "sleef_u10", "numpy"]


def _general(monkeypatch):
    monkeypatch.setattr(K, "wide_lane", lambda ctx, spec=None: None)


def _compare(lane, gen, actuals):
    assert lane.models == gen.models
    assert lane.details == gen.details
    assert np.array_equal(lane.rounded.numpy().view(np.int32), gen.rounded.numpy().view(np.int32))
    for a, b in ((lane.lowest, gen.lowest), (lane.highest, gen.highest)):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)  # float64 bounds
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    if len(gen._candidates[0]) == len(lane._candidates[0]):  # unchunked: the same arrays
        for a, b in zip(lane._candidates[0], gen._candidates[0], strict=True):
            assert _same(a, b)
    for act in actuals:
        assert np.array_equal(lane.covers(act).mask, gen.covers(act).mask)


def _actuals(x, res):
    with np.errstate(all="ignore"):
        r = res.rounded.numpy()
        return [r, np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf)),
                (r * np.float32(1 + 2**-21)).astype(np.float32)]


@pytest.mark.parametrize("op", OPS)
def test_ops_through_the_lane_are_the_general_path(op, monkeypatch):
    x = _inputs()
    fn = getattr(er, op)
    calls = [dict(accuracy=a) for a in ACCURACIES]
    calls += [dict(accuracy="mainstream", rounding=m) for m in MODES[1:]]
    calls += [dict(accuracy="correct", rounding=m) for m in MODES[1:]]
    calls += [dict(accuracy="mainstream", overflow="saturate"), dict(compute="float64"),
              dict(accuracy=1, compute="float64")]
    real = K.wide_lane
    for kw in calls:
        seen = []

        def spy(ctx, spec=None, seen=seen):
            got = real(ctx, spec)
            seen.append(got is not None)
            return got

        monkeypatch.setattr(K, "wide_lane", spy)
        try:
            lane = fn(x, **kw)
        except ValueError:  # a preset that does not document the op: refused either way
            _general(monkeypatch)
            with pytest.raises(ValueError):
                fn(x, **kw)
            continue
        served = kw.get("overflow") is None and kw.get("compute") is None
        assert seen == [served], kw
        _general(monkeypatch)
        gen = fn(x, **kw)
        _compare(lane, gen, _actuals(x, gen))


def test_chunked_call_is_the_general_path(monkeypatch):
    # over the lane's and the general path's chunk (2**16): the candidates' hull agrees
    x = np.tile(_inputs(2000, seed=5), 40)[: (1 << 16) + 3000]
    lane = er.tanh(x)
    _general(monkeypatch)
    gen = er.tanh(x)
    _compare(lane, gen, _actuals(x, gen))


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
def test_every_binade_of_float32_through_the_lane(op, monkeypatch):
    # a stride through every float32 bit pattern (both signs, subnormals, NaNs, infinities)
    pats = np.arange(0, 2**32, 65521, dtype=np.uint64).astype(np.uint32)
    x = pats.view(np.float32)
    fn = getattr(er, op)
    for kw in (dict(), dict(accuracy="correct"), dict(rounding="toward_zero"),
               dict(accuracy="cuda_intrinsics", rounding="toward_positive"),
               dict(accuracy=1, rounding="toward_negative")):
        try:
            lane = fn(x, **kw)
        except ValueError:
            continue
        with monkeypatch.context() as mp:
            _general(mp)
            gen = fn(x, **kw)
        _compare(lane, gen, _actuals(x, gen))
