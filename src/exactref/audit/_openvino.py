"""OpenVINO as an audit target (``exactref audit openvino``): each registry op its table
(:mod:`exactref.ops._openvino`) names is built as a one-op ``openvino.Model`` through the
Python opset API (``openvino.opset13`` and older opsets where the op lives there: the
Parameters, the op, the Model), compiled for the ``"CPU"`` device (``--device`` names another
of ``openvino.Core().available_devices``) once per (op, format, ranks, attributes) and cached;
the operands are fed as ``openvino.Tensor`` of the group's element type (bfloat16 through its
bits) and the result read back bit-exactly.

Every model is compiled with ``INFERENCE_PRECISION_HINT = "f32"``: the CPU plugin otherwise
lowers float32 models to bfloat16 (or float16) on CPUs with AMX / AVX512-BF16 / AVX512-FP16,
so the same model's results would depend on the machine. ``f32`` is the plugin's default where
the CPU has no such unit (this one), and the precision a float32 model declares; the half
formats' models are computed in float32 by the plugin's documented conversion either way (the
table's contracts say so), and float64 is never honoured (a finding of the table).

Everything an op needs beyond its call is data of its table entry (``Counterpart.data``), read
here by key, never by op name:

- ``opset``: the opset module the call is taken from (default ``"opset13"``);
- ``params``: registry parameter -> OpenVINO keyword (``{"axis": "axis"}``);
- ``values``: registry parameter -> {registry value: OpenVINO value} (gelu's
  ``approximate``: ``"none"`` -> ``"erf"``);
- ``attrs``: keywords always passed (``{"approximation_mode": "erf"}``);
- ``const``: the OpenVINO keywords that are constant inputs of the op (ReduceSum's
  ``reduction_axes``): passed as an int64 ``opset.constant``;
- ``type``: the OpenVINO keywords that are element types (Convert's ``destination_type``);
- ``operands``: per registry operand, how the model takes it (default ``"input"``: a
  Parameter passed to the op in order): ``"axes:<kw>"`` (a normalized shape ``(n, ...)``
  becomes the constant axes ``[-len, ..., -1]`` of the keyword), ``"attr:<kw>"`` (a Python
  value becomes the keyword: GroupNormalization's ``num_groups``), ``"then:<fn>"`` (an array
  applied after the op, ``fn(out, operand)``: MVN's weight and bias by Multiply and Add; an
  absent one is skipped), ``"const"`` (an array the model holds as a Constant, as a model
  holds its weights: the CPU plugin's Convolution refuses filters of dynamic shape, and it
  fuses a constant bias into the convolution, a Parameter's Add not), ``"bias:<fn>"`` (a
  per-channel vector, a Constant reshaped to ``[1, C, 1, ...]`` of the operands' rank, applied
  as ``fn(out, operand)``: a convolution's bias by Add, as OpenVINO's PyTorch and ONNX
  frontends build it); a model holding constants is compiled for their values;
- ``values`` may also name a transform of :data:`_TRANSFORMS` (``"spatial"``: an int or tuple
  as a list per spatial axis of the first operand; ``"pads"``: a registry padding, ``"same"``
  and ``"valid"`` spelled out, as ``pads_begin`` and ``pads_end``);
- ``grouped``: ``{"param", "call", "operand"}``: where the parameter is above 1 the op is
  ``call`` and the operand is reshaped to ``[groups, out / groups, ...]`` (Convolution with
  ``groups`` is GroupConvolution, whose filters are 5-D);
- ``typed``: the OpenVINO keywords that are scalar constants of the operands' element type
  (ScaledDotProductAttention's ``scale``).

A parameter the table maps but the group does not set is passed at the registry's default
(layer_norm's ``eps``), so the model computes what the reference does.
"""

from __future__ import annotations

import importlib

import numpy as np

from .. import _versions
from .._formats import FORMATS
from .._formats import dtype as resolve_dtype
from ._runtime import RuntimeTarget, call_key, kernel_formats

