"""Sums of products: ``add``, ``subtract``, ``multiply``, ``fma`` and ``addcmul``.

Each op is one declaration on the exact engine: its exact value as sums of products over the
operands' parts (multiply is the one-term sum ``x * y``, add the two-term sum ``[x, y] . [1,
alpha]``, a complex part a two-term sum, fma ``x * y + z``), its promotion (the torch policy), and
its modelled implementations (the exact value rounded once; rounded in the compute format first,
fused; and, where a product meets a sum, the products rounded in the compute format before the
sum).

>>> import exactref as er
>>> x = er.asarray([1.0, 2.0, 3.0], "float32")
>>> er.add(x, er.asarray([0.1, 0.2, 0.3], "float32")).rounded.tolist()
[1.100000023841858, 2.200000047683716, 3.299999952316284]
>>> er.multiply(x, 0.5).rounded.tolist()
[0.5, 1.0, 1.5]
>>> er.fma(er.asarray([0.1], "float32"), 10.0, -1.0).rounded.tolist()  # one rounding
[1.4901161193847656e-08]
"""

from __future__ import annotations

import numpy as np

from .._exact import ComplexValue, ExactPart, FloatValue, Rounding
from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from .._operands import (
    Opnd,
    broadcast_shapes,
    check_number,
    prepare,
    resolve_mode_rule,
    scalar_parts,
    to_array,
)
from .._result import Gradients, Result
from ..ops import Counterpart, Counterparts, Param, names_of
from . import _fast
from ._elementwise import FUSED, Model, elementwise, operand_parts, with_backward
from ._formulas import ONE, Part, add_parts, conj, mul_parts, neg, round_parts

__all__ = [*names_of(__name__)]

_NE = Rounding.NEAREST_EVEN


# ----------------------------------------------------------------------------- scalars
def exact_scalar_param(value, out, name: str, op: str = ""):
    """A scalar parameter (alpha, value) taken exactly: an int, FloatValue or ComplexValue,
    checked against the output's kind (an integer output needs an integral value, as PyTorch
    requires; a complex one a complex output)."""
    value = check_number(name, value, op)
    if isinstance(value, (ComplexValue, complex)) or (
            hasattr(value, "imag") and not isinstance(value, (int, float, FloatValue))
            and complex(value).imag != 0):
        a = ComplexValue(value)
        if out.kind != "complex":
            if a.imag.is_zero:
                return FloatValue(a.real)
            raise ValueError(
                f"{name}={complex(a)!r} is complex but the output is {out.name}; use complex "
                f"operands, or a real {name}")
        return a
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, np.generic):
        value = value.item()
    try:
        exact = value if isinstance(value, int) else FloatValue(value)
    except (TypeError, ValueError) as exc:  # a Fraction that is not binary, say
        raise ValueError(f"{name}={value!r} cannot be taken exactly: {exc}") from None
    if out.is_integer and not isinstance(exact, int):
        if not (exact.is_finite and exact.to_fraction().denominator == 1):
            raise ValueError(
                f"{name}={value!r} is not an integer, but the output is {out.name}: integer "
                f"results need an integral {name} (as PyTorch requires)")
        exact = int(exact.to_fraction())
    return exact


def factor_parts(value):
    """``[re, im]`` of an exact scalar factor, with the factor 1 marked so that it adds no
    multiplication."""
    if isinstance(value, ComplexValue):
        parts = scalar_parts(value)
        if value.imag.is_zero and value.real == 1:
            parts[0] = ONE
        return parts
    if value == 1:
        return [ONE, None]
    return scalar_parts(value)


def _is_one(A) -> bool:
    return A[0] is ONE and A[1] is None


def _alpha(sign):
    def prepare_alpha(ctx, alpha):
        a = exact_scalar_param(alpha, ctx.out, "alpha", ctx.name)
        if sign < 0:
            a = -a
        return {"alpha": a, "A": factor_parts(a)}
    return prepare_alpha


