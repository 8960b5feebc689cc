"""er.divide and er.sqrt on 10**6 float32 elements, in every rounding mode, against numpy's
native float32 divide and sqrt measured in the same run; and the other ops of the arithmetic
family (float32 and bfloat16) for a view of where each stands.

Run by hand: ``OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_family.py``. Prints, for each
case, the CPU time per element (best of several runs) and its ratio to numpy's own op. Targets
(issue 10): divide and sqrt within 5x for nearest-even, 40x for the directed modes.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _timing import best

import exactref as er

N = 10**6


def per_element(fn, repeat=5, n=N) -> float:
    """CPU nanoseconds per element, best of ``repeat`` runs."""
    return best(fn, repeat, time.process_time) / n * 1e9


def main(quick: bool = False) -> None:
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(np.float32)
    b = (rng.standard_normal(N) * np.exp2(rng.integers(-20, 20, N))).astype(np.float32)
    pos = np.abs(a)
    xa, xb, xp = (er.asarray(v, "float32") for v in (a, b, pos))
    base = {"divide": per_element(lambda: np.divide(a, b), repeat=50),
            "sqrt": per_element(lambda: np.sqrt(pos), repeat=50)}
    for op, t in base.items():
        print(f"numpy float32 {op}: {t:.2f} ns/element")
    print(f"{'case':<40} {'ns/elem':>9} {'ratio':>8}")
    cases = {"divide": lambda mode: er.divide(xa, xb, rounding=mode).rounded,
             "sqrt": lambda mode: er.sqrt(xp, rounding=mode).rounded}
    for op, fn in cases.items():
        for mode in er.Rounding:
            t = per_element(lambda fn=fn, mode=mode: fn(mode), repeat=3 if quick else 5)
            print(f"er.{op} {mode.value:<28} {t:9.2f} {t / base[op]:7.1f}x")
    # the rest of the family on 10**5 elements: the general engine's cost, for reference
    n = 10**5
    small = {k: er.asarray(v[:n], "float32") for k, v in (("a", a), ("b", b), ("p", pos))}
    half = {k: er.asarray(v[:n], "bfloat16") for k, v in (("a", a), ("b", b), ("p", pos))}
    nb = per_element(lambda: np.divide(a[:n], b[:n]), repeat=50, n=n)
    print(f"\nthe family on 10**5 elements, nearest-even, ns/element (numpy float32 divide "
          f"{nb:.2f}):")
    ops = [("subtract", lambda s: er.subtract(s["a"], s["b"], alpha=0.5)),
           ("divide", lambda s: er.divide(s["a"], s["b"])),
           ("remainder", lambda s: er.remainder(s["a"], s["b"])),
           ("fmod", lambda s: er.fmod(s["a"], s["b"])),
           ("floor_divide", lambda s: er.floor_divide(s["a"], s["b"])),
           ("sqrt", lambda s: er.sqrt(s["p"])), ("rsqrt", lambda s: er.rsqrt(s["p"])),
           ("fma", lambda s: er.fma(s["a"], s["b"], s["a"])),
           ("addcdiv", lambda s: er.addcdiv(s["a"], s["b"], s["a"], value=0.5)),
           ("maximum", lambda s: er.maximum(s["a"], s["b"])),
           ("less", lambda s: er.less(s["a"], s["b"]))]
    print(f"{'op':<14} {'float32':>10} {'bfloat16':>10}")
    for name, fn in ops:
        t32 = per_element(lambda fn=fn: fn(small).tolerance(), repeat=1 if quick else 2, n=n)
        t16 = per_element(lambda fn=fn: fn(half).tolerance(), repeat=1 if quick else 2, n=n)
        print(f"{name:<14} {t32:10.1f} {t16:10.1f}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
