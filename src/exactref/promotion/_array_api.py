"""The Python array API standard's type promotion (revision 2024.12).

Source: the array API standard, "Type Promotion Rules" (the promotion table over bool, the
signed and unsigned integers, float32/float64, complex64/complex128), "Mixing arrays with
Python scalars", and each element-wise function's allowed dtypes. Checked against revision
2024.12.

The standard specifies promotion only within a kind (plus real with complex floating); every
mixed-kind pair (an integer with a float, bool with a number) and uint64 with a signed integer
is *unspecified*: libraries may do anything. This policy raises PromotionError with
``reason="unspecified"`` for those, so code meant to be portable finds them. 0-d arrays promote
like any array. A Python scalar is converted to the array's dtype when its kind is compatible
(bool with bool arrays, int with integer and floating arrays, float with floating arrays,
complex with complex arrays, an int within the integer dtype's bounds); anything else is
unspecified.

Functions (:data:`OP_KINDS`): each takes the kinds its "Should have a ... data type" names;
maximum and minimum (2023.12) promote by the table and take real-valued dtypes; atan2 takes
real-valued floating-point dtypes and promotes them by the table (an integer array is
unspecified, as for sqrt); sqrt,
reciprocal (2024.12) take floating-point dtypes and keep them; abs and negative take numeric
dtypes and keep them, except that abs of a complex array is real of the same precision ("must
have a real-valued floating-point data type whose precision matches the precision of x");
``clip(x, min, max)`` (2023.12) returns x's dtype, takes real-valued dtypes and Python int or
float bounds, and leaves bounds of another kind than x (and ints out of x's range) unspecified.
The standard has no fmod, fmax, fmin, rsqrt, addcmul or addcdiv (they raise); fma is the
dtype of ``x * y + z``, a multiply and then an add (both specified).

>>> import exactref as er
>>> er.result_type("uint8[3]", "int8[3]", policy="array_api")
exactref.int16
>>> er.result_type("int8[3]", "float32[3]", policy="array_api")
Traceback (most recent call last):
...
exactref.promotion._errors.PromotionError: array_api: the standard leaves int8 with float32 unspecified (mixed-kind promotion). Fix: cast the int8 operand to float32 first, xp.astype(x, xp.float32).
"""

from __future__ import annotations

from .._formats import FORMATS, Format
from ._engine import Policy, Resolution, Trace, parse_table, register
from ._operands import Operand
from ._ops import OPS

__all__ = ["ArrayAPIPolicy", "PROMOTION_TABLE", "OP_KINDS"]

SOURCE = "Python array API standard, Type Promotion Rules"
CHECKED = "revision 2024.12"

#: The standard's promotion table; "-" marks a pair the standard does not specify.
PROMOTION_TABLE = """
      b    i1   i2   i4   i8   u1   u2   u4   u8   f4   f8   c8   c16
b     b    -    -    -    -    -    -    -    -    -    -    -    -
i1    -    i1   i2   i4   i8   i2   i4   i8   -    -    -    -    -
i2    -    i2   i2   i4   i8   i2   i4   i8   -    -    -    -    -
i4    -    i4   i4   i4   i8   i4   i4   i8   -    -    -    -    -
i8    -    i8   i8   i8   i8   i8   i8   i8   -    -    -    -    -
u1    -    i2   i2   i4   i8   u1   u2   u4   u8   -    -    -    -
u2    -    i4   i4   i4   i8   u2   u2   u4   u8   -    -    -    -
u4    -    i8   i8   i8   i8   u4   u4   u4   u8   -    -    -    -
u8    -    -    -    -    -    u8   u8   u8   u8   -    -    -    -
f4    -    -    -    -    -    -    -    -    -    f4   f8   c8   c16
f8    -    -    -    -    -    -    -    -    -    f8   f8   c16  c16
c8    -    -    -    -    -    -    -    -    -    c8   c16  c8   c16
c16   -    -    -    -    -    -    -    -    -    c16  c16  c16  c16
"""
_CODES = {"b": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
          "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "f4": "float32",
          "f8": "float64", "c8": "complex64", "c16": "complex128"}

