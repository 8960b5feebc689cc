"""Every rounded element of matmul, gemm, dot and sum agrees with an exact Fraction reference,
on random and adversarial data, in every rounding mode and many formats."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from linalg_oracle import exact_dot, rounded, same

import exactref as er
from exactref import linalg
from exactref._exact._longsum import matmul_exact, rowsum_exact

MODES = list(er.Rounding)
FLOATS = ["float64", "float32", "bfloat16", "float16", "float8_e4m3fn"]
# exponent spread that stays inside each format's range
SPREAD = {"float64": 120, "float32": 60, "bfloat16": 60, "float16": 6, "float8_e4m3fn": 3}


def _data(kind, fmt, m, k, n, rng):
    A = rng.standard_normal((m, k))
    B = rng.standard_normal((k, n))
    s = SPREAD[fmt]
    if kind == "wide":  # every row spans 2**-s .. 2**s
        A *= 2.0 ** rng.integers(-s, s + 1, size=A.shape)
        B *= 2.0 ** rng.integers(-s // 2, s // 2 + 1, size=B.shape)
    A = er.asarray(A, fmt).numpy().astype(np.float64)
    B = er.asarray(B, fmt).numpy().astype(np.float64)
    if kind == "cancel":  # the largest terms cancel exactly, leaving small ones
        A[:, 1] = -A[:, 0]
        B[1] = B[0]
        A[:, 0] *= 4
        A[:, 1] *= 4
        A[:, 3] = -A[:, 2]
        B[3] = B[2]
    if kind == "ties":  # 1 + 2**-p: a tie in the output format, and its negative
        p = er.dtype(fmt).precision
        A[:] = 0
        B[:] = 0
        A[:, 0] = 1.0
        A[:, 1] = 2.0**-p
        A[1::2, :2] *= -1
        B[0] = 1.0
        B[1] = 1.0
        B[1, 1::2] = 3.0  # 1 + 3 * 2**-p: a tie one step up
    return A, B


@pytest.mark.parametrize("kind", ["random", "wide", "cancel", "ties"])
@pytest.mark.parametrize("fmt", FLOATS)
def test_matmul_every_mode(fmt, kind):
    rng = np.random.default_rng(abs(hash((fmt, kind))) % 2**32)
    m, k, n = 5, 40, 4
    A, B = _data(kind, fmt, m, k, n, rng)
    a, b = er.asarray(A, fmt), er.asarray(B, fmt)
    f = er.dtype(fmt)
    exact = [[exact_dot(A[i], B[:, j]) for j in range(n)] for i in range(m)]
    for mode in MODES:
        got = linalg.matmul(a, b, rounding=mode).rounded.numpy().astype(np.float64)
        for i in range(m):
            for j in range(n):
                want = rounded(exact[i][j], f, mode)
                assert same(got[i, j], want), (mode, i, j, got[i, j], want)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_wide_spread_float64_into_narrow(mode):
    """float64 rows spanning 2**-1000..2**1000 and subnormals, rounded into float32 and
    float64: the digits never leave integer units, so nothing is lost."""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((4, 30)) * 2.0 ** rng.integers(-1000, 1000, size=(4, 30))
    A[0, :3] = [5e-324, -2.5e-323, 1e300]
    B = rng.standard_normal((30, 3)) * 2.0 ** rng.integers(-20, 20, size=(30, 3))
    ex = matmul_exact(A, B)
    for fmt in ("float64", "float32", "bfloat16"):
        f = er.dtype(fmt)
        v = ex.round(f, mode, "ieee")[0].reshape(4, 3)
        for i in range(4):
            for j in range(3):
                assert same(v[i, j], rounded(exact_dot(A[i], B[:, j]), f, mode))


def test_batched_broadcast_and_vectors():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 1, 3, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5, 2)).astype(np.float32)
    r = linalg.matmul(a, b)
    assert r.rounded.shape == np.matmul(a, b).shape == (2, 4, 3, 2)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    # a float64 product of float32 inputs is the exact value here, up to float64's rounding
    np.testing.assert_allclose(r.rounded.numpy(), want.astype(np.float32), rtol=1e-6)
    v = rng.standard_normal(5)
    assert linalg.matmul(v, rng.standard_normal((5, 3))).rounded.shape == (3,)
    assert linalg.matmul(rng.standard_normal((3, 5)), v).rounded.shape == (3,)
    assert linalg.matmul(v, v).rounded.shape == ()
    assert linalg.dot(v, v).rounded.numpy() == float(sum(Fraction(x) ** 2 for x in v))


def test_shape_errors_name_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        linalg.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="batch"):
        linalg.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4)))
    with pytest.raises(ValueError, match="at least one dimension"):
        linalg.matmul(np.float64(1.0), np.ones(3))


def test_specials_follow_ieee():
    inf, nan = np.inf, np.nan
    A = np.array([[inf, 1.0], [inf, 0.0], [1.0, 2.0], [inf, -inf], [nan, 0.0], [-0.0, 0.0]])
    B = np.array([[1.0, 0.0], [1.0, 1.0]])
    got = linalg.matmul(A, B).rounded.numpy()
    with np.errstate(invalid="ignore"):
        want = (A[:, :, None] * B[None, :, :]).sum(axis=1)  # IEEE products and sums
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    # -0 * 1 + 0 * 1 sums to +0; -0 * 1 + -0 * 1 to -0 (IEEE), toward -inf -0 for a cancellation
    z = linalg.matmul(np.array([[-0.0, -0.0]]), np.array([[1.0], [1.0]])).rounded.numpy()
    assert np.signbit(z[0, 0])
    c = linalg.matmul(np.array([[1.0, -1.0]]), np.array([[1.0], [1.0]]),
                      rounding="toward_negative").rounded.numpy()
    assert c[0, 0] == 0 and np.signbit(c[0, 0])


def test_complex_parts_exact():
    rng = np.random.default_rng(5)
    A = (rng.standard_normal((3, 20)) + 1j * rng.standard_normal((3, 20))) * 2.0 ** \
        rng.integers(-40, 40, size=(3, 20))
    B = rng.standard_normal((20, 2)) + 1j * rng.standard_normal((20, 2))
    A, B = A.astype(np.complex64), B.astype(np.complex64)
    for mode in (er.Rounding.NEAREST_EVEN, er.Rounding.TOWARD_NEGATIVE, er.Rounding.ODD):
        got = linalg.matmul(A, B, rounding=mode).rounded.numpy()
        assert got.dtype == np.complex64
        f = er.dtype("float32")
        for i in range(3):
            for j in range(2):
                a, b = A[i].astype(np.complex128), B[:, j].astype(np.complex128)
                re = exact_dot(a.real, b.real) - exact_dot(a.imag, b.imag)
                im = exact_dot(a.real, b.imag) + exact_dot(a.imag, b.real)
                assert same(float(got[i, j].real), rounded(re, f, mode))
                assert same(float(got[i, j].imag), rounded(im, f, mode))


@pytest.mark.parametrize("fmt", ["int8", "int32", "int64", "uint8"])
def test_integer_matmul_wraps_exactly(fmt):
    rng = np.random.default_rng(11)
    info = np.iinfo(er.dtype(fmt).np_dtype)
    A = rng.integers(info.min, info.max, size=(4, 7), dtype=er.dtype(fmt).np_dtype,
                     endpoint=True)
    B = rng.integers(info.min, info.max, size=(7, 3), dtype=er.dtype(fmt).np_dtype,
                     endpoint=True)
    got = linalg.matmul(A, B).rounded.numpy()
    exact = A.astype(object) @ B.astype(object)
    span = 2 ** (8 * A.itemsize)
    want = (exact - info.min) % span + info.min
    assert got.dtype == A.dtype
    assert got.tolist() == want.tolist()
    sat = linalg.matmul(A, B, overflow="saturate").rounded.numpy()
    assert sat.tolist() == np.clip(exact, info.min, info.max).tolist()
    if (exact > info.max).any() or (exact < info.min).any():
        with pytest.raises(OverflowError, match="outside"):
            linalg.matmul(A, B, overflow="error")


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_gemm_alpha_beta_exact(mode):
    rng = np.random.default_rng(2)
    A = rng.standard_normal((3, 25)).astype(np.float32)
    B = rng.standard_normal((4, 25)).astype(np.float32)  # used transposed
    C = rng.standard_normal((4,)).astype(np.float32)  # broadcast over rows
    alpha, beta = 0.1, -3.0
    got = linalg.gemm(A, B, C, alpha=alpha, beta=beta, trans_b=True,
                      rounding=mode).rounded.numpy().astype(np.float64)
    f = er.dtype("float32")
    for i in range(3):
        for j in range(4):
            v = Fraction(alpha) * exact_dot(A[i], B[j]) + Fraction(beta) * Fraction(float(C[j]))
            assert same(got[i, j], rounded(v, f, mode))


def test_gemm_complex_alpha_and_beta_zero_ignores_c():
    rng = np.random.default_rng(4)
    A = (rng.standard_normal((2, 6)) + 1j * rng.standard_normal((2, 6))).astype(np.complex128)
    B = (rng.standard_normal((6, 2)) + 1j * rng.standard_normal((6, 2))).astype(np.complex128)
    C = np.full((2, 2), np.nan + 0j)
    r = linalg.gemm(A, B, C, alpha=0.5 - 2j, beta=0).rounded.numpy()
    for i in range(2):
        for j in range(2):
            a, b = A[i], B[:, j]
            re = exact_dot(a.real, b.real) - exact_dot(a.imag, b.imag)
            im = exact_dot(a.real, b.imag) + exact_dot(a.imag, b.real)
            want_re = Fraction(0.5) * re + 2 * im
            want_im = Fraction(0.5) * im - 2 * re
            assert r[i, j].real == float(want_re) and r[i, j].imag == float(want_im)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_sum_exact(mode):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((6, 300)) * 2.0 ** rng.integers(-100, 100, size=(6, 300))
    x[0, :2] = [1e30, -1e30]
    x = x.astype(np.float32).astype(np.float64)
    x[1] = 0.0
    x[1, 0] = 1.0
    x[1, 1:] = 2.0**-25  # 299 ulps of a half: far from a tie, but only exactly
    f = er.dtype("float32")
    got = linalg.sum(x.astype(np.float32), axis=1, rounding=mode).rounded.numpy()
    for i in range(6):
        v = sum((Fraction(float(t)) for t in x[i]), Fraction(0))
        assert same(float(got[i]), rounded(v, f, mode))
    full = linalg.sum(x.astype(np.float32), rounding=mode).rounded.numpy()
    v = sum((Fraction(float(t)) for t in x.reshape(-1)), Fraction(0))
    assert same(float(full), rounded(v, f, mode))


def test_sum_axes_keepdims_and_ints():
    x = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    r = linalg.sum(x, axis=(0, 2), keepdims=True)
    assert r.rounded.shape == (1, 3, 1)
    assert r.rounded.numpy().reshape(-1).tolist() == x.astype(np.float64).sum(axis=(0, 2)).tolist()
    xi = np.array([[2**62, 2**62], [1, -1]], dtype=np.int64)
    r = linalg.sum(xi, axis=1)
    assert r.rounded.dtype.name == "int64"
    assert r.rounded.tolist() == [-(2**63), 0]  # wraps, as torch.sum does
    assert linalg.sum(np.array([True, True, False])).rounded.tolist() == 2


def test_rowsum_exact_matches_fractions_with_cancellation():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 2000)) * 2.0 ** rng.integers(-600, 600, size=(3, 2000))
    x[:, 1000:] = -x[:, :1000]
    x[:, 1999] = 2.0**-1074
    ex = rowsum_exact(x)
    for mode in MODES:
        v = ex.round(er.dtype("float64"), mode, "ieee")[0]
        for i in range(3):
            want = Fraction(2.0**-1074) + Fraction(float(x[i, 999]))
            assert same(v[i], rounded(want, er.dtype("float64"), mode))


def test_backward_matmul_is_exact_sum_over_copies():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((4, 5))  # broadcast over the batch: its gradient sums 2 copies
    g = rng.standard_normal((2, 3, 5))
    grads = linalg.matmul.backward(a, b, g)
    gb = grads.grad_b.rounded.numpy()
    assert gb.shape == (4, 5)
    for i in range(4):
        for j in range(5):
            v = sum((exact_dot(a[t, :, i], g[t, :, j]) for t in range(2)), Fraction(0))
            assert gb[i, j] == float(v)
    ga = grads.grad_a.rounded.numpy()
    assert ga[1, 2, 3] == float(exact_dot(g[1, 2], b[3]))


def test_backward_gemm_complex_beta():
    g = np.array([[1 - 0j, 2 + 1j]])
    a = np.array([[1 + 1j], [0.5 + 0j]])  # used transposed: op(a) is 1 x 2
    b = np.array([[1 + 0j, 2 - 1j], [0.5j, 1 + 0j]])
    c = np.array([[1 + 0j, 1 + 0j]])
    grads = linalg.gemm.backward(a, b, g, c, alpha=2, beta=3j, trans_a=True)
    # grad_c = conj(3j) * g = -3j * g: no term for the zero real part of conj(beta)
    assert grads.grad_c.rounded.tolist() == [[-3j * (1 - 0j), -3j * (2 + 1j)]]
    ga = grads.grad_a.rounded.numpy()
    np.testing.assert_array_equal(ga, (2 * g @ np.conj(b).T).T)
    gb = grads.grad_b.rounded.numpy()
    np.testing.assert_array_equal(gb, 2 * np.conj(a) @ g)


def test_sum_backward_broadcasts():
    x = np.ones((2, 3), dtype=np.float32)
    r = linalg.sum.backward(x, np.array([1.5, 2.5, 3.5]), axis=0)
    assert r.rounded.tolist() == [[1.5, 2.5, 3.5]] * 2
    assert r.rounded.dtype.name == "float32"


NARROW = [f.name for f in er.FORMATS.values() if f.kind == "float" and f.bits <= 8
          and f.encoding == "native"]  # P3109: tests/test_formats_p3109.py


@pytest.mark.parametrize("fmt", NARROW)
def test_every_narrow_float_format_against_mpfr(fmt):
    """matmul and sum of every float format of 8 bits or fewer (float8, float6, float4,
    float8_e8m0fnu: unsigned, no zero), every mode, against MPFR (tests/mpfr_rounding.py)."""
    from mpfr_rounding import mpfr_round, overflow_value

    f = er.dtype(fmt)
    rng = np.random.default_rng(len(fmt))
    A = rng.standard_normal((3, 6)) * 2.0 ** rng.integers(-3, 3, (3, 6))
    B = rng.standard_normal((6, 2))
    if not f.signed:
        A, B = np.abs(A) + 0.25, np.abs(B) + 0.25
    A = er.asarray(A, fmt).numpy().astype(np.float64)
    B = er.asarray(B, fmt).numpy().astype(np.float64)
    rule = f.default_overflow

    def want(v, mode):
        if v == 0:
            return 0.0
        r = mpfr_round(v, f.precision, f.emin, mode)
        if abs(r) > Fraction(f.max_finite):
            return overflow_value(f.max_finite, f.has_inf, f.has_nan, v < 0, mode, rule)
        return float(r) if r != 0 else 0.0

    for mode in MODES:
        got = linalg.matmul(er.asarray(A, fmt), er.asarray(B, fmt), rounding=mode)
        got = got.rounded.numpy().astype(np.float64)
        sums = linalg.sum(er.asarray(A, fmt), axis=1, rounding=mode).rounded.numpy()
        for i in range(3):
            s = sum((Fraction(float(x)) for x in A[i]), Fraction(0))
            w = want(s, mode)
            assert same(float(sums[i]), w) or (w == 0 and float(sums[i]) == 0), (mode, i)
            for j in range(2):
                w = want(exact_dot(A[i], B[:, j]), mode)
                g = float(got[i, j])
                assert same(g, w) or (w == 0 and g == 0), (mode, i, j, g, w)
