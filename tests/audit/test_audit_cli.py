"""``exactref audit`` and ``exactref diff`` end to end, through the CLI entry point."""

from __future__ import annotations

import json
import pathlib

import pytest

from exactref.audit import AuditConfig, run_audit
from exactref.cli import main
from exactref.cli._audit import diff_reports, format_report

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def test_numpy_float_groups_pass(capsys):
    rc = main(["audit", "numpy", "--dtypes", "float16,bfloat16,float32", "--kinds",
               "same,mixed,scalar", "--samples", "128", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1] == "48 passed, 0 failed"
    assert out.startswith("exactref audit numpy: seed 0, 128 samples per group, device cpu")


def test_wrong_kernel_fails_with_a_reproducer(capsys):
    rc = main(["audit", "wrong_kernels:add_bf16_truncating", "--op", "add", "--dtypes",
               "bfloat16", "--kinds", "same", "--samples", "256", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "FAIL" in out and "FAILED add bfloat16[n] bfloat16[n]" in out
    assert out.splitlines()[-1] == "0 passed, 1 failed"
    # the reproducer is paste-able: running it shows the violation
    start = out.index("  reproducer:\n") + len("  reproducer:\n")
    block = []
    for line in out[start:].splitlines():
        if not line.startswith("    "):
            break
        block.append(line[4:])
    code = "\n".join(block)
    assert "add_bf16_truncating" in code
    namespace: dict = {}
    with pytest.raises(SystemExit) as stop:  # the reproducer's exit status: 1, not covered
        exec(code, namespace)
    assert stop.value.code == 1
    assert not namespace["ref"].covers(namespace["out"]).all()


def test_correct_kernel_passes(capsys):
    rc = main(["audit", "wrong_kernels:add_bf16_correct", "--op", "add", "--dtypes",
               "bfloat16", "--kinds", "same", "--samples", "256", "--no-progress"])
    assert rc == 0, capsys.readouterr().out


def test_usage_errors_exit_4(capsys):
    assert main(["audit", "nolib"]) == 4
    assert main(["audit", "numpy", "--ops", "devide"]) == 4
    assert main(["audit", "numpy", "--dtypes", "bfloat61"]) == 4
    assert main(["audit", "wrong_kernels:add_bf16_correct"]) == 4  # no --op
    assert main(["audit", "wrong_kernels:add_bf16_correct", "--op", "ad"]) == 4
    err = capsys.readouterr().err
    assert "unknown audit target 'nolib'" in err
    assert "unknown op 'devide'; close matches: divide" in err
    assert "close matches: bfloat16" in err
    assert "unknown op 'ad'" in err


@pytest.mark.parametrize("args, says", [
    (["--samples", "0"], "at least 1 sample"),
    (["--samples", "-5"], "at least 1 sample"),
    (["--seed", "-1"], "non-negative"),
    (["--kinds", "bogus"], "unknown group kind 'bogus'"),
    (["--kinds", "sam"], "did you mean same"),
    (["--json", "/nonexistent/x.json"], "does not exist"),
    (["--plot", "/nonexistent/x.png"], "does not exist"),
])
def test_bad_arguments_are_usage_errors_before_any_work(args, says, capsys):
    assert main(["audit", "numpy", "--dtypes", "float16", "--no-progress", *args]) == 4
    assert says in capsys.readouterr().err


def test_numpy_family_ops(capsys):
    """The new ops audit under numpy through their registry counterparts."""
    rc = main(["audit", "numpy", "--ops", "subtract,sqrt,fmod,less", "--dtypes",
               "float32,bfloat16", "--kinds", "same", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1] == "8 passed, 0 failed"


def test_custom_kernel_of_any_op(tmp_path, capsys):
    """A user's divide that multiplies by the reciprocal (two roundings) is caught."""
    rc = main(["audit", "wrong_kernels:divide_by_reciprocal", "--op", "divide", "--dtypes",
               "float32", "--kinds", "same", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert "FAILED divide float32[n] float32[n]" in out
    assert "reproducer" in out


@pytest.mark.parametrize("kernel, says", [
    ("returns_none", "returned NoneType"),
    ("wrong_shape", "returned shape (1,)"),
])
def test_a_misbehaving_kernel_is_the_kernels_fault(kernel, says, capsys):
    rc = main(["audit", f"wrong_kernels:{kernel}", "--op", "add", "--dtypes", "float32",
               "--kinds", "same", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert says in out and "fault of the kernel" in out


def test_nothing_audited_exits_5(capsys):
    assert main(["audit", "numpy", "--kinds", "alpha", "--no-progress"]) == 5


def test_exitfirst_stops_at_first_failure(capsys):
    rc = main(["audit", "wrong_kernels:add_bf16_truncating", "--op", "add", "--dtypes",
               "bfloat16,float32", "-x", "--kinds", "same,mixed", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.splitlines()[-1] == "0 passed, 1 failed"


def test_json_and_diff(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    args = ["--dtypes", "bfloat16", "--kinds", "same", "--op", "add", "--no-progress",
            "--samples", "64"]
    assert main(["audit", "wrong_kernels:add_bf16_correct", *args, "--json", str(old)]) == 0
    assert main(["audit", "wrong_kernels:add_bf16_truncating", *args, "--json", str(new)]) == 1
    capsys.readouterr()
    data = json.loads(new.read_text())
    assert data["schema"] == "exactref.audit/3"
    assert data["summary"] == {"passed": 0, "failed": 1, "unsupported": 0,
                               "no_contract": 0}
    group = data["groups"][0]
    assert group["status"] == "fail" and group["covered"] < group["cases"]
    assert "reproducer" in group["worst"]
    assert main(["diff", str(old), str(old)]) == 0
    assert "no group's numerics changed" in capsys.readouterr().out
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "~ add bfloat16[n] bfloat16[n]: status pass -> fail" in out
    assert "some got worse" in out


def test_diff_rejects_other_json(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["diff", str(bad), str(bad)]) == 4
    with pytest.raises(ValueError, match="not an exactref audit report"):
        diff_reports({}, {})


def test_plot_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "audit.png"
    rc = main(["audit", "wrong_kernels:add_bf16_truncating", "--op", "add", "--dtypes",
               "bfloat16,float16", "--kinds", "same", "--samples", "128", "--no-progress",
               "--plot", str(png)])
    assert rc == 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_sorts_failures_first():
    cfg = AuditConfig(target="wrong_kernels:add_bf16_truncating", op_name="add",
                      ops=("add",), dtypes=("float32", "bfloat16"), samples=64,
                      kinds=("same",))
    text = format_report(run_audit(cfg))
    table = text.splitlines()[3:6]
    assert table[0].startswith("status")
    # float32 comes back as bfloat16, far off; bfloat16 is one ulp off: worst first
    assert table[1].startswith("FAIL") and "float32[n] -> float32/bfloat16" in table[1]
    assert table[2].startswith("FAIL") and "bfloat16[n], bfloat16[n] -> bfloat16" in table[2]


def test_torch_long_sums(capsys):
    pytest.importorskip("torch")
    rc = main(["audit", "torch", "--ops", "matmul,sum", "--dtypes", "float32,bfloat16,int32",
               "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "matmul  float32[8,48], float32[48,8] -> float32" in out
    assert "sum     int32[8,48], axis=-1 -> int64" in out
    assert out.splitlines()[-1] == "6 passed, 0 failed"


@pytest.mark.parametrize("ops, says", [
    ("matmul", "the numpy target audits no matmul (an op audited on shapes of rows)"),
    ("addcmul", "numpy has no addcmul"),
])
def test_an_op_the_target_cannot_audit_is_a_usage_error(ops, says, capsys):
    assert main(["audit", "numpy", "--ops", ops, "--no-progress"]) == 4
    assert says in capsys.readouterr().err
