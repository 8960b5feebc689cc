"""torchao's MX and NVFP4 reference quantizers as an audit target: ``exactref audit torchao``.

torchao (github.com/pytorch/ao, ``torchao/prototype/mx_formats/``) quantizes with

* ``mx_tensor.to_mx(x, elem_dtype, 32, scaling_mode)``: MXFP8 (E4M3, E5M2), MXFP6 (E2M3,
  E3M2) and MXFP4, each under ``ScaleCalculationMode`` FLOOR, CEIL, EVEN and RCEIL, which are
  exactref's scale rules ``floor``, ``ceil``, ``even`` and ``rceil``
  (:data:`exactref.quantize.SCALE_RULES` gives each formula and its source);
* ``nvfp4_tensor.nvfp4_quantize(x, 16, per_tensor_scale)``: NVFP4, its E4M3 block scale
  rounded to nearest (the rule ``nearest``), with or without the float32 per-tensor scale
  ``per_tensor_amax_to_scale(amax) = amax / (448 * 6)`` (without it, ``g = 1``). Its
  quotients are formed in float32, so the reference is ``er.quantize(..., compute="float32")``.

Each group runs one of them on the quantizer audit's blocks (``_quantize.draw``: random,
edges, extremes, specials) of float32 or bfloat16 (the input formats torchao takes) and checks
its codes and scales with ``er.quantize(x, fmt, scale_rule=rule).covers(codes, scales)``. The
codes are read from torchao's bits with ml_dtypes' formats (FP6 unpacked one per byte, FP4
packed two per byte), not with torchao's own decoders. Where torchao departs from the rule
(``docs/block_formats.md``, "torchao as an audit target"), the group fails and its message
names the departure.
"""

from __future__ import annotations

import logging

import numpy as np

from .._array import asarray
from .._formats import FORMATS
from ..ops import get_op
from ._targets import Target

__all__ = ["TorchaoTarget", "TORCHAO_FORMATS", "DEPARTURES", "explain", "load_torchao", "codes_of",
           "e8m0_of"]

#: exactref's block format -> torchao's element dtype (a torch dtype's name, or torchao's
#: string for the FP6 formats, which torch has no dtype for)
TORCHAO_FORMATS = {
    "mxfp8_e4m3": "float8_e4m3fn",
    "mxfp8_e5m2": "float8_e5m2",
    "mxfp6_e2m3": "fp6_e2m3",
    "mxfp6_e3m2": "fp6_e3m2",
    "mxfp4": "float4_e2m1fn_x2",
    "nvfp4": None,
}
#: the input formats torchao's quantizers take (``to_mx`` and ``nvfp4_quantize`` assert them)
INPUT_FORMATS = ("float32", "bfloat16")
_INSTALL = "pip install 'exactref[torchao]'"


def load_torchao():
    """``(torchao, mx_tensor, nvfp4_tensor, config, kernels)``, or an ImportError that says how
    to install it. torchao's import logs a warning for each CUDA extension it cannot load on a
    CPU-only machine, and torch's pytree one for each enum torchao registers (a deprecation
    notice to torchao's authors); those are silenced."""
    logs = [logging.getLogger(n) for n in ("torchao", "torch.utils._pytree")]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.ERROR)
    try:
        import torchao
        from torchao.prototype.mx_formats import config, kernels, mx_tensor, nvfp4_tensor
    except ImportError as exc:
        raise ImportError(
            f"the torchao audit target needs torchao ({exc}); install it with {_INSTALL}"
        ) from None
    finally:
        for log, level in zip(logs, levels, strict=True):
            log.setLevel(level)
    return torchao, mx_tensor, nvfp4_tensor, config, kernels


