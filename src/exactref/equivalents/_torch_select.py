"""PyTorch equivalents of the selections and comparisons: what torch 2.13's CPU kernels
compute for ``abs``, ``negative``, ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``clamp`` and
``eq`` ... ``ge`` (re-exported by :mod:`exactref.equivalents.torch`).

Each equivalent is built from the op's record by the family builder
(:mod:`exactref.equivalents._family`), as numpy's and jax's are: the record's torch counterpart
names its model (``Counterpart("torch.maximum", data={"model": "extremum"})``) and the other
keys of ``data`` are the model's parameters; the models are registered in :data:`MODELS` by
name, and each takes the :class:`~exactref.equivalents._family.Op` first (its record's exact
function ``op.function``, its promotion op ``op.promotion``, torch's call ``op.call``, whose
last name is the one torch's errors use: ``torch.neg`` is ``neg``).

**Comparisons** (``equal``, ``not_equal``, ``less``, ``less_equal``, ``greater``,
``greater_equal``: one equivalent per record of the comparison kernel, ``torch.eq`` ...
``torch.ge``): both operands are promoted to their common dtype and cast into it first
(PyTorch's TensorIterator), then compared exactly: int64 ``16777217 == float32 16777216.0`` is
True (both become float32), bfloat16 ``0.1 == 0.1`` is True (the Python scalar is rounded to
bfloat16), uint8 ``0 == 256`` is True (256 wraps), uint8 ``200 < -1`` is True and ``200 > -1``
False (-1 becomes 255). The float8 formats compare with themselves for ``eq`` and ``ne``;
the ordering comparisons raise for complex, the float8 formats and uint16/32/64.

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> a = torch.tensor([200], dtype=torch.uint8)
>>> ert.less(a, -1).rounded.tolist(), (a < -1).tolist()
([True], [True])
>>> ert.maximum.op.data["model"], ert.negative.op.call
('extremum', 'torch.neg')
"""

from __future__ import annotations

import math

import numpy as np

from .._array import Array
from .._formats import FORMATS
from . import _family
from ._common import F32, operand, python_scalar
from ._torch_call import (
    _NE,
    _array,
    _Call,
    _call,
    _const,
    _faithful,
    _form,
    _into,
    _paths,
    _py,
    _quiet,
    _real,
    _scalar_to,
    _shaped,
)
from ._torch_records import TORCH

#: torch's models of the selections and comparisons, by the names the records' torch
#: counterparts give (``data["model"]``)
MODELS = _family.Models(TORCH)


def _name(op) -> str:
    """The name torch's errors use for the op: its call's last name (``torch.neg``: ``neg``)."""
    return op.call.rsplit(".", 1)[-1]




# ============================================================================ selections
@MODELS
@_quiet
def _modulus(op, x, *, rounding=_NE, overflow=None):
    """The reference for ``{call}(x)`` on the CPU.

    Real dtypes: a sign-bit clear (``abs(-0)`` is ``+0``; integers wrap: ``abs(INT_MIN)`` is
    ``INT_MIN``); bool, uint16/32/64 and float8_e8m0fnu raise NotImplementedError. In
    float8_e4m3fn and float8_e5m2 the vectorized loop (64 elements a step) keeps the sign of a
    zero, ``abs(-0.)`` is ``-0.`` there, while the scalar loop (tails, strided and short
    tensors) clears it; either may meet an element (the fnuz formats have no -0). Complex: the
    modulus in the component dtype, by
    Sleef's ``hypot`` (``u05``: within 0.5001 units in the last place) in the vector loop and
    ``std::abs`` (glibc's ``hypot``) in the scalar one, so within one unit in the last place
    (faithful); complex32 in float32 (``hypotf``), then rounded to float16.
    """
    c = _call(_name(op), op.promotion, (x,), ("x",))
    a = c.read(0)
    if c.common.kind != "complex":
        ref = op.function(a, dtype=c.out, overflow=overflow)
        if c.out.name.startswith("float8") and c.out.component.has_negzero:
            v = _real(a)
            kept = np.where(v == 0, v, _real(ref.rounded))
            return _shaped(_paths(ref, {"scalar loop: the sign cleared": ref.rounded,
                                        "vector loop: a zero keeps its sign": kept}, c.out),
                           c.shape)
        return _shaped(ref, c.shape)
    if c.out.name == "float16":  # complex32: hypotf, then stored
        r32 = _faithful(op.function, _array(a._wide(), FORMATS["complex64"]), dtype=F32)
        lo, hi = (_into(Array(v.astype(np.float32), F32), c.out) for v in (
            r32._candidates[0][1], r32._candidates[0][2]))
        ref = op.function(a, dtype=c.out)
        return _shaped(_form(ref, lo, hi, fmt=c.out, model="hypotf (faithful), rounded "
                                                            "into float16"), c.shape)
    return _shaped(_faithful(op.function, a, dtype=c.out), c.shape)


