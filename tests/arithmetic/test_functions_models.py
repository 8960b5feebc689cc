"""The tolerance of the real functions: the modelled implementations are covered, kernels that
compute something else are caught (a GELU with the tanh formula checked as the erf GELU; a
bfloat16 ``exp`` computed in bfloat16 arithmetic throughout)."""

from __future__ import annotations

import functions_oracle as oracle
import ml_dtypes
import numpy as np
import pytest
from family_oracle import all_values, assert_same

import exactref as er

R = er.Rounding
BF16 = ml_dtypes.bfloat16


@pytest.fixture(autouse=True)
def _fresh_oracle_cache():
    yield
    oracle._CACHE.clear()


def test_models_by_output_format():
    C = "correct"
    assert er.exp(er.asarray([1.0], "bfloat16"), accuracy=C).models == ("exact",
                                                                         "fused in float32")
    assert er.exp(er.asarray([1.0], "float8_e4m3fn"), accuracy=C).models == (
        "exact", "fused in float32")
    assert er.exp(np.float32([1.0]), accuracy=C).models == ("exact",)
    assert er.exp(np.float32([1.0]), compute="float64", accuracy=C).models == (
        "exact", "fused in float64")
    # the default: the mainstream libraries' largest documented bound
    assert er.exp(np.float32([1.0])).models == (
        "exact", "within mainstream (3.5 ulps) in float32: lowest",
        "within mainstream (3.5 ulps) in float32: highest")
    assert er.ops.get_op("tanh").models == ("exact", "fused in {c}", "within {a} in {c}: lowest",
                                             "within {a} in {c}: highest")
    assert er.exp(np.float32([1.0]), accuracy=2).models == (
        "exact", "within 2 ulps in float32: lowest", "within 2 ulps in float32: highest")


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "gelu"])
def test_the_fused_model_is_the_value_rounded_twice(name):
    """Float16 inputs: the candidates are the exact value rounded once, and rounded into
    float32 first (PyTorch's opmath), exactly as the oracle rounds them."""
    x = all_values("float16")
    x = x[np.random.default_rng(4).choice(x.size, 6000, replace=False)]
    vals = oracle.exacts(name, x)
    once = oracle.round_exact(vals, "float16", R.NEAREST_EVEN)
    via32 = oracle.round_exact(vals, "float32", R.NEAREST_EVEN)
    from fractions import Fraction

    twice = oracle.round_exact([v if v != v or np.isinf(v) or v == 0 else Fraction(float(v))
                                for v in via32.tolist()], "float16", R.NEAREST_EVEN)
    twice = np.where(via32 == 0, via32, twice)  # signed zeros stay
    r = getattr(er, name)(er.asarray(x, "float16"), accuracy="correct")
    lo, hi = np.fmin(once, twice), np.fmax(once, twice)
    assert_same(r.lowest, lo, x, f"{name} lowest candidate")
    assert_same(r.highest, hi, x, f"{name} highest candidate")
    assert r.covers(r.rounded).all()
    assert r.covers(twice.astype(np.float16)).all()


def test_the_fused_model_differs_where_double_rounding_does():
    r = er.exp(er.asarray(all_values("float16"), "float16"))
    assert (r.tolerance().numpy() > 0).sum() > 0


# ----------------------------------------------------------------------- caught kernels
def test_a_gelu_with_the_tanh_formula_is_caught_in_bfloat16():
    x = er.asarray(all_values("bfloat16"), "bfloat16")
    tanh_formula = er.gelu(x, approximate="tanh").rounded  # even a correctly rounded one
    cov = er.gelu(x).covers(tanh_formula)
    assert not cov.all()
    assert cov.uncovered > 100
    assert er.gelu(x, approximate="tanh").covers(tanh_formula).all()


def test_a_gelu_with_the_tanh_formula_is_caught_in_float32():
    x = np.random.default_rng(1).uniform(-6, 6, 20000).astype(np.float32)
    tanh_formula = er.gelu(x, approximate="tanh").rounded
    cov = er.gelu(x).covers(tanh_formula)
    assert cov.uncovered > 1000  # most elements: the formulas differ by ~1e-4 relative
    # numpy's own float32 tanh formula too
    c = np.float32(np.sqrt(2 / np.pi))
    approx = np.float32(0.5) * x * (1 + np.tanh(c * (x + np.float32(0.044715) * x**3)))
    assert er.gelu(x).covers(approx).uncovered > 1000


def test_torch_gelu_tanh_is_caught_and_torch_exp_is_covered():
    torch = pytest.importorskip("torch")
    x = er.asarray(all_values("bfloat16"), "bfloat16")
    t = x.torch()
    assert not er.gelu(x).covers(torch.nn.functional.gelu(t, approximate="tanh")).all()
    # torch computes exp of bfloat16 in float32 and rounds: the fused model
    finite = np.isfinite(all_values("bfloat16"))
    cov = er.exp(x).covers(torch.exp(t))
    assert np.asarray(cov)[finite].mean() > 0.999


