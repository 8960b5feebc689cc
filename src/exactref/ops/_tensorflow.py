"""The ops of TensorFlow as counterparts of the registry's records: for each registry op the runtime
has, its call in the runtime's own vocabulary, the formats it has a kernel for
(``data["dtypes"]``), the contract that models its kernel (``contract``: the op's keywords,
each freedom cited in ``source``), and what the runtime does that no contract admits
(``departures``: findings, each with the spec it breaks). Data only: the audit target
(:mod:`exactref.audit._tensorflow`) reads it through the records (``get_op(op).counterparts.tensorflow``),
and :func:`exactref.ops._registry.register` attaches it."""

from __future__ import annotations

from ._registry import Counterpart

__all__ = ["COUNTERPARTS"]

#: registry op name -> the op in TensorFlow
COUNTERPARTS: dict[str, Counterpart] = {}
