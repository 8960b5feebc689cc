"""The tolerance models of divide, sqrt, rsqrt, fma, addcmul and addcdiv in bfloat16, float16
and float8_e4m3fn (compute format float32), simulated step by step with the oracle.

Each modelled implementation is replayed element by element: every intermediate result rounded
into float32 with MPFR (``family_oracle.rnd_one``), in the same rounding mode as the final store
into the output format. Soundness: ``covers`` accepts every simulated output. Tightness:
``tolerance()`` equals the largest distance from ``rounded`` to a simulated output (the Result
models exactly these implementations, no more). Implementations outside the model are caught:
bfloat16 division as ``x * (1 / y)`` in bfloat16 arithmetic, rsqrt, fma, addcmul and addcdiv
with every step rounded in bfloat16, and ``sqrt`` as ``x * rsqrt(x)`` in float32.

The models (``exactref.arithmetic.{division,roots,basic}``), for output format F:

* every op: the exact value rounded into F; rounded into float32 first, then F ("fused");
* rsqrt: ``sqrt`` rounded in float32, then ``1 / it`` in float32 (PyTorch's CPU kernel);
* addcmul: ``value * t1``, ``* t2``, ``input +`` each rounded in float32; ``value * t1`` rounded,
  then one fused multiply-add;
* addcdiv: ``t1 / t2``, ``* value``, ``input +`` each rounded in float32; ``value * t1`` first,
  then ``/ t2``, then ``input +``.
"""

from __future__ import annotations

import math
import zlib

import family_oracle as F
import numpy as np
import pytest
from gmpy2 import mpq

import exactref as er
from exactref._formats import FORMATS

R = er.Rounding
F32 = FORMATS["float32"]
OUTS = [FORMATS["bfloat16"], FORMATS["float16"], FORMATS["float8_e4m3fn"]]
QUICK = {R.NEAREST_EVEN, R.TOWARD_ZERO, R.TOWARD_POSITIVE}
MODE_PARAMS = [pytest.param(m, id=m.value, marks=[] if m in QUICK else [pytest.mark.slow])
               for m in R]
N = 600


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


