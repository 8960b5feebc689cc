"""atan2, the first function of two arguments (family ``float_function2``), in every policy.

torch and jax promote it as true division; numpy's ``arctan2`` has floating loops only
(float16, float32, float64 and one per ml_dtypes float), so two int8 arrays give float16 where
``np.divide`` gives float64. The recorded cells (numpy's arctan2, torch.atan2, jnp.arctan2 with
x64 off and on) are checked in test_promotion_fixtures.py; here the rules, by example.
"""

from __future__ import annotations

import importlib.util
import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref.promotion import (
    POLICY_NAMES,
    PromotionError,
    check_inplace,
    explain,
    get_policy,
    resolve,
    result_type,
)
from exactref.promotion import _fixtures as F
from exactref.promotion._ops import arity, canonical_op, family


def _dt(name):
    return er.dtype(name)


# ------------------------------------------------------------------------------ names
def test_atan2_has_its_own_family_and_takes_two_operands():
    assert canonical_op("arctan2") == canonical_op("atan2") == "atan2"
    assert canonical_op("atan2_") == "atan2"
    assert family("atan2") == "float_function2" != family("div")
    assert arity("atan2") == (2, 2)
    for policy in POLICY_NAMES:
        with pytest.raises(TypeError, match=r"atan2 takes 2 operands \(y, x\), got 3"):
            result_type("float32[3]", "float32[3]", "float32[3]", op="atan2", policy=policy)
        with pytest.raises(TypeError, match="atan2 takes 2 operands"):
            result_type("float32[3]", op="atan2", policy=policy)


def test_the_op_declares_the_family():
    assert er.ops.get_op("atan2").promotion == "atan2"
    y = np.array([1, 2], dtype=np.int8)
    assert er.atan2(y, y, policy="numpy").rounded.dtype is _dt("float16")
    assert er.atan2(y, y).rounded.dtype is _dt("float32")


# ------------------------------------------------------------------------------ numpy
@pytest.mark.parametrize("operands,want", [
    (("int8[3]", "int8[3]"), "float16"),  # np.divide gives float64
    (("int8[3]", "int16[3]"), "float32"),
    (("int8[3]", 2), "float16"),  # a weak Python int
    ((2, "int8[3]"), "float16"),
    (("int8[3]", 2.5), "float64"),  # a weak Python float with an integer array
    (("float16[3]", 2.5), "float16"),
    (("int8[3]", "int32[]"), "float64"),  # a 0-d array is strong
    (("bool[3]", "bool[3]"), "float16"),
    (("int8[3]", np.float32(0.5)), "float32"),  # a numpy scalar is strong
    (("int64[3]", "int64[3]"), "float64"),
    (("float32[3]", "float64[3]"), "float64"),
    # the common dtype int16 has no loop: the first loop both inputs cast to safely is float16
    (("int8[3]", "uint8[3]"), "float16"),
    (("uint16[3]", "int8[3]"), "float32"),
    (("uint8[3]", -1), "float16"),  # the int is converted to float16, no OverflowError
    (("int8[3]", 300), "float16"),
    # ml_dtypes: a common float keeps its own loop; a sub-byte integer's common dtype has no
    # loop, and the float8 input's own loop comes first
    (("bfloat16[3]", "int8[3]"), "bfloat16"),
    (("bfloat16[3]", "float16[3]"), "float32"),
    (("float8_e4m3fn[3]", "float8_e5m2[3]"), "float32"),
    (("int1[3]", "float8_e4m3fn[3]"), "float8_e4m3fn"),
    (("int4[3]", "float8_e5m2[3]"), "float32"),
    (("float8_e4m3fn[3]", 2), "float8_e4m3fn"),
    (("bfloat16[3]", 0.5), "float32"),
    (("int4[3]", "int4[3]"), "float16"),
])
def test_numpy_arctan2(operands, want):
    """As measured with ml_dtypes 0.6 (and 0.5, which lacks int1)."""
    if "int1[3]" not in operands:
        assert result_type(*operands, op="atan2", policy=_numpy("0.5")) is _dt(want)
    assert result_type(*operands, op="atan2", policy=_numpy("0.6")) is _dt(want)


@pytest.mark.parametrize("operands,want", [
    # ml_dtypes 0.7: a float8 with a sub-byte integer keeps the float8 (its own loop), a
    # Python float keeps an ml_dtypes float
    (("int4[3]", "float8_e5m2[3]"), "float8_e5m2"),
    (("bfloat16[3]", 0.5), "bfloat16"),
    (("int4[3]", "int4[3]"), "float16"),
    (("float8_e4m3fn[3]", "float8_e5m2[3]"), "float32"),
])
def test_numpy_arctan2_ml_dtypes_07(operands, want):
    assert result_type(*operands, op="atan2", policy=_numpy("0.7")) is _dt(want)


def _numpy(ml_dtypes):
    """The numpy policy with the rules of an ml_dtypes minor, whichever is installed."""
    return get_policy("numpy", ml_dtypes=ml_dtypes)


