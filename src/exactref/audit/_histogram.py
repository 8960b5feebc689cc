"""The audit's error histograms: how far a library's outputs lie from the exact rounding.

Every element's *distance* is ``|actual - rounded| / ulp``, where ``rounded`` is the reference
(the op's exact value rounded once into the result format) and ``ulp`` is the spacing of the
result format at the reference: the gap above ``|rounded|``, ``2**(max(e, emin) - p + 1)`` for
``2**e <= |rounded| < 2**(e + 1)``, so the subnormal spacing at the bottom (zero included);
1 for integer formats. A complex element's distance is the larger of its parts'. So an output
one step below a reference that is a power of two is 0.5 ulp away, the next float up 1 ulp.

Elements fall into the buckets of :data:`BUCKETS`:

* ``"0"``: the same value (a NaN where the reference is NaN, the same infinity, a zero of
  either sign for a zero: the ``exact %`` of the audit's table);
* ``"<=0.5"``, ``"<=1"``, ``"<=2"``, ... ``"<=1024"``: a finite distance in ``(0, 0.5]``,
  ``(0.5, 1]``, ``(1, 2]``, ... ``(512, 1024]`` ulps;
* ``">1024"``: a finite distance past 1024 ulps;
* ``"nonfinite"``: a NaN or an infinity where the reference is another value, or a finite
  output where the reference is NaN or infinite.

>>> import numpy as np
>>> from exactref._formats import FORMATS
>>> h = UlpHistogram.of(np.array([1.0, 1.0 + 2**-23, 1.0 - 2**-24, np.nan], np.float32),
...                     np.array([1.0, 1.0, 1.0, 2.0], np.float32), FORMATS["float32"])
>>> h.as_dict()
{'0': 1, '<=0.5': 1, '<=1': 1, 'nonfinite': 1}
>>> h.max_ulps, h.cases, h.within_half
(1.0, 4, 2)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from .._formats import Format
from .._formats import dtype as resolve_dtype

__all__ = ["EDGES", "BUCKETS", "UlpHistogram", "distances", "spacing", "accuracy"]

#: The upper ends of the finite buckets, in ulps: (0, 0.5], (0.5, 1], (1, 2], ... (512, 1024].
EDGES = (0.5,) + tuple(float(2**k) for k in range(11))
#: The buckets' names, in order: the JSON report's keys and the tables' columns.
BUCKETS = ("0",) + tuple(f"<={e:g}" for e in EDGES) + (f">{EDGES[-1]:g}", "nonfinite")
_NONFINITE = len(BUCKETS) - 1
#: A distance past the largest float64 (a float64 output far from a reference near zero) is
#: recorded as the largest float64, so the JSON report stays JSON.
_CAP = sys.float_info.max


def spacing(values, fmt: Format) -> np.ndarray:
    """The spacing of ``fmt`` at each finite value (float64 array): the gap above ``|v|``,
    the subnormal spacing at the bottom; 1 for integer formats.

    >>> from exactref._formats import FORMATS
    >>> spacing(np.array([1.0, 0.75, 0.0, 65504.0]), FORMATS["float16"]).tolist()
    [0.0009765625, 0.00048828125, 5.960464477539063e-08, 32.0]
    """
    comp = fmt.component
    values = np.asarray(values, dtype=np.float64)
    if comp.is_integer:
        return np.ones_like(values)
    with np.errstate(invalid="ignore"):
        _, e = np.frexp(np.abs(np.where(np.isfinite(values), values, 0.0)))
    # frexp: |v| = m * 2**e with 0.5 <= m < 1, so the binade is e - 1 (0 gives e = 0: emin)
    binade = np.maximum(np.where(values == 0, comp.emin, e - 1), comp.emin)
    return np.ldexp(1.0, (binade - comp.precision + 1).astype(np.int32))


def _parts(arr: np.ndarray, complex_: bool) -> list:
    """float64 parts of ``arr``: [real] or [real, imag]."""
    if complex_:
        c = arr.astype(np.complex128)
        return [c.real.copy(), c.imag.copy()]
    return [arr.astype(np.float64)]


def _integer_like(arr: np.ndarray) -> bool:
    if arr.dtype.kind in "biu":
        return True
    try:
        return resolve_dtype(arr.dtype).is_integer
    except (TypeError, ValueError):
        return False


def _integers(v: np.ndarray, wide: bool) -> np.ndarray:
    """Integer values to subtract exactly: int64, or Python integers where int64 could
    overflow (uint64, the int64 extremes)."""
    if not wide:
        return v.astype(np.int64)
    return v.astype(np.uint64 if v.dtype.kind == "u" else np.int64).astype(object)


def _part_distances(a: np.ndarray, r: np.ndarray, fmt: Format) -> np.ndarray:
    """Distances of one part in ulps of ``fmt`` at ``r``; NaN marks a non-finite mismatch."""
    same = (a == r) | (np.isnan(a) & np.isnan(r))
    finite = np.isfinite(a) & np.isfinite(r)
    u = spacing(r, fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.abs(a - r)
        # both finite, but the difference overflows (float64's -max and max): halve first
        big = finite & np.isinf(d)
        d = np.where(big, np.abs(a / 2 - r / 2) / u * 2, d / u)
    d = np.minimum(d, _CAP)
    return np.where(same, 0.0, np.where(finite, d, np.nan))


def distances(actual, rounded, fmt: Format) -> np.ndarray:
    """Each element's distance from ``rounded`` in ulps of ``fmt`` at ``rounded`` (float64,
    flattened; NaN where one is non-finite and the other is not the same value).

    ``actual`` may be of another format than ``fmt`` (a result dtype the policy does not give):
    its values are compared with the reference's.
    """
    a = np.asarray(actual).reshape(-1)
    r = np.asarray(rounded).reshape(-1)
    if fmt.is_integer and _integer_like(a):
        wide = a.dtype.itemsize >= 8 or r.dtype.itemsize >= 8
        return np.abs(_integers(a, wide) - _integers(r, wide)).astype(np.float64)
    complex_ = fmt.kind == "complex" or a.dtype.kind == "c"
    parts = [_part_distances(pa, pr, fmt)
             for pa, pr in zip(_parts(a, complex_), _parts(r, complex_), strict=True)]
    if len(parts) == 1:
        return parts[0]
    d = np.fmax(parts[0], parts[1])  # the larger finite part ...
    return np.where(np.isnan(parts[0]) | np.isnan(parts[1]), np.nan, d)  # ... or nonfinite


@dataclass
class UlpHistogram:
    """Counts per bucket of :data:`BUCKETS` and the largest finite distance, in ulps."""

    counts: list = field(default_factory=lambda: [0] * len(BUCKETS))
    max_ulps: float = 0.0

    @classmethod
    def of(cls, actual, rounded, fmt: Format) -> UlpHistogram:
        """The histogram of ``actual``'s distances from ``rounded`` (see :func:`distances`)."""
        return cls.from_distances(distances(actual, rounded, fmt))

    @classmethod
    def from_distances(cls, d) -> UlpHistogram:
        d = np.asarray(d, dtype=np.float64).reshape(-1)
        nonfinite = np.isnan(d)
        finite = d[~nonfinite]
        # bucket 0: exactly 0; bucket k: (EDGES[k-2], EDGES[k-1]]; past the last edge: ">"
        idx = np.where(finite == 0, 0, 1 + np.searchsorted(EDGES, finite, side="left"))
        counts = np.bincount(idx, minlength=len(BUCKETS)).tolist()
        counts[_NONFINITE] = int(np.count_nonzero(nonfinite))
        return cls([int(c) for c in counts], float(finite.max()) if finite.size else 0.0)

    def __add__(self, other: UlpHistogram) -> UlpHistogram:
        return UlpHistogram([a + b for a, b in zip(self.counts, other.counts, strict=True)],
                            max(self.max_ulps, other.max_ulps))

    @property
    def cases(self) -> int:
        return sum(self.counts)

    @property
    def exact(self) -> int:
        return self.counts[0]

    @property
    def within_half(self) -> int:
        """Elements at most 0.5 ulp from the reference (exact ones included)."""
        return self.counts[0] + self.counts[1]

    @property
    def nonfinite(self) -> int:
        return self.counts[_NONFINITE]

    def as_dict(self, zeros: bool = False) -> dict:
        """``{bucket: count}``, the empty buckets left out unless ``zeros``."""
        return {b: c for b, c in zip(BUCKETS, self.counts, strict=True) if c or zeros}

    def to_json(self) -> dict:
        return {"counts": self.as_dict(zeros=True), "max_ulps": self.max_ulps}


def accuracy(groups) -> list:
    """Per op and result format, the histogram summed over the groups that have one (every
    operand kind and parameter value): ``[(op, result format, groups, UlpHistogram)]`` in the
    order the ops and formats first appear."""
    out: dict = {}
    for g in groups:
        if g.histogram is None:
            continue
        key = (g.op, g.expected_dtype)
        n, h = out.get(key, (0, UlpHistogram()))
        out[key] = (n + 1, h + g.histogram)
    return [(op, dt, n, h) for (op, dt), (n, h) in out.items()]
