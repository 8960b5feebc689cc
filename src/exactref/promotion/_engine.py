"""The small engine: a policy folds its data over the operands; these functions call it.

A :class:`Policy` is one ecosystem's rules. Its data module holds the tables (pair tables,
lattices, per-operation rules, error cells, the source and the version checked); the policy
class only folds them. Every policy answers four questions:

* :meth:`Policy.resolve`: the dtype an operation on these operands produces (and computes in),
  writing each step into a :class:`Trace`, which is what :func:`explain` prints. It checks the
  number of operands of unary and ternary ops, composes ``fma`` as ``x * y + z`` (a multiply,
  then an add, under the same policy), and asks the policy's ``_resolve`` for the rest;
* :meth:`Policy.promote_types`: the promotion of two dtypes;
* :meth:`Policy.can_cast`: whether a value of one dtype may be stored into another;
* :meth:`Policy.inplace`: the dtype an in-place operation computes in, or the policy's error.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._formats import FORMATS, Format, dtype, holds
from ._errors import PromotionError, PromotionOverflowError
from ._operands import Operand, operand
from ._ops import canonical_op, check_arity

__all__ = ["Policy", "Resolution", "Trace", "get_policy", "register", "POLICY_NAMES",
           "result_type", "promote_types", "can_cast", "check_inplace", "explain", "lossless"]


@dataclass(frozen=True)
class Resolution:
    """What a policy decided: the output dtype, the dtype the op computes in, jax's weak flag."""

    result: Format
    compute: Format
    weak: bool = False


class Trace:
    """The steps a policy took, in words."""

    def __init__(self):
        self.steps: list[str] = []
        self.operand_notes: dict[int, str] = {}

    def step(self, text: str) -> None:
        self.steps.append(text)

    def note(self, index: int, text: str) -> None:
        """A remark on operand ``index`` (0-based): which tier it fell into, its dtype."""
        self.operand_notes[index] = text


# ------------------------------------------------------------------------------ lossless casts
def lossless(a: Format, b: Format) -> bool:
    """Whether every value of ``a`` is a value of ``b`` (the test a suggested cast must pass):
    :func:`exactref._formats.holds` with the arguments in cast order.

    >>> lossless(dtype("uint16"), dtype("int32")), lossless(dtype("int32"), dtype("float32"))
    (True, False)
    """
    return holds(b, a)


#: Ops resolved here, the same way in every policy, from the policy's own rules (the method
#: that does it): fma, which no library has, as a composition of ops they have; cast, whose
#: target is named; the reductions, from the policy's accumulator formats.
_COMPOSED = {"fma": "compose_fma", "cast": "compose_cast", "sum": "compose_sum",
             "mean": "compose_mean"}


