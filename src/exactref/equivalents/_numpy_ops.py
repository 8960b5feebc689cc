"""NumPy equivalents of the elementwise family: what NumPy 2.4's ufuncs (and ml_dtypes 0.6's and
0.7's loops) compute for ``subtract`` ... ``greater_equal``, ``np.clip`` and ``astype``.

Each equivalent does what NumPy does before its loop runs (the result dtype from the installed
NumPy, asked: :data:`POLICY`; the dtype the loop reads; the operands converted by
NumPy's own casts, taken as given, see :func:`exactref.equivalents.numpy.cast`), then asks
exactref's ops for what the loop computes on those values. Where the loop is the mathematical
answer rounded once, the Result is the op's own (with the float32 compute step of the narrow
formats as a modelled implementation); where the loop departs from it, the Result's reference
stays the mathematical answer and its only candidate is what the loop computes, step by step in
exact arithmetic, so ``tolerance()`` shows the departure and ``covers()`` accepts exactly it.

Sources (NumPy v2.4.6, ml_dtypes v0.6.0; ml_dtypes 0.7.0's promotion and casts measured where
they differ) and measurements:
``/work/notes/issue10_library_behaviour.md``; each function names the loop it follows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import arithmetic as er_ops
from .._array import Array, _assemble
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import AnyOf, Result, any_of
from ._common import broadcast, operand

__all__ = ["subtract", "divide", "floor_divide", "remainder", "fmod", "reciprocal", "sqrt",
           "abs", "negative", "maximum", "minimum", "fmax", "fmin", "clamp", "equal",
           "not_equal", "less", "less_equal", "greater", "greater_equal", "astype"]

F32, F64 = FORMATS["float32"], FORMATS["float64"]
C64, C128 = FORMATS["complex64"], FORMATS["complex128"]
BOOL = FORMATS["bool"]
#: NumPy's own float and complex dtypes (every other float or complex format is ml_dtypes').
_NATIVE = ("float16", "float32", "float64", "complex64", "complex128")  # NumPy's own


# ------------------------------------------------------------------------ the call
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
        from .numpy import cast

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


# ---------------------------------------------------------------------- Results
def _array(parts, fmt: Format, shape=None) -> Array:
    """An Array of ``fmt`` from exact part values (float64 per part, or integers)."""
    parts = [np.asarray(p) for p in parts]
    shape = parts[0].shape if shape is None else shape
    data = _assemble(fmt, [p.reshape(-1) for p in parts])
    return Array(np.asarray(data).astype(fmt.np_dtype).reshape(shape), fmt)


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


def _shaped(res, shape: tuple):
    """``res`` (computed on flattened operands) in the result's shape (0-d included)."""
    if isinstance(res, AnyOf):
        return AnyOf([_shaped(r, shape) for r in res.results])
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


# ------------------------------------------------------------------- integer guards
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


# ------------------------------------------------------------------------ arithmetic
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


def subtract(x, y):
    """The reference for ``np.subtract(x, y)``: the exact difference rounded once.

    float32/float64/complex64/complex128 natively, integers wrapping; float16 (``HALF``
    loops) and every ml_dtypes float computed in float32 and rounded into the dtype
    (``ufuncs::Subtract``), complex32 and bcomplex32 in complex64, with the dtype's overflow
    rule: the compute step is a modelled implementation beside the single rounding (they agree
    for one subtraction: float32 has 2p + 2 bits for each of them). bool raises TypeError as
    NumPy does ("numpy boolean subtract ... is not supported").
    """
    c = _call("sub", x, y)
    res = er_ops.subtract(c.read(0), c.read(1), dtype=c.out, **_narrow(c.out))
    return _shaped(res, c.shape)


def divide(x, y):
    """The reference for ``np.divide(x, y)`` (true division).

    Integers and bool are read as float64 (NumPy's ``dd->d`` loop; int64 values rounded by
    NumPy's cast), ml_dtypes' small integers as float16 or float32 (the loop their promotion
    finds). Real floats: the exact quotient rounded once (float16 and ml_dtypes floats through
    float32, as for :func:`subtract`); ``x / ±0`` is a signed infinity, ``0 / 0`` NaN. Complex
    quotients follow the loops: see :func:`_complex_divide`.
    """
    c = _true_division_call(x, y)
    a, b = c.read(0), c.read(1)
    if c.out.kind == "complex":
        return _shaped(_complex_divide(a, b, c.out), c.shape)
    return _shaped(_float_op(er_ops.divide, (a, b), c.out, _DEFAULT_NAN), c.shape)


def _true_division_call(x, y) -> _Call:
    """The call of ``np.divide``. Note: true division converts a Python int beside an integer
    array straight into the float loop (``int8_array / 300`` is float64; ``int4_array / 300``
    float16), with no NEP 50 bounds check, where the numpy promotion policy raises
    PromotionOverflowError: the result dtype is taken for an int that fits."""
    from ..promotion import PromotionOverflowError

    try:
        return _call("div", x, y)
    except PromotionOverflowError:
        ops = _operands((x, y), ("x", "y"))
        stand_in = [1 if o.is_scalar and type(o.scalar) is int else o.promotion for o in ops]
        from ..promotion import result_type

        out = result_type(*stand_in, policy=POLICY, op="div")
        return _Call(ops, tuple(broadcast(*ops)), out, out)


def floor_divide(x, y):
    """The reference for ``np.floor_divide(x, y)``.

    Integers: ``floor(x / y)`` exactly, wrapping (``INT_MIN // -1`` is ``INT_MIN``), and 0
    where ``y`` is 0 (NumPy warns "divide by zero encountered"); bool operands use the int8
    loop. Floats: NumPy's ``npy_divmod`` (``npy_math_internal.h.src``; ml_dtypes'
    ``divmod_impl`` is the same algorithm in float), CPython's float floor division, each step
    rounded in the compute format (float32 for float16 and ml_dtypes floats, the dtype for
    float32 and float64), the result then rounded into the dtype::

        mod = fmod(a, b); div = (a - mod) / b
        if mod != 0 and (b < 0) != (mod < 0): div -= 1
        if div != 0: q = floor(div); q += 1 if div - q > 0.5
        else: q = copysign(0, a / b)
        b == 0: q = a / b

    It is ``floor(a / b)`` except where the rounded quotient ``(a - mod) / b`` lands on the
    wrong side of an integer: only for ``|a / b| >= 2**(p - 2)`` (p the compute format's
    precision), e.g. float32 ``0x1.1745ecp+35 // 0x1.2499p+12`` is 8006600 where the floor of
    the quotient is 8006601. The Result's reference is the exact floor; its one candidate is
    the algorithm's value.
    """
    c = _call("floor_divide", x, y)
    a, b = c.read(0), c.read(1)
    if c.out.is_integer:
        return _shaped(_int_division(er_ops.floor_divide, a, b, c.out), c.shape)
    C = _compute(c.out)
    q, _ = npy_divmod(a._wide(), b._wide(), C)
    got = _into(q, C, c.out, _QUIET_NAN)
    if _nanless(c.out):
        return _shaped(_defined(got, c.out, "floor_divide", f"npy_divmod in {C.name}"),
                       c.shape)
    ref = er_ops.floor_divide(a, b, dtype=c.out)
    return _shaped(_loop_result(ref, got, c.out, f"npy_divmod in {C.name}"), c.shape)


def remainder(x, y):
    """The reference for ``np.remainder(x, y)`` (Python's ``%``).

    Integers: Python's modulo exactly, and 0 where ``y`` is 0 (NumPy warns). Floats:
    ``npy_divmod``'s modulus, which is the exact ``x - y * floor(x / y)`` rounded once: ``fmod``
    (exact) plus ``y`` where their signs differ, one rounding; an exact zero takes the
    divisor's sign (``remainder(-0., 1.)`` is +0, unlike PyTorch's); ``y = ±0`` gives NaN;
    float16 and ml_dtypes floats computed in float32 (a modelled implementation).
    """
    c = _call("remainder", x, y)
    a, b = c.read(0), c.read(1)
    if c.out.is_integer:
        return _shaped(_int_division(er_ops.remainder, a, b, c.out), c.shape)
    return _shaped(_float_op(er_ops.remainder, (a, b), c.out, _QUIET_NAN), c.shape)


