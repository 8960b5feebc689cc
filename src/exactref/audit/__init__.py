"""``exactref audit``: audit a real library's arithmetic against exact references.

Any op of the registry (:mod:`exactref.ops`) can be audited: for each op, :func:`run_audit`
plans groups of operand formats from the op's record (its operands, the dtype kinds it takes,
its parameters and the values the audit tries for them; a shape-planned op's groups from its
``AuditPlan``: :mod:`exactref.audit._plan`), draws inputs over each format's whole range plus
an adversarial corpus, runs the target's counterpart of the op, builds the reference its
implementation may legitimately compute (the target's equivalents where exactref has them,
else, where the record declares the library's contract, the operands converted as the
library's type resolution converts them and the op's exact value rounded once with the
contract's keywords, with the modelled implementations' tolerance; an op without a contract is
skipped, saying so, unless ``uncontracted="exact"``), checks coverage and the result dtype
against the target's promotion policy, and keeps the worst cases.

Group kinds: ``same`` (every operand an array of one format), ``mixed`` (two formats, binary
ops), ``zero_dim`` (an operand of shape ()), ``scalar`` (a Python scalar operand), ``params``
(the op's parameters at the values its record names: ``alpha``, ``rounding_mode``, ``value``,
cast's target format; ``alpha`` is an alias).

>>> from exactref.audit import AuditConfig, run_audit
>>> report = run_audit(AuditConfig(target="numpy", ops=("add",), dtypes=("float16",),
...                                samples=64, kinds=("same",)))
>>> [(g.key, g.status) for g in report.groups]
[('add float16[n] float16[n]', 'pass')]
"""

from __future__ import annotations

import difflib
import time
import warnings
import zlib
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .._array import asarray
from .._exact import FloatValue
from .._formats import dtype as resolve_dtype
from .._result import WeakCheckWarning
from ..ops import FAMILIES, all_ops, get_op, op_names
from ..promotion import PromotionError, result_type
from . import _linear, _quantize, _targets
from ._calls import DEFAULT_TIMEOUT, KernelFault, KernelRaised, KernelTimeout, call_with_timeout
from ._contracts import build as build_contract
from ._contracts import dimensions as contract_dimensions
from ._corpus import hard_inputs, moderate_matrix, partners, sample
from ._exhaustive import ExhaustiveError, ExhaustiveReport, KernelInputError, exhaustive
from ._exhaustive import sweep_contract as sweep_contract
from ._exhaustive import sweep_size as sweep_size
from ._explained import EXPLAIN_SECONDS, explained_line
from ._histogram import BUCKETS, UlpHistogram, accuracy
from ._plan import KINDS, builder, has_groups, param_free, plan
from ._reproduce import replay_reproducers
from ._targets import (
    RUNTIMES,
    SHAPED_PLANS,
    FunctionTarget,
    Target,
    environment,
    generic_reference,
    get_target,
)
from ._template import template
from ._windows import WindowData

__all__ = ["AuditConfig", "GroupReport", "AuditReport", "run_audit", "SCHEMA",
           "generic_reference", "KINDS", "resolve_ops", "AuditUsageError", "UlpHistogram",
           "RUNTIMES", "replay_reproducers", "EXPLAIN_SECONDS",
           "BUCKETS", "get_target", "UNCONTRACTED", "NO_CONTRACT", "build_contract",
           "contract_dimensions", "template", "exhaustive", "ExhaustiveReport",
           "ExhaustiveError", "KernelInputError", "sweep_contract", "sweep_size"]

#: /3: each group's and each (op, result format)'s histogram of errors in ulps
SCHEMA = "exactref.audit/3"
#: What the audit does with a library op whose record declares no contract for the library
#: (no equivalent of exactref's, no ``Counterpart.contract``): ``"skip"`` its groups, saying
#: "no contract for numpy's cbrt" (the default), or audit them against the ``"exact"`` value
#: rounded once with the op's own models (``--uncontracted exact``)
UNCONTRACTED = ("skip", "exact")
#: the status of a group skipped for want of a contract
NO_CONTRACT = "no contract"
_KIND_ALIASES = {"alpha": "params"}
#: Names for sets of ops on the command line: every op, or a family of the registry.
_ALL = "all"


def _op_sets() -> tuple:
    """``all`` and the registry's families (an op's own name wins: ``quantize``)."""
    return (_ALL, *[f for f in FAMILIES if f not in op_names()])


class AuditUsageError(ValueError):
    """A configuration the audit cannot run (an unknown op or kind, a bad sample count)."""


@dataclass
class AuditConfig:
    target: str = "numpy"
    ops: tuple = ("add", "multiply")
    dtypes: tuple | None = None  # None: every dtype the target supports
    samples: int = 256
    seed: int = 0
    kinds: tuple = ("same", "mixed", "zero_dim", "scalar", "params")
    device: str = "cpu"
    op_name: str | None = None  # for module:function targets
    exitfirst: bool = False
    policy: str | None = None  # the promotion policy result dtypes must follow (default: the
    # target's own: numpy, torch or jax; torch for a custom kernel)
    #: a custom kernel's declared implementation model, passed to the reference: ``accuracy``
    #: (functions: ulps or a preset) and ``compute`` (the format it computes in)
    accuracy: str | float | None = None
    compute: str | None = None
    #: a custom quantizer (``--op quantize``): its block format and the scale rules it may
    #: follow (None: the format's default rule; "any": every rule)
    block_format: str | None = None
    scale_rule: str | None = None
    #: each call of the kernel is given up on after this many seconds (None or 0: no limit);
    #: the audit then stops with that group failed (:mod:`exactref.audit._calls`)
    timeout: float | None = DEFAULT_TIMEOUT
    #: a library op with no declared contract there (:data:`UNCONTRACTED`): "skip" its groups
    #: (saying so) or audit them against the "exact" value
    uncontracted: str = "skip"
    #: the implementation's declared contract (an :class:`exactref.Contract`, or a mapping of
    #: its fields): every dimension reaches every reference (:mod:`exactref.audit._contracts`);
    #: ``accuracy``, ``compute`` and ``scale_rule`` above win over its fields
    contract: object = None
    #: the ambient contract (``[tool.exactref]`` of the nearest pyproject.toml): under
    #: ``contract``, its fields applied to the ops that have them and refused for none
    ambient: object = None


