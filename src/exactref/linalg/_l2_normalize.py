"""``l2_normalize``: ``x / max(||x||_2, eps)`` along ``dim`` (torch.nn.functional.normalize),
each element the exact value rounded once: a row kernel declared from its record alone.

The exact value is the row-root kernel's :data:`~._norms_exact.CLAMPED` form,
``x / sqrt(max(Q, eps**2))`` with ``Q = sum x**2`` exact and ``eps``'s exact binary value,
decided as rms_norm's (float64 or double-double enclosures, exact integer roots otherwise).

The tolerance models what PyTorch computes (``torch/nn/functional.py``: ``input /
input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)``): the norm a reduction
in the compute format (PyTorch's opmath: float32 for the half formats) in any order, its
root rounded there and the norm stored in the output format; the clamp at ``eps`` rounded
into the output format (float16 rounds ``1e-12`` to 0, so a zero row is ``0 / 0``: NaN in
PyTorch); the quotient rounded in the compute format, then into the output format.
"""

from __future__ import annotations

import numpy as np

from .._array import asarray
from .._exact import Rounding, down, up
from .._formats import Format
from ..ops import names_of
from ._bounds import _NE, DEFAULT_ORDER
from ._norms import NormModel, _eps, _float_array, _rnd, _rows_of, _run, square_sum_ends
from ._norms_exact import CLAMPED
from ._reductions import reduction_axes, row_policy

__all__ = [*names_of(__name__)]



def l2_normalize(x, p=2.0, dim=1, eps=1e-12, *, dtype=None, rounding=_NE, overflow=None,
                 compute=None, order=DEFAULT_ORDER, policy="torch"):
    """``x / max(||x||_2, eps)`` over ``dim`` (torch.nn.functional.normalize's signature; only
    ``p=2``), with the exact norm and ``eps``'s exact binary value, rounded once into ``dtype``
    (default x's format). The tolerance covers the norm summed in ``compute`` (default
    PyTorch's opmath: float32 for the half formats) in ``order``, then stored in x's format,
    clamped at ``eps`` in that format, and the quotient rounded in ``compute`` then x's
    format.

    >>> import exactref as er
    >>> er.l2_normalize(er.asarray([[3.0, 4.0], [0.0, 0.0]], "float32")).rounded.tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    op = "l2_normalize"
    row_policy(op, policy)
    if isinstance(p, bool) or p != 2:
        raise ValueError(f"{op}: p={p!r}; only the 2-norm (p=2) is modelled")
    arr = _float_array(op, x, "x")
    shape = tuple(arr.shape)
    if len(shape) == 0:
        raise ValueError(f"{op}: x is 0-d; pass an array with the dimension dim={dim!r}")
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) != 1):
        raise ValueError(f"{op}: dim={dim!r}; the norm is taken along one dimension (an int)")
    (axis,) = reduction_axes(op, dim, shape)
    e = _eps(op, eps)
    data = np.ascontiguousarray(np.moveaxis(np.asarray(arr.numpy()), axis, -1))
    moved = data.shape
    rows = asarray(data, arr.dtype)  # the rows of the normalized dimension, last
    X = _rows_of(rows, moved[-1], native=True)

    def place(v):
        return np.moveaxis(np.asarray(v).reshape(moved), -1, axis)

    res = _run(op, rows, X, None, None, e, CLAMPED, shape,
               (rounding, overflow, compute, order, "any", None, None, True, "centered"),
               ends=_ends, describe=_describe, place=place, dtype=dtype)
    res.inputs = {"x": arr}
    # no algorithm to choose (the norms' weak check is about mean/variance algorithms): the
    # tolerance is wide only where the sum of squares overflows, as the kernel's does
    res.details["declared"] = True
    return res


def _describe(model: NormModel, out: Format) -> str:
    return (f"the norm summed in {model.compute.name} in {model.order} order, its root there, "
            f"stored in {out.name}; clamped at eps in {out.name}; the quotient in "
            f"{model.compute.name}, rounded into {out.name}")


def _ends(rows, arr_rows, out: Format, model: NormModel, VS, eS, VQ, eQ, reduced=None):
    """``(lo, hi, nan)`` per element ``(M, n)`` before the output rounding: the norm's ends
    (its sum's from :func:`~._norms.square_sum_ends`, the root, the norm stored in the output
    format), clamped at eps's roundings into the output format, and the quotient's."""
    c, o, mode = model.compute, out.component, model.mode
    X = rows.X
    e = float(rows.eps)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        slo, shi = square_sum_ends(rows, model, VQ, eQ)
        nlo = _rnd(_rnd(down(np.sqrt(slo)), c, mode), o, mode)
        nhi = _rnd(_rnd(up(np.sqrt(shi)), c, mode), o, mode)
        elo = _rnd(np.array(e), o, Rounding.TOWARD_NEGATIVE)
        ehi = _rnd(np.array(e), o, Rounding.TOWARD_POSITIVE)
        dlo = np.maximum(nlo, elo)[:, None]
        dhi = np.maximum(nhi, ehi)[:, None]
        a = np.where(X >= 0, X / dhi, X / dlo)
        b = np.where(X >= 0, X / dlo, X / dhi)
        zero = X == 0
        lo = np.where(zero, 0.0, _rnd(down(a), c, mode))
        hi = np.where(zero, 0.0, _rnd(up(b), c, mode))
    # 0 / 0 where the norm and the clamp may both be 0 (eps rounds to 0 in the output format)
    nan = np.isnan(lo) | np.isnan(hi) | (zero & (dlo == 0))
    lo = np.where(np.isnan(lo), -np.inf, lo)
    hi = np.where(np.isnan(hi), np.inf, hi)
    return lo, hi, nan


# ----------------------------------------------------------------------------- registry
def _register() -> None:
    from ..ops import AuditPlan, Counterpart, Counterparts, OpSpec, Param, register

    l2_normalize.spec = register(OpSpec(
        name="l2_normalize", operands=("x",), kernel="row root", promotion="rsqrt",
        function=l2_normalize,
        summary="x / max(||x||_2, eps) over dim, exactly, rounded once",
        params=(Param("p", 2.0), Param("dim", 1), Param("eps", 1e-12, audit=(1e3,))),
        exact=CLAMPED, models=("exact", "the norm in the compute format in any order, its "
                               "root, stored in the output format; clamped at eps there; "
                               "the quotient in the compute format"),
        kinds=("float",), family="linalg",
        counterparts=Counterparts(torch=Counterpart(
            "torch.nn.functional.normalize",
            # torch's kernel is this op's default model (opmath compute, any order)
            contract={"order": "any"},
            departures=("eps is clamped in the input's format: float16 rounds 1e-12 to 0, "
                        "so a zero row is 0 / 0 (NaN)",),
            source="torch/nn/functional.py normalize (torch 2.13): input / input.norm(p, "
                   "dim, keepdim=True).clamp_min(eps).expand_as(input)")),
        # the audit's generic "rows" groups: rows of the last axis; eps=1e3 clamps every row
        # (a kernel that ignores eps, or misses the root, fails it)
        audit=AuditPlan(groups="rows", data={
            "cases": (((8, 4096), "random"), ((16, 64), "offset"), ((4, 256), "constant"),
                      ((4, 256), "huge"), ((6, 64), "edges"), ((6, 1), "random")),
            "operands": ("x",), "params": {"dim": -1}, "vary": ("eps",), "min_bits": 16})))


_register()
