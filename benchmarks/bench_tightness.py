"""Tolerance tightness per op family (issue 21): exactref's default tolerance against the
largest error of the implementations it models, simulated step by step.

Run by hand: ``python3 benchmarks/bench_tightness.py [--json] [--bf16]``. For each op, on
standard-normal float32 ``(4, 1024)`` rows (``--bf16``: the same rows rounded to bfloat16,
computed in float32 opmath and rounded once at the end, as torch's kernels do), it prints:

- the default tolerance (``er.<op>(...)`` with no options), median and max over the elements,
  in ulps of the output format at the exact value (``Result.tolerance_ulps()``);
- the simulated implementations' error: per element the largest ``|impl - exact rounding|``
  in ulps over every implementation simulated, its median and max;
- ``ratio``: default median tolerance / median simulated error (floored at 1 ulp), the
  acceptance's measure (issue 21: within 4x for every long op); ``max ratio`` the same of the
  maxima;
- ``uncovered``: the implementations the default check rejects (it must be none).

The implementations are the orders and algorithms real libraries use, written in numpy float32
arithmetic (IEEE correctly rounded): sequential, numpy's pairwise (``np.sum`` on a contiguous
float32 axis), a binary tree (Triton-style ``tl.sum``), blocked(32) and split-K(4) partial sums
(GEMM kernels), two-pass and sequential Welford variances (torch's CPU ``WelfordOps``), Chan's
merged Welford of blocks (torch's CUDA reductions), a max-subtracted softmax with division or
reciprocal-multiply, a flash-style online softmax for attention (blocks of 128 keys), and
torch's own CPU kernels where torch is installed.
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import exactref as er  # noqa: E402

F32 = np.float32
BF16 = np.dtype(ml_dtypes.bfloat16)


# ---------------------------------------------------------------- summation orders (float32)
def s_seq(t):
    acc = np.zeros(t.shape[:-1], F32)
    for j in range(t.shape[-1]):
        acc = acc + t[..., j]
    return acc


def s_numpy(t):
    return np.ascontiguousarray(t, dtype=F32).sum(axis=-1, dtype=F32)


def s_tree(t):
    n = 1 << max(0, math.ceil(math.log2(max(t.shape[-1], 1))))
    t = np.concatenate([t, np.zeros(t.shape[:-1] + (n - t.shape[-1],), F32)], -1)
    while t.shape[-1] > 1:
        t = t[..., 0::2] + t[..., 1::2]
    return t[..., 0]


def s_blocked(t, b=32):
    n = t.shape[-1]
    parts = [s_seq(t[..., i:i + b]) for i in range(0, n, b)]
    return s_seq(np.stack(parts, -1))


def s_split4(t):
    n = t.shape[-1]
    k = -(-n // 4)
    return s_seq(np.stack([s_seq(t[..., i:i + k]) for i in range(0, n, k)], -1))


SUMS = {"sequential": s_seq, "numpy": s_numpy, "tree": s_tree, "blocked32": s_blocked,
        "split_k4": s_split4}


def torch_or_none():
    try:
        import torch
        return torch
    except ImportError:
        return None


def tt(a):
    torch = torch_or_none()
    return torch.from_numpy(np.ascontiguousarray(a, dtype=F32))


# ---------------------------------------------------------------- implementations per op
def impls_sum(x):
    out = {k: f(x) for k, f in SUMS.items()}
    if torch_or_none():
        out["torch"] = tt(x).sum(-1).numpy()
    return out


def impls_mean(x):
    n = F32(x.shape[-1])
    out = {k: f(x) / n for k, f in SUMS.items()}
    if torch_or_none():
        out["torch"] = tt(x).mean(-1).numpy()
    return out


def welford(x):
    mean = np.zeros(x.shape[:-1], F32)
    m2 = np.zeros(x.shape[:-1], F32)
    for j in range(x.shape[-1]):
        d = x[..., j] - mean
        mean = mean + d / F32(j + 1)
        m2 = m2 + d * (x[..., j] - mean)
    return mean, m2


def chan(x, b=128):
    """Welford on blocks of ``b``, merged left to right by Chan's formula."""
    parts = [welford(x[..., i:i + b]) + (F32(min(b, x.shape[-1] - i)),)
             for i in range(0, x.shape[-1], b)]
    mean, m2, n = parts[0]
    for mb, m2b, nb in parts[1:]:
        nn = n + nb
        d = mb - mean
        mean = mean + d * (nb / nn)
        m2 = m2 + m2b + d * d * (n * nb / nn)
        n = nn
    return mean, m2


