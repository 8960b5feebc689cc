"""``specials=`` of softmax, log_softmax and logsumexp: ``"limits"`` (the default, the exact
value's limit) or ``"formula"`` (the max-subtracted formula in IEEE arithmetic, ONNX's and
TensorFlow's kernels): checked against a numpy implementation of the formula, case by case
(docs/softmax.md, "Special values"), and against onnxruntime where it is installed."""

import numpy as np
import pytest

import exactref as er

INF, NAN = np.inf, np.nan
#: one row per case of docs/softmax.md's table: finite, a -inf beside a finite maximum, a
#: +inf, two +inf, +inf and -inf, only -inf, a NaN, a NaN beside +inf
ROWS = np.array([[1.0, 2.0, 3.0, -1.0], [1.0, -INF, 2.0, 0.5], [1.0, INF, 2.0, 0.5],
                 [INF, INF, 0.0, 1.0], [INF, -INF, 0.0, 1.0], [-INF, -INF, -INF, -INF],
                 [1.0, NAN, 2.0, 0.5], [NAN, INF, -INF, 0.0]], np.float32)


def formula(op, x):
    """The textbook formula in numpy float32 arithmetic (IEEE), per row: ``m = max x``,
    ``e = exp(x - m)``, ``s = sum e``; softmax ``e / s``, log_softmax ``(x - m) - log(s)``,
    logsumexp ``log(s) + m``."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = np.max(x, axis=-1, keepdims=True)  # NaN propagates, as ONNX's ReduceMax
        t = x - m
        e = np.exp(t)
        s = np.sum(e, axis=-1, keepdims=True)
        if op == "softmax":
            return e / s
        if op == "log_softmax":
            return t - np.log(s)
        return (np.log(s) + m)[..., 0]


OPS = ("softmax", "log_softmax", "logsumexp")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "float64"])
def test_formula_is_numpys_formula(op, fmt):
    x = er.asarray(ROWS, fmt)
    r = getattr(er, op)(x, dim=-1, specials="formula")
    want = formula(op, ROWS)
    got = np.asarray(r.rounded.numpy(), np.float64)
    # the special rows bit for bit what the formula gives (NaN where it does); the finite
    # rows covered (numpy's exp is not correctly rounded: compare the values, not bits)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)].astype(got.dtype)) or \
        r.covers(er.asarray(np.where(np.isnan(want), NAN, got), fmt)).all()
    fin = ~np.isnan(want)
    assert r.covers(er.asarray(np.where(fin, got, want), fmt)).all()


@pytest.mark.parametrize("op", OPS)
def test_limits_differ_from_the_formula_where_the_table_says(op):
    """The default keeps the limits: the +inf rows and (logsumexp) the all -inf row are not
    NaN; a kernel giving the formula's NaN there fails the default and passes "formula"."""
    x = er.asarray(ROWS, "float32")
    lim = getattr(er, op)(x, dim=-1)
    assert lim.details["specials"] == "limits"
    want = formula(op, ROWS).astype(np.float32)
    cov = lim.covers(want)
    assert not cov.all()
    assert getattr(er, op)(x, dim=-1, specials="formula").covers(want).all()
    row = (slice(None),) if op == "logsumexp" else (slice(None), 0)
    lim_nan = np.isnan(np.asarray(lim.rounded.numpy(), np.float64))[row]
    # the +inf row (index 2) has a limit; the formula gives NaN
    assert not lim_nan[2] and np.isnan(want[row][2])


def test_formula_rows_only():
    """A row without infinities or NaN is the same under both: the same values and ends."""
    rng = np.random.default_rng(3)
    one_inf = np.r_[rng.standard_normal(15), INF][None]
    x = er.asarray(np.concatenate([rng.standard_normal((3, 16)), one_inf]), "float32")
    a, b = er.softmax(x, dim=-1), er.softmax(x, dim=-1, specials="formula")
    ra, rb = np.asarray(a.rounded.numpy()), np.asarray(b.rounded.numpy())
    assert np.array_equal(ra[:3], rb[:3])
    assert np.isnan(rb[3]).all() and not np.isnan(ra[3]).any()
    for end in ("lowest", "highest"):
        assert np.array_equal(np.asarray(getattr(a, end))[:3], np.asarray(getattr(b, end))[:3])


def test_formula_along_another_dim():
    x = np.array([[1.0, 1.0], [INF, 2.0], [0.0, 3.0]], np.float32)
    r = er.softmax(er.asarray(x, "float32"), dim=0, specials="formula")
    got = np.asarray(r.rounded.numpy())
    assert np.isnan(got[:, 0]).all() and not np.isnan(got[:, 1]).any()


@pytest.mark.parametrize("bad", ["ieee", "Limits", None, 1])
def test_bad_specials_refused_with_the_list(bad):
    for op in OPS:
        with pytest.raises(ValueError, match="'limits', 'formula'"):
            getattr(er, op)(er.asarray([[1.0, 2.0]], "float32"), dim=-1, specials=bad)


def test_onnxruntime_softmax_is_the_formula():
    """ONNX Runtime's Softmax (opset 13) on the table's rows: covered by "formula", not by the
    limits (its +inf row is NaN)."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(ROWS.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(ROWS.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y = sess.run(None, {"x": ROWS})[0]
    x = er.asarray(ROWS, "float32")
    assert er.softmax(x, dim=-1, specials="formula").covers(y).all()
    assert not er.softmax(x, dim=-1).covers(y).all()
    del onnx
