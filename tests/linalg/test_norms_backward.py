"""layer_norm.backward and rms_norm.backward: every rounded gradient element agrees with an
independent oracle (``norm_backward_oracle``: Fractions, mpmath intervals, MPFR rounding; no
exactref code) on random and adversarial rows (offset means, wide exponents, constant rows,
huge and tiny values, n = 1), every float format of 16 bits or more and every rounding mode;
exact cases (rational weight gradients, square classes that cancel), special values, the
errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from norm_backward_oracle import grad_b, grad_w, grad_x

import exactref as er

MODES = list(er.Rounding)
FLOATS = ["float64", "float32", "bfloat16", "float16"]


def _cast(a, fmt):
    return np.asarray(er.asarray(np.asarray(a, np.float64), fmt).numpy()).astype(np.float64)


def _rows(rng, fmt, n):
    """Random, offset, wide, constant, cancelling and huge/tiny rows of ``n`` elements."""
    big = 1e3 if fmt == "float16" else 1e8
    tiny = 2.0**-12 if fmt == "float16" else 2.0**-60
    rows = [rng.standard_normal(n), 3.0 + 0.01 * rng.standard_normal(n),
            np.exp2(rng.integers(-8, 8, n)) * rng.standard_normal(n),
            np.full(n, 1.5), np.where(np.arange(n) % 2 == 0, big, -big) + rng.integers(0, 3, n),
            tiny * rng.standard_normal(n)]
    return _cast(np.array(rows), fmt)


def _same(got, want, what):
    got = np.asarray(got, np.float64).reshape(-1).tolist()
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if w is None:
            continue
        if math.isnan(w):
            assert math.isnan(g), (what, i, g, w)
        else:
            assert g == w, (what, i, g, w)


@pytest.mark.parametrize("fmt", FLOATS)
@pytest.mark.parametrize("n", [1, 3, 8])
def test_gradients_every_mode(fmt, n):
    rng = np.random.default_rng(n + 10 * FLOATS.index(fmt))
    X = _rows(rng, fmt, n)
    G = _cast(rng.standard_normal(X.shape) * np.exp2(rng.integers(-3, 3, X.shape)), fmt)
    w = _cast(rng.uniform(0.5, 2, n), fmt)
    b = _cast(rng.standard_normal(n), fmt)
    a, g, wa, ba = (er.asarray(v, fmt) for v in (X, G, w, b))
    Xl, Gl = [list(r) for r in X], [list(r) for r in G]
    for mode in MODES:
        eps = 1e-5 if mode is er.Rounding.NEAREST_EVEN else 0.25
        r = er.layer_norm.backward(a, g, n, wa, ba, eps=eps, rounding=mode)
        want = sum((grad_x(x, gg, list(w), eps, True, fmt, mode) for x, gg in
                    zip(Xl, Gl, strict=True)), [])
        _same(r.grad_x.rounded.numpy(), want, ("layer dx", mode))
        _same(r.grad_weight.rounded.numpy(), grad_w(Xl, Gl, eps, True, fmt, mode),
              ("layer dw", mode))
        _same(r.grad_bias.rounded.numpy(), grad_b(Gl, fmt, mode), ("layer db", mode))
        r = er.rms_norm.backward(a, g, (n,), wa, eps=1e-6, rounding=mode)
        want = sum((grad_x(x, gg, list(w), 1e-6, False, fmt, mode) for x, gg in
                    zip(Xl, Gl, strict=True)), [])
        _same(r.grad_x.rounded.numpy(), want, ("rms dx", mode))
        _same(r.grad_weight.rounded.numpy(), grad_w(Xl, Gl, 1e-6, False, fmt, mode),
              ("rms dw", mode))


@pytest.mark.parametrize("fmt", FLOATS)
def test_group_norm_every_mode(fmt):
    """group norm: rows are (sample, group) of D channels by P positions, the weight per
    channel; the weight's gradient sums over samples and positions of a channel."""
    rng = np.random.default_rng(20 + FLOATS.index(fmt))
    Nb, C, P, Gn = 2, 4, 3, 2
    X = _cast(rng.standard_normal((Nb, C, P)) * np.exp2(rng.integers(-2, 2, (Nb, C, P))), fmt)
    X[1, :2] = 1.5  # a constant group
    G = _cast(rng.standard_normal((Nb, C, P)), fmt)
    w = _cast(rng.uniform(0.5, 2, C), fmt)
    b = _cast(rng.standard_normal(C), fmt)
    D = C // Gn
    rows = [list(X[s, g * D:(g + 1) * D].reshape(-1)) for s in range(Nb) for g in range(Gn)]
    grows = [list(G[s, g * D:(g + 1) * D].reshape(-1)) for s in range(Nb) for g in range(Gn)]
    wrow = [list(np.repeat(w[g * D:(g + 1) * D], P)) for g in range(Gn)]
    targets = [[(s * Gn + c // D, (c % D) * P + k) for s in range(Nb) for k in range(P)]
               for c in range(C)]
    for mode in MODES:
        r = er.group_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), Gn,
                                   er.asarray(w, fmt), er.asarray(b, fmt), eps=0.25,
                                   rounding=mode)
        want = sum((grad_x(x, g, wrow[i % Gn], 0.25, True, fmt, mode)
                    for i, (x, g) in enumerate(zip(rows, grows, strict=True))), [])
        _same(r.grad_x.rounded.numpy(), want, ("group dx", mode))
        _same(r.grad_weight.rounded.numpy(),
              grad_w(rows, grows, 0.25, True, fmt, mode, targets), ("group dw", mode))
        by_channel = [list(v) for v in np.transpose(G, (0, 2, 1)).reshape(-1, C)]
        _same(r.grad_bias.rounded.numpy(), grad_b(by_channel, fmt, mode), ("group db", mode))


