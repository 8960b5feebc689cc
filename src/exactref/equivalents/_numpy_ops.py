"""NumPy's models of the elementwise family: what NumPy 2.4's ufuncs (and ml_dtypes 0.6's and
0.7's loops) compute, one model per kind of loop, each registered by name in :data:`MODELS`;
the records' numpy counterparts name their model (``data["model"]``) and its parameters, and
:mod:`exactref.equivalents.numpy` builds ``subtract`` ... ``greater_equal`` from them
(:mod:`exactref.equivalents._family`).

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
``/work/notes/issue10_library_behaviour.md``; each model names the loop it follows.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import arithmetic as er_ops
from .._exact import Rounding
from .._formats import FORMATS, Format
from .._result import Result, any_of
from . import _family
from ._common import broadcast, operand
from ._numpy_cast import astype
from ._numpy_complex import (
    _complex_abs,
    _complex_divide,
    _complex_reciprocal,
    _complex_sqrt,
    _with_annex_g,
)
from ._numpy_loop import (  # noqa: F401 - _numpy_functions reads the loop helpers here
    _DEFAULT_NAN,
    _NATIVE,
    _QUIET_NAN,
    BOOL,
    POLICY,
    _array,
    _Call,
    _call,
    _cast,
    _compute,
    _defined,
    _float_op,
    _int_division,
    _into,
    _loop_result,
    _ml,
    _nanless,
    _narrow,
    _nonzero,
    _op,
    _operands,
    _patched,
    _policy,
    _shaped,
)

__all__ = ["MODELS", "POLICY", "astype", "npy_divmod"]

#: NumPy's models, by the names the records' numpy counterparts give (``data["model"]``).
MODELS = _family.Models("numpy")
#: The promotion op whose result is the operands' plain promotion: the dtype of the loop a
#: comparison (a record whose ``loop`` is ``"common"``) reads.
_COMMON_LOOP = "maximum"
#: What a division's loop stores for a NaN into a format without NaN (the record's
#: ``nan_zero``): ``"quiet"`` (C++'s ``quiet_NaN()``, -0) or the x86 default NaN (+0).
_QUIET = "quiet"


# ------------------------------------------------------------------------ sums, products
@MODELS
def _rounded(op, x, y, *, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """The reference for ``{call}(x, y)``: each element the exact sum (product) of the values
    NumPy's loop reads, rounded once (``overflow=None``: the dtype's own rule; integers wrap).
    A complex product's parts are two-term sums with their modelled implementations, as in
    :func:`exactref.multiply`; where the record's ``annex_g`` is set, ml_dtypes' complex32 and
    bcomplex32 multiply with C's ``_Complex float`` product, whose Annex G recovery turns a
    NaN+NaNj textbook result with an infinite factor into infinities (see
    :func:`~exactref.equivalents.numpy.annex_g_recover`)."""
    X = operand(x, "x", numpy_scalars_are_python=False)
    Y = operand(y, "y", numpy_scalars_are_python=False)
    broadcast(X, Y)
    out = _policy((X, Y), op.promotion)
    xc, yc = _cast(X, out), _cast(Y, out)
    ref = op.function(xc, yc, dtype=out, rounding=rounding, overflow=overflow)
    if op.get("annex_g") and out.name in ("complex32", "bcomplex32"):
        ref = _with_annex_g(ref, xc, yc, out, rounding, overflow)
    return ref


@MODELS
def _narrow_rounded(op, x, y):
    """The reference for ``{call}(x, y)``: the exact difference rounded once.

    float32/float64/complex64/complex128 natively, integers wrapping; float16 (``HALF``
    loops) and every ml_dtypes float computed in float32 and rounded into the dtype
    (``ufuncs::Subtract``), complex32 and bcomplex32 in complex64, with the dtype's overflow
    rule: the compute step is a modelled implementation beside the single rounding (they agree
    for one subtraction: float32 has 2p + 2 bits for each of them). bool raises TypeError as
    NumPy does ("numpy boolean subtract ... is not supported").
    """
    c = _call(op.promotion, x, y)
    res = op.function(c.read(0), c.read(1), dtype=c.out, **_narrow(c.out))
    return _shaped(res, c.shape)


# ----------------------------------------------------------------------------- quotients
@MODELS
def _true_division(op, x, y):
    """The reference for ``{call}(x, y)`` (true division).

    Integers and bool are read as float64 (NumPy's ``dd->d`` loop; int64 values rounded by
    NumPy's cast), ml_dtypes' small integers as float16 or float32 (the loop their promotion
    finds). Real floats: the exact quotient rounded once (float16 and ml_dtypes floats through
    float32, as for ``subtract``); ``x / ±0`` is a signed infinity, ``0 / 0`` NaN. Complex
    quotients follow the loops: see :func:`~exactref.equivalents._numpy_complex._complex_divide`.
    """
    c = _true_division_call(op, x, y)
    a, b = c.read(0), c.read(1)
    if c.out.kind == "complex":
        return _shaped(_complex_divide(a, b, c.out), c.shape)
    return _shaped(_float_op(op.function, (a, b), c.out, _DEFAULT_NAN), c.shape)


def _true_division_call(op, x, y) -> _Call:
    """The call of ``np.divide``. Note: true division converts a Python int beside an integer
    array straight into the float loop (``int8_array / 300`` is float64; ``int4_array / 300``
    float16), with no NEP 50 bounds check, where the numpy promotion policy raises
    PromotionOverflowError: the result dtype is taken for an int that fits."""
    from ..promotion import PromotionOverflowError

    try:
        return _call(op.promotion, x, y)
    except PromotionOverflowError:
        ops = _operands((x, y), ("x", "y"))
        stand_in = [1 if o.is_scalar and type(o.scalar) is int else o.promotion for o in ops]
        from ..promotion import result_type

        out = result_type(*stand_in, policy=POLICY, op=op.promotion)
        return _Call(ops, tuple(broadcast(*ops)), out, out)


@MODELS
def _divmod_quotient(op, x, y):
    """The reference for ``{call}(x, y)``.

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
    c = _call(op.promotion, x, y)
    a, b = c.read(0), c.read(1)
    if c.out.is_integer:
        return _shaped(_int_division(op.function, a, b, c.out), c.shape)
    C = _compute(c.out)
    q, _ = npy_divmod(a._wide(), b._wide(), C)
    got = _into(q, C, c.out, _QUIET_NAN)
    if _nanless(c.out):
        return _shaped(_defined(got, c.out, op.name, f"npy_divmod in {C.name}"), c.shape)
    ref = op.function(a, b, dtype=c.out)
    return _shaped(_loop_result(ref, got, c.out, f"npy_divmod in {C.name}"), c.shape)


@MODELS
def _division(op, x, y):
    """The reference for ``{call}(x, y)``: ``np.remainder`` (Python's ``%``) or ``np.fmod``
    (C's ``fmod``), the op's exact value rounded once.

    Integers: Python's modulo (``remainder``) or truncated division's remainder (``fmod``)
    exactly, and 0 where ``y`` is 0 (NumPy warns). Floats: ``remainder`` is ``npy_divmod``'s
    modulus, which is the exact ``x - y * floor(x / y)`` rounded once: ``fmod`` (exact) plus
    ``y`` where their signs differ, one rounding; an exact zero takes the divisor's sign
    (``remainder(-0., 1.)`` is +0, unlike PyTorch's); ``y = ±0`` gives NaN. ``fmod`` is exact
    (the dividend's sign, NaN for ``y = ±0``). float16 and ml_dtypes floats computed in float32
    (a modelled implementation); into a format without NaN a NaN is stored as the zero the
    record's ``nan_zero`` names.
    """
    c = _call(op.promotion, x, y)
    a, b = c.read(0), c.read(1)
    if c.out.is_integer:
        return _shaped(_int_division(op.function, a, b, c.out), c.shape)
    nan_zero = _QUIET_NAN if op.get("nan_zero") == _QUIET else _DEFAULT_NAN
    return _shaped(_float_op(op.function, (a, b), c.out, nan_zero), c.shape)


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
#: What C's conversion of ``1.0 / 0`` (+inf, a double) gives in NumPy's integer reciprocal
#: loop ``(T)(1.0 / in)`` (``loops_autovec.dispatch.c.src``), measured on x86-64: the
#: "integer indefinite" of cvttsd2si (the narrow types through int32, then truncated).
_INT_RECIPROCAL_OF_ZERO = {"int8": 0, "uint8": 0, "int16": 0, "uint16": 0,
                           "int32": -2**31, "uint32": 0, "int64": -2**63, "uint64": 0}


@MODELS
def _inverse(op, x):
    """The reference for ``{call}(x)``.

    Floats: ``1 / x`` rounded once (float16 and ml_dtypes floats through float32). Integers
    keep their dtype (bool becomes int8): NumPy's loop is ``(T)(1.0 / x)``, so the result is
    ``trunc(1 / x)`` (1 for 1, -1 for -1, 0 otherwise) and, for ``x = 0``, C's conversion of
    +inf into the type (see :data:`_INT_RECIPROCAL_OF_ZERO`). Complex: NumPy's own loop,
    see :func:`~exactref.equivalents._numpy_complex._complex_reciprocal`.
    """
    c = _call(op.promotion, x, labels=("x",))
    a = c.read(0)
    if c.out.is_integer:
        safe, zero = _nonzero(a)
        res = er_ops.divide(1, safe, rounding_mode="trunc", dtype=c.out)
        return _shaped(_patched(res, zero, _INT_RECIPROCAL_OF_ZERO[c.out.name]), c.shape)
    if c.out.kind == "complex":
        return _shaped(_complex_reciprocal(a, c.out), c.shape)
    return _shaped(_float_op(op.function, (a,), c.out, _DEFAULT_NAN), c.shape)


@MODELS
def _root(op, x):
    """The reference for ``{call}(x)``: the square root rounded once (float16 and ml_dtypes
    floats through float32; int8, uint8 and bool give float16, int16 and uint16 float32, wider
    integers float64, each read through NumPy's cast). Complex: glibc's ``csqrt``, see
    :func:`~exactref.equivalents._numpy_complex._complex_sqrt`."""
    c = _call(op.promotion, x, labels=("x",))
    a = c.read(0)
    if c.out.kind == "complex":
        return _shaped(_complex_sqrt(a, c.out), c.shape)
    return _shaped(_float_op(op.function, (a,), c.out, _DEFAULT_NAN), c.shape)


_COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "float16": "complex32",
               "bfloat16": "bcomplex32"}


