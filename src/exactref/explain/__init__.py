"""``er.explain(result, actual)``: which contracts cover an output, tightest first, and which
dimension each uncovered element breaks.

A kernel's output that the default check rejects may still be a correct implementation of
something: a sum accumulated in bfloat16, a divide done as a reciprocal then a multiply, a tanh
within SLEEF's 1 ulp. ``explain`` recomputes the reference under candidate contracts
(:class:`exactref.Contract`), one dimension at a time from the result's own and then in pairs
of the changes that helped, and reports the contracts that cover every element, tightest
first (the smallest median tolerance in ulps), in words ("covered only if the sum accumulates
in bfloat16"). The dimensions tried are those the op has (the keywords of its function; see
:data:`DIMENSIONS`); a value the op refuses is skipped. See ``docs/explain.md``.

>>> import numpy as np, exactref as er
>>> x = np.array([1.0, 3.0, 7.0], np.float32)
>>> from exactref.explain import explain
>>> e = explain(er.sqrt(x), np.sqrt(x))
>>> e.status, e.findings[0]
('default', 'covered by the default contract (tolerance median 0 ulps)')
>>> import exactref.explain
>>> exactref.explain(er.sqrt(x), np.sqrt(x)).status   # the package is callable
'default'
"""

from __future__ import annotations

import inspect
import sys
import types

from ._report import Explanation
from ._search import DIMENSIONS, MAX_PAIRS, MAX_SINGLE, SAMPLE, Search, op_dimensions

__all__ = ["explain", "Explanation", "DIMENSIONS", "MAX_SINGLE", "MAX_PAIRS", "SAMPLE",
           "op_dimensions"]


def explain(result, actual, *, seconds: float | None = None) -> Explanation:
    """Explain ``actual`` (torch/numpy/jax/er arrays, lists) against ``result`` (what an
    ``er.<op>`` call returned): the contracts that cover it, tightest first, and sentences
    saying what the kernel does. At most :data:`MAX_SINGLE` + :data:`MAX_PAIRS` contracts are
    evaluated; an elementwise output of more than :data:`SAMPLE` elements is explained on a
    sample (every uncovered element up to half of it).

    ``seconds``: start no contract after that many seconds (None: no limit); an explanation
    cut short says so (``cut_short``, and its last finding). ``exactref audit`` explains each
    failing group within :data:`exactref.audit.EXPLAIN_SECONDS`.

    Raises ValueError when ``result`` does not carry its call (``result.call``), ``actual``
    has another shape, or ``seconds`` is not a number > 0.
    """
    if seconds is not None and not (isinstance(seconds, (int, float)) and
                                    not isinstance(seconds, bool) and seconds > 0):
        raise ValueError(f"explain(seconds={seconds!r}): expected a number of seconds > 0, "
                         f"or None for no limit")
    search = Search(result, actual)
    search.run(seconds)
    return Explanation(search)


class _CallableModule(types.ModuleType):
    """This package, callable as :func:`explain`.

    Note: Python sets ``exactref.explain`` to this subpackage whenever it is imported (the
    audit imports it), which would hide a function of that name, so the package itself answers
    ``er.explain(result, actual)``, as ``er.quantize`` does.
    """

    def __call__(self, result, actual, *, seconds=None) -> Explanation:
        return explain(result, actual, seconds=seconds)


sys.modules[__name__].__class__ = _CallableModule
__signature__ = inspect.signature(explain)
