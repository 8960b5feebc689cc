"""Where PyTorch 2.13's CPU kernels of the elementwise family depart from the mathematical
answer, pinned: PyTorch's output, the exact answer (exactref's op, which does not cover it),
and what the equivalent allows (it covers PyTorch). If a PyTorch release changes one of these,
the test says which.

Several departures depend on the loop PyTorch runs (its vectorized body or its scalar loop) or
on the build (with or without FMA contraction): those tests measure what each loop gives here
and accept each measured value, so they hold on any CPU. A PyTorch bug (a result no correct
kernel gives) is a skip with the finding where this machine shows it, and the equivalent is
checked not to cover it; the one found is the vectorized ``fmod``'s NaN. An input that kills
PyTorch (``div(INT_MIN, -1, rounding_mode="trunc")`` on int32 and int64) is never run: the
equivalent raises :class:`exactref.equivalents.torch.TorchCrash` instead.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import exactref as er

torch = pytest.importorskip("torch")
ert = pytest.importorskip("exactref.equivalents.torch")

h = float.fromhex
NAN, INF = math.nan, math.inf


def t(values, dtype=torch.float32):
    return torch.tensor([h(v) if isinstance(v, str) else v for v in values], dtype=dtype)


def one(x):
    """The one value of a one-element tensor, exactly (complex as a pair of floats)."""
    v = x.reshape(-1)[0].item()
    return (v.real, v.imag) if isinstance(v, complex) else v


def same(a, b) -> bool:
    """Equal values, NaN equal to NaN, zeros of the same sign (pairs part by part)."""
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, int) and isinstance(b, int):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def pinned(torch_out, math_ref, equivalent, *, torch_values, exact, not_allowed=(),
           outside_math=True):
    """PyTorch's output (every element the same value) is one of ``torch_values`` (the values
    measured on its paths); the mathematical answer (``math_ref``, on one element) is
    ``exact``, and where ``outside_math`` its tolerance (the op's own modelled
    implementations) does not cover PyTorch's value; the equivalent (on PyTorch's inputs)
    covers PyTorch's output and every measured value, and none of ``not_allowed``."""
    __tracebackhide__ = True
    got = one(torch_out)
    assert any(same(got, v) for v in torch_values), f"PyTorch now gives {got!r}"
    assert same(one(math_ref.rounded.torch()), exact), one(math_ref.rounded.torch())
    if outside_math and not same(got, exact):
        assert not math_ref.covers(torch_out.reshape(-1)[:1]).all()
    assert equivalent.covers(torch_out).all()
    for v in torch_values:
        assert equivalent.covers(_like(torch_out, v)).all(), v
    for v in not_allowed:
        assert not equivalent.covers(_like(torch_out, v)).all(), v


def _like(x, v):
    """A tensor of ``x``'s dtype and shape, every element ``v``."""
    if isinstance(v, tuple):
        z = np.empty(1, np.complex128)
        z.real, z.imag = v
        return torch.from_numpy(z).to(x.dtype).expand(x.shape).contiguous()
    return torch.full(tuple(x.shape), v, dtype=x.dtype)


def paths(fn, *xs, n=64):
    """``[(output, inputs)]`` of ``fn`` on contiguous tensors of ``n`` copies of the first
    elements (the vectorized body) and on those elements alone (the scalar loop)."""
    vec = [x.reshape(-1)[:1].repeat(n) for x in xs]
    scalar = [x.reshape(-1)[:1] for x in xs]
    return [(fn(*vec), vec), (fn(*scalar), scalar)]


# ===================================================================== roots
def test_sqrt_is_mkl_faithful():
    """torch.sqrt float32/float64 is MKL's vsSqrt/vdSqrt (VML_HA): faithful, not correctly
    rounded. Here: float32 sqrt(0x1.3b568ap+4) is 0x1.1c1fc8p+2, the correctly rounded
    0x1.1c1fcap+2 (float64 sqrt(0x1.62bbd62d8e97bp-10): ...cd7p-5 for ...cd6p-5). The
    equivalent allows both neighbours of the exact root, no further."""
    for x, mkl, once, below, dtype in (
            ("0x1.3b568ap+4", "0x1.1c1fc8p+2", "0x1.1c1fcap+2", "0x1.1c1fc6p+2", torch.float32),
            ("0x1.62bbd62d8e97bp-10", "0x1.2d599b2301cd7p-5", "0x1.2d599b2301cd6p-5",
             "0x1.2d599b2301cd5p-5", torch.float64)):
        a = t([x], dtype)
        for out, (v,) in paths(torch.sqrt, a):
            pinned(out, er.sqrt(a), ert.sqrt(v), torch_values=(h(mkl), h(once)), exact=h(once),
                   not_allowed=(h(below),))


