"""flush= on the long sums (a simulated FTZ/DAZ kernel: TensorFlow's CPU kernels run with both
set) and conv's padding_taps= (the padded taps multiplied or skipped)."""

import numpy as np
import pytest

import exactref as er

F32 = np.float32
TINY = F32(2.0**-126)

pytestmark = pytest.mark.filterwarnings("ignore::exactref.WeakCheckWarning")


def _ftz(v):
    v = F32(v)
    return F32(np.copysign(F32(0), v)) if abs(v) < TINY else v


def ftz_daz_sum(row, daz=True, ftz=True):
    """A sequential float32 sum in a CPU's FTZ (results) and DAZ (operands) modes."""
    s = F32(0)
    for v in row:
        v = _ftz(v) if daz else F32(v)
        s = F32(s + v)
        s = _ftz(s) if ftz else s
    return s


def _rows(rng, k=16, m=12):
    """Rows of subnormals and small normals that cancel to subnormal partial sums."""
    base = rng.integers(-(2**20), 2**20, (m, k)).astype(np.float64) * 2.0**-149
    base[:, ::3] += rng.choice([-1.0, 1.0], (m, (k + 2) // 3)) * 2.0**-125
    return base.astype(F32)


@pytest.mark.parametrize("daz, ftz, flush", [(True, False, "inputs"), (False, True, "outputs"),
                                             (True, True, "both")])
def test_a_flushing_kernel_is_covered_where_declared_and_caught_where_not(daz, ftz, flush):
    rng = np.random.default_rng(1)
    x = _rows(rng)
    got = np.array([ftz_daz_sum(r, daz, ftz) for r in x])
    plain = er.sum(x, axis=1, order="sequential")
    assert not plain.covers(got).all()  # the flushed results are far, in the subnormal range
    assert er.sum(x, axis=1, order="sequential", flush=flush).covers(got).all()
    assert er.sum(x, axis=1, order="sequential", flush="both").covers(got).all()
    # the unflushed kernel stays covered: a kernel MAY flush
    ieee = np.array([ftz_daz_sum(r, False, False) for r in x])
    assert er.sum(x, axis=1, order="sequential", flush=flush).covers(ieee).all()
    assert er.mean(x, dim=1, order="sequential", flush=flush).covers(
        (got / F32(x.shape[1])).astype(F32)).all()


def test_flush_reaches_every_long_sum():
    rng = np.random.default_rng(2)
    a = _rows(rng, 8, 4)
    b = np.ascontiguousarray(a.T)
    for fn, args in ((er.matmul, (a, b)), (er.dot, (a[0], a[1])), (er.gemm, (a, b, a[:, :4])),
                     (er.var, (a,)), (er.std, (a,)), (er.cumsum, (a, 1)),
                     (er.linear, (a, a)), (er.conv1d, (a[:1][None], a[:2, None, :3]))):
        for flush in (None, "inputs", "outputs", "both"):
            r = fn(*args, flush=flush)
            assert r.covers(r.rounded).all()
            if flush:
                assert r.details["flush"] == flush
        with pytest.raises(ValueError, match="'inputs'.*'outputs'.*'both'"):
            fn(*args, flush="ftz")


def test_a_flushing_matmul_is_covered():
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((6, 32)) * 2.0**-64).astype(F32)
    b = (rng.standard_normal((32, 6)) * 2.0**-64).astype(F32)
    got = np.zeros((6, 6), F32)
    for i in range(6):
        for j in range(6):
            s = F32(0)
            for p in range(32):
                s = _ftz(F32(s + _ftz(F32(a[i, p] * b[p, j]))))
            got[i, j] = s
    assert not er.matmul(a, b, order="sequential").covers(got).all()
    assert er.matmul(a, b, order="sequential", flush="outputs").covers(got).all()


def test_the_outputs_may_be_zero_where_subnormal():
    x = np.array([[2.0**-140, 2.0**-141]], F32)
    assert not er.sum(x, axis=1).covers(F32([0.0])).all()
    assert er.sum(x, axis=1, flush="outputs").covers(F32([0.0])).all()
    assert er.sum(x, axis=1, flush="inputs").covers(F32([0.0])).all()  # both read as zero


# ---------------------------------------------------------------------------- padding_taps
def _border():
    x = np.arange(1.0, 6.0, dtype=F32).reshape(1, 1, 5)
    w = np.array([[[np.inf, 1.0, 1.0]]], F32)  # the first tap meets the left padding
    return x, w


def test_padding_taps_zeros_skip_and_either():
    x, w = _border()
    skipped = F32(1.0 + 2.0)  # the in-bounds taps of output 0: x[0] * 1 + x[1] * 1
    nan_first = np.array([[[np.nan, np.inf, np.inf, np.inf, np.inf]]], F32)
    skip_first = nan_first.copy()
    skip_first[0, 0, 0] = skipped
    zeros = er.conv1d(x, w, padding=1, padding_taps="zeros")
    assert np.isnan(np.asarray(zeros.rounded.numpy())[0, 0, 0])
    assert zeros.covers(nan_first).all() and not zeros.covers(skip_first).all()
    skip = er.conv1d(x, w, padding=1, padding_taps="skip")
    assert np.asarray(skip.rounded.numpy())[0, 0, 0] == skipped
    assert skip.covers(skip_first).all() and not skip.covers(nan_first).all()
    either = er.conv1d(x, w, padding=1)
    assert either.covers(nan_first).all() and either.covers(skip_first).all()
    # a wrong in-bounds sum is caught in every mode
    wrong = skip_first.copy()
    wrong[0, 0, 0] = 4.0
    assert not either.covers(wrong).all()
    with pytest.raises(ValueError, match="'zeros'.*'skip'"):
        er.conv1d(x, w, padding=1, padding_taps="ignore")


def test_padding_taps_in_two_dimensions():
    x = np.ones((1, 1, 3, 3), F32)
    w = np.ones((1, 1, 3, 3), F32)
    w[0, 0, 0, 0] = -np.inf
    r = er.conv2d(x, w, padding=1, padding_taps="skip")
    v = np.asarray(r.rounded.numpy())
    assert v[0, 0, 0, 0] == 4.0  # the top-left output: its -inf tap is padded, 4 ones remain
    assert v[0, 0, 1, 1] == -np.inf  # the centre: the -inf tap is in bounds
    assert er.conv2d(x, w, padding=1).covers(v).all()
    assert not er.conv2d(x, w, padding=1, padding_taps="zeros").covers(v).all()
