"""exactref.equivalents.torch.scaled_dot_product_attention against torch 2.13's CPU kernels:
which kernel runs, every output covered (flash and math, every float dtype, masks, causal, GQA,
huge logits), PyTorch's 0 for a row no key takes part in, and the bfloat16 flash kernel's
stored weights that the plain float32 model does not cover."""

from __future__ import annotations

import math

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
F = torch.nn.functional
ert = pytest.importorskip("exactref.equivalents.torch")

DTYPES = ("float32", "bfloat16", "float16", "float64")


def _t(rng, shape, dt, s=1.0):
    return torch.tensor(rng.standard_normal(shape) * s, dtype=torch.float32).to(
        getattr(torch, dt))


def _kernel_run(*args, **kw):
    from torch.profiler import profile

    with profile() as p:
        F.scaled_dot_product_attention(*args, **kw)
    keys = [e.key for e in p.key_averages()]
    return "flash" if any("flash_attention_for_cpu" in k for k in keys) else "math"


@pytest.mark.parametrize("shapes", [((1, 2, 8, 16), (1, 2, 8, 16), (1, 2, 8, 16)),
                                    ((1, 2, 8, 16), (1, 2, 8, 16), (1, 2, 8, 4)),
                                    ((2, 8, 16), (2, 8, 16), (2, 8, 16))])
def test_kernel_choice_is_measured(shapes):
    q, k, v = (torch.randn(s) for s in shapes)
    from exactref.equivalents._torch_attention import kernel

    assert kernel(q, k, v) == _kernel_run(q, k, v)


CASES = [  # (shape of q (and k), Ev, logit spread, kwargs)
    ((2, 2, 64, 32), 32, 1.0, {}),
    ((1, 2, 520, 16), 16, 3.0, {"is_causal": True}),  # two key blocks of the flash kernel
    ((2, 2, 16, 8), 4, 1.0, {}),  # math
    ((2, 12, 8), 8, 2.0, {"is_causal": True}),  # math, 3-D
    ((2, 3, 20, 8), 8, 12.0, {}),  # huge logits
]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_torch_is_covered(dt, case, request):
    shape, Ev, s, kw = CASES[case]
    if dt == "float64" and shape[-2] > 64 and not request.config.getoption("--run-slow"):
        pytest.skip("slow: float64 outputs take MPFR per row (about 35 ms a row of 520 keys)")
    rng = np.random.default_rng(case)
    q, k = _t(rng, shape, dt, s), _t(rng, shape, dt, 1.0)
    v = _t(rng, shape[:-1] + (Ev,), dt)
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    cov = ert.scaled_dot_product_attention(q, k, v, **kw).covers(out)
    assert cov.all(), (cov.worst_index, cov.worst_ulps)


@pytest.mark.parametrize("dt", ("float32", "bfloat16"))
def test_masks_gqa_scale(dt):
    rng = np.random.default_rng(9)
    q = _t(rng, (1, 4, 12, 8), dt, 2.0)
    k, v = _t(rng, (1, 2, 12, 8), dt), _t(rng, (1, 2, 12, 8), dt)
    bm = torch.rand(12, 12) < 0.5
    bm[3] = False  # no key: torch gives 0
    fm = torch.where(torch.rand(12, 12) < 0.3, -math.inf, torch.randn(12, 12) * 2).to(q.dtype)
    fm[5] = -math.inf
    for kw in ({"attn_mask": bm}, {"attn_mask": fm}, {"scale": 0.7}, {"is_causal": True}):
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
        ref = ert.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
        assert ref.covers(out).all(), kw
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bm, enable_gqa=True)
    assert (out[0, :, 3] == 0).all()
    exact = er.scaled_dot_product_attention(q, k, v, attn_mask=bm, enable_gqa=True)
    assert np.isnan(np.asarray(exact.rounded.numpy(), np.float64)[0, :, 3]).all()


def test_bf16_flash_stores_the_weights():
    """The flash kernel's bfloat16 output is outside the float32 model (its weights are stored
    in bfloat16 before P V) and inside the equivalent, which declares it."""
    rng = np.random.default_rng(0)
    q, k, v = (_t(rng, (2, 2, 64, 32), "bfloat16") for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v)
    plain = er.scaled_dot_product_attention(q, k, v, exp_accuracy=20, blocks=1)
    assert not plain.covers(out).all()
    assert plain.covers(out).worst_ulps > 100
    assert ert.scaled_dot_product_attention(q, k, v).covers(out).all()


def test_audit_torch_passes():
    from exactref.audit import AuditConfig, run_audit

    report = run_audit(AuditConfig(target="torch", ops=["scaled_dot_product_attention"],
                                   dtypes=["bfloat16", "float32"], kinds=["same"]))
    assert report.groups and all(g.status == "pass" for g in report.groups), [
        (g.status, g.max_ulps) for g in report.groups]


# ------------------------------------------------------------------------------ empty inputs
@pytest.mark.parametrize("lq, lk, e, b", [(0, 3, 4, 1), (2, 3, 4, 0), (2, 3, 0, 2), (2, 0, 4, 1)])
def test_zero_length_sequences(lq, lk, e, b):
    """No queries, no batch, an empty head dimension (every score 0: the mean of the values,
    as torch 2.13; 1/sqrt(0) raised ZeroDivisionError) and no keys (torch's zeros: its
    equivalent pins them; er's exact value there is NaN, a softmax over nothing, as for a
    fully masked query)."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((b, 2, lq, e)).astype(np.float32)
    k = rng.standard_normal((b, 2, lk, e)).astype(np.float32)
    v = rng.standard_normal((b, 2, lk, 3)).astype(np.float32)
    want = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)))
    theirs = ert.scaled_dot_product_attention(q, k, v)
    assert theirs.rounded.shape == tuple(want.shape) and theirs.covers(want).all()
    ours = er.scaled_dot_product_attention(q, k, v)
    assert ours.rounded.shape == tuple(want.shape)
    if lk == 0 and lq and b:
        assert np.isnan(ours.rounded.numpy()).all()
    else:
        assert ours.covers(want).all()
    if e == 0:  # the mean of the values, exactly rounded
        mean = v.astype(np.float64).mean(axis=2, keepdims=True)
        assert np.array_equal(ours.rounded.numpy(),
                              np.broadcast_to(mean, want.shape).astype(np.float32))
