"""TensorFlow as an audit target (``exactref audit tensorflow``): each registry op its table
(:mod:`exactref.ops._tensorflow`) names runs as that TensorFlow function (``tf.math.*``,
``tf.nn.*``, ``tf.linalg.*``, ``tf.raw_ops.*``), eagerly, on ``/CPU:0`` (``--device`` names
another of ``tf.config.list_logical_devices()``), its operands ``tf.constant`` of the group's
format and its result read back with ``.numpy()`` (bit-exact; bfloat16 as ml_dtypes').

TensorFlow is imported only when the target is built (it takes seconds); its C++ logging is
quietened with ``TF_CPP_MIN_LOG_LEVEL=2`` unless the user has set that variable.

Everything an op needs beyond its call is data of its table entry (``Counterpart.data``), read
here by key, never by op name:

- ``params``: registry parameter -> TensorFlow keyword (``{"axis": "axis"}``);
- ``values``: registry parameter -> {registry value: TensorFlow value} (gelu's
  ``approximate``: ``"tanh"`` -> True);
- ``kwargs``: keywords always passed;
- ``contracts``: format name -> contract fields over the op's ``contract`` for that format
  (a bfloat16 matmul accumulates in float32; a half-format function is float's, rounded).
"""

from __future__ import annotations

import os

import numpy as np

from .. import _versions
from .._formats import FORMATS
from ._runtime import RuntimeTarget

__all__ = ["TensorFlowTarget", "TARGET"]


def _import_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # the user's own setting wins
    import tensorflow as tf

    return tf


def _devices(tf) -> list:
    names = []
    for d in tf.config.list_logical_devices():
        names.append(d.name)
        short = d.name.replace("/device:", "/")
        if short not in names:
            names.append(short)
    return names


def _ints(v, rank) -> list:
    return [int(v)] * rank if isinstance(v, (int, np.integer)) else [int(a) for a in v]


