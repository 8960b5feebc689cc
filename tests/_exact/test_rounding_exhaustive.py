"""Tier 1: every value of every float format of 16 bits or fewer, in every rounding mode.

The oracle never calls exactref's rounding code. Each format's values come from its bit patterns
(``numpy.arange(2**bits).view(dtype)``, ml_dtypes' own decoding), sorted; the test inputs are
built between neighbours ``a < b`` (``g = b - a``), so the expected result of every mode follows
from the neighbours by construction:

=========  ========================================  =============================================
class      inputs                                    result (magnitudes)
=========  ========================================  =============================================
EXACT      ``a``                                     ``a``, no flag
BELOW      ``a + g/4``, ``a + g*2**-20``,            nearest: ``a``; directed: by sign; odd: the
           ``a + g/2 - g*2**-20``                    odd one of ``a`` and ``b``
TIE        ``a + g/2``                               even: the even one; away: ``b``
ABOVE      ``a + g/2 + g*2**-20``, ``a + 3g/4``,     nearest: ``b``
           ``b - g*2**-20``
BEYOND     ``nxt``, ``1.5 nxt``, ``2 nxt``,          overflow in every mode
           ``~2**40 nxt``, ``1e300``
=========  ========================================  =============================================

The list of neighbours is extended past the largest finite value by ``nxt = max + ulp(max)``,
the next value the format's precision would give, so the overflow threshold ``max + ulp/2`` is
a TIE between ``max`` and ``nxt`` (IEEE 754 decides overflow on the result rounded with an
unbounded exponent). Below the smallest subnormal ``s`` the lower neighbour is 0 (``s/2`` is a
tie; ``2**-1074``, ``2**-600`` and ``s * 2**-30`` are BELOW). Both signs.

Inputs travel as float64 arrays through ``round_to`` and ``asarray`` (vectorized lanes; every
point of every format, bfloat16 and float16 included, in the default run), as Python Fractions
(the scalar path; strided for the 16-bit formats unless ``--run-slow``), and as two-term exact
sums whose second term decides a tie far below float64's precision (strided likewise).
Nearest-even is also compared bit for bit with ml_dtypes' casts from float32, which round once,
and narrow float and integer sources must round as their float64 values do.

The IEEE P3109 formats (no numpy dtype) take their values from the report's decoding
(``tests/p3109_oracle.py``), "even" and "odd" from their codes (P3109's CodeIsEven: with one bit
of precision the biased exponent's parity), and the overflow of ``"ieee"`` from the report's
SatNone: their finite formats saturate, round-to-odd overflows to +-inf in the signed extended
ones (whose infinity codes are odd), and an unsigned format's range ends at 0 (a negative value
that does not round to 0 overflows: 0 toward zero and toward +inf, NaN otherwise, 0 under
``"saturate"``). Their Fraction and tie sweeps run on a representative subset unless
``--run-slow``; nearest-even is compared with gfloat's ``round_ndarray`` where it is installed.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er
import p3109_oracle
from exactref._exact import ExactPart, sum_of_products
from exactref._formats import FORMATS

SMALL = [f for f in FORMATS.values() if f.kind == "float" and f.bits <= 16]
EIGHT_OR_LESS = [f for f in SMALL if f.bits <= 8]
NATIVE = [f for f in SMALL if f.encoding == "native"]
#: A representative subset of the P3109 formats for the slower sweeps (all with --run-slow).
P3109_FAST = [FORMATS[n] for n in ("binary8p1se", "binary8p1ue", "binary8p3sf", "binary8p4se",
                                   "binary8p5uf", "binary8p8ue")]
SWEEP = NATIVE + P3109_FAST
P3109_REST = [f for f in SMALL if f.encoding == "p3109" and f not in P3109_FAST]
MODES = list(er.Rounding)
R = er.Rounding

EXACT, BELOW, TIE, ABOVE, BEYOND = range(5)
_EPS = 2.0**-20

# (fraction of the gap above ``a``, class)
_OFFSETS = [
    (0.0, EXACT),
    (0.25, BELOW),
    (_EPS, BELOW),
    (0.5 - _EPS, BELOW),
    (0.5, TIE),
    (0.5 + _EPS, ABOVE),
    (0.75, ABOVE),
    (1.0 - _EPS, ABOVE),
]


def _fid(f):
    return f.name


def _mid(m):
    return m.value


# ----------------------------------------------------------------------------- the format
class Table:
    """A format as its sorted non-negative values, read from ml_dtypes' decoding of every pattern."""

    def __init__(self, fmt):
        nbits = fmt.bits
        self.p3109 = fmt.encoding == "p3109"  # the report's decoding, parity of the codes
        if self.p3109:
            p, signed, extended = fmt.precision, fmt.signed, fmt.has_inf
            pats = np.arange(2**nbits, dtype=np.uint8)
            vals = np.array([float(v) for v in p3109_oracle.values(p, signed, extended)])
            self.p, self.emin = p, 1 - p3109_oracle.bias(p, signed)
            smallest_normal = 2.0**self.emin
        else:
            dt = fmt.np_dtype
            pats = np.arange(2**nbits, dtype=np.uint8 if dt.itemsize == 1 else np.uint16)
            with np.errstate(invalid="ignore"):  # signalling NaN patterns
                vals = pats.view(dt).astype(np.float64)
            fin = ml_dtypes.finfo(dt)
            self.p = int(fin.nmant) + 1
            self.emin = int(fin.minexp)
            smallest_normal = float(fin.smallest_normal)
        self.has_inf = bool(np.isinf(vals).any())
        self.has_nan = bool(np.isnan(vals).any())
        self.has_negzero = bool(((vals == 0) & np.signbit(vals)).any())
        self.has_zero = bool((vals == 0).any())
        self.signed = bool((vals < 0).any())
        keep = np.isfinite(vals) & ~np.signbit(vals)
        mags, first = np.unique(vals[keep], return_index=True)
        odd = (pats[keep][first] & 1).astype(bool)  # the last significand bit of the encoding
        if self.p == 1 and not self.p3109:  # one significant bit: every significand is 1
            odd[:] = True
        if not self.has_zero:  # a virtual 0 below the smallest value: the lower neighbour there
            mags = np.concatenate([[0.0], mags])
            odd = np.concatenate([[False], odd])
        self.max = float(mags[-1])
        self.smallest_normal = smallest_normal
        # the next value the precision gives past the largest finite one (beyond the range)
        ulp = 2.0 ** (np.frexp(self.max)[1] - 1 - (self.p - 1))
        nxt = self.max + ulp
        pow2 = np.frexp(nxt)[0] == 0.5
        if self.p3109:  # the code after the largest finite one (a power of two: even)
            nxt_odd = not bool(odd[-1]) if self.p == 1 or not pow2 else False
        else:
            nxt_odd = (self.p == 1) or (not bool(odd[-1]) if not pow2 else False)
        self.values = np.concatenate([mags, [nxt]])  # ascending, values[-1] is virtual
        self.odd = np.concatenate([odd, [nxt_odd]])

    def overflow_value(self, negative, mode, rule):
        """What an overflowing element becomes (float64), from the rule's definition."""
        big = np.where(negative, -self.max, self.max)
        if rule == "saturate":
            return big
        if rule == "nan":
            return np.full(negative.shape, np.nan)
        assert rule == "ieee"
        if mode in (R.NEAREST_EVEN, R.NEAREST_AWAY):
            to_inf = np.ones(negative.shape, bool)
        elif mode is R.TOWARD_POSITIVE:
            to_inf = ~negative
        elif mode is R.TOWARD_NEGATIVE:
            to_inf = negative
        elif mode is R.ODD and self.p3109 and self.has_inf and self.signed:
            to_inf = np.ones(negative.shape, bool)  # SatNone: the rounded value's code, 0x7F
        else:  # toward zero, odd
            to_inf = np.zeros(negative.shape, bool)
        if self.has_inf:
            far = np.where(negative, -np.inf, np.inf)
        elif self.has_nan and not self.p3109:  # P3109's finite formats saturate (SatNone)
            far = np.full(negative.shape, np.nan)
        else:
            far = big
        return np.where(to_inf, far, big)


