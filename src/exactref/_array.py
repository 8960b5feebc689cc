"""``er.Array``: values of one format, and ``er.asarray`` / ``er.round_to`` that make them.

A value that the target format cannot hold is rounded once from its exact value, never through
an intermediate format: ml_dtypes' and torch's casts from float64 into bfloat16 and the float8
formats round twice (through float32), so they are used here only for values they hold exactly.

>>> import exactref as er
>>> x = er.asarray([0.1, 2**-30, 300.0], "float8_e4m3fn")
>>> x
exactref.Array([0.1015625, 0.0, 288.0], dtype=float8_e4m3fn)
>>> x.value(1), x.dtype.name
(FloatValue(0.0), 'float8_e4m3fn')
>>> r = er.round_to([1.0 + 2**-30, 3.0], "float16", rounding="toward_positive")
>>> r.array.tolist(), r.inexact.tolist()
([1.0009765625, 3.0], [True, False])

The IEEE P3109 formats have no numpy dtype: their arrays hold float64 values, and ``.codes()``
and :func:`from_codes` convert to and from the 8-bit codes.

>>> p = er.asarray([1.0, 0.3, -1e9], "binary8p4se")
>>> p.tolist(), p.codes().tolist()
([1.0, 0.3125, -inf], [64, 50, 255])
>>> er.from_codes([0x48, 0x80], "binary8p4se").tolist()
[2.0, nan]
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._exact import (
    NAN,
    UNDEFINED_PLACEHOLDER,
    ComplexValue,
    ExactArray,
    ExactPart,
    FloatValue,
    Rounding,
    fast_eligible,
    fill_undefined,
    resolve_overflow,
    resolve_rounding,
    round_float64,
    sum_of_products,
    undefined,
)
from ._formats import FORMATS, Format, holds
from ._formats import dtype as _resolve_dtype
from .interop import is_array_like, to_numpy, to_torch

__all__ = ["Array", "asarray", "round_to", "Rounded", "from_codes", "assemble", "source"]


class Array:
    """Values of one exactref format, held in a numpy array of that format's dtype.

    Make one with :func:`asarray`. ``.dtype`` is the exactref :class:`Format`; ``.numpy()``,
    ``.torch()`` and ``numpy.asarray(a)`` give the values to other libraries; ``.tolist()`` gives
    Python numbers (floats for every float format); ``.value(index)`` the exact value of one
    element; ``.codes()`` the bit codes of a float format. A format without a numpy dtype (the
    IEEE P3109 formats, ``fmt.encoding == "p3109"``) is held as float64 values.
    """

    __slots__ = ("_data", "_fmt")
    __array_priority__ = 20

    def __init__(self, data: np.ndarray, fmt: Format):
        fmt = _resolve_dtype(fmt)
        data = np.asarray(data)
        if data.dtype != fmt.np_dtype:
            raise TypeError(
                f"Array data of dtype {data.dtype} does not match format {fmt.name}; build "
                f"arrays with er.asarray(values, {fmt.name!r})")
        if fmt.encoding != "native":
            fmt.encode(data)  # float64 values must be the format's: ValueError otherwise
        self._data = data
        self._fmt = fmt

    @property
    def dtype(self) -> Format:
        return self._fmt

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, index) -> Array:
        return Array(np.asarray(self._data[index]), self._fmt)

    def numpy(self) -> np.ndarray:
        """The values as a numpy array of the format's numpy/ml_dtypes dtype (a read-only view);
        float64 values for the formats without one (P3109's: ``.codes()`` gives their codes)."""
        view = self._data.view()
        view.flags.writeable = False
        return view

    def __array__(self, dtype=None, copy=None):
        if dtype is None:
            return self._data.copy() if copy else self._data
        return self._data.astype(dtype)

    def torch(self, device=None):
        """The values as a torch tensor of the same format (bfloat16, float8, complex32 too)."""
        if self._fmt.encoding != "native":
            raise TypeError(
                f"PyTorch has no {self._fmt.name} dtype (an IEEE P3109 format); take the values "
                f"in a format it has, er.asarray(x, 'float32').torch(), or the uint8 codes, "
                f"torch.from_numpy(x.codes())")
        return to_torch(self._data, self._fmt, device)

    def codes(self) -> np.ndarray:
        """The bit codes of the elements (uint8 up to 8 bits, else the unsigned integer of the
        format's width): the encoding of a float format, the P3109 formats' codes included.

        >>> asarray([1.0, -0.0, float("nan")], "float8_e4m3fn").codes().tolist()
        [56, 128, 127]
        """
        return self._fmt.encode(self._data)

    def _wide(self) -> np.ndarray:
        """The values in a numpy format that holds them exactly (float64/complex128/int)."""
        kind = self._fmt.kind
        if kind == "float":
            return self._data.astype(np.float64)
        if kind == "complex":
            return self._data.astype(np.complex128)
        if kind == "bool":
            return self._data
        if self._fmt.bits < 8:
            return self._data.astype(np.int64)
        return self._data

    def tolist(self):
        """Python numbers: float for float formats, complex, int, or bool, as numpy gives them."""
        return self._wide().tolist()

    def value(self, index=()):
        """The exact value of one element: FloatValue, ComplexValue, int or bool."""
        if not isinstance(index, tuple):
            index = (index,)
        item = self._wide()[index]
        if np.ndim(item):
            raise IndexError(
                f"value() needs the index of one element of shape {self.shape}, got {index}")
        kind = self._fmt.kind
        if kind == "float":
            return FloatValue(float(item))
        if kind == "complex":
            return ComplexValue(complex(item))
        if kind == "bool":
            return bool(item)
        return int(item)

    def __repr__(self) -> str:
        body = repr(self.tolist())
        if len(body) > 600:
            body = np.array2string(self._wide(), threshold=20, separator=", ")
        return f"exactref.Array({body}, dtype={self._fmt.name})"


@dataclass(frozen=True)
class Rounded:
    """What :func:`round_to` returns: the rounded array and per-element IEEE-style flags.

    ``inexact``: the result differs from the exact value; ``overflow``: the exact value rounded
    past the largest finite value, or below 0 in an unsigned format with a zero (P3109's),
    whatever the overflow rule made of it; ``underflow``: the
    exact value was below the smallest normal magnitude and the result is inexact;
    ``undefined``: the value is NaN and the format has none (float6, float4): no result
    exists, and the array holds the placeholder +0 there (all False in every other format).

    >>> r = round_to([1.0, float("nan"), 7.0], "float4_e2m1fn")
    >>> r.array.tolist(), r.undefined.tolist(), r.inexact.tolist()
    ([1.0, 0.0, 6.0], [False, True, False], [False, False, True])
    """

    array: Array
    inexact: np.ndarray
    overflow: np.ndarray
    underflow: np.ndarray
    undefined: np.ndarray | None = None


# ------------------------------------------------------------------------------- sources
def _is_python_number(v) -> bool:
    return isinstance(v, (numbers.Number, Fraction, FloatValue, ComplexValue)) and not isinstance(
        v, np.generic)


def source(values):
    """``(numpy array, Format)`` for array-likes, or ``(object array, None)`` for Python values."""
    if isinstance(getattr(values, "rounded", None), Array):  # an earlier Result
        values = values.rounded
    if isinstance(values, Array):
        return values._data, values._fmt
    if is_array_like(values) and not isinstance(values, (list, tuple)):
        return to_numpy(values)
    obj = np.empty((), dtype=object)
    obj[()] = values
    if isinstance(values, (list, tuple)):
        try:
            obj = np.array(values, dtype=object)
        except ValueError as exc:
            raise ValueError(f"the nested lists are ragged (their lengths differ): {exc}") from None
    flat = obj.reshape(-1)
    for i, v in enumerate(flat):
        if isinstance(v, (list, tuple)):  # numpy kept a shorter or longer list as an object
            raise ValueError(
                f"the nested lists are ragged (their lengths differ): element {i} at depth "
                f"{obj.ndim} is a list of {len(v)} where numbers were expected; give every row "
                f"the same length")
        if isinstance(v, np.generic):
            flat[i] = v.item() if not isinstance(v, (np.floating, np.complexfloating)) else v
        elif not _is_python_number(flat[i]) and not isinstance(v, np.generic):
            raise TypeError(
                f"element {i} is {v!r} of type {type(v).__name__}; expected numbers (bool, int, "
                f"float, complex, binary Fraction, FloatValue, ComplexValue) or arrays")
    return obj, None


def _infer_python_format(obj) -> Format:
    kinds = set()
    for v in obj.reshape(-1):
        if isinstance(v, bool | np.bool_):
            kinds.add("bool")
        elif isinstance(v, numbers.Integral):
            kinds.add("int")
        elif isinstance(v, ComplexValue) or (isinstance(v, numbers.Complex)
                                             and not isinstance(v, numbers.Real)):
            kinds.add("complex")
        else:
            kinds.add("float")
    if "complex" in kinds:
        return FORMATS["complex128"]
    if "float" in kinds:
        return FORMATS["float64"]
    if "int" in kinds:
        return FORMATS["int64"]
    return FORMATS["bool"]


def _exact_scalar(v):
    """``(real, imag)`` exact values of a Python number: Fraction, ±inf float, or NAN."""
    if isinstance(v, ComplexValue):
        return _exact_float(v.real), _exact_float(v.imag)
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        c = complex(v)
        return _exact_float(c.real), _exact_float(c.imag)
    return _exact_float(v), (Fraction(0), False)


def _exact_float(v):
    """``(value, negzero)``: the value as Fraction / ±inf / NAN, and the sign of a zero."""
    fv = FloatValue(v) if not isinstance(v, FloatValue) else v
    if fv.is_nan:
        return NAN, False
    if fv.is_inf:
        return (float("-inf") if fv.negative else float("inf")), False
    return fv.to_fraction(), fv.negative and fv.is_zero


def _exact_parts(data: np.ndarray, fmt: Format):
    """ExactArrays of the real (and imaginary) parts of a numpy array of format ``fmt``."""
    shape = data.shape
    with np.errstate(invalid="ignore"):  # a signalling NaN stays NaN, quietly
        wide = data.astype(np.complex128 if fmt.kind == "complex" else np.float64) \
            if fmt.kind in ("complex", "float") else None
    if fmt.kind == "complex":
        parts = [wide.real, wide.imag]
    elif fmt.kind == "float":
        parts = [wide]
    else:
        ints = data.astype(np.int64) if fmt.kind == "bool" or fmt.bits < 8 else data
        return [sum_of_products([(ExactPart.from_integers(ints),)], shape)]
    return [sum_of_products([(ExactPart.from_float64(p),)], shape) for p in parts]


def _round_exact(parts, fmt, mode, rule):
    """Round ExactArrays of parts into ``fmt``: ``(numpy array, inexact, overflow, underflow,
    undefined)``."""
    comp = fmt.component
    results = [p.round(comp, mode, rule) for p in parts]
    inexact = np.logical_or.reduce([r[1] for r in results])
    overflow = np.logical_or.reduce([r[2] for r in results])
    underflow = np.logical_or.reduce([r[3] for r in results])
    undef = np.logical_or.reduce([undefined(r[0], comp) for r in results])
    shape = parts[0].shape
    data = assemble(fmt, [r[0] for r in results])
    return (data.reshape(shape), inexact.reshape(shape), overflow.reshape(shape),
            underflow.reshape(shape), undef.reshape(shape))


def assemble(fmt, parts):
    """The numpy array of ``fmt`` from float64 part values (or integers) that it holds exactly."""
    if fmt.kind == "complex":
        re = parts[0]
        im = parts[1] if len(parts) > 1 else np.zeros_like(re)
        data = np.empty(re.shape, dtype=np.complex128)
        data.real, data.imag = re, im
        return data.astype(fmt.np_dtype)
    if fmt.kind == "float":
        return _exact_cast(parts[0], fmt)
    return parts[0]


def _exact_cast(values, fmt):
    """float64 values that ``fmt`` holds exactly, in ``fmt``'s dtype (cheapest exact route).
    A NaN in a format without NaN marks an undefined element: it becomes the placeholder +0
    (:data:`~exactref._exact._specials.UNDEFINED_PLACEHOLDER`), whatever its sign."""
    if fmt.np_dtype == np.float64:  # float64 itself, and the formats held as float64
        return values
    if not fmt.has_nan:
        values = fill_undefined(values, fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        f32 = values.astype(np.float32)  # exact: every format here is within float32's values
    if fmt.name == "float32":
        return f32
    if fmt.name == "bfloat16":
        return (f32.view(np.uint32) >> np.uint32(16)).astype(np.uint16).view(fmt.np_dtype)
    return f32.astype(fmt.np_dtype)


def round_to(values, dtype=None, *, rounding=Rounding.NEAREST_EVEN, overflow=None,
             _flags=True) -> Rounded:
    """Round values once into a format and report, per element, what the rounding did.

    ``values`` may be anything :func:`asarray` takes. Returns a :class:`Rounded` with the
    :class:`Array` and boolean numpy arrays ``inexact``, ``overflow``, ``underflow`` and
    ``undefined`` (a NaN into a format without NaN: the placeholder +0, flagged, not an
    error).
    ``overflow`` names the rule for results past the largest finite value: ``"ieee"``,
    ``"saturate"`` or ``"nan"`` for floats; ``"wrap"``, ``"error"`` or ``"saturate"`` for
    integers; by default the format's own (``er.dtype(name).default_overflow``).

    >>> r = round_to([1e10, -1e10], "float8_e4m3fn", overflow="saturate")
    >>> r.array.tolist(), r.overflow.tolist()
    ([448.0, -448.0], [True, True])
    """
    mode = resolve_rounding(rounding)
    data, src = source(values)
    fmt = _resolve_dtype(dtype) if dtype is not None else (
        src if src is not None else _infer_python_format(data))
    if overflow is None and dtype is None and src is None and fmt.is_integer:
        overflow = "error"  # an inferred int64 never wraps a Python int silently
    rule = resolve_overflow(overflow, fmt)
    shape = data.shape
    if src is not None and src.kind == "complex" and fmt.kind != "complex":
        raise TypeError(
            f"complex values cannot become {fmt.name} without dropping the imaginary part; "
            f"take the real part first (numpy.real) if that is what you mean")
    if src is not None and holds(fmt, src):
        with np.errstate(invalid="ignore"):  # a signalling NaN stays NaN, quietly
            if data.dtype == fmt.np_dtype:
                out = data.copy()
            elif src.is_integer and (src.bits < 8 or fmt.bits < 8):
                out = data.astype(np.int64).astype(fmt.np_dtype)  # ml_dtypes' narrow ints
            else:
                out = data.astype(fmt.np_dtype)
        false = np.zeros(shape, dtype=bool)
        return Rounded(Array(out, fmt), false, false.copy(), false.copy(), false.copy())
    if src is not None and fast_eligible(fmt.component) and (
            src.kind in ("float", "complex") or (src.is_integer and src.bits <= 32)):
        # every value is exact in float64: round it directly, no engine needed
        with np.errstate(invalid="ignore"):  # a signalling NaN stays NaN, quietly
            wide = data.astype(np.complex128 if src.kind == "complex" else np.float64,
                               copy=False)
        xs = [wide.real, wide.imag] if src.kind == "complex" else [wide]
        res = [round_float64(p, fmt.component, mode, rule, _flags) for p in xs]
        undef = np.logical_or.reduce([undefined(r[0], fmt.component) for r in res])
        out = assemble(fmt, [r[0] for r in res])
        if not _flags:
            return Rounded(Array(out, fmt), None, None, None, undef)
        flags = [np.logical_or.reduce([r[i] for r in res]) for i in (1, 2, 3)]
        return Rounded(Array(out, fmt), *flags, undef)
    if src is not None:
        parts = _exact_parts(data, src)
    else:
        flat = data.reshape(-1)
        pairs = [_exact_scalar(v) for v in flat]
        if fmt.kind != "complex" and any(
                not (im == 0) for (im, _) in (p[1] for p in pairs)):
            raise TypeError(
                f"complex values cannot become {fmt.name} without dropping the imaginary part; "
                f"pass a complex format or the real parts")
        parts = [ExactArray.of_values(shape, [p[k][0] for p in pairs], [p[k][1] for p in pairs])
                 for k in range(2 if fmt.kind == "complex" else 1)]
    out, inexact, over, under, undef = _round_exact(parts, fmt, mode, rule)
    return Rounded(Array(np.asarray(out, dtype=fmt.np_dtype).reshape(shape), fmt), inexact, over,
                   under, undef)


def asarray(values, dtype=None, *, rounding=Rounding.NEAREST_EVEN, overflow=None) -> Array:
    """An :class:`Array` of ``values`` in format ``dtype``, each value rounded once if needed.

    ``values``: an er.Array or earlier Result, numpy/torch/jax arrays (bfloat16, float8 and
    complex32 included; torch tensors from any device), numpy scalars, Python numbers (bool, int
    of any size, float, complex, binary Fraction, FloatValue, ComplexValue) and nested lists of
    them. ``dtype``: any spelling :func:`exactref.dtype` resolves; by default the input's
    format, or for Python values what numpy would choose (bool, int64, float64, complex128),
    which holds Python floats exactly.

    >>> asarray([2**53 + 1], "float32").tolist()  # one rounding from the exact integer
    [9007199254740992.0]
    >>> asarray(float.fromhex("0x1.0020000001p+0"), "float16").value().hex()  # torch: 0x1p+0
    '0x1.004p+0'

    A NaN has no value in a format without NaN (float6, float4): ValueError, naming the
    element; :func:`round_to` gives the placeholder there and flags it in ``undefined``.
    """
    r = round_to(values, dtype, rounding=rounding, overflow=overflow, _flags=False)
    if r.undefined.any():
        fmt = r.array.dtype
        where = tuple(int(i) for i in np.argwhere(r.undefined)[0])
        raise ValueError(
            f"element {where} is NaN, and {fmt.name} has no NaN: the value has no encoding "
            f"there ({int(r.undefined.sum())} such elements); replace the NaNs first (for "
            f"example with numpy.nan_to_num), or use er.round_to(values, {fmt.name!r}), which "
            f"gives the placeholder {UNDEFINED_PLACEHOLDER!r} there and marks those elements "
            f"in .undefined")
    return r.array


def from_codes(codes, dtype) -> Array:
    """The :class:`Array` of float format ``dtype`` whose elements have the bit codes ``codes``
    (integers from 0 to ``2**bits - 1``): the inverse of :meth:`Array.codes`.

    >>> from_codes([0x00, 0x01, 0x7E, 0x7F], "binary8p3se").tolist()
    [0.0, 7.62939453125e-06, 49152.0, inf]
    >>> from_codes([0x3C], "float8_e4m3fn").tolist()
    [1.5]
    """
    fmt = _resolve_dtype(dtype)
    values = fmt.decode(codes)  # checks the codes
    if fmt.encoding == "native":  # the bits themselves, NaN payloads included
        raw = np.asarray(codes).astype(np.dtype(f"u{fmt.itemsize}"))
        return Array(raw.view(fmt.np_dtype), fmt)
    return Array(values, fmt)