@pytest.mark.parametrize("fmt", ["float32", "float64"])
def test_no_weight_and_batch_shapes(fmt):
    rng = np.random.default_rng(7)
    X = _cast(rng.standard_normal((2, 3, 5)), fmt)
    G = _cast(rng.standard_normal((2, 3, 5)), fmt)
    r = er.layer_norm.backward(er.asarray(X, fmt), er.asarray(G, fmt), (3, 5))
    assert not hasattr(r, "grad_weight") and tuple(r.grad_x.rounded.shape) == (2, 3, 5)
    want = sum((grad_x(list(x.reshape(-1)), list(gg.reshape(-1)), None, 1e-5, True, fmt,
                       er.Rounding.NEAREST_EVEN) for x, gg in zip(X, G, strict=True)), [])
    _same(r.grad_x.rounded.numpy(), want, "dx (3, 5)")


def test_constant_row_and_exact_values():
    # a constant row: var = 0, sigma = sqrt(eps); with eps = 1/4, sigma = 1/2: exact
    r = er.layer_norm.backward([[2.0, 2.0, 2.0]], [[1.0, 0.0, 2.0]], 3, weight=[1.0, 1.0, 1.0],
                               bias=[0.0, 0.0, 0.0], eps=0.25)
    assert r.grad_x.rounded.tolist() == [[0.0, -2.0, 2.0]]  # (g - mean g) / sigma
    assert r.grad_weight.rounded.tolist() == [0.0, 0.0, 0.0]
    assert r.grad_bias.rounded.tolist() == [1.0, 0.0, 2.0]
    # n = 1: x - mu = 0 and gh - mean(gh) = 0: every gradient of x is 0
    r = er.layer_norm.backward([[5.0], [-1.0]], [[3.0], [7.0]], 1, weight=[2.0], eps=1e-5)
    assert r.grad_x.rounded.tolist() == [[0.0], [0.0]]


