"""jax policy: the lattice, weak types, x64 off and on, and a live cross-check on a sample."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import exactref as er
from exactref.promotion import PromotionError, check_inplace, resolve, result_type


def test_weak_types():
    res = resolve("bool[3]", 2, policy="jax")
    assert (res.result.name, res.weak) == ("int32", True)
    assert resolve("bool[3]", 2, policy="jax_x64").result is er.dtype("int64")
    assert result_type("bfloat16[3]", 0.5, policy="jax") is er.dtype("bfloat16")
    assert result_type("int8[3]", 300, policy="jax") is er.dtype("int8")  # no value check
    assert not resolve("float32[]", 2.0, policy="jax").weak  # 0-d arrays are strong


def test_x64_canonicalization():
    assert result_type("int64[3]", "float64[3]", policy="jax") is er.dtype("float32")
    assert result_type("uint32[3]", "int32[3]", policy="jax") is er.dtype("int32")
    assert result_type("uint32[3]", "int32[3]", policy="jax_x64") is er.dtype("int64")
    assert er.promote_types("bool", "float64", "jax") is er.dtype("float64")  # not canonical


def test_no_implicit_promotion_for_small_types():
    with pytest.raises(PromotionError, match="8-bit floats do not support implicit promotion"):
        result_type("float8_e4m3fn[3]", "float32[3]", policy="jax")
    with pytest.raises(PromotionError, match="2-bit and 4-bit integers"):
        result_type("int4[3]", 0.5, policy="jax")
    assert result_type("int4[3]", 3, policy="jax") is er.dtype("int4")


def test_div_and_pow():
    assert result_type("int16[3]", "int16[3]", op="div", policy="jax_x64") is er.dtype("float32")
    assert result_type("int64[3]", "int64[3]", op="div", policy="jax_x64") is er.dtype("float64")
    assert result_type("int2[3]", "int2[3]", op="div", policy="jax") is er.dtype("int2")
    assert result_type("bool[3]", 2, op="pow", policy="jax") is er.dtype("int32")


def test_no_inplace():
    with pytest.raises(PromotionError, match="immutable"):
        check_inplace("add", "float32", 1.0, policy="jax")


_LIVE = r"""
import sys, jax
jax.config.update("jax_enable_x64", sys.argv[1] == "1")
import numpy as np, jax.numpy as jnp
import exactref.promotion as P
from exactref.promotion import _fixtures as F
from exactref.promotion._operands import operand
fns = {"add": jnp.add, "mul": jnp.multiply, "div": jnp.true_divide, "lt": jnp.less,
       "maximum": jnp.maximum, "fmod": jnp.fmod, "sqrt": jnp.sqrt, "abs": jnp.abs,
       "reciprocal": jnp.reciprocal, "negative": jnp.negative,
       "rsqrt": lambda x: 1 / jnp.sqrt(x), "clamp": lambda x, lo, hi=None: jnp.clip(x, lo, hi),
       "fma": lambda x, y, z: x * y + z}
lib = "jax_x64" if sys.argv[1] == "1" else "jax"
def make(spec):
    o = operand(spec)
    if o.tier == "array":
        return np.ones((3,) if o.ndim else (), dtype=o.format.np_dtype)
    return o.value
n = 0
for i, c in enumerate(F.cells(lib)):
    if i % 211 or c.op not in fns or any("(" in s for s in c.operands):
        continue
    args = list(map(make, c.operands))
    where = [k for k, v in enumerate(args) if isinstance(v, np.ndarray)]
    def traced(*arrays, args=args, where=where, f=fns[c.op]):
        full = list(args)
        for k, a in zip(where, arrays):
            full[k] = a
        return f(*full)
    try:
        out = jax.eval_shape(traced, *(args[k] for k in where))
        live = F.Cell(lib, c.op, c.operands, str(out.dtype), out.weak_type, None, None, ())
    except Exception as exc:
        live = F.Cell(lib, c.op, c.operands, None, False,
                      (type(exc).__name__, " ".join(str(exc).split())), None, ())
    v, d = F.compare(live)
    assert v != "disagree", (c.id, d)
    n += 1
assert n > 50, n
print(n)
"""


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
@pytest.mark.parametrize("x64", ["0", "1"], ids=["x64_off", "x64_on"])
def test_live_jax_sample(x64):
    """Recompute a sample with the installed jax (in a subprocess: x64 is process-wide)."""
    out = subprocess.run([sys.executable, "-c", _LIVE, x64], capture_output=True, text=True,
                         env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