class TorchaoTarget(Target):
    """torchao's quantizers (``to_mx``, ``nvfp4_quantize``) on CPU, audited as block
    quantizers: ``exactref audit torchao [--format F] [--scale-rule R]``."""

    name = "torchao"
    library = "torchao"
    library_key = "torchao"
    has_params = False
    default_ops = ("quantize",)

    def __init__(self):
        import torch

        self.torch = torch
        self.torchao, self.mx, self.nv, self.config, self.kernels = load_torchao()

    def versions(self) -> dict:
        return {"torchao": self.torchao.__version__, "torch": self.torch.__version__}

    def dtypes(self) -> list:
        return [FORMATS[n] for n in INPUT_FORMATS]

    def counterpart(self, op):
        if get_op(op).plan != "blocks":  # torchao's targets are block quantizers only
            return None
        return "torchao.prototype.mx_formats.mx_tensor.to_mx"

    def supports(self, op, specs, params) -> bool:
        return get_op(op).plan == "blocks"  # the groups plan_groups gives, each one torchao runs

    def unsupported(self, exc) -> bool:
        return isinstance(exc, NotImplementedError)

    # ------------------------------------------------------------------ planning
    def check_quantize(self, cfg) -> None:
        """Usage errors: a format or rule torchao has no quantizer for, an input format it
        does not take."""
        from . import AuditUsageError

        if cfg.block_format is not None and cfg.block_format not in TORCHAO_FORMATS:
            extra = (" (torchao has no MXINT8)" if cfg.block_format == "mxint8" else "")
            raise AuditUsageError(
                f"--format {cfg.block_format!r}{extra}: torchao quantizes "
                f"{', '.join(TORCHAO_FORMATS)}; leave --format out to audit all of them")
        names = [cfg.block_format] if cfg.block_format else list(TORCHAO_FORMATS)
        rules = list(dict.fromkeys(r for f in names for r in _rules(f)))
        if cfg.scale_rule not in (None, "any") and cfg.scale_rule not in rules:
            raise AuditUsageError(
                f"--scale-rule {cfg.scale_rule!r}: torchao's rules here are "
                f"{', '.join(rules)} (MX: its ScaleCalculationMode; NVFP4: nearest only)")
        for d in cfg.dtypes or ():
            if FORMATS[d].name not in INPUT_FORMATS:
                raise AuditUsageError(
                    f"--dtypes {d}: torchao's to_mx and nvfp4_quantize take "
                    f"{' and '.join(INPUT_FORMATS)} only")

    def plan_groups(self, op, cfg, dtypes) -> list:
        """The groups: per torchao format (or ``--format``), per rule it has (or
        ``--scale-rule``; NVFP4 with and without its per-tensor scale), per input format and
        data kind."""
        from ._quantize import plan

        out = []
        for name in [cfg.block_format] if cfg.block_format else list(TORCHAO_FORMATS):
            for rule in _rules(name):
                if cfg.scale_rule not in (None, "any", rule):
                    continue
                variants = [{"per_tensor_scale": v} for v in (False, True)] if \
                    name == "nvfp4" else [{}]
                for extra in variants:
                    sub = _Cfg(cfg, name, rule)
                    for op_, specs, params in plan(sub, dtypes or self.dtypes(), op):
                        kind = params.pop("data")
                        out.append((op_, specs, {**params, **extra, "data": kind}))
        return out

    # ------------------------------------------------------------------ running
    def quantize_call(self, x: np.ndarray, params: dict):
        """torchao's ``(codes, scales)`` of ``x`` (codes of the element format, scales as
        float64), and the keywords of the reference ``er.quantize`` call (NVFP4: the global
        scale torchao used, float32 quotients)."""
        torch = self.torch
        t = asarray(x).torch()
        fmt = params["fmt"]
        if fmt == "nvfp4":
            return self._nvfp4(t, params.get("per_tensor_scale", False))
        elem = TORCHAO_FORMATS[fmt]
        mode = self.config.ScaleCalculationMode(params["scale_rule"])
        dtype = getattr(torch, elem) if elem.startswith("float") else elem
        scales, data = self.mx.to_mx(t, dtype, 32, mode)
        return (codes_of(data, fmt), e8m0_of(scales)), {}

    def _nvfp4(self, t, per_tensor: bool):
        torch = self.torch
        g = None
        if per_tensor:
            g = self.nv.per_tensor_amax_to_scale(torch.max(torch.abs(t)))
        scales, data = self.nv.nvfp4_quantize(t, 16, g)
        codes = codes_of(data, "nvfp4")
        s = scales.to(torch.float32).numpy().astype(np.float64)
        gv = 1.0 if g is None else float(g)
        self.last_global_scale = gv  # for the reproducer (inf or NaN included)
        ref = {"compute": "float32",
               "global_scale": gv if np.isfinite(gv) and gv > 0 else None}
        return (codes, s), ref

    def quantize_source(self, params: dict, ref: dict) -> tuple[list, str]:
        """A reproducer's lines that compute ``out`` (torchao's codes and scales of ``x``) with
        torchao's own calls, and the reference call's extra keywords, as source."""
        fmt = params["fmt"]
        head = ["import torch", "from exactref.audit._torchao import codes_of, e8m0_of",
                "t = er.asarray(x).torch()"]
        if fmt != "nvfp4":
            elem = TORCHAO_FORMATS[fmt]
            dtype = f"torch.{elem}" if elem.startswith("float") else repr(elem)
            return head + [
                "from torchao.prototype.mx_formats.config import ScaleCalculationMode",
                "from torchao.prototype.mx_formats.mx_tensor import to_mx",
                f"scales, data = to_mx(t, {dtype}, 32, "
                f"ScaleCalculationMode({params['scale_rule']!r}))",
                f"out = codes_of(data, {fmt!r}), e8m0_of(scales)"], ""
        g = ref.get("global_scale")
        lines = head + ["from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize"]
        if params.get("per_tensor_scale"):  # the group's, from the whole tensor's amax
            used = getattr(self, "last_global_scale", g)
            lines.append(f"g = torch.tensor(float.fromhex({used.hex()!r}))" if np.isfinite(used)
                         else f"g = torch.tensor(float({str(used)!r}))")
        else:
            lines.append("g = None")
        lines += ["scales, data = nvfp4_quantize(t, 16, g)",
                  "out = codes_of(data, 'nvfp4'), scales.float().numpy()"]
        gs = "None" if g is None else f"float.fromhex({float(g).hex()!r})"
        return lines, f"compute='float32', global_scale={gs}"

    def call_source(self, op) -> str:
        return "torchao"

    # ------------------------------------------------------------------ departures
    def departure(self, params, x, codes, scales, ref, cov) -> tuple[str, dict]:
        """The group's uncovered elements sorted by torchao's known departures from the rule
        (:data:`DEPARTURES`): the start of its failure message, and the counts (departure
        name -> elements; ``"unexplained"``: the rest)."""
        counts = explain(params, x, codes, scales, np.asarray(cov.mask))
        known = [f"{DEPARTURES[k]} ({n})" for k, n in counts.items()
                 if k != "unexplained" and n]
        text = "torchao's known departures: " + "; ".join(known) if known else ""
        if counts["unexplained"]:
            text += ("; " if text else "") + (f"{counts['unexplained']} uncovered elements "
                                                "NOT explained by a known departure")
        return text, counts


