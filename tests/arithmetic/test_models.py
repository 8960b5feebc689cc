"""The tolerance models of er.add and er.multiply, simulated independently.

Each modelled implementation is simulated exactly with the oracle (Fractions and MPFR): the
products rounded into the compute format (or not), the sum rounded in it, the final rounding
into the output format, every step in the chosen rounding mode. Soundness: ``covers`` accepts
every simulated output. Tightness: ``tolerance()`` is exactly the largest distance from
``rounded`` to a simulated output, so some modelled implementation reaches it.

The models (``exactref.arithmetic.basic``), for output format F and compute format C:

* exact: the exact value rounded once into F;
* fused: rounded into C, then into F (when C is not F);
* add with alpha other than 1: ``alpha * y`` rounded into C, ``x +`` that rounded into C, then
  F; for a complex alpha, ``alpha * y``'s parts rounded fused, or product by product;
* complex multiply: each part's two products rounded into C (or one of them kept exact, as an
  FMA computes it), their sum rounded into C, then F.

Chaining (``add(x, multiply(y, alpha, dtype=F))``, PyTorch's stored form) and ``any_of`` are
simulated the same way.
"""

from __future__ import annotations

import math

import arith_oracle as O
import numpy as np
import pytest
from arith_pools import pairs, random_bits
from hypothesis import example, given, settings
from hypothesis import strategies as st

import exactref as er
from exactref._formats import FORMATS

R = er.Rounding
MODES = list(R)
REAL = [FORMATS[n] for n in ("float64", "float32", "float16", "bfloat16", "float8_e4m3fn",
                             "float8_e5m2", "float6_e3m2fn", "float4_e2m1fn")]
COMPLEX = [FORMATS[n] for n in ("complex128", "complex64", "complex32")]
ALPHAS = st.one_of(st.sampled_from([3, 0.1, -2.5, 1 / 3, 3**40, 2.0**-20, -1, 0.75]),
                   st.floats(-1e3, 1e3, allow_nan=False).filter(lambda v: v != 0))
CALPHAS = st.sampled_from([0.5 - 2j, 1j, complex(1 / 3, 0.1), 2 + 0j, complex(0.3, -1e-3)])


def _compute(fmt):
    """PyTorch's computation format, which the ops use by default."""
    if fmt.kind == "complex":
        return FORMATS["complex64"] if fmt.name == "complex32" else fmt
    return FORMATS["float32"] if fmt.bits <= 16 else fmt


# ------------------------------------------------------------------------- simulations
class Sim:
    """Rounding steps of one element in one mode, with the op's overflow rule everywhere."""

    def __init__(self, out, mode):
        self.out, self.mode = out.component, mode
        self.c = _compute(out).component
        self.rule = self.out.default_overflow

    def to_c(self, v):
        return O.fmt_value(v, self.c, self.mode, self.rule)

    def final(self, v):
        return O.rnd(v, self.out, self.mode, self.rule)

    def total(self, terms):
        return O.total(terms, self.mode)


def sim_add_real(x, y, a, out, mode):
    """Every model's output for x + a*y (real), as floats: [exact, fused?, products?]."""
    s = Sim(out, mode)
    x, y, a = O.exact(x), O.exact(y), O.exact(a)
    exact = s.total([x, O.mul(a, y)])
    outs = [s.final(exact)]
    if s.c is not s.out:
        outs.append(s.final(s.to_c(exact)))
    outs.append(s.final(s.to_c(s.total([x, s.to_c(O.mul(a, y))]))))
    return outs


def sim_stored(x, y, a, out, mode):
    """PyTorch's stored form: a*y rounded into the output format first (fused in C or not),
    then x + that, through C."""
    s = Sim(out, mode)
    x, y, a = O.exact(x), O.exact(y), O.exact(a)
    outs = []
    for ay in {O.rnd(O.mul(a, y), s.out, mode, s.rule),
               s.final(s.to_c(O.mul(a, y)))}:
        ay = O.exact(ay)
        outs.append(s.final(s.to_c(s.total([x, ay]))))
        outs.append(s.final(s.total([x, ay])))
    return outs


def sim_mul_real(x, y, out, mode):
    s = Sim(out, mode)
    exact = O.mul(O.exact(x), O.exact(y))
    outs = [s.final(exact)]
    if s.c is not s.out:
        outs.append(s.final(s.to_c(exact)))
    return outs


def _parts(v: complex):
    return O.exact(v.real), O.exact(v.imag)


