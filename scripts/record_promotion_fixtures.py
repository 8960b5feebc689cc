#!/usr/bin/env python3
"""Record what torch, numpy (+ ml_dtypes) and jax really do when dtypes mix.

The fixtures under ``src/exactref/promotion/fixtures/`` are the ground truth that
``tests/promotion`` compares the exactref policies with, so the tests run without torch or jax.
Run this script again when a library version changes (``exactref.UnmeasuredVersionWarning``
names the library and the command), then rerun the tests::

    python scripts/record_promotion_fixtures.py            # every library
    python scripts/record_promotion_fixtures.py torch      # or: numpy, jax, jax_x64
    python scripts/record_promotion_fixtures.py --ops atan2   # only these ops' cells, merged
    python scripts/record_promotion_fixtures.py --tables numpy_ml_dtypes_0.7  # policy's data

numpy's fixture is named by the installed ml_dtypes minor (``numpy_ml_dtypes_0.7.json``):
record it once with each ml_dtypes minor the numpy policy models, and ``--tables`` prints the
policy's tables for a new minor from its fixture (see ``docs/promotion.md``, "Versions").

``--ops`` records only the cells of the named ops (and their in-place forms) and merges them into
the existing fixtures: the other cells stay byte for byte, and the library versions must be the
ones the fixture was recorded with.

Each library runs in a fresh subprocess (jax's x64 flag must be set before jax is used).

What is recorded: every ordered dtype pair (with dimensions and 0-d) and Python scalars in
both orders for each binary op (OPS) and each function of two arguments (FUNCTIONS2, numpy
scalars and in-place forms too, recorded last), the other comparisons for arrays with dimensions, every
dtype alone for the unary ops (UNARY), three-operand cases for the ternary ops (TERNARY), in-place
ops, numpy scalars, out-of-range ints and the libraries' promotion functions. Where a library has
no function for an op it is computed as exactref defines it (``rsqrt`` as ``1 / sqrt(x)``,
``fma`` as ``x * y + z``) or not recorded (numpy and jax have no addcmul or addcdiv).

Fixture layout (JSON)::

    {"library": "torch", "versions": {...}, "dtypes": [...], "errors": [[type, message], ...],
     "warnings": [[category, message], ...],
     "tables": [{"op": "add", "rows": ["int8[3]", ...], "cols": ["int8[3]", ...],
                 "cells": ["int8 int16 ...", ...]}, ...],
     "cases": [["addcmul", ["int8[3]", "float16[]", "bool[3]"], "float16"], ...]}

Operands are written in the notation ``exactref.promotion`` parses: ``int8[3]`` an array with
dimensions, ``int8[]`` a 0-d array, ``True``/``2``/``0.5``/``1j``/``2**63`` Python scalars,
``float32(0.5)`` a typed scalar (a numpy scalar). A cell is the output dtype (jax appends ``*``
to a weakly typed result), or ``E<n>`` for the n-th entry of ``errors``; ``E<n>>dtype`` says the
CPU kernel failed but the library's promotion gave ``dtype`` (torch: the same call on the meta
device; numpy: ``np.result_type``); ``!W<n>`` appended names a warning raised by the call.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, os.pardir, "src", "exactref", "promotion", "fixtures")

#: The binary ops recorded, by exactref's op names.
OPS = ("add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "eq", "lt",
       "bitwise_and", "logical_and", "maximum", "minimum", "fmax", "fmin", "fmod")
#: Functions of two arguments (numpy: arctan2), recorded after everything else (so that a run
#: with --ops adds them where a full run puts them): as OPS, plus numpy scalars and in-place.
FUNCTIONS2 = ("atan2",)
#: Comparisons recorded for arrays with dimensions only (their family is recorded in full).
MORE_COMPARISONS = ("ne", "le", "gt", "ge")
#: Unary ops: every dtype, with dimensions and 0-d, and each Python scalar alone. numpy and jax
#: have no rsqrt: it is recorded as ``1 / sqrt(x)`` there (the rule exactref follows).
UNARY = ("sqrt", "rsqrt", "reciprocal", "abs", "negative")
#: Ternary ops. numpy and jax have no addcmul or addcdiv (not recorded there); no library has an
#: fma: it is recorded as ``x * y + z`` (one multiply, then one add), exactref's rule.
TERNARY = ("addcmul", "addcdiv", "clamp", "fma")
#: Python scalars recorded with every op, and the extra ones recorded with add only.
PY_SCALARS = ("True", "2", "0.5", "1j")
PY_EXTRA = ("False", "-1", "300", "2**31", "2**63", "2**64", "-2**63-1", "1e300", "1e-30")
#: numpy scalars (typed scalars), recorded with add.
NP_SCALARS = ("bool(True)", "int8(2)", "uint8(2)", "int64(2)", "float16(0.5)", "float32(0.5)",
              "float64(0.5)", "complex64(1j)", "complex128(1j)", "bfloat16(0.5)")
INPLACE_OPS = ("add", "sub", "mul", "div")
#: The dtypes that three-operand cases are drawn from.
TRIPLE_DTYPES = ("bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32",
                 "float64", "complex64")


#: Warnings about the library itself, not about the call (left out of the cells).
IGNORED_WARNINGS = ("ComplexHalf support is experimental", "Explicitly requested dtype")


#: The ops to record (None: all); set by --ops. A name covers its in-place form (``atan2_``).
ONLY: frozenset | None = None


def selected(op) -> bool:
    return ONLY is None or op.rstrip("_") in ONLY


class Recorder:
    """Collects tables and cases; interns error and warning messages. With --ops it starts from
    the existing fixture's messages, so that the cells it keeps keep their indices."""

    def __init__(self, library, name=None):
        self.library = library
        self.errors: list = []
        self.warns: list = []
        self.tables: list = []
        self.cases: list = []
        self.old = None
        if ONLY is not None:
            with open(os.path.join(OUT, f"{name or library}.json")) as f:
                self.old = json.load(f)
            self.errors, self.warns = self.old["errors"], self.old["warnings"]

    def _intern(self, table, item):
        item = list(item)
        if item not in table:
            table.append(item)
        return table.index(item)

    def error(self, exc) -> str:
        msg = " ".join(str(exc).split())
        if len(msg) > 400:
            msg = msg[:400] + " ..."
        return f"E{self._intern(self.errors, (type(exc).__name__, msg))}"

    #: Only errors that say a kernel (a ufunc loop) is missing get the fallback's answer.
    fallback_on: tuple = ("not implemented for", "did not contain a loop", "not supported for "
                          "the input types")

    def outcome(self, call, fallback=None) -> str:
        """Run call(); return its dtype name, or its error (and, where the error says a kernel is
        missing, what fallback() answers: the library's promotion without the kernel)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                cell = call()
            except Exception as exc:  # noqa: BLE001 - recording every failure is the point
                cell = self.error(exc)
                if fallback is not None and any(t in str(exc) for t in self.fallback_on):
                    try:
                        cell += ">" + fallback()
                    except Exception:  # noqa: BLE001
                        pass
        for w in caught:
            if any(text in str(w.message) for text in IGNORED_WARNINGS):
                continue
            msg = " ".join(str(w.message).split())
            cell += f"!W{self._intern(self.warns, (w.category.__name__, msg))}"
        return cell

    def table(self, op, rows, cols, fn, fallback=None, note=None):
        if not selected(op):
            return
        cells = []
        for r in rows:
            row = []
            for c in cols:
                fb = (lambda r=r, c=c: fallback(r, c)) if fallback else None
                row.append(self.outcome(lambda r=r, c=c: fn(r, c), fb))
            cells.append(" ".join(row))
        entry = {"op": op, "rows": list(rows), "cols": list(cols), "cells": cells}
        if note:
            entry["note"] = note
        self.tables.append(entry)

    def case(self, op, operands, fn, fallback=None):
        if not selected(op):
            return
        self.cases.append([op, list(operands), self.outcome(fn, fallback)])

    def dump(self, name, versions, dtypes, notes):
        if self.old is not None:  # --ops: the new cells replace those ops' cells, nothing else
            if self.old["versions"] != versions:
                sys.exit(f"{name}: recorded with {self.old['versions']}, installed {versions}; "
                         f"record every op (no --ops) after a version change")
            self.tables = [t for t in self.old["tables"] if not selected(t["op"])] + self.tables
            self.cases = [c for c in self.old["cases"] if not selected(c[0])] + self.cases
            notes, dtypes = self.old["notes"], self.old["dtypes"]
        data = {
            "library": self.library,
            "versions": versions,
            "platform": f"{platform.system()} {platform.machine()}, CPU",
            "recorded_by": "scripts/record_promotion_fixtures.py",
            "notes": notes,
            "dtypes": list(dtypes),
            "errors": self.errors,
            "warnings": self.warns,
            "tables": self.tables,
            "cases": self.cases,
        }
        os.makedirs(OUT, exist_ok=True)
        path = os.path.join(OUT, f"{name}.json")
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        ncells = sum(len(t["rows"]) * len(t["cols"]) for t in self.tables) + len(self.cases)
        print(f"wrote {os.path.relpath(path)}: {ncells} cells", file=sys.stderr)


# --------------------------------------------------------------------------- operand notation
def parse_spec(spec):
    """('array', dtype, shape) | ('py', value) | ('typed', dtype, value)."""
    if spec.endswith("]"):
        name, dims = spec[:-1].split("[")
        shape = tuple(int(d) for d in dims.split(",") if d)
        return ("array", name, shape)
    if spec.endswith(")") and "(" in spec:
        name, val = spec[:-1].split("(", 1)
        return ("typed", name, eval(val))  # noqa: S307 - our own literals
    return ("py", eval(spec))  # noqa: S307


def filled(shape, dt):
    """np.ones, except for int1, which has no 1 (its values are -1 and 0): zeros there, so
    that no cell fails on a value (numpy raises for an integer to the power -1)."""
    import numpy as np

    return (np.zeros if dt.name == "int1" else np.ones)(shape, dtype=dt)


def arr(name, shape):
    return f"{name}[{','.join(map(str, shape))}]"


def shape_pairs(dtypes):
    for left, right in (("3", "3"), ("3", ""), ("", "3"), ("", "")):
        rows = [f"{d}[{left}]" for d in dtypes]
        cols = [f"{d}[{right}]" for d in dtypes]
        yield rows, cols


def triples(dtypes):
    """Three-operand cases: every triple of TRIPLE_DTYPES, with rotating shape patterns."""
    patterns = (("3", "3", "3"), ("3", "", ""), ("", "3", ""), ("", "", "3"), ("", "", ""),
                ("3", "3", ""))
    subset = [d for d in TRIPLE_DTYPES if d in dtypes]
    for i, (a, b, c) in enumerate(itertools.product(subset, repeat=3)):
        pa, pb, pc = patterns[i % len(patterns)]
        yield (f"{a}[{pa}]", f"{b}[{pb}]", f"{c}[{pc}]")


def unary_cases(dtypes):
    """One operand: every dtype with dimensions and 0-d, then each Python scalar alone."""
    for d in dtypes:
        yield (f"{d}[3]",)
        yield (f"{d}[]",)
    for s in PY_SCALARS:
        yield (s,)


def ternary_cases(op, dtypes):
    """Three operands: every triple of TRIPLE_DTYPES (rotating shapes), then Python scalars in
    the positions the library's function takes them."""
    yield from triples(dtypes)
    subset = [d for d in TRIPLE_DTYPES if d in dtypes]
    if op == "clamp":
        for d in subset:
            for lo, hi in itertools.product(PY_SCALARS, repeat=2):
                yield (f"{d}[3]", lo, hi)
        for a, b in itertools.product(subset, repeat=2):  # one bound: clamp(x, min)
            yield (f"{a}[3]", f"{b}[3]")
    if op == "fma":
        for a, b in itertools.product(subset, repeat=2):
            for s in PY_SCALARS:
                yield (f"{a}[3]", s, f"{b}[]")
                yield (f"{a}[]", f"{b}[3]", s)
        for d in subset:
            for s, t in itertools.product(PY_SCALARS, repeat=2):
                yield (s, t, f"{d}[3]")


