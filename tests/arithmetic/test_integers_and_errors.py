"""Integer add and multiply (exact, then wrapped, saturated or refused) and the errors of the
ops: shapes that do not broadcast, ``dtype=`` of another kind, alphas the output cannot take."""

from __future__ import annotations

import numpy as np
import pytest

import exactref as er
from exactref._formats import FORMATS

INTS = [f for f in FORMATS.values() if f.kind in ("int", "uint")]


def _edges(fmt):
    lo, hi = fmt.int_min, fmt.int_max
    vals = sorted({lo, lo + 1, -1 if lo < 0 else 0, 0, 1, 2, 3, hi // 2, hi - 1, hi})
    return [v for v in vals if lo <= v <= hi]


def _wrap(v, fmt):
    span = 1 << fmt.bits
    return (v - fmt.int_min) % span + fmt.int_min


def _saturate(v, fmt):
    return min(max(v, fmt.int_min), fmt.int_max)


def _grid(fmt):
    e = _edges(fmt)
    x = [a for a in e for _ in e]
    y = [b for _ in e for b in e]
    return x, y


def _array(values, fmt):
    return er.asarray(np.array(values, dtype=object if fmt.bits == 64 else np.int64)
                      .tolist(), fmt)


@pytest.mark.parametrize("alpha", [1, -1, 3, 0, -(2**40)])
@pytest.mark.parametrize("fmt", INTS, ids=lambda f: f.name)
def test_integer_add_wrap_and_saturate(fmt, alpha):
    x, y = _grid(fmt)
    xa, ya = _array(x, fmt), _array(y, fmt)
    exact = [a + alpha * b for a, b in zip(x, y, strict=True)]
    got = er.add(xa, ya, alpha=alpha).rounded
    assert got.dtype is fmt
    assert got.tolist() == [_wrap(v, fmt) for v in exact]
    assert er.add(xa, ya, alpha=alpha, overflow="wrap").rounded.tolist() == got.tolist()
    sat = er.add(xa, ya, alpha=alpha, overflow="saturate").rounded.tolist()
    assert sat == [_saturate(v, fmt) for v in exact]
    tol = er.add(xa, ya, alpha=alpha).tolerance().tolist()
    assert tol == [0.0] * len(x)  # integers are exact: one answer


@pytest.mark.parametrize("fmt", INTS, ids=lambda f: f.name)
def test_integer_multiply_wrap_and_saturate(fmt):
    x, y = _grid(fmt)
    xa, ya = _array(x, fmt), _array(y, fmt)
    exact = [a * b for a, b in zip(x, y, strict=True)]
    assert er.multiply(xa, ya).rounded.tolist() == [_wrap(v, fmt) for v in exact]
    assert er.multiply(xa, ya, overflow="saturate").rounded.tolist() == [
        _saturate(v, fmt) for v in exact]


@pytest.mark.parametrize("fmt", [FORMATS[n] for n in ("int8", "uint8", "int64", "uint64",
                                                      "int4")], ids=lambda f: f.name)
def test_integer_overflow_error(fmt):
    hi = _array([fmt.int_max], fmt)
    one = _array([1], fmt)
    with pytest.raises(OverflowError, match=fmt.name):
        er.add(hi, one, overflow="error")
    with pytest.raises(OverflowError):
        er.multiply(hi, _array([2], fmt), overflow="error")
    # in range: no error, the exact value
    assert er.add(one, one, overflow="error").rounded.tolist() == [2]


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_wrap_matches_numpy(name):
    """NumPy's integer add and multiply wrap: the same values."""
    rng = np.random.default_rng(5)
    info = np.iinfo(name)
    x = rng.integers(info.min, info.max, 500, dtype=name, endpoint=True)
    y = rng.integers(info.min, info.max, 500, dtype=name, endpoint=True)
    with np.errstate(over="ignore"):
        assert er.add(x, y).rounded.numpy().tolist() == np.add(x, y).tolist()
        assert er.multiply(x, y).rounded.numpy().tolist() == np.multiply(x, y).tolist()


def test_bool_is_logical():
    b = er.asarray([True, True, False, False], "bool")
    c = er.asarray([True, False, True, False], "bool")
    assert er.add(b, c).rounded.tolist() == [True, True, True, False]
    assert er.add(b, c, alpha=3).rounded.tolist() == [True, True, True, False]
    assert er.multiply(b, c).rounded.tolist() == [True, False, False, False]


def test_python_int_scalars_are_exact():
    """A Python int of any size is exact under an explicit overflow rule; the sum wraps once."""
    x = er.asarray([1, -1], "int8")
    assert er.add(x, 300, overflow="wrap").rounded.tolist() == [
        _wrap(301, FORMATS["int8"]), _wrap(299, FORMATS["int8"])]
    assert er.add(x, 2**100 + 5, overflow="wrap").rounded.tolist() == [6, 4]
    assert er.multiply(x, 2**64 + 3, overflow="wrap").rounded.tolist() == [3, -3]
    assert er.add(x, 300, overflow="saturate").rounded.tolist() == [127, 127]


#: The ops whose torch counterpart takes a Python scalar operand, and that counterpart.
_TORCH_SCALAR_OPS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "floor_divide": "floor_divide",
    "remainder": "remainder", "fmod": "fmod", "divide": "div",
}
_COMPARISONS = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
                "greater": "gt", "greater_equal": "ge"}
