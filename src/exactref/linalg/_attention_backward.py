"""``scaled_dot_product_attention.backward``: the gradients for query, key and value, each
element the exact gradient of the exact function rounded once, with a tolerance that bounds
PyTorch's CPU backward kernels (docs/attention.md, "Backward").

The exact values come from :mod:`exactref._exact._attention_backward`. The model, each step in
the compute format ``c`` (default float32 for the half formats):

1. the scores as the forward's model; the weights ``P`` either from the saved log-sum-exp
   (``EXP(R_c(s~ - lse~))``, the flash kernel, ``lse~`` from the forward's online softmax) or
   from the standard max-subtracted softmax (the math kernel), the exponential within ``k``
   ulps; stored into ``stored`` (default: the output format when it is narrower than ``c``);
2. ``dP = dO v^T`` accumulated in any order; ``D_i`` either ``sum_j P~_ij dP~_ij`` (math) or
   ``sum_l dO_il O~_il`` with ``O~`` the forward's stored output (flash);
3. ``dS = R(P~ R(dP~ - D~))``, stored into ``stored``;
4. ``dV = P~^T dO``, ``dQ = sigma~ dS~ k``, ``dK = sigma~ dS~^T q`` accumulated in any order,
   the scale rounded (up to five roundings: PyTorch's math kernel multiplies q and k by
   ``sqrt(scale)``), partial sums over blocks of 32 queries (dK, dV) and 512 keys (dQ) stored
   in the output format, copies of a shared operand (GQA, broadcasting) summed in any order;
5. the result rounded into the output format in the call's rounding mode.
"""

from __future__ import annotations

import math

import numpy as np

from .._exact import (
    Rounding,
    attention_chunk,
    compose_up,
    deflate,
    down,
    evaluate_attention_backward,
    first_tier,
    gamma_up,
    inflate,
    pow1p_m1_up,
    resolve_modes,
    slack_up,
    up,
)
from .._formats import dtype as resolve_dtype
from .._operands import compute_format, to_array
from .._result import Gradients
from ..arithmetic import resolve_accuracy
from ._bounds import _NE, F64, BoundResult, _chain
from ._norms import backward_keywords
from ._rowsums import grad_array
from ._softmax import _exp_factor, _ulps_of

__all__ = ["scaled_dot_product_attention_backward"]

_OP = "scaled_dot_product_attention"
_BOP = f"{_OP}.backward"
Q_SPLIT = 32    # PyTorch's flash backward: query blocks of at most 32 rows under 192 (more above)
KV_SPLIT = 512  # and key blocks of 512


def _owners(op_batch, batch, rep):
    """``(operand batch size, copies)``: the full batch entries each entry of an operand of
    batch shape ``op_batch`` was copied to (its heads repeated ``rep`` times for GQA, then
    broadcast to ``batch``)."""
    size = int(np.prod(op_batch, dtype=np.int64))
    idx = np.arange(size).reshape(op_batch) if op_batch else np.zeros((), np.int64)
    if rep > 1:
        idx = np.repeat(idx, rep, axis=-1)
    full = np.broadcast_to(idx, batch).reshape(-1)
    order = np.argsort(full, kind="stable")
    return order.reshape(size, -1)