def test_weight_gradient_square_classes():
    """Rows whose var + eps are R and 4R (one square class) with cancelling coefficients:
    the weight gradient is exactly 0, and a sum over perfect-square classes is rational."""
    # rows [-1, 1] (var 1) and [-2, 2] (var 4), eps = 0: xhat = [-1, 1] for both
    X = [[-1.0, 1.0], [-2.0, 2.0]]
    r = er.layer_norm.backward(X, [[1.0, 0.5], [-1.0, -0.5]], 2, weight=[1.0, 1.0], eps=0.0)
    assert r.grad_weight.rounded.tolist() == [0.0, 0.0]
    # var + eps = 2 and 8 (one class, irrational): 1/sqrt(2) - 1/(2 sqrt(2)) * 2 = 0
    X = [[-1.0, 1.0], [-2.0, 2.0]]
    for mode in MODES:
        r = er.layer_norm.backward(X, [[2.0, 0.0], [-1.0, 0.0]], 2, weight=[1.0, 1.0], eps=1.0,
                                   rounding=mode)  # R = 2 and 5: distinct classes, irrational
        want = grad_w(X, [[2.0, 0.0], [-1.0, 0.0]], 1.0, True, "float64", mode)
        assert r.grad_weight.rounded.tolist() == want
    # R = 1/2 and 2 (eps so that var + eps: [-0.5, 0.5] var 1/4 + 1/4, [-1, 1] var 1 + 1)
    r = er.layer_norm.backward([[-0.5, 0.5]], [[1.0, 1.0]], 2, weight=[1.0, 1.0], eps=0.25)
    assert r.grad_weight.rounded.tolist() == grad_w([[-0.5, 0.5]], [[1.0, 1.0]], 0.25, True,
                                                    "float64", er.Rounding.NEAREST_EVEN)
    # rms: x = [1, 1] (R = 1) and [2, 2] (R = 4): g x / r = g, rational
    r = er.rms_norm.backward([[1.0, 1.0], [2.0, 2.0]], [[0.75, 1.0], [0.5, -3.0]], 2,
                             weight=[1.0, 1.0], eps=0.0)
    assert r.grad_weight.rounded.tolist() == [1.25, -2.0]


def test_weight_gradient_cancels_across_scaled_rows():
    # rows with var + eps of R and 4 R and 9 R: one square class, coefficients that cancel
    X = [[-1.0, 1.0], [-2.0, 2.0], [-3.0, 3.0]]
    G = [[1.0, 1.0], [1.0, 1.0], [-2.0, -2.0]]  # xhat = +-1 in every row: 1 + 1 - 2 = 0
    r = er.layer_norm.backward(X, G, 2, weight=[1.0, 1.0], eps=0.0, rounding="toward_positive")
    assert r.grad_weight.rounded.tolist() == [0.0, 0.0]
    # eps = 1: R = 2, 5, 10: distinct classes: irrational, never 0
    r = er.layer_norm.backward(X, G, 2, weight=[1.0, 1.0], eps=1.0)
    want = grad_w(X, G, 1.0, True, "float64", er.Rounding.NEAREST_EVEN)
    assert r.grad_weight.rounded.tolist() == want and want[0] != 0


def test_nonfinite_rows_are_nan_and_free():
    r = er.layer_norm.backward([[1.0, math.inf], [1.0, 2.0]], [[1.0, 1.0], [1.0, -1.0]], 2,
                               weight=[1.0, 1.0], eps=0.0)
    dx = r.grad_x.rounded.numpy()
    assert np.isnan(dx[0]).all() and np.isfinite(dx[1]).all()
    assert np.isnan(r.grad_weight.rounded.numpy()).all()
    assert r.grad_x.covers(np.array([[5.0, -1.0], dx[1]])).all()
    # var + eps = 0 (a constant row, eps = 0): NaN
    r = er.rms_norm.backward([[0.0, 0.0]], [[1.0, 1.0]], 2, eps=0.0)
    assert np.isnan(r.grad_x.rounded.numpy()).all()


