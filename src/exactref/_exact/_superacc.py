"""Exact long sums at memory speed: exponent bins and Neal's small superaccumulator.

:func:`exact_sum` returns the exact sum of a float64, float32 or float16 vector as a pair of
Python integers ``(V, e)`` (the value ``V * 2**e``) and the IEEE sum of its non-finite terms.
It runs compiled (numba, the ``fast`` extra: :mod:`._jit`) and on every thread of this call
for long inputs; without numba the callers keep their numpy path (Rump, Ogita and Oishi's
ExtractVector in :mod:`._longsum`), which is exact as well, so both give the same value.

The method (after Neal, "Fast exact summation using small and large superaccumulators",
arXiv:1505.05571, whose large superaccumulator this is, its counters replaced by a test)
---------------------------------------------------------------------------------------------
* **Bins.** A float64 with sign ``s``, biased exponent ``b`` and fraction bits ``f`` is
  ``(-1)**s * m * 2**(max(b, 1) - 1075)``, ``m = f + 2**52 [b > 0]``. Its top 12 bits (sign
  and exponent) index a bin of unsigned 64-bit integers, and ``f + 2**52`` is added there,
  the implicit bit unconditionally (one OR; the zeros and subnormals are fixed below): a bin
  has one weight, so no bit is ever shifted out. Bins come in ``BANKS = 4`` banks (element
  ``i`` goes to bank ``i % 4``), so consecutive elements of one exponent do not wait on each
  other's store.
* **Spills, not overflows.** An addend is below ``2**53``: a bin that reaches ``2**63`` after
  an add (below ``2**63 + 2**53 < 2**64``: no wrap) gives ``2**63`` to its spill counter
  (``spill += 1``, ``bin -= 2**63``), a test and a branch that is taken about once per 1024
  adds; the bin's value is ``bin + 2**63 spill``, exactly.
* **Zeros and subnormals** (``b = 0``) took an implicit bit they do not have. Per block of
  ``BLOCK = 4096`` elements (in L1), where the bins of ``b = 0`` moved, the block is scanned
  again and those elements counted per sign (``zc``); their ``2**52`` each is subtracted at the
  end. **Infinities and NaN** (``b = 2047``): where their bins are nonzero after a block, the
  block is scanned for them (NaN seen, +inf seen, -inf seen) and the bins dropped.
* **Small superaccumulator** (Neal's: chunks of 32 bits of weight in int64, carries
  deferred). At the end of a call every bin goes into chunks of weight ``2**(32 j + LOW)``
  (``LOW = -1074``): its three pieces (the bin, its spills at ``2**63``, minus ``zc`` at
  ``2**52`` for ``b = 0``), each a signed ``|v| < 2**63`` at a bit offset ``o = 32 q + r``
  from ``LOW`` (``o = max(b, 1) - 1``, plus 63 or 52), split as ``v = h 2**32 + l`` (``0 <= l
  < 2**32``, arithmetic shift) into ``l << r`` (below ``2**63``) and ``h << r`` (below
  ``2**62`` in magnitude), each split again at 32 bits: chunks ``q .. q + 2`` receive
  addends below ``2**32`` in magnitude, a few thousand per call at most (no int64 overflow).
  Carries are then propagated, which leaves chunks ``0 .. C-2`` in ``[0, 2**32)`` and the top
  chunk signed. ``C = 68`` chunks reach offset 2176: the last piece lands at most at chunk
  ``(2045 + 63) // 32 + 2 = 67``, and the total, below ``2**(2098 + 64)`` units for fewer than
  ``2**63`` elements, fits the top chunk.
* **Merging.** Long inputs are cut into tasks, one accumulator each, on the threads of this
  call (:func:`~._jit.map_chunks`, joined before returning); the chunk arrays are added as
  integers (exact), so the value never depends on the cutting or the threads.

float32 takes the same kernel on its 32-bit patterns (``f + 2**23``, 9-bit bins, ``LOW =
-149``, ``C = 12``: offsets up to ``253 + 63 + 94`` bits); float16 is converted to float32
(exact).

Nothing here rounds: the result is an integer. ``tests/_exact/test_superacc.py`` checks it
against Fractions and ``math.fsum`` on adversarial inputs, the compiled kernel against its
Python twin, and every cutting against every other.

>>> import numpy as np
>>> V, e, special = exact_sum(np.array([1e300, 1.0, -1e300, 2.0**-1074]))
>>> from fractions import Fraction
>>> Fraction(V) * Fraction(2) ** e == 1 + Fraction(2) ** -1074, special
(True, 0.0)
"""

