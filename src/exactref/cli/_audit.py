"""``exactref audit`` and ``exactref diff``.

Exit codes follow pytest's: 0 every element covered, 1 violations, 2 interrupted, 3 internal
error, 4 usage error, 5 nothing audited.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

__all__ = ["register", "format_report", "diff_reports"]

EXIT_OK, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE, EXIT_EMPTY = range(6)


def register(sub) -> None:
    p = sub.add_parser(
        "audit", help="audit a library's add and multiply against exact references",
        description="Audit a real library's arithmetic against exact, once-rounded references. "
                    "Exit codes: 0 all covered, 1 violations, 2 interrupted, 3 internal error, "
                    "4 usage error, 5 nothing audited.")
    p.add_argument("target", nargs="?", default="numpy",
                   help="numpy (default), torch, jax, or module:function (with --op)")
    p.add_argument("--ops", default="add,multiply",
                   help="comma-separated ops of the registry (add, subtract, divide, sqrt, "
                        "maximum, ...; exactref.ops lists them), or all, arithmetic, linalg; "
                        "torch also has bmm and baddbmm")
    p.add_argument("--op", dest="op_name", default=None,
                   help="the op a module:function target computes (any registered op)")
    p.add_argument("--dtypes", default=None,
                   help="comma-separated formats (default: every one the target has)")
    p.add_argument("--kinds", default="same,mixed,zero_dim,scalar,params",
                   help="operand combinations: same,mixed,zero_dim,scalar,params (the ops' "
                        "parameters: alpha, rounding_mode, value, cast's target)")
    p.add_argument("--samples", type=int, default=256, help="elements per group (default 256)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument("--policy", default=None,
                   help="the promotion policy result dtypes must follow: torch, numpy, jax, "
                        "array_api, aclnn, kael (default: the target's own; torch for "
                        "module:function)")
    p.add_argument("--json", dest="json_file", metavar="FILE", help="write the report as JSON")
    p.add_argument("--plot", metavar="FILE", help="write a PNG of the errors in ulps")
    p.add_argument("--worst", type=int, default=3, help="reproducers to print (default 3)")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_run_audit)
    d = sub.add_parser("diff", help="compare two audit JSON reports")
    d.add_argument("old")
    d.add_argument("new")
    d.set_defaults(func=_run_diff)


# ---------------------------------------------------------------------------- progress
class _Progress:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, done, total, key):
        if not self.enabled:
            return
        width = 30
        fill = int(width * done / max(total, 1))
        sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} {key[:40]:<40}")
        sys.stderr.flush()
        if done == total:
            sys.stderr.write("\n")


def _progress_enabled(args) -> bool:
    return not args.no_progress and sys.stderr.isatty() and not os.environ.get("CI")


# ------------------------------------------------------------------------------ output
def _pct(a, b) -> str:
    return f"{100.0 * a / b:.1f}" if b else "-"


def format_report(report, worst: int = 3) -> str:
    """The human-readable audit report: header, table sorted worst first, reproducers, and
    the closing ``N passed, M failed`` line."""
    env = report.environment
    cfg = report.config
    lines = [f"exactref audit {env['target']}: seed {cfg.seed}, {cfg.samples} samples per group, "
             f"device {env['device']}"]
    lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in env.items()
                                          if k not in ("target", "device", "platform")))
    order = {"fail": 0, "pass": 1, "rejected": 2, "unsupported": 3}
    groups = sorted(report.groups, key=lambda g: (order[g.status], -g.uncovered, -g.max_ulps))
    header = ["status", "op", "inputs -> result (expected/got)", "cases", "exact %",
              "covered %", "uncovered", "max ulps", "worst input"]
    rows = []
    for g in groups:
        inputs = ", ".join(g.operands) + g.params_text.replace(" ", ", ")
        res = g.expected_dtype if g.expected_dtype == g.got_dtype else \
            f"{g.expected_dtype}/{g.got_dtype}"
        worst_in = ", ".join(g.worst["inputs"].values()) if g.worst else ""
        rows.append([g.status.upper() if g.status == "fail" else g.status, g.op,
                     f"{inputs} -> {res}", str(g.cases), _pct(g.exact, g.cases),
                     _pct(g.covered, g.cases), str(g.uncovered),
                     f"{g.max_ulps:g}" if g.uncovered else "0", worst_in])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines.append("")
    for r in [header, *rows]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    failed = [g for g in groups if g.status == "fail"]
    for g in failed[:worst]:
        lines.append("")
        lines.append(f"FAILED {g.key}: {g.message or ''}".rstrip())
        if g.worst:
            w = g.worst
            where = ", ".join(f"{k} = {v}" for k, v in w["inputs"].items())
            lines.append(f"  worst at index {tuple(w['index'])}: {where}")
            lines.append(f"  got {w['actual']}, allowed [{w['allowed'][0]}, {w['allowed'][1]}],"
                         f" exact rounding {w['expected']} ({w['ulps']:g} ulp outside)")
            lines.append("  reproducer:")
            lines += ["    " + ln for ln in w["reproducer"].splitlines()]
    skipped = report.skipped
    lines.append("")
    tail = f", {skipped} skipped" if skipped else ""
    lines.append(f"{report.passed} passed, {report.failed} failed{tail}")
    return "\n".join(lines)


def _run_audit(args) -> int:
    from ..audit import AuditConfig, AuditUsageError, run_audit
    from ..audit._targets import get_target

    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip())
    cfg = AuditConfig(
        target=args.target, ops=ops,
        dtypes=tuple(d.strip() for d in args.dtypes.split(",")) if args.dtypes else None,
        samples=args.samples, seed=args.seed,
        kinds=tuple(k.strip() for k in args.kinds.split(",") if k.strip()),
        device=args.device, op_name=args.op_name, exitfirst=args.exitfirst,
        policy=args.policy)
    from .._formats import dtype as resolve_dtype

    try:  # usage errors: an unknown target, format, op or kind; outputs that cannot be written
        get_target(cfg.target, device=cfg.device, op_name=cfg.op_name)
        for d in cfg.dtypes or ():
            resolve_dtype(d)
        _check_outputs(args)
    except (ValueError, ImportError, AttributeError, OSError) as exc:
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = run_audit(cfg, progress=_Progress(_progress_enabled(args)))
    except AuditUsageError as exc:
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:  # an exactref bug: say so, with the traceback
        traceback.print_exc()
        print("exactref audit: internal error (an exactref bug: please report it)",
              file=sys.stderr)
        return EXIT_INTERNAL
    print(format_report(report, args.worst))
    if args.json_file:
        with open(args.json_file, "w") as fh:
            json.dump(report.to_json(), fh, indent=1)
    if args.plot:
        from ._plot import plot_report

        plot_report(report, args.plot)
    if report.interrupted:
        return EXIT_INTERRUPTED
    if not [g for g in report.groups if g.status != "unsupported"]:
        print("exactref audit: nothing audited: no group of these ops, formats and kinds runs "
              "on this target (every one was skipped or planned away); widen --dtypes, "
              "--kinds or --ops", file=sys.stderr)
        return EXIT_EMPTY
    return EXIT_FAIL if report.failed else EXIT_OK


def _check_outputs(args) -> None:
    """Fail before the audit runs when its outputs cannot be written."""
    import os

    for path in (args.json_file, args.plot):
        if path:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise OSError(f"cannot write {path!r}: the folder {folder!r} does not exist")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ImportError("--plot needs matplotlib: pip install 'exactref[plot]'") from None


# -------------------------------------------------------------------------------- diff
_FIELDS = ("status", "got_dtype", "expected_dtype", "cases", "exact", "covered", "max_ulps")


def diff_reports(old: dict, new: dict) -> tuple[list, bool]:
    """``(lines, worse)``: every group whose numerics changed between two audit reports, and
    whether any got worse (newly failing, fewer covered, a larger error)."""
    for r in (old, new):
        if not str(r.get("schema", "")).startswith("exactref.audit/"):
            raise ValueError("not an exactref audit report (no 'schema': exactref.audit/...)")
    a = {g["key"]: g for g in old["groups"]}
    b = {g["key"]: g for g in new["groups"]}
    lines, worse = [], False
    for key in sorted(set(a) | set(b)):
        if key not in b:
            lines.append(f"- {key}: only in the old report ({a[key]['status']})")
            continue
        if key not in a:
            lines.append(f"+ {key}: only in the new report ({b[key]['status']})")
            worse |= b[key]["status"] == "fail"
            continue
        changes = [f"{f} {a[key][f]} -> {b[key][f]}" for f in _FIELDS if a[key][f] != b[key][f]]
        if changes:
            lines.append(f"~ {key}: " + "; ".join(changes))
            old_cov = a[key]["covered"] / max(a[key]["cases"], 1)
            new_cov = b[key]["covered"] / max(b[key]["cases"], 1)
            worse |= (b[key]["status"] == "fail" and a[key]["status"] != "fail") or \
                new_cov < old_cov or b[key]["max_ulps"] > a[key]["max_ulps"]
    return lines, worse


def _run_diff(args) -> int:
    try:
        with open(args.old) as fh:
            old = json.load(fh)
        with open(args.new) as fh:
            new = json.load(fh)
        lines, worse = diff_reports(old, new)
    except (OSError, ValueError, KeyError) as exc:
        print(f"exactref diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    envs = [f"{k}: {old['environment'].get(k)} -> {new['environment'].get(k)}"
            for k in sorted(set(old["environment"]) | set(new["environment"]))
            if old["environment"].get(k) != new["environment"].get(k)]
    for e in envs:
        print(f"environment {e}")
    if not lines:
        print("no group's numerics changed")
        return EXIT_OK
    print("\n".join(lines))
    print(f"{len(lines)} groups changed" + ("; some got worse" if worse else ""))
    return EXIT_FAIL if worse else EXIT_OK