def test_errors():
    with pytest.raises(ValueError, match="grad must have the output's shape"):
        er.layer_norm.backward([[1.0, 2.0]], [[1.0]], 2)
    with pytest.raises(TypeError, match="real float"):
        er.layer_norm.backward([[1.0, 2.0]], er.asarray([[1, 2]], "int32"), 2)
    with pytest.raises(ValueError, match="normalized_shape"):
        er.rms_norm.backward([[1.0, 2.0]], [[1.0, 2.0]], 3)
    with pytest.raises(ValueError, match="weight has shape"):
        er.layer_norm.backward([[1.0, 2.0]], [[1.0, 2.0]], 2, weight=[1.0])
    with pytest.raises(ValueError, match="no elements"):
        er.layer_norm.backward(np.zeros((0, 2)), np.zeros((0, 2)), 2)
    with pytest.raises(TypeError, match="num_groups"):
        er.group_norm.backward([[1.0, 2.0]], [[1.0, 2.0]], 1.5)
    with pytest.raises(ValueError, match="does not divide"):
        er.group_norm.backward([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]], 2)
    with pytest.raises(ValueError, match=r"\(N, C, \*\)"):
        er.group_norm.backward([1.0, 2.0], [1.0, 2.0], 1)


def test_registry_records_the_backward():
    assert er.ops.get_op("layer_norm").backward is er.layer_norm.backward
    assert er.ops.get_op("rms_norm").backward is er.rms_norm.backward
    assert er.ops.get_op("group_norm").backward is er.group_norm.backward


def test_square_class_key_is_a_class_invariant():
    from exactref.linalg._norms_backward import _class_key

    rng = np.random.default_rng(11)
    for _ in range(200):
        d = int(rng.integers(1, 2**62)) * int(rng.integers(1, 2**40))
        k = int(rng.integers(1, 2**30)) * 3**int(rng.integers(0, 4)) * 2**int(rng.integers(0, 9))
        assert _class_key(d) == _class_key(d * k * k)
    assert _class_key(2) != _class_key(8 * 3) and _class_key(5) != _class_key(7)



def test_float64_extreme_exponents():
    X = np.array([[1e200, -1e200, 3.0, 1e-200], [1e-300, 2e-300, -5e-324, 0.0]])
    G = np.array([[1.0, 1e-150, -2.0, 1e100], [3.0, -1.0, 1e-300, 2.0]])
    w = [1.5, 1.0, 1e-10, 2.0]
    for mode in (er.Rounding.NEAREST_EVEN, er.Rounding.TOWARD_ZERO):
        r = er.layer_norm.backward(X, G, 4, w, eps=0.0, rounding=mode)
        want = sum((grad_x(list(x), list(g), w, 0.0, True, "float64", mode)
                    for x, g in zip(X, G, strict=True)), [])
        _same(r.grad_x.rounded.numpy(), want, ("extreme dx", mode))
        _same(r.grad_weight.rounded.numpy(),
              grad_w([list(v) for v in X], [list(v) for v in G], 0.0, True, "float64", mode),
              ("extreme dw", mode))
        r = er.rms_norm.backward(X, G, 4, w, eps=2.0**-1074, rounding=mode)
        want = sum((grad_x(list(x), list(g), w, 2.0**-1074, False, "float64", mode)
                    for x, g in zip(X, G, strict=True)), [])
        _same(r.grad_x.rounded.numpy(), want, ("extreme rms dx", mode))