def _conv_pads(padding, kernel, dilation) -> list:
    """A registry conv's padding as [begin, end] per spatial axis: ``'same'`` as PyTorch's
    (the total d (k - 1), the extra one at the end), ``'valid'`` as none."""
    if isinstance(padding, str):
        if padding == "valid":
            return [[0, 0] for _ in kernel]
        total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
        return [[t // 2, t - t // 2] for t in total]
    return [[p, p] for p in _ints(padding, len(kernel))]


class _DType(str):
    """A format as a TensorFlow dtype in a reproducer's source (``tf.bfloat16``)."""

    def __repr__(self):
        return f"tf.{self}"


class TensorFlowTarget(RuntimeTarget):
    """TensorFlow's ops, called eagerly through its Python API on one logical device."""

    name = "tensorflow"
    library_key = "tensorflow"
    package = "tensorflow"
    #: a shaped group's reproducer (conv) reruns the call on the group's operands
    shaped_reproducer = True

    def __init__(self, device="cpu"):
        tf = _import_tf()
        self.tf = tf
        _versions.check("tensorflow", "tensorflow", stacklevel=3)
        available = _devices(tf)
        wanted = "/CPU:0" if device in ("cpu", "CPU") else device
        if wanted not in available:
            raise ValueError(f"--device {device!r} is no TensorFlow logical device here; "
                             f"pass one of {', '.join(available)} (or 'cpu' for /CPU:0)")
        self.device = wanted

    def versions(self) -> dict:
        return {"tensorflow": self.tf.__version__}

    def sum_dtype(self, fmt):
        """TensorFlow's reductions keep their operand's type (an int32 reduce_sum is int32,
        wrapping; tf.math.reduce_sum's documentation)."""
        return fmt

    def supports(self, op, specs, params) -> bool:
        """The base's groups, less parameter values outside ``data["audited"]`` (registry
        parameter -> the values audited: cast's target formats)."""
        if not super().supports(op, specs, params):
            return False
        cp = self._cp(op)
        audited = cp.data.get("audited", {}) if isinstance(cp.data, dict) else {}
        return all(v in audited[k] for k, v in params.items() if k in audited)

    # ------------------------------------------------------------------ running
    def _fn(self, call):
        obj = self.tf
        for part in call.split(".")[1:]:
            obj = getattr(obj, part)
        return obj

    def _kwargs(self, cp, params, *, live=True) -> dict:
        """The TensorFlow keywords for the registry's ``params`` (a format name becomes the
        ``tf.DType``, or, with ``live=False``, its :class:`_DType` name for the source)."""
        data = cp.data if isinstance(cp.data, dict) else {}
        names, values = data.get("params", {}), data.get("values", {})
        kw = dict(data.get("kwargs", {}))
        for k, v in params.items():
            if k not in names:
                continue
            v = values.get(k, {}).get(v, v) if isinstance(values.get(k), dict) else v
            if isinstance(v, str) and v in FORMATS:
                v = self.tf.as_dtype(FORMATS[v].np_dtype) if live else _DType(v)
            kw[names[k]] = v
        return kw

    def call(self, op, cp, operands, params):
        tf = self.tf
        if "conv" in (cp.data if isinstance(cp.data, dict) else {}):
            names = [f"a{i}" if v is not None else None for i, v in enumerate(operands)]
            scope = {"tf": tf, "np": np, **{n: np.asarray(v) for n, v in
                                            zip(names, operands, strict=True) if n}}
            exec("\n".join(self._conv_lines(cp, names, params, operands)), scope)  # noqa: S102
            return np.asarray(scope["out"])
        with tf.device(self.device):
            args = [tf.constant(np.asarray(v)) for v in operands if v is not None]
            out = self._fn(cp.call)(*args, **self._kwargs(cp, params)).numpy()
        return np.asarray(out)

    def unsupported(self, exc) -> bool:
        tf = self.tf
        return isinstance(exc, (NotImplementedError, tf.errors.NotFoundError,
                                tf.errors.UnimplementedError)) or (
            isinstance(exc, (TypeError, tf.errors.InvalidArgumentError))
            and ("not supported" in str(exc) or "No OpKernel" in str(exc)
                 or "Could not find device for node" in str(exc)))

    #: a reproducer's operands are each the failing element repeated this many times (the
    #: output's first element is checked): Eigen computes a 1-element tensor on its scalar
    #: path and a longer one in packets, and the two differ (float32 reciprocal, rsqrt)
    TILE = 64
    _tile = False

    def reproducer(self, op, specs, values, params):
        self._tile = True
        try:
            return super().reproducer(op, specs, values, params)
        finally:
            self._tile = False

    _named_operands = ()

    def _long_reproducer(self, op, operands, params) -> str:
        self._named_operands = list(operands.values())  # a conv's call reads their shapes
        return super()._long_reproducer(op, operands, params)

    # ------------------------------------------------------------------ reproducers
    def imports(self):
        return ["import os", "os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')",
                "import numpy as np", "import tensorflow as tf"]

    def _conv_lines(self, cp, names, params, operands):
        """A PyTorch-layout convolution (``data["conv"]``) as TensorFlow source: the input to
        channels-last, the weight to (k..., C/groups, O), the padding explicit (or the input
        zero-padded first: ``"pad"``), the bias by ``tf.nn.bias_add``, the result back to
        channels-first; ``out`` a numpy array."""
        data = cp.data
        x, w = np.asarray(operands[0]), np.asarray(operands[1])
        r = x.ndim - 2
        kw = {k: v for k, v in data["params"].items() if v}
        stride = _ints(params.get("stride", 1), r)
        dilation = _ints(params.get("dilation", 1), r)
        pads = _conv_pads(params.get("padding", 0), w.shape[2:], dilation)
        to_last = (0, *range(2, r + 2), 1)
        lines = [f"with tf.device({self.device!r}):",
                 f"    x = tf.transpose(tf.constant({names[0]}), {to_last})  # channels last",
                 f"    w = tf.transpose(tf.constant({names[1]}), "
                 f"{(*range(2, r + 2), 1, 0)})  # (k..., C/groups, O)"]
        if data["conv"]["padding"] == "pad":
            if any(p for pair in pads for p in pair):
                lines.append(f"    x = tf.pad(x, {[[0, 0], *pads, [0, 0]]})  # zero padding")
            padding = "VALID"
        else:
            padding = [[0, 0], *pads, [0, 0]]
        lines.append(f"    y = {cp.call}(x, w, {kw['stride']}={stride}, padding={padding!r}, "
                     f"{kw['dilation']}={dilation})")
        if len(names) > 2 and names[2] is not None:
            lines.append(f"    y = tf.nn.bias_add(y, tf.constant({names[2]}))")
        lines.append(f"    out = tf.transpose(y, {(0, r + 1, *range(1, r + 1))}).numpy()")
        return lines

    def call_lines(self, op, cp, names, params):
        if "conv" in (cp.data if isinstance(cp.data, dict) else {}):
            return self._conv_lines(cp, names, params, self._named_operands)
        lines = [f"with tf.device({self.device!r}):"]
        args = []
        for i, n in enumerate(names):
            if self._tile:
                lines.append(f"    t{i} = tf.constant(np.tile({n}, {self.TILE}))  "
                             f"# the element {self.TILE} times: Eigen's packet path")
            else:
                lines.append(f"    t{i} = tf.constant({n})")
            args.append(f"t{i}")
        kw = self._kwargs(cp, params, live=False)
        text = [f"{k}={v!r}" for k, v in kw.items()]
        lines.append(f"    out = {cp.call}({', '.join(args + text)}).numpy()")
        if self._tile:
            shape = ", ".join(f"np.shape({n})" for n in names)
            lines.append(f"out = out[:1].reshape(np.broadcast_shapes({shape}))")
        return lines


TARGET = TensorFlowTarget