# ------------------------------------------------------------------------------ models
def _products_then_sum(parts_fn, keep=None):
    """The products of each part rounded into the compute format (all, or all but the one at
    index ``keep``, which an FMA takes exactly), then each part's sum rounded in it."""
    def fn(ctx, *operands, **params):
        parts = parts_fn(ctx, *operands, **params)
        out = []
        for part in parts:
            terms, k = [], 0
            for t in part.terms:
                if any(op is None for op in t):
                    continue
                if len(t) > 1 and k != keep:
                    stored = ctx.store(ctx.sop([Part([t])]))[0]
                    terms.append((stored,))
                else:
                    terms.append(t)
                k += len(t) > 1
            out.append(Part(terms))
        return ctx.sop(out)
    return fn


def _complex(ctx) -> bool:
    return ctx.complex_out


def _ay_then_sum(ctx, X, Y, *, alpha, A):
    ay = ctx.store(ctx.sop(mul_parts(Y, A, ctx.complex_out)))
    return ctx.sop(add_parts(X, ay, [ONE, None], ctx.complex_out))


def _ay_variant(keep):
    def fn(ctx, X, Y, *, alpha, A):
        ay = ctx.store(_products_then_sum(lambda c, y, a: mul_parts(y, a, c.complex_out),
                                          keep)(ctx, Y, A))
        return ctx.sop(add_parts(X, ay, [ONE, None], ctx.complex_out))
    return fn


def _with_alpha(ctx) -> bool:
    return not _is_one(ctx.params["A"])


def _alpha_complex(ctx) -> bool:
    return _with_alpha(ctx) and ctx.complex_out


_ALPHA_MODELS = (
    FUSED,
    Model("alpha * y rounded in {c}, then the sum", _ay_then_sum, _with_alpha),
    Model("alpha * y rounded in {c} product by product, then the sum", _ay_variant(None),
          _alpha_complex),
    Model("alpha * y rounded in {c} with one product fused, then the sum", _ay_variant(0),
          _alpha_complex),
    Model("alpha * y rounded in {c} with the other product fused, then the sum",
          _ay_variant(1), _alpha_complex),
)

_MUL_MODELS = (
    FUSED,
    Model("products rounded in {c}, then the sum",
          _products_then_sum(lambda ctx, X, Y: mul_parts(X, Y, ctx.complex_out)), _complex),
    Model("one product fused, the other rounded in {c}",
          _products_then_sum(lambda ctx, X, Y: mul_parts(X, Y, ctx.complex_out), 0), _complex),
    Model("the other product fused, one rounded in {c}",
          _products_then_sum(lambda ctx, X, Y: mul_parts(X, Y, ctx.complex_out), 1), _complex),
)


# ------------------------------------------------------------------------- fast lanes
# ------------------------------------------------------------------------ declarations
_ALPHA = Param("alpha", 1, "the factor on y, taken exactly", audit=(0.5, 3.0, -1.5, 0.0))


@elementwise("add", ("x", "y"), kernel="sum of products", promotion="add",
             summary="x + alpha * y, rounded once", params=(_ALPHA,), models=_ALPHA_MODELS,
             counterparts=Counterparts("torch.add",
                                       Counterpart("np.add", data={"model": "rounded"}),
                                       Counterpart("jnp.add", data={"model": "rounded"})),
             prepare_params=_alpha(1), fast=_fast.sum_lane)
def add(ctx, X, Y, *, alpha, A):
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
    return ctx.sop(add_parts(X, Y, A, ctx.complex_out))


@elementwise("subtract", ("x", "y"), kernel="sum of products", promotion="sub",
             summary="x - alpha * y, rounded once", params=(_ALPHA,), models=_ALPHA_MODELS,
             counterparts=Counterparts("torch.sub",
                                       Counterpart("np.subtract", data={"model": "narrow_rounded"}),
                                       Counterpart("jnp.subtract", data={"model": "rounded"})),
             prepare_params=_alpha(-1), fast=_fast.sum_lane)
