"""l2_normalize (torch.nn.functional.normalize, p=2): every rounded element agrees with an
independent oracle (Fractions and isqrt, rounded by MPFR through ``mpfr_oracle``; no exactref
code) for float16, bfloat16, float32 and float64 in every rounding mode, rows below ``eps``
(clamped), zero rows and rows with an infinity or a NaN; the tolerance covers PyTorch and
catches a kernel with a wrong eps or without the square root; the audit runs it from its
record (the worked example of a row kernel declared in one module)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from mpfr_oracle import FMTS, expected
from norm_oracle import same as _same

import exactref as er

MODES = list(er.Rounding)
FLOATS = ["float64", "float32", "bfloat16", "float16"]


def _oracle(row, eps, fmt_name, mode):
    """Each element of ``row`` divided by ``max(sqrt(sum x**2), eps)`` exactly, rounded once
    (NaN for 0 / 0; None for an element not checked: a row with an infinity or a NaN)."""
    fmt = FMTS[fmt_name]
    if not all(math.isfinite(v) for v in row):
        return [None] * len(row)
    xs = [Fraction(v) for v in row]
    e = Fraction(eps)
    v = max(sum((x * x for x in xs), Fraction(0)), e * e)  # max(||x||, eps)**2
    rp, rq = math.isqrt(v.numerator), math.isqrt(v.denominator)
    root = Fraction(rp, rq) if rp * rp == v.numerator and rq * rq == v.denominator else None
    out = []
    for x in xs:
        if v == 0:
            out.append(math.nan)
        elif x == 0:
            out.append(0.0)
        elif root is not None:
            out.append(expected(x / root, False, fmt, mode))
        else:
            out.append(_refined(x, v, fmt, mode))
    return out


def _refined(x, v, fmt, mode):
    """``x / sqrt(v)`` rounded: isqrt enclosures of the root refined until both ends round
    alike."""
    k = 80 + max(0, (v.denominator.bit_length() - v.numerator.bit_length()) // 2 + 2)
    while True:
        s = math.isqrt(v.numerator * 4**k // v.denominator)
        lo, hi = Fraction(s, 2**k), Fraction(s + 1, 2**k)  # lo <= sqrt(v) < hi
        a, b = sorted([x / hi, x / lo])
        r0, r1 = expected(a, False, fmt, mode), expected(b, False, fmt, mode)
        if r0 == r1:
            return r0
        k *= 2
        assert k < 20000, "oracle did not converge"



def _cast(a, fmt):
    return np.asarray(er.asarray(np.asarray(a, np.float64), fmt).numpy()).astype(np.float64)


def _rows(rng, fmt, n):
    """Random, offset, wide, constant, zero and tiny rows (norms below eps = 1e-12, except in
    float16, whose smallest numbers are near 6e-8)."""
    small = 1e-7 if fmt == "float16" else 1e-14
    rows = [rng.standard_normal(n), 3.0 + 0.01 * rng.standard_normal(n),
            np.exp2(rng.integers(-8, 8, n)) * rng.standard_normal(n),
            np.full(n, 1.5), np.zeros(n), small * rng.standard_normal(n)]
    return _cast(np.array(rows), fmt)


@pytest.mark.parametrize("fmt", FLOATS)
@pytest.mark.parametrize("n", [1, 3, 8])
def test_every_mode_against_the_oracle(fmt, n):
    rng = np.random.default_rng(n)
    X = _rows(rng, fmt, n)
    a = er.asarray(X, fmt)
    for mode in MODES:
        for eps in (1e-12, 0.0, 0.5):
            got = er.l2_normalize(a, dim=-1, eps=eps, rounding=mode).rounded.numpy()
            want = [_oracle(list(r), eps, fmt, mode) for r in X]
            _same(got, sum(want, []))


@pytest.mark.parametrize("fmt", FLOATS)
def test_overflowing_and_subnormal_rows_in_every_mode(fmt):
    """Rows whose squared norm overflows the format (and float64: 1e300 squared is 1e600)
    and rows of subnormals (eps=0, so the norm is not clamped; their squares underflow to 0
    in float64) are still the exact value rounded once, in every mode."""
    f = er.dtype(fmt)
    big, tiny = float(f.max_finite), float(f.smallest_subnormal)
    X = _cast(np.array([[big, -big, big / 2], [big / 4, 0.0, -big / 8],
                        [tiny, -tiny, 3 * tiny], [tiny, 0.0, 0.0],
                        [5 * tiny, -7 * tiny, 11 * tiny]]), fmt)
    a = er.asarray(X, fmt)
    for mode in MODES:
        got = er.l2_normalize(a, dim=-1, eps=0.0, rounding=mode).rounded.numpy()
        want = [_oracle(list(r), 0.0, fmt, mode) for r in X]
        _same(got, sum(want, []))
    r = er.l2_normalize(er.asarray([[1e300, 1e300]], "float64"), dim=-1).rounded.tolist()
    assert r == [[0.7071067811865476, 0.7071067811865476]]  # sqrt(2e600) overflows float64


def test_clamped_rows_are_x_over_eps():
    x = er.asarray([[3e-13, 4e-13], [3.0, 4.0], [0.0, -0.0]], "float64")
    got = er.l2_normalize(x, eps=1e-12).rounded.tolist()
    assert got[0] == [float(Fraction(3e-13) / Fraction(1e-12)),
                      float(Fraction(4e-13) / Fraction(1e-12))]
    assert got[1] == [0.6, 0.8]
    assert got[2] == [0.0, 0.0]
    assert er.l2_normalize([[0.0, 0.0]], eps=0.0).rounded.tolist()[0] != [0.0, 0.0]  # 0 / 0


def test_infinities_and_nans_as_torch():
    got = er.l2_normalize([[math.inf, 1.0, -2.0], [math.nan, 1.0, 1.0]]).rounded.tolist()
    assert math.isnan(got[0][0]) and got[0][1:] == [0.0, 0.0]
    assert all(math.isnan(v) for v in got[1])


def test_dim_moves_the_normalized_axis():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5))
    for dim in (0, 1, 2, -1):
        got = er.l2_normalize(x, dim=dim).rounded.numpy()
        want = np.moveaxis(er.l2_normalize(np.moveaxis(x, dim, -1), dim=-1).rounded.numpy(),
                           -1, dim)
        assert np.array_equal(got, want)
        assert got.shape == x.shape
    assert er.l2_normalize(x).rounded.shape == (3, 4, 5)  # torch's default dim=1


def test_common_keywords_and_refusals():
    x = er.asarray([[3.0, 4.0]], "float32")
    assert er.l2_normalize(x, dtype="float64").rounded.dtype.name == "float64"
    assert er.l2_normalize(x, rounding="up").rounded.tolist() == [[0.6000000238418579,
                                                                   0.800000011920929]]
    with pytest.raises(ValueError, match="p=1"):
        er.l2_normalize(x, p=1)
    with pytest.raises(ValueError, match="policy='numpy'"):
        er.l2_normalize(x, policy="numpy")
    with pytest.raises(ValueError, match="dtype='int32'"):
        er.l2_normalize(x, dtype="int32")
    with pytest.raises(ValueError, match="negative"):
        er.l2_normalize(x, eps=-1.0)
    with pytest.raises(ValueError, match="one dimension"):
        er.l2_normalize(x, dim=(0, 1))


def test_empty_and_wrong_inputs():
    """Empty arrays keep their shape (torch's normalize does); a 0-d x, a dim that is no
    axis, a NaN eps and an integer x are refused by name, saying what to pass."""
    for shape in ((0, 4), (4, 0), (2, 0, 3)):
        assert er.l2_normalize(np.zeros(shape)).rounded.shape == shape
    assert er.l2_normalize([[3.0, 4.0]]).rounded.tolist() == [[0.6, 0.8]]  # a list
    with pytest.raises(ValueError, match="0-d"):
        er.l2_normalize(np.float64(3.0))
    with pytest.raises(ValueError, match="out of range"):
        er.l2_normalize(np.ones((2, 2)), dim=5)
    with pytest.raises(TypeError, match="not an axis"):
        er.l2_normalize(np.ones((2, 2)), dim="x")
    with pytest.raises(ValueError, match="finite eps"):
        er.l2_normalize(np.ones((2, 2)), eps=math.nan)
    with pytest.raises(ValueError, match="convert it first"):
        er.l2_normalize(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="p=3"):
        er.l2_normalize(np.ones((2, 2)), p=3)


def test_the_record_declares_it():
    spec = er.ops.get_op("l2_normalize")
    assert spec.function is er.l2_normalize and spec.kernel == "row root"
    assert spec.counterparts.torch == "torch.nn.functional.normalize"
    assert spec.counterparts.of("torch").contract is not None
    assert spec.audit.groups == "rows" and spec.exact.clamp


# ------------------------------------------------------------------------------ torch
@pytest.mark.parametrize("dt", ["float64", "float32", "bfloat16", "float16"])
def test_covers_torch(dt):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    tdt = getattr(torch, dt)
    for x in (torch.randn(6, 256, generator=g), 5 + torch.randn(3, 2, 64, generator=g),
              torch.zeros(2, 8), 1e-3 * torch.randn(4, 16, generator=g)):
        x = x.to(tdt)
        for eps in (1e-12, 1e-2):
            out = F.normalize(x, dim=-1, eps=eps)
            assert er.l2_normalize(x, dim=-1, eps=eps).covers(out).all(), (dt, eps)
    # the huge flavor: float32's sum of squares overflows, torch gives 0
    x = torch.tensor([[1e30, -1e30, 1e30]])
    assert F.normalize(x, dim=-1).tolist() == [[0.0, 0.0, 0.0]]
    assert er.l2_normalize(x, dim=-1).covers(F.normalize(x, dim=-1)).all()


def test_float16_zero_rows_are_nan_in_torch():
    torch = pytest.importorskip("torch")
    z = torch.zeros(1, 3, dtype=torch.float16)
    out = torch.nn.functional.normalize(z, dim=-1)  # eps rounds to 0 in float16: 0 / 0
    assert torch.isnan(out).all()
    r = er.l2_normalize(z, dim=-1)
    assert r.rounded.tolist() == [[0.0, 0.0, 0.0]] and r.covers(out).all()


def test_wrong_kernels_are_caught():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 64, generator=g)
    no_root = x / (x * x).sum(-1, keepdim=True).clamp_min(1e-12)
    assert not er.l2_normalize(x, dim=-1).covers(no_root).all()
    small = 1e-8 * torch.randn(4, 16, generator=g)  # norms about 4e-8
    wrong_eps = small / small.norm(2, -1, keepdim=True).clamp_min(1e-6)
    assert not er.l2_normalize(small, dim=-1).covers(wrong_eps).all()
    assert er.l2_normalize(small, dim=-1).covers(torch.nn.functional.normalize(small,
                                                                               dim=-1)).all()


def test_audit_torch_runs_from_the_record():
    pytest.importorskip("torch")
    from exactref.audit import AuditConfig, run_audit

    report = run_audit(AuditConfig(target="torch", ops=("l2_normalize",),
                                   dtypes=("float32", "bfloat16"), kinds=("same",)))
    keys = [g.key for g in report.groups]
    assert any("[8,4096]" in k for k in keys) and any("~huge" in k for k in keys)
    assert report.failed == 0, [(g.key, g.message, g.worst) for g in report.groups
                                if g.status == "fail"]


def _ignores_eps(x, dim=1, eps=1e-12):
    import torch

    x = torch.as_tensor(x)
    return x / x.norm(2, dim, keepdim=True).clamp_min(1e-12)


def _no_root(x, dim=1, eps=1e-12):
    import torch

    x = torch.as_tensor(x)
    return x / (x * x).sum(dim, keepdim=True).clamp_min(eps)


@pytest.mark.parametrize("kernel, group", [(_ignores_eps, "eps=1000.0"), (_no_root, "[8,4096]")])
def test_audit_catches_a_wrong_kernel(monkeypatch, kernel, group):
    """``exactref audit module:fn --op l2_normalize``: a kernel that ignores eps fails the
    group the record varies eps in, one without the root fails the first."""
    import sys
    import types

    pytest.importorskip("torch")
    from exactref.audit import AuditConfig, run_audit

    mod = types.ModuleType("l2_kernel")
    mod.normalize = kernel
    monkeypatch.setitem(sys.modules, "l2_kernel", mod)
    report = run_audit(AuditConfig(target="l2_kernel:normalize", op_name="l2_normalize",
                                   ops=("l2_normalize",), dtypes=("float32",), kinds=("same",)))
    hit = [g for g in report.groups if group in g.key]
    assert hit and all(g.status == "fail" for g in hit), [(g.key, g.status) for g in hit]


@pytest.mark.parametrize("fmt", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("mode", list(er.Rounding))
def test_a_zero_keeps_its_sign(fmt, mode):
    """``x / max(||x||, eps)`` is a quotient by a positive number: a zero keeps the sign of x
    in every rounding mode (as torch's division gives), clamped rows and all-zero rows too."""
    x = er.asarray([[-0.0, 3.0, 0.0], [-0.0, -0.0, 0.0]], fmt)
    got = er.l2_normalize(x, dim=-1, rounding=mode).rounded.numpy().astype(np.float64)
    want_neg = np.array([[True, False, False], [True, True, False]])
    assert np.array_equal(got[:, [0, 2]], np.zeros((2, 2)))
    assert np.array_equal(np.signbit(got) & (got == 0), want_neg & (got == 0))