def scaled_dot_product_attention_backward(query, key, value, grad, attn_mask=None,
                                          dropout_p=0.0, is_causal=False, scale=None,
                                          enable_gqa=False, *, rounding=_NE, overflow=None,
                                          compute=None, accuracy=None, exp_accuracy=None,
                                          stored="default", dtype=None, policy="torch"):
    """The gradients of ``scaled_dot_product_attention(query, key, value, ...)`` for the
    output gradient ``grad``: ``grad_query``, ``grad_key``, ``grad_value`` (a
    :class:`exactref.Gradients`), each in its operand's shape and format, each element the exact
    gradient of the exact function rounded once (the gradients of key and value heads shared
    by GQA, or of broadcast batch entries, summed over their copies).

    ``scale=None`` is the real ``1/sqrt(E)``. The tolerance covers PyTorch's CPU backward
    kernels (flash: the weights from the saved log-sum-exp, ``D`` from the stored output; math:
    the softmax's weights and ``D = sum P dP``) in ``compute`` with the exponential within
    ``exp_accuracy`` ulps and every sum in any order; ``stored``: the format the weights and
    ``dS`` are stored in (default: the output format when it is narrower than ``compute``;
    None: not stored).

    >>> import exactref as er
    >>> q = er.asarray([[[1.0, 0.0], [0.0, 0.0]]], "float32")
    >>> v = er.asarray([[[1.0, 2.0], [3.0, 2.0]]], "float32")
    >>> g = er.scaled_dot_product_attention.backward(q, q, v, er.asarray(
    ...     [[[1.0, 0.0], [0.0, 1.0]]], "float32"))
    >>> g.grad_value.rounded.tolist()  # the weights' columns times grad
    [[[0.6697615385055542, 0.5], [0.3302384614944458, 0.5]]]
    >>> g.grad_query.rounded.tolist()[0][1]  # row 2's scores are equal: dP is equal too
    [0.0, 0.0]
    """
    from ._attention import _masks, _qkv, _scale, _shapes  # the forward's checks

    backward_keywords(_BOP, dtype, policy)
    q, k, v, out = _qkv(_BOP, query, key, value, dropout_p, "differentiates")
    sc = _scale(scale)
    Qd, Kd, Vd, batch = _shapes(q, k, v, enable_gqa)
    L, E = Qd.shape[-2:]
    S, Ev = Vd.shape[-2:]
    G = grad_array(_OP, grad, batch + (L, Ev))
    allowed, fmask = _masks(attn_mask, is_causal, batch, L, S, out)
    mode, rule = resolve_modes(rounding, overflow, out)
    c = compute_format(out, compute)
    ea = resolve_accuracy(exp_accuracy if exp_accuracy is not None else accuracy, "exp", c)
    if isinstance(stored, str) and stored == "default":
        h = out if out.precision < c.precision else None
    else:
        h = None if stored is None else resolve_dtype(stored)
    B = int(np.prod(batch, dtype=np.int64))
    rep = Qd.shape[-3] // k.shape[-3] if enable_gqa else 1
    owners = {"q": _owners(tuple(q.shape[:-2]), batch, 1),
              "k": _owners(tuple(k.shape[:-2]), batch, rep),
              "v": _owners(tuple(v.shape[:-2]), batch, rep)}
    Q = np.ascontiguousarray(Qd, dtype=np.float64).reshape(B, L, E)
    K = np.ascontiguousarray(Kd, dtype=np.float64).reshape(B, S, E)
    V = np.ascontiguousarray(Vd, dtype=np.float64).reshape(B, S, Ev)
    Gd = np.asarray(G.numpy(), dtype=np.float64).reshape(B, L, Ev)
    Al = np.ascontiguousarray(np.broadcast_to(allowed, batch + (L, S))).reshape(B, L, S)
    Fm = None if fmask is None else np.ascontiguousarray(fmask).reshape(B, L, S)
    bits = out.precision
    kept: list = []
    exact = evaluate_attention_backward(Q, K, V, Gd, Al, Fm, sc, bits, owners, keep=kept)
    sig = abs(1.0 / math.sqrt(E)) * (1 + 2.0 ** -50) if sc is None else abs(sc)
    model = _Model(Q=Q, K=K, V=V, G=Gd, Fm=Fm, kept=kept[0], scale=sc, sig=sig, c=c, ea=ea, h=h,
                   out=out, mode=mode, rule=rule, bits=bits, owners=owners)
    described = (f"scores in {c.name}, the weights from the saved log-sum-exp or the softmax "
                 f"with exp within {ea.label}, D from the stored output or sum P dP, every sum "
                 f"in {c.name} in any order")
    if h is not None:
        described += f", the weights and dS stored in {h.name}"
    details = {"rounding": mode, "overflow": rule, "compute": c, "exp_accuracy": ea.name,
               "stored": None if h is None else h.name,
               "scale": "1/sqrt(E) (exact)" if sc is None else sc, "order": "any",
               "order_declared": True}
    res = {}
    for n, (name, ex, op) in enumerate(zip(("grad_query", "grad_key", "grad_value"), exact,
                                           (q, k, v), strict=True)):
        shape = tuple(op.shape)
        rounded = to_array([ex.round(out.component, mode, rule)[0].reshape(shape)], out, shape)
        x = ex.round(F64, Rounding.NEAREST_EVEN, "ieee")[0]

        def bounds(n=n, x=x, shape=shape):
            lo, hi, nan = model.ends(("dQ", "dK", "dV")[n], x)
            return [(lo.reshape(shape), hi.reshape(shape), nan.reshape(shape))]

        models = [f"exact gradient rounded once into {out.name}",
                  f"{described}, then rounded into {out.name}"]
        r = BoundResult(rounded, bounds, op=_BOP, models=models, details=dict(details))
        r.inputs = {"query": q, "key": k, "value": v, "grad": G}
        res[name] = r
    return Gradients(**res)