def test_rsqrt_rounds_twice():
    """float32 rsqrt is 1 / sqrt(x), two roundings: rsqrt(0x1.17bd28p+50) is 0x1.e9cb46p-26,
    the correctly rounded 0x1.e9cb48p-26 (er.rsqrt's tolerance models the two roundings too;
    the equivalent allows only them)."""
    a = t(["0x1.17bd28p+50"])
    for out, (v,) in paths(torch.rsqrt, a):
        pinned(out, er.rsqrt(a), ert.rsqrt(v), torch_values=(h("0x1.e9cb46p-26"),),
               exact=h("0x1.e9cb48p-26"), not_allowed=(h("0x1.e9cb48p-26"),),
               outside_math=False)


def test_rsqrt_bfloat16_vector_and_scalar_loops_differ():
    """bfloat16 rsqrt(0x1.6cp-24): the vector loop rounds 1 / sqrt(x) from float32 once:
    0x1.aep+11; the scalar loop rounds the bfloat16 square root first: 0x1.acp+11."""
    a = t(["0x1.6cp-24"], torch.bfloat16)
    measured = (h("0x1.aep+11"), h("0x1.acp+11"))
    runs = paths(torch.rsqrt, a)
    assert one(runs[1][0]) == h("0x1.acp+11")
    strided = a.repeat(64)[::2]
    for out, (v,) in runs + [(torch.rsqrt(strided), (strided,))]:
        pinned(out, er.rsqrt(a), ert.rsqrt(v), torch_values=measured, exact=h("0x1.aep+11"),
               outside_math=False)


def test_complex_sqrt_is_glibc_csqrt():
    """complex sqrt is glibc's csqrt (NumPy's too): up to 2 units in the last place per part.
    complex64 sqrt(0x1.0a56e8p+12 + 0x1.1d3842p+12 i) is (0x1.21e676p+6, 0x1.f7bbd2p+4); the
    correctly rounded parts are (0x1.21e674p+6, 0x1.f7bbd6p+4)."""
    a = torch.tensor([complex(h("0x1.0a56e8p+12"), h("0x1.1d3842p+12"))], dtype=torch.complex64)
    got, exact = (h("0x1.21e676p+6"), h("0x1.f7bbd2p+4")), (h("0x1.21e674p+6"),
                                                           h("0x1.f7bbd6p+4"))
    for out, (v,) in paths(torch.sqrt, a, n=8):
        pinned(out, er.sqrt(a), ert.sqrt(v), torch_values=(got,), exact=exact,
               not_allowed=((h("0x1.21e674p+6"), h("0x1.f7bbccp+4")),))


def test_complex_abs_scalar_loop_is_faithful():
    """complex128 abs: the scalar loop (glibc's hypot) is faithful: |0x1.1d41b92f33f73p+14 -
    0x1.81f7e8d632e4ap+16 i| is 0x1.888058fb40d99p+16 there, 0x1.888058fb40d9ap+16 (correctly
    rounded) in the vector loop (Sleef's hypot, u05)."""
    a = torch.tensor([complex(h("0x1.1d41b92f33f73p+14"), h("-0x1.81f7e8d632e4ap+16"))],
                     dtype=torch.complex128)
    measured = (h("0x1.888058fb40d99p+16"), h("0x1.888058fb40d9ap+16"))
    for out, (v,) in paths(torch.abs, a, n=8):
        pinned(out, er.abs(a), ert.abs(v), torch_values=measured, exact=measured[1],
               not_allowed=(h("0x1.888058fb40d98p+16"),))


def test_abs_of_wide_complex():
    """|1.5 * 2**512 + 1.25 i|: the parts' squares leave float64 (exactref's core once
    returned 0 here); PyTorch gives 1.5 * 2**512, the modulus rounded."""
    a = torch.tensor([complex(1.5 * 2.0**512, 1.25)], dtype=torch.complex128)
    out = torch.abs(a)
    assert one(out) == 1.5 * 2.0**512
    assert er.abs(a).rounded.tolist() == [1.5 * 2.0**512]
    assert ert.abs(a).covers(out).all()