# ------------------------------------------------------------------------------ the policy
class Policy:
    """Base class of the six policies. Subclasses set the class attributes and fold their data."""

    #: registry name, e.g. "torch"
    name = ""
    #: one line: what the policy follows
    title = ""
    #: where the rules come from (a document, a library's source, a spec)
    source = ""
    #: the version the rules were checked against
    checked = ""
    #: the formats the policy knows, in table order
    formats: tuple = ()
    #: how to spell a cast in this ecosystem (``{x}`` the operand, ``{t}`` the target dtype)
    cast_spelling = "x.astype({t})"
    #: whether promote_types(a, b) == promote_types(b, a) for every pair
    symmetric = True
    #: the formats a sum of bool and signed integers, and of unsigned integers, accumulates in
    sum_integers = ("int64", "int64")
    #: the format a mean of bool and integers is in (None: the policy refuses them, as torch)
    mean_integers: str | None = None
    #: the ops the library has no function for -> how to write them there (the remedy)
    missing: dict = {}

    # -- the entry point -------------------------------------------------------------------
    def resolve(self, operands: list[Operand], op: str | None, trace: Trace) -> Resolution:
        """The dtype ``op`` (a canonical name, or None) on ``operands`` produces.

        Unary and ternary ops must get their number of operands (``TypeError`` otherwise);
        ``fma`` is the dtype of ``x * y + z`` (:meth:`compose_fma`); the rest is the policy's
        own ``_resolve``.
        """
        check_arity(op, operands)
        composed = _COMPOSED.get(op)
        if composed is not None:  # an op no library has, composed of ops they have
            return getattr(self, composed)(operands, trace)
        return self._resolve(operands, op, trace)

    def compose_fma(self, operands: list[Operand], trace: Trace) -> Resolution:
        """fma(x, y, z) has no library op (torch, numpy and jax have none): its dtype is what
        ``x * y + z`` gives under this policy, one multiply and then one add. The product of
        arrays is an array (0-d when both factors are), the product of two Python scalars a
        Python scalar (``True * True`` is the int 1), as the libraries' operators make them."""
        x, y, z = operands
        trace.step("fma: the dtype of x * y + z, a multiply and then an add")
        both_python = x.tier == y.tier == "python"  # Python's own product, no library call
        prod = None if both_python else self._step("mul", [x, y], "x * y", trace, {0: 0, 1: 1})
        middle = _product_operand(x, y, prod)
        trace.step(f"fma: x * y is {middle.describe()}")
        return self._step("add", [middle, z], "(x * y) + z", trace, {1: 2})

    def compose_cast(self, operands: list[Operand], trace: Trace) -> Resolution:
        """cast(x, dtype): the target dtype, whatever x is (the target is named, so no rule of
        the policy plays a part)."""
        target = operands[1].format
        if target is None:
            raise self.error(f"cast's target is a dtype, not the Python scalar "
                             f"{operands[1].label}", op="cast", reason="unsupported",
                             suggest=False, remedy="name the target dtype")
        trace.step(f"cast: the named target, {self.label(target)}")
        return Resolution(target, target)

    def compose_sum(self, operands: list[Operand], trace: Trace) -> Resolution:
        """sum(x) (and cumsum): bool and integers accumulate in the policy's sum integers
        (:attr:`sum_integers`), floats and complex keep their format."""
        fmt = self._reduced(operands[0], "sum")
        if fmt.kind in ("bool", "int", "uint"):
            out = FORMATS[self.sum_integers[fmt.kind == "uint"]]
            trace.step(f"sum: {self.label(fmt)} accumulates in {self.label(out)}")
            return Resolution(out, out)
        trace.step(f"sum: a {fmt.kind} input keeps its format, {self.label(fmt)}")
        return Resolution(fmt, fmt)

    def compose_mean(self, operands: list[Operand], trace: Trace) -> Resolution:
        """mean(x) (and var, std): floats and complex keep their format; bool and integers
        give :attr:`mean_integers`, or raise where the policy refuses them."""
        fmt = self._reduced(operands[0], "mean")
        if fmt.kind in ("float", "complex"):
            trace.step(f"mean: a {fmt.kind} input keeps its format, {self.label(fmt)}")
            return Resolution(fmt, fmt)
        if self.mean_integers is None:
            raise self.error(f"mean of {fmt.name} is not defined; it takes a float input",
                             dtypes=(fmt,), op="mean", reason="unsupported",
                             remedy="cast the input to a float dtype first, or name dtype=")
        out = FORMATS[self.mean_integers]
        trace.step(f"mean: a {fmt.kind} input gives {self.label(out)}")
        return Resolution(out, out)

    def _reduced(self, x: Operand, op: str) -> Format:
        if x.format is None:
            raise self.error(f"{op} reduces an array, not the Python scalar {x.label}", op=op,
                             reason="unsupported", suggest=False,
                             remedy="pass an array (a Python scalar is its own sum)")
        return self.known(x.format, op)

    def _step(self, op: str, operands: list, what: str, trace: Trace, notes: dict) -> Resolution:
        """One op of a composite; its steps join ``trace``, its operand notes go to the
        composite's operands (``notes``: step operand -> composite operand)."""
        sub = Trace()
        try:
            return self.resolve(operands, op, sub)
        except PromotionError as exc:
            text = str(exc).replace(f"(op {op})", f"(op fma, its {what} step: {op})")
            cls = PromotionOverflowError if isinstance(exc, OverflowError) else PromotionError
            raise cls(text, policy=exc.policy, dtypes=exc.dtypes, op="fma", reason=exc.reason,
                      library_error=exc.library_error, remedy=exc.remedy) from None
        finally:
            trace.steps.extend(f"{op}: {s}" if not s.startswith(f"{op}:") else s
                               for s in sub.steps)
            for i, j in notes.items():
                if i in sub.operand_notes:
                    trace.note(j, sub.operand_notes[i])

    def refuse_missing(self, op: str | None) -> None:
        """Raise where the library has no function for ``op`` (:attr:`missing`)."""
        if op in self.missing:
            raise self.error(f"{self.library_name()} has no {op}", op=op, reason="unsupported",
                             suggest=False, remedy=self.missing[op])

    # -- to override ---------------------------------------------------------------------
    def _resolve(self, operands: list[Operand], op: str | None, trace: Trace) -> Resolution:
        raise NotImplementedError

    #: the policy's one casting rule, as the ValueError a ``casting=`` argument gets says it
    #: (None: the policy takes ``casting=``)
    one_casting_rule: str | None = None

    def can_cast(self, a: Format, b: Format, casting: str | None = None) -> bool:
        """Whether a value of ``a`` may be stored into ``b`` (both must be known formats)."""
        if casting is not None and self.one_casting_rule is not None:
            raise ValueError(self.one_casting_rule)
        return self._can_cast(self.known(a), self.known(b), casting)

    def _can_cast(self, a: Format, b: Format, casting: str | None) -> bool:
        raise NotImplementedError

    def inplace(self, op: str, target: Operand, others: list[Operand],
                trace: Trace) -> Resolution:
        raise NotImplementedError

    def promote_types(self, a: Format, b: Format) -> Format:
        """Promotion of two dtypes, as two arrays with dimensions (plain promotion, no op)."""
        return self.resolve([operand(a), operand(b)], None, Trace()).result

    def scalar_columns(self) -> list:
        """Operands for the tensor-scalar table of ``exactref promotion table`` (may be empty)."""
        return [True, 2, 0.5, 1j]

    def cast_name(self, fmt: Format) -> str:
        """How the ecosystem names a dtype in a cast (``torch.float32``, ``np.float32``)."""
        return fmt.name

    def label(self, fmt: Format) -> str:
        """How the trace names a dtype."""
        return fmt.name

    def describe(self) -> str:
        return f"{self.name}: {self.title} (source: {self.source}; checked: {self.checked})"

    # -- helpers for subclasses ------------------------------------------------------------
    def fold_pairs(self, formats, op, trace: Trace, say) -> Format | None:
        """``formats`` (any iterable, read in order) promoted left to right by the policy's
        pair rule (its ``promote``), each step written into ``trace`` as ``say(a, b, result)``;
        None when there are none."""
        out = None
        for f in formats:
            if out is None:
                out = f
                continue
            new = self.promote(out, f, op)
            trace.step(say(out, f, new))
            out = new
        return out

    def known(self, fmt: Format, op: str | None = None) -> Format:
        """``fmt`` if the policy knows it, else a PromotionError naming the known dtypes."""
        if fmt in self.formats:
            return fmt
        names = ", ".join(f.name for f in self.formats)
        remedy = f"cast to one of the dtypes {self.name} knows: {names}"
        if fmt.encoding != "native":  # the P3109 formats: no library has them yet
            remedy += (f" (er.asarray(x, 'float32')), or name the result format: "
                       f"dtype={fmt.name!r} (exactref then rounds the exact result once)")
        raise self.error(f"{self.name} has no dtype {fmt.name}", dtypes=(fmt,), op=op,
                         reason="unsupported", remedy=remedy, suggest=False)

    def error(self, what: str, *, dtypes=(), op=None, reason="promotion", library_error=None,
              remedy=None, suggest=True, overflow=False) -> PromotionError:
        """Build the policy's PromotionError: what went wrong, what the library raises, the fix.

        Without an explicit remedy and with two formats, it suggests a lossless cast of one
        operand that this policy accepts.
        """
        formats = [d for d in dtypes if isinstance(d, Format)]
        if getattr(self, "_suggesting", False):
            suggest = False  # inside suggest_cast: no nested suggestions
        if remedy is None and suggest and len(formats) >= 2:
            remedy = self.suggest_cast(formats[0], formats[1], op)
        if remedy is None and suggest and len(formats) == 1:
            remedy = "cast the operand explicitly to a dtype this operation accepts"
        text = f"{self.name}: {what}"
        if op is not None:
            text += f" (op {op})"
        text += "."
        if library_error is not None:
            text += f" {self.library_name()} raises {library_error[0]}"
            same = library_error[1] in (None, "", what)
            text += "." if same else f": {library_error[1]}"
            if not text.endswith("."):
                text += "."
        if remedy:
            text += f" Fix: {remedy}."
        cls = PromotionOverflowError if overflow else PromotionError
        return cls(text, policy=self.name, dtypes=dtypes, op=op, reason=reason,
                   library_error=library_error, remedy=remedy)

    def library_name(self) -> str:
        return self.name

    def suggest_cast(self, a: Format, b: Format, op: str | None = None) -> str | None:
        """A lossless cast of ``a`` or ``b`` after which this policy promotes the pair."""
        # Note: the suggestion is made for plain promotion (op=None), once per pair.
        memo = self.__dict__.setdefault("_suggestions", {})
        if (a, b) not in memo:
            memo[a, b] = self._suggest_cast(a, b, None)
        return memo[a, b]

    def _suggest_cast(self, a: Format, b: Format, op: str | None) -> str:
        self._suggesting = True
        try:
            for src, other in ((a, b), (b, a)):
                # the same kind first, then wider kinds; formats under 16 bits last
                order = sorted(self.formats, key=lambda f: (
                    f.kind != src.kind, f.kind == "complex", f.bits < 16 and f.kind == "float",
                    f.bits, f.kind != "int", f.name))
                for target in order:
                    if target is src or not lossless(src, target):
                        continue
                    try:
                        self.resolve([operand(target), operand(other)], op, Trace())
                    except (PromotionError, ValueError):
                        continue
                    spelled = self.cast_spelling.format(x="x", t=self.cast_name(target))
                    return f"cast the {src.name} operand to {target.name} first, {spelled}"
        finally:
            self._suggesting = False
        return "cast both operands explicitly to one dtype"


