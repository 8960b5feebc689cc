"""The pytest plugin: what pytest prints for a failing ``assert result.covers(out).all()``.

Each case is a test in one inner pytest session (pytester, in process), run once with the plugin
and once without; the tests here read its output, failure by failure."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys

import pytest

# imported before pytester snapshots sys.modules: numpy cannot be imported twice in one process
import exactref.testing._plugin  # noqa: F401

pytest_plugins = ["pytester"]

CASES = '''
import exactref as er
from exactref.testing import assert_covers

def _bf16():
    x = er.asarray([[1.0, 2.0], [3.0, 2.0**-20]], "bfloat16")
    y = er.asarray([[0.1, 0.2], [0.3, 1.0]], "bfloat16")
    out = er.asarray([[1.1015625, 2.203125], [3.296875, 1.0078125]], "bfloat16")
    return er.add(x, y), out

def test_covers_all():
    result, out = _bf16()
    assert result.covers(out).all()

def test_coverage_variable():
    result, out = _bf16()
    cov = result.covers(out)
    assert cov.all()

def test_any_of():
    x, y = er.asarray([1.0], "bfloat16"), er.asarray([2.0**-8 + 2.0**-15], "bfloat16")
    up = er.add(x, y, rounding="toward_positive")
    down = er.add(x, y, rounding="toward_zero")
    assert er.any_of(up, down).covers(er.asarray([1.5], "bfloat16")).all()

def test_unrelated_failure():
    result, out = _bf16()
    cov = result.covers(out)
    assert not cov.all()
    assert 1 == 2

def test_compare_with_result():
    result, out = _bf16()
    assert out == result

def test_compare_coverage():
    result, out = _bf16()
    assert result.covers(out) == True

def test_assert_covers():
    result, out = _bf16()
    assert_covers(out, result)

def test_passes():
    result, out = _bf16()
    assert result.covers(result.rounded).all()
'''

_RUNS: dict = {}


def _plugin_args(on: bool):
    """``-p exactref`` once the pytest11 entry point is installed (loading the module under a
    second name would clash with it), the module's path before; ``-p no:exactref`` for off."""
    if not on:
        return ["-p", "no:exactref"]
    points = importlib.metadata.entry_points(group="pytest11")
    return ["-p", "exactref" if any(p.name == "exactref" for p in points)
            else "exactref.testing._plugin"]


def _run(pytester, on: bool = True):
    """The inner session's outcomes and its failure sections by test name (run once)."""
    if on not in _RUNS:
        pytester.makepyfile(test_cases=CASES)
        # the plugin module is imported already (see above): too late to rewrite its asserts
        run = pytester.runpytest(*_plugin_args(on), "-p", "no:cacheprovider",
                                 "-W", "ignore::pytest.PytestAssertRewriteWarning")
        parts = re.split(r"^_{3,} (\w+) _{3,}$", run.stdout.str(), flags=re.M)
        sections = {parts[i]: re.split(r"^=+ ", parts[i + 1], flags=re.M)[0]
                    for i in range(1, len(parts) - 1, 2)}
        _RUNS[on] = (run.parseoutcomes(), sections)
    return _RUNS[on]


def _lines(text: str) -> pytest.LineMatcher:
    return pytest.LineMatcher(text.splitlines())


def test_the_inner_session_ran_every_case(pytester):
    outcomes, sections = _run(pytester)
    assert outcomes == {"failed": 7, "passed": 1}
    assert "test_passes" not in sections


def test_a_failing_covers_assert_prints_the_report(pytester):
    _, sections = _run(pytester)
    _lines(sections["test_covers_all"]).fnmatch_lines([
        ">       assert result.covers(out).all()",
        "E       assert False",
        "E        +  where False = all()",
        "E        +    where all = Coverage(1 of 4 elements not covered; *).all",
        "E       Tensor-likes are not covered by the exact reference!",
        "E       Mismatched elements: 1 / 4 (25.0%)",
        "E       Greatest distance outside the allowed interval: 1 ulp at index (1, 1) "
        "(actual 1.0078125, allowed [1.0, 1.0])",
        "E       In hex: actual 0x1.02p+0, allowed [0x1p+0, 0x1p+0]",
        "E       Expected (the exact value rounded once): 1.0 (0x1p+0), tolerance 0.0",
        "E       Output format: bfloat16 (add; modelled implementations: exact, fused in float32)",
        "E       Input*",
    ])


