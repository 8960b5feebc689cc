"""NumPy equivalents of the real functions NumPy has: what NumPy 2.4's ufuncs (and ml_dtypes 0.6's
loops) compute for ``exp``, ``exp2``, ``expm1``, ``log``, ``log2``, ``log10``, ``log1p``,
``sin``, ``cos``, ``tan``, ``arcsin``, ``arccos``, ``arctan``, ``sinh``, ``cosh``, ``tanh``,
``arctan2`` and ``power``, named as the registry's ops (``asin``, ``atan2``, ``pow``, ...).

Each equivalent does what NumPy does before its loop runs (the result dtype from
:mod:`exactref.promotion`'s numpy policy: int8, uint8 and bool give float16, int16 and uint16
float32, wider integers float64; the operands converted by NumPy's own casts), then returns the
op's own Result with ``compute=`` the format the loop computes in and ``accuracy=`` the bound of
the implementation it calls, in ulps of that format:

* **float32 and float64**: NumPy's own SIMD loops or SVML (AVX-512) or the C library, as NumPy
  dispatches on the machine; the bound is the ``numpy`` accuracy preset (the ``ulperror`` of
  NumPy's accuracy test data, the bound its test suite checks on AVX-512 and AVX2 machines,
  plus the half ulp of the correctly rounded value it counts from). ``arctan2`` and ``power``
  have no such data: their bounds are measured (see :data:`KERNELS`).
* **float16**: NumPy's ``HALF`` loops convert to float32, call the float32 function and round
  into float16: the float32 bound, computed in float32.
* **ml_dtypes' floats** (bfloat16, the float8 formats, ...): ml_dtypes' ufunc loops call the C
  library's float function (``std::exp(float)``: glibc's ``expf``) and store into the dtype:
  glibc 2.36's measured errors, in float32.

The measured maximum errors are in ``docs/functions.md`` ("What PyTorch and NumPy compute"),
from ``scripts/measure_function_accuracy.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._formats import FORMATS, Format
from ..arithmetic import functions
from ._common import bounds_result, convert
from ._numpy_ops import _DEFAULT_NAN, _array, _call, _compute, _into, _nanless, _shaped

__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
           "acos", "atan", "sinh", "cosh", "tanh", "atan2", "pow", "KERNELS"]

F32, F64 = FORMATS["float32"], FORMATS["float64"]


@dataclass(frozen=True)
class Kernel:
    """NumPy's implementation of one function: ``ufunc`` (its name), ``accuracy`` per loop
    (``"float64"``, ``"float32"``: float16 too, computed in float32; ``"ml_dtypes"``: the C
    library's float function) in ulps of the compute format or a preset name, and
    ``measured``: the largest error seen by ``scripts/measure_function_accuracy.py`` (numpy
    2.4.6 on an AMD EPYC with AVX-512; ulps of the compute format)."""

    ufunc: str
    accuracy: dict
    measured: dict


def _k(ufunc, f64, f32, f16, glibc, ml="numpy", ml_dtypes=None):
    """A kernel with the numpy preset for float32 and float64 and glibc 2.36's measured
    float32 error (rounded up to a quarter ulp, at least 1) for ml_dtypes, or ``ml_dtypes``
    where glibc documents more (tanh, sinh, cosh: 2 ulps beyond the rounded value)."""
    bound = ml_dtypes or max(1.0, np.ceil(glibc * 4) / 4)
    return Kernel(ufunc, {"float64": ml, "float32": ml, "ml_dtypes": float(bound)},
                  {"float64": f64, "float32": f32, "float16": f16, "glibc float32": glibc})


#: Per registry op: numpy's ufunc, the declared accuracy and the measured maxima.
KERNELS = {
    "exp": _k("np.exp", 0.690, 2.165, 2.000, 0.501),
    "exp2": _k("np.exp2", 0.708, 2.487, 1.917, 0.501),
    "expm1": _k("np.expm1", 0.509, 2.488, 2.115, 0.749),
    "log": _k("np.log", 0.519, 2.359, 2.550, 0.801),
    "log2": _k("np.log2", 0.503, 1.559, 1.857, 0.751),
    "log10": _k("np.log10", 0.558, 2.021, 2.103, 1.623),
    "log1p": _k("np.log1p", 0.587, 1.828, 1.114, 0.721),
    "sin": _k("np.sin", 0.515, 1.327, 1.310, 0.555),
    "cos": _k("np.cos", 0.562, 1.341, 1.329, 0.557),
    "tan": _k("np.tan", 0.528, 3.223, 2.419, 1.387),
    "asin": _k("np.arcsin", 0.819, 2.592, 2.319, 0.879),
    "acos": _k("np.arccos", 0.806, 1.706, 1.715, 0.867),
    "atan": _k("np.arctan", 0.530, 1.804, 1.295, 0.746),
    "sinh": _k("np.sinh", 0.784, 1.400, 1.246, 1.752, ml_dtypes=2.5),
    "cosh": _k("np.cosh", 0.749, 2.285, 1.749, 1.841, ml_dtypes=2.5),
    "tanh": _k("np.tanh", 1.075, 1.328, 1.342, 1.977, ml_dtypes=2.5),
}
# No accuracy data in NumPy's test suite: measured bounds, with a margin for the inputs not
# sampled (arctan2 float32: 2.65 measured, 3.0 declared; power: 0.98, 1.5).
KERNELS["atan2"] = Kernel("np.arctan2", {"float64": 1.0, "float32": 3.0, "ml_dtypes": 1.5},
                          {"float64": 0.743, "float32": 2.650, "float16": 2.441,
                           "glibc float32": 1.298})
KERNELS["pow"] = Kernel("np.power", {"float64": 1.0, "float32": 1.5, "ml_dtypes": 1.0},
                        {"float64": 0.653, "float32": 0.975, "float16": 0.969,
                         "glibc float32": 0.781})


def _accuracy(name: str, out: Format):
    if out.name in ("float64", "float32", "float16"):
        return KERNELS[name].accuracy["float64" if out is F64 else "float32"]
    return KERNELS[name].accuracy["ml_dtypes"]


def _equivalent(name, fn, *operands):
    c = _call(name, *operands, labels=("x", "y")[:len(operands)])
    args = [c.read(i) for i in range(len(operands))]
    out = c.out
    if name == "pow" and out.is_integer:
        return _shaped(_integer_power(c), c.shape)
    if out.kind != "float":
        raise TypeError(f"{KERNELS[name].ufunc} of {out.name} operands gives {out.name}: "
                        f"complex results are not modelled yet (NumPy's are glibc's cexp, "
                        f"clog, ...); pass real operands")
    C = _compute(out)
    acc = _accuracy(name, out)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if _nanless(out):
            # ml_dtypes' float6/float4: the float32 result stored by ml_dtypes' conversion
            # (saturating, a NaN becomes a zero)
            # (a NaN result has no value there: the reference is the float32 value stored
            # as ml_dtypes stores it, as for every op of the family)
            wide = [convert(a, F32) for a in args]  # exact: float32 holds every value
            r = fn(*wide, dtype=F32, compute=F32, accuracy=acc)
            ref = _array([_into(r.rounded._wide().astype(np.float64), F32, out, _DEFAULT_NAN)],
                         out)
            lo = _into(r.lowest, F32, out, _DEFAULT_NAN)
            hi = _into(r.highest, F32, out, _DEFAULT_NAN)
            # the C library's NaN has either sign (measured: log10, arcsin and arccos of
            # values outside their domain store -0, log and log2 +0): either zero
            nan = np.isnan(r.rounded._wide().astype(np.float64))
            zeros = [[np.where(nan, z, lo)] for z in (0.0, -0.0)]
            res = bounds_result(ref, [lo], [hi], op=name, models=r.models[1:],
                                details=r.details, extra=zeros)
        else:
            res = fn(*args, dtype=out, compute=C, accuracy=acc)
    return _shaped(res, c.shape)


def _integer_power(c):
    """NumPy's integer power: the exact power, wrapped; any negative exponent raises, as
    NumPy's "Integers to negative integer powers are not allowed." """
    x, y = c.read(0), c.read(1)
    if c.out.kind == "int" and bool(np.any(y._wide() < 0)):
        raise ValueError("Integers to negative integer powers are not allowed. (NumPy's "
                         "error); pass a float base or non-negative exponents")
    return functions.pow(x, y, dtype=c.out, overflow="wrap")


def _unary(name, op=None):
    fn = getattr(functions, name)

    def equivalent(x):
        return _equivalent(name, fn, x)

    k = KERNELS[name]
    equivalent.__name__ = equivalent.__qualname__ = name
    equivalent.__module__ = __name__
    equivalent.__doc__ = (
        f"The reference for ``{k.ufunc}(x)``: ``er.{name}`` computed in the loop's format "
        f"(float32 for float16 and ml_dtypes' floats) within the implementation's accuracy, "
        f"then stored. Accuracy: {k.accuracy}; measured max (ulps of the compute format): "
        f"{k.measured}.")
    return equivalent


exp = _unary("exp")
exp2 = _unary("exp2")
expm1 = _unary("expm1")
log = _unary("log")
log2 = _unary("log2")
log10 = _unary("log10")
log1p = _unary("log1p")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")


def atan2(y, x):
    """The reference for ``np.arctan2(y, x)``: the angle computed in the loop's format within
    a measured bound (:data:`KERNELS`: NumPy's test data has none for arctan2), then stored."""
    return _equivalent("atan2", functions.atan2, y, x)


def pow(x, y):  # noqa: A001 - the op's name
    """The reference for ``np.power(x, y)``: floats computed in the loop's format within a
    measured bound (:data:`KERNELS`), then stored; integers the exact power, wrapped (a
    negative exponent raises, as in NumPy)."""
    return _equivalent("pow", functions.pow, x, y)
