"""Backward passes of the long sums: each gradient element one exact sum rounded once."""

from __future__ import annotations

import numpy as np

from .._array import Array
from .._exact._rounding import Rounding
from .._exact._values import ComplexValue
from .._formats import dtype as resolve_dtype
from .._result import Gradients
from ..arithmetic._common import prepare
from ._bounds import ExactResult
from ._ops import _array_operand, _mm_shapes, _transpose, gemm, matmul

__all__ = ["matmul_backward", "gemm_backward", "sum_backward", "LinalgGradients"]

_NE = Rounding.NEAREST_EVEN


class LinalgGradients:
    """Gradients of a backward pass: ``grad_a``, ``grad_b`` (and ``grad_c`` for gemm), each a
    Result with ``rounded``, ``tolerance()`` and ``covers()``; ``rounded`` holds the arrays."""

    def __init__(self, **grads):
        self._names = list(grads)
        for k, v in grads.items():
            setattr(self, k, v)
        vals = [g.rounded if g is not None else None for g in grads.values()]
        self.rounded = Gradients(vals[0], vals[1] if len(vals) > 1 else None)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._names)
        return f"LinalgGradients({inner})"


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


def matmul_backward(a, b, grad, *, dtype=None, rounding=_NE, overflow=None, compute=None,
                    order="any"):
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
    sa, sb, batch, out_shape = _mm_shapes(A.array.shape, B.array.shape)
    if G.kind != "array" or tuple(G.shape) != tuple(out_shape):
        raise ValueError(f"grad must have the output's shape {out_shape}, got "
                         f"{G.shape if G.kind == 'array' else 'a scalar'}")
    m, n = sa[-2], sb[-1]
    g_full = G.array.numpy().reshape(batch + (m, n))
    res = {}
    for name, me, other, my2, other2 in (("grad_a", A, B, sa, sb), ("grad_b", B, A, sb, sa)):
        fmt = resolve_dtype(dtype) if dtype is not None else me.array.dtype
        my_batch = my2[:-2]
        my_batch_full = (1,) * (len(batch) - len(my_batch)) + tuple(my_batch)
        copies = _sum_copies(None, my_batch_full, batch)  # (size, K)
        size, K = copies.shape
        Gb = g_full.reshape((-1, m, n))
        Ob = np.broadcast_to(other.array.numpy().reshape(other2), batch + other2[-2:])
        Ob = np.conj(Ob) if other.array.dtype.kind == "complex" else Ob
        Ob = Ob.reshape((-1,) + other2[-2:])
        if name == "grad_a":
            # grad_a[s] = sum over copies c of G[c] @ conj(B[c])^T: (m, K*n) @ (K*n, k)
            L = np.concatenate([Gb[copies[:, c]] for c in range(K)], axis=-1)
            R = np.concatenate([np.swapaxes(Ob[copies[:, c]], -1, -2) for c in range(K)],
                               axis=-2)
        else:
            # grad_b[s] = sum over copies of conj(A[c])^T @ G[c]: (k, K*m) @ (K*m, n)
            L = np.concatenate([np.swapaxes(Ob[copies[:, c]], -1, -2) for c in range(K)],
                               axis=-1)
            R = np.concatenate([Gb[copies[:, c]] for c in range(K)], axis=-2)
        Lf = Array(np.ascontiguousarray(L), G.array.dtype if name == "grad_a"
                   else other.array.dtype)
        Rf = Array(np.ascontiguousarray(R), other.array.dtype if name == "grad_a"
                   else G.array.dtype)
        r = matmul(Lf, Rf, dtype=fmt, rounding=rounding, overflow=overflow, compute=compute,
                   order=order)
        r.rounded = Array(r.rounded.numpy().reshape(me.array.shape), r.rounded.dtype)
        _reshape_bounds(r, me.array.shape)
        r.op = "matmul.backward"
        res[name] = r
    return LinalgGradients(**res)


def _reshape_bounds(r, shape):
    inner = r._bounds

    def reshaped():
        return [tuple(np.reshape(x, shape) for x in part) for part in inner()]

    r._bounds = reshaped


