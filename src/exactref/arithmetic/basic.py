"""``add`` and ``multiply``: two thin declarations on the exact engine.

Each op declares its exact value as sums of products over the operands' parts (multiply is the
one-term sum ``x * y``, add the two-term sum ``[x, y] . [1, alpha]``; a complex part is a
two-term sum), its promotion (the torch policy), and its modelled implementations (the exact
value rounded once; rounded in the compute format first, fused; and, for add with an alpha other
than ±1 or a complex product, the products rounded in the compute format before the sum).

>>> import exactref as er
>>> x = er.asarray([1.0, 2.0, 3.0], "float32")
>>> er.add(x, er.asarray([0.1, 0.2, 0.3], "float32")).rounded.tolist()
[1.100000023841858, 2.200000047683716, 3.299999952316284]
>>> er.multiply(x, 0.5).rounded.tolist()
[0.5, 1.0, 1.5]
"""

from __future__ import annotations

import itertools

import numpy as np

from .._exact._engine import Operand
from .._exact._rounding import Rounding
from .._exact._values import ComplexValue, FloatValue
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._result import Gradients, Result
from . import _fast
from ._common import (
    Opnd,
    Part,
    broadcast_shapes,
    cast_operand,
    compute_format,
    engine_parts,
    negated,
    output_format,
    prepare,
    resolve_mode_rule,
    round_parts,
    scalar_parts,
    to_array,
)

__all__ = ["add", "multiply"]

_ZERO = None  # a part that is absent or exactly zero: its terms are left out


# ------------------------------------------------------------------------------ formulas
def _add_parts(X, Y, A, complex_out: bool):
    """Parts of x + a*y; X, Y, A are [re, im] lists of engine Operands (None: no term)."""
    xr, xi = X
    yr, yi = Y
    ar, ai = A
    re = [(xr,), _times(yr, ar), _times(negated(yi), ai)]
    if not complex_out:
        return [Part(re)]
    im = [(xi,), _times(yi, ar), _times(yr, ai)]
    return [Part(re), Part(im)]


def _mul_parts(X, Y, complex_out: bool):
    """Parts of x * y."""
    xr, xi = X
    yr, yi = Y
    re = [_times(xr, yr), _times(negated(xi), yi)]
    if not complex_out:
        return [Part(re)]
    im = [_times(xr, yi), _times(xi, yr)]
    return [Part(re), Part(im)]


_ONE = "one"  # marker: the factor 1, left out of a product


def _times(a, b):
    if a is None or b is None:
        return (None,)
    if b is _ONE:
        return (a,)
    if a is _ONE:
        return (b,)
    return (a, b)


# ----------------------------------------------------------------------------- operands
def _operand_parts(o: Opnd, complex_out: bool):
    """[re, im] engine Operands of an operand. A real array in a complex op gets an imaginary
    part +0, as PyTorch's promotion makes one; a scalar's zero or absent part adds no term."""
    if o.kind == "scalar":
        return scalar_parts(o.value)
    parts = engine_parts(o.array)
    if len(parts) == 1:
        parts.append(Operand.from_scalar(0.0) if complex_out else None)
    return parts


def _alpha_parts(alpha):
    """[re, im] of alpha, with the factor 1 marked so that it adds no multiplication."""
    if isinstance(alpha, ComplexValue):
        parts = scalar_parts(alpha)
        if alpha.imag.is_zero and alpha.real == 1:
            parts[0] = _ONE
        return parts
    if alpha == 1:
        return [_ONE, None]
    return scalar_parts(alpha)


def _exact_alpha(alpha, out: Format):
    if isinstance(alpha, (ComplexValue, complex)) or (
            hasattr(alpha, "imag") and not isinstance(alpha, (int, float, FloatValue))
            and complex(alpha).imag != 0):
        a = ComplexValue(alpha)
        if out.kind != "complex":
            if a.imag.is_zero:
                return FloatValue(a.real)
            raise ValueError(
                f"alpha={complex(a)!r} is complex but the output is {out.name}; use complex "
                f"operands, or a real alpha")
        return a
    if isinstance(alpha, bool):
        alpha = int(alpha)
    value = alpha if isinstance(alpha, int) else FloatValue(alpha)
    if out.is_integer and not isinstance(value, int):
        if not (value.is_finite and value.to_fraction().denominator == 1):
            raise ValueError(
                f"alpha={alpha!r} is not an integer, but the output is {out.name}: integer "
                f"results need an integral alpha (as PyTorch requires)")
        value = int(value.to_fraction())
    return value


