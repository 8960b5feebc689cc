"""Auditing a custom affine quantizer: ``exactref audit module:function --op quantize_linear``
(or ``--op dequantize_linear``).

A quantize kernel is called as ``function(x, scale, zero_point, dtype=..., axis=...,
block_size=...)`` (the record's ``AuditPlan.call``) on a 2-D numpy array ``x`` of the input
format, a positive scale of that format and a zero point in the output format's range (0 for
the float outputs), and returns the codes; a dequantize kernel gets ``function(codes, scale,
zero_point, axis=..., block_size=...)`` and returns the values (the scale's format). Each group
draws one granularity (``tensor``: a scalar scale, ``axis``: one per row, ``blocked``: one per
8 elements of a row) and checks the output with ``er.quantize_linear(...).covers`` under the
declared contract (``--set divide=...``, ``--compute``). The drawn values sit where kernels
part: exact ties ``(n + 1/2) * scale``, their neighbours, values past the saturation ends,
signed zeros and infinities, and random values across the range.

A runtime target runs these groups too where its table has the op (``exactref audit
onnxruntime``: QuantizeLinear and DequantizeLinear, in the code formats of the entry's
``data["codes"]``), under the table's declared contract; its failing element's reproducer
runs the element, per tensor, through the runtime's own API.
"""

from __future__ import annotations

import zlib

import numpy as np

from .._array import asarray
from .._formats import FORMATS
from ._runtime import RuntimeTarget

__all__ = ["plan", "draw", "audit_linear_group", "GRANULARITIES", "PLAN"]

#: the records' plan these groups are for (``OpSpec.plan``)
PLAN = "linear"

GRANULARITIES = ("tensor", "axis", "blocked")
_BLOCK = 8
#: the output (quantize) or code (dequantize) formats audited
_CODES = ("int8", "uint8", "int16", "int4", "float8_e4m3fn")
_DEFAULT_DTYPES = ("float32", "bfloat16", "float16")


def _dequantizes(op) -> bool:
    """Whether the op reads codes (dequantize: its record takes integer inputs)."""
    from ..ops import get_op

    return "int" in get_op(op).kinds