#: The most bytes the audit lets one group's working set take: half the machine's memory,
#: at most 16 GiB (``--samples`` past it is refused up front).
def _memory_bound() -> int:
    import os

    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: assume a small machine
        total = 8 << 30
    return min(total // 2, 16 << 30)


#: A group's working set per sample, measured (tracemalloc's peak of add and divide on
#: float64 and complex128: 320 to 360 bytes) and rounded up for the wider ops and kinds.
BYTES_PER_SAMPLE = 1024


class _GroupStopped(Exception):
    """The audit stops after this group (its kernel call timed out)."""

    def __init__(self, group):
        super().__init__(group.message)
        self.group = group


@dataclass
class GroupReport:
    op: str
    operands: list
    params: dict = field(default_factory=dict)
    expected_dtype: str = ""
    got_dtype: str = ""
    status: str = "pass"  # pass, fail, rejected (both raise), unsupported (kernel missing),
    # no contract (skipped: the library's op has no declared contract, NO_CONTRACT)
    cases: int = 0
    exact: int = 0
    covered: int = 0
    max_ulps: float = 0.0
    #: how strong the check was: the median and largest tolerance of the group's elements, in
    #: ulps of the result format (``Coverage.tolerance_stats``)
    tol_median_ulps: float = 0.0
    tol_max_ulps: float = 0.0
    worst: dict = field(default_factory=dict)
    message: str = ""
    #: the outputs' distances from the exact rounding in ulps of the result format, per
    #: bucket (None where nothing was compared: a group that raised or failed before)
    histogram: UlpHistogram | None = field(default=None, repr=False)
    #: the contract the reference applied (``Result.contract``'s fields, as text): the
    #: declared dimensions that reached this group
    contract: dict = field(default_factory=dict)
    #: for a failing group, what would cover the outputs (``er.explain``: "covered only if
    #: ..."; "" where explain has nothing to say or is not available)
    explained: str = ""

    @property
    def params_text(self) -> str:
        return "".join(f" {k}={v!r}" if isinstance(v, str) else f" {k}={v}"
                       for k, v in self.params.items())

    @property
    def key(self) -> str:
        return f"{self.op} {' '.join(self.operands)}{self.params_text}"

    @property
    def uncovered(self) -> int:
        return self.cases - self.covered

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("histogram")
        d["params"] = {k: repr(v) for k, v in self.params.items()}
        d["key"] = self.key
        h = self.histogram
        d["ulp_histogram"] = None if h is None else h.as_dict(zeros=True)
        d["max_error_ulps"] = None if h is None else h.max_ulps
        return d


@dataclass
class AuditReport:
    config: AuditConfig
    environment: dict
    groups: list
    seconds: float = 0.0
    interrupted: bool = False
    #: the groups the plan held (fewer ran where the audit was interrupted or stopped)
    planned: int = 0
    #: why the audit stopped before the end of its plan ("" where it ran to the end): Ctrl-C,
    #: a kernel call past the time limit, or -x at the first failure
    stopped: str = ""

    @property
    def passed(self) -> int:
        return sum(g.status in ("pass", "rejected") for g in self.groups)

    @property
    def failed(self) -> int:
        return sum(g.status == "fail" for g in self.groups)

    @property
    def skipped(self) -> int:
        return sum(g.status in ("unsupported", NO_CONTRACT) for g in self.groups)

    @property
    def uncontracted(self) -> int:
        """The groups skipped for want of a contract (:data:`NO_CONTRACT`)."""
        return sum(g.status == NO_CONTRACT for g in self.groups)

    def to_json(self) -> dict:
        contract = self.config.contract
        cfg = asdict(replace(self.config, contract=None, ambient=None))
        cfg.pop("ambient")  # merged into contract by the time a report exists
        cfg["contract"] = {} if not contract else {
            k: (v if isinstance(v, (str, int, float, bool, type(None))) else repr(v))
            for k, v in contract.fields().items()}
        return {"schema": SCHEMA, "environment": self.environment, "config": cfg,
                "seconds": round(self.seconds, 3), "interrupted": self.interrupted,
                "stopped": self.stopped, "groups_planned": self.planned,
                "groups_run": len(self.groups),
                "summary": {"passed": self.passed, "failed": self.failed,
                            "unsupported": self.skipped - self.uncontracted,
                            "no_contract": self.uncontracted},
                "ulp_buckets": list(BUCKETS),
                "accuracy": [{"op": op, "dtype": dt, "groups": n, "cases": h.cases,
                              "ulp_histogram": h.as_dict(zeros=True),
                              "max_error_ulps": h.max_ulps}
                             for op, dt, n, h in self.accuracy()],
                "groups": [g.to_json() for g in self.groups]}

    def accuracy(self) -> list:
        """Per op and result format, the groups' histograms summed:
        ``[(op, result format, groups, UlpHistogram)]``."""
        return accuracy(self.groups)


# ------------------------------------------------------------------------ configuration
def resolve_ops(names, target: Target) -> tuple:
    """Op names from the command line: registry names, the target's own long-sum ops (torch's
    bmm, baddbmm), or a set (``all``, or a family of the registry: ``arithmetic``,
    ``linalg``, ...). An unknown name raises
    :class:`AuditUsageError` with close matches."""
    known = list(op_names()) + [o for o in target.own_ops if o not in op_names()]
    sets = _op_sets()
    out = []
    for name in names:
        if name in sets:
            out += [s.name for s in all_ops() if name == _ALL or s.family == name]
            continue
        if name not in known:
            close = difflib.get_close_matches(name, known + list(sets), n=3, cutoff=0.6)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise AuditUsageError(f"unknown op {name!r}{hint}. Known: {', '.join(known)}, or "
                                  f"{', '.join(sets)}")
        out.append(name)
    return tuple(dict.fromkeys(out))


def _check_config(cfg: AuditConfig, target: Target) -> AuditConfig:
    for name, value in (("ops", cfg.ops), ("kinds", cfg.kinds), ("dtypes", cfg.dtypes)):
        if value is not None and not isinstance(value, str) and len(value) == 0:
            raise AuditUsageError(f"{name}=() names nothing to audit; expected at least one "
                                  + ("(None: every format the target has)" if name == "dtypes"
                                     else f"(the default: {getattr(AuditConfig, name)})"))
    kinds = tuple(dict.fromkeys(_KIND_ALIASES.get(k, k) for k in cfg.kinds))
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        close = difflib.get_close_matches(bad[0], KINDS, n=2)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise AuditUsageError(f"unknown group kind {bad[0]!r}{hint}; expected a comma-separated "
                              f"list of {', '.join(KINDS)}")
    if not isinstance(cfg.samples, int) or cfg.samples < 1:
        raise AuditUsageError(f"samples={cfg.samples!r}: each group needs at least 1 sample "
                              f"(the default is 256)")
    if cfg.uncontracted not in UNCONTRACTED:
        close = difflib.get_close_matches(str(cfg.uncontracted), UNCONTRACTED, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise AuditUsageError(f"uncontracted={cfg.uncontracted!r}{hint}: expected one of "
                              f"{', '.join(UNCONTRACTED)} (what to do with a library op whose "
                              f"record declares no contract there)")
    if not isinstance(cfg.seed, int) or cfg.seed < 0:
        raise AuditUsageError(f"seed={cfg.seed!r}: the seed is a non-negative integer")
    need, bound = cfg.samples * BYTES_PER_SAMPLE, _memory_bound()
    if need > bound:
        raise AuditUsageError(
            f"--samples {cfg.samples} would need about {_size(need)} of memory per group "
            f"(about {BYTES_PER_SAMPLE} bytes a sample: the operands, their exact values and "
            f"the tolerance's bounds); the audit takes at most {_size(bound)} (half this "
            f"machine's memory, at most 16 GiB): pass --samples {bound // BYTES_PER_SAMPLE} or "
            f"fewer (the default is 256), and run several seeds for more cases")
    import math

    if cfg.timeout is not None and not (isinstance(cfg.timeout, (int, float)) and
                                        math.isfinite(cfg.timeout) and cfg.timeout >= 0):
        raise AuditUsageError(f"--timeout {cfg.timeout!r}: expected a number of seconds >= 0 "
                              f"(0: no limit; the default is {DEFAULT_TIMEOUT:g})")
    if getattr(target, "default_ops", None) and tuple(cfg.ops) == AuditConfig.ops:
        cfg.ops = target.default_ops  # torchao: its quantizers, not add and multiply
    ops = resolve_ops(cfg.ops, target)
    if cfg.op_name is not None:
        ops = resolve_ops((cfg.op_name,), target)
    explicit = [o for o in cfg.ops if o not in _op_sets()]
    for op in explicit if cfg.op_name is None else ():
        if target.shaped(op):
            continue
        spec = get_op(op)
        if spec.plan in SHAPED_PLANS:
            where = (f"the torch target does (exactref audit torch --ops {op})"
                     if _targets.torch_audits(op) and target.name != "torch" else
                     "no built-in target audits it yet")
            raise AuditUsageError(
                f"the {target.name} target audits no {op} (an op audited on shapes of rows); "
                f"{where}; a custom kernel can be audited with --op {op} where the op takes "
                f"one")
        if target.counterpart(op) is None:
            raise AuditUsageError(
                f"{target.name} has no {op} (the op's record names no counterpart there); "
                f"audit it on a library that has one, or a custom kernel with --op {op}")
    _check_model(cfg, target, ops)
    named = explicit if cfg.op_name is None else [cfg.op_name]  # not those a set brings
    quantizer = [o for o in named if o in op_names() and get_op(o).plan == "blocks"]
    if quantizer:
        _quantize.check(cfg, target)
    elif cfg.block_format is not None or cfg.scale_rule is not None:
        raise AuditUsageError("--format and --scale-rule declare a block quantizer; audit it "
                              "with module:function --op quantize")
    cfg.kinds, cfg.ops = kinds, ops
    return cfg


def _check_model(cfg: AuditConfig, target: Target, ops) -> None:
    """The declared contract (``contract``, with ``accuracy`` and ``compute`` winning over its
    fields) checked against the audited ops before any group runs: a dimension the op (a
    ``module:function`` kernel's) or every audited op (a library's) cannot honour is refused by
    name with what the op takes (:func:`exactref.audit._contracts.check`); ``accuracy`` and
    ``compute`` by value too (:func:`_check_model_values`). The result is the target's
    ``user_contract``, merged over each library op's own contract."""
    from .._contract import Contract, ContractError
    from ._contracts import check, override

    try:
        base = cfg.contract if isinstance(cfg.contract, Contract) or cfg.contract is None \
            else Contract.from_mapping(cfg.contract)
        # --accuracy joins the contract once its value is checked (below, with the message
        # that says what a number of ulps may be); the op's refusal needs only its name
        contract = override(base, compute=cfg.compute) if cfg.compute is not None else base
        probe = contract if cfg.accuracy is None else (
            (contract or Contract()) | Contract(accuracy="correct"))
        check(probe, ops, single=isinstance(target, FunctionTarget))
        if contract is not None and contract.scale_rule is not None:
            if cfg.scale_rule is None:  # a quantizer's rule: the quantizer groups read it
                cfg.scale_rule = contract.scale_rule
            contract = contract.replace(scale_rule=None)
        ambient = cfg.ambient if isinstance(cfg.ambient, Contract) or cfg.ambient is None \
            else Contract.from_mapping(cfg.ambient)
        if ambient:
            contract = ambient | contract if contract else ambient
    except ContractError as exc:
        raise AuditUsageError(str(exc)) from None
    if not contract and cfg.accuracy is None:
        cfg.contract = None
        return
    contract = contract or Contract()
    cfg.accuracy = contract.accuracy if cfg.accuracy is None else cfg.accuracy
    cfg.compute = contract.compute if cfg.compute is None else cfg.compute
    if cfg.accuracy is not None:
        from ..arithmetic import ACCURACY_PRESETS

        try:
            cfg.accuracy = float(cfg.accuracy)
        except (TypeError, ValueError):
            if cfg.accuracy not in ACCURACY_PRESETS:
                close = difflib.get_close_matches(str(cfg.accuracy), list(ACCURACY_PRESETS), n=2)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise AuditUsageError(f"--accuracy {cfg.accuracy!r}{hint}: expected a number of "
                                      f"ulps or a preset ({', '.join(ACCURACY_PRESETS)})"
                                      ) from None
    if cfg.compute is not None:
        try:
            resolve_dtype(cfg.compute)
        except (TypeError, ValueError) as exc:
            raise AuditUsageError(f"--compute {cfg.compute!r}: {exc}") from None
    _check_model_values(cfg, target, ops)
    if cfg.accuracy is not None:
        contract = override(contract, accuracy=cfg.accuracy)
    cfg.contract = contract
    target.user_contract = contract
    target.model = contract.fields()


def _check_model_values(cfg: AuditConfig, target: Target, ops) -> None:
    """``--compute`` and a number of ulps for ``--accuracy`` checked as the references will
    take them, for every op and audited format, before any group runs (not one FAIL per group
    later): the compute format must be of the result's kind (a float format for float
    results) and the op must take one; a number of ulps must lie in [0.5, 2**40] (no result
    of an irrational value is closer than half an ulp: 0.5 is correct rounding); a preset must
    document each function in its compute format."""
    import inspect

    from .._operands import compute_format
    from ..arithmetic import resolve_accuracy

    dtypes = [resolve_dtype(d) for d in cfg.dtypes] if cfg.dtypes else target.dtypes()
    for op in ops:
        spec = get_op(op)
        takes = inspect.signature(spec.function).parameters
        if cfg.compute is not None and "compute" not in takes:
            continue  # an op without a compute format (refused where it is the only one)
        kinds = getattr(spec, "kinds", None) or ("float",)
        for f in dtypes:
            if f.kind not in kinds or f.kind not in ("float", "complex"):
                continue
            try:
                compute = compute_format(f, cfg.compute)
            except ValueError as exc:
                raise AuditUsageError(f"--compute {cfg.compute}: {exc} (the audited format "
                                      f"{f.name} of {op}); pass a format of its kind, or "
                                      f"leave --compute out") from None
            if cfg.accuracy is None or "accuracy" not in takes:
                continue
            if isinstance(cfg.accuracy, str) and spec.plan != "elementwise":
                continue  # a preset's bounds are those of the functions a row kernel calls
            try:
                resolve_accuracy(cfg.accuracy, op, compute)
            except ValueError as exc:
                raise AuditUsageError(f"--accuracy {cfg.accuracy:g}: {exc}" if isinstance(
                    cfg.accuracy, float) else f"--accuracy {cfg.accuracy}: {exc}") from None


def _spec_label(spec) -> str:
    fmt, kind = spec
    if fmt is None:
        return "None" if kind is None else f"{type(kind).__name__}({kind!r})"
    if isinstance(kind, WindowData):
        return kind.label(fmt)
    if isinstance(kind, tuple):
        return f"{fmt.name}[{','.join(map(str, kind))}]"
    return f"{fmt.name}[n]" if kind == "n" else f"{fmt.name}[]"


def _draw(spec, n, rng, other=None):
    fmt, kind = spec
    if fmt is None:
        return kind
    if isinstance(kind, WindowData):
        return kind.draw(fmt, rng)
    if isinstance(kind, tuple):
        return moderate_matrix(fmt, kind, rng)
    if kind == "0d":
        v = sample(fmt, 8, rng)
        k = int(rng.integers(0, 8))
        return v[k:k + 1].reshape(())  # a 0-d array, not a numpy scalar
    if other is not None:
        return partners(other[0], other[1], fmt, rng)
    return sample(fmt, n, rng)


def _hex(v) -> str:
    if v is None:
        return "None"
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, int, np.integer, np.bool_)):
        return str(int(v)) if not isinstance(v, (bool, np.bool_)) else str(bool(v))
    fmt = None
    if hasattr(v, "dtype"):
        try:
            fmt = resolve_dtype(v.dtype)
        except ValueError:
            fmt = None
    if isinstance(v, complex) or (fmt is not None and fmt.kind == "complex"):
        c = complex(np.asarray(v).astype(np.complex128)) if fmt is not None else complex(v)
        return f"complex({FloatValue(c.real).hex()}, {FloatValue(c.imag).hex()})"
    if fmt is not None and fmt.is_integer:
        return str(bool(v) if fmt.kind == "bool" else int(v))
    try:
        return FloatValue(float(v)).hex()
    except (TypeError, ValueError):
        return repr(v)


