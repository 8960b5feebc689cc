"""Block-scaled quantization, exact: the scale of each block from its largest magnitude, then
every element rounded once into the element format (see ``docs/block_formats.md``).

Every step is exact in float64 or through the exact engine:

* MX: ``amax`` of a block is one of its values; ``floor(log2(amax))`` comes from ``frexp``; the
  scale is a power of two ``2**k``, so ``x / 2**k`` is ``ldexp(x, -k)``, exact (a quotient
  below ``2**-1000`` is replaced by ``+-2**-1000``, which rounds as it does into every element
  format in every mode: both lie below half the smallest subnormal of the element format);
  ``round_to`` then rounds it once into the element format.
* NVFP4: the quotients ``amax_b / (6 g)`` and ``x / (s g)`` are not float64 numbers; the exact
  engine's ``quotient`` (what ``er.divide`` with ``dtype=`` computes) rounds each once from the
  exact value.
"""

from __future__ import annotations

import difflib
import numbers

import numpy as np

from .._array import Array, asarray, round_to
from .._exact import ExactPart, Rounding, quotient, resolve_rounding, round_float_to_integer, ulp
from .._formats import FORMATS
from .._result import Coverage
from ._table import BLOCK_FORMATS, SCALE_RULES, BlockFormat

__all__ = ["quantize", "dequantize", "Quantized", "QuantizedCoverage", "element_max",
           "expand_blocks", "mx_exponent"]

_E8M0_MIN, _E8M0_MAX = -127, 127  # OCP MX v1.0 section 5.4.1: E8M0 holds 2**-127 .. 2**127
_TINY = 2.0**-1000  # stands for any nonzero quotient below it (module docstring)
_NVFP4_GLOBAL = 448 * 6  # NVFP4's global scale: amax / (448 * 6) (torchao, Transformer Engine)
#: compute="float32": the relative error allowed to an implementation's quotients (16 float32
#: unit roundoffs: Transformer Engine's and torchao's NVFP4 paths take at most 8 roundings)
_EPS_LOG2 = -20


# ------------------------------------------------------------------------------- arguments
def _block_format(fmt) -> BlockFormat:
    if isinstance(fmt, BlockFormat):
        return fmt
    if isinstance(fmt, str) and fmt.strip().lower() in BLOCK_FORMATS:
        return BLOCK_FORMATS[fmt.strip().lower()]
    close = difflib.get_close_matches(str(fmt).lower(), list(BLOCK_FORMATS), n=3, cutoff=0.5)
    hint = f" (close matches: {', '.join(close)})" if close else ""
    raise ValueError(
        f"unknown block format {fmt!r}{hint}; expected one of {', '.join(BLOCK_FORMATS)} "
        f"(exactref.quantize.BLOCK_FORMATS)")


def _rules(bf: BlockFormat, scale_rule) -> tuple:
    if scale_rule is None:
        return bf.default_rules
    if isinstance(scale_rule, str):
        if scale_rule.strip().lower() == "any":
            return bf.rules
        names = [scale_rule]
    elif isinstance(scale_rule, (tuple, list)) and scale_rule:
        names = list(scale_rule)
    else:
        raise ValueError(
            f"scale_rule must be a rule name, a tuple of rule names or 'any'; got "
            f"{scale_rule!r}. {bf.name} takes {', '.join(map(repr, bf.rules))}")
    out = []
    for name in names:
        key = name.strip().lower() if isinstance(name, str) else name
        if key not in bf.rules:
            where = (f"; {key!r} is a rule of the {SCALE_RULES[key].family.upper()} formats"
                     if key in SCALE_RULES else "")
            raise ValueError(
                f"scale rule {name!r} does not apply to {bf.name}{where}; expected one of "
                f"{', '.join(map(repr, bf.rules))} or 'any' (every one of them)")
        if key not in out:
            out.append(key)
    return tuple(out)


def _values(x) -> np.ndarray:
    """The input as float64, exactly (or a clear error)."""
    arr = x if isinstance(x, Array) else asarray(getattr(x, "rounded", x))
    fmt = arr.dtype
    if fmt.kind == "complex":
        raise TypeError(
            f"quantize takes real values; got {fmt.name}. Quantize the real and imaginary "
            f"parts separately (numpy.real, numpy.imag)")
    wide = arr._wide()
    if fmt.is_integer:
        out = wide.astype(np.float64)
        if fmt.bits > 32 and not np.array_equal(out.astype(wide.dtype), wide):
            raise ValueError(
                f"quantize: some {fmt.name} values are not exact in float64 (beyond 2**53); "
                f"pass them as floats that hold them (numpy.float64) if rounding is meant")
        return out
    return np.asarray(wide, dtype=np.float64)


