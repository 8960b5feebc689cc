"""The sentences of an explanation: each dimension's value in words a kernel author uses."""

from __future__ import annotations

from ..arithmetic import ACCURACY_PRESETS

__all__ = ["condition", "contract_text", "preset_label", "bound_text"]

#: How each library's preset is named in a sentence.
_PRESET_LABELS = {
    "correct": "correct rounding", "mainstream": "the mainstream libraries' bound", "glibc": "glibc", "glibc_libmvec": "glibc's libmvec",
    "sleef_u10": "SLEEF u10", "sleef_u35": "SLEEF u35", "cuda": "CUDA",
    "cuda_intrinsics": "CUDA's intrinsics (-use_fast_math)", "numpy": "numpy",
}

_ORDERS = {
    "sequential": "one after another (sequential order)",
    "pairwise": "in pairwise order",
    "library": "in an order real libraries use",
    "any": "in some order (any order)",
}
_ALGORITHMS = {
    "two-pass": "in two passes (the mean first)",
    "welford": "by Welford's running update",
    "one-pass": "in one pass (the mean of squares less the squared mean, unstable under "
                "cancellation)",
    "chan": "by Chan's pairwise update",
    "stable": "by a stable algorithm (two-pass, Welford or Chan)",
}
_FLUSH = {
    "inputs": "subnormal inputs are flushed to zero",
    "outputs": "subnormal outputs are flushed to zero",
    "both": "subnormal inputs and outputs are flushed to zero",
}
_OVERFLOW = {
    "saturate": "an overflowing result saturates to the largest finite value",
    "ieee": "an overflowing result becomes an infinity (IEEE)",
}
_DIVIDE = {
    "reciprocal": "the divide is a reciprocal then a multiply",
}


def preset_label(name: str) -> str:
    return _PRESET_LABELS.get(name, name)


def bound_text(preset: str, op: str, fmt: str) -> str:
    """A preset's documented bound of function ``op`` in format ``fmt`` ("1 ulp"), or ""."""
    try:
        p = ACCURACY_PRESETS[preset]
        b = p.bound(op, fmt)
    except (KeyError, AttributeError):
        return ""
    if b is None:
        return ""
    rounded = " from the correctly rounded result" if getattr(p, "against", "") == "rounded" \
        else ""
    if isinstance(b, (int, float)):
        return _ulps(float(b)) + rounded
    if isinstance(b, dict) and "ulps" in b:
        return f"{_ulps(float(b['ulps']))}{rounded}, more for large |x|"
    if isinstance(b, dict) and "rel" in b:
        return f"a relative error of {b['rel']:g}"
    return "an absolute error bound"


def _ulps(k: float) -> str:
    text = f"{k:.3g}"
    return f"{text} ulp" + ("" if text == "1" else "s")


def _accuracy(value, op: str, fmt: str) -> str:
    if value == "correct":
        return f"{op} is correctly rounded"
    if isinstance(value, str):
        bound = bound_text(value, op, fmt)
        return f"{op} is within {preset_label(value)}" + (f" ({bound})" if bound else "")
    return f"{op} is within {_ulps(float(value))} of the exact value"


def _specials(value) -> str:
    if value == "formula":
        return "special values follow the op's textbook formula in IEEE arithmetic, not its limits"
    return f"special values follow {value!r}"


#: Per dimension: (value, op, long op?, format) -> the clause after "covered only if".
_CLAUSES = {
    "compute": lambda v, op, long_op, fmt: (f"the {op} accumulates in {v}" if long_op else
                                            f"{op} computes in {v}"),
    "order": lambda v, op, long_op, fmt: f"the {op} adds its terms "
                                         f"{_ORDERS.get(v, f'in {v} order')}",
    "algorithm": lambda v, op, long_op, fmt: "the variance is computed "
                                             f"{_ALGORITHMS.get(v, f'by {v}')}",
    "flush": lambda v, op, long_op, fmt: _FLUSH.get(v, f"subnormals are flushed ({v})"),
    "divide": lambda v, op, long_op, fmt: _DIVIDE.get(v, f"the divide is done as {v!r}"),
    "fused": lambda v, op, long_op, fmt: ("its multiply-adds are fused (one rounding each)"
                                          if v is True else
                                          "its steps are not fused (each one rounded)"
                                          if v is False else f"fused={v!r}"),
    "overflow": lambda v, op, long_op, fmt: _OVERFLOW.get(v, f"overflow follows the {v!r} rule"),
    "scale_rule": lambda v, op, long_op, fmt: f"the block scale follows the {v} rule",
    "specials": lambda v, op, long_op, fmt: _specials(v),
    "accuracy": lambda v, op, long_op, fmt: _accuracy(v, op, fmt),
    "padding_taps": lambda v, op, long_op, fmt: (
        "the padded taps are skipped (never multiplied)" if v == "skip" else
        "the padded taps multiply zeros" if v == "zeros" else f"padding_taps={v!r}"),
    "params": lambda v, op, long_op, fmt: " and ".join(
        f"{name} is stored in {f} first" for name, f in sorted(dict(v).items())),
}


def condition(dim: str, value, op: str, long_op: bool, fmt: str = "float32") -> str:
    """What it means for ``op`` that contract dimension ``dim`` holds ``value``: the clause
    after "covered only if"."""
    clause = _CLAUSES.get(dim)
    return clause(value, op, long_op, fmt) if clause else f"{dim}={value!r}"


def contract_text(changes: dict) -> str:
    """``compute='bfloat16', order='pairwise'``: the changed fields as keywords."""
    return ", ".join(f"{k}={v!r}" for k, v in sorted(changes.items()))