def fmod(x, y):
    """The reference for ``np.fmod(x, y)`` (C's ``fmod``): exact for floats (the dividend's
    sign, NaN for ``y = ±0``); integers truncated division's remainder, and 0 where ``y`` is
    0 (NumPy warns)."""
    c = _call("fmod", x, y)
    a, b = c.read(0), c.read(1)
    if c.out.is_integer:
        return _shaped(_int_division(er_ops.fmod, a, b, c.out), c.shape)
    return _shaped(_float_op(er_ops.fmod, (a, b), c.out, _DEFAULT_NAN), c.shape)


# --------------------------------------------------------------------- npy_divmod
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


def npy_divmod(a, b, C: Format):
    """NumPy's ``npy_divmod`` (and ml_dtypes' ``divmod_impl``) on exact values ``a``, ``b`` held
    by ``C``, every step rounded in ``C``: ``(floordiv, mod)`` as float64 arrays."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        mod = _op(er_ops.fmod, C, a, b)
        div = _op(er_ops.divide, C, _op(er_ops.subtract, C, a, mod), b)
        adjust = (mod != 0) & ((b < 0) != (mod < 0))
        mod = np.where(adjust, _op(er_ops.add, C, mod, b),
                       np.where(mod == 0, np.copysign(0.0, b), mod))
        div = np.where(adjust, _op(er_ops.subtract, C, div, np.ones_like(div)), div)
        fl = _op(er_ops.divide, C, div, np.ones_like(div), rounding_mode="floor")
        up = _op(er_ops.subtract, C, div, fl) > 0.5
        fl = np.where(up, _op(er_ops.add, C, fl, np.ones_like(fl)), fl)
        quotient = _op(er_ops.divide, C, a, b)
        q = np.where(div != 0, fl, np.copysign(0.0, quotient))
        zero = b == 0
        q = np.where(zero, quotient, q)
        mod = np.where(zero, np.nan, mod)
    return q, mod


# ----------------------------------------------------------------------------- unary
def _unary(op: str, x) -> _Call:
    return _call(op, x, labels=("x",))


#: What C's conversion of ``1.0 / 0`` (+inf, a double) gives in NumPy's integer reciprocal
#: loop ``(T)(1.0 / in)`` (``loops_autovec.dispatch.c.src``), measured on x86-64: the
#: "integer indefinite" of cvttsd2si (the narrow types through int32, then truncated).
_INT_RECIPROCAL_OF_ZERO = {"int8": 0, "uint8": 0, "int16": 0, "uint16": 0,
                           "int32": -2**31, "uint32": 0, "int64": -2**63, "uint64": 0}


def reciprocal(x):
    """The reference for ``np.reciprocal(x)``.

    Floats: ``1 / x`` rounded once (float16 and ml_dtypes floats through float32). Integers
    keep their dtype (bool becomes int8): NumPy's loop is ``(T)(1.0 / x)``, so the result is
    ``trunc(1 / x)`` (1 for 1, -1 for -1, 0 otherwise) and, for ``x = 0``, C's conversion of
    +inf into the type (see :data:`_INT_RECIPROCAL_OF_ZERO`). Complex: NumPy's own loop,
    see :func:`_complex_reciprocal`.
    """
    c = _unary("reciprocal", x)
    a = c.read(0)
    if c.out.is_integer:
        safe, zero = _nonzero(a)
        res = er_ops.divide(1, safe, rounding_mode="trunc", dtype=c.out)
        return _shaped(_patched(res, zero, _INT_RECIPROCAL_OF_ZERO[c.out.name]), c.shape)
    if c.out.kind == "complex":
        return _shaped(_complex_reciprocal(a, c.out), c.shape)
    return _shaped(_float_op(er_ops.reciprocal, (a,), c.out, _DEFAULT_NAN), c.shape)


def sqrt(x):
    """The reference for ``np.sqrt(x)``: the square root rounded once (float16 and ml_dtypes
    floats through float32; int8, uint8 and bool give float16, int16 and uint16 float32, wider
    integers float64, each read through NumPy's cast). Complex: see :func:`_complex_sqrt`."""
    c = _unary("sqrt", x)
    a = c.read(0)
    if c.out.kind == "complex":
        return _shaped(_complex_sqrt(a, c.out), c.shape)
    return _shaped(_float_op(er_ops.sqrt, (a,), c.out, _DEFAULT_NAN), c.shape)


_COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "float16": "complex32",
               "bfloat16": "bcomplex32"}


def abs(x):  # noqa: A001 - the op's name
    """The reference for ``np.abs(x)`` (``np.absolute``).

    Real formats: exact (``abs(-0) = +0``; ``abs(INT_MIN)`` is ``INT_MIN``: two's complement
    wraps; bool and unsigned unchanged). Complex: the modulus as the loops compute it, see
    :func:`_complex_abs`.
    """
    c = _unary("abs", x)
    if c.ops[0].is_scalar and isinstance(c.ops[0].scalar, complex) or (
            not c.ops[0].is_scalar and c.ops[0].array.dtype.kind == "complex"):
        c.loop = FORMATS[_COMPLEX_OF[c.out.name]]
        return _shaped(_complex_abs(c.read(0), c.out), c.shape)
    return _shaped(er_ops.abs(c.read(0), dtype=c.out), c.shape)


def negative(x):
    """The reference for ``np.negative(x)``: exact (``-(+0) = -0``); integers wrap
    (``-INT_MIN`` is ``INT_MIN``, unsigned values wrap modulo 2**n); bool raises TypeError as
    NumPy does."""
    c = _unary("negative", x)
    return _shaped(er_ops.negative(c.read(0), dtype=c.out), c.shape)


# ------------------------------------------------------------------------ selections
#: NumPy's lexicographic comparisons of complex numbers, per comparison: the real parts
#: first, an unordered imaginary part making a real-part decision False.
_LEX = {
    "eq": lambda ar, ai, br, bi, ordered: (ar == br) & (ai == bi),
    "ne": lambda ar, ai, br, bi, ordered: (ar != br) | (ai != bi),
    "gt": lambda ar, ai, br, bi, ordered: ((ar > br) & ordered) | ((ar == br) & (ai > bi)),
    "ge": lambda ar, ai, br, bi, ordered: ((ar > br) & ordered) | ((ar == br) & (ai >= bi)),
    "lt": lambda ar, ai, br, bi, ordered: ((ar < br) & ordered) | ((ar == br) & (ai < bi)),
    "le": lambda ar, ai, br, bi, ordered: ((ar < br) & ordered) | ((ar == br) & (ai <= bi)),
}


def _lex(cmp: str, ar, ai, br, bi):
    """NumPy's lexicographic comparison ``cmp`` of complex numbers (``loops.c.src``: ``CGT``
    ... ``CNE``; ml_dtypes' complex32 and bcomplex32 compare the same way)."""
    with np.errstate(invalid="ignore"):
        return _LEX[cmp](ar, ai, br, bi, ~np.isnan(ai) & ~np.isnan(bi))


def _tie_first(fmt: Format, propagates: bool):
    """Which operand a NumPy loop of ``fmt`` returns where ``x`` and ``y`` compare equal
    (zeros of either sign): True the first, False the second, None either.

    float32/float64: ``maximum``/``minimum`` the second (``scalar_max_f`` is ``_mm_max_ss``,
    and the SIMD ``npyv_maxn`` agrees); ``fmax``/``fmin`` either (libm's ``fmaxf`` returns
    the first, the SIMD ``npyv_maxp`` the second, and which one an element gets depends on the
    array's length and the element's position). float16: the first (``HALF_maximum``:
    ``npy_half_ge(in1, in2) || npy_half_isnan(in1) ? in1 : in2``). ml_dtypes floats: the
    second (``ufuncs::Maximum``: ``isnan(a) || a > b ? a : b``).
    """
    if fmt.name in ("float32", "float64"):
        return False if propagates else None
    return fmt.name == "float16"


