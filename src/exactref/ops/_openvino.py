"""The ops of OpenVINO as counterparts of the registry's records: for each registry op the runtime
has, its call in the runtime's own vocabulary, the formats it has a kernel for
(``data["dtypes"]``), the contract that models its kernel (``contract``: the op's keywords,
each freedom cited in ``source``), and what the runtime does that no contract admits
(``departures``: findings, each with the spec it breaks). Data only: the audit target
(:mod:`exactref.audit._openvino`) reads it through the records (``get_op(op).counterparts.openvino``),
and :func:`exactref.ops._registry.register` attaches it.

Measured on OpenVINO 2026.4.1, CPU plugin, x86-64 with AVX2 and FMA (no AVX512-BF16/AMX/
AVX512-FP16: the plugin's ``OPTIMIZATION_CAPABILITIES`` are FP32, INT8), every model compiled with
``INFERENCE_PRECISION_HINT="f32"`` (see :mod:`exactref.audit._openvino`). Convolution and
ScaledDotProductAttention were measured on the same OpenVINO on a CPU with AVX512, AVX512-BF16,
AVX512-FP16 and AMX, where bfloat16 models run on the bf16 units (their entries say what that
changes: flushed inputs, weights stored in bfloat16; both contracts are wider than the f32
path an AVX2 CPU takes).

What the contracts rest on:

- the half formats: the CPU plugin documents that it converts f16 (and, without a bf16 unit,
  bf16) values to f32 and computes in f32 ("CPU Device", *Floating-point data types
  specifics*, docs.openvino.ai), which is the registry's default for the half formats
  (compute float32, the result rounded once into the half format): ``{}``;
- the transcendental kernels are the CPU plugin's JIT eltwise emitters
  (``src/plugins/intel_cpu/src/emitters/plugin/x64/jit_eltwise_emitters.cpp``) and oneDNN's
  eltwise injector (``src/cpu/x64/injectors/jit_uni_eltwise_injector.cpp``): polynomial
  approximations in f32, whose error is declared as ``accuracy`` (the maximum measured over
  120,000 inputs by ``scripts/record_openvino_outputs.py --measure``, rounded up), and oneDNN's
  ``exp`` zeroes its result below ``ln(FLT_MIN)`` (its ``exp_ln_flt_min_f`` mask): ``flush:
  "outputs"`` where an op's kernel goes through that exp;
- float64 is not among the CPU plugin's inference precisions (FP32, BF16, FP16: "CPU Device",
  *Supported Model Precision*): the plugin converts an f64 model to f32 and back, saturating
  inf to FLT_MAX. No contract admits that (the model's type says float64; IEEE 754-2019 §3.3
  binary64): every float64 group carries the departure ``_F64``.
"""

from __future__ import annotations

from ._registry import Counterpart

__all__ = ["COUNTERPARTS"]

#: registry op name -> the op in OpenVINO
COUNTERPARTS: dict[str, Counterpart] = {}

_F = ("float32", "float16", "bfloat16", "float64")
_CPU = "OpenVINO 2026.4.1 CPU plugin, measured on x86-64 AVX2+FMA"
_EMIT = "src/plugins/intel_cpu/src/emitters/plugin/x64/jit_eltwise_emitters.cpp"
_INJ = "oneDNN src/cpu/x64/injectors/jit_uni_eltwise_injector.cpp"
_HALF = ("the CPU plugin converts f16/bf16 to f32 and computes in f32 (docs.openvino.ai, CPU "
         "Device, floating-point data types specifics): the registry's half-format default")

_F64 = {"what": "float64 is computed in float32: the operands are converted to float32 "
                "(inf saturated to FLT_MAX: 0 + inf is 0x1.fffffep+127) and the float32 result "
                "converted back (add(1, 2**-30) is 1)",
        "spec": "the model's element type f64 (OpenVINO opset: T is f64) and IEEE 754-2019 "
                "§3.3 binary64, §6.1 (inf + finite is inf)",
        "dtypes": ("float64",), "source": _CPU}
