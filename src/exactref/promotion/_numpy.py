"""NumPy 2's promotion (NEP 50), ml_dtypes types included, as the ufuncs really do it.

Source: NEP 50 ("Promotion rules for Python scalars") as implemented by numpy 2.4, and the ufunc
loops that ml_dtypes registers; measured by ``scripts/record_promotion_fixtures.py numpy`` once
per ml_dtypes minor (``fixtures/numpy_ml_dtypes_0.5.json``, ``_0.6``, ``_0.7``). Checked against
numpy 2.4.6 with ml_dtypes 0.5.4, 0.6.0 and 0.7.0.

**Versions.** The rules depend on the ml_dtypes minor, and the policy picks the installed one's
(:data:`RULES`, :func:`rules`; ``get_policy("numpy", ml_dtypes="0.6")`` asks for another's):
0.5 is 0.6 without the types 0.6 added (int1, uint1, complex32, bcomplex32; no cell of the
others differs), 0.7 has its own tables (:mod:`exactref.promotion._numpy_ml_dtypes_07`:
ml_dtypes 0.7 registers its promotion with numpy, so Python scalars are weak with its types
too). An ml_dtypes or numpy minor that was not measured gets the nearest measured rules and one
:class:`~exactref.UnmeasuredVersionWarning` naming the script that records it. The tables
below are ml_dtypes 0.6's, and the rules described here hold for every version unless said.

Rules:

* Arrays, 0-d arrays and numpy scalars are all strong: their dtypes promote by the pair table
  :data:`STRONG` (what ``np.add`` returns). Shape plays no part.
* Python ``bool``/``int``/``float``/``complex`` are weak: :data:`WEAK` gives the result with an
  array of each dtype (an int keeps an integer array's dtype, a float keeps a floating array's,
  ...). A Python int must fit the dtype it becomes (``OverflowError: Python integer 300 out of
  bounds for int8``), and values past what numpy converts raise as numpy does.
* Per operation (:data:`OP_RULES`, on the promoted dtype): subtract rejects bool; true division
  of integers and bool gives float64; floor_divide, remainder, fmod and power turn bool into
  int8; floor_divide, remainder and fmod have no complex loops; bitwise ops need bool or
  integers; comparisons and logical ops output bool; maximum, minimum, fmax and fmin follow the
  pair table. The ml_dtypes cells that follow none of these are listed in
  :data:`UFUNC_EXCEPTIONS` (per version).
* Unary ops (sqrt, ``1 / np.sqrt`` for rsqrt, reciprocal, absolute, negative) read the
  measured :data:`UNARY` table. ``np.clip(x, lo, hi)`` promotes its three operands as
  ``np.result_type`` does, but has only numpy's own loops: an ml_dtypes result goes to the first
  builtin loop the inputs cast to safely (bfloat16 -> float32); ``clip(x, lo)`` is
  ``np.maximum``. fma is ``x * y + z``; numpy has no addcmul or addcdiv (they raise).

Note: where ``np.result_type`` and the ufunc disagree, this policy follows the ufunc. They
disagree often for ml_dtypes types, whose promotion is not registered with numpy's DType system
(``np.result_type(bfloat16, float16)`` raises DTypePromotionError, while ``np.add`` finds the
float32 loop: numpy's legacy loop search takes the first loop both inputs cast to safely). For
example ``float8_e4m3fn + float8_e5m2`` is float32 through the ufunc and an error through
``np.result_type``; ``int4 + 3`` is int8 through the ufunc (a Python int never keeps a sub-byte
integer dtype) and ``bfloat16 + 0.5`` is float32 (a Python float never keeps an ml_dtypes float).
With ml_dtypes 0.7 they agree but for an ml_dtypes integer with a Python float (float64 through
``np.result_type``, float16 through the ufunc), ``int4 + 3`` is int4, ``bfloat16 + 0.5`` is
bfloat16 and ``float4_e2m1fn + 0.1`` is float4_e2m1fn.

>>> import exactref as er
>>> er.result_type("int8[3]", 300, policy="numpy")
Traceback (most recent call last):
...
exactref.promotion._errors.PromotionOverflowError: numpy: the Python int 300 is out of bounds for int8. numpy raises OverflowError: Python integer 300 out of bounds for int8. Fix: use an array of a wider dtype, or np.int64(300) to promote as int64.
>>> er.result_type("bfloat16[3]", "float16[3]", policy="numpy")
exactref.float32
"""