def _pick(larger: bool, propagates: bool, a, b, first: bool):
    """Where a real loop returns its first operand: ``maximum``/``minimum`` propagate a NaN
    (the first operand's, else the second's), ``fmax``/``fmin`` ignore one."""
    with np.errstate(invalid="ignore"):
        beats = a > b if larger else a < b
        tie = a == b
        keep = beats | (tie & first)
        if propagates:
            return np.isnan(a) | keep
        return np.isnan(b) | (keep & ~np.isnan(a))


def _complex_pick(larger: bool, propagates: bool, a, b, ml: bool):
    """Where a complex loop returns its first operand (NumPy's ``CFLOAT_maximum`` ... and
    ml_dtypes' ``ufuncs::Maximum`` ... on complex32/bcomplex32)."""
    cmp = ("gt" if larger else "lt") if ml else ("ge" if larger else "le")
    wins = _lex(cmp, a.real, a.imag, b.real, b.imag)
    nan_a = np.isnan(a.real) | np.isnan(a.imag)
    nan_b = np.isnan(b.real) | np.isnan(b.imag)
    return (nan_a if propagates else nan_b) | wins


#: The four extrema: (the larger operand wins, a NaN propagates)
_EXTREMA = {"maximum": (True, True), "minimum": (False, True), "fmax": (True, False),
            "fmin": (False, False)}


def _extremum(op: str, x, y):
    larger, propagates = _EXTREMA[op]
    c = _call(op, x, y)
    a, b = c.read(0), c.read(1)
    fn = getattr(er_ops, op)
    if c.out.kind == "complex":
        av, bv = a._wide(), b._wide()
        ml = c.out.name not in _NATIVE
        got = np.where(_complex_pick(larger, propagates, av, bv, ml), av, bv)
        model = (f"ml_dtypes' ufuncs::{op.capitalize()}" if ml else f"NumPy's C{op}") + \
            " (lexicographic order)"
        return _shaped(_defined(got, c.out, op, model), c.shape)
    if c.out.kind != "float":
        return _shaped(fn(a, b, dtype=c.out), c.shape)
    ref = fn(a, b, dtype=c.out)
    av, bv = a._wide(), b._wide()
    first = _tie_first(c.out, propagates)
    picks = [first] if first is not None else [True, False]
    cands = [np.where(_pick(larger, propagates, av, bv, f), av, bv) for f in picks]
    model = {True: "the first operand on ties", False: "the second operand on ties",
             None: "either operand on ties (by position)"}[first]
    res = Result(ref.rounded, [cands], op=op, models=(model,), details=ref.details)
    return _shaped(res, c.shape)


def maximum(x, y):
    """The reference for ``np.maximum(x, y)``: the larger operand, NaN propagating (the NaN
    operand itself). Where the operands compare equal (+0 and -0) NumPy returns one of them by
    the rule of its loop (:func:`_tie_first`): the second for float32, float64 and the
    ml_dtypes floats, the first for float16. Complex operands are ordered lexicographically
    (NumPy's ``CGE``; ml_dtypes' ``>``), which ``er.maximum`` refuses: the equivalent
    implements it, exactly."""
    return _extremum("maximum", x, y)


def minimum(x, y):
    """The reference for ``np.minimum(x, y)``; the rules of :func:`maximum`."""
    return _extremum("minimum", x, y)


def fmax(x, y):
    """The reference for ``np.fmax(x, y)``: the larger operand, a NaN operand ignored. On a
    tie of zeros float32 and float64 may return either (libm's ``fmax`` for some elements,
    SIMD for others, by length and position), float16 the first, ml_dtypes floats the second;
    complex lexicographically with a NaN second operand ignored."""
    return _extremum("fmax", x, y)


def fmin(x, y):
    """The reference for ``np.fmin(x, y)``; the rules of :func:`fmax`."""
    return _extremum("fmin", x, y)


# ------------------------------------------------------------------------------ clip
def _bound(v, fmt_kind_iu: bool, info, lower: bool):
    """``np.clip``'s Python-int bound of an integer array beyond the dtype's range: None
    (``_methods._clip``)."""
    if fmt_kind_iu and type(v) is int:
        if lower and v <= info[0] or not lower and v >= info[1]:
            return None
    return v


def clamp(x, min=None, max=None):  # noqa: A002 - np.clip's names
    """The reference for ``np.clip(x, min, max)``.

    ``_methods._clip`` first: for a numpy integer array a Python-int bound at or past the
    dtype's range is dropped; ``clip(x, None, max)`` is ``np.minimum(x, max)`` and
    ``clip(x, min)`` is ``np.maximum(x, min)`` (see :func:`minimum`, whose tie rules
    apply). Otherwise the ``clip`` ufunc (``clip.cpp``), in the loop its promotion finds
    (ml_dtypes floats have none: bfloat16 clips in float32):

    * float32/float64 where the inner loop sees both bounds constant (stride 0: each has one
      element, or both are broadcast along the inner axis, see :func:`_constant_bounds`):
      ``if x < min: x = min; if x > max: x = max`` (ties keep ``x``; ``min > max`` gives
      ``max``), and a NaN bound makes every element NaN;
    * float32/float64 otherwise: ``_NPY_MIN(_NPY_MAX(x, min), max)`` with
      ``_NPY_MAX(a, b) = isnan(a) ? a : (a > b ? a : b)``: ties give the bound, a NaN bound
      gives NaN where it applies;
    * float16: the same with ``npy_half_ge``/``npy_half_le``, so ties keep ``x``;
    * complex: lexicographic (``PyArray_CGT``), ties give the bound;
    * integers and bool: exact.
    """
    X = operand(x, "x", numpy_scalars_are_python=False)
    iu = not X.is_scalar and X.array.dtype.kind in ("int", "uint") and not _ml(X.array.dtype)
    info = (X.array.dtype.int_min, X.array.dtype.int_max) if iu else None
    lo = _bound(min, iu, info, True)
    hi = _bound(max, iu, info, False)
    if lo is None and hi is None:
        raise ValueError("np.clip needs at least one of min and max (NumPy returns "
                         "np.positive(x) when both are dropped)")
    if lo is None:
        return minimum(x, hi)
    if hi is None:
        return maximum(x, lo)
    c = _call("clamp", x, lo, hi, labels=("x", "min", "max"))
    v, L, H = (c.read(i)._wide() for i in range(3))
    fmt = c.out
    if fmt.kind == "complex":
        got = _clip_pick(_clip_pick(v, L, True), H, False)
        return _shaped(_defined(got, fmt, "clamp", "clip.cpp's complex _NPY_MIN(_NPY_MAX(x, "
                                "min), max): lexicographic, ties give the bound"), c.shape)
    ref = er_ops.clamp(c.read(0), c.read(1), c.read(2), dtype=fmt)
    if fmt.kind != "float":
        return _shaped(ref, c.shape)
    const = _constant_bounds(c)
    paths = [const] if const is not None else [True, False]
    results = []
    with np.errstate(invalid="ignore"):
        for constant in paths:
            if fmt.name in ("float32", "float64") and constant:
                got = np.where(v < L, L, v)
                got = np.where(got > H, H, got)
                got = np.where(np.isnan(L) | np.isnan(H), np.nan, got)
                model = "clip.cpp, constant bounds: ties keep x, a NaN bound fills NaN"
            elif fmt.name == "float16":
                got = np.where(np.isnan(v) | (v >= L), v, L)
                got = np.where(np.isnan(got) | (got <= H), got, H)
                model = "clip.cpp, float16: ties keep x"
            else:
                got = np.where(np.isnan(v) | (v > L), v, L)
                got = np.where(np.isnan(got) | (got < H), got, H)
                model = "clip.cpp, _NPY_MIN(_NPY_MAX(x, min), max): ties give the bound"
            results.append(_loop_result(ref, got, fmt, model))
    return _shaped(results[0] if len(results) == 1 else any_of(*results), c.shape)


