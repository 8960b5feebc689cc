"""Accuracy models: how far from the exact value an implementation of a function may be, in ulps
of the format it computes in, and the presets that say it for real libraries.

A function op called with ``accuracy=`` models an implementation that computes the function in
the compute format (``compute=``, the policy's by default: float32 for the half and 8-bit
formats in torch) with at most that error, and then stores its result into the output format:

* ``"mainstream"`` (the default of the function ops): per function and compute format, the
  largest error that a mainstream library documents or is declared to have (:data:`MAINSTREAM`:
  glibc, SLEEF u10 (PyTorch's vectorized CPU path), CUDA's standard functions, numpy's loops,
  and the accuracy the function's torch and numpy counterparts declare); a function none of
  them documents (the compositions: sigmoid, gelu, ...) stays correctly rounded. Results that
  differ from the correctly rounded value while inside the bound are a finding, not a failure
  (``Coverage``);
* ``"correct"``: correctly rounded in the compute format, in the call's rounding mode
  (CORE-MATH, RLIBM, CRlibm; MPFR);
* a number ``k >= 0.5``: any number of the compute format within ``k`` ulps of the exact value
  (the ulp as :mod:`exactref._exact._bands` defines it; a bound is rounded up to a multiple of
  ``2**-8``);
* a preset name: a library's documented maximum error per function and compute format
  (:data:`ACCURACY_PRESETS`; each cites its source).

The reference (``rounded``) never changes: the model only widens the candidates, so a tolerance
is exactly as loose as the declared library is allowed to be.

>>> import exactref as er
>>> r = er.exp(er.asarray([1.0], "float32"), accuracy=1.0)
>>> r.models
('exact', 'within 1 ulp in float32: lowest', 'within 1 ulp in float32: highest')
>>> r.lowest.tolist(), r.highest.tolist()
([2.7182817459106445], [2.7182819843292236])
>>> sorted(er.ACCURACY_PRESETS)[:3]
['correct', 'cuda', 'cuda_intrinsics']
>>> er.exp(er.asarray([1.0], "float32")).models[1]   # the default: "mainstream"
'within mainstream (3.5 ulps) in float32: lowest'
>>> er.ACCURACY_PRESETS["mainstream"].bound("tanh", "float32")
2.5
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._exact import BAND_OPEN_ULPS
from ._model import Model

__all__ = ["Accuracy", "Preset", "ACCURACY_PRESETS", "DEFAULT_ACCURACY", "MAINSTREAM", "Within",
           "documented", "documented_by", "mainstream_sources", "resolve_accuracy"]

#: Beyond this many ulps a bound admits any value of the exact value's sign.
CAP_ULPS = BAND_OPEN_ULPS


def _ulps_text(k: float) -> str:
    text = f"{k:g}"
    return f"{text} ulp" + ("" if k == 1 else "s")


@dataclass(frozen=True)
class Preset:
    """A library's documented maximum errors: ``bounds[function][compute format]`` (see
    :meth:`bound`; the built-in presets read them from each function's record, where its
    declaration states them: :func:`documented`), where its numbers come from (``source``) and
    how it counts ulps (``measure``)."""

    name: str
    source: str
    measure: str = ""
    bounds: Mapping = field(default_factory=dict, repr=False)
    #: what the source measures its errors against: ``"exact"`` (the exact value: SLEEF) or
    #: ``"rounded"`` (the correctly rounded result: glibc, CUDA, numpy), where ``N`` ulps
    #: means within ``N + 1/2`` ulp of the exact value
    against: str = "exact"

    def bound(self, function: str, compute: str):
        """The documented bound of ``function`` computed in format ``compute``: a number of
        ulps, a dict (``{"ulps": a, "per_abs_x": b}``: ``a + floor(b |x|)`` ulps;
        ``{"abs": e, "on": (lo, hi), "else_ulps": u}``: an absolute error ``e`` for ``x`` in
        ``[lo, hi]``, ``u`` ulps elsewhere), or None (the library has no such function)."""
        return self.bounds.get(function, {}).get(compute)

    def functions(self, compute: str) -> list:
        """The functions this preset documents in format ``compute``."""
        return sorted(f for f, b in self.bounds.items() if b.get(compute) is not None)


# ----------------------------------------------------- the bounds, in the functions' records
#: The compute formats a declaration's bounds are for (a pair gives them in this order).
_FORMATS = ("float32", "float64")


class Within(Model):
    """A real function's accuracy-band model as its record holds it (``OpSpec.models``:
    ``"within {a} in {c}: lowest"`` and ``...: highest``): the band's :class:`Model` (its
    ``derive``, ``applies``; the driver runs it), carrying what the libraries document of that
    function: ``documented[preset][compute format]``, a bound (:func:`documented` builds it in
    the function's declaration; the presets read it, :func:`documented_by`). A string, so the
    record's models still read as their names.

    >>> import exactref as er
    >>> band = er.ops.get_op("exp").models[-1]
    >>> band, band.documented["glibc"], band.derive is not None
    ('within {a} in {c}: highest', {'float32': 1, 'float64': 1}, True)
    """

    __slots__ = ("documented",)

    def __new__(cls, model, documented: Mapping | None = None):
        fn, applies, derive = (model.fn, model.applies, model.derive) if isinstance(
            model, Model) else (None, None, None)
        self = super().__new__(cls, model, fn, applies, derive)
        object.__setattr__(self, "documented", dict(documented or {}))
        return self

    def __reduce__(self):
        return (type(self), (Model(*self._args()), self.documented))


def _check_bound(preset: str, b):
    """``b``, a declaration's bound for ``preset``, if it is one (else a ValueError)."""
    if isinstance(b, Mapping):
        try:
            _check_form(b)
        except ValueError as exc:
            raise ValueError(f"{preset}=: {exc}") from None
    elif b is not None and not (isinstance(b, numbers.Real) and not isinstance(b, bool)
                                and math.isfinite(b) and b >= 0):
        raise ValueError(f"{preset}={b!r}: a bound is a number of ulps >= 0, one of the bound "
                         f"forms ({{'ulps': a, 'per_abs_x': b}}, ...) or None (not documented)")
    return b


def documented(**presets) -> dict:
    """A function's documented errors, by preset, for its declaration (``presets=``): each
    keyword a preset of :data:`ACCURACY_PRESETS` (its library-wide facts: source, how it
    counts, in ``_accuracy_data``), its value the bound for float32 and float64 alike or a
    pair ``(float32, float64)``; a bound is a number of ulps, a bound form or None (the source
    documents none). A preset the declaration does not name documents nothing of the function.

    >>> documented(glibc=(0, 1), sleef_u10=1.0)
    {'glibc': {'float32': 0, 'float64': 1}, 'sleef_u10': {'float32': 1.0, 'float64': 1.0}}
    """
    from ._accuracy_data import PRESETS

    out = {}
    for preset, b in presets.items():
        if preset not in PRESETS:
            raise ValueError(f"{preset}=: not a preset; the presets with data are "
                             f"{', '.join(PRESETS)} (a new one needs its library-wide facts in "
                             f"exactref/arithmetic/_accuracy_data.py)")
        pair = b if isinstance(b, tuple) else (b,) * len(_FORMATS)
        if len(pair) != len(_FORMATS):
            raise ValueError(f"{preset}={b!r}: expected one bound or a pair (float32, float64)")
        out[preset] = {f: _check_bound(preset, v) for f, v in zip(_FORMATS, pair, strict=True)}
    return out


def documented_by(function: str) -> Mapping:
    """What the presets document of ``function``, from its record (``{preset: {compute
    format: bound}}``; empty for an op that is not a real function or has no data)."""
    from ..ops import get_op

    try:
        models = get_op(function).models
    except ValueError:
        return {}
    return next((m.documented for m in models if isinstance(m, Within)), {})


class _RecordBounds(Mapping):
    """A preset's ``bounds`` read from the function records, on each use: ``[function]`` is
    ``{compute format: bound}`` where the function's declaration names the preset."""

    def __init__(self, preset: str):
        self._preset = preset

    def __getitem__(self, function):
        return documented_by(function)[self._preset]  # KeyError: not documented

    def __iter__(self):
        from ..ops import select

        return (s.name for s in select(family="functions")
                if self._preset in documented_by(s.name))

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"<{self._preset}'s bounds in the function records>"


#: The default ``accuracy=`` of the function ops.
DEFAULT_ACCURACY = "mainstream"

#: The libraries whose documented bounds make up the ``"mainstream"`` preset: glibc's libm,
#: SLEEF's u10 functions (PyTorch's vectorized CPU kernels: ``Vectorized<float>::exp`` is
#: ``Sleef_expf16_u10``, ...), CUDA's standard (non-intrinsic) functions and numpy's loops.
#: Left out, each opt-in by name: glibc's libmvec (one blanket "4 ulps" for every function,
#: not a per-function measurement; with it every default would admit 4.5 ulps and a kernel 4
#: ulps off the correctly rounded exp would pass), SLEEF's u35 variants and CUDA's
#: ``-use_fast_math`` intrinsics (opt-in speed modes, absolute errors for some).
MAINSTREAM = ("glibc", "sleef_u10", "cuda", "numpy")

#: A counterpart contract's dtype class -> the compute format it computes in (torch's
#: ``reduced``: float16 and bfloat16 computed in float32; numpy's ``ml_dtypes`` loops call the
#: C library's float function).
_CLASS_FORMAT = {"float64": "float64", "float32": "float32", "reduced": "float32",
                 "ml_dtypes": "float32"}


def mainstream_sources(function: str, compute: str) -> dict:
    """Where the ``"mainstream"`` bound of ``function`` in ``compute`` comes from: ``{source:
    bound in ulps from the exact value}``, one entry per library of :data:`MAINSTREAM` that
    documents a number for it (half an ulp added to those counting from the correctly rounded
    result) and per counterpart (``"torch.exp"``, ``"np.exp"``) whose contract declares a
    number of ulps for that compute format. The preset's bound is the largest.

    >>> mainstream_sources("exp", "float32")
    {'glibc': 1.5, 'sleef_u10': 1.0, 'cuda': 2.5, 'numpy': 3.5, 'torch.exp': 1.0, 'np.exp': 1.0}
    """
    from ..ops import get_op
    from ._accuracy_data import PRESETS

    doc = documented_by(function)
    out = {}
    formula = doc.get("formula", {}).get(compute)
    if formula is not None:  # derived from the libraries' formula (no library documents it)
        out["formula"] = formula
    for name in MAINSTREAM:
        b = doc.get(name, {}).get(compute)
        if isinstance(b, numbers.Real):
            out[name] = float(b) + (0.5 if PRESETS[name]["against"] == "rounded" else 0.0)
    try:
        counterparts = get_op(function).counterparts
    except ValueError:
        return out
    for library in ("torch", "numpy"):
        cp = counterparts.of(library)
        acc = ((cp.contract or {}).get("accuracy") or {}) if cp is not None else {}
        vals = [float(v) for k, v in acc.items() if _CLASS_FORMAT.get(k) == compute
                and isinstance(v, numbers.Real) and not isinstance(v, bool)]
        if vals:
            out[str(cp)] = max(vals)
    return out


class _MainstreamBounds(Mapping):
    """The ``"mainstream"`` preset's bounds: per function and compute format the largest of
    :func:`mainstream_sources` (None where there is none)."""

    def __getitem__(self, function):
        out = {}
        for f in _FORMATS:
            sources = mainstream_sources(function, f)
            nums = [v for v in sources.values() if isinstance(v, numbers.Real)]
            out[f] = max(nums) if nums else sources.get("formula")
        if all(v is None for v in out.values()):
            raise KeyError(function)
        return out

    def __iter__(self):
        from ..ops import select

        return (s.name for s in select(family="functions") if s.name in self)

    def __contains__(self, function):
        try:
            self[function]
        except KeyError:
            return False
        return True

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return "<the mainstream libraries' largest bounds>"


_MAINSTREAM_SOURCE = (
    "the largest bound, per function and compute format, among the mainstream libraries' "
    "documented ones: glibc (libm-test-ulps), SLEEF u10 (PyTorch's vectorized CPU path), "
    "CUDA's standard functions (Programming Guide Tables 17 and 18), numpy's accuracy test "
    "data, and the accuracy the function's torch and numpy counterparts declare (each preset's "
    "source); libmvec's blanket 4 ulps, SLEEF u35 and CUDA's intrinsics are opt-in. A "
    "function none of them documents is correctly rounded")


def _presets() -> dict:
    from . import _accuracy_data

    out = {"correct": Preset("correct", "correct rounding in the compute format: the exact "
                             "value rounded once in the call's mode (CORE-MATH, RLIBM, MPFR)",
                             "0.5 ulp (correct rounding)")}
    for name, entry in _accuracy_data.PRESETS.items():
        out[name] = Preset(name, entry["source"], entry.get("measure", ""),
                           _RecordBounds(name), entry["against"])
    out["mainstream"] = Preset("mainstream", _MAINSTREAM_SOURCE, "ulps from the exact value, "
                               "final rounding included", _MainstreamBounds(), "exact")
    return out


class _Presets(Mapping):
    """The accuracy presets by name, read on first use."""

    _table = None

    def _load(self) -> dict:
        if _Presets._table is None:
            _Presets._table = _presets()
        return _Presets._table

    def __getitem__(self, name):
        return self._load()[name]

    def __iter__(self):
        return iter(self._load())

    def __len__(self):
        return len(self._load())

    def __repr__(self):
        return f"ACCURACY_PRESETS({', '.join(self._load())})"


#: Every accuracy preset by name (``"correct"``, ``"glibc"``, ``"sleef_u10"``, ...): a
#: :class:`Preset` each, with its source.
ACCURACY_PRESETS = _Presets()


@dataclass(frozen=True)
class Accuracy:
    """The accuracy of one call: ``name`` (as given), ``label`` (for the models' names) and
    ``bound`` in ulps of the compute format (None: correctly rounded)."""

    name: str
    label: str
    bound: object = None
    precision: int = 0  # of the compute format (for relative bounds)
    #: ulps added to every bound (1/2 for a source that measures against the correctly
    #: rounded result: N ulps from it is N + 1/2 from the exact value)
    offset: float = 0.0

    @property
    def correct(self) -> bool:
        return self.bound is None

    def ulps(self, x: np.ndarray, ulp_of) -> np.ndarray:
        """Per element, the bound in ulps at inputs ``x`` (float64); ``ulp_of()`` gives the
        ulp of the exact value per element (called only for absolute bounds)."""
        b = self.bound
        if isinstance(b, numbers.Real):
            return np.full(x.shape, float(b) + self.offset)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if "per_abs_x" in b:
                u = b["ulps"] + np.floor(b["per_abs_x"] * np.abs(x))
            elif "abs_x" in b:  # ulps and an absolute error c |x|: a cancelling formula
                u = b["ulps"] + b["abs_x"] * np.abs(x) / ulp_of()
            elif "ulps" in b:  # ulps and an absolute error: glibc's sin near its zeros
                u = b["ulps"] + b["abs"] / ulp_of()
            elif "rel" in b:  # |v - f| <= r |f| < r 2**p ulp(f)
                u = np.full(x.shape, b["rel"] * 2.0 ** self.precision)
            else:
                lo, hi = b["on"]
                absu = b["abs"] / ulp_of()
                other = np.inf if b.get("else_ulps") is None else float(b["else_ulps"])
                u = np.where((x >= lo) & (x <= hi), absu, other)
            u = np.maximum(u + self.offset, 0.5)
        return np.where(np.isfinite(u) & (u <= CAP_ULPS), u, CAP_ULPS)


CORRECT = Accuracy("correct", "correct")

#: The forms a bound may take beside a number of ulps (a preset's data, or ``accuracy=``).
_FORMS = ({"ulps", "per_abs_x"}, {"ulps", "abs"}, {"ulps", "abs_x"}, {"abs", "on", "else_ulps"},
          {"rel"})


def _check_form(b: Mapping) -> dict:
    b = dict(b)
    if set(b) not in _FORMS:
        raise ValueError(f"accuracy={b!r}: expected a number of ulps, a preset name, or one of "
                         f"the bound forms {{'ulps': a, 'abs': e}} (a ulps plus an absolute "
                         f"error e), {{'ulps': a, 'abs_x': c}} (a ulps plus an absolute "
                         f"error c |x|), {{'ulps': a, 'per_abs_x': b}} (a + floor(b |x|) ulps), "
                         f"{{'abs': e, 'on': (lo, hi), 'else_ulps': u}}, {{'rel': r}}")
    for key, v in b.items():
        if key == "on":
            continue
        if v is not None and not (isinstance(v, numbers.Real) and math.isfinite(v) and v >= 0):
            raise ValueError(f"accuracy={b!r}: {key} must be a finite number >= 0")
    return b


def _form_name(b: Mapping) -> str:
    return "{" + ", ".join(f"{k}: {v:g}" if isinstance(v, numbers.Real) else f"{k}: {v}"
                           for k, v in b.items()) + "}"


def resolve_accuracy(accuracy, function: str, compute, *, complex_out: bool = False) -> Accuracy:
    """The :class:`Accuracy` of a call of ``function`` computing in format ``compute`` (an
    exactref Format), or a ValueError that says what is accepted. ``complex_out``: the call
    has a complex result, which the ``"mainstream"`` preset leaves correctly rounded (the
    presets document real functions)."""
    if accuracy is None or (isinstance(accuracy, str) and accuracy == "correct"):
        return CORRECT
    if complex_out and isinstance(accuracy, str) and accuracy == "mainstream":
        return Accuracy("mainstream", f"mainstream (complex {function}: correctly rounded)")
    if isinstance(accuracy, Mapping):
        return Accuracy(_form_name(accuracy), _form_name(accuracy), _check_form(accuracy),
                        compute.precision)
    if isinstance(accuracy, numbers.Real) and not isinstance(accuracy, bool):
        k = float(accuracy)
        if not (math.isfinite(k) and 0.5 <= k <= CAP_ULPS):
            raise ValueError(f"accuracy={accuracy!r}; expected a number of ulps of the compute "
                             f"format in [0.5, 2**40] (no result of an irrational value is "
                             f"closer than half an ulp), 'correct', or a preset name: "
                             f"{', '.join(ACCURACY_PRESETS)}")
        return Accuracy(str(accuracy), _ulps_text(k), k)
    if not isinstance(accuracy, str):
        raise ValueError(f"accuracy={accuracy!r}; expected 'correct', a number of ulps (>= 0.5) "
                         f"or a preset name: {', '.join(ACCURACY_PRESETS)}")
    if accuracy not in ACCURACY_PRESETS:
        import difflib

        close = difflib.get_close_matches(accuracy, list(ACCURACY_PRESETS), n=3)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        raise ValueError(f"accuracy={accuracy!r} is not a preset{hint}; the presets are "
                         f"{', '.join(ACCURACY_PRESETS)}, or pass a number of ulps")
    preset = ACCURACY_PRESETS[accuracy]
    b = preset.bound(function, compute.name)
    if b is None and accuracy == "mainstream":  # no library documents it: correctly rounded
        return Accuracy("mainstream", f"mainstream (no library documents {function}: "
                        f"correctly rounded)")
    if b is None:
        have = preset.functions(compute.name)
        raise ValueError(
            f"the {accuracy!r} preset documents no {function} computed in {compute.name} "
            f"({'it documents ' + ', '.join(have) if have else 'it has nothing in ' + compute.name}); "
            f"pass compute= a format it documents, or accuracy= a number of ulps")
    offset = 0.5 if preset.against == "rounded" else 0.0
    if isinstance(b, numbers.Real):
        label = f"{accuracy} ({_ulps_text(b + offset)})"
        if b + offset < 0.5:
            raise ValueError(f"the {accuracy!r} preset gives {function} a bound of {b} ulps, "
                             f"below half an ulp: the data is wrong")
    elif accuracy == "mainstream" and set(b) == _FORMS[1]:  # ulps and abs: say it
        label = f"{accuracy} ({b['ulps']:.4g} ulps + {b['abs']:.3g})"
    elif accuracy == "mainstream" and set(b) == _FORMS[2]:  # ulps and abs_x
        label = f"{accuracy} ({b['ulps']:.4g} ulps + {b['abs_x']:.3g} |x|)"
    else:
        label = accuracy
    return Accuracy(accuracy, label, b, compute.precision, offset)


def _bound_text(b, offset: float) -> str:
    if b is None:
        return "-"
    if isinstance(b, numbers.Real):
        return f"{b + offset:g}"
    plus = f" + {offset:g}" if offset else ""
    if "per_abs_x" in b:
        return f"{b['ulps']:g} + floor({b['per_abs_x']:g} \\|x\\|){plus}"
    if "rel" in b:
        return f"relative {b['rel']:.3g}"
    if "abs_x" in b:
        return f"{b['ulps'] + offset:.4g} + abs {b['abs_x']:.3g} \\|x\\|"
    if "on" not in b:  # ulps and an absolute error
        return f"{b['ulps'] + offset:.4g} + abs {b['abs']:.3g}"
    lo, hi = b["on"]
    other = "open" if b.get("else_ulps") is None else f"{b['else_ulps'] + offset:g}"
    return f"abs {b['abs']:.3g} on [{lo:.4g}, {hi:.4g}], else {other}"


def markdown_table(compute: str = "float32") -> str:
    """The presets' bounds for functions computed in format ``compute``, in ulps from the
    exact value (half an ulp added to sources that count from the correctly rounded result),
    as a markdown table (docs/functions.md shows it; a test keeps them equal)."""
    from ..ops import names_of

    presets = [p for p in ACCURACY_PRESETS.values() if p.bounds]
    documented = {f for p in presets for f in p.bounds}
    functions = [f for f in names_of("exactref.arithmetic.functions") if f in documented]
    rows = [f"| {compute} | " + " | ".join(f"`{p.name}`" for p in presets) + " |",
            "| --- |" + " --- |" * len(presets)]
    for f in functions:
        cells = [_bound_text(p.bound(f, compute), 0.5 if p.against == "rounded" else 0.0)
                 for p in presets]
        rows.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(rows)