from __future__ import annotations

import math

import numpy as np

from . import _jit

__all__ = ["exact_sum", "available", "BANKS", "BLOCK", "CHUNKS"]

BANKS = 4  # written into the kernel's unrolled loop
BLOCK = 4096  # elements between the checks for zeros, subnormals and specials
CHUNKS = 68  # small-superaccumulator chunks of 32 bits (float64)
_CHUNKS32 = 12  # float32
_PAR_CHUNK = 1 << 20  # elements of one thread's task


def available() -> bool:
    """Whether the compiled kernel runs (numba installed, ``EXACTREF_NUMBA`` not 0)."""
    return _jit.enabled()


# ---------------------------------------------------------------------------- the kernel
@_jit.jit
def _accumulate(u, start, stop, mbits, ebits, small, flags):
    """Accumulate ``u[start:stop]`` (float bits as unsigned integers: uint64 for float64 with
    ``mbits, ebits = 52, 11``, uint32 for float32 with ``23, 8``) into the chunks ``small``
    exactly (carries propagated); ``flags``: (NaN seen, +inf seen, -inf seen). One
    self-contained function (compiled code calls no other), compiled per dtype."""
    one = np.uint64(1)
    frac = (one << np.uint64(mbits)) - one  # the fraction bits
    implicit = one << np.uint64(mbits)
    sh = np.uint64(mbits)
    top = (1 << ebits) - 1  # the all-ones biased exponent (int)
    nbins = 2 << ebits  # bins: sign bit and biased exponent
    zpos, zneg = np.uint64(0), np.uint64(top + 1)  # the bins of +-0 and the subnormals
    ipos, ineg = np.uint64(top), np.uint64(nbins - 1)  # of +-inf and NaN
    kmask = np.uint64(nbins - 1)
    half = one << np.uint64(63)
    acc = np.zeros((4, nbins), np.uint64)
    spill = np.zeros((4, nbins), np.int64)
    zc = np.zeros(2, np.int64)  # zeros and subnormals seen, per sign (their implicit bit)
    snap = np.zeros(8, np.uint64)
    i = start
    while i < stop:
        end = min(stop, i + 4096)  # BLOCK
        for k in range(4):
            snap[2 * k] = acc[k, 0]
            snap[2 * k + 1] = acc[k, top + 1]
        j = i
        while j + 4 <= end:  # four banks: no element waits on the previous one's store
            w0 = np.uint64(u[j])
            w1 = np.uint64(u[j + 1])
            w2 = np.uint64(u[j + 2])
            w3 = np.uint64(u[j + 3])
            k0 = (w0 >> sh) & kmask
            k1 = (w1 >> sh) & kmask
            k2 = (w2 >> sh) & kmask
            k3 = (w3 >> sh) & kmask
            v0 = acc[0, k0] + ((w0 & frac) | implicit)
            v1 = acc[1, k1] + ((w1 & frac) | implicit)
            v2 = acc[2, k2] + ((w2 & frac) | implicit)
            v3 = acc[3, k3] + ((w3 & frac) | implicit)
            if v0 >= half:  # spill 2**63 units into the bin's counter
                v0 -= half
                spill[0, k0] += 1
            acc[0, k0] = v0
            if v1 >= half:
                v1 -= half
                spill[1, k1] += 1
            acc[1, k1] = v1
            if v2 >= half:
                v2 -= half
                spill[2, k2] += 1
            acc[2, k2] = v2
            if v3 >= half:
                v3 -= half
                spill[3, k3] += 1
            acc[3, k3] = v3
            j += 4
        while j < end:
            w0 = np.uint64(u[j])
            k0 = (w0 >> sh) & kmask
            v0 = acc[0, k0] + ((w0 & frac) | implicit)
            if v0 >= half:
                v0 -= half
                spill[0, k0] += 1
            acc[0, k0] = v0
            j += 1
        # zeros and subnormals took an implicit bit they do not have: count them, per sign
        moved = False
        for k in range(4):
            if snap[2 * k] != acc[k, 0] or snap[2 * k + 1] != acc[k, top + 1]:
                moved = True
        if moved:
            for t in range(i, end):
                w0 = np.uint64(u[t])
                k0 = (w0 >> sh) & kmask
                if k0 == zpos:
                    zc[0] += 1
                elif k0 == zneg:
                    zc[1] += 1
        # an infinity or NaN: note it, drop its bins
        special = False
        for k in range(4):
            if acc[k, top] or acc[k, nbins - 1] or spill[k, top] or spill[k, nbins - 1]:
                special = True
        if special:
            for t in range(i, end):
                w0 = np.uint64(u[t])
                k0 = (w0 >> sh) & kmask
                if k0 == ipos or k0 == ineg:
                    if w0 & frac:
                        flags[0] = 1
                    elif k0 == ipos:
                        flags[1] = 1
                    else:
                        flags[2] = 1
            for k in range(4):
                acc[k, top] = 0
                acc[k, nbins - 1] = 0
                spill[k, top] = 0
                spill[k, nbins - 1] = 0
        i = end
    # every bin into the chunks: its sum, 2**63 per spill, less the implicit bits of zeros
    # and subnormals; a piece v at bit offset o = 32 q + r lands in chunks q .. q + 2
    for k in range(4):
        for b in range(nbins):
            e = b & top
            neg = b > top
            o = max(e, 1) - 1
            for piece in range(3):
                if piece == 0:
                    v = np.int64(acc[k, b])
                    oo = o
                elif piece == 1:
                    v = spill[k, b]
                    oo = o + 63
                else:
                    if e != 0 or k != 0:
                        continue
                    v = -zc[1 if neg else 0]
                    oo = o + mbits
                if v == 0:
                    continue
                if neg:
                    v = -v
                q = oo >> 5
                r = oo & 31
                t = (v & 0xFFFFFFFF) << r
                small[q] += t & 0xFFFFFFFF
                small[q + 1] += t >> 32
                t = (v >> 32) << r
                small[q + 1] += t & 0xFFFFFFFF
                small[q + 2] += t >> 32
    for c in range(small.size - 1):  # carries: chunks 0 .. C-2 into [0, 2**32)
        carry = small[c] >> 32
        small[c] -= carry << 32
        small[c + 1] += carry


