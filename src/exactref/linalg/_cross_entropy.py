"""``cross_entropy`` (torch.nn.functional.cross_entropy): class indices or class probabilities,
weights, ``ignore_index``, label smoothing and the three reductions; each output (a loss per
sample for ``reduction="none"``, else the one reduced value) the exact value rounded once, with
a tolerance that bounds the declared implementations.

The exact values come from :mod:`exactref._exact._cross_entropy` (MPFR interval arithmetic
with Ziv's strategy; the exact cases by the Lindemann-Weierstrass theorem). The tolerance model
is PyTorch's algorithm, derived in docs/cross_entropy.md ("The tolerance model"):

1. ``lsm = log_softmax(x)`` over the classes, by the max-subtracted model of
   :mod:`._softmax` in the compute format ``c`` (``exp_accuracy``, ``log_accuracy``), stored in
   ``c`` (PyTorch: in the input's format, :mod:`exactref.equivalents.torch`);
2. class indices: ``-lsm[y] * w[y]`` per sample; label smoothing adds
   ``-sum_c lsm[c] * w[c]`` per sample; probabilities: ``-sum_c lsm[c] * t'[c] * w[c]``
   (``t' = t (1 - eps) + eps / C``); every product rounded in ``c``;
3. the samples summed in ``c`` in any order (``order="pairwise"``: a tree), the mean divided by
   the sum of the weights (or the count) in ``c``, smoothing combined as
   ``(1 - eps) * nll + (eps / C) * smooth``, each operation rounded in ``c``;
4. the result stored into the output format in the call's rounding mode.

Each step is bounded by float64 intervals rounded outward, the ends rounded into the formats
(monotone), from the log-softmax model's per-element ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._exact import (
    LossRows,
    Rounding,
    compose_up,
    down,
    evaluate_losses,
    evaluate_rows,
    gamma_up,
    resolve_overflow,
    resolve_rounding,
    row_maxima,
    up,
)
from .._formats import Format
from .._formats import dtype as resolve_dtype
from .._operands import prepare, to_array
from . import _softmax as _sm
from ._bounds import _NE, F64, BoundResult, _chain, _round
from ._norms import _compute_for, _output_format
from ._orders import ORDER_GRAMMAR, ORDER_NAMES, parse_order
from ._reductions import row_policy

__all__ = ["cross_entropy", "REDUCTIONS", "ORDERS"]

#: the reductions, as torch spells them
#: the ``reduction=`` values (torch's): a loss per sample, their weighted mean, their sum
_NONE = "none"
_MEAN = "mean"
_SUM = "sum"
REDUCTIONS = (_NONE, _MEAN, _SUM)
#: the summation orders the model bounds: the long sums' grammar (``"library"`` the default;
#: ``"cascade"``: PyTorch's nll_loss, private)
ORDERS = ORDER_NAMES


# ----------------------------------------------------------------------------- operands
def _array(v, name):
    X = prepare(v, name)
    if X.kind != "array":
        raise ValueError(f"cross_entropy: {name} must be an array; got the scalar {v!r} "
                         f"(pass np.asarray([...]))")
    return X.array


@dataclass
class _Call:
    """The operands in rows: ``X (R, C)`` float64 logits (one row per sample and position),
    the output's shape per sample (``shape``), the target as class indices ``y (R,)`` with
    ``counts`` (not ignored) or probabilities ``T (R, C)``, the weights ``w (C,)`` (None:
    every 1) and the label smoothing ``eps`` (a Fraction)."""

    x: object
    X: np.ndarray
    shape: tuple
    out: Format
    y: np.ndarray | None
    counts: np.ndarray
    T: np.ndarray | None
    w: np.ndarray | None
    eps: Fraction
    reduction: str

    @property
    def C(self) -> int:
        return self.X.shape[1]

    @property
    def R(self) -> int:
        return self.X.shape[0]


def _rows_of(data: np.ndarray) -> np.ndarray:
    """``(N, C, d...)`` or ``(C,)`` -> ``(R, C)`` with the class dimension last, samples and
    positions in C order."""
    if data.ndim == 1:
        return data.reshape(1, -1)
    return np.moveaxis(data, 1, -1).reshape(-1, data.shape[1])


def _parse(input, target, weight, ignore_index, reduction, label_smoothing) -> _Call:
    if reduction not in REDUCTIONS:
        raise ValueError(f"cross_entropy: reduction={reduction!r}; expected one of "
                         f"{', '.join(map(repr, REDUCTIONS))} (size_average and reduce are "
                         f"deprecated in torch and not taken here)")
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise ValueError(f"cross_entropy: ignore_index={ignore_index!r}; expected an integer "
                         f"class index (torch's default is -100)")
    try:
        eps = Fraction(label_smoothing)
    except (TypeError, ValueError):
        raise ValueError(f"cross_entropy: label_smoothing={label_smoothing!r}; expected a "
                         f"number in [0, 1]") from None
    if not 0 <= eps <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0 (as "
                         f"torch); got {label_smoothing!r}")
    x = _array(input, "input")
    out = x.dtype
    if out.kind != "float":
        raise ValueError(f"cross_entropy: input is {out.name}; cross_entropy needs real "
                         f"floating logits (torch's log_softmax raises for {out.kind}s); "
                         f"convert them, e.g. er.asarray(x, 'float32')")
    if x.ndim == 0:
        raise ValueError("cross_entropy: input has no class dimension (shape ()); expected "
                         "(C,), (N, C) or (N, C, d1, ...)")
    data = np.asarray(x.numpy()).astype(np.float64)
    cdim = 0 if x.ndim == 1 else 1
    C = x.shape[cdim]
    if C == 0:
        raise ValueError(f"cross_entropy: input of shape {tuple(x.shape)} has no class "
                         f"(dimension {cdim} is empty)")
    t = _array(target, "target")
    w = None
    if weight is not None:
        wa = _array(weight, "weight")
        if wa.dtype.kind != "float" or wa.shape != (C,):
            raise ValueError(f"cross_entropy: weight must be a float array of shape ({C},) "
                             f"(one per class); got {wa.dtype.name} of shape "
                             f"{tuple(wa.shape)}")
        w = np.asarray(wa.numpy()).astype(np.float64)
        if not np.isfinite(w).all():
            raise ValueError("cross_entropy: weight has NaN or infinite entries; the exact "
                             "loss is defined for finite weights")
    X = _rows_of(data)
    lead = tuple(x.shape[:cdim]) + tuple(x.shape[cdim + 1:])
    if tuple(t.shape) == tuple(x.shape):  # probabilities (torch: same shapes)
        if t.dtype.kind != "float":
            raise ValueError(f"cross_entropy: a target of the input's shape holds class "
                             f"probabilities and must be floating; got {t.dtype.name} "
                             f"(class indices have the shape without the class dimension, "
                             f"{lead})")
        if ignore_index >= 0:
            raise ValueError(f"cross_entropy: ignore_index={ignore_index} is not supported "
                             f"for class probabilities (as torch); leave it at -100")
        T = _rows_of(np.asarray(t.numpy()).astype(np.float64))
        if not np.isfinite(T).all():
            raise ValueError("cross_entropy: the target probabilities have NaN or infinite "
                             "entries; the exact loss is defined for finite targets")
        return _Call(x, X, lead, out, None, np.ones(X.shape[0], bool), T, w, eps, reduction)
    if t.dtype.kind not in ("int", "uint"):
        raise ValueError(f"cross_entropy: target of shape {tuple(t.shape)} and format "
                         f"{t.dtype.name}: class indices must be integers of shape {lead}, "
                         f"class probabilities floats of the input's shape {tuple(x.shape)}")
    if tuple(t.shape) != lead:
        raise ValueError(f"cross_entropy: target has shape {tuple(t.shape)}; class indices "
                         f"for input of shape {tuple(x.shape)} need shape {lead}")
    y = np.asarray(t.numpy()).astype(np.int64).reshape(-1)
    counts = y != ignore_index
    bad = counts & ((y < 0) | (y >= C))
    if bad.any():
        raise ValueError(f"cross_entropy: target {int(y[bad][0])} is out of bounds (classes "
                         f"0 to {C - 1}, or ignore_index={ignore_index})")
    return _Call(x, X, lead, out, np.where(counts, y, 0), counts, None, w, eps, reduction)


# ------------------------------------------------------------------ exact coefficients
def _ints(a: np.ndarray):
    """``(N, e)``: ``a = N * 2**e`` exactly, ``N`` an object array of Python ints, for a
    float64 array of finite values."""
    a = np.asarray(a, dtype=np.float64)
    mant, ex = np.frexp(a)
    M = (mant * 2.0 ** 53).astype(np.int64)
    E = ex.astype(np.int64) - 53
    nz = M != 0
    e0 = int(E[nz].min()) if nz.any() else 0
    shift = np.where(nz, E - e0, 0)
    return M.astype(object) * (2 ** shift.astype(object)), e0


def _frac(n, e) -> Fraction:
    return Fraction(int(n) * 2 ** e) if e >= 0 else Fraction(int(n), 2 ** -e)


def _coefficients(call: _Call, kind: np.ndarray, m: np.ndarray):
    """Per row ``a_r``, ``b_r`` (Fractions), and whether a positive / negative coefficient
    meets a ``-inf`` log-softmax (docs/cross_entropy.md, "Exact values")."""
    X, R, C, eps = call.X, call.R, call.C, call.eps
    regular = kind == 0
    rows = np.arange(R)
    if call.T is None and not eps:  # only the targets' entries: d_y = x_y - m
        Xs = X[rows, call.y][:, None] if R else np.zeros((0, 1))
        fin = np.isfinite(Xs) & regular[:, None]
    else:
        Xs = X
        fin = np.isfinite(X) & regular[:, None]
    both, e = _ints(np.concatenate([np.where(fin, Xs, 0.0).reshape(-1), m]))
    Xi = both[:Xs.size].reshape(Xs.shape)
    mi = both[Xs.size:]
    Di = np.where(fin, Xi - mi[:, None], 0)  # d = x - m, exact, 0 off the finite entries
    w = np.ones(C) if call.w is None else call.w
    Wi, ew = _ints(w)
    one_m, sm = 1 - eps, eps / C
    # where the log-softmax is -inf: the -inf entries of regular rows, all but the +inf entry
    # of a row with one
    at_inf = (regular[:, None] & (X == -np.inf)) | ((kind == 1)[:, None] & (X != np.inf))
    sw = np.sign(w)
    if call.T is None:
        y = call.y
        wy = Wi[y]
        dy = Di[:, 0] if Xs is not X else Di[rows, y]
        sum_w = _frac(sum(Wi.tolist()), ew)
        a = [Fraction(0)] * R
        b = [Fraction(0)] * R
        cw = (Di @ Wi) if eps else None
        for r in np.flatnonzero(call.counts).tolist():
            a[r] = one_m * _frac(wy[r], ew) + sm * sum_w
            br = one_m * _frac(wy[r] * dy[r], ew + e)
            if eps:
                br += sm * _frac(cw[r], ew + e)
            b[r] = br
        sign = np.broadcast_to(sw if eps else 0.0, X.shape).copy()
        sign[rows, y] = sw[y]
    else:
        Ti, et = _ints(call.T)
        tw = Ti @ Wi
        tdw = (Ti * Di) @ Wi
        dw = Di @ Wi if eps else None
        sum_w = _frac(sum(Wi.tolist()), ew)
        a, b = [], []
        for r in range(R):
            ar = one_m * _frac(tw[r], et + ew) + sm * sum_w
            br = one_m * _frac(tdw[r], et + e + ew)
            if eps:
                br += sm * _frac(dw[r], e + ew)
            a.append(ar)
            b.append(br)
        # sign of w_c ((1 - eps) t + eps / C) where it matters
        sign = np.zeros(X.shape)
        for r, c in zip(*np.nonzero(at_inf), strict=True):
            v = Fraction(float(w[c])) * (one_m * Fraction(float(call.T[r, c])) + sm)
            sign[r, c] = (v > 0) - (v < 0)
    counted = call.counts[:, None]
    pos = (at_inf & (sign > 0) & counted).any(axis=1)
    neg = (at_inf & (sign < 0) & counted).any(axis=1)
    return a, b, pos, neg


def _denominator(call: _Call) -> Fraction:
    """The mean's divisor: the weights of the counted targets (their number without weights);
    the number of samples and positions for probabilities."""
    if call.T is not None:
        return Fraction(call.R)
    if call.w is None:
        return Fraction(int(np.count_nonzero(call.counts)))
    return sum((Fraction(float(v)) for v in call.w[call.y[call.counts]]), Fraction(0))


# ------------------------------------------------------------------------------- the op
def cross_entropy(input, target, weight=None, ignore_index=-100, reduction=_MEAN,
                  label_smoothing=0.0, *, dtype=None, rounding=_NE, overflow=None, compute=None,
                  accuracy=None, exp_accuracy=None, log_accuracy=None, order="library",
                  specials="limits", policy="torch"):
    """The cross-entropy loss of logits ``input`` ((C,), (N, C) or (N, C, d1, ...)) against
    ``target``: class indices (integers of the input's shape without C) or class probabilities
    (floats of the input's shape), as torch.nn.functional.cross_entropy; each output the exact
    value rounded once into the input's format (or ``dtype``).

    ``weight`` (C,) weighs the classes; targets equal to ``ignore_index`` count for nothing;
    ``label_smoothing`` mixes the target with the uniform distribution; ``reduction`` is
    ``"none"`` (a loss per sample), ``"sum"``, or ``"mean"`` (divided by the counted targets'
    weights; by ``N * d1 * ...`` for probabilities). The tolerance covers PyTorch's algorithm
    (log_softmax, then the products and sums) computed in ``compute`` (default: float32 for
    the half formats), the exponential and logarithm within ``exp_accuracy`` and
    ``log_accuracy`` (or ``accuracy``; default correctly rounded), every sum in ``order`` (the
    long sums' grammar; default ``"library"``: the mainstream libraries' orders, PyTorch's
    nll_loss cascade included). ``specials``: ``"limits"`` (the exact value's limit, the
    default) or ``"formula"`` (the log-softmax's max-subtracted formula in IEEE arithmetic:
    a counted sample whose logits hold NaN or ``+inf``, or are all ``-inf``, has a NaN loss,
    and so has a reduction over it; an ignored sample is skipped, as nll_loss skips it).

    >>> import exactref as er
    >>> x = er.asarray([[2.0, 0.5, -1.0], [0.0, 0.0, 0.0]], "float32")
    >>> er.cross_entropy(x, er.asarray([0, 2], "int64"), reduction="none").rounded.tolist()
    [0.24131129682064056, 1.0986123085021973]
    >>> er.cross_entropy(x, er.asarray([0, 2], "int64")).rounded.tolist()
    0.6699618101119995
    >>> er.cross_entropy(x, er.asarray([0, -100], "int64"), label_smoothing=0.1).rounded.tolist()
    0.39131128787994385
    """
    row_policy("cross_entropy", policy)
    return _run(input, target, weight, ignore_index, reduction, label_smoothing, rounding,
                overflow, compute, accuracy, exp_accuracy, log_accuracy, order, dtype=dtype,
                specials=specials)


def _run(input, target, weight, ignore_index, reduction, label_smoothing, rounding, overflow,
         compute, accuracy, exp_accuracy, log_accuracy, order, stored=None, lsm_steps=(),
         nll_order=None, nll_accumulate=None, dtype=None, specials="limits"):
    """The op with PyTorch's private freedoms (the equivalents'): ``stored`` the format the
    log-softmax, products and partial results are stored in (None: the compute format),
    ``lsm_steps`` the log-softmax's steps stored there (its own, :func:`._softmax._model_ends`),
    ``nll_order`` the order of the nll's sum over the samples (``"cascade"``: torch's
    ``nll_loss`` levels), ``nll_accumulate`` the format that sum and the weights' accumulate
    in (None: the compute format); ``dtype`` the output format (default the input's)."""
    call = _parse(input, target, weight, ignore_index, reduction, label_smoothing)
    _sm.check_specials("cross_entropy", specials)
    mode = resolve_rounding(rounding)
    inp = call.out
    out = _output_format("cross_entropy", inp, dtype)
    rule = resolve_overflow(overflow, out)
    try:
        order = parse_order(order)
        if nll_order not in ("cascade", None):
            nll_order = parse_order(nll_order)
    except ValueError:
        raise ValueError(f"order={order!r}: the cross_entropy model bounds its sums in one "
                         f"of the long sums' orders; expected {ORDER_GRAMMAR}") from None
    # the log-softmax over the classes: the last dim of (N, C), not of (N, C, d1, ...)
    # (PyTorch sums the latter in sequence along C: the softmax model's "library")
    order = _sm.row_order(order, len(call.shape) <= 1)
    c = _compute_for("cross_entropy", inp, out, compute, dtype)
    ea, la = _sm._accuracies(accuracy, exp_accuracy, log_accuracy, c, True)
    m, kind = row_maxima(call.X)
    a, b, pos, neg = _coefficients(call, kind, m)
    R = call.R
    if call.reduction == _NONE:
        n_out, owner, Ds, shape = R, np.arange(R), [Fraction(1)] * R, call.shape
    else:
        n_out, owner, shape = 1, np.zeros(R, np.int64), ()
        Ds = [_denominator(call) if call.reduction == _MEAN else Fraction(1)]
    bits = max(out.precision, c.precision)
    rows = LossRows(call.X, a, b, call.counts, pos, neg, owner, Ds)
    exact = evaluate_losses(rows, n_out, bits)
    vals = exact.round(out.component, mode, rule)[0]
    formula = np.zeros(n_out, bool)  # the outputs the formula makes NaN (docs/cross_entropy.md)
    if specials == "formula":
        bad = _sm.formula_nan_rows(call.X) & np.asarray(call.counts, bool)
        formula = bad if call.reduction == _NONE else np.array([bool(bad.any())])
        vals = np.where(formula, np.nan, np.asarray(vals, dtype=np.float64))
    rounded = to_array([np.asarray(vals).reshape(shape)], out, shape)
    h = c if stored is None else resolve_dtype(stored)
    acc = c if nll_accumulate is None else resolve_dtype(nll_accumulate)
    spec = _ModelSpec(c=c, h=h, acc=acc, ea=ea, la=la, order=order,
                      nll_order=order if nll_order is None else nll_order, mode=mode,
                      rule=rule, out=out, steps=tuple(lsm_steps), in_prec=inp.precision)

    def bounds():
        lo, hi, nan = _model_ends(call, spec, exact, kind, bits)
        if formula.any():
            lo, hi = np.where(formula, np.nan, lo), np.where(formula, np.nan, hi)
            nan = np.where(formula, True, nan)
        return [(lo.reshape(shape), hi.reshape(shape), nan.reshape(shape))]

    target_kind = "class indices" if call.T is None else "class probabilities"
    described = (f"log_softmax in {c.name} (exp within {ea.label}, log within {la.label}) "
                 f"stored in {h.name}, {target_kind}, sums in {order} order")
    if acc is not c or spec.nll_order != order:
        described += f", nll summed in {spec.nll_order} order in {acc.name}"
    models = [f"exact value rounded once into {out.name}",
              f"{described}, then rounded into {out.name}"]
    details = {"rounding": mode, "overflow": rule, "compute": c, "order": order,
               "reduction": call.reduction, "label_smoothing": float(call.eps),
               "exp_accuracy": ea.name, "log_accuracy": la.name, "order_declared": True,
               "specials": specials}
    result = BoundResult(rounded, bounds, op="cross_entropy", models=models, details=details)
    result.inputs = {"input": call.x}
    return result


# ------------------------------------------------------------------------------ the model
@dataclass(frozen=True)
class _ModelSpec:
    c: Format
    h: Format
    acc: Format
    ea: object
    la: object
    order: str
    nll_order: str
    mode: Rounding
    rule: str
    out: Format
    steps: tuple
    in_prec: int


class _Shim:
    """The log-softmax values of the special rows, as :func:`._softmax._model_ends` reads its
    ``exact`` argument (``.round(...)[0]``)."""

    def __init__(self, values):
        self.values = values

    def round(self, *args):
        return [self.values]


def _lsm_specials(X, kind):
    """Per element, the exact log-softmax of the special rows (0 elsewhere): NaN rows, and
    ``+0`` at the one ``+inf`` entry, ``-inf`` elsewhere."""
    v = np.zeros(X.shape)
    v[kind == 2] = np.nan
    one = kind == 1
    v[one] = np.where(X[one] == np.inf, 0.0, -np.inf)
    return v.reshape(-1)


def _depth(order, n):
    """The most roundings a term of a sum of ``n`` terms meets: ``n - 1`` in any order,
    ``ceil(log2 n)`` in a tree; ``"cascade"``: PyTorch's nll_loss, 8 levels of partial sums
    of 16 (``16 L + 8``, ``L`` the levels used), and never more than ``n - 1``."""
    n = max(int(n), 1)
    if order == "pairwise":
        return math.ceil(math.log2(n)) if n > 1 else 0
    if order in ("cascade", "library"):
        levels = min(8, math.ceil(math.log2(n) / 4) + 1) if n > 1 else 1
        cascade = min(n - 1, 16 * levels + 8)
        if order == "cascade":
            return cascade
        # "library": the long sums' (NumPy, torch's sum and mean, CUDA, Triton) and torch's
        # nll_loss cascade
        return max(cascade, parse_order("library").depth(n))
    if order in ("any", "sequential"):
        return n - 1
    return parse_order(order).depth(n)


class _Band:
    """Float64 intervals of the modelled implementation's values, each operation bounded
    outward and its ends rounded into the formats it is computed and stored in (rounding is
    monotone, so the ends bound every value); ``nan`` where NaN is possible."""

    def __init__(self, spec: _ModelSpec):
        self.s = spec
        self.nan = False

    def unit(self, fmt: Format) -> float:
        p = fmt.precision
        return 2.0 ** -p if self.s.mode.is_nearest else 2.0 ** (1 - p)

    def store(self, lo, hi, into: Format | None = None):
        """An operation computed in ``c``, its result stored in ``into`` (default ``h``)."""
        into = self.s.h if into is None else into
        nan = np.zeros(np.shape(lo), bool)
        lo = _chain(np.asarray(lo, dtype=np.float64), self.s.c, into.component, self.s.mode,
                    self.s.mode, nan, -np.inf)
        hi = _chain(np.asarray(hi, dtype=np.float64), self.s.c, into.component, self.s.mode,
                    self.s.mode, nan, np.inf)
        self.nan = self.nan | bool(nan.any())
        return lo, hi

    @staticmethod
    def mul(alo, ahi, blo, bhi):
        """``[alo, ahi] * [blo, bhi]`` outward (0 * anything finite is 0)."""
        with np.errstate(over="ignore", invalid="ignore"):
            ps = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
            lo = down(np.minimum.reduce(ps))
            hi = up(np.maximum.reduce(ps))
        exact_zero = ((alo == 0) & (ahi == 0)) | ((blo == 0) & (bhi == 0))
        return np.where(exact_zero, 0.0, lo), np.where(exact_zero, 0.0, hi)

    def scalar(self, q: Fraction):
        """A double constant of PyTorch's (``1 - eps``, ``eps / C``) as the kernel reads it:
        the double rounded into ``c``: within ``2**-52 + 2 u`` of the exact ``q``."""
        v = float(q)
        w = abs(v) * (2.0 ** -52 + 2 * self.unit(self.s.c)) + 1e-300
        return down(v - w), up(v + w)

    def sum(self, lo, hi, axis, order, into=None, acc=None):
        """A sum along ``axis`` accumulated in ``acc`` (default ``c``) in ``order``, stored in
        ``into`` (default ``h``): ``|s - sum| <= gamma_depth sum |v|``."""
        acc = self.s.c if acc is None else acc
        n = np.shape(lo)[axis] if np.ndim(lo) else 1
        u = self.unit(acc)
        if acc is not self.s.c:  # scalar_t arithmetic: computed in c, rounded into acc
            uc = self.unit(self.s.c)
            u = compose_up(u, uc)  # (1 + u)(1 + uc) - 1, without forming 1 + u
        slack = (n + 2) * 2.0 ** -52
        with np.errstate(over="ignore", invalid="ignore"):
            size = np.maximum(np.abs(lo), np.abs(hi))
            mag = size.sum(axis=axis) * (1 + slack)
            slo = lo.sum(axis=axis)
            shi = hi.sum(axis=axis)
            slo = down(slo - up(mag * slack))
            shi = up(shi + up(mag * slack))
            if order == "sequential" and n > 1:  # term i meets n - i roundings (i >= 1)
                depth = np.concatenate([[n - 1], n - np.arange(1, n)])
                g = up(gamma_up(depth, u)).reshape([-1 if k == axis % size.ndim else 1
                                                   for k in range(size.ndim)])
                err = up(up(size * g).sum(axis=axis) * (1 + slack))
            else:
                err = up(mag * float(up(gamma_up(_depth(order, n), u))))
            slo, shi = down(slo - err), up(shi + err)
        zero = mag == 0  # every term exactly 0: the sum is 0 in any order
        return self.store(np.where(zero, 0.0, slo), np.where(zero, 0.0, shi), into)

    def div(self, alo, ahi, blo, bhi):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            ok = (blo > 0) | (bhi < 0)
            qs = [alo / blo, alo / bhi, ahi / blo, ahi / bhi]
            zero = ok & (alo == 0) & (ahi == 0)  # 0 / d is 0 exactly
            lo = np.where(zero, 0.0, np.where(ok, down(np.minimum.reduce(qs)), -np.inf))
            hi = np.where(zero, 0.0, np.where(ok, up(np.maximum.reduce(qs)), np.inf))
        if not np.all(ok):
            self.nan = True
        return self.store(lo, hi)

    def add(self, alo, ahi, blo, bhi):
        with np.errstate(over="ignore", invalid="ignore"):
            return self.store(down(alo + blo), up(ahi + bhi))


def _lsm_ends(call: _Call, spec: _ModelSpec, kind, bits):
    """Per element ``(R, C)``, the log-softmax model's ends stored in ``h`` (non-finite ends
    set to 0: they only reach outputs whose exact value is NaN or infinite, or meet a
    coefficient of 0)."""
    X = call.X
    exact_lse, rexps = evaluate_rows(X, "logsumexp", bits, want_exps=True)
    del exact_lse
    shim = _Shim(_lsm_specials(X, kind))
    stored = spec.h if spec.steps else None
    lo, hi, _ = _sm._model_ends("log_softmax", X, rexps, shim, spec.c, spec.ea, spec.la,
                                spec.order, spec.h, spec.mode, spec.rule, spec.in_prec,
                                None, stored, spec.steps)
    lo = lo.reshape(X.shape)
    hi = hi.reshape(X.shape)
    # a row with one finite entry: t = 0, EXP(0) = 1, s = 1 + 0 + ... = 1, LOG(1) = 0: the
    # entry's log-softmax is exactly 0 in every implementation (the softmax model's sum
    # keeps a float64 slack there)
    fin = np.isfinite(X)
    one = (kind == 0)[:, None] & fin & (fin.sum(axis=1) == 1)[:, None]
    lo = np.where(one, 0.0, lo)
    hi = np.where(one, 0.0, hi)
    ok = np.isfinite(lo) & np.isfinite(hi)
    return np.where(ok, lo, 0.0), np.where(ok, hi, 0.0)


def _model_ends(call: _Call, spec: _ModelSpec, exact, kind, bits):
    """``(lo, hi, nan)`` flat float64 arrays per output: the modelled implementations'
    outputs (docs/cross_entropy.md, "The tolerance model")."""
    R, C = call.R, call.C
    B = _Band(spec)
    if R:
        llo, lhi = _lsm_ends(call, spec, kind, bits)
    else:
        llo = lhi = np.zeros((0, C))
    cnt = call.counts
    w = call.w
    eps = call.eps
    if call.T is None:
        rows = np.arange(R)
        y = call.y
        # the nll's term per sample: -lsm[y] * w[y] (exact negation without weights)
        plo, phi = -lhi[rows, y], -llo[rows, y]
        if w is not None:
            wy = w[y]
            plo, phi = B.store(*B.mul(plo, phi, wy, wy))
        plo, phi = np.where(cnt, plo, 0.0), np.where(cnt, phi, 0.0)
        n_cnt = int(np.count_nonzero(cnt))
        if eps:
            if w is None:
                qlo, qhi = -lhi, -llo
            else:
                qlo, qhi = B.store(*B.mul(-lhi, -llo, w[None, :], w[None, :]))
            slo, shi = B.sum(qlo, qhi, 1, spec.order)
            slo, shi = np.where(cnt, slo, 0.0), np.where(cnt, shi, 0.0)
            k1, k2 = B.scalar(1 - eps), B.scalar(eps / C)
        if call.reduction == _NONE:
            vlo, vhi = plo, phi
            if eps:
                alo, ahi = B.store(*B.mul(plo, phi, *k1))
                blo, bhi = B.store(*B.mul(slo, shi, *k2))
                vlo, vhi = B.add(alo, ahi, blo, bhi)
        else:
            nlo, nhi = B.sum(plo[cnt], phi[cnt], 0, spec.nll_order, acc=spec.acc)
            if call.reduction == _MEAN:
                if w is None:
                    dlo = dhi = _round(np.float64(n_cnt), spec.h, spec.mode)
                else:
                    wc = w[y[cnt]]
                    dlo, dhi = B.sum(wc, wc, 0, spec.nll_order, acc=spec.acc)
                nlo, nhi = B.div(nlo, nhi, dlo, dhi)
            vlo, vhi = nlo, nhi
            if eps:
                mlo, mhi = B.sum(slo[cnt], shi[cnt], 0, spec.order)
                if call.reduction == _MEAN:
                    if w is None:  # torch: a bool mask's count, converted to the dtype
                        clo = chi = _round(np.float64(n_cnt), spec.h, spec.mode)
                    else:
                        wc = w[y[cnt]]
                        clo, chi = B.sum(wc, wc, 0, spec.order)
                    mlo, mhi = B.div(mlo, mhi, clo, chi)
                alo, ahi = B.store(*B.mul(nlo, nhi, *k1))
                blo, bhi = B.store(*B.mul(mlo, mhi, *k2))
                vlo, vhi = B.add(alo, ahi, blo, bhi)
    else:
        tlo = thi = call.T
        if eps:
            k1, k2 = B.scalar(1 - eps), B.scalar(eps / C)
            tlo, thi = B.store(*B.mul(tlo, thi, *k1))
            tlo, thi = B.add(tlo, thi, *k2)
        qlo, qhi = B.store(*B.mul(llo, lhi, tlo, thi))
        if w is not None:
            qlo, qhi = B.store(*B.mul(qlo, qhi, w[None, :], w[None, :]))
        if call.reduction == _NONE:
            slo, shi = B.sum(qlo, qhi, 1, spec.order)
            vlo, vhi = -shi, -slo
        else:
            slo, shi = B.sum(qlo.reshape(-1), qhi.reshape(-1), 0, spec.order)
            vlo, vhi = -shi, -slo
            if call.reduction == _MEAN:
                d = _round(np.float64(R), spec.c, spec.mode)
                vlo, vhi = B.div(vlo, vhi, d, d)
    vlo = np.atleast_1d(np.asarray(vlo, dtype=np.float64)).reshape(-1)
    vhi = np.atleast_1d(np.asarray(vhi, dtype=np.float64)).reshape(-1)
    nan = np.full(vlo.shape, B.nan)
    comp = spec.out.component
    lo = _chain(vlo, spec.h, comp, spec.mode, spec.mode, nan, -np.inf, spec.rule)
    hi = _chain(vhi, spec.h, comp, spec.mode, spec.mode, nan, np.inf, spec.rule)
    # outputs whose exact value is NaN or infinite: that value (the rows' specials)
    ex = exact.round(F64, _NE, "ieee")[0].reshape(-1)
    special = ~np.isfinite(ex)
    lo = np.where(special, ex, lo)
    hi = np.where(special, ex, hi)
    nan = np.where(special, np.isnan(ex), nan)
    return lo, hi, nan


# ----------------------------------------------------------------------------- registry
def _register() -> None:
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register

    cross_entropy.spec = register(OpSpec(
        name="cross_entropy", operands=("input", "target", "weight"), kernel="row exponential",
        promotion="mul", function=cross_entropy,
        summary="-sum(w * target * log_softmax(input)) per sample, reduced; rounded once",
        params=(Param("ignore_index", -100), Param("reduction", _MEAN),
                Param("label_smoothing", 0.0)),
        optional=("weight",),
        models=("exact", "log_softmax then nll_loss: exp/log within k ulps, sums in any "
                         "order"),
        # torch 2.13's CPU kernel (equivalents.torch reads it): log_softmax's exponential and
        # logarithm, the steps its lastdim kernel stores in the half formats, nll_loss's
        # cascade of sums
        counterparts=Counterparts(Counterpart(
            "torch.nn.functional.cross_entropy", contract={"order": "any"},
            data=dict(exp="sleef_u10", log="glibc", nll_order="cascade",
                      stored_steps={"lastdim": ("s", "l"), "other": ()})), None, None),
        kinds=("float",), family="losses",
        # the audit's groups (exactref.audit's "classes" builder): logits' shape, flavor,
        # weighted, class probabilities as targets, params; the result in the logits' format
        audit=AuditPlan(groups="classes", result="logits", data={"min_bits": 16, "cases": (
            ((256, 10), "random", False, False, {}),
            ((4096, 10), "random", False, False, {}),
            ((64, 10), "random", True, False, {"reduction": _SUM}),
            ((64, 4000), "random", False, False, {"label_smoothing": 0.1}),
            ((32, 100), "random", True, True, {"label_smoothing": 0.1}),
            ((4, 5, 8, 8), "random", False, False, {"reduction": _NONE}),
            ((64, 32), "huge", False, False, {"reduction": _NONE}),
            ((64, 32), "equal", False, False, {}),
            ((64, 32), "masked", False, False, {"reduction": _NONE}),
            ((64, 32), "masked", True, False, {"label_smoothing": 0.1}),
            ((16, 1), "random", False, False, {}))})))


_register()
