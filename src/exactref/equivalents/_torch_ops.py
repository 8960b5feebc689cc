"""PyTorch equivalents of the elementwise family: what torch 2.13's CPU kernels compute for
``subtract`` ... ``rsqrt`` here, and (in :mod:`._torch_select` and :mod:`._torch_cast`,
re-exported) ``abs`` ... ``greater_equal``, ``clamp`` and ``Tensor.to``.

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

import numpy as np

from .._array import Array
from .._formats import Format
from .._result import Result
from ..arithmetic import basic, division, roots, selection
from ..ops import op_names
from ..promotion import resolve
from ._common import F32, operand, python_scalar
from ._torch_call import (  # noqa: F401  (the call helpers _torch_functions reads from here)
    _NE,
    _REDUCED,
    _array,
    _Call,
    _call,
    _check_kernel,
    _complex_scalar,
    _const,
    _faithful,
    _form,
    _from_parts,
    _into,
    _join,
    _kw,
    _parts,
    _paths,
    _pick,
    _quiet,
    _real,
    _same,
    _scalar_to,
    _shaped,
    _split,
)
from .torch import TorchUnsupported
from .torch import add as _add


class TorchCrash(TorchUnsupported):
    """PyTorch 2.13 kills the process on this input (SIGFPE) instead of computing it: the
    equivalent raises, and a test must never call PyTorch there."""


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
    return _add(x, y, alpha=-a, rounding=rounding, overflow=overflow)


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
            out.append(_from_parts([re, im], fmt))
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


# ----------------------------------------------------- the rest of the family (by concern)
from ._torch_cast import cast_result  # noqa: E402, F401
from ._torch_select import (  # noqa: E402, F401
    abs,  # noqa: A004
    clamp,
    equal,
    fmax,
    fmin,
    greater,
    greater_equal,
    less,
    less_equal,
    maximum,
    minimum,
    negative,
    not_equal,
)

#: the family's equivalents defined or gathered here (the registry's names, in its order)
__all__ = [*(n for n in op_names() if n in globals()), "cast_result", "TorchCrash"]
