"""Audit targets: numpy, torch, jax, or a user's ``module:function``.

A target runs an op the way its library does (the op's counterpart from its registry record:
``torch.sub``, ``np.subtract``, ``jnp.subtract``), names the promotion policy its result dtype must
follow, and builds the reference its implementation may legitimately compute: the library's
equivalents from :mod:`exactref.equivalents` where they exist, else the operands converted to
the format the library's loop reads (as its type resolution converts them) and the op's exact
value rounded once with the keywords of the contract the record's counterpart declares
(:meth:`Target.contract`; none declared: the audit skips the op's groups unless told
otherwise), with the tolerance of its modelled implementations.
"""

from __future__ import annotations

import importlib
import inspect
import platform
import sys
import warnings

import numpy as np

from .._array import asarray
from .._exact import FloatValue, Rounding
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from ..ops import get_op, op_names
from ._calls import (
    KernelFault,
    KernelRaised,
    KernelUnsupported,
    binds,
    describe_call,
    says_unsupported,
    signature_text,
)
from ._contracts import call_reference, merged

__all__ = ["Target", "get_target", "generic_reference", "KernelFault", "EQUIVALENT",
           "SHAPED_PLANS"]

#: :meth:`Target.contract` where exactref's equivalents model the library's op (the
#: equivalent is the contract)
EQUIVALENT = "equivalent"
#: The plans (``OpSpec.plan``) whose groups are the op's own shapes, not elementwise arrays
#: (``"rows"``: the generic plan of a row kernel, from its record's ``AuditPlan.data``)
SHAPED_PLANS = ("shapes", "rows")

_FLOATS = ["float16", "float32", "float64", "bfloat16"]


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


#: A reproducer's last lines: the coverage summary, and exit status 1 where it is not covered
_CHECK_LINES = ["cov = ref.covers(out)", "print(out, ref.rounded, cov.summary())",
                "raise SystemExit(0 if cov.all() else 1)"]

#: Operands with at most this many elements are printed as literals; larger ones as the
#: bytes of their array, base64-encoded (exact, and a fraction of the size)
_LITERAL_MAX = 256


def _operand_source(v) -> str:
    """Python source that rebuilds a kernel's operand exactly: an array (as a literal, or its
    bytes in base64 where it is large), a shape tuple or a Python scalar (as its repr)."""
    if v is None or isinstance(v, (bool, int, float, complex, str, tuple)):
        return repr(v)
    arr = np.asarray(v)
    if arr.size <= _LITERAL_MAX:
        return _array_literal(arr, "{}.numpy()")
    import base64

    fmt = resolve_dtype(arr.dtype)
    data = base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")
    return (f"__import__('numpy').frombuffer(__import__('base64').b64decode({data!r}), "
            f"dtype=er.dtype({fmt.name!r}).np_dtype).reshape({tuple(arr.shape)!r})")


def _params_source(params: dict) -> str:
    return "".join(f", {k}={v!r}" for k, v in params.items())


