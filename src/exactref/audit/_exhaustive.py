"""Exhaustive audits: every input of a format through a kernel, against the exact reference.

:func:`exhaustive` runs a kernel on every bit pattern of a format (a unary op: 2**8 inputs
for the 8-bit formats, 2**16 for float16 and bfloat16, 2**32 for float32; a binary op: every
pair of an 8-bit format, 2**16), or on a slice of them, in chunks. Per chunk the work is the
audit's: ``ref = er.<op>(x, contract=...)``, ``cov = ref.covers(kernel(x))`` and, per element,
the distance from the exact value rounded once (:func:`exactref.ulps_from_exact`).

What a run reports, and why it does not depend on the chunking nor on the order in which the
chunks complete: every aggregate is a function of the set of elements alone and merges
exactly. The counts (inputs, not covered, the histogram's buckets) are integers, summed; the
largest distance is a maximum; the worst inputs are the first ``top`` of the elements sorted
by (distance descending, bit pattern ascending), a total order, so the first ``top`` of a
union are the first ``top`` of the union of each part's first ``top``. The distances
themselves are computed element by element (the reference of an element does not depend on
its neighbours), so a chunk boundary moves nothing.

The histogram's buckets are the audit's (:data:`exactref.audit.BUCKETS`): ``0`` (the exact
rounding), ``(0, 0.5]``, ``(0.5, 1]``, ``(1, 2]``, ... ``(512, 1024]``, ``>1024`` and
``nonfinite`` (a NaN or infinity where the exact rounding is another value, or the reverse).
A bit pattern of a binary sweep is the pair's index ``x_code * 2**bits + y_code``.

A run is resumable: with ``state=FILE`` the completed ranges of bit patterns and their merged
aggregates are written to FILE (atomically, at most every second and at the end); a run
started again with the same FILE runs only what is missing, and refuses a FILE of another
run (another kernel, op, format, slice, contract, ``top`` or exactref version).

Parallelism is what the caller asks for: by default the chunks run in this process, in
order; ``executor=`` any :class:`concurrent.futures.Executor`; ``scheduler=`` a
``dask.distributed`` address, a ``distributed.Client``, or ``"local"`` (a LocalCluster of
``workers`` processes started and closed for the run). Process workers need a kernel they
can import: pass it as ``"module:function"``.

>>> import numpy as np
>>> report = exhaustive(np.exp, "exp", "float8_e4m3fn")
>>> report.inputs, report.uncovered, report.max_ulps
(256, 0, 0.0)
>>> report.histogram.as_dict()
{'0': 256}
"""

from __future__ import annotations

import builtins
import concurrent.futures
import contextlib
import json
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._array import asarray
from .._exact import FloatValue
from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from .._result import ulps_from_exact
from ..ops import get_op, op_names
from ._calls import KernelFault, describe_call
from ._contracts import call_reference
from ._histogram import BUCKETS, UlpHistogram
from ._plan import param_free

__all__ = ["exhaustive", "ExhaustiveReport", "ExhaustiveError", "KernelInputError",
           "Tally", "SCHEMA", "STATE_SCHEMA", "DEFAULT_CHUNK", "parse_slice", "sweep_size",
           "sweep_contract",
           "run_chunk", "run_chunks", "DASK_TASK_INPUTS"]

#: The report's schema (``ExhaustiveReport.to_dict``)
SCHEMA = "exactref.exhaustive/1"
#: The state file's schema
STATE_SCHEMA = "exactref.exhaustive-state/1"
#: Inputs per chunk by default: 2**16 (a float16 sweep in one chunk, float32 in 65536)
DEFAULT_CHUNK = 1 << 16
#: The largest chunk accepted (its working set is about 200 bytes per input)
MAX_CHUNK = 1 << 24
#: The widest format a unary sweep takes, and a binary one
_UNARY_BITS, _BINARY_BITS = 32, 8
#: Chunks in flight at once on an executor or a cluster, per worker (memory stays bounded)
_IN_FLIGHT = 4
#: Seconds between writes of the state file
_SAVE_EVERY = 1.0


class ExhaustiveError(ValueError):
    """A sweep that cannot run as asked (a format, op, slice, chunk or state file)."""


class KernelInputError(KernelFault):
    """The kernel raised, or returned something that is not the op's output, on these inputs
    (``codes``: their bit patterns, or pairs' indices)."""

    def __init__(self, message, codes=()):
        super().__init__(message, tuple(codes))

    def __str__(self):
        return self.args[0]

    @property
    def codes(self) -> tuple:
        return self.args[1]


