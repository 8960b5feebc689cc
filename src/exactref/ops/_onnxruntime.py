"""The ops of ONNX Runtime as counterparts of the registry's records: for each registry op the
runtime has, its ONNX op type (default domain, opset 23), the formats ORT 1.32's CPU execution
provider runs it in (``data["dtypes"]``), the contract that models its kernel (``contract``:
the op's keywords, each freedom cited in ``source``), and what the runtime does that no
contract admits (``departures``: findings, each with the spec it breaks). Data only: the audit
target (:mod:`exactref.audit._onnxruntime`) reads it through the records
(``get_op(op).counterparts.onnxruntime``), and :func:`exactref.ops._registry.register`
attaches it.

The formats are the CPU provider's kernel registrations (onnxruntime's
docs/OperatorKernels.md, ``CPUExecutionProvider``), measured on 1.32.0 by building each
one-node model (``scripts/record_onnxruntime_outputs.py --kernels``): an op with no float16
kernel still takes float16 because ORT's graph partitioner inserts a Cast to float32 around it
(``InsertCastTransformer``, onnxruntime/core/optimizer/insert_cast_transformer.cc, which runs
even with every optimization off): its ``data["formats"]["float16"]`` contract is then
"computed in float32" (the float16 inputs are exact in float32). bfloat16 has kernels only for Cast and
LayerNormalization on the CPU provider.

Sources cited (onnxruntime at v1.32.0): ``core/mlas/lib/tanh.cpp`` (MlasComputeTanh: a
rational approximation on x clamped to +-9, float32 only), ``core/mlas/lib/logistic.cpp``
(MlasComputeLogistic: a rational approximation on x clamped to +-18, then clamped into [0, 1]),
``core/mlas/lib/erf.cpp`` (MlasComputeErf), ``core/mlas/lib/compute.cpp`` (MlasComputeExp,
MlasComputeSoftmax: exp by a polynomial after range reduction, the row's max subtracted),
``core/providers/cpu/math/element_wise_ops.cc`` (Eigen's array ops for the arithmetic and
float64 functions), ``core/providers/cpu/activation/activations.h`` (Softplus, Sigmoid,
Tanh functors), ``core/providers/cpu/tensor/gelu.cc`` (x * 0.5 * (1 + erf(x / sqrt 2)) with
MlasComputeErf), ``core/providers/cpu/math/softmax_shared.cc`` (float64 softmax and
log-softmax by Eigen on the row minus its max).
"""

from __future__ import annotations

from ._registry import Counterpart

__all__ = ["COUNTERPARTS", "OPSET"]

#: the opset the one-node models are built with (the target reads its own copy)
OPSET = 23

#: the formats of an op the CPU provider has float16 (a real kernel or an inserted cast),
#: float32 and float64 kernels for
H_F_D = ("float16", "float32", "float64")
H_F = ("float16", "float32")
#: float16 through ORT's inserted Cast: computed in float32, the inputs converted first
VIA_FLOAT32 = {"float16": {"compute": "float32"}}

_SPEC_NAN = ("IEEE 754-2019 §6.2 (an operation with a NaN operand returns a NaN) and the ONNX "
             "operator's definition (the op of each element)")


def _ZERO_SIGN(name, want, got):
    return {"what": f"{name} of -0 and +0 may be {got} (whichever operand comes first)",
            "spec": f"IEEE 754-2019 §9.6 ({name.lower()}imum orders -0 below +0: {want}); ONNX's "
                    f"{name} does not say",
            "source": "element_wise_ops.cc: std::max/std::min semantics"}


def _SINCOS(name, x):
    return {"what": f"float64 {name.capitalize()} is only absolutely accurate near its zeros on "
                    f"the vectorized path (Eigen's p{name}<Packet4d>: its range reduction keeps "
                    f"about 1e-16 absolute, e.g. {name}({x}) with about 50 bits wrong), while "
                    f"the same x alone (the scalar tail, std::{name}) is right",
            "spec": f"the ONNX {name.capitalize()} definition (one value per x, wherever it "
                    f"sits in the tensor)",
            "dtypes": ("float64",), "source": "Eigen's psin/pcos for double"}


