"""``exactref promotion``: print a policy's tables, diff two policies, explain one case.

::

    exactref promotion table --policy kael [--op add] [--markdown]
    exactref promotion diff torch numpy [--op div]
    exactref promotion explain "int64[3]" 0.5 --policy kael [--op mul]

Operands are written in exactref's notation: ``int64[3]`` an array with dimensions, ``int64[]``
a 0-d array, ``0.5``/``2**63``/``1j``/``True`` Python scalars, ``float32(0.5)`` a typed scalar.

With a unary op (``--op sqrt``) the tables have one operand: a column of dtypes, and each
Python scalar alone. With a ternary op (``--op clamp``, ``addcmul``, ``fma``) the row is the
first operand and the column the dtype (or scalar) of the other two: ``clamp(row, col, col)``.
"""

from __future__ import annotations

from ..promotion import (
    OPS,
    POLICY_NAMES,
    TERNARY,
    UNARY,
    PromotionError,
    Scalar,
    Trace,
    canonical_op,
    explain,
    get_policy,
    operand,
)

__all__ = ["register", "render_table", "render_diff", "SHORT"]

#: Short dtype names for tables: kind letter and bits (float8/6/4 by their layout).
SHORT = {
    "bool": "b", "int1": "i1", "int2": "i2", "int4": "i4", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint1": "u1", "uint2": "u2", "uint4": "u4", "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32", "uint64": "u64", "float16": "f16", "bfloat16": "bf16", "float32": "f32",
    "float64": "f64", "complex32": "c32", "bcomplex32": "bc32", "complex64": "c64",
    "complex128": "c128", "float8_e4m3fn": "e4m3fn", "float8_e4m3fnuz": "e4m3fnuz",
    "float8_e5m2": "e5m2", "float8_e5m2fnuz": "e5m2fnuz", "float8_e4m3b11fnuz": "e4m3b11",
    "float8_e3m4": "e3m4", "float8_e4m3": "e4m3", "float8_e8m0fnu": "e8m0",
    "float6_e2m3fn": "e2m3", "float6_e3m2fn": "e3m2", "float4_e2m1fn": "e2m1",
}
LEGEND = ("x: the policy rejects the pair; ?: the policy's source leaves it unspecified; "
          "!: out of range")


def _arity(op) -> int:
    """How many operands the tables give ``op``: 1, 2, or 3 (the column's dtype twice)."""
    fam = OPS.get(op)
    return 1 if fam in UNARY else 3 if fam in TERNARY else 2


def _operands(op, first, other) -> tuple:
    return {1: (first,), 2: (first, other), 3: (first, other, other)}[_arity(op)]


def _cell(policy, operands, op) -> str:
    try:
        return SHORT[policy.resolve([operand(o) for o in operands], op, Trace()).result.name]
    except PromotionError as exc:
        return {"unspecified": "?", "value": "!"}.get(exc.reason, "x")


def _grid(title, corner, rows, cols, cells, markdown) -> list:
    if markdown:
        out = [f"**{title}**", "", "| " + " | ".join([corner, *cols]) + " |",
               "|" + "---|" * (len(cols) + 1)]
        out += ["| " + " | ".join([r, *row]) + " |" for r, row in zip(rows, cells, strict=True)]
        return [*out, ""]
    width = max(len(c) for c in [corner, *rows, *cols, *(x for row in cells for x in row)]) + 1
    out = [title, corner.ljust(width) + "".join(c.ljust(width) for c in cols).rstrip()]
    out += [r.ljust(width) + "".join(x.ljust(width) for x in row).rstrip()
            for r, row in zip(rows, cells, strict=True)]
    return [*out, ""]


def render_table(policy_name: str, op=None, markdown=False) -> str:
    """The policy's pair table and its tensor-scalar table, as text or markdown."""
    policy = get_policy(policy_name)
    op = canonical_op(op)
    fmts = policy.formats
    names = [SHORT[f.name] for f in fmts]
    lines = [f"{policy.describe()}", f"op: {op or 'none (plain promotion)'}; {LEGEND}", ""]
    scalars = policy.scalar_columns()
    if _arity(op) == 1:
        cells = [[_cell(policy, (f"{a.name}[3]",), op)] for a in fmts]
        lines += _grid(f"{op} of an array with dimensions (row)", "dtype", names, [op], cells,
                       markdown)
        if scalars and not isinstance(scalars[0], Scalar):
            cols = [repr(s) for s in scalars]
            lines += _grid(f"{op} of a Python scalar (column)", "", [op], cols,
                           [[_cell(policy, (s,), op) for s in scalars]], markdown)
        lines.append("dtypes: " + ", ".join(f"{SHORT[f.name]}={f.name}" for f in fmts))
        return "\n".join(lines) + "\n"
    title = ("arrays with dimensions (row, column)" if _arity(op) == 2 else
             f"arrays with dimensions, {op}(row, column, column)")
    pairs = [[_cell(policy, _operands(op, f"{a.name}[3]", f"{b.name}[3]"), op) for b in fmts]
             for a in fmts]
    lines += _grid(title, "dtype", names, names, pairs, markdown)
    if scalars and isinstance(scalars[0], Scalar):
        # aclnn: rows are the scalar dtype, columns the tensor dtype, as in its documentation
        rows = [SHORT[s.dtype.name] for s in scalars]
        cells = [[_cell(policy, _operands(op, f"{t.name}[3]", s), op) for t in fmts]
                 for s in scalars]
        lines += _grid("tensor-scalar (row: scalar dtype, column: tensor dtype)", "scalar",
                       rows, names, cells, markdown)
    elif scalars:
        cols = [repr(s) for s in scalars]
        cells = [[_cell(policy, _operands(op, f"{t.name}[3]", s), op) for s in scalars]
                 for t in fmts]
        lines += _grid("array with dimensions (row) and Python scalar (column)", "dtype",
                       names, cols, cells, markdown)
    lines.append("dtypes: " + ", ".join(f"{SHORT[f.name]}={f.name}" for f in fmts))
    return "\n".join(lines) + "\n"


