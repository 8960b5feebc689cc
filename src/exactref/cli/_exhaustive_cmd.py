"""``exactref audit MODULE:FN --op OP --exhaustive FORMAT``: every input of a format.

The command line's side of :func:`exactref.audit.exhaustive`: the options, the workers (the
command line is the user's explicit ask: ``--workers`` processes, the CPUs by default, started
with spawn; or a Dask cluster with ``--scheduler``), a progress bar with the rate and the time
left on stderr (where it is a terminal, or with ``--progress``), the report on stdout and
``--json``. Exit codes as the audit's: 0 every input covered, 1 inputs not covered or a kernel
that failed on an input, 2 interrupted (the state file, if any, holds what ran), 3 internal
error, 4 usage error.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

__all__ = ["add_options", "dispatch", "NOT_FOR_SWEEPS"]

EXIT_OK, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE = range(5)

#: The audit's options a sweep has no use for (every input runs, the kernel's own format):
#: given with --exhaustive they are refused, not ignored
NOT_FOR_SWEEPS = (("ops", "--ops"), ("dtypes", "--dtypes"), ("kinds", "--kinds"),
                  ("samples", "--samples"), ("seed", "--seed"), ("device", "--device"),
                  ("policy", "--policy"), ("uncontracted", "--uncontracted"),
                  ("plot", "--plot"), ("histogram", "--histogram"), ("worst", "--worst"),
                  ("exitfirst", "-x"), ("block_format", "--format"),
                  ("scale_rule", "--scale-rule"), ("timeout", "--timeout"))
#: The sweep's own options: given without --exhaustive they are refused
_SWEEP_ONLY = (("scheduler", "--scheduler"), ("workers", "--workers"), ("state", "--state"),
               ("slice", "--slice"), ("chunk", "--chunk"), ("top", "--top"),
               ("progress", "--progress"))


def add_options(p) -> None:
    """The sweep's options on the audit's parser."""
    g = p.add_argument_group(
        "exhaustive sweeps", "every input of a format through a module:function kernel: "
        "exactref audit numpy:exp --op exp --exhaustive float16")
    g.add_argument("--exhaustive", metavar="FORMAT", default=None,
                   help="run every input of FORMAT (2**8 for the 8-bit formats, 2**16 for "
                        "float16 and bfloat16, 2**32 for float32; every pair for a binary op "
                        "of an 8-bit format) and report the inputs not covered, the largest "
                        "distance from the exact rounding, the worst inputs and the histogram")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the chunks on Dask: a dask.distributed scheduler's address "
                        "(tcp://host:8786), or local (a LocalCluster of --workers processes); "
                        "needs pip install 'exactref[dask]'")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (spawned; default: the CPUs; 1: this process) or "
                        "the LocalCluster's workers with --scheduler local")
    g.add_argument("--state", metavar="FILE", default=None,
                   help="save progress to FILE and resume from it: run the same command again "
                        "after an interruption")
    g.add_argument("--slice", metavar="START:STOP", default=None,
                   help="only the bit patterns START to STOP-1 (0x3f800000:0x3f810000); a "
                        "binary sweep's pattern is x_bits * 2**bits + y_bits")
    g.add_argument("--chunk", type=int, default=None, metavar="N",
                   help="inputs per call of the kernel (default 65536)")
    g.add_argument("--top", type=int, default=None, metavar="K",
                   help="worst inputs to report (default 10)")
    g.add_argument("--progress", action="store_true",
                   help="show the progress bar even where stderr is no terminal")
    p.set_defaults(sweep_defaults={dest: p.get_default(dest) for dest, _ in NOT_FOR_SWEEPS})


def dispatch(args):
    """The sweep's exit code where ``args`` ask for one (``--exhaustive``), a usage error where
    a sweep's option comes without it, else None (the audit runs)."""
    if args.exhaustive is None:
        given = [opt for dest, opt in _SWEEP_ONLY if getattr(args, dest, None) not in
                 (None, False)]
        if not given:
            return None
        print(f"exactref audit: error: {', '.join(given)} applies to exhaustive sweeps only; "
              f"add --exhaustive FORMAT (exactref audit MODULE:FN --op OP --exhaustive "
              f"float16), or leave {given[0]} out", file=sys.stderr)
        return EXIT_USAGE
    return _run(args)


