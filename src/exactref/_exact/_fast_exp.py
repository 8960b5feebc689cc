"""Enclosures (:mod:`._enclose`) of the exp family: to be written.

Each is registered with ``@encloses("name")`` (:func:`._enclose.encloses`).
"""

from __future__ import annotations

from ._enclose import encloses  # noqa: F401

__all__: list = []
