"""The proofs of attention's first tier (exactref._exact._attention), checked against exact
arithmetic: the table-driven exponential against mpmath at 200 bits, the split GEMMs against
Fractions on adversarial data (cancelling sums, wide exponent ranges, tiny quanta), the dot
products the quanta prove exact, and the enclosures of every path (exact differences, a rounded
scale, float masks, float32 data, huge logits) against the oracle (attention_oracle.py)."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

import exactref._exact._attention as xa

sys.path.insert(0, str(Path(__file__).parent))
from attention_oracle import attention_row  # noqa: E402

U = 2.0 ** -53


def _bf16(a):
    import ml_dtypes

    return np.asarray(a, np.float64).astype(ml_dtypes.bfloat16).astype(np.float64)


# ------------------------------------------------------------------------------ exp_mid
def test_exp_mid_within_its_proven_bound():
    """``|e**x - v| <= 3.2 u v + 2**-1074`` (the proof's bound, inside the 2**-50 used), on
    random arguments, near the reduction's half-way points ``(k + 1/2) ln2/64`` (the largest
    ``|r|``), near 0, into the subnormals and at the ends."""
    rng = np.random.default_rng(11)
    half = (np.arange(-60000, 60000, 97) + 0.5) * math.log(2.0) / 64
    x = np.concatenate([rng.uniform(-746, 709, 3000), rng.uniform(-1, 1, 1000),
                        half, np.nextafter(half, np.inf), rng.uniform(-746, -700, 300),
                        [0.0, -0.0, -745.13, -745.2, -746.0, -1e300, -np.inf, 709.0, 5e-324,
                         -5e-324, 1e-300]])
    v = xa.exp_mid(x)
    worst = 0.0
    with mpmath.workprec(200):
        for a, b in zip(x.tolist(), v.tolist(), strict=True):
            e = mpmath.exp(mpmath.mpf(a)) if a != -math.inf else mpmath.mpf(0)
            err = abs(e - mpmath.mpf(b))
            assert err <= 3.2 * U * b + 2.0 ** -1074, (a, b)
            if b > 1e-300:
                worst = max(worst, float(err / b))
    assert worst > 0.5 * U  # the bound is not vacuous: the computed value does round


def test_exp_enclosure_wraps_exp_mid():
    x = np.array([-3.0, 0.0, -700.5, -745.5])
    lo, hi = xa.exp_enclosure(x)
    v = xa.exp_mid(x)
    assert (lo <= v).all() and (v <= hi).all() and (lo >= 0).all()
    assert xa.exp_mid(np.float64(-1.0)).shape == ()


def test_a_wrong_table_is_caught():
    """The bound checked above fails for an exponential 4 ulps off (the test can fail)."""
    x = np.array([5 * math.log(2.0) / 64])
    v = xa.exp_mid(x) * (1 + 8 * U)
    with mpmath.workprec(200):
        assert abs(mpmath.exp(mpmath.mpf(x[0])) - mpmath.mpf(v[0])) > 3.2 * U * v[0]


# ------------------------------------------------------------------------ the split GEMMs
def _exact_sum(w, col):
    return sum((Fraction(a) * Fraction(b) for a, b in zip(w, col, strict=True)), Fraction(0))


def _check_sums(W, V, rad=None):
    """Every true weight within the radius: the exact sum (worst choice of weights) lies in
    ``N -+ Nr``; returns (Nr / (sum_j W |v|)) for the columns of V."""
    sums = xa._Sums(V)
    N, Nr = xa._weighted_sums(W, sums, rad)
    Va = sums.Va
    r = xa._REL * W + 5e-324 if rad is None else rad
    rel = []
    for i in range(W.shape[0]):
        for col in range(Va.shape[1]):
            c = Va[:, col]
            for sgn in (-1, 0, 1):  # the weights moved to the ends that push the sum most
                w = [Fraction(a) + sgn * (1 if b >= 0 else -1) * Fraction(rr)
                     for a, b, rr in zip(W[i].tolist(), c.tolist(), r[i].tolist(), strict=True)]
                exact = _exact_sum(w, c.tolist())
                assert abs(exact - Fraction(N[i, col])) <= Fraction(Nr[i, col]), (i, col, sgn)
            a = float(np.abs(W[i]) @ np.abs(c))
            rel.append(Nr[i, col] / a if a else 0.0)
    return sums, np.array(rel)


def test_split_sums_enclose_cancelling_bf16_sums():
    """bf16 values of both signs (cancelling sums near 0), weights with 53-bit mantissas: the
    GEMMs of the split parts are exact, so ``Nr`` is near the weights' radius ``2**-50`` and
    not Higham's ``gamma_S`` (``S u``)."""
    rng = np.random.default_rng(3)
    S = 300
    W = xa.exp_mid(-np.abs(rng.standard_normal((4, S))) * 3)
    W[:, 0] = 1.0
    V = _bf16(rng.standard_normal((S, 3)))
    V[:, 2] = _bf16(V[:, 1] - V[:, 1].mean())  # a sum near 0
    sums, rel = _check_sums(W, V)
    assert sums.levels >= 1 and sums.k >= 8
    assert rel.max() < 2.0 ** -48  # S u would be 2**-44.8


