"""PyTorch equivalents of the rational reductions: what torch.mean, torch.var, torch.std and
torch.cumsum on CPU may compute (PyTorch 2.13, measured; docs/reductions.md).

* **mean**: float16 and bfloat16 are summed in float32, divided in float32, then rounded into
  the dtype (ATen's ``mean_out`` upcasts them: "for accuracy reasons"); float32 and float64 are
  summed in their own dtype (a cascade of vectorized partial sums: any order) and divided there.
  Integer inputs raise without ``dtype``, as PyTorch does; ``dtype=`` converts the input first.
* **var / std**: float32 and float64 accumulate in float64: a Welford reduction where the
  result has two or more elements (``WelfordOps<scalar_t, double>``; measured: the exact value
  rounded once; threads' states merged by Chan's formula), and where it has one (every element reduced, or one row) a two-pass sum of
  ``(x - mean)**2`` in double around a mean computed in the dtype, float32 for float32 data:
  a float32 vector of 10**5 values near 1e4 has a variance 1.75 times the exact one
  (docs/reductions.md); the result rounds once from double. float16 and bfloat16 are computed in float32 (their std
  takes its square root in float32: measured, one element in 4096 differs from the root of the
  float64 variance). ``correction >= n`` divides by ``max(0, n - correction)``: ``inf``, or NaN
  where the variance is 0; a negative correction is accepted (a divisor above n).
* **cumsum**: one running sum, left to right (``cpu_cum_base_kernel``), in ``at::acc_type``:
  float64 for float32 and float64 data, float32 for float16 and bfloat16 (each prefix rounded
  into the dtype); integers and bool sum into int64, exactly, wrapping.

>>> import torch
>>> import exactref.equivalents.torch as ert
>>> x = torch.randn(4, 300, dtype=torch.bfloat16)
>>> ert.var(x, 1).covers(torch.var(x, 1)).all(), ert.cumsum(x, 1).covers(torch.cumsum(x, 1)).all()
(True, True)
"""

from __future__ import annotations

from .. import linalg
from .._formats import FORMATS
from ..ops import op_names
from ._common import operand
from ._torch_records import contract

_HALF = ("float16", "bfloat16")


def _tensor(x, op):
    X = operand(x, "x")
    if X.is_scalar:
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(X.scalar).__name__} (PyTorch's error); pass a tensor")
    return X.array


def _dims(dim):
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return None  # Note: torch reduces every dimension for an empty dim list
    return dim


def mean(x, dim=None, keepdim=False, *, dtype=None):
    """torch.mean(x, dim, keepdim, dtype=dtype) on CPU.

    >>> import torch
    >>> import exactref.equivalents.torch as ert
    >>> x = torch.full((1000,), 0.1, dtype=torch.float16)
    >>> ert.mean(x).covers(torch.mean(x)).all()
    True
    """
    arr = _tensor(x, "mean")
    fmt = arr.dtype if dtype is None else FORMATS[_name(dtype)]
    if fmt.kind != "float":
        raise TypeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                        f"floating point or complex dtype. Got: {fmt.name} (PyTorch's error); "
                        f"pass dtype=torch.float32")
    compute = FORMATS["float32"] if fmt.name in _HALF else fmt
    return linalg.mean(arr, _dims(dim), keepdim, dtype, compute=compute, **contract(mean))


def _var(op, x, dim, correction, keepdim, root):
    arr = _tensor(x, op)
    fmt = arr.dtype
    if fmt.kind != "float":
        raise TypeError(f"{op}(): std and var only support floating point and complex dtypes; "
                        f"got {fmt.name} (PyTorch's error)")
    dim = _dims(dim)
    axes = linalg.reduction_axes(op, dim, arr.shape)
    outputs = 1
    for d, size in enumerate(arr.shape):
        outputs *= 1 if d in axes else size
    if fmt.name in _HALF:  # computed in float32 (the square root too), then rounded
        compute = mean_compute = FORMATS["float32"]
        algorithm = "stable"  # two-pass, Welford or Chan (not the one-pass formula)
    elif outputs <= 1:  # one output: two-pass, the mean in the dtype, the squares in double
        compute, mean_compute, algorithm = FORMATS["float64"], fmt, "two-pass"
    else:  # Welford in double, threads' states merged by Chan's formula
        compute, mean_compute, algorithm = FORMATS["float64"], None, "chan"
    corr = 1 if correction is None else correction
    return linalg.var_kernel(op, arr, dim, corr, keepdim, None, None, None,
                                 "nearest_even", None, compute, contract(op)["order"],
                                 algorithm, root,
                                 mean_compute=mean_compute, negative_ok=True)


def var(x, dim=None, correction=None, keepdim=False):
    """torch.var(x, dim, correction=..., keepdim=...) on CPU (``correction=None``: 1).

    >>> import torch
    >>> import exactref.equivalents.torch as ert
    >>> x = torch.tensor([[1.0, 2.0, 4.0]])
    >>> ert.var(x, 1).rounded.tolist(), torch.var(x, 1).tolist()
    ([2.3333332538604736], [2.3333332538604736])
    """
    return _var("var", x, dim, correction, keepdim, root=False)


def std(x, dim=None, correction=None, keepdim=False):
    """torch.std(x, dim, correction=..., keepdim=...) on CPU."""
    return _var("std", x, dim, correction, keepdim, root=True)


def cumsum(x, dim, *, dtype=None):
    """torch.cumsum(x, dim, dtype=dtype) on CPU: one running sum in ``at::acc_type``.

    >>> import torch
    >>> import exactref.equivalents.torch as ert
    >>> x = torch.tensor([1.0] + [2.0**-24] * 8)     # float32 accumulated in double
    >>> out = torch.cumsum(x, 0)
    >>> out[-1].item(), ert.cumsum(x, 0).covers(out).all()
    (1.0000004768371582, True)
    """
    arr = _tensor(x, "cumsum")
    fmt = arr.dtype if dtype is None else FORMATS[_name(dtype)]
    if fmt.kind == "float":
        compute = FORMATS["float32"] if fmt.name in _HALF else FORMATS["float64"]
    else:
        compute = None
    return linalg.cumsum(arr, dim, dtype=dtype if dtype is None else fmt.name,
                              compute=compute, **contract(cumsum))


def _name(dtype) -> str:
    from .._formats import dtype as resolve

    return resolve(dtype).name

__all__ = [n for n in op_names() if n in globals()]
