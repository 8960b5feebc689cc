"""What the inference runtimes' audit targets share (ONNX Runtime, OpenVINO, TensorFlow).

A runtime target audits every registry op its runtime has: the record's counterpart for the
runtime (``get_op(op).counterparts.<runtime>``, declared in the runtime's table,
:data:`exactref.ops._registry.RUNTIME_TABLES`) gives the runtime's call, the formats it has a
kernel for (``data["dtypes"]``), the parameters it takes (``data["params"]``: registry name ->
the runtime's attribute) and the contract that models its kernel. The subclass only builds and
runs the runtime's call (:meth:`RuntimeTarget.call`) and writes it as source
(:meth:`RuntimeTarget.call_lines`) for the reproducer; nothing here names an op.

The runtimes have no mixed-format kernels (an ONNX node's inputs share one type; OpenVINO's
and TensorFlow's ops likewise), so a runtime's groups are the same-format ones and the result
format is the operands' (every policy agrees there; ``policy`` is torch's for the bool of a
comparison and the float of an integer function, which the kernel lists exclude).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from ..ops import all_ops, get_op, op_names
from ._targets import Target

__all__ = ["RuntimeTarget", "call_key", "kernel_formats"]


def kernel_formats(cp) -> tuple:
    """The formats a runtime counterpart has a kernel for (``data["dtypes"]``), as Formats."""
    data = cp.data if isinstance(cp.data, dict) else {}
    return tuple(FORMATS[n] for n in data.get("dtypes", ()))


def call_key(op, operands, params) -> str:
    """A digest of one kernel call (the op, its operands' formats, shapes and bytes, its
    parameters): the key of a runtime's recorded output (``scripts/record_<runtime>_outputs.py``,
    the replay tests in tests/audit/test_<runtime>.py)."""
    import hashlib

    h = hashlib.sha256(op.encode())
    for v in operands:
        if v is None or not hasattr(v, "shape"):
            h.update(repr(v).encode())
            continue
        a = np.asarray(v)
        h.update(f"{resolve_dtype(a.dtype).name}{a.shape}".encode())
        h.update(a.copy(order="C").tobytes())
    h.update(repr(sorted(params.items())).encode())
    return h.hexdigest()[:20]


class RuntimeTarget(Target):
    """A runtime's ops, read off the records' counterparts for ``library_key``."""

    policy = "torch"
    has_params = True
    #: the runtime's Python package (its version is recorded in the report)
    package = ""

    @property
    def library(self) -> str:
        return self.library_key

    @property
    def default_ops(self) -> tuple:
        """Every registry op the runtime has (the default of ``exactref audit <runtime>``)."""
        return tuple(s.name for s in all_ops() if s.counterparts.of(self.library_key))

    def dtypes(self) -> list:
        found = {f for s in all_ops() if (cp := s.counterparts.of(self.library_key))
                 for f in kernel_formats(cp)}
        return [f for f in FORMATS.values() if f in found]

    def formats_hint(self, ops) -> str:
        """The formats each op of ``ops`` has a kernel for here (``data["dtypes"]``), e.g.
        "; on onnxruntime: exp runs in float16, float32, float64"."""
        names = [o for o in (ops or self.default_ops) if o in op_names()][:8]
        runs = [f"{o} runs in {', '.join(f.name for f in kernel_formats(cp)) or 'no format'}"
                if (cp := self._cp(o)) is not None else f"{o} is not in its table"
                for o in names]
        return f"; on {self.name}: {'; '.join(runs)}" if runs else ""

    def versions(self) -> dict:
        import importlib

        mod = importlib.import_module(self.package)
        return {self.package: getattr(mod, "__version__", "?")}

    # ------------------------------------------------------------------ planning
    def _cp(self, op):
        return get_op(op).counterparts.of(self.library_key) if op in op_names() else None

    def runtime_params(self, op) -> dict:
        """The registry's parameter names the runtime's op takes -> its own names."""
        cp = self._cp(op)
        data = cp.data if cp is not None and isinstance(cp.data, dict) else {}
        return dict(data.get("params", {}))

    def takes(self, op, param: str) -> bool:
        return param in self.runtime_params(op)

    #: the records' plans whose groups a runtime takes from the plan's own module (an affine
    #: quantizer's: scales, zero points and codes drawn together), as a custom kernel does
    own_plans = ("linear",)

    def supports(self, op, specs, params) -> bool:
        """Groups whose operands are arrays of one format the runtime has a kernel for (an
        absent optional operand aside), with parameters the runtime's op takes; an own plan's
        groups (:attr:`own_plans`) in a kernel format and a code format of ``data["codes"]``."""
        cp = self._cp(op)
        if cp is None:
            return False
        if get_op(op).plan in self.own_plans:
            codes = (cp.data if isinstance(cp.data, dict) else {}).get("codes", ())
            return specs[0][0] in kernel_formats(cp) and params.get("codes") in codes
        formats = {f for f, kind in specs if f is not None}
        if any(f is None and kind is not None for f, kind in specs) or len(formats) != 1:
            return False  # a Python scalar, or mixed formats: no runtime kernel takes them
        if formats.pop() not in kernel_formats(cp):
            return False
        return all(self.takes(op, name) for name in params)

    def has_long(self, op, fmt) -> bool:
        cp = self._cp(op)
        return cp is not None and self.shaped(op) and fmt in kernel_formats(cp)

    # ------------------------------------------------------------------ contracts
    #: the format of the group whose reference or reproducer is being built (set around the
    #: base's builders, which ask for an op's contract by the op alone)
    _fmt = None

    def declared(self, op, fmt=None) -> dict:
        """The table's contract for ``op`` in ``fmt`` (default: the group's): the op's
        ``contract`` with its ``data["formats"][fmt]`` entry over it (a runtime's kernels
        differ by format: float16 through inserted casts computes in float32, a bfloat16
        matmul accumulates in float32)."""
        cp = self._cp(op)
        if cp is None:
            return {}
        out = dict(cp.contract) if isinstance(cp.contract, dict) else {}
        data = cp.data if isinstance(cp.data, dict) else {}
        out.update(data.get("formats", {}).get(fmt or self._fmt, {}))
        return out

    def _generic_fields(self, op) -> tuple:
        """The declared fields the contract layer carries out for every op (``params``,
        ``flush``, ``convert``, and the compute format the inputs are converted into): they
        reach the reference as an ``er.Contract``, so an op without such a keyword of its own
        (softmax's flush) is modelled too."""
        from ._contracts import GENERIC

        return GENERIC + (("compute",) if "convert" in self.declared(op) else ())

    def _declared_keywords(self, op) -> dict:
        """The declared contract's op keywords, less the generic fields (in
        :meth:`user_contract_for`) and those the user's contract sets."""
        from ._contracts import merged

        generic = self._generic_fields(op)
        return merged(op, {k: v for k, v in self.declared(op).items() if k not in generic},
                      self.user_contract)[0]

    def user_contract_for(self, op):
        """The declared generic fields as an ``er.Contract``, the user's contract over it."""
        from .._contract import Contract

        user = super().user_contract_for(op)
        generic = {k: v for k, v in self.declared(op).items() if k in self._generic_fields(op)}
        if not generic:
            return user
        return Contract(**generic) | user if user else Contract(**generic)

    @staticmethod
    def _format_of(values):
        return next((resolve_dtype(v.dtype).name for v in values
                     if v is not None and hasattr(v, "dtype")), None)

    def _at(self, fmt, build, *args):
        """``build(*args)`` with the group's format ``fmt`` set."""
        saved, self._fmt = self._fmt, fmt
        try:
            return build(*args)
        finally:
            self._fmt = saved

    def reference(self, op, operands, params, expected):
        return self._at(self._format_of(operands), super().reference, op, operands, params,
                        expected)

    def long_reference(self, op, operands, params):
        return self._at(self._format_of(operands), super().long_reference, op, operands,
                        params)

    def reproducer(self, op, specs, values, params) -> str:
        fmt = next((f.name for f, _ in specs if f is not None), None)
        return self._at(fmt, super().reproducer, op, specs, values, params)

    def long_reproducer(self, op, operands, params) -> str:
        return self._at(self._format_of(operands.values()), self._long_reproducer, op,
                        operands, params)

    # ------------------------------------------------------------------ running
    def call(self, op, cp, operands, params):
        """Run the runtime's ``cp`` on ``operands`` (numpy arrays, None for an absent one)
        with ``params`` (registry names); a numpy array back."""
        raise NotImplementedError

    def run(self, op, operands, params):
        with warnings.catch_warnings():  # the runtime's warnings are not the audit's business
            warnings.simplefilter("ignore")
            return self.call(op, self._cp(op), list(operands), dict(params))

    run_long = run

    def format_of(self, actual):
        return resolve_dtype(actual.dtype)

    # ------------------------------------------------------------------ reproducers
    def call_lines(self, op, cp, names, params) -> list:
        """Python source, in the runtime's own API, that computes ``out`` (a numpy array)
        from the operands named ``names`` (numpy arrays already defined)."""
        raise NotImplementedError

    def reproducer_call(self, op, names, params) -> str:
        return "\n".join(self.call_lines(op, self._cp(op), names, params))

    def _expected_source(self, op, names, params) -> str:
        # a 0-d operand is a numpy scalar in the reproducer, which the torch policy reads as a
        # Python number; as an exactref array it keeps its format, as the kernel does
        if get_op(op).loop == "none":
            return super()._expected_source(op, names, params)
        return (f"er.result_type({', '.join(f'er.asarray({n})' for n in names)}, "
                f"policy={self.policy!r}, op={get_op(op).promotion!r})")

    #: a 0-d operand stays a 0-d array (a numpy scalar would read as a Python number, whose
    #: promotion gives the default float: float32 for a float64 operand)
    zero_dim_source = ".reshape(())"

    def wrap_source(self) -> str:
        return "{}.numpy()"

    #: a long op's reproducer feeds the group's whole operands, not the slices the failing
    #: element reads: a runtime picks its kernel by shape (OpenVINO's float64 matmul of one
    #: row by one column is exact where its 8 x 48 by 48 x 8 one is not)
    reproduce_whole = True

    def _long_reproducer(self, op, operands, params) -> str:
        """The group's operands (large arrays as their bytes, a normalized shape or a number
        of groups as its literal; an absent one keeps its place), the runtime's call and the
        reference under the runtime's declared contract."""
        from ._targets import _CHECK_LINES, _operand_source, _params_source

        lines = ["import exactref as er", *self.imports()]
        lines += [f"{name} = {_operand_source(v)}" for name, v in operands.items()
                  if v is not None]
        names = [n if v is not None else None for n, v in operands.items()]
        lines += self.call_lines(op, self._cp(op), names, params)
        own = ", ".join(n or "None" for n in names) + _params_source(
            {**params, **self._declared_keywords(op)})
        user = self.contract_source(op)
        lines.append(f"ref = er.{op}({own}{', contract=' + user if user else ''})")
        lines += _CHECK_LINES
        return "\n".join(lines)

    def finding_note(self, op, fmt: Format) -> str:
        """The op's known departures in this format (``Counterpart.departures``: each a dict
        with ``dtypes``, ``what`` and ``spec``), as one line for a failing group's message."""
        cp = self._cp(op)
        if cp is None:
            return ""
        notes = [f"{d['what']} (breaks {d['spec']}; {d.get('source', '')})".replace("; )", ")")
                 for d in cp.departures if isinstance(d, dict) and
                 fmt.name in d.get("dtypes", (fmt.name,))]
        return "known: " + "; ".join(notes) if notes else ""