__all__ = ["OpenVinoTarget", "TARGET", "HINT"]

#: The compile configuration of every model (see the module's documentation)
HINT = {"INFERENCE_PRECISION_HINT": "f32"}


def _data(cp) -> dict:
    return cp.data if isinstance(cp.data, dict) else {}


def _ov_type_name(fmt) -> str:
    """The OpenVINO element type's name for a registry format (``ov.Type.<name>``)."""
    return {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
            "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
            "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "boolean",
            "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}[fmt.name]


def _spatial(v, x) -> list:
    rank = x.ndim - 2
    vals = (v,) * rank if isinstance(v, (int, np.integer)) else tuple(v)
    return [int(a) for a in vals]


def _pads(v, x, operands, params) -> dict:
    """A convolution's registry padding as OpenVINO's ``pads_begin`` and ``pads_end``:
    ``"same"`` as the explicit padding that keeps the size at stride 1 (the extra zero at the
    end, as torch), ``"valid"`` as none."""
    rank = x.ndim - 2
    if isinstance(v, str):
        if v == "valid":
            return {"pads_begin": [0] * rank, "pads_end": [0] * rank}
        w = np.asarray(operands[1])
        dil = _spatial(params.get("dilation", 1), x)
        total = [d * (k - 1) for d, k in zip(dil, w.shape[2:], strict=True)]
        return {"pads_begin": [t // 2 for t in total],
                "pads_end": [t - t // 2 for t in total]}
    p = _spatial(v, x)
    return {"pads_begin": p, "pads_end": list(p)}


#: named value transforms of ``data["values"]``: (value, first operand, operands, params) ->
#: the OpenVINO value (a dict: several keywords)
_TRANSFORMS = {
    "spatial": lambda v, x, ops, ps: _spatial(v, x),
    "pads": _pads,
}


def _roles(cp, n) -> list:
    roles = list(_data(cp).get("operands", ()))
    return roles + ["input"] * (n - len(roles))


class OpenVinoTarget(RuntimeTarget):
    """OpenVINO's opset, one op per compiled model, on one device (the CPU plugin by
    default)."""

    name = "openvino"
    library_key = "openvino"
    package = "openvino"
    #: a failing convolution's or attention's reproducer reruns the model on the group's
    #: operands (an attention's: the element's batch and head), in Python
    shaped_reproducer = True

    def __init__(self, device="cpu"):
        import openvino

        self.ov = openvino
        _versions.check("openvino", "openvino", stacklevel=3)
        self.core = openvino.Core()
        available = list(self.core.available_devices)
        wanted = "CPU" if device in ("cpu", "CPU") else device
        if wanted not in available:
            raise ValueError(f"--device {device!r} is no OpenVINO device here; pass one of "
                             f"{', '.join(available)} (or 'cpu' for CPU)")
        self.device = wanted
        self._compiled = {}

    def versions(self) -> dict:
        return {"openvino": self.ov.__version__.split("-")[0]}

    def supports(self, op, specs, params) -> bool:
        """The base's groups, and those whose non-array operands (a normalized shape, a
        number of groups) the table says how to take (``data["operands"]``)."""
        cp = self._cp(op)
        if cp is None:
            return False
        roles = _roles(cp, len(specs))
        arrays = [s for s, r in zip(specs, roles, strict=True) if _is_array(r) or _is_const(r)]
        others = [s for s, r in zip(specs, roles, strict=True) if s not in arrays]
        if any(f is not None for f, _ in others):
            return False
        formats = {f.name for f in kernel_formats(cp)}
        if any(isinstance(v, str) and v in FORMATS and v not in formats
               for v in params.values()):
            return False  # a format parameter (Convert's destination) the kernel lacks
        return super().supports(op, arrays, params)

    # ------------------------------------------------------------------ building
    def _defaults(self, op, params) -> dict:
        """``params`` with the table's mapped parameters the group leaves out at the
        registry's defaults."""
        from ..ops import get_op

        cp = self._cp(op)
        full = dict(params)
        spec = get_op(op)
        for name in _data(cp).get("params", {}):
            if name not in full and name in {p.name for p in spec.params}:
                default = spec.param(name).default
                if default is not None:
                    full[name] = default
        return full

    def _attributes(self, cp, params, operands=()) -> dict:
        """The op's keywords: ``attrs``, then each parameter it takes, renamed and mapped
        (``operands``: the op's operands, which a transform of ``values`` reads)."""
        data = _data(cp)
        names, values = data.get("params", {}), data.get("values", {})
        kw = dict(data.get("attrs", {}))
        grouped = data.get("grouped", {}).get("param")
        first = next((np.asarray(v) for v in operands if v is not None), None)
        for k, v in params.items():
            if k not in names or k == grouped:
                continue
            mapping = values.get(k)
            if isinstance(mapping, dict):
                v = mapping.get(v, v)
            elif isinstance(mapping, str):
                if first is None:
                    continue  # no operands to shape it by (a test's call_lines)
                v = _TRANSFORMS[mapping](v, first, operands, params)
            if isinstance(v, dict):
                kw.update(v)
            else:
                kw[names[k]] = v
        return kw

    @staticmethod
    def _grouping(cp, params, operands):
        """``(call, operand index, the operand's new shape)`` where the op is grouped
        (``data["grouped"]``), else ``(cp.call, None, None)``."""
        g = _data(cp).get("grouped")
        n = int(params.get(g["param"], 1)) if g else 1
        if n <= 1:
            return cp.call, None, None
        i = g["operand"]
        w = np.asarray(operands[i])
        return g["call"], i, [n, w.shape[0] // n, *w.shape[1:]]

    def _opset(self, cp):
        return importlib.import_module(f"openvino.{_data(cp).get('opset', 'opset13')}")

    def _split(self, cp, operands):
        """The operands as (role, value) pairs, absent ones dropped."""
        return [(r, v) for r, v in zip(_roles(cp, len(operands)), operands, strict=True)
                if v is not None]

    def _constant(self, opset, a):
        """A Constant holding ``a``'s values in its element type (bfloat16 by a Convert of
        its float32 values, exact, which the plugin folds)."""
        if a.dtype.name == "bfloat16":
            return opset.convert(opset.constant(a.astype(np.float32)), self.ov.Type.bf16)
        return opset.constant(np.ascontiguousarray(a))

    def _build(self, cp, parts, params, operands=()):
        ov = self.ov
        data = _data(cp)
        opset = self._opset(cp)
        arrays = [v for r, v in parts if _is_array(r)]
        inputs = [opset.parameter([-1] * a.ndim, self._type(resolve_dtype(a.dtype)),
                                  name=f"x{i}") for i, a in enumerate(arrays)]
        kw = self._attributes(cp, params, operands)
        call, gi, gshape = self._grouping(cp, params, operands)
        rank = next(v.ndim for r, v in parts if _is_array(r) or _is_const(r))
        taken, after, k = [], [], 0
        for i, (role, v) in enumerate(parts):
            if role == "input":
                taken.append(inputs[k])
                k += 1
            elif role == "const":
                node = self._constant(opset, v)
                if i == gi:
                    node = opset.reshape(node, opset.constant(np.asarray(gshape, np.int64)),
                                         False)
                taken.append(node)
            elif role.startswith("then:"):
                after.append((role[5:], inputs[k]))
                k += 1
            elif role.startswith("bias:"):
                shape = [1, -1] + [1] * (rank - 2)
                after.append((role[5:], opset.reshape(
                    self._constant(opset, v), opset.constant(np.asarray(shape, np.int64)),
                    False)))
            elif role.startswith("axes:"):
                kw[role[5:]] = opset.constant(np.arange(-len(v), 0, dtype=np.int64))
            elif role.startswith("attr:"):
                kw[role[5:]] = v
        for k in data.get("const", ()):
            if k in kw:
                kw[k] = opset.constant(np.asarray(kw[k], dtype=np.int64))
        for k in data.get("type", ()):
            if k in kw:
                kw[k] = self._type(FORMATS[kw[k]])
        for k in data.get("typed", ()):  # a scalar constant of the operands' element type
            if kw.get(k) is not None:
                if arrays[0].dtype.name == "bfloat16":
                    kw[k] = opset.convert(opset.constant(np.float32(kw[k])), ov.Type.bf16)
                else:
                    kw[k] = opset.constant(np.asarray(kw[k], dtype=arrays[0].dtype))
        node = getattr(opset, call)(*taken, **kw)
        for fn, p in after:
            node = getattr(opset, fn)(node, p)
        model = ov.Model([node], inputs, cp.call)
        return self.core.compile_model(model, self.device, HINT)

    def _type(self, fmt):
        return getattr(self.ov.Type, _ov_type_name(fmt))

    def _tensor(self, a):
        """An ``openvino.Tensor`` holding ``a``'s bits, of its element type."""
        fmt = resolve_dtype(a.dtype)
        t = self.ov.Tensor(self._type(fmt), self.ov.Shape(list(a.shape)))
        view = t.data
        src = np.ascontiguousarray(a)
        view[...] = src.view(view.dtype) if view.dtype.itemsize == src.dtype.itemsize and \
            view.dtype != src.dtype else src
        return t

    def call(self, op, cp, operands, params):
        params = self._defaults(op, params)
        parts = [(r, np.asarray(v) if _is_array(r) or _is_const(r) else v)
                 for r, v in self._split(cp, operands)]
        arrays = [v for r, v in parts if _is_array(r)]
        # a model holding constants is compiled for their values; one whose attributes are
        # shaped by the operands (a convolution's padding) for their shapes
        shaped = any(isinstance(v, str) for v in _data(cp).get("values", {}).values())
        key = (op, tuple((r, v.dtype.name, v.shape if shaped else v.ndim,
                          call_key(op, [v], {}) if _is_const(r) else None)
                         if isinstance(v, np.ndarray) else (r, v) for r, v in parts),
               tuple(sorted((k, repr(v)) for k, v in params.items())))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = self._build(cp, parts, params, operands)
        req = compiled.create_infer_request()
        req.infer([self._tensor(a) for a in arrays])
        return self._read(req.get_output_tensor(0))

    def _read(self, t):
        """The output tensor's values as a numpy array of its registry format (bit-exact)."""
        name = t.element_type.get_type_name()
        fmt = next((f for f in FORMATS.values() if f.np_dtype is not None and
                    _safe_name(f) == name), None)
        raw = np.array(t.data, copy=True)
        if fmt is None or raw.dtype == fmt.np_dtype:
            return raw
        return raw.view(fmt.np_dtype).reshape(tuple(t.shape))

    def unsupported(self, exc) -> bool:
        text = str(exc)
        return isinstance(exc, NotImplementedError) or (
            isinstance(exc, RuntimeError) and ("Unsupported" in text or "not supported" in text
                                               or "doesn't support" in text
                                               or "is not implemented" in text))

    # ------------------------------------------------------------------ reproducers
    def imports(self):
        return ["import numpy as np", "import openvino as ov"]

    def call_lines(self, op, cp, names, params):
        data = _data(cp)
        params = self._defaults(op, params)
        mod = f"openvino.{data.get('opset', 'opset13')}"
        roles = _roles(cp, len(names))
        arrays = [n for n, r in zip(names, roles, strict=True)
                  if n is not None and _is_array(r)]
        operands = list(self._named) if self._named is not None else [None] * len(names)
        lines = [f"import {mod} as ops",
                 f"xs = [{', '.join(arrays)}]",
                 "dt = {'bfloat16': ov.Type.bf16}",
                 "ps = [ops.parameter([-1] * v.ndim, dt.get(v.dtype.name, ov.Type(v.dtype)))"
                 " for v in xs]"]
        if any(_is_const(r) for n, r in zip(names, roles, strict=True) if n is not None):
            lines += ["def const(a):  # a Constant of the model (bfloat16 from its float32 values)",
                      "    if a.dtype.name == 'bfloat16':",
                      "        return ops.convert(ops.constant(a.astype(np.float32)), "
                      "ov.Type.bf16)",
                      "    return ops.constant(np.ascontiguousarray(a))"]
            rank = next(np.ndim(v) for v in operands if v is not None) if any(
                v is not None for v in operands) else None
        kw = self._attributes(cp, params, operands)
        call, gi, gshape = self._grouping(cp, params, operands) if any(
            v is not None for v in operands) else (cp.call, None, None)
        text = []
        for k, v in kw.items():
            if k in data.get("const", ()):
                text.append(f"{k}=ops.constant(np.asarray({v!r}, dtype=np.int64))")
            elif k in data.get("type", ()):
                text.append(f"{k}=ov.Type.{_ov_type_name(FORMATS[v])}")
            elif k in data.get("typed", ()) and v is not None:
                text.append(f"{k}=(ops.convert(ops.constant(np.float32({v!r})), ov.Type.bf16) "
                            f"if xs[0].dtype.name == 'bfloat16' else "
                            f"ops.constant(np.asarray({v!r}, dtype=xs[0].dtype)))")
            else:
                text.append(f"{k}={v!r}")
        taken, after, k = [], [], 0
        for i, (n, r) in enumerate(zip(names, roles, strict=True)):
            if n is None:
                continue  # an absent operand (a norm's bias): no input of the model
            if r == "input":
                taken.append(f"ps[{k}]")
                k += 1
            elif r == "const":
                taken.append(f"const({n})" if i != gi else
                             f"ops.reshape(const({n}), ops.constant(np.asarray({gshape!r}, "
                             f"dtype=np.int64)), False)")
            elif r.startswith("then:"):
                after.append(f"node = ops.{r[5:]}(node, ps[{k}])")
                k += 1
            elif r.startswith("bias:"):
                after.append(f"node = ops.{r[5:]}(node, ops.reshape(const({n}), ops.constant("
                             f"np.asarray({[1, -1] + [1] * ((rank or 2) - 2)!r}, "
                             f"dtype=np.int64)), False))")
            elif r.startswith("axes:"):
                text.append(f"{r[5:]}=ops.constant(np.arange(-len({n}), 0, dtype=np.int64))")
            elif r.startswith("attr:"):
                text.append(f"{r[5:]}={n}")
        args = ", ".join([*taken, *text])
        lines += [f"node = ops.{call}({args})", *after,
                  "model = ov.Model([node], ps)",
                  f"compiled = ov.Core().compile_model(model, {self.device!r}, {HINT!r})",
                  "req = compiled.create_infer_request()",
                  "ts = []",
                  "for v, p in zip(xs, ps):",
                  "    t = ov.Tensor(p.get_element_type(), ov.Shape(list(v.shape)))",
                  "    t.data[...] = np.ascontiguousarray(v).view(t.data.dtype)",
                  "    ts.append(t)",
                  "req.infer(ts)",
                  "o = req.get_output_tensor(0)",
                  "out = np.array(o.data, copy=True)",
                  "if o.element_type == ov.Type.bf16:",
                  "    out = out.view(er.dtype('bfloat16').np_dtype)"]
        return lines

    #: the operands of the reproducer being written (a long op's: its shapes and padding
    #: decide the attributes), None elsewhere
    _named = None

    def _long_reproducer(self, op, operands, params) -> str:
        saved, self._named = self._named, list(operands.values())
        try:
            return super()._long_reproducer(op, operands, params)
        finally:
            self._named = saved


def _is_array(role) -> bool:
    """Whether an operand of this role is an input array (a Parameter) of the model."""
    return role == "input" or role.startswith("then:")


def _is_const(role) -> bool:
    """Whether an operand of this role is an array the model holds as a Constant."""
    return role == "const" or role.startswith("bias:")


def _safe_name(fmt) -> str:
    try:
        return _ov_type_name(fmt)
    except KeyError:
        return ""


TARGET = OpenVinoTarget
