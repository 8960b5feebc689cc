"""The op registry: one record per op, read by everything else.

An :class:`OpSpec` states what an op is: its name and operands, its keyword parameters, the
exact kernel its formula feeds, the promotion op that picks its output dtype, the
implementations its tolerance models, its backward, and its counterparts in torch, numpy and
jax. ``er.<op>``, ``Result.op``, the equivalents, ``exactref audit --ops``, ``audit
module:function --op`` and the docs' op table all read these records; an unknown name raises a
ValueError with close matches (:func:`get_op`).

The records are made where each op is declared (``exactref.arithmetic`` for the elementwise
family, ``exactref.linalg`` for the long sums); :data:`CATALOG` says which module declares which
names, so that ``import exactref`` stays light and loads an op's module on first use.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field

from ._catalog import CATALOG, op_names

__all__ = ["OpSpec", "Param", "Region", "Counterparts", "CATALOG", "register", "get_op", "all_ops",
           "op_names", "KERNELS", "PLANS", "markdown_table"]

#: The engine's exact kernels an op's formula may feed.
KERNELS = {
    "sum of products": "exact sums of products of the operands (the engine's core)",
    "quotient": "a quotient of two sums of products, decided by exact comparisons",
    "root": "a square root (or its reciprocal) of a sum of products, decided by exact "
            "comparisons",
    "selection": "one of the operands, exactly (or NaN): no arithmetic",
    "comparison": "the sign of an exact difference",
    "conversion": "the operand rounded once into another format",
    "long sum": "long exact sums on BLAS (matmul, reductions)",
    "function": "a real function (exp, tanh, erf, ...) rounded to odd at two bits beyond the "
                "output by MPFR, or looked up in a table",
    "row exponential": "exponentials and logarithms over rows (softmax, logsumexp, attention, "
                       "cross-entropy) enclosed in MPFR interval arithmetic, the precision "
                       "raised until the rounding is decided (Ziv); exact cases by the "
                       "Lindemann-Weierstrass theorem",
    "row root": "a row's exact sums under a square root or its reciprocal (the "
                "normalizations), decided by exact integer comparisons",
    "block quantize": "block-scaled quantization: a shared scale per block, each element "
                      "rounded once into the element format (exactref.quantize)",
}

#: How ``exactref audit`` draws an op's groups (``OpSpec.plan``); a kernel says how the exact
#: value is computed, a plan what inputs test an implementation of it.
PLANS = {
    "elementwise": "arrays of every format the target has, same-format and mixed operands, "
                   "0-d and Python scalars (the elementwise family)",
    "shapes": "the op's own groups: the shapes real models use and adversarial rows, one format "
              "at a time (long sums, reductions, normalizations, softmax, attention)",
    "blocks": "blocks of a quantizer's input, for the element format and scale rule declared "
              "with --format and --scale-rule",
}

#: The plan an op gets when its record names none, by kernel.
_DEFAULT_PLANS = {"long sum": "shapes", "row exponential": "shapes", "row root": "shapes",
                  "block quantize": "blocks"}


@dataclass(frozen=True)
class Param:
    """A keyword parameter of an op: its name, default, meaning, and the values the audit tries
    beside the default (``audit``; the marker ``"formats"`` means every format the target
    has)."""

    name: str
    default: object
    doc: str = ""
    audit: tuple | str = ()


@dataclass(frozen=True)
class Region:
    """Inputs where an op is hard, read by the audit's corpus (``OpSpec.audit_inputs``): where
    its result overflows, underflows, saturates or cancels, near the zeros and poles.

    ``at(c)`` gives the region's real points for ``c``, the real format the op's result is
    rounded into (a :class:`~exactref.Format`'s component), as float64 numbers (the nearest
    float64 to the real number they stand for): a sequence of numbers for a one-operand op, of
    rows (one number per operand) for more. ``kind`` says what the corpus draws from them:

    * ``"near"``: each point rounded into the operand's format (to nearest), or one of its
      ``ulps`` neighbours on either side there (``ulps`` may be a tuple, one per operand: 0
      keeps an integer exponent integral);
    * ``"span"``: the points are ``(lo, hi)`` pairs (one-operand ops), and the corpus draws the
      format's values between the two, uniformly by bit pattern (log-uniform across binades).

    A point the operand's format cannot hold (NaN, beyond its largest finite value, negative
    in an unsigned format) is dropped; see ``docs/audit.md`` ("The hard regions")."""

    name: str
    at: object = field(repr=False)
    kind: str = "near"
    ulps: int | tuple = 4

    def __post_init__(self):
        if self.kind not in ("near", "span"):
            raise ValueError(f"region {self.name!r}: kind {self.kind!r}; expected 'near' (a "
                             f"point and its neighbours) or 'span' (the values between two)")


@dataclass(frozen=True)
class Counterparts:
    """The op's spelling in other libraries (``None``: the library has none)."""

    torch: str | None = None
    numpy: str | None = None
    jax: str | None = None

    def get(self, library: str) -> str | None:
        return getattr(self, library)


