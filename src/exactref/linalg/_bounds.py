"""Tolerance of long sums: rigorous per-element bounds from the exact sum of ``|terms|``.

A long sum's implementations differ in the accumulator (compute) format, the summation order
and whether products are fused. Enumerating them is impossible, so the tolerance is a bound
that holds for every one of them (Higham, *Accuracy and Stability of Numerical Algorithms*,
ch. 3-4): with unit roundoff ``u`` of the compute format and a term that passes through ``d``
roundings of the accumulator, ``|computed - exact| <= sum_l ((1 + d_p)(1 + gamma_{d_l}) - 1)
|t_l|`` where ``gamma_n = n u / (1 - n u)`` and ``d_p`` is the rounding of the product in its own
format (0 when fused). ``d_l`` is the order's depth (:mod:`._orders`: ``k - 1`` in any order,
``ceil(log2 k)`` for pairwise sums, ``k - max(l, 2) + 1`` for the sequential order, the cited
libraries' most for the default ``"library"``), one more when fused. Each rounding that lands in
the subnormal range adds at most half the smallest subnormal.

The bound gives an interval ``[x - b, x + b]`` around the exact value ``x``; the computed sum is a
number ``R_c(y)`` for some ``y`` within the bound of everything but the last rounding, and the
output is that number rounded into the output format, so the covered outputs are
``[R_out(R_c(x - b)), R_out(R_c(x + b))]`` with ``b`` the bound without the last rounding.
"""

from __future__ import annotations

import numpy as np

from .._array import asarray
from .._exact import ExactArray, Rounding, gamma_up, slack_up, up
from .._formats import FORMATS, Format
from .._result import Result
from ._orders import ORDER_GRAMMAR, ORDER_NAMES, Order, parse_order

__all__ = ["SumModel", "BoundResult", "ExactResult", "interval", "abs_sum_products",
           "abs_rowsum", "scaled_bound", "nonzero_terms", "overflow_ends", "coefficients",
           "WEAK_ULPS", "WEAK_CANCELLATION", "DEFAULT_ORDER", "ORDERS", "Order", "parse_order",
           "ORDER_GRAMMAR"]

F64 = FORMATS["float64"]
#: the default rounding mode of every linalg op (``rounding=_NE``)
_NE = Rounding.NEAREST_EVEN
#: the plain order names; the parameterised ones ("blocked(b)", "split_k(s)", "tree(f)") are
#: parsed by :func:`parse_order`
ORDERS = ORDER_NAMES


class _DefaultOrder(Order):
    """The default ``order="library"`` of the long sums, told apart from an ``order="library"``
    the caller declared (by identity): a weak check warns only where the order was not
    declared."""

    __slots__ = ()


#: the long sums' default order: "library" (the orders real libraries use), not declared
DEFAULT_ORDER = _DefaultOrder("library")


class _DefaultStrided(_DefaultOrder):
    """The default order of a reduction over axes that are not the fast ones of a C-ordered
    array: the libraries' orders, and NumPy's strided reductions (``np.sum(x, axis=0)``), which
    add the rows in sequence. Per term the larger of the two depths."""

    __slots__ = ()

    @property
    def positional(self) -> bool:
        return True

    def depth(self, k: int, products: bool = False) -> int:
        return max(int(k) - 1, 0)

    def depths(self, k: int, products: bool = False) -> np.ndarray:
        seq = Order("sequential").depths(k)
        return np.maximum(seq, Order.depth(self, k, products))


DEFAULT_STRIDED = _DefaultStrided("library")


def is_default_order(order) -> bool:
    """Whether ``order`` is a default (not declared by the caller)."""
    return isinstance(order, _DefaultOrder)


