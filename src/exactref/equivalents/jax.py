"""JAX equivalents: references that cover what JAX's CPU kernels (XLA) compute.

``er.add`` and the other ops give the mathematical answer. JAX converts its operands before its
kernels run, and XLA's CPU kernels make choices of their own; the functions here do what JAX
does before the kernel (its promotion, its conversions of arrays and Python scalars), then build
the reference for what the kernel computes, with its freedoms modelled, so that
``covers(jax_output)`` answers "is this what XLA's CPU kernel may legitimately give?". What they
model, measured on jax/jaxlib 0.10.2 (CPU, x86-64; ``scripts/record_jax_fixtures.py`` records the
ground truth, ``docs/jax_equivalents.md`` lists every departure with a reproducer):

* **Result dtype**: JAX's promotion with weak Python scalars (``exactref.result_type(...,
  policy="jax")``, or ``policy="jax_x64"``): every function takes ``x64``, by default jax's
  own ``jax_enable_x64`` where jax is imported, else off.
* **Conversions**: a numpy array of a 64-bit dtype is first cast by numpy to 32 bits (x64 off);
  a Python int becomes an int32 (int64 with x64) and a Python float a float32 (float64) before
  it is converted to the result dtype, so ``bf16_array + 0.1`` reads ``0.1`` rounded twice;
  XLA's converts round to nearest even, into bfloat16 and float16 through float32 from float64
  and from integers, saturate from floats into integers (NaN becomes 0) and wrap between
  integers (:func:`cast`).
* **Denormals**: XLA's CPU kernels run with DAZ and FTZ for float32, bfloat16 (computed in
  float32) and float64, and their complex types: a subnormal operand reads as a zero of its sign
  and a result that is tiny after rounding (to the format's precision, exponent unbounded) is
  flushed, even where rounding into the format would give the smallest normal. float16 and the
  float8 formats keep their subnormals (they are normal in float32). Bit operations (abs,
  negative) and selections do not flush; comparisons read subnormals as zeros. Every reference
  here also covers the unflushed result: flushing is a freedom (``flush="both"``), not a must.
* **bool products**: XLA rewrites ``bool_array * x`` into a select where the bool array has the
  output's shape and the result is float16, float32, float64 or complex: ``False * nan`` and
  ``False * -0.0`` are ``+0`` and ``True * subnormal`` keeps the subnormal. bfloat16, float8,
  a Python bool and a broadcast bool array multiply.
* **JAX's own algorithms**: ``floor_divide`` (fmod, a correction, then ``lax.round``: half away
  from zero, ``(-0.) // 1 = +0.``), ``remainder`` (its zero takes the dividend's sign; its sign
  tests read subnormals as zeros), ``fmax``/``fmin`` (``where(x > y | isnan(y), x, y)``: a tie
  gives the second operand), integer division by zero (``x // 0`` is -1 or -2, ``x % 0`` and
  ``fmod(x, 0)`` are 0), ``clip`` (``minimum(max, maximum(min, x))``, promoted step by step).
* **XLA's kernels**: a division by a broadcast divisor may be a product by its reciprocal
  (``int8 7 / 3`` is ``7 * float32(1/3)``); ``lax.rsqrt`` is within 2 ulp for float32 and float64
  (faithful for bfloat16 and float16); complex ``abs`` is ``max * sqrt(1 + (min/max)**2)`` with
  a fused multiply-add (NaN where a part is NaN); complex division is Smith's algorithm with
  fused multiply-adds and XLA's recovery of NaN results; complex products fuse one product per
  part; complex ``sqrt`` is XLA's ``complex_sqrt``; complex ``maximum``, ``minimum``, ``fmax``,
  ``fmin`` and comparisons order lexicographically. Each of these is simulated step by step
  (flushing or not) beside the exact value rounded once, which stays the reference.

The module never imports jax: operands may be jax arrays, numpy arrays, er.Arrays or Python
scalars, and a test can check recorded outputs without jax.

>>> import numpy as np
>>> import exactref.equivalents.jax as erj
>>> x = np.array([float.fromhex("-0x1.e86a0cp-127"), 1.5], dtype=np.float32)
>>> r = erj.add(x, 0.0)
>>> r.rounded.value(0).hex()  # the exact sum: the subnormal itself
'-0x1.e86a0cp-127'
>>> r.covers(np.array([-0.0, 1.5], dtype=np.float32)).all()  # what XLA's CPU kernel gives
True
>>> erj.multiply(np.array([False]), np.array([np.nan], dtype=np.float32)).rounded.tolist()
[0.0]
"""

from __future__ import annotations

import builtins
import functools
import operator
import sys

import numpy as np

from .. import _versions
from .._array import Array
from .._exact._rounding import Rounding
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import AnyOf, Result, any_of
from ..arithmetic import basic, division, roots, selection
from ._common import Operand, broadcast, convert, operand

# what this module models was measured on these versions (exactref._versions; the
# library itself is imported only where an equivalent needs it)
_versions.check("jax", "jax", stacklevel=2)
_versions.check("jax", "jaxlib", stacklevel=2)

__all__ = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
           "reciprocal", "sqrt", "rsqrt", "abs", "negative", "maximum", "minimum", "fmax",
           "fmin", "clamp", "equal", "not_equal", "less", "less_equal", "greater",
           "greater_equal", "cast", "result_type", "convert_scalar", "x64_enabled", "FLUSHED",
           "flushes"]

_magnitude = builtins.abs  # this module defines abs, the op
_RZ = Rounding.TOWARD_ZERO
F32 = FORMATS["float32"]
F64 = FORMATS["float64"]

#: The component formats whose subnormals XLA's CPU kernels flush (DAZ and FTZ in MXCSR):
#: float32, float64, and bfloat16, which XLA computes in float32.
FLUSHED = ("float32", "float64", "bfloat16")
#: Result formats of ``bool_array * x`` that XLA's algebraic simplifier turns into a select.
_SELECT_PRODUCT = ("float16", "float32", "float64", "complex64", "complex128")
#: x64 off: what numpy arrays of 64-bit dtypes become (numpy's own cast, before jax sees them).
_CANONICAL_32 = {"int64": "int32", "uint64": "uint32", "float64": "float32",
                 "complex128": "complex64"}
#: Conversions XLA computes through float32 (from float64 and from integers).
_VIA_FLOAT32 = ("bfloat16", "float16")


def flushes(fmt) -> bool:
    """Whether XLA's CPU kernels flush the subnormals of ``fmt`` (of its component).

    >>> flushes("bfloat16"), flushes("float16"), flushes("complex64")
    (True, False, True)
    """
    return resolve_dtype(fmt).component.name in FLUSHED


def _flush_kw(fmt: Format):
    return "both" if flushes(fmt) else None


# ------------------------------------------------------------------------------ operands
def x64_enabled() -> bool:
    """Whether jax runs with x64 on: ``jax.config.jax_enable_x64`` where jax is already
    imported (this module never imports it), else False, jax's default."""
    jax = sys.modules.get("jax")
    return bool(getattr(getattr(jax, "config", None), "jax_enable_x64", False))


def _reads_x64(fn):
    """``x64=None`` (the default) reads jax's own setting (:func:`x64_enabled`)."""
    @functools.wraps(fn)
    def wrapper(*args, x64=None, **kw):
        return fn(*args, x64=x64_enabled() if x64 is None else bool(x64), **kw)
    return wrapper


def _policy(x64: bool) -> str:
    return "jax_x64" if x64 else "jax"


class _Typed:
    """What the promotion sees of an intermediate jax array (clip's ``maximum(min, x)``)."""

    def __init__(self, fmt: Format, shape, weak: bool):
        self.dtype = fmt.np_dtype
        self.shape = tuple(shape)
        self.weak_type = weak


def _operands(args, labels, x64: bool) -> list:
    """The operands as jax takes them (None stays None): numpy scalars are typed (strong)
    arrays, a numpy array of a 64-bit dtype is cast to 32 bits with x64 off."""
    out = []
    for a, label in zip(args, labels, strict=True):
        if a is None:
            out.append(None)
            continue
        o = operand(a, label, numpy_scalars_are_python=False)
        if not o.is_scalar and not x64 and o.array.dtype.name in _CANONICAL_32:
            # numpy's astype, before jax sees the array: to nearest even, integers wrap, and no
            # flushing (numpy keeps subnormals)
            target = FORMATS[_CANONICAL_32[o.array.dtype.name]]
            o = Operand(o.label, array=convert(o.array, target, overflow="wrap" if
                                               target.is_integer else None), source=o.source)
        out.append(o)
    return out


