#!/usr/bin/env python3
"""Measure how far PyTorch's and NumPy's CPU real functions are from the exact value.

For each function (exactref's 26 real functions; gelu with both formulas) and dtype (float64,
float32, float16, bfloat16; NumPy: float16, float32, float64) this prints the largest error of
the library's output in **units in the last place of the compute format** (float32 for the
16-bit formats, as PyTorch's opmath; the dtype itself otherwise), the share of outputs that are
not the correctly rounded value, and, for the 16-bit formats, whether every output is the
float32 kernel's value rounded once into the dtype (``rnd(f32(x))``: the opmath model).

Inputs: every bit pattern of float16 and bfloat16 (two-operand functions: 10**5 random pairs
and the adversarial ones); for float32 and float64 ``--n`` (default 10**5) values per function,
a third uniform bit patterns (every binade), a third log-uniform magnitudes around the
function's interesting range, a third adversarial values for that function (near the zeros of
sin/cos/tan, near overflow of exp/exp2/sinh/cosh, near ±1 for asin/acos, near 0 and 1 for
logit, the tails of erf/erfc/sigmoid/gelu, softplus around its threshold, ...). Fixed seeds:
every run measures the same inputs.

Paths: PyTorch's contiguous loop runs its vectorized body on full vectors and a scalar tail on
the rest; a strided tensor runs the scalar loop for ``cpu_kernel_vec`` kernels (the vml
kernels copy strided data into a buffer and call the vector code). Each function is measured
on a contiguous tensor (``vector``) and on a stride-2 view of the same values (``strided``),
and a column says whether the two ever differ; lengths of the form ``64 k + 3`` put tails in
both. NumPy likewise: contiguous arrays take its SIMD loops, strided ones may not.

The exact value: ``exactref._exact.function_values(name, x, bits=61)`` (the kernel behind
``er.<fn>``): the exact function value rounded to odd at 63 bits, held as ``(c1 + c2) *
2**E``; the error of an output ``a`` is ``|(c1 - a 2**-E) + c2| / ulp`` with the ulp of the
compute format at the exact value (subnormal ulps below the normal range), exact to about
2**-8 ulp for float64 and far better for the narrower formats. An output that is infinite
where the exact value rounds to a finite one (or the reverse), or NaN where it is not, is
counted as a special mismatch and reported separately.

    python scripts/measure_function_accuracy.py                  # torch, numpy, glibc: all
    python scripts/measure_function_accuracy.py --lib torch --functions exp,sigmoid --n 20000
    python scripts/measure_function_accuracy.py --json out.json  # also write the table
    python scripts/measure_function_accuracy.py --lib jax        # JAX's CPU (XLA) functions
    python scripts/measure_function_accuracy.py --complex --lib torch,numpy  # complex64/128

``--complex`` measures the complex functions (exp, log, log2, log10, sin, cos, tan, sinh,
cosh, tanh, asin, acos, atan, pow) of complex64 and complex128 normwise: the larger part's
distance from the exact part in ulps of ``|f|`` in the component format (the exact parts from
``exactref._exact._complex_functions.evaluate_complex`` at 61 bits), on 2 * 10**4 inputs per
row (default ``--n``): log-uniform parts, bit patterns and the row's hard region
(:func:`complex_inputs`); the table in docs/pytorch_equivalents.md ("Complex results").

Measured on torch 2.13.0+cpu (MKL 2024.2, CPU capability AVX512) and NumPy 2.4 on an AMD EPYC
(AVX-512); ``docs/pytorch_equivalents.md`` ("Real functions") has the table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

os.environ.setdefault("EXACTREF_WORKERS", "1")

from exactref._exact import Rounding, function_values  # noqa: E402
from exactref._formats import FORMATS  # noqa: E402

F16, BF16, F32, F64 = (FORMATS[n] for n in ("float16", "bfloat16", "float32", "float64"))

#: (row name, kernel name, params, arity)
FUNCTIONS = [
    ("exp", "exp", None, 1), ("exp2", "exp2", None, 1), ("expm1", "expm1", None, 1),
    ("log", "log", None, 1), ("log2", "log2", None, 1), ("log10", "log10", None, 1),
    ("log1p", "log1p", None, 1), ("sin", "sin", None, 1), ("cos", "cos", None, 1),
    ("tan", "tan", None, 1), ("asin", "asin", None, 1), ("acos", "acos", None, 1),
    ("atan", "atan", None, 1), ("sinh", "sinh", None, 1), ("cosh", "cosh", None, 1),
    ("tanh", "tanh", None, 1), ("erf", "erf", None, 1), ("erfc", "erfc", None, 1),
    ("sigmoid", "sigmoid", None, 1), ("silu", "silu", None, 1), ("mish", "mish", None, 1),
    ("gelu", "gelu", None, 1), ("gelu_tanh", "gelu_tanh", None, 1),
    ("softplus", "softplus", {"beta": 1.0, "threshold": 20.0}, 1),
    ("logit", "logit", None, 1), ("atan2", "atan2", None, 2), ("pow", "pow", None, 2),
]


# =========================================================================== the libraries
def torch_calls():
    import torch
    import torch.nn.functional as F

    plain = {n: getattr(torch, n) for n in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc", "sigmoid", "logit", "atan2",
        "pow")}
    plain.update(silu=F.silu, mish=F.mish, gelu=F.gelu,
                 gelu_tanh=lambda x: F.gelu(x, approximate="tanh"),
                 softplus=F.softplus)
    return plain


def numpy_calls():
    return {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
            "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
            "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
            "cosh": np.cosh, "tanh": np.tanh, "atan2": np.arctan2, "pow": np.power}


class Torch:
    name = "torch"
    dtypes = (F64, F32, F16, BF16)

    def __init__(self):
        import torch

        self.torch = torch
        self.calls = torch_calls()

    def has(self, row):
        return row in self.calls

    def tensor(self, values, fmt, strided):
        t = self.torch
        dt = getattr(t, fmt.name)
        base = t.from_numpy(np.ascontiguousarray(values.astype(np.float64))).to(t.float64)
        # float64 -> float32 -> dtype is exact: the values are the dtype's
        x = base.to(t.float32).to(dt) if fmt is not F64 else base
        if strided:
            wide = t.zeros(2 * x.numel(), dtype=dt)
            wide[::2] = x
            return wide[::2]
        return x.contiguous()

    def run(self, row, fmt, args, strided=False):
        ts = [self.tensor(a, fmt, strided) for a in args]
        with np.errstate(all="ignore"):
            out = self.calls[row](*ts)
        return out.to(self.torch.float64).numpy()


class Glibc:
    """The C library's scalar functions (``expf``, ``exp``, ...) through ctypes: the functions
    PyTorch's scalar loops call (``std::exp(float)`` is ``expf``), element by element."""

    name = "glibc"
    dtypes = (F64, F32)
    NAMES = {"exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
             "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
             "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
             "tanh": "tanh", "erf": "erf", "erfc": "erfc", "atan2": "atan2", "pow": "pow"}

    def __init__(self):
        import ctypes
        import ctypes.util

        self.ctypes = ctypes
        self.libm = ctypes.CDLL(ctypes.util.find_library("m"))

    def has(self, row):
        return row in self.NAMES

    def run(self, row, fmt, args, strided=False):
        c = self.ctypes
        name = self.NAMES[row] + ("f" if fmt is F32 else "")
        fn = getattr(self.libm, name)
        ct = c.c_float if fmt is F32 else c.c_double
        fn.restype = ct
        fn.argtypes = [ct] * len(args)
        vals = [a.astype(fmt.np_dtype).tolist() for a in args]
        return np.array([fn(*v) for v in zip(*vals, strict=True)], dtype=np.float64)