def test_split_sums_wide_exponents_and_tiny_quanta():
    """Values across 2**+-40 and a subnormal one (the quantum too small to split: the plain
    GEMM's bound), weights down to the subnormals."""
    rng = np.random.default_rng(4)
    S = 64
    W = xa.exp_mid(-rng.uniform(0, 745, (3, S)))
    W[:, 1] = 1.0
    V = _bf16(rng.standard_normal((S, 2)) * 2.0 ** rng.integers(-40, 40, (S, 2)))
    _check_sums(W, V)
    V[5, 0] = 5e-320
    sums, _ = _check_sums(W, V)
    assert sums.levels == 0
    rad = np.abs(rng.standard_normal(W.shape)) * 1e-14 * W
    _check_sums(W, _bf16(rng.standard_normal((S, 2))), rad)


def test_split_sums_float32_values():
    rng = np.random.default_rng(5)
    W = xa.exp_mid(-np.abs(rng.standard_normal((3, 100))))
    V = rng.standard_normal((100, 2)).astype(np.float32).astype(np.float64)
    sums, rel = _check_sums(W, V)
    assert sums.levels >= 2


# ------------------------------------------------------------------ exact dot products
def test_quanta_prove_dot_products_exact():
    """Where ``rq_i rk_j <= 2**51`` the float64 GEMM's dot product is the exact one (bf16 data
    with exponents spread over 2**+-24 so that some products are not proven)."""
    rng = np.random.default_rng(7)
    q = _bf16(rng.standard_normal((40, 16)) * 2.0 ** rng.integers(-24, 24, (40, 1)))
    k = _bf16(rng.standard_normal((30, 16)) * 2.0 ** rng.integers(-24, 24, (30, 16)))
    ent = xa._Entry(q, k, np.zeros((30, 1)), np.ones((40, 30), bool), None, (0.25, 0.25))
    proven = np.multiply.outer(ent.rq, ent.rk) <= 2.0 ** 51
    assert 0 < proven.sum() < proven.size
    D = q @ k.T
    for i, j in zip(*np.nonzero(proven), strict=True):
        exact = sum((Fraction(a) * Fraction(b) for a, b in zip(q[i], k[j], strict=True)),
                    Fraction(0))
        assert Fraction(D[i, j]) == exact


def test_exact_differences_are_exact():
    rng = np.random.default_rng(8)
    q = _bf16(rng.standard_normal((20, 64)))
    k = _bf16(rng.standard_normal((25, 64)))
    ent = xa._Entry(q, k, np.zeros((25, 1)), np.ones((20, 25), bool), None, (0.125, 0.125))
    assert ent.exact and ent.pow2 == -3
    t, tau, _ = ent.scores(slice(0, 20), False)
    assert tau is None
    for i in range(20):
        d = [sum((Fraction(a) * Fraction(b) for a, b in zip(q[i], k[j], strict=True)),
                 Fraction(0)) for j in range(25)]
        top = max(d)
        assert [Fraction(x) for x in t[i]] == [(x - top) / 8 for x in d]


