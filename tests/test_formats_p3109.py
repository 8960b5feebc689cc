"""The IEEE P3109 8-bit formats: the table, the codes, rounding and the ops, against the report.

The oracle (``tests/p3109_oracle.py``) is written from the text of the P3109 interim report
v4.0 in Python integers and Fractions and shares no code with exactref; Graphcore's ``gfloat``
(which encodes the report's formats) is a second, independent decoding where it is installed.

Overflow rules map onto the report's saturation modes: ``"ieee"`` is SatNone and
``"saturate"`` is SatPropagate, value for value (docs/p3109.md).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import exactref as er
import p3109_oracle as P
from exactref import Rounding as R
from exactref._formats import FORMATS

FMTS = [(P.name(*k), k) for k in P.formats]
NAMES = [n for n, _ in FMTS]
#: A representative fast subset: one bit (both signednesses), finite and extended, p = 8.
FAST = ["binary8p1se", "binary8p1ue", "binary8p3sf", "binary8p4se", "binary8p5uf", "binary8p8ue"]
RULES = {"ieee": "SatNone", "saturate": "SatPropagate"}
MODES = list(R)


def _key(name):
    return dict(FMTS)[name]


def _num(v) -> float:
    return float(v)


def same(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return (np.isnan(got) & np.isnan(want)) | (
        (got == want) & (np.signbit(got) == np.signbit(want)))


# ------------------------------------------------------------------------------- the table
def test_all_thirty_formats_are_in_the_table():
    """Signed P = 1..7 and unsigned P = 1..8, each extended and finite (report 3.1)."""
    got = [f.name for f in FORMATS.values() if f.encoding == "p3109"]
    assert got == NAMES and len(got) == 30


@pytest.mark.parametrize("name", NAMES)
def test_row_matches_the_report(name):
    p, signed, extended = _key(name)
    f = er.dtype(name)
    vals = P.values(p, signed, extended)
    finite = [v for v in vals if isinstance(v, Fraction)]
    top = max(finite)
    b = P.bias(p, signed)
    assert (f.bits, f.kind, f.precision, f.signed, f.has_inf) == (8, "float", p, signed, extended)
    assert f.emin == 1 - b  # the exponent of the smallest normal value, 2**(1 - B)
    assert Fraction(2) ** f.emax <= top < Fraction(2) ** (f.emax + 1)
    assert Fraction(f.max_finite) == top
    assert f.has_nan and f.has_zero and not f.has_negzero
    assert Fraction(f.smallest_subnormal) == min(v for v in finite if v > 0)
    assert f.np_dtype == np.float64 and f.encoding == "p3109" and f.default_overflow == "ieee"
    # every code: the datum, and back
    got = f.decode(np.arange(256))
    want = np.array([_num(v) for v in vals])
    assert same(got, want).all()
    assert f.encode(got).tolist() == list(range(256))
    nan_code = 0x80 if signed else 0xFF
    assert [i for i, v in enumerate(vals) if isinstance(v, float) and math.isnan(v)] == [nan_code]


@pytest.mark.parametrize("name", NAMES)
def test_row_matches_gfloat(name):
    """gfloat (Graphcore) decodes every code as the report does."""
    gfloat = pytest.importorskip("gfloat")
    from gfloat.formats import format_info_p3109

    p, signed, extended = _key(name)
    fi = format_info_p3109(8, p, gfloat.Signedness.Signed if signed else
                                  gfloat.Signedness.Unsigned,
                                  gfloat.Domain.Extended if extended else gfloat.Domain.Finite)
    want = np.array([gfloat.decode_float(fi, i).fval for i in range(256)])
    assert same(er.dtype(name).decode(np.arange(256)), want).all()
    assert er.dtype(name).max_finite == fi.max


def test_spellings():
    assert er.dtype("binary8p3") is er.dtype("binary8p3se")  # exactref's shorthand
    assert er.dtype("Binary8p4se") is FORMATS["binary8p4se"]  # the report's capital B
    assert er.dtype("p3109_k8p8uf") is FORMATS["binary8p8uf"]  # gfloat's name
    assert er.dtype("exactref.binary8p1ue") is FORMATS["binary8p1ue"]
    with pytest.raises(ValueError, match="unknown format"):
        er.dtype("binary8p8")  # no signed p = 8; unsigned has no shorthand
    with pytest.raises(ValueError, match="unknown format"):
        er.dtype("np.binary8p3se")  # no numpy dtype
    # float64 arrays still mean float64
    assert er.dtype(np.float64) is FORMATS["float64"]
    assert er.asarray(np.array([0.1])).dtype is FORMATS["float64"]


# ------------------------------------------------------------------------------ the codes
@pytest.mark.parametrize("name", FAST)
def test_codes_round_trip(name):
    f = er.dtype(name)
    a = er.from_codes(np.arange(256, dtype=np.uint8), f)
    assert a.dtype is f and a.numpy().dtype == np.float64
    assert a.codes().dtype == np.uint8 and a.codes().tolist() == list(range(256))
    b = er.asarray(a.numpy(), f)  # float64 values of the format: held, no rounding
    assert b.codes().tolist() == list(range(256))
    r = er.round_to(a, "float64")
    assert not r.inexact.any() and same(r.array.numpy(), a.numpy()).all()
    assert er.asarray([-0.0], f).codes().tolist() == [0]  # no -0: +0


def test_codes_errors():
    f = er.dtype("binary8p4se")
    with pytest.raises(ValueError, match="not a value of binary8p4se"):
        f.encode([0.3])
    with pytest.raises(ValueError, match="codes are integers from 0 to 255"):
        f.decode([256])
    with pytest.raises(ValueError, match="not a value of binary8p4se"):
        er.Array(np.array([0.3]), f)  # float64 data must hold the format's values
    with pytest.raises(TypeError, match="PyTorch has no binary8p4se"):
        er.asarray([1.0], f).torch()
    assert er.asarray([1.5], "float8_e4m3fn").codes().tolist() == [0x3C]  # native formats too


# ---------------------------------------------------------------------- rounding vs the report
def _points(p, signed, extended):
    """Magnitudes: every value, quarter points, midpoints and near-midpoints between
    neighbours, far below the smallest value, and past the largest (overflow)."""
    mags = sorted({v for v in P.values(p, signed, extended) if isinstance(v, Fraction) and v >= 0})
    top = mags[-1]
    e = top.numerator.bit_length() - top.denominator.bit_length()
    nxt = top + Fraction(2) ** (e - p + 1)  # the next value the precision gives
    mags.append(nxt)
    eps = Fraction(1, 2**20)
    pts = []
    for a, b in zip(mags, mags[1:], strict=False):
        g = b - a
        pts += [a + g * t for t in (0, Fraction(1, 4), eps, Fraction(1, 2) - eps, Fraction(1, 2),
                                    Fraction(1, 2) + eps, Fraction(3, 4), 1 - eps)]
    s = mags[1]
    pts += [s * Fraction(1, 2**30), Fraction(1, 2**1074), nxt, nxt * 3 / 2, nxt * 2,
            nxt * 2**40, Fraction(1e300)]
    pts = [v for v in pts if v > 0]
    return pts + [-v for v in pts]


def _sweep(name, mode):
    p, signed, extended = _key(name)
    pts = _points(p, signed, extended)
    x = np.array([float(v) for v in pts])
    assert all(Fraction(float(v)) == v for v in pts)  # every point is a float64
    rounded = [P.round_to_precision(v, p, P.bias(p, signed), mode) for v in pts]
    hi = P.max_finite_cached(p, signed, extended)
    lo = -hi if signed else Fraction(0)
    for rule, sat in RULES.items():
        want = np.array([_num(P.saturate(sat, mode, r, signed, extended, lo, hi))
                         for r in rounded])
        for got in (er.round_to(x, name, rounding=mode, overflow=rule).array.numpy(),
                    er.asarray(x, name, rounding=mode, overflow=rule).numpy()):
            bad = np.flatnonzero(~same(got, want))
            assert not bad.size, [(x[i].hex(), mode.value, rule, got[i], want[i])
                                  for i in bad[:5]]
    return x, rounded


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("name", FAST)
def test_rounding_matches_project(name, mode):
    """round_to of float64 points (both lanes) equals the report's Project, SatNone as 'ieee'
    and SatPropagate as 'saturate'."""
    _sweep(name, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("name", [n for n in NAMES if n not in FAST])
def test_rounding_matches_project_all_formats(name, mode):
    _sweep(name, mode)


@pytest.mark.parametrize("mode", [R.NEAREST_EVEN, R.ODD, R.TOWARD_NEGATIVE], ids=lambda m: m.value)
@pytest.mark.parametrize("name", ["binary8p1se", "binary8p1uf", "binary8p4ue"])
def test_scalar_path_matches_project(name, mode):
    """The scalar path (Python Fractions that are no float64) agrees with Project."""
    p, signed, extended = _key(name)
    pts = [v * (1 + Fraction(1, 2**70)) for v in _points(p, signed, extended)[::3]]
    want = np.array([_num(P.project(v, p, signed, extended, mode, "SatNone")) for v in pts])
    got = er.round_to(pts, name, rounding=mode).array.numpy()
    bad = np.flatnonzero(~same(got, want))
    assert not bad.size, [(str(pts[i]), got[i], want[i]) for i in bad[:5]]


@pytest.mark.parametrize("name", NAMES)
def test_specials(name):
    """Exact infinities and NaN under SatNone ('ieee') and SatPropagate ('saturate')."""
    p, signed, extended = _key(name)
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
    for rule, sat in RULES.items():
        want = [_num(P.project(v if math.isnan(v) or math.isinf(v) else Fraction(v), p, signed,
                               extended, R.NEAREST_EVEN, sat)) for v in x]
        assert same(er.round_to(x, name, overflow=rule).array.numpy(), want).all(), rule


def test_satfinite_differs_only_on_exact_infinities():
    """SatFinite clamps exact infinities too; 'saturate' keeps them (SatPropagate)."""
    p, signed, extended = _key("binary8p4se")
    hi = P.max_finite_cached(p, signed, extended)
    assert P.saturate("SatFinite", R.NEAREST_EVEN, P.INF, signed, extended, -hi, hi) == hi
    assert er.round_to([np.inf], "binary8p4se", overflow="saturate").array.tolist() == [np.inf]
    assert er.round_to([1e9], "binary8p4se", overflow="saturate").array.tolist() == [224.0]


def test_pinned_cases():
    """Hand-checked against the report's rules."""
    def rt(x, name, mode=R.NEAREST_EVEN, rule=None):
        return er.round_to([x], name, rounding=mode, overflow=rule).array.tolist()[0]

    # one bit: ties go to the even code (even biased exponent; bias 64, so even exponent)
    assert rt(1.5, "binary8p1se") == 1.0 and rt(3.0, "binary8p1se") == 4.0
    assert rt(2.0**-64, "binary8p1se") == 0.0  # half the smallest value: to code 0
    assert rt(1.25, "binary8p1se", R.ODD) == 2.0  # 1 has an even code (0x40): up to 0x41
    assert rt(2.5, "binary8p1se", R.ODD) == 2.0  # 2 has an odd code already
    # round-to-odd overflow: to +inf (code 0x7F, odd) in signed extended formats, else max
    assert rt(230.0, "binary8p4se", R.ODD) == math.inf
    assert rt(1e9, "binary8p4ue", R.ODD) == 53248.0
    # finite formats saturate under SatNone; unsigned ones give NaN below 0 except toward 0/+inf
    assert rt(1e9, "binary8p4sf") == 240.0 and rt(-1e9, "binary8p4sf") == -240.0
    assert math.isnan(rt(-1.0, "binary8p4uf")) and rt(-1.0, "binary8p4uf", R.TOWARD_ZERO) == 0.0
    assert rt(-1e-9, "binary8p4uf") == 0.0  # rounds to 0 first: no overflow
    assert rt(-1.0, "binary8p4uf", rule="saturate") == 0.0
    r = er.round_to([-1.0, 1e9, 0.3], "binary8p4uf")
    assert r.overflow.tolist() == [True, True, False] and r.inexact.tolist() == [True] * 3


