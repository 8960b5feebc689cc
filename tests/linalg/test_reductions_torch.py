"""exactref.equivalents.torch's mean, var, std and cumsum cover torch 2.13's CPU kernels on
random and adversarial data, every float dtype, and the measured accumulators are pinned."""

from __future__ import annotations

import math

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
import exactref.equivalents.torch as ert  # noqa: E402

DTYPES = ["float32", "float64", "bfloat16", "float16"]


def _data(kind, dtype, shape, g):
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    if kind == "offset":
        x = 100 + x * 0.01
    elif kind == "wide":
        x = x * 2.0 ** torch.randint(-6, 6, shape, generator=g).double()
    elif kind == "equal":
        x = x[..., :1].expand(shape).clone()
        x[0] = 0.1
    elif kind == "special":
        x[0, 0, 0] = math.inf
        x[1, 1, 1] = math.nan
        x[2, 0, :2] = torch.tensor([math.inf, -math.inf])
    return x.to(getattr(torch, dtype))


@pytest.mark.parametrize("kind", ["random", "offset", "wide", "equal", "special"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_reductions_covered(dtype, kind):
    g = torch.Generator().manual_seed(abs(hash((dtype, kind))) % 2**31)
    x = _data(kind, dtype, (6, 5, 300), g)
    for dim, keep in ((2, False), (-1, True), ((0, 2), False), (None, False), (1, True)):
        for name, call in (("mean", lambda f, d, k: f(x, d, k)),
                           ("var", lambda f, d, k: f(x, d, keepdim=k)),
                           ("std", lambda f, d, k: f(x, d, keepdim=k)),
                           ("var0", lambda f, d, k: f(x, d, correction=0, keepdim=k))):
            fn = name.rstrip("0")
            out = call(getattr(torch, fn), dim, keep) if dim is not None or fn == "mean" \
                else getattr(torch, fn)(x) if name != "var0" else torch.var(x, correction=0)
            ref = call(getattr(ert, fn), dim, keep) if dim is not None or fn == "mean" \
                else getattr(ert, fn)(x) if name != "var0" else ert.var(x, correction=0)
            cov = ref.covers(out)
            assert cov.all(), (name, dim, cov.summary())
    for d in (0, 2, -2):
        cov = ert.cumsum(x, d).covers(torch.cumsum(x, d))
        assert cov.all(), (d, cov.summary())


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")
def test_rows_of_one_element_and_correction_past_n():
    x = torch.tensor([[1.0], [2.0]])
    for c in (0, 1, 2):
        assert ert.var(x, 1, correction=c).covers(torch.var(x, 1, correction=c)).all()
    y = torch.tensor([[1.0, 2.0], [3.0, 3.0]])
    for c in (2, 3, -1, 0.5):
        out = torch.var(y, 1, correction=c)
        assert ert.var(y, 1, correction=c).covers(out).all(), c
        assert ert.std(y, 1, correction=c).covers(torch.std(y, 1, correction=c)).all(), c


def test_large_rows():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 4096, generator=g).to(torch.bfloat16)
    assert ert.mean(x, 1).covers(torch.mean(x, 1)).all()
    assert ert.var(x, 1).covers(torch.var(x, 1)).all()
    assert ert.std(x).covers(torch.std(x)).all()
    assert ert.cumsum(x, 1).covers(torch.cumsum(x, 1)).all()


def test_measured_accumulators_pinned():
    # float32 cumsum accumulates in double: a float32 running sum would stay at 1
    x = torch.tensor([1.0] + [2.0**-24] * 8)
    assert torch.cumsum(x, 0)[-1].item() == 1 + 8 * 2.0**-24
    assert not er.cumsum(x.numpy(), 0, order="sequential", compute="float64").covers(
        np.full(9, 1.0, np.float32)).all()
    assert ert.cumsum(x, 0).tolerance_ulps().max() <= 1  # ties of float32: either side
    # float16 cumsum accumulates in float32 and rounds each prefix
    h = torch.tensor([1.0] + [2.0**-11] * 4, dtype=torch.float16)
    assert torch.cumsum(h, 0).tolist() == [1.0, 1.0, 1.0009765625, 1.001953125, 1.001953125]
    # float32 var: float64 accumulation, rounded once: the exact value on these data
    g = torch.Generator().manual_seed(2)
    v = 100 + torch.randn(16, 512, generator=g) * 0.01
    assert (torch.var(v, 1).numpy() == er.var(v.numpy(), dim=1).rounded.numpy()).all()
    assert ert.var(v, 1).tolerance_ulps().max() <= 1  # Welford in double: sharp
    # one output: a two-pass variance around a float32 mean, far from the exact value
    rng = np.random.default_rng(0)
    ulp = np.spacing(np.float32(1e4))
    x = np.float32(1e4) + rng.integers(0, 2, size=100001).astype(np.float32) * ulp
    x[::7] = np.float32(1e4) + 3 * ulp
    t = torch.from_numpy(x)
    out = torch.var(t)
    exact = er.var(x)
    assert out.item() > 1.5 * exact.rounded.tolist()  # measured: 1.75 times the exact value
    with pytest.warns(er.WeakCheckWarning):  # float32's model allows a float32 mean, loosely
        assert exact.covers(out).all()
    assert not er.var(x, compute="float64").covers(out).all()  # a float64 mean would be right
    assert ert.var(t).covers(out).all()
    assert ert.var(torch.stack([t, t]), 1).rounded.tolist()[0] == exact.rounded.tolist()


def test_integer_inputs():
    x = torch.tensor([[1, 2, 3]], dtype=torch.int32)
    with pytest.raises(TypeError, match="could not infer output dtype"):
        ert.mean(x)
    assert ert.mean(x, dtype=torch.float32).covers(torch.mean(x, dtype=torch.float32)).all()
    with pytest.raises(TypeError, match="only support floating point"):
        ert.var(x)
    out = torch.cumsum(x, 1)
    r = ert.cumsum(x, 1)
    assert r.rounded.dtype.name == "int64" and r.covers(out).all()


def test_the_torch_audit_covers_the_reductions():
    """``exactref audit torch --ops mean,var,std,cumsum``: every real float group passes (the
    float8 formats have no CPU kernel: unsupported)."""
    from exactref.audit import AuditConfig, run_audit

    r = run_audit(AuditConfig(target="torch", ops=("mean", "var", "std", "cumsum"),
                              dtypes=("float32", "float64", "bfloat16", "float16"),
                              samples=32))
    assert r.failed == 0 and r.passed == 24, [(g.key, g.status) for g in r.groups]
