"""Real functions: ``exp``, ``log``, ``tanh``, ``sigmoid``, ``gelu``, ``erf`` and the rest, the
exact function value rounded once.

Each op is one declaration on the function kernel: its record's ``exact`` is the function
(:func:`~exactref._exact.mpfr_function`, a line naming MPFR's function, or one of the kernel's
compositions) and ``derivative`` its derivative; every evaluation reads them from the record
(``ops.get_op(name).exact``). The kernel gives, per element, the exact value rounded to odd at two bits more than any format the
call rounds into (MPFR's correctly rounded functions; interval arithmetic with Ziv's strategy for
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
    BAND_EXTRA_BITS,
    COMPLEX,
    COMPOSITIONS,
    DERIVATIVES,
    POW_PARTIALS,
    Derivative,
    ExactArray,
    band_ends,
    evaluate_complex,
    function_table,
    mpfr_function,
    normwise_ends,
    root_derivative,
    table_patterns,
    two_sum,
    ulp_of,
)
from .._exact import function_values as evaluate
from ..ops import Counterpart, Counterparts, Param, get_op, names_of, register
from ._accuracy import ACCURACY_PRESETS
from ._common import check_number
from ._elementwise import FUSED, Model, OpTypeError, elementwise, with_backward
from ._function_backward import atan2_backward, backward_of, pow_backward
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


# ------------------------------------------------------------------------------ the kernel
def _bits(ctx) -> int:
    """The widest precision the call rounds the exact value into (output, compute format); an
    accuracy band in the compute format needs :data:`BAND_EXTRA_BITS` more there."""
    bits = max(ctx.out.component.precision, ctx.c.component.precision)
    if not ctx.accuracy.correct:
        bits = max(bits, ctx.c.component.precision + BAND_EXTRA_BITS - 2)
    return bits


# ------------------------------------------------------------------- the accuracy models
def _ends(ctx, exact: list, x: np.ndarray):
    """Per part, ``(lowest, highest)`` numbers of the compute format within the call's accuracy
    of the exact values (float64, flat), computed once per call.

    A complex result's error is normwise, as complex libraries state it: each part within ``k``
    ulps of the modulus ``|f|``, either sign (:func:`~exactref._exact.normwise_ends`)."""
    memo = getattr(exact[0], "_band_memo", None)
    key = (ctx.c.name, ctx.accuracy.name, ctx.rule)
    if memo is not None and memo[0] == key:
        return memo[1]
    c = ctx.c.component
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if len(exact) == 1:
        ulps = ctx.accuracy.ulps(x, lambda: ulp_of(exact[0], c))
        ends = [band_ends(exact[0], c, ulps, ctx.rule)]
    else:
        ends = normwise_ends(exact, c, ctx.accuracy.ulps(x, None), _bits(ctx) + 2, ctx.rule)
    exact[0]._band_memo = (key, ends)
    return ends


def _band(side: int):
    """The model of the lowest (``side`` 0) or highest (1) result of an implementation within
    the call's accuracy in the compute format (per part: the corner of the part's ends)."""

    def derive(ctx, exact, *parts):
        x = ctx.flat(parts[0][0])
        return [ctx.values(e[side].reshape(ctx.shape)) for e in _ends(ctx, exact, x)]

    return derive


def _inaccurate(ctx) -> bool:
    return not ctx.accuracy.correct


#: A function's modelled implementations: correctly rounded in the compute format, and (with
#: ``accuracy=``) the ends of the numbers within the declared error there.
_MODELS = (FUSED,
           Model("within {a} in {c}: lowest", applies=_inaccurate, derive=_band(0)),
           Model("within {a} in {c}: highest", applies=_inaccurate, derive=_band(1)))


def _value(ctx, *operands):
    """The exact values of the op's function (its record's ``exact``, for the call's
    parameters) at the operands (one ExactArray per part)."""
    if ctx.out.kind == "complex":
        return _complex_value(ctx, *operands)
    if ctx.out.kind != "float":
        raise OpTypeError(f"{ctx.name} has no {ctx.out.name} result: its operands promote to an "
                          f"integer format; pass dtype= a float format or convert them first")
    fn, params = get_op(ctx.name).exact.kernel(ctx.params)
    args = [ctx.flat(X[0]).reshape(ctx.shape) for X in operands]
    return [evaluate(fn, *args, bits=_bits(ctx), params=params,
                     formats=[ctx.promoted.component])]


def _complex_value(ctx, *operands):
    """The exact parts of the op's complex function at the operands: ``[real, imaginary]``."""
    if ctx.accuracy.name in ACCURACY_PRESETS and not ctx.accuracy.correct:
        raise ValueError(f"accuracy={ctx.accuracy.name!r}: the presets document real "
                         f"functions; for a complex {ctx.name} pass a number of ulps (each "
                         f"part within that many ulps of the modulus)")
    n = int(np.prod(ctx.shape, dtype=np.int64))
    args = []
    for X in operands:
        for part in X[:2]:
            args.append((np.zeros(n) if part is None else ctx.flat(part)).reshape(ctx.shape))
    return list(evaluate_complex(get_op(ctx.name).exact.complex, *args, bits=_bits(ctx)))


