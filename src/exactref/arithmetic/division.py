"""Quotients: ``divide``, ``floor_divide``, ``remainder``, ``fmod``, ``reciprocal``, ``addcdiv``.

Each exact value is a quotient of two sums of products (the engine's quotient kernel decides its
rounding by exact comparisons: ``sign(N - c * D)``), its integer part (floor or toward zero), or,
for ``fmod`` and ``remainder`` of floats, a value the operands' format holds exactly (``fmod``)
plus, where the signs differ, the divisor (one rounding). Integer operands are divided exactly in
Python integers; an integer division by zero raises ZeroDivisionError naming the element, while
float division follows IEEE 754 (signed infinities, NaN for 0/0).

>>> import exactref as er
>>> er.divide(er.asarray([1.0, -7.0], "float32"), 3.0).rounded.tolist()
[0.3333333432674408, -2.3333332538604736]
>>> er.divide([7, -7], [2, 2], rounding_mode="floor").rounded.tolist()
[3, -4]
>>> er.remainder([-1.0, 5.5], [3.0, -2.0]).rounded.tolist()  # the divisor's sign
[2.0, -0.5]
>>> er.fmod([-1.0, 5.5], [3.0, -2.0]).rounded.tolist()  # the dividend's sign
[-1.0, 1.5]
"""

from __future__ import annotations

import numpy as np

from .._exact import ExactPart, integral
from ..ops import Counterpart, Counterparts, Param, names_of
from . import _fast
from ._elementwise import FUSED, Model, OpTypeError, elementwise
from ._formulas import ONE, Part, add_parts, conj, mul_parts, neg, square_sum, times, times_parts
from .basic import _is_one, addc_elementwise

__all__ = [*names_of(__name__), "DIVIDE"]

_MODES = (None, "trunc", "floor")


# ----------------------------------------------------------------------------- helpers
def _check_mode(rounding_mode):
    if rounding_mode not in _MODES:
        raise ValueError(f"rounding_mode={rounding_mode!r}; expected None (true division), "
                         f"'trunc' or 'floor', as torch.div takes")


def _div_promotion(params):
    _check_mode(params.get("rounding_mode"))
    return "div" if params.get("rounding_mode") is None else "floor_divide"


def _zero_division(ctx, y, what: str):
    """Raise for the first integer divisor that is zero."""
    zero = np.flatnonzero(y == 0)
    if zero.size:
        where = ctx.index(int(zero[0]))
        raise ZeroDivisionError(
            f"{ctx.name}: element {where} {what} by zero ({zero.size} element"
            f"{'s' if zero.size > 1 else ''} in all): integer division by zero has no value "
            f"(float division follows IEEE 754); mask the zero divisors or divide in a float "
            f"format")


def _int_operands(ctx, X, Y):
    x, y = ctx.flat(X[0]), ctx.flat(Y[0])
    return x, y


def _complex_quotient(ctx, N, D):
    """``N / D`` for complex ``N`` (operand parts, or Parts of an exact sum) and operand parts
    ``D``: ``N * conj(D) / |D|**2``, per part a quotient of sums of products."""
    num = times_parts(N, conj(D), True) if isinstance(N[0], Part) else mul_parts(N, conj(D),
                                                                                 True)
    den = square_sum(D)
    out = [ctx.quotient(num[0], den), ctx.quotient(num[1], den)]
    if not isinstance(N[0], Part):
        _annex_g_division(ctx, out, N, D)
    return out


