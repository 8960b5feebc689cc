"""Inputs for the audit: values over each format's whole range, and an adversarial corpus.

For a format, :func:`sample` draws values whose bit patterns are uniform (so every binade,
subnormals and specials appear) mixed with the edge values every kernel must get right: signed
zeros, the smallest subnormal and normal, the largest finite value, infinities and NaN, and
values one ulp around 1. :func:`partners` draws a second operand *against* the first: the
negation (cancellation), the value itself, half an ulp of it (ties), half an ulp plus one bit
(one ulp past the tie), the largest value (overflow) and the smallest (operands far apart).

:func:`hard_inputs` draws a fixed share (:data:`HARD_SHARE`) of a group's samples from the
regions the op's record declares hard (``OpSpec.audit_inputs``: the overflow edge of ``exp``,
the multiples of pi/2 of ``sin``, the tails of ``sigmoid``, ...), whose points are computed for
the format the group's result is rounded into.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._array import asarray
from .._formats import Format

__all__ = ["sample", "partners", "edge_values", "moderate_matrix", "hard_inputs", "HARD_SHARE"]

#: The share of a group's samples drawn from the op's declared hard regions (``n //`` 4 of
#: ``n``), in every group whose operands are all arrays of real formats and whose result is a
#: real float format.
HARD_SHARE = 0.25

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _complex(re, im):
    out = np.empty(np.shape(re), dtype=np.complex128)
    out.real, out.imag = re, im
    return out


def edge_values(fmt: Format) -> np.ndarray:
    """The edge values of a format, as float64 (complex128 for complex formats)."""
    c = fmt.component
    if c.is_integer:
        vals = [0, 1, -1, 2, c.int_min, c.int_max, c.int_min + 1, c.int_max - 1]
        return np.array([v for v in vals if c.int_min <= v <= c.int_max], dtype=object)
    vals = [1.0, -1.0, c.max_finite, -c.max_finite, c.smallest_normal, -c.smallest_normal,
            c.smallest_subnormal, -c.smallest_subnormal, 1.0 + 2.0 ** (1 - c.precision),
            1.0 - 2.0 ** (-c.precision), 1.5, 0.5]
    if c.has_zero:
        vals += [0.0]
    if c.has_negzero:
        vals += [-0.0]
    if c.has_inf:
        vals += [np.inf, -np.inf]
    if c.has_nan:
        vals += [np.nan]
    if not c.signed:
        vals = [v for v in vals if not (v < 0)]
    return np.array(vals, dtype=np.float64)


def _random_bits(fmt: Format, n: int, rng) -> np.ndarray:
    """Values of a (real) format from uniform bit patterns."""
    size = fmt.itemsize
    raw = rng.integers(0, 2 ** min(8 * size, 63), size=n, dtype=np.int64, endpoint=False)
    if size == 8:
        raw = raw.astype(np.uint64) * np.uint64(2) + rng.integers(0, 2, n).astype(np.uint64)
    bits = raw.astype(_UINT[size])
    if fmt.bits < 8 * size:
        bits &= _UINT[size]((1 << fmt.bits) - 1)
    return bits.view(fmt.np_dtype)


def _moderate(fmt: Format, n: int, rng) -> np.ndarray:
    """Values of moderate magnitude (where most arithmetic happens), rounded into the format."""
    c = fmt.component
    if c.is_integer:
        span = min(c.int_max, 1000)
        lo = max(c.int_min, -span)
        return rng.integers(lo, span + 1, n).astype(np.float64)
    e = rng.integers(max(c.emin, -20), min(c.emax, 20) + 1, n)
    return rng.standard_normal(n) * np.exp2(e)


def _sample_integers(fmt: Format, n: int, rng) -> np.ndarray:
    if fmt.kind == "bool":
        return rng.integers(0, 2, n).astype(bool)
    edges = np.array([int(v) for v in edge_values(fmt)], dtype=object)
    k_edge = min(len(edges), n // 4)
    k_bits = (n - k_edge) // 2
    if fmt.bits >= 8:
        bits = _random_bits(fmt, k_bits, rng)
    else:
        bits = rng.integers(fmt.int_min, fmt.int_max + 1, k_bits)
    moderate = _moderate(fmt, n - k_edge - k_bits, rng).astype(np.int64)
    vals = [int(v) for v in edges[rng.permutation(len(edges))[:k_edge]]]
    vals += [int(v) for v in np.asarray(bits).astype(np.int64 if fmt.kind == "int" or fmt.bits
                                                      < 64 else np.uint64)]
    vals += [int(v) for v in moderate]
    out = np.array(vals, dtype=object)[rng.permutation(n)]
    return np.array(out.tolist(), dtype=fmt.np_dtype)


def sample(fmt: Format, n: int, rng) -> np.ndarray:
    """``n`` values of ``fmt`` (a numpy array of its dtype): edges, whole range, moderate."""
    comp = fmt.component
    if comp.is_integer:
        return _sample_integers(fmt, n, rng)
    edges = edge_values(fmt)
    k_edge = min(len(edges), n // 4)
    k_bits = (n - k_edge) // 2
    k_mod = n - k_edge - k_bits

    def real(k_b, k_m):
        parts = [edges[rng.permutation(len(edges))[:k_edge]]]
        parts.append(_random_bits(comp, k_b, rng).astype(np.float64))
        parts.append(_moderate(comp, k_m, rng))
        vals = np.concatenate(parts)
        if not comp.signed:
            vals = np.abs(vals)
        return vals

    if fmt.kind == "complex":
        vals = _complex(real(k_bits, k_mod), real(k_bits, k_mod)[::-1])
    else:
        vals = real(k_bits, k_mod)
    vals = vals[rng.permutation(len(vals))]
    return asarray(vals, fmt, overflow="saturate" if not comp.has_nan else None).numpy()


def partners(x: np.ndarray, fmt_x: Format, fmt_y: Format, rng) -> np.ndarray:
    """A second operand drawn against ``x``: adversarial for half the elements, random else."""
    n = x.size
    y = sample(fmt_y, n, rng)
    comp = fmt_y.component
    if comp.is_integer or fmt_x.component.is_integer or fmt_y.kind != fmt_x.kind:
        return y
    xv = x.astype(np.complex128 if fmt_x.kind == "complex" else np.float64)
    if fmt_x.kind == "complex":
        xv = xv.real
        yv = y.astype(np.complex128)
    with np.errstate(all="ignore"):
        p = fmt_x.component.precision
        e = np.floor(np.log2(np.abs(np.where(np.isfinite(xv) & (xv != 0), xv, 1.0))))
        half_ulp = np.exp2(e - p)
        choices = [-xv, xv, half_ulp, half_ulp * (1 + 2.0 ** (1 - comp.precision)),
                   -xv * (1 + 2.0 ** (1 - p)), np.full(n, comp.max_finite),
                   np.full(n, comp.smallest_subnormal), 3 * half_ulp]
    pick = rng.integers(0, len(choices), n)
    adv = np.choose(pick, choices)
    use = rng.random(n) < 0.5
    adv_fmt = asarray(np.nan_to_num(adv, nan=0.0), comp,
                      overflow="saturate" if not comp.has_nan else None).numpy()
    if fmt_y.kind == "complex":
        adv_c = _complex(adv_fmt.astype(np.float64), yv.imag)
        out = np.where(use, adv_c, yv)
        return asarray(out, fmt_y).numpy()
    return np.where(use, adv_fmt, y)


def moderate_matrix(fmt: Format, shape, rng) -> np.ndarray:
    """A matrix for long sums: moderate values of mixed signs and magnitudes (cancellation and
    carries), with a few edge values, so that most dot products stay finite."""
    n = int(np.prod(shape))
    comp = fmt.component
    if comp.is_integer:
        vals = sample(fmt, n, rng)
        return vals.reshape(shape)
    e = rng.integers(max(comp.emin, -8), min(comp.emax, 8) + 1, n)
    vals = rng.standard_normal(n) * np.exp2(e)
    if not comp.signed:
        vals = np.abs(vals)
    edges = edge_values(fmt)
    few = rng.random(n) < 0.01
    vals[few] = edges[rng.integers(0, len(edges), int(few.sum()))].real
    if fmt.kind == "complex":
        vals = _complex(vals, rng.standard_normal(n))
    out = asarray(vals, fmt, overflow="saturate" if not comp.has_nan else None).numpy()
    return out.reshape(shape)


# ------------------------------------------------------------------------- hard regions
def _ordinals(vals: np.ndarray, fmt: Format) -> np.ndarray:
    """Each value's place in ``fmt``'s order of values (int64: consecutive values differ by
    one; +0 and -0 share 0), the values already held exactly by ``fmt`` (a real format)."""
    if fmt.is_integer:
        return np.asarray(vals).astype(np.int64)
    raw = asarray(vals, fmt).numpy().view(_UINT[fmt.itemsize]).astype(np.uint64)
    if not fmt.signed:
        return raw.astype(np.int64)
    sign = (raw >> np.uint64(fmt.bits - 1)) & np.uint64(1)
    mag = (raw & np.uint64((1 << (fmt.bits - 1)) - 1)).astype(np.int64)
    return np.where(sign == 1, -mag, mag)


def _from_ordinals(ords: np.ndarray, fmt: Format) -> np.ndarray:
    """The values of ``fmt`` (its numpy dtype) at the places ``ords``, clamped into the finite
    range (a neighbour past the largest finite value is the largest)."""
    if fmt.is_integer:
        return np.clip(ords, max(fmt.int_min, -2**63), min(fmt.int_max, 2**63 - 1)).astype(
            fmt.np_dtype)
    top = int(_ordinals(np.array([fmt.max_finite]), fmt)[0])
    bottom = int(_ordinals(np.array([fmt.smallest_subnormal if not fmt.signed else
                                     -fmt.max_finite]), fmt)[0])
    o = np.clip(ords, bottom, top)
    if fmt.signed:
        sign = np.uint64(1) << np.uint64(fmt.bits - 1)
        raw = np.where(o < 0, sign | (-o).astype(np.uint64), o.astype(np.uint64))
    else:
        raw = o.astype(np.uint64)
    return raw.astype(_UINT[fmt.itemsize]).view(fmt.np_dtype)


@lru_cache(maxsize=512)
def _points(region, result: Format) -> np.ndarray:
    """The region's points for ``result``'s real component: float64, one row per point, a
    column per operand (``span``: the two ends)."""
    pts = np.asarray(region.at(result.component), dtype=np.float64)
    return pts.reshape(len(pts), -1) if pts.size else pts.reshape(0, 1)


def _held(pts: np.ndarray, fmt: Format) -> np.ndarray:
    """Which float64 points ``fmt`` can hold once rounded to nearest (finite, within the
    largest finite value, not negative in an unsigned format); integers: within the range."""
    with np.errstate(invalid="ignore"):
        if fmt.is_integer:
            r = np.rint(pts)
            return np.isfinite(r) & (r >= fmt.int_min) & (r <= fmt.int_max)
        ok = np.isfinite(pts) & (np.abs(pts) <= fmt.max_finite)
        return ok & (pts >= 0) if not fmt.signed else ok


def _places(pts: np.ndarray, fmt: Format) -> np.ndarray:
    """The held points' places in ``fmt`` (rounded to nearest into it first)."""
    if fmt.is_integer:
        return np.rint(pts).astype(np.int64)
    return _ordinals(asarray(pts, fmt).numpy(), fmt)