class Target:
    name = "?"
    policy = "torch"
    has_params = True  # whether the audit tries the ops' parameters
    device = "cpu"
    library = "np"
    #: the library's own long ops that are no registry op (torch's bmm and baddbmm): their
    #: operands' names
    own_ops: dict = {}
    #: the module of the library's equivalents of the shape-planned ops (None: none)
    shaped_equivalents: str | None = None
    #: the ops' parameter names the library spells otherwise (torch's dim for axis)
    param_names: dict = {}
    #: the user's contract (:class:`exactref.Contract`: ``--contract``, ``--set``,
    #: ``--compute``, ...), merged over the library's own for each op; None: none declared
    user_contract = None

    def user_contract_for(self, op):
        """The user's contract for ``op`` (its per-op table winning), or None."""
        c = self.user_contract
        return None if not c else (c.for_op(op) or None)

    def has_long(self, op, fmt) -> bool:
        """Whether the long-sum op is audited for this format."""
        return self.shaped(op) and fmt.kind in ("float", "complex", "int", "uint")

    def shaped(self, op) -> bool:
        """Whether this target audits ``op`` on the op's own shapes: one of its own long ops,
        or a shape-planned op whose record gives the audit its groups' data
        (``AuditPlan.data``) and names a counterpart here with a contract (an equivalent of
        exactref's, or the counterpart's declared ``contract``)."""
        if op in self.own_ops:
            return True
        if op not in op_names() or get_op(op).plan not in SHAPED_PLANS:
            return False
        return get_op(op).audit.data is not None and self.counterpart(op) is not None and \
            self.contract(op) is not None

    def _equivalent(self, op):
        """exactref's equivalent of the library's ``op`` (None where there is none)."""
        shaped = op in self.own_ops or (op in op_names() and get_op(op).plan in SHAPED_PLANS)
        if shaped and self.shaped_equivalents is None:
            return None
        name = self.shaped_equivalents if shaped else self.name
        try:
            eq = importlib.import_module(f"exactref.equivalents.{name}")
        except ImportError:
            return None
        return getattr(eq, op, None)

    def contract(self, op):
        """How the reference models the library's ``op``: :data:`EQUIVALENT` where exactref's
        equivalents have it, else the contract its record's counterpart declares (the op's
        keywords that model the library's kernel), else None: no contract (the audit then
        skips the op's groups unless told to compare with the exact value)."""
        if self._equivalent(op) is not None:
            return EQUIVALENT
        if op not in op_names():
            return None
        cp = get_op(op).counterparts.of(self.library_key)
        return None if cp is None else cp.contract

    def _contract_keywords(self, op) -> dict:
        """The declared contract's keywords for the reference ({} for none, or an
        equivalent's), less the fields the user's contract sets (the user's win)."""
        contract = self.contract(op)
        keywords, _ = merged(op, contract if isinstance(contract, dict) else {},
                             self.user_contract)
        return keywords

    def _modelled(self, op):
        """exactref's equivalent of the library's ``op`` where the reference is the
        equivalent: there is one, and the user declares no field for the op. A declared
        contract replaces it with ``er.<op>`` under the record's ``Counterpart.contract``
        merged below the user's (the equivalents set their own keywords, which would win
        over any contract given to them)."""
        fn = self._equivalent(op)
        return fn if fn is not None and self.user_contract_for(op) is None else None

    def _declared_keywords(self, op) -> dict:
        """The record's ``Counterpart.contract`` for this library (even where an equivalent
        exists), less the fields the user's contract sets."""
        if op not in op_names():
            return {}
        cp = get_op(op).counterparts.of(self.library_key)
        declared = cp.contract if cp is not None and isinstance(cp.contract, dict) else {}
        return merged(op, declared, self.user_contract)[0]

    def sum_dtype(self, fmt: Format) -> Format:
        """The result format of a sum over an axis (integers and bool sum into int64)."""
        return FORMATS["int64"] if fmt.is_integer else fmt

    def versions(self) -> dict:
        return {}

    def dtypes(self) -> list:
        raise NotImplementedError

    def formats_hint(self, ops) -> str:
        """What to add to "nothing audited" for ``ops`` (--ops as given, None: the default):
        the formats each op runs in where the target knows them per op ("" here)."""
        return ""

    # ------------------------------------------------------------------ counterparts
    def counterpart(self, op):
        """The library's callable for ``op`` (from the op's record), or None."""
        spelled = get_op(op).counterparts.get(self.library_key)
        return None if spelled is None else spelled

    library_key = "numpy"

    def supports(self, op, specs, params) -> bool:
        """Whether the plan should contain this group (the library has the op, and a
        parameter it cannot take is not set)."""
        if self.shaped(op):
            return True
        spelled = self.counterpart(op)
        if spelled is None:
            return False
        return all(self.takes(op, name) for name in params)

    def takes(self, op, param: str) -> bool:
        """Whether the counterpart takes ``param`` (by its signature)."""
        fn = self.resolve(self.counterpart(op))
        if getattr(fn, "_method", False):
            return True
        try:
            return self.param_names.get(param, param) in inspect.signature(fn).parameters
        except (TypeError, ValueError):  # builtins without a signature: assume so
            return True

    def resolve(self, spelled: str):
        """A callable from a spelling like ``np.subtract`` or ``torch.Tensor.to``."""
        head, _, rest = spelled.partition(".")
        module = {"np": "numpy", "jnp": "jax.numpy"}.get(head, head)
        obj = importlib.import_module(module)
        parts = rest.split(".")
        if len(parts) == 2 and parts[0] in ("Tensor", "ndarray"):
            name = parts[1]

            def method(x, *args, **kw):
                return getattr(x, name)(*args, **kw)

            method._method = True
            return method
        for p in parts:
            obj = getattr(obj, p)
        return obj

    def library_value(self, v):
        """A parameter value as the library takes it (a format name becomes its dtype)."""
        if isinstance(v, str) and v in FORMATS:
            return self.library_dtype(FORMATS[v])
        return v

    def library_dtype(self, fmt: Format):
        return fmt.np_dtype

    def operand(self, v):
        """An operand as the library takes it (arrays converted; scalars as they are)."""
        return v

    def run(self, op, operands, params):
        if self.shaped(op):
            return self.run_long(op, operands, params)
        fn = self.resolve(self.counterpart(op))
        # an absent optional operand is passed as None (np.clip needs both bounds named)
        args = [self.operand(v) for v in operands]
        kw = {self.param_names.get(k, k): self.library_value(v) for k, v in params.items()}
        with warnings.catch_warnings():  # the library's warnings are not the audit's business
            warnings.simplefilter("ignore")
            if getattr(fn, "_method", False) and kw:
                return fn(*args, *kw.values())
            return fn(*args, **kw)

    def run_long(self, op, operands, params):
        fn = self.resolve(self.counterpart(op))
        return fn(*[self.operand(v) for v in operands], **self.long_params(op, params))

    def format_of(self, actual) -> Format | None:
        return resolve_dtype(actual.dtype)

    def to_numpy(self, actual):
        return actual

    def unsupported(self, exc) -> bool:
        return isinstance(exc, NotImplementedError)

    def reference(self, op, operands, params, expected: Format):
        if self.shaped(op):
            return self.long_reference(op, operands, params)
        fn = self._modelled(op)
        if fn is not None:
            return fn(*operands, **params)
        return generic_reference(op, operands, {**params, **self._declared_keywords(op)},
                                 expected, self.policy, contract=self.user_contract_for(op))

    # ------------------------------------------------------------------ reproducers
    def long_reference(self, op, operands, params):
        fn = self._modelled(op)
        if fn is not None:
            return fn(*[self.operand(v) for v in operands], **self.long_params(op, params))
        return call_reference(op, operands, {**params, **self._declared_keywords(op)},
                              self.user_contract_for(op))

    def long_reproducer(self, op, operands, params) -> str:
        """Python source that reruns one element of a long-sum group on the slices of the
        operands it depends on (the library may pick another kernel for so small a problem)."""
        wrap = self.wrap_source()
        lines = ["import exactref as er", *self.imports(),
                 f"import exactref.equivalents.{self.name}_linalg as eq"]
        lines += [f"{name} = {_array_literal(v, wrap)}" for name, v in operands.items()]
        args = ", ".join(operands) + _params_source(self.long_params(op, params))
        lines.append(f"out = {self.call_source(op)}({args})")
        if self._modelled(op) is not None or op not in op_names():
            lines.append(f"ref = eq.{op}({args})")
        else:  # the record's op under the declared contract (the user's over the library's)
            own = ", ".join(operands) + _params_source({**params,
                                                       **self._declared_keywords(op)})
            user = self.contract_source(op)
            lines.append(f"ref = er.{op}({own}{', contract=' + user if user else ''})")
        lines += _CHECK_LINES
        return "\n".join(lines)

    def long_params(self, op, params) -> dict:
        """The parameters as the library spells them."""
        return {self.param_names.get(k, k): v for k, v in params.items()}

    def refuses(self, op, operands, params) -> str | None:
        """Why the target's equivalent raises for these operands (the library's own refusal,
        modelled), or None where it gives a reference."""
        fn = self._equivalent(op)
        if fn is None:
            return None
        try:
            fn(*operands, **params)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError,
                NotImplementedError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    def call_source(self, op) -> str:
        spelled = self.counterpart(op)
        return spelled if spelled is not None else op

    def wrap_source(self) -> str:
        return "{}.numpy()"

    def reproducer(self, op, specs, values, params) -> str:
        """Python source that reruns the worst element: its operands as literals, the library's
        call, and the reference."""
        wrap = self.wrap_source()
        spec = get_op(op)
        lines = ["import exactref as er", *self.imports()]
        names = []
        for name, (fmt, kind), v in zip(spec.operands, specs, values, strict=True):
            names.append(name)
            if fmt is None:
                lines.append(f"{name} = {kind!r}")
            else:
                src = _literal(v, fmt, wrap)
                lines.append(f"{name} = {src}" + (self.zero_dim_source if kind == "0d"
                                                  else ""))
        args = ", ".join(names) + _params_source(params)
        lines.append(self.reproducer_call(op, names, params))
        user = self.contract_source(op)
        if self._modelled(op) is not None:
            lines.append(f"import exactref.equivalents.{self.name}")
            lines.append(f"ref = er.equivalents.{self.name}.{op}({args})")
        elif self.policy == "torch" and not isinstance(self, NumpyTarget) and not \
                self._declared_keywords(op):
            lines.append(f"ref = er.{op}({args}{', contract=' + user if user else ''})")
        else:
            lines.append("from exactref.audit import generic_reference")
            model = {**params, **self._declared_keywords(op)}
            lines.append(f"ref = generic_reference({op!r}, [{', '.join(names)}], {model!r}, "
                         f"er.dtype({self._expected_source(op, names, params)}), "
                         f"{self.policy!r}{', contract=' + user if user else ''})")
        lines += _CHECK_LINES
        return "\n".join(lines)

    #: what makes a 0-d operand's one-element literal the 0-d operand the library got
    zero_dim_source = "[0]"

    def contract_source(self, op) -> str:
        """Python source of the user's contract for ``op`` (``er.Contract(...)``; "" for
        none)."""
        c = self.user_contract_for(op)
        return f"er.{c!r}" if c else ""

    def _expected_source(self, op, names, params) -> str:
        spec = get_op(op)
        if spec.loop == "none":
            return repr(next(iter(params.values())))
        return (f"er.result_type({', '.join(names)}, policy={self.policy!r}, "
                f"op={spec.promotion!r})")

    def reproducer_call(self, op, names, params) -> str:
        fn = self.counterpart(op)
        if fn.count(".") == 2 and fn.split(".")[1] in ("Tensor", "ndarray"):
            args = names[1:] + [self._param_literal(v) for v in params.values()]
            return f"out = {names[0]}.{fn.split('.')[2]}({', '.join(args)})"
        return f"out = {fn}({', '.join(names)}" + "".join(
            f", {k}={self._param_literal(v)}" for k, v in params.items()) + ")"

    def _param_literal(self, v) -> str:
        if isinstance(v, str) and v in FORMATS:
            return self.dtype_source(FORMATS[v])
        return repr(v)

    def dtype_source(self, fmt: Format) -> str:
        return f"er.dtype({fmt.name!r}).np_dtype"

    def imports(self) -> list:
        return ["import numpy as np"]


