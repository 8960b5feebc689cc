"""exactref.equivalents.torch_linalg's linear, conv1d and conv2d against PyTorch 2.13 on CPU:
every output covered on random and adversarial data (cancellation, large magnitudes, signed
zeros, infinities and NaN) at the shapes real models use; the measured behaviour pinned (float32
accumulation of the half formats with the bias inside the one rounding; oneDNN skips padded
positions where Slow2d multiplies their zeros); a kernel outside the model caught."""

from __future__ import annotations

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
F = torch.nn.functional
etl = pytest.importorskip("exactref.equivalents.torch_linalg")

pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
CASES = [
    ("linear", {}, (4, 16, 64), (96, 64)),
    ("conv2d", dict(stride=2, padding=1), (2, 64, 14, 14), (64, 64, 3, 3)),
    ("conv2d", dict(padding=1, groups=32), (2, 32, 14, 14), (32, 1, 3, 3)),
    ("conv2d", dict(padding="same", dilation=2), (2, 16, 12, 12), (16, 16, 3, 3)),
    ("conv1d", dict(padding=3, groups=32), (2, 32, 64), (32, 1, 4)),
    ("conv1d", dict(padding="same"), (2, 32, 64), (32, 32, 5)),
]


def _data(xs, ws, flavor, dt, gen):
    fan = int(np.prod(ws[1:]))
    x = torch.randn(xs, dtype=torch.float64, generator=gen)
    w = torch.randn(ws, dtype=torch.float64, generator=gen) / fan**0.5
    b = torch.randn(ws[0], dtype=torch.float64, generator=gen)
    if flavor == "cancel":  # the second half of the channels undoes the first, but for a bit
        c = xs[1] // 2 if len(xs) > 2 else xs[-1] // 2
        ax = 1 if len(xs) > 2 else -1
        x.narrow(ax, c, c).copy_(x.narrow(ax, 0, c))
        if ws[1] > 1:
            h = ws[1] // 2
            w.narrow(1, h, h).copy_(-w.narrow(1, 0, h) * (1 + 2.0**-6))
    elif flavor == "large":  # sums near the top of the format's range
        scale = torch.finfo(dt).max ** 0.5 / 64
        x, w = x * scale, w * scale
    elif flavor == "specials":
        flat = x.view(-1)
        idx = torch.randperm(flat.numel(), generator=gen)[:4]
        flat[idx[0]], flat[idx[1]], flat[idx[2]] = float("inf"), -0.0, float("nan")
        w.view(-1)[torch.randperm(w.numel(), generator=gen)[:2]] = float("inf")
    return x.to(dt), w.to(dt), b.to(dt)


@pytest.mark.parametrize("flavor", ["random", "cancel", "large", "specials"])
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}".replace(" ", ""))
def test_torch_covered(case, dt, flavor):
    op, kw, xs, ws = case
    gen = torch.Generator().manual_seed(CASES.index(case) * 7 + DTYPES.index(dt))
    x, w, b = _data(xs, ws, flavor, dt, gen)
    out = getattr(F, op)(x, w, b, **kw)
    ref = getattr(etl, op)(x, w, b, **kw)
    cov = ref.covers(out)
    assert cov.all(), cov.summary()
    assert ref.rounded.dtype.name == str(dt)[6:]


