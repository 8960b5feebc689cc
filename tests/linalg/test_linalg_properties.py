"""Property tests of ``exactref.linalg`` (matmul, gemm, dot, sum) with hypothesis.

1. Exactness against an independent oracle (``mpfr_oracle``: exact dyadic sums in Python
   integers, rounded once by MPFR through gmpy2): every output element of ``matmul``, ``gemm``
   (alpha/beta, complex too, transposes, broadcast ``c``), ``dot`` and ``sum`` (axis, keepdims)
   equals the exact sum rounded once, bit for bit (zeros by sign, NaN with NaN), in all six
   rounding modes and under every overflow rule ("ieee", "saturate", "nan"), for input formats
   float64, float32, bfloat16, float16, float8_e4m3fn, float8_e5m2, complex64, complex128 and
   the integer formats (int8, int32, uint8, int64, int8 x uint8; wrapping, saturating,
   raising), into the promoted format or an explicit ``dtype``. Shapes: m, n <= 4, k <= 40,
   1-D operands, batched and broadcast batches. Data: random, exponent spreads (float64 rows
   spanning 2**-1074..2**1023), exact cancellation of the largest terms, ties of the output
   format (with and without a tie-breaking term far below), signed zeros (IEEE's sum rule: +0
   for a sum of +0s in every mode, -0 for a sum of -0s), and inf/NaN mixed in (0 * inf and
   inf - inf are NaN).
2. Soundness of the tolerance: a declared model (compute format, order, fused, products'
   format, rounding mode), an overflow rule and data are drawn; implementations of that model
   are simulated with every step rounded exactly by the same MPFR oracle (sequential with the
   first term loaded into the accumulator, with every term loaded, or with the first two terms
   added exactly; reversed, random permutations, random trees with and without their leaves
   loaded, balanced trees with random split points, blocked partial sums, SIMD-like lanes, FMA
   steps, products rounded into their own format, accumulation in float32, float64, bfloat16,
   float16), rounded into the output format under the overflow rule, and must be covered, and
   so must the reference itself (adversarial data included: terms just above half an ulp,
   where every addition rounds the same way). Bounds that must be inf (k u >= 1) stay covering
   and compute without warnings; the tolerance is no wider than an independent worst case, and
   values beyond it are not covered.
3. Integer sums (int64 accumulation, wrap-around, axis and keepdims) against Python integers.

Regression tests near the end of the file pin six fixed bugs with their minimal examples: the
tolerance under overflow="saturate" and "nan", k = 0, +0 for sums of +0s toward -inf, infinite
coefficients meeting zero terms, the reference covered with a compute format narrower than the
output, and the first term rounded into a narrower accumulator. So do three gemm fixes found
later: the sign of gemm's k = 0 result with c = -0, and an underflow scaled by alpha or by a
factor (reference BLAS scales a factor first). Heavy variants are marked slow
(``--run-slow``): more examples and longer sums.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mpfr_oracle import (
    FMTS,
    INT_RANGES,
    Fmt,
    Rounder,
    expected,
    round_terms,
    same,
    wrap,
)

import exactref as er
from exactref import linalg
from exactref.testing import strategies as xst

# These tests check that the models cover simulated implementations on cancelling data:
# weak checks on purpose (exactref.WeakCheckWarning says so to users).
pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")

R = er.Rounding
MODES = list(R)
builtins_sum = sum
FLOATS = list(FMTS)  # float64, float32, bfloat16, float16, float8_e4m3fn, float8_e5m2
KINDS = ["random", "spread", "cancel", "ties", "zeros", "specials", "positive", "drift"]
LAYOUTS = {  # (shape of a, shape of b) from (m, k, n)
    "2d": lambda m, k, n: ((m, k), (k, n)),
    "vec_mat": lambda m, k, n: ((k,), (k, n)),
    "mat_vec": lambda m, k, n: ((m, k), (k,)),
    "vec_vec": lambda m, k, n: ((k,), (k,)),
    "batch": lambda m, k, n: ((2, m, k), (k, n)),
    "bcast": lambda m, k, n: ((2, 1, m, k), (3, k, n)),
    "vec_batch": lambda m, k, n: ((k,), (2, k, n)),
}


def _out_fmt(name: str) -> Fmt:
    return FMTS[er.dtype(name).component.name]


def test_oracle_formats():
    """The oracle's own format table agrees with exactref's, and its rounding with worked
    examples (float32: p = 24; ties, round-to-odd, subnormals, overflow)."""
    for name, f in FMTS.items():
        g = er.dtype(name)
        assert (f.p, f.emin, f.emax, f.max_finite, f.has_inf) == (
            g.precision, g.emin, g.emax, g.max_finite, g.has_inf), name
        assert f.rule == g.default_overflow, name
    f32 = FMTS["float32"]
    tie, up = 1 + Fraction(1, 2**24), 1 + Fraction(1, 2**23)
    assert [expected(tie, False, f32, m) for m in MODES] == [1, up, 1, up, 1, up]
    assert [expected(-tie, False, f32, m) for m in MODES] == [-1, -up, -1, -1, -up, -up]
    half_sub = Fraction(1, 2**150)
    assert [expected(half_sub, False, f32, m) for m in MODES] == [0, 2.0**-149, 0, 2.0**-149,
                                                                 0, 2.0**-149]
    assert expected(Fraction(2**128), False, f32, R.TOWARD_ZERO) == f32.max_finite
    assert expected(Fraction(2**128), False, f32, R.NEAREST_EVEN) == math.inf
    assert expected(Fraction(500), False, FMTS["float8_e4m3fn"], R.TOWARD_ZERO) == 448
    assert math.isnan(round_terms([(math.inf, 0.0)], f32, R.NEAREST_EVEN))
    assert math.isnan(round_terms([(math.inf,), (-math.inf,)], f32, R.NEAREST_EVEN))
    assert math.copysign(1, round_terms([(-0.0,), (-0.0,)], f32, R.NEAREST_EVEN)) < 0
    assert math.copysign(1, round_terms([(1.0,), (-1.0,)], f32, R.TOWARD_NEGATIVE)) < 0
    assert math.copysign(1, round_terms([(1.0,), (-1.0,)], f32, R.TOWARD_ZERO)) > 0
    assert math.copysign(1, round_terms([(-0.0,), (0.0,)], f32, R.TOWARD_NEGATIVE)) < 0
    assert math.copysign(1, round_terms([(-0.0,), (0.0,)], f32, R.NEAREST_AWAY)) > 0


# ============================================================================ data generation
def _quantum(v, f: Fmt):
    """The quantum (ulp) of ``f`` at each value of ``v`` (float64 array; 0 has the smallest)."""
    e = np.frexp(np.abs(v))[1] - 1
    return np.ldexp(1.0, np.maximum(e, f.emin) - f.p + 1)


def _onto(v, f: Fmt):
    """``v`` truncated onto ``f``'s grid (a value of a coarser grid stays one of its own)."""
    q = _quantum(v, f)
    return np.trunc(v / q) * q


def _rand(rng, f: Fmt, shape, elo: int, ehi: int, sign=True):
    """Random values of ``f``: a significand of ``f.p`` random bits (small ones too) at an
    exponent in ``[elo, ehi]`` (clamped to the format's); subnormals where the exponent is the
    lowest."""
    elo = min(max(elo, f.emin), f.emax)
    ehi = min(max(ehi, elo), f.emax)
    m = rng.integers(0, 2**f.p, size=shape).astype(np.float64)
    e = rng.integers(elo, ehi + 1, size=shape)
    v = np.minimum(np.ldexp(m, e - f.p + 1), f.max_finite)
    if sign:
        v = v * rng.choice([-1.0, 1.0], size=shape)
    return v


def _ties(rng, fi: Fmt, fo: Fmt, sa, sbk, top: bool):
    """Rows whose exact sums lie on (or one tiny term off) a tie of ``fo``: per row a value
    ``v`` of both formats, half its ulp in ``fo`` (a product ``(ulp * 2**t) * 2**(-1 - t)``),
    a tie-breaking term far below or nothing, a pair of big terms that cancel, and pairs of
    random terms that cancel, in a random order along k."""
    k = sa[-1]
    rows = sa[:-1]
    lo, hi = max(fi.emin, fo.emin) - fo.p, min(fi.emax, fo.emax)
    c = hi if top else int(rng.integers(lo, hi + 1))
    v = _onto(_rand(rng, fi, rows, c - 2, c), fo)  # a value of both formats
    if top:  # the largest finite value of fo (as far as fi holds it): ties at the overflow
        v = _onto(_onto(np.full(rows, min(fo.max_finite, fi.max_finite)), fi), fo)
        v = v * rng.choice([-1.0, 1.0], size=rows)
    ulp = _quantum(v, fo)
    t = max(0, (fi.emin - fi.p + 1) - int(np.log2(ulp.min())))  # ulp * 2**t in fi
    half_ok = (ulp.max() * 2.0**t <= 2.0**fi.emax and 2.0 ** (-1 - t) >= fi.smallest_subnormal)
    A = np.zeros(sa)
    Bk = np.zeros(sbk)
    roles = rng.permutation(k)
    sides = rng.choice([-1.0, 1.0], size=rows)
    if k > 0:
        A[..., roles[0]] = v
        Bk[..., roles[0]] = 1.0
    if k > 1 and half_ok:
        A[..., roles[1]] = sides * ulp * 2.0**t
        Bk[..., roles[1]] = 2.0 ** (-1 - t)
    if k > 2 and half_ok and rng.random() < 0.6:
        d = int(rng.integers(1, 40))
        tiny = np.maximum(ulp * 2.0 ** (t - d), fi.smallest_subnormal)
        A[..., roles[2]] = rng.choice([-1.0, 1.0], size=rows) * tiny
        Bk[..., roles[2]] = 2.0 ** (-1 - t)
    if k > 4:
        e_big = min(fi.emax, c + int(rng.integers(2, fi.p + 8)))
        big = _rand(rng, fi, rows, e_big, e_big)
        A[..., roles[3]], A[..., roles[4]] = big, -big
        Bk[..., roles[3]] = Bk[..., roles[4]] = 1.0
    for j in range(5, k - 1, 2):
        x = _rand(rng, fi, rows, c - 10, c + 10)
        A[..., roles[j]], A[..., roles[j + 1]] = x, -x
        Bk[..., roles[j]] = Bk[..., roles[j + 1]] = _rand(rng, fi, (), -2, 2, sign=False) or 1.0
    Bk = Bk * rng.choice([-1.0, 1.0], size=sbk[:-1] + (1,))  # a sign per column
    return A, Bk