def _promotion_operand(o):
    if o is None:
        return None
    if o.is_scalar:
        return o.scalar
    if isinstance(o.source, _Typed) or hasattr(o.source, "weak_type"):
        return o.source
    return o.array


def _resolve(ops, op: str, x64: bool):
    from ..promotion import resolve

    return resolve(*[_promotion_operand(o) for o in ops if o is not None],
                   policy=_policy(x64), op=op)


@_reads_x64
def result_type(*operands, op: str, x64: bool | None = None) -> Format:
    """JAX's result dtype for ``op`` (a promotion op name: ``"add"``, ``"div"``, ``"lt"``, ...)
    of the operands, raising where jax raises.

    >>> import numpy as np
    >>> result_type(np.zeros(2, np.int8), 2.5, op="mul")
    exactref.float32
    >>> result_type(np.zeros(2, np.float64), 1, op="add")  # x64 off: numpy's cast to float32
    exactref.float32
    """
    ops = _operands(operands, [f"x{i}" for i in range(len(operands))], x64)
    return _resolve(ops, op, x64).result


@_reads_x64
def convert_scalar(value, to, *, x64: bool | None = None) -> Array:
    """A Python scalar as jax converts it into ``to``: a bool exactly; an int through int32
    (int64 with x64; jax raises OverflowError beyond it), a float through float32 (float64), a
    complex through complex64 (complex128); then XLA's convert (:func:`cast`).

    >>> convert_scalar(1 + 2**-11 + 2**-40, "float16").tolist()  # rounded twice
    [1.0]
    >>> convert_scalar(300, "uint8").tolist()  # through int32, then wrapped
    [44]
    """
    to = resolve_dtype(to)
    if isinstance(value, (bool, np.bool_)):
        src = Array(np.array([bool(value)]), FORMATS["bool"])
    elif isinstance(value, (int, np.integer)):
        base = FORMATS["int64" if x64 else "int32"]
        v = int(value)
        if not base.int_min <= v <= base.int_max:
            raise OverflowError(f"jax converts the Python int {v} to {base.name} first, which "
                                f"cannot hold it (jax raises OverflowError); pass an array of "
                                f"a wider dtype")
        src = Array(np.array([v], dtype=base.np_dtype), base)
    elif isinstance(value, complex):
        src = convert(np.array([value], dtype=np.complex128),
                      FORMATS["complex128" if x64 else "complex64"])
    else:
        src = convert(np.array([float(value)]), F64 if x64 else F32)
    return _xla_convert(src, to)[0]


def _to(o: Operand, fmt: Format, x64: bool, shape=None):
    """Operand ``o`` converted into ``fmt`` as jax converts it: ``(array, flushed)`` where
    ``flushed`` is the conversion with DAZ (or None when XLA's convert flushes nothing)."""
    if o.is_scalar:
        arr = convert_scalar(o.scalar, fmt, x64=x64)
        arr = Array(arr.numpy().reshape(()), fmt)
        if fmt.kind in ("float", "complex") and flushes(fmt):
            # a subnormal literal may reach the kernel flushed (measured: fmax(0., 2**-140))
            parts = [_daz(p, fmt) for p in _parts(arr)]
            if any(changed for _, changed in parts):
                return arr, _from_parts([z for z, _ in parts], fmt)
        return arr, None
    return _xla_convert(o.array, fmt)


# --------------------------------------------------------------------------- conversions
def _parts(arr: Array) -> list:
    """float64 parts of an Array: ``[real]`` or ``[real, imag]`` (integers as float64)."""
    w = arr._wide()
    if arr.dtype.kind == "complex":
        return [w.real.astype(np.float64), w.imag.astype(np.float64)]
    return [np.asarray(w).astype(np.float64)]


def _from_parts(parts, fmt: Format) -> Array:
    """An Array of ``fmt`` from float64 parts that ``fmt`` holds exactly."""
    if fmt.kind == "complex":
        data = np.empty(np.shape(parts[0]), dtype=np.complex128)
        data.real, data.imag = parts[0], parts[1]
        return convert(data, fmt)
    return convert(np.asarray(parts[0], dtype=np.float64), fmt)


def _daz(values, fmt: Format):
    """float64 ``values`` of ``fmt`` with its subnormals read as zeros of their sign."""
    tiny = fmt.component.smallest_normal
    with np.errstate(invalid="ignore"):
        sub = (np.abs(values) < tiny) & (values != 0)
    return np.where(sub, np.copysign(0.0, values), values), bool(np.any(sub))


def _float_to_int(values, to: Format):
    """XLA's float -> integer convert: toward zero, saturating, NaN -> 0."""
    v = np.asarray(values, dtype=np.float64)
    flat = []
    for x in v.reshape(-1):
        if np.isnan(x):
            flat.append(0)
        elif x >= to.int_max:
            flat.append(to.int_max)
        elif x <= to.int_min:
            flat.append(to.int_min)
        else:
            flat.append(int(np.trunc(x)))
    return Array(np.array(flat, dtype=to.np_dtype).reshape(v.shape), to)


def _real_to_float(values, src: Format, to: Format):
    """Real ``values`` (float64, or exact integers) of format ``src`` into the float format
    ``to``, as XLA converts: ``(array, flushed)``, ``flushed`` the convert's DAZ/FTZ result (None
    when it changes nothing)."""
    if src.is_integer:
        wide = np.asarray(values)
        if src.kind != "bool" and (to.name in _VIA_FLOAT32 or to.bits <= 8):
            return convert(convert(wide, F32)._wide(), to), None
        return convert(wide, to), None
    v = np.asarray(values, dtype=np.float64)
    if src is to:
        return convert(v, to), None
    if src.name == "float64" and to.bits > 8:
        # float64 -> float32 (the first step into bfloat16 and float16): to nearest even, and
        # with FTZ a result tiny after rounding (exponent unbounded) is flushed
        mid = convert(v, F32)._wide().astype(np.float64)
        edge = F32.smallest_normal * (1 - 2.0 ** -(F32.precision + 1))
        with np.errstate(invalid="ignore"):
            under = (np.abs(v) < edge) & (v != 0)
        plain = convert(mid, to)
        if not under.any():
            return plain, None
        return plain, convert(np.where(under, np.copysign(0.0, v), mid), to)
    if to.name == "float64" and src.name in FLUSHED:
        # float32 and bfloat16 into float64: the convert reads subnormals with DAZ
        z, changed = _daz(v, src)
        return convert(v, to), (convert(z, to) if changed else None)
    return convert(v, to), None


def _xla_convert(arr: Array, to: Format):
    """``arr`` converted into ``to`` as XLA's CPU convert does: ``(array, flushed)``, where
    ``flushed`` is the result with the convert's DAZ/FTZ (None when that changes nothing)."""
    src = arr.dtype
    if src is to:
        return arr, None
    wide = arr._wide()
    if to.kind == "bool":
        if src.kind == "complex":  # the imaginary part is dropped first (jax warns)
            re = wide.real.astype(np.float64)
            plain = re != 0
            daz = (_daz(re, src)[0] != 0) if flushes(src) else plain
        else:
            plain = np.asarray(wide) != 0
            daz = (_daz(wide.astype(np.float64), src)[0] != 0) if (
                src.kind == "float" and flushes(src)) else plain
        b = FORMATS["bool"]
        flushed = Array(np.asarray(daz, dtype=bool), b) if np.any(daz != plain) else None
        return Array(np.asarray(plain, dtype=bool), b), flushed
    if src.kind == "bool":
        ints = np.asarray(wide).astype(np.int64)
        if to.kind == "complex":
            return _from_parts([ints.astype(np.float64), np.zeros(ints.shape)], to), None
        if to.is_integer:
            return Array(ints.astype(to.np_dtype), to), None
        return convert(ints.astype(np.float64), to), None
    if to.is_integer:
        if src.is_integer:
            return convert(arr, to, overflow="wrap"), None
        real = wide.real if src.kind == "complex" else wide
        return _float_to_int(real, to), None
    if to.kind == "complex":
        comp = to.component
        if src.kind == "complex":
            re, re_f = _real_to_float(wide.real.astype(np.float64), src.component, comp)
            im, im_f = _real_to_float(wide.imag.astype(np.float64), src.component, comp)
        else:
            re, re_f = _real_to_float(_real_values(arr), src, comp)
            im, im_f = convert(np.zeros(np.shape(wide)), comp), None
        plain = _from_parts([re._wide().astype(np.float64), im._wide().astype(np.float64)], to)
        if re_f is None and im_f is None:
            return plain, None
        re_f, im_f = re_f or re, im_f or im
        return plain, _from_parts([re_f._wide().astype(np.float64),
                                   im_f._wide().astype(np.float64)], to)
    if src.kind == "complex":  # complex -> real: the real part (jax warns)
        return _real_to_float(wide.real.astype(np.float64), src.component, to)
    return _real_to_float(_real_values(arr), src, to)


