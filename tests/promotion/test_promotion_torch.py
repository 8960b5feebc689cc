"""torch policy: rules not visible in the fixture tables, and a live cross-check on a sample."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import exactref as er
from exactref.promotion import PromotionError, get_policy, result_type
from exactref.promotion import _fixtures as F


def test_default_dtype_setting():
    pol = get_policy("torch", default_dtype="float64")
    assert result_type("int8[3]", 0.5, policy=pol) is er.dtype("float64")
    assert result_type("int8[3]", "int8[3]", policy=pol, op="div") is er.dtype("float64")
    assert result_type("float16[3]", 1j, policy=pol) is er.dtype("complex32")
    assert result_type("int8[3]", 1j, policy=pol) is er.dtype("complex128")
    with pytest.raises(ValueError, match="floating dtype"):
        get_policy("torch", default_dtype="int32")


@pytest.mark.parametrize("op,expected", [("add", "bool"), ("mul", "bool"), ("div", "float32"),
                                         ("eq", "bool"), ("logical_and", "bool"),
                                         ("bitwise_and", "bool"), ("floor_divide", "bool"),
                                         ("pow", "bool")])
def test_bool_bool_per_op(op, expected):
    assert result_type("bool[3]", "bool[3]", op=op).name == expected


def test_bool_subtraction_messages():
    with pytest.raises(PromotionError, match="with two bool tensors"):
        result_type("bool[3]", "bool[3]", op="sub")
    with pytest.raises(PromotionError, match="with a bool tensor"):
        result_type("int8[3]", True, op="sub")


def test_operation_domains():
    with pytest.raises(PromotionError, match="bitwise_and_cpu"):
        result_type("int8[3]", 0.5, op="bitwise_and")
    with pytest.raises(PromotionError, match="lt_cpu"):
        result_type("complex64[3]", 1, op="lt")
    assert result_type("complex64[3]", 1, op="eq") is er.dtype("bool")


def test_numpy_scalars_as_torch_reads_them():
    assert result_type("int8[3]", np.bool_(True)) is er.dtype("float32")  # read as a float
    assert result_type("int8[3]", np.complex64(1j)) is er.dtype("float32")  # imag dropped
    assert result_type("int8[3]", np.complex128(1j)) is er.dtype("complex64")
    assert "dropping the imaginary part" in er.promotion.explain("int8[3]", np.complex64(1j))
    with pytest.raises(PromotionError, match="ml_dtypes.bfloat16"):
        result_type("int8[3]", er.dtype("bfloat16").np_dtype.type(1))


def test_kernel_gaps_are_explained():
    text = er.promotion.explain("float8_e4m3fn[3]", "float8_e4m3fn[3]", op="add")
    assert "no CPU kernel for add on float8_e4m3fn" in text


torch_missing = importlib.util.find_spec("torch") is None


@pytest.mark.skipif(torch_missing, reason="torch is not installed")
def test_live_torch_sample():
    """Recompute a sample of fixture cells with the installed torch."""
    import warnings

    import torch

    from exactref.promotion._operands import operand

    warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")

    fns = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
           "floor_divide": torch.floor_divide, "remainder": torch.remainder, "pow": torch.pow,
           "eq": torch.eq, "lt": torch.lt, "bitwise_and": torch.bitwise_and,
           "logical_and": torch.logical_and, "maximum": torch.maximum, "fmax": torch.fmax,
           "fmod": torch.fmod, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
           "reciprocal": torch.reciprocal, "abs": torch.abs, "negative": torch.negative,
           "addcmul": torch.addcmul, "addcdiv": torch.addcdiv, "clamp": torch.clamp,
           "fma": lambda x, y, z: x * y + z}

    def make(spec):
        o = operand(spec)
        if o.tier == "array":
            return torch.ones((3,) if o.ndim else (), dtype=getattr(torch, o.format.torch_name))
        return o.value

    checked = 0
    for i, cell in enumerate(F.cells("torch")):
        if i % 131 or cell.op not in fns or cell.note or any("(" in s for s in cell.operands):
            continue
        args = [make(s) for s in cell.operands]
        try:
            out = fns[cell.op](*args)
            live = F.Cell("torch", cell.op, cell.operands, str(out.dtype)[6:], False, None,
                          None, ())
        except Exception as exc:  # noqa: BLE001 - the library's own error is the data
            msg = " ".join(str(exc).split())
            live = F.Cell("torch", cell.op, cell.operands, None, False,
                          (type(exc).__name__, msg), cell.fallback, ())
        verdict, detail = F.compare(live)
        assert verdict != "disagree", (cell.id, detail)
        checked += 1
    assert checked > 100


@pytest.mark.skipif(torch_missing, reason="torch is not installed")
def test_live_torch_default_dtype_for_unary_ops():
    """sqrt, rsqrt and reciprocal of integers give torch's default dtype, whatever it is."""
    import torch

    pol = get_policy("torch", default_dtype="float64")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for name in ("sqrt", "rsqrt", "reciprocal"):
            for dt in ("bool", "int8", "int64", "float16"):
                live = getattr(torch, name)(torch.ones(3, dtype=getattr(torch, dt))).dtype
                assert result_type(f"{dt}[3]", op=name, policy=pol).name == str(live)[6:]
    finally:
        torch.set_default_dtype(old)