# ----------------------------------------------------------------------------- operands
def values(fmt, n, rng, *, positive=False, specials=True):
    """Random finite values of the format (every binade), a few specials, and values around 1
    (where the steps' roundings interact most)."""
    allv = F.all_values(fmt)
    fin = allv[np.isfinite(allv) & (allv != 0)]
    v = fin[rng.integers(0, fin.size, size=n)]
    near = fin[(np.abs(fin) > 0.25) & (np.abs(fin) < 4)]
    v[: n // 2] = near[rng.integers(0, near.size, size=n // 2)]
    if positive:
        v = np.abs(v)
    if specials:
        sp = [0.0, -0.0, fmt.max_finite, fmt.smallest_subnormal, 1.0]
        if fmt.has_inf:
            sp.append(math.inf)
        v[-len(sp):] = sp
    return v


def operands(fmt, n_ops, seed, *, positive=False):
    rng = np.random.default_rng(_seed(fmt.name, seed))
    return [values(fmt, N, rng, positive=positive and k == 0) for k in range(n_ops)]


#: float64 approximations of each op's exact value (to pick operands near the output format's
#: boundaries; the tests judge them with the exact oracle)
APPROX = {
    "divide": lambda x, y: x / y,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "fma": lambda x, y, z: x * y + z,
    "addcmul": lambda i, a, b: i + a * b,
    "addcmul_value": lambda i, a, b: i + 0.1 * a * b,
    "addcdiv": lambda i, a, b: i + a / b,
    "addcdiv_value": lambda i, a, b: i - 3 * a / b,
}


def near_boundaries(fmt, op, n_ops, positive, *, pool=1 << 17, keep=N):
    """Operands whose exact value lies within a few float32 ulps of a value or midpoint of
    ``fmt`` (where rounding in float32 first can change the result): drawn from a pool of
    random values of the format, picked by a float64 approximation."""
    rng = np.random.default_rng(_seed(fmt.name, op, "near"))
    allv = F.all_values(fmt)
    fin = allv[np.isfinite(allv) & (allv != 0) & (np.abs(allv) > 2.0**-20) &
               (np.abs(allv) < 2.0**20)]
    cols = [fin[rng.integers(0, fin.size, size=pool)] for _ in range(n_ops)]
    if positive:
        cols[0] = np.abs(cols[0])
    with np.errstate(all="ignore"):
        q = APPROX[op](*cols)
        a = np.abs(q)
        _, e2 = np.frexp(np.where((a > 0) & np.isfinite(a), a, 1.0))
        grid = np.ldexp(1.0, np.maximum(e2 - 1, fmt.emin) - fmt.precision)  # values, midpoints
        r = a / grid
        dist = np.abs(r - np.round(r)) * grid / np.where(a > 0, a, 1.0)
    pick = np.flatnonzero((dist < 2.0**-22) & (dist > 0) & np.isfinite(a) & (a > 2.0**-20))
    pick = pick[:keep]
    return [c[pick] for c in cols]


# --------------------------------------------------------------------------- simulation
class Sim:
    """Rounding steps of one element: ``c`` into float32, ``store`` into the output format,
    every step in ``mode`` (exact values in, exact values out)."""

    def __init__(self, out, mode, compute=F32):
        self.out, self.mode, self.compute = out, mode, compute

    def c(self, v):
        return F.ex(F.rnd_one(v, self.compute, self.mode))

    def store(self, v) -> float:
        return F.rnd_one(v, self.out, self.mode)


def _ex(v):
    return F.ex(v)


def sim_divide(s, x, y):
    e = F.divide(x, y)
    return [s.store(e), s.store(s.c(e))]


def sim_sqrt(s, x):
    e = F.sqrt(x)
    return [s.store(e), s.store(s.c(e))]


def sim_rsqrt(s, x):
    e = F.rsqrt(x)
    root = s.c(F.sqrt(x))
    return [s.store(e), s.store(s.c(e)), s.store(s.c(F.ieee_div(mpq(1), root)))]


def sim_fma(s, x, y, z):
    e = F.fma(x, y, z)
    return [s.store(e), s.store(s.c(e))]


def sim_addcmul(s, i, t1, t2, value):
    e = F.addcmul(i, t1, t2, value)
    vt = _ex(t1) if value == 1 else s.c(F.mul(_ex(value), _ex(t1)))
    p = s.c(F.mul(vt, _ex(t2)))
    steps = s.c(F.ieee_sum([_ex(i), p]))
    fused_last = s.c(F.ieee_sum([_ex(i), F.mul(vt, _ex(t2))]))
    return [s.store(e), s.store(s.c(e)), s.store(steps), s.store(fused_last)]


def sim_addcdiv(s, i, t1, t2, value):
    e = F.addcdiv(i, t1, t2, value)
    q = s.c(F.ieee_div(_ex(t1), _ex(t2)))
    vq = q if value == 1 else s.c(F.mul(q, _ex(value)))
    steps = s.c(F.ieee_sum([_ex(i), vq]))
    vt = _ex(t1) if value == 1 else s.c(F.mul(_ex(value), _ex(t1)))
    q2 = s.c(F.ieee_div(vt, _ex(t2)))
    first = s.c(F.ieee_sum([_ex(i), q2]))
    return [s.store(e), s.store(s.c(e)), s.store(steps), s.store(first)]


OPS = {
    # name: (exactref call on arrays, simulation, operand count, positive first operand)
    "divide": (lambda a, **kw: er.divide(*a, **kw), sim_divide, 2, False),
    "sqrt": (lambda a, **kw: er.sqrt(*a, **kw), sim_sqrt, 1, True),
    "rsqrt": (lambda a, **kw: er.rsqrt(*a, **kw), sim_rsqrt, 1, True),
    "fma": (lambda a, **kw: er.fma(*a, **kw), sim_fma, 3, False),
    "addcmul": (lambda a, **kw: er.addcmul(*a, **kw), lambda s, *r: sim_addcmul(s, *r, 1), 3,
                False),
    "addcmul_value": (lambda a, **kw: er.addcmul(*a, value=0.1, **kw),
                      lambda s, *r: sim_addcmul(s, *r, 0.1), 3, False),
    "addcdiv": (lambda a, **kw: er.addcdiv(*a, **kw), lambda s, *r: sim_addcdiv(s, *r, 1), 3,
                False),
    "addcdiv_value": (lambda a, **kw: er.addcdiv(*a, value=-3, **kw),
                      lambda s, *r: sim_addcdiv(s, *r, -3), 3, False),
}


def _simulate(sim, s, cols):
    """Per element, the outputs of every modelled implementation (a list per element)."""
    return [sim(s, *row) for row in zip(*[c.tolist() for c in cols], strict=True)]


def _tolerance(sims, ref):
    """The largest distance from ``ref`` to a simulated output (NaN ignored), as
    ``Result.tolerance`` defines it."""
    stack = np.array(sims, dtype=np.float64).T  # (models, elements)
    with np.errstate(invalid="ignore", over="ignore"):
        lo = np.fmin.reduce(stack, axis=0)
        hi = np.fmax.reduce(stack, axis=0)
        t = np.fmax(hi - ref, ref - lo)
    return np.where(np.isnan(t), 0.0, t)


def _case(fmt, op, mode):
    """exactref's Result, the simulated outputs of every model, the operands, and the
    tolerance the simulations give, on random operands plus operands near the boundaries."""
    er_fn, sim, n_ops, positive = OPS[op]
    cols = operands(fmt, n_ops, op, positive=positive)
    near = near_boundaries(fmt, op, n_ops, positive)
    cols = [np.concatenate([c, d]) for c, d in zip(cols, near, strict=True)]
    if not fmt.has_inf:  # float8_e4m3fn: its operands are finite (they are its values)
        cols = [np.where(np.isinf(c), fmt.max_finite, c) for c in cols]
    res = er_fn([er.asarray(c, fmt) for c in cols], rounding=mode)
    sims = _simulate(sim, Sim(fmt, mode), cols)
    want = _tolerance(sims, res.rounded._wide().astype(np.float64))
    return res, sims, cols, want


@pytest.mark.parametrize("mode", MODE_PARAMS)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("fmt", OUTS, ids=lambda f: f.name)
def test_models_cover_and_are_tight(fmt, op, mode):
    res, sims, cols, want = _case(fmt, op, mode)
    for k in range(len(sims[0])):
        model = np.array([row[k] for row in sims])
        cov = res.covers(er.asarray(model, fmt))
        bad = np.flatnonzero(~np.asarray(cov))
        assert bad.size == 0, [(op, k, tuple(float(c[j]) for c in cols), model[j],
                                res.rounded._wide()[j]) for j in bad[:6]]
    # the exact value rounded once is the first model: the reference itself
    F.assert_same(res.rounded._wide().astype(np.float64), np.array([r[0] for r in sims]),
                  lambda j: tuple(float(c[j]) for c in cols), f"{op} reference")
    got = np.asarray(res.tolerance())
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(op, tuple(float(c[j]) for c in cols), got[j], want[j],
                            sims[j]) for j in bad[:6]]