def _annex_g_division(ctx, out, N, D):
    """C99 Annex G's recovery (``_Cdivd``, G.5.1) where both parts came out NaN: a nonzero over
    a zero is an infinity (``copysign(inf, c) * a``), an infinite over a finite an infinity, a
    finite over an infinite a zero."""
    # C99 recovers where both parts are NaN; a part is NaN here also where a real scalar has
    # no imaginary part (1 / (1 + inf i) is 0 - NaN i by the formula): the same recovery applies
    nan = np.isnan(out[0].special) | np.isnan(out[1].special)
    if not nan.any():
        return
    z = np.zeros(nan.size)
    a, b, c, d = (ctx.flat(v) if v is not None else z for v in (*N, *D))
    with np.errstate(all="ignore"):
        x, y = np.full(nan.size, np.nan), np.full(nan.size, np.nan)
        zero_den = (c == 0) & (d == 0) & ~(np.isnan(a) & np.isnan(b))
        inf_c = np.copysign(np.inf, c)
        x = np.where(zero_den, inf_c * a, x)
        y = np.where(zero_den, inf_c * b, y)
        inf_num = ~zero_den & (np.isinf(a) | np.isinf(b)) & np.isfinite(c) & np.isfinite(d)
        a1 = np.copysign(np.where(np.isinf(a), 1.0, 0.0), a)
        b1 = np.copysign(np.where(np.isinf(b), 1.0, 0.0), b)
        x = np.where(inf_num, np.inf * (a1 * c + b1 * d), x)
        y = np.where(inf_num, np.inf * (b1 * c - a1 * d), y)
        inf_den = ~zero_den & ~inf_num & (np.isinf(c) | np.isinf(d)) & np.isfinite(a) & \
            np.isfinite(b)
        c1 = np.copysign(np.where(np.isinf(c), 1.0, 0.0), c)
        d1 = np.copysign(np.where(np.isinf(d), 1.0, 0.0), d)
        x = np.where(inf_den, 0.0 * (a * c1 + b * d1), x)
        y = np.where(inf_den, 0.0 * (b * c1 - a * d1), y)
    fix = nan & (zero_den | inf_den | inf_num & np.isnan(out[0].special)
                 & np.isnan(out[1].special))
    for part, v in zip(out, (x, y), strict=True):
        ex = ctx.values(v.reshape(ctx.shape))
        part.put(fix, ex)


def _real(X):
    return Part([(X[0],)])


# ------------------------------------------------------------- complex division models
def _textbook(ctx, X, Y, **params):
    """``((ac + bd) + (bc - ad) i) / (c^2 + d^2)``, every step rounded in the compute format."""
    num = [ctx.store(ctx.sop([p]))[0] for p in mul_parts(X, conj(Y), True)]
    den = ctx.store(ctx.sop([square_sum(Y)]))[0]
    return [ctx.quotient(Part([(num[0],)]), Part([(den,)])),
            ctx.quotient(Part([(num[1],)]), Part([(den,)]))]


def _smith(fused: bool):
    """Smith's algorithm (1962) as NumPy's complex loops and PyTorch's ``c10::complex`` divide
    (``numpy/_core/src/umath/loops.c.src``, ``@TYPE@_divide``; ``c10/util/complex.h``,
    ``operator/=``), every step rounded in the compute format: with ``|c| >= |d|``, ``r = d / c``,
    ``s = 1 / (c + d r)``, then ``((a + b r) s) + ((b - a r) s) i``; otherwise the same with the
    parts of the divisor swapped. ``fused``: each ``u + v w`` is one fused multiply-add (as a
    compiler that contracts them builds it), else the product is rounded first."""
    def model(ctx, X, Y, **params):
        a, b = X
        c, d = Y
        cv, dv = (np.abs(ctx.flat(v)) if v is not None else 0.0 for v in (c, d))
        big_c = (cv >= dv).reshape(ctx.shape)

        def fma(u, v, w):  # u + v * w, fused or not, rounded in the compute format
            if not fused:
                v = ctx.store(ctx.sop([Part([times(v, w)])]))[0]
                w = ONE
            return ctx.store(ctx.sop([Part([(u,), times(v, w)])]))[0]

        def pick(u, v):
            return ctx.pick(big_c, u, v)

        zero = ExactPart.from_scalar(0.0)
        a, b, c, d = (v if v is not None else zero for v in (a, b, c, d))
        r = pick(step_q(ctx, d, c), step_q(ctx, c, d))  # d/c or c/d
        den = pick(fma(c, d, r), fma(d, c, r))
        scale = step_q(ctx, ExactPart.from_scalar(1.0), den)
        re = pick(fma(a, b, r), fma(b, a, r))
        im = pick(fma(b, neg(a), r), fma(neg(a), b, r))
        return ctx.sop([Part([times(re, scale)]), Part([times(im, scale)])])
    return model


