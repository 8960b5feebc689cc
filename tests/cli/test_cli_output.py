"""Every subcommand's output to a reader that goes away (``| head``): no BrokenPipeError
traceback, the audit's JSON still written and its exit code kept; ``exactref diff`` of runs
that audited other inputs says so first."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from exactref.cli import main

ROOT = pathlib.Path(__file__).parents[2]


def _closed_reader(*argv, cwd=None):
    """Run ``exactref ARGV`` with its stdout a pipe whose reading end is closed before the
    command writes: every write fails (EPIPE), as under ``| head`` once head has exited."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CI="1")
    proc = subprocess.Popen([sys.executable, "-m", "exactref.cli", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    return proc.wait(timeout=600), err


def _report(tmp_path, name, **fields):
    groups = [{"key": f"add k{i}", "status": "pass", "got_dtype": "float32",
               "expected_dtype": "float32", "cases": 8, "exact": 8, "covered": 8,
               "max_ulps": 0.0} for i in range(3000)]
    data = {"schema": "exactref.audit/3", "environment": {"numpy": "2.4.6"},
            "config": {"target": "numpy", "seed": 0, "samples": 8, "dtypes": None},
            "groups": groups}
    for k, v in fields.items():
        data[k] = {**data[k], **v} if isinstance(v, dict) else v
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path, data


@pytest.mark.parametrize("argv", [["formats"], ["round", "0.1", "--to", "bfloat16"],
                                  ["promotion", "table", "--policy", "torch"]])
def test_no_traceback_when_the_reader_goes_away(argv):
    rc, err = _closed_reader(*argv)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert rc == 0, err


def test_diff_to_a_closed_reader_keeps_its_exit_code(tmp_path):
    old, data = _report(tmp_path, "old.json")
    for g in data["groups"]:
        g["covered"] = 7
    new = tmp_path / "new.json"
    new.write_text(json.dumps(data))
    rc, err = _closed_reader("diff", str(old), str(new))
    assert "Traceback" not in err, err
    assert rc == 1  # some got worse, whether or not anyone read it


def test_audit_to_a_closed_reader_still_writes_its_json(tmp_path):
    out = tmp_path / "r.json"
    rc, err = _closed_reader("audit", "numpy", "--dtypes", "float16", "--kinds", "same",
                             "--samples", "16", "--json", str(out), "--no-progress")
    assert "Traceback" not in err, err
    assert rc == 0
    assert json.loads(out.read_text())["summary"]["passed"] == 2


def test_diff_says_first_that_the_configurations_differ(tmp_path, capsys):
    old, _ = _report(tmp_path, "old.json")
    new, _ = _report(tmp_path, "new.json", config={"seed": 1, "samples": 16,
                                                   "dtypes": ["float16"]},
                     environment={"numpy": "2.5.0"})
    assert main(["diff", str(old), str(new)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("the runs' configurations differ: seed 0 -> 1; samples 8 -> 16; "
                               "dtypes (default) -> float16") or \
        lines[0].startswith("the runs' configurations differ: dtypes (default) -> float16; ")
    assert "seed 0 -> 1" in lines[0] and "samples 8 -> 16" in lines[0]
    assert "a change below may come from that" in lines[0]
    assert lines[1] == "the runs' environments differ: numpy 2.4.6 -> 2.5.0"
    assert lines[-1] == "no group's numerics changed"


def test_diff_of_the_same_configuration_says_nothing_of_it(tmp_path):
    from exactref.cli._audit import config_differences

    _, data = _report(tmp_path, "a.json")
    assert config_differences(data, data) == []
    other = {**data, "config": {**data["config"], "timeout": 5, "exitfirst": True}}
    assert config_differences(data, other) == []  # neither changes what is audited


def test_diff_says_a_run_stopped_early(tmp_path):
    from exactref.cli._audit import config_differences

    _, data = _report(tmp_path, "a.json")
    cut = {**data, "interrupted": True, "stopped": "interrupted (Ctrl-C)",
           "groups_planned": 3000, "groups_run": 10}
    lines = config_differences(data, cut)
    assert lines == ["the new run stopped early (interrupted (Ctrl-C)): it ran 10 of 3000 "
                     "groups, so groups only in the other are missing from it, not removed"]
