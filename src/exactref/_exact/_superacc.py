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
  other's store, and the input is prefetched 512 elements ahead (one hint per 8 elements:
  the stores to the bins otherwise hold the loads back; measured, 25% of the float64 time).
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
  deferred). At the end of a row every bin goes into chunks of weight ``2**(32 j + LOW)``
  (``LOW = -1074``): its pieces (the bin, its spills at ``2**63``; and, once per row, minus
  ``zc`` at ``2**52``), each a signed ``|v| < 2**63`` at a bit offset ``o = 32 q + r`` from
  ``LOW`` (``o = max(b, 1) - 1``, plus 63 for spills), split as ``v = h 2**32 + l`` (``0 <= l
  < 2**32``, arithmetic shift) into ``l << r`` (below ``2**63``) and ``h << r`` (below
  ``2**62`` in magnitude), each split again at 32 bits: chunks ``q .. q + 2`` receive
  addends below ``2**32`` in magnitude, a few thousand per row at most (no int64 overflow).
  Carries are then propagated, which leaves chunks ``0 .. C-2`` in ``[0, 2**32)`` and the top
  chunk signed. ``C = 68`` chunks reach offset 2176: the last piece lands at most at chunk
  ``(2045 + 63) // 32 + 2 = 67``, and the total, below ``2**(2098 + 64)`` units for fewer than
  ``2**63`` elements, fits the top chunk. The flush visits every exponent for long rows and,
  for rows under 16384 elements, only those between the row's smallest and largest (one more
  pass over a row that is still in cache), so short rows do not pay for 16384 bins.
* **Rows.** One compiled call takes many rows (the bins allocated once, left cleared by each
  row's flush); the result of a row is canonical: ``(V, e)`` with ``V`` odd (or ``(0, 0)``).
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

import functools
import math
import threading

import numpy as np

from . import _jit

__all__ = ["exact_sum", "exact_sums", "available", "BANKS", "BLOCK", "CHUNKS"]

BANKS = 4  # written into the kernel's unrolled loop
BLOCK = 4096  # elements between the checks for zeros, subnormals and specials
CHUNKS = 68  # small-superaccumulator chunks of 32 bits (float64)
_CHUNKS32 = 12  # float32
_PAR_CHUNK = 1 << 20  # elements of one thread's task


def available() -> bool:
    """Whether the compiled kernel runs (numba installed, ``EXACTREF_NUMBA`` not 0)."""
    return _jit.enabled()


# ---------------------------------------------------------------------------- prefetching
_PREFETCH = 512  # elements ahead (4 KiB of float64), written into the kernel
_lock = threading.Lock()


def _prefetch(a, i):
    """A hint that ``a[i]`` will be read soon: nothing in Python; in compiled code, LLVM's
    ``llvm.prefetch`` (registered by :func:`_compiled_prefetch` before the first compile)."""


@functools.cache
def _compiled_prefetch() -> bool:
    """Give :func:`_prefetch` its compiled form (numba imported here, on first use, never at
    import time): a prefetch where a test compile shows it works, else nothing. Returns
    whether the prefetch is live."""
    from llvmlite import ir
    from numba import njit, types
    from numba.core import cgutils
    from numba.extending import intrinsic, overload

    @intrinsic
    def llvm_prefetch(typingctx, arr, idx):
        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                           wraparound=False, boundscheck=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                "llvm.prefetch.p0i8")
            # read, high temporal locality, data cache
            builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0),
                              ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()
        return types.void(arr, idx), codegen

    def probe(a):
        llvm_prefetch(a, 0)
        return a[0]

    try:
        njit(probe)(np.zeros(2, np.uint64))
        live = True
    except Exception:  # an LLVM without this intrinsic: no hint, the same values
        live = False

    @overload(_prefetch)
    def _prefetch_impl(a, i):
        if live:
            return lambda a, i: llvm_prefetch(a, i)
        return lambda a, i: None

    return live


