"""The audit's groups for ``scaled_dot_product_attention``: real shapes (heads of 64, rows of
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
from ._windows import WindowData

__all__ = ["AttnData", "ATTENTION_GROUPS", "ATTENTION_NAMES"]


@dataclass(frozen=True)
class AttnData(WindowData):
    """An operand of an attention group: its shape, role (``query``, ``key``, ``value``) and
    flavor (the module docstring)."""

    def draw(self, fmt, rng) -> np.ndarray:
        v = rng.standard_normal(self.shape)
        if self.role == "query" and self.flavor == "huge":
            v = v * 8.0
        elif self.role == "query" and self.flavor == "equal":
            v = np.zeros(self.shape)
        return asarray(v, fmt, overflow="saturate").numpy()


def _groups(f):
    """Real float formats of 16 bits and more (PyTorch has no CPU attention for float8)."""
    if f.kind != "float" or f.bits < 16:
        return []
    out = []
    for (B, H, L, S, E, Ev), flavor, params in (
            ((2, 4, 64, 64, 64, 64), "random", {}),
            ((1, 4, 128, 128, 64, 64), "random", {"is_causal": True}),
            ((1, 2, 32, 32, 64, 64), "huge", {}),
            ((1, 2, 16, 16, 64, 64), "equal", {}),
            ((None, 4, 32, 40, 16, 8), "random", {})):  # 3-D: the math kernel
        lead = (H,) if B is None else (B, H)
        out.append(([(f, AttnData(lead + (L, E), "query", flavor)),
                     (f, AttnData(lead + (S, E), "key", flavor)),
                     (f, AttnData(lead + (S, Ev), "value", flavor))], params))
    return out


#: the attention groups per format: (operand specs, params) lists
ATTENTION_GROUPS = {"scaled_dot_product_attention": _groups}


#: the operands' names the audit prints the worst element's inputs with
ATTENTION_NAMES = ("query", "key", "value")
