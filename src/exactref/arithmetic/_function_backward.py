"""The backward passes of the real functions (private; :mod:`.functions` attaches them): a
one-operand function's ``grad * f'(x)`` from its record's ``derivative``, atan2's quotients,
pow's partials, each exact and rounded once."""

from __future__ import annotations

from .._exact import Rounding, function_partial
from .._exact import function_gradient as gradient
from ..ops import get_op
from ._elementwise import OpTypeError

__all__ = ["backward_of", "atan2_backward", "pow_backward"]


def _op_params(spec, check, given: dict) -> dict:
    """The op's parameters (its record's defaults, then ``given``), checked as the op checks
    them (``check``, its ``prepare_params``)."""
    name = spec.name
    defaults = {p.name: p.default for p in spec.params}
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        takes = ", ".join(f"{k}=" for k in defaults) or "no parameters"
        raise TypeError(f"{name}.backward got {', '.join(unknown)}; it takes {takes} (as "
                        f"{name} does)")
    values = {**defaults, **given}
    return check(None, **values) if check is not None else values


def backward_of(name, check=None):
    """``er.<name>.backward(x, grad, **params)``: ``grad * f'(x)`` (the record's
    ``derivative``), exact and rounded once into ``x``'s format (PyTorch's formula for the
    specials: ``grad * exp(x)`` at ``x = +inf`` is ``grad * inf``, ``grad / x`` at ``x = ±0``
    is ``±inf``); ``params`` the op's own (gelu's ``approximate``, softplus's ``beta`` and
    ``threshold``, logit's ``eps``), checked by ``check``."""

    def backward(x, grad, *, dtype=None, rounding=Rounding.NEAREST_EVEN, overflow=None,
                 **params):
        from ._backward import _Pass, _result

        spec = get_op(name)
        values = _op_params(spec, check, params)
        bw = _Pass(name, {"x": x}, grad, dtype, rounding, overflow)
        t = bw.target("x")
        if t is None:
            return _result(None)
        o, fmt, mode, rule = t
        if bw.complex:
            raise OpTypeError(f"{name}.backward does not take complex operands yet (complex "
                              f"gradients are not implemented); pass real arrays")
        g, xv = bw.flat(bw.G[0]), bw.flat(bw.parts["x"][0])
        ex = gradient(spec.derivative, g.reshape(bw.shape), xv.reshape(bw.shape),
                      bits=fmt.component.precision, params=values)
        return _result(bw.rounded(o, fmt, mode, rule, [ex]))

    backward.__name__ = backward.__qualname__ = f"{name}_backward"
    backward.__doc__ = (f"Gradient of ``{name}(x)``: ``grad`` times the exact derivative, "
                        f"rounded once into ``x``'s format.")
    return backward


def _read_as_torch(operands: dict, grad):
    """The operands as PyTorch's backward formulas read them: an integer or bool array is
    converted into the gradient's format (the output's) first, each value rounded once
    (``self.to(result_type)``), and takes no gradient. Returns the operands and the names of
    those that take none."""
    from .._operands import prepare
    from .conversion import cast

    G = prepare(grad, "grad")
    out, frozen = dict(operands), set()
    if G.kind != "array":
        return out, frozen  # _Pass says what grad must be
    for name, v in operands.items():
        o = prepare(v, name)
        if o.kind == "array" and o.array.dtype.kind in ("bool", "int", "uint"):
            out[name] = cast(o.array, G.array.dtype).rounded
            frozen.add(name)
    if len(frozen) == len(operands):
        return dict(operands), frozen  # none takes a gradient: _Pass raises, naming them
    return out, frozen