def two_pass(x, s):
    n = F32(x.shape[-1])
    m = s(x) / n
    d = x - m[..., None]
    return m, s(d * d)


def stats(x):
    """(mean, m2) of every modelled algorithm and order."""
    out = {f"two-pass/{k}": two_pass(x, f) for k, f in SUMS.items()}
    out["welford"] = welford(x)
    out["chan128"] = chan(x)
    return out


def impls_var(x):
    n = F32(x.shape[-1])
    out = {k: m2 / n for k, (_, m2) in stats(x).items()}
    if torch_or_none():
        out["torch"] = tt(x).var(-1, correction=0).numpy()
    return out


def impls_matmul(a, b):
    t = a[:, None, :] * b.T[None, :, :]  # products, each rounded once (float32)
    out = {k: f(t) for k, f in SUMS.items()}
    out["fma-sequential"] = fma_seq(a, b)
    out["blas"] = a @ b
    if torch_or_none():
        out["torch"] = (tt(a) @ tt(b)).numpy()
    return out


def fma_seq(a, b):
    """acc = fma(a_k, b_k, acc) in order: each step rounded once (float64 holds the product
    exactly and the sum with one rounding to float64; the float32 rounding after it is the
    correctly rounded fma but in rare double-rounding cases, within a half ulp)."""
    acc = np.zeros((a.shape[0], b.shape[1]), F32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for k in range(a.shape[1]):
        acc = (a64[:, k:k + 1] * b64[k:k + 1, :] + acc).astype(F32)
    return acc


def softmax_rows(x, s, recip=False):
    e = np.exp(x - x.max(-1, keepdims=True))
    z = s(e)[..., None]
    return e * (F32(1) / z) if recip else e / z


def impls_softmax(x):
    out = {k: softmax_rows(x, f) for k, f in SUMS.items()}
    out["numpy/reciprocal"] = softmax_rows(x, s_numpy, recip=True)
    if torch_or_none():
        out["torch"] = tt(x).softmax(-1).numpy()
    return out


def impls_log_softmax(x):
    out = {}
    for k, f in SUMS.items():
        d = x - x.max(-1, keepdims=True)
        out[k] = d - np.log(f(np.exp(d)))[..., None]
    if torch_or_none():
        out["torch"] = tt(x).log_softmax(-1).numpy()
    return out


def impls_layer_norm(x, eps=1e-5):
    out = {}
    for k, (m, m2) in stats(x).items():
        rstd = F32(1) / np.sqrt(m2 / F32(x.shape[-1]) + F32(eps))
        out[k] = (x - m[..., None]) * rstd[..., None]
        out[k + "/divide"] = (x - m[..., None]) / np.sqrt(m2 / F32(x.shape[-1]) +
                                                          F32(eps))[..., None]
    torch = torch_or_none()
    if torch:
        out["torch"] = torch.nn.functional.layer_norm(tt(x), (x.shape[-1],), eps=eps).numpy()
    return out


def impls_rms_norm(x, eps=1e-6):
    out = {}
    for k, f in SUMS.items():
        ms = f(x * x) / F32(x.shape[-1]) + F32(eps)
        out[k] = x * (F32(1) / np.sqrt(ms))[..., None]
        out[k + "/divide"] = x / np.sqrt(ms)[..., None]
    torch = torch_or_none()
    if torch:
        out["torch"] = torch.nn.functional.rms_norm(tt(x), (x.shape[-1],), eps=eps).numpy()
    return out


def impls_conv1d(x, w):
    """im2col then each order over (channel, tap) terms; channel-major or tap-major."""
    n, c, L = x.shape
    o, _, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (k // 2, k // 2)))
    cols = np.stack([xp[:, :, i:i + L] for i in range(k)], -1)  # n, c, L, k
    out = {}
    for major, (cc, ww) in {"channel": (cols.transpose(0, 2, 1, 3), w),
                            "tap": (cols.transpose(0, 2, 3, 1), w.transpose(0, 2, 1))}.items():
        terms = cc.reshape(n, L, 1, c * k) * ww.reshape(1, 1, o, c * k)
        for name, f in SUMS.items():
            out[f"{major}/{name}"] = np.moveaxis(f(terms), 1, 2)
    torch = torch_or_none()
    if torch:
        out["torch"] = torch.nn.functional.conv1d(tt(x), tt(w), padding=k // 2).numpy()
    return out


def online_softmax_attention(q, k, v, block=128):
    """Flash-attention's forward in float32: running max, rescaled running sum and output."""
    s = F32(1 / math.sqrt(q.shape[-1]))
    m = np.full(q.shape[:-1], -np.inf, F32)
    ell = np.zeros(q.shape[:-1], F32)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), F32)
    for i in range(0, k.shape[-2], block):
        sc = (q @ np.swapaxes(k[..., i:i + block, :], -1, -2)) * s
        mn = np.maximum(m, sc.max(-1))
        alpha = np.exp(m - mn)
        p = np.exp(sc - mn[..., None])
        ell = ell * alpha + p.sum(-1)
        acc = acc * alpha[..., None] + p @ v[..., i:i + block, :]
        m = mn
    return acc / ell[..., None]


def impls_attention(q, k, v):
    s = F32(1 / math.sqrt(q.shape[-1]))
    out = {}
    for name, f in {"numpy": s_numpy, "sequential": s_seq}.items():
        sc = (q @ np.swapaxes(k, -1, -2)) * s
        out[f"math/{name}"] = softmax_rows(sc, f) @ v
    out["flash128"] = online_softmax_attention(q, k, v)
    torch = torch_or_none()
    if torch:
        out["torch"] = torch.nn.functional.scaled_dot_product_attention(
            tt(q), tt(k), tt(v)).numpy()
    return out


def impls_function(fn, torch_name):
    def make(x):
        out = {"numpy": fn(x)}
        torch = torch_or_none()
        if torch:
            f = torch
            for part in torch_name.split("."):
                f = getattr(f, part)
            out["torch"] = f(tt(x)).numpy()
        return out
    return make


def gelu_np(x):
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1 + np.vectorize(math.erf)(x64 / math.sqrt(2)))).astype(F32)


