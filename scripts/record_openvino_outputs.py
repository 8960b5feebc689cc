"""Record OpenVINO's outputs for the audit's own inputs, so tests/audit/test_openvino.py replays
the target's contracts and the audit's checks without OpenVINO installed.

    python scripts/record_openvino_outputs.py            # writes tests/audit/fixtures/openvino/
    python scripts/record_openvino_outputs.py --measure  # the accuracy bounds of the table
    python scripts/record_openvino_outputs.py --only conv1d,scaled_dot_product_attention
                                    # re-record the runs holding these ops, keep the others

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
#: the shaped ops (their groups' shapes come from the records, not ``samples``): conv1d (its
#: depthwise case is GroupConvolution) in float32, bfloat16 (AMX's flushed inputs) and float64
#: (the float32 finding), attention in float32 and bfloat16 (the weights stored in bf16)
OPS_SHAPED = ("conv1d", "scaled_dot_product_attention")
#: the recorded audits: (ops, formats (None: every format the table has), samples); the
#: functions at the audit's default 256 samples, where its special values (NaN) are drawn
RUNS = ((OPS, None, SAMPLES), (OPS_F32, ("float32",), 256),
        (OPS_SHAPED[:1], ("float32", "bfloat16", "float64"), SAMPLES),
        (OPS_SHAPED[1:], ("float32", "bfloat16"), SAMPLES))


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


def record(only=None):
    """Record every run of :data:`RUNS`, or (``only``: op names) the runs holding one of them,
    the other runs' outputs and statuses kept from the fixtures (each run's machine is
    ``meta["machines"]``: a kernel's path depends on the CPU's features)."""
    from exactref import _versions
    from exactref.audit._openvino import OpenVinoTarget

    outputs = {}

    class Recording(OpenVinoTarget):
        def call(self, op, cp, operands, params):
            out = super().call(op, cp, operands, params)
            outputs[call_key(op, operands, params)] = np.asarray(out)
            return out

    target = Recording("cpu")
    old = json.loads((OUT / "meta.json").read_text()) if only else {}
    chosen = [i for i, r in enumerate(RUNS) if only is None or set(r[0]) & set(only)]
    statuses, keys = {}, {}
    for i in chosen:
        outputs.clear()
        report = run(target, *RUNS[i])
        statuses[i] = {f"{g.op} {' '.join(g.operands)} {g.params}": g.status
                       for g in report.groups}
        keys[i] = dict(outputs)
    features = sorted(_versions.cpu_features())
    arrays, dtypes, machines, all_statuses = {}, {}, [], {}
    if only:  # the runs kept: their outputs, statuses and machine from the fixtures
        kept = np.load(OUT / "outputs.npz")
        machines = list(old.get("machines", [old["cpu_features"]] * len(old["runs"])))
        machines += [features] * (len(RUNS) - len(machines))
        for k in kept.files:
            if k in old["dtypes"]:
                arrays[k], dtypes[k] = kept[k], old["dtypes"][k]
        all_statuses.update({k: v for k, v in old["statuses"].items()
                             if k.split(" ")[0] not in {o for i in chosen for o in RUNS[i][0]}})
    else:
        machines = [features] * len(RUNS)
    for i in chosen:
        machines[i] = features
        all_statuses.update(statuses[i])
        for k, v in keys[i].items():  # bfloat16 as its bits (npz has no bfloat16)
            dtypes[k] = v.dtype.name
            arrays[k] = v.view(np.uint16) if v.dtype.name == "bfloat16" else v
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / "outputs.npz", **arrays)
    meta = {"versions": target.versions(),
            "cpu_features": old.get("cpu_features", features) if only else features,
            "machines": machines, "runs": [[list(o), d, n] for o, d, n in RUNS], "seed": SEED,
            "dtypes": dtypes, "statuses": all_statuses}
    (OUT / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    done = [s for i in chosen for s in statuses[i].values()]
    print(f"{len(arrays)} outputs, {done.count('pass')} passed, {done.count('fail')} failed "
          f"in the runs recorded -> {OUT}")


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
    ap.add_argument("--only", help="comma-separated ops: re-record only the runs holding them")
    args = ap.parse_args()
    sys.exit(measure() if args.measure else record(args.only.split(",") if args.only else None))
