"""Read the recorded ground truth (``fixtures/*.json``) and compare a policy with it, cell by cell.

The fixtures are written by ``scripts/record_promotion_fixtures.py`` (its docstring describes
the layout). :func:`cells` yields every recorded cell as a :class:`Cell`; :func:`compare` asks
the matching policy and returns a verdict:

``agree``
    the policy gives the library's dtype, or raises where the library raises, with the same
    exception type and message.
``kernel_missing``
    the library failed only because a kernel (a CPU kernel, a ufunc loop, an XLA type) is
    missing, and the policy gives the dtype the library's promotion gives without it; or the
    policy raises the same "not implemented" error as a rule of the operation.
``signature``
    the library's function does not take a Python scalar in that position (torch's
    ``eq(2, t)``); the promotion question does not arise.
``api_differs``
    a documented difference between the library's promotion *function* and what its operations
    do (``np.result_type`` ignores ml_dtypes' ufunc loops and Python int values); the policy
    follows the operations.
``disagree``
    anything else; the tests require none.

"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ._engine import get_policy
from ._errors import PromotionError

__all__ = ["Cell", "cells", "compare", "load", "FIXTURE_DIR", "LIBRARIES", "NUMPY_FIXTURES"]

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
#: fixture file -> policy name (numpy: one fixture per ml_dtypes minor, each compared with the
#: numpy policy's rules for that minor, whichever ml_dtypes is installed)
LIBRARIES = {"torch": "torch", "numpy_ml_dtypes_0.5": "numpy", "numpy_ml_dtypes_0.6": "numpy",
             "numpy_ml_dtypes_0.7": "numpy", "jax": "jax", "jax_x64": "jax_x64"}
#: the numpy fixtures, by the ml_dtypes minor they were recorded with
NUMPY_FIXTURES = {k.rsplit("_", 1)[1]: k for k in LIBRARIES if k.startswith("numpy_")}

#: Library errors that say a kernel (not promotion) is missing.
#: (XLA on the CPU cannot hold float6 arrays, "Invalid XLA PrimitiveType", nor 1-bit integer
#: arrays: "RuntimeProgramInputMismatch ... u1[3]".)
_KERNEL_MISSING = re.compile(r"not implemented for|Invalid XLA PrimitiveType|Invalid integer "
                             r"data type|not supported for the input types|did not contain a "
                             r"loop|RuntimeProgramInputMismatch")
#: Library errors that say the function does not take this argument at all.
_SIGNATURE = re.compile(r"received an invalid combination of arguments|must be Tensor, not")

_CACHE: dict = {}


#: the ops whose jax results carry a weak type the fixtures check
_WEAK_TYPED = ("add", "sub", "mul", "add:eager", "atan2")


def load(library: str) -> dict:
    """The parsed fixture of ``library`` (cached)."""
    if library not in _CACHE:
        with open(os.path.join(FIXTURE_DIR, f"{library}.json")) as f:
            _CACHE[library] = json.load(f)
    return _CACHE[library]


@dataclass(frozen=True)
class Cell:
    library: str
    op: str  # as recorded: "add", "add_", "promote_types", "can_cast[safe]", "result_type", ...
    operands: tuple  # operand notation strings
    dtype: str | None  # the library's result dtype (None on error)
    weak: bool
    error: tuple | None  # (type, message)
    fallback: str | None  # the dtype the library's promotion gives where a kernel is missing
    warnings: tuple
    note: str = ""

    @property
    def id(self) -> str:
        """A readable id: ``torch-add-int8[3]-float16[]``."""
        extra = f"[{self.note}]" if self.note else ""
        return f"{self.library}-{self.op}{extra}-" + "-".join(self.operands)


def _parse(library, data, op, operands, text, note="") -> Cell:
    parts = text.split("!W")
    base, warns = parts[0], tuple(data["warnings"][int(w)] for w in parts[1:])
    if base.startswith("E"):
        head, _, fb = base.partition(">")
        err = tuple(data["errors"][int(head[1:])])
        return Cell(library, op, tuple(operands), None, False, err, fb or None, warns, note)
    weak = base.endswith("*")
    return Cell(library, op, tuple(operands), base.rstrip("*"), weak, None, None, warns, note)


def cells(library: str) -> Iterator[Cell]:
    """Every recorded cell of ``library``'s fixture."""
    data = load(library)
    for t in data["tables"]:
        note = t.get("note", "")
        for r, row in zip(t["rows"], t["cells"], strict=True):
            for c, v in zip(t["cols"], row.split(), strict=True):
                yield _parse(library, data, t["op"], (r, c), v, note)
    for op, operands, v in data["cases"]:
        yield _parse(library, data, op, operands, v)