def test_an_assert_on_a_coverage_variable_prints_what_it_knows(pytester):
    _, sections = _run(pytester)
    _lines(sections["test_coverage_variable"]).fnmatch_lines([
        ">       assert cov.all()",
        "E       Tensor-likes are not covered by the exact reference!",
        "E       Mismatched elements: 1 / 4 (25.0%)",
        "E       Greatest distance outside the allowed interval: 1 ulp at index (1, 1) *",
        "E       Output format: bfloat16*",
    ])


def test_any_of_in_an_assert_is_explained(pytester):
    _, sections = _run(pytester)
    _lines(sections["test_any_of"]).fnmatch_lines([
        "E       Mismatched elements: 1 / 1 (100.0%)",
        "E       Greatest distance outside the allowed interval: 63 ulp at index (0,) (actual 1.5,"
        " allowed [1.0078125, 1.0078125] or [1.0, 1.0])",
        "E       Output format: bfloat16 (add; *; any of 2 results)",
    ])


def test_other_failures_get_no_report(pytester):
    _, sections = _run(pytester)
    out = sections["test_unrelated_failure"]
    assert "E       assert 1 == 2" in out and "Tensor-likes" not in out


def test_comparisons_with_references_are_explained(pytester):
    _, sections = _run(pytester)
    _lines(sections["test_compare_with_result"]).fnmatch_lines([
        "E       assert exactref.Array(*) == Result(add: *",
        "E         an exact reference (Result) on one side of ==",
        "E         References compare as objects, not values: assert result.covers(actual).all(),"
        " or use exactref.testing.assert_covers",
    ])
    _lines(sections["test_compare_coverage"]).fnmatch_lines([
        "E       assert Coverage(1 of 4 elements not covered; *== True",
        "E         a Coverage on one side of ==: 1 of 4 elements not covered; *",
        "E         Coverage objects compare as objects: assert coverage.all()",
        "E       Tensor-likes are not covered by the exact reference!",
        "E       Mismatched elements: 1 / 4 (25.0%)",
    ])
    assert sections["test_compare_coverage"].count("Tensor-likes") == 1


def test_assert_covers_is_hidden_and_reported_once(pytester):
    _, sections = _run(pytester)
    out = sections["test_assert_covers"]
    _lines(out).fnmatch_lines([
        ">       assert_covers(out, result)",
        "E       AssertionError: Tensor-likes are not covered by the exact reference!",
        "E       Mismatched elements: 1 / 4 (25.0%)",
    ])
    assert out.count("Tensor-likes") == 1 and "__tracebackhide__" not in out
    assert "testing/__init__.py" not in out


def test_without_the_plugin_pytest_prints_only_its_own_explanation(pytester):
    outcomes, sections = _run(pytester, on=False)
    assert outcomes == {"failed": 7, "passed": 1}
    out = sections["test_covers_all"]
    assert "E        +    where all = Coverage(1 of 4 elements not covered; " in out
    assert "Tensor-likes" not in out


def test_imports_stay_light():
    """``import exactref.testing`` needs neither pytest nor hypothesis; the plugin module adds
    pytest (loaded already when pytest loads it), never torch, jax or hypothesis."""
    code = (
        "import sys\n"
        "import exactref.testing, exactref.testing.strategies\n"
        "loaded = [m for m in ('pytest', 'hypothesis', 'torch', 'jax') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "import exactref.testing._plugin\n"
        "loaded = [m for m in ('hypothesis', 'torch', 'jax') if m in sys.modules]\n"
        "assert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