# ---------------------------------------------------------------------------- the kernel
@_jit.jit
def _accumulate(U, start, stop, mbits, ebits, small, flags):
    """Accumulate ``U[r, start:stop]`` for every row ``r`` of ``U`` (float bits as unsigned
    integers: uint64 for float64 with ``mbits, ebits = 52, 11``, uint32 for float32 with
    ``23, 8``) into the chunks ``small[r]`` exactly (carries propagated); ``flags[r]``: (NaN
    seen, +inf seen, -inf seen). One self-contained function (compiled code calls no other),
    compiled per dtype."""
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
    acc = np.zeros((4, nbins), np.uint64)  # allocated once per call, cleared per row
    spill = np.zeros((4, nbins), np.int64)
    zc = np.zeros(2, np.int64)  # zeros and subnormals seen, per sign (their implicit bit)
    snap = np.zeros(8, np.uint64)
    for row in range(U.shape[0]):
        u = U[row]
        zc[0] = 0
        zc[1] = 0
        i = start
        while i < stop:
            end = min(stop, i + 4096)  # BLOCK
            for k in range(4):
                snap[2 * k] = acc[k, 0]
                snap[2 * k + 1] = acc[k, top + 1]
            j = i
            while j + 8 <= end:  # four banks: no element waits on the previous one's store
                if j + 512 < stop:  # _PREFETCH: a cache line ahead per 8 elements
                    _prefetch(u, j + 512)
                for _ in range(2):
                    w0 = np.uint64(u[j])
                    w1 = np.uint64(u[j + 1])
                    w2 = np.uint64(u[j + 2])
                    w3 = np.uint64(u[j + 3])
                    k0 = w0 >> sh  # sign and exponent: below nbins, the patterns unsigned
                    k1 = w1 >> sh
                    k2 = w2 >> sh
                    k3 = w3 >> sh
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
            # zeros and subnormals took an implicit bit they do not have: count them per sign
            moved = False
            for k in range(4):
                if snap[2 * k] != acc[k, 0] or snap[2 * k + 1] != acc[k, top + 1]:
                    moved = True
            if moved:
                for t in range(i, end):
                    k0 = (np.uint64(u[t]) >> sh) & kmask
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
                            flags[row, 0] = 1
                        elif k0 == ipos:
                            flags[row, 1] = 1
                        else:
                            flags[row, 2] = 1
                for k in range(4):
                    acc[k, top] = 0
                    acc[k, nbins - 1] = 0
                    spill[k, top] = 0
                    spill[k, nbins - 1] = 0
            i = end
        # every bin into the chunks, cleared: its sum at its offset, its spills at 63 bits
        # above; then the implicit bits of the zeros and subnormals taken back. A piece v at
        # bit offset oo = 32 q + r: v = h 2**32 + l, l << r and h << r into chunks q .. q + 2
        sm = small[row]
        lo, hi = 0, top  # the exponents to visit: every one for long rows, else the row's
        if stop - start < 16384:
            lo, hi = top, 0
            for t in range(start, stop):
                e0 = np.int64((np.uint64(u[t]) >> sh) & np.uint64(top))
                lo = min(lo, e0)
                hi = max(hi, e0)
        for k in range(4):
            for bb in range(2 * (hi - lo + 1)):
                neg = bb > hi - lo
                e = lo + bb - (hi - lo + 1 if neg else 0)
                b = e + (top + 1 if neg else 0)
                if acc[k, b] == 0 and spill[k, b] == 0:
                    continue
                sign = -1 if neg else 1
                o = max(e, 1) - 1
                for piece in range(2):
                    v = sign * (np.int64(acc[k, b]) if piece == 0 else spill[k, b])
                    oo = o + 63 * piece
                    q = oo >> 5
                    r = oo & 31
                    t = (v & 0xFFFFFFFF) << r
                    sm[q] += t & 0xFFFFFFFF
                    sm[q + 1] += t >> 32
                    t = (v >> 32) << r
                    sm[q + 1] += t & 0xFFFFFFFF
                    sm[q + 2] += t >> 32
                acc[k, b] = 0
                spill[k, b] = 0
        for piece in range(2):
            v = -zc[0] if piece == 0 else zc[1]
            q = mbits >> 5
            r = mbits & 31
            t = (v & 0xFFFFFFFF) << r
            sm[q] += t & 0xFFFFFFFF
            sm[q + 1] += t >> 32
            t = (v >> 32) << r
            sm[q + 1] += t & 0xFFFFFFFF
            sm[q + 2] += t >> 32
        for c in range(sm.size - 1):  # carries: chunks 0 .. C-2 into [0, 2**32)
            carry = sm[c] >> 32
            sm[c] -= carry << 32
            sm[c + 1] += carry


# ------------------------------------------------------------------------------ the face
def _special_values(flags) -> np.ndarray:
    """Per row of ``flags`` (NaN seen, +inf seen, -inf seen): the IEEE sum of those terms."""
    nan = (flags[:, 0] != 0) | ((flags[:, 1] != 0) & (flags[:, 2] != 0))
    inf = np.where(flags[:, 1] != 0, math.inf, np.where(flags[:, 2] != 0, -math.inf, 0.0))
    return np.where(nan, math.nan, inf)


