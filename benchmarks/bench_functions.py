"""The real functions at the speed of the op (issue 22), measured in one run:

* float32 ``exp``, ``log``, ``tanh``, ``sigmoid``, ``gelu`` on 10**6 elements: ``.rounded`` and
  ``.covers(native)`` with the default accuracy (``"mainstream"``) and ``accuracy="correct"``,
  in ns per element and as a ratio to numpy's float32 op on the same array (``gelu``: numpy's
  float32 tanh formula; ``sigmoid``: ``1 / (1 + exp(-x))``), each pair measured interleaved in
  this run (target: within 20x);
* the same with a free exact value (the kernel's values computed before the clock starts): the
  cost of everything after the exact value (the lane: reference, band, Result);
* float64 (target 50x) on fewer elements;
* the table lane of the 16-bit formats (bfloat16, float16 ``exp``: issue 12's target, 5x).

Run by hand: ``python3 benchmarks/bench_functions.py`` (``--quick`` for fewer repeats). Times
are CPU time of this process (``time.process_time``: a shared machine's other processes do not
count), the best of several interleaved runs; BLAS threads pinned to 1.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
import time  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import exactref as er  # noqa: E402
from exactref.arithmetic import _function_kernel as lane  # noqa: E402

N = 10**6
N64 = 2 * 10**4


def _native(op: str):
    """numpy's float32 (or float64) op, the anchor of each ratio."""
    if op == "sigmoid":
        return lambda x: 1 / (1 + np.exp(-x))
    if op == "gelu":
        c = np.sqrt(2 / np.pi)

        def gelu(x):
            t = x.dtype.type
            return t(0.5) * x * (1 + np.tanh(t(c) * (x + t(0.044715) * x * x * x)))

        return gelu
    return getattr(np, op)


def _pair(native, ours, repeat: int, n: int) -> tuple[float, float]:
    """Best CPU ns per element of ``native`` and ``ours``, run interleaved."""
    a = b = float("inf")
    for _ in range(repeat):
        for _ in range(3):
            s = time.process_time()
            native()
            a = min(a, time.process_time() - s)
        s = time.process_time()
        ours()
        b = min(b, time.process_time() - s)
    return a / n * 1e9, b / n * 1e9


def _inputs(op: str, dtype, n: int) -> np.ndarray:
    x = (np.random.default_rng(0).standard_normal(n) * 4).astype(dtype)
    return np.abs(x) if op == "log" else x


class _FreeValues:
    """``evaluate`` replaced by a lookup of the kernel's values computed beforehand (chunk by
    chunk, as the lane asks for them): what remains on the clock is the lane's own work."""

    def __init__(self, fn):
        self.fn, self.memo = fn, {}

    def __call__(self, fn, xs, **kw):
        k = (kw.get("bits"), xs.size, float(xs[0]), float(xs[-1]), float(xs[xs.size // 2]))
        got = self.memo.get(k)
        if got is None:
            got = self.memo[k] = self.fn(fn, xs, **kw)
        return got


def section(title: str, ops, dtype, n: int, repeat: int, free: bool = False) -> None:
    print(f"\n{title}")
    print(f"  {'case':<40} {'native':>8} {'exactref':>10} {'ratio':>8}")
    real = lane.evaluate
    try:
        for op in ops:
            fn, nat = getattr(er, op), _native(op)
            x = _inputs(op, dtype, n)
            actual = nat(x)
            if free:
                lane.evaluate = _FreeValues(real)
            for acc in ("mainstream", "correct"):
                fn(x, accuracy=acc)  # compiled loops, the free values' memo
                for what, call in ((".rounded", lambda fn=fn, x=x, acc=acc:
                                    fn(x, accuracy=acc).rounded),
                                   (".covers", lambda fn=fn, x=x, acc=acc, a=actual:
                                    fn(x, accuracy=acc).covers(a))):
                    t0, t1 = _pair(lambda x=x, nat=nat: nat(x), call, repeat, n)
                    print(f"  {op + ' ' + acc + ' ' + what:<40} {t0:8.2f} {t1:10.1f} "
                          f"{t1 / t0:7.1f}x", flush=True)
            lane.evaluate = real
    finally:
        lane.evaluate = real


def tables(repeat: int) -> None:
    print("\nthe table lane (16-bit formats), er.exp on 10**6 elements:")
    x32 = _inputs("exp", np.float32, N)
    for name, dt in (("bfloat16", ml_dtypes.bfloat16), ("float16", np.float16)):
        x = x32.astype(dt)
        er.exp(x)  # the table: built or read once
        for label, call in (
                ("nearest_even .rounded", lambda x=x: er.exp(x).rounded),
                ("toward_zero .rounded", lambda x=x: er.exp(x, rounding="toward_zero").rounded),
                ("+ covers", lambda x=x: er.exp(x).covers(x)),
                ("accuracy=sleef_u10 .rounded",
                 lambda x=x: er.exp(x, accuracy="sleef_u10").rounded)):
            call()
            t0, t1 = _pair(lambda: np.exp(x32), call, repeat, N)
            print(f"  {name + ' ' + label:<40} {t0:8.2f} {t1:10.1f} {t1 / t0:7.1f}x",
                  flush=True)


def main(quick: bool = False) -> None:
    ops = ("exp", "log", "tanh", "sigmoid", "gelu")
    r = 2 if quick else 4
    print("CPU ns per element; ratio to numpy's op on the same array, measured interleaved")
    section(f"float32, {N:.0e} elements:", ops, np.float32, N, r)
    section(f"float32, {N:.0e} elements, the exact value free (the lane's own cost):", ops,
            np.float32, N, r, free=True)
    section(f"float64, {N64:.0e} elements:", ops, np.float64, N64, max(1, r // 2))
    tables(r)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
