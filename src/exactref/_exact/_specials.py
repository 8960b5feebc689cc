"""What NaN, infinities, zeros and overflow become in a format: the one place that decides.

Every rounding path (the vectorized integer path, the float64 fast path, the scalar oracle and
the engine's special elements) asks these functions, so a format's rules are written once:

* **overflow** (a finite exact value past the largest finite one), by rule: ``"saturate"`` gives
  the largest finite value with the sign; ``"nan"`` gives NaN; ``"ieee"`` gives what IEEE 754
  delivers for the rounding mode: an infinity where the mode rounds away from the finite range
  (nearest modes; toward +inf for positive values, toward -inf for negative ones), the largest
  finite value with the sign otherwise. A format without infinities gives NaN where IEEE 754
  gives an infinity (as ml_dtypes' casts do), or the largest finite value where it has no NaN
  either: ``1e6`` toward zero in float8_e4m3fn is 448, toward +inf NaN, and ``-1e6`` toward
  +inf is -448.
* **an exact infinity** stays one where the format has infinities; otherwise it saturates
  under ``"saturate"`` (or where the format has no NaN) and becomes NaN under the other rules.
  The rounding mode plays no part: the value is not rounded, only encoded.
* **NaN** stays NaN. A format without NaN (float6_e2m3fn, float6_e3m2fn, float4_e2m1fn) has no
  encoding for it: the element is *undefined*, not an error of the whole call. Every rounding
  path returns float64 NaN there, the marker that :func:`undefined` reads, and
  :func:`fill_undefined` puts :data:`UNDEFINED_PLACEHOLDER` (+0) in its place where the values
  enter the format's own dtype; the Result's ``undefined`` mask says where, and ``covers``
  accepts any value there (docs/arithmetic.md, "Formats without NaN").
* **an exact zero** takes its sign where the format has a negative zero and +0 where it has
  none; a format without zero (float8_e8m0fnu) gives NaN.
* **a nonzero value that rounds to zero** in a format without zero: the nearest modes and
  toward +inf give the smallest value (as ml_dtypes' casts do), toward zero and toward -inf have
  no value on the required side and give NaN.
* **a negative value in an unsigned format** (float8_e8m0fnu) has no encoding: NaN. In an
  unsigned format with a zero (P3109's ``binary8p*u*``) the finite range ends at 0, so a
  negative value that does not round to 0 overflows below it (:func:`below_zero_values`).
* **integer overflow** (an exact integer outside an integer format's ``[int_min, int_max]``), by
  rule (:func:`integer_overflow`): ``"saturate"`` gives the nearest end of the range; ``"wrap"``
  reduces it modulo ``2**bits`` into the range (two's complement, as C's conversions to
  unsigned types and PyTorch's conversion of a Python scalar); ``"error"`` is the caller's to
  raise, naming the element.
* **P3109 formats** (``fmt.parity == "code"``): round-to-odd overflows to the infinity where its
  code is odd (the signed extended formats), and their finite formats saturate under
  ``"ieee"`` (``fmt.inf_stand_in == "max"``), as the report's SatNone does.

>>> import numpy as np
>>> from exactref._formats import FORMATS
>>> from exactref._exact._rounding import Rounding
>>> e4m3 = FORMATS["float8_e4m3fn"]
>>> overflow_values(np.array([False, True]), e4m3, Rounding.TOWARD_ZERO, "ieee").tolist()
[448.0, -448.0]
>>> overflow_values(np.array([False, True]), e4m3, Rounding.TOWARD_POSITIVE, "ieee").tolist()
[nan, -448.0]
>>> infinity_values(np.array([np.inf, -np.inf]), e4m3, "saturate").tolist()
[448.0, -448.0]
>>> fp4 = FORMATS["float4_e2m1fn"]
>>> v = special_values(np.array([np.nan, np.inf]), fp4, "ieee")
>>> v.tolist(), undefined(v, fp4).tolist(), fill_undefined(v, fp4).tolist()
([nan, 6.0], [True, False], [0.0, 6.0])
"""

from __future__ import annotations

import numpy as np

from ._rounding import Rounding

__all__ = ["overflow_values", "infinity_values", "special_values", "zero_values",
           "rounds_to_nothing", "overflow_scalar", "below_zero_values", "undefined",
           "fill_undefined", "UNDEFINED_PLACEHOLDER", "integer_overflow"]

#: What an undefined element (an exact NaN in a format without NaN) holds in the format's own
#: dtype: +0, a placeholder, not a result. The OCP MX v1.0 specification gives FP6 and FP4 no
#: NaN encoding (an MX block carries a NaN in its E8M0 scale, as er.quantize does, not in an
#: element code), and the libraries differ (ml_dtypes 0.7 stores a NaN as the zero of the other
#: sign: +NaN as -0, -NaN as +0; torch 2.13 has only the packed float4_e2m1fn_x2, with no cast
#: into it), so no value is "the" result and ``covers`` accepts any there.
UNDEFINED_PLACEHOLDER = 0.0


def _to_infinity(negative, mode: Rounding, fmt):
    """Where IEEE 754 delivers an infinity for an overflow in ``mode``."""
    if mode.is_nearest or (mode is Rounding.ODD and fmt.odd_overflow_infinite):
        return np.ones(negative.shape, dtype=bool)
    if mode is Rounding.TOWARD_POSITIVE:
        return ~negative
    if mode is Rounding.TOWARD_NEGATIVE:
        return negative.copy()
    return np.zeros(negative.shape, dtype=bool)  # toward zero, round to odd


