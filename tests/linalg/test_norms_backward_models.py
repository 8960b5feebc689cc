"""The backward tolerance models proved by simulation: PyTorch's CPU layer-norm and group-norm
backward kernels (``LayerNormBackwardKernelImplInternal``, ``GroupNormBackwardKernelImplInternal``)
and the autograd of its rms-norm composite, run step
by step with MPFR rounding (gmpy2 contexts of each format) in random summation orders (random
trees), FMA contracted or not at every product that feeds an addition, the rows split among
random thread buffers, the saved mean and rstd from a simulated two-pass forward in the compute
format and stored in the declared format; every output covered. Implementations outside the
model are caught: ``ds`` accumulated in bfloat16, the ``mean(gh xhat)`` term left out, the
rms norm's ``r**3`` term left out, bfloat16 buffers where float32 ones are declared, group
norm's ``dx`` without ``c2`` and its weight gradient without ``db * mean``."""

from __future__ import annotations

import random
from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import exactref as er

_EXP = {"float64": (53, -1073, 1024), "float32": (24, -148, 128), "bfloat16": (8, -132, 128),
        "float16": (11, -23, 16)}
_MODE = {er.Rounding.NEAREST_EVEN: gmpy2.RoundToNearest,
         er.Rounding.TOWARD_POSITIVE: gmpy2.RoundUp, er.Rounding.TOWARD_ZERO: gmpy2.RoundToZero,
         er.Rounding.TOWARD_NEGATIVE: gmpy2.RoundDown}


def _ctx(name, mode=er.Rounding.NEAREST_EVEN):
    p, emin, emax = _EXP[name]
    return gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True,
                         round=_MODE[mode])


def _mp(v):
    return gmpy2.mpfr(Fraction(float(v)), 200)


def _tree_sum(c, terms, rnd):
    """A sum in a random order (a random tree of additions rounded in ``c``)."""
    terms = list(terms)
    if not terms:
        return gmpy2.mpfr(0)
    while len(terms) > 1:
        i, j = rnd.sample(range(len(terms)), 2)
        s = c.add(terms[i], terms[j])
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [s]
    return terms[0]


def _stats(row, c, rnd, eps, centered):
    """A two-pass forward in ``c``: the mean and ``1 / sqrt(var + eps)`` (random orders)."""
    n = len(row)
    if centered:
        m = c.div(_tree_sum(c, row, rnd), n)
        d2 = [c.mul(c.sub(x, m), c.sub(x, m)) for x in row]
    else:
        m = gmpy2.mpfr(0)
        d2 = [c.mul(x, x) for x in row]
    v = c.div(_tree_sum(c, d2, rnd), n)
    return m, c.div(1, c.sqrt(c.add(v, c.plus(_mp(eps)))))


def _maybe_fma(c, a, b, addend, rnd):
    """``a * b + addend``: fused or not, at random."""
    return c.fma(a, b, addend) if rnd.random() < 0.5 else c.add(c.mul(a, b), addend)


def _layer_kernel(X, G, W, eps, fmt, cname, sname, aname, rnd, mode, wrong=None, split=True):
    """PyTorch's layer-norm backward kernel, simulated: ``(dx, dgamma, dbeta)``."""
    c, T, S, A = _ctx(cname, mode), _ctx(fmt, mode), _ctx(sname, mode), _ctx(aname, mode)
    M, n = X.shape
    xs = [[_mp(v) for v in r] for r in X]
    gs = [[_mp(v) for v in r] for r in G]
    ws = [_mp(v) for v in W]
    scale = c.div(1, n)
    dx = np.empty((M, n))
    threads = sorted(rnd.sample(range(1, M), rnd.randint(0, M - 1))) if M > 1 and split else []
    bounds = [0, *threads, M]
    bufs_g, bufs_b = [], []
    for t0, t1 in zip(bounds[:-1], bounds[1:], strict=True):
        bg = [gmpy2.mpfr(0)] * n
        bb = [gmpy2.mpfr(0)] * n
        for i in range(t0, t1):
            m, a = _stats(xs[i], c, rnd, eps, True)
            m, a = S.plus(m), S.plus(a)
            hb = c.mul(-a, m)
            for j in range(n):
                h = _maybe_fma(c, a, xs[i][j], hb, rnd)
                bg[j] = A.plus(_maybe_fma(c, gs[i][j], h, bg[j], rnd))
                bb[j] = A.plus(c.add(bb[j], gs[i][j]))
            gw = [c.mul(g, w) for g, w in zip(gs[i], ws, strict=True)]
            db = _tree_sum(c, gw, rnd)
            if wrong == "ds in bfloat16":
                bf = _ctx("bfloat16", mode)
                ds = gmpy2.mpfr(0)
                for g, x in zip(gw, xs[i], strict=True):
                    ds = bf.plus(c.add(ds, c.mul(g, x)))
            else:
                ds = _tree_sum(c, [c.mul(g, x) if rnd.random() < 0.5 else
                                   c.mul(c.mul(gg, x), w) for g, gg, x, w in
                                   zip(gw, gs[i], xs[i], ws, strict=True)], rnd)
            t = c.fms(db, m, ds) if rnd.random() < 0.5 else c.sub(c.mul(db, m), ds)
            b = c.mul(c.mul(c.mul(c.mul(t, a), a), a), scale)
            if wrong == "no mean(gh xhat)":
                b = gmpy2.mpfr(0)
            q = c.mul(c.mul(db, a), scale)
            cc = _maybe_fma(c, -b, m, -q, rnd)
            for j in range(n):
                p1 = c.mul(c.mul(a, gs[i][j]), ws[j])
                s1 = _maybe_fma(c, b, xs[i][j], p1, rnd)
                dx[i, j] = float(T.plus(c.add(s1, cc)))
        bufs_g.append(bg)
        bufs_b.append(bb)
    dg = [float(T.plus(_tree_sum(c, [b[j] for b in bufs_g], rnd))) for j in range(n)]
    dbeta = [float(T.plus(_tree_sum(c, [b[j] for b in bufs_b], rnd))) for j in range(n)]
    return dx, np.array(dg), np.array(dbeta)