def step_q(ctx, n, d):
    """``n / d`` rounded in the compute format, as an operand (``None`` parts are zeros)."""
    zero = ExactPart.from_scalar(0.0)
    q = ctx.quotient(Part([(n if n is not None else zero,)]),
                     Part([(d if d is not None else zero,)]))
    return ctx.store([q])[0]


def _is_complex(ctx) -> bool:
    return ctx.complex_out


#: ``divide=``: which implementations of true division the tolerance admits.
DIVIDE = ("correct", "reciprocal", "any")
_CORRECT, _RECIPROCAL, _ANY = DIVIDE


def _correct_division(ctx) -> bool:
    return ctx.params.get("divide", _CORRECT) != _RECIPROCAL


def _real_fused(ctx) -> bool:
    """The fused model applies unless only the reciprocal one is declared (real quotients)."""
    return ctx.complex_out or ctx.out.is_integer or _correct_division(ctx)


def _reciprocal_declared(ctx) -> bool:
    return ctx.params.get("divide", _CORRECT) != _CORRECT and not ctx.complex_out


def _reciprocal(ctx, X, Y, **params):
    """``x * R(1/y)``: the reciprocal rounded in the compute format, then the product (the
    driver rounds it in the compute format and stores it): OpenVINO's float32 Divide, GPU fast
    paths (``__fdividef``-free ``x * __frcp_rn(y)``), compilers' reciprocal-multiply."""
    r = step_q(ctx, ExactPart.from_scalar(1.0), Y[0])
    return ctx.sop([Part([times(X[0], r)])])


def _prepare_divide(ctx, rounding_mode, divide):
    if divide is None:
        divide = _CORRECT
    if not isinstance(divide, str) or divide not in DIVIDE:
        raise ValueError(f"divide={divide!r}; expected one of {', '.join(map(repr, DIVIDE))} "
                         f"('correct': the quotient rounded once in the compute format; "
                         f"'reciprocal': x * (1/y), the reciprocal and the product each rounded "
                         f"there; 'any': either)")
    if divide != _CORRECT and (rounding_mode is not None or ctx.complex_out
                                or ctx.out.is_integer):
        what = (f"rounding_mode={rounding_mode!r}" if rounding_mode is not None else
                f"a {ctx.out.name} result")
        raise ValueError(f"divide={divide!r} models a real float true division (x * (1/y)); "
                         f"it does not apply to {what}. Drop divide= (or rounding_mode=)")
    return {"rounding_mode": rounding_mode, "divide": divide}


def _divide_lane(ctx):
    """The fast lane stands for the correctly rounded quotient only."""
    if ctx.params.get("divide", _CORRECT) != _CORRECT:
        return None
    return _fast.divide_lane(ctx)


_FUSED_DIVISION = Model(FUSED.name, applies=_real_fused)

_DIVIDE_MODELS = (_FUSED_DIVISION,
                  Model("reciprocal then multiply in {c}", _reciprocal, _reciprocal_declared),
                  Model("the textbook formula in {c}", _textbook, _is_complex),
                  Model("Smith's algorithm in {c}", _smith(False), _is_complex),
                  Model("Smith's algorithm in {c}, multiply-adds fused", _smith(True),
                        _is_complex))


