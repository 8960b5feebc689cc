"""exactref.equivalents.torch's backward references against PyTorch's autograd: grad_x and
grad_y of ``x * y`` and ``torch.add(x, y, alpha=...)`` for broadcast shapes, same and mixed
dtypes, real and complex, random values with zeros of both signs; every element covered, with
PyTorch's dtypes and shapes."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

SHAPES = [((3, 1), (1, 4)), ((4,), (3, 4)), ((2, 3, 4), (4,)), ((), (3,)), ((5,), (5,)),
          ((1, 5), (5,)), ((6, 7), (6, 1)), ((1, 300), (64, 300))]
DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128",
          ("float16", "float32"), ("float32", "float64"), ("float32", "complex64"),
          ("bfloat16", "float16")]


def _rand(fmt, shape, rng):
    n = int(np.prod(shape)) if shape else 1
    v = rng.standard_normal(n) * 2.0 ** rng.integers(-3, 4, n)
    v[rng.random(n) < 0.1] = 0.0
    v[rng.random(n) < 0.05] = -0.0
    if fmt.kind == "complex":
        w = rng.standard_normal(n)
        w[rng.random(n) < 0.1] = -0.0
        z = np.empty(n, np.complex128)
        z.real, z.imag = v, w
        v = z
    return er.asarray(v.reshape(shape), fmt).torch()


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtypes", DTYPES, ids=str)
def test_backward_covered(dtypes, shapes):
    da, db = (dtypes, dtypes) if isinstance(dtypes, str) else dtypes
    fa, fb = er.dtype(da), er.dtype(db)
    rng = np.random.default_rng(zlib.crc32(repr((dtypes, shapes)).encode()))
    ops = [("mul", None), ("add", 1), ("add", 0.3), ("add", -2)]
    if "complex" in da + db:
        ops.append(("add", 0.5 - 1j))
    for op, alpha in ops:
        x = _rand(fa, shapes[0], rng).requires_grad_()
        y = _rand(fb, shapes[1], rng).requires_grad_()
        out = x * y if op == "mul" else torch.add(x, y, alpha=alpha)
        g = _rand(er.dtype(out.dtype), tuple(out.shape), rng)
        gx, gy = torch.autograd.grad(out, (x, y), g)
        if op == "mul":
            ref = ert.multiply_backward(x.detach(), y.detach(), g)
        else:
            ref = ert.add_backward(x.detach(), y.detach(), g, alpha=alpha)
        for name, r, t in (("grad_x", ref.grad_x, gx), ("grad_y", ref.grad_y, gy)):
            assert r.rounded.dtype is er.dtype(t.dtype), (op, name)
            assert tuple(r.rounded.shape) == tuple(t.shape), (op, name)
            cov = r.covers(t)
            assert cov.all(), f"{op} alpha={alpha} {name}: {cov.summary()}"


def test_scalar_operand_has_no_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (gx,) = torch.autograd.grad(x * 2.5, (x,), torch.ones(2))
    ref = ert.multiply_backward(x.detach(), 2.5, torch.ones(2))
    assert ref.grad_y is None and ref.grad_x.covers(gx).all()
    h = torch.tensor([1.0, 3.0], dtype=torch.float16, requires_grad=True)
    g = torch.tensor([0.1, 0.7], dtype=torch.float16)
    (gh,) = torch.autograd.grad(torch.add(h, 1.0, alpha=1 / 3) * (1 / 3), (h,), g)
    del gh  # a chain of two ops: checked by parts below
    (gy,) = torch.autograd.grad(torch.add(torch.zeros(2, dtype=torch.float16), h,
                                          alpha=1 / 3), (h,), g)
    assert ert.add_backward(torch.zeros(2, dtype=torch.float16), h.detach(), g,
                            alpha=1 / 3).grad_y.covers(gy).all()


def test_grad_shape_checked():
    with pytest.raises(ValueError, match="output's shape"):
        ert.multiply_backward(torch.ones(3), torch.ones(3), torch.ones(2))


# ==================================================================== the real functions
# er.<function>.backward is the exact gradient rounded once; PyTorch's CPU kernels compute
# their formulas step by step in the operand's format (float32 opmath for the half formats), so
# their gradients lie within a few of their own roundings of it. Special values are PyTorch's
# formulas in IEEE arithmetic on both sides and must agree bit for bit, but for the departures
# pinned below (where PyTorch's intermediate exp underflows to 0).
import math  # noqa: E402

import torch.nn.functional as F  # noqa: E402

INF, NAN = math.inf, math.nan
UNARY = [  # (id, er op, er parameters, torch function)
    ("silu", "silu", {}, F.silu),
    ("mish", "mish", {}, F.mish),
    ("gelu", "gelu", {}, F.gelu),
    ("gelu_tanh", "gelu", {"approximate": "tanh"}, lambda x: F.gelu(x, approximate="tanh")),
    ("softplus", "softplus", {}, F.softplus),
    ("softplus-beta2-t5", "softplus", {"beta": 2.0, "threshold": 5.0},
     lambda x: F.softplus(x, beta=2.0, threshold=5.0)),
    ("softplus-beta-1", "softplus", {"beta": -1.0}, lambda x: F.softplus(x, beta=-1.0)),
    ("logit", "logit", {}, torch.logit),
    ("logit-eps0.2", "logit", {"eps": 0.2}, lambda x: torch.logit(x, eps=0.2)),
]


def _torch_grad(fn, x, g):
    x = x.clone().requires_grad_()
    (gx,) = torch.autograd.grad(fn(x), (x,), g)
    return gx


def _ulp(v: np.ndarray, fmt) -> np.ndarray:
    """The ulp of each |v| in ``fmt`` (the subnormal quantum below the normal range)."""
    fmt = er.dtype(fmt)
    a = np.abs(v)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    return np.exp2(np.maximum(e, fmt.emin) - fmt.precision + 1)


def _within(got, ref, g, x, fmt, k_ulps, k_abs):
    """``|got - ref| <= k_ulps ulp(ref) + k_abs eps |g| (1 + |x|)``, ``eps`` the compute
    format's (float32 for the half formats): PyTorch's roundings, and the cancellation where
    the derivative's terms (of size about 1 + |x|) nearly cancel (silu, gelu and mish at their
    minima, ``1 + erf`` and ``1 + tanh`` far left)."""
    fmt = er.dtype(fmt)
    eps = 2.0 ** (1 - max(fmt.precision, 24))
    tol = k_ulps * _ulp(ref, fmt) + k_abs * eps * np.abs(g) * (1 + np.abs(x))
    with np.errstate(invalid="ignore"):
        return (got == ref) | (np.abs(got - ref) <= tol) | (np.isnan(got) & np.isnan(ref))


@pytest.mark.parametrize("case", UNARY, ids=[c[0] for c in UNARY])
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "float16"])
def test_function_backward_near_torch(case, dtype):
    name, op, params, fn = case
    fmt = er.dtype(dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name}{dtype}".encode()))
    n = 400
    x = rng.standard_normal(n) * 2.0 ** rng.integers(-4, 4, n)
    if op == "logit":
        x = rng.uniform(0, 1, n)
    x = er.asarray(x, fmt).numpy().astype(np.float64)
    if params.get("eps") is not None:
        # Note: torch compares x with eps and 1 - eps rounded into x's dtype (bfloat16: 1 - 0.2
        # is 0.80078125, so x = 0.80078125 is not masked there); the reference compares
        # exactly. Values within an ulp of the bounds are left out here, pinned below.
        eps = params["eps"]
        near = (np.abs(x - eps) <= _ulp(x, fmt)) | (np.abs(x - (1 - eps)) <= _ulp(x, fmt))
        x = x[~near]
    x = er.asarray(x, fmt).torch()
    g = er.asarray(rng.standard_normal(x.numel()), fmt).torch()
    got = _torch_grad(fn, x, g)
    ref = getattr(er, op).backward(x, g, **params).grad_x.rounded
    assert ref.dtype is er.dtype(got.dtype)
    r = ref.numpy().astype(np.float64)
    t = got.double().numpy()
    xv, gv = x.double().numpy(), g.double().numpy()
    # Note: float32 and float64 compute every step in the format (up to 8 roundings: exp,
    # sums, products, a division); the half formats compute in float32 and round once, so
    # they are within one ulp of the exact gradient, but where float32 itself cancels.
    k_ulps, k_abs = (16, 16) if fmt.bits >= 32 else (1, 16)
    if op == "logit":  # g / (x (1 - x)): 1 - x rounds near 1
        k_abs = 0
        k_ulps = max(k_ulps, 4 + 4 * float(np.max(1 / np.maximum(1 - xv, 2.0**-20))) *
                     2.0 ** (1 - fmt.precision) / 2.0 ** (1 - fmt.precision))
    ok = _within(t, r, gv, xv, fmt, k_ulps, k_abs)
    assert ok.all(), (f"{name} {dtype}: torch {t[~ok][:4]}, exact {r[~ok][:4]} at x="
                      f"{xv[~ok][:4]}, g={gv[~ok][:4]}")
    if fmt.bits < 32:  # most elements are the exact gradient itself
        assert (t == r).mean() > 0.6, (t == r).mean()


def test_logit_eps_bounds_rounded_by_torch():
    """PyTorch rounds ``1 - eps`` into x's dtype before comparing (bfloat16: 0.80078125 for
    eps = 0.2), so it keeps a gradient the exact comparison masks: pinned."""
    x = torch.tensor([0.80078125], dtype=torch.bfloat16)
    g = torch.tensor([1.0], dtype=torch.bfloat16)
    t = _torch_grad(lambda v: torch.logit(v, eps=0.2), x, g)
    assert t.item() > 0  # torch: not masked
    assert er.logit.backward(x, g, eps=0.2).grad_x.rounded.tolist() == [0.0]  # > 1 - 0.2


#: Where PyTorch's formula meets an underflowed exp (float64: e**-800 = 0) it gives another
#: sign of zero or NaN than the exact value's: pinned (id, x, g) -> (torch, exactref).
PINNED = {
    ("mish", -800.0, 1.0): (0.0, -0.0),  # torch: tanh(softplus) + x * 0 = 0 + (-0); exact < 0
    ("mish", -800.0, -1.0): (-0.0, 0.0),
    ("mish", -800.0, 0.0): (0.0, -0.0),
    ("gelu", -800.0, 0.0): (0.0, -0.0),  # torch: 0 * (0 + x * 0); exact g f'(x) = 0 * (< 0)
    ("gelu_tanh", -800.0, 0.0): (0.0, -0.0),
    ("silu", -800.0, INF): (NAN, -INF),  # torch: inf * 0 (sigmoid underflowed); exact: inf * (< 0)
    ("mish", -800.0, INF): (NAN, -INF),
    ("gelu", -800.0, INF): (NAN, -INF),
    ("gelu_tanh", -800.0, INF): (NAN, -INF),
    ("softplus", -800.0, INF): (NAN, INF),
    ("softplus-beta2-t5", -800.0, INF): (NAN, INF),
    ("softplus-beta-1", 800.0, INF): (NAN, INF),
    ("gelu", -800.0, 1.0): (0.0, -0.0),  # torch: 0 + x * 0 (e**(-x**2/2) underflowed)
    ("gelu", -800.0, -1.0): (-0.0, 0.0),
    ("gelu_tanh", -800.0, 1.0): (0.0, -0.0),
    ("gelu_tanh", -800.0, -1.0): (-0.0, 0.0),
}


@pytest.mark.parametrize("case", UNARY, ids=[c[0] for c in UNARY])
def test_function_backward_specials_as_torch(case):
    """±0, ±inf, NaN, huge arguments and 0, 1 for logit, with grads ±1, 0, inf, NaN (float64):
    the same value and sign of zero as PyTorch's autograd, but for :data:`PINNED`."""
    name, op, params, fn = case
    xs = [-INF, -800.0, -0.0, 0.0, 800.0, INF, NAN] + ([0.5, 1.0, 2.0] if op == "logit" else [])
    gs = [1.0, -1.0, 0.0, INF, NAN]
    x, g = (torch.tensor(a.reshape(-1), dtype=torch.float64)
            for a in np.meshgrid(xs, gs, indexing="ij"))
    t = _torch_grad(fn, x, g).numpy()
    r = getattr(er, op).backward(x, g, **params).grad_x.rounded.numpy()

    def same(a, b):
        return (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b))

    bad = []
    for k in range(t.size):
        key = (name, float(x[k]), float(g[k]))
        want = PINNED.get(key, (t[k], t[k]))
        if not (same(want[0], t[k]) and same(want[1], r[k])):
            bad.append((key, float(t[k]), float(r[k])))
    assert not bad, f"(case, x, g), torch, exactref: {bad}"


