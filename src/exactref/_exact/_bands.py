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
"""

from __future__ import annotations

import numpy as np

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
