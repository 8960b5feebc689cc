"""Backward passes of the long sums: each gradient element one exact sum rounded once."""

from __future__ import annotations

import numpy as np

from .._array import Array
from .._exact import ComplexValue
from .._formats import dtype as resolve_dtype
from .._operands import prepare
from .._result import Gradients
from ._bounds import _NE, DEFAULT_ORDER, ExactResult
from ._ops import _array_operand, _mm_shapes, _sum_axes, _transpose, gemm

__all__ = ["matmul_backward", "gemm_backward", "sum_backward"]



def _conj(arr: Array) -> Array:
    if arr.dtype.kind != "complex":
        return arr
    return Array(np.conj(arr.numpy()), arr.dtype)


def _conj_scalar(v):
    if isinstance(v, complex):
        return v.conjugate()
    if isinstance(v, ComplexValue):
        return v.conjugate()
    return v


def _sum_copies(G3, op_shape, full_batch):
    """Rearrange a per-batch quantity for an operand whose batch shape ``op_shape`` broadcast to
    ``full_batch``: index array (operand batch size, copies)."""
    size = int(np.prod(op_shape, dtype=np.int64))
    idx = np.arange(size).reshape(op_shape) if op_shape else np.zeros((), np.int64)
    owner = np.broadcast_to(idx, full_batch).reshape(-1)
    order = np.argsort(owner, kind="stable")
    return order.reshape(size, -1)


def _operand_grads(opA, opB, G, ca, fmts, kw):
    """Gradients of ``alpha * opA @ opB`` (matmul semantics: 1-D operands, broadcast batch
    dimensions) for the output gradient ``G``: ``conj(alpha) * G @ opB^H`` and
    ``conj(alpha) * opA^H @ G``, each summed over the batch copies broadcasting made of its
    operand (the copies become more terms of the same exact sum, so each element is still one
    sum rounded once). Returns ``[(result, padded shape)]`` for opA and opB, each result in the
    shape ``(operand batch size, rows, cols)``."""
    sa, sb, batch, _ = _mm_shapes(opA.shape, opB.shape)
    m, n = sa[-2], sb[-1]
    nb = int(np.prod(batch, dtype=np.int64))  # not -1: m, n or k may be 0
    Gb = G.numpy().reshape((nb, m, n))
    res = []
    for name, other, my2, other2, fmt in (("a", opB, sa, sb, fmts[0]),
                                          ("b", opA, sb, sa, fmts[1])):
        my_batch = my2[:-2]
        my_batch_full = (1,) * (len(batch) - len(my_batch)) + tuple(my_batch)
        copies = _sum_copies(None, my_batch_full, batch)  # (size, K)
        K = copies.shape[1]
        Ob = np.broadcast_to(other.numpy().reshape(other2), batch + other2[-2:])
        Ob = np.conj(Ob) if other.dtype.kind == "complex" else Ob
        Ob = Ob.reshape((nb,) + tuple(other2[-2:]))
        if name == "a":
            # grad_a[s] = sum over copies c of G[c] @ conj(B[c])^T: (m, K*n) @ (K*n, k)
            L = np.concatenate([Gb[copies[:, c]] for c in range(K)], axis=-1)
            R = np.concatenate([np.swapaxes(Ob[copies[:, c]], -1, -2) for c in range(K)],
                               axis=-2)
            fl, fr = G.dtype, other.dtype
        else:
            # grad_b[s] = sum over copies of conj(A[c])^T @ G[c]: (k, K*m) @ (K*m, n)
            L = np.concatenate([np.swapaxes(Ob[copies[:, c]], -1, -2) for c in range(K)],
                               axis=-1)
            R = np.concatenate([Gb[copies[:, c]] for c in range(K)], axis=-2)
            fl, fr = other.dtype, G.dtype
        r = gemm(Array(np.ascontiguousarray(L), fl), Array(np.ascontiguousarray(R), fr),
                 alpha=ca, dtype=fmt, **kw)
        res.append((r, my2))
    return res


