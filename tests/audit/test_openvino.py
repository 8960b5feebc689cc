"""The OpenVINO target (exactref.audit._openvino) and its table (exactref.ops._openvino).

Replay tests run without OpenVINO: the target's ``call`` returns the outputs OpenVINO 2026.4.1
gave for the audit's own inputs (tests/audit/fixtures/openvino, recorded by
scripts/record_openvino_outputs.py), so the table's contracts and the audit's checks are
tested as they run live. Live tests run where OpenVINO is installed."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import exactref as er
from exactref.audit import AuditConfig, replay_reproducers, run_audit
from exactref.audit._openvino import OpenVinoTarget
from exactref.ops import get_op
from exactref.ops._openvino import COUNTERPARTS

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "openvino"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from record_openvino_outputs import RUNS, call_key, run  # noqa: E402

META = json.loads((FIXTURES / "meta.json").read_text())


class Replay(OpenVinoTarget):
    """OpenVINO's recorded outputs in place of its kernels (no OpenVINO needed)."""

    def __init__(self, device="cpu"):
        self.device = "CPU"
        data = np.load(FIXTURES / "outputs.npz")
        self.outputs = {k: data[k] for k in data.files}
        self.missing = []

    def versions(self):
        return dict(META["versions"])

    def call(self, op, cp, operands, params):
        key = call_key(op, operands, params)
        if key not in self.outputs:
            self.missing.append(key)
            raise KeyError(f"no recorded output for {key}")
        out = self.outputs[key]
        name = META["dtypes"][key]
        return out.view(er.dtype(name).np_dtype) if name == "bfloat16" else out


def _audit(target, ops, samples, dtypes=None):
    import exactref.audit as audit

    cfg = AuditConfig(target="openvino", ops=tuple(ops), samples=samples, dtypes=dtypes)
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    try:
        return run_audit(cfg)
    finally:
        audit.get_target = real


class _Reports:
    def __init__(self, reports):
        self.groups = [g for r in reports for g in r.groups]


@pytest.fixture(scope="module")
def replayed():
    target = Replay()
    return target, _Reports([run(target, *r) for r in RUNS])


def _fmt(g):
    return g.operands[0].split("[")[0]


def _departures(op, fmt):
    return [d for d in COUNTERPARTS[op].departures if fmt in d.get("dtypes", (fmt,))]


def test_the_replay_finds_every_recorded_output(replayed):
    target, report = replayed
    assert target.missing == []
    assert len(report.groups) == len(META["statuses"])


def test_every_failing_group_is_a_cited_departure_and_the_others_pass(replayed):
    """Each failing group's op and format has a departure in the table, and its message cites
    the spec broken; an op and format without one passes (its contract covers the kernel)."""
    _, report = replayed
    for g in report.groups:
        deps = _departures(g.op, _fmt(g)) + _departures(g.op, g.expected_dtype)
        if g.status == "fail":
            assert deps, (g.op, g.operands, g.message)
            assert any(d["spec"] in g.message for d in deps), g.message
        elif not deps:
            assert g.status == "pass", (g.op, g.operands, g.status, g.message)


def _group(report, op, fmt, params=None):
    found = [g for g in report.groups if g.op == op and _fmt(g) == fmt and "[]" not in
             g.operands[0] and (params is None or g.params == params)]
    assert found, (op, fmt)
    return found


def test_the_issues_deviations_fail(replayed):
    _, report = replayed
    # float64 computed in float32, inf clamped to FLT_MAX: 0 + inf is FLT_MAX
    add64 = _group(report, "add", "float64")
    assert all(g.status == "fail" for g in add64)
    worst = [g.worst for g in add64 if "inf" in str(g.worst["inputs"])]
    assert worst and any(abs(float.fromhex(w["actual"])) == float(np.finfo(np.float32).max)
                         for w in worst)
    # Exp(NaN) = +inf
    exp32 = _group(report, "exp", "float32")
    assert any(g.status == "fail" and g.worst["inputs"]["x"] == "nan" and
               g.worst["actual"] == "inf" for g in exp32)
    # float32 Divide is a * (1 / b)
    assert all(g.status == "fail" for g in _group(report, "divide", "float32"))
    # bfloat16 results 1 ulp off
    assert any(g.status == "fail" and g.max_ulps == 1 for g in _group(report, "add", "bfloat16"))
    # softmax loses the NaN of its row
    sm = _group(report, "softmax", "float32")
    assert all(g.status == "fail" and g.worst["expected"] == "nan" for g in sm)
    # Gelu: +0 or a value far off where the value is negative
    assert all(g.status == "fail" for g in _group(report, "gelu", "float32"))