def _axis_block(shape, axis, block, bf) -> tuple[int, int]:
    if len(shape) == 0:
        raise ValueError(
            "quantize needs at least one dimension (blocks run along an axis); got a scalar. "
            "Pass a 1-element list, or numpy.atleast_1d(x)")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be an integer; got {axis!r}")
    if not -len(shape) <= axis < len(shape):
        raise ValueError(
            f"axis {axis} is out of range for an input of shape {tuple(shape)}; expected "
            f"{-len(shape)} <= axis < {len(shape)}")
    if block is None:
        block = bf.block
    if isinstance(block, bool) or not isinstance(block, numbers.Integral) or block < 1:
        raise ValueError(
            f"block must be a positive integer (elements per scale); got {block!r}. "
            f"{bf.name}'s own block is {bf.block}")
    return int(axis) % len(shape), int(block)


def _to_blocks(values: np.ndarray, axis: int, block: int) -> np.ndarray:
    """``(..., nblocks, block)``: ``axis`` moved last, the last partial block zero-padded."""
    v = np.moveaxis(values, axis, -1)
    n = v.shape[-1]
    nb = -(-n // block)
    if nb * block != n:
        pad = np.zeros(v.shape[:-1] + (nb * block - n,))
        v = np.concatenate([v, pad], axis=-1)
    return v.reshape(v.shape[:-1] + (nb, block))


def _from_blocks(blocks: np.ndarray, n: int, axis: int) -> np.ndarray:
    flat = blocks.reshape(blocks.shape[:-2] + (blocks.shape[-2] * blocks.shape[-1],))[..., :n]
    return np.moveaxis(flat, -1, axis)


def _block_amax(blocks: np.ndarray) -> np.ndarray:
    """The largest magnitude of each block; NaN where the block holds a NaN."""
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(blocks), axis=-1) if blocks.shape[-1] else np.zeros(
            blocks.shape[:-1])


# ------------------------------------------------------------------------------- MX scales
def element_max(bf: BlockFormat) -> float:
    """The largest element value (MXINT8: 127 * 2**-6, the symmetric clamp)."""
    if bf.int_scale:
        return 127 * 2.0**bf.int_scale
    return FORMATS[bf.element].max_finite


def mx_exponent(amax: np.ndarray, rule: str, bf: BlockFormat) -> tuple[np.ndarray, np.ndarray]:
    """``(k, nan)`` per block: the scale is ``2**k``, or NaN where ``nan``.

    ``k`` follows ``rule`` (``_table.SCALE_RULES``) from the block's ``amax``, then the limits
    of E8M0: below ``2**-127`` it is clamped to ``2**-127`` (all-zero blocks included), as
    torchao and microxcaling do; past ``2**127``, or for a NaN or infinite ``amax``, the
    scale is NaN (E8M0's 0xFF), as microxcaling ("Overflow to Inf") and torchao do.
    """
    finite = np.isfinite(amax)
    positive = finite & (amax > 0)
    safe = np.where(positive, amax, 1.0)
    m, e = np.frexp(safe)  # safe = m * 2**e, 0.5 <= m < 1
    fl = e.astype(np.int64) - 1  # floor(log2(amax)), exact (subnormals too)
    if rule == "floor":
        k = fl - bf.emax_elem
    elif rule == "ceil":
        k = fl + (m != 0.5) - bf.emax_elem
    elif rule == "even":
        # amax rounded to elem_precision bits, ties away, reaches 2**(fl+1) exactly when its
        # significand 2m is at least 2 - 2**-p (torchao adds 2**-p to the significand)
        k = fl + (2 * m >= 2 - 2.0**-bf.elem_precision) - bf.emax_elem
    elif rule == "rceil":
        k0 = fl - bf.emax_elem  # amax / 2**k0 lies in [2**emax, 2**(emax+1)): exact in float64
        k = k0 + (np.ldexp(safe, -k0) > element_max(bf))
    else:  # pragma: no cover - _rules validated the name
        raise AssertionError(rule)
    k = np.where(positive, np.maximum(k, _E8M0_MIN), _E8M0_MIN)
    nan = ~finite | (k > _E8M0_MAX)
    return k.astype(np.int64), nan