def _exp_in_bfloat16(x):
    """``exp`` computed in bfloat16 arithmetic throughout, each step rounded to bfloat16:
    ``2**n * 2**f`` with ``y = x log2(e)``, ``n = round(y)``, ``f = y - n`` and a degree-3
    polynomial for ``2**f`` (a plausible hand-written kernel)."""
    b = x.astype(BF16)
    log2e = BF16(1.4426950408889634)
    y = (b * log2e).astype(BF16)
    n = np.rint(y.astype(np.float32)).astype(BF16)
    f = (y - n).astype(BF16)
    c1, c2, c3 = BF16(0.6931471805599453), BF16(0.2402265069591007), BF16(0.05550410866482158)
    p = (c3 * f).astype(BF16)
    p = ((p + c2).astype(BF16) * f).astype(BF16)
    p = ((p + c1).astype(BF16) * f).astype(BF16)
    p = (p + BF16(1.0)).astype(BF16)
    with np.errstate(over="ignore"):
        return (p.astype(np.float32) * np.exp2(n.astype(np.float32))).astype(BF16)


def test_a_bfloat16_exp_in_bfloat16_arithmetic_is_caught():
    x = np.random.default_rng(2).uniform(-20, 20, 5000).astype(BF16)
    y = _exp_in_bfloat16(x)
    cov = er.exp(x).covers(y)
    assert cov.uncovered > 500, cov.summary()
    # the same kernel in float32 arithmetic, rounded once at the end, is covered almost
    # everywhere (float32 exp itself is not correctly rounded: a handful may fall out)
    good = np.exp(x.astype(np.float32)).astype(BF16)
    assert er.exp(x).covers(good).mask.mean() > 0.999


# --------------------------------------------------------------- the op's other paths
def test_a_wider_output_from_the_table():
    x = all_values("bfloat16")
    x = x[np.isfinite(x)][::8]
    vals = oracle.exacts("tanh", x)
    for mode in (R.NEAREST_EVEN, R.TOWARD_NEGATIVE):
        got = er.tanh(er.asarray(x, "bfloat16"), dtype="float32", rounding=mode).rounded
        assert_same(got.numpy().astype(np.float64),
                    oracle.round_exact(vals, "float32", mode), x, f"tanh into float32 {mode}")


def test_chains_flush_and_scalars_take_the_general_path():
    x = er.asarray([-1.0, 0.5, 3.0], "bfloat16")
    inner = er.sigmoid(x)
    outer = er.log(inner)
    want = er.log(inner.rounded)
    assert outer.rounded.tolist() == want.rounded.tolist()
    assert outer.covers(want.rounded).all()
    sub = er.asarray([1e-40, -1e-40], "bfloat16")  # subnormals of bfloat16 and of float32
    r = er.exp(sub, flush="inputs")
    assert r.covers([1.0, 1.0]).all()
    assert er.exp(2.0).rounded.tolist() == float(np.float32(np.exp(2.0)))
    assert er.atan2(er.asarray([1.0], "float16"), 1.0).rounded.tolist() == [0.78515625]


def test_integer_operands_promote_to_the_default_float():
    r = er.exp(np.array([0, 1, 2], dtype=np.int32))
    assert r.rounded.dtype.name == "float32"
    assert r.rounded.tolist() == [1.0, float(np.float32(np.e)), float(np.float32(np.exp(2.0)))]
    assert er.pow(np.array([2, 3]), 2).rounded.tolist() == [4, 9]  # an integer power: exact
    assert er.pow(np.array([2, 3]), 0.5).rounded.dtype.name == "float32"


# ------------------------------------------------------------------------ the registry
def test_the_records_and_the_docs_table():
    import pathlib

    specs = [s for s in er.ops.all_ops() if s.family == "functions"]
    # every op the functions module declares, and only those (no count to keep up to date)
    assert [s.name for s in specs] == list(er.ops.names_of("exactref.arithmetic.functions"))
    for s in specs:
        assert s.kernel == "function" and s.function is getattr(er, s.name)
        if s.name != "pow":  # an integer power stays an integer (exact, by the overflow rule)
            assert er.result_type("int16[3]", *(["int16[3]"] * (s.arity - 1)),
                                  op=s.promotion).name == "float32", s.name
    text = (pathlib.Path(__file__).parents[2] / "docs" / "functions.md").read_text()
    assert er.ops.markdown_table("functions") in text, (
        "docs/functions.md's op table differs from the registry; paste "
        "exactref.ops.markdown_table('functions') there")