# ------------------------------------------------------------------------ implementations
def _round_to_operands(parts, shape, fmt, mode, rule):
    """Round Parts into ``fmt``; the rounded values as engine Operands (for the next step)."""
    values = round_parts(parts, shape, fmt, mode, rule)
    return [Operand.from_float64(v) for v in values]


def _with_im(ops, complex_out):
    return ops if complex_out or len(ops) == 2 else [ops[0], None]


def _separately(parts, shape, c, mode, rule, keep=None):
    """The products of each part rounded into ``c`` (all of them, or all but the one at index
    ``keep``, which an FMA takes exactly), then the part's sum rounded into ``c``."""
    out = []
    for part in parts:
        terms = []
        products = 0
        for t in part.terms:
            if any(op is None for op in t):
                continue
            if len(t) == 1:
                terms.append(t)
                continue
            if products == keep:
                terms.append(t)
            else:
                terms.append(tuple(_round_to_operands([Part([t])], shape, c, mode, rule)))
            products += 1
        out.append(Part(terms))
    return _round_to_operands(out, shape, c, mode, rule)


def _product_variants(parts, shape, c, mode, rule):
    """Two-term product sums in ``c``: both products rounded, or one of them kept exact by an
    FMA (as vectorized complex kernels compute ``fma(a, c, -(b * d))``)."""
    return [_separately(parts, shape, c, mode, rule, keep) for keep in (None, 0, 1)]


def _candidates(op, X, Y, A, shape, out, c, mode, rule, complex_out):
    """Per part, the outputs of every modelled implementation (float64 arrays)."""
    parts = _add_parts(X, Y, A, complex_out) if op == "add" else _mul_parts(X, Y, complex_out)
    cands = [round_parts(parts, shape, out, mode, rule)]  # the exact value rounded once
    if out.is_integer:
        return cands
    models = []
    if c is not out:  # fused: the exact value rounded in the compute format first
        models.append(_round_to_operands(parts, shape, c, mode, rule))
    if op == "add" and (A[0] not in (_ONE,) or A[1] is not None):
        # alpha * y rounded in the compute format (fused, and products one by one), then the
        # sum rounded in it
        ay_fused = _round_to_operands(_mul_parts(Y, A, complex_out), shape, c, mode, rule)
        variants = [ay_fused]
        if complex_out:
            variants += _product_variants(_mul_parts(Y, A, complex_out), shape, c, mode, rule)
        for t in variants:
            t = _with_im(t, complex_out)
            models.append(_round_to_operands(_add_parts(X, t, [_ONE, None], complex_out),
                                             shape, c, mode, rule))
    if op == "multiply" and complex_out:
        models += _product_variants(_mul_parts(X, Y, complex_out), shape, c, mode, rule)
    for m in models:
        final = round_parts([Part([(p,)]) for p in m], shape, out, mode, rule)
        cands.append(final)
    return cands


def _variants(o: Opnd, promoted, complex_out):
    """The operand's parts as given, and at the ends of an inner Result's candidate range."""
    base = [_operand_parts(o, complex_out)]
    if o.result is None:
        return base
    inner = o.result
    bounds = inner._bounds()
    fmt = o.result.rounded.dtype
    shape = o.result.rounded.shape
    # per part: lowest, highest, and NaN where a modelled implementation gives NaN (the bounds
    # ignore NaN, so without this end the chain would lose it: inf - inf in the inner op). A
    # zero end takes -0 (lowest) or +0 (highest) where a candidate has that sign, so a chain
    # keeps both signs of an inner zero: -0 + (-0) and -0 + (+0) differ.
    ends = []
    for (lo, hi, nan, *_), cands in zip(bounds, inner._candidates, strict=True):
        stack = np.stack([np.broadcast_to(c, np.shape(lo)) for c in cands])
        zero = stack == 0
        negz = (zero & np.signbit(stack)).any(axis=0)
        posz = (zero & ~np.signbit(stack)).any(axis=0)
        lo = np.where((lo == 0) & negz, -0.0, lo)
        hi = np.where((hi == 0) & posz, 0.0, hi)
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
        out.append(_operand_parts(alt, complex_out))
    return base + out


