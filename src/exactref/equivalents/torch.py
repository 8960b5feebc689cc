"""PyTorch equivalents: references that cover what PyTorch 2.13's CPU kernels may compute.

``er.add`` and ``er.multiply`` answer the mathematical question: the exact value rounded once,
with a tolerance for the implementations a correct kernel may use. PyTorch's CPU kernels make
choices of their own before and during the arithmetic. The functions here first do what PyTorch
does before its kernel runs, then build the exactref reference for the arithmetic the kernel
performs, so that ``covers(torch_output)`` answers "is this what a correct PyTorch CPU kernel
gives?". What they model, measured on torch 2.13 (CPU, AVX2 and default builds alike):

* **Result dtype**: PyTorch's promotion (``exactref.result_type(..., policy="torch")``).
* **Casts**: every operand is cast to the result dtype as PyTorch casts it: into float16,
  bfloat16 and the float8 formats through float32 (a float64 0-d tensor or a Python float rounds
  twice), integers wrap, float8_e4m3fn saturates, float8_e8m0fnu drops the sign and turns a zero
  into its smallest value. Python scalars are wrapped first as PyTorch wraps them (bool, int64,
  uint64 for ints in [2**63, 2**64), float64, complex128); an int beyond uint64 raises.
* **alpha** is converted to the result dtype before use: float64 exactly; float32 and complex64
  rounded once; float16, bfloat16 and complex32 rounded twice, through float32; integers
  range-checked and wrapped; an alpha past the dtype's largest finite value raises, as PyTorch
  does. :func:`convert_alpha` gives the converted value.
* **add in float16 and bfloat16** computes ``x + alpha * y`` in float32 with a fused
  multiply-add in its vectorized loop (the plain form), but ``x + (alpha * y rounded to the
  dtype)`` in its scalar loops (the tail of a contiguous array, and strided or broadcast
  iterations): the stored form. Which one an element gets depends on its position, so the
  reference is ``any_of(plain, stored)``.
* **multiply in float16 and bfloat16** by a ``y`` of one element (a Python scalar, a 0-d tensor,
  a tensor of size 1) reads ``y``'s original value as a float32, not as the result dtype, and
  rounds the float32 product.
* **float8**: PyTorch has no CPU add for float8, and multiplies float8 tensors elementwise only
  when ``y`` has more than one element; those raise here too. float8_e4m3fn saturates on
  overflow where ml_dtypes (and exactref's default) gives NaN.
* **complex**: PyTorch multiplies ``alpha * y`` out in complex arithmetic, even for ``alpha=1``,
  and a real operand or scalar becomes complex with an imaginary part +0 first. So
  ``(1+1j) + (inf+1j)`` is ``inf+nanj`` in PyTorch (exactref: ``inf+2j``), ``(1+1j) + 1j *
  (inf+1j)`` is ``nan+infj`` (exactref: ``infj``), ``(inf+1j) * 2.0`` is ``inf+nanj``
  (exactref: ``inf+2j``), and ``(-0+1j) + (-0-1j)`` has the real part +0 (exactref: -0).
  These are departures from the mathematical answer; ``docs/pytorch_equivalents.md`` lists
  them and ``tests/equivalents/test_torch_departures.py`` pins them.

``overflow=None`` means PyTorch's own rule (saturation for float8_e4m3fn, the format's rule
otherwise, wrapping for integers); ``rounding`` is the rounding of the reference (PyTorch itself
rounds to nearest even).

The rest of the elementwise family (``subtract``, ``divide``, ``floor_divide``, ``remainder``,
``fmod``, ``reciprocal``, ``sqrt``, ``rsqrt``, ``addcmul``, ``addcdiv``, ``abs``, ``negative``,
``maximum``, ``minimum``, ``fmax``, ``fmin``, ``clamp``, the comparisons, and ``cast(x,
to=...)``) lives in :mod:`exactref.equivalents._torch_ops` (sums, quotients, roots),
``_torch_select`` (selections, comparisons: built from their records by the family builder,
``exactref.equivalents._family``, as numpy's and jax's are) and ``_torch_cast``
(``Tensor.to``), on the call machinery of ``_torch_call``, and is re-exported here; each
function's docstring says what PyTorch's kernel computes and where it departs from the
mathematical answer.

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
>>> y = torch.tensor([0.1, 0.2, 0.3], dtype=torch.bfloat16)
>>> ert.add(x, y, alpha=0.3).covers(torch.add(x, y, alpha=0.3)).all()
True
>>> ert.convert_alpha(0.3, "bfloat16")
FloatValue(0.30078125)
"""

