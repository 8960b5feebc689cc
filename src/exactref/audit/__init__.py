"""``exactref audit``: audit a real library's arithmetic against exact references.

For each op and combination of operand formats (same-format pairs, mixed pairs, operands of
shape (), Python scalars, alphas), :func:`run_audit` draws inputs over each format's whole range
plus an adversarial corpus, runs the target, builds the reference its implementation may
legitimately compute (the target's equivalents where exactref has them, else the operands cast
to the result format as the library's type resolution does and the op rounded once, with the
modelled implementations' tolerance), checks coverage and the result dtype against the
target's promotion policy, and keeps the worst cases.

>>> from exactref.audit import AuditConfig, run_audit
>>> report = run_audit(AuditConfig(target="numpy", ops=("add",), dtypes=("float16",),
...                                samples=64, kinds=("same",)))
>>> [(g.key, g.status) for g in report.groups]
[('add float16[n] float16[n]', 'pass')]
"""

from __future__ import annotations

import platform
import time
import zlib
from dataclasses import asdict, dataclass, field

import numpy as np

from .._exact._values import FloatValue
from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from ..promotion import PromotionError, result_type
from ._corpus import moderate_matrix, partners, sample
from ._targets import Target, generic_reference, get_target

__all__ = ["AuditConfig", "GroupReport", "AuditReport", "run_audit", "SCHEMA",
           "generic_reference", "AlphaBeta"]

SCHEMA = "exactref.audit/1"
#: Long sums, audited on matrices: matmul of (M, K) by (K, N), sum over the last axis, bmm and
#: baddbmm of (B, M, K) by (B, K, N).
_LONG_OPS = ("matmul", "sum", "bmm", "baddbmm")
_M, _K, _N = 8, 48, 8
_B = 4
#: baddbmm's groups: (batch1 shape, batch2 shape, alpha and beta for floats, for integers).
#: The first runs BLAS-sized products (k * m * n >= 400) with an input of shape (N,) that
#: broadcasts; the second PyTorch's own small loop with beta=0 and a full input (whose NaNs
#: must not show).
_BADDBMM = [((_B, _M, _K), (_B, _K, _N), (0.5, -1.5), (2, -1)),
            ((3, 4, 6), (3, 6, 5), (-2.0, 0), (3, 0))]
#: Python scalars each group kind "scalar" tries, by the kind of the array operand.
_SCALARS = {"bool": [True], "int": [3, -2], "float": [2.5, -0.0, 0.1], "complex": [1.5 - 2j]}


@dataclass
class AuditConfig:
    target: str = "numpy"
    ops: tuple = ("add", "multiply")
    dtypes: tuple | None = None  # None: every dtype the target supports
    samples: int = 256
    seed: int = 0
    kinds: tuple = ("same", "mixed", "zero_dim", "scalar", "alpha")
    device: str = "cpu"
    op_name: str | None = None  # for module:function targets
    exitfirst: bool = False


@dataclass(frozen=True)
class AlphaBeta:
    """The ``alpha`` and ``beta`` of a baddbmm group (shown as ``alpha=A beta=B``)."""

    alpha: object
    beta: object

    def __str__(self) -> str:
        return f"{self.alpha} beta={self.beta}"


@dataclass
class GroupReport:
    op: str
    x: str
    y: str
    alpha: object = 1
    expected_dtype: str = ""
    got_dtype: str = ""
    status: str = "pass"  # pass, fail, rejected (both raise), unsupported (kernel missing)
    cases: int = 0
    exact: int = 0
    covered: int = 0
    max_ulps: float = 0.0
    worst: dict = field(default_factory=dict)
    message: str = ""
    ulps: list = field(default_factory=list, repr=False)  # signed errors, for the plot
    band: list = field(default_factory=list, repr=False)  # allowed [lo, hi] in ulps

    @property
    def key(self) -> str:
        a = "" if self.alpha == 1 else f" alpha={self.alpha}"
        return f"{self.op} {self.x} {self.y}{a}"

    @property
    def uncovered(self) -> int:
        return self.cases - self.covered

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("ulps")
        d.pop("band")
        d["alpha"] = repr(self.alpha)
        d["key"] = self.key
        return d