def _refuse(args) -> None:
    defaults = getattr(args, "sweep_defaults", {})
    for dest, opt in NOT_FOR_SWEEPS:
        if dest in defaults and getattr(args, dest) != defaults[dest]:
            why = ("every input of the format runs" if dest in ("samples", "seed", "kinds",
                                                                "dtypes", "ops")
                   else "a sweep does not use it")
            raise ValueError(f"{opt} does not apply to --exhaustive ({why}); leave it out "
                             f"(the sweep's options: --scheduler, --workers, --state, --slice, "
                             f"--chunk, --top)")
    if args.target is None or ":" not in args.target:
        target = args.target or "numpy"
        raise ValueError(f"--exhaustive runs a module:function kernel; {target!r} is a library "
                         f"target. Pass the kernel as module:function with --op (exactref audit "
                         f"numpy:exp --op exp --exhaustive float16)")
    if args.op_name is None:
        raise ValueError(f"--exhaustive needs --op with the operation {args.target} computes "
                         f"(exactref audit {args.target} --op exp --exhaustive float16)")
    if args.chunk is not None and args.chunk < 1:
        raise ValueError(f"--chunk {args.chunk}: expected a number of inputs per call of the "
                         f"kernel >= 1 (default 65536)")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers {args.workers}: expected a number of processes >= 1")
    if args.workers is not None and args.scheduler not in (None, "local"):
        raise ValueError(f"--workers sets this machine's processes or a LocalCluster's; with "
                         f"--scheduler {args.scheduler} the workers are the cluster's: leave "
                         f"--workers out")


def _contract(args):
    """The sweep's contract: [tool.exactref], --contract, --set, --flush, then --compute and
    --accuracy winning (as the audit merges them)."""
    from ..audit import sweep_contract
    from ._audit import _contracts

    parts = _contracts(args)
    return sweep_contract(parts["contract"], ambient=parts["ambient"], compute=args.compute,
                          accuracy=args.accuracy)


class _Bar:
    """A rich progress bar on stderr: inputs done of all, inputs/s, time elapsed and left."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._bar = self._task = None

    def __call__(self, done, total):
        if not self.enabled:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("sweep"), BarColumn(), TaskProgressColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                                 TimeElapsedColumn(), TextColumn("left"),
                                 TimeRemainingColumn(), console=Console(stderr=True))
            self._task = self._bar.add_task("sweep", total=total, completed=done, rate="")
            self._bar.start()
            return
        task = self._bar.tasks[0]
        speed = task.speed
        self._bar.update(self._task, completed=done,
                         rate="" if speed is None else f"{speed:,.0f} inputs/s")

    def close(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _executor(args, inputs: int):
    """The command line's workers without --scheduler: ``--workers`` spawned processes (the
    CPUs by default), no more than there are chunks; None (this process) for one."""
    n = args.workers if args.workers is not None else _cpus()
    import inspect

    from ..audit import exhaustive

    chunk = args.chunk or inspect.signature(exhaustive).parameters["chunk"].default
    n = min(n, -(-inputs // chunk))
    if n <= 1:
        return None
    import concurrent.futures
    import multiprocessing

    return concurrent.futures.ProcessPoolExecutor(
        max_workers=n, mp_context=multiprocessing.get_context("spawn"),
        initializer=_ignore_interrupts)


def _cpus() -> int:
    """The CPUs this process may use (``--workers``' default)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _ignore_interrupts() -> None:
    """In a worker process: Ctrl-C (sent to the terminal's whole process group) is the main
    process's to handle (it stops the sweep and saves the state); the worker finishes its
    chunk and is shut down."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(args) -> int:
    from ..audit import ExhaustiveError, KernelInputError, exhaustive, sweep_size
    from ._audit import _check_outputs, stdout_guard

    try:
        _refuse(args)
        contract = _contract(args)
        _check_outputs(args)
        kwargs = {"contract": contract, "state": args.state, "slice": args.slice}
        if args.chunk is not None:
            kwargs["chunk"] = args.chunk
        if args.top is not None:
            kwargs["top"] = args.top
        if args.scheduler is not None:
            kwargs["scheduler"] = args.scheduler
            if args.scheduler == "local":
                kwargs["workers"] = args.workers or _cpus()
        # the op, format and slice checked before any worker starts
        inputs = sweep_size(args.op_name, args.exhaustive, args.slice)
    except (ValueError, ImportError, OSError) as exc:
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    on = args.progress or (not args.no_progress and sys.stderr.isatty()
                           and not os.environ.get("CI"))
    bar = _Bar(on)
    executor = None
    try:
        executor = _executor(args, inputs) if args.scheduler is None else None
        report = exhaustive(args.target, args.op_name, args.exhaustive, executor=executor,
                            progress=bar, **kwargs)
    except (ExhaustiveError, ImportError) as exc:
        bar.close()
        print(f"exactref audit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KernelInputError as exc:
        bar.close()
        saved = f" (what ran is saved in {args.state})" if args.state else ""
        print(f"exactref audit: FAIL: {exc}{saved}", file=sys.stderr)
        return EXIT_FAIL
    except Exception:  # an exactref bug: say so, with the traceback
        bar.close()
        traceback.print_exc()
        print("exactref audit: internal error (an exactref bug: please report it)",
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        bar.close()
        if executor is not None:
            executor.shutdown(cancel_futures=True)
    with stdout_guard():
        print(report.render())
    if args.json_file:
        with open(args.json_file, "w") as fh:
            json.dump(report.to_dict(), fh, indent=1)
    if report.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if report.passed else EXIT_FAIL
