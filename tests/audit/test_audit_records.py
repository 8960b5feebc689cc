"""The audit reads the op records (issue 20): a library op without a declared contract is
skipped, saying so, unless ``--uncontracted exact``; a shape-planned op's groups, the call a
kernel receives and the result format come from its record's ``AuditPlan`` alone, so a new row
op needs no edit in ``exactref.audit``."""

from __future__ import annotations

import json

import pytest

import exactref as er
from exactref.audit import NO_CONTRACT, AuditConfig, AuditUsageError, _targets, run_audit
from exactref.cli import main
from exactref.ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, get_op, registered


@pytest.fixture
def no_numpy_equivalent(monkeypatch):
    """numpy's add without exactref's equivalent: its record declares no numpy contract."""
    assert get_op("add").counterparts.of("numpy").contract is None
    monkeypatch.setattr(_targets.NumpyTarget, "_equivalent", lambda self, op: None)


def test_an_op_without_a_contract_is_skipped(no_numpy_equivalent):
    r = run_audit(AuditConfig(target="numpy", ops=("add",), dtypes=("float16",),
                              kinds=("same",), samples=16))
    (g,) = r.groups
    assert g.status == NO_CONTRACT and g.cases == 0
    assert g.message.startswith("no contract for numpy's add")
    assert "--uncontracted exact" in g.message
    assert (r.passed, r.failed, r.skipped, r.uncontracted) == (0, 0, 1, 1)
    summary = r.to_json()["summary"]
    assert summary == {"passed": 0, "failed": 0, "unsupported": 0, "no_contract": 1}


def test_uncontracted_exact_audits_against_the_exact_value(no_numpy_equivalent):
    r = run_audit(AuditConfig(target="numpy", ops=("add",), dtypes=("float16", "float32"),
                              kinds=("same",), samples=64, uncontracted="exact"))
    assert [g.status for g in r.groups] == ["pass", "pass"]
    assert all(g.cases == 64 for g in r.groups)


def test_the_cli_says_no_contract(no_numpy_equivalent, tmp_path, capsys):
    out_json = tmp_path / "a.json"
    rc = main(["audit", "numpy", "--ops", "add", "--dtypes", "float16", "--kinds", "same",
               "--no-progress", "--json", str(out_json)])
    captured = capsys.readouterr()
    assert rc == 5, captured  # nothing audited
    assert "no contract" in captured.out
    assert "SKIPPED add (1 groups): no contract for numpy's add" in captured.out
    assert "--uncontracted exact" in captured.err
    data = json.loads(out_json.read_text())
    assert data["config"]["uncontracted"] == "skip"
    assert data["groups"][0]["status"] == NO_CONTRACT
    rc = main(["audit", "numpy", "--ops", "add", "--dtypes", "float16", "--kinds", "same",
               "--no-progress", "--uncontracted", "exact"])
    assert rc == 0 and capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"


def test_an_unknown_uncontracted_is_a_usage_error(capsys):
    with pytest.raises(AuditUsageError, match="expected one of skip, exact"):
        run_audit(AuditConfig(target="numpy", uncontracted="exakt"))
    assert main(["audit", "numpy", "--uncontracted", "exakt", "--no-progress"]) == 4
    assert "did you mean exact?" in capsys.readouterr().err


def test_the_op_sets_are_the_registry_families():
    from exactref.ops import FAMILIES, all_ops

    target = _targets.get_target("numpy")
    from exactref.audit import resolve_ops

    for family in FAMILIES:
        names = tuple(s.name for s in all_ops() if s.family == family)
        if family not in names:  # an op's own name wins (quantize)
            assert resolve_ops((family,), target) == names


def _row_demo(contract):
    """A throwaway row op from a record alone: rms_norm's kernel under a new name, audited by
    the generic "rows" builder from its AuditPlan's data (a new shape, a varied eps)."""
    return OpSpec(
        name="row_demo", operands=("x",), kernel="row root", promotion="rsqrt",
        function=er.rms_norm, summary="rms_norm, declared again",
        params=(Param("normalized_shape", None), Param("weight", None),
                Param("eps", None, audit=(0.5,))),
        kinds=("float",), family="normalizations",
        counterparts=Counterparts(torch=Counterpart("torch.nn.functional.rms_norm",
                                                    contract=contract)),
        audit=AuditPlan(groups="rows", call=("eps",), data={
            "cases": (((3, 40), "random"), ((5, 8), "huge")),
            "operands": ("x", "shape", "weight"), "vary": ("eps",), "min_bits": 16}))


def test_a_new_row_op_is_audited_from_its_record_alone():
    pytest.importorskip("torch")
    with registered(_row_demo({"order": "any"})):
        r = run_audit(AuditConfig(target="torch", ops=("row_demo",),
                                  dtypes=("float32", "bfloat16")))
        keys = [g.key for g in r.groups]
        assert keys == ["row_demo float32[3,40] tuple((40,)) float32[40]",
                        "row_demo float32[5,8]~huge tuple((8,)) float32[8]",
                        "row_demo float32[3,40] tuple((40,)) float32[40] eps=0.5",
                        "row_demo bfloat16[3,40] tuple((40,)) bfloat16[40]",
                        "row_demo bfloat16[5,8]~huge tuple((8,)) bfloat16[8]",
                        "row_demo bfloat16[3,40] tuple((40,)) bfloat16[40] eps=0.5"], keys
        assert r.failed == 0 and r.passed == 6, [(g.key, g.status, g.message) for g in r.groups]


