"""er.add and er.multiply on 10**6 float32 elements, in every rounding mode, against numpy's
native float32 add and multiply measured in the same run.

Run by hand: ``OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_add_multiply.py``. Prints, for
each case, the CPU time per element (best of several runs) and its ratio to numpy's own op.
Two timings per case: ``.rounded`` (the reference alone: the Result is built and its rounded
values read) and ``+ tolerance()`` (every modelled implementation, then the tolerance). Targets
(issue 4): within 10x for nearest-even, 40x for the directed modes.
"""

from __future__ import annotations

import time

import numpy as np
from _timing import best

import exactref as er

N = 10**6


def per_element(fn, repeat=5) -> float:
    """CPU nanoseconds per element, best of ``repeat`` runs."""
    return best(fn, repeat, time.process_time) / N * 1e9


def main() -> None:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(np.float32)
    b = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(np.float32)
    xa, xb = er.asarray(a, "float32"), er.asarray(b, "float32")
    base = {"add": per_element(lambda: np.add(a, b), repeat=50),
            "multiply": per_element(lambda: np.multiply(a, b), repeat=50)}
    for op, t in base.items():
        print(f"numpy float32 {op}: {t:.2f} ns/element")
    print(f"{'case':<40} {'ns/elem':>9} {'ratio':>8}")
    ops = {"add": er.add, "multiply": er.multiply}
    for op, fn in ops.items():
        for mode in er.Rounding:
            t = per_element(lambda fn=fn, mode=mode: fn(xa, xb, rounding=mode).rounded)
            print(f"er.{op} {mode.value:<28} {t:9.2f} {t / base[op]:7.1f}x")
        t = per_element(lambda fn=fn: fn(xa, xb).tolerance(), repeat=3)
        print(f"er.{op} nearest_even + tolerance()     {t:9.2f} {t / base[op]:7.1f}x")


if __name__ == "__main__":
    main()
