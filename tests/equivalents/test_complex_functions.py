"""The PyTorch and NumPy equivalents of the complex functions (complex64, complex128): both
libraries call glibc's cexp, clog, ... (``_numpy_functions.COMPLEX_KERNELS``); the equivalents
cover what they compute on random and adversarial inputs (contiguous and strided), each
measured departure from C99 Annex G (``GLIBC_SPECIALS``, torch's complex128 ``acos``) is pinned
(the library gives it, ``er.<fn>`` does not cover it, the equivalent does), and the bounds
are not vacuous (the library's output moved past the bound by one ulp of ``|f|`` is caught)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import exactref as er
import exactref.equivalents.numpy as ern
from exactref.equivalents._numpy_functions import COMPLEX_KERNELS, GLIBC_SPECIALS

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

FUNCTIONS = ("exp", "log", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
             "asin", "acos", "atan")
NP = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "pow": np.power}
DTYPES = ("complex64", "complex128")
INF, NAN = math.inf, math.nan


def cz(re, im, dtype) -> np.ndarray:
    """``re + i im`` with the signs of zero parts kept."""
    re, im = np.broadcast_arrays(np.asarray(re, np.float64), np.asarray(im, np.float64))
    z = np.empty(re.shape, np.complex128)
    z.real, z.imag = re, im
    return z.astype(dtype)


def library(lib, name, *args, strided=False):
    """The library's output (numpy complex128) on contiguous arrays or stride-2 views."""
    if strided:
        args = [np.repeat(a, 2)[::2] for a in args]
    if lib == "numpy":
        with np.errstate(all="ignore"):
            return np.asarray((NP.get(name) or getattr(np, name))(*args)).astype(np.complex128)
    ts = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
    if strided:
        ts = [torch.from_numpy(np.repeat(a, 2))[::2] for a in args]
    fn = torch.pow if name == "pow" else getattr(torch, name)
    return fn(*ts).numpy().astype(np.complex128)


def equivalent(lib, name):
    return getattr(ern if lib == "numpy" else ert, name)


