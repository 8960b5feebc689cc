"""JAX's type promotion: a lattice with weak types, x64 off (``jax``) or on (``jax_x64``).

Source: ``jax/_src/dtypes.py`` (``_type_promotion_lattice``, ``_least_upper_bound``,
``canonicalize_dtype``) and the ``jax.numpy`` ufunc wrappers; checked against jax 0.10.2 (CPU)
by ``scripts/record_promotion_fixtures.py`` (``fixtures/jax.json``, ``fixtures/jax_x64.json``).

The lattice (:data:`LATTICE`) lists each type's immediate supertypes; the result of several
operands is their least upper bound. Python ``int``/``float``/``complex`` scalars are the weak
types ``i*``/``f*``/``c*``, just above bool and just below the narrowest type of their kind, so
they never widen an array; a result that is itself weak takes the default dtype of its kind
(int32/float32/complex64 with x64 off, the 64-bit ones with x64 on) and stays weakly typed.
Arrays are strong whether 0-d or not (``jnp.asarray(2.0)``-style weakly typed arrays are weak).
Sub-byte integers (int2, int4, uint2, uint4), float8, float6 and float4 types promote only with
themselves, bool and (integers) Python ints: "no implicit promotion". With x64 off, 64-bit inputs
are first canonicalized to 32 bits, and a Python int must fit the default int.

Per operation (:data:`OP_RULES`, on the promoted dtype): sub rejects bool; true division maps
bool and integers by :data:`TO_INEXACT` (float32 up to 32 bits, float64 for 64 bits, even with
x64 on; int1, int2, uint1 and uint2 stay); floor_divide, remainder and fmod reject complex and
turn bool into int32; pow turns bool into int32 (with a Python int exponent only the base is
promoted: ``lax.integer_pow``); bitwise ops need bool or integers; comparisons and logical ops
output bool. sqrt, rsqrt and reciprocal map by :data:`TO_INEXACT` too and then need a floating
dtype (int1, int2, uint1 and uint2 are rejected); abs of complex is real, abs of bool and
unsigned integers is the identity, of int1 int8, of int2 and int4 an error; negative rejects
bool; clip rejects any complex operand. jax has no rsqrt (exactref's rsqrt is ``1 / sqrt(x)``),
no addcmul and no addcdiv (they raise); fma is the dtype of ``x * y + z``. Unary and ternary
ops promote their operands on the same lattice (``jnp.clip`` is a maximum and a minimum).

>>> import exactref as er
>>> er.result_type("int8[3]", 2.5, policy="jax"), er.promotion.resolve("int8[3]", 2.5, policy="jax").weak
(exactref.float32, True)
>>> er.result_type("uint64[3]", "int64[3]", policy="jax_x64")
exactref.float64
"""

from __future__ import annotations

import functools

from .._formats import FORMATS, Format
from ._engine import Policy, Resolution, Trace, register
from ._operands import Operand
from ._ops import OPS

__all__ = ["JaxPolicy", "LATTICE", "OP_RULES"]

SOURCE = "jax/_src/dtypes.py (type promotion lattice), measured"
CHECKED = "jax 0.10.2 (CPU)"
#: the ml_dtypes minor jax 0.10.2 was checked with (its can_cast is numpy's, with that ml_dtypes)
JAX_ML_DTYPES = "0.6"

FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu")
SMALL_FLOATS = FLOAT8 + ("float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
SUB_BYTE_INTS = ("int1", "int2", "int4", "uint1", "uint2", "uint4")

#: Each type's immediate supertypes; "i*", "f*", "c*" are the weak Python int/float/complex.
LATTICE = {
    "bool": ["i*"],
    "i*": ["uint8", "uint2", "uint4", "int8", "int2", "int4", "int1", "uint1"],
    "uint1": [], "uint2": [], "uint4": [],
    "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"], "uint32": ["int64", "uint64"],
    "uint64": ["f*"],
    "int1": [], "int2": [], "int4": [],
    "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["f*"],
    "f*": [*SMALL_FLOATS, "bfloat16", "float16", "c*"],
    **{t: [] for t in SMALL_FLOATS},
    "bfloat16": ["float32"], "float16": ["float32"], "float32": ["float64", "complex64"],
    "float64": ["complex128"],
    "c*": ["complex64"], "complex64": ["complex128"], "complex128": [],
}
#: Note: with x64 off jax replaces uint32's supertypes by [int32, uint64], so that no 64-bit
#: type forms from 32-bit inputs (uint32 with int32 gives int32).
LATTICE_X32_CHANGES = {"uint32": ["int32", "uint64"]}
WEAK = {"int": "i*", "float": "f*", "complex": "c*"}

