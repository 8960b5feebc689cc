"""``Explanation``: what a search of contracts found, as sentences, a table and a dict."""

from __future__ import annotations

import math

import numpy as np

from .._result import ulps_text
from ._search import Outcome, Search
from ._words import bound_text, condition, contract_text, preset_label

__all__ = ["Explanation"]

#: exit codes of ``exactref explain``: the default covers, only other contracts do, none does
DEFAULT, OTHER, NONE = "default", "other", "none"


def _ulps(v: float) -> str:
    return ulps_text(v) + " ulp" + ("" if v == 1 else "s")


def _percent(k: int, n: int) -> str:
    p = 100.0 * k / n if n else 0.0
    return f"{p:.3g}%"


def _json_number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _fields(contract) -> dict:
    if hasattr(contract, "fields"):
        return dict(contract.fields())
    return dict(contract)


class Explanation:
    """Which contracts cover an output, tightest first, and what each uncovered element breaks.

    ``covering``: ``[(contract, median tolerance ulps), ...]`` of every contract tried that
    covers every element, tightest first (the smallest median tolerance, then the smallest
    mean, then the fewest changed dimensions); ``best``: the first of them, or None;
    ``findings``: sentences; ``uncovered``: per dimension, the value that covers the most of
    the elements the result's own contract leaves uncovered (``{"value": v, "covers": k,
    "of": n}``); ``status``: ``"default"`` (the result's own contract covers), ``"other"``
    (only other contracts do) or ``"none"``; ``evaluations``: how many contracts were
    evaluated; ``cut_short``: None, or ``(evaluations, seconds)`` where the search stopped at
    its time limit (``explain(..., seconds=)``); ``refused``: per dimension, the values the op
    refused, with why.
    """

    def __init__(self, search: Search):
        self.op = search.op
        self.format = search.format.name
        self.elements = int(search.actual().size)
        self.sampled_from = search.sampled_from
        self.contract = search.base_contract()
        base = search.evaluate({})
        self.default_covered = base.covered
        self._shape, self._index, self._base_mask = search.shape, search.index, base.mask
        self._singles = [o for o in search.outcomes.values()
                         if o.refused is None and len(o.changes) == 1]
        cover = search.covering()
        self.covering = [(search.contract_of(o.changes), o.median_ulps) for o in cover]
        self._changes = [o.changes for o in cover]
        self.best = self.covering[0][0] if self.covering else None
        self.status = DEFAULT if base.covers_all else (OTHER if cover else NONE)
        self.evaluations = len(search.outcomes)
        self.cut_short = search.cut_short
        self.refused = {}
        for o in search.outcomes.values():
            if o.refused is not None and len(o.changes) == 1:
                (d, v), = o.changes.items()
                self.refused.setdefault(d, []).append((v, o.refused))
        self.uncovered = self._per_dimension(search, base)
        self._rows = sorted(search.outcomes.values(),
                            key=lambda o: (o.refused is not None, -o.covered, o.rank()))
        self.findings = self._findings(search, base, cover)

    # ------------------------------------------------------------------ analysis
    @staticmethod
    def _per_dimension(search: Search, base: Outcome) -> dict:
        out = {}
        if base.mask is None or base.covers_all:
            return out
        bad = ~base.mask
        n = int(bad.sum())
        for o in search.outcomes.values():
            if o.refused is not None or len(o.changes) != 1 or o.mask is None:
                continue
            (d, v), = o.changes.items()
            k = int((o.mask & bad).sum())
            if k and (d not in out or k > out[d]["covers"]):
                out[d] = {"value": v, "covers": k, "of": n}
        return out

    def _findings(self, search: Search, base: Outcome, cover: list) -> list:
        op, n = self.op, self.elements
        long_op = "order" in search.dims
        fmt = self.format
        said = []
        if base.covers_all:
            own = contract_text(search.base)
            said.append(("covered by the default contract" if not own else
                         f"covered by the contract as called ({own})") +
                        f" (tolerance median {_ulps(base.median_ulps)})")
            tighter = [o for o in cover if o.changes and
                       (o.median_ulps, o.mean_ulps) < (base.median_ulps, base.mean_ulps)]
            if tighter:
                t = tighter[0]
                why = " and ".join(condition(d, v, op, long_op, fmt)
                                   for d, v in sorted(t.changes.items()))
                by = (f"median {_ulps(t.median_ulps)} against {_ulps(base.median_ulps)}"
                      if t.median_ulps < base.median_ulps else
                      f"median {_ulps(t.median_ulps)}, mean {_ulps(t.mean_ulps)} against "
                      f"{_ulps(base.mean_ulps)}")
                said.append(f"a tighter contract also covers: {contract_text(t.changes)} "
                            f"({by}): {why}")
        elif cover:
            best = cover[0]
            needed = min(cover, key=lambda o: (len(o.changes), o.rank()))
            clauses = " and ".join(condition(d, v, op, long_op, fmt)
                                   for d, v in sorted(needed.changes.items()))
            said.append(f"covered only if {clauses}: {contract_text(needed.changes)}, "
                        f"tolerance median {_ulps(needed.median_ulps)}; the default contract "
                        f"covers {base.covered} of {n} elements")
            if best is not needed:
                said.append(f"tightest covering contract: {contract_text(best.changes)} "
                            f"(median {_ulps(best.median_ulps)})")
            for o in [o for o in cover if o is not best and o is not needed][:3]:
                said.append(f"also covered with {contract_text(o.changes)} (median "
                            f"{_ulps(o.median_ulps)})")
        else:
            said.append(f"no contract tried covers every element: the default covers "
                        f"{base.covered} of {n}")
            closest = sorted((o for o in search.outcomes.values()
                              if o.refused is None and o.changes),
                             key=lambda o: (-o.covered, o.rank()))
            if closest and closest[0].covered > base.covered:
                c = closest[0]
                said.append(f"the closest, {contract_text(c.changes)}, covers {c.covered} of "
                            f"{n}")
        best_dims = set(cover[0].changes) if cover else set()
        for d, u in self.uncovered.items():
            if d in best_dims or u["covers"] == u["of"]:
                continue
            said.append(f"a change of {d} alone ({d}={u['value']!r}: "
                        f"{condition(d, u['value'], op, long_op, fmt)}) covers {u['covers']} "
                        f"of the {u['of']} uncovered elements")
        said.extend(self._held(search))
        said.extend(self._rounding(search, cover))
        if search.cut_short:
            k, secs = search.cut_short
            said.append(f"the search stopped at its time limit ({secs:g} s) after {k} "
                        f"contracts: call er.explain(result, actual) for the whole search")
        return said

    def _held(self, search: Search) -> list:
        """The narrowest compute format whose values every output is, where narrower than the
        output format and than the result's own compute format."""
        own = search.base.get("compute")
        held = [o for o in search.outcomes.values() if o.evidence is not None and
                len(o.changes) == 1 and o.changes.get("compute") != own]
        if not held:
            return []
        o = min(held, key=lambda o: o.evidence)
        f = o.changes["compute"]
        return [f"every output is a {f} value ({o.evidence} significant bits of {self.format}'s "
                f"{search.format.precision}), as a result last rounded in {f} is"]

    def _rounding(self, search: Search, cover: list) -> list:
        d = search.ulps_from_rounded()
        if not d.size:
            return []
        finite = d[np.isfinite(d)]
        off = int(np.count_nonzero(finite))
        if not off:
            return ["every element is the exact value rounded once (correctly rounded)"]
        top = float(finite.max())
        least = float(np.min(finite[finite > 0]))
        text = (f"{'' if least == top else 'up to '}{_ulps(top)} beyond correct rounding on "
                f"{_percent(off, d.size)} of elements ({off} of {d.size})")
        acc = cover[0].changes.get("accuracy") if cover else None
        if isinstance(acc, str) and acc != "correct":
            bound = bound_text(acc, self.op, self.format)
            text += f", within {preset_label(acc)}" + (f" ({bound})" if bound else "")
        elif acc is not None and acc != "correct":
            text += f", within {_ulps(float(acc))} of the exact value"
        return [text]

    # ------------------------------------------------------------------ output
    def __str__(self) -> str:
        head = f"explain {self.op} {self.format}: {self.elements} elements"
        if self.sampled_from:
            head += f" (a sample of {self.sampled_from})"
        head += f", {self.evaluations} contracts evaluated"
        lines = [head]
        lines += [f"  - {s}" for s in self.findings]
        if self.covering:
            lines.append("  covering contracts, tightest first:")
            names = [contract_text(c) or "(default)" for c in self._changes]
            width = max(len(n) for n in names)
            for name, (_, med) in zip(names, self.covering, strict=True):
                lines.append(f"    {name:{width}}  median {_ulps(med)}")
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: the first finding (what covers, or that nothing tried does)."""
        return self.findings[0] if self.findings else ""

    def element(self, index) -> list:
        """The single changes (``{dimension: value}``) that alone cover the element at
        ``index`` (a tuple of the output's shape, or a flat index), where the result's own
        contract does not; ``[]`` where it does, or where none does. On a sampled
        explanation, only the sampled elements are known (KeyError for the others)."""
        flat = int(np.ravel_multi_index(index, self._shape)) if isinstance(index, tuple) \
            else int(index)
        if self._index is not None:
            pos = np.searchsorted(self._index, flat)
            if pos >= self._index.size or self._index[pos] != flat:
                raise KeyError(f"element {index} is not in the explained sample")
            flat = int(pos)
        if self._base_mask is None or self._base_mask[flat]:
            return []
        return [dict(o.changes) for o in self._singles if o.mask is not None and o.mask[flat]]

    def __repr__(self) -> str:
        best = contract_text(self._changes[0]) if self.covering else None
        return f"Explanation({self.op}: {self.status}, best={best!r})"

    def table(self) -> str:
        """Every contract evaluated: the changes from the result's own, the elements covered,
        the median and mean tolerance in ulps (or why the op refused it)."""
        rows = [("contract", "covered", "median ulps", "mean ulps")]
        for o in self._rows:
            name = contract_text(o.changes) or "(default)"
            if o.refused is not None:
                rows.append((name, "refused", o.refused[:60], ""))
            else:
                rows.append((name, f"{o.covered}/{o.total}", ulps_text(o.median_ulps),
                             ulps_text(o.mean_ulps)))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in rows)

    def to_dict(self) -> dict:
        """The explanation as JSON-ready data (infinities as the strings "inf")."""
        return {
            "op": self.op, "format": self.format, "elements": self.elements,
            "sampled_from": self.sampled_from, "status": self.status,
            "contract": _fields(self.contract), "default_covered": self.default_covered,
            "covering": [{"changes": c, "contract": _fields(k), "median_ulps": _json_number(m)}
                         for c, (k, m) in zip(self._changes, self.covering, strict=True)],
            "best": self._changes[0] if self.covering else None,
            "findings": list(self.findings),
            "uncovered": self.uncovered,
            "evaluations": self.evaluations,
            "cut_short_after_seconds": self.cut_short[1] if self.cut_short else None,
            "refused": {d: [v for v, _ in vals] for d, vals in self.refused.items()},
            "tried": [{"changes": o.changes, "covered": o.covered, "total": o.total,
                       "median_ulps": _json_number(o.median_ulps), "refused": o.refused}
                      for o in self._rows],
        }
