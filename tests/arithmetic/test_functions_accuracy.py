"""Accuracy models (``accuracy=``): the candidates are exactly the numbers of the compute format
within ``k`` ulps of the exact value, checked against an independent oracle (mpmath at 300 bits,
Fractions, and numpy's nextafter walking the format), and implementations outside the model are
caught.

The oracle's definition (docs/functions.md, "Accuracy models"): ``ulp(f) = 2**(max(e, emin) -
p + 1)`` with ``2**e <= |f| < 2**(e+1)``, except that where ``f`` rounds to nearest up to
``2**(e+1)`` the ulp of ``2**(e+1)`` is taken; the candidates are the numbers ``v`` of the
format with ``|v - f| <= k ulp(f)`` of ``f``'s sign (or zero), plus an overflow where ``f +- k
ulp`` rounds to nearest beyond the largest finite number.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import ml_dtypes
import mpmath
import numpy as np
import pytest

import exactref as er

mpmath.mp.prec = 300

_F = {"exp": mpmath.exp, "tanh": mpmath.tanh, "sin": mpmath.sin, "log": mpmath.log,
      "erf": mpmath.erf, "atan": mpmath.atan}

_FMT = {"float32": (np.float32, 24, -126), "float64": (np.float64, 53, -1022),
        "bfloat16": (ml_dtypes.bfloat16, 8, -126), "float16": (np.float16, 11, -14)}


def _exact(name, x: float) -> mpmath.mpf:
    return _F[name](mpmath.mpf(x))


def _frac(v) -> Fraction:
    sign, man, exp, _ = mpmath.mpf(v)._mpf_
    if not man:
        return Fraction(0)
    return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)


def _rn(f: Fraction, dt) -> float:
    """Round-to-nearest-even of an exact Fraction into ``dt`` by walking neighbours (no
    exactref code)."""
    big = _big(dt)
    if abs(f) >= big + _ulp_at(big, dt) / 2:
        return math.copysign(math.inf, f)
    with np.errstate(over="ignore"):
        x = dt(float(f))  # float(f) is correctly rounded to float64; the walk fixes the rest
    if not np.isfinite(x):
        x = dt(math.copysign(float(big), f))
    best = None
    for cand in _around(x, dt, 3):
        d = abs(Fraction(float(cand)) - f) if np.isfinite(cand) else None
        if d is None:
            continue
        if best is None or d < best[0] or (d == best[0] and _even(cand, dt)):
            best = (d, cand)
    return float(best[1])


def _big(dt) -> Fraction:
    finfo = ml_dtypes.finfo(dt) if dt is ml_dtypes.bfloat16 else np.finfo(dt)
    return Fraction(float(finfo.max))


def _ulp_at(big: Fraction, dt) -> Fraction:
    p = {np.float32: 24, np.float64: 53, np.float16: 11, ml_dtypes.bfloat16: 8}[dt]
    return Fraction(2) ** (math.floor(math.log2(float(big))) - p + 1)


def _even(v, dt) -> bool:
    bits = np.array([v], dtype=dt).view(np.uint16 if np.dtype(dt).itemsize == 2 else
                                       np.uint32 if np.dtype(dt).itemsize == 4 else np.uint64)
    return int(bits[0]) % 2 == 0


def _around(x, dt, n):
    out = [dt(x)]
    lo = hi = dt(x)
    for _ in range(n):
        lo = _next(lo, dt, -1)
        hi = _next(hi, dt, +1)
        out += [lo, hi]
    return out


def _next(v, dt, direction):
    if dt in (np.float32, np.float64, np.float16):
        return np.nextafter(dt(v), dt(np.inf * direction))
    a = np.array([v], dtype=dt)
    u = a.view(np.uint16)
    if float(a[0]) == 0:
        return dt(direction * 2.0 ** -133)
    if (float(a[0]) > 0) == (direction > 0):
        u = u + np.uint16(1)
    else:
        u = u - np.uint16(1)
    return u.view(dt)[0]


def _ulp(f: Fraction, dt, p, emin) -> Fraction:
    if f == 0:
        return Fraction(2) ** (emin - p + 1)
    e = math.floor(math.log2(abs(f))) if abs(f) > 0 else emin
    # exact floor(log2): fix the float estimate
    while Fraction(2) ** e > abs(f):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(f):
        e += 1
    rn = _rn(f, dt)
    if math.isfinite(rn) and abs(Fraction(rn)) >= Fraction(2) ** (e + 1):
        e += 1
    return Fraction(2) ** (max(e, emin) - p + 1)


def _oracle_band(f: Fraction, k: float, dt, p, emin):
    """(lowest, highest) numbers of ``dt`` within ``k`` ulps of ``f`` on ``f``'s side of 0
    (an exact zero stays exact)."""
    if f == 0:
        return 0.0, 0.0
    u = _ulp(f, dt, p, emin)
    K = Fraction(math.ceil(k * 256), 256)
    lo_b, hi_b = f - K * u, f + K * u
    big = _big(dt)
    v = dt(_rn(f, dt))
    lo = v
    while True:
        nxt = _next(lo, dt, -1)
        if not np.isfinite(nxt) or Fraction(float(nxt)) < lo_b:
            break
        lo = nxt
    hi = v
    while True:
        nxt = _next(hi, dt, +1)
        if not np.isfinite(nxt) or Fraction(float(nxt)) > hi_b:
            break
        hi = nxt
    lo, hi = float(lo), float(hi)
    ulp_big = _ulp_at(big, dt)
    if hi_b >= big + ulp_big / 2:
        hi = math.inf
    if lo_b <= -(big + ulp_big / 2):
        lo = -math.inf
    if f > 0:
        lo = max(lo, 0.0)
    if f < 0:
        hi = min(hi, -0.0)
    return lo, hi


def _inputs(name, rng, n):
    """Random inputs over a wide range, and adversarial ones: values whose function value lies
    just below or above a power of two (the ulp changes there), tiny and huge results."""
    xs = [rng.uniform(-10, 10) for _ in range(n)] + [
        math.ldexp(rng.uniform(0.5, 1), rng.randint(-40, 6)) * rng.choice([-1, 1])
        for _ in range(n)]
    if name == "exp":
        xs += [math.log(2.0 ** j) + d for j in range(-8, 9) for d in (-1e-7, 1e-7, -1e-9, 1e-9)]
        xs += [-103.5, -104.0, -87.0, 88.72, 88.7228, -745.0, -740.0, 709.7]
    if name == "tanh":
        xs += [8.0, 8.3, 9.0, 9.01, 0.5493, -8.3]
    if name == "log":
        xs = [abs(v) for v in xs] + [2.0 ** j * (1 + d) for j in (-3, 0, 1, 4)
                                     for d in (1e-7, -1e-7, 3e-8)]
    return xs


@pytest.mark.parametrize("fmt", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_F))
def test_the_band_is_every_number_within_k_ulps(name, fmt):
    dt, p, emin = _FMT[fmt]
    rng = random.Random(f"{name}{fmt}")
    xs = [float(dt(v)) for v in _inputs(name, rng, 25)]
    for k in (0.5, 1.0, 1.5, 3.5, 2 + 3 / 256, 4.1):
        r = getattr(er, name)(er.asarray(xs, fmt), accuracy=k)
        lo, hi = np.asarray(r.lowest), np.asarray(r.highest)
        for i, x in enumerate(xs):
            f = _frac(_exact(name, x))
            if not math.isfinite(x) or (name == "log" and x <= 0):
                continue
            want = _oracle_band(f, k, dt, p, emin)
            got = (float(lo[i]), float(hi[i]))
            assert got == want, (name, fmt, k, x.hex(), got, want)


@pytest.mark.parametrize("fmt", ["bfloat16", "float16"])
def test_a_band_in_float32_stored_into_a_half_format(fmt):
    """Half formats compute in float32: the candidates are the band's ends stored (rounded to
    nearest) into the output format; every 61st bit pattern of the format checked."""
    dt, _, _ = _FMT[fmt]
    xs = np.arange(1 << 16, dtype=np.uint16).view(dt)
    with np.errstate(invalid="ignore"):
        xs = xs[np.isfinite(xs.astype(np.float64))][::61]
    r = er.tanh(er.asarray(xs, fmt), accuracy=2.0)
    lo, hi = np.asarray(r.lowest), np.asarray(r.highest)
    f32 = _FMT["float32"]
    for i, x in enumerate(xs.astype(np.float64).tolist()):
        f = _frac(_exact("tanh", x))
        if f == 0:
            continue
        blo, bhi = _oracle_band(f, 2.0, *f32)
        assert float(lo[i]) == float(dt(blo)) and float(hi[i]) == float(dt(bhi)), x


def test_simulated_implementations_inside_are_covered_and_outside_caught():
    """A float32 exp whose error is drawn up to k ulps (every number the model allows, chosen
    at random) is covered; one more ulp is caught."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-80, 80, 4000).astype(np.float32)
    k = 3.5
    r = er.exp(er.asarray(x, "float32"), accuracy=k)
    lo, hi = np.asarray(r.lowest, np.float32), np.asarray(r.highest, np.float32)
    # every number of the band is reachable: walk from the lowest a random number of steps
    width = (hi.view(np.int32) - lo.view(np.int32)).astype(np.int64)
    steps = (rng.random(x.size) * (width + 1)).astype(np.int64)
    inside = (lo.view(np.int32) + steps).astype(np.int32).view(np.float32)
    assert r.covers(inside).all()
    outside = np.nextafter(hi, np.float32(np.inf))
    assert not r.covers(outside).any()
    # independently: the band is k ulps wide on each side, so 2k+1 numbers at most (binade
    # edges aside)
    assert (width <= 2 * 7 + 1).all() and (width >= 2 * 3).mean() > 0.99