# ------------------------------------------------------------------------ the model's ends
class _Model:
    """The per-element bounds of docs/attention.md's "Backward" derivation: per batch entry in
    chunks of the batch (the first tier's ``(B, L, S)`` temporaries), then the owners' sums."""

    def __init__(self, **kw):
        self.__dict__.update(kw)
        self._entries = None

    def _units(self):
        c, h = self.c, self.h
        p = c.precision
        u = 2.0 ** -p if self.mode.is_nearest else 2.0 ** (1 - p)
        uh = 0.0 if h is None else 2.0 ** -h.precision
        eh = 0.0 if h is None else h.component.smallest_subnormal
        uo = 2.0 ** -self.out.precision * (1 if self.mode.is_nearest else 2)
        return u, c.smallest_subnormal, uh, eh, uo, self.out.component.smallest_subnormal

    def _entries_all(self):
        """``{name: (H, M, big)}`` per batch entry: the bound, the computed terms' magnitude and
        where anything may come out."""
        if self._entries is not None:
            return self._entries
        Q, K, V = self.Q, self.K, self.V
        B, L, E = Q.shape
        S, Ev = V.shape[1:]
        shapes = {"dQ": (B, L, E), "dK": (B, S, E), "dV": (B, S, Ev)}
        ent = {n: (np.empty(sh), np.empty(sh), np.empty(sh, bool)) for n, sh in shapes.items()}
        kept = self.kept
        step = B if kept["chunk"] is not None else attention_chunk(L, S)
        for b0 in range(0, B, step):
            sl = slice(b0, min(B, b0 + step))
            fm = None if self.Fm is None else self.Fm[sl]
            if kept["chunk"] is not None:
                t1, enc = kept["chunk"]
            else:
                t1, enc = first_tier(Q[sl], K[sl], V[sl], self.G[sl], kept["reads"][sl], fm,
                                     kept["bad"][sl], self.scale)
            common = self._common(sl, fm, t1, enc)
            for n in shapes:
                for arr, val in zip(ent[n], self._entry(n, sl, common), strict=True):
                    arr[sl] = val
            del t1, enc, common
        kept["chunk"] = None  # the model has read it
        self._entries = ent
        return ent

    def _common(self, sl, Fm, t1, enc):
        """The bounds shared by the three gradients on a chunk: the weights' error ``PE`` and
        magnitude ``PM``, ``dS``'s error ``ES`` and magnitude ``DSm``, the rows ``big``."""
        c = self.c
        Q, V, G = self.Q[sl], self.V[sl], self.G[sl]
        E = Q.shape[2]
        S, Ev = V.shape[1:]
        u, eta, uh, eh, uo, eo = self._units()
        r = max(1, math.ceil(S / KV_SPLIT)) - 1  # the forward's online blocks, less one
        allowed = enc.allowed
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            # the scores, as the forward's model (linalg/_attention.py, step 1)
            gE = up(gamma_up(E + 4, u)) + 2.0 ** -52
            fm = np.zeros_like(enc.s_lo) if Fm is None else np.abs(np.where(allowed, Fm, 0.0))
            Gq = up(enc.G * up(1 + (2 * E + 2) * 2.0 ** -53))
            delta = up(up(up(self.sig * Gq) * up(gE * 1.01)) + up(u * 1.01 * fm)
                        + (E + 4) * eta)
            delta = np.where(allowed, delta, 0.0)
            smax = np.max(np.where(allowed, enc.s_hi, -np.inf), axis=2, keepdims=True,
                          initial=-np.inf)
            smax = np.where(np.isfinite(smax), smax, 0.0)
            dist = np.where(allowed, up(smax - enc.s_lo), 0.0)
            dmax = np.max(delta, axis=2, keepdims=True, initial=0.0)
            big = np.any(allowed & ~(up(np.abs(enc.s_hi) + np.abs(enc.s_lo) + delta)
                                     < c.max_finite / 4), axis=2)
            kx = _ulps_of(self.ea, -dist)
            eps = up(up(2 * np.max(kx, initial=0.5) * u) / (1 - u / 2))
            logS = math.log(max(S, 1)) + 1
            # (math) the standard softmax: P~/P within e**(a_j + a_max) (1 + eps)**2 (1 + g)
            a1 = up(delta + dmax + up(u * 1.01 * up(dist + 2 * dmax)) + 2 * eta)
            a1 = np.where(allowed, a1, 0.0)
            a1m = np.max(a1, axis=2, keepdims=True, initial=0.0)
            gS = up(gamma_up(S + 1, u))
            # (1 +- eps)**2 (1 +- gS) never formed in float64 (1 + 2**-53 is 1): compose_up
            # above, 1 - the sum of the parts below (prod (1 - a_i) >= 1 - sum a_i)
            m_hi = inflate(_exp_factor(up(a1 + a1m), +1), compose_up(pow1p_m1_up(eps, 2), gS))
            m_lo = down(_exp_factor(up(a1 + a1m), -1)
                       * np.maximum(down(1 - slack_up(2 * eps + gS, 2)), 0.0))
            # (flash) EXP(R(s~ - lse~)), lse~ from the forward's online softmax in r + 1 blocks
            a2 = up(delta + dmax + up(2 * u * 1.01 * up(dist + 2 * dmax)) + (2 + 2 * r) * eta)
            a2m = np.max(np.where(allowed, a2, 0.0), axis=2, keepdims=True, initial=0.0)
            lam = up(1.02 * (a2m + (1 + r) * eps + (r + 2) * u + gS
                              + 4 * u * (logS + dmax + np.abs(smax) + 1)))
            beta = up(delta + lam + up(u * 1.01 * up(dist + logS + delta + lam)))
            beta = np.where(allowed, beta, 0.0)
            f_hi = inflate(_exp_factor(beta, +1), eps)
            f_lo = deflate(_exp_factor(beta, -1), eps)
            hi_f = inflate(np.maximum(m_hi, f_hi), uh)
            lo_f = deflate(np.minimum(m_lo, f_lo), uh)
            rho = np.where(allowed, np.maximum(up(hi_f - 1), up(1 - lo_f)), 0.0)
            tau = np.where(allowed, (np.max(kx, initial=0.5) + 3) * eta + eh, 0.0)
            Pm = np.where(allowed, t1["P"][1], 0.0)
            PE = up(up(rho * Pm) + tau)             # |P~ - P|
            PM = up(Pm + PE)                          # |P~|
            # dP: any order in c
            Ga, Va = np.abs(G), np.abs(np.where(np.isfinite(V), V, 0.0))
            Gd = Ga @ np.swapaxes(Va, 1, 2)
            e_dP = up(up(gamma_up(Ev, u)) * 1.01 * Gd + Ev * eta)
            dPm = np.maximum(np.abs(t1["dP"][0]), np.abs(t1["dP"][1]))
            # D: (math) sum_j P~ dP~, (flash) sum_l dO O~ with O~ the stored forward output
            DM = up(np.sum(PE * (dPm + e_dP) + Pm * e_dP, axis=2)
                     + gamma_up(S, u) * 1.01 * np.sum(PM * (dPm + e_dP), axis=2))
            Om = np.maximum(np.abs(enc.out_lo), np.abs(enc.out_hi))
            m_fw = up(inflate(_exp_factor(up(2 * a2), +1), compose_up(
                pow1p_m1_up(eps, 2 + r), pow1p_m1_up(u, r + 2), gS, uh)) - 1)
            pf = np.where(allowed, up(up(m_fw * Pm) + tau), 0.0)
            w = up(pf @ Va + gamma_up(S + r + 2, u) * 1.01 * (up(Pm + pf) @ Va) + S * eta)
            w = up(w + uo * up(Om + w) + eo)
            DF = up(np.sum(Ga * w, axis=2) + gamma_up(Ev, u) * 1.01 * np.sum(Ga * (Om + w),
                                                                           axis=2))
            Dl = np.maximum(DM, DF)[..., None]
            Xm = np.maximum(np.abs(t1["X"][0]), np.abs(t1["X"][1]))
            XE = up(e_dP + Dl)
            ES = up(PE * up(Xm + XE) + Pm * XE
                     + (2 * u + uh) * 1.01 * PM * up(Xm + XE) + 2 * eta + eh)
            ES = np.where(allowed, ES, 0.0)
            DSm = np.where(allowed, np.maximum(np.abs(t1["dS"][0]), np.abs(t1["dS"][1])), 0.0)
            huge = ~(np.isfinite(ES) & (up(Gd + PM * (Xm + XE)) < c.max_finite / 4))
            big = big | np.any(huge & allowed, axis=2)
        return PE, PM, ES, DSm, big

    def _entry(self, name, sl, common):
        """``(H, M, big)`` of the gradient ``name`` per batch entry of the chunk ``sl``."""
        PE, PM, ES, DSm, big = common
        u, eta, uh, eh, uo, eo = self._units()
        Q, K, G = self.Q[sl], self.K[sl], self.G[sl]
        L, S = Q.shape[1], K.shape[1]
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            if name == "dV":
                n, parts, scl = L, math.ceil(L / Q_SPLIT) - 1, 1.0
                Ga = np.abs(G)
                err = np.swapaxes(PE, 1, 2) @ Ga
                mag = np.swapaxes(PM, 1, 2) @ Ga
            elif name == "dQ":
                n, parts, scl = S, math.ceil(S / KV_SPLIT) - 1, self.sig
                Ka = np.abs(K)
                err = ES @ Ka
                mag = up(DSm + ES) @ Ka
            else:
                n, parts, scl = L, math.ceil(L / Q_SPLIT) - 1, self.sig
                Qa = np.abs(Q)
                err = np.swapaxes(ES, 1, 2) @ Qa
                mag = np.swapaxes(up(DSm + ES), 1, 2) @ Qa
            g = up(gamma_up(n, u) * 1.01 + (5 * u if name != "dV" else 0.0)
                    + parts * uo * 1.01)
            H = up(scl * up(up(err * (1 + 2.0 ** -30)) + up(g * mag) * (1 + 2.0 ** -30))
                    + (n + 4) * (eta + eh + eo))
            M = up(scl * mag)
        if name == "dQ":
            bigp = np.broadcast_to(big[..., None], H.shape)
        else:  # a key's gradients read every row
            bigp = np.broadcast_to(np.any(big, axis=1)[:, None, None], H.shape)
        return H, M, bigp

    def ends(self, name, x):
        """``(lo, hi, nan)`` flat float64 arrays of the gradient ``name`` (owner-summed)."""
        u, eta, uh, eh, uo, eo = self._units()
        H, M, bigp = self._entries_all()[name]
        own = self.owners[name[1].lower()]
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            C = own.shape[1]
            Hs = H[own].sum(axis=1)
            Ms = M[own].sum(axis=1)
            gC = gamma_up(C, u) * 1.01 + (C - 1) * uo * 1.01
            Hs = up(Hs * (1 + 2.0 ** -30) + up(gC * up(Ms + Hs)))
            bigo = bigp[own].any(axis=1)
            lo_e, hi_e = self.kept["own"][name]
            xs = x.reshape(lo_e.shape)
            rel = 2.0 ** -self.bits
            xlo = np.fmax(down(xs - up(np.abs(xs) * rel)), lo_e)
            xhi = np.fmin(up(xs + up(np.abs(xs) * rel)), hi_e)
            vlo, vhi = down(xlo - Hs), up(xhi + Hs)
        special = ~np.isfinite(xs)
        bad = (bigo | ~np.isfinite(Hs)) & ~special
        vlo = np.where(bad, -np.inf, vlo)
        vhi = np.where(bad, np.inf, vhi)
        nan = bad.reshape(-1).copy()
        comp = self.out.component
        lo = _chain(vlo.reshape(-1), self.c, comp, self.mode, self.mode, nan, -np.inf,
                    self.rule)
        nan2 = nan.copy()
        hi = _chain(vhi.reshape(-1), self.c, comp, self.mode, self.mode, nan2, np.inf,
                    self.rule)
        nanf = nan | nan2
        xf, sp = xs.reshape(-1), special.reshape(-1)
        lo = np.where(sp, xf, lo)
        hi = np.where(sp, xf, hi)
        nanf = np.where(sp, np.isnan(xf), nanf)
        return lo, hi, nanf
