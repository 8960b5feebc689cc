"""PyTorch equivalents of the real functions: what torch 2.13's CPU kernels compute for ``exp``
... ``pow``, ``sigmoid``, ``silu``, ``mish``, ``gelu``, ``softplus`` and ``logit``.

Each equivalent does what PyTorch does before its kernel runs (the result dtype: float inputs
keep their dtype, integers and bool give float32; every operand cast by PyTorch's own casts,
:func:`exactref.equivalents.torch.cast`), then builds the reference of what the kernel computes:

* **One library call** (exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos,
  atan, sinh, cosh, tanh, erf, erfc, atan2, pow): the op's own Result with ``compute=`` the
  format the kernel computes in (float32 for float16 and bfloat16: ``at::opmath_type``) and
  ``accuracy=`` the error bound of the library the kernel calls, in ulps of that format
  (:data:`KERNELS` cites the kernel, the library, its documented bound and the measured error):
  MKL's VM functions in ``VML_HA`` mode for float32 and float64 (``ATen/cpu/vml.h``:
  ``IMPLEMENT_VML_MKL``; oneMKL documents HA as "maximum accuracy error 1 ULP"), SLEEF's u10
  functions in the vectorized loops (``ATen/cpu/vec/vec512/vec512_float.h``), and the C
  library (glibc 2.36 here) in the scalar loops of ``cpu_kernel_vec`` (tails, strided
  tensors). Where the paths differ the bound is the larger one.
* **PyTorch's formula** (sigmoid, silu, mish, gelu, softplus, logit): the kernel evaluates a
  formula of several float32 (float64) operations, each rounded, and calls SLEEF or the C
  library for the function inside. The equivalent follows the formula step by step in interval
  arithmetic: every step maps the interval of its operands to the interval of every value an
  implementation of that step may return (an arithmetic operation: the correctly rounded
  result of each end; a function: within its accuracy of each end, every step monotone on its
  operands' interval), so the candidates are the smallest and the largest value the kernel can
  give, and ``covers`` accepts everything between. The reference (``rounded``) stays the
  mathematical function rounded once: ``tolerance()`` shows how far PyTorch's formula may go
  (sigmoid's ``1 / (1 + exp(-x))`` is 0 wherever ``exp(-x)`` overflows, though the exact value
  is a subnormal down to ``x = -103``; gelu's float32 ``erf`` is Abramowitz and Stegun's
  7.1.26 polynomial, an absolute error of about ``1e-7``).

The measured maximum errors of every function and dtype are in ``docs/pytorch_equivalents.md``
("Real functions"), from ``scripts/measure_function_accuracy.py``; every departure from the
mathematical answer there is pinned by ``tests/equivalents/test_torch_functions.py``.

**Complex results** (complex64, complex128; complex32 has no CPU kernel for any of these): the
kernels call ``c10_complex_math`` (``c10/util/complex_math.h``), which casts to
``std::complex`` and calls libstdc++'s ``std::exp``, ``std::log``, ... : glibc's ``cexp``,
``clog``, ... (``cexpf`` for complex64), the same functions as NumPy's, with the same measured
normwise bounds and special values (``_numpy_functions.COMPLEX_KERNELS`` and
``GLIBC_SPECIALS``); ``log2`` is ``log(z) / complex(log(2), 0)``. Two kernels are PyTorch's
own: ``Vectorized<c10::complex<double>>::acos`` (``vec512_complex_double.h``) is ``pi/2 -
asin(z)`` in double (:func:`_acos_formula`: the real part loses its relative accuracy near
``z = 1``, the imaginary part of a real ``z`` is ``+0``), and ``pow`` is ``std::pow``: glibc's
``cpow`` within ``4 (1 + |w log z|)`` ulps of ``|f|``, measured.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .._array import Array
from .._exact import Rounding
from .._formats import Format
from .._result import Result, any_of
from ..arithmetic import basic, division, functions, roots
from ..ops import get_op, names_of
from ..promotion import resolve
from ._common import F32, F64, bounds_result, broadcast, convert, operand
from ._numpy_functions import (
    complex_function,
    complex_kernel,
    complex_pow,
    integer_chain,
    with_formula,
)
from ._torch_ops import _array as _torch_array
from ._torch_ops import _Call, _call, _check_kernel, _form, _quiet, _shaped
from .torch import cast, torch_overflow

_NE = Rounding.NEAREST_EVEN
_DOWN, _UP = Rounding.TOWARD_NEGATIVE, Rounding.TOWARD_POSITIVE
_REDUCED = ("float16", "bfloat16")

#: oneMKL VM's high-accuracy mode: "Maximum accuracy error 1 ULP" (Intel oneMKL Vector
#: Mathematics Performance and Accuracy Data, overview table), float32 and float64.
MKL_HA = 1.0
#: SLEEF's ``_u10`` functions: within 1.0 ulp of the exact value (SLEEF's reference).
SLEEF_U10 = 1.0
#: ``Vectorized<float>::erf`` (vec512_float.h, vec256_float.h) is Abramowitz and Stegun's
#: 7.1.26, ``1 - (a1 t + ... + a5 t**5) exp(-x**2)`` with ``t = 1 / (1 + p |x|)``: an
#: absolute error of at most 1.5e-7 for the formula, evaluated with about ten float32
#: roundings of values at most 1 (fmadd, a division, SLEEF's expf): bounded here by 2**-20
#: (9.5e-7; measured: at least 3.3e-7 on float16 inputs, where the output shows it).
AS_ERF_ABS = 2.0 ** -20


@dataclass(frozen=True)
class Kernel:
    """What torch 2.13 runs for one function on the CPU: ``source`` (the kernel and the
    library it calls), ``accuracy`` in ulps of the compute format per dtype class
    (``"float64"``, ``"float32"``, ``"reduced"``: float16 and bfloat16, computed in float32),
    and ``measured``: the largest error seen by ``scripts/measure_function_accuracy.py`` (ulps of
    the compute format; vectorized and strided loops together)."""

    source: str
    accuracy: dict
    measured: dict


_TORCH = "torch"  # the library key of the records' counterparts
_ABSOLUTE = "abs"  # an accuracy given as an absolute error (Abramowitz and Stegun's erf)


def _counterpart(name):
    """The record's torch counterpart of the function op ``name``."""
    return get_op(name).counterparts.of(_TORCH)


