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

What is jax-wide lives in :mod:`exactref.equivalents._jax_xla` (operands, promotion, converts,
flushing, XLA's float kernel) and :mod:`exactref.equivalents._jax_complex` (its complex
kernels); this module holds the models, and each op's equivalent is built from its record
(:mod:`exactref.equivalents._family`): the record's jax counterpart names its model and the
model's parameters in ``data``.

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
import operator

import numpy as np

from .. import _versions
from .._array import Array
from .._exact import Rounding
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import Result
from ..arithmetic import selection
from . import _family
from ._common import Operand
from ._jax_complex import (
    _complex_product,
    _complex_quotient,
    _complex_sqrt,
    _lex,
    _pick,
    _reciprocal_products,
)
from ._jax_xla import (
    _CANONICAL_32,
    F32,
    FLUSHED,
    _alternatives,
    _carriers,
    _each,
    _er_op,
    _exact,
    _flush_kw,
    _from_parts,
    _ints,
    _Kernel,
    _kernels,
    _operands,
    _parts,
    _reads_x64,
    _resolve,
    _select_mask,
    _shape,
    _to,
    _Typed,
    _with_candidates,
    _wrapped,
    _xla_convert,
    convert_scalar,
    flushes,
    result_type,
    x64_enabled,
)

# what this module models was measured on these versions (exactref._versions; the
# library itself is imported only where an equivalent needs it)
_versions.check("jax", "jax", stacklevel=2)
_versions.check("jax", "jaxlib", stacklevel=2)

_magnitude = builtins.abs  # this module defines abs, the op
_models = _family.Models("jax")
#: What a rule of the division family gives for a zero divisor (the record's ``zero_divisor``).
_ONE, _ONE_UNLESS_BOOL = "one", "one_unless_bool"
#: The division family's rules (the record's ``rule``): floor division, Python's modulo,
#: C's truncated remainder.
_FLOOR, _MODULO = "floor", "modulo"


def _binary(op, x, y, x64):
    """A binary op's operands as jax takes them, the result's shape, its dtype (the record's
    promotion) and each operand converted into it (:func:`_to`: the array and its DAZ)."""
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    out = _resolve((X, Y), op.promotion, x64).result
    return X, Y, shape, out, [_to(X, out, x64), _to(Y, out, x64)]


def _values(conv, shape):
    """The converted operands' exact values (integers), broadcast to ``shape``."""
    return [np.broadcast_to(np.asarray(c[0]._wide()), shape) for c in conv]


# ------------------------------------------------------------------------ sums, products
@_models
@_reads_x64
def _rounded(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)`` on the CPU: the exact sum (difference) rounded once,
    covering flushed subnormal operands and results (float32, bfloat16, float64 and their
    complex types); bool ``+`` is a logical or, bool operands of a subtraction raise, as in
    jax.

    >>> import numpy as np
    >>> r = add(np.array([2.0**-140], np.float32), np.float32(0))
    >>> r.covers(np.array([0.0], np.float32)).all(), r.covers(np.array([2.0**-140], np.float32)).all()
    (True, True)
    """
    _, _, _, out, conv = _binary(op, x, y, x64)
    return _each(lambda a, b: _er_op(op.function, (a, b), out, op=op.name), _alternatives(conv))


@_models
@_reads_x64
def _product(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)``: the exact product rounded once (flushing
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
    out = _resolve((X, Y), op.promotion, x64).result
    for b, other in ((X, Y), (Y, X)):
        mask = _select_mask(b, out, shape)
        if mask is not None:
            return _select_product(op, mask, other, out, shape, x64)
    conv = [_to(X, out, x64), _to(Y, out, x64)]
    if out.kind == "complex":
        return _each(lambda a, c: _complex_product(a, c, out, op=op.name), _alternatives(conv))
    return _each(lambda a, c: _er_op(op.function, (a, c), out, op=op.name), _alternatives(conv))


def _select_product(op, mask, other: Operand, out: Format, shape, x64):
    oc, _ = _to(other, out, x64)
    parts = [np.where(mask, p, 0.0) for p in _carriers([oc], shape)[0]]
    return _exact(_from_parts(parts, out), out, op=op.name,
                  models=("XLA's select: where(b, y, 0)",))


# ----------------------------------------------------------------------------- quotients
@_models
@_reads_x64
def _quotient(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)``: the exact quotient rounded once (integers give
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
    X, Y, shape, out, conv = _binary(op, x, y, x64)
    recip = Y.shape != shape  # XLA: a / broadcast(b) => a * broadcast(1 / b)
    mask = _select_mask(X, out, shape)

    def go(a, b):
        if out.kind == "complex":
            res = _complex_quotient(a, b, out, op=op.name)
        else:
            res = _er_op(op.function, (a, b), out, op=op.name)
        if recip:
            res = _with_candidates(res, _reciprocal_products(a, b, out, shape, mask),
                                   ("x * (1 / y), the reciprocal rounded first",))
        return res

    return _each(go, _alternatives(conv))


@_models
@_reads_x64
def _inverse(op, x, *, x64: bool | None = None):
    """The reference for ``{call}(x)`` (``lax.integer_pow(x, -1)``: ``1 / x`` rounded
    once; integers give float32 with x64 off); a complex operand is divided into ``1 + 0j`` by
    XLA's complex division."""
    (X,) = _operands((x,), ("x",), x64)
    out = _resolve((X,), op.promotion, x64).result
    conv = [_to(X, out, x64)]
    if out.kind == "complex":
        def one(a):
            ones = _from_parts([np.ones(a.shape), np.zeros(a.shape)], out)
            return _complex_quotient(ones, a, out, op=op.name)
        return _each(one, _alternatives(conv))
    return _each(lambda a: _er_op(op.function, (a,), out, op=op.name), _alternatives(conv))