def _constant_bounds(c: _Call):
    """Whether ``clip``'s inner loop sees both bounds constant (``steps[1] == steps[2] == 0``,
    the loop ``_npy_clip_const_minmax_``): True where both have one element, or where both
    are broadcast along the last axis of length above 1 of C-ordered operands (the iterator's
    inner axis); None (either loop) where that axis depends on a layout that is not C order;
    False otherwise."""
    if all(o.size == 1 for o in c.ops[1:]):
        return True
    axes = [i for i, n in enumerate(c.shape) if n > 1]
    inner = axes[-1]
    nd = len(c.shape)

    def flat_along_inner(o) -> bool:
        shape = (1,) * (nd - len(o.shape)) + tuple(o.shape)
        return shape[inner] == 1

    if not all(flat_along_inner(o) for o in c.ops[1:]):
        return False
    arrays = [o.array.numpy() for o in c.ops if not o.is_scalar]
    return True if all(a.flags["C_CONTIGUOUS"] for a in arrays) else None


def _clip_pick(p, q, larger: bool):
    """clip.cpp's complex ``_NPY_MAX`` (``larger``) or ``_NPY_MIN``: ``p`` if it has a NaN
    part or ``PyArray_CGT(p, q)`` (the real parts decide unless equal, then the imaginary
    parts; no NaN test of its own), else ``q``."""
    with np.errstate(invalid="ignore"):
        if larger:
            wins = np.where(p.real == q.real, p.imag > q.imag, p.real > q.real)
        else:
            wins = np.where(p.real == q.real, p.imag < q.imag, p.real < q.real)
    return np.where(np.isnan(p.real) | np.isnan(p.imag) | wins, p, q)


# ----------------------------------------------------------------------- comparisons
_SHORT = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
          "greater": "gt", "greater_equal": "ge"}


_OPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}


def _exact_integers(ops) -> bool:
    """Whether NumPy compares the operands exactly as integers: integer (or bool) arrays of
    NumPy's own dtypes (it has loops for int64 with uint64, with no float64 detour) and Python
    ints of any size beside them (NEP 50 compares those correctly). ml_dtypes' small
    integers beside Python ints: where the installed ml_dtypes compares them so (0.7:
    ``int4_array < 300`` is True; 0.6 uses the int8 or uint8 loop, where a Python int must
    fit), asked (:func:`_compares_python_ints_exactly`)."""
    arrays = [o for o in ops if not o.is_scalar]

    def fits(o):
        if o.is_scalar:
            return isinstance(o.scalar, int)  # bool included
        if o.array.dtype.kind not in ("bool", "int", "uint"):
            return False
        return not _ml(o.array.dtype) or (len(arrays) == 1 and _compares_python_ints_exactly(
            o.array.dtype))
    return all(fits(o) for o in ops) and bool(arrays)


def _compares_python_ints_exactly(fmt: Format) -> bool:
    """Whether the installed NumPy compares an array of the ml_dtypes integer ``fmt`` with
    any Python int exactly (NEP 50's rule for its own integers), rather than converting the
    int into a loop dtype it must fit: asked with ints past int64."""
    return _exact_int_comparisons(fmt.name)


@functools.cache
def _exact_int_comparisons(name: str) -> bool:
    zero = np.zeros(1, FORMATS[name].np_dtype)
    try:
        with np.errstate(all="ignore"):
            return bool(np.less(zero, 2**70)[0]) and bool(np.greater(zero, -(2**70))[0])
    except (OverflowError, TypeError):
        return False


def _compare(name: str, x, y):
    """A comparison as NumPy computes it: both operands converted into the loop's dtype
    first, then compared exactly."""
    short = _SHORT[name]
    ops = _operands((x, y), ("x", "y"))
    shape = tuple(broadcast(*ops))
    if _exact_integers(ops):
        # Note: er's comparisons refuse the operands torch cannot promote (uint16 and wider
        # beside bool, say), so the exact comparison is made on Python ints here
        c = _Call(ops, shape, BOOL, BOOL)
        xv, yv = (np.full(c.size, o.scalar, dtype=object) if o.is_scalar else
                  np.array([int(v) for v in c.values(i, o.array.dtype)], dtype=object)
                  for i, o in enumerate(ops))
        got = np.array(_OPS[short](xv, yv), dtype=bool)
        return _shaped(_defined(got, BOOL, name, "exact (integers)"), shape)
    c = _call(short, x, y)
    c.loop = _policy(c.ops, "maximum")
    fn = getattr(er_ops, name)
    a, b = c.read(0), c.read(1)
    if c.loop.kind == "complex":
        av, bv = a._wide(), b._wide()
        got = _lex(short, av.real, av.imag, bv.real, bv.imag)
        return _shaped(_defined(got, BOOL, name, "lexicographic (NumPy's C" + short.upper()
                                + ")"), c.shape)
    return _shaped(fn(a, b), c.shape)


def equal(x, y):
    """The reference for ``np.equal(x, y)``: both operands converted into the dtype of the
    loop NumPy picks (their promotion under NEP 50: an int64 array beside a float32 array is
    compared in float64, a float32 array beside the Python int 16777217 in float32, a bfloat16
    array beside a Python float in float32), then compared exactly; integers (and Python ints)
    compare exactly whatever their types. NaN is unequal to everything; complex numbers are
    equal when both parts are."""
    return _compare("equal", x, y)


def not_equal(x, y):
    """The reference for ``np.not_equal(x, y)``; the conversions of :func:`equal`."""
    return _compare("not_equal", x, y)


def less(x, y):
    """The reference for ``np.less(x, y)``; the conversions of :func:`equal`. Complex numbers
    are ordered lexicographically (NumPy's ``CLT``: the real parts decide, where either
    imaginary part is NaN only equal real parts can, by the imaginary parts)."""
    return _compare("less", x, y)


def less_equal(x, y):
    """The reference for ``np.less_equal(x, y)``; see :func:`less`."""
    return _compare("less_equal", x, y)


def greater(x, y):
    """The reference for ``np.greater(x, y)``; see :func:`less`."""
    return _compare("greater", x, y)


def greater_equal(x, y):
    """The reference for ``np.greater_equal(x, y)``; see :func:`less`."""
    return _compare("greater_equal", x, y)


# ------------------------------------------------------------------- complex models
# NumPy's complex loops (complex64, complex128) compute in their component format, each C
# operation rounded once; ml_dtypes' complex32 and bcomplex32 convert to std::complex<float>,
# call libstdc++ (and through it libgcc and glibc), and round each part into half or
# bfloat16. Every step below is one er op rounded once into the format the C code computes
# in; the comparisons that choose a branch read exact values.


def _ieee(R: Format):
    """``f(op, *values)``: one IEEE operation ``op`` ("add", "sub", "mul", "div", "sqrt",
    "fma") of exact values held by the real format ``R``, rounded once into ``R``."""
    fns = {"add": er_ops.add, "sub": er_ops.subtract, "mul": er_ops.multiply,
           "div": er_ops.divide, "sqrt": er_ops.sqrt, "fma": er_ops.fma}

    def f(op, *values):
        vals = [np.broadcast_to(np.asarray(v, dtype=np.float64), np.shape(values[0]))
                for v in values]
        return _op(fns[op], R, *vals)
    return f


def _pair(re, im) -> np.ndarray:
    out = np.empty(np.shape(re), dtype=np.complex128)
    out.real, out.imag = re, im
    return out


def _ml_complex(fmt: Format) -> bool:
    return fmt.name in ("complex32", "bcomplex32")


