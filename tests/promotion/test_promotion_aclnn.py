"""Ascend aclnn: both derivation tables, reproduced verbatim (copied from the sources)."""

from __future__ import annotations

import pytest

import exactref as er
from exactref.promotion import PromotionError, Scalar, check_inplace, result_type

ABBREV = {"f32": "float32", "f16": "float16", "f64": "float64", "bf16": "bfloat16", "s8": "int8",
          "u8": "uint8", "s16": "int16", "u16": "uint16", "s32": "int32", "u32": "uint32",
          "s64": "int64", "u64": "uint64", "bool": "bool", "c32": "complex32",
          "c64": "complex64", "c128": "complex128"}

# The CANN aclnn documentation's Tensor-Tensor table (互推导关系), verbatim.
TENSOR_TENSOR = """
| dtype | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | bool | c32 | c64 | c128 |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| f32 | f32 | f32 | f64 | f32 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c64 | c64 | c128 |
| f16 | f32 | f16 | f64 | f32 | f16 | f16 | f16 | x | f16 | x | f16 | x | f16 | c32 | c64 | c128 |
| f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | x | f64 | x | f64 | x | f64 | c128 | c128 | c128 |
| bf16 | f32 | f32 | f64 | bf16 | bf16 | bf16 | bf16 | x | bf16 | x | bf16 | x | bf16 | c32 | c64 | c128 |
| s8 | f32 | f16 | f64 | bf16 | s8 | s16 | s16 | x | s32 | x | s64 | x | s8 | c32 | c64 | c128 |
| u8 | f32 | f16 | f64 | bf16 | s16 | u8 | s16 | x | s32 | x | s64 | x | u8 | c32 | c64 | c128 |
| s16 | f32 | f16 | f64 | bf16 | s16 | s16 | s16 | x | s32 | x | s64 | x | s16 | c32 | c64 | c128 |
| u16 | x | x | x | x | x | x | x | u16 | x | x | x | x | x | x | x | x |
| s32 | f32 | f16 | f64 | bf16 | s32 | s32 | s32 | x | s32 | x | s64 | x | s32 | c32 | c64 | c128 |
| u32 | x | x | x | x | x | x | x | x | x | u32 | x | x | x | x | x | x |
| s64 | f32 | f16 | f64 | bf16 | s64 | s64 | s64 | x | s64 | x | s64 | x | s64 | c32 | c64 | c128 |
| u64 | x | x | x | x | x | x | x | x | x | x | x | u64 | x | x | x | x |
| bool | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | x | s32 | x | s64 | x | bool | c32 | c64 | c128 |
| c32 | c64 | c32 | c128 | c32 | c32 | c32 | c32 | x | c32 | x | c32 | x | c32 | c32 | c64 | c128 |
| c64 | c64 | c64 | c128 | c64 | c64 | c64 | c64 | x | c64 | x | c64 | x | c64 | c64 | c64 | c128 |
| c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | x | c128 | x | c128 | x | c128 | c128 | c128 | c128 |
"""

# Its Tensor-Scalar table: rows are the SCALAR dtype, columns the TENSOR dtype; verbatim.
TENSOR_SCALAR = """
| Data Type | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | bool | c32 | c64 | c128 |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| f32 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c32 | c64 | c128 |
| f16 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c32 | c64 | c128 |
| f64 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c128 | c128 | c128 |
| bf16 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c32 | c64 | c128 |
| s8 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s8 | c32 | c64 | c128 |
| u8 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | u8 | c32 | c64 | c128 |
| s16 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s16 | c32 | c64 | c128 |
| u16 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | x | c32 | c64 | c128 |
| s32 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s32 | c32 | c64 | c128 |
| u32 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | x | c32 | c64 | c128 |
| s64 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s64 | c32 | c64 | c128 |
| u64 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | x | c32 | c64 | c128 |
| bool | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | bool | c32 | c64 | c128 |
| c32 | c64 | c32 | c128 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c32 | c64 | c128 |
| c64 | c64 | c32 | c128 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c32 | c64 | c128 |
| c128 | c64 | c32 | c128 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c32 | c64 | c128 |
"""


