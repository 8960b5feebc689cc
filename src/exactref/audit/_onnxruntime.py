"""ONNX Runtime as an audit target (``exactref audit onnxruntime``).

Each registry op its table (:mod:`exactref.ops._onnxruntime`) names runs as a one-node ONNX
model (``onnx.helper``, default domain, opset :data:`OPSET`), built once per op, formats, ranks
and attributes and cached as an ``InferenceSession`` on the CPU execution provider
(``--device`` names another of ``onnxruntime.get_available_providers()``). Graph optimizations
are off (``ORT_DISABLE_ALL``): a one-node graph has nothing to fuse, and constant folding or a
fusion would replace the kernel the audit means to check with another.

Operands go in as ``OrtValue``s of the group's ONNX element type (bfloat16 and float8 as their
bits: ``OrtValue.ortvalue_from_numpy_with_onnx_type`` on a uint8/uint16 view) and results come
back bit-exact (``run_with_ort_values``, viewed back as the ml_dtypes format).

Everything an op needs beyond its ONNX op type is data of its table entry
(``Counterpart.data``), read here by key, never by op name:

- ``params``: registry parameter -> ONNX attribute (``{"axis": "axis"}``);
- ``values``: registry parameter -> {registry value: ONNX value}, or the name of a transform
  (:data:`_TRANSFORMS`: ``"ints"`` repeats an int per spatial axis, ``"pads"`` per begin and
  end, ``"conv_pads"`` also spells ``'same'`` and ``'valid'`` out, ``"onnx_type"`` a format name as its TensorProto type, ``"int"``, ``"float"``);
- ``attrs``: attributes always set (``{"approximate": "none"}``);
- ``inputs``: registry parameter -> ``"int64s"``: the parameter is an int64 tensor input
  (ReduceSum's ``axes``), appended after the operands;
- ``operand_attrs``: operand index -> [ONNX attribute, transform]: a registry operand that is
  an attribute in ONNX (layer_norm's ``normalized_shape`` -> ``axis``: ``"neg_len"``);
- ``fill``: operand index -> [value, shape rule]: an operand that ONNX requires where the
  registry's is optional (LayerNormalization's ``Scale``: ones of the normalized shape);
- ``scalars``: operand indices ONNX takes as 0-d tensors only (Clip's ``min`` and ``max``):
  the groups where they are arrays are not run;
- ``result``: the result's format where it is not the operands' (``"bool"``; ``"param:to"``:
  the parameter's; ``"operand:1"``: the second operand's, DequantizeLinear's scale);
- ``codes``: an affine quantizer's code formats (the ``linear`` plan's groups run in them);
- ``ranks``: the operand ranks the ONNX op is run with (Attention: 4-D only; its 3-D form
  packs the heads into the last axis), the other groups not run.
"""

from __future__ import annotations

import numpy as np

from .. import _versions
from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from ._runtime import RuntimeTarget, call_key

__all__ = ["OnnxRuntimeTarget", "TARGET", "OPSET", "build_model", "call_key"]

#: The opset of the default ONNX domain every model is built with (onnx 1.23 defines up to 25
#: and later; 23 is the newest whose every op ORT 1.32's CPU provider registers kernels for,
#: RMSNormalization and Attention included)
OPSET = 23

#: how many times a reproducer repeats its failing element (:meth:`OnnxRuntimeTarget.reproducer`)
REPEAT = 16

#: format name -> onnx.TensorProto element type name
_ONNX_TYPES = {"float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT",
               "float64": "DOUBLE", "bool": "BOOL", "int8": "INT8", "int16": "INT16",
               "int32": "INT32", "int64": "INT64", "uint8": "UINT8", "uint16": "UINT16",
               "uint32": "UINT32", "uint64": "UINT64", "float8_e4m3fn": "FLOAT8E4M3FN",
               "float8_e4m3fnuz": "FLOAT8E4M3FNUZ", "float8_e5m2": "FLOAT8E5M2",
               "float8_e5m2fnuz": "FLOAT8E5M2FNUZ"}
