"""exactref.equivalents.torch against PyTorch 2.13 on the CPU.

For every dtype PyTorch's CPU add and mul support, same-dtype and mixed pairs, 0-d operands,
Python scalars and several alphas, on adversarial and random values (ties, subnormals,
overflow edges, signed zeros, infinities, NaN, cancellation): the reference covers PyTorch's
output on every element, its dtype and shape are PyTorch's, and where PyTorch raises, the
equivalent raises too. The default run samples; ``--run-slow`` runs every pair with larger
pools, and the scalar loops of PyTorch's default (non-AVX) build in a subprocess.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest
from arith_pools import pairs
from torch_check import ADD_DTYPES, ALL_DTYPES, MUL_ONLY, Sweep, alphas_for, tensor, values

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning"),
]

SIZES = [pytest.param("quick", id="quick"), pytest.param("full", id="full", marks=pytest.mark.slow)]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


# ---------------------------------------------------------------------------- same dtype
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_same_dtype(name, size):
    """Every pair of specials, cancellations, ties, overflow edges and random values."""
    fmt = er.dtype(name)
    x, y = pairs(fmt, 24 if size == "quick" else 600, _rng(name, size))
    X, Y = tensor(fmt, x), tensor(fmt, y)
    s = Sweep()
    s.check("mul", lambda: torch.mul(X, Y), lambda: ert.multiply(X, Y))
    if name in ADD_DTYPES:
        for alpha in alphas_for(fmt):
            s.check(f"add(alpha={alpha!r})", lambda a=alpha: torch.add(X, Y, alpha=a),
                    lambda a=alpha: ert.add(X, Y, alpha=a))
    else:
        s.check("add", lambda: torch.add(X, Y), lambda: ert.add(X, Y))  # both raise
    s.assert_ok()
    assert s.checked >= 1


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "complex64"])
def test_vector_body_and_scalar_tail(name):
    """Every length from 1 to 40: elements in PyTorch's vectorized body and its scalar tail
    (float16 and bfloat16 compute the plain form in one, the stored form in the other)."""
    fmt = er.dtype(name)
    rng = _rng(name, "lengths")
    s = Sweep()
    for n in sorted({*range(1, 41, 3), 15, 16, 17, 31, 32, 33, 40}):
        X, Y = tensor(fmt, values(fmt, n, rng)[-n:]), tensor(fmt, values(fmt, n, rng)[-n:])
        for alpha in (0.1, 1 / 3):
            s.check(f"n={n} alpha={alpha}", lambda a=alpha, X=X, Y=Y: torch.add(X, Y, alpha=a),
                    lambda a=alpha, X=X, Y=Y: ert.add(X, Y, alpha=a))
    s.assert_ok()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "complex64", "int32"])
def test_strided_and_broadcast(name):
    """Transposed, sliced and broadcast operands take PyTorch's strided loops."""
    fmt = er.dtype(name)
    rng = _rng(name, "strided")
    X = tensor(fmt, values(fmt, 48, rng)[-48:]).reshape(6, 8)
    Y = tensor(fmt, values(fmt, 48, rng)[-48:]).reshape(8, 6)
    row = tensor(fmt, values(fmt, 8, rng)[-8:])
    col = tensor(fmt, values(fmt, 6, rng)[-6:]).reshape(6, 1)
    s = Sweep()
    for label, a, b in (("transposed", X, Y.T), ("sliced", X[:, ::2], Y.T[:, 1::2]),
                        ("row", X, row), ("column", X, col), ("outer", col, row)):
        s.check(f"{label} mul", lambda a=a, b=b: a * b, lambda a=a, b=b: ert.multiply(a, b))
        alpha = 3 if fmt.is_integer else 0.1
        s.check(f"{label} add", lambda a=a, b=b, al=alpha: torch.add(a, b, alpha=al),
                lambda a=a, b=b, al=alpha: ert.add(a, b, alpha=al))
    s.assert_ok()


# -------------------------------------------------------------------------- mixed pairs
QUICK_MIXED = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
               "complex32", "complex64", "complex128", "float8_e4m3fn", "uint16"]
SHAPES = [((16,), (16,)), ((16,), ()), ((), (16,)), ((), ()), ((16,), (1,))]


def _mixed(a, b, size):
    fa, fb = er.dtype(a), er.dtype(b)
    rng = _rng(a, b, size)
    s = Sweep()
    shapes = SHAPES if size == "full" else SHAPES[:3]
    for sa, sb in shapes:
        xa = values(fa, 16, rng)
        yb = values(fb, 16, rng)
        X = tensor(fa, xa[rng.permutation(len(xa))[:16]].reshape(sa) if sa else xa[-1])
        Y = tensor(fb, yb[rng.permutation(len(yb))[:int(np.prod(sb))]].reshape(sb)
                   if sb else yb[-1])
        lab = f"{a}{list(sa)} {b}{list(sb)}"
        s.check(f"mul {lab}", lambda X=X, Y=Y: torch.mul(X, Y), lambda X=X, Y=Y: ert.multiply(X, Y))
        wide = fa if ("bool", "int", "uint", "float", "complex").index(fa.kind) >= (
            "bool", "int", "uint", "float", "complex").index(fb.kind) else fb
        for alpha in alphas_for(wide)[1:2] if size == "quick" else alphas_for(wide)[:4]:
            s.check(f"add(alpha={alpha!r}) {lab}",
                    lambda X=X, Y=Y, al=alpha: torch.add(X, Y, alpha=al),
                    lambda X=X, Y=Y, al=alpha: ert.add(X, Y, alpha=al))
    return s


