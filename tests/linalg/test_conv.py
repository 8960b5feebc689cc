"""er.conv1d and er.conv2d: every element the exact sum over its window of ``input * weight``
plus ``bias``, rounded once, against direct loops over an explicitly zero-padded input and an
oracle that shares no code with exactref (Python integers and MPFR, ``mpfr_oracle``): strides,
paddings (ints, pairs, "same" with an odd total, "valid"), dilations, groups (depthwise too),
unbatched inputs, every format and mode, adversarial data; the errors; the tolerance models
against convolutions simulated step by step (direct loops in several orders, im2col with a
blocked GEMM, float32 accumulation of bfloat16 inputs, MPFR directed modes) and one outside them
(bfloat16 accumulation where float32 is declared)."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from mpfr_oracle import FMTS, Rounder, round_terms, same

import exactref as er

R = er.Rounding
F32, F64, BF16 = np.float32, np.float64, ml_dtypes.bfloat16
MODES = [m for m in R if m is not R.ODD]


# ------------------------------------------------------------------------------ the oracle
def _pads(padding, kernel, dilation):
    if padding == "valid":
        return [(0, 0)] * len(kernel)
    if padding == "same":
        return [((d * (k - 1)) // 2, d * (k - 1) - (d * (k - 1)) // 2)
                for k, d in zip(kernel, dilation, strict=True)]
    padding = (padding,) * len(kernel) if isinstance(padding, int) else padding
    return [(p, p) for p in padding]


def _pair(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def windows(x, w, stride=1, padding=0, dilation=1, groups=1):
    """Per output element (in the output's C order), the input values and the weights of its
    terms in (channel, kh, kw) order, from direct loops over the zero-padded input: arrays
    ``(outputs, K)`` of float64, and the output shape. ``x`` is (N, C, *space), ``w`` (O, Cg,
    *kernel), 1-D or 2-D."""
    x = np.asarray(x).astype(F64)
    w = np.asarray(w).astype(F64)
    nd = x.ndim - 2
    kernel = w.shape[2:]
    s, d = _pair(stride, nd), _pair(dilation, nd)
    pads = _pads(padding, kernel, d)
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    if nd == 1:
        xp, w = xp[:, :, None, :], w[:, :, None, :]
        s, d = (1,) + s, (1,) + d
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    og = o // groups
    oh = (xp.shape[2] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (kw - 1) - 1) // s[1] + 1
    xs, ws = [], []
    for b in range(n):
        for oc in range(o):
            g = oc // og
            for i in range(oh):
                for j in range(ow):
                    xv, wv = [], []
                    for ci in range(cg):
                        for a in range(kh):
                            for e in range(kw):
                                xv.append(xp[b, g * cg + ci, i * s[0] + a * d[0],
                                             j * s[1] + e * d[1]])
                                wv.append(w[oc, ci, a, e])
                    xs.append(xv)
                    ws.append(wv)
    shape = (n, o, oh, ow) if nd == 2 else (n, o, ow)
    return np.array(xs), np.array(ws), shape


def oracle(x, w, b, fmt, mode, **kw):
    xs, ws, shape = windows(x, w, **kw)
    o = shape[1]
    per = int(np.prod(shape[2:]))
    out = []
    for idx in range(xs.shape[0]):
        terms = [(float(a), float(c)) for a, c in zip(xs[idx], ws[idx], strict=True)]
        if b is not None:
            terms.append((float(np.asarray(b).astype(F64)[(idx // per) % o]),))
        out.append(round_terms(terms, FMTS[fmt], mode))
    return np.array(out).reshape(shape)


def _check(res, want):
    got = res.rounded.numpy().astype(F64)
    assert got.shape == want.shape
    for g, v in zip(got.reshape(-1), want.reshape(-1), strict=True):
        assert same(float(g), float(v)), (g, v)


def _vals(fmt, shape, rng, scale=1.0):
    return er.asarray(rng.standard_normal(shape) * scale, fmt).numpy()


# ---------------------------------------------------------------------------- exactness
CONV2D = [dict(stride=2, padding=1), dict(padding="same", dilation=2), dict(padding="same"),
          dict(groups=2, stride=(1, 2), padding=(1, 0)), dict(padding="valid", dilation=(2, 1)),
          dict(groups=4, padding=1)]
CONV1D = [dict(stride=2, padding=1), dict(padding="same", dilation=3), dict(groups=2),
          dict(groups=4, padding=(2,), stride=3)]


def _ids(kw):
    return "-".join(f"{k}={v}" for k, v in kw.items()).replace(" ", "")


@pytest.mark.parametrize("kw", CONV2D, ids=_ids)
def test_conv2d_matches_oracle(kw):
    rng = np.random.default_rng([1, CONV2D.index(kw)])
    g = kw.get("groups", 1)
    x = _vals("float32", (2, 4, 5, 6), rng)
    w = _vals("float32", (4, 4 // g, 3, 2), rng)
    b = _vals("float32", (4,), rng)
    for mode in (R.NEAREST_EVEN, R.TOWARD_NEGATIVE):
        _check(er.conv2d(x, w, b, rounding=mode, **kw), oracle(x, w, b, "float32", mode, **kw))
    _check(er.conv2d(x, w, **kw), oracle(x, w, None, "float32", R.NEAREST_EVEN, **kw))


@pytest.mark.parametrize("kw", CONV1D, ids=_ids)
def test_conv1d_matches_oracle(kw):
    rng = np.random.default_rng([2, CONV1D.index(kw)])
    g = kw.get("groups", 1)
    x = _vals("float64", (3, 4, 9), rng)
    w = _vals("float64", (4, 4 // g, 3), rng)
    b = _vals("float64", (4,), rng)
    for mode in (R.NEAREST_EVEN, R.TOWARD_POSITIVE):
        _check(er.conv1d(x, w, b, rounding=mode, **kw), oracle(x, w, b, "float64", mode, **kw))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", ["float64", "float32", "bfloat16", "float16", "float8_e4m3fn"])
def test_every_format_and_mode(fmt, mode):
    rng = np.random.default_rng([3, MODES.index(mode)])
    x = _vals(fmt, (1, 2, 4, 4), rng)
    w = _vals(fmt, (2, 2, 2, 2), rng)
    b = _vals(fmt, (2,), rng)
    _check(er.conv2d(x, w, b, padding=1, rounding=mode),
           oracle(x, w, b, fmt, mode, padding=1))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", ["float32", "bfloat16"])
def test_adversarial(fmt, mode):
    """Cancellation down to the last bit, sums near the largest finite value, subnormal
    products, signed zeros, and infinities and NaN (an infinite weight that meets the padding's
    zero gives NaN: the padding is a term)."""
    f = er.dtype(fmt)
    x = np.zeros((4, 1, 3, 3))
    x[0, 0] = [[1e4, 1.0, -1e4], [2.0**-20, 3.0, -3.0], [1.0, 1.0, 1.0]]
    x[1, 0] = f.max_finite / 4
    x[2, 0] = f.smallest_subnormal * np.array([[1, -1, 1], [2, 2, -2], [0, 0, 1]])
    x[3, 0] = -0.0
    w = np.zeros((3, 1, 2, 2))
    w[0, 0] = [[1.0, 1.0], [1.0, 1.0]]
    w[1, 0] = [[1.0, -1.0], [0.5, -0.0]]
    w[2, 0] = [[np.inf, 1.0], [1.0, 1.0]]
    b = np.array([-1.0, -0.0, 0.0])
    x, w, b = (er.asarray(v, fmt).numpy() for v in (x, w, b))
    with np.errstate(all="ignore"):
        _check(er.conv2d(x, w, b, padding=1, rounding=mode),
               oracle(x, w, b, fmt, mode, padding=1))
        xn = x.copy()
        xn[0, 0, 1, 1] = np.nan
        _check(er.conv2d(xn, w[:2], b[:2], rounding=mode),
               oracle(xn, w[:2], b[:2], fmt, mode))


def test_unbatched_and_shapes():
    rng = np.random.default_rng(4)
    x = _vals("float32", (3, 7, 5), rng)
    w = _vals("float32", (2, 3, 3, 3), rng)
    r = er.conv2d(x, w, stride=2)
    assert r.rounded.shape == (2, 3, 2)
    _check(r, oracle(x[None], w, None, "float32", R.NEAREST_EVEN, stride=2)[0])
    r1 = er.conv1d(x[:, 0], w[:, :, 0], padding="same")
    assert r1.rounded.shape == (2, 5)


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, match", [
    (lambda: er.conv2d(np.ones((1, 4, 5, 5)), np.ones((2, 3, 3, 3))),
     r"expects the input to have 3 channels .* has 4"),
    (lambda: er.conv2d(np.ones((1, 4, 5, 5)), np.ones((3, 2, 3, 3)), groups=2),
     r"out_channels \(3, weight's first dimension\) must be divisible by groups \(2\)"),
    (lambda: er.conv2d(np.ones((1, 3, 5, 5)), np.ones((2, 1, 3, 3)), groups=2),
     "in_channels must be divisible by groups"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), padding=-1),
     "padding=-1: each entry must be at least 0"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), stride=0),
     "stride=0: each entry must be at least 1"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), padding="full"),
     "padding='full'"),
    (lambda: er.conv2d(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3))),
     "smaller than the dilated kernel"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5)), np.ones((2, 1, 3, 3)), np.ones(3)),
     r"bias must have shape \(2,\)"),
    (lambda: er.conv2d(np.ones((5, 5)), np.ones((1, 1, 3, 3))),
     "expected a 3-D .* or 4-D .* input"),
    (lambda: er.conv1d(np.ones((1, 1, 5)), np.ones((1, 1, 3, 3))), "weight must be 3-D"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3)), groups=0),
     "groups=0 must be a positive integer"),
    (lambda: er.conv2d(np.ones((1, 1, 5, 5), np.int64), np.ones((1, 1, 3, 3), np.int64)),
     "real floating formats"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------------- models
def _bf16_problem(rng, cancel=False):
    x = rng.standard_normal((2, 8, 6, 6))
    w = rng.standard_normal((4, 8, 3, 3)) * 0.25
    if cancel:  # channels 4..7 undo channels 0..3, but for one bit
        x[:, 4:] = x[:, :4]
        w[:, 4:] = -w[:, :4] * (1 + 2.0**-7)
    b = rng.standard_normal(4)
    return (er.asarray(v, "bfloat16").numpy() for v in (x, w, b))


def _accumulate(P, bias, acc, order, bias_at, rd=None):
    """Per output (rows of ``P``, exact products in float64): the products in ``order`` and the
    bias summed in ``acc`` (numpy's IEEE arithmetic, or ``rd``: MPFR one step at a time)."""
    def add(s, t):
        if rd is not None:
            return np.array([rd.add(float(a), float(c)) for a, c in zip(s, t, strict=True)])
        return (s.astype(F64) + t.astype(acc).astype(F64)).astype(acc)

    s = bias.astype(acc) if bias_at == "start" else np.zeros(P.shape[0], acc)
    for j in order:
        s = add(s, P[:, j])
    if bias_at == "end":
        s = add(s, bias)
    return s


def _sims(x, w, b, rng, kw):
    """Outputs (bfloat16) of convolutions accumulated in float32: direct loops in (c, kh, kw)
    order and in (kh, kw, c) order, reversed, random orders, an im2col GEMM blocked along K
    (partial sums of 16 products, then the partials), the bias first or last."""
    xs, ws, shape = windows(x, w, **kw)
    P = xs * ws  # exact: bfloat16 x bfloat16 fits in float64
    per = int(np.prod(shape[2:]))
    bias = np.asarray(b).astype(F64)[(np.arange(P.shape[0]) // per) % shape[1]]
    k = P.shape[1]
    cg, kk = w.shape[1], int(np.prod(w.shape[2:]))
    spatial_first = [c * kk + e for e in range(kk) for c in range(cg)]
    orders = {"c,kh,kw": list(range(k)), "kh,kw,c": spatial_first,
              "reversed": list(range(k))[::-1], "random": list(rng.permutation(k))}
    out = {}
    for name, order in orders.items():
        for at in ("start", "end"):
            out[f"{name} bias {at}"] = _accumulate(P, bias, F32, order, at)
    # blocked GEMM: 16-product partial sums in a kernel's register, added into C (bias last)
    total = np.zeros(P.shape[0], F32)
    for s0 in range(0, k, 16):
        part = _accumulate(P[:, s0:s0 + 16], bias, F32, range(min(16, k - s0)), None)
        total = (total.astype(F64) + part.astype(F64)).astype(F32)
    out["blocked gemm"] = (total.astype(F64) + bias).astype(F32)
    return {n: v.astype(BF16).reshape(shape) for n, v in out.items()}


@pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")
@pytest.mark.parametrize("cancel", [False, True], ids=["random", "cancel"])
@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2, padding=1, groups=2),
                                dict(padding=1, groups=8)], ids=_ids)
def test_simulated_convolutions_covered(kw, cancel):
    rng = np.random.default_rng([5, int(cancel)])
    x, w, b = _bf16_problem(rng, cancel)
    g = kw.get("groups", 1)
    w = w[:, :8 // g] if g > 1 else w
    if g == 8:
        w = np.concatenate([w] * 2)  # 8 depthwise filters
        b = np.concatenate([b] * 2)
    ref = er.conv2d(x, w, b, **kw)
    seq = er.conv2d(x, w, b, order="sequential", **kw)
    for name, out in _sims(x, w, b, rng, kw).items():
        assert ref.covers(out).all(), (name, ref.covers(out).summary())
        if name.startswith("c,kh,kw"):  # the declared sequential order is im2col's
            assert seq.covers(out).all(), name
            at = name.rsplit(" ", 1)[-1]
            assert er.conv2d(x, w, b, order="sequential", bias_at=at, **kw).covers(out).all()


@pytest.mark.parametrize("mode", [R.TOWARD_POSITIVE, R.TOWARD_ZERO], ids=lambda m: m.value)
def test_directed_accumulation_covered(mode):
    """A direct conv1d loop accumulating in float32 with every step rounded in ``mode``
    (MPFR), the output rounded in ``mode`` too: covered by that mode's model."""
    rng = np.random.default_rng(6)
    x = _vals("float32", (1, 3, 8), rng)
    w = _vals("float32", (2, 3, 3), rng)
    b = _vals("float32", (2,), rng)
    xs, ws, shape = windows(x, w, padding=1)
    P = xs * ws
    bias = np.asarray(b).astype(F64)[np.arange(P.shape[0]) // 8]
    rd = Rounder(FMTS["float32"], mode)
    P32 = np.vectorize(lambda v: rd(float(v)))(P)  # each product rounded in mode
    out = _accumulate(P32, bias, F32, range(P.shape[1]), "end", rd=rd).astype(F32)
    r = er.conv1d(x, w, b, padding=1, rounding=mode)
    assert r.covers(out.reshape(shape)).all()
    assert er.conv1d(x, w, b, padding=1, rounding=mode, order="sequential", fused=False,
                     bias_at="end").covers(out.reshape(shape)).all()


def test_bf16_accumulation_caught():
    """A bfloat16 accumulator where float32 is declared: a 3x3 window of 1 and eight 2**-9
    sums to 1 + 2**-6 exactly; in bfloat16 every 2**-9 is lost against 1."""
    x = np.full((1, 1, 3, 3), 2.0**-9)
    x[0, 0, 0, 0] = 1.0
    x = er.asarray(x, "bfloat16").numpy()
    w = er.asarray(np.ones((1, 1, 3, 3)), "bfloat16").numpy()
    b = er.asarray([0.0], "bfloat16").numpy()
    ref = er.conv2d(x, w, b)
    assert ref.rounded.numpy().astype(F64).tolist() == [[[[1.015625]]]]
    xs, ws, shape = windows(x, w)
    P = xs * ws
    wrong = _accumulate(P, np.zeros(1), BF16, range(9), "start").reshape(shape)
    assert wrong.astype(F64).tolist() == [[[[1.0]]]]
    assert not ref.covers(wrong).all()
    assert ref.covers(_accumulate(P, np.zeros(1), F32, range(9), "start").astype(BF16)
                      .reshape(shape)).all()


def test_weak_check_warns_on_cancellation_unless_declared():
    """Channels that cancel under the default any-order model: a tolerance of millions of ulps,
    and covers warns WeakCheckWarning; a declared order does not warn, and a declared float64
    accumulator shrinks the tolerance to a few ulps."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 8, 6, 6)).astype(F32)
    x[:, 4:] = x[:, :4]
    w = rng.standard_normal((4, 8, 3, 3)).astype(F32)
    w[:, 4:] = -w[:, :4] * F32(1 + 2.0**-20)
    r = er.conv2d(x, w, padding=1)
    with pytest.warns(er.WeakCheckWarning, match="conv2d: a weak check"):
        assert r.covers(r.rounded.numpy()).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", er.WeakCheckWarning)
        er.conv2d(x, w, padding=1, order="any").covers(r.rounded.numpy())
        cov = er.conv2d(x, w, padding=1, compute="float64").covers(r.rounded.numpy())
    assert cov.all() and cov.tolerance_stats[0] < 4
    assert np.median(r.tolerance_ulps()) > 1e6


def _winograd_f23(d, g):
    """Winograd's F(2, 3) in float32 (Lavin and Gray): two outputs of a width-3 filter over
    four inputs from four products of transformed data and filter, every step rounded."""
    d = [F32(v) for v in d]
    g = [F32(v) for v in g]
    half = F32(0.5)
    g1 = F32(F32(F32(g[0] + g[1]) + g[2]) * half)
    g2 = F32(F32(F32(g[0] - g[1]) + g[2]) * half)
    m1 = F32(F32(d[0] - d[2]) * g[0])
    m2 = F32(F32(d[1] + d[2]) * g1)
    m3 = F32(F32(d[2] - d[1]) * g2)
    m4 = F32(F32(d[1] - d[3]) * g[2])
    return np.array([F32(F32(m1 + m2) + m3), F32(F32(m2 - m3) - m4)], F32)


def test_winograd_is_outside_the_model():
    """Winograd transforms the operands first: its intermediate ``d2 * g0`` is no term of the
    direct sum, and its rounding is not bounded by ``sum |d| |g|``. Input (0, 0, 1, 0) with
    filter (1, 0, 2**-30): the exact first output is 2**-30 (one term), Winograd's float32
    filter transform rounds 1 + 2**-30 to 1 and gives 0. Not covered; the direct loop is."""
    d = np.array([0.0, 0.0, 1.0, 0.0], F32)
    g = np.array([1.0, 0.0, 2.0**-30], F32)
    ref = er.conv1d(d[None, None], g[None, None])
    assert ref.rounded.numpy().ravel().tolist() == [2.0**-30, 0.0]
    wino = _winograd_f23(d, g)
    assert wino.tolist() == [0.0, 0.0]
    assert not ref.covers(wino[None, None]).all()
    direct = np.array([sum(F32(d[i + j] * g[j]) for j in range(3)) for i in range(2)], F32)
    assert ref.covers(direct[None, None]).all()


@pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")
@pytest.mark.parametrize("at", ["start", "end"])
def test_blocked_gemm_covered_by_blocked_model(at):
    """im2col with a GEMM blocked along K (blocks of 16 products, each from zero, added to the
    output that starts from the bias, or the bias last): covered by ``order="blocked",
    block=16`` with the bias where it is, and tighter than the any-order bound."""
    rng = np.random.default_rng(10)
    x, w, b = _bf16_problem(rng, cancel=True)
    xs, ws, shape = windows(x, w, padding=1)
    P = xs * ws
    bias = np.asarray(b).astype(F64)[(np.arange(P.shape[0]) // 36) % 4]
    k = P.shape[1]
    total = bias.astype(F32) if at == "start" else np.zeros(P.shape[0], F32)
    for s0 in range(0, k, 16):
        part = _accumulate(P[:, s0:s0 + 16], bias, F32, range(min(16, k - s0)), None)
        total = (total.astype(F64) + part.astype(F64)).astype(F32)
    if at == "end":
        total = (total.astype(F64) + bias).astype(F32)
    out = total.astype(BF16).reshape(shape)
    r = er.conv2d(x, w, b, padding=1, order="blocked", block=16, bias_at=at)
    assert r.covers(out).all()
    wide = er.conv2d(x, w, b, padding=1).tolerance().numpy()
    assert (r.tolerance().numpy() <= wide).all() and (r.tolerance().numpy() < wide).any()
