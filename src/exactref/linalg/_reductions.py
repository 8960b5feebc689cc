"""The rational reductions: ``mean``, ``var``, ``std`` and ``cumsum``, each output element the
exact value rounded once, with a tolerance that bounds the declared implementations.

Exact values (see docs/reductions.md):

* every row's exact sum ``S = sum x`` and sum of squares ``Q = sum x**2`` are Python integers at
  a power-of-two scale (:func:`_int_rowsums`: the long-sum engine's digits on per-row grids,
  summed exactly in float64 and assembled per row);
* ``mean = S / n``, ``var = (n Q - S**2) / (n (n - correction))`` are rationals of those
  integers, ``std`` the square root of ``var``: each is rounded to odd at 113 bits or more with
  Python integers (``isqrt`` for the root), which rounds like the exact value into every
  format of at most 53 bits in every mode (the round-to-odd theorem);
* ``cumsum``: every prefix of a row at once, from running sums of the same digits (exact
  integers below 2**53), distilled by the engine as one ExactArray: ``O(n)`` per row.

The tolerance models are derived in docs/reductions.md, section "Tolerance models".
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._array import Array
from .._exact import (
    U64,
    ExactArray,
    deflate,
    down,
    gamma_up,
    inflate,
    pow1p_m1_up,
    prefix_exact,
    put_specials,
    resolve_modes,
    slack_up,
    up,
)
from .._operands import prepare, to_array
from ..ops import names_of
from ._bounds import (
    _NE,
    DEFAULT_ORDER,
    BoundResult,
    ExactResult,
    _chain,
    order_for_axes,
    overflow_ends,
)
from ._flush import apply as apply_flush
from ._flush import check_flush, flushes_outputs
from ._rowsums import (  # noqa: F401  (ALGORITHMS, _int_rowsums, _int_rowsquares, _spelling,
    # reduction_axes and row_policy: the norms and the softmax family read them here)
    ALGORITHMS,
    ANY_ALGORITHMS,
    DEFAULT_ALGORITHM,
    STABLE_ALGORITHMS,
    VAR_ALGORITHMS,
    _bracket,
    _details,
    _divide_ends,
    _exact_of,
    _float_input,
    _int_rowsquares,
    _int_rowsums,
    _int_value_up,
    _is_int,
    _model,
    _odd_pairs,
    _output,
    _rc,
    _record,
    _rows,
    _specials,
    _spelling,
    _sum_bound,
    _zero_signs,
    reduction_axes,
    reduction_format,
    row_policy,
    sum_format,
)

__all__ = [*names_of(__name__), "reduction_axes", "ALGORITHMS", "VAR_ALGORITHMS"]


# ----------------------------------------------------------------------------------- mean
def mean(x, dim=None, keepdim=None, dtype=None, *, axis=None, keepdims=None, rounding=_NE,
         overflow=None, compute=None, order=DEFAULT_ORDER, policy="torch", flush=None):
    """The mean of ``x`` over ``dim`` (torch's spelling; numpy's ``axis``/``keepdims`` too):
    the exact sum divided by the count, rounded once.

    The tolerance bounds every implementation that sums in ``compute`` (default: float32 for
    the narrow floats, as torch) in the ``order`` declared, then divides by the count (or
    multiplies by its rounded reciprocal) in ``compute``, then rounds into the output. An
    empty reduction is NaN. ``policy`` ("torch" or "numpy") picks the result format when no
    ``dtype`` is named: torch refuses integers, numpy gives float64. ``flush``: None,
    ``"inputs"``, ``"outputs"`` or ``"both"``: a kernel that may flush subnormals (DAZ, FTZ:
    :mod:`exactref.linalg._flush`).

    >>> import exactref as er
    >>> from exactref.linalg import mean
    >>> mean(er.asarray([1.0, 2.0, 2.0], "float32")).rounded.tolist()    # 5/3 rounded once
    1.6666666269302368
    >>> mean([[1.0, 2.0], [3.0, 5.0]], axis=1, keepdims=True).rounded.tolist()
    [[1.5], [4.0]]
    """
    ax, kd = _spelling("mean", axis, dim, keepdims, keepdim)
    check_flush("mean", flush)
    arr, out = _float_input("mean", x, dtype, policy)
    mode, rule = resolve_modes(rounding, overflow, out)
    axes = reduction_axes("mean", ax, arr.shape)
    X, out_shape, kd_shape, K = _rows(arr, axes)
    final = kd_shape if kd else out_shape
    prec = arr.dtype.component.precision
    special, Xf = _specials(X)
    ex, ex_sum = _mean_exact(Xf, K, prec, special)
    values = ex.round(out.component, mode, rule)[0].reshape(final)
    rounded = to_array([values], out, final)
    order = order_for_axes(order, axes, arr.shape)
    model = _model(out, compute, order, mode, ftz=flushes_outputs(flush))

    def bounds():
        if K == 0:
            z = np.full(final, np.nan)
            return [(z, z, np.ones(final, bool))]
        Xd = Xf.astype(np.float64, copy=False)
        lo, hi, ts = _mean_ends(model, ex_sum, Xd, K, prec, special)
        lo, hi, nan = _output(lo, hi, out, mode, rule, model, ts)
        return [(lo.reshape(final), hi.reshape(final), nan.reshape(final),
                 (ts / K).reshape(final))]

    models = [f"exact value rounded once into {out.name}",
              f"summed in {model.compute.name}, {model.order} order, then divided by the "
              f"count (or multiplied by its reciprocal) in {model.compute.name}, then rounded "
              f"into {out.name}"]
    res = BoundResult(rounded, bounds, op="mean", models=models,
                      details=_details(model, order, mode, rule, K))
    res._with_order = lambda o: mean(x, dim=ax, keepdim=kd, dtype=dtype, rounding=rounding,
                                     overflow=overflow, compute=compute, order=o, policy=policy,
                                     flush=flush)
    res = apply_flush(res, flush, out, model.compute.smallest_normal, [arr],
                      lambda a, flush: mean(a, dim=ax, keepdim=kd, dtype=dtype,
                                            rounding=rounding, overflow=overflow,
                                            compute=compute, order=order, policy=policy,
                                            flush=flush))
    return _record(res, arr, axes, kd)


def _mean_exact(X, K, prec, special):
    """``(mean, sum)``: the exact ``sum / K`` per row and the exact sum, as ExactArrays
    (``special``: the rows' IEEE sums of non-finite values, NaN for an empty row)."""
    M = X.shape[0]
    if K == 0:
        nan = ExactArray.regular((M,), np.zeros(M), special=np.full(M, np.nan))
        return nan, ExactArray.zeros((M,))
    VS, eS = _int_rowsums(X.astype(np.float64, copy=False))
    s = _exact_of(list(zip(VS, eS, strict=True)), (M,))
    if K & (K - 1) == 0:  # a power of two: the exact sum scaled
        ex = _exact_of(list(zip(VS, eS - (K.bit_length() - 1), strict=True)), (M,))
    else:
        ex = _exact_of(_odd_pairs(VS, [K] * M, eS), (M,))
    s.zsign[:] = ex.zsign[:] = _zero_signs(X)
    if ((special != 0) | np.isnan(special)).any():
        for e in (ex, s):
            put_specials(e, special)
    return ex, s


def _mean_ends(model, ex_sum, X, K, prec, special):
    """Ends ``R_c`` of the computed mean in the compute format, and the rows' sum of ``|x|``:
    the sum ``R_c(y)``, ``|y - S| <= b`` (the long-sum bound), then divided by ``K`` in the
    compute format (or multiplied by ``R_c(1 / K)``)."""
    c = model.compute
    u = model.unit(c)
    b, ts = _sum_bound(model, X, K, prec)
    s_dn, s_up = _bracket(ex_sum)
    with np.errstate(over="ignore", invalid="ignore"):
        # one float64 subtraction each: within half an ulp of its result
        slo = _rc(np.where(b == 0, s_dn, down(s_dn - b)), c, model.mode)
        shi = _rc(np.where(b == 0, s_up, up(s_up + b)), c, model.mode)
    lo, hi = _divide_ends(slo, shi, float(K), c, model.mode, u)
    sp = (special != 0) | np.isnan(special)
    lo = np.where(sp, special, lo)
    hi = np.where(sp, special, hi)
    return lo, hi, ts


# ------------------------------------------------------------------------------ var, std
def var(x, dim=None, correction=None, keepdim=None, *, axis=None, keepdims=None, ddof=None,
        dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
        algorithm=DEFAULT_ALGORITHM, policy="torch", flush=None):
    """The variance of ``x`` over ``dim``: ``sum (x - mean)**2 / (n - correction)``, exactly,
    rounded once (torch's signature; numpy's ``axis``, ``keepdims`` and ``ddof`` too: ``ddof``
    is ``correction``, whose default here is torch's 1, not numpy's 0; pass one of the two).

    The exact value is ``(n Q - S**2) / (n (n - correction))`` with the exact sum ``S`` and sum
    of squares ``Q``; a variance of zero is recognised exactly. ``correction >= n`` gives what
    torch gives: ``+inf``, or NaN where the variance is 0 (0 / 0). The tolerance bounds
    ``algorithm``: ``"two-pass"`` (the mean in ``compute``, then the squared deviations summed
    in ``order``), ``"welford"`` (running updates, one element at a time, in any order), or
    ``"any"`` (both), each in ``compute`` (default float32 for the narrow floats). ``policy``
    picks the result format as in :func:`mean`.

    >>> import exactref as er
    >>> from exactref.linalg import var
    >>> var(er.asarray([1.0, 2.0, 4.0], "float32")).rounded.tolist()        # 7/3
    2.3333332538604736
    >>> var([1e8 + 1, 1e8 + 1, 1e8 + 1], correction=0).rounded.tolist()      # exactly zero
    0.0
    """
    correction = _ddof("var", correction, ddof)
    return _var_impl("var", x, dim, correction, keepdim, axis, keepdims, dtype, rounding,
                     overflow, compute, order, algorithm, root=False, policy=policy,
                     flush=flush)


def std(x, dim=None, correction=None, keepdim=None, *, axis=None, keepdims=None, ddof=None,
        dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
        algorithm=DEFAULT_ALGORITHM, policy="torch", flush=None):
    """The standard deviation: the square root of :func:`var`'s exact value, rounded once
    (decided exactly with integer square roots). Options as in :func:`var`; the tolerance adds
    the square root in ``compute``.

    >>> from exactref.linalg import std
    >>> std([1.0, 3.0], correction=0).rounded.tolist()
    1.0
    """
    correction = _ddof("std", correction, ddof)
    return _var_impl("std", x, dim, correction, keepdim, axis, keepdims, dtype, rounding,
                     overflow, compute, order, algorithm, root=True, policy=policy,
                     flush=flush)


def _ddof(op, correction, ddof):
    """numpy's ``ddof`` is torch's ``correction`` (note their defaults: 0 and 1); both at once
    are refused, whatever their values (one would silently win)."""
    if ddof is None:
        return 1 if correction is None else correction
    if correction is not None:
        raise ValueError(f"{op}: correction={correction!r} and ddof={ddof!r} are both given; "
                         f"they are the torch and numpy spellings of one argument (n - "
                         f"correction divides the sum of squares): pass only one of them")
    return ddof


def _correction(op, correction, negative_ok=False):
    if isinstance(correction, (bool, np.bool_)) or not isinstance(
            correction, (int, float, np.integer, np.floating, Fraction)):
        raise TypeError(f"{op}: correction={correction!r} is not a number; expected an "
                        f"integer such as 0 (population) or 1 (sample, the default)")
    c = Fraction(correction) if not isinstance(correction, float) or math.isfinite(
        correction) else None
    if c is None or (c < 0 and not negative_ok):
        raise ValueError(f"{op}: correction={correction!r}; expected a finite correction >= 0 "
                         f"(0: population variance, 1: sample variance, the default). torch "
                         f"accepts a negative one (a divisor above n); exactref does not")
    return c


def _var_impl(op, x, dim, correction, keepdim, axis, keepdims, dtype, rounding, overflow,
              compute, order, algorithm, root, mean_compute=None, negative_ok=False,
              policy="torch", flush=None):
    """var and std; ``mean_compute``: the format the two-pass mean is computed in when it is
    not ``compute`` (PyTorch's float32 all-reduce: the mean in float32, the rest in float64);
    ``negative_ok``: accept a negative correction (PyTorch does)."""
    ax, kd = _spelling(op, axis, dim, keepdims, keepdim)
    check_flush(op, flush)
    corr = _correction(op, correction, negative_ok)
    if not isinstance(algorithm, str) or algorithm not in VAR_ALGORITHMS:
        raise ValueError(f"{op}: algorithm={algorithm!r}; expected one of "
                         f"{', '.join(map(repr, VAR_ALGORITHMS))} ('stable', the default: "
                         f"two-pass or Welford/Chan in the declared order; 'one-pass' is "
                         f"E[x**2] - E[x]**2, unstable, opt-in; 'any': every one)")
    arr, out = _float_input(op, x, dtype, policy)
    mode, rule = resolve_modes(rounding, overflow, out)
    axes = reduction_axes(op, ax, arr.shape)
    X, out_shape, kd_shape, K = _rows(arr, axes)
    final = kd_shape if kd else out_shape
    prec = arr.dtype.component.precision
    M = X.shape[0]
    fin = np.isfinite(X).all(axis=1)
    Xf = np.where(np.isfinite(X), X, 0.0).astype(np.float64)
    VS, eS = _int_rowsums(Xf)
    VQ, eQ = _int_rowsquares(Xf, prec)
    # n Q - S**2 at the scale 2**e0 (an exact integer: zero variance is exactly 0)
    N, e0 = [], []
    for vs, es, vq, eq in zip(VS, eS, VQ, eQ, strict=True):
        vs, es, vq, eq = int(vs), int(es), int(vq), int(eq)
        lo = min(eq, 2 * es)
        N.append(K * (vq << (eq - lo)) - ((vs * vs) << (2 * es - lo)))
        e0.append(lo)
    dfree = K - corr  # n - correction (a Fraction)
    num = Fraction(1) if dfree <= 0 else Fraction(1) / (K * dfree)  # var = N 2**e0 * num
    nums = [n_ * num.numerator for n_ in N]
    dens = [num.denominator] * M
    special = np.where(fin, 0.0, np.nan)
    if dfree <= 0:  # torch: M2 / max(0, n - correction): inf, or NaN for 0 / 0
        special = np.where(fin, np.where(np.array([n_ != 0 for n_ in N], bool), np.inf,
                                         np.nan), np.nan)
    if K == 0:
        special = np.full(M, np.nan)
    if root:
        ee = np.array(e0, dtype=np.int64)
        odd = (ee & 1).astype(bool)
        nums = [v * 2 if o else v for v, o in zip(nums, odd, strict=True)]
        ee = ee - odd
        pairs = _odd_pairs(nums, dens, ee, root=True)
    else:
        pairs = _odd_pairs(nums, dens, e0)
    ex = _exact_of(pairs, (M,), zsign=1)  # a zero variance is +0 in every mode
    sp = special != 0
    ex.special = np.where(sp, special, 0.0)
    ex.zero &= ~sp
    values = ex.round(out.component, mode, rule)[0].reshape(final)
    rounded = to_array([values], out, final)
    order = order_for_axes(order, axes, arr.shape)
    model = _model(out, compute, order, mode, ftz=flushes_outputs(flush))

    def bounds():
        m2 = _exact_of(_odd_pairs(N, [max(K, 1)] * M, e0), (M,))
        mmodel = model if mean_compute is None else _model(out, mean_compute, order, mode,
                                                           ftz=flushes_outputs(flush))
        lo, hi, nan, ts = _var_ends(model, algorithm, Xf, K, prec, dfree, m2, VQ, eQ, fin,
                                    root, mmodel)
        lo, hi, nan2 = _output(lo, hi, out, mode, rule, model, np.zeros(M))
        return [(lo.reshape(final), hi.reshape(final), (nan | nan2).reshape(final),
                 ts.reshape(final))]

    named = {"any": "two-pass, Welford, Chan or one-pass",
             "stable": "two-pass or Welford/Chan"}.get(algorithm, algorithm)
    models = [f"exact value rounded once into {out.name}",
              f"{named} in "
              f"{model.compute.name}, {model.order} order, divided by n - correction"
              f"{', square root' if root else ''} in {model.compute.name}, then rounded into "
              f"{out.name}"]
    res = _VarResult(rounded, bounds, op=op, models=models,
                     details=_details(model, order, mode, rule, K, correction=corr,
                                      algorithm=str(algorithm),
                                      algorithm_declared=algorithm is not DEFAULT_ALGORITHM))
    res._with_algorithm = lambda alg: _var_impl(
        op, x, dim, correction, keepdim, axis, keepdims, dtype, rounding, overflow, compute,
        order, alg, root, mean_compute, negative_ok, policy, flush)
    res = apply_flush(res, flush, out, model.compute.smallest_normal, [arr],
                      lambda a, flush: _var_impl(op, a, dim, correction, keepdim, axis,
                                                 keepdims, dtype, rounding, overflow, compute,
                                                 order, algorithm, root, mean_compute,
                                                 negative_ok, policy, flush))
    return _record(res, arr, axes, kd)


class _VarResult(BoundResult):
    """var's and std's Result: weak where the tolerance is wide for want of a declared
    algorithm, order or compute format (the Welford bound grows like ``n kappa u``)."""

    def weak_check(self):
        d = self.details
        if d.get("algorithm_declared") or d.get("order_declared") or self.rounded.size == 0:
            return None
        median = self.weak_median_ulps()
        if median is None:
            return None
        tighter = ""
        again = getattr(self, "_with_algorithm", None)
        if again is not None and d.get("algorithm") != "two-pass":
            med = float(np.median(again("two-pass").tolerance_ulps()))
            tighter = f": algorithm='two-pass' gives median {med:.4g} ulp"
        return (f"{self.op}: a weak check: the median tolerance is "
                f"{median:.4g} ulp of {self.rounded.dtype.name}, with the stable algorithms "
                f"(two-pass, Welford/Chan) in the libraries' orders in {d['compute'].name}; "
                f"Chan's worst case (Welford states merged in a tree, PyTorch's CUDA kernel) "
                f"dominates. An output far from the exact value is covered. Tighten it: declare "
                f"the kernel's algorithm (NumPy's and Inductor's two-pass{tighter}), its order "
                f"(order='pairwise'), or its "
                f"accumulator (compute='float64': PyTorch's CPU kernels), or use the library's "
                f"equivalents (docs/reductions.md, 'How strong is a check')")


def _var_ends(model, algorithm, X, K, prec, dfree, m2, VQ, eQ, fin, root, mean_model):
    """Ends (in the compute format) of every modelled var/std implementation; derivations in
    docs/reductions.md. Returns ``(lo, hi, nan, terms)``."""
    c = model.compute
    u = model.unit(c)
    eta = model.eta
    M = X.shape[0]
    m2lo, m2hi = _bracket(m2)
    Qup = _int_value_up(VQ, eQ)  # sum x**2, rounded up
    n = float(max(K, 1))
    # inputs wider than the compute format are rounded into it first: the exact M2 of the
    # rounded data is within u ||x|| (2 sqrt(M2) + u ||x||) of the data's
    pin = prec > c.precision
    # every bound below is rigorous in float64 (docs/reductions.md, "Evaluating the bounds"):
    # a subtraction or a single operation is rounded outward (up, down), an expression of
    # nonnegative terms gets slack_up's margin of 2 U64 per operation it takes
    with np.errstate(over="ignore", invalid="ignore"):
        norm = np.sqrt(Qup)
        d_in = slack_up(u * norm * (2 * np.sqrt(m2hi) + u * norm), 7) if pin else 0.0
        base_lo = np.maximum(down(m2lo - d_in), 0.0)
        base_hi = up(m2hi + d_in) if pin else m2hi
        # two-pass: the computed mean m within e_m of the exact one, so the deviations'
        # squares sum to M2 + n (m - mean)**2; (1 + u)**3 per term and the accumulation
        ex_mean, ex_sum = _mean_exact(X, K, prec, np.zeros(M))
        mlo, mhi = _mean_ends(mean_model, ex_sum, X, K, prec, np.zeros(M))[:2]
        mu_lo, mu_hi = _bracket(ex_mean)
        em = up(np.maximum(mhi - mu_lo, mu_hi - mlo))
        if pin:  # the mean of the rounded data is within u mean|x| of the data's
            em = up(em + slack_up(u * np.abs(X).sum(axis=1) / n, K + 2))
        em = np.where(np.isfinite(em), np.maximum(em, 0.0), np.inf)
        dacc = model.order.depth(K)  # the squared deviations' accumulation
        g = gamma_up(dacc + 2, u)
        tp_lo = down(deflate(base_lo, g) - slack_up(3 * n * eta, 2))
        tp_hi = up(inflate(up(base_hi + slack_up(n * em * em, 3)), g)
                   + slack_up(3 * n * eta, 2))
        # Welford, any order: running-mean error e <= u G' ((n + 1)/2 + 6.5) + 2 eta (n + 1),
        # deviations |x_k - mu_j| <= |x_k - mu| + R (R: the largest |x_i - mu|)
        absx = np.abs(X)
        G = absx.max(axis=1) if K else np.zeros(M)
        # (the update delta / k, or delta * R(1 / k): gamma_3 = 3u / (1 - 3u) per step)
        g3 = gamma_up(3, u)
        # exp's argument rounded up (7 operations), exp within an ulp (2 more)
        grow = slack_up(math.exp(slack_up(2 * g3 * (1 + math.log(n)), 7)), 2)
        Gp = up(slack_up(inflate(G, pow1p_m1_up(u, K)) * grow, 1) + slack_up(4 * n * eta, 2))
        e = slack_up(u * Gp * ((n + 1) / 2 + 1 + 2 * g3 / u) + 2 * eta * (n + 1), 12)
        mu = mu_lo + (mu_hi - mu_lo) / 2  # any point: its distance to the mean is in dev
        dev = up(up(np.abs(X - mu[:, None])) + up(mu_hi - mu_lo)[:, None])
        R = dev.max(axis=1) if K else np.zeros(M)
        D = up(dev + R[:, None])  # >= |x_k - mu_j| for every running mean mu_j
        if pin:  # the rounded data and their running means move by u G at most
            D = up(D + slack_up(2 * u * G, 1)[:, None])
        sD = slack_up(D.sum(axis=1), K)
        sDD = slack_up(((D + e[:, None]) ** 2).sum(axis=1), K + 2)
        # (1 + u)**3 (1 + gamma_{K-1}) - 1 <= gamma_{K+2} (Higham, Lemma 3.3)
        rel = gamma_up(max(K - 1, 0) + 3, u)
        w = slack_up(2 * e * sD + n * e * e + rel * sDD + 4 * n * eta, 11)
        wf_lo = down(base_lo - w)
        wf_hi = up(base_hi + w)
        if model.order == "sequential" and K > 1:
            (tp_lo, tp_hi), (wf_lo, wf_hi) = _sequential_var(
                X, u, eta, pin, base_lo, base_hi, em, dev, e, (tp_lo, tp_hi),
                (wf_lo, wf_hi))
    names = {"stable": STABLE_ALGORITHMS, "any": ANY_ALGORITHMS}.get(algorithm, (algorithm,))
    if algorithm == "stable" and model.order == "any":
        names = ("two-pass", "welford", "chan")  # any order: Welford's chain is one of them
    use = []
    with np.errstate(over="ignore", invalid="ignore"):
        for name in names:
            if name == "two-pass":
                use.append((tp_lo, tp_hi))
            elif name == "welford":
                use.append((wf_lo, wf_hi))
            elif name == "chan":
                use.append(_chan_var(X, u, eta, pin, base_lo, base_hi, model.order.depth(K),
                                     Qup))
            else:
                use.append(_one_pass_var(model, X, K, m2lo, m2hi, Qup, pin, u, eta))
    a_lo = np.fmin.reduce([v[0] for v in use])
    a_hi = np.fmax.reduce([v[1] for v in use])
    a_lo = np.where(np.isfinite(a_lo), a_lo, -np.inf if "one-pass" in names else 0.0)
    a_hi = np.where(np.isnan(a_hi), np.inf, a_hi)
    s_lo = _rc(down(a_lo), c, model.mode)
    if "one-pass" not in names:  # a stable algorithm's M2 is a sum of squares: >= 0
        s_lo = np.maximum(s_lo, 0.0)
    s_hi = _rc(up(a_hi), c, model.mode)
    nan = ~fin
    if dfree > 0:
        # a fractional n - correction is itself rounded by a kernel: twice the margin
        ud = u if dfree.denominator == 1 else 2 * u
        lo, hi = _divide_ends(s_lo, s_hi, float(dfree), c, model.mode, ud)
    else:  # M2 / 0 (torch divides by max(0, n - correction)): inf where M2 > 0, else NaN
        lo = hi = np.where(s_hi > 0, np.inf, np.nan)
        nan = nan | (s_lo == 0)
    if root:
        nan = nan | (lo < 0)  # one-pass: a negative variance's root is NaN
        with np.errstate(invalid="ignore"):
            lo = _rc(down(np.sqrt(np.maximum(lo, 0.0))), c, model.mode)
            hi = _rc(up(np.sqrt(np.maximum(hi, 0.0))), c, model.mode)
    lo = np.where(fin, lo, np.nan)
    hi = np.where(fin, hi, np.nan)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = Qup / max(float(dfree), 1.0)
        if root:
            terms = np.sqrt(terms)
    return lo, hi, nan, terms


def _sequential_var(X, u, eta, pin, base_lo, base_hi, em, dev, e_any, tp, wf):
    """The two-pass and Welford intervals of a left-to-right implementation (intersected with
    the order-free ones ``tp`` and ``wf``); derivation in docs/reductions.md.

    two-pass: term ``i`` passes ``K - max(i, 2) + 1`` accumulator roundings (the last applied
    at the ends) after its subtraction and square: ``|y - A| <= sum gamma_{K - max(i,2) + 2}
    (|x_i - mu| + e_m)**2``.

    Welford in order: the running means ``mu_k`` from float64 prefix sums (with their error),
    ``|D_k| = |x_k - mu_{k-1}|``, ``|E_k| = |D_k| (k - 1) / k``, the running-mean error
    ``e_k <= (1/k) sum_{j<=k} j l_j`` with ``l_j = c (|D_j| + e*) / j + u (|mu_j| + e*) + 3
    eta`` (``e*`` the order-free bound), and the M2 error ``sum |D_k| e_k + |E_k| e_{k-1} +
    e_k e_{k-1} + ((1 + u)**3 - 1) (|D_k| + e_{k-1}) (|E_k| + e_k)`` plus the sequential
    accumulation of the terms."""
    M, K = X.shape
    n = float(K)
    kk = np.arange(1, K + 1, dtype=np.float64)
    lead = np.maximum(kk, 2)
    absx = np.abs(X)
    g2 = gamma_up(K - lead + 2, u)
    t_up = up(dev + em[:, None])
    if pin:
        t_up = up(t_up + slack_up(u * absx, 1))
    s2 = slack_up((g2 * t_up * t_up).sum(axis=1), K + 2)
    tp_lo = np.maximum(tp[0], down(down(base_lo - s2) - slack_up(3 * n * eta, 2)))
    tp_hi = np.minimum(tp[1], up(base_hi + slack_up(n * em * em + s2 + 3 * n * eta, 6)))
    # Welford, in order (the running means from float64 prefix sums, whose error dP is
    # gamma_k(U64) times the prefix sums of |x|, themselves rounded up)
    A = slack_up(np.cumsum(absx, axis=1), kk)
    P = np.cumsum(X, axis=1)
    dP = slack_up(gamma_up(kk, U64) * A, 1)
    Mk = P / kk
    dmu = slack_up(dP / kk + 2 * U64 * np.abs(Mk), 4)
    if pin:  # the running means of the rounded data
        dmu = up(dmu + slack_up(u * A / kk, 2))
    amu = up(np.abs(Mk) + dmu)
    Mprev = np.concatenate([np.zeros((M, 1)), Mk[:, :-1]], axis=1)
    dprev = np.concatenate([np.zeros((M, 1)), dmu[:, :-1]], axis=1)
    Dk = up(up(np.abs(X - Mprev)) + dprev)
    if pin:
        Dk = up(Dk + slack_up(u * absx, 1))
    Ek = slack_up(Dk * ((kk - 1) / kk), 2)
    c1 = gamma_up(3, u)  # delta rounded, then divided by k or multiplied by R(1 / k)
    es = e_any[:, None]
    ell = slack_up(c1 * (Dk + es) / kk + u * (amu + es) + 3 * eta, 9)
    ek = slack_up(np.cumsum(kk * ell, axis=1) / kk, K + 2)
    ekm = np.concatenate([np.zeros((M, 1)), ek[:, :-1]], axis=1)
    prod = (Dk + ekm) * (Ek + ek)
    # ((1 + u)**3 - 1) + gamma_{K-v+1} (1 + u)**3 <= gamma_{K-v+4} (Higham, Lemma 3.3)
    coef = gamma_up(K - lead + 4, u)
    err = slack_up((Dk * ek + Ek * ekm + ekm * ek + coef * prod).sum(axis=1), K + 10)
    w = slack_up(err + 4 * n * eta, 3)
    wf_lo = np.maximum(wf[0], down(base_lo - w))
    wf_hi = np.minimum(wf[1], up(base_hi + w))
    return (tp_lo, tp_hi), (wf_lo, wf_hi)


def _chan_var(X, u, eta, pin, base_lo, base_hi, depth=None, Q=None):
    """The interval of M2 for Welford states merged by Chan's formula in any tree (a single
    element merged into a state is Welford's update); derivation in docs/reductions.md.

    A merge of parts ``a`` and ``b`` (sizes ``n_a``, ``n_b``, ``n = n_a + n_b``) computes
    ``delta = m_b - m_a``, ``m = m_a + delta * n_b / n`` and ``M2 = M2_a + M2_b + delta**2 n_a
    n_b / n``. With ``G`` the largest ``|x|``, ``Delta = max x - min x``: every computed mean
    is within ``G' = G ((1 + u)(1 + 2 gamma_3))**(n-1)``; the error of a part's mean is at most
    ``e = (gamma_3 Delta + u G' + 3 eta)(n + 1) / (2 (1 - gamma_3 (n + 1)))``; the exact
    identity ``sum over merges of (n_a n_b / n) delta**2 = M2`` and Cauchy-Schwarz with ``C =
    n max(1, ceil(log2 n)) >= sum n_a n_b / n`` bound the cross terms:

        W1 = (1 + gamma_6)(4 e sqrt(C M2) + 4 e**2 C) + gamma_6 (sqrt(2 M2) + 2 e sqrt(C))**2
        |y - M2| <= W1 + gamma_{2n} (M2 + W1) + 6 n eta

    ``depth``: the most merges on a path from an element to the root (the order's depth: a
    Welford chain of ``c`` elements is a path of ``c - 1`` merges); below ``n - 1`` the
    growth of the means is taken over ``depth`` merges, ``n + 1`` becomes ``min(n + 1, 2 depth +
    2)`` in ``e`` (the error of a merged mean is at most the larger error of its parts plus the
    merge's own, so ``depth + 1`` of those along a path) and ``gamma_{2n}`` becomes ``gamma_{2
    depth + 2}`` (two additions of M2 a merge).
    """
    M, K = X.shape
    if K == 0:  # empty rows: no merge, nothing to bound (the variance is NaN)
        return base_lo, base_hi
    n = float(K)
    deep = K - 1 if depth is None or depth >= K - 1 else int(depth)
    g3, g6 = gamma_up(3, u), gamma_up(6, u)
    g2n = gamma_up(2 * K, u) if deep == K - 1 else gamma_up(2 * deep + 2, u)
    span = n + 1 if deep == K - 1 else min(n + 1, 2.0 * deep + 2)
    absx = np.abs(X)
    G = absx.max(axis=1)
    spread = up(X.max(axis=1) - X.min(axis=1))
    if pin:
        spread = up(spread + slack_up(2 * u * G, 1))
    # (1 + u)(1 + 2 gamma_3) rounded up (4 operations), to the power n - 1
    step = slack_up(u + 2 * g3 + 2 * g3 * u, 4)
    Gp = up(inflate(G, pow1p_m1_up(step, max(deep, 0))) + slack_up(4 * n * eta, 2))
    den = down(1 - up(g3 * span))
    e = (slack_up((g3 * spread + u * Gp + 3 * eta) * span / (2 * den), 9) if den > 0
         else np.full(M, np.inf))
    C = n * max(1, math.ceil(math.log2(K)) if K > 1 else 1)
    m2 = np.maximum(base_hi, 0.0)
    w1 = slack_up((1 + g6) * (4 * e * np.sqrt(C * m2) + 4 * e * e * C)
                  + g6 * (np.sqrt(2 * m2) + 2 * e * math.sqrt(C)) ** 2, 20)
    w = slack_up(w1 + g2n * (m2 + w1) + 6 * n * eta, 6)
    if Q is not None:  # the telescoped bound (docs/reductions.md): both hold, take the less
        w = np.minimum(w, _chan_telescoped(u, eta, n, deep, spread, Gp, e, C, m2,
                                           inflate(Q, pow1p_m1_up(u, 2)) if pin else Q))
    return down(base_lo - w), up(base_hi + w)


def _chan_telescoped(u, eta, n, D, spread, Gp, e, C, m2, Q):
    """A second bound of ``|y - M2|`` for Welford states merged by Chan's formula (Welford's
    update included) in any tree of depth ``D`` (derivation: docs/reductions.md, "Chan,
    telescoped"). The mean errors unroll exactly, ``eps_v = sum_{w in v} (n_w / n_v) rho_w``
    (``rho_w`` the rounding of merge ``w``'s mean), so the first-order error of M2 telescopes
    along the paths to the root: ``T1 = sum_w n_w rho_w (mu_w - mu)``, bounded level by level
    (nodes of one height are disjoint) by ``(D - 1) (gamma_3 spread sqrt(n M2) + gamma_1
    sqrt(Q M2) + ((2 gamma_3 + gamma_1) e + 2 eta) sqrt(n M2))``; then

        W = K M2 + 2 T1 + 4 K e sqrt(C M2) + (1 + K) (4 e**2 C + n e**2 + gamma_3 M2
            + (gamma_1 (G' + e) + gamma_3 e + 2 eta) sqrt(2 n M2)) + 2 n (D + 4) eta (1 + K)

    with ``K = gamma_{2D+7}`` (six roundings of a merge's term, two additions a level)."""
    D = max(int(D), 1)
    g1, g3 = gamma_up(1, u), gamma_up(3, u)
    K = gamma_up(2 * D + 7, u)
    root_nm = np.sqrt(n * m2)
    # (|fl(y) - y| <= gamma_1 |fl(y)|: the mean's own rounding against the computed mean)
    t1 = slack_up((D - 1) * (g3 * spread * root_nm + g1 * np.sqrt(Q * m2)
                             + ((2 * g3 + g1) * e + 2 * eta) * root_nm), 12)
    rest = slack_up(4 * e * e * C + n * e * e + g3 * m2
                    + (g1 * (Gp + e) + g3 * e + 2 * eta) * np.sqrt(2 * n * m2), 14)
    return slack_up(K * m2 + 2 * t1 + 4 * K * e * np.sqrt(C * m2) + (1 + K) * rest
                    + 2 * n * (D + 4) * eta * (1 + K), 10)


def _one_pass_var(model, X, K, m2lo, m2hi, Qup, pin, u, eta):
    """The interval of M2 computed in one pass (derivation: docs/reductions.md, "one-pass"):
    ``S = sum x`` and ``Q = sum x**2`` accumulated in the order (``|S_c - S| <= b_S =
    gamma_D sum |x|``, ``|Q_c - Q| <= b_Q = gamma_{D+1} Q``, squares rounded), then ``Q_c -
    S_c**2 / n`` (or ``n (Q_c / n - (S_c / n)**2)``): within ``b_Q + gamma_3 Q + (2 |S| b_S +
    b_S**2) / n + gamma_3 (|S| + b_S)**2 / n`` of ``M2`` before the subtraction's rounding (at
    the ends). Cancellation: the error is relative to ``Q``, not to ``M2``; the computed M2 may
    be negative."""
    n = float(max(K, 1))
    D = model.order.depth(K)
    absx = np.abs(X)
    A = slack_up(absx.sum(axis=1), K + 2)
    S = np.abs(X.sum(axis=1)) * (1 + (K + 2) * 2.0**-52)
    Q = Qup
    if pin:  # the data rounded into the compute format first
        A = up(A * (1 + u))
        Q = up(Q * (1 + 3 * u))
    bS = slack_up(gamma_up(D, u) * A + (u * A if pin else 0.0) + 2 * K * eta, 4)
    bQ = slack_up(gamma_up(D + 1, u) * Q + (3 * u * Q if pin else 0.0) + 3 * K * eta, 4)
    g3 = gamma_up(3, u)
    Sb = up(S + bS)
    err = slack_up(bQ + g3 * Q + (2 * S * bS + bS * bS) / n + g3 * Sb * Sb / n, 10)
    with np.errstate(over="ignore", invalid="ignore"):
        return down(m2lo - err), up(m2hi + err)


# --------------------------------------------------------------------------------- cumsum
def cumsum(x, dim=None, *, axis=None, dtype=None, rounding=_NE, overflow=None, compute=None,
           order=DEFAULT_ORDER, policy="torch", flush=None):
    """The running sums of ``x`` along ``dim`` (torch's spelling; numpy's ``axis`` too; None:
    over the flattened array, as numpy), every prefix the exact sum rounded once.

    Integers and bool sum into int64 (as torch; ``policy="numpy"``: unsigned ones into uint64),
    exactly. The tolerance bounds every
    implementation that accumulates in ``compute`` (default: float32 for the narrow floats)
    ``order="sequential"`` (one running sum, left to right: torch's CPU kernel) or ``"any"``
    (each prefix summed in any order: parallel scans).

    >>> import exactref as er
    >>> from exactref.linalg import cumsum
    >>> cumsum(er.asarray([1.0, 2.0**-24, 2.0**-24], "float32"), 0).rounded.tolist()
    [1.0, 1.0, 1.0000001192092896]
    """
    ax, _ = _spelling("cumsum", axis, dim, None, None)
    check_flush("cumsum", flush)
    ax0 = ax
    if ax is not None and not _is_int(ax):
        raise TypeError(f"cumsum: dim/axis={ax!r} is not an integer; cumsum runs along one "
                        f"dimension (pass an int, or None for the flattened array)")
    X0 = prepare(x, "x")
    if X0.kind != "array":
        raise ValueError("cumsum needs an array; got a scalar (pass np.asarray([x]))")
    arr = arr0 = X0.array
    if ax is None:
        arr = Array(np.ascontiguousarray(arr.numpy()).reshape(-1), arr.dtype)
        ax = 0
    fmt = arr.dtype
    out = sum_format("cumsum", fmt, dtype, policy)
    if fmt.kind == "complex" or out.kind == "complex":
        raise ValueError("cumsum: complex formats are not supported; take the running sums of "
                         "the real and imaginary parts separately")
    if fmt.kind == "float" and out.is_integer:
        raise ValueError(f"cumsum: dtype={out.name} is an integer format but x is {fmt.name}; "
                         f"convert x first")
    if out.kind == "float" and fmt is not out:
        from .._array import asarray
        arr = asarray(arr, out)  # torch converts the input to dtype first
        fmt = out
    mode, rule = resolve_modes(rounding, overflow, out)
    if order is DEFAULT_ORDER or order == "library":
        # the libraries' scans: torch CPU and NumPy run one sum, CUDA scans (CUB's look-back,
        # torch's tensor_kernel_scan) trees of partial sums: any order for each prefix
        order = DEFAULT_ORDER if order is DEFAULT_ORDER else "any"
    elif order not in ("any", "sequential"):
        raise ValueError(f"cumsum: order={order!r}; expected 'library' (the default: any order "
                         f"for each prefix, as the parallel scans), 'any' or 'sequential' (one "
                         f"running sum, as torch's CPU kernel and NumPy)")
    (a,) = reduction_axes("cumsum", ax, arr.shape) or (0,)
    nd = arr.ndim
    data = np.asarray(arr.numpy())
    data = np.moveaxis(data, a, -1) if nd else data.reshape(1)
    moved = data.shape
    K = moved[-1]
    X = np.ascontiguousarray(data).reshape(int(np.prod(moved[:-1], dtype=np.int64)), K)

    def back(v):
        v = np.asarray(v).reshape(moved)
        return np.moveaxis(v, -1, a) if nd else v.reshape(())

    shape = tuple(arr.shape)
    details = {"rounding": mode, "overflow": rule, "k": K}
    if out.is_integer:  # exact integers (int64 or Python ints), then the overflow rule
        from ._ops import _finish_int
        wide = X.astype(np.int64) if X.dtype.kind == "b" else X
        tot = np.cumsum(wide.astype(object), axis=1) if X.size else np.zeros(X.shape, np.int64)
        vals = _finish_int(tot, out, rule, X.shape)
        res = ExactResult(Array(np.ascontiguousarray(back(vals)), out), op="cumsum",
                          details=details)
        res.inputs = {"x": arr}
        return res
    prec = fmt.component.precision
    Xd = X.astype(np.float64)
    ex = prefix_exact(Xd)
    values = back(ex.round(out.component, mode, rule)[0])
    rounded = to_array([values], out, shape)
    model = _model(out, compute, "any" if order is DEFAULT_ORDER else order, mode,
                   ftz=flushes_outputs(flush))

    def bounds():
        lo, hi, nan, ts = _cumsum_ends(model, ex, Xd, prec, out, mode, rule)
        return [(back(lo), back(hi), back(nan), back(ts))]

    models = [f"exact prefix sums rounded once into {out.name}",
              f"accumulated in {model.compute.name}, {model.order} order, each prefix "
              f"rounded into {out.name}"]
    res = BoundResult(rounded, bounds, op="cumsum", models=models,
                      details=_details(model, order, mode, rule, K))
    res = apply_flush(res, flush, out, model.compute.smallest_normal, [arr0],
                      lambda a, flush: cumsum(a, ax0, dtype=dtype, rounding=rounding,
                                              overflow=overflow, compute=compute, order=order,
                                              policy=policy, flush=flush))
    res.inputs = {"x": arr}
    return res


def _cumsum_ends(model, ex, X, prec, out, mode, rule):
    """Per prefix ``J`` of each row, the ends of ``R_out(R_c(y))`` with ``y`` within the bound
    of the exact prefix sum ``S_J`` (derivation: docs/reductions.md):

    * sequential: ``|y - S_J| <= (1 + gamma_J) u sum_{i=2}^{J-1} |S_i|`` (each step adds at
      most ``u |s_i|``, and ``|s_i| <= |S_i| + |e_i|``);
    * any order: ``gamma_{J-1} sum_{i<=J} |x_i|``;

    plus ``u sum_{i<=J} |x_i|`` where the inputs are wider than the compute format (each is
    rounded when it enters) and a subnormal quantum per rounding."""
    c = model.compute
    u = model.unit(c)
    m, k = X.shape
    J = np.arange(1, k + 1, dtype=np.float64)[None, :]
    ax = np.abs(X)
    with np.errstate(over="ignore", invalid="ignore"):
        A = slack_up(np.cumsum(ax, axis=1), J + 2)
        slo, shi = _bracket(ex)
        absS = np.maximum(np.abs(slo), np.abs(shi)).reshape(m, k)
        absS = np.where(np.isfinite(absS), absS, 0.0)
        if model.order == "sequential":
            # sum_{i=2}^{J-1} |S_i|: the running sum of |S| shifted by one, less |S_1|
            csum = np.cumsum(absS, axis=1) * (1 + (J + 2) * 2.0**-52)
            prev = np.concatenate([np.zeros((m, 1)), csum[:, :-1]], axis=1)
            prev = np.maximum(prev - absS[:, :1], 0.0) * (1 + 2.0**-52)
            gJ = np.where(J * u < 1, J * u / np.maximum(1 - J * u, 1e-300), np.inf)
            b = (1 + gJ) * u * prev
        else:
            g = np.where((J - 1) * u < 1, (J - 1) * u / np.maximum(1 - (J - 1) * u, 1e-300),
                         np.inf)
            b = np.where(A == 0, 0.0, g * A)
        if prec > c.precision:
            b = b + u * A * (1 + 2.0**-50)
        b = up(b + 2 * J * model.eta)
        b = np.where(np.cumsum(X != 0, axis=1) > 0, b, 0.0).reshape(-1)
        lo64 = np.where(b == 0, slo, down(slo - b))
        hi64 = np.where(b == 0, shi, up(shi + b))
    nan = np.zeros(lo64.shape, bool)
    comp = out.component
    lo = _chain(lo64, c, comp, model.mode, mode, nan, -np.inf, rule)
    hi = _chain(hi64, c, comp, model.mode, mode, nan, np.inf, rule)
    ts = A.reshape(-1)
    lo, hi, nan = overflow_ends(lo, hi, nan, ts, c.max_finite, comp, rule, b)
    sp = (ex.special != 0) | np.isnan(ex.special)
    if sp.any():
        lo = np.where(sp, ex.special, lo)
        hi = np.where(sp, ex.special, hi)
        nan |= np.isnan(ex.special)
    return lo, hi, nan, ts


# ----------------------------------------------------------------------------- registry
def register_reductions() -> None:
    """The rational reductions' records in the op registry."""
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register

    # the audit's groups: along the last axis of an (8, 48) operand, and once more for each
    # audit value of correction (exactref.audit's "matrices" builder)
    rows = {"operands": ((8, 48),), "params": {"axis": -1}}
    audits = {var: AuditPlan(data={**rows, "vary": ("correction",)}),
              std: AuditPlan(data={**rows, "vary": ("correction",)})}
    for fn, summary, params, cp in (
            (mean, "the mean over dims: the exact sum / n, rounded once",
             (Param("dim", None), Param("keepdim", False), Param("dtype", None)),
             Counterparts(Counterpart("torch.mean", contract={"order": "any"}), "np.mean",
                          "jnp.mean")),
            (var, "the variance: (n Q - S**2) / (n (n - correction)) exactly, rounded once",
             (Param("dim", None), Param("correction", 1, audit=(0,)),
              Param("keepdim", False)),
             Counterparts(Counterpart("torch.var", contract={"order": "any"}), "np.var",
                          "jnp.var")),
            (std, "the standard deviation: the root of the exact variance, rounded once",
             (Param("dim", None), Param("correction", 1, audit=(0,)),
              Param("keepdim", False)),
             Counterparts(Counterpart("torch.std", contract={"order": "any"}), "np.std",
                          "jnp.std")),
            (cumsum, "every prefix sum along dim, exact, rounded once",
             (Param("dim", None),),
             Counterparts(Counterpart("torch.cumsum", contract={"order": "sequential"}),
                          "np.cumsum", "jnp.cumsum"))):
        fn.spec = register(OpSpec(
            name=fn.__name__, operands=("x",), kernel="long sum", promotion=fn.__name__,
            function=fn, summary=summary, params=params,
            models=("exact", "any summation order in the compute format", "pairwise",
                    "sequential"), counterparts=cp, kinds=("float",), family="linalg",
            audit=audits.get(fn, AuditPlan(data=rows))))
