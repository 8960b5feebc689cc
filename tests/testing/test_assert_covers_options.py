"""``assert_covers``: slack (``ulps``, ``atol``, ``rtol``), its arguments in either order, the
strength of the check in its report, and the long sums' reports (issue 11)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import exactref as er
from exactref.testing import assert_covers

F32 = np.float32


def _message(actual, expected, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        assert_covers(actual, expected, **kwargs)
    return str(info.value)


@pytest.fixture
def bf16():
    """bfloat16 3 + 2**-7: a tie, rounded to 3; one ulp above is 3.015625."""
    return er.add(er.asarray([1.0, 3.0], "bfloat16"), er.asarray([2.0**-9, 2.0**-7], "bfloat16"))


# ------------------------------------------------------------------------------ order
def test_the_reference_may_come_first(bf16):
    assert assert_covers(bf16, er.asarray([1.0, 3.0], "bfloat16")) is None
    lines = _message(bf16, er.asarray([1.0, 3.015625], "bfloat16")).splitlines()
    assert lines[3].startswith("Greatest distance outside the allowed interval: 1 ulp at index "
                               "(1,) (actual 3.015625")
    # a dtype mismatch is found with the arguments swapped too
    assert "'dtype' do not match: float32 != bfloat16" in _message(bf16, F32([1.0, 3.0]))


def test_an_any_of_may_come_first():
    x, y = er.asarray([1.0], "bfloat16"), er.asarray([2.0**-8 + 2.0**-15], "bfloat16")
    both = er.any_of(er.add(x, y, rounding="toward_positive"), er.add(x, y, rounding="toward_zero"))
    assert assert_covers(both, er.asarray([1.0], "bfloat16")) is None


# ------------------------------------------------------------------------------ slack
def test_ulps_slack(bf16):
    one_off = er.asarray([1.0, 3.015625], "bfloat16")
    _message(one_off, bf16)  # fails without slack
    assert assert_covers(one_off, bf16, ulps=1) is None
    assert assert_covers(one_off, bf16, ulps=1.5) is None
    lines = _message(er.asarray([1.0, 3.03125], "bfloat16"), bf16, ulps=1).splitlines()
    assert lines[2] == "Mismatched elements: 1 / 2 (50.0%)"
    assert lines[3] == "Slack beyond the modelled interval: ulps=1, atol=0.0, rtol=0.0"
    assert lines[4].startswith("Greatest distance outside the allowed interval: 2 ulp")


def test_atol_and_rtol_slack(bf16):
    one_off = er.asarray([1.0, 3.015625], "bfloat16")
    assert assert_covers(one_off, bf16, atol=0.02) is None
    assert assert_covers(one_off, bf16, rtol=0.01) is None
    _message(one_off, bf16, atol=0.01)
    _message(one_off, bf16, rtol=0.001)
    assert assert_covers(one_off, bf16, atol=0.01, rtol=0.002) is None  # added, as torch's


def test_slack_never_covers_nan_or_infinity(bf16):
    for bad in (float("nan"), float("inf")):
        _message(er.asarray([1.0, bad], "bfloat16"), bf16, ulps=1e6, atol=1e30)


def test_slack_of_complex_outputs_applies_per_part():
    r = er.multiply(er.asarray([1 + 2j], "complex64"), er.asarray([0.5], "complex64"))
    off = np.complex64([0.5 + 1.0000001j])  # the imaginary part 1 ulp off
    _message(off, r)
    assert assert_covers(off, r, ulps=1) is None
    _message(np.complex64([0.5000001 + 1.0000001j]), r, ulps=0.5)


def test_slack_with_an_any_of_uses_each_alternative():
    x, y = er.asarray([1.0], "bfloat16"), er.asarray([2.0**-8 + 2.0**-15], "bfloat16")
    both = er.any_of(er.add(x, y, rounding="toward_positive"), er.add(x, y, rounding="toward_zero"))
    # 1.015625 is 1 ulp above the upper alternative, 2 above the lower
    assert assert_covers(er.asarray([1.015625], "bfloat16"), both, ulps=1) is None


# ------------------------------------------------------------------------------ strength
def test_the_report_gives_the_strength_of_the_check(bf16):
    lines = _message(er.asarray([1.0, 3.015625], "bfloat16"), bf16).splitlines()
    assert "Check strength: tolerance median 0 ulp, largest 0 ulp of bfloat16 over 2 " \
           "elements" in lines


def test_a_weak_check_is_named_in_the_report_and_warned_where_it_passes():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4096)).astype(F32)
    r = er.sum(x, axis=1)
    out = x.sum(axis=1, dtype=np.float64).astype(F32)
    with pytest.warns(er.WeakCheckWarning):
        assert_covers(out, r)
    bad = out.copy()
    bad[0] += 1e3
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failing check warns nothing
        lines = _message(bad, r).splitlines()
    strength = next(line for line in lines if line.startswith("Check strength"))
    assert strength.endswith("(a weak check: see exactref.WeakCheckWarning)")


# ------------------------------------------------------------------------------ long sums
def test_a_matmul_report_records_the_row_and_the_column():
    a = np.arange(12, dtype=F32).reshape(3, 4) / 7
    b = np.ones((4, 2), F32)
    r = er.matmul(a, b)
    out = r.rounded.numpy().copy()
    out[1, 1] *= 1.01
    lines = _message(out, r).splitlines()
    assert ("Output format: float32 (matmul; modelled implementations: exact value rounded once "
            "into float32, accumulated in float32, library order, fused or products rounded in "
            "float32, then rounded into float32)") in lines
    assert lines[-4:-1] == [
        "Inputs at index (1, 1):",
        "  a[1, :] = [0x1.24924ap-1, 0x1.6db6dcp-1, 0x1.b6db6ep-1, 0x1p+0] (float32, 4 values)",
        "  b[:, 1] = [0x1p+0, 0x1p+0, 0x1p+0, 0x1p+0] (float32, 4 values)"]
    assert lines[-1].startswith("  sum of |terms| <= 3.14286, 1 times |result|")


def test_a_sum_report_records_the_values_summed():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    r = er.sum(x, axis=(0, 2))
    out = r.rounded.numpy().copy()
    out[2] += 1
    lines = _message(r, out).splitlines()
    assert ("Output format: float32 (sum; modelled implementations: exact value rounded once into "
            "float32, accumulated in float32, library order, then rounded into float32)") in lines
    assert "  x[:, 2, :] = [0x1p+3, 0x1.2p+3, 0x1.4p+3, 0x1.6p+3, 0x1.4p+4, 0x1.5p+4, " \
           "0x1.6p+4, 0x1.7p+4] (float32, 8 values)" in lines


def test_a_long_row_is_shortened_and_gemm_scalars_are_shown():
    a = np.ones((2, 40), np.float16)
    b = np.ones((40, 3), np.float16)
    c = np.ones(3, np.float16)
    r = er.gemm(a, b, c, alpha=0.5, beta=2)
    out = r.rounded.numpy().copy()
    out[1, 2] = 0
    lines = _message(out, r).splitlines()
    assert "  a[1, :] = [0x1p+0, 0x1p+0, 0x1p+0, 0x1p+0, ... 32 more ..., 0x1p+0, 0x1p+0, " \
           "0x1p+0, 0x1p+0] (float16, 40 values)" in lines
    assert "  c[2] = 0x1p+0 (float16)" in lines
    assert "  alpha = 0x1p-1 (Python float)" in lines and "  beta = 2 (Python int)" in lines


def test_a_batched_matmul_with_a_broadcast_operand_names_its_own_index():
    a = np.arange(2 * 2 * 3, dtype=F32).reshape(2, 2, 3)
    b = np.ones((3, 2), F32)  # shared by both batches
    r = er.matmul(a, b)
    out = r.rounded.numpy().copy()
    out[1, 0, 1] += 1
    lines = _message(out, r).splitlines()
    assert "  a[1, 0, :] = [0x1.8p+2, 0x1.cp+2, 0x1p+3] (float32, 3 values)" in lines
    assert "  b[:, 1] = [0x1p+0, 0x1p+0, 0x1p+0] (float32, 3 values)" in lines


def test_a_torch_equivalent_keeps_the_inputs():
    torch = pytest.importorskip("torch")
    from exactref.equivalents import torch_linalg as etl

    a = torch.tensor([[1.0, float("inf")]])
    b = torch.ones(2, 1)
    r = etl.addmm(torch.ones(1, 1), a, b, alpha=0.5)  # widened for PyTorch's specials
    lines = _message(torch.tensor([[2.0]]), r).splitlines()
    assert "  a[0, :] = [0x1p+0, inf] (float32, 2 values)" in lines