# ================================================================= quotients
def test_divide_bfloat16_by_python_scalar_keeps_it_in_float32():
    """bfloat16 x / 0.1: the divisor is read as float32 0.1 and the float32 quotient rounded
    into bfloat16: 0x1.3cp+5 / 0.1 is 0x1.8cp+8, the quotient 0x1.8ap+8 rounded once."""
    a = t(["0x1.3cp+5"], torch.bfloat16)
    for v in (a, a.repeat(64)):
        pinned(torch.div(v, 0.1), er.divide(a, 0.1), ert.divide(v, 0.1),
               torch_values=(h("0x1.8cp+8"),), exact=h("0x1.8ap+8"),
               not_allowed=(h("0x1.8ap+8"),), outside_math=False)


def test_div_trunc_rounds_the_quotient_first():
    """float32 div(rounding_mode="trunc") is trunc(rnd(x / y)): -0x1.ac4208p+6 /
    0x1.f9342cp-14 gives -0x1.b204ep+19; trunc of the quotient is -0x1.b204cp+19."""
    a, b = t(["-0x1.ac4208p+6"]), t(["0x1.f9342cp-14"])
    for out, (u, v) in paths(lambda x, y: torch.div(x, y, rounding_mode="trunc"), a, b):
        pinned(out, er.divide(a, b, rounding_mode="trunc"),
               ert.divide(u, v, rounding_mode="trunc"), torch_values=(h("-0x1.b204ep+19"),),
               exact=h("-0x1.b204cp+19"), not_allowed=(h("-0x1.b204cp+19"),))


def test_div_trunc_bfloat16_scalar_truncates_in_float32():
    """bfloat16 div(x, 0.1, rounding_mode="trunc") is rnd(trunc(fl32(x / f32(0.1)))):
    0x1.48p+4 / 0.1 gives 205 (0x1.9ap+7); trunc of the exact quotient is 204."""
    a = t(["0x1.48p+4"], torch.bfloat16)
    out = torch.div(a, 0.1, rounding_mode="trunc")
    pinned(out, er.divide(a, 0.1, rounding_mode="trunc"),
           ert.divide(a, 0.1, rounding_mode="trunc"), torch_values=(h("0x1.9ap+7"),),
           exact=h("0x1.98p+7"), not_allowed=(h("0x1.98p+7"),))


@pytest.mark.parametrize("case", [
    ("0x1.1745ecp+35", "0x1.2499p+12", torch.float32, "0x1.e8af2p+22", "0x1.e8af24p+22"),
    ("0x1.21629ffe866e8p+58", "0x1.2169168c0a015p+6", torch.float64,
     "0x1.fff490e8909f8p+51", "0x1.fff490e8909fap+51"),
], ids=["float32", "float64"])
def test_floor_divide_is_cpythons_algorithm(case):
    """floor_divide is c10::div_floor_floating (CPython's algorithm): for |x / y| >=
    2**(p - 2) its rounded quotient can land on the wrong integer: float32 0x1.1745ecp+35 //
    0x1.2499p+12 is 8006600, the floor of the quotient 8006601."""
    x, y, dtype, got, exact = case
    a, b = t([x], dtype), t([y], dtype)
    for out, (u, v) in paths(torch.floor_divide, a, b):
        pinned(out, er.floor_divide(a, b), ert.floor_divide(u, v), torch_values=(h(got),),
               exact=h(exact), not_allowed=(h(exact),))


def test_floor_divide_float16_rounds_every_step():
    """float16 tensor // tensor rounds every step of the algorithm in float16: 0x1.274p+5 //
    0x1.764p-6 is 1614; the floor of the quotient is 1615, which a one-element divisor (read
    as a float32 scalar, the algorithm in float32) gives."""
    a, b = t(["0x1.274p+5"], torch.float16), t(["0x1.764p-6"], torch.float16)
    for out, (u, v) in paths(torch.floor_divide, a, b):
        if v.numel() > 1:  # tensor by tensor
            pinned(out, er.floor_divide(a, b), ert.floor_divide(u, v), torch_values=(1614.0,),
                   exact=1615.0, not_allowed=(1615.0,))
        else:  # a one-element divisor: float32
            pinned(out, er.floor_divide(a, b), ert.floor_divide(u, v), torch_values=(1615.0,),
                   exact=1615.0, not_allowed=(1614.0,))


