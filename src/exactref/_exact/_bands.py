"""The values an implementation accurate to within ``k`` ulps may return: the ends of the band
``[f - k ulp(f), f + k ulp(f)]`` in a float format, from the exact value ``f`` as the function
kernel holds it (private).

A library documents its accuracy as "at most ``k`` ulps": for every input, its result ``v`` (a
number of the compute format) satisfies ``|v - f| <= k * ulp(f)``. The lowest such ``v`` is
``f - k ulp(f)`` rounded up in the format, the highest ``f + k ulp(f)`` rounded down; every
number of the format between them is a possible result, and nothing else is.

The ulp
    ``ulp(f) = 2**(max(e, emin) - p + 1)`` for a format of precision ``p`` and smallest normal
    exponent ``emin``, where ``2**e <= |f| < 2**(e+1)``; where ``|f|`` rounds to nearest up to
    ``2**(e+1)`` (the last half ulp below a power of two) the ulp of ``2**(e+1)`` is taken, so
    a library that measures against the correctly rounded result (glibc's ``libm-test``
    does) is never held to a smaller ulp than it measured with.

Exactness
    The kernel never holds ``f`` itself (it is irrational): it holds a value that rounds like
    ``f`` at two bits beyond the format, rounded to odd at ``P`` bits. The ends need more than
    that: ``f - k ulp`` must round like itself. With ``k`` a multiple of ``2**-8`` (a bound is
    rounded up to one, outward) and ``f`` rounded to odd at ``p + 9`` bits (relative to the
    format's grid, subnormals included), ``k ulp`` is an even number of the cells the odd value
    marks, so ``value - k ulp`` is an odd multiple of the cell that lies in the same open cell
    as ``f - k ulp``, and the format's grid (at least two cells apart) has no point between
    them: rounding either up or down gives the same number. :func:`band_ends` first rounds the
    kernel's value to odd at that grid (round-to-odd twice is round-to-odd once at the coarser
    precision), then shifts it by ``2 K`` cells exactly, in integers.

Edges
    * Exact zeros, NaN and infinities are exact: both ends are the value itself (C's Annex F
      fixes ``sin(±0) = ±0``, ``exp(-inf) = +0``; every library keeps them).
    * An end that rounds to nearest beyond the largest finite number is an overflow: ``±inf``
      where the format has infinities (an implementation may overflow there), else the
      format's overflow value under the call's rule.
    * An end never crosses zero: a positive ``f`` has a lowest value ``+0`` at worst (an
      implementation does not return the wrong sign, however small ``f`` is).

The float32 lane
    :func:`lane_candidates` computes the reference (the value rounded once in the call's mode)
    and both ends in one pass per element, in float64 and float32 arithmetic only, with the
    same results as ``ExactArray.round`` and :func:`band_ends`: every step is exact (the value
    ``c1 2**E`` is a float64; ``T`` below ``2**34`` and ``T -+ 2K`` below ``2**53`` are exact
    integers; scaling by powers of two is exact in float64's normal range; the float64 to
    float32 conversion rounds to nearest even and one ``nextafter`` makes it directed), so
    there is no error to bound: the argument is one of equality (see its docstring), and the
    tests compare it with the general functions element by element on every kind of value.
    numba compiles it where installed; the numpy twin gives the same bits.
"""

from __future__ import annotations

import numpy as np

from . import _jit
from ._engine import ExactArray
from ._rounding import Rounding

__all__ = ["ulp", "ULP_NONFINITE", "band_ends", "normwise_ends", "GRANULE", "EXTRA_BITS", "OPEN_ULPS", "ulps_granules",
           "ulp_of"]

#: Bounds are counted in steps of 2**-8 ulp (a bound between two steps is rounded up).
GRANULE = 2.0 ** -8
#: Bits beyond the format's precision the exact value must be rounded to odd at.
EXTRA_BITS = 9
#: A bound of this many ulps or more admits any value of the exact value's sign.
OPEN_ULPS = 2.0 ** 40


def ulps_granules(ulps) -> np.ndarray:
    """A bound in ulps as a whole number of granules (rounded up: the band only widens).

    >>> ulps_granules([0.5, 1, 3.5, 1e-3]).tolist()
    [128, 256, 896, 1]
    """
    u = np.asarray(ulps, dtype=np.float64)
    if np.any(~(u >= 0)):
        raise ValueError(f"an accuracy bound of {u.min() if u.size else u} ulps; expected a "
                         f"number of ulps >= 0")
    return np.ceil(np.minimum(u, OPEN_ULPS) / GRANULE).astype(np.int64)


def _bit_length(a: np.ndarray) -> np.ndarray:
    """Bit lengths of non-negative int64 values (0 for 0), exactly."""
    a = np.asarray(a, dtype=np.int64)
    hi = (a >> np.int64(32)).astype(np.float64)
    lo = (a & np.int64(0xFFFFFFFF)).astype(np.float64)
    bh = np.frexp(hi)[1]
    bl = np.frexp(lo)[1]
    return np.where(hi > 0, bh + 32, bl).astype(np.int64)


