"""The installed numpy's own answer: a promotion policy that asks numpy (and ml_dtypes) instead
of reading measured tables.

``numpy_installed`` calls the ufunc of the op on one-element arrays of the operands' dtypes
(0-d where the operand is 0-d), Python scalars as they are and numpy scalars as numpy scalars,
and returns the dtype numpy returns, or raises :class:`PromotionError` carrying numpy's own
error. ``exactref.equivalents.numpy`` and the numpy audit target take result dtypes from it: a
promotion change in a new numpy or ml_dtypes release then changes their references with it,
and cannot become a wall of false dtype failures. The ``numpy`` policy (the measured tables,
:mod:`exactref.promotion._numpy`) stays what ``policy="numpy"`` means; the tests compare the two
on every pair (``tests/promotion/test_promotion_numpy.py``), which is where a new release's
change shows up.

>>> import exactref as er
>>> er.result_type("int8[3]", 0.5, policy="numpy_installed")
exactref.float64
>>> er.result_type("uint8[3]", 300, policy="numpy_installed")
Traceback (most recent call last):
...
exactref.promotion._errors.PromotionOverflowError: numpy_installed: np.add raises for uint8 with a Python int. numpy raises OverflowError: Python integer 300 out of bounds for uint8. Fix: use an array of a wider dtype, or pass np.int64(300).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from ._engine import Policy, Resolution, Trace, register
from ._operands import Operand
from ._ops import COMPARISONS, OPS

__all__ = ["InstalledNumpyPolicy"]

#: the callables of ops numpy has no ufunc for, as exactref defines them
#: The ops numpy spells as a composition of its functions, with how the trace names them.
_COMPOSED = {"rsqrt": (lambda x: 1 / np.sqrt(x), "1 / np.sqrt"),
             "clamp": (lambda x, lo, hi=None: np.clip(x, lo, hi), "np.clip")}
_SCALAR_STAND_INS = {"bool": True, "int": 2, "float": 0.5, "complex": 1j}


def _sample(o: Operand):
    """A value numpy promotes as it promotes the operand: an array of its dtype (its values
    do not matter to numpy's promotion), the Python scalar itself (its value does: an int
    must fit), a numpy scalar."""
    if o.tier == "python":
        return o.value if o.value is not None else _SCALAR_STAND_INS[o.pykind]
    dt = o.format.np_dtype
    if o.tier == "typed":
        return dt.type(o.value if o.value is not None else 1)
    # ones, but int1 holds only -1 and 0; the value never matters to the dtype
    fill = np.zeros if o.format.name == "int1" else np.ones
    return fill(() if o.ndim == 0 else (1,), dtype=dt)


class InstalledNumpyPolicy(Policy):
    name = "numpy_installed"
    title = "the installed numpy and ml_dtypes, asked: the ufunc's result dtype"
    source = "the installed numpy's ufuncs, called on one-element arrays"
    formats = tuple(f for f in FORMATS.values() if f.encoding == "native")
    cast_spelling = "{x}.astype({t})"
    symmetric = False
    sum_integers = ("int64", "uint64")  # np.sum: unsigned integers into uint64
    mean_integers = "float64"
    missing = {"addcmul": "write it with ufuncs (or use policy='torch')",
               "addcdiv": "write it with ufuncs (or use policy='torch')"}

    def __init__(self):
        import ml_dtypes

        self.checked = f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__} (installed)"

    def cast_name(self, fmt):
        from ._numpy import _BUILTIN

        return f"np.{fmt.name}" if fmt.name in _BUILTIN else f"ml_dtypes.{fmt.name}"

    def library_name(self) -> str:
        return "numpy"

    def _call(self, op, operands):
        from ._numpy import UFUNC

        self.refuse_missing(op)
        args = [_sample(o) for o in operands]
        if op is None:  # plain promotion: what np.add (the pair table's ufunc) returns
            if len(args) == 1:
                return "np.asarray", np.asarray(args[0]).dtype
            fn, name = (np.add, "np.add") if len(args) == 2 else (np.result_type,
                                                                 "np.result_type")
        else:
            fn, name = _COMPOSED.get(op) or (getattr(np, UFUNC[op]), f"np.{UFUNC[op]}")
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*args)
        return name, out if isinstance(out, np.dtype) else np.asarray(out).dtype

    def _resolve(self, operands, op, trace: Trace) -> Resolution:
        for o in operands:
            if o.format is not None:
                self.known(o.format, op)
        try:
            name, dt = self._call(op, operands)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._numpy_error(exc, op, operands) from None
        result = resolve_dtype(dt)
        trace.step(f"the installed numpy: {name} returns {result.name}")
        compute = result
        if op is not None and OPS.get(op) in COMPARISONS:
            try:  # the loop a comparison reads: the operands' common dtype
                _, common = self._call("maximum", operands)
                compute = resolve_dtype(common)
            except (TypeError, ValueError, OverflowError):
                pass
        return Resolution(result, compute)

    def _numpy_error(self, exc, op, operands):
        kinds = [o.format.name if o.format is not None else f"a Python {o.pykind}"
                 for o in operands]
        what = {None: "np.add"}.get(op, f"np.{op}")
        try:
            from ._numpy import UFUNC

            what = f"np.{UFUNC[op]}" if op in UFUNC else what
        except KeyError:
            pass
        overflow = isinstance(exc, OverflowError)
        ints = [o for o in operands if o.tier == "python" and o.pykind == "int"]
        remedy = (f"use an array of a wider dtype, or pass np.int64({ints[0].label})"
                  if overflow and ints else "cast the operands to dtypes numpy has a loop for")
        return self.error(f"{what} raises for {' with '.join(kinds)}", op=op,
                          dtypes=tuple(o.format for o in operands if o.format is not None),
                          reason="value" if overflow else "operation", suggest=False,
                          overflow=overflow, remedy=remedy,
                          library_error=(type(exc).__name__, " ".join(str(exc).split())))

    def _can_cast(self, a: Format, b: Format, casting) -> bool:
        return bool(np.can_cast(a.np_dtype, b.np_dtype, casting or "safe"))

    def inplace(self, op, target, others, trace) -> Resolution:
        """np.<ufunc>(x, y, out=x), called."""
        from ._numpy import UFUNC

        self.known(target.format, op)
        res = self.resolve([target, *others], op, trace)
        x = _sample(target)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                getattr(np, UFUNC[op])(x, *[_sample(o) for o in others], out=x)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self.error(f"the {op} result {res.result.name} cannot be stored into "
                             f"{target.format.name}", op=op, reason="inplace", suggest=False,
                             dtypes=(res.result, target.format),
                             library_error=(type(exc).__name__, " ".join(str(exc).split())),
                             remedy="pass casting='unsafe', or compute out of place") from None
        return res


register("numpy_installed", InstalledNumpyPolicy)
