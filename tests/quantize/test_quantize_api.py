"""er.quantize's result: covers() over the declared rules, dequantize, the documented choices
for NaN blocks, and clear errors for bad arguments."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
from block_oracle import MX, mx_block

import exactref as er

ALL = list(MX) + ["nvfp4"]


def _values(seed=0, rows=4, n=64):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((rows, n)) * 2.0 ** rng.integers(-6, 6, (rows, n))
    v[0, :32] *= 2.0**-30  # tiny blocks
    v[1, 0] = 7.99 * 2.0**5  # a block where the rules part ways
    v[2, :32] = np.clip(v[2, :32], -60, 60)
    v[2, 0] = 64.0  # a power of two: floor and ceil agree
    return v


def _wide(a):
    return np.asarray(a._wide(), dtype=np.float64)


@pytest.mark.parametrize("name", ALL)
def test_each_rule_covers_itself_and_any_covers_all(name):
    v = _values()
    q_any = er.quantize(v, name, scale_rule="any")
    for rule in q_any.rules:
        codes, scales = q_any.by_rule[rule]
        assert q_any.covers(codes, scales).all(), rule
        one = er.quantize(v, name, scale_rule=rule)
        assert one.covers(codes, scales).all()
        assert one.covers(q_any.dequantize(rule)).all()
        # another rule's output passes exactly where it gives the same scale and code
        for other in q_any.rules:
            oc, os_ = q_any.by_rule[other]
            cov = one.covers(oc, os_)
            same = (_wide(oc) == _wide(codes)) | (np.isnan(_wide(oc)) & np.isnan(_wide(codes)))
            scale_e = np.repeat(_wide(os_) == _wide(scales), q_any.block, axis=-1)[:, :v.shape[1]]
            np.testing.assert_array_equal(cov.mask, same & scale_e)


def test_a_rule_outside_the_declared_set_fails_where_its_scale_differs():
    v = _values()
    floor = er.quantize(v, "mxfp8_e4m3", scale_rule="floor")
    codes, scales = er.quantize(v, "mxfp8_e4m3", scale_rule="ceil").by_rule["ceil"]
    cov = floor.covers(codes, scales)
    differs = _wide(scales) != _wide(floor.scales)
    assert differs.any() and not differs.all()
    assert cov.uncovered == differs.sum() * 32
    assert "not covered" in cov.summary() and "'floor'" in cov.summary()
    both = er.quantize(v, "mxfp8_e4m3", scale_rule=("floor", "ceil"))
    assert both.covers(codes, scales).all()


@pytest.mark.parametrize("name", ["mxfp4", "mxint8", "nvfp4", "mxfp8_e5m2"])
def test_one_wrong_code_is_one_uncovered_element(name):
    v = _values(3)
    q = er.quantize(v, name)
    codes = _wide(q.codes).copy()
    i = (2, 17)
    fmt = q.element_format
    step = 1.0 if fmt.is_integer else 2.0 ** max(
        math.floor(math.log2(max(abs(codes[i]), fmt.smallest_normal))) - fmt.precision + 1,
        fmt.emin - fmt.precision + 1)
    codes[i] = codes[i] - step if codes[i] > 0 else codes[i] + step
    cov = q.covers(codes, q.scales)
    assert cov.uncovered == 1 and cov.worst_index == i
    assert cov.worst_ulps == 1.0
    deq = _wide(q.dequantize()).copy()
    deq[i] = np.nextafter(deq[i], np.inf)
    cov = q.covers(deq)
    assert cov.uncovered == 1 and cov.worst_ulps == 1.0  # one ulp of float64
    deq[i] = np.nan
    assert q.covers(deq).uncovered == 1


def test_the_sign_of_a_zero_code_counts_where_the_format_has_negative_zero():
    v = np.array([[-1e-9, 1.0] + [0.5] * 30])
    q = er.quantize(v, "mxfp8_e4m3")
    codes = _wide(q.codes).copy()
    assert codes[0, 0] == 0 and math.copysign(1, codes[0, 0]) == -1
    codes[0, 0] = 0.0
    assert q.covers(codes, q.scales).uncovered == 1
    qi = er.quantize(v, "mxint8")  # int8 has no -0: nothing to get wrong
    assert qi.covers(_wide(qi.codes), qi.scales).all()


@pytest.mark.parametrize("name", ALL)
def test_nan_blocks(name):
    """A NaN (or, for MX, an infinity or a scale past 2**127) makes the block's scale NaN; its
    codes are NaN where the element format has NaN and 0 otherwise, and covers() accepts any
    code there."""
    bf = er.quantize.BLOCK_FORMATS[name]
    block = bf.block
    v = np.ones((3, block))
    v[0, 3] = np.nan
    v[1, 5] = np.inf
    v[2, 7] = 2.0 ** (128 + bf.emax_elem)  # MX: shared exponent 128
    q = er.quantize(v, name)
    fmt = q.element_format
    nan_rows = [0, 1, 2] if name != "nvfp4" else [0]
    for r in nan_rows:
        assert np.isnan(_wide(q.scales)[r, 0])
        want = np.nan if fmt.has_nan else 0.0
        np.testing.assert_array_equal(_wide(q.codes)[r], np.full(block, want))
        assert np.isnan(_wide(q.dequantize())[r]).all()
    codes = _wide(q.codes).copy()
    codes[0] = 1.0
    assert q.covers(codes, q.scales).all()
    if name == "nvfp4":  # an infinity saturates: scale 448, the infinity's code 6
        assert _wide(q.scales)[1, 0] == 448 and _wide(q.codes)[1, 5] == 6


def test_all_zero_blocks_take_the_smallest_scale():
    q = er.quantize(np.array([[0.0, -0.0] * 16]), "mxfp6_e3m2")
    assert _wide(q.scales).tolist() == [[2.0**-127]]
    assert np.signbit(_wide(q.codes)[0]).tolist() == [False, True] * 16
    assert mx_block([0.0, -0.0] * 16, "mxfp6_e3m2", "floor", "nearest_even")[0] == 2.0**-127


def test_nvfp4_zero_scale_blocks_accept_any_code():
    v = np.zeros((2, 16))
    v[0, 0] = 1000.0  # g = 1000 / 2688; block 1 is zero
    v[1, :] = 1e-6    # its amax / (6 g) rounds to 0 in E4M3
    q = er.quantize(v, "nvfp4")
    assert _wide(q.scales)[1, 0] == 0
    codes = _wide(q.codes).copy()
    codes[1] = 6.0  # what Transformer Engine writes there (x times FLT_MAX, saturated)
    assert q.covers(codes, q.scales).all()
    assert (_wide(q.dequantize())[1] == 0).all()


def test_dequantize_of_codes_and_scales():
    v = _values(4)
    for name in ALL:
        q = er.quantize(v, name)
        d = er.dequantize(q.codes, q.scales, name, global_scale=q.global_scale)
        np.testing.assert_array_equal(_wide(d), _wide(er.dequantize(q)))
    q = er.quantize(v[:, :50], "mxfp4", block=32)  # a partial block
    np.testing.assert_array_equal(_wide(er.dequantize(q.codes, q.scales, "mxfp4")),
                                  _wide(q.dequantize()))


def test_er_quantize_is_the_package_and_the_function():
    assert callable(er.quantize) and "quantize" in er.__all__ and "dequantize" in er.__all__
    from exactref.quantize import quantize
    v = _values(6)
    np.testing.assert_array_equal(_wide(quantize(v, "mxfp4").codes),
                                  _wide(er.quantize(v, "mxfp4").codes))
    assert er.Quantized is er.quantize.Quantized


@pytest.mark.parametrize("call,match", [
    (lambda: er.quantize([1.0], "mxfp5"), "unknown block format 'mxfp5'.*mxfp4"),
    (lambda: er.quantize([1.0], "mxfp4", scale_rule="nearest"), "NVFP4 formats"),
    (lambda: er.quantize([1.0], "nvfp4", scale_rule="rounded"), "'nearest', 'up'"),
    (lambda: er.quantize([1.0], "mxfp4", scale_rule=()), "a tuple of rule names"),
    (lambda: er.quantize([1.0], "mxfp4", axis=1), "axis 1 is out of range"),
    (lambda: er.quantize([1.0], "mxfp4", block=0), "positive integer"),
    (lambda: er.quantize(1.0, "mxfp4"), "at least one dimension"),
    (lambda: er.quantize([1.0], "mxfp4", rounding="sideways"), "unknown rounding mode"),
    (lambda: er.quantize([1.0], "mxfp4", global_scale=1.0), "nvfp4 only"),
    (lambda: er.quantize([1.0], "nvfp4", global_scale=0.1), "float32 value"),
    (lambda: er.quantize([1.0], "nvfp4", global_scale=-1.0), "positive finite"),
    (lambda: er.quantize([1.0, 2.0], "mxfp4").covers([1.0], [1.0]), "shape"),
    (lambda: er.quantize([1.0, 2.0], "mxfp4").covers([1.0, 2.0], [1.0, 1.0]), "scales"),
    (lambda: er.dequantize([1.0, 2.0], [1.0, 1.0], "mxfp4"), "need \\(1,\\)"),
    (lambda: er.dequantize([1.0, 2.0]), "needs a Quantized"),
    (lambda: er.quantize(np.array([2**60 + 1], dtype=np.int64), "mxfp4"), "2\\*\\*53"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_common_keywords_saturate_or_are_refused_by_name():
    x = [1.0, -3.0, 0.2, 7.0]
    q = er.quantize(x, "mxfp4", block=4, overflow="saturate")  # the only rule: as the default
    assert q.codes.tolist() == er.quantize(x, "mxfp4", block=4).codes.tolist() == [1, -3, 0, 6]
    for kw, match in ((dict(overflow="wrap"), "overflow='wrap'.*saturate"),
                      (dict(dtype="float32"), "dtype='float32' does not apply.*dequantize"),
                      (dict(policy="numpy"), "policy='numpy' does not apply")):
        with pytest.raises(ValueError, match=match):
            er.quantize(x, "mxfp4", block=4, **kw)


def test_scales_given_as_bytes_are_refused():
    q = er.quantize(np.ones((2, 32)), "mxfp8_e4m3")
    raw = np.full((2, 1), 127, dtype=np.uint8)  # E8M0's 1.0, as a byte
    with pytest.raises(ValueError, match="View the bytes as float8_e8m0fnu"):
        q.covers(q.codes, raw)
    qi = er.quantize(np.ones((2, 32)), "mxint8")  # int8 codes are integers: no error
    assert qi.covers(qi.codes, qi.scales).all()


def test_complex_input_is_refused():
    with pytest.raises(TypeError, match="real values"):
        er.quantize(np.array([1 + 2j]), "mxfp4")


@pytest.mark.skipif(importlib.util.find_spec("torchao") is None, reason="torchao not installed")
@pytest.mark.parametrize("rule", ["floor", "ceil", "even", "rceil"])
def test_torchao_to_mx_is_covered(rule):  # pragma: no cover - needs torchao
    import torch
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.mx_tensor import to_mx

    v = _values(8).astype(np.float32)
    scale, data = to_mx(torch.from_numpy(v), torch.float8_e4m3fn, 32,
                        ScaleCalculationMode(rule))[:2]
    q = er.quantize(v, "mxfp8_e4m3", scale_rule=rule)
    assert q.covers(data, scale).all()


@pytest.mark.parametrize("name", ["mxfp4", "nvfp4"])
def test_empty_and_three_dimensional_inputs(name):
    for shape, scales in (((3, 0), (3, 0)), ((0, 5), (0, 1))):
        q = er.quantize(np.zeros(shape), name)
        assert q.codes.shape == shape and q.scales.shape == scales
        assert q.covers(q.codes, q.scales).all()
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 5, 3))
    q = er.quantize(x, name, axis=1, block=2)
    assert q.scales.shape == (2, 3, 3)
    flat = er.quantize(np.moveaxis(x, 1, -1).reshape(6, 5), name, block=2)
    np.testing.assert_array_equal(np.moveaxis(_wide(q.codes), 1, -1).reshape(6, 5),
                                  _wide(flat.codes))


def test_assert_covers_reports_dequantized_values_against_dequantized_values():
    from exactref.testing import assert_covers

    x = np.random.default_rng(0).standard_normal((2, 32))
    q = er.quantize(x, "mxfp4")
    d = _wide(q.dequantize()).copy()
    want = float(d[1, 3])
    d[1, 3] += 0.25
    assert_covers(_wide(q.dequantize()), q)
    with pytest.raises(AssertionError, match=rf"allowed \[{want!r}, {want!r}\]"):
        assert_covers(d, q)


def test_tolerance_is_the_spread_of_the_declared_rules():
    v = _values(9)
    v[3, 40] = np.nan
    one = er.quantize(v, "mxfp4", scale_rule="floor")
    t1 = _wide(one.tolerance())
    assert np.isnan(t1[3, 32:]).all() and (np.delete(t1, 3, axis=0) == 0).all()
    q = er.quantize(v, "mxfp4", scale_rule=("floor", "rceil"))
    want = np.abs(_wide(q.dequantize("rceil")) - _wide(q.dequantize("floor")))
    tol = _wide(q.tolerance())
    np.testing.assert_array_equal(tol[np.isfinite(want)], want[np.isfinite(want)])
    assert np.isnan(tol[3, 32:]).all() and (tol > 0).any()
