#!/usr/bin/env python3
"""Record what JAX's CPU kernels (XLA) compute, so that the JAX equivalents are tested without
jax.

``tests/equivalents/test_jax.py`` checks that ``exactref.equivalents.jax`` covers every output
recorded here (and raises where jax raised). Run this script again when jax changes, then rerun
the tests::

    python scripts/record_jax_fixtures.py                  # writes the fixture
    python scripts/record_jax_fixtures.py --out FILE       # somewhere else

The corpus is deterministic (fixed seeds): for every registry op jax has (by its counterpart:
``jnp.add`` ... ``jnp.clip``, ``jax.lax.rsqrt``, ``jax.lax.convert_element_type`` for cast),

* every jax dtype with itself (x64 off; float64, int64, uint64 and complex128 in an x64 run, in
  a fresh subprocess with ``JAX_ENABLE_X64=1``): a few hundred adversarial inputs per case:
  signed zeros, infinities, NaN, the smallest and largest subnormals and normals, values tiny
  after rounding (products just below the smallest normal), ties, cancellations, uniform bit
  patterns and moderate values; integers at their limits and with zero divisors;
* mixed dtypes (bool arrays times floats, integers with floats, bfloat16 with float16 and
  float32, reals with complex), broadcast and 0-d bool operands, Python scalars on either side
  (bool, int, float, subnormal float, complex), numpy float64 arrays with x64 off;
* every conversion between dtypes (``cast``) of the unary inputs.

Fixture layout (gzip'd JSON)::

    {"schema": "exactref.jax_fixtures/1", "versions": {...}, "machine": "...",
     "arrays": {"<key>": ["<dtype>", [shape], "<base64 of the little-endian bytes>"], ...},
     "cases": [{"op": "add", "x64": false, "args": [A, A], "kwargs": {...},
                "out": "<key>"} | {..., "error": "TypeError"}, ...]}

An argument ``A`` is ``{"a": "<key>"}`` (a numpy array, given to jax as it is), ``{"n":
"<key>"}`` (a numpy scalar: the 0-d array's element), ``null`` (an
absent bound of clip), or a Python scalar: a bool, an int, ``{"f": "<float.hex>"}`` or
``{"c": ["<hex>", "<hex>"]}``. Outputs are numpy arrays of the dtype jax returned.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, os.pardir, "tests", "equivalents", "data", "jax_ops.json.gz")
SCHEMA = "exactref.jax_fixtures/1"

#: The registry ops jax has, and the jax function each one is recorded from.
BINARY = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
          "maximum", "minimum", "fmax", "fmin", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal")
UNARY = ("reciprocal", "sqrt", "rsqrt", "abs", "negative")
CALLS = {**{op: f"jnp.{op}" for op in BINARY + UNARY}, "rsqrt": "jax.lax.rsqrt",
         "clamp": "jnp.clip", "cast": "jax.lax.convert_element_type"}
ARITHMETIC = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod")

DTYPES_32 = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
             "bfloat16", "float32", "complex64", "float8_e4m3fn", "float8_e5m2")
DTYPES_64 = ("float64", "int64", "uint64", "complex128")

#: Mixed pairs (x64 off, then on), each recorded for every binary op.
MIXED_32 = (("bool", "float32"), ("bool", "float16"), ("bool", "bfloat16"),
            ("bool", "complex64"), ("bool", "int8"), ("float8_e4m3fn", "bool"),
            ("int8", "float32"), ("int32", "float32"), ("uint32", "bfloat16"),
            ("int32", "bfloat16"), ("int16", "float16"), ("bfloat16", "float16"),
            ("bfloat16", "float32"), ("float16", "float32"), ("float32", "complex64"),
            ("bfloat16", "complex64"), ("int8", "uint8"), ("int32", "uint32"),
            ("uint8", "int16"))
MIXED_64 = (("float32", "float64"), ("bfloat16", "float64"), ("int64", "float32"),
            ("int64", "float64"), ("bool", "float64"), ("uint64", "int64"),
            ("float64", "complex64"), ("int32", "int64"))
#: Python scalars, each on the right of an array (and a few on the left).
SCALARS = (True, 3, -2, 300, 16777217, 2.5, -0.0, 0.1, 2.0 ** -140, 1 + 2.0 ** -8 + 2.0 ** -30,
           1.5 - 2j)
SCALAR_DTYPES = ("bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32",
                 "complex64")
N_UNARY, N_BINARY, N_MIXED, N_SCALAR = 256, 512, 160, 64


# ------------------------------------------------------------------------------ values
def np_dtype(name):
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) and name not in (
        "float16", "float32", "float64") else np.dtype(name)


def finfo(name):
    return ml_dtypes.finfo(np_dtype(name)) if name.startswith(("bfloat", "float8")) else \
        np.finfo(np_dtype(name))


def float_specials(name) -> list:
    """The edge values of a real float format (as Python floats)."""
    fi = finfo(name)
    tiny, big, eps = float(fi.smallest_normal), float(fi.max), float(fi.eps)
    sub = float(fi.smallest_subnormal)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.0, 3.0, -3.0, 7.0, 1 + eps, 1 - eps / 2, big,
            -big, tiny, -tiny, sub, -sub, tiny - sub, -(tiny - sub), 2 * sub, tiny / 2,
            tiny * (1 + eps), 1 / big if 1 / big >= sub else sub]
    if name in ("float32", "bfloat16", "complex64"):
        vals += [2.0 ** -130, -2.0 ** -140, 2.0 ** -126 * 1.5]
    if name in ("float64", "complex128"):
        vals += [2.0 ** -1030, -2.0 ** -1070, 2.0 ** -1022 * 1.5]
    if not name.startswith("float8_e4m3fn"):
        vals += [float("inf"), float("-inf")]
    vals += [float("nan")]
    return vals


def _real_name(name):
    return {"complex64": "float32", "complex128": "float64"}.get(name, name)


def random_floats(name, n, rng):
    """Uniform bit patterns and moderate values of a real float format."""
    dt = np_dtype(_real_name(name))
    bits = dt.itemsize * 8
    uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    raw = rng.integers(0, 2 ** min(bits, 63), n, dtype=np.uint64)
    if bits == 64:
        raw = raw * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    with np.errstate(invalid="ignore"):
        pattern = raw.astype(uint).view(dt).astype(np.float64)
    moderate = rng.standard_normal(n) * np.exp2(rng.integers(-12, 13, n))
    return np.where(rng.random(n) < 0.5, pattern, moderate)


def int_specials(name) -> list:
    ii = np.iinfo(np_dtype(name))
    vals = [0, 1, 2, 3, 7, ii.max, ii.max - 1, ii.min, ii.min + 1]
    if ii.min < 0:
        vals += [-1, -2, -3, -7]
    return vals


def unary_values(name, rng, n=N_UNARY) -> np.ndarray:
    """``n`` values of the dtype ``name``: its edges, then random."""
    dt = np_dtype(name)
    if name == "bool":
        return np.array([False, True] * (n // 2), dtype=bool)
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        spec = int_specials(name)
        rand = rng.integers(ii.min, ii.max, max(n - len(spec), 0), endpoint=True,
                            dtype=np.int64 if dt.kind == "i" or dt.itemsize < 8 else np.uint64)
        return np.concatenate([np.array(spec, dtype=dt), rand.astype(dt)])[:n]
    real = _real_name(name)
    spec = np.array(float_specials(real), dtype=np.float64)
    k = max(n - len(spec), 0)
    vals = np.concatenate([spec, random_floats(real, k, rng)])[:n]
    if dt.kind == "c":
        im = np.concatenate([spec[::-1], random_floats(real, k, rng)])[:n]
        im = im[rng.permutation(n)]
        out = np.empty(n, dtype=np.complex128)
        out.real, out.imag = vals, im
        return cast_exact(out, dt)
    return cast_exact(vals, dt)


def cast_exact(values, dt):
    """float64 (complex128) values rounded once into ``dt`` (through exactref, which rounds
    once; numpy rounds float64 into bfloat16 twice), overflowing to the format's own value."""
    import exactref as er

    fmt = er.dtype(dt)
    rule = "saturate" if not fmt.component.has_inf and not fmt.component.has_nan else None
    return er.asarray(values, fmt, overflow=rule).numpy().copy()


