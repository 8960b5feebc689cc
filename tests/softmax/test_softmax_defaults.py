"""softmax's, log_softmax's and logsumexp's default order ('library') proven on the kernels it
models, simulated step by step in numpy float32 arithmetic (IEEE, correctly rounded; each
exponential the float64 one rounded once, within the default accuracy): PyTorch CPU's
``_vec_softmax_lastdim`` / ``_vec_log_softmax_lastdim`` (SoftMaxKernel.cpp: ``reduce_all``'s W
lanes in sequence, the masked tail, ``vec_reduce_all``'s tree; W = 4 NEON, 8 AVX2, 16
AVX-512), its ``_vec_softmax`` over another dimension (in sequence along it), NumPy's
``np.sum`` (scipy.special.softmax) and a Triton-style tree; torch.softmax itself. Wrong ones
are caught: the sum accumulated in bfloat16, no max subtraction on large logits, log(softmax)
for log_softmax where softmax underflows."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import exactref as er

F32, BF16 = np.float32, ml_dtypes.bfloat16


def _exp(t):
    return np.exp(t.astype(np.float64)).astype(F32)  # correctly rounded but for rare ties


def lanes_sum(e, W):
    """``vec::reduce_all`` of a row: lane j sums elements j, j + W, ... in sequence (the
    first loaded, not added), the masked tail in the first lanes, then log2(W) levels."""
    K = e.shape[1]
    if K < W:
        acc = np.concatenate([e, np.zeros((e.shape[0], W - K), F32)], axis=1)
    else:
        acc = e[:, :W].copy()
        d = W
        while d + W <= K:
            acc = (acc + e[:, d:d + W]).astype(F32)
            d += W
        if d < K:
            acc[:, :K - d] = (acc[:, :K - d] + e[:, d:]).astype(F32)
    while acc.shape[1] > 1:
        h = acc.shape[1] // 2
        acc = (acc[:, :h] + acc[:, h:]).astype(F32)
    return acc[:, 0]


def seq_sum(e):
    s = np.zeros(e.shape[0], F32)
    for j in range(e.shape[1]):
        s = (s + e[:, j]).astype(F32)
    return s


def tree_sum(e):
    B = 1 << max(e.shape[1] - 1, 0).bit_length()
    v = np.concatenate([e, np.zeros((e.shape[0], B - e.shape[1]), F32)], axis=1)
    while v.shape[1] > 1:
        h = v.shape[1] // 2
        v = (v[:, :h] + v[:, h:]).astype(F32)
    return v[:, 0]


def numpy_sum(e):
    return e.sum(axis=1, dtype=F32)


def kernel(op, x, summer, subtract_max=True):
    m = x.max(axis=1, keepdims=True) if subtract_max else np.zeros((x.shape[0], 1), F32)
    t = (x - m).astype(F32)
    e = _exp(t)
    s = summer(e)[:, None]
    if op == "softmax":  # torch: tmp_sum = 1 / tmp_sum; x * tmp_sum
        return (e * (F32(1) / s).astype(F32)).astype(F32)
    ls = np.log(s.astype(np.float64)).astype(F32)
    if op == "log_softmax":
        return ((x - m).astype(F32) - ls).astype(F32)
    return (ls + m)[:, 0].astype(F32)


SUMS = {"torch NEON": lambda e: lanes_sum(e, 4), "torch AVX2": lambda e: lanes_sum(e, 8),
        "torch AVX-512": lambda e: lanes_sum(e, 16), "numpy": numpy_sum, "triton": tree_sum}
OPS = ("softmax", "log_softmax", "logsumexp")


def _rows(kind, rng, K):
    x = rng.standard_normal((4, K))
    return {"normal": x, "wide": 8 * x, "peaked": np.where(rng.random((4, K)) < 0.01, 30.0, x),
            "flat": 1e-3 * x}[kind].astype(F32)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("K", [1024, 1000, 33, 5])
@pytest.mark.parametrize("kind", ["normal", "wide", "peaked", "flat"])
def test_library_kernels_covered_by_the_default(op, K, kind):
    rng = np.random.default_rng(K)
    x = _rows(kind, rng, K)
    ref = getattr(er, op)(x, dim=-1, order="library")  # the default, declared
    for name, summer in SUMS.items():
        cov = ref.covers(kernel(op, x, summer))
        assert cov.all(), (name, cov)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_another_dimension_is_summed_in_sequence(op):
    """PyTorch's ``_vec_softmax`` over a dimension that is not the last adds along it in
    sequence: covered by the default there (and only there the default holds 'sequential')."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((512, 3)).astype(F32)
    got = kernel(op, np.ascontiguousarray(x.T), seq_sum).T
    assert getattr(er, op)(x, dim=0, order="library").covers(got).all()


def test_torch_softmax_covered_by_the_default():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    for kind in ("normal", "wide", "peaked"):
        x = _rows(kind, rng, 1024)
        t = torch.from_numpy(x)
        assert er.softmax(x, dim=-1, order="library", accuracy="sleef_u10").covers(
            torch.softmax(t, -1).numpy()).all(), kind
        assert er.log_softmax(x, dim=-1, order="library", accuracy="sleef_u10").covers(
            torch.log_softmax(t, -1).numpy()).all(), kind


def test_bfloat16_accumulated_sum_caught_by_the_default():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 1024)).astype(F32)

    def bf16_sum(e):
        s = np.zeros(e.shape[0], F32)
        for j in range(e.shape[1]):
            s = (s + e[:, j]).astype(BF16).astype(F32)
        return s
    for op in OPS:
        assert not getattr(er, op)(x, dim=-1).covers(kernel(op, x, bf16_sum)).all(), op


def test_no_max_subtraction_caught_by_the_default():
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((4, 64)) * 3 + 90).astype(F32)  # e**90 overflows float32
    for op in OPS:
        with np.errstate(over="ignore", invalid="ignore"):
            got = kernel(op, x, numpy_sum, subtract_max=False)
        assert not getattr(er, op)(x, dim=-1).covers(got).any(), op


def test_log_of_softmax_caught_by_the_default():
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((4, 256)) * 40).astype(F32)  # small probabilities underflow
    with np.errstate(divide="ignore"):
        got = np.log(kernel("softmax", x, numpy_sum).astype(np.float64)).astype(F32)
    assert not er.log_softmax(x, dim=-1).covers(got).all()
