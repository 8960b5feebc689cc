"""kael's record (ADR 0003 "Type promotion"), reproduced exactly: every table, the worked example
and every "check your understanding" answer. The tables below are copied from the record."""

from __future__ import annotations

import pytest

import exactref as er
from exactref.promotion import PromotionError, Scalar, check_inplace, explain, result_type

KAEL = {"Bool": "bool", "I64": "int64", "F32": "float32", "F64": "float64"}

# The record's promote_types table, verbatim.
PROMOTE_TYPES = """
promote_types Bool I64 F32 F64
Bool Bool I64 F32 F64
I64 I64 I64 F32 F64
F32 F32 F32 F32 F64
F64 F64 F64 F64 F64
"""

# The record's promote_with_scalar table: Tensor, Scalar, Result, Why.
SCALARS = [
    ("F32", "2.5", "F32", "same category, the tensor wins"),
    ("F64", "2.5f", "F64", "same category, the tensor wins"),
    ("I64", "2.5", "F32", "higher category, the scalar's dtype wins"),
    ("Bool", "2", "I64", "higher category"),
    ("F32", "2", "F32", "lower category"),
    ("Bool", "true", "Bool", "same category"),
]
# 2.5f and 2.5 are both F32 scalars; true is Bool; 2 is I64 (the record's "Scalars").
_SCALAR_VALUES = {"2.5": 2.5, "2.5f": 2.5, "2": 2, "true": True}

# The comparison table of the record's Context, category-based column.
CONTEXT = [
    ("float32[3]", 0.5, "mul", "float32"),
    ("int64[3]", 2.5, "add", "float32"),
    ("float32[3]", "float64[]", "add", "float32"),
    ("int64[3]", "float32[3]", "add", "float32"),
]

# The in-place table of the record's Consequences.
INPLACE = [
    ("float32", "add", "float64[3]", None),
    ("float32", "add", "int64[3]", None),
    ("int64", "add", 1, None),
    ("int64", "add", 0.5, "add_ result of dtype float32 cannot be stored in a tensor of dtype int64"),
    ("int64", "div", 2, "div_ result of dtype float32 cannot be stored in a tensor of dtype int64"),
    ("bool", "add", "bool[3]", "add_ result of dtype int64 cannot be stored in a tensor of dtype bool"),
]


def _table(text):
    lines = [ln.split() for ln in text.strip().splitlines()]
    return [(r[0], c, v) for r in lines[1:] for c, v in zip(lines[0][1:], r[1:], strict=True)]


@pytest.mark.parametrize("row,col,expected", _table(PROMOTE_TYPES),
                         ids=[f"{r}-{c}" for r, c, _ in _table(PROMOTE_TYPES)])
def test_promote_types_table(row, col, expected):
    assert er.promote_types(KAEL[row], KAEL[col], "kael").name == KAEL[expected]
    # the full order also applies to two 0-d tensors
    assert result_type(f"{KAEL[row]}[]", f"{KAEL[col]}[]", policy="kael").name == KAEL[expected]


@pytest.mark.parametrize("tensor,scalar,expected,why", SCALARS,
                         ids=[f"{t}-{s}" for t, s, _, _ in SCALARS])
def test_promote_with_scalar_table(tensor, scalar, expected, why):
    value = _SCALAR_VALUES[scalar]
    got = result_type(f"{KAEL[tensor]}[3]", value, policy="kael")
    assert got.name == KAEL[expected], why
    text = explain(f"{KAEL[tensor]}[3]", value, policy="kael")
    assert "promote_with_scalar" in text


@pytest.mark.parametrize("a,b,op,expected", CONTEXT, ids=lambda v: str(v))
def test_context_table_category_based_column(a, b, op, expected):
    assert result_type(a, b, policy="kael", op=op).name == expected


def test_worked_example(golden):
    """ones({3}, I64) * 0.5 is float32; with a float64 tensor float64; float32 tensor times a
    float64 0-d tensor stays float32."""
    assert result_type("int64[3]", 0.5, policy="kael", op="mul") is er.dtype("float32")
    assert result_type("float64[3]", 0.5, policy="kael", op="mul") is er.dtype("float64")
    assert result_type("float32[3]", "float64[]", policy="kael", op="mul") is er.dtype("float32")
    assert result_type("float32[3]", Scalar(0.5, "float64"), policy="kael",
                       op="mul") is er.dtype("float32")
    text = explain("int64[3]", 0.5, policy="kael", op="mul")
    for step in ("promote_with_scalar(I64, 0.5)", "category 2 > tensor category 1",
                 "0.5 becomes a 0-d float32 tensor", "dimensioned group I64, 0-d group F32",
                 "result: float32"):
        assert step in text
    golden("explain_kael_worked_example.txt", text + "\n")
    text64 = explain("float64[3]", 0.5, policy="kael", op="mul")
    assert "is not higher than tensor category 2" in text64 and text64.endswith("float64")


