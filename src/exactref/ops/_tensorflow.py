"""The ops of TensorFlow as counterparts of the registry's records: for each registry op the runtime
has, its call in the runtime's own vocabulary, the formats it has a kernel for
(``data["dtypes"]``), the contract that models its kernel (``contract``: the op's keywords,
each freedom cited in ``source``), and what the runtime does that no contract admits
(``departures``: findings, each with the spec it breaks). Data only: the audit target
(:mod:`exactref.audit._tensorflow`) reads it through the records (``get_op(op).counterparts.tensorflow``),
and :func:`exactref.ops._registry.register` attaches it."""

from __future__ import annotations

from ._registry import Counterpart

__all__ = ["COUNTERPARTS"]

F = ("float16", "bfloat16", "float32", "float64")
#: TensorFlow's CPU kernels run with the x86 MXCSR's FTZ and DAZ bits set: every CPU kernel
#: reads subnormal operands as zeros and writes subnormal results as zeros (float32 and float64;
#: float16 and bfloat16 operands are widened to float32 first, where bfloat16's subnormals are
#: float32's). A documented design choice, declared as the contract's ``flush`` (a freedom, not
#: a finding): see FTZ_SOURCE.
FTZ = {"flush": "both"}
FTZ_SOURCE = (
    "FTZ/DAZ by design: tensorflow/core/platform/denormal.{h,cc} port::ScopedFlushDenormal "
    "(sets _MM_FLUSH_ZERO_ON and _MM_DENORMALS_ZERO_ON), entered by every intra-op thread "
    "(tsl/platform/threadpool.cc, EigenEnvironment::CreateThread: 'Set the processor flag to "
    "flush denormals to zero') and by ThreadPoolDevice::Compute "
    "(tensorflow/core/common_runtime/threadpool_device.cc); measured: tf.math.add(1e-40f, 0) "
    "is 0 on tensorflow-cpu 2.21.0")
#: Eigen evaluates a half-format (float16, bfloat16) unary function by widening to float,
#: evaluating float's and rounding back (Eigen/src/Core/arch/Default/Half.h and BFloat16.h:
#: the EIGEN_DEVICE_FUNC unary functions of half/bfloat16 call the float ones)
HALF_VIA_FLOAT = {"float16": {"compute": "float32"}, "bfloat16": {"compute": "float32"}}
_IEEE_DIV = "IEEE 754-2019 §5.4.1 (division and squareRoot correctly rounded)"


def _dep(what, spec, dtypes, source="measured on tensorflow-cpu 2.21.0, x86-64 AVX2/FMA"):
    return {"what": what, "spec": spec, "dtypes": tuple(dtypes), "source": source}


#: registry op name -> the op in TensorFlow
COUNTERPARTS: dict[str, Counterpart] = {}

#: exact ops (arithmetic, selections, comparisons): the op rounded once, under FTZ/DAZ
_EXACT = {
    "add": "tf.math.add", "subtract": "tf.math.subtract", "multiply": "tf.math.multiply",
    "divide": "tf.math.divide", "abs": "tf.math.abs", "negative": "tf.math.negative",
    "maximum": "tf.math.maximum", "minimum": "tf.math.minimum", "sqrt": "tf.math.sqrt",
    "rsqrt": "tf.math.rsqrt", "reciprocal": "tf.math.reciprocal",
    "equal": "tf.math.equal", "not_equal": "tf.math.not_equal", "less": "tf.math.less",
    "less_equal": "tf.math.less_equal", "greater": "tf.math.greater",
    "greater_equal": "tf.math.greater_equal", "remainder": "tf.math.floormod",
    "fmod": "tf.truncatemod",
}
for _op, _call in _EXACT.items():
    COUNTERPARTS[_op] = Counterpart(
        _call, contract=dict(FTZ), data={"dtypes": F},
        source="cwise_ops: Eigen's scalar ops (tensorflow/core/kernels/cwise_op_*.cc), "
               "IEEE arithmetic; " + FTZ_SOURCE)