def _real_values(arr: Array):
    """The values of a real array: float64, or exact integers (int64, or an object array)."""
    w = arr._wide()
    if arr.dtype.kind == "float":
        return w.astype(np.float64)
    return w


def _ints(arr: Array) -> list:
    """The values of an integer array as Python ints, flattened."""
    return [int(v) for v in np.asarray(arr._wide()).reshape(-1).tolist()]


def _wrapped(values, fmt: Format, shape) -> Array:
    """Python ints wrapped into the integer format ``fmt`` (two's complement), of ``shape``."""
    span = fmt.int_max - fmt.int_min + 1
    vals = [(v - fmt.int_min) % span + fmt.int_min for v in values]
    return Array(np.array(vals, dtype=object).astype(fmt.np_dtype).reshape(shape), fmt)


# ------------------------------------------------------------------------------ results
def _exact(values, fmt: Format, *, op: str, models=("exact",), alternatives=()) -> Result:
    """A Result whose reference is ``values`` (held exactly by ``fmt``), also covering the
    ``alternatives`` (arrays of values a kernel may give instead)."""
    rounded = values if isinstance(values, Array) else Array(
        np.asarray(values, dtype=fmt.np_dtype), fmt)
    cands = [[p] for p in _parts(rounded)]
    for alt in alternatives:
        if alt is None:
            continue
        alt = alt if isinstance(alt, Array) else Array(np.asarray(alt, dtype=fmt.np_dtype), fmt)
        for i, p in enumerate(_parts(alt)):
            cands[i].append(np.broadcast_to(p, rounded.shape))
    return Result(rounded, cands, op=op, models=tuple(models))


def _with_candidates(result, parts_list, models=()):
    """``result`` also covering each entry of ``parts_list`` (float64 parts)."""
    if isinstance(result, AnyOf):
        return AnyOf([_with_candidates(r, parts_list, models) for r in result.results])
    cands = [list(c) for c in result._candidates]
    for parts in parts_list:
        for i, p in enumerate(parts):
            cands[i].append(np.broadcast_to(np.asarray(p, dtype=np.float64),
                                            result.rounded.shape))
    out = Result(result.rounded, cands, op=result.op, models=result.models + tuple(models),
                 details=result.details)
    out.inputs = result.inputs
    return out


_EDGE = "a result tiny after rounding (exponent unbounded) flushed to zero"


def _tiny_edge(result, recompute):
    """XLA flushes a result that is below the smallest normal after rounding to the format's
    precision with an unbounded exponent, so a value just below the smallest normal that rounds
    up to it in the format is flushed too: where the reference is the smallest normal and the
    exact value lies below it (``recompute()``: the op rounded toward zero), a zero is covered."""
    if isinstance(result, AnyOf):
        return AnyOf([_tiny_edge(r, recompute) for r in result.results])
    fmt = result.rounded.dtype
    tiny = fmt.component.smallest_normal
    parts = _parts(result.rounded)
    edge = [np.abs(p) == tiny for p in parts]
    if not any(e.any() for e in edge):
        return result
    below = [np.abs(p) < tiny for p in _parts(recompute().rounded)]
    extra = [np.where(e & b, np.copysign(0.0, p), p) for e, b, p in zip(edge, below, parts,
                                                                          strict=True)]
    return _with_candidates(result, [extra], (_EDGE,))


def _er_op(fn, arrays, out: Format, *, op: str, **kw):
    """``fn(*arrays)`` in ``out``, its tolerance covering XLA's flushing where it flushes."""
    flush = _flush_kw(out) if out.kind in ("float", "complex") else None
    res = fn(*arrays, dtype=out, flush=flush, **kw)
    if flush:
        res = _tiny_edge(res, lambda: fn(*arrays, dtype=out, rounding=_RZ, **kw))
    if isinstance(res, Result):
        res.op = op
    return res


def _alternatives(converted):
    """The operand tuples a kernel may read: as converted, and with each convert's DAZ/FTZ."""
    plain = tuple(a for a, _ in converted)
    if all(f is None for _, f in converted):
        return [plain]
    return [plain, tuple(f if f is not None else a for a, f in converted)]


def _each(fn, alternatives):
    results = [fn(*alt) for alt in alternatives]
    return results[0] if len(results) == 1 else any_of(*results)


def _shape(*ops) -> tuple:
    return broadcast(*[o for o in ops if o is not None])


# ----------------------------------------------------------------------- XLA's kernels
class _Kernel:
    """XLA's float arithmetic in one (real) format, step by step on float64 carriers.

    Each op rounds to nearest even into the format (bfloat16, float16 and float8 are computed
    in float32 and rounded once, which equals rounding the exact value once: float32 has at
    least 2p + 2 bits); with ``daz``, each op reads subnormal operands as zeros and flushes a
    result tiny after rounding, as XLA's CPU kernels do for the flushing formats.
    """

    def __init__(self, fmt: Format, daz: bool):
        self.fmt = fmt.component
        self.daz = bool(daz) and self.fmt.name in FLUSHED
        self.tiny = self.fmt.smallest_normal
        wide = F64 if self.fmt.name == "float64" else F32
        self.edge = self.tiny * (1 - 2.0 ** -(wide.precision + 1))

    def rnd(self, v):
        v = np.asarray(v, dtype=np.float64)
        if self.fmt.name == "float64":
            return v
        return convert(v, self.fmt)._wide().astype(np.float64)

    def flush(self, v):
        v = np.asarray(v, dtype=np.float64)
        if not self.daz:
            return v
        return _daz(v, self.fmt)[0]

    def out(self, v):
        """Round an op's value (float64) into the format, flushing it where XLA would."""
        r = self.rnd(v)
        if self.daz:
            with np.errstate(invalid="ignore"):
                under = (np.abs(v) < self.edge) & (v != 0)
            r = np.where(under, np.copysign(0.0, v), r)
        return r

    def _binary(self, f, a, b):
        a, b = self.flush(a), self.flush(b)
        with np.errstate(all="ignore"):
            return self.out(f(a, b))

    def add(self, a, b):
        return self._binary(np.add, a, b)

    def sub(self, a, b):
        return self._binary(np.subtract, a, b)

    def mul(self, a, b):
        return self._binary(np.multiply, a, b)

    def div(self, a, b):
        return self._binary(np.divide, a, b)

    def sqrt(self, a):
        with np.errstate(all="ignore"):
            return self.out(np.sqrt(self.flush(a)))

    def fma(self, a, b, c):
        """``a * b + c`` rounded once (a contracted multiply-add)."""
        a, b, c = np.broadcast_arrays(self.flush(a), self.flush(b), self.flush(c))
        arrs = [Array(np.ascontiguousarray(v).astype(self.fmt.np_dtype), self.fmt)
                for v in (a, b, c)]
        r = basic.fma(*arrs, dtype=self.fmt).rounded._wide().astype(np.float64).reshape(
            a.shape)
        if self.daz:
            r = _daz(r, self.fmt)[0]
        return r

    def rem(self, a, b):
        """XLA's float remainder (C's fmod): exact; a subnormal divisor reads as zero (NaN),
        the dividend and the result are not flushed (measured)."""
        with np.errstate(all="ignore"):
            return np.fmod(np.asarray(a, dtype=np.float64), self.flush(b))

    def compare(self, op, a, b):
        with np.errstate(invalid="ignore"):
            return op(self.flush(a), self.flush(b))

    def select(self, a, b, larger: bool):
        """XLA's max/min: IEEE 754-2019 maximum/minimum of the operands as read (NaN
        propagates, -0 < +0)."""
        a, b = np.broadcast_arrays(self.flush(a), self.flush(b))
        with np.errstate(invalid="ignore"):
            tie = a == b
            if larger:
                pick = (a > b) | (tie & ~np.signbit(a))
            else:
                pick = (a < b) | (tie & np.signbit(a))
            out = np.where(pick, a, b)
            return np.where(np.isnan(a) | np.isnan(b), np.nan, out)

    def sign(self, a):
        a = self.flush(a)
        return np.where(a == 0, a, np.sign(a))

    def round_away(self, a):
        """``lax.round``: to the nearest integer, halves away from zero (the sign of a zero
        kept)."""
        a = self.flush(a)
        with np.errstate(invalid="ignore"):
            t = np.trunc(a)
            return np.where(np.abs(a - t) >= 0.5, t + np.copysign(1.0, a), t)


