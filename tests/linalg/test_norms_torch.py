"""PyTorch 2.13's CPU layer_norm, rms_norm and group_norm against
``exactref.equivalents.torch`` (measured behaviour pinned), and ``exactref audit torch --ops
layer_norm,rms_norm,group_norm``: rows of 4096, constant rows, overflowing squares, rows of
one element pass; a custom bfloat16 RMSNorm that accumulates its sum of squares in bfloat16
fails the audit with its worst element reported."""

from __future__ import annotations

import sys
import types

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref.audit import AuditConfig, run_audit

torch = pytest.importorskip("torch")
F = torch.nn.functional
ert = pytest.importorskip("exactref.equivalents.torch")

DTYPES = [torch.float64, torch.float32, torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_equivalents_cover_torch(dt):
    g = torch.Generator().manual_seed(0)
    for x in (torch.randn(6, 256, generator=g), 5 + torch.randn(3, 2, 64, generator=g)):
        x = x.to(dt)
        n = x.shape[-1]
        w = (0.5 + torch.rand(n, generator=g)).to(dt)
        b = torch.randn(n, generator=g).to(dt)
        assert ert.layer_norm(x, (n,), w, b).covers(F.layer_norm(x, (n,), w, b)).all()
        assert ert.layer_norm(x, (n,)).covers(F.layer_norm(x, (n,))).all()
        assert ert.rms_norm(x, (n,), w).covers(F.rms_norm(x, (n,), w)).all()
        assert ert.rms_norm(x, (n,), w, 1e-3).covers(F.rms_norm(x, (n,), w, 1e-3)).all()
    x = (3 + torch.randn(2, 8, 4, 4, generator=g)).to(dt)
    w = (0.5 + torch.rand(8, generator=g)).to(dt)
    b = torch.randn(8, generator=g).to(dt)
    assert ert.group_norm(x, 4, w, b).covers(F.group_norm(x, 4, w, b)).all()


def test_measured_behaviour_pinned():
    # float32 data whose squares overflow float32: torch returns 0, the exact value is +-1
    x = torch.tensor([[1e30, -1e30, 1e30, -1e30]])
    out = F.layer_norm(x, (4,))
    assert out.tolist() == [[0.0, 0.0, 0.0, 0.0]]
    assert er.layer_norm(x, (4,)).rounded.tolist() == [[1.0, -1.0, 1.0, -1.0]]
    assert ert.layer_norm(x, (4,)).covers(out).all()
    assert ert.rms_norm(x, (4,)).covers(F.rms_norm(x, (4,))).all()
    # a constant row gives the bias; layer_norm exactly, group_norm (x * s + (b - m * s)) not
    c = torch.full((1, 4, 1), 0.3)
    wb = (torch.tensor([0.7, 1.3, 0.9, 1.1]), torch.tensor([0.1, -0.2, 0.3, 0.05]))
    assert F.layer_norm(c[:, :, 0], (4,), *wb).tolist() == [wb[1].tolist()]
    gn = F.group_norm(c, 2, *wb)
    assert ert.group_norm(c, 2, *wb).covers(gn).all()
    # rms_norm's eps=None: float32's epsilon for bfloat16 (not bfloat16's 2**-7)
    x = torch.tensor([[1e-4, 0.0, 0.0, 0.0]], dtype=torch.bfloat16)
    assert ert.rms_norm(x, (4,)).covers(F.rms_norm(x, (4,))).all()
    assert not er.rms_norm(x, (4,), eps=2.0**-7).covers(F.rms_norm(x, (4,))).all()
    # non-finite rows: layer_norm NaN, rms_norm 0 for the finite elements, NaN for inf
    x = torch.tensor([[1.0, float("inf"), 2.0, 3.0]])
    assert ert.layer_norm(x, (4,)).covers(F.layer_norm(x, (4,))).all()
    assert ert.rms_norm(x, (4,)).covers(F.rms_norm(x, (4,))).all()


def test_bfloat16_rms_norm_with_bfloat16_sum_caught_by_the_equivalent():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4096)).astype(ml_dtypes.bfloat16)
    xt = torch.tensor(x.astype(np.float32)).bfloat16()
    assert ert.rms_norm(xt, (4096,)).covers(F.rms_norm(xt, (4096,))).all()
    bad = _bf16_rms(x, (4096,))
    assert not ert.rms_norm(xt, (4096,)).covers(bad).all()


