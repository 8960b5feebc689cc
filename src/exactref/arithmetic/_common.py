"""The operand machinery for arithmetic's modules that still import it from here: it lives in
:mod:`exactref._operands` (import it from there), and rounding a formula's parts in
:mod:`._formulas`."""

from .._operands import *  # noqa: F403
from .._operands import __all__ as _operands_all
from ._formulas import Part, round_parts

__all__ = [*_operands_all, "Part", "round_parts"]
