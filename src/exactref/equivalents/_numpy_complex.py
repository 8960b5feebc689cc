"""NumPy's complex loops step by step (Smith's division, the reciprocal, the SIMD modulus, glibc's
``csqrt``) and ml_dtypes' ``std::complex<float>`` arithmetic (libgcc's division, C99 Annex G's
recovery), for :mod:`exactref.equivalents.numpy`.

NumPy's complex loops (complex64, complex128) compute in their component format, each C
operation rounded once; ml_dtypes' complex32 and bcomplex32 convert to std::complex<float>,
call libstdc++ (and through it libgcc and glibc), and round each part into half or
bfloat16. Every step below is one er op rounded once into the format the C code computes
in; the comparisons that choose a branch read exact values.
"""

from __future__ import annotations

import numpy as np

from .. import arithmetic as er_ops
from .._array import Array
from .._formats import Format
from .._result import Result, any_of
from ._common import convert
from ._numpy_loop import _IEEE, C128, F32, F64, _array, _into, _loop_result, _ml_complex, _pair


def annex_g_recover(a, b, c, d):
    """C99 Annex G's recovery of ``(a + bi) * (c + di)`` where the textbook parts
    ``ac - bd`` and ``ad + bc`` are both NaN (``_Cmultf``, as GCC's ``__mulsc3`` computes it in
    float32). Returns ``(mask, re, im)``: where recovery applies, the recovered parts (±inf or
    NaN); float32 arithmetic throughout, as the C library's."""
    f = np.float32
    a, b, c, d = (np.asarray(v, dtype=f).copy() for v in (a, b, c, d))
    with np.errstate(all="ignore"):
        ac, bd, ad, bc = a * c, b * d, a * d, b * c
        x, y = ac - bd, ad + bc
        both = np.isnan(x) & np.isnan(y)
        z_inf = np.isinf(a) | np.isinf(b)
        w_inf = np.isinf(c) | np.isinf(d)

        def box(v, cond):  # an infinity becomes ±1, a finite value ±0
            return np.where(cond, np.copysign(np.where(np.isinf(v), f(1), f(0)), v), v)

        def zero_nan(v, cond):
            return np.where(cond & np.isnan(v), np.copysign(f(0), v), v)

        m1 = both & z_inf
        a, b = box(a, m1), box(b, m1)
        c, d = zero_nan(c, m1), zero_nan(d, m1)
        m2 = both & w_inf
        c, d = box(c, m2), box(d, m2)
        a, b = zero_nan(a, m2), zero_nan(b, m2)
        over = np.isinf(ac) | np.isinf(bd) | np.isinf(ad) | np.isinf(bc)
        m3 = both & ~m1 & ~m2 & over
        a, b, c, d = (zero_nan(v, m3) for v in (a, b, c, d))
        recalc = m1 | m2 | m3
        re = f(np.inf) * (a * c - b * d)
        im = f(np.inf) * (a * d + b * c)
    return recalc, re.astype(np.float64), im.astype(np.float64)


def _with_annex_g(ref, xc: Array, yc: Array, out: Format, rounding, overflow):
    shape = ref.rounded.shape
    xw = np.broadcast_to(xc._wide(), shape)
    yw = np.broadcast_to(yc._wide(), shape)
    mask, re, im = annex_g_recover(xw.real, xw.imag, yw.real, yw.imag)
    if not mask.any():
        return ref
    parts = [re, im]
    cands = [[np.where(mask, parts[i], np.asarray(c, dtype=np.float64)) for c in cand]
             for i, cand in enumerate(ref._candidates)]
    w = ref.rounded._wide()
    pair = np.empty(shape, dtype=np.complex128)
    pair.real = np.where(mask, re, w.real)
    pair.imag = np.where(mask, im, w.imag)
    rounded = convert(pair, out, rounding=rounding, overflow=overflow)
    return Result(rounded, cands, op=ref.op, models=ref.models + ("C Annex G recovery",),
                  details=ref.details)


