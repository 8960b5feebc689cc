"""The function kernel (``exactref._exact._functions``): exact cases, special values, values
beyond every format, the precision it is asked for, its tables and their cache on disk."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import exactref as er
from exactref._exact import _fncache
from exactref._exact import _functions as kernel
from exactref._exact._functions import RealFunction, evaluate, function_table
from kernel_records import function

R = er.Rounding
MODES = list(R)
F64 = er.dtype("float64")
PI = math.pi


def _round(name, *args, mode=R.NEAREST_EVEN, fmt=F64, params=None):
    ex = evaluate(function(name), *[np.array([a], dtype=np.float64) for a in args], params=params)
    values, inexact, overflow, underflow = ex.round(fmt, mode, fmt.default_overflow)
    return float(values[0]), bool(inexact[0]), bool(overflow[0]), bool(underflow[0])


def _same(a: float, b: float) -> bool:
    if a != a or b != b:
        return a != a and b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


# --------------------------------------------------------------------------- exact cases
EXACT = [
    ("exp", (0.0,), 1.0), ("exp", (-0.0,), 1.0), ("exp2", (-3.0,), 0.125),
    ("exp2", (10.0,), 1024.0), ("exp2", (-1074.0,), 5e-324), ("expm1", (0.0,), 0.0),
    ("expm1", (-0.0,), -0.0), ("log", (1.0,), 0.0), ("log2", (0.125,), -3.0),
    ("log2", (2.0**1000,), 1000.0), ("log10", (1000.0,), 3.0), ("log10", (1.0,), 0.0),
    ("log10", (1e22,), 22.0), ("log1p", (-0.0,), -0.0), ("cos", (0.0,), 1.0),
    ("cosh", (-0.0,), 1.0), ("acos", (1.0,), 0.0), ("sin", (-0.0,), -0.0),
    ("tanh", (-0.0,), -0.0), ("erf", (0.0,), 0.0), ("erfc", (0.0,), 1.0),
    ("sigmoid", (0.0,), 0.5), ("sigmoid", (-0.0,), 0.5), ("silu", (-0.0,), -0.0),
    ("gelu", (-0.0,), -0.0), ("gelu_tanh", (0.0,), 0.0), ("mish", (-0.0,), -0.0),
    ("logit", (0.5,), 0.0), ("pow", (4.0, 0.5), 2.0), ("pow", (-2.0, 3.0), -8.0),
    ("pow", (2.0, -1074.0), 5e-324), ("pow", (9.0, 1.5), 27.0), ("pow", (0.25, -0.5), 2.0),
    ("atan2", (0.0, 1.0), 0.0), ("atan2", (-0.0, 2.0), -0.0),
]


@pytest.mark.parametrize("name,args,value", EXACT, ids=lambda v: repr(v))
def test_exact_cases_are_exact_in_every_mode(name, args, value):
    """An exact value rounds to itself, exactly (no inexact flag), in every mode: toward
    +inf does not step above ``exp(0) = 1``."""
    for mode in MODES:
        got, inexact, _, _ = _round(name, *args, mode=mode)
        assert _same(got, value) and not inexact, (name, args, mode, got)


def test_halving_a_subnormal_is_exact():
    """gelu(x) = (x / 2)(1 - tiny) for tiny negative x: where x / 2 is a midpoint of two
    subnormals, the value lies just beside it (found by the slow float64 sweep)."""
    x = -1.8707468132480756e-308
    assert _round("gelu", x)[0] == float.fromhex("-0x0.6b9dee5efdd35p-1022")
    assert _round("gelu", x, mode=R.NEAREST_AWAY)[0] == float.fromhex("-0x0.6b9dee5efdd35p-1022")
    assert _round("gelu", x, mode=R.TOWARD_NEGATIVE)[0] == float.fromhex(
        "-0x0.6b9dee5efdd36p-1022")


def test_values_beside_an_exact_one_step_in_the_directed_modes():
    one_up = math.nextafter(1.0, 2.0)
    one_down = math.nextafter(1.0, 0.0)
    assert _round("exp", 2.0**-60, mode=R.TOWARD_POSITIVE)[0] == one_up
    assert _round("exp", 2.0**-60, mode=R.TOWARD_NEGATIVE)[0] == 1.0
    assert _round("exp", -(2.0**-60), mode=R.TOWARD_NEGATIVE)[0] == one_down
    assert _round("tanh", 20.0, mode=R.TOWARD_ZERO)[0] == one_down
    assert _round("tanh", 20.0)[0] == 1.0
    x = 2.0**-30
    assert _round("sin", x, mode=R.TOWARD_ZERO)[0] == math.nextafter(x, 0.0)  # sin x < x
    assert _round("sin", x, mode=R.ODD)[0] == math.nextafter(x, 0.0)
    assert _round("sigmoid", 100.0, mode=R.TOWARD_POSITIVE)[0] == 1.0
    assert _round("sigmoid", 100.0, mode=R.TOWARD_NEGATIVE)[0] == one_down
    assert _round("gelu", 50.0, mode=R.TOWARD_NEGATIVE)[0] == math.nextafter(50.0, 0.0)
    assert _round("softplus", 50.0, mode=R.TOWARD_POSITIVE,
                  params={"beta": 1.0, "threshold": 100.0})[0] == math.nextafter(50.0, 99.0)


# ------------------------------------------------------------------ special values
SPECIALS = [
    ("exp", (-math.inf,), 0.0), ("exp", (math.inf,), math.inf), ("exp", (math.nan,), math.nan),
    ("expm1", (-math.inf,), -1.0), ("log", (-0.0,), -math.inf), ("log", (-1.0,), math.nan),
    ("log", (math.inf,), math.inf), ("log2", (0.0,), -math.inf), ("log10", (-math.inf,), math.nan),
    ("log1p", (-1.0,), -math.inf), ("log1p", (-2.0,), math.nan), ("sin", (math.inf,), math.nan),
    ("cos", (-math.inf,), math.nan), ("tan", (-0.0,), -0.0), ("sinh", (-math.inf,), -math.inf),
    ("cosh", (-math.inf,), math.inf), ("tanh", (-math.inf,), -1.0), ("asin", (2.0,), math.nan),
    ("acos", (-2.0,), math.nan), ("atan", (-math.inf,), -PI / 2), ("erf", (-math.inf,), -1.0),
    ("erfc", (-math.inf,), 2.0), ("erfc", (math.inf,), 0.0), ("sigmoid", (-math.inf,), 0.0),
    ("sigmoid", (math.inf,), 1.0), ("silu", (-math.inf,), -0.0), ("gelu", (-math.inf,), -0.0),
    ("gelu_tanh", (math.inf,), math.inf), ("mish", (-math.inf,), -0.0),
    ("logit", (-0.0,), -math.inf), ("logit", (1.0,), math.inf), ("logit", (1.5,), math.nan),
    ("logit", (-math.inf,), math.nan),
    # C99 F.9.1.4 atan2
    ("atan2", (0.0, -0.0), PI), ("atan2", (-0.0, -0.0), -PI), ("atan2", (0.0, 0.0), 0.0),
    ("atan2", (-0.0, 0.0), -0.0), ("atan2", (-0.0, -3.0), -PI), ("atan2", (1.0, 0.0), PI / 2),
    ("atan2", (-1.0, -0.0), -PI / 2), ("atan2", (math.inf, math.inf), PI / 4),
    ("atan2", (-math.inf, -math.inf), -3 * PI / 4), ("atan2", (2.0, -math.inf), PI),
    ("atan2", (-2.0, math.inf), -0.0), ("atan2", (math.nan, 1.0), math.nan),
    # C99 F.9.4.4 pow
    ("pow", (math.nan, 0.0), 1.0), ("pow", (1.0, math.nan), 1.0), ("pow", (-0.0, -3.0), -math.inf),
    ("pow", (-0.0, -2.0), math.inf), ("pow", (-0.0, 3.0), -0.0), ("pow", (-0.0, 2.0), 0.0),
    ("pow", (-1.0, math.inf), 1.0), ("pow", (0.5, -math.inf), math.inf),
    ("pow", (2.0, -math.inf), 0.0), ("pow", (-math.inf, -3.0), -0.0),
    ("pow", (-math.inf, 3.0), -math.inf), ("pow", (-8.0, 1 / 3), math.nan),
    ("pow", (math.inf, -1.0), 0.0), ("pow", (2.0, math.nan), math.nan),
]


@pytest.mark.parametrize("name,args,value", SPECIALS, ids=lambda v: repr(v))
def test_special_values(name, args, value):
    got = _round(name, *args)[0]
    assert _same(got, value), (name, args, got)


@pytest.mark.parametrize("beta,x,value", [(1.0, math.inf, math.inf), (1.0, -math.inf, 0.0),
                                          (-1.0, math.inf, -0.0), (-1.0, -math.inf, -math.inf),
                                          (1.0, 25.0, 25.0), (2.0, 10.5, 10.5)])
def test_softplus_specials_and_threshold(beta, x, value):
    got = _round("softplus", x, params={"beta": beta, "threshold": 20.0})[0]
    assert _same(got, value)


# ------------------------------------------------------- beyond every format's range
def test_values_beyond_float64_overflow_and_underflow_in_every_mode():
    big = float(np.finfo(np.float64).max)
    tiny = 5e-324
    for name, x in (("exp", 1e300), ("cosh", -1e300), ("sinh", 1e300), ("exp2", 1e10),
                    ("pow", (10.0, 400.0))):
        args = x if isinstance(x, tuple) else (x,)
        assert _round(name, *args)[0] == math.inf
        assert _round(name, *args, mode=R.TOWARD_ZERO)[:3] == (big, True, True)
        assert _round(name, *args, mode=R.TOWARD_NEGATIVE)[0] == big
    for name, x, sign in (("exp", -1e300, 1), ("erfc", 1e10, 1), ("sigmoid", -1e300, 1),
                          ("silu", -1e300, -1), ("gelu", -1e300, -1), ("mish", -1e300, -1),
                          ("gelu_tanh", -1e300, -1), ("expm1", -1e300, None)):
        if sign is None:
            continue
        got, inexact, _, underflow = _round(name, x)
        assert got == 0 and math.copysign(1, got) == sign and inexact and underflow, name
        up = _round(name, x, mode=R.TOWARD_POSITIVE if sign > 0 else R.TOWARD_NEGATIVE)[0]
        assert up == sign * tiny, name
        assert _round(name, x, mode=R.ODD)[0] == sign * tiny, name
    assert _round("expm1", -1e300, mode=R.TOWARD_NEGATIVE)[0] == -1.0
    assert _round("expm1", -1e300, mode=R.TOWARD_ZERO)[0] == math.nextafter(-1.0, 0.0)


def test_bfloat16_overflow_follows_the_format():
    x = er.asarray([100.0, -100.0], "bfloat16")
    assert er.exp(x).rounded.tolist() == [math.inf, 0.0]
    assert er.exp(x, rounding="toward_zero").rounded.tolist()[0] == float(
        er.dtype("bfloat16").max_finite)
    e4 = er.exp(er.asarray([100.0], "float8_e4m3fn"), rounding="toward_zero")
    assert e4.rounded.tolist() == [448.0]


# ----------------------------------------------------------------------- precision
def test_fewer_bits_serve_the_narrower_formats():
    x = np.random.default_rng(3).standard_normal(500) * 5
    full = evaluate("tanh", x)
    narrow = evaluate("tanh", x, bits=24)
    f32 = er.dtype("float32")
    for mode in MODES:
        a = full.round(f32, mode, "ieee")[0]
        b = narrow.round(f32, mode, "ieee")[0]
        assert np.array_equal(a, b), mode


def test_the_op_asks_for_its_widest_format():
    """A float32 result computed in float64 needs 53 bits: ``compute="float64"``."""
    x = np.float32([0.7, 1.3])
    r = er.exp(x, compute="float64", accuracy="correct")
    assert r.models == ("exact", "fused in float64")
    assert r.covers(np.float32(np.exp(np.float64(x)))).all()


def test_errors_say_what_is_expected():
    with pytest.raises(ValueError, match="unknown function 'expp'"):
        evaluate("expp", [1.0])
    with pytest.raises(TypeError, match="takes 2 operands"):
        evaluate(function("atan2"), [1.0])
    with pytest.raises(ValueError, match="bits=62"):
        evaluate("exp", [1.0], bits=62)
    with pytest.raises(ValueError, match="finite nonzero beta"):
        er.softplus([1.0], beta=0.0)
    with pytest.raises(ValueError, match="approximate='erf'"):
        er.gelu([1.0], approximate="erf")
    with pytest.raises(ValueError, match=r"eps=0\.75"):
        er.logit([0.5], eps=0.75)
    with pytest.raises(TypeError, match="does not take complex"):
        er.exp2(np.array([1j]))  # exp has a complex kernel; exp2 has none
    assert er.exp(np.zeros((0, 3), np.float32)).rounded.shape == (0, 3)


# -------------------------------------------------------------------------- tables
@pytest.mark.parametrize("name", ["exp", "sigmoid", "log1p"])
def test_a_table_holds_the_direct_evaluation(name):
    table = function_table(function(name), "float8_e5m2")
    raw, x = _fncache.patterns(er.dtype("float8_e5m2"))
    direct = evaluate(function(name), x)
    t = table.exact()
    for field in ("c1", "c2", "r", "E", "zero", "zsign"):
        keep = ~np.isnan(x) if field in ("c1", "c2", "E") else slice(None)
        assert np.array_equal(getattr(t, field)[keep], getattr(direct, field)[keep]), field
    assert np.array_equal(np.isnan(t.special), np.isnan(direct.special))


def test_the_cache_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("EXACTREF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel, "_TABLES", {})
    t1 = function_table("tanh", "float8_e4m3fn")
    files = list((tmp_path / "functions").rglob("*.npz"))
    assert len(files) == 1 and files[0].name == "tanh.float8_e4m3fn.npz"
    assert _fncache.version() in str(files[0])
    # a second process (an empty memory) reads the file instead of evaluating
    monkeypatch.setattr(kernel, "_TABLES", {})
    monkeypatch.setattr(kernel, "_evaluate_values", _must_not_evaluate)
    t2 = function_table("tanh", "float8_e4m3fn")
    assert np.array_equal(t1.values.mant, t2.values.mant)


def test_a_cache_file_of_another_version_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("EXACTREF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel, "_TABLES", {})
    function_table("exp", "float4_e2m1fn")
    path = _fncache.path("exp", er.dtype("float4_e2m1fn"))
    with np.load(path) as z:
        data = dict(z)
    data["version"] = np.array("0.0.1-layout0")
    np.savez(path, **data)
    assert _fncache.load("exp", er.dtype("float4_e2m1fn")) is None
    monkeypatch.setattr(kernel, "_TABLES", {})
    function_table("exp", "float4_e2m1fn")  # rebuilt and written again
    assert _fncache.load("exp", er.dtype("float4_e2m1fn")) is not None
    with open(path, "wb") as f:
        f.write(b"not a table")
    assert _fncache.load("exp", er.dtype("float4_e2m1fn")) is None


def test_an_unwritable_cache_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the directory would be")
    monkeypatch.setenv("EXACTREF_CACHE_DIR", str(blocker))
    monkeypatch.setattr(kernel, "_TABLES", {})
    table = function_table("exp", "float6_e3m2fn")
    assert table.values.mant.size == 256
    assert not os.path.isdir(blocker)


def test_tables_of_other_parameters_stay_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("EXACTREF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel, "_TABLES", {})
    function_table(function("softplus"), "float8_e4m3fn", {"beta": 2.0, "threshold": 20.0})
    assert not list(tmp_path.rglob("*.npz"))
    function_table(function("softplus"), "float8_e4m3fn", {"beta": 1.0, "threshold": 20.0})
    assert len(list(tmp_path.rglob("*.npz"))) == 1


def test_values_outside_the_format_are_evaluated():
    """``formats`` names where values come from; a value the format lacks is evaluated."""
    ex = evaluate("exp", np.array([0.1, 1.0]), formats=[er.dtype("bfloat16")])
    assert ex.round(F64, R.NEAREST_EVEN, "ieee")[0].tolist() == [math.exp(0.1), math.e]


def _must_not_evaluate(*args, **kwargs):
    raise AssertionError("the table was evaluated again instead of read from the cache")


def test_every_function_op_owns_its_record():
    """Each op of the function kernel holds its function in its record (``OpSpec.exact``):
    MPFR's function of its name, or a composition with its specials; evaluation reads the
    record (no table of names)."""
    specs = er.ops.select(kernel="function")
    assert specs and {s.family for s in specs} == {"functions"}
    for spec in specs:
        fn = spec.exact
        assert isinstance(fn, RealFunction), spec.name
        assert fn.name == spec.name and fn.arity == spec.arity, spec.name
        assert (fn.native is None) != (fn.scalar is None), spec.name
        assert fn.native is None or fn.native == spec.name, spec.name
        assert ("complex" in spec.kinds) == (fn.complex is not None), spec.name
    assert function("gelu_tanh").name == "gelu_tanh"


@pytest.mark.parametrize("beta", [1.0, -1.0, 2.5, -0.75])
@pytest.mark.parametrize("mode", list(er.Rounding))
def test_softplus_tail_adds_to_the_magnitude_for_either_sign_of_beta(beta, mode):
    """Past ``beta x > 64`` softplus is ``x + log1p(exp(-beta x)) / beta``: the rest has the
    sign of ``x`` (of ``beta``), so the value lies just beyond ``x`` in magnitude. With a
    negative beta this was once held on the wrong side (toward zero), one step off in the
    directed modes. The oracle: mpmath at 200 bits."""
    import mpmath

    mpmath.mp.prec = 200
    x = 70.0 / beta
    got = er.softplus([x], beta=beta, threshold=1000.0, rounding=mode).rounded.tolist()[0]
    exact = mpmath.log1p(mpmath.exp(mpmath.mpf(beta) * x)) / beta
    assert abs(exact) > abs(x)
    from fractions import Fraction

    from mpfr_rounding import mpfr_round

    sign, man, exp, _ = exact._mpf_
    want = float(mpfr_round((-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp), 53,
                            -1022, mode))
    assert got == want, (beta, mode, got, want)


def test_softplus_takes_an_infinite_threshold():
    """threshold=inf (never the input) and -inf (always) are accepted by the parameter check,
    so the kernel takes them too (Fraction(inf) raised OverflowError)."""
    import exactref as er

    x = np.array([1.0, 30.0, -3.0], dtype=np.float32)
    never = er.softplus(x, threshold=float("inf")).rounded.numpy()
    always = er.softplus(x, threshold=float("-inf")).rounded.numpy()
    assert always.tolist() == x.tolist()
    assert never[0] == np.float32(np.log1p(np.exp(1.0))) and never[2] > 0
