"""Operands of every op: how an input is read once, promoted, converted and handed to the engine.

The elementwise ops, the row kernels (linalg), quantize, the equivalents and
:func:`exactref.result_type` read their inputs through this module: :func:`prepare` classifies an
input once (an er.Array or a Result's rounded array, a 0-d array, a Python scalar, a typed numpy
scalar), :func:`output_format` asks the promotion policy for the format, :func:`cast_operand` and
:func:`convert_scalars` bring the operands into it, and :func:`engine_parts` /
:func:`scalar_parts` give the exact engine its parts.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from . import _contract  # noqa: F401  (installs the contract layer: er.<op> takes contract=)
from ._array import Array, asarray, assemble, source
from ._exact import (
    ComplexValue,
    ExactPart,
    FloatValue,
    Rounding,
    integer_overflow,
    resolve_overflow,
    resolve_rounding,
)
from ._formats import FORMATS, Format, holds
from ._formats import dtype as resolve_dtype
from ._result import Result

__all__ = ["Opnd", "broadcast_shapes", "cast_operand", "check_number", "compute_format",
           "convert_scalars", "engine_parts", "output_format", "prepare", "resolve_mode_rule",
           "scalar_parts", "to_array"]

#: PyTorch's computation dtype for an output format (``at::opmath_type``): float32 for the
#: narrow floats, complex64 for complex32, otherwise the format itself.
_OPMATH = {"float16": "float32", "bfloat16": "float32", "complex32": "complex64",
           "bcomplex32": "complex64"}


def _article(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def compute_format(out: Format, compute=None) -> Format:
    """The compute (accumulator) format for ``out``: ``compute`` if given, else PyTorch's."""
    if compute is not None:
        c = resolve_dtype(compute)
        if c.kind != out.kind:
            raise ValueError(
                f"compute format {c.name} is not of the output's kind ({out.kind}, {out.name}); "
                f"name {_article(out.kind)} format")
        return c
    if out.kind == "float" and out.bits <= 8:
        return FORMATS["float32"]
    return FORMATS[_OPMATH.get(out.name, out.name)]


@dataclass
class Opnd:
    """One operand of an op, prepared: an array (er.Array) or an exact scalar, and the Result it
    came from (for chaining).

    :attr:`view` is promotion's classification of it (a :class:`exactref.promotion.Operand`:
    array with dimensions, 0-d array, Python scalar or typed scalar, and its format), made once
    by :func:`exactref.promotion.operand`, the function :func:`exactref.result_type` classifies
    its operands with: an op and ``result_type`` of the same operands see the same operands.
    """

    kind: str  # "array" or "scalar"
    array: Array | None = None
    value: object = None  # FloatValue or ComplexValue for scalars
    result: Result | None = None
    label: str = ""
    parts: list = field(default_factory=list)  # engine Operands per part (None: absent)
    typed: object = None  # a numpy scalar as given: the policy decides how it promotes
    _view: object = field(default=None, repr=False, compare=False)

    @property
    def shape(self):
        return self.array.shape if self.kind == "array" else ()

    @property
    def is_complex(self) -> bool:
        if self.kind == "array":
            return self.array.dtype.kind == "complex"
        return isinstance(self.value, ComplexValue)

    @property
    def view(self):
        """Promotion's view of the operand (:class:`exactref.promotion.Operand`), made once."""
        if self._view is None:
            from .promotion import operand

            self._view = operand(self._stand_in())
        return self._view

    @property
    def tier(self) -> str:
        """``"array"``, ``"python"`` (a weak Python scalar) or ``"typed"`` (a numpy scalar)."""
        return self.view.tier

    def promotion_operand(self):
        """What the promotion engine sees (:attr:`view`)."""
        return self.view

    def _stand_in(self):
        """What :func:`exactref.promotion.operand` classifies: the array, a numpy scalar as
        given (a typed scalar: PyTorch takes it as a Python scalar, numpy 2 by its dtype), or a
        weak Python scalar of the value's kind."""
        if self.typed is not None:
            return self.typed
        if self.kind == "array":
            return self.array
        v = self.value
        if isinstance(v, ComplexValue):
            return complex(v)
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            # Note: an int beyond int64/uint64 is taken exactly here, where PyTorch raises; its
            # kind, not its value, is what the promotion needs
            return v if -(2**63) <= v < 2**64 else (2**63 - 1 if v > 0 else -(2**63))
        return 0.5  # a weak Python float: its value never matters to torch's rules