def test_a_row_op_without_a_contract_is_not_audited_by_the_library():
    with registered(_row_demo(None)), pytest.raises(AuditUsageError,
                                                     match="the torch target audits no row_demo"):
        run_audit(AuditConfig(target="torch", ops=("row_demo",), dtypes=("float32",)))


def recording(*args, **kwargs):
    CALLS.append(sorted(kwargs))
    raise NotImplementedError("recording only")


CALLS: list = []


def test_a_kernel_receives_the_keywords_its_record_names(monkeypatch):
    """``AuditPlan.call`` names the keywords a custom kernel receives (row_demo: eps only)."""
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    CALLS.clear()
    with registered(_row_demo(None)):
        r = run_audit(AuditConfig(target=f"{__name__}:recording", op_name="row_demo",
                                  dtypes=("float32",)))
    assert [g.status for g in r.groups] == ["unsupported"] * 3
    assert CALLS == [[], [], ["eps"]]


def test_diff_reads_an_older_report_as_the_default_uncontracted():
    """A report written before ``uncontracted`` existed ran with its default, "skip": no
    configuration difference; "exact" is one."""
    from exactref.cli._audit import config_differences

    old = {"config": {"target": "numpy", "seed": 0}}
    assert config_differences(old, {"config": {"target": "numpy", "seed": 0,
                                               "uncontracted": "skip"}}) == []
    (line,) = config_differences(old, {"config": {"target": "numpy", "seed": 0,
                                                  "uncontracted": "exact"}})
    assert "uncontracted skip -> exact" in line


@pytest.mark.parametrize("target, op", [("numpy", "cbrt"), ("torch", "l2_normalize")])
def test_the_worked_examples_audit(target, op, capsys):
    """docs/architecture.md's worked examples: a function (numpy's contract declared in its
    record) and a row kernel (its groups from its record's AuditPlan alone)."""
    from exactref.ops import op_names

    if op not in op_names():
        pytest.skip(f"{op} is not declared")
    pytest.importorskip(target)
    rc = main(["audit", target, "--ops", op, "--dtypes", "float32", "--kinds", "same",
               "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    last = out.splitlines()[-1]
    assert last.endswith("passed, 0 failed") and not last.startswith("0 "), last


def test_every_record_names_a_builder_and_a_result_rule_the_audit_has():
    from exactref.audit import _RESULT_RULES
    from exactref.audit._plan import BUILDERS, builder
    from exactref.audit._targets import SHAPED_PLANS
    from exactref.ops import all_ops

    for spec in all_ops():
        plan = spec.audit
        assert plan.result in _RESULT_RULES, spec.name
        if spec.plan in SHAPED_PLANS:
            assert builder(spec) in BUILDERS.values(), spec.name
        else:  # the elementwise and block plans have their own groups
            assert plan.groups is None and plan.data is None, spec.name


def test_a_record_naming_no_builder_is_refused_with_the_builders():
    """A typo in a record's AuditPlan(groups=) is a ValueError naming the builders the audit
    has (not a KeyError of a run)."""
    from exactref.audit._plan import builder

    spec = get_op("sum")
    typo = OpSpec(name="sum_typo", operands=spec.operands, kernel=spec.kernel,
                  promotion=spec.promotion, function=spec.function, plan=spec.plan,
                  audit=AuditPlan(groups="row", data=spec.audit.data))
    with registered(typo), pytest.raises(ValueError, match=r"groups='row'.*expected one of "
                                                            r"matrices, windows, rows"):
        builder("sum_typo")


@pytest.mark.parametrize("argv, says", [
    (["numpy", "--ops", "l2_normalize"],
     "the torch target does (exactref audit torch --ops l2_normalize)"),
    (["no_such_kernel_module:fn", "--op", "l2_normalize"],
     "cannot import 'no_such_kernel_module'"),
])
def test_the_worked_examples_wrong_usage_names_the_fix(argv, says, capsys):
    """A stranger's first mistakes with the worked examples: the row op on a library whose
    record names no counterpart there, a kernel module that does not exist; a usage error
    (exit 4) that says what to do, no traceback."""
    assert main(["audit", *argv, "--no-progress"]) == 4
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err, err
    if ":" in argv[0]:
        assert "PYTHONPATH" in err


def test_every_record_with_audit_data_plans_groups():
    """A record's AuditPlan.data is read by keys (``operands``, ``cases``, ...): a misspelt key
    plans no group, and the op would go unaudited without a word; every record that gives data
    gets groups in some format of its kinds."""
    from exactref._formats import FORMATS
    from exactref.audit._plan import builder
    from exactref.audit._targets import SHAPED_PLANS
    from exactref.ops import all_ops

    formats = set(FORMATS.values())
    for spec in all_ops():
        if spec.plan in SHAPED_PLANS and spec.audit.data is not None:
            make = builder(spec).groups
            assert any(make(spec, f) for f in formats if f.kind in spec.kinds), spec.name