def record_more_ops(rec, names, run, fallback=None, ternary=TERNARY, inplace=UNARY):
    """The comparisons ne/le/gt/ge (arrays with dimensions), the unary ops, the ternary ops and
    in-place unary ops, through ``run(op, specs)`` (and ``fallback(op, specs)`` where a kernel
    is missing). In-place cells are named ``sqrt_`` etc., self first."""

    def fb(op, specs):
        return None if fallback is None else (lambda: fallback(op, specs))

    dims = [f"{d}[3]" for d in names]
    for op in MORE_COMPARISONS:
        rec.table(op, dims, dims, lambda a, b, op=op: run(op, (a, b)),
                  None if fallback is None else (lambda a, b, op=op: fallback(op, (a, b))))
    for op in UNARY:
        for specs in unary_cases(names):
            rec.case(op, specs, lambda op=op, specs=specs: run(op, specs), fb(op, specs))
    for op in ternary:
        for specs in ternary_cases(op, names):
            rec.case(op, specs, lambda op=op, specs=specs: run(op, specs), fb(op, specs))
    for op in inplace:
        for spec in dims:
            rec.case(op + "_", (spec,), lambda op=op, spec=spec: run(op + "_", (spec,)),
                     fb(op + "_", (spec,)))


def record_functions2(rec, names, binary, inplace=None, fallback=None, inplace_fallback=None,
                      others=(), inplace_note=None):
    """The functions of two arguments (FUNCTIONS2), last: every ordered pair as OPS are, Python
    scalars in both orders, numpy scalars, and the in-place form (``binary(op)``,
    ``inplace(op)``: the library's calls; ``fallback(op)``: its promotion where a kernel is
    missing)."""
    for op in FUNCTIONS2:
        fb = fallback(op) if fallback else None
        for rows, cols in shape_pairs(names):
            rec.table(op, rows, cols, binary(op), fb)
        for lead in ("3", ""):
            rows = [f"{d}[{lead}]" for d in names]
            rec.table(op, rows, PY_SCALARS, binary(op), fb)
            rec.table(op, PY_SCALARS, rows, binary(op), fb)
            rec.table(op, rows, NP_SCALARS, binary(op), fb, note="numpy scalars")
        if inplace is not None:
            rec.table(op + "_", [f"{d}[3]" for d in names], others, inplace(op),
                      inplace_fallback(op) if inplace_fallback else None, note=inplace_note)


