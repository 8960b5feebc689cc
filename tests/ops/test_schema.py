"""The registry's schema (issue 20): records are validated when made, counterparts carry each
library's contract, and the registry answers queries."""

from __future__ import annotations

import pickle

import pytest

import exactref as er
from exactref.ops import (
    FAMILIES,
    KINDS,
    AuditPlan,
    Counterpart,
    Counterparts,
    OpSpec,
    all_ops,
    get_op,
    names_of,
    op_names,
    select,
)


def _spec(**kw):
    base = dict(name="t", operands=("x",), kernel="selection", promotion="negative",
                function=lambda x: x)
    return OpSpec(**{**base, **kw})


def test_every_record_is_valid():
    specs = all_ops()
    assert len(specs) == len(op_names())
    for s in specs:
        assert set(s.kinds) <= set(KINDS) and s.family in FAMILIES
        assert isinstance(s.promotion, str) and er.promotion.canonical_op(s.promotion)
        assert isinstance(s.audit, AuditPlan)
        for lib in s.counterparts.libraries():
            assert s.counterparts.get(lib) == s.counterparts.of(lib).call


@pytest.mark.parametrize("bad,match", [
    (dict(kinds=("float", "real")), "kinds"), (dict(kinds=()), "kinds"),
    (dict(family="misc"), "unknown family"), (dict(promotion=None), "promotion is required"),
    (dict(kernel="magic"), "unknown kernel"), (dict(plan="random"), "unknown audit plan"),
    (dict(audit={}), "AuditPlan"),
])
def test_records_are_validated_when_made(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _spec(**bad)


def test_an_unknown_promotion_op_is_refused_at_registration():
    with pytest.raises(ValueError, match="not an op of the promotion data"):
        er.ops.register(_spec(name="throwaway_bad", promotion="frobnicate"), extra=True)
    assert "throwaway_bad" not in op_names()


def test_counterparts_accept_strings_and_counterparts():
    c = Counterpart("np.cbrt", contract={"accuracy": "numpy"}, departures=("x",),
                    source="numpy 2.4", data={"loop": "f"})
    cp = Counterparts("torch.cbrt", c, None, onnxruntime="Cbrt")
    assert cp.numpy is c and cp.of("numpy").contract == c.contract
    assert cp.get("torch") == "torch.cbrt" and cp.of("torch").contract is None
    assert cp.of("jax") is None and cp.get("tensorflow") is None
    assert cp.libraries() == ("torch", "numpy", "onnxruntime")
    assert f"{cp.numpy}" == "np.cbrt" and pickle.loads(pickle.dumps(c)).data == {"loop": "f"}
    with pytest.raises(ValueError, match="unknown library"):
        cp.get("mxnet")
    with pytest.raises(TypeError):
        Counterparts(torch=3)


def test_queries():
    assert names_of("exactref.arithmetic.roots") == ("sqrt", "rsqrt")
    assert set(names_of("exactref.linalg")) >= {"matmul", "softmax", "layer_norm"}
    fns = select(kernel="function")
    assert fns and all(s.kernel == "function" for s in fns)
    assert [s.name for s in select(family="normalizations")] == [
        s.name for s in all_ops() if s.family == "normalizations"]
    assert select(kinds=lambda k: "complex" in k, kernel="root") == (get_op("sqrt"),)
    with pytest.raises(AttributeError, match="select by one of name, operands"):
        select(colour="red")


def test_select_compares_the_attributes_that_hold_callables():
    """A callable is a test of the attribute, except for the callables a record holds: the
    op's function (or its backward) selects its record, and is never called."""
    assert select(function=er.add) == (get_op("add"),)
    assert get_op("add") not in select(backward=None)
    assert select(backward=get_op("sqrt").backward, kernel="root")[0] is get_op("sqrt")


def test_registration_refusals_say_what_to_do():
    with pytest.raises(TypeError, match="register takes an OpSpec"):
        er.ops.register("add")
    with pytest.raises(ValueError, match=r"not in the catalog; add it to .*ops\.declaring"):
        er.ops.register(_spec(name="not_catalogued"))
    with pytest.raises(ValueError, match="in the catalog; register it without extra="):
        er.ops.register(get_op("add"), extra=True)
    with pytest.raises(ValueError, match="cannot be unregistered"):
        er.ops.unregister("add")
    for bad in ("", 3, None):
        with pytest.raises(TypeError, match="a counterpart's call is a non-empty string"):
            Counterpart(bad)
    with pytest.raises(TypeError, match="counterpart in numpy: a call string, a Counterpart"):
        Counterparts(numpy=("np.exp",))
    with pytest.raises(TypeError, match="counterparts must be a Counterparts"):
        _spec(counterparts={"torch": "torch.neg"})
    with pytest.raises(TypeError, match=r"a tuple of names, such as call=\('eps',\)"):
        AuditPlan(call="eps")
    with pytest.raises(TypeError, match="name of a result rule"):
        AuditPlan(result=None)
    assert AuditPlan(call=["eps"]).call == ("eps",)


def test_promotion_knows_each_function_before_its_record_loads():
    """The real functions listed in promotion's FUNCTION_ALIASES (the names result_type takes
    in a fresh process) promote as their records say: one operand as sqrt; a function not
    listed there is fed to the promotion data when its record registers."""
    from exactref.promotion import canonical_op
    from exactref.promotion._ops import FUNCTION_ALIASES, FUNCTION_RULES

    for spec in select(kernel="function"):
        rule = canonical_op(FUNCTION_RULES.get(spec.arity, spec.promotion))
        assert canonical_op(spec.promotion) in (rule, canonical_op(spec.name)), spec.name
        if spec.name in FUNCTION_ALIASES:
            assert canonical_op(FUNCTION_ALIASES[spec.name]) == canonical_op(spec.promotion)


def test_declaring_refuses_a_known_name():
    with pytest.raises(ValueError, match="already known"):
        with er.ops.declaring("add", __name__):
            pass
