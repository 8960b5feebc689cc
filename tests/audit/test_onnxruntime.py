"""The ONNX Runtime target (exactref.audit._onnxruntime) and its table (exactref.ops._onnxruntime).

Replay tests run without onnxruntime: a target whose ``call`` returns the outputs ORT 1.32
returned for the audit's own inputs (tests/audit/fixtures/onnxruntime, recorded by
scripts/record_onnxruntime_outputs.py) is audited under the table's contracts, so each of the
issue's deviations must fail with its cited departure and each correct kernel must pass. Live
tests (where onnxruntime is installed) run the target itself and a reproducer in a fresh
Python.
"""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import exactref as er
import exactref.audit as audit
from exactref.audit import AuditConfig, run_audit
from exactref.audit._onnxruntime import OPSET, OnnxRuntimeTarget, build_model, call_key
from exactref.ops import get_op

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "onnxruntime"
META = json.loads((FIXTURES / "meta.json").read_text())


class Replayed(OnnxRuntimeTarget):
    """The ONNX Runtime target answering from the recorded outputs (never importing onnx or
    onnxruntime)."""

    def __init__(self):
        with np.load(FIXTURES / "outputs.npz") as f:
            self.outputs = {k: f[k] for k in f.files}
        self.device = "CPUExecutionProvider"
        self.calls = 0

    def versions(self):
        return dict(META["versions"])

    def call(self, op, cp, operands, params):
        key = call_key(op, operands, params)
        if key not in self.outputs:
            raise KeyError(f"no recorded output for {op} {params} (re-record: python "
                           f"scripts/record_onnxruntime_outputs.py)")
        self.calls += 1
        return self.outputs[key].view(er.dtype(META["formats"][key]).np_dtype)


def _replay(monkeypatch, ops, dtypes=None):
    for name in ("onnxruntime", "onnx"):  # the replay must not need them
        monkeypatch.setitem(sys.modules, name, None)
    target = Replayed()
    monkeypatch.setattr(audit, "get_target", lambda *a, **k: target)
    report = run_audit(AuditConfig(target="onnxruntime", ops=tuple(ops),
                                   dtypes=tuple(dtypes or META["dtypes"]),
                                   samples=META["samples"], seed=META["seed"]))
    assert target.calls > 0
    return report


def _status(report, op, fmt, kind="[n]"):
    return [g.status for g in report.groups if g.op == op and g.operands and
            g.operands[0].startswith(fmt + kind)]


#: the issue's deviations of ONNX Runtime: (op, format) of the failing group (the replay of
#: sigmoid's and gelu's takes 30 s more: the slow test below)
ISSUE = [("log_softmax", "float64"), ("tanh", "float32"), ("tanh", "float64"),
         ("softmax", "float32")]
ISSUE_SLOW = [("sigmoid", "float32"), ("gelu", "float32")]


def _fails_with_departure(report, issue):
    for op, fmt in issue:
        failed = [g for g in report.groups if g.op == op and g.status == "fail"
                  and g.operands[0].startswith(fmt)]
        assert failed, (op, fmt)
        assert all("known: " in g.message and "breaks " in g.message for g in failed), \
            (op, fmt, failed[0].message)
        worst = failed[0].worst
        assert worst and "helper.make_node" in worst["reproducer"]
        compile(worst["reproducer"], f"<{op} reproducer>", "exec")


def test_replay_fails_the_issues_deviations_with_their_cited_departure(monkeypatch):
    report = _replay(monkeypatch, ["log_softmax", "softmax", "tanh", "add", "matmul"],
                     ("float32", "float64"))
    _fails_with_departure(report, ISSUE)
    for op in ("add", "matmul"):  # correct kernels beside them pass
        assert {g.status for g in report.groups if g.op == op} == {"pass"}, op
    assert {g.key: g.status for g in report.groups} == \
        {k: v for k, v in META["statuses"].items() if k in {g.key for g in report.groups}}


@pytest.mark.slow
def test_replay_every_failure_is_a_declared_departure_and_matches_the_recording(monkeypatch):
    report = _replay(monkeypatch, META["ops"])
    _fails_with_departure(report, ISSUE + ISSUE_SLOW)
    assert {g.key: g.status for g in report.groups} == META["statuses"]
    target = Replayed()
    for g in report.groups:
        if g.status == "fail":  # a kernel correct under its contract never fails
            fmt = er.dtype(g.operands[0].partition("[")[0])
            assert target.finding_note(g.op, fmt), g.key
    # the correct kernels pass in every format they have
    for op in ("add", "divide", "exp", "matmul", "cast"):
        statuses = [g.status for g in report.groups if g.op == op]
        assert statuses and set(statuses) == {"pass"}, op


