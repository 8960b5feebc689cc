"""The operations of exactref: thin declarations on the exact engine.

``exactref.arithmetic.basic`` holds :func:`add` and :func:`multiply`.
"""

from .basic import add, multiply

__all__ = ["add", "multiply"]