#: where a model leaves the reference on these operands (toward zero), so that the checks
#: above are not vacuous. Division and square roots never do: float32 holds 2p + 2 bits of
#: these formats, which makes rounding twice through it innocuous (Figueroa, 1995).
DIFFERING = [("rsqrt", "float16"), ("addcmul", "bfloat16"), ("addcmul_value", "float8_e4m3fn"),
             ("addcdiv", "bfloat16"), ("addcdiv_value", "float16")]


@pytest.mark.parametrize("op,fmt", DIFFERING, ids=[f"{o}-{f}" for o, f in DIFFERING])
def test_models_leave_the_reference(op, fmt):
    res, sims, cols, want = _case(FORMATS[fmt], op, R.TOWARD_ZERO)
    assert (want > 0).sum() >= 2, (op, fmt)


@pytest.mark.parametrize("fmt", [BF := FORMATS["bfloat16"], FORMATS["float16"]],
                         ids=lambda f: f.name)
def test_divide_and_sqrt_through_float32_are_innocuous(fmt):
    """Every positive value's square root, and quotients near the boundaries: the fused model
    (rounded in float32 first) equals the reference, so their tolerance is 0."""
    x = F.all_values(fmt)
    x = x[np.isfinite(x) & (x > 0)][::7]
    res = er.sqrt(er.asarray(x, fmt), rounding=R.TOWARD_ZERO)
    assert not np.asarray(res.tolerance()).any()
    y = near_boundaries(fmt, "divide", 2, False)
    res = er.divide(*[er.asarray(c, fmt) for c in y], rounding=R.TOWARD_ZERO)
    assert not np.asarray(res.tolerance()).any()


# ------------------------------------------------------------- outside the model: caught
BF16 = BF


def _caught(res, outputs, fmt):
    """Some element of ``outputs`` lies outside what the Result covers."""
    cov = np.asarray(res.covers(er.asarray(np.array(outputs, dtype=np.float64), fmt)))
    return int((~cov).sum())


@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_divide_by_reciprocal_in_bfloat16_is_caught(mode):
    """``x * (1 / y)`` with both steps rounded in bfloat16: double rounding, outside the
    model."""
    x, y = operands(BF16, 2, "recip")
    s = Sim(BF16, mode, compute=BF16)
    outs = [s.store(F.mul(s.c(F.reciprocal(b)), _ex(a))) for a, b in zip(x.tolist(), y.tolist(),
                                                                         strict=True)]
    res = er.divide(er.asarray(x, BF16), er.asarray(y, BF16), rounding=mode)
    assert _caught(res, outs, BF16) > 10


