"""Machinery shared by the elementwise ops: the operand machinery (from :mod:`exactref._operands`,
re-exported for arithmetic's own modules) and rounding the parts of an exact formula.

An op is declared by its exact formula as sums of products over operand *parts* (real and
imaginary), its promotion, and its modelled implementations; this module turns that declaration
into a :class:`~exactref.Result`. Other packages import the operand machinery from
:mod:`exactref._operands`, not from here.
"""

from __future__ import annotations

import numpy as np

from .._exact import Rounding, sum_of_products
from .._formats import Format
from .._operands import (
    Opnd,
    broadcast_shapes,
    cast_operand,
    check_number,
    compute_format,
    convert_scalars,
    engine_parts,
    output_format,
    prepare,
    resolve_mode_rule,
    scalar_parts,
    to_array,
)
from ._formulas import Part, terms_of

__all__ = ["Opnd", "prepare", "output_format", "Part", "round_parts", "compute_format",
           "broadcast_shapes", "cast_operand", "convert_scalars", "engine_parts", "scalar_parts", "to_array",
           "resolve_mode_rule", "check_number"]


def round_parts(parts, shape, out: Format, mode: Rounding, rule: str):
    """Round each Part's exact sum once into ``out``'s component: float64 (or int) arrays."""
    comp = out.component
    values = []
    for part in parts:
        ex = sum_of_products(terms_of(part), shape)
        v = ex.round(comp, mode, rule)[0]
        values.append(np.asarray(v).reshape(shape))
    return values