# ---------------------------------------------------------------------------- the ops
@pytest.mark.parametrize("mode", [R.NEAREST_EVEN, R.TOWARD_ZERO, R.ODD], ids=lambda m: m.value)
@pytest.mark.parametrize("name", ["binary8p1se", "binary8p4se", "binary8p3ue"])
def test_add_and_multiply_are_correctly_rounded(name, mode):
    p, signed, extended = _key(name)
    vals = P.values(p, signed, extended)
    codes = np.arange(0, 256, 5)
    fin = [c for c in codes if isinstance(vals[c], Fraction)]
    a = np.repeat(fin, len(fin))
    b = np.tile(fin, len(fin))
    x, y = er.from_codes(a, name), er.from_codes(b, name)
    for op, f in ((er.add, lambda u, v: u + v), (er.multiply, lambda u, v: u * v)):
        got = op(x, y, rounding=mode).rounded.numpy()
        want = [_num(P.project(f(vals[i], vals[j]), p, signed, extended, mode, "SatNone"))
                for i, j in zip(a, b, strict=True)]
        bad = np.flatnonzero(~same(got, want))
        assert not bad.size, [(op.__name__, vals[a[i]], vals[b[i]], got[i], want[i])
                              for i in bad[:5]]


def test_mixed_formats_need_dtype():
    x = er.asarray([0.5, 1.0, 3.0], "binary8p4se")
    y = er.asarray([0.1, 1.0, 3.0], "float32")
    for policy in ("torch", "numpy", "jax", "array_api"):
        with pytest.raises(er.PromotionError, match=r"has no dtype binary8p4se.*dtype="):
            er.add(x, y, policy=policy)
    with pytest.raises(TypeError):
        er.multiply(x, 3.0)  # a Python scalar needs promotion too
    got = er.add(x, y, dtype="binary8p4se").rounded.tolist()
    want = [_num(P.project(Fraction(float(u)) + Fraction(float(v)), 4, True, True,
                           R.NEAREST_EVEN, "SatNone")) for u, v in zip(x.tolist(), y.numpy(),
                                                                       strict=True)]
    assert got == want
    assert er.multiply(x, 3.0, dtype="binary8p4se").rounded.tolist() == [1.5, 3.0, 9.0]
    assert er.add(x, x).rounded.dtype is x.dtype  # one format needs no promotion