# ------------------------------------------------------- the record holds the models it runs
def test_the_record_holds_the_models_the_driver_runs():
    """An op's record holds its executable models (``OpSpec.models``, strings that are their
    names) and the driver runs the registered record's: replacing the record's models by one
    that flips a bit of the value changes the tolerance, and nothing else."""
    from dataclasses import replace

    from exactref.arithmetic._elementwise import FUSED, Model, elementwise
    from exactref.arithmetic._formulas import Part

    def flipped(ctx, X, Y):  # the float32 value one step up: a kernel that is one ulp off
        v = ctx.round(ctx.sop([Part([(X[0],), (Y[0],)])]), ctx.c)[0]
        return [ctx.values(np.nextafter(v.astype(np.float32), np.float32(np.inf)))]

    flip = Model("one ulp up in {c}", flipped)
    name = "plus_trial"
    x = np.array([1.0, 2.0**-30, 3.0], np.float32)
    y = np.array([0.25, 1.0, -6.0], np.float32)
    with er.ops.declaring(name, __name__):
        @elementwise(name, ("x", "y"), kernel="sum of products", promotion="add",
                     summary="x + y, rounded once", kinds=("float",),
                     counterparts=er.ops.Counterparts(None, None, None))
        def plus_trial(ctx, X, Y):
            """``x + y``, rounded once."""
            return ctx.sop([Part([(X[0],), (Y[0],)])])

        spec = er.ops.get_op(name)
        assert spec.models == ("exact", "fused in {c}") and spec.models[1] is FUSED
        before = plus_trial(x, y)
        assert before.models == ("exact",)  # fused in float32 is the reference itself
        assert np.array_equal(before.lowest, before.highest)
        er.ops.register(replace(spec, models=("exact", flip)))
        after = plus_trial(x, y)
        assert after.models == ("exact", "one ulp up in float32")
        assert np.array_equal(after.rounded.numpy(), before.rounded.numpy())  # the reference
        up = np.nextafter(before.rounded.numpy(), np.float32(np.inf))
        assert np.array_equal(after.highest, up) and np.array_equal(after.lowest, before.lowest)
        assert after.covers(up).all() and not before.covers(up).any()


def test_a_function_record_runs_its_own_models_and_the_table_lane_only_its_own(monkeypatch):
    """A function's band models are the record's (``Within``: the band's Model carrying the
    libraries' bounds); a record with other models than the tables' skips the table lane and
    the general path runs them (the same values where the models are the same)."""
    from dataclasses import replace

    from exactref._exact import mpfr_function
    from exactref.arithmetic import _function_kernel, functions
    from exactref.arithmetic._accuracy import Within
    from exactref.arithmetic._elementwise import Model, elementwise
    from exactref.arithmetic._function_kernel import MODELS, lane, value

    exp = er.ops.get_op("exp")
    assert all(isinstance(m, Within) and m.derive is b.derive and m.applies is b.applies
               for m, b in zip(exp.models[2:], MODELS[1:], strict=True))
    name = "exp_models_trial"
    h = er.asarray([0.1, 1.0, 2.5], "bfloat16")
    with er.ops.declaring(name, __name__):
        @functions._functions_family(mpfr_function("exp"))
        @elementwise(name, ("x",), kernel="function", promotion="exp", kinds=("float",),
                     summary="e**x, rounded once",
                     counterparts=er.ops.Counterparts(None, None, None), models=MODELS,
                     fast=lane, accuracy=True)
        def trial(ctx, X):
            """``e**x``, rounded once."""
            return value(ctx, X)

        ref = er.exp(h, accuracy=4)
        a = trial(h, accuracy=4)
        assert a.models == ref.models and np.array_equal(a.lowest, ref.lowest)
        spec = er.ops.get_op(name)
        # the same models as new objects: not the tables' code, so the general path runs them
        same = tuple(Model(m.name, m.fn, m.applies, lambda *a, d=m.derive: d(*a))
                     if m.derive else m for m in spec.models[1:])
        er.ops.register(replace(spec, models=("exact", *same)))

        def no_tables(*args):
            raise AssertionError("the table lane ran models the record does not hold")

        monkeypatch.setattr(_function_kernel, "_rounded_tables", no_tables)
        b = trial(h, accuracy=4)
        assert b.models == ref.models
        assert np.array_equal(b.lowest, ref.lowest) and np.array_equal(b.highest, ref.highest)
        er.ops.register(replace(spec, models=("exact", spec.models[1])))  # fused only
        c = trial(h, accuracy=4)
        assert c.models == ("exact", "fused in float32")


def test_a_model_is_its_name_and_immutable():
    import pickle

    from exactref.arithmetic._elementwise import FUSED
    from exactref.arithmetic._model import Model

    m = Model("x then y in {c}", np.add, applies=None)
    assert m == "x then y in {c}" and m.name == "x then y in {c}" and type(m.name) is str
    assert hash(m) == hash("x then y in {c}") and m.fn is np.add and m.relevant(None)
    back = pickle.loads(pickle.dumps(m))
    assert type(back) is Model and back == m and back.fn is np.add
    assert pickle.loads(pickle.dumps(FUSED)).fn is None
    with pytest.raises(AttributeError, match="immutable"):
        m.fn = None
    assert not hasattr(m, "__dict__")  # the slots only
    with pytest.raises(TypeError, match="models= takes Model objects"):
        from exactref.arithmetic._elementwise import elementwise

        elementwise("nothing", ("x",), kernel="selection", promotion="neg", summary="",
                    models=("fused in {c}",))
