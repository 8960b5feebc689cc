"""``Result``: the rounded reference, its tolerance, and ``covers(actual)``.

A Result holds, per element, the reference value (the exact value rounded once) and the outputs
of every modelled implementation of the operation (its "candidates"). The tolerance is the
exact worst case over them, element by element: ``max |candidate - rounded|``. ``covers``
answers, per element, whether an actual output lies within ``[lowest candidate, highest
candidate]``, the outputs a correct implementation may produce.

Rules of ``covers`` (documented in ``docs/add_multiply.md``):

* values are compared exactly (no rounding: every format here is held exactly in float64);
* NaN matches NaN, and only where the reference or a candidate is NaN;
* an infinity is covered only where a candidate is that infinity;
* where every candidate is a zero of one sign, an actual zero must have that sign;
* a complex element is covered when both parts are;
* in a format without NaN (float6_e2m3fn, float6_e3m2fn, float4_e2m1fn), an element whose exact
  value (or a modelled implementation's) is NaN has no result: it is *undefined*
  (``Result.undefined``), ``rounded`` holds the placeholder +0 there, and any value is covered
  (docs/arithmetic.md, "Formats without NaN").
"""

from __future__ import annotations

import warnings

import numpy as np

from ._array import Array, asarray
from ._exact import ulp
from ._formats import Format
from ._formats import dtype as _resolve_dtype
from .ops import get_op

__all__ = ["Result", "Coverage", "AnyOf", "any_of", "Gradients", "WeakCheckWarning", "actual_parts",
           "part_values", "ulps_from_exact", "ulps_text", "unmask"]


class WeakCheckWarning(UserWarning):
    """A check passed, but its tolerance is so wide that it proves little.

    ``covers`` warns when every element is covered and the reference says why the check is
    weak: for the long sums (matmul, gemm, dot, sum) with ``order="any"``, when most of the
    tolerance comes from that order freedom over a large cancellation (the criterion is in
    ``docs/linalg.md``). The message says how to tighten the check. Silence it where a weak
    check is what you mean: ``warnings.simplefilter("ignore", er.WeakCheckWarning)``, or
    pytest's ``filterwarnings``.
    """


def _plain(v):
    """A numpy scalar as the Python number it holds (for readable messages)."""
    v = np.asarray(v)
    return complex(v) if v.dtype.kind == "c" else float(v)


