"""exactref: exact, once-rounded references for numerical kernels, and honest tolerances.

>>> import exactref as er
>>> er.asarray([0.1, 0.5], "bfloat16").tolist()
[0.10009765625, 0.5]

The public names load on first use, so ``import exactref`` (and the pytest plugin, which lives
in ``exactref.testing``) costs nothing until a name is needed.
"""

from __future__ import annotations

import importlib

from .ops import op_names

__version__ = "0.1.0"

#: Every public name and the private module that defines it.
_PUBLIC = {
    "Array": "._array", "Rounded": "._array", "asarray": "._array", "round_to": "._array",
    "from_codes": "._array",
    "Rounding": "._exact", "ComplexValue": "._exact", "FloatValue": "._exact",
    "FORMATS": "._formats", "Format": "._formats", "dtype": "._formats",
    "AnyOf": "._result", "Coverage": "._result", "Result": "._result", "any_of": "._result",
    "WeakCheckWarning": "._result", "ulps_from_exact": "._result",
    "Contract": "._contract", "ContractError": "._contract", "use_contract": "._contract",
    "current_contract": "._contract", "Explanation": ".explain",
    "ACCURACY_PRESETS": ".arithmetic", "Preset": ".arithmetic",
    "PromotionError": ".promotion", "Scalar": ".promotion", "can_cast": ".promotion",
    "promote_types": ".promotion", "result_type": ".promotion",
    "dequantize": ".quantize", "Quantized": ".quantize",
    "set_workers": "._exact", "workers": "._exact",
    "UnmeasuredVersionWarning": "._versions",
}
_SUBMODULES = ("arithmetic", "audit", "equivalents", "explain", "interop", "linalg", "ops",
               "promotion", "testing", "quantize")

#: Every op of the registry is ``er.<name>`` (exactref.ops lists them: add, divide, sqrt...).
_OPS = frozenset(op_names())

# er.quantize and er.explain are the packages exactref.quantize and exactref.explain, callable
# as their functions of that name
__all__ = sorted(set(_PUBLIC) | _OPS | {"quantize", "explain"})


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
        globals()[name] = value
        return value
    if name in _OPS:
        from .ops import get_op

        value = get_op(name).function
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'exactref' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
