"""The block-scaled GEMM reference: ``dequantize(a) @ dequantize(b)``, exact, rounded once.

Block-scaled GEMMs (cuBLAS's MXFP8/NVFP4 matmuls, torch._scaled_mm with block scales) multiply
codes, apply the block scales and accumulate. Their exact value is the product of the
dequantized operands, and every dequantized value is exact in float64 (a code of at most 8
significant bits times a power of two, or times an E4M3 scale and a float32 global scale): so
the reference is the long-sum engine's exact matmul of those float64 values, rounded once into
``dtype``, and its tolerance the engine's accumulation models (``compute``, ``order``,
``fused``, ``products``; ``docs/linalg.md``), by default accumulation in float32 as the tensor
cores do.
"""

from __future__ import annotations

import itertools

from .._result import any_of
from ..linalg import matmul as _linalg_matmul
from ..linalg import register_matmul_operand
from ._quantize import Quantized

__all__ = ["matmul"]


def _choices(x, name):
    """The float64 Arrays ``x`` may stand for: one per declared rule of a Quantized."""
    if isinstance(x, Quantized):
        return [x.dequantize(rule) for rule in x.rules]
    if isinstance(x, tuple):
        raise ValueError(
            f"{name}: pass what er.quantize returned, or dequantized values "
            f"(er.dequantize(codes, scales, fmt)); got a tuple")
    return [x]


def matmul(a, b, *, dtype="float32", compute="float32", **options):
    """``a @ b`` of block-scaled operands (what :func:`quantize` returns; plain arrays are
    taken as they are), each element the exact sum rounded once into ``dtype``.

    ``compute`` and the other options (``rounding``, ``overflow``, ``order``, ``fused``,
    ``products``) are :func:`exactref.linalg.matmul`'s: the accumulation the tolerance models.
    An operand quantized under several scale rules stands for each of them: the result is then
    an :func:`~exactref.any_of` over every pair of rules, covering a GEMM that consumed either
    operand's output of any declared rule.

    >>> import exactref as er
    >>> a = er.quantize([[1.0, 2.0, 3.0, 4.0]], "mxfp4", block=4)
    >>> b = er.quantize([[0.5], [0.5], [-7.0], [2.0]], "mxfp4", axis=0, block=4)
    >>> b.dequantize().tolist()          # -7 saturates to -6 under scale 1
    [[0.5], [0.5], [-6.0], [2.0]]
    >>> er.quantize.matmul(a, b).rounded.tolist()     # 0.5 + 1 - 18 + 8
    [[-8.5]]
    """
    results = [_linalg_matmul(x, y, dtype=dtype, compute=compute, **options)
               for x, y in itertools.product(_choices(a, "a"), _choices(b, "b"))]
    return results[0] if len(results) == 1 else any_of(*results)


# er.linalg.matmul hands block-scaled operands here (linalg lies below quantize and does not
# import it)
register_matmul_operand(Quantized, matmul)