@_models
@_reads_x64
def _division(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)``, JAX's own algorithm of its division family, every
    step rounded in the dtype (bfloat16 and float16 too) and flushed where XLA flushes (the
    record's ``rule``):

    * ``floor_divide``: ``mod = fmod(x, y)``, ``div = (x - mod) / y`` (``x / y`` where
      ``y == 0``), minus 1 where ``mod`` and ``y`` differ in sign, then ``lax.round`` (halves
      away from zero). So ``(-0.) // 1 = +0.``, ``(-a) // (-b) = -0.`` for ``0 < a/b < 1``, and
      quotients past ``2**(p-2)`` may differ from ``floor(x / y)``. Integers: ``lax.div``
      corrected toward -inf; ``x // 0`` is -1 for ``x == 0`` and -2 otherwise (unsigned: the
      largest value), ``INT_MIN // -1 = INT_MIN``. bool operands divide as int32.
    * ``remainder``: ``m = fmod(x, y)``, plus ``y`` where ``m`` is nonzero and its sign
      differs from ``y``'s, rounded once; a zero result keeps the dividend's sign
      (``remainder(-0., 1.) = -0.``), and the sign tests read subnormals as zeros where XLA
      flushes (``remainder(-2**-140, 1.)`` is ``-2**-140`` in float32, not ``1.``). Integers:
      ``x % 0 = 0``, ``INT_MIN % -1 = 0``.
    * ``fmod`` (``lax.rem``): exact for floats, the dividend's sign; XLA reads a subnormal
      divisor as zero (NaN) but keeps a subnormal dividend and result. Integers:
      ``fmod(x, 0) = 0`` (the divisor 0 is replaced by 1), ``INT_MIN % -1 = 0``.

    >>> import numpy as np
    >>> floor_divide(np.array([-0.0, -1.0], np.float32), np.array([1.0, -3.0], np.float32)).rounded.tolist()
    [0.0, -0.0]
    >>> floor_divide(np.array([5, 0], np.int32), 0).rounded.tolist()
    [-2, -1]
    >>> remainder(np.array([-0.0, -2.0], np.float32), 1.0).rounded.tolist()
    [-0.0, -0.0]
    >>> fmod(np.array([5, -5], np.int32), np.array([0, 3], np.int32)).rounded.tolist()
    [0, -2]
    """
    X, Y, shape, out, conv = _binary(op, x, y, x64)
    rule = op["rule"]
    if out.is_integer:
        a, b = _values(conv, shape)
        # jnp.fmod replaces a zero divisor by 1 only when the operands' own result type is an
        # integer: two bools divide as int32 with lax.rem's x % 0 = x
        both_bool = all(o.scalar.__class__ is bool if o.is_scalar else o.array.dtype.kind ==
                        "bool" for o in (X, Y))
        zero = op.get("zero_divisor")
        zero_to_one = zero == _ONE or (zero == _ONE_UNLESS_BOOL and not both_bool)
        return _exact(_int_division(op.name, rule, a, b, out, zero_to_one), out, op=op.name,
                      models=("XLA's integer division",))
    recip = op.get("broadcast_reciprocal", False) and Y.shape != shape

    def go(a, b):
        (xa,), (yb,) = _carriers([a, b], shape)
        values = []
        for k in _kernels(out):
            if rule == _FLOOR:
                values.append(_jax_floor_divide(k, xa, yb))
                if recip:  # XLA: (x - mod) / broadcast(y) => (x - mod) * (1 / y)
                    for w in [k] + ([_Kernel(F32, k.daz)] if k.fmt.bits < 32 else []):
                        values.append(_jax_floor_divide(k, xa, yb, w))
            elif rule == _MODULO:
                values.append(_jax_remainder(k, xa, yb))
            else:
                values.append(k.rem(xa, yb))
        arrays = [_from_parts([v], out) for v in values]
        models = ("jax's algorithm",) + (("subnormals flushed",) if flushes(out) else ()) + (
            ("x * (1 / y)",) if recip else ())
        return _exact(arrays[0], out, op=op.name, models=models, alternatives=arrays[1:])

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


def _int_division(name, rule, a, b, out: Format, zero_to_one: bool):
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
        if rule == _FLOOR:
            d = div(p, q)
            if signed and sign(p) != sign(q) and rem(p, q) != 0:
                d -= 1
            res.append(d)
        elif rule == _MODULO:
            q = q if q != 0 or not zero_to_one else 1
            m = rem(p, q)
            res.append(m + q if (m < 0) != (q < 0) and m != 0 else m)
        else:
            res.append(rem(p, q if q != 0 or not zero_to_one else 1))
    if out.kind == "bool":
        raise TypeError(f"{name} has no bool result in jax (bool operands divide as int32)")
    return Array(np.array(res, dtype=object).astype(out.np_dtype).reshape(np.shape(a)), out)


# --------------------------------------------------------------------------------- roots
@_models
@_reads_x64
def _root(op, x, *, x64: bool | None = None):
    """The reference for ``{call}(x)``: the square root rounded once (integers give float32
    with x64 off), ``sqrt(subnormal) = 0`` covered where XLA flushes; a complex operand also
    covers XLA's ``complex_sqrt`` (within 2 ulp of each part's exact value)."""
    (X,) = _operands((x,), ("x",), x64)
    out = _resolve((X,), op.promotion, x64).result
    conv = [_to(X, out, x64)]
    if out.kind == "complex":
        return _each(lambda a: _complex_sqrt(a, out, op=op.name), _alternatives(conv))
    return _each(lambda a: _er_op(op.function, (a,), out, op=op.name), _alternatives(conv))


@_models
@_reads_x64
def _inverse_root(op, x, *, x64: bool | None = None):
    """The reference for ``{call}(x)``: XLA's float32 and float64 kernels are not
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
        raise TypeError(f"{op.name} does not accept dtype {name}. Accepted dtypes are subtypes "
                        f"of floating ({what}); convert to a float dtype first")
    flush = _flush_kw(fmt)
    fn = op.function
    ne = fn(X.array, dtype=fmt, flush=flush)
    down = fn(X.array, dtype=fmt, flush=flush, rounding=Rounding.TOWARD_NEGATIVE)
    up = fn(X.array, dtype=fmt, flush=flush, rounding=Rounding.TOWARD_POSITIVE)
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
    res = Result(ne.rounded, [list(ne._candidates[0]) + [lo, hi]], op=op.name,
                 models=ne.models + models, details=ne.details)
    res.inputs = ne.inputs
    return res


