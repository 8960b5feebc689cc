"""The op registry: every op of exactref as one record (:class:`OpSpec`).

>>> import exactref as er
>>> spec = er.ops.get_op("subtract")
>>> spec.operands, spec.kernel, spec.counterparts.torch
(('x', 'y'), 'sum of products', 'torch.sub')
>>> er.ops.get_op("subtract").function is er.subtract
True

Names load on first use (``import exactref`` reads only the catalog).
"""

from __future__ import annotations

import importlib

from ._catalog import CATALOG, op_names

__all__ = ["CATALOG", "FAMILIES", "KERNELS", "KINDS", "LIBRARIES", "PLANS", "AuditPlan",
           "Counterpart", "Counterparts", "OpSpec", "Param", "Region", "all_ops", "declaring", "get_op",
           "install_function_wrapper", "markdown_table", "names_of", "op_names", "register",
           "registered", "select", "unregister"]


def __getattr__(name: str):
    if name in __all__:
        value = getattr(importlib.import_module("._registry", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'exactref.ops' has no attribute {name!r}")
