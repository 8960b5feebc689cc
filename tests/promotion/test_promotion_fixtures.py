"""Every recorded cell of torch, numpy (+ ml_dtypes) and jax (x64 off and on) against the policies.

The fixtures are ground truth recorded by scripts/record_promotion_fixtures.py. A cell where the
library failed only because a kernel is missing, or where its function takes no Python scalar
in that position, is listed apart and not counted as a promotion error.
"""

from __future__ import annotations

import collections

import pytest

from exactref.promotion import _fixtures as F


@pytest.mark.parametrize("library", list(F.LIBRARIES))
def test_every_recorded_cell_agrees(library):
    verdicts = collections.Counter()
    wrong = []
    for cell in F.cells(library):
        verdict, detail = F.compare(cell)
        verdicts[verdict] += 1
        if verdict == "disagree":
            wrong.append(f"{cell.id}: {detail}")
        elif verdict == "api_differs":
            # documented: np.result_type / np.promote_types, never the ufuncs
            assert library.startswith("numpy_") and cell.op in ("result_type",
                                                                  "promote_types"), cell.id
        elif verdict == "kernel_missing" and library == "torch":
            _check_listed_gap(cell)
    assert not wrong, f"{len(wrong)} cells disagree:\n" + "\n".join(wrong[:40])
    # signature cells ask no promotion question (torch.maximum takes no Python scalar)
    asked = sum(verdicts.values()) - verdicts["signature"]
    assert verdicts["agree"] > 0.85 * asked, verdicts


def _check_listed_gap(cell):
    """A torch cell that failed for a missing CPU kernel is in CPU_KERNEL_GAPS."""
    from exactref.promotion._ops import OPS
    from exactref.promotion._torch import CPU_KERNEL_GAPS, META_DEVICE_DIFFERS

    got = F.ask(cell)
    if got[0] != "ok" or cell.op not in OPS:
        return  # in-place and addcmul cells: compared, not listed
    fam = OPS[cell.op]
    if fam in ("equality", "ordering", "logical"):
        got = ("ok", F._engine_resolve(cell).compute.name)
    assert got[1] in CPU_KERNEL_GAPS[fam] or (fam, got[1]) in META_DEVICE_DIFFERS, (cell.id, got)


@pytest.mark.parametrize("library", list(F.LIBRARIES))
def test_fixture_records_versions_and_coverage(library):
    data = F.load(library)
    assert data["versions"], "the fixture must name the versions it was recorded with"
    ops = {t["op"] for t in data["tables"]}
    for op in ("add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "eq", "lt",
               "bitwise_and", "logical_and", "promote_types", "maximum", "minimum", "fmax",
               "fmin", "fmod", "ne", "le", "gt", "ge", "atan2"):
        assert op in ops, f"{library}: no {op} table"
    shapes = {(t["rows"][0].endswith("[3]"), t["cols"][0].endswith("[]"))
              for t in data["tables"] if t["op"] == "add"}
    assert {(True, False), (True, True), (False, False)} <= shapes
    assert any(len(c[1]) == 3 for c in data["cases"]), "three-operand cases"
    case_ops = collections.Counter(c[0] for c in data["cases"])
    ternary = ("addcmul", "addcdiv", "clamp", "fma") if library == "torch" else ("clamp", "fma")
    for op in ("sqrt", "rsqrt", "reciprocal", "abs", "negative") + ternary:
        assert case_ops[op] >= 30, f"{library}: {case_ops[op]} {op} cases"
    for op in ("sqrt", "rsqrt", "reciprocal", "abs", "negative"):  # every dtype, both shapes
        assert case_ops[op] == 2 * len(data["dtypes"]) + 4, (library, op)


def test_new_formats_are_recorded():
    """int1 and uint1 (ml_dtypes 0.6) are in the numpy and jax fixtures, not in ml_dtypes
    0.5's; with 0.6, np.result_type refuses uint1 with int2 (DTypePromotionError) while np.add
    finds the int8 loop."""
    for library in ("numpy_ml_dtypes_0.6", "numpy_ml_dtypes_0.7", "jax", "jax_x64"):
        assert {"int1", "uint1"} <= set(F.load(library)["dtypes"]), library
    assert not {"int1", "uint1", "complex32", "bcomplex32"} & set(
        F.load("numpy_ml_dtypes_0.5")["dtypes"])
    cells = {(c.op, c.operands): c for c in F.cells("numpy_ml_dtypes_0.6")}
    refused = cells["result_type", ("uint1[3]", "int2[3]")]
    assert refused.error[0] == "DTypePromotionError"
    assert F.compare(refused)[0] == "api_differs"
    assert cells["add", ("uint1[3]", "int2[3]")].dtype == "int8"