@functools.cache
def table(name) -> Table:
    return Table(FORMATS[name])


# ------------------------------------------------------------------------------ the inputs
def _selection(t: Table, full: bool):
    """Indices ``i`` of the lower neighbours ``a = values[i]`` to test (all but the virtual)."""
    n = len(t.values) - 1
    idx = np.arange(n)
    if full or n <= 300:
        return idx
    a, b = t.values[:-1], t.values[1:]
    pow2 = (np.frexp(a)[0] == 0.5) | (np.frexp(b)[0] == 0.5)
    keep = (idx % 37 == 0) | (idx < 80) | (idx >= n - 80) | pow2
    return idx[keep]


def build_points(t: Table, full: bool):
    """Test magnitudes, their classes and the neighbours ``(a, b, a_odd)`` they lie between."""
    sel = _selection(t, full)
    a = t.values[sel]
    b = t.values[sel + 1]
    aodd = t.odd[sel]
    g = b - a
    xs, cls, lo, hi, lodd = [], [], [], [], []
    for frac, c in _OFFSETS:
        x = a + g * frac
        ok = x > 0  # exact zero is tested on its own (its sign)
        xs.append(x[ok])
        cls.append(np.full(ok.sum(), c))
        lo.append(a[ok])
        hi.append(b[ok])
        lodd.append(aodd[ok])
    # far below the smallest value: still between 0 and it
    s = t.values[1]
    for x in (2.0**-1074, 2.0**-600, s * 2.0**-30):
        xs.append(np.array([x]))
        cls.append(np.array([BELOW]))
        lo.append(np.array([0.0]))
        hi.append(np.array([s]))
        lodd.append(np.array([False]))
    # at and past the next value beyond the range: overflow in every mode
    nxt = t.values[-1]
    beyond = np.array([nxt, nxt * 1.5, nxt * 2, 2.0 ** (np.frexp(nxt)[1] + 40), 1e300])
    xs.append(beyond)
    cls.append(np.full(beyond.size, BEYOND))
    lo.append(np.full(beyond.size, nxt))
    hi.append(np.full(beyond.size, np.inf))
    lodd.append(np.zeros(beyond.size, bool))
    x = np.concatenate(xs)
    return x, np.concatenate(cls), np.concatenate(lo), np.concatenate(hi), np.concatenate(lodd)


