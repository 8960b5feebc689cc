"""What every jax equivalent shares (:mod:`exactref.equivalents.jax`): how jax takes its operands
(its promotion with weak Python scalars, x64, the 32-bit canonical dtypes), XLA's CPU converts
with their DAZ/FTZ, the Results that cover flushing, and XLA's float arithmetic step by step
(:class:`_Kernel`). Nothing here is specific to one op.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from .._array import Array
from .._exact import Rounding, integer_overflow
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import AnyOf, Result, any_of
from ..arithmetic import basic
from ._common import Operand, broadcast, convert, operand

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
            o = Operand.of_array(o.label, convert(o.array, target, overflow="wrap" if
                                                  target.is_integer else None), o.source)
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
    vals = integer_overflow(np.array(values, dtype=object), fmt, "wrap")
    return Array(vals.astype(fmt.np_dtype).reshape(shape), fmt)


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


def _select_mask(X, out: Format, shape):
    """Where ``X`` is a bool array of the output's shape and the result a format XLA selects
    in (see :func:`multiply`): its values, else None."""
    if (not X.is_scalar and X.array.dtype.kind == "bool" and out.name in _SELECT_PRODUCT
            and X.shape == shape):
        return np.broadcast_to(np.asarray(X.array._wide(), dtype=bool), shape)
    return None
