"""PyTorch's type promotion (the default policy), as torch 2.13 does it on every dtype it has.

Source: PyTorch's ``c10/core/ScalarType.cpp`` (``promoteTypes``, its lookup table,
``toComplexType``, ``canCast``) and ``aten/src/ATen/native/TypeProperties.cpp``
(``ResultTypeState``: ``update_result_type_state``, ``combine_categories``), with the op rules of
``BinaryOps.cpp``. Checked against torch 2.13.0 (CPU) by ``scripts/record_promotion_fixtures.py``;
the recorded cells are in ``fixtures/torch.json``.

The algorithm: operands fall into three tiers, tensors with dimensions, 0-d tensors and
"wrapped numbers" (Python scalars). Each tier is folded with :func:`promote` (the lookup table
plus the uint16/uint32/uint64 and float8 rules). A wrapped number's dtype comes from its kind:
bool -> bool, int -> int64 (uint64 for ``2**63 <= v < 2**64``; OverflowError beyond), float ->
the default float dtype, complex -> the default complex dtype. Then the tiers are combined by
category (``combine_categories``): a lower tier changes the result only when its category is
higher (bool < integer < floating < complex), and a complex lower tier keeps a floating higher
tier's precision (``toComplexType``: float16 -> complex32, bfloat16 and float32 -> complex64).

Per-operation rules (:data:`OP_RULES`): true division, atan2, sqrt, rsqrt and reciprocal of
an integer or bool result give the default float; sub and negative reject bool; comparisons and
logical ops output bool; abs of a complex tensor is real (``complex64 -> float32``);
floor_divide, remainder, fmod, atan2, clamp and the ordering comparisons are not defined on
complex, bitwise ops only on bool and integers (torch raises "not implemented" for these on every
device, so exactref raises too); maximum, minimum, fmax and fmin reject complex inputs before promoting;
clamp rejects a complex ``self`` and complex Python bounds; addcdiv rejects integer (or bool)
``tensor1`` and ``tensor2`` ("Integer division with addcdiv is no longer supported"). Unary,
ternary and in-place ops promote as the binary ones do: every tensor operand takes part, by
tier (``addcmul(input, t1, t2)`` and ``clamp(x, min, max)`` promote all three). ``fma`` has no
torch op: it is the dtype of ``x * y + z`` (``torch.mul``, then ``torch.add``), which can differ
from ``addcmul(z, x, y)``'s one promotion of the three (see :meth:`Policy.compose_fma`).
Cells where only the CPU kernel is missing (float8 arithmetic, uint16/32/64 add, bool pow, ...)
follow the promotion; :data:`CPU_KERNEL_GAPS` lists them and :func:`explain` mentions them.

>>> import exactref as er
>>> er.result_type("int32[3]", "float16[]"), er.result_type("float16[3]", 1j)
(exactref.float16, exactref.complex32)
>>> er.result_type("uint16[3]", "int8[3]")
Traceback (most recent call last):
...
exactref.promotion._errors.PromotionError: torch: cannot promote uint16 and int8. torch raises RuntimeError: Promotion for uint16, uint32, uint64 types is not supported, attempted to promote UInt16 and Char. Fix: cast the uint16 operand to int32 first, x.to(torch.int32).
"""

from __future__ import annotations

from .._formats import FORMATS, Format, dtype
from ._engine import Policy, Resolution, Trace, register
from ._errors import PromotionError
from ._operands import Operand
from ._ops import OPS

__all__ = ["TorchPolicy", "PROMOTE_LOOKUP", "C10_NAME", "OP_RULES", "CPU_KERNEL_GAPS"]

SOURCE = "PyTorch c10/core/ScalarType.cpp and ATen TypeProperties.cpp, measured"
CHECKED = "torch 2.13.0 (CPU)"

#: c10's names, as torch's messages print them.
C10_NAME = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e4m3fnuz": "Float8_e4m3fnuz",
    "float8_e5m2": "Float8_e5m2", "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}