def _unary(ctx, X):
    """The exact formula of a unary function without parameters."""
    return _value(ctx, X)


# --------------------------------------------------------------------- the table lane
_ROUNDED: dict = {}
#: A row of candidates (each of the output's itemsize) read as one element: one gather.
def _row(itemsize: int, k: int) -> np.dtype:
    return np.dtype((np.void, itemsize * k))


def _rounded_tables(fn, params, ctx):
    """Per bit pattern of the input format, the candidates in the output format, as rows:
    the reference, then (where the compute format differs) the exact value rounded in the
    compute format and stored. Also which patterns have a NaN value."""
    fmt, out, c = ctx.promoted, ctx.out, ctx.c
    key = (fn.name, tuple(sorted((params or {}).items())), fmt.name, out.name, c.name,
           ctx.mode, ctx.rule, ctx.accuracy.name)
    hit = _ROUNDED.get(key)
    if hit is not None:
        return hit
    exact = function_table(fn, fmt, params).exact()
    n = exact.size
    nan = np.isnan(exact.special)
    keep = np.flatnonzero(~nan)
    sub = ExactArray.regular((keep.size,), exact.c1[keep], exact.c2[keep], exact.r[keep],
                             exact.E[keep], zero=exact.zero[keep], zsign=exact.zsign[keep],
                             special=exact.special[keep])
    tctx = replace(ctx, shape=(keep.size,))
    cands = [tctx.round([sub])[0]]
    if c is not out:  # fused in the compute format, then stored
        via = [tctx.values(v) for v in tctx.round([sub], c)]
        cands.append(tctx.round(via)[0])
    if not ctx.accuracy.correct:  # the ends of the accuracy band, stored
        x = table_patterns(fmt)[1][keep]  # the table's inputs: every pattern of the storage
        for end in _ends(tctx, [sub], x)[0]:
            cands.append(tctx.round([tctx.values(end)])[0])
    rows = np.zeros((n, len(cands)), dtype=out.np_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        for j, v in enumerate(cands):
            col = np.full(n, np.nan if out.has_nan else 0.0)
            col[keep] = v
            rows[:, j] = col.astype(out.np_dtype)
    packed = np.ascontiguousarray(rows).view(_row(out.np_dtype.itemsize, len(cands)))
    hit = (packed.reshape(-1), len(cands), nan)
    _ROUNDED[key] = hit
    return hit


def _lane(ctx):
    """A fast lane for a unary function of one array of at most 16 bits: every candidate
    looked up per bit pattern, in one gather (the rounded tables are built once per kind of
    call: function, formats, mode, overflow rule)."""
    if len(ctx.operands) != 1:
        return None
    o, fmt, out = ctx.operands[0], ctx.promoted, ctx.out
    if o is None or o.kind != "array" or o.result is not None or o.array.dtype is not fmt \
            or fmt.kind != "float" or fmt.bits > 16 or out.kind != "float" \
            or fmt.encoding != "native":
        return None
    if not ctx.accuracy.correct and ctx.c.component.precision + BAND_EXTRA_BITS > 55:
        return None  # the table's precision does not decide a band this wide
    fn, params = get_op(ctx.name).exact.kernel(ctx.params)
    packed, k, nan = _rounded_tables(fn, params, ctx)
    raw = o.array.numpy()
    pat = raw.reshape(-1).view(np.uint16 if raw.itemsize == 2 else np.uint8)
    if not out.has_nan and nan[pat].any():
        return None  # a NaN the output cannot hold: the general path marks it undefined
    rows = packed[pat].view(out.np_dtype).reshape(raw.shape + (k,))
    from .._array import Array
    from .._result import Result

    models = ["exact"] + ([f"fused in {ctx.c.name}"] if ctx.c is not out else [])
    if not ctx.accuracy.correct:
        models += [m.name.format(c=ctx.c.name, a=ctx.accuracy.label) for m in _MODELS[1:]]
    return Result(Array(rows[..., 0], out), [[rows[..., j] for j in range(k)]],
                  op=ctx.name, models=models,
                  details={"promoted": ctx.promoted, "compute": ctx.c, "rounding": ctx.mode,
                           "overflow": ctx.rule, "accuracy": ctx.accuracy})


def _functions_family(exact, derivative=None, check=None):
    """File the op under the ``functions`` family (its own page, ``docs/functions.md``) with
    its function record (``exact``) and derivative; a :class:`Derivative` also gives the op
    its ``backward`` (``check``: how the op checks its parameters, for the backward's)."""

    def family(function):
        function.spec = register(replace(function.spec, family="functions", exact=exact,
                                         derivative=derivative))
        if isinstance(derivative, Derivative):
            with_backward(function, backward_of(function.spec.name, check))
        return function

    return family


def _declare(name, summary, counterparts, *, exact, derivative=None, doc="", audit_inputs=()):
    """One unary function without parameters: its declaration (the common shape). ``exact``:
    its record (``mpfr_function("exp")``, MPFR's function; or a composition); ``derivative``:
    its :class:`Derivative` (None: no backward)."""

    def formula(ctx, X):
        return _unary(ctx, X)

    formula.__name__ = formula.__qualname__ = name
    formula.__doc__ = doc
    formula.__module__ = __name__
    kinds = _REAL + (("complex",) if exact.complex is not None else ())
    return _functions_family(exact, derivative)(elementwise(
        name, ("x",), kernel="function", promotion=name, summary=summary,
        counterparts=counterparts, kinds=kinds, fast=_lane, models=_MODELS,
        accuracy=True, audit_inputs=audit_inputs)(formula))


def _doc(what, specials, example):
    return (f"Elementwise {what}, the exact value rounded once (integers give the policy's "
            f"default float). {specials}\n\n    >>> import exactref as er\n    {example}\n    ")


# ------------------------------------------------------------- torch's kernels (counterparts)
_VML = ("UnaryOpsKernel.cpp IMPLEMENT_*_KERNEL -> vml::v{f} (ATen/cpu/vml.h): float32 and "
        "float64 call MKL's vs{M}/vd{M} in VML_HA mode on every path (strided data is copied "
        "into a buffer first); float16 and bfloat16 run vec::map over Vectorized<float>::{f} "
        "(SLEEF's {f}f16_u10) and round into the dtype")
_SLEEF_GEN = ("UnaryOpsKernel.cpp IMPLEMENT_*_KERNEL -> vml::v{f} (ATen/cpu/vml.h, no MKL "
              "variant): vec::map over Vectorized<T>::{f}, SLEEF's {f}_u10 on every path")
_KVEC = ("UnaryOpsKernel.cpp {f}_kernel: cpu_kernel_vec, vectorized SLEEF {f}_u10, scalar "
         "loop (tails, strided tensors) std::{f} from the C library")
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
#: SLEEF's sinh and cosh return an infinity of the right sign beyond these |x| (SLEEF's
#: reference: "The error bound of the returned value is 1.0 ULP if a is in [-88.5, 88.5]"
#: (float), [-709, 709] (double); measured: infinities from |x| = 88.80 in float32).
_SLEEF_DOMAIN = {"float32": 88.5, "float64": 709.0}
_TORCH_SOURCE = "torch 2.13.0+cpu, MKL 2024.2, AVX512, glibc 2.36, AMD EPYC"


def _torch(call, source=None, accuracy=None, measured=None, **data):
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
_I, _N = np.inf, np.nan
#: Where the numpy counterparts' numbers come from.
_NUMPY_SOURCE = ("numpy 2.4 ufunc loops (ml_dtypes 0.6/0.7 loops alike); measured maxima from "
                 "scripts/measure_function_accuracy.py (numpy 2.4.6, AMD EPYC, AVX-512), glibc "
                 "2.36 behind ml_dtypes' loops and the complex functions")


def _numpy(call, measured, *, accuracy=None, complex=None, specials=(), integers=False):
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
                 exact=mpfr_function("log1p"), derivative=DERIVATIVES.log1p,
                 doc=_doc("``log(1 + x)``", "``log1p(±0) = ±0``, ``log1p(-1) = -inf``, NaN "
                          "below -1.",
                          ">>> er.log1p([-1.0, 1e-20]).rounded.tolist()\n    [-inf, 1e-20]"))

