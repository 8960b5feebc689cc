"""PyTorch equivalent of ``torch.nn.functional.scaled_dot_product_attention``: what torch 2.13's
CPU kernels may compute (measured; docs/attention.md, "What PyTorch computes").

* **Which kernel.** On CPU, ``scaled_dot_product_attention`` runs
  ``_scaled_dot_product_flash_attention_for_cpu`` when query, key and value are 4-D and the
  value's head dimension equals the query's (every dtype, float64 included; bool, float and
  causal masks, GQA and an explicit scale alike), else ``_scaled_dot_product_attention_math``
  (measured with ``torch.profiler``; ``torch.backends.cuda.sdp_kernel`` does not apply).
* **The math kernel** computes float16 and bfloat16 in float32 and rounds once (measured: equal
  bit for bit to the float32 math kernel's output rounded); ``q`` and ``k`` are each multiplied
  by ``sqrt(scale)``, ``_safe_softmax`` (the standard algorithm; SLEEF's ``exp`` within 1 ulp),
  then a matmul: the standard model.
* **The flash kernel** accumulates in float32 for the half formats (float64 for float64): the
  scores by a GEMM, times ``R_f32(scale)``, plus the mask; the online softmax over key blocks
  of ``kvSplitSize`` (512 keys, or all of them when fewer) with ``exp_u20`` ("a faster version
  of exp with ULP=20", ATen's AVX512/AVX2 vectorized code: 20 ulps declared); for float16 and
  bfloat16 the block's exponentials are stored in the half format before the ``P V`` GEMM (the
  sum reads them in float32): ``stored=`` the dtype.
* **A row no key takes part in** gives 0 in both kernels (``_safe_softmax``; the flash kernel
  likewise), where the exact value is NaN (``0/0``): this equivalent gives +0 there.

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> q = torch.randn(1, 2, 16, 8, dtype=torch.bfloat16)
>>> out = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
>>> ert.scaled_dot_product_attention(q, q, q, is_causal=True).covers(out).all()
True
"""

from __future__ import annotations

import math

import numpy as np

from .._result import Gradients
from ..linalg import attention_kernel, attention_masks, attention_shapes
from ..ops import op_names
from ._common import operand, pin_result
from ._torch_records import counterpart

_HALF = ("float16", "bfloat16")
_FLASH = "flash"


def _exp_accuracy(which: str, fmt) -> int:
    """The kernel's exponentials, in ulps (the record's torch contract and data): the flash
    kernel's exp_u20 (float64 computes exactly as the math kernel does), the math kernel's."""
    cp = counterpart(scaled_dot_product_attention)
    if which == _FLASH and fmt.name != "float64":
        return cp.data[_FLASH]["exp_accuracy"]
    return cp.contract["exp_accuracy"]


def kv_split() -> int:
    """The flash kernel's key block (``kvSplitSize`` in FlashAttentionKernel.cpp)."""
    return counterpart(scaled_dot_product_attention).data[_FLASH]["kv_split"]


def _arrays(query, key, value):
    out = []
    for x, name in ((query, "query"), (key, "key"), (value, "value")):
        X = operand(x, name)
        if X.is_scalar:
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor, "
                            f"not {type(X.scalar).__name__} (PyTorch's error); pass a tensor")
        out.append(X.array)
    return out