#: formats numpy has no native dtype for: fed to ORT as their bits (the unsigned view)
_BITS = {"bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "float8_e4m3fnuz": np.uint8,
         "float8_e5m2": np.uint8, "float8_e5m2fnuz": np.uint8}


def _rank_list(v, rank, times=1):
    vals = (v,) * rank if isinstance(v, (int, np.integer)) else tuple(v)
    return [int(x) for x in vals] * times


#: named value transforms of ``data["values"]``: (value, the first operand) -> ONNX value
_TRANSFORMS = {
    "ints": lambda v, x: _rank_list(v, x.ndim - 2),
    "pads": lambda v, x: _rank_list(v, x.ndim - 2, 2),
    "int": lambda v, x: int(v),
    "float": lambda v, x: float(v),
    "neg_len": lambda v, x: -len(tuple(v)),
    "onnx_type": lambda v, x: _ONNX_TYPES[resolve_dtype(v).name],
    "bool_int": lambda v, x: int(bool(v)),
}


def _conv_pads(v, operands, params):
    """A conv's registry padding as ONNX's ``pads`` (begin and end per spatial axis):
    ``'same'`` as the explicit padding that keeps the size at stride 1 (ORT refuses
    ``auto_pad=SAME_UPPER`` with a dilation), ``'valid'`` as none."""
    x, w = np.asarray(operands[0]), np.asarray(operands[1])
    rank = x.ndim - 2
    if isinstance(v, str):
        if v == "valid":
            return [0] * (2 * rank)
        dil = _rank_list(params.get("dilation", 1), rank)
        total = [d * (k - 1) for d, k in zip(dil, w.shape[2:], strict=True)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    return _rank_list(v, rank, 2)


def _data(cp) -> dict:
    return cp.data if isinstance(cp.data, dict) else {}


def _convert(value, how, x, operands=(), params=None):
    if isinstance(how, dict):
        return how.get(value, value)
    if how == "conv_pads":
        return _conv_pads(value, operands, params or {})
    if isinstance(how, str):
        return _TRANSFORMS[how](value, x)
    return value


def build_model(cp, operands, params):
    """The one-node model of ``cp`` for these operands and parameters, as plain data:
    ``{"op_type", "inputs": [(name, format name, rank)], "feeds": {name: array}, "attrs",
    "result": format name}`` (what :meth:`OnnxRuntimeTarget.call` builds and
    :meth:`OnnxRuntimeTarget.call_lines` writes as source)."""
    data = _data(cp)
    present = [np.asarray(v) for v in operands if v is not None and hasattr(v, "shape")]
    first = present[0]
    fmt = resolve_dtype(first.dtype).name
    attrs = dict(data.get("attrs", {}))
    values = data.get("values", {})
    for k, v in params.items():
        name = data.get("params", {}).get(k)
        if name is None or k in data.get("inputs", {}):
            continue
        v = _convert(v, values.get(k), first, operands, params)
        if isinstance(v, str) and v in _ONNX_TYPES.values() and values.get(k) == "onnx_type":
            v = ("TensorProto", v)
        attrs[name] = v
    inputs, feeds = [], {}
    op_attrs = {int(k): v for k, v in data.get("operand_attrs", {}).items()}
    fill = {int(k): v for k, v in data.get("fill", {}).items()}
    norm_shape = None
    for i, v in enumerate(operands):
        if i in op_attrs:
            attr, how = op_attrs[i]
            attrs[attr] = _convert(v, how, first)
            if how == "neg_len":
                norm_shape = tuple(first.shape[-len(tuple(v)):])
            continue
        if v is None:
            if i not in fill:
                inputs.append(("", None, None))  # an absent optional input: an empty name
                continue
            value, rule = fill[i]
            shape = norm_shape if rule == "trailing" else (first.shape[1],)
            v = np.full(shape, value, dtype=first.dtype)
        a = np.asarray(v)
        name = f"x{i}"
        inputs.append((name, resolve_dtype(a.dtype).name, a.ndim))
        feeds[name] = a
    while inputs and inputs[-1][0] == "":
        inputs.pop()
    for k, kind in data.get("inputs", {}).items():
        if k in params and kind == "int64s":
            name = f"p_{k}"
            arr = np.asarray(params[k], dtype=np.int64).reshape(-1)
            inputs.append((name, "int64", 1))
            feeds[name] = arr
    result = data.get("result", fmt)
    if result.startswith("param:"):
        result = resolve_dtype(params[result.partition(":")[2]]).name
    elif result.startswith("operand:"):  # an operand's format (DequantizeLinear: the scale's)
        result = resolve_dtype(np.asarray(operands[int(result.partition(":")[2])]).dtype).name
    return {"op_type": cp.call, "inputs": inputs, "feeds": feeds, "attrs": attrs,
            "result": result}


def _attr_value(v, onnx):
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "TensorProto":
        return getattr(onnx.TensorProto, v[1])
    return v


def ort_value(ort, a, share=False):
    """``a`` as an OrtValue of its ONNX type (formats numpy lacks go in as their bits);
    ``share``: on ``a``'s own memory (an output to bind), not a copy."""
    import onnx

    name = resolve_dtype(a.dtype).name
    if not share:
        a = np.asarray(a).copy(order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    bits = a.view(_BITS[name]) if name in _BITS else a
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
        bits, getattr(onnx.TensorProto, _ONNX_TYPES[name]))


def from_ort_value(v, fmt_name):
    """An OrtValue's tensor as a numpy array of ``fmt_name`` (bit-exact)."""
    out = v.numpy()
    fmt = FORMATS[fmt_name]
    if out.dtype != fmt.np_dtype:
        out = np.asarray(out).copy(order="C").view(fmt.np_dtype)
    return out


class OnnxRuntimeTarget(RuntimeTarget):
    """ONNX Runtime's kernels, each run as a one-node ONNX model on one execution provider."""

    name = "onnxruntime"
    library_key = "onnxruntime"
    package = "onnxruntime"
    #: a shaped group's reproducer (attention, conv) reruns the one-node model on the
    #: group's operands (exactref.audit._shaped_worst)
    shaped_reproducer = True

    def __init__(self, device="CPUExecutionProvider"):
        import onnx
        import onnxruntime

        self.onnx, self.ort = onnx, onnxruntime
        _versions.check("onnxruntime", "onnxruntime", stacklevel=3)
        available = list(onnxruntime.get_available_providers())
        wanted = "CPUExecutionProvider" if device in ("cpu", "CPU") else device
        if wanted not in available:
            raise ValueError(f"--device {device!r} is no ONNX Runtime execution provider here; "
                             f"pass one of {', '.join(available)} (or 'cpu' for "
                             f"CPUExecutionProvider)")
        self.device = wanted
        self._sessions = {}

    def versions(self) -> dict:
        return {"onnxruntime": self.ort.__version__, "onnx": self.onnx.__version__}

    # ------------------------------------------------------------------ running
    def _session(self, op, spec):
        from onnx import helper

        key = (op, spec["op_type"], tuple(spec["inputs"]),
               tuple(sorted((k, repr(v)) for k, v in spec["attrs"].items())), spec["result"])
        sess = self._sessions.get(key)
        if sess is None:
            onnx = self.onnx
            elem = {n: getattr(onnx.TensorProto, _ONNX_TYPES[f]) for n, f, _ in spec["inputs"]
                    if n}
            attrs = {k: _attr_value(v, onnx) for k, v in spec["attrs"].items()}
            node = helper.make_node(spec["op_type"], [n for n, _, _ in spec["inputs"]],
                                    ["out"], **attrs)
            graph = helper.make_graph(
                [node], op, [helper.make_tensor_value_info(n, elem[n], [None] * r)
                             for n, _, r in spec["inputs"] if n],
                [helper.make_tensor_value_info(
                    "out", getattr(onnx.TensorProto, _ONNX_TYPES[spec["result"]]), None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
            so = self.ort.SessionOptions()
            so.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            so.log_severity_level = 3
            sess = self.ort.InferenceSession(model.SerializeToString(), so,
                                             providers=[self.device])
            self._sessions[key] = sess
        return sess

    def call(self, op, cp, operands, params):
        spec = build_model(cp, operands, params)
        sess = self._session(op, spec)
        feeds = {n: ort_value(self.ort, a) for n, a in spec["feeds"].items()}
        if spec["result"] in _BITS:
            # numpy has no bfloat16/float8 for OrtValue.numpy(): the result is bound to an
            # array of its bits (the shape of the first operand: Cast and the
            # normalizations, the only such kernels, keep it)
            bits = np.empty(spec["feeds"][spec["inputs"][0][0]].shape, _BITS[spec["result"]])
            binding = sess.io_binding()
            for n, v in feeds.items():
                binding.bind_ortvalue_input(n, v)
            binding.bind_ortvalue_output("out", ort_value(self.ort, bits.view(
                FORMATS[spec["result"]].np_dtype), share=True))
            sess.run_with_iobinding(binding)
            return bits.view(FORMATS[spec["result"]].np_dtype)
        out = sess.run_with_ort_values(["out"], feeds)[0]
        return from_ort_value(out, spec["result"])

    def unsupported(self, exc) -> bool:
        """No kernel registered for the node's types on the provider (ORT says so when the
        session is built: NOT_IMPLEMENTED, "Could not find an implementation")."""
        text = str(exc)
        return isinstance(exc, NotImplementedError) or "NOT_IMPLEMENTED" in text or \
            "Could not find an implementation" in text

    def supports(self, op, specs, params) -> bool:
        """The base's same-format array groups, where an operand the table makes an ONNX
        attribute (``data["operand_attrs"]``: a normalization's shape or group count) may be
        the Python value it is."""
        cp = self._cp(op)
        if cp is None:
            return False
        as_attrs = {int(k) for k in _data(cp).get("operand_attrs", {})}
        scalars = {int(k) for k in _data(cp).get("scalars", ())}
        if any(specs[i][0] is not None and specs[i][1] != "0d" for i in scalars
               if i < len(specs)):
            return False  # an operand ONNX takes as a 0-d tensor only (Clip's min and max)
        ranks = _data(cp).get("ranks")
        if ranks is not None and any(len(getattr(kind, "shape", ())) not in ranks
                                     for f, kind in specs if f is not None and
                                     hasattr(kind, "shape")):
            return False  # operands of a rank the ONNX op reads otherwise (Attention's 3-D)
        kept = [s for i, s in enumerate(specs) if i not in as_attrs]
        return super().supports(op, kept, params)

    # ------------------------------------------------------------------ reproducers
    def imports(self):
        return ["import numpy as np", "import onnx", "import onnxruntime as ort",
                "from onnx import helper"]

    def call_lines(self, op, cp, names, params):
        """The one-node model built with ``onnx.helper``, run on this provider, its operands
        and result as OrtValues (bit-exact for every format)."""
        operands = self._named_operands
        spec = build_model(cp, operands, params)
        lines = []
        attrs = ", ".join(f"{k}={self._attr_source(v)}" for k, v in spec["attrs"].items())
        ins = []
        for n, f, r in spec["inputs"]:
            if not n:
                continue
            ins.append(f"helper.make_tensor_value_info({n!r}, onnx.TensorProto."
                       f"{_ONNX_TYPES[f]}, [None] * {r})")
        lines.append(f"node = helper.make_node({spec['op_type']!r}, "
                     f"{[n for n, _, _ in spec['inputs']]!r}, ['out']"
                     + (f", {attrs})" if attrs else ")"))
        lines.append("graph = helper.make_graph([node], 'g', [" + ", ".join(ins) + "], "
                     "[helper.make_tensor_value_info('out', onnx.TensorProto."
                     f"{_ONNX_TYPES[spec['result']]}, None)])")
        lines.append(f"model = helper.make_model(graph, opset_imports=[helper.make_opsetid("
                     f"'', {OPSET})])")
        lines.append("so = ort.SessionOptions()")
        lines.append("so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL")
        lines.append(f"sess = ort.InferenceSession(model.SerializeToString(), so, "
                     f"providers=[{self.device!r}])")
        lines.append("def ov(a, t):  # an OrtValue of ONNX type t (bfloat16/float8 as bits)")
        lines.append("    a = np.asarray(a).copy(order='C')")
        lines.append("    bits = a.view({2: np.uint16, 1: np.uint8}[a.itemsize]) "
                     "if a.dtype.kind == 'V' else a")
        lines.append("    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, t)")
        feed_src = []
        for n, f, _ in spec["inputs"]:
            if not n:
                continue
            src = self._feed_source(n, spec["feeds"][n], names, operands)
            feed_src.append(f"{n!r}: ov({src}, onnx.TensorProto.{_ONNX_TYPES[f]})")
        lines.append("feeds = {" + ", ".join(feed_src) + "}")
        result = spec["result"]
        if result not in _BITS:
            lines.append("out = sess.run_with_ort_values(['out'], feeds)[0].numpy()")
            return lines
        # OrtValue.numpy() has no bfloat16/float8: the result is bound to a buffer of its bits
        first = spec["inputs"][0][0]
        lines += [f"bits = np.empty(feeds[{first!r}].shape(), np.{_BITS[result].__name__})",
                  "binding = sess.io_binding()",
                  "for name, value in feeds.items():",
                  "    binding.bind_ortvalue_input(name, value)",
                  "binding.bind_ortvalue_output('out', ort.OrtValue."
                  f"ortvalue_from_numpy_with_onnx_type(bits, onnx.TensorProto."
                  f"{_ONNX_TYPES[result]}))",
                  "sess.run_with_iobinding(binding)",
                  f"out = bits.view(er.dtype({result!r}).np_dtype)"]
        return lines

    def _feed_source(self, n, arr, names, operands) -> str:
        if n.startswith("x") and n[1:].isdigit():
            i = int(n[1:])
            if i < len(operands) and operands[i] is not None:
                return names[i]
            return (f"np.full({tuple(arr.shape)!r}, {float(arr.reshape(-1)[0])!r}, "
                    f"dtype=er.dtype({resolve_dtype(arr.dtype).name!r}).np_dtype)")
        return f"np.array({arr.tolist()!r}, dtype=np.int64)"

    def _attr_source(self, v) -> str:
        if isinstance(v, tuple) and len(v) == 2 and v[0] == "TensorProto":
            return f"onnx.TensorProto.{v[1]}"
        return repr(v)

    def reproducer(self, op, specs, values, params) -> str:
        """The base's reproducer, each dimensioned operand repeated :data:`REPEAT` times: ORT's
        kernels take their vectorized path only on arrays that long (Eigen's float64 tanh,
        sin and cos answer otherwise on a lone element), as in the audit's own arrays."""
        from ..ops import get_op

        self._named_operands = [np.asarray(v) if f is not None else None
                                for (f, _), v in zip(specs, values, strict=True)]
        lines = super().reproducer(op, specs, values, params).split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith("node = "))
        names = [n for n, (f, kind) in zip(get_op(op).operands, specs, strict=True)
                 if f is not None and kind != "0d"]
        lines[at:at] = [f"{n} = np.repeat({n}, {REPEAT})  # the kernel's vectorized path"
                        for n in names]
        return "\n".join(lines)

    def _long_reproducer(self, op, operands, params) -> str:
        self._named_operands = list(operands.values())  # call_lines builds the model of them
        return super()._long_reproducer(op, operands, params)


TARGET = OnnxRuntimeTarget
