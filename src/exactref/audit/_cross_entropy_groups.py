"""The audit's groups for a loss over classes (``cross_entropy``), from the record's
``AuditPlan.data``: real shapes (a classifier's batch of 256 over 10
classes and of 4096, a language model's rows over a vocabulary of 4000 with label smoothing,
class probabilities, a segmentation map (N, C, d), rows of one class) and data flavors:

* ``random``: logits N(0, 1) times 3, targets uniform with about 5% ``ignore_index``,
  weights U(0.5, 1.5), probabilities a softmax of N(0, 1);
* ``huge``: logits times 1000: rows dominated by one class, losses of thousands;
* ``equal``: every logit of a row equal (each loss ``log C`` exactly, in every row);
* ``masked``: the last 4 classes ``-inf`` in every row (a padded vocabulary), targets among
  the others or ignored: ``0 * -inf`` where weights or smoothing meet them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._array import asarray
from .._formats import FORMATS
from ._windows import WindowData, audited

__all__ = ["CEData", "groups", "CROSS_ENTROPY_NAMES"]

_IGNORE = -100
#: the flavor whose logits are equal in every row
_EQUAL = "equal"
_MASKED = 4


@dataclass(frozen=True)
class CEData(WindowData):
    """An operand of a cross_entropy group: its shape, role (``input``, ``target`` (class
    indices), ``probs``, ``weight``) and flavor (the module docstring); ``classes`` the
    number of classes (for the targets)."""

    classes: int = 0

    def draw(self, fmt, rng) -> np.ndarray:
        shape = self.shape
        if self.role == "target":
            top = self.classes - (_MASKED if self.flavor == "masked" else 0)
            y = rng.integers(0, max(top, 1), shape)
            y[rng.random(shape) < 0.05] = _IGNORE
            return y.astype(np.int64)
        if self.role == "weight":
            v = rng.uniform(0.5, 1.5, shape)
        elif self.role == "probs":
            z = rng.standard_normal(shape)
            e = np.exp(z - z.max(axis=1, keepdims=True))
            v = e / e.sum(axis=1, keepdims=True)
        else:
            v = rng.standard_normal(shape) * 3.0
            if self.flavor == "huge":
                v = v * 1000.0
            elif self.flavor == _EQUAL:
                v = np.repeat(np.take(v, [0], axis=1), shape[1], axis=1)
            elif self.flavor == "masked":
                v[:, -_MASKED:] = -np.inf
        return asarray(v, fmt, overflow="saturate").numpy()


def groups(spec, f) -> list:
    """The groups of a loss over classes for the format ``f``, from the record's
    ``AuditPlan.data``: ``cases``, each ``(logits shape, flavor, weighted, probabilities,
    params)`` (the targets are class indices of the logits' shape without axis 1, or with
    ``probabilities`` class probabilities of the logits' shape); ``kinds`` (default the
    record's) and ``min_bits``: the formats audited."""
    data = spec.audit.data or {}
    if not audited(spec, f):
        return []
    i64 = FORMATS["int64"]
    out = []
    for (shape, flavor, weighted, probs, params) in data.get("cases", ()):
        C = shape[1]
        tshape = shape[:1] + shape[2:]
        target = (f, CEData(shape, "probs", flavor)) if probs else \
            (i64, CEData(tshape, "target", flavor, C))
        weight = (f, CEData((C,), "weight")) if weighted else (None, None)
        out.append(([(f, CEData(shape, "input", flavor)), target, weight], dict(params)))
    return out


#: the operands' names the audit prints the worst element's inputs with
CROSS_ENTROPY_NAMES = ("input", "target", "weight")