def _integers(ex: ExactArray, idx):
    """The kernel's values at ``idx`` as signed int64 ``mant`` with ``value = (mant + r *
    tiny) * 2**E``: the function kernel holds integers at a scale (``c1 + c2 < 2**63``)."""
    c1, c2 = ex.c1[idx], ex.c2[idx]
    if np.any(c1 != np.floor(c1)) or np.any(c2 != np.floor(c2)) or np.any(
            np.abs(c1) >= 2.0 ** 63):
        raise AssertionError("band_ends takes the function kernel's values (integers at a "
                             "scale); this ExactArray holds other values")
    mant = c1.astype(np.int64) + c2.astype(np.int64)
    return mant, ex.r[idx].astype(np.int64), ex.E[idx].astype(np.int64)


def _odd_at(mag, rest, E, g):
    """``|value| = (mag + rest * tiny) * 2**E`` rounded to odd at the grid ``2**g``: integers
    ``T`` with ``|value|`` rounding like ``T * 2**g``."""
    d = g - E
    if np.any(d < 0):
        raise AssertionError("the kernel's value has fewer bits than the band needs; ask it "
                             "for EXTRA_BITS more than the format")
    down = rest < 0  # mag - tiny lies in (mag - 1, mag): truncate mag - 1
    a = mag - down.astype(np.int64)
    inexact = rest != 0
    big = d >= 63
    ds = np.where(big, 0, d)
    T = np.where(big, 0, a >> ds)
    cut = np.where(big, a != 0, (a & ((np.int64(1) << ds) - 1)) != 0)
    return T | (inexact | cut).astype(np.int64)


def _from_integers(n: np.ndarray, g: np.ndarray) -> ExactArray:
    """ExactArray of the exact values ``n * 2**g`` (int64 ``n``, any sign, zeros included)."""
    a = np.abs(n)
    bl = _bit_length(a)
    shift = np.maximum(bl - 53, 0)
    low = a & ((np.int64(1) << shift) - 1)
    sign = np.where(n < 0, -1.0, 1.0)
    c1 = sign * (a - low).astype(np.float64)
    c2 = sign * low.astype(np.float64)
    zero = n == 0
    return ExactArray.regular((n.size,), np.where(zero, 0.0, c1), c2, None, g, zero=zero)


def _round(ex: ExactArray, fmt, mode: Rounding, rule: str):
    values, _, overflow, _ = ex.round(fmt, mode, rule)
    return np.asarray(values, dtype=np.float64), np.asarray(overflow, dtype=bool)


def band_ends(ex: ExactArray, fmt, ulps, rule: str = "ieee"):
    """``(lowest, highest)``: float64 arrays of the numbers of float format ``fmt`` within
    ``ulps`` ulps of the exact values ``ex`` (as :func:`~exactref._exact.function_values`
    gives them, at ``fmt.precision + EXTRA_BITS`` bits or more), per element. ``ulps``: a
    number or an array of the flat size; :data:`OPEN_ULPS` or more admits any value of the
    exact value's sign (infinities included). ``rule``: the overflow rule for formats without
    infinities.

    >>> from exactref._exact import function_values
    >>> from exactref._formats import FORMATS
    >>> f32 = FORMATS["float32"]
    >>> ex = function_values("exp", np.array([1.0]), bits=f32.precision + EXTRA_BITS)
    >>> lo, hi = band_ends(ex, f32, 1.0)
    >>> float(lo[0]), float(hi[0])
    (2.7182817459106445, 2.7182819843292236)
    """
    n = ex.size
    K = np.broadcast_to(ulps_granules(ulps), (n,)).astype(np.int64)
    p, emin = fmt.precision, fmt.emin
    lo = np.zeros(n)
    hi = np.zeros(n)
    regular = ~ex.zero & (ex.special == 0)
    if ex.hard:
        raise AssertionError("band_ends takes the function kernel's values, which have no "
                             "hard elements")
    fixed = np.flatnonzero(~regular)
    if fixed.size:  # zeros, NaN, infinities: exact in every library
        sub = ExactArray.regular((fixed.size,), ex.c1[fixed], ex.c2[fixed], ex.r[fixed],
                                 ex.E[fixed], zero=ex.zero[fixed], zsign=ex.zsign[fixed],
                                 special=ex.special[fixed])
        v, _ = _round(sub, fmt, Rounding.NEAREST_EVEN, rule)
        lo[fixed] = hi[fixed] = v
    idx = np.flatnonzero(regular)
    if not idx.size:
        return lo, hi
    mant, r, E = _integers(ex, idx)
    mag = np.abs(mant)
    rest = r * np.sign(mant)  # the tiny rest's sign relative to the magnitude
    e = E + _bit_length(mag) - 1  # 2**e <= |f| < 2**(e+1)
    q = np.maximum(e, emin) - p + 1  # log2 ulp(f)
    g = q - EXTRA_BITS  # the grid of the odd value: 2**9 cells per ulp
    T = _odd_at(mag, rest, E, g)
    # |f| within half an ulp below 2**(e+1) rounds up to it: the ulp there is twice as large
    carry = (e >= emin) & (T >= (np.int64(1) << np.int64(p + EXTRA_BITS)) - (
        np.int64(1) << np.int64(EXTRA_BITS - 1)))
    width = 2 * K[idx] * np.where(carry, 2, 1)  # k ulp in cells: K * 2**(q - 8) / 2**g
    V = np.where(mant < 0, -T, T)
    down = _from_integers(V - width, g)
    up = _from_integers(V + width, g)
    lo_v, _ = _round(down, fmt, Rounding.TOWARD_POSITIVE, rule)
    hi_v, _ = _round(up, fmt, Rounding.TOWARD_NEGATIVE, rule)
    # an end that rounds to nearest past the largest finite number: an implementation may
    # overflow there (to ±inf, or the format's overflow value under the rule)
    lo_n, lo_ov = _round(down, fmt, Rounding.NEAREST_EVEN, rule)
    hi_n, hi_ov = _round(up, fmt, Rounding.NEAREST_EVEN, rule)
    lo_v = np.where(lo_ov, lo_n, lo_v)
    hi_v = np.where(hi_ov, hi_n, hi_v)
    # never the wrong sign
    positive = mant > 0
    lo_v = np.where(positive & ~(lo_v > 0), 0.0, lo_v)
    hi_v = np.where(~positive & ~(hi_v < 0), -0.0, hi_v)
    lo[idx], hi[idx] = lo_v, hi_v
    unbounded = idx[K[idx] >= OPEN_ULPS / GRANULE]
    if unbounded.size:
        pos = (ex.c1[unbounded] > 0)
        lo[unbounded] = np.where(pos, 0.0, -np.inf)
        hi[unbounded] = np.where(pos, np.inf, -0.0)
    return lo, hi


