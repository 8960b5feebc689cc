"""The call of a PyTorch elementwise op as its TensorIterator sees it, and the Results the
torch equivalents build from what its kernel computes (shared by :mod:`._torch_ops`,
:mod:`._torch_select`, :mod:`._torch_cast` and :mod:`._torch_functions`).

:func:`_call` prepares a call (operands, the torch policy's result and compute dtypes, the
check for a missing CPU kernel); :func:`_form` and :func:`_paths` make the Result whose
reference is the mathematical answer and whose candidates are what each path of the kernel
computes; :func:`_faithful` a kernel within some units in the last place; :func:`_scalar_to`
converts a kernel's scalar parameter as c10 does.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._array import Array, assemble
from .._exact import ComplexValue, FloatValue, Rounding
from .._formats import Format
from .._result import AnyOf, Result, any_of
from ..arithmetic import conversion
from ..promotion import TORCH_C10_NAME as C10_NAME
from ..promotion import TORCH_CPU_KERNEL_GAPS as CPU_KERNEL_GAPS
from ..promotion import op_family, resolve
from ._common import F32, F64, broadcast, operand, python_scalar, shaped
from .torch import TorchUnsupported, _as_tensor, convert_alpha, torch_overflow
from .torch import cast as cast_values

_NE = Rounding.NEAREST_EVEN
_DOWN, _UP = Rounding.TOWARD_NEGATIVE, Rounding.TOWARD_POSITIVE
#: PyTorch's reduced floating dtypes: their kernels compute in float32 (``at::opmath_type``)
_REDUCED = ("float16", "bfloat16")


def _quiet(fn):
    """Run an equivalent with numpy's "invalid" warnings off: a signaling NaN operand (a bit
    pattern PyTorch takes as it is) warns when numpy widens it, and means nothing here."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        with np.errstate(invalid="ignore"):
            return fn(*args, **kw)
    return wrapper


# ------------------------------------------------------------------------------ the call
@dataclass
class _Call:
    """One call of a PyTorch op as its TensorIterator sees it: the operands (None: absent), the
    result's shape, the result dtype and the dtype the kernel computes in (``common``)."""

    name: str
    ops: list
    shape: tuple
    out: Format
    common: Format

    def read(self, i: int, fmt: Format | None = None) -> Array:
        """Operand ``i`` as the kernel reads it: cast into ``fmt`` (default: the common dtype)
        by PyTorch's cast, broadcast to the result's shape and flattened (at least one element:
        the Result is given its shape at the end, see :func:`_shaped`)."""
        o = self.ops[i]
        arr = cast_values(_as_tensor(o), fmt or self.common)
        data = np.broadcast_to(arr.numpy(), self.shape).reshape(-1).copy()
        return Array(data if data.size else np.zeros(1, data.dtype), arr.dtype)

    def opmath_scalar(self, i: int) -> bool:
        """Whether operand ``i`` is a CPU scalar to TensorIterator (``iter.is_scalar``: one
        element, or a tensor whose every stride is 0)."""
        o = self.ops[i]
        if o.is_scalar or o.size == 1:
            return True
        src = o.source
        if hasattr(src, "stride") and hasattr(src, "is_contiguous"):
            return all(s == 0 or n == 1 for s, n in zip(src.stride(), src.shape, strict=True))
        return False

    def original(self, i: int):
        """Operand ``i`` as given, for the mathematical reference: the Python scalar (exact),
        or its array's values as float64, flattened (an array of another format would take
        part in er's own promotion)."""
        o = self.ops[i]
        return o.scalar if o.is_scalar else _flatten(cast_values(o.array, F64), self.shape)

    def original_f32(self, i: int) -> Array:
        """``iter.original_scalar_value<float>(i)``: the operand's original value (before the
        cast into the common dtype) converted to float32, broadcast and flattened."""
        o = self.ops[i]
        return self.read(i, F32) if o.is_scalar else _flatten(cast_values(o.array, F32),
                                                              self.shape)


def _flatten(arr: Array, shape) -> Array:
    data = np.broadcast_to(arr.numpy(), shape).reshape(-1).copy()
    return Array(data if data.size else np.zeros(1, data.dtype), arr.dtype)


def _call(name: str, op: str, args, labels, *, tensors=(), kernel=None) -> _Call:
    """Prepare a call of ``torch.<name>``: operands, promotion (the torch policy's errors
    raise), the kernel check (:class:`TorchUnsupported` where torch 2.13 has no CPU kernel),
    and the operands ``tensors`` names, which PyTorch takes only as tensors."""
    ops = [None if a is None else operand(a, label) for a, label in zip(args, labels,
                                                                         strict=True)]
    for i, o in enumerate(ops):
        if o is not None and o.label in tensors and o.is_scalar:
            raise TypeError(f"{name}(): argument '{o.label}' (position {i + 1}) must be Tensor, "
                            f"not {type(o.scalar).__name__} (PyTorch's error); wrap it: "
                            f"torch.tensor({o.scalar!r})")
    present = [o for o in ops if o is not None]
    shape = tuple(broadcast(*present))
    res = resolve(*[o.promotion for o in present], policy="torch", op=op)
    _check_kernel(name, kernel or op, res.compute)
    return _Call(name, ops, shape, res.result, res.compute)


