"""``scaled_dot_product_attention``: each output element the exact value rounded once, with a
tolerance that bounds the declared implementations (docs/attention.md).

The exact values come from :mod:`exactref._exact._attention` (float64 intervals for every
element at once, then MPFR with Ziv's strategy; the exact cases by the Lindemann-Weierstrass
theorem). The model ("The tolerance model" in docs/attention.md), each step in the compute
format ``c``:

1. scores ``s~_ij = R_c(R_c(scale) * (q_i . k_j)) + mask_ij``, the dot product accumulated in any
   order (or ``q`` and ``k`` each multiplied by ``sqrt(scale)`` first, as PyTorch's math kernel);
2. the max-subtracted softmax: ``EXP(R_c(s~_ij - max_j s~_ij))`` within ``k`` ulps, their sum in
   any order, the weights divided (or times the reciprocal) and then ``P V`` accumulated, or
   (``blocks=n``) FlashAttention's online softmax: running maximum, the sum and the output
   rescaled by ``EXP(m_old - m_new)`` at each new maximum, one division at the end;
3. ``stored=``: the weights stored into that format before ``P V`` (PyTorch's and
   FlashAttention's half-format kernels);
4. the result stored into the output format in the call's rounding mode.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._exact import (
    Rounding,
    compose_up,
    down,
    enclose_blocks,
    evaluate_attention,
    gamma_up,
    pow1p_m1_up,
    resolve_modes,
    slack_dn,
    slack_up,
    up,
)
from .._formats import dtype as resolve_dtype
from .._operands import prepare, to_array
from ..arithmetic import resolve_accuracy
from ._bounds import _NE, F64, BoundResult, _chain
from ._norms import _compute_for, _output_format
from ._reductions import row_policy
from ._softmax import _exp_factor as _exp_factor_any
from ._softmax import _ulps_of

__all__ = ["scaled_dot_product_attention"]

_OP = "scaled_dot_product_attention"


# ----------------------------------------------------------------------------- operands
def _qkv(op, query, key, value, dropout_p, does):
    """``(q, k, v, output format)``: the three operands, of one real floating format, and no
    dropout (``does``: what exactref does with attention, for the message)."""
    if dropout_p != 0:
        raise ValueError(f"{op}: dropout_p={dropout_p!r}; exactref {does} attention without "
                         f"dropout (a random result has no exact value): pass dropout_p=0.0")
    q, k, v = (_operand(a, n) for a, n in ((query, "query"), (key, "key"), (value, "value")))
    fmts = {a.dtype.name for a in (q, k, v)}
    if len(fmts) != 1:
        raise ValueError(f"{op}: query is {q.dtype.name}, key {k.dtype.name}, value "
                         f"{v.dtype.name}; expected one format (torch raises too): convert them")
    out = q.dtype
    if out.kind != "float":
        raise ValueError(f"{op}: the operands are {out.name}; expected a real floating format")
    return q, k, v, out


def _operand(x, name):
    o = prepare(x, name)
    if o.kind != "array":
        raise ValueError(f"{_OP}: {name} is a scalar; it must be an array of shape "
                         f"(..., L, E) (query), (..., S, E) (key) or (..., S, Ev) (value)")
    if o.array.ndim < 2:
        raise ValueError(f"{_OP}: {name} has shape {tuple(o.array.shape)}; expected at least "
                         f"2 dimensions (..., rows, features)")
    return o.array


def _shapes(q, k, v, enable_gqa):
    """Checks and the GQA repeat: ``(Qd, Kd, Vd)`` numpy arrays broadcast over the batch."""
    Qd, Kd, Vd = (np.asarray(a.numpy()) for a in (q, k, v))
    if Qd.shape[-1] != Kd.shape[-1]:
        raise ValueError(f"{_OP}: query's last dimension (E) is {Qd.shape[-1]} and key's is "
                         f"{Kd.shape[-1]}; they must be equal (q . k needs the same features)")
    if Kd.shape[-2] != Vd.shape[-2]:
        raise ValueError(f"{_OP}: key has {Kd.shape[-2]} rows (S) and value {Vd.shape[-2]}; "
                         f"expected one value row per key")
    if enable_gqa:
        if Qd.ndim < 3 or Kd.ndim < 3 or Vd.ndim < 3:
            raise ValueError(f"{_OP}: enable_gqa needs a heads dimension (-3) in query, key "
                             f"and value; got shapes {Qd.shape}, {Kd.shape}, {Vd.shape}")
        hq, hk, hv = Qd.shape[-3], Kd.shape[-3], Vd.shape[-3]
        if hk != hv or hq % hk:
            raise ValueError(f"{_OP}: enable_gqa: query has {hq} heads, key {hk} and value "
                             f"{hv}; expected key and value with the same number of heads, "
                             f"dividing query's")
        Kd = np.repeat(Kd, hq // hk, axis=-3)
        Vd = np.repeat(Vd, hq // hk, axis=-3)
    try:
        batch = np.broadcast_shapes(Qd.shape[:-2], Kd.shape[:-2], Vd.shape[:-2])
    except ValueError:
        raise ValueError(f"{_OP}: the batch dimensions of query {Qd.shape[:-2]}, key "
                         f"{Kd.shape[:-2]} and value {Vd.shape[:-2]} do not broadcast (with "
                         f"fewer key/value heads than query heads, pass enable_gqa=True)"
                         ) from None
    Qd = np.broadcast_to(Qd, batch + Qd.shape[-2:])
    Kd = np.broadcast_to(Kd, batch + Kd.shape[-2:])
    Vd = np.broadcast_to(Vd, batch + Vd.shape[-2:])
    return Qd, Kd, Vd, batch


def _masks(attn_mask, is_causal, batch, L, S, fmt):
    """``(allowed (..., L, S) bool, fmask float64 or None)``."""
    shape = batch + (L, S)
    allowed = np.ones(shape, bool)
    if is_causal:
        if attn_mask is not None:
            raise ValueError(f"{_OP}: pass either attn_mask or is_causal=True, not both (torch "
                             f"raises too)")
        allowed = np.broadcast_to(np.tril(np.ones((L, S), bool)), shape)  # top-left: j <= i
        return allowed, None
    if attn_mask is None:
        return allowed, None
    o = prepare(attn_mask, "attn_mask")
    if o.kind != "array":
        raise ValueError(f"{_OP}: attn_mask is a scalar; pass an array broadcasting to "
                         f"{shape}")
    M = o.array
    data = np.asarray(M.numpy())
    try:
        data = np.broadcast_to(data, shape)
    except ValueError:
        raise ValueError(f"{_OP}: attn_mask has shape {data.shape}, which does not broadcast to "
                         f"the scores' shape {shape} (..., L, S)") from None
    if M.dtype.kind == "bool":
        return data.astype(bool), None
    if M.dtype.kind != "float":
        raise ValueError(f"{_OP}: attn_mask is {M.dtype.name}; expected bool (True: the key "
                         f"takes part) or a float mask added to the scores")
    return allowed, data.astype(np.float64)


def _scale(scale):
    if scale is None:
        return None
    if not isinstance(scale, numbers.Real) or isinstance(scale, bool) or not math.isfinite(
            float(scale)):
        raise ValueError(f"{_OP}: scale={scale!r}; expected a finite float or None (the real "
                         f"1/sqrt(E))")
    return float(scale)


# ------------------------------------------------------------------------------- the op
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, *, dtype=None,
                                 rounding=_NE, overflow=None, compute=None, accuracy=None,
                                 exp_accuracy=None, blocks=None, stored=None, policy="torch"):
    """``softmax(scale * q k^T + mask) v`` (torch.nn.functional.scaled_dot_product_attention's
    signature; ``dropout_p`` must be 0), each output element the exact value rounded once.

    ``scale=None`` is the *real* ``1/sqrt(E)`` (irrational unless ``E`` is a power of 4); a
    float ``scale`` is taken exactly. Boolean masks: True takes part; float masks are added to
    the scores; ``is_causal``: key ``j`` takes part in row ``i`` when ``j <= i`` (top-left, as
    torch). A row no key takes part in is NaN (torch 2.13 gives 0: see
    ``exactref.equivalents.torch``). ``enable_gqa`` repeats key/value heads (dim -3).

    The tolerance covers the standard algorithm in ``compute`` (default float32 for the half
    formats): scores accumulated in any order, max-subtracted softmax with the exponential
    within ``exp_accuracy`` (or ``accuracy``) ulps, ``P V`` accumulated in any order;
    ``blocks=n``: FlashAttention's online softmax of at most ``n`` key blocks; ``stored``: the
    weights stored into that format before ``P V``.

    >>> import exactref as er
    >>> q = er.asarray([[[1.0, 0.0], [0.0, 0.0]]], "float32")
    >>> v = er.asarray([[[1.0, 2.0], [3.0, 2.0]]], "float32")
    >>> er.scaled_dot_product_attention(q, q, v).rounded.tolist()
    [[[1.6604769229888916, 2.0], [2.0, 2.0]]]
    """
    row_policy("scaled_dot_product_attention", policy)
    for flag, given in (("is_causal", is_causal), ("enable_gqa", enable_gqa)):
        if not isinstance(given, (bool, np.bool_)):
            raise ValueError(f"{_OP}: {flag}={given!r}; expected True or False")
    q, k, v, inp = _qkv(_OP, query, key, value, dropout_p, "computes")
    out = _output_format(_OP, inp, dtype)
    sc = _scale(scale)
    Qd, Kd, Vd, batch = _shapes(q, k, v, enable_gqa)
    L, E = Qd.shape[-2:]
    S, Ev = Vd.shape[-2:]
    allowed, fmask = _masks(attn_mask, is_causal, batch, L, S, inp)
    mode, rule = resolve_modes(rounding, overflow, out)
    c = _compute_for(_OP, inp, out, compute, dtype)
    ea = resolve_accuracy(exp_accuracy if exp_accuracy is not None else accuracy, "exp", c)
    if blocks is not None and not (isinstance(blocks, numbers.Integral) and blocks >= 1):
        raise ValueError(f"blocks={blocks!r}: the online model's number of key blocks is an "
                         f"integer >= 1 (None: the standard algorithm)")
    h = None if stored is None else resolve_dtype(stored)
    B = int(np.prod(batch, dtype=np.int64))
    Q = np.ascontiguousarray(Qd, dtype=np.float64).reshape(B, L, E)
    K = np.ascontiguousarray(Kd, dtype=np.float64).reshape(B, S, E)
    V = np.ascontiguousarray(Vd, dtype=np.float64).reshape(B, S, Ev)
    Al = np.ascontiguousarray(np.broadcast_to(allowed, batch + (L, S))).reshape(B, L, S)
    Fm = None if fmask is None else np.ascontiguousarray(fmask).reshape(B, L, S)
    if E == 0:  # empty dot products: every score is 0 (a mask aside), whatever the scale, as
        # in torch 2.13 (whose q k^T is 0 before it is scaled; 1/sqrt(0) has no value)
        Q, K, E = np.zeros((B, L, 1)), np.zeros((B, S, 1)), 1
        sc = 1.0 if sc is None else sc
    bits = max(out.precision, c.precision)
    exact = evaluate_attention(Q, K, V, Al, Fm, sc, bits)
    shape = batch + (L, Ev)
    rounded = to_array([exact.round(out.component, mode, rule)[0].reshape(shape)], out, shape)

    def bounds():  # a batch entry's block of rows at a time: the model's temporaries are (l, S)
        x = _float64_values(exact, bits).reshape(B, L, Ev)
        lo, hi = np.empty((B, L, Ev)), np.empty((B, L, Ev))
        nan = np.empty((B, L, Ev), bool)
        for b, rows, enc in enclose_blocks(Q, K, V, Al, Fm, sc):
            fm = None if Fm is None else Fm[b:b + 1, rows]
            parts = _model_ends(Q[b:b + 1, rows], V[b:b + 1], fm, sc, enc, x[b:b + 1, rows], c,
                                ea, blocks, h, out, mode, rule, bits)
            lo[b, rows], hi[b, rows], nan[b, rows] = (a.reshape(-1, Ev) for a in parts)
        return [(lo.reshape(shape), hi.reshape(shape), nan.reshape(shape))]

    described = (f"scores accumulated in {c.name} in any order, max-subtracted softmax with exp "
                 f"within {ea.label} in {c.name}, P V accumulated in any order")
    if blocks is not None:
        described = f"online softmax in at most {blocks} key blocks, " + described
    if h is not None:
        described += f", the weights stored in {h.name}"
    models = [f"exact value rounded once into {out.name}", f"{described}, then rounded into "
              f"{out.name}"]
    details = {"rounding": mode, "overflow": rule, "compute": c, "blocks": blocks,
               "exp_accuracy": ea.name, "stored": None if h is None else h.name,
               "scale": "1/sqrt(E) (exact)" if sc is None else sc, "order": "any",
               "order_declared": True}
    result = BoundResult(rounded, bounds, op=_OP, models=models, details=details)
    result.inputs = {"query": q, "key": k, "value": v}
    return result


# ------------------------------------------------------------------------ the model's ends
def _float64_values(exact, bits):
    """The exact values rounded to nearest into float64 (``x`` of the model): for ``bits <=
    49`` the ExactArray's values rounded to odd at ``bits + 2 <= 51`` bits are floats already,
    which ``as_odd_float64`` reads without rounding (a tenth of the time), unless one lies
    beyond float64's normal range (read there as ``2**+-1000``)."""
    if bits <= 49:
        x = exact.as_odd_float64(Rounding.NEAREST_EVEN)
        with np.errstate(invalid="ignore"):
            far = (np.abs(x) == 2.0 ** -1000) | (np.abs(x) == 2.0 ** 1000)
        if not far.any():
            return x
    return exact.round(F64, Rounding.NEAREST_EVEN, "ieee")[0]


