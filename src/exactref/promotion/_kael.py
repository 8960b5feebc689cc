"""kael's promotion rules, exactly as its ADR 0003 ("Type promotion") records them.

Source: kael ADR 0003 "Type promotion" (accepted in phase 5, tag chapter-05-iteration; the 0-d
rule and the per-operation overrides from chapter-06-ops; in force at v1.0.0 and at head). kael
has four dtypes, Bool < I64 < F32 < F64; any other dtype is rejected.

The four functions of the record, each a small fold of the data below:

* ``promote_types``: the higher of two dtypes in the full order (:data:`PROMOTE_TYPES`).
* ``dtype_category``: Bool 0, I64 1, F32 and F64 2 (:data:`CATEGORY`).
* ``promote_with_scalar``: a scalar's dtype comes from its type (true: Bool, 2: I64, 2.5 and
  2.5f: F32); it wins only with a higher category.
* ``result_dtype``: tensors with dimensions and 0-d tensors are promoted in two groups; the 0-d
  group wins only with a higher category.

Then the per-operation overrides (:data:`OVERRIDES`) and the in-place rule (``check_result_fits``).

kael's operations are the ones the record names: add, sub, mul, div, pow, floor_divide, the
comparisons and the logical ops. The other operations exactref names since (maximum, minimum,
fmax, fmin, fmod, atan2, sqrt, rsqrt, reciprocal, abs, negative, addcmul, addcdiv, clamp) raise
PromotionError (``reason="unsupported"``): kael has no such operation, and the record says
nothing of their dtypes (a unary op has no second dtype for result_dtype to weigh, and
sqrt of an I64 tensor could be I64, F32 or an error). fma is the dtype of ``x * y + z``
under kael's own mul and add (no library has an fma op; exactref defines it by that expression
in every policy), so kael answers it.

Choices where the record is silent (each marked ``# Note:`` below): Python complex scalars are
rejected (kael has no complex dtype); an operation needs at least one tensor; a typed scalar
(``er.Scalar``) goes through ``promote_with_scalar`` with its own dtype; ``check_no_bool``
looks at every input, Python ``True`` included, as PyTorch's sub does; logical ops output Bool
(the record: "logical_or gives the PyTorch meaning").

>>> import exactref as er
>>> er.result_type("int64[3]", 2.5, policy="kael")
exactref.float32
>>> er.result_type("float32[3]", "float64[]", policy="kael")
exactref.float32
"""

from __future__ import annotations

from .._formats import FORMATS, Format
from ._engine import Policy, Resolution, Trace, parse_table, register
from ._operands import Operand
from ._ops import OPS

__all__ = ["KaelPolicy", "PROMOTE_TYPES", "CATEGORY", "SCALAR_DTYPE", "OVERRIDES"]

SOURCE = 'kael ADR 0003 "Type promotion"'
CHECKED = "the record as accepted in phase 5, in force at v1.0.0 and at head"

#: kael's names for its four dtypes (include/kael/dtype.h), in the full order.
KAEL_NAME = {"bool": "Bool", "int64": "I64", "float32": "F32", "float64": "F64"}
_BY_KAEL = {v: k for k, v in KAEL_NAME.items()}

#: The record's promote_types table, verbatim (row, column -> result).
PROMOTE_TYPES = """
promote_types Bool I64 F32 F64
Bool          Bool I64 F32 F64
I64           I64  I64 F32 F64
F32           F32  F32 F32 F64
F64           F64  F64 F64 F64
"""

#: dtype_category: Bool 0, I64 1, F32 and F64 share 2.
CATEGORY = {"bool": 0, "int64": 1, "float32": 2, "float64": 2}
CATEGORY_NAME = {0: "Bool", 1: "integer", 2: "floating point"}

#: A scalar's dtype comes from its C++ (or Python) type, not its value.
SCALAR_DTYPE = {"bool": "bool", "int": "int64", "float": "float32"}

#: Per-operation overrides (src/internal/arithmetic.h, src/ops/inplace.cpp):
#: family -> (rule, function, same as PyTorch).
OVERRIDES = {
    "add": ("Bool + Bool gives I64", "add_dtype", "no, PyTorch gives Bool"),
    "div": ("an integer or Bool result becomes F32", "div_dtype", "yes"),
    "sub": ("Bool inputs throw TypeError", "check_no_bool", "PyTorch also rejects Bool sub"),
    "pow": ("Bool inputs throw TypeError", "check_no_bool", "PyTorch also rejects Bool sub"),
    "floor_divide": ("Bool inputs throw TypeError", "check_no_bool",
                     "PyTorch also rejects Bool sub"),
    "equality": ("compare in result_dtype, output Bool", "comparison_kernel", "yes"),
    "ordering": ("compare in result_dtype, output Bool", "comparison_kernel", "yes"),
    # Note: not in the record's table; logical_or "gives the PyTorch meaning", a Bool output.
    "logical": ("output Bool", "logical ops", "yes"),
}