def _policy_for(cell: Cell):
    name = LIBRARIES[cell.library]
    if cell.library == "torch" and "set_default_dtype(torch.float64)" in cell.note:
        return get_policy(name, default_dtype="float64")
    if cell.library.startswith("numpy_ml_dtypes_"):
        return get_policy(name, ml_dtypes=cell.library.rsplit("_", 1)[1])
    return get_policy(name)


def ask(cell: Cell):
    """The policy's answer for the cell: ('ok', dtype name, weak) or ('error', PromotionError)."""
    from . import _engine

    pol = _policy_for(cell)
    kind = cell.op  # the fixture asks: promote_types, can_cast[...], or an op
    try:
        if kind == "promote_types":
            return ("ok", pol.promote_types(*(_dtype(s) for s in cell.operands)).name, False)
        if kind.startswith("can_cast"):
            casting = kind[len("can_cast["):-1] if "[" in kind else None
            ok = pol.can_cast(*(_dtype(s) for s in cell.operands), casting)
            return ("ok", str(ok).lower(), False)
        if kind.endswith("_"):
            res = _engine.check_inplace(kind[:-1], *map(_numpy_scalars, cell.operands),
                                        policy=pol)
            return ("ok", _dtype(cell.operands[0]).name, False) if res is not None else None
        name = {"result_type": None, "add:eager": "add"}.get(kind, kind)
        res = _engine.resolve(*map(_numpy_scalars, cell.operands), policy=pol, op=name)
        return ("ok", res.result.name, res.weak)
    except PromotionError as exc:
        return ("error", exc)


def _engine_resolve(cell: Cell):
    """The policy's full Resolution for an op cell (compute dtype included)."""
    from . import _engine

    return _engine.resolve(*map(_numpy_scalars, cell.operands), policy=_policy_for(cell),
                           op=cell.op)


def _numpy_scalars(spec: str):
    """The recorder passed typed scalars (``float32(0.5)``) as numpy scalars."""

    from ._operands import operand

    o = operand(spec)
    if o.tier != "typed":
        return spec
    return o.format.np_dtype.type(o.value)


def _dtype(spec):
    from .._formats import dtype

    return dtype(spec.split("[")[0])


def _same_message(policy_msg, library_msg) -> bool:
    if policy_msg is None or library_msg is None:
        return True
    if policy_msg == library_msg:
        return True
    if library_msg.endswith(" ...") and policy_msg.startswith(library_msg[:-4]):
        return True  # the recorder keeps the first 400 characters of a long message
    # jax prints the input types of a failed promotion as a set: compare them unordered.
    pat = re.compile(r"Input dtypes (\(.*?\)) have")
    mp, ml = pat.search(policy_msg), pat.search(library_msg)
    if mp and ml:
        return (sorted(mp.group(1).strip("()").split(", ")) ==
                sorted(ml.group(1).strip("()").split(", "))
                and pat.sub("", policy_msg) == pat.sub("", library_msg))
    return False


def _same(cell, got) -> bool:
    if cell.error is None:
        return got[0] == "ok" and got[1] == cell.dtype
    return got[0] == "error"


def compare(cell: Cell):
    """(verdict, detail) for one cell; see the module docstring for the verdicts."""
    got = ask(cell)
    differs = getattr(_policy_for(cell), "api_differs", lambda c, g: None)(cell, got)
    if differs and not _same(cell, got):
        return "api_differs", differs
    if cell.error is None:
        if got[0] == "ok":
            weak_matters = cell.library.startswith("jax") and cell.op in _WEAK_TYPED
            if got[1] == cell.dtype and (not weak_matters or got[2] == cell.weak):
                return "agree", got[1]
            return "disagree", f"policy {got[1]}{'*' * got[2]}, library " \
                               f"{cell.dtype}{'*' * cell.weak}"
        return "disagree", f"policy raises {got[1]}, library gives {cell.dtype}"
    etype, emsg = cell.error
    if _SIGNATURE.search(emsg):
        return "signature", emsg
    if got[0] == "error" and _KERNEL_MISSING.search(emsg) and "XLA" in emsg.upper():
        return "kernel_missing", f"{etype}: {emsg} (the array cannot even be made)"
    if got[0] == "error":
        lib = got[1].library_error
        if lib is None or (lib[0] == etype and _same_message(lib[1], emsg)):
            return "agree", f"{etype}: {emsg}"
        return "disagree", f"policy says the library raises {lib}, library raises " \
                           f"{(etype, emsg)}"
    if _KERNEL_MISSING.search(emsg):
        known = getattr(_policy_for(cell), "meta_differs", lambda c, d: None)(cell, got[1])
        if cell.fallback is None or cell.fallback in (got[1], known):
            return "kernel_missing", f"{etype}: {emsg}; promotion gives {got[1]}"
        return "disagree", f"policy {got[1]}, library promotion {cell.fallback} ({emsg})"
    return "disagree", f"policy gives {got[1]}, library raises {etype}: {emsg}"
