"""The audit's groups for the windowed long sums (``linear``, ``conv1d``, ``conv2d``), from each
record's ``AuditPlan.data``.

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

__all__ = ["WindowData", "groups", "audited", "WINDOW_NAMES", "FLAVORS"]

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


def audited(spec, f) -> bool:
    """Whether a shape-planned op's groups run in the format ``f``: one of the kinds its
    ``AuditPlan.data`` names (default: the record's ``kinds``) with at least its ``min_bits``
    (16 for PyTorch's CPU kernels, which have no float8)."""
    data = spec.audit.data or {}
    return f.kind in data.get("kinds", spec.kinds) and f.bits >= data.get("min_bits", 0)


def groups(spec, f) -> list:
    """The groups of the windowed long sum ``spec`` for the format ``f``, from its record's
    ``AuditPlan.data``: ``cases``, each ``(input shape, weight shape, bias shape or None,
    params, flavors)``: one group per flavor of :data:`FLAVORS`; ``kinds`` (default the
    record's) and ``min_bits``: the formats audited."""
    data = spec.audit.data or {}
    if not audited(spec, f):
        return []
    out = []
    for x, w, b, params, flavors in data.get("cases", ()):
        for flavor in flavors:
            out.append(([(f, WindowData(x, "x", flavor)), (f, WindowData(w, "weight", flavor)),
                         (f, WindowData(b, "bias", flavor)) if b is not None else (None, None)],
                        dict(params)))
    return out


#: the operands' names the audit prints the worst element's inputs with
WINDOW_NAMES = ("input", "weight", "bias")