#: What :func:`ulp` gives at a non-finite value (NaN, an infinity), by ``nonfinite=``.
ULP_NONFINITE = ("max", "nan", "min")


def ulp(values, fmt, *, nonfinite: str = "max"):
    """The one ulp of exactref: per element, the spacing of ``fmt`` in the binade of
    ``|values|`` (float64), ``2**(max(floor(log2|v|), emin) - precision + 1)``: the gap above
    ``|v|``, at least the spacing of the smallest binade (also for zeros and values below the
    smallest normal); 1 for integer formats. A complex format's ulp is its component's.

    At a non-finite value (NaN, ±inf) it is, by ``nonfinite``: ``"max"`` (the default) the ulp
    of the largest finite value (the last gap: a reference or an actual at an infinity is that
    far apart per ulp, as :class:`~exactref.Result`'s ulp distances read it); ``"nan"`` NaN (no
    ulp: :func:`ulp_of`, for exact values); ``"min"`` the smallest spacing.

    >>> from exactref._formats import FORMATS
    >>> bf16 = FORMATS["bfloat16"]
    >>> ulp(np.array([1.0, 3.0, 0.0, np.inf]), bf16).tolist()
    [0.0078125, 0.015625, 9.183549615799121e-41, 1.329227995784916e+36]
    >>> ulp(np.array([np.inf, np.nan]), bf16, nonfinite="nan").tolist()
    [nan, nan]
    """
    comp = fmt.component
    if comp.is_integer:
        return np.ones_like(values)
    if nonfinite not in ULP_NONFINITE:
        raise ValueError(f"nonfinite={nonfinite!r}: expected one of {', '.join(ULP_NONFINITE)}")
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        finite = np.isfinite(values)
        a = np.abs(np.where(finite, values, comp.max_finite if nonfinite == "max" else 0.0))
        e = np.floor(np.log2(np.maximum(a, comp.smallest_normal)))
        u = np.exp2(np.maximum(e, comp.emin) - comp.precision + 1)
    return np.where(finite, u, np.nan) if nonfinite == "nan" else u


def ulp_of(ex: ExactArray, fmt) -> np.ndarray:
    """Per element, the ulp of ``fmt`` at the exact value (as :func:`band_ends` defines it,
    without the step up below a power of two): :func:`ulp` at the value rounded toward zero
    into ``fmt``; float64, the smallest subnormal's spacing for zeros and values below it, NaN
    for NaN and infinities."""
    z, _, _, _ = ex.round(fmt, Rounding.TOWARD_ZERO, "saturate")
    # a value that rounds to nothing (NaN toward zero: a format without zero) has the
    # smallest spacing
    u = ulp(np.asarray(z, dtype=np.float64), fmt, nonfinite="min")
    return np.where(ex.special.reshape(-1) != 0, np.nan, u)


