"""``matmul``, ``gemm``, ``dot`` and ``sum``: long exact sums, rounded once.

Each output element is one exact sum (K products for a matrix product, K values for a sum),
computed by :mod:`exactref._exact._longsum` and rounded once into the output format. The
tolerance is a rigorous bound for the declared implementation freedom (see
:mod:`._bounds`).
"""

from __future__ import annotations

import numpy as np

from .._array import Array
from .._exact import (
    ComplexValue,
    ExactPart,
    FloatValue,
    int_matmul_exact,
    int_rowsum_exact,
    integer_overflow,
    matmul_exact,
    matmul_operand,
    resolve_modes,
    rowsum_exact,
    slack_up,
    sum_of_products,
    up,
)
from .._formats import Format
from .._formats import dtype as resolve_dtype
from .._operands import (
    cast_operand,
    check_number,
    compute_format,
    output_format,
    prepare,
    scalar_parts,
    to_array,
)
from .._stochastic import check_format, resolve_stochastic, stochastic_result
from ..ops import names_of
from ._bounds import (
    _NE,
    DEFAULT_ORDER,
    BoundResult,
    ExactResult,
    SumModel,
    abs_rowsum,
    abs_sum_products,
    coefficients,
    interval,
    is_default_order,
    nonzero_terms,
    order_for_axes,
    products_bound,
    scaled_bound,
)
from ._flush import apply as apply_flush
from ._flush import check_flush, flushes_outputs
from ._rowsums import _record, _spelling, axis_items, sum_format

__all__ = [*names_of(__name__)]



# ------------------------------------------------------------------------------ operands
def _array_operand(x, label):
    o = prepare(x, label)
    if o.kind != "array":
        raise ValueError(f"{label} is a scalar; this operation needs an array with at least one "
                         f"dimension (use er.multiply for scalars)")
    if o.array.ndim == 0:
        raise ValueError(f"{label} has shape (); this operation needs at least one dimension "
                         f"(use er.multiply for scalars)")
    return o


def _parts(arr: Array):
    """float64 parts ([re] or [re, im]) of a float or complex Array; None for integer kinds."""
    fmt = arr.dtype
    if fmt.kind == "complex":
        w = arr.numpy().astype(np.complex128)
        # Note: np.array(..., order="C"), not np.ascontiguousarray, which makes a 0-d array 1-d
        return [np.array(w.real, order="C"), np.array(w.imag, order="C")]
    if fmt.kind == "float":
        return [arr.numpy().astype(np.float64)]
    return None


def _native_parts(arr: Array):
    """Like :func:`_parts`, but float32 and float16 data stay as they are (the exact sums read
    them directly, and a float64 copy of a long array costs more than the sum)."""
    fmt = arr.dtype
    if fmt.kind == "float" and fmt.name in ("float32", "float16", "float64"):
        return [np.asarray(arr.numpy())]
    if fmt.name == "bfloat16":  # exactly float32 values
        return [arr.numpy().astype(np.float32)]
    return _parts(arr)


def _precision(arr: Array) -> int:
    comp = arr.dtype.component
    return comp.precision if comp.kind == "float" else 64


def _model(out, compute, order, fused, products, mode, ftz=False):
    if fused is not None and not isinstance(fused, (bool, np.bool_)):
        raise ValueError(f"fused={fused!r}; expected True (each product enters an FMA), False "
                         f"(products rounded before the sum) or None (either, the default)")
    c = compute_format(out, compute).component
    p = resolve_dtype(products).component if products is not None else None
    return SumModel(c, order, fused, p, mode, flush_outputs=ftz)


def _order_details(model, order) -> dict:
    """What a Result's details say of its model: the compute format, the order, and whether
    the caller declared that order (a default "any" is not declared: see weak_check)."""
    return {"compute": model.compute, "order": model.order,
            "order_declared": not is_default_order(order)}


# ------------------------------------------------------------------------------- shapes
def _mm_shapes(sa, sb, la="a", lb="b"):
    """Shapes of the 3-D problem and of the output (numpy/torch matmul semantics)."""
    a1, b1 = len(sa) == 1, len(sb) == 1
    A = (1,) + tuple(sa) if a1 else tuple(sa)
    B = tuple(sb) + (1,) if b1 else tuple(sb)
    if A[-1] != B[-2]:
        which = "its only" if b1 else "its second-to-last"
        raise ValueError(
            f"matmul: {la} of shape {tuple(sa)} and {lb} of shape {tuple(sb)} do not match: "
            f"{la}'s last dimension ({A[-1]}) must equal {lb}'s size along {which} dimension "
            f"({B[-2]}); transpose or reshape one of them")
    try:
        batch = tuple(np.broadcast_shapes(A[:-2], B[:-2]))
    except ValueError:
        raise ValueError(
            f"matmul: {la} of shape {tuple(sa)} and {lb} of shape {tuple(sb)} have batch "
            f"dimensions {A[:-2]} and {B[:-2]} that do not broadcast (NumPy rules: trailing "
            f"dimensions must match or be 1); reshape one of them") from None
    out = batch + (() if a1 else (A[-2],)) + (() if b1 else (B[-1],))
    return A, B, batch, out


