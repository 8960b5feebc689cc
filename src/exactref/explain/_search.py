"""The search of :func:`exactref.explain.explain`: contracts tried one dimension at a time from
the result's own, then in pairs, each evaluated by recomputing the reference under it.

Each dimension is an implementation freedom of :class:`exactref.Contract` (``compute=``,
``order=``, ``flush=``...). A dimension is tried on an op when its function takes the keyword
of that name (``inspect.signature(get_op(name).function)``), or, for ``flush``, when the
contract layer applies it to every op. A value the op refuses (``er.ContractError``, a
ValueError or TypeError) is skipped and recorded as refused: the search never depends on which
options an op has.

The number of evaluations is bounded: at most :data:`MAX_SINGLE` single changes (every value of
every dimension below is about 40 for a function, fewer elsewhere) and :data:`MAX_PAIRS` pairs.
Large elementwise inputs are sampled (:data:`SAMPLE`): every uncovered element up to half of it,
the rest drawn from the covered ones with a fixed seed.
"""

from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._array import Array, asarray
from .._exact import ulp
from .._formats import dtype as resolve_dtype
from .._result import actual_parts, unmask
from ..arithmetic import ACCURACY_PRESETS
from ..ops import get_op

__all__ = ["DIMENSIONS", "Outcome", "Search", "MAX_SINGLE", "MAX_PAIRS", "SAMPLE",
           "op_dimensions"]

#: The most single-dimension changes evaluated, and the most pairs after them.
MAX_SINGLE = 64
MAX_PAIRS = 32
#: Elementwise results larger than this are explained on a sample of this many elements.
SAMPLE = 8192
#: the fewest nonzero finite outputs that, all values of a narrower format, are taken as the
#: outputs' evidence of a last rounding there (by chance: about 2**-(p - p') each)
_EVIDENCE = 4
#: the ``accuracy=`` ulps ladder: 1, 2, 4, ... 2**12 (stops at the first that covers)
_ULPS_LADDER = tuple(float(2**k) for k in range(13))

#: The dimensions searched and the values tried for each (the result's own value skipped).
#: ``compute`` and ``accuracy`` are filled per op (:meth:`Search.values`).
DIMENSIONS = {
    "accuracy": None,
    "compute": ("bfloat16", "float16", "float32", "float64"),
    "order": ("sequential", "pairwise", "library", "any"),
    "algorithm": ("two-pass", "welford", "one-pass"),
    "flush": ("inputs", "outputs", "both"),
    "divide": ("reciprocal",),
    "fused": (True, False),
    "overflow": ("saturate", "ieee"),
    "scale_rule": ("floor", "rceil"),
    "specials": ("formula",),
    "padding_taps": ("skip", "zeros"),
    "params": None,
}
#: dimensions the contract layer applies to every op, whatever its keywords
_GENERIC = ("flush",)
#: ``params``: the scalar parameters tried stored in a narrower format, and the formats
_PARAMS = ("eps",)
_PARAM_FORMATS = ("float32", "float16", "bfloat16")


def _contract_type():
    """``er.Contract`` where it exists (the contract layer), else None."""
    try:
        from .._contract import Contract
    except ImportError:  # an older tree: keywords only
        return None
    return Contract


def op_dimensions(op: str) -> tuple:
    """The searched dimensions op ``op`` has: the keywords of its function, in
    :data:`DIMENSIONS` order, plus those the contract layer applies to every op."""
    params = inspect.signature(get_op(op).function).parameters
    generic = _GENERIC if _contract_type() is not None else ()
    if generic and any(p in params for p in _PARAMS):  # the contract layer stores them
        generic = (*generic, "params")
    return tuple(d for d in DIMENSIONS if d in params or d in generic)


def _key(fields: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in fields.items()))