def _mx_rule(blocks, rule, bf, mode):
    """``(codes as float64 blocks, scales as float64)`` of one MX rule."""
    amax = _block_amax(blocks)
    k, nan = mx_exponent(amax, rule, bf)
    kk = np.where(nan, 0, k)[..., None]
    finite = np.isfinite(blocks)
    with np.errstate(invalid="ignore"):
        scaled = np.ldexp(np.where(finite, blocks, 0.0), -kk)
        _, ex = np.frexp(np.where(finite, blocks, 1.0))
    tiny = finite & (blocks != 0) & (ex - kk < -1000)
    scaled = np.where(tiny, np.copysign(_TINY, blocks), scaled)
    if bf.int_scale:
        # the engine's integer rounding (int64: no -0, as int8 has none); a NaN block's
        # elements are left out (their codes are the fill below)
        ints = np.where(nan[..., None], 0.0, np.ldexp(scaled, -bf.int_scale))
        codes = np.clip(round_float_to_integer(ints, mode)[0], -127, 127) + 0.0
    else:
        elem = FORMATS[bf.element]
        codes = round_to(scaled, elem, rounding=mode, overflow="saturate").array._wide()
    nan_b = np.broadcast_to(nan[..., None], codes.shape)
    fill = np.nan if (not bf.int_scale and FORMATS[bf.element].has_nan) else 0.0
    codes = np.where(nan_b, fill, codes)
    scales = np.where(nan, np.nan, np.ldexp(1.0, np.where(nan, 0, k)))
    return codes, scales


# ------------------------------------------------------------------------------- NVFP4
def _divide(n, d, fmt: str, mode: Rounding, *, slack: int = 0) -> np.ndarray:
    """``n * (1 + slack * EPS) / d`` (float64 arrays, finite, ``d > 0``; ``slack`` -1, 0 or 1)
    rounded once into ``fmt`` from the exact quotient, saturating: the exact engine's quotient,
    as ``er.divide(..., dtype=fmt)``."""
    n, d = np.broadcast_arrays(np.asarray(n, dtype=np.float64), np.asarray(d, dtype=np.float64))
    shape = n.shape
    flat = (n.size,)
    num = [(ExactPart.from_float64(n.reshape(-1)),)]
    if slack:  # n * EPS is exact (a power of two) but where n is within 2**20 of underflow
        num.append((ExactPart.from_float64(slack * np.ldexp(n.reshape(-1), _EPS_LOG2)),))
    ex = quotient(num, [(ExactPart.from_float64(d.reshape(-1)),)], flat)
    return np.asarray(ex.round(FORMATS[fmt], mode, "saturate")[0], dtype=np.float64).reshape(
        shape)


def _global_scale(values: np.ndarray, given) -> float:
    """NVFP4's float32 per-tensor decode scale ``g`` (value = code * scale * g)."""
    if given is not None:
        try:
            g = float(given)
        except (TypeError, ValueError):
            raise ValueError(f"global_scale must be a number; got {given!r}") from None
        if not (np.isfinite(g) and g > 0 and float(np.float32(g)) == g):
            raise ValueError(
                f"global_scale must be a positive finite float32 value (the per-tensor decode "
                f"scale: value = code * scale * global_scale); got {given!r}. Round it to "
                f"float32 first (numpy.float32(g)), or leave it None for amax / (448 * 6)")
        return g
    with np.errstate(invalid="ignore"):
        amax = float(np.max(np.abs(values))) if values.size else 0.0
    if amax == 0 or not np.isfinite(amax):
        return 1.0  # Transformer Engine: "If global amax is 0 or infinity, return 1"
    g = float(_divide(amax, float(_NVFP4_GLOBAL), "float32", Rounding.NEAREST_EVEN))
    return g if g > 0 else float(np.float32(2.0**-149))  # an amax below 2688 * 2**-150