def _cp(call, dtypes=H_F_D, contract=None, departures=(), source="", **data):
    data = {"dtypes": tuple(dtypes), **data}
    if "formats" not in data and "float16" in dtypes:
        data["formats"] = VIA_FLOAT32
    return Counterpart(call, contract={} if contract is None else contract,
                       departures=tuple(departures), source=source, data=data)


#: registry op name -> the op in ONNX Runtime
COUNTERPARTS: dict[str, Counterpart] = {
    # ---------------------------------------------------------------- arithmetic (Eigen)
    "add": _cp("Add", source="element_wise_ops.cc: Eigen's a + b (correctly rounded)"),
    "subtract": _cp("Sub", source="element_wise_ops.cc: Eigen's a - b"),
    "multiply": _cp("Mul", source="element_wise_ops.cc: Eigen's a * b"),
    "divide": _cp("Div", source="element_wise_ops.cc: Eigen's a / b"),
    "abs": _cp("Abs", source="element_wise_ops.cc: Eigen's abs"),
    "negative": _cp("Neg", source="element_wise_ops.cc: Eigen's -x"),
    "maximum": _cp("Max", departures=[_ZERO_SIGN("Max", "+0", "-0")],
                   source="element_wise_ops.cc: Max (opset 12+) propagates NaN"),
    "minimum": _cp("Min", departures=[_ZERO_SIGN("Min", "-0", "+0")],
                   source="element_wise_ops.cc: Min (opset 12+) propagates NaN"),
    "sqrt": _cp("Sqrt", source="element_wise_ops.cc: Eigen's sqrt (the instruction)"),
    "reciprocal": _cp("Reciprocal", source="element_wise_ops.cc: Eigen's inverse, 1 / x"),
    "pow": _cp("Pow", source="element_wise_ops.cc: std::pow per element"),
    # ---------------------------------------------------------------- comparisons
    "equal": _cp("Equal", result="bool", formats={}),
    "less": _cp("Less", result="bool", formats={}),
    "less_equal": _cp("LessOrEqual", result="bool", formats={}),
    "greater": _cp("Greater", result="bool", formats={}),
    "greater_equal": _cp("GreaterOrEqual", result="bool", formats={}),
    # ---------------------------------------------------------------- functions
    "exp": _cp("Exp", source="element_wise_ops.cc: float32 through MlasComputeExp "
                             "(compute.cpp), float64 Eigen's exp"),
    "log": _cp("Log", source="element_wise_ops.cc: Eigen's log"),
    "tanh": _cp("Tanh", formats={"float16": {**VIA_FLOAT32["float16"], "accuracy": 5},
                                 "float32": {"accuracy": 5}},
                departures=[
                    {"what": "float32 Tanh is up to ~100 ulps off for tiny and subnormal |x| "
                             "(tanh(-0x1.b1faacp-127) is -0x1.b1...p-127 with its last 7 bits "
                             "wrong): MlasComputeTanh's rational approximation has no "
                             "tanh(x) = x branch for small x",
                     "spec": "the ONNX Tanh definition (tanh of each element) and "
                             "IEEE 754-2019 §9.2 (tanh(x) = x for tiny x: its exact value "
                             "rounds to x)",
                     "dtypes": ("float32",), "source": "core/mlas/lib/tanh.cpp"},
                    {"what": "float64 Tanh returns +-1 from |x| about 17.7 where tanh(x) is "
                             "1 - 2e-15 (0x1.ffffffffffffap-1 at 17.8, 3 ulps below 1), on "
                             "the vectorized path only: the same x alone in its array (the "
                             "scalar tail) gives the right value",
                     "spec": "the ONNX Tanh definition (one value per x, wherever it sits in "
                             "the tensor)",
                     "dtypes": ("float64",),
                     "source": "Eigen's ptanh<Packet4d> (its cut-off) vs std::tanh"}],
                source="activations.h: float32 MlasComputeTanh (tanh.cpp: a rational "
                       "approximation on x clamped to +-9; measured at most 5 ulps over "
                       "400,000 inputs with |x| >= 1e-3, so accuracy 5 for float32 and the "
                       "float16 computed in it), float64 Eigen's tanh (the op's default "
                       "accuracy)"),
    "sigmoid": _cp("Sigmoid", departures=[
        {"what": "Sigmoid is only absolutely accurate: float32 sigmoid(-32.6) is 0 where the "
                 "value is 0x1.f4d186p-48 (MlasComputeLogistic clamps x to -18 and its "
                 "rational approximation has an absolute error near 1e-8); float64 "
                 "sigmoid(-32.6) is 0x1.fp-48 (5 bits right) and 0 from x about -37",
         "spec": "the ONNX Sigmoid definition 1 / (1 + exp(-x)), which IEEE arithmetic "
                 "evaluates to full relative precision there (IEEE 754-2019 §7.5: a "
                 "result below the normal range is still delivered as a subnormal)",
         "source": "core/mlas/lib/logistic.cpp; Eigen's plogistic for double"}],
        source="activations.h: float32 MlasComputeLogistic (logistic.cpp), float64 "
               "Eigen's logistic"),
    "erf": _cp("Erf", H_F, source="element_wise_ops.cc: MlasComputeErf (erf.cpp)"),
    "sin": _cp("Sin", departures=[_SINCOS("sin", "0x1.2d97c7f3321d2p+3")],
               source="element_wise_ops.cc: Eigen's sin"),
    "cos": _cp("Cos", departures=[_SINCOS("cos", "-0x1.5fdbbe9bba775p+3")],
               source="element_wise_ops.cc: Eigen's cos"),
    "tan": _cp("Tan", H_F, source="element_wise_ops.cc: std::tan"),
    "asin": _cp("Asin", H_F, source="element_wise_ops.cc: std::asin"),
    "acos": _cp("Acos", H_F, contract={"accuracy": 4},
                source="element_wise_ops.cc: Eigen's vectorized acos (measured at most 4 "
                       "ulps over 400,000 inputs in [-1, 1])"),
    "atan": _cp("Atan", H_F, source="element_wise_ops.cc: std::atan"),
    "sinh": _cp("Sinh", H_F, source="element_wise_ops.cc: std::sinh"),
    "cosh": _cp("Cosh", H_F, source="element_wise_ops.cc: std::cosh"),
    "softplus": _cp("Softplus", H_F, contract={"threshold": float("inf"), "accuracy": 4},
                    source="activations.h: Softplus is log(exp(x) + 1) for every x (no "
                           "threshold: ONNX's definition), evaluated in float32: the "
                           "rounding of exp(x) + 1 costs up to 4 ulps (measured over 400,000 "
                           "inputs in [-80, 80]), so accuracy 4"),
    "gelu": _cp("Gelu", H_F, params={"approximate": "approximate"}, contract={"accuracy": 2},
                departures=[
                    {"what": "Gelu loses its relative accuracy for negative x (1 + erf(x / "
                             "sqrt 2) cancels, as 1 + tanh(...) does for approximate='tanh': "
                             "17 ulps at -1.9, 165 at -2.8) and is -0 from "
                             "x about -5.6 (at -6, x Phi(x) is -0x1.96c966p-28, a normal "
                             "float32)",
                     "spec": "the ONNX Gelu definition y = x Phi(x) (its value; erfc(-x / "
                             "sqrt 2) / 2 evaluates Phi without the cancellation)",
                     "dtypes": ("float32", "float16"), "source": "core/providers/cpu/tensor/"
                                                                "gelu.cc"},
                    {"what": "Gelu(-inf) is NaN (the formula's -inf * 0) where the limit is "
                             "-0",
                     "spec": "IEEE 754-2019 §9.2.1 (a function's value at infinity is its "
                             "limit) and the ONNX Gelu definition x Phi(x)",
                     "source": "gelu.cc"}],
                source="gelu.cc: x * 0.5 * (1 + erf(x * M_SQRT1_2)) with MlasComputeErf; "
                       "approximate='tanh' with MlasComputeTanh; accuracy 2: measured at most "
                       "2 ulps over 400,000 inputs in [-1, 10], where nothing cancels"),
}