def test_correct_kernels_pass(replayed):
    _, report = replayed
    for op, fmt in (("add", "float32"), ("add", "float16"), ("sqrt", "float32"),
                    ("log", "float32"), ("sum", "float32"),
                    ("matmul", "float32"), ("log_softmax", "float32")):
        assert all(g.status == "pass" for g in _group(report, op, fmt)), (op, fmt)


def test_reproducers_are_built_from_the_table_data():
    t = Replay()
    lines = t.call_lines("gelu", get_op("gelu").counterparts.openvino, ["x"],
                         {"approximate": "tanh"})
    text = "\n".join(lines)
    assert "import openvino.opset7 as ops" in text
    assert "node = ops.gelu(ps[0], approximation_mode='tanh')" in text
    lines = t.call_lines("sum", get_op("sum").counterparts.openvino, ["x"], {"axis": -1})
    assert "reduction_axes=ops.constant(np.asarray(-1, dtype=np.int64))" in "\n".join(lines)
    lines = t.call_lines("cast", get_op("cast").counterparts.openvino, ["x"],
                         {"to": "bfloat16"})
    assert "destination_type=ov.Type.bf16" in "\n".join(lines)
    lines = t.call_lines("layer_norm", get_op("layer_norm").counterparts.openvino,
                         ["x", "shape", "w", "b"], {})
    text = "\n".join(lines)
    assert "xs = [x, w, b]" in text and "eps=1e-05" in text
    assert "axes=ops.constant(np.arange(-len(shape), 0, dtype=np.int64))" in text
    assert "node = ops.multiply(node, ps[1])" in text and "node = ops.add(node, ps[2])" in text


def test_every_float64_kernel_carries_the_float32_finding():
    for op, cp in COUNTERPARTS.items():
        if "float64" in cp.data["dtypes"]:
            assert any("float64 is computed in float32" in d["what"] for d in
                       _departures(op, "float64")), op


# ---------------------------------------------------------------------------------- live
def test_live_unknown_device_is_a_value_error_naming_the_devices():
    ov = pytest.importorskip("openvino")
    with pytest.raises(ValueError) as exc:
        OpenVinoTarget("NPU9")
    for name in ov.Core().available_devices:
        assert name in str(exc.value)


