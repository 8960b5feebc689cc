"""matmul, dot, gemm (and linear, conv1d, conv2d, which share their operand handling): empty
operands, operands of mixed kinds, ``policy=`` for the result format, and the errors of their
arguments (issue 19)."""

from __future__ import annotations

import inspect
from fractions import Fraction

import numpy as np
import pytest

import exactref as er

F32 = np.float32


# ------------------------------------------------------------------------- empty operands
@pytest.mark.parametrize("fmt", ["float32", "float16", "int32", "complex64"])
def test_an_empty_inner_dimension_gives_the_empty_sum_as_torch(fmt):
    """K = 0: every element is the empty sum, +0 (torch 2.13 gives zeros too), in every rounding
    mode; gemm then gives beta * c exactly."""
    torch = pytest.importorskip("torch")
    a, b = np.zeros((3, 0), fmt), np.zeros((0, 2), fmt)
    want = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
    for mode in er.Rounding:
        r = er.matmul(a, b, rounding=mode)
        got = r.rounded.numpy()
        assert got.shape == (3, 2) and got.dtype == want.dtype
        assert (got == 0).all() and not np.signbit(np.real(got)).any(), mode
        assert r.covers(want).all()
    d = er.dot(np.zeros(0, fmt), np.zeros(0, fmt))
    assert d.rounded.shape == () and d.rounded.tolist() == 0
    if fmt.startswith("float"):
        c = np.full((3, 2), -0.0, fmt)
        g = er.gemm(a, b, c, alpha=2, beta=0.5)  # BLAS: c := beta * c, its -0 kept
        assert np.signbit(g.rounded.numpy()).all()
        want = torch.addmm(torch.from_numpy(np.ones((3, 2), fmt)), torch.from_numpy(a),
                           torch.from_numpy(b), beta=0.5).numpy()
        assert er.gemm(a, b, np.ones((3, 2), fmt), beta=0.5).covers(want).all()


@pytest.mark.parametrize("shapes", [((0, 3), (3, 2)), ((2, 3), (3, 0)), ((0, 2, 3), (3, 2)),
                                    ((3, 0), (0,))], ids=str)
def test_empty_outputs_have_torch_shapes(shapes):
    torch = pytest.importorskip("torch")
    a, b = (np.zeros(s, F32) for s in shapes)
    want = torch.from_numpy(a) @ torch.from_numpy(b)
    r = er.matmul(a, b)
    assert r.rounded.shape == tuple(want.shape)
    assert r.tolerance().shape == tuple(want.shape) and r.covers(want.numpy()).all()


# ---------------------------------------------------------------------- mixed operand kinds
def test_an_integer_operand_meets_a_float_format_that_holds_it():
    """int8 @ float16 raised "'NoneType' object is not iterable" (float16 holds every int8, so
    the int8 operand was not cast and had no float parts)."""
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.full((3, 2), 0.5, np.float16)
    r = er.matmul(a, b)
    assert r.rounded.dtype.name == "float16"
    assert r.rounded.tolist() == (a.astype(np.float64) @ b.astype(np.float64)).tolist()
    assert er.dot(np.array([3, -2], np.int16), np.array([0.25, 1.0], F32)).rounded.tolist() \
        == -1.25
    g = er.gemm(a, b, np.ones((2, 2), np.int64), beta=2)
    assert g.rounded.dtype.name == "float16"
    assert g.rounded.tolist() == (a @ b.astype(np.float64) + 2).tolist()


# ---------------------------------------------------------------------------------- policy
_OPS = {
    "matmul": lambda x, y, **kw: er.matmul(x, y.T, **kw),
    "dot": lambda x, y, **kw: er.dot(x[0], y[0], **kw),
    "gemm": lambda x, y, **kw: er.gemm(x, y.T, **kw),
    "linear": lambda x, y, **kw: er.linear(x, y, **kw),
    "conv1d": lambda x, y, **kw: er.conv1d(x.T[None], y[:, :, None], **kw),
    "conv2d": lambda x, y, **kw: er.conv2d(x.T[None, :, :, None], y[:, :, None, None], **kw),
}


@pytest.mark.parametrize("name", sorted(_OPS))
def test_products_take_a_policy_for_their_result_format(name):
    """Issue 19: ``er.matmul(..., policy="numpy")`` was a TypeError. The result format is the
    policy's promotion of multiply (numpy's and torch's matmul share it), here float16 with
    float32; an unknown policy is refused by name."""
    assert "policy" in inspect.signature(getattr(er, name)).parameters
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    y = np.ones((4, 3), F32)
    for policy in ("torch", "numpy", "jax"):
        got = _OPS[name](x, y, policy=policy).rounded.dtype
        assert got is er.result_type(x, y, policy=policy, op="mul"), policy
    with pytest.raises(ValueError, match="unknown promotion policy 'bogus'"):
        _OPS[name](x, y, policy="bogus")


def test_matmul_policy_numpy_follows_numpy_on_integers():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.arange(6, dtype=np.uint8).reshape(3, 2)
    got = er.matmul(a, b, policy="numpy").rounded
    assert got.dtype.name == np.matmul(a, b).dtype.name
    assert got.numpy().tolist() == np.matmul(a, b).tolist()
    with pytest.raises(ValueError, match="policy='numpy' does not apply to block-scaled"):
        er.matmul(er.quantize(np.ones((2, 32), F32), "mxfp8_e4m3"),
                  er.quantize(np.ones((32, 2), F32), "mxfp8_e4m3", axis=0), policy="numpy")