def _to3(data, shape2, batch):
    x = np.broadcast_to(data.reshape(shape2), batch + shape2[-2:])
    nb = int(np.prod(batch, dtype=np.int64))  # explicit: -1 is ambiguous for empty data
    return np.ascontiguousarray(x.reshape((nb,) + tuple(shape2[-2:])))


def _product_parts(Ap, Bp, complex_out):
    """Per output part, the real (A, B) pair whose product is that part (complex products as
    real sums of 2k terms)."""
    if not complex_out:
        return [(Ap[0], Bp[0])]
    ar, ai = Ap[0], Ap[1] if len(Ap) > 1 else None
    br, bi = Bp[0], Bp[1] if len(Bp) > 1 else None
    if ai is None and bi is None:
        z = np.zeros_like(br)
        return [(ar, br), (ar, z)]
    if ai is None:
        return [(ar, br), (ar, bi)]
    if bi is None:
        return [(ar, br), (ai, br)]
    re = (np.concatenate([ar, -ai], axis=-1), np.concatenate([br, bi], axis=-2))
    im = (np.concatenate([ar, ai], axis=-1), np.concatenate([bi, br], axis=-2))
    return [re, im]


# ----------------------------------------------------------------------- integer results
def _finish_int(total, out: Format, rule: str, shape):
    """Exact integers (int64 or object) into integer format ``out`` under the overflow rule."""
    if out.kind == "bool":
        return np.asarray(total != 0, dtype=bool).reshape(shape)
    lo, hi = out.int_min, out.int_max
    t = np.asarray(total)
    if t.dtype != object and lo <= int(t.min(initial=0)) and int(t.max(initial=0)) <= hi:
        return t.astype(out.np_dtype).reshape(shape)
    t = t.astype(object)
    over = (t < lo) | (t > hi)
    if np.any(over):
        if rule == "error":
            i = int(np.flatnonzero(over)[0])
            index = tuple(int(v) for v in np.unravel_index(i, shape))
            where = f"element {index}" if index else "the result"
            raise OverflowError(
                f"{where} is {t.reshape(-1)[i]} (exactly), outside {out.name}'s range "
                f"[{lo}, {hi}]; pass overflow='wrap' or 'saturate', or choose a wider format "
                f"(dtype=...)")
        t = integer_overflow(t, out, rule)
    return np.array([int(v) for v in t.reshape(-1)], dtype=out.np_dtype).reshape(shape)


def _int_data(arr: Array):
    data = arr.numpy()
    return data.astype(np.int64) if arr.dtype.bits < 8 else data


# -------------------------------------------------------------------------------- matmul
def matmul(a, b, *, dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
           fused=None, products=None, random_bits=None, random_bits_width=None, policy="torch",
           flush=None):
    """``a @ b`` with numpy/torch matmul semantics, each element the exact sum rounded once.

    1-D operands are vectors (a row for ``a``, a column for ``b``, the added dimension removed
    after), batch dimensions broadcast. The output format is the operands' promoted format under
    ``policy`` (torch by default; numpy, jax, ...: the promotion of their multiply, which their
    matmul shares; ``dtype`` names another of the same kind). The tolerance bounds every
    implementation that accumulates in ``compute`` (default: PyTorch's, float32 for the
    narrow floats) in the ``order`` declared (default ``"library"``: the BLAS microkernels'
    sequential K loop, ``k - 1`` roundings a term, as ``"any"``; ``"pairwise"``,
    ``"sequential"``, ``"blocked(b)"``, ``"split_k(s)"``, ``"tree(f)"``: docs/linalg.md),
    fused or not (``fused=None``: either), with products rounded into ``products`` when not
    fused (default: the compute format). ``flush``: None, ``"inputs"``, ``"outputs"`` or
    ``"both"``, a kernel that may flush subnormals (:mod:`exactref.linalg._flush`).

    >>> import exactref as er
    >>> from exactref.linalg import matmul
    >>> a = er.asarray([[1.0, 2.0**-12]], "bfloat16")
    >>> r = matmul(a, er.asarray([[1.0], [1.0]], "bfloat16"))
    >>> r.rounded.tolist(), r.tolerance().tolist()  # summed in float32: rounds only at the end
    ([[1.0]], [[0.0]])

    Block-scaled operands (what :func:`exactref.quantize` returns) are multiplied as
    :func:`exactref.quantize.matmul` does: their exact values, a float32 result by default.

    ``rounding="stochastic"`` (real float outputs) rounds each exact sum stochastically once
    (``random_bits=``, ``random_bits_width=``: see ``docs/stochastic_rounding.md``); the
    accumulation models do not apply then.
    """
    _block_matmul = _operand_matmul(a, b)
    if _block_matmul is not None:  # block-scaled operands
        if policy != "torch":
            raise ValueError(f"matmul: policy={policy!r} does not apply to block-scaled "
                             f"operands, whose result is float32 unless dtype= names another; "
                             f"leave policy out")
        if flush is not None:
            raise ValueError(f"matmul: flush={flush!r} is not modelled for block-scaled "
                             f"operands (their products are exact); leave flush out")
        return _block_matmul(a, b, dtype=dtype or "float32", compute=compute or "float32",
                             rounding=rounding, overflow=overflow, order=order, fused=fused,
                             products=products)
    spec = resolve_stochastic(rounding, random_bits, random_bits_width)
    if spec is None:
        return _gemm_impl(a, b, None, 1, 1, False, False, dtype, rounding, overflow, compute,
                          order, fused, products, op="matmul", policy=policy, flush=flush)
    if flush is not None:
        raise ValueError(f"matmul: flush={flush!r} models deterministic kernels; "
                         f"rounding='stochastic' rounds the exact sum once: leave flush out")
    res = _gemm_impl(a, b, None, 1, 1, False, False, dtype, _NE, overflow, compute, order,
                     fused, products, op="matmul", policy=policy)
    check_format(res.rounded.dtype)
    out = stochastic_result(res._exacts[0], res.rounded.dtype, res.details["overflow"], spec,
                            res.rounded.shape, op="matmul", details=res.details)
    out.inputs = res.inputs
    return out