# ----------------------------------------------------------------------------- divide
def _quotient_of(ctx, X, Y, rounding_mode):
    if ctx.out.is_integer:  # integer operands, floor or trunc (true division gives floats)
        x, y = _int_operands(ctx, X, Y)
        _zero_division(ctx, y, "divides")
        if rounding_mode == "floor":
            q = x // y
        else:  # trunc (integer true division promotes to a float format, not here)
            q = np.array([abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                          for a, b in zip(x, y, strict=True)], dtype=object)
        return [ctx.values(q.reshape(ctx.shape))]
    if ctx.complex_out:
        if rounding_mode is not None:
            raise OpTypeError(f"rounding_mode={rounding_mode!r} does not apply to complex "
                              f"operands (torch raises too); divide without it")
        return _complex_quotient(ctx, X, Y)
    q = ctx.quotient(_real(X), _real(Y))
    if rounding_mode is not None:
        xs, ys = X[0].broadcast(ctx.shape), Y[0].broadcast(ctx.shape)
        q = integral(q, rounding_mode, exact=lambda i: xs.exact(i) / ys.exact(i))
    return [q]


@elementwise("divide", ("x", "y"), kernel="quotient", promotion=_div_promotion,
             summary="x / y rounded once; rounding_mode 'trunc' or 'floor' as torch.div",
             params=(Param("rounding_mode", None, "None (true division), 'trunc' or 'floor'",
                           audit=("trunc", "floor")),
                     Param("divide", "correct", "'correct' (the quotient rounded once in the "
                           "compute format), 'reciprocal' (x * (1/y), each rounded there) or "
                           "'any'")),
             models=_DIVIDE_MODELS, prepare_params=_prepare_divide,
             counterparts=Counterparts("torch.div",
                                       Counterpart("np.divide", data={"model": "true_division"}),
                                       Counterpart("jnp.divide", data={"model": "quotient"})),
             fast=_divide_lane)
def divide(ctx, X, Y, *, rounding_mode, divide="correct"):
    """Elementwise ``x / y`` with broadcasting, the exact quotient rounded once.

    ``rounding_mode=None`` is true division: integer operands give the policy's default float
    (float32 under torch's rules), each operand first rounded into it as PyTorch converts it.
    ``"trunc"`` and ``"floor"`` round the exact quotient to an integer toward zero or toward
    -inf first (exactly), then into the output format; integers stay integers there (Python
    integers: no bit is lost). Float division by zero follows IEEE 754: ``x / ±0`` is a signed
    infinity and ``0 / 0`` NaN; an integer division by zero raises ZeroDivisionError naming the
    element. A complex quotient's parts are the quotients of ``x * conj(y)`` by ``|y|**2``
    (its specials follow that formula, and C99 Annex G's recovery where both parts come out
    NaN: ``(1 + 1i) / 0`` is ``inf + inf i``); its tolerance covers the textbook formula and
    Smith's algorithm computed in the compute format.

    ``divide=`` says how a real float true division may be computed: ``"correct"`` (the
    default: the quotient rounded once in the compute format, then stored), ``"reciprocal"``
    (``x * R(1/y)``: the reciprocal rounded in the compute format, then the product rounded
    there: OpenVINO's float32 Divide, GPU fast paths) or ``"any"`` (either). The reference
    (``rounded``) is always the correctly rounded quotient.

    >>> import exactref as er
    >>> x, y = er.asarray([1.0, 5.0], "float32"), er.asarray([3.0, 3.0], "float32")
    >>> er.divide(x, y, divide="reciprocal").models[1]
    'reciprocal then multiply in float32'
    >>> import numpy as np
    >>> rm = np.float32(5.0) * (np.float32(1) / np.float32(3.0))   # 1.6666666269302368
    >>> bool(rm == er.divide(x, y).rounded.numpy()[1])
    False
    >>> er.divide(x, y).covers([1 / np.float32(3), rm]).tolist()
    [True, False]
    >>> er.divide(x, y, divide="reciprocal").covers([1 / np.float32(3), rm]).tolist()
    [True, True]
    >>> er.divide(er.asarray([1.0], "bfloat16"), 3.0).rounded.tolist()
    [0.333984375]
    >>> er.divide([1.0, -1.0, 0.0], [0.0, 0.0, 0.0]).rounded.tolist()
    [inf, -inf, nan]
    >>> er.divide([-7.5], [2.0], rounding_mode="trunc").rounded.tolist()
    [-3.0]
    """
    return _quotient_of(ctx, X, Y, rounding_mode)


