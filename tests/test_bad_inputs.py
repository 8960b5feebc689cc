"""Bad inputs through the API and the CLI: each gets an exception of the right type (or the CLI's
usage exit code 4) whose message names what was expected and how to fix it.

Types: TypeError (and its subclasses) where a value is of the wrong type, ValueError (numpy's
AxisError included) where an argument's value is wrong, OverflowError where an integer does not
fit, ZeroDivisionError for an integer division by zero. Each case gives two patterns: what was
expected (or found), and the fix the message suggests.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import exactref as er
from exactref.cli import main
from exactref.testing import assert_covers


@dataclass
class Case:
    id: str
    call: object  # a callable of no argument
    exc: type
    expected: str  # a regex: what was expected, or what was found
    fix: str  # a regex: how to fix it


F32 = np.float32


def _f32(*shape):
    return np.ones(shape, F32)


def _add_result():
    return er.add(np.float32([1.0, 2.0]), np.float32([0.5, 0.25]))


def _torch():
    return pytest.importorskip("torch")


# ------------------------------------------------------------------------ values, formats
ASARRAY = [
    Case("asarray-string-element", lambda: er.asarray(["a"]), TypeError,
         r"element 0 is 'a' of type str", r"expected numbers"),
    Case("asarray-ragged", lambda: er.asarray([[1.0, 2.0], [3.0]]), ValueError,
         r"ragged", r"give every row the same length"),
    Case("asarray-unknown-format", lambda: er.asarray([1.0], "floatx"), ValueError,
         r"unknown format 'floatx'", r"close matches: float32"),
    Case("asarray-string-dtype-array", lambda: er.asarray(np.array(["x"])), TypeError,
         r"dtype <U1 hold no numbers", r"expected a numeric dtype"),
    Case("asarray-complex-into-real", lambda: er.asarray(1 + 2j, "float32"), TypeError,
         r"complex values cannot become float32", r"pass a complex format or the real parts"),
    Case("asarray-integer-overflow", lambda: er.asarray([300], "int8", overflow="error"),
         OverflowError, r"300 \(exactly\), outside int8's range \[-128, 127\]",
         r"overflow='wrap' or 'saturate'"),
    Case("asarray-overflow-rule-of-another-kind",
         lambda: er.asarray([1.0], "float32", overflow="wrap"), ValueError,
         r"overflow='wrap' does not apply to float32", r"expected one of 'ieee', 'saturate'"),
    Case("asarray-unknown-rounding", lambda: er.asarray([0.1], "float16", rounding="up-ish"),
         ValueError, r"unknown rounding mode 'up-ish'", r"NEAREST_EVEN"),
    Case("round_to-integer-overflow", lambda: er.round_to([[1, 300]], "int8", overflow="error"),
         OverflowError, r"element \(0, 1\) is 300", r"choose a wider format"),
    Case("masked-array", lambda: er.asarray(np.ma.masked_array([1.0, 2.0], mask=[0, 1])),
         TypeError, r"masked array with 1 masked element.*ignore the mask",
         r"arr\.filled\(fill_value\).*arr\.compressed\(\)"),
    Case("Array-data-of-another-dtype", lambda: er.Array(np.zeros(3), "float32"), TypeError,
         r"dtype float64 does not match format float32", r"er\.asarray\(values, 'float32'\)"),
    Case("Array-value-of-several", lambda: er.asarray([1.0, 2.0]).value(), IndexError,
         r"needs the index of one element of shape \(2,\)", r"got \(\)"),
    Case("dtype-unknown", lambda: er.dtype("floaty"), ValueError,
         r"unknown format 'floaty'", r"exactref\.FORMATS lists them all"),
]


def _meta():
    return _torch().ones(3, device="meta")


def _sparse():
    return _torch().eye(3).to_sparse()


def _csr():
    with warnings.catch_warnings():  # sparse CSR is in beta
        warnings.simplefilter("ignore")
        return _torch().eye(3).to_sparse_csr()


def _quantized():
    torch = _torch()
    with warnings.catch_warnings():  # torch deprecates quantized tensors
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.quint8)


def _nested():
    torch = _torch()
    with warnings.catch_warnings():  # nested tensors are a prototype
        warnings.simplefilter("ignore")
        return torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])


TORCH = [
    Case("torch-meta-tensor", lambda: er.asarray(_meta()), TypeError,
         r"meta device .* has a shape but no values", r"device that computes \(cpu, cuda\)"),
    Case("torch-meta-tensor-in-an-op", lambda: er.add(_meta(), 1.0), TypeError,
         r"meta device", r"pass that output"),
    Case("torch-meta-tensor-as-output", lambda: _add_result().covers(_meta()[:2]), TypeError,
         r"meta device", r"run the kernel on a device that computes"),
    Case("torch-sparse-tensor", lambda: er.asarray(_sparse()), TypeError,
         r"layout torch\.sparse_coo", r"t\.to_dense\(\)"),
    Case("torch-sparse-csr-tensor", lambda: er.asarray(_csr()),
         TypeError, r"layout torch\.sparse_csr", r"t\.to_dense\(\)"),
    Case("torch-quantized-tensor", lambda: er.asarray(_quantized()), TypeError,
         r"quantized tensor \(torch\.quint8\)", r"t\.dequantize\(\).*t\.int_repr\(\)"),
    Case("torch-nested-tensor", lambda: er.asarray(_nested()), TypeError,
         r"nested tensor has no single shape", r"t\.unbind\(\)"),
]

# ------------------------------------------------------------------------ elementwise ops
OPS = [
    Case("add-string-operand", lambda: er.add("a", 1), TypeError,
         r"'a' of type str", r"expected numbers"),
    Case("add-shapes", lambda: er.add(_f32(3), _f32(4)), ValueError,
         r"shape \(3,\) and y of shape \(4,\) do not broadcast", r"reshape one of them"),
    Case("add-unknown-dtype", lambda: er.add(_f32(2), _f32(2), dtype="nope"), ValueError,
         r"unknown format 'nope'", r"such as 'float32'"),
    Case("add-unknown-rounding", lambda: er.add(_f32(2), _f32(2), rounding="bogus"),
         ValueError, r"unknown rounding mode 'bogus'", r"er\.Rounding member"),
    Case("floor_divide-by-integer-zero",
         lambda: er.floor_divide(np.int32([1, 2]), np.int32([1, 0])), ZeroDivisionError,
         r"element \(1,\) divides by zero", r"mask the zero divisors or divide in a float"),
    Case("remainder-by-integer-zero", lambda: er.remainder(np.int32([1]), np.int32([0])),
         ZeroDivisionError, r"remainder by zero", r"mask the zero divisors"),
    Case("integer-add-overflow",
         lambda: er.add(np.int8([[100, 1]]), np.int8([[100, 1]]), overflow="error"),
         OverflowError, r"element \(0, 0\) is 200 \(exactly\), outside int8's range",
         r"overflow='wrap' or 'saturate'"),
    Case("cast-unknown-format", lambda: er.cast(_f32(2), "nope"), ValueError,
         r"unknown format 'nope'", r"exactref\.FORMATS lists them all"),
    # issue 19: every numeric parameter named when it is not a number
    Case("add-alpha-string", lambda: er.add(_f32(2), _f32(2), alpha="x"), ValueError,
         r"add: alpha='x' is not a number: expected a Python int, float or complex.*found str",
         r"Pass alpha as a number"),
    Case("subtract-alpha-none", lambda: er.subtract(_f32(2), _f32(2), alpha=None), ValueError,
         r"subtract: alpha=None is not a number.*found NoneType", r"Pass alpha as a number"),
    Case("addcmul-value-list", lambda: er.addcmul(_f32(2), _f32(2), _f32(2), value=[2]),
         ValueError, r"addcmul: value=\[2\] is not a number.*found list",
         r"Pass value as a number"),
    Case("addcdiv-value-string", lambda: er.addcdiv(_f32(2), _f32(2), _f32(2), value="2"),
         ValueError, r"addcdiv: value='2' is not a number", r"Pass value as a number"),
    Case("softplus-beta-string", lambda: er.softplus(_f32(2), beta="x"), ValueError,
         r"softplus: beta='x' is not a number: expected a real number", r"Pass beta as a"),
    Case("softplus-threshold-complex", lambda: er.softplus(_f32(2), threshold=1j), ValueError,
         r"softplus: threshold=1j is not a number: expected a real number.*found complex",
         r"Pass threshold as a number"),
    Case("logit-eps-string", lambda: er.logit(_f32(2), eps="x"), ValueError,
         r"logit: eps='x' is not a number", r"Pass eps as a number"),
    Case("add-alpha-not-binary", lambda: er.add(_f32(2), _f32(2), alpha=__import__(
        "fractions").Fraction(1, 3)), ValueError, r"alpha=Fraction\(1, 3\) cannot be taken "
         r"exactly", r"pass a float, an int, or a Fraction such as"),
    # issue 19: the torch policy converts an int as torch does; an int torch cannot take raises
    Case("add-int-beyond-uint64", lambda: er.add(np.uint8([1]), 2**64), OverflowError,
         r"y = 18446744073709551616 is outside uint8's range.*PyTorch raises",
         r"pass overflow='wrap' or 'saturate'"),
    Case("subtract-bool", lambda: er.subtract(np.array([True]), np.array([False])), TypeError,
         r"sub does not accept bool operands", r"use logical_xor or ~ on bool masks"),
]

# ------------------------------------------------------------------------ long sums
LINALG = [
    Case("sum-axis-out-of-range", lambda: er.sum(_f32(2, 3), axis=2), np.exceptions.AxisError,
         r"axis 2 is out of bounds for an array of 2 dimensions \(shape \(2, 3\)\)",
         r"axes lie in \[-2, 1\].*axis=None"),
    Case("sum-axis-far-out-of-range", lambda: er.sum(_f32(2, 3), axis=5),
         np.exceptions.AxisError, r"axis 5 is out of bounds", r"pass one of them"),
    Case("sum-axis-negative-out-of-range", lambda: er.sum(_f32(2, 3), axis=-3),
         np.exceptions.AxisError, r"axis -3 is out of bounds", r"axes lie in \[-2, 1\]"),
    Case("sum-axis-float", lambda: er.sum(_f32(2, 3), axis=1.0), TypeError,
         r"axis=1\.0 \(float\) is not an axis", r"an integer, a tuple of integers or None"),
    Case("sum-axis-bool", lambda: er.sum(_f32(2, 3), axis=True), TypeError,
         r"axis=True \(bool\)", r"expected an integer"),
    Case("sum-axis-repeated", lambda: er.sum(_f32(2, 3), axis=(0, 0)), ValueError,
         r"axis=\(0, 0\) is not valid for an array of shape \(2, 3\)", r"name each axis once"),
    Case("sum-axis-of-a-0d-array", lambda: er.sum(er.asarray(1.5, "float32"), axis=1),
         np.exceptions.AxisError, r"axis 1 is out of bounds for an array of 0 dimensions",
         r"axes lie in \[-1, 0\]"),
    Case("sum-of-a-scalar", lambda: er.sum(3.0), ValueError,
         r"sum needs an array; got a scalar", r"np\.asarray\(\[x\]\)"),
    Case("sum-dtype-integer-for-floats", lambda: er.sum(np.ones(3), dtype="int32"), ValueError,
         r"dtype=int32 is an integer format but x is float64", r"convert x first"),
    Case("sum-dtype-of-another-kind", lambda: er.sum(np.ones(3), dtype="complex64"), ValueError,
         r"not of x's kind \(float64\)", r"pass a float dtype"),
    Case("sum-int64-overflow",
         lambda: er.sum(np.array([2**62] * 4, np.int64), overflow="error"), OverflowError,
         r"the result is 18446744073709551616 \(exactly\), outside int64's range",
         r"overflow='wrap' or 'saturate', or choose a wider format"),
    Case("sum-backward-axis-out-of-range",
         lambda: er.sum.backward(_f32(2, 3), _f32(2), axis=5), np.exceptions.AxisError,
         r"axis 5 is out of bounds", r"axis=None to sum every element"),
    Case("matmul-shapes", lambda: er.matmul(np.ones((2, 3)), np.ones((4, 5))), ValueError,
         r"last dimension \(3\) must equal b's size along its second-to-last dimension \(4\)",
         r"transpose or reshape one of them"),
    Case("matmul-batch", lambda: er.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4))), ValueError,
         r"batch dimensions \(2,\) and \(3,\) that do not broadcast", r"reshape one of them"),
    Case("matmul-scalar", lambda: er.matmul(2.0, np.ones((2, 2))), ValueError,
         r"a is a scalar; this operation needs an array", r"use er\.multiply for scalars"),
    Case("matmul-order", lambda: er.matmul(_f32(2, 2), _f32(2, 2), order="random"), ValueError,
         r"order='random' is not an accumulation order", r"'any', 'sequential', 'pairwise'"),
    Case("matmul-compute", lambda: er.matmul(_f32(2, 2), _f32(2, 2), compute="nope"),
         ValueError, r"unknown format 'nope'", r"such as 'float32'"),
    Case("matmul-int64-overflow",
         lambda: er.matmul(np.array([[2**62]], np.int64), np.array([[4]], np.int64),
                           overflow="error"), OverflowError,
         r"element \(0, 0\) is 18446744073709551616", r"choose a wider format \(dtype=\.\.\.\)"),
    Case("dot-matrices", lambda: er.dot(_f32(2, 2), _f32(2, 2)), ValueError,
         r"dot needs two 1-D arrays, got shapes \(2, 2\) and \(2, 2\)", r"use matmul"),
    Case("dot-lengths", lambda: er.dot(_f32(3), _f32(4)), ValueError,
         r"a of shape \(3,\) and b of shape \(4,\)", r"must have the same length"),
    Case("gemm-c-shape", lambda: er.gemm(_f32(2, 3), _f32(3, 4), _f32(3, 4)), ValueError,
         r"c of shape \(3, 4\) does not broadcast to the output shape \(2, 4\)",
         r"reshape c, or pass beta=0"),
    Case("gemm-complex-alpha", lambda: er.gemm(np.ones((2, 2)), np.ones((2, 2)), alpha=1j),
         ValueError, r"alpha=1j is complex but the output is float64",
         r"use complex operands or a real alpha"),
    Case("gemm-alpha-string", lambda: er.gemm(_f32(2, 2), _f32(2, 2), alpha="x"), ValueError,
         r"gemm: alpha='x' is not a number.*found str", r"Pass alpha as a number"),
    Case("gemm-trans-string", lambda: er.gemm(_f32(2, 2), _f32(2, 2), trans_b="T"), ValueError,
         r"gemm: trans_b='T'", r"expected True \(transpose the last two dimensions\) or "
         r"False"),
    Case("matmul-fused-string", lambda: er.matmul(_f32(2, 2), _f32(2, 2), fused="yes"),
         ValueError, r"fused='yes'", r"expected True .* False .* or None"),
    Case("var-correction-and-ddof", lambda: er.var(_f32(2, 3), dim=1, ddof=0, correction=1),
         ValueError, r"var: correction=1 and ddof=0 are both given", r"pass only one of them"),
    Case("mean-keepdim-string", lambda: er.mean(_f32(2, 3), dim=1, keepdim="yes"), ValueError,
         r"mean: keepdim='yes'", r"expected True .* or False"),
    Case("sum-policy-unmodelled", lambda: er.sum(_f32(2, 3), policy="jax"), ValueError,
         r"sum: policy='jax' is not modelled for reductions",
         r"'torch' or 'numpy'.*pass dtype= to name the result format"),
    Case("matmul-policy-unknown", lambda: er.matmul(_f32(2, 2), _f32(2, 2), policy="nope"),
         ValueError, r"unknown promotion policy 'nope'", r"known: torch, numpy"),
    Case("mean-complex", lambda: er.mean(np.ones(3, np.complex64), dtype="float32"),
         ValueError, r"mean: x is complex64; mean is defined here for real inputs only",
         r"would drop the imaginary part: pass x\.real and x\.imag separately"),
    Case("softmax-complex", lambda: er.softmax(np.ones(3, np.complex64), dim=0), ValueError,
         r"softmax: x is complex64; softmax is defined here for real inputs only \(torch "
         r"2\.13 has no complex CPU softmax", r"would drop the imaginary part: pass x\.real "
         r"or abs\(x\)"),
    Case("logsumexp-complex-with-dtype",
         lambda: er.logsumexp(np.ones(3, np.complex64), dim=0, dtype="float32"), ValueError,
         r"logsumexp is defined here for real inputs only", r"pass x\.real or abs\(x\)"),
    Case("layer_norm-normalized_shape-none", lambda: er.layer_norm(_f32(2, 3), None),
         TypeError, r"layer_norm: normalized_shape=None", r"expected an int or a non-empty "
         r"tuple of ints"),
    Case("attention-is_causal-string",
         lambda: er.scaled_dot_product_attention(_f32(2, 4), _f32(3, 4), _f32(3, 4),
                                                 is_causal="yes"), ValueError,
         r"scaled_dot_product_attention: is_causal='yes'", r"expected True or False"),
    Case("softmax-policy-numpy", lambda: er.softmax(_f32(2, 3), dim=-1, policy="numpy"),
         ValueError, r"softmax: policy='numpy' is not modelled for softmax",
         r"pass dtype= where softmax takes it, or leave policy out"),
    Case("gemm-fractional-integer-alpha",
         lambda: er.gemm(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32), alpha=0.5),
         ValueError, r"alpha=0\.5 is not an integer, but the output is int32",
         r"need an integral alpha"),
]

# ------------------------------------------------------------------------ results, checks
RESULTS = [
    Case("covers-another-shape", lambda: _add_result().covers(np.float32([1.5])), ValueError,
         r"the actual output has shape \(1,\), the reference \(2,\)",
         r"Reshape the output, or broadcast it yourself"),
    Case("covers-a-broadcastable-scalar", lambda: _add_result().covers(1.5), ValueError,
         r"shape \(\), the reference \(2,\).*no broadcasting", r"numpy\.broadcast_to"),
    Case("covers-complex-for-real", lambda: er.add([1.0], [1.0]).covers([2.0 + 1j]), TypeError,
         r"actual output is complex but the reference is float64", r"compare the real part"),
    Case("coverage-truth-value", lambda: bool(_add_result().covers(np.float32([1.5, 2.25]))),
         ValueError, r"truth value of a Coverage is ambiguous", r"use \.all\(\) or \.any\(\)"),
    Case("any_of-nothing", lambda: er.any_of(), ValueError,
         r"any_of needs at least one Result", r"er\.any_of\(er\.add\(x, y\)"),
    Case("any_of-shapes", lambda: er.any_of(er.add([1.0], [2.0]), er.add([1.0, 2.0], [2.0, 3.0])),
         ValueError, r"result 0 has shape \(1,\) and result 1 shape \(2,\)",
         r"compute each on the same operands"),
    Case("any_of-formats",
         lambda: er.any_of(er.add(np.float32([1]), 1.0), er.add(np.float16([1]), 1.0)),
         TypeError, r"result 0 is float32 and result 1 float16", r"pass dtype= to the ops"),
    Case("any_of-values", lambda: er.any_of(_add_result(), np.float32([1.5, 2.25])), TypeError,
         r"any_of takes Results .* argument 1 is ndarray", r"pass the Result, not its values"),
    Case("assert_covers-without-reference",
         lambda: assert_covers(np.float32([1.0]), np.float32([1.0])), TypeError,
         r"needs a reference with a covers\(\) method", r"got ndarray and ndarray"),
    Case("assert_covers-negative-ulps",
         lambda: assert_covers(np.float32([1.5, 2.25]), _add_result(), ulps=-1), ValueError,
         r"ulps=-1 must be finite and at least 0", r"0: no slack"),
    Case("assert_covers-nan-rtol",
         lambda: assert_covers(np.float32([1.5, 2.25]), _add_result(), rtol=float("nan")),
         ValueError, r"rtol=nan must be finite", r"at least 0"),
    Case("assert_covers-string-atol",
         lambda: assert_covers(np.float32([1.5, 2.25]), _add_result(), atol="1e-3"), TypeError,
         r"atol='1e-3' \(str\)", r"must be a real number"),
    Case("assert_covers-bool-ulps",
         lambda: assert_covers(np.float32([1.5, 2.25]), _add_result(), ulps=True), TypeError,
         r"ulps=True \(bool\)", r"must be a real number"),
]


def _etl():
    _torch()
    from exactref.equivalents import torch_linalg

    return torch_linalg


EQUIVALENTS = [
    Case("torch_linalg-sum-of-a-number", lambda: _etl().sum(3.0), TypeError,
         r"argument 'input' \(position 1\) must be Tensor, not float", r"pass a tensor"),
    Case("torch_linalg-sum-dim-out-of-range", lambda: _etl().sum(_torch().ones(2, 3), dim=2),
         np.exceptions.AxisError, r"axis 2 is out of bounds", r"axes lie in \[-2, 1\]"),
    Case("torch_linalg-addmm-dtypes",
         lambda: _etl().addmm(_torch().ones(2, 2), _torch().ones(2, 2),
                              _torch().ones(2, 2, dtype=_torch().float64)),
         TypeError, r"expected both operands to have the same dtype", r"convert one of them"),
]

API = ASARRAY + TORCH + OPS + LINALG + RESULTS + EQUIVALENTS


@pytest.mark.parametrize("case", API, ids=[c.id for c in API])
def test_api_bad_input(case):
    with pytest.raises(case.exc) as info:
        case.call()
    message = str(info.value)
    assert "\n" not in message, message  # one line
    assert re.search(case.expected, message), message
    assert re.search(case.fix, message), message


def test_exception_types_are_the_standard_ones():
    """numpy's AxisError is a ValueError and an IndexError: `except ValueError` catches it."""
    assert issubclass(np.exceptions.AxisError, ValueError)
    assert issubclass(np.exceptions.AxisError, IndexError)