@MODELS
@_quiet
def _negation(op, x, *, rounding=_NE, overflow=None):
    """The reference for ``{call}(x)`` on the CPU: a sign flip for real dtypes (``-(+0)`` is
    ``-0``, the sign of NaN flips), integers wrap (``neg(INT_MIN)`` is ``INT_MIN``, unsigned
    values wrap); bool raises (PyTorch: "Negation, the `-` operator, on a bool tensor is not
    supported"), the float8 formats and uint16/32/64 have no CPU kernel. complex64 and
    complex128: the scalar loop flips both signs, the vector loop computes ``0 - x``
    (``Vectorized<c10::complex<T>>::neg``), so a zero part becomes ``+0`` there
    (``neg(0-0j)`` is ``0+0j``, mathematically ``-0+0j``); either path may meet an element."""
    c = _call(_name(op), op.promotion, (x,), ("x",))
    a = c.read(0)
    ref = op.function(a, dtype=c.out, overflow=overflow)
    if c.out.name not in ("complex64", "complex128"):
        return _shaped(ref, c.shape)
    w = a._wide()
    with np.errstate(invalid="ignore"):
        zero_minus = np.empty(w.shape, np.complex128)
        zero_minus.real = 0.0 - w.real
        zero_minus.imag = 0.0 - w.imag
    return _shaped(_paths(ref, {"scalar loop: -x": ref.rounded,
                                "vector loop: 0 - x (zero parts become +0)": zero_minus},
                          c.out), c.shape)


def _ties(c: _Call, ref, first: np.ndarray, second: np.ndarray, names):
    """The Result of a selection whose kernels differ only in which zero they return on a tie
    of ``+0`` and ``-0``: candidates ``first`` and ``second`` (the values each path returns),
    equal to the reference except at such ties (and NaN)."""
    if c.out.kind != "float":
        return _shaped(ref, c.shape)
    forms = {names[0]: first, names[1]: second}
    return _shaped(_paths(ref, forms, c.out), c.shape)


def _select(op, x, y, overflow, *, maxnum: bool):
    """``maximum`` ... ``fmin`` (the record's exact function ``op.function``); ``maxnum``:
    glibc's fmax/fmin, IEEE 754-2008's maxNum."""
    name = _name(op)
    c = _call(name, op.promotion, (x, y), ("x", "y"), tensors=("x", "y"))
    a, b = c.read(0), c.read(1)
    ref = op.function(a, b, dtype=c.out, overflow=overflow)
    if c.out.kind != "float":
        return _shaped(ref, c.shape)
    av, bv, rv = _real(a), _real(b), _real(ref.rounded)
    if maxnum and c.out.name != "float16":
        # glibc's fmax/fmin (IEEE 754-2008 maxNum): a signaling NaN operand gives NaN; float16
        # is converted to float32 first, which quiets it
        rv = np.where(_signaling(a) | _signaling(b), np.nan, rv)
    with np.errstate(invalid="ignore"):
        tie = av == bv
    return _ties(c, ref, np.where(tie, av, rv), np.where(tie, bv, rv),
                 (f"{name}: a tie of +0 and -0 returns x", f"{name}: a tie returns y"))


def _signaling(arr: Array) -> np.ndarray:
    """Where a float Array holds a signaling NaN (its quiet bit clear)."""
    comp = arr.dtype.component
    if comp.kind != "float" or not comp.has_nan or comp.bits not in (16, 32, 64):
        return np.zeros(arr.shape, bool)
    bits = arr.numpy().view({16: np.uint16, 32: np.uint32, 64: np.uint64}[comp.bits])
    mant = comp.precision - 1
    one = bits.dtype.type(1)
    frac = bits & ((one << bits.dtype.type(mant)) - one)
    quiet = bits & (one << bits.dtype.type(mant - 1))
    return np.isnan(_real(arr)) & (frac != 0) & (quiet == 0)