# --------------------------------------------------------------------------- torch
def record_torch():
    import numpy as np
    import torch

    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
             "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128",
             "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
    tdt = {n: getattr(torch, n) for n in names}
    rec = Recorder("torch")

    def make(spec, device="cpu"):
        p = parse_spec(spec)
        if p[0] == "array":
            t = torch.ones(p[2], dtype=tdt[p[1]], device=device)
            return t
        if p[0] == "typed":
            return getattr(np, p[1])(p[2]) if p[1] != "bfloat16" else _ml(p[1])(p[2])
        return p[1]

    def _ml(name):
        import ml_dtypes
        return getattr(ml_dtypes, name)

    fns = {
        "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
        "floor_divide": torch.floor_divide, "remainder": torch.remainder, "pow": torch.pow,
        "eq": torch.eq, "lt": torch.lt, "bitwise_and": torch.bitwise_and,
        "logical_and": torch.logical_and, "maximum": torch.maximum, "minimum": torch.minimum,
        "fmax": torch.fmax, "fmin": torch.fmin, "fmod": torch.fmod, "ne": torch.ne,
        "le": torch.le, "gt": torch.gt, "ge": torch.ge, "sqrt": torch.sqrt,
        "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "abs": torch.abs,
        "negative": torch.negative, "addcmul": torch.addcmul, "addcdiv": torch.addcdiv,
        "clamp": torch.clamp, "fma": lambda x, y, z: x * y + z, "atan2": torch.atan2,
    }

    def dname(t):
        return str(t.dtype).replace("torch.", "")

    def binary(op, device="cpu"):
        def run(a, b):
            x, y = make(a, device), make(b, device)
            if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
                raise TypeError("no tensor operand")  # not recorded
            return dname(fns[op](x, y))
        return run

    def inplace(op, device="cpu"):
        def run(a, b):
            x, y = make(a, device), make(b, device)
            return dname(getattr(x, op + "_")(y))
        return run

    warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")
    for op in OPS:
        for rows, cols in shape_pairs(names):
            rec.table(op, rows, cols, binary(op), binary(op, "meta"))
        for lead in ("3", ""):
            rows = [f"{d}[{lead}]" for d in names]
            rec.table(op, rows, PY_SCALARS, binary(op), binary(op, "meta"))
            rec.table(op, PY_SCALARS, rows, binary(op), binary(op, "meta"))
    for lead in ("3", ""):
        rows = [f"{d}[{lead}]" for d in names]
        rec.table("add", rows, PY_EXTRA, binary("add"), binary("add", "meta"))
        rec.table("add", rows, NP_SCALARS, binary("add"), binary("add", "meta"),
                  note="numpy scalars passed to torch")
    rows = [f"{d}[3]" for d in names]
    others = [f"{d}[3]" for d in names] + [f"{d}[]" for d in names] + list(PY_SCALARS)
    for op in INPLACE_OPS:
        rec.table(op + "_", rows, others, inplace(op), inplace(op, "meta"))
    # library functions on dtypes
    rec.table("promote_types", names, names,
              lambda a, b: str(torch.promote_types(tdt[a], tdt[b])).replace("torch.", ""))
    rec.table("can_cast", names, names,
              lambda a, b: str(torch.can_cast(tdt[a], tdt[b])).lower())
    # torch.result_type: two operands, tensors or Python scalars
    for rows, cols in shape_pairs(names):
        rec.table("result_type", rows, cols,
                  lambda a, b: dname_of(torch.result_type(make(a), make(b))))
    # unary, ternary (addcmul promotes all three inputs; value=1 does not take part) and
    # in-place unary ops
    def call(op, specs, device="cpu"):
        args = [make(s, device) for s in specs]
        if op.endswith("_"):
            return dname(getattr(args[0], op)(*args[1:]))
        return dname(fns[op](*args))

    record_more_ops(rec, names, call, lambda op, specs: call(op, specs, "meta"))
    # the default float dtype as a setting
    torch.set_default_dtype(torch.float64)
    try:
        for op in ("add", "div"):
            rows = [f"{d}[3]" for d in names]
            rec.table(op, rows, PY_SCALARS, binary(op), binary(op, "meta"),
                      note="torch.set_default_dtype(torch.float64)")
            rec.table(op, rows, [f"{d}[3]" for d in ("bool", "int8", "int64")], binary(op),
                      binary(op, "meta"), note="torch.set_default_dtype(torch.float64)")
    finally:
        torch.set_default_dtype(torch.float32)
    record_functions2(rec, names, binary, inplace, lambda op: binary(op, "meta"),
                      lambda op: inplace(op, "meta"), others)
    versions = {"torch": torch.__version__, "numpy": np.__version__,
                "python": platform.python_version()}
    notes = ["Arrays are torch.ones on the CPU; where the CPU call fails, '>' gives the dtype "
             "the same call produces on the meta device (promotion without a kernel).",
             "numpy scalars are passed as they are; torch converts them itself."]
    rec.dump("torch", versions, names, notes)


