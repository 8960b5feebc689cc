"""Every contract dimension reaches every op family through every entry point, or is refused by
name, or is declared not applicable with a reason: no dimension is dropped silently.

The table is built from the registry: for each family of ``ops.FAMILIES``, the ops that cover
the family's dimensions (:func:`exactref.audit._contracts.dimensions`, read from each op's
signature and the contract layer's generic dimensions), and for each (dimension, family,
entry point) one of three verdicts:

* **honoured**: the reference's ``Result.contract`` records the dimension (the API), the
  audit's group records it (``GroupReport.contract``: ``audit module:fn --op``, and the
  library targets torch, numpy, jax);
* **refused**: a :class:`exactref.ContractError` (an ``AuditUsageError`` for the audit) whose
  message names the dimension and lists what the op takes;
* **not applicable**: :data:`NOT_APPLICABLE` gives the reason (``add has no order: it has no
  accumulation``), and the API's result does not claim it.

The stronger check, that an honoured dimension changes the tolerance or the covered set on an
input chosen for it, is in ``test_contract_dimensions.py`` (one input per dimension).
"""

from __future__ import annotations

import numpy as np
import pytest

import exactref as er
from exactref._contract import DIMENSIONS
from exactref.audit import AuditConfig, AuditUsageError, run_audit
from exactref.audit._contracts import dimensions, not_applicable, parameters
from exactref.audit._plan import plan
from exactref.audit._targets import get_target
from exactref.ops import FAMILIES, all_ops, get_op

DIMS = tuple(DIMENSIONS)

#: a value of each dimension that every op having it accepts (``params``: the op's first
#: scalar parameter stored in float16, filled in per op)
VALUES = {"compute": "float64", "convert": "inputs", "order": "sequential",
          "algorithm": "two-pass", "fused": False, "flush": "both", "accuracy": 2.0,
          "specials": "formula", "params": None, "padding_taps": "skip",
          "overflow": "saturate", "scale_rule": "floor", "divide": "reciprocal"}


def _contract(op, dim) -> er.Contract:
    if dim == "params":
        names = parameters(op)
        return er.Contract(params={(names[0] if names else "eps"): "float16"})
    if dim == "convert":  # inputs rounded into the compute format: it needs one
        if dim not in dimensions(op):  # (where it does not apply, convert alone)
            return er.Contract(convert="inputs")
        return er.Contract(convert="inputs", compute="float32")
    return er.Contract(**{dim: VALUES[dim]})


def _cover(ops) -> list:
    """Ops of one family whose dimensions together are the family's (greedy, in the
    registry's order)."""
    want = set().union(*(dimensions(o) for o in ops))
    chosen, have = [], set()
    for o in sorted(ops, key=lambda o: -len(set(dimensions(o)) - have)):
        if set(dimensions(o)) - have:
            chosen.append(o)
            have |= set(dimensions(o))
        if have == want:
            break
    return chosen


FAMILY_OPS = {f: _cover([s.name for s in all_ops() if s.family == f]) for f in FAMILIES}
FAMILY_OPS = {f: ops for f, ops in FAMILY_OPS.items() if ops}

#: (dimension, family) -> why the family's ops have no such freedom (the registry's
#: DIMENSIONS reason), where none of its ops takes it
NOT_APPLICABLE = {(d, f): not_applicable(ops[0], d) for f, ops in FAMILY_OPS.items()
                  for d in DIMS if not any(d in dimensions(o) for o in ops)}


def test_the_table_covers_every_family_and_dimension():
    assert set(FAMILY_OPS) == set(FAMILIES), "a family has no op in the registry"
    for f, ops in FAMILY_OPS.items():
        for d in DIMS:
            assert (d, f) in NOT_APPLICABLE or any(d in dimensions(o) for o in ops)
    # the reasons are the registry's, by name
    assert NOT_APPLICABLE[("order", "arithmetic")] == \
        "add has no order: it has no accumulation"


def _first_group(op, target):
    """The audit's first group of ``op`` on ``target`` in float32: ``(specs, params)``."""
    cfg = AuditConfig(target=target.name, ops=(op,), op_name=op, dtypes=("float32",),
                      samples=16, kinds=("same", "params"),
                      **({"block_format": "mxfp8_e4m3"} if get_op(op).plan == "blocks"
                         else {}))
    groups = plan(target, cfg)
    return groups[0][1:] if groups else None


def _api_inputs(op):
    """Operands and keywords of ``op`` as the audit draws them for a custom kernel."""
    from exactref.audit import _inputs
    from exactref.audit._targets import FunctionTarget

    t = FunctionTarget.__new__(FunctionTarget)
    t.name, t.op_name, t.model, t.fn = "m:f", op, {}, None
    found = _first_group(op, t)
    specs, params = found
    if get_op(op).plan == "blocks":
        from exactref.audit._quantize import draw
        from exactref.quantize import BLOCK_FORMATS

        fmt, shape = specs[0]
        x = draw(BLOCK_FORMATS["mxfp8_e4m3"], fmt, shape, params["data"],
                 np.random.default_rng(0))
        return [x, "mxfp8_e4m3"], {}
    if get_op(op).plan == "linear":  # codes, scales and zero points as the audit draws them
        from exactref.audit._linear import _dequantizes, draw

        fmt, shape = specs[0]
        return draw(fmt, shape, params, np.random.default_rng(0), _dequantizes(op))
    return _inputs(t, op, specs, 16, np.random.default_rng(0)), dict(params)