def _nvfp4_rule(blocks, rule, g, mode):
    """``(codes, scales)`` of one NVFP4 rule, as float64."""
    amax = _block_amax(blocks)
    smode = Rounding.NEAREST_EVEN if rule == "nearest" else Rounding.TOWARD_POSITIVE
    nan, inf = np.isnan(amax), np.isinf(amax)
    safe = np.where(nan | inf, 0.0, amax)
    s = _divide(safe, 6 * g, "float8_e4m3fn", smode)
    s = np.where(inf, FORMATS["float8_e4m3fn"].max_finite, np.where(nan, np.nan, s))
    den = s * g  # exact: 4 bits times 24 bits
    usable = np.isfinite(den) & (den > 0)
    den_b = np.broadcast_to(np.where(usable, den, 1.0)[..., None], blocks.shape)
    finite = np.isfinite(blocks)
    codes = _divide(np.where(finite, blocks, 0.0), den_b, "float4_e2m1fn", mode)
    codes = np.where(np.isinf(blocks), np.copysign(6.0, blocks), codes)  # satfinite, as TE
    use_b = np.broadcast_to(usable[..., None], blocks.shape)
    zero = np.copysign(0.0, np.where(np.isnan(blocks), 1.0, blocks))
    nan_b = np.broadcast_to(np.isnan(s)[..., None], blocks.shape)
    codes = np.where(use_b, codes, np.where(nan_b, 0.0, zero))
    return codes, s