def binary_values(name, rng, n=N_BINARY):
    """``(x, y)``: every pair of a few edge values, then adversarial and random pairs."""
    dt = np_dtype(name)
    if name == "bool":
        x = np.array([False, False, True, True] * (n // 4), dtype=bool)
        return x, np.array([False, True, False, True] * (n // 4), dtype=bool)
    if dt.kind in "iu":
        spec = np.array(int_specials(name), dtype=dt)
        gx, gy = np.meshgrid(spec, spec, indexing="ij")
        gx, gy = gx.reshape(-1), gy.reshape(-1)
        k = n - gx.size
        x = unary_values(name, rng, k + 16)[16:]
        y = unary_values(name, rng, k + 16)[16:]
        small = rng.integers(-9 if dt.kind == "i" else 0, 10, k).astype(dt)
        y = np.where(rng.random(k) < 0.4, small, y)
        return np.concatenate([gx, x]), np.concatenate([gy, y])
    real = _real_name(name)
    fi = finfo(real)
    tiny, eps = float(fi.smallest_normal), float(fi.eps)
    base = [0.0, -0.0, 1.0, -1.0, 3.0, -0.5, tiny, -tiny, float(fi.smallest_subnormal),
            -2 * float(fi.smallest_subnormal), float(fi.max), 1 + eps]
    if not real.startswith("float8_e4m3fn"):
        base += [float("inf"), float("-inf")]
    base += [float("nan")]
    if real in ("float32", "bfloat16", "float64"):
        base += [2.0 ** -130 if real != "float64" else 2.0 ** -1030]
    b = np.array(base)
    gx, gy = np.meshgrid(b, b, indexing="ij")
    gx, gy = gx.reshape(-1), gy.reshape(-1)
    k = n - gx.size
    x = random_floats(real, k, rng)
    y = random_floats(real, k, rng)
    p = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}.get(real, 4)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.abs(np.where(np.isfinite(x) & (x != 0), x, 1.0))))
        half = np.exp2(e - p)
        # products and quotients just around the smallest normal: x * y and x / y tiny
        near = tiny * (1 + rng.integers(-8, 9, k) * 2.0 ** -(p + 1)) / np.where(
            np.isfinite(x) & (x != 0), x, 1.0)
        choices = [-x, x, half, 3 * half, x * (1 + 2.0 ** (1 - p)), near, 1 / np.where(
            x != 0, near, 1.0), y]
    pick = rng.integers(0, len(choices), k)
    y = np.choose(pick, choices)
    y = np.where(np.isfinite(y), y, rng.standard_normal(k))
    x, y = np.concatenate([gx, x]), np.concatenate([gy, y])
    if dt.kind == "c":
        xi = unary_values(real, rng, n).astype(np.float64)
        yi = unary_values(real, rng, n).astype(np.float64)
        xc, yc = np.empty(n, np.complex128), np.empty(n, np.complex128)
        xc.real, xc.imag, yc.real, yc.imag = x, xi, y, yi
        return cast_exact(xc, dt), cast_exact(yc, dt)
    return cast_exact(x, dt), cast_exact(y, dt)


def tiny_products(name, rng, n=64):
    """Pairs whose exact product is within a few ulps of the smallest normal (flushed or not
    by FTZ's tininess test)."""
    real = _real_name(name)
    fi = finfo(real)
    tiny = float(fi.smallest_normal)
    p = {"float64": 53, "float32": 24, "bfloat16": 8}[real]
    x = np.exp2(rng.integers(-40, 40, n).astype(np.float64)) * (1 + rng.integers(
        0, 2 ** min(p - 1, 20), n) * 2.0 ** -min(p - 1, 20))
    x = cast_exact(x, np_dtype(real)).astype(np.float64)
    target = tiny * (1 + rng.integers(-6, 7, n) * 2.0 ** -(p + 2))
    y = cast_exact(target / x, np_dtype(real))
    return cast_exact(x, np_dtype(real)), y


# ------------------------------------------------------------------------------- corpus
class Corpus:
    """Cases and their input arrays, keyed by content."""

    def __init__(self):
        self.arrays, self.cases = {}, []

    def key(self, arr) -> str:
        arr = np.array(arr, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
        raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        k = hashlib.sha1(str(arr.dtype).encode() + str(arr.shape).encode() + raw).hexdigest()[:12]
        self.arrays[k] = arr
        return k

    def arg(self, v):
        if v is None:
            return None
        if isinstance(v, np.ndarray):
            return {"a": self.key(v)}
        if isinstance(v, np.generic):  # a numpy scalar: a typed (strong) operand in jax
            return {"n": self.key(np.asarray(v))}
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            return v
        if isinstance(v, complex):
            return {"c": [v.real.hex(), v.imag.hex()]}
        return {"f": float(v).hex()}

    def add(self, op, args, x64, **kwargs):
        self.cases.append({"op": op, "x64": x64, "args": [self.arg(a) for a in args],
                           "kwargs": kwargs, "_values": args})


def build(x64: bool) -> Corpus:
    c = Corpus()
    rng = np.random.default_rng(20260 + x64)
    dtypes = DTYPES_64 if x64 else DTYPES_32
    for name in dtypes:
        x, y = binary_values(name, rng)
        for op in BINARY:
            c.add(op, (x, y), x64)
        if name in ("float32", "bfloat16", "float64"):
            tx, ty = tiny_products(name, rng)
            for op in ("multiply", "divide"):
                c.add(op, (tx, ty), x64)
        u = unary_values(name, rng)
        for op in UNARY:
            c.add(op, (u,), x64)
        lo, hi = binary_values(name, rng, 256)
        c.add("clamp", (u, lo, hi), x64)
        c.add("clamp", (u, lo, None), x64)
        c.add("clamp", (u, None, hi), x64)
        for to in DTYPES_32 + (DTYPES_64 if x64 else ()):
            if to != name:
                c.add("cast", (u,), x64, new_dtype=to)
    for a, b in (MIXED_64 if x64 else MIXED_32):
        x = unary_values(a, rng, N_MIXED)[rng.permutation(N_MIXED)]
        y = unary_values(b, rng, N_MIXED)[rng.permutation(N_MIXED)]
        for op in BINARY:
            c.add(op, (x, y), x64)
            if op in ("multiply", "add", "less"):
                c.add(op, (y, x), x64)
    if x64:
        for name in ("float64", "int64", "complex128"):
            x = unary_values(name, rng, N_SCALAR)[rng.permutation(N_SCALAR)]
            for sc in (3, 2 ** 40 + 1, 0.1, 2.0 ** -1070, -0.0, 1.5 - 2j):
                for op in ("add", "multiply", "divide", "floor_divide", "maximum", "less"):
                    if not (op in ("floor_divide", "maximum", "less") and (
                            isinstance(sc, complex) or name == "complex128")):
                        c.add(op, (x, sc), x64)
        return c
    # bool operands that broadcast, and 0-d operands
    f = unary_values("float32", rng, 32)
    for b in (np.array([False]), np.array(False), np.array([[False], [True]])):
        c.add("multiply", (b, f), x64)
        c.add("multiply", (f, b), x64)
    c.add("multiply", (np.array(False), np.array(np.nan, np.float32)), x64)
    c.add("multiply", (np.array([False, True]), np.array(np.nan, np.float32)), x64)
    c.add("multiply", (np.bool_(False), f), x64)
    # divisors that broadcast (XLA may multiply by their reciprocal), in every form
    for name in ("float32", "bfloat16", "float16", "int8", "bool", "complex64"):
        x = unary_values(name, rng, N_SCALAR)[rng.permutation(N_SCALAR)]
        y = unary_values(name, rng, 48)[-8:]
        for d in (y[6:7], y[6:7].reshape(()), y.reshape(8, 1)):
            for op in ("divide", "floor_divide", "multiply"):
                if name != "complex64" or op != "floor_divide":
                    c.add(op, (x if d.ndim != 2 else x.reshape(1, N_SCALAR), d), x64)
        c.add("divide", (x, np.float32(3) if name != "complex64" else np.complex64(3j)), x64)
    for name in DTYPES_32:  # 0-d operands of the unary ops
        u = unary_values(name, rng, 24)
        for v in u[[0, 1, 5, 9, 13, 20]]:
            for op in UNARY:
                c.add(op, (np.asarray(v),), x64)
    # numpy float64 and int64 arrays with x64 off: numpy casts them to 32 bits first
    d = np.array([1 + 2.0 ** -30, 2.0 ** -140, 1e-300, 1e300, 0.1, -0.0])
    c.add("add", (d, np.float32(0)), x64)
    c.add("multiply", (np.array([2 ** 40 + 3, -5], np.int64), np.array([1, 2], np.int32)), x64)
    # Python scalars on either side
    for name in SCALAR_DTYPES:
        x = unary_values(name, rng, N_SCALAR)[rng.permutation(N_SCALAR)]
        for s in SCALARS:
            for op in ARITHMETIC + ("maximum", "fmax", "less", "equal"):
                c.add(op, (x, s), x64)
            for op in ("subtract", "divide", "floor_divide", "remainder", "fmax", "less"):
                c.add(op, (s, x), x64)
            c.add("clamp", (x, s, None), x64)
            c.add("clamp", (x, None, s), x64)
    return c


# ------------------------------------------------------------------------------ running
def run(x64: bool) -> dict:
    """Build the corpus and run jax on it (in this process, with x64 as given)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", x64)
    c = build(x64)
    outputs = {}
    for case in c.cases:
        op, values = case["op"], case.pop("_values")
        fn = eval(CALLS[op], {"jax": jax, "jnp": jnp})  # noqa: S307 - our own table
        kwargs = dict(case["kwargs"])
        if op == "cast":
            kwargs["new_dtype"] = jnp.dtype(np_dtype(kwargs["new_dtype"]))
        args = list(values)
        while args and args[-1] is None and op == "clamp":
            args.pop()
        try:
            out = np.asarray(fn(*args, **kwargs))
        except Exception as exc:  # jax's own answer
            case["error"] = type(exc).__name__
            continue
        case["out"] = c.key(out)
        outputs[case["out"]] = out
    return {"cases": c.cases, "arrays": c.arrays, "versions": {
        "jax": jax.__version__, "jaxlib": __import__("jaxlib").__version__,
        "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
        "python": platform.python_version()}}


def encode(arr: np.ndarray) -> list:
    arr = np.array(arr, order="C")
    name = arr.dtype.name if arr.dtype.name != "bool" else "bool"
    raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes() if arr.dtype.kind != "V" else \
        arr.tobytes()
    return [name, list(arr.shape), base64.b64encode(raw).decode()]


def _child(x64: bool, path: str):
    res = run(x64)
    res["arrays"] = {k: encode(v) for k, v in res["arrays"].items()}
    with open(path, "w") as fh:
        json.dump(res, fh)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--child", choices=("x32", "x64"), help=argparse.SUPPRESS)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child == "x64", args.tmp)
        return 0
    merged = {"schema": SCHEMA, "arrays": {}, "cases": [],
              "machine": f"{platform.machine()} {platform.processor() or ''}".strip()}
    for mode in ("x32", "x64"):
        tmp = os.path.abspath(args.out) + f".{mode}.tmp"
        env = dict(os.environ, JAX_ENABLE_X64="1" if mode == "x64" else "0",
                   JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, __file__, "--child", mode, "--tmp", tmp], check=True,
                       env=env)
        with open(tmp) as fh:
            part = json.load(fh)
        os.remove(tmp)
        merged["arrays"].update(part["arrays"])
        merged["cases"] += part["cases"]
        merged["versions"] = part["versions"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with gzip.open(args.out, "wt", compresslevel=9) as fh:
        json.dump(merged, fh, separators=(",", ":"))
    n_err = sum("error" in c for c in merged["cases"])
    print(f"{len(merged['cases'])} cases ({n_err} raise), {len(merged['arrays'])} arrays, "
          f"{os.path.getsize(args.out) / 1e6:.2f} MB -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