from __future__ import annotations

from dataclasses import dataclass

from .._formats import FORMATS, Format
from ._engine import Policy, Resolution, Trace, register
from ._numpy_ml_dtypes_06 import (
    CAN_CAST_SAFE,
    CAN_CAST_SAME_KIND,
    STRONG,
    UFUNC_EXCEPTIONS,
    WEAK,
)
from ._operands import Operand
from ._ops import COMPARISONS, OPS

__all__ = ["NumpyPolicy", "RULES", "Rules", "rules", "STRONG", "WEAK", "OP_RULES",
           "UFUNC_EXCEPTIONS"]

SOURCE = "NEP 50 in numpy 2, and the ufunc loops of ml_dtypes, measured"
#: what the rules were checked against (each instance says its own rules' versions)
CHECKED = "numpy 2.4.6, ml_dtypes 0.5.4, 0.6.0 and 0.7.0"

#: Short names used by the tables below.
CODE = {
    "bool": "b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
    "uint16": "u2", "uint32": "u4", "uint64": "u8", "float16": "f2", "float32": "f4",
    "float64": "f8", "complex64": "c8", "complex128": "c16", "bfloat16": "bf16",
    "float8_e4m3fn": "e4m3fn", "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2": "e5m2",
    "float8_e5m2fnuz": "e5m2fnuz", "float8_e4m3b11fnuz": "e4m3b11", "float8_e3m4": "e3m4",
    "float8_e4m3": "e4m3", "float8_e8m0fnu": "e8m0", "float6_e2m3fn": "e2m3",
    "float6_e3m2fn": "e3m2", "float4_e2m1fn": "e2m1", "int1": "int1", "int2": "int2",
    "int4": "int4", "uint1": "uint1", "uint2": "uint2", "uint4": "uint4", "complex32": "c32",
    "bcomplex32": "bc32",
}
_NAME = {v: k for k, v in CODE.items()}
NUMPY_DTYPES = tuple(CODE)
#: ml_dtypes types print bare in numpy's messages (``dtype(bfloat16)``).
_BUILTIN = NUMPY_DTYPES[:14]

#: The ml_dtypes 0.6 tables (STRONG, WEAK, CAN_CAST_SAFE, CAN_CAST_SAME_KIND, UFUNC_EXCEPTIONS)
#: are in :mod:`exactref.promotion._numpy_ml_dtypes_06`.

#: What each unary op returns for an array of each dtype (measured; ``rsqrt`` is
#: ``1 / np.sqrt(x)``, numpy has no rsqrt). A Python scalar alone is first numpy's default dtype
#: of its kind (bool, int64, float64, complex128). Note that np.reciprocal keeps integers
#: (``np.reciprocal(int8)`` is int8: the integer quotient 1 // x), sqrt takes the smallest float
#: loop an integer casts to safely (int8 -> float16, int16 -> float32, int32 -> float64), and
#: ml_dtypes' sub-byte integers have no loops of their own (int4 -> int8 or float16).
UNARY = """
           sqrt       rsqrt      reciprocal abs        negative
b1         f2         f2         i1         b1         !bool_neg
i1         f2         f2         i1         i1         i1
i2         f4         f4         i2         i2         i2
i4         f8         f8         i4         i4         i4
i8         f8         f8         i8         i8         i8
u1         f2         f2         u1         u1         u1
u2         f4         f4         u2         u2         u2
u4         f8         f8         u4         u4         u4
u8         f8         f8         u8         u8         u8
f2         f2         f2         f2         f2         f2
f4         f4         f4         f4         f4         f4
f8         f8         f8         f8         f8         f8
c8         c8         c8         c8         f4         c8
c16        c16        c16        c16        f8         c16
bf16       bf16       bf16       bf16       bf16       bf16
e4m3fn     e4m3fn     e4m3fn     e4m3fn     e4m3fn     e4m3fn
e4m3fnuz   e4m3fnuz   e4m3fnuz   e4m3fnuz   e4m3fnuz   e4m3fnuz
e5m2       e5m2       e5m2       e5m2       e5m2       e5m2
e5m2fnuz   e5m2fnuz   e5m2fnuz   e5m2fnuz   e5m2fnuz   e5m2fnuz
e4m3b11    e4m3b11    e4m3b11    e4m3b11    e4m3b11    e4m3b11
e3m4       e3m4       e3m4       e3m4       e3m4       e3m4
e4m3       e4m3       e4m3       e4m3       e4m3       e4m3
e8m0       e8m0       e8m0       e8m0       e8m0       e8m0
e2m3       e2m3       e2m3       e2m3       e2m3       e2m3
e3m2       e3m2       e3m2       e3m2       e3m2       e3m2
e2m1       e2m1       e2m1       e2m1       e2m1       e2m1
int1       f2         f2         i1         i1         i1
int2       f2         f2         i1         i1         i1
int4       f2         f2         i1         i1         i1
uint1      f2         f2         i1         i1         i1
uint2      f2         f2         i1         i1         i1
uint4      f2         f2         i1         i1         i1
c32        c32        c32        c32        f2         c32
bc32       bc32       bc32       bc32       bf16       bc32
"""

