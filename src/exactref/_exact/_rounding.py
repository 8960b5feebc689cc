"""Rounding modes and overflow rules: the two choices every rounding step takes."""

from __future__ import annotations

import enum

__all__ = ["Rounding", "resolve_rounding", "resolve_overflow", "resolve_modes", "FLOAT_OVERFLOW", "INT_OVERFLOW"]


class Rounding(enum.Enum):
    """IEEE 754 rounding-direction attributes, plus round-to-odd.

    ``NEAREST_EVEN`` (roundTiesToEven, the default), ``NEAREST_AWAY`` (roundTiesToAway),
    ``TOWARD_ZERO``, ``TOWARD_POSITIVE``, ``TOWARD_NEGATIVE``, and ``ODD`` (truncate, then set the
    last bit when anything was cut off: rounding to odd with two extra bits makes any later
    rounding correct).

    >>> Rounding("toward_zero")
    <Rounding.TOWARD_ZERO: 'toward_zero'>
    """

    NEAREST_EVEN = "nearest_even"
    NEAREST_AWAY = "nearest_away"
    TOWARD_ZERO = "toward_zero"
    TOWARD_POSITIVE = "toward_positive"
    TOWARD_NEGATIVE = "toward_negative"
    ODD = "odd"

    def __repr__(self) -> str:
        return f"<Rounding.{self.name}: {self.value!r}>"

    @property
    def is_nearest(self) -> bool:
        return self in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY)


_MODE_ALIASES = {
    "rne": Rounding.NEAREST_EVEN, "nearest": Rounding.NEAREST_EVEN, "even": Rounding.NEAREST_EVEN,
    "rna": Rounding.NEAREST_AWAY, "away": Rounding.NEAREST_AWAY,
    "rz": Rounding.TOWARD_ZERO, "rtz": Rounding.TOWARD_ZERO, "down_magnitude": Rounding.TOWARD_ZERO,
    "ru": Rounding.TOWARD_POSITIVE, "up": Rounding.TOWARD_POSITIVE, "ceil": Rounding.TOWARD_POSITIVE,
    "rd": Rounding.TOWARD_NEGATIVE, "down": Rounding.TOWARD_NEGATIVE,
    "floor": Rounding.TOWARD_NEGATIVE, "ro": Rounding.ODD,
}

#: Overflow rules of float (and complex) formats, and of integer formats.
FLOAT_OVERFLOW = ("ieee", "saturate", "nan")
INT_OVERFLOW = ("wrap", "error", "saturate")


def resolve_rounding(mode) -> Rounding:
    """A :class:`Rounding` from itself, its value or name, or a short alias (``"rd"``)."""
    if isinstance(mode, Rounding):
        return mode
    if isinstance(mode, str):
        key = mode.strip().lower()
        for r in Rounding:
            if key in (r.value, r.name.lower()):
                return r
        if key in _MODE_ALIASES:
            return _MODE_ALIASES[key]
    names = ", ".join(r.name for r in Rounding)
    if isinstance(mode, str) and mode.strip().lower() in ("stochastic", "rs"):
        # Note: stochastic rounding is no Rounding member; the ops that take it parse it first
        raise ValueError(f"rounding={mode!r} is taken by the elementwise ops (er.add, er.cast, "
                         f"...) and er.matmul, not here; expected an er.Rounding member "
                         f"({names})")
    raise ValueError(f"unknown rounding mode {mode!r}; expected an er.Rounding member ({names})")


def resolve_overflow(rule, fmt) -> str:
    """The overflow rule to use for ``fmt``: ``rule`` checked against the format, or its default."""
    comp = fmt.component
    if rule is None:
        return comp.default_overflow
    allowed = INT_OVERFLOW if comp.is_integer else FLOAT_OVERFLOW
    if rule not in allowed:
        raise ValueError(
            f"overflow={rule!r} does not apply to {fmt.name}; expected one of "
            f"{', '.join(map(repr, allowed))}"
        )
    if rule == "nan" and not comp.has_nan:
        raise ValueError(
            f"overflow='nan' is impossible in {fmt.name}, which has no NaN; use 'saturate'"
        )
    return rule


def resolve_modes(rounding, overflow, fmt) -> tuple:
    """``(mode, rule)``: the rounding mode (:func:`resolve_rounding`) and the overflow rule for
    the output format ``fmt`` (:func:`resolve_overflow`), checked in that order, as every op
    resolves its ``rounding=`` and ``overflow=`` keywords."""
    return resolve_rounding(rounding), resolve_overflow(overflow, fmt)