# ---------------------------------------------------------------------- abs, negative
@_models
@_reads_x64
def _modulus(op, x, *, x64: bool | None = None):
    """The reference for ``{call}(x)``: bool and unsigned operands come back unchanged, signed
    integers wrap (``abs(INT_MIN) = INT_MIN``), floats lose their sign bit (no flushing: a bit
    operation); a complex operand gives XLA's ``max * sqrt(1 + (min / max)**2)`` with a fused
    multiply-add, NaN wherever a part is NaN (``abs(inf + nan j)`` is NaN in jax), its
    reference the exact modulus rounded once.

    >>> import numpy as np
    >>> abs(np.array([-128, 3], np.int8)).rounded.tolist()
    [-128, 3]
    """
    (X,) = _operands((x,), ("x",), x64)
    fmt = _resolve((X,), op.promotion, x64).result
    a = X.array if not X.is_scalar else _to(X, fmt, x64)[0]
    src = a.dtype
    if src.kind in ("bool", "uint"):
        return _exact(a, src, op=op.name, models=("identity",))
    if src.kind == "int":
        return _exact(_wrapped([v if v >= 0 else -v for v in _ints(a)], src, a.shape), src,
                      op=op.name, models=("two's complement",))
    if src.kind == "float":
        return _exact(_from_parts([np.abs(_parts(a)[0])], src), src, op=op.name)
    ref = selection.abs(a)
    ref.op = op.name
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
    res = _exact(ref.rounded, fmt, op=op.name)
    return _with_candidates(res, extra, ("XLA's complex abs, step by step",))


