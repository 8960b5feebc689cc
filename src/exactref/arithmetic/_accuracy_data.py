"""The accuracy presets' library-wide facts: per preset, where its documented maximum errors come
from (``source``), how the source counts ulps (``measure``) and against what (``against``);
exactref.arithmetic._accuracy reads them. The numbers themselves, per function and compute
format, are in each function's declaration (``presets=documented(glibc=..., ...)`` in
exactref/arithmetic/functions.py, each beside its citation), carried by the function's record:
a function whose declaration does not name a preset is not documented by it.

glibc (preset ``glibc``): the "Known Maximum Errors in Math Functions" table of the glibc
manual was generated from the per-architecture ``libm-test-ulps`` files. The numbers here are
the round-to-nearest entries (``Function: "exp":``, not ``"exp_downward"`` etc.) of
``sysdeps/x86_64/fpu/libm-test-ulps`` at tag glibc-2.41 (commit
74f59e9271cbb4071671e5a474e7d4f1622b186f), the last release that has that file and that table:
commit 3e8814903c ("math: Refactor how to use libm-test-ulps", first released in 2.42) removed
all architecture files and the manual table. A value is ``ceil`` of the largest
``|computed - expected| / ulp(expected)`` seen on glibc's test inputs, where ``expected`` is
the MPFR value correctly rounded to the format in the current rounding mode and ``ulp(v)`` is
``2**(ilogb(v) - p + 1)`` (the smallest subnormal for zero and subnormal ``v``)
(math/libm-test-support.c: ``ULPDIFF``, ``ulp``, ``print_function_ulps``). So it counts ulps
beyond the correctly rounded result: N means within N + 0.5 ulp of the exact value. A function
with no entry for a format has no known error (manual/math.texi: "Functions not listed do not
have known errors"), recorded as 0. These are test-suite maxima, not proofs. The same
manual section says: "Vector versions of functions in the x86_64 libmvec library have a
maximum error of 4 ulps" (preset ``glibc_libmvec``: 4 for each of the 20 functions declared).

SLEEF (presets ``sleef_u10``, ``sleef_u35``; PyTorch's vectorized CPU path): the SLEEF
"Math library reference" (docs/purec.xhtml for the scalar names, docs/x86.xhtml for the
vectorized ones) of shibatch/sleef at commit 7623d6cfa2712462880fa63a4d0f0b5f775d1a83
(3.9.0-41-g7623d6c, 2025-12-25). The suffix ``_uNN`` is 10 times the documented bound;
functions without a u35 variant in the library list (src/libm/funcproto.h) are given the
variant SLEEF offers instead, with a comment. SLEEF's tester (src/common/testerutil.c,
``countULPdp``) measures ``|computed - exact| / 2**(e - p)`` against the MPFR value itself,
``e`` being the exponent of the exact value (``frexp``) and the ulp not below the smallest
subnormal: the bound includes the final rounding (1.0 here is about glibc's 0.5).

CUDA (presets ``cuda``, ``cuda_intrinsics``): NVIDIA CUDA C++ Programming Guide, chapter
"Mathematical Functions" (legacy guide, the edition that says it is "no longer being updated
as of CUDA 13.0"): section 17.1 Table 17 (single precision) and Table 18 (double precision);
section 17.2 Table 20 ("Functions Affected by -use_fast_math") and Table 21 ("Single-Precision
Floating-Point Intrinsic Functions"). "The maximum error is stated as the absolute value of
the difference in ulps between the result returned by the CUDA library function and a
correctly rounded ... result obtained according to the round-to-nearest ties-to-even rounding
mode" (glibc's convention), and "The error bounds are generated from extensive but not
exhaustive tests, so they are not guaranteed bounds." The guide documents no ulp bound for the
half-precision functions (hexp, hlog, htanh, ...): there are no float16/bfloat16 entries.

numpy (preset ``numpy``): the ``ulperror`` column of numpy's accuracy test data,
numpy/_core/tests/data/umath-validation-set-<ufunc>.csv, at numpy commit
1f90bbb55e65e7de68921bc3f1a2d94492fdf689 (v2.6.0.dev0-595). numpy/_core/tests/
test_umath_accuracy.py checks each ufunc against ``expected`` ("computed using a high(er)
precision library and then rounded to same format as the input", data README) with
``assert_array_max_ulp``, i.e. in ulps beyond the correctly rounded result, on Linux x86-64
with AVX512F or AVX2+FMA3: the tolerance covers whichever implementation numpy dispatches
there (SVML on AVX-512, numpy's own SIMD loops, or the C library).

Bound forms: a number of ulps; ``{"ulps": a, "per_abs_x": b}`` meaning ``a + floor(b*|x|)``
ulps; ``{"ulps": a, "abs": e}`` and ``{"ulps": a, "abs_x": c}`` meaning ``a`` ulps plus an
absolute error ``e`` or ``c*|x|``; ``{"abs": e, "on": (lo, hi), "else_ulps": n}`` meaning an absolute error ``e`` for x in
[lo, hi] and ``n`` ulps elsewhere (``n`` None: the source says only "larger otherwise");
``{"rel": r}`` meaning a relative error ``r`` (CUDA's __tanhf); ``None`` where the source
documents no bound or the library has no such function (see the comment beside it in
the declaration).
"""

