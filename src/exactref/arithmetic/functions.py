"""Real functions: ``exp``, ``log``, ``tanh``, ``sigmoid``, ``gelu``, ``erf`` and the rest, the
exact function value rounded once.

Each op is one declaration on the function kernel: its record's ``exact`` is the function
(:func:`~exactref._exact.mpfr_function`, a line naming MPFR's function, or one of the kernel's
compositions) and ``derivative`` its derivative; every evaluation reads them from the record
(``ops.get_op(name).exact``; the evaluation is :mod:`._function_kernel`'s). The declaration
also states the op's counterparts in torch and numpy with their contracts and data
(:mod:`._function_counterparts` builds them), its hard regions, and what the libraries of the
accuracy presets document of it (``presets=``, :func:`~._accuracy.documented`). The kernel
gives, per element, the exact value rounded to odd at two bits more than any format the call
rounds into (MPFR's correctly rounded functions; interval arithmetic with Ziv's strategy for
the compositions), which rounds like the exact value in every mode. An input format of at most
16 bits is answered from a table of every bit pattern, built once and cached on disk.

>>> import exactref as er
>>> er.exp(er.asarray([0.0, 1.0, -float("inf")], "bfloat16")).rounded.tolist()
[1.0, 2.71875, 0.0]
>>> er.tanh(er.asarray([0.5], "float32"), rounding="toward_zero").rounded.tolist()
[0.46211713552474976]
>>> er.gelu(er.asarray([1.0], "float16"), approximate="tanh").rounded.tolist()
[0.84130859375]

The tolerance models the implementation freedom the ops declare: the exact value rounded in the
compute format (float32 for the half and 8-bit formats, as PyTorch's opmath) and then stored;
with ``accuracy=`` (a number of ulps or a library's preset, :mod:`._accuracy`), any number of
the compute format within that many ulps of the exact value, then stored.

>>> r = er.exp(er.asarray([0.5], "bfloat16"), accuracy="sleef_u10")
>>> r.models[1:3]
('fused in float32', 'within sleef_u10 (1 ulp) in float32: lowest')
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._exact import (
    COMPLEX,
    COMPOSITIONS,
    DERIVATIVES,
    POW_PARTIALS,
    Derivative,
    mpfr_function,
    root_derivative,
    two_sum,
)
from .._exact import function_values as evaluate
from .._operands import check_number
from ..ops import Counterparts, Param, get_op, names_of, register
from ._accuracy import documented as _documented
from ._elementwise import OpTypeError, elementwise, with_backward
from ._function_backward import atan2_backward, backward_of, pow_backward
from ._function_counterparts import INF as _I
from ._function_counterparts import KVEC as _KVEC
from ._function_counterparts import NAN as _N
from ._function_counterparts import SLEEF_DOMAIN as _SLEEF_DOMAIN
from ._function_counterparts import SLEEF_GEN as _SLEEF_GEN
from ._function_counterparts import VML as _VML
from ._function_counterparts import numpy_counterpart as _numpy
from ._function_counterparts import torch_counterpart as _torch
from ._function_kernel import MODELS as _MODELS
from ._function_kernel import call_bits as _bits
from ._function_kernel import documented_models
from ._function_kernel import int_powers as _int_powers
from ._function_kernel import lane as _lane
from ._function_kernel import negate as _negate
from ._function_kernel import value as _value
from ._function_regions import ONE as _ONE
from ._function_regions import PI_HALVES as _PI_HALVES
from ._function_regions import SMALL as _SMALL
from ._function_regions import SUBNORMAL as _SUBNORMAL
from ._function_regions import atan2_pairs as _atan2_pairs
from ._function_regions import both as _both
from ._function_regions import mp_gelu as _gelu
from ._function_regions import mp_gelu_tanh as _gelu_tanh
from ._function_regions import mp_gelu_u as _gelu_u
from ._function_regions import mp_logit as _logit
from ._function_regions import mp_mish as _mish
from ._function_regions import mp_silu as _silu
from ._function_regions import near as _near
from ._function_regions import pow_pairs as _pow_pairs
from ._function_regions import span as _span
from ._function_regions import underflow as _underflow

__all__ = [*names_of(__name__)]

_REAL = ("bool", "int", "uint", "float")


# ------------------------------------------------------------------------- the declaration
def _functions_family(exact, derivative=None, check=None, presets=None):
    """File the op under the ``functions`` family (its own page, ``docs/functions.md``) with
    its function record (``exact``), derivative and what the libraries of the accuracy presets
    document of it (``presets``, :func:`~._accuracy.documented`: carried by the record's band
    models); a :class:`Derivative` also gives the op its ``backward`` (``check``: how the op
    checks its parameters, for the backward's)."""

    def family(function):
        spec = function.spec
        function.spec = register(replace(spec, family="functions", exact=exact,
                                         derivative=derivative,
                                         models=documented_models(spec.models, presets)))
        if isinstance(derivative, Derivative):
            with_backward(function, backward_of(function.spec.name, check))
        return function

    return family


def _declare(name, summary, counterparts, *, exact, derivative=None, presets=None, doc="",
             audit_inputs=()):
    """One unary function without parameters: its declaration (the common shape). ``exact``:
    its record (``mpfr_function("exp")``, MPFR's function; or a composition); ``derivative``:
    its :class:`Derivative` (None: no backward); ``presets``: the libraries' documented errors
    (:func:`~._accuracy.documented`; None: no preset documents it)."""

    def formula(ctx, X):
        return _value(ctx, X)

    formula.__name__ = formula.__qualname__ = name
    formula.__doc__ = doc
    formula.__module__ = __name__
    kinds = _REAL + (("complex",) if exact.complex is not None else ())
    return _functions_family(exact, derivative, presets=presets)(elementwise(
        name, ("x",), kernel="function", promotion=name, summary=summary,
        counterparts=counterparts, kinds=kinds, fast=_lane, models=_MODELS,
        accuracy=True, audit_inputs=audit_inputs)(formula))


def _doc(what, specials, example):
    return (f"Elementwise {what}, the exact value rounded once (integers give the policy's "
            f"default float). {specials}\n\n    >>> import exactref as er\n    {example}\n    ")


# ------------------------------------------------------ torch's kernel sources of single ops
# float16 and bfloat16 erf: Vectorized<float>::erf, Abramowitz and Stegun (absolute error)
_ERF_SOURCE = _VML.format(f="erf", M="Erf").replace("(SLEEF's erff16_u10)",
                                                    "(Abramowitz and Stegun 7.1.26)")
_ERFC_SOURCE = _VML.format(f="erfc", M="Erfc").replace("erfcf16_u10", "erfcf16_u15")
# glibc 2.36's atan2f measured 1.30 ulps
_ATAN2_SOURCE = _KVEC.format(f="atan2").replace("UnaryOps", "BinaryOps")
_POW_SOURCE = ("PowKernel.cpp pow_tensor_tensor_kernel: cpu_kernel_vec, vectorized SLEEF "
               "pow_u10, scalar std::pow (float16 and bfloat16 in float32); a scalar exponent "
               "takes pow_tensor_scalar_optimized_kernel (2: x * x, 3: x * x * x, 0.5: sqrt, "
               "-0.5: rsqrt, -1: 1 / x, -2: 1 / (x * x))")


# ------------------------------------------------------------------- exponentials, logarithms
exp = _declare("exp", "e**x, rounded once",
               Counterparts(_torch("torch.exp", _VML.format(f="exp", M="Exp"),
                                   (1.0, 1.0, 1.0), (0.517, 0.549, 0.547, 0.541),
                                   step=1.0),
                            _numpy("np.exp", (0.69, 2.165, 2.0, 0.501),
                                   complex=("cexp", 2.0, (1.556, 1.301)),
                                   specials=(((-_I, -_I), (0.0, -0.0)),)),
                            "jnp.exp"),
               audit_inputs=(_near("overflow", lambda m, e: [m.log(e.max)]),
                             *_underflow("underflow", lambda m, e, t: m.log(t)), _SMALL),
               presets=_documented(
                   glibc=1, glibc_libmvec=4, sleef_u10=1.0,
                   sleef_u35=1.0,  # no u35 variant: Sleef_exp_u10
                   cuda=(2, 1),
                   cuda_intrinsics=({"ulps": 2, "per_abs_x": 1.173}, 1),  # __expf
                   # loops_exponent_log.dispatch.c.src: float32 SIMD exp "Max ULP error measured
                   # across all 32-bit FP's = 2.52"
                   numpy=(3, 1)),
               exact=mpfr_function("exp", complex="exp"), derivative=DERIVATIVES.exp,
               doc=_doc("``e**x``", "``exp(±0) = 1`` exactly, ``exp(-inf) = +0``, "
                        "``exp(+inf) = +inf``; overflow and underflow as the rounding mode says.",
                        ">>> er.exp(er.asarray([1.0, -200.0], 'float16')).rounded.tolist()\n"
                        "    [2.71875, 0.0]"))
exp2 = _declare("exp2", "2**x, rounded once",
                Counterparts(_torch("torch.exp2", _KVEC.format(f="exp2"),
                                    (1.0, 1.0, 1.0), (0.786, 0.787, 0.753, 0.713)),
                             _numpy("np.exp2", (0.708, 2.487, 1.917, 0.501)),
                             "jnp.exp2"),
                audit_inputs=(_near("overflow", lambda m, e: [m.log2(e.max)]),
                              *_underflow("underflow", lambda m, e, t: m.log2(t)), _SMALL),
                presets=_documented(
                    glibc=1, glibc_libmvec=4, sleef_u10=1.0,
                    # exp2_u35 and log2_u35 are in funcproto.h ({"exp2", 35, ...}) but not in the
                    # docs
                    sleef_u35=3.5,
                    cuda=(2, 1),
                    cuda_intrinsics=(2, 1),  # exp2f not in Table 20
                    numpy=(2, 1)),
                exact=mpfr_function("exp2"), derivative=DERIVATIVES.exp2,
                doc=_doc("``2**x``", "Exact at integers (``exp2(-3) = 0.125``).",
                         ">>> er.exp2([-3.0, 0.5]).rounded.tolist()\n"
                         "    [0.125, 1.4142135623730951]"))
expm1 = _declare("expm1", "e**x - 1, rounded once",
                 Counterparts(_torch("torch.expm1", _SLEEF_GEN.format(f="expm1"),
                                     (1.0, 1.0, 1.0), (0.993, 0.977, 0.995, 0.892)),
                              _numpy("np.expm1", (0.509, 2.488, 2.115, 0.749)),
                              "jnp.expm1"),
                 audit_inputs=(_near("overflow", lambda m, e: [m.log(e.max)]),
                               _near("rounds to -1", lambda m, e: [m.log(e.tail)]), _SMALL,
                               _SUBNORMAL),
                 presets=_documented(
                     glibc=(0, 1),  # no float entry: CORE-MATH expm1f (2.41)
                     glibc_libmvec=4, sleef_u10=1.0,
                     sleef_u35=1.0,  # no u35 variant: Sleef_expm1_u10
                     cuda=1,
                     cuda_intrinsics=1,  # not in Table 20
                     numpy=(3, 1)),
                 exact=mpfr_function("expm1"), derivative=DERIVATIVES.expm1,
                 doc=_doc("``e**x - 1``", "``expm1(±0) = ±0``, ``expm1(-inf) = -1``.",
                          ">>> er.expm1([1e-10]).rounded.tolist()\n"
                          "    [1.00000000005e-10]"))
log = _declare("log", "the natural logarithm, rounded once",
               Counterparts(_torch("torch.log", _VML.format(f="log", M="Ln"),
                                   (1.0, 1.0, 1.0), (0.501, 0.755, 0.793, 0.702),
                                   step=1.0),
                            _numpy("np.log", (0.519, 2.359, 2.55, 0.801),
                                   complex=("clog", 2.5, (1.771, 1.864))),
                            "jnp.log"),
               audit_inputs=(*_ONE, _SUBNORMAL),
               presets=_documented(
                   glibc=1, glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=1,
                   # __logf
                   cuda_intrinsics=({"abs": 2**-21.41, "on": (0.5, 2.0), "else_ulps": 3}, 1),
                   # loops_exponent_log.dispatch.c.src: float32 SIMD log "Max ULP error measured
                   # across all 32-bit FP's = 3.83"
                   numpy=(4, 1)),
               exact=mpfr_function("log", complex="log"), derivative=DERIVATIVES.log,
               doc=_doc("natural logarithm", "``log(1) = +0``, ``log(±0) = -inf``, NaN below "
                        "zero, ``log(+inf) = +inf``.",
                        ">>> er.log(er.asarray([2.0, 0.0, -1.0], 'float32')).rounded.tolist()\n"
                        "    [0.6931471824645996, -inf, nan]"))
log2 = _declare("log2", "the base-2 logarithm, rounded once",
                Counterparts(_torch("torch.log2", _VML.format(f="log2", M="Log2"),
                                    (1.0, 1.0, 1.0), (0.501, 0.515, 0.5, 0.503)),
                             _numpy("np.log2", (0.503, 1.559, 1.857, 0.751),
                                    complex=("clog(z) / log(2)", 3.0, (2.036, 2.383))),
                             "jnp.log2"),
                audit_inputs=(*_ONE, _SUBNORMAL),
                presets=_documented(
                    glibc=(1, 2), glibc_libmvec=4, sleef_u10=1.0,
                    sleef_u35=3.5,  # in funcproto.h ({"log2", 35, ...}) but not in the docs
                    cuda=1,
                    # __log2f
                    cuda_intrinsics=({"abs": 2**-22, "on": (0.5, 2.0), "else_ulps": 2}, 1),
                    numpy=(3, 1)),
                exact=mpfr_function("log2", complex=COMPLEX.log2), derivative=DERIVATIVES.log2,
                doc=_doc("base-2 logarithm", "Exact at powers of two; as ``log`` at 0, below 0 "
                         "and +inf.",
                         ">>> er.log2([8.0, 3.0]).rounded.tolist()\n"
                         "    [3.0, 1.584962500721156]"))
log10 = _declare("log10", "the base-10 logarithm, rounded once",
                 Counterparts(_torch("torch.log10", _VML.format(f="log10", M="Log10"),
                                     (1.0, 1.0, 1.0), (0.505, 0.52, 0.545, 0.5)),
                              _numpy("np.log10", (0.558, 2.021, 2.103, 1.623),
                                     complex=("clog10 (numpy: clog scaled by log10(e))", 3.5, (2.778, 2.332))),
                              "jnp.log10"),
                 audit_inputs=(*_ONE, _SUBNORMAL),
                 presets=_documented(
                     # 2.41 NEWS lists log10f among the new correctly rounded CORE-MATH functions;
                     # the x86_64 file still says 2 (the refactor commit calls these files stale)
                     glibc=2,
                     glibc_libmvec=4, sleef_u10=1.0,
                     sleef_u35=1.0,  # no u35 variant: Sleef_log10_u10
                     cuda=(2, 1),
                     # __log10f
                     cuda_intrinsics=({"abs": 2**-24, "on": (0.5, 2.0), "else_ulps": 3}, 1),
                     numpy=(4, 1)),
                 exact=mpfr_function("log10", complex="log10"), derivative=DERIVATIVES.log10,
                 doc=_doc("base-10 logarithm", "Exact at powers of ten (``log10(1000) = 3``).",
                          ">>> er.log10([1000.0]).rounded.tolist()\n    [3.0]"))
log1p = _declare("log1p", "log(1 + x), rounded once",
                 Counterparts(_torch("torch.log1p", _SLEEF_GEN.format(f="log1p"),
                                     (1 + 2.0 ** -8, 1 + 2.0 ** -8, 1.0), (1.0002, 1.0, 0.564, 0.55),
                                     step=1 + 2.0 ** -8),
                              _numpy("np.log1p", (0.587, 1.828, 1.114, 0.721)),
                              "jnp.log1p"),
                 audit_inputs=(_near("minus one", lambda m, e: [m.mpfr(-1)]),
                               _span("above minus one", lambda m, e: [
                                   (m.exp2(-e.p) - 1, m.exp2(-e.p // 2) - 1)]),
                               _SMALL, _SUBNORMAL),
                 presets=_documented(
                     glibc=(0, 1),  # no float entry: CORE-MATH log1pf
                     glibc_libmvec=4, sleef_u10=1.0,
                     sleef_u35=1.0,  # no u35 variant: Sleef_log1p_u10
                     cuda=1,
                     cuda_intrinsics=1,  # not in Table 20
                     numpy=(2, 1)),
                 exact=mpfr_function("log1p"), derivative=DERIVATIVES.log1p,
                 doc=_doc("``log(1 + x)``", "``log1p(±0) = ±0``, ``log1p(-1) = -inf``, NaN "
                          "below -1.",
                          ">>> er.log1p([-1.0, 1e-20]).rounded.tolist()\n    [-inf, 1e-20]"))

# numpy's cbrt measured against MPFR's (numpy 2.4.6, ml_dtypes 0.7.0, an Intel Xeon with
# AVX-512; 2 x 10**5 to 6 x 10**5 float64 and float32 inputs per run: random bit patterns and
# [-10, 10], [0.5, 8]; every float16 and bfloat16): float64 0.555, float32 1.924 ulps (numpy's
# validation set umath-validation-set-cbrt.csv tolerates 2 beyond the rounded value: 2.5 from
# the exact one), float16 inputs in float32 1.747; glibc 2.36's cbrtf (ml_dtypes' loops) 0.943
# That float64 figure is SVML's AVX-512 loop, which numpy dispatches only on AVX512_SKX CPUs;
# elsewhere np.cbrt is the C library's cbrt: glibc 2.36's up to 3.11 ulps (measured over
# 240,000 random bit patterns and [2**-1074, 2**1024) on an AMD EPYC with AVX2), 4 in glibc's
# own bound (sysdeps/x86_64/fpu/libm-test-ulps; glibc 2.41 made it correctly rounded). The
# contract admits both paths (4 ulps): the same on every CPU, as its documented table is.
cbrt = _declare("cbrt", "the cube root, rounded once",
                Counterparts(None, _numpy("np.cbrt", (0.555, 1.924, 1.747, 0.943),
                                          accuracy={"float64": 4.0, "float32": 2.5}),
                             "jnp.cbrt"),
                exact=mpfr_function("cbrt"), derivative=root_derivative(3),
                audit_inputs=(_SMALL, _SUBNORMAL, _near("cubes", lambda m, e: _both(
                    [m.mpfr(8), m.mpfr(27), m.mpfr(0.125), e.max]))),
                doc=_doc("cube root", "``cbrt(±0) = ±0``, ``cbrt(±inf) = ±inf``, real at "
                         "negative inputs; exact at cubes (``cbrt(-8) = -2``).",
                         ">>> er.cbrt([-8.0, 2.0]).rounded.tolist()\n"
                         "    [-2.0, 1.2599210498948732]"))

# ------------------------------------------------------------------------ trigonometric
sin = _declare("sin", "the sine, rounded once",
               Counterparts(_torch("torch.sin", _VML.format(f="sin", M="Sin"),
                                   (1.0, 1.0, 1.0), (0.501, 0.597, 0.599, 0.595)),
                            _numpy("np.sin", (0.515, 1.327, 1.31, 0.555),
                                   accuracy={"float64": {"ulps": 1.5, "abs": 2.0 ** -92}},
                                   complex=("csin", 2.5, (1.819, 1.787)),
                                   specials=(((_I, -_I), (_N, _I)),
                                             ((-_I, -_I), (_N, _I)),
                                             ((_N, -_I), (_N, _I)))),
                            "jnp.sin"),
               audit_inputs=(*_PI_HALVES, _SMALL),
               presets=_documented(
                   glibc=1, glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=2,
                   # __sinf: "For x in [-pi, pi] ... 2^-21.41, and larger otherwise"
                   cuda_intrinsics=({"abs": 2**-21.41, "on": (-np.pi, np.pi), "else_ulps": None}, 2),
                   numpy=(2, 1)),
               exact=mpfr_function("sin", complex="sin"), derivative=DERIVATIVES.sin,
               doc=_doc("sine", "``sin(±0) = ±0``, NaN at ±inf; large arguments are reduced "
                        "exactly.",
                        ">>> er.sin(er.asarray([1e22], 'float64')).rounded.tolist()\n"
                        "    [-0.8522008497671888]"))
cos = _declare("cos", "the cosine, rounded once",
               Counterparts(_torch("torch.cos", _VML.format(f="cos", M="Cos"),
                                   (1.0, 1.0, 1.0), (0.501, 0.6, 0.6, 0.598)),
                            _numpy("np.cos", (0.562, 1.341, 1.329, 0.557),
                                   accuracy={"float64": {"ulps": 1.5, "abs": 2.0 ** -92}},
                                   complex=("ccos", 2.5, (1.769, 1.829)),
                                   specials=(((_I, 0.0), (_N, 0.0)),
                                             ((_I, _I), (_I, _N)),
                                             ((-_I, -0.0), (_N, 0.0)),
                                             ((-_I, -_I), (_I, _N)),
                                             ((_N, -0.0), (_N, 0.0)))),
                            "jnp.cos"),
               audit_inputs=(*_PI_HALVES, _SMALL),
               presets=_documented(
                   glibc=1, glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=2,
                   # __cosf: "For x in [-pi, pi] ... 2^-21.19, and larger otherwise"
                   cuda_intrinsics=({"abs": 2**-21.19, "on": (-np.pi, np.pi), "else_ulps": None}, 2),
                   numpy=(2, 1)),
               exact=mpfr_function("cos", complex="cos"), derivative=DERIVATIVES.cos,
               doc=_doc("cosine", "``cos(±0) = 1``, NaN at ±inf.",
                        ">>> er.cos(er.asarray([0.0, 3.0], 'bfloat16')).rounded.tolist()\n"
                        "    [1.0, -0.98828125]"))
tan = _declare("tan", "the tangent, rounded once",
               Counterparts(_torch("torch.tan", _VML.format(f="tan", M="Tan"),
                                   (1.0, 1.0, 1.0), (0.507, 0.929, 0.931, 0.91)),
                            _numpy("np.tan", (0.528, 3.223, 2.419, 1.387),
                                   complex=("ctan", 5.5, (4.644, 4.283)),
                                   specials=(((_I, 0.0), (_N, 0.0)),
                                             ((_I, -0.0), (_N, -0.0)),
                                             ((-_I, 0.0), (_N, 0.0)),
                                             ((-_I, -0.0), (_N, -0.0)),
                                             ((_N, 0.0), (_N, 0.0)),
                                             ((_N, -0.0), (_N, -0.0)))),
                            "jnp.tan"),
               audit_inputs=(*_PI_HALVES, _SMALL),
               presets=_documented(
                   glibc=0,  # no round-to-nearest entry for either
                   glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=(4, 2),
                   # __tanf: "Derived from its implementation as __sinf(x) * (1/__cosf(x))", no
                   # number
                   cuda_intrinsics=(None, 2),
                   numpy=(4, 1)),
               exact=mpfr_function("tan", complex="tan"), derivative=DERIVATIVES.tan,
               doc=_doc("tangent", "``tan(±0) = ±0``, NaN at ±inf.",
                        ">>> er.tan([1.0]).rounded.tolist()\n    [1.5574077246549023]"))
#: where asin and acos are hard: at ±1 (their derivative's poles) and near them, and small
_PLUS_MINUS_ONE = (_near("±1", lambda m, e: [m.mpfr(1), m.mpfr(-1)]),
                   _span("near ±1", lambda m, e: [(1 - m.exp2(-e.p // 2), 1),
                                                  (-1, m.exp2(-e.p // 2) - 1)]),
                   _SMALL)
asin = _declare("asin", "the arcsine, rounded once",
                Counterparts(_torch("torch.asin", _VML.format(f="asin", M="Asin"),
                                    (1.0, 1.0, 1.0), (0.831, 0.697, 0.694, 0.635)),
                             _numpy("np.arcsin", (0.819, 2.592, 2.319, 0.879),
                                    complex=("casin", 3.5, (2.845, 3.044))),
                             "jnp.arcsin"),
                audit_inputs=_PLUS_MINUS_ONE,
                presets=_documented(
                    glibc=(0, 1), glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=2,
                    cuda_intrinsics=2,  # not in Table 20
                    numpy=(4, 1)),  # umath-validation-set-arcsin.csv
                exact=mpfr_function("asin", complex="asin"), derivative=DERIVATIVES.asin,
                doc=_doc("arcsine", "``asin(±0) = ±0``, NaN outside [-1, 1].",
                         ">>> er.asin([1.0, 2.0]).rounded.tolist()\n"
                         "    [1.5707963267948966, nan]"))
acos = _declare("acos", "the arccosine, rounded once",
                Counterparts(_torch("torch.acos", _VML.format(f="acos", M="Acos"),
                                    (1.0, 1.0, 1.0), (0.815, 0.774, 0.745, 0.745),
                                    complex128_formula="pi/2 - asin(z)"),
                             _numpy("np.arccos", (0.806, 1.706, 1.715, 0.867),
                                    complex=("cacos", 3.5, (2.345, 2.858))),
                             "jnp.arccos"),
                audit_inputs=_PLUS_MINUS_ONE,
                presets=_documented(
                    glibc=(0, 1), glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=2,
                    cuda_intrinsics=2,  # not in Table 20
                    numpy=(3, 1)),  # umath-validation-set-arccos.csv
                exact=mpfr_function("acos", complex="acos"), derivative=DERIVATIVES.acos,
                doc=_doc("arccosine", "``acos(1) = +0``, NaN outside [-1, 1].",
                         ">>> er.acos([1.0, -1.0]).rounded.tolist()\n"
                         "    [0.0, 3.141592653589793]"))
atan = _declare("atan", "the arctangent, rounded once",
                Counterparts(_torch("torch.atan", _VML.format(f="atan", M="Atan"),
                                    (1.0, 1.0, 1.0), (0.646, 0.759, 0.656, 0.643)),
                             _numpy("np.arctan", (0.53, 1.804, 1.295, 0.746),
                                    complex=("catan", 5.5, (3.142, 4.878))),
                             "jnp.arctan"),
                audit_inputs=(_SMALL, _span("rounds to ±pi/2", lambda m, e: [
                                  (m.exp2(e.p - 2), m.exp2(e.p + 3)),
                                  (-m.exp2(e.p - 2), -m.exp2(e.p + 3))])),
                presets=_documented(
                    glibc=(0, 1), glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=2,
                    cuda_intrinsics=2,  # not in Table 20
                    numpy=(3, 1)),  # umath-validation-set-arctan.csv
                exact=mpfr_function("atan", complex="atan"), derivative=DERIVATIVES.atan,
                doc=_doc("arctangent", "``atan(±0) = ±0``, ``atan(±inf) = ±pi/2`` rounded.",
                         ">>> er.atan([float('inf')], rounding='toward_zero').rounded.tolist()\n"
                         "    [1.5707963267948966]"))

# ------------------------------------------------------------------------------ hyperbolic
sinh = _declare("sinh", "the hyperbolic sine, rounded once",
                Counterparts(_torch("torch.sinh", _KVEC.format(f="sinh"),
                                    (2.5, 2.5, 2.5), (1.897, 1.752, 1.573, 1.104),
                                    sleef_overflow=_SLEEF_DOMAIN, odd=True),
                             _numpy("np.sinh", (0.784, 1.4, 1.246, 1.752),
                                    accuracy={"ml_dtypes": 2.5},
                                    complex=("csinh", 2.5, (1.862, 1.745)),
                                    specials=(((-_I, _I), (_I, _N)), ((-_I, -_I), (_I, _N)),
                                              ((-_I, _N), (_I, _N)))),
                             "jnp.sinh"),
                audit_inputs=(_near("overflow", lambda m, e: _both([m.log(2 * e.max)])),
                              _SMALL, _SUBNORMAL),
                presets=_documented(
                    glibc=(0, 2), glibc_libmvec=4,
                    # 1.0 ULP on [-88.5, 88.5] (float) / [-709, 709] (double); outside, infinity
                    # with the correct sign or a correct value within 1.0 ULP
                    sleef_u10=1.0,
                    # 3.5 ULP on [-88, 88] (float) / [-709, 709] (double); outside, infinity with
                    # the correct sign or a correct value within 3.5 ULP
                    sleef_u35=3.5,
                    cuda=(3, 2),
                    cuda_intrinsics=(3, 2),  # not in Table 20
                    numpy=(2, 1)),
                exact=mpfr_function("sinh", complex="sinh"), derivative=DERIVATIVES.sinh,
                doc=_doc("hyperbolic sine", "``sinh(±0) = ±0``, ``sinh(±inf) = ±inf``.",
                         ">>> er.sinh([1.0]).rounded.tolist()\n    [1.1752011936438014]"))
cosh = _declare("cosh", "the hyperbolic cosine, rounded once",
                Counterparts(_torch("torch.cosh", _KVEC.format(f="cosh"),
                                    (2.5, 2.5, 2.5), (1.897, 1.841, 1.377, 0.964),
                                    sleef_overflow=_SLEEF_DOMAIN),
                             _numpy("np.cosh", (0.749, 2.285, 1.749, 1.841),
                                    accuracy={"ml_dtypes": 2.5},
                                    complex=("ccosh", 2.5, (1.868, 1.775)),
                                    specials=(((0.0, -_I), (_N, 0.0)), ((-0.0, _I), (_N, 0.0)),
                                              ((-0.0, _N), (_N, 0.0)), ((_I, -_I), (_I, _N)),
                                              ((-_I, _I), (_I, _N)), ((_N, 0.0), (_N, 0.0)),
                                              ((_N, -0.0), (_N, -0.0)))),
                             "jnp.cosh"),
                audit_inputs=(_near("overflow", lambda m, e: _both([m.log(2 * e.max)])),
                              _SMALL),
                presets=_documented(
                    glibc=(0, 2), glibc_libmvec=4, sleef_u10=1.0, sleef_u35=3.5, cuda=(2, 1),
                    cuda_intrinsics=(2, 1),  # not in Table 20
                    numpy=(3, 1)),
                exact=mpfr_function("cosh", complex="cosh"), derivative=DERIVATIVES.cosh,
                doc=_doc("hyperbolic cosine", "``cosh(±0) = 1``, ``cosh(±inf) = +inf``.",
                         ">>> er.cosh([1.0]).rounded.tolist()\n    [1.5430806348152437]"))
tanh = _declare("tanh", "the hyperbolic tangent, rounded once",
                Counterparts(_torch("torch.tanh", _VML.format(f="tanh", M="Tanh"),
                                    (1.0, 1.0, "sleef_u10"), (0.729, 0.503, 0.509, 0.5),
                                    step=2.5),
                             _numpy("np.tanh", (1.075, 1.328, 1.342, 1.977),
                                    accuracy={"ml_dtypes": 2.5},
                                    complex=("ctanh", 6.5, (5.556, 5.737)),
                                    specials=(((0.0, _I), (0.0, _N)), ((0.0, -_I), (0.0, _N)),
                                              ((0.0, _N), (0.0, _N)), ((-0.0, _I), (-0.0, _N)),
                                              ((-0.0, -_I), (-0.0, _N)), ((-0.0, _N), (-0.0, _N)))),
                             "jnp.tanh"),
                audit_inputs=(_near("saturation", lambda m, e: _both([m.atanh(1 - e.tail)])),
                              _span("saturating", lambda m, e: [
                                  (m.atanh(1 - 8 * e.tail), m.atanh(1 - e.tail / 8)),
                                  (-m.atanh(1 - 8 * e.tail), -m.atanh(1 - e.tail / 8))]),
                              _SMALL, _SUBNORMAL),
                presets=_documented(
                    glibc=(0, 2), glibc_libmvec=4, sleef_u10=(1.0001, 1.0), sleef_u35=3.5,
                    cuda=(2, 1),
                    # __tanhf: "maximum relative error ... 2^-11"; compute capability >= 7.5 only,
                    # otherwise it behaves as tanhf (2 ulps)
                    cuda_intrinsics=({"rel": 2**-11}, 1),
                    numpy=2),
                exact=mpfr_function("tanh", complex="tanh"), derivative=DERIVATIVES.tanh,
                doc=_doc("hyperbolic tangent", "``tanh(±0) = ±0``, ``tanh(±inf) = ±1``.",
                         ">>> er.tanh(er.asarray([0.5, 20.0], 'float16')).rounded.tolist()\n"
                         "    [0.462158203125, 1.0]"))

# ------------------------------------------------------------------------ error functions
erf = _declare("erf", "the error function, rounded once",
               Counterparts(_torch("torch.erf", _ERF_SOURCE,
                                   (1.0, 1.0, "abs"), (0.743, 0.713, 4.925, 255.0),
                                   step=1.0),
                            None, "jax.scipy.special.erf"),
               audit_inputs=(_near("saturation", lambda m, e: _both([e.solve(m.erfc, e.tail, 0, 30)])),
                             _SMALL, _SUBNORMAL),
               presets=_documented(
                   glibc=(0, 1),  # double erf correctly rounded from 2.43
                   glibc_libmvec=4, sleef_u10=1.0,
                   sleef_u35=1.0,  # no u35 variant: Sleef_erf_u10
                   cuda=2,
                   cuda_intrinsics=2,  # not in Table 20
                   numpy=None),  # numpy has no erf ufunc
               exact=mpfr_function("erf"), derivative=DERIVATIVES.erf,
               doc=_doc("error function", "``erf(±0) = ±0``, ``erf(±inf) = ±1``.",
                        ">>> er.erf([0.5]).rounded.tolist()\n    [0.5204998778130465]"))
erfc = _declare("erfc", "the complementary error function 1 - erf(x), rounded once",
                Counterparts(_torch("torch.erfc", _ERFC_SOURCE,
                                    (1.0, 1.0, 1.5), (0.751, 0.792, 0.754, 0.751)),
                             None, "jax.scipy.special.erfc"),
                audit_inputs=(*_underflow("underflow", lambda m, e, t: e.solve(m.erfc, t, 0, 40)),
                              _near("rounds to 2", lambda m, e: [-e.solve(m.erfc, 2 * e.tail, 0,
                                                                          40)]), _SMALL),
                presets=_documented(
                    glibc=(0, 5),  # double erfc correctly rounded from 2.43
                    glibc_libmvec=4,
                    # no u10 erfc: Sleef_erfc_u15. Double: max(1.5 ULP, DBL_MIN) for x < 26.2 and
                    # max(2.5 ULP, DBL_MIN) otherwise (the larger kept); float: max(1.5 ULP,
                    # FLT_MIN)
                    sleef_u10=(1.5, 2.5),
                    sleef_u35=(1.5, 2.5),  # only Sleef_erfc_u15 (see sleef_u10)
                    cuda=(4, 5),
                    cuda_intrinsics=(4, 5),  # not in Table 20
                    numpy=None),  # numpy has no erfc ufunc
                exact=mpfr_function("erfc"), derivative=DERIVATIVES.erfc,
                doc=_doc("complementary error function ``1 - erf(x)``",
                         "``erfc(-inf) = 2``, ``erfc(+inf) = +0``; no cancellation for large x.",
                         ">>> er.erfc([10.0]).rounded.tolist()\n    [2.088487583762545e-45]"))

# ------------------------------------------------------------------------------ activations
def _formula_bound(rounded_steps: int, scale_abs) -> dict:
    """The ``"mainstream"`` bound of an activation no library documents, derived from the
    formula the libraries compute: PyTorch's ``1 / (1 + exp(-x))`` (sigmoid) and ``x / (1 +
    exp(-x))`` (silu; ``x * sigmoid(x)`` rounds once more), CPU and CUDA alike, in the compute
    format, with ``exp`` within ``u`` ulps of its exact value (``u``: the larger of SLEEF u10's
    and CUDA's documented exp bound, the exps PyTorch calls).

    Derivation (``p`` the compute format's precision, relative errors): ``t = e (1 + d1)``,
    ``|d1| <= u 2**(1-p)``; ``1 + t = (1 + e)(1 + a)`` with ``|a| = |d1| e / (1 + e) < |d1|``;
    each later rounding adds ``|d| <= 2**-p``. The result is ``f (1 + r)`` with ``|r| <= (2u +
    k) 2**-p + O(2**-2p)`` (``k`` = ``rounded_steps`` after exp), and ``|f| < 2**p ulp(f)``, so
    within ``2u + k`` ulps of ``f`` plus a margin of ``2**-8`` ulp for the second-order terms.
    Where ``exp(-x)`` overflows (``x < -ln(max)``) the formula gives 0 for a nonzero ``f``:
    ``|f| <= scale_abs(fmt)``, an absolute term (``{"ulps": a, "abs": e}``, SLEEF's
    ``max(1.0 ULP, FLT_MIN)`` style)."""
    from .._formats import FORMATS

    out = {}
    for name in ("float32", "float64"):
        fmt = FORMATS[name]
        doc = get_op("exp").models[-1].documented
        u = max(doc["sleef_u10"][name], doc["cuda"][name] + 0.5)  # cuda: from the rounded value
        out[name] = {"ulps": 2 * u + rounded_steps + 2.0 ** -8, "abs": scale_abs(fmt)}
    return {"formula": out}


def _sigmoid_tail(fmt) -> float:
    return fmt.smallest_normal  # sigmoid(x) < e**x < 1 / max < smallest normal there


def _silu_tail(fmt) -> float:
    return float(2 * np.log(fmt.max_finite) / fmt.max_finite)  # |x| e**x, |x| <= ln(max) + 1


sigmoid = _declare("sigmoid", "1 / (1 + e**-x), rounded once",
                   Counterparts(_torch("torch.sigmoid", bf16_flush=True), None, "jax.nn.sigmoid"),
                   audit_inputs=(*_underflow("underflow", lambda m, e, t: _logit(m, t)),
                                 _near("saturation", lambda m, e: [_logit(m, 1 - e.tail)]),
                                 _SMALL),
                   exact=COMPOSITIONS.sigmoid, derivative=DERIVATIVES.sigmoid,
                   presets=_formula_bound(2, _sigmoid_tail),
                   doc=_doc("logistic sigmoid ``1 / (1 + e**-x)``",
                            "``sigmoid(±0) = 1/2`` exactly, ``sigmoid(-inf) = +0``, "
                            "``sigmoid(+inf) = 1``.",
                            ">>> er.sigmoid(er.asarray([0.0, 3.0], 'bfloat16')).rounded.tolist()"
                            "\n    [0.5, 0.953125]"))
silu = _declare("silu", "x * sigmoid(x), rounded once",
                Counterparts(_torch("torch.nn.functional.silu", bf16_flush=True), None,
                             "jax.nn.silu"),
                audit_inputs=(*_underflow("negative tail", lambda m, e, t: e.solve(
                                  lambda x: _silu(m, x), -t, -2000, -2)),
                              _span("x - silu(x) below half an ulp", lambda m, e: [
                                  ((e.p - 1) * m.log(2), (e.p + 3) * m.log(2))]), _SMALL),
                exact=COMPOSITIONS.silu, derivative=DERIVATIVES.silu,
                presets=_formula_bound(3, _silu_tail),
                doc=_doc("SiLU (swish) ``x / (1 + e**-x)``",
                         "``silu(±0) = ±0``, ``silu(+inf) = +inf``, ``silu(-inf) = -0`` (the "
                         "limit; PyTorch's formula gives NaN there).",
                         ">>> er.silu([1.0]).rounded.tolist()\n    [0.7310585786300049]"))
mish = _declare("mish", "x * tanh(softplus(x)), rounded once",
                Counterparts("torch.nn.functional.mish", None, "jax.nn.mish"),
                audit_inputs=(*_underflow("negative tail", lambda m, e, t: e.solve(
                                  lambda x: _mish(m, x), -t, -2000, -2)),
                              _near("rounds to x", lambda m, e: [e.solve(
                                  lambda x: 2 / (1 + m.exp(2 * m.log1p(m.exp(x)))), e.tail, 0,
                                  100)]), _SMALL),
                exact=COMPOSITIONS.mish, derivative=DERIVATIVES.mish,
                doc=_doc("Mish ``x * tanh(log(1 + e**x))``",
                         "``mish(±0) = ±0``, ``mish(+inf) = +inf``, ``mish(-inf) = -0`` (the "
                         "limit).",
                         ">>> er.mish([1.0]).rounded.tolist()\n    [0.8650983882673103]"))


_ERF_FORMULA, _TANH_FORMULA = "none", "tanh"  # gelu's approximate= values


def _gelu_bound() -> dict:
    """gelu's ``"mainstream"`` bound, derived from the formula every mainstream library
    computes (PyTorch CPU and CUDA, ONNX, TensorFlow): ``x * 0.5 * (1 + erf(x * M_SQRT1_2))``,
    and ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))`` for ``approximate="tanh"``, in
    the compute format (precision ``p``; ``ε = 2**-p``).

    The erf form: ``z = x/sqrt2 (1 + h)``, ``|h| <= 2ε`` (the constant and the product), moves
    ``erf`` by ``erf'(t) t |h| <= (2/sqrt(pi)) max(t e**-t**2) 2ε < 0.97ε``; ``erf`` itself is
    within ``e_erf`` absolute: in float32 the polynomial erfs of PyTorch's
    ``Vectorized<float>::erf`` and oneDNN's kernels (Abramowitz and Stegun 7.1.26 in float32
    arithmetic, a minimax polynomial), bounded by 2**-20 = 16ε as
    ``exactref.equivalents.torch.AS_ERF_ABS`` declares them (measured 3.3e-7); in float64
    SLEEF's ``erf_u10`` or CUDA's ``erf`` (2 ulps beyond the rounded value: 2.5ε below 1);
    ``1 + erf`` rounds by at most ε (it is below 2). So ``s = (1 + erf(x/sqrt2)) + E`` with
    ``|E| <= (1.97 + e_erf/ε)ε``, and the last product (``x * 0.5`` is exact) gives ``0.5 x s
    (1 + d)``: within one ulp of ``f`` (``|f d| < ulp(f)``) plus ``0.5 |x| |E| (1 + ε)``; one
    more ulp where ``x * 0.5`` is subnormal. The tanh form: the argument's five roundings and
    two constants (``|h| <= 7ε``) move ``tanh`` by ``sech(t)**2 t 7ε < 3.2ε``, ``tanh`` within
    2.5ε (CUDA's ``tanhf``; SLEEF u10 1ε), ``1 +`` ε: ``|E| <= 6.7ε``. So ``2`` ulps plus
    ``c |x|`` absolute, ``c`` = 9.5ε in float32 (``0.5 (1.97 + 16)``, rounded up) and 3.5ε in
    float64 (the tanh form's ``0.5 * 6.7``; the erf form's 2.24). The cancellation of ``1 +
    erf`` at negative x is what the absolute term admits; at positive x it is up to ``c``
    ulps. A GELU by another formula (the tanh one for the erf one) differs by far more and
    stays caught."""
    return {"formula": {"float32": {"ulps": 2.0, "abs_x": 9.5 * 2.0 ** -24},
                        "float64": {"ulps": 2.0, "abs_x": 3.5 * 2.0 ** -53}}}


def _check_approximate(ctx, approximate):
    if approximate not in (_ERF_FORMULA, _TANH_FORMULA):
        raise ValueError(f"approximate={approximate!r}; expected 'none' (x * Phi(x), with erf) "
                         f"or 'tanh' (the tanh formula), as torch.nn.functional.gelu")
    return {"approximate": approximate}


@_functions_family(COMPOSITIONS.gelu, DERIVATIVES.gelu, _check_approximate,
                   presets=_gelu_bound())
@elementwise("gelu", ("x",), kernel="function", promotion="gelu",
             summary="x * Phi(x) (approximate='tanh': 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 "
                     "x**3)))), rounded once",
             params=(Param("approximate", "none", "'none': the erf formula; 'tanh': the tanh "
                           "formula, each its own exact value", audit=("tanh",)),),
             counterparts=Counterparts(_torch("torch.nn.functional.gelu", bf16_flush=True)),
             kinds=_REAL,
             prepare_params=_check_approximate, fast=_lane,
             models=_MODELS, accuracy=True,
             audit_inputs=(*_underflow("negative tail", lambda m, e, t: e.solve(
                               lambda x: _gelu(m, x), -t, -60, -1)),
                           *_underflow("negative tail (tanh)", lambda m, e, t: e.solve(
                               lambda x: _gelu_tanh(m, x), -t, -60, -1)),
                           _near("rounds to x", lambda m, e: [
                               e.solve(lambda x: m.erfc(x / m.sqrt(2)) / 2, e.tail, 0, 60),
                               e.solve(lambda x: 1 / (1 + m.exp(2 * _gelu_u(m, x))), e.tail,
                                       0, 60)]), _SMALL))
def gelu(ctx, X, approximate="none"):
    """Elementwise GELU, the exact value rounded once: ``x * Phi(x) = (x / 2) erfc(-x /
    sqrt(2))``, or with ``approximate="tanh"`` the tanh formula ``0.5 x (1 + tanh(sqrt(2/pi) (x +
    0.044715 x**3)))`` with its constants exact (0.044715 the decimal). Each formula is its own
    exact function: a kernel that computes one is not covered by the other. ``gelu(±0) = ±0``,
    ``gelu(+inf) = +inf``, ``gelu(-inf) = -0``.

    >>> import exactref as er
    >>> x = er.asarray([1.0], "bfloat16")
    >>> er.gelu(x).rounded.tolist(), er.gelu(x, approximate="tanh").rounded.tolist()
    ([0.83984375], [0.83984375])
    >>> er.gelu([1.0]).rounded.tolist(), er.gelu([1.0], approximate="tanh").rounded.tolist()
    ([0.8413447460685429], [0.8411919906082767])
    """
    return _value(ctx, X)


def _check_softplus(ctx, beta, threshold):
    beta = float(check_number("beta", beta, "softplus", complex_ok=False))
    threshold = float(check_number("threshold", threshold, "softplus", complex_ok=False))
    COMPOSITIONS.softplus.check({"beta": beta, "threshold": threshold})
    return {"beta": beta, "threshold": threshold}


@_functions_family(COMPOSITIONS.softplus, DERIVATIVES.softplus, _check_softplus)
@elementwise("softplus", ("x",), kernel="function", promotion="softplus",
             summary="log(1 + e**(beta x)) / beta, x where beta x > threshold (torch), rounded "
                     "once",
             params=(Param("beta", 1.0, "the scale of x", audit=(2.0,)),
                     Param("threshold", 20.0, "beyond beta x > threshold the result is x",
                           audit=(5.0,))),
             counterparts=Counterparts("torch.nn.functional.softplus", None, None), kinds=_REAL,
             prepare_params=_check_softplus, fast=_lane,
             models=_MODELS, accuracy=True,
             audit_inputs=(*_underflow("negative tail", lambda m, e, t: m.log(m.expm1(t))),
                           _near("threshold / beta", lambda m, e: [20, 10, 5, 2.5]), _SMALL))
def softplus(ctx, X, beta=1.0, threshold=20.0):
    """Elementwise softplus as ``torch.nn.functional.softplus`` defines it: ``x`` where ``beta
    x > threshold`` (the product exact), else ``log(1 + e**(beta x)) / beta``, the exact value
    rounded once. ``softplus(-inf) = +0``, ``softplus(+inf) = +inf`` (for ``beta > 0``).

    >>> import exactref as er
    >>> er.softplus([0.0, 30.0]).rounded.tolist()
    [0.6931471805599453, 30.0]
    >>> er.softplus([1.0], beta=2.0).rounded.tolist()
    [1.0634640055214863]
    """
    return _value(ctx, X)


def _check_eps(ctx, eps):
    if eps is not None:
        eps = float(check_number("eps", eps, "logit", complex_ok=False))
        if not 0 <= eps <= 0.5:
            raise ValueError(f"eps={eps!r}; expected None or a value in [0, 0.5] (logit clamps "
                             f"x into [eps, 1 - eps] first)")
    return {"eps": eps}


def _logit_lane(ctx):
    if ctx.params["eps"] is not None:
        return None
    return _lane(ctx)


@_functions_family(COMPOSITIONS.logit, DERIVATIVES.logit, _check_eps)
@elementwise("logit", ("x",), kernel="function", promotion="logit",
             summary="log(x / (1 - x)), x clamped into [eps, 1 - eps] first (torch), rounded "
                     "once",
             params=(Param("eps", None, "clamp x into [eps, 1 - eps] first (None: no clamp)",
                           audit=(1e-6,)),),
             counterparts=Counterparts("torch.logit", None, "jax.scipy.special.logit"),
             kinds=_REAL, prepare_params=_check_eps, fast=_logit_lane,
             models=_MODELS, accuracy=True,
             audit_inputs=(_near("zero and one", lambda m, e: [m.mpfr(0), m.mpfr(1)]),
                           _span("below one", lambda m, e: [(1 - m.exp2(-e.p // 2), 1)]),
                           _span("above zero", lambda m, e: [(e.sub, m.exp2(-e.p // 2))]),
                           _span("around one half", lambda m, e: [
                               (1 / m.mpfr(2) - m.exp2(-e.p // 2),
                                1 / m.mpfr(2) + m.exp2(-e.p // 2))])))
def logit(ctx, X, eps=None):
    """Elementwise ``log(x / (1 - x))``, the exact value rounded once; with ``eps``, ``x`` is
    first clamped into ``[eps, 1 - eps]`` (exactly: the upper end ``1 - eps`` is a real number,
    and ``logit(1 - eps) = -logit(eps)``), as ``torch.logit``. ``logit(1/2) = +0``,
    ``logit(±0) = -inf``, ``logit(1) = +inf``, NaN outside [0, 1].

    >>> import exactref as er
    >>> er.logit([0.25, 0.5, 1.0]).rounded.tolist()
    [-1.0986122886681098, 0.0, inf]
    >>> er.logit([0.0, 1.0], eps=0.25).rounded.tolist()
    [-1.0986122886681098, 1.0986122886681098]
    """
    if eps is None:
        return _value(ctx, X)
    x = ctx.flat(X[0])
    with np.errstate(invalid="ignore"):  # inf - inf inside TwoSum: the infinities below
        s, e = two_sum(x, np.full(x.shape, eps))
    high = (x == np.inf) | (s > 1) | ((s == 1) & (e > 0))  # x > 1 - eps, exactly
    z = np.where((x < eps) | high, eps, x)
    ex = evaluate(get_op(ctx.name).exact, z.reshape(ctx.shape), bits=_bits(ctx),
                  formats=[ctx.promoted.component])
    return [_negate(ex, high)]


# ----------------------------------------------------------------------- two operands
@_functions_family(mpfr_function("atan2", arity=2),
                   presets=_documented(
                       glibc=0,  # no round-to-nearest entry for either
                       glibc_libmvec=4,
                       sleef_u10=1.0,  # documented as max(1.0 ULP, FLT_MIN) / max(1.0 ULP, DBL_MIN)
                       sleef_u35=3.5, cuda=(3, 2),
                       cuda_intrinsics=(3, 2),  # not in Table 20
                       numpy=None))  # no validation set for arctan2
@elementwise("atan2", ("y", "x"), kernel="function", promotion="atan2",
             summary="the angle of (x, y), in [-pi, pi], rounded once",
             counterparts=Counterparts(_torch("torch.atan2", _ATAN2_SOURCE,
                                              (1.0, 1.5, 1.5), (0.798, 1.168, 1.298, 1.213)),
                                       _numpy("np.arctan2", (0.743, 2.65, 2.441, 1.298),
                                              accuracy={"float64": 1.0, "float32": 3.0}),
                                       "jnp.arctan2"), kinds=_REAL,
             models=_MODELS, accuracy=True,
             audit_inputs=(_near("one operand tiny beside the other", _atan2_pairs),))
def atan2(ctx, Y, X):
    """Elementwise ``atan2(y, x)``, the exact angle rounded once, with C99's specials
    (F.9.1.4): ``atan2(±0, -0) = ±pi``, ``atan2(±0, +0) = ±0``, ``atan2(±inf, -inf) =
    ±3pi/4``, ...

    >>> import exactref as er
    >>> er.atan2([1.0, 0.0], [1.0, -0.0]).rounded.tolist()
    [0.7853981633974483, 3.141592653589793]
    """
    return _value(ctx, Y, X)


@_functions_family(mpfr_function("pow", arity=2, complex=COMPLEX.pow), POW_PARTIALS,
                   presets=_documented(
                       glibc=1, glibc_libmvec=4, sleef_u10=1.0,
                       sleef_u35=1.0,  # no u35 variant: Sleef_pow_u10
                       cuda=(4, 2),
                       # __powf: "Derived from its implementation as exp2f(y * __log2f(x))", no
                       # number
                       cuda_intrinsics=(None, 2),
                       numpy=None))  # no validation set for power
@elementwise("pow", ("x", "y"), kernel="function", promotion="pow",
             summary="x**y, rounded once (integers: exact, by the overflow rule)",
             counterparts=Counterparts(_torch("torch.pow", _POW_SOURCE,
                                              (1.0, 1.0, 1.0), (0.706, 0.781, 0.715, 0.762)),
                                       _numpy("np.power", (0.653, 0.975, 0.969, 0.781),
                                              accuracy={"float64": 1.0, "float32": 1.5},
                                              complex=("cpow = cexp(w clog z)", 4.0,
                                                       (7653.6, 419.2)), integers=True),
                                       "jnp.power"),
             kinds=_REAL + ("complex",), models=_MODELS, accuracy=True, checked_scalars="exact",
             audit_inputs=(_near("overflow and underflow", lambda m, e: _pow_pairs(m, e, False)),
                           _near("integer exponents", lambda m, e: _pow_pairs(m, e, True),
                                 ulps=(4, 0))))
def pow(ctx, X, Y):  # noqa: A001 - the op's name
    """Elementwise ``x**y`` of float results, the exact value rounded once, with C99's specials
    (F.9.4.4): ``pow(x, ±0) = 1`` even for a NaN ``x``, ``pow(1, y) = 1`` even for a NaN ``y``,
    ``pow(-8, 1/3) = NaN`` (a negative base with a non-integer exponent), ``pow(±0, y)`` by the
    sign and parity of ``y``. Exact powers are exact (``pow(4, 0.5) = 2``).

    Integer results (integer operands): the exact power, reduced into the format by the
    overflow rule (``wrap``: modulo ``2**bits``, as PyTorch's integer power; ``saturate``;
    ``error``), and a negative exponent as PyTorch's tensor power gives it: ``1``, ``±1`` for a
    base of -1 (by the exponent's parity), 0 for every other base, 0 included. A negative
    exponent given as a Python scalar raises ValueError, as in PyTorch (NumPy raises for every
    negative integer exponent). bool has no power (PyTorch: not implemented).

    >>> import exactref as er
    >>> er.pow([4.0, 2.0, -8.0], [0.5, 0.5, 1 / 3]).rounded.tolist()
    [2.0, 1.4142135623730951, nan]
    >>> x = er.asarray([3, -2, 2, -1, 0], "int64")
    >>> er.pow(x, er.asarray([40, 63, -1, -3, -2], "int64")).rounded.tolist()
    [-6289078614652622815, -9223372036854775808, 0, -1, 0]
    >>> er.pow(er.asarray([3], "int8"), er.asarray([5], "int8"), overflow="saturate").rounded.tolist()
    [127]
    """
    if ctx.out.kind == "bool":
        raise OpTypeError("pow has no bool result (PyTorch's pow is not implemented for bool); "
                          "convert the operands to an integer or float format first")
    if ctx.out.is_integer:
        return [ctx.values(_int_powers(ctx, X, Y))]
    return _value(ctx, X, Y)



with_backward(atan2, atan2_backward)
with_backward(pow, pow_backward)