def test_float16_is_modelled_as_the_inserted_cast_to_float32():
    t = OnnxRuntimeTarget.__new__(OnnxRuntimeTarget)
    assert t._at("float16", t._declared_keywords, "exp") == {"compute": "float32"}
    assert t._at("float64", t._declared_keywords, "exp") == {}
    # a contract-layer field goes in the Contract the op applies
    assert t._at("float32", t.user_contract_for, "layer_norm") == er.Contract(
        params={"eps": "float32"})
    assert "params" not in t._at("float32", t._declared_keywords, "layer_norm")


def test_the_models_are_built_from_the_tables_data():
    cp = get_op("conv2d").counterparts.onnxruntime
    x, w = np.ones((1, 2, 6, 6), np.float32), np.ones((2, 2, 3, 3), np.float32)
    spec = build_model(cp, [x, w, None], {"padding": "same", "dilation": 2, "stride": 1})
    assert spec["attrs"] == {"pads": [2, 2, 2, 2], "dilations": [2, 2], "strides": [1, 1]}
    assert [n for n, _, _ in spec["inputs"]] == ["x0", "x1"]  # the absent bias left out
    cp = get_op("layer_norm").counterparts.onnxruntime
    x = np.ones((3, 4, 5), np.float32)
    spec = build_model(cp, [x, (4, 5), None, None], {"eps": 1e-3})
    assert spec["attrs"] == {"axis": -2, "epsilon": 1e-3}
    assert spec["feeds"]["x2"].shape == (4, 5) and (spec["feeds"]["x2"] == 1).all()
    cp = get_op("cast").counterparts.onnxruntime
    spec = build_model(cp, [x], {"to": "bfloat16"})
    assert spec["attrs"] == {"to": ("TensorProto", "BFLOAT16")} and spec["result"] == "bfloat16"
    cp = get_op("sum").counterparts.onnxruntime
    spec = build_model(cp, [x], {"axis": -1})
    assert spec["attrs"] == {"keepdims": 0} and spec["feeds"]["p_axis"].tolist() == [-1]


def test_a_bfloat16_result_is_read_back_through_a_bound_buffer_in_the_reproducer():
    t = OnnxRuntimeTarget.__new__(OnnxRuntimeTarget)
    t.device = "CPUExecutionProvider"
    src = t.reproducer("cast", [(er.dtype("float32"), "n")], [np.float32(1.5)],
                       {"to": "bfloat16"})
    compile(src, "<cast reproducer>", "exec")
    assert "bind_ortvalue_output" in src and "TensorProto.BFLOAT16" in src
    assert "x = np.repeat(x, 16)" in src.replace("  # the kernel's vectorized path", "")


def test_the_fixtures_name_what_they_were_recorded_on():
    assert META["opset"] == OPSET
    assert META["versions"]["onnxruntime"] and META["cpu_features"] is not None
    sizes = sum(p.stat().st_size for p in FIXTURES.iterdir())
    assert sizes < 300_000


# ---------------------------------------------------------------------- live
def test_live_audit_and_a_reproducer_that_reproduces_in_a_fresh_python():
    pytest.importorskip("onnxruntime")
    report = run_audit(AuditConfig(target="onnxruntime", ops=("add", "log_softmax"),
                                   dtypes=("float32", "float64"), samples=64))
    assert set(_status(report, "add", "float32")) == {"pass"}
    assert _status(report, "log_softmax", "float64", "[8,48]") == ["fail"]
    failed = next(g for g in report.groups if g.status == "fail")
    done = subprocess.run([sys.executable, "-c", failed.worst["reproducer"]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not covered" in done.stdout


def test_live_a_deviation_no_departure_names_says_so():
    """A failing group whose format has no departure in the table (here: MLAS's exp under a
    correctly rounded contract) says that it is undeclared and what is not covered."""
    pytest.importorskip("onnxruntime")
    report = run_audit(AuditConfig(target="onnxruntime", ops=("exp",), dtypes=("float32",),
                                   samples=256, contract=er.Contract(accuracy=0.5)))
    failed = [g for g in report.groups if g.status == "fail"]
    assert failed and all(g.message.startswith(
        "not a departure onnxruntime's table declares: ") and "not covered" in g.message
        for g in failed), [g.message for g in failed]


def test_live_an_unknown_provider_names_the_available_ones():
    ort = pytest.importorskip("onnxruntime")
    with pytest.raises(ValueError, match="CPUExecutionProvider") as info:
        OnnxRuntimeTarget("NoSuchExecutionProvider")
    assert all(p in str(info.value) for p in ort.get_available_providers())


@pytest.mark.slow
def test_live_the_tables_formats_are_the_cpu_providers_kernels():
    pytest.importorskip("onnxruntime")
    sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "scripts"))
    try:
        from record_onnxruntime_outputs import kernel_formats
    finally:
        sys.path.pop(0)
    for op, found in kernel_formats().items():
        assert found == get_op(op).counterparts.onnxruntime.data["dtypes"], op


