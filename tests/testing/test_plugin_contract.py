"""The pytest plugin's contract ([tool.exactref], --exactref-contract FILE, the
exactref_contract marker) and ``assert_covers(..., contract=)``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import exactref as er
import exactref.testing._plugin  # noqa: F401  (before pytester snapshots sys.modules)
from exactref.testing import assert_covers

pytest_plugins = ["pytester"]

INNER = '''
import pytest
import exactref as er

def _compute():
    r = er.sum(er.asarray([[1.0, 2.0]], "bfloat16"), axis=-1)
    return r.contract.fields().get("compute"), r.contract.fields().get("order")

def test_project():
    assert _compute() == ({want!r}, "pairwise")

@pytest.mark.exactref_contract(compute="float64")
def test_marker_wins():
    assert _compute() == ("float64", "pairwise")

def test_keywords_win():
    r = er.sum(er.asarray([[1.0, 2.0]], "bfloat16"), axis=-1, compute="float32")
    assert r.contract.fields()["compute"] == "float32"
'''


def _project(pytester, want):
    pytester.makepyprojecttoml('[tool.exactref]\ncompute = "bfloat16"\norder = "pairwise"\n')
    pytester.makepyfile(test_inner=INNER.format(want=want))


def test_the_project_contract_reaches_every_op_call(pytester):
    _project(pytester, "bfloat16")
    pytester.runpytest_inprocess().assert_outcomes(passed=3)


def test_a_contract_file_wins_over_the_project(pytester):
    _project(pytester, "float32")
    path = pytester.path / "kernel.toml"
    path.write_text('compute = "float32"\n')
    pytester.runpytest_inprocess("--exactref-contract",
                                 str(path)).assert_outcomes(passed=3)


def _bf16_sum():
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(ml_dtypes.bfloat16)
    acc = np.zeros(4, dtype=ml_dtypes.bfloat16)
    for k in range(64):  # accumulated in bfloat16, left to right
        acc = (acc.astype(np.float32) + x[:, k].astype(np.float32)).astype(ml_dtypes.bfloat16)
    return er.sum(x, axis=-1), acc


def test_assert_covers_under_a_contract():
    result, acc = _bf16_sum()
    with pytest.raises(AssertionError):
        assert_covers(acc, result)  # the default: a float32 accumulator
    assert_covers(acc, result, contract=er.Contract(compute="bfloat16"))
    assert_covers(acc, result, contract={"compute": "bfloat16", "order": "sequential"})
    with pytest.raises(AssertionError, match="Under the contract: compute='float32'"):
        assert_covers(acc, result, contract=er.Contract(compute="float32", order="sequential"))


def test_assert_covers_contract_needs_a_recomputable_reference():
    class Plain:
        rounded = None

        def covers(self, actual):
            raise AssertionError("not called")

    with pytest.raises(TypeError, match="cannot be recomputed under a contract"):
        assert_covers([1.0], Plain(), contract=er.Contract(order="sequential"))
    with pytest.raises(er.ContractError, match="unknown contract field 'colour'"):
        assert_covers(*_bf16_sum()[::-1], contract={"colour": "blue"})
