"""Auditing a custom block quantizer: ``exactref audit module:function --op quantize --format
mxfp4 [--scale-rule any]``.

The kernel is called as ``function(x)`` on a 2-D numpy array (float32, bfloat16, float16 or
float64) whose last axis holds whole blocks, and returns ``(codes, scales)`` (the element
values, or MXINT8's integers, of ``x``'s shape, and one scale per block) or the dequantized
values. Each group draws one kind of data and checks the output with
``er.quantize(x, format, scale_rule=...).covers(...)``: what a quantizer following a declared
rule produces, element by element. The data kinds:

* ``random``: normal values, each block scaled by a random power of ten (every binade of the
  scale);
* ``edges``: blocks whose largest magnitude sits exactly on a power of two, just below and just
  above it, and on the element format's largest value times a power of two or the next input
  value above it (where the rules part: floor, ceil, even and rceil give different scales
  there, and a float32 ``ceil(log2(amax / max))`` may miss by one), with elements on the
  midpoints between two codes (ties of the element rounding);
* ``extremes``: blocks near the scale's limits (largest magnitudes near the input format's
  largest value and its smallest subnormal), subnormal elements;
* ``specials``: all-zero blocks, and blocks holding a NaN or an infinity (two in six of the
  blocks stay ordinary).
"""

from __future__ import annotations

import zlib

import numpy as np

from .._formats import FORMATS
from .._formats import dtype as resolve_dtype

__all__ = ["DATA_KINDS", "plan", "audit_quantizer_group"]

DATA_KINDS = ("random", "edges", "extremes", "specials")
#: input formats a quantizer is audited on by default
_DEFAULT_DTYPES = ("float32", "bfloat16", "float16")