def matmul_backward(a, b, grad, *, dtype=None, rounding=_NE, overflow=None, compute=None,
                    order=DEFAULT_ORDER):
    """Gradients of ``matmul(a, b)`` for the output gradient ``grad``: ``grad_a = grad @ b^H``
    and ``grad_b = a^H @ grad``, each summed over the batch copies broadcasting made of its
    operand (the copies become more terms of the same exact sum), in that operand's shape and
    format (``dtype`` names another), each element one exact sum rounded once.

    >>> from exactref.linalg import matmul
    >>> g = matmul.backward([[1.0, 2.0]], [[3.0], [4.0]], [[1.0]])
    >>> g.grad_a.rounded.tolist(), g.grad_b.rounded.tolist()
    ([[3.0, 4.0]], [[1.0], [2.0]])
    """
    A, B = _array_operand(a, "a"), _array_operand(b, "b")
    G = prepare(grad, "grad")
    _, _, _, out_shape = _mm_shapes(A.array.shape, B.array.shape)
    if G.kind != "array" or tuple(G.shape) != tuple(out_shape):
        raise ValueError(f"grad must have the output's shape {out_shape}, got "
                         f"{G.shape if G.kind == 'array' else 'a scalar'}; broadcast it first "
                         f"(np.broadcast_to(grad, {out_shape}))")
    kw = {"rounding": rounding, "overflow": overflow, "compute": compute, "order": order}
    fmts = [resolve_dtype(dtype) if dtype is not None else x.array.dtype for x in (A, B)]
    res = {}
    for name, me, (r, _) in zip(("grad_a", "grad_b"), (A, B),
                                _operand_grads(A.array, B.array, G.array, 1, fmts, kw),
                                strict=True):
        _reshape_bounds(r, me.array.shape)
        r.op = "matmul.backward"
        res[name] = r
    return Gradients(**res)


def _rearrange(r, fn):
    """Apply the exact rearrangement ``fn`` (a reshape, a transpose) to a Result's rounded values
    and to its bounds."""
    r.rounded = Array(np.ascontiguousarray(fn(r.rounded.numpy())), r.rounded.dtype)
    inner = r._bounds
    done = []

    def rearranged():
        if not done:
            done.append([tuple(np.ascontiguousarray(fn(np.asarray(x))) for x in part)
                         for part in inner()])
            terms = getattr(r, "_terms", None)  # the sums of |terms|, for weak_check
            if terms is not None:
                r._terms = np.ascontiguousarray(fn(terms))
        return done[0]

    r._bounds = rearranged
    # the forward product's inputs are not the gradient's: a report says they are not recorded
    r.inputs = None
    r.__dict__.pop("input_slices", None)


def _reshape_bounds(r, shape):
    _rearrange(r, lambda x: np.reshape(x, shape))


def gemm_backward(a, b, grad, c=None, *, alpha=1, beta=1, trans_a=False, trans_b=False,
                  dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER):
    """Gradients of ``gemm(a, b, c, alpha=alpha, beta=beta, trans_a=..., trans_b=...)``:
    ``grad_a``, ``grad_b`` (``conj(alpha)`` times the matmul gradients, transposed back where an
    operand was transposed) and ``grad_c = conj(beta) * grad`` (None when ``c`` is None or a
    scalar), each in its operand's shape and format (``dtype`` names another), each element one
    exact sum rounded once.

    Operands may have batch dimensions, which broadcast as in :func:`matmul` (``op(x)``
    transposes the last two); ``c`` broadcasts to the output. The gradient of an operand that
    broadcasting copied sums over the copies: they become more terms of the same exact sum, as
    in ``matmul.backward``. A zero part of a complex ``conj(beta)`` adds no term (the
    coefficient rule of add's backward), where PyTorch multiplies in complex arithmetic: a zero
    part of grad_c can differ in sign.

    >>> from exactref.linalg import gemm
    >>> g = gemm.backward([[1.0, 2.0]], [[3.0], [4.0]], [[1.0]], [[0.0]], alpha=2, beta=0.5)
    >>> g.grad_a.rounded.tolist(), g.grad_c.rounded.tolist()
    ([[6.0, 8.0]], [[0.5]])
    >>> a = [[[1.0, 2.0]], [[3.0, 4.0]]]     # shape (2, 1, 2): a batch of two
    >>> b = [[1.0], [1.0]]                   # shape (2, 1): broadcast to both
    >>> g = gemm.backward(a, b, [[[1.0]], [[2.0**-60]]], [0.0], alpha=3, beta=-1,
    ...                   rounding="toward_positive")
    >>> g.grad_b.rounded.tolist()  # 3 * (1 + 3 * 2**-60), 3 * (2 + 4 * 2**-60): rounded up once
    [[3.0000000000000004], [6.000000000000001]]
    >>> g.grad_c.rounded.tolist()  # c of shape (1,): -(1 + 2**-60), over every output element
    [-1.0]
    """
    A, B = _array_operand(a, "a"), _array_operand(b, "b")
    G = _array_operand(grad, "grad")
    opA, opB = _transpose(A.array, trans_a), _transpose(B.array, trans_b)
    _, _, _, out_shape = _mm_shapes(opA.shape, opB.shape)
    if tuple(G.array.shape) != tuple(out_shape):
        raise ValueError(f"grad must have the output's shape {out_shape}, got {G.array.shape}; "
                         f"broadcast it first (np.broadcast_to(grad, {out_shape}))")
    kw = {"rounding": rounding, "overflow": overflow, "compute": compute, "order": order}
    fmts = [resolve_dtype(dtype) if dtype is not None else x.array.dtype for x in (A, B)]
    grads = []
    for me, trans, (r, padded) in zip((A, B), (trans_a, trans_b),
                                      _operand_grads(opA, opB, G.array, _conj_scalar(alpha),
                                                     fmts, kw), strict=True):
        shape = tuple(me.array.shape)
        swap = trans and len(shape) >= 2

        def back(x, padded=padded, shape=shape, swap=swap):
            x = np.reshape(x, padded)
            return np.reshape(np.swapaxes(x, -1, -2) if swap else x, shape)

        _rearrange(r, back)
        r.op = "gemm.backward"
        grads.append(r)
    gc = None
    if c is not None:
        C = prepare(c, "c")
        if C.kind == "array":
            gc = _grad_c(C.array, G.array, out_shape, _conj_scalar(beta),
                         resolve_dtype(dtype) if dtype is not None else C.array.dtype, kw)
    return Gradients(grad_a=grads[0], grad_b=grads[1], grad_c=gc)


