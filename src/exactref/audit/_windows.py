"""The audit's groups for the windowed long sums: ``linear``, ``conv1d``, ``conv2d``.

Each group has the shapes real models use (a transformer's projection, a ResNet's 3x3 stride-2
convolution of 64 channels, a MobileNet depthwise 3x3, a 1x1 pointwise, a dilated "same"
convolution, a Mamba-style causal depthwise conv1d of width 4) and one data flavor:

* ``random``: inputs N(0, 1), weights N(0, 1/fan_in) (Kaiming-like), bias N(0, 1);
* ``cancel``: the second half of the input channels repeats the first and the second half of
  the weights negates the first but for a bit (``1 + 2**-6``): each output is a small
  remainder of large terms;
* ``edges``: random data with infinities, NaN, signed zeros, the largest finite value and
  subnormals in a few places (an infinite weight meets the padding too);
* ``large``: magnitudes near the square root of the largest finite value over 64, so that
  some partial sums overflow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._array import asarray

__all__ = ["WindowData", "WINDOW_GROUPS", "WINDOW_NAMES"]

FLAVORS = ("random", "cancel", "edges", "large")


@dataclass(frozen=True)
class WindowData:
    """An operand of a windowed group: its shape, role (``x``, ``weight``, ``bias``) and data
    flavor (:data:`FLAVORS`)."""

    shape: tuple
    role: str
    flavor: str = "random"

    def label(self, fmt) -> str:
        tail = "" if self.flavor == "random" else f"~{self.flavor}"
        return f"{fmt.name}[{','.join(map(str, self.shape))}]{tail}"

    def draw(self, fmt, rng) -> np.ndarray:
        shape = self.shape
        v = rng.standard_normal(shape)
        if self.role == "weight":
            v = v / np.sqrt(max(int(np.prod(shape[1:])), 1))
        if self.flavor == "cancel" and self.role != "bias" and len(shape) > 1 and shape[1] > 1:
            h = shape[1] // 2
            if self.role == "weight":
                v[:, h:2 * h] = -v[:, :h] * (1 + 2.0**-6)
            else:
                v[:, h:2 * h] = v[:, :h]
        comp = fmt.component
        if self.flavor == "large":
            v = v * (np.sqrt(comp.max_finite) / 64)
        if self.flavor == "edges":
            flat = v.reshape(-1)
            picks = rng.permutation(flat.size)
            edges = [np.inf, -np.inf, np.nan, -0.0, comp.max_finite, comp.smallest_subnormal,
                     0.0] if self.role != "bias" else [-0.0, comp.smallest_subnormal]
            if self.role == "weight":
                edges = [np.inf, -0.0, comp.smallest_subnormal]
                flat[0] = np.inf  # at a corner of the first filter: it meets the padding
            for k, e in zip(picks, edges, strict=False):
                flat[k] = e
        return asarray(v, fmt, overflow="saturate" if not comp.has_inf else None).numpy()


def _group(f, x, w, b, params, flavor="random"):
    specs = [(f, WindowData(x, "x", flavor)), (f, WindowData(w, "weight", flavor)),
             (f, WindowData(b, "bias", flavor)) if b is not None else (None, None)]
    return specs, params


def _audited(f) -> bool:
    """Real float formats of 16 bits and more (PyTorch has no CPU convolution of float8)."""
    return f.kind == "float" and f.bits >= 16


def _linear(f):
    if not _audited(f):
        return []
    return [_group(f, (2, 16, 64), (96, 64), (96,), {}, fl) for fl in
            ("random", "cancel", "edges", "large")] + [_group(f, (8, 48), (8, 48), None, {})]


def _conv2d(f):
    if not _audited(f):
        return []
    s2 = dict(stride=2, padding=1)
    dw = dict(padding=1, groups=32)
    dil = dict(padding="same", dilation=2)
    return ([_group(f, (2, 64, 14, 14), (64, 64, 3, 3), (64,), s2, fl)
             for fl in ("random", "cancel", "large")]
            + [_group(f, (2, 32, 14, 14), (32, 1, 3, 3), (32,), dw, fl)
               for fl in ("random", "edges")]
            + [_group(f, (2, 64, 8, 8), (128, 64, 1, 1), None, {}),
               _group(f, (2, 16, 12, 12), (16, 16, 3, 3), (16,), dil, "edges")])


def _conv1d(f):
    if not _audited(f):
        return []
    causal = dict(padding=3, groups=32)
    same = dict(padding="same")
    return ([_group(f, (2, 32, 64), (32, 1, 4), (32,), causal, fl) for fl in
             ("random", "edges")]
            + [_group(f, (2, 32, 64), (32, 32, 5), (32,), same, fl) for fl in
               ("random", "cancel")])


#: the windowed long sums' groups per format: (operand specs, params) lists
WINDOW_GROUPS = {"linear": _linear, "conv1d": _conv1d, "conv2d": _conv2d}


#: the operands' names the audit prints the worst element's inputs with
WINDOW_NAMES = ("input", "weight", "bias")
