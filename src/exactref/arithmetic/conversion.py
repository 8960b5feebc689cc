"""``cast``: a conversion as an op, so that a conversion kernel can be audited.

The exact value of the operand, rounded once into ``dtype`` with the rounding mode and overflow
rule. Into integer formats the default rounding is toward zero, as C's, NumPy's and PyTorch's
conversions round; NaN and infinities have no integer value (ValueError; ``overflow="saturate"``
clamps infinities). A complex value cannot become real without dropping its imaginary part
(TypeError). PyTorch converts into float16, bfloat16 and the float8 formats through float32,
rounding twice: ``exactref.equivalents.torch.cast`` models that.

>>> import exactref as er
>>> er.cast(er.asarray([1 + 2**-11 + 2**-40], "float64"), "float16").rounded.tolist()
[1.0009765625]
>>> er.cast([2.7, -2.7], "int8").rounded.tolist()
[2, -2]

Overflow, by default, is what each format's real casts do (:data:`CAST_OVERFLOW`): where the
mainstream casts disagree the tolerance is their union. Into ``float8_e4m3fn`` ml_dtypes gives
NaN past the largest finite value and PyTorch (``c10::detail::fp8e4m3fn_from_fp32_value``)
and NVIDIA's ``cvt.rn.satfinite.e4m3x2.f32`` saturate to 448 (an infinity too); into
``float8_e5m2`` ml_dtypes and PyTorch give IEEE's infinity and ``cvt.rn.satfinite.e5m2x2.f32``
saturates to 57344. The reference (``rounded``) is the format's own rule; ``overflow=`` names
one rule and narrows the check to it.

>>> r = er.cast(er.asarray([1e4, 300.0], "float32"), "float8_e4m3fn")
>>> r.rounded.tolist(), r.highest.tolist()
([nan, 288.0], [448.0, 288.0])
>>> r.covers([448.0, 288.0]).all(), r.covers([float("nan"), 288.0]).all()
(True, True)
>>> er.cast(er.asarray([1e4], "float32"), "float8_e4m3fn", overflow="nan").covers([448.0]).all()
False
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from .._exact import Rounding
from .._formats import dtype as resolve_dtype
from ..ops import Counterpart, Counterparts, Param, names_of, register
from ._elementwise import OpTypeError, elementwise
from ._formulas import Part

__all__ = [*names_of(__name__), "CAST_OVERFLOW"]

#: The float formats whose mainstream casts overflow by different rules: the rules, the
#: format's own (the reference's) first, and who uses each (measured with torch 2.13.0 and
#: ml_dtypes 0.7.0: ``torch.tensor([1e4]).to(torch.float8_e4m3fn)`` is 448, ml_dtypes'
#: ``astype`` NaN; PTX ISA ``cvt.rn.satfinite{.relu}.f8x2type.f32``: ``.satfinite`` is not
#: optional for the 8-bit float destinations, "NaN results in NaN, and values past MAX_NORM are
#: clamped to MAX_NORM"). The others agree: ``float8_e4m3fnuz`` and ``float8_e5m2fnuz`` give NaN
#: in torch and ml_dtypes alike, ``float8_e8m0fnu`` NaN (PTX's ``cvt.frnd3.ue8m0x2`` takes
#: ``.satfinite`` only as an option), float16, bfloat16 and wider IEEE's infinity.
CAST_OVERFLOW = {
    "float8_e4m3fn": (("ieee", "ml_dtypes' casts: NaN, the format has no infinity"),
                      ("saturate", "torch's casts (c10 fp8e4m3fn_from_fp32_value: finite "
                                   "overflow and inf saturate to 448), PTX cvt.rn.satfinite")),
    "float8_e5m2": (("ieee", "torch's and ml_dtypes' casts"),
                    ("saturate", "PTX cvt.rn.satfinite.e5m2x2 (Transformer Engine, cuBLASLt "
                                 "outputs): 57344")),
}


def _target(ops, params, dtype, policy):
    target = params.get("to")
    if target is None:
        raise TypeError("cast() needs the target format: cast(x, 'bfloat16')")
    fmt = resolve_dtype(target)
    src = ops[0].array.dtype if ops[0].kind == "array" else None
    if (src is not None and src.kind == "complex" or ops[0].is_complex) and fmt.kind != "complex":
        raise OpTypeError(f"a complex value cannot become {fmt.name} without dropping its "
                          f"imaginary part; take the real part first (numpy.real)")
    return fmt, fmt


@elementwise("cast", ("x",), kernel="conversion", promotion="cast",
             summary="x converted into another format, rounded once",
             params=(Param("to", None, "the target format", audit="formats"),), models=(),
             counterparts=Counterparts(
                 "torch.Tensor.to", "np.ndarray.astype",
                 Counterpart("jax.lax.convert_element_type", data={"model": "convert"})),
             cast_operands=False, out_format=_target, loop="none")
def _cast(ctx, X, *, to):
    return ctx.sop([Part([(p,)]) for p in X[: ctx.nparts]])


def cast(x, to=None, *, dtype=None, rounding=None, overflow=None, policy=None, random_bits=None,
         random_bits_width=None):
    """``x`` converted into the format ``to``, its exact value rounded once (see the module).

    ``rounding`` defaults to nearest-even for float targets and toward zero for integer ones.
    ``rounding="stochastic"`` (float targets) with ``random_bits=`` is PTX's ``cvt.rs``; without
    them the Result holds both neighbours and the probability of each (see
    ``docs/stochastic_rounding.md``). A Python int is taken exactly, then the overflow rule
    applies (integers wrap: ``cast(300, "int8")`` is 44, as ``torch.tensor(300).to(torch.int8)``
    and numpy's ``astype``); the target is named, so no promotion policy plays a part.

    ``dtype=`` names the target as the other ops name their output format (``cast(x,
    dtype="int8")`` is ``cast(x, "int8")``). ``policy=`` is refused: no promotion happens.

    >>> import exactref as er
    >>> er.cast(er.asarray([300], "int32"), "uint8").rounded.tolist()  # integers wrap
    [44]
    """
    if policy is not None:
        raise ValueError(
            f"cast() takes no policy= (policy={policy!r}): the target format is named, so no "
            f"promotion policy plays a part; drop policy=")
    if dtype is not None:
        if to is not None and resolve_dtype(to) is not resolve_dtype(dtype):
            raise ValueError(
                f"cast() got two target formats, to={to!r} and dtype={dtype!r}; name one")
        to = dtype
    if to is None:
        raise TypeError("cast() needs the target format: cast(x, 'bfloat16') or "
                        "cast(x, dtype='bfloat16')")
    fmt = resolve_dtype(to)
    if rounding is None:
        rounding = Rounding.TOWARD_ZERO if fmt.is_integer else Rounding.NEAREST_EVEN
    result = _cast(x, to=fmt, rounding=rounding, overflow=overflow, random_bits=random_bits,
                   random_bits_width=random_bits_width)
    rules = CAST_OVERFLOW.get(fmt.name)
    if overflow is not None or rules is None or result.details.get("rounding") is None:
        return result  # a named rule, a format whose casts agree, or stochastic rounding
    for rule, who in rules[1:]:
        other = _cast(x, to=fmt, rounding=rounding, overflow=rule)
        result = _with_candidate(result, other, f"overflow {rule!r} ({who})")
    result.details["overflow_rules"] = tuple(r for r, _ in rules)
    return result


def _with_candidate(result, other, name: str):
    """``result`` with ``other``'s reference as one more candidate (named ``name``)."""
    out = copy.copy(result)
    out.details = dict(result.details)
    out._candidates = [list(c) + [np.asarray(o[0], dtype=np.float64)]
                       for c, o in zip(result._candidates, other._candidates, strict=True)]
    out.models = (*result.models, name)
    out.__dict__.pop("_bounds_cache", None)
    return out


cast.spec = register(replace(_cast.spec, function=cast))
