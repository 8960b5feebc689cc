"""The audit's plan: which groups of operand formats and shapes each op gets, read from its
record (:mod:`exactref.ops`).

The record's ``plan`` says how its groups are drawn: ``elementwise`` (arrays of every format the
target has: ``same``, ``mixed``, ``zero_dim``, ``scalar``, ``params``), ``shapes`` (the op's own
shapes: long sums, reductions, row kernels) or ``blocks`` (a quantizer's). A shape-planned op's
groups come from a builder of this package named by its ``AuditPlan.groups`` (:data:`BUILDERS`;
None: ``"matrices"``), each reading the record's ``AuditPlan.data``: no builder knows an op by
its name, so a new op with the data of an existing builder needs no edit here.

>>> from exactref.ops import get_op
>>> from exactref._formats import FORMATS
>>> [(specs, params) for specs, params in builder(get_op("sum")).groups(get_op("sum"),
...                                                                      FORMATS["int32"])]
[([(exactref.int32, (8, 48))], {'axis': -1})]
"""

from __future__ import annotations

from dataclasses import dataclass

from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from ..ops import get_op, op_names
from . import _attention_groups, _cross_entropy_groups, _linear, _norm_groups, _quantize, _windows
from ._targets import SHAPED_PLANS, FunctionTarget, Target

__all__ = ["KINDS", "BUILDERS", "Builder", "builder", "plan", "param_free", "M", "K", "N"]

#: Long sums, audited on matrices: matmul of (M, K) by (K, N), sum over the last axis, torch's
#: bmm and baddbmm of (B, M, K) by (B, K, N).
M, K, N = 8, 48, 8
_B = 4
#: Python scalars each group kind "scalar" tries, by the kind of the array operand.
_SCALARS = {"bool": [True], "int": [3, -2], "float": [2.5, -0.0, 0.1], "complex": [1.5 - 2j]}
#: The group kinds (``alpha`` is the old name of ``params``).
KINDS = ("same", "mixed", "zero_dim", "scalar", "params")


def _matrices(spec, f) -> list:
    """The generic shapes builder: one group of operands of the shapes ``AuditPlan.data``
    names (``operands``: a shape per operand, drawn as moderate matrices), with its ``params``
    (an ``axis``, say), one more group per audit value of each parameter in ``vary`` (var's
    and std's ``correction=0``), and one per ``(shapes, params)`` pair in ``more`` (gemm's
    transposed operands); ``kinds`` (default the record's): the formats audited."""
    data = spec.audit.data or {}
    shapes = data.get("operands")
    if not shapes or not _windows.audited(spec, f):
        return []
    params = dict(data.get("params", {}))
    first = [(f, shape) for shape in shapes]
    out = [(first, params)]
    for name in data.get("vary", ()):
        values = spec.param(name).audit
        out += [(list(first), {**params, name: v}) for v in
                (values if isinstance(values, tuple) else ())]
    for more_shapes, more_params in data.get("more", ()):
        out.append(([(f, shape) for shape in more_shapes], {**params, **more_params}))
    return out


def _baddbmm_groups(spec, f):
    """torch's baddbmm: a BLAS-sized product (k * m * n >= 400) with an input of shape (N,)
    that broadcasts, and PyTorch's own small loop with beta=0 and a full input (whose NaNs
    must not show)."""
    out = []
    for s1, s2, floats, ints in (((_B, M, K), (_B, K, N), (0.5, -1.5), (2, -1)),
                                 ((3, 4, 6), (3, 6, 5), (-2.0, 0), (3, 0))):
        alpha, beta = ints if f.is_integer else floats
        shape = (s1[0], s1[1], s2[2])
        out.append(([(f, shape if beta == 0 else shape[2:]), (f, s1), (f, s2)],
                    {"alpha": alpha, "beta": beta}))
    return out


def _bmm_groups(spec, f):
    return [([(f, (_B, M, K)), (f, (_B, K, N))], {})]


@dataclass(frozen=True)
class Builder:
    """A group builder: ``groups(spec, fmt)`` gives ``[(operand specs, params)]``; ``names``
    the operands' names a failing group's worst element is printed with (None: the slices of
    a long sum the element reads, and a reproducer of that element)."""

    groups: object
    names: tuple | None = None


#: The group builders of the shape-planned ops, by the name a record's ``AuditPlan.groups``
#: gives (never by op name)
BUILDERS = {
    "matrices": Builder(_matrices),
    "windows": Builder(_windows.groups, _windows.WINDOW_NAMES),
    "rows": Builder(_norm_groups.groups, _norm_groups.NORM_NAMES),
    "attention": Builder(_attention_groups.groups, _attention_groups.ATTENTION_NAMES),
    "classes": Builder(_cross_entropy_groups.groups, _cross_entropy_groups.CROSS_ENTROPY_NAMES),
}
#: the builder of a plan whose record's AuditPlan names none
_PLAN_BUILDERS = {"shapes": "matrices", "rows": "rows"}
#: torch's own batched long sums (no registry op: ``TorchTarget.own_ops``): their builders
_OWN_BUILDERS = {"bmm": Builder(_bmm_groups), "baddbmm": Builder(_baddbmm_groups)}


