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

import contextlib
import dataclasses
import difflib
import importlib
from dataclasses import dataclass, field

from ._catalog import CATALOG, add_extra, catalog_names, modules, op_names, remove_extra

__all__ = ["OpSpec", "Param", "Region", "Counterpart", "Counterparts", "AuditPlan", "CATALOG",
           "LIBRARIES", "KINDS", "FAMILIES", "register", "unregister", "registered", "declaring",
           "get_op",
           "all_ops", "op_names", "names_of", "select", "KERNELS", "PLANS", "markdown_table"]

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
    "linear": "an affine quantizer's inputs: positive scales and in-range zero points, per "
              "tensor, per axis and blocked, for each code format (ONNX QuantizeLinear)",
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


#: The libraries an op may have a counterpart in (:class:`Counterparts`' fields, in order).
LIBRARIES = ("torch", "numpy", "jax", "onnxruntime", "openvino", "tensorflow")


class Counterpart(str):
    """The op in one library: its call (the string itself, ``"torch.sub"``, so a Counterpart
    reads as the call string wherever one was read before) and what exactref knows of that
    library's kernel.

    ``contract``: the op's keywords that model the library's kernel (``{"accuracy": "numpy",
    "compute": "float32"}``); None: no contract declared (the audit then skips the library's
    group, saying so, unless told to compare against the exact value). ``departures``: pinned
    departures of the library from the exact value, each with its ``source`` (a version, a
    file, an issue). ``data``: per-op facts a library module reads (a kernel table entry, a
    quirk).

    >>> c = Counterpart("np.exp", contract={"accuracy": "numpy"}, source="numpy 2.4")
    >>> c == "np.exp", c.call, c.contract
    (True, 'np.exp', {'accuracy': 'numpy'})
    """

    __slots__ = ("contract", "departures", "source", "data")

    def __new__(cls, call: str, contract: dict | None = None, departures: tuple = (),
                source: str = "", data: object = None):
        if not isinstance(call, str) or not call:
            raise TypeError(f"a counterpart's call is a non-empty string, not {call!r}")
        self = super().__new__(cls, call)
        self.contract = contract
        self.departures = tuple(departures)
        self.source = source
        self.data = data
        return self

    @property
    def call(self) -> str:
        return str.__str__(self)

    def __reduce__(self):
        return (Counterpart, (self.call, self.contract, self.departures, self.source, self.data))


@dataclass(frozen=True)
class Counterparts:
    """The op in other libraries, one field per library of :data:`LIBRARIES` (None: the library
    has none). A field may be given as a call string or a :class:`Counterpart`; it is stored as
    a Counterpart (which reads as its call string).

    >>> cp = Counterparts("torch.exp", Counterpart("np.exp", contract={}), None)
    >>> cp.get("numpy"), cp.of("torch").contract, cp.of("jax"), cp.libraries()
    ('np.exp', None, None, ('torch', 'numpy'))
    """

    torch: Counterpart | str | None = None
    numpy: Counterpart | str | None = None
    jax: Counterpart | str | None = None
    onnxruntime: Counterpart | str | None = None
    openvino: Counterpart | str | None = None
    tensorflow: Counterpart | str | None = None

    def __post_init__(self):
        for lib in LIBRARIES:
            value = getattr(self, lib)
            if value is None or type(value) is Counterpart:
                continue
            if isinstance(value, Counterpart):
                value = Counterpart(value.call, value.contract, value.departures, value.source,
                                    value.data)
            elif isinstance(value, str):
                value = Counterpart(value)
            else:
                raise TypeError(f"counterpart in {lib}: a call string, a Counterpart or None, "
                                f"not {value!r}")
            object.__setattr__(self, lib, value)

    def __repr__(self) -> str:
        shown = [f"{lib}={getattr(self, lib)!r}" for lib in LIBRARIES[:3]]
        shown += [f"{lib}={getattr(self, lib)!r}" for lib in LIBRARIES[3:] if getattr(self, lib)]
        return f"Counterparts({', '.join(shown)})"

    def _library(self, library: str) -> str:
        if library not in LIBRARIES:
            raise ValueError(f"unknown library {library!r}; expected one of "
                             f"{', '.join(LIBRARIES)}")
        return library

    def get(self, library: str) -> str | None:
        """The call string in ``library``, or None."""
        value = getattr(self, self._library(library))
        return None if value is None else value.call

    def of(self, library: str) -> Counterpart | None:
        """The :class:`Counterpart` in ``library`` (call, contract, departures, data), or None."""
        return getattr(self, self._library(library))

    def libraries(self) -> tuple:
        """The libraries that have the op, in :data:`LIBRARIES` order."""
        return tuple(lib for lib in LIBRARIES if getattr(self, lib) is not None)