# ------------------------------------------------------------------------------- the result
class Quantized:
    """What :func:`quantize` returns: element codes and block scales, for one or more rules.

    ``codes``: an :class:`~exactref.Array` of the element format, of the input's shape (MXINT8:
    int8 integers worth ``code * 2**-6``). ``scales``: an Array of the scale format
    (float8_e8m0fnu for MX, float8_e4m3fn for NVFP4), of the input's shape with ``axis``
    holding one entry per block. ``global_scale``: NVFP4's float32 per-tensor scale (None for
    MX). ``codes``/``scales`` are those of the first declared rule; ``by_rule[name]`` gives each
    declared rule's ``(codes, scales)``. ``covers(codes, scales)`` accepts the output of any
    declared rule; ``covers(values)`` compares dequantized values.
    """

    __array_ufunc__ = None  # compared as an object, as Result

    def __init__(self, fmt, axis, block, rules, rounding, by_rule, global_scale, shape,
                 compute=None, values=None):
        self.format = fmt
        self.axis, self.block, self.rules, self.rounding = axis, block, rules, rounding
        self.by_rule = by_rule
        self.global_scale = global_scale
        self.shape = shape
        self.compute = compute  # None: exact quotients; "float32": within 2**-20 (NVFP4)
        self._values = values  # the input as float64 (compute="float32" reads it)

    @property
    def codes(self) -> Array:
        return self.by_rule[self.rules[0]][0]

    @property
    def scales(self) -> Array:
        return self.by_rule[self.rules[0]][1]

    @property
    def element_format(self):
        return FORMATS[self.format.element]

    def dequantize(self, rule=None) -> Array:
        """The values the codes and scales stand for (float64, exact), of ``rule`` (the first
        declared one by default)."""
        codes, scales = self.by_rule[rule or self.rules[0]]
        return _dequantize(codes._wide(), scales._wide(), self.format, self.axis, self.block,
                           self.global_scale)

    def tolerance(self) -> Array:
        """Per element, the largest distance between the dequantized values of the declared
        rules and of the first one (float64; 0 with one rule; NaN where a block's scale is NaN
        under some rule)."""
        ref = self.dequantize()._wide()
        worst = np.zeros_like(ref)
        for r in self.rules[1:]:
            with np.errstate(invalid="ignore"):
                worst = np.fmax(worst, np.abs(self.dequantize(r)._wide() - ref))
        nan = np.logical_or.reduce([np.isnan(self.dequantize(r)._wide()) for r in self.rules])
        return asarray(np.where(nan, np.nan, worst), "float64")

    def covers(self, codes, scales=None) -> QuantizedCoverage:
        """Per element of the input: could a quantizer following a declared rule have produced
        it?

        ``covers(codes, scales)``: the kernel's element codes (any array of the input's shape
        holding the element values; MXINT8: the integers) and block scales (the values, of the
        scales' shape). An element is covered when, for some declared rule, its block's scale is
        that rule's scale and its code that rule's code (equal values, NaN matching NaN, and
        the sign of a zero where the element format has -0). In a block whose scale is NaN
        (MX: a NaN, an infinity or a scale past ``2**127``) or zero (NVFP4), every code is
        accepted: the block's values are NaN, or zero, whatever the codes.

        ``covers(values)``: dequantized values (any float format). An element is covered when
        it equals, rounded to nearest into the format of ``values``, the dequantized value of a
        declared rule (NaN matching NaN). Weaker than the codes and scales: it cannot see two
        rules mixed within one block; and it compares with the exact rules only (``compute=
        "float32"`` widens the check of codes and scales, not this one).
        """
        rules = self.rules
        if scales is None:
            return self._covers_values(codes)
        ca = _actual(codes, self.shape, "codes", self.element_format)
        sa = _actual(scales, self.scales.shape, "scales", FORMATS[self.format.scale])
        sa_e = expand_blocks(sa, self.shape, self.axis, self.block)
        if self.compute is not None:
            return self._covers_float32(ca, sa, sa_e)
        mask = np.zeros(self.shape, dtype=bool)
        dist = np.full(self.shape, np.inf)
        elem = self.element_format
        for r in rules:
            c, s = (a._wide().astype(np.float64) for a in self.by_rule[r])
            s_e = expand_blocks(s, self.shape, self.axis, self.block)
            with np.errstate(invalid="ignore"):
                smatch = (sa_e == s_e) | (np.isnan(sa_e) & np.isnan(s_e))
                free = np.isnan(s_e) | (s_e == 0)
                cmatch = (ca == c) | (np.isnan(ca) & np.isnan(c))
                if elem.has_negzero:
                    cmatch &= ~((ca == 0) & (c == 0) & (np.signbit(ca) != np.signbit(c)))
                ok = smatch & (free | cmatch)
                gap = np.where(np.isfinite(ca) & np.isfinite(c),
                               np.abs(ca - c) / _elem_ulp(c, self.format), np.inf)
            mask |= ok
            dist = np.where(smatch, np.fmin(dist, np.where(ok, 0.0, gap)), dist)
        dist = np.where(mask, 0.0, np.where(dist == 0, np.inf, dist))  # a zero's wrong sign
        return QuantizedCoverage(self, mask, dist, ca, sa_e, elem)

    def _covers_float32(self, ca, sa, sa_e) -> QuantizedCoverage:
        """NVFP4 computed in float32: the block scale may be the rounding, by a declared rule,
        of any value within a relative 2**-20 of ``amax_b / (6 g)``; given the scale the kernel
        chose, each code the rounding of any value within 2**-20 of ``x / (s g)``."""
        g = self.global_scale
        blocks = _to_blocks(self._values, self.axis, self.block)
        amax = _block_amax(blocks)
        nan, inf = np.isnan(amax), np.isinf(amax)
        safe = np.where(nan | inf, 0.0, amax)
        s_act = np.moveaxis(sa, self.axis, -1)
        smatch = np.zeros(amax.shape, dtype=bool)
        for r in self.rules:
            smode = Rounding.NEAREST_EVEN if r == "nearest" else Rounding.TOWARD_POSITIVE
            lo = _divide(safe, 6 * g, "float8_e4m3fn", smode, slack=-1)
            hi = _divide(safe, 6 * g, "float8_e4m3fn", smode, slack=1)
            with np.errstate(invalid="ignore"):
                ok = (s_act >= lo) & (s_act <= hi)
            smatch |= np.where(nan, np.isnan(s_act), np.where(inf, s_act == 448, ok))
        den = s_act * g
        usable = smatch & np.isfinite(den) & (den > 0)
        den_b = np.broadcast_to(np.where(usable, den, 1.0)[..., None], blocks.shape)
        x = np.where(np.isfinite(blocks), blocks, 0.0)
        ends = [_divide(x, den_b, "float4_e2m1fn", self.rounding, slack=k) for k in (-1, 1)]
        lo, hi = np.fmin(*ends), np.fmax(*ends)
        n = self.shape[self.axis]
        lo, hi = (_from_blocks(v, n, self.axis) for v in (lo, hi))
        xs = self._values
        with np.errstate(invalid="ignore"):
            cok = (ca >= lo) & (ca <= hi)
            both_zero = (lo == 0) & (hi == 0) & (ca == 0)
            sign = np.signbit(_from_blocks(ends[0], n, self.axis))
            cok &= ~(both_zero & (np.signbit(ca) != sign))
            cok = np.where(np.isinf(xs), ca == np.copysign(6.0, xs), cok)
            gap = np.fmax(lo - ca, ca - hi) / _elem_ulp(lo, self.format)
        use_e = _from_blocks(np.broadcast_to(usable[..., None], blocks.shape), n, self.axis)
        match_e = _from_blocks(np.broadcast_to(smatch[..., None], blocks.shape), n, self.axis)
        mask = match_e & (~use_e | cok)  # a zero or NaN scale: any code
        dist = np.where(mask, 0.0, np.where(match_e & np.isfinite(gap) & (gap > 0), gap,
                                            np.inf))
        return QuantizedCoverage(self, mask, dist, ca, sa_e, self.element_format)

    def _covers_values(self, values) -> QuantizedCoverage:
        arr = values if isinstance(values, Array) else asarray(getattr(values, "rounded",
                                                                       values))
        if tuple(arr.shape) != tuple(self.shape):
            raise ValueError(
                f"the dequantized values have shape {tuple(arr.shape)}, the input "
                f"{tuple(self.shape)}; they must be equal. To check codes and scales, call "
                f"covers(codes, scales)")
        fmt = arr.dtype if arr.dtype.kind == "float" else FORMATS["float64"]
        a = arr._wide().astype(np.float64)
        mask = np.zeros(self.shape, dtype=bool)
        for r in self.rules:
            ref = asarray(self.dequantize(r), fmt)._wide()
            mask |= (a == ref) | (np.isnan(a) & np.isnan(ref))
        ref0 = asarray(self.dequantize(), fmt)._wide()
        with np.errstate(invalid="ignore", over="ignore"):
            mag = np.maximum(np.abs(np.where(np.isfinite(ref0), ref0, 0.0)), fmt.smallest_normal)
            ulp = np.exp2(np.floor(np.log2(mag)) - fmt.precision + 1)
            gap = np.abs(a - ref0) / ulp
            dist = np.where(mask, 0.0, np.where(np.isfinite(gap), gap, np.inf))
        return QuantizedCoverage(self, mask, dist, a, None, fmt, values_mode=True, ref=ref0)

    def __repr__(self) -> str:
        rules = ", ".join(self.rules)
        g = f", global_scale={self.global_scale!r}" if self.global_scale is not None else ""
        return (f"Quantized({self.format.name}, shape={tuple(self.shape)}, axis={self.axis}, "
                f"block={self.block}, scale_rule=({rules}){g})")