@dataclass
class Outcome:
    """One evaluated contract: the fields changed from the result's own (``changes``), how many
    elements it covers, its median and mean tolerance in ulps (over the elements with a
    result), or the reason it was refused."""

    changes: dict
    covered: int = 0
    total: int = 0
    median_ulps: float = math.inf
    mean_ulps: float = math.inf
    mask: np.ndarray | None = field(default=None, repr=False)
    refused: str | None = None
    #: a narrower compute format that holds every output exactly: its precision in bits
    #: (the outputs' own evidence that the last rounding was in it), else None
    evidence: int | None = None
    #: how many elements have a nonzero tolerance (a change that widens fewer explains more)
    widened: int = 0

    @property
    def covers_all(self) -> bool:
        return self.refused is None and self.covered == self.total

    def rank(self) -> tuple:
        """Tightest first: a compute format the outputs prove (:attr:`evidence`, the
        narrowest first), then the smallest median tolerance, the smallest mean, the fewest
        elements widened (a nonzero tolerance), the fewest changed dimensions, and a named preset
        before a bare number of ulps."""
        numbers = sum(isinstance(v, float) for v in self.changes.values())
        proven = (0, self.evidence) if self.evidence is not None else (1, 0)
        return (*proven, self.median_ulps, self.mean_ulps, self.widened, len(self.changes),
                numbers)