def environment(target: Target) -> dict:
    import ml_dtypes

    from .. import __version__

    env = {"exactref": __version__, "python": platform.python_version(),
           "platform": platform.platform(), "numpy": np.__version__,
           "ml_dtypes": ml_dtypes.__version__, "target": target.name,
           "device": target.device}
    env.update(target.versions())
    return env


def generic_reference(op, operands, params, expected: Format, policy: str = "torch",
                      contract=None):
    """Operands converted to the format the library's loop reads (to nearest even; integers
    wrap), then the op rounded once into ``expected``: what numpy's and most libraries' type
    resolution does before the loop runs. The loop's format is the output format, or, for
    comparisons and ``abs``, the operands' plain promotion. ``contract``: the user's
    :class:`exactref.Contract`, applied by the op (``er.<op>(..., contract=)``)."""
    from ..promotion import result_type

    spec = get_op(op)
    present = [v for v in operands if v is not None]
    if spec.loop == "none":
        loop = None
    elif spec.loop == "common":
        loop = result_type(*present, policy=policy)
    else:
        loop = expected
    kw = dict(params)
    if spec.loop != "none":
        kw["dtype"] = expected

    def cast(v):
        if v is None or loop is None:
            return v
        rule = "wrap" if loop.component.is_integer else None
        # Note: a float cast into an integer format truncates toward zero, as C and numpy's
        # astype do; NaN and infinities have no integer value, and the group fails on them.
        mode = Rounding.TOWARD_ZERO if loop.component.is_integer else Rounding.NEAREST_EVEN
        if isinstance(v, (bool, int, float, complex)):
            if loop.kind != "complex" and isinstance(v, complex):
                return v
            return asarray(np.asarray(v), loop, overflow=rule, rounding=mode)
        return asarray(v, loop, overflow=rule, rounding=mode)

    return call_reference(op, [cast(v) for v in operands], kw, contract)


