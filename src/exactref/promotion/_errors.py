"""The one error type of this package, and how it words what went wrong."""

from __future__ import annotations

__all__ = ["PromotionError", "PromotionOverflowError"]


class PromotionError(TypeError):
    """A policy rejects these operands (or this operation on them).

    The message names the dtypes, the policy and the remedy. Attributes:

    ``policy``
        the policy's name (``"torch"``, ``"numpy"``, ...).
    ``dtypes``
        the formats involved, as :class:`exactref.Format` objects (Python scalars appear as
        their kind: ``"Python int"``).
    ``op``
        the operation's canonical name, or ``None`` for plain promotion.
    ``reason``
        ``"promotion"`` (no common dtype), ``"operation"`` (the op is not defined for the dtype),
        ``"inplace"`` (the result cannot be stored into ``self``), ``"value"`` (a Python scalar
        is out of range), ``"unsupported"`` (the policy does not know a dtype, or the ecosystem
        has no such operation: numpy's addcmul, kael's sqrt) or
        ``"unspecified"`` (the policy's source leaves the case open).
    ``library_error``
        ``(exception type name, message)`` that the library itself raises in this case, or
        ``None`` where there is no library to ask (a spec) or it raises nothing.
    ``remedy``
        the suggested fix, usually an explicit cast.
    """

    def __init__(self, message, *, policy, dtypes=(), op=None, reason="promotion",
                 library_error=None, remedy=None):
        super().__init__(message)
        self.policy = policy
        self.dtypes = tuple(dtypes)
        self.op = op
        self.reason = reason
        self.library_error = library_error
        self.remedy = remedy


class PromotionOverflowError(PromotionError, OverflowError):
    """A Python scalar out of range for the dtype the policy gives it (NEP 50's OverflowError).

    It is both a :class:`PromotionError` and an :class:`OverflowError`, so code written for the
    library (``except OverflowError``) keeps working.
    """