#: torchao 0.18.0's departures from the scale rules, each a model of its code that gives the
#: exact codes and scales it produces where it departs (``docs/block_formats.md``)
DEPARTURES = {
    "mx_min_scale": "where the scale is 2**-127 (E8M0 0x00) the elements are divided by "
                    "2**-126 (floor, ceil, even: the clamp to F32_MIN_NORMAL) or by 1 (rceil: "
                    "_to_mx_rceil's reciprocal of exponent 0)",
    "mx_rceil_log2": "rceil: ceil(log2(amax / max_elem)) computed in float32 (torch.log2 in "
                     "_to_mx_rceil's eager path) is one too small where amax / max_elem lies "
                     "a few float32 ulps above a power of two: half the rule's scale, the "
                     "largest elements saturate",
    "mx_inf_block": "a block holding an infinity gets a finite scale, 2**(128 - emax_elem) "
                    "(floor, ceil, even: the exponent field of inf) or 2**127 (rceil: 0xFE), "
                    "not NaN, and the infinity's code is the largest element",
    "nvfp4_min_scale": "the block scale is clamped to E4M3's smallest normal 2**-6 "
                       "(E4M3_EPS) where the rule gives a smaller one (a subnormal or 0)",
    "nvfp4_nonfinite_tensor": "the tensor holds a NaN or an infinity: the per-tensor scale "
                              "amax / 2688 is NaN or inf, and every block with it",
}