def test_a_bfloat16_exp_in_bfloat16_arithmetic_is_caught_even_by_a_loose_preset():
    """exp computed in bfloat16 throughout (range reduction and a degree-4 Taylor polynomial,
    every step rounded to bfloat16) fails the SLEEF u35 model (3.5 ulps in float32, stored)."""
    bf = ml_dtypes.bfloat16
    x = np.linspace(-4, 4, 513).astype(bf)

    def r(v):
        return np.asarray(v, dtype=np.float64).astype(bf)

    n = np.round(x.astype(np.float64) / math.log(2))
    t = r(x.astype(np.float64) - r(n * r(math.log(2))).astype(np.float64))
    poly = r(1.0)
    term = r(1.0)
    for j in range(1, 5):
        term = r(term.astype(np.float64) * t.astype(np.float64) / j)
        poly = r(poly.astype(np.float64) + term.astype(np.float64))
    y = r(np.ldexp(poly.astype(np.float64), n.astype(int)))
    res = er.exp(er.asarray(x, "bfloat16"), accuracy=3.5)
    cov = res.covers(y)
    assert not cov.all() and cov.uncovered > 10


def test_errors_say_what_is_accepted():
    with pytest.raises(ValueError, match="half an ulp"):
        er.exp([1.0], accuracy=0.25)
    with pytest.raises(ValueError, match="preset"):
        er.exp([1.0], accuracy="sleef")
    with pytest.raises(ValueError, match="expected 'correct'"):
        er.exp([1.0], accuracy=[1])
    with pytest.raises(TypeError, match="accuracy"):
        er.add([1.0], [2.0], accuracy=1.0)


