"""Record ONNX Runtime's outputs for the audit's own inputs, so that tests/audit/
test_onnxruntime.py replays the target's contracts and departures without onnxruntime.

    python scripts/record_onnxruntime_outputs.py            # the fixtures
    python scripts/record_onnxruntime_outputs.py --kernels  # the CPU provider's kernel formats
    python scripts/record_onnxruntime_outputs.py --attention  # attention.npz/.json alone

Runs ``exactref audit onnxruntime`` (seed 0, :data:`SAMPLES` samples) on :data:`OPS`, through a
target whose ``call`` also stores each output by its :func:`call_key`, and writes
``tests/audit/fixtures/onnxruntime/outputs.npz`` (each output's bits, by key) and
``meta.json`` (the versions, the CPU features, the opset, each key's format and each group's
status as recorded). ``--kernels`` prints, per op of the table, the formats whose one-node model
the CPU execution provider builds (the table's ``data["dtypes"]``).
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

import exactref.audit as audit
from exactref import _versions
from exactref._formats import FORMATS
from exactref._formats import dtype as resolve_dtype
from exactref.audit import AuditConfig, run_audit
from exactref.audit._onnxruntime import OPSET, OnnxRuntimeTarget, call_key

HERE = pathlib.Path(__file__).resolve().parent.parent / "tests/audit/fixtures/onnxruntime"
#: the ops recorded: each of the issue's deviations, and correct kernels beside them
OPS = ("add", "divide", "maximum", "exp", "tanh", "sigmoid", "gelu", "sin", "softmax",
       "log_softmax", "matmul", "cast")
#: the formats recorded (every one the ops have a kernel for but bfloat16's casts)
DTYPES = ("float16", "float32", "float64")
SAMPLES = 256


class Recording(OnnxRuntimeTarget):
    """The ONNX Runtime target, storing every output it returns by its call's key."""

    def __init__(self, device="cpu"):
        super().__init__(device)
        self.outputs = {}

    def call(self, op, cp, operands, params):
        out = super().call(op, cp, operands, params)
        self.outputs[call_key(op, operands, params)] = np.asarray(out).copy()
        return out


def record() -> None:
    target = Recording()
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    try:
        report = run_audit(AuditConfig(target="onnxruntime", ops=OPS, dtypes=DTYPES,
                                       samples=SAMPLES, seed=0))
    finally:
        audit.get_target = real
    bits, formats = {}, {}
    for key, out in target.outputs.items():
        fmt = resolve_dtype(out.dtype)
        formats[key] = fmt.name
        width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[out.dtype.itemsize]
        bits[key] = out.view(width) if fmt.kind == "float" else out
    HERE.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(HERE / "outputs.npz", **bits)
    meta = {"versions": target.versions(), "cpu_features": sorted(_versions.cpu_features()),
            "opset": OPSET, "ops": list(OPS), "dtypes": list(DTYPES), "samples": SAMPLES,
            "seed": 0, "formats": formats,
            "statuses": {g.key: g.status for g in report.groups}}
    (HERE / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"{len(bits)} outputs of {len(report.groups)} groups: {report.passed} passed, "
          f"{report.failed} failed -> {HERE}")


def kernel_formats() -> dict:
    """Per op of the table, the formats whose one-node model the CPU provider builds."""
    from exactref.ops._onnxruntime import COUNTERPARTS

    target = OnnxRuntimeTarget()
    out = {}
    for op, cp in COUNTERPARTS.items():
        found = []
        for name in ("float16", "bfloat16", "float32", "float64"):
            for rank in (2, 4):  # Gemm takes matrices, Conv 4-d tensors
                x = np.ones((2,) * rank, FORMATS[name].np_dtype)
                try:
                    target._session(op, _probe_spec(op, cp, x))
                    found.append(name)
                    break
                except Exception:  # no kernel for the format: the session is not built
                    pass
        out[op] = tuple(found)
    return out