def test_stochastic_rounding_is_the_reports_stochastic_a():
    """exactref's r-bit rule is the report's StochasticA: away where floor(d 2**N) + R >= 2**N."""
    name, (p, signed, _) = "binary8p4se", _key("binary8p4se")
    rng = np.random.default_rng(1)
    a = rng.uniform(-20, 20, 400)
    bits = rng.integers(0, 2**8, a.size, dtype=np.uint8)
    res = er.add(a, np.zeros_like(a), dtype=name, rounding="stochastic", random_bits=bits)
    got = res.rounded.numpy()
    b = P.bias(p, signed)
    want = []
    for v, rbits in zip(a, bits, strict=True):
        x = Fraction(float(v))
        q = max(P._floor_log2(abs(x)), 1 - b) - p + 1
        s = abs(x) / Fraction(2) ** q
        sf = s.numerator // s.denominator
        away = math.floor((s - sf) * 2**8) + int(rbits) >= 2**8
        want.append(_num((1 if x > 0 else -1) * (sf + away) * Fraction(2) ** q))
    assert same(got, want).all()
    with pytest.raises(ValueError, match="stochastic"):
        er.add(a, a, dtype="binary8p4ue", rounding="stochastic")


# ------------------------------------------------------------------------ CLI and the docs
def test_cli_lists_and_rounds():
    from exactref.cli._formats_cmd import format_table, round_report

    table = format_table("float")
    assert all(re.search(rf"^{n}\s", table, re.M) for n in NAMES)
    report = round_report("0.3", "binary8p4se")
    assert "bits 0x32" in report  # 0.3125 = 0x32