COUNTERPARTS["fmod"].data["dtypes"] = ("float32", "float64")  # no half TruncateMod kernel
#: the integer kernels of cwise_op_*.cc (REGISTER*(..., int32, int64)): two's-complement
#: wrapping arithmetic, exact comparisons and selections
_INT = ("int32", "int64")
for _op in ("add", "subtract", "multiply", "abs", "negative", "maximum", "minimum", "equal",
            "not_equal", "less", "less_equal", "greater", "greater_equal"):
    COUNTERPARTS[_op].data["dtypes"] = F + _INT
COUNTERPARTS["cast"] = Counterpart(
    # float -> integer casts are left out: a NaN's or an out-of-range value's conversion is
    # undefined behaviour in C++ (static_cast in Eigen's scalar_cast_op), nothing to audit
    "tf.cast", contract={}, data={"dtypes": F, "params": {"to": "dtype"}, "audited": {"to": F}},
    source="CastOp (tensorflow/core/kernels/cast_op_impl.h): Eigen's rounding conversions; "
           + FTZ_SOURCE)

#: functions: Eigen's packet math (Eigen/src/Core/arch/Default/GenericPacketMathFunctions.h:
#: pexp_float/double, plog, ptanh_float, perf_float; scalar std:: (glibc) where Eigen has no
#: packet version), half formats widened to float (HALF_VIA_FLOAT)
_FUNCTIONS = {
    "exp": "tf.math.exp", "expm1": "tf.math.expm1", "log": "tf.math.log",
    "log1p": "tf.math.log1p", "tanh": "tf.math.tanh", "sigmoid": "tf.math.sigmoid",
    "erf": "tf.math.erf", "erfc": "tf.math.erfc", "sin": "tf.math.sin", "cos": "tf.math.cos",
    "tan": "tf.math.tan", "asin": "tf.math.asin", "acos": "tf.math.acos",
    "atan": "tf.math.atan", "sinh": "tf.math.sinh", "cosh": "tf.math.cosh",
    "pow": "tf.math.pow", "atan2": "tf.math.atan2",
}
for _op, _call in _FUNCTIONS.items():
    COUNTERPARTS[_op] = Counterpart(
        _call, contract=dict(FTZ), data={"dtypes": F, "formats": dict(HALF_VIA_FLOAT)},
        source="Eigen's packet math (Eigen/src/Core/arch/Default/"
               "GenericPacketMathFunctions.h) at the 'mainstream' accuracy preset unless an "
               "entry's contract says otherwise; half formats via float (Eigen/src/Core/arch/"
               "Default/Half.h, BFloat16.h); " + FTZ_SOURCE)

#: measured accuracies beyond the mainstream preset, each the measured maximum (2048 samples
#: per group over the whole range and the audit's hard inputs) rounded up
_ACCURACY = {
    # ptanh_float / ptanh_double: a 13/6 rational approximation clamped at +-9 (float) and
    # +-19 (double); measured at most 2 ulps beyond the preset's 2
    "tanh": {"float32": 4, "float64": 4},
    # expm1/log1p: Eigen's pexpm1/plog1p (Kahan's log1p trick); measured max 2 / 3 ulps
    "expm1": {"float32": 2, "float64": 3},
    "log1p": {"float32": 3, "float64": 2},
}
for _op, _per in _ACCURACY.items():
    for _fmt, _ulps in _per.items():
        COUNTERPARTS[_op].data["formats"][_fmt] = {"accuracy": _ulps}