def test_atan2_backward_near_torch():
    rng = np.random.default_rng(41)
    for dtype, shapes in (("float64", ((6, 1), (1, 5))), ("float32", ((30,), (30,))),
                          ("float32", ((4, 1), (4, 7)))):
        fmt = er.dtype(dtype)
        y = er.asarray(rng.standard_normal(shapes[0]) * 3, fmt).torch().requires_grad_()
        x = er.asarray(rng.standard_normal(shapes[1]) * 3, fmt).torch().requires_grad_()
        out = torch.atan2(y, x)
        g = er.asarray(rng.standard_normal(tuple(out.shape)), fmt).torch()
        gy, gx = torch.autograd.grad(out, (y, x), g)
        ref = er.atan2.backward(y.detach(), x.detach(), g)
        for r, t, o in ((ref.grad_y, gy, y), (ref.grad_x, gx, x)):
            assert tuple(r.rounded.shape) == tuple(t.shape)
            rv, tv = r.rounded.numpy().astype(np.float64), t.double().numpy()
            # Note: torch rounds x*x + y*y, its reciprocal and two products (4 roundings), and
            # sums broadcast copies in the format: within 4 ulps per copy
            copies = out.numel() // o.numel()
            scale = np.abs(g.double().numpy()).max() / 1e-3
            ok = np.abs(rv - tv) <= 4 * copies * _ulp(np.maximum(np.abs(rv), 1e-300), fmt) + \
                copies * 2.0 ** (1 - fmt.precision) * scale * 1e-3
            assert ok.all(), (dtype, rv[~ok][:3], tv[~ok][:3])


