"""Record TensorFlow's outputs for the audit's own inputs, so tests/audit/test_tensorflow.py
replays the TensorFlow target's contracts and departures without TensorFlow installed.

Runs ``exactref audit tensorflow`` on the replayed ops (:data:`OPS`) at :data:`SAMPLES`
samples per group with a target that keeps, for each call, its operands' digest and the
output's bytes; writes tests/audit/fixtures/tensorflow/outputs.json with the versions and CPU
features it was recorded on.

    python scripts/record_tensorflow_outputs.py          # both files
    python scripts/record_tensorflow_outputs.py --conv   # conv.json alone

The files say the CPU features they were recorded on: oneDNN and Eigen pick their kernels by
the vector unit (outputs.json on AVX2/FMA, conv.json on an AVX-512/AMX machine), so record
each on the machine its tests' expectations were measured on.
"""

from __future__ import annotations

import base64
import json
import pathlib
import platform
import sys

import numpy as np

from exactref.audit._runtime import call_key

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests/audit/fixtures/tensorflow/outputs.json"
#: the ops the replay tests audit (the issue's listed deviations and correct kernels of each
#: kind: arithmetic, a function, a comparison, a reduction, a long sum, a row kernel)
OPS = ("add", "multiply", "reciprocal", "erf", "exp", "less", "sum", "cumsum", "matmul",
       "softmax")
SAMPLES = 64
#: the convolution replayed (tests/audit/fixtures/tensorflow/conv.json, its own file: a conv's
#: groups have fixed shapes, 4,288 outputs each): conv1d in the formats whose contracts differ
CONV_OUT = OUT.with_name("conv.json")
CONV_OPS = ("conv1d",)
CONV_DTYPES = ("float16", "bfloat16", "float32")


def encode(a: np.ndarray) -> dict:
    shape = list(np.shape(a))  # np.ascontiguousarray makes a 0-d array 1-d
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.name, "shape": shape,
            "data": base64.b64encode(a.tobytes()).decode("ascii")}


def main() -> int:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "src"))
    import exactref.audit as audit
    from exactref import _versions
    from exactref.audit._tensorflow import TensorFlowTarget

    recorded = {}

    class Recording(TensorFlowTarget):
        def call(self, op, cp, operands, params):
            out = super().call(op, cp, operands, params)
            recorded[call_key(op, operands, params)] = encode(np.asarray(out))
            return out

    target = Recording("cpu")
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    runs = [(OUT, OPS, None), (CONV_OUT, CONV_OPS, CONV_DTYPES)]
    if "--conv" in sys.argv[1:]:  # the convolution's file alone
        runs = runs[1:]
    for out, ops, dtypes in runs:
        recorded.clear()
        try:
            report = audit.run_audit(audit.AuditConfig(target="tensorflow", ops=ops,
                                                       dtypes=dtypes, samples=SAMPLES))
        finally:
            audit.get_target = real
        doc = {"recorded_on": {"tensorflow": target.tf.__version__, "numpy": np.__version__,
                               "python": platform.python_version(),
                               "machine": platform.machine(),
                               "cpu_features": sorted(_versions.cpu_features())},
               "ops": list(ops), "samples": SAMPLES,
               "statuses": {g.key: g.status for g in report.groups},
               "outputs": recorded}
        if dtypes:
            doc["dtypes"] = list(dtypes)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=0, sort_keys=True))
        print(f"{len(recorded)} outputs, {out.stat().st_size // 1024} KiB -> {out}")
        audit.get_target = lambda *a, **k: target
    audit.get_target = real
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
