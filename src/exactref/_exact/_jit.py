"""Compiled hot paths: numba where it is installed (the ``fast`` extra), numpy otherwise.

Every compiled path has a pure-numpy twin computing the same values bit for bit (the same
IEEE 754 float64 operations in the same order: numba compiles without ``fastmath``, so LLVM
neither reassociates nor contracts ``a * b + c`` into an FMA); the tests run both and compare.

* :func:`enabled`: whether compiled paths run: numba importable, and ``EXACTREF_NUMBA`` not
  ``0`` (the switch the tests and benchmarks use to run the numpy twins);
* :func:`jit`: a decorator, ``numba.njit(cache=True, nogil=True)`` applied on first use (so
  importing exactref never imports numba); ``f.compiled()`` is the dispatcher, or None where
  compiled paths do not run;
* :func:`threads` and :func:`map_chunks`: large inputs on several threads of this call, joined
  before it returns (no pool outlives a call, no process is started). ``EXACTREF_THREADS``
  (default: the CPUs this process may use) caps them; ``1``: none.

>>> import numpy as np
>>> from exactref._exact import _jit
>>> @_jit.jit
... def twice(x, out):
...     for i in range(x.size):
...         out[i] = 2.0 * x[i]
>>> out = np.zeros(3)
>>> (twice.compiled() or twice.python)(np.arange(3.0), out)
>>> out.tolist()
[0.0, 2.0, 4.0]
"""

from __future__ import annotations

import functools
import os
import threading
import types

__all__ = ["enabled", "jit", "threads", "map_chunks"]


@functools.cache
def _numba():
    try:
        import numba
    except ImportError:
        return None
    return numba


def enabled() -> bool:
    """Whether compiled paths run: numba is installed and ``EXACTREF_NUMBA`` is not ``0``."""
    if os.environ.get("EXACTREF_NUMBA", "").strip() == "0":
        return False
    return _numba() is not None


class _Lazy:
    """A function compiled by numba on first use; ``python`` is the function itself."""

    def __init__(self, fn, options):
        self.python = fn
        #: the module's other lazily compiled functions ``fn`` calls, by global name: bound
        #: to their dispatchers when ``fn`` compiles (numba calls a jitted global; a
        #: dispatcher passed as an argument breaks numba's cache, whose index then holds a
        #: dispatcher type that cannot be pickled again in another process)
        self._needs = tuple(options.pop("needs", ()))
        self._options = options
        self._compiled = None
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def compiled(self):
        """The numba dispatcher, or None where compiled paths do not run (:func:`enabled`)."""
        if not enabled():
            return None
        with self._lock:
            if self._compiled is None:
                code = getattr(self.python, "__code__", None)
                cache = code is not None and os.path.isfile(code.co_filename)
                fn = self.python
                if self._needs:
                    bound = dict(fn.__globals__)
                    bound.update({n: fn.__globals__[n].compiled() for n in self._needs})
                    fn = types.FunctionType(fn.__code__, bound, fn.__name__, fn.__defaults__,
                                            fn.__closure__)
                    fn.__qualname__ = self.python.__qualname__
                self._compiled = _numba().njit(cache=cache, nogil=True, **self._options)(fn)
            return self._compiled

    def __call__(self, *args):
        """The compiled function where it runs, else the Python function itself (slow: for
        tests and small inputs; numpy twins are the fast path without numba)."""
        f = self.compiled()
        return (f or self.python)(*args)


def jit(fn=None, **options):
    """Mark ``fn`` for compilation by numba on first use (``@jit`` or ``@jit(error_model=
    "numpy")``): see :class:`_Lazy`."""
    if fn is None:
        return lambda f: _Lazy(f, options)
    return _Lazy(fn, options)


def threads() -> int:
    """Threads a large compiled computation may use: ``EXACTREF_THREADS``, else the CPUs this
    process may use."""
    text = os.environ.get("EXACTREF_THREADS", "").strip()
    if text:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"EXACTREF_THREADS={text!r}: expected the number of threads, an "
                             f"integer >= 1 (1: this thread only); set it so or unset it")
        return n
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def map_chunks(fn, n: int, chunk: int, min_parallel: int = 1 << 18) -> None:
    """``fn(start, stop)`` over ``[0, n)`` in chunks of ``chunk``: on :func:`threads` threads
    of this call when ``n >= min_parallel`` (``fn`` must release the GIL: a compiled
    ``nogil`` function), joined before returning; else in this thread, in order."""
    starts = range(0, n, chunk)
    k = min(threads(), len(starts))
    if n < min_parallel or k <= 1:
        for s in starts:
            fn(s, min(n, s + chunk))
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=k, thread_name_prefix="exactref") as pool:
        for f in [pool.submit(fn, s, min(n, s + chunk)) for s in starts]:
            f.result()
