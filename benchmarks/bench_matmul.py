"""Benchmark of exactref's long sums against numpy's float64 matmul, BLAS on one thread.

Run by hand: ``python benchmarks/bench_matmul.py [--quick]``. Each line prints the exact
reference's time (rounded into the input format, tolerance not computed) and its ratio to
numpy's float64 matmul of the same shape, measured in the same run (``np.sum`` for the sum).
Targets (issue 6): float32 inputs within 20x of DGEMM, float64 within 60x, adversarial data
within 4x of random data of the same shape, er.sum of 10**7 float32 within 20x of np.sum.
"""

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy loads BLAS
os.environ["OMP_NUM_THREADS"] = "1"

import sys  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from _timing import best  # noqa: E402

from exactref import linalg  # noqa: E402


def data(n, dtype, kind, rng):
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    if kind == "adversarial":
        # rows spanning 2**-120 .. 2**120 (bfloat16 and float32 hold them), and forced
        # cancellation: the second half of each row cancels the first half up to 2**-20
        A *= 2.0 ** rng.integers(-120, 121, size=A.shape)
        h = n // 2
        A[:, h:] = -A[:, :h] * (1 + 2.0**-20)
        B[h:] = B[:h]
    return A.astype(dtype), B.astype(dtype)


def main():
    quick = "--quick" in sys.argv
    rng = np.random.default_rng(0)
    cases = [(512, np.float32, "random", 3), (512, np.float32, "adversarial", 3),
             (512, np.float64, "random", 3), (512, np.float64, "adversarial", 3)]
    if not quick:
        cases += [(2048, np.float32, "random", 1), (2048, ml_dtypes.bfloat16, "random", 1),
                  (2048, ml_dtypes.bfloat16, "adversarial", 1)]
    random_time = {}
    print(f"{'case':40s} {'exact':>10s} {'dgemm':>10s} {'ratio':>8s}")
    for n, dt, kind, rep in cases:
        A, B = data(n, dt, kind, rng)
        A64, B64 = A.astype(np.float64), B.astype(np.float64)
        t_ref = best(lambda A64=A64, B64=B64: A64 @ B64, max(rep, 3))
        t = best(lambda A=A, B=B: linalg.matmul(A, B), rep)
        name = f"matmul {n}^3 {np.dtype(dt).name} {kind}"
        extra = ""
        key = (n, np.dtype(dt).name)
        if kind == "random":
            random_time[key] = t
        elif key in random_time:
            extra = f"  ({t / random_time[key]:.1f}x random)"
        print(f"{name:40s} {t * 1e3:8.1f}ms {t_ref * 1e3:8.1f}ms {t / t_ref:7.1f}x{extra}")
    x = rng.standard_normal(10**7).astype(np.float32)
    t_ref = best(lambda: np.sum(x), 5)
    t = best(lambda: linalg.sum(x), 3)
    print(f"{'sum 10**7 float32':40s} {t * 1e3:8.1f}ms {t_ref * 1e3:8.1f}ms {t / t_ref:7.1f}x"
          f"  (vs np.sum)")


if __name__ == "__main__":
    main()