# ------------------------------------------------------------------------------ checks
def sweep_size(op: str, fmt, slice=None) -> int:
    """How many inputs an exhaustive sweep of ``op`` in ``fmt`` runs (2**bits for a unary
    op, 2**(2 bits) for a binary one; those of ``slice`` where one is given);
    :class:`ExhaustiveError` where there is no such sweep."""
    size = 1 << (_check(op, fmt)[1].bits * _arity(op))
    if slice is None:
        return size
    start, stop = parse_slice(slice, size)
    return stop - start


def _arity(op) -> int:
    return get_op(op).arity


def _sweepable_ops() -> list:
    return [s.name for s in _candidates() if s.arity == 1] + \
        [s.name for s in _candidates() if s.arity == 2]


def _candidates():
    from ..ops import all_ops

    return [s for s in all_ops() if s.plan == "elementwise" and s.arity in (1, 2)
            and param_free(s) and "float" in s.kinds]


def _check(op, fmt):
    """``(op, Format)`` of a sweep that can run; :class:`ExhaustiveError` naming what was
    expected otherwise."""
    if op not in op_names():
        import difflib

        close = difflib.get_close_matches(str(op), list(op_names()), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ExhaustiveError(f"unknown op {op!r}{hint}; an exhaustive sweep takes an "
                              f"elementwise op of one or two operands: "
                              f"{', '.join(_sweepable_ops())}")
    if op not in _sweepable_ops():
        raise ExhaustiveError(f"{op} cannot be swept exhaustively: a sweep runs every input of "
                              f"an elementwise op of one or two float operands with no "
                              f"required parameter; these can: {', '.join(_sweepable_ops())}")
    name = getattr(fmt, "name", fmt)
    try:
        f = resolve_dtype(name)
    except (TypeError, ValueError):
        import difflib

        floats = [n for n, v in FORMATS.items() if v.kind == "float" and v.bits <= 32]
        close = difflib.get_close_matches(str(name), floats, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        shown = [n for n in floats if FORMATS[n].encoding == "native"]
        raise ExhaustiveError(f"the format {name!r}{hint} is not one exactref knows; an "
                              f"exhaustive sweep takes a float format of at most 32 bits: "
                              f"{', '.join(shown)} or a P3109 binary8 format (binary8p3se, "
                              f"...)") from None
    if f.kind != "float" or f.bits > _UNARY_BITS:
        raise ExhaustiveError(f"the format {f.name}: an exhaustive sweep runs every bit "
                              f"pattern of a float format of at most 32 bits (float32, "
                              f"float16, bfloat16, the 8-bit formats); {f.name} is a "
                              f"{f.bits}-bit {f.kind} format")
    if _arity(op) == 2 and f.bits > _BINARY_BITS:
        raise ExhaustiveError(f"{op} is a binary op: every pair of {f.name} inputs is "
                              f"2**{2 * f.bits} cases; exhaustive binary sweeps take formats of "
                              f"at most 8 bits (float8_e4m3fn, float8_e5m2, the binary8 "
                              f"formats...). For {f.name}, audit sampled pairs: exactref audit "
                              f"MODULE:FN --op {op} --dtypes {f.name}")
    return op, f


def sweep_contract(contract=None, *, ambient=None, compute=None, accuracy=None):
    """A sweep's contract as the audit merges one: ``ambient`` (``[tool.exactref]``) under
    ``contract``, then ``compute`` and ``accuracy`` (a number of ulps as text, or a preset)
    winning over both, per-op tables included; None where nothing is declared."""
    from ._contracts import override

    if ambient:
        contract = ambient | contract if contract else ambient
    fields = {}
    if compute is not None:
        fields["compute"] = compute
    if accuracy is not None:
        try:
            fields["accuracy"] = float(accuracy)
        except (TypeError, ValueError):
            fields["accuracy"] = accuracy
    return override(contract, **fields) if fields else contract


def parse_slice(text, size: int) -> tuple[int, int]:
    """``(start, stop)`` of the bit patterns ``START:STOP`` (integers in any base Python
    reads: ``0x3f800000``; an empty end: the format's), checked against ``size``."""
    if isinstance(text, builtins.slice):
        if text.step not in (None, 1):
            raise ExhaustiveError(f"slice={text!r}: a sweep runs consecutive bit patterns; "
                                  f"expected no step")
        start, stop = text.start, text.stop
    elif isinstance(text, (tuple, list)) and len(text) == 2:
        start, stop = text
    elif isinstance(text, str) and text.count(":") == 1:
        a, b = (t.strip() for t in text.split(":"))
        try:
            start = int(a, 0) if a else None
            stop = int(b, 0) if b else None
        except ValueError:
            raise ExhaustiveError(f"--slice {text!r}: expected START:STOP, two integers "
                                  f"(bit patterns, 0x... allowed), e.g. 0:65536") from None
    else:
        raise ExhaustiveError(f"--slice {text!r}: expected START:STOP (bit patterns, e.g. "
                              f"0x3f800000:0x3f810000), a (start, stop) pair or a slice")
    start = 0 if start is None else start
    stop = size if stop is None else stop
    if not (isinstance(start, (int, np.integer)) and isinstance(stop, (int, np.integer))):
        raise ExhaustiveError(f"slice {text!r}: the bit patterns must be integers")
    start, stop = int(start), int(stop)
    if not 0 <= start < stop <= size:
        raise ExhaustiveError(f"slice {start}:{stop} is not a non-empty range of the sweep's "
                              f"{size} bit patterns; expected 0 <= START < STOP <= {size}")
    return start, stop


# ----------------------------------------------------------------------------- kernels
_LOADED: dict = {}


def _kernel(kernel, op):
    """The callable of ``kernel`` (a callable, or ``"module:function"`` imported once per
    process)."""
    if not isinstance(kernel, str):
        return kernel
    fn = _LOADED.get(kernel)
    if fn is None:
        from ._targets import FunctionTarget

        fn = _LOADED[kernel] = FunctionTarget(kernel, op).fn
    return fn


def _kernel_name(kernel) -> str:
    if isinstance(kernel, str):
        return kernel
    module = getattr(kernel, "__module__", None) or type(kernel).__module__
    name = getattr(kernel, "__qualname__", None) or getattr(kernel, "__name__", None) or \
        type(kernel).__name__
    return f"{module}:{name}"


@dataclass(frozen=True)
class _Job:
    """What a worker needs to run a chunk (picklable: a kernel given as ``module:function``
    is imported where the chunk runs)."""

    kernel: object
    op: str
    fmt: str
    contract: object
    top: int


# ----------------------------------------------------------------------------- tallies
def _key(entry) -> tuple:
    return (-entry["ulps"], entry["code"])


def _first(entries, top) -> list:
    return sorted(entries, key=_key)[:top]


def _merge_ranges(ranges) -> list:
    out: list = []
    for a, b in sorted((int(a), int(b)) for a, b in ranges):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return out


@dataclass
class Tally:
    """The aggregates of a set of inputs, merged exactly (:meth:`merge`): counts, the
    histogram, the largest distance and the first ``top`` entries by (distance descending,
    bit pattern ascending), overall and among the inputs not covered; ``ranges``: the bit
    patterns they come from."""

    top: int = 10
    inputs: int = 0
    uncovered: int = 0
    histogram: UlpHistogram = field(default_factory=UlpHistogram)
    worst: list = field(default_factory=list)
    uncovered_worst: list = field(default_factory=list)
    ranges: list = field(default_factory=list)

    def merge(self, other: Tally) -> Tally:
        overlap = _overlap(self.ranges, other.ranges)
        if overlap:
            raise ValueError(f"the tallies both hold the bit patterns {overlap[0]}:"
                             f"{overlap[1]}: merging would count them twice")
        self.inputs += other.inputs
        self.uncovered += other.uncovered
        self.histogram = self.histogram + other.histogram
        self.worst = _first(self.worst + other.worst, self.top)
        self.uncovered_worst = _first(self.uncovered_worst + other.uncovered_worst, self.top)
        self.ranges = _merge_ranges(self.ranges + other.ranges)
        return self

    @property
    def max_ulps(self) -> float:
        """The largest distance from the exact rounding (inf where an output is a NaN or an
        infinity the exact rounding is not, or the reverse)."""
        return float("inf") if self.histogram.nonfinite else self.histogram.max_ulps

    def to_json(self) -> dict:
        return {"top": self.top, "inputs": self.inputs, "uncovered": self.uncovered,
                "counts": list(self.histogram.counts), "max_finite_ulps":
                    self.histogram.max_ulps, "worst": self.worst,
                "uncovered_worst": self.uncovered_worst, "ranges": self.ranges}

    @classmethod
    def from_json(cls, d) -> Tally:
        return cls(int(d["top"]), int(d["inputs"]), int(d["uncovered"]),
                   UlpHistogram([int(c) for c in d["counts"]], float(d["max_finite_ulps"])),
                   list(d["worst"]), list(d["uncovered_worst"]),
                   _merge_ranges(d["ranges"]))


def _overlap(a, b):
    for x0, x1 in a:
        for y0, y1 in b:
            if max(x0, y0) < min(x1, y1):
                return (max(x0, y0), min(x1, y1))
    return None


# ------------------------------------------------------------------------ one chunk
def _operands(fmt, codes, arity) -> list:
    """The kernel's operands: numpy arrays of the format (ml_dtypes where numpy has none;
    float64 values for the P3109 formats, which no dtype holds)."""
    parts = [codes] if arity == 1 else [codes >> fmt.bits, codes & ((1 << fmt.bits) - 1)]
    if fmt.encoding == "p3109":
        return [fmt.decode(p) for p in parts]
    width = np.dtype(f"uint{8 * fmt.itemsize}")
    return [p.astype(width).view(fmt.np_dtype) for p in parts]


def _hex(v) -> str:
    return FloatValue(float(v)).hex()


def _call(fn, name, xs):
    try:
        return fn(*[x.copy() for x in xs]), None
    except Exception as exc:  # the kernel's failure, told with its input below
        return None, exc


def _raising(fn, name, xs, codes, exc, bits) -> KernelInputError:
    """The kernel's exception on a chunk, with the first input it raises on (bisected: the
    half that raises, while one does)."""
    lo, hi = 0, len(codes)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        for a, b in ((lo, mid), (mid, hi)):
            _, e = _call(fn, name, [x[a:b] for x in xs])
            if e is not None:
                lo, hi, exc = a, b, e
                break
        else:
            break  # neither half raises alone: the whole range is what it raises on
    at = ", ".join(f"{_hex(x[lo])} (bits {int(c):#x})" for x, c in
                   zip(xs, _split(codes[lo], len(xs), bits), strict=True))
    where = f"on the input {at}" if hi - lo == 1 else \
        f"on the inputs of bit patterns {int(codes[lo])}:{int(codes[hi - 1]) + 1}"
    return KernelInputError(f"the kernel {name} raised {type(exc).__name__}: {exc} {where} "
                            f"(called as {describe_call(name.partition(':')[2] or name, [x[lo:hi] for x in xs], {})}"
                            f")", [int(c) for c in codes[lo:hi]][:16])


def _split(code, arity, bits) -> list:
    """A bit pattern of the sweep as its operands' codes."""
    if arity == 1:
        return [code]
    return [int(code) >> bits, int(code) & ((1 << bits) - 1)]


def _checked(out, name, op, ref, xs, codes) -> np.ndarray:
    """The kernel's output as a numpy array of the reference's shape and format;
    :class:`KernelInputError` (with the chunk) where it is not."""
    n = len(codes)
    span = f"bit patterns {int(codes[0])}:{int(codes[-1]) + 1}"
    want = ref.rounded.dtype
    if out is None or not hasattr(out, "shape") and not isinstance(out, (list, tuple)):
        raise KernelInputError(f"the kernel {name} returned {type(out).__name__} ({out!r:.60}), "
                               f"not an array, on the inputs of {span}", [int(codes[0])])
    out = np.asarray(out)
    if out.shape != (n,):
        raise KernelInputError(f"the kernel {name} returned shape {out.shape} for {n} inputs "
                               f"of shape ({n},) ({span}); an elementwise {op} kernel returns "
                               f"one output per input", [int(codes[0])])
    if want.encoding == "native":
        try:
            got = resolve_dtype(out.dtype)
        except (TypeError, ValueError):
            got = None
        if got is not want:
            raise KernelInputError(
                f"the kernel {name} returned {out.dtype} where {op} of {xs[0].dtype} gives "
                f"{want.name} ({span}); return an array of {want.name} (the sweep compares "
                f"the op's own output format)", [int(codes[0])])
    return out


def run_chunk(job: _Job, start: int, stop: int) -> Tally:
    """The :class:`Tally` of the bit patterns ``start:stop``: the kernel run on them, checked
    against the reference and measured from the exact rounding."""
    fmt = FORMATS[job.fmt]
    arity = _arity(job.op)
    codes = np.arange(start, stop, dtype=np.int64)
    xs = _operands(fmt, codes, arity)
    fn = _kernel(job.kernel, job.op)
    name = _kernel_name(job.kernel)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = call_reference(job.op, [asarray(x, fmt) for x in xs], {}, job.contract)
        out, exc = _call(fn, name, xs)
        if exc is not None:
            raise _raising(fn, name, xs, codes, exc, fmt.bits)
        out = _checked(out, name, job.op, ref, xs, codes)
        cov = ref.covers(out)
        ulps = ulps_from_exact(ref, out).reshape(-1)
    mask = np.asarray(cov.mask).reshape(-1)
    hist = UlpHistogram.from_distances(np.where(np.isinf(ulps), np.nan, ulps))
    t = Tally(job.top, len(codes), int(len(codes) - np.count_nonzero(mask)), hist,
              ranges=[[start, stop]])
    if job.top:
        entries = lambda idx: _entries(idx, ulps, mask, codes, xs, out, ref, cov)  # noqa: E731
        t.worst = entries(_top(np.flatnonzero(ulps > 0), ulps, job.top))
        t.uncovered_worst = entries(_top(np.flatnonzero(~mask), ulps, job.top))
    return t


def _top(idx, ulps, k) -> np.ndarray:
    """The first ``k`` of ``idx`` (increasing) by distance descending, then index."""
    if len(idx) > k:
        u = ulps[idx]
        kth = np.partition(u, len(u) - k)[len(u) - k]
        idx = idx[u >= kth]
    order = np.argsort(-ulps[idx], kind="stable")
    return idx[order][:k]


def _entries(idx, ulps, mask, codes, xs, out, ref, cov) -> list:
    rounded = np.asarray(ref.rounded.numpy()).reshape(-1)
    entries = []
    for i in idx:
        i = int(i)
        _, lo, hi = cov.interval((i,))
        entries.append({"code": int(codes[i]), "ulps": float(ulps[i]),
                        "inputs": [_hex(x[i]) for x in xs], "actual": _hex(out[i]),
                        "expected": _hex(rounded[i]), "allowed": [_hex(lo), _hex(hi)],
                        "covered": bool(mask[i])})
    return entries


# ------------------------------------------------------------------------------ report
@dataclass
class ExhaustiveReport:
    """What a sweep found; :meth:`to_dict` (JSON, the same for any chunking or scheduler
    with ``timing=False``) and :meth:`render` (text)."""

    kernel: str
    op: str
    format: str
    result_format: str
    start: int
    stop: int
    contract: dict
    tally: Tally
    seconds: float = 0.0
    #: the inputs this call ran (the rest came from the state file)
    ran: int = 0
    interrupted: bool = False
    state: str | None = None
    where: str = "this process"

    @property
    def total(self) -> int:
        return self.stop - self.start

    @property
    def inputs(self) -> int:
        return self.tally.inputs

    @property
    def uncovered(self) -> int:
        return self.tally.uncovered

    @property
    def max_ulps(self) -> float:
        return self.tally.max_ulps

    @property
    def histogram(self) -> UlpHistogram:
        return self.tally.histogram

    @property
    def worst(self) -> list:
        return self.tally.worst

    @property
    def uncovered_worst(self) -> list:
        return self.tally.uncovered_worst

    @property
    def complete(self) -> bool:
        return self.inputs == self.total

    @property
    def passed(self) -> bool:
        return self.complete and self.uncovered == 0

    @property
    def rate(self) -> float:
        """Inputs per second of this call (0 where it ran none)."""
        return self.ran / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self, timing: bool = True) -> dict:
        d = {"schema": SCHEMA, "kernel": self.kernel, "op": self.op, "format": self.format,
             "result_format": self.result_format, "slice": [self.start, self.stop],
             "contract": self.contract, "total": self.total, "inputs": self.inputs,
             "complete": self.complete, "covered": self.inputs - self.uncovered,
             "uncovered": self.uncovered, "max_ulps": _number(self.max_ulps),
             "ulp_buckets": list(BUCKETS), "ulp_histogram": self.histogram.as_dict(zeros=True),
             "worst": [_json_entry(e) for e in self.worst],
             "uncovered_worst": [_json_entry(e) for e in self.uncovered_worst]}
        if timing:
            d["timing"] = {"seconds": round(self.seconds, 3), "ran": self.ran,
                           "inputs_per_second": round(self.rate, 1), "where": self.where,
                           "interrupted": self.interrupted, "state": self.state}
        return d

    def render(self) -> str:
        """The report as text: the counts, the histogram's non-empty buckets, the worst
        inputs (and the uncovered ones where they are others)."""
        what = f"{self.op} of {self.format}" + ("" if (self.start, self.stop) == (
            0, sweep_size(self.op, self.format)) else f", bit patterns {self.start:#x}:{self.stop:#x}")
        lines = [f"exactref audit {self.kernel} --op {self.op} --exhaustive {self.format}: "
                 f"{what} -> {self.result_format}"]
        if self.contract:
            lines.append("under the contract: " + ", ".join(f"{k}={v}" for k, v in
                                                            self.contract.items()))
        status = "PASS" if self.passed else ("FAIL" if self.uncovered else "INCOMPLETE")
        lines.append(f"{status}: {self.inputs} of {self.total} inputs run, {self.uncovered} "
                     f"not covered; max {_ulps(self.max_ulps)} ulps from the exact rounding")
        if self.ran:
            lines.append(f"{self.ran} inputs in {self.seconds:.3g} s ({self.rate:,.0f} "
                         f"inputs/s, {self.where})")
        h = self.histogram
        lines.append("ulps from exact: " + ", ".join(f"{b}: {c}" for b, c in
                                                      h.as_dict().items()))
        for title, entries in (("worst inputs", self.worst),
                               ("not covered", self.uncovered_worst)):
            if not entries or (title == "not covered" and entries == self.worst):
                continue
            lines.append(f"{title} (ulps from the exact rounding, then bit pattern):")
            for e in entries:
                mark = "" if e["covered"] else "  NOT COVERED"
                lines.append(f"  {', '.join(e['inputs'])} (bits {e['code']:#x}): actual "
                             f"{e['actual']}, exact rounding {e['expected']}, "
                             f"{_ulps(e['ulps'])} ulps; allowed [{e['allowed'][0]}, "
                             f"{e['allowed'][1]}]{mark}")
        if not self.complete:
            left = self.total - self.inputs
            lines.append(f"incomplete: {left} inputs not run" + (
                f"; run again with the state file {self.state} to resume" if self.state
                else ""))
        return "\n".join(lines)


def _number(v):
    return "inf" if v == float("inf") else v


def _json_entry(e) -> dict:
    return {**e, "ulps": _number(e["ulps"])}


def _ulps(v) -> str:
    return "inf" if v == float("inf") else f"{v:g}"


# ------------------------------------------------------------------------------- state
def _identity(name, op, fmt, start, stop, contract, top) -> dict:
    from .. import __version__

    return {"kernel": name, "op": op, "format": fmt, "slice": [start, stop],
            "contract": contract, "top": top, "exactref": __version__}


def _load_state(path, identity) -> Tally | None:
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        if d.get("schema") != STATE_SCHEMA:
            raise ValueError(f"its schema is {d.get('schema')!r}, not {STATE_SCHEMA!r}")
        run = d["run"]
        tally = Tally.from_json(d["tally"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExhaustiveError(f"the state file {path!r} is not an exhaustive sweep's state "
                              f"({exc}); pass another --state file, or delete it to start "
                              f"over") from None
    differ = [f"{k} {run.get(k)!r} there, {v!r} here" for k, v in identity.items()
              if run.get(k) != v]
    if differ:
        raise ExhaustiveError(f"the state file {path!r} is of another run ({'; '.join(differ)});"
                              f" pass another --state file for this one, or delete it to start "
                              f"over")
    return tally


def _check_state_path(path) -> None:
    """Refuse, before any chunk runs, a state file that could not be written at the end."""
    folder = os.path.dirname(os.path.abspath(path))
    if not path or os.path.isdir(path):
        raise ExhaustiveError(f"state={path!r} is {'a directory' if path else 'empty'}, not a "
                              f"file; expected a file name such as 'sweep.json'")
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
        why = "does not exist" if not os.path.isdir(folder) else "is not writable"
        raise ExhaustiveError(f"the state file {path!r} cannot be written: its folder "
                              f"{folder!r} {why}; choose a file in a folder you can write to")


def _save_state(path, identity, tally) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"schema": STATE_SCHEMA, "run": identity, "tally": tally.to_json()}, fh)
    os.replace(tmp, path)


def _pieces(start, stop, done, chunk) -> list:
    """The ranges of ``start:stop`` not in ``done``, cut into chunks of at most ``chunk``."""
    out, at = [], start
    for a, b in _merge_ranges(done) + [[stop, stop]]:
        for s in range(at, min(a, stop), chunk):
            out.append((s, min(s + chunk, a, stop)))
        at = max(at, b)
    return out


# -------------------------------------------------------------------------- schedulers
def _client(scheduler, workers):
    """``(client, close)``: a ``distributed.Client`` for ``scheduler`` and what closes what
    this call started."""
    try:
        import distributed
    except ImportError:
        raise ImportError("an exhaustive sweep on Dask needs dask.distributed, which is not "
                          "installed here: pip install 'exactref[dask]'; or leave scheduler "
                          "out (this process) or pass an executor") from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, contextlib.nullcontext()
    if not isinstance(scheduler, str) or not scheduler:
        raise ExhaustiveError(f"scheduler={scheduler!r}: expected a dask.distributed address "
                              f"('tcp://host:8786'), 'local' (a LocalCluster started for the "
                              f"run) or a distributed.Client")
    stack = contextlib.ExitStack()
    if scheduler == "local":
        cluster = stack.enter_context(distributed.LocalCluster(
            n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
            dashboard_address=":0"))
        client = stack.enter_context(distributed.Client(cluster))
    else:
        try:
            client = stack.enter_context(distributed.Client(scheduler, timeout=_CONNECT_S))
        except OSError as exc:  # no scheduler there (a timeout, a refused connection, no host)
            raise ExhaustiveError(
                f"cannot reach a Dask scheduler at {scheduler!r} ({type(exc).__name__}: "
                f"{exc}); start one there (dask scheduler, then dask worker {scheduler}), "
                f"pass the address it prints ('tcp://host:8786'), or pass 'local' to start a "
                f"LocalCluster for the run") from None
    return client, stack


#: seconds to wait for a named scheduler to answer
_CONNECT_S = 10


#: inputs per Dask task at most: consecutive chunks run in one task and their tallies merge
#: there (exactly: the report does not change). A task costs the scheduler and the transport
#: about 20 ms on 2 shared cores, which at one chunk of 65536 a task was half the sweep's time.
DASK_TASK_INPUTS = 2**20


def run_chunks(job: _Job, pieces) -> Tally:
    """The merged tally of the chunks ``pieces`` (``[(start, stop), ...]``), run in order."""
    tally = None
    for a, b in pieces:
        t = run_chunk(job, a, b)
        tally = t if tally is None else tally.merge(t)
    return tally


def _batches(pieces, most: int) -> list:
    """``pieces`` in runs of consecutive chunks of at most ``most`` inputs (one at least)."""
    out, run, size = [], [], 0
    for a, b in pieces:
        if run and size + (b - a) > most:
            out.append(run)
            run, size = [], 0
        run.append((a, b))
        size += b - a
    return out + ([run] if run else [])


def _run_all(job, pieces, executor, client, window, on_done):
    """Every piece run, ``on_done(tally)`` called as each completes (in this process, in
    order, without an executor or a client)."""
    if executor is None and client is None:
        for a, b in pieces:
            on_done(run_chunk(job, a, b))
        return
    todo = iter(pieces)
    if client is not None:
        from distributed import as_completed

        live = set()  # the futures not yet read: a read one is dropped (its result with it)
        todo = iter(_batches(pieces, DASK_TASK_INPUTS))
        shared = client.scatter(job, broadcast=True, hash=False)  # sent once, not per task

        def submit(batch):
            fut = client.submit(run_chunks, shared, batch, pure=False)
            live.add(fut)
            return fut

        queue = as_completed([submit(b) for b in _take(todo, window)])
        try:
            for fut in queue:
                tally = fut.result()
                live.discard(fut)
                on_done(tally)
                for b in _take(todo, 1):
                    queue.add(submit(b))
        finally:
            if live:
                client.cancel(list(live))
        return
    pending = {executor.submit(run_chunk, job, a, b) for a, b in _take(todo, window)}
    try:
        while pending:
            done, pending = concurrent.futures.wait(pending, return_when="FIRST_COMPLETED")
            for fut in sorted(done, key=id):
                on_done(fut.result())
                pending |= {executor.submit(run_chunk, job, a, b) for a, b in _take(todo, 1)}
    finally:
        for fut in pending:
            fut.cancel()


def _unsendable(exc, job) -> bool:
    """Whether ``exc`` says the chunk's job could not be pickled for a worker process."""
    import pickle

    text = str(exc).lower()
    return isinstance(exc, pickle.PicklingError) or (
        isinstance(exc, (AttributeError, TypeError)) and "pickle" in text)


def _take(it, n) -> list:
    out = []
    for _ in range(n):
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out


def _workers(executor, client) -> int:
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a count for the window only
            return 1
    return getattr(executor, "_max_workers", None) or os.cpu_count() or 1


# -------------------------------------------------------------------------------- api
def exhaustive(kernel, op: str, fmt, *, contract=None, state=None, chunk: int = DEFAULT_CHUNK,
               executor=None, scheduler=None, workers: int | None = None, slice=None,
               top: int = 10, progress=None) -> ExhaustiveReport:
    """Run ``kernel`` on every input of ``fmt`` (every pair for a binary op of an 8-bit
    format), or the bit patterns of ``slice``, against ``er.<op>`` under ``contract``.

    ``kernel``: a callable taking numpy arrays of the format (ml_dtypes' for bfloat16 and
    float8; float64 values for the P3109 formats) and returning the op's output format, or
    ``"module:function"``. ``state``: a file that makes the run resumable (see the module's
    docstring). ``chunk``: inputs per call of the kernel. ``executor``: a
    :class:`concurrent.futures.Executor` to run the chunks on; ``scheduler``: a
    ``dask.distributed`` address, a ``distributed.Client``, or ``"local"`` with ``workers``
    processes. ``slice``: ``"START:STOP"``, ``(start, stop)`` or a slice of bit patterns.
    ``top``: how many worst inputs to keep. ``progress(done, total)`` is called at the start
    and after each chunk. Ctrl-C stops the run with the state saved (``interrupted``). A kernel that raises
    or returns no output of the op's format raises :class:`KernelInputError` naming the input.
    """
    from .._contract import Contract, ContractError
    from ._contracts import check

    op, f = _check(op, fmt)
    size = 1 << (f.bits * _arity(op))
    start, stop = parse_slice(slice, size) if slice is not None else (0, size)
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or \
            not 1 <= chunk <= MAX_CHUNK:
        raise ExhaustiveError(f"chunk={chunk!r}: expected an integer from 1 to {MAX_CHUNK} "
                              f"(inputs per call of the kernel; default {DEFAULT_CHUNK})")
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 0 <= top <= 10000:
        raise ExhaustiveError(f"top={top!r}: expected an integer from 0 to 10000 (how many "
                              f"worst inputs the report keeps)")
    if executor is not None and scheduler is not None:
        raise ExhaustiveError("pass executor= or scheduler=, not both: the chunks run on one "
                              "of them")
    if workers is not None and scheduler != "local":
        given = "an executor" if executor is not None else \
            "another scheduler" if scheduler is not None else "no scheduler (this process)"
        raise ExhaustiveError(f"workers={workers!r} sets the size of the LocalCluster that "
                              f"scheduler='local' starts; with {given} it has no use: leave "
                              f"workers out")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ExhaustiveError(f"workers={workers!r}: expected an integer >= 1")
    if not callable(kernel) and not isinstance(kernel, str):
        raise ExhaustiveError(f"kernel={kernel!r:.60}: expected a callable or "
                              f"'module:function'")
    try:
        if contract is not None and not isinstance(contract, Contract):
            contract = Contract.from_mapping(contract)
        check(contract, [op], single=True)
    except ContractError as exc:
        raise ExhaustiveError(str(exc)) from None
    contract = contract or None
    fields = {} if contract is None else {k: v if isinstance(v, (str, int, float, bool))
                                          else repr(v) for k, v in contract.fields().items()}
    if isinstance(kernel, str):  # imported here first: a bad name fails before any worker
        try:
            _kernel(kernel, op)
        except ValueError as exc:  # not module:function, not importable, not a function
            raise ExhaustiveError(str(exc)) from None
    name = _kernel_name(kernel)
    job = _Job(kernel, op, f.name, contract, int(top))
    identity = _identity(name, op, f.name, start, stop, fields, int(top))
    if state is not None:
        state = os.fspath(state)
        _check_state_path(state)
    tally = (_load_state(state, identity) if state else None) or Tally(int(top))
    resumed = tally.inputs
    result_format = _result_format(op, f, contract)
    pieces = _pieces(start, stop, tally.ranges, int(chunk))
    report = ExhaustiveReport(name, op, f.name, result_format, start, stop, fields, tally,
                              state=state)
    began = last = time.perf_counter()

    def on_done(t):
        nonlocal last
        report.tally.merge(t)
        now = time.perf_counter()
        if state and now - last >= _SAVE_EVERY:
            _save_state(state, identity, report.tally)
            last = now
        if progress is not None:
            progress(report.tally.inputs, report.total)

    client, closing = (None, contextlib.nullcontext()) if scheduler is None else \
        _client(scheduler, workers)
    try:
        with closing:
            report.where = _where(executor, client, scheduler)
            window = _IN_FLIGHT * _workers(executor, client)
            if progress is not None:  # the start (what a state file held already)
                progress(report.tally.inputs, report.total)
            try:
                _run_all(job, pieces, executor, client, window, on_done)
            except Exception as exc:
                if not _unsendable(exc, job):
                    raise
                raise ExhaustiveError(
                    f"the kernel {name} cannot be sent to the workers ({type(exc).__name__}: "
                    f"{exc}); pass it as 'module:function' (a function importable where the "
                    f"workers run), or run without an executor") from exc
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        report.seconds = time.perf_counter() - began
        report.ran = report.tally.inputs - resumed
        if state:
            _save_state(state, identity, report.tally)
    return report


def _result_format(op, f, contract) -> str:
    """The op's output format for operands of ``f`` (the reference's of one input)."""
    codes = np.zeros(1, dtype=np.int64)
    xs = _operands(f, codes, _arity(op))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = call_reference(op, [asarray(x, f) for x in xs], {}, contract)
    return ref.rounded.dtype.name


def _where(executor, client, scheduler) -> str:
    if client is not None:
        kind = "a LocalCluster" if scheduler == "local" else f"Dask at {client.scheduler.address}"
        return f"{kind}, {_workers(None, client)} worker threads"
    if executor is not None:
        return f"{type(executor).__name__}, {_workers(executor, None)} workers"
    return "this process"
