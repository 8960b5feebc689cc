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
from .._result import ulps_text
from ..interop import is_torch_tensor
from ._stochastic import assert_stochastic

__all__ = ["assert_covers", "assert_stochastic", "strategies"]

_HEADER = "Tensor-likes are not covered by the exact reference!"


# ------------------------------------------------------------------------------ the check
def assert_covers(actual, expected, *, msg=None, check_dtype=True, ulps=0, atol=0.0,
                  rtol=0.0, baseline=None, factor=2.0, contract=None) -> None:
    """Raise AssertionError unless ``expected.covers(actual).all()``.

    ``expected``: a :class:`~exactref.Result`, an :class:`~exactref.AnyOf`, or anything with a
    ``covers(actual)`` method returning a :class:`~exactref.Coverage`. ``actual``: what
    ``covers`` accepts (torch/numpy/jax arrays, er.Arrays, lists, scalars). As with
    ``torch.testing.assert_close``, the shape must match the reference's exactly and, unless
    ``check_dtype=False``, the dtype must be the reference's format. The arguments may come in
    either order: a Result (or AnyOf) is the reference wherever it is, so
    ``assert_covers(result, out)`` checks ``out``.

    ``ulps``, ``atol``, ``rtol``: slack for kernels that are approximate on purpose (a fast
    exp, a low-precision accumulator): an element also passes within ``ulps * ulp(reference)
    + atol + rtol * |reference|`` of the interval the modelled implementations allow (per part,
    for complex outputs; a NaN or an infinity is never within slack). All default to 0: only
    what a correct implementation may produce passes.

    ``baseline``, ``factor``: the comparative check instead of the models (``expected.covers(
    actual, baseline=baseline, factor=factor)``): ``actual`` within ``factor`` times the
    baseline implementation's error of the exact value, plus half an ulp. For a kernel whose
    implementation cannot be stated; ``ulps``/``atol``/``rtol`` do not combine with it.

    ``msg``: a string, shown above the report; or a callable that takes the report and returns
    the message to raise (as torch's ``msg`` callable).

    ``contract``: the implementation's declared :class:`~exactref.Contract` (or a mapping of
    its fields): ``actual`` is checked against ``expected.under(contract)``, the reference
    recomputed from its recorded call under that contract (its fields over the ones the call
    had; a field the op lacks says nothing about it). The report names the contract.

    >>> import exactref as er
    >>> r = er.add(er.asarray([1.0], "float32"), er.asarray([2.0**-30], "float32"))
    >>> assert_covers(r, er.asarray([1.0000001192092896], "float32"), ulps=1)  # 1 ulp off
    """
    __tracebackhide__ = True
    if _is_reference(actual) and not _is_reference(expected):
        actual, expected = expected, actual  # Note: a Result is the reference either way
    if not callable(getattr(expected, "covers", None)):
        raise TypeError(
            f"assert_covers(actual, expected) needs a reference with a covers() method (a "
            f"Result of er.add, er.matmul, the equivalents...) as one of its arguments; got "
            f"{type(actual).__name__} and {type(expected).__name__}")
    if contract is not None:
        expected = _under(expected, contract)
    slack = _slack(ulps, atol, rtol)
    if baseline is not None and slack is not None:
        raise ValueError("assert_covers: baseline= (the comparative check) does not combine "
                         "with ulps/atol/rtol slack; use factor= to loosen it")
    rounded = getattr(expected, "rounded", None)
    if isinstance(rounded, Array):
        problem = _check_meta(actual, rounded, check_dtype)
        if problem:
            raise AssertionError(_with_msg(problem, msg))
    coverage = expected.covers(actual) if baseline is None else expected.covers(
        actual, baseline=baseline, factor=factor)
    if slack is not None and not coverage.all():
        coverage = _with_slack(coverage, expected, actual, slack)
    if coverage.all():
        return None
    lines = _explain(coverage, expected, actual)
    if contract is not None:
        applied = getattr(expected, "contract", None)
        said = applied.describe() if applied is not None else str(contract)
        lines.insert(3, f"Under the contract: {said}")
    if slack is not None:
        lines.insert(3, f"Slack beyond the modelled interval: ulps={ulps}, atol={atol}, "
                        f"rtol={rtol}")
    raise AssertionError(_with_msg("\n".join(lines), msg))


def _under(expected, contract):
    """``expected`` recomputed under ``contract`` (``Result.under``); a TypeError saying why
    where the reference cannot be (no recorded call: a Result built by hand, an equivalent's
    composition)."""
    from .._contract import Contract

    if not isinstance(contract, Contract):
        contract = Contract.from_mapping(contract)
    under = getattr(expected, "under", None)
    if under is None:
        raise TypeError(f"assert_covers(..., contract=...): the reference "
                        f"({type(expected).__name__}) cannot be recomputed under a contract (it "
                        f"has no under()); pass the Result of an er.<op> call, or compute it "
                        f"with contract= yourself")
    return under(contract)


def _is_reference(obj) -> bool:
    return callable(getattr(obj, "covers", None)) and isinstance(getattr(obj, "rounded", None),
                                                                 Array)


