"""The audit's groups for attention (``scaled_dot_product_attention``), from the record's
``AuditPlan.data``: real shapes (heads of 64, rows of
128 and 512 keys, a causal mask, the math kernel's 3-D operands with a value dimension of
its own) and data flavors:

* ``random``: query, key and value N(0, 1);
* ``huge``: the query times 8: logits of tens, one key dominating most rows (the weights'
  rounding shows, and ``x - max`` matters);
* ``equal``: a zero query: every score equal, the output the mean of the value rows (an exact,
  rational value).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._array import asarray
from ._windows import WindowData, audited

__all__ = ["AttnData", "groups", "ATTENTION_NAMES"]

#: the flavor whose scores are all equal (a zero query)
_EQUAL = "equal"


@dataclass(frozen=True)
class AttnData(WindowData):
    """An operand of an attention group: its shape, role (``query``, ``key``, ``value``) and
    flavor (the module docstring)."""

    def draw(self, fmt, rng) -> np.ndarray:
        v = rng.standard_normal(self.shape)
        if self.role == "query" and self.flavor == "huge":
            v = v * 8.0
        elif self.role == "query" and self.flavor == _EQUAL:
            v = np.zeros(self.shape)
        return asarray(v, fmt, overflow="saturate").numpy()


def groups(spec, f) -> list:
    """The attention groups for the format ``f``, from the record's ``AuditPlan.data``:
    ``cases``, each ``((B, H, L, S, E, Ev), flavor, params)`` (``B`` None: 3-D operands, the
    math kernel's); ``kinds`` (default the record's) and ``min_bits``: the formats audited."""
    data = spec.audit.data or {}
    if not audited(spec, f):
        return []
    out = []
    for (B, H, L, S, E, Ev), flavor, params in data.get("cases", ()):
        lead = (H,) if B is None else (B, H)
        out.append(([(f, AttnData(lead + (L, E), "query", flavor)),
                     (f, AttnData(lead + (S, E), "key", flavor)),
                     (f, AttnData(lead + (S, Ev), "value", flavor))], dict(params)))
    return out


#: the operands' names the audit prints the worst element's inputs with
ATTENTION_NAMES = ("query", "key", "value")
