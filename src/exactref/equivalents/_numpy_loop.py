"""What every NumPy equivalent shares (:mod:`exactref.equivalents.numpy`): a ufunc call as NumPy
sees it (the result dtype from the installed NumPy, :data:`POLICY`; the dtype its loop reads;
the operands converted by NumPy's own casts, :func:`cast`), the format a loop computes in, how
a loop stores into the formats without NaN, and the Results built from what a loop computes.
Nothing here is specific to one op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import arithmetic as er_ops
from .._array import Array
from .._formats import FORMATS, Format
from .._operands import to_array
from .._result import AnyOf, Result
from ._common import Operand, broadcast, operand
from ._common import shaped as _shaped  # noqa: F401 - the models' Results in the call's shape

F32, F64 = FORMATS["float32"], FORMATS["float64"]


C64, C128 = FORMATS["complex64"], FORMATS["complex128"]


BOOL = FORMATS["bool"]


#: NumPy's own float and complex dtypes (every other float or complex format is ml_dtypes').
_NATIVE = ("float16", "float32", "float64", "complex64", "complex128")  # NumPy's own


@dataclass
class _Call:
    """One call of a ufunc as NumPy sees it: the operands (None: absent), the shape of the
    result, NumPy's result dtype, and the dtype its loop reads."""

    ops: list
    shape: tuple
    out: Format
    loop: Format

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) or 1

    def read(self, i: int, fmt: Format | None = None) -> Array:
        """Operand ``i`` as the loop reads it: converted into ``fmt`` (default: the loop's
        dtype) by NumPy's own cast, broadcast to the result's shape and flattened (at least
        one element: 0-d results are reshaped at the end)."""
        o = self.ops[i]
        fmt = fmt or self.loop
        arr = cast(o.scalar if o.is_scalar else o.array, fmt)
        data = np.broadcast_to(arr.numpy(), self.shape).reshape(-1).copy()
        if not data.size:  # an empty result: one placeholder element, dropped at the end
            data = np.zeros(1, dtype=fmt.np_dtype)
        return Array(data, fmt)

    def values(self, i: int, fmt: Format | None = None) -> np.ndarray:
        """The exact values operand ``i`` has in the loop: float64, complex128 or integers."""
        return self.read(i, fmt)._wide()


def _operands(xs, labels):
    return [None if x is None else operand(x, label, numpy_scalars_are_python=False)
            for x, label in zip(xs, labels, strict=True)]


#: Where the result dtypes come from: the installed numpy itself (its ufuncs, called on
#: one-element arrays), so that a new numpy or ml_dtypes release's promotion is the reference's
#: too; the measured ``numpy`` policy is compared with it in tests/promotion.
POLICY = "numpy_installed"


def _policy(ops, op: str) -> Format:
    from ..promotion import result_type

    return result_type(*[o.promotion for o in ops if o is not None], policy=POLICY, op=op)


def _call(op: str, *xs, labels=("x", "y", "z")) -> _Call:
    """The call of the ufunc whose promotion op is ``op``: its loop reads the result dtype
    (the callers that read another dtype set ``loop``)."""
    ops = _operands(xs, labels[:len(xs)])
    present = [o for o in ops if o is not None]
    shape = broadcast(*present)
    out = _policy(ops, op)
    return _Call(ops, tuple(shape), out, out)


def _compute(fmt: Format) -> Format:
    """The format a loop of ``fmt`` computes in: float32 for float16 (NumPy's ``HALF`` loops
    convert to float) and every ml_dtypes float (its ufuncs call ``to_system``, float);
    complex64 for complex32 and bcomplex32 (``std::complex<float>``); the format otherwise."""
    if fmt.kind == "float" and fmt.name not in ("float32", "float64"):
        return F32
    if fmt.kind == "complex" and fmt.name not in ("complex64", "complex128"):
        return C64
    return fmt


def _array(parts, fmt: Format, shape=None) -> Array:
    """An Array of ``fmt`` from exact part values (float64 per part, or integers)."""
    parts = [np.asarray(p) for p in parts]
    return to_array(parts, fmt, parts[0].shape if shape is None else shape)


def _parts(values, fmt: Format) -> list:
    """float64 (or integer) part arrays of exact values: ``[real]`` or ``[real, imag]``."""
    v = np.asarray(values)
    if fmt.kind == "complex":
        v = v.astype(np.complex128)
        return [v.real.copy(), v.imag.copy()]
    return [v]