def _pair(rng, kind, fi: Fmt, fo: Fmt, sa, sb, center, width):
    """``(A, B)`` float64 arrays of shapes ``sa``, ``sb`` holding values of ``fi``."""
    sbk = sb if len(sb) == 1 else sb[:-2] + (sb[-1], sb[-2])  # b with k last
    k = sa[-1]
    if kind == "ties":
        A, Bk = _ties(rng, fi, fo, sa, sbk, top=rng.random() < 0.15)
    elif kind == "zeros":
        vals = np.array([0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0])
        A, Bk = rng.choice(vals, size=sa), rng.choice(vals, size=sbk)
    elif kind == "drift":
        # 1 followed by terms just above half an ulp of 1 in a precision p* (that of a likely
        # compute format): each addition in p* rounds up, the error grows like k u, the model's
        # worst case (Higham's example)
        top = min(fi.emax, 20)
        p_star = int(rng.choice([q for q in (8, 11, 24, 53)
                                 if fi.emin - fi.p + q + 8 <= top] or [8]))
        e = int(rng.integers(min(top, max(fi.emin, fi.emin - fi.p + p_star + 8)), top + 1))
        head = rng.choice([-1.0, 1.0], size=sa[:-1])
        A = np.empty(sa)
        A[...] = (head * 2.0**e)[..., None]
        A[..., 1:] *= _onto(np.array(2.0**-p_star * (1 + 2.0**-3)), fi)
        A[..., 1:] = _onto(A[..., 1:], fi)
        Bk = np.ones(sbk) * rng.choice([-1.0, 1.0], size=sbk[:-1] + (1,))
    else:
        w = width if kind == "spread" else min(width, 6)
        A = _rand(rng, fi, sa, center - w, center + w)
        Bk = _rand(rng, fi, sbk, -w // 2, w // 2)
        if kind == "cancel" and k >= 2:
            order = rng.permutation(k)
            for j in range(0, k - 1 - int(rng.integers(0, 3)), 2):
                j1, j2 = order[j], order[j + 1]
                if j == 0:  # the largest terms cancel exactly
                    A[..., j1] = _rand(rng, fi, sa[:-1], center + w + 4, center + w + 4 + fi.p)
                A[..., j2] = -A[..., j1]
                Bk[..., j2] = Bk[..., j1]
        if kind == "positive":  # no cancellation: the worst case of the error bounds
            A, Bk = np.abs(A), np.abs(Bk)
        if kind == "specials":
            specials = [math.nan, 0.0, -0.0] + ([math.inf, -math.inf] if fi.has_inf else [])
            for X in (A, Bk):
                mask = rng.random(X.shape) < 0.12
                X[mask] = rng.choice(specials, size=int(mask.sum()))
    B = Bk if len(sb) == 1 else np.swapaxes(Bk, -1, -2)
    return np.ascontiguousarray(A), np.ascontiguousarray(B)


@dataclass
class Case:
    """A drawn matmul problem: float64 arrays ``A``, ``B`` holding values of ``fin`` (of
    ``fin_b`` for ``B`` if given), and the output format (``dtype`` passed to the op, None for
    the promoted one)."""

    fin: str
    dtype: str | None
    layout: str
    kind: str
    A: np.ndarray
    B: np.ndarray
    fin_b: str | None = None

    @property
    def fb(self) -> str:
        return self.fin_b or self.fin

    @property
    def out(self) -> str:
        return self.dtype or MIXED.get((self.fin, self.fb), self.fin)

    def __repr__(self):
        return (f"Case({self.fin} @ {self.fb} -> {self.out}, {self.layout}, {self.kind}, "
                f"A={self.A.shape}, B={self.B.shape})")


# operand formats of different widths whose promoted format (torch) holds both
MIXED = {("float32", "bfloat16"): "float32", ("bfloat16", "float16"): "float32",
         ("float64", "float32"): "float64", ("float16", "float32"): "float32",
         ("bfloat16", "float64"): "float64"}


@st.composite
def float_cases(draw, formats=tuple(FLOATS), kmax=40, layouts=tuple(LAYOUTS), kinds=tuple(KINDS),
                dtypes=True):
    fin = draw(st.sampled_from(formats))
    dtype = draw(st.sampled_from([None, None] + [f for f in FLOATS if f != fin])) \
        if dtypes else None
    layout = draw(st.sampled_from(layouts))
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    k = draw(st.integers(1, kmax))
    kind = draw(st.sampled_from(kinds))
    f = FMTS[fin]
    center = draw(st.integers(f.emin - f.p, f.emax))
    width = draw(st.integers(0, f.emax - f.emin + f.p))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sa, sb = LAYOUTS[layout](m, k, n)
    partners = [b for a, b in MIXED if a == fin]
    fin_b = draw(st.sampled_from([None, None, None] + partners)) if partners else None
    case = Case(fin, dtype, layout, kind, None, None, fin_b)
    A, B = _pair(rng, kind, f, _out_fmt(case.out), sa, sb, center, width)
    if fin_b is not None:  # onto b's grid and range
        g = FMTS[fin_b]
        B = _onto(np.clip(B, -g.max_finite, g.max_finite), g)
    case.A, case.B = A, B
    return case


# ================================================================================ oracle side
def _bcast_matmul_terms(A, B):
    """Per output element (numpy matmul semantics), the list of its (a_l, b_l) pairs: an
    object array of the output's shape."""
    a1, b1 = A.ndim == 1, B.ndim == 1
    Ae = A[None, :] if a1 else A
    Be = B[:, None] if b1 else B
    batch = np.broadcast_shapes(Ae.shape[:-2], Be.shape[:-2])
    Ab = np.broadcast_to(Ae, batch + Ae.shape[-2:])
    Bb = np.broadcast_to(Be, batch + Be.shape[-2:])
    m, n = Ab.shape[-2], Bb.shape[-1]
    out = np.empty(batch + (m, n), dtype=object)
    for idx in np.ndindex(*batch):
        rows, cols = Ab[idx].tolist(), Bb[idx].T.tolist()
        for i in range(m):
            for j in range(n):
                out[idx + (i, j)] = list(zip(rows[i], cols[j], strict=True))
    if a1:
        out = out[..., 0, :]
    if b1:
        out = out[..., 0]
    return out


def _fail(what, bad, total):
    lines = "\n".join(bad[:6])
    raise AssertionError(f"{what}: {len(bad)} of {total} elements differ from the oracle:\n"
                         f"{lines}")


def _terms_text(terms, limit=12):
    txt = " + ".join("*".join(float(f).hex() if isinstance(f, float) else repr(f) for f in t)
                     for t in terms[:limit])
    return txt + (f" + ... ({len(terms)} terms)" if len(terms) > limit else "")


def _check_parts(what, got_parts, term_parts, fo: Fmt, mode, rule, signed_zeros=True):
    """``got_parts``: float64 arrays; ``term_parts``: object arrays of term lists, per part.
    ``signed_zeros``: zeros are compared by sign too."""
    bad, total = [], 0
    for got, terms in zip(got_parts, term_parts, strict=True):
        got = np.asarray(got, dtype=np.float64)
        assert got.shape == terms.shape, (what, got.shape, terms.shape)
        for idx in np.ndindex(*terms.shape):
            total += 1
            want = round_terms(terms[idx], fo, mode, rule)
            g = float(got[idx])
            ok = same(g, want) or (not signed_zeros and g == want == 0)
            if not ok:
                bad.append(f"  {idx} {mode.value}: expected {want.hex()}, got {g.hex()}; "
                           f"terms {_terms_text(terms[idx])}")
    if bad:
        _fail(what, bad, total)


def _got_parts(result):
    arr = result.rounded.numpy()
    if np.iscomplexobj(arr):
        w = arr.astype(np.complex128)
        return [w.real, w.imag]
    return [arr.astype(np.float64)]


def _obj(shape, fill):
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = fill(idx)
    return out


# ============================================================================ 1. exactness
OVERFLOW_RULES = st.sampled_from([None, None, "ieee", "saturate", "nan"])


def _run_matmul_case(case: Case, rule):
    a, b = er.asarray(case.A, case.fin), er.asarray(case.B, case.fb)
    terms = _bcast_matmul_terms(case.A, case.B)
    fo = _out_fmt(case.out)
    shape = np.matmul(np.zeros(case.A.shape), np.zeros(case.B.shape)).shape
    assert terms.shape == shape
    for mode in MODES:
        r = linalg.matmul(a, b, dtype=case.dtype, rounding=mode, overflow=rule)
        assert r.rounded.dtype.name == case.out
        assert r.rounded.shape == shape
        _check_parts(f"matmul {case!r} overflow={rule}", _got_parts(r), [terms], fo, mode, rule)


# Pinned edge cases (each checked in all six modes).
_TIE32 = Case("float32", None, "2d", "ties", np.array([[1.0, 2.0**-24, 2.0**-60],
                                                       [1.0, 2.0**-24, -(2.0**-60)],
                                                       [-1.0, -(2.0**-24), 0.0]]),
              np.array([[1.0], [1.0], [1.0]]))
_SPREAD64 = Case("float64", None, "2d", "spread",
                 np.array([[2.0**1023, 5e-324, -(2.0**1023), 2.0**-1022, 1.0],
                           [1.7976931348623157e308, 1.7976931348623157e308, -1e308, 5e-324,
                            -5e-324]]),
                 np.array([[1.0], [0.5], [1.0], [2.0**-52], [2.0**-1074 * 2**52]]))
_SPECIALS = Case("float64", None, "2d", "specials",
                 np.array([[math.inf, 1.0], [math.inf, -math.inf], [math.inf, 0.0],
                           [-0.0, -0.0], [-0.0, 0.0], [1.0, -1.0], [math.nan, 0.0]]),
                 np.array([[0.0, 1.0], [1.0, 1.0]]))
_E4M3 = Case("float8_e4m3fn", None, "2d", "cancel",
             np.array([[448.0, 448.0, -448.0, 0.001953125], [448.0, 2.0**-9, 0.0, 0.0]]),
             np.array([[448.0], [-448.0], [1.0], [0.5]]))
_NARROW_TIE = Case("float32", "bfloat16", "2d", "ties",  # ties between bfloat16 subnormals
                   np.array([[3 * 2.0**-133, 2.0**-134, 2.0**-149],
                             [3 * 2.0**-133, 2.0**-134, 0.0],
                             [-2 * 2.0**-133, -(2.0**-134), 2.0**-149]]),
                   np.array([[1.0], [1.0], [0.5]]))


@settings(max_examples=120)
@given(case=float_cases(), rule=OVERFLOW_RULES)
@example(case=_TIE32, rule=None)
@example(case=_SPREAD64, rule=None)
@example(case=_SPECIALS, rule=None)
@example(case=_E4M3, rule=None)
@example(case=_E4M3, rule="saturate")
@example(case=_NARROW_TIE, rule=None)
def test_matmul_matches_mpfr(case, rule):
    """Every element of matmul (1-D, 2-D, batched, broadcast; promoted or explicit dtype) is the
    exact IEEE sum rounded once by MPFR, in every mode."""
    _run_matmul_case(case, rule)


@pytest.mark.slow
@settings(max_examples=800)
@given(case=float_cases(kmax=120), rule=OVERFLOW_RULES)
def test_matmul_matches_mpfr_slow(case, rule):
    _run_matmul_case(case, rule)


@settings(max_examples=30)
@given(case=float_cases(formats=("float64",), kinds=("spread", "cancel", "ties"),
                        layouts=("2d", "mat_vec"), dtypes=False),
       dtype=st.sampled_from([None, "float32", "bfloat16", "float16"]))
def test_float64_full_range_spread(case, dtype):
    """float64 rows spanning 2**-1074..2**1023 (subnormals included: the window is drawn up to
    the whole range), rounded into float64 and narrower formats."""
    case.dtype = dtype
    _run_matmul_case(case, None)


def test_float64_rows_span_whole_range():
    """A pinned row with every binade's end: 2**-1074 up to the largest finite value."""
    row = [2.0**-1074, -(2.0**-1074), 2.0**-1022, 2.0**1023, -(2.0**1023), 1.0, 2.0**-1073,
           1.7976931348623157e308, -1.7976931348623157e308, 3.0 * 2.0**-1074]
    A = np.array([row, row[::-1], [-x for x in row]])
    B = np.array([[1.0, 0.5, 2.0**-53], [1.0, 2.0**-1, 1.0], [1.0, 1.0, 1.0], [0.5, 1.0, 1.0],
                  [0.5, 1.0, 1.0], [1.0, 1.0, 1.0], [0.5, 1.0, 2.0**1000],
                  [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 3.0, 2.0**-1]])
    for dtype in (None, "float32"):
        _run_matmul_case(Case("float64", dtype, "2d", "spread", A, B), None)


# ----------------------------------------------------------------------------------- complex
@dataclass
class CCase:
    fin_a: str
    fin_b: str
    dtype: str | None
    A: np.ndarray
    B: np.ndarray
    rule: str | None = None  # the overflow rule (None: the output format's default)

    def __repr__(self):
        return (f"CCase({self.fin_a} @ {self.fin_b} -> {self.dtype}, {self.A.shape}, "
                f"{self.B.shape}, overflow={self.rule})")


_COMPLEX = {"complex64": "float32", "complex128": "float64"}


@st.composite
def complex_cases(draw, kinds=("random", "spread", "cancel", "ties", "zeros", "specials")):
    fa = draw(st.sampled_from(list(_COMPLEX)))
    fb = draw(st.sampled_from([fa, fa, "float32" if fa == "complex64" else "float64"]))
    if draw(st.booleans()):
        fa, fb = fb, fa
    dtype = draw(st.sampled_from([None, "complex64", "complex128"]))
    layout = draw(st.sampled_from(list(LAYOUTS)))
    m, n, k = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 24))
    kind = draw(st.sampled_from(kinds))
    f = FMTS[_COMPLEX.get(fa, fa)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sa, sb = LAYOUTS[layout](m, k, n)
    center = int(rng.integers(-40, 40))
    width = int(rng.integers(0, 80))
    fo = FMTS[_COMPLEX[dtype or (fa if fa in _COMPLEX else fb)]]
    if kind == "ties":  # ties in both parts: the real and imaginary rows share one real b
        A2, Bre = _pair(rng, kind, f, fo, (2,) + sa, sb, center, width)
        Are, Aim = A2[0], A2[1]
        Bim = np.zeros_like(Bre)
    else:
        Are, Bre = _pair(rng, kind, f, fo, sa, sb, center, width)
        Aim, Bim = _pair(rng, kind, f, fo, sa, sb, center, width)
    A = _cplx(Are, Aim) if fa in _COMPLEX else Are
    B = _cplx(Bre, Bim) if fb in _COMPLEX else Bre
    return CCase(fa, fb, dtype, A, B, draw(OVERFLOW_RULES))


def _cplx(re, im):
    out = np.empty(re.shape, dtype=np.complex128)
    out.real, out.imag = re, im
    return out


def _complex_terms(A, B):
    """Per element, the real-sum terms of the real and imaginary parts (a real operand has no
    imaginary part: it adds no terms)."""
    ca, cb = np.iscomplexobj(A), np.iscomplexobj(B)
    tr = _bcast_matmul_terms(A.real if ca else A, B.real if cb else B)
    shape = tr.shape
    cross = {}
    for name, X, Y in (("ii", A.imag if ca else None, B.imag if cb else None),
                       ("ri", A.real if ca else A, B.imag if cb else None),
                       ("ir", A.imag if ca else None, B.real if cb else B)):
        if X is None or Y is None:
            cross[name] = None
            continue
        cross[name] = _bcast_matmul_terms(X, Y)

    def part(idx, pieces):
        terms = []
        for sign, arr in pieces:
            if arr is not None:
                terms += [(sign * x, y) for x, y in arr[idx]]
        return terms

    re = _obj(shape, lambda i: part(i, [(1.0, tr), (-1.0, cross["ii"])]))
    im = _obj(shape, lambda i: part(i, [(1.0, cross["ri"]), (1.0, cross["ir"])]))
    return re, im


@settings(max_examples=40)
@given(case=complex_cases())
def test_complex_matmul_matches_mpfr(case):
    """Complex matmul (complex x complex, complex x real): each part the exact real sum of its
    products, rounded once, in every mode; a real operand adds no terms to the other part."""
    a = er.asarray(case.A, case.fin_a)
    b = er.asarray(case.B, case.fin_b)
    re, im = _complex_terms(case.A, case.B)
    out = case.dtype or (case.fin_a if case.fin_a in _COMPLEX else case.fin_b)
    fo = FMTS[_COMPLEX[out]]
    for mode in MODES:
        r = linalg.matmul(a, b, dtype=case.dtype, rounding=mode, overflow=case.rule)
        assert r.rounded.dtype.name == out
        _check_parts(f"matmul {case!r}", _got_parts(r), [re, im], fo, mode, case.rule)


# -------------------------------------------------------------------------------------- gemm
SCALARS = st.one_of(st.sampled_from([1, -1, 2, 0.5, 0.1, -3, 0, 2.0**-30, 1e10, -0.0]),
                    xst.values("float64", allow_nan=False, allow_infinity=False,
                               min_value=-1e6, max_value=1e6))


@dataclass
class GCase:
    fin: str
    A: np.ndarray
    B: np.ndarray
    C: object
    alpha: object
    beta: object
    trans_a: bool
    trans_b: bool
    dtype: str | None
    rule: str | None = None  # the overflow rule (None: the output format's default)

    def __repr__(self):
        c = self.C.shape if isinstance(self.C, np.ndarray) else self.C
        return (f"GCase({self.fin}->{self.dtype}, A={self.A.shape}, B={self.B.shape}, C={c}, "
                f"alpha={self.alpha!r}, beta={self.beta!r}, trans=({self.trans_a}, "
                f"{self.trans_b}), overflow={self.rule})")


@st.composite
def gemm_cases(draw, complex_=False, kmax=30):
    fin = draw(st.sampled_from(list(_COMPLEX) if complex_ else FLOATS))
    f = FMTS[_COMPLEX.get(fin, fin)]
    kind = draw(st.sampled_from(["random", "cancel", "ties", "zeros"]
                                + ([] if complex_ else ["specials", "spread"])))
    m, n, k = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, kmax))
    batch = draw(st.sampled_from([(), (), (2,)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    center, width = int(rng.integers(-10, 10)), int(rng.integers(0, 40))
    sa, sb = batch + (m, k), (k, n)

    def one():
        return _pair(rng, kind, f, f, sa, sb, center, width)

    if complex_:
        (Ar, Br), (Ai, Bi) = one(), one()
        A, B = _cplx(Ar, Ai), _cplx(Br, Bi)
    else:
        A, B = one()
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    if trans_a:
        A = np.ascontiguousarray(np.swapaxes(A, -1, -2))
    if trans_b:
        B = np.ascontiguousarray(B.T)
    c_shape = draw(st.sampled_from(["full", "row", "col", "scalar0d", "python", "none"]))
    cshape = {"full": batch + (m, n), "row": (n,), "col": (m, 1), "scalar0d": ()}.get(c_shape)
    cpart = _rand(rng, f, cshape or (), center - 3, center + 3)
    C = _cplx(cpart, _rand(rng, f, cshape or (), center - 3, center + 3)) if complex_ else cpart
    if c_shape == "python":
        C = complex(C) if complex_ else float(C)
    elif c_shape == "none":
        C = None
    alpha, beta = draw(SCALARS), draw(SCALARS)
    if complex_:
        alpha = complex(alpha, draw(SCALARS)) if draw(st.booleans()) else alpha
        beta = complex(beta, draw(SCALARS)) if draw(st.booleans()) else beta
    if isinstance(C, np.ndarray) and beta == 0 and draw(st.booleans()):
        C = C * np.nan  # BLAS: beta == 0 does not read c
    dtype = None
    if not complex_:
        dtype = draw(st.sampled_from([None, None] + [g for g in FLOATS if g != fin]))
    return GCase(fin, A, B, C, alpha, beta, trans_a, trans_b, dtype, draw(OVERFLOW_RULES))


def _gemm_terms(g: GCase, shape):
    """Per output part, per element, the real terms of alpha * op(a) @ op(b) + beta * c
    (alpha == 0: no product terms; beta == 0 or no c: no c term; none at all: +0)."""
    A = np.swapaxes(g.A, -1, -2) if g.trans_a else g.A
    B = g.B.T if g.trans_b else g.B
    cplx = np.iscomplexobj(A)
    alpha, beta = complex(g.alpha), complex(g.beta)
    use_ab, use_c = alpha != 0, g.C is not None and beta != 0
    if cplx:
        prod_re, prod_im = _complex_terms(A, B)
    else:
        prod_re, prod_im = _bcast_matmul_terms(A, B), None
    C = np.broadcast_to(np.asarray(g.C), shape) if use_c else None

    def scale(terms, s):
        """``s`` times each term; a zero part of a complex scalar adds no terms."""
        return [(s,) + tuple(x) for x in terms] if s != 0 else []

    parts = []
    for which in (("re", "im") if cplx else ("re",)):
        def element(idx, which=which):
            terms = []
            if use_ab and not cplx:
                terms += scale(prod_re[idx], g.alpha)
            elif use_ab and which == "re":
                terms += scale(prod_re[idx], alpha.real) + scale(prod_im[idx], -alpha.imag)
            elif use_ab:
                terms += scale(prod_im[idx], alpha.real) + scale(prod_re[idx], alpha.imag)
            if use_c and not cplx:
                terms.append((g.beta, float(C[idx].real)))
            elif use_c:
                c = complex(C[idx])
                pairs = ([(beta.real, c.real), (-beta.imag, c.imag)] if which == "re" else
                         [(beta.real, c.imag), (beta.imag, c.real)])
                terms += [t for t in pairs if t[0] != 0]
            return terms or [(0.0,)]
        parts.append(_obj(shape, element))
    return parts


def _run_gemm(g: GCase, modes=MODES):
    a, b = er.asarray(g.A, g.fin), er.asarray(g.B, g.fin)
    c = er.asarray(g.C, g.fin) if isinstance(g.C, np.ndarray) else g.C
    cplx = g.fin in _COMPLEX
    out = g.dtype or g.fin
    fo = FMTS[_COMPLEX.get(out, out)]
    Aop = np.swapaxes(g.A, -1, -2) if g.trans_a else g.A
    Bop = g.B.T if g.trans_b else g.B
    shape = np.matmul(np.zeros(Aop.shape), np.zeros(Bop.shape)).shape
    parts = _gemm_terms(g, shape)
    for mode in modes:
        r = linalg.gemm(a, b, c, alpha=g.alpha, beta=g.beta, trans_a=g.trans_a,
                        trans_b=g.trans_b, dtype=g.dtype, rounding=mode, overflow=g.rule)
        assert r.rounded.dtype.name == out
        # zeros compared by value where alpha is not 1 or the output complex: the sign of an
        # exact zero depends on whether alpha multiplies the sum or each product (exactref:
        # the sum, as BLAS) and on which zero parts of alpha, beta and c count as terms
        _check_parts(f"gemm {g!r}", _got_parts(r), parts, fo, mode, g.rule,
                     signed_zeros=not cplx and g.alpha == 1)


_GEMM_PINNED = GCase("float32", np.array([[1.0, 2.0**-24], [2.0**100, -(2.0**100)]]),
                     np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[2.0**-30, -0.0]]),
                     0.1, -3, False, False, None)
_GEMM_BETA0 = GCase("float16", np.array([[1.0, 2.0]]), np.array([[3.0], [4.0]]),
                    np.array([[math.nan]]), 2, 0, False, False, None)
_GEMM_ALPHA0 = GCase("float64", np.array([[math.inf, 1.0]]), np.array([[0.0], [1.0]]),
                     np.array([[-0.0]]), 0, -1, False, False, None)


@settings(max_examples=60)
@given(g=gemm_cases())
@example(g=_GEMM_PINNED)
@example(g=_GEMM_BETA0)
@example(g=_GEMM_ALPHA0)
def test_gemm_matches_mpfr(g):
    """gemm: alpha * op(a) @ op(b) + beta * c (transposes, batched a, c of every broadcast
    shape or a Python scalar, alpha/beta exact including 0.1, beta == 0 leaving a NaN c unread,
    alpha == 0 leaving inf * 0 uncomputed) is one exact sum rounded once, in every mode."""
    _run_gemm(g)


@pytest.mark.slow
@settings(max_examples=400)
@given(g=st.one_of(gemm_cases(kmax=80), gemm_cases(complex_=True)))
def test_gemm_matches_mpfr_slow(g):
    _run_gemm(g)


@settings(max_examples=30)
@given(g=gemm_cases(complex_=True))
@example(g=GCase("complex128", np.array([[1 + 2j, 3 - 1j]]), np.array([[1 - 1j], [2 + 0.5j]]),
                 np.array([[0.25 - 8j]]), 0.5 - 2j, 3j, False, False, None))
def test_complex_gemm_matches_mpfr(g):
    """Complex gemm with complex alpha and beta: each part one exact real sum, rounded once."""
    _run_gemm(g)


# --------------------------------------------------------------------------------------- dot
@st.composite
def dot_cases(draw):
    fin = draw(st.sampled_from(FLOATS))
    k = draw(st.integers(1, 40))
    x = draw(st.lists(xst.values(fin), min_size=k, max_size=k))
    y = draw(st.lists(xst.values(fin), min_size=k, max_size=k))
    return fin, x, y


@settings(max_examples=60)
@given(case=dot_cases(), rule=OVERFLOW_RULES)
@example(case=("float64", [2.0**1023, 1.0, -(2.0**1023), 2.0**-53, 5e-324],
               [1.0, 1.0, 1.0, 1.0, -1.0]), rule=None)
@example(case=("float8_e5m2", [57344.0, 57344.0, -0.0, 2.0**-16],
               [1.0, -1.0, math.inf, 0.5]), rule=None)
@example(case=("float16", [0.0, -0.0, 0.0], [0.0, -1.0, 2.0]), rule=None)  # +0s only
@example(case=("float16", [60000.0, 60000.0, -0.0], [1.0, 1.0, 3.0]), rule="saturate")
def test_dot_matches_mpfr(case, rule):
    """dot of two 1-D arrays drawn element by element (exactref.testing strategies: edges,
    subnormals, the largest values, ±0, inf and NaN) is the exact sum rounded once (a sum of
    +0 products +0 in every mode), under every overflow rule."""
    fin, x, y = case
    fo = FMTS[fin]
    terms = list(zip(x, y, strict=True))
    for mode in MODES:
        r = linalg.dot(er.asarray(x, fin), er.asarray(y, fin), rounding=mode, overflow=rule)
        assert r.rounded.shape == ()
        got = float(r.rounded.numpy().astype(np.float64))
        want = round_terms(terms, fo, mode, rule)
        assert same(got, want), (mode, rule, _terms_text(terms, 40), got.hex(), want.hex())


# --------------------------------------------------------------------------------------- sum
@st.composite
def sum_cases(draw, formats=tuple(FLOATS) + tuple(_COMPLEX)):
    fin = draw(st.sampled_from(formats))
    cplx = fin in _COMPLEX
    f = FMTS[_COMPLEX.get(fin, fin)]
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    if draw(st.booleans()):  # one long axis
        i = draw(st.integers(0, nd - 1))
        shape = shape[:i] + (draw(st.integers(6, 40)),) + shape[i + 1:]
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                          st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                   unique=True).map(tuple)))
    keepdims = draw(st.booleans())
    others = [g for g in (_COMPLEX if cplx else FLOATS) if g != fin]
    dtype = draw(st.sampled_from([None, None] + others))
    kind = draw(st.sampled_from(["random", "spread", "cancel", "zeros", "specials", "drift"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    center = int(rng.integers(f.emin - f.p, f.emax + 1))
    width = int(rng.integers(0, f.emax - f.emin + f.p))

    def values():
        # a sum is a matmul with ones: reuse the generator's a (k along the last axis)
        K = int(np.prod(shape))
        A, _ = _pair(rng, kind, f, f, (K,), (K,), center, width)
        return A.reshape(shape)

    x = _cplx(values(), values()) if cplx else values()
    return fin, x, axis, keepdims, dtype


def _sum_terms(x, axis, keepdims):
    nd = x.ndim
    axes = tuple(range(nd)) if axis is None else tuple(
        a % nd for a in ((axis,) if isinstance(axis, int) else axis))
    moved = np.moveaxis(x, axes, tuple(range(nd - len(axes), nd)))
    rest = moved.shape[:nd - len(axes)]
    flat = moved.reshape(rest + (-1,))
    shape = np.sum(np.zeros(x.shape), axis=axis, keepdims=keepdims).shape
    parts = []
    for p in ([flat.real, flat.imag] if np.iscomplexobj(x) else [flat]):
        t = _obj(rest, lambda idx, p=p: [(v,) for v in p[idx].tolist()])
        parts.append(t.reshape(shape))
    return parts, shape


@settings(max_examples=80)
@given(case=sum_cases(), rule=OVERFLOW_RULES)
@example(case=("float32", np.array([[1.0, 2.0**-24, 2.0**-24], [-0.0, -0.0, -0.0]]), 1, False,
               None), rule=None)
@example(case=("float32", np.array([[0.0, 0.0, 0.0], [0.0, -0.0, 0.0]]), 1, False, None),
         rule=None)
@example(case=("bfloat16", np.array([[3.0, 2.0**-8, 0.0], [math.inf, -math.inf, 1.0]]), (0, 1),
               True, "float32"), rule=None)
@example(case=("float16", np.array([65504.0, 16.0, -65504.0, 2.0**-24]), -1, True,
               "float8_e4m3fn"), rule=None)
@example(case=("float16", np.array([[65504.0, 32.0], [-65504.0, -32.0]]), 1, False, None),
         rule="saturate")
def test_sum_matches_mpfr(case, rule):
    """sum over axis (None, an int, negative, a tuple), keepdims, promoted or explicit dtype:
    the exact sum rounded once, in every mode and under every overflow rule; -0 for a sum of
    -0s, +0 for a sum of +0s (toward -inf too)."""
    _run_sum(case, rule)


@pytest.mark.slow
@settings(max_examples=500)
@given(case=sum_cases(), rule=OVERFLOW_RULES)
def test_sum_matches_mpfr_slow(case, rule):
    _run_sum(case, rule)


def _run_sum(case, rule):
    fin, x, axis, keepdims, dtype = case
    parts, shape = _sum_terms(x, axis, keepdims)
    out = dtype or fin
    fo = FMTS[_COMPLEX.get(out, out)]
    arr = er.asarray(x, fin)
    for mode in MODES:
        r = linalg.sum(arr, axis=axis, keepdims=keepdims, dtype=dtype, rounding=mode,
                       overflow=rule)
        assert r.rounded.dtype.name == out
        assert r.rounded.shape == shape
        _check_parts(f"sum {fin}->{out} {x.shape} axis={axis} keepdims={keepdims} "
                     f"overflow={rule}", _got_parts(r), parts, fo, mode, rule)


# ============================================================================ integer formats
INT_PAIRS = [("int8", "int8", "int8"), ("int32", "int32", "int32"), ("uint8", "uint8", "uint8"),
             ("int64", "int64", "int64"), ("int8", "uint8", "int16")]


@st.composite
def int_cases(draw):
    fa, fb, promoted = draw(st.sampled_from(INT_PAIRS))
    layout = draw(st.sampled_from(list(LAYOUTS)))
    m, n, k = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 12))
    sa, sb = LAYOUTS[layout](m, k, n)
    big = draw(st.booleans())  # only the extremes: every sum wraps
    if big:
        ea = st.sampled_from([INT_RANGES[fa][0], INT_RANGES[fa][1]])
        eb = st.sampled_from([INT_RANGES[fb][0], INT_RANGES[fb][1]])
        a = draw(xst.arrays(fa, sa, elements=ea)).numpy()
        b = draw(xst.arrays(fb, sb, elements=eb)).numpy()
    else:
        a = draw(xst.arrays(fa, sa)).numpy()
        b = draw(xst.arrays(fb, sb)).numpy()
    dtype = draw(st.sampled_from([None, None, "int32", "int64", "int8"]))
    rule = draw(st.sampled_from([None, "wrap", "saturate", "error"]))
    op = draw(st.sampled_from(["matmul", "dot", "gemm"]))
    if op == "dot" and not (a.ndim == b.ndim == 1):
        op = "matmul"
    gemm = None
    if op == "gemm":
        shape = np.matmul(np.zeros(a.shape), np.zeros(b.shape)).shape
        gemm = (draw(st.sampled_from([1, -1, 0, 3, -128])), draw(st.sampled_from([0, 1, -2, 7])),
                draw(xst.arrays(fa, shape)).numpy())
    return op, a, b, dtype or promoted, dtype, rule, gemm


@settings(max_examples=80)
@given(case=int_cases())
@example(case=("matmul", np.array([[100, 100]], np.int8), np.array([[1], [1]], np.int8), "int8",
               None, None, None))
@example(case=("dot", np.array([2**62, 2**62], np.int64), np.array([2, 2], np.int64), "int64",
               None, None, None))
@example(case=("gemm", np.array([[-128, 127]], np.int8), np.array([[255], [1]], np.uint8),
               "int32", "int32", "error", (-128, 7, np.array([[127]], np.int8))))
def test_integer_ops_exact(case):
    """Integer matmul, dot and gemm: the exact integer, wrapped (default), saturated or raising
    OverflowError, into the promoted format or an explicit integer dtype."""
    op, a, b, out, dtype, rule, gemm = case
    alpha, beta, c = gemm or (1, 1, None)
    exact = np.matmul(a.astype(object), b.astype(object))
    exact = alpha * exact if alpha != 1 else exact
    if c is not None and beta != 0:
        exact = exact + beta * c.astype(object)
    exact = np.asarray(exact, dtype=object)
    lo, hi = INT_RANGES[out]
    outside = any(not lo <= int(v) <= hi for v in exact.reshape(-1))
    kwargs = {"dtype": dtype, "overflow": rule}

    def call():
        if op == "matmul":
            return linalg.matmul(a, b, **kwargs)
        if op == "dot":
            return linalg.dot(a, b, **kwargs)
        return linalg.gemm(a, b, c, alpha=alpha, beta=beta, **kwargs)

    if rule == "error" and outside:
        with pytest.raises(OverflowError):
            call()
        return
    r = call()
    assert r.rounded.dtype.name == out
    want = [wrap(int(v), out, "saturate" if rule == "saturate" else "wrap")
            for v in exact.reshape(-1)]
    got = np.asarray(r.rounded.numpy()).reshape(-1).tolist()
    assert got == want, (op, a.tolist(), b.tolist(), c, alpha, beta, out, rule)
    assert r.covers(r.rounded).all()
    assert r.tolerance().numpy().max(initial=0) == 0


@st.composite
def int_sum_cases(draw):
    fin = draw(st.sampled_from(["int8", "int32", "uint8", "int64", "bool"]))
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=nd, max_size=nd)))
    extremes = draw(st.booleans()) and fin != "bool"
    elements = st.sampled_from(list(INT_RANGES[fin])) if extremes else None
    x = draw(xst.arrays(fin, shape, elements=elements)).numpy()
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                          st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                   unique=True).map(tuple)))
    keepdims = draw(st.booleans())
    dtype = draw(st.sampled_from([None, None, "int32", "int8", "float32", "float64",
                                  "bfloat16"]))
    return x, axis, keepdims, dtype


