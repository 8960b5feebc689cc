"""Every number format exactref serves, as one data table.

A :class:`Format` describes a format completely enough to round into it: kind, width, precision,
exponent range, which special values it encodes and what an overflow becomes by default. The
table :data:`FORMATS` is data; the code below only folds it (aliases, lookups, repr).

Constants are exact hex floats with the decimal beside them, so they can be checked bit by bit;
``tests/test_formats.py`` checks every row against ``ml_dtypes.finfo`` / ``numpy.finfo``.

>>> import exactref as er
>>> er.dtype("bf16")
exactref.bfloat16
>>> er.dtype("ACL_FLOAT16").name
'float16'
>>> f = er.dtype("float8_e4m3fn")
>>> (f.precision, f.emin, f.emax, f.max_finite, f.has_inf, f.default_overflow)
(4, -6, 8, 448.0, False, 'ieee')
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from fractions import Fraction

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
        return self.np_dtype.itemsize

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
_BY_NP_DTYPE = {f.np_dtype: f for f in _TABLE}

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