def hard_inputs(regions, formats, result: Format, n: int, rng):
    """``n * HARD_SHARE`` samples from the op's hard ``regions``: ``(positions, columns)``,
    the positions (of ``n``) they replace and, per operand, an array of ``formats[i]`` (None
    where ``formats[i]`` is None: an operand that is not an array of n samples).

    The points are computed for ``result`` (the format the op's result is rounded into) and
    rounded into each operand's format; a row with a coordinate that format cannot hold is
    dropped (:func:`_held`). Each sample picks a region (uniformly among those with a point
    left), then a point; a ``near`` sample is the point itself half the time, else one of its
    ``ulps`` neighbours on either side (uniformly); a ``span`` sample is uniform between the
    two ends' places. Regions with no point left give nothing: the share then goes to the
    usual corpus."""
    k = int(n * HARD_SHARE)
    live = [i for i, f in enumerate(formats) if f is not None]
    usable = []
    for region in regions:
        pts = _points(region, result)
        if pts.shape[1] != len(formats) and region.kind == "near":
            raise ValueError(f"region {region.name!r} gives rows of {pts.shape[1]} numbers for "
                             f"an op of {len(formats)} operands")
        cols = range(pts.shape[1]) if region.kind == "span" else live
        keep = np.ones(len(pts), dtype=bool)
        for i in cols:
            keep &= _held(pts[:, i], formats[0 if region.kind == "span" else i])
        if keep.any():
            usable.append((region, pts[keep]))
    if not usable or k == 0:
        return np.zeros(0, dtype=np.int64), [None] * len(formats)
    positions = rng.choice(n, size=k, replace=False)
    which = rng.integers(0, len(usable), k)
    columns = [None if f is None else np.zeros(k, dtype=np.int64) for f in formats]
    for j, (region, pts) in enumerate(usable):
        rows = np.flatnonzero(which == j)
        if not rows.size:
            continue
        pick = pts[rng.integers(0, len(pts), rows.size)]
        if region.kind == "span":
            f = formats[0]
            lo, hi = _places(pick[:, 0], f), _places(pick[:, 1], f)
            lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
            columns[0][rows] = lo + (rng.random(rows.size) * (hi - lo + 1)).astype(np.int64)
            continue
        ulps = region.ulps if isinstance(region.ulps, tuple) else (region.ulps,) * len(formats)
        for i in live:
            step = rng.integers(-ulps[i], ulps[i] + 1, rows.size)
            step[rng.random(rows.size) < 0.5] = 0
            columns[i][rows] = _places(pick[:, i], formats[i]) + step
    return positions, [None if f is None else _from_ordinals(c, f)
                       for f, c in zip(formats, columns, strict=True)]