def expected(t: Table, x, cls, a, b, aodd, negative, mode, rule):
    """The correctly rounded results (float64) and flags, from the neighbours of ``|x|``."""
    inexact = cls != EXACT
    up_half = (cls == ABOVE) | (cls == BEYOND)
    if mode is R.NEAREST_EVEN:
        tie_up = np.full(x.shape, True) if t.p == 1 and not t.p3109 else aodd
        pick_b = up_half | ((cls == TIE) & tie_up)
    elif mode is R.NEAREST_AWAY:
        pick_b = up_half | (cls == TIE)
    elif mode is R.TOWARD_ZERO:
        pick_b = np.zeros(x.shape, bool)
    elif mode is R.TOWARD_POSITIVE:
        pick_b = inexact & ~negative
    elif mode is R.TOWARD_NEGATIVE:
        pick_b = inexact & negative
    else:  # odd: of the two neighbours, the one whose last significand bit is 1
        pick_b = inexact & ~aodd
    mag = np.where(inexact & pick_b, b, a)
    overflow = (mag > t.max) | (cls == BEYOND)
    underflow = inexact & (x < t.smallest_normal)
    val = np.where(negative, -mag, mag)
    if not t.has_negzero:
        val = np.where(mag == 0, 0.0, val)
    if not t.has_zero:  # float8_e8m0fnu: no zero to round to
        fill = np.nan if mode in (R.TOWARD_ZERO, R.TOWARD_NEGATIVE) else t.values[1]
        val = np.where(mag == 0, fill, val)
    val = np.where(overflow, t.overflow_value(negative, mode, rule), val)
    inexact = inexact | overflow
    if not t.signed and t.has_zero:  # P3109: the range ends at 0, a negative value overflows
        below = negative & (mag != 0)
        toward = mode in (R.TOWARD_ZERO, R.TOWARD_POSITIVE)
        fill = 0.0 if rule == "saturate" or (rule == "ieee" and toward) else np.nan
        val = np.where(below, fill, val)
        overflow, inexact = overflow | below, inexact | below
    elif not t.signed:  # negative values have no encoding: NaN, and no flag
        val = np.where(negative, np.nan, val)
        inexact, overflow, underflow = (inexact & ~negative, overflow & ~negative,
                                        underflow & ~negative)
    return val, inexact, overflow & True, underflow