def gemm_backward(a, b, grad, c=None, *, alpha=1, beta=1, trans_a=False, trans_b=False,
                  dtype=None, rounding=_NE, overflow=None, compute=None, order="any"):
    """Gradients of ``gemm(a, b, c, alpha=alpha, beta=beta, trans_a=..., trans_b=...)`` for 2-D
    operands: ``grad_a``, ``grad_b`` (``conj(alpha)`` times the matmul gradients, transposed
    back where an operand was transposed) and ``grad_c = conj(beta) * grad`` summed over the
    copies broadcasting made of ``c`` (None when ``c`` is None). A zero part of a complex
    ``conj(beta)`` adds no term (the coefficient rule of add's backward), where PyTorch
    multiplies in complex arithmetic: a zero part of grad_c can differ in sign. Each element one
    exact sum rounded once, in its operand's format.

    >>> from exactref.linalg import gemm
    >>> g = gemm.backward([[1.0, 2.0]], [[3.0], [4.0]], [[1.0]], [[0.0]], alpha=2, beta=0.5)
    >>> g.grad_a.rounded.tolist(), g.grad_c.rounded.tolist()
    ([[6.0, 8.0]], [[0.5]])
    """
    A, B = _array_operand(a, "a"), _array_operand(b, "b")
    if A.array.ndim != 2 or B.array.ndim != 2:
        raise ValueError(f"gemm.backward takes 2-D a and b, got shapes {A.array.shape} and "
                         f"{B.array.shape}; use matmul.backward for batches")
    G = _array_operand(grad, "grad")
    opA, opB = _transpose(A.array, trans_a), _transpose(B.array, trans_b)
    _, _, _, out_shape = _mm_shapes(opA.shape, opB.shape)
    if tuple(G.array.shape) != tuple(out_shape):
        raise ValueError(f"grad must have the output's shape {out_shape}, got {G.array.shape}")
    ca = _conj_scalar(alpha)
    kw = {"rounding": rounding, "overflow": overflow, "compute": compute, "order": order}
    fa = resolve_dtype(dtype) if dtype is not None else A.array.dtype
    fb = resolve_dtype(dtype) if dtype is not None else B.array.dtype
    cB, cA = _conj(opB), _conj(opA)
    if trans_a:
        ga = gemm(cB, G.array, alpha=ca, trans_b=True, dtype=fa, **kw)
    else:
        ga = gemm(G.array, cB, alpha=ca, trans_b=True, dtype=fa, **kw)
    if trans_b:
        gb = gemm(G.array, cA, alpha=ca, trans_a=True, dtype=fb, **kw)
    else:
        gb = gemm(cA, G.array, alpha=ca, trans_a=True, dtype=fb, **kw)
    gc = None
    if c is not None:
        C = prepare(c, "c")
        if C.kind == "array":
            cshape = tuple(C.array.shape)
            fc = resolve_dtype(dtype) if dtype is not None else C.array.dtype
            full = (1,) * (2 - len(cshape)) + cshape
            axes = [d for d in range(2) if full[d] == 1 and out_shape[d] != 1]
            g = G.array.numpy()
            keep = [d for d in range(2) if d not in axes]
            K = int(np.prod([out_shape[d] for d in axes], dtype=np.int64))
            rows = np.ascontiguousarray(np.transpose(g, keep + axes)).reshape(-1, K)
            ones = np.ones((K, 1), dtype=g.dtype)
            gc = gemm(Array(rows, G.array.dtype), Array(ones, G.array.dtype),
                      alpha=_conj_scalar(beta), dtype=fc, **kw)
            gc.rounded = Array(gc.rounded.numpy().reshape(cshape), gc.rounded.dtype)
            _reshape_bounds(gc, cshape)
            gc.op = "gemm.backward"
    for r in (ga, gb):
        r.op = "gemm.backward"
    return LinalgGradients(grad_a=ga, grad_b=gb, grad_c=gc)


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

    X = _array_operand(x, "x")
    G = prepare(grad, "grad")
    shape = tuple(X.array.shape)
    nd = len(shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(int(a) % nd for a in axes)
    kd = tuple(1 if d in axes else shape[d] for d in range(nd))
    out = tuple(shape[d] for d in range(nd) if d not in axes)
    g = G.array.numpy() if G.kind == "array" else np.asarray(G.value)
    gshape = tuple(np.shape(g))
    if gshape not in (kd if keepdims else out, kd):
        raise ValueError(f"grad must have the sum's shape {kd if keepdims else out}, got "
                         f"{gshape}")
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