def test_pow_backward_specials_as_torch():
    """Every pair of C99's special bases and exponents (and a few regular ones), grads 1, 0,
    inf, NaN: bit for bit PyTorch's (float64 autograd, torch 2.13)."""
    vals = [-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0, INF, NAN]
    x, y, g = (torch.tensor(a.reshape(-1), dtype=torch.float64)
               for a in np.meshgrid(vals, vals, [1.0, 0.0, INF, NAN], indexing="ij"))
    xr, yr = x.clone().requires_grad_(), y.clone().requires_grad_()
    tx, ty = torch.autograd.grad(torch.pow(xr, yr), (xr, yr), g)
    ref = er.pow.backward(x, y, g)
    for name, t, r in (("grad_x", tx.numpy(), ref.grad_x.rounded.numpy()),
                       ("grad_y", ty.numpy(), ref.grad_y.rounded.numpy())):
        special = ~np.isfinite(t) | ~np.isfinite(r) | (t == 0) | (r == 0)  # regular: below
        same = (np.isnan(t) & np.isnan(r)) | ((t == r) & (np.signbit(t) == np.signbit(r)))
        same |= ~special
        bad = np.flatnonzero(~same)
        assert same.all(), [(name, float(x[k]), float(y[k]), float(g[k]), t[k], r[k])
                            for k in bad[:5]]