def _element(arr, i):
    if not isinstance(arr, np.ndarray) or arr.ndim == 0:
        return arr if not isinstance(arr, np.ndarray) else arr[()]
    return arr[i]


def _operand_names(target, op) -> tuple:
    """The operands' names (the registry's; the library's for its own long ops)."""
    if op in op_names():
        return get_op(op).operands
    return target.own_ops[op]


#: The rules for the result format of a shape-planned op's group (``AuditPlan.result``):
#: ``"output"``, a reduction's (one operand: integers and bool sum into int64) or a
#: product's (the last two operands promoted as by ``mul``); ``"logits"``, the format of the
#: first operand (a loss)
_RESULT_RULES = ("output", "logits")


def _expected(target, op, values, specs, params):
    """The result format the target's policy gives, or raise PromotionError."""
    if target.shaped(op):
        rule = get_op(op).audit.result if op in op_names() else _RESULT_RULES[0]
        if rule not in _RESULT_RULES:
            raise ValueError(f"op {op!r}: AuditPlan(result={rule!r}) names no result rule of "
                             f"the audit; expected one of {', '.join(_RESULT_RULES)}")
        if rule == _RESULT_RULES[1]:  # a loss: the logits' format
            return result_type(values[0], policy=target.policy, op="mul")
        if len(specs) == 1:  # a reduction: integers and bool sum into int64
            return target.sum_dtype(specs[0][0])
        # (a tuple is a shape, as layer_norm's normalized_shape: no operand)
        return result_type(*[v for v in values[-2:] if v is not None and not isinstance(
            v, tuple)], policy=target.policy,
                           op="mul")
    spec = get_op(op)
    if spec.loop == "none":  # cast: the target format
        return resolve_dtype(next(iter(params.values())))
    present = [v for v in values if v is not None]
    return result_type(*present, policy=target.policy, op=spec.promotion)


