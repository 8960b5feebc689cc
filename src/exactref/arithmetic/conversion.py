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
"""

from __future__ import annotations

from dataclasses import replace

from .._exact import Rounding
from .._formats import dtype as resolve_dtype
from ..ops import Counterpart, Counterparts, Param, names_of, register
from ._elementwise import OpTypeError, elementwise
from ._formulas import Part

__all__ = [*names_of(__name__)]


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
    return _cast(x, to=fmt, rounding=rounding, overflow=overflow, random_bits=random_bits,
                 random_bits_width=random_bits_width)


cast.spec = register(replace(_cast.spec, function=cast))