#: preset name -> {"source": str (citation with URL/version/section), "measure": str (how the
#: source counts ulps), "against": "rounded" (ulps from the correctly rounded result: N means
#: within N + 1/2 ulp of the exact value) or "exact" (ulps from the exact value)}; the bounds
#: per function are in the function records (exactref.arithmetic._accuracy.documented_by)
PRESETS = {
    "glibc": {
        "source": (
            "glibc 2.41 (tag glibc-2.41, commit 74f59e9271cbb4071671e5a474e7d4f1622b186f), "
            "sysdeps/x86_64/fpu/libm-test-ulps, round-to-nearest entries, the source of the "
            "manual's 'Known Maximum Errors in Math Functions' table (manual/math.texi, "
            "section 'Errors in Math Functions'); https://sourceware.org/git/glibc.git"
        ),
        "measure": (
            "ceil of max |computed - expected| / ulp(expected) over glibc's test inputs, "
            "expected = MPFR result correctly rounded to the format in the rounding mode, "
            "ulp(v) = 2**(ilogb(v) - p + 1) (math/libm-test-support.c); ulps beyond the "
            "correctly rounded result; absent entry = 0 ('no known errors'); observed, not "
            "proven"
        ),
        "against": "rounded",
    },
    "glibc_libmvec": {
        "source": (
            "glibc 2.41 manual/math.texi, section 'Known Maximum Errors in Math Functions': "
            "'Vector versions of functions in the x86_64 libmvec library have a maximum error "
            "of 4 ulps.' All 20 functions have float and double vector variants "
            "(sysdeps/x86/fpu/bits/math-vector.h, __DECL_SIMD_<name>, at glibc-2.41)"
        ),
        "measure": "glibc's convention (see 'glibc'); a single stated bound, not per function",
        "against": "rounded",
    },
    "sleef_u10": {
        "source": (
            "SLEEF 'Math library reference', docs/purec.xhtml and docs/x86.xhtml of "
            "github.com/shibatch/sleef at 7623d6cfa2712462880fa63a4d0f0b5f775d1a83 "
            "(3.9.0-41); https://sleef.org; the _u10 functions (1.0 ULP), erfc only as _u15"
        ),
        "measure": (
            "|computed - exact| / 2**(e - p), exact = MPFR value of exponent e, ulp not below "
            "the smallest subnormal (src/common/testerutil.c countULPdp): error against the "
            "exact value, final rounding included"
        ),
        "against": "exact",
    },
    "sleef_u35": {
        "source": (
            "SLEEF 'Math library reference' (docs/purec.xhtml, docs/x86.xhtml) and the "
            "function list src/libm/funcproto.h ('ulp : (error bound in ulp) * 10') of "
            "github.com/shibatch/sleef at 7623d6cfa2712462880fa63a4d0f0b5f775d1a83 (3.9.0-41)"
        ),
        "measure": "as sleef_u10 (error against the exact value, final rounding included)",
        "against": "exact",
    },
    "cuda": {
        "source": (
            "NVIDIA CUDA C++ Programming Guide (legacy edition, 'no longer being updated as of "
            "CUDA 13.0'), chapter Mathematical Functions, 17.1 Standard Functions: Table 17 "
            "'Single-Precision Mathematical Standard Library Functions with Maximum ULP Error' "
            "and Table 18 'Double-Precision Mathematical Standard Library Functions with "
            "Maximum ULP Error'; https://docs.nvidia.com/cuda/cuda-c-programming-guide/"
        ),
        "measure": (
            "absolute difference in ulps between the CUDA result and the correctly rounded "
            "(round-to-nearest ties-to-even) result; from extensive but not exhaustive tests, "
            "'not guaranteed bounds'; all entries '(full range)'"
        ),
        "against": "rounded",
    },
    "cuda_intrinsics": {
        "source": (
            "NVIDIA CUDA C++ Programming Guide (legacy edition, 'no longer being updated as of "
            "CUDA 13.0'), 17.2 Intrinsic Functions: Table 20 'Functions Affected by "
            "-use_fast_math' and Table 21 'Single-Precision Floating-Point Intrinsic "
            "Functions'; functions not in Table 20 keep their Table 17/18 bounds; "
            "https://docs.nvidia.com/cuda/cuda-c-programming-guide/"
        ),
        "measure": (
            "the code compiled with -use_fast_math: the Table 20 functions become intrinsics "
            "(__expf, __logf, ...) with Table 21's bounds (ulps, absolute or relative errors "
            "as stated); the others as in 'cuda'. Double precision is not affected"
        ),
        "against": "rounded",
    },
    "numpy": {
        "source": (
            "numpy commit 1f90bbb55e65e7de68921bc3f1a2d94492fdf689 (v2.6.0.dev0-595), "
            "numpy/_core/tests/data/umath-validation-set-<ufunc>.csv, column 'ulperror', "
            "checked by numpy/_core/tests/test_umath_accuracy.py "
            "(TestAccuracy.test_validate_transcendentals); https://github.com/numpy/numpy"
        ),
        "measure": (
            "assert_array_max_ulp against the correctly rounded value: ulps beyond the "
            "correctly rounded result, on the listed inputs, Linux x86-64 with AVX512F or "
            "AVX2+FMA3 (whatever path numpy dispatches: SVML, own SIMD loops or libm)"
        ),
        "against": "rounded",
    },
}
