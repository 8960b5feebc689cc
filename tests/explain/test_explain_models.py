"""er.explain names the real model of simulated kernels (issue 21, item 3).

Each kernel below is simulated step by step in IEEE arithmetic (numpy float32 is correctly
rounded; bfloat16 via ml_dtypes): a float32 sum accumulated in bfloat16, kernels that flush
subnormal outputs or inputs, a reciprocal-then-multiply divide, a tanh within 1 ulp (a faithful
rounding: the other neighbour of the exact value on a fixed quarter of the elements), and
correct kernels. Each test fails if explain names another model, or none.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref.explain import MAX_PAIRS, MAX_SINGLE, explain, op_dimensions

TINY32 = float(np.finfo(np.float32).tiny)


def fields(contract) -> dict:
    return dict(contract.fields()) if hasattr(contract, "fields") else dict(contract)


def bf16_sequential_sum(x: np.ndarray) -> np.ndarray:
    """A float32 row sum whose accumulator is bfloat16: every add rounded into bfloat16."""
    out = np.empty(x.shape[0], np.float32)
    for i, row in enumerate(x):
        acc = ml_dtypes.bfloat16(0.0)
        for v in row:
            acc = ml_dtypes.bfloat16(np.float32(acc) + v)  # float32 add exact here, then bf16
        out[i] = np.float32(acc)
    return out


def flush(v: np.ndarray) -> np.ndarray:
    """Subnormals of float32 flushed to a zero of their sign."""
    return np.where(np.abs(v) < TINY32, np.copysign(np.float32(0), v), v).astype(np.float32)


@pytest.fixture(scope="module")
def rows():
    return np.random.default_rng(21).standard_normal((4, 1024)).astype(np.float32)


def test_bf16_accumulation_is_named(rows):
    actual = bf16_sequential_sum(rows)
    e = explain(er.sum(rows, axis=-1), actual)
    assert e.status == "other", e
    assert fields(e.best)["compute"] == "bfloat16", e
    assert any("accumulates in bfloat16" in s and s.startswith("covered only if")
               for s in e.findings), e.findings
    assert any("every output is a bfloat16 value" in s for s in e.findings), e.findings
    # the default compute (float32) does not cover it, whatever the order
    assert e.default_covered < actual.size


def test_float32_sum_is_not_called_bfloat16(rows):
    """The same search on a float32 sequential sum: no bfloat16 in the best contract."""
    acc = np.zeros(rows.shape[0], np.float32)
    for j in range(rows.shape[1]):
        acc = acc + rows[:, j]
    e = explain(er.sum(rows, axis=-1), acc)
    assert e.best is not None
    assert fields(e.best).get("compute") != "bfloat16", e
    assert not any("bfloat16 value" in s for s in e.findings)


def _subnormal_products():
    rng = np.random.default_rng(3)
    x = rng.uniform(1.0, 2.0, 512).astype(np.float32)
    y = rng.uniform(1.0, 2.0, 512).astype(np.float32)
    x[::4] *= np.float32(2.0**-64)  # normal inputs whose products are subnormal
    y[::4] *= np.float32(2.0**-64)
    x[1::8] *= -1
    return x, y


def test_flushed_outputs_are_named():
    x, y = _subnormal_products()
    actual = flush(x * y)
    assert np.count_nonzero(actual != x * y) > 50  # the kernel does flush
    e = explain(er.multiply(x, y), actual)
    assert e.status == "other", e
    assert fields(e.best)["flush"] == "outputs", e
    assert any("subnormal outputs are flushed to zero" in s for s in e.findings), e.findings
    assert e.uncovered["flush"]["covers"] == e.uncovered["flush"]["of"]


def test_flushed_inputs_are_named():
    rng = np.random.default_rng(4)
    x = rng.uniform(1.0, 2.0, 512).astype(np.float32)
    x[::4] *= np.float32(2.0**-130)  # subnormal inputs
    y = np.full(512, 2.0**40, np.float32)  # their products are normal
    actual = flush(x) * y
    e = explain(er.multiply(x, y), actual)
    assert e.status == "other", e
    assert fields(e.best)["flush"] == "inputs", e
    assert any("subnormal inputs are flushed to zero" in s for s in e.findings)
    # flushing the outputs alone covers none of them: their products are normal
    outputs = e.to_dict()["tried"]
    row = next(t for t in outputs if t["changes"] == {"flush": "outputs"})
    assert row["covered"] == e.default_covered


def test_reciprocal_divide_is_named():
    if "divide" not in op_dimensions("divide"):
        pytest.skip("er.divide has no divide= keyword in this tree yet (helper 'divide')")
    rng = np.random.default_rng(5)
    x = rng.standard_normal(2048).astype(np.float32)
    y = rng.standard_normal(2048).astype(np.float32)
    actual = x * (np.float32(1.0) / y)  # two roundings in float32
    assert np.count_nonzero(actual != x / y) > 100
    e = explain(er.divide(x, y), actual)
    assert e.status == "other", e
    assert fields(e.best)["divide"] == "reciprocal", e
    assert any("reciprocal then a multiply" in s for s in e.findings), e.findings


def _faithful_tanh(x: np.ndarray) -> np.ndarray:
    """tanh in float32 within 1 ulp of the exact value: on every fourth element the other
    float32 neighbour of the exact value than the correctly rounded one."""
    ref = np.asarray(er.tanh(x, accuracy="correct").rounded.numpy())
    wide = np.asarray(er.tanh(x.astype(np.float64), accuracy="correct").rounded.numpy())
    up = np.nextafter(ref, np.float32(np.inf))
    down = np.nextafter(ref, np.float32(-np.inf))
    other = np.where(wide > ref, up, down)  # the exact value lies between ref and other
    pick = (np.arange(x.size) % 4 == 0).reshape(x.shape) & (wide != ref)
    return np.where(pick, other, ref).astype(np.float32)


def test_sleef_u10_tanh_is_named(rows):
    x = rows * np.float32(0.5)
    actual = _faithful_tanh(x)
    off = np.count_nonzero(actual != np.asarray(er.tanh(x, accuracy="correct").rounded.numpy()))
    assert off > 0.2 * x.size
    e = explain(er.tanh(x, accuracy="correct"), actual)
    assert e.status == "other", e  # not correctly rounded
    assert fields(e.best)["accuracy"] == "sleef_u10", e
    text = " ".join(e.findings)
    assert "SLEEF u10" in text and "beyond correct rounding" in text, e.findings
    pct = f"{100 * off / x.size:.3g}%"
    assert pct in text, (pct, e.findings)
    # under the default accuracy the same output is covered, and sleef_u10 is tighter
    d = explain(er.tanh(x), actual)
    assert fields(d.best)["accuracy"] == "sleef_u10", d


def test_correct_kernels_are_covered_by_the_default(rows):
    y = rows[::-1].copy()
    for result, actual in [(er.add(rows, y), rows + y), (er.multiply(rows, y), rows * y),
                           (er.sqrt(np.abs(rows)), np.sqrt(np.abs(rows)))]:
        e = explain(result, actual)
        assert e.status == "default", e
        assert e.findings[0].startswith("covered by the default contract"), e.findings
        assert "correctly rounded" in " ".join(e.findings)


def test_nothing_covers_a_gross_bug(rows):
    e = explain(er.add(rows, rows), rows * np.float32(2.5))
    assert e.status == "none" and e.best is None and e.covering == []
    assert e.findings[0].startswith("no contract tried covers every element")


def test_output_of_the_explanation(rows):
    x, y = _subnormal_products()
    e = explain(er.multiply(x, y), flush(x * y))
    data = json.loads(json.dumps(e.to_dict()))
    assert data["op"] == "multiply" and data["status"] == "other"
    assert data["best"] == {"flush": "outputs"}
    assert data["covering"][0]["changes"] == {"flush": "outputs"}
    text = str(e)
    assert text.startswith("explain multiply float32: 512 elements")
    assert "flush='outputs'" in text
    table = e.table()
    assert table.splitlines()[0].split() == ["contract", "covered", "median", "ulps", "mean",
                                             "ulps"]
    assert "(default)" in table
    assert e.evaluations <= 1 + MAX_SINGLE + MAX_PAIRS
    # tightest first
    meds = [m for _, m in e.covering]
    assert meds[0] == min(meds)


def test_large_inputs_are_sampled():
    rng = np.random.default_rng(6)
    x = rng.uniform(1.0, 2.0, (200, 100)).astype(np.float32)
    y = rng.uniform(1.0, 2.0, (200, 100)).astype(np.float32)
    x[:, ::5] *= np.float32(2.0**-64)
    y[:, ::5] *= np.float32(2.0**-64)
    e = explain(er.multiply(x, y), flush(x * y))
    assert e.sampled_from == 20000 and e.elements <= 8192
    assert fields(e.best)["flush"] == "outputs"


def test_bad_inputs():
    r = er.add(np.float32([1.0, 2.0]), np.float32([1.0, 2.0]))
    with pytest.raises(ValueError, match="shape"):
        explain(r, np.float32([2.0, 4.0, 6.0]))
    bare = er.Result(r.rounded, [[np.asarray(r.rounded.numpy(), np.float64)]], op="add")
    with pytest.raises(ValueError, match="carries its call"):
        explain(bare, [2.0, 4.0])
    q = er.quantize(np.float32([1.0, 2.0] * 16), "mxfp8_e4m3")
    with pytest.raises(ValueError, match="codes and scales"):
        explain(q, np.float32([1.0, 2.0] * 16))


def test_per_element_dimensions():
    x, y = _subnormal_products()
    e = explain(er.multiply(x, y), flush(x * y))
    assert e.element(1) == []  # covered by the default
    assert {"flush": "outputs"} in e.element(0)  # a subnormal product, flushed
    assert {"flush": "inputs"} not in e.element((0,))
    assert e.summary() == e.findings[0]


def test_eps_stored_narrower_is_named():
    """A layer norm whose eps is held in bfloat16 (ONNX stores epsilon as a float of the
    model's type): simulated in float64 from the bfloat16 eps, then rounded once."""
    if "params" not in op_dimensions("layer_norm"):
        pytest.skip("no params= dimension in this tree")
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((4, 256)) * 3e-3).astype(np.float32)
    eps = float(np.float32(1e-5).astype(ml_dtypes.bfloat16))
    w = x.astype(np.float64)
    mu = w.mean(axis=-1, keepdims=True)
    var = ((w - mu) ** 2).mean(axis=-1, keepdims=True)
    out = ((w - mu) / np.sqrt(var + eps)).astype(np.float32)  # in float64, rounded once
    e = explain(er.layer_norm(x, (256,), compute="float64"), out)
    assert e.status == "other", e
    assert "eps" in fields(e.best)["params"], e
    assert fields(e.best)["compute"] == "float64"
    assert any("eps is stored in" in s for s in e.findings)