def atan2_backward(y, x, grad, *, dtype=None, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """Gradients of ``atan2(y, x)``: ``grad_y = grad * x / (x**2 + y**2)`` and ``grad_x =
    -grad * y / (x**2 + y**2)`` (PyTorch's ``atan2_backward``), each a quotient of sums of
    products: exact, summed over the copies of its operand and rounded once (the engine's
    quotient kernel, as ``divide.backward``). Specials are IEEE's on the quotients, which are
    PyTorch's: ``x = y = 0`` gives NaN (``0 * inf``), an infinite ``x`` or ``y`` NaN or a zero.

    >>> import exactref as er
    >>> g = er.atan2.backward(er.asarray([1.0, 0.0], "float32"), er.asarray([1.0, 2.0], "float32"),
    ...                       er.asarray([1.0, 1.0], "float32"))
    >>> g.rounded.grad_y.tolist(), g.rounded.grad_x.tolist()
    ([0.5, 0.5], [-0.5, -0.0])
    """
    from ._backward import _Pass, _result
    from ._formulas import Part, neg

    ops, frozen = _read_as_torch({"y": y, "x": x}, grad)
    bw = _Pass("atan2", ops, grad, dtype, rounding, overflow)
    if bw.complex:
        raise OpTypeError("atan2.backward does not take complex operands (nor does atan2)")
    Y, X, G = bw.parts["y"][0], bw.parts["x"][0], bw.G[0]
    den = Part([(X, X), (Y, Y)])
    return _result(None if "x" in frozen else bw.quotients("x", [Part([(neg(G), Y)])], den),
                   None if "y" in frozen else bw.quotients("y", [Part([(G, X)])], den))


def pow_backward(x, y, grad, *, dtype=None, rounding=Rounding.NEAREST_EVEN, overflow=None):
    """Gradients of ``pow(x, y)`` (PyTorch's ``pow_backward_self`` and
    ``pow_backward_exponent``): ``grad_x = grad * y * x**(y - 1)``, +0 where ``y == 0``
    whatever ``grad`` is; ``grad_y = grad * x**y * log(x)``, ``grad * 0`` where ``x == 0`` and
    ``y >= 0``. Each exact (``x**(y-1)`` by MPFR's directed roundings, exact where MPFR finds
    it so; ``y - 1`` exact), summed over the copies of its operand and rounded once. Where
    ``x`` or ``y`` is special, or ``x < 0`` (``log(x)`` and a non-integer power are NaN), the
    formulas in IEEE arithmetic, with C99's ``pow`` at the exact ``y - 1``. An integer operand
    gets no gradient (nor does a scalar), and is read as PyTorch reads it: converted into the
    gradient's format first.

    >>> import exactref as er
    >>> g = er.pow.backward(er.asarray([2.0, 4.0, 0.0], "float32"),
    ...                     er.asarray([3.0, 0.5, 2.0], "float32"),
    ...                     er.asarray([1.0, 1.0, 1.0], "float32"))
    >>> g.rounded.grad_x.tolist()
    [12.0, 0.25, 0.0]
    >>> g.rounded.grad_y.tolist()
    [5.545177459716797, 2.7725887298583984, 0.0]
    """
    from ._backward import _Pass, _result
    from .basic import _copies

    ops, frozen = _read_as_torch({"x": x, "y": y}, grad)
    bw = _Pass("pow", ops, grad, dtype, rounding, overflow)
    if bw.complex:
        raise OpTypeError("pow.backward does not take complex operands yet (complex gradients "
                          "of pow are not implemented)")
    g, xv, yv = bw.flat(bw.G[0]), bw.flat(bw.parts["x"][0]), bw.flat(bw.parts["y"][0])
    grads = {}
    for wrt in ("x", "y"):
        t = None if wrt in frozen else bw.target(wrt)
        if t is None:
            grads[wrt] = None
            continue
        o, fmt, mode, rule = t
        copies = _copies(o.shape, bw.shape)
        single = copies.shape[1] == 1 and len(o.shape) == len(bw.shape)
        ex = function_partial(get_op(bw.op).derivative, wrt, g, xv, yv,
                              bits=fmt.component.precision, copies=copies, single=single)
        grads[wrt] = bw.rounded(o, fmt, mode, rule, [ex])
    return _result(grads["x"], grads["y"])
