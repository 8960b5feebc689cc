"""exactref.equivalents.torch's elementwise family (subtract ... greater_equal, clamp, cast)
against PyTorch 2.13 on the CPU.

For every op of the family and every dtype torch has, on adversarial and random values
(signed zeros, infinities, NaN, subnormals, the largest values, ties, cancellations, random bit
patterns): contiguous tensors of lengths 1, 7, 16, 33 and 100 (PyTorch's vectorized body takes
16 float32, 8 float64 or 32 float16/bfloat16 elements per step and the scalar loop the rest),
strided operands (the scalar loop), broadcast operands (a stride-0 operand included, which
TensorIterator treats as a CPU scalar), 0-d tensors, Python scalars, mixed dtypes and the ops'
parameters: the reference covers PyTorch's output on every element, whichever loop computed
it, its dtype and shape are PyTorch's, and where PyTorch raises (a missing CPU kernel, a
rejected operand, an integer division by zero) the equivalent raises too.

One PyTorch bug is not a failure here: the vectorized ``fmod`` (also inside ``remainder``)
returns NaN where ``|x / y|`` exceeds the float format's range; those elements are counted
and reported by ``test_torch_family_departures.py`` (a skip with the finding), every other
element is checked. ``div(INT_MIN, -1, rounding_mode="trunc")`` kills PyTorch on int32 and
int64, so the equivalent is asked first and PyTorch never sees it. The default run covers
every op and dtype; ``--run-slow`` adds larger pools and every pair of dtypes.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from arith_pools import pairs
from torch_check import Sweep, tensor, values

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning"),
    pytest.mark.filterwarnings("ignore:Casting complex values to real:UserWarning"),
]

#: every dtype torch has (the CPU kernels decide which of them each op takes)
DTYPES = [f.name for f in er.FORMATS.values() if f.torch_name]
LENGTHS = (1, 7, 16, 33, 100)
#: a few pairs of dtypes that promote (the full sweep takes every pair)
MIXED = [("float32", "bfloat16"), ("int64", "float32"), ("float16", "bfloat16"),
         ("uint8", "int8"), ("int32", "float64"), ("bool", "float16"), ("int16", "bfloat16"),
         ("complex64", "float64"), ("float32", "complex32")]
SCALARS = {"float": [2.5, -0.0, 0.1, 1e30, math.nan, math.inf], "int": [3, -2, 300],
           "bool": [True]}


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


# ------------------------------------------------------------------------ the checker
#: Runs PyTorch and the equivalent, compares; collects failures and PyTorch's known bugs.
Check = Sweep


# --------------------------------------------------------------------------- the ops
def _sleef_fmod_nan(x, y):
    """PyTorch's known bug (pinned in test_torch_family_departures.py): where the vectorized
    fmod returns NaN for finite operands whose quotient leaves the float format's range."""
    def bug(got):
        out = er.dtype(got.dtype)
        if out.kind != "float" or out.name == "float16":
            return np.zeros(tuple(got.shape), bool)
        xs, ys = (_as_kernel_reads(v, out, tuple(got.shape)) for v in (x, y))
        emax = 1024 if out.name == "float64" else 128
        with np.errstate(all="ignore"):
            q = np.log2(np.abs(xs)) - np.log2(np.abs(ys))
        g = er.asarray(got)._wide().astype(np.float64)
        return np.isnan(g) & np.isfinite(xs) & np.isfinite(ys) & (ys != 0) & (q > emax)
    return bug


def _as_kernel_reads(v, fmt, shape):
    arr = ert.wrap_scalar(v) if isinstance(v, (bool, int, float)) else er.asarray(v)
    return np.broadcast_to(ert.cast(arr, fmt)._wide().astype(np.float64), shape)