def _fraction_bounds(ex: ExactArray, i: int, P: int):
    """Element ``i`` of the kernel's values (rounded to odd at ``P`` bits) as ``(value, cell)``:
    a Fraction within ``cell`` of the exact value (the last of the ``P`` bits: an exact value
    counts as inexact, outward); ``(0, 0)`` for an exact zero; None for NaN or an infinity."""
    from fractions import Fraction

    if ex.special[i] != 0:
        return None
    if ex.zero[i]:
        return Fraction(0), Fraction(0)
    mant = int(ex.c1[i]) + int(ex.c2[i])
    top = int(ex.E[i]) + abs(mant).bit_length() - 1
    if not -_FAR_BOUND <= top <= _FAR_BOUND:  # beyond 2**+-1100: as far as anything beyond
        # (an overflow in every format; below half of every subnormal): a proxy of its sign,
        # so that a value of MPFR's exponent range (2**(10**9)) costs no huge Fraction
        return Fraction(-1 if mant < 0 else 1) * Fraction(2) ** (
            _FAR_BOUND if top > 0 else -_FAR_BOUND - 64), Fraction(0)
    scale = Fraction(2) ** int(ex.E[i])
    value = Fraction(mant) * scale + (Fraction(int(ex.r[i])) * scale / 2)  # inside its cell
    cell = Fraction(2) ** (abs(mant).bit_length() - P) * scale
    return value, cell


#: Values beyond 2**+-_FAR_BOUND round alike into every format of at most 53 bits.
_FAR_BOUND = 1100


def _log2_sqrt_upper(t) -> int:
    """``floor(log2(u))`` of an upper bound ``u`` of ``sqrt(t)`` (a positive Fraction), at most
    one binade above ``floor(log2(sqrt(t)))`` and never below it."""
    import math

    half = 64 - (t.numerator.bit_length() - t.denominator.bit_length()) // 2
    shift = 2 * half
    scaled = t * 2**shift if shift >= 0 else t / 2**-shift
    root = math.isqrt(math.floor(scaled)) + 1  # > sqrt(t) 2**half
    return root.bit_length() - 1 - half


def normwise_ends(parts, fmt, ulps, P: int, rule: str = "ieee"):
    """Per part, ``(lowest, highest)`` float64 arrays: the numbers of float format ``fmt`` that
    an implementation of a complex function accurate to ``ulps`` ulps of the modulus may
    return: each part within ``k ulp(|f|)`` of the exact part, either sign (a part that is
    exactly zero too: the error of a normwise bound is not the part's). ``parts``: the real and
    imaginary ExactArrays of the complex function kernel, rounded to odd at ``P`` bits;
    ``ulps``: per element.

    Exact, element by element with Fractions: the ends are ``part -/+ (k ulp(|f|) + cell)``
    rounded up/down into ``fmt``, where ``cell`` is the last of the kernel's ``P`` bits
    (outward by at most that: ``2**-(P-1)`` of the part). ``ulp(|f|)`` is the ulp of an upper
    bound of the modulus, so never smaller than the true one. A part that is NaN or infinite
    (and a zero beside it), or an ``f`` that is exactly zero (``pow(0, 2.5) = 0 + 0i``, signs
    included), is exact; the finite part beside an infinite one is within ``k`` ulps of
    itself (``log(-inf + iy) = inf + i pi``: the angle as any other value); a
    value beyond ``2**+-1100`` is held as that (its huge exponent costs no Fraction); an end
    that rounds to nearest past the largest finite number is the overflow.
    """
    import math
    from fractions import Fraction

    from ._scalar import round_scalar

    n = parts[0].size
    k = np.broadcast_to(np.asarray(ulps, dtype=np.float64), (n,))
    out = [(np.empty(n), np.empty(n)) for _ in parts]
    p, emin = fmt.precision, fmt.emin
    for i in range(n):
        vals = [_fraction_bounds(ex, i, P) for ex in parts]
        special = any(v is None for v in vals)
        exact = [v is None or (special and v == (0, 0)) for v in vals]
        if all(v == (0, 0) for v in vals):  # f exactly 0 (pow(0, 2.5) = 0 + 0i): exact
            exact = [True] * len(vals)
        for (lo, hi), ex, fixed in zip(out, parts, exact, strict=True):
            if fixed:  # NaN, an infinity, a zero beside one, or a zero f: exact, signs kept
                sub = ExactArray.regular((1,), ex.c1[i:i + 1], ex.c2[i:i + 1], ex.r[i:i + 1],
                                         ex.E[i:i + 1], zero=ex.zero[i:i + 1],
                                         zsign=ex.zsign[i:i + 1],
                                         special=ex.special[i:i + 1])
                lo[i] = hi[i] = float(sub.round(fmt, Rounding.NEAREST_EVEN, rule)[0][0])
        if all(exact):
            continue
        # an upper bound of |f| (beside an infinite part, of the finite part alone: a modulus
        # that is infinite bounds nothing), and its binade's ulp in fmt
        mod2 = sum((abs(v) + c) ** 2 for v, c in (v for v in vals if v is not None))
        e = _log2_sqrt_upper(mod2) if mod2 else emin
        ulp = Fraction(2) ** (max(e, emin) - p + 1)
        if not math.isfinite(k[i]) or k[i] >= OPEN_ULPS:
            w = None
        else:
            w = Fraction(math.ceil(k[i] / GRANULE)) * Fraction(GRANULE) * ulp
        for (lo, hi), vc, fixed in zip(out, vals, exact, strict=True):
            if fixed:
                continue
            v, c = vc
            if w is None:
                lo[i], hi[i] = -math.inf, math.inf
                continue
            ends = []
            for end, toward in ((v - c - w, Rounding.TOWARD_POSITIVE),
                                (v + c + w, Rounding.TOWARD_NEGATIVE)):
                got, _, _, _ = round_scalar(end, False, fmt, toward, rule)
                near, _, over, _ = round_scalar(end, False, fmt, Rounding.NEAREST_EVEN, rule)
                ends.append(near if over else got)
            lo[i], hi[i] = ends
    return out


