"""docs/audit.md says what the audit does: the exact call each op's custom kernel receives
(compared with the calls a recording kernel gets), and the numbers of
``exactref audit numpy --ops arithmetic`` (compared with a run, under --run-slow)."""

from __future__ import annotations

import pathlib
import re

import pytest

from exactref.audit import AuditConfig, AuditUsageError, run_audit
from exactref.audit._calls import describe_call
from exactref.ops import all_ops

DOC = pathlib.Path(__file__).parents[2] / "docs" / "audit.md"
CALLS: list = []


def recording_kernel(*args, **kwargs):
    """Records the call it receives, then says it has no kernel (the group is unsupported)."""
    CALLS.append(describe_call("fn", args, kwargs))
    raise NotImplementedError("recording the call only")


def _calls_of(op) -> list:
    CALLS.clear()
    kw = {"block_format": "mxfp8_e4m3"} if op.plan == "blocks" else {}
    try:
        run_audit(AuditConfig(target=f"{__name__}:recording_kernel", op_name=op.name,
                              ops=(op.name,), dtypes=("float32",), **kw))
    except AuditUsageError:  # no group for such a kernel
        return []
    return list(dict.fromkeys(CALLS))


def recorded_table() -> list:
    """The calls table as the audit makes the calls now: ops with the same calls share a
    row, in the registry's order."""
    rows: dict = {}
    for op in all_ops():
        rows.setdefault(tuple(_calls_of(op)), []).append(op.name)
    return [f"| {', '.join(f'`{n}`' for n in names)} | "
            f"{'; '.join(f'`{c}`' for c in calls) if calls else 'none: a usage error (no group)'} |"
            for calls, names in rows.items()]


def _doc_section(title) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_the_documented_calls_are_the_calls_made(monkeypatch):
    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).parent))
    section = _doc_section("## The call a kernel receives")
    documented = [ln for ln in section.splitlines() if ln.startswith("| `")]
    recorded = recorded_table()
    assert documented == recorded, "docs/audit.md's table should read:\n" + "\n".join(recorded)


def _doc_counts() -> dict:
    """Per op, (passed, failed) as docs/audit.md's arithmetic table gives them."""
    section = _doc_section("## What `exactref audit numpy --ops arithmetic` finds")
    out = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)`[^|]*\| (\d+) \| (\d+) \|", line)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def test_the_arithmetic_table_adds_up():
    counts = _doc_counts()
    assert len(counts) >= 20, counts
    failed = sum(f for _, f in counts.values())
    section = _doc_section("## What `exactref audit numpy --ops arithmetic` finds")
    m = re.search(r"The (\d+) failing groups", section)
    quoted = int(m.group(1)) if m else 0
    assert quoted == failed, f"the table sums to {failed} failing groups, the text says {quoted}"
    total = re.search(r"\*\*(\d+) passed, (\d+) failed\*\*", section)
    assert total and (int(total.group(1)), int(total.group(2))) == (
        sum(p for p, _ in counts.values()), failed)


@pytest.mark.slow
def test_the_arithmetic_table_is_what_the_run_gives():
    import warnings

    import ml_dtypes
    import numpy as np

    import exactref

    if not (ml_dtypes.__version__.startswith("0.7.") and np.__version__.startswith("2.4.")):
        pytest.skip(f"docs/audit.md quotes the run with numpy 2.4 and ml_dtypes 0.7; here "
                    f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}")
    with warnings.catch_warnings():  # the casts measured on 0.6 only: the table says so
        warnings.simplefilter("ignore", exactref.UnmeasuredVersionWarning)
        report = run_audit(AuditConfig(target="numpy", ops=("arithmetic",)))
    got: dict = {}
    for g in report.groups:
        p, f = got.get(g.op, (0, 0))
        got[g.op] = (p + (g.status in ("pass", "rejected")), f + (g.status == "fail"))
    documented = _doc_counts()
    rows = "\n".join(f"{op}: {p} passed, {f} failed" for op, (p, f) in got.items())
    assert documented == got, f"the run gives:\n{rows}"