from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from .. import _versions
from .._array import Array, asarray
from .._exact import ComplexValue, FloatValue, Rounding
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import Gradients, Result, any_of
from ..arithmetic import basic
from ..ops import op_names
from ._common import (
    F32,
    Operand,
    bounds_result,
    broadcast,
    convert,
    in_float32,
    map_result,
    operand,
    python_scalar,
)

# what this module models was measured on these versions (exactref._versions; the
# library itself is imported only where an equivalent needs it)
_versions.check("torch", "torch", stacklevel=2)

#: PyTorch's computation dtype (``at::opmath_type``) for the narrow float formats.
_REDUCED = ("float16", "bfloat16")
_FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
           "float8_e8m0fnu")
_NO_ADD = _FLOAT8 + ("uint16", "uint32", "uint64")
#: Formats whose conversions PyTorch computes from a float32 (c10's Half, BFloat16 and Float8
#: constructors take a float).
_VIA_FLOAT32 = ("float16", "bfloat16") + _FLOAT8


class TorchUnsupported(NotImplementedError):
    """PyTorch 2.13 has no CPU kernel for this case (it raises ``NotImplementedError``)."""


def _name(fmt: Format) -> str:
    return fmt.torch_name or fmt.name


# --------------------------------------------------------------------------- overflow
def torch_overflow(fmt: Format) -> str:
    """PyTorch's overflow rule for ``fmt``: float8_e4m3fn saturates, integers wrap, every other
    format follows its own rule (IEEE infinities, or NaN for the fnuz formats)."""
    comp = fmt.component
    if comp.name == "float8_e4m3fn":
        return "saturate"
    return comp.default_overflow


