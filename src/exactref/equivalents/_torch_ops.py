"""PyTorch equivalents of the elementwise family: what torch 2.13's CPU kernels compute for
``subtract`` ... ``greater_equal``, ``clamp`` and ``Tensor.to``.

Each equivalent does what PyTorch does before its kernel runs (the result dtype and the dtype
TensorIterator computes in, from :mod:`exactref.promotion`'s torch policy; every operand cast
into it by PyTorch's own casts, :func:`exactref.equivalents.torch.cast`; scalars converted as
the kernel reads them), then asks exactref's ops for what the kernel computes on those values,
step by step: each step of a modelled formula is one er op rounded once into the format the
kernel stores it in (``dtype=`` and ``compute=`` name that format), so a chain of er ops is
the kernel's arithmetic, exactly. Where the kernel is the mathematical answer rounded once, the
Result is the op's own. Where it departs, the Result's reference (``rounded``) stays the
mathematical answer and its candidates are what the kernel computes, so ``tolerance()`` shows
the departure and ``covers()`` accepts exactly it; where PyTorch may take either of two paths
(the vectorized body or the scalar tail of a loop, a build with or without FMA contraction),
the equivalent is ``any_of`` of one such Result per path.

Sources and measurements: ``/work/notes/issue10_library_behaviour.md`` (torch 2.13.0+cpu,
AMD EPYC, CPU capability AVX512, whose elementwise kernels are the AVX2 ones); each function
names the kernel it follows. ``docs/pytorch_equivalents.md`` has a reproducer for each
departure from the mathematical answer.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._array import Array, _assemble
from .._exact._rounding import Rounding
from .._exact._values import ComplexValue, FloatValue
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import AnyOf, Result, any_of
from ..arithmetic import basic, comparison, conversion, division, roots, selection
from ..promotion import resolve
from ..promotion._ops import family
from ..promotion._torch import C10_NAME, CPU_KERNEL_GAPS
from ._common import F32, F64, broadcast, operand, python_scalar
from .torch import (
    TorchUnsupported,
    _as_tensor,
    add,
    convert_alpha,
    torch_overflow,
)
from .torch import cast as cast_values

__all__ = ["subtract", "divide", "floor_divide", "remainder", "fmod", "reciprocal", "sqrt",
           "rsqrt", "addcmul", "addcdiv", "abs", "negative", "maximum", "minimum", "fmax",
           "fmin", "clamp", "equal", "not_equal", "less", "less_equal", "greater",
           "greater_equal", "cast_result", "TorchCrash"]

_NE = Rounding.NEAREST_EVEN
_DOWN, _UP = Rounding.TOWARD_NEGATIVE, Rounding.TOWARD_POSITIVE
#: PyTorch's reduced floating dtypes: their kernels compute in float32 (``at::opmath_type``)
_REDUCED = ("float16", "bfloat16")


class TorchCrash(TorchUnsupported):
    """PyTorch 2.13 kills the process on this input (SIGFPE) instead of computing it: the
    equivalent raises, and a test must never call PyTorch there."""


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
    if fmt.name in CPU_KERNEL_GAPS.get(family(op), ()):
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
    data = _assemble(fmt, [p.reshape(-1) for p in _parts(values, fmt)])
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


def _shaped(res, shape: tuple):
    """``res`` (computed on flattened operands) in the result's shape (0-d included)."""
    if isinstance(res, AnyOf):
        return AnyOf([_shaped(r, shape) for r in res.results])
    size = int(np.prod(shape, dtype=np.int64))
    rounded = res.rounded.numpy()[:size].reshape(shape)
    out = Result(Array(np.asarray(rounded), res.rounded.dtype),
                 [[np.broadcast_to(c, res.rounded.shape).reshape(-1)[:size].reshape(shape)
                   for c in part] for part in res._candidates],
                 op=res.op, models=res.models, details=res.details)
    out.inputs = res.inputs
    return out


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
    return Array(np.asarray(_assemble(fmt, [_real(re), _real(im)])).astype(fmt.np_dtype), fmt)


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


# ====================================================================== sums of products
@_quiet
def subtract(x, y, *, alpha=1, rounding=_NE, overflow=None):
    """The reference for ``torch.sub(x, y, alpha=alpha)`` on the CPU.

    PyTorch's ``sub`` is ``add`` with ``-alpha`` (``sub_out`` calls ``add_stub`` with
    ``-alpha``, ``BinaryOps.cpp``): after ``alpha_check`` (a bool alpha for a non-bool result, a
    float alpha for integers, a complex alpha for real tensors raise), ``-alpha`` is converted
    to the result dtype (so ``alpha=-128`` raises for int8, ``alpha=128`` does not), and the
    reference is :func:`exactref.equivalents.torch.add`'s with ``-alpha``: once rounded for
    alpha 1; for float32 and float64 with alpha != 1 the kernel computes ``fma(-alpha, y, x)``
    (AVX2/AVX512 builds) or rounds ``alpha * y`` first (the default build), both within
    ``er.add``'s tolerance; float16 and bfloat16 compute in float32, a Python scalar rounded to
    the dtype first. bool operands raise, as in PyTorch.
    """
    X, Y = operand(x, "x"), operand(y, "y")
    res = resolve(X.promotion, Y.promotion, policy="torch", op="sub")
    a = python_scalar(alpha)
    out = res.result
    if isinstance(a, bool) and out.kind != "bool":
        raise ValueError(f"Boolean alpha only supported for Boolean results (PyTorch's error); "
                         f"the result is {out.name}: pass alpha={int(a)}")
    if out.is_integer and isinstance(a, (float, complex)):
        raise ValueError("For integral input tensors, argument alpha must not be a floating "
                         "point number (PyTorch's error); pass an int alpha")
    if isinstance(a, complex) and out.kind != "complex":
        raise ValueError("For non-complex input tensors, argument alpha must not be a complex "
                         "number (PyTorch's error); use complex operands or a real alpha")
    return add(x, y, alpha=-a, rounding=rounding, overflow=overflow)


