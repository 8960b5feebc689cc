"""The PyTorch equivalent of ``Tensor.to`` (the registry op ``cast``): what torch 2.13's CPU
conversions compute, x86's truncating float -> integer conversions included (re-exported by
:mod:`exactref.equivalents.torch` as ``cast(x, to=...)``).
"""

from __future__ import annotations

import numpy as np

from .._array import Array
from .._formats import Format
from .._formats import dtype as resolve_dtype
from ..arithmetic import conversion
from ._common import F64, operand
from ._torch_call import _NE, _array, _flatten, _form, _paths, _quiet, _real, _shaped
from .torch import _as_tensor, torch_overflow
from .torch import cast as cast_values

__all__ = ["cast_result"]

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