def _inputs(target: Target, op, specs, n, rng) -> list:
    """A group's operands: each drawn by :func:`_draw` (the second of two arrays against the
    first), then a share of the samples replaced by the op's hard regions
    (:func:`_hard_regions`)."""
    values = []
    first = None
    for s in specs:
        pair = first if s[0] is not None and first is not None and first[1][1] == "n" and \
            s[1] == "n" else None
        v = _draw(s, n, rng, other=(pair[0], pair[1][0]) if pair else None)
        values.append(v)
        if first is None and s[0] is not None:
            first = (v, s)
    if len(specs) == 1 and isinstance(specs[0][1], tuple):
        values[0] = _subnormal_row(values[0], specs[0][0], rng)
    return _hard_regions(target, op, specs, values, n, rng)


def _subnormal_row(x, fmt, rng):
    """A one-operand long op's matrix (a reduction, a row kernel) with its last row of
    subnormals of mixed signs: where a kernel that flushes subnormals (DAZ/FTZ, as
    TensorFlow's and XLA's) differs from one that does not (``flush=``)."""
    comp = fmt.component
    if fmt.kind != "float" or not comp.smallest_subnormal < comp.smallest_normal or \
            x.ndim < 2 or x.shape[0] < 4:
        return x
    n = x.shape[-1]
    k = rng.integers(1, 2 ** max(comp.precision - 1, 1), n)
    vals = k * comp.smallest_subnormal * rng.choice([-1.0, 1.0], n)
    out = np.array(x, copy=True)
    out[(-1,) + (0,) * (x.ndim - 2)] = asarray(vals, fmt).numpy()
    return out