_OUT_OF_RANGE = [300, -1, -129, 70000, 2**31, 2**31 + 7, 2**63, 2**64 - 1, -(2**63)]


@pytest.mark.parametrize("name", sorted(_TORCH_SCALAR_OPS))
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_python_int_outside_the_format_converts_as_torch_converts(name, dtype):
    """Issue 19: under the torch policy a Python int outside the integer format is wrapped into
    it first, as torch 2.13 converts it (``torch.add(uint8 [1], 300)`` is 45, where er raised
    OverflowError claiming PyTorch raises); er.* gives exactly what torch gives, op by op."""
    torch = pytest.importorskip("torch")
    x = np.array([1, 5, 100, -3, 127], dtype=np.int64).astype(dtype)
    for v in _OUT_OF_RANGE:
        try:
            want = getattr(torch, _TORCH_SCALAR_OPS[name])(torch.from_numpy(x), v)
        except (RuntimeError, ZeroDivisionError):  # the int wraps to 0: torch divides by zero
            with pytest.raises(ZeroDivisionError):
                getattr(er, name)(x, v)
            continue
        got = getattr(er, name)(x, v).rounded
        assert got.dtype.name == str(want.dtype).removeprefix("torch."), (v, got.dtype)
        assert got.numpy().tolist() == want.numpy().tolist(), (name, dtype, v)


@pytest.mark.parametrize("name", sorted(_COMPARISONS))
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
def test_comparisons_with_an_out_of_range_int_are_exact(name, dtype):
    """A comparison compares a Python int exactly under every policy (as numpy 2 does, and as
    er's comparisons compare every operand as given): ``uint8 [1] < 2**31`` is True, where torch
    wraps 2**31 to 0 and says False; equivalents.torch models torch's answer. (er raised
    "outside bool's range" here before.)"""
    torch = pytest.importorskip("torch")
    import operator

    import exactref.equivalents.torch as ert

    py = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
          "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge}[name]
    x = np.array([1, 5, 100, -3, 127], dtype=np.int64).astype(dtype)
    for v in _OUT_OF_RANGE + [2**100]:
        want = [py(int(a), v) for a in x]
        for policy in ("torch", "numpy"):
            assert getattr(er, name)(x, v, policy=policy).rounded.tolist() == want, (v, policy)
        if -(2**63) <= v < 2**64:
            out = getattr(torch, _COMPARISONS[name])(torch.from_numpy(x), v)
            assert getattr(ert, name)(torch.from_numpy(x), v).covers(out).all(), v


def test_python_int_wraps_in_cast_and_selection():
    torch = pytest.importorskip("torch")
    assert er.cast(300, "int8").rounded.tolist() == torch.tensor(300).to(torch.int8).item() == 44
    x = np.array([1, 50], np.uint8)
    want = torch.maximum(torch.from_numpy(x), torch.tensor(300)).tolist()
    assert er.maximum(x, 300).rounded.tolist() == want == [44, 50]