_BF16 = {"what": "bfloat16 results are rounded from float32 neither to nearest-even nor toward "
                 "zero: 0x1.010002p+0 (f32) becomes 0x1p+0 (nearest 0x1.02p+0) while "
                 "0x1.06p+0 becomes 0x1.04p+0 (toward zero 0x1.02p+0); 1 ulp off",
         "spec": "IEEE 754-2019 §4.3.1 (roundTiesToEven, the default rounding-direction "
                 "attribute for a conversion)",
         "dtypes": ("bfloat16",), "source": _CPU}


_I64 = {"what": "int64 is computed in int32: the operands are wrapped modulo 2**32 "
                "(Add(2**40 + 3, 1) is 4, Less(2**31, 0) is true)",
        "spec": "the model's element type i64 (OpenVINO opset: T is i64)",
        "dtypes": ("int64",), "source": f"{_CPU} (the plugin's i64 -> i32 precision conversion)"}
#: the integer formats a kernel is audited in: int32 (the plugin's integer precision) and int64
#: (converted to int32: a finding); int8 and uint8 are not yet audited (their overflow rule is
#: not measured)
_INT = ("int32", "int64")
_I32CMP = {"what": "int32 comparisons are computed in float32 (the operands rounded to 24 bits): "
                   "Equal(16777217, 16777216) is true, Less(-2147483648, -2147483647) is false",
           "spec": "the comparison specs (Equal-1, Less-1, ...: an element-wise comparison of "
                   "the T values) and the model's type i32",
           "dtypes": ("int32",), "source": _CPU}


def _cp(call, contract=None, dtypes=_F, departures=(), source=_HALF, **data):
    deps = list(departures)
    if "int64" in dtypes:
        deps.append(_I64)
    if "float64" in dtypes:
        deps.append(_F64)
    if "bfloat16" in dtypes:
        deps.append(_BF16)
    return Counterpart(call, contract={} if contract is None else contract,
                       departures=tuple(deps), source=source,
                       data={"dtypes": dtypes, **data})


_DIV = {"what": "Divide is a * (1 / b) rounded twice (3 / 7 is 0x1.b6db70p-2, the quotient "
                "0x1.b6db6ep-2), and a subnormal divisor's reciprocal overflows, so "
                "0x1p-140 / 0x1p-149 is inf (the quotient is 512)",
        "spec": "IEEE 754-2019 §5.4.1 (division is correctly rounded) and the Divide-1 spec "
                "(a / b)", "dtypes": ("float32", "bfloat16"), "source": f"{_CPU}; {_EMIT}"}
_NEG = {"what": "Negative(+0) is +0 (the kernel computes 0 - x)",
        "spec": "IEEE 754-2019 §5.5.1 negate (flips the sign bit, -(+0) is -0)",
        "source": _CPU}
_NAN_MAX = {"what": "a NaN propagates from the second operand only: Maximum(NaN, 1) is 1, "
                    "Maximum(1, NaN) is NaN (the x86 maxps/minps rule), so the result depends "
                    "on the operands' order",
            "spec": "IEEE 754-2019 §9.6 maximum/minimum (a NaN operand gives NaN; "
                    "754-2008's maxNum would give the number either way)", "source": _CPU}
_EXP_NAN = {"what": "Exp(NaN) is +inf", "spec": "IEEE 754-2019 §6.2 (an operation on a quiet "
            "NaN gives a quiet NaN) and §9.2 exp", "source": f"{_CPU}; {_INJ}"}
_ERF = {"what": "Erf is an absolute-error approximation (Abramowitz-Stegun 7.1.26 form, error "
                "about 1e-7): erf(1e-3) is 0x1.27ce5cp-10 (exact 0x1.27cc38p-10, 548 ulps), "
                "erf(x) is 0 for |x| below about 2**-27 (exact 2x/sqrt(pi))",
        "spec": "the Erf-1 spec's erf(x) = 2/sqrt(pi) * integral_0^x e^-t^2 dt (relative "
                "accuracy; erf(x) ~ 1.128 x is never 0 for x != 0)",
        "dtypes": ("float32", "float16", "bfloat16"), "source": f"{_CPU}; {_EMIT}"}