def _slack(ulps, atol, rtol):
    """``(ulps, atol, rtol)`` checked, or None when there is no slack."""
    for name, v in (("ulps", ulps), ("atol", atol), ("rtol", rtol)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name}={v!r} ({type(v).__name__}) must be a real number")
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{name}={v!r} must be finite and at least 0 (0: no slack)")
    if ulps == 0 and atol == 0 and rtol == 0:
        return None
    return float(ulps), float(atol), float(rtol)


def _with_slack(coverage, expected, actual, slack):
    """``coverage`` where elements within the slack of their interval count as covered (for
    an AnyOf, within the slack of any alternative's interval)."""
    from .._result import Coverage

    alternatives = getattr(expected, "results", None)
    covs = [alt.covers(actual) for alt in alternatives] if alternatives else [coverage]
    near = np.zeros(coverage.shape, bool)
    for cov in covs:
        ref = getattr(cov.reference, "rounded", None)
        if not isinstance(ref, Array):
            return coverage  # no reference value to scale the slack by
        near |= cov.mask | _within(cov, ref, slack)
    mask = coverage.mask | near
    out = Coverage(mask, np.where(mask, 0.0, coverage._dist), coverage._actual, coverage._lo,
                   coverage._hi, coverage.format, undefined=coverage.undefined,
                   masked=coverage.masked)
    out.reference = coverage.reference
    return out


def _within(cov, ref: Array, slack) -> np.ndarray:
    from .._exact import ulp
    from .._result import part_values

    ulps, atol, rtol = slack
    fmt = cov.format
    refs = part_values(ref)
    size = np.abs(ref._wide().astype(np.complex128 if fmt.kind == "complex" else np.float64))

    def parts(v):
        v = np.asarray(v)
        return [v.real.astype(np.float64), v.imag.astype(np.float64)] if fmt.kind == \
            "complex" else [v.astype(np.float64)]

    ok = np.ones(cov.shape, bool)
    for a, lo, hi, r in zip(parts(cov._actual), parts(cov._lo), parts(cov._hi), refs,
                            strict=True):
        with np.errstate(invalid="ignore", over="ignore"):
            allowed = ulps * ulp(r, fmt) + atol + rtol * size
            gap = np.maximum(np.fmax(lo - a, a - hi), 0.0)
            ok &= np.isfinite(a) & (gap <= allowed)
    return ok


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
    dist = ulps_text(ulps)
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
    if isinstance(rounded, Array):
        lines.append(_strength_line(coverage, expected))
    lines.extend(_input_lines(expected, index))
    return lines


def _strength_line(coverage, expected) -> str:
    """How strong the check was: the tolerance's median and largest, in ulps."""
    med, top = coverage.tolerance_stats
    if math.isnan(med):
        return "Check strength: unknown (the reference gives no tolerance)"
    line = (f"Check strength: tolerance median {ulps_text(med)} ulp, largest "
            f"{ulps_text(top)} ulp of {coverage.format.name} over {coverage.mask.size} "
            f"elements")
    why = getattr(expected, "weak_check", None)
    if callable(why) and why():
        line += " (a weak check: see exactref.WeakCheckWarning)"
    return line


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
    slices = getattr(first, "input_slices", None)
    if callable(slices):  # a long sum: the row, column or values the element reads
        for label, arr in slices(index):
            lines.append(f"  {_slice_text(label, arr)}")
        terms = getattr(first, "terms_sum", None)
        if terms is not None:
            lines.append(f"  {_terms_text(first, terms, index)}")
        scalars = {k: v for k, v in inputs.items() if not isinstance(v, Array)}
        lines += [f"  {_input_at(name, value, index)}" for name, value in scalars.items()]
        return lines
    for name, value in inputs.items():
        lines.append(f"  {_input_at(name, value, index)}")
    return lines


#: the values of a long sum's row or column a report shows (the first and last half of them)
_SHOWN = 8


def _slice_text(label, arr: Array) -> str:
    """``a[1, :] = [0x1p+0, ...] (float32, 48 values)``: a long sum's operand slice in hex."""
    if arr.ndim == 0:
        return f"{label} = {_exact_text(arr.value())} ({arr.dtype.name})"
    flat = arr.tolist()
    flat = np.ravel(np.asarray(flat, dtype=object)).tolist()
    n = len(flat)
    if n > _SHOWN:
        half = _SHOWN // 2
        shown = [_exact_text(v) for v in flat[:half]] + [f"... {n - _SHOWN} more ..."] + [
            _exact_text(v) for v in flat[-half:]]
    else:
        shown = [_exact_text(v) for v in flat]
    what = f"{arr.dtype.name}, {n} value{'s' * (n != 1)}"
    return f"{label} = [{', '.join(shown)}] ({what})"


def _terms_text(result, terms, index) -> str:
    """The sum of |terms| at ``index`` against the result: how much the sum cancels."""
    t = float(np.asarray(terms)[index])
    size = abs(complex(np.asarray(result.rounded._wide())[index]))
    if t == 0:
        return "sum of |terms|: 0 (every term an exact zero)"
    ratio = "inf" if size == 0 else f"{t / size:.3g}"
    return f"sum of |terms| <= {t:.6g}, {ratio} times |result| (the larger, the more it cancels)"


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