def subtract(ctx, X, Y, *, alpha, A):
    """Elementwise ``x - alpha * y`` with broadcasting, the exact value rounded once.

    The same sum as :func:`add` with ``-alpha``: operands, output format, ``compute``, overflow
    and the modelled implementations as there. bool operands raise, as in PyTorch.

    >>> import exactref as er
    >>> er.subtract(er.asarray([1.0], "float32"), 2.0**-30).rounded.value(0).hex()
    '0x1p+0'
    >>> er.subtract([1.0], [2.0**-60], rounding="toward_zero").rounded.value(0).hex()
    '0x1.fffffffffffffp-1'
    """
    return ctx.sop(add_parts(X, Y, A, ctx.complex_out))


@elementwise("multiply", ("x", "y"), kernel="sum of products", promotion="mul",
             summary="x * y, rounded once", models=_MUL_MODELS,
             counterparts=Counterparts("torch.mul",
                                       Counterpart("np.multiply", data={"model": "rounded",
                                                                        "annex_g": True}),
                                       Counterpart("jnp.multiply", data={"model": "product"})),
             fast=_fast.multiply_lane)
def multiply(ctx, X, Y):
    """Elementwise ``x * y`` with broadcasting (NumPy rules), the exact product rounded once.

    Operands, output format, ``compute`` and overflow as in :func:`add`. A complex product's
    parts are two-term sums; its tolerance budgets them rounded in the compute format, fused or
    product by product.

    >>> import exactref as er
    >>> er.multiply(er.asarray([3.0], "bfloat16"), 1/3).rounded.tolist()
    [1.0]
    """
    return ctx.sop(mul_parts(X, Y, ctx.complex_out))


def _fma_terms(X, Y, Z, complex_out):
    xy = mul_parts(X, Y, complex_out)
    zr, zi = Z
    parts = [Part(xy[0].terms + [(zr,)])]
    if complex_out:
        parts.append(Part(xy[1].terms + [(zi,)]))
    return parts


def _unfused_fma(ctx, X, Y, Z):
    xy = ctx.store(ctx.sop(mul_parts(X, Y, ctx.complex_out)))
    return ctx.sop(add_parts(Z, xy, [ONE, None], ctx.complex_out))


@elementwise("fma", ("x", "y", "z"), kernel="sum of products", promotion="fma",
             summary="x * y + z with one rounding (fused multiply-add)",
             models=(FUSED, Model("x * y rounded in {c}, then + z", _unfused_fma, _complex)),
             counterparts=Counterparts(None, None, None))
def fma(ctx, X, Y, Z):
    """Elementwise ``x * y + z`` rounded once: IEEE 754's fusedMultiplyAdd, with broadcasting.

    The output format is the promotion of the three operands (as ``x * y + z`` promotes in
    PyTorch). Its tolerance covers the exact value rounded once and, in the narrow formats, the
    exact value rounded in the compute format first; a complex fma's parts are sums of products
    that a kernel may round product by product. An unfused ``x * y + z`` (two roundings) is not
    an fma: its checks belong to the op the kernel computes (``er.addcmul`` for
    ``torch.addcmul``). Special values follow IEEE 754: ``fma(0, inf, NaN)`` is NaN, ``fma(inf,
    1, -inf)`` is NaN, and an exact zero takes the sign IEEE's sum rule gives ``x * y + z``.

    >>> import exactref as er
    >>> x = er.asarray([1 + 2**-12], "float32")
    >>> er.fma(x, x, -1.0).rounded.value(0).hex()  # 2**-11 + 2**-24; unfused: 2**-11
    '0x1.0008p-11'
    """
    return ctx.sop(_fma_terms(X, Y, Z, ctx.complex_out))


def _value_param(ctx, value):
    v = exact_scalar_param(value, ctx.out, "value", ctx.name)
    return {"value": v, "V": factor_parts(v)}