def _loop_result(reference, values, fmt: Format, model: str) -> Result:
    """A Result whose reference is ``reference``'s rounded value (the mathematical answer, or
    an Array) and whose one candidate is ``values``: what the loop computes (exactly one value
    per element, so ``covers`` accepts that value only, a zero with its sign)."""
    rounded = reference.rounded if isinstance(reference, (Result, AnyOf)) else reference
    cands = [[np.asarray(p)] for p in _parts(values, fmt)]
    details = getattr(reference, "details", {}) or {}
    return Result(rounded, cands, op=getattr(reference, "op", ""), models=(model,),
                  details=details)


def _defined(values, fmt: Format, op: str, model: str) -> Result:
    """A Result for what NumPy defines itself (the lexicographic order of complex numbers, an
    integer reciprocal): its values are both the reference and the one candidate."""
    parts = _parts(values, fmt)
    return Result(_array(parts, fmt), [[np.asarray(p)] for p in parts], op=op, models=(model,))


def _patched(res: Result, mask, values) -> Result:
    """``res`` with the elements at ``mask`` replaced by ``values`` (reference and every
    candidate): where NumPy's loop gives a value that has no mathematical counterpart (an
    integer division by zero gives 0)."""
    if not np.any(mask):
        return res
    fmt = res.rounded.dtype
    data = res.rounded.numpy().copy()
    data[mask] = np.asarray(values).astype(fmt.np_dtype) if np.ndim(values) else values
    cands = [[np.where(mask, values, np.asarray(c)) for c in part] for part in res._candidates]
    out = Result(Array(data, fmt), cands, op=res.op, models=res.models, details=res.details)
    out.inputs = res.inputs
    return out


def _nonzero(b: Array) -> tuple[Array, np.ndarray]:
    """``b`` with its zeros replaced by ones, and where they were."""
    v = b._wide()
    zero = v == 0
    if not zero.any():
        return b, zero
    return Array(np.where(zero, 1, v).astype(b.dtype.np_dtype), b.dtype), zero


def _int_division(fn, a: Array, b: Array, out: Format) -> Result:
    """``fn(a, b)`` of integer operands, with NumPy's value 0 where the divisor is 0
    (``npy_divide_by_zero``: "divide by zero encountered", and 0; ml_dtypes' integer loops
    the same). Overflow wraps (``INT_MIN // -1`` is ``INT_MIN``)."""
    safe, zero = _nonzero(b)
    res = fn(a, safe, dtype=out)
    return _patched(res, zero, 0)


def _narrow(fmt: Format) -> dict:
    """``compute=`` for an er op whose loop computes in :func:`_compute` (floats, complex)."""
    return {"compute": _compute(fmt)} if fmt.kind in ("float", "complex") else {}


def _nanless(fmt: Format) -> bool:
    """Whether ``fmt`` is a float format without NaN (float6_e2m3fn, float6_e3m2fn,
    float4_e2m1fn)."""
    return fmt.kind == "float" and not fmt.component.has_nan


#: The zero ml_dtypes stores for a NaN in a format without NaN (``ConvertImpl``:
#: ``from_sign ? -quiet_NaN() : quiet_NaN()``, and ``quiet_NaN()`` is -0 there): +0 for the
#: x86 default NaN of an invalid operation (0/0, fmod(x, 0), sqrt(-1): its sign bit is set),
#: -0 for C++'s ``quiet_NaN()`` (returned by ``divmod_impl`` for a zero divisor).
_DEFAULT_NAN, _QUIET_NAN = 0.0, -0.0


def _float_op(fn, args, out: Format, nan_zero: float, **kw):
    """``fn(*args)`` as the loop computes it into the float (or complex) format ``out``: the
    exact value rounded once, with the compute step of the narrow formats modelled. Into a
    format without NaN the loop's float32 result is stored by ml_dtypes' conversion, which
    saturates and turns a NaN into ``nan_zero``."""
    if _nanless(out):
        v = fn(*args, dtype=F32, **kw).rounded._wide()
        got = _into(v, F32, out, nan_zero)
        return _defined(got, out, fn.__name__, "computed in float32, stored by ml_dtypes "
                        "(saturating; a NaN becomes a zero)")
    return fn(*args, dtype=out, **_narrow(out), **kw)


def _op(fn, fmt: Format, *values, **kw) -> np.ndarray:
    """``fn`` (an er op) of exact values held by ``fmt``, rounded once into ``fmt``: one IEEE
    operation of the loop, its result as exact values (float64)."""
    arrays = [_array([np.asarray(v, dtype=np.float64)], fmt) for v in values]
    return fn(*arrays, dtype=fmt, **kw).rounded._wide().astype(np.float64)


