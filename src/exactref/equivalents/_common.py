"""Shared machinery of the equivalents: operands as a library sees them, casts, and Results
built from bounds.

An equivalent first does what the library does before its kernel runs (pick the result dtype,
convert every operand and scalar to what the kernel reads, the way that library converts), then
asks exactref's ops for the exact reference of what the kernel computes on those values, with
the kernel's freedoms as modelled implementations.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._array import Array, asarray
from .._exact import ComplexValue, FloatValue
from .._formats import FORMATS, Format, holds
from .._operands import Opnd, prepare, to_array
from .._result import AnyOf, Result

__all__ = ["Operand", "operand", "broadcast", "bounds_result", "pin_result", "map_result", "convert",
           "python_scalar", "shaped"]

F32 = FORMATS["float32"]
F64 = FORMATS["float64"]


@dataclass
class Operand(Opnd):
    """One operand as a library sees it: the ops' own operand (:class:`exactref._operands.Opnd`,
    read by :func:`exactref._operands.prepare`: an array, an er.Array in its own format, or an
    exact scalar) with what the caller passed (``source``, for the promotion policy). A
    scalar's :attr:`scalar` is the Python number the library reads (bool, int, float or
    complex; numpy scalars become Python scalars where the library reads them so)."""

    source: object = None  # what the caller passed (for the promotion policy)

    @classmethod
    def of_array(cls, label: str, array: Array, source=None) -> Operand:
        return cls("array", array=array, label=label, source=source)

    @property
    def is_scalar(self) -> bool:
        return self.array is None

    @property
    def scalar(self):
        """The scalar as a Python number (None for an array)."""
        v = self.value
        if isinstance(v, FloatValue):
            return float(v)
        if isinstance(v, ComplexValue):
            return complex(v)
        return v

    @property
    def shape(self) -> tuple:
        return () if self.array is None else tuple(self.array.shape)

    @property
    def size(self) -> int:
        return 1 if self.array is None else int(self.array.size)

    @property
    def promotion(self):
        """What a promotion policy sees: the array as passed, or the Python scalar."""
        return self.scalar if self.array is None else self.array


def operand(x, label: str, *, numpy_scalars_are_python: bool = True) -> Operand:
    """An :class:`Operand` from a torch tensor, numpy/jax array, er.Array, earlier Result,
    nested list, or Python/numpy scalar, read as the ops read it (:func:`prepare`)."""
    if isinstance(x, (Result, AnyOf)):
        x = x.rounded
    if isinstance(x, np.generic) and numpy_scalars_are_python:
        x = x.item()
    source = x
    if isinstance(x, np.bool_):  # a numpy bool is a Python bool to every library here
        x = bool(x)
    elif isinstance(x, Fraction):  # the library reads the float nearest to it
        x = float(x)
    o = prepare(x, label)
    return Operand(o.kind, array=o.array, value=o.value, label=label, source=source)


def python_scalar(v):
    """A scalar as the Python number a kernel's scalar argument reads: numpy scalars, exact
    FloatValue/ComplexValue and bool become float, complex or int."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, FloatValue):
        v = float(v)
    if isinstance(v, ComplexValue):
        v = complex(v)
    return v


def broadcast(*ops: Operand) -> tuple:
    """The broadcast shape of the array operands (a ValueError naming both shapes otherwise)."""
    shapes = [o.shape for o in ops if not o.is_scalar]
    try:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        names = " and ".join(f"{o.label} of shape {o.shape}" for o in ops if not o.is_scalar)
        raise ValueError(
            f"{names} do not broadcast (NumPy rules: trailing dimensions must match or be 1); "
            f"reshape one of them") from None


def convert(values, fmt, **kw) -> Array:
    """``er.asarray(values, fmt, **kw)`` keeping the shape of ``values`` (er.asarray turns a 0-d
    numpy array or er.Array of another format into shape (1,))."""
    shape = tuple(values.shape) if hasattr(values, "shape") else np.shape(values)
    arr = asarray(values, fmt, **kw)
    if tuple(arr.shape) != shape:
        arr = Array(arr.numpy().reshape(shape), arr.dtype)
    return arr