_GELU = {"what": "Gelu is 0.5 x (1 + erf(x / sqrt 2)) (tanh mode: 0.5 x (1 + tanh(...))) in "
                 "float32: the sum cancels for x < -3 (gelu(-5) is -0x1.9p-20, exact "
                 "-0x1.80bcbap-20) and the result is +0 from x about -6 (tanh mode: -0 from "
                 "-5.5) where the value is negative; gelu(-0) is +0; gelu(-inf) is NaN (-inf * 0, the "
                 "limit is -0)",
         "spec": "the Gelu-7 spec's Gelu(x) = x * Phi(x) (negative for x < 0) and IEEE "
                 "754-2019 §6.3 (the sign of a product)",
         "dtypes": ("float32", "float16", "bfloat16"), "source": f"{_CPU}; {_INJ}"}
_SOFTPLUS = {"what": "SoftPlus is log(1 + exp(x)) in float32: for x < -5 the sum 1 + e**x "
                     "cancels (softplus(-10) is 0x1.78p-15, exact 0x1.7cd564p-15), and the "
                     "result is 0 or negative (softplus(-20) is -0x1p-19)",
             "spec": "the SoftPlus-4 spec's ln(e^x + 1) (> 0 for every x)",
             "dtypes": ("float32", "float16", "bfloat16"), "source": _CPU}
_MISH = {"what": "Mish is x * tanh(log(1 + exp(x))) in float32: for x < -5 the softplus "
                 "cancels (mish(-15) is -0x1.67fff8p-18, exact -0x1.33ee6ap-18) and the "
                 "result is -0 from x about -20; mish(-inf) is NaN (the limit is -0)",
         "spec": "the Mish-4 spec's x * tanh(ln(1 + e^x)) (nonzero for x != 0)",
         "dtypes": ("float32", "float16", "bfloat16"), "source": f"{_CPU}; {_INJ}"}
_SIG_FLUSH = {"what": "results are flushed to zero from x about -87.2, where the exact value "
                      "is still normal (sigmoid(-87.18) is 0, exact about 1.4e-38 > FLT_MIN)",
              "spec": "IEEE 754-2019 §7.5 (only a subnormal result may be flushed, under "
                      "an abrupt-underflow mode)", "dtypes": ("float32",),
              "source": f"{_CPU}; {_INJ}"}

_POLY = f"{_HALF}; f32: {_INJ} and {_EMIT} (polynomials in f32), accuracy measured (max, rounded up)"

COUNTERPARTS.update({
    "add": _cp("add", dtypes=_F + _INT),
    "subtract": _cp("subtract", dtypes=_F + _INT),
    "multiply": _cp("multiply", dtypes=_F + _INT),
    "divide": _cp("divide", departures=(_DIV,)),
    "abs": _cp("absolute", dtypes=_F + _INT),
    "negative": _cp("negative", departures=(_NEG,), dtypes=_F + _INT),
    "maximum": _cp("maximum", departures=(_NAN_MAX,), dtypes=_F + _INT),
    "minimum": _cp("minimum", departures=(_NAN_MAX,), dtypes=_F + _INT),
    "sqrt": _cp("sqrt"),
    "pow": _cp("power"),
    "exp": _cp("exp", {"accuracy": 6, "flush": "outputs"}, departures=(_EXP_NAN,),
               source=_POLY),
    "log": _cp("log", {"accuracy": 1}, source=_POLY),
    "tanh": _cp("tanh", {"accuracy": 1}, source=_POLY),
    "sigmoid": _cp("sigmoid", {"accuracy": 4, "flush": "outputs"},
                   departures=(_SIG_FLUSH,), source=_POLY),
    "erf": _cp("erf", {"accuracy": 4}, departures=(_ERF,), source=_POLY),
    "gelu": _cp("gelu", {"accuracy": 4}, departures=(_GELU,),
                source=_POLY, opset="opset7", attrs={"approximation_mode": "erf"},
                params={"approximate": "approximation_mode"},
                values={"approximate": {"none": "erf", "tanh": "tanh"}}),
    # beta is given, a Constant of the operands' type ("typed"): the Python API's swish()
    # makes an absent beta an f32 Constant, which an f16, bf16 or f64 model's Swish refuses
    # ("input_value(0).get_element_type() == input_value(1).get_element_type()")
    "silu": _cp("swish", {"accuracy": 4, "flush": "outputs"},
                departures=(dict(_SIG_FLUSH, what="silu(x) = x * sigmoid(x) is flushed to "
                                 "zero from x about -87, where it is normal; silu(-inf) is "
                                 "NaN (-inf * 0; the limit is -0; in the half formats too, "
                                 "computed in float32)",
                                 dtypes=("float32", "float16", "bfloat16")),),
                source=_POLY, opset="opset4", attrs={"beta": 1.0}, typed=("beta",)),
    "mish": _cp("mish", {"accuracy": 4, "flush": "outputs"},
                departures=(_MISH,), source=_POLY, opset="opset4"),
    "softplus": _cp("softplus", {"accuracy": 4}, departures=(_SOFTPLUS,), source=_POLY,
                    opset="opset4"),
    "equal": _cp("equal", dtypes=_F + _INT, departures=(_I32CMP,)),
    "not_equal": _cp("not_equal", dtypes=_F + _INT, departures=(_I32CMP,)),
    "less": _cp("less", dtypes=_F + _INT, departures=(_I32CMP,)),
    "less_equal": _cp("less_equal", dtypes=_F + _INT, departures=(_I32CMP,)),
    "greater": _cp("greater", dtypes=_F + _INT, departures=(_I32CMP,)),
    "greater_equal": _cp("greater_equal", dtypes=_F + _INT, departures=(_I32CMP,)),
    "cast": _cp("convert", params={"to": "destination_type"}, type=("destination_type",),
                departures=({"what": "a float64 operand is saturated into float32 first: "
                                     "Convert(-inf, f32) is -0x1.fffffep+127",
                             "spec": "IEEE 754-2019 §5.4.2 (convertFormat of an infinity is "
                                     "that infinity) and §7.4 (overflow gives inf in "
                                     "roundTiesToEven)",
                             "dtypes": ("float32", "float16", "bfloat16"), "source": _CPU},)),
})

