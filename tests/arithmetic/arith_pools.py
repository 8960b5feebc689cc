"""Adversarial and random values of every format, for the sweeps against PyTorch and NumPy.

``pool(fmt, n, rng)`` gives ``n`` values of ``fmt`` (float64, complex128 or Python-int arrays
that the format holds exactly): the format's special values (signed zeros, infinities, NaN, the
largest finite value and its neighbour, the smallest normal and subnormal values, 1 and its
neighbours), then random bit patterns (every binade, subnormals included). ``pairs(fmt, n,
rng)`` gives operand pairs for add and multiply: random pairs, every pair of specials, exact
cancellations ``y = -x``, ties (``y`` half an ulp of ``x``, and half an ulp plus or minus the
smallest step), overflow edges (``max + max``, ``max`` plus half its ulp) and products that land
on ties and on the subnormal range.
"""

from __future__ import annotations

import math

import numpy as np

import exactref as er


def specials(fmt) -> list:
    """The special values of a real float format (as float64)."""
    f = fmt.component
    out = [0.0, 1.0, -1.0, f.max_finite, -f.max_finite, f.smallest_normal, -f.smallest_normal,
           f.smallest_subnormal, -f.smallest_subnormal, 2.0, 0.5, 3.0, -3.0]
    if f.has_negzero:
        out.append(-0.0)
    if f.has_inf:
        out += [math.inf, -math.inf]
    if f.has_nan:
        out.append(math.nan)
    ulp1 = 2.0 ** (1 - f.precision)
    out += [1.0 + ulp1, 1.0 - ulp1 / 2, -(1.0 + ulp1),
            f.max_finite - 2.0 ** (f.emax - f.precision + 1),
            f.smallest_normal - f.smallest_subnormal, 2 * f.smallest_subnormal]
    if not f.signed:
        out = [abs(v) for v in out if not (v == 0)]
    if not f.has_zero:
        out = [v for v in out if v != 0]
    vals = er.asarray(np.array(out, dtype=np.float64), f)._wide().astype(np.float64)
    return [float(v) for v in vals]


def random_bits(fmt, n, rng) -> np.ndarray:
    """``n`` values of a real float format from random bit patterns (float64)."""
    f = fmt.component
    size = f.np_dtype.itemsize
    raw = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    if f.bits < 8:
        raw = raw & np.uint8((1 << f.bits) - 1)
    vals = raw.reshape(-1).view(f.np_dtype)[:n] if size == 1 else \
        np.ascontiguousarray(raw).view(f.np_dtype).reshape(-1)
    with np.errstate(invalid="ignore"):
        wide = vals.astype(np.float64)
    # quiet NaNs only: a signalling NaN pattern makes numpy's later casts raise "invalid"
    return np.where(np.isnan(wide), np.nan, wide)


def real_pool(fmt, n, rng) -> np.ndarray:
    sp = specials(fmt)
    rest = random_bits(fmt, max(n - len(sp), 0), rng)
    return np.concatenate([np.array(sp, dtype=np.float64), rest])[:max(n, len(sp))]


def int_pool(fmt, n, rng) -> np.ndarray:
    """Integers of an integer (or bool) format, edges first."""
    if fmt.kind == "bool":
        return rng.integers(0, 2, size=n).astype(bool)
    lo, hi = fmt.int_min, fmt.int_max
    edges = [0, 1, hi, hi - 1, lo, lo + 1, 2, 3] + ([-1, -2] if lo < 0 else [])
    rand = rng.integers(lo, hi, size=max(n - len(edges), 0), dtype=np.int64 if hi < 2**63
                        else np.uint64, endpoint=True)
    vals = np.array(edges + [int(v) for v in rand], dtype=fmt.np_dtype if fmt.bits >= 8
                    else np.int64)
    return vals[:max(n, len(edges))]


def _ulp(values, f):
    a = np.abs(values)
    e = np.floor(np.log2(np.maximum(a, f.smallest_normal)))
    return np.exp2(np.maximum(e, f.emin) - f.precision + 1)


def real_pairs(fmt, n, rng):
    """``(x, y)`` float64 arrays of the format's values (see the module docstring)."""
    f = fmt.component
    sp = np.array(specials(f), dtype=np.float64)
    sx, sy = np.meshgrid(sp, sp, indexing="ij")
    xs = [sx.reshape(-1), real_pool(f, n, rng)]
    ys = [sy.reshape(-1), real_pool(f, n, rng)[rng.permutation(max(n, len(sp)))]]
    base = random_bits(f, n, rng)
    base = base[np.isfinite(base)]
    with np.errstate(all="ignore"):
        ulp = _ulp(base, f)
        # cancellation, ties, ties plus or minus a little, and products near ties
        cands = [(base, -base), (base, ulp / 2), (base, -ulp / 2), (base, ulp / 2 * 1.5),
                 (base, ulp / 4), (base, base * (1 + 2.0 ** -f.precision)),
                 (np.full(3, f.max_finite), np.array([f.max_finite, ulp[0] if len(ulp) else 1,
                                                      f.max_finite / 2])),
                 (base, np.full_like(base, f.smallest_subnormal)),
                 (base * 2.0 ** -(f.emax // 2), base * 2.0 ** (f.emin // 2))]
    for a, b in cands:
        a = er.asarray(np.asarray(a, dtype=np.float64), f)._wide().astype(np.float64)
        b = er.asarray(np.asarray(b, dtype=np.float64), f)._wide().astype(np.float64)
        xs.append(a)
        ys.append(b)
    return np.concatenate(xs), np.concatenate(ys)


def pairs(fmt, n, rng):
    """Operand value pairs of any format: float64 (real floats), complex128, ints or bools."""
    if fmt.kind in ("bool", "int", "uint"):
        return int_pool(fmt, n, rng), int_pool(fmt, n, rng)[::-1].copy()
    if fmt.kind == "float":
        return real_pairs(fmt, n, rng)
    xr, yr = real_pairs(fmt.component, n, rng)
    xi, yi = real_pairs(fmt.component, n, rng)
    m = min(len(xr), len(xi))
    perm = rng.permutation(m)
    # the parts as given (1j * inf would make NaNs): assemble them explicitly
    x = np.empty(m, dtype=np.complex128)
    x.real, x.imag = xr[:m], xi[perm]
    y = np.empty(m, dtype=np.complex128)
    y.real, y.imag = yr[:m], yi[perm]
    return x, y


def as_format(values, fmt) -> er.Array:
    """An er.Array of ``fmt`` holding ``values`` (which it holds exactly)."""
    return er.asarray(np.asarray(values), fmt)
