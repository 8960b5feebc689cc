"""Exhaustive sweeps (``exactref.audit.exhaustive``), measured in one run:

* float16: every input of numpy's exp, log and tanh, and the ratio to numpy's own op on the
  same 65536 inputs (the anchor, measured in the same run, interleaved);
* every unary function over float16 and bfloat16 (first and second sweeps);
* float32: the sweep's rate (inputs per second) on slices spread over all 2**32 bit patterns,
  the anchor's, and the projected time of all 2**32 inputs on one core, on 2 spawned worker
  processes (the command line's default) and on a 2-worker Dask LocalCluster; where the time
  goes within a chunk (reference, kernel, covers, distances).

Run by hand: ``python3 benchmarks/bench_exhaustive.py`` (``--quick`` for fewer, smaller
slices; ``--cold`` for an empty table cache). BLAS threads pinned to 1. Times are wall-clock, the best of several runs for the
float16 sweeps; the machine may be shared (say so with the numbers).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import concurrent.futures  # noqa: E402
import contextlib  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _timing import best  # noqa: E402

import exactref as er  # noqa: E402
from exactref.audit import exhaustive  # noqa: E402

ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _slices(count: int, size: int) -> list:
    """``count`` slices of ``size`` bit patterns, evenly spread over float32's 2**32 (both
    signs, every binade, NaNs and infinities included)."""
    step = (1 << 32) // count
    return [(k * step + 12345, k * step + 12345 + size) for k in range(count)]


def float16(quick: bool) -> None:
    print("float16, every input (65536), this process; ratio to numpy's op on the same inputs")
    print(f"{'kernel':<12} {'sweep s':>9} {'numpy s':>9} {'ratio':>8} {'max ulps':>9}")
    for name, fn in (("exp", np.exp), ("log", np.log), ("tanh", np.tanh)):
        exhaustive(fn, name, "float16")  # the function's table: built or read once
        with np.errstate(all="ignore"):
            anchor = best(lambda fn=fn: fn(ALL16), 20)
            sweep = best(lambda fn=fn, name=name: exhaustive(fn, name, "float16"),
                         2 if quick else 5)
            anchor = min(anchor, best(lambda fn=fn: fn(ALL16), 20))  # interleaved
        r = exhaustive(fn, name, "float16")
        print(f"numpy.{name:<6} {sweep:9.4f} {anchor:9.6f} {sweep / anchor:7.0f}x "
              f"{r.max_ulps:9g}")


def every_function() -> None:
    """Every unary function of the registry swept over float16 and bfloat16: the first sweep
    in this process (its table read from the cache directory, or built where it has none:
    ``--cold`` starts from an empty one) and the second. The kernel is a stand-in returning
    its input (its outputs are wrong; the time is the reference's and the sweep's)."""
    from exactref.audit import sweep_size
    from exactref.ops import all_ops

    ops = []
    for spec in all_ops():
        try:
            if sweep_size(spec.name, "float16") == 1 << 16:
                ops.append(spec.name)
        except ValueError:
            continue
    first = second = 0.0
    for fmt in ("float16", "bfloat16"):
        for op in ops:
            t = time.perf_counter()
            exhaustive(lambda x: x, op, fmt, top=0)
            first += time.perf_counter() - t
            t = time.perf_counter()
            exhaustive(lambda x: x, op, fmt, top=0)
            second += time.perf_counter() - t
    print(f"\nevery unary function ({len(ops)}), float16 and bfloat16, all inputs: first sweeps "
          f"{first:.1f} s in all, second sweeps {second:.2f} s "
          f"({2 * len(ops) * 65536 / second:,.0f} inputs/s)")


def _chunk_parts(lo, hi) -> dict:
    """Seconds of each step of one chunk (float32 exp): the reference, the kernel, covers,
    the distances."""
    x = np.arange(lo, hi, dtype=np.uint64).astype(np.uint32).view(np.float32)
    out = {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        ref = er.exp(er.asarray(x))
        out["reference"] = time.perf_counter() - t
        t = time.perf_counter()
        y = np.exp(x)
        out["kernel"] = time.perf_counter() - t
        t = time.perf_counter()
        ref.covers(y)
        out["covers"] = time.perf_counter() - t
        t = time.perf_counter()
        er.ulps_from_exact(ref, y)
        out["distances"] = time.perf_counter() - t
    return out


def float32(quick: bool) -> None:
    count, size = (8, 1 << 14) if quick else (16, 1 << 16)
    pieces = _slices(count, size)
    n = count * size
    x = np.concatenate([np.arange(a, b, dtype=np.uint64) for a, b in pieces]).astype(
        np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        anchor = best(lambda: np.exp(x), 20)
    print(f"\nfloat32 exp of numpy, {count} slices of {size} bit patterns spread over 2**32 "
          f"({n} inputs)")
    # compiled paths (numba: compiled or read from its cache, seconds, on a process's first
    # chunk of 16384 or more) and tables: once per process, before the clock runs
    warm = [(a, a + 16384) for a, _ in pieces[:8]]
    for a, b in warm:
        exhaustive(np.exp, "exp", "float32", slice=(a, b))
    t, cpu = time.perf_counter(), time.process_time()
    for a, b in pieces:
        exhaustive(np.exp, "exp", "float32", slice=(a, b))
    one, cpu = time.perf_counter() - t, time.process_time() - cpu
    with np.errstate(all="ignore"):
        anchor = min(anchor, best(lambda: np.exp(x), 20))
    rate = n / one
    print(f"  this process (one core): {rate:,.0f} inputs/s, {one / anchor:,.0f}x numpy's exp "
          f"on the same inputs; all 2**32: {2**32 / rate / 3600:.2f} h")
    print(f"  its CPU time: {n / cpu:,.0f} inputs/s of CPU (the rate of a core of its own); "
          f"all 2**32 on 2 such cores: {2**32 / (2 * n / cpu) / 60:.0f} min")
    parts = {}
    for a, b in pieces:
        for k, v in _chunk_parts(a, b).items():
            parts[k] = parts.get(k, 0.0) + v
    total = sum(parts.values())
    print("  within a chunk: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in
                                           parts.items()))
    # the workers: the same slices (4 chunks each), here and on 2 workers, interleaved (best
    # of 2 each: the machine may be shared)
    runs = {"this process": {}}
    ctx = multiprocessing.get_context("spawn")
    with contextlib.ExitStack() as stack:
        ex = stack.enter_context(concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx))
        runs["2 spawned processes"] = {"executor": ex}
        try:
            import distributed
        except ImportError:
            print("  Dask: not installed (pip install 'exactref[dask]')")
        else:
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"))
            runs["2-worker LocalCluster"] = {"scheduler": stack.enter_context(
                distributed.Client(cluster))}
        times = {name: float("inf") for name in runs}
        for rep in range(3):  # the first pass warms each worker up: not counted
            for name, kw in runs.items():
                t = time.perf_counter()
                for a, b in pieces:
                    exhaustive("numpy:exp", "exp", "float32", slice=(a, b), chunk=size // 4,
                               **kw)
                if rep:
                    times[name] = min(times[name], time.perf_counter() - t)
    here = times["this process"]
    print("  the same slices, 4 chunks each, best of 2 interleaved after a pass that warms "
          "the workers up (wall):")
    for name, t in times.items():
        print(f"    {name:<22} {n / t:12,.0f} inputs/s ({here / t:.2f}x this process); all "
              f"2**32 at that rate: {2**32 / (n / t) / 3600:.2f} h")


def main(quick: bool = False) -> None:
    float16(quick)
    every_function()
    float32(quick)


if __name__ == "__main__":
    if "--cold" in sys.argv:  # the 16-bit tables built here, not read from the cache
        import tempfile

        os.environ["EXACTREF_CACHE_DIR"] = tempfile.mkdtemp(prefix="exactref-bench-")
    main("--quick" in sys.argv)