def signed_points(t: Table, full: bool):
    x, cls, a, b, aodd = build_points(t, full)
    negative = np.concatenate([np.zeros(x.size, bool), np.ones(x.size, bool)])
    two = lambda v: np.concatenate([v, v])  # noqa: E731
    mag = two(x)
    return np.where(negative, -mag, mag), mag, two(cls), two(a), two(b), two(aodd), negative


# ---------------------------------------------------------------------------- assertions
def same_values(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    return (np.isnan(got) & np.isnan(want)) | (
        (got == want) & (np.signbit(got) == np.signbit(want)))


def assert_rounded(fmt, mode, rule, inputs, got, want, flags_got=None, flags_want=None):
    """Bit-for-bit values (NaN matches NaN, zeros by sign) and equal flags, or a reproducer."""
    __tracebackhide__ = True
    ok = same_values(got, want)
    names = ("inexact", "overflow", "underflow")
    if flags_got is not None:
        for fg, fw in zip(flags_got, flags_want, strict=True):
            ok &= np.asarray(fg) == np.asarray(fw)
    bad = np.flatnonzero(~ok)
    if bad.size:
        lines = []
        for i in bad[:8]:
            x = inputs[i]
            xs = x.hex() if isinstance(x, float) else str(x)
            line = (f"  er.round_to({xs}, {fmt.name!r}, rounding={mode.value!r}, "
                    f"overflow={rule!r}): expected {float(want[i]).hex()} got "
                    f"{float(got[i]).hex()}")
            if flags_got is not None:
                fw = [n for n, f in zip(names, flags_want, strict=True) if f[i]]
                fg = [n for n, f in zip(names, flags_got, strict=True) if f[i]]
                line += f"; flags expected {fw} got {fg}"
            lines.append(line)
        pytest.fail(f"{bad.size} of {len(ok)} elements differ from the oracle:\n"
                    + "\n".join(lines), pytrace=False)


# ------------------------------------------------------------------------------- the tests
def _sweep(fmt, mode, full):
    t = table(fmt.name)
    rule = fmt.default_overflow
    x, mag, cls, a, b, aodd, negative = signed_points(t, full)
    want, ine, ovf, unf = expected(t, mag, cls, a, b, aodd, negative, mode, rule)
    r = er.round_to(x, fmt, rounding=mode)
    assert r.array.dtype is fmt
    got = r.array.numpy().astype(np.float64)
    inputs = [float(v) for v in x]
    assert_rounded(fmt, mode, rule, inputs, got, want, (r.inexact, r.overflow, r.underflow),
                   (ine, ovf, unf))
    # asarray takes a flag-free lane of its own
    assert_rounded(fmt, mode, rule, inputs, er.asarray(x, fmt, rounding=mode).numpy(), want)
    return x.size


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", SMALL, ids=_fid)
def test_float64_inputs(fmt, mode):
    """Every value, midpoint, quarter point and near-midpoint of every format, both signs.

    The vectorized path is fast enough to sweep all of bfloat16 and float16 by default."""
    _sweep(fmt, mode, full=True)


def _rules(t: Table):
    return ["ieee", "saturate"] + (["nan"] if t.has_nan else [])


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", SMALL, ids=_fid)
def test_overflow_rules(fmt, mode):
    """Around the overflow threshold, under every overflow rule the format allows."""
    t = table(fmt.name)
    x, mag, cls, a, b, aodd, negative = signed_points(t, full=False)
    near = (a >= t.values[-2]) | (b >= t.values[-2])
    x, mag, cls, a, b, aodd, negative = (v[near] for v in (x, mag, cls, a, b, aodd, negative))
    for rule in _rules(t):
        want, ine, ovf, unf = expected(t, mag, cls, a, b, aodd, negative, mode, rule)
        r = er.round_to(x, fmt, rounding=mode, overflow=rule)
        assert_rounded(fmt, mode, rule, [float(v) for v in x], r.array.numpy(), want,
                       (r.inexact, r.overflow, r.underflow), (ine, ovf, unf))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", SWEEP, ids=_fid)
def test_fraction_inputs(fmt, mode):
    """The scalar path (Python Fractions) on the same points, strided for the 16-bit formats."""
    _fraction_sweep(fmt, mode, full=False)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", P3109_REST, ids=_fid)
def test_fraction_inputs_p3109(fmt, mode):
    _fraction_sweep(fmt, mode, full=False)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", [f for f in SMALL if f.bits == 16], ids=_fid)
def test_fraction_inputs_full(fmt, mode):
    """The scalar path on every point of bfloat16 and float16 (about a million Fractions)."""
    _fraction_sweep(fmt, mode, full=True)


def _fraction_sweep(fmt, mode, full):
    t = table(fmt.name)
    rule = fmt.default_overflow
    x, mag, cls, a, b, aodd, negative = signed_points(t, full=full)
    if fmt.bits > 8 and not full:
        keep = np.arange(x.size) % 11 == 0
        x, mag, cls, a, b, aodd, negative = (v[keep] for v in (x, mag, cls, a, b, aodd,
                                                                   negative))
    want, ine, ovf, unf = expected(t, mag, cls, a, b, aodd, negative, mode, rule)
    fracs = [Fraction(float(v)) for v in x]
    r = er.round_to(fracs, fmt, rounding=mode)
    assert_rounded(fmt, mode, rule, fracs, r.array.numpy(), want,
                   (r.inexact, r.overflow, r.underflow), (ine, ovf, unf))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", SWEEP, ids=_fid)
def test_ties_broken_far_below(fmt, mode):
    """``(a + g/2) ± tiny`` as an exact two-term sum: the tiny term alone breaks the tie.

    ``tiny`` is ``g * 2**-100`` (a fast-path distillation) or ``2**-1074`` (more than 1000
    binades below for most points: the slow path), and the exact sum is no float64.
    Every tie of the 8-bit formats, a strided subset of the 16-bit ones.
    """
    _ties_sweep(fmt, mode, full=False)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", [f for f in SMALL if f.bits == 16] + P3109_REST, ids=_fid)
def test_ties_broken_far_below_full(fmt, mode):
    _ties_sweep(fmt, mode, full=True)


def _ties_sweep(fmt, mode, full):
    t = table(fmt.name)
    rule = fmt.default_overflow
    x, mag, cls, a, b, aodd, negative = signed_points(t, full=full)
    ties = cls == TIE
    x, mag, a, b, aodd, negative = (v[ties] for v in (x, mag, a, b, aodd, negative))
    for tiny_of in (lambda g: g * 2.0**-100, lambda g: np.full(g.shape, 2.0**-1074)):
        tiny = tiny_of(b - a)
        for direction, c in ((1.0, ABOVE), (-1.0, BELOW)):
            delta = np.where(negative, -tiny, tiny) * direction
            ex = sum_of_products([(ExactPart.from_float64(x),), (ExactPart.from_float64(delta),)],
                                 x.shape)
            cls2 = np.full(x.shape, c)
            want, ine, ovf, unf = expected(t, mag, cls2, a, b, aodd, negative, mode, rule)
            got, gi, go, gu = ex.round(fmt, mode, rule)
            inputs = [f"{float(u).hex()} + {float(d).hex()}" for u, d in zip(x, delta,
                                                                             strict=True)]
            assert_rounded(fmt, mode, rule, inputs, got, want, (gi, go, gu), (ine, ovf, unf))


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", SMALL, ids=_fid)
def test_zeros_and_specials(fmt, mode):
    """Zeros keep their sign where the format has -0; an exact infinity is no overflow: it stays
    inf where the format has inf, else it becomes max under 'saturate' (and where there is no
    NaN), NaN otherwise. No flag is raised."""
    t = table(fmt.name)
    x = np.array([0.0, -0.0, np.inf, -np.inf] + ([np.nan] if t.has_nan else []))
    if not t.has_zero:
        zeros = [np.nan, np.nan]
    elif t.has_negzero:
        zeros = [0.0, -0.0]
    else:
        zeros = [0.0, 0.0]
    for rule in [None, *_rules(t)]:
        if t.has_inf:
            infs = [np.inf, -np.inf]
        elif t.has_nan and rule != "saturate":
            infs = [np.nan, np.nan]
        else:
            infs = [t.max, -t.max]
        if t.p3109 and not t.has_inf:  # SatNone and SatPropagate: +-inf saturate
            infs = [np.nan, np.nan] if rule == "nan" else [t.max, -t.max]
        if not t.signed:
            infs[1] = zeros[1] = np.nan
        if not t.signed and t.has_zero:  # P3109: -0 is 0, -inf saturates to 0
            zeros[1] = 0.0
            infs[1] = 0.0 if rule == "saturate" else np.nan
        want = np.array(zeros + infs + ([np.nan] if t.has_nan else []))
        r = er.round_to(x, fmt, rounding=mode, overflow=rule)
        no = np.zeros(x.shape, bool)
        assert_rounded(fmt, mode, rule, [float(v) for v in x], r.array.numpy(), want,
                       (r.inexact, r.overflow, r.underflow), (no, no, no))
        r = er.round_to(x.tolist(), fmt, rounding=mode, overflow=rule)  # the scalar path
        assert_rounded(fmt, mode, rule, [float(v) for v in x], r.array.numpy(), want,
                       (r.inexact, r.overflow, r.underflow), (no, no, no))


@pytest.mark.parametrize("fmt", [f for f in SMALL if not f.has_nan], ids=_fid)
def test_nan_into_format_without_nan_is_undefined(fmt):
    """round_to flags it (the placeholder +0); asarray, which has no flags, raises."""
    r = er.round_to(np.array([1.0, np.nan]), fmt)
    assert r.undefined.tolist() == [False, True] and r.array.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match=r"element \(1,\) is NaN"):
        er.asarray(np.array([1.0, np.nan]), fmt)


