"""exactref.equivalents.numpy against NumPy 2 and ml_dtypes: np.add and np.multiply on every
numpy dtype and every ml_dtypes type numpy can add, same-dtype and mixed pairs, Python scalars,
on adversarial and random values. Every element covered, with NumPy's result dtype; where
NumPy raises (a Python int out of range, promotions ml_dtypes lacks), the equivalent raises."""

from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest
from arith_pools import pairs
from numpy_check import Sweep

import exactref as er
import exactref.equivalents.numpy as ern

NUMPY = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "float32", "float64", "complex64", "complex128"]
ML_DTYPES = ["bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
             "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
             "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int2", "int4", "uint2",
             "uint4", "complex32", "bcomplex32"]
ALL = NUMPY + ML_DTYPES
SCALARS = [True, 3, 300, -1, 2**63, 0.1, -0.0, 1e300, math.inf, math.nan, 1j,
           complex(math.inf, 1.0)]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


@pytest.mark.parametrize("name", ALL)
def test_same_dtype(name):
    fmt = er.dtype(name)
    x, y = pairs(fmt, 64, _rng(name))
    X, Y = er.asarray(x, fmt).numpy(), er.asarray(y, fmt).numpy()
    s = Sweep()
    s.check("add", lambda: np.add(X, Y), lambda: ern.add(X, Y))
    s.check("multiply", lambda: np.multiply(X, Y), lambda: ern.multiply(X, Y))
    s.assert_ok()
    assert s.checked == 2


def _sample(fmt, n, rng):
    v = pairs(fmt, 4, rng)[0]
    return er.asarray(v[rng.integers(0, len(v), n)], fmt).numpy()


QUICK = ["bool", "int8", "uint64", "int64", "float16", "float32", "float64", "complex64",
         "bfloat16", "float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn", "int4", "complex32"]


def _mixed(a, others):
    s = Sweep()
    for b in others:
        rng = _rng(a, b)
        X, Y = _sample(er.dtype(a), 24, rng), _sample(er.dtype(b), 24, rng)
        s.check(f"add {a} {b}", lambda X=X, Y=Y: np.add(X, Y), lambda X=X, Y=Y: ern.add(X, Y))
        s.check(f"multiply {a} {b}", lambda X=X, Y=Y: np.multiply(X, Y),
                lambda X=X, Y=Y: ern.multiply(X, Y))
    s.assert_ok()


@pytest.mark.parametrize("a", QUICK)
def test_mixed_pairs(a):
    """The ordered pairs among a representative subset (every pair with --run-slow)."""
    _mixed(a, QUICK)


@pytest.mark.slow
@pytest.mark.parametrize("a", ALL)
def test_mixed_pairs_full(a):
    _mixed(a, ALL)


@pytest.mark.parametrize("name", ALL)
def test_python_scalars(name):
    X = _sample(er.dtype(name), 40, _rng(name, "scalars"))
    s = Sweep()
    for v in SCALARS:
        s.check(f"add {v!r}", lambda v=v: np.add(X, v), lambda v=v: ern.add(X, v))
        s.check(f"multiply {v!r}", lambda v=v: np.multiply(X, v),
                lambda v=v: ern.multiply(X, v))
        s.check(f"radd {v!r}", lambda v=v: np.add(v, X), lambda v=v: ern.add(v, X))
    s.assert_ok()


def test_zero_dim_and_numpy_scalars():
    """0-d arrays and numpy scalars are typed operands to NumPy (not weak like Python's)."""
    x = np.array([1.0, 2.5, -3.0], dtype=np.float16)
    s = Sweep()
    for other in (np.float64(0.1), np.array(0.1), np.float32(1 / 3), np.int64(7), np.array(3)):
        s.check(f"{other!r}", lambda o=other: np.add(x, o), lambda o=other: ern.add(x, o))
        s.check(f"{other!r} *", lambda o=other: np.multiply(x, o),
                lambda o=other: ern.multiply(x, o))
    s.assert_ok()


def test_annex_g_recovery_in_ml_dtypes_complex():
    """ml_dtypes' complex32 product recovers infinities where the textbook formula gives
    NaN+NaNj (C99 Annex G); NumPy's own complex64 does not."""
    z = np.empty(1, np.complex128)
    z.real, z.imag = math.inf, math.nan
    w = np.array([1 + 1j])
    for name in ("complex32", "bcomplex32"):
        a = er.asarray(z, name).numpy()
        b = er.asarray(w, name).numpy()
        with np.errstate(all="ignore"):
            got = np.multiply(a, b)
        v = complex(got.astype(np.complex128)[0])
        assert math.isinf(v.real) and math.isinf(v.imag)
        assert ern.multiply(a, b).covers(got).all()
        assert not er.multiply(a, b).covers(got).all()
    with np.errstate(all="ignore"):
        got = np.multiply(z.astype(np.complex64), w.astype(np.complex64))
    assert math.isnan(got[0].real) and math.isnan(got[0].imag)
    assert ern.multiply(z.astype(np.complex64), w.astype(np.complex64)).covers(got).all()


def test_float16_is_correctly_rounded():
    """NumPy computes float16 in float32: one + or x of float16 values is correctly rounded,
    so the reference's single rounding matches bit for bit."""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2**16, 20000, dtype=np.uint16).view(np.float16)
    y = rng.integers(0, 2**16, 20000, dtype=np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        for op, ref in ((np.add, ern.add), (np.multiply, ern.multiply)):
            got = op(x, y)
            want = ref(x, y).rounded.numpy()
            same = (got == want) | (np.isnan(got) & np.isnan(want))
            assert same.all() and (np.signbit(got) == np.signbit(want))[~np.isnan(got)].all()


def test_every_listed_type_adds():
    """The lists are the types numpy can add (ml_dtypes registers add and multiply for each)."""
    for name in ALL:
        a = er.asarray([1, 0], name).numpy()
        np.add(a, a)
        np.multiply(a, a)
    assert len(set(itertools.chain(NUMPY, ML_DTYPES))) == len(ALL)


# ------------------------------------------------------- the family, built from the records
def test_the_family_is_built_from_the_records():
    """Each record whose numpy counterpart names a model has its equivalent, named as the
    record, with the record's operands (exactref.equivalents._family)."""
    import inspect

    from exactref.equivalents import _family

    ops = _family.records("numpy")
    assert {op.name for op in ops} <= set(ern.__all__)
    for op in ops:
        fn = getattr(ern, op.name)
        assert fn.op.spec is er.ops.get_op(op.name)
        assert fn.__module__ == "exactref.equivalents.numpy"
        params = list(inspect.signature(fn).parameters)
        assert params[:op.spec.arity] == list(op.spec.operands), op.name
        assert op.call in fn.__doc__


def test_a_library_is_its_models():
    """A new library is a Models table and data in the records: build() makes one function
    per record naming a model, and a model the table lacks is named in the error."""
    from exactref.equivalents import _family

    models = _family.Models("numpy")
    seen = []

    def model(op, x, y=None):
        """The reference for ``{call}``."""
        seen.append(op.name)
        return op.name

    for name in {op["model"] for op in _family.records("numpy")}:
        models(name)(model)
    namespace = {"__name__": "demo"}
    names = _family.build(_family.Library("numpy", models), namespace)
    assert set(names) == {op.name for op in _family.records("numpy")}
    assert namespace["maximum"](1, 2) == "maximum" and seen == ["maximum"]
    assert namespace["maximum"].__doc__ == "The reference for ``np.maximum``."
    with pytest.raises(LookupError, match="numpy has no model 'nothing'"):
        _family.Models("numpy").get("nothing")