# ------------------------------------------------------------------------------ casts
def cast(values, dtype=None, *, to=None, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """``values`` converted to ``dtype`` as PyTorch's CPU casts convert, in two spellings.

    ``cast(values, dtype)`` (the conversion helper the equivalents use) returns an er.Array:
    ``values`` (an er.Array, or anything er.asarray takes) to nearest even, through float32 for
    the float16, bfloat16 and float8 targets (twice rounded from float64 and wide integers),
    integers wrapping, float8_e4m3fn saturating, float8_e8m0fnu taking the magnitude, turning
    a zero into its smallest value and rounding everything between 2**-127 and 2**-126 up.
    A complex value into a real dtype raises TypeError.

    ``cast(x, to=dtype)`` is the equivalent of the registry op ``cast`` (``x.to(dtype)``) and
    returns a Result: the conversion as PyTorch computes it, complex into real keeping the real
    part and floats into integers by x86's truncating conversions, NaN and out-of-range values
    included (:func:`exactref.equivalents._torch_ops.cast_result`).

    >>> cast([1 + 2**-11 + 2**-40], "float16").tolist()  # exactref rounds once: 1.0009765625
    [1.0]
    >>> import torch
    >>> x = torch.tensor([float("nan"), 300.0, -1.0])
    >>> cast(x, to="uint8").covers(x.to(torch.uint8)).all()
    True
    """
    if to is not None:
        if dtype is not None:
            raise TypeError("cast() takes the target once: cast(values, dtype) for an Array, "
                            "cast(x, to=dtype) for a Result")
        from ._torch_cast import cast_result

        return cast_result(values, to, rounding=rounding, overflow=overflow)
    if dtype is None:
        raise TypeError("cast() needs the target dtype: cast(values, 'bfloat16'), or "
                        "cast(x, to='bfloat16') for the reference Result")
    target = resolve_dtype(dtype)
    arr = values if isinstance(values, Array) else asarray(values)
    src = arr.dtype
    if src is target:
        return arr
    if target.kind == "bool":
        return Array(arr._wide() != 0, target)
    if target.is_integer:
        return convert(arr, target, overflow="wrap")
    if src.kind == "complex" and target.kind != "complex":
        raise TypeError(f"PyTorch casts {src.name} to {target.name} only by dropping the "
                        f"imaginary part; take the real part first")
    comp = target.component
    if comp.name in _VIA_FLOAT32 and not in_float32(src):
        mid = FORMATS["complex64"] if target.kind == "complex" else F32
        arr = convert(arr, mid, overflow="ieee")
    if comp.name == "float8_e8m0fnu":
        wide = np.abs(arr._wide().astype(np.float64))
        wide = np.where(wide == 0, comp.smallest_subnormal, wide)
        # Note: c10 rounds a float32 subnormal by its raw significand field, so everything
        # strictly between 2**-127 and 2**-126 goes up to 2**-126 (nearest would take the
        # lower third down to 2**-127)
        wide = np.where((wide > 2.0**-127) & (wide < 2.0**-126), 2.0**-126, wide)
        return convert(wide, target)
    return convert(arr, target, overflow=torch_overflow(target))


def wrap_scalar(value) -> Array:
    """A Python scalar as PyTorch wraps it: a 0-d tensor of bool, int64 (uint64 for ints in
    [2**63, 2**64)), float64 or complex128. An int beyond uint64 raises OverflowError, as
    PyTorch's ``int too big to convert``."""
    if isinstance(value, bool):
        return asarray(value, "bool")
    if isinstance(value, numbers.Integral):
        v = int(value)
        if -(2**63) <= v < 2**63:
            return asarray(v, "int64")
        if 0 <= v < 2**64:
            return asarray(v, "uint64")
        raise OverflowError(f"PyTorch cannot wrap the int {v}: int too big to convert "
                            f"(it fits neither int64 nor uint64)")
    if isinstance(value, complex):
        return asarray(value, "complex128")
    return asarray(float(value), "float64")


# ------------------------------------------------------------------------------ alpha
def convert_alpha(alpha, dtype):
    """alpha as PyTorch's CPU add converts it for a result of ``dtype`` (``Scalar.to<T>()``).

    Returns an int (integer and bool dtypes), a :class:`~exactref.FloatValue` or a
    :class:`~exactref.ComplexValue`. Raises ValueError where PyTorch raises: a bool alpha for a
    non-bool result, a float alpha for an integer result, a complex alpha for a real result,
    an alpha past the dtype's largest finite value (or, for integers, outside its range; an
    unsigned dtype also takes negatives down to ``-max``, which wrap).

    >>> convert_alpha(1 + 2**-11 + 2**-40, "float16")  # through float32: twice rounded
    FloatValue(1.0)
    >>> convert_alpha(0.1, "float32")
    FloatValue(0.10000000149011612)
    >>> convert_alpha(-1, "uint8")
    255
    """
    fmt = resolve_dtype(dtype)
    alpha = python_scalar(alpha)
    if fmt.kind == "bool":
        if isinstance(alpha, (float, complex)):
            raise ValueError("For integral input tensors, argument alpha must not be a floating "
                             "point number (PyTorch's error); pass an int or bool alpha")
        return int(bool(alpha))
    if isinstance(alpha, bool):
        raise ValueError(f"Boolean alpha only supported for Boolean results (PyTorch's error); "
                         f"the result is {fmt.name}: pass alpha={int(alpha)}")
    if isinstance(alpha, numbers.Integral):
        alpha = int(alpha)
        if not -(2**63) <= alpha < 2**64:
            raise OverflowError(f"PyTorch cannot take alpha={alpha}: int too big to convert")
    if fmt.is_integer:
        if isinstance(alpha, (float, complex)):
            raise ValueError("For integral input tensors, argument alpha must not be a floating "
                             "point number (PyTorch's error); pass an int alpha")
        lo = fmt.int_min if fmt.kind == "int" else -fmt.int_max
        if not lo <= alpha <= fmt.int_max:
            raise ValueError(f"alpha={alpha} cannot be converted to {fmt.name} without overflow "
                             f"(PyTorch's error); PyTorch takes [{lo}, {fmt.int_max}]")
        return int(asarray(alpha, fmt, overflow="wrap").value())
    if isinstance(alpha, complex) and fmt.kind != "complex":
        raise ValueError("For non-complex input tensors, argument alpha must not be a complex "
                         "number (PyTorch's error); use complex operands or a real alpha")
    comp = fmt.component
    parts = [alpha.real, alpha.imag] if isinstance(alpha, complex) else [alpha]
    out = []
    for p in parts:
        if isinstance(p, int):
            # an int64/uint64 Scalar: converted by the C++ cast, to float32 first for the
            # narrow formats, rounded once otherwise
            if builtins.abs(p) > comp.max_finite:
                _alpha_overflow(alpha, fmt)
            mid = F32 if comp.name in _VIA_FLOAT32 else comp
            v = asarray(p, mid).value()
        else:
            p = float(p)
            if math.isfinite(p) and builtins.abs(p) > comp.max_finite:
                _alpha_overflow(alpha, fmt)
            v = FloatValue(p)
            if comp.name in _VIA_FLOAT32:
                v = asarray(p, F32).value()
        out.append(asarray(v, comp).value())
    if fmt.kind == "complex":
        return ComplexValue(out[0], out[1] if len(out) > 1 else FloatValue(0.0))
    return out[0]


def _alpha_overflow(alpha, fmt):
    raise ValueError(f"alpha={alpha!r} cannot be converted to {_name(fmt)} without overflow "
                     f"(PyTorch's error: its largest finite value is "
                     f"{fmt.component.max_finite!r})")


# ----------------------------------------------------------------------------- operands
def _operands(x, y):
    return operand(x, "x"), operand(y, "y")


def result_type(x, y, op: str = "add") -> Format:
    """PyTorch's result dtype for ``op`` ("add" or "multiply") of ``x`` and ``y``, raising
    where PyTorch 2.13's CPU kernels raise (:class:`TorchUnsupported` for a missing kernel)."""
    X, Y = _operands(x, y)
    return _result_dtype(X, Y, op)


def _no_add_kernel(out: Format, Y: Operand) -> None:
    if out.name in _NO_ADD:
        raise TorchUnsupported(f'"add_stub" not implemented for {_name(out)!r}: PyTorch 2.13 '
                               f"has no CPU add for {out.name}; add in float32 and cast")


def _no_mul_kernel(out: Format, Y: Operand) -> None:
    if out.name in _FLOAT8 and Y.size == 1:
        raise TorchUnsupported(
            f'"mul_cpu_reduced_float" not implemented for {_name(out)!r}: PyTorch 2.13 '
            f"multiplies {out.name} on the CPU only when y has more than one element; swap "
            f"the operands or multiply in float32")


def _result_dtype(X: Operand, Y: Operand, op: str) -> Format:
    from ..promotion import result_type as _rt

    out = _rt(X.promotion, Y.promotion, policy="torch", op=op)
    # the CPU kernels PyTorch 2.13 lacks for the op (each raises TorchUnsupported): the
    # equivalent's own check (add.kernel_check, multiply.kernel_check)
    globals()[op].kernel_check(out, Y)
    if out.torch_name is None:
        raise TypeError(f"PyTorch has no {out.name} dtype")
    return out


def _as_tensor(o: Operand) -> Array:
    """What PyTorch's kernel sees before the cast: the array, or the wrapped scalar."""
    return o.array if not o.is_scalar else wrap_scalar(o.scalar)


def _cast(o: Operand, out: Format) -> Array:
    return cast(_as_tensor(o), out)


# --------------------------------------------------------------------------------- ops
def add(x, y, *, alpha=1, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """The reference for ``torch.add(x, y, alpha=alpha)`` on the CPU: a Result, or an
    ``any_of`` of the forms PyTorch may compute (see the module docstring).

    ``x``, ``y``: torch tensors, numpy arrays, er.Arrays or Python scalars (numpy scalars count
    as Python scalars, as PyTorch takes them). The reference's dtype is PyTorch's result dtype.

    >>> import torch
    >>> a = torch.tensor([1.0, 2.0], dtype=torch.float16)
    >>> add(a, 0.1, alpha=3).rounded.dtype.name
    'float16'
    """
    X, Y = _operands(x, y)
    broadcast(X, Y)
    out = _result_dtype(X, Y, "add")
    a = convert_alpha(alpha, out)
    rule = overflow if overflow is not None else torch_overflow(out)
    xc, yc = _cast(X, out), _cast(Y, out)
    kw = dict(dtype=out, rounding=rounding, overflow=rule)
    if out.kind == "complex":
        # alpha * y multiplied out in complex arithmetic and stored in the dtype, then added
        av = a if isinstance(a, ComplexValue) else ComplexValue(a)
        alpha_t = asarray(complex(av), out)
        ay = basic.multiply(yc, alpha_t, **kw)
        return basic.add(xc, ay, **kw)
    plain = basic.add(xc, yc, alpha=a, **kw)
    if out.name in _REDUCED and not (isinstance(a, FloatValue) and float(a) == 1.0):
        stored = basic.add(xc, basic.multiply(yc, a, **kw), **kw)
        return any_of(plain, stored)
    return plain


def multiply(x, y, *, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """The reference for ``torch.mul(x, y)`` on the CPU (see the module docstring).

    >>> import torch
    >>> h = torch.tensor([3.0], dtype=torch.float16)
    >>> multiply(h, 1/3).covers(h * (1/3)).all()
    True
    """
    X, Y = _operands(x, y)
    broadcast(X, Y)
    out = _result_dtype(X, Y, "multiply")
    rule = overflow if overflow is not None else torch_overflow(out)
    kw = dict(dtype=out, rounding=rounding, overflow=rule)
    xc = _cast(X, out)
    if out.name in _REDUCED and Y.size == 1:
        # y's original value, read as a float32; the product rounded in float32
        y32 = cast(_as_tensor(Y), F32)
        if Y.shape == ():
            # an exact scalar: a 0-d array would be rounded to the dtype by the promotion
            return basic.multiply(xc, y32.value(), **kw)
        return basic.multiply(xc, Array(y32.numpy().reshape(Y.shape), F32), **kw)
    return basic.multiply(xc, _cast(Y, out), **kw)


mul = multiply
add.kernel_check = _no_add_kernel
multiply.kernel_check = _no_mul_kernel


# ----------------------------------------------------------------------------- backward
def _sum_to(product, o: Operand, out: Format, rounding, rule):
    """PyTorch's ``sum_to_size``: the stored products of ``product`` (a Result in the output
    shape) summed over the copies broadcasting made of operand ``o``, accumulated in float32
    for the narrow formats (the output format otherwise) in an unspecified order, then stored.

    The sum of K stored products is bounded rigorously: each partial sum rounds once, so
    ``|computed - exact| <= gamma(K - 1) * sum |terms|`` with ``gamma(n) = n u / (1 - n u)``.
    """
    shape = tuple(product.rounded.shape)
    oshape = o.shape
    lead = len(shape) - len(oshape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(oshape) if n == 1 and shape[lead + i] != 1)
    if not axes:
        return product
    k = int(np.prod([shape[a] for a in axes]))
    acc = FORMATS["complex64" if out.kind == "complex" else "float32"] if (
        out.component.name in _REDUCED) else out
    u = 2.0 ** -acc.component.precision
    gamma = (k - 1) * u / (1 - (k - 1) * u)
    # the exact sum of the stored products, rounded once: er.add.backward sums copies exactly
    dummy = Array(np.zeros(oshape, dtype=out.np_dtype), out)
    other = Array(np.zeros(shape, dtype=out.np_dtype), out)
    ref = basic.add.backward(dummy, other, product.rounded, dtype=out, rounding=rounding,
                             overflow=rule).grad_x
    lows, highs = [], []
    keep = len(oshape)
    for part_lo, part_hi, ref_part in zip(*_part_hulls(product), _parts(ref.rounded),
                                          strict=True):
        # the exact sum of the lowest/highest products, summed over the copies
        # a sum starts from +0, as PyTorch's do; float64 sums of the stored values, with
        # their own error bounded by the same gamma (float64 is at least as precise)
        lo_sum = _reduce(part_lo, axes, keep, oshape) + 0.0
        hi_sum = _reduce(part_hi, axes, keep, oshape) + 0.0
        mag = _reduce(np.maximum(np.abs(part_lo), np.abs(part_hi)), axes, keep, oshape)
        with np.errstate(invalid="ignore", over="ignore"):
            err = 2 * gamma * mag * (1 + 4 * u)
            finite = np.isfinite(mag)
            lo = np.where(finite, np.fmin(lo_sum - err, ref_part), lo_sum)
            hi = np.where(finite, np.fmax(hi_sum + err, ref_part), hi_sum)
        lows.append(_round_dir(lo, out, False, rule))
        highs.append(_round_dir(hi, out, True, rule))
    res = bounds_result(ref.rounded, lows, highs, op="sum_to_size",
                        models=("products stored, summed in " + acc.name,))
    return res


def _parts(arr: Array):
    w = arr._wide()
    if arr.dtype.kind == "complex":
        return [w.real.astype(np.float64), w.imag.astype(np.float64)]
    return [w.astype(np.float64)]


def _part_hulls(result):
    b = result._bounds()
    return [p[0] for p in b], [p[1] for p in b]


def _reduce(values, axes, keep, oshape):
    with np.errstate(invalid="ignore", over="ignore"):
        s = np.sum(values, axis=axes)
    return np.asarray(s, dtype=np.float64).reshape(oshape)


def _round_dir(values, fmt, up, rule):
    mode = Rounding.TOWARD_POSITIVE if up else Rounding.TOWARD_NEGATIVE
    comp = fmt.component
    return convert(np.asarray(values, dtype=np.float64), comp, rounding=mode,
                   overflow="ieee" if comp.has_inf else rule)._wide().astype(np.float64)


def add_backward(x, y, grad, *, alpha=1, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """References for PyTorch's autograd of ``torch.add(x, y, alpha=alpha)``; see
    :func:`multiply_backward`."""
    return _backward("add", x, y, grad, alpha, rounding, overflow, _add_factor)


def multiply_backward(x, y, grad, *, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """References for PyTorch's autograd of ``torch.mul(x, y)`` for the output gradient ``grad``.

    PyTorch computes ``grad * conj(y)`` (``grad * conj(alpha)`` for add's ``y``; add's ``x``
    gets ``grad`` itself) as a tensor op in the output dtype, each product rounded and stored,
    then sums the copies broadcasting made of the operand (``sum_to_size``), and casts to the
    operand's dtype. The reference for a summed element is bounded as :func:`_sum_to`
    describes; a one-copy element is the product's own reference.
    """
    return _backward("multiply", x, y, grad, 1, rounding, overflow, _mul_factor)


mul_backward = multiply_backward


def _add_factor(me, other, X, alpha):
    """add's gradients: ``grad`` for x (and for y when alpha is 1: PyTorch's maybe_multiply
    leaves it alone), else ``grad * conj(alpha)``, a tensor-scalar multiply with the Python
    alpha as given. None: the gradient itself."""
    return None if me is X or alpha == 1 else _conj(alpha)


def _mul_factor(me, other, X, alpha):
    """multiply's gradients: ``grad * conj(other)``, other as given (not cast: PyTorch's
    formula uses the input)."""
    return _conj(other.source if other.is_scalar else other.array)


def _backward(op, x, y, grad, alpha, rounding, overflow, factor_of):
    X, Y = _operands(x, y)
    shape = broadcast(X, Y)
    G = operand(grad, "grad")
    if G.is_scalar or G.shape != shape:
        raise ValueError(f"grad must have the output's shape {shape}, got "
                         f"{'a scalar' if G.is_scalar else G.shape}")
    out = _result_dtype(X, Y, op)
    rule = overflow if overflow is not None else torch_overflow(out)
    g = cast(G.array, out)
    kw = dict(rounding=rounding, overflow=rule)
    results = []
    for me, other in ((X, Y), (Y, X)):
        if me.is_scalar:
            results.append(None)
            continue
        factor = factor_of(me, other, X, alpha)
        if factor is None:
            prod = basic.multiply(g, 1, dtype=out, **kw)  # grad itself, stored
        else:
            prod = multiply(g, factor, **kw)
        summed = _sum_to(prod, me, out, rounding, rule)
        target = me.array.dtype
        if target.kind != "complex" and out.kind == "complex":
            summed = _real_part(summed)  # handle_r_to_c: a real input gets the real part
        if summed.rounded.dtype is not target:
            summed = map_result(summed, target, caster=_caster(rounding))
        results.append(summed)
    return Gradients(*results)


def _conj(v):
    """The complex conjugate of an operand or scalar, as PyTorch's ``conj()`` gives it."""
    if isinstance(v, Array):
        if v.dtype.kind != "complex":
            return v
        return convert(np.conj(v._wide()), v.dtype)
    if isinstance(v, (complex, ComplexValue)) and not isinstance(v, bool):
        return complex(v).conjugate()
    return v


def _caster(rounding):
    def go(values, fmt):
        if rounding is Rounding.NEAREST_EVEN or rounding == "nearest_even":
            return cast(convert(values, "float64"), fmt)._wide().astype(np.float64)
        return convert(values, fmt, rounding=rounding,
                       overflow=torch_overflow(fmt))._wide().astype(np.float64)
    return go


def _real_part(result):
    if hasattr(result, "results"):
        return any_of(*[_real_part(r) for r in result.results])
    comp = FORMATS[result.rounded.dtype.component.name]
    re = Array(np.array(result.rounded._wide().real.astype(comp.np_dtype), order="C"), comp)
    return Result(re, [result._candidates[0]], op=result.op, models=result.models,
                  details=result.details)


# ------------------------------------------------------------- the elementwise family
# Note: imported last, as _torch_ops builds on the functions above (and the real functions,
# exp ... pow, sigmoid, gelu, ..., on _torch_ops: docs/pytorch_equivalents.md). Every op of
# the registry that one of these modules has an equivalent for is re-exported here.
from . import (  # noqa: E402
    _torch_attention,
    _torch_cross_entropy,
    _torch_functions,
    _torch_norms,
    _torch_ops,
    _torch_reductions,
    _torch_softmax,
)
from ._torch_ops import TorchCrash  # noqa: E402

for _module in (_torch_functions, _torch_norms, _torch_ops, _torch_reductions, _torch_softmax,
                _torch_attention, _torch_cross_entropy):
    globals().update((n, getattr(_module, n)) for n in op_names() if n in _module.__all__)
del _module

#: every op whose PyTorch equivalent is here (the registry's names, in its order), and the rest
__all__ = [*(n for n in op_names() if n in globals()), "mul", "add_backward", "multiply_backward",
           "mul_backward", "convert_alpha", "result_type", "wrap_scalar", "TorchUnsupported",
           "TorchCrash"]