def _complex_divide(a: Array, b: Array, out: Format):
    """Complex true division as the loops compute it.

    complex64/complex128 (``loops.c.src``, ``@TYPE@_divide``): Smith's algorithm in the
    component format, with a reciprocal: for ``|c| >= |d|``, ``rat = d / c``,
    ``scl = 1 / (c + d * rat)``, ``((a + b * rat) * scl, (b - a * rat) * scl)``; otherwise the
    same with the divisor's parts swapped (``((a * rat + b) * scl, (b * rat - a) * scl)``);
    a zero divisor gives ``(a / |c|, b / |d|)``, so the signs of the result are the
    dividend's whatever the divisor's zero signs (C99's Annex G would give
    ``copysign(inf, c) * a``). No Annex G recovery: ``(inf + 0j) / (1 + 1j)`` is NaN there.
    complex32/bcomplex32: see :func:`_gcc_divide`.
    """
    x, y = a._wide(), b._wide()
    if _ml_complex(out):
        got = _gcc_divide(x.real, x.imag, y.real, y.imag, out)
        ref = er_ops.divide(a, b, dtype=out)
        return _loop_result(ref, got, out, "std::complex<float> division (libgcc's __divsc3: "
                            "the textbook formula in double, Annex G recovery)")
    R = out.component
    f = _IEEE(R)
    a_, b_, c_, d_ = x.real, x.imag, y.real, y.imag
    one = np.ones_like(a_)
    with np.errstate(all="ignore"):
        ac, ad = np.abs(c_), np.abs(d_)
        first = ac >= ad
        zero = first & (ac == 0) & (ad == 0)
        rat1 = f.div(d_, c_)
        scl1 = f.div(one, f.add(c_, f.mul(d_, rat1)))
        re1 = f.mul(f.add(a_, f.mul(b_, rat1)), scl1)
        im1 = f.mul(f.sub(b_, f.mul(a_, rat1)), scl1)
        rat2 = f.div(c_, d_)
        scl2 = f.div(one, f.add(d_, f.mul(c_, rat2)))
        re2 = f.mul(f.add(f.mul(a_, rat2), b_), scl2)
        im2 = f.mul(f.sub(f.mul(b_, rat2), a_), scl2)
        re0, im0 = f.div(a_, ac), f.div(b_, ad)
    re = np.where(zero, re0, np.where(first, re1, re2))
    im = np.where(zero, im0, np.where(first, im1, im2))
    ref = er_ops.divide(a, b, dtype=out)
    return _loop_result(ref, _pair(re, im), out, f"Smith's algorithm in {R.name} "
                        "(NumPy's loop)")


def _gcc_divide(a, b, c, d, out: Format) -> np.ndarray:
    """``std::complex<float>`` division by GCC's libgcc (``__divsc3``, GCC 12 and later):
    float operands widened to double, ``x = (a c + b d) / (c^2 + d^2)`` and
    ``y = (b c - a d) / (c^2 + d^2)`` each step rounded in double, then rounded to float;
    where both are NaN, C99 Annex G's recovery in float (a nonzero over a zero is an
    infinity, an infinite over a finite an infinity, a finite over an infinite a zero); then
    each part rounded into ``out``'s component (ml_dtypes' conversion). Measured: 0 of 20000
    random complex32 and bcomplex32 quotients off this model (Smith's algorithm in float, the
    older libgcc's, is off 5)."""
    f = _IEEE(F64)
    with np.errstate(all="ignore"):
        den = f.add(f.mul(c, c), f.mul(d, d))
        x = f.div(f.add(f.mul(a, c), f.mul(b, d)), den)
        y = f.div(f.sub(f.mul(b, c), f.mul(a, d)), den)
    x, y = _into(x, F64, F32), _into(y, F64, F32)
    x, y = _annex_g_quotient(a, b, c, d, x, y)
    comp = out.component
    return _pair(_into(x, F32, comp), _into(y, F32, comp))