def _product_operand(x: Operand, y: Operand, prod: Resolution | None) -> Operand:
    """The operand ``x * y`` is to the add that follows it."""
    label = f"({x.label} * {y.label})"
    arrays = [o for o in (x, y) if o.tier == "array"]
    if arrays:
        ndim = 0 if all(o.ndim == 0 for o in arrays) else 1
        return Operand("array", prod.result, ndim=ndim, weak=prod.weak, origin="x * y",
                       label=label)
    known = x.value is not None and y.value is not None
    value = x.value * y.value if known else None
    if prod is None:  # two Python scalars: Python's own product
        kinds = ("bool", "int", "float", "complex")
        kind = max(x.pykind, y.pykind, key=kinds.index)
        kind = "int" if kind == "bool" else kind  # True * True == 1
        value = int(value) if known and kind == "int" else value
        return Operand("python", None, value=value, pykind=kind, origin=f"Python {kind}",
                       label=label)
    return Operand("typed", prod.result, value=value, origin="x * y", label=label)


# ------------------------------------------------------------------------------ registry
_FACTORIES: dict = {}
_ALIASES = {"pytorch": "torch", "np": "numpy", "jax-x64": "jax_x64", "jax64": "jax_x64",
            "array-api": "array_api", "arrayapi": "array_api", "ascend": "aclnn",
            "acl": "aclnn", "numpy-installed": "numpy_installed"}