def in_float32(fmt: Format) -> bool:
    """Whether float32 (complex64 for complex formats) holds every value of ``fmt``."""
    target = FORMATS["complex64"] if fmt.kind == "complex" else F32
    return holds(target, fmt)


# ----------------------------------------------------------------- Results from bounds
def bounds_result(rounded: Array, lows, highs, *, op: str, models=(), details=None,
                  extra=()) -> Result:
    """A Result whose candidates per part are ``rounded``, the ``lows`` and ``highs`` (float64
    arrays, one per part) and any ``extra`` candidate arrays (per part lists)."""
    ref = [rounded._wide().astype(np.float64)] if rounded.dtype.kind != "complex" else [
        rounded._wide().real.astype(np.float64), rounded._wide().imag.astype(np.float64)]
    cands = []
    for i, r in enumerate(ref):
        c = [r, np.asarray(lows[i], dtype=np.float64), np.asarray(highs[i], dtype=np.float64)]
        c.extend(np.asarray(e[i], dtype=np.float64) for e in extra)
        cands.append(c)
    return Result(rounded, cands, op=op, models=models, details=details)


def shaped(res, shape: tuple):
    """``res`` (a Result or AnyOf computed on flattened operands, at least one element) in the
    result's shape (0-d and empty results included)."""
    if isinstance(res, AnyOf):
        return AnyOf([shaped(r, shape) for r in res.results])
    size = int(np.prod(shape, dtype=np.int64))
    rounded = res.rounded.numpy()
    if rounded.size != size:
        rounded = rounded[:size]
    out = Result(Array(rounded.reshape(shape), res.rounded.dtype),
                 [[np.broadcast_to(c, res.rounded.shape).reshape(-1)[:size].reshape(shape)
                   for c in part] for part in res._candidates],
                 op=res.op, models=res.models, details=res.details)
    out.inputs = res.inputs
    return out


def pin_result(result, hit, value: float):
    """``result`` (a BoundResult) with every element where ``hit`` fixed to ``value``, in the
    rounded output and the bounds: what a library's formula gives there whatever the exact
    value is (torch's NaN where a softmax row holds +inf, its zero gradient for a query with no
    key). NaN marks those elements NaN; any other value makes them exactly that number."""
    if not hit.any():
        return result
    hit = np.broadcast_to(hit, result.rounded.shape)
    vals = np.where(hit, value, np.asarray(result.rounded.numpy(), dtype=np.float64))
    result.rounded = asarray(vals, result.rounded.dtype)
    inner = result._compute_bounds
    is_nan = bool(np.isnan(value))

    def bounds():
        lo, hi, nan = inner()[0]
        return [(np.where(hit, value, lo), np.where(hit, value, hi),
                 (nan | hit) if is_nan else (nan & ~hit))]

    result._compute_bounds = bounds
    result._cached = None
    return result


def map_result(result, fmt: Format, *, caster=None, op: str | None = None):
    """A Result's candidates stored into ``fmt`` (a cast after the op).

    ``caster(values, component_format)`` converts float64 arrays (default: to nearest even,
    with the format's overflow rule). A cast is monotone, so the casts of the candidates bound
    the cast of anything between them; the reference is the inner reference cast.
    """
    if isinstance(result, AnyOf):
        return AnyOf([map_result(r, fmt, caster=caster, op=op) for r in result.results])
    if caster is None:
        def caster(values, comp):
            return convert(values, comp)._wide().astype(np.float64)
    comp = fmt.component
    cands = [[caster(np.asarray(c, dtype=np.float64), comp) for c in part]
             for part in result._candidates]
    ref = [caster(p, comp) for p in _parts(result.rounded)]
    rounded = to_array(ref, fmt, result.rounded.shape)
    return Result(rounded, cands, op=op or result.op, models=result.models,
                  details=dict(result.details, stored=fmt))


def _parts(arr: Array):
    w = arr._wide()
    if arr.dtype.kind == "complex":
        return [w.real.astype(np.float64), w.imag.astype(np.float64)]
    return [w.astype(np.float64)]