def kernels() -> None:
    from exactref.ops._onnxruntime import COUNTERPARTS

    for op, found in kernel_formats().items():
        cp = COUNTERPARTS[op]
        same = "" if found == cp.data["dtypes"] else f"  (table: {cp.data['dtypes']})"
        print(f"{op:14s} {cp.call:20s} {', '.join(found)}{same}")


def _probe_spec(op, cp, x):
    """A one-node model of ``cp`` on operands like ``x``: the record's operands less those ONNX
    takes as attributes, an ``onnx_type`` parameter set to ``x``'s own format."""
    from exactref.audit._onnxruntime import _ONNX_TYPES
    from exactref.ops import get_op

    name = resolve_dtype(x.dtype).name
    data = cp.data
    spec = get_op(op)
    names = (spec.audit.data or {}).get("operands") or spec.operands
    n = len(names) - len(data.get("operand_attrs", {}))
    attrs = {data["params"][k]: ("TensorProto", _ONNX_TYPES[name])
             for k, how in data.get("values", {}).items() if how == "onnx_type"}
    if "operand_attrs" in data:  # a normalization: its group count or axis
        attrs.update({a: 1 if how == "int" else -1
                      for a, how in data["operand_attrs"].values()})
    if spec.plan == "linear":  # an affine quantizer: x, a 0-d scale and an int8 zero point
        code = data["codes"][0]
        x_fmt, result = (code, name) if data.get("result") == "operand:1" else (name, code)
        return {"op_type": cp.call, "inputs": [("x0", x_fmt, x.ndim), ("x1", name, 0),
                                               ("x2", code, 0)],
                "feeds": {}, "attrs": attrs, "result": result}
    result = data.get("result", name)
    result = name if result.startswith(("param:", "operand:")) else result
    return {"op_type": cp.call, "inputs": [(f"x{i}", name, x.ndim) for i in range(max(n, 1))],
            "feeds": {}, "attrs": attrs, "result": result}


#: attention (its own files, attention.npz and attention.json: the audit's groups have fixed
#: shapes, 71,680 outputs a format, too large to keep): ORT's outputs for a few calls like the
#: audit's, name -> (format, (batch, heads, seq, head_dim), query scale, params); the tests
#: check them against the table's contract (and the float64 departure)
ATTENTION = "scaled_dot_product_attention"
PROBES = {"float16": ("float16", (1, 4, 64, 64), 1.0, {}),
          "float16_huge": ("float16", (1, 2, 32, 64), 8.0, {}),
          "float16_causal": ("float16", (1, 2, 64, 64), 1.0, {"is_causal": True}),
          "float32": ("float32", (1, 2, 32, 64), 1.0, {}),
          "float32_causal": ("float32", (1, 2, 32, 64), 1.0, {"is_causal": True}),
          "float64": ("float64", (1, 2, 16, 64), 1.0, {})}


def attention_inputs() -> dict:
    """Each probe's query, key and value (seeded: the tests draw the same), by name."""
    import exactref as er

    rng = np.random.default_rng(0)
    return {name: [er.asarray(rng.standard_normal(shape) * (scale if i == 0 else 1.0),
                              fmt).numpy() for i in range(3)]
            for name, (fmt, shape, scale, _) in PROBES.items()}


def record_attention() -> None:
    target = Recording()
    cp = target._cp(ATTENTION)
    arrays = {name: target.call(ATTENTION, cp, qkv, PROBES[name][3])
              for name, qkv in attention_inputs().items()}
    HERE.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(HERE / "attention.npz", **arrays)
    meta = {"versions": target.versions(), "cpu_features": sorted(_versions.cpu_features()),
            "opset": OPSET, "op": ATTENTION,
            "probes": {k: [f, list(sh), sc, p] for k, (f, sh, sc, p) in PROBES.items()}}
    (HERE / "attention.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"{len(arrays)} arrays -> {HERE / 'attention.npz'}")


if __name__ == "__main__":
    if "--kernels" in sys.argv[1:]:
        kernels()
    elif "--attention" in sys.argv[1:]:
        record_attention()
    else:
        record()
