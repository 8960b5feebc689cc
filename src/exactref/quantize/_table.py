"""The block-scaled formats and the scale rules, as data.

One row per block format: its element format, block size, scale format, ``emax_elem`` (the
exponent of the element format's largest normal value, from the OCP MX v1.0 formats' tables) and the
scale rules it takes; one row per scale rule with the source it follows. The code in
``_quantize.py`` folds these rows; nothing here computes.

Sources (cited where each value is used):

* OCP Microscaling Formats (MX) v1.0 specification,
  https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf
  (section 5: the formats and E8M0; section 6.3: "Conversion from vector of scalar floats");
  the same algorithm is Algorithm 1 of Rouhani et al., "Microscaling Data Formats for Deep
  Learning", https://arxiv.org/abs/2310.10537.
* torchao, ``torchao/prototype/mx_formats/config.py`` (``ScaleCalculationMode``: FLOOR, CEIL,
  EVEN, RCEIL) and ``mx_tensor.py`` (``to_mx``), github.com/pytorch/ao.
* microsoft/microxcaling, ``mx/mx_ops.py`` (``_quantize_mx``: the scale clamp at -127 and NaN
  past +127, zero padding of a last partial block) and ``mx/formats.py`` (``_get_format_params``:
  MXINT8's symmetric clamp at +-127/64).
* cuBLAS, "1D block quantization", https://docs.nvidia.com/cuda/cublas/#d-block-quantization,
  and cuDNN's block scale quantize, https://docs.nvidia.com/cudnn/operations/BlockScaling
  (``scale = quantize_round_up(amax / vmax)``): the RCEIL rule.
* NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference" (June 2025),
  https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/
  (E2M1 elements, an E4M3 scale per 16 values, a float32 per-tensor scale); Transformer Engine
  ``transformer_engine/common/cast/nvfp4/core_nvfp4.cuh`` (global encode scale
  ``448 * 6 / amax``, 1 for a zero or infinite amax; block scale ``amax_b / 6 * S_enc`` cast to
  E4M3 with rounding to nearest and saturation); torchao ``nvfp4_tensor.py``
  (``per_tensor_amax_to_scale``: ``amax / (448 * 6)``; ``nvfp4_quantize``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BlockFormat", "BLOCK_FORMATS", "SCALE_RULES", "ScaleRule"]


@dataclass(frozen=True)
class ScaleRule:
    """One way to compute a block's scale from its largest magnitude ``amax``."""

    name: str
    family: str  # "mx" (an E8M0 power of two) or "nvfp4" (an E4M3 value)
    formula: str
    source: str


@dataclass(frozen=True)
class BlockFormat:
    """One block-scaled format: elements of ``element`` sharing one ``scale`` per ``block``.

    ``emax_elem`` is the exponent of the element format's largest normal value (the MX
    specification's ``emax_elem``); ``elem_precision`` the bits of its significand in that top
    binade (the ``even`` rule rounds ``amax`` to it); ``int_scale`` the power of two an integer
    code is worth (MXINT8: ``2**-6``), 0 for float elements.
    """

    name: str
    family: str
    element: str
    scale: str
    block: int
    emax_elem: int
    elem_precision: int
    rules: tuple
    int_scale: int = 0
    note: str = ""

    @property
    def default_rule(self) -> str:
        """The reference's rule: the spec's (MX ``"floor"``, NVFP4 ``"nearest"``)."""
        return self.rules[0]

    @property
    def default_rules(self) -> tuple:
        """The rules ``scale_rule=None`` declares: every rule the mainstream quantizers use
        (MX: the OCP MX spec's ``"floor"`` and NVIDIA's ``"rceil"``, cuBLAS and cuDNN; NVFP4:
        ``"nearest"``, Transformer Engine's and torchao's), the spec's first."""
        return DEFAULT_RULES[self.family]

    def __repr__(self) -> str:
        return f"exactref.quantize.BLOCK_FORMATS[{self.name!r}]"


