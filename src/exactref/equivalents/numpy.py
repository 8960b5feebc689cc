"""NumPy equivalents: references that cover what NumPy 2's ufuncs compute, ml_dtypes' types
included: ``np.add`` and ``np.multiply`` here, and every other op of the registry NumPy has
(``subtract`` ... ``greater_equal``, ``clamp`` for ``np.clip``, ``cast`` for ``astype``) in
:mod:`exactref.equivalents._numpy_ops`, re-exported here under the registry's names.

What NumPy does, measured on numpy 2.4 with ml_dtypes 0.5, 0.6 and 0.7 (another version gives
one :class:`~exactref.UnmeasuredVersionWarning` on import):

* **Result dtype**: the installed NumPy's own (``result_type(..., policy="numpy_installed")``
  calls the ufunc on one-element arrays), so a promotion change in a new NumPy or ml_dtypes
  release is the reference's too; it is NEP 50's with weak Python scalars, and the measured
  ``numpy`` policy gives the same (``tests/promotion`` compares them). Note that with ml_dtypes
  0.5 and 0.6 its types do not take part in NEP 50 (``bfloat16`` plus a Python float is
  float32), and with 0.7 they do (bfloat16).
* **Casts**: the operands are cast to the loop's dtype by NumPy's own casts (``astype``), the
  step before the arithmetic; a Python int that the dtype cannot hold raises OverflowError, as
  NumPy does. Those casts are NumPy's business, not the arithmetic's: an equivalent checks the
  arithmetic on the values the loop reads (and ``cast(x, to=...)`` audits the casts).
* **Arithmetic**: float32, float64 and the integers natively (integers wrap); float16 and every
  ml_dtypes float computed in float32 and rounded into the dtype, which is the correctly rounded
  result for a single + or x (float32 has at least 2p + 2 bits for all of them), with ml_dtypes'
  overflow rules (NaN for float8_e4m3fn, saturation for the float6 and float4 formats); complex
  products by the textbook formula ``(ac - bd) + (ad + bc)i``, a real operand becoming complex
  with an imaginary part +0 first, so ``(inf+0j) * 2.0`` is ``inf+nanj``; complex32 and
  bcomplex32 in complex64. bool add is a logical or, bool multiply a logical and.
* **The other loops** follow their C code step by step where it departs from the mathematical
  answer (``floor_divide`` is ``npy_divmod``, complex division Smith's algorithm, complex
  ``abs`` a SIMD formula, complex ``sqrt`` glibc's, ties of zeros in ``maximum`` and
  ``np.clip`` as each loop breaks them): the Result's reference stays the mathematical answer,
  and ``covers`` accepts what the loop gives.

>>> import numpy as np
>>> import exactref.equivalents.numpy as ern
>>> x = np.array([1.0, 2.0], dtype=np.float16)
>>> ern.add(x, 0.1).covers(np.add(x, 0.1)).all()
True
>>> a = np.array([float.fromhex("0x1.1745ecp+35")], dtype=np.float32)
>>> b = np.array([float.fromhex("0x1.2499p+12")], dtype=np.float32)
>>> r = ern.floor_divide(a, b)
>>> r.rounded.tolist(), np.floor_divide(a, b).tolist(), r.covers(np.floor_divide(a, b)).all()
([8006601.0], [8006600.0], True)
>>> y = np.array([1 + 2**-11 + 2**-40])
>>> c = ern.cast(y, to="float16")  # NumPy's own cast: rounded once
>>> c.rounded.tolist(), y.astype(np.float16).tolist(), c.covers(y.astype(np.float16)).all()
([1.0009765625], [1.0009765625], True)

(ml_dtypes 0.6 converts float64 to bfloat16 through float32, rounding twice: ``1 + 2**-8 +
2**-30`` becomes 1.0; ml_dtypes 0.7 rounds once, to ``1 + 2**-7``; ``cast(y, to="bfloat16")``
covers what the installed one gives.)
"""

from __future__ import annotations

import numpy as np

from .. import _versions
from .._array import Array
from .._exact._rounding import Rounding
from .._formats import Format
from ..arithmetic import basic
from ._common import Operand, broadcast, operand

# the loops' arithmetic below was measured on these versions (exactref._versions)
_versions.check("numpy-equivalents", "numpy", stacklevel=2)
_versions.check("numpy-equivalents", "ml_dtypes", stacklevel=2)