def _bf16_rms(x, normalized_shape, weight=None, eps=None):
    """A bfloat16 RMSNorm whose sum of squares runs in bfloat16 (the rest in float32)."""
    x = np.asarray(x)
    x32 = x.astype(np.float32)
    acc = np.zeros(x.shape[:-1], ml_dtypes.bfloat16)
    for j in range(x.shape[-1]):
        acc = (acc.astype(np.float32) + x32[..., j] * x32[..., j]).astype(ml_dtypes.bfloat16)
    ms = acc.astype(np.float32) / np.float32(x.shape[-1])
    e = np.float32(2.0**-23 if eps is None else eps)
    y = x32 / np.sqrt(ms + e)[..., None]
    if weight is not None:
        y = y * np.asarray(weight).astype(np.float32)
    return y.astype(x.dtype)


def test_audit_torch_passes():
    report = run_audit(AuditConfig(target="torch", ops=("layer_norm", "rms_norm",
                                                        "group_norm"),
                                   dtypes=("float32", "bfloat16"), kinds=("same",)))
    keys = [g.key for g in report.groups]
    assert any("[8,4096]" in k for k in keys) and any("~constant" in k for k in keys)
    assert any("~huge" in k for k in keys) and any("[6,1]" in k for k in keys)
    assert report.failed == 0, [(g.key, g.message, g.worst) for g in report.groups
                                if g.status == "fail"]
    assert len(report.groups) == 32


def test_custom_bfloat16_accumulating_rms_norm_fails_the_audit(monkeypatch):
    mod = types.ModuleType("bf16_rms_kernel")
    mod.rms_norm = _bf16_rms
    monkeypatch.setitem(sys.modules, "bf16_rms_kernel", mod)
    report = run_audit(AuditConfig(target="bf16_rms_kernel:rms_norm", op_name="rms_norm",
                                   ops=("rms_norm",), dtypes=("bfloat16",), kinds=("same",)))
    big = [g for g in report.groups if "[8,4096]" in g.key]
    assert big and big[0].status == "fail"
    assert "rms_norm" in big[0].worst["reproducer"]  # the audit's reproducer names the op


def test_llama_style_rms_norm_is_the_unfused_model():
    """Hugging Face's LlamaRMSNorm: float32 up to the normalized value, which is rounded into
    bfloat16 before the bfloat16 weight multiplies it: covered by ``fused=False`` and by the
    default (``fused=None``: fused or not), caught by the declared fused model (the extra
    rounding shows on about a fifth of the elements)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4096, generator=g).bfloat16()
    w = (torch.rand(4096, generator=g) + 0.5).bfloat16()
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
    y = w * h.to(torch.bfloat16)
    assert er.rms_norm(x, 4096, w, eps=1e-6, fused=False).covers(y).all()
    assert er.rms_norm(x, 4096, w, eps=1e-6).covers(y).all()
    assert er.rms_norm(x, 4096, w, eps=1e-6, fused=True).covers(y).uncovered > 4096


# ------------------------------------------------------------------------------ empty inputs
@pytest.mark.parametrize("op, shape, arg", [
    ("layer_norm", (4, 0), (0,)), ("layer_norm", (2, 3, 0), (3, 0)),
    ("layer_norm", (0, 5), (5,)), ("rms_norm", (4, 0), (0,)), ("rms_norm", (0, 5), (5,)),
    ("rms_norm", (2, 0, 3), (0, 3)), ("group_norm", (0, 4, 3), 2),
    ("group_norm", (2, 4, 0), 2), ("group_norm", (2, 0, 3), 1)])
def test_empty_inputs_as_torch(op, shape, arg):
    """Empty rows or batches give torch 2.13's empty result (the rows of an empty normalized
    shape were reshaped by numpy, which cannot infer them: "cannot reshape array of size 0"),
    for er's op and its torch equivalent, covering torch's output."""
    x = np.zeros(shape, np.float32)
    want = getattr(torch.nn.functional, op)(torch.tensor(x), arg)
    for fn in (getattr(er, op), getattr(ert, op)):
        r = fn(x, arg)
        assert r.rounded.shape == tuple(want.shape) and r.rounded.dtype.name == "float32"
        assert r.tolerance().shape == tuple(want.shape)
        assert r.covers(want).all()