def _into(values, src: Format, out: Format, nan_zero: float = _DEFAULT_NAN) -> np.ndarray:
    """Values of ``src`` converted into ``out`` as the loop stores them (one rounding to
    nearest even, with ``out``'s overflow rule; into a format without NaN a NaN becomes
    ``nan_zero``): float64 (complex128) values."""
    if src is out:
        return values
    nan = np.isnan(values) if _nanless(out) else None
    if nan is not None:
        values = np.where(nan, 0.0, values)
    arr = _array(_parts(values, src), src)
    got = er_ops.cast(arr, out).rounded._wide()
    if nan is not None:
        got = np.where(nan, nan_zero, got)
    return got


def _pair(re, im) -> np.ndarray:
    out = np.empty(np.shape(re), dtype=np.complex128)
    out.real, out.imag = re, im
    return out


def _ml_complex(fmt: Format) -> bool:
    return fmt.name in ("complex32", "bcomplex32")


_NUMPY_INT = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _ml(fmt: Format) -> bool:
    """Whether ``fmt`` is one of ml_dtypes' formats (its casts are ml_dtypes' code)."""
    return fmt.name not in _NUMPY_INT + _NATIVE


def cast(values, dtype=None, *, to=None):
    """``values`` converted to ``dtype`` by NumPy's own cast: an Array (a Python scalar as
    NumPy converts it under NEP 50: an int the dtype cannot hold raises OverflowError). This
    is the step the other equivalents take as given.

    ``cast(x, to=fmt)`` is the op instead (the registry's ``cast``, ``x.astype(fmt)``): the
    Result that covers what NumPy's and ml_dtypes' conversions may give, see :func:`astype`.
    """
    if to is not None:
        if dtype is not None:
            raise TypeError("cast() takes the target once: cast(values, dtype) for NumPy's "
                            "converted values, or cast(x, to=fmt) for the reference of "
                            "x.astype(fmt)")
        from ._numpy_cast import astype

        return astype(values, to)
    if dtype is None:
        raise TypeError("cast() needs the target format: cast(values, 'float16')")
    from .._formats import dtype as resolve_dtype

    fmt = resolve_dtype(dtype)
    if isinstance(values, Array):
        data = values.numpy()
    elif isinstance(values, (bool, int, float, complex)):
        data = np.asarray(values)
        if isinstance(values, int) and not isinstance(values, bool) and fmt.is_integer:
            data = _python_int(values, fmt)
    else:
        data = np.asarray(values)
    with np.errstate(all="ignore"):
        out = np.asarray(data).astype(fmt.np_dtype)
    return Array(out, fmt)


def _python_int(value: int, fmt: Format):
    """The Python int ``value`` as NumPy's loop of ``fmt`` reads it: NumPy's own conversion,
    asked (``np.add`` of a 0-d zero of ``fmt`` and ``value``): numpy's integers raise
    OverflowError outside their bounds; ml_dtypes 0.7's sub-byte integers check int16's
    (uint8's) and wrap (``int2`` reads 3 as -1). Where ``fmt`` does not keep its dtype with a
    Python int (ml_dtypes 0.6's int2 gives int8), the value must lie in ``fmt``'s bounds."""
    try:
        with np.errstate(all="ignore"):
            probe = np.add(np.zeros((), fmt.np_dtype), value)
    except OverflowError as exc:
        raise OverflowError(f"{exc} (NumPy's error)") from None
    if probe.dtype == fmt.np_dtype:
        return probe
    if not fmt.int_min <= value <= fmt.int_max:
        raise OverflowError(f"Python integer {value} out of bounds for {fmt.name} "
                            f"(NumPy's error)")
    return np.asarray(value)


def _cast(o: Operand, out: Format) -> Array:
    return cast(o.scalar if o.is_scalar else o.array, out)


class _IEEE:
    """One IEEE operation of exact values held by the real format ``R`` (``f.add(a, b)``,
    ``sub``, ``mul``, ``div``, ``sqrt``, ``fma``), rounded once into ``R``."""

    def __init__(self, R: Format):
        self.R = R

    def _do(self, fn, *values):
        vals = [np.broadcast_to(np.asarray(v, dtype=np.float64), np.shape(values[0]))
                for v in values]
        return _op(fn, self.R, *vals)

    def add(self, a, b):
        return self._do(er_ops.add, a, b)

    def sub(self, a, b):
        return self._do(er_ops.subtract, a, b)

    def mul(self, a, b):
        return self._do(er_ops.multiply, a, b)

    def div(self, a, b):
        return self._do(er_ops.divide, a, b)

    def sqrt(self, a):
        return self._do(er_ops.sqrt, a)

    def fma(self, a, b, c):
        return self._do(er_ops.fma, a, b, c)