def test_remainder_zero_takes_the_dividends_sign():
    """remainder(-0., 1.) and remainder(-2., 1.) are -0. (fmod's zero, the sign of x); Python,
    NumPy and the mathematical convention give +0 (the divisor's sign)."""
    for x in (-0.0, -2.0):
        a, b = t([x]), t([1.0])
        for out, (u, v) in paths(torch.remainder, a, b):
            pinned(out, er.remainder(a, b), ert.remainder(u, v), torch_values=(-0.0,),
                   exact=0.0, not_allowed=(0.0,))


def test_python_scalars_are_rounded_to_the_dtype_first():
    """sub, remainder (and fmod, clamp, comparisons) round a Python scalar to the tensor's
    dtype first: bfloat16 1 - (2**-9 + 2**-20) is 1.0 (the exact difference rounds to
    0x1.fep-1); bfloat16 remainder(39.5, 0.1) uses bfloat16's 0.1 = 0x1.9ap-4."""
    a = t([1.0], torch.bfloat16)
    s = 2.0**-9 + 2.0**-20
    pinned(torch.sub(a, s), er.subtract(a, s), ert.subtract(a, s), torch_values=(1.0,),
           exact=h("0x1.fep-1"), not_allowed=(h("0x1.fep-1"),))
    a = t([39.5], torch.bfloat16)
    pinned(torch.remainder(a, 0.1), er.remainder(a, 0.1), ert.remainder(a, 0.1),
           torch_values=(h("0x1.f8p-5"),), exact=h("0x1.9ap-4"))


def test_integer_division_by_zero_raises():
    """Integer division by zero raises in PyTorch (RuntimeError: ZeroDivisionError) for
    trunc, floor, remainder and fmod; the equivalents raise ZeroDivisionError."""
    a, b = torch.tensor([7, 5], dtype=torch.int32), torch.tensor([2, 0], dtype=torch.int32)
    calls = [(lambda x, y: torch.div(x, y, rounding_mode="trunc"),
              lambda x, y: ert.divide(x, y, rounding_mode="trunc")),
             (torch.floor_divide, ert.floor_divide), (torch.remainder, ert.remainder),
             (torch.fmod, ert.fmod)]
    for tfn, efn in calls:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            tfn(a, b)
        with pytest.raises(ZeroDivisionError):
            efn(a, b)
    # true division gives float32 infinities
    assert ert.divide(a, b).covers(torch.div(a, b)).all()


def test_int_min_over_minus_one():
    """div(INT_MIN, -1, rounding_mode="trunc") kills PyTorch on int32 and int64 (SIGFPE): the
    equivalent raises TorchCrash and PyTorch is never called. int8 and int16 wrap to INT_MIN,
    floor_divide gives INT_MIN, remainder and fmod 0."""
    for dtype in (torch.int32, torch.int64):
        lo = torch.iinfo(dtype).min
        a, b = torch.tensor([lo], dtype=dtype), torch.tensor([-1], dtype=dtype)
        with pytest.raises(ert.TorchCrash, match="SIGFPE"):
            ert.divide(a, b, rounding_mode="trunc")
        for tfn, efn in ((torch.floor_divide, ert.floor_divide), (torch.remainder,
                                                                  ert.remainder),
                         (torch.fmod, ert.fmod)):
            assert efn(a, b).covers(tfn(a, b)).all()
        assert one(torch.floor_divide(a, b)) == lo
    for dtype in (torch.int8, torch.int16):
        lo = torch.iinfo(dtype).min
        a, b = torch.tensor([lo], dtype=dtype), torch.tensor([-1], dtype=dtype)
        out = torch.div(a, b, rounding_mode="trunc")
        assert one(out) == lo
        assert ert.divide(a, b, rounding_mode="trunc").covers(out).all()


