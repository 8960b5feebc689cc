"""``exactref audit module:function --op <function> --accuracy ...``: a custom kernel's declared
accuracy widens its reference exactly as ``accuracy=`` does, and nothing else takes it."""

from __future__ import annotations

import pathlib

import pytest

from exactref.cli import main

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _audit(kernel, *more):
    return main(["audit", f"wrong_kernels:{kernel}", "--op", "exp", "--dtypes", "float32",
                 "--kinds", "same", "--samples", "128", "--no-progress", *more])


def test_a_kernel_one_ulp_off_passes_a_one_ulp_claim_and_fails_correct_rounding(capsys):
    # correctly rounded (declared: the default is the mainstream libraries' accuracy): caught
    assert _audit("exp_one_ulp_up", "--accuracy", "correct") == 1
    out = capsys.readouterr().out
    assert "FAILED exp float32[n]" in out
    # within 1 ulp of the correct rounding is within 1.5 of the exact value
    assert _audit("exp_one_ulp_up", "--accuracy", "1.5") == 0
    assert _audit("exp_one_ulp_up", "--accuracy", "glibc") == 0  # glibc's expf: 1 ulp past
    capsys.readouterr()


def test_three_ulps_off_is_caught_by_the_one_ulp_presets(capsys):
    assert _audit("exp_three_ulps_up", "--accuracy", "sleef_u10") == 1
    out = capsys.readouterr().out
    assert "accuracy='sleef_u10'" in out  # the reproducer declares the same model
    assert _audit("exp_three_ulps_up", "--accuracy", "4") == 0
    capsys.readouterr()


@pytest.mark.parametrize("args", [
    ["audit", "numpy", "--ops", "add", "--accuracy", "1"],      # no op audited has an accuracy
    ["audit", "wrong_kernels:exp_one_ulp_up", "--op", "add", "--accuracy", "1"],  # not a function
    ["audit", "wrong_kernels:exp_one_ulp_up", "--op", "exp", "--accuracy", "sleef"],
    ["audit", "wrong_kernels:exp_one_ulp_up", "--op", "exp", "--compute", "float33"],
])
def test_misplaced_or_unknown_models_are_usage_errors(args, capsys):
    assert main(args) == 4
    err = capsys.readouterr().err
    assert "exactref audit: error:" in err or "error" in err.lower()