#: Operand types that bring their own matmul, ``{type: function}``: exactref.quantize (a higher
#: layer, which linalg does not import) registers its ``Quantized`` here.
_OPERAND_MATMULS: dict = {}


def register_matmul_operand(cls: type, function) -> None:
    """Let :func:`matmul` hand operands of type ``cls`` to ``function`` (called as
    ``function(a, b, dtype=..., compute=..., rounding=..., overflow=..., order=..., fused=...,
    products=...)``): how block-scaled operands (:class:`exactref.quantize.Quantized`) reach
    :func:`exactref.quantize.matmul` without linalg importing the quantizers."""
    _OPERAND_MATMULS[cls] = function


def _operand_matmul(a, b):
    """The registered matmul of ``a``'s or ``b``'s type, or None for ordinary operands."""
    for x in (a, b):
        for cls, function in _OPERAND_MATMULS.items():
            if isinstance(x, cls):
                return function
    return None


def dot(a, b, *, dtype=None, rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER,
        fused=None, products=None, policy="torch", flush=None):
    """The dot product of two 1-D arrays (no conjugation, as torch.dot and numpy.dot), the exact
    sum rounded once. Options as in :func:`matmul`.

    >>> from exactref.linalg import dot
    >>> dot([1e16, 1.0, -1e16], [1.0, 1.0, 1.0]).rounded.tolist()
    1.0
    """
    A, B = _array_operand(a, "a"), _array_operand(b, "b")
    if A.array.ndim != 1 or B.array.ndim != 1:
        raise ValueError(f"dot needs two 1-D arrays, got shapes {A.array.shape} and "
                         f"{B.array.shape}; use matmul for matrices")
    if A.array.shape != B.array.shape:
        raise ValueError(f"dot: a of shape {A.array.shape} and b of shape {B.array.shape} must "
                         f"have the same length")
    return _gemm_impl(A.array, B.array, None, 1, 1, False, False, dtype, rounding, overflow,
                      compute, order, fused, products, op="dot", policy=policy, flush=flush)


def gemm(a, b, c=None, *, alpha=1, beta=1, trans_a=False, trans_b=False, dtype=None,
         rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER, fused=None,
         products=None, policy="torch", flush=None):
    """``alpha * op(a) @ op(b) + beta * c`` (BLAS gemm, torch.addmm), each element one exact
    sum rounded once; ``op(x)`` transposes the last two dimensions where ``trans_x``.

    ``alpha`` and ``beta`` are taken exactly (Python or exactref scalars, complex too). As in
    BLAS, ``beta == 0`` does not read ``c`` (NaN in it does not propagate) and ``alpha == 0``
    does not compute the product. ``c`` broadcasts to the output. The tolerance is the
    any-order bound over the ``k + 1`` terms (``4k + 2`` real terms per part when complex),
    with alpha applied to each product or to the sum.

    >>> from exactref.linalg import gemm
    >>> gemm([[1.0, 2.0]], [[3.0], [4.0]], [[0.5]], alpha=2, beta=-1).rounded.tolist()
    [[21.5]]
    """
    return _gemm_impl(a, b, c, alpha, beta, trans_a, trans_b, dtype, rounding, overflow,
                      compute, order, fused, products, op="gemm", policy=policy, flush=flush)


def _scalar_value(v, out: Format, name, op="gemm"):
    v = check_number(name, v, op)
    if isinstance(v, np.ndarray):
        v = v[()]
    if isinstance(v, (ComplexValue, complex)) or (isinstance(v, np.generic)
                                                   and np.iscomplexobj(v)):
        cv = ComplexValue(v)
        if out.kind != "complex":
            if cv.imag.is_zero:
                return FloatValue(cv.real)
            raise ValueError(f"{name}={complex(cv)!r} is complex but the output is {out.name}; "
                             f"use complex operands or a real {name}")
        return cv
    if isinstance(v, bool):
        v = int(v)
    if out.is_integer:
        fv = FloatValue(v) if not isinstance(v, int) else None
        if fv is not None:
            if not (fv.is_finite and fv.to_fraction().denominator == 1):
                raise ValueError(f"{name}={v!r} is not an integer, but the output is "
                                 f"{out.name}; integer results need an integral {name}")
            v = int(fv.to_fraction())
        return int(v)
    if isinstance(v, (np.integer, np.bool_)):
        return int(v)
    try:
        return v if isinstance(v, int) else FloatValue(v)
    except (TypeError, ValueError) as exc:  # a Fraction that is not binary, say
        raise ValueError(f"{op}: {name}={v!r} cannot be taken exactly: {exc}") from None