class NumpyTarget(Target):
    name = "numpy"
    # the result dtype numpy's own promotion gives (the installed numpy, asked): a promotion
    # change in a new numpy or ml_dtypes release is no false FAIL here; the measured "numpy"
    # policy is compared with it in tests/promotion (--policy numpy checks it here)
    policy = "numpy_installed"
    library_key = "numpy"

    def versions(self) -> dict:
        return {"numpy": np.__version__}

    def unsupported(self, exc) -> bool:
        """NumPy and ml_dtypes have no loop (or no cast) for the operands: no kernel."""
        return isinstance(exc, NotImplementedError) or (
            isinstance(exc, TypeError) and "Cannot cast" in str(exc))

    def dtypes(self) -> list:
        return [f for f in FORMATS.values() if f.encoding == "native"]  # not P3109's


class TorchTarget(Target):
    name = "torch"
    policy = "torch"
    library = "torch"
    library_key = "torch"
    own_ops = {"bmm": ("x", "y"), "baddbmm": ("input", "x", "y")}
    shaped_equivalents = "torch_linalg"
    param_names = {"axis": "dim"}

    def __init__(self, device="cpu"):
        import torch

        self.torch = torch
        self.device = _check_device(torch, device)

    def versions(self) -> dict:
        return {"torch": self.torch.__version__}

    def dtypes(self) -> list:
        return [f for f in FORMATS.values() if f.torch_name]

    def operand(self, v):
        if v is None or isinstance(v, (bool, int, float, complex, tuple)):
            return v  # a tuple is a shape (layer_norm's normalized_shape), not an array
        t = asarray(v).torch()
        return t.to(self.device) if self.device != "cpu" else t

    def library_dtype(self, fmt: Format):
        return getattr(self.torch, fmt.torch_name)

    def dtype_source(self, fmt: Format) -> str:
        return f"torch.{fmt.torch_name}"

    def run_long(self, op, operands, params):
        # torch.matmul/bmm/baddbmm/sum take the group's operands; sum names its axis dim;
        # a registry op runs its counterpart (torch.nn.functional.linear, conv1d, conv2d)
        if op in self.own_ops:
            fn = getattr(self.torch, op)
            return fn(*[self.operand(v) for v in operands], **self.long_params(op, params))
        return super().run_long(op, operands, params)

    def call_source(self, op) -> str:
        if op in self.own_ops:
            return f"torch.{op}"
        return super().call_source(op)

    def to_numpy(self, actual):
        return asarray(actual)

    def unsupported(self, exc) -> bool:
        text = str(exc)
        return isinstance(exc, NotImplementedError) or "not implemented for" in text

    def wrap_source(self) -> str:
        return "{}.torch()"

    def imports(self) -> list:
        return ["import torch"]


