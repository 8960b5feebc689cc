"""``exactref audit torchao``: torchao's MX (``to_mx``) and NVFP4 (``nvfp4_quantize``)
quantizers audited against ``er.quantize`` of the declared rule, every uncovered element
explained by a pinned departure of torchao's (``docs/block_formats.md``)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import exactref as er
from exactref.audit import AuditConfig, run_audit
from exactref.cli import main

pytest.importorskip("torchao")

from exactref.audit._torchao import DEPARTURES, TorchaoTarget, explain  # noqa: E402


@pytest.fixture(scope="module")
def target():
    return TorchaoTarget()


@pytest.fixture(scope="module")
def report():
    return run_audit(AuditConfig(target="torchao", samples=64))


def test_every_group_is_covered_or_a_known_departure(report):
    """176 groups: 5 MX formats x 4 rules and NVFP4 with and without its per-tensor scale, on
    float32 and bfloat16, 4 data kinds each. Each group passes, or each of its uncovered
    elements is explained exactly by a departure's model."""
    assert len(report.groups) == 176
    kinds = {(g.params["fmt"], g.params["scale_rule"], g.params.get("per_tensor_scale"))
             for g in report.groups}
    assert len(kinds) == 5 * 4 + 2
    failed = [g for g in report.groups if g.status == "fail"]
    assert failed and all(g.status in ("pass", "fail") for g in report.groups)
    for g in failed:
        counts = g.worst["departures"]
        assert counts["unexplained"] == 0, (g.key, g.message)
        assert sum(counts.values()) == g.uncovered, g.key
        assert g.message.startswith("torchao's known departures")
    # the MX quantizers follow every rule exactly on ordinary blocks
    for g in report.groups:
        if g.params["fmt"] != "nvfp4" and g.params["data"] == "random":
            assert g.status == "pass", g.key


def test_a_departure_from_torchao_that_no_model_explains_is_reported(target, monkeypatch):
    """The explanations are no blanket excuse: torchao's output with one code moved one step
    stays uncovered and unexplained."""
    real = target.quantize_call

    def moved(x, params):
        (codes, scales), ref = real(x, params)
        codes = codes.astype(np.float64)
        codes[0, 3] = 2 * codes[0, 3] + 1.0  # never the rule's code
        return (codes, scales), ref

    monkeypatch.setattr(target, "quantize_call", moved)
    from exactref.audit._quantize import audit_quantizer_group

    cfg = AuditConfig(target="torchao", samples=64, seed=0)
    fmt = er.dtype("float32")
    for params in ({"fmt": "mxfp8_e4m3", "scale_rule": "floor", "data": "random"},
                   {"fmt": "nvfp4", "scale_rule": "nearest", "per_tensor_scale": False,
                    "data": "random"}):
        g = audit_quantizer_group(target, "quantize", [(fmt, (2, 64))], params, cfg)
        assert g.status == "fail" and g.worst["departures"]["unexplained"] >= 1, g.message
        assert "NOT explained" in g.message


def _block(values, n=32, dtype=np.float32):
    x = np.zeros((1, n), dtype=dtype)
    x[0, :len(values)] = values
    return x


def _pinned(target, x, params, departure):
    """torchao's output for ``x`` is outside the rule and explained by ``departure``."""
    (codes, scales), ref_kw = target.quantize_call(x, params)
    q = er.quantize(x, params["fmt"], scale_rule=params["scale_rule"], **ref_kw)
    cov = q.covers(codes, scales)
    assert not cov.all()
    counts = explain(params, x, codes, scales, np.asarray(cov.mask))
    assert counts[departure] == cov.uncovered and counts["unexplained"] == 0, counts
    return codes.astype(np.float64), scales, q


@pytest.mark.parametrize("rule", ["floor", "ceil", "even"])
def test_the_smallest_mx_scale_divides_as_2_to_the_minus_126(target, rule):
    """amax = 2**-120: every rule's scale clamps to 2**-127 and the element is 2**7 = 128;
    torchao keeps the scale 2**-127 but divides by F32_MIN_NORMAL, 2**-126: 64."""
    params = {"fmt": "mxfp8_e4m3", "scale_rule": rule}
    codes, scales, q = _pinned(target, _block([2.0**-120]), params, "mx_min_scale")
    assert scales.tolist() == [[2.0**-127]] and codes[0, 0] == 64.0
    assert q.codes.tolist()[0][0] == 128.0


def test_rceil_at_the_smallest_scale_multiplies_by_one(target):
    """rceil, amax = 2**-120: scale 2**-127, torchao's reciprocal for exponent 0 is 1.0, so
    the element is RN(2**-120) = 0 in E4M3 instead of 128."""
    codes, scales, _ = _pinned(target, _block([2.0**-120]),
                               {"fmt": "mxfp8_e4m3", "scale_rule": "rceil"}, "mx_min_scale")
    assert scales.tolist() == [[2.0**-127]] and codes[0, 0] == 0.0


