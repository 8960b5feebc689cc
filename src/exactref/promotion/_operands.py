"""What an operand is, to a promotion policy: its tier, its format, and (for scalars) its value.

Four tiers matter across the ecosystems:

``array``
    an array of any library (numpy, torch, jax, ``er.Array``), or a dtype spec (taken as an
    array with dimensions). Its dtype and whether it is 0-d matter.
``python``
    a Python ``bool``, ``int``, ``float`` or ``complex`` (``fractions.Fraction`` counts as a
    float). Weak: its kind matters, and its value only where a policy says so.
``typed``
    a scalar that carries a dtype: :class:`Scalar` (Ascend's aclScalar) or a numpy scalar.

Operands can also be written as text (the CLI and the fixtures do): ``int64[3]`` is an int64
array with dimensions, ``int64[]`` a 0-d one, ``float32`` a dtype spec, ``0.5``/``2**63``/``1j``
Python scalars, ``float64(0.5)`` a typed scalar.

>>> operand("int64[]")
Operand('int64[]')
>>> operand("float64(0.5)").tier, operand(2**63).value
('typed', 9223372036854775808)
"""

from __future__ import annotations

import ast
import functools
import numbers
import operator
import re
from dataclasses import dataclass
from fractions import Fraction

from .._formats import Format, dtype

__all__ = ["Operand", "Scalar", "operand", "parse_value"]


@dataclass(frozen=True, eq=False)
class Scalar:
    """A scalar that carries its own dtype: Ascend's ``aclScalar``, or a numpy scalar.

    >>> import exactref as er
    >>> Scalar(0.5, "float16")
    Scalar(0.5, float16)
    >>> er.result_type(Scalar(2.5, "float32"), "float16[3]", policy="aclnn")
    exactref.float16
    """

    value: object
    dtype: Format

    def __init__(self, value, dtype_spec):
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "dtype", dtype(dtype_spec))

    def __repr__(self) -> str:
        return f"Scalar({self.value!r}, {self.dtype.name})"


@dataclass(frozen=True, eq=False)
class Operand:
    """One operand as policies see it. Build it with :func:`operand`."""

    tier: str  # "array" | "python" | "typed"
    format: Format | None = None  # None for Python scalars
    ndim: int | None = None  # arrays: number of dimensions (None: a dtype spec, dimensioned)
    value: object = None  # Python scalars and typed scalars
    pykind: str | None = None  # Python scalars: "bool", "int", "float", "complex"
    weak: bool = False  # jax: a weakly typed array (jnp.asarray(2.0))
    origin: str = ""  # "numpy scalar", "er.Scalar", "torch tensor", "dtype spec", ...
    label: str = ""

    @property
    def is_array(self) -> bool:
        return self.tier == "array"

    @property
    def zero_dim(self) -> bool:
        return self.tier == "array" and self.ndim == 0

    @property
    def library(self) -> str:
        """Where the operand came from: ``"numpy"``, ``"torch"``, ``"jax"``, ``"er"``
        (exactref's Array or Scalar), ``"python"`` (a Python scalar), or ``""`` (a dtype spec,
        text, another library's array)."""
        if self.tier == "python":
            return "python"
        for lib in ("numpy", "torch", "jax", "er"):
            if self.origin.startswith((lib + " ", lib + ".")):
                return lib
        return ""

    @property
    def kind(self) -> str:
        """The kind: the format's (``"float"``, ...) or the Python scalar's (``"float"``)."""
        return self.format.kind if self.format is not None else self.pykind

    def describe(self) -> str:
        """A short phrase: 'int64 array with dimensions', 'Python float 0.5', ..."""
        if self.tier == "array":
            if self.weak:
                return f"weakly typed {self.format.name} array"
            if self.zero_dim:
                return f"0-d {self.format.name} array"
            return f"{self.format.name} array with dimensions"
        if self.tier == "python":
            return f"Python {self.pykind} {self.label}"
        return f"typed scalar {self.label} ({self.origin})"

    def __repr__(self) -> str:
        return f"Operand({self.label!r})"


# ------------------------------------------------------------------------------ text notation
_ARRAY = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\[\s*([\d,\s]*)\]\s*$")
_TYPED = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*$")
_BINOPS = {ast.Pow: operator.pow, ast.Add: operator.add, ast.Sub: operator.sub,
           ast.Mult: operator.mul, ast.Div: operator.truediv}


def parse_value(text: str):
    """A Python literal, allowing ``2**63`` and ``-2**63-1`` (no names, no calls).

    >>> parse_value("2**64"), parse_value("-1.5e3"), parse_value("1j"), parse_value("True")
    (18446744073709551616, -1500.0, 1j, True)
    """

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float, complex)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
            return float(node.id)
        raise ValueError(f"not a number: {text!r}")

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not a number: {text!r}") from exc
    return ev(tree.body)