def _check_kernel(name: str, op: str, fmt: Format) -> None:
    if fmt.name in CPU_KERNEL_GAPS.get(op_family(op), ()):
        raise TorchUnsupported(
            f"torch.{name} has no CPU kernel for {fmt.name} in PyTorch 2.13 (it raises "
            f"NotImplementedError: not implemented for '{C10_NAME[fmt.name]}'); compute in "
            f"float32 (or int32) and cast")


# ------------------------------------------------------------------------------ Results
def _parts(values, fmt: Format) -> list:
    """Part arrays of exact values: ``[real]`` or ``[real, imag]`` (float64), or integers."""
    v = np.asarray(values)
    if fmt.kind == "complex":
        v = v.astype(np.complex128)
        return [v.real.copy(), v.imag.copy()]
    if fmt.kind == "float":
        return [v.astype(np.float64)]
    return [v]


def _array(values, fmt: Format) -> Array:
    """An Array of ``fmt`` from exact values (float64, complex128 or integers, 1-d)."""
    data = assemble(fmt, [p.reshape(-1) for p in _parts(values, fmt)])
    return Array(np.asarray(data).astype(fmt.np_dtype), fmt)


def _form(reference, *forms, fmt: Format, model: str) -> Result:
    """A Result whose reference is ``reference`` (a Result, an Array or exact values) and whose
    candidates are ``forms``: what the kernel computes, each an Array or exact values (so
    ``covers`` accepts those values only, zeros with their sign, and any value between two of
    them)."""
    if isinstance(reference, (Result, AnyOf)):
        rounded = reference.rounded
    elif isinstance(reference, Array):
        rounded = reference
    else:
        rounded = _array(reference, fmt)
    cands = None
    for f in forms:
        parts = _parts(f._wide() if isinstance(f, Array) else f, fmt)
        cands = [[] for _ in parts] if cands is None else cands
        for c, p in zip(cands, parts, strict=True):
            c.append(p)
    return Result(rounded, cands, op=getattr(reference, "op", "") or "", models=(model,),
                  details=getattr(reference, "details", {}) or {})


def _paths(reference, forms: dict, fmt: Format):
    """``any_of`` of one :func:`_form` per path (``{model name: values}``), or the one Result
    where the paths agree everywhere."""
    items = list(forms.items())
    results, seen = [], []
    for name, values in items:
        v = values._wide() if isinstance(values, Array) else np.asarray(values)
        if any(_same(v, s) for s in seen):
            continue
        seen.append(v)
        results.append(_form(reference, values, fmt=fmt, model=name))
    return results[0] if len(results) == 1 else any_of(*results)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.all((a == b) & (np.signbit(a.real) == np.signbit(b.real)) & (
            np.signbit(a.imag) == np.signbit(b.imag)) | (np.isnan(a) & np.isnan(b))))
    return bool(np.all(a == b))


#: ``res`` (computed on flattened operands) in the result's shape (0-d included): the
#: equivalents' one copy (``_common.shaped``)
_shaped = shaped


def _pick(mask, a: Array, b: Array) -> Array:
    """Per element, ``a`` where ``mask`` else ``b`` (Arrays of one format, 1-d)."""
    return Array(np.where(mask, a.numpy(), b.numpy()), a.dtype)


def _const(values, fmt: Format) -> Array:
    return _array(np.asarray(values), fmt)


def _real(arr: Array) -> np.ndarray:
    return arr._wide().astype(np.float64)


def _step(values: Array, steps: int, up: bool) -> Array:
    """``values`` moved ``steps`` representable numbers up (or down); infinities, NaN and zeros
    stay (a kernel's error never turns them into something else)."""
    comp = values.dtype.component
    data = values.numpy().astype(comp.np_dtype) if values.dtype.kind != "complex" else None
    if data is None:
        raise TypeError("_step takes a real Array")
    out = data.copy()
    target = np.array(np.inf if up else -np.inf, dtype=out.dtype)
    move = np.isfinite(out.astype(np.float64)) & (out.astype(np.float64) != 0)
    for _ in range(steps):
        with np.errstate(all="ignore"):
            nxt = np.nextafter(out, target) if out.dtype.kind == "f" and out.dtype.itemsize >= 4 \
                else _nextafter_narrow(out, up, comp)
        out = np.where(move, nxt, out)
    return Array(out.astype(values.dtype.np_dtype), values.dtype)


def _nextafter_narrow(data, up, comp):
    """nextafter for float16 and the ml_dtypes formats (by exact rounding of a nudged value)."""
    from .._array import asarray

    wide = data.astype(np.float64)
    mode = _UP if up else _DOWN
    nudge = wide + np.where(up, 1, -1) * np.abs(wide) * 2.0 ** -60 + (
        2.0 ** -1100 if up else -(2.0 ** -1100))
    return asarray(nudge, comp, rounding=mode).numpy().astype(data.dtype)