_SM_NAN = {"what": "a NaN does not propagate across the row: SoftMax([0, 1, NaN, 2]) is NaN "
                   "only where the NaN is (the row's maximum skips it, the sum of the other "
                   "terms goes on)",
           "spec": "the SoftMax-8 spec's exp(x_i - max) / sum_j exp(x_j - max) (a NaN in "
                   "the row makes the max and the sum NaN) and IEEE 754-2019 §6.2",
           "source": _CPU}
_LONG = ("the CPU plugin's reductions and MatMul (oneDNN reduction / matmul primitives, "
         "src/plugins/intel_cpu/src/nodes/reduce.cpp, matmul.cpp) accumulate in f32 in a "
         "blocked, vectorised order that depends on the shape and ISA: order 'any'; the "
         "half formats' f32 accumulator as documented (CPU Device, f16 -> f32)")
COUNTERPARTS.update({
    "sum": _cp("reduce_sum", {"order": "any"}, source=_LONG,
               params={"axis": "reduction_axes"}, const=("reduction_axes",),
               attrs={"keep_dims": False}),
    "mean": _cp("reduce_mean", {"order": "any"}, source=_LONG,
                params={"axis": "reduction_axes", "dim": "reduction_axes"},
                const=("reduction_axes",), attrs={"keep_dims": False}),
    "matmul": _cp("matmul", {"order": "any"}, source=_LONG,
                  attrs={"transpose_a": False, "transpose_b": False}),
    "softmax": _cp("softmax", {"accuracy": 6, "order": "any", "specials": "formula"},
                   departures=(_SM_NAN,), source=f"{_POLY}; the SoftMax-8 spec's formula",
                   opset="opset8", params={"axis": "axis"}),
    "log_softmax": _cp("log_softmax", {"accuracy": 6, "order": "any", "specials": "formula"},
                       departures=(_SM_NAN,), source=f"{_POLY}; the LogSoftmax-5 formula",
                       opset="opset5", params={"axis": "axis"}),
})

_NORM = ("the CPU plugin's MVN node (src/plugins/intel_cpu/src/nodes/mvn.cpp) computes the mean, "
         "then the variance of x - mean, in f32 (two passes over the row), eps a float "
         "attribute (the MVN-6 spec: eps is of type float) added inside the square root; the "
         "weight and bias are separate Multiply and Add nodes (each rounded in f32, which "
         "the plugin fuses into the MVN kernel); the half formats in f32 as documented")
