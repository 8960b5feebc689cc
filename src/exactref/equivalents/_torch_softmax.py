"""PyTorch equivalents of softmax, log_softmax and logsumexp: what torch 2.13's CPU kernels may
compute (measured; docs/softmax.md, "What PyTorch computes").

* **softmax** (``_vec_softmax_lastdim`` and ``_vec_softmax``): the max subtracted, SLEEF's
  ``expf_u10``/``exp_u10`` (measured: within 0.93 ulp of float32 over [-78, 0]), the sum in
  any order, then ``e * (1 / s)``; float16 and bfloat16 computed in float32 and rounded once.
  Across a dimension that is not the last, the scalar tail of the vectorized loop calls
  ``std::exp`` and stores each exponential in the half format before dividing it (measured:
  the last 8 of 40 inner positions reach 1.34 float16 ulps).
* **log_softmax**: the same sum, ``std::log`` of it (glibc's bound declared), ``x - m - log``;
  over the last dimension float16 and bfloat16 compute in float32 but store the sum ``s`` and
  its logarithm in the input's format (over another dimension everything is float32) (measured: this matches every one of 18,000 elements, the other orders of
  rounding do not): the entry at the maximum of a row whose other terms are small comes out
  ``+0`` or ``-2**-7`` where the exact value is ``-log1p(T)``, e.g. ``-5.85e-5``: 245
  bfloat16 ulps.
* **logsumexp** (``logsumexp_out_impl``, tensor ops): ``amax``, then ``exp(x - m)``, ``sum``,
  ``log`` and ``+ m`` each a tensor op in the dtype: float16 and bfloat16 store every step in
  the dtype (each computed in float32); the exponential and logarithm may run vectorized
  (SLEEF) or scalar (glibc): glibc's bound declared for both.
* **special rows**: a NaN gives NaN; a row of ``-inf`` gives NaN (logsumexp ``-inf``); a
  ``+inf`` entry gives NaN for softmax and log_softmax (``inf - inf`` in ``x - max``) where the
  mathematical limit is 1 and 0 with a single ``+inf`` (``er.softmax``'s answer), and
  logsumexp ``+inf``.

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> x = torch.randn(8, 100, dtype=torch.bfloat16) * 4
>>> ert.softmax(x, 1).covers(torch.softmax(x, 1)).all()
True
>>> ert.log_softmax(x, 1).covers(torch.log_softmax(x, 1)).all()
True

**Backward** (``ert.softmax.backward(x, grad, dim)``, ``ert.log_softmax.backward``): torch
2.13's ``_softmax_backward_data`` and ``_log_softmax_backward_data`` read the forward output
``y`` as the forward kernel stored it (the band of ``ert.softmax``/``ert.log_softmax``), compute
``y * (g - sum(g * y))`` and ``g - exp(out) * sum(g)`` in float32 for float16 and bfloat16
(measured: every element of 6,400 per path is that rounded once; storing the sum in the half
format, or every step, differs in 68 to 835), ``exp`` vectorized (SLEEF) over the last
dimension and ``std::exp`` in another's scalar tail; a row with a ``+inf`` entry gives NaN (its
forward output is NaN).

>>> xr = x.float().requires_grad_()
>>> g = torch.randn(8, 100)
>>> (gx,) = torch.autograd.grad(torch.softmax(xr, 1), xr, g)
>>> ert.softmax.backward(xr.detach(), g, 1).covers(gx).all()
True
"""

from __future__ import annotations

import numpy as np

from .._array import Array
from .._formats import dtype as resolve_dtype
from .._result import Gradients
from ..linalg import (
    reduction_axes,
    softmax_backward_kernel,
    softmax_input,
    softmax_kernel,
)
from ..ops import op_names
from ._common import pin_result
from ._torch_records import counterpart
from ._torch_reductions import _tensor

_HALF = ("float16", "bfloat16")
#: what torch's softmax spells its reduction axis for (the axis rules are softmax's)
_AXES_OF = "softmax"


def _inf_rows_nan(result, x: Array, dim):
    """PyTorch's NaN where a row has a +inf entry (``x - max`` is ``inf - inf``)."""
    data = np.asarray(x.numpy()).astype(np.float64)
    if data.ndim == 0 or not np.isposinf(data).any():
        return result
    hit = np.broadcast_to(np.isposinf(data).any(axis=dim, keepdims=True), data.shape)
    return pin_result(result, hit, np.nan)