@settings(max_examples=80)
@given(case=int_sum_cases(), mode=st.sampled_from(MODES))
@example(case=(np.array([[2**62, 2**62], [1, -1]], np.int64), 1, False, None),
         mode=R.NEAREST_EVEN)
@example(case=(np.full((3, 4), 2**63 - 1, np.int64), None, True, "float32"), mode=R.ODD)
@example(case=(np.array([255, 255, 255], np.uint8), 0, False, None), mode=R.NEAREST_EVEN)
def test_integer_sum_exact(case, mode):
    """Integer and bool sums accumulate into int64 exactly (wrapping as torch.sum), or are
    rounded once into an explicit integer or float dtype."""
    x, axis, keepdims, dtype = case
    (terms,), shape = _sum_terms(x.astype(object), axis, keepdims)
    out = dtype or "int64"
    r = linalg.sum(x, axis=axis, keepdims=keepdims, dtype=dtype, rounding=mode)
    assert r.rounded.dtype.name == out
    assert r.rounded.shape == shape
    totals = _obj(shape, lambda idx: builtins_sum(int(v[0]) for v in terms[idx]))
    got = np.asarray(r.rounded.numpy())
    for idx in np.ndindex(*shape):
        t = totals[idx]
        if out in INT_RANGES:
            assert int(got[idx]) == wrap(t, out), (idx, t, got[idx])
        else:
            want = expected(Fraction(t), False, FMTS[out], mode)
            assert same(float(got[idx]), want), (idx, t, float(got[idx]), want)