#: c10's promoteTypes lookup table for the thirteen classic dtypes; it is symmetric, so only
#: the lower triangle is written (row and column may be swapped).
PROMOTE_LOOKUP = """
      b1   u1   i1   i2   i4   i8   f2   bf   f4   f8   c2   c4   c8
b1    b1
u1    u1   u1
i1    i1   i2   i1
i2    i2   i2   i2   i2
i4    i4   i4   i4   i4   i4
i8    i8   i8   i8   i8   i8   i8
f2    f2   f2   f2   f2   f2   f2   f2
bf    bf   bf   bf   bf   bf   bf   f4   bf
f4    f4   f4   f4   f4   f4   f4   f4   f4   f4
f8    f8   f8   f8   f8   f8   f8   f8   f8   f8   f8
c2    c2   c2   c2   c2   c2   c2   c2   c4   c4   c8   c2
c4    c4   c4   c4   c4   c4   c4   c4   c4   c4   c8   c4   c4
c8    c8   c8   c8   c8   c8   c8   c8   c8   c8   c8   c8   c8   c8
"""
_CODES = {"b1": "bool", "u1": "uint8", "i1": "int8", "i2": "int16", "i4": "int32",
          "i8": "int64", "f2": "float16", "bf": "bfloat16", "f4": "float32", "f8": "float64",
          "c2": "complex32", "c4": "complex64", "c8": "complex128"}

#: The dtypes promoted only with themselves or a floating dtype ("barebones unsigned").
BAREBONES_UNSIGNED = ("uint16", "uint32", "uint64")
FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")

#: c10's toComplexType for floating dtypes (float8 has none: "Unknown Complex ScalarType").
TO_COMPLEX = {"float16": "complex32", "bfloat16": "complex64", "float32": "complex64",
              "float64": "complex128"}

#: The default complex dtype for each default float dtype.
DEFAULT_COMPLEX = {"float16": "complex32", "bfloat16": "complex64", "float32": "complex64",
                   "float64": "complex128"}

#: What torch makes of a numpy scalar: the kind of Python scalar it reads it as (measured:
#: numpy bools and complex64 are read as Python floats, the latter dropping the imaginary part
#: with a ComplexWarning; ml_dtypes scalars are rejected).
NUMPY_SCALAR_AS = {"bool": "float", "int": "int", "uint": "int", "float": "float",
                   "complex64": "float", "complex128": "complex"}
_NUMPY_FLOATS_TORCH_READS = ("float16", "float32", "float64")

_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.")
_REAL = ("bool", "int", "uint", "float")