def _binary(op, x, y, alpha, dtype, rounding, overflow, compute):
    X, Y = prepare(x, "x"), prepare(y, "y")
    shape = broadcast_shapes([X, Y])
    promoted, out = output_format([X, Y], op, dtype)
    x0, y0 = X, Y  # the operands as given, recorded on the Result
    X, Y = cast_operand(X, promoted), cast_operand(Y, promoted)
    mode, rule = resolve_mode_rule(rounding, overflow, out)
    complex_out = out.kind == "complex"
    A = [_ONE, None]
    if op == "add":
        A = _alpha_parts(_exact_alpha(alpha, out))
    c = compute_format(out, compute) if not out.is_integer else out
    if _fast.eligible(op, X, Y, A, out, c, rule, _ONE, _MINUS_ONE(A)):
        return _with_inputs(_fast_result(op, X, Y, A, out, promoted, c, mode, rule), x0, y0,
                            op, alpha)
    cands = None
    ref = None
    for xv, yv in itertools.product(_variants(X, promoted, complex_out),
                                    _variants(Y, promoted, complex_out)):
        got = _candidates(op, xv, yv, A, shape, out, c, mode, rule, complex_out)
        if ref is None:
            ref = got[0]
            cands = [[] for _ in ref]
        for model in got:
            for i, values in enumerate(model):
                cands[i].append(values)
    rounded = to_array(ref, out, shape)
    models = ["exact"] if out.is_integer else ["exact", f"fused in {c.name}"]
    if not out.is_integer and (op == "add" and A != [_ONE, None] or complex_out):
        models.append(f"products rounded in {c.name}, then the sum")
    result = Result(rounded, cands, op=op, models=models,
                    details={"promoted": promoted, "compute": c, "rounding": mode,
                             "overflow": rule})
    return _with_inputs(result, x0, y0, op, alpha)


def _with_inputs(result, x0, y0, op, alpha):
    """Record the operands as given on the Result (reports show them in hex)."""
    result.inputs = {"x": x0.array if x0.kind == "array" else x0.value,
                     "y": y0.array if y0.kind == "array" else y0.value}
    if op == "add":
        result.inputs["alpha"] = alpha
    return result


def _MINUS_ONE(A):
    """``A[0]`` when alpha is exactly -1 (a marker for the fast lane), else None."""
    a = A[0]
    if a is None or a is _ONE or a.f64 is None or a._comps is not None and len(a.comps) > 1:
        return None
    v = np.asarray(a.f64)
    return a if v.size == 1 and float(v.reshape(-1)[0]) == -1.0 else None


def _fast_result(op, X, Y, A, out, promoted, c, mode, rule):
    """The float32 fast lane (:mod:`._fast`): the reference is the only candidate."""
    from .._array import Array

    a, b = X.array.numpy(), Y.array.numpy()
    if op == "add":
        if A[0] is not _ONE:
            b = np.negative(b)
        values = _fast.add32(a, b, mode)
    else:
        values = _fast.multiply32(a, b, mode)
    values = np.asarray(values, dtype=np.float32)
    models = ["exact", f"fused in {c.name}"]
    if op == "add" and A[0] is not _ONE:
        models.append(f"products rounded in {c.name}, then the sum")
    return Result(Array(values, out), [[values]], op=op, models=models,
                  details={"promoted": promoted, "compute": c, "rounding": mode,
                           "overflow": rule})