# ===================================================================== 2. tolerance soundness
@dataclass
class Model:
    compute: str | None
    order: str
    fused: bool | None
    products: str | None


def _compute_of(out: str, compute: str | None) -> Fmt:
    if compute is not None:
        return FMTS[compute]
    if out in ("float64", "float32"):
        return FMTS[out]
    return FMTS["float32"]


class Sim:
    """Implementations of a declared long-sum model, every step rounded once by the oracle.

    Terms are ``(a, b)`` pairs (products) or 1-tuples (a plain sum). ``fused``: the product
    enters the accumulator through an FMA (exact product, one rounding); otherwise it is first
    rounded into the products' format. A term that the compute format does not hold (a float32
    input or product in a bfloat16 accumulator) is rounded once more where it is loaded into
    the accumulator; the model counts that rounding for every term, the first included."""

    def __init__(self, c: Fmt, p: Fmt, mode, rng: random.Random):
        self.rc, self.rp, self.rng = Rounder(c, mode), Rounder(p, mode), rng

    def leaf(self, t, fused):
        if len(t) == 1:
            return t[0]
        return self.rc.mul(*t) if fused else self.rp.mul(*t)

    def step(self, s, t, fused, load=False):
        """``s + t`` in the accumulator; ``s`` None: ``t`` loaded into it. ``load``: an unfused
        term is rounded into the compute format before the addition."""
        if s is None:
            return self.rc(self.leaf(t, fused))
        if fused and len(t) == 2:
            return self.rc.fma(t[0], t[1], s)
        v = self.leaf(t, False)
        return self.rc.add(s, self.rc(v) if load else v)

    def sequential(self, terms, fused, first="load", partial=False):
        """Left to right. ``first``: ``"load"`` (a plain loop: the first term loaded into the
        accumulator, one rounding where the compute format does not hold it), ``"pair"`` (the
        first two unfused terms added exactly, with one rounding) or ``"all"`` (every unfused
        term rounded into the compute format before it is added). ``partial``: a part of a
        larger sum, where a single unfused term is returned as it is."""
        pick = fused if callable(fused) else (lambda: fused)
        if len(terms) == 1 and partial and (len(terms[0]) == 1 or not pick()):
            return self.leaf(terms[0], False)
        s, i = None, 0
        if first == "pair" and len(terms) >= 2 and not pick():
            s, i = self.rc.add(self.leaf(terms[0], False), self.leaf(terms[1], False)), 2
        for t in terms[i:]:
            s = self.step(s, t, pick(), load=first == "all")
        return s

    def tree(self, terms, split, fused, load=False):
        """A summation tree: ``split(n)`` gives the size of the left part. ``load``: every leaf
        is loaded into the compute format (rounded) before it is added; otherwise two leaves
        are added exactly, with one rounding."""
        if len(terms) == 1:
            return self.rc(self.leaf(terms[0], fused))

        def node(ts):
            if len(ts) == 1:
                v = self.leaf(ts[0], fused)
                return self.rc(v) if load else v
            s = split(len(ts))
            left, right = node(ts[:s]), ts[s:]
            if len(right) == 1 and fused and len(right[0]) == 2:
                return self.rc.fma(right[0][0], right[0][1], left)
            return self.rc.add(left, node(right))

        return node(terms)

    def balanced_split(self, n):
        """A random split that keeps the depth at ceil(log2 n)."""
        half = 1 << (math.ceil(math.log2(n)) - 1)
        return self.rng.randint(n - half, half)

    def any_split(self, n):
        return self.rng.randint(1, n - 1)

    def blocked(self, terms, bs, fused):
        parts = [self.sequential(terms[i:i + bs], fused, partial=True)
                 for i in range(0, len(terms), bs)]
        return self.sequential([(p,) for p in parts], False)

    def lanes(self, terms, n_lanes, fused):
        parts = [self.sequential(terms[i::n_lanes], fused, partial=True)
                 for i in range(n_lanes) if terms[i::n_lanes]]
        return self.tree([(p,) for p in parts], self.balanced_split, False)

    def implementations(self, terms, order, fused):
        """``{name: value in the compute format}`` for the implementations of the model."""
        rng = self.rng
        fuses = [fused] if fused is not None else [False, True]
        out = {}
        for f in fuses:
            if order in ("sequential", "any"):
                out[f"sequential fused={f}"] = self.sequential(terms, f)
                if not f:
                    out["sequential, first two added exactly"] = self.sequential(
                        terms, f, first="pair")
                    out["sequential, every term loaded"] = self.sequential(terms, f,
                                                                           first="all")
            if order in ("pairwise", "any"):
                out[f"halving tree fused={f}"] = self.tree(
                    terms, lambda n: 1 << (math.ceil(math.log2(n)) - 1), f)
                out[f"balanced random tree fused={f}"] = self.tree(terms, self.balanced_split,
                                                                   f)
                if not f:
                    out["balanced random tree, leaves loaded"] = self.tree(
                        terms, self.balanced_split, f, load=True)
            if order == "any":
                out[f"reversed fused={f}"] = self.sequential(terms[::-1], f)
                for i in range(2):
                    perm = terms[:]
                    rng.shuffle(perm)
                    out[f"permutation {i} fused={f}"] = self.sequential(
                        perm, f, first="pair" if i else "load")
                out[f"random tree fused={f}"] = self.tree(terms, self.any_split, f)
                bs = rng.randint(1, max(1, len(terms)))
                out[f"random blocks fused={f}"] = self.blocked(terms, bs, f)
                out[f"2 to 8 lanes fused={f}"] = self.lanes(terms, rng.randint(2, 8), f)
        if fused is None and order in ("sequential", "any"):
            out["sequential, FMA or not per step"] = self.sequential(
                terms, lambda: rng.random() < 0.5)
        return out


