"""The builders of the real functions' counterparts in torch and numpy (:mod:`.functions`'
declarations call them): each gives a :class:`~exactref.ops.Counterpart` with the library's
contract (its accuracy per dtype class or loop) and its data (the kernel's source, the measured
maxima, the facts ``exactref.equivalents`` reads), so one declaration states both libraries.

>>> c = numpy_counterpart("np.exp", (0.69, 2.165, 2.0, 0.501))
>>> c, c.contract["accuracy"]["ml_dtypes"], c.data["measured"]["float32"]
('np.exp', 1.0, 2.165)
"""

from __future__ import annotations

import numpy as np

from ..ops import Counterpart

__all__ = ["INF", "KVEC", "NAN", "SLEEF_DOMAIN", "SLEEF_GEN", "VML", "numpy_counterpart",
           "torch_counterpart"]


# ------------------------------------------------------------- torch's kernels (counterparts)
#: torch's kernels, by kind: ``VML`` (MKL in float32 and float64, SLEEF's f16 variants in the
#: half formats), ``SLEEF_GEN`` (SLEEF everywhere), ``KVEC`` (SLEEF vectorized, the C library in
#: the scalar loop); ``{f}`` the function's name in the library, ``{M}`` MKL's
VML = ("UnaryOpsKernel.cpp IMPLEMENT_*_KERNEL -> vml::v{f} (ATen/cpu/vml.h): float32 and "
       "float64 call MKL's vs{M}/vd{M} in VML_HA mode on every path (strided data is copied "
       "into a buffer first); float16 and bfloat16 run vec::map over Vectorized<float>::{f} "
       "(SLEEF's {f}f16_u10) and round into the dtype")
SLEEF_GEN = ("UnaryOpsKernel.cpp IMPLEMENT_*_KERNEL -> vml::v{f} (ATen/cpu/vml.h, no MKL "
             "variant): vec::map over Vectorized<T>::{f}, SLEEF's {f}_u10 on every path")
KVEC = ("UnaryOpsKernel.cpp {f}_kernel: cpu_kernel_vec, vectorized SLEEF {f}_u10, scalar "
        "loop (tails, strided tensors) std::{f} from the C library")
#: SLEEF's sinh and cosh return an infinity of the right sign beyond these |x| (SLEEF's
#: reference: "The error bound of the returned value is 1.0 ULP if a is in [-88.5, 88.5]"
#: (float), [-709, 709] (double); measured: infinities from |x| = 88.80 in float32).
SLEEF_DOMAIN = {"float32": 88.5, "float64": 709.0}
_TORCH_SOURCE = "torch 2.13.0+cpu, MKL 2024.2, AVX512, glibc 2.36, AMD EPYC"


def torch_counterpart(call, source=None, accuracy=None, measured=None, **data):
    """torch's counterpart of a real function on the CPU (``exactref.equivalents.torch``
    reads it). ``accuracy`` (float64, float32, float16 and bfloat16: computed in float32), in
    ulps of the compute format, is the contract (``{"accuracy": per dtype class}``; a preset
    name, or ``"abs"``: an absolute error); ``data``: the kernel's ``source`` (the code and the
    library it calls), the ``measured`` maxima (float64, float32, float16, bfloat16;
    ``scripts/measure_function_accuracy.py``, vectorized and strided loops together), and
    facts the equivalents read: ``step`` (the function's accuracy where PyTorch's formulas
    call it: SLEEF's u10 vectorized, glibc's in the scalar loop, the larger),
    ``sleef_overflow`` (the ``|x|`` per format beyond which SLEEF returns an infinity, of
    x's sign where ``odd``), ``complex128_formula`` (the complex128 kernel is a formula of
    another function), ``bf16_flush`` (subnormal bfloat16 results flushed to zero)."""
    contract = None
    if accuracy is not None:
        contract = {"accuracy": dict(zip(("float64", "float32", "reduced"), accuracy,
                                         strict=True))}
    if measured is not None:
        data["measured"] = dict(zip(("float64", "float32", "float16", "bfloat16"), measured,
                                    strict=True))
    return Counterpart(call, contract=contract, source=_TORCH_SOURCE,
                       data={"source": source, **data})


# ------------------------------------------------------------- numpy's kernels (counterparts)
INF, NAN = np.inf, np.nan
#: Where the numpy counterparts' numbers come from.
_NUMPY_SOURCE = ("numpy 2.4 ufunc loops (ml_dtypes 0.6/0.7 loops alike); measured maxima from "
                 "scripts/measure_function_accuracy.py (numpy 2.4.6, AMD EPYC, AVX-512), glibc "
                 "2.36 behind ml_dtypes' loops and the complex functions")


def numpy_counterpart(call, measured, *, accuracy=None, complex=None, specials=(),
                      integers=False):
    """numpy's counterpart of a real function (``exactref.equivalents.numpy`` builds its
    equivalent from it). ``contract``: ``{"accuracy": per loop}``, the accuracy of each of
    numpy's loops in ulps of the format it computes in: ``"float64"``, ``"float32"`` (float16
    too: its loop computes in float32) and ``"ml_dtypes"`` (ml_dtypes' loops call the C
    library's float function, glibc's ``expf``): the ``numpy`` preset for the first two, and
    glibc 2.36's measured float32 error rounded up to a quarter ulp (at least 1) for ml_dtypes,
    unless ``accuracy`` says otherwise. ``data``: the ``measured`` maxima (float64, float32,
    float16, glibc float32; ulps of the compute format), ``complex`` glibc's complex function
    behind the op (its source, the normwise accuracy allowed in ulps of ``|f|``, the measured
    maxima complex128/complex64: numpy's npymath and torch's ``c10::complex`` both call it),
    ``specials`` glibc's special values where they depart from C99 Annex G (rows ``((re, im),
    (out_re, out_im))``), ``integers``: integer operands give the exact power, wrapped, and a
    negative exponent raises (numpy's integer power)."""
    f64, f32, f16, g32 = measured
    loops = {"float64": "numpy", "float32": "numpy",
             "ml_dtypes": float(max(1.0, np.ceil(g32 * 4) / 4))}
    loops.update(accuracy or {})
    data = {"measured": {"float64": f64, "float32": f32, "float16": f16, "glibc float32": g32},
            "specials": tuple(specials), "integers": integers}
    if complex is not None:
        data["complex"] = dict(zip(("source", "accuracy", "measured"), complex, strict=True))
    return Counterpart(call, contract={"accuracy": loops}, source=_NUMPY_SOURCE, data=data)

