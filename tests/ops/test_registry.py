"""The op registry: one record per op, read by everything; the docs' table is made from it."""

from __future__ import annotations

import inspect
import pathlib
import re

import pytest

import exactref as er
from exactref import ops

DOCS = pathlib.Path(__file__).parents[2] / "docs" / "arithmetic.md"


def test_every_catalog_name_is_registered_and_public():
    names = ops.op_names()
    records = ops.all_ops()
    assert [s.name for s in records] == list(names)
    for s in records:
        assert getattr(er, s.name) is s.function, s.name
        assert s.name in er.__all__
        assert s.kernel in ops.KERNELS
        assert s.function.spec is s or s.family == "linalg"


def test_every_op_has_an_audit_plan_and_a_wrong_one_is_refused():
    plans = {s.name: s.plan for s in ops.all_ops()}
    assert set(plans.values()) <= set(ops.PLANS)
    # the elementwise family is drawn elementwise; the long sums and row ops on shapes
    assert plans["add"] == "elementwise" and plans["exp"] == "elementwise"
    assert plans["matmul"] == plans["softmax"] == plans["layer_norm"] == "shapes"
    assert plans["quantize"] == "blocks"
    base = ops.get_op("add")
    with pytest.raises(ValueError, match="unknown audit plan 'rows'; expected one of elementwise"):
        ops.OpSpec(name="x", operands=("a",), kernel="long sum", promotion="sum",
                   function=base.function, plan="rows")


def test_unknown_names_raise_with_close_matches():
    with pytest.raises(ValueError, match="unknown op 'maximun'; close matches: maximum"):
        ops.get_op("maximun")
    with pytest.raises(AttributeError):
        er.maximun  # noqa: B018
    with pytest.raises(ValueError) as info:  # the message lists every op (the docs elide it)
        ops.get_op("devide")
    assert str(info.value).endswith(f"Known ops: {', '.join(ops.op_names())}.")


def test_signature_is_read_from_the_record():
    spec = ops.get_op("addcdiv")
    sig = inspect.signature(spec.function)
    assert list(sig.parameters)[:3] == list(spec.operands)
    assert sig.parameters["value"].default == 1
    assert {"dtype", "rounding", "overflow", "compute", "flush"} <= set(sig.parameters)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        er.divide([1.0], [2.0], alpha=2)
    with pytest.raises(TypeError, match="takes the operands x, y"):
        er.divide([1.0])


def test_backward_and_counterparts_in_the_records():
    for name in ("add", "subtract", "multiply", "fma", "addcmul", "matmul", "sum"):
        spec = ops.get_op(name)
        assert spec.backward is not None and spec.function.backward is spec.backward, name
    assert ops.get_op("divide").counterparts.numpy == "np.divide"
    assert ops.get_op("fma").counterparts.torch is None  # no fused op in torch


def test_no_branch_on_op_names_in_the_library():
    """An op is one declaration: nothing outside it asks which op it is."""
    src = pathlib.Path(er.__file__).parent
    pattern = re.compile(r"\bop(_name)?\s*(==|!=|in)\s*[\(\"']")
    offenders = [f"{p.relative_to(src)}:{i}" for p in src.rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1)
                 if pattern.search(line)]
    assert not offenders, offenders


def test_docs_table_is_the_registry():
    text = DOCS.read_text()
    assert ops.markdown_table("arithmetic") in text, (
        "docs/arithmetic.md's op table differs from the registry; paste "
        "exactref.ops.markdown_table('arithmetic') there")
