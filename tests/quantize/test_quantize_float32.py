"""NVFP4 with compute="float32": the exact reference rejects what Transformer Engine's and
torchao's float32 arithmetic produce at exact ties; compute="float32" accepts it, and still
rejects a wrong code or a wrong scale.

The two emulations below follow the libraries' source step by step in numpy float32 (each
operation correctly rounded, as on the GPU):

* torchao ``torchao/prototype/mx_formats/nvfp4_tensor.py``: ``per_tensor_amax_to_scale``
  (``amax / (448 * 6)``) and ``nvfp4_quantize``'s two-level path;
* Transformer Engine ``transformer_engine/common/cast/nvfp4/core_nvfp4.cuh``:
  ``compute_global_encode_scaling_factor_FP4``, ``quantization_SF::
  compute_decoding_scaling_factor`` and ``compute_scaling_coefficient<float>``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import exactref as er

F = np.float32


def _blocks(x):
    return x.reshape(x.shape[0], -1, 16)


def torchao_nvfp4(x):
    A = np.max(np.abs(x))
    g = F(A) / F(448 * 6)
    scaled = (np.max(np.abs(_blocks(x)), axis=-1) / F(6)) / g
    s = np.clip(scaled, F(2.0**-6), F(448)).astype(ml_dtypes.float8_e4m3fn)
    recip = (F(1) / g) / s.astype(F)
    data = np.clip(_blocks(x) * recip[..., None], F(-6), F(6))
    return data.astype(ml_dtypes.float4_e2m1fn).reshape(x.shape), s


def te_nvfp4(x):
    S_enc = F(448 * 6) / F(np.max(np.abs(x)))
    S_dec_b = np.max(np.abs(_blocks(x)), axis=-1) * (S_enc * (F(1) / F(6)))
    s = np.clip(S_dec_b, F(-448), F(448)).astype(ml_dtypes.float8_e4m3fn)  # satfinite
    rcp = np.minimum(F(1) / (s.astype(F) * (F(1) / S_enc)), np.finfo(F).max)
    data = np.clip(_blocks(x) * rcp[..., None], F(-6), F(6))
    return data.astype(ml_dtypes.float4_e2m1fn).reshape(x.shape), s


def _ties(seed=1, rows=48, off=False):
    """Blocks whose elements sit exactly on E2M1 ties: x = t * s with g = 1 (amax 2688); with
    ``off``, one float32 ulp above or below them."""
    rng = np.random.default_rng(seed)
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    scales = codes[np.isfinite(codes) & (codes > 0.1) & (codes <= 448)]
    mids = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
    out = []
    for _ in range(rows):
        row = []
        for _ in range(4):
            s = rng.choice(scales)
            b = rng.choice(mids, 16) * s * rng.choice([-1.0, 1.0], 16)
            if off:
                b = np.where(rng.random(16) < 0.5, np.nextafter(b.astype(F), F(np.inf)),
                             np.nextafter(b.astype(F), F(-np.inf))).astype(np.float64)
            b[0] = 6 * s
            row.append(b)
        out.append(np.concatenate(row))
    x = np.array(out)
    x[0, 0] = 2688.0
    assert (x.astype(F).astype(np.float64) == x).all()  # every value exact in float32
    return x.astype(F)


@pytest.mark.parametrize("off", [False, True], ids=["ties", "ulp-off-ties"])
@pytest.mark.parametrize("kernel", [torchao_nvfp4, te_nvfp4], ids=["torchao", "te"])
def test_float32_arithmetic_is_covered_only_with_compute_float32(kernel, off):
    x = _ties(off=off)
    codes, scales = kernel(x)
    codes, scales = codes.astype(np.float64), scales.astype(np.float64)
    exact = er.quantize(x, "nvfp4")
    assert exact.global_scale == 1.0
    assert exact.covers(codes, scales).uncovered > 10  # ties rounded after a float32 error
    f32 = er.quantize(x, "nvfp4", compute="float32")
    assert f32.covers(codes, scales).all()
    rng = np.random.default_rng(3)
    y = (rng.standard_normal((32, 64)) * 2.0 ** rng.integers(-3, 3, (32, 64))).astype(F)
    c, s = kernel(y)
    assert er.quantize(y, "nvfp4", compute="float32").covers(c.astype(np.float64),
                                                            s.astype(np.float64)).all()


def test_compute_float32_still_rejects_a_wrong_code_or_scale():
    x = _ties()
    codes, scales = torchao_nvfp4(x)
    codes, scales = codes.astype(np.float64), scales.astype(np.float64)
    q = er.quantize(x, "nvfp4", compute="float32")
    wrong = codes.copy()
    wrong[5, 1] = 6.0 if abs(wrong[5, 1]) < 4 else 0.5  # far from any tie's two neighbours
    cov = q.covers(wrong, scales)
    assert cov.uncovered == 1 and cov.worst_index == (5, 1)
    e4m3 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    e4m3 = np.sort(e4m3[np.isfinite(e4m3) & (e4m3 >= 0)])
    up = scales.copy()
    up[7, 2] = e4m3[np.searchsorted(e4m3, scales[7, 2]) + 1]  # the next E4M3 value
    cov = q.covers(codes, up)
    assert cov.uncovered == 16 and not cov.mask[7, 32:48].any()


def test_compute_is_for_nvfp4_only():
    with pytest.raises(ValueError, match="nvfp4 only"):
        er.quantize([1.0], "mxfp4", compute="float32")
    with pytest.raises(ValueError, match="'float32'"):
        er.quantize([1.0], "nvfp4", compute="float16")


def test_an_infinity_saturates_to_six_under_compute_float32():
    x = np.ones((1, 16))
    x[0, 4] = -np.inf
    q = er.quantize(x, "nvfp4", compute="float32")
    codes, scales = q.codes._wide().astype(np.float64), q.scales._wide().astype(np.float64)
    assert scales[0, 0] == 448 and codes[0, 4] == -6
    assert q.covers(codes, scales).all()
    codes[0, 4] = -4.0
    assert q.covers(codes, scales).uncovered == 1


def torchao_rceil_e8m0(amax, max_pos):
    """torchao's ``_to_mx_rceil`` scale off the GPU: ``descale = max_abs * (1.0 / max_pos)`` in
    float32, then ``_f32_to_e8m0_rceil`` (round up to a power of two, by the bits)."""
    descale = (amax.astype(F) * (F(1) / F(max_pos))).astype(F)
    bits = descale.view(np.int32)
    biased, mantissa = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    up = np.where(biased == 0, mantissa > 0x400000, mantissa != 0)
    return np.ldexp(1.0, (biased + up).astype(np.int64) - 127)


@pytest.mark.parametrize("name", ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3",
                                  "mxfp4"])
def test_torchao_float32_rceil_is_the_exact_rule(name):
    """A relative error of 2**-24 can move a ceiling only next to max_pos * 2**k: there, for
    every float32 amax within 6 ulps and 200 binades, torchao's float32 product gives the exact
    rule's scale (so compute="float32" needs no slack for MX)."""
    max_pos = er.dtype(er.quantize.BLOCK_FORMATS[name].element).max_finite
    amax = []
    for k in range(-100, 100):
        c = F(max_pos * 2.0**k)
        up = down = c
        amax.append(c)
        for _ in range(6):
            up, down = np.nextafter(up, F(np.inf)), np.nextafter(down, F(-np.inf))
            amax += [up, down]
    amax = np.array(amax, dtype=F)
    block = np.zeros((amax.size, 32), dtype=F)
    block[:, 0] = amax
    q = er.quantize(block, name, scale_rule="rceil")
    np.testing.assert_array_equal(q.scales._wide()[:, 0], torchao_rceil_e8m0(amax, max_pos))
