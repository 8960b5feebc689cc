"""The format table, row by row, against ml_dtypes/numpy, and every spelling er.dtype resolves."""

from __future__ import annotations

import pickle
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref._formats import FORMATS

FLOATS = [f for f in FORMATS.values() if f.kind == "float" and f.encoding == "native"]  # P3109: test_formats_p3109.py
INTS = [f for f in FORMATS.values() if f.kind in ("int", "uint")]
COMPLEX = [f for f in FORMATS.values() if f.kind == "complex"]


def _fid(f):
    return f.name


def _all_values(fmt):
    """Every bit pattern of a float format of at most 16 bits, decoded by ml_dtypes/numpy."""
    pats = np.arange(2**fmt.bits, dtype=np.uint8 if fmt.itemsize == 1 else np.uint16)
    with np.errstate(invalid="ignore"):
        return pats.view(fmt.np_dtype).astype(np.float64)


# ------------------------------------------------------------------------------ float rows
@pytest.mark.parametrize("fmt", FLOATS, ids=_fid)
def test_float_row_matches_finfo(fmt):
    fi = ml_dtypes.finfo(fmt.np_dtype)
    assert fmt.precision == fi.nmant + 1
    assert fmt.emin == fi.minexp
    assert fmt.emax == fi.maxexp - 1
    assert fmt.max_finite == float(fi.max)
    assert fmt.smallest_normal == float(fi.smallest_normal)
    assert fmt.smallest_subnormal == float(fi.smallest_subnormal)
    assert fmt.bits == fi.bits
    assert fmt.itemsize == fmt.np_dtype.itemsize
    assert fmt.max_finite == float.fromhex(fmt.max_finite_hex)
    q = Fraction(2) ** (fmt.emax - fmt.precision + 1)
    assert Fraction(fmt.max_finite) == fmt.max_mantissa * q
    assert fmt.max_mantissa < 2**fmt.precision
    assert fmt.is_float and not fmt.is_integer and not fmt.is_complex
    assert fmt.component is fmt


@pytest.mark.parametrize("fmt", [f for f in FLOATS if f.bits <= 16], ids=_fid)
def test_float_row_matches_every_bit_pattern(fmt):
    """inf, NaN, -0, zero, sign, the extremes: read from all the format's encodings."""
    v = _all_values(fmt)
    finite = v[np.isfinite(v)]
    pos = finite[finite > 0]
    assert fmt.has_inf == bool(np.isinf(v).any())
    assert fmt.has_nan == bool(np.isnan(v).any())
    assert fmt.has_negzero == bool(((v == 0) & np.signbit(v)).any())
    assert fmt.has_zero == bool((v == 0).any())
    assert fmt.signed == bool((finite < 0).any())
    assert fmt.max_finite == pos.max()
    assert fmt.smallest_subnormal == pos.min()
    # every finite value has at most `precision` significant bits at quantum 2**(emin-p+1)
    q = fmt.smallest_subnormal
    assert np.all(np.mod(pos, q) == 0)
    m, e = np.frexp(pos)
    assert np.all(np.mod(m * 2.0**fmt.precision, 1) == 0)


@pytest.mark.parametrize("fmt", [FORMATS["float32"], FORMATS["float64"]], ids=_fid)
def test_ieee_binary_rows(fmt):
    assert (fmt.has_inf, fmt.has_nan, fmt.has_negzero, fmt.has_zero, fmt.signed) == (
        True, True, True, True, True)
    assert fmt.default_overflow == "ieee"


def _cast_from_float32(fmt, x):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array([x], np.float32).astype(fmt.np_dtype).astype(np.float64)[0]


@pytest.mark.parametrize("fmt", [f for f in FLOATS if f.bits <= 16], ids=_fid)
def test_default_overflow_is_what_ml_dtypes_does(fmt):
    """The default rule reproduces ml_dtypes' cast (to nearest) of a value past the range (from
    float32): IEEE's rule gives infinity, or NaN in a format without one."""
    big = min(fmt.max_finite * 4, float(np.finfo(np.float32).max))
    got = _cast_from_float32(fmt, big)
    if np.isnan(got):
        assert fmt.default_overflow == "ieee" and not fmt.has_inf
    elif np.isinf(got):
        assert fmt.default_overflow == "ieee"
    else:
        assert got == fmt.max_finite and fmt.default_overflow == "saturate"
    assert er.asarray(np.array([big], np.float32), fmt).tolist()[0] == pytest.approx(
        got, nan_ok=True)


