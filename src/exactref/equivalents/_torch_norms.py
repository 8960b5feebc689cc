"""PyTorch equivalents of the normalizations: what torch.nn.functional.layer_norm, rms_norm
and group_norm on CPU may compute (PyTorch 2.13, measured; docs/normalizations.md).

* Every kernel computes in ``at::opmath_type``: float32 for float16 and bfloat16 (and for
  float32), float64 for float64, and rounds the output once (the bfloat16 RMSNorm too: its
  output equals float32 arithmetic rounded once into bfloat16 on every tested element, not
  the unfused ``x * r`` stored in bfloat16 before the weight). ``eps`` is converted into the
  compute type first (the models allow either neighbour).
* **layer_norm**: mean and variance by ``RowwiseMoments`` (vectorized Welford states merged
  in a cascade: ``algorithm="chan"``), ``rstd = 1 / sqrt(var + eps)``, then
  ``fma((x - mean) * rstd, w, b)`` (measured: bit-equal to that on 32768 float32 elements,
  given torch's own mean and rstd).
* **group_norm**: the same moments per group, then the weight folded in per channel:
  ``s = rstd * w``, ``t = fma(-s, mean, b)``, ``y = fma(x, s, t)`` (bit-equal likewise):
  ``form="scale-shift"``, which cancels where ``|mean|`` is large beside the spread.
* **rms_norm**: ``x * rsqrt(mean(x**2) + eps) * w`` fused in the compute type; ``eps=None`` is
  the compute type's machine epsilon (float32's ``2**-23`` for bfloat16, not bfloat16's).

Rows whose sum of squares overflows the compute type (float32 data near 1e30) give 0 where
the exact value is about 1: the models allow it (the variance's interval reaches inf, so the
factor ``r`` reaches 0).

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> x = torch.randn(4, 64, dtype=torch.bfloat16)
>>> ert.rms_norm(x, (64,)).covers(torch.nn.functional.rms_norm(x, (64,))).all()
True
"""

from __future__ import annotations

from .. import linalg
from .._formats import FORMATS
from ..ops import op_names
from ._common import operand
from ._torch_records import contract, data

_HALF = ("float16", "bfloat16")


def _array(x, name="input"):
    X = operand(x, name)
    if X.is_scalar:
        raise TypeError(f"{name} must be a Tensor, not {type(X.scalar).__name__} (PyTorch's "
                        f"error); pass a tensor")
    return X.array


def _opt(v, name):
    return None if v is None else _array(v, name)


def _compute(arr):
    return FORMATS["float64"] if arr.dtype.name == "float64" else FORMATS["float32"]


def _stats(arr, w):
    """The format torch's backward saves the mean and rstd in: x's for float16 and bfloat16
    (the compute type's with a weight of another dtype), the compute type's otherwise."""
    mixed = w is not None and w.dtype.name != arr.dtype.name
    return arr.dtype if arr.dtype.name in _HALF and not mixed else _compute(arr)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on CPU.

    >>> import torch
    >>> import exactref.equivalents.torch as ert
    >>> x = torch.randn(3, 100)
    >>> w, b = torch.rand(100), torch.randn(100)
    >>> out = torch.nn.functional.layer_norm(x, (100,), w, b)
    >>> ert.layer_norm(x, (100,), w, b).covers(out).all()
    True
    """
    arr = _array(input)
    return linalg.layer_norm(arr, normalized_shape, _opt(weight, "weight"),
                             _opt(bias, "bias"), eps, compute=_compute(arr),
                             **contract(layer_norm))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm on CPU (``eps=None``: the compute type's epsilon)."""
    arr = _array(input)
    return linalg.rms_norm(arr, normalized_shape, _opt(weight, "weight"), eps,
                           compute=_compute(arr), **contract(rms_norm))


def _layer_norm_backward(input, grad, normalized_shape, weight=None, bias=None, eps=1e-5):
    """The gradients torch's autograd gives for torch.nn.functional.layer_norm on CPU
    (``LayerNormBackwardKernelImplInternal``): the saved mean and rstd of the forward's model
    stored in x's format for float16 and bfloat16 (float32 with a float32 weight), the
    weight's and bias's gradients accumulated over rows in buffers of x's format.

    >>> import torch
    >>> import exactref.equivalents.torch as ert
    >>> x = torch.randn(4, 32, dtype=torch.bfloat16, requires_grad=True)
    >>> w = torch.rand(32, dtype=torch.bfloat16, requires_grad=True)
    >>> g = torch.randn(4, 32, dtype=torch.bfloat16)
    >>> gx, gw = torch.autograd.grad(torch.nn.functional.layer_norm(x, (32,), w), (x, w), g)
    >>> ref = ert.layer_norm.backward(x.detach(), g, (32,), w.detach())
    >>> bool(ref.grad_x.covers(gx).all() and ref.grad_weight.covers(gw).all())
    True
    """
    arr = _array(input)
    w = _opt(weight, "weight")
    return linalg.layer_norm.backward(arr, _array(grad, "grad"), normalized_shape, w,
                                      _opt(bias, "bias"), eps, compute=_compute(arr),
                                      stats=_stats(arr, w), accumulate=arr.dtype,
                                      **data(layer_norm, "backward"))


def _rms_norm_backward(input, grad, normalized_shape, weight=None, eps=None):
    """The gradients torch's autograd gives for torch.nn.functional.rms_norm on CPU: the
    autograd of its composite (``x.to(opmath) * rsqrt(mean(x**2) + eps) * w``, rounded into
    x's format), every step in the compute type."""
    arr = _array(input)
    return linalg.rms_norm.backward(arr, _array(grad, "grad"), normalized_shape,
                                    _opt(weight, "weight"), eps, compute=_compute(arr),
                                    **data(rms_norm, "backward"))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.group_norm on CPU."""
    arr = _array(input)
    return linalg.group_norm(arr, num_groups, _opt(weight, "weight"), _opt(bias, "bias"), eps,
                             compute=_compute(arr), **contract(group_norm))


def _group_norm_backward(input, grad, num_groups, weight=None, bias=None, eps=1e-5):
    """The gradients torch's autograd gives for torch.nn.functional.group_norm on CPU
    (``GroupNormBackwardKernelImplInternal``, contiguous): per-channel sums in the compute
    type, the saved mean and rstd in x's format for float16 and bfloat16 (float32 with a
    float32 weight)."""
    arr = _array(input)
    w = _opt(weight, "weight")
    return linalg.group_norm.backward(arr, _array(grad, "grad"), num_groups, w,
                                      _opt(bias, "bias"), eps, compute=_compute(arr),
                                      stats=_stats(arr, w), **data(group_norm, "backward"))


layer_norm.backward = _layer_norm_backward
rms_norm.backward = _rms_norm_backward
group_norm.backward = _group_norm_backward

__all__ = [n for n in op_names() if n in globals()]