def explain(params, x, codes, scales, mask) -> dict:
    """How many uncovered elements (``~mask``) each known departure explains: an element
    counts when torchao's code and block scale equal, exactly, what the departure's model
    gives (MX, NVFP4 without a per-tensor scale), or when it sits where the departure applies
    (NVFP4 with a per-tensor scale from a non-finite amax).

    >>> import numpy as np, exactref as er
    >>> x = np.zeros((1, 32), np.float32); x[0, 0] = 2.0**-120
    >>> scales = np.array([[2.0**-127]])                 # E8M0 0x00, by every rule
    >>> codes = np.zeros((1, 32)); codes[0, 0] = 64.0    # torchao: 2**-120 / 2**-126
    >>> cov = er.quantize(x, "mxfp8_e4m3").covers(codes, scales)   # the rule's code: 128
    >>> explain({"fmt": "mxfp8_e4m3", "scale_rule": "floor"}, x, codes, scales, cov.mask)
    {'mx_min_scale': 1, 'mx_inf_block': 0, 'unexplained': 0}
    >>> codes[0, 0] = 32.0                               # no departure gives this
    >>> cov = er.quantize(x, "mxfp8_e4m3").covers(codes, scales)
    >>> explain({"fmt": "mxfp8_e4m3", "scale_rule": "floor"}, x, codes, scales, cov.mask)
    {'mx_min_scale': 0, 'mx_inf_block': 0, 'unexplained': 1}
    """
    from ..quantize import BLOCK_FORMATS

    bf = BLOCK_FORMATS[params["fmt"]]
    x = np.asarray(x).astype(np.float64)
    rows, cols = x.shape
    nb = cols // bf.block
    blocks = x.reshape(rows, nb, bf.block)
    c = np.asarray(codes, dtype=np.float64).reshape(rows, nb, bf.block)
    s = np.asarray(scales, dtype=np.float64).reshape(rows, nb)
    bad = ~np.asarray(mask).reshape(rows, nb, bf.block)
    with np.errstate(invalid="ignore"):
        amax = np.max(np.abs(blocks), axis=-1)
    counts = {}
    if bf.family == "mx":
        for name, (where, k, divisor) in _mx_models(bf, params["scale_rule"], amax).items():
            hit = _matches(blocks, c, s, where, k, divisor, bf) & bad
            counts[name] = int(np.count_nonzero(hit))
            bad &= ~hit
    elif params.get("per_tensor_scale") and not np.all(np.isfinite(x)):
        counts["nvfp4_nonfinite_tensor"] = int(np.count_nonzero(bad))
        bad[...] = False
    else:
        hit = _nvfp4_min_scale(blocks, c, s, amax, params.get("per_tensor_scale"), x) & bad
        counts["nvfp4_min_scale"] = int(np.count_nonzero(hit))
        bad &= ~hit
    counts["unexplained"] = int(np.count_nonzero(bad))
    return counts


def _mx_models(bf, rule, amax) -> dict:
    """Per MX departure: ``(blocks where it applies, torchao's scale exponent there, the
    power of two its elements are divided by)``."""
    from ..quantize import mx_exponent

    k, nan = mx_exponent(np.where(np.isfinite(amax), amax, 0.0), rule, bf)
    tiny = np.isfinite(amax) & (amax > 0) & (k == -127)
    inf = np.isinf(amax)
    top = 127 if rule == "rceil" else 128 - bf.emax_elem
    out = {"mx_min_scale": (tiny, np.full(k.shape, -127), 0 if rule == "rceil" else -126),
           "mx_inf_block": (inf, np.full(k.shape, top), top)}
    if rule == "rceil":
        # amax / max_elem within 2**-17 above 2**(k-1): float32's log2 rounds to k - 1
        from ..quantize import element_max

        with np.errstate(invalid="ignore"):
            r = np.ldexp(np.where(np.isfinite(amax), amax, 0.0) / element_max(bf), 1 - k)
        near = np.isfinite(amax) & (k > -127) & (r > 1) & (r <= 1 + 2.0**-17)
        out["mx_rceil_log2"] = (near, k - 1, k - 1)
    return out


