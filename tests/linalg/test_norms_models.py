"""The normalizations' tolerance models are sound and they catch: implementations simulated
step by step (numpy's IEEE float32 arithmetic for round-to-nearest, exact Fractions for the
FMAs, MPFR through ``mpfr_oracle.Rounder`` for the directed modes) inside each model are
covered: two-pass (sequential, pairwise) and Welford/Chan moments, bfloat16 data with float32
accumulation, ``1 / sqrt`` and an rsqrt within its ulps, the centered and the scale-shift
forms, FMA or not, intermediates stored in bfloat16. Implementations outside are not: a
bfloat16 RMSNorm that accumulates its sum of squares in bfloat16, the variance without the
mean subtracted (``E[x**2] - E[x]**2``), eps added after the square root."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from mpfr_oracle import FMTS, Rounder

import exactref as er

F32, F64, BF16 = np.float32, np.float64, ml_dtypes.bfloat16


# --------------------------------------------------------------------------- simulations
def seq_sum(x, acc=F32):
    s = np.zeros(x.shape[0], acc)
    for j in range(x.shape[1]):
        s = (s.astype(F64) + x[:, j].astype(F64)).astype(acc) if acc is BF16 else \
            (s + x[:, j].astype(acc)).astype(acc)
    return s


def pairwise_sum(x, acc=F32):
    x = x.astype(acc)
    while x.shape[1] > 1:
        if x.shape[1] % 2:
            x = np.concatenate([x, np.zeros((x.shape[0], 1), acc)], axis=1)
        x = (x[:, 0::2] + x[:, 1::2]).astype(acc)
    return x[:, 0]


def moments(x, alg):
    """``(mean, population variance)`` of each row in float32 by ``alg``."""
    x = x.astype(F32)
    m, n = x.shape
    if alg in ("two-pass", "pairwise"):
        summer = seq_sum if alg == "two-pass" else pairwise_sum
        mean = (summer(x) / F32(n)).astype(F32)
        d = (x - mean[:, None]).astype(F32)
        return mean, (summer((d * d).astype(F32)) / F32(n)).astype(F32)
    if alg == "textbook":  # E[x**2] - E[x]**2: outside every model
        mean = (seq_sum(x) / F32(n)).astype(F32)
        q = (seq_sum((x * x).astype(F32)) / F32(n)).astype(F32)
        return mean, np.maximum((q - mean * mean).astype(F32), F32(0))
    parts = 1 if alg == "welford" else 4
    edges = np.linspace(0, n, parts + 1).astype(int)
    stats = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        mean = np.zeros(m, F32)
        m2 = np.zeros(m, F32)
        for k, j in enumerate(range(a, b), 1):
            delta = (x[:, j] - mean).astype(F32)
            mean = (mean + (delta / F32(k)).astype(F32)).astype(F32)
            m2 = (m2 + (delta * (x[:, j] - mean)).astype(F32)).astype(F32)
        stats.append((mean, m2, F32(b - a)))
    mean, m2, cnt = stats[0]
    for mb, m2b, nb in stats[1:]:  # Chan's merge, as torch's WelfordOps.combine
        delta = (mb - mean).astype(F32)
        tot = F32(cnt + nb)
        frac = F32(nb / tot)
        mean = (mean + (delta * frac).astype(F32)).astype(F32)
        m2 = (m2 + m2b + (((delta * delta).astype(F32) * cnt).astype(F32) * frac)).astype(F32)
        cnt = tot
    return mean, (m2 / F32(n)).astype(F32)


def _fma(a, b, c):
    """``a * b + c`` rounded once into float32 (exact Fractions)."""
    a, b, c = np.broadcast_arrays(a, b, c)
    out = [float(np.float32(_nearest32(Fraction(float(p)) * Fraction(float(q))
                                       + Fraction(float(r)))))
           for p, q, r in zip(a.ravel(), b.ravel(), c.ravel(), strict=True)]
    return np.array(out, F32).reshape(a.shape)


_R32 = Rounder(FMTS["float32"], er.Rounding.NEAREST_EVEN)


def _nearest32(v: Fraction) -> float:
    return _R32(v)


def rstd(v, eps, rsqrt_ulps, rng, after=False):
    if after:  # eps added after the square root: outside the model
        return (F32(1) / (np.sqrt(v) + F32(eps)).astype(F32)).astype(F32)
    ve = (v + F32(eps)).astype(F32)
    if rsqrt_ulps is None:
        return (F32(1) / np.sqrt(ve)).astype(F32)
    r = (1 / np.sqrt(ve.astype(F64))).astype(F32)  # then nudged within the ulps
    steps = rng.integers(-rsqrt_ulps, rsqrt_ulps + 1, r.shape)
    for _ in range(rsqrt_ulps):
        r = np.where(steps > 0, np.nextafter(r, F32(np.inf)), r)
        r = np.where(steps < 0, np.nextafter(r, F32(-np.inf)), r)
        steps = steps - np.sign(steps)
    return r.astype(F32)


def layer(x, w, b, eps, rng, alg="two-pass", form="centered", rsqrt_ulps=None, fma=False,
          out=F32, fused=True, after=False):
    """A float32 layer norm of ``x`` (float32 or bfloat16 data), stored into ``out``."""
    x32 = x.astype(F32)
    mean, var = moments(x32, alg)
    r = rstd(var, eps, rsqrt_ulps, rng, after)[:, None]
    if form == "centered":
        nrm = ((x32 - mean[:, None]).astype(F32) * r).astype(F32)
    else:  # PyTorch's CPU group norm: s = r * w, t = b - m * s, y = x * s + t
        sc = r if w is None else (r * w.astype(F32)).astype(F32)
        bb = np.zeros(x.shape[1], F32) if b is None else b.astype(F32)
        m = mean[:, None]
        t = _fma(-m, sc, bb) if fma else ((-m * sc).astype(F32) + bb).astype(F32)
        y = _fma(x32, sc, t) if fma else ((x32 * sc).astype(F32) + t).astype(F32)
        return y.astype(out)
    return _affine(nrm, w, b, fma, out, fused)


def _affine(nrm, w, b, fma, out, fused):
    if not fused:
        nrm = nrm.astype(out).astype(F32)
    if w is None:
        y = nrm if b is None else (nrm + b.astype(F32)).astype(F32)
    elif b is None:
        y = (nrm * w.astype(F32)).astype(F32)
    elif fma and fused:
        y = _fma(nrm, w.astype(F32), b.astype(F32))
    else:
        p = (nrm * w.astype(F32)).astype(F32)
        if not fused:
            p = p.astype(out).astype(F32)
        y = (p + b.astype(F32)).astype(F32)
    return y.astype(out)


def rms(x, w, eps, rng, acc=F32, rsqrt_ulps=None, out=F32, fused=True):
    x32 = x.astype(F32)
    n = x.shape[1]
    q = seq_sum((x32 * x32).astype(F32).astype(acc), acc).astype(F32)
    ms = (q / F32(n)).astype(F32)
    r = rstd(ms, eps, rsqrt_ulps, rng)[:, None]
    nrm = (x32 * r).astype(F32)
    return _affine(nrm, w, None, False, out, fused)


def _data(kind, rng, m=6, n=128, fmt=F32):
    x = rng.standard_normal((m, n))
    if kind == "offset":
        x = 100 + 0.01 * x
    elif kind == "wide":
        x = x * np.exp2(rng.integers(-10, 10, (m, n)))
    return x.astype(fmt)


def _check(ref, y, label, expect=True):
    cov = ref.covers(y)
    assert cov.all() == expect, (label, cov)


KINDS = ["normal", "offset", "wide"]


# ------------------------------------------------------------------------------- covered
@pytest.mark.parametrize("kind", KINDS)
def test_layer_norm_float32_implementations_covered(kind):
    rng = np.random.default_rng(1)
    x = _data(kind, rng)
    n = x.shape[1]
    w = rng.uniform(0.5, 1.5, n).astype(F32)
    b = rng.standard_normal(n).astype(F32)
    for alg, decl in (("two-pass", "two-pass"), ("pairwise", "two-pass"),
                      ("welford", "welford"), ("chan", "chan")):
        for form in ("centered", "scale-shift"):
            ref = er.layer_norm(x, n, w, b, algorithm=decl, form=form)
            for fma in (False, True):
                _check(ref, layer(x, w, b, 1e-5, rng, alg, form, fma=fma),
                       (alg, form, fma))
    ref = er.layer_norm(x, n, w, b, algorithm="two-pass", rsqrt=2, form="centered")
    for _ in range(3):
        _check(ref, layer(x, w, b, 1e-5, rng, rsqrt_ulps=2), "rsqrt 2 ulps")


@pytest.mark.parametrize("kind", ["normal", "offset"])
def test_bfloat16_with_float32_accumulation_covered(kind):
    rng = np.random.default_rng(2)
    x = _data(kind, rng, fmt=BF16)
    n = x.shape[1]
    w = rng.uniform(0.5, 1.5, n).astype(BF16)
    b = rng.standard_normal(n).astype(BF16)
    ref = er.layer_norm(x, n, w, b, algorithm="two-pass")
    _check(ref, layer(x, w, b, 1e-5, rng, out=BF16), "bf16 layer")
    unf = er.layer_norm(x, n, w, b, algorithm="two-pass", fused=False, form="centered")
    _check(unf, layer(x, w, b, 1e-5, rng, out=BF16, fused=False), "bf16 unfused")
    r = er.rms_norm(x, n, w, eps=1e-6, order="sequential")
    _check(r, rms(x, w, 1e-6, rng, out=BF16), "bf16 rms")
    r2 = er.rms_norm(x, n, w, eps=1e-6, fused=False)
    _check(r2, rms(x, w, 1e-6, rng, out=BF16, fused=False), "bf16 rms unfused")
    _check(er.rms_norm(x, n, w, eps=1e-6, rsqrt=1),
           rms(x, w, 1e-6, rng, rsqrt_ulps=1, out=BF16), "bf16 rms rsqrt")


def test_group_norm_simulated_covered():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 6, 5)) + 3).astype(F32)
    w = rng.uniform(0.5, 1.5, 6).astype(F32)
    b = rng.standard_normal(6).astype(F32)
    rows = x.reshape(2 * 3, 10)
    ww = np.tile(np.repeat(w.reshape(3, 2), 5, axis=1), (2, 1))
    bb = np.tile(np.repeat(b.reshape(3, 2), 5, axis=1), (2, 1))
    mean, var = moments(rows, "welford")
    r = rstd(var, 1e-5, None, rng)[:, None]
    nrm = ((rows - mean[:, None]).astype(F32) * r).astype(F32)
    y = ((nrm * ww).astype(F32) + bb).astype(F32).reshape(x.shape)
    _check(er.group_norm(x, 3, w, b, algorithm="welford"), y, "group welford")


@pytest.mark.parametrize("mode", [m for m in er.Rounding if m is not er.Rounding.NEAREST_EVEN])
def test_directed_modes_simulated_with_mpfr(mode):
    """A two-pass float32 layer norm with every step rounded in ``mode`` (MPFR)."""
    rng = np.random.default_rng(4)
    x = _data("offset", rng, m=2, n=12)
    w = rng.uniform(0.5, 1.5, 12).astype(F32)
    b = rng.standard_normal(12).astype(F32)
    rd = Rounder(FMTS["float32"], mode)

    def sqrt_r(v):
        f = Fraction(v)
        k = 120
        s = math.isqrt(f.numerator * 4**k // f.denominator)
        if s * s * f.denominator == f.numerator * 4**k:
            return rd(Fraction(s, 2**k))
        lo, hi = rd(Fraction(s, 2**k)), rd(Fraction(s + 1, 2**k))
        assert lo == hi
        return lo

    out = np.zeros(x.shape)
    for i, row in enumerate(x.astype(float).tolist()):
        s = 0.0
        for v in row:
            s = rd.add(s, v)
        m = rd(Fraction(s) / 12)
        q = 0.0
        for v in row:
            d = rd.add(v, -m)
            q = rd.add(q, rd.mul(d, d))
        var = rd(Fraction(q) / 12)
        r = rd(1 / Fraction(sqrt_r(rd.add(var, rd(Fraction(1e-5))))))
        for j, v in enumerate(row):
            nrm = rd.mul(rd.add(v, -m), r)
            out[i, j] = rd.add(rd.mul(nrm, float(w[j])), float(b[j]))
    ref = er.layer_norm(x, 12, w, b, algorithm="two-pass", form="centered", rounding=mode)
    _check(ref, out.astype(F32), mode)


# --------------------------------------------------------------------------------- caught
def test_bfloat16_rms_norm_accumulated_in_bfloat16_caught():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 4096)).astype(BF16)
    w = np.ones(4096, BF16)
    ref = er.rms_norm(x, 4096, w, eps=1e-6)  # declared: float32 accumulation (torch's opmath)
    _check(ref, rms(x, w, 1e-6, rng, out=BF16), "bf16 rms, float32 sum")
    _check(ref, rms(x, w, 1e-6, rng, acc=BF16, out=BF16), "bf16 rms, bf16 sum", expect=False)


def test_variance_without_the_mean_subtracted_caught():
    rng = np.random.default_rng(6)
    x = _data("offset", rng, n=256)
    ref = er.layer_norm(x, 256, algorithm="two-pass", order="pairwise", form="centered")
    _check(ref, layer(x, None, None, 1e-5, rng, "pairwise"), "two-pass")
    _check(ref, layer(x, None, None, 1e-5, rng, "textbook"), "textbook", expect=False)


def test_eps_after_the_square_root_caught():
    rng = np.random.default_rng(7)
    x = (0.01 * rng.standard_normal((4, 64))).astype(F32)  # var ~ 1e-4 beside eps 1e-5
    ref = er.layer_norm(x, 64)  # the default model: two-pass, the libraries' order
    _check(ref, layer(x, None, None, 1e-5, rng), "inside")
    _check(ref, layer(x, None, None, 1e-5, rng, after=True), "eps after sqrt", expect=False)


def _add_moments(a, b):
    """PyTorch's ``AddMoments`` (moments_utils.h) in float32: ``c1 = n_a / n``, ``c2 = 1 -
    c1``, ``m = c1 m_a + c2 m_b``, ``M2 = M2_a + M2_b + delta**2 c1 c2 n`` (a convex
    combination, not Chan's ``m_a + delta n_b / n``)."""
    (na, ma, m2a), (nb, mb, m2b) = a, b
    n = na + nb
    c1 = F32(na) / F32(n)
    c2 = (F32(1) - c1).astype(F32)
    delta = (mb - ma).astype(F32)
    mean = ((c1 * ma).astype(F32) + (c2 * mb).astype(F32)).astype(F32)
    t = ((((delta * delta).astype(F32) * c1).astype(F32) * c2).astype(F32) * F32(n)).astype(F32)
    m2 = (m2a + (m2b + t).astype(F32)).astype(F32)
    return n, mean, m2


def rowwise_moments(x, lanes=8, chunk=16):
    """A model of PyTorch's CPU ``RowwiseMoments``: Welford per SIMD lane over chunks of
    ``lanes * chunk`` elements, the chunks' states merged in a cascade by AddMoments, then the
    lanes merged by AddMoments; population variance ``M2 / n``."""
    x = x.astype(F32)
    m, n = x.shape
    block = lanes * chunk
    states = []
    for b0 in range(0, n, block):
        part = x[:, b0:b0 + block]
        lane_states = []
        for j in range(min(lanes, part.shape[1])):
            col = part[:, j::lanes]
            mean = np.zeros(m, F32)
            m2 = np.zeros(m, F32)
            for k in range(col.shape[1]):
                delta = (col[:, k] - mean).astype(F32)
                mean = (mean + (delta * F32(1 / (k + 1))).astype(F32)).astype(F32)
                m2 = (m2 + (delta * (col[:, k] - mean)).astype(F32)).astype(F32)
            lane_states.append((col.shape[1], mean, m2))
        states.append(lane_states)
    while len(states) > 1:  # the cascade: neighbouring chunks merged lane by lane
        nxt = []
        for i in range(0, len(states) - 1, 2):
            a, b = states[i], states[i + 1]
            nxt.append([_add_moments(p, q) if j < len(b) else p for j, (p, q) in
                        enumerate(zip(a, b + a[len(b):], strict=True))])
        if len(states) % 2:
            nxt.append(states[-1])
        states = nxt
    total = states[0][0]
    for s in states[0][1:]:
        total = _add_moments(total, s)
    return total[1], (total[2] / F32(n)).astype(F32)


@pytest.mark.parametrize("kind", ["normal", "offset"])
def test_pytorch_rowwise_moments_covered_by_chan(kind):
    """PyTorch's layer norm moments (lanes of Welford merged by its AddMoments) inside the
    ``algorithm="chan"`` model its equivalent declares."""
    rng = np.random.default_rng(8)
    x = _data(kind, rng, m=4, n=1024)
    mean, var = rowwise_moments(x)
    r = rstd(var, 1e-5, None, rng)[:, None]
    y = ((x.astype(F32) - mean[:, None]).astype(F32) * r).astype(F32)
    _check(er.layer_norm(x, 1024, algorithm="chan", form="centered"), y, kind)


def test_add_moments_random_trees_covered_by_chan():
    """Single-element states merged by PyTorch's AddMoments in random trees (a large part and
    one element: ``c2 = 1 - c1`` holds few correct digits) inside ``algorithm="chan"``."""
    rng = np.random.default_rng(10)
    x = _data("offset", rng, m=3, n=200)
    states = [(1, x[:, j].astype(F32), np.zeros(3, F32)) for j in range(200)]
    while len(states) > 1:
        i, j = sorted(rng.choice(len(states), 2, replace=False).tolist())
        b, a = states.pop(j), states.pop(i)
        states.append(_add_moments(a, b) if rng.random() < 0.5 else _add_moments(b, a))
    mean, var = states[0][1], (states[0][2] / F32(200)).astype(F32)
    r = rstd(var, 1e-5, None, rng)[:, None]
    y = ((x.astype(F32) - mean[:, None]).astype(F32) * r).astype(F32)
    _check(er.layer_norm(x, 200, algorithm="chan", form="centered"), y, "AddMoments tree")


@pytest.mark.slow
def test_random_simulations_sweep():
    """Random row lengths, data, weights, algorithms, forms, FMA and rsqrt ulps: every
    simulated kernel inside the declared model."""
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        n = int(rng.integers(1, 300))
        kind = ["normal", "offset", "wide"][seed % 3]
        fmt = BF16 if seed % 4 == 0 else F32
        x = _data(kind, rng, m=3, n=n, fmt=fmt)
        w = rng.uniform(-2, 2, n).astype(fmt) if seed % 2 else None
        b = rng.standard_normal(n).astype(fmt) if seed % 5 else None
        alg = ["two-pass", "pairwise", "welford", "chan"][seed % 4]
        decl = {"pairwise": "two-pass"}.get(alg, alg)
        form = "scale-shift" if seed % 3 == 1 else "centered"
        fma = bool(seed % 2)
        ulps = [None, 1, 3][seed % 3]
        eps = float(rng.choice([1e-5, 1e-2, 1e-9]))
        y = layer(x, w, b, eps, rng, alg, form, rsqrt_ulps=ulps, fma=fma, out=fmt)
        ref = er.layer_norm(x, n, w, b, eps=eps, algorithm=decl, form=form, rsqrt=ulps)
        _check(ref, y, (seed, n, kind, alg, form, fma, ulps, eps))
        yr = rms(x, w, eps, rng, rsqrt_ulps=ulps, out=fmt)
        _check(er.rms_norm(x, n, w, eps=eps, rsqrt=ulps), yr, ("rms", seed))