@_models
@_reads_x64
def _negation(op, x, *, x64: bool | None = None):
    """The reference for ``{call}(x)``: the sign flipped exactly (no flushing: a bit
    operation), integers wrapping; bool raises, as in jax."""
    (X,) = _operands((x,), ("x",), x64)
    out = _resolve((X,), op.promotion, x64).result
    a = X.array if not X.is_scalar else _to(X, out, x64)[0]
    if out.is_integer:
        return _exact(_wrapped([-v for v in _ints(a)], out, a.shape), out, op=op.name,
                      models=("two's complement",))
    return _exact(_from_parts([-p for p in _parts(a)], out), out, op=op.name)


# ---------------------------------------------------------------------------- selections
@_models
@_reads_x64
def _extremum(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)``: IEEE 754-2019's maximum or minimum (the record's
    ``larger``; NaN propagates, ``max(-0., +0.) = +0.`` in either order), of the operands read
    with DAZ where XLA flushes (``maximum(2**-140, 0.)`` may be ``+0.``); complex operands are
    ordered lexicographically, as jax orders them."""
    larger = op["larger"]
    X, Y, shape, out, conv = _binary(op, x, y, x64)
    if out.is_integer:
        a, b = _values(conv, shape)
        pick = (a >= b) if larger else (a <= b)
        return _exact(Array(np.where(pick, a, b).astype(out.np_dtype), out), out, op=op.name)

    def go(a, b):
        xs, ys = _carriers([a, b], shape)
        if out.kind == "complex":  # jax: select(lexicographic x > y (x < y), x, y)
            values = [_pick(_lex(k, operator.gt if larger else operator.lt, xs, ys), xs, ys,
                            out) for k in _kernels(out)]
        else:
            values = [_from_parts([k.select(xs[0], ys[0], larger)], out)
                      for k in _kernels(out)]
        return _exact(values[0], out, op=op.name, models=("IEEE 754-2019",),
                      alternatives=values[1:])

    return _each(go, _alternatives(conv))


@_models
@_reads_x64
def _nan_ignoring(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)``: ``where(x > y | isnan(y), x, y)`` (``x < y`` where
    the record's ``larger`` is False), so a tie (``fmax(+0., -0.)``) gives the second operand
    and a NaN is ignored; the comparison reads subnormals as zeros where XLA flushes, while the
    select returns the operand itself (``fmax(2**-130, 2**-140)`` is ``2**-140`` in float32)
    or, where XLA compiles it into a max instruction (a broadcast operand), the operand as read
    (``fmax(-2**-140, -2) = -0.``).

    >>> import numpy as np
    >>> fmax(np.array([0.0, np.nan], np.float32), np.array([-0.0, 1.0], np.float32)).rounded.tolist()
    [-0.0, 1.0]
    """
    cmp = operator.gt if op["larger"] else operator.lt
    X, Y, shape, out, conv = _binary(op, x, y, x64)
    if out.is_integer:
        a, b = _values(conv, shape)
        return _exact(Array(np.where(cmp(a, b), a, b).astype(out.np_dtype), out), out,
                      op=op.name)

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
        return _exact(values[0], out, op=op.name, models=("where(x ? y | isnan(y), x, y)",),
                      alternatives=values[1:])

    return _each(go, _alternatives(conv))


