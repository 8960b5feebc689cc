"""Replay the reproducers of an audit report, each in a fresh Python: does every reported
deviation reproduce where a maintainer would paste it?

A failing group's reproducer (``worst["reproducer"]``) is a script that builds the library's
call on the failing inputs, computes the reference and exits 1 where the output is not covered
(:data:`exactref.audit._targets._CHECK_LINES`). :func:`replay_reproducers` runs each in its own
Python process, the script on its standard input (nothing of this process reaches it: it is
what a paste into a new interpreter sees) and returns the groups where it did not exit 1.

>>> replay_reproducers({"groups": [{"status": "pass"}]})
[]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

__all__ = ["replay_reproducers"]


def _groups(report) -> list:
    if isinstance(report, (str, os.PathLike)):
        try:
            with open(report) as f:
                report = json.load(f)
        except OSError as e:
            raise ValueError(f"replay_reproducers({os.fspath(report)!r}): expected the JSON "
                             f"file that 'exactref audit ... --json PATH' writes, but it cannot "
                             f"be read ({e.strerror}); pass that path, or the AuditReport "
                             f"itself") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"replay_reproducers({os.fspath(report)!r}): expected the JSON "
                             f"of an audit report (from --json), but the file is not JSON "
                             f"({e.msg} at line {e.lineno}); pass the file --json wrote") from None
    if hasattr(report, "to_json"):  # an AuditReport
        report = report.to_json()
    if not isinstance(report, dict) or not isinstance(report.get("groups"), list):
        raise ValueError(f"expected an audit report (an AuditReport, its to_json(), or the path "
                         f"of the JSON that --json writes), got {type(report).__name__}")
    return report["groups"]


def replay_reproducers(report, *, timeout: float = 120.0, python: str | None = None) -> list:
    """The failing groups of ``report`` whose reproducer did not reproduce, each as
    ``{"group": key, "exit": code, "output": tail}`` (``[]``: every one reproduced). A group
    that fails without a reproducer (a raised kernel, a wrong result dtype) is not replayed.
    ``python``: the interpreter to run them with (default: this one)."""
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout={timeout!r}: expected a number of seconds > 0")
    out = []
    for g in _groups(report):
        script = (g.get("worst") or {}).get("reproducer") if g.get("status") == "fail" else None
        if not script:
            continue
        key = g.get("key") or f"{g.get('op')} {g.get('inputs')}"
        try:
            # on standard input: a reproducer of a long row can pass the 128 KiB a single
            # command-line argument may take
            done = subprocess.run([python or sys.executable, "-"], input=script,
                                  capture_output=True, text=True, timeout=timeout,
                                  cwd=os.getcwd())
        except subprocess.TimeoutExpired:
            out.append({"group": key, "exit": None, "output": f"timed out after {timeout:g} s"})
            continue
        if done.returncode != 1:
            tail = (done.stdout + done.stderr)[-600:]
            out.append({"group": key, "exit": done.returncode, "output": tail})
    return out