def _rms_autograd(X, G, W, eps, fmt, cname, rnd, mode, wrong=None):
    """The autograd of ``x.to(c) * rsqrt(mean(x**2) + eps) * w``, simulated: ``(dx, dw)``."""
    c, T = _ctx(cname, mode), _ctx(fmt, mode)
    M, n = X.shape
    dx = np.empty((M, n))
    dw_terms = [[] for _ in range(n)]
    for i in range(M):
        xs = [_mp(v) for v in X[i]]
        gs = [_mp(v) for v in G[i]]
        ws = [_mp(v) for v in W]
        _, r = _stats(xs, c, rnd, eps, False)
        gh = [c.mul(g, w) for g, w in zip(gs, ws, strict=True)]
        sr = _tree_sum(c, [c.mul(h, x) for h, x in zip(gh, xs, strict=True)], rnd)
        p3 = c.mul(c.mul(r, r), r)
        gm = c.div(c.mul(c.mul(-0.5, sr), p3), n)
        if wrong == "no r**3 term":
            gm = gmpy2.mpfr(0)
        for j in range(n):
            t1 = c.mul(gh[j], r)
            t2 = c.mul(gm, c.mul(2, xs[j]))
            dx[i, j] = float(T.plus(c.add(t1, t2)))
            dw_terms[j].append(c.mul(gs[j], c.mul(xs[j], r)))
    dw = [float(T.plus(_tree_sum(c, t, rnd))) for t in dw_terms]
    return dx, np.array(dw)


CASES = [("bfloat16", "float32", "bfloat16"), ("float16", "float32", "float16"),
         ("float32", "float32", "float32"), ("float64", "float64", "float64"),
         ("bfloat16", "float32", "float32")]


def _data(fmt, rng, M, n, offset):
    X = offset + rng.standard_normal((M, n)) * np.exp2(rng.integers(-2, 2, (M, n)))
    G = rng.standard_normal((M, n))
    W = rng.uniform(0.5, 2, n)
    return [np.asarray(er.asarray(v, fmt).numpy()).astype(np.float64) for v in (X, G, W)]


def _layer_ref(X, G, W, fmt, c, stats, mode):
    return er.layer_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), X.shape[1],
                                  er.asarray(W, fmt), er.asarray(np.zeros_like(W), fmt),
                                  eps=1e-5, compute=c, order="any", algorithm="two-pass",
                                  stats=stats, accumulate=fmt, rounding=mode)


@pytest.mark.parametrize("fmt,c,stats", CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("offset", [0.0, 3.0])
def test_layer_norm_kernel_covered(fmt, c, stats, offset):
    rng = np.random.default_rng(hash((fmt, stats, offset)) % 2**32)
    rnd = random.Random(1)
    modes = [er.Rounding.NEAREST_EVEN] + ([er.Rounding.TOWARD_POSITIVE,
                                           er.Rounding.TOWARD_ZERO] if fmt == "float32" else [])
    for mode in modes:
        for _ in range(3):
            X, G, W = _data(fmt, rng, 6, 16, offset)
            ref = _layer_ref(X, G, W, fmt, c, stats, mode)
            dx, dg, db = _layer_kernel(X, G, W, 1e-5, fmt, c, stats, fmt, rnd, mode)
            for name, got in (("grad_x", dx), ("grad_weight", dg), ("grad_bias", db)):
                cov = getattr(ref, name).covers(er.asarray(got, fmt))
                assert cov.all(), f"{name} {mode}: {cov.summary()}"


@pytest.mark.parametrize("fmt,c", [("bfloat16", "float32"), ("float16", "float32"),
                                   ("float32", "float32"), ("float64", "float64")])
def test_rms_norm_autograd_covered(fmt, c):
    rng = np.random.default_rng(hash(fmt) % 2**32)
    rnd = random.Random(2)
    for mode in (er.Rounding.NEAREST_EVEN, er.Rounding.TOWARD_NEGATIVE):
        for _ in range(3):
            X, G, W = _data(fmt, rng, 6, 16, 0.0)
            ref = er.rms_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), 16,
                                       er.asarray(W, fmt), eps=1e-6, compute=c, order="any",
                                       rounding=mode)
            dx, dw = _rms_autograd(X, G, W, 1e-6, fmt, c, rnd, mode)
            for name, got in (("grad_x", dx), ("grad_weight", dw)):
                cov = getattr(ref, name).covers(er.asarray(got, fmt))
                assert cov.all(), f"{name} {mode}: {cov.summary()}"


