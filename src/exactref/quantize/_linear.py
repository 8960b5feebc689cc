"""Affine (linear) quantization: ONNX's QuantizeLinear-23 and DequantizeLinear-23, exactly.

``quantize_linear(x, scale, zero_point)`` is ``saturate(round(x / scale) + zero_point)``: the
exact rational ``x / scale`` rounded once to an integer (ties to even by default), the zero
point added, the sum saturated into the output format's range (int8, uint8, int16, uint16,
int32, int4, uint4); into the float formats (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
float8_e5m2fnuz, float4_e2m1fn) the exact quotient is rounded once into the format, with
ONNX's saturation table. ``dequantize_linear(x, scale, zero_point)`` is the exact
``(x - zero_point) * scale`` rounded once into the output format (the scale's by default).
The scale is per tensor (a scalar), per axis (1-D along ``axis``) or blocked (``block_size``:
the shape of ``x`` with ``ceil(x.shape[axis] / block_size)`` along ``axis``), as in ONNX.

>>> import exactref as er
>>> import numpy as np
>>> r = er.quantize_linear(np.float32([0.25, 0.75, -0.25, 1000.0]), np.float32(0.5), np.uint8(10))
>>> r.rounded.tolist()                    # 0.5 -> 0, 1.5 -> 2 (ties to even); saturated at 255
[10, 12, 10, 255]
>>> er.dequantize_linear(np.uint8([10, 12, 255]), np.float32(0.5), np.uint8(10)).rounded.tolist()
[0.0, 1.0, 122.5]

The contract (a tolerance is a claim). The reference (``rounded``) is the exact quotient
rounded once. A kernel may form the quotient in a format ``P`` first: ONNX-23's ``precision``
attribute (by default the scale's format), ONNX Runtime's MLAS (``x / scale`` in float32,
``cvtps2dq``), PyTorch's ``quantize_per_tensor`` (``x * (1 / scale)``, the reciprocal in
float32). ``compute=P`` names it (None: the scale's format) and ``divide=`` how it divides:
``"exact"`` (no intermediate rounding), ``"correct"`` (the default: ``x / scale`` rounded once
into ``P``, then to the integer), ``"reciprocal"`` (``x * R(1 / scale)``, the reciprocal and the
product each rounded into ``P``) or ``"any"`` (both). ``covers`` accepts, per element, exactly
the codes of the declared implementations (and the exact one).

Why double rounding moves a result by at most one code, and only near a rounding boundary.
Let ``q = x / scale`` be exact and ``v = R_P(q)`` (or ``R_P(x R_P(1/scale))``), with
``|v - q| <= 2 u_P |q|`` (one or two roundings, ``u_P`` the unit roundoff). Rounding to an
integer is monotone, so ``round(v)`` and ``round(q)`` differ only if a boundary of the integer
rounding (a half-integer for the nearest modes, an integer for the directed ones) lies between
``q`` and ``v`` (or on ``v``), and since ``|v - q| < 1`` wherever ``|q| < 2**(p_P - 1)`` at most
one boundary lies there: the two differ by one code, at quotients within ``2 u_P |q|`` of a
boundary. Beyond ``2**(p_P - 1)`` every ``P`` number is an integer and ``v`` is its own
rounding, still within ``2 u_P |q|`` of ``q``: there the output saturates for every integer
format narrower than ``P``'s integers (int32 with a float32 ``P`` is the exception the
candidates carry exactly). The candidates are computed, not bounded: each declared
implementation step by step with exact roundings, so the tolerance is no wider than the
implementations.

Deciding the exact rounding fast. For ``t = fl64(x / scale)`` (IEEE division, correctly
rounded), ``|t - q| <= spacing(t) / 2``; where ``t`` is farther than that from the nearest
boundary ``b``, ``q`` lies on ``t``'s side of ``b`` and the float64 rounding is the exact one.
The others escalate to exact rationals (gmpy2 ``mpq``: the sign of ``x - b * scale``). For
operands that are float32 numbers (float16, bfloat16 and float32 inputs and scales) no element
escalates where ``|q| < 2**26``: write ``x = X 2**a``, ``scale = S 2**c`` with ``|X|, S < 2**24``
integers and a boundary ``b = H / 2``; then ``q - b = (2 X 2**a - H S 2**c) / (2 S 2**c)``,
whose numerator is a multiple of ``2**min(a + 1, c)``, so a nonzero distance is at least
``2**min(a + 1, c) / (2 S 2**c)``, which exceeds ``|q| 2**-51`` in both cases (``a + 1 <= c``:
``|q| < 2**(a - c + 24)``; ``c < a + 1``: the distance is ``> 2**-25`` and ``|q| < 2**26``).
That exceeds ``|t - q| + spacing(t) / 2 <= 2**-52 |t| (1 + u)``, so ``t`` equals ``b`` exactly
when ``q`` does (an exact tie) and is otherwise on ``q``'s side: the float64 quotient decides.

Specials. NaN has no integer value and ONNX leaves the code open: a NaN input to an integer
format is a freedom (every code of the format is covered there; ``rounded`` holds the
saturated zero point as a placeholder, ``details["nan"]`` marks them). Infinities saturate to
the range's ends. Into the float8 formats ONNX's table applies (``saturate=True``: finite
overflow and infinities saturate, except an infinity into the FNUZ formats, which the table
makes NaN while ONNX's reference implementation saturates: both are covered; ``saturate=False``:
NaN, or E5M2's infinity); float4_e2m1fn always saturates and has no NaN (a NaN input is
undefined: any value covered).
"""

