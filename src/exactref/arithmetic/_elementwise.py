"""The elementwise driver: an op declared once, run the same way for every op.

:func:`elementwise` turns a declaration into ``er.<op>`` and registers its record
(:class:`exactref.ops.OpSpec`). A declaration is the op's exact formula, a function of the
operands' parts that asks the engine's kernels for the exact value (``ctx.sop`` for sums of
products, ``ctx.quotient``, ``ctx.root``, ``ctx.values`` for selections), plus its promotion op,
its modelled implementations (:class:`Model`: the record holds them, ``OpSpec.models``, and the
driver runs the registered record's), its backward and its counterparts. The driver does the
rest, identically for every op:

1. **operands**: arrays of any library, Python scalars (taken exactly), earlier Results;
2. **promotion**: the torch policy's output format for the promotion op (or ``dtype``);
3. **casts**: an operand the output format cannot hold is first rounded once into it, as
   PyTorch casts it (comparisons compare the operands as given);
4. **exact value** from the declaration, rounded once into the output format: the reference;
5. **candidates**: each modelled implementation, computed step by step with its intermediate
   results rounded into the compute format, then stored into the output format; an operand
   that is an earlier Result also enters at the ends of its own candidate range;
6. **Result**: the reference, the candidates (tolerance and ``covers``) and the inputs.
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass, field

import numpy as np

from .._array import Array
from .._exact import ExactArray, ExactPart, Rounding, quotient, root, sum_of_products
from .._operands import (
    Opnd,
    broadcast_shapes,
    cast_operand,
    compute_format,
    convert_scalars,
    engine_parts,
    output_format,
    prepare,
    resolve_mode_rule,
    scalar_parts,
    to_array,
)
from .._result import Result
from .._stochastic import check_format, resolve_stochastic, stochastic_result
from ..ops import Counterparts, OpSpec, get_op, register
from ._accuracy import CORRECT, DEFAULT_ACCURACY, Accuracy, resolve_accuracy
from ._formulas import Part, terms_of
from ._model import Model

__all__ = ["Model", "FUSED", "Ctx", "elementwise", "OpTypeError", "with_backward"]

_NE = Rounding.NEAREST_EVEN
_KIND = {"bool": "bool", "int": "int", "uint": "uint", "float": "float", "complex": "complex"}


class OpTypeError(TypeError):
    """An op does not accept operands of this kind (complex maximum, say)."""


#: The exact value rounded in the compute format first (PyTorch's float32 "opmath" for the half
#: formats), then stored in the output format: two roundings.
FUSED = Model("fused in {c}")


@dataclass
class Ctx:
    """One evaluation of an op: the output, compute format, rounding and the op's parameters,
    and the kernels that give exact values."""

    shape: tuple
    out: object
    promoted: object
    c: object
    mode: Rounding
    rule: str
    params: dict = field(default_factory=dict)
    operands: tuple = ()  # the prepared operands (Opnd), cast to the promoted format
    name: str = ""  # the op's name
    accuracy: Accuracy = CORRECT  # the declared accuracy of the implementation (functions)

    @property
    def complex_out(self) -> bool:
        return self.out.kind == "complex"

    @property
    def nparts(self) -> int:
        return 2 if self.complex_out else 1

    # ------------------------------------------------------------------------- kernels
    def sop(self, parts) -> list:
        """Exact sums of products, one ExactArray per Part."""
        return [sum_of_products(terms_of(p), self.shape) for p in parts]

    def quotient(self, num: Part, den: Part) -> ExactArray:
        return quotient(terms_of(num), terms_of(den), self.shape)

    def root(self, part: Part, *, reciprocal: bool = False) -> ExactArray:
        return root(terms_of(part), self.shape, reciprocal=reciprocal)

    def values(self, data) -> ExactArray:
        """The exact values of float64 (or integer) data of the output's shape."""
        data = np.asarray(data)
        if data.dtype.kind in "iub" or data.dtype == object:
            op = ExactPart.from_integers(data)
        else:
            op = ExactPart.from_float64(data.astype(np.float64, copy=False))
        return sum_of_products([(op,)], self.shape)

    def flat(self, op):
        """An engine ExactPart's values broadcast to the output and flattened: float64, or the
        exact integers (an object array) of an integer operand."""
        n = int(np.prod(self.shape, dtype=np.int64))
        if op.ints is not None and (self.out.is_integer or op.f64 is None and
                                    self.out.kind == "bool"):
            v = op.ints
            data = np.asarray(v, dtype=object) if isinstance(v, np.ndarray) else np.array(
                int(v), dtype=object)
            return np.broadcast_to(data, self.shape).reshape(n).copy()
        if op.f64 is None:  # a long scalar: its nearest float64 (selections are monotone)
            return np.full(n, float(op.exact(0)))
        return np.broadcast_to(op.f64, self.shape).reshape(n).astype(np.float64)

    def pick(self, mask, a, b):
        """Per element, operand ``a`` where ``mask`` else ``b`` (operands of stored float64
        values, as :meth:`store` gives them)."""
        return ExactPart.from_float64(np.where(mask, np.broadcast_to(a.f64, self.shape),
                                             np.broadcast_to(b.f64, self.shape)))

    def index(self, flat_index: int) -> tuple:
        """The output index of a flat position (for messages)."""
        return tuple(int(i) for i in np.unravel_index(flat_index, self.shape))

    # ------------------------------------------------------------------------ rounding
    def round(self, exact, fmt=None):
        """Round ExactArrays (one per part) once into ``fmt`` (default: the output format):
        float64 arrays (int arrays for integer formats) of the output's shape."""
        comp = (fmt or self.out).component
        return [np.asarray(ex.round(comp, self.mode, self.rule)[0]).reshape(self.shape)
                for ex in exact]

    def store(self, exact, fmt=None):
        """Round into ``fmt`` (default: the compute format) and return the rounded values as
        operand parts ``[re, im]``, ready for the next step of a model."""
        values = self.round(exact, fmt or self.c)
        ops = [ExactPart.from_float64(np.asarray(v, dtype=np.float64)) for v in values]
        return ops if len(ops) == 2 else [ops[0], None]