class Coverage:
    """Per-element answer of ``covers``: a boolean array with a summary.

    ``mask`` is the boolean numpy array (also ``numpy.asarray(coverage)``); ``all()`` and
    ``any()`` return Python bools; ``uncovered`` counts the failures; ``worst_index`` is the
    index of the failure farthest outside its allowed interval and ``worst_ulps`` that
    distance in units in the last place of the output format (inf for a NaN or an infinity
    that no implementation produces). ``undefined`` (boolean, the mask's shape) marks the
    elements with no result (an exact NaN in a format without NaN, covered whatever the
    actual holds); ``masked`` the elements a numpy masked array's mask hides (not checked:
    covered whatever they hold); ``summary()`` says how many of each.
    """

    reference = None  # the Result (or AnyOf) whose covers() made it

    def __init__(self, mask, distance_ulps, actual, lo, hi, fmt: Format, undefined=None,
                 masked=None):
        self._start(mask, fmt, undefined, masked)
        self._dist = distance_ulps
        self._actual, self._lo, self._hi = actual, lo, hi

    def _start(self, mask, fmt, undefined, masked):
        self.mask = np.asarray(mask, dtype=bool)
        self.format = fmt
        self.undefined = np.zeros(self.mask.shape, dtype=bool) if undefined is None else \
            np.broadcast_to(np.asarray(undefined, dtype=bool), self.mask.shape)
        self.masked = np.zeros(self.mask.shape, dtype=bool) if masked is None else \
            np.broadcast_to(np.asarray(masked, dtype=bool), self.mask.shape)

    @classmethod
    def _deferred(cls, mask, fmt, fill, undefined=None, masked=None) -> Coverage:
        """A Coverage whose distances, actual values and bounds (``_dist``, ``_actual``,
        ``_lo``, ``_hi``) ``fill()`` computes on first read, as ``(dist, actual, lo, hi)``:
        the same values :meth:`__init__` would have been given, and none of their memory while
        only the mask is read (the fast covers of a Result that is its reference alone)."""
        self = cls.__new__(cls)
        self._start(mask, fmt, undefined, masked)
        self._fill = fill
        return self

    def __getstate__(self):
        if "_fill" in self.__dict__:  # a pickle or copy holds the fields, not the closure
            self.__getattr__("_dist")
        return self.__dict__

    def __getattr__(self, name):
        # reached only where an attribute is missing: the deferred fields of _deferred
        fill = self.__dict__.get("_fill") if name in _DEFERRED else None
        if fill is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._dist, self._actual, self._lo, self._hi = fill()
        del self.__dict__["_fill"]
        return self.__dict__[name]

    def all(self) -> bool:
        return bool(self.mask.all())

    def any(self) -> bool:
        return bool(self.mask.any())

    def __array__(self, dtype=None, copy=None):
        return self.mask if dtype is None else self.mask.astype(dtype)

    def tolist(self):
        return self.mask.tolist()

    @property
    def shape(self):
        return self.mask.shape

    @property
    def uncovered(self) -> int:
        return int(self.mask.size - np.count_nonzero(self.mask))

    @property
    def worst_index(self):
        if self.uncovered == 0:
            return None
        d = np.where(self.mask, -1.0, self._dist)
        flat = int(np.argmax(d))
        return tuple(int(i) for i in np.unravel_index(flat, self.mask.shape))

    @property
    def worst_ulps(self) -> float:
        i = self.worst_index
        return 0.0 if i is None else float(self._dist[i])

    def tolerance_ulps(self) -> np.ndarray:
        """Per element, the reference's tolerance in ulps of the output format (as
        :meth:`Result.tolerance_ulps`; ``inf`` where any output is allowed); NaN everywhere
        for a reference that gives no tolerance. :attr:`tolerance_stats` sums it up."""
        ulps = getattr(self.reference, "tolerance_ulps", None)
        if ulps is None:
            return np.full(self.mask.shape, np.nan)
        return np.asarray(ulps(), dtype=np.float64)

    @property
    def tolerance_stats(self) -> tuple[float, float]:
        """How strong the check was: ``(median, largest)`` tolerance over the elements, in
        ulps of the output format at the reference (``inf`` where any output is allowed; NaN
        where the reference gives no tolerance), over the elements that have a result (the
        :attr:`undefined` ones, where any output is covered, left out).
        ``(0.0, 0.0)``: only the exact rounding is covered; a few ulps: a sharp check; hundreds
        or more: an output far from the exact value passes (see :class:`WeakCheckWarning`)."""
        cached = getattr(self, "_tolerance_stats", None)
        if cached is None:
            ulps = getattr(self.reference, "tolerance_ulps", None)
            if ulps is None:  # a reference that gives no tolerance: unknown
                cached = (float("nan"), float("nan"))
            else:
                values = np.asarray(ulps(), dtype=np.float64)
                if values.shape == self.undefined.shape and self.undefined.any():
                    values = values[~self.undefined]
                values = values.reshape(-1)
                cached = (float(np.median(values)), float(values.max())) if values.size \
                    else (0.0, 0.0)
            self._tolerance_stats = cached
        return cached

    def _strength(self) -> str:
        med, top = self.tolerance_stats
        if np.isnan(med):
            return ""
        return (f"; tolerance median {ulps_text(med)}, max {ulps_text(top)} ulp of "
                f"{self.format.name}")

    def interval(self, index):
        """``(actual, lowest, highest)`` allowed at ``index`` (complex: per part tuples)."""
        return tuple(np.asarray(a)[index] for a in (self._actual, self._lo, self._hi))

    def _undefined_text(self) -> str:
        k = int(np.count_nonzero(self.undefined))
        if not k:
            return ""
        return (f"; no NaN in {self.format.name}: {k} element{'s' if k != 1 else ''} undefined "
                f"(NaN, exact or modelled: any value covered there)")

    def _masked_text(self) -> str:
        k = int(np.count_nonzero(self.masked))
        if not k:
            return ""
        return f"; {k} element{'s' if k != 1 else ''} masked (not checked)"

    @property
    def not_rounded(self) -> np.ndarray:
        """Per element, whether ``actual`` is covered but is not the correctly rounded value
        (the reference): covered only through a modelled implementation's freedom. A boolean
        array of the mask's shape (NaN against NaN, and zeros of either sign, count as
        equal)."""
        cached = getattr(self, "_not_rounded", None)
        if cached is None:
            ref = getattr(self.reference, "rounded", None)
            if ref is None:
                cached = np.zeros(self.mask.shape, dtype=bool)
            else:
                a = np.asarray(self._actual)
                r = np.asarray(ref._wide()).reshape(a.shape)
                with np.errstate(invalid="ignore"):
                    same = (a == r) | (np.isnan(a) & np.isnan(r))
                cached = self.mask & ~same & ~self.undefined & ~self.masked
            self._not_rounded = cached
        return cached

    @property
    def findings(self) -> list:
        """Sentences about what the covered outputs show, not failures: where the reference's
        tolerance includes a function accuracy other than correct rounding, how many covered
        elements are not the correctly rounded value ("not correctly rounded" is a finding)."""
        details = getattr(self.reference, "details", None) or {}
        accuracy = details.get("accuracy")
        if getattr(accuracy, "correct", False) or (
                isinstance(accuracy, (str, int, float)) and accuracy in ("correct", 0)) \
                or accuracy is None:
            return []
        accuracy = getattr(accuracy, "name", accuracy)
        k = int(np.count_nonzero(self.not_rounded))
        if not k:
            return []
        n = self.mask.size
        worst = ulps_from_exact(self.reference, self._actual)
        top = float(np.max(np.where(self.not_rounded, worst, 0.0)))
        try:
            name = f"{float(accuracy):g} ulp"
        except (TypeError, ValueError):
            name = str(accuracy)
        return [f"{k} of {n} elements ({100.0 * k / n:.3g}%) not correctly rounded (up to "
                f"{ulps_text(top)} ulp from the correctly rounded value), within the "
                f"{name!r} accuracy"]

    def summary(self) -> str:
        n = self.mask.size
        if self.uncovered == 0:
            found = "".join(f"; {f}" for f in self.findings)
            return (f"all {n} elements covered{self._undefined_text()}{self._masked_text()}"
                    f"{found}{self._strength()}")
        i = self.worst_index
        actual, lo, hi = (_plain(v) for v in self.interval(i))
        return (f"{self.uncovered} of {n} elements not covered; worst at index {i}: actual "
                f"{actual!r} outside [{lo!r}, {hi!r}] by {self.worst_ulps:g} ulp of "
                f"{self.format.name}{self._undefined_text()}{self._masked_text()}"
                f"{self._strength()}")

    def __bool__(self):
        raise ValueError(
            "the truth value of a Coverage is ambiguous (one answer per element); use "
            ".all() or .any()")

    def __repr__(self) -> str:
        return f"Coverage({self.summary()})"