# --------------------------------------------------------------- the enclosures, every path
CASES = {
    "bf16 E=16 exact": dict(dt="bf16", E=16),
    "bf16 E=8 irrational scale": dict(dt="bf16", E=8),
    "bf16 float scale 0.3": dict(dt="bf16", E=16, scale=0.3),
    "bf16 negative scale": dict(dt="bf16", E=16, scale=-0.5),
    "bf16 float mask": dict(dt="bf16", E=16, fmask=True),
    "bf16 causal": dict(dt="bf16", E=16, causal=True),
    "float32": dict(dt="f32", E=16),
    "float32 huge logits": dict(dt="f32", E=16, big=1e13),
    "spread quanta": dict(dt="bf16", E=16, spread=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_enclosures_hold_every_path(name):
    """Each output's first-tier enclosure holds the oracle's value (mpmath at 240 bits, no
    exactref code); the rows it encloses are the finite ones."""
    c = CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    L, S, E, Ev = 5, 7, c["E"], 3
    cast = _bf16 if c["dt"] == "bf16" else (lambda a: a.astype(np.float32).astype(np.float64))
    Q = cast(rng.standard_normal((1, L, E)) * 2)
    if c.get("big"):
        Q = cast(Q * c["big"])
    K = cast(rng.standard_normal((1, S, E)))
    if c.get("spread"):
        K = cast(K * 2.0 ** rng.integers(-40, 2, K.shape))  # some products not proven
    V = cast(rng.standard_normal((1, S, Ev)))
    allowed = np.ones((1, L, S), bool)
    fm = None
    if c.get("causal"):
        allowed = np.tril(np.ones((L, S), bool))[None]
    if c.get("fmask"):
        fm = cast(rng.standard_normal((1, L, S)))
    scale = c.get("scale")
    enc = xa.enclose(Q, K, V, allowed, fm, scale)
    for i in range(L):
        keep = [j for j in range(S) if allowed[0, i, j]]
        fmr = [0.0] * len(keep) if fm is None else [float(fm[0, i, j]) for j in keep]
        vals = attention_row(Q[0, i].tolist(), [K[0, j].tolist() for j in keep],
                             [V[0, j].tolist() for j in keep], fmr, scale)
        for col, v in enumerate(vals):
            lo, hi = enc.out_lo[0, i, col], enc.out_hi[0, i, col]
            with mpmath.workprec(240):
                val = mpmath.mpf(v.numerator) / v.denominator if isinstance(v, Fraction) else v
                assert mpmath.mpf(lo) <= val <= mpmath.mpf(hi), (i, col, lo, hi)
        for j in keep:  # the weights' and scores' ends are finite and ordered
            assert 0 <= enc.p_lo[0, i, j] <= enc.p_hi[0, i, j] <= 1
            assert enc.s_lo[0, i, j] <= enc.s_hi[0, i, j]
    assert enc.ok.all()
    if not c.get("big"):
        width = (enc.out_hi - enc.out_lo) / np.abs(V).max()
        assert width.max() < 2.0 ** (-40 if c["dt"] == "f32" or c.get("spread") else -46)


@pytest.mark.parametrize("spread", [0, 30, 600])
def test_exact_dots_by_gemm_agree_with_fractions(spread):
    """The second tier's exact dot products (one GEMM where the quanta prove it, Python
    integers otherwise) are the Fractions' dot products."""
    rng = np.random.default_rng(spread)
    cast = _bf16 if spread < 100 else np.asarray  # float64 beyond bfloat16's range
    q = cast(rng.standard_normal(16) * 2.0 ** rng.integers(-spread, spread + 1, 16))
    K = cast(rng.standard_normal((9, 16)) * 2.0 ** rng.integers(-spread, spread + 1, (9, 16)))
    K[3] = 0.0
    dots, emin = xa._exact_dots(q, K)
    for j in range(9):
        exact = sum((Fraction(a) * Fraction(b) for a, b in zip(q, K[j], strict=True)),
                    Fraction(0))
        assert Fraction(dots[j]) * Fraction(2) ** emin == exact
    assert (xa._dots_from_gemm(q, K) is not None) == (spread == 0)


def test_model_reads_the_float64_values_the_rounding_gives():
    """The tolerance model's ``x``: the ExactArray's own floats (no rounding) where they are
    exact in float64, the rounding where a value lies below float64's normal range."""
    from exactref._exact import Rounding
    from exactref._formats import FORMATS
    from exactref.linalg._attention import _float64_values

    rng = np.random.default_rng(12)
    Q, K, V = (_bf16(rng.standard_normal((2, 6, 8))) for _ in range(3))
    V[1, :, 0] = 1e-310  # one key's worth of tiny values: an output of 1e-310
    al = np.ones((2, 6, 6), bool)
    al[1, 0, 1:] = False
    for b in (0, 1):  # ordinary values; values below float64's normal range
        for bits in (8, 24, 53):
            ex = xa.evaluate_attention(Q[b:b + 1], K[b:b + 1, :6], V[b:b + 1, :6], al[b:b + 1],
                                       None, None, bits)
            want = ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0]
            got = _float64_values(ex, bits)
            assert got.tobytes() == want.tobytes(), (b, bits)
            assert (np.abs(want) < 1e-300).any() == (b == 1)


@pytest.mark.parametrize("spread", [0, 20, 300])
def test_split_dots_enclose_the_exact_dot_products(spread):
    """float32 data (48-bit products) and exponents spread over 2**+-spread: the split GEMMs'
    dot products lie within their bound of the Fractions' (float32 normal data: a few ulps of
    the dot product and a 16th of one of |q| |k|, where Higham's bound is 34 of those)."""
    rng = np.random.default_rng(40 + spread)
    f32 = (lambda a: np.asarray(a, np.float32).astype(np.float64)) if spread < 100 else np.asarray
    q = f32(rng.standard_normal((12, 32)) * 2.0 ** rng.integers(-spread, spread + 1, (12, 1)))
    k = f32(rng.standard_normal((10, 32)) * 2.0 ** rng.integers(-spread, spread + 1, (10, 32)))
    q[3] = 0.0
    ent = xa._Entry(q, k, np.zeros((10, 1)), np.ones((12, 10), bool), None, (0.25, 0.25))
    assert not ent.d_exact
    got = ent._split_dots(slice(0, 12))
    assert got is not None
    D, err = got
    for i in range(12):
        for j in range(10):
            exact = sum((Fraction(a) * Fraction(b) for a, b in zip(q[i], k[j], strict=True)),
                        Fraction(0))
            assert abs(Fraction(D[i, j]) - exact) <= Fraction(err[i, j]), (i, j)
    if spread == 0:
        G = np.abs(q) @ np.abs(k).T
        assert (err <= 8 * U * np.abs(D) + U * G / 16 + 1e-300).all()  # Higham: 34 u G
