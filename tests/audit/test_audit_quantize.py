"""``exactref audit module:function --op quantize --format ...``: a custom block quantizer
audited against ``er.quantize(...).covers`` on random, edge, extreme and special blocks."""

from __future__ import annotations

import json
import pathlib

import pytest

from exactref.audit import AuditConfig, run_audit
from exactref.cli import main

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _cfg(kernel, **kw):
    return AuditConfig(target=f"wrong_kernels:{kernel}", op_name="quantize", samples=64,
                       block_format="mxfp8_e4m3", **kw)


def test_a_quantizer_written_from_the_spec_passes_every_group():
    r = run_audit(_cfg("mxfp8_e4m3_floor"))
    assert r.failed == 0 and r.passed == 12, [(g.key, g.message) for g in r.groups]
    kinds = {g.params["data"] for g in r.groups}
    assert kinds == {"random", "edges", "extremes", "specials"}


def test_a_scale_one_step_off_fails_everywhere():
    # floor's scale alone (the default rules are floor and rceil, and a doubled scale is
    # rceil's for some blocks)
    r = run_audit(_cfg("mxfp8_e4m3_scale_twice", scale_rule="floor"))
    # every group but the special blocks' (a NaN block's codes are free) fails, all its elements
    assert all(g.status == "fail" and g.covered == 0 for g in r.groups
               if g.params["data"] != "specials")
    assert r.failed >= 9
    g = r.groups[0]
    assert "reproducer" in g.worst and "er.quantize(x, 'mxfp8_e4m3'" in g.worst["reproducer"]


def test_the_declared_rule_decides():
    """The floor quantizer is not an rceil quantizer (they differ where the block's largest
    magnitude is past the element format's largest value times a power of two), and passes
    under 'any'."""
    assert run_audit(_cfg("mxfp8_e4m3_floor", scale_rule="rceil")).failed > 0
    assert run_audit(_cfg("mxfp8_e4m3_floor", scale_rule="any")).failed == 0


def test_the_cli_and_its_usage_errors(capsys, tmp_path):
    out = tmp_path / "q.json"
    assert main(["audit", "wrong_kernels:mxfp8_e4m3_floor", "--op", "quantize", "--format",
                 "mxfp8_e4m3", "--samples", "64", "--dtypes", "float32", "--no-progress",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert {g["params"]["data"] for g in report["groups"]} == {
        "'random'", "'edges'", "'extremes'", "'specials'"}
    capsys.readouterr()
    base = ["audit", "wrong_kernels:mxfp8_e4m3_floor", "--op", "quantize"]
    for extra in ([], ["--format", "mxfp9"], ["--format", "nvfp4", "--scale-rule", "floor"],
                  ["--format", "mxfp4", "--dtypes", "float8_e4m3fn"]):
        assert main(base + extra) == 4, extra
    assert main(["audit", "wrong_kernels:mxfp8_e4m3_floor", "--op", "exp", "--format",
                 "mxfp4"]) == 4
    assert "declare a block quantizer" in capsys.readouterr().err


def test_a_failing_group_reports_codes_and_scales_not_ulps(capsys):
    """A quantizer's failure is a code and a block scale against each rule's: "ulp outside"
    means nothing for codes."""
    assert main(["audit", "wrong_kernels:mxfp8_e4m3_scale_twice", "--op", "quantize",
                 "--format", "mxfp8_e4m3", "--samples", "64", "--dtypes", "float32",
                 "--no-progress", "--worst", "1"]) == 1
    out = capsys.readouterr().out
    assert "ulp outside" not in out
    assert "with block scale" in out and "floor: code" in out and "(another block scale)" in out