@MODELS
def _modulus(op, x):
    """The reference for ``{call}(x)`` (``np.absolute``).

    Real formats: exact (``abs(-0) = +0``; ``abs(INT_MIN)`` is ``INT_MIN``: two's complement
    wraps; bool and unsigned unchanged). Complex: the modulus as the loops compute it, see
    :func:`~exactref.equivalents._numpy_complex._complex_abs`.
    """
    c = _call(op.promotion, x, labels=("x",))
    if c.ops[0].is_scalar and isinstance(c.ops[0].scalar, complex) or (
            not c.ops[0].is_scalar and c.ops[0].array.dtype.kind == "complex"):
        c.loop = FORMATS[_COMPLEX_OF[c.out.name]]
        return _shaped(_complex_abs(c.read(0), c.out), c.shape)
    return _shaped(op.function(c.read(0), dtype=c.out), c.shape)


@MODELS
def _negation(op, x):
    """The reference for ``{call}(x)``: exact (``-(+0) = -0``); integers wrap
    (``-INT_MIN`` is ``INT_MIN``, unsigned values wrap modulo 2**n); bool raises TypeError as
    NumPy does."""
    c = _call(op.promotion, x, labels=("x",))
    return _shaped(op.function(c.read(0), dtype=c.out), c.shape)


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


