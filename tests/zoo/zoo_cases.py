"""The zoo's cases: every kernel of ``kernels.py`` on its inputs, labelled correct or buggy,
with the contract a careful user would declare for it (see ``kernels.py``'s docstring)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from kernels import (  # the zoo's kernels, helpers and formats
    BF16,
    DTYPES,
    E4M3,
    F16,
    SHAPE,
    Case,
    binary,
    cast_rne,
    cast_trunc_bf16,
    cast_trunc_e5m2,
    cast_via_f16,
    ce64,
    ce_lse,
    ce_no_shift,
    ce_sum,
    conv1d64,
    conv1d_drop_tap,
    conv1d_f32,
    conv2d64,
    conv2d_f32,
    conv2d_native,
    div_recip,
    ew,
    exp_4ulp,
    fma_exact,
    fma_unfused,
    gelu64,
    gelu_erf32,
    gelu_tanh32,
    gn_two_pass,
    gn_unbiased,
    group_norm64,
    layer_norm64,
    linear_f32,
    linear_no_bias,
    ln_eps_outside,
    ln_forgets_affine,
    ln_native_var,
    ln_one_pass,
    ln_two_pass,
    ln_unbiased,
    ln_welford,
    ln_wrong_eps,
    log_half,
    log_of_softmax,
    log_softmax64,
    log_softmax_f32,
    mean_f32acc,
    mean_native,
    mm_bf16_products,
    mm_f32acc,
    mm_native_seq,
    mm_tf32,
    mx_floor,
    normal,
    rms_eps_outside,
    rms_f32,
    rms_native,
    rms_norm64,
    rng_for,
    rows,
    sdpa64,
    sdpa_f32,
    sdpa_half_scores,
    sdpa_no_scale,
    sigmoid_bf16_steps,
    softmax64,
    softmax_f32,
    softmax_native,
    softmax_no_max,
    sum_f32acc,
    sum_seq_native,
    tanh_formula16,
    ternary,
    tn,
    torch_kernel,
    tt,
    unary,
    up,
    var_one_pass,
    var_two_pass,
    var_unbiased,
    var_welford,
)


# ---------------------------------------------------------------- the cases
def _case(name, family, op, dtype, correct, kernel, golden, inputs, contract=None, bug="",
          **kw):
    return Case(name, family, op, dtype, correct, kernel, golden, inputs, contract or {}, bug,
                **kw)


def _lnin(name, dt, loc=0.0, scale=1.0, affine=True):
    def make():
        x = normal(name, dt, loc=loc, scale=scale)
        if not affine:
            return (x, (x.shape[-1],)), {}
        r = rng_for(name + "w")
        w = (1 + 0.1 * r.standard_normal(x.shape[-1])).astype(DTYPES[dt])
        b = (0.1 * r.standard_normal(x.shape[-1])).astype(DTYPES[dt])
        return (x, (x.shape[-1],), w, b), {"eps": 1e-5}
    return make


def _rmsin(name, dt):
    def make():
        x = normal(name, dt)
        w = (1 + 0.1 * rng_for(name + "w").standard_normal(x.shape[-1])).astype(DTYPES[dt])
        return (x, (x.shape[-1],), w), {"eps": 1e-6}
    return make


def _gnin(name, dt):
    def make():
        x = normal(name, dt, shape=(2, 8, 64))
        r = rng_for(name + "w")
        w = (1 + 0.1 * r.standard_normal(8)).astype(DTYPES[dt])
        b = (0.1 * r.standard_normal(8)).astype(DTYPES[dt])
        return (x, 4, w, b), {"eps": 1e-5}
    return make


def _mmin(name, dt, k=256):
    def make():
        r = rng_for(name)
        return (r.standard_normal((4, k)).astype(DTYPES[dt]),
                r.standard_normal((k, 8)).astype(DTYPES[dt])), {}
    return make


def _linin(name, dt):
    def make():
        r = rng_for(name)
        return (r.standard_normal((4, 256)).astype(DTYPES[dt]),
                (r.standard_normal((8, 256)) / 16).astype(DTYPES[dt]),
                r.standard_normal(8).astype(DTYPES[dt])), {}
    return make


def _c1in(name, dt):
    def make():
        r = rng_for(name)
        return (r.standard_normal((2, 4, 64)).astype(DTYPES[dt]),
                r.standard_normal((6, 4, 3)).astype(DTYPES[dt]),
                r.standard_normal(6).astype(DTYPES[dt])), {"padding": 1}
    return make


def _c2in(name, dt):
    def make():
        r = rng_for(name)
        return (r.standard_normal((1, 3, 12, 12)).astype(DTYPES[dt]),
                r.standard_normal((4, 3, 3, 3)).astype(DTYPES[dt]),
                r.standard_normal(4).astype(DTYPES[dt])), {"padding": 1}
    return make


def _attin(name, dt):
    def make():
        r = rng_for(name)
        q, k, v = (r.standard_normal((1, 16, 64)).astype(DTYPES[dt]) for _ in range(3))
        return (q * 2, k * 2, v), {}
    return make


def _cein(name, dt, scale=1.0):
    def make():
        r = rng_for(name)
        x = (r.standard_normal((8, 128)) * scale).astype(DTYPES[dt])
        return (x, r.integers(0, 128, 8)), {}
    return make


def _castin(name, to, scale=1.0, big=False):
    def make():
        x = (rng_for(name).standard_normal(SHAPE) * scale).astype(np.float32)
        if big:
            x.flat[::17] = np.float32(1000.0)
        return (x, to), {}
    return make


def _mxin(name):
    return lambda: ((rng_for(name).standard_normal(SHAPE).astype(np.float32), "mxfp8_e4m3"), {})


F = "functions"
A = "arithmetic"
Q = "quantize"
L = "linalg"
N = "norms"
T = "attention"
X = "losses"
_sum = lambda x, axis=-1: x.sum(axis=axis)  # noqa: E731
_mean = lambda x, dim=-1: x.mean(axis=dim)  # noqa: E731
_var = lambda x, dim=-1, correction=0: x.var(axis=dim, ddof=correction)  # noqa: E731
_id = lambda x, to: x  # noqa: E731
_softmax64 = lambda x, dim=-1: softmax64(x, dim)  # noqa: E731
_log_softmax64 = lambda x, dim=-1: log_softmax64(x, dim)  # noqa: E731
_mx64 = lambda x, fmt: mx_floor(x, fmt)[0] * np.repeat(mx_floor(x, fmt)[1], 32, -1)  # noqa


CASES = [
    # arithmetic
    _case("add_bf16_opmath", A, "add", "bfloat16", True, ew(np.add), np.add, binary("a1", "bfloat16")),
    _case("add_f16_opmath", A, "add", "float16", True, ew(np.add), np.add, binary("a2", "float16")),
    _case("add_f32_trunc", A, "add", "float32", False,
          lambda x, y: np.where(np.abs((x.astype(np.float64) + y).astype(np.float32)) >
                                np.abs(x.astype(np.float64) + y),
                                np.nextafter((x.astype(np.float64) + y).astype(np.float32),
                                             np.float32(0)),
                                (x.astype(np.float64) + y).astype(np.float32)),
          np.add, binary("a3", "float32"), bug="rounds toward zero (1 ulp)"),
    _case("multiply_f32_numpy", A, "multiply", "float32", True, np.multiply, np.multiply,
          binary("m1", "float32")),
    _case("multiply_bf16_via_f16", A, "multiply", "bfloat16", False,
          lambda x, y: (up(x) * up(y)).astype(np.float16).astype(BF16), np.multiply,
          binary("m2", "bfloat16"), bug="product double-rounded through float16"),
    _case("divide_f32_numpy", A, "divide", "float32", True, np.divide, np.divide,
          binary("d1", "float32", positive_y=True)),
    _case("divide_f32_recip", A, "divide", "float32", False, div_recip, np.divide,
          binary("d2", "float32", positive_y=True), bug="x * (1/y) (up to 1.5 ulp)"),
    _case("divide_bf16_opmath", A, "divide", "bfloat16", True, ew(np.divide), np.divide,
          binary("d3", "bfloat16", positive_y=True)),
    _case("fma_f32_hw", A, "fma", "float32", True, fma_exact, lambda x, y, z: x * y + z,
          ternary("f1", "float32")),
    _case("fma_f32_unfused", A, "fma", "float32", False, fma_unfused, lambda x, y, z: x * y + z,
          ternary("f2", "float32"), bug="x*y rounded before + z"),
    _case("fma_f16_unfused", A, "fma", "float16", False, fma_unfused, lambda x, y, z: x * y + z,
          ternary("f3", "float16"), bug="x*y rounded to float16 before + z"),
    # functions
    _case("exp_f32_numpy", F, "exp", "float32", True, np.exp, np.exp, unary("e1", "float32")),
    _case("exp_bf16_opmath", F, "exp", "bfloat16", True, ew(np.exp), np.exp,
          unary("e2", "bfloat16")),
    _case("exp_f32_4ulp", F, "exp", "float32", False, exp_4ulp, np.exp, unary("e3", "float32"),
          {"accuracy": "numpy"}, bug="4 ulps off on every 7th element"),
    _case("exp_f16_in_f16", F, "exp", "float16", False,
          lambda x: np.exp(x.astype(np.float16) * np.float16(1.4427)
                           * np.float16(0.6931)).astype(np.float16),
          np.exp, unary("e4", "float16", scale=3.0), bug="log2(e)*ln2 rescaling in float16"),
    _case("tanh_f32_numpy", F, "tanh", "float32", True, np.tanh, np.tanh, unary("t1", "float32")),
    _case("tanh_f32_torch", F, "tanh", "float32", True, torch_kernel("tanh", "float32"), np.tanh,
          unary("t2", "float32"), torch=True),
    _case("tanh_bf16_torch", F, "tanh", "bfloat16", True, torch_kernel("tanh", "bfloat16"),
          np.tanh, unary("t3", "bfloat16"), torch=True),
    _case("tanh_f16_formula", F, "tanh", "float16", False, tanh_formula16, np.tanh,
          unary("t4", "float16"), bug="1 - 2/(exp(2x)+1) in float16: cancellation near 0"),
    _case("gelu_f32_erf", F, "gelu", "float32", True, gelu_erf32, gelu64, unary("g1", "float32")),
    _case("gelu_f32_torch", F, "gelu", "float32", True,
          torch_kernel("nn.functional.gelu", "float32"), gelu64, unary("g2", "float32"),
          torch=True),
    _case("gelu_f32_tanh_approx", F, "gelu", "float32", False, gelu_tanh32, gelu64,
          unary("g3", "float32"), bug="tanh approximation for the erf GELU"),
    _case("gelu_bf16_tanh_approx", F, "gelu", "bfloat16", False, ew(gelu_tanh32), gelu64,
          unary("g4", "bfloat16", scale=2.0), bug="tanh approximation for the erf GELU"),
    _case("sigmoid_f16_opmath", F, "sigmoid", "float16", True,
          ew(lambda x: np.float32(1) / (np.float32(1) + np.exp(-x))),
          lambda x: 1 / (1 + np.exp(-x)), unary("s1", "float16", scale=3.0)),
    _case("sigmoid_bf16_steps", F, "sigmoid", "bfloat16", False, sigmoid_bf16_steps,
          lambda x: 1 / (1 + np.exp(-x)), unary("s2", "bfloat16", scale=3.0),
          bug="every step rounded to bfloat16"),
    _case("log_f32_numpy", F, "log", "float32", True, np.log, np.log,
          unary("l1", "float32", 0.01, 100)),
    _case("log_f32_in_f16", F, "log", "float32", False, log_half, np.log,
          unary("l2", "float32", 0.01, 100), bug="computed in float16"),
    _case("log_bf16_torch", F, "log", "bfloat16", True, torch_kernel("log", "bfloat16"), np.log,
          unary("l3", "bfloat16", 0.01, 100), torch=True),
    # casts and quantization
    _case("cast_f32_bf16_rne", Q, "cast", "bfloat16", True, cast_rne, _id,
          _castin("c1", "bfloat16")),
    _case("cast_f32_bf16_trunc", Q, "cast", "bfloat16", False, cast_trunc_bf16, _id,
          _castin("c2", "bfloat16"), bug="round toward zero"),
    _case("cast_f32_bf16_via_f16", Q, "cast", "bfloat16", False, cast_via_f16, _id,
          _castin("c3", "bfloat16"), bug="double rounding through float16"),
    _case("cast_f32_f16_torch", Q, "cast", "float16", True, lambda x, to: tn(
        tt(x).to(__import__("torch").float16), F16), _id, _castin("c4", "float16"), torch=True),
    _case("cast_f32_e4m3_ml_dtypes", Q, "cast", "float8_e4m3fn", True, cast_rne, _id,
          _castin("c5", "float8_e4m3fn", scale=50.0)),
    _case("cast_f32_e4m3_torch_sat", Q, "cast", "float8_e4m3fn", True, lambda x, to: tn(
        tt(x).to(__import__("torch").float8_e4m3fn), E4M3), _id,
          _castin("c6", "float8_e4m3fn", scale=50.0, big=True), {"overflow": "saturate"},
          torch=True),
    _case("cast_f32_e5m2_trunc", Q, "cast", "float8_e5m2", False, cast_trunc_e5m2, _id,
          _castin("c7", "float8_e5m2", scale=50.0), bug="round toward zero"),
    _case("mx_e4m3_floor", Q, "quantize", "float32", True, mx_floor, _mx64, _mxin("q1")),
    _case("mx_e4m3_rceil", Q, "quantize", "float32", True,
          lambda x, fmt: mx_floor(x, "rceil"), _mx64, _mxin("q2"), {"scale_rule": "rceil"}),
    _case("mx_e4m3_trunc", Q, "quantize", "float32", False,
          lambda x, fmt: mx_floor(x, fmt, rounding="trunc"), _mx64, _mxin("q3"),
          bug="elements rounded toward zero"),
    # reductions
    _case("sum_f32_numpy", L, "sum", "float32", True, _sum, _sum, rows("r1", "float32", axis=-1),
          {"order": "pairwise"}),
    _case("sum_f32_torch", L, "sum", "float32", True, torch_kernel("sum", "float32", axis="dim"),
          _sum, rows("r2", "float32", axis=-1), torch=True),
    _case("sum_bf16_f32acc", L, "sum", "bfloat16", True, sum_f32acc, _sum,
          rows("r3", "bfloat16", axis=-1), {"compute": "float32"}),
    _case("sum_bf16_native", L, "sum", "bfloat16", False, sum_seq_native, _sum,
          rows("r4", "bfloat16", axis=-1), {"compute": "float32"},
          bug="accumulated in bfloat16"),
    _case("sum_f16_native", L, "sum", "float16", False, sum_seq_native, _sum,
          rows("r5", "float16", axis=-1), {"compute": "float32"},
          bug="accumulated in float16"),
    _case("mean_f32_numpy", L, "mean", "float32", True, _mean, _mean,
          rows("n1", "float32", dim=-1), {"order": "pairwise"}),
    _case("mean_f16_f32acc", L, "mean", "float16", True, mean_f32acc, _mean,
          rows("n2", "float16", dim=-1), {"compute": "float32"}),
    _case("mean_bf16_native", L, "mean", "bfloat16", False, mean_native, _mean,
          rows("n3", "bfloat16", dim=-1), {"compute": "float32"},
          bug="accumulated in bfloat16"),
    _case("var_f32_numpy", L, "var", "float32", True, _var, _var,
          rows("v1", "float32", dim=-1, correction=0), {"algorithm": "two-pass"}),
    _case("var_f32_welford", L, "var", "float32", True, var_welford, _var,
          rows("v2", "float32", dim=-1, correction=0),
          {"algorithm": "welford", "order": "sequential"}),
    _case("var_f32_torch", L, "var", "float32", True, torch_kernel("var", "float32"), _var,
          rows("v3", "float32", dim=-1, correction=0), torch=True),
    _case("var_bf16_two_pass", L, "var", "bfloat16", True, var_two_pass, _var,
          rows("v4", "bfloat16", dim=-1, correction=0),
          {"compute": "float32", "algorithm": "two-pass"}),
    _case("var_f32_one_pass", L, "var", "float32", False, var_one_pass, _var,
          rows("v5", "float32", loc=1000.0, scale=0.01, dim=-1, correction=0),
          {"algorithm": "two-pass"}, bug="one-pass E[x^2]-E[x]^2 (mean 1000, std 0.01)"),
    _case("var_f32_unbiased", L, "var", "float32", False, var_unbiased, _var,
          rows("v6", "float32", dim=-1, correction=0), bug="divides by n-1 (asked correction=0)"),
    # matmul, linear
    _case("matmul_f32_numpy", L, "matmul", "float32", True, np.matmul, np.matmul,
          _mmin("mm1", "float32")),
    _case("matmul_f32_torch", L, "matmul", "float32", True, torch_kernel("matmul", "float32"),
          np.matmul, _mmin("mm2", "float32"), torch=True),
    _case("matmul_bf16_f32acc", L, "matmul", "bfloat16", True, mm_f32acc, np.matmul,
          _mmin("mm3", "bfloat16"), {"compute": "float32"}),
    _case("matmul_bf16_torch", L, "matmul", "bfloat16", True, torch_kernel("matmul", "bfloat16"),
          np.matmul, _mmin("mm4", "bfloat16"), {"compute": "float32"}, torch=True),
    _case("matmul_f16_native", L, "matmul", "float16", False, mm_native_seq, np.matmul,
          _mmin("mm5", "float16"), {"compute": "float32"}, bug="float16 accumulation"),
    _case("matmul_bf16_native", L, "matmul", "bfloat16", False, mm_native_seq, np.matmul,
          _mmin("mm6", "bfloat16"), {"compute": "float32"}, bug="bfloat16 accumulation"),
    _case("matmul_bf16_round_products", L, "matmul", "bfloat16", False, mm_bf16_products,
          np.matmul, _mmin("mm7", "bfloat16"), {"compute": "float32"},
          bug="products rounded to bfloat16"),
    _case("linear_f32_numpy", L, "linear", "float32", True, linear_f32,
          lambda x, w, b: x @ w.T + b, _linin("li1", "float32")),
    _case("linear_bf16_torch", L, "linear", "bfloat16", True,
          torch_kernel("nn.functional.linear", "bfloat16"), lambda x, w, b: x @ w.T + b,
          _linin("li2", "bfloat16"), {"compute": "float32"}, torch=True),
    _case("linear_f16_no_bias", L, "linear", "float16", False, linear_no_bias,
          lambda x, w, b: x @ w.T + b, _linin("li3", "float16"), bug="forgets the bias"),
    # convolution
    _case("conv1d_f32_direct", L, "conv1d", "float32", True, conv1d_f32, conv1d64,
          _c1in("cv1", "float32")),
    _case("conv1d_f32_drop_tap", L, "conv1d", "float32", False, conv1d_drop_tap, conv1d64,
          _c1in("cv2", "float32"), bug="drops the last tap"),
    _case("conv1d_bf16_torch", L, "conv1d", "bfloat16", True,
          torch_kernel("nn.functional.conv1d", "bfloat16"), conv1d64, _c1in("cv3", "bfloat16"),
          {"compute": "float32"}, torch=True),
    _case("conv2d_f32_im2col", L, "conv2d", "float32", True, conv2d_f32, conv2d64,
          _c2in("cv4", "float32")),
    _case("conv2d_f32_torch", L, "conv2d", "float32", True,
          torch_kernel("nn.functional.conv2d", "float32"), conv2d64, _c2in("cv5", "float32"),
          torch=True),
    _case("conv2d_f16_im2col", L, "conv2d", "float16", True, conv2d_f32, conv2d64,
          _c2in("cv6", "float16"), {"compute": "float32"}),
    _case("conv2d_f16_native", L, "conv2d", "float16", False, conv2d_native, conv2d64,
          _c2in("cv7", "float16"), {"compute": "float32"}, bug="float16 accumulation"),
    # softmax, log_softmax
    _case("softmax_f32_max", L, "softmax", "float32", True, softmax_f32, _softmax64,
          rows("sm1", "float32", dim=-1)),
    _case("softmax_f32_torch", L, "softmax", "float32", True, torch_kernel("softmax", "float32"),
          _softmax64, rows("sm2", "float32", dim=-1), torch=True),
    _case("softmax_bf16_opmath", L, "softmax", "bfloat16", True, softmax_f32, _softmax64,
          rows("sm3", "bfloat16", dim=-1), {"compute": "float32"}),
    _case("softmax_f32_no_max", L, "softmax", "float32", False, softmax_no_max, _softmax64,
          rows("sm4", "float32", scale=40.0, dim=-1), bug="no max subtraction (large logits)"),
    _case("softmax_f16_native", L, "softmax", "float16", False, softmax_native, _softmax64,
          rows("sm5", "float16", dim=-1), {"compute": "float32"},
          bug="exp and sum in float16"),
    _case("log_softmax_f32", L, "log_softmax", "float32", True, log_softmax_f32, _log_softmax64,
          rows("ls1", "float32", dim=-1)),
    _case("log_softmax_bf16_torch", L, "log_softmax", "bfloat16", True,
          torch_kernel("log_softmax", "bfloat16"), _log_softmax64, rows("ls2", "bfloat16", dim=-1),
          {"compute": "float32"}, torch=True),
    _case("log_softmax_f32_log_of_softmax", L, "log_softmax", "float32", False, log_of_softmax,
          _log_softmax64, rows("ls3", "float32", scale=30.0, dim=-1), bug="log(softmax(x))"),
    # normalizations
    _case("layer_norm_bf16_two_pass", N, "layer_norm", "bfloat16", True, ln_two_pass,
          layer_norm64, _lnin("ln1", "bfloat16"), {"compute": "float32", "algorithm": "two-pass"}),
    _case("layer_norm_f32_welford", N, "layer_norm", "float32", True, ln_welford, layer_norm64,
          _lnin("ln2", "float32"), {"algorithm": "welford", "order": "sequential"}),
    _case("layer_norm_f32_torch", N, "layer_norm", "float32", True,
          torch_kernel("nn.functional.layer_norm", "float32"), layer_norm64,
          _lnin("ln3", "float32"), torch=True),
    _case("layer_norm_bf16_torch", N, "layer_norm", "bfloat16", True,
          torch_kernel("nn.functional.layer_norm", "bfloat16"), layer_norm64,
          _lnin("ln4", "bfloat16"), {"compute": "float32"}, torch=True),
    _case("layer_norm_f32_unbiased", N, "layer_norm", "float32", False, ln_unbiased,
          layer_norm64, _lnin("ln5", "float32"), {"algorithm": "two-pass", "order": "pairwise"},
          bug="unbiased variance (n-1)"),
    _case("layer_norm_f32_eps_outside", N, "layer_norm", "float32", False, ln_eps_outside,
          layer_norm64, _lnin("ln6", "float32"), {"algorithm": "two-pass", "order": "pairwise"},
          bug="eps outside the sqrt"),
    _case("layer_norm_f32_one_pass", N, "layer_norm", "float32", False, ln_one_pass,
          layer_norm64, _lnin("ln7", "float32", loc=1000.0, scale=0.01),
          {"algorithm": "two-pass", "order": "pairwise"},
          bug="one-pass variance (mean 1000, std 0.01)"),
    _case("layer_norm_bf16_no_affine", N, "layer_norm", "bfloat16", False, ln_forgets_affine,
          layer_norm64, _lnin("ln8", "bfloat16"), {"compute": "float32"},
          bug="forgets weight and bias"),
    _case("layer_norm_f16_native_stats", N, "layer_norm", "float16", False, ln_native_var,
          layer_norm64, _lnin("ln9", "float16"), {"compute": "float32", "algorithm": "two-pass"},
          bug="mean and variance accumulated in float16"),
    _case("rms_norm_f32", N, "rms_norm", "float32", True, rms_f32, rms_norm64,
          _rmsin("rm1", "float32")),
    _case("rms_norm_bf16_torch", N, "rms_norm", "bfloat16", True,
          torch_kernel("nn.functional.rms_norm", "bfloat16"), rms_norm64, _rmsin("rm2", "bfloat16"),
          {"compute": "float32"}, torch=True),
    _case("rms_norm_bf16_native", N, "rms_norm", "bfloat16", False, rms_native, rms_norm64,
          _rmsin("rm3", "bfloat16"), {"compute": "float32"}, bug="squares and sum in bfloat16"),
    _case("group_norm_f32_two_pass", N, "group_norm", "float32", True, gn_two_pass, group_norm64,
          _gnin("gn1", "float32"), {"algorithm": "two-pass"}),
    _case("group_norm_f32_unbiased", N, "group_norm", "float32", False, gn_unbiased,
          group_norm64, _gnin("gn2", "float32"), {"algorithm": "two-pass"},
          bug="unbiased variance (n-1)"),
    _case("group_norm_bf16_torch", N, "group_norm", "bfloat16", True,
          torch_kernel("nn.functional.group_norm", "bfloat16"), group_norm64,
          _gnin("gn3", "bfloat16"), {"compute": "float32"}, torch=True),
    # attention
    _case("sdpa_f32_math", T, "scaled_dot_product_attention", "float32", True, sdpa_f32, sdpa64,
          _attin("at1", "float32")),
    _case("sdpa_f32_torch", T, "scaled_dot_product_attention", "float32", True,
          torch_kernel("nn.functional.scaled_dot_product_attention", "float32"), sdpa64,
          _attin("at2", "float32"), torch=True),
    _case("sdpa_bf16_opmath", T, "scaled_dot_product_attention", "bfloat16", True, sdpa_f32,
          sdpa64, _attin("at3", "bfloat16"), {"compute": "float32"}),
    _case("sdpa_f32_no_scale", T, "scaled_dot_product_attention", "float32", False,
          sdpa_no_scale, sdpa64, _attin("at4", "float32"), bug="missing 1/sqrt(d) scale"),
    _case("sdpa_f16_half_scores", T, "scaled_dot_product_attention", "float16", False,
          sdpa_half_scores, sdpa64, _attin("at5", "float16"), {"compute": "float32"},
          bug="QK^T accumulated in float16"),
    # losses
    _case("cross_entropy_f32_lse", X, "cross_entropy", "float32", True, ce_lse, ce64,
          _cein("ce1", "float32")),
    _case("cross_entropy_f32_torch", X, "cross_entropy", "float32", True,
          torch_kernel("nn.functional.cross_entropy", "float32"), ce64, _cein("ce2", "float32"),
          torch=True),
    _case("cross_entropy_bf16_opmath", X, "cross_entropy", "bfloat16", True, ce_lse, ce64,
          _cein("ce3", "bfloat16"), {"compute": "float32"}),
    _case("cross_entropy_f32_no_shift", X, "cross_entropy", "float32", False, ce_no_shift, ce64,
          _cein("ce4", "float32", scale=40.0), bug="no log-sum-exp shift (large logits)"),
    _case("cross_entropy_f32_sum", X, "cross_entropy", "float32", False, ce_sum, ce64,
          _cein("ce5", "float32"), bug="sums instead of averaging over the batch"),
    # more of torch's own kernels, and bugs of a few to a few hundred ulps in long ops
    _case("exp_f32_torch", F, "exp", "float32", True, torch_kernel("exp", "float32"), np.exp,
          unary("e5", "float32"), torch=True),
    _case("sigmoid_f32_torch", F, "sigmoid", "float32", True, torch_kernel("sigmoid", "float32"),
          lambda x: 1 / (1 + np.exp(-x)), unary("s3", "float32", scale=3.0), torch=True),
    _case("log_f32_torch", F, "log", "float32", True, torch_kernel("log", "float32"), np.log,
          unary("l4", "float32", 0.01, 100), torch=True),
    _case("gelu_f32_torch_tanh", F, "gelu", "float32", True,
          torch_kernel("nn.functional.gelu", "float32"), lambda x, approximate: gelu_tanh32(
              x.astype(np.float32)).astype(np.float64),
          lambda: ((normal("g5", "float32"),), {"approximate": "tanh"}), torch=True),
    _case("softmax_bf16_torch", L, "softmax", "bfloat16", True,
          torch_kernel("softmax", "bfloat16"), _softmax64, rows("sm6", "bfloat16", dim=-1),
          {"compute": "float32"}, torch=True),
    _case("sum_f16_torch", L, "sum", "float16", True, torch_kernel("sum", "float16", axis="dim"),
          _sum, rows("r6", "float16", axis=-1), {"compute": "float32"}, torch=True),
    _case("layer_norm_f16_torch", N, "layer_norm", "float16", True,
          torch_kernel("nn.functional.layer_norm", "float16"), layer_norm64,
          _lnin("ln10", "float16"), {"compute": "float32"}, torch=True),
    _case("sdpa_bf16_torch", T, "scaled_dot_product_attention", "bfloat16", True,
          torch_kernel("nn.functional.scaled_dot_product_attention", "bfloat16"), sdpa64,
          _attin("at6", "bfloat16"), {"compute": "float32"}, torch=True),
    _case("cross_entropy_bf16_torch", X, "cross_entropy", "bfloat16", True,
          torch_kernel("nn.functional.cross_entropy", "bfloat16"), ce64, _cein("ce6", "bfloat16"),
          {"compute": "float32"}, torch=True),
    _case("matmul_f32_tf32", L, "matmul", "float32", False, mm_tf32, np.matmul,
          _mmin("mm8", "float32"), {"compute": "float32"},
          bug="operands rounded to TF32 (allow_tf32)"),
    _case("rms_norm_f32_eps_outside", N, "rms_norm", "float32", False, rms_eps_outside,
          rms_norm64, _rmsin("rm4", "float32"), {"order": "pairwise"},
          bug="eps outside the sqrt (eps=1e-6: ~8 ulps)"),
    _case("layer_norm_f32_wrong_eps", N, "layer_norm", "float32", False, ln_wrong_eps,
          layer_norm64, _lnin("ln11", "float32"), {"algorithm": "two-pass", "order": "pairwise"},
          bug="eps 1e-6 for the declared 1e-5 (~40 ulps)"),
]

# Verdicts wrong on the current tree only because a default being changed has not landed yet
# (issue 21's other parts); strict xfails in test_zoo.py, removed as each lands.
XFAIL = {
    "log_softmax_bf16_torch": dict.fromkeys(
        ("default", "declared"),
        "needs torch's bfloat16 log_softmax modelled: (x - max) - bf16(log(sum exp)), the "
        "log-sum stored in bfloat16 (1 ulp beyond correct rounding)"),
}
CASES = [replace(c, xfail=XFAIL.get(c.name, {})) for c in CASES]
