"""``exactref audit`` and ``exactref diff``.

Exit codes follow pytest's: 0 every element covered, 1 violations, 2 interrupted, 3 internal
error, 4 usage error, 5 nothing audited.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback

from .._versions import UnmeasuredVersionWarning

__all__ = ["register", "format_report", "print_report", "diff_reports"]

EXIT_OK, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE, EXIT_EMPTY = range(6)


def register(sub) -> None:
    p = sub.add_parser(
        "audit", help="audit a library's add and multiply against exact references",
        description="Audit a real library's arithmetic against exact, once-rounded references. "
                    "Exit codes: 0 all covered, 1 violations, 2 interrupted, 3 internal error, "
                    "4 usage error, 5 nothing audited.")
    p.add_argument("target", nargs="?", default=None,
                   help="numpy (default), torch, jax, torchao (its MX and NVFP4 quantizers), "
                        "or module:function (with --op)")
    p.add_argument("--ops", default="add,multiply",
                   help="comma-separated ops of the registry (add, subtract, divide, sqrt, "
                        "maximum, ...; exactref.ops lists them), or all or a family ("
                        f"{', '.join(_families())}); torch also has bmm and baddbmm")
    p.add_argument("--op", dest="op_name", default=None,
                   help="the op a module:function target computes (any registered op; "
                        "--template OP prints a kernel file for it)")
    p.add_argument("--template", metavar="OP", default=None,
                   help="print a kernel file for OP (the call the audit makes: its operands, "
                        "its keywords, a correct numpy body) and exit")
    p.add_argument("--contract", dest="contract_file", metavar="FILE.toml", default=None,
                   help="the implementation's contract: a TOML file of contract fields "
                        "(compute, order, algorithm, flush, accuracy, params, ...; per-op "
                        "tables [ops.NAME]); over [tool.exactref] of the nearest "
                        "pyproject.toml")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="one contract field (repeatable): --set order=pairwise --set "
                        "params.eps=float32 --set ops.sum.order=sequential; over --contract")
    p.add_argument("--no-pyproject", action="store_true",
                   help="do not read [tool.exactref] of the nearest pyproject.toml")
    p.add_argument("--flush", default=None, choices=("inputs", "outputs", "both"),
                   help="the subnormals the implementation flushes to zero (TensorFlow, "
                        "XLA on CPU and GPUs in fast modes flush both); every op")
    p.add_argument("--accuracy", default=None,
                   help="the error of the function evaluations (exp, tanh, softmax's exp, "
                        "...): ulps of the compute format (0.5 to 2**40; 0.5 is correct "
                        "rounding), or a preset (glibc, sleef_u10, sleef_u35, cuda, "
                        "cuda_intrinsics, numpy, ...); default: the op's (a library: its "
                        "record's contract)")
    p.add_argument("--compute", default=None,
                   help="the format the implementation computes in, long ops' accumulators "
                        "included (default: the op's, float32 for the half formats)")
    p.add_argument("--format", dest="block_format", default=None,
                   help="--op quantize: the kernel's block format (mxfp8_e4m3, mxfp8_e5m2, "
                        "mxfp6_e3m2, mxfp6_e2m3, mxfp4, mxint8, nvfp4)")
    p.add_argument("--scale-rule", default=None,
                   help="--op quantize: the scale rule the kernel follows (mx: floor, ceil, "
                        "even, rceil; nvfp4: nearest, up), or any; default: the format's own")
    p.add_argument("--dtypes", default=None,
                   help="comma-separated formats (default: every one the target has)")
    p.add_argument("--kinds", default="same,mixed,zero_dim,scalar,params",
                   help="operand combinations: same,mixed,zero_dim,scalar,params (the ops' "
                        "parameters: alpha, rounding_mode, value, cast's target)")
    p.add_argument("--samples", type=int, default=256,
                   help="elements per group (default 256; counts whose memory would pass half "
                        "the machine's, at most 16 GiB, are refused)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="give up on a kernel call after this many seconds: the group fails and "
                        "the audit stops (default 300; 0: no limit)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu",
                   help="torch device (cpu, cuda); for a runtime, its device or execution "
                        "provider (onnxruntime: CPUExecutionProvider, ...; openvino: CPU, ...)")
    p.add_argument("--uncontracted", default="skip", metavar="{skip,exact}",
                   help="a library op whose record declares no contract for the library (no "
                        "equivalent, no Counterpart.contract): skip its groups, saying 'no "
                        "contract for numpy's cbrt' (default), or audit them against the "
                        "exact value rounded once (exact)")
    p.add_argument("--policy", default=None,
                   help="the promotion policy result dtypes must follow: torch, numpy, jax, "
                        "array_api, aclnn, kael (default: the target's own; torch for "
                        "module:function)")
    p.add_argument("--json", dest="json_file", metavar="FILE", help="write the report as JSON")
    p.add_argument("--plot", metavar="FILE",
                   help="write a PNG of the error histograms in ulps, a panel per op (needs "
                        "matplotlib: pip install 'exactref[plot]')")
    p.add_argument("--histogram", action="store_true",
                   help="print every bucket of the error histogram per op and result format "
                        "(default: the compact accuracy table)")
    p.add_argument("--worst", type=int, default=3, help="reproducers to print (default 3)")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    from ._exhaustive_cmd import add_options  # --exhaustive FORMAT and the sweep's options

    add_options(p)
    p.set_defaults(func=_run_audit)
    d = sub.add_parser("diff", help="compare two audit JSON reports")
    d.add_argument("old")
    d.add_argument("new")
    d.set_defaults(func=_run_diff)


def _families() -> tuple:
    from ..ops import FAMILIES

    return FAMILIES


# ---------------------------------------------------------------------------- progress
class _Progress:
    """The audit's progress on stderr: a rich progress bar (groups done, rate, time elapsed
    and left, the current group) where stderr is a terminal; nothing otherwise."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._bar = self._task = None

    def __call__(self, done, total, key):
        if not self.enabled:
            return
        if self._bar is None:
            self._start(total)
        self._bar.update(self._task, completed=done, key=key[:48])
        if done == total:
            self.close()

    def _start(self, total):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task):
                speed = task.finished_speed or task.speed
                return Text("" if speed is None else f"{speed:.1f} groups/s")

        self._bar = Progress(TextColumn("audit"), BarColumn(), MofNCompleteColumn(), Rate(),
                             TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                             TextColumn("{task.fields[key]}"),
                             console=Console(stderr=True), transient=False)
        self._task = self._bar.add_task("audit", total=total, key="")
        self._bar.start()

    def close(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _progress_enabled(args) -> bool:
    return not args.no_progress and sys.stderr.isatty() and not os.environ.get("CI")


# ------------------------------------------------------------------------------ output
def _pct(a, b) -> str:
    return f"{100.0 * a / b:.1f}" if b else "-"


def _ulps(v: float) -> str:
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf"
    return f"{v:.3g}"


#: The report table's columns; "tol ulps": the median and largest tolerance in ulps of the
#: result format (how strong the check was; hundreds or more: weak)
_HEADER = ["status", "op", "inputs -> result (expected/got)", "cases", "exact %", "covered %",
           "uncovered", "max ulps", "tol ulps med/max", "worst input"]


#: the table's headers in a terminal, on two lines where that saves width
_SHORT = {"inputs -> result (expected/got)": "inputs -> result\n(expected/got)",
          "exact %": "exact\n%", "covered %": "covered\n%", "uncovered": "un-\ncovered",
          "max ulps": "max\nulps", "tol ulps med/max": "tol ulps\nmed/max"}


def _sorted_groups(report):
    from ..audit import NO_CONTRACT

    order = {"fail": 0, "pass": 1, "rejected": 2, "unsupported": 3, NO_CONTRACT: 4}
    return sorted(report.groups, key=lambda g: (order[g.status], -g.uncovered, -g.max_ulps))


def _rows(groups) -> list:
    rows = []
    for g in groups:
        inputs = ", ".join(g.operands) + g.params_text.replace(" ", ", ")
        res = g.expected_dtype if g.expected_dtype == g.got_dtype else \
            f"{g.expected_dtype}/{g.got_dtype}"
        worst_in = ", ".join(g.worst["inputs"].values()) if g.worst else ""
        tol = f"{_ulps(g.tol_median_ulps)}/{_ulps(g.tol_max_ulps)}" if g.cases else ""
        rows.append([g.status.upper() if g.status == "fail" else g.status, g.op,
                     f"{inputs} -> {res}", str(g.cases), _pct(g.exact, g.cases),
                     _pct(g.covered, g.cases), str(g.uncovered), _max_ulps_cell(g), tol,
                     worst_in])
    return rows


def _max_ulps_cell(g) -> str:
    """The largest distance outside the allowed band; a wrong sign of zero, which no
    distance says, as ``-0/+0``."""
    if not g.uncovered:
        return "0"
    if g.worst.get("wrong_sign_of_zero"):
        return "-0/+0"
    return f"{g.max_ulps:g}"


# ---------------------------------------------------------------------------- accuracy
#: The accuracy table's columns: per op and result format, the distance of the outputs from
#: the exact rounding in ulps of the result format (exactref.audit._histogram)
_ACC_HEADER = ["op", "result", "groups", "cases", "exact %", "<=0.5 ulp %", "max error ulps",
               "nonfinite"]
#: its headers in a terminal, on two lines
_ACC_SHORT = {"exact %": "exact\n%", "<=0.5 ulp %": "<=0.5\nulp %",
              "max error ulps": "max error\nulps"}


def _acc_title(full: bool) -> str:
    return ("accuracy (distance from the exact rounding, in ulps of the result format" +
            (")" if full else "; --histogram: every bucket)"))


def _share(a, b) -> str:
    """A percentage that says 100.0 only when it is all of them."""
    text = _pct(a, b)
    return ">99.9" if text == "100.0" and a < b else text


def _hist_header() -> list:
    from ..audit import BUCKETS

    return ["op", "result", "cases", *BUCKETS, "max error ulps"]


def _acc_order(h):
    """Worst first: the largest error, then non-finite mismatches, then the fewest exact."""
    return (-h.max_ulps, -h.nonfinite, h.exact / max(h.cases, 1))


def _accuracy_rows(report, full: bool) -> list:
    """The accuracy table's rows: per op (in the audit's order), its inexact result formats
    worst first, then one row for the formats whose outputs were all exact. ``full``: every
    bucket of every (op, result format), as :func:`_hist_header` names them."""
    by_op: dict = {}
    for op, dt, n, h in report.accuracy():
        by_op.setdefault(op, []).append((dt, n, h))
    rows = []
    for op, entries in by_op.items():
        entries.sort(key=lambda e: _acc_order(e[2]))
        if full:
            rows += [[op, dt, str(h.cases), *[str(c) if c else "." for c in h.counts],
                      _ulps(h.max_ulps)] for dt, n, h in entries]
            continue
        exact = [e for e in entries if e[2].exact == e[2].cases]
        shown = entries if len(exact) < 2 else [e for e in entries if e not in exact]
        for dt, n, h in shown:
            rows.append([op, dt, str(n), str(h.cases), _share(h.exact, h.cases),
                         _share(h.within_half, h.cases), _ulps(h.max_ulps), str(h.nonfinite)])
        if len(exact) >= 2:
            label = f"the other {len(exact)} formats" if shown else f"all {len(exact)} formats"
            cases = sum(h.cases for _, _, h in exact)
            rows.append([op, label, str(sum(n for _, n, _ in exact)), str(cases), "100.0",
                         "100.0", "0", "0"])
    return rows


def _plain_table(header, rows) -> list:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [header, *rows]]