@pytest.mark.parametrize("fmt", FLOATS, ids=_fid)
def test_overflow_rule_is_documented(fmt):
    """Every format without infinity says what overflow becomes."""
    if not fmt.has_inf:
        assert fmt.note, fmt.name
    assert fmt.default_overflow in ("ieee", "saturate", "nan")
    if not fmt.has_nan:
        assert fmt.default_overflow == "saturate"


# ---------------------------------------------------------------------- integer and complex
@pytest.mark.parametrize("fmt", INTS, ids=_fid)
def test_integer_row_matches_iinfo(fmt):
    ii = ml_dtypes.iinfo(fmt.np_dtype)
    assert (fmt.int_min, fmt.int_max, fmt.bits) == (int(ii.min), int(ii.max), ii.bits)
    assert fmt.signed == (fmt.int_min < 0) == (fmt.kind == "int")
    assert fmt.default_overflow == "wrap"
    assert fmt.max_finite == fmt.int_max and fmt.is_integer


def test_bool_row():
    b = FORMATS["bool"]
    assert (b.kind, b.int_min, b.int_max, b.np_dtype) == ("bool", 0, 1, np.dtype(bool))
    assert b.is_integer


@pytest.mark.parametrize("fmt", COMPLEX, ids=_fid)
def test_complex_row(fmt):
    part = fmt.component
    assert part.kind == "float" and fmt.bits == 2 * part.bits
    assert fmt.itemsize == 2 * part.itemsize == fmt.np_dtype.itemsize
    parts = np.array([1.5 - 2j], fmt.np_dtype).view(part.np_dtype).astype(np.float64)
    assert parts.tolist() == [1.5, -2.0]  # real then imaginary, each in the part's format
    assert fmt.max_finite == part.max_finite and fmt.is_complex


def test_table_shape():
    names = [f.name for f in FORMATS.values()]
    assert len(set(names)) == len(names) == len(FORMATS)
    assert list(FORMATS) == names
    native = [f for f in FORMATS.values() if f.encoding == "native"]
    for f in native:  # the P3109 formats, held as float64, have no numpy dtype of their own
        assert er.dtype(f.np_dtype) is f, f.name
    dtypes = [f.np_dtype for f in native]
    assert len(set(dtypes)) == len(dtypes)
    # every ml_dtypes float and integer format of the issue is in the table
    for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                 "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
                 "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int1", "uint1", "int2",
                 "uint2", "int4", "uint4", "bfloat16", "complex32"):
        assert name in FORMATS
    # every integer format ml_dtypes has is in the table (int1 and uint1 since ml_dtypes 0.6)
    for name in dir(ml_dtypes):
        if name.startswith(("int", "uint")) and name[-1].isdigit() and hasattr(
                getattr(ml_dtypes, name), "dtype"):
            assert name in FORMATS, name


def test_one_bit_integers():
    """int1 holds -1 and 0, uint1 0 and 1 (ml_dtypes.iinfo), as a byte each."""
    i1, u1 = FORMATS["int1"], FORMATS["uint1"]
    assert (i1.int_min, i1.int_max, i1.bits, i1.kind) == (-1, 0, 1, "int")
    assert (u1.int_min, u1.int_max, u1.bits, u1.kind) == (0, 1, 1, "uint")
    assert i1.itemsize == u1.itemsize == 1
    assert np.array([-1, 0], np.int64).astype(i1.np_dtype).astype(np.int64).tolist() == [-1, 0]
    assert np.array([0, 1], np.int64).astype(u1.np_dtype).astype(np.int64).tolist() == [0, 1]
    assert list(FORMATS).index("int1") < list(FORMATS).index("int2")
    assert list(FORMATS).index("uint1") < list(FORMATS).index("uint2")


