"""``linear``, ``conv1d``, ``conv2d``: dot products plus a bias, each output element one exact
sum rounded once.

Every output element of a linear layer or a convolution is a dot product of an input window
with a filter, plus the bias. The op is written as one matrix product per group: the left
matrix holds the input windows (``x`` itself for ``linear``; its im2col for a convolution, the
padding's zeros included) and a column of ones, the right one the filters and a row holding the
bias, so the bias is one more exact term of the same sum (as gemm's ``c``). The exact engine
(:func:`exactref._exact.matmul_exact`) computes it, in chunks over the batch so memory stays
bounded, and it is rounded once into the output format.

The tolerance is the rigorous long-sum bound of :mod:`._bounds` with per-term coefficients:
``k`` products and the bias, which an implementation adds either as the accumulator's initial
value (``bias_at="start"``: one more term of the ``k + 1``-term sum, the first in sequential
order) or to the finished sum of products (``bias_at="end"``: every product's error bound takes
one more rounding, the bias's only its own), or either (``bias_at=None``, the default).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._array import Array
from .._exact import gamma_up, matmul_exact, resolve_modes
from .._formats import Format
from .._operands import cast_operand, output_format, prepare, to_array
from ..ops import names_of
from ._bounds import _NE, DEFAULT_ORDER, BoundResult, coefficients, interval, products_bound
from ._flush import apply as apply_flush
from ._flush import check_flush, flushes_outputs
from ._ops import _model, _order_details, _precision

__all__ = [*names_of(__name__)]

#: where the bias enters the sum: the accumulator's initial value, after the products, either
BIAS_AT = ("start", "end", None)
#: float64 elements of one chunk's left matrix (the exact engine's digits take a few copies)
_CHUNK = 1 << 21


# ------------------------------------------------------------------------------ operands
def _operand(v, label, op):
    o = prepare(v, label)
    if o.kind != "array":
        raise ValueError(f"{op}: {label} is a scalar; it must be an array (tensor)")
    return o


def _formats(op, x, weight, bias, dtype, x_label="input", policy="torch"):
    """The operands as Arrays of the promoted format under ``policy`` (its multiply's
    promotion), and the output format (floats only)."""
    X, W = _operand(x, x_label, op), _operand(weight, "weight", op)
    B = _operand(bias, "bias", op) if bias is not None else None
    ops = [X, W] + ([B] if B is not None else [])
    promoted, out = output_format(ops, "mul", dtype, policy)
    if out.kind != "float":
        raise ValueError(f"{op}: the operands promote to {out.name}; {op} is defined here for "
                         f"real floating formats (float64 ... float8); convert them to a float "
                         f"format, or use linalg.gemm for integer and complex products")
    X, W = cast_operand(X, promoted), cast_operand(W, promoted)
    if B is not None:
        B = cast_operand(B, promoted)
    return X.array, W.array, (B.array if B is not None else None), out


def _f64(arr: Array) -> np.ndarray:
    return np.asarray(arr.numpy()).astype(np.float64)


def _check_bias_at(bias_at):
    if bias_at not in BIAS_AT:
        raise ValueError(f"bias_at={bias_at!r}: expected 'start' (the accumulator's initial "
                         f"value), 'end' (added to the finished sum) or None (either)")


# ---------------------------------------------------------------------------- the engine
def _coef_from_d(model, d, product_bits):
    """Per term, :func:`._bounds.coefficients`' relative bound for a term that passes through
    ``d`` roundings of the accumulator (an array), the worse of fused and unfused where
    ``model.fused`` is None: ``(1 + u_p)(1 + gamma_{d + extra + entry - 1}) - 1``."""
    u = model.unit(model.compute)
    up = model.unit(model.products)
    if product_bits <= model.products.component.precision:
        up = 0.0  # exact products (bfloat16 products in float32)
    pc = model.compute.component.precision
    out = None
    for fused in ((True, False) if model.fused is None else (model.fused,)):
        width = None if fused else min(model.products.component.precision, product_bits)
        entry = 1 if width is not None and width > pc else 0
        dd = np.maximum(np.asarray(d) + (1 if fused else 0) + entry - 1, 0)
        v = (1 + (0.0 if fused else up)) * (1 + gamma_up(dd, u)) - 1
        out = v if out is None else np.maximum(out, v)
    return out


def blocked_roundings(k: int, block: int, bias_first: bool = False):
    """Per product (in im2col order), how many roundings of the accumulator it passes through
    when the ``k`` products are summed in blocks of ``block`` consecutive ones, each block in
    sequence from zero, and the block sums added in sequence (after the bias, when
    ``bias_first``); and the bias's own count. ``block = k`` is the sequential order, ``block =
    1`` too."""
    nb = -(-k // block) if k else 0
    lidx = np.arange(k)
    j, i = lidx // block, lidx % block
    size = np.minimum(block, k - j * block)
    inner = size - np.maximum(i + 1, 2) + 1
    outer = nb - j if bias_first else nb - np.maximum(j + 1, 2) + 1
    return inner + outer, nb


def _weights(model, k, has_bias, bias_at, product_bits, bias_bits, block=None):
    """Per-term relative bounds (a scalar, or a vector of ``k + has_bias``: the products, then
    the bias) on the value the last rounding of the accumulator sees (see
    :func:`._bounds.coefficients`), the larger over the bias placements allowed. ``block``:
    the blocked order (:func:`blocked_roundings`)."""
    if block is None:
        c = coefficients(model, k, product_bits=product_bits)
    else:
        c = _coef_from_d(model, blocked_roundings(k, block)[0], product_bits)
    if not has_bias:
        return c
    u = model.unit(model.compute)
    wide = bias_bits > model.compute.component.precision  # rounded when it enters
    entry = u if wide else 0.0
    variants = []
    if bias_at in ("start", None) and block is not None:
        # the bias is the initial value of the sum of block sums
        d, nb = blocked_roundings(k, block, bias_first=True)
        s = _coef_from_d(model, np.concatenate([d, [nb]]), product_bits)
        if wide:
            s[-1] = (1 + s[-1]) * (1 + u) - 1
        variants.append(s)
    elif bias_at in ("start", None):
        # one more term of the sum, the first one in sequential order (the initial value)
        s = np.asarray(coefficients(model, k + 1, product_bits=product_bits), dtype=np.float64)
        if s.ndim == 0:
            s = np.full(k + 1, float(s))
        s = np.concatenate([s[1:], s[:1]])  # the bias column is the last one
        if wide:
            s[-1] = (1 + s[-1]) * (1 + u) - 1
        variants.append(s)
    if bias_at in ("end", None):
        # the sum of products is rounded, then the bias added by the last rounding
        e = (1 + np.asarray(c, dtype=np.float64)) * (1 + u) - 1
        e = np.broadcast_to(e, (k,))
        variants.append(np.concatenate([e, [entry]]))
    out = variants[0]
    for v in variants[1:]:
        out = np.maximum(out, v)
    return out


class _Plan:
    """One op as ``G`` matrix products: ``left(chunk)`` gives the chunk's left matrices
    ``(G, rows, K)`` (float64), ``right`` is ``(G, K, Ng)``, ``bias`` ``(G, Ng)`` or None, and
    ``place(values (G, rows, Ng), chunk)`` puts a chunk's outputs into their final layout
    (concatenated along axis 0 over the chunks)."""

    def __init__(self, left, chunks, right, bias, place, final_shape):
        self.left, self.chunks, self.right, self.bias = left, chunks, right, bias
        self.place, self.final_shape = place, tuple(final_shape)


def _run(plan: _Plan, out: Format, precision: int, mode, rule, model, order, bias_at, op,
         details, block=None):
    """The exact values rounded once, and their tolerance intervals (computed with them,
    chunk by chunk, so the exact sums need not be kept)."""
    comp = out.component
    G, K, Ng = plan.right.shape
    has_bias = plan.bias is not None
    right = plan.right
    if has_bias:
        right = np.concatenate([right, plan.bias[:, None, :]], axis=1)
    w = _weights(model, K, has_bias, bias_at, 2 * precision, precision, block)
    eta = model.eta + model.products_eta
    nterms = K + has_bias
    values, parts = [], [[], [], [], []]
    for chunk in plan.chunks:
        A = plan.left(chunk)
        if has_bias:
            A = np.concatenate([A, np.ones(A.shape[:-1] + (1,))], axis=-1)
        ex = matmul_exact(A, right, precision, precision)
        shape3 = (G, A.shape[1], Ng)
        values.append(plan.place(ex.round(comp, mode, rule)[0].reshape(shape3), chunk))
        b_, ts = products_bound(A, right, w, eta, nterms)
        for store, v in zip(parts, interval(ex, b_, out, model, mode, ts, shape3, rule),
                            strict=True):
            store.append(plan.place(v, chunk))
    cat = [np.concatenate(p, axis=0).reshape(plan.final_shape) for p in parts]
    rounded = to_array([np.concatenate(values, axis=0).reshape(plan.final_shape)], out,
                       plan.final_shape)
    how = model.describe()
    if block is not None:
        how = how.replace("sequential order", f"blocked order (blocks of {block} in sequence, "
                                              f"their sums in sequence)")
    models = [f"exact value rounded once into {out.name}",
              "accumulated " + how + ", bias "
              + {"start": "as the initial value", "end": "added to the finished sum",
                 None: "as the initial value or added at the end"}[bias_at]
              + f", then rounded into {out.name}"]
    details = dict(details, k=K, bias_at=bias_at, products=True, **_order_details(model, order))
    if block is not None:
        details.update(order="blocked", block=block)
    return BoundResult(rounded, lambda: [tuple(cat)], op=op, models=models, details=details)


def _declared(out, compute, order, fused, products, mode, block, flush=None):
    """The SumModel of the declared implementation and the block size of a blocked order
    (None otherwise)."""
    if order == "blocked":
        if isinstance(block, bool) or not isinstance(block, numbers.Integral) or block < 1:
            raise ValueError(f"order='blocked' needs block=<the products per block, a positive "
                             f"int>; got block={block!r}")
        m = _model(out, compute, "sequential", fused, products, mode, flushes_outputs(flush))
        return m, int(block)
    if block is not None:
        raise ValueError(f"block={block!r} is the size of a blocked order; pass "
                         f"order='blocked' with it, or leave block out")
    return _model(out, compute, order, fused, products, mode, flushes_outputs(flush)), None


def _row_chunks(rows, per_row):
    """Chunks (slices) of ``rows`` rows whose left matrices hold about :data:`_CHUNK`
    elements."""
    step = max(1, _CHUNK // max(per_row, 1))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)] or [slice(0, 0)]


# -------------------------------------------------------------------------------- linear
def linear(x, weight, bias=None, *, dtype=None, rounding=_NE, overflow=None, compute=None,
           order=DEFAULT_ORDER, fused=None, products=None, bias_at=None, block=None,
           policy="torch", flush=None):
    """``x @ weight.T + bias`` (torch.nn.functional.linear), batched over ``x``'s leading
    dimensions, each element one exact sum rounded once.

    ``x`` is ``(..., in_features)``, ``weight`` ``(out_features, in_features)`` (or
    ``(in_features,)``: the output has no feature dimension), ``bias`` broadcasts to
    ``(out_features,)``. Real float formats; the output format is the operands' promoted
    format under ``policy`` (torch by default; ``dtype`` names another). The tolerance bounds every
    implementation that accumulates the ``in_features`` products in ``compute`` (default:
    float32 for the narrow floats) in the ``order`` declared (``"any"``, ``"pairwise"``,
    ``"sequential"``, or ``"blocked"`` with ``block=B``: blocks of ``B`` consecutive products
    each summed in sequence from zero, the block sums added in sequence), fused or not, and
    adds the bias as the initial value (``bias_at="start"``), to the finished sum (``"end"``),
    or either (None).

    >>> import exactref as er
    >>> from exactref.linalg import linear
    >>> x = er.asarray([[1.0, 2.0**-8]], "bfloat16")
    >>> w = er.asarray([[1.0, 1.0], [1.0, -1.0]], "bfloat16")
    >>> r = linear(x, w, er.asarray([2.0**-8, 0.0], "bfloat16"))
    >>> r.rounded.tolist()     # 1 + 2**-7: a bfloat16 accumulator would give 1 (two ties to even)
    [[1.0078125, 0.99609375]]
    >>> r.tolerance().tolist()   # accumulated in float32: exact before the one rounding
    [[0.0, 0.0]]
    """
    _check_bias_at(bias_at)
    check_flush("linear", flush)
    xa, wa, ba, out = _formats("linear", x, weight, bias, dtype, "x", policy)
    if xa.ndim == 0:
        raise ValueError("linear: x has shape (); it needs at least one dimension "
                         "(in_features)")
    if wa.ndim not in (1, 2):
        raise ValueError(f"linear: weight must be 1-D (in_features,) or 2-D (out_features, "
                         f"in_features); got shape {wa.shape}")
    k = xa.shape[-1]
    if wa.shape[-1] != k:
        raise ValueError(f"linear: x of shape {xa.shape} and weight of shape {wa.shape} do not "
                         f"match: weight's last dimension ({wa.shape[-1]}) must equal x's "
                         f"in_features ({k}); weight is (out_features, in_features)")
    nout = wa.shape[0] if wa.ndim == 2 else 1
    feat = (nout,) if wa.ndim == 2 else ()
    if ba is not None:
        try:
            ok = tuple(np.broadcast_shapes(ba.shape, feat)) == feat
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"linear: bias of shape {ba.shape} does not broadcast to the "
                             f"output features {feat}; expected shape {feat} or ()")
    mode, rule = resolve_modes(rounding, overflow, out)
    lead = xa.shape[:-1]
    rows = int(np.prod(lead, dtype=np.int64))
    X = _f64(xa).reshape(rows, k)
    right = _f64(wa).reshape(nout, k).T[None]
    bias_row = None
    if ba is not None:
        bias_row = np.broadcast_to(_f64(ba), feat).reshape(1, nout).copy()

    def left(ch):
        return X[ch][None]

    def place(v, ch):
        return v[0]

    plan = _Plan(left, _row_chunks(rows, k + 1), np.ascontiguousarray(right), bias_row, place,
                 lead + feat)
    model, block = _declared(out, compute, order, fused, products, mode, block, flush)
    details = {"rounding": mode, "overflow": rule}
    result = _run(plan, out, _precision(xa), mode, rule, model, order, bias_at, "linear",
                  details, block)
    result.inputs = {"x": xa, "weight": wa}
    if ba is not None:
        result.inputs["bias"] = ba
    result._with_order = lambda o: linear(
        x, weight, bias, dtype=dtype, rounding=rounding, overflow=overflow, compute=compute,
        order=o, fused=fused, products=products, bias_at=bias_at, policy=policy, flush=flush)
    return apply_flush(result, flush, out, model.compute.smallest_normal, [xa, wa, ba],
                       lambda fx, fw, fb, flush: linear(
                           fx, fw, fb, dtype=dtype, rounding=rounding, overflow=overflow,
                           compute=compute, order=order, fused=fused, products=products,
                           bias_at=bias_at, block=block, policy=policy, flush=flush))


# ------------------------------------------------------------------------- convolution
def _tuple(v, n, name, op, minimum):
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        t = (int(v),) * n
    elif isinstance(v, (tuple, list)) and len(v) in (1, n) and all(
            isinstance(e, numbers.Integral) and not isinstance(e, bool) for e in v):
        t = tuple(int(e) for e in v) * (n if len(v) == 1 else 1)
    else:
        raise ValueError(f"{op}: {name}={v!r}: expected an int or a tuple of {n} ints")
    if any(e < minimum for e in t):
        raise ValueError(f"{op}: {name}={v!r}: each entry must be at least {minimum}")
    return t


def _padding(padding, n, kernel, dilation, stride, op):
    """``((before, after), ...)`` per spatial dimension, as torch reads ``padding``."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride}; PyTorch's error); pass "
                                 f"explicit padding")
            out = []
            for k, d in zip(kernel, dilation, strict=True):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))  # torch pads the extra at the end
            return out
        raise ValueError(f"{op}: padding={padding!r}: expected an int, a tuple of {n} ints, "
                         f"'valid' or 'same'")
    return [(p, p) for p in _tuple(padding, n, "padding", op, 0)]