#: Per-operation rules on the promoted dtype.
#:   reject: kind -> message code; to_float64: kinds true division sends to the float64 loop;
#:   bool_to: the loop a bool result uses; output: the output dtype; unary: the UNARY column;
#:   builtin_loops: the ufunc has only numpy's own loops (ml_dtypes registers none), so a
#:   result of an ml_dtypes type goes to the first builtin loop every input casts to safely;
#:   with_two: the family whose rules a two-operand call follows (np.clip(x, lo, None) is
#:   np.maximum(x, lo)); float_loops: the ufunc has floating loops only, these of numpy's own
#:   and one per ml_dtypes floating type: a floating common dtype keeps its loop, and any other
#:   (no loop) goes to the first loop every input casts to safely (numpy's legacy search: the
#:   loops of the inputs' own ml_dtypes types first, then these), so int8 with uint8 is
#:   float16 although their common dtype int16 alone would take float32.
OP_RULES = {
    "sub": {"reject": {"bool": "bool_sub"}},
    "div": {"to_float64": ("bool", "int", "uint")},
    "floor_divide": {"bool_to": "int8", "reject": {"complex": "no_loop"}},
    "remainder": {"bool_to": "int8", "reject": {"complex": "no_loop"}},
    "fmod": {"bool_to": "int8", "reject": {"complex": "no_loop"}},
    "pow": {"bool_to": "int8"},
    "bitwise": {"reject": {"float": "no_loop", "complex": "no_loop"}},
    "equality": {"output": "bool"},
    "ordering": {"output": "bool"},
    "logical": {"output": "bool"},
    "extremum": {},
    "fextremum": {},
    "root": {"unary": True},
    "reciprocal": {"unary": True},
    "abs": {"unary": True},
    "negative": {"unary": True},
    "clamp": {"builtin_loops": True, "with_two": "maximum"},
    "float_function2": {"reject": {"complex": "no_loop"},
                        "float_loops": ("float16", "float32", "float64")},
}
#: Operations numpy has no function for (torch's addcmul and addcdiv).
NOT_IN_NUMPY = ("addcmul", "addcdiv")
#: how to write them with ufuncs: the operator and the ufunc of their middle step
_INFIX = {"addcmul": ("*", "mul"), "addcdiv": ("/", "div")}
#: ops numpy has no ufunc for, as they are written there
_SPELLED = {"rsqrt": "1 / np.sqrt(x)"}
#: numpy's own loop dtypes, in the order a ufunc's loops are searched.
BUILTIN_LOOPS = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128")
UFUNC = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
         "floor_divide": "floor_divide", "remainder": "remainder", "pow": "power", "eq": "equal",
         "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
         "ge": "greater_equal", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
         "bitwise_xor": "bitwise_xor", "logical_and": "logical_and", "logical_or": "logical_or",
         "logical_xor": "logical_xor", "maximum": "maximum", "minimum": "minimum",
         "fmax": "fmax", "fmin": "fmin", "fmod": "fmod", "sqrt": "sqrt", "rsqrt": "sqrt",
         "reciprocal": "reciprocal", "abs": "absolute", "negative": "negative", "clamp": "clip",
         "atan2": "arctan2"}
MESSAGES = {
    "bool_sub": ("TypeError", "numpy boolean subtract, the `-` operator, is not supported, use "
                              "the bitwise_xor, the `^` operator, or the logical_xor function "
                              "instead."),
    "bool_neg": ("TypeError", "The numpy boolean negative, the `-` operator, is not supported, "
                              "use the `~` operator or the logical_not function instead."),
    "no_loop": ("TypeError", "ufunc '{ufunc}' not supported for the input types, and the inputs "
                             "could not be safely coerced to any supported types according to "
                             "the casting rule ''safe''"),
}