def test_fmod_vector_loop_nan_is_a_torch_bug():
    """The vectorized fmod (Sleef's fmod, float32, bfloat16 and float64, also inside
    remainder) returns NaN where |x / y| exceeds the format's range (about 2**128, 2**1024);
    the scalar loop (std::fmod) gives the exact value. fmod(0x1.fffffep+127, 0.999) is
    0.8475871682167053. The equivalent does not cover the NaN: no correct kernel gives it."""
    x, y = t([torch.finfo(torch.float32).max]), t([0.999])
    exact = er.fmod(x, y).rounded.tolist()[0]
    found = []
    for tfn, efn in ((torch.fmod, ert.fmod), (torch.remainder, ert.remainder)):
        (vec, vin), (scalar, sin) = paths(tfn, x, y)
        assert one(scalar) == exact
        assert efn(*sin).covers(scalar).all()
        if math.isnan(one(vec)):
            assert not efn(*vin).covers(vec).any()
            found.append(tfn.__name__)
        else:
            assert efn(*vin).covers(vec).all()
    if found:
        pytest.skip(f"torch bug on this CPU (torch {torch.__version__}, CPU capability "
                    f"{torch.backends.cpu.get_cpu_capability()}): the vectorized "
                    f"{' and '.join(found)} return NaN for x = 0x1.fffffep+127, y = 0.999 "
                    f"(fmod: {exact!r}; |x / y| is past float32's range); the equivalent "
                    f"rightly does not cover it")


# ============================================================== multiply-adds
def test_addcmul_fma_depends_on_the_build():
    """float32 addcmul is fma(fl(value * t1), t2, input) on AVX2/AVX512 builds, every step
    rounded on the default build: addcmul(-1, 1 + 2**-12, 1 + 2**-12) is 2**-11 + 2**-24
    fused, 2**-11 unfused; with value=0.3, addcmul(-0x1.6daa96p+0, 0x1.bccfbcp-1,
    0x1.0bde26p+1) is -0x1.c412c6p-1 here, the correctly rounded -0x1.c412c8p-1."""
    s, a = t([-1.0]), t([1 + 2.0**-12])
    for out, ins in paths(torch.addcmul, s, a, a):
        # fused on AVX2/AVX512, unfused under ATEN_CPU_CAPABILITY=default (measured): er.addcmul
        # models both, so neither is outside the mathematical op's tolerance
        pinned(out, er.addcmul(s, a, a), ert.addcmul(*ins),
               torch_values=(2.0**-11 + 2.0**-24, 2.0**-11), exact=2.0**-11 + 2.0**-24,
               outside_math=False)
    s, a, b = t(["-0x1.6daa96p+0"]), t(["0x1.bccfbcp-1"]), t(["0x1.0bde26p+1"])
    for out, ins in paths(lambda *v: torch.addcmul(*v, value=0.3), s, a, b):
        pinned(out, er.addcmul(s, a, b, value=0.3), ert.addcmul(*ins, value=0.3),
               torch_values=(h("-0x1.c412c6p-1"),), exact=h("-0x1.c412c8p-1"),
               not_allowed=(h("-0x1.c412c8p-1"),))


def test_addcmul_bfloat16_value_is_a_float32():
    """bfloat16 addcmul reads value as a float32 (not rounded to bfloat16) and rounds the
    float32 result once: addcmul(-0x1.44p-3, -0x1.4ap-1, -0x1.6p+0, value=0.3) is 0x1.bap-4,
    the exact value rounds to 0x1.b8p-4."""
    s, a, b = (t([v], torch.bfloat16) for v in ("-0x1.44p-3", "-0x1.4ap-1", "-0x1.6p+0"))
    for out, ins in paths(lambda *v: torch.addcmul(*v, value=0.3), s, a, b):
        pinned(out, er.addcmul(s, a, b, value=0.3), ert.addcmul(*ins, value=0.3),
               torch_values=(h("0x1.bap-4"),), exact=h("0x1.b8p-4"),
               not_allowed=(h("0x1.b8p-4"),))


def test_addcdiv_divides_value_times_t1():
    """float32 addcdiv is input + fl(fl(value * t1) / t2), not rounded once: addcdiv(
    0x1.3bcb74p+0, -0x1.9928e8p-2, 0x1.090004p-3, value=0.3) is 0x1.3a8bc8p-2, the exact
    value rounds to 0x1.3a8bcap-2 (er.addcdiv's tolerance models that order too; the
    equivalent allows only it)."""
    s, a, b = t(["0x1.3bcb74p+0"]), t(["-0x1.9928e8p-2"]), t(["0x1.090004p-3"])
    for out, ins in paths(lambda *v: torch.addcdiv(*v, value=0.3), s, a, b):
        pinned(out, er.addcdiv(s, a, b, value=0.3), ert.addcdiv(*ins, value=0.3),
               torch_values=(h("0x1.3a8bc8p-2"),), exact=h("0x1.3a8bcap-2"),
               not_allowed=(h("0x1.3a8bcap-2"),), outside_math=False)


