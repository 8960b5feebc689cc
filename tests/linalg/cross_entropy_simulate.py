"""cross_entropy implementations simulated step by step with MPFR rounding (gmpy2), independent
of exactref: every operation rounded to nearest in its format (float64, float32, float16,
bfloat16 as MPFR contexts with their precision, exponent range and subnormals), the
exponential and logarithm correctly rounded or moved by up to ``k`` ulps at random.

``Impl`` says how: the compute format of log_softmax, whether the max is subtracted, the
format log_softmax is stored in, the format and order of the sums over the samples (and over
the classes), and the output format. PyTorch's CPU kernel for bfloat16 is
``Impl(compute="float32", stored="bfloat16", lsm_steps=True, nll_acc="bfloat16",
nll_order="cascade")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import gmpy2
import numpy as np

_FMT = {"float64": (53, -1073, 1024), "float32": (24, -148, 128),
        "bfloat16": (8, -132, 128), "float16": (11, -23, 16)}


_MODES = {"nearest_even": gmpy2.RoundToNearest, "toward_positive": gmpy2.RoundUp,
          "toward_negative": gmpy2.RoundDown, "toward_zero": gmpy2.RoundToZero}
#: every operation's rounding (a whole implementation run in one IEEE mode)
MODE = ["nearest_even"]


def ctx(fmt):
    p, emin, emax = _FMT[fmt]
    return gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True,
                         round=_MODES[MODE[0]])


def rnd(v, fmt):
    return ctx(fmt).plus(v)


@dataclass
class Impl:
    compute: str = "float32"
    stored: str | None = None        # log_softmax (and products) stored in; None: compute
    lsm_steps: bool = False          # the sum and its log stored too (torch's halves, last dim)
    nll_acc: str | None = None       # the nll's sum over samples accumulates in (None: compute)
    nll_order: str = "sequential"    # "sequential", "pairwise", "shuffled", "cascade"
    order: str = "sequential"        # the other sums
    max_sub: bool = True
    ulps: float = 0.0                # exp/log moved by up to this many ulps at random
    out: str = "float32"


def _ulp_move(v, fmt, k, rng):
    if not k or not gmpy2.is_finite(v) or v == 0 or v == 1:
        return v
    c = ctx(fmt)
    steps = int(rng.integers(-int(k), int(k) + 1))
    for _ in range(abs(steps)):
        v = c.next_above(v) if steps > 0 else c.next_below(v)
    return v


def total(vals, fmt, order, rng):
    """The sum of ``vals`` in ``fmt`` (every addition rounded), in ``order``."""
    c = ctx(fmt)
    vals = list(vals)
    if not vals:
        return gmpy2.mpfr(0)
    if order == "shuffled":
        vals = [vals[i] for i in rng.permutation(len(vals))]
        order = "sequential"
    if order == "pairwise":
        while len(vals) > 1:
            nxt = [c.add(vals[i], vals[i + 1]) for i in range(0, len(vals) - 1, 2)]
            if len(vals) % 2:
                nxt.append(vals[-1])
            vals = nxt
        return vals[0]
    if order == "cascade":  # torch's nll_loss: 8 levels, flushed every 16 at each level
        n = len(vals)
        p = max(4, (max(n, 1) - 1).bit_length() // 8)
        mask = (1 << p) - 1
        acc = [gmpy2.mpfr(0)] * 8
        for b, v in enumerate(vals):
            acc[0] = c.add(acc[0], v)
            for j in range(7):
                if b & (mask << (j * p)):
                    break
                acc[j + 1] = c.add(acc[j + 1], acc[j])
                acc[j] = gmpy2.mpfr(0)
        s = gmpy2.mpfr(0)
        for a in acc:
            s = c.add(s, a)
        return s
    s = vals[0]
    for v in vals[1:]:
        s = c.add(s, v)
    return s


def log_softmax(row, im: Impl, rng):
    c = ctx(im.compute)
    h = im.stored or im.compute
    x = [rnd(float(v), im.compute) for v in row]
    m = max(x) if im.max_sub else gmpy2.mpfr(0)
    t = [c.sub(v, m) for v in x]
    e = [_ulp_move(c.exp(v), im.compute, im.ulps, rng) for v in t]
    s = total(e, im.compute, im.order, rng)
    if im.lsm_steps:
        s = rnd(s, h)
    lg = _ulp_move(c.log(s), im.compute, im.ulps, rng)
    if im.lsm_steps:
        lg = rnd(lg, h)
    return [rnd(c.sub(v, lg), h) for v in t]


def cross_entropy(x, y, w=None, reduction="mean", eps=0.0, im: Impl = None, rng=None):
    """Class indices ``y`` (ignore_index -100) for ``(N, C)`` logits ``x``: the simulated
    output(s) as floats."""
    im = im or Impl()
    rng = rng or np.random.default_rng(0)
    N, C = x.shape
    c, h = ctx(im.compute), im.stored or im.compute
    acc = im.nll_acc or im.compute

    def st(v):  # an operation of c, stored in h
        return rnd(v, h)

    lsm = [log_softmax(x[r], im, rng) for r in range(N)]
    wt = [gmpy2.mpfr(1.0 if w is None else float(w[k])) for k in range(C)]
    keep = [r for r in range(N) if y[r] != -100]
    nll = {r: st(c.mul(-lsm[r][y[r]], wt[y[r]])) for r in keep}
    k1, k2 = rnd(1 - eps, im.compute), rnd(eps / C, im.compute)
    smooth = {}
    if eps:
        for r in keep:
            smooth[r] = st(-total([st(c.mul(lsm[r][k], wt[k])) for k in range(C)],
                                  im.compute, im.order, rng))
    if reduction == "none":
        outs = []
        for r in range(N):
            if r not in nll:
                outs.append(0.0)
                continue
            v = nll[r]
            if eps:
                v = st(c.add(st(c.mul(v, k1)), st(c.mul(smooth[r], k2))))
            outs.append(float(rnd(v, im.out)))
        return outs
    ca = ctx(acc)
    s = total([nll[r] for r in keep], acc, im.nll_order, rng)
    if reduction == "mean":
        den = total([wt[y[r]] for r in keep], acc, im.nll_order, rng) if w is not None \
            else rnd(len(keep), acc)
        s = ca.div(s, den)
    if eps:
        sm = st(total([smooth[r] for r in keep], im.compute, im.order, rng))
        if reduction == "mean":
            d2 = st(total([wt[y[r]] for r in keep], im.compute, im.order, rng)) \
                if w is not None else rnd(len(keep), h)
            sm = st(c.div(sm, d2))
        s = st(c.add(st(c.mul(s, k1)), st(c.mul(sm, k2))))
    v = float(rnd(st(s), im.out))
    return v if not math.isnan(v) else math.nan
