"""Test-suite helpers: :func:`assert_covers`, a pytest plugin and hypothesis strategies.

``assert_covers(actual, expected)`` fails with a report in the shape of
``torch.testing.assert_close``: how many elements are not covered, the worst one against its
allowed interval and its distance in ulps, the reference there, and the inputs in hex.

>>> import exactref as er
>>> from exactref.testing import assert_covers
>>> x = er.asarray([1.0, 2.0], "bfloat16")
>>> result = er.add(x, er.asarray([2.0**-9, 0.5], "bfloat16"))
>>> assert_covers(er.asarray([1.0, 2.5], "bfloat16"), result)  # covered: returns None
>>> assert_covers(er.asarray([1.0078125, 2.5], "bfloat16"), result)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
AssertionError: Tensor-likes are not covered by the exact reference!
<BLANKLINE>
Mismatched elements: 1 / 2 (50.0%)
Greatest distance outside the allowed interval: 1 ulp at index (0,) (actual 1.0078125, allowed [1.0, 1.0])
...

``exactref.testing.strategies`` draws exact values of every format (hypothesis has none for
bfloat16 or the float8 formats); ``exactref.testing._plugin`` is the pytest plugin (entry point
``pytest11: exactref``) that makes a failing ``assert result.covers(out).all()`` print the same
report. Importing this package needs neither pytest nor hypothesis; the submodules load on
first use.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._array import Array
from .._exact import ComplexValue, FloatValue
from .._formats import Format
from .._formats import dtype as _resolve_dtype
from ..interop import is_torch_tensor

__all__ = ["assert_covers", "strategies"]

_HEADER = "Tensor-likes are not covered by the exact reference!"


# ------------------------------------------------------------------------------ the check
def assert_covers(actual, expected, *, msg=None, check_dtype=True) -> None:
    """Raise AssertionError unless ``expected.covers(actual).all()``.

    ``expected``: a :class:`~exactref.Result`, an :class:`~exactref.AnyOf`, or anything with a
    ``covers(actual)`` method returning a :class:`~exactref.Coverage`. ``actual``: what
    ``covers`` accepts (torch/numpy/jax arrays, er.Arrays, lists, scalars). As with
    ``torch.testing.assert_close``, the shape must match the reference's exactly and, unless
    ``check_dtype=False``, the dtype must be the reference's format.

    ``msg``: a string, shown above the report; or a callable that takes the report and returns
    the message to raise (as torch's ``msg`` callable).
    """
    __tracebackhide__ = True
    rounded = getattr(expected, "rounded", None)
    if isinstance(rounded, Array):
        problem = _check_meta(actual, rounded, check_dtype)
        if problem:
            raise AssertionError(_with_msg(problem, msg))
    coverage = expected.covers(actual)
    if coverage.all():
        return None
    report = "\n".join(_explain(coverage, expected, actual))
    raise AssertionError(_with_msg(report, msg))


def _with_msg(report: str, msg) -> str:
    # Note: torch.testing.assert_close replaces its message by a string ``msg``; here a string
    # is put above the report, which is the point of this helper. A callable is torch's.
    if msg is None:
        return report
    if callable(msg):
        return msg(report)
    return f"{msg}\n\n{report}"


def _check_meta(actual, rounded: Array, check_dtype: bool) -> str | None:
    """A torch-style message for a shape or dtype mismatch, or None."""
    shape = _shape_of(actual)
    if shape is not None and tuple(shape) != tuple(rounded.shape):
        return (f"The values for attribute 'shape' do not match: {tuple(shape)} != "
                f"{tuple(rounded.shape)}.\n\nThe actual output has shape {tuple(shape)}, the "
                f"exact reference {tuple(rounded.shape)}.")
    if not check_dtype:
        return None
    got = _format_of(actual)
    if got is None or got is rounded.dtype:
        return None
    name = got.name if isinstance(got, Format) else str(got)
    return (f"The values for attribute 'dtype' do not match: {name} != {rounded.dtype.name}.\n\n"
            f"The actual output is {name}, the exact reference's format is "
            f"{rounded.dtype.name}. Pass check_dtype=False to compare the values anyway, or "
            f"compute the reference in {name} (dtype={name!r}).")


def _shape_of(actual):
    inner = getattr(actual, "rounded", None)
    if isinstance(inner, Array):
        return inner.shape
    if isinstance(actual, Array) or is_torch_tensor(actual) or hasattr(actual, "shape"):
        return tuple(actual.shape)
    if isinstance(actual, (list, tuple, numbers.Number, FloatValue, ComplexValue)):
        try:
            return np.shape(np.array(actual, dtype=object))
        except ValueError:  # ragged: covers() says so
            return None
    return None


def _format_of(actual):
    """The exactref Format of ``actual``'s dtype; its dtype as given if exactref has no such
    format; None for Python numbers and lists (no dtype to check)."""
    inner = getattr(actual, "rounded", None)
    if isinstance(inner, Array):
        return inner.dtype
    if isinstance(actual, Array):
        return actual.dtype
    dt = getattr(actual, "dtype", None)
    if dt is None:
        return None
    try:
        return _resolve_dtype(dt)
    except (TypeError, ValueError):
        return dt


# ------------------------------------------------------------------------------ the report
def _explain(coverage, expected=None, actual=None) -> list[str]:
    """The lines of the report on a Coverage with uncovered elements.

    ``expected`` (the Result or AnyOf behind ``coverage``) adds the reference value, the
    tolerance, the operation and the inputs; ``actual`` lets an AnyOf show each alternative's
    interval. Used by :func:`assert_covers` and the pytest plugin.
    """
    fmt = coverage.format
    n = coverage.mask.size
    k = coverage.uncovered
    lines = [_HEADER, "", f"Mismatched elements: {k} / {n} ({k / max(n, 1):.1%})"]
    if k == 0:
        return lines
    index = coverage.worst_index
    act, lo, hi = coverage.interval(index)
    allowed = [(lo, hi)]
    alternatives = getattr(expected, "results", None)
    if alternatives is not None and actual is not None:
        allowed = []
        for alt in alternatives:
            _, alo, ahi = alt.covers(actual).interval(index)
            if (alo, ahi) not in allowed:
                allowed.append((alo, ahi))
    ulps = coverage.worst_ulps
    dist = _ulps_text(ulps)
    intervals = " or ".join(f"[{_dec(a, fmt)}, {_dec(b, fmt)}]" for a, b in allowed)
    lines.append(f"Greatest distance outside the allowed interval: {dist} ulp at index "
                 f"{index} (actual {_dec(act, fmt)}, allowed {intervals})")
    if not fmt.is_integer:
        hexes = " or ".join(f"[{_hex(a, fmt)}, {_hex(b, fmt)}]" for a, b in allowed)
        lines.append(f"In hex: actual {_hex(act, fmt)}, allowed {hexes}")
    if math.isinf(ulps):
        lines.append("(a NaN or an infinity that no modelled implementation produces)")
    rounded = getattr(expected, "rounded", None)
    if isinstance(rounded, Array):
        value = rounded.value(index)
        text = _dec(value, fmt)
        if fmt.kind == "complex":
            text += f" {_hex(value, fmt)}"
        elif not fmt.is_integer:
            text += f" ({_hex(value, fmt)})"
        tol = _tolerance_at(expected, index)
        if tol is not None:
            text += f", tolerance {tol!r}"
        lines.append(f"Expected (the exact value rounded once): {text}")
    lines.append(f"Output format: {fmt.name}{_op_note(expected)}")
    lines.extend(_input_lines(expected, index))
    return lines


def _ulps_text(ulps: float) -> str:
    if math.isinf(ulps):
        return "inf"
    if ulps.is_integer() and ulps < 2**53:
        return str(int(ulps))
    return f"{ulps:.3g}"


def _op_note(expected) -> str:
    first = (getattr(expected, "results", None) or [expected])[0]
    op = getattr(first, "op", "")
    models = getattr(first, "models", ())
    alternatives = getattr(expected, "results", None)
    parts = []
    if op:
        parts.append(op)
    if models:
        parts.append("modelled implementations: " + ", ".join(models))
    if alternatives is not None and len(alternatives) > 1:
        parts.append(f"any of {len(alternatives)} results")
    return f" ({'; '.join(parts)})" if parts else ""


def _tolerance_at(expected, index):
    tolerance = getattr(expected, "tolerance", None)
    if tolerance is None:
        return None
    try:
        return float(np.asarray(tolerance())[index])
    except (TypeError, ValueError, IndexError):
        return None


def _input_lines(expected, index) -> list[str]:
    if not isinstance(getattr(expected, "rounded", None), Array):
        return []  # not a Result: nothing to say about inputs
    first = (getattr(expected, "results", None) or [expected])[0]
    inputs = getattr(first, "inputs", None)
    if not inputs:
        return ["Inputs: not recorded by this Result"]
    lines = [f"Inputs at index {index}:"]
    for name, value in inputs.items():
        lines.append(f"  {_input_at(name, value, index)}")
    return lines


def _input_at(name, value, index) -> str:
    """``name[i] = hex (format)`` for an operand, broadcast to the output's ``index``."""
    inner = getattr(value, "rounded", None)
    if isinstance(inner, Array):
        value = inner
    if isinstance(value, Array):
        shape = value.shape
        offset = len(index) - len(shape)
        own = tuple(0 if size == 1 else index[offset + d] for d, size in enumerate(shape))
        v = value.value(own)
        where = f"[{', '.join(map(str, own))}]" if own else ""
        return f"{name}{where} = {_exact_text(v)} ({value.dtype.name})"
    return f"{name} = {_exact_text(value)} (Python {type(value).__name__})"


def _exact_text(v) -> str:
    if isinstance(v, bool) or isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, (FloatValue, ComplexValue)):
        return v.hex()
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        return ComplexValue(v).hex()
    try:
        return FloatValue(v).hex()
    except (TypeError, ValueError):
        return repr(v)


def _dec(v, fmt: Format) -> str:
    """A value in decimal: Python's shortest repr (exact formats' values read back exactly)."""
    if isinstance(v, (FloatValue, ComplexValue)):
        v = complex(v) if isinstance(v, ComplexValue) else float(v)
    if fmt.kind == "bool":
        return repr(bool(v))
    if fmt.is_integer:
        return repr(int(v)) if not (isinstance(v, float) and not math.isfinite(v)) else repr(v)
    if fmt.kind == "complex":
        return repr(complex(v))
    return repr(float(v))


def _hex(v, fmt: Format) -> str:
    if fmt.kind == "complex":
        return ComplexValue(complex(v)).hex()
    return FloatValue(float(v)).hex()


# ------------------------------------------------------------------------------ submodules
def __getattr__(name):
    # The submodules load on first use: strategies imports hypothesis and _plugin pytest only
    # when they are called or loaded, so ``import exactref.testing`` needs neither.
    if name in ("strategies", "_plugin"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
