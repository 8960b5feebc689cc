"""JAX equivalents: references that cover what JAX's CPU kernels (XLA) compute.

(Filled in by the JAX equivalents work: denormal flushing, select semantics of bool products,
JAX's own floor_divide, ...)
"""

from __future__ import annotations

__all__: list = []