def test_addcmul_integer_value_truncates():
    """Integer addcmul converts value with value.to<int>(): 2.5 is 2."""
    a = torch.tensor([5, -5], dtype=torch.int32)
    out = torch.addcmul(a, a, a, value=2.5)
    assert out.tolist() == [55, 45]
    assert ert.addcmul(a, a, a, value=2.5).covers(out).all()


# ================================================================ selections
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_max_min_zero_ties_depend_on_the_loop(name):
    """maximum(+0., -0.): the vector loop (_mm256_max_ps) returns y, -0.; the scalar loop
    (std::max) x, +0. IEEE 754-2019 (er.maximum) says +0 (er.minimum: -0). Either is
    allowed."""
    tfn, efn = getattr(torch, name), getattr(ert, name)
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        a, b = t([0.0], dtype), t([-0.0], dtype)
        exact = 0.0 if name == "maximum" else -0.0
        runs = paths(tfn, a, b)
        assert same(one(runs[1][0]), 0.0)  # the scalar loop returns x
        for out, (u, v) in runs:
            pinned(out, getattr(er, name)(a, b), efn(u, v), torch_values=(0.0, -0.0),
                   exact=exact)


def test_fmax_fmin_ties_and_signaling_nan():
    """fmax/fmin run std::fmax/fmin (glibc): bfloat16 fmax(+0., -0.) is -0. (y; float32 gives
    x), and a signaling NaN operand gives NaN (IEEE 754-2008's maxNum), where the
    mathematical answer ignores it: fmax(1., sNaN) is NaN, not 1. float16 converts to float32
    first, which quiets the NaN."""
    a, b = t([0.0], torch.bfloat16), t([-0.0], torch.bfloat16)
    pinned(torch.fmax(a, b), er.fmax(a, b), ert.fmax(a, b), torch_values=(-0.0,), exact=0.0)
    snan = torch.from_numpy(np.array([0x7FA00000], dtype=np.uint32).view(np.float32).copy())
    x = t([1.0])
    for fn in ("fmax", "fmin"):
        out = getattr(torch, fn)(x, snan)
        assert math.isnan(one(out)), one(out)
        with np.errstate(invalid="ignore"):
            assert not getattr(er, fn)(x, snan).covers(out).all()
            assert getattr(ert, fn)(x, snan).covers(out).all()
    h16 = torch.from_numpy(np.array([0x7D00], dtype=np.uint16).view(np.float16).copy())
    out = torch.fmax(t([1.0], torch.float16), h16)
    assert one(out) == 1.0
    assert ert.fmax(t([1.0], torch.float16), h16).covers(out).all()


def test_clamp_scalar_bound_tie_returns_x():
    """clamp(-0., min=0.) is -0. (std::max(x, min) and _mm256_max_ps(min, x) return x on a
    tie); er.clamp, IEEE's maximum, gives +0."""
    a = t([-0.0])
    for out, (v,) in paths(lambda x: torch.clamp(x, min=0.0), a):
        pinned(out, er.clamp(a, 0.0), ert.clamp(v, 0.0), torch_values=(-0.0,), exact=0.0,
               not_allowed=(0.0,))


def test_clamp_tensor_bound_ties_depend_on_the_loop():
    """clamp with tensor bounds: the vector loop minimum(maximum(x, min), max) returns the
    bound on a tie, the scalar loop std::min(std::max(x, min), max) returns x: clamp(-0.,
    min=+0. tensor) is +0. or -0.; er.clamp says +0."""
    a, lo = t([-0.0]), t([0.0])
    for out, (u, v) in paths(lambda x, m: torch.clamp(x, m, None), a, lo):
        pinned(out, er.clamp(a, lo), ert.clamp(u, v), torch_values=(0.0, -0.0), exact=0.0)
    for out, (u, v) in paths(lambda x, m: torch.clamp(x, m, torch.ones_like(x)), a, lo):
        pinned(out, er.clamp(a, lo), ert.clamp(u, v, torch.ones_like(u)),
               torch_values=(0.0, -0.0), exact=0.0)


