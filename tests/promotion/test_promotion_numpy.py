"""numpy policy: NEP 50 and the ufuncs, and a live cross-check on a sample."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref.promotion import PromotionError, check_inplace, result_type
from exactref.promotion import _fixtures as F
from exactref.promotion._numpy import UFUNC


def test_nep50_weak_scalars():
    assert result_type("uint8[3]", 2, policy="numpy") is er.dtype("uint8")
    assert result_type("float16[3]", 1e300, policy="numpy") is er.dtype("float16")
    assert result_type("bool[3]", 2, policy="numpy") is er.dtype("int64")
    assert result_type("float32[3]", 1j, policy="numpy") is er.dtype("complex64")
    assert result_type(2, 0.5, policy="numpy") is er.dtype("float64")
    # numpy scalars and 0-d arrays are strong
    assert result_type("float32[3]", np.float64(0.5), policy="numpy") is er.dtype("float64")
    assert result_type("float32[3]", "float64[]", policy="numpy") is er.dtype("float64")


def test_ufunc_not_result_type_for_ml_dtypes():
    # np.result_type(float8_e4m3fn, float8_e5m2) raises; np.add returns float32
    assert result_type("float8_e4m3fn[3]", "float8_e5m2[3]", policy="numpy") is er.dtype("float32")
    assert result_type("int4[3]", 3, policy="numpy") is er.dtype("int8")
    assert result_type("bfloat16[3]", 0.5, policy="numpy") is er.dtype("float32")
    assert result_type("int4[3]", "int4[3]", policy="numpy", op="div") is er.dtype("float16")


def test_three_operands_are_not_associative():
    assert result_type("int8[3]", "uint8[3]", "float16[3]", policy="numpy") is er.dtype("float16")


def test_inplace_same_kind():
    with pytest.raises(PromotionError) as info:
        check_inplace("add", "int64", 1.5, policy="numpy")
    assert info.value.library_error == ("UFuncTypeError", "Cannot cast ufunc 'add' output from "
                                        "dtype('float64') to dtype('int64') with casting rule "
                                        "'same_kind'")
    assert check_inplace("add", "float32", "float64[3]", policy="numpy") is er.dtype("float64")


def test_can_cast_castings():
    assert not er.can_cast("float64", "float32", policy="numpy")
    assert er.can_cast("float64", "float32", policy="numpy", casting="same_kind")
    assert er.can_cast("float64", "int8", policy="numpy", casting="unsafe")
    with pytest.raises(ValueError, match="casting must be"):
        er.can_cast("float64", "int8", policy="numpy", casting="kind")


def _make(spec):
    from exactref.promotion._operands import operand

    o = operand(spec)
    if o.tier == "array":  # int1 holds no 1 (its values are -1 and 0): zeros, as recorded
        fill = np.zeros if o.format.name == "int1" else np.ones
        return fill((3,) if o.ndim else (), dtype=o.format.np_dtype)
    if o.tier == "typed":
        return o.format.np_dtype.type(o.value)
    return o.value


#: exactref's ops with no ufunc of their own, as the recorder computes them.
_NOT_UFUNCS = {"rsqrt": lambda x: 1 / np.sqrt(x),
               "clamp": lambda x, lo, hi=None: np.clip(x, lo, hi),
               "fma": lambda x, y, z: x * y + z}


def test_live_numpy_sample():
    """Recompute a sample of fixture cells with the installed numpy and ml_dtypes."""
    data = F.load("numpy")
    if data["versions"]["numpy"] != np.__version__ or data["versions"]["ml_dtypes"] != \
            ml_dtypes.__version__:
        pytest.skip(f"fixtures recorded with numpy {data['versions']['numpy']}, "
                    f"ml_dtypes {data['versions']['ml_dtypes']}")
    checked = 0
    for i, cell in enumerate(F.cells("numpy")):
        if i % 97 or (cell.op not in UFUNC and cell.op not in _NOT_UFUNCS):
            continue
        ufunc = _NOT_UFUNCS.get(cell.op) or getattr(np, UFUNC[cell.op])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = np.asarray(ufunc(*map(_make, cell.operands)))
            live = F.Cell("numpy", cell.op, cell.operands, str(out.dtype), False, None, None, ())
        except Exception as exc:  # noqa: BLE001 - the library's own error is the data
            live = F.Cell("numpy", cell.op, cell.operands, None, False,
                          (type(exc).__name__, " ".join(str(exc).split())), cell.fallback, ())
        verdict, detail = F.compare(live)
        assert verdict != "disagree", (cell.id, detail)
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("op, want", [("eq", "bool"), ("lt", "bool"), ("ne", "bool"),
                                      ("div", "float64")])
def test_python_ints_out_of_an_int_range_where_numpy_takes_them(op, want):
    """NEP 50: comparisons take any Python int exactly, and true division converts it to
    float64, not to the array's integer type: numpy does not raise (found by the numpy
    equivalents' audit)."""
    a = np.array([1, 2], np.int8)
    fn = {"eq": np.equal, "lt": np.less, "ne": np.not_equal, "div": np.true_divide}[op]
    assert fn(a, 1000).dtype.name == want
    assert er.result_type(a, 1000, policy="numpy", op=op).name == want
    with pytest.raises(er.PromotionError, match="out of bounds for int8"):
        er.result_type(a, 1000, policy="numpy", op="add")
