"""NumPy equivalents of the real functions NumPy has: what NumPy 2.4's ufuncs (and ml_dtypes 0.6's
and 0.7's loops, tested alike) compute for ``exp``, ``exp2``, ``expm1``, ``log``, ``log2``, ``log10``, ``log1p``,
``sin``, ``cos``, ``tan``, ``arcsin``, ``arccos``, ``arctan``, ``sinh``, ``cosh``, ``tanh``,
``arctan2`` and ``power``, named as the registry's ops (``asin``, ``atan2``, ``pow``, ...).

Each equivalent does what NumPy does before its loop runs (the result dtype from the installed
NumPy, asked, as the numpy policy gives it: int8, uint8 and bool give float16, int16 and uint16
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

**Complex results** (complex64, complex128; :data:`COMPLEX_KERNELS`; complex32 and
bcomplex32 loops call the C++ ``std::`` functions on ``std::complex<float>``, glibc's float
ones, then store: computed in complex64): NumPy's loops call
npymath's ``npy_cexp``, ``npy_clog``, ... (``numpy/_core/src/npymath/npy_math_complex.c.src``),
which are the C library's ``cexp``, ``clog``, ``csin``, ... where it has them (glibc 2.36
here: every one), in the dtype's own precision (``cexpf`` for complex64); ``log2`` and
``log10`` are ``clog`` scaled. Their errors are not documented as bounds (glibc's
``libm-test-ulps`` lists the largest errors its tests saw): the accuracy is the normwise error
measured by ``scripts/measure_function_accuracy.py --complex`` with a margin (each part within
``k`` ulps of ``|f|``). ``power`` is ``npy_cpow``: ``1 + 0j`` for a zero exponent, a zero
base apart, repeated textbook multiplications for the integer exponents ``|n| < 100`` and
glibc's ``cpow``, ``cexp(w clog(z))``, otherwise, whose error grows with ``|w log z|`` (the
rounding of ``w clog(z)`` is an absolute error of the result's argument):
``4 (1 + |w| |log z|)`` ulps, measured at most ``2.56 (1 + |w log z|)``, with its overflows,
underflows and non-finite products modelled (:func:`_cpow_extremes`). Special values
(infinite and NaN parts) follow C99 Annex G, as exactref's reference does, except the
measured departures of :data:`GLIBC_SPECIALS`, where the equivalent gives glibc's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._exact._rounding import Rounding
from .._formats import FORMATS, Format
from .._result import Result
from ..arithmetic import functions
from ._common import bounds_result, convert
from ._numpy_ops import _DEFAULT_NAN, _array, _call, _compute, _into, _nanless, _shaped

__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
           "acos", "atan", "sinh", "cosh", "tanh", "atan2", "pow", "KERNELS", "COMPLEX_KERNELS",
           "GLIBC_SPECIALS", "integer_chain"]

F32, F64 = FORMATS["float32"], FORMATS["float64"]
_NE = Rounding.NEAREST_EVEN


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
# glibc 2.36's sin and cos (numpy's float64 loops call them) of huge arguments near their zeros:
# an absolute error near 2**-97 (cos(0x1.36bf9a50c044p+1008) = 0x1.d90bcc35ff8fap-56 is
# returned 1831 ulps off), beyond the numpy preset's 1 ulp: 1.5 ulps plus 2**-92, measured
# (the audit's hard regions found it), pinned in tests/equivalents/test_numpy_functions.py.
for _name in ("sin", "cos"):
    KERNELS[_name].accuracy["float64"] = {"ulps": 1.5, "abs": 2.0 ** -92}
# No accuracy data in NumPy's test suite: measured bounds, with a margin for the inputs not
# sampled (arctan2 float32: 2.65 measured, 3.0 declared; power: 0.98, 1.5).
KERNELS["atan2"] = Kernel("np.arctan2", {"float64": 1.0, "float32": 3.0, "ml_dtypes": 1.5},
                          {"float64": 0.743, "float32": 2.650, "float16": 2.441,
                           "glibc float32": 1.298})
KERNELS["pow"] = Kernel("np.power", {"float64": 1.0, "float32": 1.5, "ml_dtypes": 1.0},
                        {"float64": 0.653, "float32": 0.975, "float16": 0.969,
                         "glibc float32": 0.781})


# ===================================================================== complex results
@dataclass(frozen=True)
class ComplexKernel:
    """The C library's complex function behind one op (glibc 2.36: NumPy's npymath calls it,
    and so do PyTorch's ``c10::complex`` functions through libstdc++): ``accuracy``, the
    normwise bound the equivalents allow (ulps of ``|f|`` in the dtype's component format),
    and ``measured``: the largest normwise error seen by ``scripts/measure_function_accuracy.py
    --complex`` (2 * 10**4 inputs per dtype, torch and numpy alike), complex128 / complex64."""

    source: str
    accuracy: float
    measured: tuple


#: Per op: glibc's complex function and its measured normwise error (complex128, complex64),
#: torch 2.13 and numpy 2.4 alike (both call glibc 2.36); the accuracy is the measurement
#: rounded up to a half ulp plus half an ulp: measured, not documented.
COMPLEX_KERNELS = {
    "exp": ComplexKernel("cexp", 2.0, (1.556, 1.301)),
    "log": ComplexKernel("clog", 2.5, (1.771, 1.864)),
    "log2": ComplexKernel("clog(z) / log(2)", 3.0, (2.036, 2.383)),
    "log10": ComplexKernel("clog10 (numpy: clog scaled by log10(e))", 3.5, (2.778, 2.332)),
    "sin": ComplexKernel("csin", 2.5, (1.819, 1.787)),
    "cos": ComplexKernel("ccos", 2.5, (1.769, 1.829)),
    "tan": ComplexKernel("ctan", 5.5, (4.644, 4.283)),
    "sinh": ComplexKernel("csinh", 2.5, (1.862, 1.745)),
    "cosh": ComplexKernel("ccosh", 2.5, (1.868, 1.775)),
    "tanh": ComplexKernel("ctanh", 6.5, (5.556, 5.737)),
    "asin": ComplexKernel("casin", 3.5, (2.845, 3.044)),
    "acos": ComplexKernel("cacos", 3.5, (2.345, 2.858)),
    "atan": ComplexKernel("catan", 5.5, (3.142, 4.878)),
    # cpow: cexp(w clog z); the bound grows with |w log z| (see _pow_accuracy)
    "pow": ComplexKernel("cpow = cexp(w clog z)", 4.0, (7653.6, 419.2)),
}

_I, _N = np.inf, np.nan
#: glibc 2.36's special values where they depart from C99 Annex G as MPC (exactref's
#: reference) reads it, measured on every pair of {+-0, +-0.5, +-3, +-1000, +-inf, NaN} parts
#: (complex64 and complex128 alike; torch and numpy alike): ``{op: ((input, glibc's value),
#: ...)}``, each a pair ``(real, imaginary)``. Mostly signs Annex G leaves unspecified (``exp(-inf
#: - inf i)`` is ``+-0 +- 0i``), and ``ctan``/``ctanh`` of an infinite or NaN part beside a
#: zero, which keep the zero (C11's DR 471 reading).
GLIBC_SPECIALS = {
    "exp": (((-_I, -_I), (0.0, -0.0)),),
    "sin": (((_I, -_I), (_N, _I)), ((-_I, -_I), (_N, _I)), ((_N, -_I), (_N, _I))),
    "cos": (((_I, 0.0), (_N, 0.0)), ((_I, _I), (_I, _N)), ((-_I, -0.0), (_N, 0.0)),
            ((-_I, -_I), (_I, _N)), ((_N, -0.0), (_N, 0.0))),
    "tan": tuple(((r, z), (_N, z)) for r in (_I, -_I, _N) for z in (0.0, -0.0)),
    "sinh": (((-_I, _I), (_I, _N)), ((-_I, -_I), (_I, _N)), ((-_I, _N), (_I, _N))),
    "cosh": (((0.0, -_I), (_N, 0.0)), ((-0.0, _I), (_N, 0.0)), ((-0.0, _N), (_N, 0.0)),
             ((_I, -_I), (_I, _N)), ((-_I, _I), (_I, _N)), ((_N, 0.0), (_N, 0.0)),
             ((_N, -0.0), (_N, -0.0))),
    "tanh": tuple(((z, i), (z, _N)) for z in (0.0, -0.0) for i in (_I, -_I, _N)),
}


def _same(v, t: float) -> np.ndarray:
    """``v == t`` with the sign of zero, and NaN equal to NaN."""
    if np.isnan(t):
        return np.isnan(v)
    return (v == t) & (np.signbit(v) == np.signbit(t))


def _parts(arr) -> list:
    w = np.asarray(arr._wide()).reshape(-1)
    if np.iscomplexobj(w):
        return [w.real.astype(np.float64), w.imag.astype(np.float64)]
    return [w.astype(np.float64), np.zeros(w.size)]


def with_departures(res: Result, x, rows, model: str) -> Result:
    """``res`` where the operand ``x`` (an er.Array) matches a row of ``rows`` (``((re, im),
    (out_re, out_im))``, see :data:`GLIBC_SPECIALS`): there every candidate is the library's
    value (the reference stays Annex G's, so ``tolerance()`` shows the departure)."""
    re, im = _parts(x)
    cands = [list(c) for c in res._candidates]
    hit = np.zeros(re.size, bool)
    for (a, b), out in rows:
        m = _same(re, a) & _same(im, b)
        if not m.any():
            continue
        hit |= m
        for p in range(2):
            shape = np.shape(cands[p][0])
            mm = m.reshape(shape) if np.size(cands[p][0]) == m.size else m
            cands[p] = [np.where(mm, out[p], c) for c in cands[p]]
    if not hit.any():
        return res
    return Result(res.rounded, cands, op=res.op, models=tuple(res.models) + (model,),
                  details=res.details)


def _pow_accuracy(x, y, factor: float = 4.0) -> np.ndarray:
    """Per element, cpow's bound ``factor (1 + |w| |log z|)`` rounded up to a power of two (so
    a few calls serve a whole array; ``|w| |log z|``, not ``|w log z|``: the product's parts
    may cancel); ``factor`` where it is not finite (special values)."""
    z = np.asarray(x._wide()).reshape(-1).astype(np.complex128)
    w = np.asarray(y._wide()).reshape(-1).astype(np.complex128)
    z, w = np.broadcast_arrays(z, w)
    with np.errstate(all="ignore"):
        u = np.abs(w) * np.abs(np.log(z))
        k = factor * (1 + np.where(np.isfinite(u), u, 0.0))
        return np.exp2(np.ceil(np.log2(np.minimum(k, 2.0 ** 1000))))


def _modulus_ulp(rounded, comp):
    """The reference's parts (float64, flat) and ulp(|f|) in ``comp`` at the binade of
    ``|f| (1 + 2**(2-p))`` (as ``er.<fn>``'s band takes it: never a smaller binade)."""
    w = np.asarray(rounded._wide()).reshape(-1)
    re, im = w.real.astype(np.float64), w.imag.astype(np.float64)
    with np.errstate(all="ignore"):
        mod = np.hypot(re, im) * (1 + 2.0 ** (2 - comp.precision))
        e = np.floor(np.log2(np.where(mod > 0, mod, 1.0)))
        ulp = np.exp2(np.maximum(e, comp.emin) - comp.precision + 1)
    return re, im, mod, ulp


def _sum_outward(a, b, up: bool):
    """``a + b`` rounded up (``up``) or down in float64: the rounded sum, moved one step where
    its error (Knuth's TwoSum) points that way."""
    s = a + b
    bv = s - a
    err = (a - (s - bv)) + (b - bv)
    step = np.nextafter(s, np.inf if up else -np.inf)
    return np.where((err > 0) if up else (err < 0), step, s)


def _clamp_normwise(res: Result, ks, comp, slack: float = 0.5) -> Result:
    """Every candidate part clamped into ``[r - (k + s) ulp(|f|), r + (k + s) ulp(|f|)]`` around
    the reference part ``r`` (rounded outward; ``s = slack``: the reference's own distance from
    the exact part, half an ulp of the part to nearest, one directed): the normwise bound.
    ``er.<fn>``'s band counts ``k ulp(|f|)`` in ulps of each part and opens a part entirely (any value of its sign,
    infinity included) where that is 2**40 of the part's ulps or more: ``er.exp(1 + 1e-12j,
    accuracy=2)`` allows any imaginary part in ``[0, inf]``. The clamp keeps the equivalents'
    bound the stated one."""
    re, im, mod, ulp = _modulus_ulp(res.rounded, comp)
    cands = []
    with np.errstate(all="ignore"):
        d = (np.asarray(ks, dtype=np.float64) + slack) * ulp
        for part, r in zip(res._candidates, (re, im), strict=True):
            shape = np.shape(part[0])
            lo = _sum_outward(r, -d, up=False).reshape(shape)
            hi = _sum_outward(r, d, up=True).reshape(shape)
            ok = (np.isfinite(r) & np.isfinite(mod) & (mod > 0)).reshape(shape)
            clamped = [np.where(ok & ~np.isnan(c), np.clip(c, lo, hi), c) for c in part]
            # where the bound reaches across zero er's band stops at zero (it keeps the
            # part's sign): the clamp's ends are candidates there too
            wide = ok & (d >= np.abs(r)).reshape(shape)
            if wide.any():
                clamped += [np.where(wide, lo, part[0]), np.where(wide, hi, part[0])]
            cands.append(clamped)
    return Result(res.rounded, cands, op=res.op, models=res.models, details=res.details)


def _widen_zero_parts(rounded, cands, ks, C: Format) -> None:
    """Where one part of the exact power is zero and ``|f|`` is finite and not zero, add the
    normwise band's ends ``+-k ulp(|f|)`` to that part's candidates (``cands``, in place):
    cpow's ``cexp(w clog z)`` gives ``(-1-0j) ** (-1-0j)`` as ``-1 + 1.2e-16j``, where the
    accuracy band of ``er.pow`` keeps an exact zero part exact (as every real library does)."""
    w = np.asarray(rounded._wide()).reshape(-1)
    re, im = w.real.astype(np.float64), w.imag.astype(np.float64)
    comp = C.component
    with np.errstate(all="ignore"):
        mod = np.hypot(re, im)
        e = np.floor(np.log2(np.where(mod > 0, mod, 1.0)))
        ulp = np.exp2(np.maximum(e, comp.emin) - comp.precision + 1)
        ok = np.isfinite(mod) & (mod > 0)
        for p, v in enumerate((re, im)):
            m = ok & (v == 0)
            if not m.any():
                continue
            shape = np.shape(cands[p][0])
            d = np.where(m, ks * ulp, 0.0).reshape(shape)
            base = np.where(m.reshape(shape), 0.0, cands[p][0])
            cands[p] += [np.where(m.reshape(shape), -d, base), np.where(m.reshape(shape), d,
                                                                          base)]


def complex_pow(x, y, out: Format, C: Format, kw, factor: float = 4.0) -> Result:
    """glibc's ``cpow`` (``cexp(w clog z)``) of the er.Arrays ``x`` and ``y``: each element
    within :func:`_pow_accuracy` of the exact power (one call per distinct bound)."""
    ks = _pow_accuracy(x, y, factor)
    # er.pow takes at most 2**40 ulps; past 2**(p-2) the disc's ends are added below
    calls = np.minimum(ks, 2.0 ** 40)
    results = {k: functions.pow(x, y, compute=C, accuracy=float(k), **kw)
               for k in np.unique(calls).tolist()}
    first = results[calls[0]] if calls.size else next(iter(results.values()))
    cands = []
    for p, part in enumerate(first._candidates):
        shape = np.shape(part[0])
        merged = []
        for j in range(len(part)):
            v = np.array(part[j], dtype=np.float64, copy=True)
            for k, r in results.items():
                m = (calls == k).reshape(shape)
                v = np.where(m, r._candidates[p][j], v)
            merged.append(v)
        cands.append(merged)
    # the bound in ulps of the stored format: computed in C, then rounded into out (half an
    # ulp of a part, at most one of |f|)
    out = first.rounded.dtype
    kout = ks if out is C else ks * 2.0 ** (out.component.precision - C.component.precision) + 1
    _widen_zero_parts(first.rounded, cands, kout, out)
    model = f"within {factor:g} (1 + |w log z|) ulps of |f| in {C.name} (cpow)"
    slack = 0.5 if kw.get("rounding", _NE) == _NE else 1.0
    res = _clamp_normwise(Result(first.rounded, cands, op=first.op,
                                 models=(first.models[0], model + ": lowest",
                                         model + ": highest"), details=first.details),
                          kout, out.component, slack)
    return _cpow_extremes(res, x, y, ks, C)


def _native(fmt: Format) -> Format:
    """The format a complex formula is evaluated in with numpy's arithmetic: the format
    itself, complex64 for the narrower ones (complex32, bcomplex32: computed in complex64,
    then stored)."""
    return fmt if np.dtype(fmt.np_dtype).kind == "c" else FORMATS["complex64"]


def _lib_product(w, L, dtype):
    """``w * L`` as C computes a complex product in ``dtype`` where glibc's ``cpow`` forms
    ``c * clog(x)``: each part a difference of rounded products, and, where both come out
    NaN, C99 Annex G.5.1's recovery of the infinities (libgcc's ``__muldc3``)."""
    with np.errstate(all="ignore"):
        a, b, c, d = (np.array(v, dtype=dtype) for v in (w.real, w.imag, L.real, L.imag))
        ac, bd, ad, bc = a * c, b * d, a * d, b * c
        re, im = ac - bd, ad + bc
        both = np.isnan(re) & np.isnan(im)
        if both.any():
            inf_ab = np.isinf(a) | np.isinf(b)
            inf_cd = np.isinf(c) | np.isinf(d)
            big = ~inf_ab & ~inf_cd & (np.isinf(ac) | np.isinf(bd) | np.isinf(ad)
                                       | np.isinf(bc))

            def box(u, on):  # an infinity becomes +-1, a finite part +-0 (Annex G.5.1)
                return np.where(on, np.copysign(np.where(np.isinf(u), 1.0, 0.0), u), u)

            def zero_nan(u, on):
                return np.where(on & np.isnan(u), np.copysign(0.0, u), u)

            a2, b2 = box(a, both & inf_ab), box(b, both & inf_ab)
            c2, d2 = zero_nan(c, both & inf_ab), zero_nan(d, both & inf_ab)
            c2, d2 = box(c2, both & inf_cd), box(d2, both & inf_cd)
            a2, b2 = zero_nan(a2, both & inf_cd), zero_nan(b2, both & inf_cd)
            on = both & big
            a2, b2, c2, d2 = (zero_nan(u, on) for u in (a2, b2, c2, d2))
            recalc = both & (inf_ab | inf_cd | big)
            a2, b2, c2, d2 = (np.asarray(u, dtype=dtype) for u in (a2, b2, c2, d2))
            re = np.where(recalc, np.inf * (a2 * c2 - b2 * d2), re)
            im = np.where(recalc, np.inf * (a2 * d2 + b2 * c2), im)
    return np.asarray(re, np.float64), np.asarray(im, np.float64)


def _cpow_extremes(res: Result, x, y, ks, C: Format) -> Result:
    """cpow where the result overflows, or where ``w clog(z)`` is not finite, finite operands:

    * ``|f|`` beyond the format: the library's parts are infinities whose signs are those of
      ``cos`` and ``sin`` of its argument, which is the exact one within ``(k + 1)
      2**(1-p)`` radians (the normwise bound as an angle; plus float64's own error of the
      estimate): each part may be either infinity, or anything, where that sector crosses
      the part's axis (every direction once it reaches pi).
    * ``w clog(z)`` with an infinite or NaN part in the product as glibc forms it (``inf -
      inf``): ``cexp`` of it, Annex G's value (``NaN + NaN i`` for a NaN real part, ...),
      read from ``er.exp`` of that product, with glibc's ``exp`` row."""
    comp = C.component
    z = np.asarray(x._wide()).reshape(-1).astype(np.complex128)
    w = np.asarray(y._wide()).reshape(-1).astype(np.complex128)
    z, w = np.broadcast_arrays(z, w)
    re, im, _, _ = _modulus_ulp(res.rounded, comp)
    finite_in = np.isfinite(z) & np.isfinite(w)
    over = finite_in & (np.isinf(re) | np.isinf(im))
    under = finite_in & (re == 0) & (im == 0) & (z != 0)
    with np.errstate(all="ignore"):
        L = np.log(z)  # glibc's clog: Annex G's special values (no departure measured)
        pre, pim = _lib_product(w, L, _native(C).np_dtype.type(0).real.dtype)
        wide = _lib_product(w, L, np.float64)
    # any operands: cexp of a product with an infinite or NaN part is glibc's special value
    nonfinite = ~(np.isfinite(pre) & np.isfinite(pim))
    # complex64: libgcc's __mulsc3 may hold the products wider (measured: finite results
    # where the float32 product overflows): there both
    either = nonfinite & np.isfinite(wide[0]) & np.isfinite(wide[1])
    if not (over.any() or under.any() or nonfinite.any()):
        return res
    cands = [list(c) for c in res._candidates]
    shape = np.shape(cands[0][0])
    models = list(res.models)
    if over.any() or under.any():
        with np.errstate(all="ignore"):
            u = w * L
            theta = np.angle(np.exp(1j * np.fmod(u.imag, 2 * np.pi)))
            eps = (np.asarray(ks, np.float64) + 1) * 2.0 ** (1 - comp.precision) + \
                np.abs(u) * 2.0 ** -50
            eps = np.where(np.isfinite(eps), eps, np.inf)
        for p, f in enumerate((np.cos, np.sin)):
            # the part's sign over [theta - eps, theta + eps]: it changes where the sector
            # holds a zero of cos (sin), i.e. comes within eps of +-pi/2 (0, pi)
            zeros = np.array([-np.pi / 2, np.pi / 2] if p == 0 else [-np.pi, 0.0, np.pi])
            with np.errstate(all="ignore"):
                dist = np.min(np.abs(theta[:, None] - zeros[None, :]), axis=1)
                crosses = over & ((eps >= np.pi) | (dist <= eps))
                sign = np.sign(f(theta))
                crosses_u = under & ((eps >= np.pi) | (dist <= eps))
            inf_ = np.where(crosses, -np.inf, sign * np.inf)
            sup = np.where(crosses, np.inf, sign * np.inf)
            m = over.reshape(shape)
            cands[p] += [np.where(m, inf_.reshape(shape), cands[p][0]),
                         np.where(m, sup.reshape(shape), cands[p][0])]
            # a result below the smallest subnormal: zeros, their signs those of the part
            mu = under.reshape(shape)
            neg = np.where(crosses_u, -0.0, np.copysign(0.0, sign))
            pos = np.where(crosses_u, 0.0, np.copysign(0.0, sign))
            cands[p] += [np.where(mu, neg.reshape(shape), cands[p][0]),
                         np.where(mu, pos.reshape(shape), cands[p][0])]
        # a finite part beside an overflowing one: within k ulps of |f|, whose binade is
        # read from log2 |f| = Re(w log z) / log(2) (float64, with its own error)
        with np.errstate(all="ignore"):
            lg = np.floor(u.real / np.log(2) + np.abs(u) * 2.0 ** -48 + 1)
            d = (np.asarray(ks, np.float64) + 1) * np.exp2(lg - comp.precision + 1)
        for p, r in enumerate((re, im)):
            m = (over & np.isfinite(r)).reshape(shape)
            if m.any():
                with np.errstate(all="ignore"):
                    cands[p] += [np.where(m, (r - d).reshape(shape), cands[p][0]),
                                 np.where(m, (r + d).reshape(shape), cands[p][0])]
        models.append("cpow overflow or underflow: the signs over the argument's "
                      "uncertainty")
    if nonfinite.any():
        from .._array import Array  # the product, as an operand of er.exp

        pz = np.empty(pre.shape, np.complex128)
        pz.real, pz.imag = pre, pim
        N = _native(C)
        e = functions.exp(Array(pz.astype(N.np_dtype), N), dtype=N)
        e = with_departures(e, Array(pz.astype(N.np_dtype), N), GLIBC_SPECIALS["exp"], "")
        # glibc's cexp(-inf + i y), y infinite or NaN: 0 + copysign(0, y) i, the sign of a
        # NaN too (s_cexp_template.c; 0 * inf in the product is x86's default NaN, negative)
        vals = [np.asarray(e._candidates[p][0], dtype=np.float64).reshape(-1)
                for p in range(2)]
        minus = (pre == -np.inf) & ~np.isfinite(pim)
        vals[0] = np.where(minus, 0.0, vals[0])
        vals[1] = np.where(minus, np.copysign(0.0, pim), vals[1])
        m = (nonfinite & ~either).reshape(shape)
        add = either.reshape(shape)
        for p in range(2):
            v = vals[p].reshape(shape)
            kept = [np.where(m, v, c) for c in cands[p]]
            cands[p] = kept + [np.where(add, v, kept[0])]
        models.append("cpow: cexp of a non-finite w clog(z)")
    return Result(res.rounded, cands, op=res.op, models=tuple(models), details=res.details)


def complex_function(name: str, fn, args, out: Format, kw, table=None,
                     compute: Format | None = None) -> Result:
    """The Result of glibc's complex ``name`` (:data:`COMPLEX_KERNELS`) at the er.Arrays
    ``args``, computed in ``compute`` (default ``out``; complex64's functions are glibc's
    float ones) and stored into ``out``, with glibc's special values (:data:`GLIBC_SPECIALS`,
    or ``table``) where they depart from Annex G."""
    rows = GLIBC_SPECIALS.get(name, ()) if table is None else table
    C = compute or out
    k = COMPLEX_KERNELS[name].accuracy
    slack = 0.5 if kw.get("rounding", _NE) == _NE else 1.0
    res = fn(*args, compute=C, accuracy=k, dtype=out, **kw)
    res = _clamp_normwise(res, k, C.component, slack) if C is out else res
    return with_departures(res, args[0], rows, "glibc's special values") if rows else res


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
    if out.kind == "complex":
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if name == "pow":
                return _shaped(_numpy_cpow(args[0], args[1], out), c.shape)
            return _shaped(complex_function(name, fn, args, out, {}, compute=_compute(out)),
                           c.shape)
    if out.kind != "float":
        raise TypeError(f"{KERNELS[name].ufunc} of {out.name} operands gives {out.name}: "
                        f"no complex {name} in NumPy; pass float operands")
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


def _cmul(a, b):
    """npymath's ``cmul`` (and ``c10::complex``'s ``operator*``): ``(ar br - ai bi) + (ar bi +
    ai br) i``, each product and sum rounded in the parts' dtype; ``inf - inf`` is NaN."""
    out = np.empty(a.shape, a.dtype)
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
    return out


def _cdiv_one(r):
    """npymath's ``cdiv(1, r)`` (Smith's division)."""
    br, bi = r.real, r.imag
    big = np.abs(br) >= np.abs(bi)
    rat = np.where(big, bi / br, br / bi)
    scl = np.where(big, 1 / (br + bi * rat), 1 / (bi + br * rat))
    out = np.empty(r.shape, r.dtype)
    out.real = np.where(big, scl, rat * scl)
    out.imag = np.where(big, -rat * scl, -scl)
    zero = (br == 0) & (bi == 0)
    out.real = np.where(zero, 1 / np.abs(br), out.real)
    out.imag = np.where(zero, 0 / np.abs(bi), out.imag)
    return out


def integer_chain(z, n: np.ndarray):
    """``z ** n`` as npy_cpow multiplies for the integer exponents ``1 < |n| < 100`` (``n ==
    2``: ``z z``; 3: ``z (z z)``; else binary powering from the low bit, then ``cdiv(1, r)``
    for a negative ``n``), elementwise in ``z``'s dtype."""
    n = np.asarray(n, dtype=np.int64)
    m = np.abs(n)
    one = np.ones(z.shape, z.dtype)
    aa, p = one.copy(), z.copy()
    mask = 1
    while True:
        take = (m & mask) != 0
        aa = np.where(take, _cmul(aa, p), aa)
        mask <<= 1
        if not (m >= mask).any():
            break
        p = np.where(m >= mask, _cmul(p, p), p)
    two, three = _cmul(z, z), _cmul(z, _cmul(z, z))
    r = np.where(n == 2, two, np.where(n == 3, three, aa))
    return np.where(n < 0, _cdiv_one(r), r)


def with_formula(res: Result, where, value, model: str) -> Result:
    """``res`` where ``where``: every candidate the formula's ``value`` (complex, computed as
    the library computes it), so that only it is covered there."""
    if not np.any(where):
        return res
    cands = []
    for p, part in enumerate(res._candidates):
        shape = np.shape(part[0])
        m = np.asarray(where).reshape(shape)
        v = np.asarray((value.real, value.imag)[p], dtype=np.float64).reshape(shape)
        cands.append([np.where(m, v, c) for c in part])
    return Result(res.rounded, cands, op=res.op, models=tuple(res.models) + (model,),
                  details=res.details)


#: npy_cpow's own branches (``numpy/_core/src/npymath/npy_math_complex.c.src``), before glibc's
#: cpow: a zero exponent gives ``1 + 0i``; a zero base ``0 + 0i`` for ``Re w > 0``, else
#: ``NaN + NaN i``; an exponent ``1 + 0i`` copies the base.
def _numpy_cpow(x, y, out: Format) -> Result:
    """``npy_cpow``: its own branches (above), the repeated textbook multiplications of
    :func:`integer_chain` for the integer exponents ``1 < |n| < 100`` and glibc's ``cpow``
    otherwise, both within :func:`_pow_accuracy` (measured: at most ``2.56 (1 + |w log z|)``
    over both paths); where the chain's value has an infinite or NaN part (it overflows:
    ``inf - inf``), that value."""
    if out is not _native(out):
        # complex32, bcomplex32: their loops call std::pow(std::complex<float>, ...), glibc's
        # cpowf (no npy_cpow branches), then store
        return complex_pow(x, y, out, _native(out), dict(dtype=out))
    res = complex_pow(x, y, out, out, dict(dtype=out))
    z = np.asarray(x._wide()).reshape(-1).astype(_native(out).np_dtype)
    w = np.asarray(y._wide()).reshape(-1).astype(_native(out).np_dtype)
    z, w = np.broadcast_arrays(z, w)
    with np.errstate(all="ignore"):
        wzero = (w.real == 0) & (w.imag == 0)
        zzero = (z.real == 0) & (z.imag == 0) & ~wzero
        res = with_formula(res, wzero, np.ones(z.shape, z.dtype), "npy_cpow: w = 0 gives 1")
        zero_val = np.where(w.real > 0, 0j, complex(np.nan, np.nan)).astype(z.dtype)
        res = with_formula(res, zzero, zero_val, "npy_cpow: a zero base")
        ints = ~wzero & ~zzero & (w.imag == 0) & (w.real > -100) & (w.real < 100) & (
            np.trunc(w.real) == w.real)
        res = with_formula(res, ints & (w.real == 1), z, "npy_cpow: w = 1 copies the base")
        n = np.where(ints, w.real, 2).astype(np.int64)
        chain = integer_chain(z, n)
        bad = ints & (w.real != 1) & ~(np.isfinite(z) & np.isfinite(chain))
        return with_formula(res, bad, chain, "npy_cpow: repeated products, overflowed")


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