def test_clamp_nan_bound_fills_nan_even_without_a_kernel():
    """A NaN scalar bound fills the result with NaN before any kernel runs: float8 tensors,
    which have no clamp kernel, give NaN too."""
    x = torch.tensor([1.0, 2.0]).to(torch.float8_e4m3fn)
    out = torch.clamp(x, min=NAN, max=1.0)
    assert all(math.isnan(v) for v in out.float().tolist())
    assert ert.clamp(x, NAN, 1.0).covers(out).all()
    with pytest.raises(NotImplementedError):
        torch.clamp(x, min=0.0)
    with pytest.raises(ert.TorchUnsupported):
        ert.clamp(x, 0.0)


def test_negative_complex_vector_loop_gives_plus_zero():
    """complex64 neg: the scalar loop flips both signs (neg(0-0j) is -0+0j), the vector loop
    computes 0 - x, so a zero part is +0 there: 0+0j."""
    z = torch.tensor([complex(0.0, -0.0)], dtype=torch.complex64)
    runs = paths(torch.neg, z)
    assert same(one(runs[1][0]), (-0.0, 0.0))
    for out, (v,) in runs:
        pinned(out, er.negative(z), ert.negative(v), torch_values=((0.0, 0.0), (-0.0, 0.0)),
               exact=(-0.0, 0.0))


def test_abs_float8_vector_loop_keeps_negative_zero():
    """float8_e4m3fn and float8_e5m2 abs(-0.): the vector loop (64 elements a step) keeps
    -0., the scalar loop gives +0."""
    for dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        z = torch.tensor([-0.0]).to(dtype)
        for out, (v,) in paths(torch.abs, z):
            got = one(out.float())
            assert got == 0
            assert ert.abs(v).covers(out).all()
            if math.copysign(1, got) < 0:
                assert not er.abs(z).covers(out[:1]).all()


# =============================================================== comparisons
def test_comparisons_promote_first():
    """PyTorch compares in the operands' common dtype: int64 16777217 == float32 16777216. is
    True (both become float32; er.equal compares the values as given: False); bfloat16 0.1 ==
    0.1 is True (the scalar becomes bfloat16; exactly, bfloat16's 0.1 is not 0.1); uint8 200
    > -1 is False (-1 becomes 255); uint8 0 == 256 is True (256 wraps to 0)."""
    cases = [(torch.tensor([16777217]), t([16777216.0]), torch.eq, ert.equal, er.equal, True),
             (t([0.1], torch.bfloat16), 0.1, torch.eq, ert.equal, er.equal, True),
             (torch.tensor([200], dtype=torch.uint8), -1, torch.gt, ert.greater, er.greater,
              False),
             (torch.tensor([0], dtype=torch.uint8), 256, torch.eq, ert.equal, er.equal, True)]
    for x, y, tfn, efn, mfn, want in cases:
        out = tfn(x, y)
        assert one(out) is want, (x, y)
        assert efn(x, y).covers(out).all()
        assert not efn(x, y).covers(~out).all()
        try:
            mathematical = mfn(x, y)
        except (OverflowError, ValueError):  # an int the uint8 operand's format cannot hold
            continue
        assert mathematical.rounded.tolist() == [not want]


# ====================================================================== casts
def test_casts_round_twice_through_float32():
    """float64 -> float16, bfloat16 and float8 goes through float32: 1 + 2**-11 + 2**-40 is
    float16 1.0 (once: 1 + 2**-10); 1 + 2**-8 + 2**-30 is bfloat16 1.0 (once: 1 + 2**-7);
    1 + 2**-4 + 2**-30 is float8_e4m3fn 1.0 (once: 1.125); int64 2**24 + 2**16 + 1 is
    bfloat16 2**24 (once: 2**24 + 2**17)."""
    cases = [(1 + 2.0**-11 + 2.0**-40, torch.float64, "float16", 1 + 2.0**-10),
             (1 + 2.0**-8 + 2.0**-30, torch.float64, "bfloat16", 1 + 2.0**-7),
             (1 + 2.0**-4 + 2.0**-30, torch.float64, "float8_e4m3fn", 1.125),
             (2**24 + 2**16 + 1, torch.int64, "bfloat16", 2.0**24 + 2.0**17)]
    for v, src, target, once in cases:
        x = torch.tensor([v], dtype=src)
        out = x.to(getattr(torch, target))
        assert one(out.double()) == (1.0 if src is torch.float64 else 2.0**24)
        assert er.cast(x, target).rounded.tolist() == [once]
        assert not er.cast(x, target).covers(out).all()
        assert ert.cast(x, to=target).covers(out).all()


