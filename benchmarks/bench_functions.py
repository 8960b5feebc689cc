"""The real functions (issue 12's targets), measured in one run:

* bfloat16 and float16 ``er.exp`` on 10**6 elements (from the tables) against numpy's float32
  ``np.exp`` on the same number of elements: target within 5x;
* float32 inputs (MPFR per element): elements per second on one core (target 10**6), and with
  every worker process;
* the other functions on float32, and the cost of building a 16-bit table (once per function
  and format; then read from the cache directory).

Run by hand: ``python3 benchmarks/bench_functions.py`` (``--quick`` for fewer repeats). Times
are the best of several runs; per-element costs are CPU time of this process, except where the
workers run (wall time).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import ml_dtypes
import numpy as np
from _timing import best

import exactref as er
from exactref._exact import _functions as kernel

N = 10**6


def per_element(fn, repeat, n, clock=time.process_time) -> float:
    """Nanoseconds per element, best of ``repeat`` runs."""
    return best(fn, repeat, clock) / n * 1e9


def main(quick: bool = False) -> None:
    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(N) * 4).astype(np.float32)
    base = per_element(lambda: np.exp(x32), 50, N)
    print(f"numpy float32 exp: {base:.2f} ns/element")
    print(f"{'case':<44} {'ns/elem':>9} {'ratio':>7}")
    for name, dt in (("bfloat16", ml_dtypes.bfloat16), ("float16", np.float16)):
        x = x32.astype(dt)
        er.exp(x)  # the table: built or read once
        for mode in (er.Rounding.NEAREST_EVEN, er.Rounding.TOWARD_ZERO):
            t = per_element(lambda x=x, mode=mode: er.exp(x, rounding=mode).rounded,
                            3 if quick else 10, N)
            print(f"er.exp {name} {mode.value:<30} {t:9.2f} {t / base:6.1f}x")
        t = per_element(lambda x=x: er.exp(x).covers(x), 3 if quick else 5, N)
        print(f"er.exp {name} + covers{'':<26} {t:9.2f} {t / base:6.1f}x")
        er.exp(x, accuracy="sleef_u10")  # the rounded tables of this kind of call
        t = per_element(lambda x=x: er.exp(x, accuracy="sleef_u10").rounded, 3 if quick else 5,
                        N)
        print(f"er.exp {name} accuracy=sleef_u10{'':<16} {t:9.2f} {t / base:6.1f}x")
    n = 2 * 10**4 if quick else 10**5
    os.environ["EXACTREF_WORKERS"] = "1"
    xs = x32[:n]
    er.exp(xs[:10])
    t = per_element(lambda: er.exp(xs), 1 if quick else 3, n)
    print(f"\nfloat32 inputs, one core: er.exp {t:.0f} ns/element = "
          f"{1e9 / t:,.0f} elements/s (target 1,000,000)")
    t = per_element(lambda: er.exp(xs, accuracy="sleef_u10"), 1 if quick else 3, n)
    print(f"float32 inputs, one core: er.exp accuracy=sleef_u10 {t:.0f} ns/element")
    w = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if w > 1:
        os.environ["EXACTREF_WORKERS"] = str(w)
        big = x32[: max(n, 4 * kernel.PARALLEL_MIN)]
        er.exp(big[: kernel.PARALLEL_MIN + 10])  # start the workers
        t = per_element(lambda: er.exp(big), 1 if quick else 2, big.size, time.perf_counter)
        print(f"float32 inputs, {w} worker processes: er.exp {t:.0f} ns/element (wall) = "
              f"{1e9 / t:,.0f} elements/s")
    os.environ["EXACTREF_WORKERS"] = "1"
    m = 2000 if quick else 10**4
    print(f"\nfloat32 inputs, one core, {m} elements, ns/element:")
    xm = x32[:m]
    for op, kw in (("exp", {}), ("log", {}), ("tanh", {}), ("sin", {}), ("erf", {}),
                   ("sigmoid", {}), ("silu", {}), ("gelu", {}), ("gelu", {"approximate":
                                                                      "tanh"}),
                   ("softplus", {}), ("mish", {})):
        fn = getattr(er, op)
        arg = np.abs(xm) if op == "log" else xm
        t = per_element(lambda fn=fn, arg=arg, kw=kw: fn(arg, **kw), 1, m)
        label = op + ("(tanh)" if kw else "")
        print(f"  {label:<14} {t:10.0f}")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["EXACTREF_CACHE_DIR"] = tmp
        kernel._TABLES.clear()
        for name in ("exp", "gelu"):
            start = time.perf_counter()
            kernel.function_table(name, "bfloat16")
            built = time.perf_counter() - start
            kernel._TABLES.clear()
            start = time.perf_counter()
            kernel.function_table(name, "bfloat16")
            read = time.perf_counter() - start
            print(f"table of {name} over bfloat16: built in {built:.2f} s, read from the cache "
                  f"in {read * 1e3:.1f} ms")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
