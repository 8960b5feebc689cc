"""The fast lane of add, subtract and multiply (``arithmetic._fast``) for float32 and float64,
against the exact engine (the lane switched off: the general elementwise path) and against MPFR
(the oracle of ``arith_oracle``), bit for bit, in every rounding mode; and its compiled loops
(``_fast_jit``, numba) against their numpy twins.

Operands: the adversarial pools (every pair of specials, exact cancellations, ties and
near-ties, overflow edges, subnormal products), random bit patterns (every binade), values of
moderate exponents (where Dekker's product serves), and the edges of Dekker's conditions
(operands near ``2**995`` and ``2**-1022``, products near ``2**-968`` and ``2**1020``, on both
sides). Values are compared bit for bit, NaN with NaN.
"""

from __future__ import annotations

import zlib

import arith_oracle as O
import numpy as np
import pytest
from arith_pools import pairs

import exactref as er
from exactref._exact import _jit
from exactref._formats import FORMATS
from exactref.arithmetic import _fast

R = er.Rounding
MODES = list(R)
F32, F64 = FORMATS["float32"], FORMATS["float64"]


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _same(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def _dekker_edges(rng, n=300):
    """float64 pairs at the edges of the lane's Dekker conditions, on both sides."""
    m = 1 + rng.random(n)
    sign = rng.choice([-1.0, 1.0], n)
    xs, ys = [], []
    for ex, ey in ((995, 0), (996, -2), (995, 25), (-1022, 0), (-1023, 10), (-1030, 40),
                   (-500, -468), (-500, -469), (-484, -484), (510, 510), (511, 509),
                   (1000, -100), (-968, 0), (-969, 0), (1020, 0), (1019, 1)):
        xs.append(sign * m * 2.0**ex)
        ys.append(rng.choice([-1.0, 1.0], n) * (1 + rng.random(n)) * 2.0**ey)
    return np.concatenate(xs), np.concatenate(ys)


def _operands(fmt, rng, n=1000):
    """``(x, y)`` in ``fmt``'s numpy dtype (see the module docstring)."""
    x, y = pairs(fmt, n, rng)
    scale = 60 if fmt is F64 else 20
    mx = rng.standard_normal(n) * np.exp2(rng.integers(-scale, scale, n))
    my = rng.standard_normal(n) * np.exp2(rng.integers(-scale, scale, n))
    xs, ys = [x, mx.astype(fmt.np_dtype)], [y, my.astype(fmt.np_dtype)]
    # products of few bits: ties of multiply; sums half an ulp apart
    short = rng.integers(1, 2**12, n) * 2.0 ** rng.integers(-30, 30, n)
    xs.append(mx.astype(fmt.np_dtype))
    ys.append((1.5 * short / short).astype(fmt.np_dtype))
    if fmt is F64:
        ex, ey = _dekker_edges(rng)
        xs.append(ex)
        ys.append(ey)
    big = fmt.max_finite
    xs.append(np.array([big, -big, big, fmt.smallest_subnormal, -fmt.smallest_subnormal]))
    ys.append(np.array([big, -big, -big, 0.5, 0.5]))
    x = np.concatenate(xs).astype(fmt.np_dtype)
    y = np.concatenate(ys).astype(fmt.np_dtype)
    return x, y


CALLS = [("add", {}), ("subtract", {}), ("add", {"alpha": -1}), ("multiply", {})]


def _call(op, kw, x, y, mode):
    return getattr(er, op)(x, y, rounding=mode, **kw)


@pytest.mark.parametrize("fmt", [F32, F64], ids=lambda f: f.name)
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_lane_matches_the_exact_engine(fmt, mode, monkeypatch):
    rng = np.random.default_rng(_seed("lane", fmt.name, mode.value))
    x, y = _operands(fmt, rng)
    fast = {}
    for op, kw in CALLS:
        r = _call(op, kw, x, y, mode)
        assert r._reference_only(), (op, kw)  # the lane served
        fast[op, str(kw)] = r.rounded._wide()
    monkeypatch.setattr(_fast, "_served", lambda ctx, formats=(): False)
    for op, kw in CALLS:
        r = _call(op, kw, x, y, mode)
        assert not r._reference_only()  # the general path
        slow = r.rounded._wide()
        bad = np.flatnonzero(~_same(fast[op, str(kw)], slow))
        assert bad.size == 0, (op, kw, [(x[i], y[i], fast[op, str(kw)][i], slow[i])
                                        for i in bad[:5]])


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_lane_matches_mpfr(mode):
    """A sample against the Fraction + MPFR oracle (independent of the engine)."""
    rng = np.random.default_rng(_seed("mpfr", mode.value))
    for fmt in (F32, F64):
        x, y = _operands(fmt, rng, n=150)
        pick = rng.choice(x.size, 500, replace=False)
        x, y = x[pick], y[pick]
        add = er.add(x, y, rounding=mode).rounded._wide()
        sub = er.subtract(x, y, rounding=mode).rounded._wide()
        mul = er.multiply(x, y, rounding=mode).rounded._wide()
        for i in range(x.size):
            a, b = float(x[i]), float(y[i])
            want = O.rnd(O.total([O.exact(a), O.exact(b)], mode), fmt, mode)
            assert O.same(float(add[i]), want), ("add", a, b, add[i], want)
            want = O.rnd(O.total([O.exact(a), O.neg(O.exact(b))], mode), fmt, mode)
            assert O.same(float(sub[i]), want), ("subtract", a, b, sub[i], want)
            want = O.rnd(O.mul(O.exact(a), O.exact(b)), fmt, mode)
            assert O.same(float(mul[i]), want), ("multiply", a, b, mul[i], want)


@pytest.mark.skipif(not _jit.enabled(), reason="numba is not installed (or EXACTREF_NUMBA=0): "
                                                "no compiled loops to compare")
@pytest.mark.parametrize("fmt", [F32, F64], ids=lambda f: f.name)
def test_compiled_loops_match_the_numpy_twins(fmt, monkeypatch):
    rng = np.random.default_rng(_seed("jit", fmt.name))
    x, y = _operands(fmt, rng)
    x2 = np.concatenate([x, rng.permutation(x)])  # more pairs: other exponents meet
    y2 = np.concatenate([y, y])
    reps = -(-2 * _fast._CHUNK // x2.size)  # past one block: the compiled loops run
    x2, y2 = np.tile(x2, reps), np.tile(y2, reps)
    ways = {}
    for switch in ("1", "0"):
        monkeypatch.setenv("EXACTREF_NUMBA", switch)
        assert (_fast._fast_jit.loops() is not None) == (switch == "1")
        ways[switch] = {(m, op): f(x2, y2, m) for m in MODES if m is not R.NEAREST_EVEN
                        for op, f in (("add", _fast.add_values),
                                      ("sub", lambda a, b, m: _fast.add_values(a, b, m, True)),
                                      ("mul", _fast.multiply_values))}
    for key, compiled in ways["1"].items():
        twin = ways["0"][key]
        assert compiled.dtype == twin.dtype == fmt.np_dtype
        bad = np.flatnonzero(~_same(compiled, twin))
        assert bad.size == 0, (key, [(x2[i], y2[i], compiled[i], twin[i]) for i in bad[:5]])


@pytest.mark.parametrize("mode", [R.TOWARD_ZERO, R.NEAREST_AWAY, R.ODD], ids=lambda m: m.value)
def test_broadcasts_mixed_formats_and_the_engine_share(mode, monkeypatch):
    """Broadcast shapes, float16 with float32 and float32 with float64 (cast exactly: the lane
    serves), and the elements the lane sends to the engine (Dekker's edges), against the
    general path."""
    rng = np.random.default_rng(_seed("mixed", mode.value))
    col = (rng.standard_normal((30, 1)) * 3).astype(np.float16)
    row = rng.standard_normal(20).astype(np.float32)
    ex, ey = _dekker_edges(rng, 40)
    cases = [(col, row), (row.astype(np.float64), row[::-1].copy()), (ex, ey),
             (ex[:, None], ey[:7])]
    fast = []
    for a, b in cases:
        r = er.multiply(a, b, rounding=mode)
        s = er.add(a, b, rounding=mode)
        assert r._reference_only() and s._reference_only()
        fast.append((r.rounded._wide(), s.rounded._wide()))
    monkeypatch.setattr(_fast, "_served", lambda ctx, formats=(): False)
    for (a, b), (m, s) in zip(cases, fast, strict=True):
        assert _same(m, er.multiply(a, b, rounding=mode).rounded._wide()).all()
        assert _same(s, er.add(a, b, rounding=mode).rounded._wide()).all()


def test_dekker_edges_go_to_the_engine():
    """The float64 multiply block marks exactly the pairs outside Dekker's conditions."""
    x = np.array([2.0**995, 2.0**996, 2.0**-1022, 2.0**-1023, 2.0**-484, 2.0**-485, 1.0,
                  0.0, np.inf, np.nan, 2.0**1020, 2.0**511])
    y = np.array([1.0, 1.0, 1.0, 2.0**100, 2.0**-484, 2.0**-484, 1.0, 2.0**-1074, 0.0, 1.0,
                  1.0, 2.0**510])
    with np.errstate(all="ignore"):  # as _blocks runs it
        _, hard = _fast._multiply64_block(x, y, R.TOWARD_ZERO)
    assert hard.tolist() == [False, True, True, True, False, True, False, False, False,
                             False, True, True]


@pytest.mark.parametrize("mode", [R.NEAREST_EVEN, R.TOWARD_ZERO, R.ODD], ids=lambda m: m.value)
def test_narrower_operands_into_a_wider_output(mode, monkeypatch):
    """``dtype=`` a wider output than the operands' (float16 into float32, float32 into
    float64): the lanes (add, multiply, divide, sqrt) cast the operands exactly first."""
    rng = np.random.default_rng(_seed("wider", mode.value))
    h = (rng.standard_normal(200) * 8).astype(np.float16)
    g = (rng.standard_normal(200) * 8).astype(np.float16)
    s = rng.standard_normal(200).astype(np.float32)
    calls = [(er.add, (h, g), "float32"), (er.multiply, (h, g), "float32"),
             (er.divide, (h, g), "float32"), (er.sqrt, (np.abs(h),), "float32"),
             (er.multiply, (s, s[::-1].copy()), "float64"), (er.add, (s, -s * 3), "float64")]
    fast = []
    for fn, args, dt in calls:
        r = fn(*args, rounding=mode, dtype=dt)
        assert r._reference_only()
        fast.append(r.rounded._wide())
    monkeypatch.setattr(_fast, "_served", lambda ctx, formats=(): False)
    for (fn, args, dt), want in zip(calls, fast, strict=True):
        r = fn(*args, rounding=mode, dtype=dt)
        assert not r._reference_only()
        assert _same(want, r.rounded._wide()).all(), fn.__name__