def _elem_ulp(c, bf: BlockFormat):
    """The ulp of the element format at the codes ``c`` (1 for MXINT8's integers; the
    smallest spacing at a non-finite code)."""
    return ulp(c, FORMATS[bf.element], nonfinite="min")


def _actual(data, shape, what, fmt) -> np.ndarray:
    arr = data if isinstance(data, Array) else asarray(getattr(data, "rounded", data))
    if arr.dtype.kind == "complex":
        raise TypeError(f"the actual {what} are complex; {what} are real")
    if arr.dtype.name == "uint8" and not fmt.is_integer:
        # Note: bytes would be compared as numbers (E8M0's 127 is 1.0): a silent failure
        raise ValueError(
            f"the actual {what} are uint8; covers compares values, so {fmt.name} {what} given "
            f"as their bytes would all differ. View the bytes as {fmt.name} (torch: "
            f"t.view(torch.{fmt.torch_name or fmt.name}); numpy: a.view(ml_dtypes.{fmt.name}); "
            f"packed float4 pairs: unpack them first)")
    if tuple(arr.shape) != tuple(shape):
        raise ValueError(
            f"the actual {what} have shape {tuple(arr.shape)}, the reference's {tuple(shape)}; "
            f"they must be equal (scales: one per block along the axis)")
    return arr._wide().astype(np.float64)


def expand_blocks(scales, shape, axis, block) -> np.ndarray:
    """Per-block values repeated over their elements: the input's ``shape``."""
    rep = np.repeat(np.moveaxis(scales, axis, -1), block, axis=-1)
    rep = rep[..., : shape[axis]]
    return np.moveaxis(rep, -1, axis)


def _dequantize(codes, scales, bf, axis, block, g) -> Array:
    c = np.asarray(codes, dtype=np.float64)
    if bf.int_scale:
        c = np.ldexp(c, bf.int_scale)
    s = expand_blocks(np.asarray(scales, dtype=np.float64), c.shape, axis, block)
    with np.errstate(invalid="ignore"):
        out = c * s  # exact: at most 4 significant bits times a power of two or 4 bits
        if g is not None:
            out = out * g  # exact: at most 8 bits times 24 bits
        out = np.where(np.isnan(s), np.nan, out)
    return asarray(out, "float64")