def kernel(name) -> Kernel:
    """What torch runs for the function op ``name`` (its record's torch contract and data)."""
    cp = _counterpart(name)
    return Kernel(cp.data["source"], cp.contract["accuracy"], cp.data["measured"])


def _step(name) -> float:
    """The accuracy of torch's ``name`` where PyTorch's formulas call it (its record's data):
    the vectorized loop's SLEEF u10 function and the scalar loop's glibc one (measured on glibc
    2.36: expf 0.50, log1pf 0.72, tanhf 1.98, logf 0.80, erff 0.78 ulps; the float64 ones
    0.50, 0.76, 1.98, 0.50, 1.00), the larger; tanh glibc's table bound for double, 2 ulps
    beyond the correctly rounded value (seen: tanh(0x1.c092bce6010b1p-3) is 2.5 ulps off);
    log1p as its kernel (SLEEF's subnormals)."""
    return _counterpart(name).data["step"]


#: The function ops whose records declare torch's kernel (one call of a library function:
#: each gets an equivalent from :func:`_unary` or its own below); the others are PyTorch's
#: formulas, modelled step by step.
_KERNEL_OPS = tuple(n for n in names_of("exactref.arithmetic.functions")
                    if _counterpart(n) is not None and _counterpart(n).contract is not None)
#: Per function: the kernel, the declared accuracy (ulps of the compute format) and the
#: measured maximum (torch 2.13.0+cpu, MKL 2024.2, AVX512, glibc 2.36, AMD EPYC): a view of the
#: records.
KERNELS = {n: kernel(n) for n in _KERNEL_OPS}

#: SLEEF's float64 pow overflows to infinity a little below the largest finite value
#: (measured: from 1.7976931348621329e308, 3.3e-14 below DBL_MAX): +-inf is allowed where
#: the exact value lies above this.
_POW64_EARLY_INF = 1.797693134862e308

# ================================================================= one library call
def _dtype_class(out: Format) -> str:
    return "reduced" if out.name in _REDUCED else out.name


def _accuracy(name: str, out: Format):
    if out.kind != "float":
        raise TypeError(f"torch.{name} of these operands gives {out.name}: PyTorch has no "
                        f"complex {name} on the CPU; pass real operands")
    return _counterpart(name).contract["accuracy"][_dtype_class(out)]


def _acos_formula(a, out: Format, kw) -> Result:
    """``Vectorized<c10::complex<double>>::acos``: ``pi/2 - asin(z)``, the subtraction in
    double (``_mm512_sub_pd`` of ``(pi/2, 0.0)`` and glibc's ``casin``): the real part
    ``pi/2 - re`` rounded (monotone: the ends of casin's band map to the ends), the imaginary
    part ``0.0 - im`` (``+0`` for a zero). The reference stays acos rounded once."""
    ref = functions.acos(a, dtype=out, **kw)
    s = complex_function("asin", functions.asin, (a,), out, kw)
    pi_2 = np.pi / 2
    with np.errstate(invalid="ignore"):
        re = [pi_2 - np.asarray(c, dtype=np.float64) for c in s._candidates[0]]
        im = [0.0 - np.asarray(c, dtype=np.float64) for c in s._candidates[1]]
    return Result(ref.rounded, [re, im], op="acos",
                  models=("pi/2 - asin(z) in double, asin glibc's casin",),
                  details=ref.details)


def _one_call(name, fn, args, out, C, rounding, overflow):
    """The Result of ``fn(*args)`` within the kernel's accuracy, computed in ``C`` and stored
    into ``out``."""
    acc = _accuracy(name, out)
    rule = overflow if overflow is not None else torch_overflow(out)
    kw = dict(dtype=out, rounding=rounding, overflow=rule)
    if acc == _ABSOLUTE:
        return _within_abs(fn, args, AS_ERF_ABS, out, C, kw)
    res = fn(*args, compute=C, accuracy=acc, **kw)
    data = _counterpart(name).data
    domain = data.get("sleef_overflow") or {}
    if C.name in domain:
        x = args[0]._wide().astype(np.float64)
        far = np.abs(x) > domain[C.name]
        if far.any():
            inf = np.where(far, np.copysign(np.inf, x) if data.get("odd") else np.inf, np.nan)
            res = _with_candidate(res, inf, "SLEEF's infinity beyond its domain")
    return res


def _with_candidate(res: Result, extra, model: str) -> Result:
    """``res`` with one more candidate where ``extra`` is not NaN (elsewhere: res's lowest)."""
    lo = res.lowest
    cand = np.where(np.isnan(extra), lo, extra)
    return Result(res.rounded, [list(res._candidates[0]) + [cand]], op=res.op,
                  models=tuple(res.models) + (model,), details=res.details)