@MODELS
@_quiet
def _extremum(op, x, y, *, rounding=_NE, overflow=None):
    """The reference for ``{call}(x, y)`` on the CPU (``maximum_kernel``, ``minimum_kernel``):
    the larger (``torch.maximum``) or smaller (``torch.minimum``), NaN propagating (the vector
    loop's NaN has the sign bit set, the scalar loop's not). On a tie of ``+0`` and ``-0`` the
    vector loop (``_mm256_max_ps``, ``_mm256_min_ps``) returns ``y`` and the scalar loop
    (``std::max``, ``std::min``) returns ``x``; which loop an element meets depends on the
    length, the strides and the thread count, so either zero is allowed there (IEEE 754-2019's
    maximum and minimum, and ``er.maximum`` and ``er.minimum``, return ``+0`` and ``-0``).
    Python scalars raise TypeError, complex raises."""
    return _select(op, x, y, overflow, maxnum=False)


@MODELS
@_quiet
def _maxnum(op, x, y, *, rounding=_NE, overflow=None):
    """The reference for ``{call}(x, y)`` on the CPU (``fmax_kernel``, ``fmin_kernel``:
    ``std::fmax`` or ``std::fmin`` in a scalar loop; integers take ``maximum`` or
    ``minimum``): a quiet NaN operand is ignored (both NaN: NaN). glibc's ``fmax`` and
    ``fmin`` follow IEEE 754-2008's maxNum and minNum, so a *signaling* NaN operand gives NaN
    (float32, float64, bfloat16; float16 is converted to float32 first, which quiets it):
    ``fmax(1., sNaN)`` is NaN, mathematically 1. On a ``+0``/``-0`` tie the C library decides
    (measured with this machine's glibc for fmax: ``x`` for float32, float64 and float16,
    ``y`` for bfloat16), so either zero is allowed there."""
    return _select(op, x, y, overflow, maxnum=True)


@MODELS
@_quiet
def _clamp(op, x, min=None, max=None, *, rounding=_NE, overflow=None):  # noqa: A002
    """The reference for ``{call}(x, min, max)`` on the CPU (``TensorCompareKernel.cpp``).

    Scalar bounds (``clamp_scalar_kernel_impl``): the bounds are converted to the result dtype
    (``Scalar.to<T>()``: through float32 for float16 and bfloat16, an out-of-range value
    raises); ``std::min(std::max(x, min), max)`` and its vector form
    ``_mm256_min_ps(max, _mm256_max_ps(min, x))`` both return ``x`` on a tie (``clamp(-0.,
    min=0.)`` is ``-0.``, where ``er.clamp`` gives ``+0``); ``min > max`` gives ``max``; a NaN
    bound makes the whole result NaN.

    Tensor bounds (``clamp_kernel_impl``; one bound: ``clamp_min``/``clamp_max``, the
    ``maximum``/``minimum`` kernels): all three promote together and are cast; the scalar loop
    returns NaN where a bound is NaN, else ``std::min(std::max(x, min), max)`` (a tie returns
    ``x``); the vector loop ``minimum(maximum(x, min), max)`` returns the bound on a tie (and
    NaN where any is NaN). Either zero is allowed at a ``+0``/``-0`` tie.

    Both bounds None raises (PyTorch: "At least one of 'min' or 'max' must not be None"), and
    so does a scalar bound beside a tensor one (PyTorch's TypeError); complex and bool raise.
    """
    if min is None and max is None:
        raise ValueError(f"{op.call}: At least one of 'min' or 'max' must not be None "
                         "(PyTorch's error)")
    bounds = [operand(v, label) for v, label in ((min, "min"), (max, "max")) if v is not None]
    scalars = [b.is_scalar for b in bounds]
    if any(scalars) and not all(scalars):
        raise TypeError(f"{_name(op)}() received an invalid combination of arguments: a Python "
                        "scalar bound beside a tensor one (PyTorch's error); make both tensors "
                        "or both scalars")
    if all(scalars):
        return _clamp_scalar(op, x, min, max, overflow)
    return _clamp_tensor(op, x, min, max, overflow)


#: the kernel check of a clamp whose scalar bound is NaN: ``clamp_out`` fills the result with
#: NaN before any kernel runs, so the check is one every dtype passes (``eq``'s)
_FILLED = "eq"