def _accuracy_lines(report, full: bool) -> list:
    """The accuracy table as plain text (nothing when no group compared outputs)."""
    rows = _accuracy_rows(report, full)
    if not rows:
        return []
    header = _hist_header() if full else _ACC_HEADER
    return ["", _acc_title(full)] + _plain_table(header, rows)


def _head_lines(report) -> list:
    env = report.environment
    cfg = report.config
    return [f"exactref audit {env['target']}: seed {cfg.seed}, {cfg.samples} samples per group, "
            f"device {env['device']}",
            "versions: " + ", ".join(f"{k} {v}" for k, v in env.items()
                                     if k not in ("target", "device", "platform"))]


def _tail_lines(report, groups, worst) -> list:
    lines = []
    failed = [g for g in groups if g.status == "fail"]
    for g in failed[:worst]:
        lines.append("")
        lines.append(f"FAILED {g.key}: {g.message or ''}".rstrip())
        if getattr(g, "explained", ""):  # er.explain: what would cover the outputs
            lines.append(f"  explain: {g.explained}")
        if getattr(g, "contract", None):
            lines.append("  under the contract: " + ", ".join(f"{k}={v!r}" for k, v in
                                                              g.contract.items()))
        if g.worst:
            w = g.worst
            where = ", ".join(f"{k} = {v}" for k, v in w["inputs"].items())
            lines.append(f"  worst at index {tuple(w['index'])}: {where}")
            if "detail" in w:  # a quantizer's: codes and block scales, not ulps
                lines.append(f"  {w['detail']}")
            else:
                outside = "a wrong sign of zero" if w.get("wrong_sign_of_zero") else \
                    f"{w['ulps']:g} ulp outside"
                lines.append(f"  got {w['actual']}, allowed [{w['allowed'][0]}, "
                             f"{w['allowed'][1]}], exact rounding {w['expected']} "
                             f"({outside})")
            lines.append("  reproducer:")
            lines += ["    " + ln for ln in w["reproducer"].splitlines()]
    skipped = report.skipped
    lines += _no_contract_lines(groups)
    lines.append("")
    if report.stopped:
        lines.append(f"{'INTERRUPTED' if report.interrupted else 'STOPPED'}: "
                     f"{report.stopped}, after {len(report.groups)} of {report.planned} groups; "
                     f"the counts below are of those only")
    tail = f", {skipped} skipped" if skipped else ""
    cut = (f" (interrupted: {len(report.groups)} of {report.planned} groups run)"
           if report.interrupted else "")
    lines.append(f"{report.passed} passed, {report.failed} failed{tail}{cut}")
    return lines