COUNTERPARTS.update({
    "layer_norm": _cp("mvn", {"algorithm": "two-pass", "order": "any"}, source=_NORM, opset="opset6",
                      operands=("input", "axes:axes", "then:multiply", "then:add"),
                      attrs={"normalize_variance": True, "eps_mode": "inside_sqrt"},
                      params={"eps": "eps"}),
    "group_norm": _cp("group_normalization", {"algorithm": "two-pass", "order": "any"},
                      source=_NORM.replace("MVN node", "GroupNormalization node"),
                      opset="opset12", operands=("input", "attr:num_groups"),
                      params={"eps": "epsilon"}),
})

_CONV = ("the CPU plugin's Convolution node (src/plugins/intel_cpu/src/nodes/conv.cpp) runs "
         "oneDNN's convolution primitives (measured: brgconv_avx512_f32 for f32, and for f16 "
         "and f64 after a Convert to f32; brgconv_avx512_amx_bf16 for bf16 on a CPU with AMX): "
         "each output accumulated in f32 registers by FMA over the input-channel blocks and "
         "the kernel taps, an order that depends on the shape and ISA: order 'any'; the "
         "weights are Constants and the bias a constant Add after the Convolution (as "
         "OpenVINO's PyTorch and ONNX frontends build them), which the plugin fuses into the "
         "convolution (the bias on the f32 accumulator, one rounding; bias_at free)")
#: Convolution's attributes: the registry's parameters, and how each value is written (a
#: list per spatial axis; the padding as pads_begin and pads_end); groups > 1 is
#: GroupConvolution with the filters reshaped to (groups, out / groups, in / groups, ...)
_CONV_DATA = {"params": {"stride": "strides", "padding": "pads", "dilation": "dilations",
                         "groups": "groups"},
              "values": {"stride": "spatial", "padding": "pads", "dilation": "spatial"},
              "grouped": {"param": "groups", "call": "group_convolution", "operand": 1},
              "operands": ("input", "const", "bias:add"), "opset": "opset1"}
#: bfloat16 on a CPU with AVX512-BF16/AMX: oneDNN's brgconv_avx512_amx_bf16 (jit_avx512_dw_bf16
#: for depthwise) multiply by TDPBF16PS / VDPBF16PS, which treat denormal inputs as zero
#: (Intel SDM: DAZ and FTZ regardless of MXCSR); measured: inf * 0x1p-133 (a subnormal bf16
#: input) gives NaN where the exact value is inf
_CONV_FORMATS = {"bfloat16": {"flush": "inputs"}}
_CONV += ("; bf16 on AVX512-BF16/AMX: TDPBF16PS/VDPBF16PS treat denormal inputs as zero "
          "(Intel SDM; measured: inf times a subnormal input gives NaN): flush 'inputs'")
COUNTERPARTS.update({
    "conv1d": _cp("convolution", {"order": "any"}, source=_CONV, formats=_CONV_FORMATS,
                  **_CONV_DATA),
    "conv2d": _cp("convolution", {"order": "any"}, source=_CONV, formats=_CONV_FORMATS,
                  **_CONV_DATA),
})

_SDPA = ("the CPU plugin decomposes ScaledDotProductAttention-13 "
         "(transformations/op_conversions/scaled_dot_product_attention_decomposition.cpp: "
         "scale = 1 / sqrt(E) in the element type, MatMul(q, k^T) times the scale, the mask, "
         "SoftMax, MatMul with v) and runs it as one snippets Subgraph (MHA tokenization; "
         "measured: runtime precision f32 for f32, for f16 and f64 after a Convert to f32): "
         "the scores and P V accumulated in f32 in a blocked order, the softmax's exp the "
         "same f32 polynomial as SoftMax's (accuracy 6, as softmax's); bf16 on a CPU with "
         "AMX: the Subgraph runs in bf16 (measured runtime precision), its second MatMul an "
         "AMX brgemm of bf16 operands, so the softmax's weights are stored in bf16 before P V "
         "(stored 'bfloat16'; measured: a float64 simulation with the weights rounded to bf16 "
         "matches 99.99% of the outputs bit for bit, with f32 weights 59%)")
COUNTERPARTS.update({
    "scaled_dot_product_attention": _cp(
        "scaled_dot_product_attention", {"accuracy": 6}, source=_SDPA,
        formats={"bfloat16": {"stored": "bfloat16"}},
        params={"is_causal": "causal", "scale": "scale"}, typed=("scale",)),
})