def inputs(name, dtype, n=201, seed=0):
    """Log-uniform parts of random signs (2**-30 to 2**30), and the function's hard region:
    large imaginary (sin, cos, tan: real) parts and real parts near overflow, parts near
    k pi / 2, |z| near 1 and the negative reals with signed zeros (logarithms), the branch cuts
    of asin, acos (|re| > 1) and atan (|im| > 1) with signed zeros and tiny parts."""
    rng = np.random.default_rng([seed, sum(map(ord, name + dtype))])
    comp = er.dtype(dtype).component
    lnmax = math.log(comp.max_finite)
    q = n // 3

    def logu(m, lo=-30, hi=30):
        return np.exp2(rng.uniform(lo, hi, m)) * rng.choice([-1.0, 1.0], m)

    def tiny(m):
        return rng.choice([0.0, -0.0, 1e-30, -1e-30, 1e-200, -1e-200], m)

    re, im = [logu(q)], [logu(q)]
    m = n - q
    if name in ("exp", "sinh", "cosh", "tanh", "sin", "cos", "tan"):
        a = np.concatenate([rng.uniform(-5, 5, m // 2),
                            rng.choice([lnmax, -lnmax, lnmax + 0.6], m - m // 2)])
        b = np.concatenate([logu(m // 2, 0, 40), rng.integers(-9, 10, m - m // 2) * np.pi / 2])
        a, b = (b, a) if name in ("sin", "cos", "tan") else (a, b)
    elif name in ("log", "log2", "log10"):
        t = rng.uniform(-np.pi, np.pi, m // 2)
        r = 1 + logu(m // 2, -comp.precision - 2, -2)
        a = np.concatenate([r * np.cos(t), -np.abs(logu(m - m // 2))])
        b = np.concatenate([r * np.sin(t), tiny(m - m // 2)])
    else:
        cut = rng.choice([-1.0, 1.0], m) * (1 + np.abs(logu(m, -comp.precision, 8)))
        a, b = (tiny(m), cut) if name == "atan" else (cut, tiny(m))
    re.append(a)
    im.append(b)
    with np.errstate(over="ignore"):
        return cz(np.concatenate(re), np.concatenate(im), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("lib", ("torch", "numpy"))
def test_covered_contiguous_and_strided(lib, name, dtype):
    x = inputs(name, dtype)
    ref = equivalent(lib, name)(x)
    for strided in (False, True):
        got = library(lib, name, x, strided=strided)
        cov = ref.covers(got.astype(dtype))
        assert cov.all(), (lib, name, dtype, strided, x[~np.asarray(cov)][:3])


def _ulp_of_modulus(values, comp):
    """ulp(|f|) in ``comp`` at the binade of ``|f| (1 + 2**(2-p))``: the band's own (it may
    take the next binade near a power of two, never a smaller one)."""
    with np.errstate(all="ignore"):
        mod = np.abs(values) * (1 + 2.0 ** (2 - comp.precision))
        e = np.floor(np.log2(np.where(mod > 0, mod, 1.0)))
        return np.exp2(np.maximum(e, comp.emin) - comp.precision + 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_bound_not_vacuous(name, dtype):
    """glibc's output moved away from the reference by the bound plus one ulp of |f| (in one
    part, where |f| is a normal number) is caught."""
    if name == "acos" and dtype == "complex128":
        pytest.skip("torch's acos formula: test_torch_acos_formula")
    comp = er.dtype(dtype).component
    x = inputs(name, dtype)
    got = library("numpy", name, x)
    ref = ern.__dict__[name](x)
    r = np.asarray(ref.rounded._wide()).reshape(-1).astype(np.complex128)
    k = COMPLEX_KERNELS[name].accuracy
    ulp = _ulp_of_modulus(r, comp)
    normal = (np.isfinite(got) & (np.abs(r) > comp.smallest_normal * 2 ** 8)
              & (np.abs(r) < comp.max_finite / 4))
    for part in ("real", "imag"):
        g = getattr(got, part)
        away = np.where(g >= getattr(r, part), 1.0, -1.0)
        moved = got.copy()
        with np.errstate(all="ignore"):
            setattr(moved, part, g + away * (k + 1.5) * ulp)
            moved = moved.astype(dtype)
        # where the moved part still rounds into the dtype's grid as intended
        with np.errstate(all="ignore"):
            # stored in the dtype, the moved part lies (k + 1) ulps of |f| or more from the
            # reference part
            gap = np.abs(getattr(moved.astype(np.complex128), part) - getattr(r, part))
            fine = normal & (gap >= (k + 1) * ulp)
        cov = np.asarray(ref.covers(moved))
        assert fine.sum() > 50
        assert not cov[fine].any(), (name, dtype, part, x[fine & cov][:3])


def _cases(name, dtype):
    rows = GLIBC_SPECIALS[name]
    x = cz([r[0][0] for r in rows], [r[0][1] for r in rows], dtype)
    want = cz([r[1][0] for r in rows], [r[1][1] for r in rows], np.complex128)
    return x, want


def _same(a, b):
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    ok = np.ones(a.shape, bool)
    for p in ("real", "imag"):
        u, v = getattr(a, p), getattr(b, p)
        ok &= np.where(np.isnan(v), np.isnan(u), (u == v) & (np.signbit(u) == np.signbit(v)))
    return ok


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(GLIBC_SPECIALS))
@pytest.mark.parametrize("lib", ("torch", "numpy"))
def test_glibc_special_values_pinned(lib, name, dtype):
    """Each row of GLIBC_SPECIALS: the library gives it, er.<fn> (C99 Annex G) does not cover
    it, the equivalent does, and the equivalent takes nothing else there."""
    x, want = _cases(name, dtype)
    got = library(lib, name, x)
    assert _same(got, want).all(), (lib, name, dtype, got, want)
    assert not np.asarray(getattr(er, name)(x).covers(got.astype(dtype))).any()
    ref = equivalent(lib, name)(x)
    assert ref.covers(got.astype(dtype)).all()
    other = cz(np.where(np.isnan(want.real), 1.0, np.nan), want.imag, dtype)
    assert not np.asarray(ref.covers(other)).any()


def test_torch_acos_formula():
    """torch's complex128 acos is pi/2 - asin(z) in double: acos(0.5 + 0j) is one ulp below
    the correctly rounded pi/3 and its imaginary part +0 (Annex G: -0)."""
    x = cz([0.5, 0.0, -0.5, 1.0 - 2.0 ** -40], [0.0, 0.0, 0.0, -1e-200], "complex128")
    got = library("torch", "acos", x)
    assert got[0] == complex(h("0x1.0c152382d7365p+0"), 0.0)
    assert not np.signbit(got.imag[:3]).any()
    assert not np.asarray(er.acos(x).covers(got)).all()
    assert ert.acos(x).covers(got).all()
    assert ert.acos(x).covers(library("torch", "acos", x, strided=True)).all()
    # the formula, not any value: the real part one ulp further off is caught
    moved = got.copy()
    moved.real = np.nextafter(np.nextafter(got.real, -np.inf), -np.inf)
    assert not np.asarray(ert.acos(x).covers(moved))[:3].any()


def h(s):
    return float.fromhex(s)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lib", ("torch", "numpy"))
def test_pow_covered_and_not_vacuous(lib, dtype):
    """cpow (``cexp(w clog z)``; numpy: repeated products for integer exponents) within
    4 (1 + |w log z|) ulps of |f| on moderate operands, and caught past that bound."""
    rng = np.random.default_rng(3)
    n = 201
    z = cz(rng.uniform(-3, 3, n), rng.uniform(-3, 3, n), dtype)
    w = cz(np.concatenate([rng.integers(-6, 7, 67), rng.uniform(-8, 8, n - 67)]),
           np.concatenate([np.zeros(67), rng.uniform(-2, 2, n - 67)]), dtype)
    ref = equivalent(lib, "pow")(z, w)
    got = library(lib, "pow", z, w)
    assert ref.covers(got.astype(dtype)).all()
    assert ref.covers(library(lib, "pow", z, w, strided=True).astype(dtype)).all()
    comp = er.dtype(dtype).component
    with np.errstate(all="ignore"):
        k = 4 * (1 + np.abs(w.astype(np.complex128) * np.log(z.astype(np.complex128))))
        k = np.exp2(np.ceil(np.log2(k)))
    r = np.asarray(ref.rounded._wide()).reshape(-1).astype(np.complex128)
    with np.errstate(all="ignore"):
        moved = got + (k + 1) * _ulp_of_modulus(r, comp) * np.where(got.real >= r.real, 1, -1)
    fine = np.abs(r) > 2 ** -60
    assert not np.asarray(ref.covers(moved.astype(dtype)))[fine].any()


def test_pinned_table_rows_are_specials_only():
    """The departures are rows of special inputs, never a finite class: every input has an
    infinite or NaN part (or is a zero beside one)."""
    for rows in GLIBC_SPECIALS.values():
        for (a, b), _ in rows:
            assert not (math.isfinite(a) and math.isfinite(b))


@pytest.mark.parametrize("lib", ("torch", "numpy"))
def test_pow_lost_argument_pinned(lib):
    """cpow where ``w clog(z)`` has an imaginary part far beyond 2**p: the argument is lost in
    its rounding. ``(1e300 + 1e-5j) ** (2 + 1e200j)`` overflows: glibc's infinities point another
    way than the exact ``inf - inf i``; the equivalent allows the signs over the argument's
    uncertainty (every direction here), never NaN. ``(1e30 + 1e30j) ** (1e37 + 1e37j)`` in
    complex64: the product overflows in float, cexp of it is ``inf + NaN i``."""
    z, w = cz([1e300], [1e-5], "complex128"), cz([2.0], [1e200], "complex128")
    got = library(lib, "pow", z, w)
    assert _same(got, cz([-INF], [INF], np.complex128)).all()
    assert not er.pow(z, w, accuracy=4).covers(got).all()
    ref = equivalent(lib, "pow")(z, w)
    assert ref.covers(got).all()
    assert not ref.covers(cz([NAN], [INF], "complex128")).any()
    z, w = cz([1e30], [1e30], "complex64"), cz([1e37], [1e37], "complex64")
    got = library(lib, "pow", z, w)
    assert _same(got, cz([INF], [NAN], np.complex128)).all()
    assert not er.pow(z, w, accuracy=4).covers(got.astype("complex64")).all()
    assert equivalent(lib, "pow")(z, w).covers(got.astype("complex64")).all()


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lib", ("torch", "numpy"))
def test_pow_random_bit_patterns(lib, dtype):
    """cpow of finite operands drawn by bit pattern (as the audit draws them): |w log z| up to
    2**1000, overflow and underflow in every direction, w clog(z) overflowing: all covered."""
    rng = np.random.default_rng(1)
    comp = er.dtype(dtype).component
    n = 2000

    def parts():
        if comp.bits == 64:
            raw = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
            v = raw.view(np.float64)
        else:
            v = rng.integers(0, 2**32, n, dtype=np.int64).astype(np.uint32).view(
                np.float32).astype(np.float64)
        return np.where(np.isfinite(v), v, 1.0)

    with np.errstate(all="ignore"):  # signalling NaN patterns
        z, w = cz(parts(), parts(), dtype), cz(parts(), parts(), dtype)
        got = library(lib, "pow", z, w).astype(dtype)
    cov = equivalent(lib, "pow")(z, w).covers(got)
    assert cov.all(), (z[~np.asarray(cov)][:3], w[~np.asarray(cov)][:3])


@pytest.mark.parametrize("lib", ("torch", "numpy"))
def test_pow_branches_pinned(lib):
    """The powers' own branches, each a measured departure from exactref's power: ``(-inf +
    31.25i) ** 3`` is the textbook product ``z (z z)`` (torch's ``x * x * x``, numpy's
    ``cmul``): ``NaN + inf i`` (``inf - inf``), where the exact power is ``inf + NaN i``;
    numpy's zero base to ``-1.5 + 2i`` is ``npy_cpow``'s ``NaN + NaN i``; torch's ``0 ** 2.5``
    is glibc's ``cexp(-inf + NaN i)`` of the product ``2.5 * clog(0)``: ``0 - 0i``."""
    z = cz([-INF], [31.25], "complex128")
    w = cz([3.0], [0.0], "complex128") if lib == "numpy" else 3.0  # torch: a Python scalar
    cases = [(z, w, cz([NAN], [INF], np.complex128))]
    if lib == "numpy":
        cases.append((cz([0.0], [0.0], "complex128"), cz([-1.5], [2.0], "complex128"),
                      cz([NAN], [NAN], np.complex128)))
    else:
        cases.append((cz([0.0], [0.0], "complex64"), 2.5, cz([0.0], [-0.0], np.complex128)))
    for x, y, want in cases:
        got = library(lib, "pow", x, y) if not isinstance(y, float) else \
            torch.pow(torch.from_numpy(x), y).numpy().astype(np.complex128)
        assert _same(got, want).all(), (x, y, got)
        out = got.astype(x.dtype)
        yy = y if isinstance(y, float) else (y if lib == "numpy" else torch.from_numpy(y))
        assert not np.asarray(er.pow(x, y, accuracy=4).covers(out)).any()
        xx = x if lib == "numpy" else torch.from_numpy(x)
        assert equivalent(lib, "pow")(xx, yy).covers(out).all()


def test_torch_cpow_zero_exponent_pinned():
    """A tensor exponent 0 is glibc's ``cpow``: ``cexp(0 * clog(z))``, NaN + NaN i for a zero or
    non-finite base (``0 * -inf``), where the exact power is 1; finite bases give ``1 + 0i``."""
    z = cz([0.0, INF, 1.0, 1.0], [0.0, 1.0, NAN, 1.0], "complex128")
    w = np.zeros(4, np.complex128)
    got = library("torch", "pow", z, w)
    assert np.isnan(got[:3]).all() and got[3] == 1
    assert not np.asarray(er.pow(z, w).covers(got))[:3].any()
    ref = ert.pow(torch.from_numpy(z), torch.from_numpy(w))
    assert ref.covers(got).all()
    assert not np.asarray(ref.covers(np.ones(4, np.complex128)))[:3].any()
