"""er.quantize.matmul against an independent chain: the spec model's codes and scales, their
exact products summed in Fractions, rounded once into float32 by the model's rounding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from block_oracle import FLOAT32, blocks_of, mx_block, nvfp4_block, nvfp4_global, round_elem

import exactref as er


def _oracle_dequantized(values: np.ndarray, name: str, rule: str, block: int):
    """Exact dequantized values (Fractions) per row of ``values``, from the spec model."""
    g = nvfp4_global(values.reshape(-1).tolist()) if name == "nvfp4" else None
    out = []
    for row in values:
        vals = []
        for b in blocks_of(row.tolist(), block):
            if name == "nvfp4":
                s, codes = nvfp4_block(b, g, rule, "nearest_even")
                scale = Fraction(s) * Fraction(g)
            else:
                s, codes = mx_block(b, name, rule, "nearest_even")
                scale = Fraction(s) * (Fraction(1, 64) if name == "mxint8" else 1)
            vals.extend(Fraction(c) * scale for c in codes)
        out.append(vals)
    return out


def _oracle_matmul(a, b_t, name, rule, block):
    A = _oracle_dequantized(a, name, rule, block)
    B = _oracle_dequantized(b_t, name, rule, block)  # rows of b.T: blocks along K
    out = []
    for ra in A:
        row = []
        for rb in B:
            v, neg = round_elem(sum(x * y for x, y in zip(ra, rb, strict=True)), FLOAT32,
                                "nearest_even")
            row.append(-float(v) if neg else float(v))
        out.append(row)
    return np.array(out)


@pytest.mark.parametrize("name,rule", [("mxfp8_e4m3", "floor"), ("mxfp4", "rceil"),
                                       ("mxint8", "even"), ("mxfp6_e3m2", "ceil"),
                                       ("nvfp4", "nearest"), ("nvfp4", "up")])
def test_exact_value_matches_the_independent_chain(name, rule):
    rng = np.random.default_rng(21)
    block = er.quantize.BLOCK_FORMATS[name].block
    a = rng.standard_normal((3, 2 * block)) * 2.0 ** rng.integers(-4, 4, (3, 2 * block))
    b = rng.standard_normal((2 * block, 2)) * 2.0 ** rng.integers(-4, 4, (2 * block, 2))
    qa = er.quantize(a, name, scale_rule=rule)
    qb = er.quantize(b, name, axis=0, scale_rule=rule)
    r = er.quantize.matmul(qa, qb)
    assert r.rounded.dtype.name == "float32"
    want = _oracle_matmul(a, b.T, name, rule, block)
    np.testing.assert_array_equal(r.rounded._wide(), want)


def test_a_float32_gemm_of_the_dequantized_operands_is_covered():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((8, 96))
    b = rng.standard_normal((96, 5))
    qa, qb = er.quantize(a, "mxfp8_e5m2"), er.quantize(b, "mxfp8_e5m2", axis=0)
    out = np.matmul(qa.dequantize()._wide().astype(np.float32),
                    qb.dequantize()._wide().astype(np.float32))
    r = er.quantize.matmul(qa, qb)
    assert r.covers(out).all()
    wrong = out.copy()
    wrong[2, 3] = np.nextafter(wrong[2, 3], np.float32(np.inf)) + abs(wrong[2, 3]) * 1e-3
    assert r.covers(wrong).uncovered == 1


def test_several_rules_give_any_of_every_pair():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((4, 64)) * 3
    b = rng.standard_normal((64, 3)) * 3
    qa = er.quantize(a, "mxfp4", scale_rule=("floor", "rceil"))
    qb = er.quantize(b, "mxfp4", axis=0, scale_rule=("floor", "rceil"))
    r = er.quantize.matmul(qa, qb, compute="float64", order="sequential", fused=True)
    assert isinstance(r, er.AnyOf) and len(r.results) == 4
    mixed = qa.dequantize("rceil")._wide() @ qb.dequantize("floor")._wide()
    exact = er.linalg.matmul(qa.dequantize("rceil"), qb.dequantize("floor"), dtype="float32")
    assert r.covers(exact.rounded).all()
    only_floor = er.quantize.matmul(er.quantize(a, "mxfp4", scale_rule="floor"),
                                    er.quantize(b, "mxfp4", axis=0, scale_rule="floor"),
                                    compute="float64", order="sequential", fused=True)
    assert not only_floor.covers(mixed.astype(np.float32)).all()


def test_nan_blocks_make_nan_outputs():
    a = np.ones((2, 32))
    a[1, 4] = np.inf
    b = np.ones((32, 2))
    r = er.quantize.matmul(er.quantize(a, "mxfp8_e4m3"), er.quantize(b, "mxfp8_e4m3", axis=0))
    got = r.rounded._wide()
    assert (got[0] == 32).all() and np.isnan(got[1]).all()


def test_a_tuple_operand_is_refused():
    q = er.quantize(np.ones((2, 32)), "mxfp4")
    with pytest.raises(ValueError, match="er.dequantize"):
        er.quantize.matmul((q.codes, q.scales), q)
