"""NumPy's and ml_dtypes' conversions (``x.astype(to)``, the registry's ``cast``) on x86-64, as
the installed ml_dtypes minor does them, for :mod:`exactref.equivalents.numpy`."""

from __future__ import annotations

import numpy as np

from .. import arithmetic as er_ops
from .._array import Array
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import Result
from ._common import operand
from ._numpy_loop import (
    F32,
    F64,
    _array,
    _defined,
    _into,
    _ml,
    _nanless,
    _pair,
    _parts,
    _shaped,
)

_SMALL_INT = ("int1", "int2", "int4", "uint1", "uint2", "uint4")


#: The one-way casts ml_dtypes registers between its small integers (``dtypes.cc``).
_SMALL_INT_CASTS = (("int1", "int2"), ("int1", "int4"), ("int2", "int4"), ("uint1", "uint2"),
                    ("uint1", "uint4"), ("uint2", "uint4"))


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