def _annex_g_quotient(a, b, c, d, x, y):
    """libgcc's recovery of a quotient whose parts are both NaN (C99 G.5.1), on float
    values: the special cases only involve zeros, ones and infinities, whose signs numpy's
    float32 arithmetic gives exactly as C's."""
    f = np.float32
    a, b, c, d = (np.asarray(v, dtype=f) for v in (a, b, c, d))
    with np.errstate(all="ignore"):
        both = np.isnan(x) & np.isnan(y)
        m1 = both & (c == 0) & (d == 0) & (~np.isnan(a) | ~np.isnan(b))
        inf_c = np.copysign(f(np.inf), c)
        x1, y1 = inf_c * a, inf_c * b
        m2 = both & ~m1 & (np.isinf(a) | np.isinf(b)) & np.isfinite(c) & np.isfinite(d)
        a2 = np.copysign(np.where(np.isinf(a), f(1), f(0)), a)
        b2 = np.copysign(np.where(np.isinf(b), f(1), f(0)), b)
        x2, y2 = f(np.inf) * (a2 * c + b2 * d), f(np.inf) * (b2 * c - a2 * d)
        m3 = both & ~m1 & ~m2 & (np.isinf(c) | np.isinf(d)) & np.isfinite(a) & np.isfinite(b)
        c3 = np.copysign(np.where(np.isinf(c), f(1), f(0)), c)
        d3 = np.copysign(np.where(np.isinf(d), f(1), f(0)), d)
        x3, y3 = f(0) * (a * c3 + b * d3), f(0) * (b * c3 - a * d3)
    x = np.where(m1, x1, np.where(m2, x2, np.where(m3, x3, x)))
    y = np.where(m1, y1, np.where(m2, y2, np.where(m3, y3, y)))
    return x.astype(np.float64), y.astype(np.float64)


def _complex_reciprocal(a: Array, out: Format):
    """Complex ``np.reciprocal`` as the loops compute it.

    complex64/complex128 (``loops.c.src``, ``@TYPE@_reciprocal``), in the component format:
    for ``|im| <= |re|``, ``r = im / re``, ``d = re + im * r``, ``(1 / d, -r / d)``;
    otherwise ``r = re / im``, ``d = re * r + im``, ``(r / d, -1 / d)`` (so ``1 / (0 + 0j)``
    is NaN+NaNj). complex32/bcomplex32: ml_dtypes' ``T(1.f / z)``, libgcc's ``__divsc3(1, 0,
    re, im)`` (see :func:`_gcc_divide`).
    """
    z = a._wide()
    ref = er_ops.reciprocal(a, dtype=out)
    if _ml_complex(out):
        one = np.ones(z.shape)
        got = _gcc_divide(one, np.zeros(z.shape), z.real, z.imag, out)
        return _loop_result(ref, got, out, "1.f / std::complex<float> (libgcc's __divsc3)")
    R = out.component
    f = _IEEE(R)
    re, im = z.real, z.imag
    one = np.ones_like(re)
    with np.errstate(all="ignore"):
        first = np.abs(im) <= np.abs(re)
        r1 = f.div(im, re)
        d1 = f.add(re, f.mul(im, r1))
        o1 = (f.div(one, d1), f.div(-r1, d1))
        r2 = f.div(re, im)
        d2 = f.add(f.mul(re, r2), im)
        o2 = (f.div(r2, d2), f.div(-one, d2))
    got = _pair(np.where(first, o1[0], o2[0]), np.where(first, o1[1], o2[1]))
    return _loop_result(ref, got, out, f"NumPy's reciprocal loop in {R.name}")


