"""The pytest plugin explains ``assert er.add(x, y) == x + y`` with numpy operands as it does
for lists and tensors (numpy compared the Result element by element before, and the assert
failed on "the truth value of an array ... is ambiguous")."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

import exactref as er

# imported before pytester snapshots sys.modules: numpy cannot be imported twice in one process
import exactref.testing._plugin  # noqa: F401

pytest_plugins = ["pytester"]

CASES = '''
import numpy as np
import exactref as er

def test_numpy_result_on_the_left():
    x, y = np.float32([1.0, 2.0]), np.float32([0.5, 0.25])
    assert er.add(x, y) == x + y

def test_numpy_result_on_the_right():
    x, y = np.float32([1.0, 2.0]), np.float32([0.5, 0.25])
    assert x + y == er.add(x, y)

def test_numpy_any_of():
    x, y = np.float32([1.0, 2.0]), np.float32([0.5, 0.25])
    assert x + y == er.any_of(er.add(x, y), er.add(x, y))
'''


def _plugin():
    points = importlib.metadata.entry_points(group="pytest11")
    return "exactref" if any(p.name == "exactref" for p in points) \
        else "exactref.testing._plugin"


def test_comparisons_with_numpy_arrays_get_the_plugins_hint(pytester):
    pytester.makepyfile(test_cases=CASES)
    run = pytester.runpytest("-p", _plugin(), "-p", "no:cacheprovider",
                             "-W", "ignore::pytest.PytestAssertRewriteWarning")
    assert run.parseoutcomes() == {"failed": 3}
    out = run.stdout.str()
    assert "truth value" not in out and "ambiguous" not in out
    # the failures' own explanations (lines "E ..."; under CI=true pytest repeats them in the
    # short summary too)
    body = "\n".join(line for line in out.splitlines() if line.startswith("E "))
    assert body.count("an exact reference (Result) on one side of ==") == 2
    assert body.count("an exact reference (AnyOf) on one side of ==") == 1
    assert body.count("References compare as objects, not values: assert "
                      "result.covers(actual).all(), or use exactref.testing.assert_covers") == 3


def test_results_are_not_compared_element_by_element():
    x = np.float32([1.0, 2.0])
    r = er.add(x, x)
    assert (r == x + x) is False and (x + x == r) is False and (x != r) is True
    with pytest.raises(TypeError, match="does not support ufuncs"):
        np.add(r, 1)