def _caught(make, ref_of, tries=4):
    for k in range(tries):
        got, ref = make(k), ref_of(k)
        if not ref.covers(got).all():
            return True
    return False


@pytest.mark.parametrize("wrong", ["ds in bfloat16", "no mean(gh xhat)"])
def test_layer_norm_wrong_kernels_caught(wrong):
    fmt, c = "bfloat16", "float32"
    rng = np.random.default_rng(5)
    rnd = random.Random(5)
    data = [_data(fmt, rng, 4, 64, 3.0) for _ in range(4)]

    def make(k):
        X, G, W = data[k]
        return er.asarray(_layer_kernel(X, G, W, 1e-5, fmt, c, fmt, fmt, rnd,
                                        er.Rounding.NEAREST_EVEN, wrong)[0], fmt)

    def ref_of(k):
        X, G, W = data[k]
        return _layer_ref(X, G, W, fmt, c, fmt, er.Rounding.NEAREST_EVEN).grad_x

    assert _caught(make, ref_of), wrong


def test_rms_norm_wrong_autograd_caught():
    fmt, c = "float32", "float32"
    rng = np.random.default_rng(6)
    rnd = random.Random(6)
    X, G, W = _data(fmt, rng, 4, 16, 0.0)
    dx, _ = _rms_autograd(X, G, W, 1e-6, fmt, c, rnd, er.Rounding.NEAREST_EVEN,
                          "no r**3 term")
    ref = er.rms_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), 16, er.asarray(W, fmt),
                               eps=1e-6, compute=c, order="any")
    assert not ref.grad_x.covers(er.asarray(dx, fmt)).all()


def test_weight_gradient_summed_in_bfloat16_without_buffers_is_caught():
    """A model declared with float32 buffers does not cover bfloat16 buffers over many rows
    (PyTorch's real kernel accumulates in x's format: the equivalent declares it)."""
    fmt, c = "bfloat16", "float32"
    rng = np.random.default_rng(8)
    rnd = random.Random(8)
    X, _, W = _data(fmt, rng, 64, 4, 0.0)
    G = np.full(X.shape, 1 + 2.0**-5)  # past 16, every addition in bfloat16 drops the 2**-5
    _, _, db = _layer_kernel(X, G, W, 1e-5, fmt, c, fmt, fmt, rnd, er.Rounding.NEAREST_EVEN,
                             split=False)
    declared = er.layer_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), 4,
                                      er.asarray(W, fmt), er.asarray(np.zeros(4), fmt),
                                      compute=c, order="any", algorithm="two-pass",
                                      stats=fmt, accumulate="float32")
    honest = er.layer_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), 4,
                                    er.asarray(W, fmt), er.asarray(np.zeros(4), fmt),
                                    compute=c, order="any", algorithm="two-pass",
                                    stats=fmt, accumulate=fmt)
    assert honest.grad_bias.covers(er.asarray(db, fmt)).all()
    assert not declared.grad_bias.covers(er.asarray(db, fmt)).all()