@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_bfloat16_throughout_is_caught(mode):
    """rsqrt, fma, addcmul and addcdiv with every step rounded in bfloat16 (no float32
    compute): some elements fall outside the tolerance."""
    (x,) = operands(BF16, 1, "rs", positive=True)
    s = Sim(BF16, mode, compute=BF16)
    outs = [s.store(F.ieee_div(mpq(1), s.c(F.sqrt(a)))) for a in x.tolist()]
    assert _caught(er.rsqrt(er.asarray(x, BF16), rounding=mode), outs, BF16) > 0
    a, b, c = operands(BF16, 3, "steps")
    rows = list(zip(a.tolist(), b.tolist(), c.tolist(), strict=True))
    unfused = [s.store(F.ieee_sum([s.c(F.mul(_ex(p), _ex(q))), _ex(r)])) for p, q, r in rows]
    ops = [er.asarray(v, BF16) for v in (a, b, c)]
    assert _caught(er.fma(*ops, rounding=mode), unfused, BF16) > 0
    steps = [s.store(F.ieee_sum([_ex(r), s.c(F.mul(_ex(p), _ex(q)))])) for r, p, q in rows]
    assert _caught(er.addcmul(*ops, rounding=mode), steps, BF16) > 0
    steps = [s.store(F.ieee_sum([_ex(r), s.c(F.ieee_div(_ex(p), _ex(q)))])) for r, p, q in rows]
    assert _caught(er.addcdiv(*ops, rounding=mode), steps, BF16) > 0


@pytest.mark.parametrize("fmt", [BF16, FORMATS["float16"]], ids=lambda f: f.name)
def test_sqrt_as_x_times_rsqrt_is_caught(fmt):
    """``sqrt(x)`` computed as ``x * rsqrt(x)`` in float32, then stored, toward zero: not a
    modelled implementation of sqrt (its tolerance is the exact and the fused rounding only).
    Perfect squares show it: ``9 * RZ(1/3)`` is below 3."""
    (x,) = operands(fmt, 1, "sqrt-rsqrt", positive=True)
    x = np.concatenate([x[(x > 0) & np.isfinite(x)], np.arange(1.0, 64.0) ** 2])
    mode = R.TOWARD_ZERO
    s = Sim(fmt, mode)
    outs = [s.store(s.c(F.mul(_ex(a), s.c(F.rsqrt(a))))) for a in x.tolist()]
    assert _caught(er.sqrt(er.asarray(x, fmt), rounding=mode), outs, fmt) > 0


@pytest.mark.parametrize("op", ["add", "multiply", "divide", "sqrt"])
def test_a_fast_lane_runs_only_for_the_declarations_own_models(op):
    """The float32 fast lanes (add, subtract, multiply, divide, sqrt) stand for the models
    their declaration gave; registered with other models, the record's models run: a model one
    float32 ulp above the value widens the tolerance of float32 operands, which the lane
    alone would not."""
    from dataclasses import replace

    from exactref.arithmetic._elementwise import Model

    spec = er.ops.get_op(op)
    fn = spec.function
    operands = [np.array([1.0, 3.0, 0.1], np.float32), np.array([3.0, 7.0, 0.3], np.float32)]
    args = operands[:spec.arity]
    before = fn(*args)
    assert np.array_equal(before.lowest, before.highest)  # the lane: the reference only
    up = np.nextafter(before.rounded.numpy(), np.float32(np.inf))

    def above(ctx, exact, *parts):  # the ends of a band one float32 ulp above the value
        v = np.asarray(ctx.round(exact, ctx.c)[0], np.float64).astype(np.float32)
        return [ctx.values(np.nextafter(v, np.float32(np.inf)).astype(np.float64))]

    wider = Model("one ulp above in {c}", derive=above)
    try:
        er.ops.register(replace(spec, models=(*spec.models, wider)))
        after = fn(*args)
    finally:
        er.ops.register(spec)
    assert np.array_equal(after.rounded.numpy(), before.rounded.numpy())
    assert after.covers(up).all() and not before.covers(up).any()
    assert np.array_equal(fn(*args).lowest, before.lowest)  # the lane is back


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater",
                                  "greater_equal"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_comparison_flush_reads_subnormal_operands_as_zeros(name, dtype):
    """A comparison under flush='inputs'/'both' covers the answer on the operands with their
    subnormals read as zeros (a DAZ kernel), each operand in its own format; the answers of
    neither reading stay wrong."""
    fn = getattr(er, name)
    tiny = np.finfo(dtype).smallest_normal
    x = np.array([np.finfo(dtype).smallest_subnormal, -tiny / 2, tiny, 0.0, 1.0], dtype)
    y = np.array([0.0, -0.0, 0.0, tiny / 4, 1.0], dtype)
    daz = [np.where(np.abs(v) < tiny, 0.0, v).astype(dtype) for v in (x, y)]
    exact = fn(x, y).rounded.numpy()
    flushed = fn(*daz).rounded.numpy()
    assert (exact != flushed).any()  # the inputs tell the two readings apart
    for flush in ("inputs", "both"):
        r = fn(x, y, flush=flush)
        assert r.covers(exact).all() and r.covers(flushed).all()
        neither = np.where(exact == flushed, ~exact, exact)  # wrong where both agree
        assert not r.covers(neither).all()
    assert not fn(x, y).covers(flushed).all()  # without the flush: caught