def dname_of(dt):
    return str(dt).replace("torch.", "")


# --------------------------------------------------------------------------- numpy
def numpy_fixture_name(ml_dtypes_version: str) -> str:
    """numpy's fixture is per ml_dtypes minor (its types' promotion changes between minors):
    ``numpy_ml_dtypes_0.7`` for ml_dtypes 0.7.x. Install each ml_dtypes minor the numpy policy
    models (``exactref._versions``) in turn and run ``record_promotion_fixtures.py numpy``."""
    major, minor = ml_dtypes_version.split(".")[:2]
    return f"numpy_ml_dtypes_{major}.{minor}"


#: numpy's own dtypes (the others are ml_dtypes')
NUMPY_BUILTINS = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "complex64", "complex128")


def record_numpy():
    import ml_dtypes
    import numpy as np

    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128",
             "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
             "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
             "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int1", "int2", "int4", "uint1",
             "uint2", "uint4", "complex32", "bcomplex32"]
    # ml_dtypes 0.5 has no int1, uint1, complex32 or bcomplex32: record the types it has
    names = [n for n in names if n in NUMPY_BUILTINS or hasattr(ml_dtypes, n)]

    def npdt(n):
        return np.dtype(getattr(ml_dtypes, n) if hasattr(ml_dtypes, n) else n)

    name = numpy_fixture_name(ml_dtypes.__version__)
    rec = Recorder("numpy", name)

    def make(spec):
        p = parse_spec(spec)
        if p[0] == "array":
            return filled(p[2], npdt(p[1]))
        if p[0] == "typed":
            return npdt(p[1]).type(p[2])
        return p[1]

    fns = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
        "floor_divide": np.floor_divide, "remainder": np.remainder, "pow": np.power,
        "eq": np.equal, "lt": np.less, "bitwise_and": np.bitwise_and,
        "logical_and": np.logical_and, "maximum": np.maximum, "minimum": np.minimum,
        "fmax": np.fmax, "fmin": np.fmin, "fmod": np.fmod, "ne": np.not_equal,
        "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "sqrt": np.sqrt,
        "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": np.reciprocal, "abs": np.abs,
        "negative": np.negative, "clamp": lambda x, lo, hi=None: np.clip(x, lo, hi),
        "fma": lambda x, y, z: x * y + z, "atan2": np.arctan2,
    }

    def binary(op):
        def run(a, b):
            return str(np.asarray(fns[op](make(a), make(b))).dtype)
        return run

    def call(op, specs):
        args = [make(s) for s in specs]
        if op.endswith("_"):  # np.<ufunc>(x, out=x)
            return str(fns[op[:-1]](args[0], out=args[0]).dtype)
        return str(np.asarray(fns[op](*args)).dtype)

    def promo(a, b):
        return str(np.result_type(make(a), make(b)))

    def inplace(op):
        def run(a, b):
            x = make(a)
            return str(fns[op](x, make(b), out=x).dtype)
        return run

    for op in OPS:
        for rows, cols in shape_pairs(names):
            rec.table(op, rows, cols, binary(op), promo)
        for lead in ("3", ""):
            rows = [f"{d}[{lead}]" for d in names]
            rec.table(op, rows, PY_SCALARS, binary(op), promo)
            rec.table(op, PY_SCALARS, rows, binary(op), promo)
    for lead in ("3", ""):
        rows = [f"{d}[{lead}]" for d in names]
        rec.table("add", rows, PY_EXTRA, binary("add"), promo)
        rec.table("add", rows, NP_SCALARS, binary("add"), promo)
    rows = [f"{d}[3]" for d in names]
    others = [f"{d}[3]" for d in names] + list(PY_SCALARS)
    for op in INPLACE_OPS:
        rec.table(op + "_", rows, others, inplace(op), note="np.<ufunc>(x, y, out=x)")
    rec.table("promote_types", names, names,
              lambda a, b: str(np.promote_types(npdt(a), npdt(b))))
    for casting in ("safe", "same_kind"):
        rec.table(f"can_cast[{casting}]", names, names,
                  lambda a, b, c=casting: str(bool(np.can_cast(npdt(a), npdt(b), c))).lower())
    for rows, cols in shape_pairs(names):
        rec.table("result_type", rows, cols, promo)
    for lead in ("3", ""):
        rows = [f"{d}[{lead}]" for d in names]
        rec.table("result_type", rows, PY_SCALARS + PY_EXTRA, promo)
    for trip in triples(names):
        rec.case("result_type", trip, lambda t=trip: str(np.result_type(*map(make, t))))
    for a, b in itertools.product(TRIPLE_DTYPES, repeat=2):
        for s in PY_SCALARS:
            trip = (f"{a}[3]", f"{b}[]", s)
            rec.case("result_type", trip, lambda t=trip: str(np.result_type(*map(make, t))))
    record_more_ops(rec, names, call, lambda op, specs: str(np.result_type(*map(make, specs))),
                    ternary=("clamp", "fma"),
                    inplace=("sqrt", "reciprocal", "abs", "negative"))
    record_functions2(rec, names, binary, inplace, lambda op: promo, None, others,
                      inplace_note="np.<ufunc>(x, y, out=x)")
    versions = {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                "python": platform.python_version()}
    notes = ["Arrays are np.ones; where the ufunc fails, '>' gives np.result_type's answer.",
             "result_type tables are np.result_type, which ignores ufunc loops."]
    rec.dump(name, versions, names, notes)