#: The kinds each family's inputs should have ("Should have a ... data type").
OP_KINDS = {
    "add": ("int", "uint", "float", "complex"),
    "sub": ("int", "uint", "float", "complex"),
    "mul": ("int", "uint", "float", "complex"),
    "pow": ("int", "uint", "float", "complex"),
    "div": ("float", "complex"),
    "floor_divide": ("int", "uint", "float"),
    "remainder": ("int", "uint", "float"),
    "equality": ("bool", "int", "uint", "float", "complex"),
    "ordering": ("int", "uint", "float"),
    "bitwise": ("bool", "int", "uint"),
    "logical": ("bool",),
    "extremum": ("int", "uint", "float"),
    "float_function2": ("float",),  # atan2: "Should have a real-valued floating-point data type"
    "root": ("float", "complex"),
    "reciprocal": ("float", "complex"),
    "abs": ("int", "uint", "float", "complex"),
    "negative": ("int", "uint", "float", "complex"),
    "clamp": ("int", "uint", "float"),
}
#: Operations the standard (2024.12) has no function for, and what it has instead.
NOT_IN_STANDARD = {"fmod": "remainder (the sign of the divisor)",
                   "fmax": "maximum (which propagates NaN)",
                   "fmin": "minimum (which propagates NaN)", "rsqrt": "1 / sqrt(x)",
                   "addcmul": "x + t1 * t2", "addcdiv": "x + t1 / t2"}
#: The scalar kinds clip takes as bounds (``min: Optional[Union[int, float, array]]``).
CLIP_SCALARS = ("int", "float")
_KIND_WORDS = {("int", "uint", "float", "complex"): "a numeric", ("float", "complex"):
               "a floating-point", ("int", "uint", "float"): "a real-valued",
               ("float",): "a real-valued floating-point",
               ("bool", "int", "uint"): "an integer or boolean", ("bool",): "a boolean"}

#: Which Python scalar kinds may meet which array kinds.
SCALAR_KINDS = {"bool": ("bool",), "int": ("int", "uint", "float", "complex"),
                "float": ("float", "complex"), "complex": ("complex",)}


_TABLE = parse_table(PROMOTION_TABLE, _CODES, none="-")


