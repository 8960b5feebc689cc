"""The contract layer (exactref._contract): one object for every implementation freedom, applied
to every op by er.<op>, refused by name where an op has no such freedom."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

import exactref as er
from exactref import ops
from exactref._contract import DIMENSIONS, ContractedOp

F32 = "float32"


# ------------------------------------------------------------------------------- the object
def test_fields_are_the_dimensions_plus_per_op_tables():
    names = [f for f in er.Contract.__dataclass_fields__]
    assert names[:-1] == list(DIMENSIONS) and names[-1] == "ops"


@pytest.mark.parametrize("bad, words", [
    (dict(compute="float33"), "compute='float33' is not a format"),
    (dict(flush="sometimes"), "flush='sometimes'"),
    (dict(convert="maybe"), "convert='maybe'"),
    (dict(fused="perhaps"), "fused='perhaps'"),
    (dict(accuracy=-1.0), "accuracy=-1.0"),
    (dict(accuracy=float("nan")), "accuracy=nan"),
    (dict(order=3), "order=3; expected a string"),
    (dict(params={"eps": "float99"}), "params['eps']='float99' is not a format"),
    (dict(params=["eps"]), "params=['eps']"),
])
def test_bad_fields_are_refused_with_what_was_expected(bad, words):
    with pytest.raises(er.ContractError, match=words.replace("[", r"\[").replace("(", r"\(")):
        er.Contract(**bad)
    with pytest.raises(ValueError):  # a ValueError, and a TypeError
        er.Contract(**bad)


def test_values_are_normalised():
    c = er.Contract(compute=np.float32, fused="False", accuracy="2.5",
                    params={"eps": np.dtype("float32")})
    assert (c.compute, c.fused, c.accuracy, c.params) == (F32, False, 2.5, {"eps": F32})
    assert er.Contract(fused="either").fused == "either"
    assert er.Contract(accuracy="sleef_u10").accuracy == "sleef_u10"


def test_merge_replace_and_per_op_tables():
    a = er.Contract(order="pairwise", compute=F32, ops={"sum": {"order": "sequential"}})
    b = er.Contract(order="any", flush="both", ops={"sum": {"compute": "float64"}})
    m = a | b
    assert (m.order, m.compute, m.flush) == ("any", F32, "both")
    assert m.for_op("sum").fields() == {"compute": "float64", "order": "sequential",
                                        "flush": "both"}
    assert m.for_op("add").fields() == {"compute": F32, "order": "any", "flush": "both"}
    assert a.replace(order=None).fields() == {"compute": F32,
                                              "ops": {"sum": er.Contract(order="sequential")}}
    assert not er.Contract() and er.Contract(order="any")
    assert er.Contract().describe() == "the ops' defaults"


def test_with_sets_is_the_cli_grammar():
    c = er.Contract().with_sets(["order=pairwise", "fused=false", "accuracy=4",
                                 "params.eps=float32", "ops.sum.order=sequential"])
    assert c.fields() == {"order": "pairwise", "fused": False, "accuracy": 4.0,
                          "params": {"eps": F32}, "ops": {"sum": er.Contract(order="sequential")}}
    assert c.with_sets("order=default").order is None
    for bad in ("order", "=pairwise", "colour=blue"):
        with pytest.raises(er.ContractError):
            er.Contract().with_sets([bad])


def test_toml_and_pyproject(tmp_path):
    f = tmp_path / "kernel.toml"
    f.write_text('compute = "float32"\norder = "pairwise"\n[params]\neps = "float32"\n'
                 '[ops.var]\nalgorithm = "welford"\n')
    c = er.Contract.from_toml(f)
    assert c.fields() == {"compute": F32, "order": "pairwise", "params": {"eps": F32},
                          "ops": {"var": er.Contract(algorithm="welford")}}
    proj = tmp_path / "proj"
    (proj / "src" / "deep").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[project]\nname = "k"\n[tool.exactref]\n'
                                         'flush = "both"\n')
    assert er.Contract.from_pyproject(proj / "src" / "deep") == er.Contract(flush="both")
    assert er.Contract.from_toml(proj / "pyproject.toml") == er.Contract(flush="both")
    (tmp_path / "bad.toml").write_text("colour = 'blue'\n")
    with pytest.raises(er.ContractError, match="unknown contract field 'colour'"):
        er.Contract.from_toml(tmp_path / "bad.toml")
    (tmp_path / "broken.toml").write_text("order = \n")
    with pytest.raises(er.ContractError, match="not valid TOML"):
        er.Contract.from_toml(tmp_path / "broken.toml")
    with pytest.raises(er.ContractError, match="cannot read"):
        er.Contract.from_toml(tmp_path / "missing.toml")


# ------------------------------------------------------------------------------- the layer
def test_every_registered_op_goes_through_the_layer():
    for spec in ops.all_ops():
        fn = getattr(er, spec.name)
        fn = getattr(fn, "_contracted", fn)  # er.quantize: the package calls its op
        assert isinstance(fn, ContractedOp), spec.name
        assert "contract" in inspect.signature(fn).parameters, spec.name


def test_ops_keep_their_attributes_docs_and_pickle():
    assert er.softmax.backward is ops.get_op("softmax").backward
    assert er.add.__name__ == "add" and "x + alpha" in er.add.__doc__
    assert pickle.loads(pickle.dumps(er.add)) is er.add


def test_a_keyword_an_op_lacks_is_refused_by_name():
    with pytest.raises(er.ContractError, match=r"add\(\) takes no order=: it has no "
                                               r"accumulation\. It takes alpha, dtype"):
        er.add(1.0, 2.0, order="pairwise")
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        er.sum([1.0], colour="blue")


def test_a_contract_applies_the_fields_an_op_has():
    c = er.Contract(order="sequential", compute="float64")
    r = er.sum(er.asarray(np.ones(8), F32), contract=c)
    assert r.contract == c
    assert er.add(1.0, 2.0, contract=c).contract == er.Contract(compute="float64")


def test_keywords_win_over_contract_over_ambient():
    x = er.asarray(np.linspace(-1, 1, 64) ** 3, F32)
    with er.use_contract(order="any"):
        assert er.sum(x).contract.order == "any"
        assert er.sum(x, contract=er.Contract(order="sequential")).contract.order \
            == "sequential"
        seq = er.sum(x, order="sequential", contract=er.Contract(order="pairwise"))
    assert seq.contract.order == "sequential"
    tight = np.asarray(er.sum(x, order="sequential").tolerance_ulps())
    assert np.array_equal(np.asarray(seq.tolerance_ulps()), tight)
    assert er.current_contract() == er.Contract()


def test_the_contract_changes_the_tolerance():
    x = er.asarray(np.linspace(-1, 1, 1000) ** 3 + 0.25, F32)
    loose = er.sum(x, contract=er.Contract(order="any")).tolerance_ulps()
    tight = er.sum(x, contract=er.Contract(order="pairwise")).tolerance_ulps()
    assert float(np.max(tight)) < float(np.max(loose))


def test_params_stored_in_a_narrower_format():
    # ONNX stores epsilon as float32: 1e-5 is then 9.99999974737875e-06 in a float64 norm
    x = er.asarray(np.array([[1.0, 1.0 + 2**-40, 1.0 - 2**-40, 1.0]]), "float64")
    plain = er.layer_norm(x, (4,), eps=1e-5)
    stored = er.layer_norm(x, (4,), eps=1e-5, contract=er.Contract(params={"eps": F32}))
    assert stored.contract.params == {"eps": F32}
    assert not np.array_equal(np.asarray(plain.rounded), np.asarray(stored.rounded))
    direct = er.layer_norm(x, (4,), eps=float(np.float32(1e-5)))
    assert np.array_equal(np.asarray(direct.rounded), np.asarray(stored.rounded))
    with pytest.raises(er.ContractError, match="is not a number"):
        er.layer_norm(x, (4,), eps="tiny", contract=er.Contract(params={"eps": F32}))
    # an op without the parameter: not applicable, nothing recorded
    assert er.add(1.0, 2.0, contract=er.Contract(params={"eps": F32})).contract == er.Contract()


def test_convert_inputs_rounds_operands_into_the_compute_format_first():
    u = 2.0**-23
    a = np.array([1 + 0.7 * u, 3.0])
    b = np.array([1 + 0.4 * u, 1.0])
    r = er.add(a, b, contract=er.Contract(compute=F32, convert="inputs"))
    assert r.rounded.dtype.name == "float64"  # the output format of the given operands
    # a kernel that converts its inputs: (1 + u) + 1 = 2 + u, a tie, gives 2 in float32; the
    # exact 2 + 1.1 u rounded in float32 is 2 + 2 u
    out = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float64)
    assert out.tolist() == [2.0, 4.0]
    assert r.covers(out).all()
    assert not er.add(a, b, compute=F32).covers(out).all()
    with pytest.raises(er.ContractError, match="names none"):
        er.add(a, b, contract=er.Contract(convert="inputs"))


def test_generic_flush_of_an_op_without_its_own():
    sub = np.float32(2.0**-130)  # a float32 subnormal
    x = er.asarray(np.array([sub, 1.0], dtype=np.float32), F32)
    base = er.cast(x, to="bfloat16")
    flushed_out = np.array([0.0, 1.0])
    assert not base.covers(flushed_out).all()
    r = er.cast(x, to="bfloat16", contract=er.Contract(flush="outputs"))
    assert r.contract.flush == "outputs" and r.covers(flushed_out).all()
    assert r.covers(np.asarray(base.rounded)).all()  # flushing is a freedom, not a rule
    assert not r.covers([2.0**-120, 1.0]).all()


# ------------------------------------------------------------------------------- Results
def test_under_recomputes_with_the_call_keywords_giving_way():
    x = er.asarray(np.linspace(-1, 1, 300) ** 3 + 0.1, F32)
    r = er.sum(x, order="sequential")
    assert r.call[0] == "sum"
    u = r.under(order="any")
    assert u.contract.order == "any"
    assert float(np.max(u.tolerance_ulps())) >= float(np.max(r.tolerance_ulps()))
    assert r.under(er.Contract(compute="float64")).contract == er.Contract(
        compute="float64", order="sequential")  # the call's own order stays
    out = np.asarray(er.sum(x, order="any").highest, dtype=np.float32)
    assert r.covers(out, contract=er.Contract(order="any")).all()
    with pytest.raises(ValueError, match="records no op call"):
        er.Result(er.asarray([1.0]), [[np.array([1.0])]]).under(order="any")


def test_ulps_from_exact():
    r = er.exp(er.asarray([1.0, 2.0, 0.0], "bfloat16"))
    d = er.ulps_from_exact(r, [2.71875, 7.4375, np.nan])
    assert d.tolist() == [0.0, 2.0, np.inf]
    z = er.multiply(er.asarray([0.0], F32), -1.0)
    assert er.ulps_from_exact(z, [0.0]).tolist() == [0.0]
    with pytest.raises(TypeError, match="takes a Result"):
        er.ulps_from_exact([1.0], [1.0])
    with pytest.raises(ValueError, match="shape"):
        er.ulps_from_exact(r, [1.0])


def test_not_correctly_rounded_is_a_finding():
    x = er.asarray(np.linspace(0.1, 3, 64), F32)
    r = er.tanh(x, accuracy=2)  # 1 ulp from the rounded value is within 1.5 of the exact
    exact = np.asarray(r.rounded._wide())
    off = exact.copy()
    off[::4] = np.nextafter(exact[::4].astype(np.float32), np.float32(2)).astype(np.float64)
    cov = r.covers(off)
    assert cov.all()
    assert int(np.count_nonzero(cov.not_rounded)) == 16
    assert "16 of 64 elements (25%) not correctly rounded (up to 1 ulp" in cov.summary()
    assert "within the '2 ulp' accuracy" in cov.findings[0]
    assert er.tanh(x, accuracy=2).covers(exact).findings == []
    assert er.tanh(x, accuracy="correct").covers(exact).findings == []


def test_the_docs_table_of_fields_per_family_is_current():
    from pathlib import Path

    from exactref._contract import dimensions_table

    doc = (Path(__file__).resolve().parents[1] / "docs" / "contract.md").read_text()
    assert dimensions_table() in doc, (
        "docs/contract.md's table is stale: regenerate it with "
        "exactref._contract.dimensions_table()")
    for name, (what, _) in DIMENSIONS.items():
        assert f"| `{name}` | {what} |" in doc, name


def test_tolerance_ulps_is_one_spelling():
    r = er.sum(er.asarray(np.linspace(-1, 1, 64) ** 3 + 0.5, F32), order="pairwise")
    cov = r.covers(np.asarray(r.rounded._wide()))
    assert np.array_equal(cov.tolerance_ulps(), np.asarray(r.tolerance_ulps()))
    med, top = cov.tolerance_stats
    assert med == float(np.median(r.tolerance_ulps())) and top >= med
