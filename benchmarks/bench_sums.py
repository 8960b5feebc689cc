"""Exact sums of 10**7 elements against ``np.sum`` (issue 22: within 2x and faster than xsum).

Run by hand: ``python3 benchmarks/bench_sums.py [N]``. BLAS is pinned to one thread; the
cases are measured interleaved, round after round, and each reports its best wall-clock time
(the threads of one call count) and the ratio to ``np.sum`` of the same data measured in the
same run. For float64 and float32 data (standard normal):

* ``np.sum`` (the unit), ``math.fsum`` (for scale: correctly rounded, one core), Neal's
  ``xsum`` package (large and small superaccumulators, where installed: float64 only; float32
  data is converted first, which is counted);
* the kernel, ``_exact._superacc.exact_sum`` (compiled: every thread, and one thread);
* ``er.sum(x).rounded`` end to end: compiled on every thread, on one thread, and without numba
  (``EXACTREF_NUMBA=0``: ExtractVector in numpy);
* ``er.sum(x).covers(np.sum(x))``: the exact sum and the tolerance of ``order="library"``.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads BLAS

import numpy as np  # noqa: E402

import exactref as er  # noqa: E402
from exactref._exact import _jit, _superacc  # noqa: E402

try:
    import xsum
except ImportError:  # the comparison only
    xsum = None


def _env(**values):
    """Set environment variables (None: unset); returns the previous values."""
    old = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    return old


def _with(fn, **values):
    def run():
        old = _env(**values)
        try:
            return fn()
        finally:
            _env(**old)
    return run


def cases(x):
    out = [("np.sum", lambda: np.sum(x))]
    x64 = x if x.dtype == np.float64 else None
    if xsum is not None:
        def large():
            acc = xsum.xsum_large()
            acc.add(x64 if x64 is not None else x.astype(np.float64))
            return acc.round()

        def small():
            acc = xsum.xsum_small()
            acc.add(x64 if x64 is not None else x.astype(np.float64))
            return acc.round()

        out += [("xsum large accumulator", large), ("xsum small accumulator", small)]
    if _jit.enabled():
        out += [("kernel exact_sum, all threads", lambda: _superacc.exact_sum(x)),
                ("kernel exact_sum, 1 thread",
                 _with(lambda: _superacc.exact_sum(x), EXACTREF_THREADS="1"))]
    out += [("er.sum(x).rounded, numba, all threads", lambda: er.sum(x).rounded),
            ("er.sum(x).rounded, numba, 1 thread",
             _with(lambda: er.sum(x).rounded, EXACTREF_THREADS="1")),
            ("er.sum(x).rounded, no numba (numpy)",
             _with(lambda: er.sum(x).rounded, EXACTREF_NUMBA="0")),
            ("er.sum(x).covers(np.sum(x)), all threads",
             lambda: er.sum(x).covers(np.sum(x)))]
    return out


def measure(x, rounds: int):
    """Best wall-clock and best CPU seconds (all threads) per case."""
    named = cases(x)
    best = {name: [math.inf, math.inf] for name, _ in named}
    for _name, fn in named:  # warm up: compile, fill caches
        fn()
    for _ in range(rounds):
        for name, fn in named:
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            b = best[name]
            b[0] = min(b[0], time.perf_counter() - t0)
            b[1] = min(b[1], time.process_time() - c0)
    t0, c0 = time.perf_counter(), time.process_time()
    math.fsum(x.tolist() if x.dtype != np.float64 else x)
    best["math.fsum (one run)"] = [time.perf_counter() - t0, time.process_time() - c0]
    return best


def main() -> None:
    warnings.simplefilter("ignore")  # covers' WeakCheckWarning on cancelling random data
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7
    rng = np.random.default_rng(0)
    x64 = rng.standard_normal(n)
    print(f"n = {n}, threads = {_jit.threads()}, numba = {_jit.enabled()}, "
          f"xsum = {xsum is not None}; wall-clock, best of the rounds")
    for x in (x64, x64.astype(np.float32)):
        best = measure(x, rounds=7)
        base, cbase = best["np.sum"]
        print(f"\n{x.dtype} ({base * 1e3:.2f} ms for np.sum: the unit)")
        print(f"{'case':<44} {'wall ms':>9} {'ratio':>8} {'cpu ms':>9} {'ratio':>8}")
        for name, (t, c) in best.items():
            print(f"{name:<44} {t * 1e3:9.2f} {t / base:8.2f}x {c * 1e3:9.2f} "
                  f"{c / cbase:8.2f}x")
        value = er.sum(x).rounded.tolist()
        print(f"exact sum {value!r}, np.sum {float(np.sum(x))!r}")
    rows(rng)


def rows(rng, shape=(10000, 1024)):
    """Row sums (the long ops' case): ``er.sum(X, axis=1).rounded`` against ``np.sum(X,
    axis=1)``, compiled and without numba."""
    X = rng.standard_normal(shape)
    named = [("np.sum(X, axis=1)", lambda: np.sum(X, axis=1)),
             ("er.sum(X, axis=1).rounded, numba", lambda: er.sum(X, axis=1).rounded),
             ("er.sum(X, axis=1).rounded, no numba",
              _with(lambda: er.sum(X, axis=1).rounded, EXACTREF_NUMBA="0"))]
    best = {name: math.inf for name, _ in named}
    for _name, fn in named:
        fn()
    for _ in range(3):
        for name, fn in named:
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    base = best["np.sum(X, axis=1)"]
    print(f"\nrow sums of float64 {shape} (wall-clock)")
    for name, t in best.items():
        print(f"{name:<44} {t * 1e3:9.2f} {t / base:8.2f}x")


if __name__ == "__main__":
    main()