#: x64 off: what 64-bit dtypes become (jax.dtypes.canonicalize_dtype).
CANONICAL_32 = {"int64": "int32", "uint64": "uint32", "float64": "float32",
                "complex128": "complex64"}
DEFAULTS = {False: {"i*": "int32", "f*": "float32", "c*": "complex64"},
            True: {"i*": "int64", "f*": "float64", "c*": "complex128"}}

#: jax.dtypes.to_inexact_dtype: what true division makes of bool and integers (int2 and uint2
#: are not listed, so they stay as they are).
TO_INEXACT = {"bool": "float32", "uint4": "float32", "int4": "float32", "uint8": "float32",
              "int8": "float32", "uint16": "float32", "int16": "float32", "uint32": "float32",
              "int32": "float32", "uint64": "float64", "int64": "float64"}

_REM = {"reject": {"complex": "rem does not accept dtype {d} at position 0. Accepted dtypes at "
                              "position 0 are subtypes of integer, floating."}, "bool_to_int": True}
_NARROW = ("abs does not accept dtype {d}. Support for narrow-width integers is platform-dependent "
           "and limited to a few specific operations, e.g. basic arithmetic and type casting.")

#: Per-operation rules on the promoted dtype: reject kinds (a TypeError's message, or
#: (type, message)), bool -> default int/float; to_inexact: TO_INEXACT; floating_only: the
#: message for a dtype still not floating after it ({shape}: the operand's shape); to_real:
#: complex becomes its component; dtypes: what particular dtypes become (or !message).
OP_RULES = {
    "sub": {"reject": {"bool": "sub does not accept dtype {d} at position 0. Accepted dtypes at "
                               "position 0 are subtypes of integer, floating, complexfloating."}},
    "div": {"to_inexact": True},
    "floor_divide": {"reject": {"complex": "floor_divide does not support complex-valued "
                                          "inputs"}, "bool_to_int": True},
    "remainder": _REM,
    "fmod": _REM,
    "pow": {"bool_to_int": True, "integer_pow": True},
    "bitwise": {"reject": {k: "and does not accept dtype {d} at position 0. Accepted dtypes at "
                              "position 0 are subtypes of integer, bool." for k in
                           ("float", "complex")}},
    "equality": {"output": "bool"},
    "ordering": {"output": "bool"},
    "logical": {"output": "bool"},
    "extremum": {},
    "fextremum": {},
    # jnp.arctan2: promote_args_inexact, as true division; lax.atan2 then needs a floating
    # (or complex) dtype
    "float_function2": {"to_inexact": True, "floating_only": "{op} does not accept dtype {d} at "
                                                            "position 0. Accepted dtypes at "
                                                            "position 0 are subtypes of "
                                                            "floating, complexfloating."},
    "root": {"to_inexact": True, "floating_only": "sqrt does not accept dtype {d}. Accepted "
                                                  "dtypes are subtypes of floating, "
                                                  "complexfloating."},
    "reciprocal": {"to_inexact": True, "floating_only": "Integers cannot be raised to negative "
                                                        "powers, got integer_pow({d}{shape}, -1)"},
    "abs": {"to_real": True, "dtypes": {"int1": "int8", "int2": "!" + _NARROW,
                                        "int4": "!" + _NARROW}},
    "negative": {"reject": {"bool": "neg does not accept dtype {d}. Accepted dtypes are subtypes "
                                    "of integer, floating, complexfloating."}},
    "clamp": {"reject": {"complex": ("ValueError", "Clip received a complex value either "
                                     "through the input or the min/max keywords. Complex values "
                                     "have no ordering and cannot be clipped. Please convert to "
                                     "a real value or array by taking the real or imaginary "
                                     "components via jax.numpy.real/imag respectively.")}},
}
#: Operations jax has no function for (torch's addcmul and addcdiv).
NOT_IN_JAX = ("addcmul", "addcdiv")
#: how to write them with jax.numpy: the operator of their middle step
_INFIX = {"addcmul": "*", "addcdiv": "/"}

JAX_DTYPES = ("bool", "int1", "int2", "int4", "int8", "int16", "int32", "int64", "uint1",
              "uint2", "uint4", "uint8", "uint16", "uint32", "uint64", "bfloat16", "float16", "float32",
              "float64", "complex64", "complex128") + SMALL_FLOATS


def _upper_bounds(lattice: dict, node: str) -> frozenset:
    seen, stack = {node}, [node]
    while stack:
        for sup in lattice[stack.pop()]:
            if sup not in seen:
                seen.add(sup)
                stack.append(sup)
    return frozenset(seen)


