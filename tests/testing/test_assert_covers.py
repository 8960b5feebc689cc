"""``exactref.testing.assert_covers``: passes what a correct implementation may produce, and fails
with a torch.testing-style report whose key lines are pinned here."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import exactref as er
from exactref.testing import assert_covers

NAN = float("nan")


def _message(actual, expected, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_covers(actual, expected, **kwargs)
    return str(info.value)


@pytest.fixture
def bf16_add():
    """bfloat16 add, 2x2; every element exact except 1.0 + 2**-20, which rounds to 1.0."""
    x = er.asarray([[1.0, 2.0], [3.0, 2.0**-20]], "bfloat16")
    y = er.asarray([[0.1, 0.2], [0.3, 1.0]], "bfloat16")
    result = er.add(x, y)
    result.inputs = None  # the report must not depend on whether Result records them yet
    return x, y, result


def _off_by_one_ulp():
    return er.asarray([[1.1015625, 2.203125], [3.296875, 1.0078125]], "bfloat16")


# ------------------------------------------------------------------------------ passing
def test_covered_outputs_pass(bf16_add):
    x, y, result = bf16_add
    assert assert_covers(result.rounded, result) is None
    assert assert_covers(result.rounded.tolist(), result) is None  # no dtype to check
    f32 = er.add(er.asarray([1.0, 2.0], "float32"), er.asarray([0.1, 0.2], "float32"))
    assert assert_covers(np.float32([1.1, 2.2]), f32) is None
    assert assert_covers(np.float32([1.1, 2.2]), er.any_of(f32, f32)) is None


# ------------------------------------------------------------------------------ the report
def test_report_in_full_with_inputs(bf16_add):
    x, _, result = bf16_add
    # inputs as a Result records them: operands (broadcast to the output) and scalars
    result.inputs = {"x": x, "y": er.asarray([1.0, 0.5], "bfloat16"), "alpha": 2}
    assert _message(_off_by_one_ulp(), result) == "\n".join([
        "Tensor-likes are not covered by the exact reference!",
        "",
        "Mismatched elements: 1 / 4 (25.0%)",
        "Greatest distance outside the allowed interval: 1 ulp at index (1, 1) "
        "(actual 1.0078125, allowed [1.0, 1.0])",
        "In hex: actual 0x1.02p+0, allowed [0x1p+0, 0x1p+0]",
        "Expected (the exact value rounded once): 1.0 (0x1p+0), tolerance 0.0",
        "Output format: bfloat16 (add; modelled implementations: exact, fused in float32)",
        "Check strength: tolerance median 0 ulp, largest 0 ulp of bfloat16 over 4 elements",
        "Inputs at index (1, 1):",
        "  x[1, 1] = 0x1p-20 (bfloat16)",
        "  y[1] = 0x1p-1 (bfloat16)",
        "  alpha = 2 (Python int)",
    ])


def test_report_says_when_the_result_holds_no_inputs(bf16_add):
    *_, result = bf16_add
    lines = _message(_off_by_one_ulp(), result).splitlines()
    assert lines[-1] == "Inputs: not recorded by this Result"


def test_a_nan_no_implementation_produces_is_infinitely_far(bf16_add):
    *_, result = bf16_add
    actual = er.asarray([[1.1015625, 2.203125], [3.296875, NAN]], "bfloat16")
    lines = _message(actual, result).splitlines()
    assert lines[3] == ("Greatest distance outside the allowed interval: inf ulp at index (1, 1) "
                        "(actual nan, allowed [1.0, 1.0])")
    assert lines[5] == "(a NaN or an infinity that no modelled implementation produces)"


def test_the_worst_element_is_reported_among_several(bf16_add):
    *_, result = bf16_add
    actual = er.asarray([[1.109375, 2.203125], [3.25, 1.0]], "bfloat16")  # +1 ulp and -3 ulp
    lines = _message(actual, result).splitlines()
    assert lines[2] == "Mismatched elements: 2 / 4 (50.0%)"
    assert lines[3].startswith("Greatest distance outside the allowed interval: 3 ulp at index "
                               "(1, 0) (actual 3.25, allowed [3.296875, 3.296875])")


def test_integer_report_has_no_hex():
    result = er.add(er.asarray([127, 1], "int8"), er.asarray([1, 1], "int8"))  # wraps
    lines = _message(er.asarray([127, 2], "int8"), result).splitlines()
    assert lines[3] == ("Greatest distance outside the allowed interval: 255 ulp at index (0,) "
                        "(actual 127, allowed [-128, -128])")
    assert lines[4] == "Expected (the exact value rounded once): -128, tolerance 0.0"
    assert lines[5] == "Output format: int8 (add; modelled implementations: exact)"


def test_complex_report_gives_both_parts():
    result = er.multiply(er.asarray([1 + 2j, 3 - 1j], "complex64"),
                         er.asarray([0.5, 2j], "complex64"))
    actual = er.asarray([0.5 + 1j, 2 + 6.5j], "complex64")
    lines = _message(actual, result).splitlines()
    assert lines[3] == ("Greatest distance outside the allowed interval: 1048576 ulp at index "
                        "(1,) (actual (2+6.5j), allowed [(2+6j), (2+6j)])")
    assert lines[4] == ("In hex: actual (0x1p+1, 0x1.ap+2), allowed [(0x1p+1, 0x1.8p+2), "
                        "(0x1p+1, 0x1.8p+2)]")
    assert lines[5] == ("Expected (the exact value rounded once): (2+6j) (0x1p+1, 0x1.8p+2), "
                        "tolerance 0.0")


def test_any_of_shows_each_alternative_interval():
    x, y = er.asarray([1.0], "bfloat16"), er.asarray([2.0**-8 + 2.0**-15], "bfloat16")
    up = er.add(x, y, rounding="toward_positive")
    down = er.add(x, y, rounding="toward_zero")
    # 1.5 is 63 ulp above the upper alternative's 1.0078125 (ulps of the reference, 2**-7)
    lines = _message(er.asarray([1.5], "bfloat16"), er.any_of(up, down)).splitlines()
    assert lines[3] == ("Greatest distance outside the allowed interval: 63 ulp at index (0,) "
                        "(actual 1.5, allowed [1.0078125, 1.0078125] or [1.0, 1.0])")
    assert any(line.endswith("; any of 2 results)") for line in lines)


def test_anything_with_covers_is_a_reference(bf16_add):
    *_, result = bf16_add

    class Wrapped:  # no .rounded: no reference value, tolerance or inputs to show
        def covers(self, actual):
            return result.covers(actual)

    lines = _message(_off_by_one_ulp(), Wrapped()).splitlines()
    assert lines[2] == "Mismatched elements: 1 / 4 (25.0%)"
    assert lines[-1] == "Output format: bfloat16"


# ------------------------------------------------------------------------------ msg
def test_a_string_msg_goes_above_the_report(bf16_add):
    *_, result = bf16_add
    lines = _message(_off_by_one_ulp(), result, msg="kernel v2, seed 3").splitlines()
    assert lines[:3] == ["kernel v2, seed 3", "", "Tensor-likes are not covered by the exact "
                                                  "reference!"]


def test_a_callable_msg_rewrites_the_report(bf16_add):
    *_, result = bf16_add
    message = _message(_off_by_one_ulp(), result, msg=lambda report: report.splitlines()[2])
    assert message == "Mismatched elements: 1 / 4 (25.0%)"


# ------------------------------------------------------------------------------ dtype, shape
def test_a_dtype_other_than_the_reference_format_fails_first(bf16_add):
    *_, result = bf16_add
    actual = np.float32([[1.1015625, 2.203125], [3.296875, 1.0]])  # right values, wrong dtype
    message = _message(actual, result)
    assert message.splitlines()[0] == ("The values for attribute 'dtype' do not match: "
                                       "float32 != bfloat16.")
    assert "Pass check_dtype=False" in message
    assert assert_covers(actual, result, check_dtype=False) is None


def test_a_shape_other_than_the_reference_shape_fails(bf16_add):
    *_, result = bf16_add
    message = _message(er.asarray([1.0, 2.0], "bfloat16"), result)
    assert message.splitlines()[0] == ("The values for attribute 'shape' do not match: (2,) != "
                                       "(2, 2).")


# ------------------------------------------------------------------------------ tracebacks
def test_it_hides_itself_from_tracebacks(bf16_add):
    *_, result = bf16_add
    try:
        assert_covers(_off_by_one_ulp(), result)
    except AssertionError:
        tb = sys.exc_info()[2]
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_name == "assert_covers"
    assert tb.tb_frame.f_locals["__tracebackhide__"] is True