class Search:
    """The state of one explanation: the call, the actual output (as float64 parts, sampled
    where large), the result's own contract fields and every outcome evaluated so far."""

    def __init__(self, result, actual):
        call = getattr(result, "call", None)
        if not call:
            raise ValueError(
                f"explain needs a Result of an exactref op that carries its call "
                f"(result.call = (op name, args, kwargs)); got {type(result).__name__} without "
                f"one. Pass the Result an er.<op> call returned")
        if not hasattr(result, "rounded") or not hasattr(result, "tolerance_ulps"):
            raise ValueError(
                f"explain takes a Result of an exactref op (rounded values with a tolerance); "
                f"got {type(result).__name__}. A quantizer's output (er.quantize) is checked "
                f"by its codes and scales: declare the rules it may follow (scale_rule=, "
                f"'any' for every rule) and read Quantized.covers(codes, scales)")
        self.result = result
        self.op, self.args, self.kwargs = call[0], tuple(call[1]), dict(call[2])
        self.given = call[3] if len(call) > 3 else None  # the contract the call was given
        self.spec = get_op(self.op)
        self.format = result.rounded.dtype
        self.shape = tuple(result.rounded.shape)
        data, hidden = unmask(actual)
        if hidden is not None and hidden.any():
            raise ValueError("explain takes an unmasked actual output (a masked array's hidden "
                             "elements cannot be explained); pass the data with no mask")
        self.parts = actual_parts(data, self.shape, self.format)
        self.dims = op_dimensions(self.op)
        self.base = self._base_fields()
        self.outcomes: dict = {}
        self._held: dict = {}  # compute format -> whether every output is a value of it
        self.index = None  # the flat indices explained (None: every element)
        self.rows = None  # row sampling: the first operand's rows explained
        self.sampled_from = None
        self.cut_short = None  # (evaluations, seconds) where run's time limit stopped it
        self._sample()

    # ------------------------------------------------------------------ the result's own
    def _base_fields(self) -> dict:
        contract = getattr(self.result, "contract", None)  # the fields that applied
        if contract is not None and hasattr(contract, "fields"):
            fields = dict(contract.fields())
        else:
            fields = {}
        for d in self.dims:  # a keyword of the call is part of the contract as called
            if d in self.kwargs and self.kwargs[d] is not None:
                fields.setdefault(d, self.kwargs[d])
        return fields

    def base_contract(self):
        return self.contract_of({})

    def contract_of(self, changes: dict):
        """The contract an outcome stands for: the result's own with ``changes``, an
        ``er.Contract`` where the contract layer exists, else the dict of fields."""
        Contract = _contract_type()
        if Contract is None:
            return {**self.base, **changes}
        return Contract.from_mapping({**self.base, **changes})

    # ------------------------------------------------------------------ sampling
    def _sample(self) -> None:
        """Large outputs: explain a sample. Elementwise ops: every uncovered element up to
        half of :data:`SAMPLE`, the rest drawn from the covered ones (a fixed seed). Other ops
        whose first operand's rows are the output's rows: whole rows, those holding uncovered
        elements first, where the reference of those rows is the rows of the reference (checked:
        the rounded values and tolerances are equal)."""
        n = int(np.prod(self.shape, dtype=np.int64))
        if n <= SAMPLE or len(self.parts) != 1:
            return
        operands = [*self.args, *self.kwargs.values()]
        if not all(_array_like(v) or np.ndim(v) == 0 for v in operands
                   if v is not None and not isinstance(v, (tuple, str))):
            return  # lists and other containers: explained whole
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mask = np.asarray(self.result.covers(self.parts[0]).mask).reshape(-1)
        rng = np.random.default_rng(0)
        if self.spec.plan != "elementwise":
            self._sample_rows(n, mask, rng)
            return
        bad = np.flatnonzero(~mask)
        good = np.flatnonzero(mask)
        bad = bad if bad.size <= SAMPLE // 2 else np.sort(rng.choice(bad, SAMPLE // 2, False))
        k = min(good.size, SAMPLE - bad.size)
        good = np.sort(rng.choice(good, k, replace=False)) if k < good.size else good
        self.index = np.sort(np.concatenate([bad, good]))
        self.sampled_from = n

    def _sample_rows(self, n: int, mask: np.ndarray, rng) -> None:
        if not self.args or not _array_like(self.args[0]):
            return
        x = asarray(self.args[0])
        rows = x.shape[0]
        if len(x.shape) < 2 or not self.shape or self.shape[0] != rows or rows < 2:
            return
        per_row = n // rows
        keep = max(1, SAMPLE // per_row)
        if keep >= rows:
            return
        ok = mask.reshape(rows, per_row).all(axis=1)
        bad, good = np.flatnonzero(~ok), np.flatnonzero(ok)
        nb = min(bad.size, max(1, keep // 2))
        bad = np.sort(rng.choice(bad, nb, replace=False)) if nb < bad.size else bad
        ng = min(good.size, keep - bad.size)
        good = np.sort(rng.choice(good, ng, replace=False)) if ng < good.size else good
        sel = np.sort(np.concatenate([bad, good])).astype(np.int64)
        self.rows = sel
        try:  # the reference of the rows must be the rows of the reference
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                sub = self.recompute({})
                same = _rows_equal(sub, self.result, sel)
        except Exception:  # noqa: BLE001 - rows that cannot be recomputed: explained whole
            same = False
        if not same:
            self.rows = None
            return
        self.index = (sel[:, None] * per_row + np.arange(per_row)).reshape(-1)
        self.sampled_from = n

    def _operands(self):
        """The call's operands, restricted to the sampled elements (elementwise ops: each
        array operand broadcast to the output's shape, then indexed; row sampling: the first
        operand's rows)."""
        if self.rows is not None:
            x = asarray(self.args[0])
            rows = Array(np.ascontiguousarray(x._data[self.rows]), x.dtype)
            return (rows, *self.args[1:]), self.kwargs
        if self.index is None:
            return self.args, self.kwargs
        names = set(self.spec.operands)
        params = list(inspect.signature(self.spec.function).parameters)

        def take(v):
            arr = asarray(v)  # an array of any library, in its own format
            data = np.broadcast_to(arr._data, self.shape).reshape(-1)[self.index]
            return Array(np.ascontiguousarray(data), arr.dtype)

        args = tuple(take(a) if i < len(params) and params[i] in names and _array_like(a)
                     else a for i, a in enumerate(self.args))
        kwargs = {k: take(v) if k in names and _array_like(v) else v
                  for k, v in self.kwargs.items()}
        return args, kwargs

    def actual(self) -> np.ndarray:
        a = self.parts[0] if len(self.parts) == 1 else self.parts[0] + 1j * self.parts[1]
        if self.index is None:
            return a
        if self.rows is not None:
            return np.asarray(a)[self.rows]
        return np.asarray(a).reshape(-1)[self.index]

    # ------------------------------------------------------------------ evaluation
    def recompute(self, changes: dict):
        """The reference recomputed under the result's contract with ``changes`` (the fields
        that applied to the call, an ambient contract's included, merged with them; the call's
        own keywords for those fields give way), on the explained elements. Without a contract layer, the call made
        again with those keywords."""
        args, kwargs = self._operands()
        fn = self.spec.function
        kwargs = {k: v for k, v in kwargs.items() if k not in changes}
        Contract = _contract_type()
        if Contract is None:
            return fn(*args, **kwargs, **changes)
        # the fields that applied (an ambient contract's included) with the changes
        return fn(*args, contract=self.contract_of(changes), **kwargs)

    def evaluate(self, changes: dict) -> Outcome:
        key = _key(changes)
        if key in self.outcomes:
            return self.outcomes[key]
        out = Outcome(dict(changes))
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ref = self.result if not changes and self.index is None else \
                    self.recompute(changes)
                cov = ref.covers(self.actual())
                tol = np.asarray(ref.tolerance_ulps(), dtype=np.float64).reshape(-1)
        except (ValueError, TypeError, NotImplementedError) as exc:  # er.ContractError too
            out.refused = f"{type(exc).__name__}: {exc}"
            self.outcomes[key] = out
            return out
        except Exception as exc:  # noqa: BLE001 - an op's failure under one contract is
            # reported in the table, and the search goes on with the others
            out.refused = f"failed: {type(exc).__name__}: {exc}"
            self.outcomes[key] = out
            return out
        mask = np.asarray(cov.mask).reshape(-1)
        out.mask, out.covered, out.total = mask, int(mask.sum()), int(mask.size)
        undef = np.asarray(getattr(ref, "undefined", np.zeros(0, bool))).reshape(-1)
        if undef.size == tol.size and undef.any():
            tol = tol[~undef]
        tol = tol[~np.isnan(tol)]
        out.widened = int(np.count_nonzero(tol))
        if tol.size:
            out.median_ulps = float(np.median(tol))
            with np.errstate(over="ignore", invalid="ignore"):
                out.mean_ulps = float(np.mean(tol))
        else:
            out.median_ulps = out.mean_ulps = 0.0
        out.evidence = self._evidence(changes.get("compute"))
        self.outcomes[key] = out
        return out

    def _evidence(self, compute) -> int | None:
        """The precision of ``compute`` where it is narrower than the output format and every
        finite output is a value of it (the outputs were last rounded there), else None."""
        if not isinstance(compute, str) or len(self.parts) != 1:
            return None
        try:
            fmt = resolve_dtype(compute)
        except (ValueError, TypeError, KeyError):
            return None
        out = self.format
        if fmt.kind != "float" or out.kind != "float" or fmt.precision >= out.precision or \
                fmt.np_dtype is None:
            return None
        if compute not in self._held:
            a = np.asarray(self.actual(), dtype=np.float64).reshape(-1)
            a = a[np.isfinite(a) & (a != 0)]
            with np.errstate(all="ignore"):
                back = a.astype(fmt.np_dtype).astype(np.float64)
            self._held[compute] = bool(a.size >= _EVIDENCE and np.array_equal(back, a))
        return fmt.precision if self._held[compute] else None

    # ------------------------------------------------------------------ candidate values
    def values(self, dim: str) -> tuple:
        """The values tried for ``dim`` on this op, the result's own left out."""
        own = self.base.get(dim, self.kwargs.get(dim))
        if dim == "accuracy":
            vals = ("correct", *[p for p in ACCURACY_PRESETS if p != "correct"],
                    *_ULPS_LADDER)
        elif dim == "params":
            params = inspect.signature(self.spec.function).parameters
            vals = tuple({p: f} for p in _PARAMS if p in params for f in _PARAM_FORMATS)
        else:
            vals = DIMENSIONS[dim]
        return tuple(v for v in vals if not _same(v, own))

    def run(self, seconds: float | None = None) -> None:
        """Single changes of every dimension, then pairs of a change that helped (covers
        more than the result's own) with one of every other dimension. ``seconds``: no
        contract is started after that many seconds (the result's own is always evaluated);
        a search stopped so records it in :attr:`cut_short` (its evaluations and the limit)."""
        import time

        deadline = None if seconds is None else time.perf_counter() + seconds

        def out_of_time() -> bool:
            if deadline is None or time.perf_counter() < deadline:
                return False
            self.cut_short = (len(self.outcomes), float(seconds))
            return True

        base = self.evaluate({})
        singles = []
        budget = MAX_SINGLE
        for dim in self.dims:
            for v in self.values(dim):
                if budget <= 0 or out_of_time():
                    break
                if isinstance(v, float) and dim == "accuracy" and any(
                        o.covers_all for o in singles if o.changes.get("accuracy") in
                        _ULPS_LADDER):
                    break  # the ulps ladder stops at its first covering step
                budget -= 1
                singles.append(self.evaluate({dim: v}))
        self.singles = singles
        helped = sorted((o for o in singles if o.refused is None and o.covered > base.covered),
                        key=lambda o: (-o.covered, o.rank()))[:3]
        partners = [o for o in singles if o.refused is None]
        pairs = 0
        for h in helped:
            (hd, hv), = h.changes.items()
            for p in partners:
                (pd, pv), = p.changes.items()
                if pd == hd or pairs >= MAX_PAIRS:
                    continue
                if _key({hd: hv, pd: pv}) in self.outcomes:
                    continue
                if out_of_time():
                    return
                pairs += 1
                self.evaluate({hd: hv, pd: pv})

    def covering(self) -> list:
        """Every evaluated outcome that covers every element, tightest first; a change that
        changes nothing (the same coverage and tolerances as a contract of fewer changes) is
        left out."""
        base = self.evaluate({})
        if base.covers_all:  # the outputs' evidence only ranks what the default leaves out
            for o in self.outcomes.values():
                o.evidence = None
        cover = sorted((o for o in self.outcomes.values() if o.covers_all), key=Outcome.rank)
        kept = []
        for o in cover:
            items = set(_key(o.changes))
            if any(set(_key(k.changes)) < items and _same_stats(k, o) for k in cover):
                continue
            kept.append(o)
        return kept

    def ulps_from_rounded(self) -> np.ndarray:
        """Per explained element, how many ulps of the output format the actual is from the
        exact value rounded once (``result.rounded``); 0 where equal (NaN where both NaN)."""
        ref = np.asarray(self.result.rounded._wide(), dtype=np.float64)
        if ref.dtype.kind == "c" or len(self.parts) != 1:
            return np.zeros(0)
        ref = np.broadcast_to(ref, self.shape).reshape(-1)
        act = np.asarray(self.parts[0], dtype=np.float64).reshape(-1)
        if self.index is not None:
            ref, act = ref[self.index], act[self.index]
        with np.errstate(all="ignore"):
            d = np.abs(act - ref) / ulp(ref, self.format)
        same = (act == ref) | (np.isnan(act) & np.isnan(ref))
        return np.where(same, 0.0, d)


def _same(v, own) -> bool:
    if own is None:
        return False
    if isinstance(v, bool) or isinstance(own, bool):
        return v is own
    return v == own


def _array_like(v) -> bool:
    """An array of some library with a shape of its own (a list is left whole)."""
    return hasattr(v, "shape") and hasattr(v, "dtype") and len(getattr(v, "shape", ())) > 0


def _same_stats(a: Outcome, b: Outcome) -> bool:
    return (a.covered, a.median_ulps, a.mean_ulps, a.widened, a.evidence) == \
        (b.covered, b.median_ulps, b.mean_ulps, b.widened, b.evidence)


def _rows_equal(sub, result, rows) -> bool:
    """Whether ``sub`` (recomputed on ``rows``) is those rows of ``result``: equal rounded
    values and tolerances."""
    full = np.asarray(result.rounded._wide())[rows]
    mine = np.asarray(sub.rounded._wide())
    if full.shape != mine.shape or not np.array_equal(full, mine, equal_nan=True):
        return False
    t_full = np.asarray(result.tolerance_ulps()).reshape(result.rounded.shape)[rows]
    t_mine = np.asarray(sub.tolerance_ulps()).reshape(mine.shape)
    return bool(np.array_equal(t_full, t_mine, equal_nan=True))