#: Python ints numpy converts for a dtype without "Python int too large to convert to C long".
PYINT_RANGE = {"uint32": (0, 2**64), "uint64": (0, 2**64)}


def _table(text: str) -> dict:
    lines = [ln.split() for ln in text.strip("\n").splitlines()]
    cols, lines = [_NAME.get(c, c) for c in lines[0]], lines[1:]
    return {(_NAME[r[0]], c): v for r in lines for c, v in zip(cols, r[1:], strict=True)}


def _bits(text: str) -> dict:
    rows = [ln.split() for ln in text.strip().splitlines()]
    return {(_NAME[r], c): v == "1" for r, row in rows
            for c, v in zip(NUMPY_DTYPES, row, strict=True)}


def _exceptions(text: str) -> dict:
    out = {}
    for ln in text.strip().splitlines():
        ops, left, right, result = ln.split()
        for op in ops.split(","):  # ufuncs that share their ml_dtypes loops share a line
            out[op, left, right] = result
    return out


def _unary(text: str) -> dict:
    lines = text.strip("\n").splitlines()
    cols = lines[0].split()
    return {(_NAME[ln.split()[0]], c): v if v.startswith("!") else _NAME[v]
            for ln in lines[1:] for c, v in zip(cols, ln.split()[1:], strict=True)}


@dataclass(frozen=True)
class Rules:
    """The measured tables of one ml_dtypes minor: the dtypes it has, the pair tables (strong
    and with weak Python scalars), the cast tables, the ufunc exceptions and the unary table."""

    ml_dtypes: str  # the minor, "0.6"
    measured: str  # the versions measured, "numpy 2.4.6, ml_dtypes 0.6.0"
    dtypes: tuple
    strong: dict
    weak: dict
    safe: dict
    same_kind: dict
    exceptions: dict
    unary: dict
    #: whether np.result_type and np.promote_types follow the ufuncs for ml_dtypes' types
    result_type_follows_ufuncs: bool
    #: the builtin integer whose bounds numpy checks a Python int against, per ml_dtypes
    #: integer that keeps its own dtype with a Python int (the others: their own bounds)
    int_bounds: dict
    #: whether ml_dtypes' floats refuse a Python int outside int64 ("expected number")
    ml_floats_take_int64_only: bool
    #: whether a comparison of an ml_dtypes integer with a Python int takes any int exactly,
    #: as NEP 50 does for numpy's own integers (0.7); else the int converts to the loop's
    #: builtin integer and must fit it (0.6: ``int2 < 300`` raises "Python integer 300 out of
    #: bounds for int8")
    ml_int_comparisons_exact: bool = True

    @classmethod
    def parse(cls, ml_dtypes, measured, dtypes, strong, weak, safe, same_kind, exceptions,
              unary, result_type_follows_ufuncs, int_bounds=None,
              ml_floats_take_int64_only=True, ml_int_comparisons_exact=True) -> Rules:
        keep = set(dtypes)

        def only(table, columns=True):  # an older ml_dtypes lacks some types: their rows
            # and columns go (the weak table's columns are Python kinds, the unary's ops)
            return {k: v for k, v in table.items()
                    if k[0] in keep and (not columns or k[1] in keep)}

        strong_t = {k: _NAME[v] for k, v in _table(strong).items()}
        weak_t = {k: _NAME[v] for k, v in _table(weak).items()}
        exc = {k: v for k, v in _exceptions(exceptions).items()
               if all(x.startswith("py:") or x in keep for x in k[1:])}
        return cls(ml_dtypes, measured, tuple(dtypes), only(strong_t), only(weak_t, False),
                   only(_bits(safe)), only(_bits(same_kind)), exc, only(_unary(unary), False),
                   result_type_follows_ufuncs, dict(int_bounds or {}),
                   ml_floats_take_int64_only, ml_int_comparisons_exact)


def _rules_06_family(minor: str, measured: str, dtypes) -> Rules:
    return Rules.parse(minor, measured, dtypes, STRONG, WEAK, CAN_CAST_SAFE, CAN_CAST_SAME_KIND,
                       UFUNC_EXCEPTIONS, UNARY, False, ml_int_comparisons_exact=False)