class Jax:
    """JAX's CPU functions (XLA), float64 enabled; jax arrays have no strides (the strided
    column repeats the contiguous one). softplus is ``jax.nn.softplus`` (no threshold)."""

    name = "jax"
    dtypes = (F64, F32, F16, BF16)

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jax.scipy.special as jss

        self.jnp = jnp
        self.calls = {"exp": jnp.exp, "exp2": jnp.exp2, "expm1": jnp.expm1, "log": jnp.log,
                      "log2": jnp.log2, "log10": jnp.log10, "log1p": jnp.log1p,
                      "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "asin": jnp.arcsin,
                      "acos": jnp.arccos, "atan": jnp.arctan, "sinh": jnp.sinh,
                      "cosh": jnp.cosh, "tanh": jnp.tanh, "erf": jss.erf, "erfc": jss.erfc,
                      "sigmoid": jax.nn.sigmoid, "silu": jax.nn.silu, "mish": jax.nn.mish,
                      "gelu": lambda x: jax.nn.gelu(x, approximate=False),
                      "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True),
                      "softplus": jax.nn.softplus, "logit": jss.logit,
                      "atan2": jnp.arctan2, "pow": jnp.power}

    def has(self, row):
        return row in self.calls

    def run(self, row, fmt, args, strided=False):
        import ml_dtypes

        dt = ml_dtypes.bfloat16 if fmt is BF16 else fmt.np_dtype
        arrs = [self.jnp.asarray(a.astype(np.float32).astype(dt) if fmt is not F64
                                 else a) for a in args]
        out = np.asarray(self.calls[row](*arrs))
        return out.astype(np.float32).astype(np.float64) if fmt is not F64 else \
            out.astype(np.float64)


