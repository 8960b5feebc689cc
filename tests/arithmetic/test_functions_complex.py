"""Complex functions: each part of ``er.<f>(z)`` is the exact part rounded once, in every mode,
checked against an independent oracle (mpmath at 300 bits, each part rounded by MPFR from the
exact Fraction: tests/mpfr_rounding.py); C99 Annex G's special values pinned; the normwise
accuracy model covers what it claims and catches one ulp more."""

from __future__ import annotations

import cmath
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import exactref as er
from mpfr_rounding import mpfr_round

mpmath.mp.prec = 300
R = er.Rounding
MODES = list(R)

_F = {"exp": mpmath.exp, "log": mpmath.log, "log10": lambda z: mpmath.log(z) / mpmath.log(10),
      "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "sinh": mpmath.sinh,
      "cosh": mpmath.cosh, "tanh": mpmath.tanh, "asin": mpmath.asin, "acos": mpmath.acos,
      "atan": mpmath.atan, "log2": lambda z: mpmath.log(z) / mpmath.log(2)}
_P = {"complex64": (24, -126, np.complex64), "complex128": (53, -1022, np.complex128)}


def _frac(v) -> Fraction:
    sign, man, exp, _ = mpmath.mpf(v)._mpf_
    if not man:
        return Fraction(0)
    return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)


def _oracle(name, z: complex, fmt: str, mode):
    p, emin, _ = _P[fmt]
    w = _F[name](mpmath.mpc(z.real, z.imag))
    out = []
    for part in (w.real, w.imag):
        f = _frac(part)
        out.append(0.0 if f == 0 else float(mpfr_round(f, p, emin, mode)))
    return out


def _inputs(fmt, n, seed):
    rng = np.random.default_rng(seed)
    re = rng.uniform(-4, 4, n) * np.exp2(rng.integers(-6, 3, n))
    im = rng.uniform(-4, 4, n) * np.exp2(rng.integers(-6, 3, n))
    return (re + 1j * im).astype(_P[fmt][2])


@pytest.mark.parametrize("fmt", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_F))
def test_each_part_is_the_exact_part_rounded_once(name, fmt):
    z = _inputs(fmt, 150 if fmt == "complex64" else 60, sum(map(ord, name + fmt)))
    for mode in MODES:
        got = getattr(er, name)(z, rounding=mode).rounded.tolist()
        for zi, g in zip(z.tolist(), got, strict=True):
            want = _oracle(name, zi, fmt, mode)
            assert [g.real, g.imag] == want, (name, fmt, mode, zi, g, want)


def test_pow_of_complex_operands():
    z = _inputs("complex128", 10, 3)
    w = _inputs("complex128", 10, 4)
    for mode in (R.NEAREST_EVEN, R.TOWARD_ZERO, R.TOWARD_POSITIVE):
        got = er.pow(z, w, rounding=mode).rounded.tolist()
        for a, b, g in zip(z.tolist(), w.tolist(), got, strict=True):
            v = mpmath.power(mpmath.mpc(a.real, a.imag), mpmath.mpc(b.real, b.imag))
            want = [float(mpfr_round(_frac(part), 53, -1022, mode)) for part in (v.real, v.imag)]
            assert [g.real, g.imag] == want, (a, b, mode)


@pytest.mark.parametrize("z, k", [(8 + 0j, 3), (-0.25 + 0j, -2), (0 + 4j, 2), (0 - 0.5j, -1),
                                  (1 + 1j, 0.5), (-4 - 4j, 2.5), (complex(2.0**-30, 2.0**-30), -29.5)])
def test_log2_of_a_modulus_power_of_two_is_exact(z, k):
    """``log2|z|`` is rational exactly when ``|z|**2`` is a power of two: then the real part is
    exact in every mode (no step in the directed ones)."""
    for mode in MODES:
        assert er.log2(np.complex128([z]), rounding=mode).rounded.tolist()[0].real == k


# C99 Annex G (G.6): (function, z, expected) with signed zeros checked
_ANNEX_G = [
    ("exp", complex(0.0, 0.0), complex(1.0, 0.0)),
    ("exp", complex(-0.0, -0.0), complex(1.0, -0.0)),
    ("exp", complex(-math.inf, 1.0), complex(0.0 * math.cos(1), 0.0 * math.sin(1))),
    ("exp", complex(math.inf, 0.0), complex(math.inf, 0.0)),
    ("log", complex(-0.0, 0.0), complex(-math.inf, math.pi)),
    ("log", complex(0.0, -0.0), complex(-math.inf, -0.0)),
    ("log", complex(-math.inf, 2.0), complex(math.inf, math.pi)),
    ("log", complex(-1.0, -0.0), complex(0.0, -math.pi)),
    ("tanh", complex(math.inf, 1.0), complex(1.0, 0.0 * math.sin(2))),
    ("tanh", complex(-0.0, 0.0), complex(-0.0, 0.0)),
    ("sinh", complex(0.0, 0.0), complex(0.0, 0.0)),
    ("cosh", complex(0.0, 0.0), complex(1.0, 0.0)),
    ("sin", complex(2.0, 0.0), complex(math.sin(2.0), -0.0)),  # cos(2) sinh(+0) = -0
    ("cos", complex(0.0, -0.0), complex(1.0, 0.0)),
    ("asin", complex(0.0, 0.0), complex(0.0, 0.0)),
    ("atan", complex(-0.0, 0.0), complex(-0.0, 0.0)),
    ("acos", complex(0.0, math.inf), complex(math.pi / 2, -math.inf)),
]