def _cells(text):
    lines = [ln.strip().strip("|").split("|") for ln in text.strip().splitlines()]
    cols = [c.strip() for c in lines[0][1:]]
    out = []
    for ln in lines[2:]:
        parts = [p.strip() for p in ln]
        out += [(parts[0], c, v) for c, v in zip(cols, parts[1:], strict=True)]
    return out


TT, TS = _cells(TENSOR_TENSOR), _cells(TENSOR_SCALAR)


@pytest.mark.parametrize("row,col,expected", TT, ids=[f"{r}-{c}" for r, c, _ in TT])
def test_tensor_tensor_table(row, col, expected):
    a, b = f"{ABBREV[row]}[3]", f"{ABBREV[col]}[3]"
    if expected == "x":
        with pytest.raises(PromotionError) as info:
            result_type(a, b, policy="aclnn")
        assert ABBREV[row] in str(info.value) and ABBREV[col] in str(info.value)
    else:
        assert result_type(a, b, policy="aclnn").name == ABBREV[expected]
        # a 0-d tensor is an aclTensor: the same table
        assert result_type(a, f"{ABBREV[col]}[]", policy="aclnn").name == ABBREV[expected]


@pytest.mark.parametrize("scalar,tensor,expected", TS, ids=[f"scalar_{s}-tensor_{t}"
                                                            for s, t, _ in TS])
def test_tensor_scalar_table(scalar, tensor, expected):
    """Rows are the scalar dtype, columns the tensor dtype."""
    s, t = Scalar(1, ABBREV[scalar]), f"{ABBREV[tensor]}[3]"
    for operands in ((t, s), (s, t)):  # the order of the operands does not matter
        if expected == "x":
            with pytest.raises(PromotionError):
                result_type(*operands, policy="aclnn")
        else:
            assert result_type(*operands, policy="aclnn").name == ABBREV[expected]


def test_orientation_documented_examples():
    # "float16 tensor with float32 scalar: the scalar is converted to float16"
    assert result_type("float16[3]", Scalar(2.0, "float32"), policy="aclnn") is er.dtype("float16")
    # "bool tensor with float32 scalar: the tensor is converted to float32"
    assert result_type("bool[3]", Scalar(2.0, "float32"), policy="aclnn") is er.dtype("float32")
    # not symmetric: a float32 tensor with a float16 scalar stays float32
    assert result_type("float32[3]", Scalar(2.0, "float16"), policy="aclnn") is er.dtype("float32")


def test_python_scalars_are_at_scalar_dtypes():
    assert result_type("float16[3]", 0.5, policy="aclnn") is er.dtype("float16")  # ACL_DOUBLE
    assert result_type("complex32[3]", 0.5, policy="aclnn") is er.dtype("complex128")
    assert result_type("int8[3]", 2, policy="aclnn") is er.dtype("int8")  # ACL_INT64 row
    with pytest.raises(PromotionError):
        result_type("uint16[3]", 0.5, policy="aclnn")


def test_ops_outside_the_tables_raise():
    assert result_type("int8[3]", "int8[3]", policy="aclnn", op="lt") is er.dtype("bool")
    with pytest.raises(PromotionError, match="do not cover div"):
        result_type("int8[3]", "int8[3]", policy="aclnn", op="div")


def test_inplace_conversion_rules():
    with pytest.raises(PromotionError, match="cannot be converted"):
        check_inplace("add", "int32", "float16[3]", policy="aclnn")
    assert check_inplace("add", "float32", "int8[3]", policy="aclnn") is er.dtype("float32")
    assert er.can_cast("bool", "float16", policy="aclnn")
    assert not er.can_cast("complex64", "float32", policy="aclnn")
    assert er.can_cast("int8", "complex64", policy="aclnn")