def _hypot(x, y, R: Format):
    """glibc's ``hypot`` of exact values of ``R``, as the candidates it may give: float
    (``hypotf``) is ``sqrt((double) x * x + (double) y * y)`` rounded to float, one value;
    double (``__ieee754_hypot``) is faithful, not correctly rounded (measured: 22 of 24000
    random pairs off the correctly rounded value), so both neighbours of the exact value.
    Returns ``(low, high)`` float64 arrays."""
    ax, ay = np.abs(x), np.abs(y)
    if R.name == "float32":
        f = _IEEE(F64)
        with np.errstate(all="ignore"):
            h = _into(f.sqrt(f.fma(ax, ax, f.mul(ay, ay))), F64, F32)
        h = np.where(np.isinf(ax) | np.isinf(ay), np.inf, h)
        return h, h
    return _modulus_bounds(ax, ay)


def _modulus_bounds(ax, ay):
    """The exact ``sqrt(ax^2 + ay^2)`` rounded down and up into float64: ``(low, high)``.

    Note: ``er.abs`` of a complex128 value returned 0 where a part's square passes float64's
    range beside a much smaller part (``er.abs(1e200 + 1j)`` was 0.0, a core bug, being fixed
    in ``_exact/_algebraic.py``): both parts are scaled by a power of two (exact) so that the
    larger is below 1. A smaller part that the scaling flushes to zero leaves the exact value
    just above the larger one."""
    big = np.maximum(ax, ay)
    finite = np.isfinite(ax) & np.isfinite(ay) & (big > 0)
    _, e = np.frexp(np.where(finite, big, 1.0))
    sx = np.ldexp(np.where(finite, ax, 0.0), -e)
    sy = np.ldexp(np.where(finite, ay, 0.0), -e)
    lost = finite & (((ax > 0) & (sx == 0)) | ((ay > 0) & (sy == 0)))
    z = _array([sx, sy], C128)
    lo, hi = (np.ldexp(er_ops.abs(z, rounding=mode).rounded._wide(), e)
              for mode in ("toward_negative", "toward_positive"))
    hi = np.where(lost, np.nextafter(big, np.inf), hi)
    with np.errstate(invalid="ignore"):
        special = np.where(np.isinf(ax) | np.isinf(ay), np.inf,
                           np.where(big == 0, 0.0, np.nan))
    return np.where(finite, lo, special), np.where(finite, hi, special)


def _complex_abs(a: Array, out: Format):
    """Complex ``np.abs`` as the loops compute it.

    complex64/complex128 (``loops_unary_complex.dispatch.c.src``, the SIMD path every
    contiguous or regularly strided array takes): not ``hypot`` but
    ``larger * sqrt(ratio * ratio + 1)`` with ``ratio = smaller / larger`` (0 where the
    larger part is 0 or the smaller infinite), ``ratio * ratio + 1`` one fused multiply-add
    where NumPy's CPU dispatch has FMA3 or AVX-512F (``npyv_muladd``; see :func:`_fused`),
    two roundings otherwise, each step rounded in the component format;
    an infinite part gives +inf, else a NaN part NaN. Example: float32
    ``abs(1.5 - 0x1.d7ab22p-12j)`` is 1.5, the modulus rounds to 0x1.800002p+0.
    complex32/bcomplex32: ml_dtypes' ``std::abs(std::complex<float>)``, glibc's ``hypotf``
    (:func:`_hypot`), then rounded into half or bfloat16.
    """
    z = a._wide()
    re, im = np.abs(z.real), np.abs(z.imag)
    ref = _modulus_reference(a, out)
    if _ml_complex(a.dtype):
        h, _ = _hypot(re, im, F32)
        return _loop_result(ref, _into(h, F32, out), out, "std::abs(std::complex<float>): "
                            "glibc's hypotf, then rounded")
    f = _IEEE(out)
    with np.errstate(all="ignore"):
        im2 = np.where(re == np.inf, np.inf, im)
        re2 = np.where(im == np.inf, np.inf, re)
        im3 = np.where(np.isnan(re2), np.nan, im2)
        re3 = np.where(np.isnan(im2), np.nan, re2)
        larger, smaller = np.fmax(re3, im3), np.fmin(re3, im3)
        larger = np.where(np.isnan(re3), np.nan, larger)
        usable = ~((larger == 0) | (smaller == np.inf))
        ratio = np.where(usable, f.div(smaller, np.where(usable, larger, 1.0)), 0.0)
        ones = np.ones_like(ratio)
        fused = _fused()
        t = f.fma(ratio, ratio, ones) if fused else f.add(f.mul(ratio, ratio), ones)
        got = f.mul(f.sqrt(t), larger)
    step = "fma(ratio, ratio, 1)" if fused else "ratio * ratio + 1"
    return _loop_result(ref, got, out, f"larger * sqrt({step}) in {out.name} (NumPy's SIMD "
                        "loop)")