# ============================================================ float32: the lane, compiled
#: The formats the lane serves: float32 (IEEE binary32, rounded by the float64 -> float32
#: conversion of the hardware, numba's and numpy's alike).
_LANE_MODES = {Rounding.NEAREST_EVEN: 0, Rounding.NEAREST_AWAY: 1, Rounding.TOWARD_ZERO: 2,
               Rounding.TOWARD_POSITIVE: 3, Rounding.TOWARD_NEGATIVE: 4}
_OPEN_K = int(OPEN_ULPS / GRANULE)  # 2**48 granules: unbounded
_F32_MAX = float(np.finfo(np.float32).max)
_TWO128 = 2.0 ** 128


def _lane_serves(fmt, mode, rule) -> bool:
    return (getattr(fmt, "np_dtype", None) == np.dtype(np.float32) and fmt.precision == 24
            and fmt.emin == -126 and mode in _LANE_MODES and rule == "ieee")


def lane_candidates(ex: ExactArray, fmt, mode: Rounding, rule: str, ulps=None, out=None):
    """The function lane's candidates, computed in one pass per element (compiled where numba
    runs, :func:`_lane_numpy` otherwise, bit for bit the same): ``(reference, lowest,
    highest)``, float32 arrays (flat) of the exact values ``ex`` (a function kernel's, at
    ``fmt.precision + EXTRA_BITS`` bits or more where ``ulps`` is given) rounded once into
    ``fmt`` in ``mode`` (as ``ex.round``), and the ends of the band of ``ulps`` ulps (as
    :func:`band_ends`; None, None without ``ulps``). ``ulps``: a number, an array of the flat
    size, or a callable taking a zero-argument function that gives :func:`ulp_of` at the
    values (for the bounds with an absolute part) and returning the bound. None where the lane
    does not serve the call (``fmt`` not float32, ``mode`` odd, ``rule`` not ``"ieee"``, hard
    elements). ``out``: float32 arrays of the flat size to write them into (``(reference,)``,
    or with the band ``(reference, lowest, highest)``).

    Why it is the same (per element, ``v = (c1 + r tiny) 2**E``, ``c1`` of 53 bits, the rest
    far below every gap): ``y = c1 2**E`` is a float64 (``|y|`` within ``2**+-1000``); beyond
    ``2**999`` (``2**-1000``) it is replaced by the value of its mantissa at ``2**999`` (by
    ``2**-1000``): every end and rounding into float32 reads only the mantissa and the sign
    there (the band's cells are far beyond the largest float32 or ``T = 1``). The
    reference: the float32 conversion (round to nearest even) of ``y``, moved to a neighbour
    as the mode and the rest say (a rest moves a float32 ``y`` in the directed modes and breaks
    a tie at a midpoint; a midpoint beyond the largest finite number is against ``2**128``).
    The band: ``T`` is the odd rounding of ``|v|`` at the grid ``2**g`` (``floor``, one less
    for a negative rest on the grid, the last bit set when inexact), ``T -+ 2 K`` cells an
    exact float64 (below ``2**53``), rounded up and down by the conversion and one
    ``nextafter``, the overflow to nearest and the sign as :func:`band_ends` has them.
    Elements outside that (a mantissa split in ``c1 + c2``, fewer than 32 bits below the
    leading one, a zero whose sign follows the mode) take :func:`band_ends` and ``ex.round``.
    """
    if not _lane_serves(fmt, mode, rule) or ex.hard:
        return None
    n = ex.size
    code = _LANE_MODES[mode]
    band = ulps is not None
    if out is not None:
        ref, lo, hi = (*out, None, None)[:3] if not band else out
    else:
        ref, lo, hi = np.empty(n, np.float32), None, None
    if lo is None:
        lo = np.empty(n if band else 0, np.float32)
        hi = np.empty(n if band else 0, np.float32)
    slow = np.zeros(n, bool)
    c1, c2, r, E = (np.ascontiguousarray(a).reshape(-1) for a in (ex.c1, ex.c2, ex.r, ex.E))
    zero, zsign, special = (np.ascontiguousarray(a).reshape(-1)
                            for a in (ex.zero, ex.zsign, ex.special))
    run = _lane_runner()
    none = np.zeros(0, np.float64)
    K = np.zeros(1, np.int64)
    if callable(ulps):  # the bound needs the ulp at the values: a first pass gives it
        u = np.empty(n, np.float64)
        run(c1, c2, r, E, zero, zsign, special, K, code, False, True, ref, lo, hi, u, slow)
        got = {}

        def ulp_values():
            if "u" not in got:
                idx = np.flatnonzero(slow)
                if idx.size:
                    u[idx] = ulp_of(_take(ex, idx), fmt)
                got["u"] = u
            return got["u"]

        ulps = ulps(ulp_values)
        K = _granules(ulps, n)
        run(c1, c2, r, E, zero, zsign, special, K, code, True, False, ref, lo, hi, none, slow,
            True)
    else:
        if band:
            K = _granules(ulps, n)
        run(c1, c2, r, E, zero, zsign, special, K, code, band, False, ref, lo, hi, none, slow)
    idx = np.flatnonzero(slow)
    if idx.size:  # the few the lane does not hold: the general functions, bit for bit
        sub = _take(ex, idx)
        ref[idx] = np.asarray(sub.round(fmt, mode, rule)[0], dtype=np.float64)
        if band:
            k = np.asarray(ulps, dtype=np.float64)
            s_lo, s_hi = band_ends(sub, fmt, k if k.ndim == 0 else
                                   np.broadcast_to(k, (n,))[idx], rule)
            lo[idx], hi[idx] = s_lo, s_hi
    return ref, (lo if band else None), (hi if band else None)