# --------------------------------------------------------------------------------- public
def add(x, y, *, alpha=1, dtype=None, rounding=Rounding.NEAREST_EVEN, overflow=None,
        compute=None) -> Result:
    """Elementwise ``x + alpha * y`` with broadcasting (NumPy rules), the exact value rounded once.

    ``x``, ``y``: er.Arrays, numpy/torch/jax arrays, nested lists, Python int/float/complex,
    binary Fractions, FloatValue/ComplexValue, or earlier Results. ``alpha`` is taken exactly.
    The output format is the operands' promoted format under PyTorch's rules (an operand of
    shape () takes part only when every operand has shape (); one the promoted format cannot
    hold is first rounded once to it, as PyTorch casts it); ``dtype`` names another of the same
    kind. ``compute`` names the compute format of the modelled implementations (by default
    PyTorch's: float32 for float16, bfloat16 and the float8 formats, complex64 for complex32,
    otherwise the output format). Integer results wrap on overflow unless ``overflow`` says
    otherwise.

    >>> import exactref as er
    >>> er.add([1.0], [2.0**-60]).rounded.tolist()
    [1.0]
    >>> er.add([1.0], [2.0**-60], rounding="toward_positive").rounded.value(0).hex()
    '0x1.0000000000001p+0'
    """
    return _binary("add", x, y, alpha, dtype, rounding, overflow, compute)


def multiply(x, y, *, dtype=None, rounding=Rounding.NEAREST_EVEN, overflow=None,
             compute=None) -> Result:
    """Elementwise ``x * y`` with broadcasting (NumPy rules), the exact product rounded once.

    Operands, output format, ``compute`` and overflow as in :func:`add`. A complex product's
    parts are two-term sums; its tolerance budgets them rounded in the compute format, fused or
    product by product.

    >>> import exactref as er
    >>> er.multiply(er.asarray([3.0], "bfloat16"), 1/3).rounded.tolist()
    [1.0]
    """
    return _binary("multiply", x, y, 1, dtype, rounding, overflow, compute)


# ------------------------------------------------------------------------------ backward
class BackwardResult:
    """Gradients of a backward pass: ``rounded`` is a :class:`~exactref._result.Gradients`
    (``.grad_x``, ``.grad_y``; None for a scalar operand); ``grad_x`` and ``grad_y`` are the
    Results of each gradient, so each has ``tolerance()`` and ``covers()``."""

    def __init__(self, grad_x: Result | None, grad_y: Result | None):
        self.grad_x, self.grad_y = grad_x, grad_y
        self.rounded = Gradients(grad_x.rounded if grad_x else None,
                                 grad_y.rounded if grad_y else None)

    def _single(self):
        present = [g for g in (self.grad_x, self.grad_y) if g is not None]
        if len(present) != 1:
            raise TypeError("two gradients: use .grad_x.covers(...) and .grad_y.covers(...)")
        return present[0]

    def covers(self, actual):
        """Coverage of the one gradient there is (with two, use ``.grad_x`` / ``.grad_y``)."""
        return self._single().covers(actual)

    def tolerance(self):
        return self._single().tolerance()

    def __repr__(self) -> str:
        return f"BackwardResult({self.rounded!r})"


def _copies(o_shape, out_shape):
    """For an operand broadcast to ``out_shape``: an index array of shape (operand size, K)
    listing the flat output positions of each element's K copies."""
    size = int(np.prod(o_shape, dtype=np.int64))
    idx = np.arange(size).reshape(o_shape)
    owner = np.broadcast_to(idx, out_shape).reshape(-1)
    order = np.argsort(owner, kind="stable")
    k = owner.size // max(size, 1)
    return order.reshape(size, k)