def _conv(op, nd, x, weight, bias, stride, padding, dilation, groups, dtype, rounding,
          overflow, compute, order, fused, products, bias_at, block=None, policy="torch",
          padding_taps=None, flush=None):
    _check_bias_at(bias_at)
    _check_taps(op, padding_taps)
    check_flush(op, flush)
    stride0, dilation0 = stride, dilation  # as given (the flushed rerun takes them so)
    xa, wa, ba, out = _formats(op, x, weight, bias, dtype, policy=policy)
    if xa.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) "
                         f"input, got shape {xa.shape}")
    if wa.ndim != nd + 2:
        raise ValueError(f"{op}: weight must be {nd + 2}-D (out_channels, in_channels / groups"
                         f", {'kW' if nd == 1 else 'kH, kW'}); got shape {wa.shape}")
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{op}: groups={groups!r} must be a positive integer")
    groups = int(groups)
    batched = xa.ndim == nd + 2
    xs = xa.shape if batched else (1,) + xa.shape
    n, cin, space = xs[0], xs[1], xs[2:]
    cout, cg, kernel = wa.shape[0], wa.shape[1], wa.shape[2:]
    if cout % groups:
        raise ValueError(f"{op}: out_channels ({cout}, weight's first dimension) must be "
                         f"divisible by groups ({groups})")
    if cin % groups or cin // groups != cg:
        raise ValueError(f"{op}: given groups={groups}, weight of shape {wa.shape} expects "
                         f"the input to have {cg * groups} channels (in_channels / groups = "
                         f"{cg}), but input of shape {xa.shape} has {cin}; in_channels must be "
                         f"divisible by groups")
    stride = _tuple(stride, nd, "stride", op, 1)
    dilation = _tuple(dilation, nd, "dilation", op, 1)
    pads = _padding(padding, nd, kernel, dilation, stride, op)
    if ba is not None and ba.shape != (cout,):
        raise ValueError(f"{op}: bias must have shape ({cout},) (out_channels); got "
                         f"{ba.shape}")
    outsp = []
    for size, k, d, s, (p0, p1) in zip(space, kernel, dilation, stride, pads, strict=True):
        span = d * (k - 1) + 1
        if size + p0 + p1 < span:
            raise ValueError(f"{op}: the input of spatial size {tuple(space)} padded to "
                             f"{tuple(a + q0 + q1 for a, (q0, q1) in zip(space, pads, strict=True))}"
                             f" is smaller than the dilated kernel ({span} along a dimension)")
        outsp.append((size + p0 + p1 - span) // s + 1)
    mode, rule = resolve_modes(rounding, overflow, out)
    # as 2-D: a 1-D convolution is one of height 1
    X = _f64(xa).reshape((n, cin) + (1,) * (2 - nd) + tuple(space))
    Wt = _f64(wa).reshape((cout, cg) + (1,) * (2 - nd) + tuple(kernel))
    if nd == 1:
        stride, dilation, pads = (1,) + stride, (1,) + dilation, [(0, 0)] + pads
    (sh, sw), (dh, dw) = stride, dilation
    kh, kw = Wt.shape[2:]
    oh, ow = ([1] + outsp) if nd == 1 else outsp
    ng = cout // groups
    kg = cg * kh * kw
    # the filters of each group as the right matrix: (G, cg*kh*kw, ng)
    right = np.ascontiguousarray(
        Wt.reshape(groups, ng, kg).transpose(0, 2, 1))
    bias_row = _f64(ba).reshape(groups, ng) if ba is not None else None

    def left(ch):
        xp = np.pad(X[ch], ((0, 0), (0, 0), tuple(pads[0]), tuple(pads[1])))
        win = np.lib.stride_tricks.sliding_window_view(xp, (dh * (kh - 1) + 1,
                                                            dw * (kw - 1) + 1), axis=(2, 3))
        win = win[:, :, ::sh, ::sw, ::dh, ::dw][:, :, :oh, :ow]  # (b, cin, oh, ow, kh, kw)
        b = win.shape[0]
        win = win.reshape(b, groups, cg, oh, ow, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
        return np.ascontiguousarray(win).reshape(groups, b * oh * ow, kg)

    def place(v, ch):  # (G, b*oh*ow, ng) -> (b, cout, oh, ow)
        b = v.shape[1] // (oh * ow) if oh * ow else 0
        v = v.reshape(groups, b, oh, ow, ng).transpose(1, 0, 4, 2, 3)
        return v.reshape(b, cout, oh, ow)

    per = max(1, groups * oh * ow * (kg + 1))
    chunks = _row_chunks(n, per)
    final = ((n,) if batched else ()) + (cout,) + tuple(outsp)
    plan = _Plan(left, chunks, right, bias_row, place, final)
    model, block = _declared(out, compute, order, fused, products, mode, block, flush)
    details = {"rounding": mode, "overflow": rule, "stride": stride[2 - nd:],
               "padding": pads[2 - nd:], "dilation": dilation[2 - nd:], "groups": groups,
               "padding_taps": padding_taps}
    result = _run(plan, out, _precision(xa), mode, rule, model, order, bias_at, op, details,
                  block)
    result.inputs = {"input": xa, "weight": wa}
    if ba is not None:
        result.inputs["bias"] = ba
    result._with_order = lambda o: _conv(op, nd, x, weight, bias, stride0, padding, dilation0,
                                         groups, dtype, rounding, overflow, compute, o, fused,
                                         products, bias_at, None, policy, padding_taps, flush)
    if padding_taps != "zeros":
        kw = {"dtype": dtype, "rounding": rounding, "overflow": overflow, "compute": compute,
              "order": order, "fused": fused, "products": products, "bias_at": bias_at,
              "block": block, "policy": policy, "flush": flush}
        result = _skipped_taps(result, nd, xa, wa, ba, out, kw, padding_taps)
    return apply_flush(result, flush, out, model.compute.smallest_normal, [xa, wa, ba],
                       lambda fx, fw, fb, flush: _conv(op, nd, fx, fw, fb, stride0, padding,
                                                       dilation0, groups, dtype, rounding,
                                                       overflow, compute, order, fused,
                                                       products, bias_at, block, policy,
                                                       padding_taps, flush))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,  # noqa: A002
           dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
           fused=None, products=None, bias_at=None, block=None, policy="torch",
           padding_taps=None, flush=None):
    """torch.nn.functional.conv1d (cross-correlation, zero padding), each output element the
    exact ``sum_{c,k} input[n, g*cg + c, t*stride - pad + k*dilation] * weight[o, c, k]`` plus
    ``bias[o]``, rounded once.

    ``input`` is ``(N, C_in, L)`` or unbatched ``(C_in, L)``; ``weight`` ``(C_out, C_in /
    groups, kW)``; ``padding`` an int, a 1-tuple, ``"valid"`` or ``"same"`` (stride 1; an odd
    total puts the extra zero at the end, as torch). Padding is zeros (``padding_mode`` other
    than zeros is not modelled). ``padding_taps``: ``"zeros"`` (a padded zero is a term like
    any other, so an infinite weight that meets it gives NaN), ``"skip"`` (padded taps are not
    computed, as oneDNN's and cuDNN's implicit-GEMM kernels: the in-bounds sum) or None (either,
    the default). Tolerance options (``flush=`` too) as in :func:`linear`.

    >>> from exactref.linalg import conv1d
    >>> conv1d([[[1.0, 2.0, 3.0]]], [[[1.0, -1.0]]], [0.5], padding=1).rounded.tolist()
    [[[-0.5, -0.5, -0.5, 3.5]]]
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups, dtype,
                 rounding, overflow, compute, order, fused, products, bias_at, block, policy,
                 padding_taps, flush)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,  # noqa: A002
           dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
           fused=None, products=None, bias_at=None, block=None, policy="torch",
           padding_taps=None, flush=None):
    """torch.nn.functional.conv2d (cross-correlation, zero padding), each output element the
    exact sum over the window of ``input * weight`` plus ``bias``, rounded once.

    ``input`` is ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``; ``weight`` ``(C_out, C_in /
    groups, kH, kW)``; ``stride``, ``padding`` and ``dilation`` ints or pairs (``padding`` also
    ``"valid"`` or ``"same"``). Zero padding only; ``padding_taps`` as in :func:`conv1d`.
    ``groups`` splits the channels (``groups ==
    C_in``: depthwise). Tolerance options as in :func:`linear`: the ``C_in / groups * kH * kW``
    products of an element in ``compute`` (float32 for the narrow floats) in any order by
    default (direct loops, im2col with a blocked GEMM, vectorized lanes), and the bias.
    Winograd and FFT convolutions transform the data first and are not in the model.

    >>> import numpy as np
    >>> from exactref.linalg import conv2d
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> conv2d(x, np.ones((1, 1, 3, 3)), stride=2, padding=1).rounded.tolist()
    [[[[10.0, 24.0], [51.0, 90.0]]]]
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups, dtype,
                 rounding, overflow, compute, order, fused, products, bias_at, block, policy,
                 padding_taps, flush)