@dataclass
class AuditReport:
    config: AuditConfig
    environment: dict
    groups: list
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def passed(self) -> int:
        return sum(g.status in ("pass", "rejected") for g in self.groups)

    @property
    def failed(self) -> int:
        return sum(g.status == "fail" for g in self.groups)

    @property
    def skipped(self) -> int:
        return sum(g.status == "unsupported" for g in self.groups)

    def to_json(self) -> dict:
        cfg = asdict(self.config)
        return {"schema": SCHEMA, "environment": self.environment, "config": cfg,
                "seconds": round(self.seconds, 3), "interrupted": self.interrupted,
                "summary": {"passed": self.passed, "failed": self.failed,
                            "unsupported": self.skipped},
                "groups": [g.to_json() for g in self.groups]}


def environment(target: Target) -> dict:
    import ml_dtypes

    from .. import __version__

    env = {"exactref": __version__, "python": platform.python_version(),
           "platform": platform.platform(), "numpy": np.__version__,
           "ml_dtypes": ml_dtypes.__version__, "target": target.name,
           "device": target.device}
    env.update(target.versions())
    return env


# ------------------------------------------------------------------------------- groups
def _plan(target: Target, cfg: AuditConfig):
    """The groups to audit: ``(op, x_spec, y_spec, alpha)``; a spec is ``(format, kind)`` with
    kind ``"n"`` (dimensioned), ``"0d"`` or a Python scalar value."""
    dtypes = [resolve_dtype(d) for d in cfg.dtypes] if cfg.dtypes else target.dtypes()
    plan = []
    for op in cfg.ops:
        if op in _LONG_OPS:
            # long sums: same-format operands (the libraries refuse mixed matmul operands)
            if "same" not in cfg.kinds:
                continue
            fmts = [f for f in dtypes if target.has_long(op, f)]
            if op == "bmm":
                plan += [(op, (f, (_B, _M, _K)), (f, (_B, _K, _N)), 1) for f in fmts]
            elif op == "baddbmm":
                for f in fmts:
                    for s1, s2, floats, ints in _BADDBMM:
                        ab = AlphaBeta(*(ints if f.is_integer else floats))
                        plan.append((op, (f, s1), (f, s2), ab))
            else:
                plan += [(op, (f, "mk"), (f, "kn") if op == "matmul" else (None, -1), 1)
                         for f in fmts]
            continue
        if "same" in cfg.kinds:
            plan += [(op, (f, "n"), (f, "n"), 1) for f in dtypes]
        if "mixed" in cfg.kinds:
            for i, a in enumerate(dtypes):
                for b in dtypes[i + 1:]:
                    plan.append((op, (a, "n"), (b, "n"), 1))
        if "zero_dim" in cfg.kinds:
            for f in dtypes:
                for g in {f, FORMATS["float64"], FORMATS["int64"]} & set(target.dtypes()):
                    plan.append((op, (f, "n"), (g, "0d"), 1))
                    if g is not f:
                        plan.append((op, (f, "0d"), (g, "0d"), 1))
        if "scalar" in cfg.kinds:
            for f in dtypes:
                for kind, values in _SCALARS.items():
                    for v in values[:1] if kind != "float" else values:
                        plan.append((op, (f, "n"), (None, v), 1))
        if "alpha" in cfg.kinds and op == "add" and target.has_alpha:
            for f in dtypes:
                alphas = [2, -1, 0] if f.is_integer else [0.5, 3.0, -1.5, 0.0]
                if f.kind == "complex":
                    alphas += [1j, 2 - 1j]
                plan += [(op, (f, "n"), (f, "n"), a) for a in alphas
                         if not (f.kind == "bool" and a not in (0, 1))]
    return plan


def _spec_label(spec) -> str:
    fmt, kind = spec
    if fmt is None:
        return f"axis={kind}" if kind == -1 else f"{type(kind).__name__}({kind!r})"
    if kind in ("mk", "kn"):
        return f"{fmt.name}[{_M},{_K}]" if kind == "mk" else f"{fmt.name}[{_K},{_N}]"
    if isinstance(kind, tuple):
        return f"{fmt.name}[{','.join(map(str, kind))}]"
    return f"{fmt.name}[n]" if kind == "n" else f"{fmt.name}[]"