# ------------------------------------------------------------------- ml_dtypes, from float32
def _float32_inputs(t: Table, fmt, rng):
    """Random float32 patterns, and float32 values around every value and midpoint."""
    pats = rng.integers(0, 2**32, size=40000, dtype=np.uint64).astype(np.uint32)
    rand = pats.view(np.float32)
    v = t.values
    mids = np.concatenate([v, (v[:-1] + v[1:]) / 2])
    mids = mids[mids <= np.finfo(np.float32).max].astype(np.float32)  # exact: p + 1 <= 24
    near = [mids]
    up = down = mids
    for _ in range(3):
        up = np.nextafter(up, np.float32(np.inf))
        down = np.nextafter(down, np.float32(-np.inf))
        near += [up, down]
    x = np.concatenate([rand, *near])
    x = np.concatenate([x, -x])
    if not t.has_nan:
        return x[~np.isnan(x)]
    x[np.isnan(x)] = np.float32(np.nan)  # quiet NaNs: see test_signalling_nan_is_quiet
    return x


@pytest.mark.parametrize("fmt", NATIVE, ids=_fid)
def test_nearest_even_matches_ml_dtypes_from_float32(fmt):
    """ml_dtypes' casts from float32 round once: they must agree bit for bit (NaN with NaN)."""
    t = table(fmt.name)
    x = _float32_inputs(t, fmt, np.random.default_rng(20240601 + fmt.bits))
    if fmt.name == "float8_e8m0fnu":
        # Note: ml_dtypes rounds float32 subnormals in [2**-127, 1.5 * 2**-127) up to 2**-126
        # (from float64 too); the nearest value is 2**-127, and this file's exhaustive tests
        # hold exactref to that.
        a = np.abs(x.astype(np.float64))
        x = x[~((a >= 2.0**-127) & (a < 1.5 * 2.0**-127))]
    with np.errstate(invalid="ignore", over="ignore"):  # NaN payloads; ml_dtypes' overflow
        want = x.astype(fmt.np_dtype).astype(np.float64)
    got = er.round_to(x, fmt).array.numpy().astype(np.float64)
    assert_rounded(fmt, R.NEAREST_EVEN, None, [float(v) for v in x], got, want)