@_quiet
def addcmul(input, tensor1, tensor2, *, value=1, rounding=_NE, overflow=None):  # noqa: A002
    """The reference for ``torch.addcmul(input, tensor1, tensor2, value=value)`` on the CPU
    (``addcmul_cpu_kernel``, ``PointwiseOpsKernel.cpp``).

    * float32, float64: ``value`` converted to the dtype (``value.to<scalar_t>()``), then
      ``input + value * t1 * t2`` left to right. The AVX2/AVX512 builds contract it to
      ``fma(fl(value * t1), t2, input)`` (vector and scalar loops alike); the default build
      rounds every step: ``fl(input + fl(fl(value * t1) * t2))``. Both are modelled (the build
      decides, not the element). With ``value`` 1 or a power of two the fused form is the
      correctly rounded ``input + value * t1 * t2``.
    * float16, bfloat16: the same formula in float32 with ``value`` read as a float32
      (``value.to<float>()``, not rounded to the dtype), rounded once into the dtype; fused or
      not, as above.
    * integers: ``value.to<int>()`` truncates a float toward zero (2.5 -> 2); the arithmetic
      wraps. complex: complex products (PyTorch's vectorized and ``c10::complex`` formulas,
      within ``er.multiply``'s tolerance), ``value`` becoming ``value + 0j`` (so an infinite
      factor meets ``0 * inf``). bool raises NotImplementedError.

    ``input``, ``tensor1`` and ``tensor2`` must be tensors (a Python scalar raises TypeError,
    as in PyTorch); ``value`` past the dtype's range (float32's for the narrow formats) raises.
    """
    c = _call("addcmul", "addcmul", (input, tensor1, tensor2), ("input", "tensor1", "tensor2"),
              tensors=("input", "tensor1", "tensor2"))
    out = c.out
    s, t1, t2 = c.read(0), c.read(1), c.read(2)
    converted = _scalar_to(value, out, "value")
    ref = basic.addcmul(s, t1, t2, value=converted if out.is_integer else python_scalar(value),
                        dtype=out, rounding=rounding, overflow=overflow)
    if out.is_integer:
        return _shaped(ref, c.shape)
    if out.kind == "complex":
        v = _complex_scalar(converted, out)
        vt = basic.multiply(t1, v, dtype=out, rounding=rounding)
        p = basic.multiply(vt, t2, dtype=out, rounding=rounding)
        chain = basic.add(s, p, dtype=out, rounding=rounding)
        return _shaped(_union(ref, [chain], "input + (value * t1) * t2 in complex arithmetic "
                                            "(value + 0j)"), c.shape)
    C = F32 if out.name in _REDUCED else out
    v = _scalar_to(value, C, "value")
    k = _kw(C, rounding)
    vt = basic.multiply(t1, v, **k).rounded
    fused = basic.fma(vt, t2, s, **k).rounded
    unfused = basic.add(s, basic.multiply(vt, t2, **k).rounded, **k).rounded
    forms = {"fma(value * t1, t2, input) (AVX2/AVX512 builds)": fused,
             "input + value * t1 * t2, each step rounded (default build)": unfused}
    if C is not out:
        forms = {f"{n} in float32, rounded into {out.name}": _into(v_, out, rounding, overflow)
                 for n, v_ in forms.items()}
    return _shaped(_paths(ref, forms, out), c.shape)


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


# ============================================================================= quotients
_MODES = (None, "trunc", "floor")