# ----------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("param", ["alpha", "beta"])
@pytest.mark.parametrize("bad", ["x", None, [1.0], object()],
                         ids=["str", "None", "list", "object"])
def test_gemm_scalars_are_named_when_they_are_not_numbers(param, bad):
    """Issue 19: ``gemm(alpha="x")`` said "cannot read 'x' as a binary value", naming neither
    the op nor alpha."""
    a = np.ones((2, 2), F32)
    with pytest.raises(ValueError, match=rf"gemm: {param}=.* is not a number: expected .*"
                                         rf"found {type(bad).__name__}\. Pass {param} as"):
        er.gemm(a, a, a, **{param: bad})


def test_gemm_scalars_that_cannot_be_exact_and_flags():
    a = np.ones((2, 2), F32)
    with pytest.raises(ValueError, match=r"gemm: alpha=Fraction\(1, 3\) cannot be taken "
                                         r"exactly.*not a binary fraction"):
        er.gemm(a, a, alpha=Fraction(1, 3))
    for flag in ("trans_a", "trans_b"):
        with pytest.raises(ValueError, match=rf"gemm: {flag}='yes'; expected True"):
            er.gemm(a, a, **{flag: "yes"})
    for op in (er.matmul, er.dot, er.gemm):
        x = a[0] if op is er.dot else a
        with pytest.raises(ValueError, match=r"fused='x'; expected True .*False .*None"):
            op(x, x, fused="x")
    # numpy scalars and 0-d arrays are numbers
    assert er.gemm(a, a, a, alpha=np.float32(2), beta=np.array(1.0)).rounded.tolist() == \
        [[5.0, 5.0], [5.0, 5.0]]


@pytest.mark.parametrize("shapes", [((2, 0), (0, 3)), ((0, 2), (2, 3)), ((2, 3), (3, 0))],
                         ids=["k0", "m0", "n0"])
def test_the_backward_of_empty_products_is_torch_s(shapes):
    """matmul.backward and gemm.backward with m, k or n = 0 raised numpy's "cannot reshape
    array of size 0"; torch 2.13 gives empty gradients, or zeros (the empty sum) where the
    gradient's own shape is not empty."""
    torch = pytest.importorskip("torch")
    a, b = (np.zeros(s, F32) for s in shapes)
    grad = np.ones((shapes[0][0], shapes[1][1]), F32)
    ta, tb = (torch.from_numpy(v).requires_grad_() for v in (a, b))
    (ta @ tb).backward(torch.from_numpy(grad))
    r = er.matmul.backward(a, b, grad)
    for mine, theirs in ((r.grad_a, ta.grad), (r.grad_b, tb.grad)):
        assert mine.rounded.shape == tuple(theirs.shape)
        assert mine.covers(theirs.numpy()).all()
        assert (mine.rounded.numpy() == 0).all() and not np.signbit(mine.rounded.numpy()).any()
    g = er.gemm.backward(a, b, grad, np.ones_like(grad), beta=0.5)
    assert g.grad_c.rounded.tolist() == (0.5 * grad).tolist()
    assert g.grad_a.rounded.shape == a.shape and g.grad_b.rounded.shape == b.shape


#: Ops whose result format is named by the call, not promoted: policy= has nothing to pick.
_NO_POLICY = {"quantize": "the block format is named (er.quantize(x, 'mxfp8_e4m3'))",
              "cast": "the target format is named (er.cast(x, 'bfloat16'))",
              "quantize_linear": "the code format is the zero point's or dtype= (ONNX's "
                                 "output_dtype), nothing promotes",
              "dequantize_linear": "the output format is the scale's or dtype=, nothing "
                                   "promotes"}


def test_every_op_takes_policy():
    """Issue 19: policy= was a TypeError for every op but the elementwise ones. Every op of the
    registry takes it (the row ops accept torch's and refuse another by name)."""
    from exactref.ops import all_ops

    missing = [s.name for s in all_ops() if s.name not in _NO_POLICY
               and "policy" not in inspect.signature(s.function).parameters]
    assert not missing, missing


@pytest.mark.parametrize("call", [
    lambda **kw: er.softmax(np.ones((2, 3), F32), dim=-1, **kw),
    lambda **kw: er.log_softmax(np.ones((2, 3), F32), dim=-1, **kw),
    lambda **kw: er.logsumexp(np.ones((2, 3), F32), dim=-1, **kw),
    lambda **kw: er.layer_norm(np.arange(6, dtype=F32).reshape(2, 3), (3,), **kw),
    lambda **kw: er.rms_norm(np.arange(6, dtype=F32).reshape(2, 3), (3,), **kw),
    lambda **kw: er.group_norm(np.arange(12, dtype=F32).reshape(1, 4, 3), 2, **kw),
    lambda **kw: er.cross_entropy(np.ones((2, 3), F32), np.array([0, 2]), **kw),
    lambda **kw: er.scaled_dot_product_attention(np.ones((2, 4), F32), np.ones((3, 4), F32),
                                                 np.ones((3, 4), F32), **kw),
], ids=["softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm", "group_norm",
        "cross_entropy", "attention"])
def test_row_ops_take_torch_policy_and_refuse_another_by_name(call):
    assert call(policy="torch").rounded.tolist() == call().rounded.tolist()
    with pytest.raises(ValueError, match=r"policy='numpy' is not modelled for .*torch's .*"
                                         r"leave policy out"):
        call(policy="numpy")