def addc_elementwise(name, between, **declared):
    """The declaration addcmul and addcdiv share: ``input + value * tensor1 {between} tensor2``
    rounded once, ``value`` a keyword taken exactly (:func:`_value_param`); the rest as
    :func:`elementwise` takes it."""
    value = Param("value", 1, f"the factor on tensor1 {between} tensor2, taken exactly",
                  audit=(0.5, -3.0))
    return elementwise(name, ("input", "tensor1", "tensor2"), promotion=name,
                       summary=f"input + value * tensor1 {between} tensor2, rounded once",
                       params=(value,), prepare_params=_value_param, **declared)


def _addcmul_unfused(ctx, In, T1, T2, *, value, V):
    """torch's formula ``input + value * t1 * t2``, each step rounded in the compute format."""
    vt = ctx.store(ctx.sop(mul_parts(T1, V, ctx.complex_out))) if not _is_one(V) else T1
    p = ctx.store(ctx.sop(mul_parts(vt, T2, ctx.complex_out)))
    return ctx.sop(add_parts(In, p, [ONE, None], ctx.complex_out))


def _addcmul_fused_last(ctx, In, T1, T2, *, value, V):
    """``value * t1`` rounded, then ``input + (value * t1) * t2`` with one rounding (an FMA)."""
    vt = ctx.store(ctx.sop(mul_parts(T1, V, ctx.complex_out))) if not _is_one(V) else T1
    return ctx.sop(_fma_terms(vt, T2, In, ctx.complex_out))


@addc_elementwise("addcmul", "*", kernel="sum of products",
                  models=(FUSED, Model("each step rounded in {c}", _addcmul_unfused),
                          Model("value * tensor1 rounded in {c}, then one fused multiply-add",
                                _addcmul_fused_last)),
                  counterparts=Counterparts("torch.addcmul", None, None))
def addcmul(ctx, In, T1, T2, *, value, V):
    """Elementwise ``input + value * tensor1 * tensor2`` rounded once, with broadcasting.

    ``value`` is taken exactly, like a scalar operand. Its tolerance covers the exact value
    rounded once or in the compute format first, the steps ``value * tensor1``, ``* tensor2`` and
    ``input +`` each rounded in the compute format, and the last two fused in one multiply-add.

    >>> import exactref as er
    >>> er.addcmul(er.asarray([1.0], "float32"), 3.0, 1/3).rounded.tolist()  # 1 + 3 * (1/3)
    [2.0]
    """
    vt = mul_parts(T1, V, ctx.complex_out) if not _is_one(V) else None
    if vt is None:
        return ctx.sop(_fma_terms(T1, T2, In, ctx.complex_out))
    # value * t1 * t2 as three-factor terms
    parts = _triple(T1, T2, V, ctx.complex_out)
    ir, ii = In
    out = [Part(parts[0].terms + [(ir,)])]
    if ctx.complex_out:
        out.append(Part(parts[1].terms + [(ii,)]))
    return ctx.sop(out)


def _triple(A, B, C, complex_out):
    """Parts of ``a * b * c`` as three-factor terms."""
    ab = mul_parts(A, B, complex_out)
    cr, ci = C
    re = [t + (cr,) for t in ab[0].terms] + [t + (neg(ci),) for t in (
        ab[1].terms if complex_out else [])]
    if not complex_out:
        return [Part([t for t in re if t])]
    im = [t + (ci,) for t in ab[0].terms] + [t + (cr,) for t in ab[1].terms]
    return [Part(re), Part(im)]



# ------------------------------------------------------------------------------ backward
def _copies(o_shape, out_shape):
    """For an operand broadcast to ``out_shape``: an index array of shape (operand size, K)
    listing the flat output positions of each element's K copies."""
    size = int(np.prod(o_shape, dtype=np.int64))
    idx = np.arange(size).reshape(o_shape)
    owner = np.broadcast_to(idx, out_shape).reshape(-1)
    order = np.argsort(owner, kind="stable")
    k = owner.size // max(size, 1)
    return order.reshape(size, k)


