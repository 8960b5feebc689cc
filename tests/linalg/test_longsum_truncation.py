"""Wide lines keep their leading digits and a rigorous bound of the rest: every element must
still round exactly as its exact value does, in every format and mode, whether the bound settles
it, the chunk is recomputed, or the element is refined on its own."""

from __future__ import annotations

import numpy as np
import pytest
from linalg_oracle import exact_dot, rounded, same

import exactref as er
from exactref._exact import _longsum
from exactref._exact._longsum import matmul_exact

MODES = list(er.Rounding)
TARGETS = ["float64", "float32", "bfloat16", "float16", "float8_e5m2"]


def _adversarial(rng, m, k, n, dtype):
    """Rows spanning 2**-120..2**120 whose second half cancels the first up to 2**-20."""
    A = rng.standard_normal((m, k)) * 2.0 ** rng.integers(-120, 121, size=(m, k))
    B = rng.standard_normal((k, n))
    h = k // 2
    A[:, h:] = -A[:, :h] * (1 + 2.0**-20)
    B[h:] = B[:h]
    return A.astype(dtype).astype(np.float64), B.astype(dtype).astype(np.float64)


def _near_ties(rng, m, k, n):
    """Values that sit on a 58-bit grid point up to a rest far below the kept digits, of
    either sign: the bound cannot settle them, and the rest decides directed roundings."""
    A = np.zeros((m, k))
    B = np.ones((k, n))
    A[:, 0] = 1.0 + 2.0**-52 * rng.integers(0, 4, m)
    A[:, 1] = 2.0**-24  # a tie in float32 and coarser formats
    A[:, 2] = 2.0**-300 * rng.choice([-1.0, 1.0, 0.0], m)  # the rest beyond the kept bits
    A[:, 3:] = rng.standard_normal((m, k - 3)) * 2.0**-400
    A[:, 3::2] = 0
    B[:, 1::3] *= -1
    return A, B


def _check_all(A, B, ex, entries):
    for fmt in TARGETS:
        f = er.dtype(fmt)
        for mode in MODES:
            got = ex.round(f.component, mode, f.component.default_overflow)[0]
            got = got.reshape(A.shape[0], B.shape[1])
            for i, j, v in entries:
                want = rounded(v, f, mode)
                assert same(got[i, j], want), (fmt, mode, i, j, got[i, j], want)


@pytest.mark.parametrize("dtype,precision", [(np.float32, 24), (np.float64, 53)])
def test_adversarial_rows_settled_by_the_bound(dtype, precision):
    rng = np.random.default_rng(17)
    A, B = _adversarial(rng, 12, 96, 10, dtype)
    ex = matmul_exact(A, B, precision, precision)
    entries = [(i, j, exact_dot(A[i], B[:, j])) for i in range(12) for j in range(10)]
    _check_all(A, B, ex, entries)


@pytest.mark.parametrize("recompute", [0.0, 1.0], ids=["chunk", "element"])
def test_unsettled_elements_are_recomputed_exactly(monkeypatch, recompute):
    """``recompute=0``: any unsettled element recomputes its chunk; ``1``: each one alone."""
    monkeypatch.setattr(_longsum, "_RECOMPUTE", recompute)
    seen = []
    orig = _longsum._refine
    monkeypatch.setattr(_longsum, "_refine",
                        lambda ex, A3, B3, idx, shape3: seen.append(idx.size) or
                        orig(ex, A3, B3, idx, shape3, chunk=5))
    rng = np.random.default_rng(4)
    A, B = _near_ties(rng, 16, 40, 6)
    ex = matmul_exact(A, B, 53, 53, block=24)
    assert (sum(seen) > 0) == (recompute == 1.0)  # the path under test ran
    entries = [(i, j, exact_dot(A[i], B[:, j])) for i in range(16) for j in range(6)]
    _check_all(A, B, ex, entries)


def test_exact_cancellation_of_wide_rows_gives_exact_zeros():
    rng = np.random.default_rng(8)
    A, B = _adversarial(rng, 6, 64, 5, np.float64)
    A[:, 32:] = -A[:, :32]  # every element exactly zero, the kept digits too
    A[2, 3] += 2.0**-1000 if A[2, 3] == 0 else 0.0
    ex = matmul_exact(A, B)
    exact = [[exact_dot(A[i], B[:, j]) for j in range(5)] for i in range(6)]
    for i in range(6):
        for j in range(5):
            assert bool(ex.zero.reshape(6, 5)[i, j]) == (exact[i][j] == 0)
    _check_all(A, B, ex, [(i, j, exact[i][j]) for i in range(6) for j in range(5)])


def test_truncated_and_exact_paths_round_alike():
    rng = np.random.default_rng(21)
    A, B = _adversarial(rng, 20, 128, 20, np.float32)
    a = matmul_exact(A, B, 24, 24)
    b = matmul_exact(A, B, 24, 24, truncate=False)
    for fmt in ("float64", "float32", "bfloat16"):
        f = er.dtype(fmt).component
        for mode in MODES:
            x, y = a.round(f, mode, "ieee")[0], b.round(f, mode, "ieee")[0]
            assert np.array_equal(x, y) and np.array_equal(np.signbit(x), np.signbit(y))


def _ro58(x):
    """x rounded to odd with 58 significant bits (Fractions, exact)."""
    from fractions import Fraction

    if x == 0:
        return x
    s = 1 if x > 0 else -1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = Fraction(2) ** (e - 57)
    n = a // q
    if n * q != a:
        n |= 1
    return s * n * q


def test_the_settling_test_is_sound():
    """Where ``_decided`` says settled, both ends of ``[x - rho, x + rho]`` round to odd at 58
    bits as ``x`` does (so all of the interval does: rounding is monotone); it must also say
    unsettled when a cell boundary lies inside."""
    from fractions import Fraction

    from exactref._exact._engine import ExactArray

    rng = np.random.default_rng(9)
    n = 4000
    c1 = rng.standard_normal(n) * 2.0 ** rng.integers(40, 60, n)
    pow2 = rng.random(n) < 0.2  # below a power of two the cells are half as wide
    c1 = np.where(pow2, np.copysign(2.0 ** np.round(np.log2(np.abs(c1))), c1), c1)
    sp = np.spacing(np.abs(c1))
    # c2 on or next to the 58-bit grid points (sp / 32), or anywhere within half an ulp
    grid = rng.integers(-32, 33, n) * (sp / 64)
    near = grid + rng.choice([-1.0, 0.0, 1.0], n) * sp * 2.0 ** -rng.integers(40, 70, n)
    c2 = np.where(rng.random(n) < 0.7, near, rng.uniform(-0.5, 0.5, n) * sp)
    E = rng.integers(-30, 30, n)
    rho = np.where(rng.random(n) < 0.1, 0.0,
                   np.ldexp(sp * 2.0 ** -rng.integers(5, 80, n), E))
    ex = ExactArray.regular((n,), c1, c2, E=E, zsign=np.zeros(n, np.int8))
    dec = _longsum._decided(ex, rho)
    crossing = 0
    for i in range(n):
        x = (Fraction(float(c1[i])) + Fraction(float(c2[i]))) * Fraction(2) ** int(E[i])
        rr = Fraction(float(rho[i]))
        ends_agree = _ro58(x - rr) == _ro58(x) == _ro58(x + rr)
        if dec[i]:
            assert ends_agree, (i, c1[i], c2[i], E[i], rho[i])
        crossing += not ends_agree
    assert crossing > 100 and dec.sum() > 1000  # both sides of the test were exercised