_AXES = {"axis": "axes", "dim": "axes"}
#: Conv's attributes for conv1d and conv2d: the registry's parameters, and how each value is
#: written as an ONNX attribute
_CONV = {"params": {"stride": "strides", "padding": "pads", "dilation": "dilations",
                    "groups": "group"},
         "values": {"stride": "ints", "padding": "conv_pads", "dilation": "ints",
                    "groups": "int"}}

COUNTERPARTS.update({
    # ---------------------------------------------------------------- conversions
    "cast": _cp("Cast", ("float16", "bfloat16", "float32", "float64"), params={"to": "to"},
                values={"to": "onnx_type"}, result="param:to", formats={},
                source="core/providers/cpu/tensor/cast_op.cc: float16 by MLAS's conversion, "
                       "bfloat16 by onnxruntime::BFloat16's round-to-nearest-even "
                       "constructor, integers by static_cast (truncation)"),
    # ---------------------------------------------------------------- reductions, products
    "sum": _cp("ReduceSum", params=dict(_AXES), inputs={"axis": "int64s", "dim": "int64s"},
               attrs={"keepdims": 0},
               source="core/providers/cpu/reduction/reduction_ops.cc: Eigen's sum of each "
                      "reduced row (vectorized partial sums, in the operands' format)"),
    "mean": _cp("ReduceMean", params=dict(_AXES), inputs={"axis": "int64s", "dim": "int64s"},
                attrs={"keepdims": 0},
                source="reduction_ops.cc: ReduceAggregatorMean: the row's sum (Eigen) times "
                       "1 / n, in the operands' format"),
    "matmul": _cp("MatMul", source="core/providers/cpu/math/matmul.cc: MlasGemm (float32: "
                                   "blocked FMA kernels), Eigen for float64"),
    "gemm": _cp("Gemm", params={"alpha": "alpha", "beta": "beta", "trans_a": "transA",
                                "trans_b": "transB"},
                values={"alpha": "float", "beta": "float", "trans_a": "bool_int",
                        "trans_b": "bool_int"},
                source="core/providers/cpu/math/gemm.cc: MlasGemm with alpha and beta "
                       "(ONNX float attributes: stored in float32)"),
    "conv2d": _cp("Conv", H_F, **_CONV,
                  source="core/providers/cpu/nn/conv.cc: im2col and MlasGemm, or MlasConv"),
    # ---------------------------------------------------------------- row kernels
    "softmax": _cp("Softmax", params={"axis": "axis", "dim": "axis"},
                   departures=[
                       {"what": "float32 Softmax flushes subnormal outputs to zero: "
                                "softmax([0, -100, -110]) is [1, 0, 0] where the second is "
                                "0x1.bp-145 (MLAS's exp flushes below FLT_MIN)",
                        "spec": "IEEE 754-2019 §7.5 (a tiny result is delivered as its "
                                "subnormal rounding, not flushed) and the ONNX Softmax "
                                "definition exp(x) / sum(exp(x))",
                        "dtypes": ("float32",), "source": "core/mlas/lib/compute.cpp"}],
                   source="core/providers/cpu/math/softmax.cc: float32 MlasComputeSoftmax "
                          "(compute.cpp: the row max subtracted, exp by MLAS's polynomial, "
                          "then scaled by 1 / sum), float64 softmax_shared.cc (Eigen)"),
    "log_softmax": _cp("LogSoftmax", params={"axis": "axis", "dim": "axis"}, departures=[
                       {"what": "float64 LogSoftmax does not propagate a NaN unless it is "
                                "the row's first entry: [0, 1, NaN, 2] gives "
                                "[44.05, 45.05, NaN, 46.05]",
                        "spec": _SPEC_NAN + " (log_softmax of a row holding a NaN is NaN)",
                        "dtypes": ("float64",),
                        "source": "core/providers/cpu/math/softmax_shared.cc (the row's max "
                                  "skips a NaN after the first entry)"}],
                       source="softmax.cc: float32 MlasComputeSoftmax(LogSoftmax=true): "
                              "x - max - log(sum exp(x - max)); float64 softmax_shared.cc"),
    "layer_norm": _cp("LayerNormalization", ("float16", "bfloat16", "float32", "float64"),
                      params={"eps": "epsilon"}, values={"eps": "float"},
                      operand_attrs={1: ["axis", "neg_len"]}, fill={2: [1.0, "trailing"]},
                      contract={"params": {"eps": "float32"}},
                      formats={"float16": {"compute": "float32"},
                               "bfloat16": {"compute": "float32"}},
                      source="core/providers/cpu/nn/layer_norm_impl.cc: mean and mean of "
                             "squares in one pass, in float32 for half formats (stash_type "
                             "1); epsilon an ONNX float attribute (float32)"),
    "rms_norm": _cp("RMSNormalization", params={"eps": "epsilon"}, values={"eps": "float"},
                    attrs={"epsilon": 1e-5},
                    operand_attrs={1: ["axis", "neg_len"]}, fill={2: [1.0, "trailing"]},
                    contract={"eps": 1e-5, "params": {"eps": "float32"}},
                    formats={"float16": {"compute": "float32"}},
                    source="core/providers/cpu/nn/rms_norm.cc (opset 23); epsilon's default "
                           "1e-5 (the ONNX spec), an ONNX float attribute"),
    "group_norm": _cp("GroupNormalization", params={"eps": "epsilon"},
                      values={"eps": "float"}, operand_attrs={1: ["num_groups", "int"]},
                      fill={2: [1.0, "channels"], 3: [0.0, "channels"]},
                      contract={"params": {"eps": "float32"}, "order": "sequential"},
                      formats={"float16": {"compute": "float32"},
                               "float64": {"compute": "float32", "convert": "inputs"}},
                      source="onnx's GroupNormalization-21 function body (no CPU kernel: ORT "
                             "expands the function, which casts X to stash_type, FLOAT by "
                             "default, float64 included, and reduces with ReduceMean: "
                             "Eigen's partial sums, inside the sequential bound)"),
})