def numpy_tables(fixture: str) -> str:
    """The numpy policy's data for one ml_dtypes minor, as Python source (the layout of
    ``exactref/promotion/_numpy_ml_dtypes_07.py``), from the recorded ``fixture``: STRONG from
    the ``add`` cells of two arrays, WEAK from an array with each Python scalar, the cast
    tables from ``can_cast``, INT_BOUNDS from the bounds numpy names for a Python int, and
    UFUNC_EXCEPTIONS: every two-operand ufunc cell the tables (and the policy's per-op rules)
    do not explain. The tests then check the policy with these rules against every cell."""
    import collections
    import re

    sys.path.insert(0, os.path.join(HERE, os.pardir, "src"))
    from exactref.promotion import _fixtures as F
    from exactref.promotion import _numpy as N
    from exactref.promotion._operands import operand

    data = F.load(fixture)
    names = data["dtypes"]
    code = N.CODE
    py = {"True": "bool", "2": "int", "0.5": "float", "1j": "complex"}

    def cells(op, rowsuf, colpred):
        out = {}
        for t in data["tables"]:
            if t["op"] == op and t["rows"][0].endswith(rowsuf) and colpred(t["cols"][0]) \
                    and not t.get("note"):
                for r, row in zip(t["rows"], t["cells"], strict=True):
                    for c, x in zip(t["cols"], row.split(), strict=True):
                        out[r.split("[")[0], c.split("[")[0]] = x.split("!W")[0]
        return out

    def grid(cols, rows, get, w=9):
        lines = [" " * w + "".join(f"{c:<{w}}" for c in cols).rstrip()]
        lines += [(f"{code[r]:<{w}}" + "".join(f"{get(r, c):<{w}}" for c in cols)).rstrip()
                  for r in rows]
        return "\n".join(lines)

    strong = cells("add", "[3]", lambda c: c.endswith("[3]"))
    weak = {(r, py[c]): v for (r, c), v in cells("add", "[3]", lambda c: c == "True").items()}
    out = {"STRONG": grid([code[n] for n in names], names, lambda r, c: code[strong[r, next(
        n for n in names if code[n] == c)]]),
        "WEAK": grid(["bool", "int", "float", "complex"], names,
                     lambda r, c: code[weak[r, c]])}
    for casting, key in (("safe", "CAN_CAST_SAFE"), ("same_kind", "CAN_CAST_SAME_KIND")):
        cc = cells(f"can_cast[{casting}]", "", lambda c: True)
        out[key] = "\n".join(f"{code[r]:<9}" + "".join("1" if cc[r, c] == "true" else "."
                                                      for c in names) for r in names)
    bounds = {}
    for c in F.cells(fixture):
        if c.op == "add" and c.error and c.operands[0].split("[")[0] in N.NEW_IN_06 + (
                "int2", "int4", "uint2", "uint4"):
            m = re.search(r"out of bounds for (\w+)", c.error[1])
            if m and m.group(1) != c.operands[0].split("[")[0]:
                bounds[c.operands[0].split("[")[0]] = m.group(1)
    # the policy with these tables and no exceptions: the cells it gets wrong are exceptions
    rules = N.Rules.parse("new", fixture, names, *(out[k] for k in (
        "STRONG", "WEAK", "CAN_CAST_SAFE", "CAN_CAST_SAME_KIND")), "", N.UNARY, True, bounds,
        ml_floats_take_int64_only=not any(
            c.op == "add" and c.error is None and c.operands[1] == "2**63"
            and operand(c.operands[0]).format.name not in N._BUILTIN
            and operand(c.operands[0]).format.kind == "float" for c in F.cells(fixture)))
    pol = N.NumpyPolicy.__new__(N.NumpyPolicy)
    pol.rules, pol.formats, pol.checked = rules, tuple(
        N.FORMATS[n] for n in names), fixture
    F._policy_for = lambda cell: pol  # noqa: SLF001 - the new rules, for this run only
    found = collections.defaultdict(set)
    for c in F.cells(fixture):
        if c.op not in N.UFUNC or len(c.operands) != 2 or c.note or any(
                operand(x).tier == "typed" for x in c.operands):
            continue
        if F.compare(c)[0] != "disagree":
            continue
        keys = [f"py:{o.pykind}" if o.tier == "python" else o.format.name
                for o in map(operand, c.operands)]
        if c.error is None:
            found[(N.UFUNC[c.op], *keys)].add(c.dtype)
        else:
            codes = [k for k, (_, msg) in N.MESSAGES.items()
                     if msg.format(ufunc=N.UFUNC[c.op]) == c.error[1]]
            found[(N.UFUNC[c.op], *keys)].add("!" + codes[0] if codes else f"?{c.error}")
    grouped = collections.defaultdict(list)
    for (ufunc, a, b), results in found.items():
        result = "/".join(sorted(results))  # more than one: a cell to look at by hand
        grouped[a, b, result].append(ufunc)
    order = list(N.UFUNC.values())
    lines = sorted(((",".join(sorted(set(u), key=order.index)), a, b, r)
                    for (a, b, r), u in grouped.items()),
                   key=lambda t: (order.index(t[0].split(",")[0]), t[1], t[2]))
    w = max((len(t[0]) for t in lines), default=0) + 1
    out["UFUNC_EXCEPTIONS"] = "\n".join(f"{t[0]:<{w}}{t[1]:<19}{t[2]:<19}{t[3]}".rstrip()
                                         for t in lines)
    text = f'"""numpy\'s promotion tables from {fixture}.json (scripts/record_promotion_' \
           f'fixtures.py --tables).\n\nbitwise_or and bitwise_xor are not recorded: check ' \
           f'that they share bitwise_and\'s cells.\n"""\n\nINT_BOUNDS = {bounds!r}\n'
    for key in ("STRONG", "WEAK", "CAN_CAST_SAFE", "CAN_CAST_SAME_KIND", "UFUNC_EXCEPTIONS"):
        text += f'\n{key} = """\n{out[key]}\n"""\n'
    return text


