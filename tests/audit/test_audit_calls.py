"""How the audit calls a kernel (``exactref.audit._calls``): a kernel's own exception is the
kernel's failure (never "an exactref bug", never silently "unsupported"), a format it says it
lacks is unsupported, a call past ``--timeout`` fails and stops the audit, a target that is
not callable and sample counts past the memory bound are usage errors, Ctrl-C is reported."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest
import wrong_kernels

from exactref.audit import AuditConfig, AuditUsageError, run_audit
from exactref.cli import main

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _audit(capsys, *argv):
    rc = main(["audit", *argv, "--no-progress"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_raising_quantizer_is_the_kernels_failure(capsys):
    rc, out, err = _audit(capsys, "wrong_kernels:raises_runtime", "--op", "quantize",
                          "--format", "mxfp8_e4m3", "--samples", "128")
    assert rc == 1, err
    assert "internal error" not in err and "exactref bug" not in err
    assert "the kernel wrong_kernels:raises_runtime raised RuntimeError: boom: the kernel's own " \
           "bug (called as raises_runtime(float32[" in out
    assert out.splitlines()[-1].startswith("0 passed, ") and " failed" in out.splitlines()[-1]


def test_a_raising_elementwise_kernel_is_the_kernels_failure(capsys):
    rc, out, _ = _audit(capsys, "wrong_kernels:raises_runtime", "--op", "exp", "--dtypes",
                        "float32", "--kinds", "same")
    assert rc == 1
    assert "raised RuntimeError: boom" in out and "(called as raises_runtime(float32[256]))" \
        in out


def test_a_type_error_inside_the_kernel_fails_with_its_message(capsys):
    rc, out, _ = _audit(capsys, "wrong_kernels:raises_type_error", "--op", "add", "--dtypes",
                        "float32", "--kinds", "same")
    assert rc == 1, out
    assert "unsupported" not in out.split("\n\n")[1]  # the table: FAIL, not unsupported
    assert "raised TypeError: unsupported operand type(s) for +: 'Tensor' and 'NoneType' " \
           "(called as raises_type_error(float32[256], float32[256]))" in out


def test_a_kernel_that_takes_other_keywords_is_told_the_call(capsys):
    """A torch-style softmax(x, dim=-1): the audit passes axis=-1; the message names the call
    made and the parameters the kernel takes."""
    rc, out, _ = _audit(capsys, "wrong_kernels:softmax_torch_style", "--op", "softmax",
                        "--dtypes", "float32", "--kinds", "same")
    assert rc == 1, out
    assert ("cannot be called as the audit calls a softmax kernel, "
            "softmax_torch_style(float32[8,48], axis=-1)") in out
    assert "unexpected keyword argument 'axis'" in out and "it takes (x, dim=-1)" in out


def test_a_kernel_that_names_the_dtype_it_lacks_is_unsupported(capsys):
    rc, out, _ = _audit(capsys, "wrong_kernels:add_float32_only", "--op", "add", "--kinds",
                        "same")
    assert rc == 0, out
    assert out.splitlines()[-1] == "1 passed, 0 failed, 3 skipped"


def test_nothing_but_dtype_refusals_is_nothing_audited(capsys):
    rc, _, err = _audit(capsys, "wrong_kernels:add_float32_only", "--op", "add", "--dtypes",
                        "float16", "--kinds", "same")
    assert rc == 5 and "nothing audited" in err


def test_a_target_that_is_not_callable_is_a_usage_error(capsys):
    rc, _, err = _audit(capsys, "wrong_kernels:NOT_A_FUNCTION", "--op", "add")
    assert rc == 4
    assert "the audit target 'wrong_kernels:NOT_A_FUNCTION' is int (3), not a function" in err


def test_a_hanging_kernel_times_out_and_stops_the_audit(capsys, tmp_path):
    report = tmp_path / "r.json"
    wrong_kernels.HANG.clear()
    try:
        rc, out, _ = _audit(capsys, "wrong_kernels:add_hangs_on_float32", "--op", "add",
                            "--dtypes", "float16,float32,float64", "--kinds", "same",
                            "--timeout", "0.5", "--json", str(report))
    finally:
        wrong_kernels.HANG.set()  # let the abandoned call finish
    assert rc == 1, out
    assert "did not return within 0.5 s (--timeout 0.5)" in out
    assert "STOPPED: a call of the kernel timed out (add float32[n] float32[n]), after 2 of " \
           "3 groups" in out
    assert out.splitlines()[-1] == "1 passed, 1 failed"
    data = json.loads(report.read_text())
    assert data["groups_planned"] == 3 and data["groups_run"] == 2
    assert data["stopped"].startswith("a call of the kernel timed out")


def test_call_with_timeout_keeps_the_callers_context_and_exceptions():
    import numpy as np

    from exactref.audit._calls import KernelTimeout, call_with_timeout

    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            call_with_timeout(lambda: np.float32(3e38) * np.float32(10), timeout=5)
    assert call_with_timeout(lambda a, b=0: a + b, (1,), {"b": 2}, timeout=5) == 3
    assert call_with_timeout(lambda: 4, timeout=0) == 4
    import threading

    gate = threading.Event()
    with pytest.raises(KernelTimeout, match="did not return within 0.1 s"):
        call_with_timeout(gate.wait, timeout=0.1)
    gate.set()


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_timeout_values(capsys, value):
    rc, _, err = _audit(capsys, "numpy", f"--timeout={value}")
    assert rc == 4 and "expected a number of seconds >= 0" in err


def test_samples_past_the_memory_bound_are_refused_up_front(capsys, monkeypatch):
    import exactref.audit

    def planned(*a, **k):
        raise AssertionError("the audit ran")

    monkeypatch.setattr(exactref.audit, "plan", planned)
    rc, _, err = _audit(capsys, "numpy", "--samples", "1000000000")
    assert rc == 4, err
    assert "--samples 1000000000 would need about 954 GiB of memory per group" in err
    assert "pass --samples" in err and "or fewer" in err
    with pytest.raises(AuditUsageError, match="would need about"):
        run_audit(AuditConfig(samples=10**9))


def test_an_interrupted_audit_says_so(capsys, tmp_path):
    report = tmp_path / "r.json"
    wrong_kernels.CALLS.clear()
    rc, out, _ = _audit(capsys, "wrong_kernels:add_interrupted", "--op", "add", "--dtypes",
                        "float16,float32,float64", "--kinds", "same", "--json", str(report))
    assert rc == 2
    assert "INTERRUPTED: interrupted (Ctrl-C), after 1 of 3 groups; the counts below are of " \
           "those only" in out
    assert out.splitlines()[-1] == "1 passed, 0 failed (interrupted: 1 of 3 groups run)"
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and data["stopped"] == "interrupted (Ctrl-C)"
    assert (data["groups_planned"], data["groups_run"]) == (3, 1)


def test_a_wrong_sign_of_zero_is_reported_as_one(capsys):
    rc, out, _ = _audit(capsys, "wrong_kernels:add_negative_zero", "--op", "add", "--dtypes",
                        "float32", "--kinds", "same")
    assert rc == 1
    assert "0 ulp outside" not in out
    assert "FAILED add float32[n] float32[n]: a wrong sign of zero: -0x0p+0 where only " \
           "0x0p+0 is allowed" in out
    assert "(a wrong sign of zero)" in out
    assert "-0/+0" in out.split("\n\n")[1]  # the table's max ulps column


@pytest.mark.parametrize("target, package", [("jax", "jax"), ("torch", "torch"),
                                             ("torchao", "torchao")])
def test_a_missing_library_gets_an_install_hint(capsys, monkeypatch, target, package):
    monkeypatch.setitem(sys.modules, package, None)  # as if not installed
    rc, _, err = _audit(capsys, target)
    assert rc == 4
    assert f"target needs {package}" in err
    assert ("pip install jax" if package == "jax" else f"pip install 'exactref[{package}]'") \
        in err
