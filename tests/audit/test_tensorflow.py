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