#: conv's ``padding_taps=``: "zeros" (the padded taps multiply the zero padding, so a padded
#: tap times an infinite or NaN weight is NaN: direct loops, im2col), "skip" (the padded taps
#: are not computed: oneDNN's and cuDNN's implicit-GEMM kernels), None (either: the default)
PADDING_TAPS = (None, "zeros", "skip")


def _check_taps(op, padding_taps):
    if padding_taps not in PADDING_TAPS:
        raise ValueError(f"{op}: padding_taps={padding_taps!r}; expected None (either, the "
                         f"default), 'zeros' (padded taps multiply the zero padding: a padded "
                         f"tap times an infinite weight is NaN) or 'skip' (padded taps are not "
                         f"computed, as oneDNN's and cuDNN's implicit-GEMM kernels)")


def _skipped_taps(r, nd, x: Array, w: Array, b, out: Format, kw, taps):
    """``r`` where a non-finite weight meets a padded position: the exact sum of the in-bounds
    terms (rounded as any in-model sum) instead of the zeros' NaN (``taps="skip"``: the
    reference too), or both (``taps=None``). Elsewhere the two agree (``0 * w = 0`` for a
    finite ``w``)."""
    wv = np.asarray(w.numpy()).astype(np.float64)
    bad_w = ~np.isfinite(wv)
    details = r.details
    pads = details["padding"]
    if not bad_w.any() or not any(p for pair in pads for p in pair):
        return r
    xv = np.asarray(x.numpy()).astype(np.float64)
    batched = xv.ndim == nd + 2
    if not batched:
        xv = xv[None]
    if nd == 1:  # as 2-D of height 1
        xv, wv, bad_w = xv[:, :, None], wv[:, :, None], bad_w[:, :, None]
    st = (1,) * (2 - nd) + tuple(details["stride"])
    dl = (1,) * (2 - nd) + tuple(details["dilation"])
    pd = [(0, 0)] * (2 - nd) + [tuple(p) for p in pads]
    n, cin, h, wd = xv.shape
    cout, cg, kh, kwd = wv.shape
    ng = cout // details["groups"]
    inside = np.pad(np.ones((h, wd), bool), pd)  # in-bounds positions of the padded plane
    shape = tuple(r.rounded.shape) if batched else (1,) + tuple(r.rounded.shape)
    oh, ow = (1, shape[-1]) if nd == 1 else shape[-2:]
    xp = np.pad(xv, [(0, 0), (0, 0)] + pd)
    bv = np.asarray(b.numpy()).astype(np.float64) if b is not None else None
    hits = []
    for o in range(cout):
        kk = np.argwhere(bad_w[o].any(axis=0))  # (kh, kw) of a non-finite weight
        if not len(kk):
            continue
        g = o // ng
        for i in range(oh):
            for j in range(ow):
                rows = i * st[0] + kk[:, 0] * dl[0]
                cols = j * st[1] + kk[:, 1] * dl[1]
                if inside[rows, cols].all():
                    continue
                a_ = np.arange(kh)[:, None] * dl[0] + i * st[0]
                e_ = np.arange(kwd)[None, :] * dl[1] + j * st[1]
                keep = inside[a_, e_]  # (kh, kw)
                xs = xp[:, g * cg:(g + 1) * cg, a_, e_][:, :, keep]  # (n, cg, m)
                hits.append((o, i, j, xs.reshape(n, -1), wv[o][:, keep].reshape(1, -1)))
    if not hits:
        return r
    dt = x.dtype
    subs = []
    for o, i, j, xs, ws in hits:
        bias = Array(bv[o:o + 1].astype(dt.np_dtype), dt) if bv is not None else None
        subs.append(((o, i, j), linear(Array(xs.astype(dt.np_dtype), dt),
                                       Array(ws.astype(dt.np_dtype), dt), bias, **kw)))
    full = shape if nd == 2 else shape[:2] + (1,) + shape[2:]
    rounded = r.rounded
    if taps == "skip":  # the reference is the in-bounds sum rounded once
        vals = np.array(np.asarray(rounded.numpy()), copy=True).reshape(full)
        for (o, i, j), sub in subs:
            vals[:, o, i, j] = np.asarray(sub.rounded.numpy())[:, 0]
        rounded = Array(vals.reshape(rounded.shape), rounded.dtype)
    base = r._bounds

    def bounds():
        res = []
        for lo, hi, nan, *_ in base():
            lo, hi, nan = (np.array(v).reshape(full) for v in (lo, hi, nan))
            for (o, i, j), sub in subs:
                l_, h_, n_ = (np.asarray(v)[:, 0] for v in sub._bounds()[0][:3])
                if taps == "skip":
                    lo[:, o, i, j], hi[:, o, i, j], nan[:, o, i, j] = l_, h_, n_
                else:
                    lo[:, o, i, j] = np.fmin(lo[:, o, i, j], l_)
                    hi[:, o, i, j] = np.fmax(hi[:, o, i, j], h_)
                    nan[:, o, i, j] = True
            res.append(tuple(v.reshape(r.rounded.shape) for v in (lo, hi, nan))
                       + (r.terms_sum,))
        return res

    what = {"skip": "skipped", None: "skipped or multiplied by the zero padding (NaN)"}[taps]
    res = BoundResult(rounded, bounds, op=r.op,
                      models=(*r.models, f"padded taps {what} where an infinite or NaN weight "
                              f"meets the padding"), details=r.details)
    res.inputs = r.inputs
    return res


