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

import inspect
from dataclasses import dataclass

import numpy as np

from .._exact import Rounding
from .._formats import FORMATS, Format
from .._result import Result
from ..arithmetic import functions
from ..ops import get_op, names_of
from ._common import bounds_result, convert
from ._numpy_ops import _DEFAULT_NAN, _array, _call, _compute, _into, _nanless, _shaped

F32, F64 = FORMATS["float32"], FORMATS["float64"]
_NE = Rounding.NEAREST_EVEN
_NUMPY = "numpy"  # the library key of the records' counterparts


@dataclass(frozen=True)
class Kernel:
    """NumPy's implementation of one function, read from its record's numpy counterpart:
    ``ufunc`` (its call), ``accuracy`` per loop (``"float64"``, ``"float32"``: float16 too,
    computed in float32; ``"ml_dtypes"``: the C library's float function) in ulps of the
    compute format or a preset name (the counterpart's contract), and ``measured``: the
    largest error seen by ``scripts/measure_function_accuracy.py`` (numpy 2.4.6 on an AMD EPYC
    with AVX-512; ulps of the compute format)."""

    ufunc: str
    accuracy: dict
    measured: dict


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


def _counterpart(name):
    """The record's numpy counterpart of the function op ``name`` (a Counterpart), or None."""
    return get_op(name).counterparts.of(_NUMPY)


def _modelled(name) -> bool:
    """Whether the op's record declares numpy's kernel (a contract and its data)."""
    cp = _counterpart(name)
    return cp is not None and cp.contract is not None and cp.data is not None


#: The function ops whose records declare numpy's kernel: each has an equivalent here, made by
#: one builder from the record (a new function with a numpy counterpart and contract needs no
#: edit in this module).
FUNCTIONS = tuple(n for n in names_of("exactref.arithmetic.functions") if _modelled(n))


def kernel(name) -> Kernel:
    """NumPy's kernel of the function op ``name``, from its record."""
    cp = _counterpart(name)
    return Kernel(cp.call, cp.contract["accuracy"], cp.data["measured"])


def complex_kernel(name) -> ComplexKernel | None:
    """glibc's complex function behind the op ``name`` (its record's numpy data), or None."""
    cp = _counterpart(name)
    data = cp.data.get("complex") if cp is not None and cp.data is not None else None
    return None if data is None else ComplexKernel(**data)


def glibc_specials(name) -> tuple:
    """glibc 2.36's special values where they depart from C99 Annex G as MPC (exactref's
    reference) reads it, measured on every pair of {+-0, +-0.5, +-3, +-1000, +-inf, NaN} parts
    (complex64 and complex128 alike; torch and numpy alike): ``((input, glibc's value), ...)``,
    each a pair ``(real, imaginary)``, from the op's record. Mostly signs Annex G leaves
    unspecified (``exp(-inf - inf i)`` is ``+-0 +- 0i``), and ``ctan``/``ctanh`` of an
    infinite or NaN part beside a zero, which keep the zero (C11's DR 471 reading)."""
    cp = _counterpart(name)
    return cp.data.get("specials", ()) if cp is not None and cp.data is not None else ()


#: Views of the records' numpy data by op name (read from the records, not declared here).
KERNELS = {n: kernel(n) for n in FUNCTIONS}
COMPLEX_KERNELS = {n: complex_kernel(n) for n in FUNCTIONS if complex_kernel(n) is not None}
GLIBC_SPECIALS = {n: glibc_specials(n) for n in FUNCTIONS if glibc_specials(n)}


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
        e = with_departures(e, Array(pz.astype(N.np_dtype), N), glibc_specials(e.op), "")
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
    """The Result of glibc's complex ``name`` (:func:`complex_kernel`) at the er.Arrays
    ``args``, computed in ``compute`` (default ``out``; complex64's functions are glibc's
    float ones) and stored into ``out``, with glibc's special values (:func:`glibc_specials`,
    or ``table``) where they depart from Annex G."""
    rows = glibc_specials(name) if table is None else table
    C = compute or out
    k = complex_kernel(name).accuracy
    slack = 0.5 if kw.get("rounding", _NE) == _NE else 1.0
    res = fn(*args, compute=C, accuracy=k, dtype=out, **kw)
    res = _clamp_normwise(res, k, C.component, slack) if C is out else res
    return with_departures(res, args[0], rows, "glibc's special values") if rows else res


def _accuracy(cp, out: Format):
    """The accuracy of numpy's loop for ``out`` (the counterpart's contract)."""
    loops = cp.contract["accuracy"]
    if out.name in (F64.name, F32.name, FORMATS["float16"].name):
        return loops[F64.name if out is F64 else F32.name]
    return loops["ml_dtypes"]


def _equivalent(spec, *operands):
    name, cp = spec.name, spec.counterparts.of(_NUMPY)
    fn = spec.function
    c = _call(spec.promotion, *operands, labels=("x", "y")[:len(operands)])
    args = [c.read(i) for i in range(len(operands))]
    out = c.out
    if cp.data.get("integers") and out.is_integer:
        return _shaped(_integer_power(c), c.shape)
    if out.kind == "complex":
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if spec.exact.complex is not None and spec.exact.complex.arity == 2:
                return _shaped(_numpy_cpow(args[0], args[1], out), c.shape)
            return _shaped(complex_function(name, fn, args, out, {}, compute=_compute(out)),
                           c.shape)
    if out.kind != "float":
        raise TypeError(f"{cp.call} of {out.name} operands gives {out.name}: "
                        f"no complex {name} in NumPy; pass float operands")
    C = _compute(out)
    acc = _accuracy(cp, out)
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


def _make(name):
    """``equivalents.numpy.<name>``: the reference for numpy's counterpart of the function op
    ``name``, from its record (one builder for every function op whose record declares numpy's
    kernel)."""
    spec = get_op(name)
    k = kernel(name)

    def equivalent(*operands):
        if len(operands) != spec.arity:
            raise TypeError(f"{name}() takes the operands {', '.join(spec.operands)}; got "
                            f"{len(operands)}")
        return _equivalent(spec, *operands)

    equivalent.__name__ = equivalent.__qualname__ = name
    equivalent.__module__ = __name__
    equivalent.__signature__ = inspect.Signature(
        [inspect.Parameter(o, inspect.Parameter.POSITIONAL_OR_KEYWORD) for o in spec.operands])
    integers = " Integers: the exact power, wrapped (a negative exponent raises, as in NumPy)." \
        if spec.counterparts.of(_NUMPY).data.get("integers") else ""
    equivalent.__doc__ = (
        f"The reference for ``{k.ufunc}({', '.join(spec.operands)})``: ``er.{name}`` computed "
        f"in the loop's format (float32 for float16 and ml_dtypes' floats) within the "
        f"implementation's accuracy, then stored.{integers} Accuracy: {k.accuracy}; measured "
        f"max (ulps of the compute format): {k.measured}.")
    return equivalent


globals().update({_name: _make(_name) for _name in FUNCTIONS})

__all__ = [*FUNCTIONS, "KERNELS", "COMPLEX_KERNELS", "GLIBC_SPECIALS", "FUNCTIONS", "kernel",
           "complex_kernel", "glibc_specials", "integer_chain"]