@dataclass(frozen=True)
class AuditPlan:
    """Op-specific facts for ``exactref audit`` (``OpSpec.audit``): ``groups``, the group
    builder the plan uses (None: the plan's own, :data:`PLANS`); ``call``, the keywords a
    custom kernel receives (``audit module:fn --op``) beside the operands; ``result``, the
    format its result is expected in (``"output"``: the op's output format; another string
    names a rule the audit knows, such as ``"logits"``); ``data``, free facts the audit reads
    (the shapes or params to vary)."""

    groups: object = None
    call: tuple = ()
    result: str = "output"
    data: object = None

    def __post_init__(self):
        # a bare string would pass as a tuple of its letters ("eps": keywords e, p, s, ep, ...)
        if isinstance(self.call, str) or not all(isinstance(k, str) for k in self.call):
            raise TypeError(f"AuditPlan(call={self.call!r}): the keywords a custom kernel "
                            f"receives are a tuple of names, such as call=('eps',)")
        object.__setattr__(self, "call", tuple(self.call))
        if not isinstance(self.result, str) or not self.result:
            raise TypeError(f"AuditPlan(result={self.result!r}): the name of a result rule of "
                            f"the audit, such as 'output' (the op's output format) or 'logits'")


#: The dtype kinds an op may accept (``OpSpec.kinds``).
KINDS = ("bool", "int", "uint", "float", "complex")

#: The families ops are grouped in (``OpSpec.family``: the docs' tables, ``select(family=)``).
FAMILIES = ("arithmetic", "functions", "linalg", "normalizations", "losses", "attention",
            "quantize")


@dataclass(frozen=True, eq=False)
class OpSpec:
    """One op, completely declared.

    ``function`` is ``er.<name>``; ``promotion`` the promotion op whose rule gives its output
    dtype (a name :func:`exactref.promotion.canonical_op` knows, checked when the record is
    registered); ``exact`` its exact-kernel entry (a real function's record: the MPFR name or
    composition; None where the kernel needs none); ``derivative`` its derivative(s) (a
    function's derivative object, pow's partials); ``backward`` its gradient (``None`` where
    PyTorch has none); ``models`` the implementations its tolerance covers (model objects, or
    strings where still prose); ``kinds`` the dtype kinds it accepts (of :data:`KINDS`);
    ``family`` its group (one of :data:`FAMILIES`); ``optional`` the operands that may be None
    (clamp's bounds); ``loop`` the format a library's kernel reads the operands in:
    ``"output"`` (the result format), ``"common"`` (the operands' plain promotion:
    comparisons, abs) or ``"none"`` (as given: cast); ``audit_inputs`` the :class:`Region` s
    where it is hard, from which the audit draws a share of its inputs; ``plan`` how the audit
    draws its groups (one of :data:`PLANS`; by default from the kernel: ``"shapes"`` for a long
    sum, ``"blocks"`` for a quantizer, else ``"elementwise"``); ``audit`` the op's own audit
    facts (:class:`AuditPlan`); ``counterparts`` the op in other libraries
    (:class:`Counterparts`)."""

    name: str
    operands: tuple
    kernel: str
    promotion: str
    function: object = field(repr=False)
    summary: str = ""
    params: tuple = ()
    models: tuple = ()
    backward: object = field(default=None, repr=False)
    counterparts: Counterparts = Counterparts()
    kinds: tuple = KINDS
    family: str = "arithmetic"
    optional: tuple = ()
    loop: str = "output"
    audit_inputs: tuple = ()
    plan: str = ""
    exact: object = field(default=None, repr=False)
    derivative: object = field(default=None, repr=False)
    audit: AuditPlan = AuditPlan()

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
        object.__setattr__(self, "kinds", tuple(self.kinds))
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown or not self.kinds:
            raise ValueError(f"op {self.name!r}: kinds {self.kinds!r}; expected a non-empty "
                             f"subset of {', '.join(KINDS)}")
        if self.family not in FAMILIES:
            raise ValueError(f"op {self.name!r}: unknown family {self.family!r}; expected one "
                             f"of {', '.join(FAMILIES)}")
        if not isinstance(self.promotion, str) or not self.promotion:
            raise TypeError(f"op {self.name!r}: promotion is required, the name of the "
                            f"promotion op whose rule gives its output dtype (exactref."
                            f"promotion.canonical_op knows them: 'add', 'sqrt', 'sum', 'cast', "
                            f"...), not {self.promotion!r}")
        if not isinstance(self.counterparts, Counterparts):
            raise TypeError(f"op {self.name!r}: counterparts must be a Counterparts, not "
                            f"{self.counterparts!r}")
        if not isinstance(self.audit, AuditPlan):
            raise TypeError(f"op {self.name!r}: audit must be an AuditPlan, not "
                            f"{self.audit!r}")
        object.__setattr__(self, "models", tuple(self.models))