# ---------------------------------------------------------------------- attention
ATTENTION = json.loads((FIXTURES / "attention.json").read_text())


def _attention_probes():
    """ORT's recorded Attention outputs (fixtures/onnxruntime/attention.npz) and the inputs
    they were computed from (drawn again by the recording script's own seeded function)."""
    sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "scripts"))
    try:
        from record_onnxruntime_outputs import PROBES, attention_inputs
    finally:
        sys.path.pop(0)
    with np.load(FIXTURES / "attention.npz") as f:
        outs = {k: f[k] for k in f.files}
    assert set(outs) == set(PROBES) == set(ATTENTION["probes"])
    for name, qkv in attention_inputs().items():
        fmt, _, _, params = PROBES[name]
        yield name, fmt, params, qkv, outs[name].view(er.dtype(fmt).np_dtype)


def _attention_reference(fmt, qkv, params, **over):
    """The reference the audit builds for ORT's Attention in ``fmt``: the table's contract."""
    t = OnnxRuntimeTarget.__new__(OnnxRuntimeTarget)
    op = "scaled_dot_product_attention"
    kw = {**t._at(fmt, t._declared_keywords, op), **over}
    return er.scaled_dot_product_attention(*qkv, **params, **kw,
                                           contract=t._at(fmt, t.user_contract_for, op))


def test_attention_replay_the_contract_covers_float16_and_float32():
    seen = set()
    for name, fmt, params, qkv, out in _attention_probes():
        if fmt == "float64":
            continue
        seen.add(fmt)
        assert _attention_reference(fmt, qkv, params).covers(out).all(), name
        if fmt == "float16":  # the scores and weights stored in float16: float32 is too tight
            assert not _attention_reference(fmt, qkv, params, compute="float32").covers(
                out).all(), name
    assert seen == {"float16", "float32"}


def test_attention_replay_float64_is_the_function_bodys_float32_sqrt_scale():
    name, fmt, params, qkv, out = next(p for p in _attention_probes() if p[1] == "float64")
    assert not _attention_reference(fmt, qkv, params).covers(out).all()
    t = OnnxRuntimeTarget.__new__(OnnxRuntimeTarget)
    note = t.finding_note("scaled_dot_product_attention", er.dtype("float64"))
    assert "function body" in note and "breaks the ONNX Attention definition" in note
    # the departure's explanation: scale = R32(sqrt(0.125))**2 (exact in float64, taken as
    # it is: not through the float32 attribute's contract) covers it
    sf = float(np.float32(np.sqrt(np.float32(0.125))))
    assert er.scaled_dot_product_attention(*qkv, **params, scale=sf * sf).covers(out).all()
    assert t.finding_note("scaled_dot_product_attention", er.dtype("float32")) == ""


def test_attention_model_is_built_from_the_table_and_3d_groups_are_not_run():
    cp = get_op("scaled_dot_product_attention").counterparts.onnxruntime
    q = np.ones((1, 2, 4, 8), np.float32)
    spec = build_model(cp, [q, q, q], {"is_causal": True, "scale": 0.5})
    assert spec["op_type"] == "Attention" and spec["attrs"] == {"is_causal": 1, "scale": 0.5}
    assert [r for _, _, r in spec["inputs"]] == [4, 4, 4]
    t = OnnxRuntimeTarget.__new__(OnnxRuntimeTarget)
    f = er.dtype("float32")

    class Shaped:
        def __init__(self, *shape):
            self.shape = shape

    assert t.supports("scaled_dot_product_attention", [(f, Shaped(1, 2, 4, 8))] * 3, {})
    assert not t.supports("scaled_dot_product_attention", [(f, Shaped(2, 4, 8))] * 3, {})
    assert not t.supports("scaled_dot_product_attention", [(f, Shaped(1, 2, 4, 8))] * 3,
                          {"enable_gqa": True})  # a parameter Attention does not take


