"""The rows of a reduction: axes, result formats, exact row integers and the tolerance pieces
that ``mean``, ``var``, ``std``, ``cumsum`` and ``sum`` share (and the normalizations and the
softmax family read: :func:`reduction_axes`, :func:`row_policy`).

A reduction reads its input once as rows ``(M, K)`` (:func:`_rows`), takes each row's exact
sum (and sum of squares) as Python integers at a power-of-two scale, and rounds the rationals
of those integers to odd at :data:`_ODD_BITS` bits; its tolerance brackets those values in
float64 (:func:`_bracket`), widens them by the long-sum bound (:func:`_sum_bound`) and rounds
the ends into the compute and output formats (:func:`_output`).
"""

from __future__ import annotations

import math

import numpy as np

from .._array import Array
from .._exact import ExactArray, Rounding, down, from_integers, int_rowsums, up
from .._formats import FORMATS, Format
from .._formats import dtype as resolve_dtype
from .._operands import compute_format, prepare
from ._bounds import (
    F64,
    SumModel,
    _chain,
    _round,
    abs_rowsum,
    coefficients,
    is_default_order,
    nonzero_terms,
    overflow_ends,
    parse_order,
    scaled_bound,
)

#: the normalizations' algorithms (layer_norm, group_norm): "two-pass" (the mean, then the sum
#: of squared deviations), "welford" (running mean and M2 updates, one element at a time, in
#: any order), "chan" (Welford states of parts merged by Chan's formula in any tree: GPU and
#: Triton reductions, threads), "any" (two-pass or welford: the union; name "chan" to add it)
ALGORITHMS = ("any", "two-pass", "welford", "chan")
#: var's and std's algorithms: "stable" (the default: two-pass, or Welford chains merged by
#: Chan's formula, each in the declared order: what NumPy, PyTorch and Triton run), "two-pass",
#: "welford" (one chain over the row), "chan" (Welford states merged in a tree of the order's
#: depth), "one-pass" (E[x**2] - E[x]**2 from one pass of sums: unstable, opt-in), "any" (every
#: one, one-pass included)
VAR_ALGORITHMS = ("stable", "two-pass", "welford", "chan", "one-pass", "any")
#: what "stable" and "any" stand for
STABLE_ALGORITHMS = ("two-pass", "chan")
ANY_ALGORITHMS = ("two-pass", "welford", "chan", "one-pass")


class _DefaultAlgorithm(str):
    """var's and std's default ``algorithm="stable"``, told apart (by identity) from a
    ``"stable"`` the caller declared."""

    __slots__ = ()


#: var's and std's default algorithm: "stable", not declared by the caller
DEFAULT_ALGORITHM = _DefaultAlgorithm("stable")
_ODD_BITS = 113  # round-to-odd width of the rational results (>= 53 + 2)


# --------------------------------------------------------------------------- dim / axis
def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _spelling(op, axis, dim, keepdims, keepdim):
    """One axis and one keepdims from the numpy (``axis``, ``keepdims``) and torch (``dim``,
    ``keepdim``) spellings: either may be given, both only when they agree."""
    def same(a, b):
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return tuple(a) == tuple(b)
        return type(a) is type(b) and a == b if not (_is_int(a) and _is_int(b)) else a == b

    if axis is not None and dim is not None and not same(axis, dim):
        raise ValueError(f"{op}: axis={axis!r} and dim={dim!r} disagree; they are the numpy "
                         f"and torch spellings of one argument: pass one of them")
    for name, v in (("keepdims", keepdims), ("keepdim", keepdim)):
        if v is not None and not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{op}: {name}={v!r}; expected True (keep each reduced dimension "
                             f"with size 1) or False")
    if keepdims is not None and keepdim is not None and bool(keepdims) != bool(keepdim):
        raise ValueError(f"{op}: keepdims={keepdims!r} and keepdim={keepdim!r} disagree; they "
                         f"are the numpy and torch spellings of one argument: pass one of them")
    if isinstance(dim, (tuple, list)) and len(dim) == 0 and axis is None:
        dim = None  # Note: torch reduces every dimension for dim=() (numpy's axis=(): none)
    ax = axis if axis is not None else dim
    kd = keepdims if keepdims is not None else keepdim
    return ax, bool(kd) if kd is not None else False


