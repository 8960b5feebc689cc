"""Every number format exactref serves, as one data table.

A :class:`Format` describes a format completely enough to round into it: kind, width, precision,
exponent range, which special values it encodes and what an overflow becomes by default. The
table :data:`FORMATS` is data; the code below only folds it (aliases, lookups, repr).

Constants are exact hex floats with the decimal beside them, so they can be checked bit by bit;
``tests/test_formats.py`` checks every row against ``ml_dtypes.finfo`` / ``numpy.finfo``, and
``tests/test_formats_p3109.py`` the P3109 rows against the report's decoding and gfloat's.

>>> import exactref as er
>>> er.dtype("bf16")
exactref.bfloat16
>>> er.dtype("ACL_FLOAT16").name
'float16'
>>> f = er.dtype("float8_e4m3fn")
>>> (f.precision, f.emin, f.emax, f.max_finite, f.has_inf, f.default_overflow)
(4, -6, 8, 448.0, False, 'ieee')

The IEEE P3109 formats (``binary8p1se`` ... ``binary8p8uf``; see ``docs/p3109.md``) have no
numpy dtype: their arrays hold float64 values (every one exact there) and
:meth:`Format.encode` / :meth:`Format.decode` convert to and from the 8-bit codes.

>>> g = er.dtype("binary8p4se")
>>> (g.precision, g.emin, g.emax, g.max_finite, g.has_negzero, g.encoding)
(4, -7, 7, 224.0, False, 'p3109')
>>> g.encode([2.0, float("inf"), float("nan"), -1.0]).tolist()  # the report's 2.0 is 0x48
[72, 127, 128, 192]
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import ml_dtypes
import numpy as np

__all__ = ["Format", "FORMATS", "dtype", "FormatSpec", "holds"]

#: Kinds, in promotion order of categories.
KINDS = ("bool", "uint", "int", "float", "complex")


@dataclass(frozen=True, eq=False)
class Format:
    """One number format. Compare formats with ``is`` or ``==`` (identity: one object per format).

    Floating-point fields (``precision`` counts the implicit bit; a normal value is
    ``1.f * 2**e`` with ``emin <= e <= emax``):

    ``has_inf``, ``has_nan``, ``has_negzero``, ``has_zero`` and ``signed`` say which values the
    encoding holds; ``default_overflow`` is what a finite result past ``max_finite`` becomes when
    the caller names no rule: ``"ieee"`` (IEEE 754's answer for the rounding mode; NaN where
    IEEE 754 gives an infinity the format lacks), ``"nan"`` or ``"saturate"``. Integer formats
    carry ``int_min``/``int_max`` and overflow ``"wrap"`` by default. Complex formats name their
    ``component`` format.

    ``encoding``: ``"native"`` where ``np_dtype`` is the format's own numpy/ml_dtypes dtype (its
    bits are the encoding); ``"p3109"`` for the IEEE P3109 formats, which no numpy dtype has:
    their arrays hold float64 values (``np_dtype`` is float64, every value exact there), the
    8-bit codes follow the report's Encode/Decode (:meth:`encode`, :meth:`decode`), and they are
    never looked up by numpy dtype. ``parity``: what "even" means to ties-to-even and to
    round-to-odd: ``"significand"`` (IEEE 754; with one bit of precision, float8_e8m0fnu, ties go
    away from zero as ml_dtypes' casts do) or ``"code"`` (P3109's CodeIsEven: the parity of the
    code, which with one bit of precision is the biased exponent's; round-to-odd then overflows
    to an infinity whose code is odd). ``inf_stand_in``: what stands in, under overflow
    ``"ieee"``, for an infinity the format lacks: ``"nan"`` (ml_dtypes' casts) or ``"max"``
    (the largest finite value, as P3109's SatNone in its finite formats).
    """

    name: str
    kind: str
    bits: int
    np_dtype: np.dtype = field(repr=False)
    precision: int = 0
    emin: int = 0
    emax: int = 0
    max_finite_hex: str = ""
    has_inf: bool = False
    has_nan: bool = False
    has_negzero: bool = False
    has_zero: bool = True
    signed: bool = True
    default_overflow: str = "wrap"
    int_min: int = 0
    int_max: int = 0
    component_name: str = ""
    aliases: tuple = ()
    torch_name: str | None = None
    acl_name: str | None = None
    note: str = ""
    encoding: str = "native"
    parity: str = "significand"
    inf_stand_in: str = "nan"

    # ----------------------------------------------------------------- derived values
    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def is_integer(self) -> bool:
        """True for bool, signed and unsigned integer formats."""
        return self.kind in ("bool", "int", "uint")

    @property
    def component(self) -> Format:
        """The format of each part of a complex format (the format itself otherwise)."""
        return FORMATS[self.component_name] if self.kind == "complex" else self

    @property
    def max_finite(self) -> float:
        """The largest finite value (for integer formats, ``int_max``)."""
        if self.kind == "float":
            return float.fromhex(self.max_finite_hex)
        if self.kind == "complex":
            return self.component.max_finite
        return self.int_max

    @property
    def smallest_normal(self) -> float:
        """The smallest positive normal value (1 for integer formats)."""
        if self.kind == "complex":
            return self.component.smallest_normal
        return float(2.0**self.emin) if self.kind == "float" else 1.0

    @property
    def smallest_subnormal(self) -> float:
        """The smallest positive value (equal to ``smallest_normal`` without subnormals; 1 for
        integer formats)."""
        if self.kind == "complex":
            return self.component.smallest_subnormal
        return float(2.0 ** (self.emin - self.precision + 1)) if self.kind == "float" else 1.0

    @property
    def max_mantissa(self) -> int:
        """The integer significand of ``max_finite`` at quantum ``2**(emax - precision + 1)``."""
        return int(Fraction(self.max_finite) / Fraction(2) ** (self.emax - self.precision + 1))

    @property
    def itemsize(self) -> int:
        """Bytes per element of the numpy array holding the values (8 for the P3109 formats,
        held as float64; their codes take one byte each)."""
        return self.np_dtype.itemsize

    @property
    def odd_overflow_infinite(self) -> bool:
        """Whether round-to-odd sends an overflow to the infinity (else the largest finite value):
        only where the code of +inf is odd (P3109's signed extended formats, +inf 0x7F; IEEE
        formats have an even +inf code and an odd largest finite one)."""
        return self.parity == "code" and self.has_inf and self.signed

    # ----------------------------------------------------------------- codes
    @cached_property
    def _codes(self):
        """``(value per code, sorted non-NaN values, their codes, the NaN code)`` of a P3109
        format, decoded as the report's 4.7.2 says."""
        K, P, B = self.bits, self.precision, 1 - self.emin
        n = 1 << K
        vals = np.empty(n)
        for x in range(n):
            vals[x] = _p3109_decode(x, K, P, B, self.signed, self.has_inf)
        keep = np.flatnonzero(~np.isnan(vals))
        order = keep[np.argsort(vals[keep], kind="stable")]
        nan_code = (1 << (K - 1)) if self.signed else n - 1
        return vals, vals[order], order.astype(np.uint16), nan_code

    def decode(self, codes) -> np.ndarray:
        """The float64 values of integer codes (a float format's bit patterns).

        >>> FORMATS["binary8p3se"].decode([0x00, 0x01, 0x7E, 0x7F, 0x80, 0xFF]).tolist()
        [0.0, 7.62939453125e-06, 49152.0, inf, nan, -inf]
        """
        self._need_float("decode")
        c = np.asarray(codes)
        if c.dtype.kind not in "iu" or (c.size and (c.min() < 0 or c.max() >= (1 << self.bits))):
            raise ValueError(f"{self.name} codes are integers from 0 to {(1 << self.bits) - 1}; "
                             f"got {c.dtype} values {c.reshape(-1)[:4].tolist()}...")
        if self.encoding == "p3109":
            return self._codes[0][c.astype(np.int64)]
        raw = c.astype(_UINTS[self.itemsize])
        with np.errstate(invalid="ignore"):
            return raw.view(self.np_dtype).astype(np.float64)

    def encode(self, values) -> np.ndarray:
        """The codes (unsigned integers of the format's width, uint8 for 8 bits or fewer) of
        values the format holds (NaN to the format's NaN code, -0 to 0 where there is no -0).

        Raises ValueError for a value the format does not hold: round first
        (``er.asarray(x, fmt)``).
        """
        self._need_float("encode")
        x = np.asarray(values, dtype=np.float64)
        nan = np.isnan(x)
        if self.encoding == "p3109":
            _, svals, scodes, nan_code = self._codes
            i = np.minimum(np.searchsorted(svals, x), svals.size - 1)
            ok = (svals[i] == x) | nan
            codes = np.where(nan, nan_code, scodes[i])
        else:
            with np.errstate(invalid="ignore", over="ignore"):
                stored = x.astype(self.np_dtype)
                back = stored.astype(np.float64)
            ok = (back == x) | (nan & self.has_nan)
            if not self.has_negzero:
                stored = np.where(x == 0, np.zeros((), self.np_dtype), stored)
            codes = np.asarray(stored).view(_UINTS[self.itemsize]) & ((1 << self.bits) - 1)
        if not np.all(ok):
            bad = float(x.reshape(-1)[np.flatnonzero(~np.asarray(ok).reshape(-1))[0]])
            raise ValueError(
                f"{bad!r} is not a value of {self.name}; round it into the format first "
                f"(er.asarray(values, {self.name!r}))")
        return np.asarray(codes).astype(np.uint8 if self.bits <= 8 else _UINTS[self.itemsize])

    def _need_float(self, what):
        if self.kind != "float":
            raise ValueError(f"{what} takes float formats (bit codes of values); {self.name} is "
                             f"a {self.kind} format")

    def __repr__(self) -> str:
        return f"exactref.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (dtype, (self.name,))


def _float(name, bits, dt, p, emin, emax, max_hex, inf, nan, negzero, overflow, *, zero=True,
           signed=True, aliases=(), torch=None, acl=None, note=""):
    return Format(name, "float", bits, np.dtype(dt), p, emin, emax, max_hex, inf, nan, negzero,
                  zero, signed, overflow, aliases=aliases, torch_name=torch, acl_name=acl,
                  note=note)


def _p3109_decode(x: int, K: int, P: int, B: int, signed: bool, extended: bool) -> float:
    """The value of code ``x`` in a P3109 format (interim report v4.0, 4.7.2 DecodeAux)."""
    if signed:
        if x == 1 << (K - 1):
            return float("nan")
        if extended and x == (1 << (K - 1)) - 1:
            return float("inf")
        if extended and x == (1 << K) - 1:
            return float("-inf")
        if x > 1 << (K - 1):
            return -_p3109_decode(x - (1 << (K - 1)), K, P, B, signed, extended)
    else:
        if x == (1 << K) - 1:
            return float("nan")
        if extended and x == (1 << K) - 2:
            return float("inf")
    t, eb = x % (1 << (P - 1)), x >> (P - 1)
    if eb == 0:  # subnormal and zero
        return float(Fraction(t, 1 << (P - 1)) * Fraction(2) ** (1 - B))
    return float((1 + Fraction(t, 1 << (P - 1))) * Fraction(2) ** (eb - B))


def _p3109(name, p, emin, emax, max_hex):
    """A P3109 8-bit format: name ``binary8p{P}{s|u}{e|f}``, bias ``1 - emin``."""
    signed, extended = name[-2] == "s", name[-1] == "e"
    aliases = ("p3109_k8" + name[len("binary8"):],) + ((name[:-2],) if name[-2:] == "se" else ())
    note = "" if name != "binary8p1se" else _P3109_NOTE
    return Format(name, "float", 8, np.dtype(np.float64), p, emin, emax, max_hex, extended, True,
                  False, True, signed, "ieee", aliases=aliases, note=note, encoding="p3109",
                  parity="code", inf_stand_in="nan" if extended else "max")


def _p3109_formats(K):
    """The P3109 ``K``-bit formats ``binary{K}p{P}{s|u}{e|f}``, signed (P from 1 to K - 1) then
    unsigned (P from 1 to K), each extended then finite, from the interim report v4.0, 3.1: bias
    ``2**(K-P-1)`` signed, ``2**(K-P)`` unsigned; ``emin = 1 - bias``; the largest finite value
    is the code below the infinities (extended) and NaN (0x7F signed, 0xFE unsigned, one less
    where extended)."""
    out = []
    for signed in (True, False):
        for p in range(1, K if signed else K + 1):
            for extended in (True, False):
                bias = 2 ** (K - p - signed)
                top = ((1 << (K - 1)) - 1 if signed else (1 << K) - 2) - extended
                mant, exp = _p3109_decode(top, K, p, bias, signed, extended).hex().split("p")
                name = f"binary{K}p{p}{'s' if signed else 'u'}{'e' if extended else 'f'}"
                out.append(_p3109(name, p, 1 - bias, (top >> (p - 1)) - bias,
                                  f"{mant.rstrip('0').rstrip('.')}p{exp}"))
    return out


_P3109_NOTE = ("binary8p*: IEEE P3109 (interim report v4.0); no numpy dtype: arrays hold float64 "
               "values, Array.codes() gives the 8-bit codes; no -0, NaN is 0x80 (signed) or 0xFF "
               "(unsigned); overflow 'ieee' is P3109's SatNone, 'saturate' its SatPropagate "
               "(docs/p3109.md)")


def _int(name, bits, dt, signed, aliases=(), torch=None, acl=None):
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return Format(name, "uint" if not signed else "int", bits, np.dtype(dt), signed=signed,
                  default_overflow="wrap", int_min=lo, int_max=hi, aliases=aliases,
                  torch_name=torch, acl_name=acl)


def _complex(name, bits, dt, part, aliases=(), torch=None, acl=None):
    return Format(name, "complex", bits, np.dtype(dt), component_name=part, aliases=aliases,
                  torch_name=torch, acl_name=acl, default_overflow="")


_NAN_OVERFLOW = ("no infinity: an overflow that IEEE 754 sends to infinity gives NaN, as ml_dtypes' "
                 "casts do, and the largest finite value in the other directions (torch "
                 "saturates: ask for 'saturate')")

# fmt: off
_TABLE = [
    Format("bool", "bool", 8, np.dtype(np.bool_), signed=False, default_overflow="wrap",
           int_min=0, int_max=1, aliases=("b1",), torch_name="bool", acl_name="ACL_BOOL"),
    _int("int1", 1, ml_dtypes.int1, True, ("s1",)),  # -1 and 0
    _int("int2", 2, ml_dtypes.int2, True, ("s2",)),
    _int("int4", 4, ml_dtypes.int4, True, ("s4",), acl="ACL_INT4"),
    _int("int8", 8, np.int8, True, ("s8",), "int8", "ACL_INT8"),
    _int("int16", 16, np.int16, True, ("s16",), "int16", "ACL_INT16"),
    _int("int32", 32, np.int32, True, ("s32",), "int32", "ACL_INT32"),
    _int("int64", 64, np.int64, True, ("s64",), "int64", "ACL_INT64"),
    # Note: no "u1" alias: numpy reads "u1" as uint8 (its byte-counting type code), and
    # er.dtype("u1") has always meant uint8; the bit-counting short names start at 2 bits.
    _int("uint1", 1, ml_dtypes.uint1, False, acl="ACL_UINT1"),  # 0 and 1
    _int("uint2", 2, ml_dtypes.uint2, False, ("u2",)),
    _int("uint4", 4, ml_dtypes.uint4, False, ("u4",)),
    _int("uint8", 8, np.uint8, False, ("u8",), "uint8", "ACL_UINT8"),
    _int("uint16", 16, np.uint16, False, ("u16",), "uint16", "ACL_UINT16"),
    _int("uint32", 32, np.uint32, False, ("u32",), "uint32", "ACL_UINT32"),
    _int("uint64", 64, np.uint64, False, ("u64",), "uint64", "ACL_UINT64"),
    #       name              bits dtype                        p   emin   emax  max finite (hex)           inf    nan    -0     overflow
    _float("float64",          64, np.float64,                  53, -1022, 1023, "0x1.fffffffffffffp+1023", True,  True,  True,  "ieee",
           aliases=("f64", "fp64", "double"), torch="float64", acl="ACL_DOUBLE"),
    _float("float32",          32, np.float32,                  24, -126,  127,  "0x1.fffffep+127",         True,  True,  True,  "ieee",
           aliases=("f32", "fp32", "float", "single"), torch="float32", acl="ACL_FLOAT"),
    _float("float16",          16, np.float16,                  11, -14,   15,   "0x1.ffcp+15",             True,  True,  True,  "ieee",  # 65504
           aliases=("f16", "fp16", "half"), torch="float16", acl="ACL_FLOAT16"),
    _float("bfloat16",         16, ml_dtypes.bfloat16,           8, -126,  127,  "0x1.fep+127",             True,  True,  True,  "ieee",
           aliases=("bf16",), torch="bfloat16", acl="ACL_BF16"),
    _float("float8_e4m3fn",     8, ml_dtypes.float8_e4m3fn,      4, -6,    8,    "0x1.cp+8",                False, True,  True,  "ieee",  # 448
           aliases=("e4m3fn", "f8e4m3fn", "fp8_e4m3fn", "float8e4m3fn"), torch="float8_e4m3fn",
           acl="ACL_FLOAT8_E4M3FN", note=_NAN_OVERFLOW),
    _float("float8_e4m3fnuz",   8, ml_dtypes.float8_e4m3fnuz,    4, -7,    7,    "0x1.ep+7",                False, True,  False, "ieee",  # 240
           aliases=("e4m3fnuz", "f8e4m3fnuz"), torch="float8_e4m3fnuz", note=_NAN_OVERFLOW),
    _float("float8_e5m2",       8, ml_dtypes.float8_e5m2,        3, -14,   15,   "0x1.cp+15",               True,  True,  True,  "ieee",  # 57344
           aliases=("e5m2", "f8e5m2", "fp8_e5m2"), torch="float8_e5m2", acl="ACL_FLOAT8_E5M2"),
    _float("float8_e5m2fnuz",   8, ml_dtypes.float8_e5m2fnuz,    3, -15,   15,   "0x1.cp+15",               False, True,  False, "ieee",  # 57344
           aliases=("e5m2fnuz", "f8e5m2fnuz"), torch="float8_e5m2fnuz", note=_NAN_OVERFLOW),
    _float("float8_e4m3b11fnuz", 8, ml_dtypes.float8_e4m3b11fnuz, 4, -10,  4,    "0x1.ep+4",                False, True,  False, "ieee",  # 30
           aliases=("e4m3b11fnuz", "f8e4m3b11fnuz"), note=_NAN_OVERFLOW),
    _float("float8_e3m4",       8, ml_dtypes.float8_e3m4,        5, -2,    3,    "0x1.fp+3",                True,  True,  True,  "ieee",  # 15.5
           aliases=("e3m4", "f8e3m4")),
    _float("float8_e4m3",       8, ml_dtypes.float8_e4m3,        4, -6,    7,    "0x1.ep+7",                True,  True,  True,  "ieee",  # 240
           aliases=("e4m3", "f8e4m3")),
    _float("float8_e8m0fnu",    8, ml_dtypes.float8_e8m0fnu,     1, -127,  127,  "0x1p+127",                False, True,  False, "ieee",
           zero=False, signed=False, aliases=("e8m0", "e8m0fnu", "f8e8m0fnu"), torch="float8_e8m0fnu",
           acl="ACL_FLOAT8_E8M0",
           note="powers of two only: no zero, no sign, no subnormals; negative values, zeros "
                "and overflow give NaN; ties round away from zero and values below 2**-127 "
                "round up to it in the nearest modes, as ml_dtypes' casts do"),
    _float("float6_e2m3fn",     6, ml_dtypes.float6_e2m3fn,      4, 0,     2,    "0x1.ep+2",                False, False, True,  "saturate",  # 7.5
           aliases=("e2m3", "e2m3fn", "f6e2m3fn"), acl="ACL_FLOAT6_E2M3",
           note="no infinity and no NaN: overflow saturates, as ml_dtypes' casts do"),
    _float("float6_e3m2fn",     6, ml_dtypes.float6_e3m2fn,      3, -2,    4,    "0x1.cp+4",                False, False, True,  "saturate",  # 28
           aliases=("e3m2", "e3m2fn", "f6e3m2fn"), acl="ACL_FLOAT6_E3M2",
           note="no infinity and no NaN: overflow saturates, as ml_dtypes' casts do"),
    _float("float4_e2m1fn",     4, ml_dtypes.float4_e2m1fn,      2, 0,     2,    "0x1.8p+2",                False, False, True,  "saturate",  # 6
           aliases=("e2m1", "e2m1fn", "f4e2m1fn", "fp4"), acl="ACL_FLOAT4_E2M1",
           note="no infinity and no NaN: overflow saturates, as ml_dtypes' casts do"),
    # the IEEE P3109 8-bit formats, each from its definition (_p3109_formats)
    *_p3109_formats(8),
    _complex("complex32", 32, ml_dtypes.complex32, "float16",
             aliases=("c32", "chalf", "complex_half"), torch="complex32", acl="ACL_COMPLEX32"),
    _complex("bcomplex32", 32, ml_dtypes.bcomplex32, "bfloat16", aliases=("bc32",)),
    _complex("complex64", 64, np.complex64, "float32", aliases=("c64", "cfloat"),
             torch="complex64", acl="ACL_COMPLEX64"),
    _complex("complex128", 128, np.complex128, "float64", aliases=("c128", "cdouble"),
             torch="complex128", acl="ACL_COMPLEX128"),
]
# fmt: on

#: The formats by canonical name, in table order.
FORMATS: dict[str, Format] = {f.name: f for f in _TABLE}

#: PyTorch spellings that are not the canonical name (``torch.half`` and friends).
_TORCH_ALIASES = {
    "half": "float16", "float": "float32", "double": "float64", "cfloat": "complex64",
    "cdouble": "complex128", "chalf": "complex32", "long": "int64", "int": "int32",
    "short": "int16",
}


def _build_names() -> dict[str, Format]:
    names: dict[str, Format] = {}
    for f in _TABLE:
        keys = {f.name, *f.aliases}
        if f.torch_name:
            keys.add("torch." + f.torch_name)
        if f.acl_name:
            keys.add(f.acl_name)
        if f.encoding == "native":
            keys.add("np." + f.name)
            keys.add("numpy." + f.name)
            keys.add("jnp." + f.name)
        keys.add("exactref." + f.name)
        for key in keys:
            names[key.lower()] = f
    for alias, target in _TORCH_ALIASES.items():
        names["torch." + alias] = FORMATS[target]
    return names


_NAMES = _build_names()
# Note: the P3109 formats are held as float64 but are not float64: a numpy dtype names only the
# format whose own encoding it is.
_BY_NP_DTYPE = {f.np_dtype: f for f in _TABLE if f.encoding == "native"}
_UINTS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

FormatSpec = "Format | str | numpy.dtype | type | torch.dtype"


def holds(target: Format, source: Format) -> bool:
    """Whether every value of ``source`` is a value of ``target`` (so a cast is exact).

    The one test of containment: casts, promotion's suggested casts and the equivalents all ask
    it. Values, not encodings, are compared: signed zeros, infinities and NaN must exist in
    ``target`` where ``source`` has them; an integer range fits a float format when every
    integer up to its largest magnitude is a value (magnitude at most ``2**precision``).

    >>> holds(FORMATS["float8_e5m2"], FORMATS["int4"]), holds(FORMATS["float32"], FORMATS["int32"])
    (True, False)
    >>> holds(FORMATS["float8_e4m3fnuz"], FORMATS["float4_e2m1fn"])  # fnuz has no -0
    False
    """
    if target is source:
        return True
    if source.kind == "complex":
        return target.kind == "complex" and holds(target.component, source.component)
    if target.kind == "complex":
        return holds(target.component, source)
    if target.kind == "bool":
        return source.kind == "bool"
    if source.is_integer:
        lo, hi = source.int_min, source.int_max
        if target.is_integer:
            return target.int_min <= lo and hi <= target.int_max
        big = max(-lo, hi)  # every integer up to it must be a value
        return (big <= 2**target.precision and big <= target.max_finite and target.has_zero
                and (target.signed or lo >= 0))
    if target.is_integer:
        return False
    return (target.precision >= source.precision
            and target.max_finite >= source.max_finite
            and target.smallest_subnormal <= source.smallest_subnormal
            and (target.has_inf or not source.has_inf)
            and (target.has_nan or not source.has_nan)
            and (target.has_negzero or not source.has_negzero)
            and (target.has_zero or not source.has_zero)
            and (target.signed or not source.signed))


def dtype(spec) -> Format:
    """Resolve any spelling of a format to its :class:`Format`.

    Accepts a Format, a canonical numpy/ml_dtypes name, a short name (``"bf16"``, ``"f32"``), a
    torch dtype or its name (``torch.half``, ``"half"``), a numpy or jax dtype or scalar type, or
    an Ascend name (``"ACL_FLOAT16"``). Short names count bits, as Ascend's do (``"u8"`` is uint8,
    ``"s16"`` int16); other numpy type codes (``"<f4"``) resolve as numpy resolves them.

    >>> import numpy as np
    >>> dtype(np.float16), dtype("half"), dtype("torch.float16")
    (exactref.float16, exactref.float16, exactref.float16)
    >>> dtype("bfloat61")
    Traceback (most recent call last):
    ...
    ValueError: unknown format 'bfloat61'; close matches: bfloat16, float64, float16. Use a numpy/ml_dtypes name such as 'float32' or 'bfloat16' (exactref.FORMATS lists them all).
    """
    if isinstance(spec, Format):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower()
        found = _NAMES.get(key)
        if found is None:
            try:
                npd = np.dtype(spec.strip())
                found = _BY_NP_DTYPE.get(npd.newbyteorder("=") if npd.byteorder not in (
                    "=", "|") else npd)
            except TypeError:
                found = None
        if found is None:
            close = difflib.get_close_matches(key, list(_NAMES), n=3, cutoff=0.6)
            canon = []
            for c in close:
                n = _NAMES[c].name
                if n not in canon:
                    canon.append(n)
            hint = f"; close matches: {', '.join(canon)}" if canon else ""
            raise ValueError(
                f"unknown format {spec!r}{hint}. Use a numpy/ml_dtypes name such as 'float32' "
                f"or 'bfloat16' (exactref.FORMATS lists them all)."
            )
        return found
    module = type(spec).__module__
    if module.startswith("torch"):
        # torch.float16 -> "torch.float16"
        return dtype(str(spec))
    if spec is bool:
        return FORMATS["bool"]
    if spec is int or spec is float or spec is complex:
        raise ValueError(
            f"the Python type {spec.__name__} names no single format; pass a format name such as "
            f"'int64' or 'float32', or use exactref.result_type for Python scalars"
        )
    try:
        npd = np.dtype(spec)
    except TypeError:
        npd = None
    if npd is not None and npd.byteorder not in ("=", "|"):
        npd = npd.newbyteorder("=")  # big-endian data holds the same values
    if npd is not None and npd in _BY_NP_DTYPE:
        return _BY_NP_DTYPE[npd]
    raise ValueError(
        f"cannot resolve {spec!r} (of type {type(spec).__name__}) to a format; expected a format "
        f"name, a numpy/ml_dtypes/jax dtype or a torch dtype"
    )
