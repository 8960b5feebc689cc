"""``exactref audit --template OP``: a kernel file for OP, generated from its record.

The file holds one function, ``kernel``, with the signature the audit calls a custom kernel
with (:mod:`exactref.audit._plan`'s groups of the op: the positional operands, named as
``er.<op>`` names them, optional ones defaulting to None, and every keyword the groups pass,
defaulting to ``er.<op>``'s own default), a docstring listing the calls (float32), and a
correct body: where the op has a numpy counterpart computed exactly enough in float64 (the
record's), numpy's; else ``er.<op>`` itself, rounded once (replace it with your kernel's call).
The test suite audits every template it prints and finds it clean.

>>> print(template("softmax").splitlines()[0][3:])
A softmax kernel for ``exactref audit MODULE:kernel --op softmax``.
"""

from __future__ import annotations

import difflib
import inspect
import textwrap

import numpy as np

from ..ops import get_op, op_names
from . import _linear

__all__ = ["template", "calls"]

#: the numpy counterparts a float64 evaluation rounds once into float32, float16 and bfloat16
#: correctly (53 >= 2p + 2 bits: the double rounding is innocuous for +, -, *, /, sqrt,
#: IEEE 754's basic operations) or exactly (min, max, abs, negation, comparisons)
_EXACT_IN_FLOAT64 = {"np.add", "np.subtract", "np.multiply", "np.divide", "np.true_divide",
                     "np.sqrt", "np.maximum", "np.minimum", "np.fmax", "np.fmin", "np.abs",
                     "np.absolute", "np.negative", "np.equal", "np.not_equal", "np.less",
                     "np.less_equal", "np.greater", "np.greater_equal"}


def _target(op):
    from ._targets import FunctionTarget

    t = FunctionTarget.__new__(FunctionTarget)
    t.name, t.op_name, t.model, t.fn = "MODULE:kernel", op, {}, None
    return t


def calls(op, dtype="float32") -> list:
    """The groups' calls of a custom ``op`` kernel in ``dtype``: ``[(args, kwargs)]`` with
    each array operand as its shape (a tuple of its dimensions, ``()`` for a 0-d array) and
    every other operand as its value."""
    from . import AuditConfig
    from ._plan import KINDS, plan

    spec = get_op(op)
    kw = {"block_format": "mxfp8_e4m3"} if spec.plan == "blocks" else {}
    cfg = AuditConfig(target="MODULE:kernel", ops=(op,), op_name=op, dtypes=(dtype,),
                      kinds=KINDS, **kw)
    out = []
    for _, specs, params in plan(_target(op), cfg):
        if spec.plan == _linear.PLAN:  # the codes or values, scale and zero point it draws
            from ._linear import _dequantizes, draw

            drawn, keywords = draw(*specs[0], params, np.random.default_rng(0),
                                   _dequantizes(op))
            out.append(([("array", tuple(np.shape(a))) for a in drawn], keywords))
            continue
        args = []
        for fmt, kind in specs:
            if fmt is None:
                args.append(kind)
            elif isinstance(kind, tuple):
                args.append(("array", kind))
            elif kind == "0d":
                args.append(("array", ()))
            elif kind == "n":
                args.append(("array", ("n",)))
            else:  # a group's own data (windows, rows): its shape
                args.append(("array", tuple(getattr(kind, "shape", ()))))
        while args and args[-1] is None:  # as the audit calls it: clamp(x, lo)
            args.pop()
        call = spec.audit.call
        out.append((args, {k: v for k, v in params.items() if not call or k in call
                           if spec.plan != "blocks"}))
    return out


def _names(op, n) -> list:
    """The names of the first ``n`` positional parameters of ``er.<op>``."""
    params = [p for p in inspect.signature(get_op(op).function).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in params[:n]]
    return names + [f"arg{i}" for i in range(len(names), n)]