def _hard_regions(target: Target, op, specs, values, n, rng) -> list:
    """``values`` with ``HARD_SHARE`` of the samples drawn from the op's declared regions
    (``OpSpec.audit_inputs``), in a group whose operands are all arrays of ``n`` samples of
    real formats (absent optional operands aside) and whose result, by the target's policy, is
    a real float format: the points are computed for that format."""
    if op not in op_names():
        return values
    regions = get_op(op).audit_inputs
    arrays = [s for s in specs if s != (None, None)]
    if not regions or not arrays or any(f is None or kind != "n" or f.kind not in
                                        ("float", "int", "uint") for f, kind in arrays):
        return values
    try:
        result = _expected(target, op, values, specs, {})
    except PromotionError:
        return values
    if result.kind != "float":
        return values
    formats = [f for f, _ in specs]
    positions, columns = hard_inputs(regions, formats, result, n, rng)
    out = list(values)
    for i, col in enumerate(columns):
        if col is not None:
            out[i] = np.array(values[i], copy=True)
            out[i][positions] = col
    return out


def audit_group(target: Target, op, specs, params, cfg: AuditConfig) -> GroupReport:
    g = GroupReport(op, [_spec_label(s) for s in specs], dict(params))
    if cfg.uncontracted != "exact" and target.contract(op) is None:
        g.status, g.message = NO_CONTRACT, _no_contract(target, op)
        return g
    # each group draws from its own stream: the same inputs whatever else is audited
    rng = np.random.default_rng([cfg.seed, zlib.crc32(g.key.encode())])
    values = _inputs(target, op, specs, cfg.samples, rng)
    try:
        expected = _expected(target, op, values, specs, params)
        g.expected_dtype = expected.name
    except PromotionError as exc:
        expected = None
        g.expected_dtype = f"error: {type(exc).__name__}"
    try:
        actual = call_with_timeout(target.run, (op, values, params), timeout=cfg.timeout,
                                   what=f"{target.name} on the group {g.key}")
    except KernelTimeout as exc:
        g.status, g.message = "fail", str(exc)
        raise _GroupStopped(g) from None
    except KernelFault as exc:
        if expected is None and isinstance(exc, KernelRaised):  # the policy refuses too
            g.status, g.message = "rejected", str(exc)[:300]
            g.got_dtype = f"error: {type(exc.raised).__name__}"
            return g
        g.status, g.message = "fail", str(exc)[:600]
        return g
    except Exception as exc:  # the library's own answer, whatever it raises
        if target.unsupported(exc):
            g.status, g.message = "unsupported", _exc_text(exc)[:200]
            return g
        g.got_dtype = f"error: {type(exc).__name__}"
        refused = target.refuses(op, values, params) if expected is not None else None
        if expected is None or refused:  # the library's refusal, as the policy or the
            # target's equivalent says it
            g.status, g.message = "rejected", f"{type(exc).__name__}: {exc}"[:200]
        else:
            g.status = "fail"
            g.message = (f"{target.name} raised {type(exc).__name__} ({exc}) where the "
                         f"{target.policy} policy gives {expected.name}")[:300]
        return g
    got = target.format_of(actual)
    g.got_dtype = got.name if got is not None else "?"
    if expected is None:
        g.status = "fail"
        g.message = (f"{target.name} returned {g.got_dtype} where the {target.policy} policy "
                     f"raises")
        return g
    try:
        ref = target.reference(op, values, params, expected)
    except (ValueError, OverflowError, TypeError, ZeroDivisionError) as exc:
        # the library's result has no exact meaning (NaN cast into an integer format, an
        # integer division by zero, say)
        g.status = "fail"
        g.message = f"no exact reference for {g.got_dtype}: {exc}"[:300]
        return g
    g.contract = _applied(ref, target, op)
    act_np = target.to_numpy(actual)
    shape = tuple(ref.rounded.shape)
    if tuple(np.shape(act_np)) != shape:
        g.status = "fail"
        g.message = (f"the kernel returned shape {tuple(np.shape(act_np))} where the reference "
                     f"has {shape} (a fault of the kernel)")
        return g
    with warnings.catch_warnings():  # the table shows the check's strength instead
        warnings.simplefilter("ignore", WeakCheckWarning)
        cov = ref.covers(act_np)
        g.tol_median_ulps, g.tol_max_ulps = cov.tolerance_stats
    mask = np.asarray(cov.mask).reshape(-1)
    rounded = np.asarray(ref.rounded.numpy()).reshape(-1)
    act = np.asarray(act_np).reshape(-1)
    g.cases = mask.size
    g.covered = int(np.count_nonzero(mask))
    g.exact = _count_exact(act, rounded)
    g.max_ulps = float(cov.worst_ulps) if g.uncovered else 0.0
    try:
        g.histogram = UlpHistogram.of(act, rounded, ref.rounded.dtype)
    except (TypeError, ValueError):  # an output whose values are no numbers (a kernel's fault:
        pass  # the coverage check says so)
    if got is not expected:
        g.status = "fail"
        g.message = f"result dtype {got.name}, the {target.policy} policy says {expected.name}"
    elif g.uncovered:
        g.status = "fail"
    shaped = builder(op).names if target.shaped(op) else None
    if g.uncovered:
        g.explained = explained_line(ref, act_np)
    if g.uncovered and shaped is not None:
        g.worst = _shaped_worst(shaped, op, cov, values, rounded, g.max_ulps, cfg,
                                ref.rounded.dtype.name, target, params)
    elif g.uncovered and target.shaped(op):
        g.worst = _long_worst(target, op, cov, values, params, rounded, g.max_ulps)
    elif g.uncovered:
        i = cov.worst_index
        flat = int(np.ravel_multi_index(i, cov.mask.shape)) if i else 0
        actual_i, lo_i, hi_i = cov.interval(i)
        names = _operand_names(target, op)
        at = []
        for s, v in zip(specs, values, strict=True):
            if s[0] is None:
                at.append(v)
            else:
                at.append(_element(np.broadcast_to(np.asarray(v), shape).reshape(-1), flat)
                          if np.ndim(v) else np.asarray(v)[()])
        g.worst = {"index": list(i), "inputs": {n: _hex(v) for n, v in zip(names, at,
                                                                          strict=True)},
                   "actual": _hex(actual_i), "allowed": [_hex(lo_i), _hex(hi_i)],
                   "expected": _hex(rounded[flat]), "ulps": g.max_ulps,
                   "reproducer": target.reproducer(op, specs, at, params)}
    note = getattr(target, "finding_note", None)  # a runtime's known departures, cited
    if g.uncovered and note is not None:
        # by the formats the group computes in: the operands' (a comparison's result is bool)
        # and the result's
        fmts = dict.fromkeys([*(s[0] for s in specs if s[0] is not None), ref.rounded.dtype])
        text = "; ".join(dict.fromkeys(t for f in fmts if (t := note(op, f))))
        if not text:  # a deviation no departure of the runtime's table names
            text = f"not a departure {target.name}'s table declares: {cov.summary()}"[:400]
        g.message = f"{g.message}; {text}" if g.message else text
    if g.worst and g.worst.get("ulps") == 0 and _wrong_zero_sign(g.worst):
        # the value is right, its sign is not: no distance in ulps says that
        g.worst["wrong_sign_of_zero"] = True
        if not g.message:
            g.message = (f"a wrong sign of zero: {g.worst['actual']} where only "
                         f"{g.worst['allowed'][0]} is allowed")
    return g