# --------------------------------------------------------------------------- jax
def record_jax(x64: bool):
    import jax

    jax.config.update("jax_enable_x64", x64)
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np

    names = ["bool", "int1", "int2", "int4", "int8", "int16", "int32", "int64", "uint1", "uint2",
             "uint4", "uint8", "uint16", "uint32", "uint64", "bfloat16", "float16", "float32", "float64",
             "complex64", "complex128", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
             "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3",
             "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]

    def npdt(n):
        return np.dtype(getattr(ml_dtypes, n) if hasattr(ml_dtypes, n) else n)

    rec = Recorder("jax", "jax_x64" if x64 else "jax")

    def make(spec):
        """numpy inputs: jax converts them to its canonical dtypes itself (x64 off: 32 bits)."""
        p = parse_spec(spec)
        if p[0] == "array":
            return filled(p[2], npdt(p[1]))
        if p[0] == "typed":
            return npdt(p[1]).type(p[2])
        return p[1]

    fns = {
        "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.true_divide,
        "floor_divide": jnp.floor_divide, "remainder": jnp.remainder, "pow": jnp.power,
        "eq": jnp.equal, "lt": jnp.less, "bitwise_and": jnp.bitwise_and,
        "logical_and": jnp.logical_and, "maximum": jnp.maximum, "minimum": jnp.minimum,
        "fmax": jnp.fmax, "fmin": jnp.fmin, "fmod": jnp.fmod, "ne": jnp.not_equal,
        "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal, "sqrt": jnp.sqrt,
        "rsqrt": lambda x: 1 / jnp.sqrt(x), "reciprocal": jnp.reciprocal, "abs": jnp.abs,
        "negative": jnp.negative, "clamp": lambda x, lo, hi=None: jnp.clip(x, lo, hi),
        "fma": lambda x, y, z: x * y + z, "atan2": jnp.arctan2,
    }

    def show(out):
        return str(out.dtype) + ("*" if out.weak_type else "")

    def call(op, specs):
        """Arrays are abstract arguments; Python scalars stay Python constants (weak)."""
        args = [make(s) for s in specs]
        where = [i for i, v in enumerate(args) if isinstance(v, np.ndarray)]

        def fn(*arrays):
            full = list(args)
            for i, a in zip(where, arrays, strict=True):
                full[i] = a
            return fns[op](*full)

        return show(jax.eval_shape(fn, *(args[i] for i in where)))

    def binary(op):
        return lambda a, b: call(op, (a, b))

    def promo(a, b):
        return str(jnp.result_type(make(a), make(b)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Explicitly requested dtype int64 ..."
        for op in OPS:
            for rows, cols in shape_pairs(names):
                rec.table(op, rows, cols, binary(op))
            for lead in ("3", ""):
                rows = [f"{d}[{lead}]" for d in names]
                rec.table(op, rows, PY_SCALARS, binary(op))
                rec.table(op, PY_SCALARS, rows, binary(op))
        for lead in ("3", ""):
            rows = [f"{d}[{lead}]" for d in names]
            rec.table("add", rows, PY_EXTRA, binary("add"))
            rec.table("add", rows, NP_SCALARS, binary("add"))
        rec.table("add", PY_SCALARS + ("2**63",), PY_SCALARS + ("2**63",), binary("add"))
        rec.table("promote_types", names, names,
                  lambda a, b: str(jnp.promote_types(npdt(a), npdt(b))))
        rec.table("can_cast", names, names,
                  lambda a, b: str(bool(jnp.can_cast(npdt(a), npdt(b)))).lower())
        rec.table("result_type", names, names, lambda a, b: str(jnp.result_type(npdt(a),
                                                                               npdt(b))))
        for trip in triples(names):
            rec.case("result_type", trip, lambda t=trip: str(jnp.result_type(*map(make, t))))
        for a, b in itertools.product(TRIPLE_DTYPES, repeat=2):
            for s in PY_SCALARS:
                trip = (f"{a}[3]", f"{b}[]", s)
                rec.case("result_type", trip, lambda t=trip: str(jnp.result_type(*map(make, t))))
        record_more_ops(rec, names, call, ternary=("clamp", "fma"), inplace=())
        # eager runs on a sample, to see the CPU kernels too
        for a in names:
            for b in ("int8", "float32", "bfloat16", a):
                spec = (f"{a}[3]", f"{b}[3]")
                rec.case("add:eager", spec,
                         lambda s=spec: show(jnp.add(*(jnp.asarray(make(v)) for v in s))))
        record_functions2(rec, names, binary)  # jax arrays are immutable: no in-place forms
    import jaxlib

    versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                "python": platform.python_version(), "jax_enable_x64": x64}
    notes = ["Ops are traced with jax.eval_shape on numpy inputs (jax canonicalizes their dtypes "
             "as it does in eager mode); Python scalars are closed over, so they stay weak.",
             "A result dtype ending in * is weakly typed."]
    rec.dump("jax_x64" if x64 else "jax", versions, names, notes)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # Note: no choices= (argparse checks an empty nargs="*" list against them and fails)
    parser.add_argument("libraries", nargs="*", metavar="LIBRARY",
                        help="torch, numpy, jax or jax_x64 (default: all four)")
    parser.add_argument("--ops", help="record only these ops (comma-separated, e.g. atan2) and "
                                      "merge their cells into the existing fixtures")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tables", metavar="FIXTURE",
                        help="print the numpy policy's tables for a numpy fixture (e.g. "
                             "numpy_ml_dtypes_0.7) as a data module: the pair and cast tables "
                             "from its cells, and the cells they leave unexplained as "
                             "UFUNC_EXCEPTIONS; records nothing")
    args = parser.parse_args(argv)
    if args.tables:
        print(numpy_tables(args.tables), end="")
        return 0
    global ONLY
    ONLY = frozenset(args.ops.split(",")) if args.ops else None
    known = ["torch", "numpy", "jax", "jax_x64"]
    args.libraries = args.libraries or known
    for lib in args.libraries:
        if lib not in known:
            parser.error(f"unknown library {lib!r}; choose from {', '.join(known)}")
    if args.in_process:
        (lib,) = args.libraries
        {"torch": record_torch, "numpy": record_numpy, "jax": lambda: record_jax(False),
         "jax_x64": lambda: record_jax(True)}[lib]()
        return 0
    status = 0
    for lib in args.libraries:
        # PYTHONHASHSEED: jax prints the input types of a failed promotion as a set
        env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONHASHSEED="0")
        extra = ["--ops", args.ops] if args.ops else []
        rc = subprocess.call([sys.executable, __file__, "--in-process", lib, *extra], env=env)
        status = status or rc
    return status


if __name__ == "__main__":
    sys.exit(main())
