"""``exactref audit``'s usage errors: exit 4 with what was expected, what was found and how to
fix it, before any group of the audit runs (fail fast)."""

from __future__ import annotations

import pathlib

import pytest

import exactref.audit
from exactref.cli import main

KERNELS = pathlib.Path(__file__).parents[1] / "audit"


@pytest.fixture(autouse=True)
def _no_audit(monkeypatch):
    """Any usage error must stop the command before the audit plans a group."""
    def planned(*a, **k):
        raise AssertionError("the audit ran before the usage error was found")

    monkeypatch.setattr(exactref.audit, "plan", planned)
    monkeypatch.syspath_prepend(str(KERNELS))


def _usage(capsys, *argv) -> str:
    rc = main(["audit", *argv, "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 4, err
    assert err.startswith("exactref audit: error: "), err
    return err


def test_json_into_a_directory(capsys, tmp_path):
    err = _usage(capsys, "numpy", "--json", str(tmp_path))
    assert "is a directory, not a file" in err and "audit.json" in err


def test_json_into_a_missing_folder(capsys, tmp_path):
    err = _usage(capsys, "numpy", "--json", str(tmp_path / "no" / "r.json"))
    assert "does not exist" in err


def test_json_empty_name(capsys):
    assert "names no file" in _usage(capsys, "numpy", "--json", "")


@pytest.mark.parametrize("name, found", [("out.txt", "the extension .txt"),
                                         ("out", "no extension")])
def test_plot_extension_refused_before_the_audit(capsys, tmp_path, name, found):
    pytest.importorskip("matplotlib")
    err = _usage(capsys, "numpy", "--plot", str(tmp_path / name))
    assert found in err and ".png" in err and ".svg" in err


def test_plot_into_a_directory(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    assert "is a directory" in _usage(capsys, "numpy", "--plot", str(tmp_path))


def test_json_and_plot_the_same_file(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = str(tmp_path / "a.png")
    assert "the same file" in _usage(capsys, "numpy", "--json", path, "--plot", path)


@pytest.mark.parametrize("option", ["--ops", "--dtypes", "--kinds"])
@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_empty_list_is_a_usage_error(capsys, option, value):
    err = _usage(capsys, "numpy", f"{option}={value}")
    assert f"{option} {value!r} names nothing; expected a comma-separated list" in err


@pytest.mark.parametrize("field", ["ops", "dtypes", "kinds"])
def test_an_empty_list_in_the_api(field):
    with pytest.raises(exactref.audit.AuditUsageError, match=f"{field}=\\(\\) names nothing"):
        exactref.audit.run_audit(exactref.audit.AuditConfig(**{field: ()}))


@pytest.mark.parametrize("value", ["0.2", "-1", "0", "nan", "inf", "1e50"])
def test_accuracy_below_half_an_ulp_or_not_finite(capsys, value):
    """0.5 ulp is correct rounding: no result of an irrational value is closer, so fewer ulps
    declare the impossible; and a bound is finite."""
    err = _usage(capsys, "wrong_kernels:exp_correct", "--op", "exp", f"--accuracy={value}")
    assert "expected a number of ulps of the compute format in [0.5, 2**40]" in err


def test_accuracy_a_preset_without_the_function_in_that_format(capsys):
    err = _usage(capsys, "wrong_kernels:exp_correct", "--op", "exp", "--accuracy", "glibc",
                 "--compute", "bfloat16")
    assert "documents no exp computed in bfloat16" in err


@pytest.mark.parametrize("compute, found", [("int8", "int8 is not of the output's kind"),
                                            ("complex64", "complex64 is not of the output's")])
def test_compute_of_another_kind(capsys, compute, found):
    err = _usage(capsys, "wrong_kernels:exp_correct", "--op", "exp", "--compute", compute)
    assert found in err and "leave --compute out" in err


def test_compute_for_an_op_without_one(capsys):
    err = _usage(capsys, "wrong_kernels:exp_correct", "--op", "cast", "--compute", "float32")
    assert "cast has no compute" in err and "The contract dimensions cast takes" in err


@pytest.mark.parametrize("value", ["0.5", "1", "correct", "sleef_u10"])
def test_valid_accuracy_reaches_the_audit(capsys, value):
    main(["audit", "wrong_kernels:exp_correct", "--op", "exp", "--accuracy", value,
          "--no-progress"])
    assert "the audit ran before the usage error was found" in capsys.readouterr().err


@pytest.mark.parametrize("target, op, where", [
    ("numpy", "softmax", "the torch target does (exactref audit torch --ops softmax)"),
    ("torch", "gemm", "no built-in target audits it yet"),
])
def test_an_op_the_target_does_not_audit_says_where_it_is_audited(capsys, target, op, where):
    """The message names a target that audits the op only where one does (it told the torch
    target's user that the torch target audits gemm)."""
    err = _usage(capsys, target, "--ops", op)
    assert f"the {target} target audits no {op}" in err and where in err, err