def prepare(x, name: str) -> Opnd:
    """An :class:`Opnd` from anything the ops accept."""
    if isinstance(x, Result):
        return Opnd("array", array=x.rounded, result=x, label=name)
    if hasattr(x, "results") and hasattr(x, "rounded"):  # any_of
        raise TypeError(
            f"{name} is an any_of(...) of several results; chain one Result at a time")
    if isinstance(x, bool):
        return Opnd("scalar", value=x, label=name)
    if isinstance(x, numbers.Integral) and not isinstance(x, np.generic):
        return Opnd("scalar", value=int(x), label=name)
    if isinstance(x, (float, Fraction, FloatValue)) and not isinstance(x, np.generic):
        return Opnd("scalar", value=FloatValue(x), label=name)
    if isinstance(x, (complex, ComplexValue)) and not isinstance(x, np.generic):
        return Opnd("scalar", value=ComplexValue(x), label=name)
    if isinstance(x, Array):
        return Opnd("array", array=x, label=name)
    data, fmt = source(x)
    if fmt is None:  # nested Python lists: numpy's choice of format, which holds them exactly
        try:
            return Opnd("array", array=asarray(x), label=name)
        except OverflowError:
            raise OverflowError(
                f"{name} is a list of Python ints that int64 (the format a list of ints is read "
                f"in, as numpy reads it) cannot hold; pass it as an array of a format that "
                f"does (er.asarray({name}, 'float64') rounds once), or each value as a Python "
                f"int scalar, which is taken exactly") from None
    typed = x if isinstance(x, np.generic) else None
    o = Opnd("array", array=Array(np.asarray(data), fmt), label=name, typed=typed)
    if typed is None and hasattr(x, "dtype") and hasattr(x, "shape"):
        o._view = _array_view(x, o.array)
    return o


def _array_view(x, array: Array):
    """Promotion's view of a library's array ``x`` (its library kept), read as ``array``."""
    from .promotion import operand

    v = operand(x)
    if v.format is not array.dtype or v.ndim != array.ndim:
        return operand(array)
    # Note: a weakly typed jax array is an array of its dtype to the ops, as its er.Array is
    return replace(v, weak=False) if v.weak else v