# --------------------------------------------------------------------------- operands
def operand_parts(o: Opnd, complex_out: bool):
    """``[re, im]`` engine Operands of an operand. A real array in a complex op gets an
    imaginary part +0, as PyTorch's promotion makes one; a scalar's zero or absent part adds no
    term."""
    if o.kind == "scalar":
        return scalar_parts(o.value)
    parts = engine_parts(o.array)
    if len(parts) == 1:
        parts.append(ExactPart.from_scalar(0.0) if complex_out else None)
    return parts


def _variants(o: Opnd, promoted, complex_out):
    """The operand's parts as given, and at the ends of an inner Result's candidate range."""
    base = [operand_parts(o, complex_out)]
    if o.result is None:
        return base
    inner = o.result
    fmt = inner.rounded.dtype
    shape = inner.rounded.shape
    # per part: lowest, highest, and NaN where a modelled implementation gives NaN (the bounds
    # ignore NaN, so without this end the chain would lose it: inf - inf in the inner op). A
    # zero end takes -0 (lowest) or +0 (highest) where a candidate has that sign, so a chain
    # keeps both signs of an inner zero: -0 + (-0) and -0 + (+0) differ.
    ends = []
    for cands in inner._candidates:
        lo, hi, nan, negz, posz = _hull(np.broadcast_arrays(*cands))
        part = [lo, hi]
        both = negz & posz & ~((lo == 0) & (hi == 0))
        if np.any(both):  # both zeros, and a nonzero end: -0 and +0 as ends of their own
            part += [np.where(both, -0.0, lo), np.where(both, 0.0, hi)]
        if np.any(nan & ~np.isnan(lo)):
            part.append(np.where(nan, np.nan, lo))
        ends.append(part)
    out = []
    for corner in itertools.product(*ends):
        arr = to_array(list(corner), fmt, shape)
        alt = cast_operand(Opnd("array", array=arr, label=o.label), promoted)
        out.append(operand_parts(alt, complex_out))
    return base + out


# ----------------------------------------------------------------------------- driver
@dataclass(frozen=True)
class _Decl:
    name: str
    operands: tuple
    exact: object
    kinds: tuple
    cast_operands: bool
    promotion: object
    out_format: object
    prepare_params: object
    fast: object
    accuracy: bool = False
    kernel: str = ""
    checked_scalars: str | None = None
    declared: tuple = ()  # the models the declaration gave: the ones its fast lane stands for