@pytest.mark.parametrize("fmt", [f for f in SMALL if f.has_nan], ids=_fid)
def test_signalling_nan_is_quiet(fmt):
    """A float32 signalling NaN rounds to NaN without a warning (warnings are errors here)."""
    x = np.array([0x7F800001, 0xFFA00000, 0x3F800000], np.uint32).view(np.float32)
    got = er.round_to(x, fmt).array.numpy().astype(np.float64)
    assert np.isnan(got[:2]).all() and got[2] == 1.0


@pytest.mark.parametrize("fmt", [f for f in SMALL if f.encoding == "p3109"], ids=_fid)
def test_nearest_even_matches_gfloat_from_float32(fmt):
    """gfloat's round_ndarray (Graphcore's encoding of the report) agrees on nearest-even for
    every value in the format's range."""
    gfloat = pytest.importorskip("gfloat")
    from gfloat.formats import format_info_p3109

    t = table(fmt.name)
    fi = format_info_p3109(8, fmt.precision, gfloat.Signedness.Signed if fmt.signed else
                           gfloat.Signedness.Unsigned,
                           gfloat.Domain.Extended if fmt.has_inf else gfloat.Domain.Finite)
    x = _float32_inputs(t, fmt, np.random.default_rng(20240601)).astype(np.float64)
    x = x[np.isfinite(x) & (np.abs(x) <= t.max) & ((x >= 0) | fmt.signed)]  # in range
    want = gfloat.round_ndarray(fi, x, gfloat.RoundMode.TiesToEven, sat=False)
    got = er.round_to(x, fmt).array.numpy()
    assert_rounded(fmt, R.NEAREST_EVEN, None, [float(v) for v in x], got, want)