@pytest.mark.parametrize("rule, exponent", [("floor", 120), ("ceil", 120), ("even", 120),
                                            ("rceil", 127)])
def test_an_infinite_block_gets_a_finite_scale(target, rule, exponent):
    """[inf, 1, 0, ...]: the rule's scale is NaN (E8M0 0xFF); torchao's is 2**(128 - 8) from
    inf's exponent field (rceil: 0xFE, 2**127), the infinity's code 448 and 1's code 0."""
    codes, scales, q = _pinned(target, _block([np.inf, 1.0]),
                               {"fmt": "mxfp8_e4m3", "scale_rule": rule}, "mx_inf_block")
    assert scales.tolist() == [[2.0**exponent]] and codes[0, :2].tolist() == [448.0, 0.0]
    assert np.isnan(q.scales._wide()).all()


def test_float32_rceil_misses_one_ulp_above_a_power_of_two_times_the_largest_element(target):
    """amax = 7168 * (1 + 2**-23), one float32 ulp above 448 * 2**4: the rule's scale is
    2**5 (7168.0004 / 448 > 16); torchao's float32 log2 of 16 * (1 + 2**-23) rounds to 4, so
    its scale is 2**4 and amax saturates to 448."""
    amax = float(np.nextafter(np.float32(7168.0), np.float32(np.inf)))
    codes, scales, q = _pinned(target, _block([amax, 1.0]),
                               {"fmt": "mxfp8_e4m3", "scale_rule": "rceil"}, "mx_rceil_log2")
    assert scales.tolist() == [[16.0]] and codes[0, 0] == 448.0
    assert q.scales.tolist() == [[32.0]] and q.codes.tolist()[0][0] == 224.0


@pytest.mark.parametrize("per_tensor", [False, True])
def test_nvfp4_clamps_the_block_scale_to_e4m3s_smallest_normal(target, per_tensor):
    """A small block beside a large one: the rule's E4M3 scale is below 2**-6 (a subnormal,
    or 0 for an all-zero block); torchao's clamp (E4M3_EPS) makes it 2**-6."""
    x = _block([0.01, -0.004], n=48)
    x[0, 16:32] = 0.0
    x[0, 32] = 6.0 * 448 if per_tensor else 1.0
    params = {"fmt": "nvfp4", "scale_rule": "nearest", "per_tensor_scale": per_tensor}
    codes, scales, q = _pinned(target, x, params, "nvfp4_min_scale")
    assert scales[0, :2].tolist() == [2.0**-6, 2.0**-6]
    assert q.scales._wide()[0, 0] < 2.0**-6 and q.scales._wide()[0, 1] == 0


def test_nvfp4_per_tensor_scale_of_a_tensor_holding_an_infinity(target):
    """amax = inf: torchao's per-tensor scale inf / 2688 = inf makes every finite block's
    scale 0, clamped to 2**-6, and every code 0; the rule takes g = 1 (Transformer Engine)."""
    x = _block([np.inf, 1.0], n=32)
    x[0, 16:] = 3.0
    params = {"fmt": "nvfp4", "scale_rule": "nearest", "per_tensor_scale": True}
    codes, scales, _ = _pinned(target, x, params, "nvfp4_nonfinite_tensor")
    assert scales[0, 1] == 2.0**-6 and (codes[0, 16:] == 0).all()


def test_departures_are_documented():
    text = (pathlib.Path(__file__).parents[2] / "docs" / "block_formats.md").read_text()
    for name in DEPARTURES:
        assert f"`{name}`" in text, name


def test_the_cli(capsys):
    rc = main(["audit", "torchao", "--format", "mxfp8_e4m3", "--scale-rule", "floor",
               "--samples", "64", "--no-progress", "--worst", "1"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "torchao 0.18" in out and "known departures" in out
    assert "ulp outside" not in out and "with block scale" in out
    assert "to_mx(t, torch.float8_e4m3fn, 32, ScaleCalculationMode('floor'))" in out
    for bad in (["--format", "mxint8"], ["--scale-rule", "up"], ["--dtypes", "float16"],
                ["--ops", "add"]):
        assert main(["audit", "torchao", "--no-progress", *bad]) == 4, bad
    assert "torchao has no MXINT8" in capsys.readouterr().err


def test_without_torchao_the_error_says_how_to_install_it(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torchao", None)
    assert main(["audit", "torchao", "--no-progress"]) == 4
    assert "pip install 'exactref[torchao]'" in capsys.readouterr().err