class ArrayAPIPolicy(Policy):
    name = "array_api"
    title = "the Python array API standard's promotion table; the rest is unspecified"
    source = SOURCE
    checked = CHECKED
    formats = tuple(FORMATS[n] for n in _CODES.values())
    cast_spelling = "xp.astype({x}, {t})"
    # sum: the default integer, or the unsigned integer of its width; mean needs floats
    sum_integers = ("int64", "uint64")

    def cast_name(self, fmt):
        return f"xp.{fmt.name}"

    def library_name(self):
        return "array-api-strict"

    def promote(self, a: Format, b: Format, op=None) -> Format:
        out = _TABLE[a.name, b.name]
        if out is None:
            why = ("mixed-kind promotion" if a.kind != b.kind and {a.kind, b.kind} != {
                "int", "uint"} else "uint64 with a signed integer")
            raise self.error(f"the standard leaves {a.name} with {b.name} unspecified ({why})",
                             dtypes=(a, b), op=op, reason="unspecified")
        return FORMATS[out]

    def _scalar(self, o: Operand, array: Format, op, trace: Trace) -> None:
        if o.tier == "typed":
            raise self.error(f"the standard has no typed scalars ({o.label})", op=op,
                             reason="unspecified", suggest=False,
                             remedy="pass a 0-d array, xp.asarray(v, dtype=...)")
        if array.kind not in SCALAR_KINDS[o.pykind]:
            raise self.error(f"the standard leaves a Python {o.pykind} with {array.name} arrays"
                             f" unspecified", dtypes=(array, f"Python {o.pykind}"), op=op,
                             reason="unspecified", suggest=False,
                             remedy="convert the scalar to the array's kind, or cast the array")
        if o.pykind == "int" and array.kind in ("int", "uint") and o.value is not None and not (
                array.int_min <= o.value <= array.int_max):
            raise self.error(f"the standard leaves the Python int {o.label}, out of bounds for "
                             f"{array.name}, unspecified", dtypes=(array, "Python int"), op=op,
                             reason="unspecified", suggest=False,
                             remedy="use a wider array dtype")
        trace.step(f"the Python {o.pykind} {o.label} is converted to the array dtype "
                   f"{array.name}")

    def _resolve(self, operands, op, trace) -> Resolution:
        fam = OPS[op] if op is not None else None
        if op in NOT_IN_STANDARD:
            raise self.error(f"the standard has no {op}", op=op, reason="unsupported",
                             suggest=False, remedy=f"use {NOT_IN_STANDARD[op]}")
        if fam == "clamp":
            return self._clip(operands, op, trace)
        arrays = [(i, o) for i, o in enumerate(operands) if o.tier == "array"]
        if not arrays:
            raise self.error("the standard needs at least one array or dtype", op=op,
                             reason="unspecified", suggest=False,
                             remedy="make one operand an array")
        out = self.fold_pairs((self.known(o.format, op) for _i, o in arrays), op, trace,
                              lambda a, b, new: f"promotion table: {a.name} with {b.name} -> "
                                                f"{new.name}")
        for o in operands:
            if o.tier != "array":
                self._scalar(o, out, op, trace)
        if fam is not None:
            kinds = OP_KINDS[fam]
            for o in operands:
                k = o.format.kind if o.tier == "array" else None
                if k is not None and k not in kinds:
                    raise self.error(f"{op} is specified for {_KIND_WORDS[kinds]} data type, "
                                     f"not {o.format.name}", dtypes=(o.format,), op=op,
                                     reason="unspecified", suggest=False,
                                     remedy=f"cast to {_KIND_WORDS[kinds]} dtype first")
            if fam in ("equality", "ordering", "logical"):
                trace.step(f"{op}: outputs bool")
                return Resolution(FORMATS["bool"], out)
            if fam == "abs" and out.kind == "complex":
                real = out.component
                trace.step(f"abs of {out.name} has the real dtype of its precision, {real.name}")
                return Resolution(real, out)
        return Resolution(out, out)

    def _clip(self, operands, op, trace) -> Resolution:
        """clip(x, min, max): x's dtype; bounds of x's kind (arrays or Python int/float)."""
        x, bounds = operands[0], operands[1:]
        if x.tier != "array":
            raise self.error("clip's x must be an array", op=op, reason="unspecified",
                             suggest=False, remedy="make x an array")
        f = self.known(x.format, op)
        kinds = OP_KINDS["clamp"]
        if f.kind not in kinds:
            raise self.error(f"{op} is specified for {_KIND_WORDS[kinds]} data type, not "
                             f"{f.name}", dtypes=(f,), op=op, reason="unspecified",
                             suggest=False, remedy=f"cast to {_KIND_WORDS[kinds]} dtype first")
        group = {"int": "integer", "uint": "integer", "float": "float"}
        for b in bounds:
            if b.tier == "array":
                g = self.known(b.format, op)
                if g.kind not in kinds or group[g.kind] != group[f.kind]:
                    raise self.error(f"the standard leaves a {g.name} bound with a {f.name} x "
                                     f"unspecified (x and min/max of different kinds)",
                                     dtypes=(f, g), op=op, reason="unspecified", suggest=False,
                                     remedy=f"cast the bound to {f.name}")
                if g is not f:
                    trace.step(f"clip: the bound's {g.name} should be x's {f.name}; the "
                               f"result has x's dtype")
            elif b.tier == "typed":
                self._scalar(b, f, op, trace)  # raises: no typed scalars
            elif b.pykind not in CLIP_SCALARS or (b.pykind == "float" and f.kind != "float"):
                raise self.error(f"the standard leaves a Python {b.pykind} bound with a {f.name}"
                                 f" x unspecified", dtypes=(f, f"Python {b.pykind}"), op=op,
                                 reason="unspecified", suggest=False,
                                 remedy="pass a bound of x's kind")
            else:
                self._scalar(b, f, op, trace)
        trace.step(f"clip: the result has x's dtype, {f.name}")
        return Resolution(f, f)

    one_casting_rule = "the standard's can_cast has no casting argument"

    def _can_cast(self, a, b, casting) -> bool:
        """can_cast(from_, to): whether ``to`` is the promotion of the two."""
        return _TABLE[a.name, b.name] == b.name

    def inplace(self, op, target, others, trace) -> Resolution:
        self_fmt = self.known(target.format, op)
        res = self.resolve([target, *others], op, trace)
        if res.result is not self_fmt:
            raise self.error(f"an in-place {op} whose promoted dtype {res.result.name} differs "
                             f"from self's {self_fmt.name} is unspecified",
                             dtypes=(res.result, self_fmt), op=op, reason="unspecified",
                             suggest=False, remedy=f"compute out of place, or cast the other "
                                                   f"operand to {self_fmt.name}")
        return res


register("array_api", ArrayAPIPolicy)