def order_for_axes(order, axes, shape):
    """The default order of a reduction of ``shape`` over ``axes``: :data:`DEFAULT_STRIDED`
    where some kept axis of size above 1 follows a reduced one of size above 1 (the reduced
    elements are strided in a C-ordered array), else ``order`` as it is."""
    if order is not DEFAULT_ORDER:
        return order
    big = [d for d in range(len(shape)) if shape[d] > 1]
    red = [d for d in big if d in axes]
    kept = [d for d in big if d not in axes]
    return DEFAULT_STRIDED if red and kept and max(kept) > min(red) else order
#: A check is weak (:class:`exactref.WeakCheckWarning`) when, for most elements,
#: the tolerance is at least this many ulps of the output format...
WEAK_ULPS = 1024
#: ...and the sum of |terms| is at least this many times |sum| (a large cancellation).
WEAK_CANCELLATION = 16


class SumModel:
    """The declared freedom of a long-sum implementation.

    ``compute``: the accumulator format. ``order``: an accumulation order of
    :data:`ORDER_GRAMMAR` (:func:`parse_order`): ``"library"`` (the default: the orders NumPy,
    PyTorch and Triton use; ``k - 1`` for sums of products), ``"any"`` (any order, any tree),
    ``"pairwise"``, ``"sequential"``, ``"blocked(b)"``, ``"split_k(s)"``, ``"tree(f)"``.
    ``fused``: True (each product enters an FMA, rounded once with the sum), False (products
    rounded first, in ``products``), None (either). ``products``: the format products are
    rounded into when not fused (default: ``compute``).
    """

    def __init__(self, compute: Format, order: str = DEFAULT_ORDER, fused=None, products=None,
                 mode: Rounding = Rounding.NEAREST_EVEN, flush_outputs: bool = False):
        self.compute = compute
        self.order = parse_order(order)
        #: FTZ: each rounding may flush a result below the smallest normal to zero
        self.flush_outputs = bool(flush_outputs)
        self.fused = fused
        self.products = products or compute
        self.mode = mode

    @property
    def eta(self) -> float:
        """What underflow takes from one rounding of the accumulator, at most: half a
        subnormal quantum (counted as one), or the smallest normal where results may be flushed
        to zero (``flush_outputs``; docs: exactref.linalg._flush)."""
        c = self.compute
        return c.smallest_normal if self.flush_outputs else c.smallest_subnormal

    @property
    def products_eta(self) -> float:
        """:attr:`eta` of the products' format."""
        p = self.products
        return p.smallest_normal if self.flush_outputs else p.smallest_subnormal

    def unit(self, fmt: Format) -> float:
        p = fmt.component.precision
        return 2.0 ** -p if self.mode.is_nearest else 2.0 ** (1 - p)

    def describe(self, products: bool = True) -> str:
        """How the model accumulates, as in "accumulated <this>" (``products``: whether the
        terms are products, whose fusing the model declares)."""
        head = f"in {self.compute.name}, {self.order} order"
        if not products:
            return head
        fused = {True: "fused", False: f"products rounded in {self.products.name}",
                 None: f"fused or products rounded in {self.products.name}"}[self.fused]
        return f"{head}, {fused}"