def _own_models(recorded: tuple, declared: tuple) -> bool:
    """Whether the record's models are the very ones the declaration gave, or the same models
    running the same code (a function's band models re-registered carrying the libraries'
    documented bounds): a fast lane's reasoning covers those; a record registered with other
    models runs them."""
    return len(recorded) == len(declared) and all(
        a is b or (isinstance(a, Model) and isinstance(b, Model) and a._args() == b._args())
        for a, b in zip(recorded, declared, strict=True))


def _check_kinds(decl: _Decl, ops, out):
    for o in ops:
        kind = o.array.dtype.kind if o.kind == "array" else (
            "complex" if o.is_complex else None)
        if kind is not None and kind not in decl.kinds:
            raise OpTypeError(
                f"{decl.name} does not take {kind} operands ({o.label} is "
                f"{o.array.dtype.name if o.kind == 'array' else 'a complex scalar'}); it takes "
                f"{', '.join(decl.kinds)}. Convert the operand first (er.cast), or take the "
                f"real part")
    if out.kind not in decl.kinds:
        raise OpTypeError(f"{decl.name} has no {out.kind} result ({out.name}); it takes "
                          f"{', '.join(decl.kinds)} operands")


_FLUSH = (None, "inputs", "outputs", "both")


def _flushed(values, tiny):
    """``values`` (float64) with magnitudes below ``tiny`` (subnormals of the compute format)
    replaced by zeros of their sign, or None when there is none."""
    with np.errstate(invalid="ignore"):
        sub = (np.abs(values) < tiny) & (values != 0)
    if not sub.any():
        return None
    return np.where(sub, np.copysign(0.0, values), values)


def _flush_variant(parts, tiny, shape):
    """ExactPart parts with subnormal values flushed, or None when nothing changes."""
    out, changed = [], False
    for p in parts:
        if p is None or isinstance(p, str) or p.f64 is None or p.ints is not None:
            out.append(p)
            continue
        f = _flushed(np.broadcast_to(p.f64, shape), tiny)
        changed |= f is not None
        out.append(p if f is None else ExactPart.from_float64(f))
    return out if changed else None


def _run(decl: _Decl, args, params, dtype, rounding, overflow, compute, flush=None,
         policy="torch", accuracy=None, random_bits=None, random_bits_width=None) -> Result:
    # an optional operand passed as None (clamp's min or max) is absent: no promotion, no parts
    ops = [None if a is None else prepare(a, label)
           for a, label in zip(args, decl.operands, strict=True)]
    given = [o for o in ops if o is not None]
    shape = broadcast_shapes(given)
    promotion = decl.promotion(params) if callable(decl.promotion) else decl.promotion
    if decl.out_format is not None:
        promoted, out = decl.out_format(given, params, dtype, policy)
    else:
        promoted, out = output_format(given, promotion, dtype, policy)
    _check_kinds(decl, given, out)
    if decl.cast_operands:  # comparisons compare a Python int exactly
        ops = convert_scalars(ops, out, overflow, policy, checked=decl.checked_scalars)
        given = [o for o in ops if o is not None]
        ops = [None if o is None else cast_operand(o, promoted) for o in ops]
    stochastic = resolve_stochastic(rounding, random_bits, random_bits_width)
    mode, rule = resolve_mode_rule(_NE if stochastic else rounding, overflow, out)
    c = compute_format(out, compute) if not out.is_integer else out
    acc = CORRECT if out.is_integer else resolve_accuracy(accuracy, decl.name, c.component,
                                                          complex_out=out.kind == "complex")
    ctx = Ctx(tuple(shape), out, promoted, c, mode, rule, dict(params), tuple(ops), decl.name,
              acc)
    if decl.prepare_params is not None:
        ctx.params = decl.prepare_params(ctx, **params)
    if flush not in _FLUSH:
        raise ValueError(f"flush={flush!r}; expected None, 'inputs', 'outputs' or 'both' (which "
                         f"subnormals of the compute format an implementation may flush to "
                         f"zero)")
    if stochastic is not None:
        return _finish(_run_stochastic(decl, ctx, ops, stochastic, compute, flush), decl, given,
                       params)
    tiny = c.component.smallest_normal if c.component.kind == "float" else 0.0
    # the modelled implementations are the registered record's (the functions family registers
    # its records again, with band models that carry the libraries' documented errors)
    recorded = get_op(decl.name).models[1:]
    if decl.fast is not None and flush is None and _own_models(recorded, decl.declared):
        res = decl.fast(ctx)  # a fast lane stands for the declaration's own models only
        if res is not None:
            return _finish(res, decl, given, params)
    models = [m for m in recorded if not out.is_integer and m.relevant(ctx)]
    if c is out:  # fused in the output: the reference
        models = [m for m in models if m.fn is not None or m.derive is not None]
    n = int(np.prod(shape, dtype=np.int64))
    if n <= _CHUNK or any(o is not None and o.result is not None for o in ops):
        ref, cands = _evaluate(decl, ctx, ops, models, flush, tiny)
    else:  # cache-sized chunks of the flattened output: memory stays bounded
        ref, cands = _chunked(decl, ctx, ops, models, flush, tiny, n)
    rounded = to_array(ref, out, shape)
    names = ["exact"] + [m.name.format(c=c.name, a=acc.label) for m in models]
    if flush:
        names.append(f"subnormal {'inputs and outputs' if flush == 'both' else flush} of "
                     f"{c.name} flushed to zero")
    result = Result(rounded, cands, op=decl.name, models=names,
                    details={"promoted": promoted, "compute": c, "rounding": mode,
                             "overflow": rule, "accuracy": acc})
    return _finish(result, decl, given, params)