def _to_output(v: float, fo: Fmt, mode, rule: str | None) -> float:
    """An implementation's accumulated value ``v`` rounded into the output format ``fo`` under
    the overflow ``rule`` (None: the format's default): an overflow gives what the rule says,
    an accumulator that overflowed (±inf) saturates under "saturate"."""
    rule = fo.rule if rule is None else rule
    if math.isnan(v):
        return math.nan
    if math.isinf(v):
        if rule == "saturate":
            return math.copysign(fo.max_finite, v)
        return v if fo.has_inf else math.nan
    if v == 0:
        return 0.0
    return expected(Fraction(v), False, fo, mode, rule)


def _simulate(terms_arr, shape, model_c, model_p, mode, order, fused, fo: Fmt, seed,
              rule=None):
    """``{name: float64 array of outputs}``: each implementation's result rounded into ``fo``
    under the overflow ``rule``."""
    sim = Sim(model_c, model_p, mode, random.Random(seed))
    results = {}
    for idx in np.ndindex(*shape):
        for name, v in sim.implementations(list(terms_arr[idx]), order, fused).items():
            results.setdefault(name, np.zeros(shape))[idx] = _to_output(v, fo, mode, rule)
    return results


def _assert_covered(result, sims, what):
    """The reference (the first declared model: the exact value rounded once) and every
    simulated output are covered."""
    cov = result.covers(result.rounded)
    assert cov.all(), f"{what}: the reference itself is not covered\n{cov.summary()}"
    for name, out in sims.items():
        cov = result.covers(out)
        assert cov.all(), f"{what}: {name} not covered\n{cov.summary()}"