def coefficients(model: SumModel, k: int, with_products: bool = True,
                 product_bits: int | None = None, term_bits: int | None = None):
    """Per term (length ``k``, or a scalar where every term has the same): the relative bound
    ``(1 + d_p)(1 + gamma_{d - 1}) - 1`` of the model on the exact sum ``y`` the *last* rounding
    of the accumulator sees (the worse of fused and unfused when ``fused`` is None). The last
    rounding is shared by every term, so it is applied to the interval's ends instead: the
    computed sum is ``R_c(y)`` with ``|y - x| <= sum coef_l |t_l|``. ``product_bits``: the
    significand bits a product of two inputs can need; where the products' format holds them,
    products are exact. ``term_bits``: for sums without products, the terms' significand bits.
    A term (a rounded product, or an input) wider than the accumulator is rounded once more
    when it enters it: one more rounding for every term, the first included."""
    u = model.unit(model.compute)
    up = model.unit(model.products) if with_products else 0.0
    if product_bits is not None and product_bits <= model.products.component.precision:
        up = 0.0  # the products are exact in their format (bfloat16 products in float32)
    pc = model.compute.component.precision
    variants = []
    for fused in ((True, False) if model.fused is None else (model.fused,)):
        if not with_products:
            fused = False  # no products: nothing to fuse, nothing rounded before the sum
        dp = 0.0 if fused else up
        extra = 1 if fused and with_products else 0
        if not with_products:
            width = term_bits
        elif fused:
            width = None  # the FMA adds the exact product: one rounding, counted above
        else:
            pp = model.products.component.precision
            width = pp if product_bits is None else min(pp, product_bits)
        entry = 1 if width is not None and width > pc else 0
        order = model.order
        if order.positional:
            d = order.depths(k, products=with_products) + extra
        else:
            d = order.depth(k, products=with_products) + extra
        # the last rounding is applied on the interval's ends (for a single term that is its
        # entry into the accumulator)
        d = np.maximum(np.asarray(d) + entry - 1, 0)
        # (1 + d_p)(1 + gamma) - 1 as d_p + gamma + d_p gamma: in float64, 1 + 2**-53 is 1
        g = gamma_up(d, u)
        with np.errstate(invalid="ignore"):
            variants.append(np.where(np.isinf(g), np.inf, slack_up(dp + g + dp * g, 3)))
    out = variants[0]
    for v in variants[1:]:
        out = np.maximum(out, v)
    return out


def abs_sum_products(A, B, weights=None):
    """An upper bound of ``sum_l w_l |A_il| |B_lj|`` for float64 ``A (..., m, k)``, ``B (..., k,
    n)`` (finite): one float64 GEMM on operands scaled by their row and column maxima, inflated
    for its own rounding, then scaled back (overflow gives inf, which is sound)."""
    A = np.abs(np.where(np.isfinite(A), A, 0.0))
    B = np.abs(np.where(np.isfinite(B), B, 0.0))
    k = A.shape[-1]
    hit = None
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        unbounded = np.isinf(weights)
        if unbounded.any():  # no bound for those terms where they are nonzero
            hit = np.matmul((A[..., unbounded] != 0).astype(np.float64),
                            (B[..., unbounded, :] != 0).astype(np.float64)) > 0
            weights = np.where(unbounded, 0.0, weights)
    _, ea = np.frexp(A.max(axis=-1, keepdims=True) if k else np.zeros(A.shape[:-1] + (1,)))
    _, eb = np.frexp(B.max(axis=-2, keepdims=True) if k else np.zeros((1,) + B.shape[-1:]))
    As = np.ldexp(A, -ea)
    wmax = 1.0
    if weights is not None:
        As = As * np.asarray(weights, dtype=np.float64)
        wmax = max(float(np.max(weights, initial=0.0)), 1.0)
    Bs = np.ldexp(B, -eb)
    T = np.matmul(As, Bs)
    # the GEMM's own rounding (k terms, nonnegative) and what underflow takes from a term in
    # scaled units (|As|, |Bs| <= 1): below 2**-1074 from each of As (times its weight), Bs
    # and their product
    T = up(T * (1 + (k + 2) * 2.0**-52) + k * (2 + wmax) * 2.0**-1074)
    with np.errstate(over="ignore"):
        T = up(np.ldexp(T, ea + eb))
    return T if hit is None else np.where(hit, np.inf, T)


def abs_rowsum(X, weights=None):
    """An upper bound of ``sum_l w_l |X_il|`` per row of float64 ``X (m, k)``."""
    X = np.abs(np.where(np.isfinite(X), X, 0.0))
    hit = None
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        unbounded = np.isinf(weights)
        if unbounded.any():  # no bound for those terms where they are nonzero
            hit = (X[..., unbounded] != 0).any(axis=-1)
            weights = np.where(unbounded, 0.0, weights)
        X = X * weights
    k = X.shape[-1]
    with np.errstate(over="ignore"):
        s = X.sum(axis=-1)
        s = slack_up(s, k + 2)
    return s if hit is None else np.where(hit, np.inf, s)