#: softplus: tensorflow/core/kernels/softplus_op.h, threshold = log(epsilon<T>()) + 2 in T:
#: x above -threshold, exp(x) below threshold, else log1p(exp(x)), each in the operand's
#: format (half formats through float per function, rounded between); the registry's
#: threshold parameter says where softplus is x (the kernel's -threshold, by format), and
#: the exp(x) branch's relative error e**x / 2 (under 4 ulps at the branch) is the accuracy
COUNTERPARTS["softplus"] = Counterpart(
    # float16/bfloat16: the kernel evaluated in the half format, a departure (_DEPARTURES);
    # the contract is the value rounded once with no threshold (measured over every finite
    # half: float32's threshold or none leave the same elements uncovered, while the half
    # format's own -(log(eps) + 2), 4.93 for float16, would wrongly admit x itself above it)
    "tf.math.softplus", contract=dict(FTZ), data={"dtypes": F, "formats": {
        "float32": {"threshold": float.fromhex("0x1.be2804p+3"), "accuracy": 4},
        "float64": {"threshold": float.fromhex("0x1.105966f2b4f12p+5"), "accuracy": 4},
        "float16": {"threshold": float("inf"), "compute": "float32"},
        "bfloat16": {"threshold": float("inf"), "compute": "float32"}}},
    source="tensorflow/core/kernels/softplus_op.h (SoftplusImpl: the three branches); "
           "Eigen's exp and log1p; " + FTZ_SOURCE)

#: long sums and row kernels: Eigen's tensor reductions (SumReducer, vectorised and split
#: across the intra-op threads: any order), MatMul via Eigen's contraction or oneDNN (any
#: order, products fused or not), a bfloat16/float16 MatMul accumulating in float32
_SHAPED = {
    "sum": ("tf.math.reduce_sum", {"axis": "axis"}),
    "mean": ("tf.math.reduce_mean", {"axis": "axis"}),
    "cumsum": ("tf.math.cumsum", {"axis": "axis"}),
    "matmul": ("tf.linalg.matmul", {}),
    "softmax": ("tf.nn.softmax", {"axis": "axis"}),
    "log_softmax": ("tf.nn.log_softmax", {"axis": "axis"}),
}
for _op, (_call, _params) in _SHAPED.items():
    COUNTERPARTS[_op] = Counterpart(
        _call, contract={"order": "any", **FTZ}, data={"dtypes": F, "params": _params},
        source="Eigen's tensor reductions (unsupported/Eigen/CXX11/src/Tensor/"
               "TensorReduction.h: packet-wise partial sums, split across threads: any "
               "order); " + FTZ_SOURCE)
for _op in ("sum", "cumsum", "matmul"):  # integer sums keep their type and wrap
    COUNTERPARTS[_op].data["dtypes"] = F + _INT
    COUNTERPARTS[_op].data["formats"] = {f: {"overflow": "wrap", "dtype": f} for f in _INT}
COUNTERPARTS["matmul"].data["formats"].update({"bfloat16": {"compute": "float32"},
                                                 "float16": {"compute": "float32"}})
for _op in ("softmax", "log_softmax"):  # (FTZ through the contract layer's flush)
    COUNTERPARTS[_op].contract["accuracy"] = "mainstream"