def test_live_audit_statuses_and_a_reproducer_that_reproduces():
    pytest.importorskip("openvino")
    report = _audit(OpenVinoTarget("cpu"), ops=("add", "divide"), samples=32)
    by = {(g.op, _fmt(g)): g.status for g in report.groups if "[]" not in g.operands[0]}
    assert by[("add", "float32")] == "pass" and by[("add", "float16")] == "pass"
    assert by[("add", "float64")] == "fail" and by[("divide", "float32")] == "fail"
    failing = next(g for g in report.groups if g.op == "divide" and g.status == "fail"
                   and _fmt(g) == "float32")
    run = subprocess.run([sys.executable, "-c", failing.worst["reproducer"]],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "outside" in run.stdout


def test_live_replay_reproducers_of_a_report():
    pytest.importorskip("openvino")
    report = _audit(OpenVinoTarget("cpu"), ops=("exp",), samples=16, dtypes=("float32",))
    assert report.failed and replay_reproducers(report) == []


def test_live_a_comparisons_finding_is_named_by_its_operands_format_and_silu_runs_in_f64():
    """A comparison's result is bool: its departures are those of the operands' format (int64
    wrapped to int32, float64 in float32), not an empty message; float64 silu is built (its
    beta a Constant of the operands' type) and fails with the float64 finding, not an error."""
    pytest.importorskip("openvino")
    report = _audit(OpenVinoTarget("cpu"), ops=("less", "silu"), samples=256,
                    dtypes=("int64", "float64", "float16"))
    failed = {(g.op, _fmt(g)): g.message for g in report.groups
              if g.status == "fail" and "[]" not in g.operands[0]}
    assert "int64 is computed in int32" in failed[("less", "int64")]
    assert "float64 is computed in float32" in failed[("silu", "float64")]
    assert all(m.startswith("known: ") for m in failed.values()), failed
    assert not [g.key for g in report.groups if "raised" in (g.message or "")]


def test_a_norms_reproducer_writes_its_shape_as_a_literal_and_a_long_row_as_bytes():
    t = Replay()
    row = np.arange(4096, dtype=np.float64) / 7
    text = t.long_reproducer("layer_norm", {"x": row[None, :], "normalized_shape": (4096,),
                                            "weight": np.ones(4096), "bias": None}, {})
    assert "normalized_shape = (4096,)" in text and "b64decode" in text
    assert "xs = [x, weight]" in text and "node = ops.add(" not in text
    assert "ref = er.layer_norm(x, normalized_shape, weight, None, algorithm='two-pass'" in text


# ------------------------------------------------------------------ convolution, attention
def test_convolution_and_attention_pass_where_no_departure_applies(replayed):
    """conv1d (Convolution, and GroupConvolution for its depthwise case) and attention pass in
    float32 and bfloat16 under the table's contracts; float64 conv fails with the float32
    finding cited."""
    _, report = replayed
    for op, fmt in (("conv1d", "float32"), ("conv1d", "bfloat16"),
                    ("scaled_dot_product_attention", "float32"),
                    ("scaled_dot_product_attention", "bfloat16")):
        groups = _group(report, op, fmt)
        assert all(g.status == "pass" for g in groups), (op, fmt)
    assert any(g.params.get("groups") == 32 for g in _group(report, "conv1d", "float32"))
    assert any(g.params.get("is_causal") for g in
               _group(report, "scaled_dot_product_attention", "float32"))
    f64 = _group(report, "conv1d", "float64")
    assert f64 and all(g.status == "fail" and _F64_SPEC in g.message for g in f64)


_F64_SPEC = next(d["spec"] for d in COUNTERPARTS["add"].departures
                 if "float64 is computed in float32" in d["what"])


def test_attentions_bfloat16_weights_are_stored_in_bfloat16():
    """The bfloat16 attention's contract stores the softmax's weights in bfloat16 (the AMX
    Subgraph): without it the recorded outputs are not covered."""
    assert COUNTERPARTS["scaled_dot_product_attention"].data["formats"]["bfloat16"] == {
        "stored": "bfloat16"}

    class Without(Replay):
        def declared(self, op, fmt=None):
            out = super().declared(op, fmt)
            out.pop("stored", None)
            return out

    ops = [r for r in RUNS if "scaled_dot_product_attention" in r[0]][0]
    report = run(Without(), ops[0], ("bfloat16",), ops[2])
    assert report.groups and any(g.status == "fail" for g in report.groups)


def test_convolution_and_attention_models_are_built_from_the_table_data():
    t = Replay()
    x, w, b = np.zeros((2, 32, 64)), np.zeros((32, 1, 4)), np.zeros(32)
    text = t.long_reproducer("conv1d", {"input": x, "weight": w, "bias": b},
                             {"padding": 3, "groups": 32})
    assert "xs = [input]" in text  # the weights and bias are Constants of the model
    assert ("node = ops.group_convolution(ps[0], ops.reshape(const(weight), ops.constant("
            "np.asarray([32, 1, 1, 4], dtype=np.int64)), False), pads_begin=[3], "
            "pads_end=[3], strides=[1], dilations=[1])") in text
    assert "node = ops.add(node, ops.reshape(const(bias), ops.constant(np.asarray([1, -1, 1]" \
        in text
    assert "ref = er.conv1d(input, weight, bias, padding=3, groups=32, order='any'" in text
    x2, w2 = np.zeros((2, 16, 12, 12)), np.zeros((16, 16, 3, 3))
    text = t.long_reproducer("conv2d", {"input": x2, "weight": w2, "bias": None},
                             {"padding": "same", "dilation": 2})
    assert ("node = ops.convolution(ps[0], const(weight), pads_begin=[2, 2], pads_end=[2, 2], "
            "dilations=[2, 2], strides=[1, 1])") in text
    assert "ops.add" not in text
    q = np.zeros((1, 2, 4, 8))
    text = t.long_reproducer("scaled_dot_product_attention", {"query": q, "key": q, "value": q},
                             {"is_causal": True})
    assert "node = ops.scaled_dot_product_attention(ps[0], ps[1], ps[2], causal=True)" in text


def test_live_convolution_bias_is_fused_and_float64_reproduces():
    """The bias is a constant Add that the plugin fuses into the convolution (rounded once:
    a bfloat16 result that cancels against the bias is not 0), and a failing float64 group's
    reproducer reproduces in a fresh Python."""
    pytest.importorskip("openvino")
    t = OpenVinoTarget("cpu")
    bf = er.dtype("bfloat16").np_dtype
    x = np.array([[[1.171875, -0.56640625, -0.42578125, 0.6015625]]]).astype(bf)
    w = np.array([[[0.61328125, 0.02001953125, -0.41015625, -0.189453125]]]).astype(bf)
    b = np.array([-0.76953125]).astype(bf)
    out = t.call("conv1d", get_op("conv1d").counterparts.openvino, [x, w, b], {})
    assert er.conv1d(x, w, b).covers(out).all(), out  # -0x1.8cp-10, not 0
    report = _audit(t, ops=("conv1d",), samples=8, dtypes=("float64",))
    assert report.failed and replay_reproducers(report) == []