def _is_zero(v):
    if isinstance(v, ComplexValue):
        return v.real.is_zero and v.imag.is_zero
    if isinstance(v, FloatValue):
        return v.is_zero
    return v == 0


def _is_one(v):
    if isinstance(v, ComplexValue):
        return v.imag.is_zero and not v.real.is_zero and v.real.to_fraction() == 1
    if isinstance(v, FloatValue):
        return v.is_finite and not v.is_zero and v.to_fraction() == 1
    return v == 1


def _mag(v) -> float:
    """|re| + |im| of a scalar (an upper bound of its modulus), as a float64 rounded up."""
    if isinstance(v, ComplexValue):
        return up(abs(float(v.real)) + abs(float(v.imag)))
    return abs(float(v))


def _promoted(o, promoted: Format):
    """An array operand in the promoted format's kind: rounded once into it where it cannot
    hold the operand (as PyTorch casts), converted exactly where an integer or bool operand
    meets a float or complex format that holds it (int8 @ float16)."""
    o = cast_operand(o, promoted)
    kind = o.array.dtype.kind
    if promoted.kind in ("float", "complex") and kind in ("bool", "int", "uint"):
        from .._array import asarray
        return type(o)("array", array=asarray(o.array, promoted), result=o.result, label=o.label)
    return o


def _transpose(arr: Array, flag: bool) -> Array:
    if not flag or arr.ndim < 2:
        return arr
    return Array(np.ascontiguousarray(np.swapaxes(arr.numpy(), -1, -2)), arr.dtype)