_HALF = ("float16", "bfloat16")
_DEPARTURES = {
    "reciprocal": [_dep(
        "float32 reciprocal is Eigen's preciprocal: the rcpps estimate refined by one "
        "Newton step, not 1/x rounded once (up to 3 ulps below 2**115; for |x| in "
        "[2**115, 2**126] the refinement underflows under FTZ: up to 4,634 ulps, measured at "
        "x = 0x1.0d2f7p+115)", _IEEE_DIV, ("float32",),
        "Eigen/src/Core/arch/AVX/MathFunctions.h preciprocal<Packet8f>; measured")],
    "rsqrt": [_dep(
        "float32 rsqrt is the rsqrtps estimate refined by one Newton step (1 ulp off the "
        "correctly rounded 1/sqrt(x); at most 2 ulps measured over 200,000 inputs)", "IEEE 754-2019 §9.2 rSqrt (recommended correctly "
        "rounded), and the registry's rsqrt (rounded once)", ("float32",),
        "Eigen/src/Core/arch/AVX/MathFunctions.h prsqrt<Packet8f>; measured")],
    "erf": [_dep(
        "float64 erf is NaN for +-inf and for |x| >= 0x1.ffffffcp+511 (x*x overflows and "
        "the rational approximation gives inf/inf) where erf is +-1",
        "IEEE 754-2019 §9.2.1 and C23 F.10.5.3 (erf(+-inf) = +-1); a NaN only for a NaN "
        "operand (§6.2)", ("float64",),
        "Eigen's erf<double> (unsupported/Eigen/src/SpecialFunctions/"
        "SpecialFunctionsImpl.h); measured")],
    "erfc": [_dep(
        "erfc's tail loses accuracy: exp(-x*x) of a rounded x*x (float32 40 ulps near x = 9, "
        "float64 200 ulps near x = 26.5)", "the registry's erfc (rounded once, within the "
        "mainstream preset's few ulps)", ("float32", "float64"))],
    **{_f: [_dep(f"float64 {_f} loses accuracy for huge arguments (|x| > 2**700: 1000 ulps and "
                 "more): Eigen's range reduction is not exact", f"IEEE 754-2019 §9.2 ({_f} "
                 "for every finite x); the mainstream preset's few ulps", ("float64",))]
       for _f in ("sin", "cos", "tan")},
    "pow": [_dep("float64 pow near x = 1 with a large y is exp(y*log(x)) with a rounded "
                 "log (700 ulps; 3 ulps near x = 114, y = -114)", "IEEE 754-2019 §9.2 pow; the mainstream preset",
                 ("float64",))],
    "softplus": [_dep("half-format softplus is evaluated in the half format (softplus_op.h's "
                      "branches in T): not the float32 value rounded once (9,070 of the 63,488 "
                      "finite float16 inputs differ from TF's own float32 softplus rounded to "
                      "float16, by 1-2 ulps, e.g. softplus(0x1.3f8p+2) = 5 for 4.9921875; "
                      "bfloat16 1,143 of 65,280, up to 7 ulps where exp(x) replaces softplus "
                      "below bfloat16's threshold -2.86)", "the registry's softplus (rounded "
                      "once)", _HALF, "tensorflow/core/kernels/softplus_op.h (SoftplusImpl<T>); "
                      "measured over every finite float16 and bfloat16")],
    "sigmoid": [_dep("half-format sigmoid is evaluated in the half format (1 ulp off the "
                     "correctly rounded value; no float intermediate)",
                     "the registry's sigmoid (rounded once)", _HALF)],
    "atan2": [_dep("bfloat16 atan2 of two subnormals is NaN (read as 0/0 under DAZ)",
                   "IEEE 754-2019 §9.2.1 (atan2 of finite operands is never NaN; "
                   "atan2(+-0, -0) = +-pi)", ("bfloat16",))],
    **{_f: [_dep(f"{_f} of +0 and -0 returns one of them by its position (Eigen's "
                 "x < y ? x : y; tf.math.minimum(-0.0, +0.0) is +0.0): -0 does not order below "
                 "+0", f"IEEE 754-2019 §9.6 {_f}", F)]
       for _f in ("minimum", "maximum")},
    "remainder": [_dep("floormod's zero result takes the dividend's sign, not the divisor's",
                       "the registry's remainder (Python's and numpy's: a zero remainder "
                       "has the divisor's sign)", F)],
    "sum": [_dep("half-format reduce_sum accumulates in the half format",
                 "the registry's sum (one exact sum rounded once; a wider accumulator "
                 "admitted)", ("float16",),
                 "tensorflow/core/kernels/reduction_ops_sum.cc: Eigen's SumReducer<half>")],
    "mean": [_dep("half-format reduce_mean accumulates in the half format", "the registry's "
                  "mean", ("float16",))],
    "cumsum": [_dep("half-format cumsum accumulates in the half format (7 ulps after 48 terms)",
                    "the registry's cumsum (each prefix sum exact, rounded once)", _HALF,
                    "tensorflow/core/kernels/scan_ops.cc: Eigen's ScanOp over half")],
    "matmul": [_dep("bfloat16 matmul truncates its float32 accumulator into bfloat16 (round "
                    "toward zero; 1 ulp off in half the elements)",
                    "IEEE 754-2019 §4.3.3 (roundTiesToEven, the default rounding); TF's own "
                    "tf.cast rounds to nearest even", ("bfloat16",),
                    "measured; TF's FloatToBFloat16 truncation (tensorflow/core/framework/"
                    "bfloat16.cc)")],
    "softmax": [_dep("half-format softmax is evaluated in the half format (62 ulps for small "
                     "outputs)", "the registry's softmax (rounded once)", _HALF)],
    # the casts keep their flushing a finding: a conversion is no float arithmetic the FTZ
    # design speaks of, and flush="both" would admit a flushed float16 result (up to 1,023
    # ulps) that Eigen's software half conversion never gives
    "cast": [_dep("a float32 or float64 cast reads subnormal operands as zero and writes "
                  "subnormal results as zero (the FTZ/DAZ flags reach the conversion)",
                  "IEEE 754-2019 §5.4.2 (convertFormat, rounded once; gradual underflow)", F,
                  FTZ_SOURCE)],
    "log_softmax": [_dep("bfloat16 log_softmax is evaluated in bfloat16",
                         "the registry's log_softmax (rounded once)", ("bfloat16",))],
}
for _op, _deps in _DEPARTURES.items():
    _cp = COUNTERPARTS[_op]
    COUNTERPARTS[_op] = Counterpart(_cp.call, _cp.contract, tuple(_deps), _cp.source, _cp.data)

