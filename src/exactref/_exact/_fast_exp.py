"""Enclosures (:mod:`._enclose`) of the exp family: to be written."""

from __future__ import annotations

__all__ = ["ENCLOSURES"]

#: Enclosures by function name (see :mod:`._enclose`).
ENCLOSURES: dict = {}