def _last(arr: Array, dim) -> bool:
    """Whether ``dim`` is the last dimension with more than one element after it (PyTorch's
    ``*_lastdim`` kernels run where the inner size is 1)."""
    axes = reduction_axes(_AXES_OF, dim, arr.shape)
    inner = int(np.prod(arr.shape[max(axes) + 1:], dtype=np.int64)) if axes else 1
    return inner == 1


def _layout(arr: Array, dim) -> str:
    """Which of torch's kernels runs: ``"lastdim"`` (nothing follows the reduced dimension) or
    ``"other"`` (the keys of the records' per-layout torch data)."""
    return "lastdim" if _last(arr, dim) else "other"


def _by_layout(value, arr: Array, dim):
    """A record's torch fact: the same for every layout, or a dict by :func:`_layout`."""
    return value[_layout(arr, dim)] if isinstance(value, dict) else value


def _rows(fn, arr: Array, dim, dtype, keepdim, out: str):
    """torch's kernel of ``fn`` (softmax, log_softmax or logsumexp) as the op's record
    declares it (``Counterpart.contract`` and ``.data``): the exponential's and logarithm's
    accuracy, and for float16 and bfloat16 the steps stored in the format."""
    cp = counterpart(fn)
    steps = _by_layout(cp.data["stored_steps"], arr, dim) if out in _HALF else ()
    return softmax_kernel(fn.__name__, arr, dim, None, dtype, keepdim, "nearest_even", None,
                          None, None, _by_layout(cp.data["exp"], arr, dim), cp.data["log"],
                          cp.contract["order"], None, stored=out if steps else None,
                          steps=steps)


def softmax(x, dim, dtype=None):
    """torch.softmax(x, dim, dtype=dtype) on CPU (``dtype`` converts x first). Across a
    dimension that is not the last, the scalar tail of the vectorized loop stores each
    exponential in float16 or bfloat16 before dividing (its sum reads them unstored), and
    calls ``std::exp`` (glibc's bound declared)."""
    arr = _tensor(x, softmax.__name__)
    out = arr.dtype.name if dtype is None else resolve_dtype(dtype).name
    return _inf_rows_nan(_rows(softmax, arr, dim, dtype, False, out), arr, dim)


def log_softmax(x, dim, dtype=None):
    """torch.log_softmax(x, dim, dtype=dtype) on CPU: float16 and bfloat16 store the sum and
    its logarithm in their format before the subtraction (the lastdim kernel; across another
    dimension host_softmax computes all in float32)."""
    arr = _tensor(x, log_softmax.__name__)
    out = arr.dtype.name if dtype is None else resolve_dtype(dtype).name
    return _inf_rows_nan(_rows(log_softmax, arr, dim, dtype, False, out), arr, dim)


def logsumexp(x, dim, keepdim=False):
    """torch.logsumexp(x, dim, keepdim) on CPU: tensor ops, each step stored in the dtype."""
    arr = _tensor(x, logsumexp.__name__)
    out = arr.dtype.name if arr.dtype.kind == "float" else "float32"
    return _rows(logsumexp, arr, dim, None, keepdim, out)


def _backward(forward, x, grad, dim, dtype):
    """torch's backward of ``forward`` (this module's softmax or log_softmax; see the module's
    docstring): its forward band, the formula in float32 (the half formats) or the format,
    rounded once."""
    op = forward.__name__
    arr = _tensor(x, op)
    fwd = forward(arr, dim, dtype)
    cp = counterpart(forward)
    model = cp.data["backward"]
    r = softmax_backward_kernel(op, arr, grad, dim, None, dtype, "nearest_even", None, None,
                                None, _by_layout(model["exp"], arr, dim), model["log"],
                                cp.contract["order"], "model", forward_result=fwd)
    g = _inf_rows_nan(r.grad_x, softmax_input(op, arr, dtype, False)[0], dim)
    g.op = f"torch.{op}.backward"
    return Gradients(g, None)


def softmax_backward(x, grad, dim, dtype=None):
    """The gradient torch.autograd gives for ``torch.softmax(x, dim, dtype)`` (with respect to
    its input converted into ``dtype``): ``ert.softmax.backward``."""
    return _backward(softmax, x, grad, dim, dtype)


def log_softmax_backward(x, grad, dim, dtype=None):
    """The gradient torch.autograd gives for ``torch.log_softmax(x, dim, dtype)``:
    ``ert.log_softmax.backward``."""
    return _backward(log_softmax, x, grad, dim, dtype)


softmax.backward = softmax_backward
log_softmax.backward = log_softmax_backward

__all__ = [n for n in op_names() if n in globals()]