@pytest.mark.parametrize("op", [er.add, er.subtract, er.multiply, er.maximum],
                         ids=lambda f: f.__name__)
def test_python_int_beyond_uint64_raises_as_torch_raises(op):
    """An int that fits neither int64 nor uint64 raises under the torch policy (PyTorch's ``int
    too big to convert``), naming the operand, the range and the remedy."""
    x = er.asarray([1, -1], "int64")
    with pytest.raises(OverflowError, match=r"y = 1267650600228229401496703205376 is outside "
                                            r"int64's range .*fits neither int64 nor uint64: "
                                            r"PyTorch raises.*pass overflow='wrap'"):
        op(x, 2**100)
    with pytest.raises(OverflowError, match="outside int8's range.*PyTorch raises"):
        op(er.asarray([1], "int8"), -(2**63) - 1)


def test_python_int_outside_the_format_under_the_other_policies():
    """numpy 2 (and jax) raise OverflowError for an out-of-range int in arithmetic and compare
    it exactly; so does er under those policies (never a message blaming PyTorch)."""
    x = np.array([1], np.uint8)
    for policy in ("numpy", "jax"):
        with pytest.raises(OverflowError, match="300") as info:
            er.add(x, 300, policy=policy)
        assert "PyTorch" not in str(info.value)
    assert er.less(x, 300, policy="numpy").rounded.tolist() == [True]
    assert er.less(x, 2**31, policy="numpy").rounded.tolist() == np.less(x, 2**31).tolist()
    assert er.equal(x, 257, policy="numpy").rounded.tolist() == [False]
    assert er.cast(300, "int8").rounded.tolist() == np.array(300).astype(np.int8).tolist()


@pytest.mark.parametrize("scalar", [np.float64(0.5), np.float32(0.5), np.float16(0.5),
                                    np.int64(300), np.int16(5), np.bool_(True)],
                         ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "float16", "bool"])
def test_numpy_scalar_operands_promote_as_the_policy_says(dtype, scalar):
    """Issue 19: ``er.add(int8 array, np.float64(0.5))`` was float64 while er.result_type,
    equivalents.torch.add and torch give float32 (torch takes a numpy scalar as a Python
    scalar); under the numpy policy a numpy scalar is strongly typed (NEP 50)."""
    torch = pytest.importorskip("torch")
    x = np.array([1, 0], dtype=dtype)
    got = er.add(x, scalar)
    assert got.rounded.dtype is er.result_type(x, scalar, op="add")
    want = torch.from_numpy(x) + scalar
    assert got.rounded.dtype.name == str(want.dtype).removeprefix("torch.")
    assert got.covers(want.numpy()).all()
    num = er.add(x, scalar, policy="numpy")
    assert num.rounded.dtype.name == np.add(x, scalar).dtype.name
    assert num.rounded.dtype is er.result_type(x, scalar, op="add", policy="numpy")


@pytest.mark.parametrize("policy", ["torch", "numpy"])
@pytest.mark.parametrize("y", [np.array([True, False]), True, np.array([1, 0])],
                         ids=["bool array", "Python bool", "int array"])
def test_subtract_refuses_bool_as_the_policy_does(policy, y):
    """Issue 19: er.subtract on bools returned a Result though torch and numpy refuse it."""
    x = np.array([True, True])
    if policy == "numpy" and not isinstance(y, bool) and y.dtype != bool:
        assert er.subtract(x, y, policy=policy).rounded.tolist() == np.subtract(x, y).tolist()
        return
    with pytest.raises(TypeError, match=r"(sub|subtract) does not accept bool.*xor"):
        er.subtract(x, y, policy=policy)


def test_a_list_of_ints_int64_cannot_hold_says_how_to_pass_it():
    with pytest.raises(OverflowError, match="list of Python ints that int64.*cannot hold"):
        er.add([2**70], [1], overflow="wrap")


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("op", [er.add, er.multiply], ids=["add", "multiply"])
def test_shapes_that_do_not_broadcast(op):
    x = er.asarray([1.0, 2.0], "float32")
    y = er.asarray([1.0, 2.0, 3.0], "float32")
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\).*do not broadcast"):
        op(x, y)
    with pytest.raises(ValueError, match="do not broadcast"):
        op(er.asarray([[1.0, 2.0]], "float32"), er.asarray([[1.0], [2.0], [3.0]], "float32")
           .numpy().reshape(3, 1, 1).repeat(3, axis=2))


