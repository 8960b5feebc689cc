"""The operations beyond add/sub/mul/div: names, arity, and every policy's answer.

Binary: maximum, minimum, fmax, fmin, fmod. Unary: sqrt, rsqrt, reciprocal, abs, negative.
Ternary: addcmul, addcdiv, clamp, fma. The recorded cells of torch, numpy and jax are checked
in test_promotion_fixtures.py; here: the names, properties, the error cells' messages, the
spec-based policies (array API, aclnn, kael) and the fma rule.
"""

from __future__ import annotations

import importlib.util
import itertools

import pytest

import exactref as er
from exactref.promotion import (
    ARITY,
    OPS,
    POLICY_NAMES,
    TERNARY,
    UNARY,
    PromotionError,
    arity,
    canonical_op,
    check_inplace,
    explain,
    family,
    get_policy,
    resolve,
    result_type,
)

NEW_BINARY = ("maximum", "minimum", "fmax", "fmin", "fmod")
NEW_UNARY = ("sqrt", "rsqrt", "reciprocal", "abs", "negative")
#: the reductions' ops (one operand; resolved by the engine from each policy's accumulators)
REDUCTIONS = ("sum", "mean")
NEW_TERNARY = ("addcmul", "addcdiv", "clamp", "fma")


# ------------------------------------------------------------------------------ names
@pytest.mark.parametrize("alias,name", [
    ("maximum", "maximum"), ("minimum", "minimum"), ("fmax", "fmax"), ("fmin", "fmin"),
    ("fmod", "fmod"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"), ("reciprocal", "reciprocal"),
    ("abs", "abs"), ("absolute", "abs"), ("neg", "negative"), ("negative", "negative"),
    ("clip", "clamp"), ("clamp_", "clamp"), ("addcmul", "addcmul"), ("addcdiv_", "addcdiv"),
    ("fma", "fma"), ("subtract", "sub"), ("divide", "div"), ("true_divide", "div"),
    ("Maximum", "maximum"), (" sqrt ", "sqrt"),
])
def test_aliases(alias, name):
    assert canonical_op(alias) == name


def test_max_and_min_are_not_aliases():
    """torch.max(x) and np.max(x) are reductions: their names stay unknown here."""
    for name in ("max", "min", "amax"):
        with pytest.raises(ValueError, match="unknown operation") as info:
            canonical_op(name)
        assert "maximum" in str(info.value) or "minimum" in str(info.value)


@pytest.mark.parametrize("typo,close", [("maximun", "maximum"), ("sqrtt", "sqrt"),
                                        ("clipp", "clip"), ("recipocal", "reciprocal"),
                                        ("fmodd", "fmod"), ("negatve", "negative")])
def test_unknown_names_raise_value_error_with_close_matches(typo, close):
    with pytest.raises(ValueError, match=f"close matches: .*{close}"):
        result_type("float32[3]", op=typo)


def test_families_and_arity():
    assert {family(o) for o in ("maximum", "minimum")} == {"extremum"}
    assert {family(o) for o in ("fmax", "fmin")} == {"fextremum"}
    assert family("sqrt") == family("rsqrt") == "root"
    assert set(UNARY) == {family(o) for o in NEW_UNARY + REDUCTIONS}
    assert set(TERNARY) == {family(o) for o in NEW_TERNARY}
    assert arity("sqrt") == (1, 1) and arity("fma") == (3, 3) and arity("clamp") == (2, 3)
    assert arity("add") is None and arity(None) is None
    assert set(ARITY) <= set(OPS.values())


@pytest.mark.parametrize("op,operands", [
    ("sqrt", ("int8[3]", "int8[3]")), ("abs", ()), ("negative", ("int8[3]", 1)),
    ("clamp", ("int8[3]",)), ("clamp", ("int8[3]",) * 4), ("fma", ("int8[3]", "int8[3]")),
    ("addcmul", ("int8[3]",) * 2),
])
def test_wrong_number_of_operands_is_a_type_error(op, operands):
    for policy in POLICY_NAMES:
        with pytest.raises(TypeError, match=f"{canonical_op(op)} takes") as info:
            if operands:
                result_type(*operands, op=op, policy=policy)
            else:
                get_policy(policy).resolve([], op, er.promotion._engine.Trace())
        assert not isinstance(info.value, PromotionError)


# ------------------------------------------------------------------------------ every policy
_SAMPLES = {
    1: [("int8[3]",), ("float16[]",), ("complex64[3]",), ("bool[3]",), (0.5,)],
    2: [("int8[3]", "float32[3]"), ("uint8[3]", 2), ("float16[3]", "float64[]"),
        ("complex64[3]", "float32[3]"), ("bool[3]", "bool[3]")],
    3: [("int8[3]", "float16[3]", "int32[3]"), ("float32[3]", 0.5, 2), ("int64[3]", 0.5, "float32[]"),
        ("bool[3]", "bool[3]", "bool[3]"), ("complex64[3]", "float32[3]", "float32[3]")],
}


@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("op", NEW_BINARY + NEW_UNARY + NEW_TERNARY)
def test_every_policy_answers_every_new_op(policy, op):
    """A dtype, or a PromotionError that names the policy, the op and a fix; never anything
    else. explain() never raises."""
    n = arity(op)[1] if arity(op) else 2
    for operands in _SAMPLES[n]:
        try:
            out = result_type(*operands, op=op, policy=policy)
        except PromotionError as exc:
            text = str(exc)
            assert text.startswith(f"{get_policy(policy).name}:"), text
            assert exc.op == op and exc.reason in ("promotion", "operation", "unsupported",
                                                    "unspecified", "value"), text
            assert exc.remedy and "Fix:" in text, text
        else:
            assert out in get_policy(policy).formats or out.kind == "bool"
        text = explain(*operands, op=op, policy=policy)
        assert text.splitlines()[1] == f"op: {op}"
        assert text.splitlines()[-1].startswith(("result: ", "error: PromotionError"))


@pytest.mark.parametrize("policy", ["torch", "jax", "jax_x64", "array_api", "aclnn"])
@pytest.mark.parametrize("op", NEW_BINARY)
def test_binary_ops_are_symmetric(policy, op):
    """maximum(a, b) and maximum(b, a) have one dtype (or both raise), as their library's
    promotion is symmetric."""
    fmts = get_policy(policy).formats
    for a, b in itertools.combinations(fmts, 2):
        answers = []
        for x, y in ((a, b), (b, a)):
            try:
                answers.append(result_type(f"{x.name}[3]", f"{y.name}[3]", op=op,
                                           policy=policy).name)
            except PromotionError:
                answers.append("error")
        assert answers[0] == answers[1], (a.name, b.name, answers)


def test_numpy_binary_ops_are_symmetric_on_numpy_dtypes():
    fmts = get_policy("numpy").formats[:14]
    for op in NEW_BINARY:
        for a, b in itertools.combinations(fmts, 2):
            try:
                ab = result_type(f"{a.name}[3]", f"{b.name}[3]", op=op, policy="numpy")
            except PromotionError:
                with pytest.raises(PromotionError):
                    result_type(f"{b.name}[3]", f"{a.name}[3]", op=op, policy="numpy")
                continue
            assert result_type(f"{b.name}[3]", f"{a.name}[3]", op=op, policy="numpy") is ab


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_maximum_minimum_fmax_fmin_agree_on_real_dtypes(policy):
    """The four share their dtype rules wherever the policy answers."""
    fmts = [f for f in get_policy(policy).formats if f.kind != "complex"][:12]
    for a, b in itertools.product(fmts, repeat=2):
        got = set()
        for op in ("maximum", "minimum", "fmax", "fmin"):
            try:
                got.add(result_type(f"{a.name}[3]", f"{b.name}[3]", op=op, policy=policy).name)
            except PromotionError as exc:
                got.add(exc.reason if exc.reason != "unsupported" else None)
        got.discard(None)  # the array API has no fmax and fmin; kael has none of the four
        assert len(got) <= 1, (policy, a.name, b.name, got)


# ------------------------------------------------------------------------------ torch
def test_torch_unary_rules():
    assert result_type("int64[3]", op="rsqrt") is er.dtype("float32")
    assert result_type("bool[]", op="sqrt") is er.dtype("float32")
    assert result_type("uint8[3]", op="reciprocal") is er.dtype("float32")
    assert result_type("complex64[3]", op="abs") is er.dtype("float32")
    assert result_type("complex32[3]", op="abs") is er.dtype("float16")
    assert result_type("int8[3]", op="abs") is er.dtype("int8")
    res = resolve("complex128[3]", op="abs")
    assert (res.result.name, res.compute.name) == ("float64", "complex128")
    pol = get_policy("torch", default_dtype="float64")
    assert result_type("int8[3]", op="sqrt", policy=pol) is er.dtype("float64")


def test_torch_error_cells_are_readable():
    with pytest.raises(PromotionError) as info:
        result_type("complex64[3]", "float32[3]", op="maximum")
    assert str(info.value).startswith("torch: maximum does not accept complex operands (op "
                                      "maximum). torch raises RuntimeError: maximum not "
                                      "implemented for complex tensors. Fix: ")
    with pytest.raises(PromotionError, match="Negation, the `-` operator, on a bool tensor"):
        result_type("bool[3]", op="neg")
    with pytest.raises(PromotionError, match="Integer division with addcdiv") as info:
        result_type("float32[3]", "int8[3]", "int16[3]", op="addcdiv")
    assert info.value.reason == "operation" and "t1.to(torch.float32)" in info.value.remedy
    assert result_type("int8[3]", "int8[3]", "float16[3]", op="addcdiv") is er.dtype("float16")
    with pytest.raises(PromotionError, match="clamp is not supported for complex types"):
        result_type("complex64[3]", "float32[3]", "float32[3]", op="clamp")
    with pytest.raises(PromotionError, match='"clamp_cpu" not implemented for '
                                             "'ComplexFloat'"):
        result_type("float32[3]", "complex64[3]", "float32[3]", op="clamp")
    with pytest.raises(PromotionError, match='"fmod_cpu" not implemented for'):
        result_type("complex64[3]", 2, op="fmod")
    with pytest.raises(PromotionError, match='"ge_cpu" not implemented'):
        result_type("complex64[3]", "float32[3]", op="ge")


def test_torch_clamp_with_scalars_promotes():
    assert result_type("int8[3]", 0.5, 2, op="clamp") is er.dtype("float32")
    assert result_type("int8[3]", 0, 2, op="clamp") is er.dtype("int8")
    assert result_type("int8[3]", "float32[3]", op="clamp") is er.dtype("float32")  # min only
    with pytest.raises(PromotionError, match="value cannot be converted to type double"):
        result_type("float16[3]", 0.5, 1j, op="clamp")


def test_torch_inplace_unary():
    with pytest.raises(PromotionError) as info:
        check_inplace("sqrt", "int64")
    assert info.value.library_error == (
        "RuntimeError", "result type Float can't be cast to the desired output type Long")
    with pytest.raises(PromotionError, match="In-place abs is not supported for complex"):
        check_inplace("abs", "complex64")
    assert check_inplace("abs", "int8") is er.dtype("int8")
    assert check_inplace("clamp", "float16", "float32[]", 2) is er.dtype("float16")


def test_torch_cpu_gaps_are_explained():
    text = explain("uint16[3]", "uint16[3]", op="maximum")
    assert "no CPU kernel for maximum on uint16" in text and text.endswith("result: uint16")


# ------------------------------------------------------------------------------ numpy
def test_numpy_unary_rules():
    assert result_type("int8[3]", op="sqrt", policy="numpy") is er.dtype("float16")
    assert result_type("int16[3]", op="sqrt", policy="numpy") is er.dtype("float32")
    assert result_type("int32[3]", op="rsqrt", policy="numpy") is er.dtype("float64")
    assert result_type("int8[3]", op="reciprocal", policy="numpy") is er.dtype("int8")
    assert result_type("bool[3]", op="reciprocal", policy="numpy") is er.dtype("int8")
    assert result_type("bool[3]", op="abs", policy="numpy") is er.dtype("bool")
    assert result_type("bcomplex32[3]", op="abs", policy="numpy") is er.dtype("bfloat16")
    assert result_type("int4[3]", op="sqrt", policy="numpy") is er.dtype("float16")
    assert result_type(2, op="sqrt", policy="numpy") is er.dtype("float64")
    assert result_type(True, op="sqrt", policy="numpy") is er.dtype("float16")
    with pytest.raises(PromotionError, match="numpy boolean negative") as info:
        result_type("bool[3]", op="negative", policy="numpy")
    assert "logical_not" in info.value.remedy
    with pytest.raises(PromotionError, match="Cannot cast ufunc 'sqrt' output from "
                                             r"dtype\('float16'\) to dtype\('int8'\)"):
        check_inplace("sqrt", "int8", policy="numpy")


def test_numpy_binary_and_clip_rules():
    # ml_dtypes' loops: fmax of int1 and float8 is float8, add of the same is int1 with
    # ml_dtypes 0.6 and float8 with 0.7
    for minor in ("0.6", "0.7"):
        assert result_type("int1[3]", "float8_e4m3fn[3]", op="fmax",
                           policy=get_policy("numpy", ml_dtypes=minor)) is er.dtype(
            "float8_e4m3fn")
    assert result_type("int1[3]", "float8_e4m3fn[3]", policy=get_policy(
        "numpy", ml_dtypes="0.6")) is er.dtype("int1")
    assert result_type("int1[3]", "float8_e4m3fn[3]", policy=get_policy(
        "numpy", ml_dtypes="0.7")) is er.dtype("float8_e4m3fn")
    assert result_type("bool[3]", "bool[3]", op="fmod", policy="numpy") is er.dtype("int8")
    assert result_type("complex64[3]", "complex64[3]", op="maximum",
                       policy="numpy") is er.dtype("complex64")
    with pytest.raises(PromotionError, match="ufunc 'fmod' not supported"):
        result_type("complex64[3]", 2, op="fmod", policy="numpy")
    # np.clip has only numpy's own loops: bfloat16 goes to the float32 loop
    assert result_type("bfloat16[3]", 0, 1, op="clip", policy="numpy") is er.dtype("float32")
    assert result_type("int4[3]", "int4[3]", "int4[3]", op="clip",
                       policy="numpy") is er.dtype("int8")
    assert result_type("int8[3]", 0.5, 2, op="clip", policy="numpy") is er.dtype("float64")
    # np.clip(x, lo, None) is np.maximum(x, lo)
    assert result_type("bfloat16[3]", "bfloat16[3]", op="clip",
                       policy="numpy") is er.dtype("bfloat16")
    for op in ("addcmul", "addcdiv"):
        with pytest.raises(PromotionError, match=f"numpy has no {op}") as info:
            result_type("float32[3]", "float32[3]", "float32[3]", op=op, policy="numpy")
        assert info.value.reason == "unsupported"


# ------------------------------------------------------------------------------ jax
@pytest.mark.parametrize("policy", ["jax", "jax_x64"])
def test_jax_rules(policy):
    x64 = policy == "jax_x64"
    assert result_type("int8[3]", op="sqrt", policy=policy) is er.dtype("float32")
    assert result_type("int64[3]", op="rsqrt", policy=policy).name == (
        "float64" if x64 else "float32")
    res = resolve(2, op="reciprocal", policy=policy)
    assert res.weak and res.result.name == ("float64" if x64 else "float32")
    assert result_type("complex64[3]", op="abs", policy=policy) is er.dtype("float32")
    assert result_type("int1[3]", op="abs", policy=policy) is er.dtype("int8")
    assert result_type("uint2[3]", op="abs", policy=policy) is er.dtype("uint2")
    with pytest.raises(PromotionError, match="abs does not accept dtype int4"):
        result_type("int4[3]", op="abs", policy=policy)
    with pytest.raises(PromotionError, match="sqrt does not accept dtype uint1"):
        result_type("uint1[3]", op="sqrt", policy=policy)
    with pytest.raises(PromotionError, match=r"got integer_pow\(int2\[3\], -1\)"):
        result_type("int2[3]", op="reciprocal", policy=policy)
    with pytest.raises(PromotionError, match="neg does not accept dtype bool"):
        result_type(True, op="negative", policy=policy)
    with pytest.raises(PromotionError, match="Clip received a complex value"):
        result_type("float32[3]", 0, 1j, op="clamp", policy=policy)
    assert result_type("bool[3]", "bool[3]", op="fmod", policy=policy) is er.dtype("int32")
    with pytest.raises(PromotionError, match="jax has no addcmul"):
        result_type("float32[3]", "float32[3]", "float32[3]", op="addcmul", policy=policy)


# ------------------------------------------------------------------------------ fma
@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_fma_is_mul_then_add(policy):
    """fma(x, y, z) has the dtype of x * y + z: the product (an array with dimensions when a
    factor has them) added to z."""
    pol = get_policy(policy)
    fmts = [f for f in pol.formats if f.bits >= 8][:8]
    for a, b, c in itertools.product(fmts, repeat=3):
        for shapes in (("3", "3", "3"), ("", "3", ""), ("", "", "3")):
            x, y, z = (f"{f.name}[{s}]" for f, s in zip((a, b, c), shapes, strict=True))
            try:
                want = pol.resolve(
                    [er.promotion.operand(f"{result_type(x, y, op='mul', policy=policy).name}"
                                          f"[{'3' if '3' in shapes[:2] else ''}]"),
                     er.promotion.operand(z)], "add", er.promotion._engine.Trace()).result
            except PromotionError:
                with pytest.raises(PromotionError) as info:
                    result_type(x, y, z, op="fma", policy=policy)
                assert info.value.op == "fma" and "(op fma, its " in str(info.value)
                continue
            assert result_type(x, y, z, op="fma", policy=policy) is want, (x, y, z)


def test_fma_differs_from_addcmul_in_torch():
    """addcmul promotes its three operands at once; x * y + z promotes twice."""
    assert result_type("int8[3]", "float64[]", "float32[3]", op="fma") is er.dtype("float64")
    assert result_type("float32[3]", "int8[3]", "float64[]", op="addcmul") is er.dtype("float32")
    # two Python factors multiply in Python first: True * True is the int 1
    assert result_type(True, True, "uint8[3]", op="fma") is er.dtype("uint8")
    assert result_type(2, 0.5, "int8[3]", op="fma", policy="numpy") is er.dtype("float64")
    with pytest.raises(OverflowError):  # numpy: the product 2**40 does not fit int8
        result_type(2**20, 2**20, "int8[3]", op="fma", policy="numpy")


def test_fma_explain_names_both_steps():
    text = explain("int8[3]", "float64[]", "float32[3]", op="fma")
    assert "fma: the dtype of x * y + z" in text and "mul: " in text and "add: " in text
    assert "fma: x * y is float64 array with dimensions" in text
    assert text.endswith("result: float64")


# ------------------------------------------------------------------------------ array API
def test_array_api_functions():
    aa = "array_api"
    assert result_type("int8[3]", "uint8[3]", op="maximum", policy=aa) is er.dtype("int16")
    assert result_type("complex64[3]", op="abs", policy=aa) is er.dtype("float32")
    assert result_type("float32[3]", op="reciprocal", policy=aa) is er.dtype("float32")
    assert result_type("int8[3]", op="negative", policy=aa) is er.dtype("int8")
    for bad in (("int8[3]",), ("bool[3]",)):
        with pytest.raises(PromotionError, match="floating-point"):
            result_type(*bad, op="sqrt", policy=aa)
    with pytest.raises(PromotionError, match="real-valued"):
        result_type("complex64[3]", "complex64[3]", op="maximum", policy=aa)
    with pytest.raises(PromotionError, match="numeric"):
        result_type("bool[3]", op="negative", policy=aa)
    for op, instead in (("fmod", "remainder"), ("fmax", "maximum"), ("rsqrt", "1 / sqrt"),
                        ("addcmul", "x \\+ t1 \\* t2")):
        n = 3 if op == "addcmul" else (1 if op == "rsqrt" else 2)
        with pytest.raises(PromotionError, match=f"the standard has no {op}.*Fix: use {instead}"):
            result_type(*("float32[3]",) * n, op=op, policy=aa)
    # fma: x * y + z, both steps specified
    assert result_type("float32[3]", "float64[3]", 2, op="fma", policy=aa) is er.dtype("float64")


def test_array_api_clip():
    aa = "array_api"
    assert result_type("int8[3]", "int16[3]", 100, op="clip", policy=aa) is er.dtype("int8")
    assert result_type("float32[3]", 0, 0.5, op="clip", policy=aa) is er.dtype("float32")
    assert result_type("float32[3]", "float64[]", op="clip", policy=aa) is er.dtype("float32")
    for bad in (("int8[3]", 0.5, 1), ("int8[3]", "float32[3]", 1), ("float32[3]", "int8[3]", 1),
                ("int8[3]", 300, 1), ("float32[3]", True, 1), ("complex64[3]", 0, 1),
                ("float32[3]", 0, 1j)):
        with pytest.raises(PromotionError) as info:
            result_type(*bad, op="clip", policy=aa)
        assert info.value.reason == "unspecified", bad


@pytest.mark.skipif(importlib.util.find_spec("array_api_strict") is None,
                    reason="array-api-strict is not installed")
def test_live_array_api_strict_functions():
    import array_api_strict as xp

    pol = get_policy("array_api")
    fns = {"maximum": xp.maximum, "minimum": xp.minimum, "sqrt": xp.sqrt, "abs": xp.abs,
           "negative": xp.negative, "reciprocal": xp.reciprocal}
    for op, fn in fns.items():
        for a in pol.formats:
            x = xp.ones(3, dtype=getattr(xp, a.name))
            others = pol.formats if op in ("maximum", "minimum") else [None]
            for b in others:
                args = (x,) if b is None else (x, xp.ones(3, dtype=getattr(xp, b.name)))
                try:
                    got = str(fn(*args).dtype).split(".")[-1]
                except TypeError:
                    got = None
                specs = [f"{a.name}[3]"] + ([] if b is None else [f"{b.name}[3]"])
                try:
                    mine = result_type(*specs, op=op, policy="array_api").name
                except PromotionError:
                    mine = None
                assert got == mine, (op, specs, got, mine)
    for a, b in itertools.product(pol.formats, repeat=2):
        x, lo = xp.ones(3, dtype=getattr(xp, a.name)), xp.zeros(3, dtype=getattr(xp, b.name))
        try:
            got = str(xp.clip(x, lo, None).dtype).split(".")[-1]
        except TypeError:
            got = None
        try:
            mine = result_type(f"{a.name}[3]", f"{b.name}[3]", op="clip", policy="array_api").name
        except PromotionError:
            mine = None
        assert got == mine, (a.name, b.name, got, mine)


# ------------------------------------------------------------------------------ aclnn
def test_aclnn_new_binary_ops_follow_the_tables():
    """An assumption (their pages print no table of their own): the tensor-tensor table."""
    pol = get_policy("aclnn")
    for op in NEW_BINARY:
        for a, b in itertools.product(pol.formats, repeat=2):
            try:
                want = result_type(f"{a.name}[3]", f"{b.name}[3]", op="add", policy="aclnn")
            except PromotionError:
                with pytest.raises(PromotionError):
                    result_type(f"{a.name}[3]", f"{b.name}[3]", op=op, policy="aclnn")
                continue
            assert result_type(f"{a.name}[3]", f"{b.name}[3]", op=op, policy="aclnn") is want
    s = er.promotion.Scalar(2.0, "float32")
    assert result_type("float16[3]", s, op="fmod", policy="aclnn") is er.dtype("float16")
    assert result_type("float16[3]", s, er.promotion.Scalar(1, "int8"), op="clamp",
                       policy="aclnn") is er.dtype("float16")


def test_aclnn_unary_ops():
    assert result_type("bfloat16[3]", op="sqrt", policy="aclnn") is er.dtype("bfloat16")
    assert result_type("int32[3]", op="abs", policy="aclnn") is er.dtype("int32")
    for op, spec in (("sqrt", "int32[3]"), ("reciprocal", "bool[3]"), ("abs", "complex64[3]"),
                     ("negative", "bool[3]")):
        with pytest.raises(PromotionError, match="caller's out dtype") as info:
            result_type(spec, op=op, policy="aclnn")
        assert info.value.reason == "unspecified"


# ------------------------------------------------------------------------------ kael
@pytest.mark.parametrize("op", [o for o in NEW_BINARY + NEW_UNARY + NEW_TERNARY if o != "fma"])
def test_kael_has_no_such_op(op):
    n = arity(op)[1] if arity(op) else 2
    with pytest.raises(PromotionError) as info:
        result_type(*("float32[3]",) * n, op=op, policy="kael")
    assert str(info.value).startswith(f"kael: kael has no {op} operation; its operations are "
                                      f"add, sub, mul, div, pow, floor_divide")
    assert info.value.reason == "unsupported"


def test_kael_fma_is_its_mul_then_add():
    assert result_type("int64[3]", 0.5, "float64[]", op="fma", policy="kael") is er.dtype(
        "float32")
    assert result_type("bool[3]", "bool[3]", "bool[3]", op="fma", policy="kael") is er.dtype(
        "int64")  # mul keeps Bool, then add_dtype: Bool + Bool gives I64


@pytest.mark.parametrize("policy,int8,uint8,mean_int8", [
    ("torch", "int64", "int64", None), ("numpy", "int64", "uint64", "float64"),
    ("jax", "int32", "uint32", "float32"), ("jax_x64", "int64", "uint64", "float64"),
    ("array_api", "int64", "uint64", None),
])
def test_reductions_and_cast(policy, int8, uint8, mean_int8):
    """sum (cumsum) accumulates bool and integers in the policy's integer, floats keep their
    format; mean (var, std) of integers is the policy's float or refused; cast gives its
    target: the promotion ops of the reductions' and cast's records."""
    assert result_type("int8[3]", op="sum", policy=policy).name == int8
    assert result_type("bool[3]", op="cumsum", policy=policy).name == int8
    assert result_type("uint8[3]", op="sum", policy=policy).name == uint8
    assert result_type("float32[3]", op="std", policy=policy).name == "float32"
    assert result_type("int8[3]", "float64", op="cast", policy=policy).name == "float64"
    if mean_int8 is None:
        with pytest.raises(PromotionError, match="mean of int8"):
            result_type("int8[3]", op="var", policy=policy)
    else:
        assert result_type("int8[3]", op="mean", policy=policy).name == mean_int8
    with pytest.raises(TypeError, match="sum takes 1 operand"):
        result_type("int8[3]", "int8[3]", op="sum", policy=policy)


def test_a_new_function_needs_no_entry_here():
    """A real function's record feeds its name to the promotion data when it is registered:
    one operand promotes as sqrt, two as atan2."""
    from exactref.promotion import add_function

    assert add_function("throwaway_fn1") == "sqrt"
    assert add_function("throwaway_fn2", 2) == "atan2"
    assert result_type("int8[3]", op="throwaway_fn1", policy="numpy").name == "float16"
    assert family("throwaway_fn2") == "float_function2"
    assert add_function("exp") == "sqrt" and add_function("pow", 2) == "pow"  # known: kept