def _no_contract_lines(groups) -> list:
    """One line per op whose groups were skipped for want of a contract: the reason, and the
    option that audits them against the exact value."""
    from ..audit import NO_CONTRACT

    skipped: dict = {}
    for g in groups:
        if g.status == NO_CONTRACT:
            skipped.setdefault(g.op, [g.message, 0])[1] += 1
    return [""] + [f"SKIPPED {op} ({n} groups): {message}" for op, (message, n) in
                   skipped.items()] if skipped else []


def format_report(report, worst: int = 3, histogram: bool = False) -> str:
    """The human-readable audit report as plain text: header, table sorted worst first (with
    each group's tolerance median and largest in ulps: how strong its check was), the accuracy
    table per op and result format (``histogram``: with every bucket), reproducers, and the
    closing ``N passed, M failed`` line."""
    groups = _sorted_groups(report)
    lines = _head_lines(report) + [""] + _plain_table(_HEADER, _rows(groups))
    lines += _accuracy_lines(report, histogram)
    return "\n".join(lines + _tail_lines(report, groups, worst))


def _rich_accuracy(report):
    """The compact accuracy table for a terminal (None when no group compared outputs)."""
    from rich.table import Table

    rows = _accuracy_rows(report, full=False)
    if not rows:
        return None
    table = Table(box=None, pad_edge=False, header_style="bold")
    for i, name in enumerate(_ACC_HEADER):
        table.add_column(_ACC_SHORT.get(name, name), justify="left" if i < 2 else "right",
                         overflow="fold", no_wrap=i >= 2, min_width=12 if i == 1 else None)
    for row in rows:
        table.add_row(*row)
    return table


