"""Block-scaled quantization (OCP MX and NVIDIA's NVFP4), exact, with every scale rule.

``er.quantize(x, fmt, axis=-1, block=None, scale_rule=None, rounding="nearest_even")`` returns
a :class:`Quantized`: the element codes and the block scales of each declared scale rule, exact
(the scale from the block's largest magnitude, each element rounded once into the element
format, saturating). ``covers(codes, scales)`` accepts what a quantizer following any declared
rule produces; ``er.dequantize`` gives the values, exactly. The formats, the rules and their
sources are data (:data:`BLOCK_FORMATS`, :data:`SCALE_RULES`); ``docs/block_formats.md`` gives
the edge cases (partial blocks, all-zero blocks, NaN and infinities, the scale's limits).

>>> import exactref as er
>>> x = [0.5, -1.25, 3.75, 2.0**-12]
>>> q = er.quantize(x, "mxfp8_e4m3", block=4)            # reference: the OCP MX spec's "floor"
>>> q.scales.tolist(), q.codes.tolist()                   # 2**(floor(log2 3.75) - 8); 480 -> 448
([0.0078125], [64.0, -160.0, 448.0, 0.03125])
>>> er.dequantize(q).tolist()
[0.5, -1.25, 3.5, 0.000244140625]
>>> q = er.quantize(x, "mxfp8_e4m3", block=4, scale_rule="any")
>>> q.rules
('floor', 'ceil', 'even', 'rceil')
>>> codes, scales = q.by_rule["rceil"]                    # 3.75 / 448 rounded up: 2**-6
>>> scales.tolist(), codes.tolist(), q.covers(codes, scales).all()
([0.015625], [32.0, -80.0, 240.0, 0.015625], True)
>>> er.quantize(x, "mxfp8_e4m3", block=4).covers(codes, scales).all()   # default: floor, rceil
True
>>> er.quantize(x, "mxfp8_e4m3", block=4, scale_rule="floor").covers(codes, scales).all()
False

Block-scaled GEMMs: ``er.quantize.matmul(qa, qb)`` is the exact product of the dequantized
operands rounded once, with the long-sum engine's accumulation models (float32 by default).

NVFP4: an E4M3 scale per 16 elements, in units of a float32 per-tensor scale ``g``:

>>> q = er.quantize([6.0, 1.0, -0.25, 12.0], "nvfp4", block=4)
>>> q.global_scale == float(__import__("numpy").float32(12.0 / 2688))
True
>>> q.scales.tolist(), q.codes.tolist()                   # 12 / (6 g) = 448
([448.0], [3.0, 0.5, -0.0, 6.0])
"""

from __future__ import annotations

import inspect
import sys
import types

from .. import ops
from ._linear import (  # noqa: F401 (the ops are in __all__ from the registry)
    DIVIDE_MODELS,
    LINEAR_FORMATS,
    dequantize_linear,
    quantize_linear,
)
from ._matmul import matmul
from ._quantize import (
    Quantized,
    QuantizedCoverage,
    dequantize,
    element_max,
    expand_blocks,
    mx_exponent,
    quantize,
)
from ._table import BLOCK_FORMATS, SCALE_RULES, BlockFormat, ScaleRule

# the quantizer op from its record; the block GEMM, the tables, and the pieces of the scale
# rules the audit's groups read (element_max, expand_blocks, mx_exponent)
__all__ = [*ops.names_of(__name__), "dequantize", "matmul", "Quantized", "QuantizedCoverage",
           "BLOCK_FORMATS", "SCALE_RULES", "BlockFormat", "ScaleRule", "element_max",
           "expand_blocks", "mx_exponent", "LINEAR_FORMATS", "DIVIDE_MODELS"]


class _CallableModule(types.ModuleType):
    """This package, callable as :func:`quantize`.

    Note: ``er.quantize`` is this package (Python sets ``exactref.quantize`` to the subpackage
    whenever it is imported, which would hide a function of that name), so the package itself
    answers ``er.quantize(x, "mxfp4")``; ``er.quantize.BLOCK_FORMATS`` reads the tables.
    """

    def __call__(self, *args, **kwargs) -> Quantized:
        # through the contract layer (exactref._contract sets _contracted: contract=, refusals)
        return getattr(self, "_contracted", quantize)(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
__signature__ = inspect.signature(quantize)
