"""The audit's contract: what the user declares about the audited implementation, and how each
dimension reaches the reference computations.

A run's contract (:attr:`AuditConfig.contract <exactref.audit.AuditConfig>`, an
:class:`exactref.Contract`) is merged from, weakest first: the ``[tool.exactref]`` table of
the nearest pyproject.toml, ``--contract FILE.toml``, each ``--set key=value``, and the
explicit options (``--compute``, ``--accuracy``, ``--flush``, ``--scale-rule``). Per-op
tables (``[ops.sum]`` in the file, ``--set ops.sum.order=sequential``) win for their op.

Each op's reference is computed with that contract (``er.<op>(..., contract=)``): a dimension
that is the op's keyword (``order=``, ``compute=``, ``algorithm=``, ...) is passed as that
keyword, and ``flush``, ``convert`` and ``params`` are carried out for every op by the
contract layer. A library target's own contract for its op (the record's
``Counterpart.contract``) is merged below the user's: the user's fields win.

A dimension is refused by name before any group runs (:func:`check`) where the op audited
cannot honour it: for a ``module:function`` kernel, any dimension its op does not have; for a
library target, a dimension none of the audited ops has (``--set order=pairwise`` with
``--ops add``), or a per-op table's dimension its op does not have.

>>> from exactref.audit._contracts import dimensions
>>> dimensions("sum")
('compute', 'convert', 'order', 'flush', 'overflow')
>>> "order" in dimensions("add"), "params" in dimensions("layer_norm")
(False, True)
"""

from __future__ import annotations

import difflib
import inspect

from .._contract import DIMENSIONS, Contract, ContractError, contracted
from ..ops import get_op, op_names

__all__ = ["dimensions", "check", "call_reference", "merged", "parameters", "GENERIC",
           "build", "not_applicable", "override"]

#: The dimensions the contract layer carries out for every op with operands (not keywords of
#: the op's function): subnormal flushing, inputs rounded into the compute format first, and
#: scalar parameters stored in a narrower format
GENERIC = ("convert", "params", "flush")
#: The plans whose ops return no Result the contract layer can widen (a quantizer's codes and
#: scales), or read codes, scales and zero points (linear quantization): the generic
#: ``flush`` and ``convert`` do not apply to them
_NOT_GENERIC = ("blocks", "linear")


def _signature(op) -> dict:
    fn = get_op(op).function
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}


def parameters(op) -> tuple:
    """The scalar parameters of ``op`` a ``params=`` table may store in a narrower format:
    its keywords whose default is a float (``eps``, ``alpha``, ``beta``, ``value``,
    ``label_smoothing``, ...)."""
    out = []
    for name, p in _signature(op).items():
        d = p.default
        if name in DIMENSIONS or name in ("dtype", "rounding", "policy"):
            continue
        if isinstance(d, float) or (name == "eps" and d is None) or (
                isinstance(d, int) and not isinstance(d, bool) and name in ("alpha", "beta",
                                                                         "value")):
            out.append(name)
    return tuple(out)


def dimensions(op) -> tuple:
    """The contract dimensions ``op`` honours, in :data:`exactref.DIMENSIONS`' order: its
    function's keywords of those names, ``flush`` and ``convert`` (every op with a compute
    format) and ``params`` (an op with a scalar parameter, :func:`parameters`)."""
    sig = _signature(op)
    out = []
    generic = get_op(op).plan not in _NOT_GENERIC
    for d in DIMENSIONS:
        if d in sig:
            out.append(d)
        elif d == "flush" and generic:
            out.append(d)
        elif d == "convert" and "compute" in sig and generic:
            out.append(d)
        elif d == "params" and parameters(op):
            out.append(d)
    return tuple(out)


def not_applicable(op, dim) -> str:
    """Why ``op`` has no such freedom (from :data:`exactref.DIMENSIONS`)."""
    return f"{op} has no {dim}: {DIMENSIONS[dim][1]}"


def _refusal(op, dim, option) -> ContractError:
    takes = dimensions(op)
    return ContractError(
        f"{option}: {not_applicable(op, dim)}. The contract dimensions {op} takes: "
        f"{', '.join(takes)}; leave {dim} out for {op} (or put it in a per-op table, "
        f"[ops.<name>], of an op that has it)")