@_models
@_reads_x64
def _clip(op, x, min=None, max=None, *, x64: bool | None = None):  # noqa: A002 - jnp.clip's names
    """The reference for ``{call}(x, min, max)``: ``minimum(max, maximum(min, x))`` with
    XLA's maximum and minimum (see :func:`maximum`), each step promoted on its own as jnp does
    (``maximum(min, x)`` first); NaN in a bound gives NaN, ``min > max`` gives ``max``."""
    X, LO, HI = _operands((x, min, max), ("x", "min", "max"), x64)
    shape = _shape(X, LO, HI)
    if LO is None and HI is None:
        raise ValueError(f"{op.name} needs min or max (jnp.clip with neither returns x "
                         f"unchanged)")
    cur, fmt = X, None
    steps = []
    for bound, larger in ((LO, True), (HI, False)):
        if bound is None:
            continue
        res = _resolve((bound, cur), op[_STEP[larger]], x64)
        steps.append((bound, larger, res.result))
        cur = Operand.of_array("x", Array(np.zeros(shape, dtype=res.result.np_dtype),
                                          res.result), _Typed(res.result, shape, res.weak))
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
    return _exact(candidates[0], fmt, op=op.name, models=("minimum(max, maximum(min, x))",),
                  alternatives=candidates[1:])


#: The record's keys naming the op of each step of clip, whose promotion the step takes (the
#: lower bound's, a maximum, and the upper bound's, a minimum).
_STEP = {True: "lower", False: "upper"}


# --------------------------------------------------------------------------- comparisons
@_models
@_reads_x64
def _comparison(op, x, y, *, x64: bool | None = None):
    """The reference for ``{call}(x, y)``: both operands converted to their promoted dtype
    first (``int32 16777217`` equals ``float32 16777216.``), then compared exactly, subnormals
    read as zeros where XLA flushes; complex operands are ordered lexicographically, as jax
    orders them."""
    cmp = getattr(operator, op.promotion)  # eq, ne, lt, le, gt, ge
    X, Y = _operands((x, y), ("x", "y"), x64)
    shape = _shape(X, Y)
    c = _resolve((X, Y), op.promotion, x64).compute
    conv = [_to(X, c, x64), _to(Y, c, x64)]
    values = []
    for a, b in _alternatives(conv):
        if c.is_integer:  # one integer format: numpy compares its values exactly
            values.append(cmp(*np.broadcast_arrays(a.numpy(), b.numpy())))
            continue
        xs, ys = _carriers([a, b], shape)
        for k in _kernels(c):
            values.append(_lex(k, cmp, xs, ys) if c.kind == "complex" else
                          k.compare(cmp, xs[0], ys[0]))
    b_fmt = FORMATS["bool"]
    arrays = [Array(np.asarray(v, dtype=bool).reshape(shape), b_fmt) for v in values]
    return _exact(arrays[0], b_fmt, op=op.name, models=("in the promoted dtype",) + (
        ("subnormals read as zeros",) if flushes(c) else ()), alternatives=arrays[1:])


# --------------------------------------------------------------------------------- cast
@_models
@_reads_x64
def _convert(op, x, to, *, x64: bool | None = None):
    """The reference for ``{call}(x, to)`` (``x.astype(to)``) on the CPU:
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
    return _exact(plain, to, op=op.name, models=("XLA's convert",) + (
        ("its DAZ/FTZ",) if flushed is not None else ()), alternatives=(flushed,))


#: One equivalent per record whose jax counterpart names a model (docs/jax_equivalents.md).
_OPS = _family.build(_family.Library("jax", _models), globals())

__all__ = [*_OPS, "result_type", "convert_scalar", "x64_enabled", "FLUSHED", "flushes"]