def _grad_c(C, G, out_shape, cb, fc, kw):
    """``conj(beta) * grad`` summed over the copies broadcasting made of ``c``: one exact sum
    per element of ``c`` (a product with a column of ones), rounded once."""
    cshape = tuple(C.shape)
    nd = len(out_shape)
    full = (1,) * (nd - len(cshape)) + cshape
    axes = [d for d in range(nd) if full[d] == 1 and out_shape[d] != 1]
    keep = [d for d in range(nd) if d not in axes]
    g = G.numpy()
    K = int(np.prod([out_shape[d] for d in axes], dtype=np.int64))
    rows = np.ascontiguousarray(np.transpose(g, keep + axes)).reshape(-1, K)
    ones = np.ones((K, 1), dtype=g.dtype)
    gc = gemm(Array(rows, G.dtype), Array(ones, G.dtype), alpha=cb, dtype=fc, **kw)
    _reshape_bounds(gc, cshape)
    gc.op = "gemm.backward"
    return gc


def sum_backward(x, grad, axis=None, *, keepdims=False, dtype=None, rounding=_NE,
                 overflow=None):
    """Gradient of ``sum(x, axis, keepdims=keepdims)``: ``grad`` copied to every summed element,
    in ``x``'s shape and format (``dtype`` names another), each element the gradient rounded
    once (exact where the format holds it; the tolerance is 0).

    >>> import exactref as er
    >>> from exactref.linalg import sum
    >>> sum.backward(er.asarray([[1.0, 2.0]], "float32"), er.asarray([0.1], "float64"),
    ...              axis=1).rounded.tolist()
    [[0.10000000149011612, 0.10000000149011612]]
    """
    from .._array import asarray

    X = prepare(x, "x")
    if X.kind != "array":
        raise ValueError("sum.backward needs the array x was (a scalar has no sum to "
                         "differentiate); pass np.asarray([x])")
    G = prepare(grad, "grad")
    shape = tuple(X.array.shape)
    nd = len(shape)
    axes = _sum_axes(axis, shape)  # as the forward sum checks them
    kd = tuple(1 if d in axes else shape[d] for d in range(nd))
    out = tuple(shape[d] for d in range(nd) if d not in axes)
    g = G.array.numpy() if G.kind == "array" else np.asarray(G.value)
    gshape = tuple(np.shape(g))
    if gshape not in (kd if keepdims else out, kd):
        raise ValueError(f"grad must have the sum's shape {kd if keepdims else out}, got "
                         f"{gshape}; pass the gradient of the sum's output as it is")
    g = np.broadcast_to(np.reshape(g, kd), shape)
    fmt = resolve_dtype(dtype) if dtype is not None else X.array.dtype
    src = G.array if G.kind == "array" else None
    data = np.ascontiguousarray(g)
    if src is not None:
        data = Array(data, src.dtype)
    rounded = asarray(data, fmt, rounding=rounding, overflow=overflow)
    if tuple(rounded.shape) != shape:
        rounded = Array(rounded.numpy().reshape(shape), rounded.dtype)
    return ExactResult(rounded, op="sum.backward")