def test_pow_backward_near_torch():
    rng = np.random.default_rng(43)
    for dtype in ("float64", "float32"):
        fmt = er.dtype(dtype)
        n = 300
        x = np.abs(rng.standard_normal(n)) * 2.0 ** rng.integers(-4, 4, n)
        x[: n // 5] = -rng.integers(1, 5, n // 5)  # negative bases, integer exponents
        y = rng.standard_normal(n) * 3
        y[: n // 5] = rng.integers(-4, 5, n // 5)
        x, y = (er.asarray(a, fmt).torch() for a in (x, y))
        g = er.asarray(rng.standard_normal(n), fmt).torch()
        xr, yr = x.clone().requires_grad_(), y.clone().requires_grad_()
        tx, ty = torch.autograd.grad(torch.pow(xr, yr), (xr, yr), g)
        ref = er.pow.backward(x, y, g)
        for name, t, r in (("grad_x", tx, ref.grad_x), ("grad_y", ty, ref.grad_y)):
            rv, tv = r.rounded.numpy().astype(np.float64), t.double().numpy()
            # Note: torch rounds y - 1, pow, two products (grad_x) or pow, log and two products
            # (grad_y): within 8 ulps, and more by pow's condition number in its exponent
            # (|y ln x| ulps: y - 1 and x**y rounded) and where log(x) is small near x = 1
            xv, yv = x.double().numpy(), y.double().numpy()
            with np.errstate(divide="ignore"):
                lnx = np.abs(np.log(np.abs(xv)))
            k = 8 + 4 * lnx * np.maximum(np.abs(yv), 1)
            if name == "grad_y":
                k = k + 4 / np.maximum(lnx, 1e-3)
            ok = (np.abs(rv - tv) <= k * _ulp(rv, fmt)) | (np.isnan(rv) & np.isnan(tv))
            assert ok.all(), (dtype, name, rv[~ok][:3], tv[~ok][:3], xv[~ok][:3])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_pow_as_torch(dtype):
    """Integer tensors to integer tensor powers: PyTorch's wrapped values, negative exponents
    (0, or ±1 for bases ±1) included."""
    rng = np.random.default_rng(zlib.crc32(dtype.encode()))
    fmt = er.dtype(dtype)
    x = rng.integers(max(fmt.int_min, -30), 31, 500)
    y = rng.integers(-4 if fmt.int_min < 0 else 0, 80, 500)
    tx, ty = (torch.tensor(a, dtype=getattr(torch, dtype)) for a in (x, y))
    got = er.pow(tx, ty)
    assert got.rounded.dtype is er.dtype(dtype)
    assert got.rounded.tolist() == torch.pow(tx, ty).tolist()


def test_pow_and_atan2_backward_of_integer_operands_as_torch():
    """An integer tensor takes no gradient; the float operand's gradient reads it converted
    into the result's dtype, as PyTorch does (within its roundings of the same formula)."""
    xi = torch.tensor([3, 2**40 + 1, 5, 7])
    y = torch.tensor([1.5, 0.5, 2.0, -1.25], requires_grad=True)
    g = torch.tensor([1.0, -2.0, 0.5, 3.0])
    (ty,) = torch.autograd.grad(torch.pow(xi, y), (y,), g)
    ref = er.pow.backward(xi, y.detach(), g)
    assert ref.grad_x is None
    r = ref.grad_y.rounded.numpy().astype(np.float64)
    assert (np.abs(r - ty.double().numpy()) <= 8 * _ulp(r, "float32")).all()
    (tx,) = torch.autograd.grad(torch.atan2(xi, y), (y,), g)
    ref = er.atan2.backward(xi, y.detach(), g)
    assert ref.grad_y is None
    r, t = ref.grad_x.rounded.numpy().astype(np.float64), tx.double().numpy()
    # Note: torch squares the integer y in int64 (atan2_backward's self * self): 2**80 wraps,
    # and its grad_x there is 1.0; the exact one is 2 * 2**40 / (2**80 + 0.25) = 2**-39
    assert t[1] == 1.0 and r[1] == 2.0**-39
    keep = [0, 2, 3]
    assert (np.abs(r[keep] - t[keep]) <= 4 * _ulp(r[keep], "float32")).all()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_pow_and_atan2_backward_in_half_formats_near_torch(dtype):
    """PyTorch differentiates pow and atan2 by composite formulas (derivatives.yaml): each
    tensor op of ``grad * y * x.pow(y - 1)``, ``grad * result * log(x)`` and ``grad * x * (x*x
    + y*y).reciprocal()`` rounds in the half format, so its gradients lie several ulps from the
    exact one rounded once (measured: up to 7 for pow, 2 for atan2); where an intermediate
    overflows the format (float16's 65504) it gives inf or NaN for a finite gradient."""
    fmt = er.dtype(dtype)
    rng = np.random.default_rng(zlib.crc32(dtype.encode()))
    n = 500
    x = er.asarray(np.abs(rng.standard_normal(n)) * 2 + 0.05, fmt).torch().requires_grad_()
    y = er.asarray(rng.standard_normal(n) * 2, fmt).torch().requires_grad_()
    g = er.asarray(rng.standard_normal(n), fmt).torch()
    tx, ty = torch.autograd.grad(torch.pow(x, y), (x, y), g)
    ref = er.pow.backward(x.detach(), y.detach(), g)
    ay, ax = torch.autograd.grad(torch.atan2(y, x), (y, x), g)
    at = er.atan2.backward(y.detach(), x.detach(), g)
    for t, r, k in ((tx, ref.grad_x, 12), (ty, ref.grad_y, 12), (ax, at.grad_x, 3),
                    (ay, at.grad_y, 3)):
        tv, rv = t.double().numpy(), r.rounded.numpy().astype(np.float64)
        finite = np.isfinite(tv)  # torch's overflowed intermediates: left out
        assert finite.mean() > 0.95
        ok = _within(tv[finite], rv[finite], 0.0, 0.0, fmt, k, 0)
        assert ok.all(), (dtype, tv[finite][~ok][:3], rv[finite][~ok][:3])