def _group_kernel(X, G, W, groups, eps, fmt, cname, sname, rnd, mode, wrong=None):
    """PyTorch's group-norm backward kernel, simulated on ``(Nb, C, P)`` data: ``(dx,
    dgamma, dbeta)`` (``ComputeInternalGradients``, ``GroupNormInputBackward``,
    ``GammaBackward``, ``BetaBackward``)."""
    c, T, S = _ctx(cname, mode), _ctx(fmt, mode), _ctx(sname, mode)
    Nb, C, P = X.shape
    D = C // groups
    xs = [[[_mp(v) for v in ch] for ch in smp] for smp in X]
    gs = [[[_mp(v) for v in ch] for ch in smp] for smp in G]
    ws = [_mp(v) for v in W]
    ds = [[_tree_sum(c, [c.mul(g, x) for g, x in zip(gs[s][ch], xs[s][ch], strict=True)], rnd)
           for ch in range(C)] for s in range(Nb)]
    db = [[_tree_sum(c, gs[s][ch], rnd) for ch in range(C)] for s in range(Nb)]
    scale = c.div(1, D * P)
    dx = np.empty(X.shape)
    stats = {}
    for s in range(Nb):
        for g in range(groups):
            chans = range(g * D, (g + 1) * D)
            m, a = _stats([x for ch in chans for x in xs[s][ch]], c, rnd, eps, True)
            m, a = S.plus(m), S.plus(a)
            stats[s, g] = m, a
            dsv = _tree_sum(c, [c.mul(ds[s][ch], ws[ch]) for ch in chans], rnd)
            dbv = _tree_sum(c, [c.mul(db[s][ch], ws[ch]) for ch in chans], rnd)
            t = c.fms(dbv, m, dsv) if rnd.random() < 0.5 else c.sub(c.mul(dbv, m), dsv)
            c2 = c.mul(c.mul(c.mul(c.mul(t, a), a), a), scale)
            if wrong == "no c2":
                c2 = gmpy2.mpfr(0)
            c3 = _maybe_fma(c, -c2, m, -c.mul(c.mul(dbv, a), scale), rnd)
            for ch in chans:
                c1 = c.mul(a, ws[ch])
                for k in range(P):
                    s1 = _maybe_fma(c, c2, xs[s][ch][k], c.mul(c1, gs[s][ch][k]), rnd)
                    dx[s, ch, k] = float(T.plus(c.add(s1, c3)))
    dg, dbeta = [], []
    for ch in range(C):
        terms = []
        for s in range(Nb):
            m, a = stats[s, ch // D]
            if wrong == "dgamma without db m":
                terms.append(c.mul(ds[s][ch], a))
                continue
            h = c.fms(db[s][ch], m, ds[s][ch]) if rnd.random() < 0.5 else \
                c.sub(c.mul(db[s][ch], m), ds[s][ch])
            terms.append(c.mul(-h, a))
        dg.append(float(T.plus(_tree_sum(c, terms, rnd))))
        dbeta.append(float(T.plus(_tree_sum(c, [db[s][ch] for s in range(Nb)], rnd))))
    return dx, np.array(dg), np.array(dbeta)


def _group_ref(X, G, W, groups, fmt, c, stats, mode):
    return er.group_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), groups,
                                  er.asarray(W, fmt), er.asarray(np.zeros_like(W), fmt),
                                  eps=1e-5, compute=c, order="any", algorithm="two-pass",
                                  stats=stats, rounding=mode)


def _group_data(fmt, rng, offset):
    X = offset + rng.standard_normal((3, 4, 5)) * np.exp2(rng.integers(-2, 2, (3, 4, 5)))
    G = rng.standard_normal((3, 4, 5))
    W = rng.uniform(0.5, 2, 4)
    return [np.asarray(er.asarray(v, fmt).numpy()).astype(np.float64) for v in (X, G, W)]


@pytest.mark.parametrize("fmt,c,stats", CASES[:4], ids=lambda v: str(v))
@pytest.mark.parametrize("offset", [0.0, 3.0])
def test_group_norm_kernel_covered(fmt, c, stats, offset):
    rng = np.random.default_rng(hash((fmt, offset, "group")) % 2**32)
    rnd = random.Random(3)
    for mode in (er.Rounding.NEAREST_EVEN, er.Rounding.TOWARD_NEGATIVE):
        for _ in range(2):
            X, G, W = _group_data(fmt, rng, offset)
            ref = _group_ref(X, G, W, 2, fmt, c, stats, mode)
            dx, dg, db = _group_kernel(X, G, W, 2, 1e-5, fmt, c, stats, rnd, mode)
            for name, got in (("grad_x", dx), ("grad_weight", dg), ("grad_bias", db)):
                cov = getattr(ref, name).covers(er.asarray(got, fmt))
                assert cov.all(), f"{name} {mode}: {cov.summary()}"


@pytest.mark.parametrize("wrong,name", [("no c2", "grad_x"),
                                        ("dgamma without db m", "grad_weight")])
def test_group_norm_wrong_kernels_caught(wrong, name):
    fmt, c = "float32", "float32"
    rng = np.random.default_rng(9)
    rnd = random.Random(9)
    X, G, W = _group_data(fmt, rng, 3.0)
    got = _group_kernel(X, G, W, 2, 1e-5, fmt, c, c, rnd, er.Rounding.NEAREST_EVEN, wrong)
    ref = _group_ref(X, G, W, 2, fmt, c, c, er.Rounding.NEAREST_EVEN)
    got = got[0] if name == "grad_x" else got[1]
    assert not getattr(ref, name).covers(er.asarray(got, fmt)).all()