def test_float_to_int_casts_follow_x86():
    """Float -> integer casts are x86's truncating conversions: NaN, infinities and
    out-of-range values give INT_MIN into int32 and int64; int8, int16, uint8, uint16 take the
    low bits of the int32 conversion (300. -> int8 44, -1. -> uint8 255, NaN -> 0), except
    float64 -> uint8 which converts to int64 first (2**31 + 7 -> 7); the fnuz float8 formats'
    NaN gives 0. float32 -> uint32: the vector loop gives 2**31 for NaN, -inf and -3e9, the
    scalar loop 0, 0 and 1294967296 (the int64 conversion's low bits)."""
    x = torch.tensor([NAN, INF, -INF, 3e9, 300.0, -1.0])
    for dtype in (torch.int32, torch.int64, torch.int8, torch.uint8, torch.int16,
                  torch.uint16, torch.uint64, torch.bool):
        target = er.dtype(dtype).name
        assert ert.cast(x, to=target).covers(x.to(dtype)).all(), target
    assert x.to(torch.int32).tolist()[:3] == [-(2**31)] * 3
    assert x[4:].to(torch.int8).tolist() == [44, -1]
    assert x[5:].to(torch.uint8).tolist() == [255]
    d = torch.tensor([2.0**31 + 7], dtype=torch.float64)
    assert one(d.to(torch.uint8)) == 7
    assert ert.cast(d, to="uint8").covers(d.to(torch.uint8)).all()
    fnuz = torch.tensor([NAN]).to(torch.float8_e4m3fnuz)
    assert one(fnuz.to(torch.int32)) == 0
    assert ert.cast(fnuz, to="int32").covers(fnuz.to(torch.int32)).all()
    u = torch.tensor([NAN, -INF, -3e9])
    measured = {(0, 0, 1294967296), (2**31, 2**31, 2**31)}
    for out in (u.to(torch.uint32), u.repeat(32).to(torch.uint32)[:3]):
        assert tuple(out.tolist()) in measured
        assert ert.cast(u, to="uint32").covers(out).all()


def test_float8_e4m3fn_saturates():
    """float32 -> float8_e4m3fn saturates: inf and 500. become 448 (ml_dtypes and exactref's
    default: NaN); NaN stays NaN."""
    x = torch.tensor([INF, 500.0, NAN])
    out = x.to(torch.float8_e4m3fn)
    assert out.float().tolist()[:2] == [448.0, 448.0]
    assert ert.cast(x, to="float8_e4m3fn").covers(out).all()


# ==================================================================== complex
def test_complex_division_by_zero_uses_the_magnitudes():
    """c10::complex division by a zero divides each part by |c| and |d|: (-2500 + 1.4e6 i) /
    -0. is -inf + inf i; the exact reference (C99 Annex G, copysign(inf, c) * a) is
    inf - inf i."""
    z = torch.tensor([complex(-2500.0, 1.4e6)], dtype=torch.complex64)
    out = z / -0.0
    pinned(out, er.divide(z, -0.0), ert.divide(z, -0.0), torch_values=((-INF, INF),),
           exact=(INF, -INF))


def test_complex_reciprocal_of_an_infinite_part():
    """1 / (x + inf i) is 0 - 0i by Smith's division; er.reciprocal gives NaN in the
    imaginary part (an exactref core bug: er.divide(1, x) gives the zero)."""
    z = torch.tensor([complex(-2.5e-4, INF)], dtype=torch.complex64)
    out = torch.reciprocal(z)
    assert same(one(out), (0.0, -0.0))
    assert ert.reciprocal(z).covers(out).all()
    if math.isnan(er.reciprocal(z).rounded.value(0).imag):
        pytest.skip("exactref core bug still present: er.reciprocal(-2.5e-4 + inf i) has a NaN "
                    "imaginary part (er.divide(1, x) is right; the equivalent uses it)")
