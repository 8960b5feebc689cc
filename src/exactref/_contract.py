"""The contract: every implementation freedom of a kernel, in one object.

A :class:`Contract` names what a correct implementation may do: its compute format and how the
inputs reach it, its accumulation order, its variance algorithm, whether products are fused,
which subnormals it flushes, how accurate its functions are, what it does with special values,
the formats its parameters are stored in, what its convolution does with padded taps, its
overflow rule and its block scale rule. ``None`` in a field means "the op's own default" (the
contract of a well-engineered implementation, documented per op).

Each field is the op keyword of the same name: ``er.sum(x, contract=c)`` passes ``c.order`` as
``order=``. A contract applies to an op the fields that op has (a keyword of its function, or a
field this module carries out for every op: ``convert``, ``params`` and ``flush``); the others say
nothing about it (``add`` has no accumulation order) and :attr:`Result.contract` shows what
applied. A keyword the op does not take, passed directly, is refused by name
(:class:`ContractError`, with the list of what it takes). Keywords win over ``contract=``, which
wins over the ambient contract (:func:`use_contract`, and the pytest plugin's and CLI's
``[tool.exactref]``).

>>> import exactref as er
>>> c = er.Contract(order="pairwise", compute="float32")
>>> c
Contract(compute='float32', order='pairwise')
>>> c.with_sets(["flush=both", "params.eps=float32"])
Contract(compute='float32', order='pairwise', flush='both', params={'eps': 'float32'})
>>> r = er.sum(er.asarray([1.0, 2.0**-30, -1.0], "float32"), contract=c)
>>> r.contract
Contract(compute='float32', order='pairwise')
>>> er.add(1.0, 2.0, contract=c).contract  # add has a compute format, no order
Contract(compute='float32')
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import os
import types
from dataclasses import dataclass, fields

import numpy as np

from ._array import Array, asarray
from ._formats import FORMATS
from ._formats import dtype as resolve_dtype
from ._result import Result, any_of

__all__ = ["Contract", "ContractError", "ContractedOp", "DIMENSIONS", "contracted",
           "current_contract", "use_contract"]


class ContractError(ValueError, TypeError):
    """An implementation freedom an op cannot honour, or a contract field with a bad value.

    A ``ValueError`` (a bad argument) and a ``TypeError`` (what Python raises for a keyword a
    function does not take), so either ``except`` catches it."""


#: Every dimension of a contract: what it declares, and why an op may have no such freedom.
DIMENSIONS = {
    "compute": ("the format the kernel computes in (its accumulator, its opmath type)",
                "it computes nothing in another format"),
    "convert": ("how the inputs reach the compute format: 'operations' (each operation "
                "reads its operands exactly) or 'inputs' (the inputs are rounded into the "
                "compute format first, as a kernel that casts its inputs does)",
                "it has no compute format"),
    "order": ("the accumulation order of a long sum: 'any', 'sequential', 'pairwise', "
              "'blocked(b)', 'split_k(s)', 'tree(f)' or 'library'",
              "it has no accumulation"),
    "algorithm": ("the variance algorithm: 'two-pass', 'welford', 'chan', 'one-pass', "
                  "'stable' or 'any'", "it computes no variance"),
    "fused": ("whether products enter the sums fused (True), rounded first (False) or either "
              "('either')", "it has no products entering a sum"),
    "flush": ("which subnormals the kernel flushes to zero: 'inputs', 'outputs' or 'both'",
              "it has no subnormals to flush"),
    "accuracy": ("the accuracy of the kernel's function evaluations: a preset name "
                 "(er.ACCURACY_PRESETS) or an error in ulps", "it evaluates no function"),
    "specials": ("what the kernel gives at special values: 'limits' (the exact value's "
                 "limit, as IEEE 754's functions) or 'formula' (the op's textbook formula "
                 "evaluated in IEEE arithmetic)", "its formula and its limits agree"),
    "params": ("the formats scalar parameters are stored in, by name ({'eps': 'float32'})",
               "it has none of those parameters"),
    "padding_taps": ("what a convolution does with padded taps: 'zeros' (multiplies the zero "
                     "padding) or 'skip'", "it has no padding"),
    "overflow": ("the overflow rule of the final rounding: 'ieee', 'saturate', ...",
                 "it cannot overflow"),
    "scale_rule": ("the block scale rule of a quantizer: 'floor' (OCP MX) or 'rceil'",
                   "it has no block scale"),
    "divide": ("how the kernel divides: 'correct' (the quotient rounded once), 'reciprocal' "
               "(a reciprocal, then a multiply) or 'any'", "it does not divide"),
}
_FLUSH = (None, "inputs", "outputs", "both")
_CONVERT = (None, "operations", "inputs")
#: fields the contract layer carries out for every op that has operands
_GENERIC = ("convert", "params", "flush")
_EITHER = ("either", "any", "none")
#: audit plans whose ops return no Result (a quantizer's Quantized: codes and scales), or whose
#: operands are codes, scales and zero points (linear quantization): the contract layer's own
#: fields (convert, params, flush) do not apply to them
NO_GENERIC_PLANS = ("blocks", "linear")


@dataclass(frozen=True, repr=False)
class Contract:
    """Every implementation freedom of a kernel (see the module's documentation).

    ``ops``: per-op contracts (``{"sum": Contract(order="sequential")}``) whose fields win for
    that op. Build one with keywords, :meth:`from_mapping`, :meth:`from_toml`,
    :meth:`from_pyproject` (``[tool.exactref]``) or :meth:`with_sets` (the CLI's ``--set``).
    """

    compute: object = None
    convert: str | None = None
    order: str | None = None
    algorithm: str | None = None
    fused: object = None
    flush: str | None = None
    accuracy: object = None
    specials: str | None = None
    params: dict | None = None
    padding_taps: str | None = None
    overflow: str | None = None
    scale_rule: str | None = None
    divide: str | None = None
    ops: dict | None = None

    def __post_init__(self):
        if self.compute is not None:
            try:
                fmt = resolve_dtype(self.compute)
            except (TypeError, ValueError, KeyError) as exc:
                raise ContractError(f"Contract: compute={self.compute!r} is not a format "
                                    f"({exc}); name one: 'float32', 'bfloat16', ...") from None
            object.__setattr__(self, "compute", fmt.name)
        if self.flush not in _FLUSH:
            raise ContractError(f"Contract: flush={self.flush!r}; expected 'inputs', "
                                f"'outputs' or 'both' (the subnormals a kernel flushes)")
        if self.convert not in _CONVERT:
            raise ContractError(f"Contract: convert={self.convert!r}; expected 'operations' "
                                f"(each operation reads its operands exactly) or 'inputs' "
                                f"(the inputs rounded into the compute format first)")
        if isinstance(self.fused, str):
            low = self.fused.lower()
            if low not in _EITHER + ("true", "false"):
                raise ContractError(f"Contract: fused={self.fused!r}; expected True, False or "
                                    f"'either'")
            object.__setattr__(self, "fused", {"true": True, "false": False}.get(low, "either"))
        elif self.fused is not None and not isinstance(self.fused, bool):
            raise ContractError(f"Contract: fused={self.fused!r}; expected True, False or "
                                f"'either'")
        if isinstance(self.accuracy, str):
            try:
                object.__setattr__(self, "accuracy", float(self.accuracy))
            except ValueError:
                pass  # a preset name: the ops validate it
        if isinstance(self.accuracy, bool) or (
                isinstance(self.accuracy, (int, float)) and not (
                    math.isfinite(self.accuracy) and self.accuracy >= 0)):
            raise ContractError(f"Contract: accuracy={self.accuracy!r}; expected a preset name "
                                f"or a finite error in ulps >= 0")
        for name in ("order", "algorithm", "specials", "padding_taps", "overflow",
                     "scale_rule", "divide"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise ContractError(f"Contract: {name}={v!r}; expected a string "
                                    f"({DIMENSIONS[name][0]})")
        if self.params is not None:
            if not isinstance(self.params, dict):
                raise ContractError(f"Contract: params={self.params!r}; expected a mapping of "
                                    f"parameter names to formats ({{'eps': 'float32'}})")
            norm = {}
            for k, v in self.params.items():
                try:
                    norm[str(k)] = resolve_dtype(v).name
                except (TypeError, ValueError, KeyError):
                    raise ContractError(f"Contract: params[{k!r}]={v!r} is not a format; "
                                        f"name one: 'float32', 'bfloat16', ...") from None
            object.__setattr__(self, "params", norm or None)
        if self.ops is not None:
            if not isinstance(self.ops, dict):
                raise ContractError(f"Contract: ops={self.ops!r}; expected a mapping of op "
                                    f"names to Contracts")
            object.__setattr__(self, "ops", {str(k): v if isinstance(v, Contract)
                                             else Contract.from_mapping(v)
                                             for k, v in self.ops.items()} or None)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_mapping(cls, mapping) -> Contract:
        """A contract from a mapping of field names (a TOML table; ``ops`` may hold per-op
        tables); an unknown key is refused with the list of fields."""
        if isinstance(mapping, Contract):
            return mapping
        if not isinstance(mapping, dict):
            raise ContractError(f"a contract is a table of fields, not {mapping!r}")
        known = [f.name for f in fields(cls)]
        bad = [k for k in mapping if k not in known]
        if bad:
            raise ContractError(f"unknown contract field {bad[0]!r}; the fields are "
                                f"{', '.join(known)}")
        return cls(**dict(mapping))

    @classmethod
    def from_toml(cls, path) -> Contract:
        """A contract from a TOML file: its fields at the top level (or under
        ``[tool.exactref]`` in a pyproject.toml), per-op tables under ``[ops.<name>]``."""
        data = _read_toml(path)
        if "tool" in data and "exactref" in data.get("tool", {}):
            data = data["tool"]["exactref"]
        return cls.from_mapping(data)

    @classmethod
    def from_pyproject(cls, start=".") -> Contract:
        """The ``[tool.exactref]`` table of the nearest pyproject.toml at or above ``start``
        (an empty contract where there is none)."""
        here = os.path.abspath(start)
        while True:
            path = os.path.join(here, "pyproject.toml")
            if os.path.isfile(path):
                table = _read_toml(path).get("tool", {}).get("exactref")
                return cls() if table is None else cls.from_mapping(table)
            parent = os.path.dirname(here)
            if parent == here:
                return cls()
            here = parent

    def with_sets(self, assignments) -> Contract:
        """This contract with ``key=value`` assignments applied (the CLI's ``--set``):
        ``order=pairwise``, ``fused=false``, ``accuracy=2.5``, ``params.eps=float32``,
        ``ops.sum.order=sequential``."""
        if isinstance(assignments, str):
            assignments = [assignments]
        data = self._mapping()
        if "ops" in data:  # per-op tables as plain tables, so a --set can reach into them
            data["ops"] = {k: v._mapping() for k, v in data["ops"].items()}
        if "params" in data:
            data["params"] = dict(data["params"])
        for text in assignments:
            key, sep, value = str(text).partition("=")
            key, value = key.strip(), value.strip()
            if not sep or not key:
                raise ContractError(f"--set {text!r}: expected key=value (order=pairwise, "
                                    f"params.eps=float32)")
            path = key.split(".")
            target = data
            for part in path[:-1]:
                target = target.setdefault(part, {})
                if not isinstance(target, dict):
                    raise ContractError(f"--set {text!r}: {part!r} is not a table")
            target[path[-1]] = None if value.lower() in ("", "default") else value
        return Contract.from_mapping(data)

    def replace(self, **changes) -> Contract:
        """This contract with ``changes`` (fields; None resets one to the op's default)."""
        data = self._mapping()
        data.update(changes)
        return Contract.from_mapping(data)

    def __or__(self, other) -> Contract:
        """``self`` with ``other``'s set fields winning (per-op tables merged too)."""
        if other is None or other is _EMPTY:
            return self
        if self is _EMPTY and isinstance(other, Contract):
            return other
        if not isinstance(other, Contract):
            return NotImplemented
        data = self._mapping()
        for k, v in other._mapping().items():
            if k == "ops":
                mine = dict(data.get("ops") or {})
                for op, c in v.items():
                    mine[op] = (mine[op] | c) if op in mine else c
                v = mine
            data[k] = v
        return Contract.from_mapping(data)

    def _mapping(self) -> dict:
        return {k: v for k in _FIELD_NAMES if (v := getattr(self, k)) is not None}

    def fields(self) -> dict:
        """The fields set (not None), in declaration order."""
        return self._mapping()

    def for_op(self, name: str) -> Contract:
        """The contract for op ``name``: its per-op table's fields winning."""
        if not self.ops:
            return self
        base = Contract.from_mapping({k: v for k, v in self._mapping().items() if k != "ops"})
        own = self.ops.get(name)
        return base | own if own is not None else base

    def describe(self) -> str:
        """The fields set, as keywords (``order='pairwise', flush='both'``), or "the ops'
        defaults"."""
        items = self._mapping()
        return ", ".join(f"{k}={v!r}" for k, v in items.items()) or "the ops' defaults"

    def __repr__(self) -> str:
        items = self._mapping()
        return "Contract(" + ", ".join(f"{k}={v!r}" for k, v in items.items()) + ")"

    def __bool__(self) -> bool:
        return bool(self._mapping())


_FIELD_NAMES = tuple(f.name for f in fields(Contract))
_EMPTY = Contract()


def _read_toml(path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ContractError(f"cannot read the contract file {path!r}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ContractError(f"{path}: not valid TOML: {exc}") from None


# ----------------------------------------------------------------------------- applying
_AMBIENT: contextvars.ContextVar = contextvars.ContextVar("exactref_contract", default=None)
_INSIDE: contextvars.ContextVar = contextvars.ContextVar("exactref_inside_op", default=False)


def current_contract() -> Contract:
    """The ambient contract (:func:`use_contract`), an empty one outside any."""
    return _AMBIENT.get() or _EMPTY


@contextlib.contextmanager
def use_contract(contract=None, **fields_):
    """Within the block, every op call applies ``contract`` (merged over the ambient one; its
    keywords build one: ``with er.use_contract(order="pairwise"):``).

    >>> import exactref as er
    >>> with er.use_contract(order="sequential"):
    ...     er.sum([1.0, 2.0, 3.0]).contract
    Contract(order='sequential')
    """
    c = contract if isinstance(contract, Contract) else (
        Contract() if contract is None else Contract.from_mapping(contract))
    if fields_:
        c = c | Contract(**fields_)
    token = _AMBIENT.set(current_contract() | c)
    try:
        yield _AMBIENT.get()
    finally:
        _AMBIENT.reset(token)


def _keywords(function) -> tuple[dict, bool]:
    sig = inspect.signature(function)
    params = {k: p for k, p in sig.parameters.items() if p.kind not in (
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)}
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()) \
        and getattr(function, "__signature__", None) is None
    return params, var_kw


class ContractedOp:
    """``er.<op>``: the op's function taking ``contract=`` and the ambient contract, refusing
    a keyword it does not take by name, and recording on its Result what applied. Attributes
    (``spec``, ``backward``) are the function's."""

    def __init__(self, function, spec):
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            object.__setattr__(self, attr, getattr(function, attr, None))
        object.__setattr__(self, "_function", function)
        object.__setattr__(self, "_spec", spec)
        params, var_kw = _keywords(function)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_var_kw", var_kw)
        object.__setattr__(self, "_takes", ", ".join(
            k for k, p in params.items() if p.kind is not inspect.Parameter.POSITIONAL_ONLY
            and k not in spec.operands))

    # the function's attributes, docs and signature (plus contract=)
    def __getattr__(self, name):
        return getattr(self._function, name)

    def __setattr__(self, name, value):
        setattr(self._function, name, value)

    @property
    def __wrapped__(self):
        return self._function

    @property
    def __signature__(self):
        sig = inspect.signature(self._function)
        ps = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        ps.append(inspect.Parameter("contract", inspect.Parameter.KEYWORD_ONLY, default=None))
        ps += [p for p in sig.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
        return sig.replace(parameters=ps)

    def __repr__(self) -> str:
        return f"<exactref op {self._spec.name}>"

    def __reduce__(self):
        return (_op_by_name, (self._spec.name,))

    def __call__(self, *args, contract=None, **kwargs):
        function = self._function
        if _INSIDE.get():  # an op inside an op: the outer call applied the contract
            return function(*args, **kwargs)
        name, params = self._spec.name, self._params
        if not self._var_kw:
            bad = [k for k in kwargs if k not in params]
            if bad:
                raise _refusal(name, bad[0], self._takes)
        if contract is not None and not isinstance(contract, Contract):
            contract = Contract.from_mapping(contract)
        c = (current_contract() | contract).for_op(name)
        call_kwargs = dict(kwargs)
        # the dimensions declared by keyword are part of the contract that applied
        declared = {k: ("either" if k == "fused" and v is None else v)
                    for k, v in kwargs.items()
                    if k in DIMENSIONS and (v is not None or k == "fused")}
        if not c and contract is None:  # nothing to apply: the plain call
            token = _INSIDE.set(True)
            try:
                result = function(*args, **kwargs)
            finally:
                _INSIDE.reset(token)
            _record(result, name, args, call_kwargs, None, _applied(declared))
            return result
        operands = tuple(self._spec.operands)
        applied, generic = {}, {}
        for field_, value in c.fields().items():
            if field_ in params:
                if field_ not in kwargs:  # the call's own keyword wins (and is recorded)
                    kwargs[field_] = None if (field_ == "fused" and value == "either") \
                        else value
                    applied[field_] = value
            elif field_ in _GENERIC and self._spec.plan not in NO_GENERIC_PLANS:
                generic[field_] = value
        args = list(args)
        if "params" in generic:
            used = _store_params(name, generic.pop("params"), params, args, kwargs)
            if used:
                applied["params"] = used
        if generic.get("convert") == "inputs":
            compute = c.compute
            if compute is None:
                raise ContractError(f"{name}: convert='inputs' rounds the inputs into the "
                                    f"compute format, but the contract names none; add "
                                    f"compute=... (e.g. compute='float32')")
            _convert_inputs(operands, args, kwargs, params, compute, name,
                            keep_dtype=self._spec.loop != "none")
            applied["convert"] = "inputs"
        elif "convert" in generic:
            applied["convert"] = generic["convert"]
        flush = generic.get("flush")
        token = _INSIDE.set(True)
        try:
            result = function(*args, **kwargs)
            if flush is not None:
                result = _flushed(function, result, flush, operands, args, kwargs, params)
                applied["flush"] = flush
        finally:
            _INSIDE.reset(token)
        _record(result, name, tuple(args), call_kwargs, contract,
                _applied({**applied, **declared}))
        return result


def _applied(fields_) -> Contract:
    if not fields_:
        return _EMPTY
    try:
        return Contract.from_mapping(fields_)
    except ContractError:  # a keyword value the op itself accepts (a Format, an Accuracy)
        return Contract.from_mapping({k: v if isinstance(v, (str, bool, int, float, dict))
                                      else str(v) for k, v in fields_.items()
                                      if k != "compute"} | (
            {"compute": fields_["compute"]} if "compute" in fields_ else {}))


def _op_by_name(name):
    from .ops import get_op

    return get_op(name).function


def contracted(function, spec):
    """``function`` as ``er.<op>`` (a :class:`ContractedOp`; one already wrapped is kept)."""
    if isinstance(function, ContractedOp):
        return function
    if isinstance(function, types.ModuleType):  # a callable package (er.quantize): it calls
        # its ``_contracted`` op, made from its function of the op's name
        if not isinstance(getattr(function, "_contracted", None), ContractedOp):
            function._contracted = ContractedOp(getattr(function, spec.name), spec)
        return function
    return ContractedOp(function, spec)


def _refusal(name, key, takes) -> ContractError:
    if key in DIMENSIONS:
        return ContractError(
            f"{name}() takes no {key}=: {DIMENSIONS[key][1]}. It takes {takes} and "
            f"contract=. (A Contract "
            f"with {key} applies it to the ops that have it and says nothing about {name}.)")
    return ContractError(f"{name}() got an unexpected keyword argument {key!r}; it takes "
                         f"{takes} and contract=")


def _store_params(name, formats, params, args, kwargs) -> dict:
    """Round the scalar parameters named in ``formats`` into their storage format (in place in
    ``kwargs``/``args``); the ones the op has."""
    used = {}
    names = list(params)
    for pname, fmt in formats.items():
        if pname not in params:
            continue
        pos = names.index(pname)
        if pname in kwargs:
            value = kwargs[pname]
        elif pos < len(args):
            value = args[pos]
        else:
            value = params[pname].default
        if value is None or value is inspect.Parameter.empty:
            used[pname] = fmt  # the op's default: derived from the formats, already stored
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            raise ContractError(f"{name}: params={{{pname!r}: {fmt!r}}} stores a scalar "
                                f"parameter, but {pname}={value!r} is not a number")
        stored = float(asarray(float(value), fmt).tolist())
        if pname in kwargs or pos >= len(args):
            kwargs[pname] = stored
        else:
            args[pos] = stored
        used[pname] = fmt
    return used


def _convert_inputs(operands, args, kwargs, params, compute, name, keep_dtype=True) -> None:
    """Round the floating operands wider than ``compute`` into it (nearest even), keeping the
    output format the given operands promote to (``dtype=``)."""
    fmt = FORMATS[compute]
    names = list(params)
    given = {}
    for i, oname in enumerate(operands):
        pos = names.index(oname) if oname in names else i
        if oname in kwargs:
            given[oname] = ("kw", oname, kwargs[oname])
        elif pos < len(args):
            given[oname] = ("pos", pos, args[pos])
    if keep_dtype and "dtype" in params and kwargs.get("dtype") is None:
        firsts = [v for _, _, v in given.values() if v is not None]
        fmts = [asarray(v).dtype for v in firsts if not isinstance(v, (int, float, complex))]
        if fmts:
            widest = max(fmts, key=lambda f: (f.kind == "float" or f.kind == "complex",
                                              f.component.precision if f.component.kind ==
                                              "float" else 0))
            if widest.kind in ("float", "complex"):
                kwargs["dtype"] = widest.name
    for where, key, value in given.values():
        if value is None or isinstance(value, (int, float, complex, bool)):
            continue
        arr = asarray(value)
        comp = arr.dtype.component
        if comp.kind != "float" or comp.precision <= fmt.component.precision:
            continue
        target = fmt if arr.dtype.kind == "float" else _complex_of(fmt, name)
        conv = asarray(arr, target)
        if where == "kw":
            kwargs[key] = conv
        else:
            args[key] = conv


def _complex_of(fmt, name):
    for f in FORMATS.values():
        if f.kind == "complex" and f.component is fmt.component:
            return f
    raise ContractError(f"{name}: convert='inputs' into {fmt.name}: no complex format of "
                        f"{fmt.name} parts to round the complex operands into")


def _flush_array(value, fmt=None):
    arr = value if isinstance(value, Array) else asarray(value)
    comp = arr.dtype.component
    if comp.kind != "float" or not comp.smallest_subnormal < comp.smallest_normal:
        return None
    w = arr._wide()
    tiny = comp.smallest_normal
    parts = [w.real, w.imag] if arr.dtype.kind == "complex" else [w]
    if not any(((p != 0) & (np.abs(p) < tiny)).any() for p in parts):
        return None
    flushed = [np.where((p != 0) & (np.abs(p) < tiny), np.copysign(0.0, p), p) for p in parts]
    data = flushed[0] if len(flushed) == 1 else flushed[0] + 1j * flushed[1]
    return asarray(data, arr.dtype)


def _flushed(function, result, flush, operands, args, kwargs, params):
    """The result of a kernel that flushes subnormal inputs and/or outputs, for an op without
    its own ``flush=``: the union with the result on the flushed inputs, and the outputs'
    covered values flushed too."""
    if not (isinstance(getattr(result, "rounded", None), Array) and hasattr(result, "covers")
            and hasattr(result, "_bounds") or hasattr(result, "results")):
        raise ContractError(
            f"{getattr(function, '__name__', 'this op')}: flush={flush!r} cannot be applied "
            f"to what it returns ({type(result).__name__}, not a Result); declare no flush "
            f"for it")
    results = [result]
    if flush in ("inputs", "both"):
        names = list(params)
        args2, kwargs2, changed = list(args), dict(kwargs), False
        for i, oname in enumerate(operands):
            pos = names.index(oname) if oname in names else i
            if oname in kwargs2:
                v = kwargs2[oname]
            elif pos < len(args2):
                v = args2[pos]
            else:
                continue
            if v is None or isinstance(v, (int, float, complex, bool)):
                continue
            f = _flush_array(v)
            if f is not None:
                changed = True
                if oname in kwargs2:
                    kwargs2[oname] = f
                else:
                    args2[pos] = f
        if changed:
            results.append(function(*args2, **kwargs2))
    if flush in ("outputs", "both"):
        results += [_FlushedOutputs(r) for r in list(results) if _has_subnormals(r)]
    return results[0] if len(results) == 1 else any_of(*results)


def _has_subnormals(result) -> bool:
    comp = getattr(getattr(result, "rounded", None), "dtype", None)
    return comp is not None and comp.component.kind == "float" and \
        comp.component.smallest_subnormal < comp.component.smallest_normal and \
        hasattr(result, "_bounds")


class _FlushedOutputs(Result):
    """The covered outputs of ``base`` with subnormal values flushed to zero (an output flush
    maps each covered value ``v`` to ``ftz(v)``, monotone, so an interval's ends map to the
    ends of its image; the zero's sign is then free)."""

    def __init__(self, base):
        super().__init__(base.rounded, None, op=base.op, models=tuple(base.models) + (
            "subnormal outputs flushed to zero",), details=dict(base.details))
        self._base = base

    def _compute_bounds(self):
        tiny = self.rounded.dtype.component.smallest_normal
        out = []
        for lo, hi, nan, fixed, neg in self._base._bounds():
            flo, fhi = _ftz(lo, tiny), _ftz(hi, tiny)
            touched = (flo != np.asarray(lo)) | (fhi != np.asarray(hi))
            out.append((flo, fhi, nan, np.asarray(fixed) & ~touched, neg))
        return out


def _ftz(v, tiny):
    v = np.asarray(v, dtype=np.float64)
    return np.where((v != 0) & (np.abs(v) < tiny), np.copysign(0.0, v), v)


def _record(result, name, args, kwargs, contract, applied) -> None:
    """Record on ``result`` the call and the contract that applied (Results, AnyOf and
    Gradients take attributes; other returns are left alone)."""
    try:
        result.contract = applied
        result.call = (name, args, kwargs, contract)
    except (AttributeError, TypeError):
        pass


def _install() -> None:
    """Every op of the registry, now and later, is a :class:`ContractedOp`."""
    from . import ops

    ops.install_function_wrapper(contracted)


_install()


def dimensions_table() -> str:
    """A markdown table: per op family, which ops have each dimension of the contract (their
    function takes it; "layer": the contract layer carries it out for those that do not).
    docs/contract.md holds it (a test keeps the two equal)."""
    from . import ops

    fams: dict = {}
    for spec in ops.all_ops():
        fn = spec.function
        fn = getattr(fn, "_contracted", fn)
        params = _keywords(getattr(fn, "__wrapped__", fn))[0]
        fams.setdefault(spec.family, []).append((spec.name, params,
                                                 spec.plan not in NO_GENERIC_PLANS))
    dims = list(DIMENSIONS)
    head = "| family | " + " | ".join(f"`{d}`" for d in dims) + " |"
    rows = [head, "|" + " --- |" * (len(dims) + 1)]
    for fam, members in fams.items():
        cells = []
        for d in dims:
            have = [n for n, ps, _ in members if d in ps]
            if d == "params":
                have = [n for n, ps, _ in members if any(p in ps for p in ("eps",))]
            missing = [n for n, _, _ in members if n not in have]
            if not missing:
                cell = "all"
            elif have and len(missing) <= len(have):
                cell = "all but " + ", ".join(missing)
            else:
                cell = ", ".join(have)
            if d in _GENERIC and cell != "all" and any(g for _, _, g in members):
                cell = (cell + "; " if cell else "") + "layer"
            cells.append(cell or "-")
        rows.append(f"| {fam} ({len(members)}) | " + " | ".join(cells) + " |")
    return "\n".join(rows)