BINARY = {
    "subtract": (torch.sub, ert.subtract, "alpha", {"float": [1, 0.3, -2, 2.0**-30],
                                                    "int": [1, 3, -1], "complex": [1, 0.5j]}),
    "divide": (torch.div, ert.divide, "rounding_mode", [None, "trunc", "floor"]),
    "floor_divide": (torch.floor_divide, ert.floor_divide, None, None),
    "remainder": (torch.remainder, ert.remainder, None, None),
    "fmod": (torch.fmod, ert.fmod, None, None),
    "maximum": (torch.maximum, ert.maximum, None, None),
    "minimum": (torch.minimum, ert.minimum, None, None),
    "fmax": (torch.fmax, ert.fmax, None, None),
    "fmin": (torch.fmin, ert.fmin, None, None),
    "equal": (torch.eq, ert.equal, None, None),
    "not_equal": (torch.ne, ert.not_equal, None, None),
    "less": (torch.lt, ert.less, None, None),
    "less_equal": (torch.le, ert.less_equal, None, None),
    "greater": (torch.gt, ert.greater, None, None),
    "greater_equal": (torch.ge, ert.greater_equal, None, None),
}
UNARY = {
    "reciprocal": (torch.reciprocal, ert.reciprocal),
    "sqrt": (torch.sqrt, ert.sqrt),
    "rsqrt": (torch.rsqrt, ert.rsqrt),
    "abs": (torch.abs, ert.abs),
    "negative": (torch.neg, ert.negative),
}
TERNARY = {
    "addcmul": (torch.addcmul, ert.addcmul),
    "addcdiv": (torch.addcdiv, ert.addcdiv),
}
DIVISIONS = ("divide", "floor_divide", "remainder", "fmod")


def _params(name, fmt):
    """The parameter values an op is checked with, for operands of ``fmt``."""
    _, _, key, table = BINARY[name]
    if key is None:
        return [{}]
    if isinstance(table, dict):
        kind = "complex" if fmt.kind == "complex" else "int" if fmt.is_integer else "float"
        return [{key: v} for v in table[kind]]
    return [{key: v} for v in table]


def _safe_divisors(x, y, fmt):
    """Integer divisors without zeros (PyTorch raises for the whole call, see the departures)
    and without ``-1`` under the most negative dividend (PyTorch dies on int32/int64)."""
    if not fmt.is_integer or fmt.kind == "bool":
        return y
    y = y.copy()
    y[y == 0] = 1
    if fmt.kind == "int":
        y[(x == fmt.int_min) & (y == -1)] = 2
    return y


def _interleaved(t):
    """``t``'s values in a non-contiguous view (every other element of a larger tensor)."""
    big = torch.zeros((t.numel() * 2,), dtype=t.dtype)
    big[::2] = t.reshape(-1)
    return big[::2]


# ---------------------------------------------------------------------------- binary
def _binary_sweep(name, fmt, n, rng):
    tfn, efn, _, _ = BINARY[name]
    check = Check()
    x, y = pairs(fmt, n, rng)
    if name in DIVISIONS:
        y = _safe_divisors(x, y, fmt)
    X, Y = tensor(fmt, x), tensor(fmt, y)
    for params in _params(name, fmt):
        def run(a, b, label, p=params):
            bug = _sleef_fmod_nan(a, b) if name in ("fmod", "remainder") else None
            check(f"{name}{p} {label}", lambda: tfn(a, b, **p), lambda: efn(a, b, **p), bug)
        for n_ in LENGTHS:
            run(X[:n_], Y[:n_], f"contiguous n={n_}")
        run(_interleaved(X), _interleaved(Y), "strided")
        run(X[:6, None], Y[None, :5], "broadcast (6, 1) with (1, 5)")
        run(X[:40], Y[1:2].expand(40), "stride-0 y")
        run(X[3], Y[:9], "0-d x")
        run(X[:9], Y[3], "0-d y")
        run(X[5], Y[5], "both 0-d")
        for scalars in SCALARS.values():
            for s in scalars:
                if name in DIVISIONS and fmt.is_integer and s in (0, -1):
                    continue
                run(X[:40], s, f"scalar y={s!r}")
    return check


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype):
    """Every binary op of the family on every dtype: lengths, strides, broadcasting, 0-d
    tensors, Python scalars and the op's parameters."""
    check = _binary_sweep(name, er.dtype(dtype), 100, _rng(name, dtype))
    check.assert_ok()
    assert check.checked + check.both_raise > 0


@pytest.mark.parametrize("pair", MIXED, ids=lambda p: f"{p[0]}-{p[1]}")
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_mixed(name, pair):
    """Mixed dtypes: promotion first, each operand cast as PyTorch casts it."""
    _mixed(name, pair, 64)


