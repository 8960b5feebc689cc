"""Calling the audited kernel: a per-call time limit, and the kernel's exceptions told apart.

Every call of the audited library or kernel goes through :func:`call_with_timeout`: with a
limit, the call runs in a daemon thread (no process is started, nothing is re-executed) that
the audit waits on for at most ``timeout`` seconds; one that does not return by then is given
up on (the thread is left running, abandoned: Python cannot stop it) and raises
:class:`KernelTimeout`, and the audit stops there with that group failed. ``timeout=None`` or
0 calls in the audit's own thread.

A user's ``module:function`` kernel that raises is the kernel's failure, not exactref's: the
group fails with the exception's type and message and the call that was made
(:class:`KernelRaised`), except where the kernel says it has no implementation for the
operands' formats, which makes the group ``unsupported`` (:func:`says_unsupported`).

>>> import numpy as np
>>> describe_call("softmax", [np.zeros((8, 48), np.float32)], {"axis": -1})
'softmax(float32[8,48], axis=-1)'
>>> says_unsupported(TypeError("no kernel for dtype bfloat16"), [])
True
>>> says_unsupported(TypeError("softmax() got an unexpected keyword argument 'axis'"), [])
False
"""

from __future__ import annotations

import contextvars
import inspect
import re
import threading

import numpy as np

__all__ = ["KernelFault", "KernelRaised", "KernelTimeout", "KernelUnsupported",
           "call_with_timeout", "describe_call", "says_unsupported", "DEFAULT_TIMEOUT"]

#: The default per-call limit in seconds (``--timeout``): generous, far beyond any group of
#: the audit (the largest, torch's cross_entropy over a vocabulary of 4000, takes seconds).
DEFAULT_TIMEOUT = 300.0


class KernelFault(Exception):
    """A custom kernel misbehaved (returned None, or something that is not an array; raised;
    did not return in time): the group fails, and the fault is the kernel's, not exactref's."""


class KernelRaised(KernelFault):
    """The kernel raised: ``raised`` is its exception."""

    def __init__(self, message, raised):
        super().__init__(message)
        self.raised = raised


class KernelTimeout(KernelFault):
    """The kernel did not return within the audit's time limit; the audit stops."""


class KernelUnsupported(NotImplementedError):
    """The kernel says it has no implementation for these operands' formats."""


def call_with_timeout(fn, args=(), kwargs=None, timeout=None, what="the kernel"):
    """``fn(*args, **kwargs)``, given up on after ``timeout`` seconds (None or 0: no limit)
    with :class:`KernelTimeout`; the call's exception is re-raised as it is. The call runs in
    a copy of the caller's context (``np.errstate`` and other context variables hold there)."""
    kwargs = kwargs or {}
    if not timeout:
        return fn(*args, **kwargs)
    box: dict = {}
    ctx = contextvars.copy_context()

    def body():
        try:
            box["value"] = ctx.run(fn, *args, **kwargs)
        except BaseException as exc:  # handed to the audit's thread, raised there
            box["error"] = exc

    worker = threading.Thread(target=body, name="exactref-audit-call", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise KernelTimeout(
            f"{what} did not return within {timeout:g} s (--timeout {timeout:g}): given up on, "
            f"its call left running in a daemon thread; the audit stopped here. If the kernel "
            f"is only slow, pass a larger --timeout (0: no limit)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _format_name(v) -> str:
    """The exactref name of an operand's dtype (numpy's spelling where exactref has none)."""
    from .._formats import dtype as resolve_dtype

    try:
        return resolve_dtype(v.dtype).name
    except (TypeError, ValueError):
        return str(v.dtype)


def _operand_text(v) -> str:
    if isinstance(v, np.ndarray) or hasattr(v, "dtype") and hasattr(v, "shape"):
        return f"{_format_name(v)}[{','.join(map(str, v.shape))}]"
    return repr(v)


def describe_call(name, args, kwargs) -> str:
    """The call as the audit made it: each array as ``format[shape]``, scalars as values."""
    parts = [_operand_text(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def signature_text(fn) -> str | None:
    """``fn``'s parameters as written, or None where Python cannot read them (a builtin)."""
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return None


def binds(fn, args, kwargs) -> bool | None:
    """Whether ``fn`` accepts these arguments by its signature (None: it has none to read)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


#: Phrases with which libraries say an operand's format has no kernel (numpy's ufuncs).
_UNSUPPORTED_PHRASES = ("dtype", "not supported for the input types", "did not contain a loop")


def says_unsupported(exc, args) -> bool:
    """Whether the kernel's exception says it has no implementation for the operands'
    formats: a NotImplementedError (always), or a TypeError whose message names a dtype
    (the word ``dtype``, numpy's ``not supported for the input types`` / ``did not contain a
    loop``, or the name of one of the operands' formats, as ``bfloat16``). Any other
    TypeError (a wrong keyword, a wrong number of operands, an error inside the kernel) is
    the kernel's failure."""
    if isinstance(exc, NotImplementedError):
        return True
    if not isinstance(exc, TypeError):
        return False
    text = str(exc).lower()
    if any(p in text for p in _UNSUPPORTED_PHRASES):
        return True
    names = {_format_name(a) for a in args if hasattr(a, "dtype")}
    return any(re.search(rf"\b{re.escape(n)}\b", text) for n in names)
