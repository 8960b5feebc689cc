"""The backward tolerance model proved by simulation: PyTorch's algorithm (``y * (g - sum(g *
y))`` and ``g - exp(out) * sum(g)`` from the forward output as stored) computed step by step
with MPFR roundings (gmpy2 contexts of each format, subnormals included), in float32 and
float64 and in float32 for bfloat16 and float16; the forward itself simulated (max
subtracted, the exponential within an ulp, the sum, the division) and stored in the output
format, or the exact value rounded once; sums sequential, pairwise and in random order: every
output covered. Implementations outside the model are caught: the sum in bfloat16 where float32
is declared, the formula without its ``y`` factor, a wrong ``y`` (unnormalized, or the log for
log_softmax's ``exp(out)``)."""

from __future__ import annotations

import zlib

import gmpy2
import numpy as np
import pytest

import exactref as er

#: (precision, emin, emax) of gmpy2 contexts that round like each format (subnormalize)
CTX = {"float64": (53, -1073, 1024), "float32": (24, -148, 128),
       "bfloat16": (8, -132, 128), "float16": (11, -23, 16)}


def _ctx(fmt, rnd=gmpy2.RoundToNearest):
    p, emin, emax = CTX[fmt]
    return gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True, round=rnd)


def R(v, fmt):
    """``v`` (a float) rounded to nearest into ``fmt``, as a float."""
    return float(_ctx(fmt).plus(gmpy2.mpfr(v, 60)))


def add(a, b, c):
    """``a + b`` correctly rounded into ``c`` (MPFR rounds exact operands once)."""
    return float(_ctx(c).add(gmpy2.mpfr(a, 60), gmpy2.mpfr(b, 60)))


def mul(a, b, c):
    return float(_ctx(c).mul(gmpy2.mpfr(a, 60), gmpy2.mpfr(b, 60)))


def div(a, b, c):
    return float(_ctx(c).div(gmpy2.mpfr(a, 60), gmpy2.mpfr(b, 60)))


def row_sum(vals, c, order, rng):
    vals = list(vals)
    if order == "random":
        rng.shuffle(vals)
    if order == "pairwise":
        while len(vals) > 1:
            vals = [add(vals[i], vals[i + 1], c) if i + 1 < len(vals) else vals[i]
                    for i in range(0, len(vals), 2)]
        return vals[0] if vals else 0.0
    s = 0.0
    for v in vals:
        s = add(s, v, c)
    return s


def exp_within(t, c, rng):
    """``e**t`` rounded down or up into ``c`` at random: within one ulp."""
    rnd = gmpy2.RoundDown if rng.random() < 0.5 else gmpy2.RoundUp
    return float(_ctx(c, rnd).exp(gmpy2.mpfr(t, 60)))


def forward(op, x, c, out, rng, order):
    """The forward as the model's implementations compute it, stored into ``out``."""
    m = max(x)
    t = [add(v, -m, c) for v in x]
    e = [exp_within(v, c, rng) if v != 0 else 1.0 for v in t]
    s = row_sum(e, c, order, rng)
    if op == "softmax":
        return [R(div(v, s, c), out) for v in e]
    ls = float(_ctx(c, gmpy2.RoundDown if rng.random() < 0.5 else gmpy2.RoundUp).log(
        gmpy2.mpfr(s, 60)))
    return [R(add(v, -ls, c), out) for v in t]


def backward(op, y, g, c, out, rng, order, sum_fmt=None, no_y=False, log_for_exp=False):
    """PyTorch's backward formula from the stored ``y`` in ``c``, stored into ``out``."""
    sf = sum_fmt or c
    if op == "softmax":
        s = row_sum([mul(a, b, sf) for a, b in zip(g, y, strict=True)], sf, order, rng)
        d = [add(a, -s, c) for a in g]
        return [R(v if no_y else mul(b, v, c), out) for v, b in zip(d, y, strict=True)]
    s = row_sum(g, sf, order, rng)
    E = [b if log_for_exp else (exp_within(b, c, rng) if b != 0 else 1.0) for b in y]
    return [R(add(a, -mul(e, s, c), c), out) for a, e in zip(g, E, strict=True)]


def _inputs(fmt, K, rng, n=3):
    X = er.asarray(rng.standard_normal((n, K)) * 3, fmt).numpy().astype(np.float64)
    G = er.asarray(rng.standard_normal((n, K)), fmt).numpy().astype(np.float64)
    X[0, 1] = -np.inf
    G[1] = er.asarray(np.abs(G[1]) + 1, fmt).numpy()
    return X, G


CASES = [("float32", "float32"), ("float64", "float64"), ("bfloat16", "float32"),
         ("float16", "float32")]