@pytest.mark.parametrize("a", QUICK_MIXED)
def test_mixed_pairs(a):
    s = Sweep()
    for b in QUICK_MIXED:
        part = _mixed(a, b, "quick")
        s.failures += part.failures
        s.checked += part.checked
    s.assert_ok()


@pytest.mark.slow
@pytest.mark.parametrize("a", ALL_DTYPES)
def test_mixed_pairs_full(a):
    s = Sweep()
    for b in ALL_DTYPES:
        part = _mixed(a, b, "full")
        s.failures += part.failures
        s.checked += part.checked
    s.assert_ok()


# ------------------------------------------------------------------------ Python scalars
SCALARS = [True, False, 0, 1, -1, 3, 300, -129, 2**31, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
           0.0, -0.0, 0.1, -2.5, 1e300, 1e-300, 65519.0, 1e39, float("inf"), float("-inf"),
           float("nan"), 1 + 2**-11 + 2**-40, 1j, complex(-0.0, 1.0), complex(float("inf"), 1.0),
           0.5 - 2j]


QUICK_SCALARS = [True, 3, 300, 2**63, 2**64, -0.0, 0.1, 1e300, 65519.0, float("inf"),
                 float("nan"), 1 + 2**-11 + 2**-40, complex(float("inf"), 1.0), 0.5 - 2j]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ALL_DTYPES)
def test_python_scalars(name, size):
    fmt = er.dtype(name)
    rng = _rng(name, "scalars")
    X = tensor(fmt, values(fmt, 32, rng)[-40:])
    s = Sweep()
    for v in QUICK_SCALARS if size == "quick" else SCALARS:
        s.check(f"mul {v!r}", lambda v=v: torch.mul(X, v), lambda v=v: ert.multiply(X, v))
        s.check(f"rmul {v!r}", lambda v=v: v * X, lambda v=v: ert.multiply(X, v))
        s.check(f"add {v!r}", lambda v=v: torch.add(X, v), lambda v=v: ert.add(X, v))
        s.check(f"add {v!r} alpha=3", lambda v=v: torch.add(X, v, alpha=3),
                lambda v=v: ert.add(X, v, alpha=3))
    s.assert_ok()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "int8", "complex64"])
def test_zero_dim_operands(name):
    """0-d tensors of every dtype beside a tensor of ``name``: only the dimensioned one sets the
    dtype (within a kind), and a wider 0-d operand is cast as PyTorch casts it."""
    fmt = er.dtype(name)
    rng = _rng(name, "0d")
    X = tensor(fmt, values(fmt, 24, rng)[-24:])
    s = Sweep()
    for other in ALL_DTYPES:
        fo = er.dtype(other)
        pool = values(fo, 8, rng)
        for v in pool[rng.choice(len(pool), 3, replace=False)]:
            Z = tensor(fo, v)
            s.check(f"{name} * 0-d {other} {v!r}", lambda Z=Z: X * Z,
                    lambda Z=Z: ert.multiply(X, Z))
            s.check(f"0-d {other} {v!r} * {name}", lambda Z=Z: Z * X,
                    lambda Z=Z: ert.multiply(Z, X))
            s.check(f"{name} + 0-d {other} {v!r}", lambda Z=Z: torch.add(X, Z, alpha=1),
                    lambda Z=Z: ert.add(X, Z))
    s.assert_ok()


# ------------------------------------------------------------------------- capabilities
@pytest.mark.slow
def test_default_cpu_capability():
    """PyTorch's default (non-AVX) build of the kernels: scalar loops, no FMA contraction.
    The same sweep in a subprocess with ATEN_CPU_CAPABILITY=default."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    here = os.path.dirname(__file__)
    code = (
        "import sys, pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-x', "
        f"{os.path.join(here, 'test_torch_sweep.py')!r}, '-k', "
        "'same_dtype and quick or vector_body or python_scalars']))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


def test_unsupported_kernels_raise():
    """PyTorch 2.13 has no CPU add for float8 and uint16/32/64, and no float8 multiply by a
    y of one element: the equivalent raises TorchUnsupported (a NotImplementedError)."""
    f8 = torch.ones(3, dtype=torch.float8_e4m3fn)
    with pytest.raises(NotImplementedError):
        torch.add(f8, f8)
    with pytest.raises(ert.TorchUnsupported, match="no CPU add"):
        ert.add(f8, f8)
    with pytest.raises(ert.TorchUnsupported, match="y has more than one element"):
        ert.multiply(f8, f8[:1])
    with pytest.raises(NotImplementedError):
        torch.mul(f8, f8[:1])
    assert ert.multiply(f8[:1], f8).covers(torch.mul(f8[:1], f8)).all()
    u16 = torch.ones(3, dtype=torch.uint16)
    with pytest.raises(ert.TorchUnsupported):
        ert.add(u16, u16)
    assert ert.multiply(u16, 70000).covers(torch.mul(u16, 70000)).all()


def test_every_listed_dtype_is_what_torch_supports():
    """The lists above are measured: add works exactly for ADD_DTYPES, mul for all."""
    for name in ALL_DTYPES:
        t = er.asarray([1, 2], name).torch()
        try:
            torch.add(t, t)
            add_ok = True
        except (RuntimeError, NotImplementedError):
            add_ok = False
        assert add_ok == (name in ADD_DTYPES), name
        torch.mul(t, t)  # every one multiplies
    assert set(MUL_ONLY).isdisjoint(ADD_DTYPES)
    assert len(set(itertools.chain(ADD_DTYPES, MUL_ONLY))) == len(ALL_DTYPES)