def test_numpy_arctan2_is_not_divide():
    assert result_type("int8[3]", "int8[3]", op="div", policy="numpy") is _dt("float64")
    assert result_type("int8[3]", "int8[3]", op="arctan2", policy="numpy") is _dt("float16")


def test_numpy_arctan2_has_no_complex_loop():
    for operands in (("complex64[3]", "float32[3]"), ("float32[3]", 1j),
                     ("int8[3]", "complex128[]")):
        with pytest.raises(PromotionError) as info:
            result_type(*operands, op="atan2", policy="numpy")
        assert info.value.library_error == (
            "TypeError", "ufunc 'arctan2' not supported for the input types, and the inputs "
                         "could not be safely coerced to any supported types according to the "
                         "casting rule ''safe''")


def test_numpy_arctan2_inplace_and_explain():
    with pytest.raises(PromotionError) as info:
        check_inplace("atan2", "int8", "int8[3]", policy="numpy")
    assert info.value.library_error[1] == ("Cannot cast ufunc 'arctan2' output from "
                                           "dtype('float16') to dtype('int8') with casting rule "
                                           "'same_kind'")
    assert check_inplace("atan2", "float32", "int8[3]", policy="numpy") is _dt("float32")
    text = explain("int8[3]", "uint8[3]", op="atan2", policy="numpy")
    assert "np.arctan2 has no int16 loop: the first loop that int8, uint8 cast to safely is " \
           "float16" in text
    assert text.endswith("result: float16")


def _np_make(spec):
    name, shape = spec[:-1].split("[")
    dt = np.dtype(getattr(ml_dtypes, name) if hasattr(ml_dtypes, name) else name)
    return (np.zeros if name == "int1" else np.ones)((3,) if shape else (), dtype=dt)


def test_numpy_arctan2_live_every_pair():
    """np.arctan2 itself, every ordered pair of numpy's dtypes (ml_dtypes included)."""
    pol = get_policy("numpy")
    for a, b in itertools.product(pol.formats, repeat=2):
        x, y = f"{a.name}[3]", f"{b.name}[]"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = str(np.arctan2(_np_make(x), _np_make(y)).dtype)
        except TypeError:
            got = None
        try:
            mine = result_type(x, y, op="atan2", policy="numpy").name
        except PromotionError:
            mine = None
        assert got == mine, (x, y, got, mine)


# ------------------------------------------------------------------------------ torch, jax
def test_torch_atan2_is_true_division():
    assert result_type("int8[3]", "int8[3]", op="atan2") is _dt("float32")
    assert result_type("bool[3]", "bool[3]", op="atan2") is _dt("float32")
    assert result_type("int64[3]", "float16[]", op="atan2") is _dt("float16")
    assert result_type("int8[3]", "int8[3]", op="atan2",
                       policy=get_policy("torch", default_dtype="float64")) is _dt("float64")
    with pytest.raises(PromotionError) as info:
        result_type("complex64[3]", "float32[3]", op="atan2")
    assert info.value.library_error == ("NotImplementedError",
                                        "\"atan2_cpu\" not implemented for 'ComplexFloat'")
    assert "float8" in explain("float8_e4m3fn[3]", "float8_e4m3fn[3]", op="atan2") \
        and "no CPU kernel" in explain("float8_e4m3fn[3]", "float8_e4m3fn[3]", op="atan2")


def test_torch_inplace_atan2_checks_the_cast_before_the_kernel():
    with pytest.raises(PromotionError) as info:
        check_inplace("atan2", "float32", "complex64[3]")
    assert info.value.library_error == ("RuntimeError", "result type ComplexFloat can't be cast "
                                                        "to the desired output type Float")
    with pytest.raises(PromotionError) as info:
        check_inplace("atan2", "complex64", "complex64[3]")
    assert info.value.library_error[0] == "NotImplementedError"
    with pytest.raises(PromotionError, match="can't be cast to the desired output type Char"):
        check_inplace("atan2", "int8", "int8[3]")


@pytest.mark.parametrize("policy", ["jax", "jax_x64"])
def test_jax_atan2_is_true_division(policy):
    for operands in (("int8[3]", "int8[3]"), ("int8[3]", 2.5), ("int64[3]", "int64[3]"),
                     ("bool[3]", True), ("float16[3]", 2), ("complex64[3]", "float32[3]")):
        mine = resolve(*operands, op="atan2", policy=policy)
        div = resolve(*operands, op="div", policy=policy)
        assert (mine.result, mine.weak) == (div.result, div.weak), operands
    assert result_type("int64[3]", "int64[3]", op="atan2", policy=policy) is _dt(
        "float64" if policy == "jax_x64" else "float32")
    with pytest.raises(PromotionError) as info:
        result_type("int2[3]", 1, op="atan2", policy=policy)
    assert info.value.library_error == ("TypeError", "atan2 does not accept dtype int2 at "
                                        "position 0. Accepted dtypes at position 0 are subtypes "
                                        "of floating, complexfloating.")