def _mixed(name, pair, n):
    tfn, efn, _, _ = BINARY[name]
    fa, fb = (er.dtype(p) for p in pair)
    rng = _rng(name, pair, n)
    x, y = values(fa, n, rng), values(fb, n, rng)
    m = min(len(x), len(y))
    x, y = x[:m], y[:m]
    if name in DIVISIONS and fb.is_integer:
        y = _safe_divisors(np.zeros_like(y), y, fb)
    X, Y = tensor(fa, x), tensor(fb, y)
    check = Check()
    for params in _params(name, fa if not fa.is_integer else fb):
        for a, b, label in ((X, Y, "x, y"), (Y, X, "y, x"), (X[:9], Y[2], "0-d y"),
                            (_interleaved(X), _interleaved(Y), "strided")):
            if name in DIVISIONS and label == "y, x" and fa.is_integer:
                continue
            bug = _sleef_fmod_nan(a, b) if name in ("fmod", "remainder") else None
            check(f"{name}{params} {pair} {label}", lambda a=a, b=b, p=params: tfn(a, b, **p),
                  lambda a=a, b=b, p=params: efn(a, b, **p), bug)
    check.assert_ok()


# ----------------------------------------------------------------------------- unary
def _unary_sweep(name, fmt, n, rng):
    tfn, efn = UNARY[name]
    check = Check()
    X = tensor(fmt, values(fmt, n, rng))
    for n_ in _lengths(n):
        check(f"{name} n={n_}", lambda k=n_: tfn(X[:k]), lambda k=n_: efn(X[:k]))
    check(f"{name} strided", lambda: tfn(_interleaved(X)), lambda: efn(_interleaved(X)))
    check(f"{name} 2-d", lambda: tfn(X[:30].reshape(5, 6)), lambda: efn(X[:30].reshape(5, 6)))
    check(f"{name} 0-d", lambda: tfn(X[4]), lambda: efn(X[4]))
    return check


def _lengths(n):
    return sorted({min(k, n) for k in LENGTHS})


def _quick_size(fmt):
    """Values per quick check: 100 (the vector bodies and tails of every dtype), 40 for complex
    dtypes, whose references (chains of complex products and Smith's division, glibc's csqrt
    band) take longest; ``--run-slow`` takes 600 everywhere."""
    return 40 if fmt.kind == "complex" else 100


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype):
    """reciprocal, sqrt, rsqrt, abs and negative on every dtype: lengths, strides, 0-d."""
    fmt = er.dtype(dtype)
    check = _unary_sweep(name, fmt, _quick_size(fmt), _rng(name, dtype))
    check.assert_ok()


# --------------------------------------------------------------------------- ternary
def _ternary_sweep(name, fmt, n, rng):
    tfn, efn = TERNARY[name]
    check = Check()
    quick = n <= 100
    x, y = pairs(fmt, n, rng)
    z = values(fmt, len(x), rng)[:len(x)]
    if len(z) < len(x):
        x, y = x[:len(z)], y[:len(z)]
    S, A, B = tensor(fmt, x), tensor(fmt, y), tensor(fmt, z)
    vals = [1, 2.5, -3] if fmt.is_integer else [1, 0.3, -2] + (
        [0.5 - 1j] if fmt.kind == "complex" else [])
    if quick and fmt.kind == "complex":  # complex chains are slow: two values by default
        vals = [1, 0.5 - 1j]
    for value in vals:
        def run(s, a, b, label, v=value):
            check(f"{name}(value={v!r}) {label}", lambda: tfn(s, a, b, value=v),
                  lambda: efn(s, a, b, value=v))
        for n_ in _lengths(len(S)):
            run(S[:n_], A[:n_], B[:n_], f"n={n_}")
        run(_interleaved(S), _interleaved(A), _interleaved(B), "strided")
        run(S[:6, None], A[None, :5], B[:5], "broadcast")
        run(S[:20], A[3], B[:20], "0-d tensor1")
        run(S[7], A[7], B[7], "all 0-d")
    check(f"{name} Python scalar", lambda: tfn(S[:4], 2.0, B[:4]), lambda: efn(S[:4], 2.0, B[:4]))
    return check


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary(name, dtype):
    """addcmul and addcdiv on every dtype, with several values (a float value truncated for
    integers, a complex one for complex tensors)."""
    fmt = er.dtype(dtype)
    check = _ternary_sweep(name, fmt, _quick_size(fmt), _rng(name, dtype))
    check.assert_ok()


