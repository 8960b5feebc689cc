"""The runtimes' shared target (exactref.audit._runtime), the tables' attachment to the records
and the reproducers' replay; each runtime's own tests are tests/audit/test_<runtime>.py."""

import json
import subprocess
import sys

import numpy as np
import pytest

import exactref as er
from exactref.audit import RUNTIMES, AuditConfig, get_target, replay_reproducers, run_audit
from exactref.audit._runtime import RuntimeTarget, kernel_formats
from exactref.ops import all_ops, get_op
from exactref.ops._registry import RUNTIME_TABLES, Counterpart


def test_every_table_entry_is_attached_to_its_record():
    import importlib

    assert set(RUNTIME_TABLES) == set(RUNTIMES)
    for library, module in RUNTIME_TABLES.items():
        table = importlib.import_module(module).COUNTERPARTS
        for name, cp in table.items():
            assert isinstance(cp, Counterpart), (library, name)
            assert get_op(name).counterparts.of(library) is cp, (library, name)
            assert kernel_formats(cp), (library, name)  # it names formats exactref knows


class _Fake(RuntimeTarget):
    """A runtime whose table is one op (add, float32 and bfloat16), its kernel numpy's."""

    name = library_key = "onnxruntime"
    package = "numpy"

    def __init__(self, rounding_bug=False):
        self.rounding_bug = rounding_bug

    def _cp(self, op):
        return Counterpart("Add", contract={}, data={"dtypes": ("float32", "bfloat16")}) \
            if op == "add" else None

    def call(self, op, cp, operands, params):
        x, y = (np.asarray(v) for v in operands)
        out = x.astype(np.float64) + y.astype(np.float64)
        out = out.astype(x.dtype)
        if self.rounding_bug and x.dtype == np.float32:  # one ulp toward zero
            out = np.nextafter(out, np.float32(0))
        return out

    def call_lines(self, op, cp, names, params):
        bug = ("import numpy as np\nout = (" + " + ".join(f"{n}.astype(np.float64)"
                                                    for n in names) + ")")
        bug += f"\nout = out.astype({names[0]}.dtype)"
        if self.rounding_bug:
            bug += "\nout = np.nextafter(out, np.float32(0))"
        return [bug]


def test_supports_same_format_arrays_of_the_kernels_formats_only():
    t = _Fake()
    f32, f64, bf16 = (er.dtype(n) for n in ("float32", "float64", "bfloat16"))
    assert t.supports("add", [(f32, "n"), (f32, "n")], {})
    assert t.supports("add", [(bf16, "n"), (bf16, "0d")], {})
    assert not t.supports("add", [(f32, "n"), (bf16, "n")], {})  # mixed: no kernel takes it
    assert not t.supports("add", [(f64, "n"), (f64, "n")], {})  # no float64 kernel
    assert not t.supports("add", [(f32, "n"), (None, 2.5)], {})  # a Python scalar
    assert not t.supports("add", [(f32, "n"), (f32, "n")], {"alpha": 2})  # a param it lacks
    assert not t.supports("exp", [(f32, "n")], {})  # not in its table


def _audit(target, **kw):
    import exactref.audit as audit

    cfg = AuditConfig(target="numpy", ops=("add",), samples=64, **kw)
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    try:
        return run_audit(cfg)
    finally:
        audit.get_target = real


def test_a_correct_kernel_passes_and_a_wrong_one_fails_with_a_reproducer_that_reproduces():
    good = _audit(_Fake())
    assert good.failed == 0 and good.passed > 0
    bad = _audit(_Fake(rounding_bug=True))
    failed = [g for g in bad.groups if g.status == "fail"]
    assert failed and all(g.worst and g.worst["reproducer"] for g in failed)
    assert replay_reproducers(bad) == []  # each exits 1 in a fresh python
    # a reproducer that does not reproduce is reported (here: the correct kernel's lines)
    d = bad.to_json()
    for g in d["groups"]:
        if g["status"] == "fail":
            g["worst"]["reproducer"] = g["worst"]["reproducer"].replace(
                "out = np.nextafter", "_ = np.nextafter")
    missed = replay_reproducers(d)
    assert missed and all(m["exit"] == 0 for m in missed)


def test_replay_reads_a_json_report_and_refuses_what_is_not_one(tmp_path):
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"groups": [{"status": "fail", "key": "k", "worst": {
        "reproducer": "raise SystemExit(0)"}}]}))
    assert [m["group"] for m in replay_reproducers(str(path))] == ["k"]
    with pytest.raises(ValueError, match="expected an audit report"):
        replay_reproducers([1, 2])
    with pytest.raises(ValueError, match="timeout"):
        replay_reproducers(str(path), timeout=0)
    with pytest.raises(ValueError, match="--json PATH. writes, but it cannot be read"):
        replay_reproducers(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("groups: []")
    with pytest.raises(ValueError, match="not JSON"):
        replay_reproducers(tmp_path / "bad.json")


def test_default_ops_are_the_tables_ops():
    t = _Fake.__new__(_Fake)
    base = RuntimeTarget.__new__(RuntimeTarget)
    base.library_key = "onnxruntime"
    assert base.default_ops == tuple(s.name for s in all_ops()
                                     if s.counterparts.of("onnxruntime"))
    assert t.runtime_params("add") == {}


def test_nothing_audited_names_the_formats_each_op_runs_in():
    base = RuntimeTarget.__new__(RuntimeTarget)
    base.library_key = base.name = "onnxruntime"
    hint = base.formats_hint(["erf", "cast", "not_an_op"])
    assert hint == ("; on onnxruntime: erf runs in float16, float32; cast runs in float16, "
                    "bfloat16, float32, float64")
    assert base.formats_hint(["add"]).endswith("add runs in float16, float32, float64")


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_a_missing_runtime_names_its_extra(runtime, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_runtime(name, *a, **k):
        if name.partition(".")[0] in (runtime, "onnx"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_runtime)
    with pytest.raises(ImportError, match=rf"exactref\[{runtime}\]"):
        get_target(runtime)


def test_the_cli_takes_a_runtime_device_and_refuses_it_for_numpy():
    done = subprocess.run([sys.executable, "-m", "exactref", "audit", "numpy", "--device",
                           "GPU"], capture_output=True, text=True)
    assert done.returncode == 4 and "applies to the torch target and the runtimes'" in \
        done.stderr, done.stderr
