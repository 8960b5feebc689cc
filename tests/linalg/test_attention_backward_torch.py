"""scaled_dot_product_attention.backward against torch 2.13's CPU autograd (flash and math
kernels, every float dtype, masks, causal, GQA, key blocks past 512 and query blocks past 32),
through exactref.equivalents.torch: torch's gradients are covered; a row no key takes part in
has torch's zero grad_query."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

F = torch.nn.functional
DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)
NAMES = ("grad_query", "grad_key", "grad_value")


def _run(rng, dt, shape, kv=None, spread=1.0, **kw):
    B, H, L, S, E, Ev = shape
    Hk = kv or H
    q = torch.tensor(rng.standard_normal((B, H, L, E)) * spread, dtype=dt, requires_grad=True)
    k = torch.tensor(rng.standard_normal((B, Hk, S, E)), dtype=dt, requires_grad=True)
    v = torch.tensor(rng.standard_normal((B, Hk, S, Ev)), dtype=dt, requires_grad=True)
    g = torch.tensor(rng.standard_normal((B, H, L, Ev)), dtype=dt)
    F.scaled_dot_product_attention(q, k, v, enable_gqa=kv is not None, **kw).backward(g)
    ref = ert.scaled_dot_product_attention.backward(q.detach(), k.detach(), v.detach(), g,
                                                    enable_gqa=kv is not None, **kw)
    return ref, (q.grad, k.grad, v.grad)


CASES = {
    "flash": dict(shape=(1, 2, 5, 7, 4, 4)),
    "math": dict(shape=(1, 2, 5, 7, 4, 3)),        # Ev != E: the math kernel
    "causal": dict(shape=(1, 2, 6, 6, 4, 4), is_causal=True),
    "gqa": dict(shape=(1, 4, 3, 5, 4, 4), kv=2),
    "scale": dict(shape=(1, 1, 4, 6, 4, 4), scale=0.3, spread=4.0),
    "mask": dict(shape=(1, 2, 5, 7, 4, 4), attn_mask="bool"),
    "float_mask": dict(shape=(1, 2, 5, 7, 4, 4), attn_mask="float"),
}


@pytest.mark.parametrize("dt", DTYPES, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_torch_is_covered(case, dt):
    rng = np.random.default_rng(len(case) * 7 + DTYPES.index(dt))
    kw = dict(CASES[case])
    if kw.get("attn_mask") == "bool":
        m = torch.tensor(rng.standard_normal((5, 7)) > 0)
        m[:, 0] = True
        kw["attn_mask"] = m
    elif kw.get("attn_mask") == "float":
        kw["attn_mask"] = torch.tensor(rng.standard_normal((5, 7)), dtype=dt)
    ref, got = _run(rng, dt, **kw)
    for name, t in zip(NAMES, got, strict=True):
        cov = getattr(ref, name).covers(t)
        assert cov.all(), (name, cov.worst_index, cov.worst_ulps)


def test_long_blocks_are_covered():
    """40 queries (two of the flash kernel's 32-row blocks: partial sums stored in bfloat16) and
    520 keys (two 512-key blocks)."""
    ref, got = _run(np.random.default_rng(2), torch.bfloat16, (1, 1, 40, 520, 4, 4))
    for name, t in zip(NAMES, got, strict=True):
        assert getattr(ref, name).covers(t).all(), name


def test_empty_row_is_zero():
    m = torch.ones(5, 7, dtype=torch.bool)
    m[2] = False
    ref, got = _run(np.random.default_rng(3), torch.float32, (1, 2, 5, 7, 4, 4), attn_mask=m)
    assert (got[0][:, :, 2] == 0).all()
    assert (ref.grad_query.rounded.numpy()[:, :, 2] == 0).all()
    for name, t in zip(NAMES, got, strict=True):
        assert getattr(ref, name).covers(t).all(), name
        # .rounded keeps every gradient, the pinned grad_query included
        assert getattr(ref.rounded, name).tolist() == getattr(ref, name).rounded.tolist(), name