@pytest.mark.parametrize("order", ["sequential", "pairwise", "random"])
@pytest.mark.parametrize("fmt,c", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_modelled_implementations_covered(op, fmt, c, order):
    rng = np.random.default_rng(zlib.crc32(f"{op}{fmt}{order}".encode()))
    X, G = _inputs(fmt, 48, rng, n=4)
    declared = "pairwise" if order == "pairwise" else "any"
    res = getattr(er, op).backward(er.asarray(X, fmt), er.asarray(G, fmt), dim=1,
                                   accuracy=1.0, order=declared)
    exact_y = getattr(er, op)(er.asarray(X, fmt), dim=1).rounded.numpy().astype(np.float64)
    rounded = getattr(er, op).backward(er.asarray(X, fmt), er.asarray(G, fmt), dim=1,
                                       accuracy=1.0, order=declared, forward="rounded")
    for trial in range(3):
        ys = [forward(op, list(x), c, fmt, rng, order) for x in X.tolist()]
        got = [backward(op, y, list(g), c, fmt, rng, order)
               for y, g in zip(ys, G.tolist(), strict=True)]
        cov = res.covers(er.asarray(np.array(got), fmt))
        assert cov.all(), (op, fmt, order, trial, cov.summary())
        got_r = [backward(op, list(y), list(g), c, fmt, rng, order)
                 for y, g in zip(exact_y.tolist(), G.tolist(), strict=True)]
        cov = rounded.covers(er.asarray(np.array(got_r), fmt))
        assert cov.all(), (op, fmt, order, "rounded y", cov.summary())


def _not_covered(res, got, fmt):
    return not res.covers(er.asarray(np.array(got), fmt)).all()


def test_bfloat16_sum_where_float32_declared_is_caught():
    rng = np.random.default_rng(11)
    K = 256
    X = er.asarray(rng.standard_normal((1, K)) * 0.1, "bfloat16").numpy().astype(np.float64)
    G = er.asarray(rng.uniform(1, 2, (1, K)), "bfloat16").numpy().astype(np.float64)
    for op in ("softmax", "log_softmax"):
        res = er.__dict__[op].backward(er.asarray(X, "bfloat16"), er.asarray(G, "bfloat16"),
                                       dim=1, accuracy=1.0)
        y = forward(op, list(X[0]), "float32", "bfloat16", rng, "sequential")
        bad = backward(op, y, list(G[0]), "float32", "bfloat16", rng, "sequential",
                       sum_fmt="bfloat16")
        assert _not_covered(res, [bad], "bfloat16"), op
        good = backward(op, y, list(G[0]), "float32", "bfloat16", rng, "sequential")
        assert not _not_covered(res, [good], "bfloat16"), op
        # declared, the bfloat16 accumulator is covered
        decl = er.__dict__[op].backward(er.asarray(X, "bfloat16"), er.asarray(G, "bfloat16"),
                                        dim=1, accuracy=1.0, compute="bfloat16")
        assert not _not_covered(decl, [bad], "bfloat16"), op


@pytest.mark.parametrize("fmt,c", CASES[:3], ids=[c[0] for c in CASES[:3]])
def test_wrong_formulas_are_caught(fmt, c):
    rng = np.random.default_rng(zlib.crc32(fmt.encode()))
    X, G = _inputs(fmt, 16, rng, n=2)
    xa, ga = er.asarray(X, fmt), er.asarray(G, fmt)
    sm = er.softmax.backward(xa, ga, dim=1, accuracy=1.0)
    ls = er.log_softmax.backward(xa, ga, dim=1, accuracy=1.0)
    ys = [forward("softmax", list(x), c, fmt, rng, "sequential") for x in X.tolist()]
    outs = [forward("log_softmax", list(x), c, fmt, rng, "sequential") for x in X.tolist()]
    rows = list(zip(ys, outs, G.tolist(), strict=True))
    # softmax without the y factor: g - sum(g y)
    assert _not_covered(sm, [backward("softmax", y, g, c, fmt, rng, "sequential", no_y=True)
                             for y, _, g in rows], fmt)
    # a wrong y: the exponentials not normalized (e**(x - m))
    unnorm = [[R(np.exp(v - max(x)), fmt) for v in x] for x in X.tolist()]
    assert _not_covered(sm, [backward("softmax", u, g, c, fmt, rng, "sequential")
                             for u, (_, _, g) in zip(unnorm, rows, strict=True)], fmt)
    # log_softmax with out for exp(out)
    assert _not_covered(ls, [backward("log_softmax", o, g, c, fmt, rng, "sequential",
                                      log_for_exp=True) for _, o, g in rows], fmt)
    # the rows swapped: another row's y
    assert _not_covered(sm, [backward("softmax", ys[1 - i], rows[i][2], c, fmt, rng,
                                      "sequential") for i in range(2)], fmt)