def test_large_row_outputs_are_sampled_by_rows():
    """A (32, 1024) layer norm is explained on whole rows, the failing row among them, and the
    rows' references are those rows of the whole reference."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((32, 1024)).astype(np.float32)
    w = x.astype(np.float64)
    mu = w.mean(axis=-1, keepdims=True)
    out = ((w - mu) / np.sqrt(((w - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5))
    out = out.astype(np.float32)
    good = explain(er.layer_norm(x, (1024,)), out)
    assert good.status == "default" and good.sampled_from == 32 * 1024
    assert good.elements == 8 * 1024
    out[13, 7] *= np.float32(1.5)  # a gross error in one element of row 13
    e = explain(er.layer_norm(x, (1024,)), out)
    assert e.sampled_from == 32 * 1024 and e.elements == 8 * 1024
    assert e.status != "default"
    assert e.default_covered == e.elements - 1
    e.element((13, 7))  # the failing row is in the sample
    assert e.element((13, 8)) == []


def test_an_ambient_contract_is_kept_outside_its_block(rows):
    """A Result made under er.use_contract is explained under the fields that applied to it,
    wherever explain is called."""
    acc = np.zeros(rows.shape[0], np.float32)
    for j in range(rows.shape[1]):
        acc = acc + rows[:, j]
    with er.use_contract(er.Contract(order="sequential")):
        r = er.sum(rows, axis=-1)
    e = explain(r, acc)
    assert fields(e.contract) == {"order": "sequential"}
    assert e.status == "default"
    covering = e.to_dict()["covering"]
    assert len(covering) > 1
    for entry in covering:  # every recomputation kept the order unless it changed it
        assert entry["contract"]["order"] == entry["changes"].get("order", "sequential")


def test_torch_outputs():
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 1024, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    e = explain(er.exp(x), torch.exp(x))
    assert e.status == "default" and e.format == "bfloat16"
    wrong = torch.exp(x.float() * 1.01).to(torch.bfloat16)
    assert explain(er.exp(x), wrong).status != "default"


def test_a_time_limit_stops_the_search_and_says_so(monkeypatch):
    x = np.linspace(1, 2, 64, dtype=np.float32)
    ref, out = er.exp(x), (np.exp(x.astype(np.float64)) * (1 + 2.0**-12)).astype(np.float32)
    whole = explain(ref, out)
    assert whole.cut_short is None and whole.evaluations > 2
    cut = explain(ref, out, seconds=1e-9)
    assert cut.cut_short == (1, 1e-9) and cut.evaluations == 1  # the result's own only
    assert "stopped at its time limit (1e-09 s) after 1 contracts" in cut.findings[-1]
    assert cut.to_dict()["cut_short_after_seconds"] == 1e-9
    for bad in (0, -1, "5", True):
        with pytest.raises(ValueError, match="expected a number of seconds > 0"):
            explain(ref, out, seconds=bad)
    from exactref.audit import _explained

    monkeypatch.setattr(_explained, "EXPLAIN_SECONDS", 1e-9)
    assert _explained.explained_line(ref, out).endswith(
        "(explain stopped after 1e-09 s, 1 contracts)")
