"""Wrong answers of the long sums found by trying bad and edge inputs (issue 11), pinned: axes
out of range, exact zero sums that allowed a rounding error, 0-d inputs PyTorch's OpInfo samples
use, empty contractions of addmm and baddbmm, and how strong a check is."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import exactref as er
from exactref import linalg
from exactref.linalg._bounds import WEAK_CANCELLATION, WEAK_ULPS

F32 = np.float32


# ------------------------------------------------------------------------------ axes
@pytest.mark.parametrize("axis", [2, 5, -3, (0, 2)])
def test_an_axis_out_of_range_raises_numpys_axis_error(axis):
    # it summed over axis % ndim before: axis=2 gave [2, 2, 2], axis=5 gave [3, 3]
    with pytest.raises(np.exceptions.AxisError, match=r"out of bounds for an array of 2 "
                                                      r"dimensions \(shape \(2, 3\)\)"):
        linalg.sum(np.ones((2, 3), F32), axis=axis)


@pytest.mark.parametrize("axis", [1.0, "1", [0.0], True])
def test_an_axis_that_is_not_an_integer_is_a_type_error(axis):
    with pytest.raises(TypeError, match=r"is not an axis; expected an integer"):
        linalg.sum(np.ones((2, 3), F32), axis=axis)


def test_axis_lists_and_numpy_integers_are_axes():
    x = np.arange(6, dtype=F32).reshape(2, 3)
    assert linalg.sum(x, axis=[0, 1]).rounded.tolist() == 15.0
    assert linalg.sum(x, axis=np.int64(-1)).rounded.tolist() == [3.0, 12.0]


# ------------------------------------------------------------------------------ 0-d (OpInfo)
def test_the_sum_of_a_0d_array_over_axis_0_is_its_value():
    x = er.asarray(1.5, "float32")
    for axis in (0, -1, (0,), None):
        r = linalg.sum(x, axis)
        assert r.rounded.shape == () and r.rounded.tolist() == 1.5
        assert r.covers(np.float32(1.5)).all()
    assert linalg.sum(x, 0, keepdims=True).rounded.shape == ()  # as torch
    assert linalg.sum(er.asarray(3, "int8"), -1).rounded.tolist() == 3


def test_the_sum_of_a_0d_complex_array():
    # "axes don't match array" before: a 0-d part became 1-d
    r = linalg.sum(er.asarray(1.5 - 2j, "complex64"))
    assert r.rounded.shape == () and r.rounded.tolist() == 1.5 - 2j
    assert linalg.sum(er.asarray(1.5 - 2j, "complex128"), 0).rounded.tolist() == 1.5 - 2j


def test_the_backward_of_a_sum_checks_its_axis_too():
    with pytest.raises(np.exceptions.AxisError):
        linalg.sum.backward(np.ones((2, 3), F32), np.ones(2, F32), axis=5)
    g = linalg.sum.backward(er.asarray(1.5, "float32"), er.asarray(2.0, "float32"), axis=0)
    assert g.rounded.tolist() == 2.0


# ------------------------------------------------------------------------------ exact zeros
def test_a_sum_of_exact_zeros_has_no_tolerance():
    r = linalg.sum(np.zeros(3, F32))
    assert r.tolerance().tolist() == 0.0
    assert not r.covers(np.float32(1e-45)).all()  # covered before: 2 * k subnormals allowed
    assert r.covers(np.float32(0.0)).all() and r.covers(np.float32(-0.0)).all()
    empty = linalg.sum(np.zeros((3, 0), F32), axis=1)  # no terms at all
    assert empty.tolerance().tolist() == [0.0, 0.0, 0.0]


def test_a_product_with_an_empty_contraction_has_no_tolerance():
    r = linalg.matmul(np.zeros((2, 0), F32), np.zeros((0, 3), F32))
    assert np.asarray(r.tolerance()).max() == 0.0  # 5.6e-45 before
    assert not r.covers(np.full((2, 3), 1e-45, F32)).all()
    assert r.covers(np.zeros((2, 3), F32)).all()


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_products_whose_terms_are_all_zero_are_exact(dtype):
    a = np.zeros((2, 5), dtype)
    a[0, 0] = 1  # row 0 meets a zero column of b: its terms are zero too
    b = np.zeros((5, 3), dtype)
    b[1, 2] = 1
    r = linalg.matmul(a, b)
    assert np.asarray(r.tolerance()).max() == 0.0
    tiny = np.full((2, 3), np.finfo(dtype).smallest_subnormal).astype(dtype)
    assert not r.covers(tiny).any()
    # an element with a nonzero term keeps its bound; the others have none
    b[0, 0] = 3
    tol = np.asarray(linalg.matmul(a, b).tolerance())
    assert tol[0, 0] > 0 and np.count_nonzero(tol) == 1
    c = np.ones((2, 3), dtype)
    assert np.asarray(linalg.gemm(a, b, c, alpha=0.1).tolerance())[0, 0] > 0


def test_gemm_of_zero_terms_is_exact():
    r = linalg.gemm(np.ones((2, 2), F32), np.ones((2, 2), F32), np.zeros((2, 2), F32), alpha=0)
    assert np.asarray(r.tolerance()).max() == 0.0


# ------------------------------------------------------------------------------ PyTorch
def test_torch_sum_over_dim_0_of_a_0d_tensor_and_an_empty_dim_list():
    torch = pytest.importorskip("torch")
    from exactref.equivalents import torch_linalg as etl

    t = torch.tensor(1.5)
    out = torch.sum(t, dim=0, keepdim=True)
    ref = etl.sum(t, dim=0, keepdim=True)  # IndexError before
    assert ref.rounded.shape == tuple(out.shape) and ref.covers(out).all()
    z = torch.tensor(1.5 - 2j)
    assert etl.sum(z).covers(torch.sum(z)).all()  # "axes don't match array" before
    x = torch.arange(6.0).reshape(2, 3)
    for dim in ((), []):  # torch reduces every dimension; it reduced none before
        out = torch.sum(x, dim=dim)
        ref = etl.sum(x, dim=dim)
        assert ref.rounded.shape == () and ref.covers(out).all()


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_addmm_and_baddbmm_with_an_empty_contraction_scale_by_beta_in_the_dtype(name):
    torch = pytest.importorskip("torch")
    from exactref.equivalents import torch_linalg as etl

    dt = getattr(torch, name)
    x = torch.tensor([[-8.0703125]], dtype=dt)
    e1, e2 = torch.empty(1, 0, dtype=dt), torch.empty(0, 1, dtype=dt)
    out = torch.addmm(x, e1, e2, beta=0.2)  # input * beta, beta rounded to the dtype first
    assert etl.addmm(x, e1, e2, beta=0.2).covers(out).all()  # 1 ulp off before (float16)
    out = torch.baddbmm(x[None], e1[None], e2[None], beta=0.2)
    assert etl.baddbmm(x[None], e1[None], e2[None], beta=0.2).covers(out).all()
    # through float32 first: 1 + 2**-11 + 2**-40 is a tie in float16 once in float32
    beta = 1 + (2.0**-11 if name == "float16" else 2.0**-8) + 2.0**-40
    one = torch.ones(1, 1, dtype=dt)
    out = torch.addmm(one, e1, e2, beta=beta)
    ref = etl.addmm(one, e1, e2, beta=beta)
    assert out.item() == 1.0 and ref.rounded.tolist() == [[1.0]] and ref.covers(out).all()


def test_addmm_with_an_empty_contraction_sweep():
    torch = pytest.importorskip("torch")
    from exactref.equivalents import torch_linalg as etl

    rng = np.random.default_rng(11)
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        for _ in range(50):
            x = torch.tensor(rng.standard_normal((2, 3)) * 8, dtype=dt)
            beta = float(rng.standard_normal())
            e1, e2 = torch.empty(2, 0, dtype=dt), torch.empty(0, 3, dtype=dt)
            assert etl.addmm(x, e1, e2, beta=beta).covers(torch.addmm(x, e1, e2,
                                                                      beta=beta)).all()


# ------------------------------------------------------------------------------ strength
def _cancelling():
    a = er.asarray([[1e8, 1.0, -1e8]], "float32")
    b = er.asarray([[1.0], [1.0], [1.0]], "float32")
    return a, b


def test_coverage_reports_how_strong_the_check_was():
    a, b = _cancelling()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", er.WeakCheckWarning)
        cov = linalg.matmul(a, b).covers([[0.5]])  # covered: 0.5 is far from the exact 1
    assert cov.all()
    med, top = cov.tolerance_stats
    assert med == top and med > 1e8
    assert "tolerance median 200000032, max 200000032 ulp of float32" in cov.summary()
    exact = er.add(np.float32([1.0]), np.float32([2.0]))
    assert exact.covers(np.float32([3.0])).tolerance_stats == (0.0, 0.0)


def test_a_weak_check_warns_where_it_passes():
    a, b = _cancelling()
    with pytest.warns(er.WeakCheckWarning, match=r"median tolerance is 2e\+08 ulp of float32.*"
                                                 r"order='sequential'"):
        assert linalg.matmul(a, b).covers([[0.5]]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not linalg.matmul(a, b).covers([[1e3]]).all()  # fails: nothing to warn
        # declared freedom (PyTorch's contract): no warning
        assert linalg.matmul(a, b, order="any").covers([[0.5]]).all()
        # a declared accumulator tightens the check
        assert not linalg.matmul(a, b, compute="float64").covers([[0.5]]).all()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4096)).astype(F32)
    with pytest.warns(er.WeakCheckWarning, match=r"^sum: a weak check"):
        linalg.sum(x, axis=1).covers(x.sum(axis=1))
    with warnings.catch_warnings():  # positive data: a wide bound, but no cancellation
        warnings.simplefilter("error")
        # (the default order's bound is 36 ulp here: a bfloat16 accumulator makes it wide)
        cov = linalg.sum(np.abs(x), axis=1, compute="bfloat16").covers(np.abs(x).sum(axis=1))
        assert cov.all() and cov.tolerance_stats[0] > WEAK_ULPS


def test_any_of_warns_once_where_an_alternative_is_weak():
    a, b = _cancelling()
    r = linalg.matmul(a, b)
    with pytest.warns(er.WeakCheckWarning) as record:
        er.any_of(r, linalg.matmul(a, b, compute="float64")).covers([[0.5]])
    assert len(record) == 1


def test_the_weak_check_criterion_is_documented_with_its_constants():
    import pathlib

    text = (pathlib.Path(__file__).parents[2] / "docs" / "linalg.md").read_text()
    assert f"`WEAK_ULPS` = {WEAK_ULPS}" in text
    assert f"`WEAK_CANCELLATION` = {WEAK_CANCELLATION}" in text


def test_gradients_report_the_strength_of_their_sums():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 400)).astype(F32)
    b = rng.standard_normal((400, 2)).astype(F32)
    g = np.ones((3, 2), F32)
    grads = linalg.matmul.backward(a, b, g)
    cov = grads.grad_a.covers(grads.grad_a.rounded)
    assert cov.all() and cov.tolerance_stats[1] >= cov.tolerance_stats[0] >= 0
    assert grads.grad_a.terms_sum.shape == a.shape