def plan(cfg, dtypes, op) -> list:
    """The groups: ``(op, [(input format, shape)], params)`` per input format and data
    kind; ``samples`` elements each, in rows of two blocks."""
    from ..quantize import BLOCK_FORMATS

    bf = BLOCK_FORMATS[cfg.block_format]
    names = [d.name for d in dtypes] if dtypes else list(_DEFAULT_DTYPES)
    cols = 2 * bf.block
    rows = max(1, -(-cfg.samples // cols))
    params = {"fmt": bf.name}
    if cfg.scale_rule is not None:
        params["scale_rule"] = cfg.scale_rule
    return [(op, [(FORMATS[n], (rows, cols))], {**params, "data": kind})
            for n in names if FORMATS[n].kind == "float" and FORMATS[n].bits >= 16
            for kind in DATA_KINDS]


def _element_values(bf) -> np.ndarray:
    """The element format's non-negative finite values, ascending (MXINT8: its integers times
    the code's weight)."""
    el = FORMATS[bf.element]
    if el.is_integer:
        return np.arange(0, el.int_max + 1, dtype=np.float64) * 2.0 ** bf.int_scale
    pats = np.arange(1 << (8 * el.np_dtype.itemsize), dtype=np.int64).astype(
        np.uint8 if el.np_dtype.itemsize == 1 else np.uint16)
    with np.errstate(invalid="ignore", over="ignore"):
        v = pats.view(el.np_dtype).astype(np.float64)
    return np.unique(v[np.isfinite(v) & (v >= 0)])


def draw(bf, fmt, shape, kind, rng) -> np.ndarray:
    """One group's input: ``shape`` (rows, two blocks) of format ``fmt``, of data ``kind``."""
    rows, cols = shape
    nb = cols // bf.block
    big = fmt.max_finite
    if kind == "random":
        scale = 10.0 ** rng.uniform(-3, 3, (rows, nb, 1))
        x = rng.standard_normal((rows, nb, bf.block)) * scale
    elif kind == "edges":
        el = _element_values(bf)
        top = el[-1]
        k = rng.integers(-8, 9, (rows, nb, 1)).astype(np.float64)
        choice = rng.integers(0, 5, (rows, nb, 1))
        over = top * 2.0 ** (k - bf.emax_elem) * (1 + 2.0 ** (1 - fmt.precision))  # next above
        amax = np.choose(choice, [2.0 ** k, 2.0 ** k * (1 - 2.0 ** -7), 2.0 ** k * (1 + 2.0 ** -6),
                                  top * 2.0 ** (k - bf.emax_elem), over])[..., 0]
        mids = (el[1:] + el[:-1]) / 2  # ties of the element rounding, at the block's scale
        unit = 2.0 ** (np.floor(np.log2(amax)) - bf.emax_elem)
        pick = rng.integers(0, mids.size, (rows, nb, bf.block))
        x = mids[pick] * unit[..., None] * rng.choice([-1.0, 1.0], (rows, nb, bf.block))
        x[..., 0] = amax * rng.choice([-1.0, 1.0], (rows, nb))
    elif kind == "extremes":
        tiny = fmt.smallest_normal * 2.0 ** (1 - fmt.precision)
        lo = rng.uniform(0, 1, (rows, nb, 1)) < 0.5
        mag = np.where(lo, tiny * 2.0 ** rng.integers(0, fmt.precision + 4, (rows, nb, 1)),
                       big * 2.0 ** -rng.integers(0, 4, (rows, nb, 1)))
        x = mag * rng.uniform(-1, 1, (rows, nb, bf.block))
        x[..., 0] = mag[..., 0] * rng.choice([-1.0, 1.0], (rows, nb))
    elif kind == "specials":
        x = rng.standard_normal((rows, nb, bf.block))
        which = rng.integers(0, 6, (rows, nb))  # 4 and 5: ordinary blocks beside them
        x[which == 0] = 0.0
        hit = rng.integers(0, bf.block, (rows, nb))
        for code, value in ((1, np.nan), (2, np.inf), (3, -np.inf)):
            r, b = np.nonzero(which == code)
            x[r, b, hit[r, b]] = value
    else:
        raise ValueError(f"unknown data kind {kind!r}; expected one of {', '.join(DATA_KINDS)}")
    with np.errstate(over="ignore", invalid="ignore"):
        out = x.reshape(rows, cols).astype(fmt.np_dtype)
    return out


def _outputs(out):
    """``(codes, scales)`` or ``(values, None)`` from what the kernel returned."""
    if isinstance(out, (tuple, list)) and len(out) == 2:
        return np.asarray(out[0]), np.asarray(out[1])
    return np.asarray(out), None


def audit_quantizer_group(target, op, specs, params, cfg):
    """One group of a quantizer's audit (a :class:`~exactref.audit.GroupReport`)."""
    from ..quantize import BLOCK_FORMATS
    from . import GroupReport, KernelFault, _applied, _exc_text, _GroupStopped, _hex
    from ._calls import KernelTimeout, call_with_timeout
    from ._contracts import call_reference

    fmt, shape = specs[0]
    g = GroupReport(op, [f"{fmt.name}[{shape[0]},{shape[1]}]"], dict(params))
    bf = BLOCK_FORMATS[params["fmt"]]
    rule = params.get("scale_rule")
    rng = np.random.default_rng([cfg.seed, zlib.crc32(g.key.encode())])
    x = draw(bf, fmt, shape, params["data"], rng)
    g.expected_dtype = bf.element
    try:
        out, ref_kw = call_with_timeout(_call, (target, x, params), timeout=cfg.timeout,
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
        ref = call_reference(op, (x, bf.name), {"scale_rule": rule, **ref_kw},
                             target.user_contract_for(op))
    except ValueError as exc:  # the inputs have no exact quantization (a NaN scale's format)
        g.status, g.message = "fail", f"no exact reference: {exc}"[:300]
        return g
    g.contract = _applied(ref, target, op)
    codes, scales = _outputs(out)
    g.got_dtype = str(codes.dtype)
    try:
        cov = ref.covers(codes) if scales is None else ref.covers(codes, scales)
    except (TypeError, ValueError) as exc:
        g.status = "fail"
        g.message = f"the kernel's output does not read as codes and scales: {exc}"[:300]
        return g
    mask = np.asarray(cov.mask).reshape(-1)
    g.cases = mask.size
    g.covered = int(np.count_nonzero(mask))
    first = ref.codes._wide().astype(np.float64).reshape(-1)
    if scales is None:
        first = ref.dequantize()._wide().astype(np.float64).reshape(-1)
    with np.errstate(invalid="ignore"):
        got = codes.astype(np.float64).reshape(-1)
        g.exact = int(np.count_nonzero((got == first) | (np.isnan(got) & np.isnan(first))))
    if g.uncovered:
        g.status = "fail"
        i = cov.worst_index
        r, c = i
        b0 = (c // bf.block) * bf.block
        blk = x[r, b0:b0 + bf.block]
        # Note: a code is compared with the rule's at the same block scale; under another
        # scale the distance in codes means nothing (inf)
        g.max_ulps = float(cov.worst_ulps)
        g.worst = {"index": [int(r), int(c)],
                   "inputs": {"x": _hex(x[r, c]),
                              "block amax": _hex(np.nanmax(np.abs(blk.astype(np.float64))))},
                   "actual": _hex(got[r * shape[1] + c]),
                   "allowed": [_hex(first[r * shape[1] + c])] * 2,
                   "expected": _hex(first[r * shape[1] + c]), "ulps": g.max_ulps,
                   "detail": _detail(cov, i, scales is None),
                   "reproducer": _reproducer(target, bf, rule, fmt, blk, params, ref_kw)}
        g.message = cov.summary()[:300]
        note = getattr(target, "departure", None)  # a library's known departures (torchao)
        if note is not None:
            why, g.worst["departures"] = note(params, x, codes, scales, ref, cov)
            g.message = f"{why}; {g.message}"[:600] if why else g.message
    return g


def _call(target, x, params):
    """The kernel's output for ``x`` and the reference's extra keywords: a target that runs
    a library's quantizer says both (``quantize_call``); a user's kernel is ``fn(x)``."""
    call = getattr(target, "quantize_call", None)
    if call is not None:
        return call(x, params)
    return target.call((x,), {}), {}


def _detail(cov, i, values_mode: bool) -> str:
    """The worst element in words: what the kernel gave and what each declared rule gives
    (a code and its block scale, or a dequantized value)."""
    q = cov.reference
    if values_mode:
        want = ", ".join(f"{r}: {float(q.dequantize(r)._wide()[i])!r}" for r in q.rules)
        return f"got the value {float(cov._actual[i])!r}; the rules give {want}"
    from ..quantize import expand_blocks

    parts = []
    for r in q.rules:
        c, s = q.by_rule[r]
        s_e = expand_blocks(s._wide().astype(np.float64), q.shape, q.axis, q.block)
        parts.append(f"{r}: code {float(c._wide()[i])!r} with scale {float(s_e[i])!r}")
    got_s = float(cov._scales[i])
    d = float(cov._dist[i])
    off = (f" (the same scale: the code {d:g} code steps off)" if np.isfinite(d) else
           " (another block scale)")
    return (f"got code {float(cov._actual[i])!r} with block scale {got_s!r}; "
            f"{'; '.join(parts)}{off}")


def _reproducer(target, bf, rule, fmt, block, params, ref_kw) -> str:
    values = ", ".join(f"float.fromhex({v.hex()!r})" for v in
                       np.asarray(block, dtype=np.float64).tolist())
    lines = ["import exactref as er", "import numpy as np",
             f"x = er.asarray([[{values}]], {fmt.name!r}).numpy()"]
    source = getattr(target, "quantize_source", None)
    if source is not None:
        call, keywords = source(params, ref_kw)
        lines += call
        keywords = f", {keywords}" if keywords else ""
    else:
        lines.append(f"out = {target.call_source('quantize')}(x)")
        keywords = ""
    lines += [f"q = er.quantize(x, {bf.name!r}, scale_rule={rule!r}, block={bf.block}"
              f"{keywords})",
              "print(q.covers(*out).summary() if isinstance(out, tuple) else "
              "q.covers(out).summary())"]
    return "\n".join(lines)


def check(cfg, target) -> None:
    """Usage errors of a quantizer audit, before any work (``AuditUsageError``)."""
    from ..quantize import BLOCK_FORMATS
    from . import AuditUsageError

    own = getattr(target, "check_quantize", None)
    if own is not None:  # a library's quantizers: the target knows which it has
        own(cfg)
        return
    if cfg.block_format is None:
        raise AuditUsageError(f"--op quantize needs --format: one of "
                              f"{', '.join(BLOCK_FORMATS)}")
    if cfg.block_format not in BLOCK_FORMATS:
        import difflib

        close = difflib.get_close_matches(cfg.block_format, list(BLOCK_FORMATS), n=2)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise AuditUsageError(f"--format {cfg.block_format!r}{hint}: expected one of "
                              f"{', '.join(BLOCK_FORMATS)}")
    bf = BLOCK_FORMATS[cfg.block_format]
    if cfg.scale_rule is not None and cfg.scale_rule != "any" and \
            cfg.scale_rule not in bf.rules:
        raise AuditUsageError(f"--scale-rule {cfg.scale_rule!r} is not a rule of {bf.name}; "
                              f"expected one of {', '.join(bf.rules)} or 'any'")
    for d in cfg.dtypes or ():
        f = resolve_dtype(d)
        if f.kind != "float" or f.bits < 16:
            raise AuditUsageError(f"--dtypes {d}: a quantizer is audited on float inputs of 16 "
                                  f"bits or more (float16, bfloat16, float32, float64)")