def _outcome(policy, operands, op) -> str:
    try:
        return policy.resolve([operand(o) for o in operands], op, Trace()).result.name
    except PromotionError as exc:
        return {"unspecified": "unspecified", "value": "out of range",
                "unsupported": "unsupported"}.get(exc.reason, "error")


def render_diff(p_name: str, q_name: str, op=None) -> str:
    """Every cell where two policies differ: dtype pairs (with dimensions, and with a 0-d
    second operand) and arrays with Python scalars, over the dtypes both policies know. A unary
    op has one operand (each dtype, each Python scalar); a ternary op's second operand stands
    for the last two."""
    p, q = get_policy(p_name), get_policy(q_name)
    op = canonical_op(op)
    common = [f for f in p.formats if f in q.formats]
    cases = []
    if _arity(op) == 1:
        cases = [(f"{a.name}[3]",) for a in common] + [(s,) for s in ("True", "2", "0.5", "1j")]
    for a in common if _arity(op) > 1 else ():
        for b in common:
            cases.append(_operands(op, f"{a.name}[3]", f"{b.name}[3]"))
    for a in common if _arity(op) > 1 else ():
        for b in common:
            cases.append(_operands(op, f"{a.name}[3]", f"{b.name}[]"))
    for a in common if _arity(op) > 1 else ():
        for s in ("True", "2", "0.5", "1j"):
            cases.append(_operands(op, f"{a.name}[3]", s))
    rows = []
    for case in cases:
        x, y = _outcome(p, case, op), _outcome(q, case, op)
        if x != y:
            rows.append((", ".join(case), x, y))
    head = [f"{p.name} vs {q.name}, op {op or 'none (plain promotion)'}: {len(rows)} of "
            f"{len(cases)} cells differ (over the {len(common)} dtypes both know)"]
    if rows:
        w0 = max(len(r[0]) for r in rows) + 2
        w1 = max(len(p.name), *(len(r[1]) for r in rows)) + 2
        head.append("operands".ljust(w0) + p.name.ljust(w1) + q.name)
        head += [r[0].ljust(w0) + r[1].ljust(w1) + r[2] for r in rows]
    return "\n".join(head) + "\n"


def _table(args) -> int:
    print(render_table(args.policy, args.op, args.markdown), end="")
    return 0


def _diff(args) -> int:
    print(render_diff(args.p, args.q, args.op), end="")
    return 0


def _explain(args) -> int:
    print(explain(*args.operands, policy=args.policy, op=args.op))
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "promotion", help="dtype promotion under torch, numpy, jax, array API, aclnn, kael",
        description="Result dtypes of mixed operations under each ecosystem's rules.")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    policies = ", ".join(POLICY_NAMES)

    t = sub.add_parser("table", help="print a policy's pair and tensor-scalar tables")
    t.add_argument("--policy", default="torch", help=f"one of {policies} (default torch)")
    t.add_argument("--op", default=None, help="operation (add, sub, div, lt, sqrt, clamp, ...)")
    t.add_argument("--markdown", action="store_true", help="markdown tables")
    t.set_defaults(func=_table)

    d = sub.add_parser("diff", help="every cell where two policies differ")
    d.add_argument("p", help=f"first policy ({policies})")
    d.add_argument("q", help="second policy")
    d.add_argument("--op", default=None, help="operation (add, sub, div, lt, ...)")
    d.set_defaults(func=_diff)

    e = sub.add_parser("explain", help="explain one case step by step")
    e.add_argument("operands", nargs="+",
                   help='operands: "int64[3]" (array), "int64[]" (0-d), 0.5, 2**63, "f32(1)"')
    e.add_argument("--policy", default="torch", help=f"one of {policies} (default torch)")
    e.add_argument("--op", default=None, help="operation (add, sub, div, lt, ...)")
    e.set_defaults(func=_explain)

    def _help(args, parser=parser) -> int:
        parser.print_help()
        return 4

    parser.set_defaults(func=_help)
