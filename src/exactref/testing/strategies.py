"""Hypothesis strategies for every exactref format: exact values, er.Arrays, formats.

hypothesis draws floats of 16, 32 and 64 bits; these strategies draw the values of any format
in :data:`exactref.FORMATS`, bfloat16 and every float8, float6 and float4 format included, as
Python numbers that the format holds exactly (float for float formats, complex, int, bool).
hypothesis is imported when a strategy is built, so importing this module does not need it.

>>> from hypothesis import given, settings
>>> import exactref as er
>>> from exactref.testing import strategies as xst
>>> @settings(max_examples=20, deadline=None, database=None)
... @given(xst.values("float8_e4m3fn", allow_nan=False))
... def test_double_is_exact_or_nan(v):
...     r = er.multiply(er.asarray(v, "float8_e4m3fn"), 2.0).rounded.value()
...     assert r.is_nan or r == 2 * v  # 448 * 2 overflows: NaN in this format
>>> test_double_is_exact_or_nan()

Finite values are drawn by their index in the format's ordered value set (so they shrink toward
zero) or, one time in four, from the format's edge values: ±0, ±1, the smallest and largest
subnormals, the smallest normal, the two largest finite values, the bounds, ±inf and NaN, as the
arguments allow. float64 draws its finite values from ``hypothesis.strategies.floats``.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .._array import asarray
from .._exact import FloatValue
from .._formats import FORMATS, Format
from .._formats import dtype as _resolve_dtype

__all__ = ["values", "arrays", "formats"]

#: Kinds :func:`formats` accepts; "integer" is int and uint.
_KIND_GROUPS = {"bool": ("bool",), "uint": ("uint",), "int": ("int",), "float": ("float",),
                "complex": ("complex",), "integer": ("int", "uint")}

#: Float formats hypothesis draws itself, with its ``floats(width=...)``.
# Note: float64 only. hypothesis 6.155's floats(width=16), and floats(width=32) with a bound,
# reject most of what they generate (a list of 10 fails the filter_too_much health check); the
# index grid rejects nothing.
_NATIVE_WIDTH = {"float64": 64}

_EDGE_ODDS = 4  # one draw in this many comes from the edge values


def _invalid(message: str):
    from hypothesis.errors import InvalidArgument

    return InvalidArgument(message)


# ------------------------------------------------------------------------------- formats
def formats(kind=None):
    """A strategy for :class:`~exactref.Format` objects, in :data:`~exactref.FORMATS` order.

    ``kind``: None for every format, or one of ``"bool"``, ``"int"``, ``"uint"``,
    ``"integer"`` (int and uint), ``"float"``, ``"complex"``, or a sequence of them.
    """
    import hypothesis.strategies as st

    names = [kind] if isinstance(kind, str) else list(kind) if kind is not None else None
    if names is None:
        kinds = {k for group in _KIND_GROUPS.values() for k in group}
    else:
        unknown = [n for n in names if n not in _KIND_GROUPS]
        if unknown or not names:
            raise _invalid(f"formats(kind={kind!r}): expected None or one or more of "
                           f"{', '.join(map(repr, _KIND_GROUPS))}")
        kinds = {k for n in names for k in _KIND_GROUPS[n]}
    return st.sampled_from([f for f in FORMATS.values() if f.kind in kinds])


# ------------------------------------------------------------------------------- values
def values(fmt, *, min_value=None, max_value=None, allow_nan=None, allow_infinity=None,
           allow_subnormal=None, exclude_min=False, exclude_max=False):
    """A strategy for the exact values of format ``fmt`` (any spelling ``er.dtype`` takes).

    Floats: Python floats the format holds exactly; the arguments mean what they mean for
    ``hypothesis.strategies.floats``. ``allow_nan`` and ``allow_infinity`` default to what the
    format has (NaN only without bounds, an infinity only on an unbounded side); asking for one
    the format lacks is an error. Bounds the format cannot hold are rounded inward. -0.0 is
    drawn where the format has it and the bounds admit it (``min_value=0.0`` excludes it, as
    hypothesis orders -0.0 below 0.0).

    Complex formats: Python complex numbers whose parts are drawn as above (bounds apply to
    each part). Integer formats: Python ints within the format's range and the bounds; bool:
    Python bools.
    """
    f = _resolve_dtype(fmt)
    if f.kind == "complex":
        import hypothesis.strategies as st

        part = values(f.component, min_value=min_value, max_value=max_value,
                      allow_nan=allow_nan, allow_infinity=allow_infinity,
                      allow_subnormal=allow_subnormal, exclude_min=exclude_min,
                      exclude_max=exclude_max)
        return st.builds(complex, part, part)
    if f.kind == "float":
        return _float_values(f, min_value, max_value, allow_nan, allow_infinity,
                             allow_subnormal, exclude_min, exclude_max)
    for name, flag in (("allow_nan", allow_nan), ("allow_infinity", allow_infinity),
                       ("allow_subnormal", allow_subnormal)):
        if flag:
            raise _invalid(f"{name}=True, but {f.name} is an integer format; leave it out")
    return _integer_values(f, min_value, max_value, exclude_min, exclude_max)


def _with_edges(core, edges, convert=None):
    """``core`` (its draws passed through ``convert``), and one draw in ``_EDGE_ODDS`` from
    ``edges`` (simplest first)."""
    import hypothesis.strategies as st

    if core is None:
        return st.sampled_from(edges)
    edge = st.sampled_from(edges) if edges else None

    # Note: a composite rather than core.map(convert): hypothesis prints a mapped value as the
    # call that made it ("at(1)"), a composite's by its repr, the value itself
    @st.composite
    def one_value(draw):
        if edge is not None and draw(st.integers(0, _EDGE_ODDS - 1)) == _EDGE_ODDS - 1:
            return draw(edge)
        drawn = draw(core)
        return drawn if convert is None else convert(drawn)

    return one_value()


def _integer_values(f: Format, min_value, max_value, exclude_min, exclude_max):
    import hypothesis.strategies as st

    lo, hi = f.int_min, f.int_max
    if min_value is not None and not _is_neg_inf(min_value):
        b = _exact_bound(min_value, "min_value")
        lo = max(lo, math.floor(b) + 1 if exclude_min and b == math.floor(b) else math.ceil(b))
    if max_value is not None and not _is_pos_inf(max_value):
        b = _exact_bound(max_value, "max_value")
        hi = min(hi, math.ceil(b) - 1 if exclude_max and b == math.ceil(b) else math.floor(b))
    if lo > hi:
        raise _invalid(f"no {f.name} value lies within min_value={min_value!r} and "
                       f"max_value={max_value!r}")
    if f.kind == "bool":
        return st.sampled_from([v for v in (False, True) if lo <= v <= hi])
    edges = []
    for v in (0, 1, -1, lo, hi, f.int_min, f.int_max):
        if lo <= v <= hi and v not in edges:
            edges.append(v)
    return _with_edges(st.integers(lo, hi), edges)


def _exact_bound(value, name):
    """A bound as an exact number: ±0.0 and ±inf as floats, otherwise a Fraction."""
    if isinstance(value, Fraction):
        return value
    try:
        v = FloatValue(value)
    except (TypeError, ValueError) as err:
        raise _invalid(f"{name}={value!r} is not a number: {err}") from None
    if v.is_nan:
        raise _invalid(f"{name} must not be NaN")
    if v.is_inf or v.is_zero:
        return float(v)
    return v.to_fraction()


def _is_neg_inf(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, Fraction) and v == -math.inf


def _is_pos_inf(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, Fraction) and v == math.inf


def _rank(x):
    """An order key in which -0.0 < 0.0 (hypothesis' order for bounds)."""
    if x == 0:
        return (0, -1 if math.copysign(1.0, x) < 0 else 1)
    return (x, 0)


class _Grid:
    """The finite non-negative values of a float format, indexed 0 (zero), 1, ..., ``top``.

    Index ``k < h`` is the subnormal ``k * 2**(emin - p + 1)``; from ``h = 2**(p - 1)`` on, the
    normal with exponent ``emin + k // h - 1`` and significand ``h + k % h``. Values grow with
    the index, so a signed index orders every finite value.
    """

    def __init__(self, f: Format):
        self.p, self.emin = f.precision, f.emin
        self.h = 1 << (f.precision - 1)
        self.top = (f.emax - f.emin + 1) * self.h + f.max_mantissa - self.h
        self.max_finite = f.max_finite

    def value(self, k: int) -> float:
        if k < self.h:
            return math.ldexp(k, self.emin - self.p + 1)
        e = self.emin + k // self.h - 1
        return math.ldexp(self.h + k % self.h, e - self.p + 1)

    def floor(self, x) -> int:
        """The largest index whose value is <= ``x`` (``x >= 0``, exact)."""
        if x >= self.max_finite:
            return self.top
        xf = float(x)
        if xf < math.ldexp(1.0, self.emin):
            k = math.floor(math.ldexp(xf, self.p - 1 - self.emin))
        else:
            e = math.frexp(xf)[1] - 1
            k = (e - self.emin + 1) * self.h + math.floor(math.ldexp(xf, self.p - 1 - e)) - self.h
        k = min(max(k, 0), self.top)
        while k < self.top and self.value(k + 1) <= x:  # float(x) may have rounded
            k += 1
        while k > 0 and self.value(k) > x:
            k -= 1
        return k

    def lower(self, bound, exclude: bool) -> int:
        """The smallest signed index whose value is >= ``bound`` (> with ``exclude``)."""
        if bound == 0:
            return 0  # the signs of zero are decided by the bounds separately
        if bound > 0:
            k = self.floor(bound)
            return k + 1 if self.value(k) < bound or (exclude and self.value(k) == bound) else k
        k = self.floor(-bound)
        return -(k - 1) if exclude and self.value(k) == -bound else -k

    def upper(self, bound, exclude: bool) -> int:
        """The largest signed index whose value is <= ``bound`` (< with ``exclude``)."""
        return -self.lower(-bound, exclude) if bound != 0 else 0


def _float_values(f: Format, min_value, max_value, allow_nan, allow_infinity, allow_subnormal,
                  exclude_min, exclude_max):
    import hypothesis.strategies as st

    lo_b = None if min_value is None else _exact_bound(min_value, "min_value")
    hi_b = None if max_value is None else _exact_bound(max_value, "max_value")
    if lo_b is not None and hi_b is not None and _rank(lo_b) > _rank(hi_b):
        raise _invalid(f"min_value={min_value!r} is greater than max_value={max_value!r}")

    def in_bounds(v) -> bool:
        if lo_b is not None and (_rank(v) < _rank(lo_b) or exclude_min and v == lo_b and
                                 _rank(v) == _rank(lo_b)):
            return False
        return hi_b is None or not (_rank(v) > _rank(hi_b) or exclude_max and v == hi_b and
                                    _rank(v) == _rank(hi_b))

    grid = _Grid(f)
    has_subnormals = grid.h > 1
    if allow_nan and not f.has_nan:
        raise _invalid(f"allow_nan=True, but {f.name} has no NaN")
    if allow_nan and (lo_b is not None or hi_b is not None):
        raise _invalid("allow_nan=True cannot be combined with min_value or max_value")
    if allow_infinity and not f.has_inf:
        raise _invalid(f"allow_infinity=True, but {f.name} has no infinity")
    if allow_subnormal and not has_subnormals:
        raise _invalid(f"allow_subnormal=True, but {f.name} has no subnormal values")
    nan_ok = f.has_nan and (allow_nan if allow_nan is not None else lo_b is None and hi_b is None)
    infs = [v for v in (math.inf, -math.inf)
            if f.has_inf and allow_infinity is not False and in_bounds(v)
            and (f.signed or v > 0)]
    if allow_infinity and not infs:
        raise _invalid("allow_infinity=True, but min_value and max_value exclude both "
                       "infinities")
    subnormal_ok = has_subnormals and allow_subnormal is not False
    pos_zero = f.has_zero and in_bounds(0.0)
    neg_zero = f.has_negzero and in_bounds(-0.0)

    # the finite values as signed indices lo..hi
    lo = -grid.top if lo_b is None or lo_b == -math.inf else grid.lower(lo_b, exclude_min)
    hi = grid.top if hi_b is None or hi_b == math.inf else grid.upper(hi_b, exclude_max)
    if not f.signed:
        lo = max(lo, 0)
    if not (pos_zero or neg_zero):
        lo, hi = (1 if lo == 0 else lo), (-1 if hi == 0 else hi)
    h = grid.h
    if not subnormal_ok and has_subnormals:
        zero = 0 if (pos_zero or neg_zero) else None
        if 0 < lo < h:
            lo = h
        elif -h < lo < 0:
            lo = h if zero is None else 0
        if -h < hi < 0:
            hi = -h
        elif 0 < hi < h:
            hi = -h if zero is None else 0

    def at(i: int) -> float:
        if i == 0:
            return 0.0 if pos_zero else -0.0
        if not subnormal_ok and abs(i) < h:
            i = h if i > 0 else -h
        v = grid.value(abs(i))
        return -v if i < 0 else v

    finite = lo <= hi
    core = None
    if finite and f.name in _NATIVE_WIDTH:
        core = st.floats(
            min_value=None if lo_b is None or lo_b == -math.inf else (
                -0.0 if lo == 0 and neg_zero else at(lo)),
            max_value=None if hi_b is None or hi_b == math.inf else (
                0.0 if hi == 0 and pos_zero else at(hi)),
            allow_nan=nan_ok, allow_infinity=bool(infs),
            allow_subnormal=None if allow_subnormal is None else subnormal_ok,
            width=_NATIVE_WIDTH[f.name])
    elif finite:
        core = st.integers(lo, hi)

    edges, seen = [], set()

    def add(v):
        key = "nan" if v != v else (v, math.copysign(1.0, v))
        if key not in seen:
            seen.add(key)
            edges.append(v)

    if finite:
        one = grid.lower(1.0, False)
        for i in (0, one, -one, 1, -1, h - 1, 1 - h, h, -h, grid.top, -grid.top,
                  grid.top - 1, 1 - grid.top, lo, hi):
            if lo <= i <= hi and (i == 0 or subnormal_ok or abs(i) >= h):
                add(at(i))
                if i == 0 and pos_zero and neg_zero:
                    add(-0.0)
    for v in infs:
        add(v)
    if nan_ok:
        add(math.nan)
    if core is None and not edges:
        raise _invalid(f"no {f.name} value satisfies min_value={min_value!r}, "
                       f"max_value={max_value!r} and the allow_* arguments")
    return _with_edges(core, edges, None if f.name in _NATIVE_WIDTH else at)


# ------------------------------------------------------------------------------- arrays
def _carrier(f: Format):
    """The numpy dtype hypothesis fills: one that holds every value of ``f`` exactly."""
    if f.kind == "float":
        return np.dtype(np.float64)
    if f.kind == "complex":
        return np.dtype(np.complex128)
    if f.kind == "bool":
        return np.dtype(np.bool_)
    return f.np_dtype if f.bits >= 8 else np.dtype(np.int64)


def arrays(fmt, shape, *, elements=None, fill=None, unique=False, **value_args):
    """A strategy for :class:`~exactref.Array` s of format ``fmt`` and shape ``shape``.

    ``shape``: an int, a tuple, or a strategy for shapes (such as
    ``hypothesis.extra.numpy.array_shapes()``). ``elements``: a strategy for the values (by
    default :func:`values` of ``fmt`` with ``value_args``); ``fill`` and ``unique`` as in
    ``hypothesis.extra.numpy.arrays``.

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=20, deadline=None, database=None)
    ... @given(arrays("bfloat16", (2, 3), allow_nan=False))
    ... def test_shape(a):
    ...     assert a.shape == (2, 3) and a.dtype.name == "bfloat16"
    ...     assert not np.isnan(a.tolist()).any()
    >>> test_shape()
    """
    import hypothesis.extra.numpy as hnp
    import hypothesis.strategies as st

    f = _resolve_dtype(fmt)
    if elements is None:
        elements = values(f, **value_args)
    elif value_args:
        raise _invalid(f"pass either elements or {', '.join(value_args)}, not both")
    carriers = hnp.arrays(_carrier(f), shape, elements=elements, fill=fill, unique=unique)

    @st.composite  # not .map: a falsifying example then prints as the Array's repr
    def one_array(draw):
        return asarray(draw(carriers), f)

    return one_array()