def below_zero_values(shape, fmt, mode: Rounding, rule: str):
    """The results (float64) of negative values that do not round to 0 in an unsigned format
    with a zero, whose finite range ends at 0: ``"saturate"`` gives 0, ``"nan"`` NaN, ``"ieee"``
    0 where the mode rounds toward the range (toward zero, toward +inf) and NaN otherwise, as
    P3109's SatPropagate and SatNone do."""
    toward = mode in (Rounding.TOWARD_ZERO, Rounding.TOWARD_POSITIVE)
    zero = rule == "saturate" or (rule == "ieee" and toward)
    return np.full(shape, 0.0 if zero else np.nan)


def overflow_values(negative, fmt, mode: Rounding, rule: str):
    """The results (float64) of overflowing finite values whose signs are ``negative``."""
    negative = np.asarray(negative, dtype=bool)
    big = fmt.max_finite
    if rule == "saturate":
        return np.where(negative, -big, big)
    if rule == "nan":
        return np.full(negative.shape, np.nan)
    stand_in = np.nan if fmt.has_nan and fmt.inf_stand_in == "nan" else big
    inf_value = np.inf if fmt.has_inf else stand_in
    mag = np.where(_to_infinity(negative, mode, fmt), inf_value, big)
    return np.where(negative, -mag, mag)


def overflow_scalar(negative: bool, fmt, mode: Rounding, rule: str) -> float:
    """:func:`overflow_values` for one value."""
    return float(overflow_values(np.array(negative), fmt, mode, rule))


def undefined(values, fmt):
    """Where float64 ``values`` rounded into float format ``fmt`` are undefined: NaN in a format
    without NaN (all False in a format with NaN, where a NaN is the format's own value)."""
    values = np.asarray(values)
    comp = fmt.component
    if comp.kind != "float" or comp.has_nan or values.dtype.kind not in "fc":
        return np.zeros(values.shape, dtype=bool)
    return np.isnan(values)


def fill_undefined(values, fmt):
    """``values`` with :data:`UNDEFINED_PLACEHOLDER` at the undefined elements (the same array
    where there are none), ready for the format's own dtype."""
    mask = undefined(values, fmt)
    if not mask.any():
        return values
    return np.where(mask, UNDEFINED_PLACEHOLDER, values)


def infinity_values(s, fmt, rule: str):
    """The encodings (float64) of the exact infinities ``s`` in ``fmt``."""
    s = np.asarray(s, dtype=np.float64)
    neg = s < 0
    big = fmt.max_finite
    if fmt.has_inf:
        out = s.copy()
    elif rule == "saturate" or not fmt.has_nan or (rule == "ieee" and fmt.inf_stand_in == "max"):
        out = np.where(neg, -big, big)
    else:
        out = np.full(s.shape, np.nan)
    if not fmt.signed:  # -inf: NaN, or 0 saturated where the format has a zero (P3109)
        out = np.where(neg, 0.0 if rule == "saturate" and fmt.has_zero else np.nan, out)
    return out


def special_values(s, fmt, rule: str):
    """The encodings (float64) of exact values ``s`` that are NaN or ±inf: NaN for a NaN, in
    every format (in a format without NaN, the marker of an undefined element).

    >>> from exactref._formats import FORMATS
    >>> special_values(np.array([np.inf, np.nan]), FORMATS["float8_e4m3fnuz"], "ieee").tolist()
    [nan, nan]
    """
    s = np.asarray(s, dtype=np.float64)
    nan = np.isnan(s)
    return np.where(nan, np.nan, infinity_values(np.where(nan, 0.0, s), fmt, rule))


def zero_values(negative, fmt):
    """The encodings (float64) of exact zeros whose signs are ``negative``."""
    negative = np.asarray(negative, dtype=bool)
    if not fmt.has_zero:
        return np.full(negative.shape, np.nan)
    return np.where(negative & fmt.has_negzero, -0.0, 0.0)


def rounds_to_nothing(shape, fmt, mode: Rounding):
    """The results (float64) of nonzero values that round to zero in a format without zero."""
    fill = np.nan if mode in (Rounding.TOWARD_ZERO, Rounding.TOWARD_NEGATIVE) else \
        fmt.smallest_subnormal
    return np.full(shape, fill)


def integer_overflow(k, fmt, rule: str):
    """Exact integers ``k`` (a Python int, an integer or object array) brought into the integer
    format ``fmt``'s range by the overflow rule: ``"saturate"`` clamps them to ``[int_min,
    int_max]``, ``"wrap"`` reduces them modulo ``2**bits`` into it (two's complement); any other
    rule (``"error"``) returns them as they are, for the caller to raise.

    >>> from exactref._formats import FORMATS
    >>> integer_overflow(300, FORMATS["int8"], "wrap"), integer_overflow(-129, FORMATS["int8"], "wrap")
    (44, 127)
    >>> integer_overflow(np.array([300, -300]), FORMATS["uint8"], "saturate").tolist()
    [255, 0]
    """
    lo, hi = fmt.int_min, fmt.int_max
    if rule == "saturate":
        if isinstance(k, int):
            return min(max(k, lo), hi)
        return np.clip(k, lo, hi)
    if rule == "wrap":
        return (k - lo) % (hi - lo + 1) + lo
    return k
