"""``quantize`` as a record of the op registry: the audit plans a custom quantizer's groups
from it (``exactref audit module:function --op quantize --format mxfp4``), and ``er.quantize``
resolves to this package through it."""

from __future__ import annotations

import sys

from ..ops import Counterparts, OpSpec, Param, register

_PACKAGE = sys.modules[__package__]

SPEC = register(OpSpec(
    name="quantize", operands=("x",), kernel="block quantize", promotion="cast",
    function=_PACKAGE,
    summary="block-scaled quantization (OCP MX, NVFP4): the shared scale by each declared "
            "rule, every element rounded once into the element format",
    params=(Param("fmt", None, "the block format: mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, "
                               "mxfp6_e2m3, mxfp4, mxint8, nvfp4"),
            Param("axis", -1, "the axis the blocks run along"),
            Param("block", None, "elements per scale (the format's own by default)"),
            Param("scale_rule", None, "one rule, a tuple, or 'any'"),
            Param("rounding", "nearest_even", "the elements' rounding mode")),
    counterparts=Counterparts(None, None, None), kinds=("float",), family="quantize",
    loop="none"))
_PACKAGE.spec = SPEC
