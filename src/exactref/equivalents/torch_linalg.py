"""PyTorch equivalents of the long sums: what torch.matmul, torch.addmm and torch.sum on CPU
may compute (PyTorch 2.13).

* **matmul / addmm**: both operands must share a dtype (PyTorch raises otherwise; so does
  this). float32 and float64 run BLAS (blocked, vectorized, FMA: any summation order,
  accumulated in the dtype); float16 and bfloat16 accumulate in float32 (their products are
  exact there) and round once at the end; integers are exact and wrap. ``addmm``'s ``alpha``
  and ``beta`` are converted to the dtype's compute format first (BLAS takes them as the
  dtype: float32 for float32, float16 and bfloat16), and ``beta == 0`` does not read
  ``input``.
* **sum**: integers and bool sum into int64; floats accumulate in their dtype (float32 for
  float16 and bfloat16) in a cascade of vectorized partial sums: any order.

Each function returns the exactref Result of the mathematical operation on the values PyTorch
reads, with PyTorch's accumulation as the modelled implementation, so ``covers(torch_output)``
checks PyTorch against what it promises.

>>> import torch
>>> import exactref.equivalents.torch_linalg as etl
>>> a = torch.randn(8, 64, dtype=torch.bfloat16)
>>> b = torch.randn(64, 4, dtype=torch.bfloat16)
>>> etl.matmul(a, b).covers(torch.matmul(a, b)).all()
True
"""

from __future__ import annotations

import numpy as np

from .._exact._values import ComplexValue, FloatValue
from .._formats import FORMATS
from ..linalg import _ops
from ._common import operand

__all__ = ["matmul", "addmm", "sum"]

_HALF = ("float16", "bfloat16")


def _compute(fmt):
    if fmt.component.name in _HALF:
        return FORMATS["float32"]
    return None


def _same_dtype(a, b, name):
    if a.array.dtype is not b.array.dtype:
        raise TypeError(f"{name}: expected both operands to have the same dtype, but got "
                        f"{a.array.dtype.name} and {b.array.dtype.name} (PyTorch's error); "
                        f"convert one of them")


def matmul(a, b):
    """torch.matmul(a, b) on CPU: the exact product rounded once, covering any accumulation
    order in the dtype (float32 for float16 and bfloat16)."""
    A, B = operand(a, "a"), operand(b, "b")
    if A.is_scalar or B.is_scalar:
        raise ValueError("torch.matmul takes tensors of at least one dimension")
    _same_dtype(A, B, "matmul")
    fmt = A.array.dtype
    return _ops.matmul(A.array, B.array, compute=_compute(fmt), order="any")


def _alpha(v, fmt):
    """alpha or beta as the BLAS call receives it: rounded to float32 for float32 and the half
    formats (to complex64 for complex64), exact for float64 and integers."""
    comp = fmt.component
    if fmt.is_integer:
        return int(v)
    if isinstance(v, complex):
        if comp.name == "float64":
            return ComplexValue(v)
        return ComplexValue(complex(np.complex64(v)))
    if comp.name == "float64":
        return FloatValue(float(v))
    return FloatValue(float(np.float32(v)))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """torch.addmm(input, mat1, mat2, beta=beta, alpha=alpha) on CPU."""
    A, B, C = operand(mat1, "mat1"), operand(mat2, "mat2"), operand(input, "input")
    _same_dtype(A, B, "addmm")
    fmt = A.array.dtype
    c = C.array if not C.is_scalar else C.scalar
    return _ops.gemm(A.array, B.array, c, alpha=_alpha(alpha, fmt), beta=_alpha(beta, fmt),
                     compute=_compute(fmt), order="any")


def sum(x, dim=None, keepdim=False):  # noqa: A001
    """torch.sum(x, dim, keepdim) on CPU."""
    X = operand(x, "x")
    if X.is_scalar:
        raise ValueError("pass a tensor")
    fmt = X.array.dtype
    return _ops.sum(X.array, dim, keepdims=keepdim, compute=_compute(fmt), order="any")