FLOAT_RULES = st.sampled_from([None, "ieee", "saturate", "nan"])

MODELS = st.builds(
    Model,
    compute=st.sampled_from([None, None, "float32", "float64", "bfloat16", "float16"]),
    order=st.sampled_from(["any", "pairwise", "sequential"]),
    fused=st.sampled_from([None, True, False]),
    products=st.sampled_from([None, None, "bfloat16", "float16", "float32", "float64"]))

SIM_KINDS = ("random", "cancel", "ties", "zeros", "spread", "positive", "drift", "drift")


@st.composite
def sim_cases(draw, kmax=40, formats=tuple(FLOATS)):
    case = draw(float_cases(formats=formats, kmax=kmax, layouts=("2d", "vec_mat", "mat_vec"),
                            kinds=SIM_KINDS))
    if case.kind == "spread":  # keep partial sums inside float32 mostly: narrower windows
        f = FMTS[case.fin]
        lim = min(f.emax, 60)
        case.A = np.clip(case.A, -(2.0**lim), 2.0**lim)
    return case


def _one_model_check(case: Case, model: Model, mode, seed, rule):
    a, b = er.asarray(case.A, case.fin), er.asarray(case.B, case.fb)
    r = linalg.matmul(a, b, dtype=case.dtype, rounding=mode, overflow=rule,
                      compute=model.compute, order=model.order, fused=model.fused,
                      products=model.products)
    shape = r.rounded.shape
    terms = _bcast_matmul_terms(case.A, case.B)
    c = _compute_of(case.out, model.compute)
    p = FMTS[model.products] if model.products else c
    sims = _simulate(terms, shape, c, p, mode, model.order, model.fused, _out_fmt(case.out),
                     seed, rule)
    _assert_covered(r, sims, f"matmul {case!r} {model} {mode.value} overflow={rule}")
    return r


@settings(max_examples=100)
@given(case=sim_cases(), model=MODELS, mode=st.sampled_from(MODES),
       seed=st.integers(0, 2**32 - 1), rule=FLOAT_RULES)
@example(case=Case("float32", None, "2d", "random", np.full((1, 16), 0.1, np.float32)
                   .astype(np.float64), np.full((16, 1), 3.0)),
         model=Model(None, "sequential", None, None), mode=R.NEAREST_EVEN, seed=0, rule=None)
@example(case=Case("bfloat16", None, "2d", "random",
                   np.array([[1.0, 2.0**-9, 2.0**-9, 2.0**-9]]), np.ones((4, 1))),
         model=Model("bfloat16", "pairwise", False, None), mode=R.TOWARD_POSITIVE, seed=1,
         rule=None)
@example(case=Case("float32", None, "2d", "cancel",
                   np.array([[2.0**40, 1.0, -(2.0**40), 2.0**-30]]), np.ones((4, 1))),
         model=Model(None, "any", False, "bfloat16"), mode=R.ODD, seed=2, rule=None)
@example(case=Case("float32", None, "2d", "random", np.array([[1 + 2.0**-8, 2.0**-8]]),
                   np.ones((2, 1))),  # the first term rounded into the bfloat16 accumulator
         model=Model("bfloat16", "sequential", False, "float32"), mode=R.NEAREST_EVEN, seed=3,
         rule=None)
@example(case=Case("float64", None, "2d", "random", np.array([[0.1, 0.2, 2.0**-40]]),
                   np.ones((3, 1))),  # a compute format narrower than the output
         model=Model("float32", "any", True, None), mode=R.TOWARD_ZERO, seed=4, rule=None)
@example(case=Case("float16", None, "2d", "positive", np.array([[60000.0, 60000.0, 1.0]]),
                   np.ones((3, 1))),  # the reference overflows
         model=Model(None, "any", None, None), mode=R.NEAREST_EVEN, seed=5, rule="saturate")
@example(case=Case("float16", None, "2d", "positive", np.array([[60000.0, 60000.0, 1.0]]),
                   np.ones((3, 1))),
         model=Model("float16", "sequential", False, None), mode=R.TOWARD_POSITIVE, seed=6,
         rule="nan")
def test_matmul_models_cover_simulated_implementations(case, model, mode, seed, rule):
    """For a drawn model (compute, order, fused, products), mode and overflow rule, the
    reference and every simulated implementation of that model, rounded into the output
    format under the rule, are covered."""
    _one_model_check(case, model, mode, seed, rule)


@pytest.mark.slow
@settings(max_examples=500)
@given(case=sim_cases(kmax=100), model=MODELS, mode=st.sampled_from(MODES),
       seed=st.integers(0, 2**32 - 1), rule=FLOAT_RULES)
def test_matmul_models_cover_simulated_implementations_slow(case, model, mode, seed, rule):
    _one_model_check(case, model, mode, seed, rule)


@settings(max_examples=15)
@given(case=complex_cases(kinds=("random", "cancel", "zeros")), mode=st.sampled_from(MODES),
       seed=st.integers(0, 2**32 - 1))
def test_complex_matmul_model_covers_simulated_implementations(case, mode, seed):
    """Complex products accumulated per part in the compute format (each part a real sum of
    the 2k products, summed sequentially, pairwise, blocked, ...) are covered."""
    a, b = er.asarray(case.A, case.fin_a), er.asarray(case.B, case.fin_b)
    r = linalg.matmul(a, b, dtype=case.dtype, rounding=mode, overflow=case.rule)
    out = r.rounded.dtype.name
    fo = FMTS[_COMPLEX[out]]
    re, im = _complex_terms(case.A, case.B)
    shape = r.rounded.shape
    sre = _simulate(re, shape, fo, fo, mode, "any", None, fo, seed, case.rule)
    sim = _simulate(im, shape, fo, fo, mode, "any", None, fo, seed + 1, case.rule)
    sims = {name: _cplx(sre[name], sim[name]) for name in sre if name in sim}
    _assert_covered(r, sims, f"matmul {case!r} {mode.value}")


@st.composite
def sim_sum_cases(draw):
    fin, x, axis, keepdims, dtype = draw(sum_cases(formats=tuple(FLOATS)))
    if np.isnan(x).any() or np.isinf(x).any() or np.abs(x).max(initial=0) > 2.0**100:
        x = np.where(np.isfinite(x), np.clip(x, -(2.0**100), 2.0**100), 1.0)
    return fin, x, axis, keepdims, dtype


SUM_COMPUTES = st.sampled_from([None, "float32", "float64", "bfloat16", "float16"])


@settings(max_examples=80)
@given(case=sim_sum_cases(), compute=SUM_COMPUTES,
       order=st.sampled_from(["any", "pairwise", "sequential"]), mode=st.sampled_from(MODES),
       seed=st.integers(0, 2**32 - 1), rule=FLOAT_RULES)
@example(case=("float32", np.array([1 + 2.0**-8, 2.0**-8]), None, False, None),
         compute="bfloat16", order="sequential", mode=R.NEAREST_EVEN, seed=0, rule=None)
@example(case=("float64", np.array([[0.1, 0.0], [0.0, 0.0]]), 1, True, None),
         compute="float32", order="sequential", mode=R.TOWARD_POSITIVE, seed=1, rule=None)
def test_sum_models_cover_simulated_implementations(case, compute, order, mode, seed, rule):
    """sum: the reference and the implementations of the declared compute format and order
    are covered, under every overflow rule; an input the compute format does not hold is
    rounded where it is loaded into the accumulator (the first one included)."""
    _run_sum_sims(case, compute, order, mode, seed, rule)


@pytest.mark.slow
@settings(max_examples=300)
@given(case=sim_sum_cases(), compute=SUM_COMPUTES,
       order=st.sampled_from(["any", "pairwise", "sequential"]), mode=st.sampled_from(MODES),
       seed=st.integers(0, 2**32 - 1), rule=FLOAT_RULES)
def test_sum_models_cover_simulated_implementations_slow(case, compute, order, mode, seed,
                                                         rule):
    _run_sum_sims(case, compute, order, mode, seed, rule)


def _run_sum_sims(case, compute, order, mode, seed, rule):
    fin, x, axis, keepdims, dtype = case
    out = dtype or fin
    r = linalg.sum(er.asarray(x, fin), axis=axis, keepdims=keepdims, dtype=dtype,
                   rounding=mode, overflow=rule, compute=compute, order=order)
    (terms,), shape = _sum_terms(x, axis, keepdims)
    c = _compute_of(out, compute)
    sims = _simulate(terms, shape, c, c, mode, order, False, FMTS[out], seed, rule)
    _assert_covered(r, sims, f"sum {fin}->{out} axis={axis} compute={compute} {order} "
                             f"{mode.value} overflow={rule}")


def _gemm_sims(g: GCase, c: Fmt, mode, fo: Fmt, seed, shape):
    """gemm implementations (any order): alpha applied to the sum or to each product (rounded
    in the compute format), beta * c rounded and added last or first (BLAS), FMA or not,
    alpha applied to a factor (reference BLAS). An alpha of 1 is not applied (as BLAS does):
    multiplying by it in the compute format would round inputs wider than that format, a
    rounding no model declares."""
    A = np.swapaxes(g.A, -1, -2) if g.trans_a else g.A
    B = g.B.T if g.trans_b else g.B
    prods = _bcast_matmul_terms(A, B)
    use_ab, use_c = g.alpha != 0, g.C is not None and g.beta != 0
    C = np.broadcast_to(np.asarray(g.C, dtype=np.float64), shape) if use_c else None
    sim = Sim(c, c, mode, random.Random(seed))
    rc = sim.rc
    al, be = float(g.alpha), float(g.beta)

    def times_alpha(v):
        return v if al == 1 else rc.mul(al, v)

    names = ["alpha on the sum", "alpha on each product", "c first (BLAS)", "FMA, c first",
             "tree, alpha on the sum"]
    out = {n: np.zeros(shape) for n in names}
    for idx in np.ndindex(*shape):
        terms = list(prods[idx])
        bc = rc.mul(be, float(C[idx])) if use_c else None
        res = {}
        if not use_ab:
            res = dict.fromkeys(names, bc if use_c else 0.0)
        else:
            s = sim.sequential(terms, False, first=sim.rng.choice(["load", "pair"]))
            res["alpha on the sum"] = times_alpha(s)
            scaled = [(times_alpha(sim.rp.mul(x, y)),) for x, y in terms]
            res["alpha on each product"] = sim.sequential(scaled, False)
            res["c first (BLAS)"] = sim.sequential(([(bc,)] if use_c else []) + scaled, False)
            acc = bc
            for x, y in terms:  # reference BLAS: temp = alpha * b_lj, c_ij += temp * a_il
                acc = sim.step(acc, (times_alpha(x), y), True)
            res["FMA, c first"] = acc
            res["tree, alpha on the sum"] = times_alpha(sim.tree(terms, sim.any_split, False))
            if use_c:
                for n in ("alpha on the sum", "alpha on each product",
                          "tree, alpha on the sum"):
                    res[n] = rc.add(res[n], bc)
        for n in names:
            out[n][idx] = _to_output(res[n], fo, mode, g.rule)
    return out


