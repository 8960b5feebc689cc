"""The audit's check strength per group (the tolerance in ulps), its rich output in a terminal
and plain text elsewhere, and the usage errors of issue 11 (devices, diff inputs)."""

from __future__ import annotations

import io
import json
import pathlib
import re

import pytest

from exactref.audit import AuditConfig, run_audit
from exactref.cli import main
from exactref.cli._audit import _Progress, diff_reports, format_report, print_report

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(scope="module")
def torch_report():
    pytest.importorskip("torch")
    return run_audit(AuditConfig(target="torch", ops=("matmul", "sum"),
                                 dtypes=("float32", "bfloat16"), samples=64, kinds=("same",)))


# ------------------------------------------------------------------------------ strength
def test_groups_report_the_tolerance_in_ulps(torch_report):
    by_key = {g.key: g for g in torch_report.groups}
    f32 = by_key["matmul float32[8,48] float32[48,8]"]
    bf16 = by_key["matmul bfloat16[8,48] bfloat16[48,8]"]
    assert 0 < f32.tol_median_ulps <= f32.tol_max_ulps  # any order in float32: ulps of slack
    assert (bf16.tol_median_ulps, bf16.tol_max_ulps) == (0.0, 0.0)  # float32 sums, rounded once
    data = f32.to_json()
    assert data["tol_median_ulps"] == f32.tol_median_ulps
    assert data["tol_max_ulps"] == f32.tol_max_ulps


def test_the_table_has_a_column_for_it(torch_report):
    lines = format_report(torch_report).splitlines()
    header = lines[3]
    assert header.split("  ")[0] == "status"
    assert "max ulps  tol ulps med/max  worst input" in header
    row = next(line for line in lines if line.startswith("pass    matmul  bfloat16"))
    assert row.split()[-1] == "0/0"


def test_the_audit_of_a_weak_check_does_not_warn(recwarn):
    pytest.importorskip("torch")
    report = run_audit(AuditConfig(target="torch", ops=("sum",), dtypes=("float32",),
                                   samples=64, kinds=("same",)))  # warnings are errors here
    assert report.groups and not recwarn.list


# ------------------------------------------------------------------------------ output
def test_plain_text_where_stdout_is_not_a_terminal(torch_report):
    out = io.StringIO()
    print_report(torch_report, file=out)
    assert out.getvalue() == format_report(torch_report) + "\n"


def test_a_table_that_fits_the_terminal(torch_report, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = _Terminal()
    print_report(torch_report, file=out)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())  # colours and bold
    assert text.startswith("exactref audit torch: seed 0, 64 samples per group, device cpu")
    table = text.split("\n\n")[1].splitlines()
    assert all(len(line) <= 100 for line in table), table
    assert "med/max" in table[1] and "status" in table[1]
    assert text.rstrip().endswith("4 passed, 0 failed")


def test_the_progress_bar_shows_rate_and_time_left(capsys):
    progress = _Progress(True)
    for k in range(1, 4):
        progress(k, 3, f"add float32 #{k}")
    err = capsys.readouterr().err
    assert "3/3" in err and "groups/s" in err and "left" in err
    progress.close()  # a second close is harmless


def test_no_progress_bar_where_stderr_is_not_a_terminal(capsys):
    rc = main(["audit", "numpy", "--ops", "add", "--dtypes", "float16", "--kinds", "same",
               "--samples", "16"])
    captured = capsys.readouterr()
    assert rc == 0 and captured.err == ""
    assert captured.out.splitlines()[-1] == "1 passed, 0 failed"


# ------------------------------------------------------------------------------ usage errors
@pytest.mark.parametrize("device", ["meta", "cuda", "cuda:3", "mps", "nonsense"])
def test_a_torch_device_that_cannot_compute_is_a_usage_error(device, capsys):
    torch = pytest.importorskip("torch")
    if device.startswith("cuda") and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    if device == "mps" and torch.backends.mps.is_available():
        pytest.skip("this machine has MPS")
    with pytest.raises(ValueError, match=r"devices available here: cpu"):
        run_audit(AuditConfig(target="torch", ops=("add",), dtypes=("float32",), samples=4,
                              kinds=("same",), device=device))
    # before: meta crashed with exit 3, cuda was reported as a kernel failure (exit 1)
    assert main(["audit", "torch", "--device", device, "--ops", "add", "--dtypes",
                 "float32", "--kinds", "same", "--samples", "4"]) == 4
    assert "devices available here: cpu" in capsys.readouterr().err


def test_diff_refuses_what_is_not_a_report(tmp_path, capsys):
    with pytest.raises(ValueError, match="the old report is a JSON list"):
        diff_reports([1, 2], {})  # AttributeError before
    path = tmp_path / "list.json"
    path.write_text(json.dumps([{"key": "add"}]))
    assert main(["diff", str(path), str(path)]) == 4
    assert "JSON list, not an exactref audit report" in capsys.readouterr().err