def template(op) -> str:
    """The text of a kernel file for ``op`` (see the module's documentation)."""
    if op not in op_names():
        close = difflib.get_close_matches(str(op), list(op_names()), n=3, cutoff=0.6)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        raise ValueError(f"--template {op!r}: no such op{hint}. The ops: "
                         f"{', '.join(op_names())}")
    spec = get_op(op)
    found = calls(op)
    if not found:
        raise ValueError(f"--template {op}: the audit makes no call of a custom {op} kernel "
                         f"(it needs a parameter the audit passes to no kernel); audit a "
                         f"library's {op} instead (exactref audit numpy --ops {op})")
    arity = max(len(a) for a, _ in found)
    least = min(len(a) for a, _ in found)
    names = _names(op, arity)
    sig = inspect.signature(spec.function).parameters
    keywords = list(dict.fromkeys(k for _, kw in found for k in kw))
    params = [n if i < least else f"{n}=None" for i, n in enumerate(names)]
    params += [f"{k}={sig[k].default!r}" if k in sig and sig[k].default is not
               inspect.Parameter.empty else k for k in keywords]
    shown = [_call_text(a, kw) for a, kw in found]
    intro = (f"{spec.summary or op}. The audit calls it with numpy arrays (ml_dtypes formats "
             f"too), positionally, and these keywords; in float32 the calls are:")
    lines = [f'"""A {op} kernel for ``exactref audit MODULE:kernel --op {op}``.', "",
             *textwrap.wrap(intro, 88), ""]
    lines += [f"    {c}" for c in dict.fromkeys(shown)]
    lines += ["", *textwrap.wrap("It returns an array of the reference's shape and format "
                                 "(the torch policy's result format). Audit it with: exactref "
                                 f"audit MODULE:kernel --op {op}", 88),
              '"""', "", "import numpy as np", "",
              "import exactref as er", "", "",
              f"def kernel({', '.join(params)}):"]
    lines += _body(op, spec, names, least, keywords)
    return "\n".join(lines) + "\n"


def _call_text(args, kwargs) -> str:
    def one(a):
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "array":
            shape = a[1]
            return "float32[" + ",".join(map(str, shape)) + "]"
        return repr(a)

    parts = [one(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"kernel({', '.join(parts)})"


def _body(op, spec, names, least, keywords) -> list:
    cp = spec.counterparts.get("numpy") if spec.plan == "elementwise" else None
    if cp in _EXACT_IN_FLOAT64:
        operands = names[:least]
        wide = ", ".join(f"np.asarray({n}).astype(fmt.np_dtype).astype(np.float64)"
                         for n in operands)
        every = ", ".join(operands)
        return [f"    if any(np.iscomplexobj(v) for v in ({every},)):  # a complex product "
                f"rounds twice", f"        return er.{op}({every}).rounded.numpy()",
                "    # the torch policy's result format; the operands (0-d arrays and Python",
                "    # scalars too) converted into it first, as torch's type resolution does",
                f"    fmt = er.result_type({every}, policy='torch', op={spec.promotion!r})",
                "    # numpy in float64, rounded once into the result format: correct (53 bits",
                "    # >= 2p + 2: the double rounding is innocuous)",
                f"    out = {cp}({wide})",
                "    return np.asarray(out).astype(fmt.np_dtype)"]
    if spec.plan == "blocks":
        fmt = "mxfp8_e4m3"  # the template's --format (the audit's default for a template)
        return ["    # exactref's quantization, dequantized (replace with your kernel's call; "
                "return its", "    # dequantized values, or (codes, block scales))",
                f"    return er.quantize({names[0]}, {fmt!r}).dequantize().numpy()"]
    args = ", ".join(names) + "".join(f", {k}={k}" for k in keywords)
    return [f"    # a correct body: exactref's {op} rounded once (replace it with your kernel's "
            f"call)", f"    return er.{op}({args}).rounded.numpy()"]