@dataclass(frozen=True, eq=False)
class OpSpec:
    """One op, completely declared. ``function`` is ``er.<name>``; ``backward`` its gradient
    (``None`` where PyTorch has none); ``models`` names the implementations its tolerance
    covers; ``kinds`` the dtype kinds it accepts (``"bool"``, ``"int"``, ``"uint"``,
    ``"float"``, ``"complex"``); ``optional`` the operands that may be None (clamp's bounds);
    ``loop`` the format a library's kernel reads the operands in: ``"output"`` (the result
    format), ``"common"`` (the operands' plain promotion: comparisons, abs) or ``"none"`` (as
    given: cast); ``audit_inputs`` the :class:`Region` s where it is hard, from which the
    audit draws a share of its inputs; ``plan`` how the audit draws its groups (one of
    :data:`PLANS`; by default from the kernel: ``"shapes"`` for a long sum, ``"blocks"`` for a
    quantizer, else ``"elementwise"``)."""

    name: str
    operands: tuple
    kernel: str
    promotion: str | None
    function: object = field(repr=False)
    summary: str = ""
    params: tuple = ()
    models: tuple = ()
    backward: object = field(default=None, repr=False)
    counterparts: Counterparts = Counterparts()
    kinds: tuple = ("bool", "int", "uint", "float", "complex")
    family: str = "arithmetic"
    optional: tuple = ()
    loop: str = "output"
    audit_inputs: tuple = ()
    plan: str = ""

    @property
    def arity(self) -> int:
        return len(self.operands)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def __post_init__(self):
        if self.kernel not in KERNELS:
            raise ValueError(f"op {self.name!r}: unknown kernel {self.kernel!r}; expected one "
                             f"of {', '.join(KERNELS)}")
        if not self.plan:
            object.__setattr__(self, "plan", _DEFAULT_PLANS.get(self.kernel, "elementwise"))
        if self.plan not in PLANS:
            raise ValueError(f"op {self.name!r}: unknown audit plan {self.plan!r}; expected one "
                             f"of {', '.join(PLANS)}")


_REGISTRY: dict[str, OpSpec] = {}
_LOADED = False


def register(spec: OpSpec) -> OpSpec:
    """Add a record (each module of :data:`CATALOG` registers its own names)."""
    declared = [n for names in CATALOG.values() for n in names]
    if spec.name not in declared:
        raise ValueError(f"op {spec.name!r} is not in the catalog; add it to "
                         f"exactref.ops._registry.CATALOG under its module")
    _REGISTRY[spec.name] = spec
    return spec


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    for module, names in CATALOG.items():
        importlib.import_module(module)
        missing = [n for n in names if n not in _REGISTRY]
        if missing:
            raise RuntimeError(f"{module} did not register {', '.join(missing)} (an exactref "
                               f"bug)")
    _LOADED = True


def get_op(name) -> OpSpec:
    """The record of the op ``name`` (an OpSpec passes through).

    >>> get_op("divide").promotion
    'div'
    >>> get_op("devide")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown op 'devide'; close matches: divide. Known ops: add, subtract, ...
    """
    if isinstance(name, OpSpec):
        return name
    key = str(name).strip()
    names = op_names()
    if key in names:
        if key not in _REGISTRY:
            module = next(m for m, ns in CATALOG.items() if key in ns)
            importlib.import_module(module)
        return _REGISTRY[key]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise ValueError(f"unknown op {name!r}{hint}. Known ops: {', '.join(names)}.")


def all_ops() -> tuple:
    """Every record, in catalog order."""
    _load()
    return tuple(_REGISTRY[n] for n in op_names())


def markdown_table(family: str | None = None) -> str:
    """The docs' table of ops, made from the records (``docs/arithmetic.md`` holds it; a test
    keeps the two equal)."""
    rows = ["| op | computes | kernel | torch | numpy | jax | backward |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in all_ops():
        if family is not None and s.family != family:
            continue
        params = "".join(f", {p.name}={p.default!r}" for p in s.params)
        call = f"`{s.name}({', '.join(s.operands)}{params})`"
        cp = [f"`{c}`" if c else "-" for c in (s.counterparts.torch, s.counterparts.numpy,
                                                s.counterparts.jax)]
        rows.append(f"| {call} | {s.summary} | {s.kernel} | {' | '.join(cp)} | "
                    f"{'yes' if s.backward is not None else '-'} |")
    return "\n".join(rows)
