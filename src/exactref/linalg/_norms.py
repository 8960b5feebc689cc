"""``layer_norm``, ``rms_norm`` and ``group_norm``: each output element the exact value rounded
once, with a tolerance that bounds the declared implementations (docs/normalizations.md).

Exact values. Per row (a normalized slice) of ``n`` elements the exact integer sums ``S = sum
x`` and ``Q = sum x**2`` (at a power-of-two scale, :mod:`._reductions`' digits) give

* layer/group norm: ``y_i = (n x_i - S) w_i / sqrt(D) + b_i`` with ``D = n Q - S**2 + n**2
  eps = n**2 (var + eps)``, an exact dyadic rational (``var`` the population variance);
* rms norm: ``y_i = n x_i w_i / sqrt(D)`` with ``D = n Q + n**2 eps = n**2 (Q / n + eps)``.

Each is ``A / sqrt(D) + B`` with dyadic ``A``, ``B``, ``D``: an algebraic number whose
rounding is decided by exact integer arithmetic (:func:`_odd_element`: ``floor(|A| 2**m /
sqrt(D)) = isqrt(A**2 4**m // D)``, exact where the remainder and the root's are 0), giving
the value rounded to odd at 113 bits or more, which rounds like ``y`` into every format of at
most 53 bits in every mode. That costs a few big-integer operations per element, so the
common case is decided first in float64 (:func:`_fast`): a rigorous enclosure ``[L, H]`` of
``y`` from a double-double mean and a float64 root; where ``[L, H]`` lies strictly inside one
cell between consecutive numbers of ``p + 2`` bits (``p`` the output precision), the cell's
midpoint rounds like ``y`` in every mode (no value or midpoint of a ``p``-bit format lies in
the cell). Outputs of at most 24 bits take float64 enclosures (:func:`_fast`), float64 outputs
double-double ones (:func:`_fast_dd`); elements neither settles take the exact path.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .._array import Array, assemble
from .._exact import (
    Rounding,
    deflate,
    down,
    gamma_up,
    inflate,
    pow1p_m1_up,
    resolve_modes,
    slack_up,
    up,
)
from .._formats import Format
from .._formats import dtype as resolve_dtype
from .._operands import compute_format, prepare
from ..ops import names_of
from ._bounds import (
    _NE,
    DEFAULT_ORDER,
    BoundResult,
    SumModel,
    _chain,
    coefficients,
)
from ._norms_exact import CENTERED, SCALED, RowRoot, _Rows, exact_values
from ._orders import Order, library_depth, parse_order
from ._reductions import _int_rowsquares, _int_rowsums, row_policy
from ._rowsums import (
    ANY_ALGORITHMS,
    DEFAULT_ALGORITHM,
    STABLE_ALGORITHMS,
    VAR_ALGORITHMS,
    _DefaultAlgorithm,
    native_data,
)
from ._rowsums import _rc as _rnd  # v (float64) rounded into fmt in mode, specials kept

__all__ = [*names_of(__name__), "FORMS"]

#: layer_norm's and group_norm's default algorithm: "two-pass" (the mean, then the squared
#: deviations; not declared by the caller). A Welford/Chan tree's rigorous bound is 10-20 times
#: looser on normal rows (median 818 against 44 ulps, float32 (4, 1024)) and would cover the
#: eps bugs the issue names; PyTorch's CPU moments (two-pass chunks merged by Chan's formula)
#: and CUDA's Welford kernels are covered by it on every row the tests draw, and declared
#: exactly by algorithm="stable" (their equivalents do).
NORM_ALGORITHM = _DefaultAlgorithm("two-pass")

#: how the output is formed: "centered" ``((x - m) * r) * w + b``; "scale-shift" ``x * s + t``
#: with ``s = r * w``, ``t = b - m * s`` precomputed per row and channel (PyTorch's CPU group
#: norm); "any": either
FORMS = ("centered", "scale-shift", "any")


# ---------------------------------------------------------------------------- operands
def _eps(op, eps) -> Fraction:
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (numbers.Real, Fraction)):
        raise TypeError(f"{op}: eps={eps!r} ({type(eps).__name__}) is not a number; expected a "
                        f"float such as 1e-5")
    if isinstance(eps, (float, np.floating)) and not math.isfinite(float(eps)):
        raise ValueError(f"{op}: eps={eps!r}; expected a finite eps >= 0")
    v = Fraction(float(eps)) if isinstance(eps, (float, np.floating)) else Fraction(eps)
    if v < 0:
        raise ValueError(f"{op}: eps={eps!r} is negative; expected eps >= 0 (torch accepts a "
                         f"negative eps and returns NaN where var + eps < 0; exactref does not)")
    if v.denominator & (v.denominator - 1):
        raise ValueError(f"{op}: eps={eps!r} is not a binary number; pass a float (its exact "
                         f"binary value is used)")
    return v


def _float_array(op, x, name):
    X = prepare(x, name)
    if X.kind != "array":
        raise ValueError(f"{op}: {name} must be an array; got a scalar (pass np.asarray([...]))")
    arr = X.array
    if arr.dtype.kind != "float":
        raise ValueError(f"{op}: {name} is {arr.dtype.name}; {op} needs a real floating "
                         f"{name} (as torch); convert it first, e.g. to float32")
    return arr


def _affine(op, v, shape, name):
    """A weight or bias: None, or an array of ``shape`` (float64 data, exact)."""
    if v is None:
        return None, None
    arr = _float_array(op, v, name)
    if tuple(arr.shape) != tuple(shape):
        raise ValueError(f"{op}: {name} has shape {tuple(arr.shape)}; expected {tuple(shape)} "
                         f"(the normalized shape); pass a {name} of that shape or None")
    data = np.asarray(arr.numpy())
    if data.dtype not in (np.float64, np.float32, np.float16):
        data = data.astype(np.float64)
    return data.astype(np.float64), arr


def _normalized_shape(op, normalized_shape, shape):
    try:
        ns = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else \
            tuple(normalized_shape)
    except TypeError:  # None, a float: not a shape
        ns = ()
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in ns) \
            or not ns:
        raise TypeError(f"{op}: normalized_shape={normalized_shape!r}; expected an int or a "
                        f"non-empty tuple of ints (the trailing dimensions to normalize)")
    ns = tuple(int(v) for v in ns)
    if len(ns) > len(shape) or tuple(shape[len(shape) - len(ns):]) != ns:
        raise ValueError(f"{op}: normalized_shape={list(ns)} does not match the trailing "
                         f"dimensions of x (shape {list(shape)}); expected x's last "
                         f"{len(ns)} dimension(s) to be {list(ns)}")
    return ns


# ------------------------------------------------------------------------ tolerance model
#: how the model's text names ``fused`` (the output format's name in braces)
_FUSED_TEXT = {True: "", False: ", intermediates stored in {}",
               None: ", intermediates kept or stored in {}"}


class NormModel:
    """The declared freedom of a normalization kernel (docs/normalizations.md).

    ``compute``: the format every intermediate is computed in (default PyTorch's opmath:
    float32 for the narrow floats). ``algorithm``: how mean and variance are computed
    (:data:`~exactref.linalg._reductions.ALGORITHMS`: ``"two-pass"``, ``"welford"``,
    ``"chan"``, ``"any"``), summed in ``order``. ``rsqrt``: None (``1 / sqrt(v + eps)``, each
    operation correctly rounded) or ``k``: a fused rsqrt within ``k`` ulps of the compute
    format. ``fma``: the affine step ``n * w + b`` fused (True), not (False) or either (None).
    ``fused``: True (intermediates kept in ``compute``) or False (the normalized value and the
    product with the weight each stored in the output format first: unfused PyTorch ops on
    bfloat16 tensors). ``form``: ``"centered"`` (``((x - m) * r) * w + b``), ``"scale-shift"``
    (``x * s + t``, ``s = r * w`` and ``t = b - m * s`` per row and channel: PyTorch's CPU
    group norm) or ``"any"``."""

    def __init__(self, compute: Format, order, algorithm, rsqrt, fma, fused, form, mode):
        self.compute, self.order, self.algorithm = compute, order, algorithm
        self.rsqrt, self.fma, self.fused, self.form, self.mode = (rsqrt, fma, fused, form,
                                                                   mode)

    def describe(self, centered: bool, out: Format) -> str:
        r = "1 / sqrt" if self.rsqrt is None else f"an rsqrt within {self.rsqrt} ulps"
        mv = "" if not centered else (f"mean and variance by {self.algorithm}, "
                                          f"{self.order} order; {self.form} form; ")
        return (f"{mv}{r}; affine step {'fused' if self.fma else 'unfused' if self.fma is False else 'fused or not'}; "
                f"in {self.compute.name}"
                f"{_FUSED_TEXT[self.fused].format(out.name)}; "
                f"rounded into {out.name}")


def _resolve_model(op, out, compute, order, algorithm, rsqrt, fma, fused, form, mode):
    c = compute_format(out, compute).component
    if order is not DEFAULT_ORDER:
        order = parse_order(order, op)  # a bad one refused with the grammar
    if not isinstance(algorithm, str) or algorithm not in VAR_ALGORITHMS:
        raise ValueError(f"{op}: algorithm={algorithm!r}; expected one of "
                         f"{', '.join(map(repr, VAR_ALGORITHMS))} ('two-pass', the default; "
                         f"'stable' two-pass or Welford/Chan; 'one-pass' E[x**2] - E[x]**2, "
                         f"opt-in; 'any' every one)")
    if form not in FORMS:
        raise ValueError(f"{op}: form={form!r}; expected one of {', '.join(map(repr, FORMS))}")
    if rsqrt is not None and (isinstance(rsqrt, bool) or not isinstance(rsqrt, numbers.Real)
                              or not 0 <= float(rsqrt) < 2**20):
        raise ValueError(f"{op}: rsqrt={rsqrt!r}; expected None (1 / sqrt, each correctly "
                         f"rounded) or the ulps of a fused rsqrt (a number >= 0, e.g. 2)")
    if fma not in (None, True, False) or fused not in (None, True, False):
        raise ValueError(f"{op}: fma={fma!r}, fused={fused!r}; expected fma None/True/False "
                         f"and fused None (either)/True/False")
    return NormModel(c, order, algorithm, rsqrt, fma, fused, form, mode)


def _mul(alo, ahi, blo, bhi):
    """Outward float64 ends of ``{a * b}`` over the boxes (``0 * inf`` gives the whole line)."""
    with np.errstate(invalid="ignore", over="ignore"):
        ps = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
        bad = np.logical_or.reduce([np.isnan(p) for p in ps])
        lo = down(np.fmin.reduce(ps))
        hi = up(np.fmax.reduce(ps))
    return np.where(bad, -np.inf, lo), np.where(bad, np.inf, hi)


class _Ends:
    """An interval per element of values of the compute format, with the rounding of each
    step: ``R_c`` of outward float64 ends (every rounding is monotone)."""

    def __init__(self, model: NormModel):
        self.c, self.mode = model.compute, model.mode

    def r(self, lo, hi):
        return _rnd(lo, self.c, self.mode), _rnd(hi, self.c, self.mode)


def _bracket_int(V, e):
    """float64 ``(lo, hi)`` around ``V * 2**e`` (Python ints, ``V >= 0``)."""
    lo = np.empty(len(V))
    hi = np.empty(len(V))
    for i, (v, ee) in enumerate(zip(V, e, strict=True)):
        v, ee = int(v), int(ee)
        sh = max(v.bit_length() - 53, 0)
        t = v >> sh
        try:
            lo[i] = math.ldexp(float(t), ee + sh)
        except OverflowError:
            lo[i] = np.finfo(np.float64).max
        try:
            hi[i] = math.ldexp(float(t + (1 if sh else 0)), ee + sh)
        except OverflowError:
            hi[i] = np.inf
    return down(lo), up(hi)


def _running_mean_error(X, n, u, eta, algorithm):
    """Bounds of ``|m - mu|`` for the running means of Welford (any order) and of Chan's merged
    states (docs/reductions.md, "var: Welford" step 1 and "chan" steps 1-2)."""
    g3 = float(gamma_up(3, u))
    G = np.abs(X).max(axis=1) if n else np.zeros(X.shape[0])
    # evaluated rigorously in float64 (the slack policy of linalg/_bounds.py), as var's
    with np.errstate(over="ignore", invalid="ignore"):
        if algorithm == "chan":
            spread = up(X.max(axis=1) - X.min(axis=1))
            step = slack_up(u + 2 * g3 + 2 * g3 * u, 4)  # (1 + u)(1 + 2 gamma_3) - 1
            Gp = up(inflate(G, pow1p_m1_up(step, max(n - 1, 0))) + slack_up(4 * n * eta, 2))
            den = down(1 - up(g3 * (n + 1)))
            return (slack_up((g3 * spread + u * Gp + 3 * eta) * (n + 1) / (2 * den), 9)
                    if den > 0 else np.full(X.shape[0], np.inf))
        # exp's argument rounded up (7 operations), exp within an ulp (2 more)
        grow = slack_up(math.exp(slack_up(2 * g3 * (1 + math.log(max(n, 1))), 7)), 2)
        Gp = up(slack_up(inflate(G, pow1p_m1_up(u, n)) * grow, 1) + slack_up(4 * n * eta, 2))
        return slack_up(u * Gp * ((n + 1) / 2 + 1 + 2 * g3 / u) + 2 * eta * (n + 1), 12)


def _algorithms(algorithm) -> tuple:
    """The concrete algorithms ``algorithm`` stands for (``"stable"``: two-pass, or Welford
    chains merged by Chan's formula; ``"any"``: every one, one-pass included)."""
    return {"stable": STABLE_ALGORITHMS, "any": ANY_ALGORITHMS}.get(algorithm, (algorithm,))


def _moments_depth(N: int) -> int:
    """The most merges (Welford steps and Chan combinations) on a term's way to the mean in
    PyTorch CPU's ``RowwiseMoments`` (aten/src/ATen/native/cpu/moments_utils.h) over ``N``
    elements, every lane width ``W`` (4, 8, 16): Welford over chunks of at most 16 vectors
    (``min(16, N // W) - 1`` steps after the first), the chunk into the stack (1), the
    cascade's carries and the final merges of the stack (``ceil(log2 m)`` each, ``m`` the
    chunks), then the ``W`` lanes into the tail's running state (the tail of ``N % W`` elements
    first, by Welford); two more for slack."""
    best = 0
    for W in (4, 8, 16):
        nv, t = N // W, N % W
        d = t - 1 + W if t else 0
        if nv:
            m = -(-nv // 16)
            levels = max((m - 1).bit_length(), 1)
            d = max(d, min(16, nv) - 1 + 1 + 2 * levels + W)
        best = max(best, d)
    return best + 2


def _merge_depth(order, n: int) -> int:
    """``D``: the most merges a term passes on its way to the mean of a Welford/Chan tree in
    ``order`` (its summation depth; ``"library"``: also PyTorch CPU's moments,
    :func:`_moments_depth`), at most ``n - 1``."""
    if n <= 1:
        return 0
    d = order.depth(n)
    if order == "library":
        d = max(d, library_depth(n), _moments_depth(n))
    return min(d, n - 1) if order != "library" else d


def _tree_mean_error(X, n, u, eta, D):
    """A bound of ``|m - mu|`` for the mean of Welford states merged by Chan's formula in a
    tree of depth ``D`` (docs/normalizations.md, "The mean of a Welford/Chan tree"). A merge
    computes ``m = R(m_a + R(R(m_b - m_a) R(n_b / n)))`` (a Welford step: ``n_b = 1``, the
    quotient in one or two roundings); with the children's errors ``e_a, e_b`` its error is
    ``(1 - w) e_a + w e_b`` (``w = n_b / n``, a convex weight) plus its own rounding
    ``delta <= gamma_3 w |m_b - m_a| (1 + u) + u |m| + 5 eta``, so the root's error is
    ``sum_nodes (n_node / n) delta_node``. With ``A = sum |x| / n``, ``G = max |x|``: ``sum_nodes
    (n_node / n) |mu_node| <= sum_j d_j |x_j| / n <= D A``; ``sum_nodes (n_b / n)(|mu_b| +
    |mu_a|) <= sum_j (b_j + 2 a_j) |x_j| / n <= 2 D A`` (``b_j``, ``a_j``: the merges where
    ``x_j`` is in the added or the joined state, ``a_j + b_j = d_j``) where each merge adds a
    state at most twice the size of the one it joins (Welford's steps, pairwise trees, CUDA's
    and Triton's shuffles), plus ``2 G`` for at most two levels of merges into a smaller state
    whose added states are disjoint (PyTorch CPU's final stack merges and its lanes into the
    tail's state). Solved for ``E``: ``E <= (D A (2 g + u) + 2 g G + 5 D eta) / (1 - D (2 g +
    u))``, ``g = gamma_3 (1 + u)``. Every state's exact mean lies in ``[min x, max x]``, so
    ``|m_b - m_a| <= S + 2 E`` (``S = max x - min x``) at every merge, whatever its sizes:
    ``E <= (D A u + g D S + 5 D eta) / (1 - D (2 g + u))`` too (the tighter where the mean is
    far from 0 beside the spread: rows of mean 1000 and std 0.01); the smaller is taken."""
    g3 = float(gamma_up(3, u))
    g = slack_up(g3 + g3 * u, 2)
    M = X.shape[0]
    if n == 0 or D == 0:
        return np.zeros(M)
    with np.errstate(over="ignore", invalid="ignore"):
        A = up(up(np.abs(X).sum(axis=1) * (1 + (n + 2) * 2.0**-52)) / n)
        G = np.abs(X).max(axis=1)
        den = down(1 - up(D * up(2 * g + u)))
        S = up(X.max(axis=1) - X.min(axis=1))
        num = up(up(up(D * up(A * up(2 * g + u))) + up(2 * g * G)) + up(5 * D * eta))
        num_s = up(up(up(D * up(A * u)) + up(D * up(g * S))) + up(5 * D * eta))
        num = np.minimum(num, num_s)
        return np.where(den > 0, up(num / den), np.inf) if den > 0 else np.full(M, np.inf)


def _reduction_ends(arr_rows: Array, model: NormModel):
    """Per row: ``(var lo, var hi, mean lo, mean hi)`` (the mean's None unless a summed mean,
    two-pass or one-pass, is modelled) of :func:`~exactref.linalg.var` and
    :func:`~exactref.linalg.mean` with the model's compute format, order and algorithm. Taken
    for every row at once: their float64 bounds may differ in the last bits with the other
    rows of the call."""
    from ._reductions import mean, var
    c = model.compute
    fits = arr_rows.dtype.component.precision <= c.precision
    dt = c if fits else arr_rows.dtype
    v = var(arr_rows, 1, correction=0, dtype=dt, compute=c, order=model.order,
            algorithm=model.algorithm)
    mlo = mhi = None
    if {"two-pass", "one-pass"} & set(_algorithms(model.algorithm)):
        m = mean(arr_rows, 1, dtype=dt, compute=c, order=model.order)
        mlo, mhi = np.asarray(m.lowest), np.asarray(m.highest)
    return np.asarray(v.lowest), np.asarray(v.highest), mlo, mhi


def _mean_var_ends(rows: _Rows, arr_rows: Array, model: NormModel, VS, eS, reduced=None):
    """Per row: the computed mean's and variance's ends (compute-format values, or float64
    bounds of them), from :func:`~exactref.linalg.mean` and :func:`~exactref.linalg.var`
    with the model's compute format, order and algorithm (the mean of Welford and Chan:
    :func:`_running_mean_error`); ``reduced``: their :func:`_reduction_ends`, for these rows,
    where already taken."""
    c = model.compute
    fits = arr_rows.dtype.component.precision <= c.precision
    vlo, vhi, m_lo, m_hi = _reduction_ends(arr_rows, model) if reduced is None else reduced
    u = 2.0**-c.precision if model.mode.is_nearest else 2.0**(1 - c.precision)
    X = rows.X
    los, his = [], []
    algs = _algorithms(model.algorithm)
    if m_lo is not None:
        los.append(m_lo)
        his.append(m_hi)
    running = [a for a in algs if a in ("welford", "chan")]
    if running:
        mu = np.array([float(Fraction(int(s)) * Fraction(2) ** int(e) / rows.n)
                       if rows.n else 0.0 for s, e in zip(VS, eS, strict=True)])
        order = parse_order(model.order)
        tree = order.kind not in ("any", "sequential")
        for alg in running if not tree else running[:1]:
            eta = c.smallest_subnormal
            e = (_tree_mean_error(X, rows.n, u, eta, _merge_depth(order, rows.n)) if tree
                 else _running_mean_error(X, rows.n, u, eta, alg))
            e = e * (1 + 2.0**-50) + np.abs(mu) * 2.0**-52
            if not fits:
                e = e + u * np.abs(X).max(axis=1)
            los.append(down(mu - e))
            his.append(up(mu + e))
    return (np.fmin.reduce(los), np.fmax.reduce(his), np.maximum(vlo, 0.0), vhi)


def _square_mean_ends(rows: _Rows, model: NormModel, VQ, eQ):
    """Per row: the ends of ``R_c(R_c(sum x**2) / n)`` (or times ``R_c(1 / n)``), the sum's
    from :func:`square_sum_ends`."""
    c = model.compute
    n = rows.n
    u = 2.0**-c.precision if model.mode.is_nearest else 2.0**(1 - c.precision)
    slo, shi = square_sum_ends(rows, model, VQ, eQ)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = _rnd(down(down(slo / n) * (1 - u)), c, model.mode)
        hi = _rnd(up(inflate(up(shi / n), u)), c, model.mode)  # 1 + 2**-53 is 1
    return np.maximum(lo, 0.0), hi


class _SumLibrary(Order):
    """``"library"`` with the long sums' depth for a sum of squares (the squares rounded or
    fused first, then summed as ``x.pow(2).mean()``, Triton's ``tl.sum`` and the fused RMSNorm
    kernels' tree reductions do), not the sums of products' ``k - 1``."""

    __slots__ = ()

    def depth(self, k: int, products: bool = False) -> int:
        return Order.depth(self, k, False)


def square_sum_ends(rows: _Rows, model: NormModel, VQ, eQ):
    """Per row: the ends of ``R_c(sum x**2)``: squares rounded in the compute format or fused,
    summed in ``order`` (:func:`coefficients`; every term is >= 0, so the bound is relative to
    the exact ``Q = VQ 2**eQ``)."""
    c = model.compute
    n = rows.n
    u = 2.0**-c.precision if model.mode.is_nearest else 2.0**(1 - c.precision)
    order = parse_order(model.order)
    if order == "library":  # the squares' sum is a sum (torch's x.pow(2).mean(), tl.sum), not
        order = _SumLibrary(order)  # a BLAS dot: the long sums' depth, not k - 1
    sm = SumModel(c, order, None, None, model.mode)
    coef = float(np.max(coefficients(sm, n, with_products=True, product_bits=2 * rows.prec)))
    if rows.prec > c.precision:  # the data rounded into the compute format first
        g2 = pow1p_m1_up(u, 2)  # (1 + coef)(1 + u)**2 - 1, without forming 1 + u
        coef = slack_up(coef + g2 + coef * g2, 3)
    qlo, qhi = _bracket_int(VQ, eQ)
    eta = c.smallest_subnormal
    with np.errstate(over="ignore", invalid="ignore"):
        ylo = down(deflate(qlo, coef) - slack_up(2 * n * eta, 2))
        yhi = up(inflate(qhi, coef) + slack_up(2 * n * eta, 2))
        return _rnd(np.maximum(ylo, 0.0), c, model.mode), _rnd(yhi, c, model.mode)


def _rsqrt_ends(vlo, vhi, eps: Fraction, model: NormModel):
    """The ends of ``r = RSQRT(R_c(v + R_c(eps)))`` for ``v`` in ``[vlo, vhi]``."""
    c, mode = model.compute, model.mode
    e = float(eps)
    elo = _rnd(np.array(e), c, Rounding.TOWARD_NEGATIVE)
    ehi = _rnd(np.array(e), c, Rounding.TOWARD_POSITIVE)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        slo = _rnd(down(vlo + elo), c, mode)
        shi = _rnd(up(vhi + ehi), c, mode)
        if model.rsqrt is None:
            qlo = _rnd(down(np.sqrt(slo)), c, mode)
            qhi = _rnd(up(np.sqrt(shi)), c, mode)
            rlo = _rnd(down(1.0 / qhi), c, mode)
            rhi = _rnd(up(1.0 / qlo), c, mode)
        else:
            k = float(model.rsqrt)
            ulp = 2.0 ** (1 - c.precision)
            sub = k * c.smallest_subnormal
            tlo = down(down(1.0 / up(np.sqrt(shi))) * (1 - 2.0**-52))
            thi = up(up(1.0 / down(np.sqrt(slo))) * (1 + 2.0**-52))
            rlo = _rnd(down(tlo * (1 - k * ulp) - sub), c, Rounding.TOWARD_NEGATIVE)
            rhi = _rnd(up(thi * (1 + k * ulp) + sub), c, Rounding.TOWARD_POSITIVE)
    return np.maximum(rlo, 0.0), np.where(np.isnan(rhi), np.inf, rhi)


def _model_ends(rows: _Rows, arr_rows: Array, out: Format, model: NormModel, VS, eS, VQ, eQ,
                reduced=None):
    """``(lo, hi, nan)`` per element ``(M, n)``: the outputs every modelled implementation may
    give (derivation: docs/normalizations.md). The rows' means and factors ``r`` first, then
    the elements in blocks of rows that stay in cache. ``reduced``: the rows'
    :func:`_reduction_ends` where taken with more rows."""
    X = rows.X
    M, n = X.shape
    with np.errstate(over="ignore", invalid="ignore"):
        if rows.centered:
            mlo, mhi, vlo, vhi = _mean_var_ends(rows, arr_rows, model, VS, eS, reduced)
        else:
            vlo, vhi = _square_mean_ends(rows, model, VQ, eQ)
            mlo = mhi = np.zeros(M)
        rlo, rhi = _rsqrt_ends(vlo, vhi, rows.eps, model)
    W = None if rows.W is None else np.broadcast_to(rows.W, X.shape)
    B = None if rows.B is None else np.broadcast_to(rows.B, X.shape)
    lo, hi, nan = np.empty((M, n)), np.empty((M, n)), np.empty((M, n), bool)
    step = max(1, (1 << 15) // max(n, 1))
    for r0 in range(0, M, step):
        sl = slice(r0, r0 + step)
        lo[sl], hi[sl], nan[sl] = _element_ends(
            X[sl], None if W is None else W[sl], None if B is None else B[sl],
            mlo[sl, None], mhi[sl, None], rlo[sl, None], rhi[sl, None], rows, model, out)
    return lo, hi, nan


def _element_ends(X, W, B, mlo, mhi, rlo, rhi, rows: _Rows, model: NormModel, out: Format):
    """The ends of a block of elements, each step ``R_c`` of outward float64 ends."""
    c = model.compute
    st = _Ends(model)
    wide = rows.prec > c.precision
    fmas = (True, False) if model.fma is None else (model.fma,)
    ends = []
    with np.errstate(over="ignore", invalid="ignore"):
        xlo = _rnd(X, c, Rounding.TOWARD_NEGATIVE) if wide else X
        xhi = _rnd(X, c, Rounding.TOWARD_POSITIVE) if wide else X
        if not rows.centered:
            ends.append(_affine_ends(st.r(*_mul(xlo, xhi, rlo, rhi)), W, B, fmas, st, model,
                                     out))
        if rows.centered and model.form in ("centered", "any"):
            dlo, dhi = st.r(down(xlo - mhi), up(xhi - mlo))
            ends.append(_affine_ends(st.r(*_mul(dlo, dhi, rlo, rhi)), W, B, fmas, st, model,
                                     out))
        if rows.centered and model.form in ("scale-shift", "any"):
            # the weight folded in (PyTorch's CPU group norm): s = R(r * w), t = R(b - m * s)
            # (FMA) or R(b + R(-m * s)), y = R(x * s + t) (FMA) or R(R(x * s) + t)
            slo, shi = st.r(*_mul(rlo, rhi, W, W)) if W is not None else (rlo, rhi)
            plo, phi = _mul(-mhi, -mlo, slo, shi)
            # the same s in both products: (x - m) s + b, each rounding's error apart (the
            # intervals of x s and m s alone lose the cancellation: rows of mean 1000)
            klo, khi = _scale_shift_ends(xlo, xhi, mlo, mhi, slo, shi, B, st)
            for f1 in fmas:
                tlo, thi = (plo, phi) if f1 and B is not None else st.r(plo, phi)
                if B is not None:
                    tlo, thi = st.r(down(tlo + B), up(thi + B))
                qlo, qhi = _mul(xlo, xhi, slo, shi)
                for f2 in fmas:
                    alo, ahi = (qlo, qhi) if f2 else st.r(qlo, qhi)
                    lo, hi = st.r(down(alo + tlo), up(ahi + thi))
                    ends.append((np.fmax(lo, klo), np.fmin(hi, khi)))
        ylo = np.fmin.reduce([e[0] for e in ends])
        yhi = np.fmax.reduce([e[1] for e in ends])
    nan = np.isnan(ylo) | np.isnan(yhi) | np.broadcast_to(np.isinf(rhi), X.shape)
    ylo = np.where(np.isnan(ylo), -np.inf, ylo)
    yhi = np.where(np.isnan(yhi), np.inf, yhi)
    return ylo, yhi, nan


def _scale_shift_ends(xlo, xhi, mlo, mhi, slo, shi, B, st: _Ends):
    """The ends of the scale-shift form ``R(R(x s) + R(b - R(m s)))`` (or any of its products
    fused) with one ``s`` in both products: ``y = (x - m) s + b + e`` with ``|e| <= u |x| S +
    u |m| S + u (|b| + (1 + u) |m| S) + 4 eta`` (``S = max |s|``: the roundings of ``x s``, of
    ``m s``, of ``b - m s``; each fused product drops its term), the last rounding at the
    ends. Intersected with the products' own intervals (both hold every such output)."""
    c, mode = st.c, st.mode
    u = 2.0 ** -c.precision if mode.is_nearest else 2.0 ** (1 - c.precision)
    eta = c.smallest_subnormal
    with np.errstate(over="ignore", invalid="ignore"):
        S = np.fmax(np.abs(slo), np.abs(shi))
        Q = up(np.fmax(np.abs(mlo), np.abs(mhi)) * S)
        P = up(np.fmax(np.abs(xlo), np.abs(xhi)) * S)
        bb = 0.0 if B is None else np.abs(B)
        err = up(up(up(u * P) + up(u * Q)) + up(up(u * up(bb + up(Q * (1 + u)))) + 4 * eta))
        clo, chi = _mul(down(xlo - mhi), up(xhi - mlo), slo, shi)
        if B is not None:
            clo, chi = down(clo + B), up(chi + B)
        return st.r(down(clo - err), up(chi + err))


def _affine_ends(nrm, W, B, fmas, st: _Ends, model: NormModel, out: Format):
    """The ends of ``R(n * w + b)`` (FMA or not) for the normalized value ``n`` in ``nrm``;
    unfused: ``n`` and ``n * w`` stored in the output format first; ``fused=None``: either
    (the union of both)."""
    if model.fused is None:
        ends = [_affine_ends_of(nrm, W, B, fmas, st, model, out, f) for f in (True, False)]
        return np.fmin(ends[0][0], ends[1][0]), np.fmax(ends[0][1], ends[1][1])
    return _affine_ends_of(nrm, W, B, fmas, st, model, out, model.fused)


def _affine_ends_of(nrm, W, B, fmas, st: _Ends, model: NormModel, out: Format, fused):
    nlo, nhi = nrm
    o, mode = out.component, model.mode
    if not fused:  # the normalized value stored in the output format
        nlo, nhi = _rnd(nlo, o, mode), _rnd(nhi, o, mode)
    if W is None and B is None:
        return nlo, nhi
    plo, phi = _mul(nlo, nhi, W, W) if W is not None else (nlo, nhi)
    if B is None:
        return st.r(plo, phi)
    outs = []
    for f in (fmas if W is not None else (False,)):
        a, b = (plo, phi) if f and fused else st.r(plo, phi)
        if not fused and W is not None:
            a, b = _rnd(a, o, mode), _rnd(b, o, mode)
        outs.append(st.r(down(a + B), up(b + B)))
    return np.fmin.reduce([v[0] for v in outs]), np.fmax.reduce([v[1] for v in outs])


# ------------------------------------------------------------------------------- the ops
#: the elements of one chunk of rows: the exact path's integers and the model's float64
#: bounds are held for a chunk at a time (private: the tests force small chunks to check
#: that chunking changes no bit)
_CHUNK = 1 << 15


def _run(op, arr: Array, X, W, B, eps, kind: RowRoot, out_shape, model_args, ends=None,
         describe=None, place=None, dtype=None):
    """The Result of a normalization of the rows ``X`` (``(M, n)``, float64 or the input's
    own float dtype: converted a chunk at a time) of ``arr``; ``W``, ``B``: ``(1, n)`` or
    ``(G, n)`` for the rows ``r`` taking ``W[r % G]`` (group norm's groups), or None; ``kind``
    the rows' :class:`RowRoot`; ``ends`` and ``describe`` the tolerance model's ends and text
    where not the normalizations' (:func:`_model_ends`, :meth:`NormModel.describe`);
    ``place`` the elements' values (row by row) as the output array (default: reshaped to
    ``out_shape``); ``dtype`` the output format (default x's: the elementwise ops' meaning,
    the exact value rounded once into it)."""
    rounding, overflow, compute, order, algorithm, rsqrt, fma, fused, form = model_args
    centered = kind.centered
    ends = _model_ends if ends is None else ends
    inp = arr.dtype
    out = _output_format(op, inp, dtype)
    mode, rule = resolve_modes(rounding, overflow, out)
    model = _resolve_model(op, out, compute, order, algorithm, rsqrt, fma, fused, form, mode)
    prec = inp.component.precision
    M, n = X.shape
    step = max(_CHUNK // max(n, 1), 1)
    spans = [(r, min(r + step, M)) for r in range(0, M, step)] if M * n else []

    def part(v, r0, r1):  # the weights or biases of rows r0:r1
        if v is None or v.shape[0] == 1:
            return v
        return v[np.arange(r0, r1) % v.shape[0]]

    def rows_of(r0, r1):
        return np.asarray(X[r0:r1], dtype=np.float64)

    flat = np.empty(M * n, dtype=out.np_dtype)
    special = np.zeros((M, n), bool)  # where the exact value is NaN or infinite
    for r0, r1 in spans:
        rows = _Rows(rows_of(r0, r1), part(W, r0, r1), part(B, r0, r1), eps, kind, prec)
        ex = exact_values(rows, out)
        flat[r0 * n:r1 * n] = assemble(out, [ex.round(out.component, mode, rule)[0]])
        special[r0:r1] = ((ex.special != 0) | np.isnan(ex.special)).reshape(r1 - r0, n)
        del rows, ex
    if place is None:
        def place(v):
            return v.reshape(out_shape)
    rounded = Array(np.ascontiguousarray(place(flat)), out)
    data = np.asarray(arr.numpy()).reshape(M, n) if M * n else None

    def bounds():  # a chunk of rows at a time, from the data (the exact values are not read)
        if M * n == 0:
            z = np.zeros(out_shape)
            return [(z, z, np.zeros(out_shape, bool))]
        lo, hi = np.empty((M, n)), np.empty((M, n))
        nan = np.empty((M, n), bool)
        c, comp = model.compute, out.component
        # the rows' integer sums and the mean's and variance's bounds, every row at once:
        # their float64 brackets depend on the grid the rows share (a bound's last bits)
        Xall = np.asarray(X, dtype=np.float64)
        fin_all = np.isfinite(Xall)
        Xall = np.where(fin_all, Xall, 0.0)
        VS_all, eS_all = _int_rowsums(Xall)
        VQ_all, eQ_all = _int_rowsquares(Xall, prec)
        del Xall
        red = None
        if centered:
            finite = data if fin_all.all() else np.where(fin_all, data, 0).astype(data.dtype)
            red = _reduction_ends(Array(finite, inp), model)
            del finite
        del fin_all
        for r0, r1 in spans:
            Xc = rows_of(r0, r1)
            fin = np.isfinite(Xc)
            Xf = np.where(fin, Xc, 0.0)
            VS, eS = VS_all[r0:r1], eS_all[r0:r1]
            VQ, eQ = VQ_all[r0:r1], eQ_all[r0:r1]
            dc = data[r0:r1]
            Xa = Array(dc, inp)
            if not fin.all():  # the finite rows' bounds; the others are exact
                Xa = Array(np.where(fin, dc, 0).astype(dc.dtype), inp)
            frows = _Rows(Xf, part(W, r0, r1), part(B, r0, r1), eps, kind, prec)
            part_red = None if red is None else tuple(
                None if v is None else v[r0:r1] for v in red)
            ylo, yhi, nn = ends(frows, Xa, out, model, VS, eS, VQ, eQ, part_red)
            clo = _chain(ylo, c, comp, mode, mode, nn, -np.inf, rule)
            chi = _chain(yhi, c, comp, mode, mode, nn, np.inf, rule)
            sp = special[r0:r1] | ~fin.all(axis=1)[:, None]  # rows with inf or NaN: exactly
            lo[r0:r1] = np.where(sp, np.nan, clo)
            hi[r0:r1] = np.where(sp, np.nan, chi)
            nan[r0:r1] = nn & ~sp
        return [(place(lo), place(hi), place(nan))]

    models = [f"exact value rounded once into {out.name}", (model.describe(centered, out) if describe is None
                                                  else describe(model, out))]
    details = dict(rounding=mode, overflow=rule, n=n, compute=model.compute, order=model.order,
                   algorithm=model.algorithm, rsqrt=model.rsqrt, fma=model.fma,
                   fused=model.fused, form=model.form, eps=eps)
    details["centered"] = centered
    details["declared"] = not (algorithm is NORM_ALGORITHM and order is DEFAULT_ORDER
                               and compute is None)
    res = _NormResult(rounded, bounds, op=op, models=models, details=details)
    res.inputs = {"x": arr}
    return res


def _output_format(op, inp: Format, dtype) -> Format:
    """The output format: ``dtype`` (a real floating format) or x's."""
    if dtype is None:
        return inp
    out = resolve_dtype(dtype)
    if out.kind != "float":
        raise ValueError(f"{op}: dtype={dtype!r} is not a real floating format; pass a float "
                         f"format such as dtype='float32' (or leave it out: x's format)")
    return out


def _compute_for(op, inp: Format, out: Format, compute, dtype) -> Format:
    """The compute format: the output's default (PyTorch's opmath) or ``compute``; with a
    ``dtype`` narrower than the operands, the operands' default, and never narrower than them
    (the model reads the operands exactly in it)."""
    if dtype is None:
        return compute_format(out, compute)
    c = compute_format(out if out.precision >= inp.precision else inp, compute)
    if c.precision < inp.precision:
        raise ValueError(f"{op}: compute={c.name} is narrower than the operands ({inp.name}) "
                         f"with dtype={out.name}; pass compute={inp.name} or wider, or leave "
                         f"it out")
    return c


def backward_keywords(op, dtype, policy) -> None:
    """The common keywords of a row op's backward pass: ``policy`` as the forward's (torch's);
    ``dtype`` refused by name (the gradients are in the operands' formats, as torch's autograd
    gives them)."""
    row_policy(op, policy)
    if dtype is not None:
        raise ValueError(f"{op}: dtype={dtype!r} is not taken: the gradients are in the "
                         f"operands' formats (as torch's autograd gives them); convert the "
                         f"operands first, e.g. er.asarray(x, {dtype!r})")


#: a row op's default check is called loose (:class:`exactref.WeakCheckWarning`) where its
#: median tolerance exceeds this many ulps of the output format (issue 21's bar)
LOOSE_ULPS = 64


class _NormResult(BoundResult):
    """A normalization's Result: loose where nothing of the model was declared and the median
    tolerance exceeds :data:`LOOSE_ULPS` ulps (the default order and algorithms hold Welford
    trees of PyTorch's depth, whose running mean's bound is about four times the two-pass
    one's; a large mean beside the spread costs the centered value its digits). The warning
    says what declaring ``algorithm="two-pass"`` or ``order="pairwise"`` gives (computed)."""

    _again = None  # the same call with other keywords (set by the op)
    _alternatives = None

    def _tighter(self):
        """``[(text, median)]`` of the declarations that tighten the check, computed once."""
        if self._alternatives is None:
            out = []
            tries = [{"order": "pairwise"}]
            if self.details.get("algorithm") not in (None, "two-pass") and \
                    self.details.get("centered"):
                tries = [{"algorithm": "two-pass"}, {"algorithm": "two-pass",
                                                    "order": "pairwise"}] + tries
            for kw in tries if self._again is not None else ():
                u = np.asarray(self._again(**kw).tolerance_ulps(), dtype=np.float64)
                u = u[np.isfinite(u)]
                text = ", ".join(f"{k}={v!r}" for k, v in kw.items())
                out.append((text, float(np.median(u)) if u.size else 0.0))
            self._alternatives = out
        return self._alternatives

    def weak_check(self):
        if self.details.get("declared") or self.rounded.size == 0:
            return None
        ulps = np.asarray(self.tolerance_ulps(), dtype=np.float64)
        ulps = ulps[np.isfinite(ulps)]
        med = float(np.median(ulps)) if ulps.size else 0.0
        if med <= LOOSE_ULPS:
            return None
        better = [(t, m) for t, m in self._tighter() if m <= med / 2]
        if not better:
            return None
        gives = "; ".join(f"{t} gives median {m:.4g} ulp" for t, m in better)
        return (f"{self.op}: a loose check: the median tolerance is {med:.4g} ulp of "
                f"{self.rounded.dtype.name} with the default model (order='library', "
                f"algorithm={self.details['algorithm']!r}, "
                f"in {self.details['compute'].name}). Tighten it by declaring the kernel: "
                f"{gives} (or use the library's equivalents; docs/normalizations.md, 'How "
                f"strong a check is')")


def _rows_of(arr: Array, n, nd: int = 1, native: bool = False):
    """``arr``'s rows of its ``n`` trailing elements (its last ``nd`` dimensions), float64
    ``(M, n)`` (``native``: in the data's own float dtype where numpy has it, float32 for
    bfloat16, a view where it can be); with ``n = 0`` (an empty normalized shape, as torch
    takes) the rows are counted from the leading dimensions."""
    if n == 0:
        return np.zeros((int(np.prod(arr.shape[:len(arr.shape) - nd], dtype=np.int64)), 0))
    data = native_data(arr)
    if native:
        return np.ascontiguousarray(data).reshape(-1, n)
    return np.ascontiguousarray(data, dtype=np.float64).reshape(-1, n)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5, *, dtype=None,
               rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
               algorithm=NORM_ALGORITHM, rsqrt=None, fma=None, fused=None, form="any",
               policy="torch"):
    """Layer normalization over the trailing ``normalized_shape`` dimensions (torch's
    signature): ``(x - mean) / sqrt(var + eps) * weight + bias`` with the exact population
    mean and variance and ``eps``'s exact binary value, rounded once.

    The tolerance bounds every implementation of the declared model (:class:`NormModel`):
    ``compute`` (default float32 for the narrow floats), ``algorithm`` and ``order`` of the
    mean and variance, ``rsqrt`` (None: ``1 / sqrt``; ``k``: a fused rsqrt within ``k`` ulps),
    ``fma``, ``fused`` (True: intermediates kept in ``compute``; False: stored in the output
    format; None, the default: either, so a fused kernel and an unfused composite are both
    covered) and ``form``. ``dtype``: the output format (default x's), the exact value rounded
    once into it.

    >>> import exactref as er
    >>> er.layer_norm(er.asarray([[1.0, 3.0]], "float32"), 2, eps=0.0).rounded.tolist()
    [[-1.0, 1.0]]
    >>> er.layer_norm([[2.0, 2.0, 2.0]], (3,), bias=[0.5, 0.0, -1.0]).rounded.tolist()
    [[0.5, 0.0, -1.0]]
    """
    row_policy("layer_norm", policy)
    arr = _float_array("layer_norm", x, "x")
    ns = _normalized_shape("layer_norm", normalized_shape, arr.shape)
    n = int(np.prod(ns, dtype=np.int64))
    e = _eps("layer_norm", eps)
    W, _ = _affine("layer_norm", weight, ns, "weight")
    B, _ = _affine("layer_norm", bias, ns, "bias")
    X = _rows_of(arr, n, len(ns), native=True)
    res = _run("layer_norm", arr, X, None if W is None else W.reshape(1, n),
               None if B is None else B.reshape(1, n), e, CENTERED, tuple(arr.shape),
               (rounding, overflow, compute, order, algorithm, rsqrt, fma, fused, form),
               dtype=dtype)
    res._again = lambda **kw: layer_norm(x, normalized_shape, weight, bias, eps, **{
        **dict(dtype=dtype, rounding=rounding, overflow=overflow, compute=compute, order=order,
               algorithm=algorithm, rsqrt=rsqrt, fma=fma, fused=fused, form=form), **kw})
    return res


def rms_norm(x, normalized_shape, weight=None, eps=None, *, dtype=None, rounding=_NE,
             overflow=None, compute=None, order=DEFAULT_ORDER, rsqrt=None, fma=None, fused=None,
             policy="torch"):
    """RMS normalization over the trailing ``normalized_shape`` dimensions (torch's
    signature): ``x / sqrt(mean(x**2) + eps) * weight``, exactly, rounded once. ``eps=None``
    is what PyTorch 2.13 takes (measured): the machine epsilon of the compute type, float32's
    ``2**-23`` for the narrow floats (not bfloat16's), float64's for float64. ``dtype``, the
    model's options: as :func:`layer_norm`.

    >>> import exactref as er
    >>> er.rms_norm(er.asarray([[3.0, 4.0]], "float32"), 2, eps=0.0).rounded.tolist()
    [[0.8485281467437744, 1.1313709020614624]]
    """
    row_policy("rms_norm", policy)
    arr = _float_array("rms_norm", x, "x")
    ns = _normalized_shape("rms_norm", normalized_shape, arr.shape)
    n = int(np.prod(ns, dtype=np.int64))
    if eps is None:
        c = compute_format(_output_format("rms_norm", arr.dtype, dtype), None).component
        eps = 2.0 ** (1 - c.precision)
    e = _eps("rms_norm", eps)
    W, _ = _affine("rms_norm", weight, ns, "weight")
    X = _rows_of(arr, n, len(ns), native=True)
    res = _run("rms_norm", arr, X, None if W is None else W.reshape(1, n), None, e, SCALED,
               tuple(arr.shape), (rounding, overflow, compute, order, DEFAULT_ALGORITHM,
                                  rsqrt, fma, fused, "centered"), dtype=dtype)
    res._again = lambda **kw: rms_norm(x, normalized_shape, weight, eps, **{
        **dict(dtype=dtype, rounding=rounding, overflow=overflow, compute=compute, order=order,
               rsqrt=rsqrt, fma=fma, fused=fused), **kw})
    return res


def group_norm(x, num_groups, weight=None, bias=None, eps=1e-5, *, dtype=None,
               rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
               algorithm=NORM_ALGORITHM, rsqrt=None, fma=None, fused=None, form="any",
               policy="torch"):
    """Group normalization (torch's signature): ``x`` of shape ``(N, C, *)``, its ``C``
    channels in ``num_groups`` groups, each group of each sample normalized by its exact mean
    and variance, then ``* weight[c] + bias[c]`` per channel; rounded once. The model's
    options (and ``dtype``) as in :func:`layer_norm`.

    >>> import exactref as er
    >>> er.group_norm([[[1.0], [3.0], [5.0], [5.0]]], 2, eps=0.0).rounded.tolist()
    [[[-1.0], [1.0], [nan], [nan]]]
    """
    row_policy("group_norm", policy)
    arr = _float_array("group_norm", x, "x")
    shape = tuple(arr.shape)
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
        raise TypeError(f"group_norm: num_groups={num_groups!r} is not an int")
    G = int(num_groups)
    if len(shape) < 2:
        raise ValueError(f"group_norm: x has shape {list(shape)}; expected (N, C, *) with at "
                         f"least 2 dimensions")
    C = shape[1]
    if G <= 0 or C % G:
        raise ValueError(f"group_norm: num_groups={G} does not divide the {C} channels of x "
                         f"(shape {list(shape)}); expected a positive divisor of {C}")
    e = _eps("group_norm", eps)
    W, _ = _affine("group_norm", weight, (C,), "weight")
    B, _ = _affine("group_norm", bias, (C,), "bias")
    P = int(np.prod(shape[2:], dtype=np.int64))
    Nb = shape[0]
    n = (C // G) * P

    def per_row(v):
        if v is None:
            return None
        return np.repeat(v.reshape(G, C // G), P, axis=1)  # (G, n): row r takes r % G

    X = _rows_of(arr, n, native=True) if Nb * C * P else np.zeros((Nb * G, n))
    res = _run("group_norm", arr, X, per_row(W), per_row(B), e, CENTERED, shape,
               (rounding, overflow, compute, order, algorithm, rsqrt, fma, fused, form),
               dtype=dtype)
    res._again = lambda **kw: group_norm(x, num_groups, weight, bias, eps, **{
        **dict(dtype=dtype, rounding=rounding, overflow=overflow, compute=compute, order=order,
               algorithm=algorithm, rsqrt=rsqrt, fma=fma, fused=fused, form=form), **kw})
    return res


# ----------------------------------------------------------------------------- registry
def register_norms() -> None:
    """The normalizations' records in the op registry (jax.nn and numpy have none)."""
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register
    from ._norms_backward import group_norm_backward, layer_norm_backward, rms_norm_backward

    # the audit's groups (exactref.audit's generic "rows" builder): a model's shapes, each with
    # a data flavor (and group_norm's number of groups), the operands' roles in the call
    rows = (((8, 4096), "random"), ((2, 16, 64), "offset"), ((4, 256), "constant"),
            ((4, 256), "huge"), ((6, 64), "edges"), ((6, 1), "random"))
    audits = {
        layer_norm: {"cases": rows, "operands": ("x", "shape", "weight", "bias")},
        rms_norm: {"cases": rows[:2] + rows[3:], "operands": ("x", "shape", "weight")},
        group_norm: {"cases": (((2, 32, 8, 8), "random", 8), ((2, 32, 8, 8), "offset", 8),
                               ((2, 32, 8, 8), "constant", 8), ((2, 32, 4, 4), "huge", 4),
                               ((4, 6, 1), "random", 6)),
                     "operands": ("x", "groups", "weight", "bias")}}
    # layer_norm's and group_norm's weight, bias and eps, and torch's kernel of both: the
    # statistics by Chan's algorithm in any order, forward and backward, then the given form
    affine = (Param("weight", None), Param("bias", None), Param("eps", 1e-5))

    def torch_chan(call, kernel, form):
        return Counterparts(Counterpart(
            call, source=f"torch 2.13 CPU: {kernel}",
            contract={"order": "any", "algorithm": "chan", "form": form, "fused": True},
            data={"backward": {"order": "any", "algorithm": "chan"}}), None, None)

    for fn, kind, backward, summary, params, cp in (
            (layer_norm, CENTERED, layer_norm_backward, "(x - mean) / sqrt(var + eps) * w + b over the trailing dims, "
                         "exactly, rounded once",
             (Param("normalized_shape", None), *affine),
             torch_chan("torch.nn.functional.layer_norm", "LayerNormKernelImpl", "centered")),
            (rms_norm, SCALED, rms_norm_backward, "x / sqrt(mean(x**2) + eps) * w over the trailing dims, exactly, "
                       "rounded once",
             (Param("normalized_shape", None), Param("weight", None), Param("eps", None)),
             Counterparts(Counterpart(
                 "torch.nn.functional.rms_norm", source="torch 2.13 CPU: its composite",
                 contract={"order": "any", "fused": True}, data={"backward": {"order": "any"}}),
                 None, None)),
            (group_norm, CENTERED, group_norm_backward, "layer norm over groups of channels of (N, C, *), per-channel "
                         "w and b, exactly, rounded once",
             (Param("num_groups", None), *affine),
             torch_chan("torch.nn.functional.group_norm", "GroupNormKernelImpl", "scale-shift"))):
        fn.spec = register(OpSpec(
            name=fn.__name__, operands=("x",), kernel="row root", promotion="rsqrt",
            function=fn, summary=summary, params=params, exact=kind,
            models=("exact", "mean and variance two-pass, Welford or Chan in the compute "
                    "format", "1 / sqrt or an rsqrt within k ulps", "fused or unfused"),
            counterparts=cp, kinds=("float",), family="linalg",
            backward=backward,
            audit=AuditPlan(groups="rows", data={**audits[fn], "min_bits": 16})))