#: The fields of a Coverage that :meth:`Coverage._deferred` computes on first read.
_DEFERRED = ("_dist", "_actual", "_lo", "_hi")


def ulps_text(ulps: float) -> str:
    """A count of ulps for a message: an integer where it is one, else 3 digits."""
    if not np.isfinite(ulps):
        return "nan" if np.isnan(ulps) else "inf"
    if float(ulps).is_integer() and ulps < 2**53:
        return str(int(ulps))
    return f"{ulps:.3g}"


def ulps_from_exact(result, actual) -> np.ndarray:
    """Per element, how far ``actual`` is from the exact value rounded once (``result.rounded``),
    in ulps of the output format at that value: 0 where they agree (NaN and NaN, zeros of
    either sign), inf where one is NaN or infinite and the other is not; complex: the larger
    of the two parts' distances. A float64 numpy array of the result's shape.

    >>> import exactref as er
    >>> r = er.exp(er.asarray([1.0, 2.0], "bfloat16"))
    >>> er.ulps_from_exact(r, [2.71875, 7.4375]).tolist()
    [0.0, 2.0]
    """
    ref = getattr(result, "rounded", None)
    if not isinstance(ref, Array):
        raise TypeError(f"ulps_from_exact takes a Result (what er.add, er.exp... return) and "
                        f"the actual output, not {type(result).__name__}")
    fmt = ref.dtype
    actual, _ = unmask(actual)
    parts = actual_parts(actual, ref.shape, fmt)
    out = None
    for a, r in zip(parts, part_values(ref), strict=True):
        a = np.asarray(a, dtype=np.float64).reshape(ref.shape)
        r = np.asarray(r, dtype=np.float64).reshape(ref.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            same = (a == r) | (np.isnan(a) & np.isnan(r))
            d = np.abs(a - r) / ulp(r, fmt)
        d = np.where(same, 0.0, np.where(np.isfinite(d), d, np.inf))
        out = d if out is None else np.maximum(out, d)
    return np.asarray(out, dtype=np.float64)


def part_values(array: Array):
    """float64 parts of an Array's values: [real] or [real, imag]."""
    wide = array._wide()  # float64 data is its own view: no copy
    if array.dtype.kind == "complex":
        return [wide.real.astype(np.float64), wide.imag.astype(np.float64)]
    return [wide.astype(np.float64, copy=False)]


def _coverage(mask, dist, act, lo, hi, fmt, undef, hidden) -> Coverage:
    """The Coverage of a check, every :attr:`Result.undefined` element (no result exists: any
    value is as good as any other) and every element a masked array hides (not checked)
    covered at distance 0."""
    if undef.any():
        mask, dist = mask | undef, np.where(undef, 0.0, dist)
    if hidden is not None:
        mask, dist = mask | hidden, np.where(hidden, 0.0, dist)
    return Coverage(mask, dist, act, lo, hi, fmt, undefined=undef, masked=hidden)


def unmask(actual):
    """``(data, hidden)``: a numpy masked array's data and its mask (a boolean array of its
    shape; the hidden elements are not checked, whatever they hold), or ``(actual, None)``."""
    data = getattr(actual, "rounded", actual)
    if isinstance(data, np.ma.MaskedArray):
        return np.ma.getdata(data), np.ma.getmaskarray(data)
    return actual, None


def _actual_array(actual) -> Array:
    """The actual output as an Array (numpy's own data read, not copied)."""
    data = getattr(actual, "rounded", actual)
    if isinstance(data, np.ndarray) and data.dtype.kind in "fiub":
        return Array(data, _resolve_dtype(data.dtype))  # numpy's own data: read, not copied
    return asarray(data) if not isinstance(data, Array) else data


def actual_parts(actual, shape, fmt: Format, arr: Array | None = None):
    arr = _actual_array(actual) if arr is None else arr
    parts = part_values(arr)
    if fmt.kind == "complex" and len(parts) == 1:
        parts.append(np.zeros_like(parts[0]))
    if fmt.kind != "complex" and len(parts) == 2:
        raise TypeError(
            f"the actual output is complex but the reference is {fmt.name}; compare the real "
            f"part, or check the operation's result dtype")
    # Note: as torch.testing.assert_close, no broadcasting: an output of another shape is
    # a wrong output (a kernel that returns one row where two were due must not pass)
    if tuple(arr.shape) != tuple(shape):
        raise ValueError(
            f"the actual output has shape {tuple(arr.shape)}, the reference {tuple(shape)}; "
            f"they must be equal (no broadcasting: a wrong shape is a wrong output). Reshape "
            f"the output, or broadcast it yourself (numpy.broadcast_to(out, {tuple(shape)})) "
            f"where that is what you mean")
    return parts


def _pair(re, im):
    """A complex array from its parts (``re + 1j * im`` would turn ``1j * inf`` into NaN)."""
    out = np.empty(np.shape(re), dtype=np.complex128)
    out.real, out.imag = re, im
    return out


class Result:
    """What an exactref operation returns.

    ``rounded``: the reference, an :class:`~exactref.Array` (the exact value rounded once).
    ``tolerance()``: per element, the largest distance from ``rounded`` to the output of any
    modelled implementation. ``covers(actual)``: whether a correct implementation could have
    produced each element of ``actual``. ``undefined``: where no result exists (a NaN, exact or
    modelled, in a format without NaN; see :attr:`undefined`).
    """

    inputs = None  # the operands as given: {"x": ..., "y": ..., "alpha": ...}
    # Note: numpy must not compare a Result element by element (``result == out`` with a numpy
    # ``out`` would give an array whose truth value is ambiguous): its operators defer, the
    # comparison is False, and the pytest plugin explains it
    __array_ufunc__ = None

    def __init__(self, rounded, candidates, *, op="", models=(), details=None):
        self.rounded = rounded
        self._candidates = candidates  # list (per part) of lists of float64 arrays
        self.op = op
        self.models = tuple(models)
        self.details = details or {}

    # ------------------------------------------------------------------ candidate bounds
    def _bounds(self):
        """Per part: ``(lowest, highest, nan_possible, zero sign fixed, fixed zero negative)``
        over the candidates (computed once)."""
        cached = getattr(self, "_bounds_cache", None)
        if cached is None:
            cached = self._bounds_cache = self._compute_bounds()
        return cached

    def _compute_bounds(self):
        out = []
        for cands in self._candidates:
            if len(cands) == 1:  # one candidate (a fast lane): its own bounds
                c = np.asarray(cands[0], dtype=np.float64)
                zero = c == 0
                out.append((c, c, np.isnan(c), zero, zero & np.signbit(c)))
                continue
            stack = np.stack(cands).astype(np.float64, copy=False)
            with np.errstate(invalid="ignore"):
                lo = np.fmin.reduce(stack, axis=0)
                hi = np.fmax.reduce(stack, axis=0)
            nan = np.isnan(stack).any(axis=0)
            # signs of zero: fixed where every candidate is a zero of one sign
            zero = (stack == 0).all(axis=0)
            neg = np.signbit(stack).all(axis=0)
            pos = (~np.signbit(stack)).all(axis=0)
            out.append((lo, hi, nan, zero & (neg | pos), zero & neg))
        return out

    def _reference_only(self) -> bool:
        """Whether the reference is all there is: one real part whose one candidate is the
        very array ``rounded`` holds (a fast lane's Result: every modelled implementation is
        the single rounding), its bounds Result's own (a subclass may widen them)."""
        c = self._candidates
        own = type(self)._bounds is Result._bounds and \
            type(self)._compute_bounds is Result._compute_bounds
        return (own and isinstance(c, list) and len(c) == 1 and isinstance(c[0], list)
                and len(c[0]) == 1 and c[0][0] is self.rounded._data
                and self.rounded.dtype.kind == "float")

    @property
    def undefined(self) -> np.ndarray:
        """Per element, whether the result is undefined: the exact value (or a modelled
        implementation's) is NaN and the output format has no NaN (float6_e2m3fn,
        float6_e3m2fn, float4_e2m1fn), so no value of the format is the result. A boolean numpy
        array of the result's shape, all False in every format with NaN. There ``rounded`` holds
        the placeholder +0, ``covers`` accepts any value, and the tolerance is inf.

        >>> import exactref as er
        >>> r = er.divide(er.asarray([1.0, 0.0, 3.0], "float4_e2m1fn"),
        ...               er.asarray([2.0, 0.0, 0.5], "float4_e2m1fn"))
        >>> r.rounded.tolist(), r.undefined.tolist()
        ([0.5, 0.0, 6.0], [False, True, False])
        >>> r.covers([0.5, -4.0, 6.0]).summary()
        'all 3 elements covered; no NaN in float4_e2m1fn: 1 element undefined (NaN, exact or modelled: any value covered there); tolerance median 0, max 0 ulp of float4_e2m1fn'
        """
        cached = getattr(self, "_undefined_cache", None)
        if cached is None:
            shape = tuple(self.rounded.shape)
            comp = self.rounded.dtype.component
            cached = np.zeros(shape, dtype=bool)
            if comp.kind == "float" and not comp.has_nan:  # NaN in the bounds: undefined
                for part in self._bounds():  # bounds may be flat or broadcast
                    nan = np.asarray(part[2], dtype=bool)
                    cached |= nan.reshape(shape) if nan.size == cached.size else \
                        np.broadcast_to(nan, shape)
            cached.flags.writeable = False
            self._undefined_cache = cached
        return cached

    @property
    def lowest(self):
        """The lowest candidate per element (float64; complex: ``[real, imag]``)."""
        b = [p[0] for p in self._bounds()]
        return b[0] if len(b) == 1 else b

    @property
    def highest(self):
        b = [p[1] for p in self._bounds()]
        return b[0] if len(b) == 1 else b

    def tolerance(self) -> Array:
        """Per element, ``max |candidate - rounded|`` over the modelled implementations.

        A float64 Array (for complex outputs, the larger of the two parts' tolerances). It is 0
        where every modelled implementation gives the reference, and inf where the result is
        :attr:`undefined` (any output is allowed there).
        """
        if self._reference_only():  # every candidate is the reference: 0 (+0) everywhere
            tol = np.zeros(self.rounded.shape)
            undef = self.undefined
            tol = np.where(undef, np.inf, tol) if undef.any() else tol
            return Array(tol, _resolve_dtype("float64"))  # a fresh array: no copy needed
        tol = None
        for (lo, hi, *_), ref in zip(self._bounds(), part_values(self.rounded), strict=True):
            with np.errstate(invalid="ignore", over="ignore"):  # a span past float64: inf
                t = np.fmax(hi - ref, ref - lo)
            t = np.where(np.isnan(t), 0.0, t)
            tol = t if tol is None else np.maximum(tol, t)
        tol = np.asarray(tol, dtype=np.float64)
        undef = self.undefined
        if undef.any():
            tol = np.where(undef.reshape(tol.shape), np.inf, tol)
        return asarray(tol, "float64")

    def tolerance_ulps(self) -> np.ndarray:
        """Per element, the tolerance in ulps of the output format at the reference (float64;
        complex: the larger of the two parts'; ``inf`` where any output is allowed, as at the
        :attr:`undefined` elements)."""
        ulps = _tolerance_ulps(self._bounds(), self.rounded)
        undef = self.undefined
        if undef.any():
            ulps = np.where(undef.reshape(ulps.shape), np.inf, ulps)
        return ulps

    def weak_check(self):
        """A sentence saying why a check against this Result proves little, or None (the
        long sums say so; see :class:`WeakCheckWarning`)."""
        return None

    def under(self, contract=None, **fields):
        """This Result recomputed under another contract (an ``er.Contract`` or a mapping of
        its fields, merged over the one it was called with; ``fields`` as keywords): the same
        op on the same operands. The call's own keywords for those fields give way.

        >>> import exactref as er
        >>> r = er.sum(er.asarray([1.0, 2.0**-24, -1.0], "float32"))
        >>> r.under(order="sequential").contract
        Contract(order='sequential')
        """
        return _under(self, contract, fields)

    def covers(self, actual, *, baseline=None, factor: float = 2.0,
               contract=None) -> Coverage:
        """Per element: could a modelled implementation have produced ``actual``?

        ``actual``: a torch tensor, numpy or jax array, er.Array, list, or an earlier Result,
        of the reference's shape (no broadcasting: another shape raises ValueError). Warns
        :class:`WeakCheckWarning` when every element is covered but the check proves little.

        With ``baseline=`` (another implementation's output, of the same shape): the
        comparative check instead, FlashAttention's methodology with the exact value in place
        of a float32 reference: is ``actual`` within ``factor`` times the baseline's error of
        the exact value, plus half an ulp? See :func:`_comparative`.

        >>> import exactref as er
        >>> r = er.exp(er.asarray([1.0, 2.0], "bfloat16"))
        >>> r.covers([2.71875, 7.375], baseline=[2.703125, 7.375]).tolist()
        [True, True]
        >>> r.covers([2.78125, 7.375], baseline=[2.71875, 7.375]).tolist()  # 4 ulps off
        [False, True]
        """
        if contract is not None:
            return self.under(contract).covers(actual, baseline=baseline, factor=factor)
        if baseline is not None:
            return _comparative(self, actual, baseline, factor)
        fmt = self.rounded.dtype
        shape = self.rounded.shape
        actual, hidden = unmask(actual)
        if self._reference_only():
            cov = _covers_reference(self, actual, hidden)
            if cov is not None:
                _warn_if_weak(self, cov)
                return cov
        parts = actual_parts(actual, shape, fmt)
        n = int(np.prod(shape, dtype=np.int64))
        mask = np.ones(n, dtype=bool)
        dist = np.zeros(n)
        refs = part_values(self.rounded)
        for a, bounds, ref in zip(parts, self._bounds(), refs, strict=True):
            flat = [np.broadcast_to(v, shape).reshape(-1) for v in (a, *bounds, ref)]
            for start in range(0, n, _CHUNK):  # cache-sized pieces: memory stays bounded
                sl = slice(start, start + _CHUNK)
                ok, d = _cover_chunk(*(v[sl] for v in flat), fmt)
                mask[sl] &= ok
                np.maximum(dist[sl], d, out=dist[sl])
        mask, dist = mask.reshape(shape), dist.reshape(shape)
        act = parts[0] if len(parts) == 1 else _pair(parts[0], parts[1])
        bounds = self._bounds()
        lo = bounds[0][0] if len(bounds) == 1 else _pair(bounds[0][0], bounds[1][0])
        hi = bounds[0][1] if len(bounds) == 1 else _pair(bounds[0][1], bounds[1][1])
        cov = _coverage(mask, dist, act, lo, hi, fmt, self.undefined, hidden)
        cov.reference = self
        _warn_if_weak(self, cov)
        return cov

    def __repr__(self) -> str:
        return f"Result({self.op}: rounded={self.rounded!r})"


_CHUNK = 1 << 16


def _comparative(ref: Result, actual, baseline, factor: float) -> Coverage:
    """The comparative check: per element, ``|a - f| <= factor |b - f| + ulp/2``, where ``f`` is
    the exact value, ``a`` the actual output, ``b`` the baseline's (per part of a complex
    output; distances in ulps of the output format at the reference).

    The Result holds ``f`` rounded once (``r = rounded``), not ``f``: ``|r - f| <= d`` with
    ``d`` half an ulp in the nearest modes and one ulp in the directed ones. So the check
    accepts ``|a - r| <= factor |b - r| + (factor + 1) d + ulp/2``: every output that meets
    the definition passes (a kernel is never rejected for the reference's own rounding), at
    the price of ``(factor + 1) d`` of slack (2 ulps at ``factor=2`` in the nearest modes).
    A NaN or infinity that the reference does not have is an infinite distance: the actual
    passes there only where the baseline fails as badly.
    """
    factor = float(factor)
    if not (np.isfinite(factor) and factor >= 0):
        raise ValueError(f"factor={factor!r}; expected a finite number >= 0 (how many times "
                         f"the baseline's error the actual may have; FlashAttention uses 2)")
    fmt = ref.rounded.dtype
    shape = ref.rounded.shape
    actual, hidden = unmask(actual)
    baseline, hidden_b = unmask(baseline)
    if hidden_b is not None:  # an element the baseline's mask hides has nothing to compare
        hidden = hidden_b if hidden is None else hidden | hidden_b
    acts = actual_parts(actual, shape, fmt)
    bases = actual_parts(baseline, shape, fmt)
    refs = part_values(ref.rounded)
    mode = ref.details.get("rounding")
    d = 0.5 if mode is None or getattr(mode, "is_nearest", True) else 1.0
    mask = np.ones(shape, dtype=bool)
    dist = np.zeros(shape)
    los, his = [], []
    for a, b, r in zip(acts, bases, refs, strict=True):
        u = ulp(r, fmt)
        ea, eb = _distance(a, r, u), _distance(b, r, u)
        with np.errstate(invalid="ignore", over="ignore"):
            allowed = factor * eb + (factor + 1) * d + 0.5
            ok = ea <= allowed
            gap = np.where(ok, 0.0, np.where(np.isinf(ea), np.inf, ea - allowed))
            width = np.where(np.isfinite(allowed), allowed * u, np.inf)
            los.append(np.where(np.isnan(r), np.nan, r - width))
            his.append(np.where(np.isnan(r), np.nan, r + width))
        mask &= ok
        np.maximum(dist, gap, out=dist)
    act = acts[0] if len(acts) == 1 else _pair(acts[0], acts[1])
    lo = los[0] if len(los) == 1 else _pair(los[0], los[1])
    hi = his[0] if len(his) == 1 else _pair(his[0], his[1])
    cov = _coverage(mask, dist, act, lo, hi, fmt, ref.undefined, hidden)
    cov.reference = None  # the tolerance is the baseline's, not the Result's
    return cov


def _distance(values, ref, ulp):
    """``|values - ref|`` in ulps: 0 where both are the same NaN or infinity, inf where one of
    them is NaN or infinite and the other is not."""
    with np.errstate(invalid="ignore", over="ignore"):
        same = (values == ref) | (np.isnan(values) & np.isnan(ref))
        out = np.abs(values - ref) / ulp
    out = np.where(same, 0.0, np.where(np.isnan(out) | ~np.isfinite(values) |
                                       ~np.isfinite(ref), np.inf, out))
    return out


#: Integer views of the float dtypes by their sizes in bytes.
_BITS = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _covers_reference(result: Result, actual, hidden):
    """``result.covers(actual)`` where the reference is all there is (its one candidate is
    ``rounded``): the same Coverage as the general path, by a cheaper road, or None where the
    general path must run (it raises for a wrong shape or a complex actual).

    With one candidate ``c``, the rules of covers reduce to: ``a`` is covered where it is the
    value ``c`` with its sign (a zero's too), or where both are NaN. Where the actual is held in
    the reference's own format (every value of which has one encoding, its NaNs apart), that is
    bit equality of the two arrays, or both NaN: one pass over each array. An actual in another
    format is compared in float64, as the general path compares it (every format here is held
    exactly in float64). The distances, the float64 actual values and the bounds are computed
    only when the Coverage is asked for them (:meth:`Coverage._deferred`), the distances at the
    uncovered elements only, by the general path's own rules (:func:`_cover_chunk`). Only the
    uncovered elements' actual values are copied now (an array changed after the check does
    not change its report): every covered one is the reference's value (NaN for NaN)."""
    fmt = result.rounded.dtype
    shape = tuple(result.rounded.shape)
    ref = result.rounded._data
    arr = _actual_array(actual)
    if arr.dtype.kind != "float" or tuple(arr.shape) != shape:
        return None
    kept = None  # the actual in float64, where it was converted to compare
    with np.errstate(invalid="ignore"):
        if arr.dtype is fmt and ref.itemsize in _BITS:
            a = arr._data
            view = _BITS[ref.itemsize]
            ok = np.asarray(np.equal(a.view(view), ref.view(view)))
        else:
            a = kept = actual_parts(actual, shape, fmt, arr)[0]
            c = result._bounds()[0][0]
            ok = np.asarray(((kept == c) & (np.signbit(kept) == np.signbit(c))) | (
                np.isnan(kept) & np.isnan(c)))
        if kept is None and not ok.all():  # NaN against NaN (of any payload) is covered
            ok |= np.isnan(a) & np.isnan(ref)
    # the uncovered elements (before the undefined and hidden ones are covered) and their
    # actual values, as checked
    uncovered = None if ok.all() else ~ok
    if uncovered is not None and kept is None:  # all of them where many are (a memcpy)
        kept = a.copy() if 8 * np.count_nonzero(uncovered) > ok.size else None
    saved = None if uncovered is None or kept is not None else a[uncovered]
    undef = result.undefined  # all False in a format with NaN: no pass over it then
    nanless = not fmt.component.has_nan

    def fill():
        if kept is not None:
            a64 = np.asarray(kept, dtype=np.float64).reshape(shape)
        else:  # a fresh float64 array of the reference's values, the uncovered ones put back
            a64 = part_values(result.rounded)[0].reshape(shape)
            if saved is not None:
                a64[uncovered] = saved
        lo, hi, *rest = result._bounds()[0]
        dist = np.zeros(shape)
        if uncovered is not None:
            idx = uncovered  # a boolean mask (0-d arrays have no nonzero())
            r64 = part_values(result.rounded)[0]
            pick = [np.broadcast_to(v, shape)[idx] for v in (lo, hi, *rest, r64)]
            dist[idx] = np.maximum(dist[idx], _cover_chunk(a64[idx], *pick, fmt)[1])
        if nanless and undef.any():
            dist = np.where(undef, 0.0, dist)
        if hidden is not None:
            dist = np.where(hidden, 0.0, dist)
        return dist, a64, lo, hi

    mask = ok
    if nanless and undef.any():
        mask = mask | undef
    if hidden is not None:
        mask = mask | hidden
    cov = Coverage._deferred(mask, fmt, fill, undefined=undef, masked=hidden)
    cov.reference = result
    return cov


def _cover_chunk(a, lo, hi, nan, fixed, neg, ref, fmt):
    """``(covered, distance in ulps)`` of actual values ``a`` against the bounds of one part
    (the rules of :meth:`Result.covers`)."""
    with np.errstate(invalid="ignore"):
        inside = (a >= lo) & (a <= hi)
    anan = np.isnan(a)
    ok = np.where(anan, nan, inside)
    ok &= ~(fixed & (a == 0) & (np.signbit(a) != neg))
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.fmax(lo - a, a - hi)
        d = np.where(anan | np.isinf(a) | ~np.isfinite(gap), np.inf,
                     np.maximum(gap, 0) / ulp(ref, fmt))
    d = np.where(ok, 0.0, np.where(np.isnan(d), np.inf, np.maximum(d, 0.0)))
    return ok, d


def _tolerance_ulps(bounds, rounded: Array) -> np.ndarray:
    """Per element, ``max |candidate - reference|`` in ulps of the output format (the larger of
    the parts' for complex outputs; 0 where the reference is NaN or infinite and so is every
    candidate)."""
    fmt = rounded.dtype
    out = None
    for (lo, hi, *_), ref in zip(bounds, part_values(rounded), strict=True):
        with np.errstate(invalid="ignore", over="ignore"):
            t = np.fmax(hi - ref, ref - lo)
            t = np.where(np.isnan(t), 0.0, t) / ulp(ref, fmt) + 0.0  # no -0
        out = t if out is None else np.maximum(out, t)
    return np.asarray(out, dtype=np.float64)


def _warn_if_weak(reference, coverage: Coverage) -> None:
    """Warn when ``coverage`` passes but its reference says the check proves little."""
    if coverage.uncovered:
        return  # a failing check proved something; its report gives the tolerance
    why = reference.weak_check()
    if why:
        warnings.warn(why, WeakCheckWarning, stacklevel=3)


class AnyOf:
    """Covers an element where any of its results covers it (:func:`any_of`)."""

    __array_ufunc__ = None  # compared as an object, as Result

    def __init__(self, results):
        if not results:
            raise ValueError("any_of needs at least one Result (er.any_of(er.add(x, y), ...))")
        for i, r in enumerate(results):
            if not (callable(getattr(r, "covers", None)) and isinstance(
                    getattr(r, "rounded", None), Array)):
                raise TypeError(
                    f"any_of takes Results (what er.add, er.matmul, the equivalents... return); "
                    f"argument {i} is {type(r).__name__}; pass the Result, not its values")
        first = results[0].rounded
        for i, r in enumerate(results[1:], 1):
            if tuple(r.rounded.shape) != tuple(first.shape):
                raise ValueError(
                    f"any_of: result 0 has shape {tuple(first.shape)} and result {i} shape "
                    f"{tuple(r.rounded.shape)}; the alternatives of one output must have its "
                    f"shape: compute each on the same operands")
            if r.rounded.dtype is not first.dtype:
                raise TypeError(
                    f"any_of: result 0 is {first.dtype.name} and result {i} "
                    f"{r.rounded.dtype.name}; the alternatives of one output must have its "
                    f"format: pass dtype= to the ops so that they agree")
        self.results = tuple(results)
        self.rounded = first

    @property
    def undefined(self) -> np.ndarray:
        """Per element, whether some alternative has no result there (an exact NaN in a format
        without NaN: :attr:`Result.undefined`); any value is covered there."""
        return np.logical_or.reduce([np.asarray(r.undefined) for r in self.results])

    def tolerance_ulps(self) -> np.ndarray:
        """Per element, the largest tolerance of the alternatives in ulps of the format."""
        return np.maximum.reduce([np.asarray(r.tolerance_ulps()) for r in self.results])

    def under(self, contract=None, **fields):
        """The union recomputed under another contract (:meth:`Result.under`), where it was
        made by one op call; else each alternative recomputed."""
        if getattr(self, "call", None) is not None:
            return _under(self, contract, fields)
        return AnyOf([r.under(contract, **fields) for r in self.results])

    def covers(self, actual, *, baseline=None, factor: float = 2.0,
               contract=None) -> Coverage:
        if contract is not None:
            return self.under(contract).covers(actual, baseline=baseline, factor=factor)
        if baseline is not None:  # the results share the reference: compare against it
            return self.results[0].covers(actual, baseline=baseline, factor=factor)
        with warnings.catch_warnings():  # one warning for the whole, below
            warnings.simplefilter("ignore", WeakCheckWarning)
            covs = [r.covers(actual) for r in self.results]
        mask = np.logical_or.reduce([c.mask for c in covs])
        dist = np.minimum.reduce([c._dist for c in covs])
        first = covs[0]
        cov = Coverage(mask, np.where(mask, 0.0, dist), first._actual, first._lo, first._hi,
                       first.format, undefined=np.logical_or.reduce([c.undefined for c in covs]),
                       masked=first.masked)
        cov.reference = self
        _warn_if_weak(self, cov)
        return cov

    def weak_check(self):
        """Weak where an alternative is: the union covers what the weak one covers."""
        return next((why for why in (r.weak_check() for r in self.results) if why), None)

    def tolerance(self) -> Array:
        """The largest tolerance of the alternatives, per element."""
        tols = [np.asarray(r.tolerance()) for r in self.results]
        return asarray(np.maximum.reduce(tols), "float64")

    def __repr__(self) -> str:
        return f"AnyOf({len(self.results)} results)"


def _under(result, contract, fields):
    call = getattr(result, "call", None)
    if call is None:
        raise ValueError(f"{result!r} records no op call to recompute (a Result built by hand, "
                         f"or by an equivalent's kernel model): call the op with contract=")
    name, args, kwargs, given = call
    if fields:
        base = contract if contract is not None else {}
        if not isinstance(base, dict):
            base = base.fields()
        contract = {**base, **fields}
    if contract is None:
        contract = {}
    if isinstance(contract, dict):
        keys = set(contract)
        if given is not None:
            contract = given | type(given).from_mapping(contract)
    else:
        keys = set(contract.fields())
        contract = contract if given is None else given | contract
    kwargs = {k: v for k, v in kwargs.items() if k not in keys}
    return get_op(name).function(*args, contract=contract, **kwargs)


def any_of(*results) -> AnyOf:
    """A reference that covers an element where any of ``results`` covers it.

    Use it when more than one implementation may run: PyTorch's bfloat16 add may or may not
    store ``alpha * y`` first, for example.
    """
    flat = []
    for r in results:
        flat.extend(r.results if isinstance(r, AnyOf) else [r])
    return AnyOf(flat)


_UNSET = object()

#: The attributes a Gradients of one gradient takes from it (with one present).
_SINGLE = ("dtype", "shape", "ndim", "value", "numpy", "torch")


class Gradients:
    """The gradients of a backward pass, one attribute per operand: ``grad_x`` and ``grad_y``
    for the elementwise ops (None for a scalar operand), the operands' own names for the others
    (``grad_a``, ``grad_b``, ``grad_c`` of gemm; ``grad_query``, ``grad_key``, ``grad_value`` of
    attention; ``grad_x``, ``grad_weight``, ``grad_bias`` of the norms; a third elementwise
    operand's ``grad_z``, ``grad_tensor2``, ...). The one container of every backward pass: of
    exactref's elementwise ops, of the long sums and row kernels, and of the equivalents.

    Each gradient is either a reference (a :class:`Result` or :func:`any_of`, with
    ``covers()`` and ``tolerance()``; ``rounded`` is then the Gradients of their rounded arrays)
    or an array (the rounded gradients themselves). With one gradient present, ``covers()``,
    ``tolerance()``, ``tolist()``, ``dtype``, ``shape`` and ``value()`` are its own.
    ``grads`` maps the operands' names (``x``, ``y``, ``a``, ...) to the gradients.

    Positional arguments are ``grad_x`` and ``grad_y`` (both present, None for an absent one);
    keywords name the others, with or without the ``grad_`` prefix.

    >>> import exactref as er
    >>> g = er.matmul.backward(er.asarray([[1.0, 2.0]], "float32"),
    ...                        er.asarray([[3.0], [4.0]], "float32"),
    ...                        er.asarray([[1.0]], "float32")).rounded
    >>> g
    Gradients(grad_a=exactref.Array([[3.0, 4.0]], dtype=float32), grad_b=exactref.Array([[1.0], [2.0]], dtype=float32))
    >>> g.tolist()
    [[[3.0, 4.0]], [[1.0], [2.0]]]
    """

    def __init__(self, grad_x=_UNSET, grad_y=_UNSET, /, **named):
        grads = {}
        if grad_x is not _UNSET or grad_y is not _UNSET or not named:
            grads["grad_x"] = None if grad_x is _UNSET else grad_x
            grads["grad_y"] = None if grad_y is _UNSET else grad_y
        for k, v in named.items():
            grads[k if k.startswith("grad_") else f"grad_{k}"] = v
        self._grads = grads
        for k, v in grads.items():
            setattr(self, k, v)
        if any(hasattr(g, "rounded") for g in grads.values() if g is not None):
            self.rounded = Gradients(**{k: None if g is None else g.rounded
                                        for k, g in grads.items()})

    @property
    def grads(self) -> dict:
        """The gradients by operand name (``{"x": ..., "y": ...}``), None for an absent one."""
        return {k.removeprefix("grad_"): v for k, v in self._grads.items()}

    def _present(self):
        return [g for g in self._grads.values() if g is not None]

    def _names(self) -> str:
        return ", ".join(f".{k}" for k, v in self._grads.items() if v is not None)

    def _single(self, error=AttributeError):
        present = self._present()
        if len(present) != 1:
            raise error(f"{len(present)} gradients: use {self._names()}")
        return present[0]

    def covers(self, actual):
        """Coverage of the one gradient there is (with several, use ``.grad_x`` ...)."""
        return self._single(TypeError).covers(actual)

    def tolerance(self):
        """Tolerance of the one gradient there is (with several, use ``.grad_x`` ...)."""
        return self._single(TypeError).tolerance()

    def tolist(self):
        present = self._present()
        if len(present) == 1:
            return present[0].tolist()
        return [g.tolist() for g in present]

    def __getattr__(self, name):
        if name in _SINGLE:
            return getattr(self._single(), name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._grads.items())
        return f"Gradients({inner})"