@pytest.mark.parametrize("op", [er.add, er.multiply], ids=["add", "multiply"])
@pytest.mark.parametrize("inputs,dtype,kind", [
    ("float32", "int32", "float"), ("int32", "float32", "integer"),
    ("float32", "complex64", "float"), ("complex64", "float64", "complex"),
])
def test_dtype_of_another_kind(op, inputs, dtype, kind):
    x = er.asarray([1, 2], inputs)
    with pytest.raises(ValueError, match=f"dtype={dtype} is not of the operands' kind.*{kind}"):
        op(x, x, dtype=dtype)


def test_dtype_of_the_same_kind_rounds_once():
    x = er.asarray([1.0, 2.0**-30], "float64")
    y = er.asarray([2.0**-11, 1.0], "float64")
    assert er.add(x, y, dtype="float16").rounded.tolist() == [1.0, 1.0]  # tie: even
    assert er.add(x, y, dtype="float16", rounding="toward_positive").rounded.tolist() == [
        1.0009765625, 1.0009765625]
    assert er.add(er.asarray([100], "int32"), er.asarray([100], "int32"),
                  dtype="int8").rounded.tolist() == [-56]


def test_complex_alpha_with_real_output():
    x = er.asarray([1.0], "float32")
    with pytest.raises(ValueError, match="alpha=1j is complex but the output is float32"):
        er.add(x, x, alpha=1j)
    # an alpha with a zero imaginary part is real
    assert er.add(x, x, alpha=2 + 0j).rounded.tolist() == [3.0]


def test_fractional_alpha_with_integer_output():
    x = er.asarray([1], "int8")
    with pytest.raises(ValueError, match="not an integer"):
        er.add(x, x, alpha=0.5)
    assert er.add(x, x, alpha=2.0).rounded.tolist() == [3]


def test_overflow_rule_of_the_wrong_kind():
    with pytest.raises(ValueError, match="does not apply to int8"):
        er.add(er.asarray([1], "int8"), 1, overflow="ieee")
    with pytest.raises(ValueError, match="does not apply to float32"):
        er.add(er.asarray([1.0], "float32"), 1, overflow="wrap")


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
def test_clamp_bounds_are_checked_as_torch_checks_them(dtype):
    """torch.clamp converts its scalar bounds with c10's checked conversion: out of range
    raises (unsigned formats take negatives down to -max, which wrap), where the arithmetic
    ops wrap; er.clamp under the torch policy gives what torch gives, or raises where it does."""
    torch = pytest.importorskip("torch")
    x = np.array([1, 50, 100, -3], dtype=np.int64).astype(dtype)
    info = np.iinfo(dtype)
    for v in (info.max, info.max + 1, info.min, info.min - 1, -1, -int(info.max),
              -int(info.max) - 1, 2**31, 2**40):
        for kw in ({"min": v}, {"max": v}):
            try:
                want = torch.clamp(torch.from_numpy(x), **kw).tolist()
            except RuntimeError:
                with pytest.raises(OverflowError, match="PyTorch raises"):
                    er.clamp(x, **kw)
                continue
            assert er.clamp(x, **kw).rounded.tolist() == want, kw


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16"])
def test_pow_scalar_exponents_are_checked_as_torch_checks_them(dtype):
    """torch.pow refuses a negative integer exponent first, then converts the scalar with the
    checked conversion (out of range raises); er.pow raises there too and agrees elsewhere."""
    torch = pytest.importorskip("torch")
    x = np.array([1, 100, 2, 3], dtype=dtype)
    for v in (300, -1, -255, 5, 2**31 + 3, 127, 128, 40000):
        try:
            want = torch.pow(torch.from_numpy(x), v).tolist()
        except RuntimeError as exc:
            err = ValueError if "negative" in str(exc) else OverflowError
            with pytest.raises(err):
                er.pow(x, v)
            continue
        assert er.pow(x, v).rounded.tolist() == want, v
