"""Issue 21's measure on the zoo (tests/zoo/zoo_cases.py): exactref's default options raise no
false alarm on a correct kernel, catch every bug that torch.testing.assert_close at PyTorch's
default tolerances or the op's OpInfo tolerance catches, and more; the declared contract of
each case catches every bug and passes every correct kernel. zoo_measure.py computes the
verdicts (its docstring states the four checks); docs/zoo.md holds the table.

A case whose verdict is wrong only because a default another change brings has not landed
carries ``xfail={check: reason}`` in zoo_cases.py and is marked ``xfail(strict=True)`` here, so
the mark goes as soon as the default lands.
"""

from __future__ import annotations

import pytest
import zoo_measure as zm
from zoo_cases import CASES

import exactref as er

CORRECT = [c for c in CASES if c.correct]
BUGS = [c for c in CASES if not c.correct]


def params(cases, check):
    out = []
    for c in cases:
        marks = [pytest.mark.xfail(reason=c.xfail[check], strict=True)] if check in c.xfail \
            else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


def verdict(case):
    if case.torch:
        pytest.importorskip("torch")
    return zm.measure(case.name)


def test_the_zoo_spans_every_family_and_format():
    assert len(CASES) >= 60
    assert {c.family for c in CASES} == set(er.ops.FAMILIES)
    assert {"bfloat16", "float16", "float32"} <= {c.dtype for c in CASES}
    assert len(BUGS) >= 25 and len(CORRECT) >= 25
    assert len({c.name for c in CASES}) == len(CASES)
    for c in BUGS:
        assert c.bug, f"{c.name}: a bug case says what its bug is"


@pytest.mark.parametrize("case", params(CORRECT, "default"))
def test_default_raises_no_false_alarm(case):
    v = verdict(case)
    assert v.default, f"{case.name}: exactref's defaults reject a correct kernel " \
                      f"(error {v.error_ulps:g} ulps, tolerance {v.tol_median:g}/{v.tol_max:g})"


@pytest.mark.parametrize("case", params(BUGS, "default"))
def test_default_catches_what_assert_close_and_opinfo_catch(case):
    v = verdict(case)
    if v.assert_close and v.opinfo is not False:
        pytest.skip("neither assert_close nor OpInfo catches this bug (see the count below)")
    assert not v.default, f"{case.name} ({case.bug}): caught by assert_close or OpInfo, " \
                          f"missed by exactref's defaults (error {v.error_ulps:g} ulps, " \
                          f"tolerance {v.tol_median:g}/{v.tol_max:g})"


@pytest.mark.parametrize("case", params(BUGS, "declared"))
def test_declared_contract_catches_the_bug(case):
    v = verdict(case)
    assert not v.declared, f"{case.name} ({case.bug}): passes its declared contract " \
                           f"{case.contract} (error {v.error_ulps:g} ulps) {v.note}"


@pytest.mark.parametrize("case", params(CORRECT, "declared"))
def test_declared_contract_passes_the_correct_kernel(case):
    v = verdict(case)
    assert v.declared, f"{case.name}: rejected under its declared contract {case.contract} " \
                       f"(error {v.error_ulps:g} ulps) {v.note}"
    assert not v.note, v.note


def test_default_catches_more_than_assert_close():
    """Over the bugs measured here (torch's cases where torch is installed): every bug
    assert_close catches the defaults catch (xfailed cases aside), and strictly more."""
    bugs = [c for c in BUGS if "default" not in c.xfail]
    ac = {c.name for c in bugs if not zm.measure(c.name).assert_close}
    default = {c.name for c in bugs if not zm.measure(c.name).default}
    assert ac <= default, sorted(ac - default)
    assert len(default) > len(ac), (len(default), len(ac))
    # the bugs only exactref catches include errors of a few ulps and gross ones alike
    only = default - ac
    assert len(only) >= 8, sorted(only)


def test_the_table_renders(capsys):
    pytest.importorskip("torch")
    table = zm.markdown()
    assert table.count("\n") >= len(CASES) + 1
    with capsys.disabled():
        print("\n" + table + "\n" + str(zm.summary()))