def plan(cfg, dtypes, op) -> list:
    """``(op, [(input format, shape)], params)`` per input (scale) format, code format and
    granularity; ``samples`` elements each, in rows of 16."""
    names = [d.name for d in dtypes] if dtypes else list(_DEFAULT_DTYPES)
    cols = 2 * _BLOCK
    rows = max(2, -(-cfg.samples // cols))
    return [(op, [(FORMATS[n], (rows, cols))], {"codes": c, "data": g})
            for n in names if FORMATS[n].kind == "float" and 16 <= FORMATS[n].bits <= 64
            for c in _CODES for g in GRANULARITIES]


def _scale_shape(shape, granularity):
    rows, cols = shape
    return {"tensor": (), "axis": (rows,), "blocked": (rows, -(-cols // _BLOCK))}[granularity]


def draw(fmt, shape, params, rng, dequantize: bool):
    """The operands and keywords of one group: ``(args, kwargs)``."""
    codes = FORMATS[params["codes"]]
    granularity = params["data"]
    sshape = _scale_shape(shape, granularity)
    kw = {"axis": 0 if granularity == "axis" else 1,
          "block_size": _BLOCK if granularity == "blocked" else 0}
    s = np.ldexp(rng.uniform(1, 2, sshape), rng.integers(-8, 3, sshape))
    s = np.where(rng.random(sshape) < 0.3, np.ldexp(1.0, rng.integers(-6, 3, sshape)), s)
    scale = asarray(s, fmt).numpy()
    if codes.is_integer:
        zp = rng.integers(codes.int_min, codes.int_max, sshape, endpoint=True)
        zp = np.asarray(zp, dtype=codes.np_dtype)
        lo, hi = codes.int_min, codes.int_max
    else:
        zp = np.zeros(sshape, dtype=codes.np_dtype)
        lo, hi = -codes.max_finite, codes.max_finite
    if dequantize:
        if codes.is_integer:
            x = rng.integers(lo, hi, shape, endpoint=True).astype(codes.np_dtype)
        else:
            x = asarray(rng.normal(0, hi / 8, shape), codes, overflow="saturate").numpy()
        return [x, scale, zp], kw
    if granularity == "tensor":
        sb = np.broadcast_to(s, shape)
    elif granularity == "axis":
        sb = np.broadcast_to(s.reshape(-1, 1), shape)
    else:
        sb = np.repeat(s, _BLOCK, axis=1)[:, :shape[1]]
    span = (hi - lo) if codes.is_integer else 2 * hi
    n = rng.integers(int(lo) - 2, int(hi) + 2, shape) if codes.is_integer else \
        np.round(rng.normal(0, hi / 4, shape))
    kind = rng.integers(0, 5, shape)
    ties = (n + 0.5) * sb
    values = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                       [ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf),
                        rng.normal(0, span, shape) * sb],
                       rng.uniform(-1.5, 1.5, shape) * span * sb)
    x = np.array(asarray(values, fmt).numpy())  # a writable copy
    x.reshape(-1)[:4] = asarray([0.0, -0.0, np.inf, -np.inf], fmt).numpy()
    return [x, scale, zp], {"dtype": codes.name, **kw}


def audit_linear_group(target, op, specs, params, cfg):
    """One group of an affine quantizer's audit (a :class:`~exactref.audit.GroupReport`)."""
    from . import GroupReport, KernelFault, _applied, _exc_text, _GroupStopped, _hex
    from ._calls import KernelTimeout, call_with_timeout
    from ._contracts import call_reference

    fmt, shape = specs[0]
    g = GroupReport(op, [f"{fmt.name}[{shape[0]},{shape[1]}]"], dict(params))
    rng = np.random.default_rng([cfg.seed, zlib.crc32(g.key.encode())])
    dequantize = _dequantizes(op)
    args, kw = draw(fmt, shape, params, rng, dequantize)
    g.expected_dtype = fmt.name if dequantize else params["codes"]
    try:
        out = call_with_timeout(target.run, (op, tuple(args), dict(kw)), timeout=cfg.timeout,
                                what=f"{target.name} on the group {g.key}")
    except KernelTimeout as exc:
        g.status, g.message = "fail", str(exc)
        raise _GroupStopped(g) from None
    except KernelFault as exc:
        g.status, g.message = "fail", str(exc)[:600]
        return g
    except Exception as exc:  # the kernel's own refusal of this input format
        if target.unsupported(exc):
            g.status, g.message = "unsupported", _exc_text(exc)[:200]
            return g
        raise
    try:
        ref = call_reference(op, tuple(args), {**kw, **_declared(target, op, fmt)},
                             target.user_contract_for(op))
    except ValueError as exc:  # a contract value the op refuses, named by it
        g.status, g.message = "fail", str(exc)[:300]
        return g
    g.contract = _applied(ref, target, op)
    got = np.asarray(out)
    g.got_dtype = str(got.dtype)
    try:
        cov = ref.covers(got)
    except (TypeError, ValueError) as exc:
        g.status, g.message = "fail", f"the kernel's output does not read as codes: {exc}"[:300]
        return g
    mask = np.asarray(cov.mask).reshape(-1)
    g.cases = mask.size
    g.covered = int(np.count_nonzero(mask))
    first = np.asarray(ref.rounded.numpy()).astype(np.float64).reshape(-1)
    with np.errstate(invalid="ignore"):
        flat = got.astype(np.float64).reshape(-1)
        g.exact = int(np.count_nonzero((flat == first) | (np.isnan(flat) & np.isnan(first))))
    g.tol_median_ulps, g.tol_max_ulps = cov.tolerance_stats
    if g.uncovered:
        g.status = "fail"
        i = int(np.ravel_multi_index(cov.worst_index, shape)) if cov.worst_index is not None \
            else int(np.flatnonzero(~mask)[0])
        with np.errstate(invalid="ignore"):
            x = np.asarray(args[0]).astype(np.float64).reshape(-1)
        s = _broadcast(np.asarray(args[1], np.float64), shape, kw).reshape(-1)
        z = _broadcast(np.asarray(args[2], np.float64), shape, kw).reshape(-1)
        lo = float(np.asarray(ref.lowest).reshape(-1)[i])
        hi = float(np.asarray(ref.highest).reshape(-1)[i])
        g.max_ulps = float(cov.worst_ulps)
        g.worst = {"index": [int(v) for v in np.unravel_index(i, shape)],
                   "inputs": {"x": _hex(x[i]), "scale": _hex(s[i]), "zero point": f"{z[i]:g}"},
                   "actual": _hex(flat[i]), "expected": _hex(first[i]),
                   "allowed": [_hex(lo), _hex(hi)], "ulps": g.max_ulps,
                   "detail": f"got {flat[i]:g}, allowed [{lo:g}, {hi:g}], exact "
                             f"{first[i]:g}",
                   "reproducer": _runtime_reproducer(target, op, args, kw, i) if
                   isinstance(target, RuntimeTarget) else
                   _reproducer(op, fmt, args, kw, float(x[i]), float(s[i]), float(z[i]),
                               float(flat[i]), got.dtype, g.contract)}
        g.message = cov.summary()[:300]
    return g


def _declared(target, op, fmt) -> dict:
    """A runtime's declared contract for the op in the group's format, as the op's keywords
    (the table's ``contract`` and ``formats``; a custom kernel declares none)."""
    if not isinstance(target, RuntimeTarget):
        return {}
    return target._at(fmt.name, target._declared_keywords, op)


#: how many times a runtime's reproducer repeats the failing element (a vectorized path)
_REPEAT = 16


def _runtime_reproducer(target, op, args, kw, i) -> str:
    """The failing element, per tensor and repeated, run through the runtime's own API and
    checked against the reference under the runtime's declared contract."""
    shape = np.shape(args[0])
    x = np.repeat(np.asarray(args[0]).reshape(-1)[i:i + 1], _REPEAT)
    per = [np.asarray(_broadcast(np.asarray(a), shape, kw)).reshape(-1)[i].reshape(())
           for a in args[1:]]
    operands = {"x": x, "scale": per[0], "zero_point": per[1]}
    params = {**{k: v for k, v in kw.items() if k == "dtype"}, "axis": 0, "block_size": 0}
    return target.long_reproducer(op, operands, params)


def _broadcast(param, shape, kw) -> np.ndarray:
    """A scale or zero point per element of the input (the groups' three granularities)."""
    if param.ndim == 0:
        return np.broadcast_to(param, shape)
    if kw["block_size"]:
        return np.repeat(param, kw["block_size"], axis=1)[:, :shape[1]]
    return np.broadcast_to(param.reshape(-1, 1), shape)


def _reproducer(op, fmt, args, kw, x, s, z, got, got_dtype, contract) -> str:
    """The failing element as a per-tensor call of the reference."""
    xfmt = str(np.asarray(args[0]).dtype)
    zfmt = str(np.asarray(args[2]).dtype)
    rest = "".join(f", {k}={v!r}" for k, v in kw.items() if k == "dtype")
    c = f", contract=er.Contract(**{contract!r})" if contract else ""
    return (f"import numpy as np, ml_dtypes, exactref as er\n"
            f"x = np.asarray([{x!r}]).astype({_np_name(xfmt)})\n"
            f"scale = np.asarray({s!r}).astype({_np_name(fmt.name)})\n"
            f"zero_point = np.asarray({z!r}).astype({_np_name(zfmt)})\n"
            f"r = er.{op}(x, scale, zero_point{rest}{c})\n"
            f"print(r.covers(np.asarray([{got!r}]).astype({_np_name(str(got_dtype))}))"
            f".summary())")


def _np_name(name: str) -> str:
    ml = name in ("int2", "int4", "uint2", "uint4") or name.startswith(
        ("float8", "float6", "float4", "bfloat"))
    return f"ml_dtypes.{name}" if ml else f"np.{name}"