def _complex_divide(a: Array, b: Array, out: Format):
    """Complex true division as the loops compute it.

    complex64/complex128 (``loops.c.src``, ``@TYPE@_divide``): Smith's algorithm in the
    component format, with a reciprocal: for ``|c| >= |d|``, ``rat = d / c``,
    ``scl = 1 / (c + d * rat)``, ``((a + b * rat) * scl, (b - a * rat) * scl)``; otherwise the
    same with the divisor's parts swapped (``((a * rat + b) * scl, (b * rat - a) * scl)``);
    a zero divisor gives ``(a / |c|, b / |d|)``, so the signs of the result are the
    dividend's whatever the divisor's zero signs (C99's Annex G would give
    ``copysign(inf, c) * a``). No Annex G recovery: ``(inf + 0j) / (1 + 1j)`` is NaN there.
    complex32/bcomplex32: see :func:`_gcc_divide`.
    """
    x, y = a._wide(), b._wide()
    if _ml_complex(out):
        got = _gcc_divide(x.real, x.imag, y.real, y.imag, out)
        ref = er_ops.divide(a, b, dtype=out)
        return _loop_result(ref, got, out, "std::complex<float> division (libgcc's __divsc3: "
                            "the textbook formula in double, Annex G recovery)")
    R = out.component
    f = _ieee(R)
    a_, b_, c_, d_ = x.real, x.imag, y.real, y.imag
    one = np.ones_like(a_)
    with np.errstate(all="ignore"):
        ac, ad = np.abs(c_), np.abs(d_)
        first = ac >= ad
        zero = first & (ac == 0) & (ad == 0)
        rat1 = f("div", d_, c_)
        scl1 = f("div", one, f("add", c_, f("mul", d_, rat1)))
        re1 = f("mul", f("add", a_, f("mul", b_, rat1)), scl1)
        im1 = f("mul", f("sub", b_, f("mul", a_, rat1)), scl1)
        rat2 = f("div", c_, d_)
        scl2 = f("div", one, f("add", d_, f("mul", c_, rat2)))
        re2 = f("mul", f("add", f("mul", a_, rat2), b_), scl2)
        im2 = f("mul", f("sub", f("mul", b_, rat2), a_), scl2)
        re0, im0 = f("div", a_, ac), f("div", b_, ad)
    re = np.where(zero, re0, np.where(first, re1, re2))
    im = np.where(zero, im0, np.where(first, im1, im2))
    ref = er_ops.divide(a, b, dtype=out)
    return _loop_result(ref, _pair(re, im), out, f"Smith's algorithm in {R.name} "
                        "(NumPy's loop)")


def _gcc_divide(a, b, c, d, out: Format) -> np.ndarray:
    """``std::complex<float>`` division by GCC's libgcc (``__divsc3``, GCC 12 and later):
    float operands widened to double, ``x = (a c + b d) / (c^2 + d^2)`` and
    ``y = (b c - a d) / (c^2 + d^2)`` each step rounded in double, then rounded to float;
    where both are NaN, C99 Annex G's recovery in float (a nonzero over a zero is an
    infinity, an infinite over a finite an infinity, a finite over an infinite a zero); then
    each part rounded into ``out``'s component (ml_dtypes' conversion). Measured: 0 of 20000
    random complex32 and bcomplex32 quotients off this model (Smith's algorithm in float, the
    older libgcc's, is off 5)."""
    f = _ieee(F64)
    with np.errstate(all="ignore"):
        den = f("add", f("mul", c, c), f("mul", d, d))
        x = f("div", f("add", f("mul", a, c), f("mul", b, d)), den)
        y = f("div", f("sub", f("mul", b, c), f("mul", a, d)), den)
    x, y = _into(x, F64, F32), _into(y, F64, F32)
    x, y = _annex_g_quotient(a, b, c, d, x, y)
    comp = out.component
    return _pair(_into(x, F32, comp), _into(y, F32, comp))


def _annex_g_quotient(a, b, c, d, x, y):
    """libgcc's recovery of a quotient whose parts are both NaN (C99 G.5.1), on float
    values: the special cases only involve zeros, ones and infinities, whose signs numpy's
    float32 arithmetic gives exactly as C's."""
    f = np.float32
    a, b, c, d = (np.asarray(v, dtype=f) for v in (a, b, c, d))
    with np.errstate(all="ignore"):
        both = np.isnan(x) & np.isnan(y)
        m1 = both & (c == 0) & (d == 0) & (~np.isnan(a) | ~np.isnan(b))
        inf_c = np.copysign(f(np.inf), c)
        x1, y1 = inf_c * a, inf_c * b
        m2 = both & ~m1 & (np.isinf(a) | np.isinf(b)) & np.isfinite(c) & np.isfinite(d)
        a2 = np.copysign(np.where(np.isinf(a), f(1), f(0)), a)
        b2 = np.copysign(np.where(np.isinf(b), f(1), f(0)), b)
        x2, y2 = f(np.inf) * (a2 * c + b2 * d), f(np.inf) * (b2 * c - a2 * d)
        m3 = both & ~m1 & ~m2 & (np.isinf(c) | np.isinf(d)) & np.isfinite(a) & np.isfinite(b)
        c3 = np.copysign(np.where(np.isinf(c), f(1), f(0)), c)
        d3 = np.copysign(np.where(np.isinf(d), f(1), f(0)), d)
        x3, y3 = f(0) * (a * c3 + b * d3), f(0) * (b * c3 - a * d3)
    x = np.where(m1, x1, np.where(m2, x2, np.where(m3, x3, x)))
    y = np.where(m1, y1, np.where(m2, y2, np.where(m3, y3, y)))
    return x.astype(np.float64), y.astype(np.float64)


def _complex_reciprocal(a: Array, out: Format):
    """Complex ``np.reciprocal`` as the loops compute it.

    complex64/complex128 (``loops.c.src``, ``@TYPE@_reciprocal``), in the component format:
    for ``|im| <= |re|``, ``r = im / re``, ``d = re + im * r``, ``(1 / d, -r / d)``;
    otherwise ``r = re / im``, ``d = re * r + im``, ``(r / d, -1 / d)`` (so ``1 / (0 + 0j)``
    is NaN+NaNj). complex32/bcomplex32: ml_dtypes' ``T(1.f / z)``, libgcc's ``__divsc3(1, 0,
    re, im)`` (see :func:`_gcc_divide`).
    """
    z = a._wide()
    ref = er_ops.reciprocal(a, dtype=out)
    if _ml_complex(out):
        one = np.ones(z.shape)
        got = _gcc_divide(one, np.zeros(z.shape), z.real, z.imag, out)
        return _loop_result(ref, got, out, "1.f / std::complex<float> (libgcc's __divsc3)")
    R = out.component
    f = _ieee(R)
    re, im = z.real, z.imag
    one = np.ones_like(re)
    with np.errstate(all="ignore"):
        first = np.abs(im) <= np.abs(re)
        r1 = f("div", im, re)
        d1 = f("add", re, f("mul", im, r1))
        o1 = (f("div", one, d1), f("div", -r1, d1))
        r2 = f("div", re, im)
        d2 = f("add", f("mul", re, r2), im)
        o2 = (f("div", r2, d2), f("div", -one, d2))
    got = _pair(np.where(first, o1[0], o2[0]), np.where(first, o1[1], o2[1]))
    return _loop_result(ref, got, out, f"NumPy's reciprocal loop in {R.name}")


def _hypot(x, y, R: Format):
    """glibc's ``hypot`` of exact values of ``R``, as the candidates it may give: float
    (``hypotf``) is ``sqrt((double) x * x + (double) y * y)`` rounded to float, one value;
    double (``__ieee754_hypot``) is faithful, not correctly rounded (measured: 22 of 24000
    random pairs off the correctly rounded value), so both neighbours of the exact value.
    Returns ``(low, high)`` float64 arrays."""
    ax, ay = np.abs(x), np.abs(y)
    if R.name == "float32":
        f = _ieee(F64)
        with np.errstate(all="ignore"):
            h = _into(f("sqrt", f("fma", ax, ax, f("mul", ay, ay))), F64, F32)
        h = np.where(np.isinf(ax) | np.isinf(ay), np.inf, h)
        return h, h
    return _modulus_bounds(ax, ay)