__all__ = ["add", "multiply", "result_type", "cast", "astype", "subtract", "divide", "floor_divide",
           "remainder", "fmod", "reciprocal", "sqrt", "abs", "negative", "maximum", "minimum",
           "fmax", "fmin", "clamp", "equal", "not_equal", "less", "less_equal", "greater",
           "greater_equal", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
           "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "atan2", "pow"]


def _operands(x, y):
    return (operand(x, "x", numpy_scalars_are_python=False),
            operand(y, "y", numpy_scalars_are_python=False))


def result_type(x, y, op: str = "add") -> Format:
    """NumPy's result dtype for ``op`` ("add" or "multiply") of ``x`` and ``y``."""
    X, Y = _operands(x, y)
    return _result_dtype(X, Y, op)


def _result_dtype(X: Operand, Y: Operand, op: str) -> Format:
    from ..promotion import result_type as _rt
    from ._numpy_ops import POLICY

    return _rt(X.promotion, Y.promotion, policy=POLICY, op=op)


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


def add(x, y, *, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """The reference for ``np.add(x, y)``: each element the exact sum of the values NumPy's loop
    reads, rounded once (``overflow=None``: the dtype's own rule; integers wrap)."""
    X, Y = _operands(x, y)
    broadcast(X, Y)
    out = _result_dtype(X, Y, "add")
    return basic.add(_cast(X, out), _cast(Y, out), dtype=out, rounding=rounding,
                     overflow=overflow)


def multiply(x, y, *, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """The reference for ``np.multiply(x, y)``; a complex product's parts are two-term sums
    with their modelled implementations, as in :func:`exactref.multiply`. ml_dtypes' complex32
    and bcomplex32 multiply with C's ``_Complex float`` product, whose Annex G recovery turns
    a NaN+NaNj textbook result with an infinite factor into infinities (see
    :func:`annex_g_recover`)."""
    X, Y = _operands(x, y)
    broadcast(X, Y)
    out = _result_dtype(X, Y, "multiply")
    xc, yc = _cast(X, out), _cast(Y, out)
    ref = basic.multiply(xc, yc, dtype=out, rounding=rounding, overflow=overflow)
    if out.name in ("complex32", "bcomplex32"):
        ref = _with_annex_g(ref, xc, yc, out, rounding, overflow)
    return ref


def annex_g_recover(a, b, c, d):
    """C99 Annex G's recovery of ``(a + bi) * (c + di)`` where the textbook parts
    ``ac - bd`` and ``ad + bc`` are both NaN (``_Cmultf``, as GCC's ``__mulsc3`` computes it in
    float32). Returns ``(mask, re, im)``: where recovery applies, the recovered parts (±inf or
    NaN); float32 arithmetic throughout, as the C library's."""
    f = np.float32
    a, b, c, d = (np.asarray(v, dtype=f).copy() for v in (a, b, c, d))
    with np.errstate(all="ignore"):
        ac, bd, ad, bc = a * c, b * d, a * d, b * c
        x, y = ac - bd, ad + bc
        both = np.isnan(x) & np.isnan(y)
        z_inf = np.isinf(a) | np.isinf(b)
        w_inf = np.isinf(c) | np.isinf(d)

        def box(v, cond):  # an infinity becomes ±1, a finite value ±0
            return np.where(cond, np.copysign(np.where(np.isinf(v), f(1), f(0)), v), v)

        def zero_nan(v, cond):
            return np.where(cond & np.isnan(v), np.copysign(f(0), v), v)

        m1 = both & z_inf
        a, b = box(a, m1), box(b, m1)
        c, d = zero_nan(c, m1), zero_nan(d, m1)
        m2 = both & w_inf
        c, d = box(c, m2), box(d, m2)
        a, b = zero_nan(a, m2), zero_nan(b, m2)
        over = np.isinf(ac) | np.isinf(bd) | np.isinf(ad) | np.isinf(bc)
        m3 = both & ~m1 & ~m2 & over
        a, b, c, d = (zero_nan(v, m3) for v in (a, b, c, d))
        recalc = m1 | m2 | m3
        re = f(np.inf) * (a * c - b * d)
        im = f(np.inf) * (a * d + b * c)
    return recalc, re.astype(np.float64), im.astype(np.float64)


def _with_annex_g(ref, xc: Array, yc: Array, out: Format, rounding, overflow):
    from .._result import Result
    from ._common import convert

    shape = ref.rounded.shape
    xw = np.broadcast_to(xc._wide(), shape)
    yw = np.broadcast_to(yc._wide(), shape)
    mask, re, im = annex_g_recover(xw.real, xw.imag, yw.real, yw.imag)
    if not mask.any():
        return ref
    parts = [re, im]
    cands = [[np.where(mask, parts[i], np.asarray(c, dtype=np.float64)) for c in cand]
             for i, cand in enumerate(ref._candidates)]
    w = ref.rounded._wide()
    pair = np.empty(shape, dtype=np.complex128)
    pair.real = np.where(mask, re, w.real)
    pair.imag = np.where(mask, im, w.imag)
    rounded = convert(pair, out, rounding=rounding, overflow=overflow)
    return Result(rounded, cands, op=ref.op, models=ref.models + ("C Annex G recovery",),
                  details=ref.details)




# the real functions NumPy has (exp ... tanh, arctan2, power): docs/functions.md
from ._numpy_functions import (  # noqa: E402
    acos,
    asin,
    atan,
    atan2,
    cos,
    cosh,
    exp,
    exp2,
    expm1,
    log,
    log1p,
    log2,
    log10,
    pow,  # noqa: A004
    sin,
    sinh,
    tan,
    tanh,
)
from ._numpy_ops import (  # noqa: E402 - the elementwise family, after the helpers it uses
    abs,  # noqa: A004
    astype,
    clamp,
    divide,
    equal,
    floor_divide,
    fmax,
    fmin,
    fmod,
    greater,
    greater_equal,
    less,
    less_equal,
    maximum,
    minimum,
    negative,
    not_equal,
    reciprocal,
    remainder,
    sqrt,
    subtract,
)