@MODELS
def _extremum(op, x, y):
    """The reference for ``{call}(x, y)``: the larger (the record's ``larger``) or smaller
    operand.

    ``maximum``/``minimum`` (``propagates``): NaN propagating (the NaN operand itself). Where
    the operands compare equal (+0 and -0) NumPy returns one of them by the rule of its loop
    (:func:`_tie_first`): the second for float32, float64 and the ml_dtypes floats, the first
    for float16. ``fmax``/``fmin``: a NaN operand ignored; on a tie of zeros float32 and
    float64 may return either (libm's ``fmax`` for some elements, SIMD for others, by length
    and position), float16 the first, ml_dtypes floats the second. Complex operands are
    ordered lexicographically (NumPy's ``CGE``; ml_dtypes' ``>``; a NaN second operand ignored
    by ``fmax``), which ``er.maximum`` refuses: the equivalent implements it, exactly."""
    larger, propagates = op["larger"], op["propagates"]
    c = _call(op.promotion, x, y)
    a, b = c.read(0), c.read(1)
    fn = op.function
    if c.out.kind == "complex":
        av, bv = a._wide(), b._wide()
        ml = c.out.name not in _NATIVE
        got = np.where(_complex_pick(larger, propagates, av, bv, ml), av, bv)
        model = (f"ml_dtypes' ufuncs::{op.name.capitalize()}" if ml else f"NumPy's C{op.name}") + \
            " (lexicographic order)"
        return _shaped(_defined(got, c.out, op.name, model), c.shape)
    if c.out.kind != "float":
        return _shaped(fn(a, b, dtype=c.out), c.shape)
    ref = fn(a, b, dtype=c.out)
    av, bv = a._wide(), b._wide()
    first = _tie_first(c.out, propagates)
    picks = [first] if first is not None else [True, False]
    cands = [np.where(_pick(larger, propagates, av, bv, f), av, bv) for f in picks]
    model = {True: "the first operand on ties", False: "the second operand on ties",
             None: "either operand on ties (by position)"}[first]
    res = Result(ref.rounded, [cands], op=op.name, models=(model,), details=ref.details)
    return _shaped(res, c.shape)