class Numpy:
    name = "numpy"
    dtypes = (F64, F32, F16)

    def __init__(self):
        self.calls = numpy_calls()

    def has(self, row):
        return row in self.calls

    def run(self, row, fmt, args, strided=False):
        arrs = []
        for a in args:
            v = a.astype(fmt.np_dtype)
            if strided:
                wide = np.zeros(2 * v.size, dtype=v.dtype)
                wide[::2] = v
                v = wide[::2]
            arrs.append(v)
        with np.errstate(all="ignore"):
            out = self.calls[row](*arrs)
        return np.asarray(out).astype(np.float64)


# ================================================================================ inputs
def _bits_of(fmt, n, rng):
    if fmt is F64:
        raw = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
        raw += rng.integers(0, 2, n).astype(np.uint64)
        return raw.view(np.float64)
    raw = rng.integers(0, 2**32, n, dtype=np.int64).astype(np.uint32)
    return raw.view(np.float32).astype(np.float64)


def _logu(lo, hi, n, rng, signed=True):
    """Log-uniform magnitudes in [2**lo, 2**hi], random signs."""
    v = np.exp2(rng.uniform(lo, hi, n))
    return v * rng.choice([-1.0, 1.0], n) if signed else v


def _near(centres, fmt, k, rng):
    """Values within ``k`` ulps of each centre (rounded into fmt)."""
    c = np.asarray(centres, dtype=np.float64).astype(fmt.np_dtype)
    steps = rng.integers(-k, k + 1, c.size)
    out = c.copy()
    big = np.array(np.inf, dtype=c.dtype)
    for s in range(1, k + 1):
        up = steps >= s
        dn = steps <= -s
        out = np.where(up, np.nextafter(out, big), out)
        out = np.where(dn, np.nextafter(out, -big), out)
    return out.astype(np.float64)