def overlay(base: str, rows: str) -> str:
    """The table ``base`` with the rows of ``rows`` in place of its own (a row is keyed by its
    first word, the dtype code; the header stays ``base``'s): how a later version's table
    states only the rows that changed. A full table overlays to itself.

    >>> print(overlay("   a  b\\nx  1  2\\ny  3  4\\n", "y  5  6\\n"))
       a  b
    x  1  2
    y  5  6
    """
    def key(line):
        return None if not line.strip() or line[0].isspace() else line.split()[0]

    new = {key(ln): ln for ln in rows.strip("\n").splitlines() if key(ln) is not None}
    out = [new.pop(key(ln), ln) for ln in base.strip("\n").splitlines()]
    if new:
        raise ValueError(f"rows not in the base table: {', '.join(new)}")
    return "\n".join(out) + "\n"


def _rules_07() -> Rules:
    from . import _numpy_ml_dtypes_07 as t

    return Rules.parse("0.7", "numpy 2.4.6, ml_dtypes 0.7.0", NUMPY_DTYPES,
                       overlay(STRONG, t.STRONG), overlay(WEAK, t.WEAK),
                       overlay(CAN_CAST_SAFE, t.CAN_CAST_SAFE),
                       overlay(CAN_CAST_SAME_KIND, t.CAN_CAST_SAME_KIND), t.UFUNC_EXCEPTIONS,
                       UNARY, True, t.INT_BOUNDS, ml_floats_take_int64_only=False)


#: The types ml_dtypes 0.6 added (0.5 has none of them).
NEW_IN_06 = ("int1", "uint1", "complex32", "bcomplex32")
#: The rules of each ml_dtypes minor measured, built on first use. ml_dtypes 0.5.4 gives the
#: cells of 0.6.0 on every dtype it has (measured: no cell differs), so its rules are 0.6's
#: without the types 0.6 added.
RULES = {
    "0.5": lambda: _rules_06_family("0.5", "numpy 2.4.6, ml_dtypes 0.5.4",
                                    [d for d in NUMPY_DTYPES if d not in NEW_IN_06]),
    "0.6": lambda: _rules_06_family("0.6", "numpy 2.4.6, ml_dtypes 0.6.0", NUMPY_DTYPES),
    "0.7": _rules_07,
}
_BUILT: dict = {}


def rules(ml_dtypes: str | None = None) -> Rules:
    """The rules for an ml_dtypes version ("0.7", "0.7.1"; None: the installed one). A version
    whose minor was not measured gets the nearest measured minor's rules and one
    :class:`~exactref.UnmeasuredVersionWarning` (so do an unmeasured installed numpy)."""
    from .. import _versions

    if ml_dtypes is None:
        _versions.check("numpy-promotion", "numpy", stacklevel=4)
        ml_dtypes = _versions.installed("ml_dtypes") or "0.6.0"
        _versions.check("numpy-promotion", "ml_dtypes", installed_version=ml_dtypes,
                        stacklevel=4)
    try:
        key = _versions.minor_name(ml_dtypes)
    except ValueError:
        raise ValueError(f"ml_dtypes must be a version such as '0.7' or '0.7.0', not "
                         f"{ml_dtypes!r}") from None
    if key not in RULES:
        key = _versions.nearest(key, list(RULES))
    if key not in _BUILT:
        _BUILT[key] = RULES[key]()
    return _BUILT[key]


_DEFAULT = {"py:bool": "bool", "py:int": "int64", "py:float": "float64",
            "py:complex": "complex128"}


def _np_repr(f: Format) -> str:
    return f"dtype('{f.name}')" if f.name in _BUILTIN else f"dtype({f.name})"