#: Bit casts for the compiled lane (numba intrinsics, made by :func:`_install_casts` before the
#: lane compiles; the numpy twin does not use them).
_f32bits = _f32from = _f64from = None


def _install_casts() -> None:
    """Define the compiled lane's bit casts (float32 -> int64 of its bits, sign-extended; int64
    -> float32 of its low 32 bits; int64 -> float64): LLVM bitcasts, free."""
    global _f32bits, _f32from, _f64from
    if _f64from is not None:
        return
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def f32bits(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.sext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))
        return types.int64(types.float32), codegen

    @intrinsic
    def f32from(typingctx, b):
        def codegen(context, builder, signature, args):
            return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())
        return types.float32(types.int64), codegen

    @intrinsic
    def f64from(typingctx, b):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.DoubleType())
        return types.float64(types.int64), codegen

    _f32bits, _f32from, _f64from = f32bits, f32from, f64from


def _lane_runner():
    """The lane's pass: compiled where numba runs (:func:`_lane_compiled`), else the numpy
    twin."""
    if _jit.enabled():
        _install_casts()
        if _ref_loop.compiled() is not None and _band_loop.compiled() is not None:
            return _lane_compiled
    return _lane_numpy


def _lane_compiled(c1, c2, r, E, zero, zsign, special, K, mode, band, want_ulp, ref, lo, hi,
                   ulp_out, slow, skip_ref=False):
    """:func:`_lane_numpy`'s compiled twin: two lean loops over the common elements (the
    reference with the ulp, then the band), the exact zeros, NaN and infinities by numpy on
    their few indices, the rest (values held beyond ``2**+-1000``, split mantissas) marked
    ``slow`` for the general functions. ``skip_ref``: the reference (and ``slow``) are an
    earlier pass's; the band only."""
    fixed_kind = (special != 0.0) | zero
    if skip_ref:
        rare = slow | fixed_kind
    else:
        _ref_loop.compiled()(c1, c2, r, E, zero, special, mode, want_ulp, ref, ulp_out, slow)
        rare = slow
    if band:
        _band_loop.compiled()(c1, r, E, K, lo, hi, rare)
    fixed = np.flatnonzero(fixed_kind & ((special != 0.0) | (zsign != 0)))
    if fixed.size:
        v = np.where(special[fixed] != 0.0, special[fixed],
                     np.where(zsign[fixed] < 0, -0.0, 0.0)).astype(np.float32)
        if not skip_ref:
            ref[fixed] = v
        if band:
            lo[fixed] = v
            hi[fixed] = v
        if want_ulp:
            ulp_out[fixed] = np.where(special[fixed] != 0.0, np.nan, 2.0 ** -149)
        slow[fixed] = False