def _fused() -> bool:
    """Whether NumPy's SIMD loops run with fused multiply-adds on this machine: its runtime
    dispatch found FMA3 or AVX-512F (``numpy._core._multiarray_umath.__cpu_features__``;
    measured on an AVX-512 machine: 0 of 40000 complex64 moduli off the fused model, 86 off
    the unfused one)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # pragma: no cover - NumPy's internals moved: assume a modern CPU
        return True
    return bool(features.get("FMA3") or features.get("AVX512F"))


def _modulus_reference(a: Array, out: Format) -> Array:
    """The modulus rounded once into ``out``: the mathematical answer. Note: for complex128
    values with a part above 2**500, ``er.abs`` of the value scaled by a power of two, scaled
    back exactly (see :func:`_modulus_bounds` for the core bug this avoids)."""
    ref = er_ops.abs(a, dtype=out).rounded
    if out is not F64:
        return ref
    z = a._wide()
    re, im = np.abs(z.real), np.abs(z.imag)
    big = np.maximum(re, im)
    huge = np.isfinite(re) & np.isfinite(im) & (big > 2.0**500)
    if not huge.any():
        return ref
    _, e = np.frexp(np.where(huge, big, 1.0))
    scaled = _array([np.ldexp(np.where(huge, re, 0.0), -e), np.ldexp(np.where(huge, im, 0.0),
                                                                     -e)], C128)
    v = np.ldexp(er_ops.abs(scaled).rounded._wide(), e)
    return _array([np.where(huge, v, ref._wide())], F64)


def _complex_sqrt(a: Array, out: Format):
    """Complex ``np.sqrt`` as the loops compute it: glibc's ``csqrt`` (complex128) and
    ``csqrtf`` (complex64; ml_dtypes' complex32 and bcomplex32 call it through
    ``std::sqrt(std::complex<float>)`` and round each part into half or bfloat16), the
    algorithm of glibc's ``s_csqrt_template.c`` (:func:`glibc_csqrt`), each step rounded in
    the component format. Measured: 0 of 24000 complex64 and complex128 results off the model
    (about a third of them differ from the correctly rounded square root by an ulp). glibc's
    double ``hypot`` is faithful only, so complex128 accepts the results of both of its
    neighbours of the exact modulus (any_of)."""
    z = a._wide()
    ref = er_ops.sqrt(a, dtype=out)
    R = F32 if _ml_complex(out) else out.component
    results = []
    for got in glibc_csqrt(z.real, z.imag, R):
        if R is not out.component:
            got = _pair(_into(got.real, R, out.component), _into(got.imag, R, out.component))
        results.append(_loop_result(ref, got, out, f"glibc's csqrt in {R.name}"))
    return results[0] if len(results) == 1 else any_of(*results)


def glibc_csqrt(x, y, R: Format) -> list:
    """glibc's ``csqrt`` (``s_csqrt_template.c``, glibc 2.36) of exact values ``x + y i`` held
    by the real format ``R``, every operation rounded once in ``R``: one complex128 array per
    value ``hypot`` may give (:func:`_hypot`; two for double where its result is not known)."""
    f = _IEEE(R)
    big, tiny, mant = R.max_finite, R.smallest_normal, R.precision
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ones = np.ones_like(x)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x) & np.isfinite(y)
        # non-finite operands (C99 G.6.4.2, as glibc orders the cases)
        yinf, xinf = np.isinf(y), np.isinf(x)
        sre = np.where(yinf, np.inf, np.where(xinf, np.where(
            x < 0, np.where(np.isnan(y), np.nan, 0.0), x), np.nan))
        sim = np.where(yinf, y, np.where(xinf, np.where(
            x < 0, np.copysign(np.inf, y), np.where(np.isnan(y), np.nan, np.copysign(0.0, y))),
            np.nan))
        # a zero imaginary part
        root_x = f.sqrt(np.abs(x))
        zre = np.where(x < 0, 0.0, root_x)
        zim = np.where(x < 0, np.copysign(root_x, y), np.copysign(0.0, y))
        # a zero real part
        ay = np.abs(y)
        r0 = np.where(ay >= 2 * tiny, f.sqrt(f.mul(0.5 * ones, ay)),
                      f.mul(0.5 * ones, f.sqrt(f.mul(2 * ones, ay))))
        # the general case, scaled away from overflow and underflow
        scale = np.zeros(x.shape, dtype=np.int64)
        x1, y1 = x.copy(), y.copy()
        s1 = finite & (np.abs(x1) > big / 4)
        scale[s1] = 1
        x1 = np.where(s1, f.mul(x1, 0.25 * ones), x1)
        y1 = np.where(s1, f.mul(y1, 0.25 * ones), y1)
        s2 = finite & (np.abs(y1) > big / 4)
        scale[s2] = 1
        x1 = np.where(s2, np.where(np.abs(x1) >= 4 * tiny, f.mul(x1, 0.25 * ones), 0.0), x1)
        y1 = np.where(s2, f.mul(y1, 0.25 * ones), y1)
        s3 = finite & ~s2 & (np.abs(x1) < 2 * tiny) & (np.abs(y1) < 2 * tiny)
        up = -((mant + 1) // 2)
        scale[s3] = up
        x1 = np.where(s3, f.mul(x1, np.ldexp(ones, -2 * up)), x1)
        y1 = np.where(s3, f.mul(y1, np.ldexp(ones, -2 * up)), y1)
        out = []
        for d in _hypot(x1, y1, R):
            pos = x1 > 0
            t = f.mul(0.5 * ones, f.add(d, x1))
            u = f.mul(0.5 * ones, f.sub(d, x1))
            r_pos = f.sqrt(t)
            s_neg = f.sqrt(u)
            small = (scale == 1) & (np.abs(y1) < 1)
            q_pos = f.div(y1, r_pos)
            q_neg = f.div(y1, s_neg)
            r = np.where(pos, np.where(small, f.mul(r_pos, 2 * ones), r_pos),
                         np.where(small, np.abs(q_neg), np.abs(f.mul(0.5 * ones, q_neg))))
            s = np.where(pos, np.where(small, q_pos, f.mul(0.5 * ones, q_pos)),
                         np.where(small, f.mul(s_neg, 2 * ones), s_neg))
            rest = np.where(small, 0, scale)
            factor = np.ldexp(ones, rest)
            r = np.where(rest != 0, f.mul(r, factor), r)
            s = np.where(rest != 0, f.mul(s, factor), s)
            gre = np.where(~finite, sre, np.where(y == 0, zre, np.where(x == 0, r0, r)))
            gim = np.where(~finite, sim, np.where(y == 0, zim, np.where(
                x == 0, np.copysign(r0, y), np.copysign(s, y))))
            out.append(_pair(gre, gim))
    if len(out) == 2 and all(np.array_equal(out[0], o, equal_nan=True) for o in out[1:]):
        out = out[:1]
    return out
