"""The one operand module (issue 20): an op and er.result_type classify an operand the same way.

Issue 19/20: ``er.add(int8 array, np.float64(0.5))`` gave float64 while ``er.result_type`` of the
same operands, ``equivalents.torch.add`` and torch gave float32 (torch takes a numpy scalar as a
Python scalar); the numpy policy takes a numpy scalar by its dtype (NEP 50): float64.
"""

from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exactref._operands import prepare

_INT8 = np.array([1, 2, -3], dtype=np.int8)


def test_int8_plus_numpy_float64_scalar_is_float32_under_torch():
    got = er.add(_INT8, np.float64(0.5))
    assert got.rounded.dtype is er.dtype("float32")
    assert got.rounded.dtype is er.result_type(_INT8, np.float64(0.5), op="add")
    assert got.rounded.tolist() == [1.5, 2.5, -2.5]
    assert er.add(np.float64(0.5), _INT8).rounded.dtype is er.dtype("float32")


def test_int8_plus_numpy_float64_scalar_is_float64_under_numpy():
    got = er.add(_INT8, np.float64(0.5), policy="numpy")
    assert got.rounded.dtype is er.dtype("float64")
    assert got.rounded.dtype is er.result_type(_INT8, np.float64(0.5), op="add", policy="numpy")
    assert got.rounded.dtype.name == np.add(_INT8, np.float64(0.5)).dtype.name


def test_the_torch_equivalent_agrees():
    pytest.importorskip("torch", exc_type=ImportError)
    from exactref.equivalents import torch as et

    assert et.add(_INT8, np.float64(0.5)).rounded.dtype is er.dtype("float32")


@pytest.mark.parametrize(("x", "tier", "zero_dim"), [
    (_INT8, "array", False),
    (np.array(2.0), "array", True),
    (er.asarray([1.0], "bfloat16"), "array", False),
    (np.float64(0.5), "typed", False),
    (np.int16(3), "typed", False),
    (True, "python", False),
    (3, "python", False),
    (2**70, "python", False),
    (0.25, "python", False),
    (Fraction(1, 4), "python", False),
    (1 + 2j, "python", False),
], ids=lambda v: type(v).__name__ if not isinstance(v, (str, bool)) else str(v))
def test_an_operand_is_classified_once_as_promotion_classifies_it(x, tier, zero_dim):
    o = prepare(x, "x")
    assert o.view is o.view  # made once
    assert o.tier == tier and o.view.zero_dim == zero_dim
    if tier != "python":
        assert o.view.format is er.promotion.operand(x).format


def test_a_result_is_classified_by_its_rounded_array():
    r = er.add(_INT8, 1)
    assert prepare(r, "x").view.format is er.dtype("int8")


@pytest.mark.parametrize(("x", "library"), [
    (_INT8, "numpy"), (np.float64(0.5), "numpy"), (er.asarray([1.0], "float32"), "er"),
    (2.5, "python"), (True, "python"),
], ids=lambda v: type(v).__name__)
def test_an_operand_keeps_its_library(x, library):
    assert prepare(x, "x").view.library == library


def test_a_torch_tensor_is_a_torch_operand():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    o = prepare(torch.ones(3, dtype=torch.bfloat16), "x")
    assert o.view.library == "torch" and o.view.format is er.dtype("bfloat16")
    assert er.add(torch.ones(3, dtype=torch.int8), np.float64(0.5)).rounded.dtype is \
        er.dtype("float32")


# ----------------------------------------------------------------- the common keywords
def test_every_elementwise_op_takes_the_common_keywords():
    """Issue 20: dtype=, policy=, rounding= and overflow= on every elementwise op (cast refuses
    policy= by name: its target is named)."""
    import inspect

    from exactref import ops

    missing = {name: k for name in ops.names_of("exactref.arithmetic")
               for k in ("dtype", "policy", "rounding", "overflow")
               if k not in inspect.signature(ops.get_op(name).function).parameters}
    assert not missing, missing


def test_cast_takes_dtype_as_its_target_and_refuses_policy_by_name():
    x = er.asarray([300.5, -2.7], "float32")
    assert er.cast(x, dtype="int16").rounded.tolist() == er.cast(x, "int16").rounded.tolist()
    assert er.cast(x, "int16", dtype="int16").rounded.dtype is er.dtype("int16")
    with pytest.raises(ValueError, match="two target formats"):
        er.cast(x, "int8", dtype="int16")
    with pytest.raises(ValueError, match="no policy=.*drop policy="):
        er.cast(x, "int8", policy="numpy")
    with pytest.raises(TypeError, match="needs the target format"):
        er.cast(x)