def _within_abs(fn, args, err, out, C, kw):
    """Every value of ``C`` within ``err`` (absolute) of the exact value, stored into ``out``;
    the reference is the exact value rounded once."""
    ref = fn(*args, **kw)
    lo = fn(*args, dtype=F64, rounding=_DOWN).rounded._wide().astype(np.float64)
    hi = fn(*args, dtype=F64, rounding=_UP).rounded._wide().astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        # the float64 sums round by at most 2**-53 of their size: pushed outward by more
        slack = err + (np.abs(lo) + np.abs(hi) + err) * 2.0 ** -50
        lo_c = _outward(lo - slack, C, up=False)
        hi_c = _outward(hi + slack, C, up=True)
        finite = np.isfinite(lo) & np.isfinite(hi)
        lo_c = np.where(finite, lo_c, lo)
        hi_c = np.where(finite, hi_c, hi)
    lows, highs = _store(lo_c, out, kw), _store(hi_c, out, kw)
    return bounds_result(ref.rounded, [lows], [highs], op=ref.op,
                         models=(f"within {err:g} (absolute) in {C.name}",),
                         details=ref.details)


def _outward(v, C: Format, up: bool):
    """``v`` (float64) rounded up (or down) into ``C``."""
    return convert(v, C, rounding=_UP if up else _DOWN, overflow="ieee")._wide().astype(
        np.float64)


def _store(v, out: Format, kw):
    """Values of the compute format stored into ``out`` (to nearest even: PyTorch's store)."""
    if out.name not in _REDUCED:
        return v
    return convert(v, out, overflow=kw["overflow"])._wide().astype(np.float64)


def _unary(name):
    fn = getattr(functions, name)

    @_quiet
    def equivalent(x, *, rounding=_NE, overflow=None):
        c = _call(name, name, (x,), ("x",))
        a = c.read(0)
        if c.out.kind == "complex" and complex_kernel(name) is not None:
            kw = dict(rounding=rounding, overflow=overflow if overflow is not None
                      else torch_overflow(c.out))
            if c.out.name == "complex128" and _counterpart(name).data.get("complex128_formula"):
                return _shaped(_acos_formula(a, c.out, kw), c.shape)
            return _shaped(complex_function(name, fn, (a,), c.out, kw), c.shape)
        C = F32 if c.out.name in _REDUCED else c.out
        return _shaped(_one_call(name, fn, (a,), c.out, C, rounding, overflow), c.shape)

    k = kernel(name)
    acc = k.accuracy
    equivalent.__name__ = equivalent.__qualname__ = name
    equivalent.__doc__ = (
        f"The reference for ``torch.{name}(x)`` on the CPU: ``er.{name}`` computed in the "
        f"kernel's format (float32 for float16 and bfloat16) within the accuracy of the "
        f"library it calls, then stored.\n\n    Kernel: {k.source}.\n\n    Accuracy (ulps of "
        f"the compute format): float64 {acc['float64']}, float32 {acc['float32']}, float16 "
        f"and bfloat16 {acc['reduced']}; measured max {k.measured}.\n    ")
    equivalent.__module__ = __name__
    return equivalent


# one equivalent per one-call kernel of one operand (the records'); atan2 and pow below
globals().update({_name: _unary(_name) for _name in _KERNEL_OPS if get_op(_name).arity == 1})


