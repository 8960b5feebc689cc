"""``exactref audit torch --ops linear,conv1d,conv2d``: the groups have real model shapes
(a 3x3 stride-2 convolution of 64 channels, a depthwise 3x3, a 1x1, a dilated "same", a causal
depthwise conv1d of width 4, a transformer projection) with random and adversarial data, and
PyTorch passes; a custom conv2d that accumulates bfloat16 in bfloat16 fails with its worst
element reported."""

from __future__ import annotations

import sys
import types

import ml_dtypes
import numpy as np
import pytest

from exactref.audit import AuditConfig, run_audit

pytest.importorskip("torch")


def test_torch_passes_bfloat16():
    report = run_audit(AuditConfig(target="torch", ops=("linear", "conv1d", "conv2d"),
                                   dtypes=("bfloat16",), kinds=("same",)))
    keys = [g.key for g in report.groups]
    assert any("stride=2" in k and "[64,64,3,3]" in k for k in keys)
    assert any("groups=32" in k and "[32,1,3,3]" in k for k in keys)
    assert any("~cancel" in k for k in keys) and any("~edges" in k for k in keys)
    assert report.failed == 0, [(g.key, g.message, g.worst) for g in report.groups
                                if g.status == "fail"]
    assert len(report.groups) == 16


def _bf16_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """A direct conv2d that keeps its accumulator in bfloat16 (no groups, no dilation)."""
    x = np.asarray(x).astype(np.float32)
    w = np.asarray(w).astype(np.float32)
    p = padding if isinstance(padding, int) else 1
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    n, c, h, wd = xp.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    acc = np.zeros((n, o, oh, ow), ml_dtypes.bfloat16)
    for ci in range(c):
        for a in range(kh):
            for e in range(kw):
                win = xp[:, ci, a:a + stride * oh:stride, e:e + stride * ow:stride]
                term = win[:, None] * w[None, :, ci, a, e, None, None]
                acc = (acc.astype(np.float32) + term).astype(ml_dtypes.bfloat16)
    if b is not None:
        acc = (acc.astype(np.float32) + np.asarray(b).astype(np.float32)[None, :, None, None]
               ).astype(ml_dtypes.bfloat16)
    return acc


def test_custom_kernel_with_bfloat16_accumulator_fails(monkeypatch):
    mod = types.ModuleType("bf16_conv_kernel")
    mod.conv2d = _bf16_conv2d
    monkeypatch.setitem(sys.modules, "bf16_conv_kernel", mod)
    report = run_audit(AuditConfig(target="bf16_conv_kernel:conv2d", op_name="conv2d",
                                   ops=("conv2d",), dtypes=("bfloat16",), kinds=("same",)))
    first = report.groups[0]
    assert "stride=2" in first.key and first.status == "fail"
    assert first.uncovered > first.cases // 2
    assert first.worst["reproducer"] == ("exactref audit bf16_conv_kernel:conv2d --op conv2d "
                                         "--dtypes bfloat16 --seed 0 --kinds same")