# ---------------------------------------------------------------------------- er.dtype
def _spellings(f):
    out = [f.name, f.name.upper(), f" {f.name} ", f"exactref.{f.name}", f, *f.aliases]
    if f.encoding == "native":  # the P3109 formats have no numpy dtype
        out += [f"np.{f.name}", f"numpy.{f.name}", f"jnp.{f.name}", f.np_dtype, f.np_dtype.type]
    if f.acl_name:
        out.append(f.acl_name)
    if f.torch_name:
        out.append(f"torch.{f.torch_name}")
    return out


@pytest.mark.parametrize("fmt", list(FORMATS.values()), ids=_fid)
def test_every_spelling_resolves(fmt):
    for spec in _spellings(fmt):
        assert er.dtype(spec) is fmt, spec


@pytest.mark.parametrize(("spec", "name"), [
    ("bf16", "bfloat16"), ("f32", "float32"), ("fp16", "float16"), ("half", "float16"),
    ("float", "float32"), ("double", "float64"), ("single", "float32"), ("u8", "uint8"),
    ("s16", "int16"), ("u4", "uint4"), ("s2", "int2"), ("s1", "int1"), ("ACL_UINT1", "uint1"),
    ("u1", "uint8"),  # numpy's byte-counting code: "u1" is not uint1
    ("c64", "complex64"), ("chalf", "complex32"),
    ("e4m3", "float8_e4m3"), ("e4m3fn", "float8_e4m3fn"), ("e8m0", "float8_e8m0fnu"),
    ("fp4", "float4_e2m1fn"), ("b1", "bool"), ("<f4", "float32"), ("i4", "int32"),
    (">f8", "float64"), ("torch.half", "float16"), ("torch.float", "float32"),
    ("torch.double", "float64"), ("torch.cfloat", "complex64"), ("torch.cdouble", "complex128"),
    ("torch.chalf", "complex32"), ("torch.long", "int64"), ("torch.int", "int32"),
    ("torch.short", "int16"), ("ACL_FLOAT", "float32"), ("ACL_BF16", "bfloat16"),
    ("acl_float16", "float16"), ("ACL_FLOAT8_E8M0", "float8_e8m0fnu"), (bool, "bool"),
    (np.bool_, "bool"), (np.float16, "float16"), (ml_dtypes.bfloat16, "bfloat16"),
    (np.dtype(">f4"), "float32"), (np.dtype("<i8"), "int64"),
], ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", str(v)))
def test_named_spellings(spec, name):
    assert er.dtype(spec) is FORMATS[name]


def test_big_endian_arrays_are_numbers():
    """Byte order is storage, not format: big-endian float64 data rounds like any float64."""
    x = np.array([1.5, 2.0**-30, float.fromhex("0x1.0100000001p+0")], ">f8")
    assert er.asarray(x, "bfloat16").tolist() == [1.5, 2.0**-30, float.fromhex("0x1.02p+0")]
    assert er.asarray(x).dtype is FORMATS["float64"]


def test_torch_dtypes():
    torch = pytest.importorskip("torch")
    for f in FORMATS.values():
        if f.torch_name:
            assert er.dtype(getattr(torch, f.torch_name)) is f
    assert er.dtype(torch.half) is FORMATS["float16"]
    assert er.dtype(torch.cfloat) is FORMATS["complex64"]
    assert er.dtype(torch.long) is FORMATS["int64"]
    assert er.dtype(torch.zeros(1, dtype=torch.bfloat16).dtype) is FORMATS["bfloat16"]


def test_jax_dtypes():
    jnp = pytest.importorskip("jax.numpy")
    for f in FORMATS.values():
        t = getattr(jnp, f.name, None)
        if t is not None:
            assert er.dtype(t) is f, f.name
            assert er.dtype(jnp.dtype(f.name)) is f, f.name
    assert er.dtype(jnp.zeros(2, jnp.bfloat16).dtype) is FORMATS["bfloat16"]


@pytest.mark.parametrize(("spec", "match"), [
    ("bfloat61", r"unknown format 'bfloat61'; close matches: bfloat16"),
    ("flaot32", r"close matches: float32"),
    ("xyzzy", r"unknown format 'xyzzy'\. Use a numpy/ml_dtypes name"),
    ("", r"unknown format ''"),
    (int, r"Python type int names no single format"),
    (float, r"Python type float names no single format"),
    (complex, r"Python type complex names no single format"),
    (object(), r"cannot resolve .* \(of type object\)"),
    (np.dtype("U3"), r"cannot resolve"),
])
def test_dtype_errors(spec, match):
    with pytest.raises(ValueError, match=match):
        er.dtype(spec)


def test_unknown_name_names_the_remedy():
    with pytest.raises(ValueError, match=r"exactref\.FORMATS lists them all"):
        er.dtype("float7")


# ----------------------------------------------------------------------- Format objects
@pytest.mark.parametrize("fmt", list(FORMATS.values()), ids=_fid)
def test_format_object(fmt):
    assert repr(fmt) == f"exactref.{fmt.name}"
    assert str(fmt) == fmt.name
    assert pickle.loads(pickle.dumps(fmt)) is fmt
    assert er.dtype(fmt) is fmt
    assert er.dtype(repr(fmt)) is fmt
    assert hash(fmt) == hash(er.dtype(fmt.name))


# ------------------------------------------------------------------ containment (holds)
def _all_values(fmt):
    """Every value of a format of at most 16 bits, as float64 (from its bit patterns)."""
    if fmt.kind == "bool":
        return np.array([0.0, 1.0])
    if fmt.is_integer:
        return np.arange(fmt.int_min, fmt.int_max + 1, dtype=np.float64)
    comp = fmt.component
    if comp.encoding != "native":  # the P3109 formats: their codes' values
        return comp.decode(np.arange(2**comp.bits))
    bits = np.arange(2**comp.bits, dtype=np.uint16 if comp.bits > 8 else np.uint8)
    with np.errstate(invalid="ignore"):
        return bits.view(comp.np_dtype).astype(np.float64)


def _held(target, values):
    """Per value: does ``target`` hold it? Checked by a real cast there and back (a value the
    format holds survives any cast unchanged, signs of zero and NaN included)."""
    comp = target.component
    if comp.encoding != "native":  # no cast to try: the values of its codes, no -0
        table = comp.decode(np.arange(2**comp.bits))
        member = np.isin(values, table[~np.isnan(table)]) & ~((values == 0) & np.signbit(values))
        return member | (np.isnan(values) & comp.has_nan)
    with np.errstate(all="ignore"):
        if comp.is_integer:
            # an integer format holds integers in its range, and no -0
            return (np.isfinite(values) & (values == np.trunc(values))
                    & (values >= comp.int_min) & (values <= comp.int_max)
                    & ~((values == 0) & np.signbit(values)))
        back = values.astype(comp.np_dtype).astype(np.float64)
    same = (back == values) & (np.signbit(back) == np.signbit(values))
    return same | (np.isnan(back) & np.isnan(values))


_SMALL = [f for f in FORMATS.values() if f.component.bits <= 16 and not (
    f.kind == "complex" and f.bits > 32)]


@pytest.mark.parametrize("source", _SMALL, ids=_fid)
def test_holds_agrees_with_real_casts(source):
    """holds(target, source) is True exactly when every value of ``source`` survives a cast into
    ``target`` (every value enumerated, every target format)."""
    from exactref._formats import holds

    values = _all_values(source.component)
    for target in FORMATS.values():
        if source.kind == "complex" and target.kind != "complex":
            assert not holds(target, source)
            continue
        if target.kind == "bool":
            assert holds(target, source) == (source.kind == "bool"), target.name
            continue
        want = bool(_held(target, values).all())
        assert holds(target, source) == want, (target.name, source.name)


@pytest.mark.parametrize("target, source, want", [
    ("float64", "int32", True), ("float32", "int32", False), ("float64", "int64", False),
    ("float64", "float32", True), ("float32", "float64", False), ("complex64", "float32", True),
    ("float32", "complex64", False), ("int64", "int32", True), ("int32", "uint32", False),
    ("uint64", "uint32", True), ("float32", "uint16", True), ("float16", "uint16", False),
])
def test_holds_wide_formats(target, source, want):
    from exactref._formats import holds

    assert holds(er.dtype(target), er.dtype(source)) is want
