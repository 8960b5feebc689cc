"""The audit's groups for the normalizations: ``layer_norm``, ``rms_norm``, ``group_norm``.

Each group has a real model's shape (rows of 4096 as a transformer's hidden size, a sequence
of 16 tokens of 64 features, a ResNet's 32 channels of 8x8 in 8 groups) and one data flavor:

* ``random``: inputs N(0, 1), weights near 1 (U(0.5, 1.5)), biases N(0, 0.1);
* ``offset``: inputs ``8 + N(0, 1)``: the mean large beside the spread (the scale-shift
  form cancels here);
* ``constant``: every normalized row (or group) holds one value: a variance of exactly 0,
  so the output is the bias;
* ``huge``: magnitudes near twice the square root of the largest finite value, so that the
  sum of squares overflows the format (float32 kernels return 0 where the exact value is
  about 1);
* ``edges``: random data with an infinity, a NaN, signed zeros and subnormals in a few rows;

and rows of one element (a variance of 0 again).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._array import asarray
from ._windows import WindowData

__all__ = ["NormData", "NORM_GROUPS", "NORM_NAMES"]


@dataclass(frozen=True)
class NormData(WindowData):
    """An operand of a normalization group: its shape, role (``x``, ``weight``, ``bias``) and
    flavor (the module docstring); ``rows``: the length of the normalized slices (for the
    constant flavor)."""

    rows: int = 1

    def draw(self, fmt, rng) -> np.ndarray:
        shape = self.shape
        comp = fmt.component
        if self.role == "weight":
            v = rng.uniform(0.5, 1.5, shape)
        elif self.role == "bias":
            v = 0.1 * rng.standard_normal(shape)
        else:
            v = rng.standard_normal(shape)
            if self.flavor == "offset":
                v = v + 8.0
            elif self.flavor == "constant":
                flat = v.reshape(-1, self.rows)
                v = np.repeat(flat[:, :1], self.rows, axis=1).reshape(shape)
            elif self.flavor == "huge":
                v = v * (2 * np.sqrt(comp.max_finite))
            elif self.flavor == "edges":
                flat = v.reshape(-1)
                for k, e in zip(rng.permutation(flat.size)[:5],
                                [np.inf, np.nan, -0.0, 0.0, comp.smallest_subnormal],
                                strict=True):
                    flat[k] = e
        return asarray(v, fmt, overflow="saturate").numpy()


def _audited(f) -> bool:
    """Real float formats of 16 bits and more (PyTorch has no CPU normalization of float8)."""
    return f.kind == "float" and f.bits >= 16


def _layer(f):
    if not _audited(f):
        return []
    out = []
    for shape, flavor in (((8, 4096), "random"), ((2, 16, 64), "offset"),
                          ((4, 256), "constant"), ((4, 256), "huge"), ((6, 64), "edges"),
                          ((6, 1), "random")):
        n = shape[-1]
        out.append(([(f, NormData(shape, "x", flavor, n)), (None, (n,)),
                     (f, NormData((n,), "weight")), (f, NormData((n,), "bias"))], {}))
    return out


def _rms(f):
    if not _audited(f):
        return []
    out = []
    for shape, flavor in (((8, 4096), "random"), ((2, 16, 64), "offset"),
                          ((4, 256), "huge"), ((6, 64), "edges"), ((6, 1), "random")):
        n = shape[-1]
        out.append(([(f, NormData(shape, "x", flavor, n)), (None, (n,)),
                     (f, NormData((n,), "weight"))], {}))
    return out


def _group(f):
    if not _audited(f):
        return []
    out = []
    for shape, groups, flavor in (((2, 32, 8, 8), 8, "random"), ((2, 32, 8, 8), 8, "offset"),
                                  ((2, 32, 8, 8), 8, "constant"), ((2, 32, 4, 4), 4, "huge"),
                                  ((4, 6, 1), 6, "random")):
        C = shape[1]
        size = C // groups * int(np.prod(shape[2:]))
        out.append(([(f, NormData(shape, "x", flavor, size)), (None, groups),
                     (f, NormData((C,), "weight")), (f, NormData((C,), "bias"))], {}))
    return out


#: the normalizations' groups per format: (operand specs, params) lists
NORM_GROUPS = {"layer_norm": _layer, "rms_norm": _rms, "group_norm": _group}


#: the operands' names the audit prints the worst element's inputs with
NORM_NAMES = ("input", "normalized_shape / num_groups", "weight", "bias")