# ------------------------------------------------------------------------ other sources
_SOURCES = ["float16", "bfloat16", "float32", "int8", "int16", "int32", "uint16", "uint32",
            "int4", "uint8", "int2", "uint2", "bool"]


def _source_values(src):
    if src.kind == "float":
        if src.bits == 16:
            pats = np.arange(2**16, dtype=np.uint16)
        else:
            rng = np.random.default_rng(5)
            pats = rng.integers(0, 2**32, 60000, dtype=np.uint64).astype(np.uint32)
        with np.errstate(invalid="ignore"):
            x = pats.view(src.np_dtype)
            x = x[~np.isnan(x.astype(np.float64))]
        return x
    lo, hi = src.int_min, src.int_max
    if src.kind == "bool":
        return np.array([False, True])
    if hi - lo < 2**17:
        return np.arange(lo, hi + 1).astype(src.np_dtype)
    rng = np.random.default_rng(6)
    return np.concatenate([rng.integers(lo, hi, 50000, endpoint=True),
                           [lo, hi, 0, 2**24 + 1, 2**11 + 1]]).astype(src.np_dtype)


@pytest.mark.parametrize("mode", MODES, ids=_mid)
@pytest.mark.parametrize("fmt", [f for f in EIGHT_OR_LESS if f in SWEEP], ids=_fid)
@pytest.mark.parametrize("src", _SOURCES)
def test_other_sources_round_like_float64(src, fmt, mode):
    """Narrow float and integer sources round exactly as their (exact) float64 values do,
    which the sweeps above hold to the oracle."""
    s = FORMATS[src]
    x = _source_values(s)
    if not fmt.has_nan:
        x = x[~np.isnan(x.astype(np.float64))]
    got = er.round_to(x, fmt, rounding=mode)
    want = er.round_to(x.astype(np.float64), fmt, rounding=mode)
    inputs = [float(v) for v in x.astype(np.float64)]
    assert_rounded(fmt, mode, None, inputs, got.array.numpy(), want.array.numpy(),
                   (got.inexact, got.overflow, got.underflow),
                   (want.inexact, want.overflow, want.underflow))
