"""er.quantize against the independent model of the specs (block_oracle.py), on random and
adversarial blocks, for every block format, every scale rule, several input formats and every
rounding mode."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from block_oracle import (
    E2M1,
    MX,
    blocks_of,
    grid,
    mx_block,
    nvfp4_block,
    nvfp4_global,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

import exactref as er

MX_RULES = ("floor", "ceil", "even", "rceil")
NV_RULES = ("nearest", "up")
MODES = ("nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative",
         "odd")
INPUTS = {"float32": np.float32, "float64": np.float64, "bfloat16": ml_dtypes.bfloat16,
          "float16": np.float16}


def _edge_blocks(name: str, block: int, rng) -> list[np.ndarray]:
    """Blocks (float64) whose largest element sits where the rules part ways, or at the
    scale's limits, or that hold subnormals, NaN, infinities, zeros and ties."""
    if name == "nvfp4":
        emax, p, vmax = 2, 2, 6.0
    else:
        elem, emax, p = MX[name]
        vmax = float(elem.vmax) if elem.int_quantum is None else float(elem.int_max
                                                                      * elem.int_quantum)
    out = []

    def with_top(top):
        b = rng.standard_normal(block) * top / 4
        b[rng.integers(block)] = top * rng.choice([-1.0, 1.0])
        return np.clip(b, -abs(top), abs(top))

    for j in (-3, 0, 5):
        two = 2.0**j
        out.append(with_top(two))                                   # on a binade edge
        out.append(with_top(two * (2 - 2.0**-p)))                   # rounds up at p bits
        out.append(with_top(two * (2 - 2.0**-(p + 1))))             # just below that
        out.append(with_top(two * (2 - 2.0**-(p - 1)) if p > 1 else two))
        out.append(with_top(vmax * 2.0**(j - emax)))                 # max element exactly
        out.append(with_top(vmax * 2.0**(j - emax) * (1 + 2.0**-20)))  # just past it
    out.append(with_top(2.0**-130))           # below the smallest scale 2**-127 * 2**emax
    out.append(with_top(2.0**-140))           # float32 subnormal amax
    out.append(with_top(2.0**(-127 + emax)))  # the smallest scale exactly
    out.append(with_top(1.5 * 2.0**127))      # float32's top binade
    out.append(with_top(2.0**200))            # past E8M0: NaN scale (float64 inputs)
    out.append(with_top(2.0**(127 + emax)))   # the largest scale 2**127 (float64 inputs)
    out.append(with_top(2.0**(128 + emax)))   # one past it: NaN
    b = with_top(2.0**120)
    b[:2] = [5e-324, -5e-324]                 # x / X far below float64's range
    out.append(b)
    out.append(with_top(2.0**-1070))          # float64 subnormal amax
    b = with_top(1.0)
    b[: block // 2] *= 2.0**-12               # elements subnormal in the element format
    out.append(b)
    b = with_top(8.0)
    b[1] = np.nan
    out.append(b)
    b = with_top(8.0)
    b[2] = -np.inf
    out.append(b)
    out.append(np.zeros(block))
    out.append(-np.zeros(block))
    b = np.zeros(block)
    b[0] = 2.0**-3                            # one nonzero among zeros, -0 kept
    b[1] = -0.0
    out.append(b)
    # midpoints of the element grid, under the scale 1 of a block whose amax is 2**emax
    values = grid(E2M1 if name == "nvfp4" else MX[name][0])
    mids = [float((a + b) / 2) for a, b in zip(values, values[1:], strict=False)]
    for _ in range(2):
        t = rng.choice(mids, block) * rng.choice([-1.0, 1.0], block)
        t[0] = 2.0**emax
        out.append(t)
    return out


def _random_blocks(block: int, rng, count: int) -> list[np.ndarray]:
    out = []
    for _ in range(count):
        spread = rng.integers(0, 30)
        b = rng.standard_normal(block) * 2.0 ** rng.integers(-spread, spread + 1, block)
        out.append(b * 2.0 ** rng.integers(-60, 60))
    return out


def _cast(rows, dtype) -> np.ndarray:
    """The rows in the input format, clipped to its range (NaN and infinities kept)."""
    top = float(ml_dtypes.finfo(INPUTS[dtype]).max)
    stacked = np.stack(rows)
    finite = np.isfinite(stacked)
    return np.where(finite, np.clip(stacked, -top, top), stacked).astype(INPUTS[dtype])


def _data(name, block, seed, count=24):
    rng = np.random.default_rng(seed)
    return _edge_blocks(name, block, rng) + _random_blocks(block, rng, count)


def _oracle(values: np.ndarray, name, rule, mode, block):
    """(scales, codes) of the oracle on each row of ``values`` (blocks along the last axis)."""
    scales, codes = [], []
    flat_rows = values.reshape(-1, values.shape[-1])
    g = nvfp4_global([float(v) for v in values.reshape(-1)]) if name == "nvfp4" else None
    for row in flat_rows:
        srow, crow = [], []
        for b in blocks_of([float(v) for v in row], block):
            s, c = (nvfp4_block(b, g, rule, mode) if name == "nvfp4"
                    else mx_block(b, name, rule, mode))
            srow.append(s)
            crow.extend(c)
        scales.append(srow)
        codes.append(crow)
    return g, scales, codes


def _check(q, values, name, rule, mode, block):
    __tracebackhide__ = True
    g, want_s, want_c = _oracle(values, name, rule, mode, block)
    if g is not None:
        assert q.global_scale == g
    codes, scales = q.by_rule[rule]
    got_s = np.asarray(scales._wide(), dtype=np.float64).reshape(len(want_s), -1)
    got_c = np.asarray(codes._wide(), dtype=np.float64).reshape(len(want_c), -1)
    for i, (ws, wc) in enumerate(zip(want_s, want_c, strict=True)):
        for j, s in enumerate(ws):
            gs = got_s[i, j]
            assert (math.isnan(s) and math.isnan(gs)) or s == gs, (
                f"row {i} block {j}: scale {gs!r}, the spec gives {s!r} ({name}, {rule})")
        for j, c in enumerate(wc):
            if c is None:
                continue
            gc = got_c[i, j]
            assert c == gc and math.copysign(1, c) == math.copysign(1, gc), (
                f"row {i} element {j}: code {gc!r}, the spec gives {c!r} ({name}, {rule}, "
                f"{mode}; input {values.reshape(len(want_c), -1)[i, j]!r}, scale "
                f"{got_s[i, j // block]!r})")


CASES = [(n, r) for n in MX for r in MX_RULES] + [("nvfp4", r) for r in NV_RULES]


@pytest.mark.parametrize("name,rule", CASES, ids=[f"{n}-{r}" for n, r in CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rules_match_the_spec(name, rule, dtype):
    block = er.quantize.BLOCK_FORMATS[name].block
    values = _cast(_data(name, block, 7), dtype)
    q = er.quantize(values, name, scale_rule=rule)
    _check(q, values.astype(np.float64), name, rule, "nearest_even", block)


@pytest.mark.parametrize("name", list(MX) + ["nvfp4"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_narrow_inputs(name, dtype):
    block = er.quantize.BLOCK_FORMATS[name].block
    values = _cast(_data(name, block, 11, count=8), dtype)
    q = er.quantize(values, name, scale_rule="any")
    for rule in q.rules:
        _check(q, values.astype(np.float64), name, rule, "nearest_even", block)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["mxfp4", "mxfp6_e3m2", "mxfp8_e5m2", "mxint8", "nvfp4"])
def test_every_rounding_mode(name, mode):
    block = er.quantize.BLOCK_FORMATS[name].block
    values = np.stack(_data(name, block, 3, count=8))
    q = er.quantize(values, name, rounding=mode)
    _check(q, values, name, q.rules[0], mode, block)


@pytest.mark.parametrize("name", ["mxfp8_e4m3", "mxint8", "nvfp4"])
def test_partial_last_block_is_its_own_block(name):
    rng = np.random.default_rng(5)
    values = rng.standard_normal((3, 50)) * 2.0 ** rng.integers(-8, 8, (3, 50))
    values[1, 40:] *= 2.0**20  # the partial block's amax is its own
    q = er.quantize(values, name, block=32)
    assert q.scales.shape == (3, 2)
    _check(q, values, name, q.rules[0], "nearest_even", 32)


@pytest.mark.parametrize("name", ["mxfp6_e2m3", "nvfp4"])
def test_axis(name):
    rng = np.random.default_rng(9)
    values = rng.standard_normal((40, 3)) * 2.0 ** rng.integers(-8, 8, (40, 3))
    q0 = er.quantize(values, name, axis=0, block=16, scale_rule="any")
    qt = er.quantize(values.T, name, axis=-1, block=16, scale_rule="any")
    assert q0.scales.shape == (3, 3)
    for rule in q0.rules:
        (c0, s0), (ct, st) = q0.by_rule[rule], qt.by_rule[rule]
        np.testing.assert_array_equal(c0._wide().T, ct._wide())
        np.testing.assert_array_equal(s0._wide().T, st._wide())
    _check(qt, values.T, name, "nearest" if name == "nvfp4" else "floor", "nearest_even", 16)


@pytest.mark.parametrize("name", list(MX))
def test_the_data_reach_every_branch(name):
    """The blocks above are adversarial: the rules disagree on some, scales reach both ends of
    E8M0 and NaN, elements saturate and tie (else the comparison with the spec proves less)."""
    block = er.quantize.BLOCK_FORMATS[name].block
    values = np.stack(_data(name, block, 7))
    q = er.quantize(values, name, scale_rule="any")
    s = {r: q.by_rule[r][1]._wide().astype(np.float64) for r in q.rules}
    for r in ("ceil", "even", "rceil"):
        assert (s["floor"] != s[r]).sum() >= 3, r
    assert (s["even"] != s["ceil"]).sum() >= 3
    amax = np.max(np.abs(values.reshape(values.shape[0], -1, block)), axis=-1)
    assert ((s["floor"] == 2.0**-127) & (amax > 0)).sum() >= 2
    assert (s["floor"] == 2.0**127).sum() >= 1
    assert (np.isnan(s["floor"]) & np.isfinite(amax)).sum() >= 2  # past 2**127
    codes = q.codes._wide().astype(np.float64)
    top = 127 if name == "mxint8" else er.dtype(er.quantize.BLOCK_FORMATS[name].element
                                                ).max_finite
    assert (np.abs(codes) == top).sum() >= 10


def test_nvfp4_global_scale_edges():
    """g = amax / 2688 rounded to float32; 1 for an all-zero or non-finite tensor; the smallest
    float32 where amax / 2688 rounds to zero; or the caller's float32 value."""
    tiny = np.array([[2.0**-145, -2.0**-150] + [0.0] * 14])
    q = er.quantize(tiny, "nvfp4")
    assert q.global_scale == 2.0**-149 == nvfp4_global(tiny.reshape(-1).tolist())
    _check(q, tiny, "nvfp4", "nearest", "nearest_even", 16)
    assert er.quantize(np.zeros((2, 16)), "nvfp4").global_scale == 1.0
    nan = np.ones((2, 16))
    nan[1, 3] = np.nan
    q = er.quantize(nan, "nvfp4")
    assert q.global_scale == 1.0
    assert np.isnan(q.scales._wide()[1, 0])
    assert q.scales._wide()[0, 0] == nvfp4_block([1.0] * 16, 1.0, "nearest", "nearest_even")[0]
    g = float(np.float32(0.001))
    rng = np.random.default_rng(2)
    values = rng.standard_normal((3, 32))
    q = er.quantize(values, "nvfp4", global_scale=g, scale_rule="any")
    for rule in q.rules:
        _check_with_global(q, values, rule, g)


def _check_with_global(q, values, rule, g):
    codes, scales = q.by_rule[rule]
    for i, row in enumerate(values):
        for j, b in enumerate(blocks_of(row.tolist(), 16)):
            s, c = nvfp4_block(b, g, rule, "nearest_even")
            assert scales._wide()[i, j] == s
            assert codes._wide()[i, 16 * j:16 * j + 16].tolist() == c


# ------------------------------------------------------------------ hypothesis and sweeps

_FMT_RULES = st.sampled_from(CASES)
_ROW = st.lists(st.floats(width=32), min_size=1, max_size=40)


@settings(max_examples=60)
@given(case=_FMT_RULES, row=_ROW, mode=st.sampled_from(MODES), block=st.sampled_from([4, 16, 32]))
@example(case=("mxfp4", "even"), row=[5.75, -1.0], mode="nearest_even", block=4)
@example(case=("mxint8", "rceil"), row=[-2.0, 1.0], mode="nearest_away", block=32)
@example(case=("nvfp4", "up"), row=[1e-38, 3e-45, 0.0], mode="toward_positive", block=16)
def test_hypothesis_rows(case, row, mode, block):
    name, rule = case
    values = np.array([row], dtype=np.float32)
    q = er.quantize(values, name, block=block, scale_rule=rule, rounding=mode)
    _check(q, values.astype(np.float64), name, rule, mode, block)


@pytest.mark.slow
@pytest.mark.parametrize("name,rule", CASES, ids=[f"{n}-{r}" for n, r in CASES])
def test_sweep_of_amax_over_every_binade(name, rule):
    """amax = m * 2**j for every binade of float64 that reaches E8M0's range and beyond, and
    significands at every rule's boundary; the other elements random below it."""
    rng = np.random.default_rng(13)
    block = 8
    sig = [1.0, 1.0 + 2.0**-52, 1.5, 1.75, 1.875, 1.9375, 2 - 2.0**-52, 1.75 * (1 + 2.0**-20),
           1.5 * (1 + 2.0**-30), 1.875 * (1 - 2.0**-30), 127 / 64, 127 / 64 * (1 + 2.0**-40)]
    rows = []
    for j in range(-160, 150):
        for m in sig:
            b = rng.uniform(-1, 1, block) * m * 2.0**j
            b[rng.integers(block)] = m * 2.0**j
            rows.append(b)
    values = np.stack(rows)
    q = er.quantize(values, name, block=block, scale_rule=rule)
    _check(q, values, name, rule, "nearest_even", block)