COUNTERPARTS.update({
    "fmod": _cp("Mod", attrs={"fmod": 1},
                source="core/providers/cpu/math/mod.cc: std::fmod (fmod=1; fmod=0 is for "
                       "integers only)"),
    "mish": _cp("Mish", H_F, contract={"accuracy": 7}, departures=[
        {"what": "Mish(-inf) is NaN (the formula's -inf * 0) where the limit is -0",
         "spec": "IEEE 754-2019 §9.2.1 (a function's value at infinity is its limit) and the "
                 "ONNX Mish definition x * tanh(softplus(x))", "source": "activations.h"},
        {"what": "float32 Mish flushes subnormal results to -0 (mish(-100) is -0 where the "
                 "value is -0x1.4bep-138)",
         "spec": "IEEE 754-2019 §7.5 (a tiny result is delivered as its subnormal rounding)",
         "dtypes": ("float32",), "source": "activations.h (MLAS's exp)"}],
        source="core/providers/cpu/activation/activations.h: x * tanh(softplus(x)) in float32: "
               "measured at most 7 ulps over 300,000 inputs in [-15, 30], so accuracy 7"),
    "logsumexp": _cp("ReduceLogSumExp", params=dict(_AXES),
                     inputs={"axis": "int64s", "dim": "int64s"}, attrs={"keepdims": 0},
                     source="reduction_ops.cc: ReduceAggregatorLogSumExp: the row max, then "
                            "log(sum(exp(x - max))) + max"),
    "conv1d": _cp("Conv", H_F, **_CONV,
                  source="core/providers/cpu/nn/conv.cc: im2col and MlasGemm"),
})