def exact_sum(x, kernel=None, task: int = _PAR_CHUNK) -> tuple[int, int, float]:
    """The exact sum of the finite elements of the vector ``x`` (float64, float32 or float16)
    as ``(V, e)`` with the value ``V * 2**e`` (Python integers, ``V`` odd or 0) and the IEEE
    sum of its non-finite elements (NaN, ±inf, or 0.0 where every element is finite).

    The input is cut into pieces of ``task`` elements, one accumulator each, merged exactly:
    compiled (``kernel=None`` where numba runs), on :func:`~._jit.threads` threads for long
    inputs; else, or with ``kernel="python"``, by the kernel's Python twin in this thread (the
    same operations, slowly: for tests).
    """
    return exact_sums(np.asarray(x).reshape(1, -1), kernel, task)[0]


def exact_sums(X, kernel=None, task: int = _PAR_CHUNK) -> list:
    """:func:`exact_sum` of every row of the 2-D ``X``: a list of ``(V, e, special)``. Many
    rows are shared among the threads; a few long rows are cut along their length, their
    pieces' accumulators merged exactly."""
    small, special, low = exact_chunks(X, kernel, task)
    chunks = small.shape[1]
    low_bytes = np.ascontiguousarray(small[:, :-1].astype("<u4")).view(np.uint8)
    width = 32 * (chunks - 1)
    special = special.tolist()
    out = []
    for r in range(small.shape[0]):
        V = int.from_bytes(low_bytes[r].tobytes(), "little") + (int(small[r, -1]) << width)
        e = low
        if V:
            tz = (V & -V).bit_length() - 1
            V >>= tz
            e += tz
        else:
            e = 0
        out.append((V, e, special[r]))
    return out


def exact_chunks(X, kernel=None, task: int = _PAR_CHUNK):
    """The exact row sums of the 2-D ``X`` as the superaccumulator holds them: ``(small,
    special, low)``, row ``r``'s value ``sum_j small[r, j] 2**(32 j + low)`` (int64 chunks,
    every one but the last in ``[0, 2**32)``, the last signed) and the IEEE sums of the
    non-finite terms (float64 per row). See :func:`exact_sums`."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"exact_sums takes a 2-D array (rows); got shape {X.shape}: reshape "
                         f"it, or call exact_sum for a vector")
    if X.dtype == np.float16:
        X = X.astype(np.float32)  # exact
    X = np.ascontiguousarray(X)
    if X.dtype == np.float64:
        U, mbits, ebits, chunks, low = X.view(np.uint64), 52, 11, CHUNKS, -1074
    elif X.dtype == np.float32:
        U, mbits, ebits, chunks, low = X.view(np.uint32), 23, 8, _CHUNKS32, -149
    else:
        raise ValueError(f"exact_sum takes float64, float32 or float16 data; got {X.dtype}: "
                         f"convert it first (integers have their own exact sums)")
    if kernel not in (None, "python"):
        raise ValueError(f"kernel={kernel!r}: expected None (compiled where numba runs) or "
                         f"'python' (the Python twin)")
    if int(task) < 1:
        raise ValueError(f"task={task!r}: expected the elements per accumulator, an integer "
                         f">= 1")
    task = int(task)
    fn = (_accumulate.compiled() if kernel is None else None) or _accumulate.python
    if fn is not _accumulate.python:
        with _lock:
            _compiled_prefetch()
    serial = fn is _accumulate.python
    m, k = U.shape
    if m > 1 and k <= task or m >= 4 * _jit.threads():  # whole rows per task
        small = np.zeros((m, chunks), np.int64)
        flags = np.zeros((m, 3), np.int64)
        rows = max(1, task // max(k, 1))

        def run_rows(r0, r1):
            fn(U[r0:r1], 0, k, mbits, ebits, small[r0:r1], flags[r0:r1])

        if serial:
            for r0 in range(0, m, rows):
                run_rows(r0, min(m, r0 + rows))
        else:
            _jit.map_chunks(run_rows, m, rows, min_parallel=max(1, (1 << 18) // max(k, 1)))
    else:  # a few long rows: pieces of every row per task, merged
        tasks = max(1, -(-k // task))
        parts = np.zeros((tasks, m, chunks), np.int64)
        pflags = np.zeros((tasks, m, 3), np.int64)

        def run_cols(c0, c1):
            t = c0 // task
            fn(U, c0, c1, mbits, ebits, parts[t], pflags[t])

        if serial:
            for c0 in range(0, k, task):
                run_cols(c0, min(k, c0 + task))
        else:
            _jit.map_chunks(run_cols, k, task)
        # every chunk but the top is in [0, 2**32) after its carries: the sums stay exact
        small = parts.sum(axis=0)
        flags = pflags.max(axis=0)
        for c in range(chunks - 1):  # carries again, so the low chunks are 32-bit digits
            carry = small[:, c] >> 32
            small[:, c] -= carry << 32
            small[:, c + 1] += carry
    return small, _special_values(flags), low