_REGISTRY: dict[str, OpSpec] = {}
_LOADED = False


def _check_promotion(spec: OpSpec) -> None:
    """The record's promotion op must be one the promotion data knows (checked when the record
    is registered: importing the promotion data is not free, and every op module imports it
    anyway). A real function's own name is fed to the promotion data here, so that a new
    function needs no edit there (``promotion.add_function``)."""
    from ..promotion import add_function, canonical_op

    try:
        if spec.kernel == "function":
            add_function(spec.promotion, spec.arity)
        canonical_op(spec.promotion)
    except ValueError as exc:
        raise ValueError(f"op {spec.name!r}: promotion {spec.promotion!r} is not an op of the "
                         f"promotion data ({exc})") from None


def register(spec: OpSpec, *, extra: bool = False) -> OpSpec:
    """Add a record: the one way an op enters the registry (each module of :data:`CATALOG`
    registers its own names). ``extra=True`` admits a name outside the catalog (an op made
    elsewhere, a test's throwaway op; :func:`unregister` removes it again, and
    :func:`registered` does both)."""
    if not isinstance(spec, OpSpec):
        raise TypeError(f"register takes an OpSpec, not {spec!r}")
    announced = spec.name in op_names() and spec.name not in catalog_names()
    if extra and not announced:
        if spec.name in catalog_names():
            raise ValueError(f"op {spec.name!r} is in the catalog; register it without extra=")
        add_extra(spec.name, getattr(spec.function, "__module__", None) or "")
    elif spec.name not in catalog_names() and not announced:
        raise ValueError(f"op {spec.name!r} is not in the catalog; add it to "
                         f"exactref.ops._catalog.CATALOG under its module (or declare it "
                         f"inside ops.declaring({spec.name!r}, module))")
    try:
        _check_promotion(spec)
    except ValueError:
        if extra:
            remove_extra(spec.name)
        raise
    _attach_runtimes(spec)
    if _WRAPPER is not None:
        object.__setattr__(spec, "function", _WRAPPER(spec.function, spec))
    _REGISTRY[spec.name] = spec
    return spec


#: The runtimes whose counterparts are declared as one table per runtime (the op in the
#: runtime's own vocabulary, its kernels' formats, its contract and departures, each cited),
#: beside the records rather than inside each op's module: a runtime's op set is read off its
#: operator list, and one table keeps it reviewable against that list. ``register`` fills the
#: record's field from it; a record that declares the field itself keeps its own.
RUNTIME_TABLES = {"onnxruntime": "exactref.ops._onnxruntime",
                  "openvino": "exactref.ops._openvino",
                  "tensorflow": "exactref.ops._tensorflow"}


def _attach_runtimes(spec: OpSpec) -> None:
    """Fill ``spec.counterparts``' runtime fields from :data:`RUNTIME_TABLES` (each table's
    ``COUNTERPARTS``: op name -> :class:`Counterpart`)."""
    found = {}
    for library, module in RUNTIME_TABLES.items():
        table = importlib.import_module(module).COUNTERPARTS
        if spec.name in table and getattr(spec.counterparts, library) is None:
            found[library] = table[spec.name]
    if found:
        object.__setattr__(spec, "counterparts", dataclasses.replace(spec.counterparts, **found))


