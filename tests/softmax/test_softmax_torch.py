"""exactref.equivalents.torch's softmax, log_softmax and logsumexp against torch 2.13 on CPU:
every output covered, on the shapes real models use and on adversarial rows; the departures
from the mathematical answer pinned; torch's half-format log_softmax outside the float32
model (it stores the sum and its logarithm in the input's format)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

OPS = ("softmax", "log_softmax", "logsumexp")
DTYPES = ("float32", "float64", "bfloat16", "float16")


def _rows(rng, M, K, scale):
    x = rng.normal(size=(M, K)) * scale
    x[0, K // 2:] = -np.inf  # a mask
    x[1] = x[1, 0]  # all equal
    x[2, 1:] -= 60  # one dominant entry
    if M > 4:
        x[3, :] = -np.inf  # fully masked
        x[4, 0] = 1e4 if scale > 1 else 30  # a huge logit
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_torch_cpu_covered(op, dtype):
    rng = np.random.default_rng(abs(hash((op, dtype))) % 2**32)
    for M, K, scale in ((16, 7, 1.0), (8, 128, 10.0), (4, 1024, 3.0)):
        x = er.asarray(_rows(rng, M, K, scale), dtype).torch()
        out = getattr(torch, op)(x, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", er.WeakCheckWarning)
            cov = getattr(ert, op)(x, 1).covers(out)
        assert cov.all(), (M, K, scale, cov.summary())


@pytest.mark.parametrize("dtype", DTYPES)
def test_not_the_last_dim(dtype):
    """Across dim 1 of (20, 9, 40) the vectorized loop leaves a scalar tail (the last 8 inner
    positions) that stores each exponential in the half format: covered, and the plain
    float32 model is not enough there."""
    x = (torch.randn(20, 9, 40, generator=torch.Generator().manual_seed(3)) * 3).to(
        getattr(torch, dtype))
    for op in OPS:
        assert getattr(ert, op)(x, 1).covers(getattr(torch, op)(x, 1)).all(), op
    if dtype in ("bfloat16", "float16"):
        plain = er.softmax(x, dim=1, accuracy="glibc").covers(torch.softmax(x, 1))
        assert not plain.all() and plain.uncovered == (~plain.mask[..., 32:]).sum()


def test_other_dims_and_keepdim():
    x = torch.randn(3, 5, 4, dtype=torch.bfloat16) * 5
    assert ert.softmax(x, 1).covers(torch.softmax(x, 1)).all()
    assert ert.log_softmax(x, 0).covers(torch.log_softmax(x, 0)).all()
    assert ert.logsumexp(x, (0, 2), True).covers(torch.logsumexp(x, (0, 2), True)).all()
    h = x.to(torch.float16)
    assert ert.softmax(h, -1, dtype=torch.float32).covers(
        torch.softmax(h, -1, dtype=torch.float32)).all()


def test_departures_pinned():
    """A +inf entry: torch gives NaN (inf - inf); the limit is 1 at it and 0 elsewhere."""
    x = torch.tensor([[float("inf"), 1.0, 2.0], [float("-inf")] * 3])
    assert torch.softmax(x, 1)[0].isnan().all() and torch.log_softmax(x, 1)[0].isnan().all()
    assert er.softmax(x, dim=1).rounded.tolist()[0] == [1.0, 0.0, 0.0]
    assert er.log_softmax(x, dim=1).rounded.tolist()[0] == [0.0, -np.inf, -np.inf]
    assert ert.softmax(x, 1).covers(torch.softmax(x, 1)).all()
    assert ert.log_softmax(x, 1).covers(torch.log_softmax(x, 1)).all()
    assert not er.softmax(x, dim=1).covers(torch.softmax(x, 1)).mask[0].any()
    # the same where both agree: a row of -inf is NaN, its logsumexp -inf
    assert np.isnan(er.softmax(x, dim=1).rounded.tolist()[1]).all()
    assert er.logsumexp(x, dim=1).rounded.tolist() == [np.inf, -np.inf]


def test_half_log_softmax_outside_the_float32_model():
    """torch's bfloat16 log_softmax rounds the sum to bfloat16: at the maximum of a row whose
    other terms are small it returns 0 (or -2**-7) where the exact value is some -6e-5."""
    row = torch.tensor([[4.84375, 16.0, -22.75, 2.609375, -11.0, 5.9375, -13.125]],
                       dtype=torch.bfloat16)
    out = torch.log_softmax(row, 1)
    r = er.log_softmax(row, dim=1, accuracy="sleef_u10")
    cov = r.covers(out)
    assert not cov.all() and cov.worst_index == (0, 1) and cov.worst_ulps > 200
    assert out[0, 1].item() == 0.0 and -6e-5 < r.rounded.tolist()[0][1] < -5e-5
    assert ert.log_softmax(row, 1).covers(out).all()


def test_float32_exp_is_within_sleef_u10():
    """Rows [0, t], t < -18: the sum is 1 and the output is the kernel's exp(t) itself."""
    t = -18 - torch.rand(2000, dtype=torch.float64) * 60
    x = torch.stack([torch.zeros_like(t), t], 1).float()
    got = torch.softmax(x, 1)[:, 1]
    ref = er.exp(x[:, 1], accuracy="sleef_u10")
    assert ref.covers(got).all()


def test_the_torch_audit_covers_the_normalizations():
    """``exactref audit torch --ops softmax,log_softmax,logsumexp``: every real float group
    passes (the float8 formats have no CPU kernel: unsupported)."""
    from exactref.audit import AuditConfig, run_audit

    r = run_audit(AuditConfig(target="torch", ops=("softmax", "log_softmax", "logsumexp"),
                              dtypes=("float32", "float64", "bfloat16", "float16"),
                              samples=32))
    assert r.failed == 0 and r.passed == 12, [(g.key, g.status) for g in r.groups]


def test_custom_kernels_are_audited_and_numpy_skips_the_row_ops():
    """``exactref audit simulate:np_softmax --op softmax`` passes, the exp2 kernel fails; the
    numpy target plans no softmax group (scipy's softmax normalizes over every axis by
    default: it is audited as a custom kernel instead)."""
    from exactref.audit import AuditConfig, run_audit

    def audit(kernel):
        return run_audit(AuditConfig(target=f"simulate:{kernel}", op_name="softmax",
                                     dtypes=("float32",), samples=32))

    assert audit("np_softmax").failed == 0 and audit("np_softmax").passed == 1
    assert audit("np_softmax_exp2").failed == 1
    from exactref.audit import AuditUsageError

    with pytest.raises(AuditUsageError, match="torch target does"):
        run_audit(AuditConfig(target="numpy", ops=("softmax",), dtypes=("float32",)))


# ------------------------------------------------------------------------------ empty inputs
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
@pytest.mark.parametrize("shape, dim", [((4, 0), -1), ((0, 5), -1), ((0, 5), 0), ((0,), 0),
                                        ((2, 0, 3), 1)])
def test_empty_inputs_as_torch(op, shape, dim):
    """Empty rows and batches as torch 2.13: empty outputs, logsumexp of an empty row -inf
    (``log 0``), in chunks too."""
    x = np.zeros(shape, np.float32)
    want = getattr(torch, op)(torch.tensor(x), dim)
    for fn in (getattr(er, op), getattr(ert, op)):
        r = fn(x, dim=dim)
        assert r.rounded.shape == tuple(want.shape)
        assert np.array_equal(r.rounded.numpy(), want.numpy())
        assert np.asarray(r.covers(want)).all()