@_jit.jit
def _ref_loop(c1, c2, r, E, zero, special, mode, want_ulp, ref, ulp_out,
              slow):  # pragma: no cover - compiled (numba)
    """The reference in ``mode`` (and the ulp of the value rounded toward zero) of the common
    elements; the others marked ``slow``."""
    c1b = c1.view(np.int64)
    for i in range(c1.size):
        cb = c1b[i]
        ex = ((cb >> 52) & 0x7FF) - 1022  # |c1| = m 2**ex, m in [1/2, 1)
        Ei = E[i]
        e = Ei + ex - 1
        if (special[i] != 0.0) | zero[i] | (c2[i] != 0.0) | (ex < 33) | (e >= 999) | (
                e < -1000) | (Ei < -960):
            slow[i] = True
            continue
        ys = abs(c1[i]) * _f64from((Ei + 1023) << 52)
        neg = cb < 0
        rest = np.int64(r[i])
        yv = -ys if neg else ys
        n32 = np.float32(yv)
        nv = np.float64(n32)
        nb = _f32bits(n32)
        u = nb + 1 - 2 * (nb < 0)
        u = 1 if nb == -2147483648 else u
        u = nb if nb == 0x7F800000 else u
        dd = nb - 1 + 2 * (nb < 0)
        dd = -2147483647 if nb == 0 else dd
        dd = nb if nb == -8388608 else dd
        up1 = _f32from(u)
        dn1 = _f32from(dd)
        exact = nv == yv
        above = nv > yv
        d32 = (dn1 if rest < 0 else n32) if exact else (dn1 if above else n32)
        u32 = (up1 if rest > 0 else n32) if exact else (n32 if above else up1)
        toward0 = d32 if yv > 0 else u32
        if mode == 3:
            out = u32 if (rest != 0 or not exact) else n32
        elif mode == 4:
            out = d32 if (rest != 0 or not exact) else n32
        elif mode == 2:
            out = toward0 if (rest != 0 or not exact) else n32
        else:
            dv = np.float64(d32)
            uv = np.float64(u32)
            dv = -_TWO128 if dv == -np.inf else dv
            uv = _TWO128 if uv == np.inf else uv
            tie = (not exact) and (yv - dv == uv - yv)
            out = (u32 if rest > 0 else (d32 if rest < 0 else n32)) if tie else n32
            if mode == 1 and tie and rest == 0:
                out = u32 if yv > 0 else d32
            out = n32 if exact else out
        ref[i] = out
        if want_ulp:
            tz = n32 if exact and (rest == 0 or (rest < 0) == neg) else toward0
            bz = (_f32bits(tz) >> 23) & 0xFF
            ulp_out[i] = _f64from((max(bz - 127, -126) - 23 + 1023) << 52)


@_jit.jit
def _band_loop(c1, r, E, K, lo, hi, slow):  # pragma: no cover - compiled (numba)
    """The band's ends of the common elements (those :func:`_ref_loop` did not mark)."""
    c1b = c1.view(np.int64)
    inf32 = np.float32(np.inf)
    scalar = K.size == 1
    for i in range(c1.size):
        if slow[i]:
            continue
        cb = c1b[i]
        ex = ((cb >> 52) & 0x7FF) - 1022
        Ei = E[i]
        e = Ei + ex - 1
        ys = abs(c1[i]) * _f64from((Ei + 1023) << 52)
        neg = cb < 0
        rest = np.int64(r[i])
        k = K[0] if scalar else K[i]
        g = max(e, -126) - 32
        sc = ys * _f64from((1023 - g) << 52)
        T = np.floor(sc)
        rel = -rest if neg else rest
        T = T - 1.0 if (rel < 0 and sc == T) else T
        odd = rel != 0 or sc != T
        T = np.float64(np.int64(T) | np.int64(odd))
        width = 2.0 * np.float64(k)
        width = 2.0 * width if (e >= -126 and T >= 2.0 ** 33 - 2.0 ** 8) else width
        V = -T if neg else T
        sg = _f64from((g + 1023) << 52)
        dn = (V - width) * sg
        up = (V + width) * sg
        ln = np.float32(dn)
        hn = np.float32(up)
        lb = _f32bits(ln)
        u = lb + 1 - 2 * (lb < 0)
        u = 1 if lb == -2147483648 else u
        hb = _f32bits(hn)
        dd = hb - 1 + 2 * (hb < 0)
        dd = -2147483647 if hb == 0 else dd
        lv = _f32from(u) if np.float64(ln) < dn else ln
        lv = ln if abs(ln) == inf32 else lv
        hv = _f32from(dd) if np.float64(hn) > up else hn
        hv = hn if abs(hn) == inf32 else hv
        lv = np.float32(0.0) if (not neg and not lv > 0) else lv
        hv = np.float32(-0.0) if (neg and not hv < 0) else hv
        unb = k >= _OPEN_K
        lo[i] = (-inf32 if neg else np.float32(0.0)) if unb else lv
        hi[i] = (np.float32(-0.0) if neg else inf32) if unb else hv


def _granules(ulps, n: int) -> np.ndarray:
    """A bound in granules: one (a bound for every element) or one per element."""
    k = np.asarray(ulps_granules(ulps), dtype=np.int64)
    return k.reshape(1) if k.size == 1 else np.ascontiguousarray(np.broadcast_to(k, (n,)))


def _take(ex: ExactArray, idx) -> ExactArray:
    return ExactArray.regular((idx.size,), ex.c1.reshape(-1)[idx], ex.c2.reshape(-1)[idx],
                              ex.r.reshape(-1)[idx], ex.E.reshape(-1)[idx],
                              zero=ex.zero.reshape(-1)[idx], zsign=ex.zsign.reshape(-1)[idx],
                              special=ex.special.reshape(-1)[idx])


