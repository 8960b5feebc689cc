"""Worker processes for large function evaluations, only where the user asks for them.

By default exactref evaluates in the calling process: it starts no process and no thread of
its own, so nothing re-executes the user's script and nothing is left behind at exit. Threads
would gain nothing: MPFR through gmpy2 holds the GIL (measured: two threads take as long as
one process, or longer).

Worker processes are an explicit ask, visible in the user's code:

* ``exactref.set_workers(n)``: ``n`` worker processes for the rest of the process
  (``set_workers(1)``: none; ``set_workers(None)``: back to the default);
* ``with exactref.workers(n):``: for the block only; the pool it starts is shut down when the
  block ends;
* ``executor=`` to either of them instead of ``n``: any :class:`concurrent.futures.Executor`
  the user made (a ``ProcessPoolExecutor`` of their own, a cluster's executor); exactref
  submits chunks to it and never shuts it down;
* ``EXACTREF_WORKERS=n`` in the environment: as ``set_workers(n)`` in a main process (the
  way to ask for workers from the ``exactref`` command line). A process started by
  :mod:`multiprocessing` inherits the variable but does not act on it (no pools in pools).

Precedence: the innermost ``with workers(...)`` block of the current thread, else
``set_workers``, else ``EXACTREF_WORKERS``, else none.

With workers, an evaluation of at least :data:`PARALLEL_MIN` distinct inputs (and every
function table, 65,536 inputs for a 16-bit format) is cut into chunks, each evaluated by the
importable function :func:`evaluate_chunk` (what a ``spawn`` worker can import); the chunks are
put back in their order, so the values are bit for bit those of one process.

exactref's own pools start their workers by ``spawn`` (never ``fork``: the parent may hold
threads; the same method on Linux, macOS and Windows). Python's rule for ``spawn`` and
``forkserver``: each worker imports the user's main module, so a script that asks for workers
must keep its work under ``if __name__ == "__main__":``. Without that guard the workers fail
to start, and exactref raises a RuntimeError saying so instead of running the script again.

>>> import numpy as np
>>> import exactref as er
>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(2) as pool, er.workers(executor=pool):
...     er.exp(np.float32([0, 1])).rounded.tolist()
[1.0, 2.7182817459106445]
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import math
import multiprocessing
import os
import threading
from concurrent.futures import Executor

import numpy as np

__all__ = ["PARALLEL_MIN", "set_workers", "workers", "evaluate_chunk", "shared"]

#: Distinct inputs from which an evaluation is shared among the workers the user asked for.
PARALLEL_MIN = 1 << 15
#: The fewest inputs of one chunk (below it the transfer costs more than the work).
CHUNK_MIN = 1 << 10


class _Pool:
    """A ``spawn`` ProcessPoolExecutor of ``n`` workers of exactref's own, started on first
    use and shut down (waiting for its workers, so that no semaphore is left to the resource
    tracker) by :meth:`shutdown`."""

    def __init__(self, n: int):
        self.n = n
        self._executor = None
        self._lock = threading.Lock()

    def executor(self) -> Executor:
        with self._lock:
            if self._executor is None:
                from concurrent.futures import ProcessPoolExecutor

                _register_exit()
                self._executor = ProcessPoolExecutor(
                    max_workers=self.n, mp_context=multiprocessing.get_context("spawn"))
            return self._executor

    def started(self) -> bool:
        return self._executor is not None

    def shutdown(self) -> None:
        with self._lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            ex.shutdown(wait=True)


class _Given:
    """An executor of the user's: used, never shut down by exactref."""

    def __init__(self, executor: Executor):
        self._executor = executor
        self.n = getattr(executor, "_max_workers", None) or os.cpu_count() or 1

    def executor(self) -> Executor:
        return self._executor

    def shutdown(self) -> None:
        pass


_NONE = object()  # the setting "no workers" (evaluate in this process)
_block: contextvars.ContextVar = contextvars.ContextVar("exactref_workers", default=None)
_state_lock = threading.Lock()
_process_setting = None          # set_workers's: None (not set), _NONE, _Pool or _Given
_env_pool: tuple | None = None   # (the EXACTREF_WORKERS text, its _Pool)
_exit_registered = False


def _register_exit() -> None:
    global _exit_registered
    with _state_lock:
        if not _exit_registered:
            atexit.register(_shutdown_all)
            _exit_registered = True


def _shutdown_all() -> None:
    """At exit: shut down the pools of ``set_workers`` and ``EXACTREF_WORKERS``."""
    global _process_setting, _env_pool
    with _state_lock:
        setting, env, _process_setting, _env_pool = _process_setting, _env_pool, None, None
    if isinstance(setting, _Pool):
        setting.shutdown()
    if env is not None:
        env[1].shutdown()


def _setting(n, executor, who: str):
    """The setting of ``n`` workers or of ``executor``: ``_NONE``, a ``_Pool`` or a
    ``_Given``; bad arguments raise ValueError saying what is expected."""
    if executor is not None:
        if n is not None:
            raise ValueError(f"{who}: give n (worker processes of exactref's own) or executor "
                             f"(one of yours), not both; got n={n!r} and an executor")
        if not isinstance(executor, Executor):
            raise ValueError(f"{who}: executor must be a concurrent.futures.Executor (a "
                             f"ProcessPoolExecutor, ThreadPoolExecutor, ...), not "
                             f"{type(executor).__name__}")
        return _Given(executor)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{who}: n is the number of worker processes, an integer >= 1 (1: "
                         f"none, every evaluation in this process), got {n!r}")
    return _NONE if n == 1 else _Pool(int(n))