def test_correct_adds_nothing_and_the_reference_never_changes():
    x = er.asarray([0.5, 1.5], "float32")
    assert er.exp(x, accuracy="correct").models == ("exact",)
    r = er.exp(x, accuracy=1)
    assert r.rounded.tolist() == er.exp(x).rounded.tolist()  # the reference never changes
    assert r.rounded.tolist() == er.exp(x, accuracy="correct").rounded.tolist()
    assert (r.tolerance_ulps() >= 0.5).all()


# ------------------------------------------------------------------------------ presets
def test_the_docs_show_the_presets_tables():
    from pathlib import Path

    from exactref.arithmetic._accuracy import markdown_table

    doc = (Path(__file__).parents[2] / "docs" / "functions.md").read_text()
    for fmt in ("float32", "float64"):
        assert markdown_table(fmt) in doc, fmt


@pytest.mark.parametrize("name", sorted(er.ACCURACY_PRESETS))
def test_every_preset_answers_for_what_it_documents(name):
    """Each documented (function, format) gives a band at least as wide as half an ulp, a
    source that names where the number comes from, and a model name saying which preset."""
    preset = er.ACCURACY_PRESETS[name]
    assert preset.source and (name == "correct" or preset.measure)
    x = [0.75, 1.5, -0.25]
    for fmt in ("float32", "float64"):
        for fn in preset.functions(fmt):
            args = (x, [1.25] * 3) if fn in ("atan2", "pow") else (x,)
            r = getattr(er, fn)(*[er.asarray(a, fmt) for a in args], accuracy=name)
            assert name in r.models[-1]
            assert (r.tolerance_ulps() >= 0).all()