# ----------------------------------------------------------------------------- clamp
@pytest.mark.parametrize("dtype", DTYPES)
def test_clamp(dtype):
    """clamp with scalar bounds (one, both, min > max, a NaN bound, bounds between values)
    and with tensor bounds (one or both, broadcast, strided, ties of +0 and -0)."""
    fmt = er.dtype(dtype)
    rng = _rng("clamp", dtype)
    x, y = pairs(fmt, 100, rng)
    z = values(fmt, len(x), rng)[:len(x)]
    X, LO, HI = tensor(fmt, x), tensor(fmt, y[:len(z)]), tensor(fmt, z)
    check = Check()
    if fmt.is_integer:
        bounds = [(-1, 2), (0, None), (None, 3), (5, 1), (-300, 300)]
    else:
        bounds = [(-1.0, 2.0), (0.0, None), (None, -0.0), (2.0, 1.0), (math.nan, 1.0),
                  (-0.0, 0.0), (0.1, 0.3), (-math.inf, math.inf)]
    for lo, hi in bounds:
        for n_ in LENGTHS:
            check(f"clamp(min={lo}, max={hi}) n={n_}", lambda a=lo, b=hi, k=n_:
                  torch.clamp(X[:k], a, b), lambda a=lo, b=hi, k=n_: ert.clamp(X[:k], a, b))
        check(f"clamp(min={lo}, max={hi}) strided",
              lambda a=lo, b=hi: torch.clamp(_interleaved(X), a, b),
              lambda a=lo, b=hi: ert.clamp(_interleaved(X), a, b))
    m = min(len(X), len(LO), len(HI))
    for label, lo, hi in (("both", LO[:m], HI[:m]), ("min", LO[:m], None),
                          ("max", None, HI[:m]), ("swapped", HI[:m], LO[:m])):
        def run(a, lo_, hi_, what, lab=label):
            check(f"clamp tensor bounds {lab} {what}", lambda: torch.clamp(a, lo_, hi_),
                  lambda: ert.clamp(a, lo_, hi_))
        for n_ in LENGTHS:
            k = min(n_, m)
            run(X[:k], None if lo is None else lo[:k], None if hi is None else hi[:k],
                f"n={k}")
        run(_interleaved(X[:m]), None if lo is None else _interleaved(lo),
            None if hi is None else _interleaved(hi), "strided")
        run(X[:m], None if lo is None else lo[2], None if hi is None else hi[:m], "0-d min")
    check.assert_ok()


def test_clamp_zero_ties_both_loops():
    """Ties of +0 and -0 in contiguous (vector loop) and strided (scalar loop) tensors."""
    check = Check()
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x = torch.tensor([0.0, -0.0, -1.0, 1.0] * 25, dtype=dt)
        lo = torch.tensor([-0.0, 0.0, 0.0, -0.0] * 25, dtype=dt)
        hi = torch.tensor([-0.0, 0.0, -0.0, 0.0] * 25, dtype=dt)
        for a, b, c in ((x, lo, hi), (_interleaved(x), _interleaved(lo), _interleaved(hi))):
            check(f"{dt}", lambda a=a, b=b, c=c: torch.clamp(a, b, c),
                  lambda a=a, b=b, c=c: ert.clamp(a, b, c))
            check(f"{dt} min", lambda a=a, b=b: torch.clamp(a, min=b),
                  lambda a=a, b=b: ert.clamp(a, min=b))
            check(f"{dt} scalar", lambda a=a: torch.clamp(a, min=0.0, max=-0.0),
                  lambda a=a: ert.clamp(a, 0.0, -0.0))
    check.assert_ok()


# ------------------------------------------------------------------------------ cast
@pytest.mark.parametrize("src", DTYPES)
def test_cast(src):
    """``x.to(dtype)`` from every dtype into every dtype: NaN, infinities and out-of-range
    values into integers included, contiguous (the vectorized conversion) and strided."""
    fmt = er.dtype(src)
    rng = _rng("cast", src)
    vals = values(fmt, 100, rng)
    if fmt.kind in ("float", "complex"):
        big = np.array([3e9, -3e9, 2.0**31 + 2.0**8, -(2.0**40) - 5, 2.0**63, 1e19, -1e19,
                        300.0, -1.5, 65535.5])
        big = er.asarray(big, fmt.component, overflow="saturate")._wide().astype(np.float64)
        vals = np.concatenate([vals, big.astype(vals.dtype)])
    X = tensor(fmt, vals)
    check = Check()
    for target in DTYPES:
        tdt = getattr(torch, er.dtype(target).torch_name)
        for label, a in (("contiguous", X), ("n=1", X[:1]), ("n=7", X[-7:]),
                         ("strided", _interleaved(X))):
            check(f"{src} -> {target} {label}", lambda a=a, d=tdt: a.to(d),
                  lambda a=a, g=target: ert.cast(a, to=g))
    check.assert_ok()