class NumpyPolicy(Policy):
    name = "numpy"
    title = "NumPy 2 (NEP 50 weak Python scalars), ml_dtypes types as the ufuncs resolve them"
    source = SOURCE
    checked = CHECKED
    cast_spelling = "{x}.astype({t})"
    symmetric = False
    sum_integers = ("int64", "uint64")  # np.sum: unsigned integers into uint64
    mean_integers = "float64"
    missing = {op: f"write it with ufuncs, x + t1 {_INFIX[op][0]} t2, and ask for add and "
                   f"{_INFIX[op][1]} (or use policy='torch')" for op in NOT_IN_NUMPY}

    def __init__(self, ml_dtypes: str | None = None):
        """``ml_dtypes``: whose rules ("0.5", "0.6", "0.7"; a patch version is its minor);
        None: the installed ml_dtypes' (the nearest measured minor, with an
        UnmeasuredVersionWarning, where it was not measured)."""
        self.rules = rules(ml_dtypes)
        self.formats = tuple(FORMATS[n] for n in self.rules.dtypes)  # those of its rules' tables
        self.checked = self.rules.measured

    def cast_name(self, fmt):
        return f"np.{fmt.name}" if fmt.name in _BUILTIN else f"ml_dtypes.{fmt.name}"

    def api_differs(self, cell, got) -> str | None:
        """Why np.result_type / np.promote_types may differ from this policy (fixture check)."""
        if cell.op not in ("result_type", "promote_types"):
            return None
        from ._operands import operand

        ops = [operand(s) for s in cell.operands]
        ml = [o for o in ops if o.format is not None and o.format.name not in _BUILTIN]
        if ml and not self.rules.result_type_follows_ufuncs:
            return "np.result_type ignores the ufunc loops ml_dtypes registers"
        if any(o.format.kind in ("int", "uint") for o in ml) and any(
                o.pykind in ("float", "complex") for o in ops):
            return ("np.result_type of an ml_dtypes integer and a Python float is float64 "
                    "(complex128), where the ufunc finds the float16 (complex64) loop")
        if ml and len(ops) >= 3 and any(o.tier == "python" for o in ops):
            return ("np.result_type of three operands, an ml_dtypes type and a Python scalar "
                    "among them, may answer float64 (complex128) where chained ufuncs keep "
                    "the ml_dtypes type")
        if got[0] == "error" and got[1].reason == "value" and cell.error is None:
            return "np.result_type does not check a Python int's value; the ufunc does"
        return None

    def _key(self, o: Operand, op) -> str:
        if o.tier == "python":
            return f"py:{o.pykind}"
        return self.known(o.format, op).name

    def _pair(self, a: str, b: str, op, trace: Trace) -> str:
        """One binary step: strong x strong, strong x weak, weak x weak."""
        if not a.startswith("py:") and not b.startswith("py:"):
            out = self.rules.strong[a, b]
            trace.step(f"{a} with {b}: {out} (the ufunc's loop)")
            return out
        if a.startswith("py:") and b.startswith("py:"):
            kinds = ("py:bool", "py:int", "py:float", "py:complex")
            out = max(a, b, key=kinds.index)
            trace.step(f"two Python scalars: the higher kind, {out}")
            return out
        strong, weak = (a, b) if b.startswith("py:") else (b, a)
        out = self.rules.weak[strong, weak[3:]]
        trace.step(f"{strong} with a weak Python {weak[3:]}: {out}")
        return out

    def _common(self, names: list, trace: Trace) -> str:
        """np.result_type of three or more strong dtypes: promotion is not associative, and
        numpy answers the least dtype every input promotes to itself (int8, uint8, float16 ->
        float16, where (int8 + uint8) + float16 would be float32)."""
        uppers = [x for x in self.rules.dtypes if all(self.rules.strong[d, x] == x for d in names)]
        least = [x for x in uppers if all(self.rules.strong[x, y] == y for y in uppers)]
        if len(least) == 1:
            trace.step(f"{', '.join(names)}: the least dtype each promotes to itself, {least[0]}")
            return least[0]
        out = names[0]
        for k in names[1:]:
            out = self._pair(out, k, None, trace)
        return out

    def _check_value(self, o: Operand, target: Format, op) -> None:
        if o.tier != "python" or o.pykind != "int" or o.value is None:
            return
        v = o.value
        lo, hi = PYINT_RANGE.get(target.name, (-(2**63), 2**63))
        if target.kind in ("int", "uint"):
            if not -(2**63) <= v < 2**63 and not lo <= v < hi:
                self._overflow(o, target, op, ("OverflowError",
                                               "Python int too large to convert to C long"))
            # ml_dtypes 0.7 converts a Python int for its sub-byte integers through a wider
            # builtin type, whose bounds numpy checks (int4 + 300 is int4, int4 + 2**31 raises)
            bound = FORMATS[self.rules.int_bounds.get(target.name, target.name)]
            if not bound.int_min <= v <= bound.int_max:
                self._overflow(o, target, op, ("OverflowError", f"Python integer {v} out of "
                                                                f"bounds for {bound.name}"))
        elif target.name in _BUILTIN:
            if abs(v) >= 2**1024:
                self._overflow(o, target, op, ("OverflowError",
                                               "int too large to convert to float"))
        elif self.rules.ml_floats_take_int64_only and not -(2**63) <= v < 2**63:
            self._overflow(o, target, op, ("TypeError", "expected number, got int"))

    def _overflow(self, o, target, op, library_error):
        raise self.error(f"the Python int {o.label} is out of bounds for {target.name}",
                         dtypes=(target, "Python int"), op=op, reason="value",
                         overflow=library_error[0] == "OverflowError",
                         library_error=library_error, suggest=False,
                         remedy=f"use an array of a wider dtype, or np.int64({o.label}) to "
                                f"promote as int64")

    def _resolve(self, operands, op, trace) -> Resolution:
        fam = OPS[op] if op is not None else None
        self.refuse_missing(op)
        rules = OP_RULES.get(fam, {})
        if "with_two" in rules and len(operands) == 2:
            trace.step(f"{op} with one bound: np.clip(x, lo, None) is np.{rules['with_two']}")
            return self._resolve(operands, rules["with_two"], trace)
        keys = [self._key(o, op) for o in operands]
        for i, k in enumerate(keys):
            trace.note(i, "weak (NEP 50)" if k.startswith("py:") else "strong")
        if rules.get("unary"):
            return self._unary(op, keys[0], trace)
        exc = None
        if op is not None and len(keys) == 2:
            exc = self.rules.exceptions.get((UFUNC.get(op, op), keys[0], keys[1]))
        if exc is None:
            strong = [k for k in keys if not k.startswith("py:")]
            out = self._common(strong, trace) if len(strong) >= 3 else keys[0]
            for k in (keys[1:] if len(strong) < 3 else [k for k in keys if k.startswith("py:")]):
                out = self._pair(out, k, op, trace)
            if out.startswith("py:"):
                out = {"py:bool": "bool", "py:int": "int64", "py:float": "float64",
                       "py:complex": "complex128"}[out]
                trace.step(f"only Python scalars: the default dtype {out}")
            common = FORMATS[out]
        elif exc.startswith("!"):
            raise self._ufunc_error(exc[1:], op, keys)
        else:
            common = FORMATS[exc]
            trace.step(f"np.{UFUNC[op]} picks the {exc} loop for {keys[0]} with {keys[1]} "
                       f"(ml_dtypes' loops; listed in UFUNC_EXCEPTIONS)")
        if exc is not None:
            res = self._output(fam, common, trace)
        else:
            if OP_RULES.get(fam, {}).get("builtin_loops"):
                common = self._builtin_loop(op, keys, common, trace)
            res = self.apply_op(op, fam, common, keys, trace)
        # a Python int must fit the format the loop converts it to (true division converts it to
        # float64, not to the integer common type); comparisons take any int exactly (NEP 50),
        # except with ml_dtypes' integers where the minor's rules say the int converts
        ml_int = any(k in FORMATS and FORMATS[k].kind in ("int", "uint") and k not in _BUILTIN
                     for k in keys)
        if fam not in COMPARISONS:
            loop = res.result if res.result.kind in ("float", "complex") else common
            for o in operands:
                self._check_value(o, loop, op)
        elif ml_int and not self.rules.ml_int_comparisons_exact:
            for o in operands:
                self._check_value(o, common, op)
        return res

    def _unary(self, op, key, trace) -> Resolution:
        name = _DEFAULT.get(key, key)
        if name != key:
            trace.step(f"a Python {key[3:]} alone is numpy's default {name}")
        out = self.rules.unary[name, op]
        what = _SPELLED.get(op) or f"np.{UFUNC[op]}"
        if out.startswith("!"):
            kind, msg = MESSAGES[out[1:]]
            raise self.error(f"{what} does not accept {name}", op=op, reason="operation",
                             dtypes=(FORMATS[name],), suggest=False,
                             library_error=(kind, msg.format(ufunc=UFUNC[op])),
                             remedy="use np.logical_not or ~ on bool arrays"
                             if out == "!bool_neg" else None)
        trace.step(f"{what} of {name}: {out} (the ufunc's loop; the UNARY table)")
        return Resolution(FORMATS[out], FORMATS[out])

    def _builtin_loop(self, op, keys, common: Format, trace) -> Format:
        """The first of numpy's own loops every strong input casts to safely."""
        if common.name in _BUILTIN:
            return common
        strong = [k for k in keys if not k.startswith("py:")] or [common.name]
        for loop in BUILTIN_LOOPS:
            if all(self.rules.safe[k, loop] for k in strong) and self.rules.safe[common.name, loop]:
                trace.step(f"np.{UFUNC[op]} has only numpy's own loops: the first that "
                           f"{', '.join(dict.fromkeys(strong))} cast to safely is {loop}")
                return FORMATS[loop]
        raise self._ufunc_error("no_loop", op, keys)

    def _ufunc_error(self, code, op, keys):
        kind, msg = MESSAGES[code]
        return self.error(f"np.{UFUNC[op]} has no loop for {' and '.join(keys)}", op=op,
                          dtypes=tuple(FORMATS[k] for k in keys if k in FORMATS),
                          reason="operation" if code == "no_loop" else "promotion",
                          library_error=(kind, msg.format(ufunc=UFUNC[op])))

    def apply_op(self, op, fam, common: Format, keys, trace) -> Resolution:
        if fam is None:
            return Resolution(common, common)
        rules = OP_RULES.get(fam, {})
        code = rules.get("reject", {}).get(common.kind)
        if code:
            kind, msg = MESSAGES[code]
            raise self.error(f"np.{UFUNC[op]} does not accept {common.name}", op=op,
                             dtypes=(common,), reason="operation", suggest=False,
                             library_error=(kind, msg.format(ufunc=UFUNC[op])),
                             remedy=("use np.logical_xor or ^ on bool arrays"
                                     if code == "bool_sub" else
                                     f"cast to a dtype np.{UFUNC[op]} has a loop for"))
        if common.kind in rules.get("to_float64", ()):
            trace.step(f"{op}: true division of {common.name} uses the float64 loop")
            common = FORMATS["float64"]
        if common.kind == "bool" and "bool_to" in rules:
            trace.step(f"{op}: no bool loop, the {rules['bool_to']} loop")
            common = FORMATS[rules["bool_to"]]
        if "float_loops" in rules and common.kind != "float":
            common = self._float_loop(op, keys, common, rules["float_loops"], trace)
        return self._output(fam, common, trace)

    def _float_loop(self, op, keys, common: Format, loops, trace) -> Format:
        """A ufunc with floating loops only, when the common dtype has none: numpy's legacy
        search takes the first loop every input casts to safely (a Python scalar as the
        common dtype it became), the inputs' own ml_dtypes loops before numpy's."""
        inputs = list(dict.fromkeys(common.name if k.startswith("py:") else k for k in keys))
        own = [k for k in inputs if k not in _BUILTIN and FORMATS[k].kind == "float"]
        for loop in own + list(loops):
            if all(self.rules.safe[k, loop] for k in inputs):
                trace.step(f"np.{UFUNC[op]} has no {common.name} loop: the first loop that "
                           f"{', '.join(inputs)} cast to safely is {loop}")
                return FORMATS[loop]
        raise self._ufunc_error("no_loop", op, keys)

    def _output(self, fam, common, trace) -> Resolution:
        if fam in ("equality", "ordering", "logical"):
            trace.step(f"computes in {common.name}, outputs bool")
            return Resolution(FORMATS["bool"], common)
        return Resolution(common, common)

    def _can_cast(self, a, b, casting) -> bool:
        """np.can_cast(from_, to, casting): "safe" (the default) or "same_kind" from the
        measured tables; "no"/"equiv" need the same dtype; "unsafe" is always True."""
        casting = casting or "safe"
        if casting in ("no", "equiv"):
            return a is b
        if casting == "unsafe":
            return True
        table = {"safe": self.rules.safe, "same_kind": self.rules.same_kind}.get(casting)
        if table is None:
            raise ValueError(f"casting must be 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', "
                             f"not {casting!r}")
        return table[a.name, b.name]

    def inplace(self, op, target, others, trace) -> Resolution:
        """np.<ufunc>(x, y, out=x): the ufunc's result must cast to x with 'same_kind'."""
        self_fmt = self.known(target.format, op)
        res = self.resolve([target, *others], op, trace)
        if not self.can_cast(res.result, self_fmt, "same_kind"):
            msg = (f"Cannot cast ufunc '{UFUNC[op]}' output from {_np_repr(res.result)} to "
                   f"{_np_repr(self_fmt)} with casting rule 'same_kind'")
            raise self.error(f"the {op} result {res.result.name} cannot be stored into "
                             f"{self_fmt.name} with casting='same_kind'",
                             dtypes=(res.result, self_fmt), op=op, reason="inplace",
                             library_error=("UFuncTypeError", msg), suggest=False,
                             remedy="pass casting='unsafe', or compute out of place")
        return res


register("numpy", NumpyPolicy)