def torch_audits(op) -> bool:
    """Whether the torch target audits the shape-planned ``op`` (torch need not be installed:
    its record and exactref's equivalents say)."""
    probe = TorchTarget.__new__(TorchTarget)
    try:
        return probe.shaped(op)
    except ImportError:
        return False


def _torch_devices(torch) -> list:
    """The devices this torch build can compute on here (cpu first)."""
    names = ["cpu"]
    for kind in ("cuda", "xpu", "mps"):
        backend = getattr(torch.backends, kind, None) if kind == "mps" else \
            getattr(torch, kind, None)
        try:
            available = backend is not None and backend.is_available()
        except (RuntimeError, AssertionError):  # a backend compiled in without its driver
            available = False
        if available:
            count = getattr(backend, "device_count", lambda: 1)()
            names += [kind] + ([f"{kind}:{i}" for i in range(count)] if kind != "mps" else [])
    return names


def _check_device(torch, device: str) -> str:
    """``device`` if torch can compute there, else a ValueError (a usage error of the audit)
    that names the devices available."""
    available = _torch_devices(torch)
    here = f"the devices available here: {', '.join(available)}"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"--device {device!r} is not a torch device; {here}") from None
    if dev.type == "meta":
        raise ValueError(f"--device meta: meta tensors have shapes but no values, so there is "
                         f"nothing to check; audit on a device that computes, one of {here}")
    if dev.type == "cpu" or str(dev) in available:
        return device
    raise ValueError(f"--device {device!r}: this torch {torch.__version__} cannot compute on "
                     f"{dev.type} here (not built for it, or no such device); pass one of {here}")


