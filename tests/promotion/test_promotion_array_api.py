"""array API policy: the standard's table; what it leaves open raises."""

from __future__ import annotations

import importlib.util
import itertools

import pytest

import exactref as er
from exactref.promotion import PromotionError, check_inplace, get_policy, result_type


@pytest.mark.parametrize("a,b,expected", [("uint8", "int8", "int16"), ("uint16", "int8", "int32"),
                                          ("uint32", "int64", "int64"),
                                          ("float32", "complex64", "complex64"),
                                          ("float64", "complex64", "complex128"),
                                          ("bool", "bool", "bool")])
def test_specified_cells(a, b, expected):
    assert er.promote_types(a, b, "array_api").name == expected


@pytest.mark.parametrize("a,b", [("uint64", "int8"), ("int8", "float32"), ("bool", "int8"),
                                 ("int32", "complex64")])
def test_unspecified_cells_raise(a, b):
    with pytest.raises(PromotionError) as info:
        er.promote_types(a, b, "array_api")
    assert info.value.reason == "unspecified" and "unspecified" in str(info.value)


def test_scalars_and_ops():
    assert result_type("float32[3]", 2, policy="array_api") is er.dtype("float32")
    assert result_type("int8[3]", 100, policy="array_api") is er.dtype("int8")
    for bad in (("int8[3]", 0.5), ("int8[3]", 300), ("bool[3]", 1), ("float32[3]", 1j)):
        with pytest.raises(PromotionError, match="unspecified"):
            result_type(*bad, policy="array_api")
    with pytest.raises(PromotionError, match="floating-point"):
        result_type("int8[3]", "int8[3]", policy="array_api", op="div")
    with pytest.raises(PromotionError, match="numeric"):
        result_type("bool[3]", "bool[3]", policy="array_api", op="add")
    assert result_type("int8[3]", "int8[]", policy="array_api", op="lt") is er.dtype("bool")
    with pytest.raises(PromotionError, match="unspecified"):
        check_inplace("add", "int8", "int16[3]", policy="array_api")


def test_can_cast_follows_promotion():
    assert er.can_cast("int8", "int16", policy="array_api")
    assert not er.can_cast("float64", "complex64", policy="array_api")
    assert not er.can_cast("int8", "float32", policy="array_api")


@pytest.mark.skipif(importlib.util.find_spec("array_api_strict") is None,
                    reason="array-api-strict is not installed")
def test_live_array_api_strict():
    import array_api_strict as xp

    pol = get_policy("array_api")
    for a, b in itertools.product(pol.formats, repeat=2):
        x, y = xp.ones(3, dtype=getattr(xp, a.name)), xp.ones(3, dtype=getattr(xp, b.name))
        try:
            got = str(xp.result_type(x, y)).split(".")[-1]
        except TypeError:
            got = None
        try:
            mine = result_type(f"{a.name}[3]", f"{b.name}[3]", policy="array_api").name
        except PromotionError:
            mine = None
        assert got == mine, (a.name, b.name)
