"""er.add and er.multiply on 10**6 float32 and float64 elements, in every rounding mode, with
and without ``covers``, against numpy's native add and multiply of the same dtype measured in
the same run.

Run by hand: ``python3 benchmarks/bench_add_multiply.py [N] [--numpy]`` (``--numpy``: the
numpy twins of the compiled paths, ``EXACTREF_NUMBA=0``). BLAS and numba are pinned to one
thread. The timings are interleaved (each round times the native op and then every case) and
the best round of each is kept, so a busy machine disturbs the ratios least. Prints, per case,
the wall time per element and its ratio to numpy's own op of that dtype. Cases:

* ``rounded``: the Result built and its rounded values read, in each rounding mode;
* ``+ covers``: ``er.add(x, y).covers(out).all()`` with numpy's own output (issue 22: within 5x
  numpy's add for float32; the directed modes' ``rounded`` within 2x); toward zero, with that
  mode's own output (every element covered) and with numpy's (about half not covered: the
  report's path);
* ``+ tolerance()``: every modelled implementation, then the tolerance.
"""

from __future__ import annotations

import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
if "--numpy" in sys.argv:
    os.environ["EXACTREF_NUMBA"] = "0"
os.environ.setdefault("EXACTREF_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

import exactref as er  # noqa: E402

ROUNDS = 15


def operands(n: int, dtype):
    rng = np.random.default_rng(0)
    scale = 20 if dtype == np.float32 else 200
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-scale, scale, n))).astype(dtype)
    b = (rng.standard_normal(n) * np.exp2(rng.integers(-scale, scale, n))).astype(dtype)
    return a, b


def cases(a, b):
    """``{name: (anchor, fn)}``: the native op of each case, and the case."""
    out = {"add": np.add(a, b), "multiply": np.multiply(a, b)}
    table = {}
    for op in ("add", "multiply"):
        fn = getattr(er, op)
        for mode in er.Rounding:
            table[f"er.{op} {mode.value} .rounded"] = (
                op, lambda fn=fn, mode=mode: fn(a, b, rounding=mode).rounded)
        table[f"er.{op} nearest_even + covers"] = (
            op, lambda fn=fn, op=op: fn(a, b).covers(out[op]).all())
        tz = fn(a, b, rounding="toward_zero").rounded.numpy().copy()
        table[f"er.{op} toward_zero + covers (passes)"] = (
            op, lambda fn=fn, tz=tz: fn(a, b, rounding="toward_zero").covers(tz).all())
        table[f"er.{op} toward_zero + covers (half fail)"] = (
            op, lambda fn=fn, op=op: fn(a, b, rounding="toward_zero").covers(out[op]).all())
        table[f"er.{op} nearest_even + tolerance()"] = (op, lambda fn=fn: fn(a, b).tolerance())
    return table


def run(n: int, dtype) -> None:
    a, b = operands(n, dtype)
    native = {"add": lambda: np.add(a, b), "multiply": lambda: np.multiply(a, b)}
    table = cases(a, b)
    for _, fn in table.values():  # warm: imports, compilation
        fn()
    best = {k: np.inf for k in [*native, *table]}
    for _ in range(ROUNDS):
        for name, fn in [*native.items(), *((k, f) for k, (_, f) in table.items())]:
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    name = np.dtype(dtype).name
    for op in native:
        print(f"numpy {name} {op}: {best[op] / n * 1e9:.2f} ns/element")
    print(f"{'case (' + name + ')':<44} {'ns/elem':>9} {'ratio':>8}")
    for case, (op, _) in table.items():
        t = best[case] / n * 1e9
        print(f"{case:<44} {t:9.2f} {best[case] / best[op]:7.1f}x")


def main(argv) -> None:
    args = [a for a in argv if not a.startswith("--")]
    n = int(float(args[0])) if args else 10**6
    from exactref._exact import _jit

    print(f"N={n:,}; compiled paths: {'numba' if _jit.enabled() else 'numpy twins'}; "
          f"one thread (best of {ROUNDS} interleaved rounds)")
    for dtype in (np.float32, np.float64):
        run(n, dtype)


if __name__ == "__main__":
    main(sys.argv[1:])