def _draw(spec, n, rng, other=None):
    fmt, kind = spec
    if fmt is None:
        return kind
    if kind in ("mk", "kn"):
        shape = (_M, _K) if kind == "mk" else (_K, _N)
        return moderate_matrix(fmt, shape, rng)
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
    try:
        return FloatValue(float(v)).hex()
    except (TypeError, ValueError):
        return repr(v)


def _element(arr, i):
    if not isinstance(arr, np.ndarray) or arr.ndim == 0:
        return arr if not isinstance(arr, np.ndarray) else arr[()]
    return arr[i]


def audit_group(target: Target, op, xs, ys, alpha, cfg: AuditConfig) -> GroupReport:
    g = GroupReport(op, _spec_label(xs), _spec_label(ys), alpha)
    # each group draws from its own stream: the same inputs whatever else is audited
    rng = np.random.default_rng([cfg.seed, zlib.crc32(g.key.encode())])
    x = _draw(xs, cfg.samples, rng)
    y = _draw(ys, cfg.samples, rng, other=(x, xs[0]) if xs[1] == "n" and ys[1] == "n"
              and xs[0] is not None else None)
    extra = {}
    if op == "baddbmm":  # the input: broadcast from (N,), or full where beta is 0
        out = (xs[1][0], xs[1][1], ys[1][2])
        extra["input"] = moderate_matrix(xs[0], out if alpha.beta == 0 else out[2:], rng)
    try:
        if op == "sum":
            expected = target.sum_dtype(xs[0])
        else:
            expected = result_type(x, y, policy=target.policy,
                                   op="mul" if op in ("matmul", "bmm", "baddbmm") else op)
        g.expected_dtype = expected.name
    except PromotionError as exc:
        expected = None
        g.expected_dtype = f"error: {type(exc).__name__}"
    try:
        actual = target.run(op, x, y, alpha, **extra)
    except Exception as exc:  # the library's own answer, whatever it raises
        if target.unsupported(exc):
            g.status, g.message = "unsupported", f"{type(exc).__name__}: {exc}"[:200]
            return g
        g.got_dtype = f"error: {type(exc).__name__}"
        if expected is None:
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
        ref = target.reference(op, x, y, alpha, expected, **extra)
    except (ValueError, OverflowError, TypeError) as exc:
        # the library's result has no exact meaning (NaN cast into an integer format, say)
        g.status = "fail"
        g.message = f"no exact reference for {g.got_dtype}: {exc}"[:300]
        return g
    cov = ref.covers(target.to_numpy(actual))
    mask = np.asarray(cov.mask).reshape(-1)
    rounded = np.asarray(ref.rounded.numpy()).reshape(-1)
    act = np.asarray(target.to_numpy(actual)).reshape(-1)
    g.cases = mask.size
    g.covered = int(np.count_nonzero(mask))
    g.exact = _count_exact(act, rounded)
    g.max_ulps = float(cov.worst_ulps) if g.uncovered else 0.0
    _record_errors(g, ref, act, rounded)
    if got is not expected:
        g.status = "fail"
        g.message = f"result dtype {got.name}, the {target.policy} policy says {expected.name}"
    elif g.uncovered:
        g.status = "fail"
    if g.uncovered and op in _LONG_OPS:
        g.worst = _long_worst(target, op, cov, x, y, alpha, extra, rounded, g.max_ulps)
    elif g.uncovered:
        i = cov.worst_index
        flat = int(np.ravel_multi_index(i, cov.mask.shape)) if i else 0
        actual_i, lo_i, hi_i = cov.interval(i)
        g.worst = {"index": list(i), "x": _hex(_element(np.asarray(x) if not np.isscalar(x)
                                                          else x, flat)),
                   "y": _hex(_element(np.asarray(y) if not np.isscalar(y) else y, flat)),
                   "actual": _hex(actual_i), "allowed": [_hex(lo_i), _hex(hi_i)],
                   "expected": _hex(rounded[flat]), "ulps": g.max_ulps,
                   "reproducer": target.reproducer(op, xs, ys, alpha,
                                                   _element(np.asarray(x), flat)
                                                   if xs[0] is not None else x,
                                                   _element(np.asarray(y), flat)
                                                   if ys[0] is not None else y)}
    return g