@settings(max_examples=60)
@given(g=gemm_cases(), mode=st.sampled_from(MODES), seed=st.integers(0, 2**32 - 1),
       compute=st.sampled_from([None, "float32", "float64"]))
@example(g=GCase("float64", np.array([[-1.07914686, 0.1638941]]),
                 np.array([[14.60408924], [4.85308621]]), None, 1, 1, False, False, None),
         mode=R.TOWARD_ZERO, seed=0, compute="float32")  # alpha = 1 on float64 data
@example(g=GCase("float64", np.array([[-1.07914686, 0.1638941]]),
                 np.array([[14.60408924], [4.85308621]]), np.array([[0.1]]), 0.1, -3, False,
                 False, None, "saturate"), mode=R.TOWARD_ZERO, seed=0, compute="float32")
@example(g=GCase("float64", np.array([[-1.07914686, 0.1638941]]),
                 np.array([[14.60408924], [4.85308621]]), None, -2.8697786463769137e-116, 1,
                 False, False, None), mode=R.TOWARD_POSITIVE, seed=0, compute="float32")
def test_gemm_model_covers_simulated_implementations(g, mode, seed, compute):
    """gemm's any-order bound over k + 1 terms covers alpha applied to the sum or to each
    product, beta * c added last or first, FMAs, in the compute format."""
    _run_gemm_sims(g, mode, seed, compute)


@pytest.mark.slow
@settings(max_examples=300)
@given(g=gemm_cases(kmax=80), mode=st.sampled_from(MODES), seed=st.integers(0, 2**32 - 1),
       compute=st.sampled_from([None, "float32", "float64", "bfloat16"]))
def test_gemm_model_covers_simulated_implementations_slow(g, mode, seed, compute):
    _run_gemm_sims(g, mode, seed, compute)


def _run_gemm_sims(g, mode, seed, compute):
    if g.C is not None and not isinstance(g.C, float) and np.isnan(np.asarray(g.C)).any():
        g.C = np.nan_to_num(np.asarray(g.C))
    for X in (g.A, g.B):
        X[~np.isfinite(X)] = 1.0
    out = g.dtype or g.fin
    c = _compute_of(out, compute)
    a, b = er.asarray(g.A, g.fin), er.asarray(g.B, g.fin)
    cc = er.asarray(g.C, g.fin) if isinstance(g.C, np.ndarray) else g.C
    r = linalg.gemm(a, b, cc, alpha=g.alpha, beta=g.beta, trans_a=g.trans_a, trans_b=g.trans_b,
                    dtype=g.dtype, rounding=mode, overflow=g.rule, compute=compute)
    sims = _gemm_sims(g, c, mode, FMTS[out], seed, r.rounded.shape)
    _assert_covered(r, sims, f"gemm {g!r} compute={compute} {mode.value}")


# ---------------------------------------------------------------------- bounds that are inf
@settings(max_examples=15)
@given(k=st.integers(18, 40), mode=st.sampled_from(MODES), seed=st.integers(0, 2**32 - 1),
       order=st.sampled_from(["any", "sequential"]), rule=FLOAT_RULES)
def test_bound_is_inf_where_k_u_reaches_one(k, mode, seed, order, rule):
    """Accumulating in float8_e4m3fn (u = 2**-4, 2**-3 directed), k - 2 >= 1/u: the bound is
    inf for the first terms, it is computed without warnings where those terms are 0 (the
    first term of row 0 is), and every simulated implementation stays covered (NaN included:
    this accumulator has no infinity), under every overflow rule."""
    rng = np.random.default_rng(seed)
    A = _rand(rng, FMTS["float8_e4m3fn"], (2, k), -3, 1)
    A[0, 0] = 0.0
    B = _rand(rng, FMTS["float8_e4m3fn"], (k, 2), -2, 1)
    a, b = er.asarray(A, "float8_e4m3fn"), er.asarray(B, "float8_e4m3fn")
    r = linalg.matmul(a, b, rounding=mode, overflow=rule, compute="float8_e4m3fn",
                      order=order)
    tol = r.tolerance().numpy()
    fmt = FMTS["float8_e4m3fn"]
    if order == "any" and rule == "saturate":  # no bound, clamped: every finite value
        for v in (fmt.max_finite, -fmt.max_finite, 0.0):
            assert r.covers(np.full((2, 2), v)).all(), (v, tol)
    elif order == "any":
        assert np.isinf(tol).all(), tol
    terms = _bcast_matmul_terms(A, B)
    sims = _simulate(terms, (2, 2), fmt, fmt, mode, order, None, fmt, seed, rule)
    _assert_covered(r, sims, f"e4m3fn accumulation k={k} {mode.value} {order} overflow={rule}")


@pytest.mark.slow
def test_bound_is_inf_bfloat16_accumulation_k1024():
    """The documented case: 1024 bfloat16 products accumulated in bfloat16 (1023 u >= 1)."""
    A = np.full((1, 1024), 0.1)
    B = np.full((1024, 1), 0.1)
    a, b = er.asarray(A, "bfloat16"), er.asarray(B, "bfloat16")
    r = linalg.matmul(a, b, compute="bfloat16")
    assert np.isinf(r.tolerance().numpy()).all()
    A, B = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
    terms = _bcast_matmul_terms(A, B)
    fmt = FMTS["bfloat16"]
    sims = _simulate(terms, (1, 1), fmt, fmt, R.NEAREST_EVEN, "any", None, fmt, 0)
    _assert_covered(r, sims, "bfloat16 accumulation, k = 1024")
    assert sims["sequential fused=False"][0, 0] != r.rounded.numpy().astype(np.float64)[0, 0]


# --------------------------------------------------------------------- the check can fail
def _next(x: float, fo: Fmt, up: bool) -> float:
    """The value of ``fo`` just beyond ``x`` (a value of ``fo``) in the direction ``up``."""
    tiny = Fraction(1, 2**1200)
    return expected(Fraction(x) + (tiny if up else -tiny), False, fo,
                    R.TOWARD_POSITIVE if up else R.TOWARD_NEGATIVE, "ieee")


def _unit(f: Fmt, mode) -> float:
    return 2.0**-f.p if mode.is_nearest else 2.0 ** (1 - f.p)


def _quantum_above(m: float, f: Fmt) -> float:
    """An upper bound of the quantum of ``f`` at magnitudes up to ``m``."""
    e = math.frexp(m)[1] if m > 0 else f.emin
    return math.ldexp(1.0, max(e, f.emin + 1) - f.p)


def _worst_case(terms, k, c: Fmt, p: Fmt, fo: Fmt, mode, x: float):
    """An upper bound, independent of exactref's, of the tolerance of any model with these
    formats: ``(gamma_{k+1}(u_c) (1 + u_p) + u_p) sum |t|``, the outward roundings of the
    interval's ends in the compute and output formats, and the subnormal slack; None when the
    model has no bound (k u >= 1) or a partial sum may overflow."""
    u, up = _unit(c, mode), _unit(p, mode)
    if (k + 1) * u >= 0.5:
        return None
    ts = float(builtins_sum(abs(Fraction(a) * Fraction(b)) for a, b in terms)) * (1 + 2.0**-50)
    b = ((k + 1) * u / (1 - (k + 1) * u) * (1 + up) + up) * ts
    if ts + b >= min(c.max_finite, p.max_finite) / 2:
        return None
    # the exact sum lies within an ulp of x (round to odd, or directed), so the interval's ends
    # reach |x| + 2b + that ulp, where the output's quantum may be twice x's
    m = abs(x) + 2 * b + _quantum_above(abs(x), fo)
    return (b * 1.001 + 2 * _quantum_above(m, c) + 2 * _quantum_above(m, fo)
            + 4 * k * (c.smallest_subnormal + p.smallest_subnormal))


@settings(max_examples=80)
@given(case=sim_cases(), model=MODELS, mode=st.sampled_from(MODES), rule=FLOAT_RULES)
@example(case=Case("float32", None, "2d", "positive", np.full((1, 16), 0.1, np.float32)
                   .astype(np.float64), np.full((16, 1), 3.0)),
         model=Model(None, "any", None, None), mode=R.NEAREST_EVEN, rule=None)
@example(case=Case("float32", None, "2d", "positive", np.full((1, 16), 0.1, np.float32)
                   .astype(np.float64), np.full((16, 1), 3.0)),
         model=Model("bfloat16", "sequential", False, "float32"), mode=R.TOWARD_POSITIVE,
         rule=None)
@example(case=Case("float16", None, "2d", "positive", np.array([[60000.0, 7.0, 1.0]]),
                   np.ones((3, 1))),
         model=Model(None, "any", None, None), mode=R.TOWARD_ZERO, rule="saturate")
def test_tolerance_is_bounded_and_values_beyond_it_are_not_covered(case, model, mode, rule):
    """The tolerance is no wider than an independent worst case of the model (Higham's
    gamma_{k+1} on the exact sum of |terms|, plus the outward roundings of the ends), and the
    reference plus (or minus) twice its tolerance and one more ulp is not covered: the check
    rejects what no modelled implementation can give, under every overflow rule."""
    a, b = er.asarray(case.A, case.fin), er.asarray(case.B, case.fb)
    r = linalg.matmul(a, b, dtype=case.dtype, rounding=mode, overflow=rule,
                      compute=model.compute, order=model.order, fused=model.fused,
                      products=model.products)
    fo = _out_fmt(case.out)
    c = _compute_of(case.out, model.compute)
    p = FMTS[model.products] if model.products else c
    terms = _bcast_matmul_terms(case.A, case.B).reshape(-1)
    ref = r.rounded.numpy().astype(np.float64).reshape(-1)
    tol = r.tolerance().numpy().reshape(-1)
    for i, (x, t) in enumerate(zip(ref.tolist(), tol.tolist(), strict=True)):
        if not (math.isfinite(x) and math.isfinite(t)):
            continue
        if all(math.isfinite(f) for term in terms[i] for f in term):
            worst = _worst_case(terms[i], len(terms[i]), c, p, fo, mode, x)
            assert worst is None or t <= worst, (i, x, t, worst, model, mode, rule)
        for up in (True, False):
            far = Fraction(x) + (2 * Fraction(t) if up else -2 * Fraction(t))
            if abs(far) >= fo.max_finite:
                continue
            v = _next(expected(far, False, fo, R.TOWARD_POSITIVE if up else R.TOWARD_NEGATIVE),
                      fo, up)
            if not math.isfinite(v):
                continue
            wrong = ref.copy()
            wrong[i] = v
            cov = r.covers(wrong.reshape(r.rounded.shape))
            assert not cov.mask.reshape(-1)[i], (i, x, t, v, model, mode, rule)