def _gemm_impl(a, b, c, alpha, beta, trans_a, trans_b, dtype, rounding, overflow, compute,
               order, fused, products, op, policy="torch", flush=None):
    check_flush(op, flush)
    alpha0, beta0 = alpha, beta  # as given (the reruns below take them so)
    A, B = _array_operand(a, "a"), _array_operand(b, "b")
    C = prepare(c, "c") if c is not None else None
    # alpha and beta as the caller wrote them, for reports (a plain product has none)
    given = {"alpha": alpha, "beta": beta} if C is not None or (alpha, beta) != (1, 1) else {}
    ops = [A, B] + ([C] if C is not None and C.kind == "array" else [])
    promoted, out = output_format(ops, "mul", dtype, policy)
    A, B = _promoted(A, promoted), _promoted(B, promoted)
    if C is not None and C.kind == "array":
        C = _promoted(C, promoted)
    mode, rule = resolve_modes(rounding, overflow, out)
    alpha = _scalar_value(alpha, out, "alpha", op)
    beta = _scalar_value(beta, out, "beta", op)
    for flag, value in (("trans_a", trans_a), ("trans_b", trans_b)):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{op}: {flag}={value!r}; expected True (transpose the last two "
                             f"dimensions) or False")
    a_arr, b_arr = _transpose(A.array, trans_a), _transpose(B.array, trans_b)
    sa, sb, batch, out_shape = _mm_shapes(a_arr.shape, b_arr.shape)
    use_c = C is not None and not _is_zero(beta)
    # k = 0: alpha * op(a) @ op(b) has no terms (BLAS computes C := beta * C; a +0 term
    # would change the sign of a -0 in c)
    use_ab = not _is_zero(alpha) and sa[-1] > 0
    if use_c:
        c_shape = C.shape if C.kind == "array" else ()
        try:
            fits = tuple(np.broadcast_shapes(c_shape, out_shape)) == tuple(out_shape)
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"gemm: c of shape {c_shape} does not broadcast to the output shape "
                             f"{out_shape} (NumPy rules: trailing dimensions must match or be 1); "
                             f"reshape c, or pass beta=0 to leave it out")
    k = sa[-1]
    m, n = sa[-2], sb[-1]
    shape3 = (int(np.prod(batch, dtype=np.int64)), m, n)
    details = {"promoted": promoted, "rounding": mode, "overflow": rule, "k": k}
    label = op
    # ---------------------------------------------------------------- integer formats
    if out.is_integer:
        a3 = _to3(_int_data(a_arr), sa, batch)
        b3 = _to3(_int_data(b_arr), sb, batch)
        total = int_matmul_exact(a3, b3) if use_ab else np.zeros(shape3, np.int64)
        if use_ab and not _is_one(alpha):
            total = np.asarray(total).astype(object) * int(alpha)
        if use_c:
            cv = (np.broadcast_to(_int_data(C.array), out_shape) if C.kind == "array"
                  else np.full(out_shape, int(C.value)))
            total = np.asarray(total).reshape(out_shape).astype(object) + \
                cv.astype(object) * int(beta)
        values = _finish_int(np.asarray(total).reshape(-1), out, rule, out_shape)
        return _record_mm(ExactResult(Array(values, out), op=label, details=details),
                          a_arr, b_arr, C, (trans_a, trans_b), given)
    # ------------------------------------------------------------------ float formats
    complex_out = out.kind == "complex"
    Ap = [_to3(p, sa, batch) for p in _parts(a_arr)]
    Bp = [_to3(p, sb, batch) for p in _parts(b_arr)]
    pa, pb = _precision(a_arr), _precision(b_arr)
    pairs = _product_parts(Ap, Bp, complex_out)
    simple = use_ab and _is_one(alpha) and not use_c
    comp = out.component
    values, exacts = [], []
    if simple:
        for pA, pB in pairs:
            ex = matmul_exact(pA, pB, pa, pb)
            exacts.append(ex)
            values.append(ex.round(comp, mode, rule)[0].reshape(out_shape))
    else:
        prod_ops = [matmul_operand(pA, pB, pa, pb)[0] for pA, pB in pairs] if use_ab else None
        if prod_ops is not None and len(prod_ops) == 1:
            prod_ops.append(None)
        n_out = int(np.prod(shape3, dtype=np.int64))
        c_ops = None
        if use_c:
            c_ops = _c_operands(C, out_shape, complex_out)
        part_terms = [[] for _ in range(2 if complex_out else 1)]
        if use_ab:
            for i, terms in enumerate(_scaled_terms(prod_ops, alpha, complex_out)):
                part_terms[i] += terms
        if use_c:
            for i, terms in enumerate(_scaled_terms(c_ops, beta, complex_out)):
                part_terms[i] += terms
        for terms in part_terms:
            terms = [t for t in terms if all(o is not None for o in t)]
            if not terms:
                terms = [(ExactPart.from_scalar(0.0),)]
            ex = sum_of_products(terms, (n_out,))
            ex.shape = tuple(out_shape)
            exacts.append(ex)
            values.append(ex.round(comp, mode, rule)[0].reshape(out_shape))
    rounded = to_array(values, out, out_shape)
    model = _model(out, compute, order, fused, products, mode, ftz=flushes_outputs(flush))
    models = [f"exact value rounded once into {out.name}",
              "accumulated " + model.describe() + f", then rounded into {out.name}"]

    def bounds():
        res = []
        for i, ex in enumerate(exacts):
            if simple:
                pA, pB = pairs[i]
                kk = pA.shape[-1]
                pbits = pa + pb
                if model.order == "sequential" and not complex_out:
                    w = coefficients(model, kk, product_bits=pbits)
                else:
                    w = float(coefficients(_any_if_complex(model, complex_out), kk,
                                           product_bits=pbits))
                b_, ts = products_bound(pA, pB, w, model.eta + model.products_eta, kk)
            else:
                ts = _gemm_abs(Ap, Bp, C, alpha, beta, use_ab, use_c, out_shape, shape3)
                nterms = (4 * k + 2) if complex_out else (k + 1)
                anym = SumModel(model.compute, "any", None, model.products, mode)
                coef = float(coefficients(anym, nterms))
                u = model.unit(model.compute)
                eta = model.eta + model.products_eta
                # underflow: below a quantum per rounding, scaled by |alpha| where alpha scales
                # the sum or each product afterwards; reference BLAS scales a factor first
                # (temp = alpha * b; c += temp * a), whose underflow |a| multiplies
                b_ = scaled_bound((1 + coef) * (1 + u) - 1, ts) + 2 * nterms * eta * max(
                    _mag(alpha), 1.0)
                if use_ab and not _is_one(alpha):
                    b_ = b_ + eta * _factor_sums(Ap, Bp, shape3)
                if min(_mag(alpha), _mag(beta)) < 1:  # partial sums before the scaling
                    ts = _gemm_abs(Ap, Bp, C, alpha, beta, use_ab, use_c, out_shape, shape3,
                                   partial=True)
                b_ = np.where(_gemm_nonzero(Ap, Bp, C, use_ab, use_c, out_shape, shape3), b_,
                              0.0)
            res.append(interval(ex, b_, out, model, mode, ts, out_shape, rule))
        return res

    result = BoundResult(rounded, bounds, op=label, models=models,
                         details=dict(details, products=True, **_order_details(model, order)))
    result._exacts = exacts  # the exact sums, for rounding="stochastic"
    # the same call under another order (the weak check says what a declared order gives)
    result._with_order = lambda o: _gemm_impl(a, b, c, alpha0, beta0, trans_a, trans_b, dtype,
                                              rounding, overflow, compute, o, fused, products,
                                              op, policy, flush)
    c_arr = C.array if C is not None and C.kind == "array" else c
    result = apply_flush(
        result, flush, out, model.compute.smallest_normal, [A.array, B.array, c_arr],
        lambda fa, fb, fc, flush: _gemm_impl(fa, fb, fc, alpha0, beta0, trans_a, trans_b, dtype,
                                             rounding, overflow, compute, order, fused,
                                             products, op, policy, flush))
    return _record_mm(result, a_arr, b_arr, C, (trans_a, trans_b), given)