@pytest.mark.parametrize("fmt", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("centered", [True, False], ids=["layer", "rms"])
def test_fast_path_agrees_with_the_integer_path(fmt, centered):
    """The float64 enclosures decide most elements, and each one rounds as the integer
    path's value does, in every mode (offset rows cancel, wide rows spread exponents)."""
    from fractions import Fraction

    from exactref.linalg import _norms_backward as nb

    rng = np.random.default_rng(FLOATS.index(fmt) + 7 * centered)
    n = 24
    rows = _rows(rng, fmt, n)
    X = np.concatenate([rows, _cast(rng.standard_normal((8, n)) * 3 + 1, fmt),
                        _cast(100 + 0.01 * rng.standard_normal((4, n)), fmt)])
    G = _cast(rng.standard_normal(X.shape) * np.exp2(rng.integers(-4, 4, X.shape)), fmt)
    W = _cast(rng.uniform(0.5, 2, n), fmt)
    p = er.dtype(fmt).component.precision
    ps = nb._Pass(X, G, W, Fraction(1e-5), centered, p)
    ok, z = nb._fast_dx(ps, p + 2)
    assert ok.mean() > 0.7
    pairs = ps.dx_pairs()
    for mode in MODES:
        out = er.dtype(fmt)
        slow = nb._assemble_pairs(pairs, X.shape, out, mode, "ieee").numpy().reshape(-1)
        fast = nb._assemble_pairs(pairs, X.shape, out, mode, "ieee", (ok, z)).numpy()
        np.testing.assert_array_equal(fast.reshape(-1)[ok], slow[ok])
    okw, zw = nb._fast_dw(ps, p + 2)
    assert okw.mean() > 0.7
    wpairs = ps.dw_pairs()
    for mode in MODES:
        out = er.dtype(fmt)
        slow = nb._assemble_pairs(wpairs, (n,), out, mode, "ieee").numpy()
        fast = nb._assemble_pairs(wpairs, (n,), out, mode, "ieee", (okw, zw)).numpy()
        np.testing.assert_array_equal(fast[okw], slow[okw])


@pytest.mark.parametrize("fmt", ["float32", "bfloat16"])
def test_cancelling_square_class_in_narrow_formats(fmt):
    """rms rows [1, 1], [5, 3], [7, 7] (r**2 = 2, 18 = 9 * 2, 50 = 25 * 2), eps = 1: one
    irrational class whose coefficients cancel, so the weight's gradient is exactly 0 while
    float64 arithmetic leaves a residue: the fast path must leave it to the exact path."""
    X = er.asarray([[1.0, 1.0], [5.0, 3.0], [7.0, 7.0]], fmt)  # r**2 = 2, 18, 50
    G = er.asarray([[3.0, 1.0], [-6.0, -8.0], [5.0, 5.0]], fmt)
    for mode in MODES:
        r = er.rms_norm.backward(X, G, 2, er.asarray([1.0, 1.0], fmt), eps=1.0, rounding=mode)
        got = r.grad_weight.rounded.numpy().astype(np.float64)
        assert (got == 0).all(), (mode, got)
    # layer norm: rows [-1, 1] and [-7, 7], eps = 1: var + eps = 2 and 50 = 25 * 2
    X = er.asarray([[-1.0, 1.0], [-7.0, 7.0]], fmt)
    G = er.asarray([[5.0, 5.0], [-5.0, -5.0]], fmt)  # xhat = -+1/sqrt(2), -+7/(5 sqrt(2))
    want = grad_w([[-1.0, 1.0], [-7.0, 7.0]], [[5.0, 5.0], [-5.0, -5.0]], 1.0, True, fmt,
                  er.Rounding.TOWARD_POSITIVE)
    r = er.layer_norm.backward(X, G, 2, er.asarray([1.0, 1.0], fmt), eps=1.0,
                               rounding="toward_positive")
    assert r.grad_weight.rounded.numpy().astype(np.float64).tolist() == want


def test_backward_common_keywords():
    """policy= as the forward's; dtype= refused by name (the gradients are in the operands'
    formats)."""
    x, g = [[1.0, 3.0]], [[1.0, 0.0]]
    for bw in (er.layer_norm.backward, er.rms_norm.backward):
        assert bw(x, g, 2, policy="torch").grad_x.rounded.dtype.name == "float64"
        with pytest.raises(ValueError, match="dtype='float32' is not taken"):
            bw(x, g, 2, dtype="float32")
        with pytest.raises(ValueError, match="policy='numpy' is not modelled"):
            bw(x, g, 2, policy="numpy")
    with pytest.raises(ValueError, match="dtype='float16' is not taken"):
        er.group_norm.backward([[[1.0], [3.0]]], [[[1.0], [0.0]]], 1, dtype="float16")