class QuantizedCoverage(Coverage):
    """Per-element answer of :meth:`Quantized.covers`, with a summary that names the rules."""

    def __init__(self, reference, mask, dist, actual, scales, fmt, values_mode=False, ref=None):
        if ref is None:  # codes: the first rule's
            ref = reference.codes._wide().astype(np.float64)
        super().__init__(mask, dist, actual, ref, ref, fmt)
        self.reference = reference
        self._scales = scales
        self._values_mode = values_mode

    def summary(self) -> str:
        q = self.reference
        n = self.mask.size
        rules = ", ".join(map(repr, q.rules))
        if self.uncovered == 0:
            return f"all {n} elements covered by {q.format.name} under scale rule(s) {rules}"
        i = self.worst_index
        if self._values_mode:
            want = [float(q.dequantize(r)._wide()[i]) for r in q.rules]
            return (f"{self.uncovered} of {n} elements not covered; first worst at index {i}: "
                    f"value {float(self._actual[i])!r}, the rules give "
                    f"{', '.join(map(repr, want))} ({rules})")
        parts = []
        for r in q.rules:
            c, s = q.by_rule[r]
            s_e = expand_blocks(s._wide().astype(np.float64), q.shape, q.axis, q.block)
            parts.append(f"{r!r}: code {float(c._wide()[i])!r} with scale {float(s_e[i])!r}")
        return (f"{self.uncovered} of {n} elements not covered; worst at index {i}: code "
                f"{float(self._actual[i])!r} with block scale {float(self._scales[i])!r}; "
                f"{'; '.join(parts)}")


# ------------------------------------------------------------------------------- entry points
def quantize(x, fmt, axis=-1, block=None, scale_rule=None, rounding="nearest_even", *,
             global_scale=None, compute=None, dtype=None, policy=None,
             overflow=None) -> Quantized:
    """Quantize ``x`` into a block-scaled format, exactly: each block's scale from its largest
    magnitude by ``scale_rule``, each element rounded once into the element format.

    ``fmt``: ``"mxfp8_e4m3"``, ``"mxfp8_e5m2"``, ``"mxfp6_e3m2"``, ``"mxfp6_e2m3"``,
    ``"mxfp4"``, ``"mxint8"`` (OCP MX v1.0: an E8M0 scale per 32 elements) or ``"nvfp4"``
    (NVIDIA: an E4M3 scale per 16 E2M1 elements, and a float32 per-tensor ``global_scale``,
    by default ``amax / (448 * 6)`` rounded to float32). ``axis``: the axis the blocks run
    along. ``block``: elements per scale (the format's own by default); a last partial block
    is a block of its own (the same as padding it with zeros, as microxcaling does).
    ``scale_rule``: one rule, a tuple of rules, or ``"any"`` (every rule of the format):
    MX ``"floor"`` (the spec's), ``"ceil"``, ``"even"``, ``"rceil"`` (NVIDIA's); NVFP4
    ``"nearest"`` or ``"up"`` (``exactref.quantize.SCALE_RULES`` gives each formula and
    source). The default, None, is every rule mainstream quantizers use: MX ``("floor",
    "rceil")`` (the reference ``codes``/``scales`` are floor's), NVFP4 ``"nearest"``; one
    rule narrows the check to it. ``rounding``: the elements' rounding mode (values past the largest element
    saturate, as the spec's "clamping normal numbers"). ``compute="float32"`` (NVFP4) makes
    ``covers`` accept implementations that form the quotients ``amax_b / (6 g)`` and
    ``x / (s g)`` with float32 arithmetic (Transformer Engine, torchao): each may be off by a
    relative 2**-20 before its rounding into E4M3 or E2M1; the reference values stay exact.

    The keywords every op takes: ``overflow`` is ``"saturate"`` (the default and the only
    rule: elements past the largest one clamp, as the spec's "clamping normal numbers");
    ``dtype`` and ``policy`` are refused by name, since the block format fixes the codes' and
    the scales' formats and nothing is promoted (:func:`dequantize` gives the values).

    >>> import exactref as er
    >>> q = er.quantize([1.0, -3.0, 0.2, 7.0], "mxfp4", block=4)
    >>> q.scales.tolist(), q.codes.tolist()    # 2**(floor(log2 7) - 2) = 1; 7 saturates to 6
    ([1.0], [1.0, -3.0, 0.0, 6.0])
    >>> q = er.quantize([1.0, -3.0, 0.2, 7.0], "mxfp4", block=4, scale_rule="rceil")
    >>> q.scales.tolist(), q.codes.tolist()    # 7 / 2 <= 6: no element saturates (3.5 ties to 4)
    ([2.0], [0.5, -1.5, 0.0, 4.0])
    """
    bf = _block_format(fmt)
    _common_keywords(bf, dtype, policy, overflow)
    rules = _rules(bf, scale_rule)
    mode = resolve_rounding(rounding)
    values = _values(x)
    axis, block = _axis_block(values.shape, axis, block, bf)
    if bf.family != "nvfp4" and global_scale is not None:
        raise ValueError(
            f"global_scale applies to nvfp4 only; {bf.name}'s scales are E8M0 powers of two. "
            f"Leave it None")
    if compute is not None:
        if bf.family != "nvfp4":
            raise ValueError(
                f"compute applies to nvfp4 only; {bf.name} divides by powers of two, which is "
                f"exact in any float format. Leave it None")
        if str(compute).strip().lower() not in ("float32", "f32", "fp32"):
            raise ValueError(
                f"compute must be None (exact quotients) or 'float32' (quotients formed in "
                f"float32, within 2**-20); got {compute!r}")
        compute = "float32"
    blocks = _to_blocks(values, axis, block)
    n = values.shape[axis]
    g = _global_scale(values, global_scale) if bf.family == "nvfp4" else None
    by_rule = {}
    elem, sfmt = FORMATS[bf.element], FORMATS[bf.scale]
    for r in rules:
        if bf.family == "nvfp4":
            codes, scales = _nvfp4_rule(blocks, r, g, mode)
        else:
            codes, scales = _mx_rule(blocks, r, bf, mode)
        codes = _from_blocks(codes, n, axis)
        scales = np.moveaxis(scales, -1, axis)
        cdata = codes.astype(np.int8) if elem.is_integer else codes
        by_rule[r] = (asarray(cdata, elem), asarray(scales, sfmt))
    return Quantized(bf, axis, block, rules, mode, by_rule, g, values.shape, compute,
                     values if compute else None)


