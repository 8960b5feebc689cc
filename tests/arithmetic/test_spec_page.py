"""The spec page of add and multiply: every Code block, run in order in one namespace, prints
exactly its Output. The page is kept verbatim in ``data/``; where the shared spec is beside the
checkout, the copy must equal it."""

from __future__ import annotations

import contextlib
import io
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
PAGE = HERE / "data" / "add_multiply_spec.txt"
SHARED = HERE.parents[2] / "shared" / "seeds" / "001_72b7b2f36025d4a6.txt"


def blocks(text: str):
    """``[(code, expected_output), ...]`` in page order."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "Code":
            j = i + 1
            while lines[j].strip() != "Output":
                j += 1
            code = "\n".join(lines[i + 1:j])
            k = j + 1
            while k < len(lines) and lines[k].strip() != "":
                k += 1
            out.append((code, "\n".join(lines[j + 1:k])))
            i = k
        else:
            i += 1
    return out


def test_copy_matches_shared_spec():
    if not SHARED.exists():
        pytest.skip("the shared spec is not beside this checkout")
    assert PAGE.read_text() == SHARED.read_text()


def test_page_has_every_block():
    assert len(blocks(PAGE.read_text())) == 9


def test_every_code_block_prints_its_output():
    pytest.importorskip("torch")
    namespace: dict = {}
    for n, (code, expected) in enumerate(blocks(PAGE.read_text())):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, f"<spec block {n}>", "exec"), namespace)
        assert buf.getvalue().rstrip("\n") == expected, f"block {n}:\n{code}"