def _clamp_scalar(op, x, lo, hi, overflow):
    # a NaN bound fills the result with NaN before any kernel runs (``clamp_out``), so no
    # kernel is needed then (float8 tensors too)
    nan = any(isinstance(v, float) and math.isnan(v) for v in (python_scalar(lo),
                                                               python_scalar(hi)))
    c = _call(_name(op), op.promotion, (x, lo, hi), ("x", "min", "max"),
              kernel=_FILLED if nan else None)
    out = c.out
    a = c.read(0)
    conv = [None if v is None else _scalar_to(v, out, name) for v, name in ((lo, "min"),
                                                                           (hi, "max"))]
    # Note: the bounds go to er.clamp as arrays of the result dtype (they hold them): an int
    # scalar bound beside an integer tensor makes er.clamp raise TypeError (a core bug)
    ref = op.function(a, *[None if v is None else _const(np.full(a.size, _py(v)), out)
                           for v in conv], dtype=out, overflow=overflow)
    if out.kind != "float":
        return _shaped(ref, c.shape)
    v = _real(a)
    nan_bound = False
    with np.errstate(invalid="ignore"):
        if conv[0] is not None:
            b = float(conv[0])
            nan_bound |= math.isnan(b)
            v = np.where(v < b, b, v)
        if conv[1] is not None:
            b = float(conv[1])
            nan_bound |= math.isnan(b)
            v = np.where(v > b, b, v)
    if nan_bound:
        v = np.full_like(v, np.nan)
    return _shaped(_form(ref, v, fmt=out, model="std::min(std::max(x, min), max): a tie "
                                                "returns x; a NaN bound gives NaN"), c.shape)


def _clamp_tensor(op, x, lo, hi, overflow):
    # one tensor bound: clamp_min / clamp_max, which run the kernels the record names
    # (``data["lower"]``, ``data["upper"]``: the maximum / minimum kernels)
    one = op["lower"] if hi is None else op["upper"] if lo is None else None
    c = _call(_name(op), op.promotion, (x, lo, hi), ("x", "min", "max"),
              tensors=("x", "min", "max"), kernel=one)
    out = c.out
    idx = [i for i in (1, 2) if c.ops[i] is not None]
    arrays = {i: c.read(i) for i in idx}
    a = c.read(0)
    ref = op.function(a, arrays.get(1), arrays.get(2), dtype=out, overflow=overflow)
    if out.kind != "float":
        return _shaped(ref, c.shape)
    v = _real(a)
    lov = _real(arrays[1]) if 1 in arrays else None
    hiv = _real(arrays[2]) if 2 in arrays else None
    with np.errstate(invalid="ignore"):
        # scalar loop: NaN bound -> NaN; std::max(x, min) = x < min ? min : x; std::min
        scalar = v.copy()
        if lov is not None:
            scalar = np.where(scalar < lov, lov, scalar)
        if hiv is not None:
            scalar = np.where(hiv < scalar, hiv, scalar)
        bad = np.zeros(v.shape, bool)
        for b in (lov, hiv):
            if b is not None:
                bad |= np.isnan(b)
        if len(idx) == 2:
            scalar = np.where(bad, np.nan, scalar)
        else:  # clamp_min / clamp_max run maximum / minimum: NaN propagates
            scalar = np.where(bad | np.isnan(v), np.nan, scalar)
        # vector loop: maximum then minimum, each returning its second operand on a tie
        vector = v.copy()
        if lov is not None:
            vector = np.where(vector > lov, vector, lov)
            vector = np.where(np.isnan(v) | np.isnan(lov), np.nan, vector)
        if hiv is not None:
            nan = np.isnan(vector) | np.isnan(hiv)
            vector = np.where(vector < hiv, vector, hiv)
            vector = np.where(nan, np.nan, vector)
    return _shaped(_paths(ref, {"scalar loop: std::min(std::max(x, min), max), a tie returns x":
                                scalar, "vector loop: minimum(maximum(x, min), max), a tie "
                                        "returns the bound": vector}, out), c.shape)


# =========================================================================== comparisons
@MODELS
@_quiet
def _comparison(op, x, y):
    """The reference for ``{call}(x, y)`` on the CPU: both operands promoted to their common
    dtype and cast into it first (PyTorch's TensorIterator), then compared exactly; see the
    comparisons in :mod:`exactref.equivalents._torch_select`."""
    c = _call(_name(op), op.promotion, (x, y), ("x", "y"))
    return _shaped(op.function(c.read(0), c.read(1)), c.shape)


#: One equivalent per record whose torch counterpart names one of these models (the
#: selections and comparisons), made by the family builder.
__all__ = [*_family.build(_family.Library(TORCH, MODELS), globals())]