def _matches(blocks, c, s, where, k, divisor, bf) -> np.ndarray:
    """Elements of the blocks ``where`` whose scale is ``2**k`` and whose code is the element
    format's saturating rounding of ``x / 2**divisor`` (an infinity: the largest element)."""
    from .._array import round_to

    el = FORMATS[bf.element]
    finite = np.isfinite(blocks)
    d = np.broadcast_to(np.asarray(divisor), where.shape)[..., None]
    scaled = np.ldexp(np.where(finite, blocks, 0.0), -np.where(where[..., None], d, 0))
    model = round_to(scaled, el, overflow="saturate").array._wide().astype(np.float64)
    model = np.where(np.isinf(blocks), np.copysign(el.max_finite, blocks), model)
    with np.errstate(invalid="ignore"):
        same = (c == model) & ~((c == 0) & (np.signbit(c) != np.signbit(model)))
    scale_ok = (s == np.ldexp(1.0, np.where(where, k, 0)))[..., None]
    return where[..., None] & scale_ok & same


def _nvfp4_min_scale(blocks, c, s, amax, per_tensor, x) -> np.ndarray:
    """Elements of blocks whose scale torchao clamped up to 2**-6: the rule's (exact, within
    the float32 model's 2**-20) is below it, torchao's is 2**-6, and each code is torchao's
    float32 product ``x * (1 / (g * 2**-6))`` rounded once into E2M1 (nvfp4_quantize)."""
    from .._array import round_to

    f32 = np.float32
    g = f32(1.0)
    if per_tensor:
        with np.errstate(invalid="ignore"):
            g = f32(f32(np.max(np.abs(x.astype(f32)))) / f32(448 * 6))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = amax / (6 * np.float64(g))
        recip = f32(f32(1.0) / g) / f32(2.0**-6) if per_tensor else f32(64.0)
        prod = (blocks.astype(f32) * recip).astype(np.float64)
    clamped = (s == 2.0**-6) & (q < 2.0**-6 * (1 + 2.0**-20))
    model = round_to(np.where(np.isfinite(prod), prod, 0.0), FORMATS["float4_e2m1fn"],
                     overflow="saturate").array._wide().astype(np.float64)
    same = (c == model) & ~((c == 0) & (np.signbit(c) != np.signbit(model)))
    return clamped[..., None] & same


def _rules(fmt: str) -> tuple:
    """The scale rules torchao has for ``fmt``: ScaleCalculationMode's four for MX; NVFP4's
    scale is rounded to nearest (``.to(torch.float8_e4m3fn)``) only."""
    from ..quantize import BLOCK_FORMATS

    return ("nearest",) if fmt == "nvfp4" else BLOCK_FORMATS[fmt].rules


class _Cfg:
    """A view of an AuditConfig with one block format and rule (for ``_quantize.plan``)."""

    def __init__(self, cfg, fmt, rule):
        self.samples, self.block_format, self.scale_rule = cfg.samples, fmt, rule


def codes_of(data, fmt: str) -> np.ndarray:
    """torchao's element data as an array of the element format, read with ml_dtypes: FP8 as it is; FP6 one
    code per byte in its low bits; FP4 two codes per byte, the first in the low nibble
    (torchao's ``pack_uint4``)."""
    import torch

    from ..quantize import BLOCK_FORMATS

    el = FORMATS[BLOCK_FORMATS[fmt].element]
    if data.dtype != torch.uint8:  # FP8: exact in float32
        return data.to(torch.float32).numpy().astype(el.np_dtype)
    u = data.contiguous().numpy()
    if el.bits == 4:
        u = np.stack([u & 0x0F, u >> 4], axis=-1).reshape(*u.shape[:-1], -1)
    return u.view(el.np_dtype)


def e8m0_of(scales) -> np.ndarray:
    """E8M0 scales as float64: ``2**(b - 127)``, NaN for 0xFF."""
    import torch

    b = scales.view(torch.uint8).numpy().astype(np.int64)
    return np.where(b == 255, np.nan, np.ldexp(1.0, b - 127))