@functools.lru_cache(maxsize=4096)
def _from_text(text: str) -> Operand:
    m = _ARRAY.match(text)
    if m:
        fmt = dtype(m.group(1))
        dims = [d for d in m.group(2).replace(" ", "").split(",") if d]
        return Operand("array", fmt, ndim=len(dims), origin="array",
                       label=f"{fmt.name}[{','.join(dims)}]")
    m = _TYPED.match(text)
    if m:
        fmt = dtype(m.group(1))
        value = parse_value(m.group(2))
        return Operand("typed", fmt, value=value, origin="er.Scalar",
                       label=f"{fmt.name}({m.group(2).strip()})")
    try:
        value = parse_value(text)
    except ValueError:
        fmt = dtype(text)  # raises ValueError naming close matches
        return Operand("array", fmt, ndim=None, origin="dtype spec", label=fmt.name)
    return _python(value, text.strip())


# ------------------------------------------------------------------------------ classification
def _python(value, label=None) -> Operand:
    if isinstance(value, bool):
        kind = "bool"
    elif isinstance(value, numbers.Integral):
        kind, value = "int", int(value)
    elif isinstance(value, Fraction):
        kind = "float"  # a Fraction is a Python float to every policy: weak, kind float
    elif isinstance(value, numbers.Real):
        kind = "float"
    else:
        kind = "complex"
    return Operand("python", None, value=value, pykind=kind, origin=f"Python {kind}",
                   label=label if label is not None else repr(value))


_PYTHON_TYPES = {bool: "bool", int: "int", float: "float", complex: "complex"}


def operand(x) -> Operand:
    """Classify anything a caller may pass as an operand.

    >>> import numpy as np
    >>> [operand(v).tier for v in (np.ones(3), np.float32(1), 1.5, "bf16", Scalar(1, "int8"))]
    ['array', 'typed', 'python', 'array', 'typed']
    >>> operand(np.ones(())).zero_dim, operand("bf16").zero_dim
    (True, False)
    """
    if isinstance(x, Operand):
        return x
    if isinstance(x, str):
        return _from_text(x)
    if isinstance(x, Scalar):
        return Operand("typed", x.dtype, value=x.value, origin="er.Scalar",
                       label=f"{x.dtype.name}({x.value!r})")
    if _is_np_scalar(x):  # before the Python types: np.float64 subclasses float
        fmt = dtype(x.dtype)
        value = _scalar_value(x)
        return Operand("typed", fmt, value=value, origin="numpy scalar",
                       label=f"{fmt.name}({value!r})")
    if isinstance(x, (bool, int, float, complex, Fraction)):
        return _python(x)
    if isinstance(x, type):
        if x in _PYTHON_TYPES:
            kind = _PYTHON_TYPES[x]
            return Operand("python", None, value=None, pykind=kind, origin=f"Python {kind}",
                           label=kind)
        fmt = dtype(x)  # np.float32, ml_dtypes.bfloat16, ...
        return Operand("array", fmt, ndim=None, origin="dtype spec", label=fmt.name)
    if isinstance(x, Format):
        return Operand("array", x, ndim=None, origin="dtype spec", label=x.name)
    if hasattr(x, "dtype") and (hasattr(x, "shape") or hasattr(x, "ndim")):
        fmt = dtype(x.dtype)
        ndim = len(x.shape) if hasattr(x, "shape") else int(x.ndim)
        weak = bool(getattr(x, "weak_type", False))
        origin = _library_of(x)
        label = f"{fmt.name}[{','.join(str(int(d)) for d in x.shape)}]" if hasattr(
            x, "shape") else f"{fmt.name}[{'?' * bool(ndim)}]"
        return Operand("array", fmt, ndim=ndim, weak=weak, origin=origin, label=label)
    try:
        fmt = dtype(x)
    except ValueError as exc:
        raise TypeError(
            f"cannot use {x!r} (of type {type(x).__name__}) as an operand; expected an array, "
            f"a Python bool/int/float/complex, an exactref.Scalar or a dtype"
        ) from exc
    return Operand("array", fmt, ndim=None, origin="dtype spec", label=fmt.name)


def _is_np_scalar(x) -> bool:
    import numpy as np

    return isinstance(x, np.generic)


def _scalar_value(x):
    try:
        return x.item()
    except (TypeError, ValueError):  # ml_dtypes scalars without .item() support
        return float(x)


def _library_of(x) -> str:
    module = type(x).__module__ or ""
    for lib in ("torch", "jax", "jaxlib", "numpy", "exactref"):
        if module.startswith(lib):
            return {"jaxlib": "jax", "exactref": "er"}.get(lib, lib) + " array"
    return "array"