#: Note: operations exactref names that kael does not have (see the module docstring).
NOT_IN_KAEL = ("fmod", "maximum", "minimum", "fmax", "fmin", "sqrt", "rsqrt", "reciprocal", "abs",
               "negative", "addcmul", "addcdiv", "clamp", "atan2")

_PROMOTE = parse_table(PROMOTE_TYPES, _BY_KAEL)


class KaelPolicy(Policy):
    name = "kael"
    title = "kael's record: PyTorch's category rules on Bool < I64 < F32 < F64"
    source = SOURCE
    checked = CHECKED
    formats = tuple(FORMATS[n] for n in KAEL_NAME)
    cast_spelling = "{x}.to(DType::{t})"

    def cast_name(self, fmt: Format) -> str:
        return KAEL_NAME[fmt.name]

    def label(self, fmt: Format) -> str:
        return KAEL_NAME[fmt.name]

    def library_name(self) -> str:
        return "kael"

    def scalar_columns(self) -> list:
        return [True, 2, 2.5]

    # -- the record's functions ------------------------------------------------------------
    @staticmethod
    def promote(a: Format, b: Format) -> Format:
        return FORMATS[_PROMOTE[a.name, b.name]]

    @staticmethod
    def category(f: Format) -> int:
        return CATEGORY[f.name]

    def _scalar_dtype(self, o: Operand, op) -> Format:
        if o.tier == "typed":
            # Note: a typed scalar keeps its dtype (scalar(0.5, DType::F64) in the record is a
            # 0-d tensor; an er.Scalar goes through promote_with_scalar with its own dtype).
            return self.known(o.format, op)
        if o.pykind not in SCALAR_DTYPE:
            # Note: kael has no complex dtype.
            raise self.error(f"kael has no dtype for a Python {o.pykind} scalar ({o.label})",
                             dtypes=(f"Python {o.pykind}",), op=op, reason="unsupported",
                             remedy="use a real scalar; kael scalars are bool, int64 or "
                                    "float32", suggest=False)
        return FORMATS[SCALAR_DTYPE[o.pykind]]

    def _group(self, fmts: list, what: str, trace: Trace) -> Format | None:
        group = None
        for f in fmts:
            if group is None:
                group = f
            else:
                new = self.promote(group, f)
                trace.step(f"{what} group: promote_types({self.label(group)}, {self.label(f)})"
                           f" = {self.label(new)}")
                group = new
        return group

    def result_dtype(self, dims: list, zeros: list, trace: Trace) -> Format:
        d = self._group(dims, "dimensioned", trace)
        z = self._group(zeros, "0-d", trace)
        if d is None or z is None:
            only = d if d is not None else z
            which = "dimensioned" if d is not None else "0-d"
            trace.step(f"result_dtype: only a {which} group, {self.label(only)}")
            return only
        cd, cz = self.category(d), self.category(z)
        if cz > cd:
            trace.step(f"result_dtype: dimensioned group {self.label(d)}, 0-d group "
                       f"{self.label(z)}; category {cz} > {cd}, so the 0-d group wins: "
                       f"{self.label(z)}")
            return z
        trace.step(f"result_dtype: dimensioned group {self.label(d)}, 0-d group {self.label(z)};"
                   f" category {cz} is not higher than {cd}, so the dimensioned group wins: "
                   f"{self.label(d)}")
        return d

    # -- the policy --------------------------------------------------------------------------
    def _resolve(self, operands, op, trace) -> Resolution:
        fam = OPS[op] if op is not None else None
        if op in NOT_IN_KAEL:
            raise self.error(f"kael has no {op} operation; its operations are add, sub, mul, "
                             f"div, pow, floor_divide, the comparisons and the logical ops",
                             op=op, reason="unsupported", suggest=False,
                             remedy="compute it outside kael, or use policy='torch' (the rules "
                                    "kael follows)")
        dims, zeros, scalars = [], [], []
        for i, o in enumerate(operands):
            if o.tier == "array":
                f = self.known(o.format, op)
                (zeros if o.zero_dim else dims).append(f)
                trace.note(i, f"{self.label(f)}, category {self.category(f)} "
                              f"({CATEGORY_NAME[self.category(f)]})")
            else:
                f = self._scalar_dtype(o, op)
                scalars.append((i, o, f))
                why = (" (every floating scalar is F32)" if o.pykind == "float" else "")
                trace.note(i, f"a Scalar of dtype {self.label(f)}{why}, category "
                              f"{self.category(f)}")
        if not dims and not zeros:
            # Note: every kael operation has a tensor operand; two scalars have no kernel.
            raise self.error("a kael operation needs at least one tensor operand",
                             dtypes=[f for _, _, f in scalars], op=op, reason="unsupported",
                             remedy="make one operand a tensor", suggest=False)
        inputs = [f for f in dims + zeros] + [f for _, _, f in scalars]
        if scalars:
            tensor = self.result_dtype(dims, zeros, Trace()) if (dims or zeros) else None
            for _i, o, s in scalars:
                if self.category(s) > self.category(tensor):
                    t = s
                    why = (f"scalar category {self.category(s)} > tensor category "
                           f"{self.category(tensor)}, so the scalar's dtype {self.label(s)} wins")
                else:
                    t = tensor
                    why = (f"scalar category {self.category(s)} is not higher than tensor "
                           f"category {self.category(tensor)}, so the tensor's dtype "
                           f"{self.label(tensor)} wins")
                trace.step(f"resolve_operands: promote_with_scalar({self.label(tensor)}, "
                           f"{o.label}): {why}; {o.label} becomes a 0-d {t.name} tensor")
                zeros.append(t)
        result = self.result_dtype(dims, zeros, trace)
        return self._override(fam, op, inputs, result, trace)

    def _override(self, fam, op, inputs, result, trace) -> Resolution:
        if fam is None:
            return Resolution(result, result)
        rule = OVERRIDES.get(fam)
        if rule is None:
            trace.step(f"{op}: no per-operation override")
            return Resolution(result, result)
        text, fn, _ = rule
        if fn == "check_no_bool":
            if any(f.name == "bool" for f in inputs):
                raise self.error(f"{op} does not accept Bool inputs, {fn} throws",
                                 dtypes=tuple(inputs), op=op, reason="operation",
                                 library_error=("TypeError", None),
                                 remedy="cast the Bool operand to I64 first, x.to(DType::I64)",
                                 suggest=False)
            trace.step(f"{op}: {fn} passes (no Bool input)")
            return Resolution(result, result)
        if fn == "add_dtype":
            if result.name == "bool":
                trace.step(f"add: {fn}: Bool + Bool gives I64 (PyTorch gives Bool)")
                return Resolution(FORMATS["int64"], FORMATS["int64"])
            trace.step(f"add: {fn} keeps {self.label(result)}")
            return Resolution(result, result)
        if fn == "div_dtype":
            if self.category(result) < 2:
                trace.step(f"div: {fn}: an integer or Bool result becomes F32")
                return Resolution(FORMATS["float32"], FORMATS["float32"])
            trace.step(f"div: {fn} keeps {self.label(result)}")
            return Resolution(result, result)
        trace.step(f"{op}: {fn}: {text}; computes in {self.label(result)}")
        return Resolution(FORMATS["bool"], result)

    one_casting_rule = "kael has one casting rule (check_result_fits); pass casting=None"

    def _can_cast(self, a, b, casting) -> bool:
        return self.category(a) <= self.category(b)

    def inplace(self, op, target, others, trace) -> Resolution:
        self_fmt = self.known(target.format, op)
        res = self.resolve([target, *others], op, trace)
        if self.category(res.result) > self.category(self_fmt):
            raise self.error(
                f"{op}_ result of dtype {res.result.name} cannot be stored in a tensor of dtype "
                f"{self_fmt.name}", dtypes=(res.result, self_fmt), op=op, reason="inplace",
                library_error=("TypeError", f"{op}_ result of dtype {res.result.name} cannot be "
                                            f"stored in a tensor of dtype {self_fmt.name}"),
                remedy=f"compute out of place, x.{op}(y), or cast self first, "
                       f"x.to(DType::{self.label(res.result)})")
        trace.step(f"check_result_fits: category {self.category(res.result)} is not higher "
                   f"than {self.category(self_fmt)}; the result is converted to "
                   f"{self_fmt.name} on store")
        return res


register("kael", KaelPolicy)