COUNTERPARTS.update({
    # ONNX Attention-23 (4-D Q, K, V: (batch, heads, seq, head_dim); the 3-D form packs the
    # heads into the last axis and needs q_num_heads/kv_num_heads: not the registry's 3-D
    # operands, so only rank 4 is run)
    "scaled_dot_product_attention": _cp(
        "Attention", H_F_D, params={"is_causal": "is_causal", "scale": "scale"},
        values={"is_causal": "bool_int", "scale": "float"}, ranks=(4,),
        contract={"params": {"scale": "float32"}},
        formats={"float16": {"compute": "float16"}},
        departures=[
            {"what": "float64 Attention has no CPU kernel: ORT expands the ONNX function body, "
                     "which takes sqrt(scale) in float32 (ScaleFactorSqrt = Sqrt(ScaleFactor) "
                     "on a float tensor, then Cast to T1) and multiplies Q and K by it: the "
                     "scores are scaled by R32(sqrt(scale))**2, 0.12499999572 for head_dim 64 "
                     "(relative 3.4e-8, about 2**28 float64 ulps), so every float64 output is "
                     "float32-accurate only (the exact attention with scale = "
                     "R32(sqrt(0.125))**2 covers it)",
             "spec": "the ONNX Attention definition softmax(scale Q K^T + mask) V with scale "
                     "1/sqrt(head_size) (0.125 exactly for 64, a float32 value: the float "
                     "attribute's rounding costs nothing), computed in T1 = double; the "
                     "float32 sqrt is the function body's (onnx defs/nn/old.cc, "
                     "Attention-23's FunctionBuilder), not the operator's definition",
             "dtypes": ("float64",),
             "source": "measured; onnx 1.23.2 onnx/defs/nn/old.cc (Attention ver23 function "
                       "body); attention.cc registers float and MLFloat16 only"}],
        source="core/providers/cpu/llm/attention.cc (Attention<float>, <MLFloat16>): scores "
               "= GemmEx(alpha = scale, Q, K^T, beta = 1 over the causal/float mask) (MlasGemm: "
               "any order, FMA), the scale a float (1/sqrt(head_size) computed as "
               "float(1/sqrt(double)) when absent; the attribute is an ONNX float), "
               "attention_softmax.h: MlasComputeSoftmax on each row (the row max subtracted, "
               "MLAS's exp polynomial, times 1/sum; the softmax entry's contract), then "
               "P V by GemmEx; masked keys get lowest(), not -inf. float16: the scores, the "
               "weights and the output are each stored in float16 between float32 GEMMs "
               "(AttentionGemm's fp16 fallback on AVX2: upcast, SGEMM, downcast) and a "
               "float32 softmax: computed in float16, which the ONNX spec makes the default "
               "(softmax_precision absent: 'the same precision as the input of softmax'), so "
               "compute='float16'. float64: no kernel, the function body (departure)"),
})