def sim_mul_complex(x, y, out, mode):
    """Per part: [exact, fused?, products rounded then summed]."""
    s = Sim(out, mode)
    xr, xi = _parts(x)
    yr, yi = _parts(y)
    res = []
    for t1, t2 in ((O.mul(xr, yr), O.mul(O.neg(xi), yi)), (O.mul(xr, yi), O.mul(xi, yr))):
        exact = s.total([t1, t2])
        outs = [s.final(exact)]
        if s.c is not s.out:
            outs.append(s.final(s.to_c(exact)))
        for u1, u2 in _fma_variants(s, t1, t2):
            outs.append(s.final(s.to_c(s.total([u1, u2]))))
        res.append(outs)
    return res


def _fma_variants(s, t1, t2):
    """Both products rounded into C, or one kept exact (an FMA)."""
    return [(s.to_c(t1), s.to_c(t2)), (t1, s.to_c(t2)), (s.to_c(t1), t2)]


def sim_add_complex(x, y, a: complex, out, mode):
    """x + a*y with a complex alpha whose parts are both nonzero, per part."""
    s = Sim(out, mode)
    xr, xi = _parts(x)
    yr, yi = _parts(y)
    ar, ai = _parts(a)
    terms = ((O.mul(yr, ar), O.mul(O.neg(yi), ai)), (O.mul(yr, ai), O.mul(yi, ar)))
    res = []
    for xp, (t1, t2) in zip((xr, xi), terms, strict=True):
        exact = s.total([xp, t1, t2])
        outs = [s.final(exact)]
        if s.c is not s.out:
            outs.append(s.final(s.to_c(exact)))
        ays = [s.to_c(s.total([t1, t2]))]
        ays += [s.to_c(s.total([u1, u2])) for u1, u2 in _fma_variants(s, t1, t2)]
        for ay in ays:
            outs.append(s.final(s.to_c(s.total([xp, ay]))))
        res.append(outs)
    return res


# ------------------------------------------------------------------------ assertions
def _tolerance_of(ref, outs):
    """max |candidate - ref| as er computes it (NaN distances count 0)."""
    with np.errstate(invalid="ignore", over="ignore"):  # a span past float64 is inf
        c = np.array(outs + [ref], dtype=np.float64)
        lo, hi = np.fmin.reduce(c), np.fmax.reduce(c)
        t = np.fmax(hi - ref, ref - lo)
    return 0.0 if math.isnan(t) else float(t)


def check_models(result, sims, inputs):
    """``sims``: per element, per part, the simulated outputs. Soundness and tightness."""
    __tracebackhide__ = True
    fmt = result.rounded.dtype
    ref = result.rounded._wide().reshape(-1)
    tol = np.asarray(result.tolerance()).reshape(-1)
    n = len(sims)
    bad = []
    for k in range(len(sims[0])):  # each model in turn, as an array
        vals = []
        for i in range(n):
            parts = sims[i]
            vals.append(complex(parts[0][k], parts[1][k]) if fmt.kind == "complex"
                        else parts[0][k])
        actual = er.asarray(np.array(vals, dtype=np.complex128 if fmt.kind == "complex"
                                     else np.float64), fmt)
        cov = result.covers(actual)
        for i in np.flatnonzero(~cov.mask.reshape(-1)):
            bad.append(f"  model {k} at {inputs[i]}: {vals[i]!r} not covered "
                       f"(reference {ref[i]!r})")
    for i in range(n):
        refs = [ref[i].real, ref[i].imag] if fmt.kind == "complex" else [ref[i]]
        want = max(_tolerance_of(float(r), [float(v) for v in part])
                   for r, part in zip(refs, sims[i], strict=True))
        if not (tol[i] == want or (math.isnan(tol[i]) and math.isnan(want))):
            bad.append(f"  tolerance at {inputs[i]}: exactref {tol[i]!r}, simulated worst "
                       f"case {want!r}")
        elif 0 < want < math.inf:
            reached = any(abs(float(v) - float(r)) == want
                          for r, part in zip(refs, sims[i], strict=True) for v in part
                          if not math.isnan(float(v)))
            if not reached:
                bad.append(f"  tolerance {want!r} at {inputs[i]} reached by no model")
    if bad:
        pytest.fail(f"{len(bad)} problems:\n" + "\n".join(bad[:10]), pytrace=False)