from __future__ import annotations

import numpy as np

from .._array import Array, asarray
from .._exact import ExactPart, Rounding, quotient, resolve_rounding, sum_of_products
from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from .._result import Result
from ..ops import AuditPlan, Counterparts, OpSpec, Param, names_of, register

__all__ = [*names_of(__name__), "LINEAR_FORMATS", "DIVIDE_MODELS"]

#: The output formats of ``quantize_linear`` (the input formats of ``dequantize_linear``).
LINEAR_FORMATS = ("int8", "uint8", "int16", "uint16", "int32", "int4", "uint4",
                  "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                  "float4_e2m1fn")

#: ``divide=``: how the modelled kernels form ``x / scale`` (the module's contract).
DIVIDE_MODELS = ("exact", "correct", "reciprocal", "any")
_EXACT, _CORRECT, _RECIPROCAL, _ANY = DIVIDE_MODELS

_CHUNK = 1 << 16
_BIG = 2.0**50  # |x / scale| at least this saturates every integer format of LINEAR_FORMATS
_NARROW_DECIDED = 2.0**26  # float32 operands: the float64 quotient decides below it
_NO_INTEGER_MODES = (Rounding.ODD,)


# ----------------------------------------------------------------------------- arguments
def _values(v, what: str):
    """``v`` as (float64 values, its Format, whether it came with a format of its own)."""
    typed = hasattr(v, "dtype") or isinstance(v, Array)
    arr = asarray(v)
    fmt = arr.dtype
    if fmt.is_complex:
        raise TypeError(f"{what} is complex ({fmt.name}); linear quantization takes real values")
    data = arr.numpy()
    if fmt.is_integer:
        data = data.astype(np.int64) if fmt.name != "uint64" else data
    with np.errstate(invalid="ignore"):  # ml_dtypes warns casting its NaNs
        return np.asarray(data).astype(np.float64), fmt, typed


def _output_format(dtype, zero_point, zp_fmt, zp_typed, op: str):
    if dtype is not None:
        fmt = resolve_dtype(dtype)
        if zero_point is not None and zp_typed and zp_fmt is not fmt:
            raise ValueError(f"{op}: dtype={fmt.name!r} but the zero point is {zp_fmt.name}; "
                             f"ONNX requires them equal (output_dtype must be the zero point's "
                             f"type). Give the zero point in {fmt.name}, or drop dtype=")
    elif zero_point is not None and zp_typed:
        fmt = zp_fmt
    else:
        fmt = FORMATS["uint8"]
    if fmt.name not in LINEAR_FORMATS:
        raise ValueError(f"{op}: {fmt.name} is not a linear quantization format; expected one "
                         f"of {', '.join(LINEAR_FORMATS)}")
    return fmt


def _axis(ndim: int, axis: int, op: str) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ValueError(f"{op}: axis={axis!r}; expected an integer in [-{ndim}, {ndim - 1}]")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(f"{op}: axis={axis} is out of range for an input of rank {ndim}; "
                         f"expected an integer in [-{ndim}, {ndim - 1}]")
    return int(axis) % max(ndim, 1)


def _expand(param: np.ndarray, shape: tuple, axis: int, block_size: int, what: str,
            op: str) -> np.ndarray:
    """``param`` (a scale or zero point) broadcast to the input's ``shape``: per tensor, per
    axis or blocked, as ONNX's granularities."""
    if not isinstance(block_size, (int, np.integer)) or isinstance(block_size, bool) \
            or block_size < 0:
        raise ValueError(f"{op}: block_size={block_size!r}; expected 0 (per tensor or per "
                         f"axis) or a positive block length")
    if block_size == 0 and param.size == 1 and param.ndim <= 1:
        return np.broadcast_to(param.reshape(()), shape)  # per tensor: the axis plays no part
    axis = _axis(len(shape), axis, op)
    if block_size == 0:
        if param.ndim != 1:
            raise ValueError(f"{op}: {what} of shape {param.shape} without block_size; expected "
                             f"a scalar (per tensor) or a 1-D array of length "
                             f"{shape[axis] if shape else 1} along axis {axis} (per axis); for "
                             f"blocked quantization give block_size=")
        if not shape or param.shape[0] != shape[axis]:
            want = shape[axis] if shape else 1
            raise ValueError(f"{op}: {what} has {param.shape[0]} entries but the input has "
                             f"{want} along axis {axis}; expected one per slice (per axis), "
                             f"or a scalar (per tensor)")
        view = [1] * len(shape)
        view[axis] = shape[axis]
        return np.broadcast_to(param.reshape(view), shape)
    blocks = -(-shape[axis] // block_size) if shape else 1
    want = tuple(blocks if i == axis else d for i, d in enumerate(shape))
    if param.shape != want:
        raise ValueError(f"{op}: {what} of shape {param.shape} for blocks of {block_size} along "
                         f"axis {axis} of an input of shape {shape}; expected shape {want} "
                         f"(ceil({shape[axis] if shape else 1} / {block_size}) along the axis)")
    return np.repeat(param, block_size, axis=axis).take(range(shape[axis]), axis=axis)


def _check_scale(s: np.ndarray, op: str) -> None:
    bad = ~(np.isfinite(s) & (s > 0))
    if bad.any():
        found = s[bad].reshape(-1)[0]
        raise ValueError(f"{op}: the scale must be positive and finite; found {float(found)!r} "
                         f"({int(bad.sum())} of {s.size} entries). Give positive finite scales "
                         f"(a zero scale has no quotient, a negative one reverses the codes)")


def _check_zero_point(zp: np.ndarray, fmt, op: str) -> None:
    if fmt.is_integer:
        bad = (zp < fmt.int_min) | (zp > fmt.int_max) | (zp != np.floor(zp))
        if bad.any():
            found = zp[bad].reshape(-1)[0]
            raise ValueError(f"{op}: zero point {_num(found)} is not a {fmt.name} value; expected "
                             f"integers in [{fmt.int_min}, {fmt.int_max}]. Give the zero point "
                             f"in the output format")
    elif (zp != 0).any():
        raise ValueError(f"{op}: a {fmt.name} zero point must be 0 (ONNX: the float formats "
                         f"are not shifted); found {_num(zp[zp != 0].reshape(-1)[0])}. Drop the "
                         f"zero point or give zeros")


def _num(v) -> str:
    v = float(v)
    return repr(int(v)) if v.is_integer() else repr(v)


def _divide_mode(divide, op: str) -> str:
    if divide is None:
        return _CORRECT
    if not isinstance(divide, str) or divide not in DIVIDE_MODELS:
        raise ValueError(f"{op}: divide={divide!r}; expected one of "
                         f"{', '.join(map(repr, DIVIDE_MODELS))} (how the kernel forms "
                         f"x / scale)")
    return divide


def _compute_format(compute, scale_fmt, op: str):
    if compute is None:
        fmt = scale_fmt if scale_fmt.is_float else FORMATS["float32"]
    else:
        fmt = resolve_dtype(compute)
    if not fmt.is_float or fmt.bits > 64 or fmt.encoding == "p3109":
        raise ValueError(f"{op}: compute={fmt.name!r}; expected a real float format of at "
                         f"most 64 bits (the format the kernel divides in)")
    return fmt


# ----------------------------------------------------------------------------- integer rounding
def _round_value(v: np.ndarray, mode: Rounding) -> np.ndarray:
    """Float64 values ``v`` (finite) rounded to integers by ``mode``, exactly."""
    if mode is Rounding.NEAREST_EVEN:
        return np.rint(v)
    if mode is Rounding.NEAREST_AWAY:
        a = np.abs(v)
        # a + 0.5 is exact below 2**52; above it every float64 is an integer
        return np.copysign(np.where(a >= 2.0**52, a, np.floor(a + 0.5)), v)
    if mode is Rounding.TOWARD_ZERO:
        return np.trunc(v)
    if mode is Rounding.TOWARD_POSITIVE:
        return np.ceil(v)
    return np.floor(v)


def _exact_sign(x: float, b: float, s: float) -> int:
    """sign(x / s - b) for s > 0, exactly (rational arithmetic)."""
    import gmpy2

    d = gmpy2.mpq(x) - gmpy2.mpq(b) * gmpy2.mpq(s)
    return (d > 0) - (d < 0)


def _integer_quotient(x: np.ndarray, s: np.ndarray, mode: Rounding, stats: dict) -> np.ndarray:
    """``round(x / s)`` exactly, per element (flat float64 arrays, ``s > 0`` finite, ``x`` not
    NaN): float64 where the float64 quotient decides (module docstring), exact rationals for
    the rest. Magnitudes of ``2**50`` and more come back as ``+-2**50`` (saturated anyway)."""
    out = np.empty(x.shape, dtype=np.float64)
    for start in range(0, x.size, _CHUNK):
        sl = slice(start, start + _CHUNK)
        xs, ss = x[sl], s[sl]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            t = xs / ss
        big = ~(np.abs(t) < _BIG)  # inf included
        tt = np.where(big, 0.0, t)
        if mode.is_nearest:
            lo = np.floor(tt)
            b = lo + 0.5
        else:
            b = np.rint(tt)
        d = tt - b
        err = np.spacing(np.abs(tt)) / 2
        with np.errstate(over="ignore"):
            narrow = (xs.astype(np.float32).astype(np.float64) == xs) & \
                (ss.astype(np.float32).astype(np.float64) == ss) & \
                (np.abs(tt) < _NARROW_DECIDED)
        # sign of q - b: from t where decided (for float32 operands t == b iff q == b)
        sign = np.where(np.abs(d) > err, np.sign(d), np.where(narrow, np.sign(d), np.nan))
        sign[big] = 0.0
        undecided = np.flatnonzero(np.isnan(sign))
        stats["escalated"] = stats.get("escalated", 0) + int(undecided.size)
        for i in undecided:
            sign[i] = _exact_sign(float(xs[i]), float(b[i]), float(ss[i]))
        if mode.is_nearest:
            tie = sign == 0
            up = lo + 1
            if mode is Rounding.NEAREST_EVEN:
                tie_pick = np.where(np.fmod(lo, 2) == 0, lo, up)
            else:
                tie_pick = np.where(b > 0, up, lo)
            n = np.where(sign < 0, lo, np.where(tie, tie_pick, up))
        else:
            # q vs the integer b: q == b, q in (b - 1, b) or q in (b, b + 1)
            below = {Rounding.TOWARD_POSITIVE: b, Rounding.TOWARD_NEGATIVE: b - 1}
            above = {Rounding.TOWARD_POSITIVE: b + 1, Rounding.TOWARD_NEGATIVE: b}
            if mode is Rounding.TOWARD_ZERO:
                n = np.where(sign == 0, b, np.where(sign < 0, np.where(b > 0, b - 1, b),
                                                     np.where(b < 0, b + 1, b)))
                # b == 0: q in (-1, 1) truncates to 0
            else:
                n = np.where(sign == 0, b, np.where(sign < 0, below[mode], above[mode]))
        n = np.where(big, np.copysign(_BIG, np.where(np.isnan(t), 1.0, t)), n)
        out[sl] = n
    return out


def _saturate_codes(n: np.ndarray, zp: np.ndarray, fmt) -> np.ndarray:
    return np.clip(n + zp, fmt.int_min, fmt.int_max)


# ----------------------------------------------------------------------------- exact roundings
def _round_quotient(n: np.ndarray, d: np.ndarray, fmt, mode: Rounding, rule: str) -> np.ndarray:
    """``n / d`` (float64, ``d > 0`` finite) rounded once into the float format ``fmt`` from
    the exact quotient (the exact engine's ``quotient``)."""
    shape = n.shape
    num = [(ExactPart.from_float64(np.ascontiguousarray(n).reshape(-1)),)]
    den = [(ExactPart.from_float64(np.ascontiguousarray(d).reshape(-1)),)]
    ex = quotient(num, den, (n.size,))
    return np.asarray(ex.round(fmt, mode, rule)[0], dtype=np.float64).reshape(shape)


def _round_product(a: np.ndarray, b: np.ndarray, fmt, mode: Rounding, rule: str) -> np.ndarray:
    """``a * b`` (float64 arrays) rounded once into ``fmt`` from the exact product."""
    shape = a.shape
    pa = ExactPart.from_float64(np.ascontiguousarray(a).reshape(-1))
    pb = ExactPart.from_float64(np.ascontiguousarray(b).reshape(-1))
    ex = sum_of_products([(pa, pb)], (a.size,))
    return np.asarray(ex.round(fmt, mode, rule)[0], dtype=np.float64).reshape(shape)


def _in_format(v: np.ndarray, fmt, mode: Rounding, rule: str) -> np.ndarray:
    return _round_product(v, np.ones_like(v), fmt, mode, rule)


def _quotients_in(x, s, P, divide: str) -> list:
    """The declared kernels' quotients ``x / s`` formed in ``P`` (float64 values of ``P``)."""
    ne = Rounding.NEAREST_EVEN
    out = []
    if divide in (_CORRECT, _ANY):
        out.append((_CORRECT, _round_quotient(x, s, P, ne, "ieee")))
    if divide in (_RECIPROCAL, _ANY):
        r = _round_quotient(np.ones_like(s), s, P, ne, "ieee")
        out.append((_RECIPROCAL, _round_product(x, r, P, ne, "ieee")))
    return out


# ----------------------------------------------------------------------------- float outputs
def _float_rule(fmt, saturate: bool) -> str:
    if fmt.name == "float4_e2m1fn" or saturate:
        return "saturate"
    return "ieee"


def _float_specials(codes: np.ndarray, x: np.ndarray, fmt, saturate: bool) -> np.ndarray:
    """ONNX's saturation table at the infinite inputs (finite ones follow the rule)."""
    inf = np.isinf(x)
    if not inf.any():
        return codes
    if fmt.name == "float4_e2m1fn":
        value = np.copysign(fmt.max_finite, x)
    elif saturate:
        value = np.full(x.shape, np.nan) if not fmt.has_negzero else np.copysign(
            fmt.max_finite, x)  # FNUZ: NaN in the table; the others saturate
    elif fmt.has_inf:
        value = x
    else:
        value = np.full(x.shape, np.nan)
    return np.where(inf, value, codes)


# ----------------------------------------------------------------------------- quantize_linear
def quantize_linear(x, scale, zero_point=None, *, dtype=None, axis=1, block_size=0,
                    saturate=True, rounding="nearest_even", compute=None, divide="correct"):
    """``saturate(round(x / scale) + zero_point)`` exactly: ONNX's QuantizeLinear-23 (see the
    module for the contract and its derivation).

    ``dtype``: the output format (by default the zero point's format, else uint8, as ONNX's
    ``output_dtype``); ``axis``, ``block_size``: the scale's granularity; ``saturate``: the
    float8 outputs' overflow rule (ONNX's table); ``rounding``: the integer rounding (ties to
    even, ONNX's; every mode but ``odd``); ``compute`` (ONNX's ``precision``; None: the
    scale's format) and ``divide`` (``"exact"``, ``"correct"``, ``"reciprocal"``, ``"any"``):
    the kernels whose codes ``covers`` accepts. A NaN input to an integer format is a freedom
    (any code covered there: the spec leaves it open); infinities saturate.

    >>> import exactref as er
    >>> import numpy as np
    >>> x = np.float32([0.5, 1.5, 2.5, -2.5, -300.0, np.inf])
    >>> er.quantize_linear(x, np.float32(1.0), np.int8(0)).rounded.tolist()
    [0, 2, 2, -2, -128, 127]
    >>> er.quantize_linear(x, np.float32(1.0), np.int8(0), rounding="nearest_away").rounded.tolist()
    [1, 2, 3, -3, -128, 127]

    Double rounding: ``x / scale`` formed in float32 first moves a code only at a quotient
    within float32's rounding error of a half-integer. Here ``x / scale`` is just above 0.5 and
    rounds to 0.5 in float32 (then to 0):

    >>> x, s = np.float64(0.5 + 2.0**-40), np.float64(1.0)
    >>> er.quantize_linear(x, s, np.uint8(0)).rounded.tolist()
    1
    >>> er.quantize_linear(x, s, np.uint8(0), compute="float32").covers(np.uint8(0)).all()
    True
    >>> er.quantize_linear(x, s, np.uint8(0), divide="exact").covers(np.uint8(0)).all()
    False
    """
    op = "quantize_linear"
    mode = resolve_rounding(rounding)
    divide = _divide_mode(divide, op)
    xv, xfmt, _ = _values(x, "x")
    sv, sfmt, _ = _values(scale, "the scale")
    zv, zfmt, ztyped = (None, None, False) if zero_point is None else \
        _values(zero_point, "the zero point")
    fmt = _output_format(dtype, zero_point, zfmt, ztyped, op)
    if fmt.is_integer and mode in _NO_INTEGER_MODES:
        raise ValueError(f"{op}: rounding={mode.value!r} has no meaning for integer codes; "
                         f"use nearest_even (ONNX), nearest_away, toward_zero, toward_positive "
                         f"or toward_negative")
    if not isinstance(saturate, (bool, np.bool_)):
        raise ValueError(f"{op}: saturate={saturate!r}; expected True or False")
    shape = xv.shape
    ax = axis
    _check_scale(sv, op)
    s = _expand(sv, shape, ax, block_size, "the scale", op).astype(np.float64)
    if zv is None:
        zp = np.zeros(shape)
    else:
        if zv.shape != sv.shape and not zv.size == sv.size == 1:
            raise ValueError(f"{op}: the zero point has shape {zv.shape} and the scale "
                             f"{sv.shape}; ONNX requires the same shape")
        _check_zero_point(zv, fmt, op)
        zp = _expand(zv, shape, ax, block_size, "the zero point", op).astype(np.float64)
    P = _compute_format(compute, sfmt, op)
    x64 = np.ascontiguousarray(xv, dtype=np.float64).reshape(-1)
    s64 = np.ascontiguousarray(s).reshape(-1)
    z64 = np.ascontiguousarray(zp).reshape(-1)
    models = ["exact"]
    stats: dict = {}
    if fmt.is_integer:
        nan = np.isnan(x64)
        xs = np.where(nan, 0.0, x64)
        ref = _saturate_codes(_integer_quotient(xs, s64, mode, stats), z64, fmt)
        ref = np.where(nan, np.clip(z64, fmt.int_min, fmt.int_max), ref)
        cands = [ref]
        if divide != _EXACT:
            for name, v in _quotients_in(xs, s64, P, divide):
                models.append(f"{name} in {P.name}")
                finite = np.isfinite(v)
                n = _round_value(np.where(finite, np.clip(v, -_BIG, _BIG), 0.0), mode)
                n = np.where(finite, n, np.copysign(_BIG, v))
                cands.append(np.where(nan, ref, _saturate_codes(n, z64, fmt)))
        if nan.any():  # a freedom: every code
            cands.append(np.where(nan, float(fmt.int_min), ref))
            cands.append(np.where(nan, float(fmt.int_max), ref))
            models.append("any code at NaN")
        rounded = asarray(ref.reshape(shape).astype(fmt.np_dtype), fmt)
        details = {"nan": nan.reshape(shape), "escalated": stats.get("escalated", 0)}
    else:
        rule = _float_rule(fmt, bool(saturate))
        finite = np.isfinite(x64)
        xs = np.where(finite, x64, 0.0)
        ref = _round_quotient(xs, s64, fmt, mode, rule)
        ref = np.where(np.isnan(x64), np.nan, ref)
        ref = _float_specials(ref, x64, fmt, bool(saturate))
        cands = [ref]
        if bool(saturate) and not fmt.has_negzero and np.isinf(x64).any():
            # ONNX's reference implementation saturates an infinity into the FNUZ formats
            cands.append(np.where(np.isinf(x64), np.copysign(fmt.max_finite, x64), ref))
            models.append("ONNX reference: infinity saturates")
        if divide != _EXACT:
            for name, v in _quotients_in(xs, s64, P, divide):
                models.append(f"{name} in {P.name}")
                c = _in_format(np.where(np.isfinite(v), v, 0.0), fmt, mode, rule)
                c = np.where(np.isinf(v), _float_specials(c, v, fmt, bool(saturate)), c)
                cands.append(np.where(finite, c, ref))
        if zero_point is not None:  # x + 0 makes -0 +0 (ONNX's reference for float4)
            cands.append(ref + 0.0)
            models.append("zero point added")
        rounded = asarray(np.where(np.isnan(ref), 0.0, ref).reshape(shape), fmt) \
            if not fmt.has_nan else asarray(ref.reshape(shape), fmt)
        details = {}
    details.update({"rounding": mode, "compute": P.name, "divide": divide})
    cands = [np.asarray(c, dtype=np.float64).reshape(shape) for c in cands]
    return _result(rounded, cands, op, models, details)


def _result(rounded, cands, op, models, details) -> Result:
    return Result(rounded, [cands], op=op, models=tuple(models), details=details)


# ----------------------------------------------------------------------------- dequantize_linear
def dequantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, dtype=None,
                      rounding="nearest_even", compute=None):
    """``(x - zero_point) * scale`` exactly, rounded once into ``dtype`` (the scale's format by
    default): ONNX's DequantizeLinear-23.

    The contract: a kernel converts ``x - zero_point`` (an exact integer) into its compute
    format first, multiplies there, and stores the product in the output format. ``compute``
    names that format (None: the output format, as ONNX's "the output type determines the
    precision of the multiplication"; ``"float32"``: a half-precision output computed in
    float32); the candidates are that kernel's outputs, step by step, and the exact one.
    Converting ``x - zero_point`` rounds only where it does not fit the compute format (int32
    codes beyond ``2**24`` in float32, int16 codes beyond ``2**11`` in float16).

    >>> import exactref as er
    >>> import numpy as np
    >>> r = er.dequantize_linear(np.int16([2049, -3]), np.float16(1.0), np.int16(0))
    >>> r.rounded.tolist(), r.covers(np.float16([2048.0, -3.0])).tolist()
    ([2048.0, -3.0], [True, True])
    >>> er.dequantize_linear(np.int32([2**24 + 1]), np.float32(3.0)).rounded.tolist()
    [50331652.0]
    """
    op = "dequantize_linear"
    mode = resolve_rounding(rounding)
    xv, xfmt, _ = _values(x, "x")
    if xfmt.name not in LINEAR_FORMATS:
        raise ValueError(f"{op}: x is {xfmt.name}; expected codes of one of "
                         f"{', '.join(LINEAR_FORMATS)}")
    sv, sfmt, _ = _values(scale, "the scale")
    shape = xv.shape
    ax = axis
    _check_scale(sv, op)
    s = _expand(sv, shape, ax, block_size, "the scale", op).astype(np.float64)
    if zero_point is None:
        zp = np.zeros(shape)
    else:
        zv, zfmt, ztyped = _values(zero_point, "the zero point")
        if ztyped and zfmt is not xfmt:
            raise ValueError(f"{op}: the zero point is {zfmt.name} and x {xfmt.name}; ONNX "
                             f"requires the same type. Give the zero point in {xfmt.name}")
        if zv.shape != sv.shape and not zv.size == sv.size == 1:
            raise ValueError(f"{op}: the zero point has shape {zv.shape} and the scale "
                             f"{sv.shape}; ONNX requires the same shape")
        _check_zero_point(zv, xfmt, op)
        zp = _expand(zv, shape, ax, block_size, "the zero point", op).astype(np.float64)
    out = resolve_dtype(dtype) if dtype is not None else sfmt
    if not out.is_float or out.is_complex:
        raise ValueError(f"{op}: dtype={out.name!r}; expected a real float format (the "
                         f"dequantized values)")
    C = _compute_format(compute if compute is not None else out, out, op)
    d = (np.asarray(xv, dtype=np.float64) - zp).reshape(-1)  # exact: |d| < 2**33
    s64 = np.ascontiguousarray(s).reshape(-1)
    rule = "ieee"
    ref = _round_product(d, s64, out, mode, rule)
    ne = Rounding.NEAREST_EVEN
    dc = _in_format(d, C, ne, rule)
    sc = _in_format(s64, C, ne, rule)
    pc = _round_product(dc, sc, C, ne, rule)
    model = _in_format(np.where(np.isfinite(pc), pc, 0.0), out, mode, rule)
    model = np.where(np.isfinite(pc), model, pc)
    cands = [ref.reshape(shape), model.reshape(shape)]
    rounded = asarray(ref.reshape(shape), out)
    return Result(rounded, [cands], op=op, models=("exact", f"converted, multiplied in {C.name}"),
                  details={"rounding": mode, "compute": C.name})


_QUANT_PARAMS = (
    Param("dtype", None, "the output format (the zero point's, else uint8)"),
    Param("axis", 1, "the axis of per-axis and blocked scales"),
    Param("block_size", 0, "elements per scale along axis (0: per tensor or per axis)"),
    Param("saturate", True, "float8 outputs: ONNX's saturation table"),
    Param("rounding", "nearest_even", "the integer rounding mode"),
    Param("compute", None, "the format the quotient may be formed in (ONNX's precision)"),
    Param("divide", "correct", "'exact', 'correct', 'reciprocal' or 'any'"))

quantize_linear.spec = register(OpSpec(
    name="quantize_linear", operands=("x", "scale", "zero_point"), kernel="conversion",
    promotion="cast", function=quantize_linear,
    summary="saturate(round(x / scale) + zero_point) exactly (ONNX QuantizeLinear-23)",
    params=_QUANT_PARAMS, optional=("zero_point",), kinds=("float",), family="quantize",
    loop="none",
    counterparts=Counterparts(None, None, None),
    plan="linear", audit=AuditPlan(call=("dtype", "axis", "block_size"))))

dequantize_linear.spec = register(OpSpec(
    name="dequantize_linear", operands=("x", "scale", "zero_point"), kernel="conversion",
    promotion="cast", function=dequantize_linear,
    summary="(x - zero_point) * scale exactly, rounded once (ONNX DequantizeLinear-23)",
    params=(Param("axis", 1, "the axis of per-axis and blocked scales"),
            Param("block_size", 0, "elements per scale along axis"),
            Param("dtype", None, "the output format (the scale's)"),
            Param("rounding", "nearest_even", "the output rounding mode"),
            Param("compute", None, "the format the kernel multiplies in (the output's)")),
    optional=("zero_point",), kinds=("int", "uint", "float"), family="quantize", loop="none",
    counterparts=Counterparts(None, None, None),
    plan="linear", audit=AuditPlan(call=("axis", "block_size"))))