@_quiet
def divide(x, y, *, rounding_mode=None, rounding=_NE, overflow=None):
    """The reference for ``torch.div(x, y, rounding_mode=rounding_mode)`` on the CPU
    (``div_true_kernel``, ``div_trunc_kernel``, ``div_floor_kernel``, ``BinaryOpsKernel.cpp``).

    True division: integers and bool are divided in the default float dtype (float32).
    float32 and float64: the quotient rounded once. float16 and bfloat16: rounded once, except
    that a divisor TensorIterator treats as a CPU scalar (a Python scalar, a tensor of one
    element or all strides 0) is read as a float32 from its original value and the float32
    quotient is rounded into the dtype (``rnd(fl32(x / f32(y)))``, two roundings: bfloat16
    ``0x1.3cp+5 / 0.1`` is ``0x1.8cp+8`` where the quotient rounds to ``0x1.8ap+8``). Complex:
    ``c10::complex``'s Smith division (:func:`_smith`).

    ``"trunc"``: floats ``trunc(rnd(x / y))`` (the quotient is rounded before it is
    truncated: float32 ``-0x1.ac4208p+6 / 0x1.f9342cp-14`` gives ``-0x1.b204ep+19`` where
    ``trunc`` of the quotient is ``-0x1.b204cp+19``); float16 and bfloat16 with a CPU-scalar
    divisor ``rnd(trunc(fl32(x / f32(y))))``. Integers: C's truncating division; a zero divisor
    raises ZeroDivisionError (PyTorch: ``RuntimeError: ZeroDivisionError``); int32 and int64
    ``INT_MIN / -1`` raises :class:`TorchCrash` (PyTorch 2.13 dies of SIGFPE there).

    ``"floor"``: :func:`floor_divide`.
    """
    if rounding_mode not in _MODES:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found {rounding_mode!r} (PyTorch's error)")
    if rounding_mode == "floor":
        return _floor_divide("div", x, y, rounding, overflow)
    op = "div" if rounding_mode is None else "floor_divide"
    c = _call("div", op, (x, y), ("x", "y"))
    out = c.out
    if out.kind == "complex":
        a, b = c.read(0), c.read(1)
        return _shaped(_complex_divide(a, b, out, rounding), c.shape)
    if rounding_mode is None:
        if out.name in _REDUCED and c.opmath_scalar(1):
            a, b = c.read(0), c.original_f32(1)
            ref = division.divide(a, c.original(1), dtype=out, rounding=rounding,
                                  overflow=overflow)
            q = division.divide(a, b, **_kw(F32, rounding)).rounded
            return _shaped(_form(ref, _into(q, out, rounding, overflow), fmt=out,
                                 model="x / f32(y) in float32, rounded into " + out.name),
                           c.shape)
        a, b = c.read(0), c.read(1)
        return _shaped(division.divide(a, b, dtype=out, rounding=rounding,
                                       overflow=overflow), c.shape)
    # trunc
    a, b = c.read(0), c.read(1)
    if out.is_integer:
        _check_int_division(a, b, out, crash=True)
        return _shaped(division.divide(a, b, rounding_mode="trunc", dtype=out), c.shape)
    scalar = out.name in _REDUCED and c.opmath_scalar(1)
    ref = division.divide(a, c.original(1) if scalar else b, rounding_mode="trunc", dtype=out,
                          rounding=rounding, overflow=overflow)
    if scalar:
        b32 = c.original_f32(1)
        q = division.divide(a, b32, **_kw(F32, rounding)).rounded
        t = division.divide(q, 1, rounding_mode="trunc", **_kw(out, rounding, overflow)).rounded
        model = "trunc(x / f32(y)) in float32, rounded into " + out.name
    else:
        q = division.divide(a, b, **_kw(out, rounding, overflow)).rounded
        t = division.divide(q, 1, rounding_mode="trunc", **_kw(out, rounding, overflow)).rounded
        model = f"trunc(rnd(x / y)): the quotient rounded into {out.name}, then truncated"
    return _shaped(_form(ref, t, fmt=out, model=model), c.shape)


def _check_int_division(a: Array, b: Array, out: Format, *, crash: bool = False) -> None:
    """PyTorch's integer division checks: a zero divisor raises (``TORCH_CHECK(b != 0,
    "ZeroDivisionError")``); with ``crash``, ``INT_MIN / -1`` in int32 or int64 is the x86
    ``idiv`` fault that kills PyTorch."""
    av, bv = a._wide(), b._wide()
    if crash and out.name in ("int32", "int64"):
        bad = np.flatnonzero((av == out.int_min) & (bv == -1))
        if bad.size:
            raise TorchCrash(
                f"torch.div(x, y, rounding_mode='trunc') on {out.name} with x = {out.int_min} "
                f"and y = -1 (element {int(bad[0])}) kills the process with SIGFPE in PyTorch "
                f"2.13 (x86 idiv overflow); never call it there. floor_divide returns "
                f"{out.int_min}; division in int64 (for int32) or float avoids it")
    zero = np.flatnonzero(bv == 0)
    if zero.size:
        raise ZeroDivisionError(
            f"integer division by zero (element {int(zero[0])}): PyTorch raises "
            f"RuntimeError: ZeroDivisionError; mask the zero divisors or divide in a float "
            f"dtype")


@_quiet
def floor_divide(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.floor_divide(x, y)`` (``torch.div(x, y,
    rounding_mode="floor")``) on the CPU (``div_floor_kernel``).

    Floats: ``c10::div_floor_floating`` (``c10/util/generic_math.h``), CPython's algorithm,
    each step rounded::

        if b == 0: return a / b
        mod = fmod(a, b); div = (a - mod) / b
        if mod != 0 and (b < 0) != (mod < 0): div -= 1
        if div != 0: q = floor(div); if div - q > 0.5: q += 1
        else: q = copysign(0, a / b)

    float32 and float64 compute it in the dtype; float16 and bfloat16 tensor by tensor too
    (every ``c10::Half``/``BFloat16`` step rounds, vector and scalar loops alike); with a
    CPU-scalar divisor in float32 (the divisor's original value), rounded once into the dtype.
    It is ``floor(x / y)`` except where the rounded quotient lands on the wrong side of an
    integer: float32 ``0x1.1745ecp+35 // 0x1.2499p+12`` is 8006600, the floor of the quotient
    8006601 (for ``|x / y| >= 2**(p - 2)``). The Result's reference is the exact floor; its one
    candidate is the algorithm's value. Integers: the floor, wrapping (``INT_MIN // -1`` is
    ``INT_MIN``, no crash); a zero divisor raises ZeroDivisionError (PyTorch: RuntimeError).
    """
    return _floor_divide("floor_divide", x, y, rounding, overflow)


def _floor_divide(name, x, y, rounding, overflow):
    c = _call(name, "floor_divide", (x, y), ("x", "y"))
    out = c.out
    a, b = c.read(0), c.read(1)
    if out.is_integer:
        _check_int_division(a, b, out)
        return _shaped(division.divide(a, b, rounding_mode="floor", dtype=out), c.shape)
    scalar = out.name in _REDUCED and c.opmath_scalar(1)
    ref = division.floor_divide(a, c.original(1) if scalar else b, dtype=out,
                                rounding=rounding, overflow=overflow)
    if scalar:
        q = _div_floor_floating(a, c.original_f32(1), F32, rounding)
        got = _into(q, out, rounding, overflow)
        model = "c10::div_floor_floating in float32 (divisor as a float32), rounded into " + \
            out.name
    else:
        got = _div_floor_floating(a, b, out, rounding, overflow)
        model = f"c10::div_floor_floating, every step rounded into {out.name}"
    return _shaped(_form(ref, got, fmt=out, model=model), c.shape)


def _div_floor_floating(a: Array, b: Array, fmt: Format, rounding=_NE, overflow=None) -> Array:
    """``c10::div_floor_floating(a, b)`` with every step an er op rounded once into ``fmt``."""
    k = _kw(fmt, rounding, overflow)
    av, bv = _real(a), _real(b)
    mod = division.fmod(a, b, **k).rounded
    div = division.divide(basic.subtract(a, mod, **k).rounded, b, **k).rounded
    mv = _real(mod)
    with np.errstate(invalid="ignore"):
        adjust = (mv != 0) & ((bv < 0) != (mv < 0))
    div = _pick(adjust, basic.subtract(div, 1, **k).rounded, div)
    dv = _real(div)
    floor = division.floor_divide(div, 1, **k).rounded
    with np.errstate(invalid="ignore"):
        up = (dv - _real(floor)) > 0.5  # exact: the fraction of a float
    q = _pick(up, basic.add(floor, 1, **k).rounded, floor)
    zero = _const(np.where(np.signbit(av) ^ np.signbit(bv), -0.0, 0.0), fmt)
    q = _pick(dv == 0, zero, q)
    return _pick(bv == 0, division.divide(a, b, **k).rounded, q)


@_quiet
def remainder(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.remainder(x, y)`` on the CPU (``remainder_kernel``).

    Floats: ``m = fmod(x, y); if m != 0 and (y < 0) != (m < 0): m += y``: the mathematical
    remainder rounded once, except that a zero takes the sign of ``x`` (that of ``fmod``),
    where Python and NumPy give it ``y``'s sign: ``remainder(-0., 1.)`` and ``remainder(-2.,
    1.)`` are ``-0.``. float16 and bfloat16 as float32 (one rounding either way); a Python
    scalar is rounded to the dtype first. Integers: Python's ``%`` (``INT_MIN % -1`` is 0); a
    zero divisor raises ZeroDivisionError (PyTorch: RuntimeError).
    """
    c = _call("remainder", "remainder", (x, y), ("x", "y"))
    out = c.out
    a, b = c.read(0), c.read(1)
    if out.is_integer:
        _check_int_division(a, b, out)
        return _shaped(division.remainder(a, b, dtype=out), c.shape)
    ref = division.remainder(a, b, dtype=out, rounding=rounding, overflow=overflow)
    k = _kw(out, rounding, overflow)
    m = division.fmod(a, b, **k).rounded
    mv, bv = _real(m), _real(b)
    with np.errstate(invalid="ignore"):
        adjust = (mv != 0) & ((bv < 0) != (mv < 0))
    got = _pick(adjust, basic.add(m, b, **k).rounded, m)
    return _shaped(_form(ref, got, fmt=out, model="m = fmod(x, y); m + y where the signs "
                                                  "differ (a zero keeps x's sign)"), c.shape)


@_quiet
def fmod(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.fmod(x, y)`` on the CPU (``fmod_kernel``: ``std::fmod``,
    Sleef's ``fmod`` in the vector loop): exact for floats, the sign of ``x``; a Python scalar
    is rounded to the dtype first. Integers: C's ``%`` (``INT_MIN % -1`` is 0); a zero divisor
    raises ZeroDivisionError (PyTorch: RuntimeError)."""
    c = _call("fmod", "fmod", (x, y), ("x", "y"))
    a, b = c.read(0), c.read(1)
    if c.out.is_integer:
        _check_int_division(a, b, c.out)
    return _shaped(division.fmod(a, b, dtype=c.out, rounding=rounding, overflow=overflow),
                   c.shape)


@_quiet
def reciprocal(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.reciprocal(x)`` on the CPU (``reciprocal_kernel``: ``1 /
    x``): rounded once (float16 and bfloat16 through float32, one rounding either way);
    integers and bool in float32. Complex: ``c10::complex(1) / x`` by Smith's division
    (:func:`_smith`)."""
    c = _call("reciprocal", "reciprocal", (x,), ("x",))
    a = c.read(0)
    if c.out.kind == "complex":
        one = _array(np.ones(a.size, dtype=np.complex128), c.out)
        return _shaped(_complex_divide(one, a, c.out, rounding), c.shape)
    return _shaped(division.reciprocal(a, dtype=c.out, rounding=rounding, overflow=overflow),
                   c.shape)


@_quiet
def addcdiv(input, tensor1, tensor2, *, value=1, rounding=_NE, overflow=None):  # noqa: A002
    """The reference for ``torch.addcdiv(input, tensor1, tensor2, value=value)`` on the CPU
    (``addcdiv_cpu_kernel``).

    float32, float64: ``input + fl(fl(value * t1) / t2)`` (left to right: not ``value * (t1 /
    t2)``), ``value`` converted to the dtype; no fused form is possible. float16, bfloat16: the
    same in float32 with ``value`` as a float32, rounded once into the dtype. Complex: the
    complex product (within ``er.multiply``'s tolerance), Smith's division (:func:`_smith`) at
    the ends of the product's range, and the sum. Integer ``tensor1`` and ``tensor2`` raise
    (PyTorch: "Integer division with addcdiv is no longer supported"); Python scalars raise
    TypeError, as in PyTorch.
    """
    c = _call("addcdiv", "addcdiv", (input, tensor1, tensor2),
              ("input", "tensor1", "tensor2"), tensors=("input", "tensor1", "tensor2"))
    out = c.out
    s, t1, t2 = c.read(0), c.read(1), c.read(2)
    _scalar_to(value, out, "value")  # PyTorch's checks
    ref = division.addcdiv(s, t1, t2, value=python_scalar(value), dtype=out,
                           rounding=rounding, overflow=overflow)
    if out.kind == "complex":
        v = _complex_scalar(_scalar_to(value, out, "value"), out)
        vt = basic.multiply(t1, v, dtype=out, rounding=rounding)
        results = [basic.add(s, _smith(corner, t2, out, fused, rounding), dtype=out,
                             rounding=rounding)
                   for corner in _corners(vt) for fused in (True, False)]
        return _shaped(_union(ref, results, "input + (value * t1) / t2 in complex "
                                            "arithmetic: Smith's division"), c.shape)
    C = F32 if out.name in _REDUCED else out
    v = _scalar_to(value, C, "value")
    k = _kw(C, rounding)
    vt = basic.multiply(t1, v, **k).rounded
    got = basic.add(s, division.divide(vt, t2, **k).rounded, **k).rounded
    model = "input + (value * t1) / t2, each step rounded"
    if C is not out:
        got = _into(got, out, rounding, overflow)
        model += f" in float32, then into {out.name}"
    return _shaped(_form(ref, got, fmt=out, model=model), c.shape)


# ------------------------------------------------------------------ complex division
def _complex_divide(a: Array, b: Array, fmt: Format, rounding=_NE):
    """``a / b`` for complex Arrays as ``c10::complex``'s ``operator/=`` computes it (the
    vectorized loop calls it element by element too): Smith's algorithm, fused and unfused."""
    ref = division.divide(a, b, dtype=fmt, rounding=rounding)
    forms = {f"Smith's division ({'multiply-adds fused' if fused else 'unfused'})":
             _smith(a, b, fmt, fused, rounding) for fused in (True, False)}
    return _paths(ref, forms, fmt)


def _smith(a: Array, b: Array, fmt: Format, fused: bool, rounding=_NE) -> Array:
    """``c10::complex<T>::operator/=`` (``c10/util/complex.h``), every step rounded in the
    component format::

        if |c| >= |d|:
            if c == 0 and d == 0: re = a / |c|; im = b / |d|
            else: r = d / c; s = 1 / (c + d r); re = (a + b r) s; im = (b - a r) s
        else: r = c / d; s = 1 / (d + c r); re = (a r + b) s; im = (b r - a) s

    ``fused``: the compiler contracted each ``u + v w`` into one fused multiply-add (the
    AVX2/AVX512 builds); else every product is rounded first.
    """
    comp = fmt.component
    k = _kw(comp, rounding)
    ar, ai = _split(a)
    cr, ci = _split(b)
    cv, dv = np.abs(_real(cr)), np.abs(_real(ci))
    with np.errstate(invalid="ignore"):
        big = cv >= dv
    neg = selection.negative

    def mad(u, v, w, sign=1):  # u + sign * v * w, fused or not
        if fused:
            return basic.fma(v if sign > 0 else neg(v).rounded, w, u, **k).rounded
        p = basic.multiply(v, w, **k).rounded
        return (basic.add if sign > 0 else basic.subtract)(u, p, **k).rounded

    def branch(c, d, first):  # r = d / c, ...; first: the |c| >= |d| formulas
        r = division.divide(d, c, **k).rounded
        s = division.reciprocal(mad(c, d, r), **k).rounded
        if first:
            re_n, im_n = mad(ar, ai, r), mad(ai, ar, r, -1)
        else:  # (a r + b), (b r - a)
            re_n, im_n = mad(ai, ar, r), mad(neg(ar).rounded, ai, r)
        return basic.multiply(re_n, s, **k).rounded, basic.multiply(im_n, s, **k).rounded

    re1, im1 = branch(cr, ci, True)
    re2, im2 = branch(ci, cr, False)
    re, im = _pick(big, re1, re2), _pick(big, im1, im2)
    zero = big & (cv == 0) & (dv == 0)
    if zero.any():
        absc = Array(np.abs(cr.numpy()), comp)
        absd = Array(np.abs(ci.numpy()), comp)
        re = _pick(zero, division.divide(ar, absc, **k).rounded, re)
        im = _pick(zero, division.divide(ai, absd, **k).rounded, im)
    return _join(re, im, fmt)


def _corners(res) -> list:
    """Arrays at the ends of a complex Result's candidate range (each part's lowest and
    highest): the values a chained kernel may read."""
    fmt = res.rounded.dtype
    ends = []
    for part in res._candidates:
        stack = np.stack([np.broadcast_to(np.asarray(c, dtype=np.float64), res.rounded.shape)
                          for c in part])
        with np.errstate(invalid="ignore"):
            lo, hi = np.fmin.reduce(stack, axis=0), np.fmax.reduce(stack, axis=0)
        nan = np.isnan(stack).any(axis=0)
        lo, hi = np.where(nan, np.nan, lo), np.where(nan, np.nan, hi)
        ends.append([lo] if _same(lo, hi) else [lo, hi])
    out = []
    for re in ends[0]:
        for im in ends[1]:
            out.append(Array(np.asarray(_assemble(fmt, [re, im])).astype(fmt.np_dtype), fmt))
    return out


def _union(reference, results, model: str) -> Result:
    """One Result whose reference is ``reference``'s and whose candidates are every candidate
    of ``results`` (Results, or Arrays of exact values): per part, their hull."""
    cands = None
    for r in results:
        if isinstance(r, Array):
            parts = [[p] for p in _parts(r._wide(), r.dtype)]
            shape = r.shape
        else:
            parts, shape = r._candidates, r.rounded.shape
        if cands is None:
            cands = [[] for _ in parts]
        for c, part in zip(cands, parts, strict=True):
            c.extend(np.broadcast_to(p, shape) for p in part)
    return Result(reference.rounded, cands, op=reference.op, models=(model,),
                  details=reference.details)


# ================================================================================= roots
@_quiet
def sqrt(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.sqrt(x)`` on the CPU.

    float32 and float64 (integers and bool too, in float32): MKL's ``vsSqrt``/``vdSqrt`` in
    VML_HA mode (``ATen/cpu/vml.h``, every path, 0-d and strided tensors included), which is
    faithful but not correctly rounded: 17 % (float32) and 1.3 % (float64) of random inputs
    are one unit in the last place off, so the reference allows both neighbours of the exact
    square root. float16 and bfloat16: float32's correctly rounded ``sqrt``, rounded once into
    the dtype (one rounding either way). Complex: ``std::sqrt`` of ``std::complex`` (glibc's
    ``csqrt``, also NumPy's), up to 2 units in the last place per part (measured), exact
    specials. ``sqrt(-0)`` is ``-0``; NaN below zero.
    """
    c = _call("sqrt", "sqrt", (x,), ("x",))
    a = c.read(0)
    out = c.out
    kw = dict(dtype=out, overflow=overflow)
    if out.kind == "complex":
        return _shaped(_faithful(roots.sqrt, a, steps=2, **kw), c.shape)
    if out.name in _REDUCED:
        return _shaped(roots.sqrt(a, rounding=rounding, **kw), c.shape)
    return _shaped(_faithful(roots.sqrt, a, **kw), c.shape)


@_quiet
def rsqrt(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.rsqrt(x)`` on the CPU (``rsqrt_kernel``: scalar ``1 /
    std::sqrt(x)``, vector ``Vectorized::rsqrt``).

    float32, float64 (integers in float32): ``fl(1 / fl(sqrt(x)))``, two roundings, vector
    (``_mm256_div_ps(1, _mm256_sqrt_ps(x))``) and scalar alike: float32 ``rsqrt(0x1.17bd28p+50)``
    is ``0x1.e9cb46p-26``, the correctly rounded value ``0x1.e9cb48p-26``. float16, bfloat16:
    the vector loop computes in float32 and rounds once into the dtype (``rnd(fl32(1 /
    fl32(sqrt(x))))``), the scalar loop (tails, strided tensors) rounds the square root into
    the dtype first (``std::sqrt(BFloat16)`` returns a BFloat16): ``rnd(1 / rnd(sqrt(x)))``;
    any element may come from either. Complex: ``sqrt`` then ``reciprocal``, as those.
    ``rsqrt(-0)`` is ``-inf``.
    """
    c = _call("rsqrt", "rsqrt", (x,), ("x",))
    a = c.read(0)
    out = c.out
    if out.kind == "complex":
        s = _faithful(roots.sqrt, a, steps=2, dtype=out)
        one = _array(np.ones(a.size, dtype=np.complex128), out)
        results = [_smith(one, corner, out, fused, rounding) for corner in _corners(s)
                   for fused in (True, False)]
        ref = division.divide(one, s.rounded, dtype=out)  # Note: er.reciprocal's complex
        # specials are wrong for an infinite part (NaN where 1 / (x + inf i) is a zero)
        return _shaped(_union(ref, results, "1 / sqrt(x): glibc's csqrt (within 2 units in "
                                            "the last place), then Smith's division"), c.shape)
    ref = roots.rsqrt(a, dtype=out, rounding=rounding, overflow=overflow)
    k = _kw(out, rounding, overflow)
    scalar = division.reciprocal(roots.sqrt(a, **k).rounded, **k).rounded
    if out.name not in _REDUCED:
        return _shaped(_form(ref, scalar, fmt=out, model="1 / sqrt(x), each rounded into "
                                                         + out.name), c.shape)
    k32 = _kw(F32, rounding)
    vector = _into(division.reciprocal(roots.sqrt(a, **k32).rounded, **k32).rounded, out,
                   rounding, overflow)
    return _shaped(_paths(ref, {"vector loop: 1 / sqrt(x) in float32, rounded once": vector,
                                f"scalar loop: sqrt rounded into {out.name}, then 1 / it":
                                scalar}, out), c.shape)


# ============================================================================ selections
@_quiet
def abs(x, *, rounding=_NE, overflow=None):  # noqa: A001 - the op's name
    """The reference for ``torch.abs(x)`` on the CPU.

    Real dtypes: a sign-bit clear (``abs(-0)`` is ``+0``; integers wrap: ``abs(INT_MIN)`` is
    ``INT_MIN``); bool, uint16/32/64 and float8_e8m0fnu raise NotImplementedError. In
    float8_e4m3fn and float8_e5m2 the vectorized loop (64 elements a step) keeps the sign of a
    zero, ``abs(-0.)`` is ``-0.`` there, while the scalar loop (tails, strided and short
    tensors) clears it; either may meet an element (the fnuz formats have no -0). Complex: the
    modulus in the component dtype, by
    Sleef's ``hypot`` (``u05``: within 0.5001 units in the last place) in the vector loop and
    ``std::abs`` (glibc's ``hypot``) in the scalar one, so within one unit in the last place
    (faithful); complex32 in float32 (``hypotf``), then rounded to float16.
    """
    c = _call("abs", "abs", (x,), ("x",))
    a = c.read(0)
    if c.common.kind != "complex":
        ref = selection.abs(a, dtype=c.out, overflow=overflow)
        if c.out.name.startswith("float8") and c.out.component.has_negzero:
            v = _real(a)
            kept = np.where(v == 0, v, _real(ref.rounded))
            return _shaped(_paths(ref, {"scalar loop: the sign cleared": ref.rounded,
                                        "vector loop: a zero keeps its sign": kept}, c.out),
                           c.shape)
        return _shaped(ref, c.shape)
    if c.out.name == "float16":  # complex32: hypotf, then stored
        r32 = _faithful(selection.abs, _array(a._wide(), FORMATS["complex64"]), dtype=F32)
        lo, hi = (_into(Array(v.astype(np.float32), F32), c.out) for v in (
            r32._candidates[0][1], r32._candidates[0][2]))
        ref = selection.abs(a, dtype=c.out)
        return _shaped(_form(ref, lo, hi, fmt=c.out, model="hypotf (faithful), rounded "
                                                            "into float16"), c.shape)
    return _shaped(_faithful(selection.abs, a, dtype=c.out), c.shape)


@_quiet
def negative(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.neg(x)`` on the CPU: a sign flip for real dtypes (``-(+0)`` is
    ``-0``, the sign of NaN flips), integers wrap (``neg(INT_MIN)`` is ``INT_MIN``, unsigned
    values wrap); bool raises (PyTorch: "Negation, the `-` operator, on a bool tensor is not
    supported"), the float8 formats and uint16/32/64 have no CPU kernel. complex64 and
    complex128: the scalar loop flips both signs, the vector loop computes ``0 - x``
    (``Vectorized<c10::complex<T>>::neg``), so a zero part becomes ``+0`` there
    (``neg(0-0j)`` is ``0+0j``, mathematically ``-0+0j``); either path may meet an element."""
    c = _call("neg", "negative", (x,), ("x",))
    a = c.read(0)
    ref = selection.negative(a, dtype=c.out, overflow=overflow)
    if c.out.name not in ("complex64", "complex128"):
        return _shaped(ref, c.shape)
    w = a._wide()
    with np.errstate(invalid="ignore"):
        zero_minus = np.empty(w.shape, np.complex128)
        zero_minus.real = 0.0 - w.real
        zero_minus.imag = 0.0 - w.imag
    return _shaped(_paths(ref, {"scalar loop: -x": ref.rounded,
                                "vector loop: 0 - x (zero parts become +0)": zero_minus},
                          c.out), c.shape)


def _ties(c: _Call, ref, first: np.ndarray, second: np.ndarray, names):
    """The Result of a selection whose kernels differ only in which zero they return on a tie
    of ``+0`` and ``-0``: candidates ``first`` and ``second`` (the values each path returns),
    equal to the reference except at such ties (and NaN)."""
    if c.out.kind != "float":
        return _shaped(ref, c.shape)
    forms = {names[0]: first, names[1]: second}
    return _shaped(_paths(ref, forms, c.out), c.shape)


def _extremum(name, op, x, y, fn, overflow):
    c = _call(name, op, (x, y), ("x", "y"), tensors=("x", "y"))
    a, b = c.read(0), c.read(1)
    ref = fn(a, b, dtype=c.out, overflow=overflow)
    if c.out.kind != "float":
        return _shaped(ref, c.shape)
    av, bv, rv = _real(a), _real(b), _real(ref.rounded)
    if name in ("fmax", "fmin") and c.out.name != "float16":
        # glibc's fmax/fmin (IEEE 754-2008 maxNum): a signaling NaN operand gives NaN; float16
        # is converted to float32 first, which quiets it
        rv = np.where(_signaling(a) | _signaling(b), np.nan, rv)
    with np.errstate(invalid="ignore"):
        tie = av == bv
    return _ties(c, ref, np.where(tie, av, rv), np.where(tie, bv, rv),
                 (f"{name}: a tie of +0 and -0 returns x", f"{name}: a tie returns y"))


def _signaling(arr: Array) -> np.ndarray:
    """Where a float Array holds a signaling NaN (its quiet bit clear)."""
    comp = arr.dtype.component
    if comp.kind != "float" or not comp.has_nan or comp.bits not in (16, 32, 64):
        return np.zeros(arr.shape, bool)
    bits = arr.numpy().view({16: np.uint16, 32: np.uint32, 64: np.uint64}[comp.bits])
    mant = comp.precision - 1
    one = bits.dtype.type(1)
    frac = bits & ((one << bits.dtype.type(mant)) - one)
    quiet = bits & (one << bits.dtype.type(mant - 1))
    return np.isnan(_real(arr)) & (frac != 0) & (quiet == 0)


@_quiet
def maximum(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.maximum(x, y)`` on the CPU (``maximum_kernel``): the larger,
    NaN propagating (the vector loop's NaN has the sign bit set, the scalar loop's not). On a
    tie of ``+0`` and ``-0`` the vector loop (``_mm256_max_ps``) returns ``y`` and the scalar
    loop (``std::max``) returns ``x``; which loop an element meets depends on the length, the
    strides and the thread count, so either zero is allowed there (IEEE 754-2019's maximum, and
    ``er.maximum``, return ``+0``). Python scalars raise TypeError, complex raises."""
    return _extremum("maximum", "maximum", x, y, selection.maximum, overflow)


@_quiet
def minimum(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.minimum(x, y)`` on the CPU: as :func:`maximum` (a ``+0``/``-0``
    tie returns either operand's zero; ``er.minimum`` returns ``-0``)."""
    return _extremum("minimum", "minimum", x, y, selection.minimum, overflow)


@_quiet
def fmax(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.fmax(x, y)`` on the CPU (``fmax_kernel``: ``std::fmax`` in a
    scalar loop; integers take ``maximum``): a quiet NaN operand is ignored (both NaN: NaN).
    glibc's ``fmax`` follows IEEE 754-2008's maxNum, so a *signaling* NaN operand gives NaN
    (float32, float64, bfloat16; float16 is converted to float32 first, which quiets it):
    ``fmax(1., sNaN)`` is NaN, mathematically 1. On a ``+0``/``-0`` tie the C library decides
    (measured with this machine's glibc: ``x`` for float32, float64 and float16, ``y`` for
    bfloat16), so either zero is allowed there."""
    return _extremum("fmax", "fmax", x, y, selection.fmax, overflow)


@_quiet
def fmin(x, y, *, rounding=_NE, overflow=None):
    """The reference for ``torch.fmin(x, y)`` on the CPU: as :func:`fmax`."""
    return _extremum("fmin", "fmin", x, y, selection.fmin, overflow)


@_quiet
def clamp(x, min=None, max=None, *, rounding=_NE, overflow=None):  # noqa: A002
    """The reference for ``torch.clamp(x, min, max)`` on the CPU (``TensorCompareKernel.cpp``).

    Scalar bounds (``clamp_scalar_kernel_impl``): the bounds are converted to the result dtype
    (``Scalar.to<T>()``: through float32 for float16 and bfloat16, an out-of-range value
    raises); ``std::min(std::max(x, min), max)`` and its vector form
    ``_mm256_min_ps(max, _mm256_max_ps(min, x))`` both return ``x`` on a tie (``clamp(-0.,
    min=0.)`` is ``-0.``, where ``er.clamp`` gives ``+0``); ``min > max`` gives ``max``; a NaN
    bound makes the whole result NaN.

    Tensor bounds (``clamp_kernel_impl``; one bound: ``clamp_min``/``clamp_max``, the
    ``maximum``/``minimum`` kernels): all three promote together and are cast; the scalar loop
    returns NaN where a bound is NaN, else ``std::min(std::max(x, min), max)`` (a tie returns
    ``x``); the vector loop ``minimum(maximum(x, min), max)`` returns the bound on a tie (and
    NaN where any is NaN). Either zero is allowed at a ``+0``/``-0`` tie.

    Both bounds None raises (PyTorch: "At least one of 'min' or 'max' must not be None"), and
    so does a scalar bound beside a tensor one (PyTorch's TypeError); complex and bool raise.
    """
    if min is None and max is None:
        raise ValueError("torch.clamp: At least one of 'min' or 'max' must not be None "
                         "(PyTorch's error)")
    bounds = [operand(v, label) for v, label in ((min, "min"), (max, "max")) if v is not None]
    scalars = [b.is_scalar for b in bounds]
    if any(scalars) and not all(scalars):
        raise TypeError("clamp() received an invalid combination of arguments: a Python "
                        "scalar bound beside a tensor one (PyTorch's error); make both tensors "
                        "or both scalars")
    if all(scalars):
        return _clamp_scalar(x, min, max, overflow)
    return _clamp_tensor(x, min, max, overflow)


def _clamp_scalar(x, lo, hi, overflow):
    # a NaN bound fills the result with NaN before any kernel runs (``clamp_out``), so no
    # kernel is needed then (float8 tensors too)
    nan = any(isinstance(v, float) and math.isnan(v) for v in (python_scalar(lo),
                                                               python_scalar(hi)))
    c = _call("clamp", "clamp", (x, lo, hi), ("x", "min", "max"),
              kernel="eq" if nan else None)
    out = c.out
    a = c.read(0)
    conv = [None if v is None else _scalar_to(v, out, name) for v, name in ((lo, "min"),
                                                                           (hi, "max"))]
    # Note: the bounds go to er.clamp as arrays of the result dtype (they hold them): an int
    # scalar bound beside an integer tensor makes er.clamp raise TypeError (a core bug)
    ref = selection.clamp(a, *[None if v is None else _const(np.full(a.size, _py(v)), out)
                               for v in conv], dtype=out, overflow=overflow)
    if out.kind != "float":
        return _shaped(ref, c.shape)
    v = _real(a)
    nan_bound = False
    with np.errstate(invalid="ignore"):
        if conv[0] is not None:
            b = float(conv[0])
            nan_bound |= math.isnan(b)
            v = np.where(v < b, b, v)
        if conv[1] is not None:
            b = float(conv[1])
            nan_bound |= math.isnan(b)
            v = np.where(v > b, b, v)
    if nan_bound:
        v = np.full_like(v, np.nan)
    return _shaped(_form(ref, v, fmt=out, model="std::min(std::max(x, min), max): a tie "
                                                "returns x; a NaN bound gives NaN"), c.shape)


def _py(v):
    """A converted scalar as a Python number (exact: it is a value of the result dtype)."""
    if isinstance(v, FloatValue):
        return float(v)
    if isinstance(v, ComplexValue):
        return complex(v)
    return v


def _clamp_tensor(x, lo, hi, overflow):
    # one tensor bound: clamp_min / clamp_max, which run the maximum / minimum kernels
    one = "maximum" if hi is None else "minimum" if lo is None else None
    c = _call("clamp", "clamp", (x, lo, hi), ("x", "min", "max"), tensors=("x", "min", "max"),
              kernel=one)
    out = c.out
    idx = [i for i in (1, 2) if c.ops[i] is not None]
    arrays = {i: c.read(i) for i in idx}
    a = c.read(0)
    ref = selection.clamp(a, arrays.get(1), arrays.get(2), dtype=out, overflow=overflow)
    if out.kind != "float":
        return _shaped(ref, c.shape)
    v = _real(a)
    lov = _real(arrays[1]) if 1 in arrays else None
    hiv = _real(arrays[2]) if 2 in arrays else None
    with np.errstate(invalid="ignore"):
        # scalar loop: NaN bound -> NaN; std::max(x, min) = x < min ? min : x; std::min
        scalar = v.copy()
        if lov is not None:
            scalar = np.where(scalar < lov, lov, scalar)
        if hiv is not None:
            scalar = np.where(hiv < scalar, hiv, scalar)
        bad = np.zeros(v.shape, bool)
        for b in (lov, hiv):
            if b is not None:
                bad |= np.isnan(b)
        if len(idx) == 2:
            scalar = np.where(bad, np.nan, scalar)
        else:  # clamp_min / clamp_max run maximum / minimum: NaN propagates
            scalar = np.where(bad | np.isnan(v), np.nan, scalar)
        # vector loop: maximum then minimum, each returning its second operand on a tie
        vector = v.copy()
        if lov is not None:
            vector = np.where(vector > lov, vector, lov)
            vector = np.where(np.isnan(v) | np.isnan(lov), np.nan, vector)
        if hiv is not None:
            nan = np.isnan(vector) | np.isnan(hiv)
            vector = np.where(vector < hiv, vector, hiv)
            vector = np.where(nan, np.nan, vector)
    return _shaped(_paths(ref, {"scalar loop: std::min(std::max(x, min), max), a tie returns x":
                                scalar, "vector loop: minimum(maximum(x, min), max), a tie "
                                        "returns the bound": vector}, out), c.shape)


# =========================================================================== comparisons
def _compare(name, op, fn, x, y):
    c = _call(name, op, (x, y), ("x", "y"))
    return _shaped(fn(c.read(0), c.read(1)), c.shape)


@_quiet
def equal(x, y):
    """The reference for ``torch.eq(x, y)`` (``x == y``) on the CPU: both operands promoted to
    their common dtype and cast into it first (PyTorch's TensorIterator), then compared
    exactly: int64 ``16777217 == float32 16777216.0`` is True (both become float32), bfloat16
    ``0.1 == 0.1`` is True (the Python scalar is rounded to bfloat16), uint8 ``0 == 256`` is
    True (256 wraps). The float8 formats compare with themselves."""
    return _compare("eq", "eq", comparison.equal, x, y)


@_quiet
def not_equal(x, y):
    """The reference for ``torch.ne(x, y)``: see :func:`equal`."""
    return _compare("ne", "ne", comparison.not_equal, x, y)


@_quiet
def less(x, y):
    """The reference for ``torch.lt(x, y)``: the operands cast to their common dtype first
    (uint8 ``200 < -1`` is True: -1 becomes 255), see :func:`equal`; complex, the float8
    formats and uint16/32/64 raise."""
    return _compare("lt", "lt", comparison.less, x, y)


@_quiet
def less_equal(x, y):
    """The reference for ``torch.le(x, y)``: see :func:`less`."""
    return _compare("le", "le", comparison.less_equal, x, y)


@_quiet
def greater(x, y):
    """The reference for ``torch.gt(x, y)``: see :func:`less` (uint8 ``200 > -1`` is False)."""
    return _compare("gt", "gt", comparison.greater, x, y)


@_quiet
def greater_equal(x, y):
    """The reference for ``torch.ge(x, y)``: see :func:`less`."""
    return _compare("ge", "ge", comparison.greater_equal, x, y)


# ================================================================================== cast
#: Float sources whose contiguous uint32 conversion runs a vectorized sequence (measured)
_UINT32_VECTOR = ("float32", "float64", "bfloat16")
#: float8 formats whose NaN converts to the integer 0 (measured; float8_e4m3fn and
#: float8_e5m2 give the "integer indefinite" value, as float32 does)
_NAN_TO_ZERO = ("float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")


@_quiet
def cast_result(x, to, *, rounding=_NE, overflow=None):
    """The reference for ``x.to(to)`` on the CPU (the registry op ``cast``).

    Floats into floats: to nearest even, into float16, bfloat16 and the float8 formats through
    float32 (a float64 value rounds twice: ``1 + 2**-11 + 2**-40`` becomes float16 ``1.0``,
    the once-rounded value is ``1 + 2**-10``), float8_e4m3fn saturating (even infinities: 448),
    float8_e8m0fnu as :func:`exactref.equivalents.torch.cast` describes. Integers into floats:
    rounded once (through float32 for the narrow formats). Integers into integers: wrapped.
    Complex into real: the real part (PyTorch warns). Anything into bool: nonzero (NaN is True).

    Floats into integers: x86's truncating conversions (``cvttss2si``), whose "integer
    indefinite" value ``INT_MIN`` stands for NaN, infinities and out-of-range values: into int32
    (and, through int32 then wrapping, int8, int16, uint8, uint16) and int64 with their own
    width; into uint32 the scalar loop converts to int64 and keeps the low 32 bits, the vector
    loop (float32, float64 and bfloat16 sources) converts ``x - 2**31`` for ``x >= 2**31``
    (either may meet an element); into uint64 ``x - 2**63`` likewise. NaN into int32 is
    ``-2**31``, 300.0 into int8 is 44, -1.0 into uint8 is 255. The Result's reference is the
    once-rounded conversion where it exists (truncation for integers), its candidates what
    PyTorch gives.
    """
    X = operand(x, "x")
    target = resolve_dtype(to)
    arr = _as_tensor(X)
    shape = tuple(arr.shape)
    flat = _flatten(arr, shape)
    src = flat.dtype
    if src.kind == "complex" and target.kind != "complex":
        w = flat._wide()
        if target.kind == "bool":
            got = _array((w.real != 0) | (w.imag != 0), target)
            return _shaped(_form(got, got, fmt=target, model="nonzero"), shape)
        flat = Array(w.real.astype(src.component.np_dtype), src.component)
        src = flat.dtype
    if target.is_integer and target.kind != "bool" and src.kind == "float":
        return _shaped(_float_to_int(flat, target), shape)
    got = cast_values(flat, target)
    if overflow is not None or rounding != _NE:
        ref = conversion.cast(flat, target, rounding=rounding, overflow=overflow)
    elif target.kind in ("float", "complex") or src.is_integer:
        ref = conversion.cast(flat, target, overflow=torch_overflow(target) if not
                              target.is_integer else "wrap")
    else:
        ref = got
    return _shaped(_form(ref, got, fmt=target, model="PyTorch's conversion"), shape)


def _cvtt(v: np.ndarray, bits: int) -> np.ndarray:
    """x86's truncating conversion of float64 values into a signed ``bits``-bit integer:
    NaN, infinities and out-of-range values give ``-2**(bits-1)`` (Python ints)."""
    lo = -(2 ** (bits - 1))
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        ok = np.isfinite(t) & (t >= lo) & (t < -lo)
    safe = Array(np.where(ok, t, 0.0), F64)
    ints = conversion.cast(safe, "int64").rounded._wide()  # exact: |t| < 2**63
    return np.array([int(i) if k else lo for i, k in zip(ints, ok, strict=True)], dtype=object)


def _wrap(v: np.ndarray, fmt: Format) -> np.ndarray:
    m = 2 ** fmt.bits
    if fmt.kind == "uint":
        return np.array([int(i) % m for i in v], dtype=object)
    half = m // 2
    return np.array([(int(i) + half) % m - half for i in v], dtype=object)


def _float_to_int(flat: Array, target: Format):
    """PyTorch's float -> integer conversion (see :func:`cast_result`)."""
    v = _real(flat)
    name = target.name
    src = flat.dtype.name
    if name == "int64":
        scalar = _cvtt(v, 64)
    elif name == "uint64":
        with np.errstate(invalid="ignore"):
            big = v >= 2.0**63
        scalar = _wrap(np.where(big, _cvtt(np.where(big, v - 2.0**63, 0.0), 64) + 2**63,
                                _cvtt(v, 64)), target)
    elif name == "uint32" or (name == "uint8" and src == "float64"):
        scalar = _wrap(_cvtt(v, 64), target)
    else:
        scalar = _wrap(_cvtt(v, 32), target)
    if src in _NAN_TO_ZERO:
        scalar = np.where(np.isnan(v), 0, scalar)
    forms = {"x86 cvtt conversion (scalar loop)": _int_array(scalar, target)}
    if name == "uint32" and flat.dtype.name in _UINT32_VECTOR:
        with np.errstate(invalid="ignore"):
            big = v >= 2.0**31
        vec = np.where(big, _cvtt(np.where(big, v - 2.0**31, 0.0), 32) + 2**31, _cvtt(v, 32))
        forms["vector loop: x - 2**31 converted where x >= 2**31"] = _int_array(
            _wrap(vec, target), target)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(v)
    ref_in = Array(np.where(finite, v, 0.0), F64)
    ref = conversion.cast(ref_in, target, overflow="wrap")
    return _paths(ref, forms, target)


def _int_array(values: np.ndarray, fmt: Format) -> Array:
    return Array(np.array([int(i) for i in values], dtype=fmt.np_dtype), fmt)
