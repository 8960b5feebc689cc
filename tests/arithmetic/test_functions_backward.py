"""Backward of the real functions: ``grad * f'(x)``, exact and rounded once, against the
oracle (``functions_oracle.exact_grad``: mpmath, PyTorch's formulas at the specials) in every
rounding mode."""

from __future__ import annotations

import functions_oracle as oracle
import numpy as np
import pytest
from family_oracle import all_values, assert_same

import exactref as er
from exactref._exact._functions import DERIVATIVES, gradient

R = er.Rounding
MODES = list(R)
NAMES = sorted(DERIVATIVES)


@pytest.fixture(autouse=True)
def _fresh_oracle_cache():
    yield
    oracle._CACHE.clear()


def _grads_of(fmt):
    """Gradient values of a format: ±1, ±0, a few others, inf and NaN where it has them."""
    fmt = er.dtype(fmt)
    vals = [1.0, -0.5, 0.0, -0.0, 3.0, -1.5, 0.25]
    if fmt.has_inf:
        vals.append(np.inf)
    if fmt.has_nan:
        vals.append(np.nan)
    return np.array(vals)


def _check(name, x, g, fmt):
    """The op in two modes; the kernel's exact values (at the format's precision) in all six."""
    fmt = er.dtype(fmt)
    vals = oracle.exact_grads(name, g, x)
    if not fmt.has_nan:
        keep = np.array([not (isinstance(v, float) and v != v) for v in vals], dtype=bool)
        x, g, vals = x[keep], g[keep], [v for v, k in zip(vals, keep, strict=True) if k]
    X, G = er.asarray(x, fmt), er.asarray(g, fmt)
    wants = {mode: oracle.round_exact(vals, fmt, mode) for mode in MODES}
    for mode in (R.NEAREST_EVEN, R.TOWARD_NEGATIVE):
        got = getattr(er, name).backward(X, G, rounding=mode).grad_x.rounded
        assert_same(got.numpy().astype(np.float64), wants[mode], lambda k: (x[k], g[k]),
                    f"{name}.backward in {fmt.name}, {mode.value}")
    ex = gradient(name, g, x, bits=fmt.precision)
    for mode in MODES:
        assert_same(ex.round(fmt, mode, fmt.default_overflow)[0], wants[mode],
                    lambda k: (x[k], g[k]), f"{name} gradient kernel, {mode.value}")


@pytest.mark.parametrize("fmt", ["float8_e5m2", "float6_e3m2fn",
                                 pytest.param("float8_e4m3fn", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", NAMES)
def test_every_value_of_small_formats(name, fmt):
    xs = all_values(fmt)
    gs = _grads_of(fmt)
    x, g = (a.reshape(-1) for a in np.meshgrid(xs, gs, indexing="ij"))
    _check(name, x, g, fmt)


@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_samples(name):
    rng = np.random.default_rng(13)
    xs = all_values("bfloat16")
    x = xs[rng.choice(xs.size, 400, replace=False)]
    g = er.asarray(rng.standard_normal(400) * 4.0, "bfloat16").numpy().astype(np.float64)
    _check(name, x, g, "bfloat16")


@pytest.mark.parametrize("name", NAMES)
def test_float32_samples(name):
    rng = np.random.default_rng(17)
    n = 600
    with np.errstate(invalid="ignore"):
        bits = rng.integers(0, 2**32, n // 2, dtype=np.uint64).astype(np.uint32) \
            .view(np.float32).astype(np.float64)
    bits[np.isnan(bits)] = np.nan
    x = np.concatenate([bits, rng.uniform(-4, 4, n // 2)]).astype(np.float32)
    g = (rng.standard_normal(x.size) * 10.0 ** rng.integers(-3, 4, x.size)).astype(np.float32)
    _check(name, x.astype(np.float64), g.astype(np.float64), "float32")


def test_the_records_name_their_backward():
    for name in NAMES:
        spec = er.ops.get_op(name)
        assert spec.backward is getattr(er, name).backward, name
        assert spec.family == "functions"
    assert er.ops.get_op("gelu").backward is None


def test_backward_examples():
    x = er.asarray([0.0, 1.0, 0.0], "float32")
    g = er.asarray([1.0, 1.0, -0.0], "float32")
    assert er.sigmoid.backward(x, g).grad_x.rounded.tolist() == [0.25, 0.1966119259595871, -0.0]
    got = er.log.backward(x, g).grad_x.rounded.tolist()  # grad / x: -0 / +0 is NaN
    assert got[:2] == [np.inf, 1.0] and np.isnan(got[2])
    with pytest.raises(TypeError, match="no operand takes a gradient"):
        er.exp.backward(np.array([1, 2]), er.asarray([1.0, 1.0], "float32"))
