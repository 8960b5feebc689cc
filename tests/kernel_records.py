"""The kernel's records of the function ops, by the names the kernel tests use: an op's
``OpSpec.exact`` and ``OpSpec.derivative`` (``"gelu_tanh"`` is gelu's with
``approximate="tanh"``, its own exact function)."""

from __future__ import annotations

import exactref as er

_TANH = {"approximate": "tanh"}


def function(name: str):
    """The function record the op ``name`` evaluates (its ``OpSpec.exact``)."""
    if name == "gelu_tanh":
        return er.ops.get_op("gelu").exact.kernel(_TANH)[0]
    return er.ops.get_op(name).exact


def derivative(name: str):
    """The derivative record of the op ``name`` (its ``OpSpec.derivative``)."""
    if name == "gelu_tanh":
        return er.ops.get_op("gelu").derivative.bind(_TANH)
    return er.ops.get_op(name).derivative