def _modulus_bounds(ax, ay):
    """The exact ``sqrt(ax^2 + ay^2)`` rounded down and up into float64: ``(low, high)``.

    Note: ``er.abs`` of a complex128 value returned 0 where a part's square passes float64's
    range beside a much smaller part (``er.abs(1e200 + 1j)`` was 0.0, a core bug, being fixed
    in ``_exact/_algebraic.py``): both parts are scaled by a power of two (exact) so that the
    larger is below 1. A smaller part that the scaling flushes to zero leaves the exact value
    just above the larger one."""
    big = np.maximum(ax, ay)
    finite = np.isfinite(ax) & np.isfinite(ay) & (big > 0)
    _, e = np.frexp(np.where(finite, big, 1.0))
    sx = np.ldexp(np.where(finite, ax, 0.0), -e)
    sy = np.ldexp(np.where(finite, ay, 0.0), -e)
    lost = finite & (((ax > 0) & (sx == 0)) | ((ay > 0) & (sy == 0)))
    z = _array([sx, sy], C128)
    lo, hi = (np.ldexp(er_ops.abs(z, rounding=mode).rounded._wide(), e)
              for mode in ("toward_negative", "toward_positive"))
    hi = np.where(lost, np.nextafter(big, np.inf), hi)
    with np.errstate(invalid="ignore"):
        special = np.where(np.isinf(ax) | np.isinf(ay), np.inf,
                           np.where(big == 0, 0.0, np.nan))
    return np.where(finite, lo, special), np.where(finite, hi, special)


def _complex_abs(a: Array, out: Format):
    """Complex ``np.abs`` as the loops compute it.

    complex64/complex128 (``loops_unary_complex.dispatch.c.src``, the SIMD path every
    contiguous or regularly strided array takes): not ``hypot`` but
    ``larger * sqrt(ratio * ratio + 1)`` with ``ratio = smaller / larger`` (0 where the
    larger part is 0 or the smaller infinite), ``ratio * ratio + 1`` one fused multiply-add
    where NumPy's CPU dispatch has FMA3 or AVX-512F (``npyv_muladd``; see :func:`_fused`),
    two roundings otherwise, each step rounded in the component format;
    an infinite part gives +inf, else a NaN part NaN. Example: float32
    ``abs(1.5 - 0x1.d7ab22p-12j)`` is 1.5, the modulus rounds to 0x1.800002p+0.
    complex32/bcomplex32: ml_dtypes' ``std::abs(std::complex<float>)``, glibc's ``hypotf``
    (:func:`_hypot`), then rounded into half or bfloat16.
    """
    z = a._wide()
    re, im = np.abs(z.real), np.abs(z.imag)
    ref = _modulus_reference(a, out)
    if _ml_complex(a.dtype):
        h, _ = _hypot(re, im, F32)
        return _loop_result(ref, _into(h, F32, out), out, "std::abs(std::complex<float>): "
                            "glibc's hypotf, then rounded")
    f = _ieee(out)
    with np.errstate(all="ignore"):
        im2 = np.where(re == np.inf, np.inf, im)
        re2 = np.where(im == np.inf, np.inf, re)
        im3 = np.where(np.isnan(re2), np.nan, im2)
        re3 = np.where(np.isnan(im2), np.nan, re2)
        larger, smaller = np.fmax(re3, im3), np.fmin(re3, im3)
        larger = np.where(np.isnan(re3), np.nan, larger)
        usable = ~((larger == 0) | (smaller == np.inf))
        ratio = np.where(usable, f("div", smaller, np.where(usable, larger, 1.0)), 0.0)
        ones = np.ones_like(ratio)
        fused = _fused()
        t = f("fma", ratio, ratio, ones) if fused else f("add", f("mul", ratio, ratio), ones)
        got = f("mul", f("sqrt", t), larger)
    step = "fma(ratio, ratio, 1)" if fused else "ratio * ratio + 1"
    return _loop_result(ref, got, out, f"larger * sqrt({step}) in {out.name} (NumPy's SIMD "
                        "loop)")


def _fused() -> bool:
    """Whether NumPy's SIMD loops run with fused multiply-adds on this machine: its runtime
    dispatch found FMA3 or AVX-512F (``numpy._core._multiarray_umath.__cpu_features__``;
    measured on an AVX-512 machine: 0 of 40000 complex64 moduli off the fused model, 86 off
    the unfused one)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # pragma: no cover - NumPy's internals moved: assume a modern CPU
        return True
    return bool(features.get("FMA3") or features.get("AVX512F"))


def _modulus_reference(a: Array, out: Format) -> Array:
    """The modulus rounded once into ``out``: the mathematical answer. Note: for complex128
    values with a part above 2**500, ``er.abs`` of the value scaled by a power of two, scaled
    back exactly (see :func:`_modulus_bounds` for the core bug this avoids)."""
    ref = er_ops.abs(a, dtype=out).rounded
    if out is not F64:
        return ref
    z = a._wide()
    re, im = np.abs(z.real), np.abs(z.imag)
    big = np.maximum(re, im)
    huge = np.isfinite(re) & np.isfinite(im) & (big > 2.0**500)
    if not huge.any():
        return ref
    _, e = np.frexp(np.where(huge, big, 1.0))
    scaled = _array([np.ldexp(np.where(huge, re, 0.0), -e), np.ldexp(np.where(huge, im, 0.0),
                                                                     -e)], C128)
    v = np.ldexp(er_ops.abs(scaled).rounded._wide(), e)
    return _array([np.where(huge, v, ref._wide())], F64)


def _complex_sqrt(a: Array, out: Format):
    """Complex ``np.sqrt`` as the loops compute it: glibc's ``csqrt`` (complex128) and
    ``csqrtf`` (complex64; ml_dtypes' complex32 and bcomplex32 call it through
    ``std::sqrt(std::complex<float>)`` and round each part into half or bfloat16), the
    algorithm of glibc's ``s_csqrt_template.c`` (:func:`glibc_csqrt`), each step rounded in
    the component format. Measured: 0 of 24000 complex64 and complex128 results off the model
    (about a third of them differ from the correctly rounded square root by an ulp). glibc's
    double ``hypot`` is faithful only, so complex128 accepts the results of both of its
    neighbours of the exact modulus (any_of)."""
    z = a._wide()
    ref = er_ops.sqrt(a, dtype=out)
    R = F32 if _ml_complex(out) else out.component
    results = []
    for got in glibc_csqrt(z.real, z.imag, R):
        if R is not out.component:
            got = _pair(_into(got.real, R, out.component), _into(got.imag, R, out.component))
        results.append(_loop_result(ref, got, out, f"glibc's csqrt in {R.name}"))
    return results[0] if len(results) == 1 else any_of(*results)


def glibc_csqrt(x, y, R: Format) -> list:
    """glibc's ``csqrt`` (``s_csqrt_template.c``, glibc 2.36) of exact values ``x + y i`` held
    by the real format ``R``, every operation rounded once in ``R``: one complex128 array per
    value ``hypot`` may give (:func:`_hypot`; two for double where its result is not known)."""
    f = _ieee(R)
    big, tiny, mant = R.max_finite, R.smallest_normal, R.precision
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ones = np.ones_like(x)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x) & np.isfinite(y)
        # non-finite operands (C99 G.6.4.2, as glibc orders the cases)
        yinf, xinf = np.isinf(y), np.isinf(x)
        sre = np.where(yinf, np.inf, np.where(xinf, np.where(
            x < 0, np.where(np.isnan(y), np.nan, 0.0), x), np.nan))
        sim = np.where(yinf, y, np.where(xinf, np.where(
            x < 0, np.copysign(np.inf, y), np.where(np.isnan(y), np.nan, np.copysign(0.0, y))),
            np.nan))
        # a zero imaginary part
        root_x = f("sqrt", np.abs(x))
        zre = np.where(x < 0, 0.0, root_x)
        zim = np.where(x < 0, np.copysign(root_x, y), np.copysign(0.0, y))
        # a zero real part
        ay = np.abs(y)
        r0 = np.where(ay >= 2 * tiny, f("sqrt", f("mul", 0.5 * ones, ay)),
                      f("mul", 0.5 * ones, f("sqrt", f("mul", 2 * ones, ay))))
        # the general case, scaled away from overflow and underflow
        scale = np.zeros(x.shape, dtype=np.int64)
        x1, y1 = x.copy(), y.copy()
        s1 = finite & (np.abs(x1) > big / 4)
        scale[s1] = 1
        x1 = np.where(s1, f("mul", x1, 0.25 * ones), x1)
        y1 = np.where(s1, f("mul", y1, 0.25 * ones), y1)
        s2 = finite & (np.abs(y1) > big / 4)
        scale[s2] = 1
        x1 = np.where(s2, np.where(np.abs(x1) >= 4 * tiny, f("mul", x1, 0.25 * ones), 0.0), x1)
        y1 = np.where(s2, f("mul", y1, 0.25 * ones), y1)
        s3 = finite & ~s2 & (np.abs(x1) < 2 * tiny) & (np.abs(y1) < 2 * tiny)
        up = -((mant + 1) // 2)
        scale[s3] = up
        x1 = np.where(s3, f("mul", x1, np.ldexp(ones, -2 * up)), x1)
        y1 = np.where(s3, f("mul", y1, np.ldexp(ones, -2 * up)), y1)
        out = []
        for d in _hypot(x1, y1, R):
            pos = x1 > 0
            t = f("mul", 0.5 * ones, f("add", d, x1))
            u = f("mul", 0.5 * ones, f("sub", d, x1))
            r_pos = f("sqrt", t)
            s_neg = f("sqrt", u)
            small = (scale == 1) & (np.abs(y1) < 1)
            q_pos = f("div", y1, r_pos)
            q_neg = f("div", y1, s_neg)
            r = np.where(pos, np.where(small, f("mul", r_pos, 2 * ones), r_pos),
                         np.where(small, np.abs(q_neg), np.abs(f("mul", 0.5 * ones, q_neg))))
            s = np.where(pos, np.where(small, q_pos, f("mul", 0.5 * ones, q_pos)),
                         np.where(small, f("mul", s_neg, 2 * ones), s_neg))
            rest = np.where(small, 0, scale)
            factor = np.ldexp(ones, rest)
            r = np.where(rest != 0, f("mul", r, factor), r)
            s = np.where(rest != 0, f("mul", s, factor), s)
            gre = np.where(~finite, sre, np.where(y == 0, zre, np.where(x == 0, r0, r)))
            gim = np.where(~finite, sim, np.where(y == 0, zim, np.where(
                x == 0, np.copysign(r0, y), np.copysign(s, y))))
            out.append(_pair(gre, gim))
    if len(out) == 2 and all(np.array_equal(out[0], o, equal_nan=True) for o in out[1:]):
        out = out[:1]
    return out


# ------------------------------------------------------------------------------ astype
_NUMPY_INT = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_SMALL_INT = ("int1", "int2", "int4", "uint1", "uint2", "uint4")
#: The one-way casts ml_dtypes registers between its small integers (``dtypes.cc``).
_SMALL_INT_CASTS = (("int1", "int2"), ("int1", "int4"), ("int2", "int4"), ("uint1", "uint2"),
                    ("uint1", "uint4"), ("uint2", "uint4"))


def _ml(fmt: Format) -> bool:
    """Whether ``fmt`` is one of ml_dtypes' formats (its casts are ml_dtypes' code)."""
    return fmt.name not in _NUMPY_INT + _NATIVE


#: How the installed ml_dtypes casts, by minor (measured on 0.6.0 and 0.7.0): "0.6" through
#: float32 (float64 to bfloat16 rounds twice) and into integers as C's conversions do; "0.7"
#: rounds once, and into an integer truncates toward zero, giving 0 for NaN, infinities and
#: values out of the integer's range.
def _ml_casts() -> str:
    import ml_dtypes

    from .._versions import minor

    return "0.7" if minor(ml_dtypes.__version__) >= (0, 7) else "0.6"


def _no_cast(src: Format, to: Format) -> bool:
    """The pairs ml_dtypes registers no cast for, which ``astype`` refuses (``dtypes.cc``):
    float8_e8m0fnu with ml_dtypes' formats other than bfloat16, the small integers between
    themselves except the widening ones of the same signedness, and int4 and uint4 with
    float6_e2m3fn ("not safe")."""
    names = (src.name, to.name)
    if "float8_e8m0fnu" in names:
        other = FORMATS[names[1] if names[0] == "float8_e8m0fnu" else names[0]]
        return _ml(other) and other.name != "bfloat16"
    if src.name in _SMALL_INT and to.name in _SMALL_INT:
        return names not in _SMALL_INT_CASTS
    return set(names) in ({"int4", "float6_e2m3fn"}, {"uint4", "float6_e2m3fn"})


def _saturating_nan_inf(src: Format) -> bool:
    """ml_dtypes' float8, float6 and float4 formats: their casts into integers give 0 for NaN
    and the integer type's limit for ±inf (bfloat16's, like C's, give x86's "integer
    indefinite")."""
    return src.kind == "float" and _ml(src) and src.name != "bfloat16"