def test_models_are_distinguished():
    """Deterministic must-fail checks: an implementation outside the declared model is not
    covered. float32 [2**24, 1, 1] summed sequentially in float32 gives 2**24 (two ties to
    even), covered by compute="float32" and not by compute="float64" (exact there). A product
    rounded to bfloat16 is covered by products="bfloat16" and not by fused=True."""
    a = np.array([[2.0**24, 1.0, 1.0]], np.float32)
    b = np.ones((3, 1), np.float32)
    seq = linalg.matmul(a, b, compute="float32", order="sequential")
    assert seq.rounded.tolist() == [[2.0**24 + 2]]
    assert seq.covers(np.array([[2.0**24]], np.float32)).all()  # (2**24 + 1) + 1, ties to even
    wide = linalg.matmul(a, b, compute="float64")
    assert not wide.covers(np.array([[2.0**24]], np.float32)).all()
    x = np.array([[1.0 + 2.0**-7]], np.float32)
    y = np.array([[1.0 + 2.0**-7]], np.float32)  # the product needs 15 bits
    fused = linalg.matmul(x, y, fused=True)
    rounded_bf16 = float(er.asarray((1 + 2.0**-7) ** 2, "bfloat16").numpy())
    assert rounded_bf16 != float(fused.rounded.numpy()[0, 0])
    assert not fused.covers(np.array([[rounded_bf16]], np.float32)).all()
    assert linalg.matmul(x, y, fused=False, products="bfloat16").covers(
        np.array([[rounded_bf16]], np.float32)).all()


# ============================================================ regression tests (fixed bugs)
@pytest.mark.parametrize("rule, want", [("saturate", 65504.0), ("nan", math.nan)])
def test_overflowing_reference_is_covered_under_every_overflow_rule(rule, want):
    """float16 [[60000, 60000]] @ [[1], [1]] = 120000 overflows: overflow='saturate' gives
    65504 and overflow='nan' gives NaN (both as the oracle says), and the Result that returned
    it covers it: the tolerance interval's ends are rounded with the overflow rule."""
    a = er.asarray([[60000.0, 60000.0]], "float16")
    b = er.asarray([[1.0], [1.0]], "float16")
    r = linalg.matmul(a, b, overflow=rule)
    assert same(float(r.rounded.numpy()[0, 0]), want)
    assert same(round_terms([(60000.0, 1.0), (60000.0, 1.0)], FMTS["float16"], R.NEAREST_EVEN,
                            rule), want)
    assert r.covers(r.rounded).all()
    if rule == "saturate":  # clamped: the infinity an 'ieee' implementation gives is not
        assert not r.covers(np.array([[math.inf]], np.float16)).all()


@pytest.mark.parametrize("mode", MODES)
def test_matmul_with_empty_inner_dimension_is_zero(mode):
    """An empty inner dimension (k = 0) gives zeros as numpy and torch do: +0 in every mode
    (an empty sum, also toward -inf), covered by the Result; dot and sum of nothing too."""
    r = linalg.matmul(np.ones((2, 0)), np.ones((0, 3)), rounding=mode)
    assert r.rounded.tolist() == np.matmul(np.ones((2, 0)), np.ones((0, 3))).tolist()
    assert r.covers(r.rounded).all()
    assert not np.signbit(r.rounded.numpy()).any()
    rb = linalg.matmul(er.asarray(np.ones((2, 3, 0)), "bfloat16"),
                       er.asarray(np.ones((0, 4)), "bfloat16"), rounding=mode,
                       compute="bfloat16", order="sequential")
    assert rb.rounded.shape == (2, 3, 4) and rb.rounded.dtype.name == "bfloat16"
    assert rb.covers(rb.rounded).all()
    assert not np.signbit(rb.rounded.numpy().astype(np.float64)).any()
    for res in (linalg.dot(np.ones(0), np.ones(0), rounding=mode),
                linalg.sum(np.ones((2, 0)), axis=1, rounding=mode)):
        assert not np.signbit(res.rounded.numpy()).any() and (res.rounded.numpy() == 0).all()
        assert res.covers(res.rounded).all()


@pytest.mark.parametrize("op", ["dot", "matmul", "sum", "complex matmul"])
def test_sum_of_positive_zeros_is_positive_zero(op):
    """0.0 * 0.0 (or sum([0.0, 0.0])) rounded toward -inf: the exact zero has no cancellation,
    every term is +0, so the result is +0 (IEEE 754: +0 + +0 is +0 in every mode, as
    exactref's gemm and add give), on the long-sum path too."""
    x = np.array([0.0, 0.0])
    if op == "dot":
        r = linalg.dot(x, x, rounding="toward_negative")
    elif op == "matmul":
        r = linalg.matmul(x[None, :], x[:, None], rounding="toward_negative")
    elif op == "sum":
        r = linalg.sum(x, rounding="toward_negative")
    else:  # the imaginary part: 0 * 0 + 0 * 0
        z = np.zeros((1, 1), np.complex128)
        r = linalg.matmul(z, z, rounding="toward_negative")
    assert er.add(0.0, 0.0, rounding="toward_negative").rounded.tolist() == 0.0
    got = _got_parts(r)[-1].reshape(-1)[0]
    assert not np.signbit(got), got


@pytest.mark.parametrize("op", ["matmul", "sum"])
def test_infinite_bound_computes_without_warnings(op):
    """20 terms accumulated in float8_e4m3fn sequentially (the first terms' coefficients are
    inf: 18 u >= 1), the first term 0: the bound is computed without 'invalid value'
    warnings (inf * 0 is not formed) and is inf."""
    import warnings

    x = np.full(20, 0.25)
    x[0] = 0.0
    e4 = "float8_e4m3fn"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if op == "matmul":
            r = linalg.matmul(er.asarray(x[None, :], e4), er.asarray(np.ones((20, 1)), e4),
                              compute=e4, order="sequential")
        else:
            r = linalg.sum(er.asarray(x, e4), compute=e4, order="sequential")
        tol = r.tolerance().numpy()
    assert np.isinf(tol).all()


@pytest.mark.parametrize("op", ["sum", "matmul fused"])
def test_reference_is_covered_with_a_narrower_compute_format(op):
    """sum([0.1]) in float64 with compute='float32': the reference is 0.1 (float64), the
    accumulated model's interval [R_32(0.1), R_32(0.1)]; the same for
    matmul([[0.1]], [[1.0]], fused=True). The covered interval is the hull of both, so the
    reference (the Result's first model) is covered, and so is the float32 accumulation."""
    if op == "sum":
        r = linalg.sum(np.array([0.1]), compute="float32")
    else:
        r = linalg.matmul(np.array([[0.1]]), np.array([[1.0]]), compute="float32", fused=True)
    assert "exact value rounded once into float64" in r.models
    assert r.covers(r.rounded).all()
    in32 = float(np.float32(0.1))
    assert r.covers(np.full(r.rounded.shape, in32)).all()


@pytest.mark.parametrize("op", ["sum", "matmul"])
def test_first_term_rounded_into_a_narrower_accumulator_is_covered(op):
    """float32 terms [1 + 2**-8, 2**-8], exactly 1 + 2**-7 (a bfloat16 value). Accumulated in
    bfloat16 from the first term: 1 + 2**-8 loads as 1 (a tie, to even), 1 + 2**-8 rounds to 1
    again, so the implementation returns 1.0; the bound counts the first term's rounding into
    the narrower accumulator, so the Result covers it."""
    terms = [1 + 2.0**-8, 2.0**-8]
    bf16 = Rounder(FMTS["bfloat16"], R.NEAREST_EVEN)
    loaded = bf16(terms[0])
    assert loaded == 1.0 and bf16.add(loaded, terms[1]) == 1.0
    if op == "sum":
        r = linalg.sum(er.asarray(terms, "float32"), compute="bfloat16")
        actual = np.array(1.0, np.float32)
    else:
        r = linalg.matmul(er.asarray([terms], "float32"), er.asarray([[1.0], [1.0]], "float32"),
                          compute="bfloat16", products="float32", fused=False)
        actual = np.array([[1.0]], np.float32)
    assert r.rounded.numpy().reshape(-1)[0] == 1 + 2.0**-7
    assert r.covers(actual).all()


# ================================================================================ known bugs
_GEMM_K0 = GCase("float64", np.ones((1, 0)), np.ones((0, 1)), np.array([[-0.0]]), 1, 1, False,
                 False, None)


@pytest.mark.parametrize("mode", [m for m in MODES if m is not R.TOWARD_NEGATIVE])
def test_gemm_with_empty_inner_dimension_is_beta_c(mode):
    """k = 0: alpha * op(a) @ op(b) has no terms, so gemm([[ ]], [[ ]], [[-0.0]]) is
    beta * c = -0 rounded once, in every mode (as the oracle says and as alpha = 0 gives)."""
    r0 = linalg.gemm(_GEMM_K0.A, _GEMM_K0.B, _GEMM_K0.C, alpha=0, rounding=mode)
    assert np.signbit(r0.rounded.numpy()).all()  # alpha = 0: the product is not computed
    _run_gemm(_GEMM_K0, modes=[mode])


@pytest.mark.parametrize("mode", MODES)
def test_gemm_alpha_applied_to_an_underflowing_factor_is_covered(mode):
    """Reference BLAS sgemm: temp = R_32(alpha * b) (a float32 subnormal: 1.5 * 2**-149 rounds
    to 2**-148 or 2**-149), then c = R_32(temp * a): 2**-128 or 2**-129, where the exact value
    is 1.5 * 2**-129. Every operand is a float32 value and the compute format is float32."""
    a = np.array([[2.0**20]], np.float32)
    b = np.array([[1.5]], np.float32)
    alpha = 2.0**-149
    rc = Rounder(FMTS["float32"], mode)
    blas = rc.mul(rc.mul(alpha, 1.5), 2.0**20)
    r = linalg.gemm(a, b, alpha=alpha, rounding=mode)
    assert float(r.rounded.numpy()[0, 0]) == 1.5 * 2.0**-129
    assert blas in (2.0**-128, 2.0**-129)
    assert r.covers(np.array([[blas]], np.float32)).all()


@pytest.mark.parametrize("mode", MODES)
def test_gemm_underflowing_products_scaled_by_alpha_are_covered(mode):
    """The declared model "alpha applied to each product or to the sum": the product
    2**-149 * 0.5 = 2**-150 rounds in float32 to 0 or 2**-149 (a tie, or directed), alpha = 2**20
    scales it exactly to 0 or 2**-129, where the exact value is 2**-130."""
    a = np.array([[2.0**-149]], np.float32)
    b = np.array([[0.5]], np.float32)
    alpha = 2.0**20
    rc = Rounder(FMTS["float32"], mode)
    impl = rc.mul(alpha, rc.mul(2.0**-149, 0.5))
    r = linalg.gemm(a, b, alpha=alpha, rounding=mode)
    assert float(r.rounded.numpy()[0, 0]) == 2.0**-130
    assert impl in (0.0, 2.0**-129)
    assert r.covers(np.array([[impl]], np.float32)).all()