def print_report(report, worst: int = 3, file=None, histogram: bool = False) -> None:
    """Print the report: as :func:`format_report`'s plain text where ``file`` (stdout) is not a
    terminal, else with rich tables that fit the terminal's width."""
    file = sys.stdout if file is None else file
    if not file.isatty():
        print(format_report(report, worst, histogram), file=file)
        return
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is a dependency
        print(format_report(report, worst, histogram), file=file)
        return
    console = Console(file=file)
    groups = _sorted_groups(report)
    rows = _rows(groups)
    table = Table(box=None, pad_edge=False, header_style="bold")
    wide = ("inputs -> result (expected/got)", "worst input")
    keep = [i for i, name in enumerate(_HEADER) if name != "worst input"
            or any(r[i] for r in rows)]  # no column of blanks where nothing failed
    for i in keep:
        name = _HEADER[i]
        # the two wide columns fold to fit the terminal; the short ones never wrap, under
        # headers of two lines
        table.add_column(_SHORT.get(name, name),
                         justify="left" if name in wide or i < 2 else "right",
                         overflow="fold", no_wrap=name not in wide,
                         min_width=16 if name in wide else None)
    for row in rows:
        table.add_row(*[row[i] for i in keep], style="red" if row[0] == "FAIL" else None)
    for line in _head_lines(report):
        console.print(line, highlight=False, markup=False)
    console.print()
    console.print(table)
    if histogram:  # wider than most terminals: as plain text, whole rows (the terminal wraps)
        for line in _accuracy_lines(report, True):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    elif (accuracy := _rich_accuracy(report)) is not None:
        console.print()
        console.print(_acc_title(False), highlight=False, markup=False)
        console.print(accuracy)
    for line in _tail_lines(report, groups, worst):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _run_audit(args) -> int:
    from .._formats import dtype as resolve_dtype
    from ..audit import RUNTIMES, AuditConfig, AuditUsageError, get_target, run_audit

    if args.template is not None:
        return _print_template(args)
    from ._exhaustive_cmd import dispatch

    swept = dispatch(args)  # --exhaustive FORMAT: every input of the format
    if swept is not None:
        return swept
    if args.target is None:
        args.target = "numpy"
    try:  # usage errors: an unknown target, format, op or kind; outputs that cannot be written
        ops = _list_option("--ops", args.ops, "ops of the registry (add,multiply), or all, "
                                              "arithmetic, linalg")
        kinds = _list_option("--kinds", args.kinds, "group kinds (same,mixed,zero_dim,scalar,"
                                                    "params)")
        dtypes = None if args.dtypes is None else _list_option(
            "--dtypes", args.dtypes, "formats (float16,bfloat16); leave --dtypes out for every "
                                     "format the target has")
        cfg = AuditConfig(
            target=args.target, ops=ops, dtypes=dtypes, samples=args.samples, seed=args.seed,
            kinds=kinds, device=args.device, op_name=args.op_name, exitfirst=args.exitfirst,
            policy=args.policy, accuracy=args.accuracy, compute=args.compute,
            block_format=args.block_format, scale_rule=args.scale_rule,
            uncontracted=args.uncontracted, **_contracts(args),
            **({} if args.timeout is None else {"timeout": args.timeout}))
        if cfg.device != "cpu" and cfg.target not in ("torch", *RUNTIMES):
            raise ValueError(f"--device {cfg.device} applies to the torch target and the "
                             f"runtimes' ({', '.join(RUNTIMES)}) only ({cfg.target} computes "
                             f"where its library puts it); leave it out, or audit those")
        target = get_target(cfg.target, device=cfg.device, op_name=cfg.op_name)
        for d in cfg.dtypes or ():
            resolve_dtype(d)
        _check_outputs(args)
    except (ValueError, ImportError, AttributeError, OSError) as exc:
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from ..audit import NO_CONTRACT

    progress = _Progress(_progress_enabled(args))
    try:
        report = run_audit(cfg, progress=progress)
    except AuditUsageError as exc:
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UnmeasuredVersionWarning as exc:  # made an error (CI's strict run): no exactref bug
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except Exception:  # an exactref bug: say so, with the traceback
        progress.close()
        traceback.print_exc()
        print("exactref audit: internal error (an exactref bug: please report it)",
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        progress.close()
    with stdout_guard():  # a reader that went away (| head) loses the rest, not the JSON
        print_report(report, args.worst, histogram=args.histogram)
    if args.json_file:
        with open(args.json_file, "w") as fh:
            json.dump(report.to_json(), fh, indent=1)
    if args.plot:
        from ._plot import plot_report

        plot_report(report, args.plot)
    if report.interrupted:
        return EXIT_INTERRUPTED
    if not [g for g in report.groups if g.status not in ("unsupported", NO_CONTRACT)]:
        why = (" (--uncontracted exact audits the ops without a contract against the exact "
               "value)" if report.uncontracted else "")
        print(f"exactref audit: nothing audited: no group of these ops, formats and kinds runs "
              f"on this target (every one was skipped or planned away){why}; widen --dtypes, "
              f"--kinds or --ops{target.formats_hint(ops)}", file=sys.stderr)
        return EXIT_EMPTY
    return EXIT_FAIL if report.failed else EXIT_OK


def _contracts(args) -> dict:
    """AuditConfig's ``contract`` (``--contract``, then each ``--set``, then ``--flush``;
    ``--compute``, ``--accuracy`` and ``--scale-rule`` win as its own fields) and
    ``ambient`` (``[tool.exactref]`` of the nearest pyproject.toml: its fields apply to the
    ops that have them, where an explicit option an op cannot honour is refused)."""
    from ..audit import build_contract

    return {"contract": build_contract(file=args.contract_file, sets=args.sets,
                                       flush=args.flush),
            "ambient": None if args.no_pyproject else build_contract(pyproject=".")}


def _print_template(args) -> int:
    """``exactref audit --template OP``: a kernel file for OP, on stdout."""
    from ..audit import AuditUsageError, template

    try:
        text = template(args.template)
    except (AuditUsageError, ValueError) as exc:
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with stdout_guard():
        print(text, end="")
    return EXIT_OK


def _list_option(option: str, text: str, what: str) -> tuple:
    """A comma-separated option's items; an empty list is a usage error (``--dtypes ""`` is
    not "every format", ``--ops ""`` not "nothing to audit")."""
    items = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    if not items:
        raise ValueError(f"{option} {text!r} names nothing; expected a comma-separated list of "
                         f"{what}")
    return items


def _check_outputs(args) -> None:
    """Fail before the audit runs when its outputs cannot be written: a directory, a folder
    that does not exist or cannot be written, a file that cannot be replaced, a --plot name
    without an image extension matplotlib writes, or the same file for both."""
    for option, path in (("--json", args.json_file), ("--plot", args.plot)):
        if path is None:
            continue
        if not path:
            raise ValueError(f"{option} '' names no file; expected a file name such as "
                             f"{'audit.json' if option == '--json' else 'audit.png'!r}")
        if os.path.isdir(path):
            name = os.path.join(path, "audit.json" if option == "--json" else "audit.png")
            raise ValueError(f"{option} {path!r} is a directory, not a file; expected a file "
                             f"name such as {name!r}")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ValueError(f"{option} {path!r}: the folder {folder!r} does not exist; create "
                             f"it first, or write to an existing folder")
        if not os.access(folder, os.W_OK | os.X_OK) or (
                os.path.exists(path) and not os.access(path, os.W_OK)):
            raise ValueError(f"{option} {path!r} cannot be written (no permission); choose a "
                             f"file in a folder you can write to")
    if args.json_file and args.plot and os.path.abspath(args.json_file) == os.path.abspath(
            args.plot):
        raise ValueError(f"--json and --plot name the same file {args.plot!r}; give each its "
                         f"own")
    if args.plot:  # before the audit, not after minutes of it
        from ._plot import plot_formats, require_matplotlib

        require_matplotlib()
        ext = os.path.splitext(args.plot)[1].lower().lstrip(".")
        known = plot_formats()
        if ext not in known:
            found = f"the extension .{ext}" if ext else "no extension"
            raise ValueError(f"--plot {args.plot!r} has {found}; expected an image file "
                             f"matplotlib writes: .{', .'.join(sorted(known))} (e.g. audit.png)")


# -------------------------------------------------------------------------------- diff
_FIELDS = ("status", "got_dtype", "expected_dtype", "cases", "exact", "covered", "max_ulps")


def diff_reports(old: dict, new: dict) -> tuple[list, bool]:
    """``(lines, worse)``: every group whose numerics changed between two audit reports, and
    whether any got worse (newly failing, fewer covered, a larger error outside the allowed
    band or from the exact rounding; the latter where both reports have it, schema /3)."""
    for name, r in (("the old report", old), ("the new report", new)):
        if not isinstance(r, dict):
            raise ValueError(f"{name} is a JSON {type(r).__name__}, not an exactref audit "
                             f"report (an object with 'schema': 'exactref.audit/...'); pass the "
                             f"files written by exactref audit --json")
        if not str(r.get("schema", "")).startswith("exactref.audit/"):
            raise ValueError(f"{name} is not an exactref audit report (no 'schema': "
                             f"exactref.audit/...); pass the files written by exactref audit "
                             f"--json")
        groups = r.get("groups")
        if not isinstance(groups, list) or not all(
                isinstance(g, dict) and "key" in g for g in groups):
            raise ValueError(f"{name} has no list of groups with keys; it is not a complete "
                             f"audit report (rerun exactref audit --json)")
        if not isinstance(r.get("environment", {}), dict):
            raise ValueError(f"{name}'s 'environment' is not an object")
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
        # the distance from the exact rounding (schema /3 on): where both reports measured it
        err_old, err_new = a[key].get("max_error_ulps"), b[key].get("max_error_ulps")
        measured = None not in (err_old, err_new)
        if measured and err_old != err_new:
            changes.append(f"max_error_ulps {err_old} -> {err_new}")
        if changes:
            lines.append(f"~ {key}: " + "; ".join(changes))
            old_cov = a[key]["covered"] / max(a[key]["cases"], 1)
            new_cov = b[key]["covered"] / max(b[key]["cases"], 1)
            worse |= (b[key]["status"] == "fail" and a[key]["status"] != "fail") or \
                new_cov < old_cov or b[key]["max_ulps"] > a[key]["max_ulps"] or \
                (measured and err_new > err_old)
    return lines, worse


def _load_report(path):
    """The JSON in ``path``; a ValueError naming the file when it holds none."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise OSError(f"cannot open {path!r} ({exc.strerror or exc}); pass the files written "
                      f"by exactref audit --json") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path!r} is not JSON ({exc}); pass the files written by exactref "
                         f"audit --json") from None


def _run_diff(args) -> int:
    try:
        old, new = _load_report(args.old), _load_report(args.new)
        lines, worse = diff_reports(old, new)
    except (OSError, ValueError) as exc:
        print(f"exactref diff: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (KeyError, TypeError) as exc:  # a group without a field of the schema
        print(f"exactref diff: error: a group lacks the field {exc} of the audit report's "
              f"schema; compare reports written by the same exactref version", file=sys.stderr)
        return EXIT_USAGE
    out = config_differences(old, new)
    if lines:
        out += lines + [f"{len(lines)} groups changed" + ("; some got worse" if worse else "")]
    else:
        out.append("no group's numerics changed")
    with stdout_guard():
        print("\n".join(out))
    return EXIT_FAIL if worse else EXIT_OK


#: The configuration's fields that change what a run audits (its inputs, formats, models);
#: the others (``exitfirst``, ``timeout``) do not.
_CONFIG_FIELDS = ("target", "ops", "op_name", "dtypes", "kinds", "samples", "seed", "device",
                  "policy", "accuracy", "compute", "block_format", "scale_rule",
                  "uncontracted", "contract")


#: The fields added to the configuration since schema /3, and the value older reports ran with
_CONFIG_DEFAULTS = {"uncontracted": "skip", "contract": {}}


def _show(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={w}" for k, w in v.items()) or "(none)"
    if isinstance(v, list):
        return ",".join(map(str, v)) or "(none)"
    return "(default)" if v is None else str(v)


def config_differences(old: dict, new: dict) -> list:
    """The lines ``exactref diff`` prints first where two runs differ in what they audited
    (seed, samples, formats, ...) or where (versions, platform): a changed group may then
    come from other inputs or another library, not a change of numerics alone."""
    lines = []
    a, b = old.get("config") or {}, new.get("config") or {}
    a = {**_CONFIG_DEFAULTS, **a}  # a report from before a field existed ran its default
    b = {**_CONFIG_DEFAULTS, **b}
    cfg = [f"{k} {_show(a.get(k))} -> {_show(b.get(k))}" for k in _CONFIG_FIELDS
           if a.get(k) != b.get(k) and (k in a or k in b)]
    if cfg:
        lines.append("the runs' configurations differ: " + "; ".join(cfg) + " (their groups "
                     "ran on other inputs or formats: a change below may come from that, not "
                     "from the numerics; rerun both with the same options to compare)")
    old_env, new_env = old.get("environment") or {}, new.get("environment") or {}
    env = [f"{k} {old_env.get(k)} -> {new_env.get(k)}"
           for k in sorted(set(old_env) | set(new_env)) if old_env.get(k) != new_env.get(k)]
    if env:
        lines.append("the runs' environments differ: " + "; ".join(env))
    for name, r in (("old", old), ("new", new)):
        if r.get("stopped") or r.get("interrupted"):
            why = r.get("stopped") or "interrupted"
            lines.append(f"the {name} run stopped early ({why}): it ran "
                         f"{r.get('groups_run', len(r.get('groups', [])))} of "
                         f"{r.get('groups_planned', '?')} groups, so groups only in the other "
                         f"are missing from it, not removed")
    return lines


@contextlib.contextmanager
def stdout_guard():
    """Printing to a reader that went away (``exactref diff a b | head``): the rest of the
    output is dropped silently instead of a BrokenPipeError traceback."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        from . import stdout_closed

        stdout_closed()