def test_docs_table_matches_the_data():
    """docs/p3109.md lists every format with its bias, emin, emax and largest value."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "p3109.md").read_text()
    rows = re.findall(r"^\| `(binary8p\d[su][ef])` \| (-?\d+) \| (-?\d+) \| (-?\d+) \| `([^`]+)`",
                      text, re.M)
    assert [r[0] for r in rows] == NAMES
    for n, b, emin, emax, top in rows:
        f = er.dtype(n)
        assert (int(b), int(emin), int(emax)) == (1 - f.emin, f.emin, f.emax), n
        assert float.fromhex(top) == f.max_finite, n


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("name", ["binary8p1se", "binary8p2ue", "binary8p4sf", "binary8p6se"])
def test_engine_sums_match_project(name, mode):
    """Exact sums of two float64 terms (no float64 holds them) round as Project says, through
    the engine's vectorized path and its slow path (terms a thousand binades apart)."""
    from exactref._exact import ExactPart, sum_of_products

    p, signed, extended = _key(name)
    rng = np.random.default_rng(7)
    f = er.dtype(name)
    m = np.round(rng.uniform(-1, 1, 300) * 2 ** (p + 1)) / 2 ** (p + 1)  # many ties
    big = np.ldexp(np.where(m == 0, 0.75, m), rng.integers(f.emin - p - 2, f.emax + 2, 300))
    tiny = np.where(rng.random(300) < 0.5, big * 2.0**-60, 2.0**-1074) * rng.choice([-1, 1], 300)
    ex = sum_of_products([(ExactPart.from_float64(big),), (ExactPart.from_float64(tiny),)], (300,))
    for rule, sat in RULES.items():
        got = ex.round(f, mode, rule)[0]
        want = [_num(P.project(Fraction(float(u)) + Fraction(float(v)), p, signed, extended,
                               mode, sat)) for u, v in zip(big, tiny, strict=True)]
        bad = np.flatnonzero(~same(got, want))
        assert not bad.size, [(big[i].hex(), tiny[i].hex(), rule, got[i], want[i])
                              for i in bad[:5]]