def _long_worst(target, op, cov, x, y, alpha, extra, rounded, ulps) -> dict:
    """The worst element of a long-sum group: the slices of the operands it depends on, and a
    reproducer that reruns that one element."""
    i = tuple(int(v) for v in cov.worst_index)
    flat = int(np.ravel_multi_index(i, cov.mask.shape)) if i else 0
    actual_i, lo_i, hi_i = cov.interval(i)
    if op == "sum":
        names = {"x": f"x[{i[0]}, :]", "y": f"axis={y}"}
        operands = {"x": x[i[0]:i[0] + 1]}
    elif op == "matmul":
        names = {"x": f"x[{i[0]}, :]", "y": f"y[:, {i[1]}]"}
        operands = {"x": x[i[0]:i[0] + 1], "y": y[:, i[1]:i[1] + 1]}
    else:
        b, r, c = i
        names = {"x": f"x[{b}, {r}, :]", "y": f"y[{b}, :, {c}]"}
        operands = {"x": x[b:b + 1, r:r + 1], "y": y[b:b + 1, :, c:c + 1]}
        if "input" in extra:
            full = np.broadcast_to(extra["input"], cov.mask.shape)
            operands = {"input": full[b:b + 1, r:r + 1, c:c + 1], **operands}
    return {"index": list(i), **names, "actual": _hex(actual_i),
            "allowed": [_hex(lo_i), _hex(hi_i)], "expected": _hex(rounded[flat]), "ulps": ulps,
            "reproducer": target.long_reproducer(op, operands, alpha, y if op == "sum" else None)}


def _count_exact(act, rounded) -> int:
    a = act.astype(np.complex128 if act.dtype.kind == "c" else np.float64) if act.dtype.kind in \
        "fcV" or act.dtype.itemsize <= 2 and act.dtype.kind not in "biu" else act
    try:
        r = rounded.astype(a.dtype)
        same = (a == r) | ((a != a) & (r != r))
        return int(np.count_nonzero(same))
    except (TypeError, ValueError):
        return 0


def _record_errors(g: GroupReport, ref, act, rounded):
    """Signed errors in ulps of every element, and the allowed band, for the plot."""
    from .._result import _ulp

    fmt = ref.rounded.dtype
    if fmt.component.is_integer:
        return
    try:
        a = np.asarray(act).astype(np.complex128 if fmt.kind == "complex" else np.float64)
        r = np.asarray(rounded).astype(a.dtype)
        if fmt.kind == "complex":
            a, r = a.real, r.real
        results = getattr(ref, "results", [ref])  # any_of: the union of the alternatives
        los, his = [], []
        for res in results:
            lo, hi = res.lowest, res.highest
            los.append(lo[0] if isinstance(lo, list) else lo)
            his.append(hi[0] if isinstance(hi, list) else hi)
        with np.errstate(invalid="ignore"):
            lo, hi = np.fmin.reduce(los), np.fmax.reduce(his)
        with np.errstate(all="ignore"):
            u = _ulp(r, fmt)
            err = (a - r) / u
            band = np.stack([(np.asarray(lo).reshape(-1) - r) / u,
                             (np.asarray(hi).reshape(-1) - r) / u])
        ok = np.isfinite(err)
        g.ulps = err[ok].tolist()[:4096]
        okb = np.isfinite(band).all(axis=0)
        if okb.any():
            g.band = [float(band[0][okb].min()), float(band[1][okb].max())]
    except (TypeError, ValueError):
        return


def run_audit(cfg: AuditConfig, progress=None) -> AuditReport:
    """Audit ``cfg.target``; ``progress(done, total, key)`` is called after each group."""
    target = get_target(cfg.target, device=cfg.device, op_name=cfg.op_name)
    if cfg.ops and cfg.op_name and len(cfg.ops) > 1:
        cfg.ops = (cfg.op_name,)
    plan = _plan(target, cfg)
    report = AuditReport(cfg, environment(target), [])
    start = time.perf_counter()
    try:
        for k, (op, xs, ys, alpha) in enumerate(plan):
            with np.errstate(all="ignore"):
                g = audit_group(target, op, xs, ys, alpha, cfg)
            report.groups.append(g)
            if progress:
                progress(k + 1, len(plan), g.key)
            if cfg.exitfirst and g.status == "fail":
                break
    except KeyboardInterrupt:
        report.interrupted = True
    report.seconds = time.perf_counter() - start
    return report
