"""Rounding and exact two-term sums on 10**6 elements, against numpy's float32 add.

Run by hand: ``OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_rounding.py``. Prints, for each
case, the CPU time per element (best of several runs) and its ratio to numpy's native float32
add measured in the same run. Targets (issue "Foundation"): within 10x for nearest-even and 40x
for the directed modes.
"""

from __future__ import annotations

import time

import numpy as np
from _timing import best

import exactref as er
from exactref._exact import ExactPart, sum_of_products

N = 10**6


def per_element(fn, repeat=7) -> float:
    """CPU nanoseconds per element, best of ``repeat`` runs."""
    return best(fn, repeat, time.process_time) / N * 1e9


def main() -> None:
    rng = np.random.default_rng(0)
    x64 = rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    base = per_element(lambda: np.add(a, b), repeat=50)
    print(f"numpy float32 add: {base:.2f} ns/element (the unit of every ratio below)")
    print(f"{'case':<44} {'ns/elem':>9} {'ratio':>8}")

    def report(name, fn):
        t = per_element(fn)
        print(f"{name:<44} {t:9.2f} {t / base:8.1f}x")

    for fmt in ("float32", "bfloat16", "float8_e4m3fn"):
        for mode in er.Rounding:
            report(f"round float64 -> {fmt} {mode.value}",
                   lambda fmt=fmt, mode=mode: er.asarray(x64, fmt, rounding=mode))
    f32 = er.dtype("float32")
    for mode in er.Rounding:
        def exact_sum(mode=mode):
            oa = ExactPart.from_float64(a.astype(np.float64))
            ob = ExactPart.from_float64(b.astype(np.float64))
            values = sum_of_products([(oa,), (ob,)], (N,)).round(f32, mode, "ieee")[0]
            return values.astype(np.float32)
        report(f"exact float32 a + b -> float32 {mode.value}", exact_sum)


if __name__ == "__main__":
    main()