def test_sources_counting_from_the_correct_rounding_get_half_an_ulp_more():
    glibc = er.ACCURACY_PRESETS["glibc"]
    sleef = er.ACCURACY_PRESETS["sleef_u10"]
    assert glibc.against == "rounded" and sleef.against == "exact"
    x = er.asarray(np.linspace(0.1, 3, 50), "float32")
    k = glibc.bound("exp", "float32")
    a = er.exp(x, accuracy="glibc")
    b = er.exp(x, accuracy=k + 0.5)
    assert np.array_equal(a.lowest, b.lowest) and np.array_equal(a.highest, b.highest)
    c = er.exp(x, accuracy="sleef_u10")
    d = er.exp(x, accuracy=sleef.bound("exp", "float32"))
    assert np.array_equal(c.lowest, d.lowest) and np.array_equal(c.highest, d.highest)


def test_cudas_expf_intrinsic_widens_with_x():
    """``__expf``: 2 + floor(1.173 |x|) ulps from the correct rounding, per element."""
    x = np.array([0.5, 10.0, 50.0, -60.0], dtype=np.float32)
    r = er.exp(er.asarray(x, "float32"), accuracy="cuda_intrinsics")
    want = 2 + np.floor(1.173 * np.abs(x.astype(np.float64))) + 0.5
    got = np.asarray(r.tolerance_ulps())
    # the band's ends are numbers of the format within the bound: floor of it, at a binade
    # edge one step more on the lower side at most
    assert (got <= want).all() and (got >= np.floor(want) - 1).all(), (got, want)


def test_cudas_logf_absolute_bound_near_one():
    """``__logf`` on [0.5, 2]: an absolute error 2**-21.41, which near x = 1 (log x near 0)
    is a great many ulps of the result; elsewhere 3 ulps."""
    x = np.array([1 + 2.0**-20, 1.5, 3.0, 100.0], dtype=np.float32)
    r = er.log(er.asarray(x, "float32"), accuracy="cuda_intrinsics")
    lo, hi = np.asarray(r.lowest), np.asarray(r.highest)
    exact = np.log(x.astype(np.float64))
    assert hi[0] - exact[0] <= 2**-21.41 * 1.0001 and hi[0] - exact[0] > 2**-22
    assert exact[0] - lo[0] <= 2**-21.41 * 1.0001 and lo[0] >= 0  # log(x) > 0: never below
    assert np.asarray(r.tolerance_ulps())[2:].max() <= 3.5


def test_an_open_bound_admits_any_value_of_the_right_sign():
    """``__sinf`` outside [-pi, pi]: the guide says only "larger otherwise"."""
    r = er.sin(er.asarray([10.0, -10.0], "float32"), accuracy="cuda_intrinsics")
    assert r.rounded.tolist()[0] < 0  # sin(10) = -0.544...
    assert r.covers([-1.0, 1.0]).all()
    assert not r.covers([1e-3, -1e-3]).any()  # never the wrong sign


def test_a_preset_without_the_function_or_format_says_so():
    with pytest.raises(ValueError, match="documents no gelu"):
        er.gelu([1.0], accuracy="sleef_u10")
    with pytest.raises(ValueError, match="bfloat16"):
        er.exp(er.asarray([1.0], "bfloat16"), compute="bfloat16", accuracy="glibc")


@pytest.mark.parametrize("fmt", ["float6_e2m3fn", "float4_e2m1fn", "float8_e4m3fn"])
def test_narrow_inputs_into_a_wider_output_from_the_table(fmt):
    """A format stored in a byte has more storage patterns than values: the band's inputs are
    the table's (every pattern of the storage); this once raised IndexError."""
    x = er.asarray([0.5, -1.0, 1.5], fmt)
    a = er.exp(x, dtype="float32", accuracy=2)
    b = er.exp(er.asarray(x.numpy().astype(np.float32), "float32"), accuracy=2)
    assert np.array_equal(a.lowest, b.lowest) and np.array_equal(a.highest, b.highest)


