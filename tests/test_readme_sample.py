"""The samples of the default audit's output in README.md and docs/audit.md are what
``exactref audit`` prints today: the header, every table line they show, and the summary."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).parents[1]
#: the files whose first ```text block after the marker is a sample of ``exactref audit``
SAMPLES = {"README.md": "A sample of the audit's output",
           "docs/audit.md": "`exactref audit` prints (numpy, the default"}
_ROW = re.compile(r"^(status|pass|FAIL|rejected|unsupported) ")


def _sample(name: str) -> list[str]:
    text = (ROOT / name).read_text()
    start = text.index(SAMPLES[name])
    block = re.search(r"```text\n(.*?)```", text[start:], re.S)
    assert block, f"{name}: no ```text block after {SAMPLES[name]!r}"
    return block.group(1).rstrip("\n").splitlines()


@pytest.fixture(scope="module")
def default_audit(default_audit_output):
    """What ``exactref audit`` (numpy, add and multiply, seed 0) prints, as lines (run once
    per session: tests/conftest.py)."""
    return default_audit_output


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_sample_is_what_the_default_audit_prints(name, default_audit):
    rc, lines = default_audit
    sample = _sample(name)
    assert sample[0] == lines[0]  # target, seed, samples, device
    assert sample[1].startswith("versions: exactref ") and lines[1].startswith("versions: ")
    rows = [line for line in sample if _ROW.match(line)]
    assert rows and rows[0].startswith("status"), "the sample shows the table's header"
    missing = [row for row in rows if row not in lines]
    assert not missing, f"{name}: these sample lines are not in today's output: {missing}"
    assert sample[-1] == lines[-1]  # "N passed, M failed"
    assert rc == (0 if ", 0 failed" in lines[-1] else 1)


def test_the_readme_names_every_registered_op():
    """The README's list of ops is prose, so a new op's record does not write it: this test
    asks for every registered op there (a new op fails it until the README names it)."""
    import exactref as er

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    missing = [name for name in er.ops.op_names() if f"`{name}`" not in text]
    assert not missing, f"README.md does not name these ops: {', '.join(missing)}"