def _values(fmt, seed, n=12):
    rng = np.random.default_rng(seed)
    x, y = pairs(fmt, 2, rng)
    keep = rng.permutation(len(x))[:n]
    x, y = x[keep], y[keep]
    xr, yr = random_bits(fmt.component, n, rng), random_bits(fmt.component, n, rng)
    if fmt.kind == "complex":
        return x, y
    return np.concatenate([x, xr]), np.concatenate([y, yr])


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", REAL, ids=lambda f: f.name)
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32 - 1), alpha=ALPHAS)
def test_add_real_models(fmt, mode, seed, alpha):
    x, y = _values(fmt, seed)
    r = er.add(er.asarray(x, fmt), er.asarray(y, fmt), alpha=alpha, rounding=mode)
    sims = [[sim_add_real(a, b, alpha, fmt, mode)] for a, b in zip(x, y, strict=True)]
    check_models(r, sims, list(zip(x, y, strict=True)))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", REAL, ids=lambda f: f.name)
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32 - 1))
def test_multiply_real_models(fmt, mode, seed):
    x, y = _values(fmt, seed)
    r = er.multiply(er.asarray(x, fmt), er.asarray(y, fmt), rounding=mode)
    sims = [[sim_mul_real(a, b, fmt, mode)] for a, b in zip(x, y, strict=True)]
    check_models(r, sims, list(zip(x, y, strict=True)))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", COMPLEX, ids=lambda f: f.name)
@settings(max_examples=3)
@given(seed=st.integers(0, 2**32 - 1), alpha=CALPHAS)
@example(seed=283500, alpha=0.5 - 2j)  # candidates spanning past float64: tolerance inf, quietly
def test_complex_models(fmt, mode, seed, alpha):
    x, y = _values(fmt, seed)
    xa, ya = er.asarray(x, fmt), er.asarray(y, fmt)
    inputs = list(zip(x, y, strict=True))
    r = er.multiply(xa, ya, rounding=mode)
    check_models(r, [sim_mul_complex(complex(a), complex(b), fmt, mode) for a, b in inputs],
                 inputs)
    if alpha.real != 0 and alpha.imag != 0:
        r = er.add(xa, ya, alpha=alpha, rounding=mode)
        check_models(r, [sim_add_complex(complex(a), complex(b), alpha, fmt, mode)
                         for a, b in inputs], inputs)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", [FORMATS["float16"], FORMATS["bfloat16"]],
                         ids=lambda f: f.name)
@settings(max_examples=4)
@given(seed=st.integers(0, 2**32 - 1), alpha=ALPHAS)
def test_stored_form_chain_and_any_of(fmt, mode, seed, alpha):
    """``add(x, multiply(y, alpha, dtype=F))`` covers every simulated stored form, and
    ``any_of`` of it and the plain form covers both forms' simulations."""
    x, y = _values(fmt, seed)
    xa, ya = er.asarray(x, fmt), er.asarray(y, fmt)
    stored = er.add(xa, er.multiply(ya, alpha, dtype=fmt, rounding=mode), rounding=mode)
    plain = er.add(xa, ya, alpha=alpha, rounding=mode)
    both = er.any_of(plain, stored)
    for sim, ref in ((sim_stored, stored), (sim_stored, both), (sim_add_real, both)):
        outs = [sim(a, b, alpha, fmt, mode) for a, b in zip(x, y, strict=True)]
        for k in range(len(outs[0])):
            actual = er.asarray(np.array([o[k] if k < len(o) else o[0] for o in outs]), fmt)
            cov = ref.covers(actual)
            assert cov.all(), (sim.__name__, k, cov.summary())


def test_tolerance_zero_for_single_rounding():
    """A product of float32 values, or a sum with alpha 1, rounds once: tolerance 0."""
    x = er.asarray([0.1, 0.2, 1e30], "float32")
    y = er.asarray([0.3, 0.7, 1e-30], "float32")
    assert er.multiply(x, y).tolerance().tolist() == [0.0, 0.0, 0.0]
    assert er.add(x, y).tolerance().tolist() == [0.0, 0.0, 0.0]


def test_tolerance_nonzero_for_alpha_in_bfloat16():
    """bfloat16 with alpha: the float32 product and sum can reach another bfloat16 value."""
    rng = np.random.default_rng(7)
    x = er.asarray(random_bits(FORMATS["bfloat16"], 4000, rng), "bfloat16")
    y = er.asarray(random_bits(FORMATS["bfloat16"], 4000, rng), "bfloat16")
    tol = np.asarray(er.add(x, y, alpha=1 / 3).tolerance())
    assert np.nanmax(np.where(np.isfinite(tol), tol, 0)) > 0