def _product_parts(factors, complex_calc):
    """Parts of the product of several operand parts ``[re, im]`` (each a factor)."""
    parts = [Part([(f,)]) for f in factors[0]]
    for f in factors[1:]:
        fr, fi = f
        re, im = parts[0].terms, parts[1].terms if len(parts) > 1 else []
        new_re = [t + (fr,) for t in re] + [t + (neg(fi),) for t in im]
        new_im = [t + (fi,) for t in re] + [t + (fr,) for t in im]
        parts = [Part(new_re), Part(new_im)]
    if not complex_calc:
        parts = parts[:1]
    return [Part([t for t in p.terms if all(op is not ONE for op in t)] +
                 [tuple(op for op in t if op is not ONE) or (ExactPart.from_scalar(1.0),)
                  for t in p.terms if any(op is ONE for op in t)]) for p in parts]


def gradient(op, factors, o: Opnd, out_shape, fmt, mode, rule, complex_calc) -> Result:
    """One gradient: the sum over the copies of the product of ``factors`` (operand parts
    ``[re, im]`` broadcast to the output; conjugated already), rounded once into ``fmt`` in the
    operand's shape. A real operand of a complex computation gets the real part, as PyTorch
    gives it."""
    copies = _copies(o.shape, out_shape)
    size, k = copies.shape
    single = k == 1 and len(o.shape) == len(out_shape)
    n_parts = 2 if fmt.kind == "complex" else 1
    parts_terms = [[] for _ in range(n_parts)]
    for j in range(k):
        pos = copies[:, j]
        F = [[f if f in (None, ONE) else f.broadcast(out_shape).take(pos) for f in fac]
             for fac in factors]
        for i, p in enumerate(_product_parts(F, complex_calc)[:n_parts]):
            parts_terms[i].extend(p.terms)
    if not single:
        # a sum over copies starts from +0, as PyTorch's sums do
        for terms in parts_terms:
            terms.append((ExactPart.from_scalar(0.0),))
    values = round_parts([Part(t) for t in parts_terms], (size,), fmt, mode, rule)
    rounded = to_array(values, fmt, o.shape)
    cands = [[v.reshape(o.shape)] for v in values]
    return Result(rounded, cands, op=f"{op}.backward", models=["exact"])


def products_backward(op, operands, grad, factor_of, dtype, rounding, overflow, **extra):
    """Gradients of an op whose partial derivatives are products: ``factor_of(name, parts)``
    gives, for the operand ``name``, the factors (operand parts, unconjugated; scalars as
    exact values) whose product with ``grad`` is its gradient, or None for no gradient."""
    ops = {name: prepare(v, name) for name, v in operands.items()}
    shape = broadcast_shapes(list(ops.values()))
    G = prepare(grad, "grad")
    if G.kind != "array" or tuple(G.shape) != tuple(shape):
        raise ValueError(
            f"grad must have the output's shape {tuple(shape)}, got "
            f"{G.shape if G.kind == 'array' else 'a scalar'}; pass one gradient element per "
            f"output element")
    results = {}
    for name, me in ops.items():
        if me.kind == "scalar":
            results[name] = None
            continue
        fmt = resolve_dtype(dtype) if dtype is not None else me.array.dtype
        mode, rule = resolve_mode_rule(rounding, overflow, fmt)
        complex_calc = fmt.kind == "complex" or G.is_complex or any(
            o.is_complex for o in ops.values()) or any(
            isinstance(v, ComplexValue) for v in extra.values())
        parts = {n: operand_parts(o, complex_calc) for n, o in ops.items()}
        factors = factor_of(name, parts)
        gparts = operand_parts(G, complex_calc)
        chain = [gparts] + [conj(f) for f in factors]
        results[name] = gradient(op, chain, me, shape, fmt, mode, rule, complex_calc)
    names = list(operands)
    more = {n: results[n] for n in names[2:]}
    return Gradients(results[names[0]], results[names[1]] if len(names) > 1 else None, **more)