#: what makes a record's function ``er.<op>`` (exactref._contract installs it: the contract
#: layer, above this one); None until installed
_WRAPPER = None


def install_function_wrapper(wrapper) -> None:
    """Make ``wrapper(function, spec)`` the public function of every record, those registered
    already and those to come (the contract layer, :mod:`exactref._contract`, installs itself
    when it is imported; a layer below it cannot import it)."""
    global _WRAPPER
    _WRAPPER = wrapper
    for spec in _REGISTRY.values():
        object.__setattr__(spec, "function", wrapper(spec.function, spec))


def unregister(name) -> None:
    """Remove an op registered with ``extra=True`` (the catalog's ops stay)."""
    key = name.name if isinstance(name, OpSpec) else str(name)
    if key in catalog_names():
        raise ValueError(f"op {key!r} is in the catalog and cannot be unregistered")
    if key not in _REGISTRY:
        raise KeyError(key)
    del _REGISTRY[key]
    remove_extra(key)


@contextlib.contextmanager
def registered(spec: OpSpec):
    """Register ``spec`` outside the catalog for the duration of a ``with`` block (a test's
    throwaway op), then remove it."""
    register(spec, extra=True)
    try:
        yield spec
    finally:
        if spec.name in _REGISTRY:
            unregister(spec.name)


@contextlib.contextmanager
def declaring(name: str, module: str):
    """Admit the op ``name`` of ``module`` outside the catalog while a ``with`` block declares
    it the usual way (the elementwise family's decorator, a ``register`` call), then remove
    it: how a test builds a throwaway op from its record alone."""
    if name in op_names():
        raise ValueError(f"op {name!r} is already known")
    add_extra(name, module)
    try:
        yield name
    finally:
        _REGISTRY.pop(name, None)
        remove_extra(name)


def names_of(module: str) -> tuple:
    """The op names ``module`` declares (a module of :data:`CATALOG`, or a package: the names
    of its modules), in catalog order; ``__all__ = [*ops.names_of(__name__), ...]``.

    >>> names_of("exactref.arithmetic.roots")
    ('sqrt', 'rsqrt')
    """
    return tuple(n for m, names in modules().items() if m == module or m.startswith(module + ".")
                 for n in names)


#: OpSpec attributes that hold callables: ``select`` compares these by value, never calls them.
_HELD_CALLABLES = frozenset(("function", "backward", "exact", "derivative"))


def select(**attrs) -> tuple:
    """The records whose attributes match, in catalog order: ``select(kernel="function")``,
    ``select(family="normalizations", plan="shapes")``; a callable value is a test of the
    attribute (``select(kinds=lambda k: "complex" in k)``), except for the attributes that
    hold callables (``function``, ``backward``, ``exact``, ``derivative``: ``select(function=
    er.add)`` is add's record).

    >>> [s.name for s in select(kernel="root")]
    ['sqrt', 'rsqrt']
    """
    specs = all_ops()
    for key in attrs:
        if not hasattr(specs[0], key):
            fields = ", ".join(OpSpec.__dataclass_fields__)
            raise AttributeError(f"OpSpec has no attribute {key!r}; select by one of {fields}")
    tests = {key: want if callable(want) and key not in _HELD_CALLABLES else
             (lambda got, want=want: got is want or got == want) for key, want in attrs.items()}
    return tuple(s for s in specs if all(test(getattr(s, key)) for key, test in tests.items()))


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
    spec = _REGISTRY.get(name) if isinstance(name, str) else None
    if spec is not None:  # the driver asks on every call: no catalog scan for a loaded op
        return spec
    key = str(name).strip()
    names = op_names()
    if key in names:
        if key not in _REGISTRY:
            module = next(m for m, ns in modules().items() if key in ns)
            importlib.import_module(module)
        return _REGISTRY[key]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise ValueError(f"unknown op {name!r}{hint}. Known ops: {', '.join(names)}.")


def all_ops() -> tuple:
    """Every record, in catalog order."""
    _load()
    return tuple(_REGISTRY[n] for n in op_names() if n in _REGISTRY or n in catalog_names())


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
