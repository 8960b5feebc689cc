"""The audit's hard regions: each function's record declares where it is hard
(``OpSpec.audit_inputs``), and a fixed share of every group's samples comes from there, so that a
kernel wrong only near an overflow edge or in a tail is caught (the uniform and moderate corpus
alone almost never reaches those inputs)."""

from __future__ import annotations

import pathlib

import mpmath
import numpy as np
import pytest

import exactref.audit as audit
from exactref._formats import FORMATS
from exactref.audit import AuditConfig, _corpus, run_audit
from exactref.audit._targets import get_target
from exactref.ops import all_ops, get_op

HERE = pathlib.Path(__file__).parent
F32 = FORMATS["float32"]
DTYPES = ("float32", "float16", "bfloat16", "float64")
FUNCTIONS = [s for s in all_ops() if s.family == "functions"]


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _old_corpus(monkeypatch):
    """The corpus as it was: no share drawn from the regions."""
    monkeypatch.setattr(_corpus, "HARD_SHARE", 0.0)


def _unary_inputs(op, fmt, n, seed=0):
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):  # as run_audit draws
        return audit._inputs(get_target("numpy"), op, [(fmt, "n")], n, rng)[0]


def _places(v: np.ndarray) -> np.ndarray:
    """Values of a signed float format that fills its bytes as their places in the format's order (this
    test's own: sign and magnitude of the bits)."""
    bits = v.view({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[v.dtype.itemsize])
    bits = bits.astype(np.int64)
    mag = bits & ((1 << (8 * v.dtype.itemsize - 1)) - 1)
    return np.where(bits < 0, -mag, mag)


def _nearest(x: mpmath.mpf, fmt) -> np.ndarray:
    """The value of ``fmt`` nearest the real ``x`` (normal range: ``x`` rounded at its
    precision by mpmath, once)."""
    with mpmath.workprec(fmt.precision):
        return np.array([float(+x)]).astype(fmt.np_dtype)


def _within(values, point, ulps) -> bool:
    return bool(np.any(np.abs(_places(values) - _places(point)[0]) <= ulps))


# --------------------------------------------------------------------------- the corpus
def test_exp_float32_reaches_the_overflow_and_underflow_edges(monkeypatch):
    mpmath.mp.prec = 200
    overflow = _nearest(mpmath.log(mpmath.mpf(F32.max_finite)), F32)  # 88.72284
    zero = _nearest(mpmath.log(mpmath.mpf(2) ** -150), F32)  # below it, exp rounds to 0
    normal = _nearest(mpmath.log(mpmath.mpf(2) ** -126), F32)  # subnormal results below
    x = _unary_inputs("exp", F32, 256)
    for edge in (overflow, zero, normal):
        assert _within(x, edge, 4), edge
    _old_corpus(monkeypatch)  # the measurement that asked for the regions
    old = _unary_inputs("exp", F32, 256)
    assert not any(_within(old, edge, 64) for edge in (overflow, zero, normal))


def test_sin_float32_holds_the_floats_nearest_multiples_of_pi():
    mpmath.mp.prec = 200
    x = _unary_inputs("sin", F32, 2048)
    for k in (1, 2, 3, 4, -1, -2):
        nearest = _nearest(k * mpmath.pi, F32)
        assert nearest[0] in x, (k, nearest)
    # and huge arguments that reduce to almost zero: |sin(x)| below 2**-20 for some x > 2**30
    big = x[np.abs(x.astype(np.float64)) > 2.0**30].astype(np.float64)
    with mpmath.workprec(300):
        assert min(abs(mpmath.sin(mpmath.mpf(float(v)))) for v in big) < 2.0**-20


def test_every_function_declares_regions():
    assert FUNCTIONS
    assert [s.name for s in FUNCTIONS if not s.audit_inputs] == []


def _declared(region, result, fmt) -> np.ndarray:
    """The region's points for ``result`` rounded into ``fmt`` (test-side, by numpy's casts;
    the points the format cannot hold dropped), as a (points, operands) array of ``fmt``."""
    pts = np.asarray(region.at(result.component), dtype=np.float64)
    pts = pts.reshape(len(pts), -1)
    ok = np.all(np.isfinite(pts) & (np.abs(pts) <= fmt.max_finite), axis=1)
    return pts[ok].astype(fmt.np_dtype)


@pytest.mark.parametrize("dtype", DTYPES + ("float8_e4m3fn", "float8_e5m2"))
@pytest.mark.parametrize("op", [s.name for s in FUNCTIONS])
def test_the_documented_share_comes_from_the_declared_regions(op, dtype, monkeypatch):
    spec, fmt, n = get_op(op), FORMATS[dtype], 128
    drawn = []

    def spy(*args):
        out = _corpus.hard_inputs(*args)
        drawn.append(out)
        return out

    monkeypatch.setattr(audit, "hard_inputs", spy)
    specs = [(fmt, "n")] * spec.arity
    with np.errstate(all="ignore"):
        values = audit._inputs(get_target("numpy"), op, specs, n, np.random.default_rng(1))
    (positions, columns), = drawn
    assert len(positions) == int(n * 0.25) == 32  # docs/audit.md: a quarter of the samples
    assert len(set(positions.tolist())) == len(positions)
    # every replaced sample lies in a declared region: within ``ulps`` places of a point, or
    # between the ends of a span (this test's own rounding and places)
    hits = np.zeros(len(positions), dtype=bool)
    for region in spec.audit_inputs:
        pts = _declared(region, fmt, fmt)
        if not pts.size:
            continue
        if region.kind == "span":
            ends = _places(pts.reshape(-1)).reshape(-1, 2)
            p = _places(values[0][positions])[:, None]
            hits |= np.any((p >= ends.min(1) - 1) & (p <= ends.max(1) + 1), axis=1)
            continue
        ulps = region.ulps if isinstance(region.ulps, tuple) else (region.ulps,) * spec.arity
        near = np.ones((len(positions), len(pts)), dtype=bool)
        for i in range(spec.arity):
            d = np.abs(_places(values[i][positions])[:, None] - _places(pts[:, i])[None, :])
            near &= d <= ulps[i] + 1  # + 1: numpy's cast of a point may round the other way
        hits |= near.any(axis=1)
    assert hits.all(), values[0][positions][~hits]
    for i in range(spec.arity):
        assert np.array_equal(values[i][positions], columns[i], equal_nan=True)
        # a point the format cannot hold is dropped, never saturated into inf or NaN
        assert np.isfinite(values[i][positions].astype(np.float64)).all()


def test_groups_with_a_scalar_operand_or_complex_formats_draw_no_region():
    pow_scalar = [(F32, "n"), (None, 2.5)]
    with np.errstate(all="ignore"):
        values = audit._inputs(get_target("numpy"), "pow", pow_scalar, 64,
                               np.random.default_rng(0))
        plain = audit._draw(pow_scalar[0], 64, np.random.default_rng(0))
    assert np.array_equal(values[0], plain, equal_nan=True)


# ------------------------------------------------------- kernels wrong near one region only
def _audit(kernel, op):
    # correctly rounded declared (the default accuracy is the mainstream libraries' bound,
    # which covers a few subnormal ulps: a tail cut to 0 at sigmoid(-88.5) among them)
    return run_audit(AuditConfig(target=f"wrong_kernels:{kernel}", op_name=op,
                                 dtypes=("float32",), samples=128, kinds=("same",),
                                 accuracy="correct"))


@pytest.mark.parametrize("kernel, op, edge", [
    ("exp_overflows_early", "exp", 88.7),
    ("sigmoid_flushed", "sigmoid", -80.0),
])
def test_a_kernel_wrong_near_one_region_passes_the_old_corpus_and_is_caught(
        kernel, op, edge, monkeypatch):
    with monkeypatch.context() as m:
        _old_corpus(m)
        old = _audit(kernel, op)
    assert old.groups and old.failed == 0, [g.worst for g in old.groups]
    new = _audit(kernel, op)
    assert new.failed == 1
    worst = new.groups[0].worst
    x = float.fromhex(worst["inputs"]["x"])
    assert (x >= edge) if op == "exp" else (x < edge)
    assert worst["actual"] in ("inf", "0x0p+0")


@pytest.mark.parametrize("kernel, op", [("exp_correct", "exp"), ("sigmoid_correct", "sigmoid")])
def test_correct_kernels_pass_the_regions(kernel, op):
    r = _audit(kernel, op)
    assert r.failed == 0 and r.groups, [g.worst for g in r.groups]