@elementwise("floor_divide", ("x", "y"), kernel="quotient", promotion="floor_divide",
             summary="floor(x / y), exactly, rounded once",
             counterparts=Counterparts(
                 "torch.floor_divide",
                 Counterpart("np.floor_divide", data={"model": "divmod_quotient"}),
                 Counterpart("jnp.floor_divide", data={"model": "division", "rule": "floor",
                                                       "broadcast_reciprocal": True})),
             kinds=("bool", "int", "uint", "float"))
def floor_divide(ctx, X, Y):
    """Elementwise ``floor(x / y)``: the exact quotient rounded to an integer toward -inf, then
    once into the output format (``divide(x, y, rounding_mode="floor")``).

    >>> import exactref as er
    >>> er.floor_divide([7.0, -7.0, 0.5, -0.0], [2.0, 2.0, 1.0, 1.0]).rounded.tolist()
    [3.0, -4.0, 0.0, -0.0]
    """
    return _quotient_of(ctx, X, Y, "floor")


# -------------------------------------------------------------------- remainder, fmod
def _float_fmod(ctx, X, Y):
    """``fmod`` of float operands (float64 values): exact, IEEE's specials."""
    x, y = ctx.flat(X[0]), ctx.flat(Y[0])
    with np.errstate(invalid="ignore"):
        m = np.fmod(x, y)  # exact: C's fmod never rounds
    return x, y, m


def _int_remainder(ctx, X, Y, floor: bool):
    x, y = _int_operands(ctx, X, Y)
    _zero_division(ctx, y, "takes a remainder")
    if floor:
        r = x % y
    else:
        r = np.array([abs(a) % abs(b) * (1 if a >= 0 else -1) for a, b in zip(x, y, strict=True)],
                     dtype=object)
    return [ctx.values(r.reshape(ctx.shape))]


@elementwise("remainder", ("x", "y"), kernel="quotient", promotion="remainder",
             summary="x - y * floor(x / y), the divisor's sign, rounded once",
             counterparts=Counterparts("torch.remainder",
                                       Counterpart("np.remainder", data={"model": "division",
                                                                         "nan_zero": "quiet"}),
                                       Counterpart("jnp.remainder", data={"model": "division",
                                                                          "rule": "modulo",
                                                                          "zero_divisor": "one"})),
             kinds=("bool", "int", "uint", "float"))
def remainder(ctx, X, Y):
    """Elementwise ``x - y * floor(x / y)``, exactly, rounded once: the result has the
    divisor's sign, as in Python, NumPy and PyTorch.

    For floats it is ``fmod(x, y)`` (exact), plus ``y`` where the two differ in sign: one
    rounding. An exact zero takes the divisor's sign (Python and NumPy; PyTorch keeps the
    dividend's: its equivalent models that). ``y = ±0`` or an infinite ``x`` gives NaN; an
    infinite ``y`` gives ``x`` where the signs agree (or ``x`` is zero) and ``y`` otherwise.
    Integers: Python's ``%``, exactly; a zero divisor raises ZeroDivisionError.

    >>> import exactref as er
    >>> er.remainder(er.asarray([-1e-30, 7.0], "float32"), 1.0).rounded.tolist()
    [1.0, 0.0]
    """
    if ctx.out.is_integer:
        return _int_remainder(ctx, X, Y, floor=True)
    x, y, m = _float_fmod(ctx, X, Y)
    adjust = (m != 0) & (np.signbit(m) != np.signbit(y)) & np.isfinite(m)
    m = np.where(m == 0, np.copysign(0.0, y), m)

    mo = ExactPart.from_float64(m.reshape(ctx.shape))
    yo = ExactPart.from_float64(np.where(adjust, y, 0.0).reshape(ctx.shape))
    ex = ctx.sop([Part([(mo,), (yo,)])])[0]
    # zeros: m's sign (the terms' rule would make -0 + 0 = +0)
    zero = m == 0
    ex.zsign[zero] = np.where(np.signbit(m[zero]), -1, 1)
    return [ex]


