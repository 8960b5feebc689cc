"""Peak memory of ``er.add(x, y).covers(x + y)`` on large float64 arrays (issue 11: at most 4x
the inputs' bytes plus a constant).

Run by hand: ``python3 benchmarks/bench_memory.py [N ...]`` (default 10**7). Prints the peak of
numpy's and Python's allocations (tracemalloc) during the call, the inputs' bytes and the ratio,
and the process's peak resident size.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc

import numpy as np

import exactref as er


def measure(n: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    y = rng.standard_normal(n) * 1e-3
    actual = x + y
    inputs = x.nbytes + y.nbytes
    tracemalloc.start()
    start = time.perf_counter()
    ok = er.add(x, y).covers(actual).all()
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"n={n:>11,}: covered {ok}; peak {peak / 2**20:8.1f} MiB = {peak / inputs:4.2f}x the "
          f"inputs ({inputs / 2**20:.0f} MiB); {seconds:.1f} s; process peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["10000000"]:
        measure(int(float(arg)))
