"""Shared checks of the PyTorch sweeps: run PyTorch and the equivalent, compare."""

from __future__ import annotations

import numpy as np
from arith_pools import int_pool, real_pool

import exactref as er
import exactref.equivalents.torch as ert

#: every dtype torch 2.13's CPU add or mul supports (measured: add has no kernel for float8
#: and uint16/32/64; mul has them all; float4_e2m1fn_x2 has neither)
ADD_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
              "float32", "float64", "complex32", "complex64", "complex128"]
MUL_ONLY = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
            "float8_e5m2fnuz", "float8_e8m0fnu"]
ALL_DTYPES = ADD_DTYPES + MUL_ONLY


def values(fmt, n, rng):
    """``n`` adversarial-then-random values of ``fmt`` (complex: independent parts)."""
    if fmt.kind in ("bool", "int", "uint"):
        return int_pool(fmt, n, rng)
    if fmt.kind == "float":
        return real_pool(fmt, n, rng)
    a = real_pool(fmt.component, n, rng)
    b = real_pool(fmt.component, n, rng)[::-1]
    m = min(len(a), len(b))
    z = np.empty(m, np.complex128)
    z.real, z.imag = a[:m], b[rng.permutation(m)]
    return z


def tensor(fmt, vals):
    return er.asarray(np.asarray(vals), fmt).torch()


def alphas_for(fmt):
    """Alphas PyTorch takes for a result of ``fmt`` (a few of each kind)."""
    if fmt.kind == "bool":
        return [True, False]
    if fmt.is_integer:
        return [1, 3, -1, 0]
    base = [1, 0.1, -3, 1 + 2**-11 + 2**-40, 0, 1 / 3, 2.0**-30]
    if fmt.kind == "complex":
        return base + [1j, 0.5 - 2j, complex(1 / 3, 1e-3)]
    return base


class Sweep:
    """Collects the outcome of many PyTorch calls and their references: each call's dtype,
    shape and coverage, PyTorch's known bugs apart, and both raising as agreement."""

    def __init__(self):
        self.failures = []
        self.checked = 0
        self.both_raise = 0
        self.bugs = 0

    def check(self, label, run_torch, run_ref, known_bug=None):
        """Run the equivalent first (it knows where PyTorch would crash the process: it raises
        TorchCrash and PyTorch is never called), then PyTorch; ``known_bug(got)`` marks the
        elements of a pinned PyTorch bug, counted in ``bugs`` instead of failing."""
        try:
            ref = run_ref()
            ref_error = None
        except ert.TorchCrash:
            return
        except Exception as exc:  # noqa: BLE001 - any PyTorch error must be mirrored
            ref, ref_error = None, exc
        try:
            got = run_torch()
            torch_error = None
        except Exception as exc:  # noqa: BLE001
            got, torch_error = None, exc
        if torch_error is not None or ref_error is not None:
            if torch_error is None or ref_error is None:
                self.failures.append(f"{label}: PyTorch raised {torch_error!r}, the equivalent "
                                     f"{ref_error!r}")
            else:
                self.both_raise += 1
            return
        self.checked += 1
        fmt = er.dtype(got.dtype)
        if fmt is not ref.rounded.dtype:
            self.failures.append(f"{label}: PyTorch's dtype {fmt.name}, the equivalent's "
                                 f"{ref.rounded.dtype.name}")
            return
        if tuple(got.shape) != tuple(ref.rounded.shape):
            self.failures.append(f"{label}: PyTorch's shape {tuple(got.shape)}, the "
                                 f"equivalent's {tuple(ref.rounded.shape)}")
            return
        with np.errstate(invalid="ignore"):  # torch's float8 fnuz NaN casts are signaling
            cov = ref.covers(got)
        ok = np.asarray(cov.mask)
        if known_bug is not None:
            bug = known_bug(got) & ~ok
            self.bugs += int(bug.sum())
            ok = ok | bug
        if not ok.all():
            self.failures.append(f"{label}: {cov.summary()}")

    __call__ = check

    def assert_ok(self):
        __tracebackhide__ = True
        if self.failures:
            raise AssertionError(f"{len(self.failures)} failures of {self.checked} checks:\n"
                                 + "\n".join(self.failures[:20]))