# ------------------------------------------------------------------------ the command line
@dataclass
class CliCase:
    id: str
    argv: list
    expected: str
    fix: str


def _files(tmp_path):
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "nogroups.json").write_text(json.dumps({"schema": "exactref.audit/2"}))
    (tmp_path / "garbage.json").write_text("nope")
    (tmp_path / "badgroup.json").write_text(json.dumps(
        {"schema": "exactref.audit/2", "environment": {}, "groups": [{"key": "add x"}]}))
    return tmp_path


CLI = [
    CliCase("round-into-int8-overflow-error", ["round", "300", "--to", "int8", "--overflow",
                                               "error"],
            r"300 is outside int8's range \[-128, 127\]", r"--overflow wrap or saturate"),
    CliCase("round-float-into-int8-overflow-error", ["round", "1e30", "--to", "int8",
                                                     "--overflow", "error"],
            r"outside int8's range", r"choose a wider format"),
    CliCase("round-huge-exponent", ["round", "1e999999", "--to", "float32"],
            r"decimal exponent 999999 lies beyond \+-4000", r"write inf or 0"),
    CliCase("round-tiny-exponent", ["round", "1e-999999", "--to", "float16"],
            r"decimal exponent -999999", r"write inf or 0"),
    CliCase("round-too-many-digits", ["round", "1" * 5000, "--to", "float32"],
            r"has 5000 characters", r"as a ratio or with an exponent"),
    CliCase("round-not-a-number", ["round", "abc", "--to", "float32"],
            r"cannot read 'abc' as a number", r"expected a decimal \(0\.1\), a hex float"),
    CliCase("round-bad-hex", ["round", "0xZZ", "--to", "float32"],
            r"cannot read '0xzz' as a hex number", r"a hex float \(0x1\.8p\+3\)"),
    CliCase("round-ratio-by-zero", ["round", "1/0", "--to", "float32"],
            r"'1/0' divides by zero", r".*"),
    CliCase("round-complex-into-real", ["round", "(1+2j)", "--to", "float32"],
            r"has an imaginary part, which float32 cannot hold",
            r"round it into a complex format .* or pass its real part"),
    CliCase("round-nan-into-int8", ["round", "nan", "--to", "int8"],
            r"nan has no value in int8", r"round it into a float format"),
    CliCase("round-unknown-format", ["round", "1", "--to", "nofmt"],
            r"unknown format 'nofmt'", r"such as 'float32'"),
    CliCase("round-unknown-rounding", ["round", "1", "--to", "float32", "--rounding", "up?"],
            r"unknown rounding mode 'up\?'", r"NEAREST_EVEN"),
    CliCase("round-overflow-rule-of-another-kind", ["round", "1", "--to", "int8", "--overflow",
                                                    "nan"],
            r"overflow='nan' does not apply to int8", r"'wrap', 'error', 'saturate'"),
    CliCase("formats-unknown-kind", ["formats", "--kind", "bogus"],
            r"invalid choice: 'bogus'", r"choose from 'bool', 'int'"),
    CliCase("unknown-command", ["nosuch"], r"invalid choice: 'nosuch'", r"choose from 'audit'"),
    CliCase("audit-samples-not-a-number", ["audit", "--samples", "abc"],
            r"argument --samples: invalid int value: 'abc'", r"usage: exactref audit"),
    CliCase("audit-torch-meta-device", ["audit", "torch", "--device", "meta"],
            r"--device meta: meta tensors have shapes but no values",
            r"the devices available here: cpu"),
    CliCase("audit-torch-missing-device", ["audit", "torch", "--device", "cuda:7"],
            r"cannot compute on cuda here", r"pass one of the devices available here: cpu"),
    CliCase("audit-torch-unknown-device", ["audit", "torch", "--device", "bogus"],
            r"--device 'bogus' is not a torch device", r"the devices available here: cpu"),
    CliCase("audit-device-for-numpy", ["audit", "numpy", "--device", "cuda"],
            r"--device cuda applies to the torch target and the runtimes' \(onnxruntime, "
            r"openvino, tensorflow\) only", r"leave it out, or audit those"),
    CliCase("audit-kernel-without-op", ["audit", "mymodule:myadd"],
            r"auditing mymodule:myadd needs --op", r"one of add, subtract"),
    CliCase("audit-unknown-kind", ["audit", "--kinds", "bogus"],
            r"unknown group kind 'bogus'", r"same, mixed, zero_dim, scalar, params"),
    CliCase("audit-zero-samples", ["audit", "--samples", "0"],
            r"samples=0: each group needs at least 1 sample", r"the default is 256"),
    CliCase("audit-unknown-op", ["audit", "numpy", "--ops", "devide"],
            r"unknown op 'devide'", r"close matches: divide"),
    CliCase("diff-of-json-lists", ["diff", "{tmp}/list.json", "{tmp}/list.json"],
            r"the old report is a JSON list, not an exactref audit report",
            r"pass the files written by exactref audit --json"),
    CliCase("diff-without-groups", ["diff", "{tmp}/nogroups.json", "{tmp}/nogroups.json"],
            r"has no list of groups", r"rerun exactref audit --json"),
    CliCase("diff-not-json", ["diff", "{tmp}/garbage.json", "{tmp}/garbage.json"],
            r"garbage\.json' is not JSON", r"pass the files written by exactref audit --json"),
    CliCase("diff-missing-file", ["diff", "{tmp}/missing.json", "{tmp}/list.json"],
            r"cannot open '.*missing\.json' \(No such file", r"pass the files written by"),
    CliCase("diff-group-without-fields", ["diff", "{tmp}/badgroup.json", "{tmp}/badgroup.json"],
            r"a group lacks the field 'status'", r"compare reports written by the same"),
]


@pytest.mark.parametrize("case", CLI, ids=[c.id for c in CLI])
def test_cli_bad_input(case, tmp_path, capsys):
    if "torch" in case.argv:
        _torch()
    argv = [a.replace("{tmp}", str(_files(tmp_path))) for a in case.argv]
    assert main(argv) == 4
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err, err
    assert re.search(case.expected, err), err
    assert re.search(case.fix, err), err


def test_enough_cases():
    assert len(API) + len(CLI) >= 60