@elementwise("fmod", ("x", "y"), kernel="quotient", promotion="fmod",
             summary="x - y * trunc(x / y), the dividend's sign (exact for floats)",
             counterparts=Counterparts(
                 "torch.fmod",
                 Counterpart("np.fmod", data={"model": "division", "nan_zero": "default"}),
                 Counterpart("jnp.fmod", data={"model": "division", "rule": "truncated",
                                               "zero_divisor": "one_unless_bool"})),
             kinds=("bool", "int", "uint", "float"))
def fmod(ctx, X, Y):
    """Elementwise ``x - y * trunc(x / y)``: the result has the dividend's sign, as C's
    ``fmod``. For floats it is exact (the operands' format holds it); a zero result keeps the
    dividend's sign; ``y = ±0`` or an infinite ``x`` gives NaN, an infinite ``y`` gives ``x``.
    Integers: truncated division's remainder, exactly; a zero divisor raises ZeroDivisionError.

    >>> import exactref as er
    >>> er.fmod(er.asarray([5.5, -0.0], "float16"), 2.0).rounded.tolist()
    [1.5, -0.0]
    """
    if ctx.out.is_integer:
        return _int_remainder(ctx, X, Y, floor=False)
    _, _, m = _float_fmod(ctx, X, Y)
    return [ctx.values(m.reshape(ctx.shape))]


# -------------------------------------------------------------------------- reciprocal
@elementwise("reciprocal", ("x",), kernel="quotient", promotion="reciprocal",
             summary="1 / x, rounded once",
             models=_DIVIDE_MODELS[:1],
             counterparts=Counterparts("torch.reciprocal",
                                       Counterpart("np.reciprocal", data={"model": "inverse"}),
                                       Counterpart("jnp.reciprocal", data={"model": "inverse"})))
def reciprocal(ctx, X):
    """Elementwise ``1 / x``, the exact value rounded once (integers give the policy's default
    float, as ``torch.reciprocal``). ``1 / ±0`` is ±inf, ``1 / ±inf`` ±0.

    >>> import exactref as er
    >>> er.reciprocal(er.asarray([3.0, -0.0], "float16")).rounded.tolist()
    [0.333251953125, -inf]
    """

    # 1 + 0i in a complex quotient: C99's formula reads the zero part too, so 1 / (1 + inf i)
    # is (NaN, NaN) there, and Annex G's recovery gives 0 - 0i
    one = [ExactPart.from_scalar(1.0), ExactPart.from_scalar(0.0) if ctx.complex_out else None]
    if ctx.complex_out:
        return _complex_quotient(ctx, one, X)
    return [ctx.quotient(Part([(one[0],)]), _real(X))]


# ----------------------------------------------------------------------------- addcdiv
def _addcdiv_steps(ctx, In, T1, T2, *, value, V):
    """PyTorch's formula ``input + value * (tensor1 / tensor2)``, each step rounded in the
    compute format."""
    q = ctx.store(_div_parts(ctx, T1, T2))
    vq = q if _is_one(V) else ctx.store(ctx.sop(mul_parts(q, V, ctx.complex_out)))
    return ctx.sop(add_parts(In, vq, [ONE, None], ctx.complex_out))


def _addcdiv_value_first(ctx, In, T1, T2, *, value, V):
    """``input + (value * tensor1) / tensor2``, each step rounded in the compute format."""
    vt = T1 if _is_one(V) else ctx.store(ctx.sop(mul_parts(T1, V, ctx.complex_out)))
    q = ctx.store(_div_parts(ctx, vt, T2))
    return ctx.sop(add_parts(In, q, [ONE, None], ctx.complex_out))


def _div_parts(ctx, N, D):
    return _complex_quotient(ctx, N, D) if ctx.complex_out else [
        ctx.quotient(_real(N), _real(D))]