def _exp_factor(a, sign):
    """:func:`._softmax._exp_factor` (rigorous bounds of ``e**(sign a)``, ``a >= 0``), its
    branch for ``a <= 1`` (``1 - a`` below, ``1 + a + a**2`` above) computed alone where every
    ``a`` is at most 1, as the scores' errors are but for huge logits."""
    if a.size and not float(a.max()) <= 1.0:
        return _exp_factor_any(a, sign)
    with np.errstate(over="ignore", invalid="ignore"):
        if sign < 0:
            return np.maximum(down(1.0 - a), 0.0)
        return up(up(1.0 + a) + up(a * a))


def _model_ends(Q, V, Fm, sc, enc, x, c, ea, blocks, h, out, mode, rule, bits):
    """``(lo, hi, nan)`` float64 arrays ``(B, L, Ev)``: the outputs of the modelled
    implementations (docs/attention.md, "Derivation")."""
    B, L, E = Q.shape
    S, Ev = V.shape[1:]
    p = c.precision
    u = 2.0 ** -p if mode.is_nearest else 2.0 ** (1 - p)
    eta = c.smallest_subnormal
    r = 0 if blocks is None else blocks - 1
    uh = 0.0 if h is None else 2.0 ** -h.precision
    eh = 0.0 if h is None else h.component.smallest_subnormal
    allowed = enc.allowed
    sig = abs(1.0 / math.sqrt(E)) * (1 + 2.0 ** -50) if sc is None else abs(sc)
    every = allowed.all()
    # Note: a sum or product of k <= 6 nonnegative floats, each step rounded to nearest, is
    # within (1 + U64)**k of the exact; times M = 1 + 2**-49 (2**-49 = 16 U64 >= 2 (k + 1) U64:
    # the slack policy of linalg/_bounds.py, M's own multiplication included) it is an upper
    # bound: one multiplication for what _up did at every step (subnormals: + k eta_64)
    M, T = 1 + 2.0 ** -49, 8 * 5e-324
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        # 1. the scores: |s~ - s| <= delta (dot in c, R_c(scale), the product, the mask)
        gE = up(gamma_up(E + 4, u)) + 2.0 ** -52
        # the GEMM of |q| |k| (gamma_E low), sigma, gamma_{E+4} 1.01: one factor
        kG = up(up(up(1 + (2 * E + 2) * 2.0 ** -53) * sig) * up(gE * 1.01))
        delta = enc.G * kG
        if Fm is not None:
            fm = np.abs(Fm)
            fm *= u * 1.01
            delta += fm
        delta += (E + 4) * eta
        delta *= M
        delta += T
        s_hi = enc.s_hi
        if not every:
            delta[~allowed] = 0.0
            s_hi = np.where(allowed, s_hi, -np.inf)
        smax = np.max(s_hi, axis=2, keepdims=True, initial=-np.inf)
        dist = smax - enc.s_lo  # nonnegative where allowed, within u of the difference
        dist *= M
        if not every:
            dist[~allowed] = 0.0
        dmax = np.max(delta, axis=2, keepdims=True, initial=0.0)
        # too large for c: the computed scores overflow (anything may come out)
        room = c.max_finite / 4
        sup = (np.max(np.abs(enc.s_hi), axis=2, initial=0.0) + np.max(np.abs(enc.s_lo), axis=2,
               initial=0.0) + dmax[..., 0]) * M
        big = np.zeros(sup.shape, bool)
        near = ~(sup < room)
        if near.any():  # the rows near the format's range, element by element
            big[near] = np.any((allowed & ~(up(np.abs(enc.s_hi) + np.abs(enc.s_lo) + delta)
                                            < room))[near], axis=-1)
        # 2. the arguments of EXP, against the exact s_j - (common shift)
        online = 2.0 if r else 1.0
        alpha = dist + 2 * dmax
        alpha *= online * u * 1.01
        alpha += delta
        alpha += dmax + (2 + 2 * r) * eta
        alpha *= M
        alpha += T
        if not every:
            alpha[~allowed] = 0.0
    k_exp = 0.5 if ea.correct else _ulps_of(ea, -dist)
    eps = up(up(2 * k_exp * u) / (1 - u / 2))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        # per weight, its factor against the exact weight's share of the exponentials
        # (1 -+ eps)**(1 + r) (1 -+ u)**(r + 2) (1 -+ uh), never formed in float64 (where
        # 1 + 2**-53 is 1): below, 1 - the sum of the parts (prod (1 - a_i) >= 1 - sum a_i);
        # above, the parts composed by compose_up
        c_lo = np.maximum(down(1 - slack_up((1 + r) * eps + (r + 2) * u + uh, 5)), 0.0)
        c_hi = up(1 + compose_up(pow1p_m1_up(eps, 1 + r), pow1p_m1_up(u, r + 2), uh))
        if np.ndim(eps) == 0 and float(alpha.max(initial=0.0)) <= 1.0:
            # e**-a >= 1 - a and e**a <= 1 + a + a**2 for a <= 1 (the common case: products
            # of two or four roundings, then 1 - M or 1 + M)
            lo_f = 1.0 - alpha
            lo_f *= down(c_lo * (2 - M))
            hi_f = alpha * alpha
            hi_f += alpha
            hi_f += 1.0
            hi_f *= up(c_hi * M)
        else:
            lo_f = down(_exp_factor(alpha, -1) * c_lo)
            hi_f = up(_exp_factor(alpha, +1) * c_hi)
        plo, phi = enc.p_lo, enc.p_hi
        if every:
            inf_lo = np.min(lo_f, axis=2, keepdims=True, initial=np.inf)
            sup_hi = np.max(hi_f, axis=2, keepdims=True, initial=0.0)
        else:
            plo, phi = np.where(allowed, plo, 0.0), np.where(allowed, phi, 0.0)
            inf_lo = np.min(np.where(allowed, lo_f, np.inf), axis=2, keepdims=True,
                            initial=np.inf)
            sup_hi = np.max(np.where(allowed, hi_f, 0.0), axis=2, keepdims=True, initial=0.0)
        # S products summed in float64: S + 1 operations (the slack policy of _bounds)
        den_lo = np.maximum(inf_lo, slack_dn(np.sum(plo * lo_f, axis=2, keepdims=True), S + 1))
        den_hi = np.minimum(sup_hi, slack_up(np.sum(phi * hi_f, axis=2, keepdims=True), S + 1))
        gS = up(gamma_up(S + 1, u))
        # phi_lo = lo_f / (den_hi (1 + gS)) and phi_hi = hi_f / (den_lo (1 - gS)), outward:
        # one reciprocal per row, widened by 2**-50 over the product's rounding
        r_lo = down(down(1.0 / up(den_hi * (1 + gS))) * (1 - 2.0 ** -50))
        r_hi = up(up(1.0 / down(den_lo * (1 - gS))) * (1 + 2.0 ** -50))
        phi_lo = lo_f * r_lo
        phi_hi = hi_f * r_hi
        # 1 - phi_lo and phi_hi - 1, each within half an ulp: one ulp up (x (1 + 2**-52) >=
        # next float for x >= 0 normal; + eta_64 for the subnormals)
        rho = np.maximum(np.subtract(1.0, phi_lo, out=phi_lo), np.subtract(phi_hi, 1.0,
                                                                          out=phi_hi))
        rho *= 1 + 2.0 ** -52
        rho += 5e-324
        if not every:
            rho[~allowed] = 0.0
        rho_max = np.max(rho, axis=2, keepdims=True, initial=0.0)
        Va = np.abs(np.where(np.isfinite(V), V, 0.0))
        g_acc = up(gamma_up(S + r + 2, u))
        rho *= phi
        A1 = rho @ Va  # sum_j p_j rho_j |v_j|
        A2 = phi @ Va  # sum_j p_j |v_j|
        vsum = Va.sum(axis=1, keepdims=True) if every else allowed.astype(np.float64) @ Va
        absl = up(up(((np.max(k_exp, initial=0.5) + 3) * eta + eh) * 4 * (r + 1)) * vsum
                   + (S + r + 3) * (eta + eh))
        H = up(up(up(A1 * (1 + 2.0 ** -30)) + up(up(g_acc * (1 + rho_max)) * A2))
                * (1 + 2.0 ** -30)) + absl
        # the exact value's bounds: ExactArray holds it rounded to odd at P bits (within
        # 2**-(P-1) relative), the first tier's float64 enclosure too: the tighter of each
        rel = 2.0 ** -bits
        xlo = np.fmax(down(x - up(np.abs(x) * rel)), enc.out_lo)
        xhi = np.fmin(up(x + up(np.abs(x) * rel)), enc.out_hi)
        vlo = down(xlo - H)
        vhi = up(xhi + H)
    special = ~np.isfinite(x) | np.isnan(x)
    bad = big[..., None] & ~special
    vlo = np.where(bad, -np.inf, vlo)
    vhi = np.where(bad, np.inf, vhi)
    nan = np.zeros(vlo.shape, bool) | bad
    comp = out.component
    lo = _chain(vlo.reshape(-1), c, comp, mode, mode, nan.reshape(-1), -np.inf, rule)
    nan2 = nan.reshape(-1).copy()
    hi = _chain(vhi.reshape(-1), c, comp, mode, mode, nan2, np.inf, rule)
    nanf = nan.reshape(-1) | nan2
    xs = x.reshape(-1)
    sp = special.reshape(-1)
    lo = np.where(sp, xs, lo)
    hi = np.where(sp, xs, hi)
    nanf = np.where(sp, np.isnan(xs), nanf)
    return lo, hi, nanf