# ------------------------------------------------------------------------------ inputs
def _record_mm(result, a: Array, b: Array, C, trans, scalars):
    """``result`` with its inputs recorded, and ``input_slices(index)``: the row of ``a`` and
    the column of ``b`` that the output element at ``index`` reads (``c``'s element, alpha
    and beta for gemm), for failure reports."""
    names = [("op(a)" if trans[0] else "a"), ("op(b)" if trans[1] else "b")]
    result.inputs = {names[0]: a, names[1]: b}
    if scalars:  # gemm: c, alpha and beta
        if C is not None:
            result.inputs["c"] = C.array if C.kind == "array" else C.value
        result.inputs.update(scalars)
    a1, b1 = a.ndim == 1, b.ndim == 1
    nbatch = result.rounded.ndim - (0 if a1 else 1) - (0 if b1 else 1)

    def own(shape, batch):  # a broadcast operand's own batch index
        lead = batch[len(batch) - len(shape):] if shape else ()
        return tuple(0 if size == 1 else k for k, size in zip(lead, shape, strict=True))

    def slices(index):
        index = tuple(int(k) for k in index)
        batch = index[:nbatch]
        out = []
        ia = (slice(None),) if a1 else own(a.shape[:-2], batch) + (index[nbatch], slice(None))
        ib = (slice(None),) if b1 else own(b.shape[:-2], batch) + (slice(None), index[-1])
        out.append((f"{names[0]}[{_index_text(ia)}]", a[ia]))
        out.append((f"{names[1]}[{_index_text(ib)}]", b[ib]))
        if C is not None and C.kind == "array":
            ic = own(C.array.shape, index)
            out.append((f"c[{_index_text(ic)}]" if ic else "c", C.array[ic]))
        return out

    result.input_slices = slices
    return result


def _index_text(index) -> str:
    return ", ".join(":" if isinstance(k, slice) else str(k) for k in index)


def _any_if_complex(model, complex_out):
    if complex_out and model.order == "sequential":
        return SumModel(model.compute, "any", model.fused, model.products, model.mode)
    return model


def _c_operands(C, out_shape, complex_out):
    if C.kind == "scalar":
        return scalar_parts(C.value)
    ps = _parts(C.array)
    ops = []
    for p in ps:
        full = np.ascontiguousarray(np.broadcast_to(p, out_shape)).reshape(-1)
        ops.append(ExactPart.from_float64(full))
    if len(ops) == 1:
        ops.append(ExactPart.from_scalar(0.0) if complex_out else None)
    return ops


def _scaled_terms(X, scalar, complex_out):
    """Per output part, the terms of ``x * scalar`` (``X``: the engine operands ``[re, im]`` of
    ``x``, ``im`` None for a real one; ``scalar`` exact): ``re = xr sr - xi si``, ``im = xr si +
    xi sr``; a term with an absent factor is None (left out). The minus sign goes to the
    scalar's part, so no array operand is negated."""
    xr, xi = X
    sr, si = scalar_parts(scalar)
    nsi = None if si is None else scalar_parts(-scalar.imag)[0]

    def term(*factors):
        return factors if all(f is not None for f in factors) else (None,)

    re = [term(xr, sr), term(xi, nsi)]
    if not complex_out:
        return [re]
    return [re, [term(xr, si), term(xi, sr)]]


def _factor_sums(Ap, Bp, shape3):
    """Per element, an upper bound of ``sum_l |a_il| + sum_l |b_lj|`` over the finite values
    (complex parts added; an element reading an inf or NaN is set by the special values)."""
    def fin(x):
        return np.where(np.isfinite(x), np.abs(x), 0.0)

    aa = fin(Ap[0]) + (fin(Ap[1]) if len(Ap) > 1 else 0)
    bb = fin(Bp[0]) + (fin(Bp[1]) if len(Bp) > 1 else 0)
    k = aa.shape[-1]
    with np.errstate(over="ignore"):
        ra = aa.sum(axis=-1, keepdims=True)  # (batch, m, 1)
        cb = bb.sum(axis=-2, keepdims=True)  # (batch, 1, n)
        tot = slack_up(ra + cb, k + 2)
    return np.broadcast_to(tot, shape3).reshape(-1)


def _gemm_nonzero(Ap, Bp, C, use_ab, use_c, out_shape, shape3):
    """Per element (flat), whether any term of ``alpha * a @ b + beta * c`` may be nonzero
    (complex: either part of a factor nonzero)."""
    def some(parts):
        return parts[0] if len(parts) == 1 else np.where(parts[0] != 0, parts[0], parts[1])

    hit = np.zeros(shape3, bool)
    if use_ab:
        hit |= nonzero_terms(some(Ap), some(Bp))
    if use_c:
        if C.kind == "array":
            cc = some(_parts(C.array)) != 0
            hit |= np.broadcast_to(cc, out_shape).reshape(shape3)
        else:
            hit |= not _is_zero(C.value)
    return hit.reshape(-1)