def axis_items(what: str, axis):
    """``axis`` (an integer or a tuple or list of them) as a sequence of integers; anything
    else raises a TypeError naming it as ``what`` (``"axis"``, ``"mean: dim/axis"``)."""
    items = (axis,) if _is_int(axis) else axis
    if not isinstance(items, (tuple, list)) or not all(_is_int(a) for a in items):
        raise TypeError(f"{what}={axis!r} ({type(axis).__name__}) is not an axis; expected an "
                        f"integer, a tuple of integers or None (every axis)")
    return items


def reduction_axes(op, axis, shape):
    """The axes ``axis`` names (None: every one; an int or a sequence of ints; ``()``: none, as
    numpy's ``axis=()``; torch's ``dim=()`` arrives here as None), each in ``[0, ndim)``. A
    0-d array takes axis 0 or -1 (as torch) and has nothing to reduce."""
    nd = len(shape)
    if axis is None:
        return tuple(range(nd))
    items = axis_items(f"{op}: dim/axis", axis)
    if len(items) == 0:
        return ()
    span = max(nd, 1)
    for a in items:
        if not -span <= int(a) < span:
            raise ValueError(f"{op}: dim/axis {int(a)} is out of range for an array of shape "
                             f"{tuple(shape)}: expected an axis in [-{span}, {span - 1}]; pass "
                             f"one of them, or None to reduce every dimension")
    axes = tuple(int(a) % span for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: dim/axis={axis!r} names an axis twice (shape "
                         f"{tuple(shape)}); name each axis once")
    return axes if nd else ()


def _rows(arr: Array, axes):
    """``(rows (M, K) of float64 data, out_shape, keepdims_shape, K)``."""
    nd = arr.ndim
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(arr.shape[d] for d in keep)
    kd_shape = tuple(1 if d in axes else arr.shape[d] for d in range(nd))
    K = int(np.prod([arr.shape[d] for d in axes], dtype=np.int64))
    M = int(np.prod(out_shape, dtype=np.int64))
    X = np.ascontiguousarray(np.transpose(native_data(arr), keep + list(axes))).reshape(M, K)
    return X, out_shape, kd_shape, K


def native_data(arr: Array) -> np.ndarray:
    """``arr``'s values in its own float dtype where numpy has one (float32 for bfloat16, whose
    values it holds exactly; float64 otherwise)."""
    data = np.asarray(arr.numpy())
    if data.dtype not in (np.float64, np.float32, np.float16):
        data = data.astype(np.float32 if arr.dtype.name == "bfloat16" else np.float64)
    return data


#: The policies whose reduction result formats are modelled (the default: torch).
REDUCTION_POLICIES = ("torch", "numpy")


def reduction_format(op, fmt: Format, policy, *, sums: bool) -> Format | None:
    """The result format of reduction ``op`` of an ``fmt`` input under ``policy``, when no
    ``dtype`` is named, or None for the input's own format; ``sums``: the reduction is a sum
    (sum, cumsum), not a mean (mean, var, std). torch: sum and cumsum of bool and
    integers give int64, mean, var and std need floats; numpy 2: sum and cumsum of bool and
    signed integers give int64, of unsigned ones uint64, mean, var and std of bool and integers
    float64. Another policy raises ValueError naming it."""
    if policy not in REDUCTION_POLICIES:
        raise ValueError(f"{op}: policy={policy!r} is not modelled for reductions; their result "
                         f"format follows {' or '.join(map(repr, REDUCTION_POLICIES))} "
                         f"(torch, the default); pass dtype= to name the result format")
    if not (fmt.is_integer or fmt.kind == "bool"):
        return None
    if sums:
        return FORMATS["uint64" if policy == "numpy" and fmt.kind == "uint" else "int64"]
    return FORMATS["float64"] if policy == "numpy" else None


def sum_format(op, fmt: Format, dtype, policy) -> Format:
    """The result format of a sum (``sum``, ``cumsum``) of an ``fmt`` input: ``dtype`` where
    named, else the policy's (:func:`reduction_format`: int64 for bool and integers under
    torch), else ``fmt``. The policy is checked either way."""
    implied = reduction_format(op, fmt, policy, sums=True)
    return resolve_dtype(dtype) if dtype is not None else implied or fmt


def row_policy(op, policy) -> None:
    """The row ops (softmax, log_softmax, logsumexp, the norms, cross_entropy, attention) take
    their result format from their input as torch does (float32 for integer inputs): ``policy``
    is "torch", any other is refused by name."""
    if policy != "torch":
        raise ValueError(f"{op}: policy={policy!r} is not modelled for {op}, whose result format "
                         f"is torch's (the input's format; float32 for an integer input, where "
                         f"it takes one); pass dtype= where {op} takes it, or leave policy out")


def grad_array(op, grad, shape) -> Array:
    """The output gradient of ``op``'s backward pass (``op`` names it, as ``"rms_norm"``) as an
    Array of the output's ``shape`` in a real float format; anything else raises: a ValueError
    for a scalar or another shape, a TypeError for another kind of format."""
    G = prepare(grad, "grad")
    if G.kind != "array" or tuple(G.array.shape) != tuple(shape):
        found = tuple(G.array.shape) if G.kind == "array" else "a scalar"
        raise ValueError(f"{op}.backward: grad must have the output's shape {tuple(shape)}, "
                         f"got {found}; pass one gradient element per output element")
    if G.array.dtype.kind != "float":
        raise TypeError(f"{op}.backward: grad is {G.array.dtype.name}; a gradient of {op} is a "
                        f"real floating array (convert it with er.asarray(grad, 'float32'))")
    return G.array


def _float_input(op, x, dtype, policy="torch"):
    """``(array, output format)``: x's float format, or ``dtype`` (x converted to it first,
    as torch.mean(x, dtype=...) does). Integers raise, as in torch; under the numpy policy they
    are converted into float64, as numpy's float64 accumulator reads them."""
    X = prepare(x, "x")
    if X.kind != "array":
        raise ValueError(f"{op} needs an array; got a scalar (pass np.asarray([x]))")
    arr = X.array
    fmt = arr.dtype
    implied = reduction_format(op, fmt, policy, sums=False) if dtype is None else None
    if implied is not None:  # numpy: the mean of integers is float64
        dtype = implied
    out = resolve_dtype(dtype) if dtype is not None else fmt
    if fmt.kind == "complex":  # a dtype= would only drop the imaginary part
        raise ValueError(f"{op}: x is {fmt.name}; {op} is defined here for real inputs only "
                         f"(torch 2.13 computes a complex {op}; exactref does not model it), and "
                         f"converting with dtype= would drop the imaginary part: pass x.real "
                         f"and x.imag separately if that is what you mean")
    if out.kind != "float":
        raise ValueError(f"{op}: the output format is {out.name}; {op} is defined for real "
                         f"floating formats (as torch.{op}); pass dtype='float32' (or another "
                         f"float format), or convert x first")
    convertible = fmt.kind == "float" or (dtype is not None and fmt.kind in ("int", "uint",
                                                                              "bool"))
    if not convertible:
        raise ValueError(f"{op}: x is {fmt.name}; {op} needs a real floating input (torch: "
                         f"'could not infer output dtype'); pass dtype='float32' to convert it")
    if out is not fmt:
        from .._array import asarray
        arr = asarray(arr, out)  # converted once into the output format, as torch does
    return arr, out




# --------------------------------------------------------------------- exact integer sums
_int_rowsums = int_rowsums  # the long-sum engine's exact row integers (the norms read it)

_SAFE = 2.0**480  # |x| in [2**-480, 2**480]: x*x and its TwoProduct error are exact floats


def _int_rowsquares(X, precision: int):
    """Exact ``sum(X[i]**2)`` per row as ``(V, e)`` (see :func:`~exactref._exact.int_rowsums`). Squares of
    data of at most 26 bits are exact in float64; wider data take TwoProduct (``x*x = h + l``
    exactly) where no element is outside ``[2**-480, 2**480]``, else Python integers."""
    if precision <= 26:
        return int_rowsums(X * X)
    a = np.abs(X)
    ok = ((a == 0) | ((a >= 1 / _SAFE) & (a <= _SAFE))).all(axis=1)
    V = np.zeros(X.shape[0], dtype=object)
    E = np.zeros(X.shape[0], np.int64)
    if ok.any():
        Xs = X[ok]
        h = Xs * Xs
        c = Xs * 134217729.0  # Dekker's split
        hi = c - (c - Xs)
        lo = Xs - hi
        low = ((hi * hi - h) + 2 * hi * lo) + lo * lo  # exact: TwoProduct's error
        V[ok], E[ok] = int_rowsums(np.concatenate([h, low], axis=1))
    if (~ok).any():
        sq = X[~ok]
        Vs, Es = [], []
        for row in sq:
            pairs = [v.as_integer_ratio() for v in row.tolist() if v != 0]
            es = [-2 * (d.bit_length() - 1) for _, d in pairs]
            e0 = min(es) if es else 0
            Vs.append(sum((n * n) << (e - e0) for (n, _), e in zip(pairs, es, strict=True)))
            Es.append(e0)
        V[~ok] = np.array(Vs + [0], dtype=object)[:-1]
        E[~ok] = Es
    return V, E


# ------------------------------------------------------------------ rationals, rounded
def _odd_pairs(num, den, e, root=False):
    """``(W, e')`` per element: ``sqrt?(num / den) * 2**e`` rounded to odd at ``_ODD_BITS``
    or more bits as ``W * 2**e'`` (Python ints; ``num`` signed, ``den > 0``; ``e`` even where
    ``root``). A zero ``num`` gives ``(0, 0)``."""
    out = []
    for a, b, ee in zip(num, den, e, strict=True):
        a, b, ee = int(a), int(b), int(ee)
        if a == 0:
            out.append((0, 0))
            continue
        sign = -1 if a < 0 else 1
        a = abs(a)
        if root:
            # sqrt(a / b) * 2**(ee / 2): k = isqrt(a * 4**s // b) has >= _ODD_BITS bits
            s = max(0, (2 * _ODD_BITS + 4 - (a.bit_length() - b.bit_length())) // 2 + 1)
            y, ry = divmod(a << (2 * s), b)
            kk = math.isqrt(y)
            inexact = ry != 0 or kk * kk != y
            out.append((sign * (2 * kk + inexact), ee // 2 - s - 1))
        else:
            s = max(0, _ODD_BITS + 2 - (a.bit_length() - b.bit_length()))
            q, rq = divmod(a << s, b)
            out.append((sign * (2 * q + (rq != 0)), ee - s - 1))
    return out


def _exact_of(pairs, shape, zsign=None) -> ExactArray:
    ex = from_integers(pairs, shape)
    if zsign is not None:
        ex.zsign[:] = zsign
    return ex


def _zero_signs(X):
    """IEEE's sign of an exact-zero sum per row: -1 (every term -0), +1 (every term +0, or
    none), 0 (the sum rule: a cancellation or mixed zeros)."""
    k = X.shape[1]
    zeros = X == 0
    allneg = (zeros & np.signbit(X)).all(axis=1) & (k > 0)
    allpos = (zeros & ~np.signbit(X)).all(axis=1)
    return np.where(allneg, -1, np.where(allpos, 1, 0)).astype(np.int8)


def _specials(X):
    """Per row: the IEEE sum of the non-finite values (NaN, ±inf) or 0 where all are finite,
    and X with them zeroed."""
    fin = np.isfinite(X)
    if fin.all():
        return np.zeros(X.shape[0]), X
    with np.errstate(invalid="ignore"):
        s = np.where(fin, 0.0, X).sum(axis=1)
    return s, np.where(fin, X, 0.0)


# --------------------------------------------------------------------- tolerance helpers
def _rc(v, fmt: Format, mode):
    """``v`` (float64, any values) rounded into ``fmt`` in ``mode`` (non-finite kept; an
    overflow gives what IEEE gives; NaN stays)."""
    with np.errstate(over="ignore", invalid="ignore"):
        fin = np.isfinite(v)
        out = np.where(fin, _round(np.where(fin, v, 0.0), fmt, mode), v)
    return out


def _bracket(ex: ExactArray):
    """float64 ``(lo, hi)`` around the exact values: ``c1 * 2**E`` where that is the value,
    else the float64 neighbours of ``fl(c1 + c2) * 2**E`` (one float64 ulp wider than the
    directed roundings at most), where those scale exactly; the directed roundings of the
    engine elsewhere (subnormal or huge values, specials, slow-path elements)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        s = ex.c1 + ex.c2
        exact = (ex.c2 == 0) & (ex.r == 0)
        E = np.clip(ex.E, -3000, 3000).astype(np.int32)
        lo = np.ldexp(np.where(exact, ex.c1, np.nextafter(s, -np.inf)), E)
        hi = np.ldexp(np.where(exact, ex.c1, np.nextafter(s, np.inf)), E)
        fine = (np.isfinite(lo) & np.isfinite(hi) & (np.minimum(np.abs(lo), np.abs(hi))
                                                       >= 2.0**-1021))
    regular = ~ex.zero & (ex.special == 0)
    slow = regular & ~fine
    if ex.hard or slow.any():
        return (ex.round(F64, Rounding.TOWARD_NEGATIVE, "ieee")[0],
                ex.round(F64, Rounding.TOWARD_POSITIVE, "ieee")[0])
    sp = np.where(ex.zero, 0.0, ex.special)  # zeros, NaN, infinities
    return np.where(regular, lo, sp), np.where(regular, hi, sp)


def _divide_ends(lo, hi, d, c: Format, imode, u):
    """The ends of ``R_c(s / d)`` and ``R_c(s * R_c(1 / d))`` for ``s`` in ``[lo, hi]``
    (``d > 0``, float64 values of ``c``): division and both roundings are monotone, and the
    reciprocal is within ``u / d`` of ``1 / d``."""
    with np.errstate(over="ignore", invalid="ignore"):
        tl, th = lo / d, hi / d
        ql = down(down(tl - np.abs(tl) * u))
        qh = up(up(th + np.abs(th) * u))
    return _rc(ql, c, imode), _rc(qh, c, imode)


def _sum_bound(model: SumModel, X, K, prec):
    """The long-sum bound of the sum of each row of float64 ``X`` under ``model`` (without its
    last rounding, applied at the ends) and the rows' sum of ``|x|``."""
    ts = abs_rowsum(X)
    coef = coefficients(model, K, with_products=False, term_bits=prec)
    if model.order.positional:
        b = abs_rowsum(X, coef)
    else:
        b = scaled_bound(float(coef), ts)
    b = b + 2 * K * model.eta
    return np.where(nonzero_terms(X), b, 0.0), ts


def _model(out, compute, order, mode, ftz=False):
    c = compute_format(out, compute).component
    return SumModel(c, parse_order(order), False, None, mode, flush_outputs=ftz)


def _details(model, order, mode, rule, K, **more):
    return dict({"rounding": mode, "overflow": rule, "k": K, "compute": model.compute,
                 "order": model.order, "order_declared": not is_default_order(order)}, **more)


def _record(result, x: Array, axes, keepdims):
    """``result`` with its input recorded, and ``input_slices(index)``: the values the output
    element at ``index`` reduces (failure reports)."""
    result.inputs = {"x": x}
    keep = [d for d in range(x.ndim) if d not in axes]

    def slices(index):
        index = tuple(int(i) for i in index)
        if keepdims:
            index = tuple(index[d] for d in keep)
        at = dict(zip(keep, index, strict=True))
        ix = tuple(at.get(d, slice(None)) for d in range(x.ndim))
        text = ", ".join(":" if isinstance(i, slice) else str(i) for i in ix)
        return [(f"x[{text}]" if ix else "x", x[ix])]

    result.input_slices = slices
    return result



def _output(lo, hi, out: Format, mode, rule, model, ts):
    """Ends in the compute format rounded into the output format; where both ends are NaN only
    NaN is covered; a partial sum that may overflow (``ts``: the sum of ``|x|``) allows
    anything."""
    comp = out.component
    both = np.isnan(lo) & np.isnan(hi)
    nan = np.isnan(lo) | np.isnan(hi)
    lo = _chain(np.where(np.isnan(lo), -np.inf, lo), comp, comp, mode, mode, nan, -np.inf,
                rule)
    hi = _chain(np.where(np.isnan(hi), np.inf, hi), comp, comp, mode, mode, nan, np.inf, rule)
    lo = np.where(both, np.nan, lo)
    hi = np.where(both, np.nan, hi)
    return overflow_ends(lo, hi, nan, np.asarray(ts), model.compute.max_finite, comp, rule)




def _int_value_up(V, e):
    """float64 upper bounds of ``|V * 2**e|`` (Python ints)."""
    out = np.empty(len(V))
    for i, (v, ee) in enumerate(zip(V, e, strict=True)):
        v = abs(int(v))
        if v == 0:
            out[i] = 0.0
            continue
        sh = max(v.bit_length() - 53, 0)
        top = (v >> sh) + (1 if sh else 0)  # rounded up, 54 bits at most
        try:
            out[i] = math.ldexp(float(top), int(ee) + sh)
        except OverflowError:
            out[i] = math.inf
        out[i] = up(out[i])
    return out