_CACHE: dict = {}


def register(name: str, factory) -> None:
    """Register a policy factory under ``name`` (called by each data module)."""
    _FACTORIES[name] = factory


#: The registered policy names, in the order tables and docs list them.
POLICY_NAMES = ("torch", "numpy", "jax", "jax_x64", "array_api", "aclnn", "kael")


def get_policy(policy="torch", **settings) -> Policy:
    """The policy object for a name (or the object itself), with optional settings.

    Settings: ``torch`` takes ``default_dtype`` (``"float32"``, ``"float64"``, ...) as
    ``torch.set_default_dtype`` would; ``jax`` takes ``x64`` (``"jax_x64"`` is ``x64=True``).

    >>> get_policy("jax-x64").name, get_policy("torch", default_dtype="float64").default_float
    ('jax_x64', exactref.float64)
    """
    if isinstance(policy, Policy):
        if settings:
            raise TypeError("settings apply to a policy name, not to a policy object")
        return policy
    key = str(policy).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _FACTORIES:
        raise ValueError(f"unknown promotion policy {policy!r}; known: {', '.join(POLICY_NAMES)}")
    cache_key = (key, tuple(sorted(settings.items())))
    if cache_key not in _CACHE:
        _CACHE[cache_key] = _FACTORIES[key](**settings)
    return _CACHE[cache_key]


