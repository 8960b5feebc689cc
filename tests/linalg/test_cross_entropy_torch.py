"""torch.nn.functional.cross_entropy (torch 2.13 CPU) against exactref.equivalents.torch's
declaration, its departures from the exact loss pinned (0 * -inf, +inf logits, bfloat16's
stored log-softmax, float16's overflowing label smoothing), and the audit's groups."""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")
F = torch.nn.functional

DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def _case(dt, shape, red, eps=0.0, weighted=False, probs=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    C = shape[1]
    x = (torch.randn(*shape, generator=g) * 3).to(dt)
    if probs:
        t = torch.softmax(torch.randn(*shape, generator=g), 1).to(dt)
    else:
        t = torch.randint(0, C, (shape[0],) + tuple(shape[2:]), generator=g)
        t[torch.rand(t.shape, generator=g) < 0.1] = -100
    w = (torch.rand(C, generator=g) + 0.5).to(dt) if weighted else None
    kw = {"reduction": red, "label_smoothing": eps}
    return x, t, w, kw


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("red", ["none", "mean", "sum"])
def test_equivalent_covers_torch(dt, red):
    for shape, eps, weighted, probs in (((300, 10), 0.0, False, False),
                                        ((48, 50), 0.1, True, False),
                                        ((16, 20), 0.1, True, True),
                                        ((4, 5, 3, 2), 0.05, False, False)):
        x, t, w, kw = _case(dt, shape, red, eps, weighted, probs, seed=len(shape) + shape[1])
        out = F.cross_entropy(x, t, w, **kw)
        ref = ert.cross_entropy(x, t, w, **kw)
        assert ref.covers(out).all(), (shape, eps, weighted, probs)
        assert ref.rounded.dtype.name == str(dt)[6:]


def test_bf16_stored_log_softmax_departure():
    """torch's bfloat16 log_softmax stores the sum 1.0000585 as 1 and its log as 0: the loss
    at the dominant class is -0 where the exact loss is 5.84e-5, 244 bfloat16 ulps outside
    the float32 model; the equivalent declares that storage."""
    row = torch.tensor([[4.84375, 16.0, -22.75, 2.609375, -11.0, 5.9375, -13.125]],
                       dtype=torch.bfloat16)
    t = torch.tensor([1])
    out = F.cross_entropy(row, t, reduction="none")
    assert out.item() == 0.0
    r = er.cross_entropy(row, t, reduction="none", accuracy="sleef_u10")
    assert r.rounded.tolist() == [5.841255187988281e-05]
    assert r.covers(out).worst_ulps == 244.0
    assert ert.cross_entropy(row, t, reduction="none").covers(out).all()


def test_f16_label_smoothing_overflow():
    """torch's float16 label smoothing sums -log_softmax over 1000 classes and 8 rows in
    float16: 65504 is passed and the loss is inf where the exact value is about 11."""
    x, t, _, _ = _case(torch.float16, (8, 1000), "mean", seed=3)
    out = F.cross_entropy(x, t, label_smoothing=0.1)
    assert math.isinf(out.item())
    exact = er.cross_entropy(x, t, label_smoothing=0.1)
    assert 5 < exact.rounded.tolist() < 20
    assert not exact.covers(out).all()
    assert ert.cross_entropy(x, t, label_smoothing=0.1).covers(out).all()


def test_torch_nan_departures():
    """A weight of 0 on a -inf log-softmax (0 * inf) and a row with a +inf logit (inf - inf):
    torch gives NaN, the exact loss 0 and the limit (+inf here); the equivalent gives NaN."""
    x = torch.tensor([[5.0, -math.inf], [1.0, 2.0]])
    w = torch.tensor([1.0, 0.0])
    t = torch.tensor([1, 1])
    out = F.cross_entropy(x, t, w, reduction="none")
    assert math.isnan(out[0].item())
    assert er.cross_entropy(x, t, w, reduction="none").rounded.tolist()[0] == 0.0
    assert ert.cross_entropy(x, t, w, reduction="none").covers(out).all()
    x = torch.tensor([[math.inf, 0.0], [1.0, 2.0]])
    out = F.cross_entropy(x, t, reduction="none")
    assert math.isnan(out[0].item())
    assert er.cross_entropy(x, t, reduction="none").rounded.tolist()[0] == math.inf
    ref = ert.cross_entropy(x, t, reduction="none")
    assert ref.covers(out).all() and math.isnan(ref.rounded.tolist()[0])


def test_weight_dtype_refused():
    x, t, _, _ = _case(torch.bfloat16, (4, 3), "mean")
    with pytest.raises(TypeError, match="expected scalar type"):
        ert.cross_entropy(x, t, torch.ones(3))


def test_audit_bfloat16():
    from exactref.audit import AuditConfig, run_audit

    rep = run_audit(AuditConfig(target="torch", ops=("cross_entropy",), dtypes=("bfloat16",),
                                kinds=("same",)))
    assert len(rep.groups) == 11
    assert all(g.status == "pass" for g in rep.groups), [
        (g.key, g.message, g.worst) for g in rep.groups if g.status != "pass"]


def test_docs_table():
    docs = pathlib.Path(__file__).parents[2] / "docs" / "cross_entropy.md"
    assert er.ops.markdown_table("losses") in docs.read_text()


def test_equivalent_covers_halves_with_smoothing():
    """torch's bfloat16 label smoothing over (256, 200): its products and sums stored in
    bfloat16, covered by the declared model."""
    x, t, _, _ = _case(torch.bfloat16, (256, 200), "mean", seed=9)
    out = F.cross_entropy(x, t, label_smoothing=0.1)
    assert ert.cross_entropy(x, t, label_smoothing=0.1).covers(out).all()
    assert np.isfinite(out.float().item())


def sloppy_cross_entropy(input, target, weight=None, **kw):
    """A kernel outside every model: torch's loss times (1 + 2**-10) (for the audit test)."""
    x = torch.from_numpy(np.array(input, np.float32))
    t = torch.from_numpy(np.array(target))
    w = None if weight is None else torch.from_numpy(np.array(weight, np.float32))
    out = F.cross_entropy(x, t, w, **kw).numpy() * np.float32(1 + 2.0**-10)
    return out.astype(np.float32)


def test_audit_custom_kernel_caught():
    """``exactref audit module:function --op cross_entropy``: a kernel 2**-10 off fails, and
    the report names the worst output's operands and a reproducer."""
    import sys

    from exactref.audit import AuditConfig, run_audit

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    rep = run_audit(AuditConfig(target="test_cross_entropy_torch:sloppy_cross_entropy",
                                op_name="cross_entropy", ops=("cross_entropy",),
                                dtypes=("float32",), kinds=("same",)))
    failed = [g for g in rep.groups if g.status == "fail"]
    assert len(failed) >= 8, [(g.key, g.status, g.message) for g in rep.groups]
    worst = failed[0].worst
    assert worst["inputs"]["input"].startswith("shape (") and "--op cross_entropy" in \
        worst["reproducer"]


def test_measured_nll_sums_in_bf16_cascade():
    """Measured: torch's bfloat16 nll_loss sums the samples in bfloat16 by its cascade (the
    simulation of that order matches torch bit for bit; float32 accumulation and a plain
    bfloat16 loop do not), which the equivalent declares."""
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from cross_entropy_simulate import Impl, cross_entropy

    rng = np.random.default_rng(1)
    common = {"compute": "float32", "stored": "bfloat16", "lsm_steps": True,
              "out": "bfloat16", "order": "pairwise"}
    cascade = Impl(nll_acc="bfloat16", nll_order="cascade", **common)
    f32 = Impl(nll_acc="float32", nll_order="pairwise", **common)
    loop = Impl(nll_acc="bfloat16", nll_order="sequential", **common)
    for N in (1000, 4096):
        tx = torch.tensor(rng.standard_normal((N, 10)) * 2).bfloat16()
        y = rng.integers(0, 10, N)
        x = tx.double().numpy()
        for red in ("mean", "sum"):
            out = F.cross_entropy(tx, torch.tensor(y), reduction=red).item()
            assert out == cross_entropy(x, y, None, red, 0.0, cascade)
            assert out != cross_entropy(x, y, None, red, 0.0, f32)
            assert out != cross_entropy(x, y, None, red, 0.0, loop)
            assert ert.cross_entropy(tx, torch.tensor(y), reduction=red).covers(out).all()


# ------------------------------------------------------------------------------ empty inputs
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("probabilities", [False, True])
def test_empty_batch_as_torch(reduction, probabilities):
    """An empty batch: torch 2.13's empty loss ("none"), its zero sum (the sign of a zero is
    free) and its NaN mean of nothing, for er and its torch equivalent."""
    x = np.zeros((0, 5), np.float32)
    t = np.zeros((0, 5), np.float32) if probabilities else np.zeros(0, np.int64)
    want = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t),
                                             reduction=reduction)
    for fn in (er.cross_entropy, ert.cross_entropy):
        r = fn(x, t, reduction=reduction)
        assert r.rounded.shape == tuple(want.shape)
        assert np.asarray(r.covers(want)).all()
        if reduction == "mean":
            assert np.isnan(r.rounded.numpy()).all()