# ------------------------------------------------------------------------------ the face
def _special_value(flags) -> float:
    nan, pinf, ninf = (bool(f) for f in flags)
    if nan or (pinf and ninf):
        return math.nan
    return math.inf if pinf else (-math.inf if ninf else 0.0)


def exact_sum(x, kernel=None, task: int = _PAR_CHUNK) -> tuple[int, int, float]:
    """The exact sum of the finite elements of the vector ``x`` (float64, float32 or float16)
    as ``(V, e)`` with the value ``V * 2**e`` (Python integers), and the IEEE sum of its
    non-finite elements (NaN, ±inf, or 0.0 where every element is finite).

    The input is cut into pieces of ``task`` elements, one accumulator each, merged exactly:
    compiled (``kernel=None`` where numba runs), on :func:`~._jit.threads` threads for long
    inputs; else, or with ``kernel="python"``, by the kernel's Python twin in this thread (the
    same operations, slowly: for tests).
    """
    x = np.ascontiguousarray(np.asarray(x).reshape(-1))
    if x.dtype == np.float16:
        x = x.astype(np.float32)  # exact
    if x.dtype == np.float64:
        u, mbits, ebits, chunks, low = x.view(np.uint64), 52, 11, CHUNKS, -1074
    elif x.dtype == np.float32:
        u, mbits, ebits, chunks, low = x.view(np.uint32), 23, 8, _CHUNKS32, -149
    else:
        raise ValueError(f"exact_sum takes float64, float32 or float16 data; got {x.dtype}: "
                         f"convert it first (integers have their own exact sums)")
    if kernel not in (None, "python"):
        raise ValueError(f"kernel={kernel!r}: expected None (compiled where numba runs) or "
                         f"'python' (the Python twin)")
    if int(task) < 1:
        raise ValueError(f"task={task!r}: expected the elements per accumulator, an integer "
                         f">= 1")
    task = int(task)
    fn = (_accumulate.compiled() if kernel is None else None) or _accumulate.python
    n = u.size
    tasks = max(1, -(-n // task))
    small = np.zeros((tasks, chunks), np.int64)
    flags = np.zeros((tasks, 3), np.int64)

    def run(start, stop):
        t = start // task
        fn(u, start, stop, mbits, ebits, small[t], flags[t])

    if fn is _accumulate.python:
        for start in range(0, n, task):
            run(start, min(n, start + task))
    else:
        _jit.map_chunks(run, n, task)
    # merge: every chunk but the top is in [0, 2**32), so the column sums stay exact
    total = small.sum(axis=0)
    V = 0
    for j in range(chunks - 1, -1, -1):
        V = (V << 32) + int(total[j])
    return V, low, _special_value(flags.max(axis=0))