def _applied(ref, target, op) -> dict:
    """The contract that reached the group's reference, field by field as text: the
    reference's own record (``Result.contract``) where it keeps one, else the user's contract
    for the op."""
    c = getattr(ref, "contract", None)
    if c is None or not hasattr(c, "fields"):
        c = target.user_contract_for(op)
    return {} if not c else {k: v if isinstance(v, (str, int, float, bool)) else repr(v)
                             for k, v in c.fields().items()}


def _wrong_zero_sign(worst) -> bool:
    """Whether the worst element is a zero of the sign the allowed interval does not hold
    (both its ends zeros of the other sign)."""
    zeros = ("0x0p+0", "-0x0p+0")
    lo, hi = worst["allowed"]
    return worst["actual"] in zeros and lo in zeros and hi == lo != worst["actual"]


def _slices(op, values, params, i):
    """The names and slices of the operands that the output element ``i`` of a long sum reads:
    a product's row of its first operand and column of its second (every batch axis the
    element's own), a row kernel's whole row along its axis (softmax's, cumsum's, a sum's),
    and every other op's operands whole."""
    names, operands = {}, {}
    if op in op_names() and get_op(op).operands and (
            len(values) == 1 or len(values) == 2 and min(np.ndim(v) for v in values) < 2
            or len(values) > 2):
        return _rows_of(op, values, params, i)
    if len(values) == 3:  # baddbmm's input: the element itself, broadcast
        full = np.broadcast_to(values[0], _out_shape(values))
        operands["input"] = full[tuple(slice(k, k + 1) for k in i)]
    a = values[-2] if len(values) > 1 else values[0]
    lead = i[:-1] if len(values) > 1 else i
    names["x"] = f"x[{', '.join(map(str, lead))}, :]"
    operands["x"] = a[tuple(slice(k, k + 1) for k in lead)]
    if len(values) > 1:
        b = values[-1]
        batch, col = i[:-2], i[-1]
        names["y"] = f"y[{''.join(f'{k}, ' for k in batch)}:, {col}]"
        operands["y"] = b[tuple(slice(k, k + 1) for k in batch) + (slice(None),
                                                                   slice(col, col + 1))]
    return names, operands


