"""The NumPy sweeps' shared check: run NumPy and the equivalent, compare."""

from __future__ import annotations

import warnings

import numpy as np

import exactref as er


class Sweep:
    """Runs NumPy and the equivalent on the same operands and collects the disagreements."""

    def __init__(self):
        self.failures, self.checked = [], 0

    def check(self, label, run_numpy, run_ref):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got, np_error = run_numpy(), None
        except Exception as exc:  # noqa: BLE001 - NumPy's errors must be mirrored
            got, np_error = None, exc
        try:
            ref, ref_error = run_ref(), None
        except Exception as exc:  # noqa: BLE001
            ref, ref_error = None, exc
        if np_error is not None or ref_error is not None:
            if np_error is None or ref_error is None:
                self.failures.append(f"{label}: NumPy raised {np_error!r}, the equivalent "
                                     f"{ref_error!r}")
            return
        self.checked += 1
        got = np.asarray(got)
        if er.dtype(got.dtype) is not ref.rounded.dtype:
            self.failures.append(f"{label}: NumPy's dtype {got.dtype}, the equivalent's "
                                 f"{ref.rounded.dtype.name}")
            return
        if got.shape != tuple(ref.rounded.shape):
            self.failures.append(f"{label}: NumPy's shape {got.shape}, the equivalent's "
                                 f"{ref.rounded.shape}")
            return
        cov = ref.covers(got)
        if not cov.all():
            self.failures.append(f"{label}: {cov.summary()}")

    def assert_ok(self, at_least=1):
        __tracebackhide__ = True
        if self.failures:
            raise AssertionError(f"{len(self.failures)} failures of {self.checked} checks:\n"
                                 + "\n".join(self.failures[:20]))
        assert self.checked >= at_least