@_quiet
def atan2(y, x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.atan2(y, x)`` on the CPU (``atan2_kernel``,
    ``BinaryOpsKernel.cpp``): SLEEF's ``atan2_u10`` in the vectorized loop, the C library's
    ``atan2``/``atan2f`` in the scalar loop (glibc 2.36's ``atan2f``: 1.30 ulps measured), in
    float32 for float16 and bfloat16; integers promote to float32. Both operands must be
    tensors (a Python scalar raises TypeError, as in PyTorch)."""
    c = _call("atan2", "atan2", (y, x), ("input", "other"), tensors=("input", "other"))
    a, b = c.read(0), c.read(1)
    C = F32 if c.out.name in _REDUCED else c.out
    return _shaped(_one_call("atan2", functions.atan2, (a, b), c.out, C, rounding, overflow),
                   c.shape)


#: pow_tensor_scalar_optimized_kernel's exponents: computed by other operations, each rounded
#: into the dtype (measured: bfloat16 ``0x1.9cp+13 ** 3`` is ``0x1.0cp+41``, twice rounded,
#: where the exact cube rounds to ``0x1.0ap+41``); the float32 formula within 1 ulp (one
#: rounding) or 1.5 (two) is allowed too.
_POW_SCALAR = {2.0: 1.0, 0.5: 1.0, -0.5: 1.5, -1.0: 1.0, 3.0: 1.5, -2.0: 1.5}


def _pow_special(a, e, out, C, kw):
    """``x ** e`` for the exponents of :data:`_POW_SCALAR`: each step rounded into the dtype
    (or the whole in the compute format within 1 or 1.5 ulps)."""
    k = dict(kw, compute=out)
    sq = basic.multiply(a, a, **k).rounded if e in (3.0, -2.0) else None
    steps = {2.0: lambda: basic.multiply(a, a, **k),
             3.0: lambda: basic.multiply(sq, a, **k),
             0.5: lambda: roots.sqrt(a, **k),
             -0.5: lambda: division.reciprocal(roots.sqrt(a, **k).rounded, **k),
             -1.0: lambda: division.reciprocal(a, **k),
             -2.0: lambda: division.reciprocal(sq, **k)}
    whole = functions.pow(a, e, compute=C, accuracy=_POW_SCALAR[e], **kw)
    chain = _form(whole, steps[e]().rounded, fmt=out, model="each step rounded into " +
                  out.name)
    return any_of(whole, chain)


@_quiet
def pow(x, y, *, rounding=_NE, overflow=None):  # noqa: A001 - the op's name
    """The reference for ``torch.pow(x, y)`` on the CPU, float results.

    Tensor exponents: ``pow_tensor_tensor_kernel`` (``PowKernel.cpp``): SLEEF's ``pow_u10``
    vectorized, ``std::pow`` in the scalar loop, float32 for float16 and bfloat16: within 1 ulp.
    SLEEF's float64 pow returns infinity a little below the largest finite value (measured:
    ``pow(0x1.58eae0128c441p+0, 2380.8004751216477)``, exactly 1.7976931348621329e308, is
    ``inf``): the reference allows it above 1.797693134862e308. A Python scalar exponent takes
    ``pow_tensor_scalar_optimized_kernel``: 2, 3, 0.5, -0.5, -1 and -2 are ``x * x``,
    ``x * x * x``, ``sqrt``, ``rsqrt``, ``1 / x``, ``1 / (x * x)`` (one or two roundings:
    within 1 or 1.5 ulps); other exponents are SLEEF's pow with the exponent in the dtype in
    the vectorized body, but ``std::pow`` in double with the exponent as given (rounded once
    into the dtype) in the scalar loop: either. Integers: the exact power, wrapped
    (``er.pow``'s integer power, PyTorch's rules for negative exponents).
    """
    X, Y = operand(x, "x"), operand(y, "y")
    shape = tuple(broadcast(X, Y))
    res = resolve(X.promotion, Y.promotion, policy="torch", op="pow")
    c = _Call("pow", [X, Y], shape, res.result, res.compute)
    out = c.out
    rule = overflow if overflow is not None else torch_overflow(out)
    kw = dict(dtype=out, rounding=rounding, overflow=rule)
    scalar = Y.is_scalar and not isinstance(Y.scalar, complex)
    if scalar and float(Y.scalar) in (0.0, 1.0):
        # pow_out: an exponent 1 copies the base, 0 fills with ones (any dtype, float8 too)
        a = c.read(0)
        vals = np.ones(a.size) if float(Y.scalar) == 0 else a._wide()
        got = _torch_array(vals, out)
        return _shaped(_form(got, got, fmt=out, model="pow_out: a copy or ones"), c.shape)
    _check_kernel("pow", "pow", c.common)
    if out.is_integer:
        # the exact integer power, wrapped (a negative Python-scalar exponent raises, as
        # PyTorch's "Integers to negative integer powers are not allowed")
        exponent = Y.scalar if scalar else c.read(1)
        return _shaped(functions.pow(c.read(0), exponent, dtype=out, rounding=rounding,
                                     overflow=rule), c.shape)
    a, b = c.read(0), c.read(1)
    if out.kind == "complex":
        return _shaped(_complex_pow(a, b, Y, scalar, out, kw), c.shape)
    if out.kind != "float":
        _accuracy("pow", out)  # raises
    C = F32 if out.name in _REDUCED else out
    if scalar:
        e = float(Y.scalar)
        if e in _POW_SCALAR:
            return _shaped(_pow_special(a, e, out, C, kw), c.shape)
        # pow_tensor_scalar_kernel: the vectorized body raises to the exponent converted to
        # the dtype (SLEEF's pow_u10); the scalar loop (tails, short and strided tensors)
        # computes std::pow in double with the exponent as given and rounds (measured:
        # float32 pow(50, 1.7) is 0x1.828fdcp+9 in the body, 0x1.828fd6p+9 in the tail)
        vector = functions.pow(a, b, compute=C, accuracy=_accuracy("pow", out), **kw)
        tail = functions.pow(a, e, compute=F64, accuracy=1.0, **kw)
        return _shaped(any_of(vector, tail), c.shape)
    res = _one_call("pow", functions.pow, (a, b), c.out, C, rounding, overflow)
    if C is F64:
        r = res.rounded._wide().astype(np.float64)
        high = np.abs(functions.pow(a, b, dtype=F64, rounding=Rounding.TOWARD_ZERO)
                      .rounded._wide().astype(np.float64)) >= _POW64_EARLY_INF
        if high.any():
            res = _with_candidate(res, np.where(high, np.copysign(np.inf, r), np.nan),
                                  "SLEEF's early overflow")
    return _shaped(res, c.shape)


def _complex_pow(a, b, Y, scalar, out, kw):
    """Complex ``torch.pow``: ``std::pow``, glibc's ``cpow`` (see :func:`complex_pow`); a
    Python scalar exponent 2, 3 or -2 takes ``pow_tensor_scalar_optimized_kernel``: ``x * x``,
    ``x * x * x``, ``1 / (x * x)`` with ``c10::complex``'s textbook product, within the same
    bound where finite (measured), and the product's own value where it overflows (``inf -
    inf`` is NaN: ``(1.4e34 + 157i) ** 3`` is ``NaN + inf i``)."""
    res = complex_pow(a, b, out, out, kw)
    e = float(Y.scalar) if scalar else None
    if e not in (2.0, 3.0):
        return res
    z = np.asarray(a._wide()).reshape(-1).astype(out.np_dtype)
    with np.errstate(all="ignore"):
        chain = integer_chain(z, np.full(z.shape, int(e)))
        bad = ~(np.isfinite(z) & np.isfinite(chain))
    return with_formula(res, bad, chain, "x * x (* x), c10::complex's product, overflowed")


# =================================================================== PyTorch's formulas
@dataclass
class _Iv:
    """Per element, the interval ``[lo, hi]`` of the values a step may hold (float64 values of
    the compute format) and whether NaN is possible."""

    lo: np.ndarray
    hi: np.ndarray
    nan: np.ndarray

    @classmethod
    def point(cls, values) -> _Iv:
        v = np.asarray(values, dtype=np.float64)
        return cls(v, v, np.isnan(v))

    @classmethod
    def hull(cls, *arrays) -> _Iv:
        stack = np.stack([np.asarray(a, dtype=np.float64) for a in arrays])
        with np.errstate(invalid="ignore"):
            return cls(np.fmin.reduce(stack), np.fmax.reduce(stack), np.isnan(stack).any(0))


def _hull(*ivs: _Iv) -> _Iv:
    """The smallest interval holding every one of ``ivs`` (alternative evaluations)."""
    out = _Iv.hull(*[v for iv in ivs for v in (iv.lo, iv.hi)])
    out.nan = np.logical_or.reduce([iv.nan for iv in ivs]) | out.nan
    return out


def _arr(v, C: Format) -> Array:
    return Array(np.asarray(v, dtype=np.float64).astype(C.np_dtype), C)


def _fn(name, iv: _Iv, C: Format, acc, **params) -> _Iv:
    """A monotone function step: every value within ``acc`` ulps of ``C`` of the function at
    each end of ``iv`` (``acc`` a number of ulps, or ("abs", e) for an absolute error)."""
    fn = getattr(functions, name)
    ends = []
    for v in (iv.lo, iv.hi) if not np.array_equal(iv.lo, iv.hi, equal_nan=True) else (iv.lo,):
        if isinstance(acc, tuple):
            r = _within_abs(fn, (_arr(v, C),), acc[1], C, C,
                            dict(dtype=C, rounding=_NE, overflow="ieee"))
        else:
            r = fn(_arr(v, C), dtype=C, compute=C, accuracy=acc, **params)
        ends += [r.lowest, r.highest]
    out = _Iv.hull(*ends)
    out.nan |= iv.nan
    return out


def _ends(iv: _Iv) -> list:
    """The ends of an interval, and 0 where it spans zero (a product or quotient is monotone
    on each side of 0, and ``inf * 0`` is NaN)."""
    with np.errstate(invalid="ignore"):
        spans = (iv.lo < 0) & (iv.hi > 0)
    return [iv.lo, iv.hi] + ([np.where(spans, 0.0, iv.lo)] if spans.any() else [])


def _op(fn, *args) -> _Iv:
    """An arithmetic step rounded once into ``C`` (the last argument), monotone in each
    operand: the rounded results at the corners of the operands' intervals. Each operand is
    an _Iv or a constant."""
    *operands, C = args
    ends = [_ends(o) if isinstance(o, _Iv) else [o] for o in operands]
    corners = []
    for combo in itertools.product(*ends):
        vals = [_arr(u, C) if isinstance(u, np.ndarray) else u for u in combo]
        corners.append(fn(*vals, dtype=C, compute=C, overflow="ieee").rounded._wide()
                       .astype(np.float64))
    out = _Iv.hull(*corners)
    for o in operands:
        if isinstance(o, _Iv):
            out.nan |= o.nan
    return out


# Kernels whose bfloat16 results PyTorch flushes to zero where they are subnormal (their
# records' bf16_flush; measured: every subnormal result of sigmoid, silu and gelu; not of exp,
# mish, softplus, ...): their convert_from_float<BFloat16> store, presumably AVX512-BF16's
# vcvtneps2bf16, which treats denormal inputs as zero, on this CPU.


def _formula_result(ref: Result, iv: _Iv, out: Format, C: Format, overflow, model: str,
                    points=()):
    """The Result whose reference is ``ref`` (the mathematical function rounded once) and
    whose candidates are the ends of ``iv`` stored into ``out`` (and NaN where possible; for
    the kernels of :data:`_BF16_FLUSH`, bfloat16 subnormals flushed to zero too), and the
    ``points`` (values of ``C`` inside ``iv`` an evaluation gives, stored too: they keep the
    signs of zero the interval's ends lose)."""
    kw = dict(overflow=overflow if overflow is not None else torch_overflow(out))
    lo, hi = _store(iv.lo, out, kw), _store(iv.hi, out, kw)
    extra = [[np.where(iv.nan, np.nan, lo)]]
    extra += [[_store(np.asarray(p, dtype=np.float64), out, kw)] for p in points]
    if out.name == "bfloat16" and (_counterpart(ref.op).data or {}).get("bf16_flush"):
        tiny = out.component.smallest_normal
        with np.errstate(invalid="ignore"):
            for v in (iv.lo, iv.hi):
                extra.append([np.where(np.abs(v) < tiny, np.copysign(0.0, v), lo)])
        model += "; subnormal bfloat16 results flushed to zero"
    return bounds_result(ref.rounded, [lo], [hi], op=ref.op, extra=extra,
                         models=(model + (f" in {C.name}, stored into {out.name}"
                                          if C is not out else f" in {C.name}"),),
                         details=ref.details)


def _prepare(name, x, params=None):
    c = _call(name, name, (x,), ("x",))
    a = c.read(0)
    C = F32 if c.out.name in _REDUCED else c.out
    return c, a, C


def _reference(name, a, out, rounding, overflow, **params):
    rule = overflow if overflow is not None else torch_overflow(out)
    return getattr(functions, name)(a, dtype=out, rounding=rounding, overflow=rule, **params)


@_quiet
def sigmoid(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.sigmoid(x)`` on the CPU (``sigmoid_kernel``,
    ``UnaryOpsKernel.cpp``): ``1 / (1 + exp(-x))``, each step rounded in float32 (float64 for
    float64; float16 and bfloat16 in float32, then stored), ``exp`` SLEEF's ``expf_u10``
    (vectorized) or the C library's (scalar loop). Modelled step by step: it is 0 wherever
    ``exp(-x)`` overflows (``x < -88.72`` in float32, ``-709.78`` in float64) though the exact
    value is a subnormal down to ``x = -103.3`` (``-745.1``)."""
    c, a, C = _prepare("sigmoid", x)
    ref = _reference("sigmoid", a, c.out, rounding, overflow)
    negx = _Iv.point(-a._wide().astype(np.float64))
    e = _fn("exp", negx, C, _step(functions.exp.spec.name))
    s = _op(basic.add, 1.0, e, C)
    r = _op(division.divide, 1.0, s, C)
    return _shaped(_formula_result(ref, r, c.out, C, overflow,
                                   "1 / (1 + exp(-x)), each step rounded"), c.shape)


@_quiet
def silu(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.nn.functional.silu(x)`` on the CPU (``silu_kernel``,
    ``Activation.cpp``): ``x / (1 + exp(-x))``, each step rounded in float32 (float64), exp
    as in :func:`sigmoid`. ``silu(-inf)`` is NaN (``-inf / inf``; the exact limit is -0), and
    it is -0 wherever ``exp(-x)`` overflows."""
    c, a, C = _prepare("silu", x)
    ref = _reference("silu", a, c.out, rounding, overflow)
    xv = a._wide().astype(np.float64)
    e = _fn("exp", _Iv.point(-xv), C, _step(functions.exp.spec.name))
    s = _op(basic.add, 1.0, e, C)
    r = _op(division.divide, _Iv.point(xv), s, C)
    return _shaped(_formula_result(ref, r, c.out, C, overflow,
                                   "x / (1 + exp(-x)), each step rounded"), c.shape)


@_quiet
def mish(x, *, rounding=_NE, overflow=None):
    """The reference for ``torch.nn.functional.mish(x)`` on the CPU (``mish_kernel``,
    ``Activation.cpp``): ``x * tanh(log1p(exp(x)))``, each step rounded in float32 (float64),
    SLEEF's u10 functions vectorized and the C library's in the scalar loop (glibc's ``tanh``:
    up to 2.5 ulps). ``mish(-inf)`` is NaN (``-inf * 0``)."""
    c, a, C = _prepare("mish", x)
    ref = _reference("mish", a, c.out, rounding, overflow)
    xv = a._wide().astype(np.float64)
    e = _fn("exp", _Iv.point(xv), C, _step(functions.exp.spec.name))
    sp = _fn("log1p", e, C, _step(functions.log1p.spec.name))
    t = _fn("tanh", sp, C, _step(functions.tanh.spec.name))
    r = _op(basic.multiply, _Iv.point(xv), t, C)
    return _shaped(_formula_result(ref, r, c.out, C, overflow,
                                   "x * tanh(log1p(exp(x))), each step rounded"), c.shape)


@dataclass(frozen=True)
class GeluPath:
    """One kernel torch 2.13's float32 ``gelu(x)`` (``approximate="none"``) runs on the CPU:
    ``source`` (the code and where it is chosen), ``formula`` (its order of operations),
    ``env`` (the environment variables that select it on a CPU that has its instructions: how
    it was measured), ``measured``: its outputs (float32, contiguous tensors of 67 copies) at
    the inputs where the kernels differ, as float.hex strings keyed by the input's, and
    ``onednn``: whether it runs with ``torch.backends.mkldnn.enabled`` (ATen's kernels were
    measured with it False)."""

    source: str
    formula: str
    env: dict
    measured: dict
    onednn: bool = True


_AS = "Abramowitz and Stegun 7.1.26"
_ONEDNN = ("gelu_out_cpu -> use_mkldnn (contiguous float32; bfloat16 and float16 where the CPU "
           "has oneDNN kernels for them) -> ideep eltwise gelu_erf: oneDNN v3.12 "
           "jit_uni_eltwise_injector::gelu_erf_compute_vector_fwd, ")
_ATEN = ("GeluKernelImpl (Activation.cpp): strided tensors, and every tensor on a CPU or build "
         "without oneDNN; cpu_kernel_vec over ")
#: The kernels of float32 ``torch.nn.functional.gelu(x)``, each covered by :func:`gelu` and
#: checked by ``tests/equivalents/test_torch_functions.py`` (each run in a child process under
#: its ``env``). Measured with torch 2.13.0+cpu (oneDNN v3.12.0) on an Intel Xeon with AVX-512
#: (AVX-512 FP16 and BF16, AMX; ``torch.backends.cpu.get_cpu_capability()`` ``"AVX512"``); the
#: lesser kernels there by ``ONEDNN_MAX_CPU_ISA`` and ``ATEN_CPU_CAPABILITY``. The AVX2 kernel's
#: outputs are those reported from an AMD EPYC with AVX2 only (-0x1.9p-20 at -5, +0 at -0).
#: ``ATEN_CPU_CAPABILITY`` does not select oneDNN's kernel (oneDNN reads the CPU itself). Not
#: measured: aarch64 (NEON, SVE: oneDNN's SVE-512 kernel is the minimax polynomial by its source).
GELU_FLOAT32_PATHS = {
    "onednn-avx512": GeluPath(
        _ONEDNN + "gelu_erf_minimax_approx_compute_vector_fwd on avx512_core and above",
        "(x * (1 + erf(x))) * 0.5, erf a minimax polynomial per binade quarter of |x|: "
        "inf at x > max / 2, NaN at +inf", {},
        {"-0x1.4p+2": "-0x1.4p-20", "-0x0.0p+0": "-0x0.0p+0", "0x1.9640380000000p+127": "inf",
         "inf": "nan"}),
    "onednn-avx2": GeluPath(
        _ONEDNN + _AS + " on avx2 (S = 0.5 x; fma(erf, S, S))",
        "S + S * erf(x / sqrt 2) in one FMA, S = x * 0.5: gelu(-0) = +0", {"ONEDNN_MAX_CPU_ISA":
                                                                          "AVX2"},
        {"-0x1.4p+2": "-0x1.9p-20", "-0x0.0p+0": "0x0.0p+0",
         "0x1.9640380000000p+127": "0x1.9640380000000p+127", "inf": "inf"}),
    "onednn-sse41": GeluPath(
        _ONEDNN + _AS + " on sse41 and avx (no FMA: each multiply-add rounded twice)",
        "S + S * erf(x / sqrt 2), S * erf rounded first", {"ONEDNN_MAX_CPU_ISA": "SSE41"},
        {"-0x1.4p+2": "-0x1.8p-20", "-0x0.0p+0": "0x0.0p+0",
         "0x1.9640380000000p+127": "0x1.9640380000000p+127", "inf": "inf"}),
    "aten-vectorized": GeluPath(
        _ATEN + "Vectorized<float> (vec256/vec512: erf is " + _AS + ")",
        "(x * 0.5) * (1 + erf(x * M_SQRT1_2))", {},
        {"-0x1.4p+2": "-0x1.9p-20", "-0x0.0p+0": "-0x0.0p+0",
         "0x1.9640380000000p+127": "0x1.9640380000000p+127", "inf": "inf"}, onednn=False),
    "aten-default": GeluPath(
        _ATEN + "the DEFAULT capability (std::erf per lane: glibc's erff)",
        "(x * 0.5) * (1 + erff(x * M_SQRT1_2))", {"ATEN_CPU_CAPABILITY": "default"},
        {"-0x1.4p+2": "-0x1.9p-20", "-0x0.0p+0": "-0x0.0p+0",
         "0x1.9640380000000p+127": "0x1.9640380000000p+127", "inf": "inf"}, onednn=False),
}


_ERF_FORMULA, _TANH_FORMULA = "none", "tanh"  # gelu's approximate= values
#: GeluKernelImpl's constants, rounded into the compute format as the kernel does
_SQRT1_2 = 0.7071067811865476  # M_SQRT1_2
_GELU_BETA = 1.4142135623730951 * 1.1283791670955126 * 0.5  # M_SQRT2 * M_2_SQRTPI * 0.5
_GELU_KAPPA = 0.044715


def _const(v, C: Format) -> float:
    return float(np.float32(v)) if C is F32 else float(v)


@_quiet
def gelu(x, approximate="none", *, rounding=_NE, overflow=None):
    """The reference for ``torch.nn.functional.gelu(x, approximate=...)`` on the CPU
    (``GeluKernelImpl``, ``Activation.cpp``), each step rounded in float32 (float64; float16
    and bfloat16 in float32, then stored), constants rounded into that format:

    * ``"none"``: ``x * 0.5 * (1 + erf(x * M_SQRT1_2))``. ``erf`` is SLEEF's ``erf_u10`` for
      float64; float32 has four kernels, each modelled, which one runs depends on the CPU
      (:data:`GELU_FLOAT32_PATHS`): a contiguous tensor goes to oneDNN (``gelu_out_cpu``:
      ``use_mkldnn``; float16 and bfloat16 too where the CPU has oneDNN kernels for them),
      whose JIT kernel on AVX-512 CPUs is a minimax polynomial of erf, ``(x * (1 + erf)) *
      0.5``, and on AVX2 (SSE4.1, AVX) CPUs Abramowitz and Stegun's 7.1.26, ``S + S * erf``
      with ``S = 0.5 * x`` (an FMA on AVX2: ``gelu(-0)`` is ``+0``); strided tensors and
      CPUs without oneDNN run ATen's ``GeluKernelImpl``, ``(x * 0.5) * (1 + erf)`` with
      ``Vectorized<float>::erf`` (Abramowitz and Stegun's 7.1.26 again) or the C library's
      ``erff`` in the scalar loop. Every polynomial erf is modelled by an absolute error of
      2**-20 (:data:`AS_ERF_ABS`). Where ``1 + erf`` nearly cancels (``x < -4``) the kernel
      keeps only the absolute error: float32 gelu(-5) may be anything in about ``[-2.4e-6,
      2.4e-6]`` (the exact value is -1.4e-6), and ``gelu(-inf)`` is NaN.
    * ``"tanh"``: ``0.5 * x * (1 + tanh(kBeta * (x + kKappa * x * x * x)))``.
    """
    if approximate not in (_ERF_FORMULA, _TANH_FORMULA):
        raise ValueError(f"approximate={approximate!r}; PyTorch takes 'none' or 'tanh'")
    c, a, C = _prepare("gelu", x)
    ref = _reference("gelu", a, c.out, rounding, overflow, approximate=approximate)
    xv = a._wide().astype(np.float64)
    X = _Iv.point(xv)
    points = ()
    if approximate == _ERF_FORMULA:
        y = _op(basic.multiply, X, _const(_SQRT1_2, C), C)
        acc = _step(functions.erf.spec.name) if C is F64 else ("abs", AS_ERF_ABS)
        e = _fn("erf", y, C, acc)
        if C is not F64:  # the scalar loop: the C library's erff, 1 ulp
            e = _hull(e, _fn("erf", y, C, _step(functions.erf.spec.name)))
        s = _op(basic.add, 1.0, e, C)
        half = _op(basic.multiply, X, 0.5, C)  # a point: x is one value
        # ATen computes (x * 0.5) * s; oneDNN's AVX-512 kernel (x * s) * 0.5, as measured:
        # float32 gelu(2.7e38) is inf there (x * 2 overflows), 2.7e38 in ATen's loops
        r = _hull(_op(basic.multiply, half, s, C), _op(basic.multiply, _op(basic.multiply, X, s, C), 0.5, C))
        if C is F32:
            # oneDNN's AVX-512 kernel gives NaN at +inf (its last polynomial times inf)
            r.nan |= xv == np.inf
            # oneDNN's AVX2 kernel: S + S * erf in one FMA (SSE4.1 and AVX: S * erf rounded
            # first); monotone in erf, so its ends are the ends of erf's interval. The fused
            # ends are kept as points too: they hold the signs of zero (S = -0 gives +0 for
            # erf < 0, -0 for erf > 0: AVX2's gelu(-0) is +0, gelu(-1e-45) too)
            fused = _op(basic.fma, e, half, half, C)
            r = _hull(r, fused, _op(basic.add, _op(basic.multiply, e, half, C), half, C))
            points = [_fma_point(v, half.lo, C) for v in (e.lo, e.hi)]
        model = "x * 0.5 * (1 + erf(x * M_SQRT1_2)), each step rounded"
    else:
        x2 = _op(basic.multiply, X, X, C)
        x3 = _op(basic.multiply, x2, X, C)
        kappa = _const(_GELU_KAPPA, C)
        # x + kKappa * x_cube: GCC contracts the vectorized multiply and add into an FMA
        # (-ffp-contract=fast, AVX2/AVX512 builds); the scalar loop may not: both
        unfused = _op(basic.add, X, _op(basic.multiply, x3, kappa, C), C)
        fused = _op(basic.fma, x3, kappa, X, C)
        inner = _hull(unfused, fused)
        z = _op(basic.multiply, inner, _const(_GELU_BETA, C), C)
        t = _fn("tanh", z, C, _step(functions.tanh.spec.name))
        s = _op(basic.add, 1.0, t, C)
        h = _op(basic.multiply, X, 0.5, C)
        r = _op(basic.multiply, h, s, C)
        model = "0.5 * x * (1 + tanh(kBeta * (x + kKappa * x**3))), each step rounded"
    return _shaped(_formula_result(ref, r, c.out, C, overflow, model, points), c.shape)


def _fma_point(e, h, C: Format):
    """``e * h + h`` rounded once into ``C`` (to nearest even), elementwise, with IEEE's sign of
    an exact zero."""
    return basic.fma(_arr(e, C), _arr(h, C), _arr(h, C), dtype=C, compute=C,
                     overflow="ieee").rounded._wide().astype(np.float64)


@_quiet
def softplus(x, beta=1.0, threshold=20.0, *, rounding=_NE, overflow=None):
    """The reference for ``torch.nn.functional.softplus(x, beta, threshold)`` on the CPU
    (``softplus_kernel``, ``Activation.cpp``): ``x`` where ``x * beta > threshold``, else
    ``log1p(exp(x * beta)) / beta``, each step rounded in float32 (float64), ``beta`` and
    ``threshold`` converted to that format, SLEEF's u10 functions vectorized and the C
    library's in the scalar loop."""
    c, a, C = _prepare("softplus", x)
    ref = _reference("softplus", a, c.out, rounding, overflow, beta=beta, threshold=threshold)
    xv = a._wide().astype(np.float64)
    b, th = _const(float(beta), C), _const(float(threshold), C)
    xb = _op(basic.multiply, _Iv.point(xv), b, C)
    e = _fn("exp", xb, C, _step(functions.exp.spec.name))
    lp = _fn("log1p", e, C, _step(functions.log1p.spec.name))
    r = _op(division.divide, lp, b, C)
    big = xb.lo > th  # x * beta is one value (a point): the branch is decided
    r = _Iv(np.where(big, xv, r.lo), np.where(big, xv, r.hi), np.where(big, np.isnan(xv), r.nan))
    return _shaped(_formula_result(ref, r, c.out, C, overflow,
                                   "x * beta > threshold ? x : log1p(exp(x * beta)) / beta, "
                                   "each step rounded"), c.shape)


@_quiet
def logit(x, eps=None, *, rounding=_NE, overflow=None):
    """The reference for ``torch.logit(x, eps)`` on the CPU (``logit_kernel``,
    ``UnaryOpsKernel.cpp``): ``x`` clamped into ``[eps, 1 - eps]`` (``1 - eps`` rounded in the
    dtype), then ``log(x / (1 - x))`` (``inf`` at ``x == 1``): ``1 - x`` and the quotient are
    rounded *in the dtype* (float16 and bfloat16 too: ``LogitMKLKernel`` computes them in
    ``scalar_t``), the logarithm is MKL's ``vsLn``/``vdLn`` (contiguous float32 and float64),
    SLEEF's ``log_u10`` or the C library's (strided), in float32 for float16 and bfloat16.
    The quotient cancels near ``x = 1/2``: float32 ``logit(0.5 - 2**-25)`` is ``-2**-24``
    (``1 - x`` rounds to 0.5), 4 million ulps from the exact ``-2**-23``."""
    c, a, C = _prepare("logit", x)
    ref = _reference("logit", a, c.out, rounding, overflow, eps=eps)
    out = c.out
    xv = a._wide().astype(np.float64)
    if eps is not None:
        e = float(cast([float(eps)], out)._wide().reshape(-1)[0])  # Scalar.to<scalar_t>()
        hi_ = float(basic.subtract(1.0, e, dtype=out).rounded._wide().reshape(-1)[0])
        if e >= 0:
            xv = np.where(xv < e, e, np.where(xv > hi_, hi_, xv))
    X = _Iv.point(xv)
    one_minus = _op(basic.add, 1.0, _Iv.point(-xv), out)
    q = _op(division.divide, X, one_minus, out)
    qi = _Iv(np.where(xv == 1, np.inf, q.lo), np.where(xv == 1, np.inf, q.hi), q.nan)
    r = _fn("log", qi, C, _step(functions.log.spec.name))
    return _shaped(_formula_result(ref, r, out, C, overflow,
                                   "log(x / (1 - x)), the quotient rounded in " + out.name +
                                   ", log"), c.shape)


__all__ = [*(n for n in names_of("exactref.arithmetic.functions") if n in globals()), "KERNELS",
           "GELU_FLOAT32_PATHS", "GeluPath", "kernel"]
