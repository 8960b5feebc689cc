"""``flush=`` on the long sums: kernels that flush subnormals (DAZ: subnormal inputs read as
zeros; FTZ: subnormal results, partial sums included, written as zeros), as TensorFlow's CPU
kernels run (FTZ and DAZ set) and GPUs in their fast modes.

A kernel MAY flush: each value covers the union of the unflushed and the flushed
implementations (as ``flush=`` on the elementwise ops):

* ``"inputs"``: the inputs' magnitudes below the compute format's smallest normal ``N_c`` read
  as zeros of their sign: the union of the Result on the given and on the flushed inputs;
* ``"outputs"``: every rounding of the accumulator (and of a product) may flush a result below
  ``N_c`` to zero, so each loses at most ``N_c`` (instead of half a subnormal quantum) on top of
  its relative error ``u``: the long-sum bound's underflow term ``2 k eta`` becomes ``2 k N_c``;
  and the output, where it is subnormal in the output format, may be a zero;
* ``"both"``: the two (the flushed inputs summed with flushed roundings, and the given ones).

Derivation: a rounding in FTZ mode returns ``fl(y)`` or 0 where ``|fl(y)| < N_c``; either way
``|result - y| <= u |y| + N_c``. Summing the absolute terms over the ``k`` roundings a result's
terms pass gives at most ``k N_c`` more than the IEEE bound, which counts ``eta`` per rounding.
"""

from __future__ import annotations

import numpy as np

from .._array import Array

__all__ = ["FLUSH", "check_flush", "flushes_outputs", "flushed_input", "union", "flush_output",
           "apply"]

FLUSH = (None, "inputs", "outputs", "both")


def check_flush(op: str, flush) -> None:
    """Refuse a ``flush=`` that is not one of :data:`FLUSH`, naming them."""
    if flush not in FLUSH:
        raise ValueError(f"{op}: flush={flush!r}; expected None (no flushing, the default), "
                         f"'inputs' (subnormal inputs may read as zeros: DAZ), 'outputs' "
                         f"(subnormal results and partial sums may be written as zeros: FTZ) or "
                         f"'both' (TensorFlow's CPU kernels)")


def flushes_outputs(flush) -> bool:
    return flush in ("outputs", "both")


def flushed_input(arr: Array, tiny: float):
    """``arr`` with the magnitudes below ``tiny`` (nonzero) replaced by zeros of their sign, in
    its own format; None where nothing changes (or for non-float formats)."""
    if arr.dtype.kind not in ("float", "complex"):
        return None
    data = np.asarray(arr.numpy())
    if data.dtype.kind not in "fc":
        data = data.astype(np.float64)

    def flush(v):
        with np.errstate(invalid="ignore"):
            sub = (np.abs(v) < tiny) & (v != 0)
        return sub, np.where(sub, np.copysign(np.zeros_like(v), v), v)

    if data.dtype.kind == "c":
        s1, re = flush(data.real)
        s2, im = flush(data.imag)
        if not (s1.any() or s2.any()):
            return None
        new = (re + 1j * im).astype(data.dtype)
    else:
        sub, new = flush(data)
        if not sub.any():
            return None
    from .._array import asarray
    return asarray(np.ascontiguousarray(new), arr.dtype)


def union(base, other):
    """``base`` (a BoundResult) covering ``other``'s outputs too: per element the hull of the
    two intervals (NaN allowed where either allows it)."""
    if other is None:
        return base
    first = base._compute_bounds

    def both():
        out = []
        mine, theirs = first(), other._bounds()
        for a, b in zip(mine, theirs, strict=True):
            lo = np.fmin(a[0], np.reshape(b[0], np.shape(a[0])))
            hi = np.fmax(a[1], np.reshape(b[1], np.shape(a[1])))
            nan = a[2] | np.reshape(b[2], np.shape(a[2]))
            if len(a) > 3:
                out.append((lo, hi, nan, a[3]))
            else:
                out.append((lo, hi, nan))
        return out

    base._compute_bounds = both
    base._cached = None
    return base


def flush_output(result, fmt):
    """``result``'s intervals widened to zero where the output may be subnormal in ``fmt`` (an
    FTZ kernel writes it as a zero)."""
    tiny = fmt.component.smallest_normal
    first = result._compute_bounds

    def flushed():
        out = []
        for part in first():
            lo, hi = np.asarray(part[0], np.float64), np.asarray(part[1], np.float64)
            with np.errstate(invalid="ignore"):
                meets = ((np.abs(lo) < tiny) | (np.abs(hi) < tiny) | ((lo < 0) & (hi > 0)))
            lo2 = np.where(meets, np.fmin(lo, 0.0), lo)
            hi2 = np.where(meets, np.fmax(hi, 0.0), hi)
            out.append((lo2, hi2, *part[2:]))
        return out

    result._compute_bounds = flushed
    result._cached = None
    return result


def apply(result, flush, out_fmt, tiny, operands, rerun):
    """``result`` (computed with the FTZ rounding model where ``flush`` flushes outputs)
    widened for ``flush``: the union with ``rerun(*flushed operands, flush=...)`` where the
    inputs may be flushed and some operand has a value below ``tiny`` (the compute format's
    smallest normal), and a subnormal output allowed to be zero where outputs may be flushed.
    Exact results (integers) are returned as they are."""
    if flush is None or not hasattr(result, "_compute_bounds"):
        return result
    if flush in ("inputs", "both"):
        fl = [flushed_input(o, tiny) if isinstance(o, Array) else None for o in operands]
        if any(f is not None for f in fl):
            new = [o if f is None else f for f, o in zip(fl, operands, strict=True)]
            union(result, rerun(*new, flush="outputs" if flush == "both" else None))
    if flushes_outputs(flush):
        flush_output(result, out_fmt)
    result.details["flush"] = flush
    result.models = (*result.models,
        f"subnormal {'inputs and results' if flush == 'both' else flush} of "
        f"{result.details.get('compute', out_fmt).name} flushed to zero (a kernel may)")
    return result