def _wrap(v: int, fmt: Format) -> int:
    """``v`` modulo 2**bits, as a value of the integer format ``fmt``."""
    n = fmt.bits
    v %= 1 << n
    return v - (1 << n) if fmt.kind == "int" and v >= 1 << (n - 1) else v


def _cvtt(x: float, bits: int) -> int:
    """x86's truncating conversion (``cvttss2si``/``cvttsd2si``) into a ``bits``-bit signed
    integer: NaN, infinities and values out of range give the "integer indefinite", the
    most negative value."""
    low = -(1 << (bits - 1))
    if x != x or x in (float("inf"), float("-inf")):
        return low
    t = int(x)  # truncation toward zero, exact for a float64 value
    return t if low <= t < -low else low


def c_int_conversions(x: float, src: Format, to: Format) -> tuple:
    """What NumPy's (or ml_dtypes') cast of the float value ``x`` of ``src`` into the integer
    format ``to`` may give, on x86-64: one value, or two where it depends on the element's
    position (the vectorised body and the scalar tail disagree). Measured for every float
    source and integer target on NaN, infinities, and values in and out of range of int32,
    uint32, int64 and uint64 (and for arrays of 1 to 100 elements)."""
    if src.kind == "complex":
        src = src.component if src.name not in ("complex32", "bcomplex32") else src
    mlsrc = _ml(src)
    if (mlsrc or to.name in _SMALL_INT) and _ml_casts() == "0.7":
        # ml_dtypes 0.7: truncation toward zero, 0 where the integer cannot hold it
        if x != x or x in (float("inf"), float("-inf")):
            return (0,)
        t = int(x)
        return (t if to.int_min <= t <= to.int_max else 0,)
    if _saturating_nan_inf(src):
        if x != x:
            return (0,)
        if x in (float("inf"), float("-inf")):
            if to.name in _SMALL_INT:
                lo, hi = (-128, 127) if to.kind == "int" else (0, 255)
                return (_wrap(hi if x > 0 else lo, to),)
            lo, hi = (to.int_min, to.int_max)
            return (hi if x > 0 else lo,)
    if to.name in _SMALL_INT:
        if not mlsrc:  # ml_dtypes' CastToInt: 0 for NaN, inf and values past int32
            ok = x == x and -2.0**31 <= x <= 2.0**31 - 1
            return (_wrap(int(x), to) if ok else 0,)
        return (_wrap(_cvtt(x, 32), to),)  # static_cast<int8_t>(float): cvttss2si, low bits
    if to.name in ("int8", "int16", "uint8", "uint16"):
        return (_wrap(_cvtt(x, 32), to),)
    if to.name == "int32":
        return (_cvtt(x, 32),)
    if to.name == "int64":
        return (_cvtt(x, 64),)
    if to.name == "uint32":
        scalar = _wrap(_cvtt(x, 64), to)  # cvttsd2si into 64 bits, the low 32 kept
        if src.name in ("float16", "complex32", "bcomplex32"):
            return (scalar,)  # half's conversion: through float, a 64-bit cvtt, both paths
        return tuple(dict.fromkeys((_uint32_vector(x), scalar)))
    if to.name == "uint64":
        if x == x and x >= 2.0**63:
            return (int(x) if x < 2.0**64 else 0,)
        return (_wrap(_cvtt(x, 64), to),)
    raise ValueError(f"{to.name} is not an integer format")


def _uint32_vector(x: float) -> int:
    """The vectorised float-to-uint32 conversion: ``x >= 2**31 ? cvtt32(x - 2**31) ^ 2**31 :
    cvtt32(x)``, modulo 2**32."""
    if x == x and x >= 2.0**31:
        return int(x) if x < 2.0**32 else 0
    return _wrap(_cvtt(x, 32), FORMATS["uint32"])


