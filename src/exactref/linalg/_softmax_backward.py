"""``softmax.backward`` and ``log_softmax.backward``: the exact gradient of the exact function
at ``x``, each element rounded once, with a tolerance for the implementations that compute it
from the stored forward output (PyTorch's ``_softmax_backward_data`` and
``_log_softmax_backward_data``).

The exact values come from :mod:`exactref._exact._softmax_backward` (MPFR interval arithmetic
with Ziv's strategy; the exact cases by the Lindemann-Weierstrass theorem). The tolerance model,
derived in docs/softmax.md ("Backward"), with ``y`` the forward output as stored in its format
(anywhere in the forward model's band, or correctly rounded: ``forward=``) and every step
rounded in the compute format ``c``:

* softmax: ``s = sum_j R_c(g_j y_j)`` in any order (or a tree), ``dx_i = R_c(y_i R_c(g_i - s))``;
* log_softmax: ``s = sum_j g_j`` in any order, ``dx_i = R_c(g_i - R_c(EXP(out_i) s))``, ``EXP``
  within ``k`` ulps of ``c``;

then stored into the output format. Each step is bounded outward in float64 (the roundings
into ``c`` by the monotone directed roundings of the interval's ends), and the last one's ends
are rounded into ``c`` and then into the output format, as the forward's are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._exact import (
    LOG_SOFTMAX,
    SOFTMAX,
    Rounding,
    deflate,
    down,
    evaluate_backward,
    gamma_up,
    inflate,
    resolve_modes,
    row_kinds,
    up,
)
from .._formats import Format
from .._formats import dtype as resolve_dtype
from .._operands import compute_format, to_array
from .._result import Gradients
from ._bounds import _NE, F64, BoundResult, _chain, _round
from ._reductions import row_policy
from ._rowsums import grad_array

__all__ = ["softmax_backward", "log_softmax_backward", "FORWARDS"]

#: how the implementation's stored forward output ``y`` may lie: ``"model"`` anywhere in the
#: forward op's model band (same compute format, accuracies and order), ``"rounded"`` the exact
#: value rounded once (in the call's mode)
FORWARDS = ("model", "rounded")


def softmax_backward(x, grad, dim=None, dtype=None, *, axis=None, rounding=_NE, overflow=None,
                     compute=None, accuracy=None, exp_accuracy=None, order="any",
                     forward="model", policy="torch"):
    """Gradient of ``softmax(x, dim, dtype)`` for the output gradient ``grad``:
    ``dx_i = y_i (g_i - sum_j g_j y_j)`` with ``y`` the exact softmax, each element the exact
    value rounded once into the softmax's format (``dtype`` converts ``x`` first, as the
    forward; the gradient is with respect to that input).

    The tolerance covers PyTorch's formula from the stored forward output ``y``:
    ``s = sum_j g_j y_j`` (products and sum in ``compute``, in ``order``), then
    ``y_i (g_i - s)``, with ``y`` anywhere in the forward softmax model's band
    (``forward="model"``, with ``accuracy``/``exp_accuracy``, ``order``, ``compute``) or the
    exact softmax rounded once (``forward="rounded"``).

    >>> import exactref as er
    >>> x = er.asarray([[1.0, 2.0, 3.0], [4.0, 4.0, -float("inf")]], "float32")
    >>> g = er.asarray([[1.0, 0.0, 0.0], [1.0, 3.0, 5.0]], "float32")
    >>> r = er.softmax.backward(x, g, dim=1)
    >>> r.rounded.grad_x.tolist()
    [[0.08192507177591324, -0.022033045068383217, -0.05989202484488487], [-0.5, 0.5, 0.0]]
    >>> er.softmax.backward(x, g, dim=1, rounding="toward_negative").rounded.grad_x.tolist()[1]
    [-0.5, 0.5, -0.0]
    """
    row_policy("softmax.backward", policy)
    return _backward("softmax", x, grad, dim, axis, dtype, rounding, overflow, compute,
                     accuracy, exp_accuracy, None, order, forward)


def log_softmax_backward(x, grad, dim=None, dtype=None, *, axis=None, rounding=_NE,
                         overflow=None, compute=None, accuracy=None, exp_accuracy=None,
                         log_accuracy=None, order="any", forward="model", policy="torch"):
    """Gradient of ``log_softmax(x, dim, dtype)`` for the output gradient ``grad``:
    ``dx_i = g_i - y_i sum_j g_j`` with ``y`` the exact softmax, each element the exact value
    rounded once; options as :func:`softmax_backward`, ``log_accuracy`` the forward's
    logarithm's. The tolerance covers ``g_i - EXP(out_i) sum_j g_j`` (PyTorch's formula) from
    the stored forward output ``out``, ``EXP`` within ``exp_accuracy``.

    >>> import exactref as er
    >>> x = er.asarray([[0.0, 0.0], [7.0, -float("inf")]], "float32")
    >>> g = er.asarray([[1.0, 0.0], [2.0, 5.0]], "float32")
    >>> er.log_softmax.backward(x, g, dim=1).rounded.grad_x.tolist()
    [[0.5, -0.5], [-5.0, 5.0]]
    """
    row_policy("log_softmax.backward", policy)
    return _backward("log_softmax", x, grad, dim, axis, dtype, rounding, overflow, compute,
                     accuracy, exp_accuracy, log_accuracy, order, forward)


def _backward(op, x, grad, dim, axis, dtype, rounding, overflow, compute, accuracy,
              exp_accuracy, log_accuracy, order, forward, forward_result=None, stored=None,
              exp_override=None):
    """The backward of ``op``. ``forward_result``: a forward Result whose band stands for the
    stored output (PyTorch's own kernels: exactref.equivalents.torch); ``stored``: a format
    the sum ``s`` is stored into (to nearest) before its use; ``exp_override``: the accuracy of
    log_softmax's ``EXP(out)`` when it differs from the forward's."""
    from ._softmax import (
        _accuracies,
        _check_order,
        _chunks,
        _declared,
        _dims,
        _input,
        _rows,
        _run,
        _unrows,
    )

    norm, model = _declared(op)
    arr, out = _input(op, x, dtype, int_ok=False)
    axes = _dims(op, dim, axis, arr.shape, required=True)
    gdata = np.asarray(grad_array(op, grad, arr.shape).numpy()).astype(np.float64)
    mode, rule = resolve_modes(rounding, overflow, out)
    _check_order(order)
    if forward not in FORWARDS:
        raise ValueError(f"forward={forward!r}: the stored forward output is modelled as "
                         f"{' or '.join(map(repr, FORWARDS))} (the forward model's band, or "
                         f"the exact value rounded once)")
    c = compute_format(out, compute)
    ea, la = _accuracies(accuracy, exp_accuracy, log_accuracy, c, model.uses_log)
    data = np.asarray(arr.numpy())
    if arr.ndim == 0:
        data, gdata, axes = data.reshape(1), gdata.reshape(1), (0,)
    X, _, perm = _rows(data, axes)
    Gm, _, _ = _rows(gdata, axes)
    M, K = X.shape
    bits = max(out.precision, c.precision)
    # the exact gradients a chunk of rows at a time (the kernel's MPFR values of one chunk
    # held at once): the rounded values and the exact values in float64 (the model's
    # special rows read them)
    vals = np.empty(M * K)
    ref = np.empty(M * K)
    for r0, r1 in _chunks(M, K):
        exact = evaluate_backward(X[r0:r1], Gm[r0:r1], op, bits)
        vals[r0 * K:r1 * K] = exact.round(out.component, mode, rule)[0]
        ref[r0 * K:r1 * K] = exact.round(F64, Rounding.NEAREST_EVEN, "ieee")[0]
        del exact
    shape = tuple(arr.shape)

    def place(v):
        return _unrows(np.asarray(v).reshape(M, K), data.shape, perm).reshape(shape)

    rounded = to_array([place(vals)], out, shape)
    del vals

    def bounds():
        if forward_result is not None:
            fwd = forward_result
        else:
            fwd = _run(op, arr, dim, axis, None, False, mode, rule, compute, accuracy,
                       exp_accuracy, log_accuracy, order, None)
        if forward == "rounded" and forward_result is None:
            ylo = yhi = np.asarray(fwd.rounded.numpy(), dtype=np.float64)
        else:
            ylo, yhi = fwd.lowest, fwd.highest
        ylo = _rows(np.asarray(ylo).reshape(data.shape), axes)[0]
        yhi = _rows(np.asarray(yhi).reshape(data.shape), axes)[0]
        kinds = row_kinds(X, Gm).astype(bool)
        eacc = ea if exp_override is None else exp_override
        lo, hi, nan = _model_ends(op, X, Gm, ylo, yhi, c, eacc, order, out, mode, rule,
                                  kinds, ref.reshape(M, K), stored)
        return [(place(lo), place(hi), place(nan))]

    fw = {"model": "in the forward model's band", "rounded": "rounded once"}[forward]
    if forward_result is not None:
        fw = f"in the band of {forward_result.op or 'the given forward'}"
    steps = _STEPS[norm].text.format(exp=(ea if exp_override is None else exp_override).label)
    described = (f"from the stored forward output {fw}, {steps} in {c.name}, summed in "
                 f"{order} order")
    if stored is not None:
        described += f", s stored in {resolve_dtype(stored).name}"
    models = [f"exact gradient rounded once into {out.name}",
              f"{described}, then rounded into {out.name}"]
    details = {"rounding": mode, "overflow": rule, "compute": c, "order": order, "k": K,
               "forward": forward, "exp_accuracy": ea.name, "order_declared": True}
    result = BoundResult(rounded, bounds, op=f"{op}.backward", models=models, details=details)
    result.inputs = {"x": arr}
    return Gradients(result, None)


# ------------------------------------------------------------------------ the model's ends
def _rd(v, c: Format):
    """``RD_c(v)``: below every rounding of ``v`` into ``c`` (monotone); non-finite kept."""
    fin = np.isfinite(v)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(fin, _round(np.where(fin, v, 0.0), c, Rounding.TOWARD_NEGATIVE), v)


def _ru(v, c: Format):
    fin = np.isfinite(v)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(fin, _round(np.where(fin, v, 0.0), c, Rounding.TOWARD_POSITIVE), v)


def _exp_ends(olo, ohi, ea, c: Format, u, eta):
    """float64 bounds of ``EXP(o)`` for ``o`` in ``[olo, ohi]`` (``<= 0``): ``e**o`` (numpy's
    exp, widened) within ``k`` ulps of ``c``; ``EXP(0) = 1`` exactly and ``EXP(-inf) = 0``."""
    from ._softmax import _ulps_of

    k = np.maximum(_ulps_of(ea, np.where(np.isfinite(olo), olo, 0.0)),
                   _ulps_of(ea, np.where(np.isfinite(ohi), ohi, 0.0)))
    eps = up(up(2 * k * u) / (1 - u / 2))
    with np.errstate(over="ignore", invalid="ignore"):
        # numpy's exp within an ulp of float64: 4 ulps relative, and a subnormal's quantum
        tlo = np.maximum(down(down(np.exp(olo) * (1 - 2.0**-50)) - 5e-324), 0.0)
        thi = up(up(np.exp(ohi) * (1 + 2.0**-50)) + 5e-324)
        elo = np.maximum(down(deflate(tlo, eps) - up(k * eta)), 0.0)
        ehi = up(inflate(thi, eps) + up(k * eta))
    one = (olo == 0) & (ohi == 0)
    elo = np.where(one, 1.0, np.where(np.isneginf(olo), 0.0, elo))
    ehi = np.where(one, 1.0, np.where(np.isneginf(ohi), 0.0, ehi))
    return elo, ehi


def _mul_ends(alo, ahi, blo, bhi):
    """Outward float64 ends of ``[alo, ahi] * [blo, bhi]``."""
    with np.errstate(over="ignore", invalid="ignore"):
        ps = [a * b for a in (alo, ahi) for b in (blo, bhi)]
        lo = down(np.minimum(np.minimum(ps[0], ps[1]), np.minimum(ps[2], ps[3])))
        hi = up(np.maximum(np.maximum(ps[0], ps[1]), np.maximum(ps[2], ps[3])))
    return lo, hi


def _sum_ends(tlo, thi, gam):
    """Ends of a sum of ``K`` terms in ``[tlo, thi]`` per row computed in any order (``gam``
    per row: Higham's gamma of the additions on a term's path): ``sum +- gam sum |t|``, and
    the float64 sums' own rounding."""
    K = tlo.shape[1]
    slack = (K + 2) * 2.0**-52
    with np.errstate(over="ignore", invalid="ignore"):
        mag = up(np.maximum(np.abs(tlo), np.abs(thi)).sum(axis=1) * (1 + slack))
        w = up(up(gam + slack) * mag)
        lo = down(tlo.sum(axis=1) - w)
        hi = up(thi.sum(axis=1) + w)
    return lo, hi


def _model_ends(op, X, G, ylo, yhi, c: Format, ea, order, out, mode, rule, kinds, ref,
                stored=None):
    """``(lo, hi, nan)`` flat float64 arrays: the outputs of the modelled implementations
    (see the module's docstring); the rows that are not regular keep the exact value."""
    from ._softmax import _declared

    p = c.precision
    u = 2.0**-p if mode.is_nearest else 2.0 ** (1 - p)
    eta = c.smallest_subnormal
    M, K = X.shape
    reg = ~kinds[:, None]
    g = np.where(reg, G, 0.0)
    ylo = np.where(reg, ylo, 0.0)
    yhi = np.where(reg, yhi, 0.0)
    if order == "pairwise":
        gam = up(gamma_up(np.ceil(np.log2(max(K, 1))), u))
    else:
        gam = up(gamma_up(max(K - 1, 0), u))
    gam = np.full(M, gam)
    h = None if stored is None else resolve_dtype(stored).component

    def keep(v):  # the sum stored into h (to nearest: monotone)
        if h is None:
            return v
        fin = np.isfinite(v)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(fin, _round(np.where(fin, v, 0.0), h, _NE), v)

    with np.errstate(over="ignore", invalid="ignore"):
        steps = _STEPS[_declared(op)[0]]
        vlo, vhi, slo, shi, big = steps.ends(g, ylo, yhi, c, gam, keep, ea, u, eta)
        # an intermediate past c's range: any output (inf, NaN) may come out
        blow = ~(np.maximum(big, np.maximum(np.abs(slo), np.abs(shi))[:, None]) <= c.max_finite)
    blow = (blow | ~np.isfinite(vlo) | ~np.isfinite(vhi)) & reg
    nan = np.zeros(M * K, bool)
    comp = out.component
    lo = _chain(np.where(blow, 0.0, vlo).reshape(-1), c, comp, mode, mode, nan, -np.inf, rule)
    hi = _chain(np.where(blow, 0.0, vhi).reshape(-1), c, comp, mode, mode, nan, np.inf, rule)
    b = blow.reshape(-1)
    lo, hi = np.where(b, -np.inf, lo), np.where(b, np.inf, hi)
    nan |= b
    special = np.broadcast_to(~reg, (M, K)).reshape(-1)
    r = ref.reshape(-1)
    lo = np.where(special, r, lo)
    hi = np.where(special, r, hi)
    nan = np.where(special, np.isnan(r), nan)
    return lo, hi, nan


def _softmax_steps(g, ylo, yhi, c, gam, keep, ea, u, eta):
    """``s = sum_j R_c(g_j y_j)``, ``R_c(y_i R_c(g_i - s))`` before its last rounding: the
    ends, the sum's ends and the largest intermediate (for overflow)."""
    plo, phi = _mul_ends(g, g, ylo, yhi)  # g_j y_j, then rounded into c
    plo, phi = _rd(plo, c), _ru(phi, c)
    slo, shi = _sum_ends(plo, phi, gam)
    slo, shi = keep(_rd(slo, c)), keep(_ru(shi, c))
    dlo = _rd(down(g - shi[:, None]), c)  # R_c(g_i - s)
    dhi = _ru(up(g - slo[:, None]), c)
    vlo, vhi = _mul_ends(ylo, yhi, dlo, dhi)  # y_i (g_i - s), rounded last
    return vlo, vhi, slo, shi, np.maximum(np.abs(dlo), np.abs(dhi))


def _log_softmax_steps(g, olo, ohi, c, gam, keep, ea, u, eta):
    """``s = sum_j g_j``, ``R_c(g_i - R_c(EXP(out_i) s))`` before its last rounding."""
    slo, shi = _sum_ends(g, g, gam)
    slo, shi = keep(_rd(slo, c)), keep(_ru(shi, c))
    elo, ehi = _exp_ends(olo, ohi, ea, c, u, eta)
    qlo, qhi = _mul_ends(elo, ehi, slo[:, None], shi[:, None])
    qlo, qhi = _rd(qlo, c), _ru(qhi, c)
    return down(g - qhi), up(g - qlo), slo, shi, np.maximum(np.abs(qlo), np.abs(qhi))


@dataclass(frozen=True)
class _Steps:
    """One op's backward model: ``ends`` its steps' bounds, ``text`` what it computes."""

    ends: object
    text: str


#: each op's backward model, by the forward's exact kernel entry (its record's ``exact``)
_STEPS = {
    SOFTMAX: _Steps(_softmax_steps, "s = sum R_c(g y), R_c(y (g - s))"),
    LOG_SOFTMAX: _Steps(_log_softmax_steps,
                        "s = sum g, R_c(g - R_c(EXP(out) s)), exp within {exp}"),
}

#: the backward of each op, by the forward's exact kernel entry, attached by the forward's
#: registry records (linalg/_softmax.py)
BACKWARD = {SOFTMAX: softmax_backward, LOG_SOFTMAX: log_softmax_backward}
