"""Exact scalar values: any binary value, its sign, and complex pairs of them.

>>> from exactref import FloatValue
>>> v = FloatValue(0.1)
>>> v.hex(), v.to_fraction()
('0x1.999999999999ap-4', Fraction(3602879701896397, 36028797018963968))
>>> FloatValue(-0.0).negative, FloatValue(float("nan")).is_nan
(True, True)
>>> FloatValue(2**64 + 1) > 2**64
True
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
import sys
from fractions import Fraction

__all__ = ["FloatValue", "ComplexValue"]

_FINITE, _ZERO, _INF, _NAN = "finite", "zero", "inf", "nan"


def _not_binary(value) -> ValueError:
    return ValueError(
        f"{value!r} is not a binary fraction (its denominator is not a power of two), so no "
        f"binary format holds it exactly; pass a float, an int, or a Fraction such as "
        f"Fraction(3, 8)"
    )


_HEX = re.compile(r"^([+-]?)0x([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?\d+))?$")


def _parse_text(text: str):
    """The exact value of a hex float (any number of digits), ``inf``/``nan``, or a decimal
    that is a binary fraction (``"0.5"``; ``"0.1"`` raises)."""
    t = text.strip().lower()
    if t.lstrip("+-") in ("inf", "infinity", "nan"):
        return float(t)
    m = _HEX.match(t)
    if m and (m.group(2) or m.group(3)):
        sign, whole, frac, exp = m.group(1), m.group(2) or "0", m.group(3) or "", m.group(4)
        value = Fraction(int(whole + frac, 16), 16 ** len(frac)) * Fraction(2) ** int(exp or 0)
        if sign == "-":
            return -0.0 if value == 0 else -value
        return value
    try:
        value = Fraction(t)
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a binary value; expected a hex float such as '0x1.8p+1', "
            f"a decimal that is a binary fraction such as '0.375', 'inf' or 'nan'") from None
    if t.startswith("-") and value == 0:
        return -0.0
    return value


class FloatValue:
    """An exact binary value: any dyadic rational, ±0, ±inf or NaN.

    Built from a Python int or float, a Fraction whose denominator is a power of two, a numpy
    or ml_dtypes scalar, another FloatValue, or the strings ``"inf"``, ``"-inf"``, ``"nan"`` and
    hex floats (``"0x1.8p+1"``). Ordering and equality are IEEE's (NaN is unordered, -0 == +0).
    """

    __slots__ = ("_kind", "_negative", "_fraction")

    def __init__(self, value=0):
        if isinstance(value, FloatValue):
            self._kind, self._negative, self._fraction = (value._kind, value._negative,
                                                          value._fraction)
            return
        if isinstance(value, str):
            value = _parse_text(value)
        if isinstance(value, decimal.Decimal):
            if not value.is_finite():
                value = float(value)
            else:
                value = Fraction(value)  # exact; a non-binary decimal raises below
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, numbers.Integral):
            value = int(value)
            self._set_fraction(Fraction(value), value == 0 and False)
            return
        if isinstance(value, Fraction):
            if value.denominator & (value.denominator - 1):
                raise _not_binary(value)
            self._set_fraction(value, False)
            return
        if isinstance(value, numbers.Real) or hasattr(value, "__float__"):
            if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
                raise TypeError(f"{value!r} is complex; use ComplexValue")
            f = float(value)  # numpy and ml_dtypes scalars widen to float64 exactly
            if math.isnan(f):
                self._kind, self._negative, self._fraction = _NAN, math.copysign(1, f) < 0, None
            elif math.isinf(f):
                self._kind, self._negative, self._fraction = _INF, f < 0, None
            else:
                self._set_fraction(Fraction(f), math.copysign(1.0, f) < 0)
            return
        raise TypeError(
            f"cannot make a FloatValue from {type(value).__name__}; expected int, float, a "
            f"binary Fraction, a numpy scalar or a FloatValue")

    def _set_fraction(self, frac: Fraction, negzero: bool):
        if frac == 0:
            self._kind, self._negative, self._fraction = _ZERO, negzero, Fraction(0)
        else:
            self._kind, self._negative, self._fraction = _FINITE, frac < 0, frac

    @classmethod
    def _from_parts(cls, kind, negative, fraction=None) -> FloatValue:
        v = cls.__new__(cls)
        v._kind, v._negative, v._fraction = kind, negative, fraction
        return v

    # ---------------------------------------------------------------- classification
    @property
    def negative(self) -> bool:
        """True when the sign bit is set (for -0.0 too)."""
        return self._negative

    @property
    def is_nan(self) -> bool:
        return self._kind == _NAN

    @property
    def is_inf(self) -> bool:
        return self._kind == _INF

    @property
    def is_zero(self) -> bool:
        return self._kind == _ZERO

    @property
    def is_finite(self) -> bool:
        return self._kind in (_FINITE, _ZERO)

    # ---------------------------------------------------------------- conversions
    def to_fraction(self) -> Fraction:
        """The exact value as a Fraction (ValueError for NaN and infinities)."""
        if not self.is_finite:
            raise ValueError(f"{self!r} has no exact rational value")
        return self._fraction

    def as_integer_ratio(self) -> tuple[int, int]:
        f = self.to_fraction()
        return f.numerator, f.denominator

    def __float__(self) -> float:
        """The value rounded to nearest-even into float64."""
        if self._kind == _NAN:
            return math.copysign(math.nan, -1.0 if self._negative else 1.0)
        if self._kind == _INF:
            return -math.inf if self._negative else math.inf
        if self._kind == _ZERO:
            return -0.0 if self._negative else 0.0
        try:
            return float(self._fraction)
        except OverflowError:
            return -math.inf if self._negative else math.inf

    def hex(self) -> str:
        """The exact value in C99 hex notation (as many digits as it needs).

        >>> FloatValue(1.5).hex(), FloatValue(2**60 + 1).hex(), FloatValue(-0.0).hex()
        ('0x1.8p+0', '0x1.000000000000001p+60', '-0x0p+0')
        """
        sign = "-" if self._negative else ""
        if self._kind == _NAN:
            return "nan"
        if self._kind == _INF:
            return sign + "inf"
        if self._kind == _ZERO:
            return sign + "0x0p+0"
        f = abs(self._fraction)
        num, den = f.numerator, f.denominator
        k = den.bit_length() - 1
        # strip trailing zero bits of the numerator
        tz = (num & -num).bit_length() - 1
        num >>= tz
        exp = tz - k + num.bit_length() - 1
        frac_bits = num.bit_length() - 1
        digits = (frac_bits + 3) // 4
        mant = num - (1 << frac_bits)
        mant <<= digits * 4 - frac_bits
        tail = f".{mant:0{digits}x}" if digits else ""
        return f"{sign}0x1{tail}p{exp:+d}"

    # ---------------------------------------------------------------- comparison
    def _key(self):
        if self._kind == _INF:
            return -math.inf if self._negative else math.inf
        return self._fraction

    @staticmethod
    def _other(other):
        if isinstance(other, FloatValue):
            return other
        if isinstance(other, (numbers.Real, Fraction)):
            try:
                return FloatValue(other)
            except ValueError:
                return None
        return None

    def _cmp(self, other, op):
        o = self._other(other)
        if o is None:
            if isinstance(other, Fraction):  # non-binary rationals still compare exactly
                return op(self._key(), other) if not self.is_nan else False
            return NotImplemented
        if self.is_nan or o.is_nan:
            return False
        return op(self._key(), o._key())

    def __eq__(self, other):
        return self._cmp(other, lambda a, b: a == b)

    def __lt__(self, other):
        return self._cmp(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._cmp(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._cmp(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._cmp(other, lambda a, b: a >= b)

    def __hash__(self):
        if self._kind == _NAN:
            return hash(math.nan)
        return hash(self._key())

    def __neg__(self) -> FloatValue:
        frac = -self._fraction if self._fraction is not None else None
        return FloatValue._from_parts(self._kind, not self._negative, frac)

    def __abs__(self) -> FloatValue:
        frac = abs(self._fraction) if self._fraction is not None else None
        return FloatValue._from_parts(self._kind, False, frac)

    def __repr__(self) -> str:
        if self.is_nan:
            return "FloatValue(nan)"
        f = float(self)
        if self._kind != _FINITE or (math.isfinite(f) and Fraction(f) == self._fraction):
            return f"FloatValue({f!r})"
        return f"FloatValue({self.hex()!r})"


class ComplexValue:
    """An exact complex value: a pair of :class:`FloatValue` parts.

    >>> z = ComplexValue(1.5, -0.0)
    >>> z.real, z.imag.negative, complex(z)
    (FloatValue(1.5), True, (1.5-0j))
    """

    __slots__ = ("real", "imag")

    def __init__(self, real=0, imag=None):
        if imag is None and isinstance(real, ComplexValue):
            real, imag = real.real, real.imag
        elif imag is None and isinstance(real, numbers.Complex) and not isinstance(real,
                                                                                  numbers.Real):
            real, imag = complex(real).real, complex(real).imag
        elif imag is None:
            imag = 0
        object.__setattr__(self, "real", FloatValue(real))
        object.__setattr__(self, "imag", FloatValue(imag))

    def __setattr__(self, name, value):
        raise AttributeError("ComplexValue is immutable")

    @property
    def is_nan(self) -> bool:
        return self.real.is_nan or self.imag.is_nan

    @property
    def is_inf(self) -> bool:
        return self.real.is_inf or self.imag.is_inf

    @property
    def is_zero(self) -> bool:
        return self.real.is_zero and self.imag.is_zero

    def __complex__(self) -> complex:
        return complex(float(self.real), float(self.imag))

    def hex(self) -> str:
        return f"({self.real.hex()}, {self.imag.hex()})"

    def conjugate(self) -> ComplexValue:
        return ComplexValue(self.real, -self.imag)

    def __eq__(self, other):
        if isinstance(other, (numbers.Complex, FloatValue)) and not isinstance(other,
                                                                               ComplexValue):
            try:
                other = ComplexValue(other)
            except (TypeError, ValueError):
                return NotImplemented
        if not isinstance(other, ComplexValue):
            return NotImplemented
        return self.real == other.real and self.imag == other.imag

    def __hash__(self):
        # equal to hash(complex(...)) and hash(float) for equal values, as Python's numbers
        h = (hash(self.real) + sys.hash_info.imag * hash(self.imag)) & ((1 << 64) - 1)
        if h >= 1 << 63:
            h -= 1 << 64
        return -2 if h == -1 else h

    def __repr__(self) -> str:
        return f"ComplexValue({self.real!r}, {self.imag!r})"
