"""An independent model of block-scaled quantization, written from the specifications' text with
Python integers and Fractions. It shares no code with ``exactref``: the element formats below
are written out from the OCP MX v1.0 specification's element tables and the OCP 8-bit
floating point specification, not read from ``exactref.FORMATS``.

OCP MX v1.0, section 6.3, "Conversion from vector of scalar floats" (also Algorithm 1 of
Rouhani et al. 2023, arXiv:2310.10537):

    shared_exp = floor(log2(max_i |V_i|)) - emax_elem
    X = 2 ** shared_exp
    P_i = quantize_to_element_format(V_i / X), clamping normal numbers

"normal numbers that exceed the representable range of the element format are clamped to the
maximum representable value, preserving the sign". E8M0 (section 5.4.1) holds 2**-127 ..
2**127 and NaN. The other rules follow torchao's ScaleCalculationMode docstrings (CEIL: X =
2**(ceil(log2(amax)) - emax); EVEN: X = 2**(floor(log2(round(amax))) - emax), amax rounded to
the element's mantissa bits; RCEIL: cuBLAS's X = 2**ceil(log2(amax / max_elem))). NVFP4:
NVIDIA's description (E2M1 elements, an E4M3 scale per 16, a float32 per-tensor scale
g = amax / (6 * 448), the block scale amax_b / 6 in units of g rounded to E4M3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

NAN = "nan"  # a NaN scale (E8M0 0xFF, E4M3 0x7F)


@dataclass(frozen=True)
class Elem:
    """A float element format: precision p (with the implicit bit), smallest normal exponent,
    largest value, whether it has -0 and NaN; or an integer grid (quantum, largest integer)."""

    p: int = 0
    emin: int = 0
    vmax: Fraction = Fraction(0)
    negzero: bool = True
    nan: bool = False
    int_quantum: Fraction | None = None
    int_max: int = 0


E4M3 = Elem(4, -6, Fraction(448), nan=True)           # S.1111.110 = 1.75 * 2**8
E5M2 = Elem(3, -14, Fraction(57344), nan=True)        # S.11110.11 = 1.75 * 2**15
E3M2 = Elem(3, -2, Fraction(28))                      # S.111.11 = 1.75 * 2**4
E2M3 = Elem(4, 0, Fraction(15, 2))                    # S.11.111 = 1.875 * 2**2
E2M1 = Elem(2, 0, Fraction(6))                        # S.11.1 = 1.5 * 2**2
INT8 = Elem(int_quantum=Fraction(1, 64), int_max=127, negzero=False)  # MXINT8, +-127/64
FLOAT32 = Elem(24, -126, Fraction(2**24 - 1, 2**23) * 2**127, nan=True)

#: name: (element, emax_elem, bits of precision in the element's top binade, block)
MX = {
    "mxfp8_e4m3": (E4M3, 8, 4),
    "mxfp8_e5m2": (E5M2, 15, 3),
    "mxfp6_e3m2": (E3M2, 4, 3),
    "mxfp6_e2m3": (E2M3, 2, 4),
    "mxfp4": (E2M1, 2, 2),
    "mxint8": (INT8, 0, 7),
}


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def ceil_log2(a: Fraction) -> int:
    e = floor_log2(a)
    return e if Fraction(2) ** e == a else e + 1


def _round_int(n: Fraction, negative: bool, mode: str) -> int:
    """|value| / quantum = n >= 0 rounded to an integer, for a value of the given sign."""
    f = math.floor(n)
    rem = n - f
    if rem == 0:
        return f
    up = {
        "nearest_even": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and f % 2 == 1),
        "nearest_away": rem >= Fraction(1, 2),
        "toward_zero": False,
        "toward_positive": not negative,
        "toward_negative": negative,
        "odd": f % 2 == 0,
    }[mode]
    return f + 1 if up else f


def round_elem(v: Fraction, fmt: Elem, mode: str) -> tuple[Fraction, bool]:
    """``(value, negative)``: v rounded once into ``fmt``, clamped to its largest value."""
    negative = v < 0
    a = abs(v)
    if fmt.int_quantum is not None:
        n = min(_round_int(a / fmt.int_quantum, negative, mode), fmt.int_max)
        return n * fmt.int_quantum, negative and n != 0
    if a == 0:
        return Fraction(0), negative
    e = max(floor_log2(a), fmt.emin)
    q = Fraction(2) ** (e - fmt.p + 1)
    r = min(_round_int(a / q, negative, mode) * q, fmt.vmax)
    return r, negative


def signed(value: Fraction, negative: bool) -> float:
    return -float(value) if negative else float(value)


def _nonfinite(x: float) -> bool:
    return math.isnan(x) or math.isinf(x)


def mx_scale_exponent(block: list[float], name: str, rule: str):
    """The shared exponent k (scale 2**k), or NAN."""
    elem, emax, p = MX[name]
    if any(_nonfinite(x) for x in block):
        return NAN
    amax = max((abs(Fraction(x)) for x in block), default=Fraction(0))
    if amax == 0:
        return -127  # log2(0) is -inf: the smallest scale, E8M0 0x00
    if rule == "floor":
        k = floor_log2(amax) - emax
    elif rule == "ceil":
        k = ceil_log2(amax) - emax
    elif rule == "even":
        e = floor_log2(amax)
        q = Fraction(2) ** (e - p + 1)
        n = amax / q
        rounded = (math.floor(n) + (1 if n - math.floor(n) >= Fraction(1, 2) else 0)) * q
        k = floor_log2(rounded) - emax
    elif rule == "rceil":
        vmax = elem.vmax if elem.int_quantum is None else elem.int_max * elem.int_quantum
        k = ceil_log2(amax / vmax)
    else:
        raise ValueError(rule)
    k = max(k, -127)
    return NAN if k > 127 else k


def mx_block(block: list[float], name: str, rule: str, mode: str):
    """``(scale, codes)``: scale a float (NaN) and codes as floats (None where any code is
    allowed: a NaN scale makes the whole block NaN, by the OCP MX v1.0 special-value rules)."""
    elem = MX[name][0]
    k = mx_scale_exponent(block, name, rule)
    if k == NAN:
        return math.nan, [None] * len(block)
    x_scale = Fraction(2) ** k
    codes = []
    for x in block:
        if x == 0:  # Fraction(-0.0) forgets the sign; the quotient keeps it
            codes.append(math.copysign(0.0, x) if elem.negzero else 0.0)
            continue
        value, neg = round_elem(Fraction(x) / x_scale, elem, mode)
        if elem.int_quantum is not None:
            codes.append(float(value / elem.int_quantum) * (-1 if neg else 1))
        else:
            codes.append(signed(value, neg))
    return float(x_scale), codes


def nvfp4_global(values: list[float]) -> float:
    """g = amax / (448 * 6) rounded to float32; 1 for a zero or non-finite amax (as
    Transformer Engine's encode scale); the smallest float32 if it underflows to zero."""
    if any(_nonfinite(x) for x in values):
        return 1.0
    amax = max((abs(Fraction(x)) for x in values), default=Fraction(0))
    if amax == 0:
        return 1.0
    g, _ = round_elem(amax / (448 * 6), FLOAT32, "nearest_even")
    return float(g) if g else 2.0**-149


def nvfp4_block(block: list[float], g: float, rule: str, mode: str):
    """``(scale, codes)`` of one NVFP4 block (codes None where any is allowed)."""
    if any(math.isnan(x) for x in block):
        return math.nan, [None] * len(block)
    gf = Fraction(g)
    if any(math.isinf(x) for x in block):
        s = Fraction(448)  # amax/6 past 448 saturates
    else:
        amax = max((abs(Fraction(x)) for x in block), default=Fraction(0))
        smode = "nearest_even" if rule == "nearest" else "toward_positive"
        s, _ = round_elem(amax / (6 * gf), E4M3, smode)
    if s == 0:
        return 0.0, [None] * len(block)  # the block is zero whatever its codes
    codes = []
    for x in block:
        if math.isinf(x) or x == 0:
            codes.append(math.copysign(6.0 if x else 0.0, x))
            continue
        value, neg = round_elem(Fraction(x) / (s * gf), E2M1, mode)
        codes.append(signed(value, neg))
    return float(s), codes


def grid(elem: Elem) -> list[Fraction]:
    """Every nonnegative value of an element format, ascending."""
    if elem.int_quantum is not None:
        return [k * elem.int_quantum for k in range(elem.int_max + 1)]
    out = {Fraction(0)}
    e = elem.emin
    while Fraction(2) ** e <= elem.vmax:
        q = Fraction(2) ** (e - elem.p + 1)
        lo = 0 if e == elem.emin else 2 ** (elem.p - 1)  # subnormals in the lowest binade
        out.update(m * q for m in range(lo, 2**elem.p) if m * q <= elem.vmax)
        e += 1
    return sorted(out)


def blocks_of(values: list[float], block: int) -> list[list[float]]:
    """Consecutive blocks; a last partial block is a block of its own."""
    return [values[i:i + block] for i in range(0, len(values), block)]
