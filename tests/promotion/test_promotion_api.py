"""The public surface: operands of every kind, errors, settings, properties of every policy."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import exactref as er
from exactref.promotion import (
    POLICY_NAMES,
    PromotionError,
    PromotionOverflowError,
    Scalar,
    can_cast,
    check_inplace,
    explain,
    get_policy,
    promote_types,
    result_type,
)
from exactref.promotion._operands import operand


def test_operands_of_every_kind():
    f32 = er.dtype("float32")
    assert result_type(np.ones(3, np.int64), 0.5) is f32
    assert result_type(np.ones((), np.float64), np.ones(3, np.float32)) is f32  # 0-d loses
    assert result_type(er.dtype("int64"), Fraction(1, 3)) is f32  # a Fraction is a float
    assert result_type("int64", float) is f32  # the Python type float: a weak float
    assert result_type(np.int64, "bfloat16[3]") is er.dtype("bfloat16")
    assert result_type("s64[3]", "f64[]", policy="numpy") is er.dtype("float64")


class _Duck:
    """An array of another library: only .dtype and .shape."""

    def __init__(self, dt, shape):
        self.dtype, self.shape = np.dtype(dt), shape


def test_duck_arrays_use_dtype_and_shape():
    assert result_type(_Duck("int32", (3,)), _Duck("float64", ())) is er.dtype("float64")
    assert result_type(_Duck("int32", (3,)), _Duck("float16", ())) is er.dtype("float16")
    assert operand(_Duck("int8", ())).zero_dim


def test_notation_round_trip():
    for text in ("int64[3]", "int64[]", "float32(0.5)", "2**63", "-1", "True", "1j", "bf16"):
        o = operand(text)
        assert operand(o.label).tier == o.tier
    with pytest.raises(ValueError, match="close matches: bfloat16"):
        operand("bfloat61[3]")


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_errors_are_type_errors_naming_dtypes_policy_and_fix(policy):
    pol = get_policy(policy)
    found = 0
    for a, b in itertools.product(pol.formats, repeat=2):
        try:
            result_type(f"{a.name}[3]", f"{b.name}[3]", policy=policy)
        except PromotionError as exc:
            assert isinstance(exc, TypeError)
            text = str(exc)
            assert text.startswith(f"{pol.name}:")
            canon = getattr(pol, "canonical", lambda f: f)  # jax, x64 off: 64 -> 32 bits
            assert (a.name in text or canon(a).name in text) and (
                b.name in text or canon(b).name in text), text
            assert "Fix:" in text and exc.remedy
            found += 1
            if found > 30:
                break


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_bool_absorption_and_identity(policy):
    pol = get_policy(policy)
    b = er.dtype("bool")
    for f in pol.formats:
        try:
            assert promote_types(f, f, policy) is f
        except PromotionError:
            pytest.fail(f"{policy}: {f.name} with itself")
        try:
            got = promote_types(b, f, policy)
        except PromotionError:
            continue  # torch's uint16/float8, aclnn's uint16, array API's mixed kinds
        assert got is f or f.kind == "bool", (policy, f.name, got.name)


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_symmetry(policy):
    """Every policy is symmetric, except numpy on ml_dtypes types (measured: the ufunc takes
    the first input's loop, float8_e4m3fn + float8_e4m3fnuz is float8_e4m3fn and the reverse
    float8_e4m3fnuz)."""
    pol = get_policy(policy)
    fmts = pol.formats if pol.symmetric else pol.formats[:14]  # numpy: its own dtypes
    for a, b in itertools.combinations(fmts, 2):
        try:
            ab = promote_types(a, b, policy)
        except PromotionError:
            with pytest.raises(PromotionError):
                promote_types(b, a, policy)
            continue
        assert promote_types(b, a, policy) is ab, (a.name, b.name)


@pytest.mark.parametrize("policy", ["torch", "jax", "jax_x64", "array_api", "kael"])
def test_order_independence(policy):
    """The result of three dtypes does not depend on their order (torch folds left to right,
    so whether a rejected pair is met may: only the answers given are compared)."""
    pol = get_policy(policy)
    fmts = [f for f in pol.formats if f.bits >= 8][:12]
    for trio in itertools.combinations(fmts, 3):
        answers = set()
        for perm in itertools.permutations(trio):
            try:
                answers.add(result_type(*(f"{f.name}[3]" for f in perm), policy=policy).name)
            except PromotionError:
                answers.add("error")
        answers.discard("error") if policy == "torch" else None
        assert len(answers) <= 1, (trio, answers)


def test_value_errors_are_overflow_errors():
    with pytest.raises(OverflowError):
        result_type("int8[3]", 300, policy="numpy")
    with pytest.raises(PromotionOverflowError) as info:
        result_type("int8[3]", 2**64)
    assert info.value.library_error == ("OverflowError", "int too big to convert")
    assert result_type("bool[3]", 2**63 - 1) is er.dtype("int64")
    assert result_type(2**63, 1.0) is er.dtype("float32")  # uint64 wrapped number
    with pytest.raises(PromotionError, match="UInt64 and Long"):
        result_type(2**63, 1)
    with pytest.raises(OverflowError):
        result_type("int8[3]", 2**31, policy="jax")
    assert result_type("int8[3]", 2**31, policy="jax_x64") is er.dtype("int8")


def test_explain_never_raises_and_names_tiers():
    text = explain("uint16[3]", "int8[3]")
    assert text.splitlines()[-1].startswith("error: PromotionError")
    text = explain("int8[3]", "float64[]", 1j)
    assert "tiers: dimensioned int8, 0-d float64, scalars complex64" in text
    assert text.endswith("result: complex128")


def test_can_cast_and_check_inplace_defaults_are_torch():
    assert can_cast("int64", "float16") and not can_cast("complex64", "float64")
    assert check_inplace("add", "float32", "float64[]") is er.dtype("float32")
    assert check_inplace("add", "float32", "float64[3]") is er.dtype("float64")
    with pytest.raises(PromotionError) as info:
        check_inplace("div", "int64", 2)
    assert info.value.library_error == (
        "RuntimeError", "result type Float can't be cast to the desired output type Long")


def test_unknown_policy_and_op():
    with pytest.raises(ValueError, match="unknown promotion policy"):
        result_type("int8[3]", policy="tensorflow")
    with pytest.raises(ValueError, match="close matches: multiply"):
        result_type("int8[3]", "int8[3]", op="mutliply")
    with pytest.raises(ValueError, match="at least one operand"):
        result_type()


def test_scalar_repr_and_kinds():
    s = Scalar(0.5, "bf16")
    assert repr(s) == "Scalar(0.5, bfloat16)"
    # torch keeps only a c10::Scalar's kind: an er.Scalar float64 is a Python float
    assert result_type("float16[3]", s) is er.dtype("float16")
    assert result_type("int8[3]", Scalar(1, "int64")) is er.dtype("int8")