#: conv1d/conv2d: the registry's operands are PyTorch's (input (N, C, L...), weight (O, C/groups,
#: k...), bias (O,)); TensorFlow's CPU Conv2D runs NHWC only (Conv2D with data_format NCHW:
#: "only supports the NHWC tensor format" for float64), so the call transposes the input to
#: channels-last and the weight to (k..., C/groups, O), passes the padding explicitly (conv2d)
#: or pads with zeros first (tf.nn.conv1d takes 'SAME'/'VALID' only), adds the bias with
#: tf.nn.bias_add (a second kernel: the conv's sum rounded, then the bias added and rounded:
#: one order of the sum with the bias last) and transposes back. groups: tf.nn.conv2d's
#: grouped convolution, implied by the filter's C/groups (measured: the CPU kernels take
#: groups = C in every format)
for _op, _call, _stride in (("conv1d", "tf.nn.conv1d", "stride"),
                            ("conv2d", "tf.nn.conv2d", "strides")):
    COUNTERPARTS[_op] = Counterpart(
        _call, contract={"order": "any", **FTZ},
        # half formats: the conv accumulates in float32 (measured: every audit case without
        # its bias is covered by compute='float32'), its result rounded to the half format
        departures=(_dep(
            "with a bias, the half-format conv is rounded twice: tf.nn.bias_add adds the bias "
            "to the conv's half-format result and rounds again (measured: the output is "
            "R(R(conv) + b) bit for bit in every audit case; up to 1,800 ulps where conv + b "
            "cancels): TensorFlow's API has no fused conv-and-bias kernel (eager; Keras' "
            "Conv layers call the same two)", "the registry's conv (x * w + b, rounded once; "
            "a float32 accumulator admitted)", _HALF,
            "tensorflow/core/kernels/bias_op.cc (BiasOp<T>: in T); measured"),),
        data={"dtypes": F, "conv": {"padding": "pad" if _op == "conv1d" else "explicit"},
              "params": {"stride": _stride, "padding": "padding", "dilation": "dilations",
                         "groups": None},
              "formats": {"float16": {"compute": "float32"},
                          "bfloat16": {"compute": "float32"}}},
        source="tensorflow/core/kernels/conv_ops.cc (Conv2D; conv1d is Conv2D on an added "
               "axis): Eigen's SpatialConvolution (unsupported/Eigen/CXX11/src/Tensor: an "
               "im2col contraction, the products summed in the contraction's blocked order) "
               "or oneDNN (mkl_conv_ops.cc) for float32/bfloat16: any order; bias_add a "
               "second kernel (tensorflow/core/kernels/bias_op.cc); " + FTZ_SOURCE)