def builder(op) -> Builder:
    """The builder of a shape-planned op (a record, or a target's own op by name)."""
    if isinstance(op, str) and op not in op_names():
        return _OWN_BUILDERS[op]
    spec = get_op(op)
    name = spec.audit.groups or _PLAN_BUILDERS.get(spec.plan, "matrices")
    if name not in BUILDERS:
        raise ValueError(f"op {spec.name!r}: AuditPlan(groups={name!r}) names no group builder "
                         f"of the audit; expected one of {', '.join(BUILDERS)}")
    return BUILDERS[name]


def has_groups(op) -> bool:
    """Whether the audit plans groups of the shape-planned ``op`` (its record gives them data)."""
    return op not in op_names() or get_op(op).audit.data is not None


def _long_plan(target, op, dtypes, cfg):
    """Shape-planned ops: same-format operands (the libraries refuse mixed matmul operands)."""
    if "same" not in cfg.kinds or not has_groups(op):
        return []
    make = builder(op).groups
    spec = op if op not in op_names() else get_op(op)
    return [(op, specs, params) for f in dtypes if target.has_long(op, f)
            for specs, params in make(spec, f)]


#: kernels whose groups are planned by their own module (the record's plan decides)
_PLANNERS = {"blocks": _quantize.plan, "linear": _linear.plan}


def plan(target: Target, cfg) -> list:
    """The groups to audit: ``(op, operand specs, params)``; a spec is ``(format, kind)`` with
    kind ``"n"`` (dimensioned), ``"0d"``, a shape, or, with format None, a Python scalar (or
    None for an absent optional operand)."""
    dtypes = [resolve_dtype(d) for d in cfg.dtypes] if cfg.dtypes else target.dtypes()
    out = []
    for op in cfg.ops:
        if target.shaped(op):
            out += _long_plan(target, op, dtypes, cfg)
            continue
        spec = get_op(op)
        if spec.plan in SHAPED_PLANS:  # shapes of rows this target does not audit
            continue
        if spec.plan in _PLANNERS:  # its own groups (a custom kernel, or a target's own)
            if hasattr(target, "plan_groups"):  # torchao: its quantizers and their rules
                out += target.plan_groups(op, cfg, dtypes if cfg.dtypes else None)
            elif isinstance(target, FunctionTarget) or spec.plan in getattr(
                    target, "own_plans", ()):
                out += _PLANNERS[spec.plan](cfg, dtypes if cfg.dtypes else None, op)
            continue
        out += _elementwise(target, spec, dtypes, cfg.kinds)
    return [(op, ops, params) for op, ops, params in out if target.supports(op, ops, params)]


def _elementwise(target, spec, dtypes, kinds) -> list:
    """An elementwise op's groups: every format of its kinds the target has, in the group
    kinds asked for."""
    op = spec.name
    fmts = [f for f in dtypes if f.kind in spec.kinds]
    n = spec.arity
    required = n - len(spec.optional)
    free = param_free(spec)
    out = []
    if "same" in kinds and free:
        out += [(op, [(f, "n")] * n, {}) for f in fmts]
    if "mixed" in kinds and required == 2 and free:
        for i, a in enumerate(fmts):
            for b in fmts[i + 1:]:
                out.append((op, [(a, "n"), (b, "n")], {}))
    if "zero_dim" in kinds and free:
        for f in fmts:
            others = {f, FORMATS["float64"], FORMATS["int64"]} & set(target.dtypes())
            for g in sorted(others, key=lambda v: v.name):
                if n == 1:
                    if g is f:
                        out.append((op, [(f, "0d")], {}))
                    continue
                out.append((op, [(f, "n"), (g, "0d")] + [(f, "n")] * (n - 2), {}))
                if g is not f and n == 2:
                    out.append((op, [(f, "0d"), (g, "0d")], {}))
    if "scalar" in kinds and n >= 2 and free:
        for f in fmts:
            for kind, values in _SCALARS.items():
                for v in values[:1] if kind != "float" else values:
                    for k in range(1, n):
                        ops = [(f, "n")] * n
                        ops[k] = (None, v)
                        out.append((op, ops, {}))
            if spec.optional:  # each optional operand absent in turn
                for k in range(required, n):
                    ops = [(f, "n")] * n
                    ops[k] = (None, None)
                    out.append((op, ops, {}))
    if "params" in kinds and target.has_params:
        out += _param_groups(spec, fmts, dtypes, n, required)
    return out


def _param_groups(spec, fmts, dtypes, n, required) -> list:
    """The groups of kind ``params``: each parameter at the values its record names (cast's
    target format: every other format the target has)."""
    out = []
    for p in spec.params:
        values = p.audit
        if values == "formats":
            for f in fmts:
                out += [(spec.name, [(f, "n")], {p.name: g.name}) for g in dtypes if g is not f]
            continue
        for f in fmts:
            for v in values:
                if f.is_integer and isinstance(v, float) and v != int(v):
                    continue
                out.append((spec.name, [(f, "n")] * required + [(None, None)] * (
                    n - required), {p.name: v}))
    return out


def param_free(spec) -> bool:
    """Whether the op can run with every parameter at its default (cast cannot)."""
    return all(p.default is not None or p.audit != "formats" for p in spec.params)