#: Per-operation rules: family -> dict of rules.
#:   output: the output dtype whatever the inputs; int_to_float: an integer or bool common
#:   dtype becomes the default float; no_bool: bool inputs are rejected with these messages
#:   (two bool operands, one); kinds: the kinds the op is defined on (checked on the common
#:   dtype), with torch's message naming the kernel ({op}: the op's name; kernel_2: the kernel
#:   with two operands); no_complex_inputs: any complex operand is rejected, before promotion;
#:   no_complex_self: a complex first operand is rejected; no_complex_scalar: a complex Python
#:   scalar with a floating self is rejected; to_real: complex becomes its component format; no_integer_division:
#:   the 2nd and 3rd operands must not both be integral; no_complex_inplace: the in-place form
#:   rejects complex self; scalar_kinds_error: the error of the Scalar overload (Python
#:   bounds) where the common dtype is outside ``kinds``.
OP_RULES = {
    "add": {},
    "mul": {},
    "pow": {},
    "sub": {"no_bool": (
        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
        "`logical_xor()` operator instead.",
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
        "to invert a mask, use the `~` or `logical_not()` operator instead.")},
    "div": {"int_to_float": True},
    "floor_divide": {"kinds": _REAL, "kernel": "div_floor_cpu"},
    "remainder": {"kinds": _REAL, "kernel": "remainder_cpu"},
    "fmod": {"kinds": _REAL, "kernel": "fmod_cpu"},
    "equality": {"output": "bool"},
    "ordering": {"output": "bool", "kinds": _REAL, "kernel": "{op}_cpu"},
    "bitwise": {"kinds": ("bool", "int", "uint"), "kernel": "{op}_cpu"},
    "logical": {"output": "bool"},
    "extremum": {"no_complex_inputs": "{op} not implemented for complex tensors."},
    "fextremum": {"no_complex_inputs": "{op} not implemented for complex tensors."},
    # atan2: as true division (an integer or bool common dtype computes in the default float),
    # on real dtypes only ("atan2_cpu" not implemented for 'ComplexFloat', on every device)
    "float_function2": {"int_to_float": True, "kinds": _REAL, "kernel": "{op}_cpu"},
    "root": {"int_to_float": True},
    "reciprocal": {"int_to_float": True},
    "abs": {"to_real": True, "no_complex_inplace": "In-place abs is not supported for complex "
                                                   "tensors."},
    "negative": {"no_bool": (_NEGATION, _NEGATION)},
    "addcmul": {},
    "addcdiv": {"no_integer_division": (
        "Integer division with addcdiv is no longer supported, and in a future release addcdiv "
        "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
        "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
        "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
        "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
        "tensor2), for all dtypes.")},
    "clamp": {"no_complex_self": "clamp is not supported for complex types",
              "no_complex_scalar": "value cannot be converted to type double without overflow",
              "kinds": _REAL, "kernel": "clamp_cpu", "kernel_2": "maximum_cpu",
              "scalar_kinds_error": ("NotImplementedError",
                                     "clamp is not supported for complex types")},
}

#: CPU kernels torch 2.13 lacks (NotImplementedError), by family: the promotion is still
#: defined (the same call on the meta device gives the dtype), only the CPU cannot compute it.
CPU_KERNEL_GAPS = {
    "add": FLOAT8 + BAREBONES_UNSIGNED,
    "sub": FLOAT8 + BAREBONES_UNSIGNED,
    "mul": FLOAT8,
    "div": FLOAT8 + ("complex32",),
    "floor_divide": FLOAT8 + BAREBONES_UNSIGNED + ("bool",),
    "remainder": FLOAT8 + BAREBONES_UNSIGNED + ("bool",),
    "pow": FLOAT8 + BAREBONES_UNSIGNED + ("bool", "complex32"),
    "ordering": FLOAT8 + BAREBONES_UNSIGNED,
    "bitwise": (),
    "logical": FLOAT8 + BAREBONES_UNSIGNED + ("complex32",),
    "equality": (),
    "fmod": FLOAT8 + BAREBONES_UNSIGNED + ("bool",),
    "extremum": FLOAT8 + BAREBONES_UNSIGNED,
    "fextremum": FLOAT8 + BAREBONES_UNSIGNED,
    "float_function2": FLOAT8,
    "root": FLOAT8 + ("complex32",),
    "reciprocal": FLOAT8 + ("complex32",),
    "abs": ("float8_e8m0fnu", "bool") + BAREBONES_UNSIGNED,
    "negative": FLOAT8 + BAREBONES_UNSIGNED,
    "addcmul": FLOAT8 + BAREBONES_UNSIGNED + ("bool",),
    "addcdiv": FLOAT8 + BAREBONES_UNSIGNED + ("complex32",),
    "clamp": FLOAT8 + BAREBONES_UNSIGNED + ("bool",),
}

#: Where the meta device (torch's Python reference implementations) promotes differently from
#: the CPU's TensorIterator: (family, dtype the CPU computes in) -> the meta device's dtype.
#: The policy follows TensorIterator (eager CPU and CUDA).
META_DEVICE_DIFFERS = {("pow", "bool"): "int64"}

TORCH_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                "float16", "bfloat16", "float32", "float64", "complex32", "complex64",
                "complex128") + FLOAT8