_MX_RULES = ("floor", "ceil", "even", "rceil")
#: Per family, the rules of ``scale_rule=None``: MX the OCP MX v1.0 spec's ``floor`` (section
#: 6.3; torchao's default ScaleCalculationMode.FLOOR) and NVIDIA's ``rceil`` (cuBLAS 1D block
#: quantization, cuDNN block scale quantize; torchao ScaleCalculationMode.RCEIL); ``ceil`` and
#: ``even`` are torchao options, declared by name.
DEFAULT_RULES = {"mx": ("floor", "rceil"), "nvfp4": ("nearest",)}
_NV_RULES = ("nearest", "up")

#: The scale rules, by name, each with its exact formula and its source.
SCALE_RULES: dict[str, ScaleRule] = {r.name: r for r in [
    ScaleRule("floor", "mx", "X = 2**(floor(log2(amax)) - emax_elem)",
              "OCP MX v1.0 section 6.3 (the spec's rule); torchao ScaleCalculationMode.FLOOR"),
    ScaleRule("ceil", "mx", "X = 2**(ceil(log2(amax)) - emax_elem)",
              "torchao ScaleCalculationMode.CEIL (adds one when amax is not a power of two)"),
    ScaleRule("even", "mx",
              "X = 2**(floor(log2(round(amax))) - emax_elem), amax rounded to the element's "
              "precision, ties away from zero",
              "torchao ScaleCalculationMode.EVEN (adds half an ulp of the element's precision "
              "to amax's float32 bits, then keeps the exponent)"),
    ScaleRule("rceil", "mx",
              "X = 2**ceil(log2(amax / max_elem)): the smallest power of two that leaves no "
              "element past max_elem",
              "cuBLAS 1D block quantization and cuDNN block scale quantize (quantize_round_up("
              "amax / vmax)); torchao ScaleCalculationMode.RCEIL"),
    ScaleRule("nearest", "nvfp4", "s = RN_E4M3(amax_b / (6 * g)), saturating at 448",
              "NVIDIA's NVFP4 (Transformer Engine core_nvfp4.cuh, torchao nvfp4_quantize): "
              "the block amax over 6, in units of the global scale, rounded to nearest E4M3"),
    ScaleRule("up", "nvfp4", "s = RU_E4M3(amax_b / (6 * g)), saturating at 448",
              "cuDNN block scale quantize: scale = quantize_round_up(amax / vmax)"),
]}

# fmt: off
_TABLE = [
    #           name          family   element           scale             block emax p  rules
    BlockFormat("mxfp8_e4m3", "mx",    "float8_e4m3fn",  "float8_e8m0fnu", 32,   8,   4, _MX_RULES),
    BlockFormat("mxfp8_e5m2", "mx",    "float8_e5m2",    "float8_e8m0fnu", 32,   15,  3, _MX_RULES),
    BlockFormat("mxfp6_e3m2", "mx",    "float6_e3m2fn",  "float8_e8m0fnu", 32,   4,   3, _MX_RULES),
    BlockFormat("mxfp6_e2m3", "mx",    "float6_e2m3fn",  "float8_e8m0fnu", 32,   2,   4, _MX_RULES),
    BlockFormat("mxfp4",      "mx",    "float4_e2m1fn",  "float8_e8m0fnu", 32,   2,   2, _MX_RULES),
    BlockFormat("mxint8",     "mx",    "int8",           "float8_e8m0fnu", 32,   0,   7, _MX_RULES,
                int_scale=-6,
                note="codes are int8 integers worth code * 2**-6 (the OCP MX v1.0 INT8 element: two's complement with an implicit scale 2**-6); "
                     "clamped symmetrically to +-127 as microxcaling does (-128 is never "
                     "produced)"),
    BlockFormat("nvfp4",      "nvfp4", "float4_e2m1fn",  "float8_e4m3fn",  16,   2,   2, _NV_RULES,
                note="plus a float32 per-tensor scale g: value = code * scale * g"),
]
# fmt: on

#: The block formats by name.
BLOCK_FORMATS: dict[str, BlockFormat] = {f.name: f for f in _TABLE}