class JaxTarget(Target):
    name = "jax"
    policy = "jax"
    library = "jnp"
    library_key = "jax"
    param_names = {"to": "new_dtype"}

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

    def operand(self, v):
        if v is None or isinstance(v, (bool, int, float, complex)):
            return v
        return self.jnp.asarray(v)

    def library_dtype(self, fmt: Format):
        return self.jnp.dtype(fmt.np_dtype)

    def to_numpy(self, actual):
        return np.asarray(actual)

    def imports(self) -> list:
        return ["import jax", "import jax.numpy as jnp"]


class FunctionTarget(Target):
    """A user's kernel ``module:function``, called as ``function(*operands)`` on numpy arrays
    (of ml_dtypes formats too) and audited against ``er.<op>`` under the torch policy."""

    policy = "torch"
    has_params = False

    def __init__(self, spec: str, op_name: str | None):
        #: the kernel's declared implementation model (``accuracy``, ``compute``): keywords of
        #: the reference, never of the kernel
        self.model = {}
        module, _, attr = spec.partition(":")
        if not attr or not module:
            raise ValueError(f"expected module:function, got {spec!r}")
        if op_name is None:
            raise ValueError(
                f"auditing {spec} needs --op with the operation it computes: one of "
                f"{', '.join(op_names())}")
        get_op(op_name)  # an unknown name raises with close matches
        if "" not in sys.path:
            sys.path.insert(0, "")
        try:
            self.fn = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            raise ValueError(f"cannot import {module!r} for the audit target {spec!r}: {exc}; "
                             f"run from the directory that holds it, or put it on PYTHONPATH"
                             ) from None
        except AttributeError:
            raise ValueError(f"module {module!r} has no function {attr!r}") from None
        if not callable(self.fn):
            raise ValueError(f"the audit target {spec!r} is {type(self.fn).__name__} "
                             f"({self.fn!r:.60}), not a function: expected module:function "
                             f"naming the kernel to call")
        self.name = spec
        self.op_name = op_name

    def shaped(self, op) -> bool:
        spec = get_op(op)
        return op == self.op_name and spec.plan in SHAPED_PLANS and spec.audit.data is not None

    def contract(self, op):
        """The kernel's declared contract's fields (never None: a kernel is audited against
        what it declares, the ops' defaults where it declares nothing)."""
        return self.model

    def _contract_keywords(self, op) -> dict:
        return {}  # the user's contract is all there is, passed as contract=

    def _declared_keywords(self, op) -> dict:
        return {}  # no library's Counterpart.contract: a kernel is what it declares

    def _equivalent(self, op):
        return None

    def dtypes(self) -> list:
        return [FORMATS[n] for n in _FLOATS]

    def supports(self, op, specs, params) -> bool:
        return True

    def unsupported(self, exc) -> bool:
        """A kernel that says it has no implementation for the operands' formats
        (:func:`~exactref.audit._calls.says_unsupported`) is reported apart, as torch's
        missing kernels are; every other exception is the kernel's failure."""
        return isinstance(exc, NotImplementedError)

    def call(self, args, kwargs):
        """The kernel called as ``fn(*args, **kwargs)``: its own exception becomes
        :class:`KernelUnsupported` where it says it has no implementation for the formats,
        else :class:`KernelRaised` with its type, message and the call that was made."""
        try:
            return self.fn(*args, **kwargs)
        except Exception as exc:
            call = describe_call(self.name.partition(":")[2], args, kwargs)
            if binds(self.fn, args, kwargs) is False:
                raise KernelRaised(
                    f"the kernel {self.name} cannot be called as the audit calls a "
                    f"{self.op_name} kernel, {call} ({type(exc).__name__}: {exc}); it takes "
                    f"{signature_text(self.fn)}: wrap it to take these operands and keywords "
                    f"(docs/audit.md, 'The call a kernel receives')", exc) from None
            if says_unsupported(exc, args):
                raise KernelUnsupported(f"{type(exc).__name__}: {exc}") from None
            raise KernelRaised(f"the kernel {self.name} raised {type(exc).__name__}: {exc} "
                               f"(called as {call})", exc) from None

    def run(self, op, operands, params):
        # an absent optional operand is None where a later one is present (clamp(x, None,
        # hi): the kernel must tell min from max), left out at the end (clamp(x, lo))
        args = list(operands)
        while args and args[-1] is None:
            args.pop()
        call = get_op(op).audit.call
        out = self.call(args, {k: v for k, v in params.items() if not call or k in call})
        if out is None or not hasattr(out, "shape") and not isinstance(out, (list, tuple)):
            raise KernelFault(f"the kernel {self.name} returned {type(out).__name__} "
                              f"({out!r:.60}), not an array (a fault of the kernel)")
        return np.asarray(out)

    run_long = run

    def long_reference(self, op, operands, params):
        return call_reference(op, operands, params, self.user_contract_for(op))

    def reproducer(self, op, specs, values, params) -> str:
        return super().reproducer(op, specs, values, params)

    def call_source(self, op) -> str:
        module, _, attr = self.name.partition(":")
        return f"__import__({module!r}, fromlist=[{attr!r}]).{attr}"

    def reproducer_call(self, op, names, params) -> str:
        return f"out = {self.call_source(op)}({', '.join(names)})"

    def long_reproducer(self, op, operands, params) -> str:
        """Python source that reruns the kernel on the operands the failing element reads
        (a whole row, a row and a column, a whole group: ``operands``, by name) and checks
        the result against the reference under the declared contract."""
        lines = ["import exactref as er", *self.imports()]
        for name, v in operands.items():
            lines.append(f"{name} = {_operand_source(v)}")
        args = ", ".join(operands) + _params_source(params)
        lines.append(f"out = {self.call_source(op)}({args})")
        user = self.contract_source(op)
        lines.append(f"ref = er.{op}({args}{', contract=' + user if user else ''})")
        lines += _CHECK_LINES
        return "\n".join(lines)