# ------------------------------------------------------------------------------ public functions
def _operands(items) -> list[Operand]:
    if not items:
        raise ValueError("result_type needs at least one operand")
    return [operand(x) for x in items]


def result_type(*operands, policy="torch", op=None) -> Format:
    """The dtype that ``op`` on these operands produces under ``policy``.

    Operands: arrays of any library (their dtype and whether they are 0-d matter), Python
    ``bool``/``int``/``float``/``complex`` (weak; ``fractions.Fraction`` counts as a float),
    typed scalars (:class:`Scalar`, numpy scalars), dtype specs (a :class:`~exactref.Format` or a
    name: an array with dimensions) or text in operand notation (``"int64[]"``: 0-d).

    ``op`` selects the per-operation rules (binary: ``add``, ``sub``, ``mul``, ``div``,
    ``floor_divide``, ``remainder``, ``fmod``, ``pow``, ``maximum``, ``minimum``, ``fmax``,
    ``fmin``, comparisons, bitwise, logical; unary: ``sqrt``, ``rsqrt``, ``reciprocal``,
    ``abs``, ``negative``, the reductions ``sum`` and ``mean``; ternary: ``addcmul``,
    ``addcdiv``, ``clamp``, ``fma``; ``cast(x, dtype)``; any spelling,
    see :mod:`exactref.promotion._ops`); ``None`` is plain promotion. Comparisons and logical
    ops produce ``bool``. A case the policy rejects raises :class:`PromotionError`; a unary or
    ternary op with another number of operands raises ``TypeError``.

    >>> import exactref as er
    >>> er.result_type("int64[3]", 2.5)
    exactref.float32
    >>> er.result_type("int64[3]", 2.5, policy="numpy")
    exactref.float64
    >>> er.result_type("float32[1024,1024]", "float64[]", policy="kael")
    exactref.float32
    >>> er.result_type("bool[3]", "bool[3]", op="add", policy="kael")
    exactref.int64
    >>> er.result_type("int8[3]", op="sqrt"), er.result_type("int8[3]", op="sqrt", policy="numpy")
    (exactref.float32, exactref.float16)
    >>> er.result_type("float16[3]", "int8[3]", 0.5, op="clamp")
    exactref.float16
    """
    pol = get_policy(policy)
    ops = _operands(operands)
    return pol.resolve(ops, canonical_op(op), Trace()).result


def resolve(*operands, policy="torch", op=None) -> Resolution:
    """Like :func:`result_type`, but also the compute dtype (and jax's weak flag)."""
    pol = get_policy(policy)
    return pol.resolve(_operands(operands), canonical_op(op), Trace())


def promote_types(a, b, policy="torch") -> Format:
    """The promotion of two dtypes under ``policy`` (both taken as arrays with dimensions).

    >>> import exactref as er
    >>> er.promote_types("int64", "float32"), er.promote_types("int64", "float32", "numpy")
    (exactref.float32, exactref.float64)
    """
    pol = get_policy(policy)
    return pol.promote_types(dtype(a), dtype(b))


def can_cast(from_, to, policy="torch", casting=None) -> bool:
    """Whether ``policy`` lets a value of dtype ``from_`` be stored into dtype ``to``.

    torch: ``torch.can_cast`` (no complex to real, no float to integer, nothing but bool to
    bool). numpy: ``np.can_cast`` with ``casting`` (default ``"safe"``; ``"same_kind"`` is the
    rule of ``out=`` and in-place ops). kael: the category of ``from_`` is not above the
    category of ``to``. aclnn: its conversion table. array_api: ``to`` is the promotion of the
    two. jax: ``jnp.can_cast``.

    >>> import exactref as er
    >>> er.can_cast("float64", "float32"), er.can_cast("float32", "int64")
    (True, False)
    >>> er.can_cast("float64", "float32", policy="numpy")
    False
    """
    pol = get_policy(policy)
    return pol.can_cast(dtype(from_), dtype(to), casting)