#: known drops, each a strict xfail naming what is wrong (it fails loudly once fixed)
KNOWN: dict = {}
CASES = [(d, f, o) for f, ops in FAMILY_OPS.items() for o in ops for d in DIMS]
API_CASES = [pytest.param(d, f, o, marks=pytest.mark.xfail(reason=KNOWN[(d, o)], strict=True))
             if (d, o) in KNOWN else (d, f, o) for d, f, o in CASES]


@pytest.mark.parametrize("dim, family, op", API_CASES)
def test_the_api(dim, family, op):
    """``er.<op>(..., contract=)``: an applicable dimension is recorded on the result; a
    dimension the op lacks is not claimed, and passed as a keyword it is refused by name."""
    args, kwargs = _api_inputs(op)
    c = _contract(op, dim)
    fn = get_op(op).function
    if dim in dimensions(op):
        try:
            r = fn(*args, **kwargs, contract=c)
        except ValueError as exc:  # refused by name: the op cannot honour this value
            assert dim in str(exc), exc  # (a ContractError is a ValueError)
            return
        assert dim in r.contract.fields(), (op, dim, r.contract)
        return
    r = fn(*args, **kwargs, contract=c)
    assert dim not in getattr(r, "contract", er.Contract()).fields()
    if dim in ("convert", "params", "flush"):
        return  # the contract layer's own: no keyword of the op
    with pytest.raises(er.ContractError, match=dim):
        fn(*args, **kwargs, **{dim: c.fields()[dim]})


def _audit(target, op, contract, **kw):
    return run_audit(AuditConfig(target=target, ops=(op,), dtypes=("float32",), samples=16,
                                 kinds=("same",), contract=contract, timeout=0, **kw))


def reference_kernel(*args, **kwargs):
    """A custom kernel that returns exactref's own rounding of its op (the audit's module
    global ``OP`` says which)."""
    fn = get_op(reference_kernel.op).function
    if get_op(reference_kernel.op).plan == "blocks":
        return er.quantize(args[0], "mxfp8_e4m3").dequantize().numpy()
    return fn(*args, **kwargs).rounded.numpy()


@pytest.mark.parametrize("dim, family, op", CASES)
def test_audit_module_function(dim, family, op, monkeypatch):
    """``exactref audit module:fn --op OP``: an applicable dimension reaches every group's
    reference; one the op lacks is a usage error naming it and what the op takes."""
    reference_kernel.op = op
    c = _contract(op, dim)
    kw = {"op_name": op, **({"block_format": "mxfp8_e4m3"} if get_op(op).plan == "blocks"
                            else {})}
    target = f"{__name__}:reference_kernel"
    if dim not in dimensions(op):
        with pytest.raises(AuditUsageError, match=dim) as exc:
            _audit(target, op, c, **kw)
        assert f"The contract dimensions {op} takes" in str(exc.value)
        return
    if dim == "scale_rule":  # a quantizer's rule: the quantizer groups take it as the rule
        report = _audit(target, op, c, **kw)
        assert all(g.params.get("scale_rule") == "floor" for g in report.groups)
        return
    try:
        report = _audit(target, op, c, **kw)
    except AuditUsageError as exc:  # refused by name
        assert dim in str(exc), exc
        return
    refused = [g for g in report.groups if g.status == "fail" and not g.cases]
    if refused:  # the op's own refusal of this value, per group, naming the dimension
        assert all(dim in g.message for g in refused), [g.message for g in refused]
        return
    ran = [g for g in report.groups if g.cases]
    assert ran, [(g.key, g.status, g.message) for g in report.groups]
    for g in ran:
        assert dim in g.contract, (g.key, g.contract, g.message)


TARGETS = ("torch", "numpy", "jax")


def _library_op(target, ops):
    """An op of ``ops`` the library target audits (its own counterpart, with a contract)."""
    for op in ops:
        if target.shaped(op) or (get_op(op).plan == "elementwise" and
                                 target.counterpart(op) is not None):
            return op
    return None


def _library_cases():
    out = []
    for name in TARGETS:
        for f in FAMILIES:
            for d in DIMS:
                out.append((name, d, f))
    return out


@pytest.mark.parametrize("target_name, dim, family", _library_cases())
def test_the_library_targets(target_name, dim, family):
    """``exactref audit torch|numpy|jax --ops OP --set DIM=...``: the user's dimension reaches
    the reference (merged over the library's own contract, the user's winning), or is refused
    by name where the op lacks it; a family the library has no audited op of says so."""
    try:
        target = get_target(target_name)
    except ImportError as exc:
        pytest.skip(str(exc))
    ops = [s.name for s in all_ops() if s.family == family]
    having = [o for o in ops if dim in dimensions(o)]
    op = _library_op(target, having) or _library_op(target, ops)
    if op is None:
        pytest.skip(f"the {target_name} target audits no {family} op")
    c = _contract(op, dim)
    if dim == "compute":  # float64 opmath makes torch's attention and losses audits take
        c = er.Contract(compute="float32")  # minutes; a declared opmath shows the reach
    if dim not in dimensions(op):
        with pytest.raises(AuditUsageError, match=dim):
            _audit(target_name, op, c)
        return
    if dim == "scale_rule":
        pytest.skip("a library quantizer's rules are the target's own (torchao)")
    try:
        report = _audit(target_name, op, c, uncontracted="exact")
    except AuditUsageError as exc:
        assert dim in str(exc), exc
        return
    ran = [g for g in report.groups if g.cases]
    if not ran:
        pytest.skip(f"{target_name} ran no float32 group of {op}")
    for g in ran:
        assert dim in g.contract, (g.key, g.contract)