#: the code formats ORT's QuantizeLinear-23 and DequantizeLinear-23 are audited in (the CPU
#: provider registers int8, uint8, int16, uint16, int4, uint4, int32 (dequantize) and the
#: float8 formats; int4 and uint4 are packed two to a byte, which the target does not feed)
_LINEAR_CODES = ("int8", "uint8", "int16", "uint16", "float8_e4m3fn")

COUNTERPARTS.update({
    # the scale's granularity is the ONNX one (axis, block_size); the output format is the
    # zero point's, which the audit always gives (output_dtype is left unset)
    "quantize_linear": _cp(
        "QuantizeLinear", H_F, params={"axis": "axis", "block_size": "block_size"},
        result="param:dtype", codes=_LINEAR_CODES, formats={},
        source="core/providers/cpu/quantization/quantize_linear.cc: the float input by "
               "MlasQuantizeLinear (core/mlas/lib/quantize.cpp: x / scale in float32 by "
               "DIVPS, clamped, CVTPS2DQ under the default MXCSR, round to nearest even, the "
               "zero point added, saturated); MLFloat16 by ParQuantizeLinearStd<MLFloat16> "
               "(core/util/qmath.h; measured: the quotient is rounded to float16 first, which "
               "the default contract, compute = the scale's format, models, and compute = "
               "'float32' does not cover); the float8 outputs by the saturating "
               "float8 constructors: every group passes under the default contract "
               "(compute = the scale's format, divide = 'correct')"),
    "dequantize_linear": _cp(
        "DequantizeLinear", H_F, params={"axis": "axis", "block_size": "block_size"},
        result="operand:1", codes=_LINEAR_CODES,
        source="core/providers/cpu/quantization/quantize_linear.cc (DequantizeLinearApply<T, "
               "OutT>::op): static_cast<OutT>(static_cast<float>(int32(x) - zp) * "
               "static_cast<float>(scale)): the product in float32, then stored in the output "
               "format (float16: compute='float32', a second rounding the contract models; the "
               "float8 codes by the same float32 product)"),
})
