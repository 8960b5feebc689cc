"""PyTorch equivalents of the long sums: what torch.matmul, torch.addmm, torch.bmm,
torch.baddbmm and torch.sum on CPU may compute (PyTorch 2.13).

* **matmul / addmm**: both operands must share a dtype (PyTorch raises otherwise; so does
  this). float32 and float64 run BLAS (blocked, vectorized, FMA: any summation order,
  accumulated in the dtype); float16 and bfloat16 accumulate in float32 (their products are
  exact there) and round once at the end; integers are exact and wrap. ``addmm``'s ``alpha``
  and ``beta`` are converted to the dtype's compute format first (BLAS takes them as the
  dtype: float32 for float32, float16 and bfloat16), and ``beta == 0`` does not read
  ``input``.
* **bmm / baddbmm**: 3-D operands of one batch size and one dtype (``input`` too; it broadcasts
  to the output). Products of fewer than 400 multiply-adds per matrix (``k * m * n < 400``)
  run a loop of PyTorch's own, larger ones MKL (float32, float64, complex) or the addmm kernel
  (float16, bfloat16, integers); either way float16 and bfloat16 accumulate in float32, and
  ``alpha`` and ``beta`` are read as addmm reads them (:func:`blas_scalar`). ``beta == 0``
  ignores ``input``, NaN included. ``alpha == 0`` skips the product in MKL; PyTorch's own
  loops multiply the accumulated sum by 0, so an infinite or NaN sum gives NaN. float16 and
  bfloat16 products of more than ``16**3`` multiply-adds in all (``b * m * k * n > 4096``, the
  small-loop threshold notwithstanding) run oneDNN instead on CPUs it has kernels for (bfloat16:
  AVX512BW/VL/DQ or AVX-NE-CONVERT; float16: AVX512-FP16, AMX-FP16 or AVX-NE-CONVERT) unless
  ``torch.backends.mkldnn.enabled`` is False; there ``alpha == 0`` skips the product too, so the
  reference allows NaN and ``beta * input`` (measured on an AVX512 AMD EPYC). That path also
  forgets ``beta``, a torch bug the references do not cover: see :func:`baddbmm`.
* **specials** (all but sum): the sum before ``alpha`` scales it may overflow; complex
  products with an infinite or NaN operand may give NaN in both parts (MKL's complex128
  kernels do, PyTorch's own loops multiply complex numbers by the textbook formula); with
  ``alpha`` other than 1, MKL scales an operand first, so a subnormal times an infinity can
  give NaN (``0.5 * 5e-324`` is 0). The references allow these.
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

import math
import numbers

import numpy as np

from .. import linalg
from .._array import Array, asarray
from .._exact import ComplexValue
from .._formats import FORMATS
from ..linalg import BoundResult, ExactResult, scalar_is_one, scalar_is_zero
from ..ops import op_names
from ..promotion import TORCH_C10_NAME as _C10
from ._common import operand, python_scalar
from ._torch_attention import scaled_dot_product_attention  # noqa: F401
from ._torch_conv import conv1d, conv2d, linear  # noqa: F401
from ._torch_cross_entropy import cross_entropy  # noqa: F401
from ._torch_norms import group_norm, layer_norm, rms_norm  # noqa: F401
from ._torch_records import contract
from ._torch_reductions import cumsum, mean, std, var  # noqa: F401
from ._torch_softmax import log_softmax, logsumexp, softmax  # noqa: F401
from .torch import TorchUnsupported

_HALF = ("float16", "bfloat16")
#: the dtypes torch 2.13's CPU bmm and baddbmm have kernels for (measured)
_BMM_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64", "complex128")
#: the keywords of torch's BLAS products (matmul's record: addmm, bmm and baddbmm run the same
#: kernels)
_BLAS = contract("matmul")
#: below this many multiply-adds per matrix, PyTorch's own loop (``baddbmm_cpu_kernel``) runs
_SMALL = 400
#: above this many multiply-adds in all (``b * m * k * n``), float16 and bfloat16 bmm and baddbmm
#: run oneDNN where the CPU has its kernels (``checksize`` in ATen's mkldnn/Matmul.cpp); that
#: test comes before ``_SMALL``'s
_ONEDNN_MIN = 16 * 16 * 16


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
    r = linalg.matmul(A.array, B.array, compute=_compute(fmt), **_BLAS)
    return _torch_specials(r, A.array, B.array)


def _opmath(fmt):
    """The format PyTorch computes ``fmt`` in (``at::opmath_type``): float32 for float16 and
    bfloat16, the format itself otherwise."""
    return FORMATS["float32"] if fmt.component.name in _HALF else fmt.component


def blas_scalar(v, dtype, name="alpha"):
    """``alpha`` or ``beta`` as PyTorch's CPU addmm, bmm and baddbmm read it for operands of
    ``dtype`` (``Scalar.to<opmath_t>()``).

    Floating dtypes: rounded once into float64, float32 (also for float16 and bfloat16, which
    compute in float32; the value is *not* rounded to the dtype) or the complex parts' format;
    a finite value past that format's largest finite value raises, even one that would round
    to it; infinities and NaN pass. Integer dtypes: an int must lie in the dtype's range (an
    unsigned one also takes negatives down to ``-max``, which wrap); a float is truncated
    toward zero, and raises outside the range (NaN too). A complex value with a nonzero
    imaginary part raises for a real dtype; with a zero one it is its real part. Raises
    ValueError where PyTorch raises its RuntimeError.

    >>> import exactref.equivalents.torch_linalg as etl
    >>> etl.blas_scalar(0.1, "bfloat16")         # float32, not bfloat16
    FloatValue(0.10000000149011612)
    >>> etl.blas_scalar(-2.7, "int8"), etl.blas_scalar(-1, "uint8"), etl.blas_scalar(2 + 0j, "int8")
    (-2, 255, 2)
    >>> etl.blas_scalar(-2.7, "uint8")
    Traceback (most recent call last):
    ...
    ValueError: alpha=-2.7 cannot be converted to uint8 without overflow (PyTorch's error: value cannot be converted to type uint8_t without overflow)
    """
    from .._formats import dtype as resolve_dtype

    fmt = resolve_dtype(dtype)
    v = python_scalar(v)
    if isinstance(v, bool):
        v = int(v)
    ctype = (f"{fmt.name}_t" if fmt.is_integer else
             {"float64": "double", "float32": "float"}.get(_opmath(fmt).name, "float"))
    if fmt.kind == "complex":
        ctype = f"c10::complex<{ctype}>"

    def overflow():
        raise ValueError(f"{name}={v!r} cannot be converted to {fmt.name} without overflow "
                         f"(PyTorch's error: value cannot be converted to type {ctype} without "
                         f"overflow)")

    if isinstance(v, numbers.Integral):
        v = int(v)
        if not -(2**63) <= v < 2**64:
            raise OverflowError(f"PyTorch cannot take {name}={v}: int too big to convert")
    elif isinstance(v, complex):
        if fmt.kind != "complex":
            if v.imag != 0:
                overflow()
            v = float(v.real)
    elif isinstance(v, numbers.Real):
        v = float(v)
    else:
        raise TypeError(f"{name} must be a number, got {type(v).__name__}")
    if fmt.is_integer:
        lo, hi = fmt.int_min, fmt.int_max
        if isinstance(v, int):
            if not (lo if fmt.kind == "int" else -hi) <= v <= hi:
                overflow()
            return int(asarray(v, fmt, overflow="wrap").value())
        if not lo <= v <= hi:  # NaN too
            overflow()
        return int(v)
    comp = _opmath(fmt)
    parts = [v.real, v.imag] if isinstance(v, complex) else [v]
    out = []
    for p in parts:
        if isinstance(p, float) and math.isfinite(p) and abs(p) > comp.max_finite:
            overflow()
        out.append(asarray(p, comp).value())
    return ComplexValue(out[0], out[1]) if len(out) == 2 else out[0]


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """torch.addmm(input, mat1, mat2, beta=beta, alpha=alpha) on CPU."""
    A, B, C = operand(mat1, "mat1"), operand(mat2, "mat2"), operand(input, "input")
    _same_dtype(A, B, "addmm")
    fmt = A.array.dtype
    c = C.array if not C.is_scalar else C.scalar
    al, be = blas_scalar(alpha, fmt, "alpha"), blas_scalar(beta, fmt, "beta")
    if A.shape[-1:] == (0,):
        be = _empty_k_beta(be, fmt)
    r = linalg.gemm(A.array, B.array, c, alpha=al, beta=be, compute=_compute(fmt), **_BLAS)
    return _torch_specials(r, A.array, B.array, C.array if not C.is_scalar else None, al, be)


# ----------------------------------------------------------------------- bmm, baddbmm
def _batches(batch1, batch2, name):
    """The two 3-D operands of bmm/baddbmm, checked as PyTorch checks them."""
    A, B = operand(batch1, "batch1"), operand(batch2, "batch2")
    for o in (A, B):
        if o.is_scalar or o.array.ndim != 3:
            raise ValueError(f"{name}: {o.label} must be a 3D tensor (PyTorch's error), got "
                             f"{'a scalar' if o.is_scalar else f'shape {o.shape}'}")
    fa, fb = A.array.dtype, B.array.dtype
    if fa is not fb:
        raise TypeError(f"{name}: batch1 and batch2 must have the same dtype, but got {fa.name} "
                        f"and {fb.name} (PyTorch's error: expected scalar type "
                        f"{_C10.get(fa.name, fa.name)} but found {_C10.get(fb.name, fb.name)}); "
                        f"convert one of them")
    (bs, _, k), (bs2, k2, _) = A.shape, B.shape
    if (bs2, k2) != (bs, k):
        raise ValueError(f"{name}: batch1 of shape {A.shape} and batch2 of shape {B.shape} do not "
                         f"match (PyTorch's error: Expected size for first two dimensions of "
                         f"batch2 tensor to be: [{bs}, {k}] but got: [{bs2}, {k2}].)")
    if fa.name not in _BMM_DTYPES:
        raise TorchUnsupported(f'"{name}" not implemented for {_C10.get(fa.name, fa.name)!r}: '
                               f"PyTorch 2.13 has no CPU {name} for {fa.name}; compute in a "
                               f"wider format and cast")
    return A, B


def _empty_k(arr, axis):
    """A zero operand of size 1 along ``axis`` in place of one of size 0 (the product of an
    empty contraction is an exact zero)."""
    shape = list(arr.shape)
    shape[axis] = 1
    return Array(np.zeros(shape, dtype=arr.numpy().dtype), arr.dtype)


def _empty_k_beta(beta, fmt):
    """``beta`` as PyTorch applies it when the contraction is empty (``k == 0``): addmm and
    baddbmm then return ``input.mul_(beta)``, an elementwise product in the dtype, whose
    Python-number operand is converted to the dtype first (through float32, as torch casts a
    double: twice rounded). float16 and bfloat16 only; other dtypes read it as BLAS does."""
    if fmt.component.name not in _HALF or isinstance(beta, ComplexValue):
        return beta
    return asarray(float(beta), fmt.component).value()  # beta is already a float32 value


def bmm(batch1, batch2):
    """torch.bmm(batch1, batch2) on CPU: each ``batch1[i] @ batch2[i]`` the exact product rounded
    once, covering any accumulation order in the dtype (float32 for float16 and bfloat16);
    integers wrap.

    >>> import torch
    >>> import exactref.equivalents.torch_linalg as etl
    >>> a = torch.randn(3, 8, 40, dtype=torch.bfloat16)
    >>> b = torch.randn(3, 40, 5, dtype=torch.bfloat16)
    >>> etl.bmm(a, b).covers(torch.bmm(a, b)).all()
    True
    """
    A, B = _batches(batch1, batch2, "bmm")
    fmt = A.array.dtype
    (bs, m, k), n = A.shape, B.shape[2]
    if bs * m * n == 0:
        return ExactResult(Array(np.zeros((bs, m, n), fmt.np_dtype), fmt), op="bmm")
    a, b = A.array, B.array
    if k == 0:
        a, b = _empty_k(a, 2), _empty_k(b, 1)
    r = linalg.matmul(a, b, compute=_compute(fmt), **_BLAS)
    r.op = "bmm"
    return _torch_specials(r, a, b)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """torch.baddbmm(input, batch1, batch2, beta=beta, alpha=alpha) on CPU:
    ``beta * input + alpha * (batch1 @ batch2)``, batch by batch, each element one exact sum
    rounded once, covering any accumulation order in the dtype (float32 for float16 and
    bfloat16) with ``alpha`` and ``beta`` applied by separate roundings.

    ``input`` is a tensor of the operands' dtype that broadcasts to ``(b, m, n)``. ``alpha`` and
    ``beta`` are read as :func:`blas_scalar` says. ``beta == 0`` ignores ``input``, NaN
    included; ``alpha == 0`` does not skip the product where PyTorch's own loop or its addmm
    kernel runs (fewer than 400 multiply-adds per matrix, and float16 and bfloat16 products):
    an infinite or NaN product gives NaN there (``0 * inf``), and the reference is NaN. MKL's
    path (larger float32, float64 and complex products) skips it, as BLAS does. float16 and
    bfloat16 products of more than 4096 multiply-adds in all (``b * m * k * n``) may run
    oneDNN, depending on the CPU (bfloat16: AVX512BW/VL/DQ or AVX-NE-CONVERT; float16:
    AVX512-FP16, AMX-FP16 or AVX-NE-CONVERT) and on ``torch.backends.mkldnn.enabled``; it skips
    the product, so there the reference allows both NaN and ``beta * input``.

    PyTorch 2.13's oneDNN path returns before it applies ``beta`` when ``alpha == 0``
    (``mkldnn_matmul``: ``if (alpha == 0) return;``): it gives ``input`` unscaled for
    ``beta != 0`` and uninitialised memory, different on every call, for ``beta == 0``. That is
    a torch bug, and the reference does not cover it (``beta == 1`` alone comes out right).

    >>> import torch
    >>> import exactref.equivalents.torch_linalg as etl
    >>> c = torch.randn(5, dtype=torch.float16)
    >>> a = torch.randn(2, 3, 64, dtype=torch.float16)
    >>> b = torch.randn(2, 64, 5, dtype=torch.float16)
    >>> out = torch.baddbmm(c, a, b, beta=0.5, alpha=-0.1)
    >>> etl.baddbmm(c, a, b, beta=0.5, alpha=-0.1).covers(out).all()
    True
    >>> nan_input = torch.full((2, 3, 5), float("nan"), dtype=torch.float16)
    >>> etl.baddbmm(nan_input, a, b, beta=0).covers(torch.baddbmm(nan_input, a, b, beta=0)).all()
    True
    """
    C = operand(input, "input")
    if C.is_scalar:
        raise TypeError(f"baddbmm(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(C.scalar).__name__} (PyTorch's error); pass a tensor")
    A, B = _batches(batch1, batch2, "baddbmm")
    fmt = A.array.dtype
    if C.array.dtype is not fmt:
        raise TypeError(f"baddbmm: input dtypes must be the same, got: input {C.array.dtype.name}, "
                        f"batch1: {fmt.name}, batch2: {fmt.name} (PyTorch's error); convert one "
                        f"of them")
    (bs, m, k), n = A.shape, B.shape[2]
    out_shape = (bs, m, n)
    try:
        ok = len(C.shape) <= 3 and tuple(np.broadcast_shapes(C.shape, out_shape)) == out_shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"baddbmm: input of shape {C.shape} does not broadcast to the output "
                         f"shape {out_shape} (PyTorch's error: the expanded size of the tensor "
                         f"must match the existing size)")
    al, be = blas_scalar(alpha, fmt, "alpha"), blas_scalar(beta, fmt, "beta")
    if bs * m * n == 0:
        return ExactResult(Array(np.zeros(out_shape, fmt.np_dtype), fmt), op="baddbmm")
    a, b = A.array, B.array
    if k == 0:  # PyTorch: zeros where beta == 0, else input * beta
        a, b = _empty_k(a, 2), _empty_k(b, 1)
        be = _empty_k_beta(be, fmt)
    compute = _compute(fmt)
    r = linalg.gemm(a, b, C.array, alpha=al, beta=be, compute=compute, **_BLAS)
    r.op = "baddbmm"
    half = fmt.component.name in _HALF
    own_loop = k * m * n < _SMALL or half
    onednn = half and bs * m * k * n > _ONEDNN_MIN
    return _torch_specials(r, a, b, C.array, al, be, zero_alpha_reads=own_loop,
                           zero_alpha_may_skip=onednn)


# ---------------------------------------------------------- what the bound does not say
def _magnitudes(arr: Array):
    """float64 ``|re| + |im|`` of each element (0 where it is not finite), and where it is not
    finite."""
    w = arr.numpy()
    if arr.dtype.kind == "complex":
        w = w.astype(np.complex128)
        m = np.abs(w.real) + np.abs(w.imag)
    else:
        m = np.abs(w.astype(np.float64))
    bad = ~np.isfinite(m)
    return np.where(bad, 0.0, m), bad


def _torch_specials(r, a, b, c=None, alpha=1, beta=0, zero_alpha_reads=False,
                    zero_alpha_may_skip=False):
    """``r``, the reference of ``alpha * a @ b + beta * c`` (matmul semantics), widened where
    PyTorch's kernels may give what exactref's model of a long sum does not cover:

    * the sum ``a @ b`` itself, before ``alpha`` scales it, may overflow the compute format
      (PyTorch scales the accumulated sum): anything goes there, as where a partial sum of
      the scaled terms may overflow;
    * complex formats: where an operand the element reads is infinite or NaN, both parts may
      be NaN (MKL's complex128 kernels give NaN for ``inf * z``, and PyTorch's own loops
      multiply complex numbers by the textbook formula);
    * ``alpha`` other than 1: the same, for real formats too (MKL scales an operand by alpha
      first, and a subnormal times 0.5 is 0, times inf NaN);
    * ``alpha == 0`` where PyTorch's own loop runs (``zero_alpha_reads``): the product is
      still summed and multiplied by 0, so an infinite or NaN sum gives NaN; where another
      kernel may run instead and skip the product (``zero_alpha_may_skip``: oneDNN), NaN is
      allowed there but not required, and the reference stays ``beta * c``.
    """
    fmt = r.rounded.dtype
    if fmt.is_integer:
        return r
    shape = tuple(r.rounded.shape)
    ma, bad_a = _magnitudes(a)
    mb, bad_b = _magnitudes(b)
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.matmul(ma, mb) * (1 + 2.0**-40)
    anything = ~(total <= _opmath(fmt).max_finite)
    maybe_nan = np.zeros(shape, bool)
    must_nan = np.zeros(shape, bool)
    if not scalar_is_zero(alpha) and (fmt.kind == "complex" or not scalar_is_one(alpha)):
        reads = np.matmul(bad_a.astype(np.float64), np.ones(mb.shape)) + \
            np.matmul(np.ones(ma.shape), bad_b.astype(np.float64))
        maybe_nan |= reads > 0
    if fmt.kind == "complex" and c is not None and not scalar_is_zero(beta):
        maybe_nan |= np.broadcast_to(_magnitudes(c)[1], shape)
    if not all(np.isfinite(complex(v)) for v in (alpha, beta)):
        maybe_nan[...] = True  # inf * 0, and complex products by the textbook formula
    if scalar_is_zero(alpha):
        anything[...] = False  # no product scaled by alpha: BLAS skips it, or see below
    if zero_alpha_reads and scalar_is_zero(alpha):
        prod = linalg.matmul(a, b, dtype=_opmath(fmt) if fmt.kind != "complex" else fmt,
                           compute=_compute(fmt), **_BLAS)
        for lo, hi, nan, *_ in prod._bounds():
            with np.errstate(invalid="ignore"):
                maybe_nan |= nan | ~np.isfinite(lo) | ~np.isfinite(hi)
                must_nan |= (np.isnan(lo) & np.isnan(hi)) | (np.isinf(lo) & (lo == hi))
        if zero_alpha_may_skip:
            must_nan[...] = False
    anything = np.broadcast_to(anything, shape)
    if not (anything.any() or maybe_nan.any() or must_nan.any()):
        return r
    base = r._bounds

    def bounds():
        out = []
        for lo, hi, nan, *_ in base():
            lo = np.where(must_nan, np.nan, np.where(anything, -np.inf, lo))
            hi = np.where(must_nan, np.nan, np.where(anything, np.inf, hi))
            part = (lo, hi, nan | anything | maybe_nan | must_nan)
            terms = getattr(r, "terms_sum", None)  # for weak_check
            out.append(part if terms is None else part + (terms,))
        return out

    values = r.rounded.numpy().copy()
    values[must_nan] = complex(np.nan, np.nan) if fmt.kind == "complex" else np.nan
    return _same_inputs(r, BoundResult(Array(values, fmt), bounds, op=r.op,
                       models=r.models + ("PyTorch's specials: an overflowing sum before alpha "
                                          "scales it, NaN from complex infinities, 0 * inf"
                                          + (" or a skipped product (oneDNN)"
                                             if zero_alpha_may_skip and scalar_is_zero(alpha)
                                             else ""),),
                       details=r.details))


def _same_inputs(source, result):
    """``result`` with the inputs ``source`` recorded (for failure reports)."""
    result.inputs = source.inputs
    slices = getattr(source, "input_slices", None)
    if slices is not None:
        result.input_slices = slices
    return result


def sum(x, dim=None, keepdim=False):  # noqa: A001
    """torch.sum(x, dim, keepdim) on CPU. As in torch, ``dim=()`` (or ``[]``) sums every
    dimension (numpy's ``axis=()`` sums none), and a 0-d tensor takes ``dim`` 0 or -1.

    >>> import torch
    >>> import exactref.equivalents.torch_linalg as etl
    >>> etl.sum(torch.ones(2, 3), dim=()).rounded.tolist(), torch.sum(torch.ones(2, 3), dim=())
    (6.0, tensor(6.))
    """
    X = operand(x, "x")
    if X.is_scalar:
        raise TypeError(f"sum(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(X.scalar).__name__} (PyTorch's error); pass a tensor")
    fmt = X.array.dtype
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None  # Note: torch reduces every dimension for an empty dim list
    return linalg.sum(X.array, dim, keepdims=keepdim, compute=_compute(fmt), **contract(sum))

#: the long sums' equivalents (the registry's names, in its order; ``addmm`` and ``baddbmm`` are
#: ``gemm``'s, ``bmm`` ``matmul``'s) and the rows' ones, gathered here
__all__ = [*(n for n in op_names() if n in globals()), "addmm", "bmm", "baddbmm", "blas_scalar"]