def _float_steps(values, src: Format, path: list) -> np.ndarray:
    """Exact float values of ``src`` converted along ``path``, each step rounded once to
    nearest even with the step's overflow rule; a NaN keeps its sign, and a format without
    NaN stores it as a zero of the other sign (ml_dtypes' ``ConvertImpl``)."""
    cur, fmt = np.asarray(values, dtype=np.float64), src
    for step in path:
        if step is fmt:
            continue
        nan = np.isnan(cur)
        sign = np.signbit(cur)
        got = _into(np.where(nan, 0.0, cur), fmt, step) if fmt.kind != "int" else cur
        if nan.any():
            got = np.where(nan, np.where(sign, 0.0, -0.0) if _nanless(step) else
                           np.copysign(np.nan, np.where(sign, -1.0, 1.0)), got)
        cur, fmt = got, step
    return cur


def _real_conversions(values, src: Format, to: Format, via_float: bool) -> list:
    """The candidate values (one array, or two) of the cast of real values of ``src`` (for a
    complex source, its real parts, ``src`` naming the complex format) into the real format
    ``to``; ``via_float``: ml_dtypes' cast, through float32."""
    values = np.asarray(values)
    if to.kind == "bool":
        with np.errstate(invalid="ignore"):
            return [values != 0]
    if src.kind in ("bool", "int", "uint"):
        ints = np.array([int(v) for v in values.reshape(-1)], dtype=object)
        if to.kind in ("int", "uint"):
            return [np.array([_wrap(v, to) for v in ints], dtype=object)]
        if via_float:  # static_cast<T>(static_cast<float>(int))
            f = er_ops.cast(_array([ints], src), F32).rounded._wide()
            return [_float_steps(f, F32, [to])]
        return [er_ops.cast(_array([ints], src), to).rounded._wide()]
    if to.kind in ("int", "uint"):
        c = [c_int_conversions(float(v), src, to) for v in values.reshape(-1)]
        first = np.array([t[0] for t in c], dtype=object)
        if all(len(t) == 1 for t in c):
            return [first]
        return [first, np.array([t[-1] for t in c], dtype=object)]
    real = src.component if src.kind == "complex" else src
    return [_float_steps(values, real, [F32, to] if via_float and to is not F32 else [to])]


def astype(x, to):
    """The reference for ``x.astype(to)``: NumPy's and ml_dtypes' conversions, x86-64, as the
    installed ml_dtypes minor does them (measured on 0.6 and 0.7, which differ on 282 of the
    1,225 pairs of formats; another minor gives one UnmeasuredVersionWarning).

    ml_dtypes 0.7 (:func:`_ml_casts`): every conversion from or into an ml_dtypes format
    rounds once (``1 + 2**-8 + 2**-30`` into bfloat16 is ``1 + 2**-7``); into an integer from
    an ml_dtypes float, or into ml_dtypes' small integers from any float, it truncates toward
    zero and gives 0 for NaN, infinities and values the integer cannot hold; it casts every
    pair, complex32 and bcomplex32 into each other and into bool included. The rest of this
    list is ml_dtypes 0.6's (and NumPy's own, for its own formats):

    * Floats into floats: NumPy's own formats convert directly (float64 to float16 rounds
      once); a conversion from or into an ml_dtypes format goes through float32
      (``static_cast<To>(static_cast<float>(x))``), so float64 to bfloat16 or a float8 rounds
      twice (``1 + 2**-8 + 2**-30`` becomes 1.0, not ``1 + 2**-7``). NaN keeps its sign;
      a format without NaN (float6, float4) stores it as the zero of the other sign.
    * Integers into floats: once (C's conversion), into ml_dtypes floats through float32.
    * Floats into integers: truncation toward zero, then the integer wraps; NaN, infinities
      and values past the intermediate type give x86's "integer indefinite"
      (:func:`c_int_conversions`): float32 ``[300, -129, nan]`` into int8 is
      ``[44, 127, 0]``. uint32 from float32, float64, bfloat16 and complex values depends on
      the element's position (vector body or scalar tail): both values are accepted.
    * ml_dtypes' float8, float6 and float4 into integers: NaN gives 0 and ±inf the integer's
      limit.
    * Complex into real: the real part (NumPy's ComplexWarning); into bool: whether a part is
      nonzero. Real into complex: an imaginary part +0. ml_dtypes' complex formats convert
      each part through float.
    * The pairs ml_dtypes has no cast for raise TypeError, as ``astype`` does (asked:
      ``np.can_cast(src, to, "unsafe")``; with 0.6 they are :func:`_no_cast`'s).

    Not modelled (ml_dtypes 0.6 defects, pinned in ``tests/equivalents/test_numpy_family.py``
    and ``docs/audit.md``): complex32 and bcomplex32 into each other (the value becomes 1 or
    0) and into bool (``bool(int(real part))``).
    """
    from .. import _versions

    X = operand(x, "x", numpy_scalars_are_python=False)
    if X.is_scalar:
        raise TypeError("astype needs an array (a Python scalar has no astype); "
                        "use np.asarray(x) first")
    src, to = X.array.dtype, resolve_dtype(to)
    if _ml(src) or _ml(to):
        # the casts are ml_dtypes' code, modelled as the measured minors do them
        _versions.check("numpy-casts", "ml_dtypes", stacklevel=3)
    if not np.can_cast(src.np_dtype, to.np_dtype, "unsafe"):  # asked: no such cast
        raise TypeError(f"Cannot cast array data from dtype({src.name}) to dtype({to.name}) "
                        f"according to the rule 'unsafe' (NumPy's error: ml_dtypes registers "
                        f"no such cast)")
    shape = tuple(X.array.shape)
    v = Array(X.array.numpy().reshape(-1), src)._wide()
    via = (_ml(src) or _ml(to)) and _ml_casts() == "0.6"
    if src is to:
        return _shaped(_defined(v, to, "cast", "identity"), shape)
    if src.kind == "complex" and to.kind == "bool":
        cands = [(v.real != 0) | (v.imag != 0)]
    elif src.kind == "complex" and to.kind != "complex":
        cands = _real_conversions(v.real.copy(), src, to, via)
    elif to.kind == "complex":
        comp = to.component
        if src.kind == "complex":
            re = _real_conversions(v.real.copy(), src, comp, via)[0]
            im = _real_conversions(v.imag.copy(), src, comp, via)[0]
        else:
            re = _real_conversions(v, src, comp, via)[0]
            im = np.zeros(np.shape(v))
        cands = [_pair(np.asarray(re, dtype=np.float64), np.asarray(im, dtype=np.float64))]
    else:
        cands = _real_conversions(v, src, to, via)
    return _shaped(_cast_result(v, src, to, cands), shape)


def _cast_result(v, src: Format, to: Format, cands: list) -> Result:
    """The Result of a conversion: the reference is the exact value rounded once into ``to``
    (``er.cast``: to nearest even, toward zero into integers) where it has one, else the
    first candidate; the candidates are what the conversion gives."""
    first = cands[0]
    ref = first
    if to.kind in ("float", "complex") and src.kind in ("float", "complex", "int", "uint"):
        try:
            real = src.kind == "complex" and to.kind != "complex"
            arr = _array(_parts(v.real.copy() if real else v, src.component if real else src),
                         src.component if real else src)
            ref = er_ops.cast(arr, to).rounded._wide()
        except (ValueError, TypeError):
            ref = first
    elif to.kind in ("int", "uint") and src.kind in ("float", "complex"):
        vals = np.asarray(v.real if src.kind == "complex" else v, dtype=np.float64)
        finite = np.isfinite(vals)
        exact = er_ops.cast(_array([np.where(finite, vals, 0.0)],
                                   F64), to).rounded._wide()
        ref = np.array([int(e) if f else int(c) for e, f, c in zip(exact, finite, first, strict=True)],
                       dtype=object)
    rounded = _array(_parts(ref, to), to)
    parts = [_parts(c, to) for c in cands]
    cand_lists = [[np.asarray(p[i]) for p in parts] for i in range(len(parts[0]))]
    models = ("NumPy's and ml_dtypes' conversion (x86-64)",)
    return Result(rounded, cand_lists, op="cast", models=models)