# ------------------------------------------------- the bounds live in the function records
def test_each_function_record_carries_its_documented_bounds():
    """A function's per-preset bounds are its declaration's (``presets=documented(...)``),
    carried by its record's band models; the presets read them there."""
    from exactref.arithmetic._accuracy import Within, documented_by

    spec = er.ops.get_op("tanh")
    assert spec.models == ("exact", "fused in {c}", "within {a} in {c}: lowest",
                           "within {a} in {c}: highest")  # still read as the models' names
    bands = [m for m in spec.models if isinstance(m, Within)]
    assert len(bands) == 2 and bands[0].documented is not None
    assert documented_by("tanh")["sleef_u10"] == {"float32": 1.0001, "float64": 1.0}
    assert er.ACCURACY_PRESETS["sleef_u10"].bound("tanh", "float32") == 1.0001
    assert er.ACCURACY_PRESETS["cuda_intrinsics"].bound("tanh", "float32") == {"rel": 2**-11}
    glibc = er.ACCURACY_PRESETS["glibc"]
    assert dict(glibc.bounds)["exp"] == {"float32": 1, "float64": 1}
    assert set(glibc.bounds) == {s.name for s in er.ops.select(family="functions")
                                 if "glibc" in documented_by(s.name)}
    # ops that are no real function, or a function no preset documents: nothing
    assert documented_by("add") == {} and documented_by("no_such_op") == {}
    assert documented_by("mish") == {} and glibc.bound("sigmoid", "float32") is None
    assert set(documented_by("sigmoid")) == {"formula"}  # the mainstream's derived bound
    with pytest.raises(ValueError, match="documents no sigmoid computed in float32"):
        er.sigmoid(er.asarray([0.5], "float32"), accuracy="glibc")


def test_a_new_function_states_its_bounds_in_its_declaration():
    """A throwaway function declared the usual way: the presets its declaration names document
    it (their bounds, their offsets), the others do not, as for any function they omit."""
    from exactref._exact import mpfr_function
    from exactref.arithmetic import functions
    from exactref.arithmetic._accuracy import documented
    from exactref.arithmetic._elementwise import elementwise
    from exactref.arithmetic._function_kernel import MODELS, lane, value

    name = "exp_trial"
    with er.ops.declaring(name, __name__):
        @functions._functions_family(mpfr_function("exp"),
                                     presets=documented(glibc=(2, 3), sleef_u35=2.0**17))
        @elementwise(name, ("x",), kernel="function", promotion="exp", kinds=("float",),
                     summary="e**x, rounded once",
                     counterparts=er.ops.Counterparts(None, None, None), models=MODELS,
                     fast=lane, accuracy=True)
        def exp_trial(ctx, X):
            """``e**x``, rounded once."""
            return value(ctx, X)

        glibc, sleef = er.ACCURACY_PRESETS["glibc"], er.ACCURACY_PRESETS["sleef_u35"]
        assert glibc.bound(name, "float32") == 2 and glibc.bound(name, "float64") == 3
        assert name in glibc.functions("float64") and name in sleef.functions("float32")
        x = er.asarray(np.linspace(0.1, 3, 20), "float32")
        for preset, ulps in (("glibc", 2.5), ("sleef_u35", 2.0**17)):
            a, b = exp_trial(x, accuracy=preset), er.exp(x, accuracy=ulps)
            assert np.array_equal(a.lowest, b.lowest) and np.array_equal(a.highest, b.highest)
            assert preset in a.models[-1]
        # the table lane (bfloat16 inputs): its own tables, not exp's of the same function
        h = er.asarray([0.1, 1.0, 2.5], "bfloat16")
        b = er.exp(h, accuracy="sleef_u35")  # exp's 1 ulp: collapses to the rounded value
        a, c = exp_trial(h, accuracy="sleef_u35"), er.exp(h, accuracy=2.0**17)
        assert np.array_equal(a.lowest, c.lowest) and np.array_equal(a.highest, c.highest)
        assert (a.highest.astype(float) > b.highest.astype(float)).all()
        with pytest.raises(ValueError, match=f"'cuda' preset documents no {name} computed"):
            exp_trial(x, accuracy="cuda")
    assert glibc.bound(name, "float32") is None and name not in glibc.functions("float32")


@pytest.mark.parametrize("kw, match", [
    ({"glic": 1}, "glic=: not a preset; the presets with data are glibc, "),
    ({"glibc": (1, 2, 3)}, r"expected one bound or a pair \(float32, float64\)"),
    ({"glibc": -1}, "a bound is a number of ulps >= 0"),
    ({"glibc": True}, "a bound is a number of ulps >= 0"),
    ({"cuda": ({"ulps": 1}, 2)}, "cuda=: accuracy=.*expected a number of ulps"),
])
def test_a_declaration_refuses_a_bound_it_cannot_state(kw, match):
    from exactref.arithmetic._accuracy import documented

    with pytest.raises(ValueError, match=match):
        documented(**kw)
    assert documented(numpy=None, cuda=(2, {"rel": 0.5})) == {
        "numpy": {"float32": None, "float64": None},
        "cuda": {"float32": 2, "float64": {"rel": 0.5}}}
