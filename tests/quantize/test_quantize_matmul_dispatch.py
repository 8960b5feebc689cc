"""``er.matmul`` of block-scaled operands is ``er.quantize.matmul``: the exact product of the
dequantized values (issue 14 item 2), checked against Fractions of the dequantized values."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import exactref as er


def test_er_matmul_takes_quantized_operands():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    w = rng.standard_normal((64, 2)).astype(np.float32)
    qa = er.quantize(x, "mxfp8_e4m3")
    qb = er.quantize(w, "mxfp8_e4m3", axis=0)
    r = er.matmul(qa, qb)
    assert r.rounded.dtype.name == "float32"
    a = qa.dequantize().tolist()
    b = qb.dequantize().tolist()
    for i in range(3):
        for j in range(2):
            exact = sum(Fraction(a[i][k]) * Fraction(b[k][j]) for k in range(64))
            assert r.rounded.tolist()[i][j] == float(np.float32(float(exact))), (i, j)
    assert np.array_equal(r.rounded.numpy(), er.quantize.matmul(qa, qb).rounded.numpy())


def test_several_rules_give_any_of_every_pair():
    qa = er.quantize([[1.0, 2.0, 3.0, 7.5]], "mxfp4", block=4, scale_rule="any")
    qb = er.quantize([[0.5], [0.5], [-7.0], [2.0]], "mxfp4", axis=0, block=4,
                     scale_rule="floor")
    r = er.matmul(qa, qb)
    assert len(r.results) == len(qa.rules)
    for rule in qa.rules:  # a GEMM that consumed any rule's output is covered
        codes, scales = qa.by_rule[rule]
        deq = er.dequantize(codes, scales, "mxfp4", block=4).numpy()
        out = deq.astype(np.float64) @ qb.dequantize().numpy()
        assert r.covers(out.astype(np.float32)).all(), rule
