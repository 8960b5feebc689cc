"""The one-line explanation of a failing group (``er.explain`` within a time limit)."""

from __future__ import annotations

import warnings

__all__ = ["EXPLAIN_SECONDS", "explained_line"]

#: the seconds ``er.explain`` may search a failing group's contracts for (it starts none after
#: them, and its line then says so): a row op recomputed under 96 contracts through MPFR took
#: minutes (a 2**-10-off cross_entropy kernel's 9 groups, 261 s of a 265 s audit)
EXPLAIN_SECONDS = 5.0


def explained_line(ref, actual) -> str:
    """What would cover a failing group's outputs, in one line (``er.explain``: "covered only
    if ..."; within :data:`EXPLAIN_SECONDS`, a search cut short saying so); "" where explain is
    not available or says nothing."""
    try:
        from ..explain import explain
    except ImportError:  # the explain package not built (a hook: the report goes without)
        return ""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = explain(ref, actual, seconds=EXPLAIN_SECONDS)
    except (ValueError, TypeError):  # a reference without its call (an equivalent's
        return ""  # composition): nothing to search
    except Exception as exc:  # noqa: BLE001 - explain's failure must not fail the audit
        return f"(explain could not search this group: {type(exc).__name__}: {exc})"[:300]
    line = getattr(found, "line", None)
    text = line() if callable(line) else (found.summary() if hasattr(found, "summary")
                                          else str(found))
    if (cut := getattr(found, "cut_short", None)) and text:
        text = f"{text} (explain stopped after {cut[1]:g} s, {cut[0]} contracts)"
    return " ".join(str(text).split())[:400]