def _rows_of(op, values, params, i):
    """A registry op's operands as the element ``i`` reads them: one operand's whole row
    along its axis (``axis``/``dim`` in ``params``, the last by default), or every operand
    whole (a dot product's vectors, gemm's matrices)."""
    spec_names = get_op(op).operands
    if len(values) != 1 or np.ndim(values[0]) == 0:
        names = {n: f"{n} (whole, shape {tuple(np.shape(v))})"
                 for n, v in zip(spec_names, values, strict=False)}
        return names, dict(zip(spec_names, values, strict=False))
    x = values[0]
    axis = params.get("axis", params.get("dim", -1))
    axis = axis % x.ndim if isinstance(axis, int) else x.ndim - 1
    idx = list(i)
    if len(idx) < x.ndim:  # a reduction: the axis is gone from the output's index
        idx.insert(axis, None)
    sel = tuple(slice(None) if d == axis else slice(k, k + 1) for d, k in enumerate(idx))
    text = ", ".join(":" if d == axis else str(k) for d, k in enumerate(idx))
    return {spec_names[0]: f"{spec_names[0]}[{text}]"}, {spec_names[0]: x[sel]}


def _out_shape(values):
    x, y = values[-2], values[-1]
    return x.shape[:-1] + y.shape[-1:]


def _no_contract(target, op) -> str:
    """Why a library op's group is skipped: its record declares no contract for the library
    (and exactref has no equivalent of it)."""
    return (f"no contract for {target.name}'s {op}: its record declares none "
            f"(Counterpart.contract) and exactref has no equivalent; --uncontracted exact "
            f"audits it against the exact value")


def _shaped_worst(names, op, cov, values, rounded, ulps, cfg, fmt, target, params) -> dict:
    """The worst element of a group of long rows (windows, norms, attention, cross-entropy):
    its index and value, the operands' shapes (the rows are too long to print), the command
    that reruns the group and, for a normalization, Python that reruns the kernel on the
    element's whole row (or group) and checks it (:func:`_norm_row`)."""
    i = tuple(int(v) for v in cov.worst_index)
    flat = int(np.ravel_multi_index(i, cov.mask.shape)) if i else 0
    actual_i, lo_i, hi_i = cov.interval(i)
    shapes = {name: (f"shape {tuple(np.shape(v))}" if hasattr(v, "shape") else repr(v))
              for name, v in zip(names, values, strict=False)}
    command = (f"exactref audit {cfg.target} " + (f"--op {op}" if cfg.op_name else
                                                  f"--ops {op}")
               + f" --dtypes {fmt} --seed {cfg.seed} --kinds same")
    out = {"index": list(i), "inputs": shapes, "actual": _hex(actual_i),
           "allowed": [_hex(lo_i), _hex(hi_i)], "expected": _hex(rounded[flat]), "ulps": ulps,
           "reproducer": command}
    names = _call_names(op, len(values)) if op in op_names() else names
    row = _norm_row(names, values, i)
    if row is None and len(values) == 1 and op in op_names():  # a row kernel's one operand
        row = _rows_of(op, values, params, i)[1]
    if row is None and getattr(target, "shaped_reproducer", False) and op in op_names():
        # a target that reruns its kernel on the group's operands (a convolution's whole, an
        # attention's (batch, head) of the element: each is computed alone)
        lead = tuple(slice(k, k + 1) for k in i[:-2]) if get_op(op).family == "attention" \
            else ()
        row = {n: v[lead] if lead and hasattr(v, "shape") else v
               for n, v in zip(names, values, strict=True)}
    if row is not None and hasattr(target, "long_reproducer"):
        out["reproducer"] = target.long_reproducer(op, row, params)
        out["command"] = command
    return out