@pytest.mark.parametrize("dt", [torch.bfloat16, torch.float16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op", ["linear", "conv1d", "conv2d"])
def test_half_accumulate_in_float32_bias_inside(op, dt):
    """A float32 accumulator keeps 64 quarter-ulps (bfloat16: 1.125; float16: 1.015625), and
    the bias enters before the one rounding: the products sum to 1 + 3 quarter-ulps, the bias
    takes 1.5 away, and the exact 1 + 1.5 quarter-ulps rounds to 1. Rounding the products to
    the dtype first (1 + an ulp) and then adding the bias would give 1 + an ulp."""
    p = {torch.bfloat16: 8, torch.float16: 11}[dt]  # significand bits
    q = 2.0 ** -(p + 1)
    x = torch.tensor([[1.0] + [q] * 64], dtype=dt)
    w = torch.ones(1, 65, dtype=dt)
    shape = {"linear": ((1, 65), (1, 65)), "conv1d": ((1, 1, 65), (1, 1, 65)),
             "conv2d": ((1, 1, 1, 65), (1, 1, 1, 65))}[op]
    fn = getattr(F, op)
    got = fn(x.reshape(shape[0]), w.reshape(shape[1])).item()
    assert got == 1 + 64 * q
    xb = torch.tensor([[1.0, q, q, q]], dtype=dt)
    wb = torch.ones(1, 4, dtype=dt)
    bias = torch.tensor([-1.5 * q], dtype=dt)
    sh = {"linear": ((1, 4), (1, 4)), "conv1d": ((1, 1, 4), (1, 1, 4)),
          "conv2d": ((1, 1, 1, 4), (1, 1, 1, 4))}[op]
    out = fn(xb.reshape(sh[0]), wb.reshape(sh[1]), bias)
    assert out.item() == 1.0
    ref = getattr(etl, op)(xb.reshape(sh[0]), wb.reshape(sh[1]), bias)
    assert ref.covers(out).all()
    twice = torch.full_like(out, 1 + 4 * q)  # the sum rounded to the dtype, then the bias
    assert not ref.covers(twice).all()


def _backend(x, w, padding):
    return str(torch._C._select_conv_backend(x, w, None, [1, 1], [padding] * 2, [1, 1], False,
                                             [0, 0], 1, None)).rsplit(".", 1)[-1]


@pytest.mark.parametrize("dt, batch, backend", [
    (torch.float64, 2, "Slow2d"), (torch.float32, 1, "Slow2d"), (torch.float32, 2, "Mkldnn"),
    (torch.bfloat16, 1, "Mkldnn")], ids=["float64", "float32-one-image", "float32-batch",
                                         "bfloat16"])
def test_padding_meets_infinite_weight(dt, batch, backend):
    """Slow2d (float64; float32 where PyTorch's heuristic does not pick oneDNN: one image, one
    group, a 3x3 kernel) multiplies the padding's zeros by the infinite weight: NaN. oneDNN
    (float32 batches, bfloat16) skips padded positions: the top row's window has 6 in-bounds
    terms of 8 channels, 48; but its bfloat16 kernels on AMX (and AVX2) give NaN too. The
    float32 and half references allow both; float64's only NaN."""
    x = torch.ones(batch, 8, 5, 5, dtype=dt)
    w = torch.ones(8, 8, 3, 3, dtype=dt)
    w[:, :, 0, 0] = float("inf")
    if _backend(x, w, 1) != backend:
        pytest.skip(f"PyTorch picked {_backend(x, w, 1)} here (measured: {backend})")
    out = F.conv2d(x, w, padding=1)
    ref = etl.conv2d(x, w, padding=1)
    assert ref.covers(out).all()
    assert torch.isinf(out[0, 0, 1, 1])
    top = out[0, 0, 0, 1].item()
    if backend == "Slow2d":
        assert np.isnan(top)
    elif not np.isnan(top):  # oneDNN's AVX-512 kernels skip the padding (measured: an AMD
        assert top == 48.0 and out[0, 0, 0, 0].item() == 32.0  # EPYC; ONEDNN_MAX_CPU_ISA=
    else:  # AVX512_CORE_BF16 on a Xeon); its AMX (and AVX2) bfloat16 kernels multiply it too
        assert dt == torch.bfloat16 and np.isnan(out[0, 0, 0, 0].item())
    skipped = out.clone()
    skipped[:, :, 0, 1:4] = 48.0
    nan = out.clone()
    nan[:, :, 0, 1:4] = float("nan")
    assert ref.covers(nan).all()
    assert ref.covers(skipped).all() == (dt != torch.float64)
    wrong = skipped.clone()
    wrong[0, 0, 0, 1] = 47.0
    assert not ref.covers(wrong).all()


def test_errors():
    x = torch.ones(1, 2, 5, 5)
    with pytest.raises(TypeError, match="one dtype"):
        etl.conv2d(x, torch.ones(2, 2, 3, 3, dtype=torch.float64))
    with pytest.raises(NotImplementedError, match="real float dtypes"):
        etl.linear(torch.ones(2, 3, dtype=torch.int64), torch.ones(4, 3, dtype=torch.int64))
    with pytest.raises(TypeError, match="must be Tensor"):
        etl.linear(torch.ones(2, 3), torch.ones(4, 3), 1.0)
    with pytest.raises(ValueError, match="groups"):
        etl.conv2d(torch.ones(1, 3, 5, 5), torch.ones(2, 1, 3, 3), groups=2)


def test_bfloat16_accumulation_kernel_caught():
    """A kernel that accumulates bfloat16 convolutions in bfloat16 (a Triton port that forgot
    its float32 accumulator, say) is outside PyTorch's model: 1 + 64 quarter-ulps stays 1."""
    x = torch.full((1, 64, 3, 3), 2.0**-9, dtype=torch.bfloat16)
    x[0, 0] = 1.0
    w = torch.zeros(1, 64, 3, 3, dtype=torch.bfloat16)
    w[0, :, 1, 1] = 1
    good = F.conv2d(x, w, padding=1)
    bad = torch.zeros_like(good)
    acc = torch.zeros(good.shape[2:], dtype=torch.bfloat16)
    for c in range(64):  # per channel, rounded to bfloat16 at each step
        acc = acc + F.conv2d(x[:, c:c + 1], w[:, c:c + 1], padding=1)[0, 0]
    bad[0, 0] = acc
    ref = etl.conv2d(x, w, padding=1)
    assert ref.covers(good).all()
    cov = ref.covers(bad)
    assert not cov.all()
    # exactly 1 + 63 * 2**-9, rounded once: 1.125; bfloat16 accumulation: 1
    assert float(ref.rounded.numpy()[0, 0, 1, 1]) == 1.125 == good[0, 0, 1, 1].item()
    assert bad[0, 0, 1, 1].item() == 1.0
    assert er.dtype("bfloat16") is ref.rounded.dtype


def test_bfloat16_subnormal_inputs_flushed():
    """oneDNN's bfloat16 kernels (VDPBF16PS) treat subnormal inputs as zero: a conv2d of
    2**-133 (subnormal in bfloat16) by 2**10 gives 0 where the exact sum, 144 * 2**-123, is a
    normal number; an infinite weight times 2**-133 gives NaN. The bfloat16 reference allows
    the flushed inputs; exactref's strict conv2d does not, and float32 keeps subnormals."""
    x = torch.full((2, 16, 6, 6), 2.0**-133, dtype=torch.bfloat16)
    w = torch.full((16, 16, 3, 3), 2.0**10, dtype=torch.bfloat16)
    if _backend(x, w, 1) != "Mkldnn":
        pytest.skip("oneDNN does not run bfloat16 convolutions here")
    out = F.conv2d(x, w, padding=1)
    exact = er.conv2d(x, w, padding=1)
    assert float(exact.rounded.numpy()[0, 0, 2, 2]) == 144 * 2.0**-123
    if out[0, 0, 2, 2].item() != 0.0:
        pytest.skip("this CPU's bfloat16 kernel keeps subnormal inputs")
    assert not exact.covers(out).all()
    assert etl.conv2d(x, w, padding=1).covers(out).all()
    w2 = torch.ones(16, 16, 3, 3, dtype=torch.bfloat16)
    w2[0, 0, 1, 1] = float("inf")
    out2 = F.conv2d(x, w2, padding=1)
    assert torch.isnan(out2[0, 0, 2, 2])
    assert etl.conv2d(x, w2, padding=1).covers(out2).all()
    assert not er.conv2d(x, w2, padding=1).covers(out2).all()  # exact: inf
    x32, w32 = x.float(), w.float()
    assert F.conv2d(x32, w32, padding=1)[0, 0, 2, 2].item() == 144 * 2.0**-123
    xl = torch.full((64, 64), 2.0**-133, dtype=torch.bfloat16)
    wl = torch.full((64, 64), 2.0**10, dtype=torch.bfloat16)
    ol = F.linear(xl, wl)
    assert etl.linear(xl, wl).covers(ol).all()