def test_live_attention_outputs_and_reproducer_in_a_fresh_python():
    pytest.importorskip("onnxruntime")
    target = OnnxRuntimeTarget()
    cp = target._cp("scaled_dot_product_attention")
    probes = list(_attention_probes())
    same_cpu = ATTENTION["cpu_features"] == sorted(__import__(
        "exactref._versions", fromlist=["cpu_features"]).cpu_features())
    for name, fmt, params, qkv, out in probes:
        got = target.call("scaled_dot_product_attention", cp, qkv, params)
        assert _attention_reference(fmt, qkv, params).covers(got).all() == (fmt != "float64")
        if same_cpu:  # MLAS picks its kernels by the vector unit
            assert got.tobytes() == out.tobytes(), name
    name, fmt, params, qkv, out = next(p for p in probes if p[1] == "float64")
    src = target.long_reproducer("scaled_dot_product_attention",
                                 dict(zip(("query", "key", "value"), qkv, strict=True)), params)
    assert "helper.make_node('Attention'" in src
    done = subprocess.run([sys.executable, "-"], input=src, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "not covered" in done.stdout, done.stdout + done.stderr


# ---------------------------------------------------------------------- affine quantizers
def _linear_codes():
    from exactref.audit._linear import _CODES

    return _CODES


def test_the_affine_quantizers_are_planned_in_the_tables_code_formats():
    from exactref.audit._plan import plan

    t = OnnxRuntimeTarget.__new__(OnnxRuntimeTarget)
    t.device = "CPUExecutionProvider"
    cfg = AuditConfig(target="onnxruntime", ops=("quantize_linear", "dequantize_linear"))
    groups = plan(t, cfg)
    for op in cfg.ops:
        cp = get_op(op).counterparts.onnxruntime
        mine = [(specs, params) for o, specs, params in groups if o == op]
        # the audit's code formats the table has (int4: packed two to a byte, not fed)
        assert {p["codes"] for _, p in mine} == set(_linear_codes()) & set(cp.data["codes"])
        assert "int4" in _linear_codes() and "int4" not in cp.data["codes"], op
        assert {s[0][0].name for s, _ in mine} == {"float16", "float32"}, op  # no bfloat16
        assert {p["data"] for _, p in mine} == {"tensor", "axis", "blocked"}, op
    x, s, z = np.ones((2, 16), np.float16), np.float16(0.5), np.int8(3)
    spec = build_model(get_op("quantize_linear").counterparts.onnxruntime, [x, s, z],
                       {"dtype": "int8", "axis": 1, "block_size": 0})
    assert spec["op_type"] == "QuantizeLinear" and spec["result"] == "int8"
    assert spec["attrs"] == {"axis": 1, "block_size": 0}
    spec = build_model(get_op("dequantize_linear").counterparts.onnxruntime,
                       [np.ones((2, 16), np.int8), s, z], {"axis": 1, "block_size": 0})
    assert spec["result"] == "float16"  # the scale's format, not the codes'
    assert [f for _, f, _ in spec["inputs"]] == ["int8", "float16", "int8"]


def test_live_affine_quantizers_pass_and_a_stricter_contract_fails_with_reproducers():
    """ORT's QuantizeLinear and DequantizeLinear pass under the table's contract (MLAS's float32
    quotient, float16's in float16); under divide="exact" the double roundings of the float32
    quotient are findings, and each reproducer reproduces in a fresh Python."""
    pytest.importorskip("onnxruntime")
    from exactref.audit import replay_reproducers

    cfg = dict(target="onnxruntime", ops=("quantize_linear", "dequantize_linear"), samples=128)
    report = run_audit(AuditConfig(**cfg))
    assert report.groups and {g.status for g in report.groups} == {"pass"}, \
        [(g.key, g.message) for g in report.groups if g.status != "pass"]
    strict = run_audit(AuditConfig(**{**cfg, "ops": ("quantize_linear",)},
                                   dtypes=("float32",), contract=er.Contract(divide="exact")))
    failed = [g for g in strict.groups if g.status == "fail"]
    assert failed and all(g.worst["ulps"] >= 1 for g in failed)
    assert all("QuantizeLinear" in g.worst["reproducer"] for g in failed)
    assert replay_reproducers(strict) == []