def _gemm_abs(Ap, Bp, C, alpha, beta, use_ab, use_c, out_shape, shape3, partial=False):
    """Upper bound of the sum of |terms| per element (the same for both parts). ``partial``:
    of every partial sum an implementation may form instead, for its overflow: the products'
    sum may be formed before a small ``alpha`` scales it (and ``c`` before ``beta``)."""
    def mag(v):
        return max(_mag(v), 1.0) if partial else _mag(v)

    total = np.zeros(shape3)
    if use_ab:
        aa = np.abs(Ap[0]) + (np.abs(Ap[1]) if len(Ap) > 1 else 0)
        bb = np.abs(Bp[0]) + (np.abs(Bp[1]) if len(Bp) > 1 else 0)
        with np.errstate(over="ignore"):
            total = total + mag(alpha) * abs_sum_products(aa, bb) * (1 + 2.0**-50)
    if use_c:
        if C.kind == "array":
            cp = _parts(C.array)
            cc = np.abs(cp[0]) + (np.abs(cp[1]) if len(cp) > 1 else 0)
            cc = np.broadcast_to(cc, out_shape).reshape(shape3)
        else:
            cc = _mag(C.value)
        with np.errstate(over="ignore"):
            total = total + mag(beta) * cc * (1 + 2.0**-50)
    return up(total).reshape(-1)


# ----------------------------------------------------------------------------------- sum
def _sum_axes(axis, shape) -> tuple:
    """The axes ``axis`` names (None: every one), each in ``[0, ndim)``, checked as numpy checks
    them: an axis out of range raises numpy's AxisError (a ValueError and an IndexError), one
    that is not an integer a TypeError, a repeated one a ValueError. A 0-d array takes axis 0
    or -1, as ``torch.sum`` does, and has nothing to reduce."""
    nd = len(shape)
    if axis is None:
        return tuple(range(nd))
    items = axis_items("axis", axis)
    span = max(nd, 1)  # a 0-d array takes axis 0 or -1, as torch.sum does
    for a in items:
        if not -span <= int(a) < span:
            raise np.exceptions.AxisError(
                f"axis {int(a)} is out of bounds for an array of {nd} dimension"
                f"{'' if nd == 1 else 's'} (shape {tuple(shape)}): axes lie in [-{span}, "
                f"{span - 1}]; pass one of them, or axis=None to sum every element")
    axes = tuple(int(a) % span for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis={axis!r} is not valid for an array of shape {tuple(shape)}: "
                         f"axes must lie in [-{span}, {span}) and not repeat; name each axis "
                         f"once")
    return axes if nd else ()


def sum(x, axis=None, *, keepdims=None, dim=None, keepdim=None, dtype=None,  # noqa: A001
        rounding=_NE, overflow=None, compute=None, order=DEFAULT_ORDER, policy="torch",
        flush=None):
    """The sum of ``x``'s elements over ``axis`` (None: all; an int or a tuple), each output
    element the exact sum rounded once. ``dim`` and ``keepdim`` are torch's spellings of
    ``axis`` and ``keepdims`` (either may be given; both only when they agree).

    The output format is PyTorch's: bool and integer inputs sum into int64, floats into their own
    format (``dtype`` names another; ``policy="numpy"``: unsigned integers into uint64, as
    numpy 2). The tolerance bounds every implementation that
    accumulates in ``compute`` (default: float32 for the narrow floats) in the ``order``
    declared (default ``"library"``: the orders of NumPy's pairwise sum, PyTorch's CPU cascade
    and CUDA reduction, Triton's ``tl.sum``; ``"any"``, ``"pairwise"``, ``"sequential"``,
    ``"blocked(b)"``, ``"split_k(s)"``, ``"tree(f)"``: docs/reductions.md). ``flush``: None,
    ``"inputs"``, ``"outputs"`` or ``"both"``: a kernel that may flush subnormal inputs (DAZ)
    or results and partial sums (FTZ) to zero (:mod:`exactref.linalg._flush`).

    >>> import exactref as er
    >>> from exactref.linalg import sum
    >>> sum(er.asarray([1.0, 2.0**-24, 2.0**-24], "float32")).rounded.tolist()
    1.0000001192092896
    """
    axis, keepdims = _spelling("sum", axis, dim, keepdims, keepdim)
    check_flush("sum", flush)
    X = prepare(x, "x")
    if X.kind != "array":
        raise ValueError("sum needs an array; got a scalar (its sum is itself: pass "
                         "np.asarray([x]) to get a Result)")
    arr = X.array
    fmt = arr.dtype
    out = sum_format("sum", fmt, dtype, policy)
    if (out.kind == "complex") != (fmt.kind == "complex") and not fmt.is_integer:
        raise ValueError(f"dtype={out.name} is not of x's kind ({fmt.name}); pass a "
                         f"{fmt.kind} dtype, or convert x first")
    if fmt.kind in ("float", "complex") and out.is_integer:
        raise ValueError(f"dtype={out.name} is an integer format but x is {fmt.name}; convert x "
                         f"first")
    mode, rule = resolve_modes(rounding, overflow, out)
    nd = arr.ndim
    axes = _sum_axes(axis, arr.shape)
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(arr.shape[d] for d in keep)
    kd_shape = tuple(1 if d in axes else arr.shape[d] for d in range(nd))
    final_shape = kd_shape if keepdims else out_shape
    K = int(np.prod([arr.shape[d] for d in axes], dtype=np.int64))
    M = int(np.prod(out_shape, dtype=np.int64))

    def rows(data):
        return np.ascontiguousarray(np.transpose(data, keep + list(axes))).reshape(M, K)

    details = {"rounding": mode, "overflow": rule, "k": K}
    if out.is_integer or fmt.is_integer:
        if fmt.kind == "bool" or fmt.is_integer:
            total = int_rowsum_exact(rows(_int_data(arr)))
        if out.is_integer:
            vals = _finish_int(np.asarray(total), out, rule, final_shape)
            return _record(ExactResult(Array(vals, out), op="sum", details=details), arr,
                               axes, keepdims)
        # integers summed into a float format: the exact integer rounded once
        from .._array import asarray as _asarray
        vals = _asarray(np.asarray(total, dtype=object).reshape(final_shape).tolist()
                        if np.asarray(total).dtype == object else
                        np.asarray(total).reshape(final_shape), out, rounding=mode,
                        overflow=rule)
        return _record(ExactResult(vals, op="sum", details=details), arr, axes, keepdims)
    parts = [rows(p) for p in _native_parts(arr)]
    prec = _precision(arr)
    comp = out.component
    exacts = [rowsum_exact(p, prec) for p in parts]
    values = [ex.round(comp, mode, rule)[0].reshape(final_shape) for ex in exacts]
    if out.kind == "complex" and len(values) == 1:
        values.append(np.zeros(final_shape))
    rounded = to_array(values, out, final_shape)
    order = order_for_axes(order, axes, arr.shape)
    model = _model(out, compute, order, False, None, mode, ftz=flushes_outputs(flush))

    def bounds():
        res = []
        for p, ex in zip(parts, exacts, strict=True):
            p = p.astype(np.float64, copy=False)  # the bounds sum in float64
            ts = abs_rowsum(p)
            if model.order.positional:
                b_ = abs_rowsum(p, coefficients(model, K, with_products=False,
                                                term_bits=prec))
            else:
                b_ = scaled_bound(float(coefficients(model, K, with_products=False,
                                                     term_bits=prec)), ts)
            b_ = b_ + 2 * K * model.eta
            b_ = np.where(nonzero_terms(p), b_, 0.0)  # a sum of exact zeros is exact
            res.append(interval(ex, b_, out, model, mode, ts, final_shape, rule))
        if out.kind == "complex" and len(res) == 1:
            z = np.zeros(final_shape)
            res.append((z, z, np.zeros(final_shape, bool)))
        return res

    models = [f"exact value rounded once into {out.name}",
              "accumulated " + model.describe(products=False) + f", then rounded into {out.name}"]
    result = BoundResult(rounded, bounds, op="sum", models=models,
                         details=dict(details, **_order_details(model, order)))
    result._with_order = lambda o: sum(x, axis, keepdims=keepdims, dtype=dtype,
                                       rounding=rounding, overflow=overflow, compute=compute,
                                       order=o, policy=policy, flush=flush)
    result = apply_flush(result, flush, out, model.compute.smallest_normal, [arr],
                         lambda a, flush: sum(a, axis, keepdims=keepdims, dtype=dtype,
                                              rounding=rounding, overflow=overflow,
                                              compute=compute, order=order, policy=policy,
                                              flush=flush))
    return _record(result, arr, axes, keepdims)