#: How to install each library target's package when it is missing.
_INSTALL = {"torch": "pip install torch (or pip install 'exactref[torch]'; the CPU build: "
                     "pip install torch --index-url https://download.pytorch.org/whl/cpu)",
            "jax": "pip install jax",
            "torchao": "pip install 'exactref[torchao]' (torchao==0.18.0, and torch)",
            "onnxruntime": "pip install 'exactref[onnxruntime]' (onnxruntime and onnx)",
            "onnx": "pip install 'exactref[onnxruntime]' (onnxruntime and onnx)",
            "openvino": "pip install 'exactref[openvino]'",
            "tensorflow": "pip install 'exactref[tensorflow]' (tensorflow-cpu)"}

#: The inference runtimes' targets: name -> the module of exactref.audit that holds it (each
#: an optional extra; :mod:`exactref.audit._runtime`)
RUNTIMES = {"onnxruntime": "_onnxruntime", "openvino": "_openvino", "tensorflow": "_tensorflow"}


def _library_target(name, make):
    """``make()``, or an ImportError that names the missing package and how to install it."""
    try:
        return make()
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in ("torch", "jax", "jaxlib", "torchao", "onnx", *RUNTIMES):
            raise
        raise ImportError(f"the {name} target needs {missing}, which is not installed here: "
                          f"{_INSTALL.get(missing, _INSTALL[name])}; or audit another target "
                          f"(numpy needs nothing more)") from None


def get_target(name: str, *, device="cpu", op_name=None) -> Target:
    if name == "numpy":
        return NumpyTarget()
    if name == "torch":
        return _library_target("torch", lambda: TorchTarget(device))
    if name == "jax":
        return _library_target("jax", JaxTarget)
    if name == "torchao":  # its MX and NVFP4 quantizers (an optional extra)
        def make():
            from ._torchao import TorchaoTarget

            return TorchaoTarget()

        return _library_target("torchao", make)
    if name in RUNTIMES:
        def make():
            module = importlib.import_module(f"exactref.audit.{RUNTIMES[name]}")
            return module.TARGET(device)

        return _library_target(name, make)
    if ":" in name:
        return FunctionTarget(name, op_name)
    raise ValueError(
        f"unknown audit target {name!r}; expected numpy, torch, jax, torchao, "
        f"{', '.join(RUNTIMES)} or module:function")
