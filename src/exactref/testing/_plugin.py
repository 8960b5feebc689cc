"""The pytest plugin: a failing ``assert result.covers(out).all()`` explains itself.

Registered as the ``pytest11`` entry point ``exactref`` (without it: ``pytest -p
exactref.testing._plugin``). pytest's assertion rewriting keeps the intermediate values of a
failing ``assert`` (``result.covers``, the Coverage, its ``all``) in the test's frame; when the
assertion fails, this plugin finds the Coverage among them and adds the report of
:func:`exactref.testing.assert_covers` to the error as a note, under pytest's own explanation:

.. code-block:: text

    E       assert False
    E        +  where False = all()
    ...
    E       Tensor-likes are not covered by the exact reference!
    E
    E       Mismatched elements: 1 / 4 (25.0%)
    E       Greatest distance outside the allowed interval: 1 ulp at index (1, 1) (...)

``pytest_assertrepr_compare`` explains a comparison with a Coverage or a Result on one side
(``assert out == result`` compares objects, not values).

**The contract.** Every test runs under the project's declared contract (the ambient contract
of :func:`exactref.use_contract`): the ``[tool.exactref]`` table of the nearest
pyproject.toml at or above pytest's root directory, then the TOML file of
``--exactref-contract FILE`` (its fields winning), then a test's own
``@pytest.mark.exactref_contract(order="sequential", ...)`` (winning over both). Each op call
applies the fields it has; its own keywords and ``contract=`` win over the ambient one.

Importing this module costs what ``import exactref`` costs, and pytest (already loaded when
pytest loads the plugin); nothing else.
"""

from __future__ import annotations

import pytest

from .._result import Coverage

_PREFIX = "@py_assert"  # pytest's names for the intermediate values of a rewritten assert
_MARK = "_exactref_explained"
#: the marker that declares a test's own contract
CONTRACT_MARK = "exactref_contract"
_CONTRACT_KEY = pytest.StashKey()


def pytest_addoption(parser):
    group = parser.getgroup("exactref")
    group.addoption("--exactref-contract", metavar="FILE", default=None,
                    help="a TOML file of exactref contract fields every test runs under (over "
                         "[tool.exactref] of the nearest pyproject.toml)")


def pytest_configure(config):
    """The session's contract: ``[tool.exactref]``, then ``--exactref-contract FILE``."""
    from .._contract import Contract

    config.addinivalue_line(
        "markers", f"{CONTRACT_MARK}(**fields): the exactref contract this test's op calls run "
                   f"under (over [tool.exactref] and --exactref-contract)")
    contract = Contract.from_pyproject(str(config.rootpath))
    path = config.getoption("--exactref-contract", default=None)
    if path:
        contract = contract | Contract.from_toml(path)
    config.stash[_CONTRACT_KEY] = contract


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """The test body under the session's contract and its own marker's."""
    contract = _item_contract(item)
    if not contract:
        yield
        return
    from .._contract import use_contract

    with use_contract(contract):
        yield


def _item_contract(item):
    from .._contract import Contract

    contract = item.config.stash.get(_CONTRACT_KEY, None) or Contract()
    for mark in reversed(list(item.iter_markers(name=CONTRACT_MARK))):  # the closest wins
        fields = dict(mark.kwargs)
        if mark.args:
            fields = {**Contract.from_mapping(mark.args[0]).fields(), **fields} if not \
                isinstance(mark.args[0], Contract) else {**mark.args[0].fields(), **fields}
        contract = contract | Contract.from_mapping(fields)
    return contract


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Before pytest formats a failure: add the coverage report to a failed assert."""
    excinfo = call.excinfo
    if excinfo is not None and isinstance(excinfo.value, AssertionError):
        _annotate(excinfo.value, excinfo.tb)
    return None  # pytest's own implementation makes the report


def pytest_assertrepr_compare(config, op, left, right):
    """Explain ``==`` (or any comparison) with a Coverage or a Result on one side."""
    for side in (left, right):
        if isinstance(side, Coverage):
            # the report itself comes as a note (pytest_runtest_makereport): the Coverage is
            # one of the assert's intermediate values
            return [f"{_short(left)} {op} {_short(right)}",
                    f"a Coverage on one side of {op}: {side.summary()}",
                    "Coverage objects compare as objects: assert coverage.all()"]
        if _is_reference(side):
            return [f"{_short(left)} {op} {_short(right)}",
                    f"an exact reference ({type(side).__name__}) on one side of {op}",
                    "References compare as objects, not values: assert "
                    "result.covers(actual).all(), or use exactref.testing.assert_covers"]
    return None


# ------------------------------------------------------------------------------ internals
def _short(obj, size: int = 80) -> str:
    text = repr(obj)
    return text if len(text) <= size else text[: size - 3] + "..."


def _is_reference(obj) -> bool:
    return callable(getattr(obj, "covers", None)) and hasattr(obj, "rounded")


def _innermost_locals(tb) -> dict:
    if tb is None:
        return {}
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_locals


def _intermediates(f_locals):
    """Coverages and references among a rewritten assert's intermediate values."""
    coverages, references = [], []
    for name, value in f_locals.items():
        if not name.startswith(_PREFIX):
            continue
        owner = getattr(value, "__self__", None)  # a bound method: coverage.all, result.covers
        for obj in (value, owner):
            if isinstance(obj, Coverage) and all(obj is not c for c in coverages):
                coverages.append(obj)
            elif _is_reference(obj) and all(obj is not r for r in references):
                references.append(obj)
    return coverages, references


def _reference_for(coverage, references):
    """The Result (or AnyOf) behind ``coverage``: its own back-reference where it keeps one,
    else the only reference of the same shape and format in the assert."""
    own = getattr(coverage, "reference", None)
    if own is not None:
        return own
    same = [r for r in references
            if r.rounded.shape == coverage.shape and r.rounded.dtype is coverage.format]
    return same[0] if len(same) == 1 else None


def _report(coverage, expected) -> list[str]:
    from . import _explain

    # an AnyOf lists each alternative's interval, which needs the actual values again
    actual = getattr(coverage, "_actual", None) if hasattr(expected, "results") else None
    return _explain(coverage, expected, actual)


def _annotate(exc: AssertionError, tb) -> None:
    if getattr(exc, _MARK, False):
        return
    try:
        coverages, references = _intermediates(_innermost_locals(tb))
        failed = [c for c in coverages if not c.all()]
        notes = []
        for c in failed:
            reference = _reference_for(c, references)
            lines = _report(c, reference)
            if reference is None:
                lines.append("(the reference value and the inputs show when the assert names the "
                             "Result: assert result.covers(out).all(), or use "
                             "exactref.testing.assert_covers(out, result))")
            notes.append("\n".join(lines))
    except Exception as err:  # never let the explanation hide the failure
        notes = [f"(exactref could not explain this failure: {type(err).__name__}: {err})"]
    if not notes:
        return
    setattr(exc, _MARK, True)
    text = "\n\n".join(notes)
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note("\n" + text)
    else:
        exc.args = (f"{exc.args[0] if exc.args else ''}\n\n{text}",) + tuple(exc.args[1:])