# ----------------------------------------------------------------------------- registry
def register_long_sums() -> None:
    """The long sums' records in the op registry (their backward attached)."""
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, register

    # the audit's groups: operands of these shapes (exactref.audit's "matrices" builder)
    audits = {matmul: AuditPlan(data={"operands": ((8, 48), (48, 8))}),
              # gemm's kernel receives a, b, c and alpha, beta, trans_a, trans_b
              gemm: AuditPlan(data={"operands": ((8, 48), (48, 8), (8, 8)), "params": {
                  "alpha": 0.5, "beta": -1.5, "trans_a": False, "trans_b": False},
                  "more": ((((48, 8), (8, 48), (8,)), {"alpha": 1.0, "beta": 1.0,
                                                       "trans_a": True, "trans_b": True}),)}),
              dot: AuditPlan(data={"operands": ((48,), (48,))}),
              sum: AuditPlan(data={"operands": ((8, 48),), "params": {"axis": -1}})}
    for fn, operands, summary, promo, cp in (
            (matmul, ("a", "b"), "a @ b, each element one exact sum rounded once", "mul",
             Counterparts(Counterpart("torch.matmul", contract={"order": "any"}),
                          "np.matmul", "jnp.matmul")),
            (gemm, ("a", "b", "c"), "alpha * a @ b + beta * c, rounded once", "mul",
             Counterparts("torch.addmm", None, None)),
            (dot, ("a", "b"), "the dot product of two vectors, rounded once", "mul",
             Counterparts("torch.dot", "np.dot", "jnp.dot")),
            (sum, ("x",), "the sum over axes, rounded once", "sum",
             Counterparts(Counterpart("torch.sum", contract={"order": "any"}), "np.sum",
                          "jnp.sum"))):
        fn.spec = register(OpSpec(
            name=fn.__name__, operands=operands, kernel="long sum", promotion=promo,
            function=fn, summary=summary, backward=getattr(fn, "backward", None),
            models=("exact", "any summation order in the compute format", "pairwise",
                    "sequential"), counterparts=cp, family="linalg",
            audit=audits.get(fn, AuditPlan())))
