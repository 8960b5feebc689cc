"""Enclosures (:mod:`._enclose`) of the log family: to be written."""

from __future__ import annotations

__all__ = ["ENCLOSURES"]

#: Enclosures by function name (see :mod:`._enclose`).
ENCLOSURES: dict = {}