# ---------------------------------------------------------------- the measure
def ulp(values, dt):
    fi = ml_dtypes.finfo(dt)
    v = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(v > 0, v, 1.0)))
    return np.exp2(np.where(v > 0, np.maximum(e, fi.minexp), fi.minexp) - fi.nmant)


def cases(rng, dt):
    x = rng.standard_normal((4, 1024)).astype(F32)
    xs = x.astype(dt).astype(F32) if dt == BF16 else x
    a = xs
    b = rng.standard_normal((1024, 16)).astype(dt).astype(F32)
    xc = rng.standard_normal((1, 4, 1024)).astype(dt).astype(F32)
    wc = rng.standard_normal((8, 4, 9)).astype(dt).astype(F32)
    q = rng.standard_normal((1, 4, 64)).astype(dt).astype(F32)
    k = rng.standard_normal((1, 1024, 64)).astype(dt).astype(F32)
    v = rng.standard_normal((1, 1024, 64)).astype(dt).astype(F32)
    pos = (np.abs(xs) + F32(0.01)).astype(dt).astype(F32)
    return [
        ("sum", "long", (xs,), {"axis": -1}, impls_sum),
        ("mean", "long", (xs,), {"dim": -1}, impls_mean),
        ("var", "long", (xs,), {"dim": -1, "correction": 0}, impls_var),
        ("matmul", "long", (a, b), {}, impls_matmul),
        ("softmax", "long", (xs,), {"dim": -1}, impls_softmax),
        ("log_softmax", "long", (xs,), {"dim": -1}, impls_log_softmax),
        ("layer_norm", "long", (xs, (1024,)), {}, lambda x, s: impls_layer_norm(x)),
        ("rms_norm", "long", (xs, (1024,)), {"eps": 1e-6}, lambda x, s: impls_rms_norm(x)),
        ("conv1d", "long", (xc, wc), {"padding": 4}, impls_conv1d),
        ("scaled_dot_product_attention", "long", (q, k, v), {}, impls_attention),
        ("exp", "function", (xs,), {}, impls_function(np.exp, "exp")),
        ("tanh", "function", (xs,), {}, impls_function(np.tanh, "tanh")),
        ("log", "function", (pos,), {}, impls_function(np.log, "log")),
        ("sigmoid", "function", (xs,), {},
         impls_function(lambda t: F32(1) / (F32(1) + np.exp(-t)), "sigmoid")),
        ("gelu", "function", (xs,), {}, impls_function(gelu_np, "nn.functional.gelu")),
    ]


