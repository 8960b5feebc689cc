"""The long-sum engine's fast paths against an exact Fraction oracle: rows and columns grouped by
the digits they need (one tiny value in one row, group pairs that need their own digit width),
and ExtractVector for long rows (float64, float32, float16; exponent spreads, subnormals,
exact cancellation, rows too wide for one scaling)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from linalg_oracle import exact_dot, rounded, same

import exactref as er
from exactref._exact import _longsum
from exactref._exact._longsum import matmul_exact, rowsum_exact

MODES = list(er.Rounding)
TARGETS = ["float64", "float32", "bfloat16", "float8_e4m3fn"]


def _check(ex, exact_values):
    for fmt in TARGETS:
        f = er.dtype(fmt)
        for mode in MODES:
            got = ex.round(f.component, mode, f.component.default_overflow)[0]
            for i, v in enumerate(exact_values):
                want = rounded(v, f, mode)
                assert same(got[i], want), (fmt, mode, i, got[i], want)


def test_digit_groups_follow_each_line():
    """A few rows and columns hold values far below their largest: they need more digits than
    the rest, and the plan gives them their own GEMMs (one pair needing its own width)."""
    rng = np.random.default_rng(3)
    m, k, n = 9, 300, 7
    A = rng.standard_normal((m, k)).astype(np.float32).astype(np.float64)
    B = rng.standard_normal((k, n)).astype(np.float32).astype(np.float64)
    A[2, 5] = 2.0**-40  # row 2 and 7: one more digit
    A[7, 9] = -(2.0**-60)
    B[11, 3] = 2.0**-50  # column 3: one more digit
    B[17, 3] = 3.0 * 2.0**-70
    A[4, :] *= 2.0**30  # a row on its own grid
    ta, la, ea = _longsum._top_low(A[None], 2)
    tb, lb, eb = _longsum._top_low(B[None], 1)
    bits_a = _longsum._line_bits(ta, la, ea, 24)
    bits_b = _longsum._line_bits(tb, lb, eb, 24)
    cnt, beta, sa, sb = _longsum._digit_plan(k, bits_a, bits_b)
    assert len(set(sa.tolist())) > 1 and len(set(sb.tolist())) > 1  # the groups are real
    ex = matmul_exact(A, B, 24, 24, block=16)  # small blocks: many chunks per group
    exact = [exact_dot(A[i], B[:, j]) for i in range(m) for j in range(n)]
    _check(ex, exact)


def test_groups_with_cancellation_and_batches():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((3, 4, 64))
    B = rng.standard_normal((3, 64, 5))
    A[:, :, 1] = -A[:, :, 0]  # the two largest terms of each element cancel exactly
    B[:, 1] = B[:, 0]
    A[:, :, 0] *= 2.0**200
    A[:, :, 1] *= 2.0**200
    A[1, 2, 7] = 5e-324
    ex = matmul_exact(A, B, 53, 53)
    exact = [exact_dot(A[b, i], B[b, :, j]) for b in range(3) for i in range(4) for j in range(5)]
    _check(ex, exact)


@pytest.fixture
def small_chunks(monkeypatch):
    """Rows of 4096 count as long and chunks hold 256 elements: every path of the extraction
    (many chunks, a short last chunk, levels that appear late) at a small cost."""
    monkeypatch.setattr(_longsum, "_LONG_ROW", 1024)
    monkeypatch.setattr(_longsum, "_EXTRACT_CHUNK", 256)


def _long_rows():
    rng = np.random.default_rng(11)
    k = 4096 + 78  # not a multiple of the chunk
    x32 = rng.standard_normal(k).astype(np.float32)
    w32 = (rng.standard_normal(k) * 2.0 ** rng.integers(-140, 120, k)).astype(np.float32)
    c32 = np.concatenate([x32[: k // 2], -x32[: k // 2]]).astype(np.float32)
    c32[100] = np.float32(2.0**-149)  # all cancels but the smallest subnormal
    h16 = (rng.standard_normal(k) * 100).astype(np.float16)
    f64 = rng.standard_normal(k) * 2.0 ** rng.integers(-1000, -60, k)
    f64[:4] = [5e-324, -1e-320, 2.0**-1022, 0.0]
    big = rng.standard_normal(k) * 2.0 ** rng.integers(600, 1000, k)
    big[1::2] = -big[::2]
    big[3] = 2.0**900
    return {"float32": x32, "float32 wide": w32, "float32 cancels": c32, "float16": h16,
            "float64 tiny": f64, "float64 huge": big}


@pytest.mark.parametrize("name", list(_long_rows()))
def test_extract_vector_long_rows(name, small_chunks):
    x = _long_rows()[name]
    X = np.stack([x, x[::-1] * 2, -x])  # three long rows: the extraction path
    ex = rowsum_exact(X, 53 if x.dtype == np.float64 else 24)
    exact = [sum((Fraction(float(v)) for v in row), Fraction(0)) for row in X]
    for i, v in enumerate(exact):
        assert ex.zero[i] == (v == 0)
    _check(ex, exact)


def test_extract_vector_declines_a_spread_past_one_scaling(small_chunks):
    """float64 rows spanning more than 1000 binades cannot be scaled into one range without
    losing bits: they take the digits path, and the sum is still exact."""
    k = 4096
    x = np.full(k, 1e300)
    x[1::2] = -1e300
    x[5] = 5e-324  # replaces a -1e300: the sum is 1e300 + 5e-324
    x[6] = -5e-324
    assert _longsum._row_extract(x, True) is None
    assert _longsum._row_extract(x[::2] * 0.5, True) is not None
    ex = rowsum_exact(x[None], 53)
    _check(ex, [sum((Fraction(float(v)) for v in x), Fraction(0))])


def test_extract_vector_signed_zeros_and_specials(small_chunks):
    k = 4096
    negz = np.full((1, k), -0.0, np.float32)
    ex = rowsum_exact(negz, 24)
    assert ex.zero[0] and ex.zsign[0] == -1
    x = np.ones((2, k), np.float32)
    x[0, 7] = np.inf
    x[1, 9] = np.nan
    ex = rowsum_exact(x, 24)
    assert ex.special[0] == np.inf and np.isnan(ex.special[1])


def test_sum_of_float32_vector_through_the_api():
    rng = np.random.default_rng(2)
    n = _longsum._LONG_ROW + 5  # long enough for the extraction path, at its real sizes
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    want = sum((Fraction(float(v)) for v in x), Fraction(0))
    for mode in MODES:
        got = er.sum(x, rounding=mode).rounded.tolist()
        assert same(got, rounded(want, er.dtype("float32"), mode)), mode


def test_zero_signs_from_counts_match_the_products():
    """Many exact zeros take the zero-sign rule from GEMM counts of indicator matrices; it must
    agree with the products themselves: -1 where every product is -0, +1 where every product
    is +0, else 0."""
    rng = np.random.default_rng(12)
    vals = np.array([0.0, -0.0, 1.0, -1.0])
    A = vals[rng.integers(0, 4, (3, 7, 5))]
    B = vals[rng.integers(0, 4, (3, 5, 6))]
    A[0, :3] = rng.choice([0.0, -0.0], (3, 5))  # rows of zeros: signed-zero products only
    B[0, :, :2] = rng.choice([0.0, -0.0], (5, 2))
    A[1, 0] = 0.0
    B[1, :, 0] = -0.0
    got = _longsum._zero_signs_gemm(A, B)
    for b in range(3):
        for i in range(7):
            for j in range(6):
                p = A[b, i] * B[b, :, j]
                neg = np.signbit(p)
                want = (-1 if ((p == 0) & neg).all() else
                        1 if ((p == 0) & ~neg).all() else 0)
                assert got[b, i, j] == want, (b, i, j, p)
    assert (got == -1).any() and (got == 1).any() and (got == 0).any()


def test_many_exact_zeros_take_the_counting_path(monkeypatch):
    calls = []
    orig = _longsum._zero_signs_gemm
    monkeypatch.setattr(_longsum, "_ZERO_GEMM", 100)
    monkeypatch.setattr(_longsum, "_zero_signs_gemm", lambda A, B: calls.append(1) or orig(A, B))
    rng = np.random.default_rng(13)
    A = rng.standard_normal((40, 30)) * 2.0 ** rng.integers(-200, 200, (40, 30))
    A[:, 15:] = -A[:, :15]
    B = rng.standard_normal((15, 50))
    B = np.concatenate([B, B])  # every element exactly zero
    A[3, :] = -0.0  # a row of -0: -0 * x is -0 or +0 by x's sign
    ex = matmul_exact(A, B)
    assert ex.zero.all() and calls  # every element exactly zero, signs from the counts
    for mode in MODES:
        got = ex.round(er.dtype("float32").component, mode, "ieee")[0].reshape(40, 50)
        for i, j in [(0, 0), (3, 1), (3, 7), (39, 49)]:
            p = A[i] * B[:, j]
            neg = (np.signbit(p) & (p == 0)).all() or (
                mode is er.Rounding.TOWARD_NEGATIVE and not ((p == 0) & ~np.signbit(p)).all())
            assert got[i, j] == 0 and bool(np.signbit(got[i, j])) == bool(neg), (mode, i, j)