@pytest.mark.parametrize("op,rule", [("add", "int64"), ("div", "float32"), ("sub", None),
                                     ("pow", None), ("floor_divide", None), ("eq", "bool"),
                                     ("lt", "bool"), ("mul", "bool")])
def test_per_operation_overrides(op, rule):
    if rule is None:
        with pytest.raises(PromotionError) as info:
            result_type("bool[3]", "bool[3]", policy="kael", op=op)
        assert info.value.library_error[0] == "TypeError"
        assert "check_no_bool" in str(info.value)
        # any Bool input throws, not only Bool with Bool
        with pytest.raises(PromotionError):
            result_type("int64[3]", "bool[3]", policy="kael", op=op)
    else:
        assert result_type("bool[3]", "bool[3]", policy="kael", op=op).name == rule
    assert result_type("int64[3]", "int64[3]", policy="kael", op="div").name == "float32"
    assert result_type("float64[3]", "int64[3]", policy="kael", op="div").name == "float64"
    res = er.promotion.resolve("int64[3]", 0.5, policy="kael", op="lt")
    assert (res.result.name, res.compute.name) == ("bool", "float32")


@pytest.mark.parametrize("self_dtype,op,other,message", INPLACE,
                         ids=[f"{s}-{o}_-{x}" for s, o, x, _ in INPLACE])
def test_inplace_rules(self_dtype, op, other, message):
    if message is None:
        check_inplace(op, self_dtype, other, policy="kael")
    else:
        with pytest.raises(PromotionError) as info:
            check_inplace(op, self_dtype, other, policy="kael")
        assert info.value.library_error == ("TypeError", message)
        assert str(info.value).startswith(f"kael: {message}")
        assert info.value.reason == "inplace"


def test_check_your_understanding():
    # 1. ones({3}, I64) + 2.5 is float32, not float64: the floating scalar is F32.
    assert result_type("int64[3]", 2.5, policy="kael") is er.dtype("float32")
    # 2. float32 [1024, 1024] times a float64 0-d tensor: float32; the full order would give
    #    float64 and a result of 8 MB instead of 4 MB.
    assert result_type("float32[1024,1024]", "float64[]", policy="kael",
                       op="mul") is er.dtype("float32")
    full = er.promote_types("float32", "float64", "kael")
    assert full is er.dtype("float64")
    assert (1024 * 1024 * full.itemsize, 1024 * 1024 * 4) == (8 * 2**20, 4 * 2**20)
    # 3. int64_tensor.add_(0.5) throws; float32_tensor.add_(float64_tensor) does not (it
    #    computes in F64 and rounds to float32 on store).
    with pytest.raises(PromotionError):
        check_inplace("add", "int64", 0.5, policy="kael")
    assert check_inplace("add", "float32", "float64[3]", policy="kael") is er.dtype("float64")
    # 4. The result dtype is computed once, before the loop: explain shows one result_dtype.
    assert explain("int64[3]", "float32[3]", policy="kael").count("result_dtype") == 1
    # 5. add of two Bool tensors: kael I64, PyTorch Bool; mul stays Bool in both.
    assert result_type("bool[3]", "bool[3]", policy="kael", op="add") is er.dtype("int64")
    assert result_type("bool[3]", "bool[3]", policy="torch", op="add") is er.dtype("bool")
    assert result_type("bool[3]", "bool[3]", policy="kael", op="mul") is er.dtype("bool")
    assert result_type("bool[3]", "bool[3]", policy="torch", op="mul") is er.dtype("bool")
    # 6. Promotion.Table pins promote_types(I64, F32) = F32.
    assert er.promote_types("int64", "float32", "kael") is er.dtype("float32")


def test_other_dtypes_and_complex_are_rejected():
    with pytest.raises(PromotionError, match="kael has no dtype float16"):
        result_type("float16[3]", "float32[3]", policy="kael")
    with pytest.raises(PromotionError, match="complex"):
        result_type("float32[3]", 1j, policy="kael")
    with pytest.raises(PromotionError, match="at least one tensor"):
        result_type(1, 2.5, policy="kael")


def test_can_cast_is_check_result_fits():
    assert er.can_cast("float64", "float32", policy="kael")
    assert not er.can_cast("float32", "int64", policy="kael")
    assert er.can_cast("bool", "int64", policy="kael")
    assert not er.can_cast("int64", "bool", policy="kael")
