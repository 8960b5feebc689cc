"""ONNX Runtime as an audit target (``exactref audit onnxruntime``): each registry op its table
(:mod:`exactref.ops._onnxruntime`) names runs as a one-node ONNX model, built once per op,
formats and attributes and cached, on the CPU execution provider (``--device`` names another)."""

from __future__ import annotations

import numpy as np

from ._runtime import RuntimeTarget

__all__ = ["OnnxRuntimeTarget", "TARGET"]


class OnnxRuntimeTarget(RuntimeTarget):
    name = "onnxruntime"
    library_key = "onnxruntime"
    package = "onnxruntime"

    def __init__(self, device="CPUExecutionProvider"):
        import onnx
        import onnxruntime

        self.onnx, self.ort = onnx, onnxruntime
        self.device = "CPUExecutionProvider" if device == "cpu" else device
        self._sessions = {}

    def versions(self) -> dict:
        return {"onnxruntime": self.ort.__version__, "onnx": self.onnx.__version__}

    def call(self, op, cp, operands, params):
        from onnx import helper

        arrays = [np.asarray(v) for v in operands if v is not None]
        elem = helper.np_dtype_to_tensor_dtype(arrays[0].dtype)
        key = (op, arrays[0].dtype.name, tuple(a.ndim for a in arrays), tuple(params.items()))
        sess = self._sessions.get(key)
        if sess is None:
            names = [f"x{i}" for i in range(len(arrays))]
            node = helper.make_node(cp.call, names, ["out"])
            graph = helper.make_graph(
                [node], op, [helper.make_tensor_value_info(n, elem, [None] * a.ndim)
                             for n, a in zip(names, arrays, strict=True)],
                [helper.make_tensor_value_info("out", elem, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
            sess = self.ort.InferenceSession(model.SerializeToString(), providers=[self.device])
            self._sessions[key] = sess
        return sess.run(None, {f"x{i}": a for i, a in enumerate(arrays)})[0]

    def imports(self):
        return ["import numpy as np", "import onnx", "import onnxruntime as ort",
                "from onnx import helper"]

    def call_lines(self, op, cp, names, params):
        return [f"# {cp.call}"]


TARGET = OnnxRuntimeTarget