@addc_elementwise("addcdiv", "/", kernel="quotient", kinds=("float", "complex"),
                  models=(FUSED, Model("each step rounded in {c}", _addcdiv_steps),
                          Model("value * tensor1 first, each step rounded in {c}",
                                _addcdiv_value_first)),
                  counterparts=Counterparts("torch.addcdiv", None, None))
def addcdiv(ctx, In, T1, T2, *, value, V):
    """Elementwise ``input + value * tensor1 / tensor2``, the exact value rounded once.

    The exact value is the quotient ``(input * tensor2 + value * tensor1) / tensor2``; special
    values (an infinite or NaN operand, ``tensor2 = ±0``) and the signs of zeros are those of
    IEEE arithmetic on ``input + value * (tensor1 / tensor2)``. The tolerance covers the steps
    ``tensor1 / tensor2``, ``* value`` and ``input +`` each rounded in the compute format, and
    ``value * tensor1`` first. Integer operands raise, as in PyTorch.

    >>> import exactref as er
    >>> er.addcdiv(er.asarray([1.0], "float32"), 1.0, 3.0, value=3).rounded.tolist()
    [2.0]
    """
    # (input * tensor2 + value * tensor1) / tensor2
    vt = [Part([(p,)]) for p in T1] if _is_one(V) else mul_parts(T1, V, ctx.complex_out)
    num = [Part(a.terms + b.terms) for a, b in zip(mul_parts(In, T2, ctx.complex_out), vt,
                                                    strict=False)]
    if ctx.complex_out:
        return _complex_quotient(ctx, num, T2)
    q = ctx.quotient(num[0], _real(T2))
    _ieee_addcdiv(ctx, q, In, T1, T2, value)
    return [q]


def _ieee_addcdiv(ctx, q, In, T1, T2, value):
    """Where an operand is not finite or ``tensor2`` is zero, the value of IEEE arithmetic on
    ``input + value * (tensor1 / tensor2)`` (exact there: the quotient is ±0, ±inf or NaN); and
    the sign of an exact zero, as IEEE's sum rule gives ``input + p`` with ``p = value *
    tensor1 / tensor2`` (a zero ``p`` takes the product's sign)."""

    i, t1, t2 = (ctx.flat(p[0]).astype(np.float64) for p in (In, T1, T2))
    try:
        v = float(value)
    except OverflowError:  # only its sign and finiteness count below (10**400, say)
        v = float(np.copysign(np.finfo(np.float64).max, float(np.sign(value))))
    io = ExactPart.from_float64(i.reshape(ctx.shape))
    special = ~(np.isfinite(i) & np.isfinite(t1) & np.isfinite(t2)) | (t2 == 0)
    if special.any():
        with np.errstate(all="ignore"):
            ratio = t1 / t2
            # a quotient of finite operands (beside an infinite or NaN input) counts by its sign
            # and whether it is zero: in float64 it may overflow (1 / -2**-1074 is -inf, and
            # inf + -inf NaN) or underflow (2**-1074 / 2**1000 is 0, and inf * 0 NaN)
            finite_q = np.isfinite(t1) & np.isfinite(t2) & (t2 != 0) & (t1 != 0)
            ratio = np.where(finite_q, np.copysign(1.0, ratio), ratio)
            w = np.where(special, v * ratio, 0.0)
        ex = ctx.sop([Part([(io,), (ExactPart.from_float64(w.reshape(ctx.shape)),)])])[0]
        q.put(special, ex)
    zero = q.zero & ~special
    if zero.any():
        # p = -input exactly where the value is zero; a zero p has the product's sign
        sign = np.signbit(np.float64(v)) ^ np.signbit(t1) ^ np.signbit(t2)
        p = np.where(i == 0, np.where(sign, -0.0, 0.0), -i)
        ex = ctx.sop([Part([(io,), (ExactPart.from_float64(p.reshape(ctx.shape)),)])])[0]
        q.put(zero, ex)