_UB = {x64: {n: _upper_bounds(lat, n) for n in lat} for x64, lat in
       ((True, LATTICE), (False, {**LATTICE, **LATTICE_X32_CHANGES}))}


@functools.lru_cache(maxsize=4096)
def _least_upper_bound(x64: bool, nodes: frozenset) -> list:
    """The bounds of ``nodes`` below every other common bound (one, or none)."""
    ub = _UB[x64]
    common = frozenset.intersection(*(ub[n] for n in nodes))
    return [c for c in common if common <= ub[c]]


class JaxPolicy(Policy):
    title = "JAX's promotion lattice with weak Python scalars"
    source = SOURCE
    checked = CHECKED
    formats = tuple(FORMATS[n] for n in JAX_DTYPES)
    cast_spelling = "{x}.astype({t})"

    missing = {op: f"write it with jax.numpy, x + t1 {_INFIX[op]} t2 (or use policy='torch')"
               for op in NOT_IN_JAX}

    def __init__(self, x64=False):
        self.x64 = bool(x64)
        self.name = "jax_x64" if self.x64 else "jax"
        self.checked = CHECKED + (", jax_enable_x64=True" if self.x64 else ", x64 off")
        self.defaults = DEFAULTS[self.x64]
        # jnp.sum of integers accumulates in the default integer width, jnp.mean gives the
        # default float
        self.sum_integers = ("int64", "uint64") if self.x64 else ("int32", "uint32")
        self.mean_integers = self.defaults["f*"]

    def cast_name(self, fmt):
        return f"jnp.{fmt.name}"

    def library_name(self):
        return "jax"

    def canonical(self, f: Format) -> Format:
        if not self.x64 and f.name in CANONICAL_32:
            return FORMATS[CANONICAL_32[f.name]]
        return f

    def lub(self, nodes: list, labels: list, op) -> str:
        """_least_upper_bound: the one upper bound below all the others."""
        lower = _least_upper_bound(self.x64, frozenset(nodes))
        if not lower:
            names = tuple(labels)
            head = f"Input dtypes {names} have no available implicit dtype promotion path."
            for group, what, cast in ((FLOAT8, "8-bit floats", "float32"),
                                      (("float6_e2m3fn", "float6_e3m2fn"), "6-bit floats",
                                       "float32"),
                                      (("float4_e2m1fn",), "4-bit floats", "float32"),
                                      (SUB_BYTE_INTS, "1-bit, 2-bit and 4-bit integers", "int32")):
                if any(n in group for n in nodes):
                    msg = (f"{head} To avoid unintended promotion, {what} do not support "
                           f"implicit promotion. If you'd like your inputs to be promoted to "
                           f"another type, you can do so explicitly using e.g. "
                           f"x.astype('{cast}')")
                    break
            else:
                msg = f"{head} Try explicitly casting inputs to the desired output type."
            fmts = [FORMATS[n] for n in nodes if n in FORMATS]
            raise self.error(f"no implicit promotion between {' and '.join(labels)}",
                             dtypes=fmts or labels, op=op,
                             library_error=("TypePromotionError", msg))
        return lower[0]

    def _node(self, i: int, o: Operand, op, trace: Trace) -> tuple[str, str]:
        if o.tier == "python" or (o.tier == "array" and o.weak):
            kind = o.pykind if o.tier == "python" else {"uint": "int"}.get(o.format.kind,
                                                                         o.format.kind)
            if kind == "bool":
                trace.note(i, "bool (Python bools are not weak)")
                return "bool", "bool"
            node = WEAK[kind]
            if o.tier == "python" and kind == "int" and o.value is not None:
                info = FORMATS[self.defaults["i*"]]
                if not info.int_min <= o.value <= info.int_max:
                    path = "xy"[min(i, 1)]
                    raise self.error(
                        f"the Python int {o.label} does not fit {info.name}, jax's default int",
                        dtypes=("Python int",), op=op, reason="value", overflow=True,
                        suggest=False, remedy="pass an array of a wider dtype" + (
                            "" if self.x64 else ", or enable x64"),
                        library_error=("OverflowError", f"An overflow was encountered while "
                                                        f"parsing an argument to a jitted "
                                                        f"computation, whose argument path is "
                                                        f"{path}. Got <class 'int'> with value "
                                                        f"{o.value}"))
            trace.note(i, f"weak type {node}")
            return node, f"<class '{kind}'>" if o.tier == "python" else o.format.name
        f = self.known(o.format, op)
        c = self.canonical(f)
        if c is not f:
            trace.note(i, f"canonicalized to {c.name} (x64 off)")
        return c.name, c.name

    def _resolve(self, operands, op, trace) -> Resolution:
        fam = OPS[op] if op is not None else None
        self.refuse_missing(op)
        rules = OP_RULES.get(fam, {})
        nodes, labels = [], []
        for i, o in enumerate(operands):
            n, lab = self._node(i, o, op, trace)
            nodes.append(n)
            labels.append(lab)
        if rules.get("integer_pow") and len(operands) == 2 and operands[1].tier == "python" \
                and operands[1].pykind in ("bool", "int"):
            trace.step("pow with a Python int exponent: lax.integer_pow, only the base is "
                       "promoted")
            nodes, labels = nodes[:1], labels[:1]
        # Order the labels as jax prints the set of input types (weak Python types first).
        top = self.lub(nodes, sorted(labels, key=lambda s: (not s.startswith("<"), s)), op)
        weak = top in WEAK.values()
        dt = FORMATS[self.defaults[top]] if weak else FORMATS[top]
        trace.step(f"least upper bound of {', '.join(nodes)} in the lattice: {top}"
                   + (f", the default {dt.name}, weakly typed" if weak else ""))
        canon = self.canonical(dt)
        if canon is not dt:
            trace.step(f"x64 off: {dt.name} is canonicalized to {canon.name}")
            dt = canon
        shape = operands[0].label[operands[0].label.find("["):] if \
            operands[0].label.endswith("]") else "[...]"
        return self.apply_op(op, fam, rules, dt, weak, trace, shape)

    def _reject(self, op, dt, msg, shape=""):
        kind, msg = msg if isinstance(msg, tuple) else ("TypeError", msg)
        return self.error(f"{op} does not accept {dt.name}", dtypes=(dt,), op=op,
                          reason="operation", suggest=False,
                          library_error=(kind, msg.format(d=dt.name, shape=shape, op=op)),
                          remedy="cast the operands to a dtype the op accepts")

    def apply_op(self, op, fam, rules, dt: Format, weak: bool, trace: Trace,
                 shape="") -> Resolution:
        if fam is None:
            return Resolution(dt, dt, weak)
        for kind, msg in rules.get("reject", {}).items():
            if dt.kind == kind:
                raise self._reject(op, dt, msg)
        if rules.get("to_inexact") and dt.name in TO_INEXACT:
            new = FORMATS[TO_INEXACT[dt.name]]
            trace.step(f"{op}: to_inexact_dtype({dt.name}) = {new.name}")
            dt = new
        if "floating_only" in rules and dt.kind not in ("float", "complex"):
            raise self._reject(op, dt, rules["floating_only"], shape)
        special = rules.get("dtypes", {}).get(dt.name)
        if special is not None:
            if special.startswith("!"):
                raise self._reject(op, dt, special[1:])
            trace.step(f"{op}: {dt.name} gives {special} (measured)")
            dt = FORMATS[special]
        if rules.get("to_real") and dt.kind == "complex":
            dt = FORMATS[{"complex64": "float32", "complex128": "float64"}[dt.name]]
            trace.step(f"{op}: a complex operand gives its real component format, {dt.name}")
        if rules.get("bool_to_int") and dt.kind == "bool":
            dt = FORMATS["int32"]  # to_numeric_dtype: bool -> int32, whatever x64 says
            weak = False
            trace.step(f"{op}: to_numeric_dtype(bool) = int32")
        if "output" in rules:
            trace.step(f"{op}: computes in {dt.name}, outputs bool")
            return Resolution(FORMATS["bool"], dt, False)
        return Resolution(dt, dt, weak)

    def promote_types(self, a, b):
        """jnp.promote_types: the lattice's bound, not canonicalized (64 bits even with x64 off);
        a weak bound is numpy's dtype of the Python type (int64, float64, complex128)."""
        a, b = self.known(a), self.known(b)
        top = self.lub([a.name, b.name], sorted([a.name, b.name]), None)
        return FORMATS[DEFAULTS[True][top]] if top in WEAK.values() else FORMATS[top]

    def _can_cast(self, a, b, casting) -> bool:
        """jnp.can_cast(from_, to, casting='safe'): numpy's safe casting table, with the
        ml_dtypes jax was checked with (JAX_ML_DTYPES)."""
        from ._engine import get_policy

        return get_policy("numpy", ml_dtypes=JAX_ML_DTYPES).can_cast(a, b, casting or "safe")

    def inplace(self, op, target, others, trace) -> Resolution:
        raise self.error("jax arrays are immutable: there are no in-place operations", op=op,
                         reason="unsupported", suggest=False,
                         remedy="use x.at[idx].add(y), which casts the result to x.dtype")


register("jax", lambda **kw: JaxPolicy(x64=kw.pop("x64", False), **kw))
register("jax_x64", lambda **kw: JaxPolicy(x64=True, **kw))
