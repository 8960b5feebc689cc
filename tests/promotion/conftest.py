"""Shared helpers for the promotion tests: golden files."""

from __future__ import annotations

import os

import pytest

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


@pytest.fixture
def golden():
    """check(name, text): compare text with golden/<name>; EXACTREF_UPDATE_GOLDEN=1 rewrites."""

    def check(name: str, text: str) -> None:
        __tracebackhide__ = True
        path = os.path.join(GOLDEN, name)
        if os.environ.get("EXACTREF_UPDATE_GOLDEN") == "1" or not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        with open(path, encoding="utf-8") as f:
            expected = f.read()
        assert text == expected, (
            f"output differs from golden/{name}; rerun with EXACTREF_UPDATE_GOLDEN=1 if the "
            f"change is intended, and review the diff")

    return check