def set_workers(n: int | None = None, *, executor: Executor | None = None) -> None:
    """Share large function evaluations (at least :data:`PARALLEL_MIN` distinct inputs, and
    table builds) among ``n`` worker processes for the rest of this process, or submit them to
    ``executor`` (any :class:`concurrent.futures.Executor` of yours; exactref never shuts it
    down). ``set_workers(1)``: none; ``set_workers(None)``: back to the default
    (``EXACTREF_WORKERS``, else none). The previous pool of ``set_workers`` is shut down; the
    last one at exit.

    The workers are started by ``spawn``: they import your main module, so a script that
    calls this must keep its work under ``if __name__ == "__main__":``.

    >>> import exactref as er
    >>> er.set_workers(1)   # every evaluation in this process (the default)
    >>> er.set_workers(None)
    >>> er.set_workers(0)
    Traceback (most recent call last):
    ...
    ValueError: set_workers: n is the number of worker processes, an integer >= 1 (1: none, every evaluation in this process), got 0
    """
    global _process_setting
    new = None if (n is None and executor is None) else _setting(n, executor, "set_workers")
    with _state_lock:
        old, _process_setting = _process_setting, new
    if isinstance(old, _Pool):
        old.shutdown()


@contextlib.contextmanager
def workers(n: int | None = None, *, executor: Executor | None = None):
    """A block in which large function evaluations (at least :data:`PARALLEL_MIN` distinct
    inputs, and table builds) are shared among ``n`` worker processes (``n = 1``: none, even
    where ``set_workers`` or ``EXACTREF_WORKERS`` asks for some), or submitted to
    ``executor`` (any :class:`concurrent.futures.Executor` of yours, never shut down by
    exactref). The setting holds in the current thread (a context variable); a pool of the
    block's own is started on the first evaluation that uses it and shut down when the block
    ends.

    The workers are started by ``spawn``: they import your main module, so a script that uses
    this must keep its work under ``if __name__ == "__main__":``.

    >>> import numpy as np
    >>> import exactref as er
    >>> with er.workers(1):
    ...     er.exp(np.float32([0.5])).rounded.tolist()
    [1.6487212181091309]
    """
    if n is None and executor is None:
        raise ValueError("workers: give n (worker processes, >= 1; 1: none) or executor "
                         "(a concurrent.futures.Executor)")
    setting = _setting(n, executor, "workers")
    token = _block.set(setting)
    try:
        yield
    finally:
        _block.reset(token)
        if isinstance(setting, _Pool):
            setting.shutdown()


def _env_setting():
    """``EXACTREF_WORKERS``'s setting in a main process (None where it is not set)."""
    global _env_pool
    text = os.environ.get("EXACTREF_WORKERS", "").strip()
    if not text or multiprocessing.parent_process() is not None:
        return None
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"EXACTREF_WORKERS={text!r}: expected the number of worker processes, "
                         f"an integer >= 1 (1 or 0: none); set it so or unset it")
    if n <= 1:
        return _NONE
    with _state_lock:
        old = _env_pool
        if old is not None and old[0] == text:
            return old[1]
        _env_pool = (text, _Pool(n))
        new = _env_pool[1]
    if old is not None:
        old[1].shutdown()
    return new


def _current():
    """The executor holder asked for (a ``_Pool`` or ``_Given``), or None: this process."""
    setting = _block.get()
    if setting is None:
        setting = _process_setting
    if setting is None:
        setting = _env_setting()
    return None if setting is None or setting is _NONE else setting


def evaluate_chunk(fn, args, P: int, params):
    """What one worker does: the values of the function ``fn`` (its record, a
    :class:`~._functions.RealFunction`, pickled with the chunk) at the flat float64 arrays
    ``args``, round-to-odd at ``P`` bits (an importable entry point for ``spawn`` workers)."""
    from ._functions import _evaluate_values

    return _evaluate_values(fn, args, P, params)


def shared(fn, args, P: int, params):
    """:func:`evaluate_chunk` of the whole input, in chunks over the workers asked for when
    there are at least :data:`PARALLEL_MIN` inputs (else, and by default, in this process).
    The chunks are put back in order: the same values, bit for bit, as one process."""
    n = args[0].size
    holder = _current() if n >= PARALLEL_MIN else None
    if holder is None:
        return evaluate_chunk(fn, args, P, params)
    from concurrent.futures.process import BrokenProcessPool

    from ._mpfr import _Values

    k = max(1, min(4 * holder.n, math.ceil(n / CHUNK_MIN)))
    chunks = np.array_split(np.arange(n), k)
    try:
        pool = holder.executor()
        futures = [pool.submit(evaluate_chunk, fn, [a[c] for a in args], P, params)
                   for c in chunks]
        parts = [f.result() for f in futures]
    except BrokenProcessPool as e:
        holder.shutdown()
        raise RuntimeError(
            "exactref's worker processes stopped before finishing (asked for by set_workers, "
            "workers or EXACTREF_WORKERS): they are started by 'spawn' and import your main "
            "module, so a script that asks for workers must keep its work under "
            "`if __name__ == \"__main__\":`; else ask for none (set_workers(1), or unset "
            "EXACTREF_WORKERS)") from e
    out = _Values.empty(n, parts[0].L)
    for c, part in zip(chunks, parts, strict=True):
        out.put(c, part)
    return out