#: The kernels whose ExactArrays are the exact value (or settle every bit stochastic rounding
#: reads); a function's value is rounded to odd two bits beyond the output, too few to round
#: stochastically.
_STOCHASTIC_KERNELS = ("sum of products", "quotient", "root", "selection", "conversion")


def _run_stochastic(decl, ctx, ops, spec, compute, flush) -> Result:
    """``rounding="stochastic"``: the exact value rounded stochastically once
    (:mod:`exactref._stochastic`). No modelled implementation applies: compute= and flush= are
    refused (round in the compute format first with a deterministic mode, then er.cast)."""
    if decl.kernel not in _STOCHASTIC_KERNELS:
        raise ValueError(f"{decl.name}: rounding='stochastic' needs the exact value, which the "
                         f"{decl.kernel!r} kernel does not give (it rounds to odd two bits past "
                         f"the output); round {decl.name} in float64 and er.cast the result "
                         f"stochastically")
    if compute is not None or flush is not None:
        raise ValueError(f"{decl.name}: rounding='stochastic' rounds the exact value once; "
                         f"compute= and flush= model deterministic implementations. Compute "
                         f"in that format first (dtype=..., a deterministic rounding), then "
                         f"er.cast(..., rounding='stochastic')")
    check_format(ctx.out)
    complex_calc = any(o.is_complex for o in ops if o is not None)
    parts = [[None, None] if o is None else operand_parts(o, complex_calc) for o in ops]
    exact = decl.exact(ctx, *parts, **ctx.params)
    return stochastic_result(exact[0], ctx.out, ctx.rule, spec, ctx.shape, op=decl.name,
                             details={"promoted": ctx.promoted})


#: Output elements per chunk: every temporary of the engine stays within a few MB.
_CHUNK = 1 << 16


def _own_tiny(o) -> float:
    """The smallest normal of an array operand's own float format (0: none to flush)."""
    comp = getattr(getattr(getattr(o, "array", None), "dtype", None), "component", None)
    return comp.smallest_normal if comp is not None and comp.kind == "float" else 0.0


def _evaluate(decl, ctx, ops, models, flush, tiny):
    """The reference and the candidates of every modelled implementation (float64 arrays of
    the output's shape, per part), for every variant of the operands."""
    out, c = ctx.out, ctx.c
    complex_calc = ctx.complex_out or any(o.is_complex for o in ops if o is not None)
    cands = None
    ref = None
    variants = []
    for o in ops:
        vs = [[None, None]] if o is None else _variants(o, ctx.promoted, complex_calc)
        if flush in ("inputs", "both"):  # subnormal inputs read as zeros
            # (in the compute format; a comparison, whose bool result has none, reads each
            # array operand in its own format)
            t = tiny or _own_tiny(o)
            vs += [f for f in (_flush_variant(v, t, ctx.shape) for v in vs) if f is not None]
        variants.append(vs)
    for variant in itertools.product(*variants):
        exact = decl.exact(ctx, *variant, **ctx.params)
        got = [ctx.round(exact)]
        for m in models:
            if m.derive is not None:
                value = m.derive(ctx, exact, *variant)
            else:
                value = exact if m.fn is None else m.fn(ctx, *variant, **ctx.params)
            got.append(ctx.round(_stored(ctx, value, c)))
        if flush in ("outputs", "both") and not out.is_integer:  # subnormal results as zeros
            got += [[f if f is not None else v for f, v in zip(fl, vals, strict=True)]
                    for vals in list(got) for fl in [[_flushed(v, tiny) for v in vals]]
                    if any(f is not None for f in fl)]
        if ref is None:
            ref = got[0]
            cands = [[] for _ in ref]
        for values in got:
            for i, v in enumerate(values):
                cands[i].append(v)
    return ref, cands


