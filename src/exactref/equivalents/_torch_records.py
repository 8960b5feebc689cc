"""What the ops' records say about torch: the contract (the op's keywords that model torch's
CPU kernel, ``Counterpart.contract``) and the per-op facts (``Counterpart.data``) that the torch
equivalents read, so an op's torch behaviour is declared once, beside the op.

>>> from exactref.equivalents._torch_records import contract, data
>>> contract("layer_norm")
{'order': 'any', 'algorithm': 'chan', 'form': 'centered', 'fused': True}
>>> data("conv2d", "skips_padding")
('float32', 'float16', 'bfloat16')
"""

from __future__ import annotations

from ..ops import get_op

__all__ = ["counterpart", "contract", "data"]

#: the library's field in the records' counterparts
TORCH = "torch"


def counterpart(op):
    """The torch Counterpart of ``op`` (a name, or an equivalent named after its op)."""
    name = getattr(op, "__name__", op)
    cp = get_op(name).counterparts.of(TORCH)
    if cp is None or cp.contract is None:
        raise LookupError(f"the record of {name!r} declares no torch contract (its "
                          f"counterparts' torch=Counterpart(call, contract=...)); an exactref bug")
    return cp


def contract(op) -> dict:
    """The keywords of ``op`` that model torch's CPU kernel (a fresh dict)."""
    return dict(counterpart(op).contract)


def data(op, key: str, default=None):
    """One fact of the record's torch counterpart (``Counterpart.data[key]``)."""
    return (counterpart(op).data or {}).get(key, default)