def _call_names(op, n) -> list:
    """The names ``er.<op>`` gives its first ``n`` positional parameters (the order the audit
    passes a custom kernel its operands in)."""
    import inspect

    params = [p.name for p in inspect.signature(get_op(op).function).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return params[:n] + [f"arg{k}" for k in range(len(params), n)]


def _norm_row(names, values, i):
    """The operands a normalization's output element ``i`` reads, by name: ``x``'s whole
    normalized row (the trailing axes of ``normalized_shape``, a tuple operand), or its whole
    sample (a group norm's ``num_groups``, an int operand), with the other operands whole;
    None for other row kernels."""
    if len(values) < 2 or not hasattr(values[0], "ndim"):
        return None
    x, second = values[0], values[1]
    if isinstance(second, tuple):
        keep = x.ndim - len(second)
    elif isinstance(second, (int, np.integer)) and not isinstance(second, bool):
        keep = 1
    else:
        return None
    sel = tuple(slice(k, k + 1) for k in i[:keep])
    out = dict(zip(names, values, strict=False))
    out[names[0]] = x[sel]
    return out


def _long_worst(target, op, cov, values, params, rounded, ulps) -> dict:
    """The worst element of a long-sum group: the slices of the operands it depends on, and a
    reproducer that reruns that one element."""
    i = tuple(int(v) for v in cov.worst_index)
    flat = int(np.ravel_multi_index(i, cov.mask.shape)) if i else 0
    actual_i, lo_i, hi_i = cov.interval(i)
    names, operands = _slices(op, values, params, i)
    if getattr(target, "reproduce_whole", False):  # the group's own operands (a runtime picks
        operands = dict(zip(_call_names(op, len(values)), values, strict=True))  # by shape)
    return {"index": list(i), "inputs": names, **names, "actual": _hex(actual_i),
            "allowed": [_hex(lo_i), _hex(hi_i)], "expected": _hex(rounded[flat]), "ulps": ulps,
            "reproducer": target.long_reproducer(op, operands, params)}


def _no_kernel_groups(cfg: AuditConfig, op: str) -> str:
    """Why a custom kernel of ``op`` has no group to run, and what to pass instead."""
    spec = get_op(op)
    if not param_free(spec):
        why = (f"a {op} kernel needs its parameter ({', '.join(p.name for p in spec.params)}), "
               f"which the audit passes to no custom kernel; audit a library's {op} "
               f"(exactref audit numpy --ops {op})")
    elif spec.plan in SHAPED_PLANS and not has_groups(op):
        why = (f"the audit plans no groups of {op} yet; audit {op} through er.{op} in a test "
               f"(exactref.testing.assert_covers)")
    else:
        why = (f"none of --kinds {','.join(cfg.kinds)} applies to {op} (arity "
               f"{spec.arity}) in --dtypes {','.join(cfg.dtypes or ('(default)',))}; pass "
               f"--kinds same")
    return f"the audit has no group for the custom {op} kernel: {why}"


def _exc_text(exc) -> str:
    """An exception as the report shows it: its type and message (a kernel's own refusal as
    the kernel worded it)."""
    from ._calls import KernelUnsupported

    return str(exc) if isinstance(exc, KernelUnsupported) else f"{type(exc).__name__}: {exc}"


def _size(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def _count_exact(act, rounded) -> int:
    # Note: the format says whether the values are complex, not numpy's dtype.kind, which
    # ml_dtypes changes between releases (bcomplex32 is 'W' in 0.6 and 'V' in 0.7: cast to
    # float64 it lost its imaginary parts with a ComplexWarning per group)
    try:
        fmt = resolve_dtype(act.dtype) if act.dtype.kind in "cVW" else None
    except (TypeError, ValueError):  # a dtype exactref has no format for
        fmt = None
    wide = np.complex128 if act.dtype.kind == "c" or fmt is not None and \
        fmt.kind == "complex" else np.float64
    a = act.astype(wide) if act.dtype.kind in "fcVW" or act.dtype.itemsize <= 2 and \
        act.dtype.kind not in "biu" else act
    try:
        r = rounded.astype(a.dtype)
        same = (a == r) | ((a != a) & (r != r))
        return int(np.count_nonzero(same))
    except (TypeError, ValueError):
        return 0


#: kernels whose groups are run by their own module (the record's plan decides, not the op's
#: name)
_GROUP_RUNNERS = {"blocks": _quantize.audit_quantizer_group,
                  "linear": _linear.audit_linear_group}


def run_audit(cfg: AuditConfig, progress=None) -> AuditReport:
    """Audit ``cfg.target``; ``progress(done, total, key)`` is called after each group.
    Raises :class:`AuditUsageError` for a configuration that cannot run."""
    target = get_target(cfg.target, device=cfg.device, op_name=cfg.op_name)
    if cfg.policy is not None:
        from ..promotion import get_policy

        try:
            get_policy(cfg.policy)
        except ValueError as exc:  # an unknown policy, named with the known ones
            raise AuditUsageError(str(exc)) from None
        target.policy = cfg.policy
    cfg = _check_config(cfg, target)
    groups = plan(target, cfg)
    if not groups and isinstance(target, FunctionTarget):
        raise AuditUsageError(_no_kernel_groups(cfg, target.op_name))
    report = AuditReport(cfg, environment(target), [], planned=len(groups))
    start = time.perf_counter()
    try:
        for k, (op, specs, params) in enumerate(groups):
            how = get_op(op).plan if op in op_names() else None
            try:
                with np.errstate(all="ignore"):
                    g = _GROUP_RUNNERS.get(how, audit_group)(target, op, specs, params, cfg)
            except _GroupStopped as stop:
                report.groups.append(stop.group)
                report.stopped = f"a call of the kernel timed out ({stop.group.key})"
                break
            report.groups.append(g)
            if progress:
                progress(k + 1, len(groups), g.key)
            if cfg.exitfirst and g.status == "fail" and k + 1 < len(groups):
                report.stopped = f"-x: the first failure ({g.key})"
                break
    except KeyboardInterrupt:
        report.interrupted = True
        report.stopped = "interrupted (Ctrl-C)"
    report.seconds = time.perf_counter() - start
    return report
