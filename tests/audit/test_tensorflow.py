"""The TensorFlow target (exactref.audit._tensorflow) and its table (exactref.ops._tensorflow).

Replay tests run without TensorFlow: TensorFlow's outputs for the audit's own inputs were
recorded by scripts/record_tensorflow_outputs.py (tests/audit/fixtures/tensorflow/outputs.json,
with the versions and CPU features they were recorded on); a target whose call returns the
recorded output runs the real audit under the table's contracts. Live tests need TensorFlow.
"""

import base64
import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import exactref.audit as audit
from exactref.audit import AuditConfig, run_audit
from exactref.audit._tensorflow import TensorFlowTarget
from exactref.ops import get_op

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests/audit/fixtures/tensorflow/outputs.json"


def _recorder():
    spec = importlib.util.spec_from_file_location(
        "record_tensorflow_outputs", ROOT / "scripts/record_tensorflow_outputs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def recorded():
    return json.loads(FIXTURE.read_text())


class Replay(TensorFlowTarget):
    """TensorFlow's recorded outputs, replayed through the target's own contracts."""

    def __init__(self, doc):
        self.doc, self.device = doc, "/CPU:0"
        self.key = _recorder().call_key

    def versions(self):
        return {"tensorflow": self.doc["recorded_on"]["tensorflow"]}

    def unsupported(self, exc):
        return isinstance(exc, NotImplementedError)

    def call(self, op, cp, operands, params):
        rec = self.doc["outputs"].get(self.key(op, operands, params))
        if rec is None:
            raise NotImplementedError(f"no recorded output for this {op} call")
        data = np.frombuffer(base64.b64decode(rec["data"]), dtype=np.dtype(rec["dtype"])
                             if rec["dtype"] != "bfloat16" else _bf16())
        return data.reshape(rec["shape"])


def _bf16():
    import ml_dtypes

    return ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def replayed(recorded):
    target = Replay(recorded)
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    try:
        report = run_audit(AuditConfig(target="tensorflow", ops=tuple(recorded["ops"]),
                                       samples=recorded["samples"]))
    finally:
        audit.get_target = real
    return target, report


def _departure_formats(op):
    cp = get_op(op).counterparts.of("tensorflow")
    return {f for d in cp.departures for f in d["dtypes"]}


def test_the_fixture_says_what_it_was_recorded_on(recorded):
    on = recorded["recorded_on"]
    assert on["tensorflow"] and "cpu_features" in on
    assert FIXTURE.stat().st_size < 300_000


def test_replay_reproduces_the_recorded_statuses(recorded, replayed):
    _, report = replayed
    got = {g.key: g.status for g in report.groups}
    assert got == recorded["statuses"]


def test_every_failure_is_a_declared_departure_and_every_other_group_passes(replayed):
    _, report = replayed
    for g in report.groups:
        fmt = g.got_dtype if g.got_dtype != "bool" else g.key.split()[1].split("[")[0]
        if g.status == "fail":
            assert fmt in _departure_formats(g.op), (g.key, g.message)
            assert "known:" in g.message, g.key  # the departure and its spec are cited
        else:
            assert g.status == "pass", (g.key, g.status, g.message)


@pytest.mark.parametrize("op, fmt", [("reciprocal", "float32"), ("erf", "float64"),
                                     ("cumsum", "float16"), ("sum", "float16"),
                                     ("matmul", "bfloat16")])
def test_the_issues_deviations_fail(replayed, op, fmt):
    _, report = replayed
    failed = [g for g in report.groups if g.op == op and g.got_dtype == fmt
              and g.status == "fail"]
    assert failed, (op, fmt)
    assert all(g.worst and "import tensorflow as tf" in g.worst["reproducer"] for g in failed)


def test_flushing_is_the_declared_contract_not_a_finding(replayed):
    # FTZ/DAZ is TensorFlow's design (port::ScopedFlushDenormal): add and multiply, whose
    # outputs include flushed subnormals, pass under flush='both' and would fail without it
    _, report = replayed
    for op in ("add", "multiply", "less"):
        assert get_op(op).counterparts.of("tensorflow").contract.get("flush") == "both"
        assert all(g.status == "pass" for g in report.groups if g.op == op)


def test_reproducers_are_tensorflow_source(replayed):
    target, report = replayed
    g = next(g for g in report.groups if g.op == "reciprocal" and g.status == "fail")
    src = g.worst["reproducer"]
    assert "tf.math.reciprocal(t0).numpy()" in src and "with tf.device('/CPU:0')" in src
    compile(src, "<reproducer>", "exec")


# ---------------------------------------------------------------------- live
@pytest.fixture(scope="module")
def tf_target():
    pytest.importorskip("tensorflow")
    return audit.get_target("tensorflow")


def test_an_unknown_device_names_the_devices(tf_target):
    with pytest.raises(ValueError, match="/device:CPU:0"):
        TensorFlowTarget("/GPU:7")


@pytest.mark.slow
def test_live_audit_and_a_reproducer_that_reproduces(tf_target):
    report = run_audit(AuditConfig(target="tensorflow", ops=("add", "reciprocal"),
                                   dtypes=("float32",), samples=64))
    status = {g.key: g.status for g in report.groups}
    assert all(s == "pass" for k, s in status.items() if k.startswith("add")), status
    bad = next(g for g in report.groups if g.op == "reciprocal" and g.status == "fail")
    done = subprocess.run([sys.executable, "-c", bad.worst["reproducer"]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "not covered" in done.stdout, done.stdout + done.stderr


# ---------------------------------------------------------------------- convolutions
CONV_FIXTURE = ROOT / "tests/audit/fixtures/tensorflow/conv.json"


@pytest.fixture(scope="module")
def conv_replayed():
    doc = json.loads(CONV_FIXTURE.read_text())
    target = Replay(doc)
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    try:
        report = run_audit(AuditConfig(target="tensorflow", ops=tuple(doc["ops"]),
                                       dtypes=tuple(doc["dtypes"]), samples=doc["samples"]))
    finally:
        audit.get_target = real
    return doc, report


def test_conv_replay_reproduces_the_recorded_statuses(conv_replayed):
    doc, report = conv_replayed
    assert CONV_FIXTURE.stat().st_size < 300_000
    assert {g.key: g.status for g in report.groups} == doc["statuses"]
    assert {g.got_dtype for g in report.groups} == set(doc["dtypes"])


def test_conv_float32_passes_and_half_formats_fail_only_by_the_bias_add(conv_replayed):
    _, report = conv_replayed
    for g in report.groups:
        if g.got_dtype == "float32":
            assert g.status == "pass", (g.key, g.message)
        elif g.status == "fail":  # every half-format failure: the declared departure
            assert g.got_dtype in ("float16", "bfloat16") and len(g.operands) == 3 and \
                g.operands[2] != "None"  # a group with a bias
            assert "known: with a bias" in g.message and "breaks the registry's conv" in \
                g.message, g.message
            assert "tf.nn.bias_add" in g.worst["reproducer"]
            compile(g.worst["reproducer"], "<conv reproducer>", "exec")
    assert any(g.status == "fail" for g in report.groups)


def test_conv_calls_are_channels_last_with_explicit_padding():
    t = TensorFlowTarget.__new__(TensorFlowTarget)
    t.device = "/CPU:0"
    x, w = np.ones((2, 16, 12, 12), np.float32), np.ones((16, 16, 3, 3), np.float32)
    cp = get_op("conv2d").counterparts.tensorflow
    src = "\n".join(t._conv_lines(cp, ["x_", "w_", None], {"padding": "same", "dilation": 2},
                                  [x, w, None]))
    assert "tf.transpose(tf.constant(x_), (0, 2, 3, 1))" in src
    assert "tf.transpose(tf.constant(w_), (2, 3, 1, 0))" in src
    assert "padding=[[0, 0], [2, 2], [2, 2], [0, 0]], dilations=[2, 2]" in src
    assert "bias_add" not in src and "(0, 3, 1, 2)" in src
    cp = get_op("conv1d").counterparts.tensorflow
    x1, w1, b1 = np.ones((2, 32, 64)), np.ones((32, 1, 4)), np.ones(32)
    src = "\n".join(t._conv_lines(cp, ["a", "b", "c"], {"padding": 3, "groups": 32},
                                  [x1, w1, b1]))
    assert "tf.pad(x, [[0, 0], [3, 3], [0, 0]])" in src and "padding='VALID'" in src
    assert "tf.nn.conv1d(x, w, stride=[1]" in src and "tf.nn.bias_add(y, tf.constant(c))" in src


def test_live_conv_bias_is_a_second_rounding_in_the_half_format(tf_target):
    import exactref as er

    rng = np.random.default_rng(1)
    for op, xs, ws, p in (("conv2d", (2, 32, 14, 14), (32, 1, 3, 3),
                           {"padding": 1, "groups": 32}),
                          ("conv1d", (2, 32, 64), (32, 32, 5), {"padding": "same"})):
        cp = tf_target._cp(op)
        for fmt in ("float16", "bfloat16"):
            x, w, b = (er.asarray(rng.standard_normal(s), fmt).numpy()
                       for s in (xs, ws, ws[:1]))
            conv = tf_target.call(op, cp, [x, w, None], p)
            # the conv alone: a float32 accumulator rounded once to the half format
            assert getattr(er, op)(x, w, None, **p, compute="float32",
                                   contract=er.Contract(flush="both")).covers(conv).all()
            both = tf_target.call(op, cp, [x, w, b], p)
            shape = (-1,) + (1,) * (x.ndim - 2)
            twice = (conv.astype(np.float32) + b.astype(np.float32).reshape(shape)).astype(
                conv.dtype)
            assert both.tobytes() == twice.tobytes(), (op, fmt)  # R(R(conv) + b), bit for bit


def test_half_format_softplus_is_a_declared_departure_not_left_out():
    cp = get_op("softplus").counterparts.of("tensorflow")
    assert {"float16", "bfloat16"} <= set(cp.data["dtypes"])
    assert _departure_formats("softplus") == {"float16", "bfloat16"}
    t = TensorFlowTarget.__new__(TensorFlowTarget)
    assert t._at("float16", t.declared, "softplus")["threshold"] == float("inf")


def test_live_half_format_softplus_is_not_float32_rounded_once(tf_target):
    import exactref as er

    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    cp = tf_target._cp("softplus")
    out = tf_target.call("softplus", cp, [x], {})
    ref32 = tf_target.call("softplus", cp, [x.astype(np.float32)], {}).astype(np.float16)
    differ = int((ref32.view(np.uint16) != out.view(np.uint16)).sum())
    assert 1_000 < differ < 20_000, differ  # 9,070 on 2.21.0
    kw = tf_target._at("float16", tf_target._declared_keywords, "softplus")
    cov = er.softplus(x, **kw, contract=tf_target._at("float16", tf_target.user_contract_for,
                                                      "softplus")).covers(out)
    assert not cov.all()
