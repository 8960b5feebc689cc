"""What ``exactref promotion`` (and ``er.explain``) cite as what each policy was checked
against: every path named there exists in this repository (``shared/`` and other folders
beside it are not part of it). The sources may name files of the library's own repository
(PyTorch's ``c10/core/ScalarType.cpp``)."""

from __future__ import annotations

import pathlib
import re

import pytest

from exactref.cli import main
from exactref.promotion import POLICY_NAMES, get_policy

ROOT = pathlib.Path(__file__).parents[2]
#: a path-like token: folders and a file with an extension, or a folder/number (seeds/004)
_PATH = re.compile(r"(?<![\w/.:])((?:\.\./)?[\w.-]+(?:/[\w.-]+)+)")


def _cited(text: str) -> list:
    return [m for m in _PATH.findall(text) if not m.startswith(("http", "www."))]


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_every_cited_path_exists(name):
    pol = get_policy(name)
    text = pol.checked
    missing = [p for p in _cited(text) if not (ROOT / p).exists()]
    assert not missing, f"{name} cites {missing}, not in the repository: {text}"


def test_the_aclnn_explanation_cites_its_tables_where_they_are(capsys):
    assert main(["promotion", "explain", "f16[3]", "bf16[3]", "--policy", "aclnn"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    cited = _cited(first)
    assert cited == ["tests/promotion/test_promotion_aclnn.py"], first
    assert "TENSOR_TENSOR" in (ROOT / cited[0]).read_text(encoding="utf-8")


def test_the_path_pattern_finds_the_old_citations():
    assert _cited("as published (shared/reference/aclnn_tensor_tensor.md, seeds/004)") == [
        "shared/reference/aclnn_tensor_tensor.md", "seeds/004"]