def _add_backward(x, y, grad, *, alpha=1, dtype=None, rounding=_NE,
                  overflow=None) -> Gradients:
    """Gradients of ``add(x, y, alpha=alpha)`` for the output gradient ``grad``.

    ``grad_x = grad`` and ``grad_y = conj(alpha) * grad``, each summed over the copies that
    broadcasting made of its operand, in that operand's shape and dtype, one exact sum rounded
    once. A zero part of a complex ``conj(alpha)`` adds no term. A scalar operand gets no
    gradient. ``grad`` must have the output's shape.
    """
    a = _exact_alpha(alpha)
    return products_backward("add", {"x": x, "y": y}, grad,
                             lambda n, p: [] if n == "x" else [factor_parts(a)],
                             dtype, rounding, overflow, alpha=a)


def _subtract_backward(x, y, grad, *, alpha=1, dtype=None, rounding=_NE,
                       overflow=None) -> Gradients:
    """Gradients of ``subtract(x, y, alpha=alpha)``: ``grad_x = grad``, ``grad_y = -conj(alpha)
    * grad``, each summed over the copies of its operand and rounded once."""
    a = -_exact_alpha(alpha)
    return products_backward("subtract", {"x": x, "y": y}, grad,
                             lambda n, p: [] if n == "x" else [factor_parts(a)],
                             dtype, rounding, overflow, alpha=a)


def _exact_alpha(alpha):
    a = exact_scalar_param(alpha, FORMATS["complex128"], "alpha")
    if isinstance(a, ComplexValue) and a.imag.is_zero:
        a = a.real
    return a


def _multiply_backward(x, y, grad, *, dtype=None, rounding=_NE,
                       overflow=None) -> Gradients:
    """Gradients of ``multiply(x, y)`` for the output gradient ``grad``.

    ``grad_x = grad * conj(y)`` and ``grad_y = grad * conj(x)``, each summed over the copies that
    broadcasting made of its operand, in that operand's shape and dtype, one exact sum rounded
    once. An element with one copy, of an operand with the output's number of dimensions, is a
    single product and takes its IEEE sign of zero; every other element is a sum starting from
    +0 (-0 when rounding toward -inf), as PyTorch's sums.
    """
    return products_backward("multiply", {"x": x, "y": y}, grad,
                             lambda n, p: [p["y"] if n == "x" else p["x"]],
                             dtype, rounding, overflow)


def _fma_backward(x, y, z, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
    """Gradients of ``fma(x, y, z)``: ``grad_x = grad * conj(y)``, ``grad_y = grad * conj(x)``,
    ``grad_z = grad``, each summed over the copies of its operand and rounded once (PyTorch
    differentiates fma as ``addcmul(z, x, y)``)."""
    table = {"x": ["y"], "y": ["x"], "z": []}
    return products_backward("fma", {"x": x, "y": y, "z": z}, grad,
                             lambda n, p: [p[m] for m in table[n]], dtype, rounding, overflow)


def _addcmul_backward(input, tensor1, tensor2, grad, *, value=1, dtype=None, rounding=_NE,
                      overflow=None) -> Gradients:
    """Gradients of ``addcmul(input, tensor1, tensor2, value=value)``: ``grad_input = grad``,
    ``grad_tensor1 = grad * conj(value * tensor2)``, ``grad_tensor2 = grad * conj(value *
    tensor1)``, each one exact sum over the copies of its operand, rounded once. The Result's
    ``grad_x`` is ``grad_input``, ``grad_y`` is ``grad_tensor1``, and ``grad_tensor2`` is its
    own attribute."""
    v = _exact_alpha(value)
    table = {"input": [], "tensor1": ["tensor2"], "tensor2": ["tensor1"]}

    def factors(n, p):
        return [p[m] for m in table[n]] + ([factor_parts(v)] if table[n] else [])

    return products_backward("addcmul", {"input": input, "tensor1": tensor1,
                                         "tensor2": tensor2}, grad, factors, dtype, rounding,
                             overflow, value=v)


with_backward(add, _add_backward)
with_backward(subtract, _subtract_backward)
with_backward(multiply, _multiply_backward)
with_backward(fma, _fma_backward)
with_backward(addcmul, _addcmul_backward)
