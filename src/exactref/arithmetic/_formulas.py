"""Formulas on operand parts: complex arithmetic written as the engine's sums of products.

An operand reaches a formula as its parts ``[re, im]``: engine Operands, ``None`` for a part that
is absent or exactly zero (a real scalar has no imaginary part: it adds no term), or :data:`ONE`
for a factor 1 that adds no multiplication. A formula returns :class:`Part` s (one per output
part), each a list of terms, each a tuple of factors: exactly what
:func:`~exactref._exact.sum_of_products` takes once the absent terms are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._exact import ExactPart, Rounding, sum_of_products
from .._formats import Format

__all__ = ["ONE", "Part", "times", "add_parts", "mul_parts", "neg", "conj", "square_sum",
           "terms_of", "times_parts", "round_parts"]

ONE = "one"  # marker: the factor 1, left out of a product


@dataclass
class Part:
    """One part (real or imaginary) of an exact value: terms, each a tuple of Operands."""

    terms: list


def terms_of(part: Part) -> list:
    """The terms of a part without the absent ones (an empty sum is the +0 term)."""
    terms = [t for t in part.terms if all(op is not None for op in t)]
    return terms or [(ExactPart.from_scalar(0.0),)]


def times(*factors):
    """A term: the product of the factors (``None`` anywhere: no term; :data:`ONE` left out)."""
    if any(f is None for f in factors):
        return (None,)
    kept = tuple(f for f in factors if f is not ONE)
    return kept or (ExactPart.from_scalar(1.0),)


def neg(op):
    """``-op`` (None stays None; :data:`ONE` becomes the operand -1)."""
    if op is None:
        return None
    if op is ONE:
        return ExactPart.from_scalar(-1.0)
    if op.f64 is not None and op._comps is None:
        out = ExactPart.from_float64(-op.f64, in_range=op.in_range)
    else:
        out = ExactPart([(-m, e) for m, e in op.comps], -np.asarray(op.shadow),
                      -op.f64 if op.f64 is not None else None)
        out.in_range = op.in_range
    if op.ints is not None:
        ints = op.ints
        if isinstance(ints, np.ndarray):
            ints = np.negative(ints.astype(object if ints.dtype.itemsize >= 8 else np.int64))
        else:
            ints = -ints
        out.ints = ints
    return out


def conj(parts):
    """The complex conjugate of operand parts."""
    return [parts[0], neg(parts[1])]


def add_parts(X, Y, A, complex_out: bool):
    """Parts of ``x + a * y``."""
    xr, xi = X
    yr, yi = Y
    ar, ai = A
    re = [(xr,), times(yr, ar), times(neg(yi), ai)]
    if not complex_out:
        return [Part(re)]
    im = [(xi,), times(yi, ar), times(yr, ai)]
    return [Part(re), Part(im)]


def mul_parts(X, Y, complex_out: bool):
    """Parts of ``x * y``."""
    xr, xi = X
    yr, yi = Y
    re = [times(xr, yr), times(neg(xi), yi)]
    if not complex_out:
        return [Part(re)]
    im = [times(xr, yi), times(xi, yr)]
    return [Part(re), Part(im)]


def square_sum(X) -> Part:
    """``re**2 + im**2`` of operand parts (the squared modulus)."""
    xr, xi = X
    return Part([times(xr, xr), times(xi, xi)])


def times_parts(parts, Y, complex_out: bool):
    """Parts of ``p * y`` for an exact value given as Parts (sums of terms) and an operand's
    parts ``[re, im]``: every term gains a factor."""
    yr, yi = Y
    re = parts[0].terms
    im = parts[1].terms if len(parts) > 1 else []
    new_re = [t + (yr,) for t in re] + [t + (neg(yi),) for t in im]
    if not complex_out:
        return [Part(new_re)]
    new_im = [t + (yi,) for t in re] + [t + (yr,) for t in im]
    return [Part(new_re), Part(new_im)]


def round_parts(parts, shape, out: Format, mode: Rounding, rule: str):
    """Round each Part's exact sum once into ``out``'s component: float64 (or int) arrays."""
    comp = out.component
    values = []
    for part in parts:
        ex = sum_of_products(terms_of(part), shape)
        v = ex.round(comp, mode, rule)[0]
        values.append(np.asarray(v).reshape(shape))
    return values
