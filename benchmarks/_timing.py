"""The benchmarks' one timing helper: the best of several runs (the least disturbed)."""

from __future__ import annotations

import time


def best(fn, repeat: int, clock=time.perf_counter) -> float:
    """Seconds of the fastest of ``repeat`` calls of ``fn`` by ``clock``."""
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)
