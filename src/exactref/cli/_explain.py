"""``exactref explain MODULE:FUNCTION --op OP``: what a kernel really does.

The kernel is called on drawn inputs (standard normal rows; for elementwise ops, edge values in
the last row: signed zeros, ones, subnormals, values whose products are subnormal, large
values; row normalizations called as the audit's row groups call them), the reference is
``er.<op>`` on the same inputs under the declared ``--set`` fields, and :func:`exactref.explain.explain`
reports which contracts cover the output, tightest first, per dtype. Exit codes: 0 the default
contract covers every dtype, 1 only other contracts cover some, 2 no contract tried covers
some dtype, 3 the kernel raised, 4 a usage error.
"""

from __future__ import annotations

import json
import sys

import numpy as np

#: the exit codes by an explanation's status
_CODES = {"default": 0, "other": 1, "none": 2}
_DEFAULT_SHAPE = (4, 1024)


def register(sub) -> None:
    p = sub.add_parser(
        "explain", help="which contracts cover a kernel's output, tightest first",
        description="Call a kernel on drawn inputs and report which contracts cover its "
                    "output, tightest first, and what each uncovered element breaks. Exit "
                    "codes: 0 the default contract covers, 1 only other contracts do, 2 none "
                    "tried does, 3 the kernel raised, 4 usage error.")
    p.add_argument("target", help="module:function, the kernel to explain")
    p.add_argument("--op", dest="op_name", required=True,
                   help="the op the kernel computes (any registered op with an input plan: "
                        "elementwise ops, long ops, row normalizations)")
    p.add_argument("--dtypes", default="float32",
                   help="comma-separated formats to explain (default float32)")
    p.add_argument("--shape", default=None,
                   help="the shape of the drawn operands, comma-separated (default 4,1024 "
                        "for elementwise and row ops; a long op's recorded shapes)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a field of the kernel's declared contract (repeatable): --set "
                        "order=pairwise --set flush=both; the search starts from it")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the explanations as JSON")
    p.set_defaults(func=run)


def _shape(text):
    if text is None:
        return None
    try:
        shape = tuple(int(t) for t in text.split(","))
    except ValueError:
        shape = ()
    if not shape or any(n <= 0 for n in shape):
        raise ValueError(f"--shape {text!r}: expected positive integers separated by commas, "
                         f"e.g. --shape 4,1024")
    return shape


def _edges(fmt, which: int) -> list:
    """Edge values of a float format for operand ``which`` (0 or 1): paired so that the
    elementwise ops meet subnormal inputs, subnormal products and sums, zeros of both signs."""
    info = np.finfo(fmt.np_dtype) if fmt.np_dtype is not None else None
    tiny = float(info.smallest_normal) if info is not None else 2.0**-126
    sub = tiny / 8
    half = float(np.sqrt(tiny)) * 0.75  # half * half is subnormal
    big = float(info.max) / 4 if info is not None else 1e30
    first = [0.0, -0.0, 1.0, -1.0, half, -half, sub, -sub, sub * 3, 1.5, big, 2.0**-3]
    second = [0.0, 1.0, -0.0, 1.0, half, half, 1.0, 1.0, 2.0**10, sub, 0.5, 1 / (tiny * 16)]
    return first if which == 0 else second


def _inputs(spec, fmt, shape, rng):
    """``(args, kwargs)`` of the kernel's call and the reference's, drawn per the op's plan."""
    from ..ops import get_op

    spec = get_op(spec)
    data = spec.audit.data if spec.audit is not None else None
    dt = fmt.np_dtype

    def normal(s):
        return rng.standard_normal(s).astype(np.float64).astype(dt)

    if spec.plan == "elementwise":
        shape = shape or _DEFAULT_SHAPE
        args = []
        for j, _ in enumerate(spec.operands):
            a = normal(shape)
            flat = a.reshape(-1)
            edges = np.asarray(_edges(fmt, min(j, 1)), np.float64).astype(dt)
            k = min(edges.size, flat.size)
            flat[flat.size - k:] = edges[:k]
            args.append(a)
        return args, {}
    if spec.audit is not None and spec.audit.groups == "rows":  # as the audit's row groups
        roles = tuple(data.get("operands", ("x",))) if isinstance(data, dict) else ("x",)
        grouped = "groups" in roles
        shape = shape or ((2, 32, 8, 8) if grouped else _DEFAULT_SHAPE)
        if grouped and len(shape) < 2:
            raise ValueError(f"--shape {shape}: {spec.name} normalizes groups of channels "
                             f"(axis 1); give at least two axes, e.g. --shape 2,32,8,8")
        per = shape[1] if grouped else shape[-1]
        made = {"x": lambda: normal(shape), "shape": lambda: (shape[-1],),
                "groups": lambda: 8 if per % 8 == 0 else 1,
                "weight": lambda: rng.uniform(0.5, 1.5, per).astype(dt),
                "bias": lambda: (rng.standard_normal(per) * 0.1).astype(dt)}
        params = dict(data.get("params", {})) if isinstance(data, dict) else {}
        return [made[r]() for r in roles], params
    if isinstance(data, dict) and "operands" in data and spec.audit.groups is None:
        shapes = list(data["operands"])
        if shape is not None:
            if len(shapes) != 1:
                raise ValueError(f"--shape: {spec.name} takes {len(shapes)} operands, drawn in "
                                 f"the shapes its record names ({shapes}); leave --shape out")
            shapes = [shape]
        return [normal(s) for s in shapes], dict(data.get("params", {}))
    raise ValueError(
        f"exactref explain --op {spec.name}: the command draws inputs for elementwise ops, "
        f"long ops with recorded shapes and row normalizations; for {spec.name}, call "
        f"er.explain(er.{spec.name}(...), actual) from Python on your own inputs")


def run(args) -> int:
    from .. import audit
    from .._formats import dtype as resolve_dtype
    from ..explain import explain
    from ..ops import get_op

    spec = get_op(args.op_name)  # an unknown name raises with close matches
    if ":" not in args.target:
        raise ValueError(f"exactref explain takes a kernel as module:function, got "
                         f"{args.target!r} (a library's kernels: exactref audit)")
    target = audit.get_target(args.target, op_name=args.op_name)
    shape = _shape(args.shape)
    formats = [resolve_dtype(d.strip()) for d in args.dtypes.split(",") if d.strip()]
    if not formats or any(f.kind != "float" or f.np_dtype is None for f in formats):
        raise ValueError(f"--dtypes {args.dtypes!r}: expected float formats with a numpy "
                         f"dtype (float32, float16, bfloat16, float64, ...)")
    contract = None
    if args.sets:
        from .._contract import Contract

        contract = Contract().with_sets(args.sets)
    out, code = {}, 0
    for fmt in formats:
        rng = np.random.default_rng(args.seed)
        operands, kwargs = _inputs(spec.name, fmt, shape, rng)
        try:
            actual = target.call(tuple(operands), dict(kwargs))
        except Exception as exc:  # noqa: BLE001 - the kernel's own failure, reported
            print(f"exactref explain: the kernel {args.target} raised on {fmt.name}: {exc}",
                  file=sys.stderr)
            return 3
        result = spec.function(*operands, contract=contract, **kwargs)
        e = explain(result, actual)
        code = max(code, _CODES[e.status])
        out[fmt.name] = e
        if not args.json:
            print(f"{args.target} as {spec.name}, {fmt.name}:")
            print(e)
    if args.json:
        print(json.dumps({"target": args.target, "op": spec.name, "exit": code,
                          "dtypes": {k: e.to_dict() for k, e in out.items()}}, indent=1))
    return code