def _parse_lookup(text: str) -> dict:
    """The lower triangle ``text`` (row ``i`` holds columns ``0..i``), read both ways."""
    lines = [ln.split() for ln in text.strip().splitlines()]
    cols = lines[0]
    out = {}
    for i, row in enumerate(lines[1:]):
        for c, v in zip(cols[:i + 1], row[1:], strict=True):
            out[_CODES[row[0]], _CODES[c]] = out[_CODES[c], _CODES[row[0]]] = _CODES[v]
    return out


_LOOKUP = _parse_lookup(PROMOTE_LOOKUP)
_CATEGORY = {"bool": 0, "uint": 1, "int": 1, "float": 2, "complex": 3}


class TorchPolicy(Policy):
    name = "torch"
    title = "PyTorch: dimensioned tensors, then 0-d tensors, then Python scalars, by category"
    source = SOURCE
    checked = CHECKED
    formats = tuple(FORMATS[n] for n in TORCH_DTYPES)
    cast_spelling = "{x}.to({t})"

    def __init__(self, default_dtype="float32"):
        fmt = dtype(default_dtype)
        if fmt.name not in DEFAULT_COMPLEX:
            raise ValueError(f"torch's default dtype must be a floating dtype (float16, "
                             f"bfloat16, float32, float64), not {fmt.name}")
        self.default_float = fmt
        self.default_complex = FORMATS[DEFAULT_COMPLEX[fmt.name]]

    def cast_name(self, fmt: Format) -> str:
        return f"torch.{fmt.torch_name}"

    def meta_differs(self, cell, dtype_name):
        """The meta device's dtype where it is known to differ (for fixture comparison)."""
        fam = OPS.get(cell.op.rstrip("_"))
        return META_DEVICE_DIFFERS.get((fam, dtype_name))

    # -- c10 ---------------------------------------------------------------------------------
    def promote(self, a: Format, b: Format, op=None) -> Format:
        """c10::promoteTypes."""
        if a is b:
            return a
        if a.name in FLOAT8 or b.name in FLOAT8:
            raise self._promote_error("Promotion for Float8 Types is not supported", a, b, op)
        if a.name in BAREBONES_UNSIGNED or b.name in BAREBONES_UNSIGNED:
            if a.kind == "float":
                return a
            if b.kind == "float":
                return b
            raise self._promote_error(
                "Promotion for uint16, uint32, uint64 types is not supported", a, b, op)
        return FORMATS[_LOOKUP[a.name, b.name]]

    def _promote_error(self, what, a, b, op):
        msg = f"{what}, attempted to promote {C10_NAME[a.name]} and {C10_NAME[b.name]}"
        return self.error(f"cannot promote {a.name} and {b.name}", dtypes=(a, b), op=op,
                          library_error=("RuntimeError", msg))

    def to_complex(self, f: Format, op=None) -> Format:
        if f.kind == "complex":
            return f
        if f.name not in TO_COMPLEX:
            raise self.error(f"{f.name} has no complex counterpart", dtypes=(f,), op=op,
                             library_error=("RuntimeError",
                                            f"Unknown Complex ScalarType for {C10_NAME[f.name]}"))
        return FORMATS[TO_COMPLEX[f.name]]

    def combine(self, higher: Format | None, lower: Format | None, op, trace: Trace,
                names=("higher", "lower")) -> Format | None:
        """ATen's combine_categories(higher, lower)."""
        if higher is None:
            return lower
        if lower is None:
            return higher
        hn, ln = names
        if higher.kind == "complex":
            trace.step(f"combine: the {hn} tier is complex, {higher.name} stays")
            return higher
        if lower.kind == "complex":
            if higher.kind == "float":
                out = self.to_complex(higher, op)
                trace.step(f"combine: the {ln} tier is complex; the {hn} tier's precision "
                           f"stays: toComplexType({higher.name}) = {out.name}")
                return out
            trace.step(f"combine: the {ln} tier is complex and the {hn} tier is not floating, "
                       f"{lower.name} wins")
            return lower
        if higher.kind == "float":
            trace.step(f"combine: the {hn} tier is floating, {higher.name} stays")
            return higher
        if higher.kind == "bool" or lower.kind == "float":
            out = self.promote(higher, lower, op)
            trace.step(f"combine: {'the ' + hn + ' tier is bool' if higher.kind == 'bool' else 'the ' + ln + ' tier is floating'}, "  # noqa: E501
                       f"so promote_types({higher.name}, {lower.name}) = {out.name}")
            return out
        trace.step(f"combine: same category, the {hn} tier wins: {higher.name}")
        return higher

    # -- operands -----------------------------------------------------------------------------
    def _wrapped(self, i: int, o: Operand, op, trace: Trace) -> tuple[Format, str]:
        """The dtype of a wrapped number, and its kind as torch reads it."""
        kind, value = o.pykind, o.value
        if o.tier == "typed":
            if o.origin == "numpy scalar":
                key = o.format.name if o.format.kind == "complex" else o.format.kind
                if o.format.kind == "float" and o.format.name not in _NUMPY_FLOATS_TORCH_READS \
                        or key not in NUMPY_SCALAR_AS:
                    raise self.error(
                        f"torch does not accept a numpy {o.format.name} scalar", op=op,
                        dtypes=(o.format,), reason="unsupported", suggest=False,
                        library_error=("TypeError", f"add(): argument 'other' (position 2) must "
                                                    f"be Tensor, not ml_dtypes.{o.format.name}"),
                        remedy="pass a Python float, or a tensor: torch.tensor(v, dtype=...)")
                kind = NUMPY_SCALAR_AS[key]
                if kind != o.format.kind:
                    trace.note(i, f"torch reads a numpy {o.format.name} scalar as a Python "
                                  f"{kind}" + (" (dropping the imaginary part)"
                                               if o.format.kind == "complex" else ""))
            else:
                # Note: an er.Scalar is a c10::Scalar: torch keeps only its kind.
                kind = {"uint": "int"}.get(o.format.kind, o.format.kind)
                trace.note(i, f"a c10::Scalar keeps only the kind ({kind}), not {o.format.name}")
            value = o.value
        if kind == "bool":
            f = FORMATS["bool"]
        elif kind == "int":
            if value is None or -(2**63) <= value < 2**63:
                f = FORMATS["int64"]
            elif 2**63 <= value < 2**64:
                f = FORMATS["uint64"]
                trace.note(i, "a Python int in [2**63, 2**64) is a uint64 wrapped number")
            else:
                msg = ("can't convert negative int to unsigned" if value < 0
                       else "int too big to convert")
                raise self.error(f"the Python int {o.label} fits neither int64 nor uint64",
                                 dtypes=("Python int",), op=op, reason="value", overflow=True,
                                 library_error=("OverflowError", msg),
                                 remedy="use a float, or a value in [-2**63, 2**64)",
                                 suggest=False)
        elif kind == "float":
            f = self.default_float
        else:
            f = self.default_complex
        if i not in getattr(trace, "operand_notes", {}):
            default = {"float": " (the default dtype)", "complex": " (the default complex "
                       "dtype)"}.get(kind, "")
            trace.note(i, f"tier 3: wrapped number, {f.name}{default}")
        return f, kind

    def tiers(self, operands, op, trace: Trace):
        dims, zeros, wrapped, inputs = [], [], [], []
        for i, o in enumerate(operands):
            if o.tier == "array":
                f = self.known(o.format, op)
                (zeros if o.zero_dim else dims).append(f)
                trace.note(i, "tier 2: 0-d tensors" if o.zero_dim else
                           "tier 1: tensors with dimensions")
            else:
                f, _ = self._wrapped(i, o, op, trace)
                wrapped.append(f)
            inputs.append(f)
        return dims, zeros, wrapped, inputs

    def fold(self, group: list, what: str, op, trace: Trace) -> Format | None:
        return self.fold_pairs(group, op, trace, lambda a, b, new: (
            f"{what}: promote_types({a.name}, {b.name}) = {new.name}"))

    # -- the policy -------------------------------------------------------------------------
    def _resolve(self, operands, op, trace) -> Resolution:
        fam = OPS[op] if op is not None else None
        rules = OP_RULES.get(fam, {})
        self.check_inputs(operands, op, rules)
        dims, zeros, wrapped, inputs = self.tiers(operands, op, trace)
        if "no_bool" in rules:
            nbool = sum(f.kind == "bool" for f in inputs)
            if nbool:
                msg = rules["no_bool"][0 if nbool == len(inputs) == 2 else 1]
                raise self.error(f"{op} does not accept bool operands", dtypes=tuple(inputs),
                                 op=op, reason="operation", library_error=("RuntimeError", msg),
                                 remedy="use logical_xor or ~ on bool masks, or cast the bool "
                                        "operand to an integer dtype, x.to(torch.uint8)",
                                 suggest=False)
        if "no_integer_division" in rules and len(inputs) == 3 and all(
                f.kind in ("bool", "int", "uint") for f in inputs[1:]):
            raise self.error(f"{op} does not divide integer tensors ({inputs[1].name} by "
                             f"{inputs[2].name})", dtypes=tuple(inputs[1:]), op=op,
                             reason="operation", suggest=False,
                             library_error=("RuntimeError", rules["no_integer_division"]),
                             remedy="cast tensor1 or tensor2 to a floating dtype, "
                                    "t1.to(torch.float32)")
        d = self.fold(dims, "tensors with dimensions", op, trace)
        z = self.fold(zeros, "0-d tensors", op, trace)
        w = self.fold(wrapped, "Python scalars", op, trace)
        summary = ", ".join(f"{n} {f.name}" for n, f in (("dimensioned", d), ("0-d", z),
                                                          ("scalars", w)) if f is not None)
        trace.step(f"tiers: {summary}")
        zw = self.combine(z, w, op, trace, ("0-d", "scalar"))
        common = self.combine(d, zw, op, trace, ("dimensioned", "0-d/scalar"))
        return self.apply_op(op, fam, rules, common, trace, operands)

    def check_inputs(self, operands, op, rules) -> None:
        """The rules torch checks on the operands themselves, before it promotes."""
        fmts = [o.format for o in operands if o.tier == "array"]
        complex_in = [f for f in fmts if f.kind == "complex"]
        if "no_complex_inputs" in rules and complex_in:
            raise self.error(f"{op} does not accept complex operands", dtypes=tuple(fmts),
                             op=op, reason="operation", suggest=False,
                             library_error=("RuntimeError",
                                            rules["no_complex_inputs"].format(op=op)),
                             remedy="compare real parts or magnitudes, x.real or x.abs()")
        if "no_complex_self" in rules and operands[0].tier == "array" and \
                operands[0].format.kind == "complex":
            raise self.error(f"{op} does not accept a complex self ({operands[0].format.name})",
                             dtypes=(operands[0].format,), op=op, reason="operation",
                             suggest=False, remedy="clamp the real part, x.real",
                             library_error=("NotImplementedError", rules["no_complex_self"]))
        if "no_complex_scalar" in rules and operands[0].tier == "array" and \
                operands[0].format.kind == "float" and any(
                o.tier == "python" and o.pykind == "complex" for o in operands):
            raise self.error(f"{op} does not accept a complex Python scalar",
                             dtypes=("Python complex",), op=op, reason="operation",
                             suggest=False, remedy="pass real bounds",
                             library_error=("RuntimeError", rules["no_complex_scalar"]))

    def apply_op(self, op, fam, rules, common: Format, trace: Trace, operands=()) -> Resolution:
        if fam is None:
            return Resolution(common, common)
        compute = common
        if rules.get("int_to_float") and common.kind in ("bool", "int", "uint"):
            compute = self.default_float
            what = "true division" if fam == "div" else op
            trace.step(f"{op}: {what} of {common.name} computes in the default float "
                       f"dtype, {compute.name}")
        if "kinds" in rules and compute.kind not in rules["kinds"]:
            kernel = rules.get("kernel_2", rules["kernel"]) if len(operands) == 2 \
                else rules["kernel"]
            error = ("NotImplementedError", f"\"{kernel.format(op=op)}\" not implemented for "
                                            f"'{C10_NAME[compute.name]}'")
            if "scalar_kinds_error" in rules and any(o.tier != "array" for o in operands):
                error = rules["scalar_kinds_error"]
            raise self.error(f"{op} is not defined for {compute.name}", dtypes=(compute,), op=op,
                             reason="operation", library_error=error,
                             remedy=f"cast to a dtype {op} supports ("
                                    f"{', '.join(rules['kinds'])})", suggest=False)
        gaps = CPU_KERNEL_GAPS.get(fam, ())
        if compute.name in gaps:
            trace.step(f"note: torch {CHECKED.split()[1]} has no CPU kernel for {op} on "
                       f"{compute.name} (NotImplementedError); the dtype is what its promotion "
                       f"gives, and other devices may compute it")
        out = FORMATS[rules["output"]] if "output" in rules else compute
        if rules.get("to_real") and compute.kind == "complex":
            out = compute.component
        if out is not compute:
            trace.step(f"{op}: computes in {compute.name}, outputs {out.name}")
        return Resolution(out, compute)

    one_casting_rule = "torch has one casting rule (torch.can_cast); pass casting=None"

    def _can_cast(self, a, b, casting) -> bool:
        """c10::canCast: no complex to real, no floating to integral, nothing to bool."""
        if a.kind == "complex" and b.kind != "complex":
            return False
        if a.kind in ("float", "complex") and b.kind in ("bool", "int", "uint"):
            return False
        return not (a.kind != "bool" and b.kind == "bool")

    def inplace(self, op, target, others, trace) -> Resolution:
        self_fmt = self.known(target.format, op)
        rule = OP_RULES.get(OPS[op], {}).get("no_complex_inplace")
        if rule and self_fmt.kind == "complex":
            raise self.error(f"{op}_ of a complex tensor would change its dtype to "
                             f"{self_fmt.component.name}", dtypes=(self_fmt,), op=op,
                             reason="inplace", library_error=("RuntimeError", rule),
                             remedy=f"compute out of place, torch.{op}(x)", suggest=False)
        try:
            res = self.resolve([target, *others], op, trace)
        except PromotionError as exc:
            # TensorIterator checks that the common dtype can be cast to self before the
            # kernel's dtype dispatch: a real self with a complex other fails the cast first
            # (atan2_ of float32 with complex64: "result type ComplexFloat can't be cast ...")
            compute = exc.dtypes[0] if exc.dtypes else None
            if exc.reason == "operation" and exc.library_error is not None and \
                    exc.library_error[0] == "NotImplementedError" and \
                    isinstance(compute, Format) and not self.can_cast(compute, self_fmt):
                raise self._inplace_error(op, compute, self_fmt, others) from None
            raise
        if not self.can_cast(res.compute, self_fmt):
            raise self._inplace_error(op, res.compute, self_fmt, others)
        if res.compute is not self_fmt:
            trace.step(f"{op}_: the {res.compute.name} result is cast to self's "
                       f"{self_fmt.name} on store")
        return res


    def _inplace_error(self, op, compute: Format, self_fmt: Format, others) -> PromotionError:
        msg = (f"result type {C10_NAME[compute.name]} can't be cast to the desired output "
               f"type {C10_NAME[self_fmt.name]}")
        return self.error(f"{op}_ computes in {compute.name}, which cannot be stored into "
                          f"self's {self_fmt.name}", dtypes=(compute, self_fmt), op=op,
                          reason="inplace", library_error=("RuntimeError", msg),
                          remedy=f"compute out of place, {_call(op, 1 + len(others))}, or "
                                 f"cast self first, x = x.to({self.cast_name(compute)})",
                          suggest=False)


#: How ops without a torch function read in torch.
_SPELLED = {"fma": "x * y + z"}


def _call(op: str, n: int) -> str:
    """How the out-of-place call reads in torch."""
    return _SPELLED.get(op) or f"torch.{op}({', '.join('xyz'[:n] if n <= 3 else 'xyz')})"


register("torch", TorchPolicy)