def _chunk_operand(o, shape, start, stop):
    """An operand's values at the flat output positions ``start:stop`` (1-D), as an operand."""
    if o is None or o.kind != "array":
        return o
    data = np.broadcast_to(o.array.numpy(), shape).flat[start:stop]
    return Opnd("array", array=Array(np.ascontiguousarray(data), o.array.dtype), label=o.label)


def _chunked(decl, ctx, ops, models, flush, tiny, n):
    """:func:`_evaluate` chunk by chunk. Where several candidates remain, each chunk keeps four
    per part, which bound the rest exactly as the Result reads them: the reference, the lowest
    and the highest (with -0 below +0 where a candidate has that zero), and NaN where one is."""
    from dataclasses import replace

    ref = lo = hi = nan = None
    single = True
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        sub = [_chunk_operand(o, ctx.shape, start, stop) for o in ops]
        sctx = replace(ctx, shape=(stop - start,), operands=tuple(sub))
        r, cands = _evaluate(decl, sctx, sub, models, flush, tiny)
        if ref is None:  # the outputs, filled chunk by chunk (no list of chunks to join)
            ref = [np.empty(n, dtype=np.asarray(v).dtype) for v in r]
            lo, hi = [np.empty(n) for _ in r], [np.empty(n) for _ in r]
            nan = [np.zeros(n, dtype=bool) for _ in r]
        for i, (v, c) in enumerate(zip(r, cands, strict=True)):
            ref[i][start:stop] = v
            if len(c) > 1 or not single:
                if single:  # the first chunk with several candidates: earlier ones had one
                    for j in range(len(ref)):
                        lo[j][:start] = hi[j][:start] = ref[j][:start]
                    single = False
                lo[i][start:stop], hi[i][start:stop], nan[i][start:stop] = _hull(c)[:3]
            else:
                lo[i][start:stop] = hi[i][start:stop] = v
    ref = [v.reshape(ctx.shape) for v in ref]
    if single:
        return ref, [[v] for v in ref]
    cands = [[r, a.reshape(ctx.shape), b.reshape(ctx.shape),
              np.where(m, np.nan, a).reshape(ctx.shape)]
             for r, a, b, m in zip(ref, lo, hi, nan, strict=True)]
    return ref, cands


def _hull(cands):
    """``(lowest, highest, any NaN, any -0, any +0)`` of candidate arrays, NaN ignored by the
    ends and -0 counting below +0: the ends take -0 (lowest) or +0 (highest) where a candidate
    has that zero, so the hull keeps both signs of a zero."""
    stack = np.stack([np.asarray(c, dtype=np.float64) for c in cands])
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduce(stack, axis=0)
        hi = np.fmax.reduce(stack, axis=0)
    zero = stack == 0
    negz = (zero & np.signbit(stack)).any(axis=0)
    posz = (zero & ~np.signbit(stack)).any(axis=0)
    lo = np.where((lo == 0) & negz, -0.0, lo)
    hi = np.where((hi == 0) & posz, 0.0, hi)
    return lo, hi, np.isnan(stack).any(axis=0), negz, posz


def _stored(ctx: Ctx, value, fmt):
    """The exact value of each part rounded into ``fmt``, as exact arrays again (for the final
    store into the output format)."""
    return [ctx.values(v) for v in ctx.round(value, fmt)]


def _finish(result: Result, decl: _Decl, given, params) -> Result:
    """Record the operands as given (and the parameters) on the Result."""
    result.inputs = {o.label: (o.array if o.kind == "array" else o.value) for o in given
                     if o is not None}
    result.inputs.update(params)
    return result


_NO_COUNTERPARTS = Counterparts()