def _common_keywords(bf: BlockFormat, dtype, policy, overflow) -> None:
    """quantize's answer to the keywords every op takes: overflow="saturate" (or None) is its
    rule; a dtype or a policy is refused by name."""
    if dtype is not None:
        raise ValueError(
            f"quantize: dtype={dtype!r} does not apply: {bf.name} fixes the formats (codes in "
            f"{bf.element}, scales in {bf.scale}); pass another block format as fmt, or take "
            f"the values with er.dequantize(q) (float64, exact) and convert them")
    if policy is not None:
        raise ValueError(
            f"quantize: policy={policy!r} does not apply: nothing is promoted (the block "
            f"format fixes the codes' and scales' formats); leave policy out")
    if overflow is not None and str(overflow).strip().lower() != "saturate":
        raise ValueError(
            f"quantize: overflow={overflow!r}; block-scaled elements saturate (the OCP MX "
            f"spec's clamping, NVFP4's satfinite): pass overflow='saturate' or leave it out")


def dequantize(q, scales=None, fmt=None, *, axis=-1, block=None, global_scale=None) -> Array:
    """The values a block-scaled tensor stands for, exactly, as a float64 Array.

    ``dequantize(q)`` for what :func:`quantize` returned; or ``dequantize(codes, scales, fmt,
    axis=, block=, global_scale=)`` for a kernel's own codes and scales (NVFP4: ``global_scale``
    is the float32 per-tensor decode scale, 1 if omitted). A block whose scale is NaN is NaN.

    >>> import exactref as er
    >>> er.dequantize(er.quantize([0.1, 1.0, 2.5, -6.5], "mxfp6_e2m3", block=4)).tolist()
    [0.125, 1.0, 2.5, -6.5]
    """
    if isinstance(q, Quantized):
        if scales is not None or fmt is not None:
            raise ValueError("dequantize(q) takes a Quantized alone; pass codes, scales and fmt "
                             "to dequantize a kernel's own output")
        return q.dequantize()
    if scales is None or fmt is None:
        raise ValueError(
            "dequantize needs a Quantized (what er.quantize returns), or codes, scales and the "
            "block format: dequantize(codes, scales, 'mxfp8_e4m3', axis=-1)")
    bf = _block_format(fmt)
    codes = _values(q)
    axis, block = _axis_block(codes.shape, axis, block, bf)
    s = _values(scales)
    want = list(codes.shape)
    want[axis] = -(-codes.shape[axis] // block)
    if list(s.shape) != want:
        raise ValueError(
            f"scales have shape {s.shape}; codes of shape {codes.shape} in blocks of {block} "
            f"along axis {axis} need {tuple(want)}")
    g = None
    if bf.family == "nvfp4":
        g = 1.0 if global_scale is None else _global_scale(codes, global_scale)
    elif global_scale is not None:
        raise ValueError(f"global_scale applies to nvfp4 only, not {bf.name}")
    return _dequantize(codes, s, bf, axis, block, g)
