"""Audit targets: numpy, torch, jax, or a user's ``module:function``.

A target runs an op the way its library does, names the promotion policy its result dtype must
follow, and builds the reference its implementation may legitimately compute: the library's
equivalents from :mod:`exactref.equivalents` where they exist, else the operands cast to the
result format (as the library's type resolution does) and the op's exact value rounded once,
with the tolerance of its modelled implementations.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np

from .._array import asarray
from .._exact._rounding import Rounding
from .._exact._values import FloatValue
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from ..arithmetic import add, multiply

__all__ = ["Target", "get_target"]

_OPS = {"add": add, "multiply": multiply}
_FLOATS = ["float16", "float32", "float64", "bfloat16"]
_INTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _value_source(v, fmt: Format) -> str:
    """Python source for one value ``v`` of ``fmt``, exactly."""
    if fmt.kind == "complex":
        c = complex(v)
        return (f"complex(float.fromhex({FloatValue(c.real).hex()!r}), "
                f"float.fromhex({FloatValue(c.imag).hex()!r}))")
    if fmt.kind == "float":
        return f"float.fromhex({FloatValue(float(v)).hex()!r})"
    return repr(bool(v) if fmt.kind == "bool" else int(v))


def _literal(v, fmt: Format, wrap: str) -> str:
    """Python source that rebuilds the one-element operand ``v`` of ``fmt`` exactly."""
    return wrap.format(f"er.asarray([{_value_source(v, fmt)}], {fmt.name!r})")


def _array_literal(arr: np.ndarray, wrap: str) -> str:
    """Python source that rebuilds the array ``arr`` (of its own format) exactly."""
    fmt = resolve_dtype(arr.dtype)

    def nested(a):
        if a.ndim == 0:
            return _value_source(a[()], fmt)
        return "[" + ", ".join(nested(s) for s in a) + "]"

    return wrap.format(f"er.asarray({nested(np.asarray(arr))}, {fmt.name!r})")


class Target:
    name = "?"
    policy = "torch"
    has_alpha = False
    device = "cpu"
    library = "np"
    long_ops = ()

    def has_long(self, op, fmt) -> bool:
        """Whether the long-sum op is audited for this format."""
        return op in self.long_ops and fmt.kind in ("float", "complex", "int", "uint")

    def sum_dtype(self, fmt: Format) -> Format:
        """The result format of a sum over an axis (integers and bool sum into int64)."""
        return FORMATS["int64"] if fmt.is_integer else fmt

    def versions(self) -> dict:
        return {}

    def dtypes(self) -> list:
        raise NotImplementedError

    def run(self, op, x, y, alpha):
        raise NotImplementedError

    def format_of(self, actual) -> Format | None:
        return resolve_dtype(actual.dtype)

    def to_numpy(self, actual):
        return actual

    def unsupported(self, exc) -> bool:
        return isinstance(exc, NotImplementedError)

    def equivalents(self):
        try:
            return importlib.import_module(f"exactref.equivalents.{self.name}")
        except ImportError:
            return None

    def reference(self, op, x, y, alpha, expected: Format, **extra):
        if op in ("matmul", "sum", "bmm", "baddbmm"):
            return self.long_reference(op, x, y, alpha=alpha, **extra)
        eq = self.equivalents()
        fn = getattr(eq, op, None) if eq is not None else None
        if fn is not None:
            return fn(x, y, alpha=alpha) if alpha != 1 else fn(x, y)
        return generic_reference(op, x, y, alpha, expected)

    # ------------------------------------------------------------------ reproducers
    def long_reference(self, op, x, y, alpha=1, **extra):
        from .. import linalg

        if op == "matmul":
            return linalg.matmul(x, y)
        return linalg.sum(x, axis=y)

    def long_call(self, op, alpha, axis=None) -> str:
        """The arguments of a long-sum call in a reproducer, for both the library and its
        equivalent."""
        if op == "sum":
            return f"x, {axis!r}"
        if op == "baddbmm":
            return f"input, x, y, alpha={alpha.alpha!r}, beta={alpha.beta!r}"
        return "x, y"

    def long_reproducer(self, op, operands, alpha, axis=None) -> str:
        """Python source that reruns one element of a long-sum group on the slices of the
        operands it depends on (the library may pick another kernel for so small a problem)."""
        wrap = self.wrap_source()
        lines = ["import exactref as er", *self.imports(),
                 f"import exactref.equivalents.{self.name}_linalg as eq"]
        lines += [f"{name} = {_array_literal(v, wrap)}" for name, v in operands.items()]
        args = self.long_call(op, alpha, axis)
        lines.append(f"out = {self.call_source(op)}({args})")
        lines.append(f"ref = eq.{op}({args})")
        lines.append("print(out, ref.rounded, ref.covers(out).summary())")
        return "\n".join(lines)

    def call_source(self, op) -> str:
        raise NotImplementedError

    def wrap_source(self) -> str:
        return "{}.numpy()"

    def reproducer(self, op, xs, ys, alpha, xv, yv) -> str:
        wrap = self.wrap_source()
        lines = ["import exactref as er", *self.imports()]
        for name, spec, v in (("x", xs, xv), ("y", ys, yv)):
            fmt, kind = spec
            if fmt is None:
                lines.append(f"{name} = {kind!r}")
            else:
                src = _literal(v, fmt, wrap)
                lines.append(f"{name} = {src}" + ("[0]" if kind == "0d" else ""))
        a = "" if alpha == 1 else f", alpha={alpha!r}"
        lines.append(f"out = {self.call_source(op)}(x, y{a})")
        eq = self.equivalents()
        if eq is not None and hasattr(eq, op):
            lines.append(f"import exactref.equivalents.{self.name}")
            lines.append(f"ref = er.equivalents.{self.name}.{op}(x, y{a})")
        elif self.policy == "torch" and not isinstance(self, NumpyTarget):
            lines.append(f"ref = er.{op}(x, y{a})")
        else:
            lines.append("from exactref.audit import generic_reference")
            lines.append(f"ref = generic_reference({op!r}, x, y, {alpha!r}, "
                         f"er.result_type(x, y, policy={self.policy!r}, op={op!r}))")
        lines.append("print(out, ref.rounded, ref.covers(out).summary())")
        return "\n".join(lines)

    def imports(self) -> list:
        return ["import numpy as np"]


def generic_reference(op, x, y, alpha, expected: Format):
    """Operands cast to ``expected`` (to nearest even; integers wrap), then the op rounded once
    into it: what numpy's and most libraries' type resolution does before the loop runs."""
    rule = "wrap" if expected.component.is_integer else None
    # Note: a float cast into an integer format truncates toward zero, as C and numpy's
    # astype do; NaN and infinities have no integer value, and the group fails on them.
    mode = Rounding.TOWARD_ZERO if expected.component.is_integer else Rounding.NEAREST_EVEN

    def cast(v):
        if isinstance(v, (bool, int, float, complex)):
            if expected.kind != "complex" and isinstance(v, complex):
                return v
            return asarray(np.asarray(v), expected, overflow=rule, rounding=mode)
        return asarray(v, expected, overflow=rule, rounding=mode)

    fn = _OPS[op]
    if op == "add":
        return fn(cast(x), cast(y), alpha=alpha, dtype=expected)
    return fn(cast(x), cast(y), dtype=expected)


class NumpyTarget(Target):
    name = "numpy"
    policy = "numpy"

    def versions(self) -> dict:
        return {"numpy": np.__version__}

    def dtypes(self) -> list:
        return [f for f in FORMATS.values()]

    def run(self, op, x, y, alpha):
        fn = np.add if op == "add" else np.multiply
        return fn(x, y)

    def call_source(self, op) -> str:
        return {"add": "np.add", "multiply": "np.multiply"}[op]


class TorchTarget(Target):
    name = "torch"
    policy = "torch"
    has_alpha = True
    library = "torch"

    def __init__(self, device="cpu"):
        import torch

        self.torch = torch
        self.device = device

    def versions(self) -> dict:
        return {"torch": self.torch.__version__}

    def dtypes(self) -> list:
        return [f for f in FORMATS.values() if f.torch_name]

    def _tensor(self, v):
        if isinstance(v, (bool, int, float, complex)):
            return v
        t = asarray(v).torch()
        return t.to(self.device) if self.device != "cpu" else t

    long_ops = ("matmul", "sum", "bmm", "baddbmm")

    def run(self, op, x, y, alpha, **extra):
        if op == "matmul":
            return self.torch.matmul(self._tensor(x), self._tensor(y))
        if op == "bmm":
            return self.torch.bmm(self._tensor(x), self._tensor(y))
        if op == "baddbmm":
            return self.torch.baddbmm(self._tensor(extra["input"]), self._tensor(x),
                                      self._tensor(y), alpha=alpha.alpha, beta=alpha.beta)
        if op == "sum":
            return self.torch.sum(self._tensor(x), dim=y)
        fn = self.torch.add if op == "add" else self.torch.mul
        kwargs = {"alpha": alpha} if alpha != 1 else {}
        return fn(self._tensor(x), self._tensor(y), **kwargs)

    def long_reference(self, op, x, y, alpha=1, **extra):
        from ..equivalents import torch_linalg

        tx = self._tensor(x)
        if op == "matmul":
            return torch_linalg.matmul(tx, self._tensor(y))
        if op == "bmm":
            return torch_linalg.bmm(tx, self._tensor(y))
        if op == "baddbmm":
            return torch_linalg.baddbmm(self._tensor(extra["input"]), tx, self._tensor(y),
                                        alpha=alpha.alpha, beta=alpha.beta)
        return torch_linalg.sum(tx, dim=y)

    def to_numpy(self, actual):
        return asarray(actual)

    def unsupported(self, exc) -> bool:
        text = str(exc)
        return isinstance(exc, NotImplementedError) or "not implemented for" in text

    def call_source(self, op) -> str:
        return {"add": "torch.add", "multiply": "torch.mul", "matmul": "torch.matmul",
                "sum": "torch.sum", "bmm": "torch.bmm", "baddbmm": "torch.baddbmm"}[op]

    def wrap_source(self) -> str:
        return "{}.torch()"

    def imports(self) -> list:
        return ["import torch"]


class JaxTarget(Target):
    name = "jax"
    policy = "jax"
    library = "jnp"

    def __init__(self):
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp

    def versions(self) -> dict:
        return {"jax": self.jax.__version__}

    def dtypes(self) -> list:
        names = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
                 "bfloat16", "float32", "complex64", "float8_e4m3fn", "float8_e5m2"]
        return [FORMATS[n] for n in names]

    def run(self, op, x, y, alpha):
        fn = self.jnp.add if op == "add" else self.jnp.multiply
        conv = [v if isinstance(v, (bool, int, float, complex)) else self.jnp.asarray(v)
                for v in (x, y)]
        return fn(*conv)

    def to_numpy(self, actual):
        return np.asarray(actual)

    def call_source(self, op) -> str:
        return {"add": "jnp.add", "multiply": "jnp.multiply"}[op]

    def imports(self) -> list:
        return ["import jax.numpy as jnp"]


class FunctionTarget(Target):
    """A user's kernel ``module:function``, called as ``function(x, y)`` on numpy arrays (of
    ml_dtypes formats too) and audited against ``er.<op>`` under the torch policy."""

    policy = "torch"

    def __init__(self, spec: str, op_name: str | None):
        module, _, attr = spec.partition(":")
        if not attr:
            raise ValueError(f"expected module:function, got {spec!r}")
        if op_name not in _OPS:
            raise ValueError(
                f"auditing {spec} needs --op with the operation it computes: one of "
                f"{', '.join(_OPS)}")
        if "" not in sys.path:
            sys.path.insert(0, "")
        self.fn = getattr(importlib.import_module(module), attr)
        self.name = spec
        self.op_name = op_name

    def dtypes(self) -> list:
        return [FORMATS[n] for n in _FLOATS]

    def run(self, op, x, y, alpha):
        return np.asarray(self.fn(x, y))

    def equivalents(self):
        return None

    def call_source(self, op) -> str:
        module, _, attr = self.name.partition(":")
        return f"__import__({module!r}, fromlist=[{attr!r}]).{attr}"


def get_target(name: str, *, device="cpu", op_name=None) -> Target:
    if name == "numpy":
        return NumpyTarget()
    if name == "torch":
        return TorchTarget(device)
    if name == "jax":
        return JaxTarget()
    if ":" in name:
        return FunctionTarget(name, op_name)
    raise ValueError(
        f"unknown audit target {name!r}; expected numpy, torch, jax or module:function")
