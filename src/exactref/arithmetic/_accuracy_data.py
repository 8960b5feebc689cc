"""Documented maximum errors of math libraries, in ulps of the compute format: the data of the
accuracy presets (exactref.arithmetic._accuracy reads it). Every entry cites its source.

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
have known errors"), recorded here as 0. These are test-suite maxima, not proofs. The same
manual section says: "Vector versions of functions in the x86_64 libmvec library have a
maximum error of 4 ulps" (preset ``glibc_libmvec``).

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
ulps; ``{"abs": e, "on": (lo, hi), "else_ulps": n}`` meaning an absolute error ``e`` for x in
[lo, hi] and ``n`` ulps elsewhere (``n`` None: the source says only "larger otherwise");
``{"rel": r}`` meaning a relative error ``r`` (CUDA's __tanhf); ``None`` where the source
documents no bound or the library has no such function (see the comment).
"""

#: preset name -> {"source": str (citation with URL/version/section), "measure": str (how the
#: source counts ulps), "against": "rounded" (ulps from the correctly rounded result: N means
#: within N + 1/2 ulp of the exact value) or "exact" (ulps from the exact value),
#: "ulps": {function: {compute format: bound}}}
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
        "ulps": {
            "exp": {"float32": 1, "float64": 1},
            "exp2": {"float32": 1, "float64": 1},
            "expm1": {"float32": 0, "float64": 1},  # no float entry: CORE-MATH expm1f (2.41)
            "log": {"float32": 1, "float64": 1},
            "log2": {"float32": 1, "float64": 2},
            # 2.41 NEWS lists log10f among the new correctly rounded CORE-MATH functions; the
            # x86_64 file still says 2 (the refactor commit calls these files stale).
            "log10": {"float32": 2, "float64": 2},
            "log1p": {"float32": 0, "float64": 1},  # no float entry: CORE-MATH log1pf
            "sin": {"float32": 1, "float64": 1},
            "cos": {"float32": 1, "float64": 1},
            "tan": {"float32": 0, "float64": 0},  # no round-to-nearest entry for either
            "asin": {"float32": 0, "float64": 1},
            "acos": {"float32": 0, "float64": 1},
            "atan": {"float32": 0, "float64": 1},
            "atan2": {"float32": 0, "float64": 0},  # no round-to-nearest entry for either
            "sinh": {"float32": 0, "float64": 2},
            "cosh": {"float32": 0, "float64": 2},
            "tanh": {"float32": 0, "float64": 2},
            "erf": {"float32": 0, "float64": 1},  # double erf correctly rounded from 2.43
            "erfc": {"float32": 0, "float64": 5},  # double erfc correctly rounded from 2.43
            "pow": {"float32": 1, "float64": 1},
        },
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
        "ulps": {
            "exp": {"float32": 4, "float64": 4},
            "exp2": {"float32": 4, "float64": 4},
            "expm1": {"float32": 4, "float64": 4},
            "log": {"float32": 4, "float64": 4},
            "log2": {"float32": 4, "float64": 4},
            "log10": {"float32": 4, "float64": 4},
            "log1p": {"float32": 4, "float64": 4},
            "sin": {"float32": 4, "float64": 4},
            "cos": {"float32": 4, "float64": 4},
            "tan": {"float32": 4, "float64": 4},
            "asin": {"float32": 4, "float64": 4},
            "acos": {"float32": 4, "float64": 4},
            "atan": {"float32": 4, "float64": 4},
            "atan2": {"float32": 4, "float64": 4},
            "sinh": {"float32": 4, "float64": 4},
            "cosh": {"float32": 4, "float64": 4},
            "tanh": {"float32": 4, "float64": 4},
            "erf": {"float32": 4, "float64": 4},
            "erfc": {"float32": 4, "float64": 4},
            "pow": {"float32": 4, "float64": 4},
        },
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
        "ulps": {
            "exp": {"float32": 1.0, "float64": 1.0},
            "exp2": {"float32": 1.0, "float64": 1.0},
            "expm1": {"float32": 1.0, "float64": 1.0},
            "log": {"float32": 1.0, "float64": 1.0},
            "log2": {"float32": 1.0, "float64": 1.0},
            "log10": {"float32": 1.0, "float64": 1.0},
            "log1p": {"float32": 1.0, "float64": 1.0},
            "sin": {"float32": 1.0, "float64": 1.0},
            "cos": {"float32": 1.0, "float64": 1.0},
            "tan": {"float32": 1.0, "float64": 1.0},
            "asin": {"float32": 1.0, "float64": 1.0},
            "acos": {"float32": 1.0, "float64": 1.0},
            "atan": {"float32": 1.0, "float64": 1.0},
            # documented as max(1.0 ULP, FLT_MIN) / max(1.0 ULP, DBL_MIN)
            "atan2": {"float32": 1.0, "float64": 1.0},
            # 1.0 ULP on [-88.5, 88.5] (float) / [-709, 709] (double); outside, infinity with
            # the correct sign or a correct value within 1.0 ULP
            "sinh": {"float32": 1.0, "float64": 1.0},
            "cosh": {"float32": 1.0, "float64": 1.0},
            "tanh": {"float32": 1.0001, "float64": 1.0},
            "erf": {"float32": 1.0, "float64": 1.0},
            # no u10 erfc: Sleef_erfc_u15. Double: max(1.5 ULP, DBL_MIN) for x < 26.2 and
            # max(2.5 ULP, DBL_MIN) otherwise (the larger kept); float: max(1.5 ULP, FLT_MIN)
            "erfc": {"float32": 1.5, "float64": 2.5},
            "pow": {"float32": 1.0, "float64": 1.0},
        },
    },
    "sleef_u35": {
        "source": (
            "SLEEF 'Math library reference' (docs/purec.xhtml, docs/x86.xhtml) and the "
            "function list src/libm/funcproto.h ('ulp : (error bound in ulp) * 10') of "
            "github.com/shibatch/sleef at 7623d6cfa2712462880fa63a4d0f0b5f775d1a83 (3.9.0-41)"
        ),
        "measure": "as sleef_u10 (error against the exact value, final rounding included)",
        "against": "exact",
        "ulps": {
            "exp": {"float32": 1.0, "float64": 1.0},  # no u35 variant: Sleef_exp_u10
            # exp2_u35 and log2_u35 are in funcproto.h ({"exp2", 35, ...}) but not in the docs
            "exp2": {"float32": 3.5, "float64": 3.5},
            "expm1": {"float32": 1.0, "float64": 1.0},  # no u35 variant: Sleef_expm1_u10
            "log": {"float32": 3.5, "float64": 3.5},
            "log2": {"float32": 3.5, "float64": 3.5},
            "log10": {"float32": 1.0, "float64": 1.0},  # no u35 variant: Sleef_log10_u10
            "log1p": {"float32": 1.0, "float64": 1.0},  # no u35 variant: Sleef_log1p_u10
            "sin": {"float32": 3.5, "float64": 3.5},
            "cos": {"float32": 3.5, "float64": 3.5},
            "tan": {"float32": 3.5, "float64": 3.5},
            "asin": {"float32": 3.5, "float64": 3.5},
            "acos": {"float32": 3.5, "float64": 3.5},
            "atan": {"float32": 3.5, "float64": 3.5},
            "atan2": {"float32": 3.5, "float64": 3.5},
            # 3.5 ULP on [-88, 88] (float) / [-709, 709] (double); outside, infinity with the
            # correct sign or a correct value within 3.5 ULP
            "sinh": {"float32": 3.5, "float64": 3.5},
            "cosh": {"float32": 3.5, "float64": 3.5},
            "tanh": {"float32": 3.5, "float64": 3.5},
            "erf": {"float32": 1.0, "float64": 1.0},  # no u35 variant: Sleef_erf_u10
            "erfc": {"float32": 1.5, "float64": 2.5},  # only Sleef_erfc_u15 (see sleef_u10)
            "pow": {"float32": 1.0, "float64": 1.0},  # no u35 variant: Sleef_pow_u10
        },
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
        "ulps": {
            "exp": {"float32": 2, "float64": 1},
            "exp2": {"float32": 2, "float64": 1},
            "expm1": {"float32": 1, "float64": 1},
            "log": {"float32": 1, "float64": 1},
            "log2": {"float32": 1, "float64": 1},
            "log10": {"float32": 2, "float64": 1},
            "log1p": {"float32": 1, "float64": 1},
            "sin": {"float32": 2, "float64": 2},
            "cos": {"float32": 2, "float64": 2},
            "tan": {"float32": 4, "float64": 2},
            "asin": {"float32": 2, "float64": 2},
            "acos": {"float32": 2, "float64": 2},
            "atan": {"float32": 2, "float64": 2},
            "atan2": {"float32": 3, "float64": 2},
            "sinh": {"float32": 3, "float64": 2},
            "cosh": {"float32": 2, "float64": 1},
            "tanh": {"float32": 2, "float64": 1},
            "erf": {"float32": 2, "float64": 2},
            "erfc": {"float32": 4, "float64": 5},
            "pow": {"float32": 4, "float64": 2},
        },
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
        "ulps": {
            "exp": {"float32": {"ulps": 2, "per_abs_x": 1.173}, "float64": 1},  # __expf
            "exp2": {"float32": 2, "float64": 1},  # exp2f not in Table 20
            "expm1": {"float32": 1, "float64": 1},  # not in Table 20
            "log": {  # __logf
                "float32": {"abs": 2**-21.41, "on": (0.5, 2.0), "else_ulps": 3},
                "float64": 1,
            },
            "log2": {  # __log2f
                "float32": {"abs": 2**-22, "on": (0.5, 2.0), "else_ulps": 2},
                "float64": 1,
            },
            "log10": {  # __log10f
                "float32": {"abs": 2**-24, "on": (0.5, 2.0), "else_ulps": 3},
                "float64": 1,
            },
            "log1p": {"float32": 1, "float64": 1},  # not in Table 20
            "sin": {  # __sinf: "For x in [-pi, pi] ... 2^-21.41, and larger otherwise"
                "float32": {
                    "abs": 2**-21.41,
                    "on": (-3.141592653589793, 3.141592653589793),
                    "else_ulps": None,
                },
                "float64": 2,
            },
            "cos": {  # __cosf: "For x in [-pi, pi] ... 2^-21.19, and larger otherwise"
                "float32": {
                    "abs": 2**-21.19,
                    "on": (-3.141592653589793, 3.141592653589793),
                    "else_ulps": None,
                },
                "float64": 2,
            },
            # __tanf: "Derived from its implementation as __sinf(x) * (1/__cosf(x))", no number
            "tan": {"float32": None, "float64": 2},
            "asin": {"float32": 2, "float64": 2},  # not in Table 20
            "acos": {"float32": 2, "float64": 2},  # not in Table 20
            "atan": {"float32": 2, "float64": 2},  # not in Table 20
            "atan2": {"float32": 3, "float64": 2},  # not in Table 20
            "sinh": {"float32": 3, "float64": 2},  # not in Table 20
            "cosh": {"float32": 2, "float64": 1},  # not in Table 20
            # __tanhf: "maximum relative error ... 2^-11"; compute capability >= 7.5 only,
            # otherwise it behaves as tanhf (2 ulps)
            "tanh": {"float32": {"rel": 2**-11}, "float64": 1},
            "erf": {"float32": 2, "float64": 2},  # not in Table 20
            "erfc": {"float32": 4, "float64": 5},  # not in Table 20
            # __powf: "Derived from its implementation as exp2f(y * __log2f(x))", no number
            "pow": {"float32": None, "float64": 2},
        },
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
        "ulps": {
            # loops_exponent_log.dispatch.c.src: float32 SIMD exp "Max ULP error measured
            # across all 32-bit FP's = 2.52", log "= 3.83"
            "exp": {"float32": 3, "float64": 1},
            "exp2": {"float32": 2, "float64": 1},
            "expm1": {"float32": 3, "float64": 1},
            "log": {"float32": 4, "float64": 1},
            "log2": {"float32": 3, "float64": 1},
            "log10": {"float32": 4, "float64": 1},
            "log1p": {"float32": 2, "float64": 1},
            "sin": {"float32": 2, "float64": 1},
            "cos": {"float32": 2, "float64": 1},
            "tan": {"float32": 4, "float64": 1},
            "asin": {"float32": 4, "float64": 1},  # umath-validation-set-arcsin.csv
            "acos": {"float32": 3, "float64": 1},  # umath-validation-set-arccos.csv
            "atan": {"float32": 3, "float64": 1},  # umath-validation-set-arctan.csv
            "atan2": {"float32": None, "float64": None},  # no validation set for arctan2
            "sinh": {"float32": 2, "float64": 1},
            "cosh": {"float32": 3, "float64": 1},
            "tanh": {"float32": 2, "float64": 2},
            "erf": {"float32": None, "float64": None},  # numpy has no erf ufunc
            "erfc": {"float32": None, "float64": None},  # numpy has no erfc ufunc
            "pow": {"float32": None, "float64": None},  # no validation set for power
        },
    },
}
