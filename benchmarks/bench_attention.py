"""Benchmark of er.scaled_dot_product_attention against a naive float64 attention (numpy: one
GEMM, max-subtracted exp, one GEMM), BLAS on one thread, CPU time (``time.process_time``).

Run by hand: ``python benchmarks/bench_attention.py [--quick]``. Each line prints the exact
values' time (``.rounded``), the tolerance's (``.tolerance()``), how many rows the MPFR tier
took, the naive attention's time on the same data in the same run and the ratio of the exact
call's total to it. Random normal data, ``E = Ev = 64``. Target (issue 13): bfloat16
``(32, 8, 512, 64)``, exact value and tolerance, within about a minute on one core.
"""

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy loads BLAS
os.environ["OMP_NUM_THREADS"] = "1"

import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from _timing import best  # noqa: E402

import exactref as er  # noqa: E402
import exactref._exact._attention as xa  # noqa: E402

_rows = [0]
_tier2 = xa._row_tier2


def _counting(*args, **kw):
    _rows[0] += 1
    return _tier2(*args, **kw)


xa._row_tier2 = _counting  # counts the rows the MPFR tier takes (the call itself unchanged)


def naive(q, k, v, causal):
    """float64 attention the plain way: softmax(q k^T / sqrt(E)) v."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return (s / s.sum(axis=-1, keepdims=True)) @ v


def main():
    quick = "--quick" in sys.argv
    rng = np.random.default_rng(0)
    bf16 = ml_dtypes.bfloat16
    cases = [((4, 8, 128, 64), bf16, False), ((4, 8, 128, 64), bf16, True),
             ((1, 8, 512, 64), np.float32, False), ((1, 8, 512, 64), np.float32, True)]
    if not quick:
        cases = [((32, 8, 128, 64), bf16, False), ((32, 8, 128, 64), bf16, True),
                 ((1, 8, 512, 64), np.float32, False), ((1, 8, 512, 64), np.float32, True),
                 ((32, 8, 512, 64), bf16, False), ((32, 8, 512, 64), bf16, True)]
    print(f"{'case':40s} {'exact':>8s} {'tol':>8s} {'mpfr rows':>9s} {'naive':>8s} "
          f"{'ratio':>7s}")
    for shape, dt, causal in cases:
        q, k, v = (rng.standard_normal(shape).astype(dt) for _ in range(3))
        q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
        t_ref = best(lambda a=(q64, k64, v64, causal): naive(*a), 3, clock=time.process_time)
        _rows[0] = 0
        t0 = time.process_time()
        r = er.scaled_dot_product_attention(q, k, v, is_causal=causal)
        _ = r.rounded  # the exact values, rounded into the format
        t1 = time.process_time()
        r.tolerance()
        t2 = time.process_time()
        name = f"{np.dtype(dt).name} {shape}{' causal' if causal else ''}"
        print(f"{name:40s} {t1 - t0:7.1f}s {t2 - t1:7.1f}s {_rows[0]:9d} {t_ref:7.2f}s "
              f"{(t2 - t0) / t_ref:6.0f}x", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak resident memory {peak:.2f} GB")


if __name__ == "__main__":
    main()