# ----------------------------------------------------------------------------- registry
def register_conv() -> None:
    """The records of linear, conv1d and conv2d in the op registry."""
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register

    # torch's CPU convolutions (oneDNN): the dtypes whose kernels skip the padded positions, and
    # those whose multiplies (AVX512_BF16's VDPBF16PS) read subnormal inputs as zero
    _TORCH_CONV = {"skips_padding": ("float32", "float16", "bfloat16"),
                   "subnormals_as_zero": ("bfloat16",)}

    # the audit's groups (exactref.audit's "windows" builder): the shapes real models use
    # (input, weight, bias or None, params, the data flavors of each)
    every = ("random", "cancel", "edges", "large")
    audits = {
        linear: (((2, 16, 64), (96, 64), (96,), {}, every),
                 ((8, 48), (8, 48), None, {}, ("random",))),
        conv1d: (((2, 32, 64), (32, 1, 4), (32,), {"padding": 3, "groups": 32},
                  ("random", "edges")),
                 ((2, 32, 64), (32, 32, 5), (32,), {"padding": "same"}, ("random", "cancel"))),
        conv2d: (((2, 64, 14, 14), (64, 64, 3, 3), (64,), {"stride": 2, "padding": 1},
                  ("random", "cancel", "large")),
                 ((2, 32, 14, 14), (32, 1, 3, 3), (32,), {"padding": 1, "groups": 32},
                  ("random", "edges")),
                 ((2, 64, 8, 8), (128, 64, 1, 1), None, {}, ("random",)),
                 ((2, 16, 12, 12), (16, 16, 3, 3), (16,), {"padding": "same", "dilation": 2},
                  ("edges",)))}
    conv_params = (Param("stride", 1), Param("padding", 0), Param("dilation", 1),
                   Param("groups", 1))
    for fn, operands, summary, params, cp in (
            (linear, ("x", "weight", "bias"), "x @ weight.T + bias, each element one exact "
             "sum rounded once", (), Counterparts(Counterpart(
                 "torch.nn.functional.linear", contract={"order": "any"},
                 data={"subnormals_as_zero": ("bfloat16",)}), None, None)),
            (conv1d, ("input", "weight", "bias"), "1-D cross-correlation plus bias, zero "
             "padding, each element one exact sum rounded once", conv_params,
             Counterparts(Counterpart(
                 "torch.nn.functional.conv1d", contract={"order": "any"}, data=_TORCH_CONV),
                 None, "jax.lax.conv_general_dilated")),
            (conv2d, ("input", "weight", "bias"), "2-D cross-correlation plus bias, zero "
             "padding, each element one exact sum rounded once", conv_params,
             Counterparts(Counterpart(
                 "torch.nn.functional.conv2d", contract={"order": "any"}, data=_TORCH_CONV),
                 None, "jax.lax.conv_general_dilated"))):
        fn.spec = register(OpSpec(
            name=fn.__name__, operands=operands, kernel="long sum", promotion="mul",
            function=fn, summary=summary, params=params,
            models=("exact", "any summation order in the compute format", "pairwise",
                    "sequential", "blocked", "bias as the initial value or added at the end"),
            counterparts=cp, kinds=("float",), family="linalg", optional=("bias",),
            audit=AuditPlan(groups="windows", data={"cases": audits[fn], "min_bits": 16})))