def _kernels(fmt: Format):
    """The kernels a result may come from: without flushing, and with it where XLA flushes."""
    ks = [_Kernel(fmt, False)]
    if flushes(fmt):
        ks.append(_Kernel(fmt, True))
    return ks


def _carriers(arrays, shape):
    """float64 parts of the arrays, broadcast to ``shape``."""
    return [[np.broadcast_to(p, shape) for p in _parts(a)] for a in arrays]


# ------------------------------------------------------------------------ sums, products
@_reads_x64
def add(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.add(x, y)`` on the CPU: the exact sum rounded once, covering
    flushed subnormal operands and results (float32, bfloat16, float64 and their complex
    types); bool ``+`` is a logical or.

    >>> import numpy as np
    >>> r = add(np.array([2.0**-140], np.float32), np.float32(0))
    >>> r.covers(np.array([0.0], np.float32)).all(), r.covers(np.array([2.0**-140], np.float32)).all()
    (True, True)
    """
    return _binary_arith("add", basic.add, "add", x, y, x64)


@_reads_x64
def subtract(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.subtract(x, y)`` (see :func:`add`); bool operands raise, as in
    jax."""
    return _binary_arith("subtract", basic.subtract, "sub", x, y, x64)


def _binary_arith(name, fn, promotion, x, y, x64):
    X, Y = _operands((x, y), ("x", "y"), x64)
    _shape(X, Y)
    out = _resolve((X, Y), promotion, x64).result
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    return _each(lambda a, b: _er_op(fn, (a, b), out, op=name), _alternatives(conv))


@_reads_x64
def multiply(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.multiply(x, y)``: the exact product rounded once (flushing
    covered), except that a bool array of the output's shape times a float16, float32, float64
    or complex operand is XLA's select ``where(b, y, 0)``: ``False * nan = +0``, ``False * -0.0
    = +0``, and ``True * y`` is ``y`` itself, even a subnormal. A complex product's parts may
    fuse one of their products (XLA contracts ``ac - bd`` and ``ad + bc``).

    >>> import numpy as np
    >>> b = np.array([False, True])
    >>> multiply(b, np.array([np.nan, 2.0**-140], np.float32)).rounded.tolist()
    [0.0, 7.174648137343064e-43]
    >>> multiply(b, np.array([np.nan, 1.0], "bfloat16")).rounded.tolist()  # bfloat16 multiplies
    [nan, 1.0]
    """
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    out = _resolve((X, Y), "mul", x64).result
    for b, other in ((X, Y), (Y, X)):
        mask = _select_mask(b, out, shape)
        if mask is not None:
            return _select_product(mask, other, out, shape, x64)
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    if out.kind == "complex":
        return _each(lambda a, c: _complex_product(a, c, out), _alternatives(conv))
    return _each(lambda a, c: _er_op(basic.multiply, (a, c), out, op="multiply"),
                 _alternatives(conv))


def _select_product(mask, other: Operand, out: Format, shape, x64):
    oc, _ = _to(other, out, x64)
    parts = [np.where(mask, p, 0.0) for p in _carriers([oc], shape)[0]]
    return _exact(_from_parts(parts, out), out, op="multiply",
                  models=("XLA's select: where(b, y, 0)",))


def _complex_product(a: Array, b: Array, out: Format):
    ref = _er_op(basic.multiply, (a, b), out, op="multiply")
    shape = tuple(ref.rounded.shape)
    (ar, ai), (br, bi) = _carriers([a, b], shape)
    extra = [_complex_mul(k, ar, ai, br, bi, fused) for k in _kernels(out)
             for fused in (True, False)]
    return _with_candidates(ref, extra, ("XLA's product, step by step",))


# ----------------------------------------------------------------------------- quotients
@_reads_x64
def divide(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.divide(x, y)``: the exact quotient rounded once (integers give
    float32 with x64 off), flushing covered; a complex quotient also covers XLA's Smith
    algorithm with fused multiply-adds and its recovery of NaN results. Where the divisor is
    broadcast (a Python scalar, a 0-d or size-1 array), XLA may compute ``x * (1 / y)``
    instead, the reciprocal rounded first (``int8 7 / 3`` is ``0x1.2aaaacp+1``, not the
    quotient ``0x1.2aaaaap+1``); a bool array then selects ``1 / y`` or ``+0``.

    >>> import numpy as np
    >>> divide(np.array([1, 7], np.int8), 2).rounded.tolist()
    [0.5, 3.5]
    >>> divide(np.array([7, 7], np.int8), 3).covers(
    ...     np.array([float.fromhex("0x1.2aaaaap+1"), float.fromhex("0x1.2aaaacp+1")],
    ...              np.float32)).tolist()
    [True, True]
    """
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    out = _resolve((X, Y), "div", x64).result
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    recip = Y.shape != shape  # XLA: a / broadcast(b) => a * broadcast(1 / b)
    mask = _select_mask(X, out, shape)

    def go(a, b):
        if out.kind == "complex":
            res = _complex_quotient(a, b, out)
        else:
            res = _er_op(division.divide, (a, b), out, op="divide")
        if recip:
            res = _with_candidates(res, _reciprocal_products(a, b, out, shape, mask),
                                   ("x * (1 / y), the reciprocal rounded first",))
        return res

    return _each(go, _alternatives(conv))


def _select_mask(X, out: Format, shape):
    """Where ``X`` is a bool array of the output's shape and the result a format XLA selects
    in (see :func:`multiply`): its values, else None."""
    if (not X.is_scalar and X.array.dtype.kind == "bool" and out.name in _SELECT_PRODUCT
            and X.shape == shape):
        return np.broadcast_to(np.asarray(X.array._wide(), dtype=bool), shape)
    return None


def _reciprocal_products(a: Array, b: Array, out: Format, shape, mask):
    """``a * (1 / b)`` step by step, each step rounded in the format (bfloat16 and float16
    also with the reciprocal and the product kept in float32): lists of float64 parts."""
    carriers = _carriers([a, b], shape)
    extra = []
    for k in _kernels(out):
        if out.kind == "complex":
            (ar, ai), (br, bi) = carriers
            one, zero = np.ones(shape), np.zeros(shape)
            for fused in (True, False):
                ir, ii = _smith(k, one, zero, br, bi, fused)
                for pf in (True, False):
                    extra.append(_complex_mul(k, ar, ai, ir, ii, pf) if mask is None else
                                 [np.where(mask, ir, 0.0), np.where(mask, ii, 0.0)])
            continue
        (av,), (bv,) = carriers
        wides = [k] + ([_Kernel(F32, k.daz)] if k.fmt.bits < 32 else [])
        for w in wides:
            inv = w.div(1.0, bv)
            if mask is not None:
                extra.append([np.where(mask, k.out(inv), 0.0)])
            else:
                extra.append([k.out(w.mul(av, inv))])
    return extra


def _complex_mul(k: _Kernel, ar, ai, br, bi, fused: bool):
    """XLA's complex product step by step: ``fused`` contracts ``ac - bd`` into ``fma(a, c,
    -bd)`` and ``ad + bc`` into ``fma(b, c, ad)`` (measured)."""
    if fused:
        return [k.fma(ar, br, -k.mul(ai, bi)), k.fma(ai, br, k.mul(ar, bi))]
    return [k.sub(k.mul(ar, br), k.mul(ai, bi)), k.add(k.mul(ar, bi), k.mul(ai, br))]


@_reads_x64
def reciprocal(x, *, x64: bool | None = None):
    """The reference for ``jnp.reciprocal(x)`` (``lax.integer_pow(x, -1)``: ``1 / x`` rounded
    once; integers give float32 with x64 off); a complex operand is divided into ``1 + 0j`` by
    XLA's complex division."""
    (X,) = _operands((x,), ("x",), x64)
    out = _resolve((X,), "reciprocal", x64).result
    conv = [_to(X, out, x64)]
    if out.kind == "complex":
        def one(a):
            ones = _from_parts([np.ones(a.shape), np.zeros(a.shape)], out)
            return _complex_quotient(ones, a, out, op="reciprocal")
        return _each(one, _alternatives(conv))
    return _each(lambda a: _er_op(division.reciprocal, (a,), out, op="reciprocal"),
                 _alternatives(conv))


def _smith(k: _Kernel, ar, ai, br, bi, fused: bool):
    """XLA's complex division (``EmitComplexDivide``): Smith's algorithm, then the recovery of
    a NaN + NaN i result (zero divisor, infinite numerator, infinite divisor)."""
    def muladd(a, b, c):
        return k.fma(a, b, c) if fused else k.add(k.mul(a, b), c)

    with np.errstate(all="ignore"):
        rat1 = k.div(br, bi)
        den1 = muladd(rat1, br, bi)
        rat2 = k.div(bi, br)
        den2 = muladd(rat2, bi, br)
        lt = k.compare(operator.lt, np.abs(br), np.abs(bi))
        cr = np.where(lt, k.div(muladd(rat1, ar, ai), den1), k.div(muladd(rat2, ai, ar), den2))
        ci = np.where(lt, k.div(muladd(rat1, ai, -ar), den1),
                      k.div(muladd(-rat2, ar, ai), den2))
        inf = np.full(np.shape(cr), np.inf)
        zero_den = (k.compare(operator.eq, np.abs(br), 0.0)
                    & k.compare(operator.eq, np.abs(bi), 0.0)
                    & (~np.isnan(ar) | ~np.isnan(ai)))
        inf_b = np.copysign(inf, br)
        z = (k.mul(inf_b, ar), k.mul(inf_b, ai))
        finite_b = (np.abs(br) != np.inf) & ~np.isnan(br) & (np.abs(bi) != np.inf) & \
            ~np.isnan(bi)
        ar_inf, ai_inf = np.abs(ar) == np.inf, np.abs(ai) == np.inf
        inf_num = (ar_inf | ai_inf) & finite_b
        ar1 = np.copysign(np.where(ar_inf, 1.0, 0.0), ar)
        ai1 = np.copysign(np.where(ai_inf, 1.0, 0.0), ai)
        i = (k.mul(inf, k.add(k.mul(ar1, br), k.mul(ai1, bi))),
             k.mul(inf, k.sub(k.mul(ai1, br), k.mul(ar1, bi))))
        finite_a = (np.abs(ar) != np.inf) & ~np.isnan(ar) & (np.abs(ai) != np.inf) & \
            ~np.isnan(ai)
        br_inf, bi_inf = np.abs(br) == np.inf, np.abs(bi) == np.inf
        inf_den = (br_inf | bi_inf) & finite_a
        br1 = np.copysign(np.where(br_inf, 1.0, 0.0), br)
        bi1 = np.copysign(np.where(bi_inf, 1.0, 0.0), bi)
        zero = np.zeros(np.shape(cr))
        f = (k.mul(zero, k.add(k.mul(ar, br1), k.mul(ai, bi1))),
             k.mul(zero, k.sub(k.mul(ai, br1), k.mul(ar, bi1))))
        both_nan = np.isnan(cr) & np.isnan(ci)
        out = []
        for part, zp, ip, fp in zip((cr, ci), z, i, f, strict=True):
            fix = np.where(zero_den, zp, np.where(inf_num, ip, np.where(inf_den, fp, part)))
            out.append(np.where(both_nan, fix, part))
        return out


def _complex_quotient(a: Array, b: Array, out: Format, op: str = "divide"):
    ref = division.divide(a, b, dtype=out)
    ref.op = op
    shape = tuple(ref.rounded.shape)
    (ar, ai), (br, bi) = _carriers([a, b], shape)
    extra = [_smith(k, ar, ai, br, bi, fused) for k in _kernels(out) for fused in (True, False)]
    res = _exact(ref.rounded, out, op=op, models=("exact",))
    return _with_candidates(res, extra, ("XLA's Smith division, step by step",))


@_reads_x64
def floor_divide(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.floor_divide(x, y)``: JAX's own algorithm, every step rounded
    in the dtype (bfloat16 and float16 too) and flushed where XLA flushes: ``mod = fmod(x, y)``,
    ``div = (x - mod) / y`` (``x / y`` where ``y == 0``), minus 1 where ``mod`` and ``y`` differ
    in sign, then ``lax.round`` (halves away from zero). So ``(-0.) // 1 = +0.``, ``(-a) // (-b)
    = -0.`` for ``0 < a/b < 1``, and quotients past ``2**(p-2)`` may differ from
    ``floor(x / y)``. Integers: ``lax.div`` corrected toward -inf; ``x // 0`` is -1 for ``x ==
    0`` and -2 otherwise (unsigned: the largest value), ``INT_MIN // -1 = INT_MIN``. bool
    operands divide as int32.

    >>> import numpy as np
    >>> floor_divide(np.array([-0.0, -1.0], np.float32), np.array([1.0, -3.0], np.float32)).rounded.tolist()
    [0.0, -0.0]
    >>> floor_divide(np.array([5, 0], np.int32), 0).rounded.tolist()
    [-2, -1]
    """
    return _division_family("floor_divide", x, y, x64)


@_reads_x64
def remainder(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.remainder(x, y)``: ``m = fmod(x, y)``, plus ``y`` where ``m`` is
    nonzero and its sign differs from ``y``'s, rounded once; a zero result keeps the dividend's
    sign (``remainder(-0., 1.) = -0.``), and the sign tests read subnormals as zeros where XLA
    flushes (``remainder(-2**-140, 1.)`` is ``-2**-140`` in float32, not ``1.``). Integers:
    ``x % 0 = 0``, ``INT_MIN % -1 = 0``.

    >>> import numpy as np
    >>> remainder(np.array([-0.0, -2.0], np.float32), 1.0).rounded.tolist()
    [-0.0, -0.0]
    """
    return _division_family("remainder", x, y, x64)


@_reads_x64
def fmod(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.fmod(x, y)`` (``lax.rem``): exact for floats, the dividend's
    sign; XLA reads a subnormal divisor as zero (NaN) but keeps a subnormal dividend and result.
    Integers: ``fmod(x, 0) = 0`` (the divisor 0 is replaced by 1), ``INT_MIN % -1 = 0``.

    >>> import numpy as np
    >>> fmod(np.array([5, -5], np.int32), np.array([0, 3], np.int32)).rounded.tolist()
    [0, -2]
    """
    return _division_family("fmod", x, y, x64)


def _division_family(name, x, y, x64):
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    out = _resolve((X, Y), name, x64).result
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    if out.is_integer:
        a, b = (np.broadcast_to(c[0]._wide(), shape) for c in conv)
        # jnp.fmod replaces a zero divisor by 1 only when the operands' own result type is an
        # integer: two bools divide as int32 with lax.rem's x % 0 = x
        both_bool = all(o.scalar.__class__ is bool if o.is_scalar else o.array.dtype.kind ==
                        "bool" for o in (X, Y))
        zero_to_one = name == "remainder" or (name == "fmod" and not both_bool)
        return _exact(_int_division(name, a, b, out, zero_to_one), out, op=name,
                      models=("XLA's integer division",))
    recip = name == "floor_divide" and Y.shape != shape

    def go(a, b):
        (xa,), (yb,) = _carriers([a, b], shape)
        values = []
        for k in _kernels(out):
            if name == "floor_divide":
                values.append(_jax_floor_divide(k, xa, yb))
                if recip:  # XLA: (x - mod) / broadcast(y) => (x - mod) * (1 / y)
                    for w in [k] + ([_Kernel(F32, k.daz)] if k.fmt.bits < 32 else []):
                        values.append(_jax_floor_divide(k, xa, yb, w))
            elif name == "remainder":
                values.append(_jax_remainder(k, xa, yb))
            else:
                values.append(k.rem(xa, yb))
        arrays = [_from_parts([v], out) for v in values]
        models = ("jax's algorithm",) + (("subnormals flushed",) if flushes(out) else ()) + (
            ("x * (1 / y)",) if recip else ())
        return _exact(arrays[0], out, op=name, models=models, alternatives=arrays[1:])

    return _each(go, _alternatives(conv))


def _jax_floor_divide(k: _Kernel, x, y, recip: _Kernel | None = None):
    """``jnp.floor_divide`` for floats: ``_float_divmod``'s quotient, then ``lax.round``;
    ``recip``: the division computed as a product by the reciprocal, in that kernel."""
    mod = k.rem(x, y)
    x1 = np.where(k.compare(operator.eq, y, 0.0), x, k.sub(x, mod))
    div = k.div(x1, y) if recip is None else k.out(recip.mul(x1, recip.div(1.0, y)))
    ind = k.compare(operator.ne, mod, 0.0) & (k.sign(y) != k.sign(mod))
    div = np.where(ind, k.sub(div, 1.0), div)
    return k.round_away(div)


def _jax_remainder(k: _Kernel, x, y):
    """``jnp.remainder`` for floats."""
    m = k.rem(x, y)
    plus = (k.compare(operator.lt, m, 0.0) != k.compare(operator.lt, y, 0.0)) & \
        k.compare(operator.ne, m, 0.0)
    return np.where(plus, k.add(m, y), m)


def _int_division(name, a, b, out: Format, zero_to_one: bool):
    """XLA's integer division family, exactly: ``lax.div`` truncates, ``x / 0`` is -1 (all
    bits set: the largest value for unsigned), ``INT_MIN / -1 = INT_MIN``; ``lax.rem(x, 0) =
    x``, ``INT_MIN % -1 = 0``; jnp replaces a zero divisor by 1 in ``remainder`` and ``fmod``."""
    flat_a = [int(v) for v in np.asarray(a).reshape(-1)]
    flat_b = [int(v) for v in np.asarray(b).reshape(-1)]
    signed = out.kind == "int"

    def div(p, q):
        if q == 0:
            return -1 if signed else out.int_max
        r = _magnitude(p) // _magnitude(q) * (1 if (p < 0) == (q < 0) else -1)
        return out.int_min if signed and r > out.int_max else r

    def rem(p, q):
        if q == 0:
            return p
        return _magnitude(p) % _magnitude(q) * (1 if p >= 0 else -1)

    def sign(v):
        return (v > 0) - (v < 0)

    res = []
    for p, q in zip(flat_a, flat_b, strict=True):
        if name == "floor_divide":
            d = div(p, q)
            if signed and sign(p) != sign(q) and rem(p, q) != 0:
                d -= 1
            res.append(d)
        elif name == "remainder":
            q = q if q != 0 or not zero_to_one else 1
            m = rem(p, q)
            res.append(m + q if (m < 0) != (q < 0) and m != 0 else m)
        else:
            res.append(rem(p, q if q != 0 or not zero_to_one else 1))
    if out.kind == "bool":
        raise TypeError(f"{name} has no bool result in jax (bool operands divide as int32)")
    return Array(np.array(res, dtype=object).astype(out.np_dtype).reshape(np.shape(a)), out)


# --------------------------------------------------------------------------------- roots
@_reads_x64
def sqrt(x, *, x64: bool | None = None):
    """The reference for ``jnp.sqrt(x)``: the square root rounded once (integers give float32
    with x64 off), ``sqrt(subnormal) = 0`` covered where XLA flushes; a complex operand also
    covers XLA's ``complex_sqrt`` (within 2 ulp of each part's exact value)."""
    (X,) = _operands((x,), ("x",), x64)
    out = _resolve((X,), "sqrt", x64).result
    conv = [_to(X, out, x64)]
    if out.kind == "complex":
        return _each(lambda a: _complex_sqrt(a, out), _alternatives(conv))
    return _each(lambda a: _er_op(roots.sqrt, (a,), out, op="sqrt"), _alternatives(conv))


@_reads_x64
def rsqrt(x, *, x64: bool | None = None):
    """The reference for ``jax.lax.rsqrt(x)``: XLA's float32 and float64 kernels are not
    correctly rounded (an estimate refined by Newton's method: measured at most 1.75 ulp from the
    exact value over every float32 in [1, 4)), so every value within 2 ulp of the exact
    ``1 / sqrt(x)`` is covered; bfloat16 and float16 (computed in float32) are faithful (either
    neighbour). ``rsqrt(subnormal) = inf`` is covered where XLA flushes. lax takes floating
    operands only: integers and bool raise TypeError, as in jax; complex operands (which jax
    takes) are not modelled and raise TypeError.

    >>> import numpy as np
    >>> r = rsqrt(np.array([3.0], np.float32))
    >>> r.rounded.value(0).hex(), float(r.lowest[0]).hex(), float(r.highest[0]).hex()
    ('0x1.279a74p-1', '0x1.279a720000000p-1', '0x1.279a780000000p-1')
    """
    (X,) = _operands((x,), ("x",), x64)
    fmt = X.array.dtype if not X.is_scalar else None
    if fmt is None or fmt.kind != "float":
        name = fmt.name if fmt is not None else type(x).__name__
        what = ("exactref has no reference for a complex rsqrt" if fmt is not None and
                fmt.kind == "complex" else "jax.lax's error")
        raise TypeError(f"rsqrt does not accept dtype {name}. Accepted dtypes are subtypes of "
                        f"floating ({what}); convert to a float dtype first")
    flush = _flush_kw(fmt)
    ne = roots.rsqrt(X.array, dtype=fmt, flush=flush)
    down = roots.rsqrt(X.array, dtype=fmt, flush=flush, rounding=Rounding.TOWARD_NEGATIVE)
    up = roots.rsqrt(X.array, dtype=fmt, flush=flush, rounding=Rounding.TOWARD_POSITIVE)
    lo, hi = down.lowest, up.highest
    models = ("faithful",)
    if fmt.name in ("float32", "float64"):  # one more ulp either way: within 2 ulp
        dt = fmt.np_dtype
        with np.errstate(invalid="ignore"):
            inner = np.isfinite(lo) & (lo > 0) & np.isfinite(hi) & (hi > 0)
            lo = np.where(inner, np.nextafter(lo.astype(dt), dt.type(0)).astype(np.float64), lo)
            hi = np.where(inner, np.nextafter(hi.astype(dt), dt.type(np.inf)).astype(
                np.float64), hi)
        models = ("within 2 ulp",)
    res = Result(ne.rounded, [list(ne._candidates[0]) + [lo, hi]], op="rsqrt",
                 models=ne.models + models, details=ne.details)
    res.inputs = ne.inputs
    return res


def _complex_sqrt(a: Array, out: Format):
    ref = roots.sqrt(a, dtype=out)
    ref.op = "sqrt"
    shape = tuple(ref.rounded.shape)
    (re, im) = _carriers([a], shape)[0]
    res = _exact(ref.rounded, out, op="sqrt")
    extra = [_xla_complex_sqrt(k, re, im, fused) for k in _kernels(out)
             for fused in (True, False)]
    res = _with_candidates(res, extra, ("XLA's complex_sqrt, step by step",))
    return res


def _xla_complex_sqrt(k: _Kernel, x, y, fused: bool):
    """XLA's ``complex_sqrt`` (generated by functional_algorithms), step by step; ``fused``:
    ``1 + q*q`` contracted into a multiply-add. XLA's simplifier turns each division by a
    constant into a product by the constant's reciprocal (measured)."""
    # the constants, computed in the component type as the C++ code does
    dt = k.fmt.np_dtype.type
    sq2 = dt(np.sqrt(2.0))
    sq12 = dt(np.sqrt(dt(1) + sq2))
    c = {"sq2": np.float64(sq2), "sq12": np.float64(sq12), "sq12x2": np.float64(sq12 * sq2)}

    def cdiv(v, constant):  # v / constant, as XLA computes it: v * (1 / constant)
        return k.mul(v, k.rnd(1.0 / np.float64(constant)))

    def sq(v):
        return k.mul(v, v)

    def one_plus_sq(q):
        return k.fma(q, q, 1.0) if fused else k.add(1.0, sq(q))

    with np.errstate(all="ignore"):
        ax, ay = np.abs(x), np.abs(y)
        eq = k.compare(operator.eq, ax, ay)
        gt = k.compare(operator.gt, ax, ay)
        lt = k.compare(operator.lt, ax, ay)
        sq_ax = k.sqrt(ax)
        mx, mn = k.select(ax, ay, True), k.select(ax, ay, False)
        q = k.div(mn, mx)
        r = sq(q)
        sqa = k.sqrt(one_plus_sq(q))
        inner = np.where(k.compare(operator.eq, mx, mn), k.mul(c["sq2"], mx),
                         np.where(k.compare(operator.eq, sqa, 1.0) & k.compare(
                             operator.gt, r, 0.0), k.add(mx, cdiv(k.mul(mx, r), 2.0)),
                             k.mul(mx, sqa)))
        u_general = k.sqrt(k.add(cdiv(inner, 2.0), cdiv(ax, 2.0)))
        odd = k.compare(operator.eq, u_general, 0.0) | k.compare(operator.eq, u_general,
                                                                  np.inf)
        r0 = np.where(eq, 1.0, np.where(lt, k.div(ax, ay), k.div(ay, ax)))
        mx0, mn0 = k.select(1.0, np.abs(r0), True), k.select(1.0, np.abs(r0), False)
        q1 = k.div(mn0, mx0)
        r1 = sq(q1)
        sqa0 = k.sqrt(one_plus_sq(q1))
        h = np.where(k.compare(operator.eq, mx0, mn0), k.mul(c["sq2"], mx0),
                     np.where(k.compare(operator.eq, sqa0, 1.0) & k.compare(operator.gt, r1,
                                                                            0.0),
                              k.add(mx0, cdiv(k.mul(mx0, r1), 2.0)), k.mul(mx0, sqa0)))
        sq_1h = k.sqrt(k.add(1.0, h))
        sq_ay = k.sqrt(ay)
        sq_rh = k.sqrt(k.add(r0, h))
        u = np.where(eq, cdiv(k.mul(sq_ax, c["sq12"]), c["sq2"]),
                     np.where(odd, np.where(gt, k.mul(sq_ax, cdiv(sq_1h, c["sq2"])),
                                            k.mul(sq_ay, cdiv(sq_rh, c["sq2"]))), u_general))
        ratio = np.where(eq, 1.0, np.where(lt, k.div(sq_ax, sq_ay), k.div(sq_ay, sq_ax)))
        ay_div_u = np.where(
            eq, cdiv(sq_ay, c["sq12x2"]),
            np.where(odd, np.where(gt, k.div(k.mul(sq_ay, ratio), k.mul(sq_1h, c["sq2"])),
                                   k.div(sq_ay, k.mul(sq_rh, c["sq2"]))),
                     k.div(ay, k.mul(u_general, 2.0))))
        y_neg = k.compare(operator.lt, y, 0.0)
        x_ge = k.compare(operator.ge, x, 0.0)
        x_lt = k.compare(operator.lt, x, 0.0)
        real = np.where(x_ge, u, ay_div_u)
        imag = np.where(x_lt, np.where(y_neg, -u, u), np.where(y_neg, -ay_div_u, ay_div_u))
        return [real, imag]


# ---------------------------------------------------------------------- abs, negative
@_reads_x64
def abs(x, *, x64: bool | None = None):  # noqa: A001 - the op's name
    """The reference for ``jnp.abs(x)``: bool and unsigned operands come back unchanged, signed
    integers wrap (``abs(INT_MIN) = INT_MIN``), floats lose their sign bit (no flushing: a bit
    operation); a complex operand gives XLA's ``max * sqrt(1 + (min / max)**2)`` with a fused
    multiply-add, NaN wherever a part is NaN (``abs(inf + nan j)`` is NaN in jax), its
    reference the exact modulus rounded once.

    >>> import numpy as np
    >>> abs(np.array([-128, 3], np.int8)).rounded.tolist()
    [-128, 3]
    """
    (X,) = _operands((x,), ("x",), x64)
    fmt = _resolve((X,), "abs", x64).result
    a = X.array if not X.is_scalar else _to(X, fmt, x64)[0]
    src = a.dtype
    if src.kind in ("bool", "uint"):
        return _exact(a, src, op="abs", models=("identity",))
    if src.kind == "int":
        return _exact(_wrapped([v if v >= 0 else -v for v in _ints(a)], src, a.shape), src,
                      op="abs", models=("two's complement",))
    if src.kind == "float":
        return _exact(_from_parts([np.abs(_parts(a)[0])], src), src, op="abs")
    ref = selection.abs(a)
    ref.op = "abs"
    shape = tuple(ref.rounded.shape)
    re, im = _carriers([a], shape)[0]
    extra = []
    for k in _kernels(fmt):
        for fused in (True, False):
            ax, ay = np.abs(re), np.abs(im)
            mx, mn = k.select(ax, ay, True), k.select(ax, ay, False)
            d = k.div(mn, mx)
            s = k.sqrt(k.fma(d, d, 1.0) if fused else k.add(1.0, k.mul(d, d)))
            r = k.mul(mx, s)
            extra.append([np.where(np.isnan(r), mn, r)])
    res = _exact(ref.rounded, fmt, op="abs")
    return _with_candidates(res, extra, ("XLA's complex abs, step by step",))


@_reads_x64
def negative(x, *, x64: bool | None = None):
    """The reference for ``jnp.negative(x)``: the sign flipped exactly (no flushing: a bit
    operation), integers wrapping; bool raises, as in jax."""
    (X,) = _operands((x,), ("x",), x64)
    out = _resolve((X,), "negative", x64).result
    a = X.array if not X.is_scalar else _to(X, out, x64)[0]
    if out.is_integer:
        return _exact(_wrapped([-v for v in _ints(a)], out, a.shape), out, op="negative",
                      models=("two's complement",))
    return _exact(_from_parts([-p for p in _parts(a)], out), out, op="negative")


# ---------------------------------------------------------------------------- selections
@_reads_x64
def maximum(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.maximum(x, y)``: IEEE 754-2019's maximum (NaN propagates,
    ``max(-0., +0.) = +0.`` in either order), of the operands read with DAZ where XLA flushes
    (``maximum(2**-140, 0.)`` may be ``+0.``)."""
    return _extremum("maximum", True, x, y, x64)


@_reads_x64
def minimum(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.minimum(x, y)`` (see :func:`maximum`)."""
    return _extremum("minimum", False, x, y, x64)


def _extremum(name, larger, x, y, x64):
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    out = _resolve((X, Y), name, x64).result
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    if out.is_integer:
        a, b = (np.broadcast_to(np.asarray(c[0]._wide()), shape) for c in conv)
        pick = (a >= b) if larger else (a <= b)
        return _exact(Array(np.where(pick, a, b).astype(out.np_dtype), out), out, op=name)

    def go(a, b):
        xs, ys = _carriers([a, b], shape)
        if out.kind == "complex":  # jax: select(lexicographic x > y (x < y), x, y)
            values = [_pick(_lex(k, operator.gt if larger else operator.lt, xs, ys), xs, ys,
                            out) for k in _kernels(out)]
        else:
            values = [_from_parts([k.select(xs[0], ys[0], larger)], out)
                      for k in _kernels(out)]
        return _exact(values[0], out, op=name, models=("IEEE 754-2019",),
                      alternatives=values[1:])

    return _each(go, _alternatives(conv))


def _lex(k: _Kernel, cmp, xs, ys):
    """jax's order of complex numbers (lexicographic: the real parts, then the imaginary
    parts), each comparison reading subnormals as XLA's kernel reads them."""
    (xr, xi), (yr, yi) = xs, ys
    if cmp in (operator.eq, operator.ne):
        eq = k.compare(operator.eq, xr, yr) & k.compare(operator.eq, xi, yi)
        return eq if cmp is operator.eq else ~eq
    strict = {operator.le: operator.lt, operator.ge: operator.gt}.get(cmp, cmp)
    return k.compare(strict, xr, yr) | (k.compare(operator.eq, xr, yr) & k.compare(cmp, xi, yi))


def _pick(mask, xs, ys, out: Format) -> Array:
    return _from_parts([np.where(mask, xp, yp) for xp, yp in zip(xs, ys, strict=True)], out)


@_reads_x64
def fmax(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.fmax(x, y)``: ``where(x > y | isnan(y), x, y)``, so a tie
    (``fmax(+0., -0.)``) gives the second operand and a NaN is ignored; the comparison reads
    subnormals as zeros where XLA flushes, while the select returns the operand itself
    (``fmax(2**-130, 2**-140)`` is ``2**-140`` in float32) or, where XLA compiles it into a
    max instruction (a broadcast operand), the operand as read (``fmax(-2**-140, -2) = -0.``).

    >>> import numpy as np
    >>> fmax(np.array([0.0, np.nan], np.float32), np.array([-0.0, 1.0], np.float32)).rounded.tolist()
    [-0.0, 1.0]
    """
    return _fextremum("fmax", operator.gt, x, y, x64)


@_reads_x64
def fmin(x, y, *, x64: bool | None = None):
    """The reference for ``jnp.fmin(x, y)``: ``where(x < y | isnan(y), x, y)`` (see
    :func:`fmax`)."""
    return _fextremum("fmin", operator.lt, x, y, x64)


def _fextremum(name, cmp, x, y, x64):
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    out = _resolve((X, Y), name, x64).result
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    if out.is_integer:
        a, b = (np.broadcast_to(np.asarray(c[0]._wide()), shape) for c in conv)
        return _exact(Array(np.where(cmp(a, b), a, b).astype(out.np_dtype), out), out, op=name)

    def go(a, b):
        xs, ys = _carriers([a, b], shape)
        nan_y = np.logical_or.reduce([np.isnan(p) for p in ys])
        values = []
        for k in _kernels(out):
            mask = (_lex(k, cmp, xs, ys) if out.kind == "complex" else
                    k.compare(cmp, xs[0], ys[0])) | nan_y
            values.append(_pick(mask, xs, ys, out))
            if k.daz:  # compiled into a max/min instruction, which returns the operand read
                values.append(_pick(mask, [k.flush(p) for p in xs], [k.flush(p) for p in ys],
                                    out))
        return _exact(values[0], out, op=name, models=("where(x ? y | isnan(y), x, y)",),
                      alternatives=values[1:])

    return _each(go, _alternatives(conv))


@_reads_x64
def clamp(x, min=None, max=None, *, x64: bool | None = None):  # noqa: A002 - jnp.clip's names
    """The reference for ``jnp.clip(x, min, max)``: ``minimum(max, maximum(min, x))`` with
    XLA's maximum and minimum (see :func:`maximum`), each step promoted on its own as jnp does
    (``maximum(min, x)`` first); NaN in a bound gives NaN, ``min > max`` gives ``max``."""
    X, LO, HI = _operands((x, min, max), ("x", "min", "max"), x64)
    shape = _shape(X, LO, HI)
    if LO is None and HI is None:
        raise ValueError("clamp needs min or max (jnp.clip with neither returns x unchanged)")
    cur, fmt = X, None
    steps = []
    for bound, larger, name in ((LO, True, "maximum"), (HI, False, "minimum")):
        if bound is None:
            continue
        res = _resolve((bound, cur), name, x64)
        steps.append((bound, larger, res.result))
        cur = Operand("x", array=None, source=_Typed(res.result, shape, res.weak))
        cur.array = Array(np.zeros(shape, dtype=res.result.np_dtype), res.result)
        fmt = res.result
    candidates = []
    for daz in ((False, True) if any(flushes(f) for _, _, f in steps) else (False,)):
        arr, flushed = _to(X, steps[0][2], x64)
        arr = flushed if (daz and flushed is not None) else arr
        for bound, larger, f in steps:
            if arr.dtype is not f:
                conv, fl = _xla_convert(arr, f)
                arr = fl if (daz and fl is not None) else conv
            bnd, bfl = _to(bound, f, x64)
            bnd = bfl if (daz and bfl is not None) else bnd
            if f.is_integer:
                a, b = np.broadcast_arrays(arr.numpy(), bnd.numpy())
                arr = Array(np.where(b >= a if larger else b <= a, b, a).astype(f.np_dtype), f)
                continue
            (bv,), (av,) = _carriers([bnd, arr], shape)
            arr = _from_parts([_Kernel(f, daz).select(bv, av, larger)], f)
        candidates.append(arr)
    return _exact(candidates[0], fmt, op="clamp", models=("minimum(max, maximum(min, x))",),
                  alternatives=candidates[1:])


# --------------------------------------------------------------------------- comparisons
def _comparison(name, promotion, op):
    @_reads_x64
    def compare(x, y, *, x64: bool | None = None):
        X, Y = _operands((x, y), ("x", "y"), x64)
        shape = _shape(X, Y)
        c = _resolve((X, Y), promotion, x64).compute
        conv = [_to(X, c, x64), _to(Y, c, x64)]
        values = []
        for a, b in _alternatives(conv):
            if c.is_integer:  # one integer format: numpy compares its values exactly
                values.append(op(*np.broadcast_arrays(a.numpy(), b.numpy())))
                continue
            xs, ys = _carriers([a, b], shape)
            for k in _kernels(c):
                values.append(_lex(k, op, xs, ys) if c.kind == "complex" else
                              k.compare(op, xs[0], ys[0]))
        b_fmt = FORMATS["bool"]
        arrays = [Array(np.asarray(v, dtype=bool).reshape(shape), b_fmt) for v in values]
        return _exact(arrays[0], b_fmt, op=name, models=("in the promoted dtype",) + (
            ("subnormals read as zeros",) if flushes(c) else ()), alternatives=arrays[1:])

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = (f"The reference for ``jnp.{name}(x, y)``: both operands converted to "
                       f"their promoted dtype first (``int32 16777217`` equals ``float32 "
                       f"16777216.``), then compared exactly, subnormals read as zeros where "
                       f"XLA flushes; complex operands are ordered lexicographically, as jax "
                       f"orders them.")
    return compare


equal = _comparison("equal", "eq", operator.eq)
not_equal = _comparison("not_equal", "ne", operator.ne)
less = _comparison("less", "lt", operator.lt)
less_equal = _comparison("less_equal", "le", operator.le)
greater = _comparison("greater", "gt", operator.gt)
greater_equal = _comparison("greater_equal", "ge", operator.ge)


# --------------------------------------------------------------------------------- cast
@_reads_x64
def cast(x, to, *, x64: bool | None = None):
    """The reference for ``jax.lax.convert_element_type(x, to)`` (``x.astype(to)``) on the CPU:
    to nearest even; float64, and integers, into bfloat16 and float16 through float32 (twice
    rounded); float into integer toward zero, saturating, NaN to 0; integers wrap; a complex
    value drops its imaginary part; into bool, nonzero (NaN too) is True. Where XLA's convert
    flushes (float32 or bfloat16 into float64, float64 into float32, any flushing format into
    bool) the flushed result is covered too.

    >>> import numpy as np
    >>> cast(np.array([np.nan, np.inf, 300.0, -2.9], np.float32), "int8").rounded.tolist()
    [0, 127, 127, -2]
    >>> cast(np.array([1 + 2**-8 + 2**-30]), "bfloat16", x64=True).rounded.tolist()
    [1.0]
    """
    (X,) = _operands((x,), ("x",), x64)
    to = resolve_dtype(to)
    if not x64 and to.name in _CANONICAL_32:
        to = FORMATS[_CANONICAL_32[to.name]]
    plain, flushed = _to(X, to, x64)
    if X.is_scalar:
        plain = Array(plain.numpy().reshape(()), to)
    return _exact(plain, to, op="cast", models=("XLA's convert",) + (
        ("its DAZ/FTZ",) if flushed is not None else ()), alternatives=(flushed,))
