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


@pytest.mark.parametrize("op", [er.add, er.subtract, er.multiply, er.maximum],
                         ids=lambda f: f.__name__)
def test_python_int_outside_the_result_format_raises(op):
    """As PyTorch raises (issue 11): the int is not silently wrapped into the result format."""
    x = er.asarray([1, -1], "int64")
    with pytest.raises(OverflowError, match=r"y = 1267650600228229401496703205376 is outside "
                                            r"int64's range.*pass overflow='wrap'"):
        op(x, 2**100)
    with pytest.raises(OverflowError, match="outside int8's range"):
        op(er.asarray([1], "int8"), 300)


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