# ----------------------------------------------------------------------------- registry
def _register() -> None:
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register
    from ._attention_backward import scaled_dot_product_attention_backward as backward

    scaled_dot_product_attention.backward = backward
    scaled_dot_product_attention.spec = register(OpSpec(
        name=_OP, operands=("query", "key", "value"), kernel="row exponential", promotion="mul",
        function=scaled_dot_product_attention,
        summary="softmax(scale q k^T + mask) v over the keys, rounded once",
        params=(Param("attn_mask", None), Param("dropout_p", 0.0), Param("is_causal", False),
                Param("scale", None), Param("enable_gqa", False)),
        models=("exact", "standard: scores in c, max-subtracted softmax, P V in any order",
                "online softmax (FlashAttention) in at most n blocks", "weights stored"),
        backward=backward,
        # torch 2.13's CPU kernels (equivalents.torch reads them): the math kernel's (and
        # float64's) exponentials within 1 ulp, the flash kernel's exp_u20 and key blocks
        counterparts=Counterparts(Counterpart(
            "torch.nn.functional.scaled_dot_product_attention", contract={"exp_accuracy": 1},
            data={"flash": {"exp_accuracy": 20, "kv_split": 512}}), None,
            "jax.nn.dot_product_attention"),
        kinds=("float",), family="attention",
        # the audit's groups (exactref.audit's "attention" builder): (B, H, L, S, E, Ev) (B
        # None: 3-D operands, the math kernel's), the data flavor, params
        audit=AuditPlan(groups="attention", data={"min_bits": 16, "cases": (
            ((2, 4, 64, 64, 64, 64), "random", {}),
            ((1, 4, 128, 128, 64, 64), "random", {"is_causal": True}),
            ((1, 2, 32, 32, 64, 64), "huge", {}),
            ((1, 2, 16, 16, 64, 64), "equal", {}),
            ((None, 4, 32, 40, 16, 8), "random", {}))})))


_register()
