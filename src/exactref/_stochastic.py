"""Stochastic rounding: ``rounding="stochastic"``, its random bits, and :class:`StochasticResult`.

``rounding="stochastic"`` is not a :class:`~exactref.Rounding` member (those six modes are
deterministic and every rounding path iterates them): it is parsed here, by
:func:`resolve_stochastic`, into a :class:`Stochastic` request, and the op's exact value goes to
:func:`stochastic_result` instead of the deterministic rounding. The model and its sources are
in :mod:`exactref._exact._stochastic` and ``docs/stochastic_rounding.md``.

>>> import exactref as er
>>> x = er.asarray([1 + 2.0**-10], "float32")
>>> r = er.cast(x, "bfloat16", rounding="stochastic")
>>> r.down.tolist(), r.up.tolist(), r.probability.tolist()
([1.0], [1.0078125], [0.125])
>>> er.cast(x, "bfloat16", rounding="stochastic", random_bits=np.array([0xE000], np.uint16)
...         ).rounded.tolist()  # 0x2000 discarded + 0xE000 random: a carry out of 16 bits
[1.0078125]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._array import Array
from ._exact import STOCHASTIC_MAX_WIDTH as MAX_WIDTH
from ._exact import Rounding, ulp
from ._exact import stochastic_neighbours as neighbours
from ._result import Coverage, Result, actual_parts, unmask

__all__ = ["STOCHASTIC", "Stochastic", "StochasticResult", "is_stochastic",
           "resolve_stochastic", "stochastic_result"]

#: The spellings of the stochastic mode: exactref's, and PTX's modifier ``.rs``.
STOCHASTIC = ("stochastic", "rs")


def is_stochastic(rounding) -> bool:
    """Whether ``rounding`` asks for stochastic rounding (a string, any case)."""
    return isinstance(rounding, str) and rounding.strip().lower() in STOCHASTIC


@dataclass(frozen=True)
class Stochastic:
    """A stochastic-rounding request: ``bits`` (an int64 numpy array of random bits, or None)
    and ``width`` (how many random bits: None for ideal stochastic rounding without bits)."""

    bits: np.ndarray | None
    width: int | None


def resolve_stochastic(rounding, random_bits=None, random_bits_width=None):
    """A :class:`Stochastic` when ``rounding`` is stochastic, else None (and then no random bits
    may be given). ``random_bits``: non-negative integers below ``2**width``, unsigned or signed
    integer arrays; ``random_bits_width`` defaults to the bit width of an unsigned dtype (16 for
    uint16, as PTX's bf16 rule reads 16 bits) and must be given for other integer dtypes."""
    if not is_stochastic(rounding):
        if random_bits is not None or random_bits_width is not None:
            raise ValueError(
                f"random_bits= and random_bits_width= go with rounding='stochastic'; got "
                f"rounding={rounding!r}. Pass rounding='stochastic', or drop the random bits")
        return None
    width = random_bits_width
    if width is not None and (isinstance(width, bool) or not isinstance(width, (int, np.integer))
                              or not 1 <= width <= MAX_WIDTH):
        raise ValueError(f"random_bits_width={width!r}; expected an integer from 1 to "
                         f"{MAX_WIDTH} (PTX's cvt.rs reads 16 for bfloat16, 13 for float16, "
                         f"8 for the float8/6/4 formats)")
    if random_bits is None:
        return Stochastic(None, None if width is None else int(width))
    bits = np.asarray(random_bits)
    if bits.dtype.kind not in "ui":
        raise ValueError(f"random_bits must be an array of integers (uint8, uint16, uint32...); "
                         f"got dtype {bits.dtype}. Draw them as integers, e.g. "
                         f"numpy.random.default_rng().integers(0, 2**16, shape, dtype=np.uint16)")
    if width is None:
        if bits.dtype.kind != "u":
            raise ValueError(f"random_bits of dtype {bits.dtype}: say how many bits each holds "
                             f"with random_bits_width= (only unsigned dtypes imply it)")
        width = bits.dtype.itemsize * 8
        if width > MAX_WIDTH:
            raise ValueError(f"random_bits of dtype {bits.dtype} imply {width} random bits; at "
                             f"most {MAX_WIDTH} are supported: pass random_bits_width=")
    if bits.size and (int(bits.min()) < 0 or int(bits.max()) >= 2 ** int(width)):
        raise ValueError(f"random_bits must lie in [0, 2**{width}) for random_bits_width="
                         f"{width}; got values from {int(bits.min())} to {int(bits.max())}")
    return Stochastic(bits.astype(np.int64), int(width))


class StochasticResult(Result):
    """The Result of a stochastically rounded op.

    ``down``, ``up``: the neighbours toward and away from zero (Arrays of the output format;
    equal where the exact value needs no rounding). ``probability``: per element, the exact
    probability of ``up`` (float64; with ``width`` random bits it is ``numerator / 2**width``,
    ``numerator`` an int64 array). With random bits given, ``rounded`` is the hardware rule's
    result bit for bit and ``covers`` accepts only it; without, ``rounded`` is the nearest of the
    two (ties to even: the exact value rounded to nearest) and ``covers`` accepts exactly the
    neighbours of positive probability. ``tolerance()`` is then one ulp where the value rounds.
    """

    def __init__(self, rounded, candidates, *, down, up, probability, numerator, width,
                 chosen, exact=None, op="", details=None):
        models = ["stochastic rounding with the given random bits" if chosen else
                  "stochastic rounding: either neighbour"]
        super().__init__(rounded, candidates, op=op, models=models, details=details)
        self.down, self.up = down, up
        self.probability = probability
        self.numerator = numerator
        self.width = width
        self.chosen = chosen
        self._exact = exact

    def probability_fraction(self, index):
        """The probability of ``up`` at ``index`` as an exact Fraction (for the ideal model,
        from the exact value; see docs/stochastic_rounding.md for values known to a sticky
        remainder only)."""
        from fractions import Fraction

        flat = int(np.ravel_multi_index(tuple(np.atleast_1d(index)), self.rounded.shape)) \
            if self.rounded.shape else 0
        if self.numerator is not None:
            return Fraction(int(self.numerator.reshape(-1)[flat]), 2 ** self.width)
        if self._exact is None or self.down.numpy().reshape(-1)[flat] == \
                self.up.numpy().reshape(-1)[flat]:
            return Fraction(float(self.probability.reshape(-1)[flat]))
        from ._exact import stochastic_split

        return stochastic_split(self._exact.element(flat), self.rounded.dtype, None)[3]

    def covers(self, actual) -> Coverage:
        """Per element: ``actual`` is one of the allowed values (bit for bit: a zero's sign
        counts, NaN matches NaN; any value where the result is :attr:`undefined`, or where a
        numpy masked array hides the element)."""
        fmt = self.rounded.dtype
        shape = self.rounded.shape
        actual, hidden = unmask(actual)
        a = actual_parts(actual, shape, fmt)[0]
        allowed = [np.asarray(c, dtype=np.float64) for c in self._candidates[0]]
        ok = np.zeros(shape, dtype=bool)
        dist = np.full(shape, np.inf)
        for c in allowed:
            ok |= same_values(a, c)
            with np.errstate(invalid="ignore", over="ignore"):
                d = np.abs(a - c) / ulp(np.asarray(self.rounded._wide(), np.float64), fmt)
            dist = np.fmin(dist, np.where(np.isnan(d), np.inf, d))
        ok |= self.undefined  # an exact NaN in a format without NaN: any value is covered
        if hidden is not None:
            ok |= hidden
        lo, hi = self.lowest, self.highest
        cov = Coverage(ok, np.where(ok, 0.0, np.maximum(dist, 0.0)), a, lo, hi, fmt,
                       undefined=self.undefined, masked=hidden)
        cov.reference = self
        return cov

    def __repr__(self) -> str:
        how = "given random bits" if self.chosen else "either neighbour"
        return f"StochasticResult({self.op}, {how}: rounded={self.rounded!r})"


def same_values(a, b):
    """Elementwise: the same value bit for bit as float64 (NaN equals NaN, -0 differs from +0)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def stochastic_result(exact, out, rule: str, spec: Stochastic, shape, *, op="",
                      details=None) -> StochasticResult:
    """Round the exact values ``exact`` (one ExactArray of ``shape``) stochastically into the
    real float format ``out``."""
    check_format(out)
    fmt = out.component
    shape = tuple(shape)
    nb = neighbours(exact, fmt, rule, spec.width)
    n = exact.size
    numerator = None if nb.num is None else nb.num.reshape(shape)
    if spec.bits is not None:
        try:
            bits = np.broadcast_to(spec.bits, shape).reshape(n)
        except ValueError:
            raise ValueError(f"random_bits of shape {spec.bits.shape} do not broadcast to the "
                             f"output shape {shape}; give one random number per output "
                             f"element") from None
        chosen = nb.choose(bits)
        rounded = _array(chosen, out, shape)
        cands = [[chosen.reshape(shape)]]
    else:
        nearest = exact.round(fmt, Rounding.NEAREST_EVEN, rule)[0]
        rounded = _array(nearest, out, shape)
        cands = [[nb.down.reshape(shape), nb.up.reshape(shape)]]
    res = StochasticResult(rounded, cands, down=_array(nb.down, out, shape),
                           up=_array(nb.up, out, shape), probability=nb.prob.reshape(shape),
                           numerator=numerator, width=spec.width, chosen=spec.bits is not None,
                           exact=exact, op=op, details=dict(details or {}, rounding="stochastic",
                                                            overflow=rule))
    return res


def check_format(out) -> None:
    """Stochastic rounding takes real float formats with a zero and both signs."""
    comp = out.component
    if out.kind != "float" or not comp.has_zero or not comp.signed:
        raise ValueError(
            f"rounding='stochastic' rounds into real float formats with a zero and signed "
            f"values; {out.name} is not one. Round into a float format (and convert "
            f"afterwards), or use a deterministic rounding mode")


def _array(values, out, shape) -> Array:
    from ._operands import to_array

    return to_array([np.asarray(values).reshape(-1)], out, shape)