@pytest.mark.parametrize("name, z, want", _ANNEX_G)
def test_annex_g_special_values(name, z, want):
    got = getattr(er, name)(np.complex128([z])).rounded.tolist()[0]
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        if math.isnan(w):
            assert math.isnan(g)
        else:
            assert g == w and math.copysign(1, g) == math.copysign(1, w), (name, z, got, want)


def test_functions_without_a_complex_kernel_say_so():
    for name in ("exp2", "expm1", "log1p", "sigmoid", "erf"):
        with pytest.raises(TypeError, match="complex"):
            getattr(er, name)(np.complex64([1 + 1j]))


def test_complex32_is_computed_in_complex64_and_stored():
    z = np.array([0.5 + 1.25j, -1.5 + 0.75j], dtype=np.complex64)
    r = er.exp(er.asarray(z, "complex32"))
    assert r.models == ("exact", "fused in complex64")
    for zi, g in zip(z.tolist(), r.rounded.tolist(), strict=True):
        w = _F["exp"](mpmath.mpc(zi.real, zi.imag))
        want = [float(mpfr_round(_frac(p), 11, -14, R.NEAREST_EVEN)) for p in (w.real, w.imag)]
        assert [g.real, g.imag] == want


def test_the_normwise_accuracy_model():
    """``accuracy=k`` for a complex result: each part within ``k`` ulps of the modulus. An
    implementation whose parts are off by up to that is covered; past it, caught. numpy's
    complex64 exp (not correctly rounded) is covered by 2 ulps here."""
    z = _inputs("complex64", 200, 11)
    k = 2.0
    r = er.exp(z, accuracy=k)
    lo, hi = r.lowest, r.highest
    with np.errstate(all="ignore"):
        mod = np.abs(np.exp(z.astype(np.complex128)))
    ulp = np.exp2(np.floor(np.log2(mod)) - 23)
    exact = np.exp(z.astype(np.complex128))
    # every end is within k ulps of the modulus, and not much less: the band is honest
    for end, ex in ((lo[0], exact.real), (hi[0], exact.real), (lo[1], exact.imag),
                    (hi[1], exact.imag)):
        d = np.abs(end - ex) / ulp
        assert (d <= 2 * k + 1e-6).all()
    width = (hi[0] - lo[0]) / ulp
    assert np.median(width) >= 2 * k - 1
    assert r.covers(np.exp(z)).all()
    up = (np.asarray(hi[0], dtype=np.float32) + (2 * k + 1) * ulp).astype(np.float32)
    assert not r.covers(up + 1j * np.asarray(exact.imag, np.float32)).any()


def test_cmath_agrees_where_it_is_correctly_rounded():
    """A cross-check with a third implementation: cmath's complex128 results are within a
    couple of ulps of the references everywhere (no gross disagreement in branch cuts)."""
    z = _inputs("complex128", 50, 5)
    for name in ("exp", "log", "sin", "tanh", "asin", "atan"):
        ref = np.array(getattr(er, name)(z).rounded.tolist())
        other = np.array([getattr(cmath, name)(v) for v in z.tolist()])
        rel = np.abs(ref - other) / np.maximum(np.abs(ref), 1e-300)
        assert (rel < 1e-14).all(), name


def test_the_normwise_band_is_absolute_in_each_part():
    """Each part within k ulps of |f| in absolute terms: a part far smaller than |f| may change
    sign but no more (once it admitted any value of its sign), and an exactly zero part is
    within the band too (a normwise error is not the part's)."""
    k = 2.0
    z = np.complex64([1 + 1e-12j, 0.5 + 0j])
    r = er.exp(z, accuracy=k)
    lo, hi = r.lowest, r.highest
    for i, zi in enumerate(z.tolist()):
        f = complex(mpmath.exp(mpmath.mpc(zi.real, zi.imag)))
        w = k * 2.0 ** (math.floor(math.log2(abs(f))) - 23)
        # the ends: the exact part -/+ w rounded inward into float32, at most 2 ulp(|f|) wide
        assert f.imag - w <= lo[1][i] <= f.imag - w + 2.0 ** (math.floor(math.log2(w)) - 23)
        assert f.imag + w >= hi[1][i] >= f.imag + w - 2.0 ** (math.floor(math.log2(w)) - 23)
        assert lo[1][i] < 0 < hi[1][i]  # either sign
        assert hi[0][i] - lo[0][i] <= 2 * w
    assert r.covers(np.complex64([complex(lo[0][0], -1e-7), complex(hi[0][1], 2e-7)])).all()
    assert not r.covers(np.complex64([complex(lo[0][0], -1e-6), 1.6487212 + 0j])).all()


def test_a_finite_part_beside_an_infinite_one_keeps_its_band():
    """log10(-inf + iy) = inf + i pi/ln 10: the angle is computed like any value (numpy's is one
    ulp off); with a normwise bound the modulus is infinite, so the finite part is held to k
    ulps of itself, the infinite part (and a zero beside it) exactly."""
    z = np.array([complex(-np.inf, -0.6), complex(np.inf, 0.0)])
    r = er.log10(z, accuracy=1.5)
    ref = r.rounded.tolist()
    assert r.lowest[1][0] < ref[0].imag < r.highest[1][0]
    assert r.highest[1][0] - r.lowest[1][0] <= 3 * 2.0 ** -52 * 2
    assert r.lowest[0].tolist() == r.highest[0].tolist() == [np.inf, np.inf]
    assert r.lowest[1][1] == r.highest[1][1] == 0.0
