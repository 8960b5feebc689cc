"""Peak memory of exactref's calls on large arrays (issues 11 and 22: ``er.add(x, y).covers(x +
y)`` and multiply's, float64 and float32, within 4x the inputs' bytes plus a constant; issue
19: the row kernels, softmax's family first, within 4x the input's bytes beside the output).

Run by hand: ``python3 benchmarks/bench_memory.py [N ...]`` (default 10**7: add, multiply) and
``python3 benchmarks/bench_memory.py --rows [SHAPE ...] [--ops softmax,...]`` (default
shapes ``1x1e6`` and ``1e3x1e3``, float32; ``1x1e7`` and ``1e4x1e3`` are issue 19's, minutes
each). Prints the peak of numpy's and Python's allocations (tracemalloc) during the call, the
inputs' bytes and the ratio, what the call's Result holds afterwards (its output), the time,
and the same for the native op (numpy's add; torch's op where torch is installed, else a
numpy softmax) measured in the same run, with the ratios of exactref's to it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
import warnings

import numpy as np

import exactref as er


def _traced(fn):
    """``(result, seconds, peak bytes, bytes held after)`` of ``fn()`` under tracemalloc."""
    tracemalloc.start()
    try:
        start = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - start
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, seconds, peak, held


def measure(n: int) -> None:
    """``er.add`` and ``er.multiply`` of float64 and float32 arrays with ``covers`` of numpy's
    own output: the peak of the call beside its inputs (issue 22: within 4x the inputs'
    bytes), and the time against numpy's op in the same run."""
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        x = rng.standard_normal(n).astype(dtype)
        y = (rng.standard_normal(n) * 1e-3).astype(dtype)
        inputs = x.nbytes + y.nbytes
        for op, native in (("add", np.add), ("multiply", np.multiply)):
            fn = getattr(er, op)
            actual = native(x, y)
            fn(x[:100], y[:100]).covers(actual[:100])  # warm: imports and tables
            ok, seconds, peak, _ = _traced(lambda fn=fn, x=x, y=y, actual=actual:
                                           fn(x, y).covers(actual).all())
            _, native_s, native_peak, _ = _traced(lambda native=native, x=x, y=y:
                                                  native(x, y))
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{op} {np.dtype(dtype).name} n={n:>11,}: covered {ok}; peak "
                  f"{peak / 2**20:8.1f} MiB = {peak / inputs:4.2f}x the inputs "
                  f"({inputs / 2**20:.0f} MiB); {seconds:.3f} s; numpy's {op} "
                  f"{native_peak / inputs:4.2f}x, {native_s:.3f} s ({seconds / native_s:.1f}x "
                  f"its time); process peak RSS {rss:.0f} MiB", flush=True)


# ------------------------------------------------------------------------------ row kernels
def _numpy_op(op):
    """numpy's formula of ``op`` over the last dim of a float32 (M, K) array: the native op
    whose memory tracemalloc sees (torch's allocator is not traced)."""
    def run(x):
        if op in ("layer_norm", "rms_norm"):
            mean = x.mean(axis=-1, keepdims=True) if op == "layer_norm" else 0.0
            d = x - mean
            return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5)
        m = x.max(axis=-1, keepdims=True)
        e = np.exp(x - m)
        s = e.sum(axis=-1, keepdims=True)
        if op == "softmax":
            return e / s
        if op == "log_softmax":
            return x - m - np.log(s)
        return (m + np.log(s))[..., 0]

    return run


def _torch_op(op):
    """torch's op (its time, and the output covered), or None without torch."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:  # pragma: no cover - torch is a test dependency
        return None
    fns = {"softmax": lambda t: torch.softmax(t, -1),
           "log_softmax": lambda t: torch.log_softmax(t, -1),
           "logsumexp": lambda t: torch.logsumexp(t, -1),
           "layer_norm": lambda t: F.layer_norm(t, (t.shape[-1],)),
           "rms_norm": lambda t: F.rms_norm(t, (t.shape[-1],))}
    return lambda x: fns[op](torch.from_numpy(x)).numpy()


def _call(op, x):
    fn = getattr(er, op)
    if op in ("layer_norm", "rms_norm"):
        return fn(x, (x.shape[-1],))
    return fn(x, dim=-1)


def measure_rows(op: str, M: int, K: int) -> None:
    x = np.random.default_rng(0).standard_normal((M, K)).astype(np.float32)
    _call(op, x[:2, :64]).tolerance()  # warm: imports, contexts, tables
    r, seconds, peak, held = _traced(lambda: _call(op, x))
    beside = peak - held  # beyond what the Result holds afterwards (its output)
    actual, np_s, np_peak, _ = _traced(lambda: _numpy_op(op)(x))
    name, t_s = "numpy", np_s
    torch_op = _torch_op(op)
    if torch_op is not None:
        name = "torch"
        actual, t_s, _, _ = _traced(lambda: torch_op(x))
    with warnings.catch_warnings():  # the default models are wide for the norms: no matter
        warnings.simplefilter("ignore", er.WeakCheckWarning)
        ok, cover_s, cover_peak, _ = _traced(lambda: bool(r.covers(actual).all()))
    print(f"{op} ({M}x{K}) float32, input {x.nbytes / 2**20:.1f} MiB: {seconds:.1f} s, peak "
          f"{peak / x.nbytes:.2f}x the input ({beside / x.nbytes:.2f}x beside the output, "
          f"which holds {held / x.nbytes:.2f}x); numpy's formula {np_peak / x.nbytes:.2f}x; "
          f"{name} {t_s:.3f} s (exactref {seconds / max(t_s, 1e-9):.0f}x its time); covers "
          f"{name}'s: {ok}, {cover_s:.1f} s, peak {cover_peak / x.nbytes:.2f}x", flush=True)


def _shape(text: str):
    m, k = text.lower().split("x")
    return int(float(m)), int(float(k))


def main(argv) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", help="N for add, or MxK shapes with --rows")
    parser.add_argument("--rows", action="store_true", help="the row kernels instead of add")
    parser.add_argument("--ops", default="softmax,log_softmax,logsumexp",
                        help="the row kernels, comma-separated (also layer_norm, rms_norm)")
    args = parser.parse_args(argv)
    if not args.rows:
        for arg in args.sizes or ["10000000"]:
            measure(int(float(arg)))
        return
    for text in args.sizes or ["1x1e6", "1e3x1e3"]:
        M, K = _shape(text)
        for op in args.ops.split(","):
            measure_rows(op.strip(), M, K)


if __name__ == "__main__":
    main(sys.argv[1:])