# ------------------------------------------------------------------------------ clip
def _bound(v, fmt_kind_iu: bool, info, lower: bool):
    """``np.clip``'s Python-int bound of an integer array beyond the dtype's range: None
    (``_methods._clip``)."""
    if fmt_kind_iu and type(v) is int:
        if lower and v <= info[0] or not lower and v >= info[1]:
            return None
    return v


@MODELS
def _clip(op, x, min=None, max=None):  # noqa: A002 - np.clip's names
    """The reference for ``{call}(x, min, max)``.

    ``_methods._clip`` first: for a numpy integer array a Python-int bound at or past the
    dtype's range is dropped; ``clip(x, None, max)`` is ``np.minimum(x, max)`` and
    ``clip(x, min)`` is ``np.maximum(x, min)`` (see ``minimum``, whose tie rules
    apply; the record's ``upper`` and ``lower`` name
    those ops). Otherwise the ``clip`` ufunc (``clip.cpp``), in the loop its promotion finds
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
    if lo is None or hi is None:
        from . import numpy as equivalents

        if lo is None:
            return getattr(equivalents, op["upper"])(x, hi)
        return getattr(equivalents, op["lower"])(x, lo)
    c = _call(op.promotion, x, lo, hi, labels=("x", "min", "max"))
    v, L, H = (c.read(i)._wide() for i in range(3))
    fmt = c.out
    if fmt.kind == "complex":
        got = _clip_pick(_clip_pick(v, L, True), H, False)
        return _shaped(_defined(got, fmt, op.name, "clip.cpp's complex _NPY_MIN(_NPY_MAX(x, "
                                "min), max): lexicographic, ties give the bound"), c.shape)
    ref = op.function(c.read(0), c.read(1), c.read(2), dtype=fmt)
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


@MODELS
def _comparison(op, x, y):
    """The reference for ``{call}(x, y)``: both operands converted into the dtype of the
    loop NumPy picks (their promotion under NEP 50: an int64 array beside a float32 array is
    compared in float64, a float32 array beside the Python int 16777217 in float32, a bfloat16
    array beside a Python float in float32), then compared exactly; integers (and Python ints)
    compare exactly whatever their types. NaN is unequal to everything; complex numbers are
    equal when both parts are, and ordered lexicographically (NumPy's ``CLT`` ...: the real
    parts decide, where either imaginary part is NaN only equal real parts can, by the
    imaginary parts)."""
    short = op.promotion
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
        return _shaped(_defined(got, BOOL, op.name, "exact (integers)"), shape)
    c = _call(short, x, y)
    c.loop = _policy(c.ops, _COMMON_LOOP)
    a, b = c.read(0), c.read(1)
    if c.loop.kind == "complex":
        av, bv = a._wide(), b._wide()
        got = _lex(short, av.real, av.imag, bv.real, bv.imag)
        return _shaped(_defined(got, BOOL, op.name, "lexicographic (NumPy's C" + short.upper()
                                + ")"), c.shape)
    return _shaped(op.function(a, b), c.shape)