def _option(dim) -> str:
    return f"--{dim.replace('_', '-')}" if dim in ("compute", "accuracy", "flush",
                                                     "scale_rule") else f"--set {dim}=..."


def check(contract, ops, single: bool) -> None:
    """Refuse, by name with what the op takes, a dimension the audited ops cannot honour:
    ``single`` (a ``module:function`` kernel of one op): any dimension that op lacks; else a
    dimension none of ``ops`` has. A per-op table naming an op not audited, or a dimension its
    op lacks, is refused too."""
    if contract is None:
        return
    ops = [o for o in ops if o in op_names()]
    if not ops:
        return
    for dim, value in contract.fields().items():
        if dim == "ops":
            continue
        having = [o for o in ops if dim in dimensions(o)]
        if (single or len(ops) == 1) and not having:
            raise _refusal(ops[0], dim, _option(dim))
        if not having:
            raise ContractError(
                f"{_option(dim)}: none of the audited ops ({', '.join(ops)}) has {dim} "
                f"({DIMENSIONS[dim][0]}); audit an op that has one, or leave it out")
        if dim == "params":
            _check_params(value, having, single)
    for name, own in (contract.ops or {}).items():
        if name not in ops:
            close = difflib.get_close_matches(name, ops, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ContractError(f"the contract's table [ops.{name}]{hint} names an op this "
                                f"audit does not run; the ops audited: {', '.join(ops)}")
        for dim, value in own.fields().items():
            if dim not in dimensions(name):
                raise _refusal(name, dim, f"[ops.{name}] {dim}")
            if dim == "params":
                _check_params(value, [name], True)


def _check_params(table, ops, single) -> None:
    for pname in table:
        having = [o for o in ops if pname in parameters(o)]
        if not having:
            names = sorted({p for o in ops for p in parameters(o)})
            raise ContractError(
                f"--set params.{pname}=...: {', '.join(ops)} has no scalar parameter "
                f"{pname!r}; the parameters a params table may store: {', '.join(names)}")


def merged(op, library: dict | None, contract) -> tuple[dict, Contract | None]:
    """The reference's keywords and contract for ``op``: the library's declared keywords
    (``Counterpart.contract``) less those the user's contract sets, and the user's contract
    for the op (None: nothing declared)."""
    user = None if contract is None else contract.for_op(op)
    keywords = dict(library or {})
    if user:
        for k in user.fields():
            keywords.pop(k, None)
    return keywords, (user or None)


def call_reference(op, args, kwargs, contract):
    """``er.<op>(*args, **kwargs, contract=contract)``: the op computed under the contract (the
    record's function, wrapped by the contract layer where the registry has not yet)."""
    fn = get_op(op).function
    if contract is None:
        return fn(*args, **kwargs)
    if "contract" not in _signature(op):
        fn = contracted(fn, get_op(op))
    return fn(*args, contract=contract, **kwargs)


def build(*, pyproject=None, file=None, sets=(), **explicit) -> Contract | None:
    """The run's contract: ``[tool.exactref]`` of the nearest pyproject.toml at or above
    ``pyproject`` (a folder; None: not read), then the TOML ``file``, the ``--set``
    assignments and the explicit options (fields; None: not given), each winning over the
    ones before. None where nothing is declared."""
    c = Contract()
    if pyproject is not None:
        c = c | Contract.from_pyproject(pyproject)
    if file is not None:
        c = c | Contract.from_toml(file)
    if sets:  # applied to an empty contract and merged: per-op tables merge field by field
        c = c | Contract().with_sets(list(sets))
    given = {k: v for k, v in explicit.items() if v is not None}
    if given:
        c = c | Contract.from_mapping(given)
    return c or None


def override(contract, **fields) -> Contract:
    """``contract`` with ``fields`` set for every op: an explicit option (``--compute``)
    wins over the per-op tables too."""
    c = (contract or Contract()) | Contract(**fields)
    if not c.ops:
        return c
    ops = {name: own.replace(**dict.fromkeys(fields)) for name, own in c.ops.items()}
    return c.replace(ops={k: v for k, v in ops.items() if v} or None)