def _faithful(op, *args, steps: int = 1, **kw) -> Result:
    """The Result of ``op(*args)`` whose candidates are the values up to ``steps``
    representable numbers below and above the exact value, per part: a kernel that promises
    an error below ``steps`` units in the last place (``steps=1``: faithful rounding)."""
    near = op(*args, rounding=_NE, **kw)
    low = op(*args, rounding=_DOWN, **kw).rounded
    high = op(*args, rounding=_UP, **kw).rounded
    fmt = near.rounded.dtype
    lows, highs = [], []
    for lo, hi in zip(_split(low), _split(high), strict=True):
        if steps > 1:
            lo, hi = _step(lo, steps - 1, False), _step(hi, steps - 1, True)
        lows.append(_real(lo))
        highs.append(_real(hi))
    ref = _parts(near.rounded._wide(), fmt)
    cands = [[r, lo, hi] for r, lo, hi in zip(ref, lows, highs, strict=True)]
    return Result(near.rounded, cands, op=near.op, details=near.details,
                  models=(f"within {steps} unit{'s' if steps > 1 else ''} in the last place",))


def _split(arr: Array) -> list:
    """The parts of an Array as real Arrays of its component format."""
    if arr.dtype.kind != "complex":
        return [arr]
    comp = arr.dtype.component
    w = arr._wide()
    return [Array(w.real.astype(comp.np_dtype), comp), Array(w.imag.astype(comp.np_dtype),
                                                                comp)]


def _join(re: Array, im: Array, fmt: Format) -> Array:
    return _from_parts([_real(re), _real(im)], fmt)


def _from_parts(parts, fmt: Format) -> Array:
    """An Array of ``fmt`` from float64 part values it holds exactly (``[re, im]``)."""
    return Array(np.asarray(assemble(fmt, parts)).astype(fmt.np_dtype), fmt)


def _kw(fmt: Format, rounding, overflow=None) -> dict:
    """An er op's keywords for one step that PyTorch stores in ``fmt``: the result rounded once
    into ``fmt`` (``compute=fmt``: no wider intermediate) with PyTorch's overflow rule."""
    kw = dict(dtype=fmt, rounding=rounding,
              overflow=overflow if overflow is not None else torch_overflow(fmt))
    if not fmt.is_integer:
        kw["compute"] = fmt
    return kw


# ------------------------------------------------------------------------- scalars
def _scalar_to(value, fmt: Format, what: str):
    """``Scalar.to<T>()`` for a kernel's scalar parameter (``value`` of addcmul and addcdiv,
    the bounds of clamp): c10's checked conversion. Integers: a float is truncated toward zero
    and must lie in the dtype's range, an int may also lie down to ``-max`` for an unsigned
    dtype (it wraps); floats: through float32 for float16 and bfloat16, an out-of-range finite
    value raises; a complex value for a real dtype raises unless its imaginary part is 0."""
    v = python_scalar(value)
    name = C10_NAME.get(fmt.name, fmt.name)
    if isinstance(v, complex) and fmt.kind != "complex":
        if v.imag != 0:
            raise ValueError(f"{what}={v!r} cannot be converted to type {name} without overflow "
                             f"(PyTorch's error); pass a real {what}")
        v = v.real
    if fmt.kind == "bool":
        return bool(v)
    if fmt.is_integer:
        if isinstance(v, float):
            if not (math.isfinite(v) and fmt.int_min <= v <= fmt.int_max):
                raise ValueError(f"{what}={v!r} cannot be converted to type {name} without "
                                 f"overflow (PyTorch's error)")
            return int(v)  # truncation toward zero
        v = int(v)
        lo = fmt.int_min if fmt.kind == "int" else -fmt.int_max
        if not lo <= v <= fmt.int_max:
            raise ValueError(f"{what}={v} cannot be converted to type {name} without overflow "
                             f"(PyTorch's error)")
        return v % 2**fmt.bits if fmt.kind == "uint" else v
    if isinstance(v, bool):
        v = int(v)
    try:
        return convert_alpha(v, fmt)
    except ValueError:
        raise ValueError(f"{what}={v!r} cannot be converted to type {name} without overflow "
                         f"(PyTorch's error: its largest finite value is "
                         f"{fmt.component.max_finite!r})") from None


def _complex_scalar(v, fmt: Format) -> Array:
    """A scalar as a one-element complex Array: PyTorch's ``c10::complex`` value, whose zero
    imaginary part takes part in the products."""
    cv = complex(v) if not isinstance(v, ComplexValue) else complex(v)
    return _array(np.array([cv]), fmt)


def _into(values: Array, fmt: Format, rounding=_NE, overflow=None) -> Array:
    """A float32 intermediate stored into the result dtype (rounded once)."""
    return conversion.cast(values, fmt, rounding=rounding,
                           overflow=overflow if overflow is not None else torch_overflow(fmt)
                           ).rounded


def _py(v):
    """A converted scalar as a Python number (exact: it is a value of the result dtype)."""
    if isinstance(v, FloatValue):
        return float(v)
    if isinstance(v, ComplexValue):
        return complex(v)
    return v