def nonzero_terms(A, B=None):
    """Per output element, whether any of its terms may be nonzero: for ``A (..., m, k)`` and
    ``B (..., k, n)``, whether some product ``A_il B_lj`` has two nonzero factors; for ``A``
    alone, ``(m, k)``, whether some ``A_il`` is nonzero (NaN and infinities count as nonzero).
    Where every term is an exact zero, every implementation computes an exact zero: no
    rounding, no underflow, nothing to allow."""
    if B is None:
        return (A != 0).any(axis=-1)
    # counts of nonzero products, in float32: a positive count never rounds to 0
    return np.matmul((A != 0).astype(np.float32), (B != 0).astype(np.float32)) > 0


def scaled_bound(coef, terms_sum):
    """``coef * terms_sum`` where an infinite coefficient (no bound) meets a zero sum of
    ``|terms|`` (every term zero: nothing to bound) gives 0, not NaN."""
    ts = np.asarray(terms_sum, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(ts == 0, 0.0, coef * ts)



def products_bound(A, B, weights, eta, nterms):
    """``(bound, terms_sum)`` of the sums of products ``A @ B`` (float64, finite parts): the
    bound on ``|y - x|`` from the per-term relative ``weights`` (a scalar scales the sum of
    ``|A_il| |B_lj|``, a vector weighs each term), plus ``2 * nterms * eta`` for underflow (a
    quantum per rounding), 0 where every product is an exact zero; ``terms_sum`` that sum of
    ``|terms|`` (:func:`abs_sum_products`)."""
    ts = abs_sum_products(A, B)
    if np.ndim(weights) == 0:
        b = scaled_bound(float(weights), ts)
    else:
        b = abs_sum_products(A, B, weights)
    b = b + 2 * nterms * eta
    # every product an exact zero: the sum is an exact zero in any order
    return np.where(nonzero_terms(A, B), b, 0.0), ts

def _round(values, fmt: Format, mode: Rounding, rule="ieee"):
    return asarray(np.asarray(values, dtype=np.float64), fmt.component, rounding=mode,
                   overflow=rule)._wide().astype(np.float64)


def interval(ex: ExactArray, bound, out: Format, model: SumModel, mode: Rounding,
             terms_sum, shape, rule: str = "ieee"):
    """``(lo, hi, nan, terms)`` float64 arrays of ``shape``: the outputs a modelled implementation may
    give, from the exact values ``ex``, the bound on ``|y - x|`` (``y`` the exact sum the last
    rounding sees; see :func:`coefficients`) and the exact-sum bound ``terms_sum`` (for the
    overflow of partial sums). The computed sum is ``R_c(y)``, the output ``R_out`` of that
    (with the overflow ``rule``); both roundings are monotone, so the ends of ``[x - b, x + b]``
    bound the outputs."""
    c = model.compute.component
    comp = out.component
    bound = np.asarray(bound, dtype=np.float64).reshape(-1)
    x_dn = ex.round(F64, Rounding.TOWARD_NEGATIVE, "ieee")[0]
    x_up = ex.round(F64, Rounding.TOWARD_POSITIVE, "ieee")[0]
    with np.errstate(over="ignore", invalid="ignore"):
        # a zero bound (every term an exact zero) is no subtraction: nothing to widen
        lo64 = np.where(bound == 0, x_dn, np.nextafter(x_dn - bound, -np.inf))
        hi64 = np.where(bound == 0, x_up, np.nextafter(x_up + bound, np.inf))
    imode = model.mode
    nan = np.zeros(lo64.shape, bool)
    lo = _chain(lo64, c, comp, imode, mode, nan, -np.inf, rule)
    hi = _chain(hi64, c, comp, imode, mode, nan, np.inf, rule)
    big = min(c.max_finite, model.products.component.max_finite)
    ts = np.asarray(terms_sum, dtype=np.float64).reshape(-1)
    lo, hi, nan = overflow_ends(lo, hi, nan, ts, big, comp, rule, bound)
    ref_special = (ex.special != 0) | np.isnan(ex.special)
    if ref_special.any():
        s = ex.special
        lo = np.where(ref_special, s, lo)
        hi = np.where(ref_special, s, hi)
        nan |= np.isnan(s)
    return lo.reshape(shape), hi.reshape(shape), nan.reshape(shape), ts.reshape(shape)


def overflow_ends(lo, hi, nan, terms_sum, big, comp: Format, rule, bound=0.0):
    """``(lo, hi, nan)`` where a partial sum may overflow (``terms_sum``, the sum of
    ``|terms|``, plus ``bound`` reaching ``big``, the accumulator's largest finite value):
    anything goes there (the output format's largest finite values under "saturate")."""
    with np.errstate(over="ignore", invalid="ignore"):
        blow = ~(terms_sum * 1.0000001 + bound <= big)
    far = comp.max_finite if rule == "saturate" else np.inf
    return np.where(blow, -far, lo), np.where(blow, far, hi), nan | blow


def _chain(v, c: Format, comp: Format, imode, mode, nan, inf, rule="ieee"):
    """``R_out(R_c(v))``, the output rounding with the overflow ``rule`` (an accumulator that
    overflowed saturates too under ``"saturate"``); an overflow that gives NaN (a format without
    infinities, or ``rule="nan"``) becomes ``inf`` (the side's infinity) and allows NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(v)
        w = np.where(finite, v, 0.0)
        vc = np.where(finite, _round(w, c, imode), v)
        bad = np.isnan(vc)
        vc = np.where(bad, inf, vc)
        fin2 = np.isfinite(vc)
        vo = np.where(fin2, _round(np.where(fin2, vc, 0.0), comp, mode, rule), vc)
        if rule == "saturate":
            vo = np.clip(vo, -comp.max_finite, comp.max_finite)
        bad2 = np.isnan(vo)
        vo = np.where(bad2, inf, vo)
    nan |= bad | bad2
    if not comp.has_inf:
        nan |= np.isinf(vo)
    return vo


class BoundResult(Result):
    """A Result whose covered outputs are per-element intervals from a rigorous bound (long
    sums), computed when first needed. The sign of a zero is free (implementations start their
    sums from +0, or from the first term)."""

    def __init__(self, rounded, compute_bounds, *, op="", models=(), details=None):
        super().__init__(rounded, None, op=op, models=models, details=details)
        self._compute_bounds = compute_bounds
        self._cached = None
        self._terms = None

    def _bounds(self):
        if self._cached is None:
            parts = self._compute_bounds()
            out, terms = [], None
            # the reference is a declared implementation too (rounded once, in the output
            # format): with a compute format narrower than the output it may lie outside
            # the accumulated model's interval
            for part, ref in zip(parts, _parts(self.rounded), strict=True):
                lo, hi, nan = part[:3]
                if len(part) > 3:  # the sum of |terms| (an upper bound), for weak_check
                    t = np.asarray(part[3], dtype=np.float64)
                    terms = t if terms is None else np.maximum(terms, t)
                ref = ref.reshape(np.shape(lo))
                lo, hi = np.fmin(lo, ref), np.fmax(hi, ref)
                nan = nan | np.isnan(ref)
                no = np.zeros(np.shape(lo), bool)
                out.append((lo, hi, nan, no, no))
            self._cached, self._terms = out, terms
        return self._cached

    @property
    def terms_sum(self):
        """Per element, an upper bound of the sum of the magnitudes of its terms (products, or
        the values summed; complex: of both parts), or None where not recorded."""
        self._bounds()
        return self._terms

    def weak_median_ulps(self):
        """The median tolerance in ulps of the output format where, for most elements, it is
        at least :data:`WEAK_ULPS` (a weak check, whatever the cause), else None."""
        ulps = self.tolerance_ulps()
        weak = (ulps >= WEAK_ULPS) & np.isfinite(ulps)
        if 2 * np.count_nonzero(weak) <= weak.size:
            return None
        return float(np.median(ulps))

    def weak_check(self):
        """A sentence saying why a check against this Result proves little, or None.

        The check is weak when the order is the default (``"library"``: for the sums of
        products that is ``k - 1`` roundings a term, as ``"any"``; a caller who passes an order,
        ``order="any"`` included, declares that freedom: PyTorch's contract, say) and, for more
        than half of the elements, the tolerance is at least :data:`WEAK_ULPS` ulps of the
        output format *and* the sum of the magnitudes of the terms is at least
        :data:`WEAK_CANCELLATION` times the magnitude of the result (so at least 15/16 of the
        tolerance comes from that cancellation: without it, the bound would be 16 times
        smaller). The sentence says what ``order="pairwise"`` would give (its median, computed).
        """
        if self.details.get("order_declared", True) or self.rounded.size == 0:
            return None
        terms = self.terms_sum
        if terms is None:
            return None
        ulps = self.tolerance_ulps()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            size = np.abs(_parts(self.rounded)[0]).reshape(np.shape(terms))
            if self.rounded.dtype.kind == "complex":
                size = np.maximum(size, np.abs(_parts(self.rounded)[1]).reshape(size.shape))
            ratio = np.where(terms == 0, 1.0, terms / size)
        weak = (ulps >= WEAK_ULPS) & (ratio >= WEAK_CANCELLATION) & np.isfinite(ulps)
        if 2 * np.count_nonzero(weak) <= weak.size:  # weak where most elements are
            return None
        med = float(np.median(ulps))
        cancel = float(np.median(ratio))
        order = self.details.get("order", "library")
        k = self.details.get("k")
        depth = ""
        if k is not None and isinstance(order, Order):
            depth = (f": up to {order.depth(k, products=self.details.get('products', False))} "
                     f"roundings a term over k={k}")
        return (f"{self.op}: a weak check: the median tolerance is {med:.4g} ulp of "
                f"{self.rounded.dtype.name}, and the sum of |terms| is {cancel:.3g} times "
                f"|sum| at the median element (cancellation), with the default order "
                f"(order='library'{depth}). An output far from the exact value is covered. "
                f"Tighten it: declare the kernel's order ({self.tighter_text()}order="
                f"'sequential', 'blocked(b)', 'split_k(s)', ...) or its accumulator "
                f"(compute=...), use the library's equivalents (exactref.equivalents), or test "
                f"on inputs that do not cancel (docs/linalg.md, 'How strong is a check')")

    def tighter_text(self) -> str:
        """``"order='pairwise' gives median N ulps; "`` where the op recorded how to recompute
        itself under another order, else ``""``."""
        again = getattr(self, "_with_order", None)
        if again is None:
            return ""
        try:
            med = float(np.median(again("pairwise").tolerance_ulps()))
        except (ValueError, TypeError):  # an op that has no pairwise model
            return ""
        return f"order='pairwise' gives median {med:.4g} ulp; "


class ExactResult(Result):
    """A Result with no implementation freedom: the reference is the only covered output
    (integer sums, copies)."""

    def __init__(self, rounded, *, op="", models=("exact",), details=None):
        parts = _parts(rounded)
        super().__init__(rounded, [[p] for p in parts], op=op, models=models, details=details)


def _parts(arr):
    w = arr._wide()
    if arr.dtype.kind == "complex":
        return [w.real.astype(np.float64), w.imag.astype(np.float64)]
    return [w.astype(np.float64)]