def elementwise(name, operands, *, kernel, promotion, summary, counterparts=_NO_COUNTERPARTS,
                params=(), models=(FUSED,), kinds=("bool", "int", "uint", "float", "complex"),
                cast_operands=True, out_format=None, prepare_params=None, fast=None,
                optional=(), loop="output", accuracy=False, audit_inputs=(),
                checked_scalars=None):
    """Declare an elementwise op: decorate its exact formula ``exact(ctx, *parts, **params)``
    (returning one ExactArray per output part). Returns ``er.<name>`` and registers the op.
    ``accuracy=True``: the op takes ``accuracy=`` (an implementation's error in ulps of the
    compute format, :mod:`._accuracy`), for models that ``derive`` from the exact value.
    ``audit_inputs``: the regions where the op is hard (:class:`~exactref.ops.Region`).
    ``checked_scalars``: under the torch policy a Python int operand outside the integer format
    raises unless c10's checked conversion takes it, its negatives then wrapped (``"wrap"``:
    torch.clamp's bounds) or left to the op (``"exact"``: pow), instead of wrapping modulo
    ``2**bits`` (None: ``Scalar.to<T>()``, the arithmetic ops and comparisons)."""
    params = tuple(params)
    bad = [m for m in models if not isinstance(m, Model)]
    if bad:
        raise TypeError(f"{name}: models= takes Model objects (the implementations the driver "
                        f"runs), not {bad[0]!r}")

    def decorator(exact):
        decl = _Decl(name, tuple(operands), exact, tuple(kinds), cast_operands,
                     promotion, out_format, prepare_params, fast, accuracy, kernel,
                     checked_scalars, tuple(models))
        names = ", ".join(operands)
        defaults = {p.name: p.default for p in params}
        required = len(operands) - len(optional)

        keywords = ["dtype", "rounding", "overflow", "compute", "flush", "policy",
                    "random_bits", "random_bits_width"] + (["accuracy"] if accuracy else [])

        def function(*args, dtype=None, rounding=_NE, overflow=None, compute=None, flush=None,
                     policy="torch", random_bits=None, random_bits_width=None, **kw):
            acc = kw.pop("accuracy", None) if accuracy else None
            if accuracy and acc is None:  # the function ops' default (docs/functions.md)
                acc = DEFAULT_ACCURACY
            args = list(args) + [kw.pop(o, None) for o in operands[len(args):]
                                 if o in optional]
            given = sum(a is not None for a in args)
            if not required <= len(args) <= len(operands) or (
                    len(args) > required and all(a is None for a in args[required:])):
                more = f" and at least one of {', '.join(optional)}" if optional else ""
                raise TypeError(f"{name}() takes the operands {names}{more}; got "
                                f"{given} operand{'s' if given != 1 else ''}")
            args += [None] * (len(operands) - len(args))
            unknown = set(kw) - set(defaults)
            if unknown:
                raise TypeError(f"{name}() got an unexpected keyword argument "
                                f"{sorted(unknown)[0]!r}; it takes "
                                f"{', '.join(list(defaults) + keywords)}")
            return _run(decl, args, {**defaults, **kw}, dtype, rounding, overflow, compute,
                        flush, policy, acc, random_bits, random_bits_width)

        function.__name__ = function.__qualname__ = name
        function.__doc__ = exact.__doc__
        function.__module__ = exact.__module__
        sig = [inspect.Parameter(o, inspect.Parameter.POSITIONAL_ONLY) for o in
               operands[:required]]
        sig += [inspect.Parameter(o, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
                for o in operands[required:]]
        sig += [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
                for p in params]
        sig += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in
                (("dtype", None), ("rounding", _NE), ("overflow", None), ("compute", None),
                 ("flush", None), ("policy", "torch"), ("random_bits", None),
                 ("random_bits_width", None))]
        if accuracy:
            sig.append(inspect.Parameter("accuracy", inspect.Parameter.KEYWORD_ONLY,
                                         default=DEFAULT_ACCURACY))
        function.__signature__ = inspect.Signature(sig, return_annotation=Result)
        function.spec = register(OpSpec(
            name=name, operands=tuple(operands), kernel=kernel,
            promotion=promotion if isinstance(promotion, str) or promotion is None else
            promotion({**defaults}), function=function, summary=summary, params=params,
            models=("exact", *models), counterparts=counterparts,
            kinds=tuple(kinds), optional=tuple(optional), loop=loop,
            audit_inputs=tuple(audit_inputs)))
        return function

    return decorator


def with_backward(function, backward):
    """Attach ``backward`` to an op: ``er.<op>.backward`` and its record's ``backward``."""
    from dataclasses import replace

    function.backward = backward
    function.spec = register(replace(function.spec, backward=backward))
    return function