def kernel(query, key, value) -> str:
    """``"flash"`` or ``"math"``: the CPU kernel torch 2.13 runs for these operands (measured:
    flash for 4-D operands whose value head dimension equals the query's)."""
    q, k, v = _arrays(query, key, value)
    four = q.ndim == 4 and k.ndim == 4 and v.ndim == 4
    return _FLASH if four and v.shape[-1] == q.shape[-1] else "math"


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention on CPU (no dropout): the kernel it
    picks (:func:`kernel`), declared as the model above; a row no key takes part in is 0."""
    q, k, v = _arrays(query, key, value)
    which = kernel(q, k, v)
    out = q.dtype.name
    half = out in _HALF
    kw = {"exp_accuracy": _exp_accuracy(which, q.dtype)}
    if which == _FLASH:
        S = k.shape[-2]
        kw.update(blocks=max(1, math.ceil(S / kv_split())), stored=out if half else None)
    r = attention_kernel(q, k, v, attn_mask, dropout_p, is_causal, scale,
                                         enable_gqa, **kw)
    r.details["kernel"] = which
    return _empty_rows_zero(r, q, k, v, attn_mask, is_causal, enable_gqa)


def _empty_rows_zero(result, q, k, v, attn_mask, is_causal, enable_gqa):
    """PyTorch's 0 where no key takes part (the exact value is NaN)."""
    Qd, _, Vd, batch = attention_shapes(q, k, v, enable_gqa)
    L, S = Qd.shape[-2], Vd.shape[-2]
    allowed, fmask = attention_masks(attn_mask, is_causal, batch, L, S, q.dtype)
    if fmask is not None:
        allowed = allowed & (fmask != -np.inf)
    empty = ~np.asarray(allowed).any(axis=-1)
    if not empty.any():
        return result
    return pin_result(result, np.broadcast_to(empty[..., None], batch + (L, Vd.shape[-1])),
                      0.0)


def _backward(query, key, value, grad, attn_mask=None, dropout_p=0.0, is_causal=False,
              scale=None, enable_gqa=False):
    """torch's autograd of scaled_dot_product_attention on CPU (``out.backward(grad)``): the
    flash kernel's ``cpu_flash_attention_backward`` (the weights from the saved log-sum-exp,
    whose exponentials are ``exp_u20``'s: 20 ulps) or the math kernel's autograd (SLEEF's exp,
    1 ulp), declared as docs/attention.md's "Backward" model; a query row no key takes part in
    has a zero ``grad_query`` (torch's; the exact value is NaN).

    >>> import torch
    >>> import exactref.equivalents.torch as ert
    >>> q = torch.randn(1, 2, 6, 4, dtype=torch.bfloat16, requires_grad=True)
    >>> g = torch.randn(1, 2, 6, 4, dtype=torch.bfloat16)
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).backward(g)
    >>> ref = ert.scaled_dot_product_attention.backward(q.detach(), q.detach(), q.detach(), g,
    ...                                                 is_causal=True)
    >>> ref.grad_value.rounded.shape
    (1, 2, 6, 4)
    """
    q, k, v = _arrays(query, key, value)
    G = operand(grad, "grad")
    which = kernel(q, k, v)
    kw = {"exp_accuracy": _exp_accuracy(which, q.dtype)}
    r = attention_kernel.backward(q, k, v, G.array, attn_mask, dropout_p,
                                                  is_causal, scale, enable_gqa, **kw)
    for name in ("grad_query", "grad_key", "grad_value"):
        getattr(r, name).details["kernel"] = which
    Qd, _, Vd, batch = attention_shapes(q, k, v, enable_gqa)
    if tuple(q.shape[:-2]) != tuple(batch):  # a broadcast query: its copies' sums as computed
        return r
    L, S = Qd.shape[-2], Vd.shape[-2]
    allowed, fmask = attention_masks(attn_mask, is_causal, batch, L, S, q.dtype)
    if fmask is not None:
        allowed = allowed & (fmask != -np.inf)
    empty = ~np.asarray(allowed).any(axis=-1)
    if empty.any():
        gq = pin_result(r.grad_query, np.broadcast_to(empty[..., None], tuple(q.shape)), 0.0)
        r.rounded = Gradients(grad_query=gq.rounded, grad_key=r.grad_key.rounded,
                              grad_value=r.grad_value.rounded)
    return r


scaled_dot_product_attention.backward = _backward

__all__ = [*(n for n in op_names() if n in globals()), "kernel"]