def check_inplace(op, self_dtype, *others, policy="torch") -> Format:
    """Check ``self.op_(*others)`` under ``policy``; return the dtype the op computes in.

    The result is then stored into ``self_dtype`` (rounded where the compute dtype is wider).
    Raises :class:`PromotionError` with the policy's own rule and message where the result
    cannot be stored.

    >>> import exactref as er
    >>> check_inplace("add", "float32", "float64[3]", policy="kael")
    exactref.float64
    >>> check_inplace("add", "int64", 0.5, policy="kael")
    Traceback (most recent call last):
    ...
    exactref.promotion._errors.PromotionError: kael: add_ result of dtype float32 cannot be stored in a tensor of dtype int64 (op add). kael raises TypeError. Fix: compute out of place, x.add(y), or cast self first, x.to(DType::F32).
    """
    pol = get_policy(policy)
    name = canonical_op(op)
    target = operand(self_dtype)
    if target.tier != "array":
        raise TypeError(f"self of an in-place op must be an array or a dtype, not {target.label}")
    if target.ndim is None:
        target = Operand("array", target.format, ndim=1, origin=target.origin,
                         label=f"{target.format.name}[3]")
    return pol.inplace(name, target, _operands(others) if others else [], Trace()).compute


def explain(*operands, policy="torch", op=None) -> str:
    """A step-by-step account of how ``policy`` picks the dtype (never raises PromotionError).

    >>> import exactref as er
    >>> print(er.promotion.explain("int64[3]", 0.5, policy="kael", op="mul"))
    policy: kael (kael ADR 0003 "Type promotion"; checked: the record as accepted in phase 5, in force at v1.0.0 and at head)
    op: mul
    operands:
      1. int64[3]: int64 array with dimensions; I64, category 1 (integer)
      2. 0.5: Python float 0.5; a Scalar of dtype F32 (every floating scalar is F32), category 2
    steps:
      1. resolve_operands: promote_with_scalar(I64, 0.5): scalar category 2 > tensor category 1, so the scalar's dtype F32 wins; 0.5 becomes a 0-d float32 tensor
      2. result_dtype: dimensioned group I64, 0-d group F32; category 2 > 1, so the 0-d group wins: F32
      3. mul: no per-operation override
    result: float32
    """
    pol = get_policy(policy)
    name = canonical_op(op)
    ops = _operands(operands)
    trace = Trace()
    lines = [f"policy: {pol.name} ({pol.source}; checked: {pol.checked})"]
    lines.append(f"op: {name if name is not None else 'none (plain promotion)'}")
    outcome = None
    try:
        res = pol.resolve(ops, name, trace)
        outcome = f"result: {res.result.name}"
        if res.compute is not res.result:
            outcome += f" (computed in {res.compute.name})"
        if res.weak:
            outcome += " (weakly typed)"
    except PromotionError as exc:
        outcome = f"error: PromotionError: {exc}"
    described = getattr(trace, "operand_notes", {})
    lines.append("operands:")
    for i, o in enumerate(ops, 1):
        note = described.get(i - 1)
        lines.append(f"  {i}. {o.label}: {o.describe()}" + (f"; {note}" if note else ""))
    if trace.steps:
        lines.append("steps:")
        lines.extend(f"  {i}. {s}" for i, s in enumerate(trace.steps, 1))
    lines.append(outcome)
    return "\n".join(lines)


def parse_table(text: str, codes: dict, none: str | None = None) -> dict:
    """A promotion table as written in a spec (a header row of column codes, then one row per
    code) as ``{(row, column): result}``, every code mapped through ``codes``; a cell equal to
    ``none`` (the table's "no promotion") maps to None."""
    lines = [ln.split() for ln in text.strip().splitlines()]
    cols = lines[0][-(len(lines[1]) - 1):]  # a header may or may not name the row column
    return {(codes[r[0]], codes[c]): (None if v == none else codes[v])
            for r in lines[1:] for c, v in zip(cols, r[1:], strict=True)}


def formats_named(*names) -> tuple:
    return tuple(FORMATS[n] for n in names)