# ------------------------------------------------------------------------------ spec policies
def test_array_api_atan2_takes_real_floating_dtypes():
    assert result_type("float32[3]", "float64[3]", op="atan2", policy="array_api") is _dt(
        "float64")
    assert result_type("float32[3]", 2, op="atan2", policy="array_api") is _dt("float32")
    for operands in (("int8[3]", "int8[3]"), ("complex64[3]", "complex64[3]"),
                     ("bool[3]", "bool[3]")):
        with pytest.raises(PromotionError, match="real-valued floating-point") as info:
            result_type(*operands, op="atan2", policy="array_api")
        assert info.value.reason == "unspecified"
    # as sqrt of an integer array: unspecified
    with pytest.raises(PromotionError) as info:
        result_type("int8[3]", op="sqrt", policy="array_api")
    assert info.value.reason == "unspecified"


def test_aclnn_atan2_is_the_tables_then_the_functions_rule():
    assert result_type("float16[3]", "float32[3]", op="atan2", policy="aclnn") is _dt("float32")
    assert result_type("bfloat16[3]", "int8[3]", op="atan2", policy="aclnn") is _dt("bfloat16")
    for operands in (("int8[3]", "int8[3]"), ("bool[3]", "bool[3]"),
                     ("complex64[3]", "float32[3]")):
        with pytest.raises(PromotionError, match="caller's out dtype") as info:
            result_type(*operands, op="atan2", policy="aclnn")
        assert info.value.reason == "unspecified"


def test_kael_has_no_atan2():
    with pytest.raises(PromotionError, match="kael has no atan2 operation") as info:
        result_type("float32[3]", "float32[3]", op="atan2", policy="kael")
    assert info.value.reason == "unsupported"


# ------------------------------------------------------------------------------ every policy
@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_every_policy_answers_atan2(policy):
    pol = get_policy(policy)
    for operands in (("int8[3]", "float32[3]"), ("uint8[3]", 2), ("float16[3]", "float64[]"),
                     ("complex64[3]", "float32[3]"), ("bool[3]", "bool[3]")):
        try:
            out = result_type(*operands, op="atan2", policy=policy)
        except PromotionError as exc:
            assert str(exc).startswith(f"{pol.name}:") and exc.op == "atan2"
            assert exc.remedy and "Fix:" in str(exc)
        else:
            assert out.kind in ("float", "complex") and out in pol.formats
        assert explain(*operands, op="atan2", policy=policy).splitlines()[1] == "op: atan2"


@pytest.mark.parametrize("policy", ["torch", "numpy", "jax", "jax_x64", "array_api", "aclnn"])
def test_atan2_is_symmetric(policy):
    fmts = get_policy(policy).formats
    if policy == "numpy":
        fmts = fmts[:14]  # ml_dtypes' float8 pairs are not symmetric in numpy
    for a, b in itertools.combinations(fmts, 2):
        answers = []
        for x, y in ((a, b), (b, a)):
            try:
                answers.append(result_type(f"{x.name}[3]", f"{y.name}[3]", op="atan2",
                                           policy=policy).name)
            except PromotionError:
                answers.append("error")
        assert answers[0] == answers[1], (a.name, b.name, answers)


# ------------------------------------------------------------------------------ recorded
@pytest.mark.parametrize("library", list(F.LIBRARIES))
def test_atan2_cells_are_recorded_and_agree(library):
    verdicts = {}
    for cell in F.cells(library):
        if cell.op.rstrip("_") != "atan2":
            continue
        verdict, detail = F.compare(cell)
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        assert verdict != "disagree", (cell.id, detail)
    assert verdicts.get("agree", 0) > 2000, verdicts
    ops = {t["op"] for t in F.load(library)["tables"]}
    assert "atan2" in ops and ("atan2_" in ops) == (not library.startswith("jax"))


@pytest.mark.parametrize("library", list(F.NUMPY_FIXTURES.values()))
def test_recorded_numpy_int8_pair_is_float16(library):
    cells = {(c.op, c.operands): c for c in F.cells(library)}
    assert cells["atan2", ("int8[3]", "int8[3]")].dtype == "float16"
    assert cells["div", ("int8[3]", "int8[3]")].dtype == "float64"
    assert cells["atan2", ("int8[3]", "uint8[3]")].dtype == "float16"


@pytest.mark.skipif(importlib.util.find_spec("array_api_strict") is None,
                    reason="array-api-strict is not installed")
def test_live_array_api_strict_atan2():
    import array_api_strict as xp

    pol = get_policy("array_api")
    for a, b in itertools.product(pol.formats, repeat=2):
        x, y = (xp.ones(3, dtype=getattr(xp, f.name)) for f in (a, b))
        try:
            got = str(xp.atan2(x, y).dtype).split(".")[-1]
        except TypeError:
            got = None
        try:
            mine = result_type(f"{a.name}[3]", f"{b.name}[3]", op="atan2",
                               policy="array_api").name
        except PromotionError:
            mine = None
        assert got == mine, (a.name, b.name, got, mine)