def check_number(name: str, value, op: str = "", *, complex_ok: bool = True):
    """``value`` if it is a number a scalar parameter (alpha, beta, value, eps, ...) may be:
    a Python bool, int, float or complex, a Fraction, a numpy number or 0-d array, a FloatValue
    or ComplexValue; otherwise a ValueError naming the parameter, what was found and what to
    pass."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    ok = (FloatValue, ComplexValue, numbers.Number, np.number, np.bool_) if complex_ok else (
        FloatValue, numbers.Real, np.integer, np.floating, np.bool_)
    if not isinstance(value, ok) or isinstance(value, (np.timedelta64, np.datetime64)):
        where = f"{op}: " if op else ""
        kinds = "a Python int, float or complex, a Fraction, a numpy scalar, a FloatValue or " \
            "ComplexValue" if complex_ok else "a real number (a Python int or float, a " \
            "Fraction, a numpy scalar or a FloatValue)"
        raise ValueError(f"{where}{name}={value!r} is not a number: expected {kinds}; found "
                         f"{type(value).__name__}. Pass {name} as a number, e.g. {name}=2.0")
    return value


def convert_scalars(ops, out: Format, overflow, policy="torch", *,
                    checked=None) -> list:
    """The operands, a Python int outside the integer output format converted as the policy
    converts it, for the ops that convert their operands into the output format (arithmetic:
    the comparisons compare the int exactly, under every policy).

    With ``overflow`` 'wrap' or 'saturate' the int is taken exactly and the rule applies to the
    result. Otherwise, under the torch policy, an int in ``[-2**63, 2**64)`` is wrapped into the
    format (modulo ``2**bits``), as PyTorch 2.13 converts a Python scalar (``torch.add(uint8,
    300)`` is ``1 + 44``); a larger one raises, as PyTorch raises. ``checked``: PyTorch's
    checked conversion (c10's ``checked_convert``) takes only ``[int_min, int_max]``, and
    ``[-int_max, int_max]`` for an unsigned format, and raises beyond; the negatives then wrap
    (``"wrap"``: clamp's bounds) or are left to the op (``"exact"``: pow, which refuses a
    negative exponent first). The other policies raise, as numpy and jax do.
    """
    if not out.is_integer or out.kind == "bool" or overflow in ("wrap", "saturate"):
        return list(ops)
    res = []
    for o in ops:
        v = None if o is None or o.kind != "scalar" else o.value
        if not isinstance(v, int) or isinstance(v, bool) or out.int_min <= v <= out.int_max:
            res.append(o)
            continue
        where = (f"{o.label} = {v} is outside {out.name}'s range [{out.int_min}, "
                 f"{out.int_max}]")
        remedy = ("pass overflow='wrap' or 'saturate' to take it exactly and apply the rule to "
                  "the result, or use a wider format")
        if policy == "torch" and checked == "exact" and v < 0:
            res.append(o)  # the op decides (pow: PyTorch refuses negative integer powers)
            continue
        lo = out.int_min if out.kind == "int" else -out.int_max
        if policy == "torch" and checked and not lo <= v <= out.int_max:
            raise OverflowError(f"{where}: PyTorch raises (value cannot be converted to type "
                                f"{out.name} without overflow; it takes [{lo}, {out.int_max}] "
                                f"here); {remedy}")
        if policy == "torch" and -(2**63) <= v < 2**64:
            w = integer_overflow(v, out, "wrap")
            res.append(Opnd("scalar", value=w, result=o.result, label=o.label))
        elif policy == "torch":
            raise OverflowError(f"{where} and fits neither int64 nor uint64: PyTorch raises "
                                f"(int too big to convert); {remedy}")
        else:
            raise OverflowError(f"{where}, the result format; the {policy} policy does not "
                                f"convert it (numpy and jax raise OverflowError); {remedy}")
    return res


def broadcast_shapes(ops) -> tuple:
    shapes = [o.shape for o in ops if o.kind == "array"]
    try:
        return np.broadcast_shapes(*shapes) if shapes else ()
    except ValueError:
        names = " and ".join(f"{o.label} of shape {o.shape}" for o in ops if o.kind == "array")
        raise ValueError(
            f"{names} do not broadcast (NumPy rules: trailing dimensions must match or be 1); "
            f"reshape one of them") from None


def output_format(ops, op: str, dtype=None, policy="torch") -> tuple[Format, Format]:
    """``(promoted, out)``: the torch policy's format for the operands, and the output format
    (``dtype`` if given, which must be of the promoted format's kind)."""
    from .promotion import PromotionError, result_type

    try:
        promoted = result_type(*[o.promotion_operand() for o in ops], policy=policy, op=op)
    except PromotionError as exc:
        # Note: formats the policy does not know (float8_e3m4, int4, ...) still combine with
        # themselves: operands of one format, and no scalar, need no promotion.
        formats = {o.array.dtype for o in ops if o.kind == "array"}
        if exc.reason == "operation" and any(f.kind == "bool" for f in formats):
            raise  # the library refuses the op on bool (torch's and numpy's subtract)
        if len(formats) == 1 and all(o.kind == "array" for o in ops):
            promoted = formats.pop()
        else:
            # Note: with an explicit dtype= they combine in the narrowest format that holds
            # every operand exactly (the result is rounded once into dtype either way)
            promoted = _holding(formats, resolve_dtype(dtype)) if dtype is not None else None
            if promoted is None:
                raise
    if dtype is None:
        return promoted, promoted
    out = resolve_dtype(dtype)
    kinds = {"bool": "bool", "int": "integer", "uint": "integer", "float": "float",
             "complex": "complex"}
    if kinds[out.kind] != kinds[promoted.kind]:
        raise ValueError(
            f"dtype={out.name} is not of the operands' kind: they promote to {promoted.name} "
            f"({kinds[promoted.kind]}); name {_article(kinds[promoted.kind])} format, or convert "
            f"the operands first")
    return promoted, out


def _holding(formats, out: Format) -> Format | None:
    """The first of the operands' formats, ``out``, float32, float64 and complex128 that holds
    every format in ``formats`` and is of ``out``'s kind, or None."""
    cands = sorted(formats, key=lambda f: f.bits) + [out] + [
        FORMATS[n] for n in ("float32", "float64", "complex128")]
    for c in cands:
        if c.kind == out.kind and all(holds(c, f) for f in formats):
            return c
    return None


def cast_operand(o: Opnd, promoted: Format) -> Opnd:
    """An array operand the promoted format cannot hold is first rounded once (to nearest
    even) into it, as PyTorch casts it."""
    if o.kind != "array" or holds(promoted, o.array.dtype):
        return o
    if o.array.dtype.kind == "complex" and promoted.kind != "complex":
        return o
    cast = asarray(o.array, promoted, rounding=Rounding.NEAREST_EVEN, overflow="ieee"
                   if promoted.component.kind == "float" else "wrap")
    return Opnd("array", array=cast, result=o.result, label=o.label)


# ------------------------------------------------------------------------ engine operands
def engine_parts(array: Array):
    """Engine Operands for the parts of an array: ``[re]`` or ``[re, im]``."""
    fmt = array.dtype
    data = array.numpy()
    narrow = fmt.component.kind == "float" and fmt.component.emax < 450 and \
        fmt.component.emin - fmt.component.precision > -450
    if fmt.kind == "complex":
        wide = data.astype(np.complex128)
        return [ExactPart.from_float64(wide.real.copy(), in_range=narrow),
                ExactPart.from_float64(wide.imag.copy(), in_range=narrow)]
    if fmt.kind == "float":
        with np.errstate(invalid="ignore"):  # a signalling NaN widens quietly
            return [ExactPart.from_float64(data.astype(np.float64), in_range=narrow)]
    return [ExactPart.from_integers(data if fmt.bits >= 8 else data.astype(np.int64))]


def scalar_parts(value):
    """Engine Operands ``[re, im]`` for an exact scalar. A zero part of a complex scalar (or
    alpha) is ``None``: it adds no term. A real scalar has no imaginary part; its real part is
    a term even when it is zero (``0 * inf`` is NaN)."""
    if isinstance(value, ComplexValue):
        return [None if p.is_zero else _scalar_operand(p) for p in (value.real, value.imag)]
    if isinstance(value, int) and not isinstance(value, bool):
        return [ExactPart.from_scalar(value), None]  # an integer, 0 included: exact, and int
    v = value if isinstance(value, FloatValue) else FloatValue(value)
    return [_scalar_operand(v), None]


def _scalar_operand(p: FloatValue) -> ExactPart:
    if p.is_finite and not p.is_zero:
        return ExactPart.from_scalar(p.to_fraction())
    return ExactPart.from_scalar(float(p))  # ±0, ±inf, NaN


def to_array(values, out: Format, shape) -> Array:
    """An Array of ``out`` from part values (float64 exact, or integers)."""
    data = assemble(out, [np.asarray(v).reshape(-1) for v in values])
    return Array(np.asarray(data, dtype=out.np_dtype).reshape(shape), out)


def resolve_mode_rule(rounding, overflow, out: Format):
    mode = resolve_rounding(rounding)
    rule = resolve_overflow(overflow, out)
    return mode, rule
