"""The audit's generic ``"rows"`` groups: the row kernels (the normalizations, a row's L2 norm),
drawn from each record's ``AuditPlan.data``.

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
from ._windows import WindowData, audited

__all__ = ["NormData", "groups", "NORM_NAMES"]


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


def groups(spec, f) -> list:
    """The groups of the row kernel ``spec`` for the format ``f``, from its record's
    ``AuditPlan.data`` alone (the generic ``"rows"`` builder: a new row op needs no edit here):

    * ``cases``: ``(shape, flavor)`` or ``(shape, flavor, num_groups)`` per group (the
      flavors of the module docstring); with ``num_groups`` the normalized slices are groups
      of channels (axis 1) and the per-channel operands have ``shape[1]`` elements, else the
      slices are the rows of the last axis;
    * ``operands``: the role of each operand the kernel is called with, in order: ``"x"`` (the
      rows), ``"shape"`` (the normalized shape ``(n,)``), ``"groups"`` (``num_groups``),
      ``"weight"``, ``"bias"`` (default ``("x",)``);
    * ``params``: the keywords every group passes (a row op's ``dim``, say), and ``vary``: the
      parameters whose audit values (``Param.audit``) each add a group of the first case;
    * ``kinds`` (default the record's) and ``min_bits``: the formats audited.
    """
    data = spec.audit.data or {}
    if not audited(spec, f):
        return []
    roles = data.get("operands", ("x",))
    params = dict(data.get("params", {}))
    out = []
    for case in data.get("cases", ()):
        shape, flavor = case[0], case[1]
        num_groups = case[2] if len(case) > 2 else None
        if num_groups is None:
            per, rows = shape[-1], shape[-1]
        else:
            per = shape[1]
            rows = per // num_groups * int(np.prod(shape[2:]))
        made = {"x": (f, NormData(shape, "x", flavor, rows)), "shape": (None, (shape[-1],)),
                "groups": (None, num_groups), "weight": (f, NormData((per,), "weight")),
                "bias": (f, NormData((per,), "bias"))}
        out.append(([made[r] for r in roles], dict(params)))
    first = out[0][0] if out else None
    for name in data.get("vary", ()) if first else ():
        values = spec.param(name).audit
        out += [(list(first), {**params, name: v}) for v in
                (values if isinstance(values, tuple) else ())]
    return out


#: the operands' names the audit prints the worst element's inputs with
NORM_NAMES = ("input", "normalized_shape / num_groups", "weight", "bias")
