"""PyTorch equivalent of cross_entropy: what torch 2.13's CPU kernels may compute (measured;
docs/cross_entropy.md, "What PyTorch computes"; aten/src/ATen/native/LossNLL.cpp).

* **log_softmax** first (``at::log_softmax(self, 1, self.scalar_type())``), stored in the
  input's format: float16 and bfloat16 compute in float32 and, over the last dimension (an
  ``(N, C)`` input), store the sum and its logarithm in their format too (the log_softmax
  equivalent, :mod:`._torch_softmax`); SLEEF's ``exp_u10`` and glibc's ``log``.
* **class indices** (``nll_loss``, ``nll_loss2d`` for more dimensions): each term
  ``-lsm[y] * w[y]`` and the sum over the samples computed in ``scalar_t``, the input's
  format (c10::BFloat16 arithmetic: every operation in float32 rounded into bfloat16), in a
  cascade of 8 levels of partial sums flushed every 16; the mean divides by the weights' sum
  (the same cascade) or by the count converted into the format.
* **label smoothing** (``cross_entropy_loss_label_smoothing``): ``-(lsm * w).sum(1)`` and the
  reductions as tensor ops (products stored in the format, sums accumulated in float32),
  then ``(1 - eps) * nll + ret * (eps / C)``, each a tensor op.
* **probabilities** (``cross_entropy_loss_prob_target``): ``-(lsm * target * w).sum()``,
  divided by ``numel / C`` for the mean; the smoothing ``target * (1 - eps) + eps / C``
  first, tensor ops each.
* **specials**: torch's formula multiplies a ``-inf`` log-softmax by a weight or a
  probability of 0 (NaN, where the exact loss takes ``0 log 0 = 0``), and a row with a
  ``+inf`` logit has a NaN log-softmax (``inf - inf``): those outputs are NaN here too.

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> x = torch.randn(64, 10, dtype=torch.bfloat16) * 3
>>> y = torch.randint(0, 10, (64,))
>>> F = torch.nn.functional
>>> ert.cross_entropy(x, y).covers(F.cross_entropy(x, y)).all()
True
>>> ert.cross_entropy(x, y, label_smoothing=0.1, reduction="none").covers(
...     F.cross_entropy(x, y, label_smoothing=0.1, reduction="none")).all()
True
"""

from __future__ import annotations

import numpy as np

from ..linalg import cross_entropy_kernel, cross_entropy_parse
from ..ops import op_names
from ._common import operand, pin_result
from ._torch_records import counterpart

_HALF = ("float16", "bfloat16")


def _tensor(x, name):
    X = operand(x, name)
    if X.is_scalar:
        raise TypeError(f"cross_entropy(): argument '{name}' must be Tensor, not "
                        f"{type(X.scalar).__name__} (PyTorch's error); pass a tensor")
    return X.array


def _torch_nan(call) -> np.ndarray:
    """Per output, whether torch's formula gives NaN: its log-softmax (``x - max - log sum``,
    NaN for a row with ``+inf``) times the weights and targets in float64, IEEE's rules."""
    X = call.X
    with np.errstate(all="ignore"):
        m = X.max(axis=1, keepdims=True) if call.C else np.zeros((call.R, 1))
        lsm = X - m - np.log(np.exp(X - m).sum(axis=1, keepdims=True))
        w = np.ones(call.C) if call.w is None else call.w
        eps = float(call.eps)
        if call.T is None:
            rows = np.arange(call.R)
            nll = np.where(call.counts, -lsm[rows, call.y] * w[call.y], 0.0)
            smooth = np.where(call.counts, -(lsm * w).sum(axis=1), 0.0) if eps else 0.0
            per = (1 - eps) * nll + smooth * (eps / call.C) if eps else nll
            if call.reduction != "none":
                per = np.array([nll[call.counts].sum() + (
                    smooth[call.counts].sum() if eps else 0.0)])
        else:
            t = call.T * (1 - eps) + eps / call.C if eps else call.T
            per = -(lsm * t * w).sum(axis=1)
            if call.reduction != "none":
                per = np.array([per.sum()])
    return np.isnan(per)


def _with_nan(result, hit):
    """``result`` with NaN (rounded and allowed) where ``hit``."""
    return pin_result(result, hit.reshape(result.rounded.shape), np.nan)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """torch.nn.functional.cross_entropy(input, target, weight, ignore_index=ignore_index,
    reduction=reduction, label_smoothing=label_smoothing) on CPU."""
    x = _tensor(input, "input")
    t = _tensor(target, "target")
    w = None if weight is None else _tensor(weight, "weight")
    if w is not None and w.dtype is not x.dtype:
        raise TypeError(f"expected scalar type {x.dtype.name} but found {w.dtype.name} "
                        f"(PyTorch's error: the weight must have the input's dtype)")
    out = x.dtype.name
    cp = counterpart(cross_entropy)
    # log_softmax's lastdim kernel (nothing after the classes): its halves store s and log s
    last = int(np.prod(x.shape[min(x.ndim - 1, 1) + 1:], dtype=np.int64)) == 1
    steps = cp.data["stored_steps"]["lastdim" if last else "other"] if out in _HALF else ()
    # every step stored in the input's format
    r = cross_entropy_kernel(x, t, w, ignore_index, reduction, label_smoothing, "nearest_even",
                             None, None, None, cp.data["exp"], cp.data["log"],
                             cp.contract["order"], stored=out, lsm_steps=steps,
                             nll_order=cp.data["nll_order"], nll_accumulate=out)
    call = cross_entropy_parse(x, t, w, ignore_index, reduction, label_smoothing)
    return _with_nan(r, _torch_nan(call))

__all__ = [n for n in op_names() if n in globals()]