def measure(dt=None, seed=0):
    dt = np.dtype(F32) if dt is None else dt
    rng = np.random.default_rng(seed)
    out = []
    for op, kind, args, kwargs, impls in cases(rng, dt):
        er_args = tuple(a.astype(dt) if isinstance(a, np.ndarray) else a for a in args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = getattr(er, op)(*er_args, **kwargs)
            tol = np.asarray(res.tolerance_ulps(), dtype=np.float64)
            rounded = np.asarray(res.rounded.numpy(), dtype=np.float64)
            with np.errstate(all="ignore"):
                sims = {k: np.asarray(vv, dtype=F32).astype(dt)
                        for k, vv in impls(*args).items()}
            uncovered = sorted(k for k, vv in sims.items() if not res.covers(vv).all())
        errs = np.max([np.abs(vv.astype(np.float64) - rounded) / ulp(rounded, dt)
                       for vv in sims.values()], axis=0)
        tmed, tmax = float(np.median(tol)), float(tol.max())
        emed, emax = float(np.median(errs)), float(errs.max())
        out.append({"op": op, "kind": kind, "dtype": str(dt), "tol_median": tmed,
                    "tol_max": tmax, "err_median": emed, "err_max": emax,
                    "ratio": tmed / max(emed, 1.0), "ratio_max": tmax / max(emax, 1.0),
                    "impls": sorted(sims),
                    "uncovered": uncovered})
    return out


def main(argv):
    dts = [np.dtype(F32)] + ([BF16] if "--bf16" in argv else [])
    rows = [r for dt in dts for r in measure(dt)]
    if "--json" in argv:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'op':<30} {'dtype':<9} {'tol median':>11} {'tol max':>11} {'err median':>11} "
          f"{'err max':>9} {'ratio':>9} {'max ratio':>9}  uncovered")
    for r in rows:
        print(f"{r['op']:<30} {r['dtype']:<9} {r['tol_median']:11.4g} {r['tol_max']:11.4g} "
              f"{r['err_median']:11.4g} {r['err_max']:9.4g} {r['ratio']:9.3g} {r['ratio_max']:9.3g}  "
              f"{', '.join(r['uncovered']) or '-'}")


if __name__ == "__main__":
    main(sys.argv[1:])