def adversarial(row, fmt, n, rng):
    """Values where ``row`` is hard or interesting, in ``fmt`` (float32 or float64)."""
    wide = fmt is F64
    lnmax = math.log(fmt.max_finite)
    tiny_ln = math.log(fmt.smallest_subnormal)
    half = n // 2
    u = rng.uniform
    if row in ("exp", "expm1"):
        v = np.concatenate([u(tiny_ln - 2, lnmax + 2, half),
                            _near(rng.choice([lnmax, tiny_ln, math.log(fmt.smallest_normal)],
                                             n - half), fmt, 64, rng)])
        if row == "expm1":
            v[: n // 8] = _logu(-60 if wide else -30, 0, n // 8, rng)
        return v
    if row == "exp2":
        lo, hi = math.log2(fmt.smallest_subnormal), math.log2(fmt.max_finite)
        return np.concatenate([u(lo - 2, hi + 2, half),
                               _near(rng.integers(int(lo) - 1, int(hi) + 2, n - half), fmt,
                                     16, rng)])
    if row in ("log", "log2", "log10"):
        return np.concatenate([_logu(fmt.emin - fmt.precision, fmt.emax, half, rng, False),
                               _near(np.ones(n - half), fmt, 2000, rng)])
    if row == "log1p":
        return np.concatenate([-1 + _logu(-fmt.precision, 0, half // 2, rng, False),
                               _logu(-60, 10, half - half // 2, rng),
                               u(-1, 8, n - half)])
    if row in ("sin", "cos", "tan"):
        k = np.concatenate([rng.integers(-64, 65, half), rng.integers(-2**20, 2**20, n - half)])
        return np.concatenate([_near(k[:half] * (math.pi / 2), fmt, 8, rng),
                               _near(k[half:] * (math.pi / 2), fmt, 3, rng)])
    if row in ("asin", "acos"):
        q = n // 4
        return np.concatenate([u(-1, 1, q), _near(rng.choice([1.0, -1.0, 0.5, -0.5], q), fmt,
                                                    4000, rng),
                               rng.choice([1.0, -1.0], q) * (1 - _logu(-fmt.precision, -1, q,
                                                                        rng, False)),
                               _logu(-40, 0, n - 3 * q, rng)])
    if row == "atan":
        return _logu(-40, 40, n, rng)
    if row in ("sinh", "cosh"):
        top = lnmax + math.log(2)
        return np.concatenate([u(-top - 2, top + 2, half), _near(rng.choice([top, -top],
                                                                            n - half), fmt, 64,
                                                                 rng)])
    if row == "tanh":
        return np.concatenate([u(-20, 20, half), _logu(-40, 0, n - half, rng)])
    if row == "erf":
        return np.concatenate([u(-7, 7, half), _logu(-40, 0, n - half, rng)])
    if row == "erfc":
        return np.concatenate([u(-7, 28 if wide else 11, half), _logu(-40, 0, n - half, rng)])
    if row == "sigmoid":
        return u(tiny_ln - 2, 40 if wide else 20, n)
    if row in ("silu", "mish"):
        return np.concatenate([u(tiny_ln - 2, 40, half), u(-30, 30, n - half)])
    if row in ("gelu", "gelu_tanh"):
        return np.concatenate([u(-40 if wide else -15, 15, half), u(-10, 10, n - half)])
    if row == "softplus":
        return np.concatenate([u(tiny_ln - 2, 40, half), _near(np.full(n - half, 20.0), fmt,
                                                              64, rng)])
    if row == "logit":
        q = n // 4
        return np.concatenate([u(0, 1, q), _logu(fmt.emin - fmt.precision, -1, q, rng, False),
                               1 - _logu(-fmt.precision, -1, q, rng, False),
                               _near(np.full(n - 3 * q, 0.5), fmt, 2000, rng)])
    raise KeyError(row)


def inputs_unary(row, fmt, n, seed):
    """The input values of one unary row in ``fmt``, as float64."""
    if fmt.bits == 16:
        return np.arange(2**16, dtype=np.uint16).view(fmt.np_dtype).astype(np.float64)
    rng = np.random.default_rng([seed, fmt.bits, sum(map(ord, row))])
    k = n // 3
    parts = [_bits_of(fmt, k, rng), _logu(-30, 12, k, rng),
             adversarial(row, fmt, n - 2 * k, rng)]
    v = np.concatenate(parts).astype(fmt.np_dtype)
    v = np.concatenate([v, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0],
                                    dtype=fmt.np_dtype)])
    return v.astype(np.float64)


def inputs_binary(row, fmt, n, seed):
    """The operand pairs of atan2 (y, x) and pow (x, y)."""
    rng = np.random.default_rng([seed, fmt.bits, sum(map(ord, row))])
    if fmt.bits == 16:
        wide = F32
    else:
        wide = fmt
    k = n // 3
    a = [_bits_of(wide, k, rng)]
    b = [_bits_of(wide, k, rng)]
    if row == "atan2":
        a.append(_logu(-30, 30, k, rng))
        b.append(_logu(-30, 30, k, rng))
        m = n - 2 * k
        y = _logu(-20, 20, m, rng)
        a.append(y)
        b.append(y * _logu(-40, 40, m, rng))
    else:
        a.append(_logu(-20, 20, k, rng, signed=False))
        b.append(rng.uniform(-60, 60, k))
        m = n - 2 * k
        x = np.concatenate([_logu(-2, 2, m // 2, rng, signed=False),
                            -rng.integers(1, 50, m - m // 2).astype(np.float64)])
        y = np.concatenate([rng.uniform(-300, 300, m // 2),
                            rng.integers(-40, 41, m - m // 2).astype(np.float64)])
        # near overflow: x**y with y ln x near ln(max)
        lnmax = math.log(fmt.max_finite)
        y[: m // 8] = lnmax / np.log(np.maximum(x[: m // 8], 1.01))
        a.append(x)
        b.append(y)
    x = np.concatenate(a).astype(fmt.np_dtype).astype(np.float64)
    y = np.concatenate(b).astype(fmt.np_dtype).astype(np.float64)
    return x, y


# ================================================================================ errors
def ulp_errors(ex, actual, fmt):
    """Per element, ``|actual - exact|`` in ulps of ``fmt`` at the exact value, and a mask of
    special mismatches (NaN or an infinity where the correctly rounded value is not)."""
    cr = ex.round(fmt, Rounding.NEAREST_EVEN, "ieee")[0].astype(np.float64).reshape(-1)
    a = np.asarray(actual, dtype=np.float64).reshape(-1)
    err = np.zeros(a.size)
    nan_a, nan_c = np.isnan(a), np.isnan(cr)
    inf_a, inf_c = np.isinf(a), np.isinf(cr)
    special = (nan_a != nan_c) | (inf_a & ~nan_c & (a != cr)) | (inf_c & ~nan_a & (a != cr))
    regular = ~(nan_a | nan_c | inf_a | inf_c)
    zero = ex.zero.reshape(-1) & regular
    err[zero] = np.abs(a[zero]) / fmt.smallest_subnormal
    spec = (ex.special.reshape(-1) != 0) | np.isnan(ex.special.reshape(-1))
    reg = regular & ~zero & ~spec
    if reg.any():
        c1, c2 = ex.c1.reshape(-1)[reg], ex.c2.reshape(-1)[reg]
        E = ex.E.reshape(-1)[reg]
        with np.errstate(all="ignore"):
            scaled = np.ldexp(a[reg], (-E).astype(np.int64))
            d = (c1 - scaled) + c2
            top = np.frexp(c1)[1] - 1 + E  # floor(log2 |exact|)
            q = np.maximum(top, fmt.emin) - (fmt.precision - 1)
            err[reg] = np.abs(d) / np.ldexp(1.0, (q - E).astype(np.int64))
    err[special] = 0.0
    return err, special, cr


def summarize(err, special, actual, cr):
    a = np.asarray(actual).reshape(-1)
    finite = np.isfinite(err)
    wrong = ~((a == cr) | (np.isnan(a) & np.isnan(cr))) | (np.signbit(a) != np.signbit(cr)) & (
        a == 0)
    i = int(np.argmax(np.where(finite, err, -1)))
    return {"max_ulps": float(err[i]) if err.size else 0.0, "worst_index": i,
            "not_correctly_rounded": float(wrong.mean()) if a.size else 0.0,
            "special_mismatches": int(special.sum())}


# ============================================================================ complex
#: The complex functions of both libraries that exactref computes exactly (complex32: torch
#: has no CPU kernel for any of them).
COMPLEX = ("exp", "log", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
           "acos", "atan", "pow")
C64, C128 = FORMATS["complex64"], FORMATS["complex128"]


def complex_call(lib, row):
    """The library's function for a complex row, taking and returning numpy complex arrays
    (contiguous, or a stride-2 view with ``strided``)."""
    if lib == "torch":
        import torch

        fn = torch.pow if row == "pow" else getattr(torch, row)

        def run(args, dtype, strided=False):
            ts = []
            for a in args:
                t = torch.from_numpy(np.ascontiguousarray(a.astype(dtype)))
                if strided:
                    w = torch.zeros(2 * t.numel(), dtype=t.dtype)
                    w[::2] = t
                    t = w[::2]
                ts.append(t)
            return fn(*ts).numpy().astype(np.complex128)
    else:
        fn = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
              "pow": np.power}.get(row) or getattr(np, row)

        def run(args, dtype, strided=False):
            arrs = []
            for a in args:
                v = a.astype(dtype)
                if strided:
                    w = np.zeros(2 * v.size, dtype=v.dtype)
                    w[::2] = v
                    v = w[::2]
                arrs.append(v)
            with np.errstate(all="ignore"):
                return np.asarray(fn(*arrs)).astype(np.complex128)
    return run


def complex_inputs(row, fmt, n, seed):
    """Complex inputs of one row in ``fmt``'s component: a quarter log-uniform magnitudes of
    both parts (2**-30 to 2**30, random signs), a quarter uniform bit patterns of both parts
    (finite), half the row's hard region: large imaginary parts for exp, sinh, cosh, tanh
    (large real parts for sin, cos, tan), real parts near overflow, parts near the zeros of
    cos and sin (k pi / 2), |z| near 1 for the logarithms, the branch cuts with signed zeros
    and tiny parts (log: the negative reals; asin, acos: |re| > 1; atan: |im| > 1), and near
    +-1 and +-i. ``pow``: the base and exponent (moderate, integers, near overflow)."""
    comp = fmt.component
    rng = np.random.default_rng([seed, fmt.bits, sum(map(ord, row)), 7])
    q = n // 4
    lnmax = math.log(comp.max_finite)

    def logu(m, lo=-30, hi=30):
        return _logu(lo, hi, m, rng)

    def bits(m):
        v = _bits_of(comp, m, rng)
        return np.where(np.isfinite(v), v, 1.0)

    def signed_tiny(m):
        t = np.where(rng.random(m) < 0.5, 0.0, _logu(-150 if comp is F32 else -1070,
                                                     -20, m, rng))
        return t * rng.choice([-1.0, 1.0], m)

    base = [(logu(q), logu(q)), (bits(q), bits(q))]
    m = n - 2 * q
    h = m // 2
    k = rng.integers(-40, 41, m) * (math.pi / 2)
    if row in ("exp", "sinh", "cosh", "tanh", "sin", "cos", "tan"):
        big = logu(h, 0, 60 if comp is F32 else 200)
        near = _near(k, comp, 4, rng)
        edge = rng.choice([lnmax, -lnmax, lnmax + 0.69, 10.0, -10.0], m) * (
            1 + rng.uniform(-0.01, 0.01, m))
        a = np.concatenate([rng.uniform(-5, 5, h), edge[h:]])
        b = np.concatenate([big, near[h:]])
        if row in ("sin", "cos", "tan"):
            a, b = b, a  # sin(x + iy) = -i sinh(i x - y): the roles of the parts swap
        hard = (a, b)
    elif row in ("log", "log2", "log10"):
        r = 1 + rng.choice([-1.0, 1.0], h) * _logu(-comp.precision - 2, -1, h, rng, False)
        t = rng.uniform(-math.pi, math.pi, h)
        cut = -_logu(-20, 20, m - h, rng, False)
        hard = (np.concatenate([r * np.cos(t), cut]),
                np.concatenate([r * np.sin(t), signed_tiny(m - h)]))
    elif row in ("asin", "acos", "atan"):
        cut = rng.choice([-1.0, 1.0], h) * (1 + _logu(-comp.precision - 2, 10, h, rng, False))
        near1 = _near(rng.choice([1.0, -1.0], m - h), comp, 8, rng)
        a = np.concatenate([cut, near1])
        b = np.concatenate([signed_tiny(h), signed_tiny(m - h)])
        hard = (b, a) if row == "atan" else (a, b)
    elif row == "pow":
        x = (np.concatenate([rng.uniform(-2, 2, h), logu(m - h)]),
             np.concatenate([rng.uniform(-2, 2, h), logu(m - h)]))
        w = (np.concatenate([rng.integers(-8, 9, h).astype(float), rng.uniform(-30, 30, m - h)]),
             np.concatenate([np.where(rng.random(h) < 0.5, 0.0, rng.uniform(-3, 3, h)),
                             rng.uniform(-3, 3, m - h)]))
        rows = [np.concatenate([p[0], p[1], x[0]]) for p in zip(*base, strict=True)]
        base_w = [np.concatenate([logu(q, -4, 4), rng.uniform(-60, 60, q), w[0]]),
                  np.concatenate([logu(q, -4, 4), rng.uniform(-8, 8, q), w[1]])]
        rows = [np.concatenate([base[0][0], base[1][0], x[0]]),
                np.concatenate([base[0][1], base[1][1], x[1]])]
        return [v.astype(comp.np_dtype).astype(np.float64) for v in rows + base_w]
    else:
        raise KeyError(row)
    re = np.concatenate([base[0][0], base[1][0], hard[0]])
    im = np.concatenate([base[0][1], base[1][1], hard[1]])
    return [v.astype(comp.np_dtype).astype(np.float64) for v in (re, im)]


def _complex(re, im):
    """``re + i im`` with the signs of zero parts kept (``re + 1j * im`` loses ``-0``)."""
    z = np.empty(re.shape, np.complex128)
    z.real, z.imag = re, im
    return z


def complex_errors(parts, actual, comp):
    """Per element the normwise error: the larger part's ``|actual - exact|`` in ulps of the
    modulus ``|f|`` in ``comp`` (float32 or float64), and a mask of special mismatches (a part
    NaN or infinite where the correctly rounded part is not, or the reverse)."""
    a = [actual.real.astype(np.float64), actual.imag.astype(np.float64)]
    cr = [p.round(comp, Rounding.NEAREST_EVEN, "ieee")[0].astype(np.float64).reshape(-1)
          for p in parts]
    with np.errstate(all="ignore"):
        near = [p.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].astype(
            np.float64).reshape(-1) for p in parts]
        mod = np.hypot(near[0], near[1])
        q = np.maximum(np.floor(np.log2(np.where(mod > 0, mod, 1.0))), comp.emin) - (
            comp.precision - 1)
    err = np.zeros(a[0].size)
    special = np.zeros(a[0].size, bool)
    for ex, got, c in zip(parts, a, cr, strict=True):
        sp_ex = (ex.special.reshape(-1) != 0) | np.isnan(ex.special.reshape(-1))
        bad = ~np.isfinite(got) | ~np.isfinite(c) | sp_ex
        same = (got == c) | (np.isnan(got) & np.isnan(c))
        special |= bad & ~same
        zero = ex.zero.reshape(-1) & ~bad
        with np.errstate(all="ignore"):
            e = np.where(zero, np.abs(got) / np.exp2(q), 0.0)
            reg = ~bad & ~zero
            E = ex.E.reshape(-1)
            d = (ex.c1.reshape(-1) - np.ldexp(got, (-E).astype(np.int64))) + ex.c2.reshape(-1)
            e = np.where(reg, np.ldexp(np.abs(d), (E - q).astype(np.int64)), e)
        err = np.maximum(err, np.where(np.isfinite(mod) & (mod > 0), e, 0.0))
    return err, special


def measure_complex(lib, row, fmt, n, seed):
    """One complex row: the largest normwise error (ulps of ``|f|`` in the component format)
    on the contiguous and the strided path, the special mismatches, and the worst input."""
    from exactref._exact._complex_functions import evaluate_complex

    comp = fmt.component
    args = complex_inputs(row, fmt, n, seed)
    keep = (args[0].size - 3) // 64 * 64 + 3
    args = [v[:keep] for v in args]
    parts = evaluate_complex(row, *args, bits=61)
    z = [_complex(args[i], args[i + 1]) for i in range(0, len(args), 2)]
    run = complex_call(lib, row)
    out = {"function": row, "dtype": fmt.name, "library": lib, "n": int(keep)}
    for path, strided in (("contiguous", False), ("strided", True)):
        got = run(z, fmt.np_dtype, strided)
        err, special = complex_errors(parts, got, comp)
        i = int(np.argmax(err))
        out[path] = {"max_ulps": float(err[i]), "special_mismatches": int(special.sum()),
                     "worst_input": [repr(v[i]) for v in z]}
    return out


def complex_main(a):
    """``--complex``: the normwise error of each library's complex functions."""
    print("| library | function | dtype | max ulps of abs(f), contiguous | strided | "
          "special mismatches | worst input |\n| --- | --- | --- | --- | --- | --- | --- |")
    results = []
    for lib in a.lib.split(","):
        if lib not in ("torch", "numpy"):
            continue
        for row in COMPLEX:
            if a.functions is not None and row not in a.functions.split(","):
                continue
            for fmt in (C128, C64):
                r = measure_complex(lib, row, fmt, a.n, a.seed)
                results.append(r)
                c, s = r["contiguous"], r["strided"]
                worst = c if c["max_ulps"] >= s["max_ulps"] else s
                print(f"| {lib} | {row} | {fmt.name} | {c['max_ulps']:.3f} | "
                      f"{s['max_ulps']:.3f} | {c['special_mismatches']} + "
                      f"{s['special_mismatches']} | {', '.join(worst['worst_input'])} |",
                      flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rows": results}, fh, indent=1)
    return 0


# ============================================================================ one row
def exact_of(row_spec, args, fmt):
    row, kname, params, arity = row_spec
    formats = [fmt] if fmt.bits <= 16 and arity == 1 else None
    return function_values(kname, *args, bits=61, params=params, formats=formats)


def measure_row(lib, row_spec, fmt, n, seed):
    row, kname, params, arity = row_spec
    if arity == 1:
        args = [inputs_unary(row, fmt, n, seed)]
    else:
        args = list(inputs_binary(row, fmt, n, seed))
    # lengths 64 k + 3: a tail in every call
    m = args[0].size
    keep = (m - 3) // 64 * 64 + 3 if m > 67 else m
    args = [a[:keep] for a in args]
    ex = exact_of(row_spec, args, fmt)
    compute = F64 if fmt is F64 else F32
    out = {"function": row, "dtype": fmt.name, "library": lib.name, "n": int(args[0].size)}
    vec = lib.run(row, fmt, args)
    strided = lib.run(row, fmt, args, strided=True)
    differ = ~((vec == strided) | (np.isnan(vec) & np.isnan(strided)))
    out["paths_differ"] = int(differ.sum())
    if fmt.bits == 16:
        # the float32 kernel at the same inputs, and whether the dtype's output is it rounded
        v32 = lib.run(row, F32, args)
        s32 = lib.run(row, F32, args, strided=True)
        e32, sp32, cr32 = ulp_errors(ex, v32, F32)
        out["compute"] = summarize(e32, sp32, v32, cr32)
        es32, sps32, _ = ulp_errors(ex, s32, F32)
        out["compute_strided"] = summarize(es32, sps32, s32, cr32)
        rounded = v32.astype(np.float32).astype(fmt.np_dtype).astype(np.float64)
        rs = s32.astype(np.float32).astype(fmt.np_dtype).astype(np.float64)
        ok_v = (vec == rounded) | (np.isnan(vec) & np.isnan(rounded))
        ok_s = (strided == rs) | (np.isnan(strided) & np.isnan(rs))
        out["opmath_mismatches"] = int((~ok_v).sum() + (~ok_s).sum())
        ef, spf, crf = ulp_errors(ex, vec, fmt)
        out["final"] = summarize(ef, spf, vec, crf)
        efs, spfs, _ = ulp_errors(ex, strided, fmt)
        out["final_strided"] = summarize(efs, spfs, strided, crf)
        worst = out["compute"]["worst_index"]
    else:
        e, sp, cr = ulp_errors(ex, vec, compute)
        out["compute"] = summarize(e, sp, vec, cr)
        es, sps, _ = ulp_errors(ex, strided, compute)
        out["compute_strided"] = summarize(es, sps, strided, cr)
        worst = out["compute"]["worst_index"]
    out["worst_input"] = [float(a[worst]).hex() for a in args]
    return out


def fmt_row(r):
    c, s = r["compute"], r["compute_strided"]
    cells = [r["library"], r["function"], r["dtype"], f"{c['max_ulps']:.3f}",
             f"{s['max_ulps']:.3f}", f"{100 * c['not_correctly_rounded']:.2f}%",
             str(c["special_mismatches"] + s["special_mismatches"]), str(r["paths_differ"])]
    if "final" in r:
        cells += [str(r["opmath_mismatches"]), f"{r['final']['max_ulps']:.3f}",
                  f"{100 * r['final']['not_correctly_rounded']:.2f}%"]
    else:
        cells += ["-", "-", "-"]
    cells.append(",".join(r["worst_input"]))
    return "| " + " | ".join(cells) + " |"


HEADER = ("| library | function | dtype | max ulps (compute format, contiguous) | strided | "
          "not correctly rounded | special mismatches | contiguous != strided | "
          "!= rnd(f32 kernel) | max ulps (dtype) | dtype not correctly rounded | worst input |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lib", default="torch,numpy,glibc",
                   help="comma-separated: torch, numpy, glibc, jax")
    p.add_argument("--functions", default=None, help="comma-separated rows (default: all)")
    p.add_argument("--dtypes", default=None, help="comma-separated (default: the library's)")
    p.add_argument("--n", type=int, default=100_000, help="float32/float64 inputs per function")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    p.add_argument("--complex", action="store_true",
                   help="the complex functions (complex64, complex128): normwise errors")
    a = p.parse_args(argv)
    np.seterr(all="ignore")
    if a.complex:
        if a.n == 100_000:
            a.n = 20_000
        return complex_main(a)
    import warnings

    warnings.simplefilter("ignore", RuntimeWarning)
    libs = []
    for name in a.lib.split(","):
        libs.append({"torch": Torch, "numpy": Numpy, "glibc": Glibc, "jax": Jax}[name]())
    rows = [f for f in FUNCTIONS if a.functions is None or f[0] in a.functions.split(",")]
    results = []
    print(HEADER)
    for lib in libs:
        dts = lib.dtypes if a.dtypes is None else [FORMATS[d] for d in a.dtypes.split(",")
                                                   if FORMATS[d] in lib.dtypes]
        for spec in rows:
            if not lib.has(spec[0]):
                continue
            for fmt in dts:
                t0 = time.time()
                r = measure_row(lib, spec, fmt, a.n, a.seed)
                r["seconds"] = round(time.time() - t0, 1)
                results.append(r)
                print(fmt_row(r), flush=True)
    if a.json:
        meta = {"python": sys.version.split()[0], "numpy": np.__version__}
        try:
            import torch

            meta["torch"] = torch.__version__
            meta["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        except ImportError:
            pass
        with open(a.json, "w") as fh:
            json.dump({"meta": meta, "rows": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