def test_cast_helper_keeps_its_signature():
    """``cast(values, dtype)`` stays the conversion helper (an er.Array); ``to=`` is the op."""
    arr = ert.cast([1 + 2**-11 + 2**-40], "float16")
    assert isinstance(arr, er.Array) and arr.tolist() == [1.0]
    res = ert.cast(torch.tensor([1 + 2**-11 + 2**-40], dtype=torch.float64), to="float16")
    assert res.covers(torch.tensor([1.0], dtype=torch.float16)).all()
    with pytest.raises(TypeError):
        ert.cast([1.0], "float16", to="float16")


# ------------------------------------------------------------------------ full sweep
@pytest.mark.slow
@pytest.mark.parametrize("name", list(BINARY) + list(UNARY) + list(TERNARY))
def test_full_sweep(name):
    """Larger pools on every dtype, and every pair of dtypes for the binary ops."""
    for dtype in DTYPES:
        fmt = er.dtype(dtype)
        rng = _rng("full", name, dtype)
        if name in BINARY:
            check = _binary_sweep(name, fmt, 600, rng)
        elif name in UNARY:
            check = _unary_sweep(name, fmt, 600, rng)
        else:
            check = _ternary_sweep(name, fmt, 600, rng)
        check.assert_ok()
    if name in BINARY:
        for i, a in enumerate(DTYPES):
            for b in DTYPES[i + 1:]:
                _mixed(name, (a, b), 48)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["maximum", "minimum", "clamp"])
def test_thread_chunks(name):
    """Long tensors split into per-thread chunks, each with its own scalar tail: the ``+0``/
    ``-0`` ties of every chunk's tail are covered too."""
    check = Check()
    for n in (32769, 65541):
        x = torch.tensor([0.0, -0.0], dtype=torch.float32).repeat(n // 2 + 1)[:n]
        y = torch.tensor([-0.0, 0.0], dtype=torch.float32).repeat(n // 2 + 1)[:n]
        if name == "clamp":
            tfn, efn = (lambda a, b: torch.clamp(a, b, b)), (lambda a, b: ert.clamp(a, b, b))
        else:
            tfn, efn, _, _ = BINARY[name]
        check(f"{name} n={n}", lambda a=x, b=y, f=tfn: f(a, b), lambda a=x, b=y, f=efn: f(a, b))
    check.assert_ok()


# ---------------------------------------------------- the family builder (selections, comparisons)
def test_selections_and_comparisons_are_built_from_the_records():
    """Each record whose torch counterpart names a model has its equivalent, built by the
    family builder (exactref.equivalents._family) from the record: named and re-exported as
    the op, with the record's operands, its docstring naming torch's call, its model one of
    _torch_select's MODELS."""
    import inspect

    from exactref.equivalents import _family, _torch_select

    ops = _family.records("torch")
    assert {op.name for op in ops} == set(_torch_select.__all__)
    assert {op.name for op in ops} >= {"abs", "negative", "maximum", "fmin", "clamp", "less"}
    for op in ops:
        fn = getattr(ert, op.name)
        assert fn is getattr(_torch_select, op.name)
        assert fn.op.spec is er.ops.get_op(op.name)
        assert fn.__module__ == "exactref.equivalents._torch_select"
        assert _torch_select.MODELS.get(op["model"]) is not None
        params = list(inspect.signature(fn).parameters)
        assert params[:op.spec.arity] == list(op.spec.operands), op.name
        assert op.call in fn.__doc__ and "{call}" not in fn.__doc__
    # torch's name for an op is its call's (torch.neg: "neg"), in torch's own errors
    with pytest.raises(TypeError, match=r"^maximum\(\): argument 'y'"):
        ert.maximum(torch.tensor([1.0]), 2.0)
    with pytest.raises(ValueError, match="^torch.clamp: At least one"):
        ert.clamp(torch.tensor([1.0]))