def _grad(op, grad_parts, factor_parts, o: Opnd, out_shape, out_ndim, fmt, mode, rule,
          complex_calc):
    """One gradient: sum over the copies of ``grad * factor`` (factor parts already conjugated),
    rounded once into ``fmt`` in the operand's shape. A real operand of a complex computation
    gets the real part, as PyTorch gives it."""
    copies = _copies(o.shape, out_shape)
    size, k = copies.shape
    single = k == 1 and len(o.shape) == out_ndim
    n_parts = 2 if fmt.kind == "complex" else 1
    parts_terms = [[] for _ in range(n_parts)]
    for j in range(k):
        pos = copies[:, j]
        G = [None if g is None else g.broadcast(out_shape).take(pos) for g in grad_parts]
        F = [f if f in (None, _ONE) else f.broadcast(out_shape).take(pos) for f in factor_parts]
        parts = _mul_parts(G, F, complex_calc)
        for i in range(n_parts):
            parts_terms[i].extend(parts[i].terms)
    if not single:
        # a sum over copies starts from +0, as PyTorch's sums do
        for terms in parts_terms:
            terms.append((Operand.from_scalar(0.0),))
    values = round_parts([Part(t) for t in parts_terms], (size,), fmt, mode, rule)
    rounded = to_array(values, fmt, o.shape)
    cands = [[v.reshape(o.shape)] for v in values]
    return Result(rounded, cands, op=f"{op}.backward", models=["exact"])


def _backward(op, x, y, grad, alpha, dtype, rounding, overflow):
    X, Y = prepare(x, "x"), prepare(y, "y")
    shape = broadcast_shapes([X, Y])
    G = prepare(grad, "grad")
    if G.kind != "array" or tuple(G.shape) != tuple(shape):
        raise ValueError(
            f"grad must have the output's shape {tuple(shape)}, got "
            f"{G.shape if G.kind == 'array' else 'a scalar'}; pass one gradient element per "
            f"output element")
    a = None
    if op == "add":
        a = _exact_alpha(alpha, FORMATS["complex128"])
        if isinstance(a, ComplexValue) and a.imag.is_zero:
            a = a.real
    results = []
    for me, other in ((X, Y), (Y, X)):
        if me.kind == "scalar":
            results.append(None)
            continue
        fmt = resolve_dtype(dtype) if dtype is not None else me.array.dtype
        mode, rule = resolve_mode_rule(rounding, overflow, fmt)
        complex_calc = fmt.kind == "complex" or G.is_complex or other.is_complex or \
            isinstance(a, ComplexValue)
        gparts = _operand_parts(G, complex_calc)
        if op == "add":
            if me is X:
                factor = [_ONE, None]
            else:
                factor = _alpha_parts(a.conjugate() if isinstance(a, ComplexValue) else a)
        else:
            op_parts = _operand_parts(other, complex_calc)
            factor = [op_parts[0], negated(op_parts[1])]
        results.append(_grad(op, gparts, factor, me, shape, len(shape), fmt, mode, rule,
                             complex_calc))
    return BackwardResult(*results)


def _add_backward(x, y, grad, *, alpha=1, dtype=None, rounding=Rounding.NEAREST_EVEN,
                  overflow=None) -> BackwardResult:
    """Gradients of ``add(x, y, alpha=alpha)`` for the output gradient ``grad``.

    ``grad_x = grad`` and ``grad_y = conj(alpha) * grad``, each summed over the copies that
    broadcasting made of its operand, in that operand's shape and dtype, one exact sum rounded
    once. A zero part of a complex ``conj(alpha)`` adds no term. A scalar operand gets no
    gradient. ``grad`` must have the output's shape.
    """
    return _backward("add", x, y, grad, alpha, dtype, rounding, overflow)


def _multiply_backward(x, y, grad, *, dtype=None, rounding=Rounding.NEAREST_EVEN,
                       overflow=None) -> BackwardResult:
    """Gradients of ``multiply(x, y)`` for the output gradient ``grad``.

    ``grad_x = grad * conj(y)`` and ``grad_y = grad * conj(x)``, each summed over the copies that
    broadcasting made of its operand, in that operand's shape and dtype, one exact sum rounded
    once. An element with one copy, of an operand with the output's number of dimensions, is a
    single product and takes its IEEE sign of zero; every other element is a sum starting from
    +0 (-0 when rounding toward -inf), as PyTorch's sums.
    """
    return _backward("multiply", x, y, grad, 1, dtype, rounding, overflow)


add.backward = _add_backward
multiply.backward = _multiply_backward