# numpy's cbrt measured against MPFR's (numpy 2.4.6, ml_dtypes 0.7.0, an Intel Xeon with
# AVX-512; 2 x 10**5 to 6 x 10**5 float64 and float32 inputs per run: random bit patterns and
# [-10, 10], [0.5, 8]; every float16 and bfloat16): float64 0.555, float32 1.924 ulps (numpy's
# validation set umath-validation-set-cbrt.csv tolerates 2 beyond the rounded value: 2.5 from
# the exact one), float16 inputs in float32 1.747; glibc 2.36's cbrtf (ml_dtypes' loops) 0.943
cbrt = _declare("cbrt", "the cube root, rounded once",
                Counterparts(None, _numpy("np.cbrt", (0.555, 1.924, 1.747, 0.943),
                                          accuracy={"float64": 1.0, "float32": 2.5}),
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
                exact=mpfr_function("erfc"), derivative=DERIVATIVES.erfc,
                doc=_doc("complementary error function ``1 - erf(x)``",
                         "``erfc(-inf) = 2``, ``erfc(+inf) = +0``; no cancellation for large x.",
                         ">>> er.erfc([10.0]).rounded.tolist()\n    [2.088487583762545e-45]"))

# ------------------------------------------------------------------------------ activations
sigmoid = _declare("sigmoid", "1 / (1 + e**-x), rounded once",
                   Counterparts(_torch("torch.sigmoid", bf16_flush=True), None, "jax.nn.sigmoid"),
                   audit_inputs=(*_underflow("underflow", lambda m, e, t: _logit(m, t)),
                                 _near("saturation", lambda m, e: [_logit(m, 1 - e.tail)]),
                                 _SMALL),
                   exact=COMPOSITIONS.sigmoid, derivative=DERIVATIVES.sigmoid,
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


def _check_approximate(ctx, approximate):
    if approximate not in (_ERF_FORMULA, _TANH_FORMULA):
        raise ValueError(f"approximate={approximate!r}; expected 'none' (x * Phi(x), with erf) "
                         f"or 'tanh' (the tanh formula), as torch.nn.functional.gelu")
    return {"approximate": approximate}


@_functions_family(COMPOSITIONS.gelu, DERIVATIVES.gelu, _check_approximate)
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


def _negate(ex: ExactArray, mask) -> ExactArray:
    """``ex`` with the elements of ``mask`` negated, in place."""
    for name in ("c1", "c2", "special"):
        a = getattr(ex, name)
        a[mask] = -a[mask]
    ex.r[mask] = -ex.r[mask]
    ex.zsign[mask] = -ex.zsign[mask]
    return ex


# ----------------------------------------------------------------------- two operands
@_functions_family(mpfr_function("atan2", arity=2))
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


@_functions_family(mpfr_function("pow", arity=2, complex=COMPLEX.pow), POW_PARTIALS)
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


def _int_powers(ctx, X, Y) -> np.ndarray:
    """The integer powers of ``pow`` (Python integers, an object array of the output's shape):
    PyTorch's values, or a proxy that every overflow rule reduces alike."""
    x, y = ctx.flat(X[0]), ctx.flat(Y[0])
    if ctx.operands[1] is not None and ctx.operands[1].kind == "scalar" and (y < 0).any():
        raise ValueError(f"pow: a negative integer exponent ({int(y[0])}) given as a scalar has "
                         f"no integer power (PyTorch: 'Integers to negative integer powers are "
                         f"not allowed'); pass the exponent as an array for PyTorch's tensor "
                         f"rule (0 for |x| > 1), or a float exponent (pow(x, -1.0))")
    fmt, bits = ctx.out, ctx.out.bits
    out = np.empty(x.size, dtype=object)
    out[:] = [_int_power(int(a), int(b), bits) for a, b in zip(x.tolist(), y.tolist(),
                                                               strict=True)]
    if ctx.rule == "error":  # name the power, not a proxy
        bad = np.flatnonzero([not fmt.int_min <= v <= fmt.int_max for v in out.tolist()])
        if bad.size:
            i = int(bad[0])
            base = f"({int(x[i])})" if x[i] < 0 else f"{int(x[i])}"
            raise OverflowError(
                f"pow: element {ctx.index(i)} is {base}**{int(y[i])}, outside "
                f"{fmt.name}'s range [{fmt.int_min}, {fmt.int_max}]; pass overflow='wrap' or "
                f"'saturate', or choose a wider format")
    return out.reshape(ctx.shape)


def _int_power(a: int, b: int, bits: int) -> int:
    """``a**b`` for integers as PyTorch's ``powi``: a negative ``b`` gives 1 for ``a = 1``,
    ``(-1)**b`` for ``a = -1`` and 0 otherwise. A power far beyond every format of ``bits``
    bits (``|a|**b >= 2**(4 bits)``) is not computed: its residue modulo ``2**bits`` (what
    wrapping keeps) plus ``±2**(bits + 2)`` (what saturation and errors read: beyond the range,
    of the power's sign)."""
    if b < 0:
        if a == 1:
            return 1
        return (-1 if b % 2 else 1) if a == -1 else 0
    if abs(a) <= 1 or b * (abs(a).bit_length() - 1) <= 4 * bits:
        return a**b
    import builtins  # ``pow`` here is the op

    residue = builtins.pow(a, b, 1 << bits)
    return residue - (1 << (bits + 2)) if (a < 0 and b % 2) else residue + (1 << (bits + 2))


with_backward(atan2, atan2_backward)
with_backward(pow, pow_backward)