def _lane_numpy(c1, c2, r, E, zero, zsign, special, K, mode, band, want_ulp, ref, lo, hi,
                ulp_out, slow, skip_ref=False):
    """The lane's pass, array by array (:func:`_lane_compiled` is its compiled twin): per
    element the reference, the band's ends and the ulp at the value rounded toward zero, or
    ``slow`` where the general functions take the element (``skip_ref``: the reference is an
    earlier pass's, the same values: computed again)."""
    inf32 = np.float32(np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        spec = special != 0.0
        zsl = zero & ~spec
        a1 = np.abs(c1)
        m, ex = np.frexp(a1)
        ex = ex.astype(np.int64)
        reg = ~spec & ~zero
        bad = reg & ((c2 != 0.0) | (a1 == 0.0) | (ex < 33))
        slow |= bad | (zsl & (zsign == 0))
        fast = reg & ~bad
        e = E + ex - 1
        tiny = e < -1000
        e = np.clip(e, -1000, 999)
        m = np.where(tiny, 0.5, m)
        ys = np.ldexp(np.where(fast, m, 0.5), np.where(fast, e + 1, 0))
        neg = c1 < 0.0
        rest = r.astype(np.int64)
        yv = np.where(neg, -ys, ys)
        n32 = yv.astype(np.float32)
        nv = n32.astype(np.float64)
        exact = nv == yv
        up1 = np.nextafter(n32, inf32)
        dn1 = np.nextafter(n32, -inf32)
        # representable: the rest moves it; else the two neighbours around y
        d32 = np.where(exact, np.where(rest < 0, dn1, n32), np.where(nv > yv, dn1, n32))
        u32 = np.where(exact, np.where(rest > 0, up1, n32), np.where(nv > yv, n32, up1))
        toward0 = np.where(yv > 0, d32, u32)
        dv = np.where(d32 == -inf32, -_TWO128, d32.astype(np.float64))
        uv = np.where(u32 == inf32, _TWO128, u32.astype(np.float64))
        tie = ~exact & (yv - dv == uv - yv)
        if mode == 3:
            out = u32
        elif mode == 4:
            out = d32
        elif mode == 2:
            out = toward0
        else:
            away = np.where(yv > 0, u32, d32)
            out = np.where(tie & (rest > 0), u32, np.where(tie & (rest < 0), d32, n32))
            if mode == 1:
                out = np.where(tie & (rest == 0), away, out)
            out = np.where(exact, n32, out)
        if mode == 3 or mode == 4 or mode == 2:
            out = np.where(exact & (rest == 0), n32, out)
        tz = np.where(exact & ((rest == 0) | ((rest < 0) == neg)), n32, toward0)
        fixed = np.where(spec, special, np.where(zsign < 0, -0.0, 0.0)).astype(np.float32)
        ok = fast | (zsl & (zsign != 0)) | spec
        ref[ok] = np.where(fast, out, fixed)[ok]
        if want_ulp:
            az = np.abs(tz.astype(np.float64))
            ez = np.where(az >= 2.0 ** -126, np.frexp(az)[1].astype(np.int64) - 1, -126)
            u = np.where(spec, np.nan, np.where(fast, np.ldexp(1.0, ez - 23), 2.0 ** -149))
            ulp_out[ok] = u[ok]
        if not band:
            return
        k = np.broadcast_to(K, c1.shape) if K.size == 1 else K
        q = np.maximum(e, -126) - 23
        g = q - 9
        sc = np.ldexp(ys, -g)
        T = np.floor(sc)
        rel = np.where(neg, -rest, rest)
        T = T - ((rel < 0) & (sc == T))
        odd = (rel != 0) | (sc != T)
        T = T + (odd & (np.fmod(T, 2.0) == 0.0))
        width = 2.0 * k.astype(np.float64)
        width = width * np.where((e >= -126) & (T >= 2.0 ** 33 - 2.0 ** 8), 2.0, 1.0)
        V = np.where(neg, -T, T)
        dn = np.ldexp(V - width, g)
        up = np.ldexp(V + width, g)
        ln = dn.astype(np.float32)
        hn = up.astype(np.float32)
        lv = np.where(ln.astype(np.float64) < dn, np.nextafter(ln, inf32), ln)
        lv = np.where(np.abs(ln) == inf32, ln, lv)
        hv = np.where(hn.astype(np.float64) > up, np.nextafter(hn, -inf32), hn)
        hv = np.where(np.abs(hn) == inf32, hn, hv)
        lv = np.where(~neg & ~(lv > 0), np.float32(0.0), lv)
        hv = np.where(neg & ~(hv < 0), np.float32(-0.0), hv)
        unb = k >= _OPEN_K
        lv = np.where(unb, np.where(neg, -inf32, np.float32(0.0)), lv)
        hv = np.where(unb, np.where(neg, np.float32(-0.0), inf32), hv)
        lo[ok] = np.where(fast, lv, fixed)[ok]
        hi[ok] = np.where(fast, hv, fixed)[ok]
