"""Record OpenVINO's outputs for the audit's own inputs, so tests/audit/test_openvino.py replays
the target's contracts and the audit's checks without OpenVINO installed.

    python scripts/record_openvino_outputs.py            # writes tests/audit/fixtures/openvino/
    python scripts/record_openvino_outputs.py --measure  # the accuracy bounds of the table

The recording runs ``exactref audit openvino`` on :data:`OPS` (seed 0, :data:`SAMPLES` samples
per group) through a target whose ``call`` stores each output under the hash of its operands
and parameters (:func:`call_key`); the inputs are not stored: the replay draws them again from
the same seed. ``--measure`` prints, per function and format, the largest distance in ulps
between OpenVINO's result and the exact rounding over 120,000 inputs (normal results only:
the flushed subnormal ones are the contracts' ``flush``), the figures the table's ``accuracy``
bounds are rounded up from.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import warnings

import numpy as np

from exactref.audit._runtime import call_key

SAMPLES = 32
SEED = 0
ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "audit" / "fixtures" / "openvino"
#: the ops recorded: the issue's deviations and a correct kernel of each kind
OPS = ("add", "divide", "negative", "maximum", "sqrt", "softmax", "log_softmax", "sum",
       "matmul", "cast")
#: the functions, recorded in float32 only (their failing groups' explanations take seconds)
OPS_F32 = ("exp", "log", "gelu")
#: the recorded audits: (ops, formats (None: every format the table has), samples); the
#: functions at the audit's default 256 samples, where its special values (NaN) are drawn
RUNS = ((OPS, None, SAMPLES), (OPS_F32, ("float32",), 256))


def run(target, ops, dtypes, samples):
    """Audit ``ops`` in ``dtypes`` on ``target`` with the recording's seed."""
    import exactref.audit as audit

    cfg = audit.AuditConfig(target="openvino", ops=tuple(ops), samples=samples, seed=SEED,
                            dtypes=dtypes)
    real = audit.get_target
    audit.get_target = lambda *a, **k: target
    try:
        return audit.run_audit(cfg)
    finally:
        audit.get_target = real


def record():
    from exactref import _versions
    from exactref.audit._openvino import OpenVinoTarget

    outputs = {}

    class Recording(OpenVinoTarget):
        def call(self, op, cp, operands, params):
            out = super().call(op, cp, operands, params)
            outputs[call_key(op, operands, params)] = np.asarray(out)
            return out

    target = Recording("cpu")
    reports = [run(target, *r) for r in RUNS]
    OUT.mkdir(parents=True, exist_ok=True)
    arrays = {}
    dtypes = {}
    for k, v in outputs.items():  # bfloat16 as its bits (npz has no bfloat16)
        dtypes[k] = v.dtype.name
        arrays[k] = v.view(np.uint16) if v.dtype.name == "bfloat16" else v
    np.savez_compressed(OUT / "outputs.npz", **arrays)
    meta = {"versions": target.versions(), "cpu_features": sorted(_versions.cpu_features()),
            "runs": [[list(o), d, n] for o, d, n in RUNS], "seed": SEED,
            "dtypes": dtypes,
            "statuses": {f"{g.op} {' '.join(g.operands)} {g.params}": g.status
                         for r in reports for g in r.groups}}
    (OUT / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    passed, failed = sum(r.passed for r in reports), sum(r.failed for r in reports)
    print(f"{len(arrays)} outputs, {passed} passed, {failed} failed -> {OUT}")


def measure():
    import exactref as er
    from exactref.audit._openvino import OpenVinoTarget
    from exactref.ops import get_op

    t = OpenVinoTarget("cpu")
    rng = np.random.default_rng(1)
    n = 40_000
    xs = np.concatenate([rng.standard_normal(n) * 4, rng.standard_normal(n) * 30,
                         np.exp(rng.uniform(-90, 4.5, n)) * rng.choice([-1, 1], n)])
    for op, params in (("exp", {}), ("log", {}), ("tanh", {}), ("sigmoid", {}), ("erf", {}),
                       ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}),
                       ("mish", {}), ("softplus", {})):
        for name in ("float32", "float16"):
            if name not in get_op(op).counterparts.openvino.data["dtypes"]:
                continue
            f = er.dtype(name).np_dtype
            x = np.abs(xs).astype(f) if op == "log" else xs.astype(f)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = t.call(op, get_op(op).counterparts.openvino, [x], params)
                ref = np.asarray(getattr(er, op)(x, **params).rounded)
            out, ref = out.astype(np.float64), ref.astype(np.float64)
            ok = np.isfinite(ref) & np.isfinite(out) & (np.abs(ref) >= np.finfo(f).tiny)
            ulp = np.spacing(np.abs(ref).astype(f)).astype(np.float64)
            u = np.where(ok, np.abs(out - ref) / ulp, 0)
            print(f"{op} {params} {name}: max {u.max():.4g} ulps, 99.9% {np.quantile(u, .999):.3g}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="print the accuracy measurements")
    args = ap.parse_args()
    sys.exit(measure() if args.measure else record())
